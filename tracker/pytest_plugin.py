"""pytest plugin recording per-test outcomes as a tracker evidence file.

Used by ``tracker verify`` (``-p tracker.pytest_plugin``) and by a plain ``pytest --tracker-record[=DIR]``
(entry point ``pytest11: tracker.pytest_plugin``; both forms together are fine). This module holds the hooks pytest
calls first and the session's own state; the recorder and the other parts live in :mod:`tracker.plugin`. Like them it
imports only the standard library, pytest and :mod:`tracker.base` (:mod:`tracker.base.fingerprint`,
:mod:`tracker.base.selection`, :mod:`tracker.base.dirty`, :mod:`tracker.base.gate_paths`, :mod:`tracker.base.contract`,
...: standard-library only), because it also runs on the GPU machine, which has pytest but none of the tracker's
dependencies and no ``.git`` directory.

``provenance.commit``/``dirty`` follow :mod:`tracker.base.dirty`, the rule ``signoff`` and result files use too
(evidence in ``.tracker/`` and ``bench/results/`` never makes a run dirty); a ``TRACKER_COMMIT`` or ``TRACKER_DIRTY``
that readers would refuse stops a recording session before any test (pytest's usage error, exit 4).

The file is written atomically at session start with ``"status": "incomplete"`` (what a
crashed run leaves behind), and at session end with ``"complete"`` or ``"interrupted"`` (Ctrl-C,
internal error, usage error). While tests run, a run that crashes the interpreter says which test did it
(the tracker counts that test as an error and nothing else of the run): a small file beside the evidence file,
:func:`tracker.base.contract.running_file`, names the running test (rewritten in place before each test, read only
once the process is gone: :func:`tracker.store.evidence.crashed_test`), and the evidence file's ``"running"`` names
that test when it is the only one of its file that runs, else its file (rewritten when that changes, so a
reader with the evidence file alone counts the crash against that file's tests). A session that pytest
stopped after collection because a file failed to collect is ``complete``: its collection errors are
outcomes. The tracker ignores every other file that is not ``complete``, so an interrupted run never counts
as a pass.

``provenance.args`` lists the run's pytest arguments relative to the rootdir when nothing but
deselection narrowed what they collect, else ``null``: the tracker takes the tests a gate covers from the newest
run whose arguments cover the gate's. ``provenance.narrowed`` (absent when none) names the options of the run's
command line that may have kept tests from being collected at all (``--ignore``, ``-o python_functions``,
``-p no:doctest``, ``-c``, ...: :func:`tracker.plugin.options.narrowing`): such a run never names a gate's tests,
not even one verify ran.

``provenance.options`` (absent when none) lists the options in effect that a test gate may carry
(``--doctest-modules``, ``--doctest-glob=...``, ``--import-mode=...``, ``-p NAME``:
:func:`tracker.plugin.options.collection_options`): a run without a gate's options never names that gate's tests.

``provenance.outside`` (absent when none) maps each collected test file that is not the repository's to why: the
file, or a ``conftest.py`` above it, resolves outside the rootdir through a symlink
(:class:`tracker.base.gate_paths.TestFileCheck`). A pass of such a test meets no gate.

Under pytest-xdist the controller, which collects nothing, records: each worker applies the tracker's selection and
sends the markers of what it collected and what it deselected (:class:`tracker.plugin.collection.WorkerNotes`), and
the controller takes the collected node ids from xdist and the outcomes from the workers' reports: the same record as
a serial run. A test that kills its worker is an error (``crashed: ...``); ``--dist each`` and a ``--tx`` other than
``popen`` (workers elsewhere than the machine, interpreter and tree the record names) are usage errors. Workers
without a ``--dist`` run each gate's tests in one worker (:mod:`tracker.plugin.xdist_schedule`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tracker.base.bytecode import PYCACHE, prefix
from tracker.base.fingerprint import HANDED_OVER, HandedReading, file_stats, read_tree
from tracker.base.realpaths import RealPaths
from tracker.errors import FileError
from tracker.plugin.collection import Collector, DirectoryReports, Selector, WorkerNotes
from tracker.plugin.modules import _under, library_dirs
from tracker.plugin.options import ini_file
from tracker.plugin.recorder import Recorder
from tracker.plugin.xdist_schedule import GateSchedule, by_gate

DISTRIBUTION = "plan-tracker"  # pyproject's project name: the installation whose entry point loads this module


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _block_entry_points_under_other_names(pluginmanager)
    group = parser.getgroup("tracker", "tracker evidence recording")
    group.addoption(
        "--tracker-record",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="record per-test outcomes as a tracker evidence file in DIR (default <rootdir>/.tracker/evidence)",
    )
    group.addoption("--tracker-file", default=None, help="evidence file name to write (used by tracker verify)")
    group.addoption(
        "--tracker-gates", default=None, help="JSON file {gate key: definition hash} (used by tracker verify)"
    )
    group.addoption(
        "--tracker-select",
        default=None,
        help="JSON file [[pytest arg, -m expression or null], ...]: run only tests some pair selects "
        "(used by tracker verify)",
    )
    group.addoption(
        "--tracker-collect",
        default=None,
        help="write collected node ids and collection errors as JSON (used by tracker lint)",
    )


def _block_entry_points_under_other_names(pluginmanager: pytest.PytestPluginManager) -> None:
    """Keep pytest from loading this module a second time under another name, which pluggy refuses ("Plugin already
    registered under a different name", exit 3).

    ``tracker verify`` loads the plugin with ``-p tracker.pytest_plugin``, before pytest loads the installed
    entry points; ours is named as the module, so pytest skips it. An installation made before it was so named
    (``tracker = tracker.pytest_plugin``; an editable install keeps its entry points until reinstalled) would load
    the module again as ``tracker``: such names are blocked. Only the entry points of this package's own
    installations that name this module are, so another package's plugin called ``tracker`` still loads.
    (~0.2 ms: pytest has imported :mod:`importlib.metadata` already.)
    """
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return
    from importlib.metadata import distributions

    registered = pluginmanager.get_name(_SELF)
    for dist in distributions(name=DISTRIBUTION):
        for ep in dist.entry_points:
            if (
                ep.group == "pytest11"
                and ep.value == __name__
                and ep.name != registered
                and pluginmanager.get_plugin(ep.name) is None
            ):
                pluginmanager.set_blocked(ep.name)


_SELF = sys.modules[__name__]  # this module, while pytest runs too (tracker.pytest_boot may drop it from sys.modules)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """A recorded run never reads a ``__pycache__`` of the tree: Python trusts an entry while its source keeps its
    size and modification second, so an edit inside that second (or with its time restored) would run the old code
    and record its outcome for the new bytes. Before any conftest, test or repository module is imported, bytecode
    caches move to the tracker's prefix, rid of what may be stale (:mod:`tracker.base.bytecode`, what verify's runs use;
    verify has set it already)."""
    if getattr(early_config.known_args_namespace, "tracker_record", None) is None:
        return
    root = Path(str(early_config.rootpath))
    # The tree as it was before any conftest.py ran: one whose import or pytest_configure rewrites a tracked file
    # ran other code than the ids read at the session's start would name (round 14, F9). A forked verify session
    # has it from the process that forked it, read just before (tracker.base.fingerprint.HANDED_OVER).
    handed = HANDED_OVER.pop(os.path.realpath(root), None)
    if handed is None:
        tree = read_tree(root, commit=True)
        handed = (tree.ids, file_stats(root, tree.ids), tree.state)
    _BEFORE_CONFTESTS[str(root)] = handed
    if sys.pycache_prefix and Path(sys.pycache_prefix) == root / PYCACHE:
        return
    _note_early_imports(root)
    try:
        sys.pycache_prefix = str(prefix(root))
    except FileError as err:
        raise pytest.UsageError(f"--tracker-record: {err}") from None


# By rootdir: the tree's file ids and their (inode, ctime) read before any conftest.py ran (Recorder's start), and
# the commit checked out and what git status reported then (the recorder's commit and dirty flag).
_BEFORE_CONFTESTS: dict[str, HandedReading] = {}


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> object:
    """Under pytest-xdist, a recorded run given workers but no ``--dist`` is scheduled by gate
    (:mod:`tracker.plugin.xdist_schedule`): seen here, around xdist's own ``pytest_cmdline_main``, which makes a
    missing ``--dist`` into ``load``."""
    if config.getoption("tracker_record") is not None and by_gate(config):
        config.pluginmanager.register(GateSchedule(config), "tracker-gate-schedule")
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("tracker_select"):  # xdist workers too: each collects, and deselects, on its own
        config.pluginmanager.register(Selector(config), "tracker-selector")
        directories = DirectoryReports()
        config.pluginmanager.register(directories, "tracker-directory-reports")
        config.pluginmanager.register(directories.keeper, "tracker-directory-reports-keeper")
    if hasattr(config, "workerinput"):  # an xdist worker: the controller records, from what the workers send it
        if config.getoption("tracker_record") is not None:
            config.pluginmanager.register(WorkerNotes(config), "tracker-worker-notes")
        return
    if config.getoption("tracker_record") is not None:
        # what the session read before any conftest.py ran, and what it imported before the caches moved, stay here
        # (tracker.plugin holds no session's state): the recorder is handed them
        before = _BEFORE_CONFTESTS.pop(str(config.rootpath), None)
        config.pluginmanager.register(Recorder(config, before, unrecorded_configuration), "tracker-recorder")
    if config.getoption("tracker_collect"):
        config.pluginmanager.register(Collector(Path(config.getoption("tracker_collect"))), "tracker-collector")


def unrecorded_configuration(config: pytest.Config, root: Path, files: dict[str, str]) -> list[str]:
    """The pytest configuration this run read that its file ids cannot hold (git ignores it: a local ``.pytest.ini``
    or ``conftest.py`` that replaces the committed one, adv round 6; it lies outside the repository: the ini file and
    conftest.py of a folder above it, which a clone lacks, round 16) or whose bytecode Python may
    have read stale (a repository module imported before the recorder could move the caches: a ``-p`` plugin of
    the ini's ``addopts``), as ``altered`` names them: the run's passes are not the repository's."""
    out: list[str] = []
    ini = ini_file(config, root)
    if ini is not None and ini not in files:
        out.append(f"configuration git ignores ({ini})")
    elif ini is None and getattr(config, "inipath", None) is not None:  # a parent folder's ini (round 16, F1)
        out.append(f"configuration outside the repository ({config.inipath})")
    for plugin in config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        if not isinstance(file, str) or os.path.basename(file) != "conftest.py":
            continue
        try:
            rel = Path(file).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            if not _under(file, root):  # a parent folder's (one linked out from inside: the ``outside`` rule's)
                out.append(f"configuration outside the repository ({file})")
            continue
        if rel not in files:
            out.append(f"configuration git ignores ({rel})")
    out += [f"bytecode that may be older than its source ({name})" for name in _EARLY]
    return list(dict.fromkeys(out))


_EARLY: list[str] = []  # repository modules imported before the caches moved whose bytecode may be stale


def _note_early_imports(root: Path) -> None:
    """Before the bytecode caches move (:func:`pytest_load_initial_conftests`): the repository's modules imported
    already (a ``-p`` plugin, an entry point of an editable install) whose ``__pycache__`` entry Python may have
    trusted while stale: its source's inode changed (``st_ctime_ns``) at or after the entry was written, the rule
    :mod:`tracker.base.bytecode` prunes by."""
    base = str(root.resolve()) + os.sep
    libraries = library_dirs()
    real_path = RealPaths()
    _EARLY.clear()
    for name, module in list(sys.modules.items()):
        file, cached = getattr(module, "__file__", None), getattr(module, "__cached__", None)
        if not (isinstance(file, str) and isinstance(cached, str)) or not real_path(file).startswith(base):
            continue
        if real_path(file).startswith(libraries):
            continue  # an installed library (a virtual environment inside the repository)
        try:
            if os.stat(file).st_ctime_ns >= os.stat(cached).st_mtime_ns:
                _EARLY.append(name)
        except OSError:
            continue
