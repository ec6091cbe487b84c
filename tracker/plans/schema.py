"""Validation of ``plan`` / ``phase`` blocks with pydantic, and the published JSON Schema.

Only the cold path imports this module (a plan file whose content is not in the parse cache,
``tracker lint``, ``tracker schema``): pydantic's import alone costs ~170 ms.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from tracker.base.globs import glob_problem
from tracker.base.selection import compile_marker, gate_options_problem
from tracker.core.model import BenchGate, Gate, ManualGate, TestGate

PLAN_ID = r"^[0-9]{4}$"
PHASE_ID = r"^[A-Za-z][A-Za-z0-9_.-]*$"
DEPENDENCY = r"^([0-9]{4}/)?[A-Za-z][A-Za-z0-9_.-]*$"
Scalar = str | int | float | bool


# Errors of the tracker's own rules: their message names what is wrong itself (no ``key:`` prefix).
PLAN_RULE = "plan_rule"


def _rule(check: Any) -> AfterValidator:
    """A pydantic validator from ``check(value) -> message or None`` (a message is a plan problem)."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem is not None:
            raise PydanticCustomError(PLAN_RULE, "{detail}", {"detail": problem})
        return value

    return AfterValidator(validate)


def marker_problem(expr: str) -> str | None:
    """Why ``expr`` cannot be a gate's ``-m`` expression (pytest's grammar, see tracker.base.selection), or None."""
    if not expr.strip(" \t"):
        return f"invalid -m expression {expr!r}: it is blank, and an empty expression selects no test"
    try:
        compile_marker(expr)
    except ValueError as err:
        return str(err)
    return None


