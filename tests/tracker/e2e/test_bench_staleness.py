"""A bench gate's phase goes stale only through the code under the phase's own ``paths``.

A result file fingerprints every file the benchmark measured (the kernel, the baseline, the harness); a change
to one of them that the phase does not cover belongs to the phases that cover it, exactly as for test gates.
"""

from __future__ import annotations

from pathlib import Path

from evidence_repo import make_repo, phase_block, plan_text, statuses
from resultfiles import case, result, write

from tracker.core.model import Status

GATE = """bench = "verify_attn.time_us"
where = { impl = "cuda" }
at_most = 50.0
min_samples = 3"""
FILES = {"kernel/k.cu": "int kernel_v1;\n", "bench/harness.py": "HARNESS = 1\n"}


def test_only_files_under_the_phase_paths_make_a_bench_gate_stale(tmp_path: Path) -> None:
    plan = plan_text("0002", [phase_block("P1", ["kernel/**"], [GATE])])
    repo = make_repo(tmp_path / "repo", {"plans/0002-kernel.md": plan, **FILES, ".gitignore": ".tracker/cache/\n"})
    measured = {path: text.encode() for path, text in FILES.items()}
    write(
        repo / "bench/results/a.json",
        result([case("verify_attn.time_us", {"impl": "cuda"}, [40.0] * 5)], files=measured),
    )
    assert statuses(repo)["0002/P1"].status is Status.DONE

    (repo / "bench/harness.py").write_text("HARNESS = 2\n")  # measured, but not this phase's code
    assert statuses(repo)["0002/P1"].status is Status.DONE

    (repo / "kernel/k.cu").write_text("int kernel_v2;\n")
    st = statuses(repo)["0002/P1"]
    assert st.status is Status.STALE and st.changed == ("kernel/k.cu",)


def test_a_phase_without_paths_never_goes_stale_through_files(tmp_path: Path) -> None:
    plan = plan_text("0002", [phase_block("P1", [], [GATE])])
    repo = make_repo(tmp_path / "repo", {"plans/0002-kernel.md": plan, **FILES, ".gitignore": ".tracker/cache/\n"})
    measured = {path: text.encode() for path, text in FILES.items()}
    write(
        repo / "bench/results/a.json",
        result([case("verify_attn.time_us", {"impl": "cuda"}, [40.0] * 5)], files=measured),
    )
    (repo / "kernel/k.cu").unlink()
    assert statuses(repo)["0002/P1"].status is Status.DONE
