"""``tracker summary [--against REF] [--write FILE] [--json]``: drafts the commit message for the change in the
working tree; never commits.

The change is the working tree as it is now (its evidence, plans and code: what ``tracker status`` judges) against
the revision REF (default ``HEAD``) as :mod:`tracker.git.at_revision` reads it; in a commit hook (``--write`` with
``GIT_INDEX_FILE`` set, as git sets it for hooks) it is the tree of git's index instead, what the commit will hold:
evidence left unstaged or untracked is in no trailer. The message
(:mod:`tracker.report.commit_summary`) says what the change proved: a subject under 72 characters, a body with each
phase
transition (REF's status -> now, and why), the benchmark figures that moved and git trailers (``Phase-Done:
0002/P3``, ``Evidence: FILE``). ``HEAD`` of a repository without a commit yet is an empty revision: every phase is
new. An unknown REF is exit 3.

``--write FILE`` writes it into a commit message file, atomically (through a symlink, into the file it names; a FILE
that is no regular file, a FIFO, is exit 8): the ``prepare-commit-msg`` hook's use (``tracker hook install``). A
message already in FILE (``git commit -m``, ``-F``, a template with text) is kept as it is and gets the trailers
(:func:`merge`); a FILE with no message yet (blank, or only git's comment lines) gets the whole summary, its lines
kept after it. A comment line counts as none of the message only where git will strip it: not when git opens no
editor (``-m``, ``-F``: git runs the hook with ``GIT_EDITOR=:``) and ``commit.cleanup`` is not ``strip``, where ``-m
"#123 fix"`` is a message (:func:`tracker.git.log.message_comment_char`). Nothing is written where git would cut
a drafted line (one starting with its comment character; ``-`` bullets become ``*``), where git opens no editor and
the message is empty once stripped (git aborts it: so it must still, and the hook cannot see a ``--cleanup=strip``
on git's command line), or in a repository without a plan file on either side. Without ``--write`` the message is
printed; ``--json`` prints the summary as data instead (its ``message`` too). Nothing else is written but the command's
cache, and that only where the store's ``.gitignore`` keeps it out of git already (a tracker command made it
before): ``git status`` reads the same before and after, also in a repository the tracker has not written to yet
(the hook runs in every commit).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tracker.base.cache import Cache
from tracker.base.contract import EVIDENCE_DIR, RESULTS_DIR, TRACKER_DIR, Clock
from tracker.errors import FileError
from tracker.report.commit_summary import Side, Summary, bench_pairs, changed_files, kept_by_git, summarize

if TYPE_CHECKING:
    from tracker.report.repo_view import RepoView


def run(
    root: Path, against: str = "HEAD", write: Path | None = None, as_json: bool = False, out: TextIO | None = None
) -> int:
    """Print (or ``write``) the summary of the working tree's change against ``against``; exit 0."""
    out = out or sys.stdout
    cache = Cache(root)
    # In a commit hook (git sets GIT_INDEX_FILE for it) the change is what git commits: its index, not the working
    # tree (a file left unstaged or untracked is in no trailer).
    summary = build(root, against, cache, index=write is not None and bool(os.environ.get("GIT_INDEX_FILE")))
    if (root / TRACKER_DIR / ".gitignore").is_file():  # else writing the cache would leave a new file in git status
        cache.write()
    if write is not None and summary.planned:  # no plan on either side: no message of the tracker's to draft
        _write(root, write, summary)
    if as_json:
        from tracker.commands.common import json_text

        out.write(json_text(out, summary.as_json()) + "\n")
    elif write is None:
        out.write(summary.message)
    return 0


