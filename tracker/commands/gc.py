"""``tracker gc [--dry-run] [--results]``: delete superseded evidence files, never changing what status says.

gc decides from a snapshot and deletes only what it decided on: under the repository lock it first takes
the sha256 of every store file, then reads and judges the store, and a file is deleted only while it
still holds exactly the bytes it had in that snapshot. Writers that do not take the lock (the pytest
plugin rewrites its run's file until the run completes) may change a file at any moment: the file is
first renamed to a private name, then checked and deleted, or put back when it changed, so what is
checked is what is deleted and a run that completed meanwhile is kept. A gc killed in between leaves
the private copy, which the next gc puts back.

``--results`` also prunes ``bench/results/``, whose files a project commits and which otherwise only grow: a result
file goes when no verdict, no status timeline and no tracked file needs it, i.e. it is neither the newest result of
one of its cases nor the last run that met a bench gate, pruning it changes no phase's status, verdicts or timeline,
and no tracked file names it (a document quoting its figures, a chart marker, a test reading it) but a record: a
result or evidence file, wherever it lies, is not a reader (a test run's record lists the node ids of a test
parametrized by every result file). gc deletes only a result file that git can give back: one committed and
unchanged since, never a fresh run's output; and none that a link in bench/results/ points to. Milestone reports
drawn from the results are then regenerated (``tracker check`` names them).

``--json`` prints one object instead of the lines::

    {"dry_run": false, "exit": 0, "refused": [],
     "deleted": [".tracker/evidence/a.json"], "would_delete": [],
     "kept": [{"path": ".tracker/evidence/b.json", "why": "newest evidence of 0001/P1#1"}],
     "put_back": []}

``deleted``: the files deleted (empty with ``--dry-run``); ``would_delete``: what ``--dry-run`` would delete
(empty otherwise); ``kept``: every store file kept, each with why (a file that changed while gc ran is kept
with that reason); ``put_back``: files a stopped gc had set aside, put back (or that would be); ``refused``:
the phases whose status, verdicts or status timeline (``tracker log``, reports) pruning would change, in which case
nothing is deleted and ``exit`` is 1.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TextIO, cast
from urllib.parse import quote

from tracker.base.contract import EVIDENCE_DIR, RESULT_SCHEMA, RESULTS_DIR, SIGNOFF_SCHEMA, TEST_RUN_SCHEMA
from tracker.base.fileio import parse_json, read_regular, repo_lock
from tracker.base.hashing import sha256_hex
from tracker.core.model import BenchGate, PhaseStatus, ResultRun, Store
from tracker.core.pruning import KeepSet, first_difference, needed, settle, superseded, without
from tracker.core.timeline import Transition, replay
from tracker.errors import ExitCode, FileError
from tracker.plans.load import load_plans
from tracker.store import evidence

INCOMPLETE_GRACE_S = 3600  # an "incomplete" run may still be writing: leave young ones alone


def _status_snapshot(
    statuses: dict[str, PhaseStatus], history: Mapping[str, Sequence[Transition]]
) -> dict[str, tuple[object, ...]]:
    """Each phase's status, verdicts and status timeline: what pruning must leave as it is (``tracker log`` and a
    committed report read the timeline)."""
    return {
        k: (s.status, s.changed, tuple((v.met, v.failed, v.reason, v.source) for v in s.verdicts),
            tuple(history.get(k, ())))
        for k, s in statuses.items()
    }  # fmt: skip


class Report(NamedTuple):
    """What one gc did or, with ``dry_run``, would do: the ``--json`` object's fields (module docstring)."""

    dry_run: bool
    refused: list[str]
    deleted: list[str]
    would_delete: list[str]
    kept: dict[str, str]  # store path -> why
    put_back: list[str]
    changed: list[str]  # deleted in the plan, kept: they changed while gc ran

    @property
    def exit(self) -> int:
        return int(ExitCode.CHECK_FAILED) if self.refused else 0


