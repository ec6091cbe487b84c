"""v30 (a producer warpgroup and an mbarrier ring, issue 17 part 2: sm_90's product before v40) and its lab
variants, on a GPU.

Every variant built for this device (`kernel/build.py` VARIANTS, each where it builds) on the cases of
test_gpu_correctness.py::test_cuda_matches_reference, against the fp32 reference by the same rule; and, since v30
runs v26's MMAs in v26's order on the same data, bit for bit equal to the portable path (v26, built here too) at the
same split count, and to itself run to run. The counting cases (q = 0: exp(lse) counts the visible tokens) under
forced split counts catch a dropped, repeated or stale stage, which a full ring that wraps would produce.
Skipped without CUDA or on a device no variant builds for. Run it under `timeout`: a wrong mbarrier parity hangs.
"""

from __future__ import annotations

import os

import pytest
import torch

from kernel.reference import attention
from tests.kernel.test_gpu_correctness import (
    CASES,
    COUNT_CASES,
    FORCED_SPLITS,
    RUN_SEED,
    case_id,
    case_inputs,
    check_counts,
    count_case_id,
    poison_allocator,
    zero_query_inputs,
)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def variants() -> list[str]:
    """The variants built for this device; VERIFY_V30_VARIANTS (comma-separated) narrows them (the device script
    tests each alone, so that one that fails does not hide the other)."""
    from kernel import build

    cc = torch.cuda.get_device_capability()
    chosen = os.environ.get("VERIFY_V30_VARIANTS")
    wanted = chosen.split(",") if chosen else list(build.VARIANTS)
    return [
        name
        for name, spec in build.VARIANTS.items()
        if cc in spec[3] and name in wanted and name not in build.WGMMA_VARIANTS
    ]


@pytest.fixture(scope="module")
def exts() -> dict[str, object]:
    from kernel import build

    found = variants()
    if not found:
        pytest.skip(f"no v30 variant builds for sm_{''.join(map(str, torch.cuda.get_device_capability()))}")
    return {"v26": build.load(variant="v26"), **{name: build.load(variant=name) for name in found}}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_v30_matches_reference_and_the_product_bit_for_bit(
    exts: dict[str, object], case: tuple[int, int, int, int, str, str]
) -> None:
    batch, heads, nodes = case[:3]
    x, where = case_inputs(case)
    poison_allocator(batch * nodes * heads * 512 * 8, x.q.device)
    product_out, product_lse = exts["v26"].forward(*x.args(), True, 0)  # type: ignore[attr-defined]
    ref_out, ref_lse = attention(*x.args())
    low_out, low_lse = attention(*x.args(), dtype=torch.bfloat16)
    eps = 1e-3 * max(1.0, ref_out.abs().max().item())
    err_low = (low_out.float() - ref_out).abs().max().item()
    lse_err_low = (low_lse - ref_lse).abs().max().item()
    for name, ext in exts.items():
        if name == "v26":
            continue
        poison_allocator(batch * nodes * heads * 512 * 8, x.q.device)
        out, lse = ext.forward(*x.args(), True, 0)  # type: ignore[attr-defined]
        torch.cuda.synchronize()
        assert out.shape == (batch, nodes, heads, 512) and out.dtype == torch.bfloat16, (name, where)
        assert torch.isfinite(out).all() and torch.isfinite(lse).all(), f"{name}: unwritten or non-finite: {where}"
        err = (out.float() - ref_out).abs().max().item()
        assert err <= 2 * err_low + eps, f"{name}: out error {err:.3e} > 2 x bf16 {err_low:.3e} + {eps:.1e}: {where}"
        lse_err = (lse - ref_lse).abs().max().item()
        assert lse_err <= 2 * lse_err_low + 1e-3, f"{name}: lse error {lse_err:.3e} vs bf16 {lse_err_low:.3e}: {where}"
        assert torch.equal(out, product_out) and torch.equal(lse, product_lse), f"{name} != v26 bit for bit: {where}"
        again, again_lse = ext.forward(*x.args(), True, 0)  # type: ignore[attr-defined]
        assert torch.equal(again, out) and torch.equal(again_lse, lse), f"{name}: not repeatable: {where}"


@pytest.mark.parametrize("case", COUNT_CASES, ids=count_case_id)
def test_v30_counts_every_visible_token(exts: dict[str, object], case: tuple[int, int, list[int], str]) -> None:
    x = zero_query_inputs(case, RUN_SEED)
    for name, ext in exts.items():
        if name == "v26":
            continue
        for splits in FORCED_SPLITS:
            out, lse = ext.forward(*x.args(), True, splits)  # type: ignore[attr-defined]
            check_counts(out, lse, x, f"{name}, splits={splits}, seed {RUN_SEED}")
            assert torch.equal(ext.forward(*x.args(), False, splits)[0], out), (name, splits)  # type: ignore[attr-defined]
            product = exts["v26"].forward(*x.args(), True, splits)  # type: ignore[attr-defined]
            assert torch.equal(out, product[0]) and torch.equal(lse, product[1]), f"{name} != v26, splits={splits}"
