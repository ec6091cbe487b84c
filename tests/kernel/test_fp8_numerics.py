"""The fp8 KV cache's numerics on the CPU (kernel/fp8.py, kernel/FP8.md): power-of-two scales make the dequantized
cache exact in bf16, the reference reads an fp8 cache as its dequantized values, and the two designs' emulated
errors are what FP8.md states: the cache-only design inside the flash-attention rule, Q and P in e4m3 far outside it."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kernel.fp8 import E4M3_MAX, FP8, dequantize, emulate, pool_scale, quantize, quantize_kv  # noqa: E402
from kernel.reference import attention  # noqa: E402
from kernel.trees import make_inputs  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e30, allow_nan=False))
def test_the_scale_is_the_smallest_power_of_two_that_fits(amax: float) -> None:
    s = pool_scale(amax)
    assert s > 0 and math.log2(s) == int(math.log2(s)) and s >= 2.0**-126
    if amax > 0:
        assert amax / s <= E4M3_MAX
        assert s == 2.0**-126 or amax / (s / 2) > E4M3_MAX  # the smallest, unless fp32's floor


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 1e300])
def test_a_magnitude_that_is_no_magnitude_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="amax"):
        pool_scale(bad)


def test_dequantized_rows_are_exact_in_bf16_and_a_bad_scale_is_refused() -> None:
    kv = torch.randn(257, 576, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16) * 37
    stored, scale = quantize_kv(kv)
    assert stored.dtype == FP8 and stored.element_size() == 1
    as_bf16 = dequantize(stored, scale, torch.bfloat16)
    assert torch.equal(as_bf16.float(), dequantize(stored, scale))  # no rounding on the way to bf16
    rel = ((as_bf16.float() - kv.float()).abs() / kv.float().abs().clamp(min=scale * 2**-6)).max().item()
    assert rel <= 2**-4 + 1e-6  # half an ulp of e4m3's 3 mantissa bits (normals)
    with pytest.raises(ValueError, match="past 448"):
        quantize(kv, scale / 4)


def test_the_reference_reads_an_fp8_cache_as_its_dequantized_values() -> None:
    x = make_inputs(2, 4, 5, [37, 0], tree="random", seed=3)
    stored, scale = quantize_kv(x.kv_cache)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = attention(x.q, stored, *rest, kv_scale=scale)
    want, want_lse = attention(x.q, dequantize(stored, scale), *rest)
    assert torch.equal(out, want) and torch.equal(lse, want_lse)
    with pytest.raises(ValueError, match="needs its scale"):
        attention(x.q, stored, *rest)
    with pytest.raises(ValueError, match="only an fp8 cache"):
        attention(*x.args(), kv_scale=1.0)


@pytest.mark.parametrize("ctx", [0, 64, 1000])
def test_the_cache_only_and_split_designs_keep_the_flash_attention_rule_and_qkp_breaks_it(ctx: int) -> None:
    x = make_inputs(1, 8, 16, [ctx], tree="random", seed=11 + ctx)
    stored, scale = quantize_kv(x.kv_cache)
    deq = dequantize(stored, scale, torch.bfloat16)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    ref, ref_lse = attention(x.q, deq, *rest)
    low, _ = attention(x.q, deq, *rest, dtype=torch.bfloat16)
    yardstick = (low.float() - ref).abs().max().item()
    kv_out, kv_lse = emulate("kv", x.q, stored, scale, *rest)
    assert (kv_out - ref).abs().max().item() <= 2 * yardstick + 1e-3 * max(1.0, ref.abs().max().item())
    assert (kv_lse - ref_lse).abs().max().item() <= 1e-4  # fp32 scores of the same exact operands
    for design in ("qkp2", "q2p"):  # Q exact in two e4m3 terms; P in two terms or one
        split_out, _ = emulate(design, x.q, stored, scale, *rest)
        assert (split_out - ref).abs().max().item() <= 2 * yardstick + 1e-3 * max(1.0, ref.abs().max().item())
    qkp_out, _ = emulate("qkp", x.q, stored, scale, *rest)
    assert (qkp_out - ref).abs().max().item() > 2 * yardstick  # why FP8.md keeps the cache-only design


def test_a_node_that_sees_nothing_gets_zero_and_minus_infinity_in_both_designs() -> None:
    x = make_inputs(1, 2, 3, [0], tree="chain", seed=5)
    x.tree_mask[0, 1] = 0
    stored, scale = quantize_kv(x.kv_cache)
    for design in ("kv", "qkp", "qkp2", "q2p"):
        out, lse = emulate(design, x.q, stored, scale, x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, 0.1)
        assert out[0, 1].abs().max().item() == 0 and lse[0, 1].eq(float("-inf")).all()
        assert torch.isfinite(lse[0, [0, 2]]).all()
    with pytest.raises(ValueError, match="design"):
        emulate("fp4", x.q, stored, scale, x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, 0.1)
