"""``tracker summary``: golden messages on the fixture repository, trailers git reads back, a subject under 72
characters whatever the plans hold, messages merged into what git or a person wrote, and a repository left as it was.

``TRACKER_REGEN_GOLDEN=1 python -m pytest tests/tracker/commands/test_summary.py`` rewrites the golden files
(tests/tracker/golden/summary_*); without it a test fails when the output drifts from them.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import report_fixture
from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git

from tracker.commands.summary import merge
from tracker.core.model import Status
from tracker.report.commit_summary import PhaseChange, Summary, change_subject, clean, quiet_subject, trailers_of

GOLDEN = Path(__file__).parent.parent / "golden"
REGEN = os.environ.get("TRACKER_REGEN_GOLDEN") == "1"


def differs(name: str, text: str) -> str | None:
    """How ``text`` differs from the golden file ``name`` (a diff), or None when it is the same."""
    path = GOLDEN / name
    if not path.exists():
        return f"{path}: missing (TRACKER_REGEN_GOLDEN=1 writes it)"
    want = path.read_text(encoding="utf-8")
    if text == want:
        return None
    diff = difflib.unified_diff(want.splitlines(True), text.splitlines(True), f"golden/{name}", "now")
    return "".join(diff)


def golden(name: str, text: str) -> None:
    """``text`` is the golden file ``name`` (rewritten instead with TRACKER_REGEN_GOLDEN=1)."""
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        (GOLDEN / name).write_text(text, encoding="utf-8")
        return
    problem = differs(name, text)
    assert problem is None, f"output drifted from the golden file (TRACKER_REGEN_GOLDEN=1 rewrites it):\n{problem}"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("fixture") / "repo")


@pytest.fixture
def fixture(built: Path, tmp_path: Path) -> Path:
    """The fixture repository at c5, a copy of its own for each test."""
    return Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))


NEW_RUN = ".tracker/evidence/20261110T100000Z-ci-box-r5.json"
NEW_RESULT = "bench/results/20261110T110000Z-gpu-box-attn-b3.json"


def new_evidence(root: Path) -> Path:
    """Uncommitted evidence in the fixture at c5: a run on the edited engine where everything passes, and a result
    where the kernel beats the baseline again (1.25x) and reaches half of the floor (0.55)."""
    passing = {**report_fixture.PASS, "tests/test_engine.py::test_step": "passed"}
    report_fixture._write(root, NEW_RUN, report_fixture._test_run(root, "2026-11-10T10:00:00Z", passing))
    result = report_fixture._result(
        root,
        "2026-11-10T11:00:00Z",
        [100, 101, 99, 100, 102],
        [125, 126, 124, 125, 127],
        [0.55, 0.56, 0.55, 0.54, 0.55],
    )
    report_fixture._write(root, NEW_RESULT, result)
    return root


def trailers(message: str) -> list[str]:
    """The trailers git reads in ``message`` (``git interpret-trailers --parse``)."""
    out = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def state(root: Path) -> tuple[str, ...]:
    """What git says about the repository: status (untracked files too), HEAD, every ref, the stash."""
    return (
        git(root, "status", "--porcelain=v1", "--untracked-files=all"),
        git(root, "rev-parse", "HEAD"),
        git(root, "for-each-ref"),
        git(root, "rev-list", "--all", "--count"),
    )


# --- goldens ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["c3", "c4", "HEAD"])
def test_golden_messages_of_the_fixture_against_its_tags(fixture: Path, cli: Callable[..., Any], ref: str) -> None:
    got = cli(fixture, "summary", "--against", ref)
    assert (got.code, got.err) == (0, "")
    golden(f"summary_against_{ref.lower()}.txt", got.out)
    assert trailers(got.out) == [line for line in got.out.split("\n\n")[-1].splitlines() if ": " in line]


def test_golden_message_with_new_evidence_in_the_working_tree(fixture: Path, cli: Callable[..., Any]) -> None:
    new_evidence(fixture)
    got = cli(fixture, "summary")
    assert got.code == 0
    golden("summary_new_evidence.txt", got.out)
    # 0002/P1 stays stale: its sign-off saw the engine before the edit (a new run re-verifies its test gate only).
    assert got.out.splitlines()[0] == "0001/P2, 0001/P3 done"
    assert "Re-verified, status unchanged: 0001/P1, 0002/P1" in got.out
    assert trailers(got.out) == [
        "Phase-Done: 0001/P2",
        "Phase-Done: 0001/P3",
        f"Evidence: {NEW_RUN}",
        f"Evidence: {NEW_RESULT}",
    ]
    data = cli(fixture, "summary", "--json")
    golden("summary_new_evidence.json", data.out)
    doc = json.loads(data.out)
    assert doc["message"] == got.out
    speedup = next(b for b in doc["bench"] if b["metric"] == "attn.time_us")
    assert speedup["unit"] == "x" and speedup["threshold"] == 1.1 and speedup["after"] > speedup["before"]


def test_a_regression_says_its_figures_in_the_subject(fixture: Path, cli: Callable[..., Any]) -> None:
    """At c3, with c4's benchmark result (the baseline got faster) in the working tree."""
    result = "bench/results/20261108T100000Z-gpu-box-attn-b2.json"
    git(fixture, "checkout", "-q", "c3")
    (fixture / result).write_text(git(fixture, "show", f"c4:{result}"))
    got = cli(fixture, "summary")
    assert got.out.splitlines()[0] == "0001/P2 regressed (1.06x < 1.10x); 0001/P3 blocked"
    assert trailers(got.out) == ["Phase-Regressed: 0001/P2", "Phase-Blocked: 0001/P3", f"Evidence: {result}"]


