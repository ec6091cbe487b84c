"""The one module that imports jinja2: the environment every report template renders in.

Plan text is data, never a template. Templates are the files this module loads (the packaged ones, or a
repository's overrides); titles, prose, parameters and reasons reach them only as values, so ``{{ 7*7 }}`` or
``{% for %}`` in a title comes out as written. HTML templates (``*.html.j2``) are autoescaped: ``<script>`` and
``</table>`` in a title come out as text. Markdown has no escaping of its own, so the Markdown templates pass
every piece of text through :func:`md` (``|md``), which keeps a table row one row and leaves no raw HTML.
``StrictUndefined``: a template that names something the data does not have fails instead of printing nothing.

Where templates come from, first match wins:

1. ``.tracker/templates/<name>`` of the repository: a per-repository override (committed with the plans);
2. the packaged templates (``templates/`` of the checkout, installed as ``tracker/templates/``), also reachable
   as ``tracker/<name>``, so an override can ``{% extends "tracker/report.html.j2" %}`` and replace one block.

A template of the repository that does not parse or fails while rendering is the user's file, not a bug of the
tracker: :class:`TemplateError` (exit 8) names it as ``path:line: what is wrong``. A failure inside a packaged
template stays a traceback.

A repository's template is code from whichever branch is checked out, run by ``tracker check`` (in CI) and
``tracker report``, so it is treated as hostile. Every template renders in jinja2's immutable sandbox (no attribute
starting with ``_``, no method that changes the data: ``cycler.__init__.__globals__`` is refused), and an override
is read only as a regular file (of at most :data:`MAX_TEMPLATE_BYTES`) that resolves inside the repository, as plan
files are. Rendering with overrides is bounded (:class:`_Sandbox`): no ``range`` of more than 100,000 items
(jinja2's), no operation, call or filter that would make a string, sequence or format width of more than
:data:`MAX_OUTPUT` characters or items or an integer of more than :data:`MAX_INT_BITS` bits, at most
:data:`MAX_OUTPUT` characters of output, :data:`RENDER_SECONDS` seconds and :data:`RENDER_MEMORY` bytes of memory
grown (the last two watched every 20 ms where the render runs in the main thread of a POSIX process). Past a
bound: :class:`TemplateError` naming the template's line. One C call (``d == d2`` or ``d|tojson`` of a list nested
in itself: 10**12 items from 4,000) is out of a signal's reach, so on a POSIX system a render with overrides runs in
a forked child process whose address space may grow by :data:`RENDER_MEMORY` (``RLIMIT_AS``), with a CPU-time limit,
killed by the parent a second past :data:`RENDER_SECONDS`; such a render is named by its template, without a line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
import types
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from tracker.errors import FileError

if TYPE_CHECKING:
    import jinja2
    import jinja2.sandbox

OVERRIDES = Path(".tracker") / "templates"
PACKAGED = "tracker/"  # the prefix that names a packaged template from an override

# The bounds of a render that runs a repository's templates (module docstring). A real report is well under 1 MB.
RENDER_SECONDS = 30.0
RENDER_MEMORY = 1 << 30  # bytes the process may grow by while rendering
MAX_OUTPUT = 16 * 1024 * 1024  # characters of output; also the largest string, sequence or width one step may make
MAX_INT_BITS = 1 << 16  # the largest integer a template may compute (~19,700 digits)
MAX_TEMPLATE_BYTES = 1024 * 1024
_WATCH_INTERVAL = 0.02
_KILL_GRACE = 1.0  # seconds past RENDER_SECONDS before the render's child process is killed (its watchdog goes first)
_TIME_LIMIT = "still rendering after {:g} seconds (the limit)"
_MEMORY_LIMIT = "the render grew the process by more than {} MiB (the limit)"

# Characters that end a Markdown table row or a line: each becomes a space in a cell.
_LINE_BREAKS = re.compile("\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
# Control characters (C0, DEL, C1) and the bidirectional controls that reorder the text around them where it is shown
# (a title that makes "regressed" read as "done"): dropped from every text a template writes.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A code span: a backtick run, then text (not empty), then a run of exactly as many backticks (CommonMark's rule);
# :func:`md` keeps one, the HTML report draws one as ``<code>``.
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


class TemplateError(FileError):
    """A repository template that does not parse or fails while rendering: ``path:line: message`` (exit 8)."""


class TemplateLimit(Exception):
    """A bound of :class:`_Sandbox` reached: the message says which (shown after ``path:line:``)."""


class _Watchdog(Exception):
    """Raised by the render's timer, inside the template code it interrupts, when time or memory ran out. An
    Exception (not a BaseException) so that jinja2 names the template's line; the timer raises it again every
    tick, should something catch it."""


def packaged_dir() -> Path:
    """The packaged templates: ``tracker/templates/`` where the tracker is installed, else the checkout's
    ``templates/``."""
    package = Path(__file__).resolve().parents[1]  # tracker/
    places = (package / "templates", package.parent / "templates")
    for candidate in places:
        if (candidate / "report.md.j2").is_file():
            return candidate
    raise FileError(f"the report templates are missing (looked in {places[0]} and {places[1]})")


def _finalized(value: object) -> object:
    """Every value a template writes (jinja2's ``finalize``): text without control or bidirectional characters
    (:data:`_CONTROL`), HTML-safe text kept safe; anything else as it is."""
    if not isinstance(value, str) or not _CONTROL.search(value):
        return value
    return type(value)(_CONTROL.sub("", value))  # a markupsafe.Markup stays one: dropping characters adds no markup


def md(value: object) -> str:
    """``value`` as inert text for a Markdown table cell or line: one line (line breaks become spaces, control
    characters dropped), every character with an inline meaning escaped as the doc tables escape theirs
    (:func:`tracker.report.doc_tables.escape_markup`): no raw HTML, entity, link, image (a tracking pixel in any
    viewer), code span, emphasis or early end of a table cell; a leading ``>`` is no quote. A viewer shows the text as
    given."""
    return _md(value) if type(value) is str else _md(str(value))


@functools.lru_cache(maxsize=1 << 14)  # a report repeats its machines, times, files and reasons thousands of times
def _md(value: str) -> str:
    from tracker.report.doc_tables import escape_markup

    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", value))
    out: list[str] = []
    done = 0
    for m in CODE_SPAN.finditer(text):  # a code span stays one (its text is literal): ``bench `attn.time_us` ...``
        span = m.group(0)
        out += [
            escape_markup(text[done : m.start()]),
            escape_markup(span) if "\\|" in span else span.replace("|", "\\|"),
        ]
        done = m.end()
    return "".join([*out, escape_markup(text[done:])])


def md_code(value: object) -> str:
    """``value`` as a Markdown code span for a table cell or line: one line, ``|`` escaped (a code span is literal
    text, so ``<`` and ``&`` stay as they are), a fence longer than any run of backticks the text holds. A
    backslash before a ``|`` cannot be kept literal in a table's code span: such text is :func:`md` text instead."""
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(value)))
    if "\\|" in text:
        return md(text)
    text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def environment(root: Path | None, filters: dict[str, Callable[..., Any]] | None = None) -> jinja2.Environment:
    """The environment for ``root``'s templates (None: the packaged ones only), with the report filters: jinja2's
    immutable sandbox with the bounds of :class:`_Sandbox`; with the repository's overrides, :func:`render` also
    bounds the output, the time and the memory."""
    import jinja2

    loaders: list[jinja2.BaseLoader] = []
    overridden = root is not None and (root / OVERRIDES).is_dir()
    if root is not None and overridden:
        loaders.append(_repository_loader(root))
    packaged = jinja2.FileSystemLoader(packaged_dir())
    loaders += [jinja2.PrefixLoader({PACKAGED.rstrip("/"): packaged}), packaged]
    env = _sandbox_class()(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        finalize=_finalized,
    )
    env.filters.update({"md": md, "md_code": md_code, **(filters or {})})
    if overridden:  # the packaged templates are the tracker's own code: their filters need no bounds
        env.filters = {name: _bounded_filter(name, f) for name, f in env.filters.items()}
    env.bounded = overridden  # type: ignore[attr-defined]
    return env


