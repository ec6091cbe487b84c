"""Fixes of an adversarial review: ways the tracker could lie or stay silent (real git, pytest and files).

F1 a reportlog's keywords are not markers; F4 a JUnit timestamp without a time zone; F7 ``paths`` and
``--measure`` globs that match no file; F9 a symlinked plan stays a symlink; F10 a phase block inside a list
or quote; F11 one definition of "dirty".
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git, make_files, phase, plan_text

import tracker
from tracker.store.ingest import parse_junit, parse_reportlog

CHECKOUT = Path(tracker.__file__).resolve().parent


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real pytest session in ``root`` (its own process)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=root, capture_output=True, text=True, check=False)  # fmt: skip


def gate_of(cli: Callable[..., Any], root: Path) -> tuple[str, dict[str, Any]]:
    """(status of plan 0001's first phase, its first gate) from ``status --json``."""
    res = cli(root, "status", "--json")
    assert res.code == 0, res.out + res.err
    phase_json = json.loads(res.out)["plans"][0]["phases"][0]
    return phase_json["status"], phase_json["gates"][0]


# --- F11: one rule for commit and dirty ------------------------------------------------------------------


def test_only_tracker_dirty_decides_whether_a_tree_is_dirty() -> None:
    """tracker.base.repo_root.head_commit was a second, unused definition of dirty (gitpython's is_dirty, which counts
    evidence files): any writer that picked it up would disagree with tracker.base.dirty.commit_state."""
    users = [
        p.relative_to(CHECKOUT).as_posix()
        for p in CHECKOUT.rglob("*.py")
        if re.search(r"\bis_dirty\(|\bhead_commit\b", p.read_text())
    ]
    assert users == []


# --- F4: a JUnit timestamp without a time zone ---------------------------------------------------------------

JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="{failures}" '
         'skipped="0" tests="1" time="0.01" timestamp="{stamp}" hostname="ci"><testcase classname="tests.test_a" '
         'name="test_x" file="tests/test_a.py" time="0.001">{inner}</testcase></testsuite></testsuites>')  # fmt: skip


def junit(stamp: str, failed: bool = False) -> str:
    return JUNIT.format(stamp=stamp, failures=int(failed), inner="<failure message='boom'/>" if failed else "")


