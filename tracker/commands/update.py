"""``tracker update [--check] [--diff] [--force]``: rewrite the generated regions of plan files, and (without plan
arguments) the results tables of the docs ``pyproject.toml`` declares (:mod:`tracker.report.doc_files`).

Writing is guarded twice. Before a file is written, its new text is parsed again (the real parser):
when its plan and phase blocks are not exactly the ones read, or a second update would not find the
regions where they were written, nothing is written (:class:`UnsafeRewriteError`, exit 2). Right
before the rename, the file must still be exactly what was read (an editor may have saved it
meanwhile): when it is not, everything is read and done again, a bounded number of times, then
refused (:class:`tracker.base.fileio.FileChangedError`, exit 7). Docs are written with the same care, after the plan
files; every doc problem (an invalid block, a hand-edited region) is found before anything is written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from tracker.base.cache import Cache, command_cache
from tracker.base.fileio import (
    FileChangedError,
    FileStamp,
    file_stamp,
    in_flux,
    remove_stale_temps,
    repo_lock,
    resolved_inside,
    write_text_if_changed,
)
from tracker.commands.common import resolve_spec, select
from tracker.core.model import Phase, PhaseStatus, Plan
from tracker.errors import ExitCode, FileError, PlanError, RegionEditedError, TrackerError
from tracker.plans.load import PlanFile, load_plans, plan_paths
from tracker.plans.regions import rewrite
from tracker.report.doc_files import DocFile, Tables, declared_docs, doc_changes, read_doc, refuse_unsafe_doc
from tracker.report.doc_tables import DocTableError
from tracker.report.render import plan_regions
from tracker.store.derive import derive

ATTEMPTS = 8  # reads of the plans while an editor keeps changing one, before update gives up (exit 7)


class UnsafeRewriteError(TrackerError):
    """Writing the regions would change what the plan file's Markdown means: a plan or phase block
    would appear, vanish or change, or the regions would not be found again. Nothing is written."""

    exit_code = ExitCode.INVALID_PLANS


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of one file's old and new text."""
    import difflib

    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def _wanted(files: list[PlanFile], plans: list[Plan], only: list[str] | None) -> list[PlanFile]:
    """The plan files to update: all, or those of the plan ids in ``only`` (UsageError for an unknown id)."""
    if not only:
        return files
    select(plans, only)
    ids = {resolve_spec(plans, spec).split("/")[0] for spec in only}
    return [f for f in files if f.plan is not None and f.plan.id in ids]


def _changes(files: list[PlanFile], statuses: dict[str, PhaseStatus], force: bool) -> list[tuple[PlanFile, str]]:
    """(plan file, new text) for every file whose regions are out of date."""
    out = []
    for f in files:
        assert f.plan is not None  # load_plans raised otherwise
        new = rewrite(f.text, plan_regions(f.plan, statuses), f.path, force=force)
        if new != f.text:
            out.append((f, new))
    return out


def pending(
    root: Path, force: bool = False, only: list[str] | None = None, *, cache: Cache | None = None
) -> list[tuple[PlanFile, str]]:
    """(plan file, new text) for every plan file (or those of the plan ids in ``only``) whose
    regions are out of date. Statuses are always derived from every plan (cross-plan dependencies).
    ``cache``: the command's (None: the repository's cache read, nothing kept)."""
    files, plans = load_plans(root, cache=cache)
    wanted = _wanted(files, plans, only)
    return _changes(wanted, derive(root, plans, cache=cache), force)


def _blocks(text: str) -> list[tuple[str, str, bool, int]]:
    """(kind, content, closed, line) of every plan and phase block, as the parser reads them."""
    from tracker.plans.parse import fenced_blocks

    return [(b.kind, b.content, b.closed, b.line) for b in fenced_blocks(text.removeprefix("\ufeff"))]


