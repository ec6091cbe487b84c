"""``tracker lint`` (tracker/commands/lint.py): what it reports, warns about, and what it costs."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tracker_testutil import phase, plan_text


def _many_gates_repo(repo: Callable[..., Path], n: int) -> Path:
    gates = [f'test = "tests/test_many.py::test_{i}"' for i in range(n)]
    tests = "".join(f"def test_{i}():\n    pass\n" for i in range(n))
    return repo(
        {"plans/0001-demo.md": plan_text(phases=phase("P1", *gates, paths='"tests/**"')), "tests/test_many.py": tests}
    )


def test_gate_problems_cost_linear_time_in_the_gates(repo: Callable[..., Path]) -> None:
    # issue 24: every gate tested every collected test (5,000 gates: lint took 20 s, 25 million selects() calls)
    from tracker.commands.lint import gate_problems
    from tracker.plans import load_plans

    def cpu(n: int) -> float:
        root = _many_gates_repo(repo, n)
        plans = load_plans(root)[1]
        start = time.process_time()  # this process only: pytest's collection runs in a child
        assert gate_problems(root, plans) == []
        return time.process_time() - start

    small, large = cpu(400), cpu(1600)
    assert large / small < 8, f"4x the gates cost {large / small:.1f}x the time (linear: ~4x, quadratic: ~16x)"
