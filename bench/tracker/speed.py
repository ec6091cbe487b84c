"""Wall-clock timings of ``tracker status`` and ``tracker update --check`` (a script, not a test).

Three kinds of repository, each timed as whole processes, interleaved round by round with
``python -c pass`` (the same interpreter) so that a load change on a shared machine hits every
command alike; one warm-up round (it also warms the parse and validation caches) is not counted. Every
command a ratio compares (python, status, update --check, show, log, summary) runs ``--repeat`` times
(default 3) back to back in each round, and the round's sample is the fastest of them; the synthetic
repository's status and the reports run once a round (``info.repeat`` in the result file says which):

- ``own``: this repository's plans and evidence, as they are.
- ``history``: a synthetic git repository whose plans stay the same while its evidence store holds
  10, 100 or 1,000 files (``--history``). The newest files are real: ``tracker verify`` and
  ``pytest --tracker-record`` runs, ``tracker signoff`` and an ingested benchmark result (one phase is
  regressed, some are planned, bench gates are met). The older ones are generated in the same shapes,
  one in 16 a ~580 KB benchmark result copy (this repository's store holds such copies), test runs with
  some failures; they are older than every real file, so ``status`` prints the same table at every
  size (checked). Status cost must not grow with history: the ratio of the largest size to the
  smallest is a metric.
- ``gates``: one plan whose one phase has 1,250 or 5,000 test gates (``--gates``), one test each in one file, no
  evidence; its status is timed cold (the parse cache removed before each run), where the gates are parsed and
  located. Cost must grow linearly with the gates of a phase (issue 24: 1,250 / 2,500 / 5,000 gates cost 1.0 /
  3.4 / 13.7 s, each gate's line found by rescanning the block): the ratio of the largest to the smallest is a
  metric.
- ``synthetic``: 1,000 plans x 10 phases (``--plans``/``--phases``; two test gates and one glob per
  phase, 2,000 source files and 1,000 test files (a gate whose file is gone is unmet), one evidence file meeting
  all gates of odd plans and half of even ones).

Metrics (the result file's cases; unit ``ms`` or ``x``, lower is better; ``info`` holds the CPU count
and the load average at the end of the run, which say how noisy the machine was):

- ``python.pass_ms``: ``python -c pass``, every round;
- ``tracker.status_ms`` / ``tracker.update_check_ms`` with params ``{repo: own}``,
  ``{repo: history, evidence: N}`` or ``{repo: synthetic, plans, phases}``;
- ``tracker.status_vs_python`` with ``{repo: own}`` or ``{repo: history, evidence: N}``: each round's
  status time over the ``python -c pass`` run just before it (0001/P6's speed gate: at most 8x);
- ``tracker.status_history_ratio`` / ``tracker.update_check_history_ratio`` with
  ``{repo: history, evidence_from: 10, evidence_to: 1000}``: each round's time at the largest
  history over the time at the smallest (issue 12: at most 1.2x);
- ``tracker.status_cold_ms`` ``{repo: synthetic, ...}``: one status with a cold parse cache; ``{repo: gates,
  gates: N}``: status with a cold parse cache every run;
- ``tracker.status_cold_gates_ratio`` ``{repo: gates, gates_from: 1250, gates_to: 5000}``: each round's cold status
  at the most gates over the one at the fewest (linear: at most their ratio, 4x; quadratic: ~16x);
- ``tracker.report_ms`` with ``{repo: synthetic, plans, phases}`` (plan 0004 P3's gate: at most 5 s) and
  ``{repo: own, format: md|html}``: ``tracker report`` of every plan, Markdown (HTML: with its charts);
- ``tracker.show_ms``, ``tracker.log_ms``, ``tracker.summary_ms`` ``{repo: own}`` (``show`` and ``log`` of one phase
  with a long history, ``summary`` against HEAD) and ``tracker.show_vs_status`` / ``tracker.summary_vs_status``:
  each round's time over the status run of the same round (issue 14: "as fast as status").

``--cases`` picks the groups timed (default all): ``status`` (status and update --check, every repository),
``report``, ``detail`` (show, log, summary), ``gates`` (cold status of the ``gates`` repositories).

Usage::

    python bench/tracker/speed.py                 # full run (~7 min on a busy 2-core VM while status at 1,000
                                                  # evidence files takes 2.4 s; ~5 min once it does not); writes
                                                  # bench/results/
    python bench/tracker/speed.py --quick         # ~1-2 min: 3 rounds, history 10 and 1,000, 100 plans; writes nothing
    python bench/tracker/speed.py --quick --out DIR   # the same, result file into DIR
    python bench/tracker/speed.py --runs 11 --history 10,100,1000 --plans 1000 --phases 10 --out bench/results
    python bench/tracker/speed.py --cases report  # the report's cases (and the status runs they are compared with)

The result file (``tracker_speed-<UTC time>-<host>.json``, schema ``tracker-bench-result``, written
by :mod:`bench.results`) records the commit, whether the measured files (``tracker/**/*.py`` and this
script) differ from it, and their fingerprint, so a bench gate on it goes stale when the tracker's code
changes. The tracker measured is the ``tracker`` console script next to this interpreter (else
``python -m tracker``), with this process's environment (a ``PYTHONPATH`` reaches it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `python bench/tracker/speed.py` puts bench/tracker/, not the root, on the path

from bench import results as bench_results  # noqa: E402 - needs the root on sys.path
from tracker.base.contract import file_id  # noqa: E402

MEASURED = ("tracker/**/*.py", "bench/tracker/speed.py")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def tracker_cmd() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m tracker``."""
    script = Path(sys.executable).with_name("tracker")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tracker"]


def blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; its stdout."""
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {root}: {proc.stderr.strip()}")
    return proc.stdout


def write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def build(root: Path, n_plans: int, n_phases: int) -> None:
    """Write the synthetic 1,000-plan repository, commit it, and add one evidence file."""
    files: dict[str, bytes] = {}
    tests = []
    for p in range(1, n_plans + 1):
        phases = []
        for k in range(1, n_phases + 1):
            dep = f'depends = ["P{k - 1}"]\n' if k > 1 else ""
            phases.append(
                f'```phase\nid = "P{k}"\ntitle = "Phase {k} of plan {p}"\n{dep}paths = ["src/m{p:04d}/**"]\n\n'
                f'[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_a"\n'
                f'[[gate]]\ntest = "tests/test_m{p:04d}.py::test_{k}_b"\n```\n'
            )
            tests += [f"tests/test_m{p:04d}.py::test_{k}_a", f"tests/test_m{p:04d}.py::test_{k}_b"]
        text = f'# Plan {p}\n\n```plan\nid = "{p:04d}"\ntitle = "Synthetic plan {p}"\n```\n\nProse.\n\n' + "\n".join(
            phases
        )
        files[f"plans/{p:04d}-synthetic.md"] = text.encode()
        files[f"src/m{p:04d}/a.py"] = f"A = {p}\n".encode()
        files[f"src/m{p:04d}/b.py"] = f"B = {p}\n".encode()
        files[f"tests/test_m{p:04d}.py"] = "".join(
            f"def test_{k}_{x}():\n    pass\n\n\n" for k in range(1, n_phases + 1) for x in "ab"
        ).encode()
    write_files(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "synthetic")
    # Odd plans: every gate passed (phases done, so staleness is computed); even plans: every
    # second gate failed.
    recs = [
        {
            "nodeid": t,
            "outcome": "passed" if int(t[12:16]) % 2 or t.endswith("_a") else "failed",
            "reason": "",
            "duration": 0.0,
            "markers": [],
        }
        for t in tests
    ]
    evidence = {
        "schema": "tracker-test-run",
        "version": 1,
        "status": "complete",
        "provenance": {"commit": None, "dirty": False, "time": "2026-11-29T00:00:00Z", "host": "bench"},
        "gates": {},
        "files": {rel: blob(data) for rel, data in files.items()},
        "tests": recs,
    }
    (root / ".tracker/evidence").mkdir(parents=True)
    (root / ".tracker/evidence/20261129T000000Z-bench-verify-000000.json").write_text(json.dumps(evidence))


# --- The history repository: the same plans, a growing evidence store -------------------------------

LIB, KERN, TOOLS = 6, 15, 5  # phases of plans 0001, 0002 and 0003 (this repository's plans: 6, 15, 5)
KERN_BENCH = 8  # plan 0002's first phases carry two bench gates each
BENCH_CASES = 40  # benchmark cases per implementation (x3 implementations: 120 cases, as bench verify writes)
BENCH_EVERY = 16  # one generated history file in 16 is a benchmark result copy
TESTS_PER_FILE = 10


def _phase(pid: str, title: str, paths: str, gates: list[str], depends: str = "") -> str:
    dep = f'depends = ["{depends}"]\n' if depends else ""
    return f'```phase\nid = "{pid}"\ntitle = "{title}"\n{dep}paths = ["{paths}"]\n\n' + "".join(gates) + "```\n"


def history_plans() -> dict[str, str]:
    """The three plans of the history repository: test gates (file, node and marker), bench gates with a
    baseline, manual gates, and planned gates on tests that never ran."""
    lib = []
    for k in range(1, LIB + 1):
        gates = [f'[[gate]]\ntest = "tests/lib/test_m{k}.py"\n', f'[[gate]]\ntest = "tests/lib/test_m{k}.py::test_0"\n']
        if k == LIB:
            gates.append('[[gate]]\nmanual = "release notes reviewed"\n')
        lib.append(_phase(f"P{k}", f"Library module {k}", f"src/lib/m{k}/**", gates, f"P{k - 1}" if k > 1 else ""))
    kern = []
    for k in range(1, KERN + 1):
        gates = [f'[[gate]]\ntest = "tests/kern/test_k{k}.py"\nmarker = "gpu"\n']
        if k <= KERN_BENCH:
            for case in (2 * k - 1, 2 * k):
                gates.append(
                    f'[[gate]]\nbench = "kern.time_us"\nwhere = {{ impl = "fast", case = {case} }}\n'
                    f'baseline = {{ impl = "slow" }}\nat_least = 1.5\nmin_samples = 10\n'
                )
        else:
            gates.append(f'[[gate]]\ntest = "tests/next/test_n{k}.py::test_0"\n')  # planned: never ran
        kern.append(_phase(f"P{k}", f"Kernel step {k}", f"src/kern/k{k}/**", gates))
    tools = []
    for k in range(1, TOOLS + 1):
        gates = [f'[[gate]]\ntest = "tests/tools/test_t{k}.py::test_{j}"\n' for j in (0, 1)]
        if k == TOOLS:
            gates.append('[[gate]]\nmanual = "tried on a fresh clone"\n')
        tools.append(_phase(f"P{k}", f"Tool {k}", f"src/tools/t{k}/**", gates, f"P{k - 1}" if k > 1 else ""))

    def plan(pid: str, title: str, phases: list[str]) -> str:
        return f'# {title}\n\n```plan\nid = "{pid}"\ntitle = "{title}"\n```\n\nProse.\n\n' + "\n".join(phases)

    return {
        "plans/0001-library.md": plan("0001", "Library", lib),
        "plans/0002-kernel.md": plan("0002", "Kernel", kern),
        "plans/0003-tools.md": plan("0003", "Tools", tools),
    }


def history_files() -> dict[str, bytes]:
    """Every file of the history repository (~210, as many as this repository fingerprints)."""
    files = {path: text.encode() for path, text in history_plans().items()}
    files[".gitignore"] = b".tracker/cache/\n.tracker/lock\n__pycache__/\n"
    files["pytest.ini"] = b"[pytest]\nmarkers =\n    gpu: needs a GPU\n"
    files["conftest.py"] = b""
    for group, count in (("lib/m", LIB), ("kern/k", KERN), ("tools/t", TOOLS)):
        for k in range(1, count + 1):
            for mod in "abcde":
                files[f"src/{group}{k}/{mod}.py"] = f"VALUE = {k!r}  # {group}{k}/{mod}\n".encode()
            name = group.replace("/", "/test_")
            mark = "import pytest\n\npytestmark = pytest.mark.gpu\n" if group.startswith("kern") else ""
            body = [f"import os\n{mark}\n"]
            for j in range(TESTS_PER_FILE):
                # HISTORY_FAIL=<group><k>/<j> makes one test fail (the regression in the history).
                body.append(f"\ndef test_{j}():\n    assert os.environ.get('HISTORY_FAIL') != '{group}{k}/{j}'\n")
            files[f"tests/{name}{k}.py"] = "".join(body).encode()
    for i in range(40):
        files[f"docs/page{i:02d}.md"] = f"# Page {i}\n\n".encode() + b"Some prose.\n" * (i + 1)
    for i in range(30):
        files[f"data/sample{i:02d}.txt"] = f"{i}\n".encode() * 10
    return files


def summarize(samples: Sequence[float]) -> dict[str, float | int]:
    """n, median, min, mean and p90 (linear interpolation between order statistics, numpy's default)."""
    ordered = sorted(samples)
    pos = 0.9 * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return {
        "n": len(ordered),
        "median": statistics.median(ordered),
        "min": ordered[0],
        "mean": statistics.fmean(ordered),
        "p90": ordered[low] + (ordered[high] - ordered[low]) * (pos - low),
    }


def bench_result(rng: random.Random, when: datetime, commit: str, tree: dict[str, str]) -> dict[str, Any]:
    """A benchmark result the shape of ``python -m bench verify``'s (~580 KB written as it writes it):
    120 cases of ``kern.time_us``, most with 205 raw samples; ``fast`` is ~2x faster than ``slow``."""
    measured = {path: blob_id for path, blob_id in tree.items() if path.startswith("src/kern/")}
    cases = []
    for impl, center in (("fast", 40.0), ("slow", 80.0), ("ref", 200.0)):
        for case in range(1, BENCH_CASES + 1):
            n = 205 if case <= 34 else 60
            samples = [center * (1 + 0.02 * rng.random()) for _ in range(n)]
            seeds = ",".join(str(rng.randrange(2**31)) for _ in range(20))
            cases.append(
                bench_results.case(
                    "kern.time_us",
                    {"impl": impl, "case": case, "batch": 1},
                    "us",
                    "lower",
                    samples,
                    summarize(samples),
                    {"seeds": seeds},
                )
            )
    prov = {
        "commit": commit,
        "dirty": False,
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": "gpu-box",
        "gpu": "NVIDIA H200",
        "driver": "580.159.04",
        "cuda": "13.0",
        "torch": "2.11.0+cu130",
        "triton": "3.6.0",
        "python": "3.12.3",
        "command": "python -m bench verify --cases all",
        "fingerprint": bench_results.fingerprint(measured, ()),
    }
    return bench_results.document("verify", prov, cases)


def _stamp(when: datetime) -> str:
    return when.strftime("%Y%m%dT%H%M%S%fZ")


def _time(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _dump(doc: dict[str, Any], sort: bool = True) -> bytes:
    """As the tracker writes evidence (plugin, signoff: indent 1, sorted keys; results: indent 1, in order)."""
    return (json.dumps(doc, indent=1, sort_keys=sort, ensure_ascii=False) + "\n").encode()


def build_history_base(root: Path, tracker: list[str]) -> list[tuple[str, bytes]]:
    """Write and commit the history repository, then record its newest evidence for real; returns
    those files ``(name, bytes)`` oldest first, the templates of the generated history."""
    files = history_files()
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "history")
    commit = git(root, "rev-parse", "HEAD").strip()
    tree = {path: blob(data) for path, data in files.items()}
    store = root / ".tracker" / "evidence"

    def run(*cmd: str, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None) -> None:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if proc.returncode not in ok:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")

    run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", "tests/kern", "--tracker-record")
    run(*tracker, "verify", "--force", "0001", "0003", "--pytest-arg=-p", "--pytest-arg=no:cacheprovider", ok=(0, 1))
    # Plan 0002's phases with bench gates only: the planned gates of the others must stay never run.
    kern = [f"0002/P{k}" for k in range(1, KERN_BENCH + 1)]
    run(*tracker, "verify", "--force", *kern, "--pytest-arg=-p", "--pytest-arg=no:cacheprovider", ok=(0, 1))
    result = root.parent / "kern-result.json"
    result.write_bytes(_dump(bench_result(random.Random(0), datetime.now(UTC), commit, tree), sort=False))
    run(*tracker, "ingest", str(result))
    run(*tracker, "signoff", "0001/P6", "--gate", "3", "--by", "bench", "--why", "read them")
    run(*tracker, "signoff", "0003/P5", "--gate", "3", "--by", "bench", "--why", "cloned and ran it")
    time.sleep(1.1)  # the regression must be newer than the pass, to the second
    run(
        *tracker,
        "verify",
        "--force",
        "0001/P4",
        "--pytest-arg=-p",
        "--pytest-arg=no:cacheprovider",
        ok=(1,),
        env={"HISTORY_FAIL": "lib/m4/3"},
    )
    return [(path.name, path.read_bytes()) for path in sorted(store.glob("*.json"))]


def _retimed_run(doc: dict[str, Any], when: datetime, rng: random.Random) -> dict[str, Any]:
    """A test run like ``doc`` at an older time: other durations, sometimes one test failed, on an older version of
    its file (a failure on the tree of a newer pass stands until its gate alone passes: not the history it mimics)."""
    doc = json.loads(json.dumps(doc))
    doc["provenance"]["time"] = _time(when)
    doc["duration"] = round(rng.uniform(2, 30), 3)
    for rec in doc["tests"]:
        rec["duration"] = round(rng.uniform(0.0005, 0.05), 6)
    ran = [rec for rec in doc["tests"] if rec["outcome"] == "passed"]
    if ran and rng.random() < 0.2:
        rec = rng.choice(ran)
        rec.update(outcome="failed", reason="AssertionError: assert 'x' != 'x'")
        path = rec["nodeid"].split("::")[0]
        if path in doc.get("files", {}):
            doc["files"][path] = f"{rng.randrange(16**40):040x}"
        doc["exitstatus"] = 1
    return doc


def history_documents(
    templates: list[tuple[str, bytes]], count: int, commit: str, tree: dict[str, str]
) -> list[tuple[str, bytes]]:
    """``count`` generated evidence files, all older than the templates: test runs and sign-offs in
    their shapes, and every ``BENCH_EVERY``-th a benchmark result. Deterministic (seeded)."""
    rng = random.Random(1)
    parsed = [(name, json.loads(data)) for name, data in templates]
    runs = [doc for _, doc in parsed if doc.get("schema") == "tracker-test-run"]
    signoffs = [doc for _, doc in parsed if doc.get("schema") == "tracker-signoff"]
    newest_real = min(datetime.fromisoformat(name[:15] + "+00:00") for name, _ in templates)
    out: list[tuple[str, bytes]] = []
    for i in range(count):
        when = newest_real - timedelta(days=1, minutes=37 * (i + 1), microseconds=rng.randrange(10**6))
        if i % BENCH_EVERY == BENCH_EVERY - 1:
            kind, data = "bench", _dump(bench_result(rng, when, commit, tree), sort=False)
        elif i % 20 == 7:
            doc = dict(signoffs[i % len(signoffs)], time=_time(when))
            kind, data = "signoff", _dump(doc)
        else:
            doc = _retimed_run(runs[i % len(runs)], when, rng)
            kind, data = ("verify" if doc["gates"] else "pytest"), _dump(doc)
        out.append((f"{_stamp(when)}-bench-{kind}-{rng.randrange(16**6):06x}.json", data))
    return out


def build_history(
    base: Path, templates: list[tuple[str, bytes]], sizes: Sequence[int], tracker: list[str]
) -> dict[int, Path]:
    """One copy of the history repository per size: the real files plus generated older ones,
    ``size`` files in all; the plans' status regions brought up to date (``tracker update``), all committed."""
    commit = git(base, "rev-parse", "HEAD").strip()
    tree = {line.split(None, 3)[3]: line.split()[1] for line in git(base, "ls-files", "-s").splitlines()}
    generated = history_documents(templates, max(sizes) - len(templates), commit, tree)
    repos: dict[int, Path] = {}
    for size in sizes:
        if size < len(templates):
            raise SystemExit(
                f"--history: {size} is fewer than the {len(templates)} real evidence files every size holds"
            )
        root = base.parent / f"history-{size}"
        shutil.copytree(base, root, ignore=shutil.ignore_patterns("cache"))
        store = root / ".tracker" / "evidence"
        for name, data in generated[: size - len(templates)]:
            (store / name).write_bytes(data)
        subprocess.run([*tracker, "update"], cwd=root, capture_output=True, check=True)
        git(root, "add", "-A")  # evidence and plans are committed (README's loop): status reads a clean tree
        git(root, "commit", "-qm", f"{size} evidence files")
        repos[size] = root
    return repos


def build_gates(root: Path, gates: int) -> None:
    """One plan, one phase of ``gates`` test gates (one test each, all in one file), committed; no evidence."""
    body = "".join(f'[[gate]]\ntest = "tests/test_many.py::test_{i}"\n' for i in range(gates))
    write_files(
        root,
        {
            "plans/0001-gates.md": (
                f'# Gates\n\n```plan\nid = "0001"\ntitle = "Many gates"\n```\n\n'
                f'```phase\nid = "P1"\ntitle = "{gates} gates"\npaths = ["tests/**"]\n\n{body}```\n'
            ).encode(),
            "tests/test_many.py": "".join(f"def test_{i}():\n    pass\n" for i in range(gates)).encode(),
            ".gitignore": b".tracker/cache/\n.tracker/lock\n",
        },
    )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"{gates} gates")


