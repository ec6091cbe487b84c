"""Verdicts of test gates and manual gates from the evidence store (pure functions), and the one dispatch of a
gate to the rules of its kind (:func:`gate_verdict`).

A test's outcome for a gate comes from the newest evidence where it actually ran (passed,
failed, error, xfailed, xpassed); a skip or deselection never meets nor un-meets a gate that
earlier evidence decided. The set of tests a gate covers is every test selected by its pytest
argument in the newest run that collected all of it (``tracker verify`` ran this gate, or the
run's recorded arguments cover the gate's), plus those any newer run collected: a run of part of
a directory or file never shrinks the set. Without such a run (none not narrowed), a file, directory or
marker gate is unmet whatever passed ("which tests ... selects is unknown"): a run of part of it, or an ingested
reportlog or JUnit run (no arguments recorded), only adds outcomes; a node-id gate is met by any run's record. A file
level record (a collection error) stops counting once a newer run collected tests under it.

A gate with a ``marker`` needs to know each test's markers. A record without marker information (a run
ingested from JUnit XML, which has none, or a record with no ``markers`` key) cannot say whether ``-m``
selects it: for such a gate it only contributes the outcome of a test that a run with markers selected,
never adds or drops a test, and its run is never "the newest run that collected all of it". A file level
record (a collection error) counts for a marker gate whatever its markers, as pytest reports a file it
could not collect whatever ``-m`` says, and only a run with markers retires it: a blind run that collected
tests under it cannot say whether ``-m`` selects them. A test that no run with markers ever recorded and whose
newest outcome, in a blind run newer than the gate's whole run, is a failure keeps the gate unmet ("cannot tell
whether -m selects it"): never met on the other tests' passes.

JUnit XML writes a non-strict xpass as a plain pass: its "passed" never counts as a pass of a test that a run
which can tell them apart recorded as ``xfailed`` or ``xpassed``, or with an ``xfail`` marker.

A gate with ``options`` (``--doctest-modules``, ...) has its tests named only by a run that had them
(``provenance.options``): a run without them, which collected less, is treated as a narrowed run (its outcomes
count, what it collected is added, and alone it leaves which tests the gate has unknown).

A pass from a run that names the test's file in ``provenance.outside`` (the file, or a ``conftest.py`` above it,
resolved outside the repository through a symlink: :mod:`tracker.base.gate_paths`) meets no gate: the gate is unmet and
says which file resolves where.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator
from typing import Any

from tracker.base.selection import conftests_of, marker_matches, normalize_arg, plugin_names, selects
from tracker.core.model import (
    RAN,
    BenchGate,
    EvidenceSource,
    Gate,
    GateVerdict,
    ManualGate,
    Phase,
    Store,
    TestGate,
    TestRun,
    gate_hash,
)

FAILURES = ("failed", "error", "xpassed")  # outcomes that are a real failure of a test that ran (``failed``)


def _one_test(gate: TestGate, recs: list[dict[str, Any]]) -> bool:
    """Does the gate name one test, the one its records are of? A node id may name a class or a parametrized
    function (``t.py::TestParser``, ``t.py::test_parse``): its tests are known only from a run of all of it, as a
    file's are; a run of one of them says nothing of the others (adv round 5)."""
    if "::" not in gate.test:
        return False
    named = normalize_arg(gate.test)
    return all(r["nodeid"] == named for r in recs)


def source_of(run: TestRun) -> EvidenceSource:
    """Where a verdict drawn from ``run`` came from: the machine is its host with its GPU, else its CPU model, as
    the run recorded them (``vm (NVIDIA H200)`` is not ``vm (AMD EPYC 7B13)``)."""
    commit = run.provenance.get("commit")
    return EvidenceSource(run.file, machine_of(run.provenance), commit, run.time)


def machine_of(provenance: dict[str, Any]) -> str:
    """``host (GPU or CPU model)``, or the host alone when the run recorded neither (older evidence)."""
    host = str(provenance.get("host", "?"))
    model = provenance.get("gpu") or provenance.get("cpu")
    return f"{host} ({model})" if isinstance(model, str) and model.strip() else host


