"""`python -m bench step` on the CPU: its cases, its command line, and the attention stack it times computing
the right thing (the reference backend stands in for the GPU ones; the timing itself needs CUDA)."""

from __future__ import annotations

import pytest

from bench import step
from bench.__main__ import main, parse
from bench.verify import check_output


def test_cases_cover_the_issue_matrix() -> None:
    cases = step.cases_for("all")
    assert len(cases) == 12
    assert {(c.ctx, c.nodes, c.batch) for c in cases} == {
        (ctx, t, b) for ctx in (5700, 23000, 91000) for t in (16, 64) for b in (1, 4)
    }
    assert cases[0].params("cuda") == {"impl": "cuda", "ctx": 5700, "heads": 8, "nodes": 16, "batch": 1, "layers": 61}
    assert {(91000, 16, 1)} <= step.TRITON_EAGER  # the P9 gate's baseline is measured


@pytest.mark.parametrize("batch", [1, 3])
def test_the_stack_computes_tree_verify_attention(batch: int) -> None:
    stack = step.AttentionStack(
        step.StepCase(ctx=37, nodes=5, batch=batch, heads=2, layers=3),
        "reference",
        seed=1,
        max_context=64,
        device="cpu",
    )
    out = stack.eager_step()
    assert check_output(out, stack.last_layer_inputs(), prefix_only=False) is None
    plan = stack.attention.plan
    assert plan is not None and plan.prefix_slots.numel() == batch * 64  # sized for max_context, not ctx
    assert plan.prefix_indptr.tolist() == [37 * b for b in range(batch + 1)]
    written = stack.pool.layer(2)[plan.write_index]
    assert written.equal(stack.kv_rows[2])  # the tree's rows were stored before attending


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["step", "--impl", "reference"],
            "--impl: expected a comma-separated subset of cuda,cuda_torch_store,cuda_pdl_launch,cuda_pdl_off,triton",
        ),
        (["step", "--layers", "0"], "--layers: expected >= 1"),
        (["step", "--budget", "0"], "--budget: expected seconds > 0"),
        (["step", "--cases", "huge"], "invalid choice"),
        (["step", "--rounds", "0"], "--rounds: expected 1..20"),
        (["step", "--rounds", "21"], "--rounds: expected 1..20"),
        (["step", "--warmup", "-1"], "--warmup: expected seconds in 0..60"),
        (["step", "--warmup", "nan"], "--warmup: expected seconds in 0..60"),
        (["step", "--warmup", "inf"], "--warmup: expected seconds in 0..60"),
        (["step", "--impl", "cuda,cuda"], "--impl: an implementation named twice"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_no_cuda_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert main(["step", "--cases", "short"]) == 3
    assert "no CUDA device" in capsys.readouterr().err


def test_step_results_are_accepted_by_the_tracker(tmp_path) -> None:
    from bench import results
    from bench.timing import summarize

    tracker_results = pytest.importorskip(
        "tracker.store.result_files", reason="tracker/store/result_files.py not present"
    )
    params = step.StepCase(5700, 16, 1).params("cuda")
    samples = [1500.0, 1510.0, 1490.0]
    cases = [
        results.case(metric, params, unit, "lower", samples, summarize(samples), {"max_context": step.MAX_CONTEXT})
        for metric, unit in (
            ("engine.step_time_us", "us"),
            ("engine.graph_replay_step_us", "us"),
            ("engine.plan_overhead_us", "us"),
            ("engine.graph_over_kernels", "x"),
            ("engine.graph_workspace_bytes", "B"),
        )
    ]
    env = {"gpu": "NVIDIA H200", "driver": None, "cuda": None, "torch": None, "triton": None}
    now = results.utc_now()
    doc = results.document("step", results.provenance(step.ROOT, "python -m bench step", env, now), cases)
    run = tracker_results.load_result(results.write(doc, tmp_path, now))
    assert run.benchmark == "step"  # type: ignore[attr-defined]


def test_rounds_pool_each_implementations_samples() -> None:
    from bench import results
    from bench.timing import summarize

    params = step.StepCase(91000, 16, 4).params("cuda")

    def one(metric: str, samples: list[float], info: dict | None = None) -> dict:
        return results.case(metric, params, "us", "lower", samples, summarize(samples), info)

    first = [one("engine.graph_replay_step_us", [10.0, 11.0], {"max_context": 5}), one("engine.kernel_time_us", [9.0])]
    second = [
        one("engine.graph_replay_step_us", [30.0, 31.0, 32.0], {"max_context": 5}),
        one("engine.kernel_time_us", [8.0]),
    ]
    replay, kernels = step.pooled([first, second])
    assert replay["samples"] == [10.0, 11.0, 30.0, 31.0, 32.0]
    assert replay["stats"] == summarize([10.0, 11.0, 30.0, 31.0, 32.0])
    assert replay["info"] == {"max_context": 5, "rounds": 2}
    assert kernels["samples"] == [9.0, 8.0] and kernels["info"] == {"rounds": 2}
    assert first[0]["samples"] == [10.0, 11.0]  # the rounds' own cases are left as they were
    (single,) = step.pooled([[one("engine.kernel_time_us", [9.0])]])
    assert "info" not in single  # one round: the case as measured


def test_pooled_info_counts_only_the_rounds_that_gave_a_metric() -> None:
    from bench import results
    from bench.timing import summarize

    params = step.StepCase(91000, 16, 4).params("cuda")

    def one(metric: str, samples: list[float], info: dict) -> dict:
        return results.case(metric, params, "us", "lower", samples, summarize(samples), info)

    # round 1: the profiler gave nothing (no kernel time, no ratio); round 2: it did
    first = [one("engine.graph_replay_step_us", [10.0, 12.0], {"warmup_replays": 90})]
    second = [
        one("engine.graph_replay_step_us", [20.0, 22.0], {"warmup_replays": 95}),
        one("engine.kernel_time_us", [15.0], {"warmup_replays": 95}),
        one("engine.graph_over_kernels", [1.3, 1.4], {"outside_kernels_us": 6.0}),
    ]
    replay, ratio_free_kernels, ratio = step.pooled([first, second])
    assert replay["info"] == {"warmup_replays": 185, "rounds": 2}
    assert ratio_free_kernels["info"] == {"warmup_replays": 95}  # one round gave it: as measured, no round count
    assert ratio["info"] == {"outside_kernels_us": 6.0}
    # both rounds give everything: the time outside kernels comes from the pooled medians
    again = step.pooled([second, second])
    assert again[2]["info"] == {"outside_kernels_us": round(21.0 - 15.0, 1), "rounds": 2}
    assert again[0]["info"]["warmup_replays"] == 190


def test_device_intervals_split_into_calls_with_span_and_busy_time() -> None:
    # two calls 5 ms apart; the first has overlapping kernels (a programmatic dependent launch) and a 2 us gap
    spans = [(0.0, 10.0), (8.0, 12.0), (14.0, 20.0), (5000.0, 5003.0), (5004.0, 5010.0)]
    assert step.span_and_busy(spans, 2) == [(20.0, 18.0), (10.0, 9.0)]
    assert step.span_and_busy(spans, 3) == []  # not the expected number of calls: no answer rather than a wrong one
    assert step.span_and_busy([], 1) == []


@pytest.mark.parametrize("path", sorted((step.ROOT / "bench" / "results").glob("step-*.json")), ids=lambda p: p.name)
def test_committed_step_results_validate_and_cover_the_matrix(path) -> None:
    import json

    tracker_results = pytest.importorskip(
        "tracker.store.result_files", reason="tracker/store/result_files.py not present"
    )
    assert tracker_results.load_result(path).benchmark == "step"  # type: ignore[attr-defined]
    doc = json.loads(path.read_text())
    graphed = {
        (c["params"]["impl"], c["params"]["ctx"], c["params"]["nodes"], c["params"]["batch"])
        for c in doc["cases"]
        if c["metric"] == "engine.graph_replay_step_us" and len(c["samples"]) >= 20
    }
    assert graphed == {(impl, c.ctx, c.nodes, c.batch) for c in step.cases_for("all") for impl in ("cuda", "triton")}


def test_warm_up_replays_for_the_time_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import torch

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)  # no GPU here: the replay below is the host's sleep
    calls: list[float] = []
    assert step.warm_up(lambda: calls.append(time.perf_counter()), 0.0) == 0 and calls == []
    start = time.perf_counter()
    count = step.warm_up(lambda: (calls.append(time.perf_counter()), time.sleep(0.01)), 0.05)
    assert count == len(calls) >= 4 and time.perf_counter() - start >= 0.05
    calls.clear()
    assert step.warm_up(lambda: (calls.append(0.0), time.sleep(0.02)), 1e-6) == 1  # at least one replay
