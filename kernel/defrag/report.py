"""How fragmented a pool is: per request the contiguous runs of its slot list, and the runs of free space.

A run of a slot list is a maximal stretch in which each slot is the one before it plus one: the stretch a
kernel could read as one bulk copy. A compact request has one run (an empty one none); a compact pool has
every request in one run and its free space in one run. Everything is computed with torch ops on whatever
device the inputs live on: a multi-GB pool has hundreds of thousands of slots, too many for a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch


@dataclass(frozen=True)
class Fragmentation:
    """The report of one pool; `requests[i]` describes the i-th slot list it was given."""

    capacity: int
    request_lengths: tuple[int, ...]
    request_runs: tuple[int, ...]  # contiguous runs in each request's slot list (0 for an empty list)
    free_slots: int
    free_runs: int
    largest_free_run: int

    @property
    def compact(self) -> bool:
        """Every request in at most one run and the free space in at most one."""
        return all(r <= 1 for r in self.request_runs) and self.free_runs <= 1

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def runs(slots: torch.Tensor | Sequence[int]) -> int:
    """Maximal stretches of the list in which each slot is its predecessor plus one (0 for an empty list)."""
    t = torch.as_tensor(slots, dtype=torch.int64)
    if t.numel() == 0:
        return 0
    return 1 + int((t[1:] != t[:-1] + 1).sum())


def free_runs(owned: torch.Tensor) -> tuple[int, int, int]:
    """(free slots, runs of free slots, the longest run) of an ownership mask [S] (True = owned)."""
    free = ~owned.to(torch.bool)
    edges = torch.diff(
        free.to(torch.int8), prepend=free.new_zeros(1, dtype=torch.int8), append=free.new_zeros(1, dtype=torch.int8)
    )
    starts = torch.nonzero(edges == 1).flatten()
    ends = torch.nonzero(edges == -1).flatten()
    longest = int((ends - starts).max()) if starts.numel() else 0
    return int(free.sum()), int(starts.numel()), longest


def fragmentation(owned: torch.Tensor, requests: Sequence[torch.Tensor | Sequence[int]]) -> Fragmentation:
    """The report of a pool given its ownership mask [S] (True = owned) and its requests' slot lists."""
    free, nruns, longest = free_runs(owned)
    return Fragmentation(
        capacity=int(owned.numel()),
        request_lengths=tuple(len(r) for r in requests),
        request_runs=tuple(runs(r) for r in requests),
        free_slots=free,
        free_runs=nruns,
        largest_free_run=longest,
    )
