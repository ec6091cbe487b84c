"""Manual gates: their sign-offs, matched to the gate text they signed (:func:`manual_verdict`), and whether a
gate's definition changed since evidence recorded its hash."""

from __future__ import annotations

from typing import Any

from tracker.core.model import EvidenceSource, GateVerdict, ManualGate, Phase, Store, TestGate, gate_hash


def manual_hashes(phase: Phase) -> tuple[str, ...]:
    """Definition hashes of a phase's manual gates, in order (sign-offs are matched to gates by them)."""
    return tuple(gate_hash(g) for g in phase.gates if isinstance(g, ManualGate))


def manual_verdict(
    key: str, gate: ManualGate, store: Store, phase_manual: tuple[str, ...] = ()
) -> tuple[GateVerdict, dict[str, Any] | None]:
    """The sign-off of manual gate ``key``; (verdict, the sign-off's data). ``phase_manual``: the definition
    hashes of the phase's manual gates now, in order (``manual_hashes``).

    A sign-off belongs to the gate text it signed: the newest one recorded in the same phase with this
    gate's definition hash, wherever the gate sits now (a gate inserted or removed above neither takes nor
    loses it); when two manual gates of the phase have the same text, only at the same position. Failing
    that, one recorded at this position whose phase then had the same manual gates as now except this one:
    the gate's own text was edited, so it still counts and the phase shows stale.
    """
    want = gate_hash(gate)
    phase_prefix = key.rsplit("#", 1)[0] + "#"
    twin = phase_manual.count(want) > 1
    found: tuple[str, dict[str, Any]] | None = None
    for file, data in reversed(store.signoffs):
        recorded = str(data.get("gate_key", ""))
        if not recorded.startswith(phase_prefix):
            continue
        if data.get("gate_hash") == want and (not twin or recorded == key):
            found = (file, data)
            break
        if found is None and recorded == key and _edited_in_place(data, want, phase_manual):
            found = (file, data)
    if found is not None:
        file, data = found
        src = EvidenceSource(file, str(data.get("host", "?")), data.get("commit"), str(data.get("time", "")))
        return GateVerdict(True, f"signed off by {data.get('by')}: {data.get('why')}", src), data
    return GateVerdict(False, "no sign-off recorded (tracker signoff)"), None


def _edited_in_place(data: dict[str, Any], want: str, now: tuple[str, ...]) -> bool:
    """Did the signed gate's text change while every other manual gate of its phase stayed as it was?"""
    then = data.get("phase_manual")
    if not isinstance(then, list) or len(then) != len(now) or data.get("gate_hash") not in then:
        return False  # sign-offs from before phase_manual was recorded: only an exact text match counts
    changed = [i for i, (a, b) in enumerate(zip(then, now, strict=False)) if a != b]
    return len(changed) == 1 and then[changed[0]] == data.get("gate_hash") and now[changed[0]] == want


def gate_changed(key: str, gate: TestGate | ManualGate, recorded: dict[str, str]) -> bool:
    """Did the gate's definition change since evidence that recorded its hash?"""
    return key in recorded and recorded[key] != gate_hash(gate)
