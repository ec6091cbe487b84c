"""``tracker gc [--dry-run]``: delete superseded evidence files, never changing what status says."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from collections.abc import Sequence
from typing import TextIO

from tracker import evidence
from tracker.errors import ExitCode
from tracker.fileio import repo_lock
from tracker.history import KeepSet, needed, settle, superseded, without
from tracker.model import BenchGate, PhaseStatus
from tracker.plans import load_plans
from tracker.results import ResultRun

INCOMPLETE_GRACE_S = 3600  # an "incomplete" run may still be writing: leave young ones alone


def _fingerprint(statuses: dict[str, PhaseStatus]) -> dict[str, tuple[object, ...]]:
    return {k: (s.status, s.changed, tuple((v.met, v.failed, v.reason, v.source) for v in s.verdicts)) for k, s in statuses.items()}


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
        index = FileIndex(tree_file_ids(root))

        def view(s: evidence.Store, rs: Sequence[ResultRun]) -> dict[str, tuple[object, ...]]:
            return _fingerprint(compute(plans, s, lambda: index, lambda: Evaluator(rs)))

        in_store = evidence.EVIDENCE_DIR.as_posix() + "/"
        keep: KeepSet = settle(store, needed(plans, store, results), results, view, lambda path: path.startswith(in_store))
        drop = set(superseded(store, keep, [f for f, _ in store.bench]))
        now = time.time()
        for rel in store.incomplete:
            # Interrupted runs never count; incomplete ones are dropped once surely abandoned.
            if _status_of(root / rel) != "incomplete" or now - (root / rel).stat().st_mtime > INCOMPLETE_GRACE_S:
                drop.add(rel)
        # Belt and braces: the pruned store must show exactly what the full one shows.
        before, after = view(store, results), view(without(store, drop), [r for r in results if r.path not in drop])
        changed = sorted(k for k, v in before.items() if after.get(k) != v)
        if changed:
            out.write(f"tracker gc: refusing, pruning would change {', '.join(changed)}; nothing deleted\n")
            return int(ExitCode.CHECK_FAILED)
        for rel in sorted(drop):
            out.write(f"{'would delete' if dry_run else 'deleted'} {rel}\n")
            if not dry_run:
                os.unlink(root / rel)
        # Only the store is gc's to prune: result files elsewhere (bench/results/) are kept, unlisted.
        kept = {rel: why for rel, why in keep.why.items() if rel.startswith(in_store)}
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
