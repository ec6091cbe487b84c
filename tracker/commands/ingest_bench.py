"""``tracker ingest`` of other tools' benchmark files: pytest-benchmark JSON and asv results become result files.

The file is read by :mod:`tracker.store.bench_formats`; here it gets what a result file needs and the tool does not
record the way we do: the commit it measured (the file's own, refused when the tool says the tree was dirty or names
no commit and ``--commit`` does not either) and the fingerprint of the files it measured, taken from that commit's
tree (``--measure`` globs, by default the benchmark's test files and the ``paths`` of every phase whose bench gate
names one of its metrics; every file of the commit when no phase gates them yet). The document is checked by the
validator every reader uses before anything is written (docs/benchmarks-from-other-tools.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker.base.contract import (
    MAX_FUTURE_S,
    RESULT_SCHEMA,
    RESULT_VERSION,
    Clock,
    set_fingerprint,
    shown_name,
    utf8_name,
)
from tracker.base.fileio import MAX_READ
from tracker.errors import TrackerError, UsageError
from tracker.store.bench_formats import PYTEST_BENCHMARK, Foreign, read
from tracker.store.ingest import IngestError


def _gated_paths(root: Path, metrics: set[str]) -> list[str]:
    """The ``paths`` of every phase with a bench gate on one of ``metrics`` (plans that cannot be read give none:
    status and lint report them)."""
    from tracker.core.model import BenchGate
    from tracker.plans.load import load_plan_set

    try:
        plans = load_plan_set(root).plans
    except TrackerError:
        return []
    return sorted(
        {
            p
            for plan in plans
            for ph in plan.phases
            if any(isinstance(g, BenchGate) and g.bench in metrics for g in ph.gates)
            for p in ph.paths
        }
    )


def commit_of(path: Path, run: Foreign, given: str | None) -> str:
    """The commit the run measured: the file's own, else ``--commit``; IngestError when the tool says the tree was
    dirty (what it measured is no commit's code), when neither names one, or when they differ."""
    if run.dirty:
        raise IngestError(
            f"{path}: measured a working tree with uncommitted changes (commit_info.dirty is true): what it measured "
            "is no commit's code; commit, run the benchmark again, then ingest"
        )
    if run.benchmark == PYTEST_BENCHMARK and run.commit is not None and run.dirty is None:
        raise IngestError(
            f"{path}: commit_info has no dirty flag: nothing says whether it measured commit {run.commit} or a "
            "tree with changes to it"
        )
    if run.commit is None and given is None:
        raise IngestError(
            f"{path}: names no commit (run outside a git checkout?): nothing ties it to this repository's code; name "
            "the commit it measured with --commit"
        )
    if run.commit is not None and given is not None and not run.commit.startswith(given.lower()):
        raise IngestError(f"{path}: measured commit {run.commit}, but --commit says {given}")
    return run.commit or str(given)


def clean_here(root: Path, commit: str, globs: list[str], measured: dict[str, str]) -> tuple[bool | None, str]:
    """(dirty flag, note) of a run its tool calls clean (pytest-benchmark's ``git describe --dirty``, blind to untracked
    files): False when this working tree is at ``commit`` and its files matching ``globs`` are the ``measured`` ones,
    untracked and changed files included (:func:`tracker.base.fingerprint.read_tree`, as our own runs read the
    tree; the evidence paths left out as :mod:`tracker.base.dirty` does); None (unknown) when they differ, or when this
    tree is at another commit (ingested on another machine or checkout: nothing here says what the run's tree held)."""
    from tracker.base.dirty import EVIDENCE_PATHS
    from tracker.base.file_index import FileIndex
    from tracker.base.fingerprint import read_tree

    tree = read_tree(root, commit=True)  # the commit checked out and the file ids, in one reading
    if tree.state is None or tree.state[0] != commit:
        return None, "dirty unknown: this working tree is not at that commit, so no untracked file can be ruled out"

    def kept(files: dict[str, str]) -> dict[str, str]:
        return {p: i for p, i in files.items() if not any(p == e or p.startswith(e + "/") for e in EVIDENCE_PATHS)}

    here = kept(FileIndex(tree.ids).match(globs))
    differ = sorted(p for p in {*here, *kept(measured)} if here.get(p) != measured.get(p))
    if not differ:
        return False, ""
    shown = ", ".join(shown_name(p) for p in differ[:3]) + (", ..." if len(differ) > 3 else "")
    return None, (
        f"dirty unknown: this working tree's measured files differ from the commit ({shown}; untracked ones too, which "
        "the tool's dirty flag does not see)"
    )


def committed_at(root: Path, commit: str) -> str | None:
    """When ``commit`` was made (its committer time, UTC), less :data:`MAX_FUTURE_S` for clocks that differ; None
    when git does not say. A run dated before it cannot have measured it (an older result relabelled with a newer
    commit)."""
    import subprocess
    import time

    proc = subprocess.run(["git", "show", "-s", "--format=%ct", commit], cwd=root, capture_output=True, check=False)
    try:
        seconds = int(proc.stdout.decode(errors="replace").strip())
    except ValueError:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds - MAX_FUTURE_S))


def result_document(
    root: Path,
    path: Path,
    doc: dict[str, Any],
    kind: str,
    measure: list[str],
    commit: str | None,
    clock: Clock,
    tree_of: Callable[[str], tuple[str, dict[str, str]]],
) -> tuple[dict[str, Any], list[str]]:
    """(the result document, notes) of a foreign benchmark file that makes one (:func:`result_documents`); IngestError
    for a file whose benchmarks ran at different times (one result file each)."""
    results, notes = result_documents(root, path, doc, kind, measure, commit, clock, tree_of)
    if len(results) != 1:
        raise IngestError(f"{path}: its benchmarks ran at {len(results)} different times: one result file each")
    return results[0], notes


