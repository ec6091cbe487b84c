"""``tracker ingest FILE... [--host H] [--commit C] [--measure GLOB]``: validate evidence made elsewhere, store it.

Every file is read and validated before anything is written (all or nothing). Benchmark result
files are copied byte for byte; pytest-benchmark JSON and asv result files become result files in ``bench/results/``
(:mod:`tracker.commands.ingest_bench`); pytest reportlog / JUnit XML files become ``tracker-test-run``
evidence files, with the file ids of the commit they ran on so staleness works as for local runs;
evidence files written by ``pytest --tracker-record`` on another machine are checked and copied as is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TextIO

from tracker.base.contract import (
    EVIDENCE_DIR,
    RESULTS_DIR,
    UTC_FORMAT,
    Clock,
    evidence_name,  # the one naming rule for store files (the plugin's too)
    file_id,
    shown_name,
    utc_time,
)
from tracker.base.fileio import atomic_write, check_inside, parse_json, read_regular, repo_lock
from tracker.commands.common import require_utf8
from tracker.errors import ExitCode, FileError, UsageError
from tracker.store.evidence import check_store_dir
from tracker.store.evidence_schema import check_document
from tracker.store.ingest import (
    ForeignRun,
    IngestError,
    check_test_run,
    evidence_records,
    parse_junit,
    parse_reportlog,
    running_record,
    sniff,
)


def commit_files(root: Path, commit: str | None) -> tuple[str, dict[str, str]]:
    """(full commit id, {path: blob id}) of a commit (``HEAD`` when None), from one ``git ls-tree`` call."""

    def git(*args: str) -> bytes:
        proc = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, capture_output=True, check=False)
        if proc.returncode != 0:
            raise UsageError(
                f"--commit {commit}: not a commit of this repository ({proc.stderr.decode(errors='replace').strip()})"
            )
        return proc.stdout

    if commit is None:
        _head_or_refuse(root)
    full = git("rev-parse", "--verify", "--end-of-options", f"{commit or 'HEAD'}^{{commit}}").decode().strip()
    files: dict[str, str] = {}
    for entry in git("ls-tree", "-r", "-z", full).split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            mode, kind, oid = meta.decode().split(" ")
            if kind in ("blob", "commit") and not path.startswith(b".tracker/"):  # a file, a link, a submodule
                files[path.decode("utf-8", "surrogateescape")] = file_id(oid, mode)  # as the tree's ids have it
    return full, files


def _head_or_refuse(root: Path) -> None:
    """Without ``--commit`` a test run is recorded against ``HEAD``: say why there is none (no git
    repository, or one without a commit yet) instead of blaming an option the user never gave."""
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=root, capture_output=True, check=False
    )
    if proc.returncode == 0:
        return
    inside = (
        subprocess.run(["git", "rev-parse", "--git-dir"], cwd=root, capture_output=True, check=False).returncode == 0
    )
    why = "the repository has no commit yet" if inside else f"{root} is not a git repository"
    raise UsageError(
        f"{why}: a reportlog or JUnit run is stored with the file ids of the commit it ran on; commit that code "
        "first, or name it with --commit"
    )


GIVEN = "--time"  # a run's ``provenance.time_from`` when its file records no time of its own and --time named it


def _run_time(run: ForeignRun, path: Path, clock: Clock, given: str | None = None) -> tuple[str, str]:
    """(UTC time, what it was read from) of a reportlog / JUnit run: the run's own time where the file records
    it (a reportlog's first test's start, a JUnit timestamp), else ``given`` (``--time``, a :func:`utc_time`
    string). A file with no time of its own and no ``--time`` is refused (IngestError): its modification time says
    when it was copied, not when it ran, and a copied hour-old pass would outrank every failure recorded since (adv
    G7). Never later than now: a run cannot have happened after it is ingested (a clock a few minutes ahead). A time
    more than MAX_FUTURE_S after this machine's clock is refused (IngestError): that is no small drift, and it would
    outrank every run until then."""
    if run.time is not None:
        when, source, what = run.time, run.time_from, run.time_from
    elif given is not None:
        when, source, what = given, GIVEN, "--time"
    else:
        raise IngestError(
            f"{path}: records no time of its own (no test start, no testsuite timestamp), and its modification time "
            "says when it was copied, not when it ran: give the time it ran with --time (ISO 8601 with a time zone), "
            "or record it with --report-log, --junitxml (pytest >= 8.3) or --tracker-record"
        )
    future = clock.future(when, what)
    if future:
        raise IngestError(f"{path}: {future}")
    return min(when, clock.now), source


def _dated(source: str) -> str:
    """How the ingest output says where a run's time came from."""
    if source == GIVEN:
        return "dated by --time (it records no time of its own)"
    return f"dated by its {source}"


