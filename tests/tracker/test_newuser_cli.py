"""The CLI as a new user meets it (issue 12): status selects what it is given and shows valid plans next to
invalid ones, colour, command-line conventions, --json everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tracker_testutil import phase, plan_text

GOOD = plan_text(
    phases=phase("P1", 'test = "tests/test_a.py::test_a"', 'manual = "Reviewed"')
    + phase("P2", 'test = "tests/test_a.py"', depends='"P1"')
)
SECOND = plan_text("0002", phases=phase("P1", 'manual = "Looked"'), title="Second")
BROKEN = plan_text("0003", phases='```phase\nid = "P1"\n```\n', title="Broken")
TESTS = {"tests/test_a.py": "def test_a():\n    pass\n"}
HEAD_1 = "0001  Demo  (plans/0001-demo.md)"
HEAD_2 = "0002  Second  (plans/0002-second.md)"


@pytest.fixture
def two(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, **TESTS})


# --- status PLAN and PLAN/PHASE select what they name (issue 12 items 5, 11; CLI conventions) -----------------


@pytest.mark.parametrize("spec", ["0002", "2", "02", "plans/0002-second.md"])
def test_status_of_a_plan_shows_only_that_plan(two, cli, spec: str) -> None:
    r = cli(two, "status", spec)
    assert r.code == 0 and r.out.splitlines()[0] == HEAD_2 and len(r.out.splitlines()) == 2, r.out
    data = json.loads(cli(two, "status", spec, "--json").out)
    assert [p["id"] for p in data["plans"]] == ["0002"] and data["invalid"] == []


def test_status_of_a_phase_shows_that_phase_s_line(two, cli) -> None:
    for spec in ("0001/P2", "1/P2"):
        lines = cli(two, "status", spec).out.splitlines()
        assert lines[0] == HEAD_1 and len(lines) == 2 and lines[1].startswith("  P2  blocked"), lines
    data = json.loads(cli(two, "status", "1/P2", "--json").out)
    assert [(p["id"], [ph["id"] for ph in p["phases"]]) for p in data["plans"]] == [("0001", ["P2"])]


def test_status_accepts_a_plan_file_path_from_the_current_directory_or_the_root(two, cli, monkeypatch) -> None:
    monkeypatch.chdir(two / "plans")
    for spec in (
        "0002-second.md",
        "./0002-second.md",
        "../plans/0002-second.md",
        str(two / "plans/0002-second.md"),
        "plans/0002-second.md",
    ):
        assert cli(two, "status", spec).out.splitlines()[0] == HEAD_2, spec


@pytest.mark.parametrize(("spec", "err"), [
    ("9", "unknown plan '0009' (known plans: 0001, 0002)"),
    ("1/P9", "unknown phase 'P9' in plan 0001 (its phases: P1, P2)"),
    ("plans/0009-none.md", "plans/0009-none.md: not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("README.md", "README.md: not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("123456", "unknown plan '123456' (known plans: 0001, 0002)"),
    ("9" * 5000, "unknown plan '" + "9" * 5000 + "' (known plans: 0001, 0002)"),
])  # fmt: skip
def test_status_of_what_does_not_exist_is_a_usage_error(two, cli, spec: str, err: str) -> None:
    (two / "README.md").write_text("# readme\n")
    r = cli(two, "status", spec)
    assert (r.code, r.out, r.err) == (3, "", f"tracker: error: {err.format(root=two)}\n")


@pytest.mark.parametrize(("spec", "err"), [
    ("0001/P\x1b[2J\x1b[31mX", r"unknown phase 'P\x1b[2J\x1b[31mX' in plan 0001 (its phases: P1, P2)"),
    ("\x1b]0;pwned\x07", r"unknown plan '\x1b]0;pwned\x07' (known plans: 0001, 0002)"),
    ("1/P1\nPhase-Done: 0002/P1", r"unknown phase 'P1\nPhase-Done: 0002/P1' in plan 0001 (its phases: P1, P2)"),
    ("a\rb\u2028c\u202ed", r"unknown plan 'a\rb\u2028c\u202ed' (known plans: 0001, 0002)"),
    ("x\n\x1b[1m.md", r"'x\n\x1b[1m.md': not a plan file of this repository (plans/NNNN-slug.md in {root})"),
    ("0001/P\x9b2J", r"unknown phase 'P\x9b2J' in plan 0001 (its phases: P1, P2)"),
])  # fmt: skip
def test_a_selector_with_control_characters_is_shown_escaped(
    two: Path, cli: Callable[..., Any], spec: str, err: str
) -> None:
    """What a person typed goes back to the terminal as one line of printable text: an escape sequence in an
    unknown selector was written raw (it cleared the screen, set the window title), a newline forged a line."""
    r = cli(two, "status", spec)
    assert (r.code, r.out, r.err) == (3, "", f"tracker: error: {err.format(root=two)}\n")
    assert r.err.isascii() and r.err[:-1].isprintable()


# --- one invalid plan does not hide the others (issue 12 item 11) -------------------------------------------------


@pytest.fixture
def mixed(repo) -> Path:
    return repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": SECOND, "plans/0003-broken.md": BROKEN, **TESTS})


def test_status_shows_the_valid_plans_and_a_line_per_invalid_file(mixed, cli) -> None:
    r = cli(mixed, "status")
    lines = r.out.splitlines()
    assert r.code == 2 and lines[0] == HEAD_1 and HEAD_2 in lines
    assert lines[-2:] == [
        "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`",
        "1 blocked, 2 planned of 3 phases; 1 invalid plan file",
    ]
    assert r.err == (
        "plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
        "tracker: error: 1 problem(s) in plan files (see `tracker lint`)\n"
    )


def test_status_json_with_an_invalid_plan_is_a_document_with_invalid(mixed, cli) -> None:
    r = cli(mixed, "status", "--json")
    data = json.loads(r.out)
    assert r.code == 2 and [p["id"] for p in data["plans"]] == ["0001", "0002"]
    assert data["invalid"] == [
        {
            "path": "plans/0003-broken.md",
            "id": "0003",
            "problems": ["plans/0003-broken.md:8: phase P1: missing required key 'title'"],
        }
    ]


def test_status_of_a_valid_plan_beside_an_invalid_one_is_ok_and_of_the_invalid_one_its_error(mixed, cli) -> None:
    r = cli(mixed, "status", "1")
    assert (r.code, r.err, r.out.splitlines()[0]) == (0, "", HEAD_1)
    r = cli(mixed, "status", "3")
    assert (r.code, r.out) == (2, "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`\n")
    assert r.err.endswith("tracker: error: 1 problem(s) in plan files (see `tracker lint`)\n")
    assert cli(mixed, "status", "plans/0003-broken.md", "--json").code == 2


def test_an_unreadable_plan_file_is_a_line_and_exit_8_with_the_other_problems_said(mixed, cli) -> None:
    (mixed / "plans/0004-latin1.md").write_bytes(b"# Caf\xe9\n")
    r = cli(mixed, "status")
    assert (
        r.code == 8
        and r.out.splitlines()[-2] == "?  invalid plan file (plans/0004-latin1.md): 1 problem(s), see `tracker lint`"
    )
    assert HEAD_1 in r.out and HEAD_2 in r.out
    assert r.err == (
        "plans/0003-broken.md:8: phase P1: missing required key 'title'\n"
        "tracker: error: plans/0004-latin1.md: not UTF-8 text (byte 5: invalid continuation byte)\n"
    )
    data = json.loads(cli(mixed, "status", "--json").out)
    assert [i["path"] for i in data["invalid"]] == ["plans/0003-broken.md", "plans/0004-latin1.md"]


def test_only_invalid_plans_are_their_lines_not_no_plans_yet(repo, cli) -> None:
    root = repo({"plans/0003-broken.md": BROKEN})
    r = cli(root, "status")
    assert (r.code, r.out) == (2, "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`\n")


# --- colour: NO_COLOR, TERM=dumb, --color/--no-color (issue 12 item 3) ---------------------------------------------


def _status_on_a_terminal(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``tracker status`` run by the console script with its stdout on a pseudo-terminal; what it printed."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"TERM": "xterm"} | (env or {})
    with subprocess.Popen(
        [sys.executable, "-m", "tracker", *args], cwd=root, stdout=follower, stderr=subprocess.DEVNULL, env=environ
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait()
    os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.parametrize(("args", "env", "colored"), [
    (["status"], {}, True),
    (["status"], {"NO_COLOR": "1"}, False),
    (["status"], {"NO_COLOR": ""}, True),  # no-color.org: set and not empty
    (["status"], {"TERM": "dumb"}, False),
    (["--no-color", "status"], {}, False),
    (["status", "--no-color"], {}, False),
    (["--color=never", "status"], {}, False),
    (["status", "--color", "always"], {"NO_COLOR": "1"}, True),
    (["--color=auto", "status"], {"TERM": "dumb"}, False),
])  # fmt: skip
def test_colour_on_a_terminal_honours_no_color_term_dumb_and_the_options(
    two, args: list[str], env: dict[str, str], colored: bool
) -> None:
    out = _status_on_a_terminal(two, *args, env=env)
    assert HEAD_1 in out and ("\x1b[" in out) == colored, out


@pytest.mark.parametrize("args", [["--color=always", "status"], ["status", "--color", "always"]])
def test_color_always_colours_a_pipe_too(two, cli, args: list[str]) -> None:
    assert "\x1b[2mplanned" in cli(two, *args).out
    assert "\x1b[" not in cli(two, "status").out and "\x1b[" not in cli(two, "--color=always", "status", "--json").out


def test_color_options_that_contradict_are_usage_errors(two, cli) -> None:
    r = cli(two, "--no-color", "status", "--color=always")
    assert (r.code, r.err) == (3, "tracker: error: --color/--no-color given both before and after the command\n")
    r = cli(two, "status", "--color=always", "--no-color")
    assert (r.code, r.err) == (3, "tracker: error: give one of --color and --no-color\n")
    r = cli(two, "--color=blue", "status")
    assert r.code == 3 and "'blue' is not one of 'auto', 'always', 'never'" in r.err


def test_a_mistyped_command_is_suggested_once(two, cli) -> None:
    r = cli(two, "statu")
    assert r.code == 3 and r.err.count("Did you mean 'status'?") == 1, r.err


# --- command-line conventions (issue 12, packaging and first contact) -----------------------------------------------


def test_version_prints_the_command_the_version_and_the_distribution(two, cli) -> None:
    from tracker import __version__

    for args in (["--version"], ["--version", "status"]):
        assert (cli(two, *args).code, cli(two, *args).out) == (0, f"tracker {__version__} (plan-tracker)\n")


@pytest.mark.parametrize("command", [[], ["status"], ["verify"], ["result"], ["result", "new"]])
def test_dash_h_is_help_like_dash_dash_help(two, cli, command: list[str]) -> None:
    short, long = cli(two, *command, "-h"), cli(two, *command, "--help")
    assert short.code == long.code == 0 and short.out == long.out and "Usage: tracker" in short.out


def _every_parameter() -> list[tuple[str, object]]:
    import typer.main

    from tracker.cli.app import restore_argument_help, typer_app

    app = typer_app()
    group = typer.main.get_command(app)
    restore_argument_help(group, app)
    out: list[tuple[str, object]] = [("tracker", p) for p in group.params]
    todo = [(f"tracker {name}", cmd) for name, cmd in group.commands.items()]
    while todo:
        name, cmd = todo.pop()
        out += [(name, p) for p in cmd.params]
        todo += [(f"{name} {sub}", c) for sub, c in getattr(cmd, "commands", {}).items()]
    return out


def test_every_argument_and_option_has_help() -> None:
    params = _every_parameter()
    assert len(params) > 50
    missing = [f"{name} {p.name}" for name, p in params if not getattr(p, "help", None)]  # type: ignore[attr-defined]
    assert missing == []


def test_argument_help_is_shown(two, cli) -> None:
    assert "Title of the new plan." in cli(two, "new", "-h").out
    assert "Only this plan (0002, 2 or" in cli(two, "status", "--help").out
    assert "Name of the benchmark" in cli(two, "result", "new", "-h").out


def _complete(root: Path, words: str, cwd: Path) -> list[str]:
    """What the console script answers bash's completion for the command line ``words`` (the cursor at its end)."""
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "_TRACKER_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "tracker"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_shell_completion_completes_commands_and_plan_ids(two, tmp_path) -> None:
    assert _complete(two, "tracker sta", two) == ["status"]
    assert _complete(two, "tracker status ", two) == ["0001", "0002", "0001/P1", "0001/P2", "0002/P1"]
    assert _complete(two, "tracker verify 0001/", two) == ["0001/P1", "0001/P2"]
    assert _complete(two, f"tracker status --root {two} 2", tmp_path) == []  # plan ids start with 0
    assert _complete(two, f"tracker --root {two} signoff 0002", tmp_path) == ["0002", "0002/P1"]
    assert _complete(two, "tracker status ", tmp_path) == []  # not in a repository: nothing, no error


