"""Finding and loading plan files, through a parse cache.

The cache ``plans`` (:mod:`tracker.base.cache`) maps each plan file to the sha256 of its text and the validated
plan as plain data, so a warm ``tracker status`` neither imports markdown-it-py nor pydantic (together
~270 ms). A file whose text changed is parsed again. Loading only hands what it parsed to the cache object;
the command writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from tracker.base.cache import PARSE_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.base.fileio import read_text
from tracker.base.hashing import sha256_hex
from tracker.core.checks import cross_plan_findings
from tracker.core.model import BenchGate, Gate, ManualGate, Phase, Plan, TestGate
from tracker.errors import FileError, PlanError

CACHE = "plans"  # the cache's name (tracker.base.cache)
PLAN_GLOB = "[0-9][0-9][0-9][0-9]-*.md"
MAX_PLAN_BYTES = 4 * 1024 * 1024  # a plan larger than this is refused (parsing 4 MiB takes ~1.5 s)


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
        return TestGate(
            **{
                **d,
                "skips_allowed": tuple(d.get("skips_allowed") or ()),
                "options": tuple(d.get("options") or ()),
                "xfails_allowed": tuple(d.get("xfails_allowed") or ()),
            }
        )
    if "manual" in d:
        return ManualGate(**d)
    return BenchGate(**d)


def to_plain(plan: Plan) -> dict[str, Any]:
    """A plan as JSON-able data (for the cache)."""
    return {
        "id": plan.id,
        "title": plan.title,
        "path": plan.path,
        "milestone": plan.milestone,
        "line": plan.line,
        "end_line": plan.end_line,
        "phases": [
            {
                "id": ph.id,
                "title": ph.title,
                "depends": list(ph.depends),
                "paths": list(ph.paths),
                "gates": [_gate_plain(g) for g in ph.gates],
                "line": ph.line,
                "end_line": ph.end_line,
                "depends_line": ph.depends_line,
                "exact": ph.exact,
            }
            for ph in plan.phases
        ],
    }


def from_plain(d: Any) -> Plan:
    """Inverse of :func:`to_plain`; ValueError when ``d`` is not exactly what it writes (a broken or
    foreign cache entry must not reach status as a plan of the wrong shape)."""
    _check(d, _PLAN_SHAPE)
    phases = tuple(
        Phase(
            p["id"],
            p["title"],
            tuple(p["depends"]),
            tuple(p["paths"]),
            tuple(_gate_from(g) for g in p["gates"]),
            p["line"],
            p["end_line"],
            p["depends_line"],
            p["exact"],
        )
        for p in d["phases"]
    )
    return Plan(d["id"], d["title"], d["path"], d["milestone"], phases, d["line"], d["end_line"])


# Shapes of the cached plain data: a type, "scalars" ({str: str/int/float/bool}), a tuple of alternatives
# (None for null), a list ([shape]: a JSON array of it) or a dict (an object with exactly those keys; keys
# whose shape admits None may be missing).
_NUMBER = (int, float)
_GATE_SHAPES: list[tuple[str, dict[str, Any]]] = [
    (
        "test",
        {
            "test": str,
            "marker": (str, None),
            "skips_allowed": ([str], None),
            "options": ([str], None),
            "xfails_allowed": ([str], None),
            "line": int,
        },
    ),
    ("manual", {"manual": str, "line": int}),
    (
        "bench",
        {
            "bench": str,
            "where": "scalars",
            "baseline": ("scalars", None),
            "at_least": (_NUMBER, None),
            "at_most": (_NUMBER, None),
            "stat": str,
            "min_samples": (int, None),
            "hardware": (str, None),
            "run": (str, None),
            "confidence": (_NUMBER, None),
            "line": int,
        },
    ),
]
_GATE_SHAPE_OF = dict(_GATE_SHAPES)
_PHASE_SHAPE = {
    "id": str,
    "title": str,
    "depends": [str],
    "paths": [str],
    "gates": ["gate"],
    "line": int,
    "end_line": int,
    "depends_line": int,
    "exact": bool,
}
_PLAN_SHAPE = {
    "id": str,
    "title": str,
    "path": str,
    "milestone": (str, None),
    "phases": [_PHASE_SHAPE],
    "line": int,
    "end_line": int,
}


def _check(value: Any, shape: Any) -> None:
    """ValueError unless ``value`` has ``shape`` (see above); recursion as deep as the shape, not the value."""
    if isinstance(shape, tuple):
        if value is None and None in shape:
            return
        for alternative in shape:
            try:
                _check(value, alternative)
                return
            except ValueError:
                continue
        raise ValueError(f"none of {shape}")
    if shape is None:
        if value is not None:
            raise ValueError("expected null")
    elif shape == "scalars":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and type(v) in (str, int, float, bool) for k, v in value.items()
        ):
            raise ValueError("expected {str: scalar}")
    elif shape == "gate":
        if not isinstance(value, dict):
            raise ValueError("expected a gate object")
        kind = next((k for k, _ in _GATE_SHAPES if k in value), None)
        if kind is None:
            raise ValueError("a gate without test, manual or bench")
        _check(value, _GATE_SHAPE_OF[kind])
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise ValueError("expected an array")
        for item in value:
            _check(item, shape[0])
    elif isinstance(shape, dict):
        if not isinstance(value, dict) or not value.keys() <= shape.keys():
            raise ValueError("expected an object with known keys")
        for key, sub in shape.items():
            if key in value:
                _check(value[key], sub)
            elif not (isinstance(sub, tuple) and None in sub):
                raise ValueError(f"missing {key}")
    elif type(value) is not shape:  # exact: a bool is not an int here
        raise ValueError(f"expected {shape.__name__}")


def plan_paths(root: Path) -> list[Path]:
    """Plan files: ``plans/NNNN-*.md`` under the repository root, sorted."""
    return sorted((root / "plans").glob(PLAN_GLOB))


def cache_identity() -> str:
    """The plans cache's key: the tracker's code and the parse's libraries (another version of either parses
    otherwise)."""
    return cache_key(CACHE, code_identity(), library_key(*PARSE_LIBRARIES))


def _read_cache(cache: Cache) -> dict[str, Any]:
    """The cache's entries by plan path; {} when it holds none of this version (:meth:`Cache.read`: a broken
    cache is just a cold cache; each entry is checked by :func:`_cached`)."""
    data = cache.read(CACHE, cache_identity())
    return data if isinstance(data, dict) else {}


def _cached(hit: Any, rel: str, text: str, digest: str) -> PlanFile | None:
    """The cache entry ``hit`` as a PlanFile when it is for these bytes and well formed, else None."""
    if not isinstance(hit, dict) or hit.get("sha") != digest:
        return None
    problems = hit.get("problems")
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    try:
        plan = from_plain(hit["plan"]) if hit.get("plan") is not None else None
    except (ValueError, KeyError, TypeError):
        return None
    if plan is None and not problems:
        return None  # every file without a plan has a problem saying why
    return PlanFile(rel, text, plan, list(problems))


def _relative(root: Path, path: Path) -> str:
    """``path`` relative to the repository root, as written (``plans/`` may be a symlink: not resolved)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def read_plan_text(root: Path, path: Path) -> str:
    """A plan file's text: FileError ``plans/x.md: reason`` (exit 8) when it is not a regular file (a FIFO
    would hang the read), is larger than MAX_PLAN_BYTES, is not UTF-8, or its real path (after symlinks,
    ``plans/`` itself included) is outside the repository."""
    try:
        return read_text(path, root=root, limit=MAX_PLAN_BYTES)
    except FileError as err:
        raise FileError(f"{_relative(root, path)}: {str(err).removeprefix(f'{path}: ')}") from None


