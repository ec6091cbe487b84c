"""Running ``tracker verify``'s test gates: the bench commands and the freshness check first, then the gates
grouped into pytest sessions by their options (:func:`_sessions`), each run with the tracker's plugin and its
evidence file checked (:func:`_run_gates`, :func:`_check_run`), and which gates run again alone
(:func:`_to_run_alone`). What was run is a :class:`_Session`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from tracker.base.cache import Cache
from tracker.base.contract import EVIDENCE_DIR
from tracker.base.selection import marker_matches, selects
from tracker.commands.common import PLUGIN_ARGS, pytest_env
from tracker.commands.verify_args import _answer, _refuse_arguments, check_pytest_args
from tracker.commands.verify_evidence import _crashed_in, _read_evidence, _recorded
from tracker.commands.verify_judge import _Judgement
from tracker.core.model import BenchGate, Phase, Plan, TestGate, gate_hash
from tracker.errors import InterruptedRunError, UsageError

PYTEST_USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR (pytest is not imported here)


class _Session(NamedTuple):
    """What one verify did before judging: the evidence file its pytest run recorded (None when nothing ran),
    the test gates it ran and those up to date that it did not, the bench commands' outcome."""

    evidence: Path | None
    ran: list[str]
    fresh: list[str]
    bench_code: int
    bench_failed: dict[str, str]  # bench gate key -> why its command gave it nothing (unmet whatever results say)
    before: _Judgement | None  # the judgement freshness was decided on (reused when nothing ran after it)
    earlier: tuple[Path, ...] = ()  # the evidence files of this verify's earlier sessions (gates with other options)

    def files(self) -> tuple[Path, ...]:
        """Every evidence file this verify recorded, in the order its sessions ran (``evidence`` last)."""
        return (*self.earlier, self.evidence) if self.evidence is not None else ()


def _run(
    root: Path,
    plans: list[Plan],
    chosen: list[tuple[Plan, Phase]],
    all_gates: dict[str, TestGate],
    pytest_args: list[str],
    log: TextIO,
    bench: bool,
    force: bool,
    cache: Cache,
    alone: bool = False,
    env: dict[str, str] | None = None,
) -> _Session:
    """``env``: the sessions' environment as :func:`tracker.commands.verify._verify` made it before forking the first
    session's child (its bytecode caches pruned then): the first session runs on it, and on the tree read then, when no
    bench command ran since (``bench``: they may write anywhere)."""
    from tracker.store.derive import working_tree_index

    bench_code, bench_failed = 0, dict[str, str]()
    current = working_tree_index(root, cache) if bench or (all_gates and not force) else None
    bench_gates = sum(isinstance(g, BenchGate) for _, ph in chosen for g in ph.gates)
    if bench:
        from tracker.commands.verify_bench import run_bench_gates

        assert current is not None
        bench_code = run_bench_gates(root, chosen, force, log, dict(current.files), cache, bench_failed)
    elif bench_gates:
        log.write(f"tracker: {bench_gates} bench gate(s) judged on the stored results (--bench runs their commands)\n")
    before, fresh = None, set[str]()
    if all_gates and not force:
        from tracker.core.history import fresh_test_gates

        # One store read and one tree scan serve both status and freshness. An unusable store file makes every
        # test gate unmet (as in status), so nothing counts as fresh and everything selected runs.
        assert current is not None
        before = _Judgement(root, plans, cache, index=current)
        fresh = fresh_test_gates(plans, before.store, before.statuses, current, list(all_gates))
        if fresh:
            log.write(
                f"tracker: {len(fresh)} test gate(s) up to date with their evidence, not re-run (--force re-runs)\n"
            )
    gates = {k: g for k, g in all_gates.items() if k not in fresh}
    evidence, earlier = None, list[Path]()
    if not all_gates:
        log.write("no test gates selected: nothing to run\n")
    as_read = env if not bench else None
    for options, group in _sessions(gates, alone=alone):
        # the run checks its pytest arguments itself
        ran = _run_gates(root, group, pytest_args, log, options, as_read)
        as_read = None  # the tests ran since: the next session reads the tree and prunes the caches again
        if ran is not None:
            earlier += [evidence] if evidence is not None else []
            evidence = ran
    if evidence is None and pytest_args and not bench:  # nothing ran: they are checked all the same
        check_pytest_args(root, pytest_args, _test_paths(root, all_gates.values())[0])
    ran_gates = sorted(gates) if evidence else []
    return _Session(evidence, ran_gates, sorted(fresh), bench_code, bench_failed, before, tuple(earlier))


