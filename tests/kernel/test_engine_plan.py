"""One plan per step: the metadata `StepPlan.compute` derives on the device equals the host's arithmetic, and
it lives in buffers that never move or change size (what a captured step replays against).

The batch > 1 plan on CUDA is one Triton launch (`kernel/engine/plan_kernel.py`); on a CPU it runs under
Triton's interpreter, which must be on before `triton.jit` decorates the kernel (and the `tl` functions it
calls), so that property runs in a child pytest with TRITON_INTERPRET=1. On a GPU the CUDA plan, eager and
replayed from a graph, equals the CPU plan bit for bit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.engine.model import rope_table
from kernel.engine.plan import StepPlan

ROOT = Path(__file__).resolve().parents[2]
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 5),
    nodes=st.integers(1, 9),
    max_context=st.integers(10, 40),
    seed=st.integers(0, 2**16),
    steps=st.integers(1, 3),
)
def test_plan_matches_the_host_computation(batch: int, nodes: int, max_context: int, seed: int, steps: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    table = torch.randint(0, 10_000, (batch + 1, max_context), generator=gen, dtype=torch.int32)
    plan = StepPlan(table, batch, nodes, rope_table(max_context, torch.device("cpu")))
    pointers = [
        t.data_ptr() for t in (plan.prefix_indptr, plan.prefix_slots, plan.write_index, plan.positions, plan.rope)
    ]
    for _ in range(steps):  # lengths change between steps; the buffers stay put
        lens = torch.randint(0, max_context - nodes + 1, (batch,), generator=gen, dtype=torch.int32)
        slots = torch.randint(0, 10_000, (batch, nodes), generator=gen, dtype=torch.int32)
        depths = torch.randint(0, nodes, (batch, nodes), generator=gen)
        plan.load(
            lens,
            torch.zeros(batch, nodes, dtype=torch.int64),
            slots,
            torch.ones(batch, nodes, dtype=torch.int64),
            depths,
        )
        plan.compute()
        indptr = [0, *torch.cumsum(lens, 0).tolist()]
        assert plan.prefix_indptr.tolist() == indptr
        packed = [s for b in range(batch) for s in table[b, : int(lens[b])].tolist()]
        assert plan.prefix_slots[: indptr[-1]].tolist() == packed
        assert plan.prefix_slots.numel() == batch * max_context  # fixed: the cuda launch's split count too
        assert plan.write_index.tolist() == slots.view(-1).tolist()
        positions = lens[:, None].long() + depths
        assert torch.equal(plan.positions, positions)
        assert torch.equal(plan.rope, rope_table(max_context, torch.device("cpu"))[positions])
    assert pointers == [
        t.data_ptr() for t in (plan.prefix_indptr, plan.prefix_slots, plan.write_index, plan.positions, plan.rope)
    ]


def test_a_single_request_attends_its_table_row_in_place() -> None:
    table = torch.arange(30, dtype=torch.int32).view(3, 10)
    plan = StepPlan(table[1:], 1, 4, None)
    assert plan.prefix_slots.data_ptr() == table[1].data_ptr()  # no packing, no copy for batch 1


def test_the_plan_counts_its_own_buffers_once() -> None:
    table = torch.zeros(4, 50, dtype=torch.int32)
    rope = rope_table(50, torch.device("cpu"))
    plan = StepPlan(table[1:], 3, 5, rope)
    inputs = 3 * 4 + 3 * 15 * 8 + 15 * 4  # seq_lens; tokens, mask, depth (int64); slots (int32)
    derived = 4 * 4 + 15 * 8 + 15 * 8 + 15 * 64 * 4  # prefix_indptr, write_index, positions, rope
    scratch = (3 * 50 + 1) * 4 + 50 * 8 + 3 * 50 * 8 + 3 * 50  # packed slots, columns, destinations, mask
    assert plan.nbytes() == inputs + derived + scratch
    single = StepPlan(table[1:], 1, 5, rope)  # prefix_slots is the engine's table row: not the plan's
    assert single.nbytes() == 4 + 3 * 5 * 8 + 5 * 4 + 2 * 4 + 5 * 8 + 5 * 8 + 5 * 64 * 4


def run_kernel(plan: StepPlan) -> None:
    from kernel.engine.plan_kernel import compute_plan

    compute_plan(
        plan.seq_lens,
        plan.req_to_token,
        plan.tree_slots,
        plan.tree_depth,
        plan.prefix_indptr,
        plan.prefix_slots,
        plan.write_index,
        plan.positions,
    )


def outputs(plan: StepPlan) -> list[torch.Tensor]:
    return [plan.prefix_indptr, plan.prefix_slots, plan.write_index, plan.positions]


@st.composite
def steps_of(draw: st.DrawFn, batch: int, max_context: int, nodes: int) -> list[tuple[torch.Tensor, ...]]:
    """1-3 steps of (seq_lens, tree slots, depths); lengths often 0 or max_context."""
    length = st.one_of(st.just(0), st.just(max_context), st.integers(0, max_context))
    slot = st.integers(0, 2**31 - 1)
    out = []
    for _ in range(draw(st.integers(1, 3))):
        lens = torch.tensor(draw(st.lists(length, min_size=batch, max_size=batch)), dtype=torch.int32)
        slots = torch.tensor(
            draw(st.lists(st.lists(slot, min_size=nodes, max_size=nodes), min_size=batch, max_size=batch)),
            dtype=torch.int32,
        )
        depths = torch.randint(0, nodes, (batch, nodes), generator=torch.Generator().manual_seed(draw(slot)))
        out.append((lens, slots, depths))
    return out


@pytest.mark.interpreted
@pytest.mark.skipif(not INTERPRETED, reason="runs in a child with TRITON_INTERPRET=1 (the test after it)")
@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    batch=st.integers(2, 8),
    nodes=st.integers(1, 17),
    max_context=st.one_of(st.integers(1, 40), st.integers(1016, 2056)),  # 1 to 3 blocks of 1024 columns
    spare=st.integers(0, 3),
)
def test_the_plan_kernel_computes_what_the_torch_ops_compute(
    data: st.DataObject, batch: int, nodes: int, max_context: int, spare: int
) -> None:
    gen = torch.Generator().manual_seed(batch * max_context + nodes)
    wide = torch.randint(0, 2**31 - 1, (batch + 2, max_context + spare), generator=gen, dtype=torch.int32)
    table = wide[1:, :max_context]  # from row 1, rows `spare` entries apart: the kernel takes the row stride
    torch_plan, kernel_plan = StepPlan(table, batch, nodes, None), StepPlan(table, batch, nodes, None)
    for torch_out, kernel_out in zip(outputs(torch_plan), outputs(kernel_plan), strict=True):
        junk = torch.randint(-(2**31), 2**31 - 1, torch_out.shape, generator=gen).to(torch_out.dtype)
        torch_out.copy_(junk)  # stale contents: both must write exactly the same entries
        kernel_out.copy_(junk)
    for plan in (torch_plan, kernel_plan):
        plan.prefix_indptr[0] = 0  # 0 from allocation on, never written: the torch path reads it
    for lens, slots, depths in data.draw(steps_of(batch, max_context, nodes)):
        for plan in (torch_plan, kernel_plan):
            plan.load(
                lens,
                torch.zeros(batch, nodes, dtype=torch.int64),
                slots,
                torch.ones(batch, nodes, dtype=torch.int64),
                depths,
            )
        torch_plan.compute()
        run_kernel(kernel_plan)
        for name, want, got in zip(
            ("prefix_indptr", "prefix_slots", "write_index", "positions"),
            outputs(torch_plan),
            outputs(kernel_plan),
            strict=True,
        ):
            assert torch.equal(got, want), (name, lens.tolist())


@pytest.mark.interpreted
@pytest.mark.skipif(not INTERPRETED, reason="runs in a child with TRITON_INTERPRET=1 (the test after it)")
@settings(max_examples=60, deadline=None)
@given(
    lens=st.lists(
        st.one_of(st.integers(-(2**27), 2**27), st.integers(-3000, 3000), st.sampled_from([-1, 1024, 1025])),
        min_size=2,
        max_size=8,
    ),
    max_context=st.integers(1, 1100),
)
def test_the_plan_kernel_stays_in_bounds_on_lengths_outside_the_engines_domain(
    lens: list[int], max_context: int
) -> None:
    """Negative lengths and lengths past max_context (the engine never loads them; the torch ops raise on them):
    the kernel writes no entry outside prefix_slots (guards of 64 entries on either side stay as they were)."""
    batch, guard = len(lens), 64
    table = torch.arange(batch * max_context, dtype=torch.int32).view(batch, max_context)
    plan = StepPlan(table, batch, 3, None)
    plan.load(
        torch.tensor(lens, dtype=torch.int32),
        torch.zeros(batch, 3, dtype=torch.int64),
        torch.zeros(batch, 3, dtype=torch.int32),
        torch.zeros(batch, 3, dtype=torch.int64),
        torch.zeros(batch, 3, dtype=torch.int64),
    )
    guarded = torch.full((guard + batch * max_context + guard,), -7, dtype=torch.int32)
    plan.prefix_slots = guarded[guard:-guard]
    run_kernel(plan)
    assert guarded[:guard].eq(-7).all() and guarded[-guard:].eq(-7).all()


@pytest.mark.skipif(INTERPRETED, reason="TRITON_INTERPRET=1 is on here: the property runs in this process")
def test_the_plan_kernel_under_the_triton_interpreter() -> None:
    here = Path(__file__).relative_to(ROOT)
    tests = [f"{here}::{name}" for name in INTERPRETED_TESTS]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0 and f"{len(tests)} passed" in proc.stdout, proc.stdout[-4000:] + proc.stderr[-2000:]


INTERPRETED_TESTS = (
    "test_the_plan_kernel_computes_what_the_torch_ops_compute",
    "test_the_plan_kernel_stays_in_bounds_on_lengths_outside_the_engines_domain",
)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("batch", [2, 4, 8])
def test_the_cuda_plan_equals_the_cpu_plan_eager_and_replayed(batch: int) -> None:
    from kernel.engine.graph import GraphRunner

    nodes, max_context = 16, 3000  # three blocks of table columns per request
    gen = torch.Generator().manual_seed(batch)
    table = torch.randint(0, 2**31 - 1, (batch + 1, max_context), generator=gen, dtype=torch.int32)
    rope = rope_table(max_context + nodes, torch.device("cpu"))
    cpu = StepPlan(table[1:], batch, nodes, rope)
    gpu = StepPlan(table[1:].cuda(), batch, nodes, rope.cuda())
    cpu_scratch = (batch * max_context + 1) * 4 + max_context * 8 + batch * max_context * (8 + 1)
    assert gpu.nbytes() == cpu.nbytes() - cpu_scratch + batch * max_context * 4  # no scratch, its packed slots
    graph = GraphRunner(gpu.compute)  # captured once; every replay reads the inputs loaded since
    for step in range(6):
        lens = torch.randint(0, max_context + 1, (batch,), generator=gen, dtype=torch.int32)
        lens[step % batch] = (0, max_context)[step % 2]
        inputs = (
            lens,
            torch.randint(0, 99, (batch, nodes), generator=gen),
            torch.randint(0, 2**31 - 1, (batch, nodes), generator=gen, dtype=torch.int32),
            torch.randint(0, 2**16, (batch, nodes), generator=gen),
            torch.randint(0, nodes, (batch, nodes), generator=gen),
        )
        cpu.load(*inputs)
        cpu.compute()
        gpu.load(*inputs)
        if step % 2:
            graph.replay()
        else:
            gpu.compute()
        for name in ("prefix_indptr", "prefix_slots", "write_index", "positions", "rope"):
            assert torch.equal(getattr(gpu, name).cpu(), getattr(cpu, name)), (name, step, lens.tolist())
