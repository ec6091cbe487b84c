"""`python -m bench.table`: the Markdown tables the docs quote, generated from a `bench verify` result file.

    python -m bench.table [RESULT_FILE] [--layout summary|full] [--against OTHER_FILE]

Without RESULT_FILE: the newest file of bench/results/ by `provenance.time`, then by file name (the rule the
tracker's bench gates use to pick the newest run). Every number comes from the file: medians are recomputed
from the raw samples (the `stats` blocks are not trusted), each case's floor is its `floor_fraction` sample
times its `time_us` sample (the bench writes fraction = floor / time, run by run), the ceilings are the
medians of the run's `ceiling.*` samples. The kernel version is read from the copy of
`kernel/csrc/verify_attention.h` the run measured (its blob id in the fingerprint, looked up with git).

- `--layout summary` (default): one row per shape, the kernel (`cuda`) at every context, FlashInfer FA2
  (prefix only) at every context, triton and plain torch at the longest one (kernel/README.md).
- `--layout full`: one row per shape and context, every implementation, the CUDA split count
  (bench/README.md).
- `--against OTHER`: per case and implementation, the median here against OTHER's, the change in percent
  (this / other - 1), the range per implementation and context, the fraction-of-floor change in points.

Standard library only and no torch: it runs on any machine that has the result files.
Exit codes: 0 table printed; 1 a result file unreadable, malformed or missing what the table needs (one line
`path: reason`), or no result file to read; 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tracker.base import fileio as tracker_fileio  # standard library only, like this module
from tracker.errors import FileError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
EXIT_OK, EXIT_BAD_FILE, EXIT_USAGE = 0, 1, 2
MAX_BYTES = 64 * 2**20  # the largest result files are under 1 MB
MAIN_IMPL = "cuda"
LABELS = {"cuda": "cuda", "triton": "triton", "torch": "plain torch", "flashinfer": "FlashInfer FA2 (prefix only)"}
PREFIX_ONLY = {"flashinfer"}
VERSION_SOURCE = "kernel/csrc/verify_attention.h"
VERSION_PATTERN = re.compile(
    r"constexpr int (?:kBestVariant|kKernelVersion) = (\d+);"
)  # the name before and after v20 retired


class TableError(Exception):
    """A result file the table cannot be built from; the message is `path: reason`."""


@dataclass(frozen=True)
class Cell:
    """One implementation on one case: median time, the case's floor (None when the run has no fraction)."""

    median_us: float
    floor_us: float | None
    samples: int
    graph: bool | None
    splits: int | None

    @property
    def fraction(self) -> float | None:
        return None if self.floor_us is None else self.floor_us / self.median_us


Shape = tuple[int, int, int]  # (batch, heads, nodes)


@dataclass(frozen=True)
class Run:
    """What the tables need from one result file."""

    path: Path
    time: datetime
    commit: str | None
    dirty: bool | None
    gpu: str | None
    kernel_version: str | None
    copy_tbps: float | None
    mma_tflops: float | None
    cells: dict[tuple[str, Shape, int], Cell]  # (impl, shape, ctx) -> cell

    def impls(self) -> list[str]:
        """Implementations in the run: the kernel, FlashInfer, triton, torch, then any other by name."""
        names = {impl for impl, _, _ in self.cells}
        order = [MAIN_IMPL, "flashinfer", "triton", "torch"]
        return [n for n in order if n in names] + sorted(names - set(order))

    def shapes(self) -> list[Shape]:
        """Shapes in the order the run measured them (the order of bench verify's case list)."""
        return list(dict.fromkeys(shape for _, shape, _ in self.cells))

    def contexts(self) -> list[int]:
        return sorted({ctx for _, _, ctx in self.cells})


