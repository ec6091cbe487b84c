"""Helpers shared by commands: choosing plans/phases from arguments, the pytest command line."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TextIO

from tracker.core.model import Phase, Plan
from tracker.errors import UsageError


def plan_spec(root: Path, spec: str) -> str:
    """``spec`` as ``PLAN`` or ``PLAN/PHASE`` with its plan part a plan id, as :func:`select` takes it.

    Besides the id itself (``0002``) a plan may be named by its number without leading zeros (``2``, ``2/P1``)
    or by its file (``plans/0002-x.md``: relative to the current directory or to the repository root, or
    absolute); a ``.md`` path that is no plan file of this repository is a UsageError. Anything else is
    returned as it is, for :func:`select` to accept or refuse.
    """
    plan_id, slash, phase_id = spec.partition("/")
    if spec.endswith(".md"):
        found = _plan_file_id(root, spec)
        if found is not None:
            return found
        if not (_is_number(plan_id) and phase_id and "/" not in phase_id):  # not PLAN/PHASE with a phase id ending .md
            shown = spec if spec.isprintable() else repr(spec)
            where = escaped(str(root))
            raise UsageError(f"{shown}: not a plan file of this repository (plans/NNNN-slug.md in {where})")
    if _is_number(plan_id) and len(plan_id.lstrip("0")) <= 4:
        return f"{int(plan_id):04d}{slash}{phase_id}"
    return spec


# What never reaches a terminal raw: C0 and C1 controls, DEL, line and paragraph separators, bidirectional marks,
# embeddings, overrides and isolates, and the byte order mark.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def inert(text: object) -> str:
    """``text`` safe to print on a terminal: each control character as its backslash escape (``\\x1b``, ``\\r``,
    ``\\u202e``); everything else, ``<script>`` included, as it is (a terminal renders no markup). The one escaper of
    what ``status``, ``verify``, ``show`` and ``log`` print from plans and evidence (a failing test's message is text
    the code under test controls: raw, ``ESC[2K`` erased the line and drew another status in its place)."""
    return _CONTROL.sub(_escape, str(text))


def escaped(text: str) -> str:
    """``text`` as an error message may show it to a terminal: each control or unprintable character (an escape
    sequence, a line break, a lone surrogate of an argument that is not UTF-8) as its Python escape."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def require_utf8(*options: tuple[str, str | None]) -> None:
    """UsageError (exit 3) ``OPTION: not valid UTF-8 text ('\\udcff')`` for the first (option, value) whose value
    holds bytes of another encoding (a command line's bytes that are not UTF-8 arrive as lone surrogates): text
    no UTF-8 evidence or result file can hold, refused before anything is read or written."""
    for option, value in options:
        if value is None:
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(f"{option}: not valid UTF-8 text ({value!a})") from None


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _plan_file_id(root: Path, spec: str) -> str | None:
    """The number of the plan file ``spec`` names (``plans/NNNN-slug.md`` under ``root``), or None."""
    import fnmatch

    from tracker.plans.load import PLAN_GLOB

    for candidate in (Path(spec), root / spec):
        try:
            path = candidate.resolve()
            if (
                path.parent == (root / "plans").resolve()
                and fnmatch.fnmatchcase(path.name, PLAN_GLOB)
                and path.is_file()
            ):
                return path.name[:4]
        except (OSError, RuntimeError, ValueError):  # a symlink loop, a name too long, a NUL byte
            continue
    return None


def resolve_spec(plans: list[Plan], spec: str) -> str:
    """``spec`` spelled as the plans spell it: ``PLAN`` or ``PLAN/PHASE``, its plan a number without leading zeros
    (``2``) made the id (``0002``), its phase id matched regardless of case (``p2``: ``P2``; an exact match wins)
    and a bare phase id (``P2``, no plan) the one plan that has such a phase. UsageError when a bare phase id is in
    several plans (it names them) or the case-blind match finds two phases of one plan; anything else is returned
    as it is, for :func:`select` to accept or refuse."""
    plan_id, slash, phase_id = spec.partition("/")
    if _is_number(plan_id) and len(plan_id.lstrip("0")) <= 4:
        plan_id = f"{int(plan_id):04d}"
    by_id = {p.id: p for p in plans}
    if plan_id in by_id:
        plan = by_id[plan_id]
        if phase_id and plan.phase(phase_id) is None:
            found = _phase_ids(plan, phase_id)
            if len(found) > 1:
                raise UsageError(f"phase '{escaped(phase_id)}' of plan {plan.id} is ambiguous: {', '.join(found)}")
            phase_id = found[0] if found else phase_id
        return f"{plan_id}{slash}{phase_id}"
    if slash or not spec:
        return f"{plan_id}{slash}{phase_id}"
    exact = [f"{p.id}/{spec}" for p in plans if p.phase(spec) is not None]
    found = exact or [f"{p.id}/{ph}" for p in plans for ph in _phase_ids(p, spec)]
    if len(found) > 1:
        named = ", ".join(found)
        raise UsageError(f"phase '{escaped(spec)}' is in several plans ({named}): name one as PLAN/PHASE")
    return found[0] if found else plan_id


def _phase_ids(plan: Plan, phase_id: str) -> list[str]:
    """The ids of ``plan``'s phases that are ``phase_id`` regardless of case."""
    folded = phase_id.casefold()
    return [ph.id for ph in plan.phases if ph.id.casefold() == folded]


def select(plans: list[Plan], specs: list[str]) -> list[tuple[Plan, Phase]]:
    """Phases named by ``PLAN``, ``PLAN/PHASE`` or bare ``PHASE`` arguments (all phases when ``specs`` is empty),
    each as :func:`resolve_spec` reads it."""
    if not specs:
        return [(p, ph) for p in plans for ph in p.phases]
    by_id = {p.id: p for p in plans}
    out: list[tuple[Plan, Phase]] = []
    for spec in specs:
        plan_id, _, phase_id = resolve_spec(plans, spec).partition("/")
        plan = by_id.get(plan_id)
        if plan is None:
            known = ", ".join(sorted(by_id)) or "none"
            raise UsageError(f"unknown plan '{escaped(plan_id)}' (known plans: {known})")
        if not phase_id:
            out.extend((plan, ph) for ph in plan.phases)
            continue
        phase = plan.phase(phase_id)
        if phase is None:
            known = ", ".join(ph.id for ph in plan.phases) or "none"
            raise UsageError(f"unknown phase '{escaped(phase_id)}' in plan {plan.id} (its phases: {known})")
        out.append((plan, phase))
    seen: set[tuple[str, str]] = set()
    return [x for x in out if (k := (x[0].id, x[1].id)) not in seen and not seen.add(k)]  # type: ignore[func-returns-value]


def json_text(out: TextIO, data: object, indent: int | None = 2) -> str:
    """``data`` as indented JSON that ``out`` can carry as it is: readable UTF-8 where the stream's encoding has
    every character, else ASCII with ``\\u`` escapes (a latin-1 or ASCII locale, a file name that is not UTF-8),
    so what a program reads is valid JSON either way. The control characters ``json.dumps`` leaves raw (DEL, C1,
    separators, bidirectional controls: a C1 CSI moves a terminal's cursor) are ``\\u`` escapes too: they can only
    stand inside strings, so the document means the same."""
    import json

    text = json.dumps(data, indent=indent, ensure_ascii=False)
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(data, indent=indent)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_RAW_IN_JSON = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)  # json.dumps keeps these


