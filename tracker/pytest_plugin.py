"""pytest plugin recording per-test outcomes as a tracker evidence file.

Used by ``tracker verify`` (``-p tracker.pytest_plugin``) and by a plain ``pytest --tracker-record[=DIR]``
(entry point ``pytest11: tracker.pytest_plugin``; both forms together are fine). It imports only the standard
library, pytest and :mod:`tracker.base.fingerprint`, :mod:`tracker.base.selection`, :mod:`tracker.base.dirty`,
:mod:`tracker.base.gate_paths` and :mod:`tracker.base.contract` (standard-library only), because it also runs on the GPU
machine, which has pytest but none of the tracker's dependencies and no ``.git`` directory.

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
``-p no:doctest``, ``-c``, ...: :func:`narrowing`): such a run never names a gate's tests, not even one verify ran.

``provenance.options`` (absent when none) lists the options in effect that a test gate may carry
(``--doctest-modules``, ``--doctest-glob=...``, ``--import-mode=...``, ``-p NAME``: :func:`collection_options`): a run
without a gate's options never names that gate's tests.

``provenance.outside`` (absent when none) maps each collected test file that is not the repository's to why: the
file, or a ``conftest.py`` above it, resolves outside the rootdir through a symlink
(:class:`tracker.base.gate_paths.TestFileCheck`). A pass of such a test meets no gate.

Under pytest-xdist the controller, which collects nothing, records: each worker applies the tracker's selection and
sends the markers of what it collected and what it deselected (:class:`WorkerNotes`), and the controller takes the
collected node ids from xdist and the outcomes from the workers' reports: the same record as a serial run. A test
that kills its worker is an error (``crashed: ...``); ``--dist each`` and a ``--tx`` other than ``popen`` (workers
elsewhere than the machine, interpreter and tree the record names) are usage errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracker.base.bytecode import PYCACHE, prefix
from tracker.base.contract import atomic_write, check_inside, evidence_name, process_identity, running_file, utc_now
from tracker.base.dirty import commit_state
from tracker.base.fingerprint import HANDED_OVER, file_stats, id_now, read_tree, tree_file_ids
from tracker.base.gate_paths import TestFileCheck
from tracker.base.installed import by_tail, installed_copies, project_files, recorded_files
from tracker.base.realpaths import RealPaths
from tracker.base.selection import (
    gate_options_problem,
    marker_matches,
    normalize_arg,
    plugin_args,
    plugin_names,
    selects,
)
from tracker.base.subtests import FAILING, Subtests, subtest_name
from tracker.errors import FileError

SCHEMA = "tracker-test-run"
VERSION = 1
# Exit statuses after which the run's results cannot be trusted as a whole.
_BROKEN = {pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR}


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
_BEFORE_CONFTESTS: dict[
    str, tuple[dict[str, str], dict[str, tuple[int, int]], tuple[str | None, tuple[str, ...]] | None]
] = {}


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
        config.pluginmanager.register(Recorder(config), "tracker-recorder")
    if config.getoption("tracker_collect"):
        config.pluginmanager.register(Collector(Path(config.getoption("tracker_collect"))), "tracker-collector")


def _markers(item: pytest.Item) -> list[str]:
    return sorted({m.name for m in item.iter_markers()})


class WorkerNotes:
    """An xdist worker's part of the record: the controller collects nothing and sees only the reports of the tests
    run, so each worker sends it (in ``workeroutput``, at the worker's end) the markers of the tests it collected and
    the tests deselected there: what a serial run's :class:`Recorder` takes from its own collection."""

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
        :meth:`Recorder.pytest_collection_modifyitems` counts them in a serial run)."""
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
        if "::" not in nodeid:  # a node id that is a path: an argument under it selects it too
            return self.pairs
        places = {nodeid, "", ".", *(nodeid[: m.start()] for m in _CUTS.finditer(nodeid))}
        found = sorted(i for place in places for i in self.filed.get(place, ()))
        return [self.pairs[i] for i in found]

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


def platform_name() -> str:
    """``Linux-6.8.0-x86_64``: system, release and machine. Not :func:`platform.platform`, which runs ``uname -p``
    in a child process (a fork of the whole pytest process) at the start of every recorded session."""
    uname = getattr(os, "uname", None)
    if uname is None:  # pragma: no cover - Windows
        return "-".join((platform.system(), platform.release(), platform.machine()))
    u = uname()
    return f"{u.sysname}-{u.release}-{u.machine}"


def cpu_model() -> str | None:
    """``Intel Xeon Platinum 8480+``: the processor's model name (Linux's ``/proc/cpuinfo``, trademarks, "CPU" and
    the clock dropped), to tell machines apart whose host names are alike; None where it cannot be read."""
    import re

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return None
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    if found is None:
        return None
    name = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@.*$|\d+-Core", " ", found.group(1))
    return " ".join(name.split())[:80] or None


def accelerator() -> str | None:
    """The machine's NVIDIA GPUs as its driver lists them (``NVIDIA H200``; several joined by ", "), whatever the
    tests import, or None where there is none: what tells a GPU machine from a CPU one with the same host name and
    CPU (``gpu`` is recorded only where the tests imported torch: round 15, A2)."""
    import glob

    models = []
    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        try:
            with open(info, encoding="utf-8", errors="replace") as f:
                found = re.search(r"^Model:\s*(.+)$", f.read(4096), re.MULTILINE)
        except OSError:
            continue
        if found:
            models.append(" ".join(found.group(1).split())[:80])
    if not models and os.path.exists("/dev/nvidiactl"):
        return "NVIDIA (model unknown)"
    return ", ".join(sorted(set(models))) or None


def provenance(root: Path, state: tuple[str | None, bool | None] | None = None) -> dict[str, Any]:
    """The run's provenance: commit and dirty flag by :func:`tracker.base.dirty.commit_state` (``state``, or asked now:
    the rule every writer uses, TRACKER_COMMIT / TRACKER_DIRTY first), plus machine and versions. ValueError for
    a TRACKER_COMMIT or TRACKER_DIRTY that every reader would refuse."""
    commit, dirty = commit_state(root) if state is None else state
    return {
        "commit": commit,
        "dirty": dirty,
        "time": utc_now(),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform_name(),
        **({"cpu": cpu} if (cpu := cpu_model()) else {}),
        "accelerator": accelerator(),
        "cuda": None,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
    }


def invocation_dir(config: pytest.Config, root: Path) -> str:
    """The directory pytest was started in, relative to the rootdir (``.`` there), or ``outside`` when not under it:
    ``python -m pytest`` puts it first on ``sys.path`` and tests may open files relative to it, so a run from
    another one is not ``pytest GATE`` as the repository runs it (tracker.core.run_index.RunIndex.alone)."""
    here = Path(config.invocation_params.dir)
    for base in (root.absolute(), root.resolve()):
        for given in (here, here.resolve()):
            if given.is_relative_to(base):
                return given.relative_to(base).as_posix() or "."
    return "outside"


# Options of a run's command line that may keep tests under its arguments from being collected at all (not merely
# deselected, which the evidence records): (argparse dest, how the user wrote it).
NARROWING_OPTIONS = (
    ("ignore", "--ignore"),
    ("ignore_glob", "--ignore-glob"),
    ("inifilename", "-c"),  # another ini file: its python_files, norecursedirs, ... instead of the repository's
    ("confcutdir", "--confcutdir"),  # conftest.py files above it are not loaded (their collection hooks neither)
    ("noconftest", "--noconftest"),
)
# ``-o NAME=VALUE`` overrides that cannot change what is collected; any other NAME (python_files, python_functions,
# python_classes, norecursedirs, testpaths, a plugin's setting, addopts: what it adds is not on the command line) may.
HARMLESS_INI = frozenset(
    {"cache_dir", "console_output_style", "minversion", "required_plugins", "faulthandler_timeout",
     "empty_parameter_set_mark", "enable_assertion_pass_hook", "asyncio_mode", "asyncio_default_fixture_loop_scope"}
)  # fmt: skip
HARMLESS_INI_PREFIXES = ("log_", "junit_", "verbosity_", "tmp_path_", "truncation_")
# ``-p no:NAME`` plugins whose absence collects the same tests (any other, doctest for one, may collect fewer).
HARMLESS_PLUGINS = frozenset(
    {"cacheprovider", "faulthandler", "randomly", "random_order", "cov", "pytest_cov", "pastebin",
     "junitxml", "logging", "stepwise", "terminal", "reportlog"}
)  # fmt: skip
# ``-p NAME`` plugins whose loading collects and judges the same tests (what verify and the device script load; a
# coverage or reporting plugin). Any other, given on a plain run's command line, in ``PYTEST_ADDOPTS`` or in
# ``PYTEST_PLUGINS``, may drop tests in a collection hook or change outcomes: it narrows the run. (verify's own run
# loads a gate's ``-p`` options from the plan, and verify refuses a ``--pytest-arg`` that loads another.)
HARMLESS_LOADS = frozenset(
    {"tracker.pytest_plugin", "tracker.pytest_argcheck", "xdist", "xdist.plugin", "cov", "pytest_cov", "randomly",
     "pytest_randomly", "reportlog", "pytest_reportlog", "cacheprovider", "junitxml"}
)  # fmt: skip
# Options that may turn a failing test into a pass against the repository's own configuration (a warning its
# ``filterwarnings = error`` fails, a strict xpass, a timeout): ``-o NAME`` and ``-p no:NAME``, and ``-W``,
# ``--runxfail``. A run given one records them in ``provenance.altered``; its passes meet no gate.
ALTERING_INI = frozenset(
    {"filterwarnings", "xfail_strict", "strict_markers", "strict", "markers", "usefixtures", "timeout",
     "timeout_method", "timeout_func_only"}
)  # fmt: skip
# Narrowing options that also replace the repository's own configuration of outcomes (NARROWING_OPTIONS dests).
CONFIG_DESTS = frozenset({"inifilename", "confcutdir", "noconftest"})
ALTERING_PLUGINS = frozenset({"warnings", "skipping", "unraisableexception", "threadexception", "timeout"})


_GIVEN = pytest.StashKey[dict[bool, Any]]()  # _given's answers for a config, by ``addopts``


def _given(config: pytest.Config, addopts: bool = True) -> Any:
    """This run's own command line (``PYTEST_ADDOPTS`` unless not ``addopts``, and its arguments) parsed by
    pytest's parser, or None when it cannot be read; parsed once per config (narrowing, altering and the plugins
    loaded all ask)."""
    answers = config.stash.setdefault(_GIVEN, {})
    if addopts not in answers:
        answers[addopts] = _parse_given(config, addopts)
    return answers[addopts]


def _parse_given(config: pytest.Config, addopts: bool) -> Any:
    import shlex

    parser = getattr(config, "_parser", None)
    try:
        env = shlex.split(os.environ.get("PYTEST_ADDOPTS", "")) if addopts else []
        given = [*env, *map(str, config.invocation_params.args)]
        return parser.parse_known_args(given) if parser is not None else None
    except (ValueError, pytest.UsageError, SystemExit):
        return None


def _other_rootdir(config: pytest.Config, ns: Any) -> bool:
    """Was ``--rootdir`` given as another folder than the one pytest was started in (node ids then name files
    relative to it, not to the repository)?"""
    given = getattr(ns, "rootdir", None)
    if not given:
        return False
    here = Path(config.invocation_params.dir)
    return (here / os.path.expandvars(str(given))).resolve() != here.resolve()


GATE_OPTIONS_ENV = "TRACKER_GATE_OPTIONS"  # verify: its gates' own options (the plan's), a JSON list of strings


def _declared_options(config: pytest.Config) -> list[str]:
    """The options verify says its gates' definitions carry (``options = [...]`` in the plan: a gate is met with
    them by definition), in verify's own run (``--tracker-gates``) only; [] otherwise or when unreadable."""
    if not config.getoption("tracker_gates", None):
        return []
    try:
        given = json.loads(os.environ.get(GATE_OPTIONS_ENV, "[]"))
    except ValueError:
        return []
    options = [str(x) for x in given] if isinstance(given, list) else []
    # Only what a gate may carry (tracker.base.selection.GATE_OPTIONS): the variable is anyone's to set, and `-W ignore`
    # or `--runxfail` declared there would pass unseen (round 15, A5).
    return options if gate_options_problem(options) is None else []


