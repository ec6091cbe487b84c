"""Validation of ``results`` blocks (generated results tables in Markdown docs) with pydantic.

A ``results`` block declares a table; :mod:`tracker.report.doc_tables` finds the blocks and renders the tables.
Only the cold path imports this module (a block whose validation is not cached): pydantic's import alone costs
~170 ms. The rules follow the ``phase`` blocks' (:mod:`tracker.plans.schema`): unknown keys are errors, TOML types are
not coerced, and every problem names its key so that it can be put at its line.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracker.plans.schema import Problem, Scalar, finite_values, problems_of

MAX_DIGITS = 6  # fixed decimals beyond this say nothing a benchmark measured
Name = Annotated[str, Field(min_length=1)]


class _Block(BaseModel):
    # Unknown keys are errors (a typo must not silently drop a column); TOML is typed, so no coercion.
    model_config = ConfigDict(extra="forbid", strict=True)


class SecondModel(_Block):
    """A second metric of the same cases, shown in parentheses after each value."""

    metric: Name
    percent: bool = False


class ResultsBlockModel(_Block):
    """A ``results`` block: which cases of which benchmark, laid out how (docs/reference.md, "Generated results
    tables")."""

    benchmark: Name
    metric: Name
    where: Annotated[dict[str, Scalar], finite_values("where")] = {}
    hardware: Name | None = None
    rows: Annotated[list[Name], Field(min_length=1)]
    columns: Name | None = None
    values: dict[str, Annotated[list[Scalar], Field(min_length=1)]] = {}
    labels: dict[str, str] = {}
    stat: Literal["median", "min", "mean", "p90"] = "median"
    digits: Annotated[int, Field(ge=0, le=MAX_DIGITS)] | None = None
    second: SecondModel | None = None


def _layout_problems(block: ResultsBlockModel) -> list[Problem]:
    """What the keys say together that no single key can be checked for (each at the key that shows it)."""
    out: list[Problem] = []
    keys = [*block.rows, *([block.columns] if block.columns else [])]
    for i, name in enumerate(keys):
        where = ("rows",) if i < len(block.rows) else ("columns",)
        if name in keys[:i]:
            out.append((where, f"parameter '{name}' is named twice in rows and columns"))
        elif name in block.where:
            out.append((where, f"parameter '{name}' is fixed by 'where': it cannot be laid out in rows or columns"))
    for name, listed in block.values.items():
        if name not in keys:
            out.append((("values",), f"values.{name}: '{name}' is not a parameter of rows or columns"))
            continue
        bad = next((v for v in listed if isinstance(v, float) and v - v != 0), None)
        if bad is not None:
            out.append((("values",), f"values.{name}: {bad!r} is not a finite number (no parameter equals it)"))
            continue
        typed = [(type(v).__name__, v) for v in listed]
        twice = next((v for i, (t, v) in enumerate(typed) if (t, v) in typed[:i]), None)
        if twice is not None:
            out.append((("values",), f"values.{name}: {twice!r} is listed twice"))
    if block.second is not None and block.second.metric == block.metric:
        out.append((("second",), f"second.metric: '{block.metric}' is the table's own metric"))
    return out


def validate_table(data: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Validate a ``results`` block's TOML table: (plain fields, []) or (None, problems with key locations)."""
    try:
        block = ResultsBlockModel.model_validate(data)
    except ValidationError as err:
        return None, problems_of(err)
    problems = _layout_problems(block)
    return (None, problems) if problems else (block.model_dump(), [])
