"""A source file's code, without what no tool reads: the comments and the layout of Python, C, C++, CUDA and shell.

:func:`code_key` gives two versions of a file the same key exactly when they differ only in plain comments and
whitespace that changes no token (issue 31: a comment edit neither stales a phase nor voids a sign-off). Anything a
tool obeys stays code: Python docstrings (they are strings), ``# noqa``, ``# type:``, ``# pragma``, ``# fmt:``,
``# ruff:``, ``# mypy:``, ``# pylint:``, ``# isort:``, shebangs and encoding lines; every C, C++ and CUDA
preprocessor line, whole (``#pragma unroll``, ``#include``); a ``// NOLINT`` or ``// clang-format`` comment; a
shell script's shebang. Python's indentation is structure, kept. A file that does not tokenize (a syntax error, a
language not known here) has no key: every byte of it counts.

Standard library only (``tokenize`` is imported only when a Python file's key is asked).
"""

from __future__ import annotations

import hashlib
import io
import re

PYTHON = (".py", ".pyi")
C_LIKE = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu", ".cuh", ".inl")
SHELL = (".sh", ".bash")
MAX_BYTES = 4 << 20  # a larger file is compared byte for byte: tokenizing it would cost more than re-running it

# Comments tools read: linters, type checkers, formatters, coverage, import sorters; the encoding line.
_PY_DIRECTIVE = re.compile(rb"#\s*(noqa|type:|pragma|fmt:|ruff:|mypy:|pylint:|isort:|pyright:)|coding[:=]", re.I)
_C_DIRECTIVE = re.compile(rb"NOLINT|clang-format|clang-tidy|IWYU|cppcheck-suppress|nvcc|pragma", re.I)


def code_key(path: str, data: bytes) -> str | None:
    """The sha256 of ``data``'s tokens (as :mod:`tracker.code_tokens` keeps them) for a file named ``path``; None when
    every byte counts (a language not known here, a file that does not tokenize, a huge one)."""
    if len(data) > MAX_BYTES or b"\0" in data or b"\r" in data.replace(b"\r\n", b""):
        return None  # huge; a NUL (Python refuses it); a lone CR (a line end to C, not to this tokenizer)
    name = path.lower()
    if name.endswith(PYTHON):
        tokens = _python(data)
    elif name.endswith(C_LIKE):
        tokens = _c_like(data)
    elif name.endswith(SHELL):
        tokens = _shell(data)
    else:
        return None
    if tokens is None:
        return None
    return hashlib.sha256(b"\0".join(tokens)).hexdigest()


def _python(data: bytes) -> list[bytes] | None:
    import tokenize

    out: list[bytes] = []
    lines = data.splitlines(keepends=True)
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
                        out.append(_span(lines, begin, tok.end))
                continue
            if tok.type == tokenize.COMMENT:
                text = tok.string.encode("utf-8", "surrogateescape")
                if (tok.start[0] == 1 and text.startswith(b"#!")) or _PY_DIRECTIVE.search(text):
                    out.append(text)  # a shebang, an encoding line, a comment a tool obeys
                continue
            if tok.type in (tokenize.NL, tokenize.ENCODING):
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
            else:
                out.append(tok.string.encode("utf-8", "surrogateescape"))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return out


def _span(lines: list[bytes], begin: tuple[int, int], end: tuple[int, int]) -> bytes:
    """The source between two tokenize positions ((1-based row, column); columns count characters: decoded)."""
    text = b"".join(lines[begin[0] - 1 : end[0]]).decode("utf-8", "surrogateescape")
    last = len(lines[end[0] - 1].decode("utf-8", "surrogateescape")) if end[0] - 1 < len(lines) else 0
    tail = last - end[1]
    return text[begin[1] : len(text) - tail].encode("utf-8", "surrogateescape")


def _c_like(data: bytes) -> list[bytes] | None:
    """Tokens of C, C++ or CUDA source: string and character literals whole, comments dropped (a directive comment
    kept), each preprocessor line whole, every other run of whitespace one separator. A raw string literal
    (``R"(...)"``) or an unterminated literal or comment: None, every byte counts."""
    out: list[bytes] = []
    word = bytearray()
    i, n = 0, len(data)
    line_start = True

    def flush() -> None:
        if word:
            out.append(bytes(word))
            word.clear()

    while i < n:
        c = data[i : i + 1]
        if line_start and c in (b" ", b"\t"):
            i += 1
            continue
        if line_start and c == b"#":  # a preprocessor line, continuations included, whole
            end = i
            while True:
                nl = data.find(b"\n", end)
                if nl == -1:
                    end = n
                    break
                if data[nl - 1 : nl] == b"\\" or data[nl - 2 : nl] == b"\\\r":
                    end = nl + 1
                    continue
                end = nl
                break
            out.append(data[i:end].rstrip())
            i, line_start = end, True
            continue
        line_start = False
        if c == b"\n":
            flush()
            line_start = True
            i += 1
        elif c in (b" ", b"\t", b"\r", b"\f", b"\v"):
            flush()
            i += 1
        elif data.startswith(b"//", i):
            end = data.find(b"\n", i)
            end = n if end == -1 else end
            if data[i:end].rstrip(b"\r").endswith(b"\\"):
                return None  # a backslash line splice: the next line is part of the comment
            if _C_DIRECTIVE.search(data[i:end]):
                flush()
                out.append(data[i:end].rstrip())
            i = end
        elif data.startswith(b"/*", i):
            end = data.find(b"*/", i + 2)
            if end == -1:
                return None
            if _C_DIRECTIVE.search(data[i : end + 2]):
                flush()
                out.append(data[i : end + 2])
            flush()
            i = end + 2
        elif c in (b'"', b"'"):
            if word.endswith(b"R") and c == b'"':
                return None  # a raw string: its delimiters are not parsed here
            j = i + 1
            while j < n and data[j : j + 1] != c:
                if data[j : j + 1] == b"\\":
                    j += 1
                elif data[j : j + 1] == b"\n":
                    return None
                j += 1
            if j >= n:
                return None
            flush()
            out.append(data[i : j + 1])
            i = j + 1
        else:
            word += c
            i += 1
    flush()
    return out


def _shell(data: bytes) -> list[bytes] | None:
    """Lines of a shell script as written, without its comment lines (a line whose first non-blank character is
    ``#`` outside any quote, the first line's shebang kept) and without blank lines outside quotes; a comment after
    code on its line stays (telling it from a ``#`` inside a word needs the shell's own parser). A here-document, an
    ANSI-C or backquoted string, or quotes left open: None, every byte counts."""
    if b"<<" in data or b"$'" in data or b"`" in data:
        return None
    out: list[bytes] = []
    quote = b""  # the quote open at the start of the line
    for number, line in enumerate(data.split(b"\n")):
        text = line.strip()
        dropped = not quote and (not text or (text.startswith(b"#") and not (number == 0 and text.startswith(b"#!"))))
        if not dropped:
            out.append(line)
        i = 0
        while i < len(line):  # the quotes this line opens or closes
            c = line[i : i + 1]
            if quote == b'"' and c == b"\\":
                i += 2
                continue
            if not quote and c == b"\\":
                i += 2
                continue
            if not quote and c == b"#" and (i == 0 or line[i - 1 : i] in b" \t;|&("):
                break  # a comment to the end of the line
            if c in (b'"', b"'") and (not quote or quote == c):
                quote = b"" if quote else c
            i += 1
    return None if quote else out
