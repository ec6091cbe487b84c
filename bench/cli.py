"""The parser of `python -m bench` (bench/__main__.py's usage and exit codes), in a module of its own so that a
benchmark's own entry point (`python -m bench.verify`) reads the same options without importing `bench.__main__`."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_IMPLS = "cuda,triton,torch,flashinfer"
RESULTS = Path(__file__).resolve().parent / "results"
KERNELS = ("cuda", "triton")  # what `defrag` times
# What `step` times, each (verify_attention's backend, its pdl, the engine's store as a programmatic dependent): cuda
# is the engine's own (kernel/engine/attention.py: its store kernel lets the attention launch, which gathers the plan
# and the prefix's rows before its wait); the other cuda entries time the same kernels with less overlap, the A/B
# behind that choice: torch's index_copy_ as the store, then the attention waiting before any read, then neither
# overlapping.
WARMUP_S = 2.0  # `step --warmup`'s default, and bench.step.run's
MAX_WARMUP_S, MAX_ROUNDS = 60.0, 20
STEP_IMPLS = {
    "cuda": ("cuda", "prefix", True),
    "cuda_torch_store": ("cuda", "prefix", False),
    "cuda_pdl_launch": ("cuda", "launch", False),
    "cuda_pdl_off": ("cuda", "off", False),
    "triton": ("triton", "off", False),
}


def _shared_options(
    sub: argparse.ArgumentParser, *, cases: bool, layers: str | None, budget: str
) -> argparse.ArgumentParser:
    """The options the benchmarks share, each spelled once: --cases (where asked), --layers (with its help, where
    asked), --out and --budget (with its help)."""
    if cases:
        sub.add_argument(
            "--cases",
            choices=("short", "long", "all"),
            default="all",
            help="contexts: short = 5.7k, long = 23k and 91k, all = both (default)",
        )
    if layers is not None:
        sub.add_argument("--layers", type=int, default=61, help=layers)
    sub.add_argument("--out", type=Path, default=RESULTS, help="directory for the result JSON (default bench/results/)")
    sub.add_argument("--budget", type=float, default=0.5, help=budget)
    return sub


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse the command line (argparse exits with code 2 on a usage error)."""
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="benchmark", required=True)
    verify = sub.add_parser("verify", help="tree-verify MLA attention vs the hardware floor")
    verify.add_argument("--impl", default=DEFAULT_IMPLS, help=f"comma-separated (default {DEFAULT_IMPLS})")
    _shared_options(
        verify,
        cases=True,
        layers=None,
        budget="seconds of timed runs per implementation and case (default 0.5; 20-200 runs)",
    )
    step = sub.add_parser("step", help="one engine verify step of a 61-layer attention stack, eager and graphed")
    step.add_argument(
        "--impl", default="cuda,triton", help=f"comma-separated subset of {','.join(STEP_IMPLS)} (default cuda,triton)"
    )
    _shared_options(
        step,
        cases=True,
        layers="attention layers per step (default 61, Kimi K2)",
        budget="seconds of timed runs per measurement (default 0.5; 20-200 runs)",
    )
    step.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure each case this many times, the implementations in alternating order (A B, B A, ...), "
        "and pool each one's samples (default 1)",
    )
    step.add_argument(
        "--warmup",
        type=float,
        default=WARMUP_S,
        help="seconds of graph replays before each implementation's timings in a case, so that they are taken at "
        "the GPU's sustained clock, past the dip when a long step first meets the power cap (default 2; 0: none)",
    )
    defrag = sub.add_parser("defrag", help="KV pool defragmentation (Tier 0 and Tier 1) vs the copy bandwidth")
    defrag.add_argument(
        "--impl",
        default="cuda,triton",
        help="verify kernels timed on the fragmented and the compacted pool: a subset of cuda,triton, or none",
    )
    _shared_options(
        defrag,
        cases=False,
        layers="pool layers; every row moves in each (default 61)",
        budget="seconds of timed runs per measurement (default 0.5; 20-200 runs)",
    )
    args = parser.parse_args(argv)
    if args.benchmark == "verify":
        from bench.peers import IMPLS

        args.impl = _impls(parser, args.impl, tuple(IMPLS))
    elif args.benchmark == "step":
        args.impl = _impls(parser, args.impl, tuple(STEP_IMPLS))
    else:
        args.impl = _impls(parser, args.impl, KERNELS, none=True)
    if not 0 <= getattr(args, "warmup", 0.0) <= MAX_WARMUP_S:
        parser.error(f"--warmup: expected seconds in 0..{MAX_WARMUP_S:g}, got {args.warmup}")
    if not 1 <= getattr(args, "rounds", 1) <= MAX_ROUNDS:
        parser.error(f"--rounds: expected 1..{MAX_ROUNDS}, got {args.rounds}")
    if getattr(args, "layers", 1) < 1:
        parser.error(f"--layers: expected >= 1, got {args.layers}")
    if not args.budget > 0:
        parser.error(f"--budget: expected seconds > 0, got {args.budget}")
    return args


def _impls(parser: argparse.ArgumentParser, text: str, known: tuple[str, ...], none: bool = False) -> list[str]:
    """The --impl list, each a name of `known` (none=True: or the word "none", no implementation at all)."""
    if none and text.strip() == "none":
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(set(names)) != len(names):
        parser.error(f"--impl: an implementation named twice in {text!r}")
    if not names or any(n not in known for n in names):
        what = f"a comma-separated subset of {','.join(known)}" + (" or none" if none else "")
        parser.error(f"--impl: expected {what}, got {text!r}")
    return names