CHANGED_MEANWHILE = "it changed while gc ran (a run completing); the next gc judges it again"


def run(
    root: Path, dry_run: bool = False, out: TextIO | None = None, as_json: bool = False, results: bool = False
) -> int:
    """Delete (or with ``dry_run`` list) superseded evidence, and with ``results`` superseded result files; exit 1 if
    pruning would change a status. Prints a line per file and a summary, or with ``as_json`` one object (module
    docstring)."""
    out = out or sys.stdout
    report = collect(root, dry_run, results)
    if as_json:
        from tracker.commands.common import json_text

        kept = [{"path": k, "why": w} for k, w in sorted(report.kept.items())]
        doc = {
            "dry_run": report.dry_run,
            "exit": report.exit,
            "refused": report.refused,
            "deleted": report.deleted,
            "would_delete": report.would_delete,
            "kept": kept,
            "put_back": report.put_back,
        }
        out.write(json_text(out, doc) + "\n")
    else:
        out.write("".join(line + "\n" for line in text_lines(report)))
    return report.exit


def text_lines(report: Report) -> list[str]:
    """The lines ``tracker gc`` prints for ``report``."""
    put = "would put back" if report.dry_run else "put back"
    lines = [f"{put} {rel} (set aside by a gc that was stopped)" for rel in report.put_back]
    if report.refused:
        return [*lines, f"tracker gc: refusing, pruning would change {', '.join(report.refused)}; nothing deleted"]
    lines += [f"would delete {rel}" for rel in report.would_delete]
    done = sorted(
        [(rel, f"deleted {rel}") for rel in report.deleted]
        + [(rel, f"kept {rel}: {CHANGED_MEANWHILE}") for rel in report.changed]
    )
    lines += [line for _, line in done]
    if report.dry_run:
        lines += [f"keep {rel}: {why}" for rel, why in sorted(report.kept.items())]
        lines.append(f"tracker gc: {len(report.would_delete)} superseded file(s) to delete, {len(report.kept)} kept")
    else:
        lines.append(f"tracker gc: {len(report.deleted)} superseded file(s) deleted, {len(report.kept)} kept")
    return lines