class TestIndex:
    """Per-nodeid history over the complete runs, newest first."""

    __test__ = False

    def __init__(self, store: Store) -> None:
        self.runs = list(reversed(store.runs))
        self.history: dict[str, list[tuple[TestRun, dict[str, Any]]]] = {}
        # Per run (by identity: hand-built stores may repeat a name): records sorted by node id (prefix queries by
        # bisect) and file-level records.
        self.sorted: dict[int, tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]] = {}
        # Per node id, the number of runs older than each of its history entries (the run's position in the store).
        self._ranks: dict[str, list[int]] = {}
        self._limit = len(self.runs)  # runs at positions from here on are not seen (:meth:`before`)
        self._failed: set[str] = set()  # node ids some run recorded failing (:meth:`_standing_failure`)
        self._alone_memo: dict[tuple[Any, ...], bool] = {}  # (run, gate): :meth:`_alone`
        for position, run in zip(range(len(self.runs) - 1, -1, -1), self.runs, strict=False):
            # A run that lists a test twice (a JUnit XML file with a testcase for its call and one for its teardown
            # error, shards merged into one file) says the worst of them: a failure first, then another outcome of
            # a test that ran, whatever the file's order (the first record of a node id in a run is its outcome).
            recs = sorted(run.tests, key=lambda r: (r["nodeid"], _worst_first(r["outcome"])))
            self.sorted[id(run)] = ([r["nodeid"] for r in recs], recs, [r for r in recs if "::" not in r["nodeid"]])
            for rec in recs:
                self.history.setdefault(rec["nodeid"], []).append((run, rec))
                self._ranks.setdefault(rec["nodeid"], []).append(position)
                if rec["outcome"] in FAILURES:
                    self._failed.add(rec["nodeid"])

        # Every node id any run recorded, sorted (prefix queries by bisect), and those of file-level records: the
        # tests a gate once had that its newest run of all of it did not collect are found here (:meth:`_keep_unseen`).
        self._ids = sorted(self.history)
        self._file_ids = [n for n in self._ids if "::" not in n]
        self._position = {id(run): len(self.runs) - 1 - i for i, run in enumerate(self.runs)}  # runs older than it

    def before(self, count: int) -> TestIndex:
        """The index of the store's oldest ``count`` runs, as ``TestIndex(Store(runs=store.runs[:count]))`` would
        build it, sharing this one's tables: ``tracker.core.history.was_done`` replays every prefix of the store, and
        building each afresh made that quadratic in the history."""
        view = object.__new__(TestIndex)
        view.runs = self.runs[len(self.runs) - count :]
        view.sorted, view.history, view._ranks, view._limit = self.sorted, self.history, self._ranks, count
        view._ids, view._file_ids, view._position = self._ids, self._file_ids, self._position
        view._failed, view._alone_memo = self._failed, self._alone_memo
        return view

    def tests_of(self, nodeid: str) -> list[tuple[TestRun, dict[str, Any]]]:
        """The node id's (run, record) pairs, newest first, of the runs this index sees."""
        hist = self.history.get(nodeid, [])
        ranks = self._ranks.get(nodeid, [])
        skip = 0
        while skip < len(ranks) and ranks[skip] >= self._limit:  # newest first: runs this view does not see lead
            skip += 1
        return hist[skip:] if skip else hist

    def touches(self, run: TestRun, arg: str) -> bool:
        """Does ``run`` hold a record the test argument selects (a run that does not cannot change its verdict)?"""
        return bool(self._matching(run, arg))

    def _matching(self, run: TestRun, arg: str) -> list[dict[str, Any]]:
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

    def selection(self, key: str, gate: TestGate) -> tuple[TestRun | None, list[dict[str, Any]], TestRun | None]:
        """(the newest run that collected under the gate, the newest record of each test it covers, the newest
        run whose records under the gate carry no marker information when the gate has a marker)."""
        newest, found, blind, _, _ = self._select(key, gate)
        return newest, found, blind

    def _select(
        self, key: str, gate: TestGate
    ) -> tuple[TestRun | None, list[dict[str, Any]], TestRun | None, list[str], TestRun | None]:
        """:meth:`selection`, the node ids of tests under a marker gate that blind runs newer than its whole
        run recorded (whether ``-m`` selects them is known only where a run with markers recorded them), and, when no
        run named the gate's tests, the newest that would have but for options that narrowed its collection."""
        found: dict[str, dict[str, Any]] = {}
        by: dict[str, TestRun] = {}  # the run each record in ``found`` came from
        self.named_by: TestRun | None = None
        later: list[str] = []  # node ids of newer runs a marker gate cannot use (nor retire collection errors with)
        newest: TestRun | None = None
        blind: TestRun | None = None
        cut: TestRun | None = None  # the newest run of all of the gate whose collection an option narrowed (none found)
        for run in self.runs:  # newest first
            recs = self._matching(run, gate.test)
            claims = names(key, gate, run)
            if (claims or recs) and narrowed(run) is not None:
                # Its options may have kept some of the gate's tests from being collected at all: it never names the
                # gate's tests (its outcomes still count, and what it collected is added), and while no other run
                # named them, which tests the gate has is unknown (its recorded arguments are null: it may have
                # been a run of all of the gate).
                cut, claims = cut or run, False
            elif claims and missing_options(run, gate) is not None:
                # A run without the gate's options (a plain ``pytest`` without --doctest-modules) did not collect
                # all it has: as a narrowed run, it never names the gate's tests.
                cut, claims = cut or run, False
            if gate.marker is not None:
                unknown = [r["nodeid"] for r in recs if "::" in r["nodeid"] and not has_markers(run, r)]
                if unknown:
                    blind = blind or run
                    later += unknown
                    recs = [r for r in recs if "::" not in r["nodeid"] or has_markers(run, r)]
                judged = not unknown and not from_junit(run)
                whole = judged and claims
            else:
                whole = claims
            if whole:
                cut = None  # an older run of all of it names the tests; the newer runs add theirs
            if newest is None and (recs or whole):
                newest = run
            # A collection error stops counting once a newer run collected tests under it, one with markers for a
            # marker gate (a blind run collected the file, but what -m selects of it is unknown), on other code or in
            # a run of the gate alone: a file that fails to collect only beside another ("import file mismatch" of
            # two test_util.py) collects in a run of itself (round 13, A5). Another file-level record (a file
            # skipped at collection) stops counting once any newer run collected a test under it.
            seen = list(found)
            for rec in recs:
                nodeid = rec["nodeid"]
                if nodeid in found:
                    continue
                if "::" not in nodeid:
                    under = [s for s in seen if selects(nodeid, s)]
                    if under and (
                        rec["outcome"] not in FAILURES or any(self._collects_anew(by[s], run, gate) for s in under)
                    ):
                        continue
                found[nodeid] = rec
                by[nodeid] = run
            if whole:
                self._keep_unseen(key, gate, run, found)
                self.named_by = run  # the run that said which tests the gate has (its staleness counts too)
                break
        covered = [
            r for r in found.values() if "::" not in r["nodeid"] or marker_matches(gate.marker, r.get("markers", []))
        ]
        return newest, covered, blind, list(dict.fromkeys(later)), cut

    def _collects_anew(self, newer: TestRun, older: TestRun, gate: TestGate) -> bool:
        """Does ``newer``, which collected a test of a file ``older`` failed to collect, retire that error: it ran on
        other code (the error was older code's), or it was a run of the gate alone (:meth:`_alone`)?"""
        if newer.files and older.files and newer.files != older.files:
            return True
        return self._alone(newer, gate)

    def _standing_failure(self, gate: TestGate, nodeid: str, hist: list[tuple[TestRun, dict[str, Any]]]) -> int | None:
        """Where in ``hist`` (a test's records, newest first) a failure stands though newer runs passed the test, or
        None. A failure, in whatever run it came, stands until a newer run of the gate alone passes the test
        (:meth:`_alone`: ``pytest GATE``, as the gate says) without skipping a test of the gate that ran before it in
        the failing run. A test's outcome may depend on the tests run before it, in its session or on another xdist
        worker, and on the modules its session imported: passes under ``-k`` or a ``--deselect``, of its node id
        alone, in another order, beside other gates' tests, under xdist or in an ingested run proved nothing
        against a failure (adversarial rounds 10 to 12). Every failure is judged, not only the newest."""
        if nodeid not in self._failed:  # most tests never failed: their whole history is not read
            return None
        passes: list[tuple[TestRun, dict[str, Any]]] = []
        memo: dict[tuple[int, int], bool] = {}
        for i, (run, rec) in enumerate(hist):
            if rec.get("outcome") in FAILURES:
                if not passes:
                    return None  # the newest outcome that ran is this failure: it stands as it is
                if not any(self._retires(p, (run, rec), gate, memo) for p in passes):
                    return i
            elif rec.get("outcome") in RAN:
                passes.append((run, rec))
        return None

    def _retires(
        self,
        passing: tuple[TestRun, dict[str, Any]],
        failing: tuple[TestRun, dict[str, Any]],
        gate: TestGate,
        memo: dict[tuple[int, int], bool],
    ) -> bool:
        """Did the passing run run on other code than the failing run (their trees' file ids differ: the failure is
        of older code, and the newest outcome counts, as it always did), or is it a run of the gate alone
        (:meth:`_alone`) that ran, before the test, every test of the gate the failing run ran before the failure (by
        the records' ``order``; every one it ran where it recorded none)? One that skipped such a test, or ran it
        after, passed in another state."""
        (prun, prec), (frun, frec) = passing, failing
        key = (id(prun), id(frun))
        if key in memo:
            return memo[key]
        if prun.files and frun.files and prun.files != frun.files:
            memo[key] = True  # a pass on other code than the failure's: the newest outcome counts, as it always did
            return True
        if not self._alone(prun, gate):
            memo[key] = False
            return False
        at, mine = frec.get("order"), prec.get("order")
        recorded = {r["nodeid"]: r for r in self._matching(prun, gate.test)}
        ok = True
        for r in self._matching(frun, gate.test):
            if "::" not in r["nodeid"] or r["nodeid"] == frec["nodeid"] or r["outcome"] not in RAN:
                continue
            if not marker_matches(gate.marker, r.get("markers", [])):
                continue
            if isinstance(at, int) and isinstance(r.get("order"), int) and r["order"] > at:
                continue  # it ran after the failure
            there = recorded.get(r["nodeid"])
            if there is None:
                ok = False  # the same code, yet not collected: hidden (an environment variable), not gone (F5)
                break
            order = there.get("order")
            if there["outcome"] not in RAN or (isinstance(mine, int) and isinstance(order, int) and order > mine):
                ok = False  # skipped, or run after the test (--ff in an ini's addopts, a hook's reordering)
                break
        memo[key] = ok
        return ok

    def _alone(self, run: TestRun, gate: TestGate) -> bool:
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
            and not _extra_options(run, gate)
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

    def _keep_unseen(self, key: str, gate: TestGate, whole: TestRun, found: dict[str, dict[str, Any]]) -> None:
        """Add to ``found`` the newest record, in a run older than ``whole`` (the newest run of all of the gate), of
        each test under the gate that ``whole`` did not collect but could not prove gone (:func:`_unseen`): a run
        proves a test gone only if it could have seen it. Each record added is a copy whose ``kept`` says why; a file
        skipped at collection stops counting as a test once a test under it is found."""
        position = self._position[id(whole)]  # runs older than it have smaller positions
        skips = _collection_skips(self.sorted[id(whole)][2])
        prefix = normalize_arg(gate.test)
        prefix = "" if prefix == "." else prefix
        candidates = [n for n in self._file_ids if selects(gate.test, n) and not n.startswith(prefix)]
        candidates += [n for n in _prefixed(self._ids, prefix) if n not in found and selects(gate.test, n)]
        answers: dict[tuple[str, int, bool, int], str | None] = {}  # (file, older run, doctest?, judge): per file
        seers: dict[str, TestRun | None] = {}  # by file skipped at collection: the newest run of all that was not
        for nodeid in candidates:
            if nodeid in found:
                continue
            older = next(
                (
                    (rank, run, rec)
                    for rank, (run, rec) in zip(self._ranks[nodeid], self.history[nodeid], strict=True)
                    if rank < position
                    and (gate.marker is None or "::" not in nodeid or has_markers(run, rec))  # a blind one adds none
                ),
                None,
            )
            if older is None:
                continue
            rank, run, rec = older
            if "::" in nodeid and not any(
                x["outcome"] in RAN for r, x in self.tests_of(nodeid) if self._position[id(r)] < position
            ):
                continue  # it never ran (deselected, collected but not run): no outcome of it to keep
            file = nodeid.split("::", 1)[0]
            skip = next((s for s in skips if selects(s["nodeid"], nodeid)), None)
            judge: TestRun | None = whole
            if skip is not None:  # it could not see the file: the newest run of all of the gate that could decides
                if file not in seers:
                    seers[file] = self._seer(key, gate, whole, nodeid)
                judge = seers[file]
            why: str | None = None
            if judge is not None and self._position[id(judge)] > rank:
                # Judged against a run that recorded it on the file's bytes the judge ran (adv round 4: a debug edit
                # or a checkout in between made an older run's bytes differ): none such, its file changed.
                now = judge.files.get(file)
                basis = next(
                    (r for rk, (r, _) in zip(self._ranks[nodeid], self.history[nodeid], strict=True)
                     if rk < self._position[id(judge)] and now is not None and r.files.get(file) == now),
                    run,
                )  # fmt: skip
                memo = (file, id(basis), _doctest_id(nodeid), id(judge))
                if memo not in answers:
                    answers[memo] = _unseen(judge, self._collected(judge, file), basis, nodeid)
                why = answers[memo]
                if (
                    why is not None
                    and "[" in nodeid
                    and (self._renamed(basis, judge, nodeid) or _long_parameter(basis, judge, nodeid))
                ):
                    why = None  # every id of its function renamed by a conftest edit or another pytest
                if why is None:
                    continue
            if skip is not None:
                said = printable(str(skip.get("reason") or ""))
                why = f"{printable(skip['nodeid'])} skipped at collection on {printable(host_of(whole))}: {said}"
            if why is not None and ("::" in nodeid or not any(selects(nodeid, s) for s in found)):
                found[nodeid] = {**rec, "kept": f"{printable(host_of(run))} ({why})"}
        skipped = [n for n, r in found.items() if "::" not in n and r["outcome"] == "skipped"]
        tests = {n.split("::", 1)[0] for n in found if "::" in n} if skipped else set()
        for nodeid in skipped:
            if any(f == nodeid or f.startswith(nodeid + "/") for f in tests):
                del found[nodeid]  # the tests other runs recorded under it stand for it

    def _seer(self, key: str, gate: TestGate, whole: TestRun, nodeid: str) -> TestRun | None:
        """The newest run of all of the gate older than ``whole`` whose collection did not skip the file of ``nodeid``
        (``importorskip`` on another machine), or None."""
        start = len(self.runs) - 1 - self._position[id(whole)]  # its place, newest first
        for run in self.runs[start + 1 :]:
            if not says_all(key, gate, run) or (gate.marker is not None and from_junit(run)):
                continue
            if not any(selects(s["nodeid"], nodeid) for s in _collection_skips(self.sorted[id(run)][2])):
                return run
        return None

    def _renamed(self, older: TestRun, judge: TestRun, nodeid: str) -> bool:
        """Were the parameters of ``nodeid``'s function renamed: ``judge`` collected it under as many ids as ``older``
        recorded or more (one hidden, there would be fewer), and what names them changed between the two runs: a
        ``conftest.py`` on the way (``pytest_make_parametrize_id``, ``pytest_generate_tests``) or the pytest version
        (9.2 names long parameters otherwise than 9.1), both known? New ids alone are no proof: an environment
        variable may pick the parameters (``['cuda'] if gpu else ['cpu']``)."""
        base = nodeid.split("[", 1)[0] + "["
        now = set(_prefixed(self.sorted[id(judge)][0], base))
        if not now or len(now) < len(set(_prefixed(self.sorted[id(older)][0], base))):
            return False
        file = nodeid.split("::", 1)[0]
        then_pytest, now_pytest = older.provenance.get("pytest"), judge.provenance.get("pytest")
        if then_pytest and now_pytest and then_pytest != now_pytest:
            return True
        return bool(older.files) and _conftest_changed(older, judge, file)

    def _collected(self, run: TestRun, file: str) -> bool:
        """Did ``run`` record a test of ``file``?"""
        return next(_prefixed(self.sorted[id(run)][0], file + "::"), None) is not None

    def _named(self, key: str, gate: TestGate) -> bool:
        """Did a run this index sees collect all of the gate, its collection not narrowed (verify ran the gate, or
        its recorded arguments cover it)? Without one, which tests a file, directory or marker gate has is unknown:
        a run of part of it, or an ingested reportlog or JUnit run (they record no arguments, so an ``--ignore`` in
        it cannot be seen), only adds outcomes, and the tests it never collected may be failing (adv F3)."""
        return any(
            says_all(key, gate, run) and (gate.marker is None or not from_junit(run))  # no markers: -m unknown
            for run in self.runs
        )

    def _apart(
        self, key: str, gate: TestGate, counted: list[dict[str, Any]], passes: dict[str, tuple[TestRun, str]]
    ) -> tuple[str | None, TestRun | None]:
        """(why the gate's tests counted as passing do not show that ``pytest GATE`` passes, or None; the run of all
        of them together the verdict stands on, or None). ``counted``: the records of the tests counted as passing;
        ``passes``: the run each one's counted pass (or allowed xfail) came from, and which it was.

        A test may pass alone and fail after another (shared state), so they must have passed together, in the newest
        run of all of the gate (it names the gate's path, nothing narrowed: not node ids in another order, not a
        ``-k``, not an ingested run, which records no session, no option the gate lacks) that collected them all.
        There each passed, in one process (one xdist worker or none), or xfailed as allowed where its counted outcome
        is that xfail, or was skipped (at collection too) on another machine than its pass (:func:`_other_machine`):
        a GPU test a CPU run skips, passed by the GPU machine's run. A skip on the machine of its pass is no such case
        (an environment variable hid it: round 14, F3), nor is a test that run did not collect at all (F2).
        Adversarial rounds 13 (A1), 14 (F1, F2, F3, F4, F7) and 15 (A1, A2, A3, A9)."""
        tests = [r["nodeid"] for r in counted if "::" in r["nodeid"]]
        if len(tests) < 2:
            return None, None
        for run in self.runs:  # newest first
            if (
                not says_all(key, gate, run)
                or _extra_options(run, gate)
                or (gate.marker is not None and from_junit(run))
            ):
                continue  # not a run of all of the gate as it says (--doctest-modules added tests: round 15, A1)
            ids, records, file_level = self.sorted[id(run)]
            got: list[tuple[str, dict[str, Any] | None]] = []
            for nodeid in tests:
                i = bisect.bisect_left(ids, nodeid)
                rec = records[i] if i < len(ids) and ids[i] == nodeid else None  # the first is the worst
                if rec is None and any(f["outcome"] == "skipped" and selects(f["nodeid"], nodeid) for f in file_level):
                    got.append((nodeid, None))  # its file skipped at collection
                    continue
                if rec is None or (rec["outcome"] not in RAN and rec["outcome"] != "skipped"):
                    break
                got.append((nodeid, rec))
            else:
                workers = {str(rec.get("worker")) for _, rec in got if rec is not None and rec["outcome"] in RAN}
                for nodeid, rec in got:
                    source, outcome = passes[nodeid]
                    if rec is not None and rec["outcome"] == outcome and self._passed_in(gate, run, rec):
                        continue  # passed there as it counts (an allowed xfail only where it counts one: A9)
                    if (rec is None or rec["outcome"] == "skipped") and _other_machine(source, run):
                        continue  # this machine could not run it; one that could passed it
                    what = "skipped at collection" if rec is None else rec["outcome"]
                    why = (
                        f"{nodeid}: {what} in {run.file}, the newest run of all {len(tests)} of its tests together; "
                        f"a pass of part of it does not show that pytest {gate.test} passes"
                    )
                    return why, run
                if len(workers) > 1:
                    why = (
                        f"its {len(tests)} tests last ran together in {run.file}, split over {len(workers)} xdist "
                        f"workers: that does not show that pytest {gate.test} passes in one process"
                    )
                    return why, run
                return None, run
        why = (
            f"its {len(tests)} tests never passed together in a run of all of it: passes of parts of it do not show "
            f"that pytest {gate.test} passes (run it, or tracker verify)"
        )
        return why, None

    @staticmethod
    def _passed_in(gate: TestGate, run: TestRun, rec: dict[str, Any]) -> bool:
        """Did the test pass in ``run`` as its gate counts a pass: a pass of a run whose options changed no outcome,
        or an xfail the gate allows?"""
        outcome, reason = rec["outcome"], str(rec.get("reason") or "")
        if outcome == "passed":
            return altered(run) is None
        return outcome == "xfailed" and skip_allowed(gate.xfails_allowed, reason)

    def _unknown_failure(self, nodeids: list[str]) -> tuple[TestRun, dict[str, Any]] | None:
        """The first of ``nodeids`` that no run with markers ever recorded and whose newest outcome is a failure,
        as (run, record): whether the gate's ``-m`` selects it cannot be told, so it cannot be left out."""
        for nodeid in nodeids:
            hist = self.tests_of(nodeid)
            if any(has_markers(r, x) for r, x in hist):
                continue  # its markers are known: the gate's selection already decided about it
            ran = next(((r, x) for r, x in hist if x["outcome"] in RAN), None)
            if ran is not None and ran[1]["outcome"] in FAILURES:
                return ran
        return None

    def verdict(self, key: str, gate: TestGate) -> tuple[GateVerdict, bool]:
        """(verdict, was met at some time) for test gate ``key`` ("PLAN/PHASE#N").

        An invalid ``-m`` expression (plan validation refuses it; this guards the API) is an unmet gate
        whose reason says why, never an exception.
        """
        try:
            marker_matches(gate.marker, ())
        except ValueError as err:
            return GateVerdict(False, str(err)), False
        run, recs, blind, unknown, cut = self._select(key, gate)
        if run is None and blind is not None:
            why = f"-m {gate.marker!r} cannot be evaluated: the only runs of it record no markers (JUnit XML)"
            return GateVerdict(False, why, source_of(blind)), False
        if run is None and cut is not None and missing_options(cut, gate) is not None:
            return GateVerdict(False, _unknown_set(gate, cut), source_of(cut)), False
        if run is None:
            return GateVerdict(False, "no evidence: never run"), False
        if not recs:
            # Missing evidence, not a failure: nothing ran that could fail (README: "failed").
            what = f"-m {gate.marker!r} selects 0 tests" if gate.marker else "0 tests collected"
            return GateVerdict(False, f"{what} (an empty gate is unmet)", source_of(run)), False
        passed, first_bad, sources, ever, hidden = 0, None, [], True, None
        stood: TestRun | None = None  # a newer run that passed a test whose failure stands (:meth:`_standing_failure`)
        changed: TestRun | None = None  # a run with options that change outcomes, whose pass was not counted
        allowed = gate.skips_allowed if "::" not in gate.test else ()  # a gate naming one test allows no skip
        expected = 0  # tests whose newest outcome is a skip the gate allows (none of them ever ran)
        known = gate.xfails_allowed if "::" not in gate.test else ()  # a gate naming one test allows no xfail
        xfailed = 0  # tests whose newest outcome is an xfail the gate allows (a known failure, as pytest expects it)
        counted: list[dict[str, Any]] = []  # the records of the tests counted as passed or xfailed as allowed
        passes: dict[str, tuple[TestRun, str]] = {}  # the run and outcome each counted test's pass came from
        for rec in recs:
            hist = self.tests_of(rec["nodeid"])
            if xfail_known(hist):
                hidden = hidden or next((r for r, x in hist if x["outcome"] == "passed" and not tells_xpass(r)), None)
                hist = [(r, x) for r, x in hist if x["outcome"] != "passed" or tells_xpass(r)]
            if any(x["outcome"] == "passed" and altered(r, gate) for r, x in hist):  # its passes count for nothing
                changed = changed or next(r for r, x in hist if x["outcome"] == "passed" and altered(r, gate))
                hist = [(r, x) for r, x in hist if x["outcome"] != "passed" or not altered(r, gate)] or [
                    (changed, {"nodeid": rec["nodeid"], "outcome": "notrun", "reason": ""})
                ]
            standing = self._standing_failure(gate, rec["nodeid"], hist)
            if standing is not None:  # passed since only in runs other than one of the gate alone: the failure stands
                stood = stood or next((r for r, x in hist[:standing] if x["outcome"] in RAN), None)
                hist = hist[standing:]
            ran = next(((r, x) for r, x in hist if x["outcome"] in RAN), None)
            if ran is None and allowed:
                skip = next((x for _, x in hist if x["outcome"] == "skipped"), None)
                if skip is not None and skip_allowed(allowed, str(skip.get("reason") or "")):
                    expected += 1
                    continue
            if (
                ran is not None
                and ran[1]["outcome"] == "xfailed"
                and skip_allowed(known, str(ran[1].get("reason") or ""))
            ):
                xfailed += 1
                sources.append(ran[0])
                counted.append(rec)
                passes[rec["nodeid"]] = (ran[0], "xfailed")
                continue
            ever = ever and any(x["outcome"] == "passed" for _, x in hist)
            if ran is not None and ran[1]["outcome"] == "passed":
                elsewhere = outside_file(ran[0], rec["nodeid"])
                if elsewhere is not None:  # it ran code from outside the repository: its pass meets nothing
                    why = f"{elsewhere}: its tests are not the repository's (tracker lint)"
                    return GateVerdict(False, why, source_of(ran[0])), False
                passed += 1
                sources.append(ran[0])
                counted.append(rec)
                passes[rec["nodeid"]] = (ran[0], "passed")
                continue
            if first_bad is None or (
                ran is not None and ran[1]["outcome"] in FAILURES and first_bad[1]["outcome"] not in FAILURES
            ):
                # The first real failure names the gate's state (a skip listed before it must not hide it);
                # never ran: the newest skip says why (a later deselection or early stop says less).
                skipped = next(((r, x) for r, x in hist if x["outcome"] == "skipped"), None)
                newest = ran or skipped or (hist[0] if hist else (run, rec))
                first_bad = (newest[0], newest[1])
        as_allowed = (f", {expected} skipped as allowed" if expected else "") + (
            f", {xfailed} xfailed as allowed" if xfailed else ""
        )
        if first_bad is None and not passed:  # every test skipped as allowed: nothing showed the code works
            why = f"0 passed{as_allowed}: a gate needs at least one pass"
            return GateVerdict(False, why, source_of(run)), False
        if first_bad is None:
            newest_run = max(sources, key=lambda r: (r.time, r.file))
            blocked = self._unknown_failure(unknown)
            if blocked is None and cut is not None:  # every test it knows passed, but which tests it has is unknown
                return GateVerdict(False, _unknown_set(gate, cut), source_of(cut)), False
            if blocked is None and not _one_test(gate, recs) and not self._named(key, gate):
                why = (
                    f"which tests {gate.test} selects is unknown: no run collected all of it "
                    f"(run tracker verify or pytest {gate.test} --tracker-record)"
                )
                return GateVerdict(False, why, source_of(newest_run)), False
            apart, together = (
                (None, None)
                if blocked is not None or _one_test(gate, recs)
                else self._apart(key, gate, counted, passes)
            )
            if apart is not None:
                return GateVerdict(False, apart + _kept_note(recs), source_of(together or newest_run)), False
            if blocked is None:
                # Staleness is judged on every run a pass came from (a partial run on new code leaves the other
                # tests' passes on the old): the newest is the source, the others are named too. So is the run that
                # said which tests the gate has: a test added to its file since, which no run collected, could be
                # failing (adv round 6).
                named_by = {self.named_by.file} if self.named_by is not None and not _one_test(gate, recs) else set()
                named_by |= {together.file} if together is not None else set()  # its code is what passed together
                also = tuple(sorted(({r.file for r in sources} | named_by) - {newest_run.file}))
                return GateVerdict(
                    True, f"{passed} passed{as_allowed}{_kept_note(recs)}", source_of(newest_run), also=also
                ), True
            bad_run, bad = blocked
            why = (
                f"{bad['nodeid']}: {bad['outcome']} in a run that records no markers (JUnit XML?): cannot tell whether "
                f"-m {gate.marker!r} selects it (a run with markers says: tracker verify)"
            )
            return GateVerdict(False, why, source_of(bad_run), failed=True), ever
        bad_run, bad = first_bad
        outcome, reason = bad["outcome"], bad.get("reason") or ""
        detail = f"{outcome}: {reason}" if reason else outcome
        if outcome == "notrun":
            detail = "collected but not run"
        if outcome == "skipped" and allowed:
            detail += " (not in skips_allowed)"
        who = "" if bad["nodeid"] == normalize_arg(gate.test) else f"{bad['nodeid']}: "
        failing = len(recs) - passed - expected - xfailed
        text = f"{who}{detail}" + (f" ({failing} of {len(recs)} not passing)" if len(recs) > 1 else "")
        text += _kept_note(recs)
        if hidden is not None:
            text += f"; a newer pass in {hidden.file} is not counted: JUnit XML writes an xpass as a pass"
        if changed is not None:
            text += f"; a pass in {changed.file} is not counted: it ran with {printable(altered(changed, gate) or '')}"
        if stood is not None:
            text += f"; a pass since, in {stood.file}, was not a run of the gate alone (pytest {gate.test})"
        failed = outcome in FAILURES
        return GateVerdict(False, text, source_of(bad_run), failed=failed), ever


