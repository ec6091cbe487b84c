"""GPU backends (`cuda`, `triton`) against the fp32 reference, the flash-attention way.

Fresh random inputs every run (the seed is printed; set VERIFY_TEST_SEED to replay one), outputs poisoned
with NaN first, and the tolerance rule: max |backend - fp32 reference| <= 2 x max |plain bf16 torch - fp32
reference| + a small absolute epsilon. Skipped cleanly without CUDA.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Callable

import pytest
import torch

import kernel
from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs, mixed_lengths

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
BACKENDS = ["triton", "cuda"]

# (batch, heads, nodes, prefix length (mean, for batch > 1: mixed lengths), tree, slots): a curated cover of
# B {1,3,16}, H {1,4,8,16,64,128}, T {1,7,16,64}, L {0,1,19,989,5700,91000}, every tree, both layouts.
CASES = [
    (1, 1, 1, 0, "chain", "scattered"),
    (1, 8, 16, 1, "star", "scattered"),
    (1, 4, 7, 19, "random", "contiguous"),
    (3, 1, 64, 19, "chain", "scattered"),
    (3, 16, 16, 989, "binary", "scattered"),
    (1, 128, 7, 989, "random", "contiguous"),
    (16, 4, 1, 989, "chain", "scattered"),
    (16, 8, 16, 5700, "random", "scattered"),
    (1, 64, 8, 5700, "star", "contiguous"),
    (3, 8, 64, 5700, "binary", "scattered"),
    (1, 8, 16, 91000, "random", "scattered"),
    (1, 8, 64, 91000, "chain", "contiguous"),
    (1, 16, 7, 91000, "binary", "scattered"),
    (1, 128, 1, 91000, "star", "scattered"),
    (3, 64, 16, 91000, "random", "scattered"),
]


def case_id(case: tuple[object, ...]) -> str:
    return "b{}-h{}-t{}-L{}-{}-{}".format(*case)


def backend_or_skip(name: str) -> None:
    if name == "cuda":
        try:
            import kernel.cuda_backend  # noqa: F401  (built on first use)
        except ImportError as err:
            pytest.skip(f"cuda backend not importable: {err}")


def poison_allocator(nbytes: int, device: torch.device) -> None:
    """Fill free blocks of torch's caching allocator with NaN so a backend's fresh outputs start as NaN."""
    junk = torch.full((nbytes // 4 + 1024,), float("nan"), device=device)
    del junk


def run_backend(name: str, x: VerifyInputs) -> tuple[torch.Tensor, torch.Tensor]:
    batch, nodes, heads, _ = x.q.shape
    if name == "triton":  # it takes preallocated outputs: poison them directly
        from kernel.triton_backend import verify_attention_triton

        kernel.verify.validate(*x.args(), backend="triton", debug=True)
        out = torch.full((batch, nodes, heads, 512), float("nan"), dtype=torch.bfloat16, device=x.q.device)
        lse = torch.full((batch, nodes, heads), float("nan"), device=x.q.device)
        verify_attention_triton(*x.args(), True, out=out, lse=lse)
        # The public entry point dispatches to the same deterministic kernel: bit-identical results.
        api_out, api_lse = kernel.verify_attention(*x.args(), backend="triton", return_lse=True)
        assert torch.equal(api_out, out) and torch.equal(api_lse, lse)
        return out, lse
    poison_allocator(batch * nodes * heads * 512 * 8, x.q.device)
    out, lse = kernel.verify_attention(*x.args(), backend=name, return_lse=True, debug=True)
    return out, lse


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_triton_matches_reference(case: tuple[int, int, int, int, str, str]) -> None:
    check_backend("triton", case)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cuda_matches_reference(case: tuple[int, int, int, int, str, str]) -> None:
    check_backend("cuda", case)


def assert_keeps_the_rule(
    out: torch.Tensor, lse: torch.Tensor, args: tuple, where: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """The module's rule on one call's output and lse (finite; each error at most twice plain bf16 torch's against the
    fp32 reference, plus a small epsilon); returns the reference's (out, lse)."""
    ref_out, ref_lse = attention(*args)
    low_out, low_lse = attention(*args, dtype=torch.bfloat16)
    assert torch.isfinite(out).all() and torch.isfinite(lse).all(), f"unwritten or non-finite output: {where}"
    eps = 1e-3 * max(1.0, ref_out.abs().max().item())
    err = (out.float() - ref_out).abs().max().item()
    err_low = (low_out.float() - ref_out).abs().max().item()
    assert err <= 2 * err_low + eps, f"out error {err:.3e} > 2 x bf16 torch {err_low:.3e} + {eps:.1e}: {where}"
    lse_err = (lse - ref_lse).abs().max().item()
    lse_err_low = (low_lse - ref_lse).abs().max().item()
    assert lse_err <= 2 * lse_err_low + 1e-3, f"lse error {lse_err:.3e} vs bf16 torch {lse_err_low:.3e}: {where}"
    return ref_out, ref_lse


