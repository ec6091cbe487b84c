"""A pytest plugin that checks ``tracker verify --pytest-arg`` values the way the real run will read them, then
stops before anything runs.

``tracker verify`` loads it (``-p tracker.pytest_argcheck``, with ``TRACKER_ARGCHECK`` naming a file to answer
in) in a pytest process given the same arguments, root directory and test paths as the run it is about to
start. pytest parses them with its own parser after loading the same plugins and initial ``conftest.py`` files
(options they add are known); an argument it refuses ends that process with its usage error before this hook.
The hook then checks what pytest would only find later (an expression for ``-k``/``-m`` that does not parse, a
file or directory that does not exist) or what makes pytest not run tests (``--collect-only``, ``--help``, ...),
writes the problems to the answer file and returns before pytest configures or collects anything. With
``TRACKER_ARGCHECK_THEN=run`` (verify's own run: no second pytest start) it lets a session whose arguments are
fine go on, and stops one whose arguments are not with pytest's usage error (exit 4) before any test runs.

Standard library, pytest and :mod:`tracker.plugin.options` only. Without ``TRACKER_ARGCHECK`` it does nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tracker.plugin.options import altering, xdist_refusal

# Options after which pytest does something other than run the tests: verify would record no run.
NOT_A_RUN = (
    ("help", "--help"),
    ("version", "--version"),
    ("collectonly", "--collect-only"),
    ("showfixtures", "--fixtures"),
    ("show_fixtures_per_test", "--fixtures-per-test"),
    ("markers", "--markers"),
    ("setupplan", "--setup-plan"),
    ("setuponly", "--setup-only"),
)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """Answer in ``TRACKER_ARGCHECK``; then end the session before configuration and collection (exit 0), or with
    ``TRACKER_ARGCHECK_THEN=run`` let it run when the arguments are fine (else exit 4, pytest's usage error)."""
    answer = os.environ.pop("TRACKER_ARGCHECK", None)  # popped: the tests this session runs never see it
    then_run = os.environ.pop("TRACKER_ARGCHECK_THEN", None) == "run"
    own = os.environ.pop("TRACKER_ARGCHECK_OWN", None)
    if not answer:
        return None
    problems = _own_options(config, own)
    problems += [f"{flag}: pytest would not run the tests" for dest, flag in NOT_A_RUN if config.getoption(dest, None)]
    problems += _expression_problems(config)
    problems += _xdist_problems(config)
    problems += _changing_options(config)
    problems += _missing_paths(config)
    Path(answer).write_text(json.dumps(problems), encoding="utf-8")
    if then_run:
        return int(pytest.ExitCode.USAGE_ERROR) if problems else None
    return 0


# The tracker's own options, which verify sets itself: one given again, in an ``@argsfile`` too, overrides verify's.
OWN = (
    ("tracker_record", "--tracker-record"),
    ("tracker_file", "--tracker-file"),
    ("tracker_gates", "--tracker-gates"),
    ("tracker_select", "--tracker-select"),
    ("tracker_collect", "--tracker-collect"),
)


def _own_options(config: pytest.Config, own: str | None) -> list[str]:
    """The tracker's own options whose value is not the one verify gave (``TRACKER_ARGCHECK_OWN``: JSON {dest:
    value}; unset, none given): verify's command line names them before the user's arguments, which argparse lets
    win, from an ``@argsfile`` too."""
    try:
        given = json.loads(own) if own else {}
    except ValueError:
        given = {}
    expected = given if isinstance(given, dict) else {}
    return [
        f"{flag}: verify sets the tracker's own pytest options itself"
        for dest, flag in OWN
        if config.getoption(dest, None) != expected.get(dest)
    ]


def _changing_options(config: pytest.Config) -> list[str]:
    """Options that may turn a failing test into a pass (``-p no:warnings``, ``-W``, ``-o filterwarnings``,
    ``--runxfail``, ...) or name the tests relative to another folder (``--rootdir``): a run with them meets no gate
    (:func:`tracker.plugin.options.altering`)."""
    return [
        f"{flag}: may turn a failing test into a pass or name tests after another folder (a run with it meets no gate)"
        for flag in altering(config)
    ]


def _xdist_problems(config: pytest.Config) -> list[str]:
    """pytest-xdist options a recorded run refuses (:func:`tracker.plugin.options.xdist_refusal`)."""
    refused = xdist_refusal(config)
    return [refused] if refused else []


def _expression_problems(config: pytest.Config) -> list[str]:
    """``-k``/``-m`` expressions pytest would refuse once it had collected (its wording)."""
    try:
        from _pytest.mark.expression import Expression  # pytest's own parser; private, so optional
    except ImportError:
        return []
    out: list[str] = []
    for dest, flag in (("keyword", "-k"), ("markexpr", "-m")):
        expr = str(config.getoption(dest, "") or "").lstrip()
        if not expr:
            continue
        try:
            Expression.compile(expr)
        except Exception as err:  # SyntaxError now, ParseError in older pytest
            text = getattr(err, "msg", None) or str(err)
            column = getattr(err, "offset", None) or getattr(err, "column", None)
            out.append(
                f"Wrong expression passed to '{flag}': {expr}: " + (f"at column {column}: " if column else "") + text
            )
    return out


def _missing_paths(config: pytest.Config) -> list[str]:
    """Positional arguments naming a file or directory that does not exist (pytest: a usage error)."""
    if config.getoption("pyargs", False) or config.args_source is not pytest.Config.ArgsSource.ARGS:
        return []
    here = Path(config.invocation_params.dir)
    return [f"file or directory not found: {arg}" for arg in config.args if not (here / arg.split("::", 1)[0]).exists()]
