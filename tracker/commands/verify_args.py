"""What ``tracker verify`` refuses before or instead of running a test: ``--pytest-arg`` values that pytest or
verify would not accept (:func:`check_pytest_args`, exit 3), and test gates whose path leaves the repository
(:func:`_refuse_outside`, exit 2).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tracker.commands.common import pytest_command, pytest_env
from tracker.core.model import Phase, Plan, TestGate
from tracker.errors import UsageError


def check_pytest_args(root: Path, pytest_args: list[str], paths: list[str]) -> None:
    """Refuse (UsageError, exit 3) ``--pytest-arg`` values the run would not accept, when no run checks them:
    nothing is left to run, or ``--bench`` commands run first.

    pytest itself judges them, in a process given the same arguments, root directory and test paths as the run
    (so the same plugins and initial ``conftest.py`` files define the options), with
    :mod:`tracker.pytest_argcheck` ending it before anything is configured or collected (one pytest start, ~0.3 s).
    Refused too: options verify sets itself (``--tracker-*``), an expression for ``-k``/``-m`` that does not
    parse, a path that does not exist, and options after which pytest would not run the tests
    (``--collect-only``, ``--help``, ...). A run checks the same in its own process
    (:func:`tracker.commands.verify_sessions._run_gates`).
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


def _refuse_own_options(pytest_args: list[str]) -> None:
    own = [a for a in pytest_args if a.startswith("--tracker-")]
    if own:
        raise UsageError(f"--pytest-arg {own[0]}: verify sets the tracker's own pytest options itself")
    from tracker.base.selection import plugin_args, plugin_names

    for name in plugin_args(pytest_args):  # -p no:NAME anywhere, after `--` too: pytest's early scan reads it there
        from tracker.plugin.options import SAFE_NO_PLUGINS

        if name.startswith("no:") and name[3:].removeprefix("pytest_") not in SAFE_NO_PLUGINS:
            raise UsageError(
                f"--pytest-arg: -p {name}: may turn a failing test into a pass (a run without that plugin meets no "
                "gate): nothing ran"
            )
    for name in plugin_names(pytest_args):  # -p NAME, -pNAME: a plugin's hooks may drop or change tests unseen
        from tracker.plugin.options import HARMLESS_LOADS  # what a -p may load without narrowing a run (imports pytest)

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
