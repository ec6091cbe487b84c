"""The Triton baseline's kernel logic on CPU, through Triton's interpreter (TRITON_INTERPRET=1), at tiny sizes.

The interpreter must be switched on before `triton.jit` decorates the kernel, so the check runs in a fresh
interpreter process. Under it the dots run on fp32-upcast operands (the interpreter cannot multiply bf16),
so the comparison is tight: only the bf16 rounding of P and of the output remain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = r"""
import json, sys
import torch
from kernel.trees import make_inputs
from kernel.reference import attention
from kernel.triton_backend import verify_attention_triton
results = []
for batch, heads, nodes, lens, tree, layout in json.loads(sys.argv[1]):
    x = make_inputs(batch, heads, nodes, lens, tree=tree, slots=layout, seed=batch + heads + nodes)
    out = torch.full((batch, nodes, heads, 512), float("nan"), dtype=torch.bfloat16)
    lse = torch.full((batch, nodes, heads), float("nan"))
    verify_attention_triton(*x.args(), True, out=out, lse=lse)
    ref_out, ref_lse = attention(*x.args())
    results.append({"out_err": (out.float() - ref_out).abs().max().item(),
                    "out_scale": ref_out.abs().max().item(),
                    "lse_err": (lse - ref_lse).abs().max().item(),
                    "nan": bool(out.isnan().any() or lse.isnan().any())})
# A node that sees nothing (empty prefix, its mask row cleared): out 0 and lse -inf, never NaN.
x = make_inputs(1, 2, 3, [0], tree="chain", seed=5)
x.tree_mask[0, 1] = 0
out, lse = verify_attention_triton(*x.args(), True)
ref_out, ref_lse = attention(*x.args())
empty = {"out": out[0, 1].abs().max().item(), "lse": lse[0, 1].tolist(), "ref_out": ref_out[0, 1].abs().max().item(),
         "ref_lse": ref_lse[0, 1].tolist(), "others_ok": bool(torch.isfinite(lse[0, [0, 2]]).all())}
print(json.dumps({"cases": results, "empty": empty}))
"""
CASES = [
    (1, 1, 1, [0], "chain", "scattered"),
    (2, 2, 7, [19, 0], "random", "scattered"),
    (1, 1, 20, [70], "binary", "contiguous"),  # BLOCK_M = 32: one node block with 12 padding rows
    (1, 2, 33, [130], "chain", "scattered"),  # two node blocks, three prefix steps (BLOCK_N = 64)
]


def test_triton_kernel_under_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(CASES)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    results = report["cases"]
    empty = report["empty"]
    assert empty["out"] == 0.0 and empty["lse"] == [float("-inf")] * 2 and empty["others_ok"], empty
    assert empty["ref_out"] == 0.0 and empty["ref_lse"] == [float("-inf")] * 2, empty
    assert len(results) == len(CASES)
    for case, r in zip(CASES, results, strict=True):
        assert not r["nan"], f"{case}: output or lse not fully written"
        # bf16 output rounding (2^-8 relative) plus bf16 P: a few bf16 ulps of the largest output value.
        assert r["out_err"] <= 2**-6 * max(1.0, r["out_scale"]), (case, r)
        assert r["lse_err"] <= 1e-4, (case, r)


FP8_SCRIPT = r"""
import json, sys
import torch
from kernel.trees import make_inputs
from kernel.reference import attention
from kernel.fp8 import quantize_kv, dequantize
from kernel.triton_backend import verify_attention_triton
results = []
for batch, heads, nodes, lens, tree, layout in json.loads(sys.argv[1]):
    x = make_inputs(batch, heads, nodes, lens, tree=tree, slots=layout, seed=batch + heads + nodes)
    kv8, scale = quantize_kv(x.kv_cache * 37)  # a scale other than 1: it must be folded in
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = verify_attention_triton(x.q, kv8, *rest, True, kv_scale=scale)
    same, same_lse = verify_attention_triton(x.q, dequantize(kv8, scale, torch.bfloat16), *rest, True)
    ref_out, ref_lse = attention(x.q, kv8, *rest, kv_scale=scale)
    results.append({"same": bool(torch.equal(out, same)), "lse_same": (lse - same_lse).abs().max().item(),
                    "out_err": (out.float() - ref_out).abs().max().item(), "out_scale": ref_out.abs().max().item(),
                    "lse_err": (lse - ref_lse).abs().max().item(), "scale": scale})
print(json.dumps(results))
"""


def test_triton_reads_an_fp8_cache_as_the_bf16_path_reads_its_dequantized_values() -> None:
    """The fp8 path (e4m3 rows turned into bf16, the scale folded into the scores' scale and the output) gives the
    bf16 path's output on the dequantized cache bit for bit, and keeps the reference's tolerance."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", FP8_SCRIPT, json.dumps(CASES[1:3])],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case, r in zip(CASES[1:3], json.loads(proc.stdout.strip().splitlines()[-1]), strict=True):
        assert r["scale"] != 1.0, (case, r)
        assert r["same"] and r["lse_same"] <= 1e-5, (case, r)  # the scale folded into fp32 scores: one rounding
        assert r["out_err"] <= 2**-6 * max(1.0, r["out_scale"]), (case, r)
        assert r["lse_err"] <= 1e-4 * max(1.0, abs(r["out_scale"])), (case, r)
