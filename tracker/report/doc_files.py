"""The docs whose results tables the tracker writes: which they are (``pyproject.toml``), reading them safely, and
what ``tracker update`` would make of them (the tables themselves are :mod:`tracker.report.doc_tables`').

A repository names its docs in ``pyproject.toml``::

    [tool.tracker]
    docs = ["README.md", "bench/README.md"]

No ``[tool.tracker]`` table (or no ``pyproject.toml``): no docs, and ``update`` and ``check`` are what they were.
A bad value is a usage error (exit 3, ``pyproject.toml:line: ...``); a doc that cannot be read (missing, a FIFO, a
directory, a symlink out of the repository, not UTF-8) is refused unread (exit 8, ``path: reason``), as a plan
file is.

A warm run is cheap: a doc with neither a ``results`` block nor a region marker is left alone without parsing it,
and a doc whose text is known to be up to date with the current result files and code (the cache ``doc-tables``,
see :class:`Tables`) is neither parsed nor rendered: no result file or evidence is read, pydantic is not imported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from tracker.base.cache import PARSE_LIBRARIES, Cache, cache_key, code_identity, library_key
from tracker.base.fileio import FileStamp, file_stamp, read_text
from tracker.base.hashing import sha256_hex
from tracker.errors import ExitCode, FileError, TrackerError, UsageError

if TYPE_CHECKING:
    from tracker.store.bench_evaluator import RepoResults

PYPROJECT = "pyproject.toml"
KEYS = ("docs",)  # the keys of [tool.tracker]: an unknown one is a typo (a doc silently dropped), refused
MAX_DOC_BYTES = 4 * 1024 * 1024  # as a plan file
CACHE = "doc-tables"  # {"blocks": {sha256 of a block's TOML: validated fields}, "current": [sha256 of doc texts]}
# The code a doc's regions depend on besides the result files (whose evaluation code RepoResults' key covers).
_MARKER = "<!-- tracker:begin "


def _line_of(text: str, pattern: str) -> int:
    match = re.search(pattern, text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def declared_docs(root: Path) -> list[str]:
    """The docs ``pyproject.toml`` names under ``[tool.tracker] docs`` (POSIX paths relative to ``root``), in its
    order; [] without the file or the table. UsageError (exit 3) for a value that is not a list of distinct
    relative paths inside the repository, none of them a plan file; FileError (exit 8) for an unreadable file."""
    path = root / PYPROJECT
    if not path.exists() and not path.is_symlink():
        return []
    try:
        text = read_text(path, root=root, limit=MAX_DOC_BYTES)
    except FileError as err:
        raise FileError(f"{PYPROJECT}: {str(err).removeprefix(f'{path}: ')}") from None
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = re.search(r"\(at line (\d+)", str(err))
        where = f"{PYPROJECT}:{found.group(1)}" if found else PYPROJECT
        reason = re.sub(r" \(at .*\)$", "", str(err))
        raise UsageError(f"{where}: invalid TOML: {reason}") from None
    except (RecursionError, ValueError) as err:  # nested too deeply; an integer too long to convert
        raise UsageError(f"{PYPROJECT}: invalid TOML: {str(err) or type(err).__name__}") from None
    tool = data.get("tool", {})
    table = tool.get("tracker") if isinstance(tool, dict) else None
    if table is None:
        return []
    head = _line_of(text, r"^\s*\[\s*tool\s*\.\s*tracker\s*\]")
    if not isinstance(table, dict):
        raise UsageError(f"{PYPROJECT}:{head}: [tool.tracker] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(f"{PYPROJECT}:{head}: [tool.tracker]: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    docs = table.get("docs", [])
    line = _line_of(text, r"^\s*docs\s*=") if "docs" in table else head
    at = f"{PYPROJECT}:{line}: [tool.tracker] docs"
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise UsageError(f"{at}: expected a list of paths (strings) relative to the repository root")
    from tracker.plans.load import PLAN_GLOB
    from tracker.report.doc_tables import doc_path_problem

    seen: set[str] = set()
    for doc in docs:
        problem = doc_path_problem(doc)
        if problem is None and doc in seen:
            problem = "is listed twice"
        if problem is None and Path(doc).parent == Path("plans") and Path(doc).match(PLAN_GLOB):
            problem = "is a plan file (its regions are the plan's: name docs, not plans)"
        if problem is not None:
            raise UsageError(f"{at}: {doc!r} {problem}")
        seen.add(doc)
    return list(docs)


class DocFile(NamedTuple):
    """One declared doc as read: its path (relative, POSIX), its text, its stamp when read (None: unknown)."""

    path: str
    text: str
    stamp: FileStamp | None


def read_doc(root: Path, rel: str) -> DocFile:
    """A doc's text: FileError ``path: reason`` (exit 8) when it is missing, not a regular file, larger than
    :data:`MAX_DOC_BYTES`, not UTF-8 or resolves outside the repository."""
    path = root / rel
    stamp = file_stamp(path)
    try:
        text = read_text(path, root=root, limit=MAX_DOC_BYTES)
    except FileError as err:
        raise FileError(f"{rel}: {str(err).removeprefix(f'{path}: ')}") from None
    return DocFile(rel, text, stamp)


def _code_key() -> str:
    return cache_key("doc-tables", code_identity(), library_key(*PARSE_LIBRARIES))  # Markdown blocks, pydantic tables


class Tables:
    """What the docs' tables are rendered with: the result runs (read only when a doc is not known to be up to
    date) and the cache ``doc-tables``.

    A doc's text is known to be up to date when the cache says so for the same code and the same listing of the
    result files (:func:`tracker.store.statusindex.listing`: one ``stat`` per file of the store and ``bench/results/``,
    used only once every file has settled), so a warm run reads no result file and parses no evidence."""

    def __init__(self, root: Path, cache: Cache) -> None:
        from tracker.base.contract import Clock
        from tracker.store.statusindex import listing

        self.root = root
        self.cache = cache
        self.now = Clock().now
        self.key = cache_key(CACHE, _code_key())
        found, settled = listing(root)
        self.listing = found if settled else None
        known = cache.read(CACHE, self.key)
        data: dict[str, Any] = known if isinstance(known, dict) else {}
        blocks, current, then = data.get("blocks"), data.get("current"), data.get("now")
        self.blocks: dict[str, Any] = dict(blocks) if isinstance(blocks, dict) else {}
        same = self.listing is not None and data.get("listing") == self.listing
        same = same and isinstance(then, str) and then <= self.now  # a clock set back may refuse a file it accepted
        self.current: set[str] = set()
        if same and isinstance(current, list):
            self.current = {s for s in current if isinstance(s, str)}
        self._repo: RepoResults | None = None

    @property
    def repo(self) -> RepoResults:
        """The repository's result files (identified and parsed on first use)."""
        if self._repo is None:
            from tracker.store.bench_evaluator import RepoResults

            self._repo = RepoResults(self.root, cache=self.cache)
        return self._repo

    def rewrite(self, doc: DocFile, force: bool) -> str:
        """``doc``'s text with its regions written (the text itself when up to date). DocTableError (exit 2) for
        an invalid block, RegionEditedError (exit 4) for a region edited by hand unless ``force``."""
        from tracker.plans.regions import rewrite
        from tracker.report.doc_figures import may_hold_figures, rewrite_figures
        from tracker.report.doc_tables import DocTableError, doc_regions, parse_tables

        sha = sha256_hex(doc.text.encode("utf-8", "surrogatepass"))
        if sha in self.current:
            return doc.text
        specs, problems = parse_tables(doc.path, doc.text, self.blocks)
        if problems:
            raise DocTableError(problems)
        figures = may_hold_figures(doc.text)
        errors = self.repo.errors() if specs or figures else []
        runs = self.repo.runs() if specs or figures else []
        invalid = [str(e) for e in errors]
        new = rewrite(doc.text, doc_regions(specs, runs, invalid), doc.path, force=force)
        if figures:
            new = rewrite_figures(doc.path, new, runs, invalid, force=force)
        if all(e.lasting for e in errors):  # a file refused for a time still to come is usable later: not kept
            if new == doc.text and self.listing is not None:
                self.current.add(sha)
            data = {"listing": self.listing, "now": self.now, "blocks": self.blocks, "current": sorted(self.current)}
            self.cache.put(CACHE, self.key, data)
        return new


