"""``tracker report``: goldens on the fixture repository (tests/tracker/report_fixture.py), the data as ``--json``,
scopes and periods (a plan, ``--milestone``, ``--since``), exit codes, ``--out`` written whole or not at all,
per-repository templates, and plan text that stays data (escaped, never evaluated) in Markdown and HTML.

The goldens are ``tests/tracker/golden/report_*``, compared byte for byte; after an intended change of the output::

    TRACKER_REGEN_GOLDEN=1 python -m pytest tests/tracker/commands/test_report.py

and read the diff before committing it. The fixture's commits, times and evidence are fixed, and a report says
nothing of "now" (its period ends at the newest evidence), so the goldens hold on every machine.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import report_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.commands import report
from tracker.errors import FileError, TrackerError, UsageError, exit_code_for
from tracker.report import report_text

GOLDEN = Path(__file__).parent.parent / "golden"
REGEN = os.environ.get("TRACKER_REGEN_GOLDEN") == "1"
UNESCAPED_TAG = re.compile(r"(?<!\\)<(?:script|/table)", re.IGNORECASE)
HOSTILE = "<script>alert(1)</script> {{ 7*7 }} {% if true %}IF{% endif %} </table> | `x` &amp; [a](http://e.x)"


def check_golden(name: str, text: str, regen: bool = REGEN) -> None:
    path = GOLDEN / name
    if regen:
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.is_file(), f"{path} missing: TRACKER_REGEN_GOLDEN=1 python -m pytest {__file__}"
    assert text == path.read_bytes().decode("utf-8"), f"{name} drifted (TRACKER_REGEN_GOLDEN=1 rewrites it)"


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("report") / "repo")


@pytest.fixture
def own_repo(fixture_repo: Path, tmp_path: Path) -> Path:
    """A copy of the fixture repository this test may change."""
    root = tmp_path / "repo"
    shutil.copytree(fixture_repo, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    return root


def text_of(root: Path, **kwargs: object) -> str:
    buf = io.StringIO()
    assert report.run(root, out=buf, **kwargs) == 0  # type: ignore[arg-type]
    return buf.getvalue()


def code_of(call: object) -> int:
    try:
        return call()  # type: ignore[operator,no-any-return]
    except TrackerError as err:
        return int(exit_code_for(err))


# --- goldens --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("report_all.md", {}),
        ("report_0002.md", {"plan": "0002"}),
        ("report_milestone_v1.md", {"milestone": "v1"}),
        ("report_since_c3.md", {"since": "c3"}),
        ("report_all.json", {"as_json": True}),
    ],
)
def test_reports_of_the_fixture_are_their_goldens(fixture_repo: Path, name: str, kwargs: dict[str, object]) -> None:
    check_golden(name, text_of(fixture_repo, **kwargs))


def test_a_golden_that_drifts_fails(fixture_repo: Path) -> None:
    text = text_of(fixture_repo)
    check_golden("report_all.md", text, regen=False)
    for mutated in (text.replace("−3.6%", "−3.5%"), text + "\n", text.replace("\n", "\r\n", 1)):
        assert mutated != text
        with pytest.raises(AssertionError, match="drifted"):
            check_golden("report_all.md", mutated, regen=False)


# --- what the report says, checked as facts -------------------------------------------------------------------------


def test_the_data_says_what_the_history_was(fixture_repo: Path) -> None:
    data = json.loads(text_of(fixture_repo, as_json=True))
    assert data["scope"] == {"kind": "all", "name": None}
    assert data["period"]["kind"] == "everything" and data["period"]["through"] == "2026-11-08T10:00:00Z"
    changes = [(t["phase"], t["from"], t["to"]) for t in data["changes"]]
    # the moves that stayed: 0001/P1 regressed and came back (a change planned -> done, via regressed)
    assert ("0001/P1", "planned", "done") in changes and ("0001/P2", "blocked", "regressed") in changes
    assert next(t for t in data["changes"] if t["phase"] == "0001/P1")["via"] == ["done", "regressed"]
    dump = json.dumps(data)
    measured_at = report_fixture.git(fixture_repo, "rev-parse", "c4~1").strip()  # the commit b2 measured
    for needle in ("bench/results/20261108T100000Z-gpu-box-attn-b2.json", "src/engine.py", measured_at):
        assert needle in dump, needle


def test_since_a_ref_keeps_only_the_evidence_after_it(fixture_repo: Path) -> None:
    since = json.loads(text_of(fixture_repo, since="c3", as_json=True))
    assert since["period"]["kind"] == "since-ref" and since["period"]["ref"] == "c3"
    times = [t["time"] for t in since["changes"]]
    assert times and min(times) > "2026-11-05T10:00:00Z"  # r2 (11-05) is in c3: not a change after it
    everything = json.loads(text_of(fixture_repo, as_json=True))
    assert len(since["changes"]) < len(everything["changes"])
    md = text_of(fixture_repo, since="c3")
    assert "done → **regressed** at a benchmark run" in md and "planned → **done**" not in md


def test_a_plan_report_holds_only_that_plan(fixture_repo: Path) -> None:
    md = text_of(fixture_repo, plan="2")
    assert "#### 0002/P1" in md and "#### 0001/" not in md and "depends on 0001/P1" in md
    assert text_of(fixture_repo, plan="plans/0002-engine.md") == md


def test_html_is_one_self_contained_file(fixture_repo: Path) -> None:
    page = text_of(fixture_repo, fmt="html")
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I), "nothing loaded from outside"
    assert "@import" not in page and "<link" not in page.lower()
    assert "<table" in page and "0001/P2" in page


def test_html_without_matplotlib_renders_with_a_note(fixture_repo: Path, tmp_path: Path) -> None:
    """Without the [report] extra the page still renders: tables, and one line where the charts would be."""
    out = tmp_path / "r.html"
    code = (
        "import sys\nsys.modules['matplotlib'] = None  # an import of it fails, as where it is not installed\n"
        "from tracker.cli import main\n"
        f"main(['--root', {str(fixture_repo)!r}, 'report', '--format', 'html', '--out', {str(out)!r}])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    assert report_text.CHARTS_NOTE in html.unescape(page) and "<svg" not in page and "<table" in page


# --- exit codes -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"plan": "0009"}, "unknown plan '0009'"),
        ({"plan": "0001/P1"}, "a report covers whole plans"),
        ({"milestone": "v9"}, "unknown milestone 'v9'"),
        ({"plan": "0001", "milestone": "v1"}, "give a PLAN or --milestone, not both"),
        ({"since": "no-such-ref"}, "no-such-ref"),
        ({"fmt": "pdf"}, "--format 'pdf'"),
    ],
)
def test_usage_errors_are_exit_3_and_write_nothing(
    fixture_repo: Path, tmp_path: Path, kwargs: dict, message: str
) -> None:
    out = tmp_path / "r.md"
    with pytest.raises(UsageError, match=re.escape(message)) as err:
        report.run(fixture_repo, out_path=out, out=io.StringIO(), **kwargs)
    assert exit_code_for(err.value) == 3 and not out.exists()


def test_an_invalid_plan_file_is_exit_2_and_nothing_is_written(own_repo: Path, tmp_path: Path) -> None:
    (own_repo / "plans/0003-broken.md").write_text('# x\n\n```plan\nid = "0003"\ntitle = 7\n```\n', encoding="utf-8")
    out = tmp_path / "r.md"
    out.write_text("the previous report\n", encoding="utf-8")
    assert code_of(lambda: report.run(own_repo, out_path=out, out=io.StringIO())) == 2
    assert out.read_text(encoding="utf-8") == "the previous report\n"


def test_an_unreadable_plan_file_is_exit_8(own_repo: Path) -> None:
    (own_repo / "plans/0003-latin1.md").write_bytes(b"# caf\xe9\n")
    assert code_of(lambda: report.run(own_repo, out=io.StringIO())) == 8


def test_out_writes_the_whole_file_atomically_and_refuses_a_directory(own_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "deep" / "r.md"
    (tmp_path / "deep").mkdir()
    assert report.run(own_repo, out_path=out, out=io.StringIO()) == 0
    assert out.read_text(encoding="utf-8") == text_of(own_repo)
    assert [p.name for p in out.parent.iterdir()] == ["r.md"]  # no temporary file left beside it
    with pytest.raises(UsageError, match="a directory"):
        report.run(own_repo, out_path=tmp_path, out=io.StringIO())
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert code_of(lambda: report.run(own_repo, out_path=locked / "r.md", out=io.StringIO())) == 8


def test_out_writes_through_a_symlink_and_refuses_a_fifo(own_repo: Path, tmp_path: Path) -> None:
    """``report --out`` and ``summary --write`` share one rule (tracker.base.fileio.write_file): a symlink is written
    through (the link kept), a destination that is not a regular file is refused, nothing written."""
    real = tmp_path / "real.md"
    real.write_text("old\n", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(real)
    assert report.run(own_repo, out_path=tmp_path / "link.md", out=io.StringIO()) == 0
    assert (tmp_path / "link.md").is_symlink() and real.read_text(encoding="utf-8") == text_of(own_repo)
    os.mkfifo(tmp_path / "fifo.md")
    with pytest.raises(FileError, match=r"fifo.md: refused: not a regular file \(a FIFO\)"):
        report.run(own_repo, out_path=tmp_path / "fifo.md", out=io.StringIO())
    assert stat_is_fifo(tmp_path / "fifo.md")


def stat_is_fifo(path: Path) -> bool:
    import stat

    return stat.S_ISFIFO(path.lstat().st_mode)


def test_out_inside_the_repository_must_resolve_inside_it(own_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.rmtree(own_repo / "plans/reports", ignore_errors=True)
    (own_repo / "plans/reports").symlink_to(outside)
    with pytest.raises(FileError, match="outside the repository") as err:
        report.run(own_repo, milestone="v1", out_path=own_repo / "plans/reports/v1.md", out=io.StringIO())
    assert exit_code_for(err.value) == 8 and list(outside.iterdir()) == []
    assert report.run(own_repo, out_path=tmp_path / "anywhere.md", out=io.StringIO()) == 0  # named outside: its own


# --- templates --------------------------------------------------------------------------------------------------------


def test_a_repository_template_overrides_the_packaged_one(own_repo: Path) -> None:
    folder = own_repo / ".tracker/templates"
    folder.mkdir(parents=True)
    (folder / "report.md.j2").write_text(
        "{{ point }}\nOurs: {{ report.plans | length }} plans{% for p in report.plans %} {{ p.id }}{% endfor %}\n",
        encoding="utf-8",
    )
    text = text_of(own_repo)
    assert text.splitlines()[1] == "Ours: 2 plans 0001 0002"
    (folder / "report.html.j2").write_text(
        '{% extends "tracker/report.html.j2" %}{% block period %}<p id="ours">Our period</p>{% endblock %}',
        encoding="utf-8",
    )
    page = text_of(own_repo, fmt="html")
    assert '<p id="ours">Our period</p>' in page and "<table" in page  # one block replaced, the rest packaged


def test_a_template_the_repository_does_not_override_is_the_packaged_one(own_repo: Path, fixture_repo: Path) -> None:
    folder = own_repo / ".tracker/templates"
    folder.mkdir(parents=True)
    (folder / "report.html.j2").write_text("{{ point }}\nours\n", encoding="utf-8")
    (folder / "README.md").write_text("our templates\n", encoding="utf-8")
    assert text_of(own_repo) == text_of(fixture_repo)


@pytest.mark.parametrize(
    ("template", "where"),
    [
        ("line one\n{% for x in %}\n", ".tracker/templates/report.md.j2:2:"),  # does not parse
        ("line one\n{{ report.no_such_field }}\n", ".tracker/templates/report.md.j2:2:"),  # StrictUndefined
        ("{{ 1 // 0 }}\n", ".tracker/templates/report.md.j2:1:"),  # fails while rendering
        ("line one\n{% include 'part.j2' %}\n", ".tracker/templates/part.j2:2: ZeroDivisionError"),  # in an include
        ("caf\xe9\n".encode("latin-1"), ".tracker/templates/report.md.j2:1: not UTF-8"),  # cannot be read as text
        (b"one\ntwo \xff\n", ".tracker/templates/report.md.j2:2: not UTF-8"),
    ],
)
def test_a_broken_repository_template_is_exit_8_naming_its_line(
    own_repo: Path, template: str | bytes, where: str
) -> None:
    (own_repo / ".tracker/templates").mkdir(parents=True)
    (own_repo / ".tracker/templates/part.j2").write_text("fine\n{{ 1 // 0 }}\n", encoding="utf-8")
    data = template if isinstance(template, bytes) else template.encode("utf-8")
    (own_repo / ".tracker/templates/report.md.j2").write_bytes(data)
    with pytest.raises(FileError) as err:
        report.run(own_repo, out=io.StringIO())
    assert exit_code_for(err.value) == 8 and str(err.value).startswith(where), str(err.value)


# --- plan text is data ----------------------------------------------------------------------------------------------


def hostile_repo(root: Path, title: str, prose: str = HOSTILE) -> Path:
    """The fixture with a hostile title for plan 0001, its phase P1 and the plan's prose."""
    path = root / "plans/0001-verify-kernel.md"
    text = path.read_text(encoding="utf-8")
    quoted = json.dumps(title)  # a TOML basic string is a JSON string for these characters
    text = text.replace('title = "Verify kernel"', f"title = {quoted}", 1)
    text = text.replace("The kernel, measured against the baseline.", prose, 1)
    text = re.sub(r'(id = "P1"\ntitle = )"[^"\n]*"', lambda m: m.group(1) + quoted, text, count=1)
    path.write_text(text, encoding="utf-8")
    return root