def _sessions(gates: dict[str, TestGate], *, alone: bool) -> list[tuple[tuple[str, ...], dict[str, TestGate]]]:
    """The gates grouped into pytest sessions, each with its gates' ``options``: by options alone, the fewest sessions
    (``alone``: one per distinct gate, its path, marker and options, so that each runs as ``pytest GATE`` would, none
    beside another's tests). Those with the most options run first, so that a session of gates without any, which
    collects less, is the newest evidence (a gate is named its tests only by a run that had its options:
    tracker.core.testgate)."""
    groups: dict[tuple[Any, ...], dict[str, TestGate]] = {}
    for key, gate in gates.items():
        group = (gate.options, gate.test, gate.marker or "") if alone else (gate.options,)
        groups.setdefault(group, {})[key] = gate
    return [(kv[0][0], kv[1]) for kv in sorted(groups.items(), key=lambda kv: (-len(kv[0][0]), kv[0]))]


def _test_paths(root: Path, gates: Any) -> tuple[list[str], list[str]]:
    """(existing, missing) files and directories of the gates' pytest arguments: only existing paths go on the
    command line, since a missing one would abort the whole session."""
    paths = sorted({g.test.split("::", 1)[0].rstrip("/") or "." for g in gates})
    existing = [p for p in paths if (root / p).exists()]
    return existing, sorted(set(paths) - set(existing))


def _run_gates(
    root: Path,
    gates: dict[str, TestGate],
    pytest_args: list[str],
    log: TextIO,
    options: tuple[str, ...] = (),
    as_read: dict[str, str] | None = None,
) -> Path | None:
    """Run ``gates`` in one pytest session with the gates' ``options``; this run's evidence file, or None when none
    of their paths exists.
    Raises UsageError when pytest refuses its command line (``pytest_args`` are checked in the run itself, by
    :mod:`tracker.pytest_argcheck`: no second pytest start), InterruptedRunError when the run did not complete.
    ``as_read``: the environment :func:`tracker.commands.verify._verify` made before forking the session's child, when
    nothing but the tracker ran since (the tree as read then, the bytecode caches as pruned then)."""
    existing, missing = _test_paths(root, gates.values())
    for p in missing:
        log.write(f"tracker: no such test file or directory: {p}\n")
    from tracker.base.contract import evidence_name  # the plugin's naming rule, light: no pytest, no ingest command

    name = evidence_name("verify")
    evidence = root / EVIDENCE_DIR / name
    with tempfile.TemporaryDirectory(prefix="tracker-verify-") as tmp:
        sel, hashes = Path(tmp, "select.json"), Path(tmp, "gates.json")
        sel.write_text(json.dumps(sorted({(g.test, g.marker) for g in gates.values()}, key=str)))
        hashes.write_text(json.dumps({k: gate_hash(g) for k, g in gates.items()}))
        args = [
            *PLUGIN_ARGS,
            f"--rootdir={root}",
            f"--tracker-record={root / EVIDENCE_DIR}",
            f"--tracker-file={name}",
            f"--tracker-gates={hashes}",
            f"--tracker-select={sel}",
            "--continue-on-collection-errors",  # a file that fails to collect makes its gates unmet, not the run void
            *(["-p", "tracker.pytest_argcheck"] if pytest_args else []),
            *options,
            *pytest_args,
            *existing,
        ]
        answer = Path(tmp, "argcheck.json")
        # verify's own options as given above: one given again in pytest_args (an @argsfile too) is refused
        own = dict(tracker_record=str(root / EVIDENCE_DIR), tracker_file=name, tracker_gates=str(hashes))
        check = {"TRACKER_ARGCHECK": str(answer), "TRACKER_ARGCHECK_THEN": "run"}
        check["TRACKER_ARGCHECK_OWN"] = json.dumps(own | {"tracker_select": str(sel)})
        env = (as_read if as_read is not None else pytest_env(root, bytecode=True)) | (check if pytest_args else {})
        # The gates' own options (the plan's): the recorder counts every other option that may alter outcomes.
        env["TRACKER_GATE_OPTIONS"] = json.dumps(list(options))
        with_options = f" with {' '.join(options)}" if options else ""
        log.write(f"tracker: running {len(gates)} test gate(s) in one pytest session{with_options}\n")
        log.flush()
        if not existing:
            return None
        from tracker.commands.pytest_run import run_pytest

        # pytest got the same SIGINT: run_pytest lets it write its "interrupted" file, then says what it recorded
        code = run_pytest(args, root, env, lambda: f"interrupted: {_recorded(root, evidence)}", as_read is not None)
        if pytest_args:
            _refuse_arguments(_answer(answer), code)
    _check_run(evidence, code, pytest_args)
    return evidence


