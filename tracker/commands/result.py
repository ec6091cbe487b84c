"""``tracker result new BENCHMARK``: write a valid benchmark result file from measured samples.

For projects without a benchmark harness that writes result files itself (this repository's ``bench/`` does):
the cases come from a JSON or CSV file (``--cases FILE``, ``-`` for standard input) or, for one case, from
flags (``--metric``, ``--unit``, ``--direction``, ``--param K=V``..., ``--sample X``...). The provenance is filled
in as :func:`tracker.store.result_files.new_result` says (commit, dirty, time, host, the fingerprint of the measured
files); the file is checked by the validator that reads result files, then written atomically into ``bench/results/``
(or ``--out DIR``), where ``tracker status`` and ``verify`` read it.

Input formats:

- JSON: a list of cases, or ``{"cases": [...]}``; a case is ``{"metric", "params", "unit", "direction",
  "samples"}`` with an optional ``info`` (docs/evidence.md), without ``stats`` (computed).
- CSV: a header row naming ``metric``, ``unit``, ``direction`` and ``sample``; every other column is a
  parameter (``info.NAME``: an ``info`` entry instead). One row per sample; rows with the same metric and
  parameters make one case, samples in row order. Values are typed as a gate's ``where`` compares them: an
  integer (``91000``) is an integer, a decimal or exponent number (``1.5``, ``1e3``) a float, ``true``/``false``
  a boolean, anything else text.

A ``--measure`` glob that matches no file of the working tree is refused (exit 3, ``src`` for the directory
``src/`` suggested); a result whose measured files lie outside the ``paths`` of a phase whose bench gate names one
of its metrics is written, with a warning on standard error: editing that phase's code would never make it stale.

Exit codes: 0 written; 3 bad flags (no cases, both sources, a bad ``--param``, a ``--measure`` glob that is invalid
or matches no file, no measured file); 8 a cases file that cannot be read or holds an invalid case (``path:
reason``), or the result cannot be written; 2 invalid plans (only when ``--measure`` is not given: the files are then
those of the phases whose bench gates name one of the file's metrics; with ``--measure``, plans that cannot be
read only leave out the warning).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path
from typing import Any, TextIO

from tracker.base.fileio import MAX_READ, parse_json, read_regular
from tracker.commands.common import require_utf8
from tracker.errors import FileError, UsageError

INT = re.compile(r"[+-]?[0-9]+")
FLOAT = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")
CSV_REQUIRED = ("metric", "unit", "direction", "sample")


def run_new(
    root: Path,
    benchmark: str,
    cases_file: str | None = None,
    *,
    metric: str | None = None,
    unit: str | None = None,
    direction: str | None = None,
    params: list[str] | None = None,
    samples: list[str] | None = None,
    measure: list[str] | None = None,
    gpu: str | None = None,
    command: str | None = None,
    out_dir: Path | None = None,
    out: TextIO | None = None,
    as_json: bool = False,
    err: TextIO | None = None,
) -> int:
    """Write one result file; exit 0. ``as_json``: print ``{"path", "cases", "measured", "commit", "dirty"}``. Warnings
    (:func:`never_stale_warnings`) go to ``err`` (standard error)."""
    from tracker.store.result_files import new_result, write_result

    out = out or sys.stdout
    require_utf8(
        ("BENCHMARK", benchmark),
        ("--metric", metric),
        ("--unit", unit),
        ("--direction", direction),
        *(("--param", param) for param in params or []),
        ("--gpu", gpu),
        ("--command", command),
    )
    if not benchmark.strip():
        raise UsageError("BENCHMARK: a name is needed (the result file records it, and its file name holds it)")
    one_case = any(x for x in (metric, unit, direction, params, samples))
    if cases_file is not None and one_case:
        raise UsageError("--cases or --metric/--unit/--direction/--param/--sample, not both")
    if cases_file is not None:
        source, cases = cases_file, read_cases(cases_file)
    elif one_case:
        source, cases = "", [flag_case(metric, unit, direction, params or [], samples or [])]
    else:
        raise UsageError(
            "no cases: give --cases FILE (JSON or CSV, - for standard input) or one case with --metric, --unit, "
            "--direction, --param K=V and --sample X"
        )
    patterns = list(measure or []) or _measured_by_plans(root, cases)
    if measure:
        check_measure_globs(root, patterns)
    try:
        doc = new_result(root, benchmark, cases, patterns, command=command, gpu=gpu)
    except ValueError as err:
        text = str(err)
        if text.startswith(("measured:", "TRACKER_")):
            raise UsageError(text.replace("measured:", "--measure:", 1)) from None
        if source:
            raise FileError(f"{source}: {text}") from None
        raise UsageError(text) from None
    path = write_result(doc, out_dir if out_dir is not None else root / "bench" / "results", root=root)
    if measure:
        for line in never_stale_warnings(root, cases, doc["provenance"]["fingerprint"]["files"]):
            (err or sys.stderr).write(line + "\n")
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    prov = doc["provenance"]
    if as_json:
        summary = {
            "path": shown,
            "cases": len(doc["cases"]),
            "measured": sorted(prov["fingerprint"]["files"]),
            "commit": prov["commit"],
            "dirty": prov["dirty"],
        }
        out.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        return 0
    state = "unknown commit" if prov["commit"] is None else prov["commit"][:10] + (" +dirty" if prov["dirty"] else "")
    out.write(
        f"wrote {shown}: {len(doc['cases'])} case(s), {len(prov['fingerprint']['files'])} measured file(s), {state}\n"
    )
    return 0


def read_cases(name: str) -> list[dict[str, Any]]:
    """The cases of a JSON or CSV file (``-``: standard input), told apart by the first character; FileError
    ``name: reason`` when it cannot be read or is neither."""
    if name == "-":
        data = sys.stdin.buffer.read(MAX_READ + 1)
        if len(data) > MAX_READ:
            raise FileError(f"<stdin>: more than {MAX_READ} bytes")
    else:
        data = read_regular(Path(name))
    label = "<stdin>" if name == "-" else name
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise FileError(f"{label}: not UTF-8 text (byte {err.start})") from None
    if text.lstrip()[:1] in ("[", "{"):
        return _json_cases(label, data)
    return _csv_cases(label, text)


def _json_cases(label: str, data: bytes) -> list[dict[str, Any]]:
    try:
        doc = parse_json(data.removeprefix(b"\xef\xbb\xbf"))
    except ValueError as err:
        raise FileError(f"{label}: {err}") from None
    cases = doc.get("cases") if isinstance(doc, dict) and set(doc) == {"cases"} else doc
    if not isinstance(cases, list):
        raise FileError(f'{label}: expected a JSON list of cases or {{"cases": [...]}}')
    return cases


def _csv_cases(label: str, text: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text))
    try:
        rows = [
            (reader.line_num, row) for row in reader
        ]  # line_num: where a row ends (a quoted cell may hold newlines)
    except csv.Error as err:
        raise FileError(f"{label}:{reader.line_num}: {err}") from None
    if not rows:
        raise FileError(f"{label}: empty")
    header = [h.strip() for h in rows[0][1]]
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing:
        raise FileError(
            f"{label}:1: the header names no {', '.join(missing)} column (it needs {', '.join(CSV_REQUIRED)})"
        )
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated or "" in header:
        raise FileError(
            f"{label}:1: " + (f"column {repeated[0]!r} appears twice" if repeated else "a column has no name")
        )
    cases: dict[str, dict[str, Any]] = {}
    for line, row in rows[1:]:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise FileError(f"{label}:{line}: {len(row)} values for {len(header)} columns")
        cells = dict(zip(header, (cell.strip() for cell in row), strict=True))
        params = {k: typed(v) for k, v in cells.items() if k not in CSV_REQUIRED and not k.startswith("info.")}
        info = {k.removeprefix("info."): typed(v) for k, v in cells.items() if k.startswith("info.")}
        sample = typed(cells["sample"])
        if type(sample) not in (int, float):
            raise FileError(f"{label}:{line}: sample {cells['sample']!r} is not a number")
        key = json.dumps([cells["metric"], sorted((k, type(v).__name__, v) for k, v in params.items())])
        case = cases.setdefault(
            key,
            {
                "metric": cells["metric"],
                "params": params,
                "unit": cells["unit"],
                "direction": cells["direction"],
                "samples": [],
                "line": line,
            },
        )
        if (case["unit"], case["direction"]) != (cells["unit"], cells["direction"]):
            raise FileError(f"{label}:{line}: unit/direction differ from line {case['line']} of the same case")
        if info:
            case["info"] = {**case.get("info", {}), **info}
        case["samples"].append(sample)
    if not cases:
        raise FileError(f"{label}: no rows after the header")
    return [{k: v for k, v in c.items() if k != "line"} for c in cases.values()]


def typed(text: str) -> str | int | float | bool:
    """A CSV cell or ``--param`` value with the type a gate's ``where`` compares: integer, float, boolean or text."""
    try:
        if INT.fullmatch(text):
            return int(text)
        if FLOAT.fullmatch(text):
            return float(text)  # 1e999 is infinite: the validator refuses it with the case's name
    except ValueError:  # more digits than Python converts (4300): no measurement has those
        pass
    if text in ("true", "false"):
        return text == "true"
    return text


