"""Builders for real benchmark result files (shared by the evidence tests; standard library only)."""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from pathlib import Path
from typing import Any


def blob(data: bytes) -> str:
    """Git blob id, computed independently of tracker.store.result_files."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def stats_of(samples: list[float]) -> dict[str, Any]:
    """The stats block a correct writer produces (p90 by linear interpolation)."""
    s = sorted(samples)
    pos = 0.9 * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return {
        "n": len(s),
        "median": statistics.median(s),
        "min": s[0],
        "mean": sum(s) / len(s),
        "p90": s[lo] + (s[hi] - s[lo]) * (pos - lo),
    }


def case(
    metric: str, params: dict[str, Any], samples: list[float], unit: str = "us", direction: str = "lower"
) -> dict[str, Any]:
    """One case of a result file."""
    return {
        "metric": metric,
        "params": params,
        "unit": unit,
        "direction": direction,
        "samples": samples,
        "stats": stats_of(samples),
    }


def result(
    cases: list[dict[str, Any]],
    *,
    time: str = "2026-11-29T11:02:03Z",
    gpu: str | None = "NVIDIA H200",
    commit: str | None = "3f2a91c" + "0" * 33,
    dirty: bool | None = False,
    files: dict[str, bytes] | None = None,
    host: str = "gpu-box",
    patterns: list[str] | None = None,
) -> dict[str, Any]:
    """A whole result file as a dict (valid unless the caller breaks it); ``patterns``: the globs it measured by."""
    ids = {p: blob(d) for p, d in (files or {"kernel/csrc/verify_attention.cuh": b"// kernel\n"}).items()}
    digest = hashlib.sha256("".join(f"{p}\0{b}\n" for p, b in sorted(ids.items())).encode()).hexdigest()
    return {
        "schema": "tracker-bench-result",
        "version": 1,
        "benchmark": "verify",
        "provenance": {
            "commit": commit,
            "dirty": dirty,
            "time": time,
            "host": host,
            "gpu": gpu,
            "driver": "580.159.04",
            "cuda": "13.0",
            "torch": "2.11.0+cu130",
            "triton": "3.6.0",
            "python": "3.12.3",
            "command": "python -m bench verify --cases long",
            "fingerprint": {
                "algorithm": "git-blob-sha1",
                "digest": digest,
                "files": ids,
                **({"patterns": patterns} if patterns is not None else {}),
            },
        },
        "cases": cases,
    }


def write(path: Path, doc: dict[str, Any]) -> Path:
    """Write a result dict as JSON (parents created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def writer_script(doc: dict[str, Any], *, retime: bool = False, vary: bool = False, echo: bool = False) -> str:
    """A script that writes ``doc`` as ``bench/results/r{N}.json``, N the files there already: a bench gate's
    ``run``. ``retime``: each file a minute after the last; ``vary``: run N's samples (and stats) scaled by
    1 + N/10⁴, so that no two runs repeat the same numbers (runs that do are a copy, not new evidence); ``echo``:
    print the arguments it was given."""
    lines = [
        "import json, pathlib, sys",
        "out = pathlib.Path('bench/results'); out.mkdir(parents=True, exist_ok=True)",
        "n = len(list(out.iterdir()))",
        f"doc = json.loads({json.dumps(json.dumps(doc))})",
    ]
    if retime:
        lines.append("doc['provenance']['time'] = f'2026-11-29T10:{n:02d}:00Z'")
    if vary:
        lines += [
            "for c in doc['cases']:",
            "    c['samples'] = [x * (1 + n / 1e4) for x in c['samples']]",
            "    c['stats'].update({k: v * (1 + n / 1e4) for k, v in c['stats'].items() if k != 'n'})",
        ]
    lines.append("(out / f'r{n}.json').write_text(json.dumps(doc))")
    if echo:
        lines.append("print('writer args', sys.argv[1:], flush=True)")
    return "\n".join(lines) + "\n"