def may_change(doc: DocFile) -> bool:
    """Could ``update`` change this doc? Not without a ``results`` block, a region marker or a figure marker (no
    parse needed)."""
    from tracker.report.doc_figures import may_hold_figures
    from tracker.report.doc_tables import may_hold_blocks

    return may_hold_blocks(doc.text) or _MARKER in doc.text or may_hold_figures(doc.text)


def doc_changes(
    root: Path, docs: list[DocFile], force: bool, cache: Cache, tables: Tables | None = None
) -> list[tuple[DocFile, str]]:
    """(doc, new text) for every doc whose results regions are out of date (``tables``: made when a doc needs it)."""
    out: list[tuple[DocFile, str]] = []
    for doc in docs:
        if not may_change(doc):
            continue
        tables = tables or Tables(root, cache)
        new = tables.rewrite(doc, force)
        if new != doc.text:
            out.append((doc, new))
    return out


def pending_docs(root: Path, force: bool = False, *, cache: Cache | None = None) -> list[tuple[DocFile, str]]:
    """(doc, new text) for every declared doc that ``tracker update`` would change (``cache``: the command's)."""
    cache = Cache(root) if cache is None else cache
    return doc_changes(root, [read_doc(root, rel) for rel in declared_docs(root)], force, cache)


def refuse_unsafe_doc(doc: DocFile, new: str, tables: Tables) -> None:
    """The net under the region rules (as :func:`tracker.commands.update.refuse_unsafe` for plan files): ``new``
    must hold the same ``results`` blocks as ``doc``, and rewriting it again must change nothing. Raises
    :class:`UnsafeDocError` (exit 2); it parses, so it runs only before a write."""
    from tracker.errors import RegionEditedError
    from tracker.report.doc_tables import DocTableError, find_blocks

    old_blocks = [(b.content, b.closed) for b in find_blocks(doc.text)]
    new_blocks = [(b.content, b.closed) for b in find_blocks(new)]
    why = None
    if old_blocks != new_blocks:
        why = "its results blocks would not be read as they are now"
    else:
        try:
            if tables.rewrite(doc._replace(text=new), force=False) != new:
                why = "a second update would not find the regions where this one would write them"
        except (RegionEditedError, DocTableError) as err:
            why = f"a second update would not find the regions where this one would write them ({err})"
    if why is not None:
        raise UnsafeDocError(
            f"{doc.path}: update refused, nothing was written: with its regions rewritten, {why} (the Markdown "
            "next to a region, say an HTML line or a list, would take in what follows it); put a blank line between "
            "that text and the region, or move it, then run tracker update again"
        )


class UnsafeDocError(TrackerError):
    """Writing a doc's regions would change what its Markdown means (a block would be read otherwise), or a second
    update would not find them again: nothing is written. Exit 2, as for a plan file."""

    exit_code = ExitCode.INVALID_PLANS