def flag_case(
    metric: str | None, unit: str | None, direction: str | None, params: list[str], samples: list[str]
) -> dict[str, Any]:
    """The one case given by flags; UsageError for a missing flag or a malformed value."""
    for flag, value in (("--metric", metric), ("--unit", unit), ("--direction", direction)):
        if not value:
            raise UsageError(f"{flag} is needed for a case given by flags")
    if not samples:
        raise UsageError("--sample is needed (repeat it, or give several values separated by commas)")
    parsed: dict[str, str | int | float | bool] = {}
    for item in params:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--param {item!r}: expected KEY=VALUE")
        if key.strip() in parsed:
            raise UsageError(f"--param {key.strip()}: given twice")
        parsed[key.strip()] = typed(value.strip())
    values: list[int | float] = []
    for item in samples:
        for part in item.split(","):
            number = typed(part.strip())
            if isinstance(number, bool) or not isinstance(number, (int, float)):
                raise UsageError(f"--sample {part.strip()!r}: not a number")
            values.append(number)
    return {"metric": metric, "params": parsed, "unit": unit, "direction": direction, "samples": values}


def check_measure_globs(root: Path, globs: list[str]) -> None:
    """UsageError (exit 3) for a ``--measure`` glob that is not a valid ``paths`` glob or matches no file of the
    working tree: a result that names no file of a phase's ``paths`` never goes stale, and ``src`` (a file named
    src) for ``src/`` is an easy slip. Every such glob is named."""
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import tree_file_ids
    from tracker.base.globs import glob_problem
    from tracker.commands.lint import no_match_hint

    invalid = [f"--measure: {problem}" for problem in map(glob_problem, globs) if problem]
    if invalid:
        raise UsageError("; ".join(invalid))
    index = FileIndex(tree_file_ids(root))
    unmatched = [
        f"--measure '{glob}': no file of the working tree matches it{no_match_hint(index, glob)}"
        for glob in globs
        if not index.match((glob,))
    ]
    if unmatched:
        raise UsageError("; ".join(unmatched))