def _other_machine(passing: TestRun, skipping: TestRun) -> bool:
    """Did ``passing`` run on a machine of other means than ``skipping``: both recorded by the plugin (an ingested
    run's host is what ``ingest --host`` said: round 15, A3), their operating system, architecture, Python version
    or GPUs differ? Not their host name or CPU model alone: two CI runners or containers of one image differ in
    those, and a skip there is an environment's, not the machine's (round 16, F4; round 17, M1). The GPUs are the
    driver's list (``accelerator``): ``gpu`` is recorded only where the tests imported torch (round 15, A2); a run
    older than ``accelerator`` has only that."""

    def key(run: TestRun) -> tuple[str, ...] | None:
        prov = run.provenance
        if prov.get("ingested_from") or not isinstance(prov.get("host"), str):
            return None
        # The driver's GPU list (``accelerator``), None on a CPU machine; an older run has only torch's ``gpu``.
        gpu = prov["accelerator"] if "accelerator" in prov else prov.get("gpu")
        system = str(prov.get("platform", "")).split("-")
        python = ".".join(str(prov.get("python", "")).split(".")[:2])
        return system[0], system[-1], python, str(gpu)

    mine, theirs = key(passing), key(skipping)
    return mine is not None and theirs is not None and mine != theirs


def _unknown_set(gate: TestGate, cut: TestRun) -> str:
    """Why the tests ``gate`` has are unknown: the run ``cut`` ran it with its collection narrowed, or without the
    gate's options, and no run collected all of it as the gate says."""
    how = narrowed(cut)
    if how is not None:
        return (
            f"which tests {gate.test} selects is unknown: {cut.file} ran it with its collection narrowed by "
            f"{printable(how)}, and no run collected all of it without such options (tracker verify does)"
        )
    return (
        f"which tests {gate.test} selects is unknown: {cut.file} ran it without {missing_options(cut, gate)}, and no "
        "run collected all of it with them (tracker verify does)"
    )


