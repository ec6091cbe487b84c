"""Text as a reader sees it, for the report's commit lines: the one module that imports ``regex`` (its ``\\X`` is
Unicode's grapheme cluster rule, UAX #29, and it knows the Default_Ignorable_Code_Point property; the standard
library knows neither).

A commit's subject, author and file names are the repository's text, and any of them can try to make the report read
otherwise than git: padding the reader cannot see that pushes the end of a subject past the cut, a cut through a
character and its marks, a file name that looks like several. :func:`shown` gives the clusters of a text as they show,
:func:`escaped` a file name with everything that does not show spelled out.
"""

from __future__ import annotations

import functools

import regex

MAX_CLUSTER = 32  # code points of one cluster kept: an emoji sequence fits; stacked marks past it are dropped
# Clusters that show nothing: default-ignorable and format characters only (zero-width spaces and joiners, Hangul
# fillers, word joiners, variation selectors and tags with nothing to attach to, unassigned ignorables).
_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}]+")
# Clusters that show as blank space (HTML and Markdown collapse a run of them, or show blanks): whitespace, the
# braille blank.
_BLANK = regex.compile(r"[\p{White_Space}\u2800][\p{Default_Ignorable_Code_Point}\p{M}\p{Cf}]*")
# A default-ignorable character repeated inside one cluster ("s" + 60 joiners): once is all it can do.
_REPEATED = regex.compile(r"(\p{Default_Ignorable_Code_Point})\1+")
# Characters a file name shows only as an escape: not printable (controls, line breaks, format characters, lone
# surrogates of a name that is not UTF-8), default-ignorable, or whitespace other than the space; and the backslash,
# so that no name reads as another's escape (git quotes both alike).
_UNSHOWN = regex.compile(r"[^\P{C}\p{Co}]|[\p{Default_Ignorable_Code_Point}]|[\p{White_Space}--[ ]]|\\", regex.V1)


# The units a cut of an escaped file name keeps whole: an escape as :func:`escaped` writes it, or a grapheme cluster.
_PATH_UNIT = regex.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)|\X", regex.S)


def path_units(text: str) -> list[str]:
    """An escaped file name (:func:`escaped`) as the units a cut never splits: its escapes, and its grapheme clusters
    (an accent, a flag: cut inside, two halves of flags re-pair as other flags)."""
    return list(_PATH_UNIT.findall(text))


def shown(text: str) -> list[str]:
    """``text``'s grapheme clusters as they show: each invisible cluster dropped, each run of blank ones one space
    (none at either end), each cluster with a default-ignorable character repeated in a row kept once and cut to
    :data:`MAX_CLUSTER` code points."""
    out: list[str] = []
    for cluster in regex.findall(r"\X", text):
        if _INVISIBLE.fullmatch(cluster):
            continue
        if _BLANK.fullmatch(cluster):
            if out and out[-1] != " ":
                out.append(" ")
            continue
        out.append(_REPEATED.sub(r"\1", cluster)[:MAX_CLUSTER])
    if out and out[-1] == " ":
        out.pop()
    return out


@functools.lru_cache(maxsize=1 << 12)
def escaped(name: str) -> str:
    """A file name with every character that does not show as itself spelled as its escape (``\\n``, ``\\u200b``,
    ``\\udcff`` for a byte of a name that is not UTF-8, ``\\\\`` for a backslash), so that two names that differ read
    differently."""
    return _UNSHOWN.sub(lambda m: m.group(0).encode("unicode_escape", "backslashreplace").decode("ascii"), name)