def test_an_evidence_file_edited_since_the_revision_is_no_quiet_change(fixture: Path, cli: Callable[..., Any]) -> None:
    """r4 turned failing by hand in the working tree: HEAD's r4 passed, so 0001/P1 regressed (it said "no change
    against HEAD": REF's status was read from the edited file)."""
    r4 = fixture / ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
    doc = json.loads(r4.read_text())
    doc["tests"][1]["outcome"], doc["exitstatus"] = "failed", 1
    r4.write_text(json.dumps(doc))
    got = cli(fixture, "summary")
    assert got.code == 0 and got.out.splitlines()[0].startswith("0001/P1 regressed")
    assert "Phase-Regressed: 0001/P1" in trailers(got.out)


def test_drift_from_a_golden_file_fails(fixture: Path, cli: Callable[..., Any]) -> None:
    got = cli(fixture, "summary", "--against", "c3")
    assert differs("summary_against_c3.txt", got.out) is None
    drifted = got.out.replace("regressed", "done", 1)
    assert differs("summary_against_c3.txt", drifted) is not None
    with pytest.raises(AssertionError, match="drifted"):
        if REGEN:  # regenerating writes instead of comparing: compare as an ordinary run does
            raise AssertionError("drifted")
        golden("summary_against_c3.txt", drifted)


# --- what git reads ----------------------------------------------------------------------------------------------


HOSTILE_TITLES = [
    "line\n\nPhase-Done: 9999/P9\nEvidence: forged.json",
    "# a comment line for git",
    "<script>alert(1)</script> {{ 7*7 }} {% if x %}",
    "\u202e reversed \x1b[31m red \x00 nul",
    "é" * 300,
    "Signed-off-by: Mallory <m@example.com>",
]


