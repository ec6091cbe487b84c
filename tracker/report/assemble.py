"""The report of a repository on one scope, assembled: its plans' phase details and timelines, the period it
covers (:mod:`tracker.report.period`), the commits and benchmark results of that period, as one
:class:`tracker.report.data.Report`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracker.core.model import Plan, Status
from tracker.errors import UsageError
from tracker.report.data import Period, Report, Scope, build, newest_evidence
from tracker.report.digest import build_digest
from tracker.report.families import run_outcomes
from tracker.report.period import NOTHING, Recorded, evidence_at, period_after, since_ref, start_statuses

if TYPE_CHECKING:
    from tracker.base.cache import Cache
    from tracker.git.log import Commit
    from tracker.report.repo_view import RepoView


def in_scope(scope: Scope, plan: Plan) -> bool:
    """Is ``plan`` one the scope covers?"""
    if scope.kind == "milestone":
        return plan.milestone == scope.name
    return scope.kind == "all" or plan.id == scope.name


def open_view(root: Path, cache: Cache) -> RepoView:
    """The repository's plans and evidence as reports read them; the plans' problems raised (a report of part of
    the plans could say something the whole would not)."""
    from tracker.report.repo_view import RepoView

    view = RepoView(root, cache)
    error = view.plan_set.error()
    if error is not None:
        raise error
    return view


def assemble(
    root: Path,
    view: RepoView,
    scope: Scope,
    since: str | None = None,
    previous: Period | None = None,
    prior: Recorded | None = None,
) -> Report:
    """The report of the repository at ``root`` (read as ``view``) on ``scope``: from the commit ``since`` when one
    is given, else for a milestone after ``previous``, the period its report in plans/reports/ records
    (:func:`tracker.report.milestones.read_point`; None: there is none), its changes starting from the statuses that
    report records (``prior``: :func:`tracker.report.milestones.read_recorded`). A milestone no plan declares:
    UsageError."""
    plans = [p for p in view.plans if in_scope(scope, p)]
    if scope.kind == "milestone" and not plans:
        raise UsageError(f"unknown milestone {scope.name!r}")
    keys = [f"{p.id}/{ph.id}" for p in plans for ph in p.phases]
    everything = scope.kind == "all"
    details = view.details(None if everything else keys, history=False)
    times = view.timeline(None if everything else keys)  # None: timeline's fast path for every phase
    details = [d._replace(history=tuple(times.get(d.key, ()))) for d in details]
    through = newest_evidence(details)

    at_ref: frozenset[str] | None = None
    ref_commit: str | None = None
    start: dict[str, Status] = {}
    ended: dict[str, Status] = {}
    if since is not None:
        period, ref_commit, at_ref = since_ref(root, since)
    elif scope.kind == "milestone" and scope.name is not None:
        period = period_after(previous, through)
        start = start_statuses(previous, period, prior or NOTHING)
        ended = dict((prior or NOTHING).ends) if period == previous else {}
        if period.kind == "since-ref" and period.ref_commit is not None:
            ref_commit = period.ref_commit
            at_ref = evidence_at(root, ref_commit)
    else:
        period = Period("everything")
    period = period._replace(through=through)

    commits: list[Commit] = []
    if through is not None and any(ph.paths for p in plans for ph in p.phases):
        from tracker.git import log as gitlog

        commits = gitlog.commits(root, ref_commit)
    results = view.results_for(view.phases(keys))
    bounds = view.bench.bounds if results else None
    outcomes = run_outcomes(view.cache) if results else None
    report = build(
        scope,
        period,
        plans,
        details,
        results,
        commits,
        at_ref=at_ref,
        bounds=bounds,
        start=start,
        ended=ended,
        outcomes=outcomes,
    )
    report = report._replace(digest=build_digest(report, plans, results, bounds, at_ref))
    if results:
        view.bench.keep_bounds()
    if outcomes is not None:
        outcomes.keep()
    return report
