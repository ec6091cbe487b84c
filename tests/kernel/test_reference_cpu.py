"""The fp32 reference against a float64 brute-force loop, and properties any correct backend must have."""

from __future__ import annotations

import math

import pytest
import torch

import kernel
from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs


def brute_force(x: VerifyInputs) -> tuple[torch.Tensor, torch.Tensor]:
    """One node and one head at a time, float64, visibility decided bit by bit."""
    batch, nodes, heads, _ = x.q.shape
    kv = x.kv_cache.double()
    bounds = x.prefix_indptr.tolist()
    out = torch.empty(batch, nodes, heads, 512, dtype=torch.float64)
    lse = torch.empty(batch, nodes, heads, dtype=torch.float64)
    for b in range(batch):
        prefix = x.prefix_slots[bounds[b] : bounds[b + 1]].tolist()
        for i in range(nodes):
            bits = int(x.tree_mask[b, i]) & ((1 << 64) - 1)
            seen = prefix + [int(x.tree_slots[b, j]) for j in range(nodes) if bits >> j & 1]
            rows = kv[seen]
            for h in range(heads):
                scores = rows @ x.q[b, i, h].double() * x.sm_scale
                top = scores.max()
                weights = torch.exp(scores - top)
                lse[b, i, h] = top + torch.log(weights.sum())
                out[b, i, h] = (weights / weights.sum()) @ rows[:, :512]
    return out, lse


CASES = [  # batch, heads, nodes, prefix lengths, tree, slots
    (1, 1, 1, [0], "chain", "scattered"),
    (1, 4, 7, [19], "random", "scattered"),
    (3, 2, 16, [5, 0, 33], "binary", "contiguous"),
    (2, 3, 64, [1, 70], "chain", "scattered"),  # T = 64 exercises bit 63, the int64 sign bit
    (2, 1, 9, [0, 0], "star", "contiguous"),
]


@pytest.mark.parametrize("batch,heads,nodes,lens,tree,layout", CASES)
def test_reference_matches_float64_brute_force(
    batch: int, heads: int, nodes: int, lens: list[int], tree: str, layout: str
) -> None:
    x = make_inputs(batch, heads, nodes, lens, tree=tree, slots=layout, seed=batch * 100 + nodes)
    out, lse = attention(*x.args())
    want_out, want_lse = brute_force(x)
    assert out.dtype == torch.float32 and out.shape == (batch, nodes, heads, 512)
    torch.testing.assert_close(out.double(), want_out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse.double(), want_lse, rtol=1e-6, atol=1e-5)


def test_backend_returns_bf16_and_lse() -> None:
    x = make_inputs(2, 2, 5, [3, 8], seed=5)
    out, lse = kernel.verify_attention(*x.args(), backend="reference", return_lse=True)
    ref_out, ref_lse = attention(*x.args())
    assert out.dtype == torch.bfloat16 and lse.dtype == torch.float32
    assert torch.equal(out, ref_out.to(torch.bfloat16)) and torch.equal(lse, ref_lse)
    only = kernel.verify_attention(*x.args(), backend="reference")
    assert isinstance(only, torch.Tensor) and torch.equal(only, out)


def test_lonely_node_returns_its_own_value_row() -> None:
    # Empty prefix, and node 0 (the root) sees only itself: softmax over one score is exactly 1.
    x = make_inputs(2, 3, 6, [0, 0], tree="random", seed=7)
    out, lse = kernel.verify_attention(*x.args(), backend="reference", return_lse=True)
    for b in range(2):
        own = x.kv_cache[int(x.tree_slots[b, 0])]
        for h in range(3):
            assert torch.equal(out[b, 0, h], own[:512])
            score = (x.q[b, 0, h].float() @ own.float()) * x.sm_scale
            assert math.isclose(float(lse[b, 0, h]), float(score), rel_tol=1e-5, abs_tol=1e-5)


def test_node_that_sees_nothing_gets_zero_and_minus_inf() -> None:
    # Possible without debug=True: an empty prefix and a cleared mask row. The contract of every backend.
    x = make_inputs(1, 2, 4, [0], tree="chain", seed=3)
    x.tree_mask[0, 2] = 0
    out, lse = kernel.verify_attention(*x.args(), backend="reference", return_lse=True)
    assert torch.equal(out[0, 2], torch.zeros_like(out[0, 2]))
    assert lse[0, 2].tolist() == [float("-inf")] * 2
    assert torch.isfinite(lse[0, [0, 1, 3]]).all() and out[0, 3].abs().max() > 0


def test_permuting_pool_and_slots_keeps_output() -> None:
    x = make_inputs(3, 2, 7, [12, 0, 30], tree="binary", slots="contiguous", seed=9)
    perm = torch.randperm(x.kv_cache.shape[0], generator=torch.Generator().manual_seed(1))
    pool = torch.empty_like(x.kv_cache)
    pool[perm] = x.kv_cache  # row s moves to perm[s]
    y = VerifyInputs(
        x.q,
        pool,
        x.prefix_indptr,
        perm[x.prefix_slots.long()].int(),
        perm[x.tree_slots.long()].int().contiguous(),
        x.tree_mask,
        x.sm_scale,
    )
    before = kernel.verify_attention(*x.args(), backend="reference", return_lse=True)
    after = kernel.verify_attention(*y.args(), backend="reference", return_lse=True)
    assert not torch.equal(x.prefix_slots, y.prefix_slots)
    assert torch.equal(before[0], after[0]) and torch.equal(before[1], after[1])


def test_lse_is_consistent_with_output() -> None:
    # out = sum_j exp(s_j - lse) v_j: recomputing it from the returned lse gives the output back,
    # and the weights exp(s_j - lse) sum to one.
    x = make_inputs(1, 2, 4, [10], tree="chain", seed=13)
    out, lse = attention(*x.args())
    slots = torch.cat([x.prefix_slots, x.tree_slots[0]]).long()
    rows = x.kv_cache[slots].float()
    for i in range(4):
        seen = slots.numel() - 4 + i + 1  # chain: prefix + nodes 0..i
        for h in range(2):
            weights = torch.exp(rows[:seen] @ x.q[0, i, h].float() * x.sm_scale - lse[0, i, h])
            assert math.isclose(float(weights.sum()), 1.0, rel_tol=1e-5)
            torch.testing.assert_close(weights @ rows[:seen, :512], out[0, i, h], rtol=1e-5, atol=1e-5)


def test_bf16_math_is_measurably_less_accurate() -> None:
    # The flash-attention tolerance rule leans on this yardstick being non-trivial.
    x = make_inputs(1, 4, 16, [300], seed=17)
    ref, _ = attention(*x.args())
    low, _ = attention(*x.args(), dtype=torch.bfloat16)
    exact, _ = brute_force(x)
    err_low = (low.double() - exact).abs().max().item()
    err_ref = (ref.double() - exact).abs().max().item()
    assert err_low > 10 * err_ref and err_low < 0.1
