"""What the tracker's benchmarks share about their result files: the cases, and one writer.

A case is ``{metric, params, unit, direction, samples[, info]}``; its ``stats`` (n, median, min, mean, p90) are
computed by the tracker's own :func:`tracker.core.stats.case_stats` when the file is written
(:func:`tracker.store.result_files.new_result`: the one summary, the one the validator recomputes), and the document
is checked before it is written. The provenance's dirty flag says whether the **measured** files differ from the
commit (``dirty_of="measured"``: speed.py and verify_overhead.py, so that an edit of a document does not mark a
timing of the tracker's code dirty) or whether the whole tree does (``"tree"``: verdict_noise.py); both by the rule
of :mod:`tracker.base.dirty` (``TRACKER_COMMIT`` / ``TRACKER_DIRTY`` win when set).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[2]


def tracker_cmd() -> list[str]:
    """The tracker measured: the console script next to this interpreter, else ``python -m tracker``."""
    script = Path(sys.executable).with_name("tracker")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tracker"]


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """The command a result file records: ``python <script> <arguments>`` (``argv`` None: this process's)."""
    return " ".join(["python", script, *(sys.argv[1:] if argv is None else argv)])


def case(
    metric: str,
    params: dict[str, Any],
    unit: str,
    direction: str,
    samples: Sequence[float],
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One case of a result file, without its ``stats`` (the writer computes them)."""
    entry: dict[str, Any] = {"metric": metric, "params": params}
    if info:
        entry["info"] = info
    return {**entry, "unit": unit, "direction": direction, "samples": [float(s) for s in samples]}


def ms_case(metric: str, params: dict[str, Any], seconds: Sequence[float], info: dict[str, Any]) -> dict[str, Any]:
    """Seconds measured, recorded in milliseconds (lower is better)."""
    return case(metric, params, "ms", "lower", [s * 1000 for s in seconds], info)


def ratio_case(
    metric: str, params: dict[str, Any], top: Sequence[float], bottom: Sequence[float], info: dict[str, Any]
) -> dict[str, Any]:
    """Pairwise ratios: round i's ``top`` over round i's ``bottom`` (a lost round is an error, not a shift)."""
    return case(metric, params, "x", "lower", [a / b for a, b in zip(top, bottom, strict=True)], info)


def measured_dirty(root: Path, files: Iterable[str]) -> bool | None:
    """Whether any of ``files`` differs from the commit checked out (modified, staged, untracked or deleted), by
    :func:`tracker.base.dirty.commit_state` told what differs (:func:`tracker.base.fingerprint.read_tree`): the
    environment's ``TRACKER_DIRTY`` wins when ``TRACKER_COMMIT`` is set; None when unknown."""
    from tracker.base.dirty import commit_state
    from tracker.base.fingerprint import read_tree
    from tracker.errors import FileError

    try:
        state = read_tree(root, commit=True).state
    except FileError:
        return None
    if state is None:  # no git repository: the environment's word, if any
        return commit_state(root)[1]
    head, changed = state
    wanted = set(files)
    return commit_state(root, known=(head, tuple(path for path in changed if path in wanted)))[1]


def write_result(
    cases: list[dict[str, Any]],
    out: Path,
    command: str,
    benchmark: str,
    measured: Sequence[str],
    dirty_of: Literal["measured", "tree"] = "measured",
    root: Path = REPO,
) -> Path:
    """Write the result file ``<UTC time>-<host>-<benchmark>-<6 hex>.json`` into ``out`` (atomic, validated first); its
    fingerprint covers the files of ``root`` the ``measured`` globs match (the tracker's code and the benchmark's)."""
    from tracker.store.result_files import new_result
    from tracker.store.result_files import write_result as write

    doc = new_result(root, benchmark, cases, list(measured), command=command, gpu=None)
    if dirty_of == "measured":
        doc["provenance"]["dirty"] = measured_dirty(root, doc["provenance"]["fingerprint"]["files"])
    return write(doc, out, root)