def load_files(
    root: Path, paths: list[Path] | None = None, unreadable: list[str] | None = None, *, cache: Cache | None = None
) -> list[PlanFile]:
    """Read and parse plan files (all of them by default), through ``cache`` (the command's; None: the
    repository's cache read, nothing kept). Loading all of them hands the parses to ``cache`` when they changed.

    A file that cannot be read (see :func:`read_plan_text`) raises FileError, or, when ``unreadable`` is
    given, is skipped and listed there as ``path: reason`` (lint reports it and checks the others).
    """
    store = Cache(root) if cache is None else cache
    cached = _read_cache(store)
    fresh: dict[str, Any] = {}
    out: list[PlanFile] = []
    for path in plan_paths(root) if paths is None else paths:
        rel = _relative(root, path)
        try:
            text = read_plan_text(root, path)
        except FileError as err:
            if unreadable is None:
                raise
            unreadable.append(str(err))
            continue
        digest = sha256_hex(text.encode("utf-8"))
        hit = _cached(cached.get(rel), rel, text, digest)
        if hit is not None:
            out.append(hit)
            fresh[rel] = cached[rel]
            continue
        from tracker.plans.parse import parse_plan  # cold path only: markdown-it-py + pydantic

        plan, problems = parse_plan(rel, text)
        out.append(PlanFile(rel, text, plan, problems))
        fresh[rel] = {"sha": digest, "plan": to_plain(plan) if plan else None, "problems": problems}
    if paths is None and fresh != cached:
        store.put(CACHE, cache_identity(), fresh)
    return out