# The template's own collapsible sections (GitHub-flavoured Markdown's <details>): a summary of the template's words
# and a count, nothing of the plans' text.
TEMPLATE_HTML = re.compile(r"(<details>\n(<summary>[A-Za-z ,:'()0-9]+</summary>\n)?|</details>\n)")


def raw_html(markdown: str) -> list[str]:
    """The raw HTML a CommonMark renderer would pass through from ``markdown`` (markdown-it-py's tokens): a
    ``<script>`` in a code span is text, not markup. The template's own ``<details>`` blocks are not counted."""
    from markdown_it import MarkdownIt

    found: list[str] = []
    stack = MarkdownIt("commonmark").enable("table").parse(markdown)
    while stack:
        token = stack.pop()
        html = token.type in ("html_inline", "html_block") and not token.content.lstrip().startswith("<!--")
        if html and not TEMPLATE_HTML.fullmatch(token.content):
            found.append(token.content)
        stack.extend(token.children or [])
    return found


def assert_inert_markdown(text: str) -> None:
    assert not UNESCAPED_TAG.search(text)  # a < of the text is escaped (\<), as in the doc tables
    assert "49" not in re.sub(r"\d{4}-\d\d-\d\dT[\d:]+Z|[0-9a-f]{7,}|\d+\.\d+|20\d\d\d\d\d\dT\d+Z", "", text) or (
        "{{ 7\\*7 }}" in text
    )
    assert "{{ 7\\*7 }}" in text and "IF{% endif %}" in text  # written as given (its * escaped), never evaluated
    for line in text.splitlines():
        if line.startswith("|") and "Verify kernel" not in line and "script" in line:
            # a table row keeps its columns: a hostile | is escaped
            assert line.count(" | ") - line.count("\\|") >= 1