def _plugin_values(config: pytest.Config, ns: Any) -> list[str]:
    """Every ``-p`` value of this run's own command line and ``PYTEST_ADDOPTS``: as pytest's parser read them, and as
    its early scan reads them (anywhere, after ``--`` too: :func:`tracker.base.selection.plugin_args`)."""
    import shlex

    parsed = [str(p).strip() for p in getattr(ns, "plugins", None) or ()]
    try:
        raw = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]
    except ValueError:
        raw = []
    return list(dict.fromkeys(name for name in (*parsed, *plugin_args(raw)) if name))


def _loaded(config: pytest.Config) -> list[str]:
    """The plugins this run loads by ``-p NAME`` (its command line and ``PYTEST_ADDOPTS``) or ``PYTEST_PLUGINS`` that
    are not :data:`HARMLESS_LOADS`, as written. In verify's own run (``--tracker-gates``) the command line's ``-p``
    are the gates' options, from the plan (verify refuses another as a ``--pytest-arg``): only the environment's
    count."""

    ns = _given(config)
    # verify names the plugins its gates' options load (the plan's options = ["-p", "NAME"]); a run that only
    # says --tracker-gates (a plain run claiming to be verify's, adv round 6) has every -p counted
    declared = set(plugin_names(_declared_options(config)))
    out: list[str] = []
    for name in _plugin_values(config, ns):
        if not name.startswith("no:") and name not in HARMLESS_LOADS and name not in declared:
            out.append(f"-p {name}")
    for name in os.environ.get("PYTEST_PLUGINS", "").split(","):
        if name.strip() and name.strip() not in HARMLESS_LOADS:
            out.append(f"PYTEST_PLUGINS={name.strip()}")
    return out


