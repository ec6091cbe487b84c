"""One plan per step: the metadata `StepPlan.compute` derives on the device equals the host's arithmetic, and
it lives in buffers that never move or change size (what a captured step replays against)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.engine.model import rope_table
from kernel.engine.plan import StepPlan


@settings(max_examples=60, deadline=None)
@given(batch=st.integers(1, 5), nodes=st.integers(1, 9), max_context=st.integers(10, 40), seed=st.integers(0, 2**16),
       steps=st.integers(1, 3))
def test_plan_matches_the_host_computation(batch: int, nodes: int, max_context: int, seed: int, steps: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    table = torch.randint(0, 10_000, (batch + 1, max_context), generator=gen, dtype=torch.int32)
    plan = StepPlan(table, batch, nodes, rope_table(max_context, torch.device("cpu")))
    pointers = [t.data_ptr() for t in (plan.prefix_indptr, plan.prefix_slots, plan.write_index, plan.positions,
                                       plan.rope)]
    for _ in range(steps):  # lengths change between steps; the buffers stay put
        lens = torch.randint(0, max_context - nodes + 1, (batch,), generator=gen, dtype=torch.int32)
        slots = torch.randint(0, 10_000, (batch, nodes), generator=gen, dtype=torch.int32)
        depths = torch.randint(0, nodes, (batch, nodes), generator=gen)
        plan.load(lens, torch.zeros(batch, nodes, dtype=torch.int64), slots, torch.ones(batch, nodes, dtype=torch.int64),
                  depths)
        plan.compute()
        indptr = [0] + torch.cumsum(lens, 0).tolist()
        assert plan.prefix_indptr.tolist() == indptr
        packed = [s for b in range(batch) for s in table[b, :int(lens[b])].tolist()]
        assert plan.prefix_slots[:indptr[-1]].tolist() == packed
        assert plan.prefix_slots.numel() == batch * max_context  # fixed: the cuda launch's split count too
        assert plan.write_index.tolist() == slots.view(-1).tolist()
        positions = lens[:, None].long() + depths
        assert torch.equal(plan.positions, positions)
        assert torch.equal(plan.rope, rope_table(max_context, torch.device("cpu"))[positions])
    assert pointers == [t.data_ptr() for t in (plan.prefix_indptr, plan.prefix_slots, plan.write_index,
                                               plan.positions, plan.rope)]


def test_a_single_request_attends_its_table_row_in_place() -> None:
    table = torch.arange(30, dtype=torch.int32).view(3, 10)
    plan = StepPlan(table[1:], 1, 4, None)
    assert plan.prefix_slots.data_ptr() == table[1].data_ptr()  # no packing, no copy for batch 1
