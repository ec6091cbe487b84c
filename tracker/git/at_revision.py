"""The statuses as they stood at a git revision: the plans, the evidence and the code that REF's tree holds, judged
by :func:`tracker.core.status.evaluate`. What ``tracker summary`` compares the working tree with.

Exactly what REF's tree holds, read as the working tree's is:

- plans: ``plans/NNNN-*.md`` of REF's tree (through symlinks inside that tree), parsed from REF's blobs. A plan
  file whose text is the working tree's takes the parse the command already has; another is parsed once and kept in
  the cache ``revision-plans`` (by path and blob id: the same blob elsewhere has other messages). Which plans are
  valid is decided over REF's files as :func:`tracker.plans.load.load_plan_set` decides it over the working tree's.
- evidence: the store files REF's tree holds, by name. Evidence files are never edited (docs/evidence.md), so the
  working tree's file of that name is REF's file and the store the command loaded has it already. A file REF holds
  that is gone now (``tracker gc`` deleted it) is read from REF's blob, not left out: the statuses at REF are what
  REF's evidence said, whatever was collected since. So is one edited all the same (``git diff REF`` names it: by
  hand, a bad merge): REF's statuses are never the working tree's evidence.
- result files: REF's ``bench/results/*.json`` and the result copies of REF's store. One whose working-tree file
  has REF's blob id is read from disk, through the caches ``status`` fills; one changed or gone since, from REF's
  blob. Where every store file of REF is in the working tree unedited, REF's copies are those of them the working
  tree's store lists, which the status index names (:attr:`Now.listed`): no store file is opened to find them. A
  bench gate's figures read only the result files that may hold its metric
  (:meth:`tracker.store.bench_evaluator.Evaluator.results_for`).
- staleness: REF's tree file ids (``git ls-tree -r``: blob ids, what fingerprints record), ``.tracker/`` left out
  as :func:`tracker.base.fingerprint.tree_file_ids` leaves it out. What was not committed at REF did not exist there.

When REF's evidence is the working tree's (the same store files and result files: a change that touched only code
or plans), REF's answers come from the status index as ``status``'s do (:mod:`tracker.store.statusindex`; its answers
depend only on the evidence and on the gates asked), and no store file is opened. When it is not (evidence added and
not yet committed: after every device run), they come from an index of REF's own evidence, the cache
``revision-index``, keyed by the blob ids of REF's store and result files (what they hold, wherever they are read
from) with the tracker's code and libraries: REF's store is read and judged once, not at every summary. Not when a
store or result file of REF is a symlink (its target, not its blob, says what it holds) or one was edited since.

Pure parts: REF's files picked from its tree (:func:`pick`), its plan set (:func:`plan_set`) and its store
(:func:`store_at`); git is read by :mod:`tracker.git.log`, files on disk by the readers. What the evaluation at REF
learns stays out of the files ``status`` reads (:func:`revision_cache`).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tracker.base.cache import PARSE_LIBRARIES, Cache, Overlay, cache_key, code_identity, library_key
from tracker.base.contract import EVIDENCE_DIR, LINK_MODE, RESULTS_DIR, Clock, file_id, utc_time
from tracker.base.file_index import FileIndex
from tracker.base.fingerprint import TRACKER_DIR
from tracker.base.gate_paths import gate_path
from tracker.core.checks import cross_plan_findings
from tracker.core.evidence_answers import Evidence, LiveEvidence
from tracker.core.model import BenchEvaluator, PhaseStatus, Plan, ResultRun, Store, TestRun
from tracker.core.status import evaluate
from tracker.errors import ResultFileError
from tracker.git.log import ChangedSince, TreeEntry, changed_since, read_blobs, revision_tree
from tracker.plans.load import MAX_PLAN_BYTES, PLAN_GLOB, InvalidPlan, PlanFile, from_plain, to_plain
from tracker.store.bench_evaluator import Evaluator, RepoResults, cached_bounds
from tracker.store.statusindex import StoreFiles, store_files

PLANS_CACHE = "revision-plans"  # the cache of plan files parsed from a revision's blobs (tracker.base.cache)
MAX_KEPT_PLANS = 512  # parses kept beyond the ones a command used (older ones go first)
_STORE = f"{EVIDENCE_DIR.as_posix()}/"
_RESULTS = f"{RESULTS_DIR.as_posix()}/"


class Picked(NamedTuple):
    """REF's files as the evaluation reads them (:func:`pick`)."""

    plans: dict[str, str]  # {plans/NNNN-x.md: the tree path of its text (symlinks followed), "" when refused}
    evidence: dict[str, str]  # {store file name: blob id} (``*.json`` right under .tracker/evidence/)
    results: dict[str, str]  # {bench/results/x.json: blob id}
    code: dict[str, str]  # {path: id} of every file outside .tracker/: what fingerprints record


