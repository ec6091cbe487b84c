"""tracker/base/dirty.py: which files git does not track (``untracked``), on real repositories with hostile file names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text

import tracker
from tracker.base.dirty import untracked
from tracker.commands.common import pytest_command, pytest_env

NAME = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and not n.startswith(".git") and len(n.encode()) < 200
)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(NAME, st.sampled_from(["tracked", "ignored", "new"])),
        min_size=1,
        max_size=6,
        unique_by=lambda x: x[0],
    )
)
def test_untracked_names_exactly_the_files_git_does_not_track(files: list[tuple[str, str]]) -> None:
    """Names with spaces, quotes, glob characters (`*`, `[`), newlines, backslashes or non-ASCII are taken literally:
    a tracked `a*` does not hide an untracked `ab`, and an ignored file is told from one never added."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git(root, "init", "-q", "-b", "main")
        ev = root / "ev"
        ev.mkdir()
        for name, _ in files:
            (ev / name).write_text("x", encoding="utf-8")
        # each ignored name as a literal .gitignore pattern: every character that has a meaning there escaped; one with
        # a line end in it, or ending in a carriage return (git reads "\r\n" as a line end), no pattern can name
        ignored = [n for n, kind in files if kind == "ignored" and "\n" not in n and not n.endswith("\r")]
        (ev / ".gitignore").write_text(
            "".join("/" + "".join("\\" + c if c in "*?[]\\!# " else c for c in n) + "\n" for n in ignored),
            encoding="utf-8",
        )
        tracked = [n for n, kind in files if kind == "tracked"]
        if tracked:
            git(root, "add", "--", *(f":(literal)ev/{n}" for n in tracked))
        expected = {f"ev/{n}": n in ignored for n, kind in files if kind != "tracked"}
        assert untracked(root, [f"ev/{n}" for n, _ in files]) == expected


