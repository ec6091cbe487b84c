"""What the generated regions of a plan file carry (tracker/report/render.py), through the real CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker_testutil import git, phase, plan_text

IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"
PLAN = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py"', 'manual = "Reviewed"') + phase("P2", 'test = "tests/test_b.py"')
)
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n", "tests/test_b.py": "def test_b():\n    assert False\n"}


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def test_a_verify_that_changes_no_verdict_leaves_the_plan_file_as_it_is(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Issue 24: the regions named each verdict's evidence (machine, commit, time), so every verify (a new run at a
    new commit) put the plan file out of date: `check` failed until `update` rewrote it, a plan diff in every pull
    request. They now change only when what they say does."""
    root = repo({"plans/0001-demo.md": PLAN, **TESTS, ".gitignore": IGNORE})
    assert cli(root, "verify").code == 1
    assert cli(root, "update").code == 0
    commit_all(root, "verified")
    plan = root / "plans/0001-demo.md"
    before, mtime = plan.read_bytes(), plan.stat().st_mtime_ns
    (root / "notes.txt").write_text("unrelated\n")
    commit_all(root, "another commit")
    r = cli(root, "verify", "--force")  # a new run of every test gate, at another commit, same verdicts
    assert r.code == 1 and "tracker: evidence .tracker/evidence/" in r.out, r.out + r.err
    assert cli(root, "update", "--check").code == 0
    assert cli(root, "check").code == 0
    assert cli(root, "update").code == 0
    assert (plan.read_bytes(), plan.stat().st_mtime_ns) == (before, mtime)
    # A verdict that changes is written: the status block says it.
    (root / "tests/test_b.py").write_text("def test_b():\n    pass\n")
    commit_all(root, "fixed")
    assert cli(root, "verify", "0001/P2").code == 0
    assert cli(root, "update", "--check").code == 1
    assert cli(root, "update").code == 0
    text = plan.read_text()
    assert text != before.decode() and "**Status: done** — 1/1 gates met" in text


def test_the_status_block_names_the_skips_a_gate_allows(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """Issue 30: a gate's ``skips_allowed`` is part of what it asks, so its row in the status block says it (quoted,
    on one line: a reason may hold a ``|`` or a backtick), next to the verdict that counts them."""
    gate = 'test = "tests/"\nmarker = "not slow"\nskips_allowed = ["win32 | only", "no `x`"]'
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", gate)), **TESTS, ".gitignore": IGNORE})
    assert cli(root, "update").code == 0
    text = (root / "plans/0001-demo.md").read_text()
    assert '| 1 | test `tests/` -m `not slow`, skips allowed: "win32 \\| only", "no `x`" | ❌ ' in text, text


HOSTILE = "<img src=http://e/p.png> ![x](http://e/q.png) [l](http://e/l) *em* &amp; <!-- hidden"


def test_the_regions_show_plan_and_evidence_text_as_text(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """Adversarial review F8 and L3: a phase title, a manual gate's text and a failing test's message (text the code
    under test controls) went into the plan file's regions with only ``|`` escaped: a live image (a tracking pixel in
    every pull request), a link, and an ``<!--`` that hid the rest of the region; a message holding ``\\|`` ended its
    table cell early. They now pass through the one escaper (``escape_markup``, as the Markdown report's ``|md``);
    the gate's code span stays one."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_b.py"', f'manual = "{HOSTILE}"')).replace(
        'title = "Phase P1"', f'title = "{HOSTILE}"'
    )
    failing = f'def test_b():\n    assert False, "{HOSTILE} a \\\\| b | c"\n'
    root = repo({"plans/0001-demo.md": plan, "tests/test_b.py": failing, ".gitignore": IGNORE})
    assert cli(root, "verify").code == 1
    assert cli(root, "update").code == 0
    text = (root / "plans/0001-demo.md").read_text()
    assert "a &#92;\\| b \\| c" in text, text
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    inline = [c for t in tokens if t.children for c in t.children]
    kinds = {c.type for c in inline}
    assert not {"image", "link_open", "html_inline", "em_open"} & kinds, sorted(kinds)
    assert not [t for t in tokens if t.type == "html_block" and not t.content.startswith("<!-- tracker:")], text
    assert ("code_inline", "tests/test_b.py") in {(c.type, c.content) for c in inline}
    rows = [t for t in tokens if t.type == "tr_open"]
    cells = [t for t in tokens if t.type in ("td_open", "th_open")]
    assert len(cells) == 3 * len(rows) and len(rows) == 2 + 3, text  # summary: head + P1; phase: head + 2 gates
