"""Times the wgmma fp8 kernel's lab ablations (issue 28: where fp8wg's tile spends its time). Apply
docs/lab/patches/fp8wg_ablate.patch first (VERIFY_F8WG_ABLATE in verify_attention_fp8_wgmma.cuh, the fp8wgablN builds
in kernel/build.py). The ablated builds compute wrong outputs on purpose: only the medians mean anything, each beside
fp8wg's in one process, two rounds in opposite orders (graph replays held, as `bench verify` times them).

    git apply docs/lab/patches/fp8wg_ablate.patch && python3 docs/lab/patches/fp8wg_ablate_time.py [BUILD ...]

BUILD: the builds to time beside fp8wg (default: all below); naming any also times (1,8,64) 91k alone.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench import peers, verify
from bench.timing import capture_graph, l2_bytes, time_device
from kernel import build

BUILDS = {
    "fp8wg": "the lab kernel (q2p, QK as m64n64 over both Q terms)",
    "fp8wgabl1": "no QK wgmma",
    "fp8wgabl2": "no P.V (no ldmatrix, permutes or wgmma)",
    "fp8wgabl3": "neither GEMM",
    "fp8wgabl12": "no row-max exchange, no P write (no named barrier)",
    "fp8wgabl16": "no tile copies after the first",
    "fp8wglc": "the next tile's copies after QK's issue (not an ablation: a candidate)",
}
CASES = (verify.Case(1, 8, 64, 91000), verify.Case(1, 8, 16, 23000))


def main() -> int:
    print(torch.cuda.get_device_name(), flush=True)
    named = sys.argv[1:]
    builds = {n: w for n, w in BUILDS.items() if not named or n == "fp8wg" or n in named}
    cases = CASES[:1] if named else CASES
    exts = {name: build.load(variant=name) for name in builds}
    l2 = l2_bytes(torch.device("cuda"))
    for case in cases:
        sets, _ = verify.input_sets(case, l2)
        args = []
        for x in sets:
            kv8, scale, _ = peers.fp8_inputs(x)
            args.append((x.q, kv8, float(scale), *x.args()[2:], False, 0))
        medians: dict[str, list[float]] = {name: [] for name in builds}
        for order in (list(builds), list(builds)[::-1]):
            for name in order:
                calls = [(lambda e, a: lambda: e.forward_fp8(*a)[0])(exts[name], a) for a in args]
                runs = [capture_graph(fn) or fn for fn in calls]
                samples = time_device(lambda i, runs=runs: runs[i](), len(runs), budget_s=0.3, hold=True)
                medians[name].append(statistics.median(samples))
        print(f"{case}", flush=True)
        base = statistics.mean(medians["fp8wg"])
        for name, what in builds.items():
            us = statistics.mean(medians[name])
            rounds = " / ".join(f"{m:.1f}" for m in medians[name])
            print(f"  {name:11s} {us:8.1f} us ({rounds}) {us / base:.3f}x  {what}", flush=True)
        del sets, args
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
