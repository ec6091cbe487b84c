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
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from tracker.base.cache import Cache, command_cache
from tracker.base.contract import EVIDENCE_DIR
from tracker.base.selection import marker_matches, selects
from tracker.commands.common import PLUGIN_ARGS, inert, json_text, pytest_command, pytest_env, select
from tracker.core.model import (
    BenchGate,
    Gate,
    GateVerdict,
    ManualGate,
    Phase,
    PhaseStatus,
    Plan,
    Status,
    Store,
    TestGate,
    gate_hash,
    gate_key,
)
from tracker.errors import ExitCode, FileError, InterruptedRunError, NoTestsError, UsageError
from tracker.plans.load import load_plans
from tracker.store.evidence import check_store_dir

PYTEST_USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR (pytest is not imported here)


def run(
    root: Path,
    specs: list[str],
    pytest_args: list[str] | None = None,
    out: TextIO | None = None,
    bench: bool = False,
    force: bool = False,
    as_json: bool = False,
    alone: bool = False,
) -> int:
    """Run the gates, record evidence, print every selected gate's verdict; exit 0 when every gate of the
    selected phases is met on fresh evidence, else 1 (5: a test gate collected no tests; 6: the run was
    interrupted). ``as_json``: stdout carries one object (:func:`verdict_document`), progress goes to stderr.

    Test gates whose passing evidence still matches the code are not re-run unless ``force``;
    ``bench`` also runs the selected bench gates' ``run`` commands (:mod:`tracker.commands.verify_bench`);
    ``alone`` runs each test gate in a pytest session of its own, as ``pytest GATE`` would, rather than all in one
    (every selected gate: evidence up to date may come from a shared session).
    """
    from tracker.commands.standby import release_standbys

    try:
        with command_cache(root) as cache:  # what reading learned is written when verify ends
            return _verify(root, specs, pytest_args, out or sys.stdout, bench, force, as_json, cache, alone)
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
) -> int:
    log = sys.stderr if as_json else out  # progress: with --json, stdout carries the one object
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
    with _stdout_to_stderr() if as_json else nullcontext():
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
        with _stdout_to_stderr() if as_json else nullcontext():
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
        log.write(f"tracker: {line}\n")
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
    else:
        _print_verdicts(root, chosen, judged.statuses, gates, session, out)
    if empty:
        raise NoTestsError(f"{len(empty)} gate(s) collected no tests: {', '.join(empty)}")
    return code


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
    """``env``: the sessions' environment as :func:`_verify` made it before forking the first session's child (its
    bytecode caches pruned then): the first session runs on it, and on the tree read then, when no bench command ran
    since (``bench``: they may write anywhere)."""
    from tracker.base.fingerprint import FileIndex, IgnoredInputs, id_now, tree_file_ids

    bench_code, bench_failed = 0, dict[str, str]()
    current = FileIndex(tree_file_ids(root)) if bench or (all_gates and not force) else None
    if current is not None:
        current.id_now = functools.partial(id_now, root)
        current.ignored_inputs = IgnoredInputs(root)
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
    ``as_read``: the environment :func:`_verify` made before forking the session's child, when nothing but the
    tracker ran since (the tree as read then, the bytecode caches as pruned then)."""
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


def check_pytest_args(root: Path, pytest_args: list[str], paths: list[str]) -> None:
    """Refuse (UsageError, exit 3) ``--pytest-arg`` values the run would not accept, when no run checks them:
    nothing is left to run, or ``--bench`` commands run first.

    pytest itself judges them, in a process given the same arguments, root directory and test paths as the run
    (so the same plugins and initial ``conftest.py`` files define the options), with
    :mod:`tracker.pytest_argcheck` ending it before anything is configured or collected (one pytest start, ~0.3 s).
    Refused too: options verify sets itself (``--tracker-*``), an expression for ``-k``/``-m`` that does not
    parse, a path that does not exist, and options after which pytest would not run the tests
    (``--collect-only``, ``--help``, ...). A run checks the same in its own process (:func:`_run_gates`).
    """
    _refuse_own_options(pytest_args)
    with tempfile.TemporaryDirectory(prefix="tracker-argcheck-") as tmp:
        answer = Path(tmp, "answer.json")
        cmd = [*pytest_command(), "-p", "tracker.pytest_argcheck", f"--rootdir={root}", *pytest_args, *paths]
        env = {**pytest_env(root, bytecode=True), "TRACKER_ARGCHECK": str(answer)}
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, errors="replace", check=False)
        problems = _answer(answer)
    if problems is None:  # pytest stopped before our hook, and said why: show it as the run would have
        sys.stderr.write(proc.stdout + proc.stderr)
    _refuse_arguments(problems, proc.returncode)


def _refuse_outside(root: Path, chosen: list[tuple[Plan, Phase]]) -> None:
    """PlanError (exit 2, ``path:line`` each) for test gates whose path leaves the repository through a symlink
    (:mod:`tracker.base.gate_paths`, lint's rule): their tests are not the repository's, so verify runs none of them."""
    from tracker.base.gate_paths import OutsideCheck
    from tracker.errors import PlanError

    outside = OutsideCheck(root)
    problems = [
        f"{plan.path}:{gate.line}: phase {phase.id} gate {i}: {why} (verify runs no test from outside it)"
        for plan, phase in chosen
        for i, gate in enumerate(phase.gates, 1)
        if isinstance(gate, TestGate) and (why := outside(gate.test))
    ]
    if problems:
        raise PlanError(problems)


def _refuse_own_options(pytest_args: list[str]) -> None:
    own = [a for a in pytest_args if a.startswith("--tracker-")]
    if own:
        raise UsageError(f"--pytest-arg {own[0]}: verify sets the tracker's own pytest options itself")
    from tracker.base.selection import plugin_args, plugin_names

    for name in plugin_args(pytest_args):  # -p no:NAME anywhere, after `--` too: pytest's early scan reads it there
        from tracker.pytest_plugin import SAFE_NO_PLUGINS

        if name.startswith("no:") and name[3:].removeprefix("pytest_") not in SAFE_NO_PLUGINS:
            raise UsageError(
                f"--pytest-arg: -p {name}: may turn a failing test into a pass (a run without that plugin meets no "
                "gate): nothing ran"
            )
    for name in plugin_names(pytest_args):  # -p NAME, -pNAME: a plugin's hooks may drop or change tests unseen
        from tracker.pytest_plugin import HARMLESS_LOADS  # what a -p may load without narrowing a run (imports pytest)

        if name not in HARMLESS_LOADS:
            raise UsageError(
                f"--pytest-arg: -p {name}: a plugin may drop or change tests without a trace; a gate that needs it "
                'names it in its options (options = ["-p", "NAME"]): nothing ran'
            )


def _answer(path: Path) -> list[str] | None:
    """What :mod:`tracker.pytest_argcheck` found; None when its hook never ran (pytest stopped before it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [str(x) for x in data] if isinstance(data, list) else None


def _refuse_arguments(problems: list[str] | None, code: int) -> None:
    """UsageError for pytest arguments that pytest refused (its message is already on stderr) or that the check
    found wrong; nothing when they are fine."""
    if problems is None:
        if code != 0:
            raise UsageError(
                f"pytest refused its command line (a --pytest-arg) (exit {code}; its message is above): nothing ran"
            )
        raise UsageError("--pytest-arg: pytest answered without running tests (--version?): nothing ran")
    if problems:
        raise UsageError("--pytest-arg: " + "; ".join(problems) + ": nothing ran")


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


class _Judgement:
    """Every phase's status on the store as it stands (``last``: this machine's run, ordered after every other
    file), with the store, the working tree and the bench evaluator it was judged on (to say what is stale), through
    the command's ``cache``."""

    def __init__(
        self, root: Path, plans: list[Plan], cache: Cache, last: str | tuple[str, ...] | None = None, index: Any = None
    ) -> None:
        from tracker.core.status import compute
        from tracker.store import evidence as ev

        self.root = root
        self.cache = cache
        self.store = ev.load(root, strict=False, last=last)
        self._index = index
        self._bench: Any = None
        from tracker.base.gate_paths import MissingCheck, OutsideCheck

        self.statuses = compute(plans, self.store, self.index, self.bench, OutsideCheck(root), MissingCheck(root))

    def index(self) -> Any:
        """The working tree's file ids (read once)."""
        if self._index is None:
            from tracker.base.fingerprint import FileIndex, tree_file_ids

            self._index = FileIndex(tree_file_ids(self.root))
        return self._index

    def bench(self) -> Any:
        """The bench evaluator (built once, when a phase has a bench gate)."""
        if self._bench is None:
            from tracker.store.derive import repo_bench_evaluator

            self._bench = repo_bench_evaluator(self.root, self.store, cache=self.cache)
        return self._bench

    def stale(self, chosen: list[tuple[Plan, Phase]]) -> dict[str, str]:
        """{gate key: what changed} for the met gates of the chosen stale phases whose evidence no longer matches."""
        if not any(self.statuses[f"{p.id}/{ph.id}"].status is Status.STALE for p, ph in chosen):
            return {}
        from tracker.core.status import stale_gates

        return stale_gates(chosen, self.statuses, self.store, self.index(), self._bench)


class GateLine(NamedTuple):
    """One gate as verify reports it: ``verdict`` is ``met``, ``unmet`` or ``stale``."""

    key: str
    number: int  # the gate's position in its phase, from 1 (not ``index``: that is tuple.index)
    kind: str  # test | bench | manual
    label: str
    verdict: str
    reason: str
    stale: str | None
    gate: Gate
    v: GateVerdict


def gate_verdicts(
    chosen: list[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    stale: dict[str, str],
    bench_failed: dict[str, str],
) -> list[GateLine]:
    """Every gate of the chosen phases with its true verdict: a bench gate whose command just failed is unmet,
    a met gate whose evidence no longer matches is stale (saying what changed and how to refresh it), a manual
    gate without a sign-off says how to sign it."""
    out: list[GateLine] = []
    for plan, phase in chosen:
        st = statuses[f"{plan.id}/{phase.id}"]
        for i, (gate, v) in enumerate(zip(phase.gates, st.verdicts, strict=False)):
            key = gate_key(plan.id, phase.id, i)
            kind = type(gate).__name__.removesuffix("Gate").lower()
            verdict, reason, why = ("met" if v.met else "unmet"), v.reason, stale.get(key)
            if key in bench_failed:
                verdict, reason, why = "unmet", bench_failed[key], None
            elif why:
                verdict, reason = "stale", f"{v.reason}; but stale: {why} ({_refresh(plan, phase, i, gate)})"
            elif isinstance(gate, ManualGate) and not v.met:
                reason = f"unsigned: run `{_signoff_command(plan, phase, i)}`"
            out.append(GateLine(key, i + 1, kind, _label(gate), verdict, reason, why, gate, v))
    return out


def _signoff_command(plan: Plan, phase: Phase, i: int) -> str:
    return f"tracker signoff {plan.id}/{phase.id} --gate {i + 1} --by WHO --why TEXT"


def _refresh(plan: Plan, phase: Phase, i: int, gate: Gate) -> str:
    """How a stale gate gets fresh evidence."""
    if isinstance(gate, ManualGate):
        return f"sign it off again: {_signoff_command(plan, phase, i)}"
    if isinstance(gate, BenchGate):
        return (
            f"re-measure: tracker verify --bench {plan.id}/{phase.id}"
            if gate.run
            else "a new result file meets it again"
        )
    return f"re-run: tracker verify --force {plan.id}/{phase.id}"


def _label(gate: Gate) -> str:
    if isinstance(gate, TestGate):
        return gate.test
    if isinstance(gate, BenchGate):
        return gate.bench
    text = " ".join(gate.manual.split())
    return "manual " + json.dumps(text if len(text) <= 60 else text[:57] + "...", ensure_ascii=False)


MARK = {"met": "met  ", "unmet": "UNMET", "stale": "STALE"}


def _print_verdicts(
    root: Path,
    chosen: list[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    gates: list[GateLine],
    session: _Session,
    out: TextIO,
) -> None:
    for g in gates:
        out.write(f"{MARK[g.verdict]} {inert(g.key)} {inert(g.label)}: {inert(g.reason)}\n")
    for file in session.files() or (None,):
        out.write(f"tracker: evidence {file.relative_to(root).as_posix() if file else '(none: nothing to run)'}\n")
    by_phase: dict[str, list[GateLine]] = {}
    for g in gates:
        by_phase.setdefault(g.key.partition("#")[0], []).append(g)
    for plan, phase in chosen:
        key = f"{plan.id}/{phase.id}"
        from tracker.report.render import status_phrase  # the status as every view says it (done*, ...)

        shown = status_phrase(plan, phase, statuses)
        out.write(f"tracker: {inert(phase_summary(key, statuses[key], by_phase.get(key, []), shown))}\n")


def phase_summary(key: str, st: PhaseStatus, gates: list[GateLine], shown: str | None = None) -> str:
    """``0001/P1 is done``, or what keeps it from being done: ``0001/P1 is in-progress: its test gates passed,
    but gate 2 (manual) is not signed off``. ``shown``: the status as every view says it
    (:func:`tracker.report.render.status_phrase`: ``done*``, ``blocked, and also failing 2 of its own gates``)."""
    word = shown or st.status.value
    if not gates:
        return f"{key} is {word}: it has no gates, so it is never done"
    left = [g for g in gates if g.verdict != "met"]
    if not left:
        return f"{key} is {word}"
    tests = [g for g in gates if g.kind == "test"]
    passed = (
        ("its test gate passed, but " if len(tests) == 1 else "its test gates passed, but ")
        if tests and all(g.verdict == "met" for g in tests)
        else ""
    )
    said = {("unmet", "manual"): "not signed off", ("stale", "manual"): "signed off on what has changed since"}
    what = ", ".join(f"gate {g.number} ({g.kind}) is {said.get((g.verdict, g.kind), g.verdict)}" for g in left)
    blocked = f"; blocked by {', '.join(st.blocked_by)}" if st.blocked_by else ""
    return f"{key} is {word}, not done: {passed}{what}{blocked}"


def verdict_document(
    root: Path,
    chosen: list[tuple[Plan, Phase]],
    statuses: dict[str, PhaseStatus],
    gates: list[GateLine],
    session: _Session,
    warnings: list[str],
    code: int,
) -> dict[str, Any]:
    """The ``tracker verify --json`` object (README): the exit code, this run's evidence file, the test gates it
    ran and those it did not re-run, and per selected phase its status, a one-line summary and every gate's
    verdict (``met``/``unmet``/``stale``) with its reason, what made it stale and its evidence's source."""

    def src(v: GateVerdict) -> dict[str, Any] | None:
        s = v.source
        return None if s is None else {"file": s.file, "machine": s.machine, "commit": s.commit, "time": s.time}

    by_phase: dict[str, list[GateLine]] = {}
    for g in gates:
        by_phase.setdefault(g.key.partition("#")[0], []).append(g)
    from tracker.report.render import status_phrase

    phases = []
    for plan, phase in chosen:
        key = f"{plan.id}/{phase.id}"
        st = statuses[key]
        phases.append(
            {
                "plan": plan.id,
                "id": phase.id,
                "status": st.status.value,
                "shown": (shown := status_phrase(plan, phase, statuses)),
                "summary": phase_summary(key, st, by_phase.get(key, []), shown),
                "blocked_by": list(st.blocked_by),
                "changed": list(st.changed),
                "note": st.note,
                "gates": [
                    {
                        "key": g.key,
                        "index": g.number,
                        "kind": g.kind,
                        "definition": g.gate.definition,
                        "verdict": g.verdict,
                        "failed": g.v.failed and g.verdict == "unmet",
                        "reason": g.reason,
                        "stale": g.stale,
                        "source": src(g.v),
                    }
                    for g in by_phase.get(key, [])
                ],
            }
        )
    return {
        "exit": code,
        "evidence": session.evidence.relative_to(root).as_posix() if session.evidence else None,
        "evidence_files": [f.relative_to(root).as_posix() for f in session.files()],
        "ran": session.ran,
        "not_rerun": session.fresh,
        "phases": phases,
        "warnings": warnings,
    }


def _read_evidence(evidence: Path) -> dict[str, Any]:
    """The run's own evidence file as written by the plugin; {} when there is none (or it cannot be read)."""
    from tracker.base.fileio import parse_json, read_regular

    try:
        data = parse_json(read_regular(evidence))
    except (FileError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _crashed_in(evidence: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The ``running`` record of the run's evidence ({} when none), made precise by the plugin's running slot:
    the evidence file names the crashed test's file when other tests of it ran, the slot the very test
    (:func:`tracker.names.crashed_test`). Read only once pytest has exited: nothing writes the slot any more."""
    from tracker.store.evidence import crashed_test

    running = data.get("running")
    if not isinstance(running, dict):
        return {}
    return crashed_test(evidence, running, root=evidence.parent.parent.parent)


def _recorded(root: Path, evidence: Path) -> str:
    """What the interrupted session left in its evidence file, said as it is: a tracker stopped while its
    pytest went on to finish has a complete run recorded, and that run counts."""
    data = _read_evidence(evidence)
    rel = evidence.relative_to(root).as_posix()
    status = data.get("status")
    running = _crashed_in(evidence, data)
    if status == "complete":
        given = data.get("tests")
        tests: list[Any] = given if isinstance(given, list) else []
        counts = Counter(str(t.get("outcome")) for t in tests if isinstance(t, dict))
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no tests"
        return (
            f"the tracker was stopped, but its pytest run finished and recorded complete evidence in {rel} "
            f"({summary}); it counts: `tracker status` shows the gates"
        )
    if status == "incomplete" and isinstance(running.get("nodeid"), str):
        return (
            f"the pytest run stopped while running {running['nodeid']} ({rel}): only that test counts, "
            "as an error; no result was recorded as passing"
        )
    if status is None:
        return "the pytest run was stopped and left no evidence file: no result was recorded as passing"
    return f"the pytest run was stopped and recorded as {status} ({rel}): no result was recorded as passing"


def _explain(store: Store, moved: str | None = None) -> list[str]:
    """What the evidence behind verify's verdicts is not: files put behind this machine's run (``moved``: what
    :func:`_record_after` did about it), files that cannot be used (a time in the future among them), each of
    which leaves every gate unmet."""
    lines = [
        f"{rel} is recorded later than this run (a clock ahead of this one?): it is put behind it, and what this "
        "machine just ran decides"
        for rel in store.reordered
    ]
    lines += [moved] if moved else []
    lines += [
        f"not used, and every test and bench gate is unmet until it is fixed or removed: {line}"
        for line in store.invalid
    ]
    return lines


def _narrowed(store: Store, evidence: Path | None) -> list[str]:
    """What this run's own evidence says of options that narrowed its collection (``--pytest-arg=--ignore=...``):
    such a run never names its gates' tests (README "Status rules"), so say so."""
    from tracker.core.run_facts import narrowed

    own = next((r for r in reversed(store.runs) if evidence and r.file.endswith("/" + evidence.name)), None)
    why = narrowed(own) if own is not None else None
    if why is None:
        return []
    return [
        f"this run's collection was narrowed by {why}: it does not say which tests its gates select (a test it did "
        "not collect keeps its older outcome; a gate no other run collected all of stays unmet)"
    ]


def _record_after(evidence: Path, store: Store) -> str | None:
    """Rewrite this run's evidence file (atomically) with a time one second after the newest file that
    :func:`tracker.store.evidence.load` put behind it, keeping this machine's own clock reading in
    ``provenance.clock_time``: the store orders files by time, so without this, status would judge on the file
    from a clock ahead, which verify just judged behind this run. Returns what was done, for the user."""
    import calendar
    import time

    from tracker.base.contract import UTC_FORMAT
    from tracker.base.fileio import atomic_write
    from tracker.store.evidence import check_document

    times = _times_of(store, set(store.reordered))
    data = _read_evidence(evidence)
    prov = data.get("provenance")
    if not times or not isinstance(prov, dict):
        return None
    later = time.strftime(UTC_FORMAT, time.gmtime(calendar.timegm(time.strptime(max(times), UTC_FORMAT)) + 1))
    rel = (EVIDENCE_DIR / evidence.name).as_posix()
    prov["clock_time"], prov["time"] = prov.get("time"), later
    try:
        check_document(data)
        atomic_write(evidence, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    except (ValueError, OSError) as err:
        return (
            f"{rel} could not be recorded as later than them ({err}): `tracker status` may judge on them until it "
            "runs again"
        )
    return (
        f"{rel} is recorded at {later}, one second after them (this machine's clock said {prov['clock_time']}, kept "
        "as provenance.clock_time): `tracker status` orders the runs as verify judged them"
    )


def _times_of(store: Store, files: set[str]) -> list[str]:
    """The recorded UTC times of the store's ``files`` (their paths relative to the repository root)."""
    from tracker.base.contract import utc_time

    times = [run.time for run in store.runs if run.file in files]
    times += [
        str(utc_time(doc.get("time"))) for rel, doc in store.signoffs if rel in files and utc_time(doc.get("time"))
    ]
    for rel, doc in store.bench:
        prov = doc.get("provenance") if isinstance(doc, dict) else None
        when = utc_time(prov.get("time")) if isinstance(prov, dict) else None
        if rel in files and when:
            times.append(when)
    return times


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
