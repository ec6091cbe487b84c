"""v40 (the bf16 tile on wgmma, issue 27's lab build for sm_90; kernel/csrc/verify_attention_v40.cuh) on a GPU.

Its MMAs accumulate in the tensor core's order, not v26's, so it is held to the reference by the flash-attention rule
(max |v40 - fp32 reference| <= 2 x max |plain bf16 torch - fp32 reference| + eps, as the product is), never to v26's
bits: on the cases of test_gpu_correctness.py, with its outputs poisoned with NaN first; counting every visible token
(q = 0) under forced split counts, which catches a dropped, repeated or stale stage of the ring; the small cases at a
given split count, repeatable to the bit, the lse-less path equal; a CUDA-graph replay equal to the eager call; and
compute-sanitizer's memcheck, racecheck and synccheck on the small cases, each reporting no error (where the tool
exists: the product becomes v40 only once these pass, kernel/NOTES.md).
Skipped without CUDA or where v40 does not build (sm_90a only). Run it under `timeout`: a wrong barrier hangs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import torch

from kernel.trees import make_inputs
from tests.kernel.test_gpu_correctness import (
    CASES,
    COUNT_CASES,
    FORCED_SPLITS,
    RUN_SEED,
    SMALL_CASES,
    assert_keeps_the_rule,
    assert_replays_the_eager_call,
    case_id,
    case_inputs,
    check_counts,
    count_case_id,
    poison_allocator,
    small_case_id,
    zero_query_inputs,
)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.fixture(scope="module")
def ext() -> object:
    from kernel import build

    cc = torch.cuda.get_device_capability()
    if cc not in build.VARIANTS["v40"][3]:
        pytest.skip(f"v40 builds for sm_90a only, not sm_{cc[0]}{cc[1]}")
    return build.load(variant="v40")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_v40_matches_the_reference(ext: object, case: tuple[int, int, int, int, str, str]) -> None:
    batch, heads, nodes = case[:3]
    x, where = case_inputs(case)
    poison_allocator(batch * nodes * heads * 512 * 8, x.q.device)
    out, lse = ext.forward(*x.args(), True, 0)  # type: ignore[attr-defined]
    torch.cuda.synchronize()
    assert out.shape == (batch, nodes, heads, 512) and out.dtype == torch.bfloat16, where
    assert_keeps_the_rule(out, lse, x.args(), where)
    again, again_lse = ext.forward(*x.args(), True, 0)  # type: ignore[attr-defined]
    assert torch.equal(again, out) and torch.equal(again_lse, lse), f"not repeatable: {where}"


@pytest.mark.parametrize("case", COUNT_CASES, ids=count_case_id)
def test_v40_counts_every_visible_token(ext: object, case: tuple[int, int, list[int], str]) -> None:
    x = zero_query_inputs(case, RUN_SEED)
    for splits in FORCED_SPLITS:
        out, lse = ext.forward(*x.args(), True, splits)  # type: ignore[attr-defined]
        check_counts(out, lse, x, f"v40, splits={splits}, seed {RUN_SEED}")
        assert torch.equal(ext.forward(*x.args(), False, splits)[0], out), splits  # type: ignore[attr-defined]
        assert torch.equal(ext.forward(*x.args(), True, splits)[0], out), f"not repeatable, splits={splits}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", SMALL_CASES, ids=small_case_id)
def test_v40_small_cases_at_a_split_count(ext: object, case: tuple[int, int, list[int], str, str, int]) -> None:
    heads, nodes, lens, tree, slots, splits = case
    seed = (RUN_SEED + SMALL_CASES.index(case) * 7919) % 2**31
    x = make_inputs(len(lens), heads, nodes, lens, tree=tree, slots=slots, seed=seed, device="cuda")
    where = f"splits={splits}, seed {seed} (VERIFY_TEST_SEED={RUN_SEED})"
    poison_allocator(x.q.shape[0] * nodes * heads * 512 * 8, x.q.device)
    out, lse = ext.forward(*x.args(), True, splits)  # type: ignore[attr-defined]
    assert_keeps_the_rule(out, lse, x.args(), where)
    again, lse_again = ext.forward(*x.args(), True, splits)  # type: ignore[attr-defined]
    assert torch.equal(again, out) and torch.equal(lse_again, lse), f"not repeatable: {where}"
    assert torch.equal(ext.forward(*x.args(), False, splits)[0], out), f"lse-less path differs: {where}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("lens", [[5700], [989, 0, 2500]], ids=lambda lens: "L" + "+".join(map(str, lens)))
def test_v40_replays_from_a_cuda_graph(ext: object, lens: list[int]) -> None:
    x = make_inputs(len(lens), 16, 16, lens, tree="random", seed=RUN_SEED, device="cuda")
    args = x.args()

    def call() -> tuple[torch.Tensor, torch.Tensor]:
        return ext.forward(*args, True, 0)  # type: ignore[attr-defined]

    assert_replays_the_eager_call(call, x.q)


SANITIZER_CHILD = "VERIFY_V40_SANITIZER_CHILD"  # set in the run under the tool, so that it does not start another


@pytest.mark.skipif(os.environ.get(SANITIZER_CHILD) == "1", reason="inside a compute-sanitizer run")
@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="compute-sanitizer not found")
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_v40_is_clean_under_compute_sanitizer(ext: object, tool: str) -> None:
    """The small cases (random q, forced split counts, the combine, an empty split) under the tool, which must report no
    error and no dying case. memcheck and synccheck instrument v40's kernels only; racecheck every kernel, as
    kernel/tools/sanitize.sh explains (with torch's kernels left out it died inside them on the H200)."""
    options = [] if tool == "racecheck" else ["--kernel-name", "kns=verify_attn"]
    cmd = ["compute-sanitizer", "--tool", tool, *options, "--error-exitcode", "3", sys.executable, "-m", "pytest", "-q"]
    cmd += ["-p", "no:cacheprovider", f"{__file__}::test_v40_small_cases_at_a_split_count"]
    env = {**os.environ, SANITIZER_CHILD: "1", "VERIFY_TEST_SEED": str(RUN_SEED)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
    assert "Internal Sanitizer Error" not in proc.stdout + proc.stderr, f"{tool} died, no verdict:\n{tail}"
    assert proc.returncode == 0, f"{tool} exit {proc.returncode} (3: it reported an error):\n{tail}"
    assert "ERROR SUMMARY: 0 errors" in proc.stdout + proc.stderr or "0 hazards" in proc.stdout + proc.stderr, tail
