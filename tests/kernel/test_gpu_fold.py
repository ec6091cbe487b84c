"""The combine folded into the split kernel (Params::fold in kernel/csrc/verify_attention.h; issue 27's A/B builds
"v30bulkx2s6fold" and "v26fold" of kernel/build.py): a cooperative launch whose blocks merge the splits themselves
behind a grid barrier.

It runs the combine kernel's merge code on the same partials in the same order, so its bits must equal the unfolded
build's (sm_90's product, v26), in every pdl mode, eager and captured in a CUDA graph, across back-to-back calls (the barrier's state is
reused) and where the grid cannot fold (one split, or more blocks than the device holds at once: the combine kernel
runs instead). Concurrent folded calls on two streams run in a subprocess with a deadline, so a grid barrier that
waits for blocks that cannot be resident fails the test instead of hanging the suite. Skipped cleanly without CUDA.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import kernel
from kernel.trees import VerifyInputs, make_inputs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parents[2]
RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
MODES = ("off", "launch", "prefix")
# (B, H, T, prefix lengths, splits; 0: the launcher's): many splits; a batch with an empty prefix; a 64-node tree;
# 128 heads (32 row tiles, few splits); one split (nothing to fold); a grid larger than the device holds at once.
CASES = [
    (1, 8, 16, [5700], 0),
    (3, 16, 16, [989, 0, 2500], 0),
    (1, 8, 64, [5700], 0),
    (2, 128, 16, [3000, 70], 0),
    (2, 8, 16, [0, 31], 0),
    (4, 8, 64, [4000, 4000, 4000, 4000], 128),
]
# (the fold build, the build it folds)
BUILDS = {"v30bulkx2s6fold": "v30bulkx2s6", "v26fold": "v26"}


def case_id(case: tuple[int, int, int, list[int], int]) -> str:
    return "b{}-h{}-t{}-L{}-s{}".format(*case[:3], "+".join(map(str, case[3])), case[4])


def extension(name: str):
    """The product's extension (`build.load()`), or a named variant's; skips where it does not build."""
    from kernel import build

    try:
        return build.load() if name == "product" else build.load(variant=name)
    except (ImportError, RuntimeError, ValueError) as err:
        pytest.skip(f"{name} does not load here: {err}")


def forward(ext, x: VerifyInputs, splits: int, pdl: str, fold: bool) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse = ext.forward(*x.args(), True, splits, MODES.index(pdl), int(fold))
    return out, lse


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_folded_and_unfolded_launches_compute_the_same_bits(
    case: tuple[int, int, int, list[int], int], build: str
) -> None:
    ext, base = extension(build), extension(BUILDS[build])
    batch, heads, nodes, lens, splits = case
    x = make_inputs(batch, heads, nodes, lens, tree="random", seed=RUN_SEED, device="cuda")
    want_out, want_lse = forward(base, x, splits, "off", False)
    for mode in MODES:
        for fold in (True, False):
            out, lse = forward(ext, x, splits, mode, fold)
            torch.cuda.synchronize()
            same = torch.equal(out, want_out) and torch.equal(lse, want_lse)
            assert same, f"{build}, pdl={mode}, fold={fold}, seed {RUN_SEED}"


@pytest.mark.parametrize("build", BUILDS)
def test_the_folded_launch_matches_the_reference(build: str) -> None:
    ext = extension(build)
    x = make_inputs(3, 16, 16, [989, 0, 2500], tree="random", seed=RUN_SEED, device="cuda")
    out, lse = forward(ext, x, 0, "launch", True)
    ref_out, ref_lse = kernel.verify_attention(*x.args(), backend="reference", return_lse=True)
    assert torch.allclose(out.float(), ref_out.float(), atol=2e-2, rtol=2e-2), f"seed {RUN_SEED}"
    assert torch.allclose(lse, ref_lse, atol=1e-3, rtol=1e-3), f"seed {RUN_SEED}"


@pytest.mark.parametrize("build", BUILDS)
def test_back_to_back_folded_calls_each_see_their_own_inputs(build: str) -> None:
    """Twenty calls queued without a sync, each on its own q, against the unfolded launch's bits: a grid barrier that
    let a block through early, or kept the last call's count, reads another call's partials."""
    ext = extension(build)
    xs = [make_inputs(1, 8, 16, [5700], tree="random", seed=RUN_SEED + i, device="cuda") for i in range(4)]
    want = [forward(ext, x, 0, "off", False) for x in xs]
    torch.cuda.synchronize()
    got = [forward(ext, xs[i % 4], 0, "prefix", True) for i in range(20)]
    torch.cuda.synchronize()
    bad = [i for i, (o, s) in enumerate(got) if not (torch.equal(o, want[i % 4][0]) and torch.equal(s, want[i % 4][1]))]
    assert not bad, f"{build}: calls {bad} differ, seed {RUN_SEED}"


@pytest.mark.parametrize("build", BUILDS)
def test_a_captured_folded_call_replays_on_new_inputs(build: str) -> None:
    ext = extension(build)
    x = make_inputs(2, 8, 16, [3000, 5700], tree="random", seed=RUN_SEED, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture
        forward(ext, x, 0, "prefix", True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = forward(ext, x, 0, "prefix", True)
    gen = torch.Generator(device="cuda").manual_seed(RUN_SEED)
    for replay in range(5):
        x.q.copy_(torch.randn(x.q.shape, generator=gen, device="cuda").to(torch.bfloat16))
        want_out, want_lse = forward(ext, x, 0, "off", False)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, want_out) and torch.equal(lse, want_lse), f"{build}, replay {replay}, seed {RUN_SEED}"


_TWO_STREAMS = textwrap.dedent(
    """
    import sys, torch
    from kernel import build
    from kernel.trees import make_inputs
    ext = build.load(variant=sys.argv[1])
    xs = [make_inputs(1, 8, 16, [5700], tree="random", seed=int(sys.argv[2]) + i, device="cuda") for i in range(2)]
    want = [ext.forward(*x.args(), True, 0, 0, 0) for x in xs]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = [[], []]
    torch.cuda.synchronize()
    for _ in range(50):
        for k in range(2):
            with torch.cuda.stream(streams[k]):
                outs[k].append(ext.forward(*xs[k].args(), True, 0, 1, 1))
    torch.cuda.synchronize()
    bad = sum(not (torch.equal(o, want[k][0]) and torch.equal(l, want[k][1])) for k in range(2) for o, l in outs[k])
    print("differ", bad)
    sys.exit(1 if bad else 0)
    """
)


@pytest.mark.parametrize("build", BUILDS)
def test_folded_calls_on_two_streams_finish_and_agree(build: str) -> None:
    extension(build)  # skips where the build does not load; the subprocess loads it from the cache
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _TWO_STREAMS, build, str(RUN_SEED)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{build}: folded calls on two streams did not finish in 240 s (a grid barrier that never opens)")
    assert proc.returncode == 0, f"{build}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"


def test_a_bad_fold_is_refused_before_launch() -> None:
    """fold is 0 or 1, and 1 only in a build that carries the merge (the product refuses it: nothing launches)."""
    x = make_inputs(1, 8, 16, [5700], seed=RUN_SEED, device="cuda")
    with pytest.raises(RuntimeError, match=r"fold: expected 0 \(the combine kernel\) or 1 \(folded\), got 2"):
        extension("product").forward(*x.args(), False, 0, 1, 2)
    with pytest.raises(RuntimeError, match="verify_attention launch failed: operation not supported"):
        extension("product").forward(*x.args(), False, 0, 1, 1)