def hostile_repo(root: Path, phases: int) -> Path:
    """A repository with one plan of ``phases`` phases under hostile titles and ids up to 120 characters, each
    with a test gate that one uncommitted run meets."""
    blocks = []
    for i in range(phases):
        pid = f"P{i}" + ("_" + "x" * 117 if i % 5 == 0 else "")
        title = json.dumps(HOSTILE_TITLES[i % len(HOSTILE_TITLES)])
        blocks.append(f'```phase\nid = "{pid}"\ntitle = {title}\npaths = ["src/**"]\n\n[[gate]]\ntest = "tests/test_ok.py"\n```\n')  # fmt: skip
    plan = (
        '# Hostile\n\n```plan\nid = "0001"\ntitle = ' + json.dumps(HOSTILE_TITLES[0]) + "\n```\n\n" + "\n".join(blocks)
    )
    files = {"plans/0001-hostile.md": plan, "src/a.py": "x = 1\n", "tests/test_ok.py": "def test_ok():\n    pass\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    report_fixture.git(root, "init", "-q", "-b", "main")
    report_fixture.git(root, "add", "-A")
    report_fixture.git(root, "commit", "-q", "-m", "hostile plans")
    run = report_fixture._test_run(root, "2026-11-10T10:00:00Z", {"tests/test_ok.py::test_ok": "passed"})
    report_fixture._write(root, ".tracker/evidence/20261110T100000Z-ci-box-ok.json", run)
    return root


@pytest.mark.parametrize("phases", [1, 3, 40])
def test_hostile_titles_and_many_phases_keep_the_subject_short_and_the_trailers_ours(
    tmp_path: Path, cli: Callable[..., Any], phases: int
) -> None:
    root = hostile_repo(tmp_path / "hostile", phases)
    got = cli(root, "summary")
    assert got.code == 0
    subject = got.out.splitlines()[0]
    assert len(subject) < 72 and subject.isprintable()
    assert not any(
        line.startswith(("Phase-Done: 9999", "Evidence: forged", "Signed-off-by")) for line in got.out.splitlines()
    )
    want = [f"Phase-Done: 0001/P{i}" + ("_" + "x" * 117 if i % 5 == 0 else "") for i in range(phases)]
    assert trailers(got.out) == [*want, "Evidence: .tracker/evidence/20261110T100000Z-ci-box-ok.json"]
    assert not any(line.startswith("#") for line in got.out.splitlines())  # git would strip such a line
    assert all(line.isprintable() for line in got.out.splitlines())
    if phases == 40:
        assert subject == "40 phases done"


change_keys = st.from_regex(r"\A[0-9]{4}/[A-Za-z][A-Za-z0-9_.-]{0,150}\Z")
statuses = st.sampled_from([*Status, None])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.builds(PhaseChange, change_keys, st.text(max_size=50), statuses, statuses, st.text(max_size=30),
                  st.text(max_size=80)),
        min_size=1, max_size=60,
    )
)  # fmt: skip
def test_the_subject_is_always_under_72_characters(changes: list[PhaseChange]) -> None:
    changes = [c for c in changes if c.before is not c.after] or [changes[0]._replace(before=None)]
    changes = [c._replace(after=Status.DONE) if c.before is None and c.after is None else c for c in changes]
    subject = change_subject(changes)
    assert len(subject) < 72 and "\n" not in subject
    if len(changes) == 1 and len(changes[0].key) < 40:
        assert subject.startswith(changes[0].key)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.lists(change_keys, max_size=30), st.lists(st.text(max_size=80), max_size=5))
def test_the_quiet_subject_is_always_under_72_characters(against: str, keys: list[str], files: list[str]) -> None:
    for args in ((keys, files, keys, files, files), ((), (), (), files, files), ((), (), (), (), ())):
        subject = quiet_subject(against, *args)
        assert len(subject) < 72 and subject.isprintable()


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_clean_leaves_one_printable_line(text: str) -> None:
    out = clean(text)
    assert out.isprintable() and (out == text) == text.isprintable()


hostile_text = st.text(st.characters(codec="utf-8") | st.sampled_from("\n\r\x1b\x85\u2028\u2029\x0b\x0c"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.builds(PhaseChange, hostile_text, hostile_text, statuses, statuses, hostile_text), max_size=4),
    st.lists(hostile_text, max_size=4),
)
def test_no_text_of_a_plan_or_a_file_name_forges_a_trailer(changes: list[PhaseChange], evidence: list[str]) -> None:
    """Every value interpolated into a trailer is one printable line (a key or a file name holding "\\n" or "\\r"
    with "Phase-Done: ..." after it would be a trailer of its own): git reads exactly the trailers the summary has,
    by their keys, merged into a message or on their own."""
    changes = [c for c in changes if c.before is not c.after]
    ours = trailers_of(changes, evidence)
    assert len(ours) == len(changes) + len(evidence)
    assert all(value.isprintable() for _, value in ours)
    for existing in ("", "fix: the engine\n"):
        got = trailers(merge(existing, summary_with(*ours)))
        assert [line.partition(":")[0] for line in got] == [key for key, _ in ours]


# --- --write: into a message someone wrote ------------------------------------------------------------------------


