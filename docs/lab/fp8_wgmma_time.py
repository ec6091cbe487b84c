"""Times the lab's wgmma fp8 kernel (issue 28; kernel/build.py "fp8wg", q2p, and "fp8wgq1", qkp: Q as one e4m3 term)
beside the bf16 product and the mma.sync fp8 kernel (cuda_fp8), on the same inputs in one process, each case two
rounds in opposite orders (graph replays held behind a GPU-side wait, as `bench verify` times them). Each fp8 build's
output is checked first against the fp32 reference on the dequantized cache by the flash-attention rule; a build that
misses it is named and its time is still printed (fp8wgq1 is expected to miss: its error is qkp's). A lab probe: its
numbers go to kernel/NOTES.md with this script's log, never to a result file.

    python3 docs/lab/fp8_wgmma_time.py [quick] [BUILD ...]

BUILD: kernel/build.py fp8 builds to time instead of the default four (cuda_fp8, fp8wg, fp8wgq1, fp8wgrw); the bf16
product is timed as the base, unless NO_BF16=1 (then the first BUILD is, and the ratios are to it).
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import peers, verify
from bench.timing import capture_graph, l2_bytes, time_device
from kernel import build

CASES = (
    verify.Case(1, 8, 16, 5700),
    verify.Case(1, 8, 64, 5700),
    verify.Case(1, 8, 16, 23000),
    verify.Case(1, 8, 64, 23000),
    verify.Case(1, 64, 8, 23000),
    verify.Case(1, 8, 16, 91000),
    verify.Case(1, 8, 64, 91000),
    verify.Case(4, 8, 16, 91000),
    verify.Case(1, 64, 8, 91000),
)
FP8 = {"cuda_fp8": "fp8", "fp8wg": "fp8wg", "fp8wgq1": "fp8wgq1", "fp8wgrw": "fp8wgrw"}
FP8_NAMES = {"cuda_fp8": "fp8", **{n: n for n in build.FP8_BUILDS if n != "fp8"}}


def time_and_print(case: verify.Case, calls: dict[str, list], budget_s: float, width: int = 9) -> None:
    """Each implementation's calls (one a rotated input set) as graph replays held behind a GPU-side wait, two rounds
    in opposite orders; prints the case, then each one's mean of its two medians, the medians and its ratio to the
    first implementation. Shared with docs/lab/splits_sweep.py."""
    medians: dict[str, list[float]] = {name: [] for name in calls}
    for order in (list(calls), list(calls)[::-1]):
        for name in order:
            runs = [capture_graph(fn) or fn for fn in calls[name]]
            samples = time_device(lambda i, runs=runs: runs[i](), len(runs), budget_s=budget_s, hold=True)
            medians[name].append(statistics.median(samples))
    first = next(iter(medians))
    base = statistics.mean(medians[first])
    print(f"{case}", flush=True)
    for name, got in medians.items():
        us = statistics.mean(got)
        rounds = " / ".join(f"{m:.1f}" for m in got)
        print(f"  {name:{width}s} {us:8.1f} us ({rounds}) {us / base:.3f}x {first}", flush=True)


def main() -> int:
    args = sys.argv[1:]
    quick = bool(args) and args[0] == "quick"
    named = args[1:] if quick else args
    builds = {n: FP8_NAMES[n] for n in named} if named else FP8
    cases = CASES[::3] if quick else CASES
    print(torch.cuda.get_device_name(), flush=True)
    no_bf16 = os.environ.get("NO_BF16") == "1"
    bf16 = None if no_bf16 else build.load()
    exts = {name: build.load(variant=variant) for name, variant in builds.items()}
    l2 = l2_bytes(torch.device("cuda"))
    for case in cases:
        sets, _ = verify.input_sets(case, l2)
        calls: dict[str, list] = {}
        if bf16 is not None:
            calls["cuda"] = [(lambda a: lambda: bf16.forward(*a, False, 0)[0])(x.args()) for x in sets]
        fp8_args = []
        for x in sets:
            kv8, scale, deq = peers.fp8_inputs(x)
            fp8_args.append(((x.q, kv8, float(scale), *x.args()[2:], False, 0), deq))
        for name, ext in exts.items():
            calls[name] = [(lambda e, a: lambda: e.forward_fp8(*a)[0])(ext, a) for a, _ in fp8_args]
            why = verify.check_output(calls[name][0](), fp8_args[0][1], False)
            print(f"  {case} {name}: {'keeps the rule' if why is None else 'MISSES the rule: ' + why}", flush=True)
        time_and_print(case, calls, budget_s=0.3)
        del sets, calls, fp8_args
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
