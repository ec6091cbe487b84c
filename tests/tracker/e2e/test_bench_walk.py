"""A bench gate walked through no evidence / too few samples / wrong hardware / below threshold / met /
stale / regressed in a real git repo, with result files in bench/results/ and through ``tracker ingest``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evidence_repo import CHECKOUT, call, commit_all, make_repo, phase_block, plan_text, statuses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resultfiles import case, result, write

from tracker.core.model import BenchGate, Status
from tracker.errors import FileError

T = "verify_attn.time_us"
KERNEL = "int verify_kernel_v1;\n"
GATE = """bench = "verify_attn.time_us"
where = { impl = "cuda", ctx = 91000, heads = 8, nodes = 64, batch = 1 }
baseline = { impl = "triton" }
at_least = 1.8
min_samples = 10
hardware = "H200"
run = "python make_result.py\""""


def run_doc(
    cuda: list[float], triton: list[float], *, time: str, gpu: str = "NVIDIA H200", kernel: str = KERNEL
) -> dict[str, Any]:
    where = {"impl": "cuda", "ctx": 91000, "heads": 8, "nodes": 64, "batch": 1}
    cases = [
        case(T, where, cuda), case(T, {**where, "impl": "triton"}, triton),
        case(T, {**where, "nodes": 16}, cuda), case(T, {**where, "nodes": 16, "impl": "triton"}, triton),
    ]  # fmt: skip
    return result(cases, time=time, gpu=gpu, files={"kernel/k.cu": kernel.encode()})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    plan = plan_text("0002", [phase_block("P1", ["kernel/**"], [GATE])])
    return make_repo(
        tmp_path / "repo", {"plans/0002-kernel.md": plan, "kernel/k.cu": KERNEL, ".gitignore": ".tracker/cache/\n"}
    )


def verdict(root: Path) -> tuple[Status, str, bool]:
    st = statuses(root)["0002/P1"]
    return st.status, st.verdicts[0].reason, st.verdicts[0].failed