def case_inputs(case: tuple[int, int, int, int, str, str]) -> tuple[VerifyInputs, str]:
    """One of CASES on the GPU, its seed derived from the run's, and where to say it was when an assertion fails."""
    batch, heads, nodes, mean_len, tree, layout = case
    seed = (RUN_SEED + CASES.index(case) * 7919) % 2**31
    lens = mixed_lengths(batch, mean_len, random.Random(seed))
    x = make_inputs(batch, heads, nodes, lens, tree=tree, slots=layout, seed=seed, device="cuda")
    return x, f"seed {seed} (VERIFY_TEST_SEED={RUN_SEED}), lens {lens}"


def check_backend(backend: str, case: tuple[int, int, int, int, str, str]) -> None:
    """One backend on one case against the fp32 reference (separate tests so plans can gate each backend)."""
    backend_or_skip(backend)
    batch, heads, nodes = case[:3]
    x, where = case_inputs(case)
    print(where)
    out, lse = run_backend(backend, x)
    torch.cuda.synchronize()
    assert out.shape == (batch, nodes, heads, 512) and out.dtype == torch.bfloat16, where
    assert lse.shape == (batch, nodes, heads) and lse.dtype == torch.float32, where
    _, ref_lse = assert_keeps_the_rule(out, lse, x.args(), where)
    assert out.abs().max() > 0, f"all-zero output: {where}"
    # Scores are fp32 dot products of the same bf16 inputs in every backend: lse agrees far tighter than out.
    lse_rel = ((lse - ref_lse).abs() / ref_lse.abs().clamp(min=1.0)).max().item()
    assert lse_rel <= 1e-4, f"lse error {lse_rel:.2e} x max(1, |lse|) > 1e-4: {where}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_inputs_on_gpu_raise_before_launch(backend: str) -> None:
    x = make_inputs(2, 4, 8, [30, 5], seed=RUN_SEED, device="cuda")
    args = list(x.args())
    with pytest.raises(ValueError, match=r"^tree_mask: expected device cuda:0 \(the device of q\), got cpu$"):
        kernel.verify_attention(*args[:5], x.tree_mask.cpu(), x.sm_scale, backend=backend)
    with pytest.raises(
        TypeError,
        match=r"^kv_cache: expected dtype torch.bfloat16 or torch.float8_e4m3fn \(with kv_scale\), got torch.float16$",
    ):
        kernel.verify_attention(args[0], x.kv_cache.half(), *args[2:], backend=backend)
    with pytest.raises(ValueError, match=r"^q: expected a contiguous tensor"):
        kernel.verify_attention(x.q.transpose(0, 1).contiguous().transpose(0, 1), *args[1:], backend=backend)
    with pytest.raises(ValueError, match=r"^q: expected tree nodes 1 <= T <= 64, got 65$"):
        big = torch.zeros(2, 65, 4, 576, dtype=torch.bfloat16, device="cuda")
        kernel.verify_attention(big, *args[1:], backend=backend)
    bad_slots = x.prefix_slots.clone()
    bad_slots[-1] = x.kv_cache.shape[0] + 5
    pool = x.kv_cache.shape[0]
    with pytest.raises(
        ValueError,
        match=rf"^prefix_slots: expected slot ids in \[0, {pool}\) \(kv_cache rows\), "
        rf"got {pool + 5} at flat index 34$",
    ):
        kernel.verify_attention(args[0], args[1], args[2], bad_slots, *args[4:], backend=backend, debug=True)


