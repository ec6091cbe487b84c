"""Milestone reports kept in ``plans/reports/`` are kept current by ``tracker check``: it fails while one is not what
``tracker report`` renders now, naming the command that regenerates it. And this repository's own reports are
current (the gate of plan 0004 P6)."""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import report_fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.commands import check, report
from tracker.report.data import Period, Report, Scope
from tracker.report.milestones import REPORTS_DIR, command_line, report_path, reports_out_of_date, slug
from tracker.report.period import POINT, parse_point, point_comment

ROOT = Path(__file__).resolve().parents[3]


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
    from tracker.plans.load import load_plans

    _, plans = load_plans(ROOT)
    milestones = sorted({p.milestone for p in plans if p.milestone})
    held = [(m, fmt) for m in milestones for fmt in ("md", "html") if (ROOT / report_path(m, fmt)).is_file()]
    commands = " && ".join(command_line(m, fmt) for m in milestones for fmt in ("md", "html"))
    assert held, f"no milestone report in {REPORTS_DIR}/: {commands}"
    assert reports_out_of_date(ROOT) == []


# --- the readers of plans/reports/: hostile input ------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(TEXT, TEXT.map(lambda t: POINT + t), TEXT.map(lambda t: f"{POINT}{t} -->")), tail=TEXT)
def test_a_report_s_record_line_never_breaks_its_reader(text: str, tail: str) -> None:
    found = parse_point(text + "\n" + tail)
    if found is not None:
        scope, period = found
        assert all(x is None or isinstance(x, str) for x in [*scope, *period])


@settings(max_examples=200, deadline=None)
@given(name=TEXT.filter(bool), start=st.none() | TEXT, through=st.none() | TEXT, ref=st.none() | TEXT)
def test_the_record_line_reads_back_as_written_whatever_the_names(
    name: str, start: str | None, through: str | None, ref: str | None
) -> None:
    scope, period = Scope("milestone", name), Period("since-ref", ref, None, start, through)
    line = point_comment(Report(scope, period, ()))
    assert "\n" not in line and "-->" not in line[len(POINT) : -4] and line.endswith(" -->")
    assert parse_point(f"<!DOCTYPE html>\n{line}\n<html>") == (scope, period)


@settings(max_examples=300, deadline=None)
@given(a=TEXT.filter(bool), b=TEXT.filter(bool))
def test_a_milestone_s_report_file_is_a_plain_name_of_its_own(a: str, b: str) -> None:
    for name in (a, b):
        stem = slug(name)
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", stem) and len(stem) <= 80, stem
        path = report_path(name, "md")
        assert path.parent == REPORTS_DIR and path.name == f"{stem}.md"
        assert shlex.split(command_line(name, "md"))[-4:] == ["--format", "md", "--out", path.as_posix()]
        assert shlex.split(command_line(name, "md"))[3] == name  # the milestone, quoted for a shell
    if a != b:
        assert slug(a) != slug(b)


def test_a_report_that_is_not_text_is_named_and_the_next_report_starts_afresh(repo: Path) -> None:
    _, html_report = write_reports(repo)
    md = repo / report_path("v1", "md")
    md.write_bytes(b"<!-- tracker:report \xff -->\n")
    (line,) = reports_out_of_date(repo)
    assert line.startswith("plans/reports/v1.md: cannot be read: ")
    write_reports(repo)  # the HTML's record is read instead: the same period again
    assert reports_out_of_date(repo) == [] and html_report.is_file()
