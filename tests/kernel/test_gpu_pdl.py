"""The split kernel's programmatic dependent launch (`verify_attention(pdl=...)`, Params::pdl in
kernel/csrc/verify_attention.h): every mode computes the same bits, and each waits for what its contract says the
kernel right before the call may write.

The writer right before the call is slow on purpose: one `index_copy_` over ~300 MB of scratch rows and the rows the
call reads, in one launch. A split kernel that read those rows before its wait would see the old ones, and its output
would differ from the plain launch's on the new rows. Eager and captured in a CUDA graph (the engine's mode, where
the dependency is a graph edge). Skipped cleanly without CUDA.
"""

from __future__ import annotations

import os
import secrets

import pytest
import torch

import kernel
from kernel.trees import VerifyInputs, make_inputs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
MODES = ("off", "launch", "prefix")
# (B, H, T, prefix lengths): many splits, a batch with an empty prefix, a tree that starts inside a split's first
# tile (the prefix mode's wait must come before that tile), one split.
CASES = [(1, 8, 16, [5700]), (3, 16, 16, [989, 0, 2500]), (1, 8, 64, [40]), (2, 8, 16, [0, 31])]
SCRATCH_ROWS = 256 * 1024  # 302 MB of rows the writer copies besides the ones the call reads


def case_id(case: tuple[int, int, int, list[int]]) -> str:
    return "b{}-h{}-t{}-L{}".format(*case[:3], "+".join(map(str, case[3])))


@pytest.fixture(scope="module", autouse=True)
def _cuda_backend() -> None:
    try:
        import kernel.cuda_backend  # noqa: F401  (built on first use)
    except ImportError as err:
        pytest.skip(f"cuda backend not importable: {err}")


def call(x: VerifyInputs, pdl: str) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse = kernel.verify_attention(*x.args(), backend="cuda", return_lse=True, pdl=pdl)
    return out, lse


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_mode_computes_the_same_bits(case: tuple[int, int, int, list[int]]) -> None:
    batch, heads, nodes, lens = case
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    want_out, want_lse = call(x, "off")
    for mode in MODES[1:]:
        out, lse = call(x, mode)
        assert torch.equal(out, want_out) and torch.equal(lse, want_lse), f"pdl={mode}, seed {RUN_SEED}"