# How every nested pytest loads the plugin (see pytest_command for why explicitly).
PLUGIN_ARGS = ("-p", "tracker.pytest_plugin")


def pytest_command() -> list[str]:
    """``python -m pytest -p tracker.pytest_plugin``: our plugin loaded exactly once, whether or not it is installed,
    and from the tracker's own folder even in a repository with a ``tracker`` of its own (:mod:`tracker.pytest_boot`).

    Where the tracker is installed, pytest also finds the plugin's ``pytest11`` entry point; that entry point is
    named as the module, so the explicit ``-p`` loads the plugin under that same name and pytest skips the entry
    point (no "Plugin already registered"). An installation whose entry point has another name (made before it
    was renamed) is blocked by the plugin itself (:func:`tracker.pytest_plugin.pytest_addoption`). No scan of the
    installed entry points here: importing :mod:`importlib.metadata` for it cost verify ~10 ms.
    """
    from tracker.pytest_boot import command

    return [*command(), *PLUGIN_ARGS]


def pytest_env(root: Path, bytecode: bool = False) -> dict[str, str]:
    """Environment for the nested pytest: ``tracker`` importable there even when it is run from a
    source checkout rather than installed (the tests under ``root`` may live in another repository), and, with
    ``bytecode``, Python's bytecode caches in the tracker's own prefix (:mod:`tracker.base.bytecode`): the run never
    reads a ``__pycache__`` of the tree, whose entry Python trusts while the source keeps its size and modification
    second (an edit inside that second would run the old code and record its result for the new), and never
    writes one there."""
    env = dict(os.environ)
    if bytecode:
        from tracker.base.bytecode import prefix

        env["PYTHONPYCACHEPREFIX"] = str(prefix(root))
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and _on_sys_path(checkout):
        env["PYTHONPATH"] = os.pathsep.join(x for x in (str(checkout), env.get("PYTHONPATH", "")) if x)
    return env


def _on_sys_path(folder: Path) -> bool:
    """Was the tracker found through ``folder`` being on ``sys.path`` (a source checkout run as it is, e.g. from its
    folder or with ``PYTHONPATH``)? Installed, editable too, it is importable in the session without it; putting the
    checkout there anyway made its other packages (``bench``, ``kernel``) importable to the tests under verify, not
    under pytest (round 25, F9)."""
    for entry in sys.path:
        try:
            if Path(entry or ".").resolve() == folder:
                return True
        except OSError:
            continue
    return False
