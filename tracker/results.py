"""Benchmark result files (schema ``tracker-bench-result``, version 1): models, loading, statistics.

``bench/`` writes these files with the standard library only (the GPU machine has no pydantic); the
tracker reads them here. A file is either fully valid or rejected with ``path: reason`` - never
half-read: syntax, duplicate keys, non-finite numbers, unknown keys, wrong schema or version, a
fingerprint whose digest does not match its files, samples that disagree with the stats block and
duplicate cases are all errors. Statistics used by gates are always recomputed from the raw samples.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from tracker.errors import FileError

SCHEMA_NAME = "tracker-bench-result"
SCHEMA_VERSION = 1
STATS = ("median", "min", "mean", "p90")

Hex40 = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
# Strict members keep JSON types exact: 91000 stays an int and "91000" a str (gates match type-exactly).
ParamValue = Union[StrictBool, StrictInt, StrictFloat, StrictStr]
Finite = Annotated[float, Field(allow_inf_nan=False, strict=True)]


class ResultFileError(FileError):
    """A result file that cannot be used, rendered as ``path: reason``."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fingerprint(_Strict):
    """Content hash of the source files the benchmark measured (git blob ids, see the shared contract)."""

    algorithm: Literal["git-blob-sha1"]
    digest: Hex64
    files: dict[str, Hex40]

    @model_validator(mode="after")
    def _digest_matches(self) -> Fingerprint:
        if set_digest(self.files) != self.digest:
            raise ValueError("digest is not the sha256 of the listed files' blob ids")
        return self


class Provenance(_Strict):
    """Where, when and from which code a benchmark run came."""

    commit: Hex40 | None = None
    dirty: bool | None = None
    time: AwareDatetime
    host: str = Field(min_length=1)
    gpu: str | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    triton: str | None = None
    python: str
    command: str
    fingerprint: Fingerprint


class Stats(_Strict):
    """The writer's summary; checked against the samples, never used for verdicts."""

    n: Annotated[int, Field(strict=True, ge=1)]
    median: Finite
    min: Finite
    mean: Finite
    p90: Finite


class Case(_Strict):
    """One measured configuration: a metric under fixed parameters, with every raw sample."""

    metric: str = Field(min_length=1)
    params: dict[str, ParamValue]
    unit: str
    direction: Literal["lower", "higher"]
    samples: list[Finite] = Field(min_length=1)
    stats: Stats

    @model_validator(mode="after")
    def _stats_match_samples(self) -> Case:
        if self.stats.n != len(self.samples):
            raise ValueError(f"stats.n is {self.stats.n} but there are {len(self.samples)} samples")
        for name in ("median", "min", "mean"):
            given, true = getattr(self.stats, name), compute_stat(name, self.samples)
            if not agrees(given, true):
                raise ValueError(f"stats.{name} is {given} but the samples give {true:.6g}")
        lo, hi = p90_bounds(self.samples)
        if not (agrees(self.stats.p90, lo) or agrees(self.stats.p90, hi) or lo <= self.stats.p90 <= hi):
            raise ValueError(f"stats.p90 is {self.stats.p90} but the samples put it in [{lo:.6g}, {hi:.6g}]")
        return self


class BenchResult(_Strict):
    """One benchmark run: provenance plus its cases (the whole file)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal["tracker-bench-result"] = Field(alias="schema")
    version: Literal[1]
    benchmark: str = Field(min_length=1)
    provenance: Provenance
    cases: list[Case]

    @model_validator(mode="after")
    def _no_duplicate_cases(self) -> BenchResult:
        seen: dict[str, int] = {}
        for i, case in enumerate(self.cases):
            key = json.dumps([case.metric, _typed(case.params)], sort_keys=True)
            if key in seen:
                raise ValueError(f"cases[{i}] repeats cases[{seen[key]}] (metric={case.metric}, same params)")
            seen[key] = i
        return self


class LoadedResult(BaseModel):
    """A validated result file plus where it was read from and the hash of its bytes."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    result: BenchResult

    @property
    def time(self) -> datetime:
        """The run's time (newest run wins in gate evaluation)."""
        return self.result.provenance.time


def _typed(params: dict[str, Any]) -> list[tuple[str, str, Any]]:
    # Type-exact identity: 1, 1.0, True and "1" are four different parameter values.
    return sorted((k, type(v).__name__, v) for k, v in params.items())


