"""Every error path of the CLI, with its exact message and exit code (docs/reference.md, "Exit codes")."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text

from tracker.base.fileio import repo_lock

GOOD = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'manual = "Reviewed"')
    + phase("P2", 'test = "tests/test_a.py"', depends='"P1"')
)
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}


@pytest.fixture
def good(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, **TESTS})


def test_invalid_plans_exit_2_listing_every_problem(repo, cli) -> None:
    root = repo(
        {"plans/0001-a.md": plan_text(phases='```phase\nid = "P1"\n```\n'), "plans/0002-b.md": "# no plan block\n"}
    )
    for command in (["status"], ["update"], ["verify"], ["next"]):
        r = cli(root, *command)
        assert r.code == 2, command
        assert r.err == (
            "plans/0001-a.md:8: phase P1: missing required key 'title'\n"
            "plans/0002-b.md:1: no ```plan block (a plan file needs exactly one)\n"
            "tracker: error: 2 problem(s) in plan files (see `tracker lint`)\n"
        )


def test_lint_reports_everything_at_once(repo, cli) -> None:
    a = plan_text(
        phases=phase("P1", 'test = "tests/test_a.py::test_nope"', depends='"P2"')
        + phase(
            "P2", 'test = "tests/missing.py"', 'test = "tests/test_a.py"\nmarker = "gpu and"', depends='"P1", "0009/X"'
        )
    )
    root = repo({"plans/0001-a.md": a, "plans/0002-b.md": plan_text("0001", title="Dup"), **TESTS})
    r = cli(root, "lint")
    assert r.code == 2
    assert r.out.splitlines() == [  # warnings (tests not written yet), each file's own problems (line 24: the marker
        # key), then across plans, then gates
        "plans/0001-a.md:20: warning: phase P2 gate 1: no such test file or directory: tests/missing.py (not written yet? the gate stays unmet until it is)",
        "plans/0001-a.md:12: warning: phase P1 gate 1: 'tests/test_a.py::test_nope' collects no tests (not written yet? the gate stays unmet until it does)",
        "plans/0001-a.md:24: phase P2 gate 2: invalid -m expression 'gpu and': column 8: expected not or left parenthesis or identifier; got end of input",
        "plans/0002-b.md:4: plan id '0001' does not match the file name (expected 0001-slug.md)",
        "plans/0002-b.md:3: duplicate plan id '0001' (also plans/0001-a.md)",
        "plans/0001-a.md:19: phase P2: unknown dependency '0009/X'",
        "plans/0001-a.md:11: dependency cycle: 0001/P1 -> 0001/P2 -> 0001/P1",
        "5 problem(s) in 2 file(s), 2 warning(s)",
    ]


def test_lint_ok_and_collection_errors(repo, cli) -> None:
    root = repo({"plans/0001-demo.md": GOOD, **TESTS})
    assert (cli(root, "lint").code, cli(root, "lint").out) == (0, "1 plan file(s) OK\n")
    (root / "tests/test_a.py").write_text("import no_such_module\n")
    r = cli(root, "lint")
    assert r.code == 2
    assert (
        "plans/0001-demo.md:11: phase P1 gate 1: collection error in tests/test_a.py: ModuleNotFoundError: No module named 'no_such_module'"
        in r.out
    )


BROKEN = """# Broken

```plan
id = "0003"
title = "Broken"
owner = "me"
```

```phase
id = "P1"
title = "One"
depends = ["P2", "0009/X"]

[[gate]]
bench = "m"
at_least = 1
at_most = 2
[[gate]]
manual = "Reviewed"
[[gate]]
test = "tests/nope.py"
[[gate]]
frobnicate = 1
[[gate]]
test = "tests/test_a.py::test_nope"
```

```phase
id = "P2"
title = "Two"
depends = ["P1"]
```