# What a run's own command line may set without changing any test's outcome, by argparse dest (an allowlist, adv
# round 5: a denylist missed --log-level, --log-disable, -p no:logging, pytest-regressions' --regen-all, ...): how
# much is shown and where (-v, --tb, -r, --junitxml), which tests run (-k, -m, --deselect, -x, --lf: deselections
# are recorded, collection cuts are :func:`narrowing`'s), how they are spread (xdist), where temporary files go,
# what is stricter. Any other option of pytest or of a plugin, given a value other than its default, alters the
# run: its passes meet no gate. ``-o`` and ``-p no:`` are judged by name (:data:`SAFE_INI`, :data:`SAFE_NO_PLUGINS`).
SAFE_DESTS = frozenset(
    {"verbose", "quiet", "color", "code_highlight", "tbstyle", "fulltrace", "showlocals", "showcapture", "reportchars",
     "durations", "durations_min", "no_header", "no_summary", "force_short_summary", "fold_skipped", "xfail_tb",
     "with_test_class_names", "junitprefix", "xmlpath", "report_log", "report_log_exclude_logs_on_passed_tests",
     "pastebin", "disable_warnings", "debug", "traceconfig", "hypothesis_show_statistics", "hypothesis_explain",
     "hypothesis_verbosity", "doctestreport", "file_or_dir", "keyword", "markexpr", "deselect", "ignore",
     "ignore_glob", "lf", "last_failed_no_failures", "maxfail", "keepduplicates", "pyargs", "collect_in_virtualenv",
     "rootdir", "inifilename",
     "confcutdir", "noconftest", "override_ini", "plugins", "cacheclear", "doctestmodules", "doctestglob",
     "doctest_continue_on_failure", "basetemp", "assertmode", "numprocesses", "dist", "maxprocesses",
     "maxschedchunk", "maxworkerrestart", "tx", "px", "rsyncdir", "rsyncignore", "loadscopereorder", "distload",
     "testrunuid", "strict", "strict_config", "strict_markers", "log_file",
     "log_file_mode", "tracker_record", "tracker_file", "tracker_gates", "tracker_select", "tracker_collect",
     "cov", "cov_report", "cov_config", "no_cov", "no_cov_on_fail", "cov_branch", "cov_context",
     "cov_append", "cov_fail_under", "cov_precision", "runpytest", "markers", "version", "help", "showfixtures",
     "show_fixtures_per_test",
     "continue_on_collection_errors", "collectonly"}
)  # fmt: skip
# ``-o NAME`` settings that only say how and where results are shown.
SAFE_INI = frozenset(
    {"cache_dir", "console_output_style", "junit_family", "junit_suite_name", "junit_logging",
     "junit_log_passing_tests", "junit_duration_report", "verbosity_assertions", "verbosity_test_cases",
     "truncation_limit_lines", "truncation_limit_chars", "faulthandler_timeout", "minversion", "required_plugins",
     "log_file", "log_file_mode"}
)  # fmt: skip
# ``-p no:NAME`` plugins whose absence changes no outcome (reporting, caching, coverage; not ordering: adv round 7,
# an order-dependent failure passes in another order, as with --ff, --nf and --sw).
SAFE_NO_PLUGINS = frozenset(
    {"cacheprovider", "faulthandler", "cov", "pastebin", "junitxml",
     "terminal", "reportlog", "tracker"}
)  # fmt: skip
_DEFAULTS = pytest.StashKey[dict[str, Any]]()  # the parser's defaults, by dest, for a config
_SPELLED = {"pythonwarnings": "-W", "override_ini": "-o", "logger_disable": "--log-disable"}


def _defaults(config: pytest.Config) -> dict[str, Any]:
    """Every option's default (pytest's and the plugins' parser, given no argument), parsed once per config."""
    if _DEFAULTS not in config.stash:
        parser = getattr(config, "_parser", None)
        try:
            config.stash[_DEFAULTS] = vars(parser.parse_known_args([])) if parser is not None else {}
        except (ValueError, pytest.UsageError, SystemExit):
            config.stash[_DEFAULTS] = {}
    return config.stash[_DEFAULTS]


def _custom_dests(config: pytest.Config) -> frozenset[str]:
    """The dests of "Custom options": those a ``conftest.py`` adds with ``parser.addoption`` (pytest's own example,
    ``--runslow``). They are the repository's configuration, read and reviewed with its tests; a plugin's options
    live in the plugin's own group and are judged by :data:`SAFE_DESTS`."""
    anonymous = getattr(getattr(config, "_parser", None), "_anonymous", None)
    return frozenset(str(getattr(o, "dest", "")) for o in getattr(anonymous, "options", ()) or ())


def altering(config: pytest.Config) -> list[str]:
    """The options of this run's own command line (its arguments and ``PYTEST_ADDOPTS``) that may turn a failing
    test into a pass (any not in :data:`SAFE_DESTS` given another value than its default: ``-W``, ``--runxfail``,
    ``--log-level``, ``--regen-all``, ...; ``-o`` of a setting outside :data:`SAFE_INI`, ``addopts`` included;
    ``-p no:`` of a plugin outside :data:`SAFE_NO_PLUGINS`), an ini setting of a plugin not loaded (pytest-timeout's
    ``timeout``: not installed, or ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), or node ids made
    relative to another folder (``--rootdir`` elsewhere), as the user wrote them; [] when none."""
    ns = _given(config)
    if ns is None:
        return ["an unreadable command line"]
    out: list[str] = []
    defaults = _defaults(config)
    own = _custom_dests(config)
    declared: dict[str, Any] = {}  # what the gates' own options (the plan's) set: the gate is defined with them
    if options := _declared_options(config):
        parser = getattr(config, "_parser", None)
        try:
            declared = vars(parser.parse_known_args(options)) if parser is not None else {}
        except (ValueError, pytest.UsageError, SystemExit):
            declared = {}
    for dest, value in sorted(vars(ns).items()):
        if dest in declared and declared[dest] == value and value != defaults.get(dest, object()):
            continue
        if dest not in SAFE_DESTS | own and (dest not in defaults or value != defaults[dest]):
            out.append(_SPELLED.get(dest, "--" + dest.replace("_", "-")))
    for item in getattr(ns, "override_ini", None) or ():
        name = str(item).partition("=")[0].strip()
        if name not in SAFE_INI:
            out.append(f"-o {name}")
    for name in _plugin_values(config, ns):
        if name.startswith("no:") and name[3:].removeprefix("pytest_") not in SAFE_NO_PLUGINS:
            out.append(f"-p {name}")
    unknown: list[str] = getattr(config, "_get_unknown_ini_keys", lambda: [])()  # pytest's own list (--strict-config)
    if unknown:  # a plugin's setting (timeout = 1) that no loaded plugin applies: not installed, or not autoloaded
        out.append("ini settings no loaded plugin reads (" + ", ".join(sorted(map(str, unknown))[:5]) + ")")
    if _other_rootdir(config, ns):
        out.append("--rootdir")
    # Another ini file, or conftest.py files left unloaded, drop the repository's own filterwarnings, xfail_strict
    # and autouse fixtures as well as tests: their passes are not the repository's (adversarial review G1).
    out += [flag for dest, flag in NARROWING_OPTIONS if dest in CONFIG_DESTS and getattr(ns, dest, None)]
    out += _loaded(config)  # a plugin loaded by name may change an outcome as well as drop a test
    if sys.flags.optimize:  # python -O / PYTHONOPTIMIZE strips every assert outside pytest's rewritten test modules
        out.append("python -O (asserts stripped)")
    return list(dict.fromkeys(out))