def test_a_junit_timestamp_without_a_time_zone_is_refused(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    """pytest before 8.3 writes local time without an offset: read as UTC, a run from west of UTC was backdated
    (an older pass then outranked a newer failure) and one from east of UTC was refused as future."""
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    naive = tmp_path / "junit.xml"
    naive.write_text(junit("2020-01-02T03:04:05.678901", failed=True))
    res = cli(root, "ingest", "--host", "ci", str(naive))
    assert res.code == 8, res.out + res.err
    assert res.err == (f"tracker: error: {naive}: testsuite timestamp '2020-01-02T03:04:05.678901' has no time zone (pytest "
                       "before 8.3 writes local time): record with pytest >= 8.3, --report-log or --tracker-record\n")  # fmt: skip
    assert not (root / ".tracker" / "evidence").exists() or not list((root / ".tracker" / "evidence").iterdir())


def test_a_junit_timestamp_with_an_offset_is_converted_to_utc() -> None:
    run = parse_junit(Path("j.xml"), data=junit("2020-01-02T22:04:05.5-05:00").encode())
    assert run.time == "2020-01-03T03:04:05Z"


def test_a_real_pytest_junit_file_is_ingested(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    """pytest >= 8.3 (this one) writes the offset: its files are taken as they are."""
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    proc = run_pytest(root, "tests", f"--junitxml={tmp_path / 'j.xml'}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = cli(root, "ingest", "--host", "ci", str(tmp_path / "j.xml"))
    assert res.code == 0 and "1 test(s), complete" in res.out, res.out + res.err


def test_a_future_junit_timestamp_with_a_time_zone_is_still_refused(
    repo: Callable[..., Path], cli: Callable[..., Any], tmp_path: Path
) -> None:
    root = repo({"tests/test_a.py": "def test_x(): pass\n"})
    (tmp_path / "j.xml").write_text(junit("2099-01-01T02:00:00+02:00"))
    res = cli(root, "ingest", str(tmp_path / "j.xml"))
    assert res.code == 8 and "2099-01-01T00:00:00Z is in the future" in res.err, res.err


# --- F1: a reportlog's keywords are not markers ----------------------------------------------------------------

PYTEST_INI = "[pytest]\nmarkers =\n    slow: slow tests\n"
IGNORED = ".tracker/cache/\n.tracker/lock\n__pycache__/\n*.jsonl\n*.xml\n"


@pytest.fixture(scope="module")
def marker_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Repositories a real ``tracker verify`` made done: ``not_slow`` gates ``tests -m 'not slow'`` over two
    unmarked tests, one in a directory named ``slow``; ``slow`` gates ``tests -m slow`` over two marked tests."""
    from tracker.cli import main

    layouts = {
        "not_slow": {"plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "not slow"')),
                     "tests/slow/test_x.py": "def test_fast():\n    assert True\n", "tests/test_ok.py": "def test_ok():\n    pass\n"},
        "slow": {"plans/0001-x.md": plan_text("0001", phase("P1", 'test = "tests"\nmarker = "slow"')),
                 "tests/test_a.py": "import pytest\n\n@pytest.mark.slow\ndef test_one():\n    assert True\n",
                 "tests/test_b.py": "import pytest\n\n@pytest.mark.slow\ndef test_two():\n    assert True\n"},
    }  # fmt: skip
    out = {}
    for name, files in layouts.items():
        root = tmp_path_factory.mktemp(name) / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        make_files(root, {**files, "pytest.ini": PYTEST_INI, ".gitignore": IGNORED})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "files")
        with pytest.raises(SystemExit) as exc:
            main(["--root", str(root), "verify", "0001/P1"])
        assert exc.value.code in (0, None)
        out[name] = root
    return out


# Until tracker/commands/ingest.py stores tracker.store.ingest.evidence_records / running_record (no markers key) and
# tracker/store/evidence.py's crashed_run keeps a running test without markers marker-blind, an ingested reportlog's
# records say "markers: []" (they used to hold its keywords). Strict: once both land, these pass and the mark goes.


def copy_of(marker_repos: dict[str, Path], name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(marker_repos[name], tmp_path / "repo", symlinks=True))


def fail_and_ingest_reportlog(cli: Callable[..., Any], root: Path, test_file: str, *pytest_args: str) -> None:
    """Break ``test_file``, commit, run plain pytest with ``--report-log`` on CI and ingest what it wrote."""
    path = root / test_file
    path.write_text(path.read_text().replace("assert True", "assert False"))
    git(root, "commit", "-q", "-am", "break it")
    run_pytest(root, "--report-log=rl.jsonl", *pytest_args)
    res = cli(root, "ingest", "--host", "ci", str(root / "rl.jsonl"))
    assert res.code == 0, res.out + res.err


def test_a_directory_named_like_a_marker_does_not_hide_a_failure(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                 tmp_path: Path) -> None:  # fmt: skip
    """The review's reproduction: the failing test's reportlog keywords hold ``slow`` (its directory), and
    read as markers, ``not slow`` dropped it: the phase stayed done, "1 passed"."""
    root = copy_of(marker_repos, "not_slow", tmp_path)
    assert gate_of(cli, root)[0] == "done"
    fail_and_ingest_reportlog(cli, root, "tests/slow/test_x.py", "tests")
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert (
        gate["reason"].startswith("tests/slow/test_x.py::test_fast: failed")
        and "(1 of 2 not passing)" in gate["reason"]
    ), gate


def test_a_reportlog_of_part_of_a_marker_gate_cannot_drop_its_failure(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                      tmp_path: Path) -> None:  # fmt: skip
    """Keywords are not markers either way: a reportlog whose records said "no markers" dropped its failing
    test from ``-m slow`` and the other test's older pass met the gate. Its records say nothing of markers:
    the outcome of a test a run with markers selected still counts."""
    root = copy_of(marker_repos, "slow", tmp_path)
    assert gate_of(cli, root)[0] == "done"
    fail_and_ingest_reportlog(cli, root, "tests/test_a.py", "tests/test_a.py")
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert gate["reason"].startswith("tests/test_a.py::test_one: failed"), gate


def test_a_reportlog_crash_inside_a_marked_test_regresses_its_gate(marker_repos: dict[str, Path], cli: Callable[..., Any],
                                                                   tmp_path: Path) -> None:  # fmt: skip
    """The test a crashed reportlog session stopped inside is an error of that run: its record must not say
    "no markers" either, or ``-m slow`` drops it and the other test's pass meets the gate."""
    root = copy_of(marker_repos, "slow", tmp_path)
    path = root / "tests/test_a.py"
    path.write_text(path.read_text().replace("assert True", "import os; os._exit(1)"))
    git(root, "commit", "-q", "-am", "crash it")
    run_pytest(root, "--report-log=rl.jsonl", "tests")
    res = cli(root, "ingest", "--host", "ci", str(root / "rl.jsonl"))
    assert res.code == 0 and "only tests/test_a.py::test_one counts, as an error" in res.out, res.out + res.err
    status, gate = gate_of(cli, root)
    assert status == "regressed" and gate["failed"] is True, gate
    assert gate["reason"].startswith("tests/test_a.py::test_one: error"), gate


def test_reportlog_and_junit_evidence_records_say_nothing_of_markers(tmp_path: Path) -> None:
    """What ingest stores for a reportlog: records without a ``markers`` key (marker-blind, as testgate reads
    them), whatever the keywords (here the marker ``slow``, the directory ``slow``, the parametrize id ``gpu``)."""
    from tracker.store.ingest import evidence_records, running_record

    make_files(tmp_path, {"pytest.ini": PYTEST_INI + "    gpu: gpu\n",
                          "tests/slow/test_k.py": "import pytest\n\n@pytest.mark.slow\n@pytest.mark.parametrize('x', [1], ids=['gpu'])\n"
                                                  "def test_k(x):\n    pass\n"})  # fmt: skip
    proc = run_pytest(tmp_path, "--report-log=rl.jsonl", "--junitxml=j.xml", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    keywords = {
        k for line in (tmp_path / "rl.jsonl").read_text().splitlines() for k in json.loads(line).get("keywords", {})
    }
    assert {"slow", "gpu"} <= keywords  # what the parser used to read as markers
    for run in (parse_reportlog(tmp_path / "rl.jsonl"), parse_junit(tmp_path / "j.xml", tmp_path)):
        assert evidence_records(run) == [{"nodeid": "tests/slow/test_k.py::test_k[gpu]", "outcome": "passed", "reason": "",
                                          "duration": evidence_records(run)[0]["duration"]}]  # fmt: skip
        assert all(not o.markers for o in run.outcomes) and running_record(run) is None
        assert any("no markers" in loss for loss in run.losses)


# --- F10: a phase block inside a list or a quote -----------------------------------------------------------------

NESTED_PLAN = (plan_text("0001", phase("P1", 'manual = "reviewed"'))
               + "  ```phase\nid = \"P2\"\ntitle = \"indented, still top level\"\n[[gate]]\nmanual = \"ok\"\n```\n\n"
               + "Steps:\n\n1. first\n\n   ```phase\n   id = \"P3\"\n   title = \"in a list item\"\n   [[gate]]\n   manual = \"ok\"\n   ```\n\n"
               + "> ```phase\n> id = \"P4\"\n> title = \"in a quote\"\n> ```\n\n"
               + "- > ~~~~plan\n  > id = \"0002\"\n  > ~~~~\n")  # fmt: skip


def test_lint_warns_about_a_phase_block_inside_a_list_or_quote(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Only top-level fences are read: a phase inside a list item or a quote was silently missing, lint said OK."""
    root = repo({"plans/0001-x.md": NESTED_PLAN})
    lines = NESTED_PLAN.split("\n")
    where = [
        i + 1
        for i, line in enumerate(lines)
        if re.search(r"(```|~~~~)(phase|plan)", line) and not line.startswith(("```", "  ```"))
    ]
    res = cli(root, "lint")
    assert res.code == 0, res.out + res.err
    assert res.out.splitlines() == [
        f"plans/0001-x.md:{where[0]}: warning: a phase block inside a list or quote is prose, not read (move it to the top level)",
        f"plans/0001-x.md:{where[1]}: warning: a phase block inside a list or quote is prose, not read (move it to the top level)",
        f"plans/0001-x.md:{where[2]}: warning: a plan block inside a list or quote is prose, not read (move it to the top level)",
        "1 plan file(s) OK, 3 warning(s)",
    ]
    doc = json.loads(cli(root, "status", "--json").out)
    assert [p["id"] for p in doc["plans"][0]["phases"]] == ["P1", "P2"]


def test_lint_says_nothing_of_top_level_blocks(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    root = repo(
        {
            "plans/0001-x.md": "\ufeff"
            + plan_text("0001", phase("P1", 'manual = "reviewed"'))
            + '- a list\n\n```phase\nid = "P2"\ntitle = "t"\n[[gate]]\nmanual = "ok"\n```\n'
        }
    )
    res = cli(root, "lint")
    assert (res.code, res.out) == (0, "1 plan file(s) OK\n"), res.out + res.err


MD_PIECES = st.sampled_from(
    ["- ", "* ", "+ ", "1. ", "2) ", "> ", " ", "  ", "   ", "    ", "\t", "", "text", "\n", "\n\n"]
)
FENCES = st.sampled_from(
    ["```phase", "~~~plan", "````phase x", "```plan", "``` phase", "~~~~ plan", "```phase\n```", "```"]
)


@st.composite
def markdown(draw: st.DrawFn) -> str:
    """Lines of list markers, quotes, indentation and text around plan/phase fences, nested in any order."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        prefix = "".join(draw(st.lists(MD_PIECES, max_size=6)))
        lines.append(prefix + (draw(FENCES) if draw(st.booleans()) else draw(st.sampled_from(["id = 1", "", "x"]))))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


@settings(max_examples=400, deadline=None)
@given(text=markdown())
def test_the_prefilter_never_skips_a_file_with_a_nested_block(text: str) -> None:
    """lint parses a plan file for nested blocks only when MAYBE_NESTED finds a line that may open one."""
    from tracker.commands.lint import MAYBE_NESTED
    from tracker.plans.parse import nested_blocks

    if nested_blocks(text):
        assert MAYBE_NESTED.search(text) is not None


@pytest.mark.slow
@settings(max_examples=20000, deadline=None)
@given(text=markdown())
def test_the_prefilter_never_skips_a_file_with_a_nested_block_deep(text: str) -> None:
    test_the_prefilter_never_skips_a_file_with_a_nested_block.hypothesis.inner_test(text)  # type: ignore[attr-defined]


# --- F9: a symlinked plan stays a symlink --------------------------------------------------------------------------


def linked_plan(repo: Callable[..., Path]) -> Path:
    """A repository whose plan lives in docs/plan.md, linked from plans/0001-x.md."""
    root = repo({"docs/plan.md": plan_text("0001", phase("P1", 'manual = "reviewed"'))}, commit=False)
    (root / "plans").mkdir()
    (root / "plans/0001-x.md").symlink_to("../docs/plan.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    return root


def test_update_writes_a_symlinked_plan_through_its_link(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """fileio's atomic rename replaced the link itself with a regular file: the plan in docs/ never changed
    again, and the repository held two diverging copies."""
    root = linked_plan(repo)
    res = cli(root, "update")
    assert (res.code, res.out) == (0, "updated 1 plan file(s): plans/0001-x.md\n"), res.out + res.err
    link = root / "plans/0001-x.md"
    assert link.is_symlink() and str(link.readlink()) == "../docs/plan.md"
    assert (root / "docs/plan.md").read_text().count("tracker:begin") == 2
    assert sorted(p.name for p in (root / "plans").iterdir()) == ["0001-x.md"]
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["plan.md"]  # no temp file left behind
    assert (cli(root, "update", "--check").code, git(root, "status", "--porcelain", "plans")) == (0, "")


def test_update_removes_a_stale_temp_file_beside_a_linked_plan(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """The temp file of a write through a link is created beside the target: an interrupted run leaves it there."""
    import os
    import time

    root = linked_plan(repo)
    stale = root / "docs" / ".plan.md.0123456789ab.tmp"
    stale.write_text("half-way")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    res = cli(root, "update")
    assert (
        res.code == 0
        and res.out.splitlines()[0] == "removed docs/.plan.md.0123456789ab.tmp (left behind by an interrupted run)"
    )
    assert not stale.exists()


def test_a_write_through_a_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    """A link retargeted out of the repository after the plan was read is not written through."""
    from tracker.base.fileio import write_text_if_changed
    from tracker.errors import FileError

    outside = tmp_path / "outside.md"
    outside.write_text("old")
    root = tmp_path / "repo"
    (root / "plans").mkdir(parents=True)
    (root / "plans/0001-x.md").symlink_to(outside)
    with pytest.raises(
        FileError, match=r"plans/0001-x\.md: refused: it resolves to .*outside\.md, outside the repository"
    ):
        write_text_if_changed(root / "plans/0001-x.md", "old", "new", root=root)
    assert outside.read_text() == "old" and (root / "plans/0001-x.md").is_symlink()


# --- F7: paths and --measure globs that match no file ---------------------------------------------------------------

PATHS_PLAN = plan_text("0001", phase("P1", 'manual = "reviewed"', paths='"src", "tests/", "srcc/**", "src/*.py"')
                       + '```phase\nid = "P2"\ntitle = "t"\npaths = [\n  "docs/**",\n  "lib",\n]\n[[gate]]\nmanual = "ok"\n```\n')  # fmt: skip


def test_lint_warns_about_a_paths_glob_that_matches_no_file(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """``paths = ["src"]`` matches a file named src, not the directory: the phase never went stale, lint said OK."""
    root = repo({"plans/0001-x.md": PATHS_PLAN, "src/a.py": "x = 1\n", "tests/test_a.py": "def test_a(): pass\n",
                 "docs/x.md": "d\n"})  # fmt: skip
    (root / "lib").mkdir()
    (root / "lib" / "new.py").write_text("untracked, not ignored: status fingerprints it\n")
    lines = PATHS_PLAN.split("\n")
    p1, lib = lines.index('paths = ["src", "tests/", "srcc/**", "src/*.py"]') + 1, lines.index('  "lib",') + 1
    res = cli(root, "lint")
    assert res.code == 0, res.out + res.err
    assert res.out.splitlines() == [
        f"plans/0001-x.md:{p1}: warning: phase P1: paths glob 'src' matches no file (did you mean 'src/'?)",
        f"plans/0001-x.md:{p1}: warning: phase P1: paths glob 'srcc/**' matches no file",
        f"plans/0001-x.md:{lib}: warning: phase P2: paths glob 'lib' matches no file (did you mean 'lib/'?)",
        "1 plan file(s) OK, 3 warning(s)",
    ]
    doc = json.loads(cli(root, "lint", "--json").out)
    assert [(w["line"], w["message"]) for w in doc["warnings"]][:1] == [
        (p1, "warning: phase P1: paths glob 'src' matches no file (did you mean 'src/'?)")
    ]


def test_a_paths_glob_that_matches_no_file_never_makes_its_phase_stale(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Why the warning matters: with ``paths = ["src"]`` a signed-off phase stays done whatever src/ becomes."""
    root = repo({"plans/0001-x.md": plan_text("0001", phase("P1", 'manual = "reviewed"', paths='"src"')), "src/a.py": "x = 1\n",
                 ".gitignore": ".tracker/cache/\n.tracker/lock\n"})  # fmt: skip
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "read it").code == 0, "signoff"
    (root / "src/a.py").write_text("x = 2\n")
    assert gate_of(cli, root)[0] == "done"
    assert "paths glob 'src' matches no file (did you mean 'src/'?)" in cli(root, "lint").out


BENCH_GATE = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 5.0'
ONE_CASE = (
    "--metric",
    "app.latency_ms",
    "--unit",
    "ms",
    "--direction",
    "lower",
    "--param",
    "size=1000",
    "--sample",
    "3,3.5",
)


def bench_repo(repo: Callable[..., Path]) -> Path:
    return repo({"plans/0001-x.md": plan_text("0001", phase("P1", BENCH_GATE, paths='"src/**"')), "src/app.py": "x = 1\n",
                 "bench/harness.py": "run = 1\n", ".gitignore": ".tracker/cache/\n.tracker/lock\n"})  # fmt: skip


def test_result_new_refuses_a_measure_glob_that_matches_no_file(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    """Only the union of the globs had to match: ``--measure src`` beside a matching glob recorded the file it
    matched, and a typo was silently dropped."""
    root = bench_repo(repo)
    res = cli(
        root,
        "result",
        "new",
        "latency",
        *ONE_CASE,
        "--measure",
        "src",
        "--measure",
        "bench/*.py",
        "--measure",
        "srcc/**",
    )
    assert res.code == 3, res.out + res.err
    assert res.err == ("tracker: error: --measure 'src': no file of the working tree matches it (did you mean 'src/'?); "
                       "--measure 'srcc/**': no file of the working tree matches it\n")  # fmt: skip
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "../src/**")
    assert res.code == 3 and "--measure: glob '../src/**' has a '.' or '..' segment" in res.err, res.err
    assert not (root / "bench" / "results").exists()


def test_result_new_warns_when_no_measured_file_is_under_the_gated_phases_paths(repo: Callable[..., Path],
                                                                                 cli: Callable[..., Any]) -> None:  # fmt: skip
    """A result measuring only the harness meets P1's gate, and editing src/ (P1's paths) never makes it stale."""
    root = bench_repo(repo)
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "bench/harness.py")
    assert res.code == 0 and res.out.startswith("wrote bench/results/"), res.out + res.err
    assert res.err == ("tracker: warning: phase 0001/P1 gates app.latency_ms, but no measured file is under its paths (src/**): "
                       "editing its code will never make this result stale\n")  # fmt: skip
    (root / "src/app.py").write_text("x = 2\n")
    assert gate_of(cli, root)[0] == "done"  # what the warning is about
    res = cli(root, "result", "new", "latency", *ONE_CASE, "--measure", "src/**", "--measure", "bench/harness.py")
    assert (res.code, res.err) == (0, ""), res.out + res.err
    (root / "src/app.py").write_text("x = 3\n")
    assert gate_of(cli, root)[0] == "stale"


# --- properties over hostile input ----------------------------------------------------------------------------------

STAMPS = st.one_of(
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    st.text(alphabet="0123456789-T:Z+. ", max_size=32),
    st.sampled_from(["2026-02-30T11:02:03", "2026-11-29 11:02:03", "2026-11-29", "2026-11-29T11:02:03z", "24:00"]),
)


@settings(max_examples=400, deadline=None)
@given(stamp=STAMPS)
def test_a_junit_timestamp_is_read_only_with_its_time_zone(stamp: str) -> None:
    """Whatever the timestamp: a UTC time when it has a zone, else IngestError (no zone, or not a time)."""
    from tracker.base.contract import utc_time
    from tracker.store.ingest import IngestError

    try:
        run = parse_junit(Path("j.xml"), data=junit(stamp).encode())
    except IngestError as err:
        assert utc_time(stamp) is None
        assert ("has no time zone (pytest before 8.3" in str(err)) == (utc_time(stamp + "+00:00") is not None)
    else:
        assert run.time == utc_time(stamp) and run.time is not None


GLOB_CHARS = st.one_of(
    st.text(alphabet=st.sampled_from("ab/*?.[]!-_ \\'\"é"), min_size=1, max_size=12),
    st.sampled_from(["ok", "t", "P1", "gate", "manual", "[[gate]]", "a = 1"]),
)  # what other lines hold


@st.composite
def phase_with_paths(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A plan text whose phase P1 has a ``paths`` array of valid globs (quotes and backslashes included), written
    on one line or spread over several, with prose and another phase around it."""
    from tracker.base.globs import glob_problem

    globs = [g for g in draw(st.lists(GLOB_CHARS, min_size=1, max_size=5, unique=True)) if glob_problem(g) is None]
    sep = draw(st.sampled_from([", ", ",\n  ", " ,\n"]))
    items = sep.join(json.dumps(g, ensure_ascii=draw(st.booleans())) for g in globs)
    body = f'```phase\nid = "P1"\ntitle = "t"\n# paths = ["decoy"]\npaths = [{items}]\n[[gate]]\nmanual = "ok"\n```\n'
    before = draw(st.sampled_from(["", 'prose with paths = ["x"]\n\n', phase("P0", 'manual = "m"', paths='"a/**"')]))
    return plan_text("0001", before + body), globs


@settings(max_examples=300, deadline=None)
@given(case=phase_with_paths())
def test_an_unmatched_glob_is_warned_about_inside_its_phase(case: tuple[str, list[str]]) -> None:
    from tracker.commands.lint import _glob_line
    from tracker.plans.parse import parse_plan

    text, globs = case
    plan, problems = parse_plan("plans/0001-x.md", text)
    assert plan is not None and not problems, problems
    ph = next(p for p in plan.phases if p.id == "P1")
    lines = text.split("\n")
    for glob in globs:
        line = _glob_line(text, ph, glob)
        # A line of the phase's ``paths`` array (its own, where written without escapes): never the comment above.
        paths_line = next(i + 1 for i in range(ph.line, ph.end_line) if lines[i].startswith("paths = ["))
        assert paths_line <= line < ph.end_line and not lines[line - 1].startswith("[[gate]]")
        if line != paths_line:
            assert f'"{glob}"' in lines[line - 1] or f"'{glob}'" in lines[line - 1]


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(stamp=STAMPS)
def test_a_junit_timestamp_is_read_only_with_its_time_zone_deep(stamp: str) -> None:
    test_a_junit_timestamp_is_read_only_with_its_time_zone.hypothesis.inner_test(stamp)  # type: ignore[attr-defined]


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(case=phase_with_paths())
def test_an_unmatched_glob_is_warned_about_inside_its_phase_deep(case: tuple[str, list[str]]) -> None:
    test_an_unmatched_glob_is_warned_about_inside_its_phase.hypothesis.inner_test(case)  # type: ignore[attr-defined]


# --- a bench gate whose where, baseline or threshold is not a finite number --------------------------------------


def test_non_finite_bench_gate_values_are_plan_problems_at_their_line() -> None:
    """NaN equals nothing, itself included: a ``where = { id = nan }`` gate could never be met, and the parsed plan
    was not equal to itself (the parse cache round trip, found by test_props_parse's property)."""
    from tracker.plans.parse import parse_plan

    gate = 'bench = "m.x"\nat_least = nan\nwhere = { id = nan, b = 1.5 }\nbaseline = { c = -inf }'
    text = plan_text("0001", phase("P1", gate) + phase("P2", 'bench = "m.x"\nat_most = inf'))
    lines = text.split("\n")
    at = {
        key: lines.index(next(line for line in lines if line.startswith(key))) + 1
        for key in ("at_least", "where", "baseline", "at_most")
    }
    assert parse_plan("plans/0001-x.md", text)[1] == [
        f"plans/0001-x.md:{at['where']}: phase P1 gate 1: where.id = nan: not a finite number (no result's parameter equals it)",
        f"plans/0001-x.md:{at['baseline']}: phase P1 gate 1: baseline.c = -inf: not a finite number (no result's parameter equals it)",
        f"plans/0001-x.md:{at['at_least']}: phase P1 gate 1: at_least: Input should be a finite number",
        f"plans/0001-x.md:{at['at_most']}: phase P2 gate 1: at_most: Input should be a finite number",
    ]
