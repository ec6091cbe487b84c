"""What tracker verify's cuts of its overhead over plain pytest keep true (plan 0003 P5, issue 12): the evidence
file names every writer makes, without the weight they used to import."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.names import evidence_name

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
    from tracker.pytest_plugin import evidence_name as plugin_name

    for name in (ingest_name("verify", "h"), plugin_name("pytest"), evidence_name("signoff", "h")):
        assert NAME.fullmatch(name), name


def test_naming_imports_nothing_heavy() -> None:
    """verify names its run's file before pytest starts: the naming module imports neither the ingest command (its
    parsers, the evidence reader) nor datetime or secrets."""
    code = ("import sys\nbefore = set(sys.modules)\nimport tracker.names\n"
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('tracker', 'datetime', 'secrets', 'json')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tracker', 'tracker.names']"
