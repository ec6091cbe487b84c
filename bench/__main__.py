"""Command line: `python -m bench verify [--cases short|long|all] [--impl LIST] [--out DIR] [--budget S]`,
`python -m bench step [--cases short|long|all] [--impl cuda,triton] [--layers N] [--out DIR] [--budget S]`,
`python -m bench defrag [--impl cuda,triton|none] [--layers N] [--out DIR] [--budget S]`.

Exit codes: 0 all requested implementations measured (optional peers that are not installed are skipped);
1 an implementation failed its correctness check or raised (the others are still measured and written);
2 usage error; 3 no CUDA device.
"""

from __future__ import annotations

import sys

from bench.cli import parse


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if args.benchmark == "step":
        from bench import step

        return step.run(
            args.cases, args.impl, args.out, step.command_line(argv), args.budget, args.layers, args.rounds, args.warmup
        )
    if args.benchmark == "defrag":
        from bench import defrag

        return defrag.run(args.impl, args.out, defrag.command_line(argv), args.budget, args.layers)
    from bench import verify

    return verify.run(args.cases, args.impl, args.out, verify.command_line(argv), args.budget)


if __name__ == "__main__":
    sys.exit(main())