def host_of(run: TestRun) -> str:
    """The machine a run was recorded on (``provenance.host``)."""
    return str(run.provenance.get("host", "?"))


def _collection_skips(file_level: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of a run's file-level records, those of a file or directory skipped at collection."""
    return [r for r in file_level if r["outcome"] == "skipped"]


def _unseen(whole: TestRun, collected: bool, older: TestRun, nodeid: str) -> str | None:
    """Why ``whole`` (the newest run of all of a gate), which did not collect test ``nodeid`` that ``older`` recorded,
    cannot prove it gone (so it stands), or None when it can: the test's file changed or went since ``older`` (the
    newest run that recorded it on the bytes ``whole`` ran, else the newest that recorded it); or
    ``whole`` collected other tests of the file, the test is a doctest (its id a dotted name) and one run had
    ``--import-mode=importlib`` and the other not (it names doctests otherwise); or ``whole`` collected nothing of
    the file and a ``conftest.py`` on the way to it, or the ini file pytest read (``provenance.inifile``), changed (a
    ``collect_ignore``, ``python_files`` or ``testpaths`` edit leaves it out). Anything else that hides a test while
    its file is the same (an environment variable in a ``collect_ignore`` or in a test's parameters, a plugin, the
    devices of the machine, a data file of parameters) leaves it standing. Where either run has no file ids at all
    (evidence from before they were recorded), one on the same machine is taken to have seen it."""
    file = nodeid.split("::", 1)[0]
    where = printable(host_of(whole))
    if not older.files or not whole.files:
        if host_of(whole) == host_of(older):
            return None
        return f"not collected on {where}, {printable(file)} maybe unchanged (no file id)"
    then = older.files.get(file)
    if then is None:  # a file git ignores (generated tests) has no id: whether it changed is unknown
        return f"not collected on {where}, {printable(file)} has no file id (ignored by git?)"
    if whole.files.get(file) != then:
        return None
    if collected:
        if _doctest_id(nodeid) and _import_mode(whole) != _import_mode(older):
            return None
    elif _config_changed(older, whole, file):
        return None
    seen = "unchanged, its other tests collected" if collected else "and its pytest configuration unchanged"
    return (
        f"not collected on {where}, {printable(file)} {seen}: an environment variable, a plugin or the machine hid "
        f"it; gone for good? a change to {printable(file)} retires it"
    )


def _long_parameter(older: TestRun, judge: TestRun, nodeid: str) -> bool:
    """Is ``nodeid`` a test with a parameter id over 100 characters, recorded by another pytest version than the
    judge's (both known)? pytest 9.2 names a str or bytes parameter that long ``argnameN`` where 9.1 wrote it out:
    such an id is renamed, not hidden."""
    then, now = older.provenance.get("pytest"), judge.provenance.get("pytest")
    params = nodeid.split("[", 1)[1] if "[" in nodeid else ""
    return bool(then and now and then != now) and len(params) > 100


def _doctest_id(nodeid: str) -> bool:
    """Is ``nodeid`` a doctest's (``src/mod.py::mod.func``, ``README.txt::README.txt``): a name with a dot, which no
    Python test function or class has?"""
    return any("." in part.split("[", 1)[0] for part in nodeid.split("::")[1:])


def _config_changed(older: TestRun, whole: TestRun, file: str) -> bool:
    """Did a ``conftest.py`` on the way to ``file``, or the ini file pytest read, differ between the two runs?"""
    then, now = older.provenance.get("inifile"), whole.provenance.get("inifile")
    known = not older.provenance.get("ingested_from") and not whole.provenance.get("ingested_from")
    if known and then != now:  # an ingested run records no ini file: unknown, never a change (adv round 4)
        return True
    if known and isinstance(now, str) and older.files.get(now) != whole.files.get(now):
        return True
    return _conftest_changed(older, whole, file)


def _conftest_changed(older: TestRun, newer: TestRun, file: str) -> bool:
    """Does a ``conftest.py`` on the way to ``file`` differ (its id, or there and not) between the two runs?"""
    return any(older.files.get(c) != newer.files.get(c) for c in conftests_of(file))


def _prefixed(ids: list[str], prefix: str) -> Iterator[str]:
    """The ids of the sorted list ``ids`` that start with ``prefix``, in order (found by bisection)."""
    for i in range(bisect.bisect_left(ids, prefix), len(ids)):
        if not ids[i].startswith(prefix):
            return
        yield ids[i]


def _import_mode(run: TestRun) -> str:
    """The ``--import-mode`` a run recorded (``provenance.options``), pytest's default ``prepend`` where it names
    none. Only ``importlib`` names doctests otherwise."""
    given = run.provenance.get("options")
    modes = [str(x) for x in given if str(x).startswith("--import-mode=")] if isinstance(given, list) else []
    return "importlib" if "--import-mode=importlib" in modes else "other"


def _kept_note(recs: list[dict[str, Any]]) -> str:
    """What a verdict adds for tests that stand on another run's record (:meth:`TestIndex._keep_unseen`)."""
    kept: dict[str, int] = {}
    for rec in recs:
        if "kept" in rec:
            kept[rec["kept"]] = kept.get(rec["kept"], 0) + 1
    shown = [f"kept {n} as last run on {where}" for where, n in list(kept.items())[:2]]
    more = f"; and {len(kept) - 2} more such" if len(kept) > 2 else ""
    return "".join(f"; {s}" for s in shown) + more


def _worst_first(outcome: str) -> int:
    """Where a record of this outcome goes among one run's records of the same test: failures, then the other
    outcomes of a test that ran, then the rest (skipped, notrun, deselected)."""
    return 0 if outcome in FAILURES else 1 if outcome in RAN else 2


def skip_allowed(allowed: tuple[str, ...], reason: str) -> bool:
    """Does a gate's ``skips_allowed`` expect a skip with this recorded reason? When the reason holds one of its
    strings, case and all (a substring: pytest records ``could not import 'x': No module named 'x'`` for
    ``importorskip``, JUnit XML may keep a ``Skipped:`` prefix)."""
    return any(want in reason for want in allowed)


def outside_file(run: TestRun, nodeid: str) -> str | None:
    """Why ``run`` says the file of test ``nodeid`` is not the repository's (``provenance.outside``: it, or a
    ``conftest.py`` above it, resolved outside the repository through a symlink when it ran), or None."""
    found = run.provenance.get("outside")
    why = found.get(nodeid.split("::", 1)[0]) if isinstance(found, dict) else None
    return why if isinstance(why, str) else None


def has_markers(run: TestRun, rec: dict[str, Any]) -> bool:
    """Does this record say which markers its test has? Not when its run was ingested from JUnit XML (which
    has no markers; ingest stores ``[]``), nor when the record has no ``markers`` key."""
    return "markers" in rec and not from_junit(run)


def tells_xpass(run: TestRun) -> bool:
    """Can this run's "passed" be told from an xpass? Not when it was ingested from JUnit XML, which writes a
    non-strict xpass as a plain pass."""
    return not from_junit(run)


def from_junit(run: TestRun) -> bool:
    """Was ``run`` ingested from JUnit XML? Such a run records no markers (ingest stores ``[]``) and writes a
    non-strict xpass as a plain pass."""
    return run.provenance.get("ingested_from") == "junit"


def xfail_known(hist: list[tuple[TestRun, dict[str, Any]]]) -> bool:
    """Did any run record this test as xfailed or xpassed, or (one with markers) with an ``xfail`` marker? Then a
    pass that cannot be told from an xpass is no pass."""
    return any(
        x["outcome"] in ("xfailed", "xpassed") or (has_markers(r, x) and "xfail" in x["markers"]) for r, x in hist
    )


def printable(text: str) -> str:
    """``text`` (recorded by a run, so any text) as a reason names it on one line: each unprintable character (a line
    break, a terminal escape, a bidirectional override) as its Python escape. Half a surrogate pair never gets here:
    the store refuses a file holding one (:func:`tracker.store.evidence.lone_surrogate`)."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def narrowed(run: TestRun) -> str | None:
    """The options that may have kept tests under the run's arguments from being collected at all (``--ignore``,
    ``-o python_functions``, ...: ``provenance.narrowed``), or None. A verify run (one that records gates) by an
    older plugin recorded only ``args: null``, after ``--ignore``, ``--lf`` or ``--pyargs``."""
    prov = run.provenance
    given = prov.get("narrowed")
    if isinstance(given, str) and given:
        return given
    old = run.gates and "args" in prov and prov["args"] is None
    return "an option (--ignore, --lf or --pyargs)" if old else None


def option_units(options: tuple[str, ...] | list[str]) -> list[str]:
    """A gate's ``options`` as runs record theirs (``provenance.options``): one string each, ``-p`` with its plugin
    (``["-p", "xdist"]`` is ``-p xdist``)."""
    out: list[str] = []
    for item in options:
        if out and out[-1] == "-p":
            out[-1] = f"-p {item}"
        else:
            out.append(item)
    return out


def missing_options(run: TestRun, gate: TestGate) -> str | None:
    """The gate's ``options`` that ``run`` did not have (``provenance.options``; pytest's default
    ``--import-mode=prepend`` is had by a run that names no import mode), joined; None when it had them all."""
    if not gate.options:
        return None
    given = run.provenance.get("options")
    have = {str(x) for x in given} if isinstance(given, list) else set()
    if not any(h.startswith("--import-mode=") for h in have):
        have.add("--import-mode=prepend")
    lacking = [u for u in option_units(gate.options) if u not in have]
    return ", ".join(lacking) if lacking else None


def _extra_options(run: TestRun, gate: TestGate) -> list[str]:
    """The collection options ``run`` had (``provenance.options``: ``--doctest-modules``, an import mode, ...) that the
    gate does not carry: such a run collected more, or otherwise, than ``pytest GATE`` (pytest's default import mode
    aside)."""
    given = run.provenance.get("options")
    have = [str(x) for x in given] if isinstance(given, list) else []
    mine = set(option_units(gate.options)) | {"--import-mode=prepend"}
    return [h for h in have if h not in mine]


def altered(run: TestRun, gate: TestGate | None = None) -> str | None:
    """The options that may have turned a failing test into a pass in ``run`` (``-p no:warnings``, ``-W``,
    ``--runxfail``, ``--rootdir`` elsewhere, ...: ``provenance.altered``), and a working directory other than the
    rootdir (``provenance.cwd``), or None. A pass from such a run meets no gate; its failures count. For ``gate``,
    also the plugins the run loaded as the gates' own options (``provenance.declared_options``: verify's, or anyone's
    who sets its variable) that ``gate``'s options do not load: a plugin may turn a failure into a pass (A5b)."""
    given = run.provenance.get("altered")
    parts = [given] if isinstance(given, str) and given else []
    where = run.provenance.get("cwd", ".")
    if where != ".":  # python -m pytest puts it first on sys.path; tests may open files relative to it (round 14, F10)
        parts.append(f"the working directory {where} (not the rootdir)")
    declared = run.provenance.get("declared_options")
    if gate is not None and isinstance(declared, list):
        extra = set(plugin_names([str(x) for x in declared])) - set(plugin_names(list(gate.options)))
        if extra:
            parts.append("plugins the gate's options do not load (" + ", ".join(f"-p {p}" for p in sorted(extra)) + ")")
    return ", ".join(parts) or None