# --- Timing -------------------------------------------------------------------------------------------


class Job(NamedTuple):
    """One command timed every round: its name, command line, directory, accepted exit codes, and whether it runs
    ``--repeat`` times a round (the fastest counting): every job a ratio metric compares, so both sides alike."""

    name: str
    cmd: list[str]
    cwd: Path
    ok: tuple[int, ...] = (0,)
    best_of: bool = True
    cold: bool = False  # the parse and status caches (.tracker/cache) removed before every run, untimed


def wall(job: Job) -> tuple[float, bytes]:
    """Wall seconds of one run of ``job`` and its stdout; a wrong exit code stops the benchmark."""
    if job.cold:
        shutil.rmtree(job.cwd / ".tracker" / "cache", ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run(job.cmd, cwd=job.cwd, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in job.ok:
        raise SystemExit(f"{' '.join(job.cmd)} (in {job.cwd}) exited {proc.returncode}: {proc.stderr.decode()[-800:]}")
    return elapsed, proc.stdout


def rounds(jobs: list[Job], runs: int, repeat: int = 1) -> tuple[dict[str, list[float]], dict[str, bytes]]:
    """Every job in turn, ``runs`` rounds after one warm-up round; (seconds per job, last stdout per job).

    A job with ``best_of`` runs ``repeat`` times back to back in each round and the round's sample is the fastest:
    on a shared 2-core machine one run of a 50 ms process varies by +-40% (ratios of single runs spread 0.75-1.76
    within one run of this script), while the fastest of three measures the work. The jobs a ratio compares all
    have ``best_of``, so both sides of every ratio are measured alike."""
    times: dict[str, list[float]] = {job.name: [] for job in jobs}
    outputs: dict[str, bytes] = {}
    for i in range(runs + 1):
        for job in jobs:
            elapsed, outputs[job.name] = wall(job)
            if not i:
                continue
            for _ in range(repeat - 1 if job.best_of else 0):
                again, outputs[job.name] = wall(job)
                elapsed = min(elapsed, again)
            times[job.name].append(elapsed)
    return times, outputs


# --- The result file ----------------------------------------------------------------------------------


def commit_state(root: Path, files: dict[str, str]) -> tuple[str | None, bool | None]:
    """(commit, dirty): dirty when a measured file differs from HEAD (or is not in it). TRACKER_COMMIT /
    TRACKER_DIRTY win when set, as in :func:`bench.results.commit_state`."""
    if os.environ.get("TRACKER_COMMIT") or not (root / ".git").exists():
        return bench_results.commit_state(root, files)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    tree = subprocess.run(
        ["git", "ls-tree", "-r", "HEAD", "--", "tracker", "bench"], cwd=root, capture_output=True, text=True
    )
    if head.returncode or tree.returncode:
        return None, None
    committed = {line.split("\t", 1)[1]: file_id(line.split()[2], line.split()[0]) for line in tree.stdout.splitlines()}
    return head.stdout.strip(), any(committed.get(path) != blob_id for path, blob_id in files.items())


def ms_case(metric: str, params: dict[str, Any], seconds: list[float], info: dict[str, Any]) -> dict[str, Any]:
    samples = [s * 1000 for s in seconds]
    return bench_results.case(metric, params, "ms", "lower", samples, summarize(samples), info)


def ratio_case(
    metric: str, params: dict[str, Any], top: list[float], bottom: list[float], info: dict[str, Any]
) -> dict[str, Any]:
    """Pairwise ratios: round i's ``top`` over round i's ``bottom``."""
    samples = [a / b for a, b in zip(top, bottom, strict=True)]
    return bench_results.case(metric, params, "x", "lower", samples, summarize(samples), info)


def write_result(
    cases: list[dict[str, Any]],
    out: Path,
    command: str,
    benchmark: str = "tracker_speed",
    measured: tuple[str, ...] = MEASURED,
) -> Path:
    """The result file ``<benchmark>-<UTC time>-<host>.json`` in ``out`` (atomic, :func:`bench.results.write`);
    its fingerprint covers the ``measured`` files (the tracker's code and the script)."""
    files = bench_results.measured_files(REPO, measured)
    commit, dirty = commit_state(REPO, files)
    now = bench_results.utc_now()
    prov = {
        "commit": commit,
        "dirty": dirty,
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "command": command,
        "fingerprint": bench_results.fingerprint(files, tuple(measured)),
    }
    return bench_results.write(bench_results.document(benchmark, prov, cases), out, now)


# --- Main ---------------------------------------------------------------------------------------------


CASE_GROUPS = ("status", "report", "detail", "gates")
DETAIL_PHASE = "0002/P7"  # a phase of our plans with a long history and many bench gates


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="3 rounds, history 10 and 1,000, 100 synthetic plans; no result file unless --out",
    )
    ap.add_argument("--plans", type=int, default=None, help="synthetic plans (default 1000; --quick 100)")
    ap.add_argument("--phases", type=int, default=10)
    ap.add_argument("--runs", type=int, default=None, help="timed rounds after the warm-up (default 7; --quick 3)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs a round of every command a ratio compares, the fastest counting (default 3; --quick 1)",
    )
    ap.add_argument(
        "--history", default=None, help="comma-separated evidence counts (default 10,100,1000; --quick 10,1000)"
    )
    ap.add_argument(
        "--out", type=Path, default=None, help="directory of the result file (default bench/results/; --quick: none)"
    )
    ap.add_argument(
        "--gates", default=None, help="comma-separated test gates per phase (default 1250,5000; --quick 500,2000)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories (their path is printed)")
    ap.add_argument(
        "--cases", default=",".join(CASE_GROUPS), help=f"groups to time, comma-separated: {', '.join(CASE_GROUPS)}"
    )
    args = ap.parse_args(argv)
    args.cases = [c for c in args.cases.split(",") if c]
    if not args.cases or any(c not in CASE_GROUPS for c in args.cases):
        ap.error(f"--cases: one or more of {', '.join(CASE_GROUPS)}")
    args.plans = args.plans if args.plans is not None else (100 if args.quick else 1000)
    args.runs = args.runs if args.runs is not None else (3 if args.quick else 7)
    args.repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    args.history = [int(x) for x in (args.history or ("10,1000" if args.quick else "10,100,1000")).split(",")]
    args.gates = sorted({int(x) for x in (args.gates or ("500,2000" if args.quick else "1250,5000")).split(",")})
    if args.out is None and not args.quick:
        args.out = REPO / "bench" / "results"
    if args.runs < 1 or args.repeat < 1 or not args.history or min(args.history) < 1 or min(args.gates) < 1:
        ap.error("--runs, --repeat, --history and --gates need positive numbers")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tracker = tracker_cmd()
    python = [sys.executable, "-c", "pass"]
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}, "
        f"tracker via {' '.join(tracker)}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tracker-speed-"))
    try:
        start = time.perf_counter()
        base = tmp / "history-base"
        base.mkdir()
        history: dict[int, Path] = {}
        templates: list[tuple[str, bytes]] = []
        if "status" in args.cases:
            templates = build_history_base(base, tracker)
            history = build_history(base, templates, sorted(set(args.history)), tracker)
        synthetic = tmp / "synthetic"
        synthetic.mkdir()
        build(synthetic, args.plans, args.phases)
        gated: dict[int, Path] = {}
        for count in args.gates if "gates" in args.cases else ():
            gated[count] = tmp / f"gates-{count}"
            gated[count].mkdir()
            build_gates(gated[count], count)
        print(
            f"built in {time.perf_counter() - start:.1f} s: history repo ({len(templates)} real evidence files) at "
            f"{', '.join(map(str, history)) or 'no'} files; synthetic {args.plans} plans x {args.phases} phases"
        )
        cold_start = time.perf_counter()
        subprocess.run([*tracker, "status"], cwd=synthetic, capture_output=True, check=True)
        cold = time.perf_counter() - cold_start
        subprocess.run([*tracker, "update"], cwd=synthetic, capture_output=True, check=True)
        jobs = [Job("python/own", python, REPO), Job("status/own", [*tracker, "status"], REPO)]
        if "status" in args.cases:
            jobs.append(Job("update/own", [*tracker, "update", "--check"], REPO, (0, 1)))
            for size, root in history.items():
                jobs += [
                    Job(f"python/{size}", python, root),
                    Job(f"status/{size}", [*tracker, "status"], root),
                    Job(f"update/{size}", [*tracker, "update", "--check"], root, (0, 1)),
                ]
            jobs.append(Job("update/synthetic", [*tracker, "update", "--check"], synthetic, best_of=False))
        jobs.append(Job("status/synthetic", [*tracker, "status"], synthetic, best_of=False))
        if "report" in args.cases:
            jobs += [
                Job("report/synthetic", [*tracker, "report"], synthetic, best_of=False),
                Job("report/own/md", [*tracker, "report"], REPO, (0, 2), best_of=False),
                Job("report/own/html", [*tracker, "report", "--format", "html"], REPO, (0, 2), best_of=False),
            ]
        if "detail" in args.cases:
            jobs += [
                Job("show/own", [*tracker, "show", DETAIL_PHASE], REPO, (0, 2)),
                Job("log/own", [*tracker, "log", DETAIL_PHASE], REPO, (0, 2)),
                Job("summary/own", [*tracker, "summary"], REPO),
            ]
        for count, root in gated.items():
            jobs.append(Job(f"status-cold/gates/{count}", [*tracker, "status"], root, cold=True))
        times, outputs = rounds(jobs, args.runs, args.repeat)
        if "status" in args.cases:
            shown = {outputs[f"status/{size}"] for size in history}
            if len(shown) != 1:
                raise SystemExit(
                    "the history repositories' status tables differ: the generated history changed a verdict"
                )
        cases = report(times, history, cold, args, {job.name: args.repeat if job.best_of else 1 for job in jobs})
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.out is not None:
        command = " ".join(["python", "bench/tracker/speed.py", *(sys.argv[1:] if argv is None else argv)])
        print(f"result file: {write_result(cases, args.out, command)}")
    return 0


