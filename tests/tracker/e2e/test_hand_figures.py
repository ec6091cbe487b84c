"""No hand-written performance figure in our docs (issue 26): every measured figure in README.md, docs/reference.md,
kernel/README.md, kernel/NOTES.md and bench/README.md is generated (a ``results`` table, an inline ``<!-- figure -->``)
or comes from a log its paragraph names with the commit and the machine it ran on (a list item or table row may name
them in the paragraph that introduces its list or table). What is left is listed in :data:`ALLOWED`, each entry with
why it is no measurement. CPU only: it reads the docs, nothing runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracker.plans.regions import region_spans, split_lines
from tracker.report.doc_figures import figure_spans

ROOT = Path(__file__).resolve().parents[3]
DOCS = ["README.md", "docs/reference.md", "kernel/README.md", "kernel/NOTES.md", "bench/README.md"]
LOGS = "docs/lab/runs"

# A number and a unit of time, bandwidth, throughput, clock, a percentage or a ratio ("1.13x"; "2 x H" is a product).
FIGURE = re.compile(
    r"(?<![\w.])[-+~]?\d[\d,]*(?:\.\d+)?(?:\s?(?:ns|us|µs|ms|s|TB/s|GB/s|MB/s|TFLOP/s|GFLOP/s|GHz)|%|x)(?![\w/])"
)
LOG = re.compile(rf"`?(?:{LOGS}/|runs/)([\w.-]+\.log)`?|`?docs/lab/(kernel-log\.md)`?")
COMMIT = re.compile(r"(?<![\w/.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.])")
MACHINE = re.compile(r"H200|h200|H100|h100|RTX|`vm`|host vm")

# (doc, a piece of the line (every figure on it is allowed), why its figures are no measurement to generate)
SAMPLE = "sample output of the command quoted to show its format (a code block holds no figure marker); the run it shows is named in it"
GOLDEN = (
    "the fixture repository's report, quoted from its golden (tests/tracker/golden/report_since_c3.md): made-up data"
)
SETTING = "a setting of the tracker (a bound, a timeout), not a measurement"
ALLOWED: list[tuple[str, str, str]] = [
    ("docs/reference.md", "up to 8 runs or 600 s", SETTING + ": verify's re-run budget for an undecided bench gate"),
    ("docs/reference.md", "file modified in the last 0.1 s", SETTING + ": how recent a write counts as a save in progress"),
    ("docs/reference.md", "and is bounded: 30 s, 1 GiB", SETTING + ": the report sandbox's limits"),
    ("docs/reference.md", "`TRACKER_LOCK_TIMEOUT`, default 10 s", SETTING + ": the lock's default wait"),
    ("docs/reference.md", "verdict   met: 3.75 TB/s", SAMPLE + " (tracker show at c858033, kernel@14016e5)"),
    ("docs/reference.md", "figures   median 3.75 TB/s", SAMPLE + " (tracker show at c858033, kernel@14016e5)"),
    ("docs/reference.md", "TB/s -> 4.28 TB/s (1.00x)", SAMPLE + " (tracker summary at c858033 against HEAD~6)"),
    ("docs/reference.md", "graph=True vs impl=flashinfer), median: 1.16x", SAMPLE + " (tracker summary at c858033)"),
    ("docs/reference.md", "1.15x (0.99x); needs >= 1.00x", SAMPLE + " (tracker summary at c858033)"),
    ("docs/reference.md", "| **0001/P2** Beats the baseline at 91k |", GOLDEN),
    ("docs/reference.md", "| **0001/P3** Half of the floor |", GOLDEN),
    ("docs/reference.md", "| 2026-11-08T10:00:00Z | 0001/P2 | done → **regressed**", GOLDEN),
    ("kernel/README.md", "about 5% of greedy decisions", "a property of the test prompts on a random model (why the tests "
     "use clear prompts), not a performance figure of the kernel"),
    ("kernel/NOTES.md", "slot ids, q and out < 1%", "cost-model arithmetic: the share of a request's bytes that are not "
     "pool rows, computed from the shapes"),
    ("kernel/NOTES.md", "about 0.9 us at the run of record", "cost-model arithmetic: a tile's 4.46 MFLOP at the "
     "generated mma.sync ceiling shared by 132 SMs"),
    ("kernel/NOTES.md", "roughly 75% of the mma floor", "cost-model bound: a tile's shared-memory clocks against its "
     "MMA time, computed, not measured"),
    ("kernel/NOTES.md", "Plan 0002's P7 (50% of the floor", "plan 0002's declared thresholds (P7, P8), not measurements"),
    ("bench/README.md", "the mma microkernel's build ~40 s", "a wall-time estimate for whoever runs the device command, "
     "not a result of the kernel"),
    ("bench/README.md", "GPU suite ~30 s, 15 cases", "a wall-time estimate for whoever runs the device command, not a "
     "result of the kernel"),
    ("bench/README.md", "rule: error <= 2x that of", "the correctness rule's tolerance (a threshold), not a measurement"),
    ("bench/README.md", "together exceed 2x the L2", "a parameter of the timing method, not a measurement"),
    ("bench/README.md", "at ~190 ns per prefix token on this H200", "SGLang's kernel as shared/KERNEL.md measured it "
     "(the sentence names that source, outside this repository); quoted to say how to compare, not our result"),
]  # fmt: skip


def prose(text: str, path: str) -> str:
    """``text`` with what the tracker generates blanked (regions, figures, ``results`` declarations), line for line."""
    chars = list(text)
    for a, b in figure_spans(path, text):
        for i in range(a, b):
            if chars[i] not in "\r\n":
                chars[i] = " "
    lines = split_lines("".join(chars))
    blank = set()
    for begin, end in region_spans(text, path):
        blank.update(range(begin, end + 1))
    fence: str | None = None
    for i, line in enumerate(lines):
        opener = re.match(r"^ {0,3}(`{3,}|~{3,})\s*results\s*$", line)
        if fence is None and opener:
            fence = opener.group(1)
            blank.add(i)
        elif fence is not None:
            blank.add(i)
            if line.strip() == fence:
                fence = None
    return "".join("\n" if i in blank else line for i, line in enumerate(lines))


def paragraphs(text: str) -> list[tuple[int, str, str]]:
    """(first line, text, the introducing paragraph) of each paragraph, list item or table row: where a figure's
    source must be named. A list item or table row is introduced by the last plain paragraph before its list or
    table (none after a heading)."""
    out: list[tuple[int, list[str], str]] = []
    intro = ""
    for n, line in enumerate(text.split("\n"), 1):
        item = re.match(r"^\s*(?:[-*+]|\d+\.)\s|^\s*\|", line)
        starts = not line.strip() or item or line.startswith("#")
        if starts or not out:
            last = "\n".join(out[-1][1]).strip() if out else ""
            if last and not re.match(r"^(?:[-*+]|\d+\.)\s|^\||^#", last):
                intro = last
            if line.startswith("#"):
                intro = ""
            out.append((n, [], intro if item else ""))
        out[-1][1].append(line)
    return [(n, "\n".join(lines), intro) for n, lines, intro in out]


def log_cited(block: str) -> bool:
    """Does the paragraph name an existing log of ours, a commit (in its text or the log's name) and a machine (so
    its figures come from a log)?"""
    logs = [m.group(1) or m.group(2) for m in LOG.finditer(block)]
    named = [ROOT / LOGS / name if name.endswith(".log") else ROOT / "docs/lab" / name for name in logs]
    commits = " ".join([block, *(name.replace("_", " ") for name in logs)])
    return (
        bool(logs)
        and all(path.is_file() for path in named)
        and COMMIT.search(commits) is not None
        and MACHINE.search(block) is not None
    )


def hand_figures(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = []
    allowed = [piece for d, piece, _ in ALLOWED if d == doc]
    for first, block, intro in paragraphs(prose(text, doc)):
        if log_cited(block) or (intro and log_cited(intro + "\n" + block)):
            continue
        for n, line in enumerate(block.split("\n"), first):
            if any(piece in line for piece in allowed):
                continue
            for m in FIGURE.finditer(line):
                found.append(f"{doc}:{n}: {m.group(0).strip()!r} in: {line.strip()[:140]}")
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_no_hand_written_performance_figure(doc: str) -> None:
    found = hand_figures(doc)
    assert not found, (
        f"{len(found)} hand-written figure(s): generate each (<!-- figure ... --> or a results table), or name the "
        "log it comes from (file, commit, machine) in its paragraph:\n" + "\n".join(found)
    )


def test_every_allowance_is_used_and_says_why() -> None:
    for doc, piece, why in ALLOWED:
        assert len(why) > 20, (doc, piece)
        text = prose((ROOT / doc).read_text(encoding="utf-8"), doc)
        assert any(piece in line and FIGURE.search(line) for line in text.split("\n")), f"unused: {doc} {piece!r}"


def test_the_scan_finds_what_it_should() -> None:
    sample = "a 3.75 TB/s and 1.13x, 46%, 12 ms; not 2 x H, v30, sm_120 or (1,8,64)\n"
    assert [m.group(0).strip() for m in FIGURE.finditer(sample)] == ["3.75 TB/s", "1.13x", "46%", "12 ms"]
    doc = "x <!-- figure metric=t -->4 us<!-- /figure 01234567 --> y 5 us\n\n```results\nm = 3%\n```\n"
    assert FIGURE.findall(prose(doc, "d.md")) == ["5 us"]
    assert not log_cited("took 3 us (`runs/none.log`, abc1234, H200)")
    assert not log_cited("took 3 us (`runs/v26_h200_ab.log`, H200)")  # no commit
    assert log_cited("took 3 us (`runs/v26_h200_ab.log`, committed with c6e94bd, H200)")
    assert log_cited("took 3 us (`runs/h200_20261201_74001ee_v30_xch.log`, H200)")
    listed = "Intro (`runs/v26_h200_ab.log`, c6e94bd, H200):\n\n- a 3 us\n- b 4 us\n\n# H\n\n- c 5 us\n"
    assert [(n, intro != "") for n, _, intro in paragraphs(listed)][2:5] == [(3, True), (4, True), (5, False)]


@pytest.mark.parametrize("doc", DOCS)
def test_every_figure_marker_reads_as_an_inline_comment(doc: str) -> None:
    """On GitHub the markers must vanish inside their sentence: each is inline HTML of a paragraph or a table cell,
    never an HTML block (which would end the paragraph and show the rest of its line as HTML)."""
    from markdown_it import MarkdownIt

    from tracker.report.doc_figures import find_figures

    text = (ROOT / doc).read_text(encoding="utf-8")
    figures, problems = find_figures(doc, text)
    assert problems == []
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    blocks = [t.content for t in tokens if t.type == "html_block" and "figure" in t.content]
    assert blocks == [], f"{doc}: figure markers read as an HTML block: {blocks[:1]}"
    inline = [c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "html_inline"]
    assert sum(c.lstrip("<!-").lstrip().startswith("figure") for c in inline) == len(figures)
    assert sum(c.lstrip("<!-").lstrip().startswith("/figure") for c in inline) == len(figures)
