"""The split kernel's programmatic dependent launch (`verify_attention(pdl=...)`, Params::pdl in
kernel/csrc/verify_attention.h): every mode computes the same bits, and each waits for what its contract says the
kernel right before the call may write.

The writer right before the call (`late_write`, a Triton kernel) lets its programmatic dependents launch at once
(griddepcontrol.launch_dependents), then spins 50 us on the global timer before it writes. A split kernel that read
those rows before its wait would read the old ones and differ from the plain launch on the new rows: the positive
control shows it does, where the contract is broken on purpose (pdl "prefix" after a writer of the prefix's rows).
Eager and captured in a CUDA graph (the engine's mode, where the dependency is a graph edge), for the device's
product (v40 on sm_90), for v26 (sm_120's build) and for v30bulkx2s6 (sm_90's before v40) where each loads. Skipped cleanly without CUDA,
and the overlap tests below sm_90 (no griddepcontrol: every mode is a plain launch there).
"""

from __future__ import annotations

import os
import secrets

import pytest
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents

import kernel
from kernel.trees import VerifyInputs, make_inputs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
MODES = ("off", "launch", "prefix")
# (B, H, T, prefix lengths): many splits, a batch with an empty prefix, a tree that starts inside a split's first
# tile (the prefix mode's wait must come before that tile), one split.
CASES = [(1, 8, 16, [5700]), (3, 16, 16, [989, 0, 2500]), (1, 8, 64, [40]), (2, 8, 16, [0, 31])]
BUILDS = ("product", "v26", "v30bulkx2s6")  # sm_90's product (v40), sm_120's build (v26), v30 (lab, sm_90a only)
DELAY_NS = 50_000


def case_id(case: tuple[int, int, int, list[int]]) -> str:
    return "b{}-h{}-t{}-L{}".format(*case[:3], "+".join(map(str, case[3])))


def has_pdl() -> bool:
    return torch.cuda.get_device_capability() >= (9, 0)


def extension(name: str):
    """The product's extension (`build.load()`), or a named variant's; skips where it does not build."""
    from kernel import build

    try:
        return build.load() if name == "product" else build.load(variant=name)
    except (ImportError, RuntimeError, ValueError) as err:
        pytest.skip(f"{name} does not load here: {err}")


def forward(ext, x: VerifyInputs, pdl: str) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse = ext.forward(*x.args(), True, 0, MODES.index(pdl))
    return out, lse


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _late_write_kernel(dst_ptr, index_ptr, rows_ptr, n, delay_ns, BLOCK: tl.constexpr):
    gdc_launch_dependents()
    start = _globaltimer()
    now = start
    while now - start < delay_ns:
        now = _globaltimer()
    cols = tl.arange(0, BLOCK)
    keep = cols < 576
    for r in range(tl.program_id(0), n, tl.num_programs(0)):
        slot = tl.load(index_ptr + r)
        tl.store(dst_ptr + slot * 576 + cols, tl.load(rows_ptr + r * 576 + cols, mask=keep), mask=keep)


def late_write(dst: torch.Tensor, index: torch.Tensor, rows: torch.Tensor) -> None:
    """dst [S, 576][index[i]] = rows[i], 50 us after letting the next kernel on the stream launch. Eight programs,
    so that the next kernel's blocks find the SMs free (a program a row filled every SM's threads, and the dependent
    then started only once the writes were done: H100, 8c85a02)."""
    _late_write_kernel[(min(8, index.numel()),)](dst, index, rows, index.numel(), DELAY_NS, BLOCK=1024)


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_mode_computes_the_same_bits(case: tuple[int, int, int, list[int]], build: str) -> None:
    ext = extension(build)
    batch, heads, nodes, lens = case
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    want_out, want_lse = forward(ext, x, "off")
    for mode in MODES[1:]:
        out, lse = forward(ext, x, mode)
        assert torch.equal(out, want_out) and torch.equal(lse, want_lse), f"{build}, pdl={mode}, seed {RUN_SEED}"
    api_out, api_lse = kernel.verify_attention(*x.args(), backend="cuda", return_lse=True, pdl="prefix")
    if build == "product":
        assert torch.equal(api_out, want_out) and torch.equal(api_lse, want_lse)