def test_run_document(
    run: ForeignRun,
    path: Path,
    host: str,
    commit: str | None,
    assumed: bool,
    files: dict[str, str],
    source_sha256: str = "",
    when: tuple[str, str] | None = None,
    outside: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The ``tracker-test-run`` evidence document for a parsed reportlog / JUnit run (``when``: its UTC
    time and what that was read from, by default :func:`_run_time`; ``outside``: its ``provenance.outside``,
    :func:`outside_files`)."""
    at, time_from = when or _run_time(run, path, Clock())
    doc = {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "complete" if run.complete else "interrupted",
        "provenance": {
            "commit": commit,
            "dirty": None,
            "time": at,
            "time_from": time_from,
            "host": host,
            "python": None,
            "pytest": run.pytest_version,
            "platform": None,
            "cuda": None,
            "command": f"tracker ingest {shown_name(path.name)}",
            "ingested_from": run.kind,
            "commit_assumed": assumed,
            "source_sha256": source_sha256,
            **({"outside": outside} if outside else {}),
        },
        "rootdir": None,
        "gates": {},
        "files": files,
        "tests": evidence_records(run),  # no markers key: neither format says which markers a test has
        "exitstatus": run.exitstatus,
        "losses": run.losses + ([run.why_incomplete] if run.why_incomplete else []),
    }
    running = running_record(run)
    if running is not None:
        # The plugin's form of a crash: that one test is an error of this run, nothing else of it counts.
        doc["status"] = "incomplete"
        doc["running"] = running
    return doc


def _schema_of(data: bytes) -> object:
    try:
        doc = parse_json(data)
    except ValueError:
        return None  # the result-file loader reports why
    return doc.get("schema") if isinstance(doc, dict) else None


def _stored_digests(root: Path) -> set[str]:
    """sha256 of every store file, plus the source file's of every ingested test run (ingesting a file
    twice stores it once). Unreadable store files are skipped here: the store's readers report them."""
    store = root / EVIDENCE_DIR
    existing: set[str] = set()
    for stored in sorted(store.glob("*.json")) if store.is_dir() else []:
        try:
            data = read_regular(stored, root=root)
        except FileError:
            continue
        existing.add(hashlib.sha256(data).hexdigest())
        if b"source_sha256" in data:  # an ingested test run remembers the file it came from
            try:
                doc = parse_json(data)
                source = doc["provenance"]["source_sha256"]  # type: ignore[index]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(source, str):
                existing.add(source)
    return existing


def _plan(
    root: Path,
    path: Path,
    data: bytes,
    host: str | None,
    commit: str | None,
    clock: Clock,
    tree: list[tuple[str, dict[str, str]]],
    stored: set[str],
    given: str | None = None,
    measure: list[str] | None = None,
) -> list[tuple[bytes, str, str, str]]:
    """[(bytes to store, kind, host for the name, note)] of one validated file, empty when the store holds it
    already (``stored``: digests, :func:`_stored_digests`); IngestError (exit 8) when it cannot be used. A file
    is validated before it is called a duplicate: an invalid copy in the store does not make it valid. A file of
    another benchmark tool becomes result files (kind ``bench:<benchmark>``, written into ``bench/results/``): one,
    or one per time its benchmarks started (asv)."""
    kind = sniff(path, data)
    digest = hashlib.sha256(data).hexdigest()  # a result or plugin file is stored as is; an ingested run records it
    if kind == "json":
        foreign = _foreign(root, path, data, commit, clock, measure or [], stored)
        if foreign is not False:
            return foreign
    one = _plan_one(root, path, data, kind, digest, host, commit, clock, tree, stored, given)
    return [] if one is None else [one]


def _plan_one(
    root: Path,
    path: Path,
    data: bytes,
    kind: str,
    digest: str,
    host: str | None,
    commit: str | None,
    clock: Clock,
    tree: list[tuple[str, dict[str, str]]],
    stored: set[str],
    given: str | None,
) -> tuple[bytes, str, str, str] | None:
    """:func:`_plan` of a file of the tracker's own or a reportlog / JUnit run: None when the store holds it."""
    if kind == "json" and _schema_of(data) == "tracker-test-run":
        doc = check_test_run(path, data, clock)
        if doc["provenance"].get("commit") is None:  # run in a tree that is not a checkout: which one is unknown
            raise IngestError(
                f"{path}: recorded without a commit (no git repository and no TRACKER_COMMIT where it ran): nothing "
                "ties it to this repository's tree; record it with TRACKER_COMMIT=<the commit it ran> TRACKER_DIRTY=0"
            )
        # Recorded by the plugin with its own provenance and file ids: stored byte for byte.
        note = f"{len(doc['tests'])} test(s) from {doc['provenance']['host']}, {doc['status']}"
        return None if digest in stored else (data, "pytest", doc["provenance"]["host"], note)
    if kind == "json":
        from tracker.store.result_files import load_result

        loaded = load_result(path, data=data, clock=clock)
        note = f"{len(loaded.cases)} case(s) from {loaded.host} ({loaded.gpu or 'no GPU'})"
        return None if digest in stored else (data, "bench", loaded.host, note)
    parsed = parse_reportlog(path, data) if kind == "reportlog" else parse_junit(path, root, data)
    when = _run_time(parsed, path, clock, given)
    if digest in stored:
        return None
    if not tree:
        tree.append(commit_files(root, commit))
    if commit is None:
        _ran_after_head(root, path, tree[0][0], when[0])
    outside = outside_files(root, parsed)
    return _stored_run(parsed, path, host or "unknown", commit, tree[0], digest, when, clock, outside)


