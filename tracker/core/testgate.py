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
from collections.abc import Callable
from typing import Any

from tracker.base.selection import marker_matches, normalize_arg, selects
from tracker.core.gate_tests import named, select
from tracker.core.manual_gate import manual_verdict
from tracker.core.model import RAN, BenchGate, Gate, GateVerdict, ManualGate, Store, TestGate, TestRun
from tracker.core.run_facts import (
    FAILURES,
    altered,
    extra_options,
    from_junit,
    has_markers,
    kept_note,
    missing_options,
    one_test,
    other_machine,
    outside_file,
    printable,
    says_all,
    skip_allowed,
    source_of,
    tells_xpass,
    unknown_set,
    xfail_known,
)
from tracker.core.run_index import RunIndex


class TestIndex(RunIndex):
    """The evidence's test runs (:class:`RunIndex`) and the verdict of a test gate on them (:meth:`verdict`)."""

    __test__ = False

    def selection(self, key: str, gate: TestGate) -> tuple[TestRun | None, list[dict[str, Any]], TestRun | None]:
        """(the newest run that collected under the gate, the newest record of each test it covers, the newest
        run whose records under the gate carry no marker information when the gate has a marker)."""
        found = select(self, key, gate)
        return found.newest, found.covered, found.blind

    def _standing_failure(self, gate: TestGate, nodeid: str, hist: list[tuple[TestRun, dict[str, Any]]]) -> int | None:
        """Where in ``hist`` (a test's records, newest first) a failure stands though newer runs passed the test, or
        None. A failure, in whatever run it came, stands until a newer run of the gate alone passes the test
        (:meth:`RunIndex.alone`: ``pytest GATE``, as the gate says) without skipping a test of the gate that ran before
        it in the failing run. A test's outcome may depend on the tests run before it, in its session or on another
        xdist worker, and on the modules its session imported: passes under ``-k`` or a ``--deselect``, of its node id
        alone, in another order, beside other gates' tests, under xdist or in an ingested run proved nothing against a
        failure (adversarial rounds 10 to 12). Every failure is judged, not only the newest."""
        if nodeid not in self.failed:  # most tests never failed: their whole history is not read
            return None
        passes: list[tuple[TestRun, dict[str, Any]]] = []
        memo: dict[tuple[int, int], bool] = {}
        for i, (run, rec) in enumerate(hist):
            if rec.get("outcome") in FAILURES:
                if not passes:
                    return None  # the newest outcome that ran is this failure: it stands as it is
                if not any(retires(self, p, (run, rec), gate, memo) for p in passes):
                    return i
            elif rec.get("outcome") in RAN:
                passes.append((run, rec))
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
        found = select(self, key, gate)
        run, recs, blind, unknown, cut = found.newest, found.covered, found.blind, found.later, found.cut
        if run is None and blind is not None:
            why = f"-m {gate.marker!r} cannot be evaluated: the only runs of it record no markers (JUnit XML)"
            return GateVerdict(False, why, source_of(blind)), False
        if run is None and cut is not None and missing_options(cut, gate) is not None:
            return GateVerdict(False, unknown_set(gate, cut), source_of(cut)), False
        if run is None:
            return GateVerdict(False, "no evidence: never run"), False
        if not recs:
            # Missing evidence, not a failure: nothing ran that could fail (docs/reference.md: "failed").
            what = f"-m {gate.marker!r} selects 0 tests" if gate.marker else "0 tests collected"
            return GateVerdict(False, f"{what} (an empty gate is unmet)", source_of(run)), False
        passed, first_bad, sources, ever, hidden = 0, None, [], True, None
        stood: TestRun | None = None  # a newer run that passed a test whose failure stands (_standing_failure)
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
            blocked = unknown_failure(self, unknown)
            if blocked is None and cut is not None:  # every test it knows passed, but which tests it has is unknown
                return GateVerdict(False, unknown_set(gate, cut), source_of(cut)), False
            if blocked is None and not one_test(gate, recs) and not named(self, key, gate):
                why = (
                    f"which tests {gate.test} selects is unknown: no run collected all of it "
                    f"(run tracker verify or pytest {gate.test} --tracker-record)"
                )
                return GateVerdict(False, why, source_of(newest_run)), False
            apart, together = (
                (None, None)
                if blocked is not None or one_test(gate, recs)
                else not_together(self, key, gate, counted, passes)
            )
            if apart is not None:
                return GateVerdict(False, apart + kept_note(recs), source_of(together or newest_run)), False
            if blocked is None:
                # Staleness is judged on every run a pass came from (a partial run on new code leaves the other
                # tests' passes on the old): the newest is the source, the others are named too. So is the run that
                # said which tests the gate has: a test added to its file since, which no run collected, could be
                # failing (adv round 6).
                named_by = {found.named_by.file} if found.named_by is not None and not one_test(gate, recs) else set()
                named_by |= {together.file} if together is not None else set()  # its code is what passed together
                also = tuple(sorted(({r.file for r in sources} | named_by) - {newest_run.file}))
                return GateVerdict(
                    True, f"{passed} passed{as_allowed}{kept_note(recs)}", source_of(newest_run), also=also
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
        text += kept_note(recs)
        if hidden is not None:
            text += f"; a newer pass in {hidden.file} is not counted: JUnit XML writes an xpass as a pass"
        if changed is not None:
            text += f"; a pass in {changed.file} is not counted: it ran with {printable(altered(changed, gate) or '')}"
        if stood is not None:
            text += f"; a pass since, in {stood.file}, was not a run of the gate alone (pytest {gate.test})"
        failed = outcome in FAILURES
        return GateVerdict(False, text, source_of(bad_run), failed=failed), ever


def retires(
    index: RunIndex,
    passing: tuple[TestRun, dict[str, Any]],
    failing: tuple[TestRun, dict[str, Any]],
    gate: TestGate,
    memo: dict[tuple[int, int], bool],
) -> bool:
    """Did the passing run run on other code than the failing run (their trees' file ids differ: the failure is
    of older code, and the newest outcome counts, as it always did), or is it a run of the gate alone
    (:meth:`RunIndex.alone`) that ran, before the test, every test of the gate the failing run ran before the failure
    (by the records' ``order``; every one it ran where it recorded none)? One that skipped such a test, or ran it
    after, passed in another state."""
    (prun, prec), (frun, frec) = passing, failing
    key = (id(prun), id(frun))
    if key in memo:
        return memo[key]
    if prun.files and frun.files and prun.files != frun.files:
        memo[key] = True  # a pass on other code than the failure's: the newest outcome counts, as it always did
        return True
    if not index.alone(prun, gate):
        memo[key] = False
        return False
    at, mine = frec.get("order"), prec.get("order")
    recorded = {r["nodeid"]: r for r in index.matching(prun, gate.test)}
    ok = True
    for r in index.matching(frun, gate.test):
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


def not_together(
    index: RunIndex, key: str, gate: TestGate, counted: list[dict[str, Any]], passes: dict[str, tuple[TestRun, str]]
) -> tuple[str | None, TestRun | None]:
    """(why the gate's tests counted as passing do not show that ``pytest GATE`` passes, or None; the run of all
    of them together the verdict stands on, or None). ``counted``: the records of the tests counted as passing;
    ``passes``: the run each one's counted pass (or allowed xfail) came from, and which it was.

    A test may pass alone and fail after another (shared state), so they must have passed together, in the newest
    run of all of the gate (it names the gate's path, nothing narrowed: not node ids in another order, not a
    ``-k``, not an ingested run, which records no session, no option the gate lacks) that collected them all.
    There each passed, in one process (one xdist worker or none), or xfailed as allowed where its counted outcome
    is that xfail, or was skipped (at collection too) on another machine than its pass (:func:`other_machine`):
    a GPU test a CPU run skips, passed by the GPU machine's run. A skip on the machine of its pass is no such case
    (an environment variable hid it: round 14, F3), nor is a test that run did not collect at all (F2).
    Adversarial rounds 13 (A1), 14 (F1, F2, F3, F4, F7) and 15 (A1, A2, A3, A9)."""
    tests = [r["nodeid"] for r in counted if "::" in r["nodeid"]]
    if len(tests) < 2:
        return None, None
    for run in index.runs:  # newest first
        if not says_all(key, gate, run) or extra_options(run, gate) or (gate.marker is not None and from_junit(run)):
            continue  # not a run of all of the gate as it says (--doctest-modules added tests: round 15, A1)
        ids, records, file_level = index.sorted[id(run)]
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
                if rec is not None and rec["outcome"] == outcome and passed_in(gate, run, rec):
                    continue  # passed there as it counts (an allowed xfail only where it counts one: A9)
                if (rec is None or rec["outcome"] == "skipped") and other_machine(source, run):
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


def passed_in(gate: TestGate, run: TestRun, rec: dict[str, Any]) -> bool:
    """Did the test pass in ``run`` as its gate counts a pass: a pass of a run whose options changed no outcome,
    or an xfail the gate allows?"""
    outcome, reason = rec["outcome"], str(rec.get("reason") or "")
    if outcome == "passed":
        return altered(run) is None
    return outcome == "xfailed" and skip_allowed(gate.xfails_allowed, reason)


def unknown_failure(index: RunIndex, nodeids: list[str]) -> tuple[TestRun, dict[str, Any]] | None:
    """The first of ``nodeids`` that no run with markers ever recorded and whose newest outcome is a failure,
    as (run, record): whether the gate's ``-m`` selects it cannot be told, so it cannot be left out."""
    for nodeid in nodeids:
        hist = index.tests_of(nodeid)
        if any(has_markers(r, x) for r, x in hist):
            continue  # its markers are known: the gate's selection already decided about it
        ran = next(((r, x) for r, x in hist if x["outcome"] in RAN), None)
        if ran is not None and ran[1]["outcome"] in FAILURES:
            return ran
    return None


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