def never_stale_warnings(root: Path, cases: list[dict[str, Any]], measured: dict[str, str]) -> list[str]:
    """``tracker: warning: ...`` for every phase with a bench gate on one of the cases' metrics whose ``paths`` hold
    none of the ``measured`` files: a bench phase goes stale only when a measured file under its paths changes, so
    editing its code would never make this result stale. Plans that cannot be read give no warning (status and
    lint report them)."""
    from tracker.base.file_index import FileIndex
    from tracker.core.model import BenchGate
    from tracker.errors import TrackerError
    from tracker.plans.load import load_plan_set

    metrics = {c.get("metric") for c in cases if isinstance(c, dict)}
    try:
        plans = load_plan_set(root).plans
    except TrackerError:
        return []
    index = FileIndex(measured)
    out: list[str] = []
    for plan in plans:
        for ph in plan.phases:
            gated = sorted({g.bench for g in ph.gates if isinstance(g, BenchGate) and g.bench in metrics})
            if gated and ph.paths and not index.match(ph.paths):
                out.append(
                    f"tracker: warning: phase {plan.id}/{ph.id} gates {', '.join(gated)}, but no measured file is "
                    f"under its paths ({', '.join(ph.paths)}): editing its code will never make this result stale"
                )
    return out


def _measured_by_plans(root: Path, cases: list[dict[str, Any]]) -> list[str]:
    """Without ``--measure``: the ``paths`` of every phase with a bench gate on one of the cases' metrics (the code
    whose change should make that phase stale). UsageError when there are none."""
    from tracker.core.model import BenchGate
    from tracker.plans.load import load_plans

    metrics = {c.get("metric") for c in cases if isinstance(c, dict)}
    _, plans = load_plans(root)
    paths = sorted(
        {
            p
            for plan in plans
            for ph in plan.phases
            if any(isinstance(g, BenchGate) and g.bench in metrics for g in ph.gates)
            for p in ph.paths
        }
    )
    if not paths:
        shown = ", ".join(sorted(str(m) for m in metrics)) or "none"
        raise UsageError(
            "--measure: name the files the benchmark measured (globs like a phase's paths): no phase with a "
            f"bench gate on {shown} has paths to take them from"
        )
    return paths