def _check_run(evidence: Path, code: int, pytest_args: list[str]) -> None:
    """Refuse a run that counts for nothing: pytest refused its arguments (exit 3), or the run did not complete
    (exit 6, saying whether a test crashed it)."""
    data = _read_evidence(evidence)
    status = data.get("status")
    if code == PYTEST_USAGE_ERROR and status != "complete" and "nodeid" not in (data.get("running") or {}):
        # pytest refused its arguments or configuration before running a test (a test that exits the
        # process with status 4 is a crash: it names the running test, and is reported below).
        what = "its command line (a --pytest-arg)" if pytest_args else "its command line or configuration"
        raise UsageError(f"pytest refused {what} (exit {code}; its message is above): nothing ran")
    if status != "complete":
        what = "left no evidence file" if status is None else f"recorded as {status}"
        running = _crashed_in(evidence, data)
        crashed = (
            f"; it crashed while running {running['nodeid']}, which counts as an error"
            if isinstance(running.get("nodeid"), str)
            else ""
        )
        raise InterruptedRunError(
            f"pytest exited with {code} and its run was {what}{crashed}: nothing counts as passed"
        )


def _to_run_alone(session: _Session, all_gates: dict[str, TestGate], judged: _Judgement) -> list[str]:
    """The test gates this verify ran beside other gates in one session that are failed though none of their tests
    failed there: a failure recorded before stands until a run of the gate alone passes it
    (:meth:`tracker.core.run_index.RunIndex.alone`), so verify runs each alone, as ``pytest GATE`` would. A gate that
    failed in the session stays failed (a failure only beside other gates' tests is still pytest's failure there)."""
    if session.evidence is None:
        return []
    from tracker.core.run_facts import FAILURES

    together: dict[tuple[str, ...], set[tuple[str, str | None]]] = {}  # per session (of options): its distinct gates
    for key in session.ran:
        gate = all_gates[key]
        together.setdefault(gate.options, set()).add((gate.test, gate.marker))
    mine = {f.name for f in session.files()}
    runs = [run for run in judged.store.runs if Path(run.file).name in mine]
    verdicts = {f"{k}#{i + 1}": v for k, status in judged.statuses.items() for i, v in enumerate(status.verdicts)}
    out = []
    for key in session.ran:
        gate, verdict = all_gates[key], verdicts.get(key)
        if len(together[gate.options]) < 2 or verdict is None or verdict.met or not verdict.failed:
            continue  # alone, met, or unmet for want of a pass (a skip, no test): running it again changes nothing
        failed_here = any(
            rec["outcome"] in FAILURES
            and selects(gate.test, rec["nodeid"])
            and marker_matches(gate.marker, rec.get("markers") or [])
            for run in runs
            for rec in run.tests
        )
        if not failed_here:
            out.append(key)
    return out