def summary_with(*trailer_lines: tuple[str, str]) -> Summary:
    return Summary("HEAD", None, (), (), (), (), (), (), (), (), (), "0002/P1 done", "Body line.", trailer_lines)


OURS = summary_with(("Phase-Done", "0002/P1"), ("Evidence", ".tracker/evidence/r5.json"))
TEMPLATE = "\n# Please enter the commit message for your changes. Lines starting\n# with '#' will be ignored.\n#\n"


@pytest.mark.parametrize(
    ("existing", "want"),
    [
        ("", OURS.message),
        (TEMPLATE, OURS.message + TEMPLATE),  # the editor's template: ours on top, git's comments kept
        ("fix: the engine\n", "fix: the engine\n\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n"),
        ("fix\n\nwhy it matters\n\nSigned-off-by: A <a@x>\n",
         "fix\n\nwhy it matters\n\nSigned-off-by: A <a@x>\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n"),
        ("fix\n\nSigned-off-by: A <a@x>\nPhase-Done: 0002/P1\n",
         "fix\n\nSigned-off-by: A <a@x>\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n"),
        ("no newline", "no newline\n\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n"),
        ("crlf\r\n", "crlf\r\n\r\nPhase-Done: 0002/P1\r\nEvidence: .tracker/evidence/r5.json\r\n"),
        ("Fixes: #12\n", "Fixes: #12\n\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n"),  # a title
        ("msg\n" + TEMPLATE + "# ------------------------ >8 ------------------------\ndiff --git a b\n+x\n",
         "msg\n\nPhase-Done: 0002/P1\nEvidence: .tracker/evidence/r5.json\n" + TEMPLATE
         + "# ------------------------ >8 ------------------------\ndiff --git a b\n+x\n"),
    ],
)  # fmt: skip
def test_merge_keeps_what_was_written_and_adds_the_trailers(existing: str, want: str) -> None:
    assert merge(existing, OURS) == want
    assert merge(want, OURS) == want  # a second run adds nothing


def test_merge_with_another_comment_character() -> None:
    existing = "\n; Please enter the commit message\n"
    assert merge(existing, OURS, ";") == OURS.message + existing
    assert merge(existing, OURS, "#").startswith("\n; Please")  # read as a message: kept, trailers added


lines = st.sampled_from(["", "fix: x", "# comment", "Key: value", "  continued", "Signed-off-by: A <a@x>",
                         "# ------------------------ >8 ------------------------", "text", "\r"])  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(lines, max_size=12).map("\n".join), st.booleans())
def test_merge_never_loses_a_character(existing: str, newline: bool) -> None:
    existing += "\n" if newline else ""
    out = merge(existing, OURS)
    it = iter(out)
    assert all(ch in it for ch in existing)  # every character, in order: only additions
    assert merge(out, OURS) == out


BULLETED = OURS._replace(body="Status at HEAD -> now:\n- 0002/P1 kernel: planned -> done\n  — 3 gates met")
COMMENTS = st.sampled_from(["#", ";", "-", "P", "E", "0", "S", "*", "Ph", "- ", "Evidence", ""])


@settings(max_examples=400, deadline=None)
@given(st.lists(lines, max_size=12).map("\n".join), COMMENTS, st.booleans(), st.booleans())
def test_merge_adds_no_line_git_would_strip(existing: str, strip: str, stripped: bool, editor: bool) -> None:
    """Whatever the message and the comment string: no line merge adds starts with the one git strips by (the
    bullets become "*" for "-", else nothing is added), and without an editor a message git would abort (no line
    left once stripped) gets nothing. Every existing character is kept, and a second merge adds nothing. The
    comments merge reads are those of the cleanup it knows of (``stripped``: none where it knows of none)."""
    comment = strip if stripped or editor else ""
    out = merge(existing, BULLETED, comment, strip, editor)
    it = iter(out)
    assert all(ch in it for ch in existing)
    added = Counter(out.split("\n")) - Counter(existing.split("\n"))
    assert not (strip and any(line.startswith(strip) for line in added.elements()))
    if not editor and all(not x.strip() or (strip and x.startswith(strip)) for x in existing.split("\n")):
        assert out == existing
    assert merge(out, BULLETED, comment, strip, editor) == out
    if strip == "-" and comment == "-" and editor and not existing.strip():
        assert "\n* 0002/P1 kernel" in out  # re-shaped, not dropped


