"""Input generators for tree-verify attention, shared by the tests and the benchmark.

A draft tree of T nodes is given by a parent list (node 0 is the root, parent[i] < i); its mask is one
int64 per node with bit j set when node j is node i's ancestor or node i itself. Prefix slots may be
scattered through the pool (a long-lived page_size=1 pool) or contiguous (a freshly defragmented one).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

import torch

HEAD_DIM = 576
V_DIM = 512
MAX_NODES = 64
TREE_KINDS = ("chain", "star", "binary", "random")
SLOT_LAYOUTS = ("scattered", "contiguous")


def yarn_sm_scale(factor: float = 40.0) -> float:
    """Softmax scale of a DeepSeek-V3 / Kimi K2 layer: 192^-0.5 * (1 + 0.1 ln f)^2 (f = YaRN factor)."""
    return float(192**-0.5 * (1.0 + 0.1 * math.log(factor)) ** 2)


def tree_parents(kind: str, nodes: int, rng: random.Random | None = None) -> list[int]:
    """Parent of each node (-1 for the root) for a chain, star, full binary (heap order) or random tree."""
    if not 1 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes: expected 1..{MAX_NODES}, got {nodes}")
    if kind == "chain":
        return [i - 1 for i in range(nodes)]
    if kind == "star":
        return [-1] + [0] * (nodes - 1)
    if kind == "binary":
        return [(i - 1) // 2 if i else -1 for i in range(nodes)]
    if kind == "random":
        rng = rng or random.Random()
        return [-1] + [rng.randrange(i) for i in range(1, nodes)]
    raise ValueError(f"kind: expected one of {TREE_KINDS}, got {kind!r}")


def mask_from_parents(parents: list[int]) -> list[int]:
    """Ancestor bitmasks (as signed int64 values) from a parent list: bit j of row i <=> j is i or an ancestor."""
    rows: list[int] = []
    for i, parent in enumerate(parents):
        if parent >= i:
            raise ValueError(f"parents[{i}]: expected < {i} (topological order), got {parent}")
        bits = (1 << i) | (rows[parent] & ((1 << 64) - 1) if parent >= 0 else 0)
        # Bit 63 is the sign bit of an int64: store the two's-complement value torch can hold.
        rows.append(bits - (1 << 64) if bits >= 1 << 63 else bits)
    return rows


def tree_mask(kind: str, nodes: int, rng: random.Random | None = None) -> list[int]:
    """Ancestor bitmask rows of one tree of the given kind."""
    return mask_from_parents(tree_parents(kind, nodes, rng))


def mixed_lengths(batch: int, mean: int, rng: random.Random) -> list[int]:
    """Prefix lengths around `mean` (between 0.5x and 1.5x) so requests in a batch differ; exact for batch 1."""
    if batch == 1 or mean == 0:
        return [mean] * batch
    return [max(0, int(mean * rng.uniform(0.5, 1.5))) for _ in range(batch)]


@dataclass
class VerifyInputs:
    """One call's arguments to `kernel.verify_attention` (see its docstring for shapes)."""

    q: torch.Tensor
    kv_cache: torch.Tensor
    prefix_indptr: torch.Tensor
    prefix_slots: torch.Tensor
    tree_slots: torch.Tensor
    tree_mask: torch.Tensor
    sm_scale: float

    def args(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float]:
        """Positional arguments in API order."""
        return (
            self.q,
            self.kv_cache,
            self.prefix_indptr,
            self.prefix_slots,
            self.tree_slots,
            self.tree_mask,
            self.sm_scale,
        )

    @property
    def prefix_lens(self) -> list[int]:
        """Per-request prefix lengths (host copy)."""
        ptr = self.prefix_indptr.tolist()
        return [b - a for a, b in itertools.pairwise(ptr)]

    def nbytes(self) -> int:
        """Bytes the kernel must read at least: every visible KV row once, slot ids, q; the output written."""
        b, t, h, _ = self.q.shape
        tokens = self.prefix_slots.numel() + b * t
        return tokens * (HEAD_DIM * 2 + 4) + self.q.numel() * 2 + b * t * h * V_DIM * 2


def make_inputs(
    batch: int,
    heads: int,
    nodes: int,
    prefix_lens: list[int],
    *,
    tree: str = "random",
    slots: str = "scattered",
    seed: int = 0,
    device: str | torch.device = "cpu",
    sm_scale: float | None = None,
    pool_slack: float = 0.25,
) -> VerifyInputs:
    """Random bf16 inputs for one verify call.

    The pool holds every prefix and tree row plus `pool_slack` unused rows (so slot ids do not simply cover
    the pool); "scattered" draws slot ids as a random permutation of the pool, "contiguous" gives each
    request one run: its prefix, then its tree nodes.
    """
    if len(prefix_lens) != batch:
        raise ValueError(f"prefix_lens: expected {batch} lengths, got {len(prefix_lens)}")
    if slots not in SLOT_LAYOUTS:
        raise ValueError(f"slots: expected one of {SLOT_LAYOUTS}, got {slots!r}")
    device = torch.device(device)
    rng = random.Random(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    used = sum(prefix_lens) + batch * nodes
    pool = used + max(1, int(used * pool_slack))
    if slots == "scattered":
        order = torch.randperm(pool, generator=gen, device=device)[:used]
    else:
        start = rng.randrange(pool - used + 1)
        order = torch.arange(start, start + used, device=device)
    order = order.to(torch.int32)
    prefix_parts, tree_parts, pos = [], [], 0
    for length in prefix_lens:
        prefix_parts.append(order[pos : pos + length])
        tree_parts.append(order[pos + length : pos + length + nodes])
        pos += length + nodes
    indptr = [0]
    for length in prefix_lens:
        indptr.append(indptr[-1] + length)
    masks = [tree_mask(tree, nodes, rng) for _ in range(batch)]
    return VerifyInputs(
        q=torch.randn(batch, nodes, heads, HEAD_DIM, generator=gen, device=device).to(torch.bfloat16),
        kv_cache=torch.randn(pool, HEAD_DIM, generator=gen, device=device).to(torch.bfloat16),
        prefix_indptr=torch.tensor(indptr, dtype=torch.int32, device=device),
        prefix_slots=torch.cat(prefix_parts).contiguous(),
        tree_slots=torch.stack(tree_parts).contiguous(),
        tree_mask=torch.tensor(masks, dtype=torch.int64, device=device),
        sm_scale=yarn_sm_scale() if sm_scale is None else sm_scale,
    )
