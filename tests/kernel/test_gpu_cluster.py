"""The cluster merge (Params::cluster, kernel/csrc/verify_attention.h): clusters of 2, 4 or 8 splits merge their
partials through distributed shared memory before the combine, or write the output themselves when one cluster holds
every split. Against the fp32 reference by the flash-attention rule, the lse by counting (q = 0: exp(lse) is the
number of visible tokens), against the combine alone at the same split count (one more bf16 rounding apart),
repeatable bit for bit, eager and captured, for the device's product, v26 (sm_120's build) and v30's other builds where
they build. Clusters are sm_90+: below, the binding must refuse them. Skipped cleanly without CUDA.
"""

from __future__ import annotations

import os
import secrets

import pytest
import torch

from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

RUN_SEED = int(os.environ.get("VERIFY_TEST_SEED", secrets.randbits(31)))
BUILDS = ("product", "v26", "v30", "v30bulk")
# (heads, nodes, prefix lengths, tree, splits, cluster): the launcher's count rounded to clusters; a batch with an
# empty prefix and empty splits inside clusters; one cluster holding every split (no combine); a part-filled row tile
# (21 rows); 64 nodes over two row tiles; 128 heads.
CASES = [
    (8, 16, [5700], "random", 0, 2),
    (8, 16, [5700], "random", 0, 4),
    (8, 16, [5700], "random", 0, 8),
    (8, 16, [989, 0, 19], "random", 8, 4),
    (8, 16, [989, 0, 19], "random", 16, 8),
    (16, 16, [300], "binary", 4, 4),
    (4, 64, [2000], "random", 8, 8),
    (3, 7, [989, 1], "chain", 8, 2),
    (1, 64, [91000], "random", 16, 8),
    (128, 1, [4000], "chain", 8, 4),
    (16, 16, [1000] * 32, "random", 8, 8),  # 1,024 blocks: several waves of clusters
]


def case_id(case: tuple[object, ...]) -> str:
    heads, nodes, lens, tree, splits, cluster = case
    return f"h{heads}-t{nodes}-L{'+'.join(map(str, lens))}-{tree}-s{splits}-c{cluster}"  # type: ignore[arg-type]


def extension(name: str):
    from kernel import build

    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("thread-block clusters are sm_90+")
    try:
        return build.load() if name == "product" else build.load(variant=name)
    except (ImportError, RuntimeError, ValueError) as err:
        pytest.skip(f"{name} does not load here: {err}")


def effective_splits(ext, x: VerifyInputs, splits: int, cluster: int) -> int:
    """The split count a call runs: forced, or the launcher's own rounded down to whole clusters (the binding's rule,
    the cluster halved while larger than the chosen count)."""
    if splits:
        return splits
    b, t, h = x.q.shape[:3]
    chosen = int(
        ext.num_splits(b, t, h, x.prefix_slots.numel(), torch.cuda.get_device_properties(0).multi_processor_count)
    )
    while cluster > chosen:
        cluster //= 2
    return chosen - chosen % cluster


def inputs(case: tuple[object, ...], seed: int) -> VerifyInputs:
    heads, nodes, lens, tree, _, _ = case
    return make_inputs(len(lens), heads, nodes, lens, tree=tree, slots="scattered", seed=seed, device="cuda")  # type: ignore[arg-type]


