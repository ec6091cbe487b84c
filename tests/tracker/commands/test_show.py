"""``tracker show`` and ``tracker log``: goldens on the fixture repository (tests/tracker/report_fixture.py), ``--json``,
selectors, hostile plan and evidence text shown inert, exit codes; and ``tracker status PLAN`` / ``PLAN/PHASE``
selecting what they name, on the plain line and through typer alike.

The goldens are the files ``tests/tracker/golden/show_*`` and ``golden/log_*``, compared byte for byte. After an
intended change of the output, rewrite them and read the diff before committing it::

    TRACKER_REGEN_GOLDEN=1 python -m pytest tests/tracker/commands/test_show.py

They hold on every machine: the fixture's commits, times and evidence are fixed, and the commands are given a clock
fixed after its last evidence (``tracker.base.contract.Clock``), so nothing of "now" or of this machine enters them.
"""

from __future__ import annotations

import calendar
import io
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import report_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.contract import Clock
from tracker.commands import common, log, show

GOLDEN = Path(__file__).parent.parent / "golden"
REGEN = os.environ.get("TRACKER_REGEN_GOLDEN") == "1"
CLOCK_AT = calendar.timegm((2026, 11, 10, 0, 0, 0))  # the day after the fixture's last commit
PHASES = ["0001/P1", "0001/P2", "0001/P3", "0002/P1", "0002/P2"]
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the only escape sequences the tracker writes itself (colour)


def check_golden(name: str, text: str, regen: bool = REGEN) -> None:
    """``text`` is the golden file ``name``, byte for byte (``regen``: write it instead)."""
    path = GOLDEN / name
    if regen:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.is_file(), f"{path} missing: TRACKER_REGEN_GOLDEN=1 python -m pytest {__file__}"
    want = path.read_bytes().decode("utf-8")
    assert text == want, f"{name} drifted (TRACKER_REGEN_GOLDEN=1 rewrites it; read the diff first)"


def golden_name(key: str, suffix: str = ".txt") -> str:
    return key.replace("/", "_") + suffix


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("show") / "repo")


