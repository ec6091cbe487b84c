"""The engine and the kernel's capture safety on the GPU (marker `gpu`; skipped cleanly without CUDA).

- The kernel's launch is capture-safe: a verify call captured once, with prefix buffers sized for a maximum
  context, replays bit-identically to an eager call on the same buffers while prefix lengths and trees
  change between replays, and matches the fp32 reference by the flash-attention rule.
- A whole engine step (plan + every layer) replays bit-identically to the eager step as contexts grow and
  tree topologies change.
- Speculative decoding emits greedy decoding's tokens with `triton` and `cuda`, eager and graphed, and the
  three backends accept identical token streams. Prompts come from `clear_prompts` with margin 0.1 under the
  reference (kernel/engine/prompts.py says why; the rounding of bf16 attention moves these logits by ~0.01).
"""

from __future__ import annotations

import random

import pytest
import torch

import kernel
from kernel.engine import Engine, EngineConfig
from kernel.engine.drafter import accept_path, tree_shape
from kernel.engine.graph import GraphRunner
from kernel.engine.prompts import clear_prompts
from kernel.reference import attention
from kernel.trees import tree_mask, yarn_sm_scale

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

GPU_BACKENDS = ["triton", "cuda"]
MARGIN = 0.1
CONFIG = dict(layers=3, heads=8, vocab=128, seed=1, max_context=1024, tree_nodes=16, tree_branching=3, max_batch=3)
PROMPT_LENGTHS = [300, 7, 1, 70]
NEW_TOKENS = 24


def backend_or_skip(name: str) -> None:
    if name == "cuda":
        try:
            import kernel.cuda_backend  # noqa: F401  (built on first use)
        except ImportError as err:
            pytest.skip(f"cuda backend not importable: {err}")


@pytest.fixture(scope="module")
def prompts() -> list[list[int]]:
    reference = Engine(EngineConfig(**CONFIG), backend="reference", device="cuda")
    return clear_prompts(reference, 4, PROMPT_LENGTHS, NEW_TOKENS, MARGIN, seed=11)


@pytest.fixture(scope="module")
def reference_run(prompts: list[list[int]]) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
    """Greedy tokens, speculative tokens and speculative accepted-path lengths of the reference backend."""
    engine = Engine(EngineConfig(**CONFIG), backend="reference", device="cuda")
    greedy = engine.generate(prompts, NEW_TOKENS, speculative=False)
    speculative = engine.generate(prompts, NEW_TOKENS, speculative=True)
    return greedy, speculative, [step.accepted for step in engine.steps]


# ----- the kernel's launch under capture -----


