"""``tracker new TITLE``: a new numbered plan file from the bundled template."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import TextIO

from tracker.errors import FileError, UsageError
from tracker.fileio import atomic_write
from tracker.plans import plan_paths


def template_path(name: str = "plan.md") -> Path:
    """The bundled template: inside the installed package, else ``templates/`` of the checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "templates" / name, here.parent / "templates" / name):
        if candidate.is_file():
            return candidate
    raise FileError(f"template {name} not found (looked in {here / 'templates'} and {here.parent / 'templates'})")


# Latin letters (lower case) that NFKD does not decompose into ASCII plus accents.
_LATIN = str.maketrans({"ß": "ss", "æ": "ae", "ø": "o", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
                        "ħ": "h", "ŧ": "t", "ŋ": "ng", "ĸ": "k"})


def slugify(title: str) -> str:
    """``"Verify kernel: sm_120!"`` -> ``"verify-kernel-sm-120"``; accented letters lose their accents
    (``"Défrag über"`` -> ``"defrag-uber"``), other scripts fall back to ``plan``."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", title.lower().translate(_LATIN)) if not unicodedata.combining(ch))
    slug = re.sub(r"[^a-z0-9]+", "-", plain).strip("-")
    return slug[:50].rstrip("-") or "plan"


def run(root: Path, title: str, out: TextIO | None = None) -> int:
    """Create ``plans/NNNN-slug.md`` with the next free number; exit 0."""
    out = out or sys.stdout
    if not title.strip():
        raise UsageError("TITLE must not be empty")
    numbers = [int(p.name[:4]) for p in plan_paths(root)]
    plan_id = f"{max(numbers, default=0) + 1:04d}"
    if plan_id == "10000":
        raise UsageError("no plan number left (plans/9999-* exists)")
    path = root / "plans" / f"{plan_id}-{slugify(title)}.md"
    text = template_path().read_text(encoding="utf-8")
    # json.dumps yields a valid TOML basic string (same escapes) for the title.
    text = text.replace("{{id}}", plan_id).replace("{{title_toml}}", json.dumps(title, ensure_ascii=False)).replace("{{title}}", title)
    if path.exists():
        raise FileError(f"{path}: already exists")
    atomic_write(path, text.encode("utf-8"))
    out.write(f"created {path.relative_to(root).as_posix()}\n")
    return 0