def _block_change(
    old: list[tuple[str, str, bool, int]], new: list[tuple[str, str, bool, int]]
) -> tuple[int, str] | None:
    """Where and how the blocks read from ``new`` differ from those of ``old`` (lines of the old text)."""
    for _k, (a, b) in enumerate(zip(old, new, strict=False)):
        if a[:3] != b[:3]:
            what = "would change" if a[0] == b[0] else f"would be read as a {b[0]} block"
            return a[3], f"the {a[0]} block at line {a[3]} {what}"
    if len(old) > len(new):
        kind, _, _, line = old[len(new)]
        return line, f"the {kind} block at line {line} would no longer be read as one"
    if len(new) > len(old):
        kind, _, _, line = new[len(old)]
        return line, f"a new {kind} block would appear (line {line} of the new text)"
    return None


def refuse_unsafe(f: PlanFile, new: str, statuses: dict[str, PhaseStatus]) -> None:
    """UnsafeRewriteError unless ``new`` (``f``'s text with its regions rewritten) parses to the same
    plan and phase blocks as ``f.text`` and a second update would leave it as it is.

    Regions are placed so that the Markdown around them keeps its structure (see tracker.plans.regions);
    this is the net under that rule, for what it cannot foresee (say, a list whose indented
    continuation sat right after a removed region). It parses, so it runs only before a write.
    """
    from tracker.plans.parse import parse_plan

    change = _block_change(_blocks(f.text), _blocks(new))
    if change is not None:
        line, what = change
        raise UnsafeRewriteError(
            f"{f.path}:{line}: update refused, nothing was written: with its regions rewritten, {what} "
            "(the Markdown next to a region, say an HTML line or a list, would take in what follows it); "
            "put a blank line between that text and the region, or move it, then run tracker update again"
        )
    plan, problems = parse_plan(f.path, new)
    why = problems[0] if problems else None
    if plan is not None and not problems:
        try:
            stable = rewrite(new, plan_regions(plan, statuses), f.path) == new
        except RegionEditedError as err:  # say, a "-->" that closed an open HTML comment went with a region
            stable, why = False, str(err)
    if plan is None or problems or not stable:
        raise UnsafeRewriteError(
            f"{f.path}: update refused, nothing was written: a second update would not find the regions "
            "where this one would write them" + (f" (in the text it would write: {why})" if why else "")
        )


def _definitions(plans: list[Plan]) -> list[Plan]:
    """The plans without their line numbers: what statuses are derived from (lines move with prose)."""

    def phase(ph: Phase) -> Phase:
        return ph._replace(line=0, end_line=0, depends_line=0, gates=tuple(g._replace(line=0) for g in ph.gates))

    return [p._replace(line=0, end_line=0, phases=tuple(phase(ph) for ph in p.phases)) for p in plans]


def _stamps(root: Path) -> dict[str, FileStamp | None]:
    """Each plan file's stamp, by its path as :func:`tracker.plans.load.load_files` names it."""
    return {path.relative_to(root).as_posix(): file_stamp(path) for path in plan_paths(root)}


def _in_flux(root: Path, stamps: dict[str, FileStamp | None]) -> FileChangedError | None:
    """A plan file that is being saved now, or that changed since ``stamps`` (or appeared, or vanished),
    as an error. Being saved is asked first: a save that ends in between changes the stamps."""
    for rel, stamp in sorted(stamps.items()):
        if stamp is not None and (flux := in_flux(root / rel, stamp)) is not None:
            return FileChangedError(root / rel, flux[0], wait=flux[1])
    now = _stamps(root)
    for rel in sorted(now.keys() | stamps.keys()):
        if now.get(rel) is None or stamps.get(rel) != now.get(rel):
            return FileChangedError(root / rel, "changed while it was being read (saved by an editor?)")
    return None