def _repository_loader(root: Path) -> jinja2.BaseLoader:
    """The loader of ``root``'s overrides: each a regular file of at most :data:`MAX_TEMPLATE_BYTES` that resolves
    inside the repository (:func:`tracker.base.fileio.read_regular`); one that is not, cannot be read or is not UTF-8 is
    a
    :class:`TemplateError` naming it (``path:line`` of the first byte that is not UTF-8), not a traceback."""
    import jinja2
    from jinja2.loaders import split_template_path

    from tracker.base.fileio import read_regular

    folder = root.resolve() / OVERRIDES  # the folder itself not resolved: a link out of the repository is refused

    class RepositoryLoader(jinja2.BaseLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            path = folder.joinpath(*split_template_path(template))  # TemplateNotFound for a name holding ``..``
            if not os.path.lexists(path):
                raise jinja2.TemplateNotFound(template)  # the packaged templates are looked at next
            try:
                data = read_regular(path, root=root, limit=MAX_TEMPLATE_BYTES)
            except FileError as err:
                reason = str(err).removeprefix(f"{path}: ")
                raise TemplateError(f"{_shown(path, root)}: {reason}") from None
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as err:
                line = data[: err.start].count(b"\n") + 1
                raise TemplateError(f"{_shown(path, root)}:{line}: not UTF-8 text (byte {err.start})") from None
            return text, str(path), lambda: True

    return RepositoryLoader()


def render(env: jinja2.Environment, name: str, root: Path | None = None, **context: Any) -> str:
    """Template ``name`` rendered with ``context``. A repository template (under ``root``'s overrides) that fails
    or reaches a bound raises :class:`TemplateError` naming it; a packaged template's failure propagates (a bug).
    With overrides, on a POSIX system, the render runs in a child process (:func:`_in_child`): one C call (comparing
    or JSON-encoding a list nested in itself) cannot be interrupted by the watchdog's signal, a process can be."""
    if getattr(env, "bounded", False) and root is not None and hasattr(os, "fork"):
        return _in_child(lambda: _render(env, name, root, **context), name, root)
    return _render(env, name, root, **context)


def _render(env: jinja2.Environment, name: str, root: Path | None = None, **context: Any) -> str:
    import jinja2

    overrides = None if root is None else root.resolve() / OVERRIDES
    bounded = bool(getattr(env, "bounded", False))
    top: Path | None = None
    try:
        template = env.get_template(name)
        top = _within(template.filename, overrides)
        with _watched(RENDER_SECONDS, RENDER_MEMORY) if bounded else contextlib.nullcontext():
            chunks = cast("Generator[str, None, None]", template.generate(**context))
            parts: list[str] = []
            size = 0
            for chunk in chunks:
                size += len(chunk)
                if bounded and size > MAX_OUTPUT:
                    chunks.throw(TemplateLimit(f"more than {MAX_OUTPUT} characters of output (the limit)"))
                parts.append(chunk)
        return "".join(parts)
    except jinja2.TemplateSyntaxError as err:
        where = _within(err.filename, overrides)
        if where is None:
            raise
        raise TemplateError(f"{_shown(where, root)}:{err.lineno}: {err.message}") from None
    except TemplateError:
        raise  # a repository template that cannot be read (its loader named it)
    except jinja2.TemplateNotFound as err:
        raise TemplateError(f"template {err.name} not found (in {OVERRIDES} or the packaged templates)") from None
    except Exception as err:
        found = _template_frame(sys.exc_info()[2], overrides)
        what = str(err) if isinstance(err, (TemplateLimit, _Watchdog)) else f"{type(err).__name__}: {err}"
        if isinstance(err, MemoryError) and bounded:  # the child's address-space limit (:func:`_in_child`)
            what = _MEMORY_LIMIT.format(RENDER_MEMORY >> 20)
        if found is None and isinstance(err, RecursionError) and overrides is not None:
            deep = top or _within(str(overrides / name), overrides)  # jinja2's parser or compiler recursed
            if deep is not None and (top is not None or os.path.lexists(deep)):
                too_deep = "nested too deeply to compile (Python's recursion limit)"
                raise TemplateError(f"{_shown(deep, root)}: {too_deep}") from None
        if found is None:
            if top is None or not isinstance(err, (TemplateLimit, _Watchdog, MemoryError)) or not bounded:
                raise
            raise TemplateError(f"{_shown(top, root)}: {what}") from None  # reached between two of its steps
        path, line = found
        raise TemplateError(f"{_shown(path, root)}:{line}: {what}") from None


# --- the sandbox's bounds ---------------------------------------------------------------------------------------


_METHODS = (types.MethodType, types.BuiltinMethodType)


@functools.cache
def _sandbox_class() -> type[jinja2.sandbox.ImmutableSandboxedEnvironment]:
    """:class:`_Sandbox`, made on first use (jinja2 is imported only by a command that renders)."""
    from jinja2 import nodes
    from jinja2.compiler import CodeGenerator, Frame
    from jinja2.runtime import Context
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedCodeGenerator(CodeGenerator):
        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
            """``a ~ b``, through :func:`_bounded_join` (jinja2 joins in place, out of the sandbox's reach)."""
            self.write("environment.bounded_join((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("), ")
            if frame.eval_ctx.volatile:
                self.write("(markup_join if context.eval_ctx.volatile else str_join))")
            else:
                self.write("markup_join)" if frame.eval_ctx.autoescape else "str_join)")

    class Sandbox(ImmutableSandboxedEnvironment):
        """jinja2's immutable sandbox, where no operator, call, filter or join makes a value over the bounds."""

        code_generator_class = BoundedCodeGenerator
        intercepted_binops = frozenset({"*", "**", "+", "%"})
        concat = staticmethod(lambda parts: _bounded_join(parts, "".join))
        bounded_join = staticmethod(_bounded_join)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.safe_attributes: dict[tuple[type, str], bool] = {}

        def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
            """jinja2's answer, remembered per (type, attribute), on which alone it depends: a report of 10,000
            phases asks it half a million times about ~50 attributes of ~10 types (an object whose
            ``__class__`` is not its type is asked afresh every time)."""
            kind = type(obj)
            key = (kind, attr)
            known = self.safe_attributes.get(key)
            if known is None:
                known = super().is_safe_attribute(obj, attr, value)
                if obj.__class__ is kind and len(self.safe_attributes) < 4096:
                    self.safe_attributes[key] = known
            return known

        def getattr(self, obj: Any, attribute: str) -> Any:
            """jinja2's, without its ``str.format`` check for a value that is no method (the check's own first test)."""
            try:
                value = getattr(obj, attribute)
            except AttributeError:
                return super().getattr(obj, attribute)  # an item of that name, or undefined
            if isinstance(value, _METHODS):
                return super().getattr(obj, attribute)
            if self.is_safe_attribute(obj, attribute, value):
                return value
            return self.unsafe_undefined(obj, attribute)

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return _checked(self.binop_table[operator](left, right))

        def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            args = _check_call(__obj, args, kwargs)
            return _checked(super().call(__context, __obj, *args, **kwargs))

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapper = super().wrap_str_format(value)
            if wrapper is None:
                return None
            text = str(value.__self__)
            checked = wrapper

            def bounded(*args: Any, **kwargs: Any) -> str:
                _check_format(text, (*args, *kwargs.values()), braces=True)
                return str(_checked(checked(*args, **kwargs)))

            return bounded

    return Sandbox


def _too_large(what: str) -> TemplateLimit:
    limit = f"the limit is {MAX_OUTPUT} characters or items, {MAX_INT_BITS}-bit numbers"
    return TemplateLimit(f"too large: {what} ({limit})")


def _checked(value: Any) -> Any:
    """``value``, once it is within the bounds."""
    if isinstance(value, (str, bytes, list, tuple, dict, set)) and len(value) > MAX_OUTPUT:
        raise _too_large(f"a value of {len(value)} characters or items")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _too_large(f"a {value.bit_length()}-bit number")
    return value


def _bounded_join(parts: tuple[Any, ...] | list[Any], join: Callable[[Any], str]) -> str:
    """``join(parts)`` (``~``, a block's text), refused when the strings among ``parts`` already make too much."""
    total = sum(len(p) for p in parts if isinstance(p, str))
    if total > MAX_OUTPUT:
        raise _too_large(f"joining {total} characters")
    return str(_checked(join(parts)))


_SEQUENCE = (str, bytes, list, tuple)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left operator right`` before it is computed when its result would be over the bounds."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0 and abs(left) > 1:
        if abs(left).bit_length() * right > MAX_INT_BITS:
            raise _too_large(f"{left} ** {right}")
    elif operator == "*" and ints:
        if left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise _too_large(f"a product of {left.bit_length()}- and {right.bit_length()}-bit numbers")
    elif operator == "*" and isinstance(left, _SEQUENCE) != isinstance(right, _SEQUENCE):
        seq, times = (left, right) if isinstance(left, _SEQUENCE) else (right, left)
        if isinstance(times, int) and len(seq) * times > MAX_OUTPUT:
            raise _too_large(f"{len(seq)} characters or items * {times}")
    elif operator == "+" and isinstance(left, _SEQUENCE) and isinstance(right, _SEQUENCE):
        if len(left) + len(right) > MAX_OUTPUT:
            raise _too_large(f"{len(left)} + {len(right)} characters or items")
    elif operator == "%" and isinstance(left, str):
        _check_format(left, right if isinstance(right, tuple) else (right,), braces=False)


# A ``%`` conversion's flags, width and precision; a ``{}`` field's format spec (after the ``:``).
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_FIELD = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def _check_format(text: str, args: tuple[Any, ...], *, braces: bool) -> None:
    """Refuse a format string whose widths or precisions (written, or ``*``/nested fields taken from ``args``)
    would make more than :data:`MAX_OUTPUT` characters."""
    fields = _BRACE_FIELD.findall(text) if braces else [m.group(0) for m in _PERCENT_SPEC.finditer(text)]
    for field in fields:
        spec = field.partition(":")[2] if braces else field
        if any(int(n) > MAX_OUTPUT for n in re.findall(r"\d+", spec)):
            raise _too_large(f"the format {field!r}")
        if "*" in spec if not braces else "{" in spec:
            _check_ints(args, {})


def _check_ints(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_OUTPUT:
            raise _too_large(f"an argument of {value}")


_STR_WIDTHS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})


