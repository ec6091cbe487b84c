"""The parser of `python -m bench` (bench/__main__.py's usage and exit codes), in a module of its own so that a
benchmark's own entry point (`python -m bench.verify`) reads the same options without importing `bench.__main__`."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_IMPLS = "cuda,triton,torch,flashinfer"


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse the command line (argparse exits with code 2 on a usage error)."""
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="benchmark", required=True)
    verify = sub.add_parser("verify", help="tree-verify MLA attention vs the hardware floor")
    verify.add_argument(
        "--cases",
        choices=("short", "long", "all"),
        default="all",
        help="contexts: short = 5.7k, long = 23k and 91k, all = both (default)",
    )
    verify.add_argument("--impl", default=DEFAULT_IMPLS, help=f"comma-separated (default {DEFAULT_IMPLS})")
    verify.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="directory for the result JSON (default bench/results/)",
    )
    verify.add_argument(
        "--budget",
        type=float,
        default=0.5,
        help="seconds of timed runs per implementation and case (default 0.5; 20-200 runs)",
    )
    step = sub.add_parser("step", help="one engine verify step of a 61-layer attention stack, eager and graphed")
    step.add_argument(
        "--cases",
        choices=("short", "long", "all"),
        default="all",
        help="contexts: short = 5.7k, long = 23k and 91k, all = both (default)",
    )
    step.add_argument("--impl", default="cuda,triton", help="comma-separated subset of cuda,triton (default both)")
    step.add_argument("--layers", type=int, default=61, help="attention layers per step (default 61, Kimi K2)")
    step.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="directory for the result JSON (default bench/results/)",
    )
    step.add_argument(
        "--budget", type=float, default=0.5, help="seconds of timed runs per measurement (default 0.5; 20-200 runs)"
    )
    defrag = sub.add_parser("defrag", help="KV pool defragmentation (Tier 0 and Tier 1) vs the copy bandwidth")
    defrag.add_argument(
        "--impl",
        default="cuda,triton",
        help="verify kernels timed on the fragmented and the compacted pool: a subset of cuda,triton, or none",
    )
    defrag.add_argument("--layers", type=int, default=61, help="pool layers; every row moves in each (default 61)")
    defrag.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="directory for the result JSON (default bench/results/)",
    )
    defrag.add_argument(
        "--budget", type=float, default=0.5, help="seconds of timed runs per measurement (default 0.5; 20-200 runs)"
    )
    args = parser.parse_args(argv)
    if args.benchmark == "step":
        return _check_step(parser, args)
    if args.benchmark == "defrag":
        return _check_defrag(parser, args)
    from bench.peers import IMPLS

    names = [n.strip() for n in args.impl.split(",") if n.strip()]
    unknown = [n for n in names if n not in IMPLS]
    if unknown or not names:
        parser.error(f"--impl: expected a comma-separated subset of {','.join(IMPLS)}, got {args.impl!r}")
    if not args.budget > 0:
        parser.error(f"--budget: expected seconds > 0, got {args.budget}")
    args.impl = names
    return args


def _check_step(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    names = [n.strip() for n in args.impl.split(",") if n.strip()]
    if not names or any(n not in ("cuda", "triton") for n in names):
        parser.error(f"--impl: expected a comma-separated subset of cuda,triton, got {args.impl!r}")
    if args.layers < 1:
        parser.error(f"--layers: expected >= 1, got {args.layers}")
    if not args.budget > 0:
        parser.error(f"--budget: expected seconds > 0, got {args.budget}")
    args.impl = names
    return args


def _check_defrag(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    names = [] if args.impl.strip() == "none" else [n.strip() for n in args.impl.split(",") if n.strip()]
    if (not names and args.impl.strip() != "none") or any(n not in ("cuda", "triton") for n in names):
        parser.error(f"--impl: expected a comma-separated subset of cuda,triton or none, got {args.impl!r}")
    if args.layers < 1:
        parser.error(f"--layers: expected >= 1, got {args.layers}")
    if not args.budget > 0:
        parser.error(f"--budget: expected seconds > 0, got {args.budget}")
    args.impl = names
    return args
