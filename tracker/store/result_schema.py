"""Pydantic validation of benchmark result files (schema ``tracker-bench-result``, version 1).

Only :func:`tracker.store.result_files.load_result` imports this module, and only for bytes it has not validated
before (pydantic's import alone costs ~170 ms, too much for every ``tracker status``). A file is either
fully valid or rejected with ``path: reason`` - never half-read: syntax, duplicate keys, non-finite
numbers, unknown keys, wrong schema or version, a fingerprint whose digest does not match its files,
times (unit ns/us/ms/s) that are not positive, samples that disagree with the stats block and duplicate
cases are all errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from tracker.base.contract import RESULT_SCHEMA, RESULT_VERSION, set_fingerprint, utc_time
from tracker.core.model import TIME_UNITS
from tracker.core.stats import agrees, compute_stat, p90_bounds
from tracker.errors import ResultFileError
from tracker.store.evidence_schema import key_name, lone_surrogate, show

Hex40 = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Finite = Annotated[float, Field(allow_inf_nan=False, strict=True)]
# Strict members keep JSON types exact: 91000 stays an int and "91000" a str (gates match type-exactly); a float
# must be finite (JSON's 1e400 reads as infinity).
ParamValue = StrictBool | StrictInt | Finite | StrictStr


def _utc(text: str) -> str:
    # The store's one time parser (tracker.store.evidence.utc_time): the same times are valid everywhere.
    if utc_time(text) is None:
        raise ValueError(f"{show(text)} is not an ISO-8601 time with a time zone (and a real date)")
    return text


UtcTime = Annotated[StrictStr, AfterValidator(_utc), Field(json_schema_extra={"format": "date-time"})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _glob(pattern: str) -> str:
    from tracker.base.globs import glob_problem

    problem = glob_problem(pattern)
    if problem is not None:
        raise ValueError(problem)
    return pattern


Glob = Annotated[StrictStr, Field(max_length=1000), AfterValidator(_glob)]


class Fingerprint(_Strict):
    """Content hash of the source files the benchmark measured (git blob ids, see the shared contract), and the globs
    that named them (``patterns``, optional): a file matching one of them later that the run did not measure is new
    code under the benchmark, which makes its verdict stale."""

    algorithm: Literal["git-blob-sha1"]
    digest: Hex64
    files: dict[str, Hex40]
    patterns: list[Glob] | None = Field(default=None, max_length=1000)

    @model_validator(mode="after")
    def _digest_matches(self) -> Fingerprint:
        if set_fingerprint(self.files) != self.digest:
            raise ValueError("digest is not the sha256 of the listed files' blob ids")
        return self


class Provenance(_Strict):
    """Where, when and from which code a benchmark run came."""

    commit: Hex40 | None = None
    dirty: bool | None = None
    time: UtcTime
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


class CaseModel(_Strict):
    """One measured configuration: a metric under fixed parameters, with every raw sample.

    ``info`` (optional) records run conditions that are not part of the case's identity, such as input seeds or a
    split count chosen at run time: gates never match on it, and two cases that differ only in ``info`` are the
    same case.
    """

    metric: str = Field(min_length=1)
    params: dict[str, ParamValue]
    info: dict[str, ParamValue] = Field(default_factory=dict)
    unit: str
    direction: Literal["lower", "higher"]
    samples: list[Finite] = Field(min_length=1)
    stats: Stats

    @model_validator(mode="after")
    def _times_are_positive(self) -> CaseModel:
        if self.unit in TIME_UNITS and self.direction == "higher":  # a slip that turns a ratio around (round 16, F6)
            raise ValueError(f"direction is 'higher' for a time ({self.unit}): less time is better, say 'lower'")
        if self.unit in TIME_UNITS:
            bad = next((i for i, x in enumerate(self.samples) if x <= 0), None)
            if bad is not None:
                raise ValueError(f"samples[{bad}] is {self.samples[bad]} {self.unit}: a time must be > 0")
        return self

    @model_validator(mode="after")
    def _stats_match_samples(self) -> CaseModel:
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
    cases: list[CaseModel]

    @model_validator(mode="after")
    def _no_duplicate_cases(self) -> BenchResult:
        seen: dict[str, int] = {}
        for i, case in enumerate(self.cases):
            key = json.dumps([case.metric, _typed(case.params)], sort_keys=True)
            if key in seen:
                raise ValueError(f"cases[{i}] repeats cases[{seen[key]}] (metric={case.metric}, same params)")
            seen[key] = i
        return self


def _typed(params: dict[str, Any]) -> list[tuple[str, str, Any]]:
    # Type-exact identity: 1, 1.0, True and "1" are four different parameter values.
    return sorted((k, type(v).__name__, v) for k, v in params.items())


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
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{key_name(str(p))}" for p in first["loc"]).lstrip(".")
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
    except RecursionError:
        raise ResultFileError(path, "JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            raise ResultFileError(path, f"truncated JSON (ends at line {exc.lineno})") from None
        raise ResultFileError(f"{path}:{exc.lineno}:{exc.colno}", f"malformed JSON: {exc.msg}") from None
    except ValueError as exc:
        raise ResultFileError(path, str(exc)) from None
    if not isinstance(raw, dict):
        raise ResultFileError(path, f"expected a JSON object, got {type(raw).__name__}")
    bad_text = lone_surrogate(data, raw)
    if bad_text:
        raise ResultFileError(path, bad_text)
    if raw.get("schema") != RESULT_SCHEMA:
        raise ResultFileError(
            path, f"not a benchmark result file (schema={show(raw.get('schema'))}, expected {RESULT_SCHEMA!r})"
        )
    version = raw.get("version")
    if type(version) is not int or version != RESULT_VERSION:  # True and 1.0 equal 1 in Python, not here
        raise ResultFileError(
            path, f"unsupported version {show(version)} (this tracker reads version {RESULT_VERSION})"
        )
    try:
        return BenchResult.model_validate(raw)
    except ValidationError as exc:
        raise ResultFileError(path, _render(exc)) from None
    except (RecursionError, OverflowError) as exc:  # belt and braces: a statistic or a nesting no rule foresaw
        raise ResultFileError(path, f"cannot be validated: {type(exc).__name__}: {exc}") from None


def json_schema() -> dict[str, Any]:
    """JSON Schema of result files (``tracker schema --results``)."""
    schema = BenchResult.model_json_schema(by_alias=True)
    schema["$id"] = f"{RESULT_SCHEMA}/v{RESULT_VERSION}"
    schema["title"] = "Benchmark result file"
    return schema