def test_outside_a_git_repository_nothing_is_claimed(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    assert untracked(tmp_path, ["a.json"]) == {}


CHECKOUT = Path(tracker.__file__).resolve().parent


def test_only_tracker_dirty_decides_whether_a_tree_is_dirty() -> None:
    """tracker.base.repo_root.head_commit was a second, unused definition of dirty (gitpython's is_dirty, which counts
    evidence files): any writer that picked it up would disagree with tracker.base.dirty.commit_state. Read as code
    (names in the syntax tree), not as text: a comment that names them changes no behaviour, and the comment rule
    (issue 31) lets such an edit leave this gate's phases done (adversarial round 10 made one fail the grep this was)."""
    import ast

    def names(tree: ast.AST) -> set[str]:
        found = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        found |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        found |= {a.name.rsplit(".", 1)[-1] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        found |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        return found

    users = [
        p.relative_to(CHECKOUT).as_posix()
        for p in CHECKOUT.rglob("*.py")
        if names(ast.parse(p.read_text(encoding="utf-8"))) & {"is_dirty", "head_commit"}
    ]
    assert users == []


TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


def _record(root: Path, **env: str) -> tuple[int, str, list[dict[str, object]]]:
    """A real ``pytest --tracker-record`` run in ``root``: exit code, output, the provenance of every evidence file."""
    import os
    import subprocess

    from tracker.commands.common import pytest_command, pytest_env

    environ = {k: v for k, v in pytest_env(root).items() if k not in ("TRACKER_COMMIT", "TRACKER_DIRTY")} | env
    proc = subprocess.run([*pytest_command(), "-q", "-p", "no:cacheprovider", "tests", "--tracker-record"], cwd=root,
                          env=environ, capture_output=True, text=True, timeout=120)  # fmt: skip
    files = sorted((root / ".tracker/evidence").glob("*.json"), key=os.path.getmtime)
    return proc.returncode, proc.stdout + proc.stderr, [json.loads(f.read_text())["provenance"] for f in files]


def test_the_plugin_s_dirty_is_tracker_dirty_s(repo, monkeypatch) -> None:
    from tracker.base.dirty import commit_state

    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.delenv("TRACKER_DIRTY", raising=False)
    root = repo(TESTS)
    (root / "bench/results").mkdir(parents=True)
    (root / "bench/results/r.json").write_text("{}\n")  # a result file is evidence, not a change of the code
    code, out, runs = _record(root)
    assert code == 0, out
    assert (runs[-1]["commit"], runs[-1]["dirty"]) == commit_state(root) and runs[-1]["dirty"] is False
    (root / "notes.txt").write_text("draft\n")
    code, out, runs = _record(root)
    assert (runs[-1]["commit"], runs[-1]["dirty"]) == commit_state(root) and runs[-1]["dirty"] is True


TEST_A = "def test_x():\n    assert True\n"


IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.log\n"


def evidence(root: Path, kind: str) -> list[dict[str, Any]]:
    """The store's files of one kind (by name: ``-signoff-``, ``-pytest-``, ``-verify-``), oldest first."""
    return [json.loads(p.read_text()) for p in sorted((root / ".tracker/evidence").glob(f"*-{kind}-*.json"))]


def record_run(root: Path) -> dict[str, Any]:
    """A real ``pytest --tracker-record`` run of tests/; its provenance."""
    cmd = [*pytest_command(), "-q", "-p", "no:cacheprovider", f"--rootdir={root}", "tests", "--tracker-record"]
    proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    newest = max((root / ".tracker/evidence").glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(newest.read_text())["provenance"]


@pytest.fixture
def signed(repo: Callable[..., Path]) -> Path:
    plan = plan_text("0001", phase("P1", 'test = "tests/test_a.py"', 'manual = "Reviewed"'))
    return repo({"plans/0001-a.md": plan, "tests/test_a.py": TEST_A, ".gitignore": IGNORE})


def signoff_dirty(root: Path, cli: Callable[..., Any]) -> bool | None:
    res = cli(root, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read it")
    assert res.code == 0, res.err
    return evidence(root, "signoff")[-1]["dirty"]


def test_evidence_the_tracker_wrote_never_makes_a_signoff_dirty_as_it_never_makes_a_recorded_run_dirty(
    signed: Path, cli: Callable[..., Any]
) -> None:
    # The same commit with the same untracked evidence file: the plugin and signoff agree (they used to differ).
    assert record_run(signed)["dirty"] is False  # the run wrote an untracked file into .tracker/evidence
    assert signoff_dirty(signed, cli) is False
    assert record_run(signed)["dirty"] is False  # and the sign-off's own file does not make the next run dirty
    # An ignored file is not a change; a result file in bench/results/ is evidence, not code.
    (signed / "run.log").write_text("noise\n")
    (signed / "bench/results").mkdir(parents=True)
    (signed / "bench/results/r.json").write_text("{}\n")
    assert signoff_dirty(signed, cli) is False


@pytest.mark.parametrize("change", ["untracked", "modified", "staged", "deleted"])
def test_a_changed_tree_is_dirty_for_every_writer(signed: Path, cli: Callable[..., Any], change: str) -> None:
    if change == "untracked":
        (signed / "notes.txt").write_text("draft\n")
    elif change == "modified":
        (signed / "tests/test_a.py").write_text(TEST_A + "\n# edited\n")
    elif change == "staged":
        (signed / "tests/test_b.py").write_text(TEST_A)
        git(signed, "add", "tests/test_b.py")
    else:
        git(signed, "rm", "-q", "--cached", ".gitignore")
    assert signoff_dirty(signed, cli) is True
    assert record_run(signed)["dirty"] is True


def test_tracker_commit_wins_over_git_for_signoff_as_for_the_plugin(
    signed: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "ab" * 20
    monkeypatch.setenv("TRACKER_COMMIT", other)
    monkeypatch.setenv("TRACKER_DIRTY", "1")
    assert signoff_dirty(signed, cli) is True and evidence(signed, "signoff")[-1]["commit"] == other
    monkeypatch.setenv("TRACKER_COMMIT", "HEAD")  # not a commit id: the file would be refused by every reader
    res = cli(signed, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "x")
    assert res.code == 3 and "TRACKER_COMMIT: expected 40 lowercase hex digits, got 'HEAD'" in res.err
    assert len(evidence(signed, "signoff")) == 1


def test_commit_state_rules(signed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.base.dirty import commit_state

    head = git(signed, "rev-parse", "HEAD").strip()
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    monkeypatch.setenv("TRACKER_DIRTY", "garbage")  # not used inside git: git decides
    assert commit_state(signed) == (head, False)
    (signed / ".tracker/evidence").mkdir(parents=True)
    (signed / ".tracker/evidence/x.json").write_text("{}")
    assert commit_state(signed) == (head, False)
    plain = tmp_path / "copy"  # a copy of the tree without .git: only the environment can say
    plain.mkdir()
    monkeypatch.setenv("TRACKER_DIRTY", "")
    assert commit_state(plain) == (None, None)
    monkeypatch.setenv("TRACKER_DIRTY", "yes")
    with pytest.raises(ValueError, match="TRACKER_DIRTY: expected '0' or '1'"):
        commit_state(plain)
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q")
    monkeypatch.setenv("TRACKER_DIRTY", "0")
    assert commit_state(unborn) == (None, False)


def test_the_commit_and_the_status_are_asked_side_by_side(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """commit_state runs git's rev-parse and status together (a recording session waits for one git call, not two):
    a git on PATH that takes 0.4 s longer (then runs the real git) logs when each call began and ended."""

    from tracker.base.dirty import commit_state

    root = repo({"a.py": "x = 1\n"})
    (root / "b.py").write_text("untracked\n")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    slow = tmp_path / "bin"
    slow.mkdir()
    log = tmp_path / "git.log"
    (slow / "git").write_text(
        f'#!/bin/sh\necho "start $(date +%s.%N)" >> {log}\nsleep 0.4\n'
        f'echo "end $(date +%s.%N)" >> {log}\nexec {shutil.which("git")} "$@"\n'
    )
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TRACKER_COMMIT", raising=False)
    assert commit_state(root) == (head, True)
    events = [line.split() for line in log.read_text().splitlines()]
    assert [kind for kind, _ in events] == ["start", "start", "end", "end"], events  # both began before either ended
