"""What a new user reads before the first loop, counted: the README's lines and the quickstart's.

- ``tracker.doc_lines`` ``{doc: README.md}``: README.md (the two commands, a short reference, links; the long
  reference lives in docs/reference.md);
- ``tracker.doc_lines`` ``{doc: docs/quickstart.md}``: the one page from nothing to a committed status
  (tests/tracker/e2e/test_quickstart.py runs it as written).

A count is the same every run: one sample each, no noise to decide within. Plan 0005's gates read the result file;
the measured files are the two docs and this script.

    python bench/plan_tracker/doc_budget.py            # the result file into bench/results/
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.plan_tracker.record import REPO, case, command_line, write_result

DOCS = ("README.md", "docs/quickstart.md")
MEASURED = (*DOCS, "bench/plan_tracker/doc_budget.py", "bench/plan_tracker/record.py")


def lines_of(path: Path) -> int:
    """The lines a reader scrolls through: every line of the file, blank ones too."""
    return len(path.read_text(encoding="utf-8").splitlines())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="result folder (bench/results)")
    ap.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cases = []
    for doc in DOCS:
        n = lines_of(args.root / doc)
        print(f"{doc}: {n} lines")
        cases.append(case("tracker.doc_lines", {"doc": doc}, "lines", "lower", [n]))
    command = command_line("bench/plan_tracker/doc_budget.py", argv)
    print(f"result file: {write_result(cases, args.out, command, 'tracker_doc_budget', MEASURED, root=args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