def test_bench_gate_walk(repo: Path) -> None:
    results = repo / "bench/results"
    assert verdict(repo) == (Status.PLANNED, "no benchmark evidence", False)

    write(results / "a.json", run_doc([100.0] * 7, [250.0] * 20, time="2026-11-29T10:00:00Z"))
    assert verdict(repo) == (Status.PLANNED, "undecided: too few samples (7 < 10); no run decided it yet", False)

    write(
        results / "b.json",
        run_doc([100.0] * 20, [250.0] * 20, time="2026-11-29T10:05:00Z", gpu="NVIDIA A100-SXM4-80GB"),
    )
    write(results / "a.json", run_doc([100.0] * 20, [250.0] * 20, time="2026-11-29T10:00:00Z", gpu="NVIDIA L4"))
    assert verdict(repo) == (
        Status.PLANNED,
        "results only from NVIDIA A100-SXM4-80GB, NVIDIA L4 (gate wants H200)",
        False,
    )

    write(results / "c.json", run_doc([100.0] * 20, [150.0] * 20, time="2026-11-29T10:10:00Z"))
    status, reason, failed = verdict(repo)
    assert (status, failed) == (Status.PLANNED, True)  # failed, but never met before: not a regression
    assert reason == "1.50× < 1.80× (median of 20, nodes=64, NVIDIA H200, kernel@3f2a91c)"

    write(results / "d.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    assert verdict(repo) == (Status.DONE, "2.31× ≥ 1.80× (median of 20, nodes=64, NVIDIA H200, kernel@3f2a91c)", False)
    src = statuses(repo)["0002/P1"].verdicts[0].source
    assert src is not None and (src.file, src.machine) == ("bench/results/d.json", "gpu-box (NVIDIA H200)")

    (repo / "kernel/k.cu").write_text("int verify_kernel_v2;\n")
    st = statuses(repo)["0002/P1"]
    assert st.status is Status.STALE and st.changed == ("kernel/k.cu",)

    write(
        results / "e.json",
        run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T10:20:00Z", kernel="int verify_kernel_v2;\n"),
    )
    assert verdict(repo)[0] is Status.REGRESSED
    code, out = call("check", repo)
    assert code == 1 and out.startswith("0002/P1: regressed: gate 1: 1.20× < 1.80× (median of 20,")


def test_invalid_result_file_in_repo_is_reported_not_half_used(repo: Path) -> None:
    write(repo / "bench/results/good.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    assert verdict(repo)[0] is Status.DONE
    doc = run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T10:30:00Z")
    doc["cases"][0]["stats"]["median"] = 1.0
    write(repo / "bench/results/bad.json", doc)
    reason = "invalid result file, fix or remove it: bench/results/bad.json: cases[0]: stats.median is 1.0 but the samples give 100"
    # The good older run does not meet the gate while a newer file is unreadable: it might be the regression.
    assert verdict(repo) == (Status.PLANNED, reason, False)
    cli = [sys.executable, "-c", "from tracker.cli import main; main(['check'])"]
    proc = subprocess.run(cli, cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "bench/results/bad.json: cases[0]: stats.median is 1.0 but the samples give 100" in proc.stdout


@pytest.mark.parametrize("sample", [0.0, -5.0])
def test_a_time_that_is_not_positive_never_gives_a_speedup(repo: Path, sample: float) -> None:
    write(repo / "bench/results/zero.json", run_doc([sample] * 12, [30.0] * 12, time="2026-11-29T10:15:00Z"))
    reason = f"invalid result file, fix or remove it: bench/results/zero.json: cases[0]: samples[0] is {sample} us: a time must be > 0 (and 1 more)"
    assert verdict(repo) == (Status.PLANNED, reason, False)  # the second cuda case is the one more
    code, out = call("check", repo)
    assert code == 1 and f"bench/results/zero.json: cases[0]: samples[0] is {sample} us: a time must be > 0" in out


def test_ingest_results_and_tests_from_another_machine(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "from-gpu"
    good = write(outside / "verify.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    bad = write(outside / "bad.json", {**run_doc([1.0], [1.0], time="2026-11-29T10:15:00Z"), "version": 2})
    store = repo / ".tracker/evidence"

    with pytest.raises(FileError, match=r"bad.json: unsupported version 2"):
        call("ingest", repo, [good, bad])
    assert not store.exists() or not list(store.glob("*.json"))  # all or nothing

    code, out = call("ingest", repo, [good])
    assert code == 0 and "4 case(s) from gpu-box (NVIDIA H200)" in out
    [copied] = list(store.glob("*.json"))
    assert copied.read_bytes() == good.read_bytes()
    assert verdict(repo)[0] is Status.DONE
    assert "already in the store" in call("ingest", repo, [good])[1]


def test_gpu_test_evidence_from_reportlog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(CHECKOUT))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    gpu_test = (
        "import os, pytest\n\n@pytest.mark.gpu\ndef test_on_gpu():\n"
        "    if not os.environ.get('FAKE_GPU'):\n        pytest.skip('CUDA not available')\n"
    )
    plan = plan_text("0003", [phase_block("P1", ["tests/**"], ['test = "tests/test_gpu.py"\nmarker = "gpu"'])])
    repo = make_repo(
        tmp_path / "repo",
        {
            "plans/0003-gpu.md": plan,
            "tests/test_gpu.py": gpu_test,
            "conftest.py": "",
            ".gitignore": ".tracker/cache/\n",
        },
    )
    # The "GPU machine": a copy of the tree without .git, where the test runs for real.
    gpu = tmp_path / "gpu"
    (gpu / "tests").mkdir(parents=True)
    (gpu / "tests/test_gpu.py").write_text(gpu_test)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"} | {"FAKE_GPU": "1"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--report-log=gpu.jsonl", "tests"],
        cwd=gpu,
        env=env,
        check=True,
        capture_output=True,
    )
    code, out = call("ingest", repo, [gpu / "gpu.jsonl"], host="h200-box")
    assert code == 0, out
    # A reportlog records keywords, not markers (they also hold directory, module and parameter names): alone,
    # it cannot say what `-m gpu` selects, so the gate waits for a run that records markers.
    st = statuses(repo)["0003/P1"]
    assert st.status is not Status.DONE and not st.verdicts[0].met and not st.verdicts[0].failed, st.verdicts[0].reason
    # The same test skipped on this CPU machine neither meets nor un-meets the gate; its markers select it,
    # and its outcome is the GPU machine's.
    code, out = call("verify", repo, ["0003"], force=True)
    assert code == 0 and "met   0003/P1#1" in out
    local = json.loads(next(p for p in (repo / ".tracker/evidence").glob("*-verify-*.json")).read_text())
    assert [(t["nodeid"], t["outcome"], t["reason"]) for t in local["tests"]] == [
        ("tests/test_gpu.py::test_on_gpu", "skipped", "CUDA not available")
    ]
    st = statuses(repo)["0003/P1"]
    src = st.verdicts[0].source
    assert st.status is Status.DONE and src is not None and src.machine == "h200-box"
    recorded = json.loads(next(p for p in (repo / ".tracker/evidence").glob("*-pytest-*.json")).read_text())
    assert recorded["provenance"]["commit_assumed"] is True and recorded["files"]["tests/test_gpu.py"]


def test_verify_bench_runs_commands_then_skips_fresh_ones(repo: Path) -> None:
    doc = run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z")
    # The `run` command: writes a new result file each time (a counter in the name), like bench/ does.
    script = (
        "import json, pathlib, sys\n"
        "out = pathlib.Path('bench/results'); out.mkdir(parents=True, exist_ok=True)\n"
        "n = len(list(out.glob('*.json')))\n"
        f"doc = json.loads({json.dumps(json.dumps(doc))})\n"
        "doc['provenance']['time'] = f'2026-11-29T11:{n:02d}:00Z'\n"
        "(out / f'run-{n}.json').write_text(json.dumps(doc))\n"
        "print('benchmark progress line', flush=True)\n"
    )
    (repo / "make_result.py").write_text(script)
    commit_all(repo, "bench script")
    code, out = call("verify", repo, ["0002"], bench=True)
    assert code == 0, out
    assert "[1/1] python make_result.py  (for 0002/P1#1)" in out
    assert "took in bench/results/run-0.json: 4 case(s) from gpu-box (NVIDIA H200)" in out
    assert "met   0002/P1#1 verify_attn.time_us: 2.31× ≥ 1.80×" in out
    code, out = call("verify", repo, ["0002"], bench=True)
    assert code == 0 and "0002/P1#1: up to date, not re-run" in out and not (repo / "bench/results/run-1.json").exists()
    code, out = call("verify", repo, ["0002"], bench=True, force=True)
    assert code == 0 and (repo / "bench/results/run-1.json").exists()

    (repo / "make_result.py").write_text("import sys\nsys.exit(3)\n")
    code, out = call("verify", repo, ["0002"], bench=True, force=True)
    assert code == 1 and "`python make_result.py` exited with 3: its results are not used" in out
    (repo / "make_result.py").write_text("pass\n")
    code, out = call("verify", repo, ["0002"], bench=True, force=True)
    assert code == 1 and "wrote no result file" in out


def test_verify_bench_reports_the_gates_of_a_failed_command_unmet(repo: Path) -> None:
    # Gate 2's command fails; gate 1's command writes a result that would meet gate 2 as well.
    doc = run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z")
    script = f"import json, pathlib\npathlib.Path('bench/results').mkdir(parents=True, exist_ok=True)\npathlib.Path('bench/results/r.json').write_text({json.dumps(json.dumps(doc))})\n"
    (repo / "make_result.py").write_text(script)
    failing = GATE.replace('run = "python make_result.py"', "run = \"python -c 'import sys; sys.exit(3)'\"")
    noop = GATE.replace('run = "python make_result.py"', "run = \"python -c 'pass'\"")
    plan = plan_text("0002", [phase_block("P1", ["kernel/**"], [GATE, failing, noop])])
    (repo / "plans/0002-kernel.md").write_text(plan)
    commit_all(repo, "three commands")
    code, out = call("verify", repo, ["0002"], bench=True, force=True)
    assert code == 1, out
    assert "met   0002/P1#1 verify_attn.time_us: 2.31× ≥ 1.80×" in out
    assert (
        "UNMET 0002/P1#2 verify_attn.time_us: `python -c 'import sys; sys.exit(3)'` exited with 3: its results are not used\n"
        in out
    )
    assert (
        "UNMET 0002/P1#3 verify_attn.time_us: `python -c 'pass'` wrote no result file in .tracker/evidence/ or bench/results/\n"
        in out
    )


def test_gc_keeps_newest_result_per_case_and_the_last_met_run(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "runs"
    met = write(outside / "1.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:00:00Z"))
    # an earlier miss: it moves no status (the gate was never met yet), so no timeline names it
    older = write(outside / "0.json", run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T09:00:00Z"))
    failing = write(outside / "2.json", run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T11:00:00Z"))
    other_gpu = write(
        outside / "3.json", run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T08:00:00Z", gpu="NVIDIA L4")
    )
    assert call("ingest", repo, [older, met, failing, other_gpu])[0] == 0
    before = verdict(repo)
    assert before[0] is Status.REGRESSED
    code, out = call("gc", repo, dry_run=True)
    assert code == 0
    kept = {line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("keep ")}
    assert kept == {"newest result of verify_attn.time_us", "last run meeting bench gate verify_attn.time_us"}
    assert out.count("would delete") == 1  # the 09:00 H200 run: superseded, never the last met
    assert call("gc", repo)[0] == 0
    assert len(list((repo / ".tracker/evidence").glob("*.json"))) == 3
    assert verdict(repo) == before


def test_gc_results_deletes_only_committed_result_files_nothing_needs_names_or_lacks(repo: Path) -> None:
    """``gc --results`` prunes bench/results/ as gc prunes the store, and more carefully: a file a tracked document
    names, one git cannot give back (untracked, or edited since its commit) and a link stay, each with why; a
    record that lists a file's name (a test run's node ids) is no reader; statuses and verdicts do not move."""
    results = repo / "bench/results"
    docs = {
        "met": run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:00:00Z"),
        "older": run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T09:00:00Z"),
        "older2": run_doc([100.0] * 20, [119.0] * 20, time="2026-11-29T09:05:00Z"),
        "quoted": run_doc([100.0] * 20, [121.0] * 20, time="2026-11-29T09:10:00Z"),
        "listed": run_doc([100.0] * 20, [122.0] * 20, time="2026-11-29T09:20:00Z"),
        "edited": run_doc([100.0] * 20, [123.0] * 20, time="2026-11-29T09:30:00Z"),
        "failing": run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T11:00:00Z"),
    }
    for name, doc in docs.items():
        write(results / f"{name}.json", doc)
    (repo / "docs").mkdir()
    (repo / "docs/notes.md").write_text("1.21x, `bench/results/quoted.json` (H200)\n")
    record = {"schema": "tracker-test-run", "tests": [{"nodeid": "tests/t.py::test_valid[listed.json]"}]}
    (repo / "docs/run.json").write_text(json.dumps(record))
    commit_all(repo, "results")
    write(results / "edited.json", {**docs["edited"], "cases": docs["edited"]["cases"][:2]})  # not as committed
    write(results / "fresh.json", run_doc([100.0] * 20, [124.0] * 20, time="2026-11-29T09:40:00Z"))  # untracked
    (results / "zlink.json").symlink_to("older.json")  # read as a copy of older.json: never judged, kept
    before = verdict(repo)
    assert before[0] is Status.REGRESSED
    code, out = call("gc", repo, dry_run=True)
    assert code == 0 and "bench/results" not in out, "without --results gc leaves bench/results/ alone, unlisted"
    code, out = call("gc", repo, dry_run=True, results=True)
    assert code == 0
    assert sorted(line for line in out.splitlines() if line.startswith("would delete")) == [
        "would delete bench/results/listed.json",
        "would delete bench/results/older2.json",
    ]
    why = {line.split(": ", 1)[0][5:]: line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("keep ")}
    assert why["bench/results/quoted.json"] == "named in docs/notes.md"
    assert why["bench/results/edited.json"].startswith("not committed as it is")
    assert why["bench/results/fresh.json"].startswith("not committed as it is")
    assert why["bench/results/met.json"] == "last run meeting bench gate verify_attn.time_us"
    assert why["bench/results/failing.json"].startswith("newest result of")
    assert why["bench/results/older.json"] == "bench/results/zlink.json links to it"  # else the link would dangle
    assert "bench/results/zlink.json" not in why
    assert (results / "older2.json").exists()
    assert call("gc", repo, results=True)[0] == 0
    assert sorted(p.name for p in results.iterdir()) == [
        "edited.json", "failing.json", "fresh.json", "met.json", "older.json", "quoted.json", "zlink.json"
    ]  # fmt: skip
    assert verdict(repo) == before
    assert call("gc", repo, dry_run=True, results=True)[1].count("would delete") == 0


def test_gc_results_finds_every_reader_a_review_found_it_missing(tmp_path: Path) -> None:
    """An adversarial review's finds, each once deleted: names a tokenising regex missed (non-ASCII, a space, a
    '+', Markdown-escaped, URL-quoted), readers inside bench/results/ (a README, a sub-folder's index), a tracked link
    elsewhere, a doc a sparse checkout left out of the tree; and a result that a phase's paths cover, which pruned
    would turn the phase stale."""
    plan = plan_text("0002", [phase_block("P1", ["kernel/**", "bench/**"], [GATE])])
    root = make_repo(
        tmp_path / "repo", {"plans/0002-kernel.md": plan, "kernel/k.cu": KERNEL, ".gitignore": ".tracker/cache/\n"}
    )
    results = root / "bench/results"
    write(results / "z-newest.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T12:00:00Z"))
    names = ["résultat.json", "my run.json", "a+b.json", "run_1.json", "url ok.json", "readme.json", "deep.json",
             "linked.json", "sparse.json", "colon.json", "gone.json"]  # fmt: skip
    for i, name in enumerate(names):
        write(results / name, run_doc([100.0] * 20, [120.0 + i] * 20, time=f"2026-11-29T09:{i:02d}:00Z"))
    (root / "docs").mkdir()
    (root / "docs/a.md").write_text(
        "From bench/results/résultat.json, `bench/results/my run.json`, [x](bench/results/a+b.json), run\\_1.json "
        "and <a href='bench/results/url%20ok.json'>\n"
    )
    (results / "README.md").write_text("The baseline is readme.json\n")
    (results / "archive").mkdir()
    (results / "archive/index.md").write_text("deep.json\n")
    (root / "docs/latest.json").symlink_to("../bench/results/linked.json")
    (root / "paper").mkdir()
    (root / "paper/draft.md").write_text("Table 2: bench/results/sparse.json\n")
    (root / "0:FIGURES.md").write_text("colon.json\n")  # `git cat-file :0:FIGURES.md` would read FIGURES.md's stage 0
    commit_all(root, "runs")
    (root / "0:FIGURES.md").unlink()  # an unstaged deletion: git's copy is read
    subprocess.run(["git", "sparse-checkout", "set", "--no-cone", "/*", "!/paper/"], cwd=root, check=True)
    assert not (root / "paper").exists()
    before = statuses(root)["0002/P1"]
    code, out = call("gc", root, dry_run=True, results=True)
    assert code == 0, out
    # Only gone.json: the others are named or linked, and a phase covering bench/** would read stale without them
    # unless gc sees the tree as pruning leaves it.
    assert [line for line in out.splitlines() if line.startswith("would delete")] == [
        "would delete bench/results/gone.json"
    ], out
    why = {line.split(": ", 1)[0][5:]: line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("keep ")}
    for name in names[:5]:
        assert why[f"bench/results/{name}"] == "named in docs/a.md", name
    assert why["bench/results/readme.json"] == "named in bench/results/README.md"
    assert why["bench/results/deep.json"] == "named in bench/results/archive/index.md"
    assert why["bench/results/linked.json"] == "docs/latest.json links to it"
    assert why["bench/results/sparse.json"] == "named in paper/draft.md"
    assert why["bench/results/colon.json"] == "named in 0:FIGURES.md"
    assert call("gc", root, results=True)[0] == 0
    after = statuses(root)["0002/P1"]
    assert (after.status, after.verdicts) == (before.status, before.verdicts)


@pytest.mark.parametrize("where", ["bench/results", "store"])
def test_gc_keeps_the_run_a_doc_figure_pinned_to_a_commit_or_machine_draws_from(
    repo: Path, tmp_path: Path, where: str
) -> None:
    """A figure picks its run by commit or machine, not only by file: gc keeps what it draws from, in bench/results/
    (--results) and in the store (plain gc), so that `tracker check` still finds the docs current."""
    first = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    (repo / "NEWS").write_text("v2\n")
    commit_all(repo, "v2")
    second = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()

    def doc(triton: float, time: str, commit: str, host: str = "gpu-box") -> dict[str, Any]:
        d = run_doc([100.0] * 20, [triton] * 20, time=time)
        d["provenance"].update(commit=commit, host=host)
        return d

    runs = {
        "old.json": doc(150.0, "2026-11-29T09:00:00Z", first),
        "other-host.json": doc(160.0, "2026-11-29T10:00:00Z", second, host="box2"),
        "new.json": doc(231.0, "2026-11-29T12:00:00Z", second),
    }
    folder = repo / "bench/results" if where == "bench/results" else tmp_path / "runs"
    paths = [write(folder / name, d) for name, d in runs.items()]
    if where == "store":
        assert call("ingest", repo, paths)[0] == 0
    (repo / "pyproject.toml").write_text('[tool.tracker]\ndocs = ["README.md"]\n')
    case = "metric=verify_attn.time_us impl=triton ctx=91000 heads=8 nodes=64 batch=1 digits=1"
    (repo / "README.md").write_text(
        f"At v1 <!-- figure {case} commit={first[:8]} --><!-- /figure -->; "
        f"on box2 <!-- figure {case} machine=box2 --><!-- /figure -->.\n"
    )
    assert call("update", repo)[0] == 0
    assert "150.0 us" in (repo / "README.md").read_text() and "160.0 us" in (repo / "README.md").read_text()
    commit_all(repo, "runs and a doc")
    code, out = call("check", repo)
    assert code == 0, out
    code, out = call("gc", repo, results=where == "bench/results")
    assert code == 0, out
    assert call("check", repo)[0] == 0, "the figures' runs are gone"
    code, out = call("gc", repo, dry_run=True, results=True)
    assert "the figure at README.md:1 draws from it" in out


def test_plain_gc_keeps_a_store_copy_a_link_in_bench_results_points_to(repo: Path, tmp_path: Path) -> None:
    old = write(tmp_path / "runs/old.json", run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T09:00:00Z"))
    new = write(tmp_path / "runs/new.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T12:00:00Z"))
    assert call("ingest", repo, [old, new])[0] == 0
    (copy,) = [p for p in (repo / ".tracker/evidence").glob("*.json") if b"120.0" in p.read_bytes()]
    (repo / "bench/results").mkdir(parents=True)
    (repo / "bench/results/baseline.json").symlink_to(f"../../.tracker/evidence/{copy.name}")
    before = statuses(repo)["0002/P1"]
    code, out = call("gc", repo)
    assert code == 0 and copy.exists(), out  # deleted, the link would dangle and every bench gate read invalid
    assert f"kept .tracker/evidence/{copy.name}" not in out
    assert call("gc", repo, dry_run=True)[1].count(
        f"keep .tracker/evidence/{copy.name}: bench/results/baseline.json links"
    )
    after = statuses(repo)["0002/P1"]
    assert (after.status, after.verdicts) == (before.status, before.verdicts)


RUN = st.fixed_dictionaries(
    {
        "triton": st.sampled_from([120.0, 150.0, 181.0, 231.0]),  # 1.2x to 2.31x against cuda's 100: met or not
        "named": st.sampled_from(["no", "doc", "test", "record", "symlinked doc"]),
        "state": st.sampled_from(["committed", "committed", "untracked", "edited", "staged"]),
    }
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(RUN, min_size=1, max_size=6))
def test_gc_results_never_moves_a_status_nor_takes_what_is_named_or_uncommitted(
    tmp_path_factory: pytest.TempPathFactory, runs: list[dict[str, Any]]
) -> None:
    root = tmp_path_factory.mktemp("gcres") / "repo"
    plan = plan_text("0002", [phase_block("P1", ["kernel/**"], [GATE])])
    make_repo(root, {"plans/0002-kernel.md": plan, "kernel/k.cu": KERNEL, ".gitignore": ".tracker/cache/\n"})
    outside = root.parent / "outside.md"
    for i, r in enumerate(runs):
        name = f"r{i}.json"
        write(root / "bench/results" / name, run_doc([100.0] * 20, [r["triton"]] * 20, time=f"2026-11-29T1{i}:00:00Z"))
        cite = f"see bench/results/{name}\n"
        if r["named"] == "doc":
            (root / f"docs/n{i}.md").parent.mkdir(exist_ok=True)
            (root / f"docs/n{i}.md").write_text(cite)
        elif r["named"] == "test":
            (root / f"tests/test_{i}.py").parent.mkdir(exist_ok=True)
            (root / f"tests/test_{i}.py").write_text(f"PATH = {name!r}\n")
        elif r["named"] == "record":
            doc = {"schema": "tracker-test-run", "tests": [{"nodeid": f"t.py::test[{name}]"}]}
            (root / f"records/{i}.json").parent.mkdir(exist_ok=True)
            (root / f"records/{i}.json").write_text(json.dumps(doc))
        elif r["named"] == "symlinked doc":  # a tracked link to a text outside the repository: not the repository's
            outside.write_text(outside.read_text() + cite if outside.exists() else cite)
            (root / f"link{i}.md").symlink_to(outside)
    commit_all(root, "runs")
    for i, r in enumerate(runs):
        path = root / "bench/results" / f"r{i}.json"
        if r["state"] == "untracked":
            subprocess.run(["git", "rm", "-q", "--cached", str(path)], cwd=root, check=True)
        elif r["state"] in ("edited", "staged"):
            doc = json.loads(path.read_text())
            write(path, {**doc, "cases": doc["cases"][:2]})
            if r["state"] == "staged":
                subprocess.run(["git", "add", str(path)], cwd=root, check=True)
    before = statuses(root)["0002/P1"]
    bytes_before = {p.name: p.read_bytes() for p in (root / "bench/results").iterdir()}
    code, _ = call("gc", root, results=True)
    assert code == 0
    after = statuses(root)["0002/P1"]
    assert (after.status, after.verdicts) == (before.status, before.verdicts)
    left = {p.name: p.read_bytes() for p in (root / "bench/results").iterdir()}
    for i, r in enumerate(runs):
        name = f"r{i}.json"
        if r["state"] != "committed" or r["named"] in ("doc", "test"):
            assert left.get(name) == bytes_before[name], (name, r)  # named, or git could not give it back
    assert all(left[n] == bytes_before[n] for n in left)  # what stays is untouched
    assert f"r{len(runs) - 1}.json" in left  # the newest result of every case


def test_a_second_gc_judges_from_the_bootstrap_bounds_the_first_kept(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gc replays every gate's history (thousands of bootstrap bounds on our own store): it keeps them in the cache
    status and report keep theirs in, so the next gc (or status) computes none again."""
    from tracker.core import stats

    noisy = [[100.0 + (i * 7919 % 13) + j for i in range(20)] for j in range(3)]
    slower = [[230.0 + (i * 104729 % 17) + j for i in range(20)] for j in range(3)]
    runs = [
        write(tmp_path / "runs" / f"{j}.json", run_doc(noisy[j], slower[j], time=f"2026-11-29T1{j}:00:00Z"))
        for j in range(3)
    ]
    assert call("ingest", repo, runs)[0] == 0
    (repo / ".tracker/cache/bootstrap.json").unlink(missing_ok=True)
    computed: list[object] = []
    real = stats._resampler
    monkeypatch.setattr(stats, "_resampler", lambda *a: computed.append(a) or real(*a))
    first = call("gc", repo, dry_run=True)
    assert first[0] == 0 and computed, "the control: a gc with no bounds cached computes them"
    computed.clear()
    assert call("gc", repo, dry_run=True) == first and computed == []


def test_warm_status_uses_cached_verdicts_without_parsing_results(repo: Path) -> None:
    from tracker.base.cache import Cache
    from tracker.plans.load import load_plans
    from tracker.store.bench_evaluator import Evaluator, RepoResults

    write(repo / "bench/results/d.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    _, plans = load_plans(repo)
    gate = plans[0].phases[0].gates[0]
    assert isinstance(gate, BenchGate)
    cache = Cache(repo)  # one command's
    cold = RepoResults(repo, cache=cache)
    first = Evaluator(cold)(gate)
    assert first.met and cold._runs is not None  # parsed once
    assert not (repo / ".tracker/cache/bench-verdicts.json").exists()  # evaluation writes nothing
    cache.write()  # the command, at its end
    warm = RepoResults(repo, cache=Cache(repo))
    evaluator = Evaluator(warm)
    assert evaluator(gate) == first and warm._runs is None  # served from the cache: nothing parsed
    assert evaluator.changed("bench/results/d.json", {"kernel/k.cu": "0" * 40}) == ["kernel/k.cu"]
    assert warm._runs is None
    # New bytes in any result file: a different key, evaluated afresh.
    write(repo / "bench/results/e.json", run_doc([100.0] * 20, [120.0] * 20, time="2026-11-29T10:20:00Z"))
    cache = Cache(repo)
    fresh = RepoResults(repo, cache=cache)
    assert not Evaluator(fresh)(gate).met and fresh._runs is not None
    cache.write()
    assert sorted(p.name for p in (repo / ".tracker/cache").glob("bench-verdicts*")) == [
        "bench-verdicts.json"
    ]  # one file


def test_edited_evaluation_code_is_never_answered_from_the_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.base.cache import Cache
    from tracker.plans.load import load_plans
    from tracker.store.bench_evaluator import Evaluator, RepoResults

    write(repo / "bench/results/d.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    _, plans = load_plans(repo)
    gate = plans[0].phases[0].gates[0]
    assert isinstance(gate, BenchGate)
    import shutil

    from tracker.base import cache as cache_module

    code = tmp_path / "tracker"  # a copy of the tracker's code, whose identity (code_identity) keys the verdicts
    shutil.copytree(cache_module.PACKAGE, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "PACKAGE", code)
    cache_module.forget_code_identity()
    cache = Cache(repo)
    Evaluator(RepoResults(repo, cache=cache))(gate)  # fills the cache
    cache.write()
    warm = RepoResults(repo, cache=Cache(repo))
    Evaluator(warm)(gate)
    assert warm._runs is None  # same code, same results: served from the cache
    rule = code / "core" / "bench_verdict.py"
    rule.write_bytes(rule.read_bytes() + b"\n# a rule changed\n")
    cache_module.forget_code_identity()  # a new process reads it again
    edited = RepoResults(repo, cache=Cache(repo))
    assert edited.key != warm.key
    Evaluator(edited)(gate)
    assert edited._runs is not None  # evaluated afresh


def test_verify_without_bench_reports_bench_gates_from_stored_results(repo: Path) -> None:
    write(repo / "bench/results/d.json", run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z"))
    code, out = call("verify", repo, ["0002"])
    assert code == 0 and not (repo / "bench/results/run-0.json").exists()
    assert "tracker: 1 bench gate(s) judged on the stored results (--bench runs their commands)" in out
    assert "met   0002/P1#1 verify_attn.time_us: 2.31× ≥ 1.80×" in out


@pytest.mark.parametrize("stated", [None, 0.9], ids=["default confidence", "stated confidence"])
def test_noise_never_flips_a_verdict(tmp_path: Path, stated: float | None) -> None:
    """Issue 31's walk: a run whose interval straddles the threshold alone decides nothing; a clear run makes the
    phase done; a newer straddling run leaves it done, undecided, and `tracker check` passes; a clear slow run
    regresses it."""
    gate = GATE + (f"\nconfidence = {stated}" if stated is not None else "")
    plan = plan_text("0002", [phase_block("P1", ["kernel/**"], [gate])])
    repo = make_repo(
        tmp_path / "repo", {"plans/0002-kernel.md": plan, "kernel/k.cu": KERNEL, ".gitignore": ".tracker/cache/\n"}
    )
    results = repo / "bench/results"
    base = [250.0] * 20
    straddling = [138.9 + 4.0 * (i - 9.5) for i in range(20)]  # ratio median 1.8: the interval spans 1.8
    write(results / "a.json", run_doc(straddling, base, time="2026-11-29T10:00:00Z"))
    st = statuses(repo)["0002/P1"]
    v = st.verdicts[0]
    assert (st.status, v.met, v.failed, v.undecided) == (Status.PLANNED, False, False, True), v.reason
    assert v.reason.startswith("undecided: ") and "straddle 1.80×" in v.reason and "no run decided it yet" in v.reason

    write(results / "b.json", run_doc([110.0 + (i % 3) for i in range(20)], base, time="2026-11-29T11:00:00Z"))
    st = statuses(repo)["0002/P1"]
    assert (st.status, st.verdicts[0].undecided) == (Status.DONE, False), st.verdicts[0].reason

    write(results / "c.json", run_doc(straddling, base, time="2026-11-29T12:00:00Z"))
    st = statuses(repo)["0002/P1"]
    v = st.verdicts[0]
    assert (st.status, v.met, v.failed, v.undecided) == (Status.DONE, True, False, True), v.reason
    assert "the last decided run stands, met by bench/results/b.json" in v.reason
    assert v.source is not None and v.source.file == "bench/results/b.json"  # what its staleness is judged on
    _, out = call("check", repo)  # this fixture's commits are made up: check has other things to say, not this
    assert "regressed" not in out, out
    _, out = call("status", repo)
    assert "done" in out and "gate 1: undecided: " in out, out

    write(results / "d.json", run_doc([200.0 + (i % 3) for i in range(20)], base, time="2026-11-29T13:00:00Z"))
    st = statuses(repo)["0002/P1"]
    assert (st.status, st.verdicts[0].failed, st.verdicts[0].undecided) == (Status.REGRESSED, True, False)
    assert "0002/P1: regressed" in call("check", repo)[1]


def test_a_file_added_under_the_measured_globs_stales_the_verdict(repo: Path) -> None:
    """Issue 24 round 6 (7) and issue 30: a file added under a phase's ``paths`` never staled a bench gate whose run did
    not measure it (`verify --bench` said "up to date"). A result now names the globs it measured by: a new file
    matching them, under the phase's paths, is new code under the benchmark."""
    doc = run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z")
    doc["provenance"]["fingerprint"]["patterns"] = ["kernel/**"]
    write(repo / "bench/results/d.json", doc)
    assert verdict(repo)[0] is Status.DONE
    (repo / "kernel/helper.cuh").write_text("#define SCALE 0\n")  # included by k.cu: the measured code changed
    st = statuses(repo)["0002/P1"]
    assert st.status is Status.STALE and st.changed == ("kernel/helper.cuh",)
    _, out = call("verify", repo, ["0002"], bench=True)
    assert "up to date" not in out
    # A file outside the measured globs is not the benchmark's code; one outside the phase's paths, not the phase's.
    (repo / "kernel/helper.cuh").unlink()
    doc["provenance"]["fingerprint"]["patterns"] = ["kernel/*.cu"]
    write(repo / "bench/results/d.json", doc)
    (repo / "kernel/notes.txt").write_text("n\n")
    (repo / "kernel/k2.cu").write_text("int other;\n")
    assert statuses(repo)["0002/P1"].changed == ("kernel/k2.cu",)


def test_measured_globs_are_validated_like_paths(repo: Path) -> None:
    doc = run_doc([100.0] * 20, [231.0] * 20, time="2026-11-29T10:15:00Z")
    for bad, said in (("../x/**", "'.' or '..' segment"), ("/etc/*", "absolute"), (7, "string"), ("", "empty")):
        doc["provenance"]["fingerprint"]["patterns"] = [bad]
        write(repo / "bench/results/d.json", doc)
        status, reason, _ = verdict(repo)
        assert status is Status.PLANNED and "provenance.fingerprint.patterns[0]" in reason and said in reason, reason
