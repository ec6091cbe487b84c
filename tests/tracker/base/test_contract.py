"""The shared contract (tracker/base/contract.py): evidence file names, times and their bounds."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.base.contract import evidence_name, utc_time


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "0000-01-01T00:00:00Z",
                                  "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
                                  "2026-01-01T00:00:60Z", "2026-02-30T00:00:00+01:00", "0001-01-01T00:30:00+01:00",
                                  "9999-12-31T23:30:00-01:00", "2026-01-01T00:00:00", "yesterday", ""])  # fmt: skip
def test_impossible_or_naive_times_are_not_times(text: str) -> None:
    assert utc_time(text) is None


@pytest.mark.parametrize(("text", "expected"), [("2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z"), ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
                                                ("2026-11-29T12:30:00+02:00", "2026-11-29T10:30:00Z"), ("2026-12-31T23:59:59.9Z", "2026-12-31T23:59:59Z")])  # fmt: skip
def test_valid_times_in_any_offset(text: str, expected: str) -> None:
    assert utc_time(text) == expected


def test_max_future_is_five_minutes() -> None:
    from tracker.base.contract import MAX_FUTURE_S, Clock

    assert MAX_FUTURE_S == 300
    clock = Clock(0)
    assert (clock.now, clock.limit) == ("1970-01-01T00:00:00Z", "1970-01-01T00:05:00Z")
    assert clock.future("1970-01-01T00:05:00Z") is None and clock.future("1970-01-01T00:05:01Z")


FAST = settings(deadline=None, suppress_health_check=list(HealthCheck))


def utc(offset_s: float = 0.0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


TIMES = st.one_of(
    st.sampled_from(["2099-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "2026-11-29T11:02:03",
                     "2026-11-29T11:02:03+02:00", "9999-12-31T23:59:59-01:00", "yesterday", "2024-02-29T23:59:59Z"]),
    st.integers(-3600, 7200).map(utc),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.text(alphabet="0123456789-T:Z+.", max_size=26),
)  # fmt: skip


@settings(FAST, max_examples=300)
@given(
    year=st.integers(0, 10000),
    month=st.integers(0, 13),
    day=st.integers(0, 32),
    hms=st.tuples(st.integers(0, 25), st.integers(0, 61), st.integers(0, 61)),
)
def test_the_fast_path_agrees_with_datetime(year: int, month: int, day: int, hms: tuple[int, int, int]) -> None:
    from datetime import datetime

    text = f"{year:04d}-{month:02d}-{day:02d}T{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}Z"
    try:
        datetime(year, month, day, *hms)
        valid = len(text) == 20
    except ValueError:
        valid = False
    assert (utc_time(text) == text) is valid
    assert utc_time(text) in (None, text)


@settings(FAST, max_examples=200)
@given(text=st.one_of(st.text(max_size=40), TIMES, st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat())))
def test_utc_time_never_raises(text: str) -> None:
    out = utc_time(text)
    assert out is None or (len(out) == 20 and utc_time(out) == out)


NAME = re.compile(r"(\d{8}T\d{6})(\d{6})Z-([\w-]{1,40})-(\w+)-([0-9a-f]{6})\.json")


def test_evidence_names_sort_by_time_and_say_host_and_kind() -> None:
    first, second = evidence_name("verify", "ci-box_1"), evidence_name("verify", "ci-box_1")
    assert first != second
    match = NAME.fullmatch(first)
    assert match is not None and match.group(3) == "ci-box_1" and match.group(4) == "verify", first
    assert first[:22] <= second[:22]  # the time, to the microsecond, leads


def test_a_host_name_is_made_safe_and_short() -> None:
    assert "-my-host-name--" in evidence_name("pytest", "my.host/name: ")
    assert f"-{'a' * 40}-signoff-" in evidence_name("signoff", "a" * 100)
    assert "-host-pytest-" in evidence_name("pytest", "")


def test_without_a_host_the_machine_names_it() -> None:
    import socket

    from tracker.base.contract import hostname

    assert hostname() == socket.gethostname()  # the name evidence records as provenance.host
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in socket.gethostname())[:40] or "host"
    assert f"-{safe}-pytest-" in evidence_name("pytest")


@given(st.text(max_size=80), st.sampled_from(["pytest", "verify", "signoff", "bench"]))
@settings(max_examples=300, deadline=None)
def test_every_host_name_gives_a_plain_file_name(host: str, kind: str) -> None:
    name = evidence_name(kind, host)
    assert "/" not in name and "\0" not in name and name.endswith(f"-{kind}-{name[-11:-5]}.json")
    part = name.split("-", 1)[1].rsplit(f"-{kind}-", 1)[0]
    assert 1 <= len(part) <= 40 and all(c.isalnum() or c in "-_" for c in part)


def test_the_old_names_stay_importable_with_the_same_rule() -> None:
    from tracker.commands.ingest import evidence_name as ingest_name
    from tracker.plugin.evidence_file import evidence_name as plugin_name

    for name in (ingest_name("verify", "h"), plugin_name("pytest"), evidence_name("signoff", "h")):
        assert NAME.fullmatch(name), name


def test_naming_imports_nothing_heavy() -> None:
    """verify names its run's file before pytest starts: the contract module imports neither the ingest command (its
    parsers, the evidence reader) nor datetime, secrets or socket, and naming a file imports nothing either."""
    code = (
        "import sys\nbefore = set(sys.modules)\nimport tracker.base.contract\n"
        "tracker.base.contract.evidence_name('verify')\n"
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('tracker', 'datetime', 'secrets', 'json', 'socket')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tracker', 'tracker.base', 'tracker.base.contract', 'tracker.base.hashing']"
