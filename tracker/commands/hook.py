"""``tracker hook install [--uninstall]``: the ``prepare-commit-msg`` hook that drafts each commit message with
``tracker summary --write``.

Where: the folder git runs this repository's hooks from, ``core.hooksPath`` when it is set, else ``.git/hooks``
(:func:`tracker.git.log.hooks_dir`). A folder outside the repository (a global ``core.hooksPath``: every repository's
hooks) is refused (exit 8) unless ``--shared`` says to install there anyway; in a repository without plans the hook
writes nothing (``tracker summary --write``).

When it drafts: git hands the hook the message file and the message's source (githooks(5)): none (the editor opens
on an empty message), ``message`` (``-m``, ``-F``), ``template`` (``-t``, ``commit.template``), ``merge``, ``squash``
or ``commit`` (``-c``, ``-C``, ``--amend``). The summary is written for the first three (into the message given, as
trailers: ``tracker summary``'s ``--write``); a merge, a squash and a reused or amended commit have their message
already, about another change than the working tree's, and are left alone. Nor is a draft written that git would
cut (a line starting with ``core.commentChar``) or that would make a commit of a message git aborts (empty once
cleaned): :func:`tracker.commands.summary.merge`.

It never stops a commit: when tracker fails (a broken plan, the Python it was installed with gone, anything) the hook
prints a warning and exits 0. It runs tracker with the Python that installed it (a hook does not see a virtual
environment's PATH); install it again after moving that environment.

An existing hook is chained, never overwritten: install moves it aside to ``prepare-commit-msg.before-tracker`` in
the same folder (a rename: its bytes, mode and links as they were), and the tracker's hook runs it first with the
same arguments, stopping the commit when it fails, as it did. ``--uninstall`` renames it back, or, with none,
removes the tracker's hook: install then uninstall leaves the folder as it was. Refused, saying what to do (exit
8): a file at the aside name already (an earlier chain not undone) where install would move a hook there, and any
change to a tracker hook edited by hand since it was installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from tracker.errors import FileError

HOOK = "prepare-commit-msg"
ASIDE = f"{HOOK}.before-tracker"
MARK = "# tracker prepare-commit-msg hook"
_PYTHON = "python='"


def script(python: str) -> str:
    """The hook, running tracker with ``python`` (a path, quoted for sh). ``-P``: ``python -m`` would put the
    repository's root first on the import path, and a commit would run its ``json.py``, ``subprocess.py`` or
    ``tracker/`` in place of the library's (round 20, N3; ``--shared`` hooks run in any repository)."""
    quoted = python.replace("'", "'\\''")
    return f"""#!/bin/sh
{MARK}: drafts the commit message with `tracker summary --write`.
# Installed by `tracker hook install`; `tracker hook install --uninstall` removes it (and puts back a hook it chains).
# It never stops a commit: when tracker fails it warns and exits 0.
chained="$(dirname "$0")/{ASIDE}"
if [ -x "$chained" ]; then
\t"$chained" "$@" || exit $?
fi
case "$2" in
\t"" | message | template) ;;
\t*) exit 0 ;;  # merge, squash, commit (-c, -C, --amend): their message is made already
esac
{_PYTHON}{quoted}'
if "$python" -P -m tracker summary --write "$1"; then :; else
\techo "tracker: warning: \\`tracker summary\\` failed (exit $?); the commit message is left as git wrote it" >&2
fi
exit 0
"""


def ours(text: str) -> bool | None:
    """Is ``text`` the tracker's hook: True as installed, False edited since, None not the tracker's at all."""
    lines = text.split("\n", 2)
    if len(lines) < 2 or not lines[1].startswith(MARK):
        return None
    line = next((x for x in text.splitlines() if x.startswith(_PYTHON)), None)
    if line is None or not line.endswith("'"):
        return False
    python = line[len(_PYTHON) : -1].replace("'\\''", "'")
    return text == script(python)