def test_hostile_plan_text_is_inert_in_markdown_and_html(own_repo: Path) -> None:
    hostile_repo(own_repo, HOSTILE)
    md = text_of(own_repo)
    assert_inert_markdown(md)
    page = text_of(own_repo, fmt="html")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "{{ 7*7 }}" in html.unescape(page) and "IF{% endif %}" in html.unescape(page)
    assert page.lower().count("<script") == page.lower().count("</script>")  # only the template's own, if any


LIVE_MARKDOWN = "![p](http://e.x/pixel.png) [click](http://e.x) <http://e.x/a> *em* `c` ~~s~~ $m$ \\[x](y)"


def test_links_and_images_in_plan_text_are_inert_in_markdown(own_repo: Path) -> None:
    """A Markdown link or image in a title, a phase title, a manual gate's text (a tracking pixel in any viewer)
    is text in the Markdown report, as in the doc tables (tracker.report.doc_tables.escape_markup, one definition)."""
    from markdown_it import MarkdownIt

    hostile_repo(own_repo, LIVE_MARKDOWN)
    engine = own_repo / "plans/0002-engine.md"
    engine.write_text(
        engine.read_text(encoding="utf-8").replace('"lead reviewed the engine\'s API"', json.dumps(LIVE_MARKDOWN)),
        encoding="utf-8",
    )
    text = text_of(own_repo)
    assert text.count("click") >= 3  # plan title, phase title, manual gate
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    inline = [c for t in tokens if t.children for c in t.children]
    live = [c for c in inline if c.type in {"link_open", "image", "html_inline", "em_open", "s_open"}]
    assert live == [], [(c.type, c.attrs) for c in live]
    assert "http://e.x/pixel.png" in text  # still readable as text