```phase
id = "P2"
title = "Again"
```
"""


def test_lint_checks_plans_with_problems_and_every_file_at_once(good, cli) -> None:
    (good / "plans/0003-broken.md").write_text(BROKEN)
    (good / "plans/0002-latin1.md").write_bytes(b"# caf\xe9\n")
    (good / "plans/notes.md").write_text("# Notes\n")
    (good / "plans/12-x.md").write_text(plan_text("0012"))
    r = cli(good, "lint")
    assert r.code == 2
    assert r.out.splitlines() == [
        "plans/notes.md: warning: not named NNNN-slug.md, so tracker does not read it as a plan",
        "plans/0003-broken.md:28: warning: phase P2 has no gates: it can never be done",
        "plans/0003-broken.md:20: warning: phase P1 gate 3: no such test file or directory: tests/nope.py (not written yet? the gate stays unmet until it is)",
        "plans/0003-broken.md:24: warning: phase P1 gate 5: 'tests/test_a.py::test_nope' collects no tests (not written yet? the gate stays unmet until it does)",
        "plans/0002-latin1.md: not UTF-8 text (byte 5: invalid continuation byte)",
        "plans/0003-broken.md:6: plan: unknown key 'owner'",
        "plans/0003-broken.md:14: phase P1 gate 1: exactly one of 'at_least' or 'at_most' is required",
        "plans/0003-broken.md:22: phase P1 gate 4: a gate needs exactly one of 'test', 'manual', 'bench' (found none)",
        "plans/0003-broken.md:23: phase P1 gate 4: unknown key 'frobnicate'",
        "plans/0003-broken.md:35: duplicate phase id 'P2' (first at line 28)",
        "plans/12-x.md: holds a plan block but is not named NNNN-slug.md, so tracker ignores it",
        "plans/0003-broken.md:12: phase P1: unknown dependency '0009/X'",
        "plans/0003-broken.md:12: dependency cycle: 0003/P1 -> 0003/P2 -> 0003/P1",
        "9 problem(s) in 3 file(s), 4 warning(s)",
    ]
    for bad in ("0003-broken.md", "0002-latin1.md", "12-x.md"):
        (good / "plans" / bad).unlink()
    r = cli(good, "lint", "--no-collect")
    assert (r.code, r.out) == (
        0,
        "plans/notes.md: warning: not named NNNN-slug.md, so tracker does not read it as a plan\n1 plan file(s) OK, 1 warning(s)\n",
    )


def test_status_shows_the_machines_each_phase_s_verdicts_came_from(good, cli, tmp_path: Path) -> None:
    assert "[" not in cli(good, "status").out  # no evidence, no machine
    assert cli(good, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read it").code == 0
    # A run recorded elsewhere by the plugin (it names what it collected: a JUnit file alone decides no file gate)
    out = tmp_path / "ci2"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", f"--tracker-record={out}"],
        cwd=good,
        check=True,
        capture_output=True,
    )
    [recorded] = out.glob("*.json")
    doc = json.loads(recorded.read_text())
    doc["provenance"]["host"] = "ci2"  # as the machine ci2 would have written it
    doc["provenance"]["cpu"] = "AMD EPYC 7B13"  # its CPU: what tells it apart beside its name (issue 31)
    recorded.write_text(json.dumps(doc))
    assert cli(good, "ingest", str(recorded)).code == 0
    assert cli(good, "status").out.splitlines()[1:] == [
        f"  P1  done           2/2  Phase P1  [ci2 (AMD EPYC 7B13), {socket.gethostname()}]",  # a sign-off: the host
        "  P2  done           1/1  Phase P2  [ci2 (AMD EPYC 7B13)]",
        "2 done of 2 phases",
    ]


def test_unknown_ids_and_bad_options_exit_3(good, cli) -> None:
    assert (cli(good, "status", "0009").code, cli(good, "status", "0009").err) == (
        3,
        "tracker: error: unknown plan '0009' (known plans: 0001)\n",
    )
    r = cli(good, "verify", "0001/P7")
    assert (r.code, r.err) == (3, "tracker: error: unknown phase 'P7' in plan 0001 (its phases: P1, P2)\n")
    r = cli(good, "signoff", "0001/P1", "--gate", "1", "--by", "me", "--why", "x")
    assert (r.code, r.err) == (3, "tracker: error: --gate 1: gate 1 of 0001/P1 is not a manual gate\n")
    r = cli(good, "signoff", "0001/P1", "--gate", "5", "--by", "me", "--why", "x")
    assert (r.code, r.err) == (3, "tracker: error: --gate: phase 0001/P1 has gates 1..2, got 5\n")
    r = cli(good, "signoff", "0001/P1", "--gate", "x", "--by", "me", "--why", "x")
    assert r.code == 3 and "Invalid value for '--gate'" in r.err
    assert cli(good, "bogus").code == 3


def test_hand_edited_region_exits_4_and_force_overrides(good, cli) -> None:
    assert cli(good, "update").code == 0
    path = good / "plans/0001-demo.md"
    path.write_text(path.read_text().replace("**Status: planned**", "**Status: done**", 1))
    r = cli(good, "update")
    assert r.code == 4
    assert (
        r.err.startswith("tracker: error: plans/0001-demo.md:")
        and "generated region 'phase:P1' was edited by hand" in r.err
    )
    assert cli(good, "update", "--check").code == 4
    assert cli(good, "update", "--force").code == 0
    assert "**Status: done**" not in path.read_text()


def test_verify_zero_tests_exits_5(repo, cli) -> None:
    root = repo(
        {
            "plans/0001-demo.md": plan_text(
                phases=phase("P1", 'test = "tests/test_a.py::test_gone"', 'test = "tests/nowhere/"')
            ),
            **TESTS,
        }
    )
    r = cli(root, "verify")
    assert r.code == 5
    assert "tracker: no such test file or directory: tests/nowhere\n" in r.out
    assert r.err == "tracker: error: 2 gate(s) collected no tests: 0001/P1#1, 0001/P1#2\n"


def test_interrupted_verify_exits_6_and_records_nothing_as_passed(repo, cli) -> None:
    tests = {"tests/test_a.py": "def test_a():\n    pass\n\ndef test_b():\n    raise KeyboardInterrupt\n"}
    root = repo(
        {
            "plans/0001-demo.md": plan_text(
                phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'test = "tests/test_a.py::test_b"')
            ),
            **tests,
        }
    )
    r = cli(root, "verify")
    assert r.code == 6
    assert "recorded as interrupted: nothing counts as passed" in r.err
    assert "0/2" in cli(root, "status").out


def test_lock_held_exits_7(good, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_LOCK_TIMEOUT", "0.2")
    code = "import sys, time; from pathlib import Path; from tracker.base.fileio import repo_lock\nwith repo_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(30)\n"
    holder = subprocess.Popen([sys.executable, "-c", code, str(good)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        r = cli(good, "update")
        assert r.code == 7
        assert (
            r.err
            == f"tracker: error: {good / '.tracker' / 'lock'}: another tracker process holds the lock (waited 0 s)\n"
        )
    finally:
        holder.kill()
        holder.wait()
    with repo_lock(good):  # released by the dead holder
        pass


def test_non_utf8_plan_exits_8(good, cli) -> None:
    (good / "plans/0002-bad.md").write_bytes(b"# \xff\n")
    r = cli(good, "status")
    assert (r.code, r.err) == (8, "tracker: error: plans/0002-bad.md: not UTF-8 text (byte 2: invalid start byte)\n")


def test_update_check_diff_and_noop(good, cli) -> None:
    r = cli(good, "update", "--check")
    assert r.code == 1 and "+<!-- tracker:begin summary -->" in r.out
    path = good / "plans/0001-demo.md"
    r = cli(good, "update", "--diff")
    assert r.code == 0 and "+<!-- tracker:begin phase:P2 -->" in r.out
    before = path.stat().st_mtime_ns
    assert cli(good, "update").out == "updated 0 plan file(s)\n"
    assert path.stat().st_mtime_ns == before
    assert cli(good, "update", "--check").out == "plan files are up to date\n"


def test_signoff_meets_manual_gate_and_next(good, cli) -> None:
    assert cli(good, "next").out == "0001/P1  planned      Phase P1\n"
    r = cli(good, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "read the diff")
    assert r.code == 0 and r.out.startswith("signed off 0001/P1#2 (Reviewed) by Ada: .tracker/evidence/")
    data = json.loads(cli(good, "status", "--json").out)
    gate = data["plans"][0]["phases"][0]["gates"][1]
    assert (gate["met"], gate["reason"], gate["kind"]) == (True, "signed off by Ada: read the diff", "manual")
    assert gate["source"]["commit"] == git(good, "rev-parse", "HEAD").strip()


def test_signoff_follows_its_gate_not_its_position(repo, cli) -> None:
    """A sign-off belongs to the gate text it signed: a gate inserted above neither steals nor drops it, and an
    edited gate keeps it but shows stale."""
    two = plan_text(phases=phase("P1", 'manual = "Reviewed"', 'manual = "Benchmarked"'))
    root = repo({"plans/0001-demo.md": two, **TESTS})
    assert cli(root, "signoff", "0001/P1", "--gate", "2", "--by", "Ada", "--why", "ran it").code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "signed")

    def gates() -> list[tuple[bool, str]]:
        data = json.loads(cli(root, "status", "--json").out)
        return [(g["met"], g["reason"]) for g in data["plans"][0]["phases"][0]["gates"]]

    assert gates() == [(False, "no sign-off recorded (tracker signoff)"), (True, "signed off by Ada: ran it")]
    # Insert a gate above both: "Benchmarked" (now gate 3) keeps its sign-off; the new gate 2 does not get it.
    three = plan_text(phases=phase("P1", 'manual = "Reviewed"', 'manual = "Approved"', 'manual = "Benchmarked"'))
    (root / "plans/0001-demo.md").write_text(three)
    assert gates() == [
        (False, "no sign-off recorded (tracker signoff)"),
        (False, "no sign-off recorded (tracker signoff)"),
        (True, "signed off by Ada: ran it"),
    ]
    # Back to two gates, both signed: done. Then edit the signed gate's own text in place: it keeps its
    # sign-off and the phase goes stale, naming the changed definition.
    (root / "plans/0001-demo.md").write_text(two)
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Bo", "--why", "read it").code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "signed both")
    assert json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["status"] == "done"
    (root / "plans/0001-demo.md").write_text(
        plan_text(phases=phase("P1", 'manual = "Reviewed"', 'manual = "Benchmarked twice"'))
    )
    assert gates()[1] == (True, "signed off by Ada: ran it")
    phase_data = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]
    assert phase_data["status"] == "stale" and "gate 2 definition changed" in json.dumps(phase_data), phase_data


def test_signoff_of_a_removed_gate_goes_nowhere_and_twin_texts_need_their_own(repo, cli) -> None:
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'manual = "Security review"', 'manual = "Benchmarked"')),
            **TESTS,
        }
    )
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Ada", "--why", "security ok").code == 0

    def gates() -> list[bool]:
        return [g["met"] for g in json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["gates"]]

    # Remove the signed gate: the gate that moves into its position does not inherit its sign-off.
    (root / "plans/0001-demo.md").write_text(plan_text(phases=phase("P1", 'manual = "Benchmarked"')))
    assert gates() == [False]
    # Two gates with the same text: one sign-off meets only the gate it was given for.
    (root / "plans/0001-demo.md").write_text(
        plan_text(phases=phase("P1", 'manual = "Reviewed"', 'manual = "Reviewed"'))
    )
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Ada", "--why", "one").code == 0
    assert gates() == [True, False]


def test_verify_with_a_pytest_argument_pytest_refuses_is_a_usage_error(good, cli) -> None:
    r = cli(good, "verify", "--pytest-arg=--no-such-pytest-option")
    assert r.code == 3, (r.out, r.err)
    assert r.err.endswith(
        "tracker: error: pytest refused its command line (a --pytest-arg) (exit 4; its message is above): nothing ran\n"
    )


def test_verify_counts_a_test_that_exits_with_status_4_as_a_crash(repo, cli) -> None:
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py"')),
            "tests/test_a.py": "import os\n\ndef test_a():\n    os._exit(4)\n",
        }
    )
    r = cli(root, "verify")
    assert r.code == 6 and "it crashed while running tests/test_a.py::test_a" in r.err, (r.out, r.err)


def test_next_aligns_columns_for_long_phase_ids(repo, cli) -> None:
    phases = phase("P9", 'manual = "a"') + phase("P10", 'manual = "b"')
    root = repo({"plans/0001-demo.md": plan_text(phases=phases), **TESTS})
    assert cli(root, "next").out == "0001/P9   planned      Phase P9\n0001/P10  planned      Phase P10\n"


def test_new_creates_a_valid_numbered_plan(good, cli) -> None:
    r = cli(good, "new", 'Speed: "fast" path')
    assert (r.code, r.out) == (0, "created plans/0002-speed-fast-path.md\n")
    r = cli(good, "lint", "--no-collect")  # valid, its one problem the template's placeholder gate, to be edited
    assert r.code == 2 and r.out.splitlines() == [
        "plans/0002-speed-fast-path.md:21: phase P1 gate 1: still the template's placeholder gate: edit it to say "
        "what a reviewer must confirm (or make it a test or bench gate)",
        "1 problem(s) in 1 file(s)",
    ]
    assert '0002  Speed: "fast" path' in cli(good, "status").out
    assert cli(good, "new", " ").code == 3


def test_new_transliterates_accented_titles(good, cli) -> None:
    assert cli(good, "new", "Défrag über alles: Straße").out == "created plans/0002-defrag-uber-alles-strasse.md\n"
    assert cli(good, "new", "カーネル").out == "created plans/0003-plan.md\n"
    assert cli(good, "new", "GROẞE Ħal Işık").out == "created plans/0004-grosse-hal-isik.md\n"
    assert "0002  Défrag über alles: Straße" in cli(good, "status").out


def test_schema_is_json_schema(good, cli) -> None:
    text = cli(good, "schema").out
    data = json.loads(text)
    assert data["$defs"]["plan"] == {"$ref": "#/$defs/PlanBlock"} and data["$defs"]["phase"] == {
        "$ref": "#/$defs/PhaseBlock"
    }
    assert data["$defs"]["PhaseBlock"]["additionalProperties"] is False
    assert set(data["$defs"]) >= {"TestGateModel", "ManualGateModel", "BenchGateModel"}
    for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', text):  # every reference resolves from the root
        assert ref in data["$defs"]


def test_console_script_runs(good) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "status"], cwd=good, capture_output=True, text=True, env=os.environ
    )
    assert proc.returncode == 0 and proc.stdout.startswith("0001  Demo  (plans/0001-demo.md)\n")


def assert_kept_outside_regions(before: str, after: str) -> None:
    """Every line of ``before`` is in ``after``, in order and byte for byte, outside its regions; the only
    other lines are the regions and at most one blank line right after each (regions.py: a region is kept
    apart from the Markdown that follows it), in the file's own newline."""
    from tracker.plans.regions import newline_of, region_spans, split_lines

    lines, original = split_lines(after), split_lines(before)
    spans = dict(region_spans(after, "p"))
    i = j = 0
    while i < len(lines):
        if i in spans:
            i = spans[i] + 1
            next_is_original = j < len(original) and i < len(lines) and lines[i] == original[j]
            if i < len(lines) and lines[i] == newline_of(before) and not next_is_original:
                i += 1  # the separating blank line the region brought
            continue
        assert j < len(original) and lines[i] == original[j], (i, lines[i], original[j : j + 1])
        i, j = i + 1, j + 1
    assert j == len(original)


