"""Commits of a stretch of history and the files they changed, read with gitpython: what a report lists under
each phase ("the commits that touched its paths since the last milestone").

gitpython is imported inside the functions (its import alone costs ~60-150 ms): ``tracker status`` never loads
this module's dependency. Each query is one ``git`` process (through gitpython's command layer), however many
commits it covers: asking gitpython's objects for each commit's diff costs a process per commit.

The rules, so that a report can say exactly what it lists:

- ``commits(root, since, until)`` is ``git log since..until``: newest first (``--date-order``: never a parent
  before its children), ``since`` itself excluded, every commit reachable from ``until`` and not from ``since``
  (the commits of merged branches too);
- a commit's ``paths`` are the files it changed against its first parent: for a merge, what the merge brought
  into the branch it was made on (``--diff-merges=first-parent``; the branch's own commits are listed too, with
  their own paths); for a root commit, every file it added. A rename is a deletion and an addition
  (``--no-renames``), so it touches both the old and the new path, whatever the user's ``diff.renames`` says;
- in a shallow clone git has not got the parent of the oldest commits present: those commits are listed with
  ``truncated=True`` and no paths (what they changed is unknown), never with every file of their tree;
- paths are git's bytes decoded as UTF-8 with ``surrogateescape`` (the tracker's rule for file names, as in
  :mod:`tracker.fingerprint`): a name that is not UTF-8 still matches the file on disk, and a renderer must
  write it with ``errors="replace"`` or ``"backslashreplace"``; author and subject are text (``errors="replace"``);
- ``time`` is the committer time (git orders by it; after a rebase it is the rebase's), in UTC.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.errors import FileError, UsageError

if TYPE_CHECKING:
    import git

# %x00%x00 opens each record: a path is never empty, so two empty fields can only be a record's start.
_FORMAT = "%x00%x00%H%x00%h%x00%P%x00%an%x00%ct%x00%s"
_LOG_OPTIONS = (
    "-z",
    "--name-only",
    "--no-renames",  # a rename touches its old and its new path, whatever diff.renames says
    "--diff-merges=first-parent",
    "--root",  # the root commit lists what it added, whatever log.showRoot says
    "--date-order",
    "--encoding=UTF-8",
    "--no-show-signature",
    "--no-relative",
    "--no-color",
    "--abbrev=7",
    f"--format={_FORMAT}",
)
_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


class UnknownRef(UsageError, ValueError):
    """A ref that names no commit of the repository: a ValueError to callers, exit 3 if it reaches the CLI."""


@dataclass(frozen=True)
class Commit:
    """One commit as a report shows it. ``time`` is ``YYYY-MM-DDTHH:MM:SSZ`` (UTC committer time; "" for a
    timestamp outside years 1-9999); ``short`` the abbreviation git gives (7 characters or more, unique);
    ``parents`` full shas (two or more for a merge); ``truncated`` see the module docstring (shallow clones)."""

    sha: str
    short: str
    author: str
    time: str
    subject: str
    paths: tuple[str, ...]
    parents: tuple[str, ...] = ()
    truncated: bool = False


def resolve(root: Path, ref: str) -> str:
    """The full sha of the commit ``ref`` names (``HEAD``, a branch, a tag, ``HEAD~3``, an abbreviated sha).

    Raises :class:`UnknownRef` (a ValueError) "REF: not a commit in this repository" when it names none, or
    names a tree or a blob; :class:`~tracker.errors.FileError` when ``root`` is not a git repository.
    """
    with _open(root) as repo:
        return _resolve(repo, ref)


def commits(
    root: Path,
    since: str | None,
    until: str = "HEAD",
    touching: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> list[Commit]:
    """The commits of ``git log since..until`` (all of ``until``'s history when ``since`` is None), newest first.

    ``touching`` keeps only the commits that changed at least one path it accepts (the caller's glob matcher:
    this module does not interpret globs); ``limit`` keeps the newest that many of those. A repository without
    any commit has none (``until`` left at HEAD); an unknown ``since`` or ``until`` raises :class:`UnknownRef`.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit: expected a count of commits (0 or more), got {limit}")
    if limit == 0:
        return []
    with _open(root) as repo:
        bounds = _range(repo, since, until)
        if bounds is None:
            return []
        base, head = bounds
        revisions = [head] if base is None else [head, f"^{base}"]
        count = [f"--max-count={limit}"] if limit is not None and touching is None else []
        out = _git(repo, "log", *_LOG_OPTIONS, *count, *revisions, "--")
        shallow = _shallow_boundary(repo)
    found = []
    for commit in _parse_log(out, shallow):
        if touching is None or any(touching(path) for path in commit.paths):
            found.append(commit)
            if limit is not None and len(found) == limit:
                break
    return found


def changed_paths(root: Path, since: str | None, until: str = "HEAD") -> list[str]:
    """The files that differ between the trees of ``since`` and ``until`` (git's order), renames as a deletion
    and an addition. This is the net change: a file changed and changed back in between is not in it (use
    :func:`commits` for what each commit did). ``since`` None: every file of ``until``'s tree."""
    with _open(root) as repo:
        bounds = _range(repo, since, until)
        if bounds is None:
            return []
        base, head = bounds
        if base is None:
            out = _git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", head)
        else:
            out = _git(
                repo, "diff", "-z", "--name-only", "--no-renames", "--no-relative", "--no-ext-diff", base, head, "--"
            )
    return [_path(raw) for raw in out.split(b"\0") if raw]


# --- gitpython -----------------------------------------------------------------------------------------------


def _open(root: Path) -> git.Repo:
    """The repository at ``root`` (its top directory or its .git), or FileError ``root: not a git repository``."""
    import git

    try:
        return git.Repo(root)
    except git.NoSuchPathError:
        raise FileError(f"{root}: no such directory") from None
    except git.InvalidGitRepositoryError:
        raise FileError(f"{root}: not a git repository") from None
    except git.GitError as err:  # git itself missing, or refusing the repository (safe.directory)
        raise FileError(f"{root}: {_git_message(err)}") from None


def _git(repo: git.Repo, command: str, *args: str) -> bytes:
    """Run ``git COMMAND ARGS`` in the repository; its stdout as bytes, or FileError with git's own message."""
    import git

    try:
        out: bytes = getattr(repo.git, command.replace("-", "_"))(
            *args, stdout_as_string=False, strip_newline_in_stdout=False
        )
    except git.GitError as err:
        raise FileError(f"{repo.working_tree_dir or repo.git_dir}: git {command} failed: {_git_message(err)}") from None
    return out


def _git_message(err: Exception) -> str:
    """git's own complaint (the last line of its stderr), else the exception's text."""
    stderr = str(getattr(err, "stderr", "") or "").strip().strip("'").strip()
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("stderr: ").strip("'") if lines else str(err)


def _resolve(repo: git.Repo, ref: str) -> str:
    import git

    # A ref starting with "-" would be an option to git, and NUL or newline cannot be in a ref name.
    if not isinstance(ref, str) or not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise UnknownRef(_not_a_commit(ref))
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
    except git.GitCommandError:
        raise UnknownRef(_not_a_commit(ref)) from None
    return str(sha).strip()


def _range(repo: git.Repo, since: str | None, until: str) -> tuple[str | None, str] | None:
    """``(since, until)`` as full shas (since None stays None); None when ``until`` is the HEAD of a repository
    without a commit yet (an unborn branch: no history, nothing in any range). Unknown refs: UnknownRef."""
    if until == "HEAD" and not repo.head.is_valid():
        if since is not None:
            _resolve(repo, since)
        return None
    head = _resolve(repo, until)
    return (None if since is None else _resolve(repo, since)), head


def _not_a_commit(ref: object) -> str:
    shown = ref if isinstance(ref, str) and ref.isprintable() and ref else repr(ref)
    return f"{shown}: not a commit in this repository"


def _shallow_boundary(repo: git.Repo) -> frozenset[str]:
    """The commits whose parents a shallow clone has not got (``.git/shallow``); empty for a full clone."""
    if _git(repo, "rev-parse", "--is-shallow-repository").strip() != b"true":
        return frozenset()
    shallow = Path(repo.common_dir, "shallow")
    try:
        return frozenset(shallow.read_text("ascii").split())
    except (OSError, UnicodeDecodeError):
        return frozenset()


# --- parsing git log -z --name-only ------------------------------------------------------------------------


def _parse_log(out: bytes, shallow: frozenset[str]) -> Iterator[Commit]:
    """Commits from ``_FORMAT``'s output: per commit ``\\0\\0`` and six fields, then git's ``\\0`` ending the
    header, then the paths (the first one after a ``\\n``), each ended by ``\\0``."""
    fields = out.split(b"\0")
    i = 0
    while i + 7 < len(fields):
        if fields[i] or fields[i + 1] or not _SHA.fullmatch(fields[i + 2]):
            raise RuntimeError(f"git log: unexpected output at field {i}: {fields[i : i + 3]!r}")
        sha, short, parents, author, ctime, subject = fields[i + 2 : i + 8]
        i += 8
        paths: list[bytes] = []
        while i < len(fields) and fields[i]:
            raw = fields[i]
            paths.append(raw[1:] if not paths and raw.startswith(b"\n") else raw)
            i += 1
        full = sha.decode("ascii")
        truncated = full in shallow
        yield Commit(
            sha=full,
            short=short.decode("ascii"),
            author=author.decode("utf-8", "replace"),
            time=_utc(ctime),
            subject=subject.decode("utf-8", "replace"),
            paths=() if truncated else tuple(_path(p) for p in paths),
            parents=tuple(p.decode("ascii") for p in parents.split()),
            truncated=truncated,
        )


def _path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _utc(raw: bytes) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` of a Unix time (digits always padded), or "" outside years 1-9999."""
    try:
        t = time.gmtime(int(raw))
    except (ValueError, OverflowError, OSError):
        return ""
    if not 1 <= t.tm_year <= 9999:
        return ""
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"
