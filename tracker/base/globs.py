"""Phases' ``paths`` globs: validating one (:func:`glob_problem`, plan validation reports it at its line) and matching
a path against one in time linear in the path (:class:`Glob`, :func:`compile_glob`). Standard library only.

Matching simulates the glob's automaton over the path with one integer as the set of live states (bit k: "the first
k pattern positions matched"), so it costs O(len(path) * len(pattern) / 64) whatever the pattern: no backtracking,
unlike a regex with several ``[^/]*`` (``*a*a*a*...b`` took minutes that way).
"""

from __future__ import annotations

import re
from functools import lru_cache

_LIT, _ANY, _CLASS, _STAR, _DSTAR, _DSTAR_SLASH = "lit", "any", "class", "*", "**", "**/"
# Runs of wildcards that can match the empty string, merged into one that matches the same strings, so the
# automaton's empty moves stay short: e.g. ``[^/]*`` then ``.*`` is ``.*``; ``(|.*/)`` then ``[^/]*`` is ``.*``.
_MERGE = {
    (_STAR, _STAR): _STAR,
    (_STAR, _DSTAR): _DSTAR,
    (_DSTAR, _STAR): _DSTAR,
    (_DSTAR, _DSTAR): _DSTAR,
    (_DSTAR, _DSTAR_SLASH): _DSTAR,
    (_DSTAR_SLASH, _DSTAR): _DSTAR,
    (_DSTAR_SLASH, _DSTAR_SLASH): _DSTAR_SLASH,
    (_DSTAR_SLASH, _STAR): _DSTAR,
}


class _Class:
    """A ``[...]`` class: one character (never ``/``) in ``chars`` or a range, or not in them with ``!``/``^``."""

    def __init__(self, negated: bool, chars: frozenset[str], ranges: tuple[tuple[str, str], ...]) -> None:
        self.negated, self.chars, self.ranges = negated, chars, ranges

    def matches(self, ch: str) -> bool:
        inside = ch in self.chars or any(lo <= ch <= hi for lo, hi in self.ranges)
        return ch != "/" and inside is not self.negated


def _class_at(pattern: str, i: int) -> tuple[_Class, int, str | None] | None:
    """The class starting at ``pattern[i] == "["``: (class, index after it, problem or None); None when no
    ``]`` closes it (the ``[`` is then a literal). A ``]`` right after ``[`` or ``[!`` is a member."""
    j = i + 1
    negated = pattern[j : j + 1] in ("!", "^")
    j += negated
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    problem = None
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            if "/" in chars or any(lo <= "/" <= hi for lo, hi in ranges):
                problem = (
                    f"a [...] class cannot match '/' (in {pattern[i : j + 1]!r}): '*', '?' and classes stay "
                    "inside one directory"
                )
            return _Class(negated, frozenset(chars), tuple(ranges)), j + 1, problem
        first = False
        if pattern[j + 1 : j + 2] == "-" and j + 2 < len(pattern) and pattern[j + 2] != "]":
            lo, hi = c, pattern[j + 2]
            if lo > hi:
                problem = problem or f"bad range {lo}-{hi} in a [...] class (it matches nothing)"
            ranges.append((lo, hi))
            j += 3
        else:
            chars.add(c)
            j += 1
    return None


