"""GPU backends (`cuda`, `triton`) against the fp32 reference, the flash-attention way.

Fresh random inputs every run (the seed is printed; set VERIFY_TEST_SEED to replay one), outputs poisoned
with NaN first, and the tolerance rule: max |backend - fp32 reference| <= 2 x max |plain bf16 torch - fp32
reference| + a small absolute epsilon. Skipped cleanly without CUDA.
"""

from __future__ import annotations

import os
import random
import secrets

import pytest
import torch

import kernel
from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs, mixed_lengths

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
BACKENDS = ["triton", "cuda"]

# (batch, heads, nodes, prefix length (mean, for batch > 1: mixed lengths), tree, slots): a curated cover of
# B {1,3,16}, H {1,4,8,16,64,128}, T {1,7,16,64}, L {0,1,19,989,5700,91000}, every tree, both layouts.
CASES = [
    (1, 1, 1, 0, "chain", "scattered"),
    (1, 8, 16, 1, "star", "scattered"),
    (1, 4, 7, 19, "random", "contiguous"),
    (3, 1, 64, 19, "chain", "scattered"),
    (3, 16, 16, 989, "binary", "scattered"),
    (1, 128, 7, 989, "random", "contiguous"),
    (16, 4, 1, 989, "chain", "scattered"),
    (16, 8, 16, 5700, "random", "scattered"),
    (1, 64, 8, 5700, "star", "contiguous"),
    (3, 8, 64, 5700, "binary", "scattered"),
    (1, 8, 16, 91000, "random", "scattered"),
    (1, 8, 64, 91000, "chain", "contiguous"),
    (1, 16, 7, 91000, "binary", "scattered"),
    (1, 128, 1, 91000, "star", "scattered"),
    (3, 64, 16, 91000, "random", "scattered"),
]


def case_id(case: tuple[object, ...]) -> str:
    return "b{}-h{}-t{}-L{}-{}-{}".format(*case)


def backend_or_skip(name: str) -> None:
    if name == "cuda":
        try:
            import kernel.cuda_backend  # noqa: F401  (built on first use)
        except ImportError as err:
            pytest.skip(f"cuda backend not importable: {err}")


def poison_allocator(nbytes: int, device: torch.device) -> None:
    """Fill free blocks of torch's caching allocator with NaN so a backend's fresh outputs start as NaN."""
    junk = torch.full((nbytes // 4 + 1024,), float("nan"), device=device)
    del junk


def run_backend(name: str, x: VerifyInputs) -> tuple[torch.Tensor, torch.Tensor]:
    batch, nodes, heads, _ = x.q.shape
    if name == "triton":  # it takes preallocated outputs: poison them directly
        from kernel.triton_backend import verify_attention_triton
        kernel.verify.validate(*x.args(), backend="triton", debug=True)
        out = torch.full((batch, nodes, heads, 512), float("nan"), dtype=torch.bfloat16, device=x.q.device)
        lse = torch.full((batch, nodes, heads), float("nan"), device=x.q.device)
        verify_attention_triton(*x.args(), True, out=out, lse=lse)
        # The public entry point dispatches to the same deterministic kernel: bit-identical results.
        api_out, api_lse = kernel.verify_attention(*x.args(), backend="triton", return_lse=True)
        assert torch.equal(api_out, out) and torch.equal(api_lse, lse)
        return out, lse
    poison_allocator(batch * nodes * heads * 512 * 8, x.q.device)
    out, lse = kernel.verify_attention(*x.args(), backend=name, return_lse=True, debug=True)
    return out, lse


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_triton_matches_reference(case: tuple[int, int, int, int, str, str]) -> None:
    check_backend("triton", case)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cuda_matches_reference(case: tuple[int, int, int, int, str, str]) -> None:
    check_backend("cuda", case)


def check_backend(backend: str, case: tuple[int, int, int, int, str, str]) -> None:
    """One backend on one case against the fp32 reference (separate tests so plans can gate each backend)."""
    backend_or_skip(backend)
    batch, heads, nodes, mean_len, tree, layout = case
    seed = (RUN_SEED + CASES.index(case) * 7919) % 2**31
    print(f"VERIFY_TEST_SEED={RUN_SEED} case seed {seed}")
    lens = mixed_lengths(batch, mean_len, random.Random(seed))
    x = make_inputs(batch, heads, nodes, lens, tree=tree, slots=layout, seed=seed, device="cuda")
    out, lse = run_backend(backend, x)
    torch.cuda.synchronize()
    ref_out, ref_lse = attention(*x.args())
    low_out, low_lse = attention(*x.args(), dtype=torch.bfloat16)
    where = f"seed {seed} (VERIFY_TEST_SEED={RUN_SEED}), lens {lens}"
    assert out.shape == (batch, nodes, heads, 512) and out.dtype == torch.bfloat16, where
    assert lse.shape == (batch, nodes, heads) and lse.dtype == torch.float32, where
    assert torch.isfinite(out).all() and torch.isfinite(lse).all(), f"unwritten or non-finite output: {where}"
    assert out.abs().max() > 0, f"all-zero output: {where}"
    eps = 1e-3 * max(1.0, ref_out.abs().max().item())
    err = (out.float() - ref_out).abs().max().item()
    err_low = (low_out.float() - ref_out).abs().max().item()
    assert err <= 2 * err_low + eps, f"out error {err:.3e} > 2 x bf16 torch {err_low:.3e} + {eps:.1e}: {where}"
    lse_err = (lse - ref_lse).abs().max().item()
    lse_err_low = (low_lse - ref_lse).abs().max().item()
    assert lse_err <= 2 * lse_err_low + 1e-3, f"lse error {lse_err:.3e} vs bf16 torch {lse_err_low:.3e}: {where}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_on_gpu_raise_before_launch(backend: str) -> None:
    x = make_inputs(2, 4, 8, [30, 5], seed=RUN_SEED, device="cuda")
    args = list(x.args())
    with pytest.raises(ValueError, match=r"^tree_mask: expected device cuda:0 \(the device of q\), got cpu$"):
        kernel.verify_attention(*args[:5], x.tree_mask.cpu(), x.sm_scale, backend=backend)
    with pytest.raises(TypeError, match=r"^kv_cache: expected dtype torch.bfloat16, got torch.float16$"):
        kernel.verify_attention(args[0], x.kv_cache.half(), *args[2:], backend=backend)
    with pytest.raises(ValueError, match=r"^q: expected a contiguous tensor"):
        kernel.verify_attention(x.q.transpose(0, 1).contiguous().transpose(0, 1), *args[1:], backend=backend)
    with pytest.raises(ValueError, match=r"^q: expected tree nodes 1 <= T <= 64, got 65$"):
        big = torch.zeros(2, 65, 4, 576, dtype=torch.bfloat16, device="cuda")
        kernel.verify_attention(big, *args[1:], backend=backend)
    bad_slots = x.prefix_slots.clone()
    bad_slots[-1] = x.kv_cache.shape[0] + 5
    pool = x.kv_cache.shape[0]
    with pytest.raises(ValueError, match=rf"^prefix_slots: expected slot ids in \[0, {pool}\) \(kv_cache rows\), "
                                         rf"got {pool + 5} at flat index 34$"):
        kernel.verify_attention(args[0], args[1], args[2], bad_slots, *args[4:], backend=backend, debug=True)