@pytest.mark.parametrize("build_name", BUILDS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cluster_merge_matches_reference_and_repeats(build_name: str, case: tuple[object, ...]) -> None:
    ext = extension(build_name)
    seed = (RUN_SEED + CASES.index(case) * 7919) % 2**31
    x = inputs(case, seed)
    splits, cluster = case[4], case[5]
    where = f"splits={splits}, cluster={cluster}, seed {seed} (VERIFY_TEST_SEED={RUN_SEED})"
    out, lse = ext.forward(*x.args(), True, splits, 1, cluster)
    assert torch.isfinite(out).all() and torch.isfinite(lse).all(), f"unwritten or non-finite output: {where}"
    ref_out, ref_lse = attention(*x.args())
    low_out, low_lse = attention(*x.args(), dtype=torch.bfloat16)
    eps = 1e-3 * max(1.0, ref_out.abs().max().item())
    err = (out.float() - ref_out).abs().max().item()
    err_low = (low_out.float() - ref_out).abs().max().item()
    assert err <= 2 * err_low + eps, f"out error {err:.3e} > 2 x bf16 torch {err_low:.3e} + {eps:.1e}: {where}"
    lse_err = (lse - ref_lse).abs().max().item()
    assert lse_err <= 2 * (low_lse - ref_lse).abs().max().item() + 1e-3, f"lse error {lse_err:.3e}: {where}"
    again, lse_again = ext.forward(*x.args(), True, splits, 1, cluster)
    assert torch.equal(again, out) and torch.equal(lse_again, lse), f"not repeatable: {where}"
    assert torch.equal(ext.forward(*x.args(), False, splits, 1, cluster)[0], out), f"lse-less path differs: {where}"
    for pdl in (0, 2):
        assert torch.equal(ext.forward(*x.args(), True, splits, pdl, cluster)[0], out), f"pdl {pdl} differs: {where}"
    # The combine alone at the same split count: the cluster's partial is one more bf16 rounding.
    plain, plain_lse = ext.forward(*x.args(), True, effective_splits(ext, x, splits, cluster), 1, 1)  # type: ignore[arg-type]
    gap = (out.float() - plain.float()).abs().max().item()
    assert gap <= 2**-7 * max(1.0, plain.float().abs().max().item()), f"{gap:.3e} from the combine alone: {where}"
    assert (lse - plain_lse).abs().max().item() <= 1e-4, f"lse differs from the combine alone: {where}"


@pytest.mark.parametrize("build_name", BUILDS)
@pytest.mark.parametrize("case", CASES[3:7], ids=case_id)
def test_cluster_merge_counts_every_visible_token(build_name: str, case: tuple[object, ...]) -> None:
    from kernel.reference import ancestor_matrix

    ext = extension(build_name)
    x = inputs(case, RUN_SEED)
    x.q.zero_()
    splits, cluster = case[4], case[5]
    out, lse = ext.forward(*x.args(), True, splits, 1, cluster)
    seen = x.prefix_indptr.diff().long()[:, None] + ancestor_matrix(x.tree_mask).sum(-1)
    expected = seen[:, :, None].expand(lse.shape).double()
    bad = (torch.exp(lse.double()).round() != expected).nonzero()
    assert bad.numel() == 0, f"exp(lse) != visible tokens at {bad[0].tolist()}: splits={splits}, cluster={cluster}"
    ref_out, _ = attention(*x.args())
    assert (out.float() - ref_out).abs().max().item() <= 2**-6 * ref_out.abs().max().item()


@pytest.mark.parametrize("build_name", BUILDS)
def test_cluster_merge_replays_from_a_graph(build_name: str) -> None:
    ext = extension(build_name)
    x = make_inputs(2, 8, 16, [5700, 300], tree="random", slots="scattered", seed=RUN_SEED, device="cuda")
    eager, _ = ext.forward(*x.args(), False, 0, 2, 4)
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        captured, _ = ext.forward(*x.args(), False, 0, 2, 4)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, eager)


@pytest.mark.parametrize("build_name", BUILDS)
@pytest.mark.parametrize("splits, cluster", [(2, 2), (8, 4), (8, 8), (16, 8)])
def test_cluster_merge_gives_a_node_that_sees_nothing_zero_and_minus_inf(
    build_name: str, splits: int, cluster: int
) -> None:
    ext = extension(build_name)
    x = make_inputs(2, 4, 3, [0, 700], tree="chain", seed=RUN_SEED, device="cuda")
    x.tree_mask[0, 1] = 0  # empty prefix and a cleared mask row
    out, lse = ext.forward(*x.args(), True, splits, 1, cluster)
    assert torch.equal(out[0, 1], torch.zeros_like(out[0, 1])), out[0, 1].abs().max()
    assert lse[0, 1].tolist() == [float("-inf")] * 4, lse[0, 1]
    assert torch.isfinite(lse[0, [0, 2]]).all() and torch.isfinite(lse[1]).all()


@pytest.mark.parametrize("build_name", BUILDS)
def test_cluster_merge_repeats_bit_for_bit(build_name: str) -> None:
    ext = extension(build_name)
    x = make_inputs(1, 8, 64, [5700], tree="random", slots="scattered", seed=RUN_SEED, device="cuda")
    first = ext.forward(*x.args(), True, 0, 2, 8)
    for _ in range(20):
        again = ext.forward(*x.args(), True, 0, 2, 8)
        assert torch.equal(again[0], first[0]) and torch.equal(again[1], first[1])


def test_binding_refuses_a_bad_cluster() -> None:
    from kernel import build

    ext = build.load()
    x = make_inputs(1, 8, 16, [300], tree="chain", seed=RUN_SEED, device="cuda")
    with pytest.raises(RuntimeError, match=r"cluster: expected 1, 2, 4 or 8"):
        ext.forward(*x.args(), False, 0, 1, 3)
    with pytest.raises(RuntimeError, match=r"splits: expected a multiple of cluster \(4\), got 6"):
        ext.forward(*x.args(), False, 6, 1, 4)
    if torch.cuda.get_device_capability() < (9, 0):
        with pytest.raises(RuntimeError, match=r"cluster: thread-block clusters need compute capability 9.0"):
            ext.forward(*x.args(), False, 0, 1, 2)
