"""The lab's fp8 kernels on Hopper's wgmma (kernel/build.py "fp8wg", verify_attention_fp8_wgmma.cuh, and its
warp-specialised "fp8wgws" and "fp8wgws4", verify_attention_fp8_wgmma_ws.cuh, and "fp8wgr" and the product "fp8wgrw",
verify_attention_fp8_wgmma_rows.cuh: design q2p,
sm_90a only; marker `gpu`, skipped cleanly elsewhere) keep the flash-attention rule on the dequantized cache, as the
mma.sync fp8 kernel does (test_gpu_fp8.py's rule and shapes): mixed lengths, empty prefixes, 64-node trees, 128 heads,
forced split counts (empty splits included), and CUDA-graph replay with new queries."""

from __future__ import annotations

import os

import pytest
import torch

from kernel import build
from kernel.fp8 import quantize_kv
from kernel.trees import make_inputs
from tests.kernel.test_gpu_fp8 import CASES, assert_flash_rule, inputs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not torch.cuda.is_available() or torch.cuda.get_device_capability() not in build.FP8_ARCH_SPECIFIC["fp8wg"],
        reason="the wgmma fp8 kernel builds for sm_90a only",
    ),
]


# FP8WG_BUILDS: the lab runner tests one build at a time, so one that hangs costs only its own minute
BUILDS = tuple(os.environ.get("FP8WG_BUILDS", "fp8wg fp8wgws fp8wgr fp8wgrw").split())


def run(variant: str, case: tuple[int, int, int, int, str], splits: int = 0) -> None:
    x, kv8, scale = inputs(case)
    ext = build.load(variant=variant)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = ext.forward_fp8(x.q, kv8, scale, *rest, True, splits)
    assert_flash_rule(x, kv8, scale, out, lse, f"{variant} {case} splits={splits}")


@pytest.mark.parametrize("variant", BUILDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_the_wgmma_fp8_kernel_keeps_the_flash_attention_rule(
    variant: str, case: tuple[int, int, int, int, str]
) -> None:
    run(variant, case)


@pytest.mark.parametrize("variant", BUILDS)
@pytest.mark.parametrize("splits", [1, 2, 7, 64])
def test_the_wgmma_fp8_kernel_keeps_the_rule_at_forced_split_counts(variant: str, splits: int) -> None:
    run(variant, (3, 16, 16, 2000, "random"), splits)


@pytest.mark.parametrize("variant", BUILDS)
def test_the_wgmma_fp8_kernel_replays_in_a_cuda_graph_with_new_queries(variant: str) -> None:
    x, kv8, scale = inputs((2, 8, 16, 3000, "random"))
    ext = build.load(variant=variant)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    call = lambda: ext.forward_fp8(x.q, kv8, scale, *rest, True, 0)  # noqa: E731
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = call()
    for seed in range(3):
        x.q.copy_(torch.randn(x.q.shape, generator=torch.Generator().manual_seed(seed)).to(x.q))
        graph.replay()
        torch.cuda.synchronize()
        eager, eager_lse = call()
        assert torch.equal(out, eager) and torch.equal(lse, eager_lse), f"replay {seed} differs from an eager call"
        assert_flash_rule(x, kv8, scale, out, lse, f"graph replay {seed}")


@pytest.mark.parametrize("variant", BUILDS)
@pytest.mark.parametrize(
    "case", [(2, 128, 8, 1000, "chain"), (3, 16, 16, 2000, "random")], ids=lambda c: "-".join(map(str, c))
)
def test_the_wgmma_fp8_kernel_gives_the_same_bits_every_call(
    variant: str, case: tuple[int, int, int, int, str]
) -> None:
    """Five calls on the same inputs, every bit the same: no race between the warps of a block (a fast warp reusing
    a P, rescale or ring buffer a slow one still reads) shows as run-to-run noise the flash-attention rule would hide.
    (fp8wgwsr, gone since, differed from fp8wgws in this 128-head case on an H100, 2026-12-07: not a race, but ptxas
    fusing l * alpha + p into one FFMA in fp8wgws and not in fp8wgwsr, whose product sat in a branch.)"""
    x, kv8, scale = inputs(case)
    ext = build.load(variant=variant)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    first = ext.forward_fp8(x.q, kv8, scale, *rest, True, 0)
    for i in range(4):
        out, lse = ext.forward_fp8(x.q, kv8, scale, *rest, True, 0)
        assert torch.equal(out, first[0]) and torch.equal(lse, first[1]), f"{variant} {case}: call {i + 2} differs"


# Prefix lengths around the producer's edges: none, one token, a tile (64) either side, the ring's depth (3 tiles)
# either side, and past it with partial last tiles.
EDGE_LENGTHS = [0, 1, 63, 64, 65, 191, 192, 193, 256, 257, 449]


# The builds that run fp8wgr's MMAs on the same operands in the same order in another layout: the sm_90 product
# (fp8wgrw) and the lab's fp8wgrwq (its Q swizzled too) and fp8wgrwf (Q quantized in the split kernel).
SAME_BITS_AS_FP8WGR = sorted({build.FP8_PRODUCT_BY_CC[(9, 0)], "fp8wgrwq", "fp8wgrwf"} - {"fp8wgr"})


@pytest.mark.parametrize("product", SAME_BITS_AS_FP8WGR)
@pytest.mark.parametrize("nodes, heads, tree", [(1, 16, "chain"), (8, 128, "random"), (64, 8, "random")])
@pytest.mark.parametrize("splits", [0, 1, 2, 3, 5, 64])
def test_the_swizzled_builds_give_fp8wgr_s_bits(product: str, nodes: int, heads: int, tree: str, splits: int) -> None:
    """fp8wgrw (swizzled stages, whole-line copies, the slot ids riding the ring), fp8wgrwq (Q swizzled too, copied
    by the math warpgroups) and fp8wgrwf (Q quantized by them, quantize_q_row's bytes) run fp8wgr's MMAs on the same
    operands in the same order, so their output is fp8wgr's bit for bit, at every prefix length around a tile and
    the ring's depth (fewer tiles than stages, one more, partial last tiles), any split count, and with some slot
    ids negative (every one reads such a row as zeros)."""
    x = make_inputs(len(EDGE_LENGTHS), heads, nodes, EDGE_LENGTHS, tree=tree, seed=nodes + heads, device="cuda")
    x.prefix_slots[::7] = -1
    x.tree_slots[:, ::5] = -1
    kv8, scale = quantize_kv(x.kv_cache)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    want = build.load(variant="fp8wgr").forward_fp8(x.q, kv8, scale, *rest, True, splits)
    got = build.load(variant=product).forward_fp8(x.q, kv8, scale, *rest, True, splits)
    what = f"{product} against fp8wgr: nodes={nodes} heads={heads} splits={splits}"
    assert torch.equal(got[0], want[0]), what
    assert torch.equal(got[1], want[1]), what