def build(
    root: Path,
    against: str,
    cache: Cache,
    clock: Clock | None = None,
    index: bool = False,
    view: RepoView | None = None,
) -> Summary:
    """The summary of the working tree (``index``: of the tree git's index holds) against ``against`` (the readers
    here, the message pure); ``view``: the working tree as the command read it already."""
    from tracker.git.at_revision import Now, at_revision, start
    from tracker.report.repo_view import RepoView

    early = start(root, against)  # git compares REF's store with the working tree's while the tree is read
    try:
        view = view or RepoView(root, cache, clock)
        known = Now(view.plan_set.files, lambda: view.store, lambda: view.tree, view.store_files)
        at = at_revision(root, against, known, cache, view.clock, early=early)
    finally:
        if early is not None:
            early.edited.close()
    plans, statuses, invalid_plans = view.plans, view.statuses, view.plan_set.invalid
    if index:
        from tracker.git.log import index_tree

        staged = at_revision(root, "the index", known, cache, view.clock, tree=index_tree(root))
        plans, statuses, invalid_plans = staged.plans, staged.statuses, staged.invalid
    # A plan file not valid on one side is not compared (a note says so): its phases are neither new nor removed.
    invalid_then = {i.id or i.path.rpartition("/")[2][:4] for i in at.invalid}
    invalid_now = {i.id or i.path.rpartition("/")[2][:4] for i in invalid_plans}
    before = Side([p for p in at.plans if p.id not in invalid_now], at.statuses)
    after = Side([p for p in plans if p.id not in invalid_then], statuses)
    figures = {}
    pairs = bench_pairs(before, after)
    if pairs:
        from tracker.report.detail import bench_figures

        then, now = at.bench(), staged.bench() if index else view.bench
        for key, old, new in pairs:  # each on the runs of its metric: the result files of others are not read
            was = bench_figures(old, then.results_for(old.bench), then.bounds)
            figures[key] = (was, bench_figures(new, now.results_for(new.bench), now.bounds))
        if not index:
            view.bench.keep_bounds()
    evidence = set(staged.evidence) if index else _evidence_files(root)
    changed = changed_files(at.code, staged.code if index else view.tree.files)
    plan_files = [p for p in changed if _is_plan_file(p)]
    code = [p for p in changed if not p.startswith(f"{RESULTS_DIR.as_posix()}/") and not _is_plan_file(p)]
    invalid = [f"{i.path}: not a valid plan at {against}; its phases are not compared" for i in at.invalid]
    invalid += [f"{i.path}: not a valid plan now; its phases are not compared" for i in invalid_plans]
    summary = summarize(
        against,
        at.commit,
        before,
        after,
        figures=figures,
        evidence=sorted(evidence - set(at.evidence)),
        gone=sorted(set(at.evidence) - evidence),
        code=code,
        plan_files=plan_files,
        invalid=invalid,
    )
    return summary._replace(planned=bool(at.plans or at.invalid or plans or invalid_plans))


def _is_plan_file(path: str) -> bool:
    import fnmatch

    from tracker.plans.load import PLAN_GLOB

    folder, _, name = path.rpartition("/")
    return folder == "plans" and fnmatch.fnmatchcase(name, PLAN_GLOB)


def _evidence_files(root: Path) -> set[str]:
    """The working tree's store files and result files (``*.json`` of the two folders), relative to the root."""
    found: set[str] = set()
    for folder in (EVIDENCE_DIR, RESULTS_DIR):
        try:
            with os.scandir(root / folder) as entries:
                found |= {f"{folder.as_posix()}/{e.name}" for e in entries if e.name.endswith(".json")}
        except OSError:  # missing, or not a folder: none there (status says why when it matters)
            continue
    return found


