"""bench/verify.py and the CLI: cost model, the check that refuses wrong kernels, the table, usage errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench import peers
from bench.__main__ import parse
from bench.verify import Case, ImplFailure, cases_for, check_output, format_table, input_sets, measure_impl
from kernel.trees import make_inputs

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "case,floor",
    [  # the floors of KERNEL.md's H200 table (4.27 TB/s, 653 TFLOP/s)
        (Case(1, 8, 16, 5700), 2.4),
        (Case(1, 8, 16, 91000), 38.8),
        (Case(1, 8, 64, 91000), 155.4),
        (Case(4, 8, 16, 91000), 155.3),
        (Case(1, 64, 8, 91000), 155.3),
    ],
)
def test_floor_matches_kernel_doc(case: Case, floor: float) -> None:
    assert round(case.floor_us(4.27, 653.0), 1) == floor


def test_cost_model() -> None:
    c = Case(1, 8, 64, 91000)
    assert c.bytes == 91064 * (1152 + 4)
    assert c.flops == 2 * 8 * 64 * 91064 * 1088
    assert c.floor_us(1000.0, 1.0) == pytest.approx(c.flops / 1e12 * 1e6)  # compute-bound side
    assert c.floor_us(1e-3, 1e9) == pytest.approx(c.bytes / 1e9 * 1e6)  # memory-bound side


def test_case_selection() -> None:
    assert len(cases_for("all")) == 15
    assert {c.ctx for c in cases_for("short")} == {5700}
    assert {c.ctx for c in cases_for("long")} == {23000, 91000}
    assert Case(4, 8, 16, 23000).params("cuda") == {"impl": "cuda", "ctx": 23000, "heads": 8, "nodes": 16, "batch": 4}


def test_torch_peer_passes_check_and_is_timed_on_cpu() -> None:
    case = Case(2, 2, 5, 40)
    sets, seeds = input_sets(case, l2=case.bytes, device="cpu")  # tiny "L2": the minimum of 3 sets
    assert len(sets) == 3 and len(set(seeds)) == 3  # each set drawn from its own recorded seed
    info = {"seeds": ",".join(map(str, seeds))}
    cell, entries = measure_impl(peers.IMPLS["torch"], case, sets, floor_us=1.0, budget_s=0.01, device="cpu", info=info)
    time_us, fraction = entries
    assert time_us["info"] == fraction["info"] == info  # the run's seeds, outside the params
    assert time_us["metric"] == "verify_attn.time_us" and time_us["direction"] == "lower"
    assert fraction["metric"] == "verify_attn.floor_fraction" and fraction["direction"] == "higher"
    assert time_us["params"] == {**case.params("torch"), "graph": False} and len(time_us["samples"]) >= 20
    assert fraction["samples"] == [pytest.approx(1.0 / us) for us in time_us["samples"]]
    assert cell.endswith("%)")


def test_wrong_kernel_is_refused_not_timed() -> None:
    case = Case(1, 2, 4, 30)
    sets, _ = input_sets(case, l2=case.bytes, device="cpu")
    timed: list[int] = []

    def prepare(x: object) -> peers.Run:
        def run() -> torch.Tensor:
            timed.append(1)
            out = peers.IMPLS["torch"].prepare(x)()  # type: ignore[arg-type]
            out[0, 0, 0, 0] += 0.5  # one wrong element
            return out

        return run

    with pytest.raises(ImplFailure, match=r"WRONG at .*max error") as info:
        measure_impl(peers.Impl("bad", "off by one element", prepare), case, sets, 1.0, 0.01, device="cpu")
    assert info.value.cell == "WRONG" and timed == [1]  # run once for the check, never timed


def test_missing_optional_peer_is_unavailable() -> None:
    def prepare(x: object) -> peers.Run:
        raise ImportError("No module named 'flashinfer'")

    case = Case(1, 1, 1, 3)
    with pytest.raises(ImplFailure) as info:
        measure_impl(
            peers.Impl("fi", "x", prepare, prefix_only=True),
            case,
            input_sets(case, case.bytes, "cpu")[0],
            1.0,
            0.01,
            device="cpu",
        )
    assert info.value.unavailable and info.value.cell == "n/a"


def test_prefix_only_check_ignores_the_tree() -> None:
    x = make_inputs(1, 2, 4, [25], seed=3)
    full = peers.IMPLS["torch"].prepare(x)().clone()
    assert check_output(full, x, prefix_only=False) is None
    problem = check_output(full, x, prefix_only=True)
    assert problem is not None and problem.startswith("max error")


def test_table() -> None:
    text = format_table(
        [(Case(1, 8, 16, 91000), 38.8, {"cuda": "50.0 (77.6%)", "flashinfer": "n/a"})],
        ["cuda", "flashinfer"],
        4.27,
        653.0,
        {"gpu": "NVIDIA H200"},
    )
    lines = text.splitlines()
    assert lines[0].startswith("NVIDIA H200: copy 4.27 TB/s, mma.sync bf16 653 TFLOP/s")
    assert "flashinfer (prefix only, no tree mask)" in lines[1]
    assert lines[2].split() == ["1,8,16", "91000", "38.8", "50.0", "(77.6%)", "n/a"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["verify", "--impl", "cuda,nope"], "--impl: expected a comma-separated subset of"),
        (["verify", "--cases", "medium"], "invalid choice: 'medium'"),
        (["verify", "--budget", "0"], "--budget: expected seconds > 0, got 0.0"),
        ([], "the following arguments are required"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_without_cuda_exits_3() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "verify", "--cases", "short", "--impl", "torch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3 and "no CUDA device" in proc.stderr
