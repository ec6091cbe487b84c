"""The KV pool's slot allocator: no slot is ever owned twice and none leaks, whatever the accept/reject history.

The property test replays random histories of the engine's own bookkeeping (requests start with a prefix,
verify steps allocate a tree and keep a random accepted path via `commit_tree`, requests end and free
everything, hostile frees and over-allocations are refused without a change) and checks the partition of
slot ids after every operation.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.engine.kv_pool import KVPool, PoolExhausted, SlotAllocator, commit_tree


def owned_partition_holds(allocator: SlotAllocator, requests: dict[int, list[int]]) -> None:
    allocator.check()
    owned = [s for slots in requests.values() for s in slots]
    assert len(owned) == len(set(owned)), "a slot owned by two requests (or twice by one)"
    assert len(owned) == allocator.used_count, "owned slots and the allocator disagree (leak)"


def snapshot(allocator: SlotAllocator) -> tuple[list[int], bytes]:
    return list(allocator._free), bytes(allocator._owned)


@settings(max_examples=300, deadline=None)
@given(capacity=st.integers(1, 96), data=st.data())
def test_random_accept_reject_histories_never_leak_or_double_free(capacity: int, data: st.DataObject) -> None:
    allocator = SlotAllocator(capacity)
    requests: dict[int, list[int]] = {}
    next_id = 0
    for _ in range(data.draw(st.integers(1, 40), label="operations")):
        op = data.draw(st.sampled_from(["start", "step", "end", "bad_free", "too_many"]))
        if op == "start":
            n = data.draw(st.integers(0, 12), label="prefix")
            if n <= allocator.free_count:
                requests[next_id] = allocator.alloc(n)
                next_id += 1
        elif op == "step" and requests:
            rid = data.draw(st.sampled_from(sorted(requests)))
            nodes = data.draw(st.integers(1, 8), label="tree nodes")
            if nodes <= allocator.free_count:
                tree = allocator.alloc(nodes)
                path = data.draw(st.lists(st.integers(0, nodes - 1), unique=True, max_size=nodes), label="path")
                kept = commit_tree(allocator, requests[rid], tree, path)
                assert kept == [tree[i] for i in path]
        elif op == "end" and requests:
            rid = data.draw(st.sampled_from(sorted(requests)))
            allocator.free(requests.pop(rid))
        elif op == "bad_free":
            owned = [s for slots in requests.values() for s in slots]
            free = sorted(set(range(capacity)) - set(owned))
            choices = [[s] for s in free] + [[s, s] for s in owned] + [[-1], [capacity]]
            bad = data.draw(st.sampled_from(choices), label="bad free")
            before = snapshot(allocator)
            with pytest.raises(ValueError, match="is not owned"):
                allocator.free(bad)
            assert snapshot(allocator) == before
        elif op == "too_many":
            before = snapshot(allocator)
            with pytest.raises(PoolExhausted, match="slots requested"):
                allocator.alloc(allocator.free_count + data.draw(st.integers(1, 5)))
            assert snapshot(allocator) == before
        owned_partition_holds(allocator, requests)
    for rid in list(requests):
        allocator.free(requests.pop(rid))
    owned_partition_holds(allocator, requests)
    assert allocator.free_count == capacity


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(capacity=st.integers(1, 96), data=st.data())
def test_random_histories_deep(capacity: int, data: st.DataObject) -> None:
    test_random_accept_reject_histories_never_leak_or_double_free.hypothesis.inner_test(capacity, data)


def test_rejected_tree_slots_return_to_the_free_list() -> None:
    allocator = SlotAllocator(10)
    owned = allocator.alloc(3)
    tree = allocator.alloc(4)
    assert commit_tree(allocator, owned, tree, [0, 2]) == [tree[0], tree[2]]
    assert owned[3:] == [tree[0], tree[2]] and allocator.used_count == 5
    assert allocator.alloc(2) == [tree[3], tree[1]]  # the freed ones come back first (LIFO)


def test_commit_refuses_a_path_naming_a_node_twice() -> None:
    allocator = SlotAllocator(4)
    with pytest.raises(ValueError, match="distinct node indices"):
        commit_tree(allocator, [], allocator.alloc(3), [0, 0])


def test_pool_geometry() -> None:
    import torch

    pool = KVPool(layers=3, rows=5, device=torch.device("cpu"))
    assert pool.bytes_per_token == 3 * 1152
    assert pool.layer(1).shape == (5, 576) and pool.layer(1).is_contiguous()
    with pytest.raises(ValueError, match="capacity: expected >= 1"):
        SlotAllocator(0)
