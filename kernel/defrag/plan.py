"""The plan of a defragmentation: which rows move where, and each request's slot list afterwards. Pure.

A plan is made from the pool's ownership mask [S] (True = owned) and the requests' slot lists, with torch
ops on whatever device they are given (the pool's, for a multi-GB pool), and changes nothing: a plan that is
dropped, or that fails, leaves the pool as it was. Executing it (`kernel.defrag.execute`) moves the rows and
rewrites the bookkeeping.

- Tier 0 (`plan_tier0`): one request into one run. The run is a window of the request's length in which every
  slot is free or already the request's; of those windows, the one where most of its rows already sit (the
  lowest on a tie). Other requests' rows never move; without such a window the plan fails (Tier 1 then).
- Tier 1 (`plan_tier1`): every request into one run, packed from slot 0 in the order of their first slots (so
  a pool compacted before keeps most rows in place), the free space one run at the end. Every owned slot must
  belong to a request given: a row the plan does not know of would be overwritten.

Either way every request keeps its rows in their order; only the slots change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kernel.defrag.report import free_runs
from kernel.defrag.schedule import MAX_WAVES, MIN_WAVE, Schedule, schedule


class DefragError(ValueError):
    """A defragmentation that cannot be planned or executed as asked; nothing was changed."""


@dataclass(frozen=True)
class MovePlan:
    """What a tier does to the pool: the moves in execution order, and the bookkeeping after them."""

    tier: int
    owned: torch.Tensor  # [S] bool: the ownership mask it was planned against
    before: tuple[torch.Tensor, ...]  # each request's slots when planned (int64)
    after: tuple[torch.Tensor, ...]  # each request's slots once executed (int64, same lengths)
    moves: Schedule
    occupied: torch.Tensor  # free slots that will hold rows
    vacated: torch.Tensor  # owned slots whose rows leave

    @property
    def capacity(self) -> int:
        return int(self.owned.numel())

    @property
    def rows_moved(self) -> int:
        return int(self.moves.src.numel())


def as_slots(requests: Sequence[torch.Tensor | Sequence[int]], device: torch.device) -> list[torch.Tensor]:
    """Each slot list as a 1-D int64 tensor on `device`."""
    out = []
    for i, r in enumerate(requests):
        t = torch.as_tensor(r, device=device) if not isinstance(r, torch.Tensor) else r.to(device)
        if t.dim() != 1 or (t.numel() and (t.is_floating_point() or t.dtype == torch.bool)):
            raise DefragError(f"requests[{i}]: expected a 1-D list of integer slots, got {tuple(t.shape)} {t.dtype}")
        out.append(t.to(torch.int64))
    return out


def check_requests(owned: torch.Tensor, slots: Sequence[torch.Tensor], cover: bool) -> None:
    """DefragError unless every slot is in range, owned and named once over all requests (and, with `cover`,
    every owned slot belongs to a request)."""
    capacity = owned.numel()
    every = torch.cat([owned.new_zeros(0, dtype=torch.int64), *slots])
    for i, t in enumerate(slots):
        if t.numel() and (int(t.min()) < 0 or int(t.max()) >= capacity):
            bad = int(t[(t < 0) | (t >= capacity)][0])
            raise DefragError(f"requests[{i}]: slot {bad} is outside the pool [0, {capacity})")
        if t.numel() and not bool(owned[t].all()):
            raise DefragError(f"requests[{i}]: slot {int(t[~owned[t]][0])} is not owned (a free slot)")
    counts = torch.bincount(every, minlength=capacity)
    if every.numel() and int(counts.max()) > 1:
        slot = int(torch.argmax((counts > 1).to(torch.int8)))
        holders = [i for i, t in enumerate(slots) if bool((t == slot).any())]
        raise DefragError(f"slot {slot} is named twice (requests {holders})")
    if cover and every.numel() != int(owned.sum()):
        slot = int(torch.argmax((owned & (counts == 0)).to(torch.int8)))
        raise DefragError(f"slot {slot} is owned but in no request given: tier 1 would overwrite its row")


def _plan(
    tier: int,
    owned: torch.Tensor,
    before: list[torch.Tensor],
    after: list[torch.Tensor],
    min_wave: int,
    max_waves: int,
) -> MovePlan:
    old = torch.cat([owned.new_zeros(0, dtype=torch.int64), *before])
    new = torch.cat([owned.new_zeros(0, dtype=torch.int64), *after])
    moving = old != new
    src, dst = old[moving], new[moving]
    capacity = owned.numel()
    now_owned = torch.zeros(capacity, dtype=torch.bool, device=owned.device)
    now_owned[new] = True
    occupied = torch.nonzero(now_owned & ~owned).flatten()
    vacated = torch.nonzero(owned & ~now_owned).flatten()
    return MovePlan(
        tier=tier,
        owned=owned.clone(),
        before=tuple(t.clone() for t in before),
        after=tuple(after),
        moves=schedule(src, dst, capacity, min_wave, max_waves),
        occupied=occupied,
        vacated=vacated,
    )


def plan_tier0(
    owned: torch.Tensor,
    requests: Sequence[torch.Tensor | Sequence[int]],
    index: int,
    min_wave: int = MIN_WAVE,
    max_waves: int = MAX_WAVES,
) -> MovePlan:
    """Tier 0: request `index` into one run of its length (see the module docstring). DefragError when no
    window of that length is free of other requests' rows."""
    owned = owned.to(torch.bool)
    slots = as_slots(requests, owned.device)
    if not 0 <= index < len(slots):
        raise DefragError(f"index: expected a request in [0, {len(slots)}), got {index}")
    check_requests(owned, slots, cover=False)
    mine = slots[index]
    n, capacity = int(mine.numel()), int(owned.numel())
    after = list(slots)
    if n > 0:
        foreign = owned.clone()
        foreign[mine] = False
        blocked = torch.cat([foreign.new_zeros(1, dtype=torch.int64), torch.cumsum(foreign.to(torch.int64), 0)])
        clear = (blocked[n:] - blocked[: capacity - n + 1]) == 0  # window [a, a + n) holds no other request's row
        if not bool(clear.any()):
            raise DefragError(
                f"tier 0: no run of {n} slots is free of other requests' rows in a pool of {capacity} "
                f"(the longest is {free_runs(foreign)[2]}): compact the whole pool (tier 1)"
            )
        starts = mine - torch.arange(n, device=owned.device)  # the window start that keeps row i in place
        fits = (starts >= 0) & (starts <= capacity - n)
        in_place = torch.bincount(starts[fits], minlength=capacity - n + 1)
        score = torch.where(clear, in_place, -1)
        start = int(torch.argmax(score))  # the first of the best
        after[index] = start + torch.arange(n, device=owned.device)
    return _plan(0, owned, slots, after, min_wave, max_waves)


def plan_tier1(
    owned: torch.Tensor,
    requests: Sequence[torch.Tensor | Sequence[int]],
    min_wave: int = MIN_WAVE,
    max_waves: int = MAX_WAVES,
) -> MovePlan:
    """Tier 1: every request into one run from slot 0, the free space one run at the end (see the module
    docstring). DefragError when an owned slot belongs to no request given."""
    owned = owned.to(torch.bool)
    slots = as_slots(requests, owned.device)
    check_requests(owned, slots, cover=True)
    capacity = owned.numel()
    firsts = [int(t[0]) if t.numel() else capacity for t in slots]
    order = sorted(range(len(slots)), key=lambda i: (firsts[i], i))
    after: list[torch.Tensor] = [torch.empty(0)] * len(slots)
    start = 0
    for i in order:
        n = int(slots[i].numel())
        after[i] = torch.arange(start, start + n, device=owned.device)
        start += n
    return _plan(1, owned, slots, after, min_wave, max_waves)
