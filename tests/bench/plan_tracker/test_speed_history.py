"""bench/plan_tracker/history.py: speed.py's generated evidence history stays older than the real files and has the
store's shapes (test runs, sign-offs, ~580 KB benchmark result copies), deterministically."""

from __future__ import annotations

from pathlib import Path

from bench.plan_tracker import history
from tracker.store.evidence import load
from tracker.store.result_files import load_result


def templates() -> list[tuple[str, bytes]]:
    """Two real-shaped store files (a plugin test run and a sign-off), as build_history_base returns them."""
    run = {"schema": "tracker-test-run", "version": 1, "status": "complete", "exitstatus": 0, "duration": 1.5, "rootdir": "repo",
           "provenance": {"time": "2026-12-01T02:44:47Z", "host": "vm", "commit": "a" * 40, "dirty": False, "args": ["tests/a.py"]},
           "gates": {"0001/P1#1": "b" * 64}, "files": {"src/a.py": "c" * 40},
           "tests": [{"nodeid": f"tests/a.py::test_{i}", "outcome": "passed", "reason": "", "duration": 0.01, "markers": []}
                     for i in range(5)]}  # fmt: skip
    signoff = {"schema": "tracker-signoff", "version": 1, "gate_key": "0001/P1#2", "gate_hash": "d" * 64, "phase_manual": ["d" * 64],
               "manual": "read it", "by": "b", "why": "w",
               "time": "2026-12-01T02:44:49Z", "host": "vm", "commit": "a" * 40, "dirty": False, "files": {}}  # fmt: skip
    return [("20261201T024447391272Z-vm-verify-96d210.json", history._dump(run)),
            ("20261201T024449809242Z-vm-signoff-eb6644.json", history._dump(signoff))]  # fmt: skip


def test_generated_history_is_older_than_the_real_files_and_has_their_shapes(tmp_path: Path) -> None:
    real = templates()
    generated = history.history_documents(real, 40, "a" * 40, {"src/kern/k1/a.py": "e" * 40, "src/lib/a.py": "f" * 40})
    assert generated == history.history_documents(
        real, 40, "a" * 40, {"src/kern/k1/a.py": "e" * 40, "src/lib/a.py": "f" * 40}
    )
    kinds = [name.split("-")[2] for name, _ in generated]
    assert [i for i, k in enumerate(kinds) if k == "bench"] == [15, 31] and [
        i for i, k in enumerate(kinds) if k == "signoff"
    ] == [7, 27]
    store = tmp_path / ".tracker/evidence"
    store.mkdir(parents=True)
    for name, data in real + generated:
        (store / name).write_bytes(data)
    for name, data in generated:
        if "-bench-bench-" in name:
            assert 500_000 < len(data) < 650_000  # like the ~580 KB result copies of bench verify
            run = load_result(store / name)
            assert len(run.cases) == 120 and set(run.files) == {"src/kern/k1/a.py"}
    loaded = load(tmp_path, strict=True)
    assert loaded.runs[-1].file.endswith(real[0][0]) and loaded.signoffs[-1][0].endswith(
        real[1][0]
    )  # the real files stay newest
    assert len(loaded.runs) == 1 + 40 - 2 - 2 and not loaded.invalid and len(loaded.bench) == 2
    failed = [r for r in loaded.runs if any(t["outcome"] == "failed" for t in r.tests)]
    assert 0 < len(failed) < len(loaded.runs) - 1  # some history runs failed a test, most passed