def _check_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse a call of a template that would make a value over the bounds; its arguments (a join's items listed)."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if isinstance(owner, str):
        if name in _STR_WIDTHS:
            _check_ints(args, kwargs)
            size = kwargs.get("tabsize", args[0] if args else 8) if name == "expandtabs" else 0
            if isinstance(size, int) and len(owner) + owner.count("\t") * size > MAX_OUTPUT:  # N per tab
                raise _too_large(f"expanding {owner.count(chr(9))} tabs to {size} columns")
        elif name == "replace" and len(args) >= 2:
            _check_replace(owner, *args[:3])
        elif name == "join" and args:
            items = list(args[0])
            _check_join(owner, items)
            return (items, *args[1:])
    elif name == "generate_lorem_ipsum":
        n, big = kwargs.get("n", args[0] if args else 5), kwargs.get("max", args[3] if len(args) > 3 else 100)
        if isinstance(n, int) and isinstance(big, int) and n * big * 8 > MAX_OUTPUT:
            raise _too_large(f"lipsum of {n} paragraphs of up to {big} words")
    return args


def _check_replace(text: Any, old: Any, new: Any, count: Any = None) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    hits = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    if len(text) + hits * (len(new) - len(old)) > MAX_OUTPUT:
        raise _too_large(f"replacing {hits} times with {len(new)} characters")


def _check_join(sep: str, items: list[Any]) -> None:
    total = len(sep) * max(len(items) - 1, 0) + sum(len(x) for x in items if isinstance(x, str))
    if total > MAX_OUTPUT:
        raise _too_large(f"joining {total} characters")


def _bounded_filter(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """Filter ``f`` refusing what would make a value over the bounds: an integer argument over
    :data:`MAX_OUTPUT` (a width, a count; the filtered value itself may be any number)."""
    skip = 1 if getattr(f, "jinja_pass_arg", None) is not None else 0  # the context ahead of the value

    @functools.wraps(f)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        value, rest = (args[skip], args[skip + 1 :]) if len(args) > skip else (None, ())
        if name == "format" and isinstance(value, str):
            _check_format(value, (*rest, *kwargs.values()), braces=False)
        else:
            _check_ints(rest, kwargs)
        if name == "replace" and len(rest) >= 2:
            _check_replace(str(value), *rest[:3])
        elif name == "join" and value is not None:
            items = list(value)
            _check_join(str(rest[0]) if rest else str(kwargs.get("d", "")), items)
            args = (*args[:skip], items, *rest)
        return _checked(f(*args, **kwargs))

    return bounded


def _in_child(run: Callable[[], str], name: str, root: Path) -> str:
    """``run()`` in a forked child process, its result sent back through a pipe. The child's address space may grow
    by :data:`RENDER_MEMORY` bytes (``RLIMIT_AS``: an allocation past it is a MemoryError, named as the memory bound)
    and its CPU time is limited (``RLIMIT_CPU``); the parent kills it :data:`_KILL_GRACE` seconds past
    :data:`RENDER_SECONDS` (the child's own watchdog names the template's line when it can: between bytecodes).
    A child that ends without a result is a :class:`TemplateError` naming the template: what the parent knows."""
    import marshal
    import select
    import signal

    folder = root.resolve() / OVERRIDES
    shown = _shown(folder / name, root) if os.path.lexists(folder / name) else name
    seconds = RENDER_SECONDS
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; never returns
        os.close(read_fd)
        _child(run, write_fd)
    os.close(write_fd)
    chunks: list[bytes] = []
    reaped = False
    killed = False
    try:
        deadline = time.monotonic() + seconds + _KILL_GRACE
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        status = os.waitpid(pid, 0)[1]
        reaped = True
    finally:
        os.close(read_fd)
        if not reaped:  # interrupted (Ctrl-C): the child goes too
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    try:
        kind, text = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        kind, text = "none", ""
    if kind == "ok":
        return str(text)
    if kind == "template":
        raise TemplateError(str(text))
    if kind == "interrupted":
        raise KeyboardInterrupt
    if kind == "bug":
        raise RuntimeError(f"rendering {name} failed in its child process:\n{text}")
    if killed or (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU):
        raise TemplateError(f"{shown}: {_TIME_LIMIT.format(seconds)}")
    ended = os.waitstatus_to_exitcode(status)
    raise TemplateError(f"{shown}: the render ended without a result (exit status {ended})")


def _child(run: Callable[[], str], fd: int) -> None:
    """The render's child process: set its limits, run, send ``(kind, text)`` (marshal) to ``fd``, exit."""
    import atexit
    import marshal
    import math
    import traceback

    try:
        atexit._clear()  # the parent's handlers are the parent's
        _limit(RENDER_MEMORY, math.ceil(RENDER_SECONDS) + 1)
        try:
            payload = ("ok", run())
        except TemplateError as err:
            payload = ("template", str(err))
        except KeyboardInterrupt:
            payload = ("interrupted", "")
        except BaseException:
            payload = ("bug", traceback.format_exc())
        data = marshal.dumps(payload)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os._exit(0)


def _limit(memory: int, cpu_seconds: int) -> None:
    """Limit this process: its address space to what it has now plus ``memory`` bytes, its CPU time to
    ``cpu_seconds`` (SIGXCPU, then SIGKILL a second later). Where a limit cannot be set, the others still hold."""
    import resource

    try:
        with open("/proc/self/statm", "rb") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        size = None
    wanted = [(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)]
    if size is not None:
        wanted.append((resource.RLIMIT_AS, size + memory, size + memory))
    for which, soft, hard in wanted:
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (soft, hard))


@contextlib.contextmanager
def _watched(seconds: float, memory: int) -> Iterator[None]:
    """Within the block, a timer raises :class:`_Watchdog` in whatever runs once ``seconds`` passed or the
    process grew by more than ``memory`` bytes. Only where a timer signal can be had: the main thread of a POSIX
    process (elsewhere the other bounds still hold). A timer set before (pytest-timeout's) is put back after."""
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    started = time.monotonic()
    deadline = started + seconds
    base = _resident()
    active = [True]

    def tick(signum: int, frame: object) -> None:
        if not active[0]:
            return
        if time.monotonic() > deadline:
            raise _Watchdog(_TIME_LIMIT.format(seconds))
        now = _resident()
        if base is not None and now is not None and now - base > memory:
            raise _Watchdog(_MEMORY_LIMIT.format(memory >> 20))

    previous = signal.signal(signal.SIGALRM, tick)
    before = signal.setitimer(signal.ITIMER_REAL, _WATCH_INTERVAL, _WATCH_INTERVAL)
    try:
        yield
    finally:
        while True:
            try:  # a tick may still raise until ``active`` is False: then it is only retried
                active[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
                if before[0] > 0:
                    left = max(before[0] - (time.monotonic() - started), 1e-3)
                    signal.setitimer(signal.ITIMER_REAL, left, before[1])
                break
            except _Watchdog:
                continue


def _resident() -> int | None:
    """This process's resident memory in bytes (Linux ``/proc``), None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _within(filename: str | None, folder: Path | None) -> Path | None:
    """``filename`` when it lies under ``folder`` (a repository's overrides; its symlinks not followed, as the loader
    names its templates), else None."""
    if filename is None or folder is None:
        return None
    path = Path(os.path.abspath(filename))
    return path if path.is_relative_to(folder) else None


def _template_frame(tb: TracebackType | None, overrides: Path | None) -> tuple[Path, int] | None:
    """The innermost frame of the traceback that runs a repository template (jinja2 gives template frames the
    template's file and line), or None when the failure is not in one."""
    found = None
    while tb is not None:
        path = _within(tb.tb_frame.f_code.co_filename, overrides)
        if path is not None:
            found = (path, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)
