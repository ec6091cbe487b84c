"""The latent KV pool (page_size = 1) and its slot allocator.

The pool is one tensor [layers, S, 576]: row s of layer l is the KV row of whichever token owns slot s. It holds
bf16 rows (1,152 bytes), or e4m3 rows (576 bytes) with one scale for the pool (`kv_dtype="fp8"`, kernel/fp8.py): a
row is stored as e4m3(value / scale), clamped to e4m3's +-448 (what serving stacks do with a calibrated k_scale).
Slots are handed out by a free list kept on the host. Why the host: the engine reads the accepted path back
once per step anyway (the tokens it emits), so the allocator's decisions cost no extra synchronisation, and a
Python list of free ids with an ownership bitmap makes "no slot owned twice, none leaked" checkable at every
call. Freed slots go back on top of the stack, so a long-lived pool scatters each request's slots, the
layout the kernel is built for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

ROW = 576  # one latent row: 512 latent + 64 rope columns
ROW_BYTES = ROW * 2  # a bf16 row
KV_DTYPES = {"bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}
E4M3_MAX = 448.0


class PoolExhausted(RuntimeError):
    """The pool has fewer free slots than a request asked for (nothing was allocated)."""


class SlotAllocator:
    """Free list over slot ids [0, capacity); every id is either free or owned, never both, never twice."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity: expected >= 1 slots, got {capacity}")
        self.capacity = capacity
        self._free = list(range(capacity - 1, -1, -1))  # pop() hands out 0, 1, 2, ... first
        self._owned = bytearray(capacity)

    @property
    def free_count(self) -> int:
        return len(self._free)

    @property
    def used_count(self) -> int:
        return self.capacity - len(self._free)

    def alloc(self, n: int) -> list[int]:
        """n free slots, now owned; PoolExhausted (allocating nothing) when fewer than n are free."""
        if n < 0:
            raise ValueError(f"n: expected >= 0 slots, got {n}")
        if n > len(self._free):
            raise PoolExhausted(f"KV pool: {n} slots requested, {len(self._free)} of {self.capacity} free")
        slots = self._free[len(self._free) - n :][::-1]
        del self._free[len(self._free) - n :]
        for s in slots:
            self._owned[s] = 1
        return slots

    def free(self, slots: Iterable[int]) -> None:
        """Return owned slots; ValueError (freeing nothing) on a slot that is not owned or named twice."""
        slots = list(slots)
        seen: set[int] = set()
        for s in slots:
            if not 0 <= s < self.capacity or not self._owned[s] or s in seen:
                raise ValueError(f"free: slot {s} is not owned (a double free or a foreign id)")
            seen.add(s)
        for s in slots:
            self._owned[s] = 0
        self._free.extend(slots)

    def owned_bytes(self) -> bytes:
        """A copy of the ownership bitmap: byte s is 1 while slot s is owned."""
        return bytes(self._owned)

    def owned_mask(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """The ownership bitmap as a [S] bool tensor on `device` (True = owned): what a defrag plan is made from."""
        return torch.frombuffer(bytearray(self._owned), dtype=torch.uint8).to(torch.bool).to(device)

    def reassign(self, occupied: Sequence[int], vacated: Sequence[int]) -> None:
        """After rows moved (kernel/defrag): the free slots `occupied` now hold rows and become owned, the owned slots
        `vacated` gave theirs up and become free. The free list is then rebuilt to hand out the lowest ids first, so
        a request that grows after a compaction grows into one run. ValueError, changing nothing, unless every
        occupied slot is free, every vacated one owned, and none is named twice."""
        occupied, vacated = list(occupied), list(vacated)
        if len(set(occupied)) != len(occupied) or len(set(vacated)) != len(vacated):
            raise ValueError("reassign: a slot is named twice")
        for s in occupied:
            if not 0 <= s < self.capacity or self._owned[s]:
                raise ValueError(f"reassign: slot {s} is not free, it cannot become occupied")
        for s in vacated:
            if not 0 <= s < self.capacity or not self._owned[s]:
                raise ValueError(f"reassign: slot {s} is not owned, it cannot be vacated")
        for s in occupied:
            self._owned[s] = 1
        for s in vacated:
            self._owned[s] = 0
        self._free = [s for s in range(self.capacity - 1, -1, -1) if not self._owned[s]]
        self.check()

    def check(self) -> None:
        """AssertionError unless the free list and the ownership bitmap describe one partition of the ids."""
        assert len(set(self._free)) == len(self._free), "a slot is on the free list twice"
        assert all(not self._owned[s] for s in self._free), "a free slot is marked owned"
        assert sum(self._owned) + len(self._free) == self.capacity, "a slot is neither free nor owned (leak)"


def commit_tree(
    allocator: SlotAllocator, owned: list[int], tree_slots: Sequence[int], accepted: Sequence[int]
) -> list[int]:
    """After a verify step: the accepted nodes' slots join the request's slots `owned` (in path order), the
    rest of the tree's slots are freed. Returns the accepted slots."""
    keep = [tree_slots[i] for i in accepted]
    if len(set(accepted)) != len(accepted):
        raise ValueError(f"accepted: expected distinct node indices, got {list(accepted)}")
    kept = set(accepted)
    allocator.free(s for i, s in enumerate(tree_slots) if i not in kept)
    owned.extend(keep)
    return keep


class KVPool:
    """[layers, rows, 576] latent rows (bf16, or e4m3 with `scale`) and the allocator of their slot ids."""

    def __init__(
        self, layers: int, rows: int, device: torch.device, kv_dtype: str = "bf16", scale: float | None = None
    ) -> None:
        if kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype: expected one of {', '.join(map(repr, KV_DTYPES))}, got {kv_dtype!r}")
        if (kv_dtype == "fp8") != (scale is not None):
            raise ValueError(f"scale: an fp8 pool needs one and a bf16 pool has none, got {scale!r} for {kv_dtype}")
        self.kv = torch.zeros(layers, rows, ROW, dtype=KV_DTYPES[kv_dtype], device=device)
        self.scale = scale
        self.allocator = SlotAllocator(rows)

    @property
    def bytes_per_token(self) -> int:
        """Pool bytes one token holds: one row per layer (1,152 bytes in bf16, 576 in fp8)."""
        return self.kv.shape[0] * ROW * self.kv.element_size()

    def store(self, layer: int, index: torch.Tensor, rows: torch.Tensor) -> None:
        """Write `rows` [N, 576] (any float dtype) into layer `layer`'s slots `index` [N], in the pool's format."""
        kv = self.kv[layer]
        if self.scale is None:
            kv.index_copy_(0, index, rows.to(kv.dtype))
        else:
            stored = (rows.float() / self.scale).clamp(-E4M3_MAX, E4M3_MAX).to(kv.dtype)
            kv.view(torch.uint8).index_copy_(0, index, stored.view(torch.uint8))  # no fp8 index_copy: its bytes

    def layer(self, index: int) -> torch.Tensor:
        """Layer `index`'s pool, a contiguous [rows, 576] view (16-byte aligned: rows are 1152 bytes)."""
        return self.kv[index]