@pytest.fixture
def own_repo(fixture_repo: Path, tmp_path: Path) -> Path:
    """A copy of the fixture repository this test may change."""
    root = tmp_path / "repo"
    shutil.copytree(fixture_repo, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    return root


def output(
    command: Any, root: Path, *targets: str, as_json: bool = False, color: str = "never", clock: Clock | None = None
) -> str:
    buf = io.StringIO()
    assert command.run(root, list(targets), as_json, out=buf, color=color, clock=clock or Clock(CLOCK_AT)) == 0
    return buf.getvalue()


# --- goldens ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", PHASES)
def test_show_of_each_fixture_phase_is_its_golden(fixture_repo: Path, key: str) -> None:
    check_golden("show_" + golden_name(key), output(show, fixture_repo, key))


def test_show_in_colour_and_as_json_are_their_goldens(fixture_repo: Path) -> None:
    coloured = output(show, fixture_repo, "0001/P2", "0002/P1", color="always")
    check_golden("show_colour.txt", coloured)
    assert SGR.sub("", coloured) == output(show, fixture_repo, "0001/P2", "0002/P1")  # the same text, painted
    text = output(show, fixture_repo, "1", "2", as_json=True)
    check_golden("show_all.json", text)
    data = json.loads(text)
    assert [p["key"] for p in data["phases"]] == PHASES and data["invalid"] == []
    p2 = data["phases"][1]
    assert p2["status"] == "regressed" and [t["to"] for t in p2["history"]] == ["planned", "done", "regressed"]
    figures = p2["gates"][0]["bench"]
    assert (figures["value"], figures["threshold"], figures["samples"], figures["baseline_samples"]) == (
        1.04,
        1.1,
        5,
        5,
    )
    # judged at the default 95%: the margin is the compared bound's (the upper one: it misses 1.1 confidently)
    assert (figures["bound"], figures["confidence"], figures["undecided"]) == (1.06, 0.95, False)
    assert figures["margin"] == pytest.approx((1.06 - 1.1) / 1.1)


@pytest.mark.parametrize("plan", ["0001", "0002"])
def test_log_of_each_fixture_plan_is_its_golden(fixture_repo: Path, plan: str) -> None:
    check_golden(f"log_{plan}.txt", output(log, fixture_repo, plan))


def test_log_as_json_is_its_golden(fixture_repo: Path) -> None:
    text = output(log, fixture_repo, "1", "2", as_json=True)
    check_golden("log_all.json", text)
    data = json.loads(text)
    assert [(p["key"], p["status"], len(p["history"])) for p in data["phases"]] == [
        ("0001/P1", "done", 3), ("0001/P2", "regressed", 3), ("0001/P3", "blocked", 2),
        ("0002/P1", "stale", 3), ("0002/P2", "blocked", 1),
    ]  # fmt: skip


def test_a_golden_that_drifts_fails(fixture_repo: Path) -> None:
    """The comparison can fail: one character changed, one line more, a colour code, a missing final newline."""
    text = output(show, fixture_repo, "0001/P2")
    check_golden("show_0001_P2.txt", text, regen=False)
    for mutated in (
        text.replace("-3.6%", "-3.5%"),
        text + "\n",
        text.rstrip("\n"),
        text.replace("regressed", "\x1b[31mregressed\x1b[0m", 1),
        text.replace("\n", "\r\n"),
    ):
        with pytest.raises(AssertionError, match="drifted"):
            check_golden("show_0001_P2.txt", mutated, regen=False)


# --- what the goldens say, checked as facts -------------------------------------------------------------------------


def test_show_explains_the_stale_the_regressed_and_the_blocked(fixture_repo: Path) -> None:
    stale = output(show, fixture_repo, "0002/P1")
    assert "  changed   src/engine.py\n" in stale
    assert stale.count("    stale     changed since evidence: src/engine.py\n") == 2  # both gates' evidence
    assert stale.endswith("    now: stale — changed since evidence: src/engine.py\n")
    regressed = output(show, fixture_repo, "0001/P2")
    assert "    figures   median 1.04× vs impl=ref, 95% upper bound 1.06×; needs ≥ 1.10×: margin -3.6%\n" in regressed
    assert "    samples   5, baseline 5\n" in regressed
    assert "    evidence  bench/results/20261108T100000Z-gpu-box-attn-b2.json\n" in regressed
    blocked = output(show, fixture_repo, "0001/P3")
    assert "0001/P2 regressed" in blocked and blocked.endswith("    now: blocked — blocked by 0001/P2\n")


def test_a_plan_shows_its_phases_one_after_another_whatever_names_it(fixture_repo: Path) -> None:
    each = "\n".join((GOLDEN / ("show_" + golden_name(k))).read_text(encoding="utf-8") for k in PHASES[:3])
    for spec in ("0001", "1", "plans/0001-verify-kernel.md", "01"):
        assert output(show, fixture_repo, spec) == each, spec
    assert output(show, fixture_repo, "0001/P1", "1/P1") == output(show, fixture_repo, "0001/P1")  # named twice: once


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled as soon as they are written (else no cache that trusts stat signatures keeps what it
    learned of files written less than 2 s ago: the fixture's were)."""
    from tracker.base import fileio
    from tracker.store import statusindex

    monkeypatch.setattr(fileio, "SETTLED_NS", -(10**12))
    monkeypatch.setattr(statusindex, "SETTLED_NS", -(10**12))


def refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("asked again: the phase-history cache should have answered")


def test_a_second_command_answers_from_the_cache_without_replaying(
    own_repo: Path, settled_at_once: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.report import repo_view

    runs = [(show, ["1", "2"], False), (show, ["1", "2"], True), (log, ["1", "2"], False)]
    cold = [output(command, own_repo, *targets, as_json=as_json) for command, targets, as_json in runs]
    assert (own_repo / ".tracker/cache/phase-history.json").is_file()
    monkeypatch.setattr(repo_view, "replay", refuse)
    monkeypatch.setattr(repo_view, "bench_figures", refuse)
    assert [output(command, own_repo, *targets, as_json=as_json) for command, targets, as_json in runs] == cold


def test_cache_entries_this_code_did_not_write_are_computed_again(own_repo: Path, settled_at_once: None) -> None:
    from tracker.base.cache import Cache, command_cache
    from tracker.report.repo_view import HISTORY, RepoView

    want = output(show, own_repo, "1", "2")
    view = RepoView(own_repo, Cache(own_repo), Clock(CLOCK_AT))
    assert view.kept.timelines and view.kept.figures  # the first command kept them
    hostile: list[Any] = [["2026", "done"], [None] * 8, "x", ["t", "done", "nope", "f", "k", "m", None, []],
                          ["t", "done", "done", "f", "k", "m", None, [True]], ["t", "done", "done", "f", "k", "m", 7, []]]  # fmt: skip
    timelines = {ident: [hostile[i % len(hostile)]] for i, ident in enumerate(view.kept.timelines)}
    figures = {ident: {"figures": {"value": float("nan")}} for ident in view.kept.figures}
    with command_cache(own_repo) as cache:
        cache.put(HISTORY, view.kept.key, {"built": "2026-11-09T00:00:00Z", "timelines": timelines, "figures": figures})
    assert output(show, own_repo, "1", "2") == want
    with command_cache(own_repo) as cache:  # built later than this machine's clock says it is: not read back
        cache.put(HISTORY, view.kept.key, {"built": "2099-01-01T00:00:00Z", "timelines": timelines, "figures": figures})
    assert output(show, own_repo, "1", "2") == want


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=9) | st.dictionaries(st.text(max_size=12), inner, max_size=17),
    max_leaves=30,
)
FIGURE_FIELDS = st.fixed_dictionaries({}, optional={name: JSON for name in ("metric", "params", "baseline", "stat", "value",
    "unit", "op", "threshold", "bound", "confidence", "margin", "samples", "baseline_samples", "direction", "run", "benchmark")})  # fmt: skip


@settings(deadline=None, max_examples=500, suppress_health_check=list(HealthCheck))
@given(row=JSON | st.lists(JSON, min_size=8, max_size=8), figures=JSON | FIGURE_FIELDS)
def test_the_cache_s_readers_take_only_what_they_wrote(detail: Any, row: Any, figures: Any) -> None:
    from tracker.core.model import Status
    from tracker.core.timeline import Transition
    from tracker.report.detail import BenchFigures

    t = Transition.from_row("0001/P1", row)
    if t is not None:
        assert isinstance(t.previous, Status) and isinstance(t.status, Status) and isinstance(t.time, str)
        assert all(type(n) is int for n in t.gates) and Transition.from_row("0001/P1", t.row()) == t
    f = BenchFigures.from_json(figures)
    if f is not None:
        assert (
            isinstance(f.value, (int, float))
            and isinstance(f.samples, int)
            and BenchFigures.from_json(f._asdict()) == f
        )
    for kept in detail.history:  # what this code writes, it reads back
        assert Transition.from_row(kept.key, kept.row()) == kept
    bench = detail.gates[0].bench
    assert bench is not None and BenchFigures.from_json(bench._asdict()) == bench


def test_new_evidence_is_replayed_though_a_timeline_was_kept(own_repo: Path, settled_at_once: None) -> None:
    before = output(log, own_repo, "0002/P2")
    doc = report_fixture._test_run(own_repo, "2026-11-09T10:00:00Z", {"tests/test_graphs.py::test_replay": "passed"})
    path = own_repo / ".tracker/evidence/20261109T100000Z-ci-box-r5.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    after = output(log, own_repo, "0002/P2")
    assert after.startswith(before.rsplit("\n  now:", 1)[0])
    last = after.splitlines()[-2]
    assert re.match(
        r"  2026-11-09T10:00:00Z  planned -> done +gate 1 +test run  ci-box, [0-9a-f]{7}  .*-r5.json$", last
    )
    assert after.endswith("  now: done — depends on 0002/P1 (stale)\n")  # done outranks blocked


def test_the_cli_prints_what_run_prints(fixture_repo: Path, cli: Callable[..., Any]) -> None:
    for args in (["show", "0001/P2"], ["show", "2", "--json"], ["log", "1"], ["log", "0002/P1", "--json"]):
        got = cli(fixture_repo, *args)
        command = show if args[0] == "show" else log
        want = output(command, fixture_repo, *args[1:2], as_json="--json" in args, clock=Clock())
        assert (got.code, got.err, got.out) == (0, "", want), args
    coloured = cli(fixture_repo, "show", "0001/P1", "--color=always")
    assert SGR.search(coloured.out) and cli(fixture_repo, "--no-color", "show", "0001/P1").out == SGR.sub(
        "", coloured.out
    )


# --- errors -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (["show", "9"], "unknown plan '0009' (known plans: 0001, 0002)"),
        (["show", "1/P9"], "unknown phase 'P9' in plan 0001 (its phases: P1, P2, P3)"),
        (["show", "0001/P1", "2/P7"], "unknown phase 'P7' in plan 0002 (its phases: P1, P2)"),
        (["log", "0003"], "unknown plan '0003' (known plans: 0001, 0002)"),
        (
            ["log", "plans/0009-x.md"],
            "plans/0009-x.md: not a plan file of this repository (plans/NNNN-slug.md in {root})",
        ),
    ],
)
def test_an_unknown_plan_or_phase_is_exit_3_with_nothing_shown(
    fixture_repo: Path, cli: Callable[..., Any], args: list[str], err: str
) -> None:
    got = cli(fixture_repo, *args)
    assert (got.code, got.out, got.err) == (3, "", f"tracker: error: {err.format(root=fixture_repo)}\n")