def says_all(key: str, gate: TestGate, run: TestRun) -> bool:
    """Did ``run`` collect all of gate ``key`` as the gate says: verify ran it, or its recorded arguments cover it, and
    its collection was neither narrowed (:func:`narrowed`) nor without the gate's options (:func:`missing_options`)?"""
    return names(key, gate, run) and narrowed(run) is None and missing_options(run, gate) is None


def names(key: str, gate: TestGate, run: TestRun) -> bool:
    """Does ``run`` say it ran all of gate ``key``: do its recorded arguments cover it? (verify's runs record the
    gates' paths as arguments; a run that only lists the gate in ``gates``, a plain run given ``--tracker-gates``,
    names nothing: adv round 6.)"""
    return covers(run.provenance.get("args"), gate.test)


def covers(args: object, arg: str) -> bool:
    """Do a run's recorded pytest arguments (``provenance.args``) collect everything ``arg`` selects? A path argument
    covers its file and what is under a folder, a node id itself, its class's or function's tests and parameters,
    ``.`` or ``""`` everything. (Set lookups over the argument's own prefixes: a verify run of 1,000 node-id gates
    records 1,000 arguments, and each gate asks.)"""
    if not isinstance(args, list):
        return False
    whole, paths, nodes = _argument_sets(tuple(str(a) for a in args))
    if whole:
        return True
    want = normalize_arg(arg)
    file = want.split("::", 1)[0]
    parts = file.split("/")
    if any("/".join(parts[:i]) in paths for i in range(1, len(parts) + 1)):
        return True
    if not nodes:
        return False
    if want in nodes:
        return True
    cuts = [i for i in range(len(want)) if want.startswith("::", i) or want[i] == "["]
    return any(want[:i] in nodes for i in cuts)