# --- reading -------------------------------------------------------------------------------------------------


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES, read by the tracker's one reader
    (:func:`tracker.base.fileio.read_regular`: never blocks on a FIFO or a device); TableError `path: reason`."""
    try:
        return tracker_fileio.read_regular(path, limit=MAX_BYTES)
    except FileError as err:
        raise TableError(str(err)) from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {repeated!r}")
    return result


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a result file may hold")


def read_document(path: Path) -> dict[str, Any]:
    """The JSON object of a result file of any benchmark (no NaN/Infinity, no duplicate keys)."""
    data = read_regular(path)
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except UnicodeDecodeError as err:
        raise TableError(f"{path}: not UTF-8: {err.reason} at byte {err.start}") from err
    except json.JSONDecodeError as err:
        raise TableError(f"{path}:{err.lineno}:{err.colno}: malformed JSON: {err.msg}") from err
    except (ValueError, RecursionError) as err:
        raise TableError(f"{path}: malformed JSON: {err}") from err
    if not isinstance(doc, dict):
        raise TableError(f"{path}: expected a JSON object at the top, got {type(doc).__name__}")
    if doc.get("schema") != "tracker-bench-result" or doc.get("version") != 1:
        raise TableError(f"{path}: not a tracker-bench-result version 1 file")
    return doc


def load_document(path: Path) -> dict[str, Any]:
    """The JSON object of a `bench verify` result file."""
    doc = read_document(path)
    if doc.get("benchmark") != "verify":
        raise TableError(f'{path}: a {json.dumps(doc.get("benchmark"))[:60]} result, not a "verify" one')
    return doc


def _expect(value: Any, kinds: type | tuple[type, ...], where: str, path: Path) -> Any:
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _as_tuple(kinds)):
        raise TableError(f"{path}: {where}: expected {_kind_names(kinds)}, got {json.dumps(value)[:60]}")
    return value


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _kind_names(kinds: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        dict: "an object",
        list: "a list",
        type(None): "null",
    }
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kinds))


def run_time(doc: dict[str, Any], path: Path) -> datetime:
    """`provenance.time` as an aware datetime."""
    prov = _expect(doc.get("provenance"), dict, "provenance", path)
    text = _expect(prov.get("time"), str, "provenance.time", path)
    try:
        when = datetime.fromisoformat(text)
    except ValueError as err:
        raise TableError(f"{path}: provenance.time: not an ISO 8601 time: {text!r}") from err
    if when.tzinfo is None:
        raise TableError(f"{path}: provenance.time: {text!r} has no time zone")
    return when


def samples_of(case: dict[str, Any], where: str, path: Path) -> list[float]:
    """A case's samples: a non-empty list of finite positive numbers."""
    samples = _expect(case.get("samples"), list, f"{where}.samples", path)
    if not samples:
        raise TableError(f"{path}: {where}.samples: empty")
    for i, value in enumerate(samples):
        _expect(value, (int, float), f"{where}.samples[{i}]", path)
        if not math.isfinite(value) or value <= 0:
            raise TableError(f"{path}: {where}.samples[{i}] is {value}: expected a finite number > 0")
    return [float(s) for s in samples]


def _floor_us(times: list[float], fractions: list[float], where: str, time_where: str, path: Path) -> float:
    """The case's floor: fraction x time of each run, the same number for every run (to rounding)."""
    if len(times) != len(fractions):
        raise TableError(f"{path}: {where}: {len(fractions)} samples, {len(times)} in its time_us case {time_where}")
    floors = [f * t for f, t in zip(fractions, times, strict=True)]
    floor = statistics.median(floors)
    if max(abs(f - floor) for f in floors) > 1e-9 * floor:
        raise TableError(f"{path}: {where}: floor_fraction x time_us ({time_where}) is not one floor for every run")
    return floor


def _shape_key(params: dict[str, Any], where: str, path: Path) -> tuple[str, Shape, int]:
    impl = _expect(params.get("impl"), str, f"{where}.params.impl", path)
    numbers = [_expect(params.get(k), int, f"{where}.params.{k}", path) for k in ("batch", "heads", "nodes", "ctx")]
    return impl, (numbers[0], numbers[1], numbers[2]), numbers[3]


