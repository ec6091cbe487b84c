"""A build's time against its split count (issues 27 and 28): the launcher's choose_num_splits counted in v26's
32-token tiles until the builds told it theirs (split_tile_tokens: 64 for v40 and the sm_90 fp8 kernels), which had
left a quarter of their splits with no tile at the 128-row shapes. Each case: the bf16 product at its own split count,
then BUILD at 0 (auto) and each count of SPLITS, two rounds in opposite orders (fp8_wgmma_time.time_and_print, as
`bench verify` times them); BUILD's output at each count is checked against the fp32 reference first (on the
dequantized cache for an fp8 build) by the flash-attention rule. BUILD is a bf16 variant of kernel/build.py's VARIANTS
(v40, say) or an fp8 build (default: this device's fp8 product). A lab probe: its numbers go to kernel/NOTES.md with
this script's log, never to a result file.

    python3 docs/lab/splits_sweep.py [--build NAME] [B,H,T,L ...]     (default 1,8,16,5700 1,8,16,23000 1,8,16,91000
                                                                      1,8,64,23000)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import peers, verify
from bench.timing import l2_bytes
from docs.lab.fp8_wgmma_time import time_and_print
from kernel import build

SPLITS = (8, 16, 24, 33, 45, 48, 60, 66, 96, 128)


def call(forward: Callable[..., list[torch.Tensor]], args: tuple, splits: int) -> Callable[[], torch.Tensor]:
    """One call of a binding's forward at `splits`, its output alone."""
    return lambda: forward(*args, splits)[0]


def main() -> int:
    args = sys.argv[1:]
    name = build.fp8_product_variant(torch.cuda.get_device_capability())
    if args[:1] == ["--build"]:
        name, args = args[1], args[2:]
    fp8 = name in build.FP8_BUILDS
    cases = [verify.Case(*(int(v) for v in a.split(","))) for a in args] or [
        verify.Case(1, 8, 16, 5700),
        verify.Case(1, 8, 16, 23000),
        verify.Case(1, 8, 16, 91000),
        verify.Case(1, 8, 64, 23000),
    ]
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(), "build", name, flush=True)
    bf16 = build.load()
    ext = build.load(variant=name)
    l2 = l2_bytes(dev)
    for case in cases:
        sets, _ = verify.input_sets(case, l2)
        calls = {"cuda": [call(bf16.forward, (*x.args(), False), 0) for x in sets]}
        inputs = []
        for x in sets:
            if fp8:
                kv8, scale, deq = peers.fp8_inputs(x)
                inputs.append(((x.q, kv8, float(scale), *x.args()[2:], False), deq))
            else:
                inputs.append(((*x.args(), False), x))
        for splits in (0, *SPLITS):
            label = f"{name} s={splits or 'auto'}"
            calls[label] = [call(ext.forward_fp8 if fp8 else ext.forward, a, splits) for a, _ in inputs]
            why = verify.check_output(calls[label][0](), inputs[0][1], False)
            if why is not None:
                print(f"  {case} {label} MISSES the rule: {why}", flush=True)
        time_and_print(case, calls, budget_s=0.2, width=14)  # the first, "cuda", is the base
        del sets, calls, inputs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