# Counting cases: with q = 0 every visible score is 0, so exp(lse) is exactly the number of visible tokens
# (prefix length + popcount of the mask row) and out is the mean of their V rows. A dropped or repeated
# token, a wrong mask bit (bit 63 included: T = 64) or a lost split changes exp(lse) by at least 1, which
# the flash-attention tolerance above cannot see at long context. (heads, nodes, prefix lengths, tree)
COUNT_CASES = [
    (8, 64, [5700, 0, 19], "random"),
    (3, 7, [989, 1], "chain"),  # 21 rows: one part-filled block
    (16, 16, [91000], "binary"),
    (1, 64, [0], "star"),  # node 63 sees only nodes 0 and 63: bit 63 of a negative int64
]
FORCED_SPLITS = [0, 1, 2, 3, 5, 128]  # 0: the launcher's own choice


def count_case_id(case: tuple[object, ...]) -> str:
    heads, nodes, lens, tree = case
    return f"h{heads}-t{nodes}-L{'+'.join(map(str, lens))}-{tree}"  # type: ignore[arg-type]


def zero_query_inputs(case: tuple[int, int, list[int], str], seed: int) -> VerifyInputs:
    heads, nodes, lens, tree = case
    x = make_inputs(len(lens), heads, nodes, lens, tree=tree, seed=seed, device="cuda")
    x.q.zero_()
    return x


def check_counts(out: torch.Tensor, lse: torch.Tensor, x: VerifyInputs, where: str) -> None:
    from kernel.reference import ancestor_matrix

    seen = x.prefix_indptr.diff().long()[:, None] + ancestor_matrix(x.tree_mask).sum(-1)  # [B, T]
    expected = seen[:, :, None].expand(lse.shape).double()
    got = torch.exp(lse.double()).round()
    bad = (got != expected).nonzero()
    assert bad.numel() == 0, (
        f"exp(lse) != visible tokens at {bad[0].tolist()}: "
        f"{got[tuple(bad[0])].item()} vs {expected[tuple(bad[0])].item()}: {where}"
    )
    ref_out, _ = attention(*x.args())
    err = (out.float() - ref_out).abs().max().item()
    assert err <= 2**-6 * ref_out.abs().max().item(), f"mean of visible V rows off by {err:.3e}: {where}"


@pytest.mark.parametrize("case", COUNT_CASES, ids=count_case_id)
def test_cuda_counts_every_visible_token(case: tuple[int, int, list[int], str]) -> None:
    from kernel import build

    x = zero_query_inputs(case, RUN_SEED)
    ext = build.load()
    for splits in FORCED_SPLITS:
        out, lse = ext.forward(*x.args(), True, splits)
        check_counts(out, lse, x, f"splits={splits}, seed {RUN_SEED}")
        # The lse-less path writes the same output (its own branch in the kernel).
        assert torch.equal(ext.forward(*x.args(), False, splits)[0], out), f"lse-less path differs, splits={splits}"
        # Same inputs, same split count: bit-identical (a moving result is a race).
        assert torch.equal(ext.forward(*x.args(), True, splits)[0], out), f"not repeatable, splits={splits}"


# Small shapes with random q and a given split count (0: the launcher's choice), through the binding: the direct
# write (one split), the combine, and empty splits (request 1 of the batch has one tile for 5 splits). Random q
# sees what the q = 0 counting test cannot (a race on K); kernel/tools/sanitize.sh runs these cases under
# compute-sanitizer, one process a case for racecheck. (heads, nodes, prefix lengths, tree, slots, splits)
SMALL_CASES = [
    (1, 1, [0], "chain", "scattered", 0),
    (8, 7, [1], "star", "scattered", 0),
    (16, 16, [19], "binary", "contiguous", 0),
    (8, 16, [989, 0, 19], "random", "scattered", 0),
    (8, 16, [989, 0, 19], "random", "scattered", 5),
    (4, 64, [0], "random", "scattered", 2),
]


def small_case_id(case: tuple[object, ...]) -> str:
    heads, nodes, lens, tree, slots, splits = case
    return f"h{heads}-t{nodes}-L{'+'.join(map(str, lens))}-{tree}-{slots}-s{splits}"  # type: ignore[arg-type]


