"""Which tests a test gate selects: pytest arguments and ``-m`` expressions, matched on node ids.

Standard library only: :mod:`tracker.pytest_plugin` uses it to run exactly the gates' tests in one
session, and :mod:`tracker.core.testgate` uses it to read the same selection back from evidence.

``-m`` expressions follow pytest's own grammar (``_pytest.mark.expression``): identifiers are runs of
word characters and ``: + - . [ ] \\ /`` (so ``a-b`` is one marker name), ``not`` binds tighter than
``and``, ``and`` tighter than ``or``, spaces and tabs separate tokens, an empty expression selects
nothing. Two differences, both refusals: keyword arguments (``gpu(arch=90)``) are not supported,
because evidence records marker names only, and nesting deeper than :data:`MAX_MARKER_DEPTH` is refused.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, NoReturn

# pytest's identifier: ``(:?\w|:|\+|-|\.|\[|\]|\\|/)+`` (the ``:?`` adds nothing to the character set).
_IDENT = re.compile(r"(?:\w|[:+\-.\[\]\\/])+")
_KEYWORDS = ("or", "and", "not")
MAX_MARKER_DEPTH = 50  # parentheses and ``not``s nested in one expression (bounds the recursion)

# A compiled expression: a marker name, ("not", x), ("and", (x, y, ...)), ("or", (x, y, ...)), or False
# (empty). Chains of and/or are flat, so the tree is never deeper than the nesting of ( and not.
Node = str | bool | tuple[str, Any]  # ("not", Node) or ("and"/"or", tuple[Node, ...]): told apart by [0]


class _Tokens:
    """pytest's scanner: ``( ) = ,``, strings, ``or``/``and``/``not``, identifiers, end of input."""

    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.items: list[tuple[str, str, int]] = []  # (kind, text, position); kind: ( ) = , string or and not ident end
        pos = 0
        while pos < len(expr):
            ch = expr[pos]
            if ch in " \t":
                pos += 1
            elif ch in "()=,":  # = and , (and strings) only occur in keyword arguments, refused by the parser
                self.items.append((ch, ch, pos))
                pos += 1
            elif ch in "'\"":
                end = expr.find(ch, pos + 1)
                if end == -1:
                    self.fail(f"closing quote {ch} is missing", pos)
                self.items.append(("string", expr[pos : end + 1], pos))
                pos = end + 1
            elif (m := _IDENT.match(expr, pos)) is not None:
                word = m.group(0)
                self.items.append((word if word in _KEYWORDS else "ident", word, pos))
                pos = m.end()
            else:
                self.fail(f"unexpected character {ch!r}", pos)
        self.items.append(("end", "", len(expr)))
        self.at = 0

    def fail(self, what: str, pos: int) -> NoReturn:
        raise ValueError(f"invalid -m expression {self.expr!r}: column {pos + 1}: {what}")

    def peek(self) -> str:
        return self.items[self.at][0]

    def take(self, kind: str) -> str | None:
        """The current token's text when it is of ``kind`` (and move on), else None."""
        k, text, _ = self.items[self.at]
        if k != kind:
            return None
        if k != "end":
            self.at += 1
        return text

    def expect(self, *kinds: str) -> NoReturn:
        _, text, pos = self.items[self.at]
        names = {"(": "left parenthesis", ")": "right parenthesis", "ident": "identifier", "end": "end of input"}
        got = names[self.peek()] if self.peek() in ("(", ")", "end") else repr(text)
        self.fail(f"expected {' or '.join(names.get(k, k) for k in kinds)}; got {got}", pos)


def _expr(t: _Tokens, depth: int) -> Node:
    terms = [_and(t, depth)]
    while t.take("or") is not None:
        terms.append(_and(t, depth))
    return terms[0] if len(terms) == 1 else ("or", tuple(terms))


def _and(t: _Tokens, depth: int) -> Node:
    terms = [_not(t, depth)]
    while t.take("and") is not None:
        terms.append(_not(t, depth))
    return terms[0] if len(terms) == 1 else ("and", tuple(terms))


def _not(t: _Tokens, depth: int) -> Node:
    if depth > MAX_MARKER_DEPTH:
        t.fail(f"nested more than {MAX_MARKER_DEPTH} levels deep", t.items[t.at][2])
    if t.take("not") is not None:
        return ("not", _not(t, depth + 1))
    if t.take("(") is not None:
        node = _expr(t, depth + 1)
        if t.take(")") is None:
            t.expect(")")
        return node
    name = t.take("ident")
    if name is None:
        t.expect("not", "(", "ident")
    if t.peek() == "(":
        t.fail(
            f"keyword arguments ({name}(...)) are not supported in a gate's marker: evidence records marker names only",
            t.items[t.at][2],
        )
    return name