class AtRevision(NamedTuple):
    """The plans, statuses and evidence at a revision."""

    ref: str  # as given
    commit: str | None  # its full sha; None: HEAD of a branch without a commit yet (nothing there)
    plans: list[Plan]  # REF's valid plans
    invalid: list[InvalidPlan]  # REF's plan files that are not valid (not judged)
    statuses: dict[str, PhaseStatus]
    code: dict[str, str]  # REF's tree file ids outside .tracker/
    evidence: tuple[str, ...]  # REF's store files and result files, paths relative to the root
    bench: Callable[[], BenchEvaluator]  # REF's result files, evaluated (built on the first call)


# --- pure: REF's files, plans and store -----------------------------------------------------------------------


def resolve_link(entries: Mapping[str, TreeEntry], path: str, link: Callable[[str], str]) -> str | None:
    """``path`` with every symlink of REF's tree along it followed (``link``: a symlink blob's target); None when a
    link leads out of the tree (an absolute target, ``..`` past the top) or round in circles."""
    return _follow(entries, path, link)[0]


def _follow(entries: Mapping[str, TreeEntry], path: str, link: Callable[[str], str]) -> tuple[str | None, bool]:
    """(:func:`resolve_link`'s answer, whether a link of ``path`` leads out of the tree)."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):  # no path of a git tree: not one of its files
        return None, False
    done: list[str] = []
    for _ in range(40 + len(parts)):  # as the kernel: at most 40 links on one path
        if not parts:
            return "/".join(done), False
        here = "/".join([*done, parts[0]])
        entry = entries.get(here)
        if entry is None or entry.mode != LINK_MODE:
            done.append(parts.pop(0))
            continue
        target = link(entry.id)
        if target.startswith("/"):
            return None, True
        joined = posixpath.normpath(posixpath.join("/".join(done), target, *parts[1:]))
        if joined == ".." or joined.startswith("../"):
            return None, True
        done, parts = [], [] if joined == "." else joined.split("/")
    return None, False


def outside_at(entries: Mapping[str, TreeEntry], link: Callable[[str], str]) -> Callable[[str], str | None]:
    """Lint's rule (:mod:`tracker.base.gate_paths`) on REF's tree, for :func:`tracker.core.status.evaluate`: why a test
    gate's path leaves the repository through a symlink of REF's tree, or None (a path without a link, a link that stays
    inside, a loop: the working tree's rule cannot look at one either)."""

    def check(test: str) -> str | None:
        path = posixpath.normpath(gate_path(test))
        parts = path.split("/")
        if not any(entries.get("/".join(parts[: i + 1]), _NO_ENTRY).mode == LINK_MODE for i in range(len(parts))):
            return None
        return (
            f"test path {path!r} leaves the repository through a symlink" if _follow(entries, path, link)[1] else None
        )

    return check


_NO_ENTRY = TreeEntry("", "", "")


def pick(entries: Mapping[str, TreeEntry], link: Callable[[str], str]) -> Picked:
    """REF's plan files, store files, result files and file ids, from its tree (``link``: a symlink's target)."""
    evidence = {
        p[len(_STORE) :]: e.id
        for p, e in entries.items()
        if p.startswith(_STORE) and p.endswith(".json") and "/" not in p[len(_STORE) :]
    }
    results = {
        p: e.id
        for p, e in entries.items()
        if p.startswith(_RESULTS) and p.endswith(".json") and "/" not in p[len(_RESULTS) :]
    }
    code = {p: file_id(e.id, e.mode) for p, e in entries.items() if not p.startswith(f"{TRACKER_DIR}/")}
    plans: dict[str, str] = {}
    folder = resolve_link(entries, "plans", link)
    if folder is not None and folder not in entries:  # a directory (a file named plans holds no plan)
        prefix = f"{folder}/" if folder else ""
        names = sorted({p[len(prefix) :].split("/", 1)[0] for p in entries if p.startswith(prefix)})
        for name in names:
            if not fnmatch.fnmatchcase(name, PLAN_GLOB):
                continue
            target = resolve_link(entries, f"{prefix}{name}", link)
            entry = entries.get(target) if target is not None else None
            plans[f"plans/{name}"] = target if target is not None and entry is not None and entry.kind == "blob" else ""
    return Picked(plans, evidence, results, code)


def plan_set(parsed: Sequence[PlanFile]) -> tuple[list[Plan], list[InvalidPlan]]:
    """(valid plans, invalid files) of a set of parsed plan files, by :func:`tracker.plans.load.load_plan_set`'s rules:
    a file is invalid with a problem of its own or a problem across plans reported in it, except an unknown
    dependency into a plan id that an invalid file claims (that file's problem: the phase is blocked by it)."""
    cross = cross_plan_findings([f.plan for f in parsed if f.plan is not None])
    own: dict[str, list[str]] = {f.path: list(f.problems) for f in parsed}
    ids = {f.path: f.plan.id if f.plan is not None else None for f in parsed}
    broken = [path for path, problems in own.items() if problems]
    broken_ids = {ids.get(path) for path in broken} | {path.rsplit("/", 1)[-1][:4] for path in broken}
    for c in cross:
        if c.into is None or c.into not in broken_ids:
            own[c.path].append(c.message)
        if c.also is not None:
            own[c.also].append(c.message)
    invalid = sorted(
        (InvalidPlan(f.path, ids[f.path], own[f.path]) for f in parsed if own[f.path]), key=lambda i: i.path
    )
    return [f.plan for f in parsed if f.plan is not None and not own[f.path]], invalid


def store_at(current: Store, names: Iterable[str], gone: Mapping[str, tuple[str, dict[str, Any]] | str]) -> Store:
    """The store as REF held it: the files of ``current`` whose names REF's tree holds (evidence files are never
    edited), plus ``gone``: {name: (UTC time, document)} of REF's files missing now, read from REF's blobs, or
    {name: why it cannot be used}. Ordered as :func:`tracker.store.evidence.load` orders a store: by time, then name."""
    keep = {_STORE + name for name in names}
    runs = [r for r in current.runs if r.file in keep]
    signoffs = [s for s in current.signoffs if s[0] in keep]
    bench = [b for b in current.bench if b[0] in keep]
    incomplete = [f for f in current.incomplete if f in keep]
    # "path: reason"; one about the whole store (a folder that cannot be read) stays: it says why nothing counts.
    invalid = [x for x in current.invalid if not x.startswith(_STORE) or any(x.startswith(f"{k}: ") for k in keep)]
    if not gone:
        return Store(runs, signoffs, bench, incomplete, invalid, [], list(current.processes))
    processes = list(current.processes)
    timed_runs = [(r.time, r.file, r) for r in runs]
    timed_signoffs = [(utc_time(d.get("time")) or "", f, (f, d)) for f, d in signoffs]
    for name, read in sorted(gone.items()):
        rel = _STORE + name
        if isinstance(read, str):
            invalid.append(f"{rel}: {read}")
            continue
        when, doc = read
        kind = doc["schema"]
        if kind == "tracker-test-run":
            if doc["status"] == "complete":
                timed_runs.append(
                    (when, rel, TestRun(rel, doc["provenance"], doc.get("gates", {}), doc["files"], doc["tests"]))
                )
                continue
            from tracker.store.evidence import crashed_run

            crashed = crashed_run(rel, doc, processes)  # no running slot beside a blob: the file's own record
            if crashed is None:
                incomplete.append(rel)
            else:
                timed_runs.append((when, rel, crashed))
        elif kind == "tracker-signoff":
            timed_signoffs.append((when, rel, (rel, doc)))
        else:
            bench.append((rel, doc))
    return Store(
        [r for _, _, r in sorted(timed_runs, key=lambda t: t[:2])],
        [s for _, _, s in sorted(timed_signoffs, key=lambda t: t[:2])],
        sorted(bench, key=lambda b: b[0]),
        sorted(incomplete),
        invalid,
        [],
        processes,
    )


# --- the cache the evaluation at REF reads through ---------------------------------------------------------------


REVISION_INDEX = "revision-index"  # the cache of REF's status index (module docstring)
REVISION_SHARED = frozenset({"result-checks", "bootstrap", "result-metrics"})
REVISION_APART = {"bench-verdicts": "revision-bench-verdicts"}


def revision_cache(base: Cache) -> Overlay:
    """The command's cache as the evaluation at REF sees it: it reads what the command's cache holds and shares its
    memos (a result file parsed for now is not parsed again for REF). What it learns about content alone (result
    files' validation, bootstrap bounds: true of the bytes wherever they are) goes to the command's cache. The bench
    verdicts of REF's result set go to a cache of their own, ``revision-bench-verdicts`` (read after
    ``bench-verdicts``, which answers when REF's result files are the working tree's), so that REF's answers never
    replace the working tree's in the files ``status`` reads, and a second summary against the same REF evaluates
    nothing again (ratio gates that fail ask every earlier run: ~0.5 s on our plans). The rest (content ids of
    REF's files) only lives while the command runs."""
    return Overlay(base, REVISION_SHARED, REVISION_APART)


# --- reading REF ---------------------------------------------------------------------------------------------------


class Now(NamedTuple):
    """What the command knows of the working tree, each read on first use (``tracker.report.repo_view.RepoView`` has
    them)."""

    files: Sequence[PlanFile]  # the working tree's plan files, parsed
    store: Callable[[], Store]  # the evidence store, loaded
    tree: Callable[[], FileIndex]  # the working tree's file ids
    # The store's result copies and files when known without reading it (the status index has them); None: unknown.
    listed: Callable[[], StoreFiles | None] | None = None


class Early(NamedTuple):
    """What git can read of REF before the working tree is read (:func:`start`): its commit, and the comparison of
    its store files with the working tree's, running."""

    commit: str
    edited: ChangedSince


def start(root: Path, ref: str) -> Early | None:
    """Start git comparing ``ref``'s store files with the working tree's, so that it runs while the command reads the
    working tree; None where ``ref`` names no commit, or git cannot be asked (:func:`at_revision` then says why, as
    it always did). The caller closes it (``edited.close()``) once :func:`at_revision` is done."""
    from tracker.errors import FileError
    from tracker.git.log import UnknownRef, revision

    try:
        commit = revision(root, ref)
        return None if commit is None else Early(commit, ChangedSince(root, commit, _STORE))
    except (UnknownRef, FileError):
        return None


def at_revision(
    root: Path,
    ref: str,
    now: Now,
    cache: Cache,
    clock: Clock | None = None,
    tree: str | None = None,
    early: Early | None = None,
) -> AtRevision:
    """The plans and statuses at ``ref`` (module docstring). ``now``: the working tree as the command read it;
    ``cache``: the command's (what REF's evaluation learns goes through :func:`revision_cache`); ``tree``: a tree's
    id to judge instead of ``ref``'s commit (the index's: what a commit hook's commit holds; ``commit`` is that id
    then); ``early``: :func:`start`'s, used only where it compared the commit ``ref`` names now. Raises
    :class:`tracker.git.log.UnknownRef` (exit 3) for a ref that names no commit."""
    from tracker.git.log import tree_entries

    clock = clock or Clock()
    commit, entries = revision_tree(root, ref) if tree is None else (tree, tree_entries(root, tree))
    targets: dict[str, str] = {}

    def link(oid: str) -> str:
        """A symlink's target (read when a path to a plan file meets one: seldom)."""
        if oid not in targets:
            targets[oid] = read_blobs(root, [oid])[oid].decode("utf-8", "surrogateescape")
        return targets[oid]

    picked = pick(entries, link)
    # Store files REF holds whose working-tree file is not REF's any more (edited, though evidence never should be).
    if commit is not None and picked.evidence:
        started = early is not None and tree is None and early.commit == commit
        changed = early.edited.result() if early is not None and started else changed_since(root, commit, _STORE)
        edited = {p.removeprefix(_STORE) for p in changed} & picked.evidence.keys()
    else:
        edited = set()
    plans, invalid = plan_set(_plan_files(root, picked, entries, now.files, now.tree, cache))
    evidence_files = tuple(_STORE + n for n in sorted(picked.evidence)) + tuple(sorted(picked.results))
    rev_cache = revision_cache(cache)
    code = picked.code
    built: list[BenchEvaluator] = []
    stores: list[Store] = []

    def store() -> Store:
        if not stores:
            stores.append(_store(root, picked, now, entries, clock, edited))
        return stores[0]

    def bench() -> BenchEvaluator:
        if not built:
            built.append(_bench(root, picked, *_copies(picked, now, store, edited), now, entries, clock, rev_cache))
        return built[0]

    def files() -> FileIndex:
        return FileIndex(code)

    outside = outside_at(entries, link)  # a test gate whose path leaves REF's tree meets nothing there
    statuses = _indexed(root, picked, plans, now, cache, clock, files, outside) if plans and not edited else None
    if statuses is None and plans and not edited and not _linked(picked, entries):
        statuses = _revision_indexed(root, picked, plans, store, bench, cache, clock, files, outside)
    if statuses is None:
        statuses = evaluate(plans, LiveEvidence(store(), bench), files, outside) if plans else {}
    return AtRevision(ref, commit, plans, invalid, statuses, code, evidence_files, bench)


def _plan_files(
    root: Path,
    picked: Picked,
    entries: Mapping[str, TreeEntry],
    current: Sequence[PlanFile],
    tree: Callable[[], FileIndex],
    cache: Cache,
) -> list[PlanFile]:
    """REF's plan files parsed: the working tree's parse where the text is the same, else the cache's, else now."""
    by_path = {f.path: f for f in current}
    worktree = tree().files
    # A plan file whose blob id is the working tree's has its text: the parse the command has is REF's.
    unchanged = {rel for rel, t in picked.plans.items() if t and rel in by_path and worktree.get(rel) == entries[t].id}
    blobs = read_blobs(root, [entries[t].id for rel, t in picked.plans.items() if t and rel not in unchanged])
    key = cache_key(PLANS_CACHE, code_identity(), library_key(*PARSE_LIBRARIES))
    known = cache.read(PLANS_CACHE, key)
    kept: dict[str, Any] = known if isinstance(known, dict) else {}
    used: dict[str, Any] = {}
    out: list[PlanFile] = []
    for rel, target in picked.plans.items():
        if not target:
            out.append(PlanFile(rel, "", None, [f"{rel}: refused: not a regular file of the revision's tree"]))
            continue
        if rel in unchanged:
            out.append(by_path[rel])
            continue
        oid = entries[target].id
        data = blobs[oid]
        if len(data) > MAX_PLAN_BYTES:
            out.append(PlanFile(rel, "", None, [f"{rel}: refused: larger than {MAX_PLAN_BYTES} bytes"]))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            out.append(PlanFile(rel, "", None, [f"{rel}: not UTF-8 text (byte {err.start}: {err.reason})"]))
            continue
        same = by_path.get(rel)
        if same is not None and same.text == text:
            out.append(same)
            continue
        slot = f"{rel}\0{oid}"
        hit = _cached(kept.get(slot), rel, text)
        if hit is None:
            from tracker.plans.parse import parse_plan  # cold path only: markdown-it-py + pydantic

            plan, problems = parse_plan(rel, text)
            hit = PlanFile(rel, text, plan, problems)
        used[slot] = {"plan": to_plain(hit.plan) if hit.plan is not None else None, "problems": hit.problems}
        out.append(hit)
    if used and not used.items() <= kept.items():
        older = [(k, v) for k, v in kept.items() if k not in used][-MAX_KEPT_PLANS:]
        cache.put(PLANS_CACHE, key, dict([*older, *used.items()]))
    return out


def _cached(hit: Any, rel: str, text: str) -> PlanFile | None:
    """A ``revision-plans`` entry as a PlanFile, or None when it is not one this code wrote."""
    if not isinstance(hit, dict) or not isinstance(hit.get("problems"), list):
        return None
    problems = hit["problems"]
    if not all(isinstance(p, str) for p in problems):
        return None
    try:
        plan = from_plain(hit["plan"]) if hit.get("plan") is not None else None
    except (ValueError, KeyError, TypeError):
        return None
    if plan is None and not problems:
        return None
    return PlanFile(rel, text, plan, list(problems))


def _json_names(folder: Path) -> set[str] | None:
    """The ``*.json`` names in ``folder`` (empty when it is missing); None when it cannot be listed."""
    try:
        with os.scandir(folder) as found:
            return {e.name for e in found if e.name.endswith(".json")}
    except FileNotFoundError:
        return set()
    except OSError:
        return None


def _same_evidence(root: Path, picked: Picked, now: Now) -> bool:
    """Does the working tree hold exactly REF's evidence: the same store files, the same result files with REF's
    blob ids?"""
    if _json_names(root / EVIDENCE_DIR) != set(picked.evidence):
        return False
    results = _json_names(root / RESULTS_DIR)
    if results is None or {_RESULTS + n for n in results} != set(picked.results):
        return False
    tree = now.tree().files
    return all(tree.get(rel) == oid for rel, oid in picked.results.items())


def _indexed(
    root: Path,
    picked: Picked,
    plans: list[Plan],
    now: Now,
    cache: Cache,
    clock: Clock,
    files: Callable[[], FileIndex],
    outside: Callable[[str], str | None],
) -> dict[str, PhaseStatus] | None:
    """REF's statuses from the status index, when REF's evidence is the working tree's and the index answers
    every question REF's plans ask; None otherwise. ``outside``: :func:`outside_at`."""
    from tracker.store import statusindex

    if not _same_evidence(root, picked, now):
        return None
    key, _ = statusindex.listing(root)
    kept = statusindex.read_tables(cache, key, clock)
    if kept is None:
        return None
    evidence: Evidence = statusindex.Indexed(kept)
    try:
        return evaluate(plans, evidence, files, outside)
    except statusindex.Miss:
        return None


def _linked(picked: Picked, entries: Mapping[str, TreeEntry]) -> bool:
    """Is any of REF's store or result files a symlink in REF's tree?"""
    paths = [_STORE + n for n in picked.evidence] + list(picked.results)
    return any(entries[p].mode == LINK_MODE for p in paths if p in entries)


def _revision_indexed(
    root: Path,
    picked: Picked,
    plans: list[Plan],
    store: Callable[[], Store],
    bench: Callable[[], BenchEvaluator],
    cache: Cache,
    clock: Clock,
    files: Callable[[], FileIndex],
    outside: Callable[[str], str | None],
) -> dict[str, PhaseStatus]:
    """REF's statuses through the index of REF's own evidence (module docstring): from the cache when it answers
    every question, else judged on REF's store and handed to the cache (unless a file was refused for a time in
    the future, as ``status`` keeps none then, or REF's store holds a file that cannot be used now)."""
    from tracker.store import statusindex

    # REF's blob ids say what REF held; the working tree's listing (every store and result file and running slot,
    # by stat signature, as the status index keys them) says what was read from disk for it: a store file edited
    # where git diff cannot see it (skip-worktree) and put back, a running slot moved, a result file gone to REF's
    # blob, each is another key (adversarial round 11).
    listing, settled = statusindex.listing(root)
    key = cache_key(
        REVISION_INDEX,
        listing,
        code_identity(),
        library_key(*PARSE_LIBRARIES),
        os.path.realpath(root),
        *sorted(f"{_STORE}{n}\0{oid}" for n, oid in picked.evidence.items()),
        *sorted(f"{rel}\0{oid}" for rel, oid in picked.results.items()),
    )
    kept = statusindex.read_tables(cache, key, clock, REVISION_INDEX)
    if kept is not None:
        try:
            return evaluate(plans, statusindex.Indexed(kept), files, outside)
        except statusindex.Miss:
            pass
    recording = statusindex.Recording(LiveEvidence(store(), bench))
    out = evaluate(plans, recording, files, outside)
    if settled and clock.soonest is None and not store().invalid:
        if kept is not None:
            recording.tables.keep(kept)
        statusindex.put_tables(cache, key, recording.tables.document(clock, store()), REVISION_INDEX)
    return out


def _store(
    root: Path, picked: Picked, now: Now, entries: Mapping[str, TreeEntry], clock: Clock, edited: set[str]
) -> Store:
    """REF's store: the working tree's store files by name, the ones gone or ``edited`` since from REF's blobs."""
    from tracker.store.evidence_schema import parse_document

    current = now.store()
    present = {f.removeprefix(_STORE) for f in store_files(current)} - edited
    missing = {n: oid for n, oid in picked.evidence.items() if n not in present}
    blobs = read_blobs(root, missing.values())
    gone: dict[str, tuple[str, dict[str, Any]] | str] = {}
    for name, oid in missing.items():
        try:
            gone[name] = parse_document(blobs[oid], clock)
        except ValueError as err:
            gone[name] = str(err)
    return store_at(current, picked.evidence.keys() - edited, gone)


def _copies(picked: Picked, now: Now, store: Callable[[], Store], edited: set[str]) -> tuple[list[str], set[str]]:
    """(REF's store's result copies, the working tree's store files that are REF's as it held them). Without reading
    a store when the command knows what the working tree's store lists (:attr:`Now.listed`) and REF's store files
    are all there, none edited: REF's store is then those files (:func:`store_at`), its copies those of them that
    are copies now. Otherwise from REF's store (``store``)."""
    listed = now.listed() if now.listed is not None and not edited else None
    if listed is not None and {_STORE + n for n in picked.evidence} <= set(listed.listed):
        keep = {_STORE + n for n in picked.evidence}
        return [rel for rel in listed.copies if rel in keep], set(listed.listed)
    return [rel for rel, _ in store().bench], set(store_files(now.store())) - {_STORE + n for n in edited}


def _bench(
    root: Path,
    picked: Picked,
    copies: list[str],
    on_disk: set[str],
    now: Now,
    entries: Mapping[str, TreeEntry],
    clock: Clock,
    cache: Overlay,
) -> BenchEvaluator:
    """REF's result files (its store's ``copies`` and its ``bench/results/``), evaluated: read from disk, with every
    cache, when the working tree has them unchanged (``on_disk``: the store files that are REF's); otherwise the
    changed or gone ones from REF's blobs."""
    tree = now.tree().files
    disk = [rel for rel in copies if rel in on_disk] + [r for r, oid in picked.results.items() if tree.get(r) == oid]
    blob = {rel: entries[rel].id for rel in [*copies, *picked.results] if rel not in disk and rel in entries}
    if not blob:
        return Evaluator(RepoResults(root, sorted(root / rel for rel in disk), clock, cache))
    from tracker.store.result_files import load_result, load_results

    good, bad = load_results(sorted(root / rel for rel in disk), cache, root, clock)
    data = read_blobs(root, blob.values())
    for rel, oid in sorted(blob.items()):
        try:
            good.append(load_result(root / rel, cache, data=data[oid], clock=clock))
        except ResultFileError as err:
            bad.append(err)
    unique: dict[str, ResultRun] = {}
    for run in good:
        unique.setdefault(run.sha256, run._replace(path=Path(run.path).relative_to(root).as_posix()))
    runs = sorted(unique.values(), key=lambda r: (r.time, r.path))
    errors = [ResultFileError(Path(e.path).relative_to(root).as_posix(), e.reason, e.lasting) for e in bad]
    evaluator = GivenResults(runs, errors)
    evaluator.bounds.update(cached_bounds(cache))
    return evaluator


class GivenResults(Evaluator):
    """An evaluator over result runs read here, with the files that were rejected: while there is one, every bench
    gate is unmet (a rejected file may be the newest run), as over the working tree's files."""

    def __init__(self, runs: Sequence[ResultRun], errors: list[ResultFileError]) -> None:
        super().__init__(runs)
        self._rejected = errors

    @property
    def errors(self) -> list[ResultFileError]:
        return self._rejected


def statuses_at(root: Path, ref: str, clock: Clock | None = None) -> AtRevision:
    """The plans and statuses at ``ref`` on their own (no command around them: the repository's cache is read,
    nothing is kept)."""
    from tracker.base.fingerprint import tree_file_ids
    from tracker.plans.load import load_files
    from tracker.store.evidence import load

    cache = Cache(root)
    clock = clock or Clock()
    unreadable: list[str] = []
    files = load_files(root, unreadable=unreadable, cache=cache)
    stores: list[Store] = []
    trees: list[FileIndex] = []

    def store() -> Store:
        if not stores:
            stores.append(load(root, strict=False, clock=clock, results=False, cache=cache))
        return stores[0]

    def tree() -> FileIndex:
        if not trees:
            trees.append(FileIndex(tree_file_ids(root)))
        return trees[0]

    return at_revision(root, ref, Now(files, store, tree), cache, clock)