@pytest.mark.parametrize("case", SMALL_CASES, ids=small_case_id)
def test_cuda_small_cases_match_reference_and_repeat(case: tuple[int, int, list[int], str, str, int]) -> None:
    from kernel import build

    heads, nodes, lens, tree, slots, splits = case
    seed = (RUN_SEED + SMALL_CASES.index(case) * 7919) % 2**31
    x = make_inputs(len(lens), heads, nodes, lens, tree=tree, slots=slots, seed=seed, device="cuda")
    # kernel/tools/sanitize.sh checks another build of the device through VERIFY_KERNEL_VARIANT (sm_120's on an H200).
    ext = build.load(variant=os.environ.get("VERIFY_KERNEL_VARIANT") or None)
    where = f"splits={splits}, seed {seed} (VERIFY_TEST_SEED={RUN_SEED})"
    poison_allocator(x.q.shape[0] * nodes * heads * 512 * 8, x.q.device)
    out, lse = ext.forward(*x.args(), True, splits)
    assert_keeps_the_rule(out, lse, x.args(), where)
    again, lse_again = ext.forward(*x.args(), True, splits)
    assert torch.equal(again, out) and torch.equal(lse_again, lse), f"not repeatable: {where}"
    assert torch.equal(ext.forward(*x.args(), False, splits)[0], out), f"lse-less path differs: {where}"


