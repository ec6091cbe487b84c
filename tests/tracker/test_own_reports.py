"""Milestone reports kept in ``plans/reports/`` are kept current by ``tracker check``: it fails while one is not what
``tracker report`` renders now, naming the command that regenerates it. And this repository's own reports are
current (the gate of plan 0004 P6)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
import report_fixture

from tracker.commands import check, report
from tracker.commands.report import REPORTS_DIR, command_line, report_path, reports_out_of_date

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("own") / "repo")


@pytest.fixture
def repo(fixture_repo: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(fixture_repo, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    return root


def write_reports(root: Path, milestone: str = "v1") -> list[Path]:
    written = []
    for fmt in ("md", "html"):
        path = root / report_path(milestone, fmt)
        path.parent.mkdir(parents=True, exist_ok=True)
        assert report.run(root, milestone=milestone, fmt=fmt, out_path=path, out=io.StringIO()) == 0
        written.append(path)
    return written


def check_lines(root: Path) -> list[str]:
    """The report problems ``tracker check`` prints; it exits 1 (its documented CHECK_FAILED) when there is any."""
    out = io.StringIO()
    code = check.run(root, out=out, as_json=True)
    doc = json.loads(out.getvalue())
    lines = [p["message"] for p in doc["problems"] if (p["path"] or "").startswith("plans/reports/")]
    assert code == doc["exit"] == (1 if doc["problems"] else 0)
    return lines


def test_no_report_folder_no_problem(repo: Path) -> None:
    assert reports_out_of_date(repo) == [] and check_lines(repo) == []


def test_a_fresh_report_passes_then_new_evidence_makes_it_out_of_date_until_regenerated(repo: Path) -> None:
    md, _ = write_reports(repo)
    assert reports_out_of_date(repo) == [] and check_lines(repo) == []
    assert md.read_text(encoding="utf-8").startswith("<!-- tracker:report ")

    newest = repo / ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
    doc = json.loads(newest.read_text(encoding="utf-8"))
    doc["provenance"]["time"] = "2026-11-09T10:00:00Z"  # a later run of the same tests
    (repo / ".tracker/evidence/20261109T100000Z-ci-box-r5.json").write_text(json.dumps(doc), encoding="utf-8")
    lines = check_lines(repo)
    assert lines == [
        f"plans/reports/v1.html: out of date (run: {command_line('v1', 'html')})",
        f"plans/reports/v1.md: out of date (run: {command_line('v1', 'md')})",
    ]
    assert "tracker report --milestone v1 --format md --out plans/reports/v1.md" in lines[1]

    write_reports(repo)  # what the message says to run
    assert reports_out_of_date(repo) == []
    period = json.loads(md.read_text(encoding="utf-8").splitlines()[0][len("<!-- tracker:report ") : -4])["period"]
    assert period["kind"] == "since-report" and period["start"] == "2026-11-08T10:00:00Z"  # after the previous one


def test_a_hand_edit_or_a_report_of_no_milestone_is_a_problem(repo: Path) -> None:
    md, _ = write_reports(repo)
    md.write_text(md.read_text(encoding="utf-8").replace("Verify kernel", "Verify kernels"), encoding="utf-8")
    assert reports_out_of_date(repo) == [f"plans/reports/v1.md: out of date (run: {command_line('v1', 'md')})"]
    write_reports(repo)
    plan = repo / "plans/0001-verify-kernel.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace('milestone = "v1"', 'milestone = "v2"'), encoding="utf-8")
    other = repo / "plans/0002-engine.md"
    other.write_text(
        other.read_text(encoding="utf-8").replace('milestone = "v1"', 'milestone = "v2"'), encoding="utf-8"
    )
    assert reports_out_of_date(repo) == [
        "plans/reports/v1.html: milestone 'v1' is declared by no plan (delete the report)",
        "plans/reports/v1.md: milestone 'v1' is declared by no plan (delete the report)",
    ]


def test_a_report_whose_record_line_was_edited_away_is_a_problem(repo: Path) -> None:
    md, _ = write_reports(repo)
    md.write_text("".join(md.read_text(encoding="utf-8").splitlines(True)[1:]), encoding="utf-8")
    assert check_lines(repo) == [
        f"plans/reports/v1.md: not a report tracker can read (run: {command_line('v1', 'md')})"
    ]
    write_reports(repo)
    assert check_lines(repo) == []


def test_check_prints_the_file_and_the_command(repo: Path) -> None:
    write_reports(repo)
    plan = repo / "plans/0002-engine.md"
    plan.write_text(
        plan.read_text(encoding="utf-8").replace('title = "Engine"', 'title = "Engine, renamed"'), encoding="utf-8"
    )
    out = io.StringIO()
    assert check.run(repo, out=out) == 1
    assert (
        "plans/reports/v1.md: out of date (run: tracker report --milestone v1 --format md --out plans/reports/v1.md)"
        in out.getvalue()
    )


def test_files_in_the_folder_that_are_no_milestone_report_are_left_alone(repo: Path) -> None:
    folder = repo / REPORTS_DIR
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("# our own notes\n", encoding="utf-8")
    (folder / "plot.png").write_bytes(b"\x89PNG")
    assert reports_out_of_date(repo) == []


def test_this_repository_s_milestone_reports_are_current() -> None:
    """plans/reports/ holds at least one milestone report of our plans (plan 0004 P6), and each report there is what
    `tracker report --milestone M` renders now (charts aside). Regenerate with the command the failure names."""
    from tracker.plans import load_plans

    _, plans = load_plans(ROOT)
    milestones = sorted({p.milestone for p in plans if p.milestone})
    held = [(m, fmt) for m in milestones for fmt in ("md", "html") if (ROOT / report_path(m, fmt)).is_file()]
    commands = " && ".join(command_line(m, fmt) for m in milestones for fmt in ("md", "html"))
    assert held, f"no milestone report in {REPORTS_DIR}/: {commands}"
    assert reports_out_of_date(ROOT) == []
