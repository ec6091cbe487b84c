"""``tracker new TITLE``: a new numbered plan file from the bundled template."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import TextIO

from tracker.base.fileio import atomic_write
from tracker.errors import FileError, UsageError
from tracker.plans.load import plan_paths


def template_path(name: str = "plan.md") -> Path:
    """The bundled template: inside the installed package, else ``templates/`` of the checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "templates" / name, here.parent / "templates" / name):
        if candidate.is_file():
            return candidate
    raise FileError(f"template {name} not found (looked in {here / 'templates'} and {here.parent / 'templates'})")


# Latin letters (lower case) that NFKD does not decompose into ASCII plus accents.
_LATIN = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "ø": "o",
        "œ": "oe",
        "ł": "l",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "ı": "i",
        "ħ": "h",
        "ŧ": "t",
        "ŋ": "ng",
        "ĸ": "k",
    }
)


def slugify(title: str) -> str:
    """``"Verify kernel: sm_120!"`` -> ``"verify-kernel-sm-120"``; accented letters lose their accents
    (``"Défrag über"`` -> ``"defrag-uber"``), other scripts fall back to ``plan``."""
    plain = "".join(
        ch for ch in unicodedata.normalize("NFKD", title.lower().translate(_LATIN)) if not unicodedata.combining(ch)
    )
    slug = re.sub(r"[^a-z0-9]+", "-", plain).strip("-")
    return slug[:50].rstrip("-") or "plan"


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quote, backslash and every control character TOML forbids raw
    (U+0000-U+001F but tab, and U+007F) escaped; json.dumps is not enough (it leaves DEL raw)."""
    out = ['"']
    for ch in text:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_PLACEHOLDER = re.compile(r"\{\{(id|title|title_toml)\}\}")


def title_problem(title: str) -> str | None:
    """Why ``title`` cannot be a plan's title, or None: it must be one line of UTF-8 text.

    A line break would end the heading and let the rest of the title become Markdown of its own (a
    second ``plan`` block); other control characters (DEL, C1, U+2028/U+2029) have no business in a title.
    """
    if not title.strip():
        return "TITLE must not be empty"
    try:
        title.encode("utf-8")
    except UnicodeEncodeError as err:
        raw = ord(title[err.start])
        byte = f"byte 0x{raw - 0xDC00:02x}" if 0xDC80 <= raw <= 0xDCFF else f"U+{raw:04X}"
        return f"TITLE is not valid UTF-8 text ({byte} at character {err.start + 1})"
    for i, ch in enumerate(title):
        if unicodedata.category(ch) == "Cc" or ch in "\u2028\u2029":
            return f"TITLE must be one line of text without control characters (U+{ord(ch):04X} at character {i + 1})"
    return None


def render(template: str, plan_id: str, title: str) -> str:
    """The template with its placeholders filled in one pass (a title holding ``{{title}}`` stays as is)."""
    values = {"id": plan_id, "title": title, "title_toml": toml_string(title)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def run(root: Path, title: str, out: TextIO | None = None) -> int:
    """Create ``plans/NNNN-slug.md`` with the next free number; exit 0 (3 for a title that is not one
    line of UTF-8 text)."""
    out = out or sys.stdout
    problem = title_problem(title)
    if problem is not None:
        raise UsageError(problem)
    numbers = [int(p.name[:4]) for p in plan_paths(root)]
    plan_id = f"{max(numbers, default=0) + 1:04d}"
    if plan_id == "10000":
        raise UsageError("no plan number left (plans/9999-* exists)")
    path = root / "plans" / f"{plan_id}-{slugify(title)}.md"
    text = render(template_path().read_text(encoding="utf-8"), plan_id, title)
    if path.exists():
        raise FileError(f"{path}: already exists")
    try:
        atomic_write(path, text.encode("utf-8"), root=root)  # plans/ linked out: readers would refuse the file
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
    out.write(f"created {path.relative_to(root).as_posix()}\n")
    return 0
