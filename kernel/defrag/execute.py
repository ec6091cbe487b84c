"""Executing a plan: the rows move on the device, then the bookkeeping is rewritten in place.

`apply` checks everything first (the plan still describes the pool and the slot lists, the tables can take
the new slots), so a refusal changes nothing; then `execute_moves` moves the rows of every layer; then every
slot list, req_to_token row and the allocator are rewritten in place. In place is what keeps a captured CUDA
graph valid: a graph replays against the addresses of the pool and of the table it was captured with, and
reads whatever they hold at replay time, so moving rows and rewriting the table between two replays is seen
by the next one, as an eager step would see it. All of it runs on the current stream, after the step before
it and before the step after it.

`execute_moves` on CUDA: the staged rows are read into a scratch buffer, each wave is one Triton launch over
every layer (`move_kernel`), the scratch is written out; no Python per row, a few launches per plan. On a
CPU the same order with torch's index ops.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence, Sequence

import torch

from kernel.defrag.plan import DefragError, MovePlan
from kernel.defrag.schedule import Schedule
from kernel.engine.kv_pool import SlotAllocator

CopyRows = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], None]


def _copy_rows(src: torch.Tensor, src_index: torch.Tensor, dst: torch.Tensor, dst_index: torch.Tensor) -> None:
    if src.element_size() == 1:  # an fp8 pool: its bytes move (torch has no fp8 index_copy; a byte is a byte)
        src, dst = src.view(torch.uint8), dst.view(torch.uint8)
    if src.is_cuda:
        from kernel.defrag.move_kernel import move_rows  # Triton: imported where it runs

        move_rows(src, src_index, dst, dst_index)
    else:
        dst.index_copy_(1, dst_index, src.index_select(1, src_index))


def execute_moves(kv: torch.Tensor, plan: MovePlan) -> None:
    """Move the plan's rows in `kv` [layers, S, 576], every layer (`move`)."""
    move(kv, plan.moves)


def move(kv: torch.Tensor, moves: Schedule, copy_rows: CopyRows | None = None) -> None:
    """Run a schedule on `kv` [layers, S, 576]: staged rows into scratch, the waves in order, the scratch out.
    Touches nothing but the rows it moves. `copy_rows` (tests): the launch to use instead of the device's."""
    if moves.src.numel() == 0:
        return
    copy = copy_rows or _copy_rows
    src, dst, direct = moves.src.to(kv.device), moves.dst.to(kv.device), moves.direct
    scratch = None
    if moves.staged:
        order = torch.arange(moves.staged, device=kv.device)
        scratch = torch.empty(kv.shape[0], moves.staged, kv.shape[2], dtype=kv.dtype, device=kv.device)
        copy(kv, src[direct:], scratch, order)
    for a, b in zip(moves.bounds[:-1], moves.bounds[1:], strict=True):
        copy(kv, src[a:b], kv, dst[a:b])
    if scratch is not None:
        copy(scratch, order, kv, dst[direct:])


def apply(
    plan: MovePlan,
    kv: torch.Tensor,
    allocator: SlotAllocator,
    slot_lists: Sequence[MutableSequence[int] | torch.Tensor],
    tables: Sequence[torch.Tensor] = (),
) -> None:
    """Execute `plan` on the pool `kv` [layers, S, 576] and rewrite, in place, each request's slot list
    (`slot_lists[i]`: a Python list or a tensor) and, when given, its table row (`tables[i]`: a 1-D tensor whose
    first len(slots) entries are the request's slots, e.g. a row of req_to_token) and the allocator.

    DefragError, changing nothing, when the plan does not describe them any more (a request grew or shrank, a
    slot was allocated or freed since it was planned) or a table cannot take its request's slots."""
    check(plan, kv, allocator, slot_lists, tables)
    execute_moves(kv, plan)
    for slots, new in zip(slot_lists, plan.after, strict=True):
        if isinstance(slots, torch.Tensor):
            slots.copy_(new.to(slots.device, slots.dtype))
        else:
            slots[:] = new.tolist()
    for table, new in zip(tables, plan.after, strict=False):
        table[: new.numel()].copy_(new.to(table.device, table.dtype), non_blocking=True)
    allocator.reassign(plan.occupied.tolist(), plan.vacated.tolist())


def check(
    plan: MovePlan,
    kv: torch.Tensor,
    allocator: SlotAllocator,
    slot_lists: Sequence[MutableSequence[int] | torch.Tensor],
    tables: Sequence[torch.Tensor] = (),
) -> None:
    """DefragError unless `plan` can be applied to exactly these: what `apply` checks before it moves a row."""
    if kv.dim() != 3 or kv.shape[1] != plan.capacity:
        raise DefragError(f"kv: expected [layers, {plan.capacity}, row] (the planned pool), got {tuple(kv.shape)}")
    if allocator.capacity != plan.capacity:
        raise DefragError(f"allocator: {allocator.capacity} slots, the plan was made for {plan.capacity}")
    if not torch.equal(allocator.owned_mask(), plan.owned.cpu()):
        raise DefragError("stale plan: slots were allocated or freed since it was made")
    if len(slot_lists) != len(plan.before):
        raise DefragError(f"slot_lists: the plan has {len(plan.before)} requests, got {len(slot_lists)}")
    for i, (slots, planned) in enumerate(zip(slot_lists, plan.before, strict=True)):
        now = slots.to(torch.int64).cpu() if isinstance(slots, torch.Tensor) else torch.tensor(slots, dtype=torch.int64)
        if not torch.equal(now.reshape(-1), planned.cpu()):
            raise DefragError(f"stale plan: request {i}'s slot list changed since it was made")
    if len(tables) not in (0, len(plan.before)):
        raise DefragError(f"tables: expected none or one per request ({len(plan.before)}), got {len(tables)}")
    for i, (table, new) in enumerate(zip(tables, plan.after, strict=False)):
        if table.dim() != 1 or table.numel() < new.numel() or table.is_floating_point():
            raise DefragError(
                f"tables[{i}]: expected a 1-D integer row of at least {new.numel()} entries, got "
                f"{tuple(table.shape)} {table.dtype}"
            )
        if new.numel() and int(new.max()) > torch.iinfo(table.dtype).max:
            raise DefragError(f"tables[{i}]: slot {int(new.max())} does not fit {table.dtype}")