def narrowing(config: pytest.Config) -> list[str]:
    """The options of this run's own command line (its arguments and ``PYTEST_ADDOPTS``; the repository's ini
    ``addopts`` define every run alike) that may have kept tests under its arguments from being collected, as the
    user wrote them (``--ignore``, ``-o python_functions``, ``-p no:doctest``, ``-c``, ``--lf``, ...); [] when
    none. -k, -m and --deselect only deselect: the evidence lists those tests, so they are not here. A plugin
    loaded by name that is not known harmless (:func:`_loaded`), and ``--rootdir`` elsewhere, narrow too."""
    ns = _given(config)
    if ns is None:
        return ["an unreadable command line"]
    out = [flag for dest, flag in NARROWING_OPTIONS if getattr(ns, dest, None)]
    for item in getattr(ns, "override_ini", None) or ():
        name = str(item).partition("=")[0].strip()
        if name not in HARMLESS_INI | ALTERING_INI and not name.startswith(HARMLESS_INI_PREFIXES):
            out.append(f"-o {name}")
    for plugin in getattr(ns, "plugins", None) or ():
        name = str(plugin).strip()
        bare = name[3:].removeprefix("pytest_")
        if (
            name.startswith("no:")
            and name[3:] not in HARMLESS_PLUGINS
            and bare not in HARMLESS_PLUGINS | ALTERING_PLUGINS
        ):
            out.append(f"-p {name}")
    out += _loaded(config)
    if _other_rootdir(config, ns):
        out.append("--rootdir")
    if config.getoption("lf", None):  # wherever it came from: which files it collects depends on the cache
        out.append("--lf")
    if _store_elsewhere(config) and "--rootdir" not in out:
        out.append("a rootdir that is not the store's repository")
    return list(dict.fromkeys(out))


def _store_elsewhere(config: pytest.Config) -> bool:
    """Does ``--tracker-record=DIR`` name the store (``.tracker/evidence``) of another folder than pytest's rootdir
    (pytest started in ``tests/`` with no ini file: its node ids and file ids are relative to ``tests/``, and its
    arguments, ``[""]``, would read as all of the repository's tree)? adv round 4."""
    given = config.getoption("tracker_record", None)
    if not given:
        return False
    store = Path(str(given)).resolve()
    if store.name != "evidence" or store.parent.name != ".tracker":
        return False  # recorded elsewhere (another machine's folder, to ingest): ingest judges it
    return store.parent.parent != Path(str(config.rootpath)).resolve()


OWN_PLUGINS = ("tracker.pytest_plugin", "tracker.pytest_argcheck")  # what verify loads itself: not the tests' options


def collection_options(config: pytest.Config) -> list[str]:
    """The options in effect for this run (its command line, ``PYTEST_ADDOPTS`` and the ini ``addopts`` alike) that a
    test gate may carry (``options``: :data:`tracker.base.selection.GATE_OPTIONS`), spelled as one string each
    (``--doctest-modules``, ``--doctest-glob=*.rst``, ``--import-mode=importlib``, ``-p NAME``; pytest's default
    import mode, ``prepend``, left out): only a run that had a gate's options says which tests it has."""
    out = ["--doctest-modules"] if config.getoption("doctestmodules", False) else []
    out += [f"--doctest-glob={glob}" for glob in config.getoption("doctestglob", None) or ()]
    mode = str(config.getoption("importmode", None) or "prepend")
    out += [] if mode == "prepend" else [f"--import-mode={mode}"]
    plugins = (str(p).strip() for p in config.getoption("plugins", None) or ())
    out += [f"-p {name}" for name in plugins if not name.startswith("no:") and name not in OWN_PLUGINS]
    return list(dict.fromkeys(out))


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


def imported_modules() -> dict[str, str]:
    """{module name: its ``.py`` file} of every module imported in this process."""
    out: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            out[name] = file
    return out


def shadowed_modules(
    root: Path,
    files: dict[str, str],
    modules: dict[str, str],
    installed: dict[str, tuple[str, str]] | None = None,
    real_path: Callable[[str], str] = os.path.realpath,
) -> str | None:
    """The repository's own modules the tests imported (``modules``: :func:`imported_modules` of every process that
    ran tests) from a copy elsewhere whose source is not the tree's (a stale ``pip install .``, a ``.pth`` to another
    checkout: round 16, F5), as ``altered`` names them, or None. A module is the repository's when its dotted name is
    a file of the tree (``NAME.py`` or ``NAME/__init__.py``, at the root or under ``src/``), or when a distribution
    of the repository installed it (``installed``, default :func:`tracker.base.installed.installed_copies`: any layout,
    ``python/NAME``, ``lib/``, a ``package_dir`` remap; round 17, A1), a copy then of any tree file its installed
    path ends (``python/calc/core.py`` for ``calc/core.py``). A copy with the same bytes as one of those ran the same
    code. A subprocess's imports and compiled extensions are not seen (issue 24's note)."""

    base = os.path.realpath(root) + os.sep
    found: list[str] = []
    tails: dict[str, list[str]] | None = None
    for name, file in modules.items():
        real = real_path(file)
        if real.startswith(base):
            continue
        stem = name.replace(".", "/")
        leaf = "/__init__.py" if os.path.basename(file) == "__init__.py" else ".py"
        mine = [rel for rel in (f"{stem}{leaf}", f"src/{stem}{leaf}") if rel in files]
        if not mine:
            if installed is None:
                installed = installed_copies(root, candidates=project_files(files))
            if real not in installed:
                continue
            if tails is None:
                tails = by_tail(files)
            mine = _sources(tails.get(installed[real][0], []), installed[real][1])
            if not mine:
                continue  # no file of the tree: generated at build (setuptools-scm's _version.py)
        same = False
        with contextlib.suppress(OSError):
            ran = Path(file).read_bytes()
            same = any(ran == _bytes(root / rel) for rel in mine)
        if not same:
            found.append(f"{name} from {file}")
    if not found:
        return None
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return f"the repository's modules imported from copies that differ from the tree ({', '.join(found[:3])}{more})"


def hidden_tracker() -> str | None:
    """Why the tests could not import a ``tracker`` their path holds, or None: this plugin's own package is loaded
    under that name, and ``sys.path`` as the session left it (the ini's ``pythonpath``, a conftest's edits) finds
    another, which a ``python -m pytest`` without the tracker imports (round 23, third helper, F4: a broken
    ``tracker`` package of the tests' own passed, forked or not)."""
    import importlib.machinery

    loaded = sys.modules.get("tracker")
    try:
        found = importlib.machinery.PathFinder.find_spec("tracker", sys.path)
    except (ImportError, ValueError):
        return None
    if found is None or loaded is None:
        return None
    where = {os.path.realpath(p) for p in (found.submodule_search_locations or [found.origin or ""])}
    have = {os.path.realpath(p) for p in (getattr(loaded, "__path__", None) or [getattr(loaded, "__file__", "")])}
    if where == have or all((p + os.sep).startswith(library_dirs()) for p in where):
        return None  # the same, or an installed library (the tracker installed, run from a checkout): not the tests'
    return f"the tests' own tracker package ({', '.join(sorted(where))}) hidden by the tracker's"


MAX_IGNORED = 1000  # modules git ignores a run records at most (more makes its passes count for nothing)


