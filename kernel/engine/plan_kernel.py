"""The batch > 1 step plan on CUDA in one Triton launch: what `StepPlan.compute`'s torch ops derive, bit for bit.

One program per (request b, block of BLOCK table columns). Each program sums the committed lengths of the
requests before b (B is small: one masked sum over a padded block, no scan between programs), so it knows
where request b's slots start in the packed list, and copies its columns of req_to_token[b] there. The
program of b's first block also writes prefix_indptr[b + 1] and b's tree outputs (write_index, positions).

Only int32 slots are moved (the torch path builds and scatters B x max_context int64 destinations instead),
and only prefix_slots[indptr[b] : indptr[b] + min(seq_lens[b], max_context)] is written, as the torch path's
scatter does; prefix_indptr[0] stays the 0 it was allocated with. The grid depends on the buffers' sizes
alone (B, max_context), so a captured launch replays for any lengths. Offsets are int32: B x max_context
must stay below 2^31, as the int32 prefix_indptr already requires.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 1024  # table columns per program: 96 x B programs at max_context 96k


@triton.jit
def _plan_kernel(
    seq_lens,
    req_to_token,
    row_stride,
    max_context,
    tree_slots,
    tree_depth,
    prefix_indptr,
    prefix_slots,
    write_index,
    positions,
    batch,
    nodes,
    BATCH_BLOCK: tl.constexpr,
    NODES_BLOCK: tl.constexpr,
    BLOCK: tl.constexpr,
):
    b = tl.program_id(0)
    block = tl.program_id(1)
    requests = tl.arange(0, BATCH_BLOCK)
    lens = tl.load(seq_lens + requests, mask=requests < batch, other=0)
    start = tl.sum(tl.where(requests < b, lens, 0), axis=0)  # prefix_indptr[b]
    length = tl.load(seq_lens + b)
    columns = block * BLOCK + tl.arange(0, BLOCK)
    dest = start + columns
    # For 0 <= seq_lens <= max_context (the engine's domain) `columns < length` alone decides; the other bounds
    # keep lengths outside it (on which the torch ops raise) from reading past the row or writing past the list.
    copy = (columns < length) & (columns < max_context) & (dest >= 0) & (dest < batch * max_context)
    slots = tl.load(req_to_token + b.to(tl.int64) * row_stride + columns, mask=copy)
    tl.store(prefix_slots + dest, slots, mask=copy)
    if block == 0:
        tl.store(prefix_indptr + b + 1, start + length)
        node = b * nodes + tl.arange(0, NODES_BLOCK)
        real = node < (b + 1) * nodes
        tl.store(write_index + node, tl.load(tree_slots + node, mask=real).to(tl.int64), mask=real)
        tl.store(positions + node, tl.load(tree_depth + node, mask=real) + length.to(tl.int64), mask=real)


def compute_plan(
    seq_lens: torch.Tensor,
    req_to_token: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_depth: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    write_index: torch.Tensor,
    positions: torch.Tensor,
) -> None:
    """One launch: prefix_indptr[1:], prefix_slots (packed rows of req_to_token [B, max_context] int32; its
    rows may be strided, its columns contiguous), write_index [B*T] int64 and positions [B, T] int64 from
    seq_lens [B] int32, tree_slots [B, T] int32 and tree_depth [B, T] int64 (all contiguous but the table)."""
    batch, max_context = req_to_token.shape
    nodes = tree_slots.shape[1]
    grid = (batch, triton.cdiv(max_context, BLOCK))
    _plan_kernel[grid](
        seq_lens,
        req_to_token,
        req_to_token.stride(0),
        max_context,
        tree_slots,
        tree_depth,
        prefix_indptr,
        prefix_slots,
        write_index,
        positions,
        batch,
        nodes,
        BATCH_BLOCK=triton.next_power_of_2(batch),
        NODES_BLOCK=triton.next_power_of_2(nodes),
        BLOCK=BLOCK,
    )
