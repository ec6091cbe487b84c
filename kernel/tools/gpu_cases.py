"""Self-contained inputs and fp32/bf16 torch reference for the GPU check and timing scripts in this folder.

Kept free of other project modules on purpose: these scripts run on the GPU machine as-is and must not break
when the Python API around the kernel changes.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import torch

HEAD_DIM, V_DIM = 576, 512
TREES = ("chain", "star", "binary", "random")


def sm_scale(factor: float = 40.0) -> float:
    """DeepSeek-V3 / Kimi K2 softmax scale: 192^-0.5 * (1 + 0.1 ln f)^2."""
    return 192**-0.5 * (1.0 + 0.1 * math.log(factor)) ** 2


def tree_masks(kind: str, nodes: int, rng: random.Random) -> list[int]:
    """Ancestor bitmasks (signed int64 values) of a chain, star, full binary or random tree."""
    if kind == "chain":
        parents = [i - 1 for i in range(nodes)]
    elif kind == "star":
        parents = [-1] + [0] * (nodes - 1)
    elif kind == "binary":
        parents = [(i - 1) // 2 if i else -1 for i in range(nodes)]
    elif kind == "random":
        parents = [-1] + [rng.randrange(i) for i in range(1, nodes)]
    else:
        raise ValueError(f"kind: expected one of {TREES}, got {kind!r}")
    rows: list[int] = []
    for i, parent in enumerate(parents):
        bits = (1 << i) | (rows[parent] & ((1 << 64) - 1) if parent >= 0 else 0)
        rows.append(bits - (1 << 64) if bits >= 1 << 63 else bits)
    return rows


@dataclass
class Case:
    """One call's tensors (API order) plus a label."""

    label: str
    q: torch.Tensor
    kv: torch.Tensor
    indptr: torch.Tensor
    prefix_slots: torch.Tensor
    tree_slots: torch.Tensor
    tree_mask: torch.Tensor
    scale: float

    def args(self) -> tuple[Any, ...]:
        """Positional arguments of the extension's forward / kernel.verify_attention, in API order."""
        return (self.q, self.kv, self.indptr, self.prefix_slots, self.tree_slots, self.tree_mask, self.scale)


def make_case(batch: int, heads: int, nodes: int, lens: list[int], tree: str, layout: str, seed: int,
              device: str = "cuda", pool_rows: int | None = None, pool_offset: int = 0,
              kv: torch.Tensor | None = None) -> Case:
    """Fresh random inputs; `layout` "scattered" (random permutation) or "contiguous" slot ids.

    With `kv` given, slots are drawn from rows [pool_offset, pool_offset + pool_rows) of that pool (rotating
    input sets for timing); otherwise a new pool with 25% unused rows is drawn.
    """
    rng = random.Random(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    used = sum(lens) + batch * nodes
    if kv is None:
        pool_rows = used + max(1, used // 4)
        kv = torch.randn(pool_rows, HEAD_DIM, generator=gen, device=device).to(torch.bfloat16)
    assert pool_rows is not None and pool_rows >= used
    if layout == "scattered":
        order = torch.randperm(pool_rows, generator=gen, device=device)[:used] + pool_offset
    else:
        start = rng.randrange(pool_rows - used + 1)
        order = torch.arange(start, start + used, device=device) + pool_offset
    order = order.to(torch.int32)
    prefix, trees, pos = [], [], 0
    for length in lens:
        prefix.append(order[pos:pos + length])
        trees.append(order[pos + length:pos + length + nodes])
        pos += length + nodes
    indptr = [0]
    for length in lens:
        indptr.append(indptr[-1] + length)
    masks = [tree_masks(tree, nodes, rng) for _ in range(batch)]
    label = f"B={batch} H={heads} T={nodes} L={lens if batch <= 4 else f'{min(lens)}..{max(lens)}'} {tree} {layout}"
    return Case(label=label,
                q=torch.randn(batch, nodes, heads, HEAD_DIM, generator=gen, device=device).to(torch.bfloat16),
                kv=kv, indptr=torch.tensor(indptr, dtype=torch.int32, device=device),
                prefix_slots=torch.cat(prefix).contiguous(), tree_slots=torch.stack(trees).contiguous(),
                tree_mask=torch.tensor(masks, dtype=torch.int64, device=device), scale=sm_scale())


def reference(case: Case, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """out [B,T,H,512] (in dtype) and natural-log lse [B,T,H] fp32, by plain torch in `dtype`."""
    batch, nodes, heads, _ = case.q.shape
    bits = torch.arange(nodes, device=case.q.device, dtype=torch.int64)
    visible_tree = ((case.tree_mask.unsqueeze(-1) >> bits) & 1).bool()  # [B, T, T]
    bounds = case.indptr.tolist()
    outs, lses = [], []
    for b in range(batch):
        slots = torch.cat([case.prefix_slots[bounds[b]:bounds[b + 1]], case.tree_slots[b]]).long()
        keys = case.kv[slots].to(dtype)
        length = bounds[b + 1] - bounds[b]
        visible = torch.cat([torch.ones(nodes, length, dtype=torch.bool, device=case.q.device), visible_tree[b]], 1)
        scores = torch.einsum("thd,nd->thn", case.q[b].to(dtype), keys) * case.scale
        scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
        lses.append(torch.logsumexp(scores.float(), dim=-1))
        outs.append(torch.einsum("thn,nd->thd", torch.softmax(scores, dim=-1), keys[:, :V_DIM]))
    return torch.stack(outs), torch.stack(lses)
