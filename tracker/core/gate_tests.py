"""Which tests a test gate has, from the runs an index sees: the newest run of all of the gate and what newer runs
added (:func:`select`), the tests an older run recorded that the newest run of all of it could not prove gone
(:func:`keep_unseen`), and whether any run collected all of it (:func:`named`). The verdicts on those tests are
:mod:`tracker.core.testgate`'s.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tracker.base.selection import marker_matches, normalize_arg, selects
from tracker.core.model import RAN, TestGate, TestRun
from tracker.core.run_facts import (
    FAILURES,
    collection_skips,
    conftest_changed,
    doctest_id,
    from_junit,
    has_markers,
    host_of,
    long_parameter,
    missing_options,
    names,
    narrowed,
    prefixed,
    printable,
    says_all,
    unseen,
)
from tracker.core.run_index import RunIndex


class Selection(NamedTuple):
    """What :func:`select` found of a gate."""

    newest: TestRun | None  # the newest run that collected under the gate
    covered: list[dict[str, Any]]  # the newest record of each test it covers
    blind: TestRun | None  # the newest run whose records under a marker gate carry no marker information
    later: list[str]  # node ids under a marker gate that blind runs newer than its whole run recorded
    cut: TestRun | None  # no run named the gate's tests: the newest that would have but for narrowing options
    named_by: TestRun | None  # the run that said which tests the gate has


def select(index: RunIndex, key: str, gate: TestGate) -> Selection:
    """What the runs say of the gate's tests (:class:`Selection`): the newest run that collected under it, the newest
    record of each test it covers, the newest run whose records under it carry no marker information when it has a
    marker, the node ids of tests under a marker gate that blind runs newer than its whole run recorded (whether ``-m``
    selects them is known only where a run with markers recorded them), and, when no run named the gate's tests, the
    newest that would have but for options that narrowed its collection."""
    found: dict[str, dict[str, Any]] = {}
    by: dict[str, TestRun] = {}  # the run each record in ``found`` came from
    named_by: TestRun | None = None  # the run that said which tests the gate has
    later: list[str] = []  # node ids of newer runs a marker gate cannot use (nor retire collection errors with)
    newest: TestRun | None = None
    blind: TestRun | None = None
    cut: TestRun | None = None  # the newest run of all of the gate whose collection an option narrowed (none found)
    for run in index.runs:  # newest first
        recs = index.matching(run, gate.test)
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
                    rec["outcome"] not in FAILURES or any(collects_anew(index, by[s], run, gate) for s in under)
                ):
                    continue
            found[nodeid] = rec
            by[nodeid] = run
        if whole:
            keep_unseen(index, key, gate, run, found)
            named_by = run  # the run that said which tests the gate has (its staleness counts too)
            break
    covered = [
        r for r in found.values() if "::" not in r["nodeid"] or marker_matches(gate.marker, r.get("markers", []))
    ]
    return Selection(newest, covered, blind, list(dict.fromkeys(later)), cut, named_by)


def collects_anew(index: RunIndex, newer: TestRun, older: TestRun, gate: TestGate) -> bool:
    """Does ``newer``, which collected a test of a file ``older`` failed to collect, retire that error: it ran on
    other code (the error was older code's), or it was a run of the gate alone (:meth:`RunIndex.alone`)?"""
    if newer.files and older.files and newer.files != older.files:
        return True
    return index.alone(newer, gate)


def keep_unseen(index: RunIndex, key: str, gate: TestGate, whole: TestRun, found: dict[str, dict[str, Any]]) -> None:
    """Add to ``found`` the newest record, in a run older than ``whole`` (the newest run of all of the gate), of
    each test under the gate that ``whole`` did not collect but could not prove gone (:func:`unseen`): a run
    proves a test gone only if it could have seen it. Each record added is a copy whose ``kept`` says why; a file
    skipped at collection stops counting as a test once a test under it is found."""
    position = index.positions[id(whole)]  # runs older than it have smaller positions
    skips = collection_skips(index.sorted[id(whole)][2])
    prefix = normalize_arg(gate.test)
    prefix = "" if prefix == "." else prefix
    candidates = [n for n in index.file_ids if selects(gate.test, n) and not n.startswith(prefix)]
    candidates += [n for n in prefixed(index.ids, prefix) if n not in found and selects(gate.test, n)]
    answers: dict[tuple[str, int, bool, int], str | None] = {}  # (file, older run, doctest?, judge): per file
    seers: dict[str, TestRun | None] = {}  # by file skipped at collection: the newest run of all that was not
    for nodeid in candidates:
        if nodeid in found:
            continue
        older = next(
            (
                (rank, run, rec)
                for rank, (run, rec) in zip(index.ranks[nodeid], index.history[nodeid], strict=True)
                if rank < position
                and (gate.marker is None or "::" not in nodeid or has_markers(run, rec))  # a blind one adds none
            ),
            None,
        )
        if older is None:
            continue
        rank, run, rec = older
        if "::" in nodeid and not any(
            x["outcome"] in RAN for r, x in index.tests_of(nodeid) if index.positions[id(r)] < position
        ):
            continue  # it never ran (deselected, collected but not run): no outcome of it to keep
        file = nodeid.split("::", 1)[0]
        skip = next((s for s in skips if selects(s["nodeid"], nodeid)), None)
        judge: TestRun | None = whole
        if skip is not None:  # it could not see the file: the newest run of all of the gate that could decides
            if file not in seers:
                seers[file] = seer(index, key, gate, whole, nodeid)
            judge = seers[file]
        why: str | None = None
        if judge is not None and index.positions[id(judge)] > rank:
            # Judged against a run that recorded it on the file's bytes the judge ran (adv round 4: a debug edit
            # or a checkout in between made an older run's bytes differ): none such, its file changed.
            now = judge.files.get(file)
            basis = next(
                (r for rk, (r, _) in zip(index.ranks[nodeid], index.history[nodeid], strict=True)
                 if rk < index.positions[id(judge)] and now is not None and r.files.get(file) == now),
                run,
            )  # fmt: skip
            memo = (file, id(basis), doctest_id(nodeid), id(judge))
            if memo not in answers:
                answers[memo] = unseen(judge, index.collected(judge, file), basis, nodeid)
            why = answers[memo]
            if (
                why is not None
                and "[" in nodeid
                and (renamed(index, basis, judge, nodeid) or long_parameter(basis, judge, nodeid))
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


def seer(index: RunIndex, key: str, gate: TestGate, whole: TestRun, nodeid: str) -> TestRun | None:
    """The newest run of all of the gate older than ``whole`` whose collection did not skip the file of ``nodeid``
    (``importorskip`` on another machine), or None."""
    start = len(index.runs) - 1 - index.positions[id(whole)]  # its place, newest first
    for run in index.runs[start + 1 :]:
        if not says_all(key, gate, run) or (gate.marker is not None and from_junit(run)):
            continue
        if not any(selects(s["nodeid"], nodeid) for s in collection_skips(index.sorted[id(run)][2])):
            return run
    return None


def renamed(index: RunIndex, older: TestRun, judge: TestRun, nodeid: str) -> bool:
    """Were the parameters of ``nodeid``'s function renamed: ``judge`` collected it under as many ids as ``older``
    recorded or more (one hidden, there would be fewer), and what names them changed between the two runs: a
    ``conftest.py`` on the way (``pytest_make_parametrize_id``, ``pytest_generate_tests``) or the pytest version
    (9.2 names long parameters otherwise than 9.1), both known? New ids alone are no proof: an environment
    variable may pick the parameters (``['cuda'] if gpu else ['cpu']``)."""
    base = nodeid.split("[", 1)[0] + "["
    now = set(prefixed(index.sorted[id(judge)][0], base))
    if not now or len(now) < len(set(prefixed(index.sorted[id(older)][0], base))):
        return False
    file = nodeid.split("::", 1)[0]
    then_pytest, now_pytest = older.provenance.get("pytest"), judge.provenance.get("pytest")
    if then_pytest and now_pytest and then_pytest != now_pytest:
        return True
    return bool(older.files) and conftest_changed(older, judge, file)


def named(index: RunIndex, key: str, gate: TestGate) -> bool:
    """Did a run this index sees collect all of the gate, its collection not narrowed (verify ran the gate, or
    its recorded arguments cover it)? Without one, which tests a file, directory or marker gate has is unknown:
    a run of part of it, or an ingested reportlog or JUnit run (they record no arguments, so an ``--ignore`` in
    it cannot be seen), only adds outcomes, and the tests it never collected may be failing (adv F3)."""
    return any(
        says_all(key, gate, run) and (gate.marker is None or not from_junit(run))  # no markers: -m unknown
        for run in index.runs
    )
