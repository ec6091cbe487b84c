"""The attention backend object: SGLang's attention-backend shape over `kernel.verify_attention`.

Hooks, and the SGLang `AttentionBackend` method each one mirrors:

- `init_forward_metadata(step)` <- `init_forward_metadata(forward_batch)`: once per eager forward step; loads
  the step's inputs into the (B, T) plan and computes the metadata every layer reuses;
- `init_cuda_graph_state(batch, nodes)` <- `init_cuda_graph_state(max_bs, max_num_tokens)`: allocates the
  static plan a graph captures, sized for the engine's max_context (fixed launch, fixed buffers);
- `init_forward_metadata_capture_cuda_graph(batch, nodes)` <- the hook of the same name: selects that static
  plan; the plan's `compute()` is recorded inside the graph with the layers;
- `init_forward_metadata_replay_cuda_graph(step)` <- the hook of the same name: only copies the step's raw
  inputs into the static plan (SGLang computes metadata here, on the host; we compute it inside the graph);
- `forward(q, kv_row, layer)` <- `forward(q, k, v, layer, forward_batch, save_kv_cache=True)` in its
  `forward_extend` (target-verify) mode: stores the tree nodes' KV rows, then attends.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernel.engine.kv_pool import KVPool
from kernel.engine.plan import StepPlan
from kernel.verify import verify_attention


@dataclass
class StepInputs:
    """One verify step's raw inputs (host tensors): per request its committed length and its tree."""

    seq_lens: torch.Tensor  # [B] int32
    tokens: torch.Tensor  # [B, T] int64
    slots: torch.Tensor  # [B, T] int32
    masks: torch.Tensor  # [B, T] int64
    depths: torch.Tensor  # [B, T] int64
    first_row: int = 0  # request b is row first_row + b of req_to_token

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.tokens.shape[0]), int(self.tokens.shape[1])


class TreeVerifyAttention:
    """Runs every layer's tree-verify attention from one per-step plan."""

    def __init__(
        self,
        pool: KVPool,
        req_to_token: torch.Tensor,
        backend: str,
        sm_scale: float,
        rope_table: torch.Tensor | None = None,
        pdl: str = "prefix",
        pdl_store: bool = True,
    ) -> None:
        self.pool, self.req_to_token, self.backend, self.sm_scale = pool, req_to_token, backend, sm_scale
        # "prefix" is safe here: the kernel right before each layer's attention is its KV store, which writes only the
        # tree's rows, and the plan and the prefix's rows come from earlier kernels (`verify_attention`'s pdl).
        self.pdl = pdl
        # The store itself as a programmatic dependent (kernel.cuda_backend.store_rows), for cuda on a bf16 pool: it
        # launches while the previous kernel finishes and lets the layer's attention launch while it writes.
        self.pdl_store = pdl_store and backend == "cuda" and pool.scale is None and pool.kv.is_cuda
        self.rope_table = rope_table
        self._eager: dict[tuple[int, int, int], StepPlan] = {}
        self._graph: dict[tuple[int, int], StepPlan] = {}
        self.plan: StepPlan | None = None

    def _new_plan(self, batch: int, nodes: int, first_row: int = 0) -> StepPlan:
        return StepPlan(self.req_to_token[first_row:], batch, nodes, self.rope_table)

    def init_forward_metadata(self, step: StepInputs) -> StepPlan:
        """Eager step: load the inputs, compute the plan (once for all layers)."""
        key = (*step.shape, step.first_row)
        if key not in self._eager:
            self._eager[key] = self._new_plan(*key)
        self.plan = self._eager[key]
        self.plan.load(step.seq_lens, step.tokens, step.slots, step.masks, step.depths)
        self.plan.compute()
        return self.plan

    def init_cuda_graph_state(self, batch: int, nodes: int) -> StepPlan:
        """The static plan of the graph for (batch, nodes), allocated once."""
        if (batch, nodes) not in self._graph:
            self._graph[batch, nodes] = self._new_plan(batch, nodes)
        return self._graph[batch, nodes]

    def init_forward_metadata_capture_cuda_graph(self, batch: int, nodes: int) -> StepPlan:
        """Select the static plan; the caller records `plan.compute()` and the layers into the graph."""
        self.plan = self.init_cuda_graph_state(batch, nodes)
        return self.plan

    def init_forward_metadata_replay_cuda_graph(self, step: StepInputs) -> StepPlan:
        """Before a replay: copy the step's raw inputs into the static plan (the graph computes the rest)."""
        assert step.first_row == 0, "graphs run whole batches from row 0"
        self.plan = self._graph[step.shape]
        self.plan.load(step.seq_lens, step.tokens, step.slots, step.masks, step.depths)
        return self.plan

    def forward(self, q: torch.Tensor, kv_row: torch.Tensor, layer: int) -> torch.Tensor:
        """q [B, T, H, 576] bf16, kv_row [B*T, 576] (the nodes' new KV rows) -> out [B, T, H, 512] bf16."""
        plan = self.plan
        assert plan is not None, "forward before init_forward_metadata"
        if self.pdl_store:
            from kernel.cuda_backend import store_rows  # built on first use, as verify_attention's cuda backend

            store_rows(self.pool.layer(layer), plan.write_index, kv_row.to(torch.bfloat16).contiguous(), pdl=True)
        else:
            self.pool.store(layer, plan.write_index, kv_row)
        return verify_attention(
            q,
            self.pool.layer(layer),
            plan.prefix_indptr,
            plan.prefix_slots,
            plan.tree_slots,
            plan.tree_mask,
            self.sm_scale,
            backend=self.backend,
            kv_scale=self.pool.scale,
            pdl=self.pdl,
        )