def result_documents(
    root: Path,
    path: Path,
    doc: dict[str, Any],
    kind: str,
    measure: list[str],
    commit: str | None,
    clock: Clock,
    tree_of: Callable[[str], tuple[str, dict[str, str]]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """(the result documents, notes) of one foreign benchmark file: one document, or for a file that dates each
    benchmark by itself (asv) one per time its benchmarks started, each dated by it (a file dated by one of its
    benchmarks would sort another's measurement before or after runs it did not precede or follow). IngestError (exit
    8) when it cannot be used, UsageError (exit 3) when no file it measured can be named. ``tree_of``: (full id, {path:
    file id}) of a commit, UsageError when it is none of this repository's."""
    from tracker.base.file_index import FileIndex
    from tracker.base.globs import glob_problem

    run = read(path, doc, kind)
    future = clock.future(max([run.time, *run.times.values()]), "the time it records")
    if future:
        raise IngestError(f"{path}: {future}")
    wanted = commit_of(path, run, commit)
    try:
        full, files = tree_of(wanted)
    except UsageError:
        raise IngestError(f"{path}: measured commit {wanted}, which is not a commit of this repository") from None
    made = committed_at(root, full)
    if made is not None and run.time < made:
        raise IngestError(
            f"{path}: ran at {run.time}, before commit {full[:12]} was made ({made}, less {MAX_FUTURE_S // 60} minutes "
            "for clocks that differ): it cannot have measured that commit's code"
        )
    metrics = {str(c["metric"]) for c in run.cases}
    gated = _gated_paths(root, metrics)
    notes = list(run.notes)
    if measure:
        globs = list(measure)
    elif gated:
        globs = sorted({*run.files, *gated})
    else:
        # No phase gates its metrics yet (benchmark first, gate after): the gate's paths are unknown, so every file
        # of the commit is what it may have measured; a gate written later then goes stale on any change of its code.
        globs = ["**"]
        notes.append(
            "no phase gates its metrics yet: every file of the commit fingerprinted (name what it measured with "
            "--measure)"
        )
    bad = [f"--measure: {p}" for p in map(glob_problem, globs) if p]
    if bad:
        raise UsageError("; ".join(bad))
    measured = FileIndex(files).match(globs) if globs else {}
    if not measured:
        raise UsageError(
            f"{path}: no file of commit {full[:12]} matches what it measured "
            f"({', '.join(globs) or 'no test file, no phase with a bench gate on its metrics'}): name the files the "
            "benchmark measured with --measure (globs like a phase's paths)"
        )
    unnamed = sorted(name for name in measured if not utf8_name(name))
    if unnamed:
        shown = shown_name(unnamed[0])
        raise IngestError(
            f"{path}: commit {full[:12]} holds {len(unnamed)} measured file(s) whose name is not UTF-8 ({shown}"
            f"{', ...' if len(unnamed) > 1 else ''}): a result file (UTF-8 JSON) cannot name it, and leaving it out "
            "of the fingerprint would let it change unseen; rename it, or leave it out with --measure"
        )
    # False only where the tool checked the tree of the commit it names (a commit from --commit is the user's word
    # about a tree nobody checked: pytest-benchmark says dirty: false outside git too), and this working tree, at that
    # commit, holds the measured files as the commit has them (the tool's flag does not see untracked files).
    dirty = None
    if run.dirty is False and run.commit is not None:
        dirty, why = clean_here(root, full, globs, measured)
        if why:
            notes.append(why)
    by_time: dict[str, list[dict[str, Any]]] = {}
    for case in run.cases:
        by_time.setdefault(run.times.get(str(case["metric"]), run.time), []).append(case)
    if len(by_time) > 1:
        notes.append(f"{len(by_time)} result files, each dated by its benchmarks' own started_at")
    results = [
        _document(path, run, full, dirty, when, cases, measured, globs) for when, cases in sorted(by_time.items())
    ]
    return results, notes


def _document(
    path: Path,
    run: Foreign,
    full: str,
    dirty: bool | None,
    when: str,
    cases: list[dict[str, Any]],
    measured: dict[str, str],
    globs: list[str],
) -> dict[str, Any]:
    """The result document of ``cases`` of ``run``, dated ``when``, checked by the validator; IngestError when it would
    be refused."""
    from tracker.core.stats import case_stats
    from tracker.store.result_files import check_result

    result = {
        "schema": RESULT_SCHEMA,
        "version": RESULT_VERSION,
        "benchmark": run.benchmark,
        "provenance": {
            "commit": full,
            "dirty": dirty,
            "time": when,
            "host": run.host,
            "gpu": None,
            "python": run.python,
            "command": run.command,
            "fingerprint": {
                "algorithm": "git-blob-sha1",
                "digest": set_fingerprint(measured),
                "files": dict(sorted(measured.items())),
                "patterns": globs,
            },
        },
        "cases": [{**case, "stats": case_stats(case["samples"])} for case in cases],
    }
    try:
        size = len(encode(result))
    except (ValueError, UnicodeEncodeError):
        size = 0  # the validator says what is wrong
    if size > MAX_READ:  # every reader would refuse it, and an invalid result file leaves every bench gate unmet
        raise IngestError(
            f"{path}: its result file would be {size >> 20} MiB, over the {MAX_READ >> 20} MiB a result file may "
            "have: record fewer rounds (--benchmark-max-time, asv's repeat)"
        )
    try:
        check_result(result)
    except ValueError as err:
        raise IngestError(f"{path}: {err}") from None
    return result


def encode(result: dict[str, Any]) -> bytes:
    """The bytes of a result document as written (checked by :func:`result_document`)."""
    return (json.dumps(result, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
