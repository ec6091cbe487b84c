"""The files git ignores that pytest would read for a test gate now (:class:`IgnoredInputs`): a ``conftest.py``, ini
file or package ``__init__.py`` on the way to the gate's path, and under a folder gate the test files pytest collects
by its defaults, with the folders pytest does not collect in (:func:`norecursedirs`) left out. Standard library only:
one ``git ls-files --ignored --directory`` call for all gates, on first use.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tracker.base.dirty import BYTECODE_EXCLUDE
from tracker.base.fingerprint import TRACKER_DIR
from tracker.base.selection import INI_NAMES, config_paths, normalize_arg

MAX_WALKED = 2000  # entries of an ignored folder looked at for a file pytest reads, at most
NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")  # pytest's default


# By configuration file pytest reads (tracker.base.selection.INI_NAMES): the tables of its settings there, and whether
# the file is pytest's even without one (then its settings are the defaults).
_PYTEST_TABLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "pytest.toml": (("pytest",), True),
    ".pytest.toml": (("pytest",), True),
    "pytest.ini": (("pytest",), True),
    ".pytest.ini": (("pytest",), True),
    "pyproject.toml": (("tool.pytest.ini_options", "tool.pytest"), False),
    "tox.ini": (("pytest",), False),
    "setup.cfg": (("tool:pytest",), False),
}


def norecursedirs(root: Path) -> tuple[str, ...]:
    """The folder patterns pytest does not collect in, as the repository's root configuration file says (the first of
    pytest's order that is one: ``pytest.toml``, ``.pytest.toml``, ``pytest.ini`` and ``.pytest.ini`` even without a
    pytest section, ``pyproject.toml`` with ``[tool.pytest.ini_options]`` or pytest 9's ``[tool.pytest]``, ``tox.ini``
    with ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``), else pytest's default; ``__pycache__`` always."""
    import configparser
    import tomllib

    found: object = None
    for name in INI_NAMES:  # pytest's order
        keys, always = _PYTEST_TABLES[name]
        path = root / name
        try:
            if not path.is_file():
                continue
            tables: list[dict[str, object]] = []
            if name.endswith(".toml"):
                doc: object = tomllib.loads(path.read_text(encoding="utf-8"))
                for dotted in keys:
                    table = doc
                    for key in dotted.split("."):
                        table = table.get(key) if isinstance(table, dict) else None
                    if isinstance(table, dict):
                        tables.append(table)
            else:
                parser = configparser.ConfigParser(interpolation=None)
                parser.read_string(path.read_text(encoding="utf-8"))
                tables = [dict(parser.items(k)) for k in keys if parser.has_section(k)]
        except (OSError, ValueError, configparser.Error):
            return ()  # unreadable: pytest may look anywhere
        if not tables and not always:
            continue
        found = next((t["norecursedirs"] for t in tables if "norecursedirs" in t), None)
        break
    if isinstance(found, str):
        patterns: tuple[str, ...] = tuple(found.split())
    elif isinstance(found, list):
        patterns = tuple(str(p) for p in found)
    else:
        patterns = NORECURSE
    return (*patterns, "__pycache__")


def _pytest_reads(name: str) -> bool:
    """Does pytest collect a file so named under a folder it collects, by its defaults: a conftest.py or a test
    module (``python_files``: test_*.py, *_test.py)? Not a package's ``__init__.py`` there, nor a ``test*.txt`` (a
    test's own output as often as a doctest): a run records neither, so one git ignores would stale the gate for good
    (round 22)."""
    return name == "conftest.py" or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))


class IgnoredInputs:
    """The files git ignores that pytest would read for a test gate now (rounds 20 and 21, N4): a ``conftest.py``,
    ini file or package ``__init__.py`` on the way to its path, and under a folder gate a file pytest reads by its
    defaults (:func:`_pytest_reads`), also inside an ignored folder or a link to one (walked up to :data:`MAX_WALKED`
    entries). A run that read
    such a conftest, ini or test file counts no passes (:func:`tracker.pytest_plugin.unrecorded_configuration`, a test
    file git ignores), and a module it imported is recorded with its id (``provenance.ignored_modules``, left out by
    the callers), so one there now came after the run that met the gate: a conftest with an autouse fixture that
    raises, an ini's ``filterwarnings = error``, a new failing test. No id of the tree names them. Not looked for:
    files a custom ``python_files`` or ``--doctest-glob`` names, doctest files, data files, the root's
    ``__init__.py``, and folders the root ini's ``norecursedirs`` (else pytest's default) or a virtual environment's
    ``pyvenv.cfg`` rule out: an ini elsewhere, or pytest's native ``[tool.pytest]`` table, is not read. One ``git
    ls-files --ignored --directory`` call for all gates, on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._listing: list[str] | None = None
        self._skip: tuple[str, ...] | None = None
        self._answers: dict[str, list[str]] = {}  # by test gate argument: phases share them, status asks per source

    def _skipped(self, parts: list[str]) -> bool:
        """Is a folder of these path parts one pytest does not collect in (its ``norecursedirs``)?"""
        import fnmatch

        if self._skip is None:
            self._skip = norecursedirs(self.root)
        return any(fnmatch.fnmatch(p, pattern) for p in parts for pattern in self._skip)

    def listing(self) -> list[str]:
        """The ignored files and folders (``dir/``) git lists, ``.tracker/`` and bytecode caches left out."""
        if self._listing is None:
            cmd = ["git", "-c", "core.quotepath=off", "ls-files", "--others", "--ignored", "--exclude-standard"]
            cmd += ["--directory", "-z", "--", ".", f":(exclude){TRACKER_DIR}/", BYTECODE_EXCLUDE]
            proc = subprocess.run(cmd, cwd=self.root, capture_output=True, check=False)
            names = proc.stdout.decode("utf-8", "surrogateescape").split("\0") if proc.returncode == 0 else []
            self._listing = [n for n in names if n]
        return self._listing

    def __call__(self, test: str) -> list[str]:
        if test not in self._answers:
            self._answers[test] = self._inputs(test)
        return self._answers[test]

    def _inputs(self, test: str) -> list[str]:
        path = normalize_arg(test).split("::", 1)[0].rstrip("/")
        path = "" if path in ("", ".") else path
        parts = path.split("/") if path else []
        on_the_way = {p for p in config_paths(test) if "*" not in p}
        on_the_way |= {"/".join([*parts[:d], "__init__.py"]) for d in range(1, len(parts) + 1)}
        folder = (self.root / path).is_dir() if path else True
        out = []
        for entry in self.listing():
            name = entry.rstrip("/")
            if name in on_the_way:
                out.append(name)
            elif folder and (not path or entry.startswith(path + "/")):
                full = self.root / name
                folders = name.split("/")[len(parts) :]
                if entry.endswith("/") or full.is_dir():  # a folder, or a link to one (git lists it as a file)
                    if self._skipped(folders):
                        continue
                    if self._holds_inputs(full):
                        out.append(name)
                elif self._skipped(folders[:-1]):
                    continue
                elif _pytest_reads(name.rsplit("/", 1)[-1]):
                    out.append(name)
        return out

    def _holds_inputs(self, folder: Path) -> bool:
        if (folder / "pyvenv.cfg").exists():
            return False  # a virtual environment: its libraries, never collected as tests
        seen = 0
        for _dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
            dirnames[:] = [d for d in dirnames if not self._skipped([d])]
            seen += len(dirnames) + len(filenames)
            if any(_pytest_reads(f) for f in filenames):
                return True
            if seen > MAX_WALKED:
                return False  # an ignored data folder (or a loop of links): past the bound, not looked through
        return False
