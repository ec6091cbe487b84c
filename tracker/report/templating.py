"""The environment every report template renders in (:func:`environment`) and the render (:func:`render`), bounded
in time and memory. jinja2 is imported here, in :mod:`tracker.report.sandbox` and in
:mod:`tracker.report.template_sources` only, each time on first use.

Plan text is data, never a template. Templates are the files this module loads (the packaged ones, or a
repository's overrides); titles, prose, parameters and reasons reach them only as values, so ``{{ 7*7 }}`` or
``{% for %}`` in a title comes out as written. HTML templates (``*.html.j2``) are autoescaped: ``<script>`` and
``</table>`` in a title come out as text. Markdown has no escaping of its own, so the Markdown templates pass
every piece of text through :func:`tracker.report.md_filters.md` (``|md``), which keeps a table row one row and
leaves no raw HTML. ``StrictUndefined``: a template that names something the data does not have fails instead of
printing nothing.

Where templates come from, first match wins (:mod:`tracker.report.template_sources`):

1. ``.tracker/templates/<name>`` of the repository: a per-repository override (committed with the plans);
2. the packaged templates (``templates/`` of the checkout, installed as ``tracker/templates/``), also reachable
   as ``tracker/<name>``, so an override can ``{% extends "tracker/report.html.j2" %}`` and replace one block.

A template of the repository that does not parse or fails while rendering is the user's file, not a bug of the
tracker: :class:`TemplateError` (exit 8) names it as ``path:line: what is wrong``. A failure inside a packaged
template stays a traceback.

A repository's template is code from whichever branch is checked out, run by ``tracker check`` (in CI) and
``tracker report``, so it is treated as hostile. Every template renders in jinja2's immutable sandbox (no attribute
starting with ``_``, no method that changes the data: ``cycler.__init__.__globals__`` is refused), and an override
is read only as a regular file (of at most :data:`~tracker.report.template_sources.MAX_TEMPLATE_BYTES`) that
resolves inside the repository, as plan files are. Rendering with overrides is bounded (:mod:`tracker.report.sandbox`):
no ``range`` of more than 100,000 items (jinja2's), no operation, call or filter that would make a string, sequence
or format width of more than :data:`MAX_OUTPUT` characters or items or an integer of more than
:data:`~tracker.report.sandbox.MAX_INT_BITS` bits, at most :data:`MAX_OUTPUT` characters of output,
:data:`RENDER_SECONDS` seconds and :data:`RENDER_MEMORY` bytes of memory grown (the last two watched every 20 ms
where the render runs in the main thread of a POSIX process). Past a bound: :class:`TemplateError` naming the
template's line. One C call (``d == d2`` or ``d|tojson`` of a list nested in itself: 10**12 items from 4,000) is out
of a signal's reach, so on a POSIX system a render with overrides runs in a forked child process whose address space
may grow by :data:`RENDER_MEMORY` (``RLIMIT_AS``), with a CPU-time limit, killed by the parent a second past
:data:`RENDER_SECONDS`; such a render is named by its template, without a line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from tracker.report.md_filters import _CONTROL, md, md_code, md_line
from tracker.report.sandbox import MAX_OUTPUT, TemplateLimit, _bounded_filter, _sandbox_class
from tracker.report.template_sources import OVERRIDES, PACKAGED, TemplateError, _repository_loader, _shown, packaged_dir

if TYPE_CHECKING:
    import jinja2

# The bounds of a render that runs a repository's templates (module docstring). A real report is well under 1 MB.
RENDER_SECONDS = 30.0
RENDER_MEMORY = 1 << 30  # bytes the process may grow by while rendering
_WATCH_INTERVAL = 0.02
_KILL_GRACE = 1.0  # seconds past RENDER_SECONDS before the render's child process is killed (its watchdog goes first)
_TIME_LIMIT = "still rendering after {:g} seconds (the limit)"
_MEMORY_LIMIT = "the render grew the process by more than {} MiB (the limit)"


class _Watchdog(Exception):
    """Raised by the render's timer, inside the template code it interrupts, when time or memory ran out. An
    Exception (not a BaseException) so that jinja2 names the template's line; the timer raises it again every
    tick, should something catch it."""


def _finalized(value: object) -> object:
    """Every value a template writes (jinja2's ``finalize``): text without control or bidirectional characters
    (:data:`_CONTROL`), HTML-safe text kept safe; anything else as it is."""
    if not isinstance(value, str) or not _CONTROL.search(value):
        return value
    return type(value)(_CONTROL.sub("", value))  # a markupsafe.Markup stays one: dropping characters adds no markup


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
    env.filters.update({"md": md, "md_code": md_code, "md_line": md_line, **(filters or {})})
    if overridden:  # the packaged templates are the tracker's own code: their filters need no bounds
        env.filters = {name: _bounded_filter(name, f) for name, f in env.filters.items()}
    env.bounded = overridden  # type: ignore[attr-defined]
    return env


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
