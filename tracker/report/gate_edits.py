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

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from tracker.core.bench_verdict import DEFAULT_CONFIDENCE, SECONDS, on_hardware
from tracker.core.model import BenchGate, Gate, ManualGate, Phase, Plan, TestGate, canonical_hash, gate_key

# The words a reviewer must see: an edit of these kinds can move a phase towards done with no new evidence ("changed":
# neither looser nor tighter by any rule here, a threshold turned around, another unit or hardware: it may ask less).
WEAKER = ("removed", "looser", "changed")
ORDER = ("removed", "looser", "changed", "added", "tighter")


class GateEdit(NamedTuple):
    """One edit of a phase's gates (or of its ``depends`` / ``paths``) since the revision."""

    key: str  # PLAN/PHASE#N (the gate's number now; at the revision for a removed gate), or PLAN/PHASE
    kind: str  # one of ORDER
    what: str  # the gate, and what changed: ``bench m at most 2 -> at most 10``

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


def identity(gate: Gate) -> tuple[str, ...]:
    """What a gate checks, without how strictly: its match key across the two sides."""
    if isinstance(gate, TestGate):
        return ("test", gate.test, gate.marker or "")
    if isinstance(gate, ManualGate):
        return ("manual", gate.manual)
    return ("bench", gate.bench, canonical_hash(gate.where), canonical_hash(gate.baseline))


def describe(gate: Gate) -> str:
    """The gate on one line: ``test tests/x.py``, ``sign-off "..."``, ``bench m (where ...) at most 2``."""
    if isinstance(gate, TestGate):
        return f"test {gate.test}" + (f" (marker {gate.marker})" if gate.marker else "")
    if isinstance(gate, ManualGate):
        return f"sign-off {gate.manual!r}"
    where = ", ".join(f"{k}={v}" for k, v in sorted(gate.where.items()))
    threshold = _threshold(gate)
    return f"bench {gate.bench}" + (f" ({where})" if where else "") + (f" {threshold}" if threshold else "")


