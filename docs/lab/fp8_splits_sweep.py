"""The fp8 product's time against its split count (issue 28: the 128-row cases, where fp8 is not yet 0.65x bf16; the
split count comes from bf16's choose_num_splits, tuned for bf16's 32-token tile, while the sm_90 fp8 kernel's tile is
64 tokens). Each case: the bf16 product at its own split count, then the fp8 product at 0 (auto) and each count of
SPLITS, two rounds in opposite orders (fp8_wgmma_time.time_and_print, as `bench verify` times them); the
fp8 output at each count is checked against the fp32 reference on the dequantized cache by the flash-attention rule
first. A lab probe: its numbers go to kernel/NOTES.md with this script's log, never to a result file.

    python3 docs/lab/fp8_splits_sweep.py [B,H,T,L ...]        (default 1,8,16,23000 1,8,16,91000 1,8,64,23000)
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import peers, verify
from bench.timing import l2_bytes
from docs.lab.fp8_wgmma_time import time_and_print
from kernel import build

SPLITS = (8, 16, 24, 33, 48, 66, 96, 128)


def main() -> int:
    cases = [verify.Case(*(int(v) for v in a.split(","))) for a in sys.argv[1:]] or [
        verify.Case(1, 8, 16, 23000),
        verify.Case(1, 8, 16, 91000),
        verify.Case(1, 8, 64, 23000),
    ]
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(), "fp8 build", build.fp8_product_variant(torch.cuda.get_device_capability()))
    bf16 = build.load()
    fp8 = build.load(variant=build.fp8_product_variant(torch.cuda.get_device_capability()))
    l2 = l2_bytes(dev)
    for case in cases:
        sets, _ = verify.input_sets(case, l2)
        calls = {"cuda": [(lambda args: lambda: bf16.forward(*args, False, 0)[0])(x.args()) for x in sets]}
        inputs = []
        for x in sets:
            kv8, scale, deq = peers.fp8_inputs(x)
            inputs.append(((x.q, kv8, float(scale), *x.args()[2:], False), deq))
        for splits in (0, *SPLITS):
            name = f"fp8 s={splits or 'auto'}"
            calls[name] = [(lambda args, s: lambda: fp8.forward_fp8(*args, s)[0])(a, splits) for a, _ in inputs]
            why = verify.check_output(calls[name][0](), inputs[0][1], False)
            if why is not None:
                print(f"  {case} {name} MISSES the rule: {why}", flush=True)
        time_and_print(case, calls, budget_s=0.2, width=12)  # the first, "cuda", is the base
        del sets, calls, inputs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
