"""`python -m bench defrag` on the CPU: its command line, its fragmented pools, its byte counts, its checks and its
result file (the timing itself needs CUDA)."""

from __future__ import annotations

import pytest
import torch

from bench import defrag
from bench.__main__ import main, parse
from kernel.defrag import execute_moves, fragmentation, plan_tier0, plan_tier1
from kernel.reference import attention
from kernel.trees import make_inputs


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["defrag", "--impl", "reference"], "--impl: expected a comma-separated subset of cuda,triton or none"),
        (["defrag", "--impl", ""], "--impl: expected a comma-separated subset of cuda,triton or none"),
        (["defrag", "--layers", "0"], "--layers: expected >= 1"),
        (["defrag", "--budget", "0"], "--budget: expected seconds > 0"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_the_command_line_defaults_and_none() -> None:
    args = parse(["defrag"])
    assert (args.impl, args.layers, args.budget) == (["cuda", "triton"], 61, 0.5)
    assert parse(["defrag", "--impl", "none"]).impl == []


def test_no_cuda_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert main(["defrag", "--impl", "none"]) == 3
    assert "no CUDA device" in capsys.readouterr().err


def test_the_tier0_pool_scatters_one_request_over_its_region() -> None:
    s = defrag.tier0_scenario(3000, 1000, 2 / 3, 5, seed=1, device="cpu")
    mine = s.requests[0]
    assert mine.numel() == 1000 and int(mine.max()) < 1500 and len(s.requests) == 6
    every = torch.cat(s.requests)
    assert every.unique().numel() == every.numel() == int(s.owned.sum())
    assert int(every[1000:].min()) >= 1500 and every.numel() - 1000 == 750
    report = fragmentation(s.owned, s.requests)
    assert report.request_runs[0] > 500  # scattered, in random order
    plan = plan_tier0(s.owned, s.requests, 0, min_wave=16)
    assert plan.rows_moved > 900 and plan.moves.waves > 3  # a window inside the region, chains of its own rows


@pytest.mark.parametrize("occupancy", defrag.OCCUPANCIES)
def test_the_tier1_pool_holds_sixteen_scattered_requests(occupancy: float) -> None:
    s = defrag.tier1_scenario(4000, 16, occupancy, seed=2, device="cpu")
    assert len(s.requests) == 16 and all(r.numel() > 0 for r in s.requests)
    every = torch.cat(s.requests)
    assert every.numel() == round(occupancy * 4000) == int(s.owned.sum()) == every.unique().numel()
    assert fragmentation(s.owned, s.requests).free_runs > 100


def test_bytes_count_moved_rows_once_and_staged_rows_twice() -> None:
    s = defrag.tier1_scenario(4000, 16, 0.9, seed=3, device="cpu")
    plan = plan_tier1(s.owned, s.requests)
    assert plan.moves.staged > 0
    assert defrag.useful_bytes(plan, 61) == 2 * plan.rows_moved * 61 * 1152
    assert defrag.executor_bytes(plan, 61) == 2 * (plan.rows_moved + plan.moves.staged) * 61 * 1152


def test_the_check_passes_a_right_move_and_catches_a_wrong_one() -> None:
    s = defrag.tier1_scenario(500, 4, 0.5, seed=4, device="cpu")
    plan = plan_tier1(s.owned, s.requests)
    kv = torch.randn(2, 500, 576).to(torch.bfloat16)
    before = kv.clone()
    execute_moves(kv, plan)
    defrag.check_moves(before, kv, plan)
    wrong = kv.clone()
    wrong[1, int(plan.after[2][0])] += 1
    with pytest.raises(defrag.CheckFailure, match="request 2's rows differ in layer 1"):
        defrag.check_moves(before, wrong, plan)
    stray = kv.clone()
    untouched = int(torch.nonzero(~s.owned)[-1])  # a free slot that stays free
    stray[0, untouched] += 1
    with pytest.raises(defrag.CheckFailure, match="a row that should not move changed in layer 0"):
        defrag.check_moves(before, stray, plan)


@pytest.mark.parametrize("batch", [1, 3])
def test_compacting_a_verify_input_set_keeps_its_outputs(batch: int) -> None:
    x = make_inputs(batch, 2, 5, [37] * batch, seed=batch, device="cpu")
    want, _ = attention(*x.args())
    slots = (x.prefix_slots.data_ptr(), x.tree_slots.data_ptr())
    defrag._compact_inputs(x, 37)
    assert (x.prefix_slots.data_ptr(), x.tree_slots.data_ptr()) == slots  # rewritten in place
    for b in range(batch):
        run = torch.cat([x.prefix_slots[b * 37 : (b + 1) * 37], x.tree_slots[b]])
        assert torch.equal(run, torch.arange(int(run[0]), int(run[0]) + 42, dtype=run.dtype))
    got, _ = attention(*x.args())
    assert torch.equal(got, want)


def test_defrag_results_are_accepted_by_the_tracker(tmp_path) -> None:
    from bench import results
    from bench.timing import summarize

    tracker_results = pytest.importorskip(
        "tracker.store.result_files", reason="tracker/store/result_files.py not present"
    )
    samples = [3.1, 3.2, 3.0]
    t0 = {"rows": defrag.TIER0_ROWS, "layers": 61, "pool_rows": defrag.TIER0_POOL}
    t1 = {"live_requests": 16, "occupancy": 0.5, "layers": 61, "pool_rows": defrag.TIER1_POOL}
    verify = {"impl": "cuda", "ctx": 91000, "heads": 8, "nodes": 16, "batch": 1, "layout": "compacted"}
    cases = [
        results.case("defrag.tier0_tbps", t0, "TB/s", "higher", samples, summarize(samples), {"waves": 12}),
        results.case("defrag.tier1_copy_fraction", t1, "fraction", "higher", samples, summarize(samples)),
        results.case("defrag.verify_time_us", verify, "us", "lower", samples, summarize(samples)),
    ]
    env = {"gpu": "NVIDIA H200", "driver": None, "cuda": None, "torch": None, "triton": None}
    now = results.utc_now()
    doc = results.document("defrag", results.provenance(defrag.ROOT, "python -m bench defrag", env, now), cases)
    run = tracker_results.load_result(results.write(doc, tmp_path, now))
    assert run.benchmark == "defrag"  # type: ignore[attr-defined]