def _num(x: float) -> str:
    """``50``, ``0.5``, ``1e+06``; every digit where fewer would read as another number (100.0000001)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def _threshold(gate: BenchGate) -> str:
    unit = f" {gate.unit}" if gate.unit and not gate.baseline else ""
    parts = []
    if gate.at_least is not None:
        parts.append(f"at least {_num(gate.at_least)}{unit}")
    if gate.at_most is not None:
        parts.append(f"at most {_num(gate.at_most)}{unit}")
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


# (a, b): over the same samples, statistic a is never above statistic b (p90 and the median interpolate alike).
_NOT_ABOVE = frozenset({("min", "median"), ("min", "mean"), ("min", "p90"), ("median", "p90")})


def _scale(old: BenchGate, new: BenchGate) -> float | None:
    """The factor that takes a threshold in ``new``'s unit to ``old``'s: 1 for one unit (or a ratio, which has
    none), None where the two are not both times (``unit`` unset reads its results' unit, whatever that is)."""
    if old.unit == new.unit or old.baseline:
        return 1.0
    if old.unit in SECONDS and new.unit in SECONDS:
        return SECONDS[new.unit] / SECONDS[old.unit]
    return None


def _stat_word(old: BenchGate, new: BenchGate) -> str:
    """A statistic never above the old one is looser for ``at_most`` (``median`` -> ``min``), tighter for
    ``at_least``; a ratio's statistic is taken of both sides, so its way is unknown."""
    if old.baseline or (old.at_most is None) != (new.at_most is None):
        return "changed"
    lower = (new.stat, old.stat) in _NOT_ABOVE
    if not lower and (old.stat, new.stat) not in _NOT_ABOVE:
        return "changed"
    return "looser" if lower == (new.at_most is not None) else "tighter"


def _hardware_word(old: str | None, new: str | None) -> str | None:
    """None: every GPU; a name within the old one (``NVIDIA H200 NVL`` -> ``H200``) matches more GPUs: looser."""
    if new is None:
        return "looser"
    if old is None:
        return "tighter"
    wider, narrower = on_hardware(new, old), on_hardware(old, new)
    return None if wider and narrower else "looser" if wider else "tighter" if narrower else "changed"


def _bench_verdict(old: BenchGate, new: BenchGate) -> tuple[str, list[str]]:
    terms: list[tuple[str | None, str]] = []  # (looser / tighter / changed, or None for no way at all; the note)
    scale = _scale(old, new)
    if (old.at_least is None) != (new.at_least is None) or (old.at_most is None) != (new.at_most is None):
        terms.append(("changed", f"{_threshold(old) or 'no threshold'} -> {_threshold(new) or 'no threshold'}"))
    else:
        for name, less_is_looser in (("at_least", True), ("at_most", False)):
            a, b = getattr(old, name), getattr(new, name)
            units = old.unit != new.unit and not old.baseline
            if a is None or (a == b and not units):
                continue
            shown = f"{name.replace('_', ' ')} {_num(a)}" + (f" {old.unit}" if units else "")
            shown += f" -> {_num(b)}" + (f" {new.unit}" if units else "")
            if scale is None:  # another unit, not a time: no way to compare the numbers
                terms.append(("changed", shown))
            elif a == b * scale or (scale != 1 and math.isclose(a, b * scale, rel_tol=1e-15)):  # 0.05 ms is 50 us
                terms.append((None, shown))
            else:
                terms.append((_direction(a, b * scale, less_is_looser), shown))
    confidence = (old.confidence or DEFAULT_CONFIDENCE, new.confidence or DEFAULT_CONFIDENCE)
    if confidence[0] != confidence[1]:  # a lower level: a narrower interval, a verdict on less evidence
        terms.append(("looser" if confidence[1] < confidence[0] else "tighter",
                      f"confidence {_num(confidence[0])} -> {_num(confidence[1])}"))  # fmt: skip
    if old.min_samples != new.min_samples:  # None: no minimum, as 1
        terms.append((_direction(old.min_samples or 1, new.min_samples or 1, True),
                      f"min_samples {old.min_samples} -> {new.min_samples}"))  # fmt: skip
    if old.hardware != new.hardware:
        terms.append((_hardware_word(old.hardware, new.hardware), f"hardware {old.hardware} -> {new.hardware}"))
    if old.stat != new.stat:
        terms.append((_stat_word(old, new), f"stat {old.stat} -> {new.stat}"))
    if old.run != new.run:
        terms.append(("changed", f"run {old.run} -> {new.run}"))
    return _overall([w for w, _ in terms if w]), _marked(terms)


def _allowed_word(old: Sequence[str], new: Sequence[str]) -> str | None:
    """``skips_allowed`` / ``xfails_allowed``: a reason is allowed when it holds one of the strings, so a new string
    that holds none of the old ones allows reasons that were not (``needs CUDA 13`` -> ``CUDA``): looser."""
    if any(not any(o in n for o in old) for n in new):
        return "looser"
    if any(not any(n in o for n in new) for o in old):
        return "tighter"
    return None


def _test_verdict(old: TestGate, new: TestGate) -> tuple[str, list[str]]:
    terms: list[tuple[str | None, str]] = []
    for name in ("skips_allowed", "xfails_allowed"):  # more allowed: fewer outcomes count against the gate
        a, b = getattr(old, name), getattr(new, name)
        if set(a) != set(b):
            terms.append((_allowed_word(a, b), f"{name} {sorted(set(a))} -> {sorted(set(b))}"))
    if old.options != new.options:
        terms.append(("changed", f"options {list(old.options)} -> {list(new.options)}"))
    return _overall([w for w, _ in terms if w]), _marked(terms)


def _overall(words: Sequence[str]) -> str:
    """One word for a gate's edits: looser when any of them asks less (a threshold relaxed stays looser beside a
    ``min_samples`` raised: the reviewer must see it), else changed when one of them is neither, else tighter."""
    kinds = set(words)
    if "looser" in kinds:
        return "looser"
    if "changed" in kinds or not kinds:  # not kinds: the definitions differ in a way no rule above names
        return "changed"
    return "tighter"


def _marked(terms: Sequence[tuple[str | None, str]]) -> list[str]:
    """The notes, each with its own word where they are not all of one kind: ``at most 2 -> 10 (looser)``."""
    if len({w for w, _ in terms}) < 2:
        return [n for _, n in terms]
    return [f"{n} ({w or 'the same'})" for w, n in terms]


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
    # A dependency dropped: the phase can be done before it. A path dropped: fewer changed files make its evidence
    # stale. Either asks less; one added asks more.
    for was, now, less, more in (
        (old.depends, new.depends, "no longer depends on ", "now depends on "),
        (old.paths, new.paths, "paths no longer cover ", "paths now also cover "),
    ):
        if gone := [x for x in was if x not in now]:
            out.append(GateEdit(key, "looser", less + ", ".join(gone)))
        if added := [x for x in now if x not in was]:
            out.append(GateEdit(key, "tighter", more + ", ".join(added)))
    if old.exact != new.exact:  # not exact: an edit of comments alone no longer makes its evidence stale
        what = "no longer exact: a comment-only edit keeps its evidence" if old.exact else "now exact: every byte"
        out.append(GateEdit(key, "looser" if old.exact else "tighter", what))
    return sorted(out, key=lambda e: ORDER.index(e.kind))


def _renamed(old: Phase, new: Phase) -> bool:
    """Is ``new`` (a phase id not there before) ``old`` (an id gone) under another id or plan: the same title, or a
    gate that checks the same thing?"""
    return old.title == new.title or bool({identity(g) for g in old.gates} & {identity(g) for g in new.gates})


def gate_edits(before: Sequence[Plan], after: Sequence[Plan]) -> list[GateEdit]:
    """Every edit of the phases on both sides, in now's plan file order. A phase new or gone is a status change, not
    an edit; but a phase whose id (or plan id) changed while one with its title or one of its gates went is compared
    with that one, ``was 0001/P1`` before each edit: a rename must not hide the threshold it relaxed."""
    then = {(p.id, ph.id): ph for p in before for ph in p.phases}
    ids = {(p.id, ph.id) for p in after for ph in p.phases}
    gone = [(key, ph) for key, ph in then.items() if key not in ids]
    out: list[GateEdit] = []
    for plan in after:
        for phase in plan.phases:
            old = then.get((plan.id, phase.id))
            if old is not None:
                out.extend(phase_edits(plan.id, old, phase))
                continue
            was = next((g for g in gone if _renamed(g[1], phase)), None)
            if was is not None:
                gone.remove(was)
                note = f"was {was[0][0]}/{was[0][1]}: "
                out.extend(e._replace(what=note + e.what) for e in phase_edits(plan.id, was[1], phase))
    return out