def report(
    times: dict[str, list[float]],
    history: dict[int, Path],
    cold: float,
    args: argparse.Namespace,
    repeats: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Print the table and return the result file's cases; ``repeats``: runs a round of each job (info.repeat)."""
    base = {"cpus": os.cpu_count() or 0, "load1": round(os.getloadavg()[0], 2)}

    def info_of(*names: str) -> dict[str, Any]:
        """The cases' info: the machine, and the runs a round of the jobs measured (the same for both sides)."""
        counts = {(repeats or {}).get(name, 1) for name in names}
        return {**base, "repeat": counts.pop() if len(counts) == 1 else sorted(counts)}

    info = info_of("python/own")
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    all_python = [s for name, v in times.items() if name.startswith("python/") for s in v]
    print(f"median of {args.runs} rounds, ms; x = over the python -c pass run just before it (median of pairs)")
    print(f"{'python -c pass':<40} {statistics.median(all_python) * 1000:8.1f}")
    cases = [ms_case("python.pass_ms", {}, all_python, info)]

    def row(label: str, name: str, params: dict[str, Any], python: str | None) -> None:
        metric = "tracker.status" if name.startswith("status") else "tracker.update_check"
        cases.append(ms_case(f"{metric}_ms", params, times[name], info_of(name)))
        ratio = ""
        if python is not None and name.startswith("status"):
            cases.append(
                ratio_case("tracker.status_vs_python", params, times[name], times[python], info_of(name, python))
            )
            ratio = f"  {statistics.median(cases[-1]['samples']):5.1f}x"
        print(f"{label:<40} {med[name]:8.1f}{ratio}")

    row("status, own plans", "status/own", {"repo": "own"}, "python/own")
    if "update/own" in times:
        row("update --check, own plans", "update/own", {"repo": "own"}, "python/own")
    for size in history:
        row(f"status, history of {size}", f"status/{size}", {"repo": "history", "evidence": size}, f"python/{size}")
        row(
            f"update --check, history of {size}",
            f"update/{size}",
            {"repo": "history", "evidence": size},
            f"python/{size}",
        )
    low, high = min(history, default=0), max(history, default=0)
    if low != high:
        span = {"repo": "history", "evidence_from": low, "evidence_to": high}
        for what, metric in (
            ("status", "tracker.status_history_ratio"),
            ("update", "tracker.update_check_history_ratio"),
        ):
            top, bottom = f"{what}/{high}", f"{what}/{low}"
            cases.append(ratio_case(metric, span, times[top], times[bottom], info_of(top, bottom)))
            print(f"{what} at {high} / at {low} evidence files{'':<14} {statistics.median(cases[-1]['samples']):5.2f}x")
    synthetic = {"repo": "synthetic", "plans": args.plans, "phases": args.phases}
    row(f"status, {args.plans} plans x {args.phases} phases", "status/synthetic", synthetic, None)
    if "update/synthetic" in times:
        row(f"update --check, {args.plans} plans x {args.phases} phases", "update/synthetic", synthetic, None)
    cases.append(ms_case("tracker.status_cold_ms", synthetic, [cold], {**base, "repeat": 1}))
    print(f"{'status, synthetic, cold parse cache':<40} {cold * 1000:8.1f}")

    def timed(label: str, metric: str, name: str, params: dict[str, Any], over: str | None = None) -> None:
        cases.append(ms_case(metric, params, times[name], info_of(name)))
        ratio = ""
        if over is not None:
            vs = metric.removesuffix("_ms") + "_vs_status"
            cases.append(ratio_case(vs, params, times[name], times[over], info_of(name, over)))
            ratio = f"  {statistics.median(cases[-1]['samples']):5.2f}x status"
        print(f"{label:<40} {med[name]:8.1f}{ratio}")

    if "report/synthetic" in times:
        timed(f"report, {args.plans} plans x {args.phases} phases", "tracker.report_ms", "report/synthetic", synthetic)
        timed("report, own plans (Markdown)", "tracker.report_ms", "report/own/md", {"repo": "own", "format": "md"})
        timed(
            "report, own plans (HTML, charts)",
            "tracker.report_ms",
            "report/own/html",
            {"repo": "own", "format": "html"},
        )
    gated = sorted(int(name.rsplit("/", 1)[1]) for name in times if name.startswith("status-cold/gates/"))
    for count in gated:
        timed(
            f"status, {count} gates in a phase, cold",
            "tracker.status_cold_ms",
            f"status-cold/gates/{count}",
            {"repo": "gates", "gates": count},
        )
    if len(gated) > 1:
        top, bottom = f"status-cold/gates/{gated[-1]}", f"status-cold/gates/{gated[0]}"
        span = {"repo": "gates", "gates_from": gated[0], "gates_to": gated[-1]}
        metric = "tracker.status_cold_gates_ratio"
        cases.append(ratio_case(metric, span, times[top], times[bottom], info_of(top, bottom)))
        ratio = statistics.median(cases[-1]["samples"])
        print(f"status at {gated[-1]} / at {gated[0]} gates in a phase, cold{'':<5} {ratio:5.2f}x")
    if "show/own" in times:
        timed(f"show {DETAIL_PHASE}, own plans", "tracker.show_ms", "show/own", {"repo": "own"}, "status/own")
        timed(f"log {DETAIL_PHASE}, own plans", "tracker.log_ms", "log/own", {"repo": "own"}, "status/own")
        timed("summary, own plans", "tracker.summary_ms", "summary/own", {"repo": "own"}, "status/own")
    return cases


if __name__ == "__main__":
    sys.exit(main())
