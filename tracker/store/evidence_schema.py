"""What an evidence document must hold, checked by hand (no pydantic: status reads every store file on every run):
:func:`parse_document` reads one file's bytes, :func:`check_document` checks its kind, version and the type of every
value the tracker reads, and gives its UTC time. The store (:mod:`tracker.store.evidence`) and ``tracker ingest``
both read by it; :func:`show`, :func:`key_name` and :func:`wrong` word every message about a document's values.
"""

from __future__ import annotations

import json
from typing import Any

from tracker.base.contract import VERSIONS, Clock, utc_time
from tracker.base.fileio import parse_json
from tracker.core.model import OUTCOMES

STATUSES = ("complete", "interrupted", "incomplete")
_HEX_DIGITS = "0123456789abcdef"
_HEX = frozenset(_HEX_DIGITS)


def show(value: object) -> str:
    """A value for a message, never walked: scalars as a short repr, containers by their type alone
    (a document nested thousands deep must not crash the message that rejects it)."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int) and value.bit_length() > 200:
        return "a very large integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def key_name(key: str) -> str:
    """A key of a document as a message names it: plain when it is a word (``python``), else quoted and
    shortened (a key may hold a newline or be a megabyte long)."""
    return key if key.isidentifier() else show(key)


def wrong(name: str, value: object, expected: str) -> str:
    """``name 'zzz' is not 40 lowercase hex digits`` / ``tests is an object, not a list``."""
    if isinstance(value, (dict, list)):
        return f"{name} is {show(value)}, not {expected}"
    return f"{name} {show(value)} is not {expected}"


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float))  # bool is an int


def _is_hex(value: object, lengths: tuple[int, ...] = (40,)) -> bool:
    return isinstance(value, str) and len(value) in lengths and _HEX.issuperset(value)


def _str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value - value == 0  # finite


class _Shape:
    """Collects what is wrong with one document; the first problem is its reason."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[str] = []

    def need(self, ok: bool, what: str) -> bool:
        if not ok:
            self.problems.append(what)
        return ok

    def typed(
        self, doc: dict[str, Any], key: str, test: Any, expected: str, where: str = "", optional: bool = False
    ) -> None:
        """``doc[key]`` passes ``test`` (absent is fine when ``optional``)."""
        if key not in doc:
            self.need(optional, f"{where}{key} is missing ({expected})")
        elif not test(doc[key]):
            self.problems.append(wrong(f"{where}{key}", doc[key], expected))

    def time(self, where: str, value: object) -> str | None:
        """``value`` as a UTC time (:func:`utc_time`), or None and a problem: the store is ordered by
        time, so a file without a valid one cannot be placed."""
        utc = utc_time(value)
        if utc is None:
            self.problems.append(f"{where} {show(value)} is not an ISO-8601 time with a time zone")
        return utc

    def extra(self, doc: dict[str, Any], known: frozenset[str], where: str = "") -> None:
        """Keys this version does not define may only hold a string, a number, a boolean or null."""
        for key, value in doc.items():
            if key not in known and not _scalar(value):
                self.problems.append(
                    f"{where}{key_name(key)} is {show(value)}: an unknown key may only hold a string, number, "
                    "boolean or null"
                )
                return


def _file_ids(value: object) -> bool:
    """A ``{path: blob id}`` map (git's 40-hex ids, or 64 in a SHA-256 repository); one join checks the digits."""
    if type(value) is not dict:
        return False
    ids = value.values()
    try:
        joined = "".join(ids)  # every id a string
    except TypeError:
        return False
    # C-speed checks (a run records every file of the tree): each 40 or 64 long, and nothing but hex digits.
    return _ID_LENGTHS.issuperset(map(len, ids)) and not joined.encode("ascii", "replace").translate(None, _HEX_BYTES)


_ID_LENGTHS = frozenset({40, 64})
_HEX_BYTES = _HEX_DIGITS.encode()


