"""KV pool defragmentation on the GPU (marker `gpu`; skipped cleanly without CUDA): outputs bit for bit the same.

- Verify attention's outputs (every layer, `triton` and `cuda`, the GPU suite's (B, H, T) shapes) are bit for bit
  those before a Tier 0 and then a Tier 1 compaction, called eagerly and replayed from a CUDA graph captured on
  the fragmented pool (its slot buffers rewritten in place).
- An engine mid-generation emits the same tokens and margins with a defragmentation before every step (Tier 1
  and Tier 0 in turn) as without, eager and graphed, on a pool whose free list was shuffled first.
- The Triton move launch runs a schedule (waves, staged cycles) as an out-of-place copy would, on a pool whose
  layers are not adjacent.
"""

from __future__ import annotations

import random

import pytest
import torch

import kernel
from kernel.defrag import (
    DefragError,
    compact_engine,
    compact_pool,
    compact_request,
    fragmentation,
)
from kernel.defrag.execute import move
from kernel.defrag.schedule import schedule
from kernel.engine import Engine, EngineConfig
from kernel.engine.graph import GraphRunner
from kernel.engine.kv_pool import KVPool
from kernel.trees import tree_mask, yarn_sm_scale

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

GPU_BACKENDS = ["triton", "cuda"]
SHAPES = [(1, 8, 16), (1, 8, 64), (1, 16, 32), (4, 8, 16), (1, 64, 8)]  # (B, H, T): the GPU suite's and the bench's
PREFIXES = [2900, 111, 989, 19]
LAYERS = 2


def backend_or_skip(name: str) -> None:
    if name == "cuda":
        try:
            import kernel.cuda_backend  # noqa: F401  (built on first use)
        except ImportError as err:
            pytest.skip(f"cuda backend not importable: {err}")


def fragmented_pool(batch: int, nodes: int, seed: int) -> tuple[KVPool, list[list[int]], list[list[int]]]:
    """Request 0's prefix scattered, in random order, over a region at density 2/3; the other prefixes and every
    tree scattered over half of the rest. Returns the pool, the prefixes' and the trees' slot lists."""
    gen = torch.Generator().manual_seed(seed)
    lens = PREFIXES[:batch] if batch > 1 else [3000]
    region = lens[0] * 3 // 2
    rest = sum(lens[1:]) + batch * nodes
    capacity = region + 2 * rest + 7
    pool = KVPool(LAYERS, capacity, torch.device("cuda"))
    pool.kv.normal_(generator=torch.Generator(device="cuda").manual_seed(seed))
    mine = torch.randperm(region, generator=gen)[: lens[0]].tolist()
    theirs = (torch.randperm(capacity - region, generator=gen)[:rest] + region).tolist()
    prefixes, trees, pos = [mine], [], 0
    for length in lens[1:]:
        prefixes.append(theirs[pos : pos + length])
        pos += length
    for _ in range(batch):
        trees.append(theirs[pos : pos + nodes])
        pos += nodes
    every = set(mine) | set(theirs)
    pool.allocator.free([s for s in pool.allocator.alloc(capacity) if s not in every])
    return pool, prefixes, trees


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}H{}T{}".format(*s))
@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_verify_outputs_are_bit_identical_across_tier0_and_tier1(backend: str, shape: tuple[int, int, int]) -> None:
    backend_or_skip(backend)
    batch, heads, nodes = shape
    pool, prefixes, trees = fragmented_pool(batch, nodes, seed=sum(shape))
    gen = torch.Generator(device="cuda").manual_seed(batch * heads + nodes)
    q = torch.randn(LAYERS, batch, nodes, heads, 576, generator=gen, device="cuda").to(torch.bfloat16)
    rng = random.Random(nodes)
    mask = torch.tensor([tree_mask("random", nodes, rng) for _ in range(batch)], dtype=torch.int64, device="cuda")
    lens = [len(p) for p in prefixes]
    indptr = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    prefix_slots = torch.tensor([s for p in prefixes for s in p], dtype=torch.int32, device="cuda")
    tree_slots = torch.tensor(trees, dtype=torch.int32, device="cuda")
    scale = yarn_sm_scale()

    def outputs() -> list[torch.Tensor]:
        return [
            kernel.verify_attention(
                q[layer], pool.layer(layer), indptr, prefix_slots, tree_slots, mask, scale, backend=backend
            )
            for layer in range(LAYERS)
        ]

    want = [o.clone() for o in outputs()]
    graph = GraphRunner(outputs)  # captured on the fragmented pool; replays read the buffers as they are then
    lists = [*prefixes, *trees]

    def rewrite_slot_buffers() -> None:
        prefix_slots.copy_(torch.tensor([s for p in lists[:batch] for s in p], dtype=torch.int32))
        tree_slots.copy_(torch.tensor(lists[batch:], dtype=torch.int32))

    plan = compact_request(pool.kv, pool.allocator, lists, 0)
    assert plan.rows_moved > 0 and fragmentation(pool.allocator.owned_mask(), lists).request_runs[0] == 1
    rewrite_slot_buffers()
    for name, got in (("eager", outputs()), ("replayed", graph.replay())):
        for layer in range(LAYERS):
            assert torch.equal(got[layer], want[layer]), f"tier 0: layer {layer}'s {name} output changed"
    plan = compact_pool(pool.kv, pool.allocator, lists)
    assert plan.rows_moved > 0 and fragmentation(pool.allocator.owned_mask(), lists).compact
    rewrite_slot_buffers()
    for name, got in (("eager", outputs()), ("replayed", graph.replay())):
        for layer in range(LAYERS):
            assert torch.equal(got[layer], want[layer]), f"tier 1: layer {layer}'s {name} output changed"
    pool.allocator.check()


