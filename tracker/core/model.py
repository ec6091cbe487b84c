"""The tracker's core data types: plans, phases, gates, verdicts and the status enum.

These are plain immutable NamedTuples, not pydantic models, on purpose: importing pydantic costs
~170 ms, more than half of ``tracker status``'s budget (and a frozen dataclass costs ~1.4 ms to
define against a NamedTuple's ~0.25 ms, which adds up at startup). Input validation (and the published JSON
Schema) lives in :mod:`tracker.plans.schema`, which builds these objects from validated TOML; a warm
``status`` reads them from the parse cache (:mod:`tracker.plans.load`) and never imports pydantic.

The evidence the core evaluates is here too, as the readers hand it over: the store's test runs and
sign-offs (:class:`Store`, filled by :func:`tracker.store.evidence.load`) and benchmark result runs
(:class:`ResultRun`, filled by :mod:`tracker.store.result_files`), and :class:`BenchEvaluator`, what status asks
of bench gates. The evaluating modules import these types from here, never from a module that reads files.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from tracker.base.contract import utc_time
from tracker.base.hashing import sha256_hex

if TYPE_CHECKING:  # datetime's import is only paid when result files are actually parsed
    from datetime import datetime


class Status(str, enum.Enum):
    """A phase's status; precedence is documented in docs/reference.md ("Status rules")."""

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
    # Skips the gate expects (a file, directory or marker gate): a skipped test whose reason holds one of these
    # strings is reported, neither a pass nor a failure; the gate still needs a pass (tracker.core.testgate).
    skips_allowed: tuple[str, ...] = ()
    # pytest options the gate's tests need (``--doctest-modules``, ...: tracker.base.selection.GATE_OPTIONS): verify
    # runs the gate with them, and only a run that had them says which tests it has (tracker.core.testgate).
    options: tuple[str, ...] = ()
    # Known failures the gate expects (a file, directory or marker gate): an xfailed test whose reason holds one of
    # these strings is reported, neither a pass nor a failure; the gate still needs a pass (tracker.core.testgate).
    xfails_allowed: tuple[str, ...] = ()

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (what its hash covers)."""
        out: dict[str, Any] = {"test": self.test} if self.marker is None else {"test": self.test, "marker": self.marker}
        if self.skips_allowed:  # only when given: a gate without it keeps its hash
            out["skips_allowed"] = list(self.skips_allowed)
        if self.options:  # only when given, as skips_allowed
            out["options"] = list(self.options)
        if self.xfails_allowed:
            out["xfails_allowed"] = list(self.xfails_allowed)
        return out


class ManualGate(NamedTuple):
    """Met only by a recorded sign-off (``tracker signoff``)."""

    manual: str
    line: int = 0

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (what its hash covers)."""
        return {"manual": self.manual}


class BenchGate(NamedTuple):
    """A benchmark threshold; evaluated by ``tracker.core.bench_verdict.evaluate_bench_gate`` (issue 4)."""

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
    unit: str | None = None  # the threshold's unit: cases in another time unit are converted to it
    line: int = 0

    @property
    def definition(self) -> dict[str, Any]:
        """The gate as written in the plan (unset optional keys left out)."""
        keys = (
            "bench",
            "where",
            "baseline",
            "at_least",
            "at_most",
            "stat",
            "min_samples",
            "hardware",
            "run",
            "confidence",
            "unit",
        )
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


Gate = TestGate | ManualGate | BenchGate


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
    exact: bool = False  # its gates check the text itself (formatters, linters): a comment edit counts too


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
    ``also``: the other evidence files a met test gate's passes come from, besides ``source`` (the newest): each
    test's newest outcome may lie in another run, and the verdict is only as fresh as the oldest of them.
    ``undecided``: a bench gate whose newest run cannot decide (its interval straddles the threshold, or it has too
    few samples); ``met``/``failed`` are then the last deciding run's, and every view says it is undecided.
    """

    met: bool
    reason: str
    source: EvidenceSource | None = None
    failed: bool = False
    also: tuple[str, ...] = ()
    undecided: bool = False


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


# --- the evidence: test runs and sign-offs of the store ---------------------------------------------------------

RAN = frozenset({"passed", "failed", "error", "xfailed", "xpassed"})  # outcomes of a test that actually ran
OUTCOMES = frozenset({"passed", "failed", "skipped", "xfailed", "xpassed", "error", "notrun", "deselected"})


class _Record:
    """What ``@dataclass`` would give (fields in ``__slots__`` order, ``__eq__``, ``__repr__``),
    written out: importing ``dataclasses`` and generating two classes costs ~2 ms of every status."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({inner})"