def parse_run(path: Path, doc: dict[str, Any], root: Path = ROOT) -> Run:
    """The Run of a loaded verify result document."""
    prov = doc["provenance"]
    when = run_time(doc, path)
    commit = _expect(prov.get("commit"), (str, type(None)), "provenance.commit", path)
    dirty = _expect(prov.get("dirty"), (bool, type(None)), "provenance.dirty", path)
    gpu = _expect(prov.get("gpu"), (str, type(None)), "provenance.gpu", path)
    cases = _expect(doc.get("cases"), list, "cases", path)
    times: dict[tuple[str, Shape, int], tuple[list[float], dict[str, Any], str]] = {}
    fractions: dict[tuple[str, Shape, int], tuple[list[float], str]] = {}
    ceilings: dict[str, float] = {}
    for i, case in enumerate(cases):
        where = f"cases[{i}]"
        _expect(case, dict, where, path)
        metric = _expect(case.get("metric"), str, f"{where}.metric", path)
        if metric in ("ceiling.copy_tbps", "ceiling.mma_tflops"):
            ceilings[metric] = statistics.median(samples_of(case, where, path))
        elif metric in ("verify_attn.time_us", "verify_attn.floor_fraction"):
            params = _expect(case.get("params"), dict, f"{where}.params", path)
            key = _shape_key(params, where, path)
            target: dict[Any, Any] = times if metric == "verify_attn.time_us" else fractions
            if key in target:
                raise TableError(f"{path}: {where}: a second {metric} case for {_describe(key)}")
            samples = samples_of(case, where, path)
            target[key] = (samples, case, where) if target is times else (samples, where)
    if not times:
        raise TableError(f"{path}: no verify_attn.time_us cases")
    cells = {
        key: _cell(samples, case, where, fractions.get(key), path) for key, (samples, case, where) in times.items()
    }
    fingerprint = prov.get("fingerprint")
    files = fingerprint.get("files") if isinstance(fingerprint, dict) else None
    return Run(
        path=path,
        time=when,
        commit=commit,
        dirty=dirty,
        gpu=gpu,
        kernel_version=kernel_version(files if isinstance(files, dict) else {}, root),
        copy_tbps=ceilings.get("ceiling.copy_tbps"),
        mma_tflops=ceilings.get("ceiling.mma_tflops"),
        cells=cells,
    )


def _cell(
    times: list[float], case: dict[str, Any], where: str, fractions: tuple[list[float], str] | None, path: Path
) -> Cell:
    graph = case["params"].get("graph")
    given = case.get("info")
    info: dict[str, Any] = given if isinstance(given, dict) else {}
    splits = info.get("cuda_splits")
    return Cell(
        median_us=statistics.median(times),
        floor_us=None if fractions is None else _floor_us(times, fractions[0], fractions[1], where, path),
        samples=len(times),
        graph=graph if isinstance(graph, bool) else None,
        splits=splits if isinstance(splits, int) and not isinstance(splits, bool) else None,
    )


def _describe(key: tuple[str, Shape, int]) -> str:
    impl, (b, h, t), ctx = key
    return f"impl={impl} batch={b} heads={h} nodes={t} ctx={ctx}"


