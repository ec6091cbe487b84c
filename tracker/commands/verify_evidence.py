"""This verify's own evidence files: read back once pytest has exited (:func:`_read_evidence`, the test a crash
stopped: :func:`_crashed_in`), said as they are when the session was interrupted (:func:`_recorded`), and recorded
one second after a file from a clock ahead (:func:`_record_after`).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from tracker.base.contract import EVIDENCE_DIR
from tracker.core.model import Store
from tracker.errors import FileError


def _read_evidence(evidence: Path) -> dict[str, Any]:
    """The run's own evidence file as written by the plugin; {} when there is none (or it cannot be read)."""
    from tracker.base.fileio import parse_json, read_regular

    try:
        data = parse_json(read_regular(evidence))
    except (FileError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _crashed_in(evidence: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The ``running`` record of the run's evidence ({} when none), made precise by the plugin's running slot:
    the evidence file names the crashed test's file when other tests of it ran, the slot the very test
    (:func:`tracker.names.crashed_test`). Read only once pytest has exited: nothing writes the slot any more."""
    from tracker.store.evidence import crashed_test

    running = data.get("running")
    if not isinstance(running, dict):
        return {}
    return crashed_test(evidence, running, root=evidence.parent.parent.parent)


def _recorded(root: Path, evidence: Path) -> str:
    """What the interrupted session left in its evidence file, said as it is: a tracker stopped while its
    pytest went on to finish has a complete run recorded, and that run counts."""
    data = _read_evidence(evidence)
    rel = evidence.relative_to(root).as_posix()
    status = data.get("status")
    running = _crashed_in(evidence, data)
    if status == "complete":
        given = data.get("tests")
        tests: list[Any] = given if isinstance(given, list) else []
        counts = Counter(str(t.get("outcome")) for t in tests if isinstance(t, dict))
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no tests"
        return (
            f"the tracker was stopped, but its pytest run finished and recorded complete evidence in {rel} "
            f"({summary}); it counts: `tracker status` shows the gates"
        )
    if status == "incomplete" and isinstance(running.get("nodeid"), str):
        return (
            f"the pytest run stopped while running {running['nodeid']} ({rel}): only that test counts, "
            "as an error; no result was recorded as passing"
        )
    if status is None:
        return "the pytest run was stopped and left no evidence file: no result was recorded as passing"
    return f"the pytest run was stopped and recorded as {status} ({rel}): no result was recorded as passing"


def _record_after(evidence: Path, store: Store) -> str | None:
    """Rewrite this run's evidence file (atomically) with a time one second after the newest file that
    :func:`tracker.store.evidence.load` put behind it, keeping this machine's own clock reading in
    ``provenance.clock_time``: the store orders files by time, so without this, status would judge on the file
    from a clock ahead, which verify just judged behind this run. Returns what was done, for the user."""
    import calendar
    import time

    from tracker.base.contract import UTC_FORMAT
    from tracker.base.fileio import atomic_write
    from tracker.store.evidence_schema import check_document

    times = _times_of(store, set(store.reordered))
    data = _read_evidence(evidence)
    prov = data.get("provenance")
    if not times or not isinstance(prov, dict):
        return None
    later = time.strftime(UTC_FORMAT, time.gmtime(calendar.timegm(time.strptime(max(times), UTC_FORMAT)) + 1))
    rel = (EVIDENCE_DIR / evidence.name).as_posix()
    prov["clock_time"], prov["time"] = prov.get("time"), later
    try:
        check_document(data)
        atomic_write(evidence, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    except (ValueError, OSError) as err:
        return (
            f"{rel} could not be recorded as later than them ({err}): `tracker status` may judge on them until it "
            "runs again"
        )
    return (
        f"{rel} is recorded at {later}, one second after them (this machine's clock said {prov['clock_time']}, kept "
        "as provenance.clock_time): `tracker status` orders the runs as verify judged them"
    )


def _times_of(store: Store, files: set[str]) -> list[str]:
    """The recorded UTC times of the store's ``files`` (their paths relative to the repository root)."""
    from tracker.base.contract import utc_time

    times = [run.time for run in store.runs if run.file in files]
    times += [
        str(utc_time(doc.get("time"))) for rel, doc in store.signoffs if rel in files and utc_time(doc.get("time"))
    ]
    for rel, doc in store.bench:
        prov = doc.get("provenance") if isinstance(doc, dict) else None
        when = utc_time(prov.get("time")) if isinstance(prov, dict) else None
        if rel in files and when:
            times.append(when)
    return times
