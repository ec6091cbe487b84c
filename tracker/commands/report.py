"""``tracker report [PLAN | --milestone M] [--since REF] [--format md|html] [--out PATH] [--json]``: where plans
stand and what changed, as one Markdown or one self-contained HTML file.

The report is one object first (:mod:`tracker.report.assemble`, :mod:`tracker.report.data`; ``--json`` prints it),
then a template over it (:mod:`tracker.report.report_text`: ``templates/report.md.j2``, ``templates/report.html.j2``, or
the repository's own in ``.tracker/templates/``). Without ``--out`` it goes to stdout; with it, the file is written
atomically (never a partial one). An unknown plan or milestone, a PLAN with ``--milestone``, or a REF that names no
commit: exit 3. Invalid plan files: exit 2 (8 when one cannot be read), nothing written; a report of part of the plans
could say something the whole would not. A repository template that does not parse or fails: exit 8, ``path:line``.

Milestone reports live in ``plans/reports/`` and are kept current by ``tracker check``
(:mod:`tracker.report.milestones`), not written by ``tracker update``: a report is a whole file of its own whose HTML
carries charts that depend on matplotlib being installed, and regenerating it moves its period
(:mod:`tracker.report.period`), so it is written only when asked for, with ``--out``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tracker.core.model import Plan
from tracker.errors import UsageError
from tracker.report.data import Scope
from tracker.report.report_text import FORMATS

if TYPE_CHECKING:
    from tracker.base.cache import Cache
    from tracker.report.repo_view import RepoView


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
    if fmt not in (*FORMATS, "github"):
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join((*FORMATS, 'github'))}")
    if fmt == "github" and since is None:
        raise UsageError("--format github needs --since REV: the revision the pull request is compared with")
    with command_cache(root) as cache:
        from tracker.report.assemble import assemble, open_view

        view = open_view(root, cache)
        scope = _scope(root, view.plans, plan, milestone)
        if fmt == "github":
            assert since is not None
            text = _pr_summary(root, view, scope, since, cache, as_json, out, out_path)
            return _write(text, out, out_path, root)
        previous, prior = None, None
        if scope.kind == "milestone" and scope.name is not None and since is None:
            from tracker.report.milestones import read_point, read_recorded

            previous, prior = read_point(root, scope.name), read_recorded(root, scope.name)
        report = assemble(root, view, scope, since, previous, prior)
        if as_json:
            from tracker.commands.common import json_text

            data = report.as_json()
            text = (json_text(out, data) if out_path is None else json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
        else:
            from tracker.report.report_text import render

            text = render(root, report, fmt, cache=cache)
    return _write(text, out, out_path, root)


def _pr_summary(
    root: Path,
    view: RepoView,
    scope: Scope,
    since: str,
    cache: Cache,
    as_json: bool,
    out: TextIO,
    out_path: Path | None,
) -> str:
    """``--format github``: the pull request's summary since ``since`` (:mod:`tracker.report.pr_summary`), as
    Markdown or (``as_json``) its data."""
    from tracker.commands.summary import build
    from tracker.report.assemble import in_scope
    from tracker.report.pr_summary import markdown, pr_summary

    summary = build(root, since, cache, view=view)
    changed = [c.key for c in summary.changes if c.after is not None]
    details = {d.key: d for d in view.details(changed, history=False)} if changed else {}
    keys = (
        None
        if scope.kind == "all"
        else {f"{p.id}/{ph.id}" for p in view.plans if in_scope(scope, p) for ph in p.phases}
    )
    pr = pr_summary(summary, details, keys)
    if not as_json:
        return markdown(pr)
    from tracker.commands.common import json_text

    data = pr.as_json()
    return (json_text(out, data) if out_path is None else json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def _write(text: str, out: TextIO, out_path: Path | None, root: Path) -> int:
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