def _load_step(buffers: dict[str, torch.Tensor], lens: list[int], kind: str, pool_rows: int, seed: int) -> None:
    """Write one call's inputs into the static buffers in place: scattered slots, a fresh tree and fresh q."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    batch, nodes = buffers["tree_slots"].shape
    order = torch.randperm(pool_rows, generator=gen, device="cuda")[: sum(lens) + batch * nodes].to(torch.int32)
    buffers["prefix_indptr"].copy_(torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32))
    buffers["prefix_slots"][: sum(lens)] = order[: sum(lens)]
    buffers["tree_slots"].copy_(order[sum(lens) :].view(batch, nodes))
    rng = random.Random(seed)
    buffers["tree_mask"].copy_(torch.tensor([tree_mask(kind, nodes, rng) for _ in range(batch)], dtype=torch.int64))
    buffers["q"].copy_(torch.randn(buffers["q"].shape, generator=gen, device="cuda").to(torch.bfloat16))


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_kernel_capture_replays_across_prefix_lengths_and_trees(backend: str) -> None:
    backend_or_skip(backend)
    batch, heads, nodes, max_context = 3, 8, 16, 4096
    pool_rows = batch * (max_context + nodes) + 1000
    kv = torch.randn(pool_rows, 576, device="cuda").to(torch.bfloat16)
    buffers = {
        "q": torch.empty(batch, nodes, heads, 576, dtype=torch.bfloat16, device="cuda"),
        "prefix_indptr": torch.zeros(batch + 1, dtype=torch.int32, device="cuda"),
        "prefix_slots": torch.zeros(batch * max_context, dtype=torch.int32, device="cuda"),
        "tree_slots": torch.zeros(batch, nodes, dtype=torch.int32, device="cuda"),
        "tree_mask": torch.zeros(batch, nodes, dtype=torch.int64, device="cuda"),
    }
    scale = yarn_sm_scale()

    def call() -> torch.Tensor:
        return kernel.verify_attention(
            buffers["q"],
            kv,
            buffers["prefix_indptr"],
            buffers["prefix_slots"],
            buffers["tree_slots"],
            buffers["tree_mask"],
            scale,
            backend=backend,
        )

    _load_step(buffers, [100, 100, 100], "binary", pool_rows, seed=0)
    runner = GraphRunner(call)
    steps = [
        ([0, 1, 19], "chain"),
        ([4000, 5, 989], "random"),
        ([2048, 2048, 2048], "star"),
        ([1, 4096, 0], "binary"),
        ([31, 32, 33], "random"),
    ]
    for seed, (lens, kind) in enumerate(steps, start=1):
        _load_step(buffers, lens, kind, pool_rows, seed)
        replayed = runner.replay().clone()
        eager = call()
        assert torch.equal(replayed, eager), f"replay differs from eager at lengths {lens}, {kind} tree"
        args = (
            buffers["q"],
            kv,
            buffers["prefix_indptr"],
            buffers["prefix_slots"],
            buffers["tree_slots"],
            buffers["tree_mask"],
            scale,
        )
        ref, _ = attention(*args)
        low, _ = attention(*args, dtype=torch.bfloat16)
        err = (replayed.float() - ref).abs().max().item()
        bound = 2 * (low.float() - ref).abs().max().item() + 1e-3 * max(1.0, ref.abs().max().item())
        assert err <= bound, f"lengths {lens}, {kind} tree: max error {err:.3e} > {bound:.3e}"


# ----- a whole engine step under capture -----


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_graphed_step_is_bit_identical_to_eager_as_contexts_grow_and_trees_change(
    backend: str, prompts: list[list[int]]
) -> None:
    backend_or_skip(backend)
    engine = Engine(EngineConfig(**CONFIG), backend=backend, device="cuda", graphs=True)
    requests = engine_requests(engine, prompts[:3])
    nodes = CONFIG["tree_nodes"]
    for step_index, branching in enumerate([3, 1, 15, 2, 4, 1, 3]):  # chain, star, binary, ... all of T nodes
        shape = tree_shape(nodes, branching)
        trees = [engine._drafter(shape).propose(r.decided[-1]) for r in requests]
        slots = [engine.pool.allocator.alloc(nodes) for _ in requests]
        step = engine._inputs([len(r.slots) for r in requests], trees, slots, shape)
        eager = [t.clone() for t in engine.forward_step(step, graph=False)]
        graphed = [t.clone() for t in engine.forward_step(step, graph=True)]
        for name, a, b in zip(("logits", "choice", "margin"), eager, graphed, strict=True):
            assert torch.equal(a, b), f"step {step_index} (branching {branching}): {name} differs"
        choices = eager[1].tolist()
        for req, tokens, tree_slots, choice in zip(requests, trees, slots, choices, strict=True):
            path = accept_path(shape, tokens, choice)
            kept = [tree_slots[i] for i in path]
            engine.pool.allocator.free(s for i, s in enumerate(tree_slots) if i not in path)
            engine._extend_table(req, kept)
            req.decided += [tokens[i] for i in path[1:]] + [choice[path[-1]]]
    assert len(engine._graphs) == 1  # one capture served every step


def engine_requests(engine: Engine, prompts: list[list[int]]) -> list:
    from kernel.engine.engine import _Request

    requests = [_Request(row, list(p)) for row, p in enumerate(prompts)]
    for req in requests:
        engine._prefill(req)
    return requests


# ----- speculative == greedy, and the backends agree -----


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_speculative_emits_greedy_tokens_on_the_gpu(
    backend: str, graphs: bool, prompts: list[list[int]], reference_run: tuple
) -> None:
    backend_or_skip(backend)
    engine = Engine(EngineConfig(**CONFIG), backend=backend, device="cuda", graphs=graphs)
    greedy = engine.generate(prompts, NEW_TOKENS, speculative=False)
    speculative = engine.generate(prompts, NEW_TOKENS, speculative=True)
    assert speculative == greedy
    assert greedy == reference_run[0]
    engine.pool.allocator.check()
    assert engine.pool.allocator.used_count == 0


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graph"])
def test_backends_accept_identical_token_streams(graphs: bool, prompts: list[list[int]], reference_run: tuple) -> None:
    _, ref_tokens, ref_accepted = reference_run
    for backend in GPU_BACKENDS:
        backend_or_skip(backend)
        engine = Engine(EngineConfig(**CONFIG), backend=backend, device="cuda", graphs=graphs)
        assert engine.generate(prompts, NEW_TOKENS, speculative=True) == ref_tokens, backend
        assert [step.accepted for step in engine.steps] == ref_accepted, backend
    assert sum(a for step in ref_accepted for a in step) > len(ref_accepted)  # drafts were accepted
