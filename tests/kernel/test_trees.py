"""The input generators: tree masks are ancestor-closed, slots are valid and laid out as asked."""

from __future__ import annotations

import random

import pytest
import torch

from kernel.trees import TREE_KINDS, make_inputs, mask_from_parents, tree_mask, tree_parents, yarn_sm_scale


def unsigned(bits: int) -> int:
    return bits & ((1 << 64) - 1)


@pytest.mark.parametrize("kind", TREE_KINDS)
@pytest.mark.parametrize("nodes", [1, 7, 16, 64])
def test_masks_are_ancestor_closed(kind: str, nodes: int) -> None:
    parents = tree_parents(kind, nodes, random.Random(nodes))
    rows = [unsigned(r) for r in mask_from_parents(parents)]
    for i, row in enumerate(rows):
        assert row >> i & 1, f"node {i} must see itself"
        assert row >> nodes == 0
        expected = 1 << i
        p = parents[i]
        while p >= 0:
            expected |= 1 << p
            p = parents[p]
        assert row == expected


def test_shapes_of_named_trees() -> None:
    assert [unsigned(r) for r in tree_mask("chain", 4)] == [0b1, 0b11, 0b111, 0b1111]
    assert [unsigned(r) for r in tree_mask("star", 4)] == [0b1, 0b11, 0b101, 0b1001]
    assert [unsigned(r) for r in tree_mask("binary", 5)] == [0b1, 0b11, 0b101, 0b1011, 0b10011]


def test_bit_63_is_stored_as_negative_int64() -> None:
    last = tree_mask("chain", 64)[-1]
    assert last == -1  # all 64 bits set
    assert torch.tensor([last], dtype=torch.int64).item() == -1


def test_bad_tree_arguments() -> None:
    with pytest.raises(ValueError, match=r"nodes: expected 1\.\.64, got 65"):
        tree_parents("chain", 65)
    with pytest.raises(ValueError, match="kind: expected one of"):
        tree_parents("ring", 4)
    with pytest.raises(ValueError, match=r"parents\[1\]: expected < 1"):
        mask_from_parents([-1, 1])


@pytest.mark.parametrize("layout", ["scattered", "contiguous"])
def test_make_inputs_slots(layout: str) -> None:
    x = make_inputs(3, 2, 5, [4, 0, 9], tree="random", slots=layout, seed=11)
    assert x.q.shape == (3, 5, 2, 576) and x.q.dtype == torch.bfloat16
    assert x.prefix_indptr.tolist() == [0, 4, 4, 13]
    assert x.prefix_lens == [4, 0, 9]
    every = torch.cat([x.prefix_slots, x.tree_slots.reshape(-1)])
    assert every.unique().numel() == every.numel(), "slots must be distinct rows"
    assert int(every.min()) >= 0 and int(every.max()) < x.kv_cache.shape[0]
    if layout == "contiguous":
        run = torch.cat([x.prefix_slots[:4], x.tree_slots[0], x.tree_slots[1], x.prefix_slots[4:], x.tree_slots[2]])
        assert torch.equal(run, torch.arange(int(run[0]), int(run[0]) + run.numel(), dtype=torch.int32))
    assert abs(x.sm_scale - 0.135234) < 1e-6


def test_yarn_scale_matches_kernel_doc() -> None:
    assert round(yarn_sm_scale(32), 6) == 0.130861
    assert round(yarn_sm_scale(64), 6) == 0.144680
