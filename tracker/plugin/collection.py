"""The plugin's parts for collection (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`): verify's
selection of the gates' tests (:class:`Selector`, :class:`GatePairs`, :class:`DirectoryReports`), an xdist worker's
notes for the recording controller (:class:`WorkerNotes`), lint's collection (:class:`Collector`) and the collected
test files that are not the repository's (:func:`outside_files`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tracker.base.gate_paths import TestFileCheck
from tracker.base.selection import marker_matches, normalize_arg, selects
from tracker.plugin.evidence_file import write_json_atomic
from tracker.plugin.modules import imported_modules
from tracker.plugin.outcomes import Outcomes, _dropped, _file_of, _markers, _reason


class WorkerNotes:
    """An xdist worker's part of the record: the controller collects nothing and sees only the reports of the tests
    run, so each worker sends it (in ``workeroutput``, at the worker's end) the markers of the tests it collected and
    the tests deselected there: what a serial run's :class:`tracker.plugin.recorder.Recorder` takes from its own
    collection."""

    def __init__(self, config: pytest.Config) -> None:
        self.notes: dict[str, Any] = {"markers": {}, "deselected": {}, "dropped": 0}
        config.workeroutput["tracker"] = self.notes  # type: ignore[attr-defined]
        self._deselected: set[int] = set()  # id() of the items pytest_deselected was told of

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        for item in items:
            self._deselected.add(id(item))
            self.notes["deselected"][item.nodeid] = _markers(item)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Any:
        """How many tests a collection hook dropped here without ``pytest_deselected`` (as
        :meth:`tracker.plugin.recorder.Recorder.pytest_collection_modifyitems` counts them in a serial run)."""
        before = list(items)
        result = yield
        self.notes["dropped"] = _dropped(before, items, self._deselected)
        return result

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.notes["markers"] = {item.nodeid: _markers(item) for item in session.items}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """The modules this worker imported (before xdist sends the notes): the controller imported no test's."""
        self.notes["modules"] = imported_modules()


class WorkersNotes:
    """Under xdist, the recording controller's side of :class:`WorkerNotes`: what the workers sent as they ended."""

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []

    def add(self, node: Any) -> None:
        """A worker ended (xdist's ``pytest_testnodedown``); one that finished sent its :class:`WorkerNotes`."""
        notes = (getattr(node, "workeroutput", None) or {}).get("tracker")
        if isinstance(notes, dict):
            self.notes.append(notes)

    def dropped(self) -> int:
        """The most tests a collection hook dropped silently in one worker."""
        dropped = [n.get("dropped") for n in self.notes]
        return max((d for d in dropped if isinstance(d, int)), default=0)

    def apply(self, outcomes: Outcomes) -> None:
        """Give the tests the markers, and the deselected tests the records, that the notes hold."""
        for notes in self.notes:
            for nodeid, markers in notes.get("markers", {}).items():
                if nodeid in outcomes.tests:
                    outcomes.tests[nodeid]["markers"] = markers
            for nodeid, markers in notes.get("deselected", {}).items():
                outcomes.record(nodeid, markers).update(outcome="deselected", markers=markers)

    def modules(self) -> dict[str, str]:
        """{module name: its file} of what the workers imported (under xdist the tests ran in the workers)."""
        out: dict[str, str] = {}
        for notes in self.notes:
            theirs = notes.get("modules")
            if isinstance(theirs, dict):
                out.update({k: v for k, v in theirs.items() if isinstance(k, str) and isinstance(v, str)})
        return out


class Selector:
    """Deselects every collected test that no gate selects, so one session runs all gates.

    Node ids that do not exist simply select nothing (the gate then reports "0 tests collected")
    instead of aborting the whole session as a bad command-line node id would.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.pairs = GatePairs([tuple(p) for p in json.loads(Path(config.getoption("tracker_select")).read_text())])

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if self.pairs.select(item.nodeid, _markers(item)) else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


class DirectoryReports:
    """pytest collects a file given on the command line by collecting its directory again, fresh, for each such
    file (``_pytest/main.py``: "files given directly multiple times on the command line should not be
    deduplicated"): verify gives each gate's file as one argument, so 100 test files of one folder made 10,000
    nodes where their node ids made 100 (~190 ms of CPU at 1,000 gates, growing with the square of a folder's
    files). verify's arguments never repeat a file, so a directory's first report is the one each later file
    would get, the same nodes: pytest itself reuses it for node-id arguments. Registered with :class:`Selector`
    (verify's runs only) as two plugins: the first answer (tryfirst) and the one that keeps it (a wrapper)."""

    def __init__(self) -> None:
        self.reports: dict[pytest.Collector, pytest.CollectReport] = {}
        self.keeper = _KeepDirectoryReports(self.reports)

    @pytest.hookimpl(tryfirst=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> pytest.CollectReport | None:
        return self.reports.get(collector) if _is_directory(collector) else None


class _KeepDirectoryReports:
    def __init__(self, reports: dict[pytest.Collector, pytest.CollectReport]) -> None:
        self.reports = reports

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        report = yield
        if _is_directory(collector) and report.passed:
            self.reports.setdefault(collector, report)
        return report


def _is_directory(collector: pytest.Collector) -> bool:
    """A directory's collector (pytest >= 8: ``Dir``, ``Package``)."""
    directory = getattr(pytest, "Directory", None)
    return directory is not None and isinstance(collector, directory)


_CUTS = re.compile(r"::|\[|/")  # where a pytest argument that selects a node id may end inside it


class GatePairs:
    """The gates' (pytest argument, ``-m`` expression or None) pairs, filed under each argument (normalized), so
    that a test is matched against the few pairs that can select it: those filed under the node id itself, its
    file, one of that file's directories, a class or test of it, or the whole tree. Matching every test against
    every pair cost verify time quadratic in the gates (500 gates of one test each: 250,000 matches). Same answers
    as trying every pair in order (:func:`tracker.base.selection.selects`, then
    :func:`tracker.base.selection.marker_matches`)."""

    def __init__(self, pairs: list[tuple[str, str | None]]) -> None:
        self.pairs = pairs
        self.filed: dict[str, list[int]] = {}  # argument (normalized, as node ids spell it) -> indexes into pairs
        for i, (arg, _) in enumerate(pairs):
            self.filed.setdefault(normalize_arg(arg), []).append(i)

    def candidates(self, nodeid: str) -> list[tuple[str, str | None]]:
        """The pairs that may select ``nodeid``, in their order: those whose argument is the node id or a prefix
        of it cut before a ``::``, ``[`` or ``/`` (filing by file alone matched each of 5,000 tests of one file
        against 5,000 gates on it)."""
        return [self.pairs[i] for i in self.indexes(nodeid)]

    def indexes(self, nodeid: str) -> list[int]:
        """Where in ``pairs`` the candidates of :meth:`candidates` stand, in order."""
        if "::" not in nodeid:  # a node id that is a path: an argument under it selects it too
            return list(range(len(self.pairs)))
        places = {nodeid, "", ".", *(nodeid[: m.start()] for m in _CUTS.finditer(nodeid))}
        return sorted(i for place in places for i in self.filed.get(place, ()))

    def select(self, nodeid: str, markers: list[str]) -> bool:
        """Does some pair select test ``nodeid`` with these markers?"""
        return any(selects(arg, nodeid) and marker_matches(expr, markers) for arg, expr in self.candidates(nodeid))


class Collector:
    """Writes what collection found (node ids with markers, and collection errors) as JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[dict[str, str]] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append({"nodeid": report.nodeid or ".", "reason": _reason(report)})

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        items = [{"nodeid": i.nodeid, "markers": _markers(i)} for i in session.items]
        outside = outside_files(Path(str(session.config.rootpath)), [i.nodeid for i in session.items])
        write_json_atomic(self.path, {"items": items, "errors": self.errors, "outside": outside})


def outside_files(root: Path, nodeids: list[str]) -> dict[str, str]:
    """{test file: why it is not the repository's} for the collected tests (node ids) whose file, or a
    ``conftest.py`` above it, resolves outside ``root`` (:class:`tracker.base.gate_paths.TestFileCheck`); {} when
    none."""
    check = TestFileCheck(root)
    out: dict[str, str] = {}
    for file in dict.fromkeys(_file_of(nodeid) for nodeid in nodeids):
        why = check(file)
        if why is not None:
            out[file] = why
    return out


def hidden_test_files(root: Path, nodeids: list[str], files: dict[str, str], outside: dict[str, str]) -> list[str]:
    """The files of the collected tests (node ids) that no id of the tree names (``files``: git ignores them) and
    that are not outside the repository (``outside``): an edit to one would never make its gate stale (round 15,
    A7)."""
    return [
        f
        for f in dict.fromkeys(_file_of(n) for n in nodeids)
        if f not in files and f not in outside and (root / f).is_file()
    ]