def collect(root: Path, dry_run: bool, prune_results: bool = False) -> Report:
    """Judge the store (and with ``prune_results`` bench/results/) under the lock and delete (unless ``dry_run``)
    what is superseded; what was done."""
    from tracker.base.cache import Cache
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import tree_file_ids
    from tracker.core.status import compute
    from tracker.store.bench_evaluator import Evaluator, cached_bounds, put_bounds

    with repo_lock(root):
        put_back = restore_set_aside(root, dry_run, prune_results)
        snapshot = _snapshot(root)  # before anything is read: a file that changes after this is never deleted
        if prune_results:
            snapshot |= _snapshot_results(root)
        _, plans = load_plans(root)
        store = evidence.load(root)
        has_bench = bool(store.bench) or any(
            isinstance(g, BenchGate) for p in plans for ph in p.phases for g in ph.gates
        )
        results: list[ResultRun] = []
        if has_bench:
            from tracker.store.result_files import load_repo_results

            results = load_repo_results(root)
        ids = tree_file_ids(root)
        index = FileIndex(ids)
        prunable: set[str] = set()  # with --results: the result files gc may delete (below)
        # Bootstrap bounds, a pure function of their samples: shared by every view, and kept in the cache status and
        # report keep theirs in (replaying the history computes thousands: 42,117 calls judged 164 files, 2026-12-06).
        cache = Cache(root)
        bounds = cached_bounds(cache)

        def view(s: Store, rs: Sequence[ResultRun]) -> dict[str, tuple[object, ...]]:
            evaluator = Evaluator(rs)
            evaluator.bounds = bounds
            # A result file pruned is gone from the tree too: a phase whose paths cover it, or a result whose
            # fingerprint names it, would read stale without it.
            gone = prunable.difference(r.path for r in rs)
            tree = FileIndex({k: v for k, v in ids.items() if k not in gone}) if gone else index
            return _status_snapshot(compute(plans, s, lambda: tree, lambda: evaluator), replay(plans, s, rs, bounds))

        def since(a: dict[str, tuple[object, ...]], b: dict[str, tuple[object, ...]]) -> str | None:
            return first_difference(
                {k: cast("Sequence[Transition]", v[-1]) for k, v in a.items()},
                {k: cast("Sequence[Transition]", v[-1]) for k, v in b.items()},
            )

        in_store = EVIDENCE_DIR.as_posix() + "/"
        # With --results: the result files gc may judge, and why each of the others in bench/results/ stays.
        if prune_results:
            found, held = _prunable_results(root, results, snapshot)
            prunable |= found
        else:
            held = {}
        first = needed(plans, store, results, bounds)
        results_dir = root / RESULTS_DIR
        links = sorted(results_dir.glob("*.json")) if results_dir.is_dir() and not results_dir.is_symlink() else []
        for target, link in _links_into(root, links).items():  # a link there to a store copy, say
            first.add(target, f"{link} links to it")
        for path, why in _drawn_by_docs(root, results).items() if results else ():
            first.add(path, why)
        candidates = prunable.difference(first.why)
        if candidates:
            # A phase whose paths cover result files reads stale without them (its evidence recorded them): one
            # view with every candidate gone finds those phases, and their files stay at once (settle alone would
            # add them back one full replay at a time).
            whole, trial = view(store, results), view(store, [r for r in results if r.path not in candidates])
            for plan in plans:
                for phase in plan.phases:
                    key = f"{plan.id}/{phase.id}"
                    if key in whole and trial.get(key, ())[:3] != whole[key][:3] and phase.paths:
                        for path in sorted(candidates.intersection(index.match(phase.paths))):
                            first.add(path, f"covered by {key}'s paths: without it the phase would read stale")
        keep: KeepSet = settle(
            store,
            first,
            results,
            view,
            lambda path: path.startswith(in_store) or path in prunable,
            since,
        )
        drop = set(superseded(store, keep, [f for f, _ in store.bench])) | _abandoned(store.incomplete, snapshot)
        drop |= {r.path for r in results if r.path in prunable and r.path not in keep.why}
        drop &= snapshot.keys()  # a file that appeared after the snapshot was not judged from it
        # Belt and braces: the pruned store must show exactly what the full one shows.
        before, after = view(store, results), view(without(store, drop), [r for r in results if r.path not in drop])
        changed = sorted(k for k, v in before.items() if after.get(k) != v)
        put_bounds(cache, bounds)
        cache.write()
        # Without --results only the store is gc's to prune: result files elsewhere (bench/results/) are kept, unlisted.
        kept = {rel: why for rel, why in keep.why.items() if rel.startswith(in_store) or rel in prunable}
        kept |= {rel: why for rel, why in held.items() if rel not in drop}
        if changed:
            return Report(
                dry_run,
                changed,
                [],
                [],
                kept | {rel: "superseded, but gc refused: pruning would change a status" for rel in drop},
                put_back,
                [],
            )
        if dry_run:
            return Report(dry_run, [], [], sorted(drop), kept, put_back, [])
        deleted: list[str] = []
        meanwhile: list[str] = []
        for rel in sorted(drop):
            (deleted if delete_if_unchanged(root / rel, snapshot[rel].digest) else meanwhile).append(rel)
        return Report(
            dry_run, [], deleted, [], kept | {rel: CHANGED_MEANWHILE for rel in meanwhile}, put_back, meanwhile
        )


class Taken(NamedTuple):
    """One store file as gc's snapshot saw it."""

    digest: str  # sha256 of its bytes
    mtime: float
    status: object  # a test run's "status" (None for other kinds)


