"""The benchmarks' tests: the repository root importable (``bench``), and the tracker tests' helpers
(tests/tracker: ``evidence_repo``, ``tracker_testutil``) that they build repositories with."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS.parent, TESTS / "tracker"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