def test_show_and_log_need_a_target(fixture_repo: Path, cli: Callable[..., Any]) -> None:
    for command in ("show", "log"):
        got = cli(fixture_repo, command)
        assert got.code == 3 and got.out == "" and "Missing argument" in got.err


BROKEN = '# Broken\n\n```plan\nid = "0003"\ntitle = "Broken"\n```\n\n```phase\nid = "P1"\n```\n'
BROKEN_LINE = "0003  invalid plan file (plans/0003-broken.md): 1 problem(s), see `tracker lint`"
BROKEN_ERR = "plans/0003-broken.md:8: phase P1: missing required key 'title'\ntracker: error: 1 problem(s) in plan files (see `tracker lint`)\n"


def test_an_invalid_plan_file_is_exit_2_after_what_can_be_shown(own_repo: Path, cli: Callable[..., Any]) -> None:
    (own_repo / "plans/0003-broken.md").write_text(BROKEN, encoding="utf-8")
    got = cli(own_repo, "show", "3")
    assert (got.code, got.out, got.err) == (2, BROKEN_LINE + "\n", BROKEN_ERR)
    got = cli(own_repo, "show", "0001/P1", "3")
    first = output(show, own_repo, "0001/P1", clock=Clock())
    assert (got.code, got.out, got.err) == (2, first + "\n" + BROKEN_LINE + "\n", BROKEN_ERR)
    got = cli(own_repo, "log", "3", "--json")
    assert got.code == 2 and json.loads(got.out) == {
        "phases": [],
        "invalid": [{"path": "plans/0003-broken.md", "id": "0003", "problems": [BROKEN_ERR.split("\n")[0]]}],
    }
    assert (
        cli(own_repo, "show", "0002/P1").code == 0
    )  # an invalid file that bears on nothing shown is status's business


