"""Summarise Nsight Compute's per-SASS-instruction page (`ncu --import R --page source --csv --print-source sass`):
warp-stall reasons over all samples, the instructions with most samples, instructions executed by opcode, and the
global loads' sector excess. Used for issue 28's wgmma lab kernels (docs/lab/fp8wg_ws_run.sh writes the CSVs).

    python3 docs/lab/ncu_sass_summary.py ncu_fp8wgws_sass.csv [--top 12]
"""

from __future__ import annotations

import argparse
import collections
import csv


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    with open(a.csv, newline="") as fh:
        rows = list(csv.reader(fh))
    hdr = rows[1]
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]

    def num(r: list[str], col: str) -> int:
        v = r[ix[col]] if col in ix else ""
        return int(v) if v.strip().isdigit() else 0

    lines = [r for r in rows[2:] if len(r) == len(hdr) and r[ix["Source"]].strip()]
    base = int(lines[0][ix["Address"]], 16)
    samples = sum(num(r, "Warp Stall Sampling (All Samples)") for r in lines)
    executed = sum(num(r, "Instructions Executed") for r in lines)
    print(f"{a.csv}: {executed} warp instructions executed, {samples} stall samples")
    reasons = collections.Counter({h: sum(num(r, h) for r in lines) for h in stalls})
    print("stall reasons (share of samples):", ", ".join(f"{h[6:]} {v / samples:.1%}" for h, v in reasons.most_common(6)))
    by_op_exec: collections.Counter[str] = collections.Counter()
    by_op_samp: collections.Counter[str] = collections.Counter()
    for r in lines:
        toks = r[ix["Source"]].split()
        op = (toks[1] if toks[0].startswith("@") else toks[0]).split(".")[0]
        by_op_exec[op] += num(r, "Instructions Executed")
        by_op_samp[op] += num(r, "Warp Stall Sampling (All Samples)")
    print("by opcode (executed share, sample share):")
    for op, e in by_op_exec.most_common(a.top):
        print(f"  {op:10s} {e / executed:6.1%} {by_op_samp[op] / samples:6.1%}")
    print(f"instructions with most samples (offset from the kernel's start):")
    top = sorted(lines, key=lambda r: -num(r, "Warp Stall Sampling (All Samples)"))[: a.top]
    for r in top:
        s = num(r, "Warp Stall Sampling (All Samples)")
        main_reason = max(stalls, key=lambda h: num(r, h))
        off = int(r[ix["Address"]], 16) - base
        print(f"  {s / samples:5.1%} {off:#07x} {r[ix['Source']].strip()[:60]:60s} {main_reason[6:]}")
    tot = sum(num(r, "L2 Theoretical Sectors Global") for r in lines)
    excess = sum(num(r, "L2 Theoretical Sectors Global Excessive") for r in lines)
    if tot:
        print(f"global sectors {tot}, excessive {excess} ({excess / tot:.0%})")


if __name__ == "__main__":
    main()
