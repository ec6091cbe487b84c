"""The two tiers end to end: plan on the pool's device, check, move, rewrite the bookkeeping in place.

For a pool and its requests (`compact_request`, `compact_pool`) or for a running engine between two steps
(`compact_engine`, e.g. from `Engine.between_steps`): the engine's requests, their req_to_token rows and its
allocator are rewritten in place, so its captured graphs replay on the compacted pool unchanged.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TYPE_CHECKING, Any

import torch

from kernel.defrag.execute import apply
from kernel.defrag.plan import DefragError, MovePlan, plan_tier0, plan_tier1
from kernel.defrag.schedule import MIN_WAVE
from kernel.engine.kv_pool import SlotAllocator

if TYPE_CHECKING:
    from kernel.engine.engine import Engine


def compact_request(
    kv: torch.Tensor,
    allocator: SlotAllocator,
    slot_lists: Sequence[MutableSequence[int] | torch.Tensor],
    index: int,
    tables: Sequence[torch.Tensor] = (),
    min_wave: int = MIN_WAVE,
) -> MovePlan:
    """Tier 0 on request `index`; returns the executed plan. DefragError, changing nothing, when it cannot."""
    plan = plan_tier0(allocator.owned_mask(kv.device), _on(slot_lists, kv.device), index, min_wave)
    apply(plan, kv, allocator, slot_lists, tables)
    return plan


def compact_pool(
    kv: torch.Tensor,
    allocator: SlotAllocator,
    slot_lists: Sequence[MutableSequence[int] | torch.Tensor],
    tables: Sequence[torch.Tensor] = (),
    min_wave: int = MIN_WAVE,
) -> MovePlan:
    """Tier 1 over every request (they must own every owned slot); returns the executed plan."""
    plan = plan_tier1(allocator.owned_mask(kv.device), _on(slot_lists, kv.device), min_wave)
    apply(plan, kv, allocator, slot_lists, tables)
    return plan


def compact_engine(engine: Engine, requests: Sequence[Any], tier: int, index: int = 0) -> MovePlan:
    """Tier `tier` (0: request `index` of the batch; 1: the whole pool) on a running engine between two steps:
    `requests` are the batch's requests as `Engine.between_steps` receives them."""
    if tier not in (0, 1):
        raise DefragError(f"tier: expected 0 or 1, got {tier!r}")
    busy = [i for i, r in enumerate(requests) if r.pending]
    if busy:
        raise DefragError(f"requests {busy} have a step in flight: defragment between steps")
    lists = [r.slots for r in requests]
    tables = [engine.req_to_token[r.row] for r in requests]
    pool = engine.pool
    if tier == 0:
        return compact_request(pool.kv, pool.allocator, lists, index, tables)
    return compact_pool(pool.kv, pool.allocator, lists, tables)


def _on(slot_lists: Sequence[MutableSequence[int] | torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    return [
        s.to(device) if isinstance(s, torch.Tensor) else torch.tensor(list(s), dtype=torch.int64).to(device)
        for s in slot_lists
    ]