def test_show_completion_prints_a_script_for_the_shell(two) -> None:
    import os
    import shlex
    import subprocess
    import sys

    # typer finds the shell among the process's ancestors (shellingham): a user types it in one; started by a test
    # runner with none above it (tracker verify in the background, an xdist worker), "Shell  not supported".
    line = f"{shlex.quote(sys.executable)} -m tracker --show-completion; exit $?"  # bash stays the parent (no exec)
    proc = subprocess.run(["bash", "-c", line], cwd=two, capture_output=True, text=True,
                          env={**os.environ, "SHELL": "/bin/bash"}, timeout=60)  # fmt: skip
    assert proc.returncode == 0 and "_TRACKER_COMPLETE=complete_bash" in proc.stdout and "complete " in proc.stdout


def _main(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The typer CLI in process on exactly ``args`` (the ``cli`` fixture puts ``--root`` first)."""
    from tracker.cli import main

    capfd.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["status", "2", "--json"],
        ["next"],
        ["next", "--json"],
        ["lint", "--no-collect"],
        ["check"],
        ["check", "--json"],
        ["update", "--check"],
        ["gc", "--dry-run"],
        ["gc", "--dry-run", "--json"],
        ["schema"],
        ["verify", "0002"],
        ["signoff", "0002/P1", "--gate", "9", "--by", "a", "--why", "b"],
        ["new", " "],
        ["ingest", "missing.xml"],
        ["result", "new", "x"],
    ],
)
def test_root_is_accepted_after_every_command(two, capfd, monkeypatch, tmp_path, command: list[str]) -> None:
    monkeypatch.chdir(tmp_path)  # not in the repository: only --root finds it
    after = _main(capfd, *command, "--root", str(two))
    assert after == _main(capfd, "--root", str(two), *command)
    assert after[0] != 3 or "--root" not in after[2], (
        after
    )  # a usage error of its own (signoff's gate 9), not of --root
    twice = _main(capfd, "--root", str(two), *command, "--root", str(two))
    assert twice[:2] == (3, "") and twice[2] == "tracker: error: --root given both before and after the command\n"


# --- --json on next, check, lint, verify and gc: one object on stdout -----------------------------------------------


@pytest.mark.parametrize(("command", "code", "keys"), [
    (["next", "--json"], 0, {"plans_dir", "plans", "phases", "done", "blocked", "next", "invalid"}),
    (["check", "--json"], 1, {"ok", "exit", "problems", "warnings"}),  # regions not written yet: out of date
    (["lint", "--no-collect", "--json"], 0, {"ok", "files", "problems", "warnings"}),
    (["verify", "0002", "--json"], 1, {"exit", "evidence", "evidence_files", "ran", "not_rerun", "phases", "warnings"}),  # a manual gate unsigned
    (["gc", "--json"], 0, {"dry_run", "exit", "refused", "deleted", "would_delete", "kept", "put_back"}),
    (["gc", "--dry-run", "--json"], 0, {"dry_run", "exit", "refused", "deleted", "would_delete", "kept", "put_back"}),
    (["status", "--json"], 0, {"plans", "invalid"}),
])  # fmt: skip
def test_json_is_one_object_on_stdout(two, cli, command: list[str], code: int, keys: set[str]) -> None:
    r = cli(two, *command)
    assert r.code == code, r.err
    assert set(json.loads(r.out)) == keys


def test_gc_json_lists_what_it_deleted_and_why_the_rest_stays(two, cli) -> None:
    assert cli(two, "verify", "0001/P1").code == 1  # its manual gate is not signed off
    assert cli(two, "verify", "0001/P1", "--force").code == 1
    assert cli(two, "verify", "0001/P1", "--force").code == 1
    store = sorted(p.relative_to(two).as_posix() for p in (two / ".tracker/evidence").glob("*.json"))
    first = json.loads((two / store[0]).read_text())["provenance"]["time"]
    dry = json.loads(cli(two, "gc", "--dry-run", "--json").out)
    assert dry == {
        "dry_run": True,
        "exit": 0,
        "refused": [],
        "deleted": [],
        "would_delete": store[1:2],  # the first run made 0001/P1 in-progress: `tracker log` names it, it stays
        "kept": [
            {"path": store[0], "why": f"status history: 0001/P1 planned -> in-progress at {first}"},
            {"path": store[2], "why": "newest run of tests/test_a.py::test_a"},
        ],
        "put_back": [],
    }
    assert (
        sorted(p.relative_to(two).as_posix() for p in (two / ".tracker/evidence").glob("*.json")) == store
    )  # nothing deleted
    done = json.loads(cli(two, "gc", "--json").out)
    assert done == {**dry, "dry_run": False, "deleted": store[1:2], "would_delete": []}
    assert not (two / store[1]).exists()
    assert json.loads(cli(two, "gc", "--json").out)["deleted"] == []


# --- a done phase resting on a dependency that is not done is marked ------------------------------------------------


def test_a_done_phase_whose_dependency_is_not_done_is_marked(repo, cli) -> None:
    text = plan_text(
        phases=phase("P1", 'manual = "Checked"', paths='"src/**"') + phase("P2", 'manual = "Read"', depends='"P1"')
    )
    root = repo({"plans/0001-demo.md": text, "src/a.py": "x = 1\n"})
    assert cli(root, "signoff", "0001/P2", "--gate", "1", "--by", "Ada", "--why", "read").code == 0
    lines = cli(root, "status").out.splitlines()
    assert lines[2].startswith("  P2  done*  ") and lines[2].endswith("— depends on 0001/P1 (planned)"), lines
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Ada", "--why", "checked").code == 0
    lines = cli(root, "status").out.splitlines()
    assert lines[1].startswith("  P1  done ") and lines[2].startswith("  P2  done ") and "depends" not in "".join(lines)
    (root / "src/a.py").write_text("x = 2\n")  # P1 is stale now
    r = cli(root, "status")
    assert r.out.splitlines()[2].startswith("  P2  done*  ") and r.out.splitlines()[2].endswith(
        "— depends on 0001/P1 (stale)"
    ), r.out
    phases = json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"]
    assert [ph["dependencies_not_done"] for ph in phases] == [[], [{"id": "0001/P1", "status": "stale"}]]
    assert cli(root, "status", "1/P2").out.splitlines()[1].startswith("  P2  done*  ")


def test_a_dependency_into_an_invalid_plan_has_no_status(repo, cli) -> None:
    text = plan_text("0002", phases=phase("P1", 'manual = "Read"', depends='"0001/P1"'), title="Second")
    root = repo({"plans/0001-demo.md": GOOD, "plans/0002-second.md": text, **TESTS})
    assert cli(root, "signoff", "0002/P1", "--gate", "1", "--by", "Ada", "--why", "read").code == 0
    (root / "plans/0001-demo.md").write_text(BROKEN.replace('id = "0003"', 'id = "0001"'))
    r = cli(root, "status")
    assert (
        r.code == 2
        and "  P1  done*  " in r.out
        and r.out.splitlines()[2].endswith("— depends on 0001/P1 (no status: its plan file is invalid)")
    ), r.out
    data = json.loads(cli(root, "status", "--json").out)
    assert data["plans"][0]["phases"][0]["dependencies_not_done"] == [{"id": "0001/P1", "status": None}]


# --- tracker result new (issue 12 item 9): the command line of tracker.commands.result.run_new -----------------------


def test_result_new_writes_a_result_file_a_bench_gate_reads(repo, cli) -> None:
    gate = 'bench = "app.latency_ms"\nwhere = { size = 1000 }\nat_most = 5.0'
    root = repo({"plans/0001-demo.md": plan_text(phases=phase("P1", gate, paths='"src/**"')), "src/app.py": "x = 1\n"})
    r = cli(root, "result", "new", "latency", "--metric", "app.latency_ms", "--unit", "ms", "--direction", "lower",
            "--param", "size=1000", "--sample", "3.0,3.5", "--sample", "4", "--json")  # fmt: skip
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["cases"] == 1 and doc["measured"] == ["src/app.py"] and doc["path"].startswith("bench/results/")
    assert (root / doc["path"]).is_file()
    assert json.loads(cli(root, "status", "--json").out)["plans"][0]["phases"][0]["status"] == "done"
    r = cli(root, "result", "new", "latency")
    assert r.code == 3 and r.err.startswith("tracker: error: no cases: give --cases FILE")
    cases = root / "cases.csv"
    cases.write_text("metric,unit,direction,size,sample\napp.latency_ms,ms,lower,1000,9\n")
    r = cli(root, "result", "new", "latency", "--cases", str(cases), "--out", str(root / "elsewhere"))
    assert r.code == 0 and r.out.startswith("wrote elsewhere/") and len(list((root / "elsewhere").glob("*.json"))) == 1


# --- the plugin records dirty by tracker.base.dirty, the rule signoff and result files use (issue 12 item 6) -----------------


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


@pytest.mark.parametrize(("env", "message"), [
    ({"TRACKER_COMMIT": "HEAD"}, "TRACKER_COMMIT: expected 40 lowercase hex digits, got 'HEAD'"),
    ({"TRACKER_COMMIT": "a" * 40, "TRACKER_DIRTY": "yes"}, "TRACKER_DIRTY: expected '0' or '1' (or unset: unknown), got 'yes'"),
])  # fmt: skip
def test_a_tracker_commit_readers_would_refuse_stops_the_recording_before_any_test(
    repo, env: dict[str, str], message: str
) -> None:
    root = repo({"tests/test_a.py": "from pathlib import Path\n\ndef test_a():\n    Path('ran').touch()\n"})
    code, out, runs = _record(root, **env)
    assert (code, runs) == (4, []) and f"--tracker-record: {message}" in out, out
    assert not (root / "ran").exists()
