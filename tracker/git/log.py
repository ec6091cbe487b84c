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
  :mod:`tracker.base.fingerprint`): a name that is not UTF-8 still matches the file on disk, and a renderer must
  write it with ``errors="replace"`` or ``"backslashreplace"``; author and subject are text (``errors="replace"``);
- ``time`` is the committer time (git orders by it; after a rebase it is the rebase's), in UTC.

The readers of a revision's tree (:func:`revision`, :func:`tree_entries`, :func:`read_blobs`: what
``tracker summary`` judges a revision by) run git's plumbing without gitpython, for speed (their section says why);
:func:`hooks_dir` says where ``tracker hook`` installs.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

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


class AmbiguousRef(UnknownRef):
    """A ref whose name git reads more than one way (a tag and a branch of one name): git would take the first of
    its rules (the tag) with a warning on stderr that a report or a summary would hide, so it is refused, exit 3."""


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
    # A ref starting with "-" would be an option to git, and NUL or newline cannot be in a ref name.
    if not isinstance(ref, str) or not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise UnknownRef(_not_a_commit(ref))
    sha = _rev_parse(Path(repo.working_tree_dir or repo.git_dir), ref)
    if sha is None:
        raise UnknownRef(_not_a_commit(ref))
    return sha


def _rev_parse(root: Path, ref: str) -> str | None:
    """The full sha of the commit ``ref`` names (``git rev-parse --verify REF^{commit}``), None when it names none;
    :class:`AmbiguousRef` when git warns that its name is ambiguous (read in the C locale: the warning's words)."""
    proc = _plain(
        root,
        "rev-parse",
        "--verify",
        f"{ref}^{{commit}}",
        check=False,
        config=("core.warnAmbiguousRefs=true",),  # the warning asked for even where the configuration silences it
        env={**os.environ, "LC_ALL": "C"},
    )
    if proc.returncode:
        return None
    if re.search(rb"^warning: refname .* is ambiguous", proc.stderr, re.M):
        raise AmbiguousRef(_ambiguous(ref))
    return proc.stdout.decode("ascii").strip()


def _ambiguous(ref: str) -> str:
    return (
        f"{ref}: ambiguous: git reads this name more than one way (a tag and a branch of that name, say); "
        f"name the ref in full: refs/tags/{ref}, refs/heads/{ref} or refs/remotes/{ref}"
    )


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


# --- a revision's tree and blobs, and the hooks folder ------------------------------------------------------
#
# ``tracker summary`` judges the plans and evidence a revision's tree holds against the working tree, and must cost
# about what ``tracker status`` costs (~70 ms, of which gitpython's import alone would take 45-150 ms). So these
# readers run git's plumbing as plain processes, as tracker.base.fingerprint does for the working tree, and import no
# gitpython; the rules are this module's: UnknownRef for a ref that names no commit, FileError with git's own
# message when git fails, paths decoded with ``surrogateescape``.


class TreeEntry(NamedTuple):
    """One entry of ``git ls-tree -r``: its mode (``100644``, ``100755``, ``120000`` a symlink, ``160000`` a
    submodule), its object type (``blob``, or ``commit`` for a submodule) and its object id."""

    mode: str
    kind: str
    id: str


def revision(root: Path, ref: str) -> str | None:
    """The full sha of the commit ``ref`` names, None for ``HEAD`` on a branch without a commit yet (there is
    nothing at such a HEAD). :class:`UnknownRef` when ``ref`` names no commit (a tree, a blob, nothing); FileError
    when ``root`` is not a git repository."""
    if not isinstance(ref, str) or not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise UnknownRef(_not_a_commit(ref))
    if not (root / ".git").exists():
        raise FileError(f"{root}: not a git repository")
    sha = _rev_parse(root, ref)
    if sha is not None:
        return sha
    if ref == "HEAD" and _unborn(root):
        return None
    raise UnknownRef(_not_a_commit(ref))


def tree_entries(root: Path, commit: str) -> dict[str, TreeEntry]:
    """{path: entry} of every file of ``commit``'s tree (``git ls-tree -r --full-tree``), submodules included."""
    return _tree(_plain(root, "ls-tree", "-r", "-z", "--full-tree", commit).stdout)


