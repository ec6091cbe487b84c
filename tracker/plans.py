"""Finding and loading plan files, through a parse cache.

The cache (``.tracker/cache/plans.json``, gitignored) maps each plan file to the sha256 of its
bytes and the validated plan as plain data, so a warm ``tracker status`` neither imports
markdown-it-py nor pydantic (together ~270 ms). A file whose bytes changed is parsed again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from tracker import __version__
from tracker.checks import cross_plan_problems
from tracker.errors import FileError, PlanError
from tracker.fileio import atomic_write, read_text
from tracker.hashing import sha256_hex
from tracker.model import BenchGate, Gate, ManualGate, Phase, Plan, TestGate

CACHE = Path(".tracker") / "cache" / "plans.json"
CACHE_VERSION = f"4/{__version__}"  # bump when the cached plain data changes shape or validation changes
PLAN_GLOB = "[0-9][0-9][0-9][0-9]-*.md"


class PlanFile(NamedTuple):
    """A plan file's path (relative, POSIX), its text and what parsing it gave."""

    path: str
    text: str
    plan: Plan | None
    problems: list[str]


def _gate_plain(g: Gate) -> dict[str, Any]:
    return {**g.definition, "line": g.line}


def _gate_from(d: dict[str, Any]) -> Gate:
    if "test" in d:
        return TestGate(**d)
    if "manual" in d:
        return ManualGate(**d)
    return BenchGate(**d)


def to_plain(plan: Plan) -> dict[str, Any]:
    """A plan as JSON-able data (for the cache)."""
    return {
        "id": plan.id, "title": plan.title, "path": plan.path, "milestone": plan.milestone,
        "line": plan.line, "end_line": plan.end_line,
        "phases": [
            {"id": ph.id, "title": ph.title, "depends": list(ph.depends), "paths": list(ph.paths),
             "gates": [_gate_plain(g) for g in ph.gates], "line": ph.line, "end_line": ph.end_line,
             "depends_line": ph.depends_line}
            for ph in plan.phases
        ],
    }  # fmt: skip


def from_plain(d: dict[str, Any]) -> Plan:
    """Inverse of :func:`to_plain`."""
    phases = tuple(
        Phase(p["id"], p["title"], tuple(p["depends"]), tuple(p["paths"]), tuple(_gate_from(g) for g in p["gates"]), p["line"], p["end_line"], p["depends_line"])
        for p in d["phases"]
    )
    return Plan(d["id"], d["title"], d["path"], d["milestone"], phases, d["line"], d["end_line"])


def plan_paths(root: Path) -> list[Path]:
    """Plan files: ``plans/NNNN-*.md`` under the repository root, sorted."""
    return sorted((root / "plans").glob(PLAN_GLOB))


def _read_cache(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / CACHE).read_bytes())
        return data["files"] if data.get("version") == CACHE_VERSION else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # a missing or broken cache is just a cold cache


def load_files(root: Path, paths: list[Path] | None = None, unreadable: list[str] | None = None) -> list[PlanFile]:
    """Read and parse plan files (all of them by default), using and refreshing the cache.

    A file that cannot be read or decoded raises FileError, or, when ``unreadable`` is given, is
    skipped and listed there as ``path: reason`` (lint reports it and checks the others).
    """
    cache = _read_cache(root)
    fresh: dict[str, Any] = {}
    out: list[PlanFile] = []
    for path in plan_paths(root) if paths is None else paths:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        try:
            text = read_text(path)
        except FileError as err:
            if unreadable is None:
                raise
            unreadable.append(f"{rel}: {str(err).removeprefix(f'{path}: ')}")
            continue
        digest = sha256_hex(text.encode("utf-8"))
        hit = cache.get(rel)
        if hit is not None and hit.get("sha") == digest:
            plan = from_plain(hit["plan"]) if hit["plan"] is not None else None
            out.append(PlanFile(rel, text, plan, list(hit["problems"])))
            fresh[rel] = hit
            continue
        from tracker.parse import parse_plan  # cold path only: markdown-it-py + pydantic

        plan, problems = parse_plan(rel, text)
        out.append(PlanFile(rel, text, plan, problems))
        fresh[rel] = {"sha": digest, "plan": to_plain(plan) if plan else None, "problems": problems}
    if paths is None and fresh != cache:
        try:
            atomic_write(root / CACHE, json.dumps({"version": CACHE_VERSION, "files": fresh}).encode())
        except OSError:
            pass  # a read-only checkout still works, just without a warm cache
    return out


def load_plans(root: Path) -> tuple[list[PlanFile], list[Plan]]:
    """Every plan file and plan, or PlanError listing every problem (file-level and cross-plan)."""
    files = load_files(root)
    plans = [f.plan for f in files if f.plan is not None]
    problems = [p for f in files for p in f.problems] + cross_plan_problems(plans)
    if problems:
        raise PlanError(problems)
    return files, plans