def test_a_dependency_in_an_invalid_plan_file_has_no_status_and_ends_with_exit_2(
    own_repo: Path, cli: Callable[..., Any]
) -> None:
    kernel = own_repo / "plans/0001-verify-kernel.md"
    kernel.write_text(kernel.read_text(encoding="utf-8").replace('title = "Correct kernel"\n', ""), encoding="utf-8")
    got = cli(own_repo, "show", "0002/P1")
    assert got.code == 2 and got.out.startswith("0002/P1  Engine runs the kernel\n")
    assert "  depends   0001/P1 (no status: its plan file is invalid)\n" in got.out
    assert (
        "    now: stale — changed since evidence: src/engine.py; depends on 0001/P1 (no status: its plan file is invalid)\n"
        in got.out
    )
    assert got.out.endswith("0001  invalid plan file (plans/0001-verify-kernel.md): 1 problem(s), see `tracker lint`\n")
    assert got.err.startswith("plans/0001-verify-kernel.md:") and got.err.endswith("(see `tracker lint`)\n")
    assert cli(own_repo, "log", "0002/P1").code == 2


def test_show_on_a_repository_without_evidence(fixture_repo: Path, tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = tmp_path / "fresh"
    for rel in ("plans/0001-verify-kernel.md", "plans/0002-engine.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture_repo / rel, root / rel)
    report_fixture.git(root, "init", "-q", "-b", "main")
    got = cli(root, "show", "0001/P2")
    assert got.code == 0 and got.err == ""
    assert "    verdict   unmet: no benchmark evidence\n    evidence  none\n" in got.out
    assert got.out.endswith(
        "  history\n    no evidence has changed its status\n    now: blocked — blocked by 0001/P1\n"
    )
    got = cli(root, "log", "1")
    assert got.code == 0 and got.out.startswith(
        "0001/P1  Correct kernel\n  no evidence has changed its status\n  now: planned — gate 1: no evidence: never run\n"
    )


# --- hostile text ---------------------------------------------------------------------------------------------------

ESCAPE = "\x1b[2J\x1b]0;owned\x07"
HOSTILE_TITLE = "\x1b[31mred\r<script>alert(1)</script>\u202eevil\x9b1m " + "long " * 2000
MANUAL = "sign " + ESCAPE + "\r\n{{ 7*7 }}"
HOSTILE_PLAN = f"""# Hostile

```plan
id = "0001"
title = {json.dumps(HOSTILE_TITLE)}
```

```phase
id = "P1"
title = {json.dumps(HOSTILE_TITLE)}

[[gate]]
manual = {json.dumps(MANUAL)}
```
"""


def hostile_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose plan text and sign-off carry terminal escapes; (root, the manual gate's text)."""
    from tracker.core.model import ManualGate, gate_hash

    root = tmp_path / "hostile"
    (root / "plans").mkdir(parents=True)
    (root / "plans/0001-hostile.md").write_text(HOSTILE_PLAN, encoding="utf-8")
    report_fixture.git(root, "init", "-q", "-b", "main")
    report_fixture.git(root, "add", "-A")
    report_fixture.git(root, "commit", "-q", "-m", "hostile")
    manual = MANUAL
    doc = {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#1", "gate_hash": gate_hash(ManualGate(manual)),
           "manual": manual, "by": ESCAPE + "Mallory", "why": "\r\x1b[1A" + ESCAPE, "time": "2026-11-04T10:00:00Z",
           "host": "host" + ESCAPE, "commit": report_fixture.git(root, "rev-parse", "HEAD").strip(), "dirty": False,
           "files": report_fixture.tree_ids(root)}  # fmt: skip
    path = root / ".tracker/evidence/20261104T100000Z-laptop-signoff-x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return root, manual


def test_hostile_plan_and_evidence_text_never_reaches_the_terminal_raw(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root, manual = hostile_repo(tmp_path)
    for args in (["show", "1"], ["log", "1"], ["show", "1", "--color=always"], ["log", "1", "--color=always"]):
        got = cli(root, *args)
        assert got.code == 0, got.err
        painted = SGR.sub("", got.out) if "--color=always" in args else got.out
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", painted), args  # no control character but \n
        assert "\\x1b[31mred\\r<script>alert(1)</script>\\u202eevil\\x9b1m long" in got.out
    text = cli(root, "show", "1").out
    assert ("long " * 2000).rstrip() in text  # a very long title is shown whole, on its line
    assert "verdict   met: signed off by \\x1b[2J\\x1b]0;owned\\x07Mallory: \\r\\x1b[1A\\x1b[2J" in text
    assert "{{ 7*7 }}" in text and "49" not in text  # plan text is data, never a template
    assert "host\\x1b[2J\\x1b]0;owned\\x07, commit" in text
    got = cli(root, "show", "1", "--json")
    assert not re.search("[\x00-\x1f\x7f-\x9f\u202e]", got.out.replace("\n", ""))
    data = json.loads(got.out)
    assert data["phases"][0]["title"] == HOSTILE_TITLE  # the data itself, escaped only as JSON escapes it
    assert data["phases"][0]["gates"][0]["definition"] == {"manual": manual}


@pytest.fixture(scope="module")
def detail(fixture_repo: Path) -> Any:
    from tracker.base.cache import Cache
    from tracker.report.repo_view import RepoView

    return RepoView(fixture_repo, Cache(None), Clock(CLOCK_AT)).details(["0001/P2"])[0]


def with_text(detail: Any, text: str) -> Any:
    gate = detail.gates[0]._replace(label=text, reason=text)
    return detail._replace(title=text, plan_title=text, note=text, paths=(text,), gates=(gate,))


@settings(deadline=None, max_examples=300, suppress_health_check=list(HealthCheck))
@given(text=st.text(max_size=60), color=st.booleans())
def test_any_text_in_a_phase_renders_inert(detail: Any, text: str, color: bool) -> None:
    """Whatever a plan or evidence file says, the text shown holds no control character (the colour aside) and no
    line more than a plain title makes."""
    paint = show.Paint(color)
    for render in (lambda d: show.render(d, paint), lambda d: log.render(d, paint, {})):
        rendered = render(with_text(detail, text))
        plain = SGR.sub("", rendered) if color else rendered
        assert not common._CONTROL.search(plain.replace("\n", "")), repr(rendered)
        assert rendered.count("\n") == render(with_text(detail, "x")).count("\n")


# --- status PLAN and PLAN/PHASE select what they name (issue 14) --------------------------------------------------


def status_through(path: str, root: Path, args: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``tracker status`` on the plain line (:func:`tracker.cli.main`, which reads it without typer) or through typer
    (:func:`tracker.cli.app.run_typer`, as every other command line)."""
    from tracker import cli
    from tracker.cli import plain
    from tracker.cli.app import run_typer

    argv = ["--root", str(root), "status", *args]
    assert (plain.read(argv[:]) is not None) is True  # a plain line: main() takes the fast path with it
    capfd.readouterr()
    try:
        if path == "plain":
            cli.main(argv)
        else:
            sys.exit(run_typer(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", ["plain", "typer"])
def test_status_of_a_plan_or_a_phase_shows_only_that(
    fixture_repo: Path, capfd: pytest.CaptureFixture[str], path: str
) -> None:
    code, out, _ = status_through(path, fixture_repo, [], capfd)
    *everything, totals = out.splitlines()
    assert code == 0 and len(everything) == 7 and totals.endswith(" of 5 phases"), totals  # totals: all plans only
    for spec, want in (
        ("0002", [everything[4], everything[5], everything[6]]),
        ("1", everything[:4]),
        ("plans/0002-engine.md", everything[4:]),
        ("0001/P3", [everything[0], everything[3]]),
        ("2/P1", [everything[4], everything[5]]),
    ):
        code, out, err = status_through(path, fixture_repo, [spec], capfd)
        assert (code, err, out.splitlines()) == (0, "", want), spec
        code, out, _ = status_through(path, fixture_repo, [spec, "--json"], capfd)
        data = json.loads(out)
        assert [(p["id"], [ph["id"] for ph in p["phases"]]) for p in data["plans"]] == [
            (line.split()[0], [x.split()[0] for x in want[1:]]) for line in want[:1]
        ], spec
    assert status_through(path, fixture_repo, ["0002/P9"], capfd)[0] == 3


def test_status_selects_the_same_on_both_paths(fixture_repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    for args in (["0002/P1"], ["1"], ["1/P2", "--json"], ["--color=always", "2"]):
        assert status_through("plain", fixture_repo, args, capfd) == status_through(
            "typer", fixture_repo, args, capfd
        ), args
