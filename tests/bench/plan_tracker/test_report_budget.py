"""bench/plan_tracker/report_budget.py: the digest's lines are counted up to the first <details>, and the page's
height and charts come from a real Chromium (skipped without one, except under CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.plan_tracker.report_budget import SCREEN, WIDTH, digest_lines, worst_chart_bytes

ROOT = Path(__file__).resolve().parents[3]


def test_the_digest_ends_at_the_first_details_line() -> None:
    text = "# R\n\n## Where it stands\n\nrow\n\n<details>\n<summary>x</summary>\n\nmore\n</details>\n"
    assert digest_lines(text) == 6
    assert digest_lines("  <details>  \n") == 0
    assert digest_lines("a\nb\nc") == 3  # no details: every line counts
    assert digest_lines("inline <details> is prose\n<details>\n") == 1


def test_the_worst_chart_is_larger_than_any_chart_of_our_own_report(tmp_path: Path) -> None:
    """The synthetic chart bounds the real ones: none of the verify-kernel report's charts (drawn from this
    repository's evidence) is larger, so its gate says what a report's charts can cost."""
    pytest.importorskip("matplotlib")
    import io
    import re

    from tracker.commands import report

    out = tmp_path / "r.html"
    assert report.run(ROOT, fmt="html", out_path=out, out=io.StringIO(), milestone="verify-kernel") == 0
    drawn = [len(svg.encode()) for svg in re.findall(r"<svg .*?</svg>", out.read_text(encoding="utf-8"), re.S)]
    assert len(drawn) > 10
    assert max(drawn) < worst_chart_bytes()


def test_height_and_charts_are_what_chromium_lays_out(tmp_path: Path) -> None:
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("CI installs chromium", pytrace=False)
        pytest.skip("no Chromium here")
    pytest.importorskip("playwright")
    page = tmp_path / "p.html"
    svg = '<svg width="10" height="10" xmlns="http://www.w3.org/2000/svg"></svg>'
    page.write_text(
        f"<!DOCTYPE html><html><body style='margin:0'><div style='height:3000px'></div>{svg}{svg}</body></html>"
    )
    # In a child: Playwright's sync API refuses to start inside a process whose browser tests already run a loop.
    code = (
        "import sys; from pathlib import Path; from bench.plan_tracker.report_budget import page_height, screenshots; "
        "print(*page_height(Path(sys.argv[1]), width=800)); print(*screenshots(Path(sys.argv[1]).parent))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(page)], capture_output=True, text=True, cwd=ROOT, check=True)
    sizes, shots = done.stdout.splitlines()
    height, charts = map(int, sizes.split())
    assert charts == 2 and 3000 <= height <= 3100
    written = [Path(p) for p in shots.split()]
    assert written == [tmp_path / "p.png"]
    head = written[0].read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")) == (WIDTH, SCREEN)
