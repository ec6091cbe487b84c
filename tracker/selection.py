"""Which tests a test gate selects: pytest arguments and ``-m`` expressions, matched on node ids.

Standard library only: :mod:`tracker.pytest_plugin` uses it to run exactly the gates' tests in one
session, and :mod:`tracker.testgate` uses it to read the same selection back from evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MARK_TOKEN = re.compile(r"\s*(\(|\)|[A-Za-z_][A-Za-z0-9_]*)")


def marker_matches(expr: str | None, markers: Sequence[str]) -> bool:
    """Evaluate a pytest ``-m`` expression (names, and/or/not, parentheses) against marker names.

    Raises ValueError on anything else, so lint can report it.
    """
    if expr is None:
        return True
    pos, out, names = 0, [], set(markers)
    while pos < len(expr.rstrip()):
        m = _MARK_TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"invalid marker expression {expr!r} at column {pos + 1}")
        tok = m.group(1)
        out.append(tok if tok in ("(", ")", "and", "or", "not") else str(tok in names))
        pos = m.end()
    try:
        return bool(eval(" ".join(out) or "True", {"__builtins__": {}}, {}))  # tokens are only bools/ops
    except SyntaxError:
        raise ValueError(f"invalid marker expression {expr!r}") from None


def selects(arg: str, nodeid: str) -> bool:
    """Does pytest argument ``arg`` (node id, file or directory) select test ``nodeid``?"""
    arg = arg.removeprefix("./").rstrip("/")
    if "::" not in nodeid and (arg == nodeid or arg.startswith((nodeid + "::", nodeid + "/"))):
        return True  # a file/directory-level record (a collection error) covers what is inside it
    if "::" in arg:
        return nodeid == arg or nodeid.startswith((arg + "::", arg + "["))
    file = nodeid.split("::", 1)[0]
    return file == arg or file.startswith(arg + "/") or arg in ("", ".")
