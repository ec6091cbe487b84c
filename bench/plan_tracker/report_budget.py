"""A milestone report's reading budget, measured: what a person opens and how long the tracker takes to make it.

On one milestone of this repository's own plans (``verify-kernel`` unless ``--milestone`` says otherwise):

- ``tracker.report_html_bytes``: the HTML report's size;
- ``tracker.report_charts``: the charts it draws (``<svg>`` elements);
- ``tracker.report_height_px``: the page's height in Chromium at 1400 px wide, every ``<details>`` left as the report
  ships it (closed), through Playwright driving the system Chromium (the tests' browser);
- ``tracker.report_digest_lines``: the Markdown report's lines before its first ``<details>`` (the digest, the one
  screen a person reads first);
- ``tracker.report_chart_max_bytes`` (``repo: synthetic``): the largest chart the evidence history can make: one
  across runs with the most series a chart draws, over the most runs it shows, every label long, every point marked
  (a mark is where one of a case's gates regressed: with two gates, a floor and a ceiling, every run can be one), as
  many lone points as a chart dots, a linear axis (more tick text than a log one) and the longest note; its bands,
  six, come from the plans, not the history (a report grew by some 9 kB a session while it charted 60 runs);
- ``tracker.report_vs_status``: ``tracker report --milestone M --format html`` over ``tracker status``, round by
  round, ``{cache: warm}`` and ``{cache: cold}`` (the tracker's caches in ``.tracker/cache`` removed before each run of
  both commands, untimed; matplotlib's own font cache is kept: a first run on a new machine also builds that).

The sizes are counted once (the same bytes every run, one sample each: no noise to decide within); the times are
``--runs`` rounds after a warm-up, every command in turn (:mod:`bench.plan_tracker.timing`). Plan 0004's gates read
the result file. The measured files are the tracker's code, the report templates and this script: the figures also
depend on the milestone's plans and evidence, which change with every run of record, so those are left out of the
fingerprint (the gates would be stale after each kernel run) and the file names the commit they were read at.

    python bench/plan_tracker/report_budget.py                 # the result file into bench/results/
    python bench/plan_tracker/report_budget.py --screenshots plans/reports   # the reports' first screens, as PNG
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.plan_tracker.record import REPO, case, command_line, ratio_case, tracker_cmd, write_result
from bench.plan_tracker.timing import Job, rounds, walls

MEASURED = (
    "tracker/**/*.py",
    "templates/report.html.j2",
    "templates/report.md.j2",
    "bench/plan_tracker/report_budget.py",
    "bench/plan_tracker/timing.py",
    "bench/plan_tracker/record.py",
)
WIDTH = 1400
SCREEN = 900  # the first screen's height: what a person sees before scrolling
DETAILS = "<details>"


def digest_lines(markdown: str) -> int:
    """The Markdown report's lines before its first ``<details>`` line (all of them when it has none)."""
    lines = markdown.splitlines()
    return next((i for i, line in enumerate(lines) if line.strip() == DETAILS), len(lines))


def page_height(html: Path, width: int = WIDTH, screenshot: Path | None = None) -> tuple[int, int]:
    """(the page's height in px at ``width``, its ``<svg>`` elements) in the system Chromium (Playwright);
    ``screenshot``: where to save a PNG of the first screen (``width`` x :data:`SCREEN` px)."""
    from playwright.sync_api import sync_playwright

    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_path is None:
        raise SystemExit("report_budget.py needs Chromium on PATH (apt-get install chromium) for the page height")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": width, "height": SCREEN})
            page.goto(html.resolve().as_uri())
            height = int(page.evaluate("document.documentElement.scrollHeight"))
            charts = int(page.evaluate("document.querySelectorAll('svg').length"))
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=False)
        finally:
            browser.close()
    return height, charts


