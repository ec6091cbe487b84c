"""Checks across plans: duplicate plan ids, unknown dependencies, dependency cycles; placeholder gates left as is."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from tracker.core.model import Gate, ManualGate, Phase, Plan


def qualify(plan_id: str, dep: str) -> str:
    """``P1`` in plan 0002 -> ``0002/P1``; ``0001/P3`` stays."""
    return dep if "/" in dep else f"{plan_id}/{dep}"


class CrossProblem(NamedTuple):
    """A problem across plans: the plan file it is reported in, the ``path:line: message`` line, for an
    unknown dependency the plan id it points into (``0002`` for ``0002/P9``; None otherwise), and for a
    duplicate plan id the file that had it first."""

    path: str
    message: str
    into: str | None = None
    also: str | None = None


def cross_plan_problems(plans: list[Plan]) -> list[str]:
    """Every problem that needs more than one plan to see, as ``path:line: message``."""
    return [p.message for p in cross_plan_findings(plans)]


def cross_plan_findings(plans: list[Plan]) -> list[CrossProblem]:
    """:func:`cross_plan_problems` with the file each is reported in (a duplicate plan id: the later file)."""
    problems: list[CrossProblem] = []
    by_id: dict[str, Plan] = {}
    for plan in plans:
        if plan.id in by_id:
            first = by_id[plan.id].path
            problems.append(
                CrossProblem(
                    plan.path, f"{plan.path}:{plan.line}: duplicate plan id '{plan.id}' (also {first})", also=first
                )
            )
        else:
            by_id[plan.id] = plan
    phases = {f"{p.id}/{ph.id}": (p, ph) for p in by_id.values() for ph in p.phases}
    graph: dict[str, list[str]] = {}
    for key, (plan, phase) in phases.items():
        deps = [qualify(plan.id, d) for d in phase.depends]
        where = f"{plan.path}:{phase.depends_line or phase.line}"
        for raw, dep in zip(phase.depends, deps, strict=True):
            if dep not in phases:
                problems.append(
                    CrossProblem(
                        plan.path, f"{where}: phase {phase.id}: unknown dependency '{raw}'", dep.split("/", 1)[0]
                    )
                )
            elif dep == key:
                problems.append(CrossProblem(plan.path, f"{where}: phase {phase.id} depends on itself"))
        graph[key] = [d for d in deps if d in phases and d != key]
    problems.extend(_cycles(graph, phases))
    return problems


def _cycles(graph: dict[str, list[str]], phases: dict[str, tuple[Plan, Phase]]) -> list[CrossProblem]:
    """One message per dependency cycle (iterative DFS; reported at the cycle's first phase)."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    out: list[CrossProblem] = []
    for start in graph:
        if start in state:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                state[node] = 1
                path.append(node)
            if i < len(graph[node]):
                stack.append((node, i + 1))
                nxt = graph[node][i]
                if state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    plan, phase = phases[nxt]
                    out.append(
                        CrossProblem(
                            plan.path,
                            f"{plan.path}:{phase.depends_line or phase.line}: dependency cycle: {' -> '.join(cycle)}",
                        )
                    )
                elif nxt not in state:
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return out


# The manual gate ``tracker new`` writes (templates/plan.md): a placeholder, until someone says what to confirm.
TEMPLATE_MANUAL = "Describe what a reviewer must confirm before this phase counts as done"


def is_placeholder(gate: Gate) -> bool:
    """Is ``gate`` still the template's placeholder manual gate? Its words compared, case, spacing, punctuation,
    markup, invisible format characters and compatibility forms (NFKC: a fullwidth letter) aside: a period added
    says nothing a reviewer could confirm."""
    return isinstance(gate, ManualGate) and _words(gate.manual) == _words(TEMPLATE_MANUAL)


def _words(text: str) -> list[str]:
    # Format characters (a zero-width space, a soft hyphen, a word joiner) are invisible: they split no word.
    seen = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return re.findall(r"[^\W_]+", seen.casefold())


def placeholder_problems(plans: list[Plan]) -> list[str]:
    """The template's placeholder gates left as they are: ``tracker new``'s plan must be edited before it can pass
    lint (or be signed off: :func:`is_placeholder`)."""
    return [
        f"{plan.path}:{g.line}: phase {ph.id} gate {i}: still the template's placeholder gate: edit it to say what "
        "a reviewer must confirm (or make it a test or bench gate)"
        for plan in plans
        for ph in plan.phases
        for i, g in enumerate(ph.gates, 1)
        if is_placeholder(g)
    ]
