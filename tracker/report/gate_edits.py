"""The gates a change edits (pure): between the plans at a revision and now, each phase's gates added, removed or
redefined, and its dependencies and paths, each edit judged looser (it asks less of the evidence), tighter or
changed (neither: another statistic, another run, a threshold turned around).

A bench gate is judged on live result files, so a threshold relaxed in the plan moves a phase to done with no new
evidence at all: the summary must say so beside the status it reports, or a loosened gate reads as work done.

Gates are matched within a phase by what they check (a test selection and marker, a sign-off's text, a benchmark and
its ``where`` and ``baseline``), not by position: a gate inserted above others does not make them all "changed".
Two gates of one phase that check the same thing are matched in file order. A gate whose ``where`` changed is one gate
removed and one added: what it measures is not the same, and "removed" is the conservative word.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from tracker.core.bench_verdict import DEFAULT_CONFIDENCE
from tracker.core.model import BenchGate, Gate, ManualGate, Phase, Plan, TestGate, gate_key

# The words a reviewer must see: an edit of these kinds can move a phase towards done with no new evidence.
WEAKER = ("removed", "looser")
ORDER = ("removed", "looser", "changed", "added", "tighter")


class GateEdit(NamedTuple):
    """One edit of a phase's gates (or of its ``depends`` / ``paths``) since the revision."""

    key: str  # PLAN/PHASE#N (the gate's number now; at the revision for a removed gate), or PLAN/PHASE
    kind: str  # one of ORDER
    what: str  # the gate, and what changed: ``bench m at most 2 -> at most 10``

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def identity(gate: Gate) -> tuple[str, ...]:
    """What a gate checks, without how strictly: its match key across the two sides."""
    if isinstance(gate, TestGate):
        return ("test", gate.test, gate.marker or "")
    if isinstance(gate, ManualGate):
        return ("manual", gate.manual)
    return ("bench", gate.bench, _canon(gate.where), _canon(gate.baseline))


def describe(gate: Gate) -> str:
    """The gate on one line: ``test tests/x.py``, ``sign-off "..."``, ``bench m (where ...) at most 2``."""
    if isinstance(gate, TestGate):
        return f"test {gate.test}" + (f" (marker {gate.marker})" if gate.marker else "")
    if isinstance(gate, ManualGate):
        return f"sign-off {gate.manual!r}"
    where = ", ".join(f"{k}={v}" for k, v in sorted(gate.where.items()))
    return (
        f"bench {gate.bench}" + (f" ({where})" if where else "") + (f" {_threshold(gate)}" if _threshold(gate) else "")
    )


def _threshold(gate: BenchGate) -> str:
    parts = []
    if gate.at_least is not None:
        parts.append(f"at least {gate.at_least:g}")
    if gate.at_most is not None:
        parts.append(f"at most {gate.at_most:g}")
    return " and ".join(parts)


def _direction(old: float | None, new: float | None, less_is_looser: bool) -> str | None:
    """looser / tighter / changed for one optional number (None: absent, which asks nothing), or None if equal."""
    if old == new:
        return None
    if new is None:
        return "looser"
    if old is None:
        return "tighter"
    return "looser" if (new < old) == less_is_looser else "tighter"


def _bench_verdict(old: BenchGate, new: BenchGate) -> tuple[str, list[str]]:
    words: list[str] = []
    notes: list[str] = []
    if (old.at_least is None) != (new.at_least is None) or (old.at_most is None) != (new.at_most is None):
        words.append("changed")  # a bound added, dropped or turned around
        notes.append(f"{_threshold(old) or 'no threshold'} -> {_threshold(new) or 'no threshold'}")
    else:
        for name, less_is_looser in (("at_least", True), ("at_most", False)):
            a, b = getattr(old, name), getattr(new, name)
            if a != b:
                words.append(_direction(a, b, less_is_looser) or "changed")
                notes.append(f"{name.replace('_', ' ')} {a:g} -> {b:g}")
    confidence = (old.confidence or DEFAULT_CONFIDENCE, new.confidence or DEFAULT_CONFIDENCE)
    if confidence[0] != confidence[1]:  # a lower level: a narrower interval, a verdict on less evidence
        words.append("looser" if confidence[1] < confidence[0] else "tighter")
        notes.append(f"confidence {confidence[0]:g} -> {confidence[1]:g}")
    if old.min_samples != new.min_samples:  # None: no minimum
        words.append(_direction(old.min_samples, new.min_samples, True) or "changed")
        notes.append(f"min_samples {old.min_samples} -> {new.min_samples}")
    if old.hardware != new.hardware:
        words.append("looser" if new.hardware is None else "tighter" if old.hardware is None else "changed")
        notes.append(f"hardware {old.hardware} -> {new.hardware}")
    for name in ("stat", "run", "unit"):
        a, b = getattr(old, name), getattr(new, name)
        if a != b:
            words.append("changed")
            notes.append(f"{name} {a} -> {b}")
    return _overall(words), _marked(words, notes)


