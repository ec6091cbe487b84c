"""``tracker signoff PLAN/PHASE --gate N --by WHO --why TEXT``: record a manual gate's sign-off."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import TextIO

from tracker.base.contract import (
    EVIDENCE_DIR,
    evidence_name,  # the one naming rule for store files (the plugin's too)
    recordable_ids,
    unrecordable_warning,
)
from tracker.base.dirty import commit_state
from tracker.base.fileio import atomic_write
from tracker.base.fingerprint import tree_file_ids
from tracker.commands.common import escaped, resolve_spec, select
from tracker.core.checks import is_placeholder
from tracker.core.manual_gate import manual_hashes
from tracker.core.model import ManualGate, gate_hash, gate_key
from tracker.errors import FileError, UsageError
from tracker.plans.load import load_plans
from tracker.store.evidence import check_store_dir


def run(root: Path, spec: str, gate: int, by: str, why: str, out: TextIO | None = None) -> int:
    """Write one sign-off evidence file (who, when, why, on which commit); exit 0."""
    out = out or sys.stdout
    _, plans = load_plans(root)
    spec = resolve_spec(plans, spec)  # ``p2``, a bare ``P2`` where one plan has it
    if "/" not in spec:
        raise UsageError(f"PLAN/PHASE expected, got '{escaped(spec)}'")
    [(plan, phase)] = select(plans, [spec])
    if not 1 <= gate <= len(phase.gates):
        raise UsageError(f"--gate: phase {plan.id}/{phase.id} has gates 1..{len(phase.gates)}, got {gate}")
    target = phase.gates[gate - 1]
    if not isinstance(target, ManualGate):
        raise UsageError(f"--gate {gate}: gate {gate} of {plan.id}/{phase.id} is not a manual gate")
    if is_placeholder(target):
        raise UsageError(
            f"gate {gate} of {plan.id}/{phase.id} is still the template's placeholder: edit it in {plan.path} "
            "to say what a reviewer must confirm, then sign it off"
        )
    if not by.strip() or not why.strip():
        raise UsageError("--by and --why must not be empty")
    for option, text in (("--by", by), ("--why", why)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # bytes of another encoding on the command line: an evidence file is UTF-8
            raise UsageError(f"{option}: not valid UTF-8 text ({text!a})") from None
    check_store_dir(root)  # a regular file where the store should be: exit 8 with a message, nothing written
    try:
        commit, dirty = commit_state(root)  # the plugin's rule: evidence in .tracker/ never makes the tree dirty
    except ValueError as err:
        raise UsageError(str(err)) from None
    key = gate_key(plan.id, phase.id, gate - 1)
    recorded, unrecordable = recordable_ids(tree_file_ids(root))
    if unrecordable:
        sys.stderr.write(unrecordable_warning(unrecordable) + "\n")
    data = {
        "schema": "tracker-signoff",
        "version": 1,
        "gate_key": key,
        "gate_hash": gate_hash(target),
        "phase_manual": list(manual_hashes(phase)),
        "manual": target.manual,
        "by": by,
        "why": why,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": socket.gethostname(),
        "commit": commit,
        "dirty": dirty,
        "files": recorded,
    }
    path = root / EVIDENCE_DIR / evidence_name("signoff", socket.gethostname())
    try:
        atomic_write(path, (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as err:
        raise FileError(f"{path}: cannot write: {err.strerror or err}") from None
    out.write(f"signed off {key} ({target.manual}) by {by}: {path.relative_to(root).as_posix()}\n")
    return 0
