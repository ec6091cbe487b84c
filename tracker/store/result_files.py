"""Benchmark result files: loading (validated once, then cached by content hash), plain views, statistics.

Validation is pydantic (:mod:`tracker.store.result_schema`), but this module imports only the standard
library: a file's bytes are validated the first time they are seen and the verdict is handed to the
command's cache (``result-checks``, :mod:`tracker.base.cache`: {sha256 of the bytes: "" when valid, else the
reason}), so a warm ``tracker status`` never pays pydantic's import.
Gates read the plain views below (named tuples: ``dataclasses`` alone costs ~20 ms of import on
the status path); every statistic is recomputed from the raw samples.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tracker.base.cache import VALIDATION_LIBRARIES, Cache, cache_key, library_key
from tracker.base.contract import RESULT_SCHEMA, RESULT_VERSION, RESULTS_DIR, Clock, utc_time
from tracker.base.fileio import parse_json, read_regular
from tracker.core.model import ResultCase, ResultRun
from tracker.core.stats import case_stats
from tracker.errors import FileError, ResultFileError

CHECKS = "result-checks"  # the cache of validation verdicts (tracker.base.cache)
RUNS = "result-runs"  # the command's memo of parsed files (Cache.memo: never written)
# Bump when validation rules change: cached verdicts are keyed by it (v3: cases may carry info; v4: one time
# parser, impossible dates and non-integer versions rejected, params and info finite, stats of huge samples).
VALIDATOR = "v4"
SETUP = ("driver", "cuda", "torch", "triton", "python", "command")  # ResultRun.setup: runs of one series share it
MAX_CHECKS = 4096  # verdicts kept beyond the files a command saw (older ones go first)


def _view(raw: dict[str, Any], path: str, sha: str) -> ResultRun:
    """Plain view of JSON already validated by the schema (so no checks here)."""
    prov = raw["provenance"]
    cases = tuple(
        ResultCase(c["metric"], dict(c["params"]), c["unit"], c["direction"], tuple(float(x) for x in c["samples"]))
        for c in raw["cases"]
    )
    from datetime import datetime

    time = datetime.fromisoformat(str(utc_time(prov["time"])).replace("Z", "+00:00"))
    return ResultRun(
        path,
        sha,
        raw["benchmark"],
        time,
        prov["host"],
        prov.get("gpu"),
        prov.get("commit"),
        prov.get("dirty"),
        dict(prov["fingerprint"]["files"]),
        cases,
        tuple(prov["fingerprint"].get("patterns") or ()),
        tuple(prov.get(k) for k in SETUP),
    )


def load_result(
    path: Path | str,
    cache: Cache | None = None,
    *,
    data: bytes | None = None,
    root: Path | None = None,
    clock: Clock | None = None,
) -> ResultRun:
    """Read one result file (or its bytes ``data``, already read); validate it unless ``cache`` (the command's;
    None: none) already holds this content's verdict, else hand it the new verdict. A file parsed once in the
    command is not parsed again (the cache's memo).

    Raises :class:`ResultFileError` (``path: reason``) for an unreadable or invalid file: not a regular file
    (a FIFO, a device), with ``root`` one outside ``root`` (a symlink out of the repository), larger than
    :data:`tracker.base.fileio.MAX_READ`, invalid (:mod:`tracker.store.result_schema`), or recorded more than
    :data:`tracker.store.evidence.MAX_FUTURE_S` after this machine's clock (``clock``): checked on every load,
    never cached, since the same bytes become usable once that time has come.
    """
    if data is None:
        try:
            data = read_regular(Path(path), root=root)
        except FileError as exc:
            raise ResultFileError(path, str(exc).removeprefix(f"{path}: ")) from None
    from hashlib import sha256

    sha = sha256(data).hexdigest()
    cache = Cache(None) if cache is None else cache
    runs = cache.memo(RUNS)
    run = runs.get(sha)  # by content alone: the same bytes read at REF and now are parsed once
    if run is None:
        _validate(data, path, sha, cache)
        run = runs[sha] = _view(parse_json(data), str(path), sha)  # type: ignore[arg-type]
    elif run.path != str(path):
        run = run._replace(path=str(path))
    future = (clock or Clock()).future(run.time.strftime("%Y-%m-%dT%H:%M:%SZ"), "provenance.time")
    if future:
        raise ResultFileError(path, future, lasting=False)
    return run


def known_result(path: Path, sha: str | None, cache: Cache, clock: Clock) -> ResultRun | ResultFileError | None:
    """What :func:`load_result` gives for ``path`` whose bytes have the content id ``sha`` when this command parsed
    those bytes already (the cache's memo, which holds only validated runs): that run, named ``path``, or the error
    its time in the future is (checked now, as on every load); None when they were not parsed (then read them)."""
    run = cache.memo(RUNS).get(sha) if sha else None
    if not isinstance(run, ResultRun):
        return None
    future = clock.future(run.time.strftime("%Y-%m-%dT%H:%M:%SZ"), "provenance.time")
    if future:
        return ResultFileError(path, future, lasting=False)
    return run._replace(path=str(path))


def _validate(data: bytes, path: Path | str, sha: str, cache: Cache) -> None:
    """Validate ``data`` unless ``cache`` holds this content's verdict; hand it a new verdict."""
    key = cache_key(CHECKS, VALIDATOR, library_key(*VALIDATION_LIBRARIES))
    known = cache.read(CHECKS, key)
    checks: dict[str, str] = known if isinstance(known, dict) else {}
    verdict = checks.get(sha)
    if isinstance(verdict, str):  # "" (valid) or the reason; any other shape is no verdict: validate again
        if verdict:
            raise ResultFileError(path, verdict)
        return
    from tracker.store.result_schema import parse_result

    try:
        parse_result(data, path)
    except ResultFileError as exc:
        _remember(cache, key, checks, sha, exc.reason)
        raise
    _remember(cache, key, checks, sha, "")


def _remember(cache: Cache, key: str, checks: dict[str, str], sha: str, reason: str) -> None:
    """Hand ``cache`` its verdicts with this one added (the oldest dropped past :data:`MAX_CHECKS`)."""
    kept = {k: v for k, v in checks.items() if k != sha}
    while len(kept) >= MAX_CHECKS:
        del kept[next(iter(kept))]
    kept[sha] = reason
    cache.put(CHECKS, key, kept)


def load_results(
    paths: list[Path], cache: Cache | None = None, root: Path | None = None, clock: Clock | None = None
) -> tuple[list[ResultRun], list[ResultFileError]]:
    """Load many files (with ``root``: only files inside it); bad ones are reported, never partially used.
    ``cache``: as :func:`load_result`; ``clock``: the time their times are checked against (default: now)."""
    good: list[ResultRun] = []
    bad: list[ResultFileError] = []
    clock = clock or Clock()
    for path in paths:
        try:
            good.append(load_result(path, cache, root=root, clock=clock))
        except ResultFileError as exc:
            bad.append(exc)
    return good, bad


def repo_result_files(root: Path, copies: list[str] | None = None, cache: Cache | None = None) -> list[Path]:
    """Every benchmark result file of the repository: the store's result copies, then every ``*.json`` of
    ``bench/results/``. ``copies``: the store's result copies as a caller that loaded the store knows them (paths
    relative to ``root``, as ``Store.bench`` lists them); None: the store is read for them, by its one reader
    (:func:`tracker.store.evidence.load`, through ``cache``; a store file it cannot use is none of them: the store lists
    it as invalid, which leaves every bench gate unmet in status)."""
    if copies is None:
        from tracker.store.evidence import load

        copies = [rel for rel, _ in load(root, strict=False, results=False, cache=cache).bench]
    out = sorted(root / rel for rel in copies)
    return out + sorted((root / RESULTS_DIR).glob("*.json"))


class ResultSet(list[ResultRun]):
    """The repository's valid result runs, plus the files that were rejected (``errors``)."""

    errors: list[ResultFileError]


def load_repo_results(
    root: Path,
    strict: bool = True,
    *,
    files: list[Path] | None = None,
    clock: Clock | None = None,
    cache: Cache | None = None,
) -> ResultSet:
    """All result files of the repository (paths relative to ``root``), oldest first, deduplicated by
    content (an ingested copy equals its source). A file is used whole or not at all: an invalid one
    raises :class:`ResultFileError` when ``strict``, else is listed in the set's ``errors``. ``files``: the
    repository's result files when the caller listed them already (:func:`repo_result_files`); ``clock`` as
    :func:`load_results`; ``cache``: the command's (None: the repository's cache read, nothing kept).
    """
    cache = Cache(root) if cache is None else cache
    good, bad = load_results(repo_result_files(root, cache=cache) if files is None else files, cache, root, clock)
    if bad and strict:
        raise bad[0]
    return result_set(root, good, bad)


def result_set(root: Path, good: list[ResultRun], bad: list[ResultFileError]) -> ResultSet:
    """The :class:`ResultSet` of runs and rejected files as :func:`load_results` gave them, in the order of the
    files: paths relative to ``root``, deduplicated by content (the first file of the same bytes names it), oldest
    first."""
    unique: dict[str, ResultRun] = {}
    for run in good:
        rel = Path(run.path).relative_to(root).as_posix() if Path(run.path).is_absolute() else run.path
        unique.setdefault(run.sha256, run._replace(path=rel))
    out = ResultSet(sorted(unique.values(), key=lambda r: (r.time, r.path)))
    out.errors = [
        ResultFileError(
            Path(e.path).relative_to(root).as_posix() if Path(e.path).is_absolute() else e.path, e.reason, e.lasting
        )
        for e in bad
    ]
    return out


def results_json_schema() -> dict[str, Any]:
    """JSON Schema of result files (``tracker schema --results``)."""
    from tracker.store.result_schema import json_schema

    return json_schema()


# --- Writing result files: the public helper for projects without a harness of their own ---------------------------


def new_result(
    root: Path,
    benchmark: str,
    cases: list[dict[str, Any]],
    measured: list[str],
    *,
    command: str | None = None,
    gpu: str | None = None,
    environment: dict[str, str | None] | None = None,
) -> dict[str, Any]:
    """A valid result document for ``cases`` measured now on the working tree at ``root``.

    Each case is ``{"metric", "params", "unit", "direction", "samples"}`` plus an optional ``info`` (docs/evidence.md);
    its ``stats`` are computed here. The provenance is filled in: commit and dirty flag (:mod:`tracker.base.dirty`: the
    rule every writer uses), the time (now, UTC), this host, ``gpu`` (what a gate's ``hardware`` matches), optional
    ``environment`` keys (``driver``, ``cuda``, ``torch``, ``triton``), the Python version, ``command`` (default:
    this process's command line) and the fingerprint of the files ``measured`` matches (globs as in a phase's
    ``paths``) in the working tree: what makes a phase stale when that code changes. Raises ValueError naming what
    is wrong (a case that is not valid, no measured file, a bad ``TRACKER_COMMIT``); the document is checked by the
    same validator that reads result files, so what this returns is always accepted.
    """
    import platform
    import socket
    import sys
    import time

    from tracker.base.contract import set_fingerprint, shown_name, utf8_name
    from tracker.base.dirty import commit_state
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import tree_file_ids

    files = FileIndex(tree_file_ids(root)).match(measured) if measured else {}
    if not files:
        raise ValueError(
            f"measured: no file of the working tree matches {', '.join(measured) or 'nothing given'} "
            "(name the files the benchmark measured, as globs like a phase's paths)"
        )
    unnamed = sorted(name for name in files if not utf8_name(name))
    if unnamed:
        raise ValueError(
            f"measured: {len(unnamed)} matched file(s) whose name is not UTF-8 ({shown_name(unnamed[0])}"
            f"{', ...' if len(unnamed) > 1 else ''}): a result file (UTF-8 JSON) cannot name it, and leaving it out of "
            "the fingerprint would let it change unseen; rename it, or narrow the globs"
        )
    commit, dirty = commit_state(root)
    extra = {k: v for k, v in (environment or {}).items() if k in ("driver", "cuda", "torch", "triton")}
    unknown = sorted(set(environment or {}) - set(extra))
    if unknown:
        raise ValueError(f"environment: unknown key {unknown[0]!r} (driver, cuda, torch or triton)")
    doc = {
        "schema": RESULT_SCHEMA,
        "version": RESULT_VERSION,
        "benchmark": benchmark,
        "provenance": {
            "commit": commit,
            "dirty": dirty,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": socket.gethostname(),
            "gpu": gpu,
            **extra,
            "python": platform.python_version(),
            "command": command if command is not None else " ".join(sys.argv),
            "fingerprint": {
                "algorithm": "git-blob-sha1",
                "digest": set_fingerprint(files),
                "files": dict(sorted(files.items())),
                "patterns": list(measured),
            },
        },
        "cases": [_new_case(i, c) for i, c in enumerate(cases)],
    }
    check_result(doc)
    return doc


def _new_case(i: int, given: dict[str, Any]) -> dict[str, Any]:
    """One case with its stats; ValueError ``cases[i]: ...`` for a shape the schema could not name clearly."""
    if not isinstance(given, dict):
        raise ValueError(f"cases[{i}]: expected an object, got {type(given).__name__}")
    allowed = {"metric", "params", "info", "unit", "direction", "samples"}
    extra = sorted(set(given) - allowed)
    if extra:
        raise ValueError(
            f"cases[{i}]: unknown key {extra[0]!r} (metric, params, info, unit, direction, samples; stats are computed)"
        )
    samples = given.get("samples")
    if not isinstance(samples, (list, tuple)) or not samples:
        raise ValueError(f"cases[{i}].samples: expected a non-empty list of numbers")
    values: list[float] = []
    for j, x in enumerate(samples):
        try:
            value = float(x) if type(x) in (int, float) else math.nan
        except OverflowError:  # an integer beyond any float
            value = math.inf
        if not math.isfinite(value):
            raise ValueError(f"cases[{i}].samples[{j}]: {_short(x)} is not a finite number")
        values.append(value)
    case: dict[str, Any] = {k: given[k] for k in ("metric", "params", "info") if k in given}
    return {
        **case,
        "unit": given.get("unit"),
        "direction": given.get("direction"),
        "samples": values,
        "stats": case_stats(values),
    }


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_result(doc: dict[str, Any]) -> None:
    """ValueError with the validator's reason when ``doc`` would not be accepted as a result file."""
    import json

    from tracker.store.result_schema import parse_result

    try:
        data = json.dumps(doc, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a text holds half a surrogate pair (not Unicode text)") from None
    except (TypeError, ValueError) as err:  # a value JSON has no form for (NaN, an object)
        raise ValueError(f"not JSON: {err}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    try:
        parse_result(data, "result")
    except ResultFileError as err:
        raise ValueError(
            err.reason.removeprefix("file: ")
        ) from None  # "file": the validator's name for the whole document


def write_result(doc: dict[str, Any], out_dir: Path, root: Path | None = None) -> Path:
    """Write a result document (checked first: ValueError when invalid) into ``out_dir``, named by the file
    contract's rule (:func:`tracker.base.contract.evidence_name`: ``<UTC time to the µs>-<host>-<benchmark>-<6
    hex>.json``), atomically (a whole file or none); its path.

    Runs recorded within the same second are ordered by file name (docs/evidence.md, rule 4): the name starts with
    the time of writing, so the run written last is the newest. ``bench/results/`` of the repository is where
    ``tracker status`` reads results from (or ingest the file). With ``root``, an ``out_dir`` inside the repository
    must resolve inside it (:func:`tracker.base.contract.check_inside`: a result file that does not is refused by every
    reader); one named outside is the caller's own."""
    import json
    import os

    from tracker.base.contract import atomic_write, evidence_name

    check_result(doc)
    path = out_dir / evidence_name(str(doc["benchmark"]), str(doc["provenance"]["host"]))
    inside = root is not None and Path(os.path.abspath(out_dir)).is_relative_to(os.path.abspath(root))
    try:
        atomic_write(
            path, (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8"), root=root if inside else None
        )
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
    return path