_RUN_KEYS = frozenset(
    {
        "schema",
        "version",
        "status",
        "provenance",
        "rootdir",
        "gates",
        "files",
        "tests",
        "exitstatus",
        "duration",
        "losses",
        "running",
    }
)
_PROVENANCE_KEYS = frozenset(
    {"time", "host", "commit", "dirty", "args", "narrowed", "outside", "options", "altered", "inifile"}
    | {"ignored_modules", "declared_options"}
)
_RECORD_KEYS = frozenset({"nodeid", "outcome", "reason", "duration", "markers", "order", "worker"})
MAX_ORDER = 2**53  # a record's ``order``: the place its test ran in, exact in any JSON reader


def _order(value: object) -> bool:
    return type(value) is int and 0 <= value < MAX_ORDER


_RUNNING_KEYS = frozenset({"nodeid", "markers", "pid", "pid_start"})
_SIGNOFF_KEYS = frozenset(
    {
        "schema",
        "version",
        "gate_key",
        "gate_hash",
        "phase_manual",
        "manual",
        "by",
        "why",
        "time",
        "host",
        "commit",
        "dirty",
        "files",
    }
)


def _commit(value: object) -> bool:
    return value is None or _is_hex(value)


def _optional_bool(value: object) -> bool:
    return value is None or isinstance(value, bool)


def _outside_map(value: object) -> bool:
    """``provenance.outside``: the run's test files that are not the repository's, each with why (a string)."""
    return type(value) is dict and all(isinstance(v, str) for v in value.values())


def _check_test_run(doc: dict[str, Any], shape: _Shape) -> tuple[str, str | None]:
    """Shape of a ``tracker-test-run`` (written by the plugin or by ``tracker ingest``); returns (where its
    time is, its UTC time or None).

    A run that counts (``complete``, or one naming the test it crashed in) needs its host, file ids and test
    records; of one that counts for nothing (interrupted) only the time is needed, and what it holds is checked.
    """
    shape.typed(doc, "status", lambda v: isinstance(v, str) and v in STATUSES, "complete, interrupted or incomplete")
    counts = doc.get("status") not in ("interrupted", "incomplete") or "running" in doc
    prov = doc.get("provenance")
    utc = None
    if not isinstance(prov, dict):
        shape.need(False, wrong("provenance", prov, "an object with a time and a host"))
    else:
        utc = shape.time("provenance.time", prov.get("time"))
        shape.typed(prov, "host", lambda v: isinstance(v, str), "a string", "provenance.", optional=not counts)
        shape.typed(prov, "commit", _commit, "40 lowercase hex digits or null", "provenance.", optional=True)
        shape.typed(prov, "dirty", _optional_bool, "true, false or null", "provenance.", optional=True)
        shape.typed(
            prov, "args", lambda v: v is None or _str_list(v), "a list of strings or null", "provenance.", optional=True
        )
        shape.typed(prov, "narrowed", lambda v: isinstance(v, str) and v != "", "a string", "provenance.", True)
        shape.typed(prov, "outside", _outside_map, "a {test file: why} object of strings", "provenance.", True)
        shape.typed(prov, "altered", lambda v: isinstance(v, str) and v != "", "a string", "provenance.", True)
        shape.typed(prov, "inifile", lambda v: v is None or isinstance(v, str), "a string or null", "provenance.", True)
        shape.typed(prov, "options", _str_list, "a list of strings", "provenance.", True)
        shape.typed(prov, "ignored_modules", _file_ids, "a {path: blob id} object", "provenance.", True)
        shape.typed(prov, "declared_options", _str_list, "a list of strings", "provenance.", True)
        shape.extra(prov, _PROVENANCE_KEYS, "provenance.")
    shape.typed(
        doc,
        "gates",
        lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        "a {gate: hash} object",
        optional=True,
    )
    shape.typed(doc, "files", _file_ids, "a {path: blob id} object", optional=not counts)
    tests = doc.get("tests", [] if not counts else None)
    if not isinstance(tests, list):
        shape.need(False, wrong("tests", tests, "a list of test records"))
    elif not _records_ok(tests):
        for i, rec in enumerate(tests):
            if not _check_record(rec, shape, f"tests[{i}]"):
                break
    running = doc.get("running")
    if running is not None and shape.need(isinstance(running, dict), wrong("running", running, "an object")):
        shape.typed(running, "nodeid", lambda v: isinstance(v, str), "a string", "running.")
        shape.typed(running, "markers", _str_list, "a list of strings", "running.", optional=True)
        shape.typed(
            running,
            "pid",
            lambda v: isinstance(v, int) and not isinstance(v, bool),
            "an integer",
            "running.",
            optional=True,
        )
        shape.typed(running, "pid_start", lambda v: isinstance(v, str), "a string", "running.", optional=True)
        shape.extra(running, _RUNNING_KEYS, "running.")
    shape.typed(doc, "rootdir", lambda v: v is None or isinstance(v, str), "a string or null", optional=True)
    shape.typed(
        doc,
        "exitstatus",
        lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
        "an integer or null",
        optional=True,
    )
    shape.typed(doc, "duration", lambda v: v is None or _number(v), "a finite number or null", optional=True)
    shape.typed(doc, "losses", _str_list, "a list of strings", optional=True)
    shape.extra(doc, _RUN_KEYS)
    return "provenance.time", utc


