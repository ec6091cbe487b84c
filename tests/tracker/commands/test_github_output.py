"""``--format github`` of ``check``, ``verify`` and ``lint`` (issue 29, part 2): a real git repository whose one plan
has one of each problem (a failing test gate, a regressed bench gate, a stale phase, an undecided bench gate, a lint
problem), every output line held to GitHub's workflow command syntax by a strict parser; and ``report --format github
--since REV``, the pull request's summary, across two commits."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gh_annotations import commands_in
from resultfiles import case, result, write
from tracker_testutil import git, make_files

# --- the repository -----------------------------------------------------------------------------------------------

GATE_FAIL = 'test = "tests/test_fail.py"'
GATE_REGRESS = 'bench = "m.time_us"\nwhere = { impl = "cuda" }\nat_most = 200.0'
GATE_STALE = 'bench = "s.time_us"\nwhere = { impl = "cuda" }\nat_most = 200.0'
GATE_UNDECIDED = 'bench = "u.time_us"\nwhere = { impl = "cuda" }\nat_most = 1.05\nmin_samples = 5'
GATE_LINT = 'manual = "Describe what a reviewer must confirm before this phase counts as done"'  # the template's


def block(pid: str, title: str, gate: str, paths: str = "") -> str:
    head = f'```phase\nid = "{pid}"\ntitle = "{title}"\n' + (f"paths = [{paths}]\n" if paths else "")
    return head + f"\n[[gate]]\n{gate}\n```\n\n"


# A plan path and titles holding what the annotation syntax must escape: a comma, colons, a percent sign.
PLAN_PATH = "plans/0001-ci,a:b%.md"
PLAN = (
    '# CI\n\n```plan\nid = "0001"\ntitle = "CI: 100% of it, or not"\n```\n\n'
    + block("P1", "Fails, always: 50%", GATE_FAIL)
    + block("P2", "Regressed", GATE_REGRESS)
    + block("P3", "Stale", GATE_STALE, paths='"kernel/**"')
    + block("P4", "Undecided", GATE_UNDECIDED)
    + block("P5", "Lint", GATE_LINT)
)
FAIL = (
    "import sys\n\n\ndef test_fails():\n"
    "    print('::error file=x.py,line=1::injected by a test')\n"
    "    print('##[error]old style, injected by a test', file=sys.stderr)\n"
    "    assert False\n"
)
IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"


def put(root: Path, name: str, metric: str, samples: list[float], time: str) -> None:
    doc = result([case(metric, {"impl": "cuda"}, samples)], time=time, files={"kernel/k.cu": b"// k\n"})
    write(root / "bench/results" / name, {**doc, "provenance": {**doc["provenance"], "commit": None}})


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


def line_of(root: Path, phase: str, nth_gate: bool = True) -> int:
    """The 1-based line of ``phase``'s ``[[gate]]`` (its only gate) in the plan file."""
    lines = (root / PLAN_PATH).read_text(encoding="utf-8").splitlines()
    start = lines.index(f'id = "{phase}"')
    return next(i for i in range(start, len(lines)) if lines[i] == "[[gate]]") + 1