def test_merged_trailers_are_what_git_reads(fixture: Path) -> None:
    for existing in ("fix: the engine\n", "fix\n\nbody\n\nSigned-off-by: A <a@x>\n", "", TEMPLATE):
        got = trailers(merge(existing, OURS))
        assert got[-2:] == ["Phase-Done: 0002/P1", "Evidence: .tracker/evidence/r5.json"]


def test_write_merges_into_the_message_file_atomically(fixture: Path, cli: Callable[..., Any], tmp_path: Path) -> None:
    new_evidence(fixture)
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("engine: warm-up\n\nSigned-off-by: A <a@x>\n")
    got = cli(fixture, "summary", "--write", str(message))
    assert (got.code, got.out) == (0, "")
    text = message.read_text()
    assert text.startswith("engine: warm-up\n\nSigned-off-by: A <a@x>\nPhase-Done: 0001/P2\n")
    assert trailers(text)[0] == "Signed-off-by: A <a@x>" and len(trailers(text)) == 5
    fresh = tmp_path / "NEW_MSG"
    assert cli(fixture, "summary", "--write", str(fresh)).code == 0
    assert fresh.read_text().startswith("0001/P2, 0001/P3 done\n\nStatus at HEAD (")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_write_refuses_a_file_that_is_not_regular_and_writes_through_a_link(fixture: Path, tmp_path: Path) -> None:
    """A FIFO (or a device) as --write FILE hung the command forever on reading it; it is exit 8 now, untouched. A
    symlink to a message file stays a link: the file it names gets the trailers."""
    import sys

    new_evidence(fixture)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "tracker", "--root", str(fixture), "summary", "--write"]
    done = subprocess.run([*command, str(fifo)], capture_output=True, text=True, timeout=60)
    assert (
        done.returncode == 8
        and f"{fifo}: refused: not a regular file (a FIFO)" in done.stderr
        and "Traceback" not in done.stderr
    )
    assert fifo.is_fifo()
    target = tmp_path / "msg.txt"
    target.write_text("engine: warm-up\n")
    link = tmp_path / "link"
    link.symlink_to(target)
    done = subprocess.run([*command, str(link)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and "Phase-Done: 0001/P2" in trailers(target.read_text())


# --- the repository is left as it was ----------------------------------------------------------------------------


def test_summary_never_changes_the_repository(fixture: Path, cli: Callable[..., Any]) -> None:
    new_evidence(fixture)
    before = state(fixture)
    for args in (("summary",), ("summary", "--against", "c1"), ("summary", "--json")):
        assert cli(fixture, *args).code == 0
    assert state(fixture) == before
    assert not (fixture / ".tracker/.gitignore").exists()  # no file the user did not have


@pytest.mark.parametrize("ref", ["nope", "HEAD~99", "HEAD^{tree}", "-x", ""])
def test_a_bad_ref_is_exit_3(fixture: Path, cli: Callable[..., Any], ref: str) -> None:
    got = cli(fixture, "summary", "--against", ref)
    assert got.code == 3 and got.out == ""
    assert "not a commit in this repository" in got.err and "Traceback" not in got.err


def test_the_first_commit_of_a_repository_is_compared_with_nothing(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "plans").mkdir()
    (root / "plans/0001-k.md").write_text(report_fixture.PLAN_KERNEL)
    got = cli(root, "summary")
    assert got.code == 0
    assert got.out.splitlines()[0] == "0001/P1, 0001/P2, 0001/P3 new"
    assert trailers(got.out) == ["Phase-Blocked: 0001/P2", "Phase-Blocked: 0001/P3", "Phase-Planned: 0001/P1"]


def test_a_rerun_of_every_benchmark_lists_what_moved_most_and_counts_the_rest() -> None:
    from tracker.report.commit_summary import MAX_DELTAS, BenchDelta, body_of, shown_deltas

    def delta(gate: str, after: float) -> BenchDelta:
        return BenchDelta(gate, "m.time_us", "ctx=1", "", "median", "us", 100.0, after, "<=", 120.0, "a.json", "b.json")

    deltas = [delta(f"0001/P{i}#1", 100.0 + i / 10) for i in range(20)] + [delta("0002/P1#1", 100.01)]
    shown = shown_deltas(deltas, {"0002/P1"})
    assert len(shown) == MAX_DELTAS + 1 and shown[-1].gate == "0002/P1#1"  # its phase changed status: always shown
    assert [d.gate for d in shown[:-1]] == [f"0001/P{i}#1" for i in range(12, 20)]  # the ones that moved most
    body = body_of(Summary("c1", None, (), (), tuple(deltas), (), (), (), (), (), (), "s", "", ()))
    assert "- and 13 more, each within 1.1% of its figure at c1 (--json lists them)" in body  # no phase changed here


def test_a_plan_file_not_valid_on_one_side_is_not_compared(fixture: Path, cli: Callable[..., Any]) -> None:
    plan = fixture / "plans/0002-engine.md"
    plan.write_text(plan.read_text().replace('id = "P2"', "id = 2"))
    got = cli(fixture, "summary")
    assert got.code == 0
    assert got.out.splitlines()[0] == "edits plan 0002; no status changed"
    assert "plans/0002-engine.md: not a valid plan now; its phases are not compared" in " ".join(got.out.split())
    assert "Phase-" not in got.out


def figures(stat: str, value: float, unit: str) -> Any:
    from tracker.report.detail import BenchFigures

    return BenchFigures(
        "m.time", {"ctx": 1}, None, stat, value, unit, "≤", 50.0, None, None, None, 7, None, "lower", "r.json", "b"
    )


def test_a_gate_whose_unit_or_stat_was_edited_never_reads_as_a_moved_figure() -> None:
    """A bench gate whose ``unit`` or ``stat`` was edited: its figure at the revision is shown in its own unit and
    statistic, or converted where both are times; never ``100 ms -> 0.10 ms (0.00x)`` for an unchanged measurement."""
    from tracker.report.commit_summary import body_of, delta

    def line(before: Any, after: Any) -> str:
        d = delta("0001/P1#1", before, after)
        assert d is not None
        body = body_of(Summary("c1", None, (), (), (d,), (), (), (), (), (), (), "s", "", ()))
        return " ".join(body.split())  # the item as read, its wrapped lines joined

    # the unit edited from us to ms, the same measurement: converted, nothing moved
    assert delta("0001/P1#1", figures("median", 100.0, "us"), figures("median", 0.1, "ms")) is None
    got = line(figures("median", 100.0, "us"), figures("median", 0.2, "ms"))
    assert "median: 0.10 ms -> 0.20 ms (2.00x)" in got, got
    # another statistic: each figure named by its own, no ratio
    got = line(figures("median", 100.0, "us"), figures("p90", 130.0, "us"))
    assert "median 100 us -> p90 130 us (another statistic, not compared)" in got and "x)" not in got, got
    # units that do not convert: each its own, no ratio
    got = line(figures("median", 0.5, "fraction"), figures("median", 40.0, "us"))
    assert "0.50 fraction -> 40.0 us (another unit, not compared)" in got and "x)" not in got, got
    d = delta("0001/P1#1", figures("median", 0.5, "fraction"), figures("median", 0.5, "us"))
    assert d is not None and d.ratio is None and d.as_json()["before_unit"] == "fraction"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["median", "mean", "p90", "min"]),
    st.sampled_from(["median", "mean", "p90", "min"]),
    st.sampled_from(["ns", "us", "ms", "s", "fraction", "×", "GB/s"]),
    st.sampled_from(["ns", "us", "ms", "s", "fraction", "×", "GB/s"]),
    st.floats(0.001, 1e6),
    st.floats(0.001, 1e6),
)
def test_a_ratio_is_given_only_for_one_statistic_in_one_unit(
    s1: str, s2: str, u1: str, u2: str, v1: float, v2: float
) -> None:
    from tracker.core.bench_verdict import SECONDS
    from tracker.report.commit_summary import delta

    d = delta("0001/P1#1", figures(s1, v1, u1), figures(s2, v2, u2))
    same = s1 == s2 and (u1 == u2 or (u1 in SECONDS and u2 in SECONDS))
    if d is not None and d.ratio is not None:
        assert same
        want = v2 / (v1 * (SECONDS[u1] / SECONDS[u2] if u1 != u2 else 1.0))
        assert abs(d.ratio - want) <= 1e-9 * max(1.0, abs(want))
    if not same:
        assert d is not None and d.ratio is None and not d.comparable


