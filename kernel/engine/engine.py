"""`Engine`: greedy tree speculative decoding over the MLA model, one plan and (optionally) one graph per step.

A batch of requests runs as follows:

1. prefill: each prompt goes through the model in chunks of <= 64 tokens, each chunk a chain tree over the
   request's earlier KV rows; the last prompt token's argmax is the first decided token (the next root);
2. steps until every request has decided `max_new_tokens` tokens: allocate T slots per request, draft a tree
   under its root, run the target on every node (eager, or one CUDA graph replay), read the B x T argmaxes
   back (the step's one synchronisation), accept the longest matching path, keep its KV rows, free the rest.
   Each step decides the path's drafted tokens plus one bonus token. A request that is done still fills its
   row of the fixed batch; its tree is freed and nothing of it is kept. Before each step, `between_steps`
   (when set) runs with the batch's requests: where kernel/defrag compacts the pool (`compact_engine`).

With speculative=False the tree is the root alone (T = 1): plain greedy decoding through the same code.
Inside a step (plan + every layer) nothing reads the device back, allocates outside the plan's buffers or
the graph's pool, or changes a launch: the step's only host work is copying its raw inputs in and the
choices out, and with graphs=True the step is one graph replay (captured once per batch size and T).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from kernel.engine.attention import StepInputs, TreeVerifyAttention
from kernel.engine.config import EngineConfig, resolve_backend
from kernel.engine.drafter import Drafter, TreeShape, accept_path, tree_shape
from kernel.engine.graph import GraphRunner
from kernel.engine.kv_pool import KVPool, commit_tree
from kernel.engine.model import MLAModel, rope_table

PREFILL_CHUNK = 64


def decide(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy choice per node and the gap between its logit and the runner-up's (how far from a tie)."""
    top = torch.topk(logits, 2, dim=-1)
    return top.indices[..., 0], top.values[..., 0] - top.values[..., 1]


@dataclass
class _Request:
    """One request of a running batch: its table row, owned slots, and the tokens decided so far."""

    row: int
    prompt: list[int]
    slots: list[int] = field(default_factory=list)
    decided: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)  # slots of the step in flight (freed if it fails)
    margin: float = float("inf")  # smallest logit gap (best - runner-up) over the decisions taken


@dataclass
class StepRecord:
    """One verify step: per request, the accepted path's length (root included; 0 for a finished request)."""

    accepted: list[int]