def test_update_preserves_crlf_bom_tabs_and_missing_final_newline(repo, cli) -> None:
    text = ("\ufeff" + GOOD.rstrip("\n") + "\n\tIndented prose — ünïcode\n```\nnot a phase\n```").replace("\n", "\r\n")
    root = repo({"plans/0001-demo.md": text, **TESTS})
    path = root / "plans/0001-demo.md"
    assert cli(root, "update").code == 0
    once = path.read_bytes().decode("utf-8")
    assert once.startswith("\ufeff# Demo\r\n") and not once.endswith("\n")
    assert "\n" not in once.replace("\r\n", "")  # every new line uses the file's CRLF
    assert "\r\n\tIndented prose — ünïcode\r\n" in once
    assert_kept_outside_regions(text, once)
    assert cli(root, "update").out == "updated 0 plan file(s)\n"
    assert path.read_bytes().decode("utf-8") == once


@pytest.mark.parametrize(
    ("blocked", "args"),
    [("typer", ["lint", "--help"]), ("markdown_it", ["status"]), ("pydantic_core", ["check"])],  # help: typer's
)
def test_a_missing_dependency_exits_9_naming_it(good, blocked: str, args: list[str]) -> None:
    """A Python without the tracker's dependencies (the system one, say) gets one line, not a traceback."""
    code = f"import sys; sys.modules[{blocked!r}] = None; from tracker.entry import main; main({args!r})"
    proc = subprocess.run([sys.executable, "-c", code], cwd=good, capture_output=True, text=True, env=os.environ)
    assert proc.returncode == 9, proc.stderr
    assert proc.stderr == (
        f"tracker: error: the package {blocked!r} is not installed in this Python ({sys.executable}); "
        "install the tracker into it (`pip install .` in the repository, README) or run the "
        "`tracker` of the environment it was installed into\n"
    )
    assert proc.stdout == ""


