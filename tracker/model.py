"""The tracker's core data types: plans, phases, gates, verdicts and the status enum.

These are plain immutable NamedTuples, not pydantic models, on purpose: importing pydantic costs
~170 ms, more than half of ``tracker status``'s budget (and a frozen dataclass costs ~1.4 ms to
define against a NamedTuple's ~0.25 ms, which adds up at startup). Input validation (and the published JSON
Schema) lives in :mod:`tracker.schema`, which builds these objects from validated TOML; a warm
``status`` reads them from the parse cache (:mod:`tracker.plans`) and never imports pydantic.

Contract for :mod:`tracker.benchgate` (issue 4): ``evaluate_bench_gate(gate: BenchGate, results)
-> GateVerdict``. ``results`` is the list returned by :func:`tracker.evidence.bench_results`.
"""

from __future__ import annotations

import enum
import json
from typing import Any, NamedTuple, Union

from tracker.hashing import sha256_hex


class Status(str, enum.Enum):
    """A phase's status; precedence is documented in README ("Status rules")."""

    PLANNED = "planned"
    IN_PROGRESS = "in-progress"
    DONE = "done"
    BLOCKED = "blocked"
    REGRESSED = "regressed"
    STALE = "stale"


def canonical_hash(data: Any) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces): the hash of a gate's definition."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(text.encode("utf-8"))


class TestGate(NamedTuple):
    """Met when every test the pytest argument ``test`` selects (filtered by ``marker``) passed."""

    __test__ = False  # type: ignore[misc]  # not a pytest test class despite the name

    test: str
    marker: str | None = None
    line: int = 0  # 1-based line of the gate's ``[[gate]]`` header in the plan file

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (what its hash covers)."""
        return {"test": self.test} if self.marker is None else {"test": self.test, "marker": self.marker}


class ManualGate(NamedTuple):
    """Met only by a recorded sign-off (``tracker signoff``)."""

    manual: str
    line: int = 0

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (what its hash covers)."""
        return {"manual": self.manual}


class BenchGate(NamedTuple):
    """A benchmark threshold; evaluated by ``tracker.benchgate.evaluate_bench_gate`` (issue 4)."""

    bench: str
    where: dict[str, str | int | float | bool] = {}  # noqa: RUF012 - never mutated
    baseline: dict[str, str | int | float | bool] | None = None
    at_least: float | None = None
    at_most: float | None = None
    stat: str = "median"
    min_samples: int | None = None
    hardware: str | None = None
    run: str | None = None
    confidence: float | None = None
    line: int = 0

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (unset optional keys left out)."""
        keys = ("bench", "where", "baseline", "at_least", "at_most", "stat", "min_samples", "hardware", "run", "confidence")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


Gate = Union[TestGate, ManualGate, BenchGate]


def gate_hash(gate: Gate) -> str:
    """Hash of a gate's definition; evidence records it so a changed gate makes the phase stale."""
    return canonical_hash(gate.definition)


class Phase(NamedTuple):
    """One ``phase`` block. ``line`` is its opening fence (1-based), ``end_line`` its closing fence."""

    id: str
    title: str
    depends: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    gates: tuple[Gate, ...] = ()
    line: int = 0
    end_line: int = 0
    depends_line: int = 0  # the ``depends =`` line (the fence line when there is none)


class Plan(NamedTuple):
    """One plan file: its ``plan`` block and its phases, in file order."""

    id: str
    title: str
    path: str  # POSIX path relative to the repository root
    milestone: str | None = None
    phases: tuple[Phase, ...] = ()
    line: int = 0
    end_line: int = 0

    def phase(self, phase_id: str) -> Phase | None:
        """The phase with this id, or None."""
        return next((p for p in self.phases if p.id == phase_id), None)


class EvidenceSource(NamedTuple):
    """Where a verdict came from: the evidence file and the machine, commit and time it records."""

    file: str
    machine: str
    commit: str | None
    time: str


class GateVerdict(NamedTuple):
    """The verdict on one gate.

    ``met``: the gate holds on current evidence. ``failed``: the evidence shows a real failure
    (a test failed or errored, a benchmark missed its threshold), as opposed to missing or
    skipped evidence; a phase that was done and now has a failed gate is ``regressed``.
    ``reason`` explains itself ("3 passed", "skipped: CUDA not available", "no benchmark evidence").
    """

    met: bool
    reason: str
    source: EvidenceSource | None = None
    failed: bool = False


class PhaseStatus(NamedTuple):
    """A phase's derived status with the verdict on each gate and what blocks or staled it."""

    plan_id: str
    phase_id: str
    status: Status
    verdicts: tuple[GateVerdict, ...]
    blocked_by: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # files under ``paths`` changed since the evidence (stale)
    note: str = ""

    @property
    def met_count(self) -> str:
        """``met/total`` gates, as tables show it."""
        return f"{sum(v.met for v in self.verdicts)}/{len(self.verdicts)}"


def gate_key(plan_id: str, phase_id: str, index: int) -> str:
    """Key of a phase's gate in evidence files: ``0002/P1#1`` (1-based, as shown to users)."""
    return f"{plan_id}/{phase_id}#{index + 1}"