def test_the_pull_request_table_names_each_statistic_and_unit_it_cannot_compare() -> None:
    from tracker.report.commit_summary import delta
    from tracker.report.pr_summary import _delta_row

    row = _delta_row(delta("0001/P1#1", figures("median", 100.0, "us"), figures("p90", 130.0, "us")))
    assert "median 100 us → p90 130 us (not compared)" in row, row
    row = _delta_row(delta("0001/P1#1", figures("median", 0.5, "fraction"), figures("median", 40.0, "us")))
    assert "0.50 fraction → 40.0 us (another unit, not compared)" in row, row
    row = _delta_row(delta("0001/P1#1", figures("median", 100.0, "us"), figures("median", 0.2, "ms")))
    assert "0.10 ms → 0.20 ms" in row and "compared" not in row, row


def test_a_subject_says_loosens_only_of_gates_that_ask_less() -> None:
    from tracker.report.gate_edits import GateEdit

    looser = GateEdit("0001/P1#1", "looser", "bench m at most 2 -> at most 10")
    removed = GateEdit("0001/P1#2", "removed", "test tests/test_a.py")
    changed = GateEdit("0001/P1#3", "changed", "bench m at most 2 us -> at most 2 ms")
    assert quiet_subject("c1", [], [], [], [], [], [looser, removed]).startswith("loosens 0001/P1#1")
    got = quiet_subject("c1", [], [], [], [], [], [looser, changed])
    assert got.startswith("changes 0001/P1#1") and "loosens" not in got, got  # one may ask more: not "loosens"