def test_a_missing_module_of_our_own_stays_a_traceback(good) -> None:
    code = "import sys; sys.modules['tracker.commands.lint'] = None; from tracker.entry import main; main(['lint'])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=good, capture_output=True, text=True, env=os.environ)
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "tracker.commands.lint" in proc.stderr


def test_outside_a_repository_exits_8(tmp_path: Path, cli) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli(empty, "status")
    assert (r.code, r.err) == (8, f"tracker: error: {empty}: not inside a git repository or a directory with plans/\n")


def test_update_only_the_named_plans(repo, cli) -> None:
    root = repo({"plans/0001-demo.md": GOOD, "plans/0002-other.md": plan_text("0002", title="Other"), **TESTS})
    other = (root / "plans/0002-other.md").read_bytes()
    assert cli(root, "update", "0001").out == "updated 1 plan file(s): plans/0001-demo.md\n"
    assert (root / "plans/0002-other.md").read_bytes() == other
    assert cli(root, "update", "--check", "0001").code == 0
    assert cli(root, "update", "--check").code == 1
    assert cli(root, "update", "0003").code == 3


def test_unreadable_evidence_is_shown_by_status_and_stops_only_gc(good, cli) -> None:
    bad = good / ".tracker/evidence/20260101T000000Z-x-verify-000000.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"schema": "tracker-test-run", ')
    r = cli(good, "status")
    assert r.code == 0
    assert (
        f"gate 1: invalid evidence file, fix or remove it: .tracker/evidence/{bad.name}: not a readable evidence file: Expecting"
        in r.out
    )
    r = cli(good, "gc")
    assert r.code == 8
    assert r.err.startswith(f"tracker: error: {bad}: not a readable evidence file: Expecting property name")