class TestRun(_Record):
    """One complete pytest run: provenance, gate hashes, file ids and per-test records."""

    __test__ = False
    __slots__ = ("file", "files", "gates", "provenance", "tests")

    def __init__(
        self,
        file: str,
        provenance: dict[str, Any],
        gates: dict[str, str],
        files: dict[str, str],
        tests: list[dict[str, Any]],
    ) -> None:
        self.file = file  # path relative to the repo root
        self.provenance = provenance
        self.gates = gates
        self.files = files
        self.tests = tests

    @property
    def time(self) -> str:
        """The run's time as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (times compare as these strings); a value
        that is not an ISO-8601 time with a time zone is returned as is."""
        raw = self.provenance.get("time", "")
        return utc_time(raw) or str(raw)


class Store(_Record):
    """Everything in the evidence store, each list oldest first."""

    __slots__ = ("bench", "incomplete", "invalid", "processes", "reordered", "runs", "signoffs")

    def __init__(
        self,
        runs: list[TestRun] | None = None,
        signoffs: list[tuple[str, dict[str, Any]]] | None = None,
        bench: list[tuple[str, dict[str, Any] | None]] | None = None,
        incomplete: list[str] | None = None,
        invalid: list[str] | None = None,
        reordered: list[str] | None = None,
        processes: list[tuple[object, object, bool, object, object]] | None = None,
    ) -> None:
        self.runs: list[TestRun] = [] if runs is None else runs
        self.signoffs: list[tuple[str, dict[str, Any]]] = [] if signoffs is None else signoffs
        # Benchmark result copies: (path, document), the document None where ``load(results=False)`` skipped it.
        self.bench: list[tuple[str, dict[str, Any] | None]] = [] if bench is None else bench
        self.incomplete: list[str] = [] if incomplete is None else incomplete
        self.invalid: list[str] = [] if invalid is None else invalid  # "path: reason" of unusable files
        # Files recorded later than the run ``load(last=...)`` ordered after them all (verify says so).
        self.reordered: list[str] = [] if reordered is None else reordered
        # (pid, host, alive, pid_start, run time) of each process an incomplete run named as running a test, as
        # :func:`crashed_run` found it: what this store's content depends on besides its files (the status index
        # checks them again).
        self.processes: list[tuple[object, object, bool, object, object]] = [] if processes is None else processes


# --- the evidence: benchmark result runs ---------------------------------------------------------------------------

# Units of time: a duration of zero or less is a broken measurement (and would make a speedup infinite).
TIME_UNITS = frozenset({"ns", "us", "µs", "μs", "ms", "s"})


class ResultCase(NamedTuple):
    """One measured configuration: a metric under fixed parameters (exact JSON types), raw samples."""

    metric: str
    params: dict[str, str | int | float | bool]
    unit: str
    direction: str  # "lower" | "higher": which is better
    samples: tuple[float, ...]


class ResultRun(NamedTuple):
    """One validated result file: where it was read from, its provenance and its cases."""

    path: str
    sha256: str
    benchmark: str
    time: datetime
    host: str
    gpu: str | None
    commit: str | None
    dirty: bool | None
    files: dict[str, str]  # the fingerprint's {path: blob id}: the code the benchmark measured
    cases: tuple[ResultCase, ...]
    patterns: tuple[str, ...] = ()  # the globs that named ``files``, when the file says (a new match is new code)
    setup: tuple[str | None, ...] = ()  # driver, CUDA, torch, triton, Python and the command, as the file says


class BenchEvaluator(Protocol):
    """Bench gates bound to a set of result runs, as status and verify ask them (implemented by
    :class:`tracker.store.bench_evaluator.Evaluator`)."""

    bounds: MutableMapping[str, float]  # bootstrap bounds known so far (tracker.core.stats.bootstrap_bound)

    @property
    def results(self) -> Sequence[ResultRun]:
        """Every valid result run, oldest first."""
        ...

    def results_for(self, metric: str) -> Sequence[ResultRun]:
        """The valid result runs with a case of ``metric``, oldest first: a gate of that metric has the same figures
        on them as on :attr:`results` (evaluation selects a gate's runs by that metric's cases)."""
        ...

    def __call__(self, gate: BenchGate) -> GateVerdict:
        """The gate's verdict on the newest qualifying run."""
        ...

    def ever_met(self, gate: BenchGate) -> bool:
        """Was the gate met on the results as they stood after some run?"""
        ...

    def measured(self, source_file: str) -> dict[str, str]:
        """{path: blob id} of the files result file ``source_file``'s run measured (empty when unknown)."""
        ...

    def patterns(self, source_file: str) -> tuple[str, ...]:
        """The globs that named the files ``source_file``'s run measured (empty when the file does not say)."""
        ...

    def changed(self, source_file: str, current: Mapping[str, str]) -> list[str]:
        """Files measured by ``source_file``'s run whose blob id differs in ``current`` (or that are gone), and files
        of ``current`` matching its globs that it did not measure."""
        ...

    def keep_bounds(self) -> None:
        """Hand the bootstrap bounds known now to the command's cache."""
        ...
