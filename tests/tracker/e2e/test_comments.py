"""Issue 31, item 4: comments change nothing, except the comments tools obey. A change to a covered file that keeps
its code tokens neither stales a phase nor voids a sign-off; a token or directive edit always does; a phase that
says ``exact = true`` (its gates check the text itself) counts every byte."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tracker_testutil import git, phase, plan_text

from tracker.base.code_tokens import code_key

PY_LINES = ["import os", "def f(x):", '    """Docstrings are code."""', "    y = x + 1", "    return os.sep * y", ""]
C_LINES = [
    "#include <stdio.h>",
    "int f(int x) {",
    "  int y = x + 1;",
    '  printf("%d // no comment", y);',
    "  return y;",
    "}",
]
WORDS = st.text(alphabet="abcdefghij klmnop", min_size=0, max_size=20)


def with_comments(lines: list[str], where: list[int], texts: list[str], py: bool) -> str:
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in where:
            said = texts[where.index(i) % len(texts)] if texts else ""
            out.append(f"# {said}" if py else f"// {said}")
            if not py:
                out.append(f"/* {said} */")
    return "\n".join(out) + "\n"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 5), max_size=6, unique=True),
    st.lists(WORDS, min_size=1, max_size=4),
    st.lists(WORDS, min_size=1, max_size=4),
)
def test_plain_comment_text_never_changes_the_code(where: list[int], texts: list[str], edited: list[str]) -> None:
    """Any plain comment's text may change, where the code keeps its place (line and column)."""
    for lines, name, py in ((PY_LINES, "m.py", True), (C_LINES, "k.cu", False)):
        before = with_comments(lines, where, texts, py)
        after = with_comments(lines, where, edited, py)
        assert code_key(name, before.encode()) is not None
        assert code_key(name, after.encode()) == code_key(name, before.encode()), after
        # (a preprocessor line is kept whole, its comments too: `#include <a//b.h>` names a file). A trailing comment
        # added is no change in Python; in C where a comment is counts (round 11: -Wimplicit-fallthrough=1), its
        # words do not.
        mark = "  # " if py else "  // "

        def trailing(said: str, lines: list[str] = lines, mark: str = mark) -> str:
            return "\n".join(
                line + mark + said if line.strip() and not line.startswith("#") else line for line in lines
            )

        plain = "\n".join(lines) + "\n"
        assert code_key(name, (trailing(edited[0]) + "\n").encode()) == code_key(
            name, (plain if py else trailing(texts[0]) + "\n").encode()
        )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 4), WORDS)
def test_a_comment_line_added_moves_the_code_below_it(line: int, text: str) -> None:
    """Adversarial round 8 (F5): code reads its own line numbers (f_lineno, tracebacks, warnings, __LINE__)."""
    for lines, name, mark in ((PY_LINES, "m.py", "#"), (C_LINES, "k.cu", "//")):
        moved = [*lines[:line], f"{mark} {text}", *lines[line:]]
        before, after = ("\n".join(x) + "\n" for x in (lines, moved))
        assert code_key(name, before.encode()) != code_key(name, after.encode())


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 4), st.sampled_from(["1", "x", "+", "(", "'s'"]))
def test_any_token_edit_changes_the_code(line: int, token: str) -> None:
    for lines, name in ((PY_LINES, "m.py"), (C_LINES, "k.cu")):
        edited = list(lines)
        edited[line] = edited[line] + (" " if name == "k.cu" else "") + token
        before, after = ("\n".join(x) + "\n" for x in (lines, edited))
        assert code_key(name, before.encode()) != code_key(name, after.encode())


def assert_never_one_key(pairs: list[tuple[str, bytes, bytes]]) -> None:
    """Each (file name, before, after) pair behaves differently under some compiler or Python: never one key."""
    for name, before, after in pairs:
        a, b = code_key(name, before), code_key(name, after)
        assert a is None or b is None or a != b, (name, before, after)


def test_directive_comments_are_code() -> None:
    py = "import os\n"
    for directive in ("# noqa: F401", "# type: ignore", "# pragma: no cover", "# fmt: off", "# ruff: noqa"):
        assert code_key("m.py", f"import os  {directive}\n".encode()) != code_key("m.py", py.encode()), directive
    assert code_key("m.py", b"#!/usr/bin/env python3\nimport os\n") != code_key("m.py", py.encode())
    c = "int x;\n"
    for line in ("#pragma unroll", "#include <a.h>", "// NOLINT", "/* clang-format off */"):
        assert code_key("k.cu", f"{line}\n{c}".encode()) != code_key("k.cu", c.encode()), line
    assert code_key("k.cu", b'char *s = "a /* b */";\n') != code_key("k.cu", b'char *s = "a ";\n')


