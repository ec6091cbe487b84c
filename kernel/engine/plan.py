"""One plan per step: every layer's attention metadata, computed once on the device into fixed buffers.

A `StepPlan` is allocated once for (batch B, tree nodes T, max_context) and never reallocates. Per step the
host writes the step's raw inputs into its input buffers (`load`): each request's committed length, its tree's
tokens, slots, ancestor masks and depths. `compute()` then derives, on the device and with no host
synchronisation, what every layer's `kernel.verify_attention` call and the model need:

- prefix_indptr [B+1] int32: cumulative committed lengths;
- prefix_slots [B * max_context] int32: the requests' slot lists (rows of the engine's `req_to_token` table)
  packed back to back; the entries past prefix_indptr[B] are never read. Its size is fixed, so the cuda
  backend, which picks its split count from prefix_slots.numel() (a host-known size), picks the same count
  every step: the launch is the same whatever the lengths, which is what makes a step capturable;
- write_index [B*T] int64: the pool rows the tree's KV rows go to (every layer writes there);
- positions [B, T] int64: committed length + depth, and `rope` [B, T, 64]: cos | sin of those positions.

For B = 1, prefix_slots is req_to_token's row itself (no packing). For B > 1 on CUDA, one Triton launch
(`plan_kernel`) derives everything but the rope, as the torch ops do on a CPU, bit for bit. Every op writes
into a preallocated buffer (`out=`, in-place), so a captured step allocates nothing and replays with new inputs.
"""

from __future__ import annotations

from functools import partial

import torch


class StepPlan:
    """Input and metadata buffers of one verify step for a fixed (batch, nodes, max_context)."""

    def __init__(self, req_to_token: torch.Tensor, batch: int, nodes: int, rope_table: torch.Tensor | None) -> None:
        device = req_to_token.device
        self.batch, self.nodes = batch, nodes
        self.max_context = req_to_token.shape[1]
        self.req_to_token = req_to_token[:batch]  # [B, max_context] int32, owned by the engine
        i32, i64 = dict(dtype=torch.int32, device=device), dict(dtype=torch.int64, device=device)
        # Inputs, written by `load` (eager) or copied in before a graph replay.
        self.seq_lens = torch.zeros(batch, **i32)
        self.tree_tokens = torch.zeros(batch, nodes, **i64)
        self.tree_slots = torch.zeros(batch, nodes, **i32)
        self.tree_mask = torch.zeros(batch, nodes, **i64)
        self.tree_depth = torch.zeros(batch, nodes, **i64)
        # Derived metadata, written by `compute`.
        self.prefix_indptr = torch.zeros(batch + 1, **i32)
        self.write_index = torch.zeros(batch * nodes, **i64)
        self.positions = torch.zeros(batch, nodes, **i64)
        self.rope_table = rope_table  # [max_context, 64] fp32 (cos | sin), or None (no rope)
        self.rope = (
            None
            if rope_table is None
            else torch.zeros(batch, nodes, rope_table.shape[1], dtype=rope_table.dtype, device=device)
        )
        self._kernel = None  # batch > 1 on CUDA: the one Triton launch, bound to this plan's buffers
        if batch == 1:
            self.prefix_slots = self.req_to_token[0]
        elif device.type == "cuda":
            from kernel.engine.plan_kernel import compute_plan  # Triton: imported where it runs

            self.prefix_slots = torch.zeros(batch * self.max_context, **i32)
            self._kernel = partial(
                compute_plan,
                self.seq_lens,
                self.req_to_token,
                self.tree_slots,
                self.tree_depth,
                self.prefix_indptr,
                self.prefix_slots,
                self.write_index,
                self.positions,
            )
        else:
            total = batch * self.max_context
            self._packed = torch.zeros(total + 1, **i32)  # the last entry absorbs the unused positions
            self.prefix_slots = self._packed[:total]
            self._columns = torch.arange(self.max_context, **i64).expand(batch, -1)
            self._dest = torch.zeros(batch, self.max_context, **i64)
            self._unused = torch.zeros(batch, self.max_context, dtype=torch.bool, device=device)
            self._trash = total

    def nbytes(self) -> int:
        """Device bytes this plan's own buffers hold (req_to_token and the rope table are the engine's)."""
        storages = {
            t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
            for t in vars(self).values()
            if isinstance(t, torch.Tensor)
        }  # views share their storage: each one counted once
        for engine_owned in (self.req_to_token, self.rope_table):
            if engine_owned is not None:
                storages.pop(engine_owned.untyped_storage().data_ptr(), None)
        return sum(storages.values())

    def load(
        self,
        seq_lens: torch.Tensor,
        tokens: torch.Tensor,
        slots: torch.Tensor,
        masks: torch.Tensor,
        depths: torch.Tensor,
    ) -> None:
        """Copy one step's raw inputs (host or device tensors of the buffers' shapes) into the input buffers."""
        for dst, src in (
            (self.seq_lens, seq_lens),
            (self.tree_tokens, tokens),
            (self.tree_slots, slots),
            (self.tree_mask, masks),
            (self.tree_depth, depths),
        ):
            dst.copy_(src, non_blocking=True)

    def compute(self) -> None:
        """Derive the step's metadata on the device: no host sync, no allocation outside the buffers."""
        if self._kernel is not None:
            self._kernel()
        else:
            self._pack_prefix()
            self.write_index.copy_(self.tree_slots.view(-1))
            torch.add(self.tree_depth, self.seq_lens[:, None], out=self.positions)
        if self.rope is not None:
            torch.index_select(self.rope_table, 0, self.positions.view(-1), out=self.rope.view(-1, self.rope.shape[2]))

    def _pack_prefix(self) -> None:
        """prefix_indptr and prefix_slots with torch ops: B = 1 copies a length, B > 1 scatters whole rows
        (columns past a request's length go to the trash entry)."""
        if self.batch == 1:
            self.prefix_indptr[1:].copy_(self.seq_lens)
            return
        torch.cumsum(self.seq_lens, 0, dtype=torch.int32, out=self.prefix_indptr[1:])
        torch.add(self.prefix_indptr[:-1, None], self._columns, out=self._dest)
        torch.ge(self._columns, self.seq_lens[:, None], out=self._unused)
        self._dest.masked_fill_(self._unused, self._trash)
        self._packed.scatter_(0, self._dest.view(-1), self.req_to_token.reshape(-1))
