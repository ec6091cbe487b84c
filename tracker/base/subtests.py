"""How a test's subtests decide its outcome: one rule for the pytest plugin and the reportlog reader.

pytest reports each subtest (unittest's ``subTest``, pytest 9's ``subtests`` fixture, pytest-subtests on older
pytest) as a report of its own under the test's node id, then the test's own call report, which says "passed"
whatever its subtests said (pytest 9 turns it into "contains N failed subtests" for the fixture only, and only
once its terminal reporter has seen it). The test's own phases are folded as before; then :meth:`Subtests.verdict`:
a failed subtest fails the test (unless a phase of its own was an error), named as pytest names it, with its
assertion; with none failed, a skipped (or xfailed) subtest makes a test whose own phases passed skipped (xfailed),
which is what JUnit XML says of it too: part of the test never ran, and a skip never meets a gate. The order the
reports came in does not matter. Standard library only: the plugin runs where only pytest is installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FAILING = ("failed", "error")
NAME_CHARS = 80  # a subtest's name in a reason is cut to this many characters; the whole reason to REASON_CHARS
REASON_CHARS = 200


def one_line(text: str, limit: int) -> str:
    """``text`` on one line of at most ``limit`` characters: each unprintable character (a line break, an ESC, a
    lone surrogate) as its escape, the cut marked with an ellipsis."""
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _value(value: object) -> str:
    """A subtest parameter's value as its name shows it: text as is (pytest 9 records each value's repr already),
    anything else as JSON, so that the plugin (given pytest-subtests' values themselves) and a reportlog (their
    JSON) name it alike."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return "…"


def subtest_name(msg: object, kwargs: object) -> str:
    """pytest's name for a subtest: ``[msg] (k=v, ...)``, ``(<subtest>)`` with neither; on one line, at most
    :data:`NAME_CHARS` characters."""
    parts = [f"[{msg}]"] if isinstance(msg, str) else []
    if isinstance(kwargs, dict) and kwargs:
        parts.append("(" + ", ".join(f"{k}={_value(v)}" for k, v in kwargs.items()) + ")")
    return one_line(" ".join(parts) or "(<subtest>)", NAME_CHARS)


@dataclass
class Subtests:
    """What the subtests of one test said, as their reports came."""

    failed: int = 0
    first_failure: tuple[str, str] = ("", "")  # the first failed subtest's name and reason
    other: tuple[str, str] | None = None  # the first skipped or xfailed subtest: (outcome, the test's reason)

    def add(self, outcome: str, name: str, reason: str) -> None:
        """One subtest's report: ``outcome`` passed, failed, skipped or xfailed (anything else counts as passed)."""
        if outcome == "failed":
            self.failed += 1
            if self.failed == 1:
                self.first_failure = (name, reason)
        elif outcome in ("skipped", "xfailed") and self.other is None:
            text = f"subtest {name} {outcome}" + (f": {reason}" if reason else "")
            self.other = (outcome, one_line(text, REASON_CHARS))

    def verdict(self, outcome: str, reason: str) -> tuple[str, str]:
        """The test's (outcome, reason), given those its own setup, call and teardown reports folded to."""
        if outcome == "error" or (outcome in FAILING and not self.failed):
            return outcome, reason
        if self.failed:
            name, why = self.first_failure
            head = f"subtest {name} failed" if self.failed == 1 else f"{self.failed} subtests failed, the first {name}"
            return "failed", one_line(head + (f": {why}" if why else ""), REASON_CHARS)
        if outcome == "passed" and self.other is not None:
            return self.other
        return outcome, reason