def _prefixes_below(base: str) -> tuple[str, ...]:
    """Python's prefixes (``sys.prefix``, ``base_prefix``, ``exec_prefix``) strictly inside the folder ``base`` (a
    realpath ending in a separator): a virtual environment or conda prefix in a subfolder. One at the repository's
    root itself (``python -m venv .``) would exempt every module of the tree: its libraries are told apart by their
    ``site-packages`` folder instead (round 18, F2b)."""
    reals = (os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    return tuple(dict.fromkeys(p for p in reals if p.startswith(base) and p != base))


def library_dirs() -> tuple[str, ...]:
    """The folders the running Python installs libraries into, as realpaths ending in a separator: the
    ``site-packages`` (Debian: ``dist-packages``) of its prefixes, a virtual environment's at the repository's root
    included, and the user's. A folder of the repository merely named ``site-packages`` is none of them (round 19,
    W3: that name alone exempted a module git ignores from being hashed)."""
    import site

    dirs: list[str] = []
    with contextlib.suppress(AttributeError):  # virtualenv < 20's site.py has neither
        dirs += site.getsitepackages([sys.prefix, sys.exec_prefix, sys.base_prefix])
        if site.ENABLE_USER_SITE:  # off in a virtual environment: a PYTHONUSERBASE in the repository is no library
            dirs.append(site.getusersitepackages())
    return tuple(dict.fromkeys(os.path.realpath(d) + os.sep for d in dirs))


def linked_out_modules(
    root: Path,
    modules: dict[str, str],
    outside: dict[str, str] | None = None,
    real_path: Callable[[str], str] = os.path.realpath,
) -> str | None:
    """The modules the tests imported by a path inside the repository that a link leads out of it (a tracked
    ``calc/settings.py -> /elsewhere/settings.py``: the tree's id is the link's text, so no edit of what it leads to
    is ever seen, and a clone runs whatever its machine has there), as ``altered`` names them, or None. Python's own
    prefixes and site folders (:func:`library_dirs`) are libraries, wherever their links lead (round 18, F2b). Test
    files and
    ``conftest.py`` files that ``outside`` (``provenance.outside``) names already meet no gate, with their own
    reason."""
    base = os.path.realpath(root) + os.sep
    prefixes = (os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    libraries = tuple(dict.fromkeys([*(p for p in prefixes if p != base), *library_dirs()]))
    found = []
    bases = _bases(root)
    for name, file in modules.items():
        if not _under(file, root, bases):
            continue
        real = real_path(file)
        if real.startswith(base) or real.startswith(libraries) or os.path.abspath(file).startswith(libraries):
            continue
        rel = Path(os.path.relpath(os.path.abspath(file), os.path.abspath(root))).as_posix()
        if outside and (rel in outside or os.path.basename(rel) == "conftest.py"):
            continue
        found.append(f"{name} -> {real}")
    if not found:
        return None
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return f"modules imported through links out of the repository ({', '.join(sorted(found)[:3])}{more})"


def ignored_modules(
    root: Path, files: dict[str, str], modules: dict[str, str], real_path: Callable[[str], str] = os.path.realpath
) -> dict[str, str]:
    """{path: id} of the modules the tests imported (``modules``: :func:`imported_modules` of every process that
    ran tests) from the tree that no id of the tree names (``files``: git ignores them, a generated ``_version.py``,
    a build's output) and that are not installed libraries: none under Python's prefixes (a virtual environment or
    conda prefix inside the repository) or in a folder of ``sys.path`` whose distributions' ``RECORD`` lists it
    (``pip install --target lib``). Round 17, F2: an edit to one changes what the tests ran, so status hashes them."""

    real_root = os.path.realpath(root)
    base = real_root + os.sep
    prefixes = (*_prefixes_below(base), *library_dirs())
    installed: set[str] | None = None
    out: dict[str, str] = {}
    for file in modules.values():
        real = real_path(file)
        if not real.startswith(base) or real.startswith(prefixes):
            continue
        rel = Path(os.path.relpath(real, real_root)).as_posix()
        if rel in files:
            continue
        if installed is None:
            installed = recorded_files(p for p in sys.path if os.path.realpath(p or ".").startswith(base))
        if real in installed:
            continue
        blob = id_now(Path(real_root), rel)
        if blob is not None:
            out[rel] = blob
    return dict(sorted(out.items()))


def _sources(candidates: list[str], scope: str) -> list[str]:
    """Of the tree's files whose path ends as an installed module's (``candidates``), those its project's folder
    (``scope``) holds, the shallowest: ``python/calc/core.py``, not a snapshot ``benchmarks/v0_1/calc/core.py``
    whose bytes a stale install may share (round 19, L3)."""
    inside = [c for c in candidates if not scope or c.startswith(scope + "/")]
    if not inside:
        return []
    depth = min(c.count("/") for c in inside)
    return [c for c in inside if c.count("/") == depth]


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _bases(root: Path) -> tuple[str, ...]:
    """``root`` as given and resolved, each absolute and normalized (for :func:`_under`)."""
    return tuple(dict.fromkeys((os.path.abspath(root), str(root.resolve()))))


def _under(file: str, root: Path, bases: tuple[str, ...] | None = None) -> bool:
    """Is ``file``, as named (its links not followed), under ``root`` (as given or resolved: :func:`_bases`, when the
    caller has them)? Compared as strings: pathlib's ``is_relative_to`` cost ~10 ms over a session's modules."""
    named = os.path.abspath(file)
    return any(named == base or named.startswith(base.rstrip(os.sep) + os.sep) for base in bases or _bases(root))


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


def ini_file(config: pytest.Config, root: Path) -> str | None:
    """The ini file pytest read (``config.inipath``) relative to ``root``; None when it read none, or one outside
    ``root``."""
    path = getattr(config, "inipath", None)
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def collected_args(config: pytest.Config, root: Path, narrowed: list[str] | None = None) -> list[str] | None:
    """The session's pytest arguments as rootdir-relative node ids ("" for the rootdir itself), or
    None when an option may have kept tests under them from being collected (not merely deselected: ``narrowed``,
    :func:`narrowing`) or they name modules (``--pyargs``)."""
    if narrowing(config) if narrowed is None else narrowed:
        return None
    if config.getoption("pyargs", None):
        return None
    out: list[str] = []
    here = Path(config.invocation_params.dir)
    bases = (root.absolute(), root.resolve())
    for arg in config.args:
        path, sep, rest = str(arg).partition("::")
        # The path as given, its last part not followed: a test file that is a link inside the repository
        # (tests/test_alias.py -> real.py) names the gate's own path, as pytest's node ids do.
        given = {Path(os.path.normpath(here / path)), Path(os.path.normpath(here.resolve() / path))}
        rel = next((str(p.relative_to(b).as_posix()) for p in given for b in bases if p.is_relative_to(b)), None)
        if rel is None:
            continue  # outside the rootdir: its node ids are not comparable
        rel = "" if rel == "." else rel
        out.append(rel + sep + rest)
    return out


def _short(text: str, limit: int = 200) -> str:
    line = next((s.strip() for s in text.strip().splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """A one-line reason: the skip message, or the failure's crash line."""
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:  # skips are (file, line, "Skipped: why")
        return _short(str(lr[2]).removeprefix("Skipped: "))
    if isinstance(report, pytest.CollectReport):  # import errors: the last "E   ..." line says what broke
        errors = [line[1:].strip() for line in (report.longreprtext or "").splitlines() if line.startswith("E ")]
        if errors:
            return _short(errors[-1])
    crash = getattr(lr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _short(crash.message)
    return _short(report.longreprtext or "")


def write_json_atomic(path: Path, data: dict[str, Any], durable: bool = True) -> None:
    """Write JSON through a temp file + os.replace (fsynced when ``durable``): readers never see half a file."""
    _write_atomic(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", durable=durable)


def _replace(path: Path, text: str) -> None:
    """Atomic rewrite without fsync (cheap enough before every test)."""
    _write_atomic(path, text, durable=False)


def _write_atomic(path: Path, text: str, durable: bool) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`tracker.base.contract.atomic_write`; a new file gets
    ``0o666`` less the umask, like every other file in the tree).

    A file name that is not UTF-8 reaches us as lone surrogates (git's bytes, decoded with surrogateescape);
    they only occur inside JSON strings, where backslashreplace writes them as the JSON escape \\udcXX, which
    reads back as the same string.
    """
    atomic_write(path, text.encode("utf-8", "backslashreplace"), durable=durable, keep_mode=False)


class Recorder:
    """Collects outcomes during the session and writes the evidence file. Only the process that configured it
    writes (:meth:`_mine`): a test that forks and whose child goes on with the session (no ``os._exit``) must not
    have that copy's later outcomes replace the file the session's own process wrote."""

    def __init__(self, config: pytest.Config) -> None:
        self.pid = os.getpid()
        self.config = config
        self.root = Path(str(config.rootpath))
        given = config.getoption("tracker_record")
        where = given or str(self.root / ".tracker" / "evidence")
        if given and Path(given).exists() and not Path(given).is_dir():
            # `pytest --tracker-record tests/test_x.py`: the option's optional folder took the test path.
            raise pytest.UsageError(
                f"--tracker-record: {given!r} is a file, not a folder for the evidence: put --tracker-record after "
                "the test paths, or name the folder with --tracker-record=DIR"
            )
        self.path = Path(where) / (config.getoption("tracker_file") or evidence_name("pytest"))
        if not given:  # the store linked out of the repository: every reader would refuse what is written there
            try:
                check_inside(self.root, self.path.parent)
            except OSError as err:
                raise pytest.UsageError(f"--tracker-record: {self.path.parent}: {err.strerror or err}") from None
        gates_file = config.getoption("tracker_gates")
        self.gates: dict[str, str] = json.loads(Path(gates_file).read_text()) if gates_file else {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.subtests: dict[str, Subtests] = {}  # what the subtests of each test that has any said
        self._deselected: set[int] = set()  # id() of the items pytest_deselected was told of
        self.interrupted = False
        self.collect_errors = False
        self.started_tests = False
        self._order = 0  # the next test's place in the order the tests ran in (a record's ``order``)
        self.collection_stop = False  # pytest stopped after collection errors, before any test
        self.data: dict[str, Any] = {}
        self.stats: dict[str, tuple[int, int]] = {}  # (inode, ctime) of the tree's files at the session's start
        self._head = (
            ""  # the incomplete file's JSON without its closing brace (written when the running test's file changes)
        )
        self._running_where: str | None = None  # what the evidence file names as running: a test, or its file
        self._tail: _Tail | None = None  # the incomplete evidence file's ``running`` part, rewritten in place
        self._last_file: str | None = None  # the file of the test run last
        self._pid_start: str | None = None  # this process's identity (contract.process_identity; "" where unknown)
        self.slot = _RunningSlot(running_file(self.path))
        self.xdist = False  # set when an xdist worker reports its collection: this process is xdist's controller
        self.worker_notes: list[dict[str, Any]] = []  # what the xdist workers sent (WorkerNotes)
        refused = xdist_refusal(config)
        if refused:
            raise pytest.UsageError(f"--tracker-record: {refused}")
        try:  # asked here, at configure time, so that a bad TRACKER_COMMIT/TRACKER_DIRTY stops pytest before any test
            early = _BEFORE_CONFTESTS.get(str(self.root))  # the reading taken before any conftest.py ran
            self.commit_state = commit_state(self.root, early[2] if early is not None else None)
        except ValueError as err:
            raise pytest.UsageError(f"--tracker-record: {err}") from None

    def _mine(self) -> bool:
        """Is this the process that configured the recorder (not a test's forked child going on with the session)?"""
        return os.getpid() == self.pid

    def _record(self, nodeid: str, markers: list[str] | None = None) -> dict[str, Any]:
        rec = self.tests.get(nodeid)
        if rec is None:
            rec = self.tests[nodeid] = {
                "nodeid": nodeid,
                "outcome": "notrun",
                "reason": "",
                "duration": 0.0,
                "markers": markers or [],
            }
        return rec

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = time.monotonic()
        narrowed = narrowing(self.config)
        early = _BEFORE_CONFTESTS.pop(str(self.root), None)  # read before any conftest.py ran, where the hook ran
        files = early[0] if early is not None else tree_file_ids(self.root)
        self.stats = early[1] if early is not None else file_stats(self.root, files)
        altered = altering(self.config) + unrecorded_configuration(self.config, self.root, files)
        self.data = {
            "schema": SCHEMA,
            "version": VERSION,
            "status": "incomplete",
            "provenance": {
                **provenance(self.root, self.commit_state),
                "args": collected_args(self.config, self.root, narrowed),
                "cwd": invocation_dir(self.config, self.root),
                **({"narrowed": ", ".join(narrowed)} if narrowed else {}),
                **({"altered": ", ".join(altered)} if altered else {}),
                "inifile": ini_file(self.config, self.root),
                **({"options": options} if (options := collection_options(self.config)) else {}),
                # the gates' options verify declared (their -p plugins were not counted as loads): round 14, A5b
                **({"declared_options": declared} if (declared := _declared_options(self.config)) else {}),
            },
            "rootdir": self.root.name,
            "gates": self.gates,
            "files": files,
            "tests": [],
        }
        # No fsync (1-4 ms of wall): until it names a running test this file counts for nothing, and the rewrites
        # that name one are not fsynced either (only the process dies); the last write is.
        write_json_atomic(self.path, self.data, durable=False)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors = True
            rec = self._record(report.nodeid or ".")
            rec.update(outcome="error", reason="collection error: " + _reason(report))
        elif report.skipped and report.nodeid:  # skipped at collection (importorskip, allow_module_level): the
            # tests it holds are unknown here, and the tracker keeps those other runs recorded (tracker.core.testgate)
            self._record(report.nodeid).update(outcome="skipped", reason=_reason(report))

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        for item in items:
            self._deselected.add(id(item))
            self._record(item.nodeid, _markers(item))["outcome"] = "deselected"

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
            self._record(item.nodeid, _markers(item))
        self._note_outside([item.nodeid for item in session.items])

    def _note_outside(self, nodeids: list[str]) -> None:
        outside = outside_files(self.root, nodeids)
        if outside and self.data:  # before any test runs: the rewrites that name the running test hold it too
            self.data["provenance"].setdefault("outside", {}).update(outside)
        files = self.data.get("files") if self.data else None
        if files:  # a test file git ignores has no id: an edit to it would never make its gate stale (round 15, A7)
            hidden = [
                f
                for f in dict.fromkeys(_file_of(n) for n in nodeids)
                if f not in files and f not in outside and (self.root / f).is_file()
            ]
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
            self._record(nodeid)
        self._note_outside(list(ids))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """Under xdist, the controller: a worker ended; one that finished sent its :class:`WorkerNotes`."""
        notes = (getattr(node, "workeroutput", None) or {}).get("tracker")
        if isinstance(notes, dict):
            self.worker_notes.append(notes)

    def _apply_worker_notes(self) -> bool:
        """Give the tests the markers, and the deselected tests the records, that the workers' notes hold, as a
        serial run's collection gives them. False when no worker sent its notes (none finished)."""
        dropped = [n.get("dropped") for n in self.worker_notes]
        self._note_dropped(max((d for d in dropped if isinstance(d, int)), default=0))
        for notes in self.worker_notes:
            for nodeid, markers in notes.get("markers", {}).items():
                if nodeid in self.tests:
                    self.tests[nodeid]["markers"] = markers
            for nodeid, markers in notes.get("deselected", {}).items():
                self._record(nodeid, markers).update(outcome="deselected", markers=markers)
        return bool(self.worker_notes)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Name the test about to run, so that a run it kills (a segfault, ``os._exit``, SIGKILL) says which test
        crashed. The running slot beside the evidence file names the test itself, rewritten in place
        (:class:`_RunningSlot`); the incomplete evidence file names the test too when it is the only one of its
        file that runs here (between tests of other files), else its file, and is rewritten only when that
        changes: rewriting it before every test cost ~0.2 ms a test (it holds every file id and gate). Whoever
        reads only the evidence file counts a crash as an error of every test in that file. No fsync: only the
        process dies."""
        self.started_tests = True
        if not self.data or not self._mine():
            return
        markers = self._record(item.nodeid)["markers"]
        file = _file_of(item.nodeid)
        alone = file != self._last_file and (nextitem is None or _file_of(nextitem.nodeid) != file)
        self._last_file = file
        where = item.nodeid if alone else file
        if where != self._running_where:
            if not self._head:
                self._head = (
                    json.dumps(self.data, indent=1, sort_keys=True, ensure_ascii=False).removesuffix("}").rstrip()
                )
            running = {"nodeid": where, "markers": markers if where == item.nodeid else [], "pid": os.getpid()}
            if self._pid_start is None:  # read once (~60 us): a recycled pid is another process
                self._pid_start = process_identity(os.getpid()) or ""
            if self._pid_start:
                running["pid_start"] = self._pid_start
            tail = f',\n "running": {json.dumps(running, ensure_ascii=False)}\n}}\n'
            if self._tail is None or not self._tail.write(tail):
                self._tail = _Tail.start(self.path, self._head, tail)
            self._running_where = where
        self.slot.name(item.nodeid, markers)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        yield
        if not self._mine():
            return
        if self._tail is not None:
            self._tail.close()
            self._tail = None
        if self._head:  # every test finished: a crash from here on names no test
            _replace(self.path, self._head + "\n}\n")
            self._running_where = None
        self.slot.remove()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if type(report).__name__ in SUBTEST_REPORTS:  # its test's own reports come apart: tracker.base.subtests
            self._subtest(report)
            return
        self.started_tests = True  # under xdist (the controller runs no test protocol of its own)
        rec = self._record(report.nodeid)
        if "order" not in rec:  # its first report: the order tests ran in, per xdist worker (tracker.core.testgate)
            rec["order"], self._order = self._order, self._order + 1
            worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
            if isinstance(worker, str):
                rec["worker"] = worker
        rec["duration"] = round(rec["duration"] + report.duration, 6)
        if rec["outcome"] in FAILING and not report.failed:  # a failing report fails the test whatever comes after
            return
        xfail = hasattr(report, "wasxfail")
        if report.when not in ("setup", "call", "teardown"):  # xdist's report of a test whose worker died ("???")
            said = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]  # xdist's one line
            rec.update(outcome="error", reason="crashed: " + _short(said[-1] if said else "its worker died"))
        elif report.when == "setup":
            if report.failed:
                rec.update(outcome="error", reason="setup error: " + _reason(report))
            elif report.skipped:
                rec.update(
                    outcome="xfailed" if xfail else "skipped", reason=_reason(report) if not xfail else report.wasxfail
                )
        elif report.when == "call":
            if report.passed:
                rec.update(outcome="xpassed" if xfail else "passed", reason="")
            elif report.failed:
                rec.update(outcome="failed", reason=_reason(report))
            else:
                rec.update(
                    outcome="xfailed" if xfail else "skipped", reason=report.wasxfail if xfail else _reason(report)
                )
        elif report.failed:  # teardown error: whatever happened before, the test did not pass cleanly
            rec.update(outcome="error", reason="teardown error: " + _reason(report))

    def _subtest(self, report: pytest.TestReport) -> None:
        """A subtest's report (unittest's ``subTest``, the ``subtests`` fixture): kept apart from its test's own, whose
        "passed" comes after it, until the session's end (:meth:`tracker.base.subtests.Subtests.verdict`). Its duration
        is part of its test's call's."""
        self._record(report.nodeid)
        if report.passed:
            return
        xfail = hasattr(report, "wasxfail")
        outcome = "failed" if report.failed else "xfailed" if xfail else "skipped"
        reason = str(report.wasxfail or _reason(report)) if xfail else _reason(report)
        context = getattr(report, "context", None)
        name = subtest_name(getattr(context, "msg", None), getattr(context, "kwargs", None))
        self.subtests.setdefault(report.nodeid, Subtests()).add(outcome, name, reason)

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
        for nodeid, subtests in self.subtests.items():  # a failed subtest fails its test: tracker.base.subtests
            rec = self._record(nodeid)
            rec["outcome"], rec["reason"] = subtests.verdict(rec["outcome"], rec["reason"])
        torch = sys.modules.get("torch")  # only if the tests imported it: never import torch here
        if torch is not None:
            try:
                self.data["provenance"]["cuda"] = bool(torch.cuda.is_available())
                if self.data["provenance"]["cuda"]:  # the machine's GPU: a host name alone may not tell machines apart
                    self.data["provenance"]["gpu"] = str(torch.cuda.get_device_name(0))[:80]
            except Exception:  # a broken CUDA setup is "not available", not a recorder crash
                self.data["provenance"]["cuda"] = False
        changed = self._changed_while_running()
        modules = imported_modules()
        for notes in self.worker_notes:  # under xdist the tests ran in the workers
            theirs = notes.get("modules")
            if isinstance(theirs, dict):
                modules.update({k: v for k, v in theirs.items() if isinstance(k, str) and isinstance(v, str)})
        files = self.data.get("files") or {}
        real_path = RealPaths()
        for why in (
            changed,
            shadowed_modules(self.root, files, modules, real_path=real_path),
            linked_out_modules(self.root, modules, self.data["provenance"].get("outside"), real_path),
            hidden_tracker(),
        ):
            if why:  # what ran was not the code the file ids name
                self._alter(why)
        ignored = ignored_modules(self.root, files, modules, real_path)
        if len(ignored) > MAX_IGNORED:
            self._alter(f"more than {MAX_IGNORED} modules git ignores imported from the tree")
        elif ignored:  # no id of the tree names them: status hashes them to tell an edit (round 17, F2)
            self.data["provenance"]["ignored_modules"] = ignored
        self.data.update(
            status="interrupted" if broken else "complete",
            exitstatus=int(exitstatus),
            duration=round(time.monotonic() - self.started, 3),
            tests=sorted(self.tests.values(), key=lambda r: r["nodeid"]),
        )
        write_json_atomic(self.path, self.data)

    def _changed_while_running(self) -> str | None:
        """The files of the tree that changed or went while the session ran (their ids are read again at its end,
        ~10 ms), or None: an edit saved mid-run ran code the file ids do not name (adversarial round 12). One edited
        and put back before the end has its content id, not its inode change time (round 13, C1: ``st_ctime_ns``,
        which no ``touch`` sets back). New files are left out: tests may write their own outputs into the tree."""
        before: dict[str, str] = self.data.get("files") or {}
        try:
            after = tree_file_ids(self.root)
        except Exception:  # the tree cannot be read again: what ran is unknown
            return "files changed while it ran: the tree could not be read at its end"
        now = file_stats(self.root, before)
        changed = sorted(p for p, blob in before.items() if after.get(p) != blob or now.get(p) != self.stats.get(p))
        if not changed:
            return None
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return f"files changed while it ran: {', '.join(changed[:3])}{more}"

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._mine():
            self.slot.remove()  # a session that ended before its test loop's end (a usage error) leaves none either

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        # --tracker-file is verify's: verify names the file itself after its verdicts (saying it here too doubled it)
        if self.data and not self.config.getoption("tracker_file"):
            terminalreporter.write_line(f"tracker: evidence {self.data['status']}: {self.path}")


def xdist_refusal(config: pytest.Config) -> str | None:
    """Why a recorded run cannot take these pytest-xdist options, or None: ``--dist each`` runs every test once on
    each worker, which one record per test cannot hold; a ``--tx``/``--px`` gateway other than ``popen`` of this
    interpreter (:func:`_here`) runs tests elsewhere than the machine, interpreter and tree the record names. Asked
    by the recorder and by verify's argument check (:mod:`tracker.pytest_argcheck`: whether or not a test runs)."""
    if config.getoption("dist", None) == "each":  # pytest-xdist's options; None without it
        return (
            "pytest-xdist's --dist each runs every test once on each worker, which one record per test cannot hold: "
            "use --dist load, loadfile, loadscope, loadgroup or worksteal"
        )
    tx = [] if config.getoption("numprocesses", None) else config.getoption("tx", None) or []  # -n N: N*popen
    gateways = [*tx, *(config.getoption("px", None) or ())]
    elsewhere = [spec for spec in gateways if not _here(spec)]
    if elsewhere:
        return (
            f"pytest-xdist's --tx {elsewhere[0]} starts workers elsewhere than this machine, interpreter and tree, "
            "which the record names: use -n N"
        )
    return None


def _here(spec: str) -> bool:
    """Is xdist's gateway ``spec`` a worker process of this interpreter in this directory (``popen``, ``2*popen``: what
    ``-n N`` starts), not one on another machine (``ssh=``, ``socket=``), interpreter (``//python=``) or tree
    (``//chdir=``)?"""
    count, _, rest = spec.partition("*")
    parts = (rest if rest and count.isdigit() else spec).split("//")
    return "popen" in parts and all(part == "popen" or part.startswith("id=") for part in parts)


# The class names of a subtest's report: pytest 9's own, and pytest-subtests' (before pytest 9).
SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")


def _dropped(before: list[pytest.Item], after: list[pytest.Item], deselected: set[int]) -> int:
    """How many of the items ``before`` the collection hooks ran are gone from ``after`` without having been
    deselected (``pytest_deselected``): dropped silently."""
    kept = {id(i) for i in after}
    return sum(1 for i in before if id(i) not in kept and id(i) not in deselected)


def _file_of(nodeid: str) -> str:
    """The file part of a node id (what pytest reports a file it could not collect as)."""
    return nodeid.split("::", 1)[0]


class _Tail:
    """The incomplete evidence file's ``running`` part, rewritten in place: the file is written whole once (the
    run's provenance, file ids and gates, then ``running``, then spaces, which JSON reads as nothing), and each
    test file after names itself with one ``pwrite`` of that part (~2 us) where a whole rewrite cost ~0.5 ms (it
    holds every file id and gate: ~100 KB at 1,000 gates). A longer part than the room left, or a failed write,
    rewrites the file whole again. Readers judge the file only once the run's process is gone."""

    ROOM = 1024  # spaces after the first ``running`` part, for longer ones

    def __init__(self, fd: int, offset: int, room: int) -> None:
        self.fd, self.offset, self.room = fd, offset, room

    @classmethod
    def start(cls, path: Path, head: str, tail: str) -> _Tail | None:
        """Write the file whole (atomically); the tail to rewrite, or None where the file cannot be opened."""
        data = tail.encode("utf-8", "backslashreplace")
        room = len(data) + cls.ROOM
        _replace(path, head + tail + " " * cls.ROOM)
        flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return None
        return cls(fd, len(head.encode("utf-8", "backslashreplace")), room)

    def write(self, tail: str) -> bool:
        """Rewrite the tail in place; False when it does not fit or the write failed (the caller starts anew)."""
        data = tail.encode("utf-8", "backslashreplace")
        if len(data) > self.room:
            self.close()
            return False
        try:
            if os.pwrite(self.fd, data.ljust(self.room), self.offset) == self.room:
                return True
        except OSError:
            pass
        self.close()
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class _RunningSlot:
    """The running slot (:func:`tracker.base.contract.running_file`): the test being run as one JSON record, rewritten
    in place with one ``pwrite`` (~3 µs), padded with spaces to the longest record so far so that nothing of an
    earlier one is left. Readers read it only once the run's process is gone, when nothing writes it any more.

    Should a write fail (a full disk), the slot is emptied and removed and no more are written: readers then go
    by the evidence file's ``running``, the test file, so a crash still counts, against that file's tests. The
    slot is created new (``O_EXCL``: never through a link planted there), ``0o666`` less the umask.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.size = 0  # the longest record written: each write covers it
        self.failed = False

    def name(self, nodeid: str, markers: list[str]) -> None:
        """Say that ``nodeid`` runs now."""
        if self.failed:
            return
        record = json.dumps({"nodeid": nodeid, "markers": markers, "pid": os.getpid()}, ensure_ascii=False)
        data = record.encode("utf-8", "backslashreplace").ljust(self.size)
        try:
            if self.fd is None:
                self.fd = self._create()
            if os.pwrite(self.fd, data, 0) != len(data):
                raise OSError("short write")
        except OSError:
            self.failed = True
            self.remove()
            return
        self.size = len(data)

    def _create(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(self.path, flags, 0o666)
        except FileExistsError:  # left by a run of the same --tracker-file name
            os.unlink(self.path)
            return os.open(self.path, flags, 0o666)

    def remove(self) -> None:
        """Empty, close and remove the slot (nothing when there is none)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)  # should the unlink fail, what is left names no test
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)
