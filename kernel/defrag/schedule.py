"""In which order a set of row moves can run in place without a row being overwritten before it is read.

A move copies the row at slot `src` to slot `dst`; no two moves share a src or a dst. Moves are batched into
launches, and inside one launch nothing orders one row's copy before another's, so a launch is safe only if
none of its destinations is a source still to be read. Follow each move to the move that reads the slot it
writes (`next`): because sources and destinations are distinct, the moves form disjoint chains and cycles.
A move's height is its distance to the end of its chain (0: its destination is read by no move, a free slot
or a vacated one). Moves of height h may all run at once after those of height h - 1 have read their rows:
their destinations are exactly those rows.

For scattered rows chains are short: compacting a pool a fraction p full, a destination holds a row still to
move with probability about p, so heights fall off as p^h and a few launches move nearly every row once.
The rest (cycles, which have no end, and the tails of long chains, such as a request shifted by a few slots)
goes through a scratch buffer: read into it before the first wave, written out after the last. That costs
those rows a second read and write, so a wave is only launched while it moves at least `min_wave` rows.

The result, per plan:

    src, dst  reordered: waves by height first (wave w is [bounds[w], bounds[w + 1])), then the staged moves
    bounds    wave boundaries into src/dst, bounds[0] = 0 and bounds[-1] = the number of direct moves

Execution order: gather the staged sources into scratch, the waves in order, scatter the scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

MIN_WAVE = 256  # rows: below this a launch costs more than staging its rows (~35 ns a row over 61 layers)
MAX_WAVES = 64


@dataclass(frozen=True)
class Schedule:
    src: torch.Tensor  # [M] int64, direct moves by wave, then staged moves
    dst: torch.Tensor  # [M] int64
    bounds: tuple[int, ...]  # wave boundaries into src/dst; bounds[-1] = direct moves

    @property
    def direct(self) -> int:
        return self.bounds[-1]

    @property
    def staged(self) -> int:
        return int(self.src.numel()) - self.bounds[-1]

    @property
    def waves(self) -> int:
        return len(self.bounds) - 1


def heights(src: torch.Tensor, dst: torch.Tensor, capacity: int, cap: int) -> torch.Tensor:
    """Each move's distance to the end of its chain, `cap` for cycles and for chains at least `cap` long.

    Pointer chasing by rounds: after round i every move of height <= i is exact and every other one is at least
    i + 1, so `cap - 1` rounds (or a round that changes nothing) settle it."""
    moves = src.numel()
    reader = torch.full((capacity,), -1, dtype=torch.int64, device=src.device)
    reader[src] = torch.arange(moves, device=src.device)
    nxt = reader[dst]  # the move that reads the slot this move writes, -1 for none
    end = nxt < 0
    safe_next = nxt.clamp(min=0)
    h = torch.where(end, 0, cap)
    for _ in range(cap - 1):
        updated = torch.where(end, 0, (h[safe_next] + 1).clamp(max=cap))
        if torch.equal(updated, h):
            break
        h = updated
    return h


def schedule(
    src: torch.Tensor, dst: torch.Tensor, capacity: int, min_wave: int = MIN_WAVE, max_waves: int = MAX_WAVES
) -> Schedule:
    """Order the moves src[i] -> dst[i] (distinct sources, distinct destinations, none with src == dst) into
    waves of direct moves and a staged rest (see the module docstring)."""
    src, dst = src.to(torch.int64), dst.to(torch.int64)
    if src.numel() == 0:
        return Schedule(src, dst, (0,))
    h = heights(src, dst, capacity, max_waves)
    counts = torch.bincount(h, minlength=max_waves + 1)[:max_waves].tolist()
    waves = 0
    while waves < max_waves and counts[waves] > 0 and counts[waves] >= min_wave:
        waves += 1  # counts never grow with height: each move of height h + 1 has its own next of height h
    key = torch.where(h < waves, h, max_waves)
    order = torch.argsort(key, stable=True)
    bounds = [0]
    for c in counts[:waves]:
        bounds.append(bounds[-1] + int(c))
    return Schedule(src[order], dst[order], tuple(bounds))
