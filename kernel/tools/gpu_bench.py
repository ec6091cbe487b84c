"""Quick timing/tuning of the CUDA verify kernel at the benchmark shapes (run from the repository root).

    python kernel/tools/gpu_bench.py [--json PATH] [--sweep] [--reps 50] [--ab 20,26]

Times (B,H,T) in (1,8,16) (1,8,64) (1,16,32) (4,8,16) (1,64,8) x L in 5.7k, 23k, 91k with CUDA events: a
long sleep kernel is queued first so the host enqueues every timed call ahead of the GPU (no launch gaps
inside the events), warm-up calls first, and each call uses the next of several input sets whose KV rows
together exceed the 60 MB L2 several times, so the cache does not flatter. Reports the median and the
fraction of the floor max(bytes / copy bandwidth, FLOPs / mma.sync rate); the copy bandwidth is measured in
the same run, the mma.sync rate is the 653 TFLOP/s measured on this H200 (shared/KERNEL.md). --sweep also
times half and double the chosen split count. --ab times several kernel versions
in interleaved rounds on the same inputs (the only fair A/B: fresh machines differ by up to 3%). This is the kernel author's tool; `python -m bench verify` is
the project's benchmark of record.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from gpu_cases import HEAD_DIM, make_case  # noqa: E402

from kernel import build  # noqa: E402

SHAPES = ((1, 8, 16), (1, 8, 64), (1, 16, 32), (4, 8, 16), (1, 64, 8))
CONTEXTS = (5700, 23000, 91000)
MMA_TFLOPS = 653.0  # mma.sync m16n8k16 bf16->fp32 on the H200 (shared/KERNEL.md)
ROTATE_BYTES = 512 << 20


def copy_tbps() -> float:
    """Device-to-device copy bandwidth, bytes read + written, median of 20 copies of 1 GiB."""
    src = torch.empty(1 << 29, dtype=torch.float16, device="cuda").normal_()
    dst = torch.empty_like(src)
    times = []
    for _ in range(25):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return 2 * src.numel() * 2 / statistics.median(times[5:]) / 1e12


def floor_us(batch: int, heads: int, nodes: int, ctx: int, tbps: float) -> tuple[float, float]:
    """(bytes floor, FLOP floor) in microseconds."""
    tokens = ctx + nodes
    nbytes = batch * tokens * HEAD_DIM * 2
    flops = 2 * batch * heads * nodes * tokens * (576 + 512)
    return nbytes / (tbps * 1e12) * 1e6, flops / (MMA_TFLOPS * 1e12) * 1e6


def rotating_inputs(batch: int, heads: int, nodes: int, ctx: int) -> list[Any]:
    """Input sets over one pool whose KV rows together exceed the L2 several times."""
    rows_per_set = batch * (ctx + nodes)
    sets = max(3, -(-ROTATE_BYTES // (rows_per_set * HEAD_DIM * 2)))
    kv = torch.randn(sets * rows_per_set, HEAD_DIM, device="cuda").to(torch.bfloat16)
    return [make_case(batch, heads, nodes, [ctx] * batch, "random", "scattered", seed=i, kv=kv,
                      pool_rows=rows_per_set, pool_offset=i * rows_per_set) for i in range(sets)]


def time_case(ext: Any, batch: int, heads: int, nodes: int, ctx: int, splits: int, reps: int,
              variant: int = 0, inputs: list[Any] | None = None) -> list[float]:
    """Per-call microseconds over `reps` calls rotating through input sets (after 5 warm-up calls)."""
    inputs = inputs if inputs is not None else rotating_inputs(batch, heads, nodes, ctx)
    sets = len(inputs)
    for i in range(5):
        ext.forward(*inputs[i % sets].args(), False, splits, variant)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    torch.cuda.synchronize()
    torch.cuda._sleep(50_000_000)  # ~25 ms of GPU time: the host queues all calls meanwhile
    for i, (start, end) in enumerate(events):
        start.record()
        ext.forward(*inputs[i % sets].args(), False, splits, variant)
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1e3 for start, end in events]


def kernel_times(ext: Any, batch: int, heads: int, nodes: int, ctx: int, splits: int,
                 variant: int = 0) -> dict[str, float]:
    """Mean device microseconds per call of each CUDA kernel a call launches (torch.profiler / CUPTI)."""
    case = make_case(batch, heads, nodes, [ctx] * batch, "random", "scattered", seed=1)
    for _ in range(3):
        ext.forward(*case.args(), False, splits, variant)
    torch.cuda.synchronize()
    calls = 10
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            ext.forward(*case.args(), False, splits, variant)
        torch.cuda.synchronize()
    totals: dict[str, float] = {}
    for item in prof.key_averages():
        if "verify_attn" not in item.key:
            continue
        name = "split" if "split_kernel" in item.key else "combine" if "combine_kernel" in item.key else item.key[:24]
        device_us = max(getattr(item, "self_device_time_total", 0.0), getattr(item, "device_time_total", 0.0))
        totals[name] = totals.get(name, 0.0) + device_us / calls
    return totals


def splits_with(batch: int, heads: int, nodes: int, ctx: int, sms: int, min_tiles: int) -> int:
    """The launcher's split choice (verify_attention.h: choose_num_splits) with another tiles-per-split minimum."""
    base = batch * -(-(nodes * heads) // 64)
    if base >= sms:
        return 1
    avg_tiles = -(-(-(-(batch * (ctx + nodes)) // batch)) // 32)
    return max(1, min(sms // base, max(1, avg_tiles // min_tiles), 128))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None, help="write all samples here")
    parser.add_argument("--sweep", action="store_true", help="also time half / double the split count")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--case", default=None, help="only B,H,T,L (e.g. 1,8,64,91000; for ncu)")
    parser.add_argument("--kernels", action="store_true", help="also report per-kernel device time (profiler)")
    parser.add_argument("--variant", type=int, default=0, choices=(0, 20, 26), help="kernel version (0: the default; kernel/NOTES.md)")
    parser.add_argument("--ab", default=None,
                        help="comma-separated versions timed in turn on the same inputs, e.g. 14,19 (A/B in one "
                             "process); VERSION:N also chooses the split count with at least N tiles per split")
    args = parser.parse_args()
    ext = build.load()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tbps = copy_tbps()
    print(f"device={torch.cuda.get_device_name()} sms={sms} copy={tbps:.2f} TB/s mma={MMA_TFLOPS} TFLOP/s "
          f"variant={args.variant}")
    rows, results = [], []
    only = tuple(int(x) for x in args.case.split(",")) if args.case else None
    for ctx in CONTEXTS:
        for batch, heads, nodes in SHAPES:
            if only is not None and only != (batch, heads, nodes, ctx):
                continue
            auto = ext.num_splits(batch, nodes, heads, batch * ctx, sms)
            variants = [auto] + ([max(1, auto // 2), min(ext.MAX_SPLITS, auto * 2)] if args.sweep else [])
            bfloor, ffloor = floor_us(batch, heads, nodes, ctx, tbps)
            floor = max(bfloor, ffloor)
            if args.ab:
                inputs = rotating_inputs(batch, heads, nodes, ctx)
                versions = args.ab.split(",")
                meds: dict[str, list[float]] = {v: [] for v in versions}
                for _ in range(3):  # interleaved rounds: drift hits every version alike
                    for v in versions:
                        version, _, min_tiles = v.partition(":")
                        splits = auto if not min_tiles else splits_with(batch, heads, nodes, ctx, sms, int(min_tiles))
                        meds[v].append(statistics.median(time_case(ext, batch, heads, nodes, ctx, splits, args.reps,
                                                                   int(version), inputs)))
                best = {v: min(m) for v, m in meds.items()}
                base = best[versions[0]]
                rows.append(f"{batch:2d} {heads:3d} {nodes:3d} {ctx:6d} {auto:4d}* " + "  ".join(
                    f"v{v} {best[v]:7.1f} ({best[v] / base - 1:+.1%})" for v in versions))
                results.append({"batch": batch, "heads": heads, "nodes": nodes, "ctx": ctx, "splits": auto,
                                "floor_us": floor, "ab_medians_us": {str(v): m for v, m in meds.items()}})
                continue
            for splits in dict.fromkeys(variants):
                samples = time_case(ext, batch, heads, nodes, ctx, splits, args.reps, args.variant)
                med = statistics.median(samples)
                results.append({"variant": args.variant, "batch": batch, "heads": heads, "nodes": nodes, "ctx": ctx, "splits": splits,
                                "auto": splits == auto, "samples_us": samples, "median_us": med,
                                "floor_us": floor, "bytes_floor_us": bfloor, "flops_floor_us": ffloor})
                extra = ""
                if args.kernels:
                    ktimes = kernel_times(ext, batch, heads, nodes, ctx, splits, args.variant)
                    extra = "  " + " ".join(f"{k}={v:.1f}" for k, v in ktimes.items())
                rows.append(f"{batch:2d} {heads:3d} {nodes:3d} {ctx:6d} {splits:4d}{'*' if splits == auto else ' '} "
                            f"{med:9.1f} {min(samples):9.1f} {floor:8.1f} {floor / med:7.1%}{extra}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"copy_tbps": tbps, "mma_tflops": MMA_TFLOPS, "cases": results}, indent=1))
    print(" B   H   T      L splits  " + ("best of 3 interleaved medians, us (vs first)" if args.ab else
                                          "median_us    min_us floor_us  of_floor"))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