def _foreign(
    root: Path, path: Path, data: bytes, commit: str | None, clock: Clock, measure: list[str], stored: set[str]
) -> list[tuple[bytes, str, str, str]] | Literal[False]:
    """A pytest-benchmark or asv file as [(result file bytes, ``bench:<benchmark>``, host, note)], without those
    ``bench/results/`` holds already; False when ``data`` is no such file."""
    from tracker.store.bench_formats import kind_of, load_json

    try:
        loose = parse_json(data)
    except ValueError:
        return False  # the result-file loader reports why
    foreign = kind_of(loose)
    if foreign is None:
        return False
    from tracker.commands.ingest_bench import encode, result_documents

    doc = load_json(path, data)  # strictly this time: a key given twice is refused
    assert isinstance(doc, dict)
    results, notes = result_documents(root, path, doc, foreign, measure, commit, clock, lambda c: commit_files(root, c))
    if RESULTS_READ not in stored:  # bench/results/ is read once, and only when a foreign file is ingested
        stored |= _results_digests(root) | {RESULTS_READ}
    from tracker.commands.result import never_stale_warnings

    out: list[tuple[bytes, str, str, str]] = []
    for result in results:
        encoded = encode(result)
        if hashlib.sha256(encoded).hexdigest() in stored:
            continue
        stored.add(hashlib.sha256(encoded).hexdigest())
        for warning in never_stale_warnings(root, result["cases"], result["provenance"]["fingerprint"]["files"]):
            sys.stderr.write(f"{warning} ({path})\n")
        cases = len(result["cases"])
        said = "".join(f"; {note}" for note in notes)
        prov = result["provenance"]
        note = f"{cases} case(s) of {foreign} from {prov['host']}, commit {prov['commit'][:7]}, {prov['time']}{said}"
        out.append((encoded, f"bench:{result['benchmark']}", prov["host"], note))
    return out


RESULTS_READ = "bench/results read"  # in the digests: those of bench/results/ are in it (no sha256 looks like it)


def _results_digests(root: Path) -> set[str]:
    """sha256 of every result file in ``bench/results/`` (an ingested foreign file gives the same bytes again)."""
    out: set[str] = set()
    folder = root / RESULTS_DIR
    for result in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.add(hashlib.sha256(read_regular(result, root=root)).hexdigest())
        except FileError:
            continue
    return out


def _ran_after_head(root: Path, path: Path, head: str, when: str) -> None:
    """Without ``--commit`` a run is stored as HEAD's: refuse one that ran before HEAD was committed (IngestError).
    It cannot have run HEAD's code, and a pass of the code before a breaking commit would count for the broken one
    (round 20, N1: `pytest --junitxml`, commit a failure, ingest: done)."""
    times = []
    for cmd in (["show", "-s", "--format=%ct", head], ["reflog", "-1", "--date=unix", "--format=%gd", "HEAD"]):
        # The commit's time, and when HEAD last moved (a fast-forward, checkout or reset to an older commit: round 21;
        # the reflog's selector holds that time: HEAD@{1733300000})
        proc = subprocess.run(["git", *cmd], cwd=root, capture_output=True, check=False)
        text = proc.stdout.decode(errors="replace").strip().removeprefix("HEAD@{").removesuffix("}")
        with contextlib.suppress(ValueError):
            times.append(int(text))
    if not times:
        return  # git says no time: nothing to compare (the run is still HEAD's, as before)
    since = datetime.fromtimestamp(max(times), tz=UTC).strftime(UTC_FORMAT)
    if when < since:
        raise IngestError(
            f"{path}: ran at {when}, before HEAD ({head[:7]}) was committed or checked out ({since}): it cannot have "
            "run HEAD's code, and without --commit it would be stored as HEAD's; name the commit it ran with --commit"
        )