def test_unknown_languages_and_broken_files_count_every_byte() -> None:
    assert code_key("notes.txt", b"# a\n") is None
    assert code_key("m.py", b"def f(:\n  (\n") is None
    assert code_key("k.cu", b'char *s = "open\n') is None


def repo_with(repo: Any, *, exact: bool, gates: str = 'test = "tests/test_a.py"') -> Any:
    block = phase("P1", gates, paths='"src/**"')
    if exact:
        block = block.replace('paths = ["src/**"]\n', 'paths = ["src/**"]\nexact = true\n')
    return repo(
        {
            "plans/0001-demo.md": plan_text(phases=block),
            "src/m.py": "def add(a, b):\n    return a + b\n",
            "tests/test_a.py": "import sys\nsys.path.insert(0, 'src')\nfrom m import add\n\n"
            "def test_add():\n    assert add(2, 2) == 4\n",
        }
    )


def p1(cli: Any, root: Any) -> str:
    return next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))


def test_a_comment_edit_leaves_a_done_phase_done_and_a_code_edit_stales_it(repo: Any, cli: Any) -> None:
    root = repo_with(repo, exact=False)
    assert cli(root, "verify").code == 0
    (root / "src/m.py").write_text("def add(a, b):  # adds\n    return a + b  # the sum, plain\n")
    assert " done " in p1(cli, root)
    git(root, "commit", "-qam", "comments")
    assert " done " in p1(cli, root)
    (root / "src/m.py").write_text("def add(a, b):\n    return a + b  # noqa: E501\n")
    assert " stale " in p1(cli, root)  # a directive is code
    (root / "src/m.py").write_text("def add(a, b):\n    return a - b\n")
    assert " stale " in p1(cli, root)


def test_an_exact_phase_counts_every_byte(repo: Any, cli: Any) -> None:
    root = repo_with(repo, exact=True)
    assert cli(root, "verify").code == 0
    (root / "src/m.py").write_text("def add(a, b):\n    return a + b  # plain\n")
    assert " stale " in p1(cli, root)


def test_a_comment_edit_keeps_a_sign_off(repo: Any, cli: Any) -> None:
    root = repo_with(repo, exact=False, gates='manual = "Reviewed"')
    assert cli(root, "signoff", "0001/P1", "--gate", "1", "--by", "Ada", "--why", "read it").code == 0
    assert " done " in p1(cli, root)
    (root / "src/m.py").write_text("def add(a, b):\n    return a + b  # reviewed\n")
    assert " done " in p1(cli, root)
    (root / "src/m.py").write_text("def add(a, b):\n    return b + a\n")
    assert " done " not in p1(cli, root)


def test_what_adversarial_round_7_showed_is_code() -> None:
    # f-strings print their spaces (3.12 tokenizes them apart); a tab where spaces were is a TabError; a NUL byte
    # is a SyntaxError; a // comment ending in a backslash swallows the next line; a lone CR ends a C line; spaces
    # and "#" lines inside a shell script's quotes are data.
    pairs = [
        ("m.py", b'def show(x):\n    return f"{x=}"\n', b'def show(x):\n    return f"{x = }"\n'),
        ("m.py", b"def f():\n        a = 1\n        return a\n", b"def f():\n        a = 1\n\treturn a\n"),
        ("m.py", b"x = 1  # sum\n", b"x = 1  # s\0um\n"),
        ("k.c", b"int x = 1;\n// bump it\nx = 2;\n", b"int x = 1;\n// bump it \\\nx = 2;\n"),
        ("k.c", b"int x = 1;\n// done\n", b"int x = 1;\n// done\r    x = 2;\n"),
        ("g.sh", b'echo "id,  name"\n', b'echo "id, name"\n'),
        ("g.sh", b'sql="SELECT 1;\n# not a comment\n"\n', b'sql="SELECT 1;\n# DROP TABLE users;\n"\n'),
        # Round 8: C++14 digit separators are one number (F3); a splice may have spaces before its newline (F4);
        # a block comment may close through a splice (F8); a shell continuation makes a '#' line code (F1, F2).
        ("k.cc", b'int n = 1\'0; const char *s = "\'", *t = "//"; int r = n - 10;\n',
         b'int n = 1\'0; const char *s = "\'", *t = "//"; int r = n - 7;\n'),
        ("k.c", b"int r = 1; // note \\ \nint q = 2;\n", b"int r = 1; // note\nint q = 2;\n"),
        ("k.c", b"/* a *\\\n/ int r = 3; /* b */\n", b"/* a *\\\n/ int r = 4; /* b */\n"),
        ("k.c", b"int x = 1; ??/\nint y;\n", b"int x = 1; ??/\n int y;\n"),
        ("r.sh", b"echo ok\\\n# c\n", b"echo ok\\\n# ; echo PWNED; exit 3\n"),
        ("r.sh", b'eval "echo $(printf "\n#x\n")"\n', b'eval "echo $(printf "\n#; exit 3\n")"\n'),
        # Round 10 (F7): in C (gnu17) 1'a is a number, then a character constant that reaches the next quote.
        ("k.c", b"puts(S(1'a /* x */ 2'x));\n", b"puts(S(1'a /* y */ 2'x));\n"),
    ]  # fmt: skip
    assert_never_one_key(pairs)