def gate_path_problem(arg: str) -> str | None:
    """Why ``arg`` cannot be a test gate's pytest argument, or None.

    Only the file part (before ``::``) is a path: parametrize ids (``test_x[a/../b]``) may hold anything.
    It must name something inside the repository (collecting imports the code it names, and its
    ``conftest.py`` files): not absolute, not ``~``, no ``..`` climbing out. It is not an option
    (``-p plugin`` would load code) and holds no control character.
    """
    bad = next((ch for ch in arg if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        return f"test {arg!r} holds a control character ({bad!r})"
    if arg.startswith("-"):
        return f"test {arg!r} starts with '-': a test gate names a path or node id, not a pytest option"
    file = arg.split("::", 1)[0]
    normal = posixpath.normpath(file) if file else "."
    if file.startswith(("/", "~")) or normal == ".." or normal.startswith("../"):
        return f"test path {file!r} is outside the repository (a test gate runs only the repository's own tests)"
    return None


def finite_values(key: str) -> Any:
    """A rule for a ``where``/``baseline`` table: no NaN or infinite value. A result's parameters are finite JSON
    numbers and NaN equals nothing, itself included, so such a gate could never be met (and a NaN made the parsed
    plan unequal to itself)."""

    def check(table: dict[str, Any] | None) -> str | None:
        values = table or {}
        bad = next((k for k, v in values.items() if isinstance(v, float) and v - v != 0), None)
        if bad is None:
            return None
        return f"{key}.{bad} = {values[bad]!r}: not a finite number (no result's parameter equals it)"

    return _rule(check)


class _Block(BaseModel):
    # Unknown keys are errors (a typo must not silently drop a gate); TOML is typed, so no coercion.
    model_config = ConfigDict(extra="forbid", strict=True)


class PlanBlock(_Block):
    """The single ``plan`` block of a plan file."""

    id: Annotated[str, Field(pattern=PLAN_ID, description='Four digits, the file\'s number: "0002".')]
    title: Annotated[str, Field(min_length=1)]
    milestone: str | None = None


class TestGateModel(_Block):
    """``test``: any pytest argument (node id, file, directory); ``marker``: an optional -m expression."""

    __test__ = False

    test: Annotated[str, Field(min_length=1), _rule(gate_path_problem)]
    marker: Annotated[str, Field(min_length=1), _rule(marker_problem)] | None = None
    skips_allowed: list[Annotated[str, Field(min_length=1)]] = []
    options: Annotated[list[str], _rule(gate_options_problem)] = []
    xfails_allowed: list[Annotated[str, Field(min_length=1)]] = []

    @field_validator("skips_allowed", "xfails_allowed")
    @classmethod
    def _skips_on_many(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if value and "::" in str(info.data.get("test", "")):
            what, one = ("skip", "a skip") if info.field_name == "skips_allowed" else ("xfail", "an xfail")
            why = f"a gate naming one test by id allows no {what} ({one} never passes it): name its file or directory"
            raise PydanticCustomError(PLAN_RULE, "{detail}", {"detail": f"{info.field_name}: {why}"})
        return value


class ManualGateModel(_Block):
    """Satisfied only by a recorded sign-off (``tracker signoff``)."""

    manual: Annotated[str, Field(min_length=1)]


class BenchGateModel(_Block):
    """A benchmark threshold on a metric of the shared benchmark result schema (issue 4)."""

    bench: Annotated[str, Field(min_length=1)]
    where: Annotated[dict[str, Scalar], finite_values("where")] = {}
    baseline: Annotated[dict[str, Scalar], finite_values("baseline")] | None = None
    at_least: Annotated[float, Field(allow_inf_nan=False)] | None = None
    at_most: Annotated[float, Field(allow_inf_nan=False)] | None = None
    stat: Literal["median", "min", "mean", "p90"] = "median"
    min_samples: Annotated[int, Field(ge=1)] | None = None
    hardware: Annotated[str, Field(min_length=1)] | None = None
    run: Annotated[str, Field(min_length=1)] | None = None
    confidence: Annotated[float, Field(gt=0, lt=1)] | None = None
    unit: Annotated[str, Field(min_length=1, max_length=40)] | None = None

    @model_validator(mode="after")
    def _one_threshold(self) -> BenchGateModel:
        if (self.at_least is None) == (self.at_most is None):
            raise ValueError("exactly one of 'at_least' or 'at_most' is required")
        return self


class PhaseBlock(_Block):
    """A ``phase`` block: what it covers (``paths``), what it needs (``depends``), its gates."""

    id: Annotated[str, Field(pattern=PHASE_ID)]
    title: Annotated[str, Field(min_length=1)]
    depends: list[Annotated[str, Field(pattern=DEPENDENCY)]] = []
    paths: list[Annotated[str, Field(min_length=1), _rule(glob_problem)]] = []
    exact: bool = False  # its gates check the text itself: every byte of a covered file counts, comments too
    gate: list[TestGateModel | ManualGateModel | BenchGateModel] = []


_GATE_MODELS: dict[str, type[_Block]] = {"test": TestGateModel, "manual": ManualGateModel, "bench": BenchGateModel}


def json_schema() -> dict[str, Any]:
    """JSON Schema of both block kinds, for editors (``tracker schema``).

    ``$defs.plan`` and ``$defs.phase`` are the two entry points; every ``$ref`` resolves against
    this document's root.
    """
    from pydantic.json_schema import models_json_schema

    _, top = models_json_schema([(PlanBlock, "validation"), (PhaseBlock, "validation")], ref_template="#/$defs/{model}")
    defs = dict(top["$defs"])
    defs["plan"] = {"$ref": "#/$defs/PlanBlock"}
    defs["phase"] = {"$ref": "#/$defs/PhaseBlock"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tracker plan blocks",
        "description": "A plan file holds one `plan` block and any number of `phase` blocks (TOML bodies).",
        "$defs": defs,
    }


Loc = tuple[str | int, ...]
Problem = tuple[Loc, str]


def _dotted(loc: Loc) -> str:
    return ".".join(f"[{x}]" if isinstance(x, int) else x for x in loc).replace(".[", "[")


def unknown_key(key: str, known: Iterable[str] = ()) -> str:
    """``unknown key 'titl' (did you mean 'title'?)``: the closest of the ``known`` keys, when one is close."""
    import difflib

    close = difflib.get_close_matches(key, list(known), n=1)
    return f"unknown key '{key}'" + (f" (did you mean '{close[0]}'?)" if close else "")


def _problems(err: ValidationError, prefix: Loc = (), known: Iterable[str] = ()) -> list[Problem]:
    """Each error as (location for the line lookup, message naming the key inside the block or gate); an unknown
    top-level key names the closest of the ``known`` ones."""
    out: list[Problem] = []
    for e in err.errors():
        rel = tuple(x for x in e["loc"] if not (isinstance(x, str) and x.endswith("]")))
        key = _dotted(rel)
        if e["type"] == PLAN_RULE:
            msg = e["msg"]
        elif e["type"] == "extra_forbidden":
            msg = unknown_key(key, known if len(rel) == 1 else ())
        elif e["type"] == "missing":
            msg = f"missing required key '{key}'"
        else:
            msg = e["msg"].removeprefix("Value error, ")
            msg = f"{key}: {msg}" if key else msg
        out.append((prefix + rel, msg))
    return out


def problems_of(err: ValidationError, prefix: Loc = ()) -> list[Problem]:
    """A validation error as (location, message) problems, as plan blocks report them (for other block kinds)."""
    return _problems(err, prefix)


def _salvage(data: dict[str, Any], problems: list[Problem], defaults: dict[str, Any]) -> dict[str, Any] | None:
    """The keys of an invalid block that did validate (bad ones get their default; bad list items
    are dropped), so lint still checks dependencies and gates of a block with one typo. None when
    the block's ``id`` is unusable."""
    bad = {loc[:2] for loc, _ in problems if loc}
    out: dict[str, Any] = {}
    for key, default in defaults.items():
        value = data.get(key, default)
        if (key,) in bad:
            value = default
        elif isinstance(value, list):
            value = [v for i, v in enumerate(value) if (key, i) not in bad]
        out[key] = value
    return out if out["id"] is not None else None


def validate_plan(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Validate a ``plan`` block's TOML table: (plain fields, problems with key locations).

    With problems the fields are what validated (see :func:`_salvage`), None without a valid id.
    """
    try:
        block = PlanBlock.model_validate(data)
    except ValidationError as err:
        problems = _problems(err, (), PlanBlock.model_fields)
        return _salvage(data, problems, {"id": None, "title": "", "milestone": None}), problems
    return block.model_dump(), []


def validate_gate(data: Any, index: int) -> tuple[Gate | None, list[Problem]]:
    """Validate one ``[[gate]]`` table, dispatching on which of test/manual/bench it has."""
    where: Loc = ("gate", index)
    if not isinstance(data, dict):
        return None, [(where, "a gate must be a table ([[gate]])")]
    kinds = [k for k in _GATE_MODELS if k in data]
    if len(kinds) != 1:
        found = ", ".join(f"'{k}'" for k in kinds) or "none"
        known = {f for m in _GATE_MODELS.values() for f in m.model_fields}
        unknown = [((*where, k), unknown_key(k, sorted(known))) for k in data if k not in known]
        return None, [(where, f"a gate needs exactly one of 'test', 'manual', 'bench' (found {found})"), *unknown]
    try:
        model = _GATE_MODELS[kinds[0]].model_validate(data)
    except ValidationError as err:
        return None, _problems(err, where, _GATE_MODELS[kinds[0]].model_fields)
    fields = model.model_dump()
    gate: Gate
    if isinstance(model, TestGateModel):
        gate = TestGate(
            **{
                **fields,
                "skips_allowed": tuple(model.skips_allowed),
                "options": tuple(model.options),
                "xfails_allowed": tuple(model.xfails_allowed),
            }
        )
    elif isinstance(model, ManualGateModel):
        gate = ManualGate(**fields)
    else:
        gate = BenchGate(**fields)
    return gate, []


def validate_phase(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[tuple[int, Gate]], list[Problem]]:
    """Validate a ``phase`` block: (plain fields without gates, valid gates, problems).

    Each gate comes with its 0-based index among the block's gates, invalid ones included, so
    messages and lines keep the gate's real position. With problems the fields are what
    validated (see :func:`_salvage`), None without a valid id.
    """
    gates_raw = data.get("gate", [])
    rest = {k: v for k, v in data.items() if k != "gate"}
    problems: list[Problem] = []
    fields: dict[str, Any] | None = None
    try:
        fields = PhaseBlock.model_validate(rest).model_dump(exclude={"gate"})
    except ValidationError as err:
        problems.extend(_problems(err, (), PhaseBlock.model_fields))
        fields = _salvage(rest, problems, {"id": None, "title": "", "depends": [], "paths": [], "exact": False})
    gates: list[tuple[int, Gate]] = []
    if not isinstance(gates_raw, list):
        problems.append((("gate",), "'gate' must be an array of tables ([[gate]])"))
        gates_raw = []
    for i, raw in enumerate(gates_raw):
        gate, errs = validate_gate(raw, i)
        problems.extend(errs)
        if gate is not None:
            gates.append((i, gate))
    return fields, gates, problems
