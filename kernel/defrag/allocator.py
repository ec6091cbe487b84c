"""What a defragmentation reads from the engine's slot allocator and rewrites in it.

`SlotAllocator` (kernel/engine/kv_pool.py) keeps an ownership bitmap and a free list, and has no public way to
read the one or to say "these free slots are now owned, these owned ones free". Moving rows needs both, so
this module reads and rewrites its two fields, `_owned` and `_free`, and nothing else does. Why not a method on
the allocator: plan 0002's engine phases (P9-P13) hold GPU evidence for kernel/engine/ as it is, and any change
there would make it stale; the two functions below are the methods to move there when the engine changes next.
Every rewrite ends with the allocator's own `check()`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from kernel.engine.kv_pool import SlotAllocator


def owned_bytes(allocator: SlotAllocator) -> bytes:
    """A copy of the ownership bitmap: byte s is 1 while slot s is owned."""
    return bytes(allocator._owned)


def owned_mask(allocator: SlotAllocator, device: torch.device | str = "cpu") -> torch.Tensor:
    """The ownership bitmap as a [S] bool tensor on `device` (True = owned): what a plan is made from."""
    mask = torch.frombuffer(bytearray(allocator._owned), dtype=torch.uint8).to(torch.bool)
    return mask.to(device)


def reassign(allocator: SlotAllocator, occupied: Sequence[int], vacated: Sequence[int]) -> None:
    """After rows moved: the free slots `occupied` now hold rows and become owned, the owned slots `vacated` gave
    theirs up and become free. The free list is then rebuilt to hand out the lowest ids first, so a request that
    grows after a compaction grows into one run. ValueError, changing nothing, unless every occupied slot is
    free, every vacated one owned, and none is named twice."""
    occupied, vacated = list(occupied), list(vacated)
    if len(set(occupied)) != len(occupied) or len(set(vacated)) != len(vacated):
        raise ValueError("reassign: a slot is named twice")
    owned = allocator._owned
    for s in occupied:
        if not 0 <= s < allocator.capacity or owned[s]:
            raise ValueError(f"reassign: slot {s} is not free, it cannot become occupied")
    for s in vacated:
        if not 0 <= s < allocator.capacity or not owned[s]:
            raise ValueError(f"reassign: slot {s} is not owned, it cannot be vacated")
    for s in occupied:
        owned[s] = 1
    for s in vacated:
        owned[s] = 0
    allocator._free = [s for s in range(allocator.capacity - 1, -1, -1) if not owned[s]]
    allocator.check()
