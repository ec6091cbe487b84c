"""Read other tools' benchmark files: pytest-benchmark's ``--benchmark-json`` and asv 0.6 result files.

Pure parsing (bytes in, :class:`Foreign` out); turning one into a ``tracker-bench-result`` file (commit, fingerprint,
the write) is :mod:`tracker.commands.ingest_bench`. Both formats are read as hostile input: every value the tracker
uses is checked for its type and range, and a file that cannot be read whole is refused with ``path: reason``
(:class:`tracker.store.ingest.IngestError`), never half-used (docs/benchmarks-from-other-tools.md).

A case holds raw samples only. Both tools can write files that hold summaries alone (pytest-benchmark's
``--benchmark-save`` without ``--benchmark-save-data``, asv without ``--record-samples``): such a file is refused.
Our result files have no form for "a median of N rounds": a summary stored as one sample would be judged by its value
whatever its noise, and read as the min, mean or p90 by a gate that asks for those.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
import time
from pathlib import Path
from typing import Any, NamedTuple

from tracker.base.contract import utc_time
from tracker.base.fileio import read_regular
from tracker.errors import FileError
from tracker.store.evidence_schema import show
from tracker.store.ingest import LATEST_TIME_S, IngestError

PYTEST_BENCHMARK = "pytest-benchmark"
ASV = "asv"
PYTEST_BENCHMARK_KEYS = frozenset({"machine_info", "commit_info", "benchmarks", "datetime", "version"})
HEX40 = re.compile(r"[0-9a-f]{40}")
MAX_PARAM_TEXT = 200  # an asv parameter's repr longer than this stays text (never evaluated)
ASV_UNITS = {"time": "s", "mem": "bytes", "peakmem": "bytes"}  # asv types whose smaller value is better
ASV_UNIT_NAMES = {"seconds": "s", "bytes": "bytes"}


class Foreign(NamedTuple):
    """One benchmark run read from another tool's file, before it becomes a result file.

    ``cases``: ``{"metric", "params", "info", "unit", "direction", "samples"}`` each (stats are computed when the
    result is written); ``commit``: 40 hex digits or None when the file names none; ``dirty``: the tool's word (None:
    it records none); ``time``: UTC, when the run started; ``files``: the test files the file names (pytest-benchmark's
    node ids), repository relative; ``notes``: what was skipped, said once each; ``times``: {metric: UTC} where the
    file dates each benchmark by itself (asv's ``started_at``), each of them a result file of its own."""

    benchmark: str
    commit: str | None
    dirty: bool | None
    time: str
    host: str
    python: str
    command: str
    cases: list[dict[str, Any]]
    files: list[str]
    notes: list[str]
    times: dict[str, str] = {}  # noqa: RUF012 (never mutated)


def _constant(name: str) -> float:
    return float(name)  # asv writes -Infinity/Infinity in columns it has no value for; used values are checked


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {show(key)}")
        out[key] = value
    return out


def load_json(path: Path | str, data: bytes) -> object:
    """The JSON of a foreign file: IngestError for bytes that are not UTF-8, not JSON, nested too deeply or with a
    key given twice (which value a tool meant is unknown)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise IngestError(f"{path}: not UTF-8 (byte {err.start}: {err.reason})") from None
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except RecursionError:
        raise IngestError(f"{path}: JSON nested too deeply") from None
    except json.JSONDecodeError as err:
        if err.pos >= len(text.rstrip()):
            raise IngestError(f"{path}: truncated JSON (ends at line {err.lineno})") from None
        raise IngestError(f"{path}:{err.lineno}:{err.colno}: malformed JSON: {err.msg}") from None
    except ValueError as err:  # a duplicate key, a number too large
        raise IngestError(f"{path}: {err}") from None


def kind_of(doc: object) -> str | None:
    """:data:`PYTEST_BENCHMARK`, :data:`ASV` or None, from the keys of a parsed JSON document."""
    if not isinstance(doc, dict):
        return None
    if doc.keys() >= PYTEST_BENCHMARK_KEYS:
        return PYTEST_BENCHMARK
    if {"result_columns", "results", "commit_hash", "env_name"} <= doc.keys():
        return ASV
    return None


def _need(path: Path | str, where: str, value: object, kind: type | tuple[type, ...], what: str) -> Any:
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise IngestError(f"{path}: {where} is {show(value)}, expected {what}")
    if not isinstance(value, kind):
        raise IngestError(f"{path}: {where} is {show(value)}, expected {what}")
    return value


def _text(path: Path | str, where: str, value: object) -> str:
    text = _need(path, where, value, str, "a non-empty string")
    if not text.strip():
        raise IngestError(f"{path}: {where} is empty")
    return str(text)


def _samples(path: Path | str, where: str, values: object) -> list[float]:
    """Raw samples: a non-empty list of finite numbers > 0 (times and bytes)."""
    items = _need(path, where, values, list, "a list of numbers")
    if not items:
        raise IngestError(f"{path}: {where} is empty")
    out: list[float] = []
    for i, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise IngestError(f"{path}: {where}[{i}] is {show(x)}, expected a number")
        try:
            value = float(x)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value) or value <= 0:
            raise IngestError(f"{path}: {where}[{i}] is {show(x)}, expected a finite number > 0")
        out.append(value)
    return out


def _param_value(path: Path | str, where: str, value: object) -> bool | int | float | str:
    """A JSON parameter value kept type-exact (1, 1.0, true and "1" differ); a list, an object or null as its
    compact JSON text (a gate's ``where`` can name it so)."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if abs(value) > 2**63:
            raise IngestError(f"{path}: {where} is an integer too large to compare ({str(value)[:20]}...)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise IngestError(f"{path}: {where} is {value}, not a finite number")
        return value
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError, TypeError) as err:
        raise IngestError(f"{path}: {where} cannot be a parameter ({type(err).__name__})") from None


# --- pytest-benchmark -------------------------------------------------------------------------------------------


def pytest_benchmark(path: Path | str, doc: dict[str, Any]) -> Foreign:
    """The run of a pytest-benchmark ``--benchmark-json`` file (its parsed JSON ``doc``)."""
    machine = _need(path, "machine_info", doc["machine_info"], dict, "an object")
    commit_info = _need(path, "commit_info", doc["commit_info"], dict, "an object")
    benchmarks = _need(path, "benchmarks", doc["benchmarks"], list, "a list")
    version = _text(path, "version", doc["version"])
    stamp = _text(path, "datetime", doc["datetime"])
    when = utc_time(stamp)
    if when is None:
        raise IngestError(f"{path}: datetime {show(stamp)} is not an ISO-8601 time with a time zone")
    host = _text(path, "machine_info.node", machine.get("node"))
    python = _text(path, "machine_info.python_version", machine.get("python_version"))
    cpu = machine.get("cpu")
    brand = cpu.get("brand_raw") if isinstance(cpu, dict) else None
    if brand is not None:
        brand = _text(path, "machine_info.cpu.brand_raw", brand)
    ident = commit_info.get("id")
    if ident is not None:
        ident = _need(path, "commit_info.id", ident, str, "a string")
    dirty = commit_info.get("dirty")
    if dirty is not None:
        dirty = _need(path, "commit_info.dirty", dirty, bool, "true or false")
    commit = ident if isinstance(ident, str) and HEX40.fullmatch(ident) else None
    if not benchmarks:
        raise IngestError(f"{path}: benchmarks is empty (no benchmark ran)")
    cases: list[dict[str, Any]] = []
    files: dict[str, None] = {}
    for i, bench in enumerate(benchmarks):
        where = f"benchmarks[{i}]"
        _need(path, where, bench, dict, "an object")
        fullname = _text(path, f"{where}.fullname", bench.get("fullname"))
        param = bench.get("param")
        metric = fullname
        if param is not None:
            param = _need(path, f"{where}.param", param, str, "a string or null")
            if not fullname.endswith(f"[{param}]"):
                raise IngestError(f"{path}: {where}.fullname {show(fullname)} does not end with its param [{param}]")
            metric = fullname[: -len(param) - 2]
        if "::" not in metric:
            raise IngestError(f"{path}: {where}.fullname {show(fullname)} is not a pytest node id (FILE::NAME)")
        params = bench.get("params")
        params = {} if params is None else _need(path, f"{where}.params", params, dict, "an object or null")
        stats = _need(path, f"{where}.stats", bench.get("stats"), dict, "an object")
        if "data" not in stats:
            raise IngestError(
                f"{path}: {where} ({fullname}) holds summary statistics only, no raw samples (stats.data): a summary "
                "cannot be judged with its noise; write the file with pytest --benchmark-json (it always holds the "
                "samples) or save with --benchmark-save-data"
            )
        samples = _samples(path, f"{where}.stats.data", stats["data"])
        info: dict[str, Any] = {}
        iterations = stats.get("iterations")
        if iterations is not None:
            info["iterations"] = _need(path, f"{where}.stats.iterations", iterations, int, "an integer")
        if brand is not None:
            info["cpu"] = brand
        cases.append(
            {
                "metric": metric,
                "params": {str(k): _param_value(path, f"{where}.params.{k}", v) for k, v in params.items()},
                "info": info,
                "unit": "s",
                "direction": "lower",
                "samples": samples,
            }
        )
        files.setdefault(metric.split("::", 1)[0])
    return Foreign(
        PYTEST_BENCHMARK,
        commit,
        dirty,
        when,
        host,
        python,
        f"pytest --benchmark-json (pytest-benchmark {version})",
        cases,
        list(files),
        [],
    )


# --- asv ----------------------------------------------------------------------------------------------------------


def _folder(path: Path) -> Path:
    """The folder a result file really lies in, its machine's (``results/<machine>/``): the one its symlinks lead to,
    so a link in another machine's folder is judged by the real folder's machine.json, and a relative ``x.json`` read
    from inside that folder has one (its ``Path.parent`` is ``.``, named ''). Written as given where it is the same
    folder, and its parent the same parent, by another name for neither."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
        raise IngestError(f"{path}: cannot resolve its folder: {getattr(err, 'strerror', None) or err}") from None
    given = path.absolute().parent
    try:
        same = (
            given.name == real.parent.name
            and given.resolve() == real.parent
            and given.parent.resolve() == real.parent.parent
        )
    except (OSError, RuntimeError):
        same = False
    return given if same else real.parent


def _sibling_json(folder: Path, path: Path, name: str, required: bool) -> dict[str, Any] | None:
    """asv's ``machine.json`` (beside the result, in ``folder``) or ``benchmarks.json`` (one folder up), parsed; None
    when absent and not ``required``."""
    other = (folder if name == "machine.json" else folder.parent) / name
    if not other.exists() and not other.is_symlink():
        if required:
            raise IngestError(f"{path}: no {name} beside it ({other}): asv writes one per machine, copy it along")
        return None
    try:
        data = read_regular(other)
    except FileError as err:
        raise IngestError(str(err)) from None
    doc = load_json(other, data)
    if not isinstance(doc, dict):
        raise IngestError(f"{other}: expected a JSON object")
    return doc


def _asv_value(text: object) -> bool | int | float | str:
    """asv's parameter value, which it stores as its ``repr``: a number, a bool or a string literal becomes that
    value (``'1'`` is 1, ``"'a'"`` is "a"); anything else (an object's repr, ``None``) stays the text."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    if len(text) <= MAX_PARAM_TEXT:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return text
        if isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and abs(value) <= 2**63:
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
    return text


def asv(path: Path, doc: dict[str, Any]) -> Foreign:
    """The run of an asv 0.6 result file ``results/<machine>/<commit>-<env>.json`` (its parsed JSON ``doc``), with
    its machine from the sibling ``machine.json`` and parameter names from ``results/benchmarks.json`` when there."""
    version = doc.get("version")
    if type(version) is not int or version != 2:
        raise IngestError(f"{path}: asv result version {show(version)} (this tracker reads asv 0.6's version 2)")
    commit = _text(path, "commit_hash", doc["commit_hash"])
    if not HEX40.fullmatch(commit):
        raise IngestError(f"{path}: commit_hash {show(commit)} is not a full git commit id")
    env = _text(path, "env_name", doc["env_name"])
    python = _text(path, "python", doc.get("python"))
    columns = _need(path, "result_columns", doc["result_columns"], list, "a list of column names")
    if not all(isinstance(c, str) for c in columns) or len(set(columns)) != len(columns):
        raise IngestError(f"{path}: result_columns must be distinct strings")
    for needed in ("result", "params"):
        if needed not in columns:
            raise IngestError(f"{path}: result_columns has no {needed!r} column")
    results = _need(path, "results", doc["results"], dict, "an object")
    folder = _folder(path)
    machine_doc = _sibling_json(folder, path, "machine.json", True)
    assert machine_doc is not None
    host = _text(folder / "machine.json", "machine", machine_doc.get("machine"))
    if host != folder.name:
        raise IngestError(f"{path}: machine.json names machine {show(host)}, but the folder is {str(folder)!r}")
    cpu = machine_doc.get("cpu")
    meta = _sibling_json(folder, path, "benchmarks.json", False) or {}
    cases: list[dict[str, Any]] = []
    notes: list[str] = []
    starts: dict[str, int] = {}  # when each benchmark started (asv's ``date`` is the commit's date, not the run's)
    for name, row in results.items():
        where = f"results.{name}"
        _text(path, f"{where} (its name)", name)
        _need(path, where, row, list, "a list of columns")
        if len(row) > len(columns):
            raise IngestError(f"{path}: {where} has {len(row)} columns, result_columns names {len(columns)}")
        values = dict(zip(columns, row, strict=False))
        start = values.get("started_at")
        if start is not None:
            if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= LATEST_TIME_S * 1000:
                raise IngestError(f"{path}: {where} started_at is {show(start)}, expected milliseconds since 1970")
            starts[name] = start
        entry = meta.get(name)
        if isinstance(entry, dict) and "version" in entry and entry["version"] != values.get("version"):
            # benchmarks.json describes the suite of asv's latest run: another version of this benchmark may have
            # other parameters, in another order (asv publish and compare drop such a result).
            notes.append(
                f"{name}: benchmarks.json describes another version of it ({show(entry['version'])}, measured "
                f"{show(values.get('version'))}): its parameter names, type and unit not used"
            )
            entry = None
        kind, unit = _asv_kind(path, name, entry)
        if unit is None:
            notes.append(f"{name}: skipped ({kind} benchmark: asv records no direction for it)")
            continue
        result = values.get("result")
        if result is None:
            notes.append(f"{name}: skipped (failed: no result)")
            continue
        points = _need(path, f"{where} result", result, list, "a list (one value per parameter combination)")
        grid_text = _need(path, f"{where} params", values.get("params"), list, "a list of parameter lists")
        grid: list[list[bool | int | float | str]] = []
        for j, axis in enumerate(grid_text):
            _need(path, f"{where} params[{j}]", axis, list, "a list")
            try:
                grid.append([_asv_value(v) for v in axis])
            except ValueError:
                raise IngestError(f"{path}: {where} params[{j}] holds a value that is not a string") from None
        size = math.prod(len(axis) for axis in grid)
        if size != len(points):
            raise IngestError(f"{path}: {where} has {len(points)} results for {size} parameter combinations")
        names = _param_names(path, name, entry, len(grid))
        samples_col = values.get("samples")
        if samples_col is not None:
            _need(path, f"{where} samples", samples_col, list, "a list (one per parameter combination)")
            if len(samples_col) != len(points):
                raise IngestError(f"{path}: {where} has {len(samples_col)} sample lists for {len(points)} results")
        failed = skipped = 0
        for k, combo in enumerate(itertools.product(*grid)):
            if points[k] is None:
                failed += 1
                continue
            if isinstance(points[k], float) and math.isnan(points[k]):  # asv's mark of a skipped combination
                skipped += 1
                continue
            point = samples_col[k] if samples_col is not None else None
            if point is None:
                raise IngestError(
                    f"{path}: {where}[{k}] holds asv's summary only, no raw samples: a summary cannot be judged with "
                    "its noise; run asv with --record-samples"
                )
            case: dict[str, Any] = {
                "metric": name,
                "params": dict(zip(names, combo, strict=True)),
                "info": {"cpu": cpu} if isinstance(cpu, str) and cpu else {},
                "unit": unit,
                "direction": "lower",
                "samples": _samples(path, f"{where} samples[{k}]", point),
            }
            cases.append(case)
            if start is None:
                raise IngestError(
                    f"{path}: {where} records no started_at: nothing says when it ran (asv's date is the commit's)"
                )
        if failed:
            notes.append(
                f"{name}: {failed} of {len(points)} parameter combination(s) skipped (null result: failed or skipped)"
            )
        if skipped:
            notes.append(f"{name}: {skipped} of {len(points)} parameter combination(s) skipped (asv skipped them: NaN)")
    if not cases:
        raise IngestError(f"{path}: no benchmark with a result to ingest ({'; '.join(notes) or 'results is empty'})")
    # One asv file keeps, per commit and environment, benchmarks run at different times (a failed one, those of an
    # earlier `asv run --bench`): each benchmark is dated by its own start, never by another's.
    times = {
        name: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(starts[name] // 1000))
        for name in dict.fromkeys(str(c["metric"]) for c in cases)
    }
    when = min(times.values())
    return Foreign(ASV, commit, None, when, host, python, f"asv run ({env})", cases, [], notes, times)


def _asv_kind(path: Path, name: str, meta: object) -> tuple[str, str | None]:
    """(asv's benchmark type, our unit or None when it is not ingested) from benchmarks.json or the name's prefix."""
    if isinstance(meta, dict) and isinstance(meta.get("type"), str):
        kind = meta["type"]
        unit = meta.get("unit")
        if kind in ASV_UNITS and isinstance(unit, str) and ASV_UNIT_NAMES.get(unit) != ASV_UNITS[kind]:
            raise IngestError(f"{path}: benchmarks.json gives {name} ({kind}) the unit {show(unit)}")
        return kind, ASV_UNITS.get(kind)
    last = name.rsplit(".", 1)[-1]
    kind = last.split("_", 1)[0] if "_" in last else last
    if kind == "timeraw":
        kind = "time"
    return kind, ASV_UNITS.get(kind)


def _param_names(path: Path, name: str, meta: object, count: int) -> list[str]:
    """asv's ``param_names`` of a benchmark from benchmarks.json when it names ``count`` distinct ones, else
    ``param1``, ``param2``... (asv's own default names)."""
    given = meta.get("param_names") if isinstance(meta, dict) else None
    if isinstance(given, list) and len(given) == count and all(isinstance(n, str) and n for n in given):
        if len(set(given)) != count:
            raise IngestError(f"{path}: benchmarks.json names a parameter of {name} twice")
        return [str(n) for n in given]
    return [f"param{i}" for i in range(1, count + 1)]


def read(path: Path, doc: dict[str, Any], kind: str) -> Foreign:
    """The run of a foreign benchmark file of ``kind`` (:func:`kind_of`)."""
    return pytest_benchmark(path, doc) if kind == PYTEST_BENCHMARK else asv(path, doc)