class SlowWriter:
    """One index_copy_ that writes `rows` new values at `slots` of a pool grown by SCRATCH_ROWS scratch rows, and
    the inputs whose kv_cache is that pool (the call reads only its first rows)."""

    def __init__(self, x: VerifyInputs, slots: torch.Tensor, gen: torch.Generator) -> None:
        pool_rows = x.kv_cache.shape[0]
        self.pool = torch.empty(pool_rows + SCRATCH_ROWS, 576, dtype=torch.bfloat16, device="cuda")
        self.pool[:pool_rows] = x.kv_cache
        self.x = VerifyInputs(x.q, self.pool, x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
        scratch = torch.arange(pool_rows, pool_rows + SCRATCH_ROWS, device="cuda")
        self.index = torch.cat([scratch, slots.long().view(-1)])
        self.slots = slots.long().view(-1)
        self.new = torch.randn(self.index.numel(), 576, generator=gen, device="cuda").to(torch.bfloat16)
        self.old = self.pool[self.slots].clone()
        self.pool.index_copy_(0, self.index, self.new)
        self.want = call(self.x, "off")  # on the new rows, in plain stream order
        self.reset()

    def reset(self) -> None:
        self.pool.index_copy_(0, self.slots, self.old)

    def write(self) -> None:
        self.pool.index_copy_(0, self.index, self.new)


def writer_cases() -> list[tuple[tuple[int, int, int, list[int]], str, str]]:
    """(case, mode, rows the writer writes): each mode against what it must wait for."""
    return [
        (case, mode, rows)
        for case in CASES
        for mode, rows in (("launch", "prefix"), ("launch", "tree"), ("prefix", "tree"))
        if rows == "tree" or sum(case[3]) > 0
    ]


@pytest.mark.parametrize(
    ("case", "mode", "rows"), writer_cases(), ids=lambda v: case_id(v) if isinstance(v, tuple) else str(v)
)
@pytest.mark.parametrize("graphed", [False, True], ids=["eager", "graph"])
def test_a_mode_waits_for_the_rows_the_kernel_before_it_writes(
    case: tuple[int, int, int, list[int]], mode: str, rows: str, graphed: bool
) -> None:
    batch, heads, nodes, lens = case
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(RUN_SEED)
    slots = x.tree_slots if rows == "tree" else x.prefix_slots
    w = SlowWriter(x, slots, gen)
    want_out, want_lse = w.want

    def step() -> tuple[torch.Tensor, torch.Tensor]:
        w.write()
        return call(w.x, mode)

    if graphed:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out, lse = step()
    for i in range(3):
        w.reset()
        if graphed:
            graph.replay()
        else:
            out, lse = step()
        torch.cuda.synchronize()
        where = f"pdl={mode}, writer of the {rows} rows, {'replay' if graphed else 'call'} {i}, seed {RUN_SEED}"
        assert torch.equal(out, want_out) and torch.equal(lse, want_lse), f"read before the wait: {where}"


def test_an_unknown_mode_is_refused_before_launch() -> None:
    x = make_inputs(1, 8, 16, [40], seed=RUN_SEED, device="cuda")
    with pytest.raises(ValueError, match="pdl: expected one of 'off', 'launch', 'prefix', got 'on'"):
        kernel.verify_attention(*x.args(), backend="cuda", pdl="on")
    from kernel import build

    with pytest.raises(RuntimeError, match=r"pdl: expected 0 \(off\), 1 \(launch\) or 2 \(prefix\), got 3"):
        build.load().forward(*x.args(), False, 0, 3)


@pytest.mark.parametrize("pdl", [False, True])
@pytest.mark.parametrize("n", [1, 16, 257])
def test_the_engines_store_writes_what_index_copy_writes(pdl: bool, n: int) -> None:
    from kernel.cuda_backend import store_rows

    gen = torch.Generator(device="cuda").manual_seed(RUN_SEED)
    pool = torch.randn(4096, 576, generator=gen, device="cuda").to(torch.bfloat16)
    index = torch.randperm(4096, generator=gen, device="cuda")[:n]
    rows = torch.randn(n, 576, generator=gen, device="cuda").to(torch.bfloat16)
    want = pool.clone().index_copy_(0, index, rows)
    store_rows(pool, index, rows, pdl)
    torch.cuda.synchronize()
    assert torch.equal(pool, want), f"n {n}, pdl {pdl}, seed {RUN_SEED}"


def test_the_engines_store_refuses_bad_inputs_before_launch() -> None:
    from kernel.cuda_backend import store_rows

    pool = torch.zeros(64, 576, dtype=torch.bfloat16, device="cuda")
    index = torch.arange(4, device="cuda")
    rows = torch.zeros(4, 576, dtype=torch.bfloat16, device="cuda")
    bad = [
        ((pool.float(), index, rows), "pool: expected dtype BFloat16, got Float"),
        ((pool, index.int(), rows), "index: expected dtype Long, got Int"),
        ((pool, index, rows[:3]), r"rows: expected shape \[4, 576\] \(one row per index\), got \[3, 576\]"),
        ((pool[:, :512].contiguous(), index, rows), r"pool: expected shape \[S, 576\], got \[64, 512\]"),
        ((pool, index.cpu(), rows), "index: expected a CUDA tensor"),
    ]
    before = pool.clone()
    for args, message in bad:
        with pytest.raises(RuntimeError, match=message):
            store_rows(*args, True)
    assert torch.equal(pool, before)