def write_regions(
    root: Path, force: bool, only: list[str] | None, diff: bool, out: TextIO, *, cache: Cache | None = None
) -> list[str]:
    """Read, derive, rewrite and write every out-of-date plan file; the paths written (``cache``: as :func:`pending`).

    A plan file that changes while this runs (an editor saving it) is never overwritten: what changed
    is read again and the work redone, up to :data:`ATTEMPTS` times, then FileChangedError (exit 7).
    A file that changes while it is read is in flux too (an editor writing it in place): read again, and so is one
    that is open for writing (or just modified) when what was read of it does not parse, holds a broken region or
    would be rewritten unsafely (a half-saved file: no exit 2 or 4 for what the editor's next write completes).
    """
    written: list[str] = []
    derived: tuple[list[Plan], dict[str, PhaseStatus]] | None = None
    busy: FileChangedError | None = None
    for attempt in range(ATTEMPTS):
        if busy is not None:
            time.sleep(max(busy.wait, 0.02 * attempt))
        stamps = _stamps(root)
        try:
            files, plans = load_plans(root, cache=cache)
        except PlanError:
            # A half-saved plan file does not parse: while one is being saved, read again before saying so.
            if (busy := _in_flux(root, stamps)) is None:
                raise
            continue
        moved = [rel for rel, stamp in _stamps(root).items() if stamps.get(rel) != stamp]
        if moved:
            busy = FileChangedError(root / moved[0], "changed while it was being read (saved by an editor?)")
            continue
        if derived is None or derived[0] != _definitions(plans):  # a retry after an edit of prose reuses them
            derived = (_definitions(plans), derive(root, plans, cache=cache))
        try:
            changes = _changes(_wanted(files, plans, only), derived[1], force)
            for f, new in changes:
                refuse_unsafe(f, new, derived[1])
        except (RegionEditedError, UnsafeRewriteError):
            # A half-saved file may end inside a region (a begin marker without its end: exit 4) or cut a block:
            # while one is being saved, read again before saying so.
            if (busy := _in_flux(root, stamps)) is None:
                raise
            continue
        try:
            for f, new in changes:
                stamp = stamps.get(f.path)
                if stamp is None:  # not there when the plans were listed: created while they were read
                    raise FileChangedError(root / f.path, "appeared while the plans were being read")
                write_text_if_changed(root / f.path, f.text, new, stamp=stamp, root=root)
                written.append(f.path)
                if diff:
                    out.write(unified_diff(f.path, f.text, new))
        except FileChangedError as err:
            busy = err
            continue
        return list(dict.fromkeys(written))
    assert busy is not None
    shown = busy.path.relative_to(root) if busy.path.is_relative_to(root) else busy.path  # as plan paths are shown
    raise FileChangedError(
        shown,
        f"kept changing while tracker update ran ({ATTEMPTS} reads; the last one: {busy.reason}); "
        "nothing was written to it: run tracker update again once it is saved",
    )


def _write_folders(root: Path, docs: list[str]) -> list[Path]:
    """Where update writes (and an interrupted run may have left a temp file): ``plans/``, the folders of the
    ``docs``, the folders inside the repository that symlinked plans and docs resolve to (a file is written through
    its link), and ``.tracker/cache/``."""
    folders = [root / "plans", *((root / doc).parent for doc in docs)]
    for path in [*plan_paths(root), *(root / doc for doc in docs)]:
        if path.is_symlink():
            try:
                folders.append(resolved_inside(path, root).parent)
            except FileError:
                continue  # a link out of the repository: reading the plan refuses it, nothing of ours is there
    return [*list(dict.fromkeys(folders)), root / ".tracker" / "cache"]


def _docs_in_flux(root: Path, docs: list[DocFile]) -> FileChangedError | None:
    """A doc that is being saved now, or changed since it was read, as an error (None: all settled)."""
    for doc in docs:
        now = file_stamp(root / doc.path)
        if doc.stamp is not None and (flux := in_flux(root / doc.path, doc.stamp)) is not None:
            return FileChangedError(Path(doc.path), flux[0], wait=flux[1])
        if now != doc.stamp:
            return FileChangedError(Path(doc.path), "changed while it was being read (saved by an editor?)")
    return None


