"""``tracker check`` (tracker/commands/check.py) on the report fixture repository (tests/tracker/report_fixture.py):
evidence the current statuses rest on that git does not track."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import report_fixture

R4 = ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
B2 = "bench/results/20261108T100000Z-gpu-box-attn-b2.json"


def _untracked(root: Path, cli) -> list[dict[str, str]]:
    problems = json.loads(cli(root, "check", "--json").out)["problems"]
    return [p for p in problems if p["kind"] == "untracked-evidence"]


def test_check_names_evidence_the_statuses_rest_on_that_git_does_not_track(tmp_path: Path, cli) -> None:
    """README's commit line once left bench/results/ out: a clone showed the benchmark phase planned. check names
    each such file (ignored: `git add -f`; never added: `git add`), fails (exit 1), and the line it prints fixes it."""
    root = report_fixture.build(tmp_path / "repo")
    assert _untracked(root, cli) == []  # the fixture commits all of its evidence
    (root / ".gitignore").write_text(".tracker/cache/\n.tracker/lock\nbench/results/\n", encoding="utf-8")
    report_fixture.git(root, "rm", "-q", "--cached", B2, R4)
    report_fixture.git(root, "commit", "-q", "-am", "results ignored, r4 dropped from the index")

    found = _untracked(root, cli)
    assert [(p["path"], p["phase"]) for p in found] == [(R4, "0001/P1"), (B2, "0001/P2")]
    r = cli(root, "check")
    assert r.code == 1 and r.err == ""
    lines = r.out.splitlines()
    assert (
        f"{R4}: git does not track it (never added), yet 0001/P1 gate 1, 0001/P3 gate 1 rest(s) on it: a clone would not see it (git add {R4})"
        in lines
    )
    assert (
        f"{B2}: git does not track it (ignored), yet 0001/P2 gate 1, 0001/P3 gate 2 rest(s) on it: a clone would not see it (git add -f {B2})"
        in lines
    )
    fix = f"tracker check: commit the evidence the statuses rest on: git add {R4} && git add -f {B2} && git commit"
    assert fix in lines and lines[-1].startswith("tracker check: ")

    subprocess.run(fix.split("rest on: ", 1)[1].removesuffix(" && git commit"), shell=True, cwd=root, check=True)
    assert _untracked(root, cli) == []  # staged is enough: the commit that follows holds them
    assert "commit the evidence" not in cli(root, "check").out


def test_untracked_evidence_outside_git_is_not_claimed(tmp_path: Path, cli) -> None:
    root = report_fixture.build(tmp_path / "repo")
    subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
    assert _untracked(root, cli) == []