def outside_files(root: Path, run: ForeignRun) -> dict[str, str]:
    """The run's ``provenance.outside`` as the plugin records it (:class:`tracker.base.gate_paths.TestFileCheck`),
    judged on the tree it is ingested into: {test file: why} for its tests whose file, or a conftest.py above it,
    resolves outside the repository (their passes meet no gate)."""
    from tracker.base.gate_paths import TestFileCheck

    check = TestFileCheck(root)
    files = dict.fromkeys(str(r["nodeid"]).split("::", 1)[0] for r in evidence_records(run))
    return {f: why for f in files if (why := check(f)) is not None}


def _stored_run(
    parsed: ForeignRun,
    path: Path,
    host: str,
    commit: str | None,
    tree: tuple[str, dict[str, str]],
    digest: str,
    when: tuple[str, str],
    clock: Clock,
    outside: dict[str, str] | None = None,
) -> tuple[bytes, str, str, str]:
    """(bytes, kind, host, note) of the evidence file for a parsed reportlog / JUnit run, checked by the
    store's own rules before anything is written."""
    doc = test_run_document(parsed, path, host, tree[0], commit is None, tree[1], digest, when, outside)
    try:  # what is stored must read back: the store's own rules, checked before anything is written
        check_document(doc, clock)
    except ValueError as err:
        raise IngestError(f"{path}: {err}") from None
    if parsed.crashed_in is not None:
        why = f" ({parsed.why_incomplete}: only {parsed.crashed_in.nodeid} counts, as an error)"
    else:
        why = f" ({parsed.why_incomplete}: counts for nothing)" if not parsed.complete else ""
    note = f"{len(parsed.outcomes)} test(s), {doc['status']}{why}, {_dated(when[1])}"
    text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError as err:  # a reportlog's "\\udc80": text no UTF-8 file can hold
        raise IngestError(
            f"{path}: holds text that is not valid Unicode ({err.reason}: {err.object[err.start : err.end]!a})"
        ) from None
    return encoded, "pytest", host, note


def run(
    root: Path,
    paths: list[Path],
    host: str | None = None,
    commit: str | None = None,
    out: TextIO | None = None,
    when: str | None = None,
    measure: list[str] | None = None,
) -> int:
    """Validate every file, then write them all into ``.tracker/evidence/``; exit 8 on a bad file. ``when``
    (``--time``): when the runs of reportlog / JUnit files that record no time of their own ran.

    Files are read once each, bounded and never from a FIFO or a device (:func:`tracker.base.fileio.read_regular`);
    nothing is written unless every file is valid, and a failed write removes what this call wrote."""
    out = out or sys.stdout
    require_utf8(("--host", host), ("--time", when))  # bytes of another encoding: an evidence file is UTF-8
    given = None
    if when is not None:
        given = utc_time(when)
        if given is None:
            raise UsageError(f"--time {when!r} is not an ISO 8601 time with a time zone (2026-12-02T10:00:00Z)")
    check_store_dir(root)
    existing = _stored_digests(root)
    clock = Clock()
    planned: list[tuple[Path, bytes, str, str, str]] = []  # (source, bytes to write, kind, host, note)
    tree: list[tuple[str, dict[str, str]]] = []  # the commit's (id, file ids), looked up once if needed
    for path in paths:
        data = read_regular(path)
        plans = _plan(root, path, data, host, commit, clock, tree, existing, given, measure)
        if not plans:
            out.write(f"{path}: already in the store, skipped\n")
            continue
        existing.add(hashlib.sha256(data).hexdigest())
        planned.extend((path, *plan) for plan in plans)
    store = root / EVIDENCE_DIR
    if any(kind.startswith("bench:") for _, _, kind, _, _ in planned):
        try:  # a bench/results that links out of the repository: refused before anything is written
            check_inside(root, root / RESULTS_DIR)
        except OSError as err:
            raise FileError(f"{root / RESULTS_DIR}: cannot write: {err.strerror or err}") from None
    with repo_lock(root):
        written: list[Path] = []
        try:
            for source, data, kind, name_host, note in planned:
                if kind.startswith("bench:"):  # another tool's benchmark, now a result file: where results live
                    (root / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
                    target = root / RESULTS_DIR / evidence_name(kind.removeprefix("bench:"), name_host)
                    atomic_write(target, data, root=root)
                else:
                    target = store / evidence_name(kind, name_host)
                    atomic_write(target, data)
                written.append(target)
                out.write(f"{source} -> {target.relative_to(root).as_posix()}: {note}\n")
        except OSError as err:
            for done in written:  # all or nothing
                done.unlink(missing_ok=True)
            raise FileError(f"{store}: cannot write: {err.strerror or err}") from None
    return int(ExitCode.OK)


__all__ = ["IngestError", "commit_files", "evidence_name", "run", "test_run_document"]