def _snapshot(root: Path) -> dict[str, Taken]:
    """Every store file gc may judge, by store path; a file it cannot read is left out (and so never
    deleted; reading the store says why it cannot be used)."""
    folder = root / EVIDENCE_DIR
    taken: dict[str, Taken] = {}
    if not folder.is_dir():
        return taken
    for path in sorted(folder.glob("*.json")):
        try:
            mtime = path.lstat().st_mtime
            data = read_regular(path, root=root)
        except (OSError, FileError):
            continue
        taken[(EVIDENCE_DIR / path.name).as_posix()] = Taken(sha256_hex(data), mtime, _run_status(data))
    return taken


def _snapshot_results(root: Path) -> dict[str, Taken]:
    """Every regular file of bench/results/ as :func:`_snapshot` takes the store's (a link is left out: never
    deleted)."""
    folder = root / RESULTS_DIR
    taken: dict[str, Taken] = {}
    if folder.is_symlink() or not folder.is_dir():
        return taken
    for path in sorted(folder.glob("*.json")):
        try:
            if path.is_symlink():
                continue
            mtime = path.lstat().st_mtime
            data = read_regular(path, root=root)
        except (OSError, FileError):
            continue
        taken[(RESULTS_DIR / path.name).as_posix()] = Taken(sha256_hex(data), mtime, None)
    return taken


_CITING_MAX_BYTES = 8 << 20  # a tracked file larger than this is no document (and is not read)
_RECORDS = (RESULT_SCHEMA, TEST_RUN_SCHEMA, SIGNOFF_SCHEMA)


def _is_record(data: bytes) -> bool:
    """Whether ``data`` is a tracker record (a result file, a test run, a sign-off): a JSON object whose schema says
    so."""
    if not any(s.encode() in data for s in _RECORDS):
        return False
    try:
        doc = parse_json(data)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("schema") in _RECORDS


def _spellings(name: str) -> set[bytes]:
    """How a document may write a file's name: as its bytes, Markdown-escaped (``run\\_1.json``), URL-quoted
    (``my%20run.json``), HTML-escaped (``a&amp;b.json``) or JSON-escaped (``r\\u00e9sultat.json``)."""
    raw = os.fsencode(name)
    escaped = json.dumps(name)[1:-1].encode("ascii", "backslashreplace")
    return {
        raw,
        raw.replace(b"_", b"\\_"),
        quote(name, errors="surrogateescape").encode(),
        html.escape(name, quote=False).encode("utf-8", "surrogateescape"),
        escaped,
    }


def _links_into(root: Path, links: Sequence[Path]) -> dict[str, str]:
    """{what it resolves to: the link}, repository-relative, for each of ``links`` that is a symbolic link resolving
    to a file inside ``root``: deleting that file would leave the link dangling, which readers refuse."""
    out: dict[str, str] = {}
    top = Path(os.path.realpath(root))
    for link in links:
        if not link.is_symlink():
            continue
        try:
            target = Path(os.path.realpath(link)).relative_to(top).as_posix()
        except ValueError:
            continue
        out.setdefault(target, link.relative_to(root).as_posix())
    return out


def _index_copies(root: Path, wanted: set[str]) -> dict[str, bytes]:
    """Git's index copy of each tracked regular file of ``wanted`` (one whose working copy is absent or cannot be
    read: a sparse checkout, an unstaged deletion, a FIFO put in its place) up to :data:`_CITING_MAX_BYTES`, by its
    blob id: three git processes whatever their number, and no size read before it is known."""
    if not wanted:
        return {}

    def git(*args: str, data: bytes = b"") -> bytes:
        done = subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, check=False)
        return done.stdout if done.returncode == 0 else b""

    oids: dict[str, str] = {}
    for entry in git("ls-files", "-s", "-z").split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        fields = meta.split()
        path = raw.decode("utf-8", "surrogateescape")
        if path in wanted and len(fields) == 3 and fields[2] == b"0" and fields[0] in (b"100644", b"100755"):
            oids[path] = fields[1].decode()
    small = set()
    for line in git(
        "cat-file", "--batch-check", data="".join(f"{o}\n" for o in set(oids.values())).encode()
    ).splitlines():
        oid, kind, size = [*line.decode(errors="replace").split(), "", ""][:3]
        if kind == "blob" and size.isdigit() and int(size) <= _CITING_MAX_BYTES:
            small.add(oid)
    out = git("cat-file", "--batch", data="".join(f"{o}\n" for o in sorted(small)).encode())
    blobs: dict[str, bytes] = {}
    at = 0
    while at < len(out):  # "<oid> blob <size>\n<bytes>\n" each
        head_end = out.index(b"\n", at)
        oid, _, size = out[at:head_end].decode().split()
        start = head_end + 1
        blobs[oid] = out[start : start + int(size)]
        at = start + int(size) + 1
    return {path: blobs[oid] for path, oid in oids.items() if oid in blobs}