CONFIG = dict(layers=3, heads=8, vocab=128, seed=1, max_context=1024, tree_nodes=16, tree_branching=3, max_batch=3)
NEW_TOKENS = 24


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_an_engine_emits_the_same_tokens_across_defrags(backend: str, graphs: bool) -> None:
    backend_or_skip(backend)
    rng = random.Random(5)
    prompts = [[rng.randrange(CONFIG["vocab"]) for _ in range(n)] for n in (300, 7, 70)]
    plain = Engine(EngineConfig(**CONFIG), backend=backend, device="cuda", graphs=graphs)
    want = plain.generate(prompts, NEW_TOKENS)

    engine = Engine(EngineConfig(**CONFIG), backend=backend, device="cuda", graphs=graphs)
    scramble = engine.pool.allocator.alloc(engine.pool.allocator.capacity)
    random.Random(1).shuffle(scramble)
    engine.pool.allocator.free(scramble)
    moved: list[tuple[int, int]] = []

    def defrag(engine: Engine, requests: list) -> None:
        step = len(engine.steps)
        tier, index = (1, 0) if step % 3 == 0 else (0, step % len(requests))
        try:
            moved.append((tier, compact_engine(engine, requests, tier, index).rows_moved))
        except DefragError:  # tier 0 finds no window free of the other requests' rows
            pass

    engine.between_steps = defrag
    assert engine.generate(prompts, NEW_TOKENS) == want
    assert engine.margins == plain.margins  # every logit gap the same: the outputs were bit for bit the same
    assert {tier for tier, rows in moved if rows} == {0, 1}, moved
    assert len(engine._graphs) == (1 if graphs else 0)  # one capture served the steps before and after
    engine.pool.allocator.check()
    assert engine.pool.allocator.used_count == 0


@pytest.mark.parametrize("min_wave", [0, 64, 10**9])
def test_the_move_kernel_runs_a_schedule_on_the_gpu(min_wave: int) -> None:
    capacity, moves = 50_000, 30_000
    gen = torch.Generator().manual_seed(min_wave % 97)
    src = torch.randperm(capacity, generator=gen)[:moves]
    dst = torch.randperm(capacity, generator=gen)[:moves]
    keep = src != dst
    src, dst = src[keep], dst[keep]
    wide = torch.randn(3, capacity + 5, 576, device="cuda").to(torch.bfloat16)
    kv = wide[:, 5:]
    guard = wide[:, :5].clone()
    want = kv.clone()
    want[:, dst.cuda()] = kv[:, src.cuda()]
    plan = schedule(src.cuda(), dst.cuda(), capacity, min_wave)
    assert plan.staged > 0 if min_wave else plan.waves > 1
    move(kv, plan)
    assert torch.equal(kv, want) and torch.equal(wide[:, :5], guard)