class _Page(HTMLParser):
    """The tags of an HTML page and the text a reader sees (entities decoded)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def test_control_characters_in_plan_text_never_reach_the_report(own_repo: Path) -> None:
    title = "red\x1b[31m alarm\x07 nul\x00 del\x7f nel\x85 ls\u2028 cr\r lf\n end"
    hostile_repo(own_repo, title, prose="Prose \x1b[2J cleared {{ 7*7 }}")
    md = text_of(own_repo)
    assert not CONTROLS.search(md) and "\u2028" not in md
    rows = [line for line in md.splitlines() if line.startswith("| 0001 |")]
    assert rows == [  # line breaks became spaces, the other control characters are gone
        "| 0001 | red\\[31m alarm nul del nel  ls  cr  lf  end | 3 | 1 regressed, 1 blocked, 1 done |"
    ]
    page = text_of(own_repo, fmt="html")
    assert not CONTROLS.search(page)
    assert "red[31m alarm nul del nel" in page  # the rest of the text as it was


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    title=st.lists(
        st.sampled_from(
            [*"<>&|`*_[](){}%#!\\/\"' \t", "{{", "}}", "{%", "%}", "<script>", "é", "x", "\x1b", "\x00", "\n", "\u2028"]
        ),
        min_size=1,
        max_size=14,
    )
    .map("".join)
    .filter(lambda t: bool(CONTROLS.sub("", t).strip()))
)
def test_any_title_stays_one_cell_and_never_markup(
    fixture_repo: Path, plain_page: _Page, tmp_path_factory: pytest.TempPathFactory, title: str
) -> None:
    root = tmp_path_factory.mktemp("hostile") / "repo"
    shutil.copytree(fixture_repo, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    hostile_repo(root, title, prose="Plain prose.")
    md = text_of(root)
    rows = [line for line in md.splitlines() if line.startswith("| 0001 |")]
    assert len(rows) == 1  # the summary table's row of plan 0001
    cells = re.split(r"(?<!\\)\|", rows[0].strip())[1:-1]
    assert len(cells) == 4, rows[0]  # Plan, Title, Phases, Statuses: the title did not add a column
    assert not raw_html(md) and "49" not in rows[0] and not CONTROLS.search(md)
    page = _Page(text_of(root, fmt="html"))
    # No element came from the title: the same tags as the page of a plain title, code spans (`x`) aside.
    assert [t for t in page.tags if t != "code"] == [t for t in plain_page.tags if t != "code"]
    shown = "".join(page.text)
    assert not CONTROLS.search(shown)
    # Shown as the text it is: every character but control characters, backticks aside (a pair is a code span).
    assert CONTROLS.sub("", title).replace("`", "") in shown.replace("`", "")


@pytest.fixture(scope="module")
def plain_page(fixture_repo: Path) -> _Page:
    return _Page(text_of(fixture_repo, fmt="html"))


def test_a_chart_with_the_same_data_as_another_gate_s_is_drawn_once(own_repo: Path) -> None:
    """Two gates whose charts hold the same points (here the same gate twice) are one family: one chart naming
    both gates, one line, one threshold band labelled with both, not the same SVG twice."""
    before = json.loads(text_of(own_repo, as_json=True))["charts"]
    plan = own_repo / "plans/0001-verify-kernel.md"
    text = plan.read_text(encoding="utf-8")
    gate = '[[gate]]\nbench = "attn.time_us"\nwhere = { impl = "cuda", ctx = 91000 }\nbaseline = { impl = "ref" }\nat_least = 1.1\nmin_samples = 5\n'
    assert text.count(gate) == 1
    plan.write_text(text.replace(gate, gate + "\n" + gate), encoding="utf-8")
    data = json.loads(text_of(own_repo, as_json=True))
    assert len(data["charts"]) == len(before)
    (chart,) = [c for c in data["charts"] if any(g["phase"] == "0001/P2" for g in c["gates"])]
    assert chart["gates"] == [{"phase": "0001/P2", "gate": 1}, {"phase": "0001/P2", "gate": 2}]
    assert len(chart["series"]) == 1 and [b["label"] for b in chart["bands"]] == ["0001/P2 gates 1-2: ≥ 1.1"]
    p2 = next(ph for p in data["plans"] for ph in p["phases"] if ph["key"] == "0001/P2")
    assert [b["gate"] for b in p2["bench"]] == [1, 2]  # both gates keep their rows in the table
    assert p2["charts"] == [chart["id"]]
    from tracker.report import charts

    if not charts.available():  # `.[test]` alone: the page draws no chart (issue 24: this failed there)
        pytest.skip("matplotlib (the `report` extra) not installed: the charts' data is checked, not their drawing")
    page = text_of(own_repo, fmt="html")
    assert page.count("<figure") == len(before) and "regressions marked · 0001/P2 gates 1-2" in page


@pytest.mark.parametrize("bad", ["\u202e", "\u2066", "\u200f", "\x9b", "\x84"])
def test_bidirectional_and_c1_characters_in_a_title_reach_no_region_or_report(own_repo: Path, bad: str) -> None:
    # adv (low): C1 controls and bidirectional overrides in a plan title reached the plan's generated regions and
    # the reports as they were, where "P1 done" could be shown reordered. Every text a template writes drops them.
    hostile_repo(own_repo, f"Verify{bad} kernel", prose="Plain prose.")
    for fmt in ("md", "html"):
        text = text_of(own_repo, fmt=fmt)
        assert bad not in text and "Verify kernel" in text, fmt
    from tracker.commands import update

    update.run(own_repo, out=io.StringIO())
    assert (
        bad
        not in (own_repo / "plans/0001-verify-kernel.md").read_text(encoding="utf-8").split("<!-- tracker:begin", 1)[1]
    )
