"""Times v30's lab ablations beside sm_90's product on an H200 (issue 17: what bounds the tile there).

Apply docs/lab/patches/v30_ablate.patch first (it adds VERIFY_V30_ABLATE and the v30ablN builds to kernel/build.py;
made against commit fc3661f, run on the H200 at e2a1ff2: docs/lab/runs/h200_20261202_e2a1ff2_v30_ablate.log); the
ablated builds compute wrong outputs on purpose, so nothing here is checked and nothing is a result of record:
only the medians, each beside the product's in the same process, two rounds in opposite orders.

    git apply docs/lab/patches/v30_ablate.patch && python3 docs/lab/patches/v30_ablate_time.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench import verify
from bench.timing import capture_graph, l2_bytes, time_device
from kernel import build

BUILDS = {
    "v30bulkx2s6": "the product (sm_90a)",
    "v30abl1": "no S swap",
    "v30abl2": "no mask, no softmax",
    "v30abl3": "neither (MMA + ldmatrix + ring)",
    "v30abl8": "half the K and V ldmatrix",
    "v30abl11": "neither, half the ldmatrix",
}
CASES = (verify.Case(1, 8, 64, 23000), verify.Case(1, 8, 64, 91000), verify.Case(1, 8, 16, 91000))


def main() -> int:
    copy_tbps, mma_tflops = verify._measure_ceilings([])
    print(f"{torch.cuda.get_device_name()}: copy {copy_tbps:.2f} TB/s, mma.sync {mma_tflops:.0f} TFLOP/s", flush=True)
    exts = {name: build.load(variant=name) for name in BUILDS}
    l2 = l2_bytes(torch.device("cuda"))
    for case in CASES:
        sets, _ = verify.input_sets(case, l2)
        floor = case.floor_us(copy_tbps, mma_tflops)
        medians: dict[str, list[float]] = {name: [] for name in BUILDS}
        for order in (list(BUILDS), list(BUILDS)[::-1]):
            for name in order:
                ext = exts[name]
                calls = [(lambda e, a: lambda: e.forward(*a)[0])(ext, (*x.args(), False, 0)) for x in sets]
                runs = [capture_graph(fn) or fn for fn in calls]
                samples = time_device(lambda i, runs=runs: runs[i](), len(runs), budget_s=0.3)
                medians[name].append(statistics.median(samples))
        print(f"{case} floor {floor:.1f} us", flush=True)
        base = statistics.mean(medians["v30bulkx2s6"])
        for name, what in BUILDS.items():
            us = statistics.mean(medians[name])
            rounds = " / ".join(f"{m:.1f}" for m in medians[name])
            print(f"  {name:12s} {us:8.1f} us ({rounds}) {100 * floor / us:5.1f}% of floor, {us / base:.3f}x  {what}")
        del sets
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
