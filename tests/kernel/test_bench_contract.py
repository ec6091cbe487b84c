"""The files bench/ writes are accepted by the tracker's own reader (tracker/store/result_files.py, pydantic-validated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import results
from bench.timing import summarize

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "bench" / "results").glob("verify-*.json"))


def load(path: Path) -> object:
    pytest.importorskip("pydantic", reason="the tracker's result schema needs pydantic")
    tracker_results = pytest.importorskip(
        "tracker.store.result_files", reason="tracker/store/result_files.py not present"
    )
    return tracker_results.load_result(path)


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_results_validate(path: Path) -> None:
    run = load(path)
    assert run.benchmark == "verify"  # type: ignore[attr-defined]
    metrics = {c.metric for c in run.cases}  # type: ignore[attr-defined]
    assert {"verify_attn.time_us", "verify_attn.floor_fraction", "ceiling.copy_tbps", "ceiling.mma_tflops"} <= metrics


def test_fresh_document_validates(tmp_path: Path) -> None:
    now = results.utc_now()
    env = {"gpu": "NVIDIA H200", "driver": None, "cuda": "13.0", "torch": "2.11.0", "triton": "3.6.0"}
    samples = [12.5, 11.0, 13.25, 12.0]
    params = {"impl": "triton", "ctx": 5700, "heads": 8, "nodes": 16, "batch": 1, "graph": True}
    cases = [
        results.case(
            "verify_attn.time_us",
            params,
            "us",
            "lower",
            samples,
            summarize(samples),
            {"seeds": "1,2,3", "cuda_splits": 16},
        ),
        results.case(
            "ceiling.mma_tflops",
            {"kind": "mma.sync m16n8k16 bf16->fp32", "acc": 8},
            "TFLOP/s",
            "higher",
            [640.0],
            summarize([640.0]),
        ),
    ]
    path = results.write(
        results.document("verify", results.provenance(ROOT, "python -m bench verify", env, now), cases), tmp_path, now
    )
    run = load(path)
    assert [c.samples for c in run.cases] == [tuple(samples), (640.0,)]  # type: ignore[attr-defined]
    assert run.cases[0].params == params  # type: ignore[attr-defined]  (info stays out of the identity)
    assert "info" not in results.case("m", {}, "us", "lower", [1.0], summarize([1.0]))  # omitted when empty