def _prunable_results(
    root: Path, results: Sequence[ResultRun], snapshot: Mapping[str, Taken]
) -> tuple[set[str], dict[str, str]]:
    """The result files of bench/results/ that ``--results`` may delete if nothing else needs them: read whole
    (in ``results``), in the snapshot, committed and unchanged since (git gives them back), the target of no tracked
    link and named by no tracked file but the result and evidence files themselves and other records. Also why each
    other file of bench/results/ stays."""
    from tracker.base.fingerprint import read_tree

    tree = read_tree(root, commit=True)
    head, changed = tree.state if tree.state is not None else (None, ())
    differs = set(changed)
    in_results = RESULTS_DIR.as_posix() + "/"
    mine = {r.path for r in results if r.path.startswith(in_results) and "/" not in r.path[len(in_results) :]}
    held: dict[str, str] = {}
    for rel in sorted(snapshot):
        if not rel.startswith(in_results):
            continue
        if rel not in mine:
            held[rel] = "a copy of another result file's bytes, or not a result file: gc judges only what it reads"
        elif head is None or rel not in tree.ids or rel in differs:
            held[rel] = "not committed as it is: gc deletes only result files git can give back"
    # Every file git lists, tracked (also one a sparse checkout or a deletion left out of the tree: git's copy is
    # read) or untracked, but the store (.tracker/ is not listed), the result files and what git ignores.
    readers = sorted({*tree.ids, *tree.named}.difference(snapshot))
    for target, link in _links_into(root, [root / rel for rel in readers]).items():
        if target in mine:
            held.setdefault(target, f"{link} links to it")
    names = {rel: _spellings(rel.rsplit("/", 1)[1]) for rel in mine if rel not in held}

    def scan(reader: str, data: bytes) -> None:
        if b"json" not in data or _is_record(data):
            return
        for rel, spelled in list(names.items()):
            if any(s in data for s in spelled):
                held[rel] = f"named in {reader}"
                del names[rel]

    unread: set[str] = set()  # files whose working copy is absent or cannot be read: git's copy is read for them
    for reader in readers:
        if not names:
            break
        path = root / reader
        try:
            if path.is_symlink() or not path.is_file():
                raise FileError(reader)  # a link is its target's (kept above); a FIFO, a folder: git's copy
            scan(reader, read_regular(path, root=root, limit=_CITING_MAX_BYTES))
        except (OSError, FileError):
            unread.add(reader)
    for reader, data in _index_copies(root, unread if names else set()).items():
        scan(reader, data)
    return set(names), held


