"""``tracker report [PLAN | --milestone M] [--since REF] [--format md|html] [--out PATH] [--json]``: where plans
stand and what changed, as one Markdown or one self-contained HTML file.

The report is one object first (:mod:`tracker.report.data`; ``--json`` prints it), then a template over it
(:mod:`tracker.report.templating`: ``templates/report.md.j2``, ``templates/report.html.j2``, or the repository's own in
``.tracker/templates/``). Without ``--out`` it goes to stdout; with it, the file is written atomically (never a
partial one). An unknown plan or milestone, a PLAN with ``--milestone``, or a REF that names no commit: exit 3.
Invalid plan files: exit 2 (8 when one cannot be read), nothing written; a report of part of the plans could say
something the whole would not. A repository template that does not parse or fails: exit 8, ``path:line``.

Milestone reports live in ``plans/reports/<milestone>.md`` and ``.html`` (:func:`report_path`). Which ones exist is
what the folder holds, not a setting: a report file there is kept current, one the repository does not want is
deleted. Kept current by ``tracker check``, not written by ``tracker update``: check fails (exit 1) on each report
that is not what ``tracker report`` renders now, naming the file and the command that regenerates it
(:func:`command_line`). Update rewrites regions inside files (plans, docs) under its write guards; a report is a
whole file of its own whose HTML carries charts that depend on matplotlib being installed, and regenerating it
moves its period (see below), so it is written only when asked for, with ``--out``. Each records its
period (``<!-- tracker:report {...} -->``, first line of the Markdown, second of the HTML): a milestone report
made without ``--since`` starts where the one in ``plans/reports/`` ended when newer evidence exists, and covers
the same period again when not, so rendering it twice on the same repository gives the same bytes.
:func:`reports_out_of_date` is what ``tracker check`` asks.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tracker.core.model import Plan
from tracker.errors import FileError, TrackerError, UsageError
from tracker.report.data import Period, Report, ReportChart, Scope, build, newest_evidence

if TYPE_CHECKING:
    from markupsafe import Markup

    from tracker.base.cache import Cache
    from tracker.git.log import Commit

REPORTS_DIR = Path("plans") / "reports"
FORMATS = ("md", "html")
POINT = "<!-- tracker:report "
_SLUG_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# Control characters other than tab, line feed, form feed and carriage return: dropped from a rendered report wherever
# they came from (plan text, a commit subject, a machine name), as |md drops them from Markdown cells; in HTML
# they are parse errors, in a terminal escape sequences.
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_CHARTS = re.compile(r"<!-- tracker:charts -->.*?<!-- /tracker:charts -->", re.DOTALL)
# plan-tracker is not on the package index: name what installs (matplotlib itself, or the checkout's extra).
CHARTS_NOTE = (
    "Charts need matplotlib, which is not installed here: pip install 'matplotlib>=3.8' "
    "(or pip install '/path/to/the/tracker/checkout[report]')."
)


def run(
    root: Path,
    plan: str | None = None,
    milestone: str | None = None,
    since: str | None = None,
    fmt: str = "md",
    out_path: Path | None = None,
    as_json: bool = False,
    out: TextIO | None = None,
) -> int:
    """Build the report and print it (or write it to ``out_path``); 0, or raise a TrackerError."""
    from tracker.base.cache import command_cache

    out = out or sys.stdout
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    with command_cache(root) as cache:
        report = collect(root, cache, plan=plan, milestone=milestone, since=since)
    if as_json:
        from tracker.commands.common import json_text

        data = report.as_json()
        text = (json_text(out, data) if out_path is None else json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
    else:
        text = render(root, report, fmt)
    if out_path is None:
        out.write(text)
        out.flush()
    else:
        from tracker.base.fileio import write_file

        target = out_path if out_path.is_absolute() else Path.cwd() / out_path
        if target.is_dir():
            raise UsageError(f"--out {out_path}: a directory (name the report's file)")
        # backslashreplace: a file name that is not UTF-8. Through a symlink, a FIFO refused, and a path inside the
        # repository (plans/reports/) resolving inside it: summary --write's rule too.
        write_file(target, text.encode("utf-8", "backslashreplace"), root=root)
    return 0


def collect(
    root: Path, cache: Cache, *, plan: str | None = None, milestone: str | None = None, since: str | None = None
) -> Report:
    """The report of the repository at ``root`` on the scope asked."""
    from tracker.report.repo_view import RepoView

    view = RepoView(root, cache)
    error = view.plan_set.error()
    if error is not None:
        raise error
    scope = _scope(root, view.plans, plan, milestone)
    plans = [p for p in view.plans if _in_scope(scope, p)]
    keys = [f"{p.id}/{ph.id}" for p in plans for ph in p.phases]
    everything = scope.kind == "all"
    details = view.details(None if everything else keys, history=False)
    times = view.timeline(None if everything else keys)  # None: timeline's fast path for every phase
    details = [d._replace(history=tuple(times.get(d.key, ()))) for d in details]
    through = newest_evidence(details)

    at_ref: frozenset[str] | None = None
    ref_commit: str | None = None
    if since is not None:
        period, ref_commit, at_ref = _since_ref(root, since)
    elif scope.kind == "milestone" and scope.name is not None:
        previous = read_point(root, scope.name)
        period = _after(previous, through)
        if period.kind == "since-ref" and period.ref_commit is not None:
            ref_commit = period.ref_commit
            at_ref = _evidence_at(root, ref_commit)
    else:
        period = Period("everything")
    period = period._replace(through=through)

    commits: list[Commit] = []
    if through is not None and any(ph.paths for p in plans for ph in p.phases):
        from tracker.git import log as gitlog

        commits = gitlog.commits(root, ref_commit)
    results = view.results_for(view.phases(keys))
    bounds = view.bench.bounds if results else None
    report = build(scope, period, plans, details, results, commits, at_ref=at_ref, bounds=bounds)
    if results:
        view.bench.keep_bounds()
    return report


def _scope(root: Path, plans: list[Plan], plan: str | None, milestone: str | None) -> Scope:
    from tracker.commands.common import plan_spec

    if plan is not None and milestone is not None:
        raise UsageError("give a PLAN or --milestone, not both")
    if milestone is not None:
        known = sorted({p.milestone for p in plans if p.milestone})
        if milestone not in known:
            raise UsageError(f"unknown milestone {milestone!r} (milestones of the plans: {', '.join(known) or 'none'})")
        return Scope("milestone", milestone)
    if plan is not None:
        plan_id = plan_spec(root, plan)
        if "/" in plan_id or plan_id not in {p.id for p in plans}:
            ids = ", ".join(p.id for p in plans) or "none"
            raise UsageError(f"unknown plan {plan!r} (a report covers whole plans; known plans: {ids})")
        return Scope("plan", plan_id)
    return Scope("all", None)


def _in_scope(scope: Scope, plan: Plan) -> bool:
    if scope.kind == "milestone":
        return plan.milestone == scope.name
    return scope.kind == "all" or plan.id == scope.name


def _since_ref(root: Path, ref: str) -> tuple[Period, str, frozenset[str]]:
    """The period from REF: its commit, its commit time, the evidence files its tree holds."""
    from tracker.git import log as gitlog

    sha = gitlog.resolve(root, ref)
    at = gitlog.commits(root, None, sha, limit=1)
    start = at[0].time if at else None
    return Period("since-ref", ref, sha, start), sha, _evidence_at(root, sha)


def _evidence_at(root: Path, sha: str) -> frozenset[str]:
    from tracker.base.contract import RESULT_DIRS
    from tracker.git import log as gitlog

    dirs = tuple(d.as_posix() + "/" for d in RESULT_DIRS)
    return frozenset(p for p in gitlog.changed_paths(root, None, sha) if p.startswith(dirs))


def _after(previous: Period | None, through: str | None) -> Period:
    """The period of a milestone report given the previous one's (None: there is none): the stretch after it when
    newer evidence exists, else the same stretch again."""

    if previous is None:
        return Period("everything")
    if through is not None and previous.through is not None and through > previous.through:
        return Period("since-report", start=previous.through)
    return previous


# --- rendering -----------------------------------------------------------------------------------------------


def render(root: Path, report: Report, fmt: str, *, charts: bool = True) -> str:
    """``report`` through the repository's (or the packaged) ``report.<fmt>.j2``. ``charts``: draw the charts
    (HTML, when matplotlib is importable); else one line stands where they would be."""
    from markupsafe import Markup

    from tracker.core.bench_verdict import fmt_num, fmt_params
    from tracker.report import charts as charting
    from tracker.report import templating

    draw = charts and fmt == "html" and charting.available()

    def svg(chart: ReportChart) -> Markup:
        return Markup(charting.render_svg(chart.chart, id_prefix=chart.id))

    def num(x: float | None) -> str:
        return "—" if x is None else fmt_num(x)

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x:+.1%}".replace("-", "−")

    def params(p: dict[str, Any] | None) -> str:
        return fmt_params(p) if p else "—"

    def short(commit: str | None) -> str:
        return (commit or "—")[:7]

    def counts(by_status: dict[str, int]) -> str:
        return ", ".join(f"{n} {s}" for s, n in by_status.items()) or "no phase"

    filters: dict[str, Callable[..., Any]] = {
        "num": num,
        "pct": pct,
        "params": params,
        "short": short,
        "counts": counts,
        "svg": svg,
        "code_spans": _code_spans,
    }
    env = templating.environment(root, filters)
    text = templating.render(
        env,
        f"report.{fmt}.j2",
        root,
        report=report,
        point=Markup(point_comment(report)),
        charts_drawn=draw,
        charts_note=CHARTS_NOTE if charts and not charting.available() else "Charts not drawn.",
    )
    return _CONTROL.sub("", text)


def _code_spans(text: object) -> Markup:
    """Text with its backtick code spans as ``<code>`` (HTML), every piece escaped. A span is a run of backticks, some
    text, and a run of exactly as many (CommonMark's rule); a run that closes nothing, or one that would enclose
    nothing (``````), stays as the backticks it is."""
    from markupsafe import Markup, escape

    from tracker.report.templating import CODE_SPAN

    source = str(text)
    out: list[Markup] = []
    done = 0
    for m in CODE_SPAN.finditer(source):
        out += [escape(source[done : m.start()]), Markup("<code>%s</code>") % m.group(2)]
        done = m.end()
    return Markup("").join([*out, escape(source[done:])])


def point_comment(report: Report) -> str:
    """The line a report records its scope and period in (JSON; ``<`` and ``>`` escaped, so no text ends the
    comment early)."""
    data = {"scope": report.scope._asdict(), "period": report.period.as_json()}
    text = json.dumps(data, ensure_ascii=True, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{POINT}{text} -->"


def parse_point(text: str) -> tuple[Scope, Period] | None:
    """The (scope, period) a report's text records, or None when it records none that reads."""

    for line in text.splitlines()[:5]:
        if not (line.startswith(POINT) and line.endswith(" -->")):
            continue
        try:
            data = json.loads(line[len(POINT) : -4])
            scope, period = Scope(**data["scope"]), Period(**data["period"])
        except (ValueError, TypeError, KeyError):
            return None
        fields = [scope.kind, scope.name, *period]
        if not all(x is None or isinstance(x, str) for x in fields):
            return None
        return scope, period
    return None


# --- milestone reports in plans/reports/ ---------------------------------------------------------------------


def slug(milestone: str) -> str:
    """A milestone's file name stem: the name itself when it is a plain file name, else a readable form and a
    short hash of the name (two milestones never share a file)."""
    if _SLUG_OK.fullmatch(milestone) and len(milestone) <= 80:
        return milestone
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", milestone).strip("-.")[:60] or "milestone"
    return f"{readable}-{hashlib.sha1(milestone.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def report_path(milestone: str, fmt: str) -> Path:
    """Where a milestone's report lives, relative to the repository root."""
    return REPORTS_DIR / f"{slug(milestone)}.{fmt}"


def read_point(root: Path, milestone: str) -> Period | None:
    """The period the milestone's report in ``plans/reports/`` records (its Markdown, else its HTML), or None."""
    from tracker.base.fileio import read_text

    for fmt in FORMATS:
        path = root / report_path(milestone, fmt)
        if not path.is_file():
            continue
        try:
            found = parse_point(read_text(path, root=root))
        except FileError:
            continue
        if found is not None and found[0].kind == "milestone" and found[0].name == milestone:
            return found[1]
    return None


def command_line(milestone: str, fmt: str) -> str:
    """The command that writes a milestone's report in ``plans/reports/``."""
    path = report_path(milestone, fmt).as_posix()
    return f"tracker report --milestone {shlex.quote(milestone)} --format {fmt} --out {shlex.quote(path)}"


def comparable(text: str) -> str:
    """A report's text with its charts area reduced to its markers: the charts depend on the matplotlib installed
    (and whether it is), the data they draw is in the tables and the recorded period."""
    return _CHARTS.sub("<!-- tracker:charts --><!-- /tracker:charts -->", text)


def reports_out_of_date(root: Path) -> list[str]:
    """``path: out of date (run: tracker report ...)`` for each milestone report in ``plans/reports/`` that is not
    what ``tracker report`` renders now (charts aside: :func:`comparable`); a report whose milestone no plan
    declares any more says so. Empty when every report is current or there is none. For ``tracker check``."""
    from tracker.base.cache import command_cache
    from tracker.base.fileio import read_text

    folder = root / REPORTS_DIR
    if not folder.is_dir():
        return []
    found: list[tuple[str, str, str, str]] = []  # (path, format, milestone, text)
    unreadable: list[tuple[str, str, str]] = []  # (path, format, file name stem): no report point that reads
    for path in sorted(folder.iterdir()):
        fmt = path.suffix.lstrip(".")
        if fmt not in FORMATS or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        try:
            text = read_text(path, root=root)
        except FileError as err:
            found.append((rel, fmt, "", f"\0{err}"))
            continue
        point = parse_point(text)
        if point is not None and point[0].kind == "milestone" and point[0].name is not None:
            found.append((rel, fmt, point[0].name, text))
        else:
            unreadable.append((rel, fmt, path.stem))
    out: list[str] = []
    reports: dict[str, Report] = {}
    with command_cache(root) as cache:
        if unreadable:
            # A file named as a milestone's report whose first lines no longer say what it reports (edited by
            # hand): a problem. Other files in the folder (notes, images) are none of this rule's business.
            from tracker.plans.load import load_plans

            try:
                _, plans = load_plans(root, cache=cache)
            except TrackerError:
                plans = []  # check reports the invalid plan files itself
            stems = {slug(p.milestone): p.milestone for p in plans if p.milestone}
            for rel, fmt, stem in unreadable:
                if stem in stems:
                    milestone = stems[stem]
                    out.append(f"{rel}: not a report tracker can read (run: {command_line(milestone, fmt)})")
        for rel, fmt, milestone, text in found:
            if text.startswith("\0"):
                out.append(f"{rel}: cannot be read: {text[1:]}")
                continue
            if REPORTS_DIR.joinpath(Path(rel).name).as_posix() != report_path(milestone, fmt).as_posix():
                continue  # a report kept elsewhere under another name: not one this rule owns
            try:
                if milestone not in reports:
                    reports[milestone] = collect(root, cache, milestone=milestone)
                now = render(root, reports[milestone], fmt, charts=False)
            except UsageError:
                out.append(f"{rel}: milestone {milestone!r} is declared by no plan (delete the report)")
                continue
            except TrackerError as err:
                out.append(f"{rel}: cannot be rendered: {err}")
                continue
            if comparable(now) != comparable(text):
                out.append(f"{rel}: out of date (run: {command_line(milestone, fmt)})")
    return sorted(out)