class Engine:
    """Engine(config, backend=..., device=..., graphs=False); `generate` decodes greedily."""

    def __init__(
        self,
        config: EngineConfig,
        backend: str | None = None,
        device: str | torch.device | None = None,
        graphs: bool = False,
    ) -> None:
        self.config = config
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.backend = resolve_backend(backend, self.device.type)
        if graphs and self.backend == "reference":
            raise ValueError("graphs: CUDA graphs need backend 'triton' or 'cuda' (the reference syncs with the host)")
        if graphs and self.device.type != "cuda":
            raise ValueError(f"graphs: CUDA graphs need a CUDA device, got {self.device}")
        self.graphs = graphs
        self.model = MLAModel(config, self.device)
        scale = config.kv_scale if config.kv_dtype == "fp8" else None
        self.pool = KVPool(config.layers, config.pool_rows, self.device, config.kv_dtype, scale)
        self.req_to_token = torch.zeros(config.max_batch, config.max_context, dtype=torch.int32, device=self.device)
        self.attention = TreeVerifyAttention(
            self.pool, self.req_to_token, self.backend, config.sm_scale, rope_table(config.max_context, self.device)
        )
        self.draft_logits = self.model.draft_logits()
        self._drafters: dict[TreeShape, Drafter] = {}
        self._graphs: dict[tuple[int, int], GraphRunner] = {}
        self.steps: list[StepRecord] = []  # the last generate()'s verify steps
        # Called with the batch's requests before every verify step, when none has a step in flight: where a
        # defragmentation of the pool runs (kernel/defrag: compact_engine). None: nothing runs between steps.
        self.between_steps: Callable[[Engine, list[_Request]], None] | None = None
        # Per prompt of the last generate(): the smallest gap between the best and the second-best logit over
        # its decisions. Backends round differently; a decision closer to a tie than that may go either way.
        self.margins: list[float] = []

    # ----- public API -----

    def generate(self, prompts: list[list[int]], max_new_tokens: int, speculative: bool = True) -> list[list[int]]:
        """Greedy continuation of each prompt: max_new_tokens tokens each (speculation changes speed, not tokens)."""
        self._check_request(prompts, max_new_tokens, speculative)
        self.steps, self.margins = [], []
        out: list[list[int]] = []
        for start in range(0, len(prompts), self.config.max_batch):
            out += self._generate_batch(prompts[start : start + self.config.max_batch], max_new_tokens, speculative)
        return out

    # ----- one batch -----

    def _generate_batch(self, prompts: list[list[int]], max_new: int, speculative: bool) -> list[list[int]]:
        requests = [_Request(row, list(p)) for row, p in enumerate(prompts)]
        shape = self._shape(speculative)
        try:
            if max_new > 0:
                for req in requests:
                    self._prefill(req)
            while any(len(r.decided) < max_new for r in requests):
                self._step(requests, shape, max_new)
        finally:
            for req in requests:
                self.pool.allocator.free(req.slots + req.pending)
                req.slots, req.pending = [], []
        self.margins += [r.margin for r in requests]
        return [r.decided[:max_new] for r in requests]

    def _prefill(self, req: _Request) -> None:
        """Prompt through the model in chain-shaped chunks; the last token's argmax becomes the first root."""
        for start in range(0, len(req.prompt), PREFILL_CHUNK):
            chunk = req.prompt[start : start + PREFILL_CHUNK]
            chain = tree_shape(len(chunk), 1)
            req.pending = self.pool.allocator.alloc(len(chunk))
            step = self._inputs([len(req.slots)], [chunk], [req.pending], chain, first_row=req.row)
            choices, gaps = self._run(step, graph=False)
            self._extend_table(req, req.pending)
            req.pending = []
        req.decided.append(choices[0][-1])
        req.margin = min(req.margin, gaps[0][-1])

    def _step(self, requests: list[_Request], shape: TreeShape, max_new: int) -> None:
        if self.between_steps is not None:
            self.between_steps(self, requests)
        drafter = self._drafter(shape)
        trees = [drafter.propose(r.decided[-1]) for r in requests]
        for req in requests:
            req.pending = self.pool.allocator.alloc(shape.nodes)
        slots = [req.pending for req in requests]
        step = self._inputs([len(r.slots) for r in requests], trees, slots, shape)
        choices, gaps = self._run(step, graph=self.graphs)
        record = StepRecord([])
        for req, tokens, tree_slots, choice, gap in zip(requests, trees, slots, choices, gaps, strict=True):
            req.pending = []
            if len(req.decided) >= max_new:  # done: keeps its row in the fixed batch, keeps nothing
                self.pool.allocator.free(tree_slots)
                record.accepted.append(0)
                continue
            path = accept_path(shape, tokens, choice)
            kept = commit_tree(self.pool.allocator, [], tree_slots, path)
            self._extend_table(req, kept)
            req.decided += [tokens[i] for i in path[1:]] + [choice[path[-1]]]
            record.accepted.append(len(path))
            req.margin = min([req.margin] + [gap[i] for i in path])
        self.steps.append(record)

    # ----- helpers -----

    def forward_step(self, step: StepInputs, graph: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One verify step on `step` (eager, or a replay of the graph for its (B, T)): logits [B, T, vocab],
        the greedy choice after each node and its margin to the runner-up. On a replay they are the graph's
        static outputs, overwritten by the next replay."""
        if graph:
            return self._graph_runner(step).replay()
        plan = self.attention.init_forward_metadata(step)
        logits = self.model.forward(plan, self.attention)
        return (logits, *decide(logits))

    def _run(self, step: StepInputs, graph: bool) -> tuple[list[list[int]], list[list[float]]]:
        """The target's choice after every node and its margin to the runner-up, [B][T] each, read back once."""
        _, choice, gap = self.forward_step(step, graph)
        return choice.cpu().tolist(), gap.cpu().tolist()

    def _graph_runner(self, step: StepInputs) -> GraphRunner:
        key = step.shape
        if key not in self._graphs:
            plan = self.attention.init_forward_metadata_capture_cuda_graph(*key)
            plan.load(step.seq_lens, step.tokens, step.slots, step.masks, step.depths)

            def captured() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
                plan.compute()
                logits = self.model.forward(plan, self.attention)
                return (logits, *decide(logits))

            self._graphs[key] = GraphRunner(captured)
        self.attention.init_forward_metadata_replay_cuda_graph(step)
        return self._graphs[key]

    def _inputs(
        self, seq_lens: list[int], trees: list[list[int]], slots: list[list[int]], shape: TreeShape, first_row: int = 0
    ) -> StepInputs:
        batch = len(trees)
        for length in seq_lens:
            if length + shape.nodes > self.config.max_context:
                raise ValueError(
                    f"max_context: a request needs {length + shape.nodes} positions, "
                    f"EngineConfig.max_context is {self.config.max_context}"
                )
        return StepInputs(
            seq_lens=torch.tensor(seq_lens, dtype=torch.int32),
            tokens=torch.tensor(trees, dtype=torch.int64),
            slots=torch.tensor(slots, dtype=torch.int32),
            masks=torch.tensor([shape.masks] * batch, dtype=torch.int64),
            depths=torch.tensor([shape.depths] * batch, dtype=torch.int64),
            first_row=first_row,
        )

    def _extend_table(self, req: _Request, slots: list[int]) -> None:
        """Append accepted slots to the request's slot list and to its req_to_token row on the device."""
        start = len(req.slots)
        req.slots += slots
        self.req_to_token[req.row, start : start + len(slots)] = torch.tensor(slots, dtype=torch.int32).to(self.device)

    def _shape(self, speculative: bool) -> TreeShape:
        return tree_shape(self.config.tree_nodes, self.config.tree_branching) if speculative else tree_shape(1, 1)

    def _drafter(self, shape: TreeShape) -> Drafter:
        if shape not in self._drafters:
            self._drafters[shape] = Drafter(self.draft_logits, shape)
        return self._drafters[shape]

    def _check_request(self, prompts: list[list[int]], max_new_tokens: int, speculative: bool) -> None:
        if not isinstance(prompts, list) or not prompts:
            raise ValueError(f"prompts: expected a non-empty list of token lists, got {prompts!r:.80}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens: expected an integer >= 0, got {max_new_tokens!r}")
        nodes = self.config.tree_nodes if speculative else 1
        for i, prompt in enumerate(prompts):
            if not isinstance(prompt, list) or not prompt:
                raise ValueError(f"prompts[{i}]: expected a non-empty list of token ids, got {prompt!r:.80}")
            bad = [t for t in prompt if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < self.config.vocab]
            if bad:
                raise ValueError(f"prompts[{i}]: expected token ids in [0, {self.config.vocab}), got {bad[0]!r}")
            need = len(prompt) + max_new_tokens + nodes
            if need > self.config.max_context:
                raise ValueError(
                    f"prompts[{i}]: {len(prompt)} prompt + {max_new_tokens} new tokens + a tree of "
                    f"{nodes} need max_context >= {need}, EngineConfig.max_context is "
                    f"{self.config.max_context}"
                )
        if len(prompts[: self.config.max_batch]) * self.config.max_context > self.config.pool_rows:
            raise ValueError(
                f"EngineConfig.pool_tokens: {self.config.pool_rows} rows cannot hold "
                f"{min(len(prompts), self.config.max_batch)} requests of max_context "
                f"{self.config.max_context}"
            )