@pytest.mark.parametrize("case", COUNT_CASES, ids=count_case_id)
def test_triton_counts_every_visible_token(case: tuple[int, int, list[int], str]) -> None:
    x = zero_query_inputs(case, RUN_SEED)
    out, lse = kernel.verify_attention(*x.args(), backend="triton", return_lse=True, debug=True)
    check_counts(out, lse, x, f"seed {RUN_SEED}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_node_that_sees_nothing_gets_zero_and_minus_inf(backend: str) -> None:
    backend_or_skip(backend)
    x = make_inputs(2, 4, 3, [0, 7], tree="chain", seed=RUN_SEED, device="cuda")
    x.tree_mask[0, 1] = 0  # empty prefix and a cleared mask row: accepted without debug=True
    out, lse = kernel.verify_attention(*x.args(), backend=backend, return_lse=True)
    assert torch.equal(out[0, 1], torch.zeros_like(out[0, 1])), out[0, 1].abs().max()
    assert lse[0, 1].tolist() == [float("-inf")] * 4, lse[0, 1]
    assert torch.isfinite(lse[0, [0, 2]]).all() and torch.isfinite(lse[1]).all()


def test_cuda_refuses_a_misaligned_pool() -> None:
    x = make_inputs(1, 2, 4, [10], seed=RUN_SEED, device="cuda")
    flat = torch.empty(x.kv_cache.numel() + 8, dtype=torch.bfloat16, device="cuda")
    kv = flat[1 : 1 + x.kv_cache.numel()].view_as(x.kv_cache)  # contiguous, 2 bytes past a 16-byte boundary
    kv.copy_(x.kv_cache)
    args = list(x.args())
    args[1] = kv
    with pytest.raises(
        ValueError,
        match=r"^kv_cache: expected a 16-byte aligned data pointer for backend 'cuda', "
        r"got address % 16 = 2$",
    ):
        kernel.verify_attention(*args, backend="cuda")
    assert torch.equal(
        kernel.verify_attention(*args, backend="triton"), kernel.verify_attention(*x.args(), backend="triton")
    )


def test_cuda_binding_rejects_bad_inputs_naming_the_argument() -> None:
    """The C++ checks behind the Python ones: each malformed input raises (no crash, no launch)."""
    from kernel import build

    ext = build.load()
    x = make_inputs(2, 4, 8, [30, 5], seed=RUN_SEED, device="cuda")
    q, kv, indptr, pslots, tslots, mask, scale = x.args()
    variants = [
        ("q", (q.float(), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q[..., :512].contiguous(), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q.transpose(1, 2), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q.cpu(), kv, indptr, pslots, tslots, mask, scale)),
        ("kv_cache", (q, kv[:, :512].contiguous(), indptr, pslots, tslots, mask, scale)),
        ("kv_cache", (q, kv.half(), indptr, pslots, tslots, mask, scale)),
        ("prefix_indptr", (q, kv, indptr.long(), pslots, tslots, mask, scale)),
        ("prefix_indptr", (q, kv, indptr[:-1].contiguous(), pslots, tslots, mask, scale)),
        ("prefix_slots", (q, kv, indptr, pslots.cpu(), tslots, mask, scale)),
        ("tree_slots", (q, kv, indptr, pslots, tslots[:, :-1].contiguous(), mask, scale)),
        ("tree_mask", (q, kv, indptr, pslots, tslots, mask.int(), scale)),
        ("sm_scale", (q, kv, indptr, pslots, tslots, mask, float("nan"))),
    ]
    for name, args in variants:
        with pytest.raises(RuntimeError, match=rf"^{name}: expected "):
            ext.forward(*args, False, 0)
    # No kernel versions to choose from any more: the tenth argument is the pdl mode (a version number is refused by
    # name), an eleventh a usage error, not a silent no-op.
    with pytest.raises(RuntimeError, match=r"^pdl: expected 0 \(off\), 1 \(launch\) or 2 \(prefix\), got 26"):
        ext.forward(q, kv, indptr, pslots, tslots, mask, scale, False, 0, 26)
    with pytest.raises(TypeError):
        ext.forward(q, kv, indptr, pslots, tslots, mask, scale, False, 0, 1, 26)
    # What the Python API also refuses, checked again by the binding for direct callers: misaligned pointers
    # (contiguous views at a 2-byte offset), an sm_scale whose exp2-domain scale overflows fp32, B > 65535.
    q_odd = torch.empty(q.numel() + 1, dtype=q.dtype, device=q.device)[1:].view(q.shape).copy_(q)
    kv_odd = torch.empty(kv.numel() + 1, dtype=kv.dtype, device=kv.device)[1:].view(kv.shape).copy_(kv)
    for name, args in [
        ("q", (q_odd, kv, indptr, pslots, tslots, mask, scale)),
        ("kv_cache", (q, kv_odd, indptr, pslots, tslots, mask, scale)),
        ("sm_scale", (q, kv, indptr, pslots, tslots, mask, 3e38)),
    ]:
        with pytest.raises(RuntimeError, match=rf"^{name}: expected "):
            ext.forward(*args, False, 0)
    big = 65536
    q_big = torch.zeros(big, 1, 1, 576, dtype=q.dtype, device=q.device)
    with pytest.raises(RuntimeError, match=r"^q: expected batch B <= 65535 \(grid z\), got 65536"):
        ext.forward(
            q_big,
            kv,
            torch.zeros(big + 1, dtype=torch.int32, device=q.device),
            pslots,
            torch.zeros(big, 1, dtype=torch.int32, device=q.device),
            torch.ones(big, 1, dtype=torch.int64, device=q.device),
            scale,
            False,
            0,
        )


# A call captured in a CUDA graph (the engine's mode) must replay what an eager call computes on whatever q holds at
# replay time: no host sync during capture, no host-side state baked in, and, since v16, the combine's
# programmatic dependent launch captured as a graph edge. (B, H, T, prefix lengths): many splits, and a batch.
GRAPH_CASES = [(1, 8, 16, [5700]), (3, 16, 16, [989, 0, 2500])]


@pytest.mark.parametrize("case", GRAPH_CASES, ids=lambda c: f"b{c[0]}-h{c[1]}-t{c[2]}-L{'+'.join(map(str, c[3]))}")
def test_cuda_call_captured_in_a_cuda_graph_replays_the_eager_result(case: tuple[int, int, int, list[int]]) -> None:
    batch, heads, nodes, lens = case
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    args = x.args()  # x.q is the graph's static input: refilled in place before each replay

    def call() -> tuple[torch.Tensor, torch.Tensor]:
        return kernel.verify_attention(*args, backend="cuda", return_lse=True)

    assert_replays_the_eager_call(call, x.q)


def assert_replays_the_eager_call(call: Callable[[], tuple[torch.Tensor, torch.Tensor]], q: torch.Tensor) -> None:
    """`call` captured in a CUDA graph, replayed three times on fresh values of q (its static input, refilled in place):
    each replay writes an output, and exactly what an eager call writes on the same q."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture: build, attributes, allocator pools
        call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = call()
    gen = torch.Generator(device="cuda").manual_seed(RUN_SEED)
    for i in range(3):
        q.copy_(torch.randn(q.shape, generator=gen, device="cuda").to(torch.bfloat16))
        graph.replay()
        eager_out, eager_lse = call()
        torch.cuda.synchronize()
        where = f"replay {i}, seed {RUN_SEED}"
        assert torch.isfinite(out).all() and out.abs().max() > 0, f"replay wrote nothing: {where}"
        assert torch.equal(out, eager_out), f"out differs from the eager call: {where}"
        assert torch.equal(lse, eager_lse), f"lse differs from the eager call: {where}"
