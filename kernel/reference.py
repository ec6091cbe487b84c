"""The oracle: tree-verify MLA attention in plain torch, written for clarity, not speed.

For request b, head h, node i the visible tokens are the whole prefix of b plus the tree nodes whose bit
is set in tree_mask[b, i]. Keys are whole 576-wide pool rows, values their first 512 columns:

    s_j = sm_scale * <q[b,i,h], kv[slot_j]>,   lse = log sum_j exp(s_j),   out = sum_j exp(s_j - lse) kv[slot_j, :512]

`attention` computes this in any floating dtype (fp32 for the oracle; bf16 for "the same math in plain
bf16 torch", the yardstick of the flash-attention error rule). It runs on CPU and GPU. A node that sees
no token at all gets out = 0 and lse = -inf.
"""

from __future__ import annotations

import torch

V_DIM = 512


def ancestor_matrix(tree_mask: torch.Tensor) -> torch.Tensor:
    """[B, T] int64 bitmasks -> [B, T, T] bool, entry (b, i, j) = bit j of tree_mask[b, i]."""
    nodes = tree_mask.shape[1]
    shifts = torch.arange(nodes, device=tree_mask.device, dtype=torch.int64)
    # An arithmetic right shift keeps bit 63 (the sign bit) reachable: (x >> 63) & 1 is 1 for negatives.
    return ((tree_mask.unsqueeze(-1) >> shifts) & 1).bool()


def attention(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    dtype: torch.dtype = torch.float32,
    kv_scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tree-verify attention computed in `dtype`; returns (out [B,T,H,512] in dtype, lse [B,T,H] fp32).

    Inputs as for `kernel.verify_attention` (assumed valid). With dtype=bfloat16 every matmul and the
    softmax run in bf16, as a naive torch implementation would. An fp8 (e4m3) cache is read as its
    dequantized values, `kv_cache * kv_scale` (kernel/fp8.py): the reference of an fp8 kernel.
    """
    if kv_cache.dtype == torch.float8_e4m3fn:
        if kv_scale is None:
            raise ValueError("kv_scale: an fp8 kv_cache needs its scale")
        kv_cache = kv_cache.float() * kv_scale
    elif kv_scale is not None:
        raise ValueError(f"kv_scale: given for a {kv_cache.dtype} kv_cache (only an fp8 cache has a scale)")
    batch, nodes, _, _ = q.shape
    visible_tree = ancestor_matrix(tree_mask)
    bounds = prefix_indptr.tolist()  # a host sync: fine for an oracle
    outs, lses = [], []
    for b in range(batch):
        slots = torch.cat([prefix_slots[bounds[b] : bounds[b + 1]], tree_slots[b]]).long()
        keys = kv_cache[slots].to(dtype)  # [L+T, 576]
        prefix_len = bounds[b + 1] - bounds[b]
        visible = torch.cat(
            [torch.ones(nodes, prefix_len, dtype=torch.bool, device=q.device), visible_tree[b]], dim=1
        )  # [T, L+T]
        scores = torch.einsum("thd,nd->thn", q[b].to(dtype), keys) * sm_scale
        scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
        lse = torch.logsumexp(scores.float(), dim=-1)  # [T, H]
        # A node that sees no token (empty prefix, no mask bit) gets out 0 and lse -inf, not softmax's NaN.
        probs = torch.softmax(scores, dim=-1).masked_fill(~visible.any(dim=1)[:, None, None], 0.0)
        outs.append(torch.einsum("thn,nd->thd", probs, keys[:, :V_DIM]))
        lses.append(lse)
    return torch.stack(outs), torch.stack(lses)


def verify_attention_reference(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    return_lse: bool,
    kv_scale: float | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The `reference` backend: fp32 math, bf16 output like the other backends (an fp8 cache read dequantized)."""
    out, lse = attention(q, kv_cache, prefix_indptr, prefix_slots, tree_slots, tree_mask, sm_scale, kv_scale=kv_scale)
    out = out.to(torch.bfloat16)
    return (out, lse) if return_lse else out
