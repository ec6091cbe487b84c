"""``tracker verify [PLAN[/PHASE]]...``: run the selected test gates in ONE pytest session, then say where every
gate of the selected phases stands.

The nested pytest gets our plugin with ``--tracker-select`` (exactly the gates' tests, each with
its own ``-m``), ``--tracker-gates`` (the gates' definition hashes) and ``--tracker-record`` (the
evidence file, named here so we know which one to read back). pytest's own output streams through
as progress. ``--pytest-arg`` values are refused (exit 3) whether or not a test runs (:func:`check_pytest_args`).

After the run every gate of the selected phases gets one line with its verdict on the evidence as it now
stands: ``met``; ``UNMET`` (a test that failed or did not run, a bench gate the stored results do not meet, a
manual gate nobody signed off); or ``STALE`` (met on evidence that no longer matches the code or the gate:
what changed is said). Then one line per phase says whether it is done and, when it is not, what is left
(its test gates may all have passed while a manual gate is unsigned: the phase is not done, and exit 1).
Exit 0 only when every gate of the selected phases is met on fresh evidence.

Its parts: what it refuses (:mod:`tracker.commands.verify_args`), running the sessions
(:mod:`tracker.commands.verify_sessions`, the pytest session itself: :mod:`tracker.commands.pytest_run`), judging
(:mod:`tracker.commands.verify_judge`), its own evidence files (:mod:`tracker.commands.verify_evidence`) and what it
prints (:mod:`tracker.commands.verify_output`).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from tracker.base.annotations import plain
from tracker.base.cache import Cache, command_cache
from tracker.commands.common import json_text, pytest_env, select
from tracker.commands.verify_args import _refuse_outside, _refuse_own_options, check_pytest_args
from tracker.commands.verify_evidence import _record_after
from tracker.commands.verify_judge import GateLine, _explain, _Judgement, _narrowed, gate_verdicts
from tracker.commands.verify_output import _print_verdicts, verdict_document
from tracker.commands.verify_sessions import _run, _run_gates, _Session, _test_paths, _to_run_alone
from tracker.core.model import Store, TestGate, gate_key
from tracker.errors import ExitCode, NoTestsError
from tracker.plans.load import load_plans
from tracker.store.evidence import check_store_dir


def run(
    root: Path,
    specs: list[str],
    pytest_args: list[str] | None = None,
    out: TextIO | None = None,
    bench: bool = False,
    force: bool = False,
    as_json: bool = False,
    alone: bool = False,
    fmt: str = "text",
) -> int:
    """Run the gates, record evidence, print every selected gate's verdict; exit 0 when every gate of the
    selected phases is met on fresh evidence, else 1 (5: a test gate collected no tests; 6: the run was
    interrupted). ``as_json``: stdout carries one object (:func:`verdict_document`), progress goes to stderr.
    ``fmt="github"``: every gate not met is a GitHub Actions ``::error`` at its line in the plan
    (:mod:`tracker.commands.github_output`); the progress (pytest's output, stderr's too) goes to stdout between a
    ``::stop-commands::`` line and its resume line, so that nothing a test prints is read as a workflow command.

    Test gates whose passing evidence still matches the code are not re-run unless ``force``;
    ``bench`` also runs the selected bench gates' ``run`` commands (:mod:`tracker.commands.verify_bench`);
    ``alone`` runs each test gate in a pytest session of its own, as ``pytest GATE`` would, rather than all in one
    (every selected gate: evidence up to date may come from a shared session).
    """
    from tracker.commands.standby import release_standbys

    try:
        with command_cache(root) as cache:  # what reading learned is written when verify ends
            return _verify(root, specs, pytest_args, out or sys.stdout, bench, force, as_json, cache, alone, fmt)
    finally:
        release_standbys()


def _verify(
    root: Path,
    specs: list[str],
    pytest_args: list[str] | None,
    out: TextIO,
    bench: bool,
    force: bool,
    as_json: bool,
    cache: Cache,
    alone: bool = False,
    fmt: str = "text",
) -> int:
    log = sys.stderr if as_json else out  # progress: with --json, stdout carries the one object
    github = fmt == "github" and not as_json
    pytest_args = list(pytest_args or [])
    force = force or alone  # evidence up to date may come from a session beside other gates (round 14, F8)
    _refuse_own_options(pytest_args)
    _, plans = load_plans(root, cache=cache)
    chosen = select(plans, specs)
    check_store_dir(root)  # evidence is written there: a regular file in its place is exit 8, said up front
    all_gates = {
        gate_key(p.id, ph.id, i): g for p, ph in chosen for i, g in enumerate(ph.gates) if isinstance(g, TestGate)
    }
    _refuse_outside(root, chosen)
    env = None
    if all_gates:  # a session is likely: its child is forked now, before anything more is built here
        from tracker.commands.standby import stand_by

        env = pytest_env(root, bytecode=True)
        stand_by(root, env)
    if pytest_args and bench:  # the bench commands run first and can take minutes: a bad argument stops verify before
        check_pytest_args(root, pytest_args, _test_paths(root, all_gates.values())[0])
    with _progress(as_json, github, out):
        session = _run(root, plans, chosen, all_gates, pytest_args, log, bench, force, cache, alone, env)
    judged = (
        session.before
        if session.before is not None and session.evidence is None
        else _Judgement(root, plans, cache, last=tuple(f.name for f in session.files()) or None)
    )
    again = [] if alone else _to_run_alone(session, all_gates, judged)
    if again:
        log.write(
            f"tracker: running {len(again)} unmet gate(s) alone, as `pytest GATE` would (a test may pass or fail "
            "beside other gates' tests; a failure stands until a run of its gate alone passes it)\n"
        )
        with _progress(as_json, github, out):
            runs = [_run_gates(root, {key: all_gates[key]}, pytest_args, log, all_gates[key].options) for key in again]
        files = [*session.files(), *(r for r in runs if r is not None)]
        session = session._replace(evidence=files[-1], earlier=tuple(files[:-1]))
        judged = _Judgement(root, plans, cache, last=tuple(f.name for f in session.files()))
    moved = None
    if judged.store.reordered:
        for file in session.files():  # each of this verify's runs, in their order
            moved = _record_after(file, judged.store) or moved
    warnings = _explain(judged.store, moved)
    for file in session.files():
        warnings += [w for w in _narrowed(judged.store, file) if w not in warnings]
    for line in warnings:
        log.write(plain(f"tracker: {line}") + "\n" if github else f"tracker: {line}\n")
    gates = gate_verdicts(chosen, judged.statuses, judged.stale(chosen), session.bench_failed)
    if session.evidence is not None:
        gates = _from_older_evidence(gates, all_gates, session, judged.store)
    empty = [
        g.key
        for g in gates
        if g.kind == "test"
        and g.verdict == "unmet"
        and ("0 tests" in g.reason or "never run" in g.reason or g.reason.startswith("no such test file or directory"))
    ]
    code = (
        int(ExitCode.NO_TESTS)
        if empty
        else int(ExitCode.CHECK_FAILED)
        if session.bench_code or any(g.verdict != "met" for g in gates)
        else 0
    )
    if as_json:
        doc = verdict_document(root, chosen, judged.statuses, gates, session, warnings, code)
        out.write(json_text(out, doc) + "\n")
    elif github:
        from tracker.commands.github_output import verify_annotations, write_lines

        text = io.StringIO()
        _print_verdicts(root, chosen, judged.statuses, gates, session, text)
        write_lines(out, verify_annotations(plans, gates), text.getvalue().splitlines())
    else:
        _print_verdicts(root, chosen, judged.statuses, gates, session, out)
    if empty:
        raise NoTestsError(f"{len(empty)} gate(s) collected no tests: {', '.join(empty)}")
    return code


def _from_older_evidence(
    gates: list[GateLine], all_gates: dict[str, TestGate], session: _Session, store: Store
) -> list[GateLine]:
    """Say it on each test gate this run was to run but ran none of the tests of (deselected by ``-k`` or
    ``--deselect``, skipped, not collected): its verdict comes from older evidence, named (deselection never
    un-meets a gate, so a bare "met" would read as this run's pass)."""
    from tracker.base.selection import marker_matches, selects
    from tracker.core.model import RAN

    names = {"/" + f.name for f in session.files()}
    owns = [run for run in store.runs if any(run.file.endswith(n) for n in names)]  # this verify's runs
    out = []
    for g in gates:
        gate = all_gates.get(g.key)
        source = g.v.source
        if gate is None or g.key not in session.ran or source is None or not owns:
            out.append(g)
            continue
        if any(source.file == own.file for own in owns):
            out.append(g)
            continue
        ran = any(
            r["outcome"] in RAN
            and selects(gate.test, r["nodeid"])
            and ("::" not in r["nodeid"] or marker_matches(gate.marker, r.get("markers", [])))
            for own in owns
            for r in own.tests
        )
        if ran:
            out.append(g)
            continue
        note = (
            "; this run ran none of its tests (deselected or skipped?): the verdict comes from older evidence, "
            f"{source.file}"
        )
        out.append(g._replace(reason=g.reason + note))
    return out


@contextmanager
def _progress(as_json: bool, github: bool, out: TextIO) -> Iterator[None]:
    """Where the progress of a run goes: with ``--json`` to stderr (:func:`_stdout_to_stderr`); with ``--format
    github`` to stdout, stderr's too, each line made plain (:mod:`tracker.commands.relay`), between the lines that stop
    and resume the runner's reading of workflow commands (a test that prints ``::error::`` or ``##[error]`` annotates
    nothing, and a process it leaves behind cannot write past them)."""
    if as_json:
        with _stdout_to_stderr():
            yield
        return
    if not github:
        yield
        return
    from tracker.base.annotations import stop_commands
    from tracker.commands.relay import relayed

    stop, resume = stop_commands()
    out.write(stop + "\n")
    out.flush()
    try:
        with relayed():  # each line made plain; a process a test left behind cannot write past the block
            yield
    finally:
        out.write(resume + "\n")
        out.flush()


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """With ``--json`` stdout carries only the JSON object: what pytest and the bench commands print (to file
    descriptor 1, inherited) goes to stderr while they run."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no stdout at all: nothing to keep clean
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
