"""An fp8 KV cache: the 576-wide latent row stored as float8_e4m3fn with one float32 scale for the whole pool
(SGLang's and vLLM's ``--kv-cache-dtype fp8_e4m3`` for MLA: ``k_scale``), 576 bytes a token instead of 1,152.

The stored value of an entry x is ``e4m3(x / scale)``; its value is ``stored * scale``. The scale is a power of two
(:func:`pool_scale`): an e4m3 number times a power of two is exactly a bf16 number (e4m3's 3 mantissa bits fit bf16's
7, its exponent range inside bf16's), so a kernel can turn a row into bf16 exactly and fold the scale into
``sm_scale`` (scores) and the output (values) in fp32: the MMAs see the dequantized cache bit for bit.

What else is quantized is the design question of kernel/FP8.md, measured by :mod:`bench.fp8_error`:

- ``kv``: the cache only (the bf16 kernel's math on the dequantized cache; the flash-attention rule applies to it
  as it stands);
- ``qkp``: also Q (per row and head, a power-of-two scale each) and P (the softmax weights, ``P * 2**P_SHIFT``
  rounded to e4m3, as FlashAttention-3's fp8 path re-quantizes P for P.V), so both MMAs could run in e4m3;
- ``qkp2``: Q and P each as the sum of two e4m3 terms (the value rounded, then its remainder rounded with its own
  scale), two e4m3 MMAs where ``qkp`` has one: close to bf16's precision at 2 / 2.5 of a bf16 MMA's issue time on
  the H200 (e4m3 mma.sync at 2.5x bf16's rate), 2 / 2 on sm_120;
- ``q2p``: Q as two e4m3 terms (exact: a bf16 number is the sum of two e4m3 numbers) and P as one (FA3's way):
  three e4m3 MMAs where ``qkp2`` has four.

:func:`emulate` computes either design's output in fp32 from the quantized operands on any device (the CPU here),
so the error of each is known before a kernel exists.
"""

from __future__ import annotations

import math

import torch

from kernel.reference import V_DIM, ancestor_matrix

FP8 = torch.float8_e4m3fn
E4M3_MAX = 448.0
DESIGNS = ("kv", "qkp", "qkp2", "q2p")
MIN_EXPONENT, MAX_EXPONENT = -126, 127  # the scale is an fp32 kernel argument: a normal fp32 power of two
P_SHIFT = 8  # P in [0, 1] is scaled by 2**8 before rounding to e4m3: weights down to 2**-17 stay non-zero


def pool_scale(amax: float) -> float:
    """The power-of-two scale that maps ``amax`` (the largest magnitude to store) at or under e4m3's 448."""
    if not math.isfinite(amax) or amax < 0:
        raise ValueError(f"amax: expected a finite magnitude >= 0, got {amax}")
    if amax == 0:
        return 1.0
    exponent = max(MIN_EXPONENT, math.ceil(math.log2(amax) - math.log2(E4M3_MAX)))
    if exponent > MAX_EXPONENT:
        raise ValueError(f"amax: {amax} needs a scale past fp32's range")
    return 2.0**exponent


def quantize(x: torch.Tensor, scale: float) -> torch.Tensor:
    """``x / scale`` rounded to e4m3 (round to nearest even, saturating at +-448: a value past it is a bad scale)."""
    y = x.float() / scale
    if y.abs().max().item() > E4M3_MAX:
        raise ValueError(f"scale {scale}: a value reaches {y.abs().max().item() * scale:.4g}, past 448 x scale")
    return y.to(FP8)


def quantize_kv(kv_cache: torch.Tensor) -> tuple[torch.Tensor, float]:
    """(the pool as e4m3, its scale) for a bf16 or fp32 pool ``[S, 576]``."""
    scale = pool_scale(kv_cache.float().abs().max().item())
    return quantize(kv_cache, scale), scale


def dequantize(stored: torch.Tensor, scale: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The values an e4m3 tensor with ``scale`` stands for, in ``dtype`` (exact in fp32 and in bf16)."""
    return (stored.to(torch.float32) * scale).to(dtype)


def _row_scales(x: torch.Tensor) -> torch.Tensor:
    """A power-of-two scale per row of the last dimension (what a kernel would quantize Q with)."""
    amax = x.abs().amax(dim=-1, keepdim=True).clamp(min=2.0**-126)
    return torch.exp2(torch.ceil(torch.log2(amax / E4M3_MAX)))


def _e4m3_rows(x: torch.Tensor) -> torch.Tensor:
    """``x`` as e4m3 with a power-of-two scale per row, back in fp32."""
    scales = _row_scales(x)
    return (x / scales).to(FP8).float() * scales


def _e4m3_split(x: torch.Tensor) -> torch.Tensor:
    """``x`` as the sum of two e4m3 terms per row (the rounded value and its rounded remainder), in fp32."""
    hi = _e4m3_rows(x)
    return hi + _e4m3_rows(x - hi)


def emulate(
    design: str,
    q: torch.Tensor,
    kv_fp8: torch.Tensor,
    kv_scale: float,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The output (fp32 ``[B,T,H,512]``) and lse of ``design`` on the quantized cache, every product and sum in
    fp32 from the operands the design's MMAs would see (bf16 Q and P for ``kv``; e4m3 Q and P for the others)."""
    if design not in DESIGNS:
        raise ValueError(f"design: expected one of {DESIGNS}, got {design!r}")
    batch, nodes, _, _ = q.shape
    visible_tree = ancestor_matrix(tree_mask)
    bounds = prefix_indptr.tolist()
    seen_as = {
        "kv": lambda t: t.to(torch.bfloat16).float(),
        "qkp": _e4m3_rows,
        "qkp2": _e4m3_split,
        "q2p": _e4m3_split,
    }[design]
    q_seen = seen_as(q.float())
    outs, lses = [], []
    for b in range(batch):
        slots = torch.cat([prefix_slots[bounds[b] : bounds[b + 1]], tree_slots[b]]).long()
        keys = kv_fp8[slots].float() * kv_scale  # exact: a power-of-two scale
        prefix_len = bounds[b + 1] - bounds[b]
        visible = torch.cat([torch.ones(nodes, prefix_len, dtype=torch.bool), visible_tree[b].cpu()], dim=1)
        visible = visible.to(q.device)
        scores = torch.einsum("thd,nd->thn", q_seen[b], keys) * sm_scale
        scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
        top = scores.amax(dim=-1, keepdim=True)
        safe = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        p = torch.exp(scores - safe)  # in [0, 1], the weights the P.V MMA multiplies
        total = p.sum(dim=-1, keepdim=True)
        if design in ("qkp", "q2p"):
            p = (p * 2.0**P_SHIFT).to(FP8).float() / 2.0**P_SHIFT
        elif design == "qkp2":
            p = _e4m3_split(p.flatten(0, 1)).view_as(p)
        else:
            p = p.to(torch.bfloat16).float()
        out = torch.einsum("thn,nd->thd", p, keys[:, :V_DIM]) / total.clamp(min=torch.finfo(torch.float32).tiny)
        seen = visible.any(dim=1)[:, None, None]
        outs.append(out.masked_fill(~seen, 0.0))
        lses.append((safe + torch.log(total)).squeeze(-1).masked_fill(~seen[..., 0], float("-inf")))
    return torch.stack(outs), torch.stack(lses)
