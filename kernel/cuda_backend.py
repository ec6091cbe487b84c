"""The `cuda` backend of `kernel.verify_attention`: the split-KV kernel in `kernel/csrc/` this device builds.

Inputs arrive already validated by `kernel/verify.py`; the C++ binding checks them again (cheaply, from
metadata) before anything launches.
"""

from __future__ import annotations

import torch

from kernel import build


def verify_attention_cuda(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    return_lse: bool,
    kv_scale: float | None = None,
    pdl: int = 1,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Tree-verify MLA attention on the GPU.

    Shapes: q [B,T,H,576] bf16, kv_cache [S,576] bf16, prefix_indptr [B+1] int32, prefix_slots [N] int32,
    tree_slots [B,T] int32, tree_mask [B,T] int64 (bit j of row i: node i sees node j).
    Returns out [B,T,H,512] bf16, and lse [B,T,H] fp32 (natural log of the scaled scores' sum of exps) when
    return_lse. A node that sees nothing (empty prefix, no mask bit) gets zeros and lse -inf.
    pdl: the bf16 kernel's Params::pdl (0 off, 1 launch, 2 prefix; `verify_attention`'s pdl, by index).
    An fp8 kv_cache (float8_e4m3fn, with kv_scale) runs the fp8 kernel (sm_89+, kernel/csrc/verify_attention_fp8.cuh),
    or the device's own fp8 build where build.FP8_PRODUCT_BY_CC names one (build.fp8_product_variant).
    """
    if kv_cache.dtype == torch.float8_e4m3fn:
        assert kv_scale is not None  # validated by kernel/verify.py
        ext8 = build.load(variant=build.fp8_product_variant(torch.cuda.get_device_capability(q.device)))
        out, lse = ext8.forward_fp8(
            q,
            kv_cache,
            float(kv_scale),
            prefix_indptr,
            prefix_slots,
            tree_slots,
            tree_mask,
            float(sm_scale),
            bool(return_lse),
            0,
        )
        return (out, lse) if return_lse else out
    ext = build.load()
    out, lse = ext.forward(
        q,
        kv_cache,
        prefix_indptr,
        prefix_slots,
        tree_slots,
        tree_mask,
        float(sm_scale),
        bool(return_lse),
        0,
        pdl,
    )
    return (out, lse) if return_lse else out


def store_rows(pool: torch.Tensor, index: torch.Tensor, rows: torch.Tensor, pdl: bool) -> None:
    """pool[index[i]] = rows[i]: bf16 pool [S, 576], int64 index [N], bf16 rows [N, 576] on one CUDA device; pdl: as
    a programmatic dependent of the kernel before it (sm_90+; kernel/csrc/verify_attention_store.cuh), letting the
    next kernel (the layer's attention under pdl "prefix") launch while it writes."""
    build.load().store_rows(pool, index, rows, bool(pdl))
