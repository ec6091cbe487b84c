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
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tracker.errors import FileError

if TYPE_CHECKING:
    import jinja2

OVERRIDES = Path(".tracker") / "templates"
PACKAGED = "tracker/"  # the prefix that names a packaged template from an override

# Characters that end a Markdown table row or a line: each becomes a space in a cell.
_LINE_BREAKS = re.compile("\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f]")
_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", "|": "\\|", "\\": "\\\\"}
# What could start markup in CommonMark text: a tag, comment, declaration or autolink (``<`` then a letter, ``/``,
# ``!`` or ``?``), an entity (``&`` then a letter or ``#``); and what could end a table cell early: ``|``, and a
# backslash (GFM reads a backslash and the character after it as one, so a literal one before ``|`` hides its escape).
_MD_SPECIAL = re.compile("<(?=[A-Za-z/!?])|&(?=[A-Za-z#])|[|\\\\]")


class TemplateError(FileError):
    """A repository template that does not parse or fails while rendering: ``path:line: message`` (exit 8)."""


def packaged_dir() -> Path:
    """The packaged templates: ``tracker/templates/`` where the tracker is installed, else the checkout's
    ``templates/``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "report.md.j2").is_file():
            return candidate
    raise FileError(
        f"the report templates are missing (looked in {here / 'templates'} and {here.parent / 'templates'})"
    )


def md(value: object) -> str:
    """``value`` as text for a Markdown table cell or line: one line (line breaks become spaces, control characters
    dropped), ``|`` escaped, and no raw HTML: a ``<`` that could open a tag, comment or autolink and an ``&`` that
    could start an entity become entities, a leading ``>`` (a quote) too. Other ``<`` and ``>`` stay readable
    (``1.04× < 1.10×``)."""
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", str(value)))
    text = _MD_SPECIAL.sub(lambda m: _MD_ESCAPES[m.group(0)[0]] + m.group(0)[1:], text)
    return "&gt;" + text[1:] if text.startswith(">") else text


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
    """The environment for ``root``'s templates (None: the packaged ones only), with the report filters."""
    import jinja2

    loaders: list[jinja2.BaseLoader] = []
    if root is not None and (root / OVERRIDES).is_dir():
        loaders.append(_repository_loader(root))
    packaged = jinja2.FileSystemLoader(packaged_dir())
    loaders += [jinja2.PrefixLoader({PACKAGED.rstrip("/"): packaged}), packaged]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.filters.update({"md": md, "md_code": md_code, **(filters or {})})
    return env


def _repository_loader(root: Path) -> jinja2.BaseLoader:
    """The loader of ``root``'s overrides: a file that cannot be read or is not UTF-8 is a :class:`TemplateError`
    naming it (``path:line`` of the first byte that is not UTF-8), not a traceback."""
    import jinja2

    class RepositoryLoader(jinja2.FileSystemLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            try:
                return super().get_source(environment, template)
            except jinja2.TemplateNotFound:
                raise  # an OSError too: the packaged templates are looked at next
            except UnicodeDecodeError as err:
                path = root.resolve() / OVERRIDES / template
                line = err.object[: err.start].count(b"\n") + 1
                raise TemplateError(f"{_shown(path, root)}:{line}: not UTF-8 text (byte {err.start})") from None
            except OSError as err:
                path = root.resolve() / OVERRIDES / template
                raise TemplateError(f"{_shown(path, root)}: cannot be read: {err.strerror or err}") from None

    return RepositoryLoader(root / OVERRIDES)


def render(env: jinja2.Environment, name: str, root: Path | None = None, **context: Any) -> str:
    """Template ``name`` rendered with ``context``. A repository template (under ``root``'s overrides) that fails
    raises :class:`TemplateError` naming it; a packaged template's failure propagates (a bug)."""
    import jinja2

    overrides = None if root is None else (root / OVERRIDES).resolve()
    try:
        return env.get_template(name).render(**context)
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
        if found is None:
            raise
        path, line = found
        raise TemplateError(f"{_shown(path, root)}:{line}: {type(err).__name__}: {err}") from None


def _within(filename: str | None, folder: Path | None) -> Path | None:
    """``filename`` when it lies under ``folder`` (a repository's overrides), else None."""
    if filename is None or folder is None:
        return None
    path = Path(filename).resolve()
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
