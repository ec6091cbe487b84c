"""A report's period: the stretch of evidence it reports (since a commit, or after the previous report of its
milestone) and the comment a report records its scope and period in (its first line in Markdown, second in HTML), so
that the next report of the milestone starts where it ended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from tracker.core.model import Status
from tracker.report.data import Period, Report, Scope

POINT = "<!-- tracker:report "
_STATUSES = {s.value: s for s in Status}


class Recorded(NamedTuple):
    """The statuses a report records beside its period (issue 26, part 4), so that the next report's changes start
    where this one's ended, as a reader saw them: ``ends``, each phase's status at the end of the period as the
    timeline had it (the gates as they were written then); ``starts``, the statuses the period started from that came
    from the report before it (where they differ from what the timeline on today's gates says). A gate renamed in
    between (a test file moved: the same tests under other node ids, whose old evidence today's gate does not select)
    then reads as no change, not as every phase going from planned to done."""

    ends: dict[str, Status]
    starts: dict[str, Status]


NOTHING = Recorded({}, {})


def recorded(report: Report) -> Recorded:
    """What ``report`` records: each phase's last status in its timeline, and the starts its changes took from the
    report before it."""
    ends = {ph.detail.key: ph.detail.history[-1].status for ph in report.phases if ph.detail.history}
    since = report.period.start if report.period.kind == "since-report" else None
    starts = {
        ph.detail.key: ph.move.previous
        for ph in report.phases
        if ph.move is not None
        and (
            ph.move.previous is not ph.move.moved[0].previous
            or (since is not None and ph.move.changed and ph.move.last.time <= since)  # moved by evidence from before
        )
    }
    return Recorded(ends, starts)


def start_statuses(previous: Period | None, period: Period, prior: Recorded) -> dict[str, Status]:
    """The statuses a milestone report's period starts from, by phase, where the report before it (``previous``, which
    recorded ``prior``) says: its ends for the stretch after it, its own starts for the same stretch again."""
    if previous is None:
        return {}
    if period == previous:
        return dict(prior.starts)
    return dict(prior.ends) if period.kind == "since-report" else {}


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
    newer evidence exists, else the same stretch again. A previous period that cannot be (it starts after it ends,
    or it ends after the newest evidence now: a record line edited by hand or by a merge) is none: this report
    covers everything, so that no change falls between them."""

    if previous is None:
        return Period("everything")
    ends = previous.through
    if ends is not None and (through is None or ends > through or (previous.start or "") > ends):
        return Period("everything")
    if through is not None and previous.through is not None and through > previous.through:
        return Period("since-report", start=previous.through)
    return previous


def point_comment(report: Report) -> str:
    """The line a report records its scope and period in (JSON; ``<`` and ``>`` escaped, so no text ends the
    comment early)."""
    ends, starts = recorded(report)
    data = {
        "scope": report.scope._asdict(),
        "period": report.period.as_json(),
        "statuses": {"end": {k: v.value for k, v in ends.items()}, "start": {k: v.value for k, v in starts.items()}},
    }
    text = json.dumps(data, ensure_ascii=True, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{POINT}{text} -->"


def _point_data(text: str) -> object:
    """The JSON of the first line of ``text``'s first five that is a report's record line, or None."""
    for line in text.splitlines()[:5]:
        if line.startswith(POINT) and line.endswith(" -->"):
            try:
                return json.loads(line[len(POINT) : -4])
            except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
                return None
    return None


def parse_recorded(text: str) -> Recorded:
    """The statuses a report's text records (:class:`Recorded`); none when it records none that reads (a report
    written before they were, or a record line of another shape: then the timeline alone says where a phase was)."""
    data = _point_data(text)
    statuses = data.get("statuses") if isinstance(data, dict) else None
    if not isinstance(statuses, dict):
        return NOTHING
    out: list[dict[str, Status]] = []
    for part in ("end", "start"):
        found = statuses.get(part)
        if not isinstance(found, dict):
            return NOTHING
        if not all(isinstance(k, str) and isinstance(v, str) and v in _STATUSES for k, v in found.items()):
            return NOTHING
        out.append({k: _STATUSES[v] for k, v in found.items()})
    return Recorded(*out)


def parse_point(text: str) -> tuple[Scope, Period] | None:
    """The (scope, period) a report's text records, or None when it records none that reads."""

    for line in text.splitlines()[:5]:
        if not (line.startswith(POINT) and line.endswith(" -->")):
            continue
        try:
            data = json.loads(line[len(POINT) : -4])
            scope, period = Scope(**data["scope"]), Period(**data["period"])
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        fields = [scope.kind, scope.name, *period]
        if not all(x is None or isinstance(x, str) for x in fields):
            return None
        return scope, period
    return None