@lru_cache(maxsize=1024)
def compile_marker(expr: str) -> Node:
    """Parse a ``-m`` expression as pytest does; ValueError (``invalid -m expression ...``) if pytest
    would refuse it, or it uses keyword arguments, or it nests deeper than MAX_MARKER_DEPTH."""
    t = _Tokens(expr)
    if t.take("end") is not None:
        return False  # pytest: the empty expression matches nothing
    node = _expr(t, 0)
    if t.take("end") is None:
        t.expect("end")
    return node


def _evaluate(node: Node, names: frozenset[str] | set[str]) -> bool:
    if isinstance(node, str):
        return node in names
    if isinstance(node, bool):
        return node
    if node[0] == "not":
        return not _evaluate(node[1], names)
    want = node[0] == "or"  # or: the first true term decides; and: the first false one
    for term in node[1]:
        if _evaluate(term, names) is want:
            return want
    return not want


def marker_matches(expr: str | None, markers: Sequence[str]) -> bool:
    """Does a test with these marker names match ``-m expr`` (None: no filter)? As pytest decides it.

    Raises ValueError on an expression pytest would refuse (see :func:`compile_marker`), so lint can report it.
    """
    if expr is None:
        return True
    return _evaluate(compile_marker(expr), set(markers))


@lru_cache(maxsize=4096)
def normalize_arg(arg: str) -> str:
    """A pytest argument as node ids spell it: its file part (before ``::``) normalized (``./t/../t/x.py/``
    -> ``t/x.py``, ``./`` -> ``.``); what follows ``::`` (parameter ids may hold ``/`` or ``..``) untouched."""
    file, sep, rest = arg.partition("::")
    file = posixpath.normpath(file) if file else file
    return file + sep + rest


def selects(arg: str, nodeid: str) -> bool:
    """Does pytest argument ``arg`` (node id, file or directory) select test ``nodeid``?"""
    arg = normalize_arg(arg)
    if "::" not in nodeid and (arg == nodeid or arg.startswith((nodeid + "::", nodeid + "/"))):
        return True  # a file/directory-level record (a collection error) covers what is inside it
    if "::" in arg:
        return nodeid == arg or nodeid.startswith((arg + "::", arg + "["))
    file = nodeid.split("::", 1)[0]
    return file == arg or file.startswith(arg + "/") or arg in ("", ".")


class NodeIndex:
    """Node ids, indexed so that which of them a pytest argument selects (:func:`selects`) is found by looking at
    the candidates only: node ids that start with the argument (every test it selects does), and file- or
    directory-level records (collection errors, no ``::``) the argument lies inside. Testing every node id against
    every gate made ``lint`` at 5,000 gates x 5,000 tests 25 million calls (over a minute). ``looked`` counts the
    node ids tested."""

    def __init__(self, nodeids: Sequence[str]) -> None:
        self.nodeids = list(nodeids)
        self._order = sorted(range(len(self.nodeids)), key=self.nodeids.__getitem__)
        self._sorted = [self.nodeids[i] for i in self._order]
        self._bare: dict[str, list[int]] = {}
        for i, nodeid in enumerate(self.nodeids):
            if "::" not in nodeid:
                self._bare.setdefault(nodeid, []).append(i)
        self.looked = 0

    def selected(self, arg: str) -> Iterator[int]:
        """Indices of the node ids ``arg`` selects, each once, in no particular order."""
        norm = normalize_arg(arg)
        if norm in ("", "."):
            candidates: Iterator[int] = iter(range(len(self.nodeids)))
        else:
            candidates = self._prefixed(norm)
        for i in candidates:
            self.looked += 1
            if selects(arg, self.nodeids[i]):
                yield i
        for cut in range(len(norm)):  # records of a file or directory that holds what arg names
            if norm.startswith(("::", "/"), cut):
                for i in self._bare.get(norm[:cut], ()):
                    self.looked += 1
                    if selects(arg, self.nodeids[i]):
                        yield i

    def _prefixed(self, prefix: str) -> Iterator[int]:
        pos = bisect.bisect_left(self._sorted, prefix)
        while pos < len(self._sorted) and self._sorted[pos].startswith(prefix):
            yield self._order[pos]
            pos += 1