def test_a_figure_without_a_unit_or_out_of_range_is_never_compared() -> None:
    """A helper's attacks on the first cut (2026-12-06): a figure with no unit at the revision read as ms ("100 ms ->
    0.10 ms (0.001x)") or as no move at all; a conversion to inf got a ratio of 0; the line for the deltas not listed
    gave figures of another statistic a percentage ("each within inf%")."""
    from tracker.report.commit_summary import body_of, delta
    from tracker.report.pr_summary import _delta_row

    def text(*deltas: Any) -> str:
        summary = Summary("c1", None, (), (), tuple(deltas), (), (), (), (), (), (), "s", "", ())
        return " ".join(body_of(summary).split())

    d = delta("0001/P1#1", figures("median", 100.0, ""), figures("median", 0.1, "ms"))
    assert d is not None and d.ratio is None and d.before_unit == "" and d.as_json()["before_unit"] == ""
    assert "median: 100 -> 0.10 ms (another unit, not compared)" in text(d), text(d)
    assert "100 → 0.10 ms (another unit, not compared)" in _delta_row(d), _delta_row(d)
    assert delta("0001/P1#1", figures("median", 5.0, ""), figures("median", 5.0, "ms")) is not None
    d = delta("0001/P1#1", figures("median", 1e300, "s"), figures("median", 5.0, "ns"))
    assert d is not None and d.ratio is None and d.before == 1e300 and "1e+300 s -> 5.00 ns" in text(d), text(d)
    same = delta("0001/P1#1", figures("median", 100.0, "us"), figures("median", 100.0, "us"))
    assert same is None and delta("0001/P1#1", figures("median", 7.0, "µs"), figures("median", 7.0, "us")) is None
    stats = [delta(f"0001/P{i}#1", figures("median", 10.0, "us"), figures("p90", 12.0, "us")) for i in range(9)]
    got = text(*stats)
    assert "and 1 more, not compared with a figure at c1" in got and "%" not in got, got
    moved = [
        delta(f"0002/P{i}#1", figures("median", 10.0, "us"), figures("median", 10.0 + i, "us")) for i in range(1, 10)
    ]
    got = text(*stats, *moved)
    assert "and 10 more: 9 within 90.0% of their figures at c1, 1 not compared" in got, got
