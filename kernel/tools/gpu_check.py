"""Correctness check of the CUDA verify kernel on the GPU machine (run from the repository root).

    python kernel/tools/gpu_check.py            # full shape sweep; exit 1 on any failure
    python kernel/tools/gpu_check.py --quick    # a few small shapes (for compute-sanitizer runs)

Each case draws fresh random inputs, poisons the caching allocator's blocks with NaN before the call (so
an unwritten output element shows up as NaN), compares out and lse with an fp32 torch reference and passes
when the error is at most 2x that of the same math in plain bf16 torch (the flash-attention rule). Every
case also runs twice: the two outputs must be bit-identical (a moving result is a race). Forced split
counts exercise the direct-write (1 split), combine and empty-split paths.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # repo root, for `kernel.build`
from gpu_cases import Case, make_case, reference  # noqa: E402

from kernel import build  # noqa: E402

ABS_SLACK = 1e-5


def mixed(batch: int, mean: int, rng: random.Random) -> list[int]:
    """Prefix lengths between 0.5x and 1.5x the mean, one of them 0 when the batch has 3+ requests."""
    lens = [max(0, int(mean * rng.uniform(0.5, 1.5))) for _ in range(batch)]
    if batch >= 3:
        lens[1] = 0
    return lens


def cases(quick: bool, rng: random.Random) -> list[tuple[int, int, int, list[int], str, str, int]]:
    """(B, H, T, lens, tree, layout, forced splits) covering every L, H, T, B, tree kind and slot layout."""
    small = [
        (1, 1, 1, [0], "chain", "scattered", 0),
        (1, 8, 7, [1], "star", "scattered", 0),
        (1, 16, 16, [19], "binary", "contiguous", 0),
        (3, 8, 16, [989, 0, 19], "random", "scattered", 0),
        (3, 8, 16, [989, 0, 19], "random", "scattered", 5),
        (1, 4, 64, [0], "random", "scattered", 2),
    ]
    if quick:
        return small
    return small + [
        (3, 8, 16, [989, 0, 19], "random", "scattered", 1),
        (1, 128, 7, [989], "random", "contiguous", 0),
        (1, 64, 8, [5700], "binary", "scattered", 0),
        (1, 1, 64, [5700], "star", "scattered", 0),
        (16, 8, 16, mixed(16, 989, rng), "random", "scattered", 0),
        (16, 1, 7, mixed(16, 5700, rng), "chain", "contiguous", 0),
        (3, 16, 64, [5700, 1, 2000], "chain", "scattered", 0),
        (3, 64, 16, [19, 989, 0], "binary", "scattered", 0),
        (1, 8, 64, [91000], "random", "scattered", 0),
        (1, 8, 64, [91000], "random", "scattered", 128),
        (1, 8, 16, [91000], "binary", "contiguous", 0),
        (1, 128, 1, [91000], "chain", "scattered", 0),
        (1, 16, 32, [23000], "random", "scattered", 0),
        (4, 8, 16, mixed(4, 23000, rng), "random", "scattered", 0),
        (16, 128, 64, mixed(16, 40, rng), "random", "scattered", 0),
        (3, 16, 7, [111, 989, 1], "star", "contiguous", 3),
    ]


def poison(numel: int) -> None:
    """Hand NaN-filled blocks back to the caching allocator so the next outputs start as NaN."""
    blocks = [torch.full((numel,), float("nan"), dtype=torch.bfloat16, device="cuda") for _ in range(4)]
    blocks += [torch.full((max(1, numel // 512),), float("nan"), dtype=torch.float32, device="cuda")]
    del blocks


def check(ext: Any, case: Case, splits: int, variant: int = 0) -> tuple[bool, str]:
    """Run the kernel twice (poisoned each time) and compare with the references; a third call without the
    lse (its null-pointer path) must give the same output bits."""
    batch, nodes, heads, _ = case.q.shape
    runs = []
    for _ in range(2):
        poison(batch * nodes * heads * 512)
        out, lse = ext.forward(*case.args(), True, splits, variant)
        torch.cuda.synchronize()
        runs.append((out, lse))
    (out, lse), (out2, lse2) = runs
    poison(batch * nodes * heads * 512)
    out3, _ = ext.forward(*case.args(), False, splits, variant)
    torch.cuda.synchronize()
    ref, ref_lse = reference(case, torch.float32)
    low, low_lse = reference(case, torch.bfloat16)
    finite = bool(torch.isfinite(out).all() and torch.isfinite(lse).all())
    err = (out.float() - ref).abs().max().item()
    base = (low.float() - ref).abs().max().item()
    lse_err = (lse - ref_lse).abs().max().item()
    lse_base = (low_lse - ref_lse).abs().max().item()
    same = torch.equal(out, out2) and torch.equal(lse, lse2) and torch.equal(out, out3)
    ok = finite and same and err <= 2 * base + ABS_SLACK and lse_err <= 2 * lse_base + 1e-4
    used = splits or ext.num_splits(batch, nodes, heads, case.prefix_slots.numel(),
                                    torch.cuda.get_device_properties(0).multi_processor_count)
    line = (f"{'ok  ' if ok else 'FAIL'} {case.label:58s} splits={used:3d} err={err:.2e} (bf16 torch {base:.2e}) "
            f"lse_err={lse_err:.2e} (bf16 {lse_base:.2e}) finite={finite} repeatable={same}")
    return ok, line


def bad_inputs(ext: Any, case: Case) -> list[str]:
    """Each malformed argument must raise before launching, naming the argument; returns the misses."""
    q, kv, indptr, pslots, tslots, mask, scale = case.args()
    variants: list[tuple[str, tuple[Any, ...]]] = [
        ("q", (q.float(), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q[..., :512].contiguous(), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q.transpose(1, 2), kv, indptr, pslots, tslots, mask, scale)),
        ("q", (q.cpu(), kv, indptr, pslots, tslots, mask, scale)),
        ("kv_cache", (q, kv[:, :512].contiguous(), indptr, pslots, tslots, mask, scale)),
        ("kv_cache", (q, kv.half(), indptr, pslots, tslots, mask, scale)),
        ("prefix_indptr", (q, kv, indptr.long(), pslots, tslots, mask, scale)),
        ("prefix_indptr", (q, kv, indptr[:-1].contiguous(), pslots, tslots, mask, scale)),
        ("prefix_slots", (q, kv, indptr, pslots.cpu(), tslots, mask, scale)),
        ("tree_slots", (q, kv, indptr, pslots, tslots[:, :-1].contiguous(), mask, scale)),
        ("tree_mask", (q, kv, indptr, pslots, tslots, mask.int(), scale)),
        ("sm_scale", (q, kv, indptr, pslots, tslots, mask, float("nan"))),
    ]
    misses = []
    for name, args in variants:
        try:
            ext.forward(*args, False, 0)
        except RuntimeError as err:
            if not str(err).startswith(f"{name}:"):
                misses.append(f"{name}: wrong message {str(err).splitlines()[0]!r}")
            continue
        misses.append(f"{name}: no error")
    return misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small shapes (sanitizer runs)")
    parser.add_argument("--seed", type=int, default=None, help="default: fresh from the clock")
    parser.add_argument("--index", type=int, default=None, help="run only the case with this index")
    parser.add_argument("--variant", type=int, default=0, choices=(0, 20, 26),
                        help="kernel version (0: the default; kernel/NOTES.md); run new ones under `timeout`: a "
                             "synchronisation bug hangs")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else time.time_ns() % 2**31
    rng = random.Random(seed)
    ext = build.load()
    print(f"seed={seed} device={torch.cuda.get_device_name()} smem_bytes={ext.SMEM_BYTES} variant={args.variant}")
    failures = 0
    for i, (batch, heads, nodes, lens, tree, layout, splits) in enumerate(cases(args.quick, rng)):
        if args.index is not None and i != args.index:
            continue
        case = make_case(batch, heads, nodes, lens, tree, layout, seed=seed + i)
        ok, line = check(ext, case, splits, args.variant)
        failures += not ok
        print(line, flush=True)
    if not args.quick and args.index is None:
        misses = bad_inputs(ext, make_case(3, 8, 16, [989, 0, 19], "random", "scattered", seed=seed))
        for miss in misses:
            print(f"FAIL bad input {miss}")
        print(f"{'ok  ' if not misses else 'FAIL'} binding rejects 12 malformed inputs naming the argument")
        failures += len(misses)
    print(f"gpu_check: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