def _tree(out: bytes) -> dict[str, TreeEntry]:
    """The entries of ``git ls-tree -r -z``'s output."""
    entries: dict[str, TreeEntry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, kind, oid = meta.decode("ascii").split()
        entries[_path(raw)] = TreeEntry(mode, kind, oid)
    return entries


def revision_tree(root: Path, ref: str) -> tuple[str | None, dict[str, TreeEntry]]:
    """(:func:`revision`, :func:`tree_entries`) of ``ref`` at once: the two git processes run side by side (what
    ``tracker summary`` waits for first). The tree is ``REF^{commit}``'s, resolved by its own process: a ref moved
    between the two (a commit made meanwhile) is as if it moved just before or after the command."""
    if not isinstance(ref, str) or not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise UnknownRef(_not_a_commit(ref))
    if not (root / ".git").exists():
        raise FileError(f"{root}: not a git repository")
    listing = subprocess.Popen(
        ["git", "--no-replace-objects", "ls-tree", "-r", "-z", "--full-tree", f"{ref}^{{commit}}"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        commit = revision(root, ref)
        out = listing.communicate()[0]
    finally:  # an unknown ref, a Ctrl-C: no git process left behind unwaited
        if listing.returncode is None:
            listing.kill()
            listing.wait()
    if commit is None:
        return None, {}
    if listing.returncode:
        return commit, tree_entries(root, commit)  # git's own message, should it fail again
    return commit, _tree(out)


def index_tree(root: Path) -> str:
    """The id of the tree git's index holds (``git write-tree``: what ``git commit`` is about to commit; the index
    of ``GIT_INDEX_FILE`` when git set it for a hook: ``commit -a`` and ``commit PATH`` commit a temporary one).
    FileError when the index cannot be written as a tree (an unresolved merge)."""
    return _plain(root, "write-tree").stdout.decode("ascii").strip()


def changed_since(root: Path, commit: str, folder: str) -> set[str]:
    """The files under ``folder`` (a path relative to the root) that differ between ``commit``'s tree and the working
    tree (``git diff --name-only``: edited, deleted, or no longer tracked), paths relative to the root; and, since git
    diff never looks at them, every file under it git was told not to watch (``update-index --skip-worktree`` or
    ``--assume-unchanged``: an edit to one is invisible to git, adversarial round 11)."""
    return ChangedSince(root, commit, folder).result()


class ChangedSince:
    """:func:`changed_since`'s two git processes, started now and read by :meth:`result`, so that a caller does other
    work while git compares (a store of large files: git hashes each whose index entry it cannot trust); :meth:`close`
    stops them unread. Each is the ``git`` :func:`_plain` runs, with its settings and its error."""

    def __init__(self, root: Path, commit: str, folder: str) -> None:
        self.root, self.commit, self.folder = root, commit, folder
        diff = ["diff", "--name-only", "-z", "--no-renames", "--no-relative", "--no-ext-diff", commit, "--", folder]
        self._procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        try:
            for args in (diff, ["ls-files", "-v", "-z", "--full-name", "--", folder]):
                cmd = ["git", "--no-replace-objects", "-c", "core.quotepath=off", *args]
                proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                self._procs.append((args[0], proc))
        except OSError as err:  # git itself missing
            self.close()
            raise FileError(f"{root}: cannot run git: {err.strerror or err}") from None

    def result(self) -> set[str]:
        """The files :func:`changed_since` names (waits for git); FileError with git's message if it failed."""
        outs: list[bytes] = []
        try:
            for command, proc in self._procs:
                out, err = proc.communicate()
                if proc.returncode:
                    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
                    raise FileError(
                        f"{self.root}: git {command} failed: {lines[-1] if lines else f'exit {proc.returncode}'}"
                    )
                outs.append(out)
        finally:
            self.close()
        out, unwatched = outs
        hidden = {_path(raw[2:]) for raw in unwatched.split(b"\0") if raw[:1].islower() or raw[:1] == b"S"}
        return {_path(raw) for raw in out.split(b"\0") if raw} | hidden

    def close(self) -> None:
        """Stop what git has not finished (nothing left unwaited)."""
        for _, proc in self._procs:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


def read_blobs(root: Path, ids: Iterable[str]) -> dict[str, bytes]:
    """{id: content} of the blobs ``ids`` names, all read by one ``git cat-file --batch``; FileError when one is
    missing (a shallow or partial clone without it) or is no blob."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    out = _plain(root, "cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in wanted).encode("ascii")).stdout
    blobs: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].decode("ascii", "replace").split()
        if len(header) != 3 or header[1] != "blob":
            raise FileError(f"{root}: git cat-file: {oid}: {' '.join(header[1:]) or 'no answer'} (not a blob here)")
        size = int(header[2])
        blobs[oid] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1  # the content is followed by a newline
    return blobs


def hooks_dir(root: Path) -> Path:
    """The folder git runs this repository's hooks from: ``core.hooksPath`` when it is set (relative to the top of
    the working tree, as git reads it), else ``.git/hooks`` (a linked worktree's common one)."""
    with _open(root) as repo:
        top = Path(repo.working_tree_dir or root)
        raw = _git(repo, "rev-parse", "--git-path", "hooks").decode("utf-8", "surrogateescape").strip()
    return top / raw  # an absolute path stays as it is


def hooks_path_set(root: Path) -> bool:
    """Does git's configuration (any level) set ``core.hooksPath`` for this repository?"""
    return _plain(root, "config", "--get", "core.hooksPath", check=False).returncode == 0


def repository_dirs(root: Path) -> tuple[Path, Path]:
    """The top of the working tree and the git directory of this repository (a linked worktree's common one)."""
    with _open(root) as repo:
        return Path(repo.working_tree_dir or root), Path(repo.common_dir)


def _plain(
    root: Path,
    command: str,
    *args: str,
    stdin: bytes | None = None,
    check: bool = True,
    config: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``git COMMAND ARGS`` run in ``root`` without gitpython; FileError with git's message if it fails (``check``).
    ``config``: more ``-c NAME=VALUE`` settings; ``env``: the environment (default: this process's)."""
    settings = [arg for setting in ("core.quotepath=off", *config) for arg in ("-c", setting)]
    try:
        proc = subprocess.run(
            # --no-replace-objects: an object is what its id says, never what a `git replace` ref stands in for it
            ["git", "--no-replace-objects", *settings, command, *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            check=False,
            env=env,
        )
    except OSError as err:  # git itself missing
        raise FileError(f"{root}: cannot run git: {err.strerror or err}") from None
    if check and proc.returncode:
        lines = [line.strip() for line in proc.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise FileError(f"{root}: git {command} failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return proc


def _unborn(root: Path) -> bool:
    """Is HEAD a branch that has no commit yet (a new repository)?"""
    branch = _plain(root, "symbolic-ref", "-q", "HEAD", check=False)
    if branch.returncode:
        return False
    name = branch.stdout.decode("utf-8", "surrogateescape").strip()
    return _plain(root, "show-ref", "--verify", "--quiet", name, check=False).returncode != 0


AUTO_CANDIDATES = "#;@!$%^&|:"  # what git picks from for core.commentChar=auto, in its order (builtin/commit.c)


def comment_char(root: Path, text: str = "", block: bool = True) -> str:
    """The string that starts a comment line of the commit message ``text`` as git reads ``core.commentChar``:
    ``#`` when unset, else its value as it is (one character; git 2.45 takes a longer string too), and for
    ``auto`` (in any case) the character git picks for ``text`` (:func:`auto_comment_char`; ``block``: whether
    git wrote its comment lines into ``text``)."""
    value = _plain(root, "config", "--get", "core.commentChar", check=False).stdout.decode("utf-8", "replace")
    value = value.removesuffix("\n")
    if value.lower() == "auto":
        return auto_comment_char(text, block)
    return value or "#"


def auto_comment_char(text: str, block: bool = True) -> str:
    """The comment character git picks for ``core.commentChar=auto``: the first of :data:`AUTO_CANDIDATES` that
    starts no line of the message ("" when each does: git refuses to commit then).

    ``text`` is the message file as git hands it to the hook. With ``block`` git may have written its own comment
    lines after the message (an editor opens), in the character it picked: a candidate whose every line from its
    first on is such a comment (empty, or starting with it; up to the scissors line of ``commit -v``) is that one.
    Without an editor git writes none, and the file is the message alone."""
    lines = re.split(r"[\r\n]", text)  # git looks at the character after a \r too
    for char in AUTO_CANDIDATES:
        first = next((i for i, line in enumerate(lines) if line.startswith(char)), None)
        if first is None:
            return char
        if block:
            scissors = re.compile(re.escape(char) + r" -+ >8 -+")
            tail = lines[first:]
            end = next((i for i, line in enumerate(tail) if scissors.fullmatch(line)), len(tail))
            if all(not line or line.startswith(char) for line in tail[:end]):
                return char
    return ""


def message_comment_char(root: Path, text: str) -> str:
    """The comment character of the message file ``text`` a ``prepare-commit-msg`` hook is given, "" when git will
    commit its comment lines as they are: no editor opens (git runs the hook with ``GIT_EDITOR=:`` then: ``-m``,
    ``-F``, ``--no-edit``) and ``commit.cleanup`` is not ``strip``, so git cleans the message of whitespace only,
    and a ``-m "#123 fix"`` is the subject, not a comment. With an editor, the lines git comments are the person's
    to see (:func:`comment_char`)."""
    import os

    editor = os.environ.get("GIT_EDITOR") != ":"
    if not editor:
        cleanup = _plain(root, "config", "--get", "commit.cleanup", check=False).stdout
        if cleanup.decode("utf-8", "replace").strip() != "strip":
            return ""
    return comment_char(root, text, block=editor)
