"""``tracker lint``: every problem in every plan at once, as ``path:line: message``.

TOML errors, unknown keys, bad values, duplicate ids, unknown dependencies, dependency cycles,
invalid ``-m`` expressions, and test gates that pytest cannot collect (one ``--collect-only``
session over every gate's file or directory; node ids are then matched against what it found).
Also plan files that are not UTF-8 (``path: reason``) and ``plans/*.md`` files that no command
reads because they are not named ``NNNN-slug.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from tracker.checks import cross_plan_problems
from tracker.commands.common import pytest_command, pytest_env
from tracker.errors import ExitCode, FileError
from tracker.fileio import read_text
from tracker.model import Plan, TestGate
from tracker.plans import MAX_PLAN_BYTES, PLAN_GLOB, load_files
from tracker.selection import marker_matches, selects


def _collect(root: Path, paths: list[str]) -> tuple[dict[str, Any] | None, str]:
    """(what pytest collected from ``paths``, pytest's output when it could not say)."""
    with tempfile.TemporaryDirectory(prefix="tracker-lint-") as tmp:
        target = Path(tmp, "collected.json")
        cmd = pytest_command() + ["--collect-only", "-q", f"--rootdir={root}", f"--tracker-collect={target}", *paths]
        proc = subprocess.run(cmd, cwd=root, env=pytest_env(root), capture_output=True, text=True)
        if not target.exists():
            lines = (proc.stdout + proc.stderr).strip().splitlines()
            return None, lines[-1] if lines else f"pytest exited with {proc.returncode}"
        return json.loads(target.read_text()), ""


def _missing(root: Path, path: str) -> str | None:
    """Why the test file or directory ``path`` cannot be collected, or None: it does not exist, cannot be
    looked at (permissions, a name too long), or leaves the repository through a symlink (collecting it
    would import code from outside; plan validation already refuses paths that do so as written)."""
    target = root / path
    try:
        if not target.exists():
            return f"no such test file or directory: {path}"
        real = target.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop (Python < 3.13)
        return f"cannot look at test path {path!r}: {getattr(err, 'strerror', None) or err}"
    try:
        real.relative_to(root.resolve())
    except ValueError:
        return f"test path {path!r} resolves to {real}, outside the repository"
    return None


def gate_problems(root: Path, plans: list[Plan], collect: bool = True, texts: dict[str, str] | None = None) -> list[str]:
    """Problems of test gates: bad -m expressions, missing paths, patterns collecting nothing.

    ``texts`` (path -> text) is given for plan files with problems: there invalid gates were left
    out of the plan, and the others are numbered by their ``[[gate]]`` headers in the text.
    """
    problems: list[str] = []
    gates: list[tuple[Plan, int, TestGate, str]] = []
    for plan in plans:
        text = (texts or {}).get(plan.path)
        for ph in plan.phases:
            numbers: dict[int, int] = {}
            if text is not None:
                from tracker.parse import gate_numbers  # only for invalid plans: markdown-it-py + pydantic

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
                missing = _missing(root, path)
                if missing:
                    problems.append(f"{where}: {missing}")
                    continue
                gates.append((plan, i, g, where))
    if not collect or not gates:
        return problems
    paths = sorted({g.test.split("::", 1)[0].rstrip("/") or "." for _, _, g, _ in gates})
    found, tail = _collect(root, paths)
    if found is None:
        return problems + [f"{w}: pytest could not collect {g.test}: {tail}" for _, _, g, w in gates]
    for _, _, g, where in gates:
        errs = [e for e in found["errors"] if selects(g.test, e["nodeid"])]
        if errs:
            problems.append(f"{where}: collection error in {errs[0]['nodeid']}: {errs[0]['reason']}")
            continue
        hits = [it for it in found["items"] if selects(g.test, it["nodeid"]) and marker_matches(g.marker, it["markers"])]
        if not hits:
            extra = f" with -m {g.marker!r}" if g.marker else ""
            problems.append(f"{where}: '{g.test}'{extra} collects no tests")
    return problems


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
        from tracker.parse import fenced_blocks  # only when such a file exists: markdown-it-py

        if any(b.kind == "plan" for b in fenced_blocks(text.removeprefix("\ufeff"))):
            problems.append(f"{rel}: holds a plan block but is not named NNNN-slug.md, so tracker ignores it")
        else:
            warnings.append(f"{rel}: warning: not named NNNN-slug.md, so tracker does not read it as a plan")
    return problems, warnings


def run(root: Path, collect: bool = True, out: TextIO | None = None) -> int:
    """Print every problem (and warning); exit 2 when there is any problem, else 0.

    A plan file with problems is still checked for dependencies, cycles and gates (as far as it
    validated); a file that is not UTF-8 is listed as ``path: reason`` and the others are checked.
    """
    out = out or sys.stdout
    unreadable: list[str] = []
    files = load_files(root, unreadable=unreadable)
    plans = [f.plan for f in files if f.plan is not None]
    texts = {f.path: f.text for f in files if f.problems}
    bad_names, warnings = misnamed(root)
    problems = [*unreadable, *(p for f in files for p in f.problems), *bad_names]
    problems += cross_plan_problems(plans) + gate_problems(root, plans, collect, texts)
    for p in warnings + problems:
        out.write(p + "\n")
    tail = f", {len(warnings)} warning(s)" if warnings else ""
    if problems:
        bad_files = len({p.split(":", 1)[0] for p in problems})
        out.write(f"{len(problems)} problem(s) in {bad_files} file(s){tail}\n")
        return int(ExitCode.INVALID_PLANS)
    out.write(f"{len(files)} plan file(s) OK{tail}\n")
    return 0
