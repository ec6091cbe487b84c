"""The evidence store: ``.tracker/evidence/*.json``, one file per run, never edited afterwards.

Kinds (the ``schema`` field): ``tracker-test-run`` (written by :mod:`tracker.pytest_plugin`),
``tracker-signoff`` (``tracker signoff``) and ``tracker-bench-result`` (benchmark results, issue 4).
Test runs whose ``status`` is not ``complete`` (interrupted, crashed) are ignored, except the test a
crashed run was running (the plugin names it in ``running``): once that process is gone, that test
is an error of that run (:func:`crashed_run`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracker.errors import FileError

EVIDENCE_DIR = Path(".tracker") / "evidence"
RAN = frozenset({"passed", "failed", "error", "xfailed", "xpassed"})


class _Record:
    """What ``@dataclass`` would give (fields in ``__slots__`` order, ``__eq__``, ``__repr__``),
    written out: importing ``dataclasses`` and generating two classes costs ~2 ms of every status."""

    __slots__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({inner})"


class TestRun(_Record):
    """One complete pytest run: provenance, gate hashes, file ids and per-test records."""

    __test__ = False
    __slots__ = ("file", "provenance", "gates", "files", "tests")

    def __init__(
        self, file: str, provenance: dict[str, Any], gates: dict[str, str], files: dict[str, str], tests: list[dict[str, Any]]
    ) -> None:
        self.file = file  # path relative to the repo root
        self.provenance = provenance
        self.gates = gates
        self.files = files
        self.tests = tests

    @property
    def time(self) -> str:
        """The run's time as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (times compare as these strings); a value
        that is not an ISO-8601 time with a time zone is returned as is."""
        raw = self.provenance.get("time", "")
        return utc_time(raw) or str(raw)


class Store(_Record):
    """Everything in the evidence store, each list oldest first."""

    __slots__ = ("runs", "signoffs", "bench", "incomplete", "invalid")

    def __init__(
        self,
        runs: list[TestRun] | None = None,
        signoffs: list[tuple[str, dict[str, Any]]] | None = None,
        bench: list[tuple[str, dict[str, Any]]] | None = None,
        incomplete: list[str] | None = None,
        invalid: list[str] | None = None,
    ) -> None:
        self.runs: list[TestRun] = [] if runs is None else runs
        self.signoffs: list[tuple[str, dict[str, Any]]] = [] if signoffs is None else signoffs
        self.bench: list[tuple[str, dict[str, Any]]] = [] if bench is None else bench
        self.incomplete: list[str] = [] if incomplete is None else incomplete
        self.invalid: list[str] = [] if invalid is None else invalid  # "path: reason" of unusable files


_SHAPE = "0000-00-00T00:00:00Z"


def utc_time(text: object) -> str | None:
    """``text``, an ISO-8601 time with a time zone, as UTC ``YYYY-MM-DDTHH:MM:SSZ``; None if it is not one.

    Strings in that form (what the tracker writes) are taken as they are, without importing datetime
    (status's path); any other offset or precision is parsed and converted, so times order correctly.
    """
    if not isinstance(text, str):
        return None
    if len(text) == 20 and all(c == s or (s == "0" and "0" <= c <= "9") for c, s in zip(text, _SHAPE)):
        if "01" <= text[5:7] <= "12" and "01" <= text[8:10] <= "31" and text[11:13] < "24" and text[14:16] < "60" and text[17:19] < "60":
            return text
    from datetime import datetime, timezone  # noqa: PLC0415 - only for times in another form

    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    u = when.astimezone(timezone.utc)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


KINDS = ("tracker-test-run", "tracker-signoff", "tracker-bench-result")


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    """(UTC time, document) of one store file; raises ValueError with the reason it cannot be used."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as err:
        raise ValueError(f"not a readable evidence file: {err}") from None
    if not isinstance(data, dict):
        raise ValueError("not a readable evidence file: top level is not an object")
    if data.get("schema") not in KINDS:
        raise ValueError(f"not a tracker evidence file (schema {data.get('schema')!r})")
    prov = data.get("provenance")
    when = prov.get("time") if isinstance(prov, dict) else data.get("time")
    utc = utc_time(when)
    if utc is None:  # the store is ordered by time: a file without one cannot be placed
        raise ValueError(f"time {when!r} is not an ISO-8601 time with a time zone")
    return utc, data


def load(root: Path, strict: bool = True) -> Store:
    """Read the store under ``root``; files are ordered by their recorded time (in UTC), then name.

    A file that cannot be used (not JSON, not an evidence kind, no valid time) raises
    :class:`FileError` (``path: reason``) when ``strict``; otherwise it is skipped and listed in the
    store's ``invalid``, for status to show on every test and bench gate and for check to list.
    """
    store = Store()
    folder = root / EVIDENCE_DIR
    if not folder.is_dir():
        return store
    items: list[tuple[str, str, dict[str, Any]]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            when, data = _read(path)
        except ValueError as err:
            if strict:
                raise FileError(f"{path}: {err}") from None
            store.invalid.append(f"{(EVIDENCE_DIR / path.name).as_posix()}: {err}")
            continue
        items.append((when, path.name, data))
    items.sort(key=lambda t: (t[0], t[1]))
    for _, name, data in items:
        rel = (EVIDENCE_DIR / name).as_posix()
        kind = data.get("schema")
        if kind == "tracker-test-run":
            if data.get("status") != "complete":
                crashed = crashed_run(rel, data)
                if crashed is None:
                    store.incomplete.append(rel)
                else:
                    store.runs.append(crashed)
                continue
            store.runs.append(
                TestRun(rel, data.get("provenance", {}), data.get("gates", {}), data.get("files", {}), data.get("tests", []))
            )
        elif kind == "tracker-signoff":
            store.signoffs.append((rel, data))
        elif kind == "tracker-bench-result":
            store.bench.append((rel, data))
    return store


def crashed_run(rel: str, data: dict[str, Any]) -> TestRun | None:
    """An ``incomplete`` run whose process died while a test ran, as a run where only that test
    errored (nothing else of it counts); None while its process may still be running here."""
    running = data.get("running")
    if data.get("status") != "incomplete" or not isinstance(running, dict) or not isinstance(running.get("nodeid"), str):
        return None
    prov = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    if _maybe_alive(running.get("pid"), prov.get("host")):
        return None
    rec = {"nodeid": running["nodeid"], "outcome": "error", "reason": "crashed: the pytest process died while this test ran",
           "duration": 0.0, "markers": running.get("markers") or []}  # fmt: skip
    # No gates, no args: the run collected nothing whole, it only adds this one record.
    return TestRun(rel, {k: v for k, v in prov.items() if k != "args"}, {}, data.get("files") or {}, [rec])


def _maybe_alive(pid: object, host: object) -> bool:
    """Is process ``pid`` of this host still alive? (A file from another host: its run is over.)"""
    import os
    import socket  # noqa: PLC0415 - only when a store holds a run that names a running test

    if not isinstance(pid, int) or host != socket.gethostname() or os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def bench_results(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Benchmark result files in the store as (path, parsed JSON), oldest first (for issue 4)."""
    return load(root).bench
