"""A report's period: the stretch of evidence it reports (since a commit, or after the previous report of its
milestone) and the comment a report records its scope and period in (its first line in Markdown, second in HTML), so
that the next report of the milestone starts where it ended."""

from __future__ import annotations

import json
from pathlib import Path

from tracker.report.data import Period, Report, Scope

POINT = "<!-- tracker:report "


def since_ref(root: Path, ref: str) -> tuple[Period, str, frozenset[str]]:
    """The period from REF: its commit, its commit time, the evidence files its tree holds."""
    from tracker.git import log as gitlog

    sha = gitlog.resolve(root, ref)
    at = gitlog.commits(root, None, sha, limit=1)
    start = at[0].time if at else None
    return Period("since-ref", ref, sha, start), sha, evidence_at(root, sha)


def evidence_at(root: Path, sha: str) -> frozenset[str]:
    from tracker.base.contract import RESULT_DIRS
    from tracker.git import log as gitlog

    dirs = tuple(d.as_posix() + "/" for d in RESULT_DIRS)
    return frozenset(p for p in gitlog.changed_paths(root, None, sha) if p.startswith(dirs))


def period_after(previous: Period | None, through: str | None) -> Period:
    """The period of a milestone report given the previous one's (None: there is none): the stretch after it when
    newer evidence exists, else the same stretch again."""

    if previous is None:
        return Period("everything")
    if through is not None and previous.through is not None and through > previous.through:
        return Period("since-report", start=previous.through)
    return previous


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