def kernel_version(files: dict[str, Any], root: Path) -> str | None:
    """`v<kKernelVersion>` of the verify_attention.h the run measured (by blob id), None where git lacks it."""
    blob = files.get(VERSION_SOURCE)
    if not isinstance(blob, str) or not re.fullmatch(r"[0-9a-f]{40}", blob):
        return None
    try:
        proc = subprocess.run(["git", "cat-file", "blob", blob], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = VERSION_PATTERN.search(proc.stdout) if proc.returncode == 0 else None
    return f"v{match.group(1)}" if match else None


def load_run(path: Path, root: Path = ROOT) -> Run:
    """Read and parse one result file."""
    return parse_run(path, load_document(path), root)


def newest_result(directory: Path) -> Path:
    """The newest verify result file in directory, by provenance.time, then by file name.

    Every file is read: one that cannot be read stops the choice (it could be the newest run); results of
    other benchmarks are passed over."""
    try:
        paths = sorted(p for p in directory.iterdir() if p.name.endswith(".json") and not p.name.startswith("."))
    except OSError as err:
        raise TableError(f"{directory}: cannot list: {err.strerror}") from err
    dated: list[tuple[datetime, str, Path]] = []
    for path in paths:
        doc = read_document(path)
        if doc.get("benchmark") == "verify":
            dated.append((run_time(doc, path), path.name, path))
    if not dated:
        raise TableError(f"{directory}: no verify result files")
    return max(dated)[2]


# --- formatting ----------------------------------------------------------------------------------------------


def ctx_label(ctx: int) -> str:
    """5700 -> 5.7k, 23000 -> 23k; below 1000 the number itself."""
    if ctx < 1000:
        return str(ctx)
    return f"{ctx / 1000:.1f}".removesuffix(".0") + "k"


def shape_label(shape: Shape) -> str:
    return ",".join(map(str, shape))


def timed(cell: Cell | None) -> str:
    """`24.5 (10.2%)`: median us and fraction of the floor; `eager` when not replayed from a CUDA graph."""
    if cell is None:
        return "-"
    text = f"{cell.median_us:,.1f}"
    if cell.fraction is not None:
        text += f" ({100 * cell.fraction:.1f}%)"
    return text + (" eager" if cell.graph is False else "")


def bare(cell: Cell | None, decimals: int = 1) -> str:
    return "-" if cell is None else f"{cell.median_us:,.{decimals}f}" + (" eager" if cell.graph is False else "")


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def provenance_line(run: Run, root: Path = ROOT) -> str:
    """`NVIDIA H200, commit 781ddf0 (clean), kernel v26, `path` (time)`."""
    commit = "unknown commit" if run.commit is None else f"commit {run.commit[:7]}"
    state = {True: " (dirty)", False: " (clean)", None: ""}[run.dirty]
    version = f"kernel {run.kernel_version}" if run.kernel_version else "kernel version unknown"
    return (
        f"{run.gpu or 'unknown GPU'}, {commit}{state}, {version}, `{display_path(run.path, root)}` "
        f"({run.time.strftime('%Y-%m-%dT%H:%M:%SZ')})"
    )


def display_path(path: Path, root: Path = ROOT) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def header_text(run: Run, root: Path = ROOT) -> str:
    """The sentence above a table: the run, the ceilings and floor, what the cells mean."""
    counts = [cell.samples for cell in run.cells.values()]
    text = provenance_line(run, root) + f". Median µs of {min(counts)}-{max(counts)} timed runs a case"
    if run.copy_tbps is not None and run.mma_tflops is not None:
        text += (
            f" and, in brackets, the fraction of the floor max(bytes / {run.copy_tbps:.2f} TB/s, "
            f"FLOPs / {run.mma_tflops:.0f} TFLOP/s), both ceilings measured in the same run"
        )
    text += "."
    if all(cell.graph for cell in run.cells.values()):
        text += " Every call replayed from a CUDA graph."
    elif any(cell.graph is False for cell in run.cells.values()):
        text += " `eager`: timed without a CUDA graph."
    if PREFIX_ONLY & {impl for impl, _, _ in run.cells}:
        text += " FlashInfer FA2 runs on the prefix only: it has no tree mask."
    return text


def summary_table(run: Run, root: Path = ROOT) -> str:
    """kernel/README.md's table: one row per shape."""
    impls = run.impls()
    main = impls[0]
    contexts, longest = run.contexts(), run.contexts()[-1]
    header = ["B,H,T", *(f"{main}, L={ctx_label(c)}" for c in contexts)]
    if "flashinfer" in impls and main != "flashinfer":
        header.append("FlashInfer FA2 " + " / ".join(ctx_label(c) for c in contexts))
    others = [i for i in impls if i not in (main, "flashinfer")]
    header += [f"{LABELS.get(i, i)} at {ctx_label(longest)}" for i in others]
    rows = []
    for shape in run.shapes():
        row = [shape_label(shape), *(timed(run.cells.get((main, shape, c))) for c in contexts)]
        if "flashinfer" in impls and main != "flashinfer":
            row.append(" / ".join(bare(run.cells.get(("flashinfer", shape, c))) for c in contexts))
        row += [bare(run.cells.get((i, shape, longest)), 0) for i in others]
        rows.append(row)
    return header_text(run, root) + "\n\n" + markdown(header, rows)


def full_table(run: Run, root: Path = ROOT) -> str:
    """bench/README.md's table: one row per shape and context, every implementation."""
    impls = run.impls()
    header = ["B,H,T", "L", *(LABELS.get(i, i) + (" (splits)" if i == MAIN_IMPL else "") for i in impls)]
    rows = []
    for ctx in run.contexts():
        for shape in run.shapes():
            row = [shape_label(shape), str(ctx)]
            for impl in impls:
                cell = run.cells.get((impl, shape, ctx))
                splits = f" ({cell.splits})" if cell is not None and impl == MAIN_IMPL and cell.splits else ""
                row.append(timed(cell) + splits)
            rows.append(row)
    return header_text(run, root) + "\n\n" + markdown(header, rows)


def change(this: float, other: float) -> float:
    """this / other - 1, in percent."""
    return 100 * (this / other - 1)


def signed(value: float, unit: str = "%") -> str:
    return f"{value:+.2f}{unit}"


def span(values: list[float], unit: str = "%") -> str:
    """`-0.59% to +1.40%` (`+0.20%` when all round alike); `unit` after each number, or " points" at the end."""
    low, high = sorted(values)[0], sorted(values)[-1]
    each, tail = (unit, "") if unit == "%" else ("", unit)
    if f"{low:+.2f}" == f"{high:+.2f}":
        return signed(low, each) + tail
    return f"{signed(low, each)} to {signed(high, each)}{tail}"


def comparison(run: Run, other: Run, root: Path = ROOT) -> str:
    """Per case and implementation: median here / median there, the change, and its ranges."""
    shared = [key for key in run.cells if key in other.cells]
    impls = [i for i in run.impls() if any(key[0] == i for key in shared)]
    if not shared:
        raise TableError(f"{run.path}: no case in common with {other.path}")
    lines = [
        f"{provenance_line(run, root)}\nagainst {provenance_line(other, root)}.",
        "Median µs here / there (change = here / there - 1).",
    ]
    for metric, mine, theirs, unit in (
        ("copy", run.copy_tbps, other.copy_tbps, "TB/s"),
        ("mma.sync bf16", run.mma_tflops, other.mma_tflops, "TFLOP/s"),
    ):
        if mine is not None and theirs is not None:
            digits = 2 if unit == "TB/s" else 1
            lines.append(
                f"Ceiling {metric}: {mine:.{digits}f} / {theirs:.{digits}f} {unit} ({signed(change(mine, theirs))})."
            )
    rows = []
    for ctx in run.contexts():
        for shape in run.shapes():
            row = [shape_label(shape), str(ctx)]
            for impl in impls:
                here, there = run.cells.get((impl, shape, ctx)), other.cells.get((impl, shape, ctx))
                row.append(
                    "-"
                    if here is None or there is None
                    else f"{here.median_us:,.1f} / {there.median_us:,.1f} "
                    f"({signed(change(here.median_us, there.median_us))})"
                )
            if any(cell != "-" for cell in row[2:]):
                rows.append(row)
    text = "\n".join(lines) + "\n\n" + markdown(["B,H,T", "L", *(LABELS.get(i, i) for i in impls)], rows)
    return text + "\n\n" + "\n".join(_ranges(run, other, impl, shared) for impl in impls)


def _ranges(run: Run, other: Run, impl: str, shared: list[tuple[str, Shape, int]]) -> str:
    """One line per implementation: the change over all its common cases, per context, and in floor points."""
    keys = [k for k in shared if k[0] == impl]
    changes = {k: change(run.cells[k].median_us, other.cells[k].median_us) for k in keys}
    worst = max(keys, key=lambda k: abs(changes[k]))
    parts = [
        f"- {LABELS.get(impl, impl)}: {span(list(changes.values()))} over {len(keys)} cases "
        f"(largest |change| {abs(changes[worst]):.2f}% at ({shape_label(worst[1])}) {ctx_label(worst[2])})"
    ]
    for ctx in sorted({k[2] for k in keys}):
        parts.append(f"{ctx_label(ctx)} {span([v for k, v in changes.items() if k[2] == ctx])}")
    points = [
        100 * (run.cells[k].fraction - other.cells[k].fraction)
        for k in keys  # type: ignore[operator]
        if run.cells[k].fraction is not None and other.cells[k].fraction is not None
    ]
    line = "; ".join(parts)
    if points:
        line += f"; fraction of floor {span(points, ' points')}"
    return line + "."


# --- command line --------------------------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse the command line (argparse exits with code 2 on a usage error)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.table", description="Markdown tables of a `bench verify` result file."
    )
    parser.add_argument(
        "result", nargs="?", type=Path, help="result file (default: the newest in bench/results/ by provenance.time)"
    )
    parser.add_argument(
        "--layout",
        choices=("summary", "full"),
        default="summary",
        help="summary: a row per shape (kernel/README.md); full: a row per shape and "
        "context, every implementation (bench/README.md)",
    )
    parser.add_argument(
        "--against", type=Path, metavar="OTHER", help="compare with another result file: per-case change in percent"
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        metavar="DIR",
        help="where to find the newest file when RESULT is not given (default bench/results/)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        run = load_run(args.result if args.result is not None else newest_result(args.results))
        if args.against is not None:
            print(comparison(run, load_run(args.against)))
        else:
            print(summary_table(run) if args.layout == "summary" else full_table(run))
    except TableError as err:
        print(f"bench.table: {err}", file=sys.stderr)
        return EXIT_BAD_FILE
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
