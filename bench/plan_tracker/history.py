"""speed.py's ``history`` repository: the same plans while its evidence store holds 10, 100 or 1,000 files.

The newest files are real: ``tracker verify`` and ``pytest --tracker-record`` runs, ``tracker signoff`` and an ingested
benchmark result (one phase is regressed, some are planned, bench gates are met), recorded by
:func:`build_history_base`. The older ones are generated in the same shapes (:func:`history_documents`), one in 16 a
~580 KB benchmark result copy (this repository's store holds such copies), test runs with some failures; they are
older than every real file, so ``status`` prints the same table at every size (speed.py checks it).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import results as bench_results
from bench.plan_tracker.repos import blob, commit_files, git
from tracker.core.stats import case_stats

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
            entry = bench_results.case(
                "kern.time_us", {"impl": impl, "case": case, "batch": 1}, "us", "lower", samples, {}, {"seeds": seeds}
            )
            # 17 digits a sample, as the committed history this models was written before bench/results.py kept 9:
            # the speed benchmark's input stays the same bytes, so its figures stay comparable run to run.
            cases.append({**entry, "samples": samples, "stats": case_stats(samples)})
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
    commit_files(root, files, "history")
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
