"""The built wheel ships the templates and the entry points (what `pip install .` installs)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _can_build_wheels() -> bool:
    """Can this Python's setuptools build a wheel without build isolation? 70.1 and later can by itself, older
    ones only with the ``wheel`` package (a fresh Python 3.11 venv has setuptools 65 and no wheel)."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    from importlib.metadata import version

    parts = [int(x) if x.isdigit() else 0 for x in version("setuptools").split(".")[:2]]
    return parts >= [70, 1]


@pytest.mark.skipif(
    not _can_build_wheels(),
    reason="no setuptools >= 70.1 (or older setuptools with wheel) to build a wheel: pip install '.[test]' brings one",
)
def test_wheel_ships_templates_and_entry_points(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "tracker/templates/plan.md" in names
        assert zf.read("tracker/templates/plan.md") == (REPO / "templates/plan.md").read_bytes()
        assert {
            "tracker/cli/declared.py",
            "tracker/plugin/recorder.py",
            "tracker/pytest_plugin.py",
            "tracker/commands/status.py",
        } <= names
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "tracker = tracker.entry:main" in entry_points
    assert "[pytest11]\ntracker.pytest_plugin = tracker.pytest_plugin" in entry_points


def _build_wheel(tmp_path: Path) -> Path:
    """``pip wheel`` of a copy of this checkout (building in place would race with other runs)."""
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".tracker", "node_modules"
        ),
    )
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(tmp_path / "dist"),
    ]
    proc = subprocess.run([*cmd, str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("plan_tracker-*.whl")
    return wheel


def _installed_venv(tmp_path: Path, wheel: Path) -> Path:
    """A new virtual environment with ``wheel`` installed by pip, not editable (what ``pip install .`` makes), and
    every other package of this one linked in (no network): returns its python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    ours = Path(pytest.__file__).resolve().parents[1]  # this environment's site-packages
    for entry in ours.iterdir():
        if not entry.name.startswith(("plan_tracker", "__editable__", "tracker")):
            (site / entry.name).symlink_to(entry)
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)]
    # Without PYTHONPATH: under `tracker verify` it names this checkout, whose plan_tracker.egg-info (an editable
    # install's) made pip answer "already satisfied" and install nothing.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return python


PLAN = '# Demo\n\n```plan\nid = "0001"\ntitle = "Demo"\n```\n\n```phase\nid = "P1"\ntitle = "One"\n[[gate]]\ntest = "tests/test_a.py"\n```\n'


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a virtual environment with this checkout installed as ``pip install .`` installs it."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools not installed")
    tmp = tmp_path_factory.mktemp("installed")
    return _installed_venv(tmp, _build_wheel(tmp))


@pytest.mark.parametrize("spawn", ["0", "1"], ids=["forked", "spawned"])
def test_verify_of_a_plain_install_is_warning_free_under_filterwarnings_error(
    installed: Path, tmp_path: Path, spawn: str
) -> None:
    """Issue 24: with ``pip install .`` pytest marks the package ``tracker`` (the plugin's distribution) for assertion
    rewriting; verify's forked pytest had imported it already, so every run warned "Module already imported so
    cannot be rewritten: tracker", and under ``filterwarnings = ["error"]`` the run ended with exit 6 and no
    evidence. ``python -m pytest`` passes there, so must verify."""
    from tracker_testutil import git, make_files

    python = installed
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_files(
        root,
        {
            "plans/0001-demo.md": PLAN,
            "tests/test_a.py": "def test_a():\n    assert 1 + 1 == 2\n",
            "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRACKER_PYTEST_SPAWN")}
    env["TRACKER_PYTEST_SPAWN"] = spawn
    where = subprocess.run(
        [python, "-c", "import tracker; print(tracker.__file__)"], cwd=root, env=env, capture_output=True, text=True
    )
    assert where.stdout.startswith(str(python.parents[1])), where  # the installed copy, not this checkout
    plain = subprocess.run([python, "-m", "pytest", "-q"], cwd=root, env=env, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stdout[-2000:]
    r = subprocess.run([python, "-m", "tracker", "verify"], cwd=root, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "warning" not in (r.stdout + r.stderr).lower()
    assert "met   0001/P1#1 tests/test_a.py: 1 passed" in r.stdout