class Rewrite:
    """New values for some rows of one of the call's inputs ("prefix" or "tree": rows of the pool at those slots;
    "q": every row of q), written by `late_write` right before the call; `want`: the plain launch's output on them."""

    def __init__(self, ext, x: VerifyInputs, rows: str, gen: torch.Generator) -> None:
        if rows == "q":
            self.dst = x.q.view(-1, 576)
            self.index = torch.arange(self.dst.shape[0], device="cuda")
        else:
            self.dst = x.kv_cache
            self.index = (x.tree_slots if rows == "tree" else x.prefix_slots).long().reshape(-1)
        self.new = torch.randn(self.index.numel(), 576, generator=gen, device="cuda").to(torch.bfloat16)
        self.old = self.dst[self.index].clone()
        self.dst.index_copy_(0, self.index, self.new)
        self.want = forward(ext, x, "off")
        self.reset()

    def reset(self) -> None:
        self.dst.index_copy_(0, self.index, self.old)

    def write(self) -> None:
        late_write(self.dst, self.index, self.new)


def outputs_after_late_writes(ext, x: VerifyInputs, w: Rewrite, pdl: str, graphed: bool, calls: int = 3):
    """Per call: was the output the plain launch's on the new rows? (a late write, then the call, in the stream)"""

    def step() -> tuple[torch.Tensor, torch.Tensor]:
        w.write()
        return forward(ext, x, pdl)

    if graphed:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out, lse = step()
    exact = []
    for _ in range(calls):
        w.reset()
        if graphed:
            graph.replay()
        else:
            out, lse = step()
        torch.cuda.synchronize()
        exact.append(torch.equal(out, w.want[0]) and torch.equal(lse, w.want[1]))
    return exact


# (mode, rows the writer writes): each mode against what it must wait for.
KEPT = [("launch", "prefix"), ("launch", "tree"), ("launch", "q"), ("prefix", "tree"), ("prefix", "q")]


@pytest.mark.parametrize("graphed", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize(("mode", "rows"), KEPT, ids=[f"{m}-{r}" for m, r in KEPT])
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_mode_waits_for_what_the_kernel_before_it_may_write(
    case: tuple[int, int, int, list[int]], build: str, mode: str, rows: str, graphed: bool
) -> None:
    ext = extension(build)
    batch, heads, nodes, lens = case
    if rows == "prefix" and sum(lens) == 0:
        pytest.skip("no prefix rows to write")
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    w = Rewrite(ext, x, rows, torch.Generator(device="cuda").manual_seed(RUN_SEED))
    exact = outputs_after_late_writes(ext, x, w, mode, graphed)
    where = f"{build}, pdl={mode}, a late writer of the {rows} rows, {'graph' if graphed else 'eager'}"
    assert all(exact), f"read before the wait: {where}, calls exact {exact}, seed {RUN_SEED}"


@pytest.mark.skipif(not torch.cuda.is_available() or not has_pdl(), reason="griddepcontrol needs sm_90+")
@pytest.mark.parametrize("graphed", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("build", BUILDS)
def test_the_late_writer_catches_a_kernel_that_reads_before_its_wait(build: str, graphed: bool) -> None:
    """The positive control: pdl "prefix" after a writer of the prefix's rows breaks that mode's contract, and its
    split kernel gathers those rows before its wait, so it reads the old ones. Were this exact, the tests above
    could not fail either."""
    ext = extension(build)
    x = make_inputs(1, 8, 16, [5700], tree="random", seed=RUN_SEED, device="cuda")
    w = Rewrite(ext, x, "prefix", torch.Generator(device="cuda").manual_seed(RUN_SEED))
    exact = outputs_after_late_writes(ext, x, w, "prefix", graphed)
    assert not any(exact), f"{build}: pdl=prefix read the late writer's new prefix rows: {exact}, seed {RUN_SEED}"


def test_an_unknown_mode_is_refused_before_launch() -> None:
    x = make_inputs(1, 8, 16, [40], seed=RUN_SEED, device="cuda")
    with pytest.raises(ValueError, match="pdl: expected one of 'off', 'launch', 'prefix', got 'on'"):
        kernel.verify_attention(*x.args(), backend="cuda", pdl="on")
    with pytest.raises(RuntimeError, match=r"pdl: expected 0 \(off\), 1 \(launch\) or 2 \(prefix\), got 3"):
        extension("product").forward(*x.args(), False, 0, 3)


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
