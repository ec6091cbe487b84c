"""The commits a milestone report lists under each phase, through the real CLI on a real git repository: a subject
(and an author's name) is cut as it is shown, so padding the reader cannot see never hides its end and no input makes
a line long; each file a commit changed is one code span (Markdown) or ``<code>`` (HTML), with what would not show as
itself escaped, so that no file name reads as several, as another, or as none. The names and subjects are a helper's
attacks on the first cut (2026-12-06): each made the report read otherwise than git."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from evidence_repo import make_repo, phase_block

MD = "plans/reports/m.md"
PLAN = '# Plan 0001\n\n```plan\nid = "0001"\ntitle = "Plan 0001"\nmilestone = "m"\n```\n\n' + phase_block(
    "P1", ["src/**"], ['test = "tests/test_a.py"']
)
LONG = "/".join(["d" * 200] * 250) + "/f.py"  # 50 kB: git takes it through the index, no file system holds it
# (subject, author, file names under src/ as bytes, paths only in the index): one commit each
COMMITS = [
    ("All gates pass" + "\u200b" * 60 + " NOT", "Ada", [b"a, b (+7 more).py", b"x.py"], ()),
    ("Filler pass" + "\u3164" * 60 + " NOT", "Ada", [b"y.py"], ()),
    ("Trick pipe", "Ada", [b"a\\|, src/b.py, src/c.py (+7 more)"], ()),
    ("Pipe name `a|b`", "Ada", [b"a|b.py"], ()),
    ("Newline name", "Ada", [b"n1.py\nsrc/n2.py"], ()),
    ("ZW name", "Ada", [b"z\xe2\x80\x8b.py"], ()),
    ("Fix " + "\u200d".join("A" * 20000), "B" * 60000, [b"w.py"], (LONG,)),
]


def commit(root: Path, subject: str, author: str, names: list[bytes], index_only: tuple[str, ...]) -> None:
    for name in names:
        path = os.path.join(os.fsencode(root), b"src", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"Y = 2\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": "e@e"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    for name in index_only:
        blob = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=root, input=b"Y = 3\n", check=True, capture_output=True
        ).stdout.decode()
        info = f"100644,{blob.strip()},src/{name}"
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", info], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", subject], cwd=root, check=True, env=env)


def test_commit_lines_say_what_git_says(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": PLAN, "src/x.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    assert True\n"}
    root = make_repo(tmp_path / "repo", files)
    assert cli(root, "verify").code == 0
    assert cli(root, "report", "--milestone", "m", "--out", str(root / MD)).code == 0
    time.sleep(1.05)  # commit times are whole seconds: a commit in the first evidence's second is the first period's
    commit(root, "the first report", "t", [], ())  # the next report's period starts where this one ended
    for c in COMMITS:
        commit(root, *c)
    time.sleep(1.05)  # evidence times are whole seconds: the period after the first report starts a second later
    cli(root, "verify")  # (a name that is not UTF-8 aside, the phase's test passes)
    data = json.loads(cli(root, "report", "--milestone", "m", "--json").out)
    ((phase,),) = [plan["phases"] for plan in data["plans"]]
    assert {c["subject"] for c in phase["commits"]} >= {s for s, *_ in COMMITS[-5:]}  # --json keeps them whole
    md = cli(root, "report", "--milestone", "m", "--format", "md").out
    html = cli(root, "report", "--milestone", "m", "--format", "html").out
    assert cli(root, "report", "--milestone", "m", "--format", "md").code == 0

    def lines(mark: str) -> tuple[str, str]:
        return next(x for x in md.splitlines() if mark in x), next(x for x in html.splitlines() if mark in x)

    # the newest five are listed (the report's cap): these
    m, h = lines("Trick pipe")
    assert m.endswith("): `src/a\\\\|, src/b.py, src/c.py (+7 more)`"), m  # one code span: one file
    assert "<code>src/a\\\\|, src/b.py, src/c.py (+7 more)</code>" in h, h
    m, h = lines("Pipe name")
    assert "Pipe name `a|b` (Ada): `src/a|b.py`" in m, m  # a list item is no table: no \| in a code span
    m, h = lines("Newline name")
    assert m.endswith("`src/n1.py\\nsrc/n2.py`") and "<code>src/n1.py\\nsrc/n2.py</code>" in h, (m, h)
    m, h = lines("ZW name")
    assert m.endswith("`src/z\\u200b.py`") and "<code>src/z\\u200b.py</code>" in h, (m, h)
    m, h = lines("Fix A")
    assert len(m.encode()) < 1000 and len(h.encode()) < 1500, (len(m.encode()), len(h.encode()))
    assert "…d" in m and "d/f.py`" in m and "(BBBB" in m, m
    for mark in ("All gates pass", "Filler pass"):  # older than the newest five: counted, not listed (json alike)
        assert mark not in md
    assert phase["more_commits"] == 2 and "(2 more not listed)" in md


def test_padding_and_a_list_shaped_file_name_cannot_change_what_a_commit_line_says(tmp_path: Path, cli: Any) -> None:
    files = {"plans/0001-p.md": PLAN, "src/x.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    assert True\n"}
    root = make_repo(tmp_path / "repo", files)
    assert cli(root, "verify").code == 0
    assert cli(root, "report", "--milestone", "m", "--out", str(root / MD)).code == 0
    time.sleep(1.05)
    commit(root, "the first report", "t", [], ())
    for c in COMMITS[:2]:
        commit(root, *c)
    time.sleep(1.05)
    assert cli(root, "verify").code == 0
    md = cli(root, "report", "--milestone", "m", "--format", "md").out
    html = cli(root, "report", "--milestone", "m", "--format", "html").out
    for text in (md, html):
        assert "All gates pass NOT" in text and "Filler pass NOT" in text
    line = next(x for x in md.splitlines() if "All gates pass" in x)
    assert "`src/a, b (+7 more).py`" in line and "`src/x.py`" in line, line
    item = next(x for x in html.splitlines() if "All gates pass" in x)
    assert "<code>src/a, b (+7 more).py</code>" in item and "<code>src/x.py</code>" in item, item