def write_docs(root: Path, rels: list[str], force: bool, diff: bool, out: TextIO, cache: Cache) -> list[str]:
    """Rewrite the results regions of the docs ``rels``; the paths written. As :func:`write_regions` for plan files:
    a doc an editor saves meanwhile is never overwritten (read again, up to :data:`ATTEMPTS` times, then exit 7), and
    a new text that would read otherwise is never written (exit 2)."""
    written: list[str] = []
    busy: FileChangedError | None = None
    for attempt in range(ATTEMPTS):
        if busy is not None:
            time.sleep(max(busy.wait, 0.02 * attempt))
        docs = [read_doc(root, rel) for rel in rels]
        try:
            tables = Tables(root, cache)
            changes = doc_changes(root, docs, force, cache, tables)
        except DocTableError:
            # A half-saved doc may not parse: while one is being saved, read again before saying so.
            if (busy := _docs_in_flux(root, docs)) is None:
                raise
            continue
        if (busy := _docs_in_flux(root, docs)) is not None:
            continue
        for doc, new in changes:
            refuse_unsafe_doc(doc, new, tables)
        try:
            for doc, new in changes:
                if doc.stamp is None:
                    raise FileChangedError(Path(doc.path), "appeared while the docs were being read")
                write_text_if_changed(root / doc.path, doc.text, new, stamp=doc.stamp, root=root)
                written.append(doc.path)
                if diff:
                    out.write(unified_diff(doc.path, doc.text, new))
        except FileChangedError as err:
            busy = err
            continue
        return list(dict.fromkeys(written))
    assert busy is not None
    raise FileChangedError(
        busy.path,
        f"kept changing while tracker update ran ({ATTEMPTS} reads; the last one: {busy.reason}); "
        "nothing was written to it: run tracker update again once it is saved",
    )


def run(
    root: Path,
    check: bool = False,
    diff: bool = False,
    force: bool = False,
    out: TextIO | None = None,
    plans: list[str] | None = None,
) -> int:
    """Write regions (or with ``check`` only report): exit 1 when ``check`` finds files out of date."""
    out = out or sys.stdout
    with command_cache(root) as cache:
        return _update(root, check, diff, force, out, plans, cache)


def _update(
    root: Path, check: bool, diff: bool, force: bool, out: TextIO, plans: list[str] | None, cache: Cache
) -> int:
    docs = [] if plans else declared_docs(root)  # plan arguments: those plans' files only
    if check:
        stale = pending(root, force, plans, cache=cache)
        stale_docs = doc_changes(root, [read_doc(root, rel) for rel in docs], force, cache)
        for path, old, new in [*((f.path, f.text, n) for f, n in stale), *((d.path, d.text, n) for d, n in stale_docs)]:
            out.write(unified_diff(path, old, new))
        if stale:
            out.write(
                f"{len(stale)} plan file(s) out of date: {', '.join(f.path for f, _ in stale)} (run `tracker update`)\n"
            )
        if stale_docs:
            names = ", ".join(d.path for d, _ in stale_docs)
            out.write(f"{len(stale_docs)} doc(s) out of date: {names} (run `tracker update`)\n")
        if stale or stale_docs:
            return int(ExitCode.CHECK_FAILED)
        out.write("plan files and docs are up to date\n" if docs else "plan files are up to date\n")
        return 0
    with repo_lock(root):  # read, derive and write under one lock: concurrent runs serialize
        for temp in [t for folder in _write_folders(root, docs) for t in remove_stale_temps(folder)]:
            out.write(f"removed {temp.relative_to(root).as_posix()} (left behind by an interrupted run)\n")
        if docs:  # every doc problem (exit 2, 4, 8) before any plan file is written
            doc_changes(root, [read_doc(root, rel) for rel in docs], force, cache)
        written = write_regions(root, force, plans, diff, out, cache=cache)
        written_docs = write_docs(root, docs, force, diff, out, cache) if docs else []
    out.write(f"updated {len(written)} plan file(s)" + (f": {', '.join(written)}" if written else "") + "\n")
    if docs:
        names = f": {', '.join(written_docs)}" if written_docs else ""
        out.write(f"updated {len(written_docs)} doc(s){names}\n")
    return 0