@functools.lru_cache(maxsize=64)
def _argument_sets(args: tuple[str, ...]) -> tuple[bool, frozenset[str], frozenset[str]]:
    """(an argument covers everything, the path arguments, the node-id arguments), each normalized."""
    normal = [normalize_arg(a) for a in args]
    whole = any(have in ("", ".") for have in normal)
    return whole, frozenset(h for h in normal if "::" not in h), frozenset(h for h in normal if "::" in h)


def manual_hashes(phase: Phase) -> tuple[str, ...]:
    """Definition hashes of a phase's manual gates, in order (sign-offs are matched to gates by them)."""
    return tuple(gate_hash(g) for g in phase.gates if isinstance(g, ManualGate))


def manual_verdict(
    key: str, gate: ManualGate, store: Store, phase_manual: tuple[str, ...] = ()
) -> tuple[GateVerdict, dict[str, Any] | None]:
    """The sign-off of manual gate ``key``; (verdict, the sign-off's data). ``phase_manual``: the definition
    hashes of the phase's manual gates now, in order (``manual_hashes``).

    A sign-off belongs to the gate text it signed: the newest one recorded in the same phase with this
    gate's definition hash, wherever the gate sits now (a gate inserted or removed above neither takes nor
    loses it); when two manual gates of the phase have the same text, only at the same position. Failing
    that, one recorded at this position whose phase then had the same manual gates as now except this one:
    the gate's own text was edited, so it still counts and the phase shows stale.
    """
    want = gate_hash(gate)
    phase_prefix = key.rsplit("#", 1)[0] + "#"
    twin = phase_manual.count(want) > 1
    found: tuple[str, dict[str, Any]] | None = None
    for file, data in reversed(store.signoffs):
        recorded = str(data.get("gate_key", ""))
        if not recorded.startswith(phase_prefix):
            continue
        if data.get("gate_hash") == want and (not twin or recorded == key):
            found = (file, data)
            break
        if found is None and recorded == key and _edited_in_place(data, want, phase_manual):
            found = (file, data)
    if found is not None:
        file, data = found
        src = EvidenceSource(file, str(data.get("host", "?")), data.get("commit"), str(data.get("time", "")))
        return GateVerdict(True, f"signed off by {data.get('by')}: {data.get('why')}", src), data
    return GateVerdict(False, "no sign-off recorded (tracker signoff)"), None


