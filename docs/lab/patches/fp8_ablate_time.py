"""Times the fp8 kernel's lab ablations under sm_120's balance (issue 28: what the one-term tile spends besides MMAs).

Apply docs/lab/patches/fp8_ablate.patch first (it adds VERIFY_F8_ABLATE to kernel/csrc/verify_attention_fp8.cuh and
the fp8q1ablN builds to kernel/build.py; made against commit 929d29b, compiled spill-free for sm_90 at k = 85/32,
not yet run). Every build here is a timing stand-in (kF8TimingStandIn: one bf16 m16n8k16 issued k times in each e4m3
MMA's place), and the ablated ones also compute wrong outputs on purpose: nothing is checked, nothing is a result of
record; only the medians, each beside fp8q1's stand-in in the same process, two rounds in opposite orders.

    git apply docs/lab/patches/fp8_ablate.patch && python3 docs/lab/patches/fp8_ablate_time.py [N]

N: VERIFY_MMA_REPEAT_X32 (default 85, the H100's and H200's k = 2.656 measured by `bench.verify --emulate-sm120`).
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
    "fp8": "the product's stand-in (q2p: Q's two terms)",
    "fp8q1": "Q as one term (the baseline here)",
    "fp8q1abl1": "no V^T byte permutes",
    "fp8q1abl2": "no rounding of P to e4m3",
    "fp8q1abl3": "neither",
    "fp8q1abl4": "no S swap",
    "fp8q1abl8": "no mask, no softmax",
    "fp8q1abl15": "none of the four (MMA + ldmatrix + ring)",
}
CASES = (verify.Case(1, 8, 64, 23000), verify.Case(1, 8, 64, 91000), verify.Case(1, 8, 16, 23000))


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 85
    print(f"{torch.cuda.get_device_name()}: VERIFY_MMA_REPEAT_X32={n}", flush=True)
    exts = {name: build.load(mma_repeat_x32=n, variant=name) for name in BUILDS}
    l2 = l2_bytes(torch.device("cuda"))
    for case in CASES:
        sets, _ = verify.input_sets(case, l2)
        args = []
        for x in sets:
            kv8, scale, _ = peers.fp8_inputs(x)
            args.append((x.q, kv8, float(scale), *x.args()[2:], False, 0))
        medians: dict[str, list[float]] = {name: [] for name in BUILDS}
        for order in (list(BUILDS), list(BUILDS)[::-1]):
            for name in order:
                ext = exts[name]
                calls = [(lambda e, a: lambda: e.forward_fp8(*a)[0])(ext, call) for call in args]
                runs = [capture_graph(fn) or fn for fn in calls]
                samples = time_device(lambda i, runs=runs: runs[i](), len(runs), budget_s=0.3, hold=True)
                medians[name].append(statistics.median(samples))
        print(f"{case}", flush=True)
        base = statistics.mean(medians["fp8q1"])
        for name, what in BUILDS.items():
            us = statistics.mean(medians[name])
            rounds = " / ".join(f"{m:.1f}" for m in medians[name])
            print(f"  {name:11s} {us:8.1f} us ({rounds}) {us / base:.3f}x  {what}")
        del sets, args
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