def _write(root: Path, path: Path, summary: Summary) -> None:
    """Merge the summary into the message file ``path`` (created when missing), atomically: through a symlink (the
    link stays, its file gets the text), a FIFO refused (a read would block forever), as ``report --out`` writes
    (:func:`tracker.base.fileio.write_file`, one rule)."""
    from tracker.base.fileio import destination, write_file
    from tracker.git.log import comment_char, message_comment_char

    given, (path, exists) = path, destination(path)
    try:
        existing = path.read_bytes().decode("utf-8", "surrogateescape") if exists else ""
    except OSError as err:
        raise FileError(f"{given}: cannot read: {err.strerror or err}") from None
    # git opens no editor after the hook when it runs it with GIT_EDITOR=: (-m, -F, --no-edit); whether it strips
    # comments then, a --cleanup=strip on its command line says, which no hook sees: merge() assumes it may.
    editor = os.environ.get("GIT_EDITOR") != ":"
    strip = comment_char(root, existing, block=editor)
    text = merge(existing, summary, message_comment_char(root, existing), strip=strip, editor=editor)
    if text == existing and exists:
        return
    write_file(given, text.encode("utf-8", "surrogateescape"))


_TRAILER_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*\s*:")
SCISSORS = re.compile(r"^. -+ >8 -+$")  # git commit -v: everything from this line on is cut


def merge(existing: str, summary: Summary, comment: str = "#", strip: str | None = None, editor: bool = True) -> str:
    """The message file after ``tracker summary --write``: git's conventions for a ``prepare-commit-msg`` hook.

    - Nothing written yet (blank, or only comment lines: the editor's template): the whole summary, with the
      existing lines kept after it (git strips the comments).
    - A message written (``-m``, ``-F``, a template with text): it is kept as it is, and the summary's trailers
      are added to it: appended to its trailer block when its last paragraph is one (after its ``Signed-off-by``),
      else as a new last paragraph; trailers it has already are not added twice. Nothing is added as comments: a
      message given with ``-m`` is not cleaned of them.

    Lines after a scissors line (``git commit -v``: the diff) and comment lines (those starting with ``comment``)
    are never counted as the message. Every existing character is kept; the result differs only by what is added.

    Nothing is added (``existing`` is returned) where git could cut it or where it would make a commit git aborts:
    ``strip`` is the comment string git strips lines by when it strips any (default ``comment``; in a hook it may
    strip where ``comment`` says it does not, ``--cleanup=strip``): no added line starts with it (the body's
    bullets become ``*``, :func:`tracker.report.commit_summary.kept_by_git`), else nothing is added. Without an
    ``editor`` after the hook, a message of no line once stripped (empty, or comments alone) is left as it is: git
    aborts it.
    """
    strip = comment if strip is None else strip
    lines = existing.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if SCISSORS.match(line.rstrip("\r\n"))), len(lines))
    if not editor and not any(lines[i].strip() and not (strip and lines[i].startswith(strip)) for i in range(end)):
        return existing
    written = [i for i in range(end) if lines[i].strip() and not (comment and lines[i].startswith(comment))]
    if not written:
        draft = kept_by_git(summary, strip)
        if draft is None:
            return existing
        gap = "\n" if existing and not existing.startswith(("\n", "\r\n")) else ""
        return draft.message + gap + existing
    last = written[-1]
    start = last
    while start > 0 and start - 1 in written:
        start -= 1
    first_paragraph = written[0] == start  # the title: never trailers, as git reads it
    block = [lines[i].rstrip("\r\n") for i in range(start, last + 1)]
    is_block = not first_paragraph and all(_TRAILER_LINE.match(x) or x[:1] in (" ", "\t") for x in block)
    have = {re.sub(r"\s*:\s*", ": ", x.strip(), count=1) for x in block} if is_block else set()
    new = [f"{k}: {v}" for k, v in summary.trailers if f"{k}: {v}" not in have]
    if not new or (strip and any(t.startswith(strip) for t in new)):
        return existing
    nl = "\r\n" if lines[last].endswith("\r\n") else "\n"
    head = lines[: last + 1]
    if not head[-1].endswith(("\n", "\r")):
        head[-1] += nl
    added = ([] if is_block else [nl]) + [t + nl for t in new]
    return "".join(head + added + lines[last + 1 :])