@pytest.fixture
def problems(tmp_path: Path, cli: Callable[..., Any]) -> Path:
    """The repository with one of each problem, committed, its plan regions up to date."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {PLAN_PATH: PLAN, "tests/test_fail.py": FAIL, "tests/test_ok.py": "def test_ok():\n    pass\n"}
    make_files(root, {**files, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(root, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")  # P2 met, then
    put(root, "r2.json", "m.time_us", [400.0] * 5, "2026-11-29T11:00:00Z")  # missed: regressed
    put(root, "r3.json", "s.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")  # P3 met on kernel/k.cu as it was
    straddle = [0.95, 1.02, 1.10, 0.97, 1.04, 0.99, 1.06]
    put(root, "r4.json", "u.time_us", straddle, "2026-11-29T10:00:00Z")  # P4: inside its noise
    commit(root, "plans, tests, results")
    (root / "kernel/k.cu").write_text("int k = 1;\n")  # P3 stale (code, not a comment: that would be no change)
    commit(root, "the kernel changes")
    assert cli(root, "update").code == 0
    commit(root, "regions")
    return root


def test_check_annotates_the_regression_as_an_error_and_the_undecided_gate_as_a_warning(
    problems: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = cli(problems, "check", "--format", "github")
    assert r.code == 1, r.out + r.err
    annotations, others = commands_in(r.out)
    assert [(a.level, a.props["file"], a.props["line"], a.props["title"]) for a in annotations] == [
        ("error", PLAN_PATH, str(line_of(problems, "P2")), "tracker check: regressed 0001/P2 gate 1"),
        ("warning", PLAN_PATH, str(line_of(problems, "P4")), "tracker check: undecided 0001/P4 gate 1"),
    ]
    assert annotations[0].message.startswith("0001/P2: regressed: gate 1: ")
    assert annotations[1].message.startswith("0001/P4: gate 1: undecided: ")
    assert others == ["tracker check: 1 problem(s), 1 warning(s)", ""]
    # a stale phase, a failing one, are no failure of check's: it names neither (verify does, below)
    phases = json.loads(cli(problems, "status", "--json").out)["plans"][0]["phases"]
    assert [p["status"] for p in phases][:3] == ["planned", "regressed", "stale"]
    # the same exit, the same problems as the text and --json forms
    assert cli(problems, "check").code == 1
    doc = json.loads(cli(problems, "check", "--format", "json").out)
    assert [p["message"] for p in doc["problems"] + doc["warnings"]] == [
        "0001/P2: " + annotations[0].message.removeprefix("0001/P2: "),
        "warning: " + annotations[1].message,
    ]
    assert set(doc["problems"][0]) == {"kind", "path", "phase", "message"}  # --json's shape as it was
    # the step summary: appended after what an earlier step wrote, never truncated
    text = summary.read_text()
    assert text.startswith("earlier step\n### ❌ tracker check: 1 problem(s), 1 warning(s)\n")
    assert "| error | `plans/0001-ci,a:b%.md:" in text and "| warning |" in text
    cli(problems, "check", "--format", "github")
    assert summary.read_text().count("### ❌ tracker check") == 2


def test_a_step_summary_that_cannot_be_written_is_said_and_changes_no_exit(
    problems: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a directory
    r = cli(problems, "check", "--format", "github")
    assert r.code == 1 and "cannot append the summary to $GITHUB_STEP_SUMMARY" in r.err
    assert "Traceback" not in r.err


def test_verify_annotates_each_gate_not_met_at_its_line_and_stops_commands_around_pytest(
    problems: Path, cli: Callable[..., Any]
) -> None:
    r = cli(problems, "verify", "--format", "github", "0001/P1", "0001/P2", "0001/P3", "0001/P4")
    assert r.code == 1, r.out + r.err
    annotations, others = commands_in(r.out)
    got = [(a.level, a.props["file"], int(a.props["line"]), a.props["title"]) for a in annotations]
    assert got == [
        ("error", PLAN_PATH, line_of(problems, "P1"), "tracker verify: 0001/P1 gate 1 (test) failed"),
        ("error", PLAN_PATH, line_of(problems, "P2"), "tracker verify: 0001/P2 gate 1 (bench) failed"),
        ("error", PLAN_PATH, line_of(problems, "P3"), "tracker verify: 0001/P3 gate 1 (bench) stale"),
        ("error", PLAN_PATH, line_of(problems, "P4"), "tracker verify: 0001/P4 gate 1 (bench) undecided"),
    ]
    assert "stale" in annotations[2].message and "kernel/k.cu" in annotations[2].message
    # what the failing test printed (pytest shows it on stdout, and stderr now too) came through, inside the stretch
    # the runner reads no command in: it annotates nothing
    # ... made plain (tracker.commands.relay): no line of it is a command, even were the stop line ignored
    assert any(": :error file=x.py,line=1::injected by a test" in x for x in others)
    assert any("## [error]old style" in x for x in others) and not any("##[error]" in x for x in others)
    assert not any(x.lstrip().startswith("::") for x in others)
    assert r.out.splitlines()[0].startswith("::stop-commands::")
    assert any(x.startswith("tracker: 0001/P1 is ") for x in others)
    assert cli(problems, "verify", "0001/P1").code == 1  # the same exit in text


def test_lint_annotates_problems_as_errors_and_warnings_as_warnings(problems: Path, cli: Callable[..., Any]) -> None:
    r = cli(problems, "lint", "--format", "github")
    assert r.code == 2, r.out + r.err
    annotations, others = commands_in(r.out)
    doc = json.loads(cli(problems, "lint", "--json").out)
    assert [(a.level, a.props["file"], int(a.props["line"]), a.message) for a in annotations] == [
        ("error", p["path"], p["line"], p["message"]) for p in doc["problems"]
    ] + [("warning", p["path"], p["line"], p["message"].removeprefix("warning: ")) for p in doc["warnings"]]
    [problem] = doc["problems"]
    assert problem["line"] == line_of(problems, "P5") and "the template's placeholder gate" in problem["message"]
    assert others[-2].startswith("tracker lint: 1 problem(s) in 1 file(s)")


def test_json_and_another_format_are_refused(problems: Path, cli: Callable[..., Any]) -> None:
    for command in ("check", "lint"):
        r = cli(problems, command, "--json", "--format", "github")
        assert r.code == 3 and "--json and --format github" in r.err, r.err
    r = cli(problems, "check", "--format", "yaml")
    assert r.code == 3


# --- report --format github --since REV ----------------------------------------------------------------------------


def test_the_pull_request_summary_says_what_changed_status_since_rev(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = '# CI\n\n```plan\nid = "0001"\ntitle = "CI"\n```\n\n' + block("P2", "Fast | enough <b>", GATE_REGRESS)
    make_files(root, {"plans/0001-ci.md": plan, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(root, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")
    base = commit(root, "met")
    r = cli(root, "report", "--format", "github", "--since", "HEAD")
    assert r.code == 0, r.err
    assert r.out == f"### tracker: no phase changed status since `HEAD` (`{base[:7]}`)\n"
    put(root, "r2.json", "m.time_us", [400.0] * 5, "2026-11-29T11:00:00Z")
    commit(root, "missed")
    r = cli(root, "report", "--format", "github", "--since", base)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == f"### ❌ tracker: 1 phase(s) changed status since `{base}` (`{base[:7]}`)"
    [row] = [x for x in lines if x.startswith("| **0001/P2**")]
    assert "Fast \\| enough \\<b\\>" in row  # the title is text, in one cell
    assert "done → **regressed**" in row
    assert "gate 1 unmet; worst, gate 1: time\\_us 400 us at impl=cuda, needs ≤ 200 us: 200 us short (100%)" in row
    assert "`bench/results/r2.json`" in row
    [bench] = [x for x in lines if x.startswith("| 0001/P2#1 m.time\\_us")]
    assert "100 us → 400 us" in bench and "`bench/results/r2.json`" in bench
    assert len(r.out.encode()) < 4096
    doc = json.loads(cli(root, "report", "--format", "github", "--since", base, "--json").out)
    assert [(c["key"], c["before"], c["after"]) for c in doc["changes"]] == [("0001/P2", "done", "regressed")]
    # an unknown REV, and no REV at all: usage (exit 3), no traceback
    r = cli(root, "report", "--format", "github", "--since", "no-such-rev")
    assert r.code == 3 and "no-such-rev" in r.err and "Traceback" not in r.err
    r = cli(root, "report", "--format", "github")
    assert r.code == 3 and "--format github needs --since REV" in r.err


def test_the_pull_request_summary_says_a_phase_the_branch_made_stale(problems: Path, cli: Callable[..., Any]) -> None:
    """The branch changed the code under 0001/P3's paths and brought no evidence: done at REV, stale now."""
    r = cli(problems, "report", "--format", "github", "--since", "HEAD~2")
    assert r.code == 0, r.err
    [row] = [x for x in r.out.splitlines() if x.startswith("| **0001/P3**")]
    assert "done → **stale**" in row and "stale: changed since its evidence: kernel/k.cu" in row, row
    assert "`bench/results/r3.json`" in row
    assert r.out.startswith("### ⚠️ tracker: 1 phase(s) changed status since `HEAD~2`")