# Files pytest may read its configuration from (ini options such as addopts and python_files): the first of them that
# holds a pytest section, in the folder of the run's arguments or above, is the ini file.
INI_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def config_paths(test: str) -> tuple[str, ...]:
    """The files of pytest's configuration that decide what a test gate's pytest argument ``test`` collects and how
    its tests run, as path patterns: every ``conftest.py`` and ini file (:data:`INI_NAMES`) in the root and each
    folder on the way to the gate's path, and every ``conftest.py`` below it (collect_ignore, a collection hook,
    fixtures). A change to one, or one added or removed, makes the gate's phase stale."""
    file = normalize_arg(test).split("::", 1)[0]
    parts = [] if file in ("", ".") else file.split("/")
    out = _on_the_way(parts, len(parts) + 1)
    out.append(f"{file}/**/conftest.py" if parts else "**/conftest.py")
    return tuple(out)


def gate_inputs(test: str) -> tuple[str, ...]:
    """The files a test gate's evidence depends on whatever its phase's ``paths`` say, as path patterns: the gate's
    own test file or directory (a test renamed away, a file deleted, an assertion edited) and pytest's configuration
    (:func:`config_paths`). A change to one makes the evidence stale (``status``) and not fresh (``verify``)."""
    test_path = normalize_arg(test).split("::", 1)[0].rstrip("/")
    own = () if test_path in ("", ".") else (test_path, test_path + "/")
    return (*own, *config_paths(test))


def conftests_of(file: str) -> tuple[str, ...]:
    """The ``conftest.py`` files that may decide what the test file ``file`` (a repository path) holds and whether it
    is collected: one in the root and in each folder on the way to it."""
    parts = file.split("/")
    return tuple(_on_the_way(parts, len(parts), ("conftest.py",)))


def _on_the_way(parts: list[str], depth: int, names: tuple[str, ...] = ("conftest.py", *INI_NAMES)) -> list[str]:
    out: list[str] = []
    for d in range(depth):
        folder = "/".join(parts[:d])
        out += [f"{folder}/{name}" if folder else name for name in names]
    return out


def plugin_names(args: list[str]) -> list[str]:
    """The plugins ``-p NAME`` / ``-pNAME`` / ``-p=NAME`` in pytest arguments ``args`` load (not ``-p no:NAME``)."""
    return [name for name in plugin_args(args) if not name.startswith("no:")]


def plugin_args(args: list[str]) -> list[str]:
    """Every ``-p`` value in pytest arguments ``args`` as pytest's early scan reads them
    (``PytestPluginManager.consider_preparse``): anywhere in the list, after ``--`` too (adversarial round 8: argparse
    takes ``-- -pno:warnings`` for a file, pytest's scan still blocks the plugin), ``no:NAME`` included."""
    out = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-p":
            if i >= len(args):
                break
            name, i = args[i], i + 1
        elif arg.startswith("-p"):
            name = arg[2:]
        else:
            continue
        name = name.strip().removeprefix("=").strip()
        if name:
            out.append(name)
    return out


GATE_OPTIONS = "--doctest-modules, --doctest-glob=PATTERN, --import-mode=prepend|append|importlib, -p PLUGIN"
_PLUGIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def gate_options_problem(options: list[str]) -> str | None:
    """Why ``options`` cannot be a test gate's pytest options, or None. Only options that add to what pytest collects
    or configure it alike on every run (:data:`GATE_OPTIONS`): one that may keep some of the gate's tests from being
    collected (``--ignore``, ``-k``, ``-o python_files=...``, ``-p no:NAME``, ...) would let the gate be met on the
    rest. ``-p`` takes its plugin as the next item; the others are one item each, a value after ``=``."""
    i = 0
    while i < len(options):
        item = options[i]
        if item == "-p" and i + 1 < len(options) and _PLUGIN_NAME.fullmatch(options[i + 1]):
            i += 2
            continue
        fine = (
            item == "--doctest-modules"
            or item in ("--import-mode=prepend", "--import-mode=append", "--import-mode=importlib")
            or (item.startswith("--doctest-glob=") and len(item) > 15 and item.isprintable())
        )
        if not fine:
            shown = f"-p {options[i + 1]}" if item == "-p" and i + 1 < len(options) else item
            return (
                f"options: {shown!r} is not an option a gate may carry: only options that add to what pytest collects "
                f"or configure it alike on every run ({GATE_OPTIONS}; -p names an installed plugin), never one that "
                "may keep the gate's tests from being collected"
            )
        i += 1
    return None
