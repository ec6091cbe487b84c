"""What a run's options do to its record (part of :mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`): the
options that may have kept tests from being collected (:func:`narrowing`), that may turn a failing test into a pass
(:func:`altering`), that a test gate may carry (:func:`collection_options`), the run's arguments as node ids
(:func:`collected_args`), and the pytest-xdist options a recorded run refuses (:func:`xdist_refusal`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tracker.base.selection import gate_options_problem, plugin_args, plugin_names

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
