"""``tracker gc [--dry-run]``: delete superseded evidence files, never changing what status says."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TextIO

from tracker import evidence
from tracker.errors import ExitCode
from tracker.fileio import repo_lock
from tracker.history import KeepSet, needed, superseded
from tracker.model import BenchGate, PhaseStatus
from tracker.plans import load_plans
from tracker.results import ResultRun

INCOMPLETE_GRACE_S = 3600  # an "incomplete" run may still be writing: leave young ones alone


def _fingerprint(statuses: dict[str, PhaseStatus]) -> dict[str, tuple[object, ...]]:
    return {k: (s.status, s.changed, tuple((v.met, v.failed, v.reason, v.source) for v in s.verdicts)) for k, s in statuses.items()}


def _without(store: evidence.Store, drop: set[str]) -> evidence.Store:
    return evidence.Store(
        runs=[r for r in store.runs if r.file not in drop],
        signoffs=[s for s in store.signoffs if s[0] not in drop],
        bench=[b for b in store.bench if b[0] not in drop],
        incomplete=[f for f in store.incomplete if f not in drop],
    )


def run(root: Path, dry_run: bool = False, out: TextIO | None = None) -> int:
    """Delete (or with ``dry_run`` list) superseded evidence; exit 1 if pruning would change a status."""
    from tracker.benchstatus import Evaluator
    from tracker.fingerprint import FileIndex, tree_file_ids
    from tracker.status import compute

    out = out or sys.stdout
    with repo_lock(root):
        _, plans = load_plans(root)
        store = evidence.load(root)
        has_bench = bool(store.bench) or any(isinstance(g, BenchGate) for p in plans for ph in p.phases for g in ph.gates)
        results: list[ResultRun] = []
        if has_bench:
            from tracker.results import load_repo_results

            results = load_repo_results(root)
        keep: KeepSet = needed(plans, store, results)
        drop = set(superseded(store, keep, [f for f, _ in store.bench]))
        now = time.time()
        for rel in store.incomplete:
            # Interrupted runs never count; incomplete ones are dropped once surely abandoned.
            if _status_of(root / rel) != "incomplete" or now - (root / rel).stat().st_mtime > INCOMPLETE_GRACE_S:
                drop.add(rel)
        index = FileIndex(tree_file_ids(root))
        kept_results = [r for r in results if r.path not in drop]
        before = compute(plans, store, lambda: index, lambda: Evaluator(results))
        after = compute(plans, _without(store, drop), lambda: index, lambda: Evaluator(kept_results))
        changed = sorted(k for k, v in _fingerprint(before).items() if _fingerprint(after).get(k) != v)
        if changed:
            out.write(f"tracker gc: refusing, pruning would change {', '.join(changed)}; nothing deleted\n")
            return int(ExitCode.CHECK_FAILED)
        for rel in sorted(drop):
            out.write(f"{'would delete' if dry_run else 'deleted'} {rel}\n")
            if not dry_run:
                os.unlink(root / rel)
        # Only the store is gc's to prune: result files elsewhere (bench/results/) are kept, unlisted.
        kept = {rel: why for rel, why in keep.why.items() if rel.startswith(evidence.EVIDENCE_DIR.as_posix() + "/")}
        if dry_run:
            for rel, why in sorted(kept.items()):
                out.write(f"keep {rel}: {why}\n")
        out.write(f"tracker gc: {len(drop)} superseded file(s) {'to delete' if dry_run else 'deleted'}, {len(kept)} kept\n")
    return 0


def _status_of(path: Path) -> str:
    import json

    try:
        return str(json.loads(path.read_bytes()).get("status"))
    except (OSError, ValueError, AttributeError):
        return "unreadable"
