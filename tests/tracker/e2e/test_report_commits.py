"""The commits a milestone report lists under each phase, through the real CLI on a real git repository: a subject is
cut as it is shown, so padding the reader cannot see never hides its end, and each file a commit changed is one code
span (Markdown) or ``<code>`` (HTML), so that no file name reads as several."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from evidence_repo import commit_all, make_repo, phase_block

MD = "plans/reports/m.md"

PLAN = '# Plan 0001\n\n```plan\nid = "0001"\ntitle = "Plan 0001"\nmilestone = "m"\n```\n\n' + phase_block(
    "P1", ["src/**"], ['test = "tests/test_a.py"']
)
TRICK = "src/a, b (+7 more).py"  # one file, named like a list of nine
SUBJECT = "All gates pass" + "\u200b" * 60 + " NOT"


def test_a_subject_and_a_file_name_cannot_make_the_report_say_what_git_does_not(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": PLAN, "src/x.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    assert True\n"}
    root = make_repo(tmp_path / "repo", files)
    assert cli(root, "verify").code == 0
    assert cli(root, "report", "--milestone", "m", "--out", str(root / MD)).code == 0
    commit_all(root, "the first report")  # the next report's period starts where this one ended
    (root / TRICK).write_text("Y = 2\n", encoding="utf-8")
    (root / "src/x.py").write_text("X = 2\n", encoding="utf-8")
    commit_all(root, SUBJECT)
    time.sleep(1.05)  # evidence times are whole seconds: the period after the first report starts a second later
    assert cli(root, "verify").code == 0
    data = json.loads(cli(root, "report", "--milestone", "m", "--json").out)
    ((phase,),) = [plan["phases"] for plan in data["plans"]]
    listed = [c for c in phase["commits"] if c["subject"] == SUBJECT]
    assert listed and sorted(listed[0]["paths"]) == [TRICK, "src/x.py"]  # --json keeps both whole

    md = cli(root, "report", "--milestone", "m", "--format", "md").out
    line = next(x for x in md.splitlines() if "All gates pass" in x)
    assert "All gates pass NOT" in line and "…" not in line, line
    assert f"`{TRICK}`" in line and "`src/x.py`" in line, line

    html = cli(root, "report", "--milestone", "m", "--format", "html").out
    item = next(x for x in html.splitlines() if "All gates pass" in x)
    assert "All gates pass NOT" in item and "…" not in item, item
    assert f"<code>{TRICK}</code>" in item and "<code>src/x.py</code>" in item, item