def blob_id(data: bytes) -> str:
    """Git blob id of a file's bytes (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def set_digest(files: dict[str, str]) -> str:
    """Fingerprint of a set of files from their blob ids (the shared contract)."""
    return hashlib.sha256("".join(f"{p}\0{b}\n" for p, b in sorted(files.items())).encode()).hexdigest()


def compute_stat(name: str, samples: list[float]) -> float:
    """``median``/``min``/``mean``/``p90`` of raw samples; p90 interpolates linearly (numpy's default)."""
    if not samples:
        raise ValueError("no samples")
    if name == "median":
        return float(statistics.median(samples))
    if name == "min":
        return float(min(samples))
    if name == "mean":
        return math.fsum(samples) / len(samples)
    if name == "p90":
        s = sorted(samples)
        pos = 0.9 * (len(s) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATS)})")


def p90_bounds(samples: list[float]) -> tuple[float, float]:
    """Range spanned by the usual p90 definitions (interpolated, nearest-rank, (n+1)p): all are accepted."""
    s = sorted(samples)
    n = len(s)
    lo = s[math.floor(0.9 * (n - 1))]
    hi = s[min(n - 1, max(math.ceil(0.9 * (n + 1)) - 1, math.ceil(0.9 * n) - 1))]
    return lo, hi


def agrees(given: float, true: float) -> bool:
    """True when ``given`` is ``true`` up to rounding: to the decimals it shows, or 0.1% relative."""
    text = repr(float(given))
    decimals = 0 if "e" in text else len(text.split(".")[1].rstrip("0"))
    tolerance = max(0.5 * 10.0**-decimals, 1e-3 * abs(true), 1e-12)
    return abs(given - true) <= tolerance


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} (JSON has no NaN/Infinity)")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _render(error: ValidationError) -> str:
    first = error.errors()[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
    msg = first["msg"].removeprefix("Value error, ")
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{loc or 'file'}: {msg}{more}"


def parse_result(data: bytes, path: Path | str = "<bytes>") -> BenchResult:
    """Validate the bytes of one result file; raises :class:`ResultFileError` with ``path: reason``."""
    if not data.strip():
        raise ResultFileError(path, "empty file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultFileError(path, f"not UTF-8 (byte {exc.start})") from None
    try:
        raw = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise ResultFileError(path, f"truncated JSON (ends at line {exc.lineno})") from None
        raise ResultFileError(f"{path}:{exc.lineno}:{exc.colno}", f"malformed JSON: {exc.msg}") from None
    except ValueError as exc:
        raise ResultFileError(path, str(exc)) from None
    if not isinstance(raw, dict):
        raise ResultFileError(path, f"expected a JSON object, got {type(raw).__name__}")
    if raw.get("schema") != SCHEMA_NAME:
        raise ResultFileError(path, f"not a benchmark result file (schema={raw.get('schema')!r}, expected {SCHEMA_NAME!r})")
    if raw.get("version") != SCHEMA_VERSION:
        raise ResultFileError(path, f"unsupported version {raw.get('version')!r} (this tracker reads version {SCHEMA_VERSION})")
    try:
        return BenchResult.model_validate(raw)
    except ValidationError as exc:
        raise ResultFileError(path, _render(exc)) from None


_CACHE: dict[str, BenchResult] = {}


def load_result(path: Path | str) -> LoadedResult:
    """Read and validate one result file, caching by content hash (same bytes are validated once)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ResultFileError(path, exc.strerror or str(exc)) from None
    digest = hashlib.sha256(data).hexdigest()
    result = _CACHE.get(digest)
    if result is None:
        result = _CACHE[digest] = parse_result(data, path)
    return LoadedResult(path=str(path), sha256=digest, result=result)


def load_results(paths: list[Path]) -> tuple[list[LoadedResult], list[ResultFileError]]:
    """Load many files; bad ones are reported, never partially used."""
    good: list[LoadedResult] = []
    bad: list[ResultFileError] = []
    for path in paths:
        try:
            good.append(load_result(path))
        except ResultFileError as exc:
            bad.append(exc)
    return good, bad


def results_json_schema() -> dict[str, Any]:
    """JSON Schema of result files (``tracker schema --results``)."""
    schema = BenchResult.model_json_schema(by_alias=True)
    schema["$id"] = f"{SCHEMA_NAME}/v{SCHEMA_VERSION}"
    schema["title"] = "Benchmark result file"
    return schema