def run(root: Path, uninstall: bool = False, out: TextIO | None = None, shared: bool = False) -> int:
    """Install (or with ``uninstall`` remove) the hook; exit 0, or FileError (8) where it refuses: also an install
    into a folder outside the repository without ``shared`` (:func:`outside`)."""
    from tracker.git.log import hooks_dir, hooks_path_set

    out = out or sys.stdout
    folder = hooks_dir(root)
    if not uninstall and not shared and outside(root, folder):
        if not hooks_path_set(root) or _inside(root, folder):  # a folder of the repository that links out
            raise FileError(
                f"{folder}: the hooks folder is a link to {os.path.realpath(folder)}, outside this repository: every "
                "repository whose hooks are there would run the tracker's hook; install it there anyway with "
                f"`tracker hook install --shared`, or make {folder} a folder of this repository (remove the link)"
            )
        raise FileError(
            f"{folder}: core.hooksPath is outside this repository (a global or shared hooks folder): every "
            "repository using it would run the tracker's hook; install it there anyway with "
            "`tracker hook install --shared`, or set core.hooksPath for this repository alone "
            "(`git config --local core.hooksPath .git/hooks`)"
        )
    message = _uninstall(folder) if uninstall else _install(folder, sys.executable)
    out.write(message.replace(f"{root}{os.sep}", "") + "\n")
    return 0


def outside(root: Path, folder: Path) -> bool:
    """Is the hooks folder outside the repository: neither in its working tree nor in its git directory, links
    resolved (a ``core.hooksPath`` in the user's global configuration, or a link to such a folder)?"""
    from tracker.git.log import repository_dirs

    real = Path(os.path.realpath(folder))
    return not any(real.is_relative_to(os.path.realpath(d)) for d in repository_dirs(root))


def _inside(root: Path, folder: Path) -> bool:
    """Is the hooks folder's own path (links not resolved) in the repository's working tree or git directory?"""
    from tracker.git.log import repository_dirs

    place = Path(os.path.abspath(folder))
    return any(place.is_relative_to(os.path.abspath(d)) for d in repository_dirs(root))


def _read(path: Path) -> str | None:
    """A hook's text (None when it is no file that can be read as text: a foreign hook all the same)."""
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return None


def _install(folder: Path, python: str) -> str:
    hook, aside = folder / HOOK, folder / ASIDE
    present = os.path.lexists(hook)
    mine = ours(_read(hook) or "") if present else None
    if mine is False:
        raise FileError(
            f"{hook}: the tracker hook was edited by hand; merge your edits into another hook, delete this one, "
            "and install again"
        )
    if mine is None and os.path.lexists(aside):
        what = "a hook is there and " if present else ""
        raise FileError(
            f"{aside}: {what}a hook set aside by an earlier install is still there; put it back as {HOOK} "
            "(or delete it), then install again"
        )
    chained = present and mine is None
    if chained:
        try:
            os.rename(hook, aside)
        except OSError as err:
            raise FileError(f"{hook}: cannot move it aside to {ASIDE}: {err.strerror or err}") from None
    try:
        _write(hook, script(python))
    except BaseException:
        if chained:
            os.rename(aside, hook)
        raise
    if mine:
        return f"already installed: {hook} (rewritten for {python})"
    note = f"; it runs the hook that was there first, now {aside}" if chained else ""
    return f"installed {hook}: drafts each commit message with `tracker summary --write`{note}"


def _uninstall(folder: Path) -> str:
    hook, aside = folder / HOOK, folder / ASIDE
    present = os.path.lexists(hook)
    mine = ours(_read(hook) or "") if present else None
    if mine is False:
        raise FileError(f"{hook}: the tracker hook was edited by hand; remove it yourself (and rename {aside} back)")
    if mine is None and present:
        return f"not installed: {hook} is not the tracker's hook (left as it is)"
    if os.path.lexists(aside):
        try:
            if os.path.isdir(aside) and not os.path.islink(aside) and present:
                hook.unlink()  # a rename cannot put a directory over a file
            os.replace(aside, hook)
        except OSError as err:
            raise FileError(f"{aside}: cannot rename it back to {HOOK}: {err.strerror or err}") from None
        return f"removed the tracker hook; {HOOK} is the hook it chained again ({hook})"
    if not present:
        return f"not installed: no {hook}"
    hook.unlink()
    return f"removed {hook}"


def _write(path: Path, text: str) -> None:
    from tracker.base.contract import atomic_write

    try:
        atomic_write(path, text.encode("utf-8", "surrogateescape"), keep_mode=False)
        os.chmod(path, 0o755)
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