def _records_ok(tests: list[Any]) -> bool:
    """The common case, fast (status checks thousands of records a run): every record has exactly the
    keys the plugin writes, each of its type. False sends the list through :func:`_check_record`."""
    for rec in tests:
        if type(rec) is not dict or not rec.keys() <= _RECORD_KEYS:
            return False
        nodeid, outcome = rec.get("nodeid"), rec.get("outcome")
        if type(nodeid) is not str or not nodeid or type(outcome) is not str or outcome not in OUTCOMES:
            return False
        duration, markers = rec.get("duration", 0.0), rec.get("markers", ())
        if type(rec.get("reason", "")) is not str or type(duration) not in (float, int) or duration - duration != 0:
            return False
        if markers != () and (type(markers) is not list or any(type(m) is not str for m in markers)):
            return False
        if not _order(rec.get("order", 0)) or type(rec.get("worker", "")) is not str:
            return False
    return True


def _check_record(rec: object, shape: _Shape, where: str) -> bool:
    """One per-test record: ``nodeid`` and ``outcome`` required; False (and a problem) when it is wrong."""
    if not isinstance(rec, dict):
        return shape.need(False, wrong(where, rec, "an object with a nodeid and an outcome"))
    before = len(shape.problems)
    shape.typed(rec, "nodeid", lambda v: isinstance(v, str) and v != "", "a non-empty string", f"{where}.")
    shape.typed(
        rec,
        "outcome",
        lambda v: isinstance(v, str) and v in OUTCOMES,
        f"one of {', '.join(sorted(OUTCOMES))}",
        f"{where}.",
    )
    shape.typed(rec, "reason", lambda v: isinstance(v, str), "a string", f"{where}.", optional=True)
    shape.typed(rec, "duration", _number, "a finite number", f"{where}.", optional=True)
    shape.typed(rec, "markers", _str_list, "a list of strings", f"{where}.", optional=True)
    shape.typed(rec, "order", _order, f"an integer from 0 to {MAX_ORDER - 1}", f"{where}.", optional=True)
    shape.typed(rec, "worker", lambda v: isinstance(v, str), "a string", f"{where}.", optional=True)
    shape.extra(rec, _RECORD_KEYS, f"{where}.")
    return len(shape.problems) == before


def _check_signoff(doc: dict[str, Any], shape: _Shape) -> tuple[str, str | None]:
    """Shape of a ``tracker-signoff`` (written by ``tracker signoff``); returns (where its time is, its UTC time)."""
    utc = shape.time("time", doc.get("time"))
    for key in ("gate_key", "gate_hash", "manual", "by", "why", "host"):
        shape.typed(doc, key, lambda v: isinstance(v, str), "a string")
    shape.typed(doc, "commit", _commit, "40 lowercase hex digits or null", optional=True)
    shape.typed(doc, "dirty", _optional_bool, "true, false or null", optional=True)
    shape.typed(doc, "phase_manual", _str_list, "a list of strings", optional=True)
    shape.typed(doc, "files", _file_ids, "a {path: blob id} object", optional=True)
    shape.extra(doc, _SIGNOFF_KEYS)
    return "time", utc


