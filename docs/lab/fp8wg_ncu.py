"""One case of the lab's wgmma fp8 builds called a few times, for Nsight Compute to profile (issue 28: where a tile's
clocks go; the warp-state sampling names the stall at each SASS instruction). A lab probe: its numbers go to
kernel/NOTES.md with the log, never to a result file.

    ncu --clock-control none -k regex:split_kernel_fp8 -c 1 --section WarpStateStats --section SourceCounters \
        -o /tmp/r python3 docs/lab/fp8wg_ncu.py fp8wgws [B H T L]
    ncu --import /tmp/r.ncu-rep --page source --csv --print-source sass > sass.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import peers, verify
from bench.timing import l2_bytes
from kernel import build


def main() -> int:
    variant = sys.argv[1]
    shape = [int(v) for v in sys.argv[2:6]] or [1, 8, 64, 91000]
    ext = build.load(variant=variant)
    sets, _ = verify.input_sets(verify.Case(*shape), l2_bytes(torch.device("cuda")))
    x = sets[0]
    kv8, scale, _ = peers.fp8_inputs(x)
    for _ in range(3):
        ext.forward_fp8(x.q, kv8, float(scale), *x.args()[2:], False, 0)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
