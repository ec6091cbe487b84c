"""Kernel/bench tests: make the repo root importable and register the `gpu` marker (needs CUDA)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped cleanly without one)")


# The kernel's tests need torch, triton and numpy: the `kernel` extra (`pip install '.[test,kernel]'`). A
# tracker-only install (`pip install '.[test]'`) still runs the tracker's suite: these files are not collected,
# and the report header says so (tests/conftest.py) (a skip would hide nothing: none of them can run without torch).
_MISSING = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
collect_ignore_glob = ["test_*.py"] if _MISSING else []