def _glob_tokens(pattern: str) -> tuple[list[tuple[str, object]], list[str]]:
    """(tokens, problems): ``**/``, ``**``, ``*``, ``?``, classes and literal characters."""
    if pattern.endswith("/"):
        pattern += "**"
    tokens: list[tuple[str, object]] = []
    problems: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            tok: tuple[str, object] = (_DSTAR_SLASH, None)
            i += 3
        elif pattern.startswith("**", i):
            tok, i = (_DSTAR, None), i + 2
        elif c == "*":
            tok, i = (_STAR, None), i + 1
        elif c == "?":
            tok, i = (_ANY, None), i + 1
        elif c == "[" and (found := _class_at(pattern, i)) is not None:
            cls, i, problem = found
            tok = (_CLASS, cls)
            if problem:
                problems.append(problem)
        else:
            if c == "[":
                problems.append(f"unterminated [ at column {i + 1} (write [[] for a literal '[')")
            tok, i = (_LIT, c), i + 1
        while tokens and (merged := _MERGE.get((tokens[-1][0], tok[0]))) is not None:
            tokens.pop()
            tok = (merged, None)
        tokens.append(tok)
    return tokens, problems


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid ``paths`` glob, or None: plan validation reports it at its line.

    A glob is relative to the repository root and stays inside it (no leading ``/``, no ``.`` or ``..``
    segment, no empty segment), holds no control character, and its ``[...]`` classes are closed, have
    valid ranges and cannot match ``/``.
    """
    if not pattern:
        return "empty glob"
    if pattern.startswith("/"):
        return f"glob {pattern!r} is absolute: globs are relative to the repository root"
    bad = next((ch for ch in pattern if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        return f"glob {pattern!r} holds a control character ({bad!r})"
    segments = (pattern[:-1] if pattern.endswith("/") else pattern).split("/")
    if any(s in (".", "..") for s in segments):
        return (
            f"glob {pattern!r} has a '.' or '..' segment: globs are relative to the repository root and stay inside it"
        )
    if "" in segments:
        return f"glob {pattern!r} has an empty path segment ('//')"
    problems = _glob_tokens(pattern)[1]
    return f"glob {pattern!r}: {problems[0]}" if problems else None


class Glob:
    """A compiled ``paths`` glob: ``match(path)`` in time linear in the path (see the section comment).

    ``*`` and ``?`` match within one directory (not ``/``), ``**`` matches anything (``/`` included),
    ``**/`` matches nothing or anything ending in ``/``, ``[...]`` one character (never ``/``), a trailing
    ``/`` means everything below. Patterns that validation refuses still compile (an unterminated ``[``
    is literal, a bad range matches nothing): matching never raises.
    """

    _MEMO_LIMIT = 4096  # per-character masks kept per glob (paths use few distinct characters)

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._lits: dict[str, int] = {}  # character -> positions where the pattern has that literal
        self._any = 0  # positions of ``?``
        self._classes: list[tuple[int, _Class]] = []
        self._loop_any = 0  # states that ``**`` keeps alive on any character
        self._loop_dir = 0  # states that ``*`` keeps alive on any character but ``/``
        self._empty1 = 0  # positions that can match nothing (``*``, ``**``): k -> k + 1
        self._empty2 = 0  # ``**/`` groups, which can match nothing: k -> k + 2
        k = 0
        for kind, arg in _glob_tokens(pattern)[0]:
            bit = 1 << k
            if kind == _LIT:
                assert isinstance(arg, str)  # a literal token's argument is its character
                self._lits[arg] = self._lits.get(arg, 0) | bit
            elif kind == _ANY:
                self._any |= bit
            elif kind == _CLASS:
                self._classes.append((bit, arg))  # type: ignore[arg-type]
            elif kind == _STAR:
                self._loop_dir |= bit << 1
                self._empty1 |= bit
            else:  # ``**`` is position k; ``**/`` is ``**`` at k, then a literal ``/`` at k + 1, or nothing
                self._loop_any |= bit << 1
                self._empty1 |= bit
                if kind == _DSTAR_SLASH:
                    self._empty2 |= bit
                    self._lits["/"] = self._lits.get("/", 0) | bit << 1
                    k += 1
            k += 1
        self._final = 1 << k
        self._memo: dict[str, tuple[int, int]] = {}

    def _masks(self, ch: str) -> tuple[int, int]:
        """(positions that consume ``ch`` and advance, states that stay alive on ``ch``)."""
        hit = self._memo.get(ch)
        if hit is not None:
            return hit
        advance = self._lits.get(ch, 0)
        if ch != "/":
            advance |= self._any
        for bit, cls in self._classes:
            if cls.matches(ch):
                advance |= bit
        masks = (advance, self._loop_any | (self._loop_dir if ch != "/" else 0))
        if len(self._memo) < self._MEMO_LIMIT:
            self._memo[ch] = masks
        return masks

    def _closure(self, states: int) -> int:
        """``states`` plus every state reachable by matching nothing (short: runs of wildcards are merged)."""
        while True:
            more = states | ((states & self._empty1) << 1) | ((states & self._empty2) << 2)
            if more == states:
                return states
            states = more

    def match(self, path: str) -> bool:
        """Does the whole of ``path`` match?"""
        empty = self._empty1 | self._empty2
        states = self._closure(1)
        for ch in path:
            advance, stay = self._masks(ch)
            states = ((states & advance) << 1) | (states & stay)
            if not states:
                return False
            if states & empty:
                states = self._closure(states)
        return bool(states & self._final)


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """The compiled glob (cached: phases share their patterns)."""
    return Glob(pattern)


_WILDCARD = re.compile(r"[*?\[]")


def literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard: every match starts with it."""
    m = _WILDCARD.search(pattern)
    return pattern if m is None else pattern[: m.start()]
