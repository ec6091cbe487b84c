"""Where report templates come from (:mod:`tracker.report.templating`'s loaders): the packaged ones
(:func:`packaged_dir`) and a repository's overrides under :data:`OVERRIDES`, each read as hostile (a regular file of
at most :data:`MAX_TEMPLATE_BYTES` that resolves inside the repository); :class:`TemplateError` names a repository
template that cannot be used, as ``path:line: what is wrong`` (exit 8).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tracker.errors import FileError

if TYPE_CHECKING:
    import jinja2

OVERRIDES = Path(".tracker") / "templates"
PACKAGED = "tracker/"  # the prefix that names a packaged template from an override
MAX_TEMPLATE_BYTES = 1024 * 1024


class TemplateError(FileError):
    """A repository template that does not parse or fails while rendering: ``path:line: message`` (exit 8)."""


def packaged_dir() -> Path:
    """The packaged templates: ``tracker/templates/`` where the tracker is installed, else the checkout's
    ``templates/``."""
    package = Path(__file__).resolve().parents[1]  # tracker/
    places = (package / "templates", package.parent / "templates")
    for candidate in places:
        if (candidate / "report.md.j2").is_file():
            return candidate
    raise FileError(f"the report templates are missing (looked in {places[0]} and {places[1]})")


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


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)
