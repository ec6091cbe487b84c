"""An fp8 KV cache on the GPU (marker `gpu`; skipped cleanly without CUDA): the CUDA kernel (design q2p,
kernel/csrc/verify_attention_fp8.cuh, sm_89+) and the Triton backend against the fp32 reference on the dequantized
cache by the flash-attention rule, over the GPU suite's shapes (mixed lengths, empty prefixes, 64-node trees, 128
heads); forced split counts and CUDA-graph replay of the CUDA kernel; and the engine with an fp8 pool, eager and
graphed, emitting greedy's tokens on both backends."""

from __future__ import annotations

import random

import pytest
import torch

import kernel
from kernel import build
from kernel.engine import Engine, EngineConfig
from kernel.engine.prompts import clear_prompts
from kernel.fp8 import dequantize, quantize_kv
from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs, mixed_lengths

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

CASES = [  # (batch, heads, nodes, mean prefix, tree)
    (1, 8, 16, 5700, "random"),
    (3, 16, 32, 900, "binary"),
    (4, 8, 64, 300, "random"),
    (2, 128, 8, 1000, "chain"),
    (2, 8, 16, 0, "random"),  # empty prefixes: the tree alone
]


def fp8_kernel_runs_here() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= build.FP8_MIN_CC


needs_fp8_kernel = pytest.mark.skipif(not fp8_kernel_runs_here(), reason="the fp8 kernel needs sm_89+ (e4m3 mma.sync)")


def inputs(case: tuple[int, int, int, int, str]) -> tuple[VerifyInputs, torch.Tensor, float]:
    batch, heads, nodes, mean, tree = case
    seed = sum(case[:4])
    x = make_inputs(
        batch, heads, nodes, mixed_lengths(batch, mean, random.Random(seed)), tree=tree, seed=seed, device="cuda"
    )
    kv8, scale = quantize_kv(x.kv_cache)
    return x, kv8, scale


def assert_flash_rule(
    x: VerifyInputs, kv8: torch.Tensor, scale: float, out: torch.Tensor, lse: torch.Tensor, what: str
) -> None:
    """The flash-attention rule on the dequantized cache: out within 2x bf16 torch's error (+ 1e-3 of the output's
    scale), lse within 2x bf16 torch's lse error + 1e-3 (kernel/NOTES.md, "An fp8 KV cache: the numerics")."""
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    deq = dequantize(kv8, scale, torch.bfloat16)
    ref, ref_lse = attention(x.q, deq, *rest)
    low, low_lse = attention(x.q, deq, *rest, dtype=torch.bfloat16)
    eps = 1e-3 * max(1.0, ref.abs().max().item())
    err, err_low = (out.float() - ref).abs().max().item(), (low.float() - ref).abs().max().item()
    assert torch.isfinite(out).all() and out.abs().max() > 0, what
    assert err <= 2 * err_low + eps, f"out error {err:.3e} > 2 x bf16 torch {err_low:.3e} + {eps:.1e}: {what}"
    seen = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), seen), what
    lse_err = (lse[seen] - ref_lse[seen]).abs().max().item()
    assert lse_err <= 2 * (low_lse[seen] - ref_lse[seen]).abs().max().item() + 1e-3, f"lse error {lse_err:.3e}: {what}"


@pytest.mark.parametrize("backend", ["triton", pytest.param("cuda", marks=needs_fp8_kernel)])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_an_fp8_cache_keeps_the_flash_attention_rule(case: tuple[int, int, int, int, str], backend: str) -> None:
    x, kv8, scale = inputs(case)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = kernel.verify_attention(x.q, kv8, *rest, backend=backend, return_lse=True, kv_scale=scale)
    assert_flash_rule(x, kv8, scale, out, lse, f"{backend} {case}")


@needs_fp8_kernel
@pytest.mark.parametrize("splits", [1, 2, 7, 64])
def test_cuda_fp8_keeps_the_rule_at_forced_split_counts(splits: int) -> None:
    x, kv8, scale = inputs((3, 16, 16, 2000, "random"))
    ext = build.load(variant=build.FP8_VARIANT)
    args = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = ext.forward_fp8(x.q, kv8, scale, *args, True, splits)
    assert_flash_rule(x, kv8, scale, out, lse, f"splits={splits}")


@needs_fp8_kernel
def test_the_sm120_stand_in_runs_beside_the_product_and_leaves_it_right() -> None:
    """The fp8 kernel's sm_120-balance build (a timing stand-in, output wrong on purpose) loads and runs in the
    process of the product's fp8 build, and the product stays right after it (each keeps its own launch state)."""
    x, kv8, scale = inputs((3, 16, 16, 2000, "random"))
    args = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    product = build.load(variant=build.FP8_VARIANT)
    stand_in = build.load(variant=build.FP8_VARIANT, mma_repeat_x32=85)
    assert stand_in is not product
    for splits in (1, 7, 0):
        out, _ = stand_in.forward_fp8(x.q, kv8, scale, *args, True, splits)
        torch.cuda.synchronize()  # no launch error, no fault
        assert out.shape == (3, 16, 16, 512) and out.dtype == torch.bfloat16
        out, lse = product.forward_fp8(x.q, kv8, scale, *args, True, splits)
        assert_flash_rule(x, kv8, scale, out, lse, f"the product after the stand-in, splits={splits}")


@needs_fp8_kernel
def test_cuda_fp8_replays_in_a_cuda_graph_with_new_queries() -> None:
    x, kv8, scale = inputs((2, 8, 16, 3000, "random"))
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    run = lambda: kernel.verify_attention(x.q, kv8, *rest, backend="cuda", return_lse=True, kv_scale=scale)  # noqa: E731
    run()  # builds and warms outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = run()
    for seed in range(3):
        x.q.copy_(torch.randn(x.q.shape, generator=torch.Generator().manual_seed(seed)).to(x.q))
        graph.replay()
        torch.cuda.synchronize()
        eager, eager_lse = run()
        assert torch.equal(out, eager) and torch.equal(lse, eager_lse), f"replay {seed} differs from an eager call"
        assert_flash_rule(x, kv8, scale, out, lse, f"graph replay {seed}")


@pytest.mark.parametrize("backend", ["triton", pytest.param("cuda", marks=needs_fp8_kernel)])
@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graph"])
def test_the_fp8_engine_emits_greedy_tokens_on_the_gpu(graphs: bool, backend: str) -> None:
    config = dict(layers=2, heads=4, vocab=64, seed=0, max_context=512, tree_nodes=16, tree_branching=2)
    reference = Engine(EngineConfig(kv_dtype="fp8", **config), backend="reference", device="cuda")  # type: ignore[arg-type]
    prompts = clear_prompts(reference, 3, [5, 200, 60], 24, 0.01, seed=28)
    engine = Engine(EngineConfig(kv_dtype="fp8", **config), backend=backend, device="cuda", graphs=graphs)  # type: ignore[arg-type]
    greedy = engine.generate(prompts, 24, speculative=False)
    assert engine.generate(prompts, 24, speculative=True) == greedy
    assert greedy == reference.generate(prompts, 24, speculative=False)
    engine.pool.allocator.check()