def _test_verdict(old: TestGate, new: TestGate) -> tuple[str, list[str]]:
    words: list[str] = []
    notes: list[str] = []
    for name in ("skips_allowed", "xfails_allowed"):  # more allowed: fewer outcomes count against the gate
        a, b = set(getattr(old, name)), set(getattr(new, name))
        if a != b:
            words.append("looser" if b > a else "tighter" if b < a else "changed")
            notes.append(f"{name} {sorted(a)} -> {sorted(b)}")
    if old.options != new.options:
        words.append("changed")
        notes.append(f"options {list(old.options)} -> {list(new.options)}")
    return _overall(words), _marked(words, notes)


def _overall(words: Sequence[str]) -> str:
    """One word for a gate's edits: looser when any of them asks less (a threshold relaxed stays looser beside a
    ``min_samples`` raised: the reviewer must see it), else changed when one of them is neither, else tighter."""
    kinds = set(words)
    if "looser" in kinds:
        return "looser"
    if "changed" in kinds or not kinds:  # not kinds: the definitions differ in a way no rule above names
        return "changed"
    return "tighter"


def _marked(words: Sequence[str], notes: Sequence[str]) -> list[str]:
    """The notes, each with its own word where they are not all of one kind: ``at most 2 -> 10 (looser)``."""
    if len(set(words)) < 2:
        return list(notes)
    return [f"{n} ({w})" for w, n in zip(words, notes, strict=True)]


def _redefined(old: Gate, new: Gate) -> tuple[str, str]:
    if isinstance(old, BenchGate) and isinstance(new, BenchGate):
        kind, notes = _bench_verdict(old, new)
        return kind, f"bench {new.bench}: " + "; ".join(notes)
    if isinstance(old, TestGate) and isinstance(new, TestGate):
        kind, notes = _test_verdict(old, new)
        return kind, f"{describe(new)}: " + "; ".join(notes)
    return "changed", describe(new)


def phase_edits(plan_id: str, old: Phase, new: Phase) -> list[GateEdit]:
    """The edits of one phase present on both sides, in the order of :data:`ORDER`, then by gate number."""
    out: list[GateEdit] = []
    pending: dict[tuple[str, ...], list[int]] = {}
    for i, gate in enumerate(old.gates):
        pending.setdefault(identity(gate), []).append(i)
    # Unchanged gates first (wherever they moved), then what is left of each identity in file order.
    redefined: list[int] = []
    for j, gate in enumerate(new.gates):
        queue = pending.get(identity(gate), [])
        same = next((i for i in queue if old.gates[i].definition == gate.definition), None)
        if same is None:
            redefined.append(j)
        else:
            queue.remove(same)
    for j in redefined:
        gate = new.gates[j]
        left = pending.get(identity(gate), [])
        if not left:
            out.append(GateEdit(gate_key(plan_id, new.id, j), "added", describe(gate)))
            continue
        kind, what = _redefined(old.gates[left.pop(0)], gate)
        out.append(GateEdit(gate_key(plan_id, new.id, j), kind, what))
    for queue in pending.values():
        for i in queue:
            out.append(GateEdit(gate_key(plan_id, old.id, i), "removed", describe(old.gates[i])))
    key = f"{plan_id}/{new.id}"
    dropped = [d for d in old.depends if d not in new.depends]
    if dropped:  # a dependency no longer held: the phase can be done before it
        out.append(GateEdit(key, "looser", "no longer depends on " + ", ".join(dropped)))
    if added := [d for d in new.depends if d not in old.depends]:
        out.append(GateEdit(key, "tighter", "now depends on " + ", ".join(added)))
    if gone := [p for p in old.paths if p not in new.paths]:  # fewer changed files make its evidence stale
        out.append(GateEdit(key, "looser", "paths no longer cover " + ", ".join(gone)))
    if more := [p for p in new.paths if p not in old.paths]:
        out.append(GateEdit(key, "tighter", "paths now also cover " + ", ".join(more)))
    return sorted(out, key=lambda e: ORDER.index(e.kind))


def gate_edits(before: Sequence[Plan], after: Sequence[Plan]) -> list[GateEdit]:
    """Every edit of the phases on both sides (a phase new or gone is a status change, not an edit), in now's plan
    file order."""
    then = {(p.id, ph.id): ph for p in before for ph in p.phases}
    out: list[GateEdit] = []
    for plan in after:
        for phase in plan.phases:
            old = then.get((plan.id, phase.id))
            if old is not None:
                out.extend(phase_edits(plan.id, old, phase))
    return out
