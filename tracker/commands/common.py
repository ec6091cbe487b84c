"""Helpers shared by commands: choosing plans/phases from arguments, the pytest command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tracker.errors import UsageError
from tracker.model import Phase, Plan


def select(plans: list[Plan], specs: list[str]) -> list[tuple[Plan, Phase]]:
    """Phases named by ``PLAN`` or ``PLAN/PHASE`` arguments (all phases when ``specs`` is empty)."""
    if not specs:
        return [(p, ph) for p in plans for ph in p.phases]
    by_id = {p.id: p for p in plans}
    out: list[tuple[Plan, Phase]] = []
    for spec in specs:
        plan_id, _, phase_id = spec.partition("/")
        plan = by_id.get(plan_id)
        if plan is None:
            known = ", ".join(sorted(by_id)) or "none"
            raise UsageError(f"unknown plan '{plan_id}' (known plans: {known})")
        if not phase_id:
            out.extend((plan, ph) for ph in plan.phases)
            continue
        phase = plan.phase(phase_id)
        if phase is None:
            known = ", ".join(ph.id for ph in plan.phases) or "none"
            raise UsageError(f"unknown phase '{phase_id}' in plan {plan.id} (its phases: {known})")
        out.append((plan, phase))
    seen: set[tuple[str, str]] = set()
    return [x for x in out if (k := (x[0].id, x[1].id)) not in seen and not seen.add(k)]  # type: ignore[func-returns-value]


def pytest_command() -> list[str]:
    """``python -m pytest`` with our plugin loaded exactly once.

    When the ``pytest11`` entry point is installed, pytest loads the plugin itself and a second
    ``-p tracker.pytest_plugin`` would fail ("Plugin already registered").
    """
    cmd = [sys.executable, "-m", "pytest"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") or not _entry_point_installed():
        cmd += ["-p", "tracker.pytest_plugin"]
    return cmd


def _entry_point_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == "tracker.pytest_plugin" for ep in entry_points(group="pytest11"))


def pytest_env(root: Path) -> dict[str, str]:
    """Environment for the nested pytest: ``tracker`` importable there even when it is run from a
    source checkout rather than installed (the tests under ``root`` may live in another repository)."""
    env = dict(os.environ)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        env["PYTHONPATH"] = os.pathsep.join(x for x in (str(checkout), env.get("PYTHONPATH", "")) if x)
    return env