def _drawn_by_docs(root: Path, results: Sequence[ResultRun]) -> dict[str, str]:
    """{result file: why}: the run each ``results`` table and each figure of the declared docs draws from (the newest
    that holds it, as ``tracker update`` chooses), so that a figure pinned to a commit or a machine keeps its run."""
    from tracker.report.doc_figures import find_figures, may_hold_figures
    from tracker.report.doc_figures import holds as figure_holds
    from tracker.report.doc_files import declared_docs, read_doc
    from tracker.report.doc_tables import newest_holding, parse_tables

    out: dict[str, str] = {}
    for rel in declared_docs(root):
        doc = read_doc(root, rel)
        specs, _ = parse_tables(rel, doc.text)
        for spec in specs:
            run = newest_holding(spec, results)
            if run is not None:
                out.setdefault(run.path, f"a results table of {rel} draws from it")
        if may_hold_figures(doc.text):
            for fig in find_figures(rel, doc.text)[0]:
                run = max((r for r in results if figure_holds(fig, r)), key=lambda r: (r.time, r.path), default=None)
                if run is not None:
                    out.setdefault(run.path, f"the figure at {rel}:{fig.line} draws from it")
    return out


def _run_status(data: bytes) -> object:
    """A test run's ``status`` in the file's bytes; None for other kinds and for what is not JSON."""
    if b"tracker-test-run" not in data:
        return None
    try:
        doc = parse_json(data)
    except ValueError:
        return None
    return doc.get("status") if isinstance(doc, dict) and doc.get("schema") == "tracker-test-run" else None


def _abandoned(incomplete: Sequence[str], snapshot: dict[str, Taken]) -> set[str]:
    """The runs that were not complete in the snapshot and never will be, as the snapshot shows them:
    interrupted ones (they count for nothing) and incomplete ones older than :data:`INCOMPLETE_GRACE_S`
    (surely abandoned). One that completes after the snapshot is kept at deletion (its bytes changed)."""
    now = time.time()
    return {
        rel
        for rel in incomplete
        if rel in snapshot and (snapshot[rel].status != "incomplete" or now - snapshot[rel].mtime > INCOMPLETE_GRACE_S)
    }


SET_ASIDE = re.compile(r"^\.(?P<name>.+\.json)\.[0-9a-f]{12}\.gc$")


def delete_if_unchanged(path: Path, digest: str) -> bool:
    """Delete ``path`` if it holds exactly the bytes whose sha256 is ``digest``; True when deleted.

    The file is renamed to a private name first (an atomic take: a writer replacing it meanwhile puts its
    new file at ``path``), then checked; a changed file goes back to ``path``, unless a newer one is there
    already (the writer's latest, which wins). A Ctrl-C in between puts it back too.
    """
    aside = path.with_name(f".{path.name}.{os.urandom(6).hex()}.gc")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    deleted = False
    try:
        # bounded; a FIFO put there is refused, not read; a link swapped in is not the file judged
        if not aside.is_symlink() and sha256_hex(read_regular(aside)) == digest:
            os.unlink(aside)
            deleted = True
    except FileError:
        pass
    finally:
        if not deleted:
            _put_back(aside, path)
    return deleted


def _put_back(aside: Path, path: Path) -> None:
    """Return a set-aside file to ``path``; if a file is there already it is newer, and the copy goes."""
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    except FileNotFoundError:
        return  # deleted after all (a Ctrl-C right after the unlink)
    except OSError:  # a file system without hard links: a rename, which cannot refuse a newer file as atomically
        if not os.path.lexists(path):
            os.rename(aside, path)
            return
    os.unlink(aside)


def restore_set_aside(root: Path, dry_run: bool, results: bool = False) -> list[str]:
    """Put back what a gc killed between its rename and its check left under a private name (unless
    ``dry_run``), in the store and, with ``results``, in bench/results/; the paths put back (or that would be)."""
    put_back = []
    for where in (EVIDENCE_DIR, RESULTS_DIR) if results else (EVIDENCE_DIR,):
        folder = root / where
        if folder.is_symlink() or not folder.is_dir():
            continue
        for aside in sorted(folder.glob(".*.gc")):
            match = SET_ASIDE.match(aside.name)
            if match is None or aside.is_symlink() or not aside.is_file():
                continue
            put_back.append((where / match["name"]).as_posix())
            if not dry_run:
                _put_back(aside, folder / match["name"])
    return put_back
