"""Per-node-id history over the complete test runs of the evidence store, newest first (:class:`RunIndex`): the
tables every test-gate question reads, and whether a run was a run of a gate alone."""

from __future__ import annotations

import bisect
from typing import Any, Self

from tracker.base.selection import marker_matches, normalize_arg, selects
from tracker.core.model import Store, TestGate, TestRun
from tracker.core.run_facts import FAILURES, altered, extra_options, missing_options, narrowed, prefixed, worst_first


class RunIndex:
    """Per-nodeid history over the complete runs, newest first."""

    __test__ = False

    def __init__(self, store: Store) -> None:
        self.runs = list(reversed(store.runs))
        self.history: dict[str, list[tuple[TestRun, dict[str, Any]]]] = {}
        # Per run (by identity: hand-built stores may repeat a name): records sorted by node id (prefix queries by
        # bisect) and file-level records.
        self.sorted: dict[int, tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]] = {}
        # Per node id, the number of runs older than each of its history entries (the run's position in the store).
        self.ranks: dict[str, list[int]] = {}
        self._limit = len(self.runs)  # runs at positions from here on are not seen (:meth:`before`)
        self.failed: set[str] = set()  # node ids some run recorded failing (TestIndex._standing_failure)
        self._alone_memo: dict[tuple[Any, ...], bool] = {}  # (run, gate): :meth:`alone`
        for position, run in zip(range(len(self.runs) - 1, -1, -1), self.runs, strict=False):
            # A run that lists a test twice (a JUnit XML file with a testcase for its call and one for its teardown
            # error, shards merged into one file) says the worst of them: a failure first, then another outcome of
            # a test that ran, whatever the file's order (the first record of a node id in a run is its outcome).
            recs = sorted(run.tests, key=lambda r: (r["nodeid"], worst_first(r["outcome"])))
            self.sorted[id(run)] = ([r["nodeid"] for r in recs], recs, [r for r in recs if "::" not in r["nodeid"]])
            for rec in recs:
                self.history.setdefault(rec["nodeid"], []).append((run, rec))
                self.ranks.setdefault(rec["nodeid"], []).append(position)
                if rec["outcome"] in FAILURES:
                    self.failed.add(rec["nodeid"])

        # Every node id any run recorded, sorted (prefix queries by bisect), and those of file-level records: the
        # tests a gate once had that its newest run of all of it did not collect are found here (keep_unseen).
        self.ids = sorted(self.history)
        self.file_ids = [n for n in self.ids if "::" not in n]
        self.positions = {id(run): len(self.runs) - 1 - i for i, run in enumerate(self.runs)}  # runs older than it

    def before(self, count: int) -> Self:
        """The index of the store's oldest ``count`` runs, as ``TestIndex(Store(runs=store.runs[:count]))`` would
        build it, sharing this one's tables: ``tracker.core.history.was_done`` replays every prefix of the store, and
        building each afresh made that quadratic in the history."""
        view = object.__new__(type(self))
        view.runs = self.runs[len(self.runs) - count :]
        view.sorted, view.history, view.ranks, view._limit = self.sorted, self.history, self.ranks, count
        view.ids, view.file_ids, view.positions = self.ids, self.file_ids, self.positions
        view.failed, view._alone_memo = self.failed, self._alone_memo
        return view

    def tests_of(self, nodeid: str) -> list[tuple[TestRun, dict[str, Any]]]:
        """The node id's (run, record) pairs, newest first, of the runs this index sees."""
        hist = self.history.get(nodeid, [])
        ranks = self.ranks.get(nodeid, [])
        skip = 0
        while skip < len(ranks) and ranks[skip] >= self._limit:  # newest first: runs this view does not see lead
            skip += 1
        return hist[skip:] if skip else hist

    def touches(self, run: TestRun, arg: str) -> bool:
        """Does ``run`` hold a record the test argument selects (a run that does not cannot change its verdict)?"""
        return bool(self.matching(run, arg))

    def matching(self, run: TestRun, arg: str) -> list[dict[str, Any]]:
        """The records of ``run`` the test argument selects."""
        ids, recs, file_level = self.sorted[id(run)]
        # Every node id the argument selects starts with the normalized argument itself.
        prefix = normalize_arg(arg)
        prefix = "" if prefix == "." else prefix  # the whole tree
        out = [r for r in file_level if selects(arg, r["nodeid"]) and not r["nodeid"].startswith(prefix)]
        for i in range(bisect.bisect_left(ids, prefix), len(ids)):
            if not ids[i].startswith(prefix):
                break
            if selects(arg, ids[i]):
                out.append(recs[i])
        return out

    def collected(self, run: TestRun, file: str) -> bool:
        """Did ``run`` record a test of ``file``?"""
        return next(prefixed(self.sorted[id(run)][0], file + "::"), None) is not None

    def alone(self, run: TestRun, gate: TestGate) -> bool:
        """Was ``run`` a run of the gate alone, as ``pytest GATE`` (with its options) would run it: its one argument
        the gate's path (verify names a node id's file and deselects the rest of it), nothing narrowed or altered
        (:func:`altered`: a start elsewhere than the rootdir too), no xdist worker, every test it ran selected by the
        gate and none of the gate's deselected?"""
        key = (id(run), gate.test, gate.marker, gate.options)
        hit = self._alone_memo.get(key)
        if hit is not None:
            return hit
        args = run.provenance.get("args")
        want = normalize_arg(gate.test)
        ok = (
            isinstance(args, list)
            and len(args) == 1
            and normalize_arg(str(args[0])) in (want, want.split("::", 1)[0])
            and narrowed(run) is None
            and altered(run) is None
            and missing_options(run, gate) is None
            and not extra_options(run, gate)
        )
        if ok:
            for rec in run.tests:
                if "worker" in rec:
                    ok = False
                elif rec["outcome"] == "deselected":
                    if selects(gate.test, rec["nodeid"]) and marker_matches(gate.marker, rec.get("markers", [])):
                        ok = False  # -k, --deselect: a test of the gate left out
                elif "::" in rec["nodeid"] and not (
                    selects(gate.test, rec["nodeid"]) and marker_matches(gate.marker, rec.get("markers") or [])
                ):
                    ok = False  # a test outside the gate (or its marker) ran
                if not ok:
                    break
        self._alone_memo[key] = ok
        return ok
