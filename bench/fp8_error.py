"""The error of an fp8 KV cache, per design (kernel/fp8.py, kernel/FP8.md), measured on the CPU in fp32 arithmetic:

    python -m bench.fp8_error [--seeds N] [--out DIR]

For each case (context, heads, tree nodes; one request, a random tree, random N(0, 1) inputs as the GPU suite's)
and seed, with ``ref`` the fp32 reference on the DEQUANTIZED cache (what a kernel reading the fp8 cache is judged
against) and ``low`` plain bf16 torch on the same dequantized cache (the flash-attention rule's yardstick):

- ``fp8.out_err_ratio`` {design}: max |design - ref| / max |low - ref| over the output (the flash-attention rule
  holds a kernel to <= 2 of this);
- ``fp8.out_err_rel`` {design}: max |design - ref| / max |ref|, the error in the output's own scale;
- ``fp8.lse_err`` {design}: max |lse - ref lse|;
- ``fp8.storage_err_rel``: max |ref - ref on the bf16 cache| / max |ref on the bf16 cache|, what storing the cache
  in e4m3 costs at all (the model's drift, not a kernel's error);
- ``fp8.engine_tokens_same`` and ``fp8.engine_first_divergence``: the engine (kernel/engine, the reference backend)
  with an fp8 pool against the same engine with a bf16 pool, greedy on the same prompts (clear ones: every decision
  of the bf16 engine by a margin above 0.01): the share of generated tokens that agree, and where the streams first
  part (the number of tokens generated when they never do). Reported, not gated: the model's weights are random.

Each design's output is :func:`kernel.fp8.emulate`'s: the operands its MMAs would see, every product and sum in
fp32 (a GPU kernel adds fp32 rounding of its own, the same in both designs). No GPU is needed; the result file's
provenance says which machine computed it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import torch

from bench import results
from bench.timing import summarize
from kernel.fp8 import DESIGNS, dequantize, emulate, quantize_kv
from kernel.reference import attention
from kernel.trees import make_inputs

ROOT = Path(__file__).resolve().parents[1]
CASES = ((1000, 8, 16), (5700, 8, 16), (23000, 8, 16), (23000, 16, 32), (91000, 8, 16))


def measure(ctx: int, heads: int, nodes: int, seed: int) -> dict[str, float]:
    """One case and seed: the figures of the module docstring."""
    x = make_inputs(1, heads, nodes, [ctx], tree="random", seed=seed)
    kv8, scale = quantize_kv(x.kv_cache)
    deq = dequantize(kv8, scale, torch.bfloat16)  # exact: a power-of-two scale
    args = (x.q, deq, x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    ref, ref_lse = attention(*args)
    low, _ = attention(*args, dtype=torch.bfloat16)
    stored, _ = attention(*x.args())
    base = (low.float() - ref).abs().max().item()
    scale_out = ref.abs().max().item()
    out: dict[str, float] = {
        "storage": (ref - stored).abs().max().item() / stored.abs().max().item(),
    }
    for design in DESIGNS:
        got, lse = emulate(design, x.q, kv8, scale, *args[2:])
        err = (got - ref).abs().max().item()
        out[f"{design}/ratio"] = err / base
        out[f"{design}/rel"] = err / scale_out
        finite = torch.isfinite(ref_lse)
        out[f"{design}/lse"] = (lse[finite] - ref_lse[finite]).abs().max().item()
    return out


ENGINE_NEW_TOKENS = 32
ENGINE_LENGTHS = [8, 40, 120]


def engine_drift(prompts: int) -> list[dict[str, Any]]:
    """The fp8 engine's tokens against the bf16 engine's on the same clear prompts (module docstring)."""
    from kernel.engine import Engine, EngineConfig
    from kernel.engine.prompts import clear_prompts

    shape = dict(layers=4, heads=4, vocab=128, seed=1, max_context=256, tree_nodes=8, tree_branching=2)
    bf16 = Engine(EngineConfig(**shape), backend="reference", device="cpu")  # type: ignore[arg-type]
    fp8 = Engine(EngineConfig(kv_dtype="fp8", **shape), backend="reference", device="cpu")  # type: ignore[arg-type]
    chosen = clear_prompts(bf16, prompts, ENGINE_LENGTHS, ENGINE_NEW_TOKENS, 0.01, seed=28)
    same, first = [], []
    for prompt in chosen:
        (a,) = bf16.generate([prompt], ENGINE_NEW_TOKENS, speculative=False)
        (b,) = fp8.generate([prompt], ENGINE_NEW_TOKENS, speculative=False)
        same.append(sum(x == y for x, y in zip(a, b, strict=True)) / len(a))
        first.append(float(next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), len(a))))
    params: dict[str, str | int | float | bool] = {"layers": 4, "heads": 4, "new_tokens": ENGINE_NEW_TOKENS}
    info: dict[str, str | int | float | bool] = {"prompts": prompts, "lengths": "8, 40, 120", "kv_scale": 2.0**-4}
    print(f"engine: {sum(same) / len(same):.1%} of tokens agree; streams part after {min(first):.0f}-{max(first):.0f}")
    return [
        results.case("fp8.engine_tokens_same", params, "fraction", "higher", same, summarize(same), info),
        results.case("fp8.engine_first_divergence", params, "tokens", "higher", first, summarize(first), info),
    ]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cases", default="all", choices=("all", "short"), help="short: the contexts up to 5.7k")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--engine-prompts", type=int, default=12, help="prompts of the engine drift (0: none)")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    now = results.utc_now()
    chosen = [c for c in CASES if args.cases == "all" or c[0] <= 5700]
    cases: list[dict[str, Any]] = []
    print(f"{'ctx':>6} {'H':>3} {'T':>3}  storage  " + "  ".join(f"{d:>4} ratio  rel      lse     " for d in DESIGNS))
    for ctx, heads, nodes in chosen:
        runs = [measure(ctx, heads, nodes, seed) for seed in range(args.seeds)]
        params: dict[str, str | int | float | bool] = {"ctx": ctx, "heads": heads, "nodes": nodes, "batch": 1}
        info: dict[str, str | int | float | bool] = {"seeds": args.seeds, "kv": "per-tensor power-of-two scale"}

        rows = [("fp8.storage_err_rel", {}, "storage", "fraction")]
        for design in DESIGNS:
            rows += [
                ("fp8.out_err_ratio", {"design": design}, f"{design}/ratio", "x"),
                ("fp8.out_err_rel", {"design": design}, f"{design}/rel", "fraction"),
                ("fp8.lse_err", {"design": design}, f"{design}/lse", "nat"),
            ]
        for metric, extra, key, unit in rows:
            samples = [r[key] for r in runs]
            cases.append(results.case(metric, {**params, **extra}, unit, "lower", samples, summarize(samples), info))
        worst = {k: max(r[k] for r in runs) for k in runs[0]}
        print(
            f"{ctx:>6} {heads:>3} {nodes:>3}  {worst['storage']:.2e} "
            + "  ".join(f"{worst[d + '/ratio']:9.2f} {worst[d + '/rel']:.2e} {worst[d + '/lse']:.2e}" for d in DESIGNS)
        )
    if args.engine_prompts:
        cases += engine_drift(args.engine_prompts)
    if args.out is not None:
        environment: dict[str, str | None] = {
            "gpu": None,
            "driver": None,
            "cuda": None,
            "torch": torch.__version__,
            "triton": None,
        }
        command = shlex.join(["python", "-m", "bench.fp8_error", *argv])
        doc = results.document("fp8_error", results.provenance(ROOT, command, environment, now), cases)
        print(f"wrote {results.write(doc, args.out, now)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
