"""A source file's code, without what no tool reads: the comments of Python, C, C++ and CUDA.

:func:`code_key` gives two versions of a file the same key exactly when they differ only in the text of plain comments
and in whitespace that moves no token (issue 31: a comment edit neither stales a phase nor voids a sign-off). Every
token keeps its place (line and column): code can read its own line numbers (``f_lineno``, tracebacks, warnings,
``__LINE__``, ``assert``), so a comment line added or removed, which moves the code below it, is a change. Anything a
tool obeys stays code: Python docstrings (they are strings), ``# noqa``, ``# type:``, ``# pragma``, ``# fmt:``,
``# ruff:``, ``# mypy:``, ``# pylint:``, ``# isort:``, shebangs and encoding lines; every C, C++ and CUDA
preprocessor line, whole (``#pragma unroll``, ``#include``); a ``// NOLINT`` or ``// clang-format`` comment. Shell
has no key (no parser short of the shell's own tells its comments apart: ``\\`` continuations, ``$( )`` nesting,
here-documents), nor does a file that does not tokenize or a language not known here: every byte of it counts, as it
does for a phase that reads its own source text (``inspect.getsource``): such a phase says ``exact = true``.

Standard library only (``tokenize`` is imported only when a Python file's key is asked).
"""

from __future__ import annotations

import bisect
import hashlib
import io
import re

PYTHON = (".py", ".pyi")
C_LIKE = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu", ".cuh", ".inl")
MAX_BYTES = 4 << 20  # a larger file is compared byte for byte: tokenizing it would cost more than re-running it

# Comments tools read: linters, type checkers, formatters, coverage, import sorters; the encoding line.
_PY_DIRECTIVE = re.compile(rb"#\s*(noqa|type:|pragma|fmt:|ruff:|mypy:|pylint:|isort:|pyright:)|coding[:=]", re.I)
# and the comments compilers and lint read: GCC's -Wimplicit-fallthrough markers ("falls through", "FALLTHRU") and
# lint's (NOTREACHED, ARGSUSED, VARARGS, PRINTFLIKE, LINTED).
_C_DIRECTIVE = re.compile(
    rb"NOLINT|clang-format|clang-tidy|IWYU|cppcheck-suppress|nvcc|pragma|fall|thr(ough|u)|NOTREACHED|ARGSUSED"
    rb"|VARARGS|PRINTFLIKE|SCANFLIKE|LINT",
    re.I,
)


def language(path: str) -> str | None:
    """``python`` or ``c`` (C, C++, CUDA): how :func:`code_key` reads a file named ``path``; None: byte for byte."""
    name = path.lower()
    return "python" if name.endswith(PYTHON) else "c" if name.endswith(C_LIKE) else None


def code_key(path: str, data: bytes) -> str | None:
    """The sha256 of ``data``'s tokens (as :mod:`tracker.base.code_tokens` keeps them) for a file named ``path``; None
    when every byte counts (a language not known here, a file that does not tokenize, a huge one)."""
    if len(data) > MAX_BYTES or b"\0" in data or b"\r" in data.replace(b"\r\n", b""):
        return None  # huge; a NUL (Python refuses it); a lone CR (a line end to C, not to this tokenizer)
    kind = language(path)
    tokens = _python(data) if kind == "python" else _c_like(data) if kind == "c" else None
    if tokens is None:
        return None
    return hashlib.sha256(b"\0".join(tokens)).hexdigest()