def test_concurrent_updates_do_not_corrupt(good, cli) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tracker", "update"],
            cwd=good,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(*p.communicate(), p.returncode) for p in procs]
    assert [code for _, _, code in results] == [0, 0, 0, 0], results
    assert sorted(out for out, _, _ in results) == ["updated 0 plan file(s)\n"] * 3 + [
        "updated 1 plan file(s): plans/0001-demo.md\n"
    ]
    assert cli(good, "update", "--check").out == "plan files are up to date\n"
    assert sorted(p.name for p in (good / "plans").iterdir()) == ["0001-demo.md"]  # no temp files left


TWO_PLANS = {
    "plans/0001-demo.md": GOOD,
    "plans/0002-more.md": plan_text("0002", phase("P1", 'manual = "Read"') + phase("Q3", 'test = "tests/test_a.py"')),
    **TESTS,
}


def test_phase_ids_ignore_case_and_a_bare_phase_id_names_the_one_plan_with_it(repo, cli) -> None:
    """Issue 24: ``p2`` was refused where ``P2`` exists, and a bare ``Q3`` where only plan 0002 has a Q3."""
    root = repo(TWO_PLANS)
    line_p2 = "  P2  blocked        0/1  Phase P2  — blocked by 0001/P1"
    for spec in ("p2", "P2", "0001/p2", "1/p2"):
        r = cli(root, "status", spec)
        assert (r.code, r.out.splitlines()[1:2]) == (0, [line_p2]), spec
    for command in ("show", "log"):
        for spec in ("q3", "2/q3", "Q3"):
            r = cli(root, command, spec)
            assert r.code == 0 and "0002/Q3" in r.out, (command, spec)
    r = cli(root, "verify", "q3")
    assert r.code == 0 and "0002/Q3" in r.out
    r = cli(root, "signoff", "0002/p1", "--gate", "1", "--by", "Ada", "--why", "read it")
    assert r.code == 0, r.err
    r = cli(root, "signoff", "p2", "--gate", "1", "--by", "Ada", "--why", "read it")
    assert (r.code, r.err) == (3, "tracker: error: --gate 1: gate 1 of 0001/P2 is not a manual gate\n")
    for command in (["status"], ["show"], ["log"], ["verify"], ["signoff", "--gate", "1", "--by", "A", "--why", "x"]):
        args = [*command[:1], "p1", *command[1:]]
        r = cli(root, *args)
        assert (r.code, r.out, r.err) == (
            3,
            "",
            "tracker: error: phase 'p1' is in several plans (0001/P1, 0002/P1): name one as PLAN/PHASE\n",
        ), command
    r = cli(root, "update", "--check", "q3")
    assert r.code in (0, 1) and "error" not in r.err