def worst_chart_bytes() -> int:
    """The SVG bytes of the largest chart across runs :mod:`tracker.report.families` makes (module docstring)."""
    from tracker.report import charts, families

    runs = tuple(f"{0x9F3C2A1 + 7919 * i:07x}+dirty" for i in range(families.MAX_RUNS_CHARTED))
    # As many lone points (each a dot) as a chart dots before its lines join across gaps: five in each of the first
    # series, from runs 1, 3, 5, 7 and 9 left out.
    gaps = {1, 3, 5, 7, 9}
    gappy = charts.MAX_MARKERS // len(gaps)
    measured = [tuple(r for i, r in enumerate(runs) if k >= gappy or i not in gaps) for k in range(families.MAX_SERIES)]
    series = tuple(
        charts.Series(
            f"impl=cuda_v26 ctx={5700 * (k + 1)} heads=128 nodes=64 batch=8 case {k}",
            xs,
            tuple(1.0 + k + 0.37 * (i % 5) for i in range(len(xs))),
            tuple(range(len(xs))),
        )
        for k, xs in enumerate(measured)
    )
    bands = tuple(charts.Band(1.0 + p, f"0002/P{p + 10} gates 1-{p + 3}: ≥ {1.0 + p:g}", ()) for p in range(6))
    chart = charts.Chart(
        title="verify_attn.emulated_sm120_time_us: median × vs baseline across runs",
        x_label="run (commit, oldest first)",
        y_label="× vs baseline (higher is better)",
        series=series,
        bands=bands,
        x_categorical=True,
        y_log=False,
        categories=runs,
        note="25 older runs, and 13 cases only they measured, not drawn; 17 more cases not drawn (the benchmark table "
        "lists every gate); lines join across the runs that did not measure a case",
    )
    return len(charts.render_svg(chart, id_prefix="chart99").encode())


def screenshots(folder: Path) -> list[Path]:
    """A PNG of the first screen of every HTML report in ``folder`` (``plans/reports``), written beside it."""
    written = []
    for html in sorted(folder.glob("*.html")):
        png = html.with_suffix(".png")
        page_height(html, screenshot=png)
        written.append(png)
    return written


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--milestone", default="verify-kernel")
    ap.add_argument("--runs", type=int, default=5, help="timed rounds after the warm-up (default 5)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="result folder (bench/results)")
    ap.add_argument(
        "--screenshots",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="only write a PNG of the first screen of each HTML report in FOLDER (plans/reports) beside it",
    )
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.screenshots is not None:
        for png in screenshots(args.screenshots):
            print(f"wrote {png}")
        return 0
    tracker = tracker_cmd()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, tracker via {' '.join(tracker)}")
    report = [*tracker, "report", "--milestone", args.milestone]
    params: dict[str, Any] = {"repo": "own", "milestone": args.milestone}
    with tempfile.TemporaryDirectory(prefix="tracker-report-budget-") as tmp:
        html, md = Path(tmp) / "report.html", Path(tmp) / "report.md"
        times, _ = rounds(
            [
                Job("status/warm", [*tracker, "status"], REPO, best_of=False),
                Job("report/warm", [*report, "--format", "html", "--out", str(html)], REPO, best_of=False),
                Job("status/cold", [*tracker, "status"], REPO, best_of=False, cold=True),
                Job("report/cold", [*report, "--format", "html", "--out", str(html)], REPO, best_of=False, cold=True),
                Job("report/md", [*report, "--format", "md", "--out", str(md)], REPO, best_of=False),
            ],
            args.runs,
        )
        wall = walls(times)
        size = html.stat().st_size
        height, charts = page_height(html)
        lines = digest_lines(md.read_text(encoding="utf-8"))
    worst = worst_chart_bytes()
    info = {"width_px": WIDTH, "runs": args.runs}
    cases = [
        case("tracker.report_html_bytes", params, "B", "lower", [size]),
        case("tracker.report_charts", params, "charts", "lower", [charts]),
        case("tracker.report_height_px", {**params, "width": WIDTH}, "px", "lower", [height]),
        case("tracker.report_digest_lines", params, "lines", "lower", [lines]),
        case("tracker.report_chart_max_bytes", {"repo": "synthetic"}, "B", "lower", [worst]),
    ]
    for cache in ("warm", "cold"):
        top, bottom = wall[f"report/{cache}"], wall[f"status/{cache}"]
        cases.append(ratio_case("tracker.report_vs_status", {**params, "cache": cache}, top, bottom, info))
    print(f"HTML {size:,} B, {charts} charts, {height:,} px tall at {WIDTH} px; Markdown digest {lines} lines")
    print(f"the largest chart a report can hold: {worst:,} B")
    for cache in ("warm", "cold"):
        r, s = sorted(wall[f"report/{cache}"]), sorted(wall[f"status/{cache}"])
        print(f"{cache}: report {r[len(r) // 2] * 1000:.0f} ms, status {s[len(s) // 2] * 1000:.0f} ms (medians)")
    if args.out is not None:
        command = command_line("bench/plan_tracker/report_budget.py", argv)
        print(f"result file: {write_result(cases, args.out, command, 'tracker_report_budget', MEASURED)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