def _python(data: bytes) -> list[bytes] | None:
    import tokenize
    import warnings

    # A file this Python does not compile has no key: its tokens are the tracker's Python's reading, and another
    # Python may read it otherwise (3.12's f-strings: ``f"{d["#"]}"`` is a comment from ``#`` on to 3.11).
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an invalid escape's SyntaxWarning: no output of ours
            compile(data, "<code_key>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError):
        return None
    out: list[bytes] = []
    lines = data.splitlines(keepends=True)
    encoding = "utf-8"
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    opened: list[tuple[int, int]] = []  # where each open f-string began (row, col)
    row = 0
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if fstring_start is not None and tok.type == fstring_start:
                opened.append(tok.start)
                continue
            if opened:
                if tok.type == fstring_end:
                    begin = opened.pop()
                    if not opened:  # the whole f-string as written: its spaces may be printed ({x = })
                        out.append(b"%d:%d:" % begin + _span(lines, begin, tok.end, encoding))
                continue
            if tok.type == tokenize.COMMENT:
                text = tok.string.encode("utf-8", "surrogateescape")
                if (tok.start[0] == 1 and text.startswith(b"#!")) or _PY_DIRECTIVE.search(text):
                    out.append(b"%d:%d:" % tok.start + text)  # a shebang, an encoding line, a comment a tool obeys
                continue
            if tok.type == tokenize.ENCODING:  # with a BOM, which hides a shebang from the kernel, or without
                encoding = tok.string
                out.append(b"<encoding>" + tok.string.encode() + (b"+bom" if data.startswith(b"\xef\xbb\xbf") else b""))
                continue
            if tok.type == tokenize.NL:
                continue
            if tok.start[0] != row and tok.type not in (tokenize.DEDENT, tokenize.NEWLINE, tokenize.ENDMARKER):
                row = tok.start[0]  # each line's indentation as written: a tab where spaces were is a TabError
                out.append(b"<line>" + tok.line[: len(tok.line) - len(tok.line.lstrip())].encode())
            if tok.type == tokenize.INDENT:  # as written: a tab where spaces were is a TabError
                out.append(b"<indent>" + tok.string.encode())
            elif tok.type == tokenize.DEDENT:
                out.append(b"<dedent>")
            elif tok.type == tokenize.NEWLINE:
                out.append(b"<newline>")
            else:  # each token at its place: code can read its line numbers (f_lineno, tracebacks, warnings)
                out.append(b"%d:%d:" % tok.start + tok.string.encode("utf-8", "surrogateescape"))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return out


def _span(lines: list[bytes], begin: tuple[int, int], end: tuple[int, int], encoding: str) -> bytes:
    """The source between two tokenize positions ((1-based row, column); columns count characters of the file's
    ``encoding``, the one tokenize found: a latin-1 file's columns are not its UTF-8 reading's)."""
    text = b"".join(lines[begin[0] - 1 : end[0]]).decode(encoding, "surrogateescape")
    last = len(lines[end[0] - 1].decode(encoding, "surrogateescape")) if end[0] - 1 < len(lines) else 0
    tail = last - end[1]
    return text[begin[1] : len(text) - tail].encode("utf-8", "surrogateescape")


def _c_like(data: bytes) -> list[bytes] | None:
    """Tokens of C, C++ or CUDA source, each with its place, as the compiler's translation phases 2 and 3 see them:
    backslash-newline splices joined first (GCC's rule: spaces or tabs may sit between the two), then comments
    dropped (a directive comment kept), string and character literals whole, numbers as preprocessing numbers (digit
    separators ``1'000`` included), each preprocessor line whole. None, every byte counts, for: a trigraph (``??/``
    is a splice under ``-std=c11``); a raw string literal (``R"``, before or after splices are joined); an
    unterminated literal or comment, or one in a preprocessor line; what a compiler warns about in a comment, which
    ``-Werror`` makes an error: ``/*`` inside a block comment, a ``//`` comment continued by a splice, a bidirectional
    control character; and ``//*``, a line comment to C99 but ``/`` and a block comment to C89."""
    if _TRIGRAPH.search(data) or _BIDI.search(data):
        return None
    text, origin = _spliced(data)
    # After the splices are joined (``R\<newline>"`` is a raw string then), which keep every R" and //* there was.
    if _RAW_STRING.search(text) or b"//*" in text:
        return None
    starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
    out: list[bytes] = []
    i, n = 0, len(text)
    line_start = True
    last_row = [-1]

    def put(begin: int, end: int) -> None:
        at = origin[begin]
        row = bisect.bisect_right(starts, at) - 1
        if row != last_row[0]:  # each line's indentation as written: GCC's -Wmisleading-indentation tells tabs
            last_row[0] = row  # from spaces (a tab where spaces were is an error under -Wall -Werror, round 11)
            lead = data[starts[row] : at]
            out.append(b"<indent>" + lead[: len(lead) - len(lead.lstrip(b" \t\f\v"))])
        out.append(b"%d:%d:" % (row, at - starts[row]) + text[begin:end])

    def put_comment(begin: int) -> None:
        """A plain comment: its place, not its text. Where a comment is, or is not, is code to GCC: any comment before
        a ``case`` marks a fall-through under -Wimplicit-fallthrough=1 (round 11); its words are free to change."""
        at = origin[begin]
        row = bisect.bisect_right(starts, at) - 1
        out.append(b"%d:%d:<comment>" % (row, at - starts[row]))

    while i < n:
        c = text[i]
        if c in _SPACE:
            line_start = line_start or c == 0x0A
            i += 1
            continue
        # Comments first: they are whitespace, so a '#' after one is still the first token of its line (a newline
        # inside a block comment is not a line end: the comment is one space of the line it began on).
        if text.startswith(b"//", i):
            end = text.find(b"\n", i)
            end = n if end == -1 else end
            if origin[end] - origin[i] != end - i:  # a splice inside: the comment swallows the next line (-Wcomment)
                return None
            if _C_DIRECTIVE.search(text[i:end]):
                put(i, end)
            else:
                put_comment(i)
            i = end
            continue
        if text.startswith(b"/*", i):
            end = text.find(b"*/", i + 2)
            if end == -1 or b"/*" in text[i + 2 : end]:  # unterminated; "/*" within a comment (-Wcomment)
                return None
            if _C_DIRECTIVE.search(text[i : end + 2]):
                put(i, end + 2)
            else:
                put_comment(i)
            i = end + 2
            continue
        if c == 0x23 or text.startswith(b"%:", i):  # '#' or its digraph: the rest of the line whole, raw
            end = _directive_end(text, i)
            if end < 0:
                return None
            # Whether it is a directive (the first token of its line) is part of the key: elsewhere it is an error.
            begin = len(out)
            put(i, end)
            out[begin] = (b"D" if line_start else b"N") + out[begin]
            i, line_start = end, False
            continue
        line_start = False
        if c in _QUOTES:
            j = _literal_end(text, i)
            if j is None:
                return None
            put(i, j)
            i = j
        elif _is_digit(c) or (c == 0x2E and i + 1 < n and _is_digit(text[i + 1])):
            j = _pp_number_end(text, i)
            if 0x27 in text[i:j]:  # a digit separator (C++14, C23) or a number then a character constant (gnu17):
                return None  # the dialect decides where a comment may begin, so every byte counts (round 10)
            put(i, j)
            i = j
        elif _is_ident(c):
            j = i
            while j < n and _is_ident(text[j]):
                j += 1
            if j < n and text[j] in _QUOTES and text[i:j] in _PREFIXES:  # L"..", u8"..", U'..': one literal
                k = _literal_end(text, j)
                if k is None:
                    return None
                j = k
            put(i, j)
            i = j
        else:
            put(i, i + 1)  # a punctuator character: its place tells ``a+ +b`` from ``a++b``
            i += 1
    return out


_SPACE = frozenset(b" \t\n\r\f\v")
_QUOTES = frozenset(b"\"'")
_PREFIXES = frozenset((b"L", b"u", b"U", b"u8"))
_TRIGRAPH = re.compile(rb"\?\?[=/'()!<>\-]")
_RAW_STRING = re.compile(rb'R"')  # any, conservatively: a raw string's delimiters and splices are not parsed here
# Bidirectional controls (U+200E/F, U+202A-E, U+2066-9): GCC warns about them (-Wbidi-chars, on by default).
_BIDI = re.compile(b"\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
_SPLICE = re.compile(rb"\\[ \t\f\v]*\r?\n")  # GCC's: blanks may sit between the backslash and the line end


def _directive_end(text: bytes, i: int) -> int:
    """Where the preprocessor line starting at ``i`` ends: the first newline outside a block comment (a comment that
    spans lines continues the directive) and outside a string or character literal (``"a//b" /*`` opens a comment
    after the literal, not inside it). -1 when a literal of the line is not closed on it (``#error don't``): the
    compiler's reading of the rest is not this module's to guess."""
    n = len(text)
    j = i
    while j < n:
        if text[j] == 0x0A:
            return j
        if text[j] in _QUOTES:
            k = _literal_end(text, j)
            if k is None:
                return -1
            j = k
        elif text.startswith(b"/*", j):
            close = text.find(b"*/", j + 2)
            j = n if close == -1 else close + 2
        elif text.startswith(b"//", j):
            close = text.find(b"\n", j)
            return n if close == -1 else close
        else:
            j += 1
    return n


def _is_digit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _is_ident(c: int) -> bool:
    return c == 0x5F or c == 0x24 or 0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A or c >= 0x80


def _spliced(data: bytes) -> tuple[bytes, list[int]]:
    """``data`` with every line splice removed, and each kept byte's offset in ``data``."""
    parts: list[bytes] = []
    origin: list[int] = []
    at = 0
    for m in _SPLICE.finditer(data):
        parts.append(data[at : m.start()])
        origin.extend(range(at, m.start()))
        at = m.end()
    parts.append(data[at:])
    origin.extend(range(at, len(data)))
    origin.append(len(data))
    return b"".join(parts), origin


def _literal_end(text: bytes, i: int) -> int | None:
    """The end of the string or character literal whose quote is at ``i``; None when a line or the file ends first."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != quote:
        if text[j] == 0x5C:  # a backslash escapes the next byte
            j += 1
        elif text[j] == 0x0A:
            return None
        j += 1
    return None if j >= n else j + 1


def _pp_number_end(text: bytes, i: int) -> int:
    """The end of the preprocessing number at ``i`` (C23 and C++14: ``'`` between digits or letters continues it)."""
    j, n = i + 1, len(text)
    while j < n:
        c = text[j]
        if (c in b"+-" and text[j - 1] in b"eEpP") or _is_ident(c) or c == 0x2E:
            j += 1
        elif c == 0x27 and j + 1 < n and _is_ident(text[j + 1]):
            j += 2
        else:
            break
    return j