def test_a_replaced_git_object_is_not_the_old_code(repo: Any, cli: Any) -> None:
    root = repo_with(repo, exact=False)
    assert cli(root, "verify").code == 0
    old = git(root, "rev-parse", "HEAD:src/m.py").strip()
    (root / "src/m.py").write_text("def add(a, b):\n    return a - b\n")
    git(root, "commit", "-qam", "break it")
    git(root, "replace", old, git(root, "rev-parse", "HEAD:src/m.py").strip())
    assert " done " not in p1(cli, root)


def test_a_splice_inside_a_comment_counts_every_byte() -> None:
    """What a line splice joins to a // comment the compiler never sees, but it warns (-Wcomment: "multi-line
    comment"), and -Werror makes that an error (adversarial round 10): such a file has no key, every byte counts."""
    spliced = b"int r = 1; // note \\ \nr = 4;\n"
    assert code_key("k.c", spliced) is None
    assert code_key("k.c", spliced.replace(b"\\ \n", b"\n")) is not None


def test_shell_scripts_count_every_byte() -> None:
    assert code_key("run.sh", b"echo ok\n") is None


def test_a_retargeted_link_is_not_the_same_code(repo: Any, cli: Any, tmp_path: Any) -> None:
    """Round 8 (F6): a link's blob is the name it points to, which tokenized as Python (impl.py -> impl . py)."""
    root = repo_with(repo, exact=False)
    (root / "src/impl.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "src/impl .py").write_text("def add(a, b):\n    return a - b\n")
    (root / "src/m.py").unlink()
    (root / "src/m.py").symlink_to("impl.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "link")
    assert cli(root, "verify").code == 0
    assert cli(root, "update").code == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "evidence")
    (root / "src/m.py").unlink()
    (root / "src/m.py").symlink_to("impl .py")
    assert p1(cli, root).split()[1] != "done"
    git(root, "commit", "-qam", "retarget")  # the new blob is git's now: read from there, not the working tree
    assert p1(cli, root).split()[1] != "done", p1(cli, root)


def test_an_answer_for_one_language_is_never_another_files(repo: Any, cli: Any) -> None:
    """Round 8 (F11): answers were cached by the pair of blob ids and the suffix, and a dotfile named ``.py`` (read as
    Python) has the suffix of a script without one (read byte for byte)."""
    root = repo_with(repo, exact=False, gates='test = "tests/test_a.py"')
    (root / "src/run").write_text("ok = 1#x\n")  # a script named run: every byte counts
    (root / "src/.py").write_text("ok = 1#x\n")  # valid Python, so that it has a key
    git(root, "add", "-A")
    git(root, "commit", "-qm", "scripts")
    assert cli(root, "verify").code == 0
    (root / "src/.py").write_text("ok = 1#; exit 3\n")  # a Python comment edit
    git(root, "commit", "-qam", "edit .py")
    assert p1(cli, root).split()[1] == "done"  # the answer for this pair of blobs, cached
    (root / "src/run").write_text("ok = 1#; exit 3\n")  # the same pair of blobs, in a script: every byte counts
    git(root, "commit", "-qam", "edit run")
    assert p1(cli, root).split()[1] == "stale"


def test_what_adversarial_round_9_showed_is_code() -> None:
    """A splice before a CRLF line end (F1); a '#' after a comment still starts a directive, whose header name may
    hold '//' (F2), and one after a comment that began after code is no directive (gcc: stray '#'); the '%:' digraph
    is a '#' (F3); a UTF-8 BOM hides a shebang (F4)."""
    pairs = [
        ("k.c", b"/* note *\\\r\n/ static const int V = 7; /* x */\r\n", b"/* note *\\\r\n/ static const int V = 8; /* x */\r\n"),
        ("k.c", b"/**/ #include <x//a.h>\n", b"/**/ #include <x//b.h>\n"),
        ("k.c", b"int a = 1; /* c */\n/*  */ #define V 0\n", b"int a = 1; /* c\n    */ #define V 0\n"),
        ("k.c", b"%:include <x//a.h>\n", b"%:include <x//b.h>\n"),
        ("t.py", b"#!/usr/bin/env python3\nx = 1\n", b"\xef\xbb\xbf#!/usr/bin/env python3\nx = 1\n"),
    ]  # fmt: skip
    assert_never_one_key(pairs)
    # and a directive's own comment text stays a comment edit only where the directive keeps every byte: raw
    assert code_key("k.c", b"#define X 1\nint y; // a\n") == code_key("k.c", b"#define X 1\nint y; // bb\n")


def test_what_adversarial_round_10_showed_is_code() -> None:
    """Each pair behaves differently under a compiler or another Python, and had one key: a raw string begun across
    a splice (F1); a '//' inside a string of a directive, which made the directive end at the newline while the
    compiler reads on through the block comment after the string (F2); an f-string that 3.12 reads and 3.11
    tokenizes as a comment (F3: no key where this Python does not compile the file); an f-string after latin-1 text
    in a latin-1 file, whose columns were counted in UTF-8 (F4); comments GCC warns about, errors under -Werror (F5:
    a fall-through marker, '/*' inside a comment, a bidirectional control); '//*', a line comment to C99 and '/'
    then a block comment to C89."""
    latin1 = b"# -*- coding: latin-1 -*-\na = 1\ns = '\xc3\xa9' * 3; v = rf'\\t{a}'\n"
    pairs = [
        ("k.cc", b'const char *s = R\\\n"d(x)" // hello )d"\n;\n', b'const char *s = R\\\n"d(x)" // WORLD )d"\n;\n'),
        ("k.c", b'#define U "a//b" /* start\nx // */ + 2\n', b'#define U "a//b" /* start\nx // */ + 3\n'),
        ("t.py", b'd = {"#": 1, "#b": 2}\ndef value():\n    return (f"{d["#"]}"\n    )\n',
         b'd = {"#": 1, "#b": 2}\ndef value():\n    return (f"{d["#b"]}"\n    )\n'),
        ("t.py", latin1, latin1.replace(b"rf'\\t{a}'", b"f'x\\t{a}'")),
        ("k.c", b"switch (x) { case 1: y++; /* fall through */ case 2: y--; }\n",
         b"switch (x) { case 1: y++; /* and then     */ case 2: y--; }\n"),
        ("k.c", b"int x; /* note */\n", b"int x; /* n/*e */\n"),
        ("k.c", b"int x; // note\n", b"int x; // note \xe2\x80\xae\n"),
        ("k.c", b"int x = 6 //**/ 2\n;\n", b"int x = 6 //**/ 3\n;\n"),
    ]  # fmt: skip
    assert_never_one_key(pairs)
    # what stays a comment edit: plain text in plain comments, a directive with its own literals closed
    assert code_key("k.c", b'#define U "a//b"\nint y; // a\n') == code_key("k.c", b'#define U "a//b"\nint y; // b\n')
    assert code_key("t.py", b"x = 1  # a\n") == code_key("t.py", b"x = 1  # b\n")


def test_an_f_string_span_counts_columns_in_the_files_own_encoding() -> None:
    """Round 10 (F4), on Python 3.12+ where an f-string is tokens and its text is cut out by tokenize's columns: a
    latin-1 file's columns count latin-1 characters, and cut from its UTF-8 reading the span slid right by one
    character per two-byte sequence before it, dropping the f-string's first characters from the key."""
    from tracker.base.code_tokens import _span

    line = b"s = '\xc3\xa9' * 3; v = f'x\\t{a}'\n"
    begin = line.decode("latin-1").index("f'")
    end = line.decode("latin-1").index("'\n") + 1
    assert _span([line], (1, begin), (1, end), "latin-1") == b"f'x\\t{a}'"


def test_what_adversarial_round_11_showed_is_code() -> None:
    """A comment removed before a ``case`` (any comment marks a fall-through under -Wimplicit-fallthrough=1), and
    a tab where spaces were (-Wmisleading-indentation, in -Wall): each an error under -Werror, each had one key. A
    comment's words stay free."""
    case = b"switch (x) {\ncase 0:\n  y++;\n  /* go on */\ncase 1:\n  y--;\n}\n"
    tabs = b"void f(int x) {\n\tif (x)\n\t\ty=1;\n  y=2;\n}\n"
    pairs = [
        ("k.c", case, case.replace(b"/* go on */", b"           ")),
        ("k.c", tabs, tabs.replace(b"  y=2", b"\t\ty=2")),
    ]
    assert_never_one_key(pairs)
    assert code_key("k.c", case) == code_key("k.c", case.replace(b"go on", b"next!"))
