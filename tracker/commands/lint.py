"""``tracker lint``: every problem in every plan at once, as ``path:line: message``.

TOML errors, unknown keys, bad values, duplicate ids, unknown dependencies, dependency cycles,
invalid ``-m`` expressions, and test gates that pytest cannot collect (one ``--collect-only``
session over every gate's file or directory; node ids are then matched against what it found).
Also plan files that are not UTF-8 (``path: reason``) and ``plans/*.md`` files that no command
reads because they are not named ``NNNN-slug.md``.

Warnings (``path:line: warning: ...``; the exit code stays 0 when there is no problem): a phase with no
gates (it can never be done), a test gate whose test files lie outside its phase's ``paths`` (editing
them does not make the phase stale; only for phases that have ``paths``), a ``plans/*.md`` file no command
reads, a ``plan`` or ``phase`` block inside a list item or a block quote (prose: only top-level blocks are read),
a ``paths`` glob that matches no file of the working tree (it can never make the phase stale; ``src`` names a file,
``src/`` a directory).

``--json`` prints one object::

    {"ok": false, "files": 2,
     "problems": [{"path": "plans/0001-a.md", "line": 12, "message": "phase P1 gate 1: ...",
                   "text": "plans/0001-a.md:12: phase P1 gate 1: ..."}],
     "warnings": [{"path": "plans/0001-a.md", "line": 30, "message": "warning: phase P3 has no gates: ...",
                   "text": "..."}]}

``ok``: no problem (exit 0; otherwise exit 2); ``files``: plan files found (read or not); each problem and warning as
printed (``text``) and split into the plan file, its 1-based line (null for a ``path: reason`` about
the whole file) and the message.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from tracker.base.file_index import FileIndex
from tracker.base.fileio import read_text
from tracker.base.gate_paths import leaves_repository
from tracker.base.selection import NodeIndex, gate_inputs, marker_matches
from tracker.commands.common import escaped, pytest_command, pytest_env
from tracker.core.checks import cross_plan_problems, placeholder_problems
from tracker.core.model import Phase, Plan, TestGate
from tracker.errors import ExitCode, FileError
from tracker.plans.load import MAX_PLAN_BYTES, PLAN_GLOB, PlanFile, load_files


def _collect(root: Path, paths: list[str], options: tuple[str, ...] = ()) -> tuple[dict[str, Any] | None, str]:
    """(what pytest collected from ``paths`` with a gate's ``options``, pytest's output when it could not say)."""
    with tempfile.TemporaryDirectory(prefix="tracker-lint-") as tmp:
        target = Path(tmp, "collected.json")
        cmd = [*pytest_command(), "--collect-only", "-q", f"--rootdir={root}", f"--tracker-collect={target}"]
        cmd += [*options, *paths]
        proc = subprocess.run(cmd, cwd=root, env=pytest_env(root, bytecode=True), capture_output=True, text=True)
        if not target.exists():
            lines = (proc.stdout + proc.stderr).strip().splitlines()
            return None, lines[-1] if lines else f"pytest exited with {proc.returncode}"
        return json.loads(target.read_text()), ""


def _missing(root: Path, path: str) -> str | None:
    """Why the test file or directory ``path`` cannot be collected, or None: it does not exist, cannot be
    looked at (permissions, a name too long), or leaves the repository through a symlink (collecting it
    would import code from outside; plan validation already refuses paths that do so as written)."""
    try:
        if not (root / path).exists():
            return f"no such test file or directory: {path}"
        return leaves_repository(root, path)  # the rule status and verify apply too
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
        return f"cannot look at test path {path!r}: {getattr(err, 'strerror', None) or err}"


def gate_problems(
    root: Path,
    plans: list[Plan],
    collect: bool = True,
    texts: dict[str, str] | None = None,
    warnings: list[str] | None = None,
) -> list[str]:
    """Problems of test gates: bad -m expressions, paths that cannot be collected, collection errors. Tests not
    written yet (a path that does not exist, an argument or ``-m`` that collects nothing) are planning ahead of the
    code, not a problem: ``warnings`` gets them (the gate stays unmet in status until they exist).

    ``texts`` (path -> text) is given for plan files with problems: there invalid gates were left
    out of the plan, and the others are numbered by their ``[[gate]]`` headers in the text.
    """
    problems: list[str] = []
    gates: list[tuple[Plan, int, TestGate, str]] = []
    missing_of: dict[str, str | None] = {}
    for plan in plans:
        text = (texts or {}).get(plan.path)
        for ph in plan.phases:
            numbers: dict[int, int] = {}
            if text is not None:
                from tracker.plans.parse import gate_numbers  # only for invalid plans: markdown-it-py + pydantic

                numbers = gate_numbers(text, ph)
            for i, g in enumerate(ph.gates, 1):
                if not isinstance(g, TestGate):
                    continue
                where = f"{plan.path}:{g.line}: phase {ph.id} gate {numbers.get(g.line, i)}"
                try:
                    marker_matches(g.marker, [])
                except ValueError as err:
                    problems.append(f"{where}: {err}")
                    continue
                path = g.test.split("::", 1)[0].rstrip("/") or "."
                if path not in missing_of:  # gates often share their test file
                    missing_of[path] = _missing(root, path)
                missing = missing_of[path]
                if missing and _absent(root, path):
                    _not_written(warnings, plan, g, where, f"{missing} ({NOT_WRITTEN} it is)")
                    continue
                if missing:
                    problems.append(f"{where}: {missing}")
                    continue
                gates.append((plan, i, g, where))
    if not collect or not gates:
        return problems
    by_options: dict[tuple[str, ...], list[tuple[Plan, int, TestGate, str]]] = {}
    for entry in gates:  # one collection per set of the gates' pytest options, as verify runs them
        by_options.setdefault(entry[2].options, []).append(entry)
    for options, group in sorted(by_options.items()):
        problems += _collected_problems(root, group, options, warnings)
    return problems


def _collected_problems(
    root: Path, gates: list[tuple[Plan, int, TestGate, str]], options: tuple[str, ...], warnings: list[str] | None
) -> list[str]:
    """Problems (and not-written warnings) of ``gates``, which share their pytest ``options``, from one collection."""
    problems: list[str] = []
    paths = sorted({g.test.split("::", 1)[0].rstrip("/") or "." for _, _, g, _ in gates})
    args, folded = _folded(root, paths)
    found, tail = _collect(root, args, options)
    if found is not None and folded:  # a file pytest's python_files skips in its folder: named on its own
        seen = {str(n["nodeid"]).split("::", 1)[0] for n in (*found["items"], *found["errors"])}
        again = sorted(p for p in folded if p not in seen)
        more, tail = _collect(root, again, options) if again else ({"items": [], "errors": []}, "")
        if more is None:
            found = None
        else:
            for key in ("items", "errors"):
                found[key] = [*found[key], *more[key]]
            found["outside"] = {**(found.get("outside") or {}), **(more.get("outside") or {})}
    if found is None:
        return problems + [f"{w}: pytest could not collect {g.test}: {tail}" for _, _, g, w in gates]
    errors, items, outside = found["errors"], found["items"], found.get("outside") or {}
    error_index, item_index = NodeIndex([e["nodeid"] for e in errors]), NodeIndex([it["nodeid"] for it in items])
    for plan, _, g, where in gates:
        first = min(error_index.selected(g.test), default=None)
        if first is not None:
            problems.append(f"{where}: collection error in {errors[first]['nodeid']}: {errors[first]['reason']}")
            continue
        selected = [i for i in item_index.selected(g.test) if marker_matches(g.marker, items[i]["markers"])]
        files = (items[i]["nodeid"].split("::", 1)[0] for i in sorted(selected))
        away = next((outside[f] for f in files if f in outside), None)
        if away is not None:  # a test file under the gate (or a conftest.py above it) linked out of the repository
            problems.append(f"{where}: {away} (its tests are not the repository's: they meet no gate)")
            continue
        if not selected:
            extra = f" with -m {g.marker!r}" if g.marker else ""
            _not_written(warnings, plan, g, where, f"'{g.test}'{extra} collects no tests ({NOT_WRITTEN} it does)")
    return problems


NOT_WRITTEN = "not written yet? the gate stays unmet until"
FOLD_AT = 8  # test files of one folder named at least this often are collected through their folder


def _folded(root: Path, paths: list[str]) -> tuple[list[str], set[str]]:
    """(pytest arguments, the files folded into them): ``paths``, where every ``.py`` file of a folder without
    subfolders (its ``conftest.py`` and ``__init__.py`` aside) is a gate's, with those files replaced by the
    folder. pytest collects a folder's files again for each argument in it (1,000 files named one by one: 44 s,
    round 20; the folder: 1.5 s)."""
    by_folder: dict[str, set[str]] = {}
    for p in paths:
        if p.endswith(".py") and (root / p).is_file():
            by_folder.setdefault(p.rpartition("/")[0], set()).add(p)
    out, folded = set(paths), set[str]()
    for folder, files in by_folder.items():
        if len(files) < FOLD_AT:
            continue
        try:
            entries = list(os.scandir(root / folder))
            there = {
                f"{folder}/{e.name}" if folder else e.name
                for e in entries
                if e.name.endswith(".py") and e.name not in ("conftest.py", "__init__.py") and e.is_file()
            }
            below = any(e.is_dir() and e.name != "__pycache__" for e in entries)
        except OSError:
            continue
        if there == files and not below:  # a subfolder's conftest.py would load in the folder's collection only
            out -= files
            out.add(folder or ".")
            folded |= files
    return sorted(out), folded


def _absent(root: Path, path: str) -> bool:
    """Is nothing at ``path`` yet (a test not written), as opposed to something that cannot be looked at?"""
    try:
        return not (root / path).exists()
    except (OSError, RuntimeError):  # a name too long, a symlink loop: a problem, not a plan ahead of the code
        return False


def _not_written(warnings: list[str] | None, plan: Plan, gate: TestGate, where: str, message: str) -> None:
    """A warning for a test gate whose tests do not exist yet: ``path:line: warning: phase P1 gate 2: message``."""
    if warnings is not None:
        head = f"{plan.path}:{gate.line}: "
        warnings.append(f"{head}warning: {where.removeprefix(head)}: {message}")


def misnamed(root: Path) -> tuple[list[str], list[str]]:
    """(problems, warnings) for ``plans/*.md`` files that are not named ``NNNN-slug.md``, so that
    no command reads them: a problem when the file holds a ``plan`` block, else a warning."""
    problems: list[str] = []
    warnings: list[str] = []
    for path in sorted((root / "plans").glob("*.md")):
        if path.match(PLAN_GLOB) or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        try:
            text = read_text(path, root=root, limit=MAX_PLAN_BYTES)
        except FileError:
            text = ""
        from tracker.plans.parse import fenced_blocks  # only when such a file exists: markdown-it-py

        if any(b.kind == "plan" for b in fenced_blocks(text.removeprefix("\ufeff"))):
            problems.append(f"{rel}: holds a plan block but is not named NNNN-slug.md, so tracker ignores it")
        else:
            warnings.append(f"{rel}: warning: not named NNNN-slug.md, so tracker does not read it as a plan")
    return problems, warnings


def gate_test_files(root: Path, path: str) -> list[str]:
    """The test files a gate's file or directory argument names, relative to ``root``: the file itself, or
    every ``.py`` file below the directory, skipping the directories pytest does not collect from by
    default (``norecursedirs``: hidden ones, ``build``, ``dist``, ``venv``, ``*.egg``, ...) and
    ``__pycache__``; symlinked directories are not followed."""
    import fnmatch
    import os

    from tracker.base.ignored_inputs import NORECURSE

    target = root / path
    if target.is_file():
        return [path]
    out: list[str] = []
    for top, dirs, names in os.walk(target):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not any(fnmatch.fnmatch(d, n) for n in NORECURSE))
        rel = Path(top).relative_to(root).as_posix()
        out += [name if rel == "." else f"{rel}/{name}" for name in sorted(names) if name.endswith(".py")]
    return out


def _outside_files(root: Path, path: str, paths: tuple[str, ...]) -> list[str]:
    """The test files of a gate's file or directory ``path`` that neither ``paths`` nor the gate's own inputs
    (:func:`tracker.base.selection.gate_inputs`: its test file or directory, pytest's configuration) cover, so that an
    edit of one leaves a done phase done ([] when it is missing: a problem already). Only a gate of the whole tree
    (``.``) has such files: its tests are not inputs of its own."""
    try:
        if _missing(root, path):
            return []
        files = gate_test_files(root, path)
    except OSError:
        return []
    covered = FileIndex(dict.fromkeys(files, "")).match((*paths, *gate_inputs(path)))
    return [f for f in files if f not in covered]


def _outside_paths(root: Path, plan: Plan, phase: Phase, numbers: dict[int, int]) -> list[str]:
    """Warnings for the phase's test gates whose test files its ``paths`` do not cover."""
    out: list[str] = []
    outside_of: dict[str, list[str]] = {}  # by test path: a phase's gates often share their files
    for i, g in enumerate(phase.gates, 1):
        if not isinstance(g, TestGate):
            continue
        path = g.test.split("::", 1)[0].rstrip("/") or "."
        if path not in outside_of:
            outside_of[path] = _outside_files(root, path, phase.paths)
        outside = outside_of[path]
        if not outside:
            continue
        where = f"{plan.path}:{g.line}: warning: phase {phase.id} gate {numbers.get(g.line, i)}"
        if outside == [path]:
            out.append(
                f"{where}: test file {path} is outside the phase's paths (editing it will not make the phase stale)"
            )
        else:
            shown = ", ".join(outside[:3]) + (f" (+{len(outside) - 3} more)" if len(outside) > 3 else "")
            out.append(
                f"{where}: {len(outside)} test file(s) under {path} are outside the phase's paths "
                f"(editing them will not make the phase stale): {shown}"
            )
    return out


def no_match_hint(index: FileIndex, glob: str) -> str:
    """`` (did you mean 'src/'?)`` when ``glob`` matches no file but names a directory that holds some (``src``
    matches the file ``src`` only; ``src/`` everything below it), else ''."""
    return f" (did you mean '{glob}/'?)" if not glob.endswith("/") and index.match((glob + "/",)) else ""


def _glob_line(text: str, phase: Phase, glob: str) -> int:
    """The file line of ``glob`` in the phase's ``paths`` (the ``paths`` line when it cannot be found there,
    the phase's opening fence when neither can)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i in range(phase.line, min(phase.end_line, len(lines))) if _PATHS_KEY.match(lines[i])), None)
    if start is None:
        return phase.line
    stop = next(
        (i for i in range(start + 1, min(phase.end_line, len(lines))) if _NEXT_KEY.match(lines[i])), phase.end_line
    )
    quoted = (f'"{glob}"', f"'{glob}'")
    return next((i for i in range(start, min(stop, len(lines))) if any(q in lines[i] for q in quoted)), start) + 1


_PATHS_KEY = re.compile(r"""^\s*["']?paths["']?\s*=""")
_NEXT_KEY = re.compile(
    r"""^\s*(\[|[A-Za-z0-9_-]+\s*=|["'][^"']*["']\s*=)"""
)  # a table or the next key: the array ended


def unmatched_paths(root: Path, files: list[PlanFile]) -> list[str]:
    """Warnings for every ``paths`` glob that matches no file of the working tree (tracked, or untracked and not
    ignored: the files status fingerprints). Such a glob makes no phase stale, ever: ``src`` (no slash) matches a
    file named ``src``, not the directory, and a typo like ``srcc/**`` matches nothing. In files with
    problems too: a glob that is itself invalid is a problem, never kept, so never warned about."""
    phases = [(f, ph) for f in files if f.plan is not None for ph in f.plan.phases if ph.paths]
    if not phases:
        return []
    from tracker.base.fingerprint import tree_file_ids  # two git calls: only when some phase has paths

    index = FileIndex(tree_file_ids(root))
    out: list[str] = []
    for f, ph in phases:
        for glob in ph.paths:
            if not index.match((glob,)):
                where = f"{f.path}:{_glob_line(f.text, ph, glob)}"
                out.append(
                    f"{where}: warning: phase {ph.id}: paths glob '{escaped(glob)}' matches no file"
                    + escaped(no_match_hint(index, glob))
                )
    return out


def _gate_headers(f: PlanFile, phase: Phase) -> dict[int, int]:
    """The phase's ``[[gate]]`` headers in the file's text, valid gates or not."""
    from tracker.plans.parse import gate_numbers  # only for invalid plans: markdown-it-py + pydantic

    return gate_numbers(f.text, phase)


def phase_warnings(root: Path, files: list[PlanFile]) -> list[str]:
    """Warnings about phases (module docstring), in files with problems too. A phase with no valid gate is warned
    about only when it has no ``[[gate]]`` at all: an invalid gate is left out, and its problem says so already."""
    out: list[str] = []
    for f in files:
        if f.plan is None:
            continue
        for ph in f.plan.phases:
            if not ph.gates and (not f.problems or not _gate_headers(f, ph)):
                out.append(f"{f.plan.path}:{ph.line}: warning: phase {ph.id} has no gates: it can never be done")
            if ph.paths:
                numbers: dict[int, int] = {}
                if f.problems:
                    from tracker.plans.parse import gate_numbers  # only for invalid plans: markdown-it-py + pydantic

                    numbers = gate_numbers(f.text, ph)
                out += _outside_paths(root, f.plan, ph, numbers)
    return out


# A line that may open a plan or phase fence below the top level: a fence with something before it (a list
# marker, a ``>``, indentation). A fence at column 0 is always top-level (it ends any list or quote), so a file
# without such a line has no nested block, known without importing the parser (a superset: the parse decides).
MAYBE_NESTED = re.compile(r"^(?![`~]{3})[^\n]*?(?:`{3}|~{3})[`~]*[ \t]*(?:plan|phase)\b", re.M)


def nested_block_warnings(files: list[PlanFile]) -> list[str]:
    """Warnings for ``plan``/``phase`` fences inside a list item or a block quote: the parser reads only
    top-level fences, so such a block is prose, and its phase is silently missing from every status."""
    out: list[str] = []
    for f in files:
        text = f.text.removeprefix("\ufeff")
        if MAYBE_NESTED.search(text) is None:
            continue
        from tracker.plans.parse import nested_blocks  # only for a file that may have one: markdown-it-py + pydantic

        why = "inside a list or quote is prose, not read (move it to the top level)"
        out += [f"{f.path}:{line}: warning: a {kind} block {why}" for kind, line in nested_blocks(text)]
    return out


def _located(lines: list[str], paths: list[str]) -> list[dict[str, Any]]:
    """Each ``path:line: message`` (or ``path: reason``) line split at the longest known file path it
    starts with (a path may itself hold ``:``)."""
    out: list[dict[str, Any]] = []
    for text in lines:
        path = max((p for p in paths if text.startswith(p + ":")), key=len, default=None)
        rest = text[len(path) + 1 :] if path is not None else text
        line, sep, message = rest.partition(": ")
        if path is not None and sep and line.isdigit():
            out.append({"path": path, "line": int(line), "message": message, "text": text})
        else:
            out.append({"path": path, "line": None, "message": rest.lstrip(), "text": text})
    return out


def run(root: Path, collect: bool = True, out: TextIO | None = None, as_json: bool = False, fmt: str = "text") -> int:
    """Print every problem (and warning), or the JSON object above; exit 2 when there is any problem, else 0.
    ``fmt="github"``: each problem as a GitHub Actions ``::error`` and each warning as a ``::warning`` at its plan
    file and line (:mod:`tracker.commands.github_output`), then the last line; the same exit code.

    A plan file with problems is still checked for dependencies, cycles and gates (as far as it
    validated); a file that is not UTF-8 is listed as ``path: reason`` and the others are checked.
    """
    out = out or sys.stdout
    unreadable: list[str] = []
    files = load_files(root, unreadable=unreadable)
    plans = [f.plan for f in files if f.plan is not None]
    texts = {f.path: f.text for f in files if f.problems}
    bad_names, warnings = misnamed(root)
    warnings += nested_block_warnings(files) + phase_warnings(root, files) + unmatched_paths(root, files)
    problems = [*unreadable, *(p for f in files for p in f.problems), *bad_names]
    problems += cross_plan_problems(plans) + placeholder_problems(plans)
    problems += gate_problems(root, plans, collect, texts, warnings)
    paths = [f.path for f in files] + [p.relative_to(root).as_posix() for p in (root / "plans").glob("*.md")]
    tail = f", {len(warnings)} warning(s)" if warnings else ""
    bad_files = len({p.split(":", 1)[0] for p in problems})
    if problems:
        last = f"{len(problems)} problem(s) in {bad_files} file(s){tail}"
    else:
        last = f"{len(files)} plan file(s) OK{tail}"
    if fmt == "github":
        from tracker.commands.github_output import lint_annotations, write_lines

        write_lines(
            out, lint_annotations(_located(problems, paths), _located(warnings, paths)), [f"tracker lint: {last}"]
        )
        return int(ExitCode.INVALID_PLANS) if problems else 0
    if as_json:
        from tracker.commands.common import json_text

        doc = {
            "ok": not problems,
            "files": len(files) + len(unreadable),
            "problems": _located(problems, paths),
            "warnings": _located(warnings, paths),
        }
        out.write(json_text(out, doc, indent=None) + "\n")
        return int(ExitCode.INVALID_PLANS) if problems else 0
    for p in warnings + problems:
        out.write(p + "\n")
    out.write(last + "\n")
    return int(ExitCode.INVALID_PLANS) if problems else 0