def _check_bench(doc: dict[str, Any], shape: _Shape) -> tuple[str, str | None]:
    """What the store itself relies on in a ``tracker-bench-result``; the whole file is validated by
    :mod:`tracker.store.result_files` (pydantic, cached by content) wherever bench gates read it."""
    prov = doc.get("provenance")
    utc = None
    if not isinstance(prov, dict):
        shape.need(False, wrong("provenance", prov, "an object"))
    else:
        utc = shape.time("provenance.time", prov.get("time"))
    shape.typed(doc, "cases", lambda v: isinstance(v, list), "a list")
    return "provenance.time", utc


_CHECKS = {"tracker-test-run": _check_test_run, "tracker-signoff": _check_signoff, "tracker-bench-result": _check_bench}


def check_document(doc: object, clock: Clock | None = None) -> str:
    """Validate one evidence document (any kind) as the store and ``tracker ingest`` both require it;
    returns its UTC time. Raises ValueError with the reason: not an object, an unknown kind or version, a
    value of the wrong type anywhere the tracker reads (``tests`` a string, a test without a ``nodeid``,
    ``provenance`` a list, ...), no valid time, or a time more than :data:`MAX_FUTURE_S` after ``clock``.
    Hand-written type checks, no pydantic: status reads every store file on every run."""
    if not isinstance(doc, dict):
        raise ValueError("not a readable evidence file: " + wrong("the top level", doc, "an object"))
    kind = doc.get("schema")
    if not isinstance(kind, str) or kind not in VERSIONS:
        raise ValueError(f"not a tracker evidence file (schema {show(kind)})")
    version = doc.get("version")
    if type(version) is not int or version != VERSIONS[kind]:
        raise ValueError(f"unsupported {kind} version {show(version)} (this tracker reads version {VERSIONS[kind]})")
    shape = _Shape()
    where, utc = _CHECKS[kind](doc, shape)
    if shape.problems or utc is None:
        shown = shape.problems[:3]
        more = f"; and {len(shape.problems) - 3} more" if len(shape.problems) > 3 else ""
        raise ValueError("; ".join(shown) + more)
    future = (clock or Clock()).future(utc, where)
    if future:
        raise ValueError(future)
    return utc


def lone_surrogate(data: bytes, doc: object) -> str | None:
    """Why ``doc`` (parsed from ``data``) holds text no UTF-8 output can print, or None. JSON can escape half
    of a surrogate pair (``"\\udc80"``); such a string would crash whatever prints it. ``json.loads`` decodes bytes
    with "surrogatepass", so a surrogate written raw (``ED A0 80`` in UTF-8, an unpaired half in UTF-16) parses
    to the same text. Only files whose bytes may hold one (such an escape, a UTF-8 ``ED`` lead byte, or an
    encoding other than UTF-8) are checked (the walk is iterative: the document may be deeply nested)."""
    utf8 = b"\x00" not in data[:4] and data[:2] not in (b"\xff\xfe", b"\xfe\xff")  # json.detect_encoding's cues
    if utf8 and b"\\ud" not in data and b"\\uD" not in data and b"\xed" not in data:
        return None
    try:  # the C encoder over the whole document: ~20x faster than the walk below, which then says where
        json.dumps(doc, ensure_ascii=False, check_circular=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    except (RecursionError, ValueError, TypeError):
        pass  # too deep for the encoder, or not JSON data: the walk decides
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as err:
                return f"holds text that is not valid Unicode (a lone surrogate, {err.object[err.start : err.end]!a})"
    return None


def parse_document(data: bytes, clock: Clock | None = None) -> tuple[str, dict[str, Any]]:
    """(UTC time, document) of an evidence file's bytes (:func:`check_document`); ValueError with the reason."""
    try:
        doc = parse_json(data)
    except ValueError as err:
        raise ValueError(f"not a readable evidence file: {err}") from None
    bad_text = lone_surrogate(data, doc)
    if bad_text:
        raise ValueError(bad_text)
    when = check_document(doc, clock)
    return when, doc  # type: ignore[return-value]  # check_document made sure it is an object
