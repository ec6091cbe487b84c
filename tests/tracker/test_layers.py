"""The tracker's house by layer: each folder of ``tracker/`` states its rule once, in its ``__init__`` (its ``LAYER``
and the ``LIBRARIES`` it may use), and these tests hold every module to its folder's rule; no import circles (lazy
imports inside functions included); the evaluating core reads no file; the pytest plugins import the standard
library's layer only (they run where only pytest is installed)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import tracker

PACKAGE = Path(tracker.__file__).parent
FOLDERS = sorted(
    p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file() and p.name not in ("commands", "plugin")
)
# Above the folders: the commands (one module each), then the command line (tracker/cli/, floor 8) and the entry; the pytest plugins stand
# on the ground floor alone.
COMMANDS_LAYER = 7
TOP = {"tracker.entry": 9, "tracker.__main__": 10}
PLUGINS = {"tracker.pytest_plugin", "tracker.pytest_boot", "tracker.pytest_argcheck"}
PLUGIN_PARTS = "tracker.plugin"  # the plugin's parts (tracker/plugin/): held to the plugins' rule
ANYWHERE = {"tracker", "tracker.errors"}  # the package's face (its version) and the errors every layer raises
READERS = {"tracker.base.fileio", "tracker.base.cache"}  # what the evaluating core never imports
# Modules a library ships beside its own name: importing one is using that library.
PARTS = {"pydantic_core": "pydantic", "markupsafe": "jinja2", "_pytest": "pytest"}
# The standard library, also where a newer Python names its accelerators otherwise (3.12's ``_sha2``, tried first).
STDLIB = set(sys.stdlib_module_names) | {"__future__", "_sha2"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(the tracker modules, the other top-level modules) a file imports anywhere in its body."""
    ours: set[str] = set()
    others: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                (ours if a.name.split(".")[0] == "tracker" else others).add(
                    a.name if a.name.startswith("tracker") else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "tracker" or node.module.startswith("tracker."):
                ours.add(node.module)
                ours |= {
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if (PACKAGE.parent / f"{node.module}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                    or (PACKAGE.parent / f"{node.module}.{a.name}".replace(".", "/")).is_dir()
                }
            else:
                others.add(node.module.split(".")[0])
    return ours, others


def imports() -> dict[str, set[str]]:
    """Module -> the tracker modules it imports anywhere in its body."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path)[0] if m in modules and m != name} for name, path in modules.items()}


def is_plugin(module: str) -> bool:
    """Is ``module`` one of the pytest plugins or of their parts (``tracker.plugin``)?"""
    return module in PLUGINS or module == PLUGIN_PARTS or module.startswith(PLUGIN_PARTS + ".")


def layer_of(module: str) -> int | None:
    """The layer a tracker module stands on (None: the package face, the errors, the plugins: held apart)."""
    parts = module.split(".")
    if module in ANYWHERE or is_plugin(module):
        return None
    if module in TOP:
        return TOP[module]
    if parts[1] == "commands":
        return COMMANDS_LAYER
    return int(importlib.import_module(f"tracker.{parts[1]}").LAYER)


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (circle := visit(nxt, [*path, nxt])) is not None:
                return circle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (circle := visit(start, [start])) is not None:
            return circle
    return None


def test_the_house_has_its_layer_folders() -> None:
    assert FOLDERS == ["base", "cli", "core", "git", "plans", "report", "store"], FOLDERS
    layers = [importlib.import_module(f"tracker.{f}").LAYER for f in FOLDERS]
    assert sorted([*layers, COMMANDS_LAYER]) == list(range(1, len(FOLDERS) + 2)), layers  # one floor each
    top = sorted(module_name(p) for p in PACKAGE.glob("*.py"))
    assert top == sorted({"tracker", "tracker.errors", *TOP, *PLUGINS}), top  # nothing else lives at the top


def test_no_import_circle() -> None:
    circle = find_circle(imports())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


@pytest.mark.parametrize("folder", [*FOLDERS, "commands"])
def test_every_module_keeps_its_folders_rule(folder: str) -> None:
    """A module imports the layers below its own and its own, and of other libraries only its folder's."""
    allowed = set(getattr(importlib.import_module(f"tracker.{folder}"), "LIBRARIES", ()))
    if folder == "commands":  # the commands stand on every folder and use what those do
        allowed = {lib for f in FOLDERS for lib in importlib.import_module(f"tracker.{f}").LIBRARIES} | {"pytest"}
    for path in sorted((PACKAGE / folder).glob("*.py")):
        name = module_name(path)
        ours, others = imports_of(path)
        mine = layer_of(name)
        assert mine is not None
        up = sorted(m for m in ours if (layer := layer_of(m)) is not None and layer > mine)
        assert not up, f"{name} (layer {mine}) imports {up} from above it"
        plugins = sorted(m for m in ours if is_plugin(m) and folder != "commands")
        assert not plugins, f"{name} imports the pytest plugins {plugins}"
        foreign = sorted(o for o in others - STDLIB if PARTS.get(o, o) not in allowed)
        assert not foreign, f"{name} imports {foreign}: its folder's LIBRARIES are {sorted(allowed)}"


def test_the_evaluating_core_reads_no_file() -> None:
    for path in sorted((PACKAGE / "core").glob("*.py")):
        ours, _ = imports_of(path)
        assert not ours & READERS, f"{module_name(path)} imports {sorted(ours & READERS)}: the core takes data"


def test_the_pytest_plugins_stand_on_the_ground_floor_alone() -> None:
    """Where only pytest is installed, the plugin still loads: it imports the standard library, pytest (pytest-xdist
    only inside a function), the errors and ``tracker.base``; so do its parts (``tracker/plugin/``), which import no top-level plugin module (the
    ``tracker.pytest_plugin`` a session imports afresh)."""
    parts = sorted(PACKAGE.joinpath("plugin").glob("*.py"))
    assert {p.name for p in parts} >= {"__init__.py", "recorder.py"}, parts
    files = {name: PACKAGE / f"{name.split('.')[1]}.py" for name in PLUGINS}
    files |= {module_name(path): path for path in parts}
    for name, path in sorted(files.items()):
        ours, others = imports_of(path)
        above = sorted(m for m in ours if m not in ANYWHERE and not is_plugin(m) and not m.startswith("tracker.base"))
        assert not above, f"{name} imports {above}"
        if name not in PLUGINS:
            assert not ours & PLUGINS, f"{name} imports {sorted(ours & PLUGINS)}"
        assert {PARTS.get(o, o) for o in others - STDLIB} <= {"pytest", *OPTIONAL}, others
        assert not top_level_imports(path) & OPTIONAL, f"{name} imports {sorted(OPTIONAL)} at its top"


# What the plugin may use where it is installed, imported inside the function that needs it (never at a module's
# top): the plugin loads without it. pytest-xdist's scheduler (tracker.plugin.xdist_schedule).
OPTIONAL = {"xdist"}


def top_level_imports(path: Path) -> set[str]:
    """The top-level modules a file imports in its module body (not inside a function or class)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_a_planted_circle_and_a_climb_are_found() -> None:
    graph = imports()
    graph["tracker.core.model"] = graph["tracker.core.model"] | {
        "tracker.cli.main"
    }  # the model importing the command line
    circle = find_circle(graph)
    assert circle is not None and "tracker.core.model" in circle and "tracker.cli.main" in circle
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None
    assert layer_of("tracker.cli.main") > layer_of("tracker.core.model")  # type: ignore[operator]
    assert layer_of("tracker.report.detail") > layer_of("tracker.store.derive")  # type: ignore[operator]
