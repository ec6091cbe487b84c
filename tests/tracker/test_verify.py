"""``tracker verify``'s output and what it writes (tracker/commands/verify.py, verify_bench.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracker_testutil import phase, plan_text

IGNORE = ".tracker/cache/\n.tracker/lock\n__pycache__/\n"
GATE_LINE = ("met  ", "UNMET", "STALE")


def mixed_repo(repo: Callable[..., Path], run: str) -> Path:
    """One phase with a test gate and a bench gate whose ``run`` is ``run`` (make_result.py writes a result
    meeting it)."""
    from resultfiles import case, result

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0] * 5)], files={"kernel/k.cu": b"// k\n"})
    writer = (
        "import json, pathlib\n"
        "out = pathlib.Path('bench/results'); out.mkdir(parents=True, exist_ok=True)\n"
        f"(out / f'r{{len(list(out.iterdir()))}}.json').write_text({json.dumps(json.dumps(doc))})\n"
    )
    bench = f'bench = "m.time_us"\nwhere = {{ impl = "cuda" }}\nat_most = 200.0\nmin_samples = 3\nrun = "{run}"'
    plan = plan_text(phases=phase("P1", 'test = "tests/test_a.py"', bench))
    return repo(
        {
            "plans/0001-demo.md": plan,
            "tests/test_a.py": "def test_a():\n    pass\n",
            "make_result.py": writer,
            "kernel/k.cu": "// k\n",
            ".gitignore": IGNORE,
        }
    )


def gate_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:5] in GATE_LINE]


def test_verify_bench_says_each_gate_and_the_evidence_once(repo: Callable[..., Path], cli: Callable[..., Any]) -> None:
    """Issue 24: the bench commands' runner printed each bench gate's verdict, then verify printed every gate's
    again; the plugin printed the evidence file (absolute) inside pytest's output, then verify (relative)."""
    root = mixed_repo(repo, f"{sys.executable} make_result.py")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert [line.split(":")[0] for line in gate_lines(r.out)] == [
        "met   0001/P1#1 tests/test_a.py",
        "met   0001/P1#2 m.time_us",
    ]
    [evidence] = (root / ".tracker/evidence").glob("*-verify-*.json")
    assert r.out.count(evidence.name) == 1, r.out
    assert f"tracker: evidence .tracker/evidence/{evidence.name}\n" in r.out


def test_a_failed_bench_command_is_said_once_and_its_gate_unmet_once(
    repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = mixed_repo(repo, f'{sys.executable} -c \\"import sys; sys.exit(3)\\"')
    r = cli(root, "verify", "--bench")
    assert r.code == 1, r.out + r.err
    why = f'`{sys.executable} -c "import sys; sys.exit(3)"` exited with 3: its results are not used'
    assert gate_lines(r.out) == ["met   0001/P1#1 tests/test_a.py: 1 passed", f"UNMET 0001/P1#2 m.time_us: {why}"]
    assert r.out.count(why) == 2  # the progress line as the command ends, and the gate's verdict


def test_verify_in_a_repository_holding_the_tracker_package_is_warning_free(repo: Callable[..., Path]) -> None:
    """Issue 24, as in the tracker's own repository: pytest 9.2 marks the package of an editable install's plugin
    for assertion rewriting when it finds it on sys.path (the repository root, in verify's forked pytest, which has
    imported the tracker): every run warned "Module already imported so cannot be rewritten: tracker", an error
    under ``filterwarnings = ["error"]`` (exit 6, nothing recorded). The non-editable install's case is
    test_packaging's. A new process: in this one pytest has rewritten the tracker, so no warning would come."""
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py"')),
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
            "tracker/__init__.py": '"""A package named as the tracker, as in its own repository."""\n',
            "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
            ".gitignore": IGNORE,
        }
    )
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_PYTEST_SPAWN"}  # the forked pytest
    cmd = [
        sys.executable,
        "-m",
        "tracker",
        "verify",
        "--root",
        str(root),
    ]  # run from elsewhere: root/tracker/ is not it
    r = subprocess.run(cmd, cwd=root.parent, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning" not in (r.stdout + r.stderr).lower()
    assert "met   0001/P1#1 tests/test_a.py: 1 passed\n" in r.stdout