def test_new_refuses_a_plans_folder_linked_out_of_the_repository(repo, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = repo({"README.md": "x\n"})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "plans").symlink_to(outside)  # a plan file there would be refused by every reader
    result = cli(root, "new", "Parser rewrite")
    assert result.code == 8 and "outside the repository" in result.err and "Traceback" not in result.err, result.err
    assert list(outside.iterdir()) == []


PHASE_IDS = st.sampled_from(["P1", "P2", "p2", "Ab", "aB", "ǅ", "ß", "SS", "P1/x"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(PHASE_IDS, unique=True, max_size=4), max_size=3),
    st.one_of(
        st.text(max_size=12), st.builds("/".join, st.lists(st.one_of(PHASE_IDS, st.text(max_size=5)), max_size=3))
    ),
)
def test_any_selector_names_what_it_says_or_is_a_printable_usage_error(phase_ids: list[list[str]], spec: str) -> None:
    """Whatever is typed: the phases it names, each exactly as a plan spells it (a bare or case-blind id only where
    one phase answers it), or a one-line usage error; never another exception."""
    from tracker.commands.common import resolve_spec, select
    from tracker.core.model import Phase, Plan
    from tracker.errors import UsageError

    plans = [
        Plan(f"{n + 1:04d}", "t", f"plans/{n + 1:04d}-t.md", phases=tuple(Phase(i, "t") for i in ids))
        for n, ids in enumerate(phase_ids)
    ]
    try:
        chosen = select(plans, [spec])
    except UsageError as err:
        assert str(err).isprintable(), err
        return
    resolved = resolve_spec(plans, spec)
    plan_id, _, phase_id = resolved.partition("/")
    assert {p.id for p, _ in chosen} <= {plan_id}  # a plan without phases names none
    if phase_id:
        [(_, phase)] = chosen
        typed = spec.partition("/")[2] if "/" in spec else spec
        assert phase.id == phase_id and phase_id.casefold() == typed.casefold()