class InvalidPlan(NamedTuple):
    """A plan file that commands cannot use: its path, the plan id it claims (None when not even that
    validated) and every problem that makes it invalid (``path:line: message``, or ``path: reason`` when
    it cannot be read)."""

    path: str
    id: str | None
    problems: list[str]


class PlanSet(NamedTuple):
    """Every plan file, split into what a read-only command can show and what it must report.

    ``plans``: the valid plans (no problem of their own), safe to derive statuses from. A dependency on a
    phase of an invalid plan is not one of their problems: it stays unresolved, so the depending phase is
    ``blocked`` by it unless its own gates make it done (docs/reference.md, precedence), which is true whatever the
    invalid plan will say once fixed. ``invalid``: the files that are not, each with its problems.
    ``problems``: every problem, as :func:`load_plans` raises them; ``unreadable``: the files that could
    not be read (FileError, exit 8), also listed in ``invalid``.
    """

    files: list[PlanFile]
    plans: list[Plan]
    invalid: list[InvalidPlan]
    problems: list[str]
    unreadable: list[str]

    def error(self) -> FileError | PlanError | None:
        """What :func:`load_plans` raises for this set: the first unreadable file (exit 8), else every
        problem (exit 2); None when every plan is valid."""
        if self.unreadable:
            return FileError(self.unreadable[0])
        return PlanError(self.problems) if self.problems else None


def load_plan_set(root: Path, *, cache: Cache | None = None) -> PlanSet:
    """Every plan file, valid or not (:class:`PlanSet`): ``status`` shows the valid plans and reports the rest.

    A plan file is invalid when it cannot be read, has a problem of its own, or a problem across plans is
    reported in it (a cycle, an unknown dependency, a duplicate id: both files with that id, since either
    could be the one dependencies mean). An unknown dependency into a plan id that an invalid file claims
    (in its ``plan`` block or its name) is that file's problem, not this one's: the phase is blocked by it.
    ``cache``: as :func:`load_files`.
    """
    unreadable: list[str] = []
    files = load_files(root, unreadable=unreadable, cache=cache)
    parsed = [f.plan for f in files if f.plan is not None]
    cross = cross_plan_findings(parsed)
    own: dict[str, list[str]] = {f.path: list(f.problems) for f in files}
    ids = {f.path: f.plan.id if f.plan is not None else None for f in files}
    # load_files reads plan_paths in order and lists the files it could not read in that order.
    missing = (
        [rel for rel in (_relative(root, path) for path in plan_paths(root)) if rel not in own] if unreadable else []
    )
    broken = [path for path, problems in own.items() if problems] + missing
    broken_ids = {ids.get(path) for path in broken} | {path.rsplit("/", 1)[-1][:4] for path in broken}
    for c in cross:
        if c.into is None or c.into not in broken_ids:
            own[c.path].append(c.message)
        if c.also is not None:  # a duplicate id: the first file with it is as ambiguous as the later one
            own[c.also].append(c.message)
    invalid = [InvalidPlan(f.path, ids[f.path], own[f.path]) for f in files if own[f.path]]
    invalid += [InvalidPlan(path, None, [message]) for path, message in zip(missing, unreadable, strict=False)]
    invalid.sort(key=lambda i: i.path)
    plans = [f.plan for f in files if f.plan is not None and not own[f.path]]
    problems = [p for f in files for p in f.problems] + [c.message for c in cross]
    return PlanSet(files, plans, invalid, problems, unreadable)


def load_plans(root: Path, *, cache: Cache | None = None) -> tuple[list[PlanFile], list[Plan]]:
    """Every plan file and plan, or PlanError listing every problem (file-level and cross-plan); FileError
    for a plan file that cannot be read. For commands that write (``update``, ``verify``, ``signoff``,
    ``gc``) or judge (``check``): a status derived from part of the plans could differ from the whole's.
    ``cache``: as :func:`load_files`."""
    plan_set = load_plan_set(root, cache=cache)
    err = plan_set.error()
    if err is not None:
        raise err
    return plan_set.files, plan_set.plans