# --- docs/examples/tracker.yml ---------------------------------------------------------------------------------------

CHECKOUT = Path(__file__).resolve().parents[3]


def test_the_example_workflow_runs_on_a_pull_request(tmp_path: Path) -> None:
    """The workflow the docs give, step by step as the runner would run it, on a clone whose branch regresses a
    phase: lint passes, check fails with its annotation, the pull request summary lands in the step summary after
    check's. The docs show the same workflow as the file."""
    import os
    import subprocess
    import sys

    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((CHECKOUT / "docs/examples/tracker.yml").read_text(encoding="utf-8"))
    doc = (CHECKOUT / "docs/github-actions.md").read_text(encoding="utf-8")
    shown = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(shown) == workflow
    steps = {s.get("name"): s for s in workflow["jobs"]["tracker"]["steps"]}
    assert steps["Check"]["run"] == "tracker check --format github"

    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    plan = '# CI\n\n```plan\nid = "0001"\ntitle = "CI"\n```\n\n' + block("P2", "Fast enough", GATE_REGRESS)
    make_files(upstream, {"plans/0001-ci.md": plan, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(upstream, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")
    commit(upstream, "met")
    root = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(root))
    put(root, "r2.json", "m.time_us", [400.0] * 5, "2026-11-29T11:00:00Z")
    commit(root, "the pull request: missed")

    summary = tmp_path / "step_summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "BASE_REF": "main"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    codes = {}
    for name in ("Lint the plans", "Check", "Pull request summary"):
        proc = subprocess.run(
            ["bash", "-e", "-c", steps[name]["run"]], cwd=root, env=env, capture_output=True, text=True
        )
        codes[name] = proc.returncode
        assert "Traceback" not in proc.stderr, proc.stderr
        if name == "Check":
            annotations, _ = commands_in(proc.stdout)
            titles = [(a.level, a.props["title"]) for a in annotations]
            assert ("error", "tracker check: regressed 0001/P2 gate 1") in titles, proc.stdout
    assert codes == {"Lint the plans": 0, "Check": 1, "Pull request summary": 0}
    assert "always()" in steps["Pull request summary"]["if"]  # it runs after check failed
    text = summary.read_text(encoding="utf-8")
    assert text.index("### ❌ tracker check: ") < text.index(
        "### ❌ tracker: 1 phase(s) changed status since `origin/main`"
    )
    assert "done → **regressed**" in text


def test_a_hand_edited_region_is_an_error_at_its_line(problems: Path, cli: Callable[..., Any]) -> None:
    path = problems / PLAN_PATH
    lines = path.read_text(encoding="utf-8").split("\n")
    begin = next(i for i, x in enumerate(lines) if x.startswith("<!-- tracker:begin summary"))
    lines[begin + 2] += " edited"
    path.write_text("\n".join(lines), encoding="utf-8")
    r = cli(problems, "check", "--format", "github")
    assert r.code == 1
    annotations, _ = commands_in(r.out)
    [edited] = [a for a in annotations if a.props["title"] == "tracker check: region-edited"]
    assert (edited.level, edited.props["file"], edited.props["line"]) == ("error", PLAN_PATH, str(begin + 1))
    assert edited.message.startswith(f"{PLAN_PATH}:{begin + 1}: generated region 'summary' was edited by hand")


def test_the_pull_request_summary_never_marks_a_phase_undone_with_a_check_mark(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A branch that deletes the result a done phase rests on takes it back to planned: the summary's heading must not
    be the ✅ of a branch that only made things better (it counts regressed, stale and removed as worse, not a done
    phase that is done no longer)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = '# CI\n\n```plan\nid = "0001"\ntitle = "CI"\n```\n\n' + block("P2", "Fast", GATE_REGRESS)
    make_files(root, {"plans/0001-ci.md": plan, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(root, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")
    base = commit(root, "met")
    (root / "bench/results/r1.json").unlink()
    commit(root, "the result goes")
    r = cli(root, "report", "--format", "github", "--since", base)
    assert r.code == 0, r.err
    assert "done → **planned**" in r.out
    assert not r.out.startswith("### ✅"), r.out.splitlines()[0]


def test_the_pull_request_summary_shows_benchmark_figures_that_moved_when_no_status_changed(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A branch that loosens a gate 5x (at_most 200 -> 1000 us) and brings a result 9x slower (100 -> 900 us): the phase
    stays done, so the summary is its one line, "no phase changed status", and the benchmark figure that moved (which
    `tracker summary --against` prints) is dropped: the pull request's page hides the slowdown."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = '# CI\n\n```plan\nid = "0001"\ntitle = "CI"\n```\n\n' + block("P2", "Fast", GATE_REGRESS)
    make_files(root, {"plans/0001-ci.md": plan, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(root, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")
    base = commit(root, "met")
    (root / "plans/0001-ci.md").write_text(plan.replace("at_most = 200.0", "at_most = 1000.0"))
    put(root, "r2.json", "m.time_us", [900.0] * 5, "2026-11-29T11:00:00Z")
    commit(root, "a looser gate, a slower result")
    assert "100 us -> 900 us" in cli(root, "summary", "--against", base).out  # the commit summary says it
    r = cli(root, "report", "--format", "github", "--since", base)
    assert r.code == 0, r.err
    assert "900 us" in r.out, r.out


def test_check_says_a_phase_made_stale_by_a_file_whose_name_is_not_utf8(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A file whose name is not UTF-8 (git takes any bytes) added under a stale phase's paths: ``status`` says
    ``kernel/caf?.cu``, but ``check`` (every format, the workflow's ``check --format github`` too) dies rendering the
    plan's status region (its checksum encodes the name's lone surrogate): a traceback in CI, no annotation."""
    import os

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = '# CI\n\n```plan\nid = "0001"\ntitle = "CI"\n```\n\n' + block("P3", "Stale", GATE_STALE, paths='"kernel/**"')
    make_files(root, {"plans/0001-ci.md": plan, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    doc = result([case("s.time_us", {"impl": "cuda"}, [100.0] * 5)], files={"kernel/k.cu": b"// k\n"})
    doc["provenance"]["fingerprint"]["patterns"] = ["kernel/**"]
    write(root / "bench/results/r.json", {**doc, "provenance": {**doc["provenance"], "commit": None}})
    commit(root, "met")
    with open(os.path.join(os.fsencode(root / "kernel"), b"caf\xe9.cu"), "w") as f:  # Latin-1
        f.write("int y;\n")
    commit(root, "a file named in Latin-1")
    assert "stale" in cli(root, "status").out
    r = cli(root, "check", "--format", "github")
    assert "Traceback" not in r.err, r.err[-600:]
    commands_in(r.out)


def test_the_pull_request_summary_shows_a_regression_before_the_rows_it_cuts(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A branch adding 45 phases (each new → planned) to plan 0001 and regressing 0002/P2: the table keeps its first
    40 rows in key order, all of them new planned phases, and the regression is one of "… and 6 more"."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan2 = '# B\n\n```plan\nid = "0002"\ntitle = "B"\n```\n\n' + block("P2", "Fast", GATE_REGRESS)
    make_files(root, {"plans/0002-b.md": plan2, "kernel/k.cu": "// k\n", ".gitignore": IGNORE})
    put(root, "r1.json", "m.time_us", [100.0] * 5, "2026-11-29T10:00:00Z")
    base = commit(root, "met")
    new = "".join(block(f"N{i:02d}", f"New {i}", f'manual = "Check the thing number {i} by hand"') for i in range(45))
    make_files(root, {"plans/0001-a.md": '# A\n\n```plan\nid = "0001"\ntitle = "A"\n```\n\n' + new})
    put(root, "r2.json", "m.time_us", [400.0] * 5, "2026-11-29T11:00:00Z")
    commit(root, "45 new phases, and a regression")
    r = cli(root, "report", "--format", "github", "--since", base)
    assert r.code == 0, r.err
    assert r.out.startswith("### ❌")
    assert any(x.startswith("| **0002/P2**") and "done → **regressed**" in x for x in r.out.splitlines()), r.out


def test_a_process_a_test_leaves_behind_cannot_stop_the_annotations_of_verify(problems: Path, tmp_path: Path) -> None:
    """The stop-commands stretch ends when pytest exits, but a process a test started (capture disabled, as
    ``capfd.disabled()`` lets any test) keeps verify's stdout: what it prints after the resume line is read as
    commands again. Here it prints ``::stop-commands::`` with its own token
    for a few seconds: the runner then reads none of verify's ``::error`` lines, and the failing gate is annotated
    nowhere (CI shows no error but the exit code)."""
    import subprocess
    import sys

    leftover = (
        "import subprocess, sys\n\n\ndef test_fails(capfd):\n"
        "    with capfd.disabled():  # pytest's own way to reach the terminal\n"
        "        subprocess.Popen([sys.executable, '-c', 'import time\\nend = time.time() + 4\\nwhile time.time() < end:\\n"
        '    print("::stop-commands::quiet", flush=True)\\n    time.sleep(0.002)\'], start_new_session=True)\n'
        "    assert False\n"
    )
    (problems / "tests/test_fail.py").write_text(leftover)
    commit(problems, "a test that leaves a process behind")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    ran = subprocess.run(
        [sys.executable, "-m", "tracker", "verify", "--format", "github", "0001/P1"],
        cwd=problems,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    resume = next(i for i, x in enumerate(lines) if x.startswith("::tracker-"))
    after = lines[resume + 1 :]
    first_error = next(i for i, x in enumerate(after) if x.startswith("::error "))
    stops = [x for x in after[:first_error] if x.lstrip().startswith("::stop-commands::")]
    assert not stops, f"{len(stops)} stop-commands line(s) between the resume line and verify's first ::error"


def test_a_test_cannot_write_a_workflow_command_past_the_relay_through_an_inherited_descriptor(problems: Path) -> None:
    """The relay (tracker.commands.relay) makes plain what reaches descriptors 1 and 2 and keeps the real stdout as
    another descriptor (``os.dup``: close-on-exec). But a session after the first runs in a child *forked* inside the
    relayed block (pytest_run._forked), and a fork keeps every descriptor, close-on-exec or not, and a copy of the
    parent's memory: a test finds the resume token (a local of verify's ``_progress`` generator), writes the resume
    line and an ``::error`` straight to the real stdout, and the runner reads that command (round: relay, A1)."""
    import subprocess
    import sys

    sneaky = (
        "import gc, os, stat\n\n\ndef test_fails():\n"
        "    frames = [o.gi_frame for o in gc.get_objects() if type(o).__name__ == 'generator' and o.gi_frame]\n"
        "    tokens = {v for f in frames for v in f.f_locals.values() if isinstance(v, str) and v.startswith('::tracker-')}\n"
        "    payload = ''.join(t + '\\n' for t in tokens) + '::error file=x.py,line=1::forged past the relay\\n'\n"
        "    for fd in range(3, 256):\n"
        "        try:\n"
        "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "                os.write(fd, payload.encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "    assert False\n"
    )
    (problems / "tests/test_fail.py").write_text(sneaky)
    plan = problems / PLAN_PATH
    # a second gate, with options: a session of its own, run first (in the child forked at verify's start,
    # tracker.commands.standby); the gate of the test above runs second, in a child forked inside the relay
    plan.write_text(
        plan.read_text()
        + block("P6", "Other options", 'test = "tests/test_ok.py"\noptions = ["--import-mode=importlib"]')
    )
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    up = subprocess.run(
        [sys.executable, "-m", "tracker", "update"], cwd=problems, env=env, capture_output=True, text=True
    )
    assert up.returncode == 0, up.stdout + up.stderr
    commit(problems, "a test that writes to descriptors it inherited")
    ran = subprocess.run(
        [sys.executable, "-m", "tracker", "verify", "--format", "github", "0001/P1", "0001/P6"],
        cwd=problems,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # what the runner runs: each command outside a ::stop-commands::TOKEN ... ::TOKEN:: stretch
    stopped: str | None = None
    commands: list[str] = []
    for line in ran.stdout.splitlines():
        if stopped is not None:
            stopped = None if line == f"::{stopped}::" else stopped
        elif line.lstrip().startswith("::stop-commands::"):
            stopped = line.lstrip().removeprefix("::stop-commands::")
        elif line.lstrip().startswith("::"):
            commands.append(line)
    forged = [x for x in commands if "forged past the relay" in x]
    assert not forged, ran.stdout


RELAY_WRITER = """
import os, sys, time
from tracker.commands.relay import relayed
size, newlines = int(sys.argv[1]), sys.argv[2] == "1"
block = b"x" * ((1 << 16) - 1) + (b"\\n" if newlines else b"\\r")
start = time.monotonic()
with relayed():
    for _ in range(size // len(block)):
        os.write(1, block)
    os.write(1, b"\\n")
print(time.monotonic() - start, file=sys.stderr)
"""


def test_a_long_line_without_a_newline_costs_the_relay_no_more_than_the_same_bytes_in_lines(tmp_path: Path) -> None:
    """The relay keeps the part of a line not ended yet as ``pending`` and, for each 64 KiB read, copies and splits
    ``pending + chunk`` whole: a line of N bytes costs O(N**2/64 KiB). A test (or a progress bar that redraws with
    ``\\r`` and never ends its line, as tqdm does) that writes 32 MiB without ``\\n`` holds the relay (and pytest,
    blocked on the full pipe) for seconds; 256 MiB, minutes: verify seems to hang (round: relay, A2)."""
    import subprocess
    import sys

    def cost(newlines: bool) -> float:
        ran = subprocess.run(
            [sys.executable, "-c", RELAY_WRITER, str(32 << 20), "1" if newlines else "0"],
            capture_output=True,
            timeout=300,
        )
        assert ran.returncode == 0, ran.stderr
        assert len(ran.stdout) >= (32 << 20) - (1 << 16)  # every byte came through
        return float(ran.stderr.decode().split()[-1])

    in_lines, one_line = cost(True), cost(False)
    assert one_line < 10 * in_lines + 1.0, f"32 MiB in one line: {one_line:.2f} s; in 64 KiB lines: {in_lines:.2f} s"