def _edited_in_place(data: dict[str, Any], want: str, now: tuple[str, ...]) -> bool:
    """Did the signed gate's text change while every other manual gate of its phase stayed as it was?"""
    then = data.get("phase_manual")
    if not isinstance(then, list) or len(then) != len(now) or data.get("gate_hash") not in then:
        return False  # sign-offs from before phase_manual was recorded: only an exact text match counts
    changed = [i for i, (a, b) in enumerate(zip(then, now, strict=False)) if a != b]
    return len(changed) == 1 and then[changed[0]] == data.get("gate_hash") and now[changed[0]] == want


def gate_changed(key: str, gate: TestGate | ManualGate, recorded: dict[str, str]) -> bool:
    """Did the gate's definition change since evidence that recorded its hash?"""
    return key in recorded and recorded[key] != gate_hash(gate)


def gate_verdict(
    key: str,
    gate: Gate,
    tests: TestIndex,
    store: Store,
    manual: tuple[str, ...],
    bench: Callable[[BenchGate], GateVerdict],
) -> tuple[GateVerdict, bool]:
    """(verdict, ever met) of gate ``key``, whatever its kind: the one place that sends a gate to the rules of its
    kind (status and the "was done" replay both ask here). ``tests``: the test index of the evidence; ``store``:
    its sign-offs; ``manual``: the definition hashes of the phase's manual gates (:func:`manual_hashes`); ``bench``:
    the verdict of a bench gate (its "ever met" is the caller's question: it needs every earlier result set)."""
    if isinstance(gate, TestGate):
        return tests.verdict(key, gate)
    if isinstance(gate, ManualGate):
        verdict = manual_verdict(key, gate, store, manual)[0]
        return verdict, verdict.met
    verdict = bench(gate)
    return verdict, verdict.met
