"""The recorder (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`): the hooks that collect a
session's outcomes and provenance and write them as a tracker evidence file (:mod:`tracker.pytest_plugin` says what
the file holds); each test's record is :mod:`tracker.plugin.outcomes`', the file being written
:mod:`tracker.plugin.evidence_file`'s."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracker.base.contract import recordable_ids, unrecordable_warning
from tracker.base.dirty import commit_state
from tracker.base.fingerprint import HandedReading, file_stats, tree_file_ids
from tracker.plugin.collection import WorkersNotes, hidden_test_files, outside_files
from tracker.plugin.evidence_file import EvidenceFile, evidence_path
from tracker.plugin.machine import invocation_dir, note_cuda, provenance
from tracker.plugin.modules import imported_modules, not_the_tree
from tracker.plugin.options import (
    _declared_options,
    altering,
    collected_args,
    collection_options,
    ini_file,
    narrowing,
    xdist_refusal,
)
from tracker.plugin.outcomes import SUBTEST_REPORTS, Outcomes, _dropped, _markers

SCHEMA = "tracker-test-run"
VERSION = 1
# Exit statuses after which the run's results cannot be trusted as a whole.
_BROKEN = {pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR}

# What tracker.pytest_plugin read before any conftest.py ran (its ``_BEFORE_CONFTESTS``, for this rootdir): the
# tree's file ids, their (inode, ctime), and the commit checked out and what git status reported then.
# The pytest configuration a run read that its file ids cannot hold (config, rootdir, file ids -> what altered it):
# tracker.pytest_plugin.unrecorded_configuration, which knows what that session imported before the caches moved.
Unrecorded = Callable[[pytest.Config, Path, dict[str, str]], list[str]]


class Recorder:
    """Collects outcomes during the session and writes the evidence file. Only the process that configured it
    writes (:meth:`_mine`): a test that forks and whose child goes on with the session (no ``os._exit``) must not
    have that copy's later outcomes replace the file the session's own process wrote.

    ``before``: the reading :mod:`tracker.pytest_plugin` took before any conftest.py ran (None where it took none);
    ``unrecorded``: its :func:`tracker.pytest_plugin.unrecorded_configuration`."""

    def __init__(self, config: pytest.Config, before: HandedReading | None, unrecorded: Unrecorded) -> None:
        self.pid = os.getpid()
        self.config = config
        self.root = Path(str(config.rootpath))
        self.file = EvidenceFile(evidence_path(config, self.root))
        self.path = self.file.path
        gates_file = config.getoption("tracker_gates")
        self.gates: dict[str, str] = json.loads(Path(gates_file).read_text()) if gates_file else {}
        self.outcomes = Outcomes()
        self._deselected: set[int] = set()  # id() of the items pytest_deselected was told of
        self.interrupted = False
        self.collect_errors = False
        self.started_tests = False
        self.collection_stop = False  # pytest stopped after collection errors, before any test
        self.data: dict[str, Any] = {}
        self.stats: dict[str, tuple[int, int]] = {}  # (inode, ctime) of the tree's files at the session's start
        self.unrecordable: list[str] = []  # tree files whose names are not UTF-8: recorded escaped, as no file's id
        self.tree_ids: dict[str, str] = {}  # the tree's file ids as read (the record holds recordable_ids of them)
        self.xdist = False  # set when an xdist worker reports its collection: this process is xdist's controller
        self.workers = WorkersNotes()  # what the xdist workers sent
        self._before = before
        self._unrecorded = unrecorded
        refused = xdist_refusal(config)
        if refused:
            raise pytest.UsageError(f"--tracker-record: {refused}")
        try:  # asked here, at configure time, so that a bad TRACKER_COMMIT/TRACKER_DIRTY stops pytest before any test
            self.commit_state = commit_state(self.root, before[2] if before is not None else None)
        except ValueError as err:
            raise pytest.UsageError(f"--tracker-record: {err}") from None

    def _mine(self) -> bool:
        """Is this the process that configured the recorder (not a test's forked child going on with the session)?"""
        return os.getpid() == self.pid

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = time.monotonic()
        narrowed = narrowing(self.config)
        early, self._before = self._before, None  # read before any conftest.py ran, where the hook ran
        files = early[0] if early is not None else tree_file_ids(self.root)
        self.stats = early[1] if early is not None else file_stats(self.root, files)
        altered = altering(self.config) + self._unrecorded(self.config, self.root, files)
        self.tree_ids = files
        recorded, self.unrecordable = recordable_ids(files)
        self.data = first_data(self.config, self.root, self.commit_state, narrowed, altered, self.gates, recorded)
        self.file.start(self.data)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.collect_errors = self.collect_errors or report.failed
        self.outcomes.collect_report(report)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        for item in items:
            self._deselected.add(id(item))
            self.outcomes.record(item.nodeid, _markers(item))["outcome"] = "deselected"

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Any:
        """Around every other implementation: tests they removed from ``items`` without saying so
        (``pytest_deselected``, which -k, -m and --deselect call) were dropped silently, so the run did not collect
        all of its arguments: it is narrowed ("a collection hook dropped N test(s)")."""
        before = list(items)
        result = yield
        self._note_dropped(_dropped(before, items, self._deselected))
        return result

    def _note_dropped(self, count: int) -> None:
        """Record that a collection hook dropped ``count`` tests silently: the run is narrowed."""
        if count and self.data:
            prov = self.data["provenance"]
            why = f"a collection hook dropped {count} test(s)"
            prov["narrowed"] = ", ".join(x for x in (prov.get("narrowed"), why) if x)
            prov["args"] = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            self.outcomes.record(item.nodeid, _markers(item))
        self._note_outside([item.nodeid for item in session.items])

    def _note_outside(self, nodeids: list[str]) -> None:
        outside = outside_files(self.root, nodeids)
        if outside and self.data:  # before any test runs: the rewrites that name the running test hold it too
            self.data["provenance"].setdefault("outside", {}).update(outside)
        files = self.tree_ids if self.data else None
        if files:  # a test file git ignores has no id: an edit to it would never make its gate stale (round 15, A7)
            hidden = hidden_test_files(self.root, nodeids, files, outside)
            if hidden:
                some = ", ".join(sorted(hidden)[:3]) + (" ..." if len(hidden) > 3 else "")
                self._alter(f"test files git ignores ({some})")

    def _alter(self, why: str) -> None:
        """Mark the run altered for ``why`` (once): its passes count for nothing, its failures do."""
        prov = self.data["provenance"]
        if why not in str(prov.get("altered") or ""):
            prov["altered"] = ", ".join(x for x in (prov.get("altered"), why) if x)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist, the controller: a worker collected ``ids`` (its deselection done). Every worker collects the
        same tests (xdist stops the session otherwise); a worker started in place of a crashed one, again."""
        self.xdist = True
        for nodeid in ids:
            self.outcomes.record(nodeid)
        self._note_outside(list(ids))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Under xdist, the controller: a worker ended; one that finished sent its
        :class:`tracker.plugin.collection.WorkerNotes`."""
        self.workers.add(node)

    def _apply_worker_notes(self) -> bool:
        """Give the tests the markers, and the deselected tests the records, that the workers' notes hold, as a
        serial run's collection gives them. False when no worker sent its notes (none finished)."""
        self._note_dropped(self.workers.dropped())
        self.workers.apply(self.outcomes)
        return bool(self.workers.notes)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Name the test about to run, so that a run it kills says which test crashed
        (:meth:`tracker.plugin.evidence_file.EvidenceFile.name_running`)."""
        self.started_tests = True
        if not self.data or not self._mine():
            return
        markers = self.outcomes.record(item.nodeid)["markers"]
        self.file.name_running(self.data, item.nodeid, markers, nextitem.nodeid if nextitem is not None else None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        yield
        if not self._mine():
            return
        self.file.tests_done()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if type(report).__name__ in SUBTEST_REPORTS:  # its test's own reports come apart: tracker.base.subtests
            self.outcomes.subtest(report)
            return
        self.started_tests = True  # under xdist (the controller runs no test protocol of its own)
        self.outcomes.report(report)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest stops before running anything when a file failed to collect (exit 2): a finished
        # run whose collection errors are recorded, not an interruption.
        if self.collect_errors and not self.started_tests and isinstance(excinfo.value, pytest.Session.Interrupted):
            self.collection_stop = True
        else:
            self.interrupted = True

    def pytest_internalerror(self, excrepr: object, excinfo: object) -> None:
        self.interrupted = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.data or not self._mine():
            return
        stopped = self.collection_stop and exitstatus == pytest.ExitCode.INTERRUPTED
        broken = self.interrupted or (exitstatus in _BROKEN and not stopped)
        if self.xdist and not self._apply_worker_notes():  # no worker said what it collected: markers unknown
            broken = True
        self.outcomes.settle()  # a failed subtest fails its test: tracker.base.subtests
        note_cuda(self.data["provenance"])
        self._check_what_ran()
        self.data.update(
            status="interrupted" if broken else "complete",
            exitstatus=int(exitstatus),
            duration=round(time.monotonic() - self.started, 3),
            tests=self.outcomes.in_order(),
        )
        self.file.finish(self.data)

    def _check_what_ran(self) -> None:
        """Mark the run altered where what ran was not the code the file ids name (files changed while it ran, the
        repository's modules imported from elsewhere, the tests' own ``tracker`` hidden), and record the modules
        imported from files git ignores."""
        files = self.tree_ids
        changed = changed_while_running(self.root, files, self.stats)
        modules = {**imported_modules(), **self.workers.modules()}  # under xdist the tests ran in the workers
        whys, ignored = not_the_tree(self.root, files, modules, self.data["provenance"])
        for why in (changed, *whys):
            if why:  # what ran was not the code the file ids name
                self._alter(why)
        if ignored:  # no id of the tree names them: status hashes them to tell an edit (round 17, F2)
            self.data["provenance"]["ignored_modules"] = ignored

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._mine():
            self.file.slot.remove()  # a session that ended before its test loop's end (a usage error) leaves none

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        # --tracker-file is verify's: verify names the file itself after its verdicts (saying it here too doubled it)
        if self.unrecordable:
            terminalreporter.write_line(unrecordable_warning(self.unrecordable))
        if self.data and not self.config.getoption("tracker_file"):
            terminalreporter.write_line(f"tracker: evidence {self.data['status']}: {self.path}")


def first_data(
    config: pytest.Config,
    root: Path,
    state: tuple[str | None, bool | None],
    narrowed: list[str],
    altered: list[str],
    gates: dict[str, str],
    files: dict[str, str],
) -> dict[str, Any]:
    """The evidence file as the session's start writes it (``incomplete``): its provenance
    (:func:`tracker.plugin.machine.provenance` with the commit ``state``, the run's arguments and options:
    ``narrowed`` by :func:`tracker.plugin.options.narrowing`, ``altered`` what may turn a failure into a pass), the
    ``gates`` it runs for verify and the tree's file ids (``files``)."""
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "status": "incomplete",
        "provenance": {
            **provenance(root, state),
            "args": collected_args(config, root, narrowed),
            "cwd": invocation_dir(config, root),
            **({"narrowed": ", ".join(narrowed)} if narrowed else {}),
            **({"altered": ", ".join(altered)} if altered else {}),
            "inifile": ini_file(config, root),
            **({"options": options} if (options := collection_options(config)) else {}),
            # the gates' options verify declared (their -p plugins were not counted as loads): round 14, A5b
            **({"declared_options": declared} if (declared := _declared_options(config)) else {}),
        },
        "rootdir": root.name,
        "gates": gates,
        "files": files,
        "tests": [],
    }


def changed_while_running(root: Path, before: dict[str, str], stats: dict[str, tuple[int, int]]) -> str | None:
    """The files of the tree that changed or went while the session ran (their ids, ``before`` at its start, are
    read again at its end, ~10 ms; ``stats``: their (inode, ctime) then), or None: an edit saved mid-run ran code the
    file ids do not name (adversarial round 12). One edited and put back before the end has its content id, not its
    inode change time (round 13, C1: ``st_ctime_ns``, which no ``touch`` sets back). New files are left out: tests
    may write their own outputs into the tree."""
    try:
        after = tree_file_ids(root)
    except Exception:  # the tree cannot be read again: what ran is unknown
        return "files changed while it ran: the tree could not be read at its end"
    now = file_stats(root, before)
    changed = sorted(p for p, blob in before.items() if after.get(p) != blob or now.get(p) != stats.get(p))
    if not changed:
        return None
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return f"files changed while it ran: {', '.join(changed[:3])}{more}"
