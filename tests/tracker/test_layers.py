"""The tracker's imports run one way: no module imports, directly or through others, a module that imports it
back (lazy imports inside functions included), and the evaluating core reads no file."""

from __future__ import annotations

import ast
from pathlib import Path

import tracker

PACKAGE = Path(tracker.__file__).parent
# The evaluating core: plans and evidence in, statuses out. Readers hand it data; it never opens a file.
CORE = {"tracker.status", "tracker.testgate", "tracker.bench_verdict", "tracker.history", "tracker.pruning",
        "tracker.evidence_answers", "tracker.stats", "tracker.model", "tracker.timeline", "tracker.detail", "tracker.commit_summary"}  # fmt: skip
READERS = {"tracker.evidence", "tracker.result_files", "tracker.plans", "tracker.derive", "tracker.fileio",
           "tracker.cache", "tracker.bench_evaluator"}  # fmt: skip


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Module -> the tracker modules it imports anywhere in its body."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("tracker.")}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "tracker":
                    found |= {f"tracker.{a.name}" for a in node.names}
                elif node.module.startswith("tracker."):
                    found.add(node.module)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


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


def test_no_import_circle() -> None:
    circle = find_circle(imports())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_core_imports_no_reader_and_no_command() -> None:
    graph = imports()
    for name in sorted(CORE):
        bad = sorted(m for m in graph[name] if m in READERS or m.startswith("tracker.commands") or m == "tracker.cli")
        assert not bad, f"{name} imports {bad}: the evaluating core takes data, it does not read files"


def test_a_planted_circle_is_found() -> None:
    graph = imports()
    graph["tracker.model"] = graph["tracker.model"] | {"tracker.cli"}  # the model importing the command line
    circle = find_circle(graph)
    assert circle is not None and "tracker.model" in circle and "tracker.cli" in circle
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None
