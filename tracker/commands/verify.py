"""``tracker verify [PLAN[/PHASE]]...``: run the selected test gates in ONE pytest session.

The nested pytest gets our plugin with ``--tracker-select`` (exactly the gates' tests, each with
its own ``-m``), ``--tracker-gates`` (the gates' definition hashes) and ``--tracker-record`` (the
evidence file, named here so we know which one to read back). pytest's own output streams through
as progress.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from tracker.commands.common import pytest_command, pytest_env, select
from tracker.errors import ExitCode, FileError, InterruptedRunError, NoTestsError, UsageError
from tracker.evidence import EVIDENCE_DIR, Store, check_store_dir
from tracker.model import BenchGate, PhaseStatus, Plan, TestGate, gate_hash
from tracker.plans import load_plans
from tracker.status import gate_key


def run(
    root: Path, specs: list[str], pytest_args: list[str] | None = None, out: TextIO | None = None,
    bench: bool = False, force: bool = False,
) -> int:
    """Run the gates, record evidence; exit 0 when every selected gate is met, else 1/5/6.

    Test gates whose passing evidence still matches the code are not re-run unless ``force``;
    ``bench`` also runs the selected bench gates' ``run`` commands (:mod:`tracker.benchrun`).
    """
    out = out or sys.stdout
    _, plans = load_plans(root)
    chosen = select(plans, specs)
    check_store_dir(root)  # evidence is written there: a regular file in its place is exit 8, said up front
    all_gates = {gate_key(p.id, ph.id, i): g for p, ph in chosen for i, g in enumerate(ph.gates) if isinstance(g, TestGate)}
    from tracker.fingerprint import FileIndex, tree_file_ids

    bench_code, fresh, before = 0, set[str](), None
    current = FileIndex(tree_file_ids(root)) if bench or (all_gates and not force) else FileIndex({})
    if bench:
        from tracker.benchrun import run_bench_gates

        bench_code = run_bench_gates(root, chosen, force, out, dict(current.files))
    elif any(isinstance(g, BenchGate) for _, ph in chosen for g in ph.gates):
        from tracker.benchrun import report_stored  # without --bench: the results already in the repo

        report_stored(root, chosen, out)
    if all_gates and not force:
        from tracker import evidence as ev
        from tracker.history import fresh_test_gates

        from tracker.status import bench_evaluator, compute

        # One store read and one tree scan serve both status and freshness. An unusable store file makes every
        # test gate unmet (as in status), so nothing counts as fresh and everything selected runs.
        store = ev.load(root, strict=False)
        before = compute(plans, store, lambda: current, lambda: bench_evaluator(root, store))
        fresh = fresh_test_gates(plans, store, before, current, list(all_gates))
        if fresh:
            out.write(f"tracker: {len(fresh)} test gate(s) up to date with their evidence, not re-run (--force re-runs)\n")
    gates = {k: g for k, g in all_gates.items() if k not in fresh}
    if not all_gates:
        out.write("no test gates selected: nothing to run\n")
        return bench_code
    if not gates:
        return _report(root, plans, all_gates, root / EVIDENCE_DIR, None, out, before) or bench_code
    # Only existing paths go on the command line: a missing one would abort the whole session.
    paths = sorted({g.test.split("::", 1)[0].rstrip("/") or "." for g in gates.values()})
    existing = [p for p in paths if (root / p).exists()]
    for p in sorted(set(paths) - set(existing)):
        out.write(f"tracker: no such test file or directory: {p}\n")
    import socket

    from tracker.commands.ingest import evidence_name  # same naming as the plugin's, without importing pytest

    name = evidence_name("verify", socket.gethostname())
    evidence = root / EVIDENCE_DIR / name
    with tempfile.TemporaryDirectory(prefix="tracker-verify-") as tmp:
        sel, hashes = Path(tmp, "select.json"), Path(tmp, "gates.json")
        sel.write_text(json.dumps(sorted({(g.test, g.marker) for g in gates.values()}, key=str)))
        hashes.write_text(json.dumps({k: gate_hash(g) for k, g in gates.items()}))
        cmd = pytest_command() + [
            f"--rootdir={root}", f"--tracker-record={root / EVIDENCE_DIR}", f"--tracker-file={name}",
            f"--tracker-gates={hashes}", f"--tracker-select={sel}",
            "--continue-on-collection-errors",  # a file that fails to collect makes its gates unmet, not the run void
            *(pytest_args or []), *existing,
        ]  # fmt: skip
        out.write(f"tracker: running {len(gates)} test gate(s) in one pytest session\n")
        out.flush()
        code = _run_pytest(cmd, root, evidence) if existing else None
    return _report(root, plans, all_gates, evidence, code, out, pytest_args=pytest_args) or bench_code


PYTEST_USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR (pytest is not imported here)


def _judge(root: Path, plans: list[Plan], last: str | None, out: TextIO) -> dict[str, PhaseStatus]:
    """Statuses with the run this machine just recorded (``last``, a store file name) ordered after every
    other store file, whatever their recorded times: an older file, or one from a machine whose clock runs
    ahead, never hides what was just run here."""
    from tracker import evidence as ev
    from tracker.fingerprint import FileIndex, tree_file_ids
    from tracker.status import bench_evaluator, compute

    store = ev.load(root, strict=False, last=last)
    _explain(store, out)
    return compute(plans, store, lambda: FileIndex(tree_file_ids(root)), lambda: bench_evaluator(root, store))


def _run_pytest(cmd: list[str], root: Path, evidence: Path) -> int:
    proc = subprocess.Popen(cmd, cwd=root, env=pytest_env(root))
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.wait()  # pytest got the same SIGINT: let it write its "interrupted" file
        raise InterruptedRunError(f"interrupted: {_recorded(root, evidence)}") from None


def _read_evidence(evidence: Path) -> dict[str, Any]:
    """The run's own evidence file as written by the plugin; {} when there is none (or it cannot be read)."""
    from tracker.fileio import parse_json, read_regular

    try:
        data = parse_json(read_regular(evidence))
    except (FileError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _recorded(root: Path, evidence: Path) -> str:
    """What the interrupted session left in its evidence file, said as it is: a tracker stopped while its
    pytest went on to finish has a complete run recorded, and that run counts."""
    data = _read_evidence(evidence)
    rel = evidence.relative_to(root).as_posix()
    status = data.get("status")
    running = data.get("running") if isinstance(data.get("running"), dict) else {}
    if status == "complete":
        tests = data.get("tests") if isinstance(data.get("tests"), list) else []
        counts = Counter(str(t.get("outcome")) for t in tests if isinstance(t, dict))
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no tests"
        return (f"the tracker was stopped, but its pytest run finished and recorded complete evidence in {rel} "
                f"({summary}); it counts: `tracker status` shows the gates")  # fmt: skip
    if status == "incomplete" and isinstance(running.get("nodeid"), str):
        return (f"the pytest run stopped while running {running['nodeid']} ({rel}): only that test counts, "
                "as an error; no result was recorded as passing")  # fmt: skip
    if status is None:
        return "the pytest run was stopped and left no evidence file: no result was recorded as passing"
    return f"the pytest run was stopped and recorded as {status} ({rel}): no result was recorded as passing"


def _explain(store: Store, out: TextIO) -> None:
    """Say what the evidence behind verify's verdicts is not: files put behind this machine's run, files
    that cannot be used (a time in the future among them), each of which leaves every gate unmet."""
    for rel in store.reordered:
        out.write(f"tracker: {rel} is recorded later than this run (a clock ahead of this one?): it is put "
                  "behind it, and what this machine just ran decides\n")  # fmt: skip
    for line in store.invalid:
        out.write(f"tracker: not used, and every test and bench gate is unmet until it is fixed or removed: {line}\n")


def _report(
    root: Path, plans: list[Plan], gates: dict[str, TestGate], evidence: Path, code: int | None, out: TextIO,
    statuses: dict[str, PhaseStatus] | None = None, pytest_args: list[str] | None = None,
) -> int:
    if code is not None:
        data = _read_evidence(evidence)
        status = data.get("status")
        if code == PYTEST_USAGE_ERROR and status != "complete" and "nodeid" not in (data.get("running") or {}):
            # pytest refused its arguments or configuration before running a test (a test that exits the
            # process with status 4 is a crash: it names the running test, and is reported below).
            what = "its command line (a --pytest-arg)" if pytest_args else "its command line or configuration"
            raise UsageError(f"pytest refused {what} (exit {code}; its message is above): nothing ran")
        if status != "complete":
            what = "left no evidence file" if status is None else f"recorded as {status}"
            running = data.get("running") if isinstance(data.get("running"), dict) else {}
            crashed = f"; it crashed while running {running['nodeid']}, which counts as an error" if isinstance(running.get("nodeid"), str) else ""
            raise InterruptedRunError(f"pytest exited with {code} and its run was {what}{crashed}: nothing counts as passed")
    if statuses is None:
        statuses = _judge(root, plans, evidence.name if code is not None else None, out)
    empty: list[str] = []
    unmet: list[str] = []
    for key, gate in gates.items():
        plan_phase, _, num = key.partition("#")
        v = statuses[plan_phase].verdicts[int(num) - 1]
        mark = "met  " if v.met else "UNMET"
        out.write(f"{mark} {key} {gate.test}: {v.reason}\n")
        if not v.met:
            (empty if "0 tests" in v.reason or "never run" in v.reason else unmet).append(key)
    out.write(f"tracker: evidence {evidence.relative_to(root).as_posix() if code is not None else '(none: nothing to run)'}\n")
    if empty:
        raise NoTestsError(f"{len(empty)} gate(s) collected no tests: {', '.join(empty)}")
    return int(ExitCode.CHECK_FAILED) if unmet else 0
