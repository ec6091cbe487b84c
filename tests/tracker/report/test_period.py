"""The statuses a report records beside its period (:mod:`tracker.report.period`): read back as written, and the
reader never breaks on what a hand or a tool left in the record line (any JSON, deep nesting, huge maps, odd text):
what does not read as statuses is no statuses, and the next report's changes start from the timeline's."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.core.model import Status
from tracker.report.data import Period
from tracker.report.period import NOTHING, POINT, Recorded, parse_point, parse_recorded, start_statuses

STATUS = st.sampled_from(list(Status))
KEYS = st.text(st.characters(codec="utf-8"), max_size=30)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def line(data: object) -> str:
    """A record line as :func:`tracker.report.period.point_comment` writes one."""
    text = json.dumps(data, ensure_ascii=True, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{POINT}{text} -->"


def record(statuses: object) -> str:
    scope = {"kind": "milestone", "name": "m"}
    period = {"kind": "everything", "ref": None, "ref_commit": None, "start": None, "through": None}
    return line({"scope": scope, "period": period, "statuses": statuses})


@settings(max_examples=200, deadline=None)
@given(ends=st.dictionaries(KEYS, STATUS, max_size=20), starts=st.dictionaries(KEYS, STATUS, max_size=5))
def test_recorded_statuses_read_back_as_written(ends: dict[str, Status], starts: dict[str, Status]) -> None:
    text = record({"end": {k: v.value for k, v in ends.items()}, "start": {k: v.value for k, v in starts.items()}})
    assert "\n" not in text and "-->" not in text[len(POINT) : -4]
    assert parse_recorded(f"<!DOCTYPE html>\n{text}\n<html>") == Recorded(ends, starts)


@settings(max_examples=300, deadline=None)
@given(statuses=JSON, text=st.text(max_size=60))
def test_any_other_record_is_no_statuses_and_never_breaks_the_reader(statuses: object, text: str) -> None:
    values = {s.value: s for s in Status}
    parts = [statuses.get(p) if isinstance(statuses, dict) else None for p in ("end", "start")]
    valid = all(isinstance(p, dict) and all(isinstance(v, str) and v in values for v in p.values()) for p in parts)
    expected = Recorded(*({k: values[v] for k, v in p.items()} for p in parts)) if valid else NOTHING  # type: ignore[union-attr]
    assert parse_recorded(record(statuses)) == expected
    for doc in (record({"end": statuses, "start": {}}), f"{POINT}{text} -->", text):
        found = parse_recorded(doc)
        assert all(isinstance(k, str) and isinstance(v, Status) for part in found for k, v in part.items())


def test_deep_nesting_huge_maps_and_wrong_values_are_no_statuses() -> None:
    deep = f"{POINT}{'[' * 100_000}{']' * 100_000} -->"
    assert parse_recorded(deep) == NOTHING and parse_point(deep) is None  # deeper than the JSON parser goes
    huge = {f"{i:04d}/P1": "done" for i in range(20_000)}
    assert parse_recorded(record({"end": huge, "start": {}})).ends == dict.fromkeys(huge, Status.DONE)
    for bad in ({"end": {"0001/P1": "finished"}, "start": {}}, {"end": {"0001/P1": 1}, "start": {}},
                {"end": [], "start": {}}, {"end": {}}, ["done"], "done", 10**400):  # fmt: skip
        assert parse_recorded(record(bad)) == NOTHING, bad
    assert parse_recorded("no record line at all") == NOTHING


def test_the_start_of_a_period_is_the_previous_report_s_end_or_its_own_start_again() -> None:
    prior = Recorded({"0001/P1": Status.DONE}, {"0001/P2": Status.REGRESSED})
    before = Period("since-report", start="2026-11-01T10:00:00Z", through="2026-11-02T10:00:00Z")
    after = Period("since-report", start="2026-11-02T10:00:00Z")
    assert start_statuses(before, after, prior) == {"0001/P1": Status.DONE}  # the stretch after it
    assert start_statuses(before, before, prior) == {"0001/P2": Status.REGRESSED}  # the same stretch again
    assert start_statuses(None, Period("everything"), prior) == {}
    assert start_statuses(before, Period("since-ref", "c1"), prior) == {}


def test_a_recorded_period_that_cannot_be_is_none() -> None:
    from tracker.report.period import period_after

    far, now = "9999-12-31T23:59:59Z", "2026-11-02T10:00:00Z"
    before = Period("since-report", start="2026-11-01T10:00:00Z", through="2026-11-01T12:00:00Z")
    assert period_after(before, now) == Period("since-report", start="2026-11-01T12:00:00Z")
    assert period_after(before._replace(through=now), now) == before._replace(through=now)  # the same stretch
    # ends after the newest evidence (a record line edited): everything, not a stretch that holds no evidence
    assert period_after(Period("since-report", start=far, through=far), now) == Period("everything")
    assert period_after(Period("since-ref", "c1", "d" * 40, through=far), now) == Period("everything")
    assert period_after(Period("since-report", start=far, through=now), now) == Period("everything")
