"""Judging for ``tracker verify``: every phase's status on the store as it stands after the sessions
(:class:`_Judgement`), every selected gate's verdict with its reason (:func:`gate_verdicts`: met, unmet or stale,
how to refresh or sign it), and the warnings about the evidence judged on (:func:`_explain`, :func:`_narrowed`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from tracker.base.cache import Cache
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
    gate_key,
)


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
            from tracker.store.derive import working_tree_index

            # Without the ignored inputs' listing: the gates this verify ran read them (a run records what it
            # imported) and the gates it did not run were judged fresh with it (verify_sessions); status checks them.
            self._index = working_tree_index(self.root, self.cache, ignored_inputs=False)
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


def _explain(store: Store, moved: str | None = None) -> list[str]:
    """What the evidence behind verify's verdicts is not: files put behind this machine's run (``moved``: what
    :func:`tracker.commands.verify_evidence._record_after` did about it), files that cannot be used (a time in the
    future among them), each of which leaves every gate unmet."""
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
    such a run never names its gates' tests (docs/reference.md, "Status rules"), so say so."""
    from tracker.core.run_facts import narrowed

    own = next((r for r in reversed(store.runs) if evidence and r.file.endswith("/" + evidence.name)), None)
    why = narrowed(own) if own is not None else None
    if why is None:
        return []
    return [
        f"this run's collection was narrowed by {why}: it does not say which tests its gates select (a test it did "
        "not collect keeps its older outcome; a gate no other run collected all of stays unmet)"
    ]
