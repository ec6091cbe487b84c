"""KV pool defragmentation on the CPU (`kernel/defrag/`): both tiers keep every request's rows, in order.

The property tests replay random allocate/free histories of the engine's own bookkeeping (requests start with a
prefix, verify steps allocate a tree and keep a random path through `commit_tree`, requests end), over a pool
whose rows are random numbers, then run Tier 0 on a random request and Tier 1 on the pool, and check after each:
every request's rows are the rows it had (same values, same order), its slot list is valid and owned, no slot
is owned twice or leaked, Tier 0's request is one run, Tier 1 leaves every request one run and the free space
one run at the end. A plan that fails, is dropped or has gone stale changes nothing.

The schedule (in which order rows can move in place) is checked on its own against an out-of-place copy, over
random partial permutations, cycles and shifted runs; its Triton launch runs under Triton's interpreter in a
child process (the interpreter must be on before `triton.jit` runs), as tests/kernel/test_engine_plan.py does.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel.defrag import (
    DefragError,
    apply,
    compact_engine,
    compact_pool,
    compact_request,
    fragmentation,
    plan_tier0,
    plan_tier1,
    runs,
)
from kernel.defrag.execute import move
from kernel.defrag.report import free_runs
from kernel.defrag.schedule import schedule
from kernel.engine.kv_pool import KVPool, commit_tree

ROOT = Path(__file__).resolve().parents[2]
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
LAYERS = 2


# ----- helpers -----


def random_pool(capacity: int, seed: int) -> KVPool:
    pool = KVPool(LAYERS, capacity, torch.device("cpu"))
    pool.kv.normal_(generator=torch.Generator().manual_seed(seed))
    return pool


def snapshot(pool: KVPool, lists: list[list[int]]) -> tuple[torch.Tensor, bytes, list[list[int]]]:
    return pool.kv.clone(), pool.allocator.owned_bytes(), [list(s) for s in lists]


def assert_untouched(pool: KVPool, lists: list[list[int]], snap: tuple) -> None:
    kv, owned, saved = snap
    assert torch.equal(pool.kv, kv), "a row changed"
    assert pool.allocator.owned_bytes() == owned, "the allocator changed"
    assert lists == saved, "a slot list changed"


def rows_of(pool: KVPool, lists: list[list[int]]) -> list[torch.Tensor]:
    return [pool.kv[:, s].clone() for s in lists]


def assert_consistent(pool: KVPool, lists: list[list[int]], rows: list[torch.Tensor]) -> None:
    pool.allocator.check()
    every = [s for slots in lists for s in slots]
    assert len(every) == len(set(every)), "a slot owned by two requests (or twice by one)"
    assert all(0 <= s < pool.allocator.capacity for s in every)
    owned = pool.allocator.owned_bytes()
    assert all(owned[s] for s in every), "a request holds a free slot"
    assert len(every) == pool.allocator.used_count, "owned slots and the requests disagree (leak)"
    for i, (slots, want) in enumerate(zip(lists, rows, strict=True)):
        assert torch.equal(pool.kv[:, slots], want), f"request {i}'s rows changed"


def history(data: st.DataObject, pool: KVPool) -> list[list[int]]:
    """A random history of the engine's bookkeeping; returns the live requests' slot lists."""
    allocator = pool.allocator
    scramble = allocator.alloc(data.draw(st.integers(0, allocator.capacity), label="scrambled"))
    random.Random(data.draw(st.integers(0, 2**16), label="order")).shuffle(scramble)
    allocator.free(scramble)  # the free list in random order: a pool that has served for a while
    requests: list[list[int]] = []
    for _ in range(data.draw(st.integers(1, 30), label="operations")):
        op = data.draw(st.sampled_from(["start", "step", "step", "end"]))
        if op == "start":
            n = data.draw(st.integers(0, 12), label="prefix")
            if n <= allocator.free_count:
                requests.append(allocator.alloc(n))
        elif op == "step" and requests:
            owned = data.draw(st.sampled_from(requests))
            nodes = data.draw(st.integers(1, 8), label="tree nodes")
            if nodes <= allocator.free_count:
                tree = allocator.alloc(nodes)
                path = data.draw(st.lists(st.integers(0, nodes - 1), unique=True, max_size=nodes), label="path")
                commit_tree(allocator, owned, tree, path)
        elif op == "end" and requests:
            allocator.free(requests.pop(data.draw(st.integers(0, len(requests) - 1), label="ending")))
    return requests


# ----- both tiers over random histories -----


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(capacity=st.integers(1, 96), min_wave=st.sampled_from([0, 1, 3, 10**6]), data=st.data())
def test_both_tiers_keep_every_request_s_rows_after_random_histories(
    capacity: int, min_wave: int, data: st.DataObject
) -> None:
    pool = random_pool(capacity, data.draw(st.integers(0, 2**16), label="seed"))
    lists = history(data, pool)
    rows = rows_of(pool, lists)
    if lists:
        index = data.draw(st.integers(0, len(lists) - 1), label="tier 0 request")
        snap = snapshot(pool, lists)
        try:
            plan = compact_request(pool.kv, pool.allocator, lists, index, min_wave=min_wave)
        except DefragError as err:
            assert "no run of" in str(err)
            assert_untouched(pool, lists, snap)
        else:
            assert plan.rows_moved <= len(lists[index])
            assert runs(lists[index]) == (1 if lists[index] else 0)
        assert_consistent(pool, lists, rows)
    compact_pool(pool.kv, pool.allocator, lists, min_wave=min_wave)
    assert_consistent(pool, lists, rows)
    report = fragmentation(pool.allocator.owned_mask(), lists)
    assert report.request_runs == tuple(1 if s else 0 for s in lists)
    live = sum(len(s) for s in lists)
    assert report.free_runs == (1 if live < capacity else 0)
    assert report.largest_free_run == capacity - live
    assert pool.allocator.owned_bytes() == bytes([1] * live + [0] * (capacity - live)), "free space not at the end"
    if live < capacity:
        assert pool.allocator.alloc(1) == [live]  # a request that grows next grows at the end of the live rows


@settings(max_examples=100, deadline=None)
@given(capacity=st.integers(1, 64), data=st.data())
def test_a_failed_or_dropped_plan_changes_nothing(capacity: int, data: st.DataObject) -> None:
    pool = random_pool(capacity, 7)
    lists = history(data, pool)
    snap = snapshot(pool, lists)
    owned = pool.allocator.owned_mask()
    if lists:
        try:
            plan_tier0(owned, lists, data.draw(st.integers(0, len(lists) - 1)))
        except DefragError:
            pass
    plan = plan_tier1(owned, lists)  # made and dropped: an interruption before execution
    assert_untouched(pool, lists, snap)
    stray = pool.allocator.alloc(1) if pool.allocator.free_count else []
    if stray:  # the pool changed under the plan: refused, nothing moves
        with pytest.raises(DefragError, match="stale plan: slots were allocated or freed"):
            apply(plan, pool.kv, pool.allocator, lists)
        pool.allocator.free(stray)
    assert_untouched(pool, lists, snap)
    if lists and lists[0]:
        lists[0].append(lists[0].pop(0))  # same slots, another order
        changed = lists[0][:]
        if len(lists[0]) > 1:
            with pytest.raises(DefragError, match="request 0's slot list changed"):
                apply(plan, pool.kv, pool.allocator, lists)
        assert lists[0] == changed and torch.equal(pool.kv, snap[0])


# ----- Tier 0 and Tier 1 by hand -----


def pool_with(capacity: int, lists: list[list[int]]) -> KVPool:
    pool = random_pool(capacity, 3)
    every = pool.allocator.alloc(capacity)
    pool.allocator.free([s for s in every if s not in {x for slots in lists for x in slots}])
    return pool


def test_tier0_picks_the_window_that_keeps_most_rows_in_place() -> None:
    lists = [[5, 6, 7, 20], [9]]
    pool = pool_with(32, lists)
    rows = rows_of(pool, lists)
    plan = compact_request(pool.kv, pool.allocator, lists, 0)
    assert lists[0] == [5, 6, 7, 8] and plan.rows_moved == 1
    assert plan.occupied.tolist() == [8] and plan.vacated.tolist() == [20]
    assert_consistent(pool, lists, rows)


def test_tier0_uses_the_request_s_own_slots_in_any_order() -> None:
    lists = [[3, 2, 1, 0], [4]]  # reversed: a swap cycle (0 <-> 3) and another (1 <-> 2), nothing else free
    pool = pool_with(5, lists)
    rows = rows_of(pool, lists)
    plan = compact_request(pool.kv, pool.allocator, lists, 0)
    assert lists[0] == [0, 1, 2, 3] and plan.rows_moved == 4 and plan.moves.staged == 4
    assert_consistent(pool, lists, rows)


def test_a_compact_request_moves_nothing() -> None:
    lists = [[4, 5, 6], [0, 2]]
    pool = pool_with(8, lists)
    plan = compact_request(pool.kv, pool.allocator, lists, 0)
    assert plan.rows_moved == 0 and lists[0] == [4, 5, 6]


def test_tier0_without_a_window_refuses_and_changes_nothing() -> None:
    lists = [[0, 2, 4], [1, 3]]
    pool = pool_with(6, lists)
    snap = snapshot(pool, lists)
    with pytest.raises(
        DefragError, match=r"no run of 3 slots is free of other requests' rows in a pool of 6 \(the longest is 2\)"
    ):
        compact_request(pool.kv, pool.allocator, lists, 0)
    assert_untouched(pool, lists, snap)


def test_tier1_orders_requests_by_their_first_slot() -> None:
    lists = [[10, 3], [1, 0], [], [7]]
    pool = pool_with(12, lists)
    rows = rows_of(pool, lists)
    compact_pool(pool.kv, pool.allocator, lists)
    assert lists == [[3, 4], [0, 1], [], [2]]
    assert_consistent(pool, lists, rows)


def test_a_shifted_request_overlapping_itself_moves_correctly() -> None:
    # Request 0 sits one slot right of where Tier 1 puts it: a chain of 300 moves, each onto the next one's source.
    lists = [list(range(1, 301))]
    pool = pool_with(301, lists)
    rows = rows_of(pool, lists)
    plan = compact_pool(pool.kv, pool.allocator, lists, min_wave=1)
    assert lists == [list(range(300))] and plan.moves.waves == 64 and plan.moves.staged == 300 - 64
    assert_consistent(pool, lists, rows)


@pytest.mark.parametrize(
    ("lists", "index", "message"),
    [
        ([[0, 0]], 0, r"slot 0 is named twice \(requests \[0\]\)"),
        ([[0, 1], [1]], 0, r"slot 1 is named twice \(requests \[0, 1\]\)"),
        ([[0, 9]], 0, r"requests\[0\]: slot 9 is outside the pool \[0, 8\)"),
        ([[0, -1]], 0, r"requests\[0\]: slot -1 is outside the pool"),
        ([[0, 5]], 0, r"requests\[0\]: slot 5 is not owned"),
        ([[0]], 1, r"index: expected a request in \[0, 1\), got 1"),
        ([[[0]]], 0, r"requests\[0\]: expected a 1-D list of integer slots"),
    ],
)
def test_bad_requests_are_refused_before_anything_moves(lists: list, index: int, message: str) -> None:
    pool = pool_with(8, [[0, 1]])
    snap = snapshot(pool, [[0, 1]])
    owned = pool.allocator.owned_mask()
    with pytest.raises(DefragError, match=message):
        plan_tier0(owned, lists, index)
    if index == 0 and "index" not in message:
        with pytest.raises(DefragError, match=message):
            plan_tier1(owned, lists)
    assert_untouched(pool, [[0, 1]], snap)


def test_tier1_refuses_an_owned_slot_no_request_holds() -> None:
    pool = pool_with(8, [[0, 5], [3]])
    with pytest.raises(DefragError, match="slot 3 is owned but in no request given"):
        plan_tier1(pool.allocator.owned_mask(), [[0, 5]])


def test_slot_lists_and_tables_are_rewritten_in_place() -> None:
    lists = [[7, 1, 4], [2]]
    pool = pool_with(9, lists)
    table = torch.full((2, 6), -1, dtype=torch.int32)
    for row, slots in enumerate(lists):
        table[row, : len(slots)] = torch.tensor(slots)
    tensor_list = torch.tensor(lists[1])
    ids, pointer = [id(s) for s in lists], table.data_ptr()
    compact_pool(pool.kv, pool.allocator, [lists[0], tensor_list], [table[0], table[1]])
    assert [id(s) for s in lists] == ids and table.data_ptr() == pointer
    assert lists[0] == [1, 2, 3] and tensor_list.tolist() == [0]
    assert table.tolist() == [[1, 2, 3, -1, -1, -1], [0, -1, -1, -1, -1, -1]]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (torch.zeros(2, dtype=torch.int32), r"tables\[0\]: expected a 1-D integer row of at least 3 entries"),
        (torch.zeros(3, dtype=torch.float32), r"tables\[0\]: expected a 1-D integer row"),
        (torch.zeros(1, 4, dtype=torch.int32), r"tables\[0\]: expected a 1-D integer row"),
    ],
)
def test_a_table_that_cannot_take_the_slots_is_refused_before_anything_moves(table: torch.Tensor, message: str) -> None:
    lists = [[7, 1, 4]]
    pool = pool_with(9, lists)
    snap = snapshot(pool, lists)
    plan = plan_tier1(pool.allocator.owned_mask(), lists)
    with pytest.raises(DefragError, match=message):
        apply(plan, pool.kv, pool.allocator, lists, [table])
    assert_untouched(pool, lists, snap)
    with pytest.raises(DefragError, match=r"tables: expected none or one per request \(1\), got 2"):
        apply(plan, pool.kv, pool.allocator, lists, [torch.zeros(9, dtype=torch.int32)] * 2)
    assert_untouched(pool, lists, snap)


def test_reassign_refuses_what_it_cannot_do_and_changes_nothing() -> None:
    pool = pool_with(6, [[0, 1]])
    before = (pool.allocator.owned_bytes(), pool.allocator.free_count)
    for occupied, vacated, message in (
        ([1], [], "slot 1 is not free"),
        ([], [4], "slot 4 is not owned"),
        ([2, 2], [], "named twice"),
        ([6], [], "slot 6 is not free"),
    ):
        with pytest.raises(ValueError, match=message):
            pool.allocator.reassign(occupied, vacated)
        assert (pool.allocator.owned_bytes(), pool.allocator.free_count) == before


# ----- the report -----


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), st.lists(st.integers(-3, 40), max_size=30))
def test_the_report_counts_runs_as_a_loop_would(owned: list[bool], slots: list[int]) -> None:
    free = [not o for o in owned]
    lengths, current = [], 0
    for f in [*free, False]:
        if f:
            current += 1
        elif current:
            lengths.append(current)
            current = 0
    assert free_runs(torch.tensor(owned)) == (sum(free), len(lengths), max(lengths, default=0))
    expected = sum(1 for i, s in enumerate(slots) if i == 0 or s != slots[i - 1] + 1)
    assert runs(slots) == expected
    report = fragmentation(torch.tensor(owned), [slots, []])
    assert report.request_runs == (expected, 0) and report.request_lengths == (len(slots), 0)
    assert report.compact == (expected <= 1 and len(lengths) <= 1)


# ----- the schedule -----


@st.composite
def partial_permutations(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    capacity = draw(st.integers(1, 80))
    moves = draw(st.integers(0, capacity))
    src = draw(st.permutations(range(capacity)))[:moves]
    dst = draw(st.permutations(range(capacity)))[:moves]
    pairs = [(s, d) for s, d in zip(src, dst, strict=True) if s != d]
    return capacity, [s for s, _ in pairs], [d for _, d in pairs]


def out_of_place(kv: torch.Tensor, src: list[int], dst: list[int]) -> torch.Tensor:
    want = kv.clone()
    want[:, dst] = kv[:, src]
    return want


@settings(max_examples=300, deadline=None)
@given(case=partial_permutations(), min_wave=st.sampled_from([0, 1, 2, 5, 10**6]), max_waves=st.integers(1, 8))
def test_a_schedule_moves_rows_in_place_as_an_out_of_place_copy_would(
    case: tuple[int, list[int], list[int]], min_wave: int, max_waves: int
) -> None:
    capacity, src, dst = case
    moves = schedule(
        torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64), capacity, min_wave, max_waves
    )
    assert sorted(zip(moves.src.tolist(), moves.dst.tolist(), strict=True)) == sorted(zip(src, dst, strict=True))
    assert moves.waves <= max_waves
    for w in range(moves.waves):  # no wave writes a row that it or anything after it still has to read
        later = set(moves.src[moves.bounds[w] :].tolist())
        assert not later & set(moves.dst[moves.bounds[w] : moves.bounds[w + 1]].tolist())
    kv = torch.randn(LAYERS, capacity, 576, generator=torch.Generator().manual_seed(capacity)).to(torch.bfloat16)
    want = out_of_place(kv, src, dst)
    move(kv, moves)
    assert torch.equal(kv, want)


def test_a_cycle_is_staged_and_chains_run_as_waves() -> None:
    # 0 -> 1 -> 2 -> 0 is a cycle; 5 -> 6 -> 7 -> 8 (8 free) is a chain of heights 2, 1, 0.
    moves = schedule(torch.tensor([0, 1, 2, 5, 6, 7]), torch.tensor([1, 2, 0, 6, 7, 8]), 9, min_wave=1)
    assert moves.bounds == (0, 1, 2, 3) and moves.staged == 3
    assert moves.src.tolist() == [7, 6, 5, 0, 1, 2]
    assert schedule(torch.tensor([5, 6, 7]), torch.tensor([6, 7, 8]), 9, min_wave=2).bounds == (0,)  # waves of 1


# ----- an engine across a defrag (reference backend) -----


def test_an_engine_emits_the_same_tokens_across_defrags_on_the_cpu() -> None:
    from kernel.engine import Engine, EngineConfig

    config = EngineConfig(layers=2, heads=2, vocab=64, seed=3, max_context=160, tree_nodes=8, max_batch=3)
    prompts = [[random.Random(p).randrange(64) for _ in range(n)] for p, n in enumerate((40, 9, 70))]
    plain = Engine(config, backend="reference", device="cpu")
    want = plain.generate(prompts, 24)

    engine = Engine(config, backend="reference", device="cpu")
    scramble = engine.pool.allocator.alloc(engine.pool.allocator.capacity)
    random.Random(0).shuffle(scramble)
    engine.pool.allocator.free(scramble)
    done: list[tuple[int, int]] = []

    def defrag(engine: Engine, requests: list) -> None:
        step = len(engine.steps)
        tier, index = (1, 0) if step % 3 == 0 else (0, step % len(requests))
        try:
            plan = compact_engine(engine, requests, tier, index)
        except DefragError:
            return
        done.append((tier, plan.rows_moved))
        table = engine.req_to_token
        for r in requests:
            assert table[r.row, : len(r.slots)].tolist() == r.slots

    engine.between_steps = defrag
    assert engine.generate(prompts, 24) == want
    assert engine.margins == plain.margins
    assert {t for t, moved in done if moved} == {0, 1}, done  # both tiers ran and moved rows
    engine.pool.allocator.check()
    assert engine.pool.allocator.used_count == 0


def test_the_engine_hook_refuses_a_request_with_a_step_in_flight() -> None:
    from kernel.engine import Engine, EngineConfig
    from kernel.engine.engine import _Request

    engine = Engine(EngineConfig(max_batch=1), backend="reference", device="cpu")
    request = _Request(0, [1, 2], slots=engine.pool.allocator.alloc(2), pending=engine.pool.allocator.alloc(1))
    with pytest.raises(DefragError, match=r"requests \[0\] have a step in flight"):
        compact_engine(engine, [request], 1)
    with pytest.raises(DefragError, match="tier: expected 0 or 1, got 2"):
        compact_engine(engine, [request], 2)


# ----- the Triton launch under the interpreter -----


@pytest.mark.interpreted
@pytest.mark.skipif(not INTERPRETED, reason="runs in a child with TRITON_INTERPRET=1 (the test after it)")
@settings(max_examples=40, deadline=None)
@given(case=partial_permutations(), min_wave=st.sampled_from([0, 2, 10**6]), layers=st.integers(1, 3))
def test_the_move_kernel_runs_a_schedule_as_an_out_of_place_copy_would(
    case: tuple[int, list[int], list[int]], min_wave: int, layers: int
) -> None:
    from kernel.defrag.move_kernel import move_rows

    capacity, src, dst = case
    wide = torch.randn(layers, capacity + 1, 576, generator=torch.Generator().manual_seed(capacity)).to(torch.bfloat16)
    kv = wide[:, 1:]  # a layer stride that is not rows x 576: the kernel takes it
    guard = wide[:, 0].clone()
    want = out_of_place(kv, src, dst)
    move(
        kv,
        schedule(torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64), capacity, min_wave),
        move_rows,
    )
    assert torch.equal(kv, want) and torch.equal(wide[:, 0], guard)


@pytest.mark.skipif(INTERPRETED, reason="TRITON_INTERPRET=1 is on here: the property runs in this process")
def test_the_move_kernel_under_the_triton_interpreter() -> None:
    here = Path(__file__).relative_to(ROOT)
    test = f"{here}::test_the_move_kernel_runs_a_schedule_as_an_out_of_place_copy_would"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]
