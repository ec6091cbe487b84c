"""Hostile evidence documents for property tests: times (with and without a zone, in the future), huge and deep
values, and mutations of a valid document (a key dropped, added or replaced by a hostile value), dumped as a hostile
writer would. Shared by the tests of the evidence store, ingest and result files."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FAST = settings(deadline=None, suppress_health_check=list(HealthCheck))


def utc_at(offset_s: float = 0.0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=False), st.sampled_from([1.7e308, -1.7e308, 5e-324, float("inf"), float("-inf")]),
    st.text(max_size=12), st.sampled_from(["", "passed", "failed", "complete", "0" * 40, "2099-01-01T00:00:00Z"]),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),  # lone surrogates
)  # fmt: skip


TIMES = st.one_of(
    st.sampled_from(["2099-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "2026-11-29T11:02:03",
                     "2026-11-29T11:02:03+02:00", "9999-12-31T23:59:59-01:00", "yesterday", "2024-02-29T23:59:59Z"]),
    st.integers(-3600, 7200).map(utc_at),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.text(alphabet="0123456789-T:Z+.", max_size=26),
)  # fmt: skip


def nested(depth: int, leaf: object = "x") -> object:
    value: object = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


HOSTILE = st.one_of(
    SCALARS,
    TIMES,
    st.recursive(
        SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    ),
    st.integers(50, 600).map(nested),
)


def paths(doc: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key/index path inside ``doc`` (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.append((*prefix, key))
        out.extend(paths(value, (*prefix, key)))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``base()`` with 1-3 mutations: a value replaced by a hostile one, a key deleted, or an unknown key added."""
    doc = base()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)))
        parent: Any = doc
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[where[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=6))] = draw(HOSTILE)
        else:
            parent[where[-1]] = draw(HOSTILE)
        if not paths(doc):
            break
    return doc


def dumps(doc: object) -> bytes:
    """JSON as a hostile writer would emit it (Infinity, huge integers); deep values may not serialize at all."""
    try:
        return json.dumps(doc).encode()
    except (RecursionError, ValueError):
        return b"[" * 100_000
