"""verify's pytest session, forked or in a new interpreter (tracker.commands.pytest_run): the tests see what
``python -m pytest`` in the repository would give them, whichever way it runs, and a crash stays the child's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text

from tracker.commands.forkable import SPAWN_ENV

MODES = ["fork", "spawn"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fork" and not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    monkeypatch.setenv(SPAWN_ENV, "1" if request.param == "spawn" else "0")
    return str(request.param)


def one_gate(repo, test: str, files: dict[str, str]) -> Path:
    return repo({"plans/0001-demo.md": plan_text(phases=phase("P1", f'test = "{test}"')), **files})


def test_the_tests_run_in_the_repository_with_its_root_importable(repo, cli, mode: str) -> None:
    # `python -m pytest` puts the working directory first on sys.path: a helper module at the root imports
    test = (
        "import os, sys\nimport helper\n\n"
        "def test_a():\n"
        "    assert helper.VALUE == 7\n"
        "    assert os.getcwd() in sys.path\n"
        "    assert os.path.basename(sys.argv[0]) in ('__main__.py', 'pytest')\n"
    )
    root = one_gate(repo, "tests/test_a.py", {"helper.py": "VALUE = 7\n", "tests/test_a.py": test})
    r = cli(root, "verify")
    assert r.code == 0, (r.out, r.err)
    assert "met   0001/P1#1" in r.out


def test_the_tests_exit_handlers_run_and_the_parents_do_not(repo, cli, mode: str, tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    test = f"import atexit\n\ndef test_a():\n    atexit.register(lambda: open({str(marker)!r}, 'a').write('x'))\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    # a parent handler that would write the same file twice if the child ran it too
    import atexit

    def parent_handler() -> None:  # registered in this (the parent) process; unregistered below
        marker.write_text("parent")

    atexit.register(parent_handler)
    try:
        r = cli(root, "verify", "--pytest-arg=-q")  # with an argument: verify's temporary files must outlive the child
    finally:
        atexit.unregister(parent_handler)
    assert r.code == 0, (r.out, r.err)
    assert marker.read_text() == "x"


def test_a_test_that_kills_its_process_is_a_crash_verify_reports(repo, cli, mode: str) -> None:
    test = "import os, signal\n\ndef test_a():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    r = cli(root, "verify")
    assert r.code == 6 and "it crashed while running tests/test_a.py::test_a" in r.err, (r.out, r.err)
    assert "0/1" in cli(root, "status").out


def test_a_conftest_that_exits_is_refused_not_passed(repo, cli, mode: str) -> None:
    files = {"conftest.py": "import sys\nsys.exit(3)\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    root = one_gate(repo, "tests/test_a.py", files)
    r = cli(root, "verify")
    assert r.code in (3, 6), (r.out, r.err)
    assert "Traceback" not in r.err or not any(m in r.err for m in ("pytest_run", "pytest_child", "standby"))
    assert "0/1" in cli(root, "status").out


def test_stdout_of_the_tests_stays_off_the_json(repo, cli, mode: str) -> None:
    # What pytest itself writes to its stdout (here a conftest's line in the terminal summary; -s, which let a test
    # print there, is refused now: it may change outcomes) goes to stderr, never into the JSON.
    conftest = "def pytest_terminal_summary(terminalreporter):\n    terminalreporter.write_line('noise')\n"
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n", "conftest.py": conftest})
    r = cli(root, "verify", "--json")
    assert r.code == 0, (r.out, r.err)
    assert json.loads(r.out)["exit"] == 0
    assert "noise" in r.err


def test_a_module_the_caller_imported_under_the_same_name_is_not_the_tests(
    repo, cli, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process embedding the tracker (this test suite) imported its own `test_clash` and `helper`; the repository's
    # files of those names are what a fresh `python -m pytest` imports (else pytest: "import file mismatch").
    import importlib.util
    import sys

    theirs = tmp_path / "elsewhere"
    theirs.mkdir()
    for name in ("test_clash", "helper"):
        (theirs / f"{name}.py").write_text("VALUE = 'the caller'\n")
        spec = importlib.util.spec_from_file_location(name, theirs / f"{name}.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        monkeypatch.setitem(sys.modules, name, module)
    test = "import helper\n\ndef test_a():\n    assert helper.VALUE == 'the repository'\n"
    root = one_gate(
        repo, "tests/test_clash.py", {"helper.py": "VALUE = 'the repository'\n", "tests/test_clash.py": test}
    )
    r = cli(root, "verify")
    assert r.code == 0, (r.out, r.err)
    assert "met   0001/P1#1" in r.out
    assert sys.modules["test_clash"].VALUE == "the caller"  # the caller's own stay its own


class _BrokenNamespace:
    """A module whose ``__path__`` raises, as a namespace package's does once its parent left ``sys.modules``."""

    @property
    def __path__(self) -> list[str]:
        raise KeyError("tests")


def test_a_module_whose_path_cannot_be_read_is_left_alone(
    repo, cli, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In verify's own session a test's namespace package lost its parent: forgetting the caller's modules crashed
    # the forked child (KeyError from _NamespacePath), and the nested verify said "no evidence file".
    import sys

    monkeypatch.setitem(sys.modules, "a_broken_namespace", _BrokenNamespace())
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    r = cli(root, "verify")
    assert r.code == 0, (r.out, r.err)


def test_the_tests_see_the_sys_path_a_new_pytest_would_give_them(
    repo, cli, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's sys.path is a new ``python -m pytest``'s in the session's environment, not the forking process's:
    verify's environment puts the tracker's checkout on ``PYTHONPATH`` (run from a source tree) and the user's own
    ``PYTHONPATH`` entries stand in their order, so a module name found in two of them is the one pytest would import."""
    import subprocess
    import sys

    from tracker.commands.common import pytest_env

    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "only_here.py").write_text("VALUE = 3\n")
    out = tmp_path / "path.json"
    test = (
        "import json, os, sys\nimport only_here\n\n"
        "def test_a():\n"
        f"    open({str(out)!r}, 'w').write(json.dumps(sys.path))\n"
        "    assert only_here.VALUE == 3\n"
    )
    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": test})
    # set here, after this process started: its own sys.path lacks it, as the forking process's may
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(x for x in (str(extra), os.environ.get("PYTHONPATH", "")) if x))
    r = cli(root, "verify", "--force")
    assert r.code == 0, (r.out, r.err)
    seen = json.loads(out.read_text())
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_a.py"],
                           cwd=root, env=pytest_env(root), capture_output=True, text=True)  # fmt: skip
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert seen == json.loads(out.read_text())


def test_the_probe_of_a_new_pytest_is_kept_for_the_last_few_environments(repo) -> None:
    """``tracker`` and ``python -m tracker`` (another ``sys.path[0]``) or two environments in turn each find their
    probe kept, not each other's replaced; a cache file of another shape is read as nothing kept (probed again)."""
    from tracker.base.cache import Cache
    from tracker.commands.fresh_modules import FRESH, FRESH_KEPT, FRESH_SLOTS, fresh_modules

    root = one_gate(repo, "tests/test_a.py", {"tests/test_a.py": "def test_a():\n    pass\n"})
    envs = [{**os.environ, "PYTHONTRACKERPROBE": str(i)} for i in range(FRESH_KEPT + 1)]
    for env in envs:
        assert fresh_modules(root, env) is not None
    kept = Cache(root).read(FRESH, FRESH_SLOTS)
    assert isinstance(kept, dict) and len(kept) == FRESH_KEPT  # the oldest went
    first = fresh_modules(root, envs[1])
    assert first is not None and Cache(root).read(FRESH, FRESH_SLOTS) == kept  # a kept one: no probe, nothing written
    for bad in ([1, 2], {"k": "v"}, {"k": {"modules": "x"}}, "text"):
        cache = Cache(root)
        cache.put(FRESH, FRESH_SLOTS, bad)
        cache.write()
        assert fresh_modules(root, envs[0]) == fresh_modules(root, envs[0]) is not None


STD_COPY = (  # a repository module standing in for a standard one: the standard module's names, and one change
    "import importlib.util as _u, os as _os, sysconfig as _sc\n"
    "_s = _u.spec_from_file_location('_std_{name}', _os.path.join(_sc.get_paths()['stdlib'], '{name}.py'))\n"
    "_m = _u.module_from_spec(_s); _s.loader.exec_module(_m)\n"
    "globals().update({{k: v for k, v in vars(_m).items() if not k.startswith('__')}})\n"
)


def _tracker(root: Path, *args: str) -> tuple[int, str]:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in (SPAWN_ENV, "COLUMNS")}
    proc = subprocess.run([sys.executable, "-m", "tracker", *args], cwd=root, env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_probe_a_repository_module_answered_is_never_kept(repo) -> None:
    """adversarial, F1: the probe of a new pytest ran in the repository, where its own ``textwrap.py`` (importing
    pydantic.json_schema) answered for the standard one; the list it gave was kept, and every later verify's child
    kept the tracker's pydantic.json_schema for a test that forgot to import it: met, where pytest fails it. A probe
    that loaded anything from the repository now counts for nothing: no fork, nothing kept."""
    import subprocess
    import sys

    test = "import pydantic\n\ndef test_b():  # forgot: import pydantic.json_schema\n    assert pydantic.json_schema\n"
    root = one_gate(repo, "tests/test_b.py", {"tests/test_b.py": test})
    (root / "textwrap.py").write_text(STD_COPY.format(name="textwrap") + "import pydantic.json_schema\n")
    _tracker(root, "verify")
    (root / "textwrap.py").unlink()
    plan = root / "plans/0001-demo.md"
    plan.write_text(plan.read_text().replace("Phase P1", "Phase P1 renamed"))  # verify parses the plans again
    subprocess.run(["git", "commit", "-qam", "retitle"], cwd=root, check=True, capture_output=True)
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_b.py"],
                           cwd=root, capture_output=True, text=True)  # fmt: skip
    assert plain.returncode == 1, plain.stdout
    code, out = _tracker(root, "verify", "--force")
    assert code != 0 and "met   0001/P1#1" not in out, out
    assert "0/1" in _tracker(root, "status")[1]


def test_a_module_a_new_pytest_imports_is_shadow_checked_for_every_session(repo) -> None:
    """adversarial, F3: with a root module pytest imports and the tracker process had not (``shlex.py``, ``bdb.py``),
    the first session's fork was refused, but the fork for a session without a standby child checked only this
    process's modules (the recorder caught a child running the standard one at the end: a wasted run, no false
    pass). Every fork now checks a new pytest's names too: with the probe kept from before the module came, the
    session runs in a new interpreter and the test fails as under pytest."""
    test = "import bdb\n\ndef test_q():\n    assert bdb.Breakpoint.next == 1\n"
    broken = STD_COPY.format(name="bdb") + "Breakpoint.next = 2\n"
    root = one_gate(repo, "tests/test_q.py", {"tests/test_q.py": test})
    assert _tracker(root, "verify")[0] == 0  # the probe of a new pytest made here and kept, before bdb.py came
    repo({"bdb.py": broken})
    code, out = _tracker(root, "verify", "--force")
    assert code == 1 and "tests/test_q.py" in out and "1 failed" in out, out
    assert "imported from copies that differ" not in out, out  # a new interpreter ran it: nothing to catch at the end


def _git(root: Path, *args: str) -> str:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def _plain(root: Path, test: str) -> int:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", test], cwd=root,
                          capture_output=True).returncode  # fmt: skip


def test_a_folder_missing_when_verify_started_is_looked_in_by_every_session(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """round 25, F1: a PYTHONPATH folder missing when verify started was "no such folder" in its import system's
    cache; a session forked after an earlier session (or a bench command) made it never looked there, and imported
    the next folder's module, where pytest imports the new one."""
    fallback = tmp_path / "fallback"
    fallback.mkdir()
    (fallback / "mod.py").write_text("VALUE = 1\n")
    made = tmp_path / "gen"  # outside the repository (a folder of it on PYTHONPATH gets no fork at all)
    gen = f"import os\n\ndef test_gen():\n    os.makedirs({str(made)!r})\n    open({str(made / 'mod.py')!r}, 'w').write('VALUE = 2')\n"
    test = "import mod\n\ndef test_v():\n    assert mod.VALUE == 1, mod.__file__\n"
    gates = phase("P1", 'test = "tests/test_gen.py"\noptions = ["--import-mode=prepend"]', 'test = "tests/test_v.py"')
    root = repo({"plans/0001-demo.md": plan_text(phases=gates), "tests/test_gen.py": gen, "tests/test_v.py": test})
    monkeypatch.setenv("PYTHONPATH", f"{made}{os.pathsep}{fallback}")
    code, out = _tracker(root, "verify")
    assert _plain(root, "tests/test_v.py") == 1
    assert code == 1 and "UNMET 0001/P1#2" in out, out


def test_a_bench_command_that_changes_what_a_new_interpreter_starts_with_ends_the_standby_child(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """round 25, F2: the standby child was forked before verify --bench ran its commands; one wrote a sitecustomize.py
    (as ``pip install -e .`` writes a .pth) that a new pytest runs first; the child, started before, never did."""
    site, old = tmp_path / "site", tmp_path / "old"
    site.mkdir()
    old.mkdir()
    (old / "mod.py").write_text("VALUE = 1\n")
    custom = tmp_path / "custom.py"
    custom.write_text(f"import sys\nsys.path.insert(1, {str(tmp_path / 'new')!r})\n")
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "mod.py").write_text("VALUE = 2\n")
    bench = f'bench = "m.x"\nat_most = 1.0\nrun = "cp {custom} {site / "sitecustomize.py"}"'
    plans = plan_text(phases=phase("P1", 'test = "tests/test_v.py"') + phase("P2", bench))
    test = "import mod\n\ndef test_v():\n    assert mod.VALUE == 1, mod.__file__\n"
    root = repo({"plans/0001-demo.md": plans, "tests/test_v.py": test})
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{old}")
    _, out = _tracker(root, "verify", "--bench")
    assert (site / "sitecustomize.py").is_file(), out
    assert _plain(root, "tests/test_v.py") == 1
    assert "UNMET 0001/P1#1" in out and "met   0001/P1#1" not in out, out


def test_start_up_code_reading_any_variable_gets_its_own_probe(
    repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """round 25, F3: a sitecustomize that imports pydantic.json_schema only with WITH_SCHEMA set; the probe made with
    it was kept under a key of the PYTHON* variables alone, and a later verify without it kept the parent's
    pydantic.json_schema for a test that forgot to import it."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('WITH_SCHEMA'):\n    import pydantic.json_schema\n"
    )
    test = "import pydantic\n\ndef test_b():  # forgot: import pydantic.json_schema\n    assert pydantic.json_schema\n"
    root = one_gate(repo, "tests/test_b.py", {"tests/test_b.py": test})
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("WITH_SCHEMA", "1")
    assert _tracker(root, "verify")[0] == 0
    monkeypatch.delenv("WITH_SCHEMA")
    plan = root / "plans/0001-demo.md"
    plan.write_text(plan.read_text().replace("Phase P1", "Phase P1 renamed"))  # verify parses the plans again
    _git(root, "commit", "-qam", "retitle")
    assert _plain(root, "tests/test_b.py") == 1
    code, out = _tracker(root, "verify", "--force")
    assert code == 1 and "UNMET 0001/P1#1" in out, out


def test_a_repository_module_that_fakes_its_file_cannot_poison_the_probe(repo) -> None:
    """round 25, F4: the root textwrap.py of round 24's F1 also set ``__file__`` to the standard library's: the
    probe's check of where modules came from passed it. The probe now runs outside the repository (no folder of it
    first on sys.path), so it never loads that module at all."""
    import subprocess

    test = "import pydantic\n\ndef test_b():  # forgot: import pydantic.json_schema\n    assert pydantic.json_schema\n"
    root = one_gate(repo, "tests/test_b.py", {"tests/test_b.py": test})
    (root / "textwrap.py").write_text(
        STD_COPY.format(name="textwrap") + "import pydantic.json_schema\n__file__ = _m.__file__\n"
    )
    _tracker(root, "verify")
    (root / "textwrap.py").unlink()
    plan = root / "plans/0001-demo.md"
    plan.write_text(plan.read_text().replace("Phase P1", "Phase P1 renamed"))
    subprocess.run(["git", "commit", "-qam", "retitle"], cwd=root, check=True, capture_output=True)
    assert _plain(root, "tests/test_b.py") == 1
    code, out = _tracker(root, "verify", "--force")
    assert code == 1 and "UNMET 0001/P1#1" in out, out


def test_no_child_is_forked_for_a_repository_that_holds_the_tracker_itself() -> None:
    """round 25, F5: verifying a checkout of the tracker, the child kept every tracker module verify had imported, for
    a test of the tracker that forgot to import one (and the in-memory code, not the tree's). Such a repository's
    sessions run in a new interpreter."""
    import tracker
    from tracker.commands.common import pytest_env
    from tracker.commands.forkable import _forkable

    checkout = Path(tracker.__file__).resolve().parents[1]
    assert _forkable(checkout, pytest_env(checkout)) is None


def test_the_tracker_checkout_goes_on_the_sessions_path_only_when_it_is_how_the_tracker_was_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """round 25, F9: the checkout went on every session's PYTHONPATH when it holds a pyproject.toml, an editable
    install too, so tests under verify imported its ``bench`` and ``kernel`` packages, which pytest cannot."""
    import sys

    import tracker
    from tracker.commands.common import pytest_env

    checkout = Path(tracker.__file__).resolve().parents[1]
    # A session verify started from the checkout (`python -m tracker verify` there) inherits it on PYTHONPATH.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    kept = [p for p in sys.path if Path(p or ".").resolve() != checkout]
    monkeypatch.setattr(sys, "path", kept)
    assert str(checkout) not in pytest_env(Path("/")).get("PYTHONPATH", "").split(os.pathsep)
    monkeypatch.setattr(sys, "path", [str(checkout), *kept])
    assert pytest_env(Path("/"))["PYTHONPATH"].split(os.pathsep)[0] == str(checkout)


def test_the_tracker_plugin_imported_before_the_fork_is_imported_again_by_the_session(repo) -> None:
    """A process embedding verify that had imported the tracker's plugin itself (the tracker's own suite run from
    pytest_boot, a test): the child kept that module, and its pytest, told ``-p tracker.pytest_plugin``, warned it
    cannot rewrite it, an error under ``filterwarnings = error``: the session crashed (exit 6) instead of failing
    the test that warns."""
    import subprocess
    import sys

    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
        "tests/test_w.py": "import warnings\n\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n",
    }
    root = one_gate(repo, "tests/test_w.py", files)
    code = (
        "import sys, tracker.pytest_plugin\nfrom tracker.cli import main\n"
        "try:\n    main(['verify'])\nexcept SystemExit as exc:\n    sys.exit(exc.code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != SPAWN_ENV}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "DeprecationWarning: old" in proc.stdout, proc.stdout + proc.stderr


CRASH_PLAN = """# Demo

```plan
id = "0001"
title = "Demo"
```

```phase
id = "P1"
title = "Crash"

[[gate]]
test = "tests/test_c.py"
```
"""


def _git_log_shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that logs its arguments, then runs the real git."""
    import shutil

    shim, log = tmp_path / "bin", tmp_path / "git.log"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


_TEXTWRAP_BROKEN = (
    "import importlib.util, os, sysconfig\n"
    "_s = importlib.util.spec_from_file_location('_t', os.path.join(sysconfig.get_paths()['stdlib'], 'textwrap.py'))\n"
    "_m = importlib.util.module_from_spec(_s)\n_s.loader.exec_module(_m)\n"
    "globals().update({k: v for k, v in vars(_m).items() if not k.startswith('__')})\n"
    "def shorten(text, width, **kw):\n    return 'BROKEN'\n"
)


_TEXTWRAP_TEST = (
    "import textwrap\n\n\ndef test_shorten():\n"
    "    assert textwrap.shorten('hello world foo', width=11) == 'hello [...]'\n"
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_session_takes_the_tree_its_parent_read_just_before(
    repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify reads the tree once before it forks, and its child's recorder takes that reading as its first (what it
    would read itself before any conftest.py): git reads the tree three times a verify (before, the recorder's end,
    status after), not four, and lists the index once (it did not change: tracker.base.fingerprint._INDEX_LISTING);
    the recorder's commit and dirty flag come from that first reading (one rev-parse beside it, no status of its
    own). The
    reading stays the child's: none is left
    behind in the process that forked, and its garbage collector is left as it was, neither frozen nor off (the
    child's collector is on, over the parent's objects frozen, so that it neither walks nor copies them: ~12 ms a
    session; the parent's was off from pytest's import to the fork: ~5 ms)."""
    import gc

    from tracker.base.fingerprint import HANDED_OVER
    from tracker.commands.forkable import SPAWN_ENV

    # The repository's tests live in checks/, not tests/: this suite's own `tests` package is loaded in this
    # process, and a repository folder of that name shadows it, which makes verify spawn instead of fork.
    plan = CRASH_PLAN.replace("tests/test_c.py", "checks/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "checks/test_a.py": "def test_a():\n    pass\n"})
    monkeypatch.setenv(SPAWN_ENV, "0")
    # No installed plugin's git calls: pytest-benchmark (the test extra) runs `git describe --dirty`, which refreshes
    # the index (a listing more), and asks git for the project's name; what is counted is the tracker's own calls.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    os.utime(root / "checks" / "test_a.py", (1_000_000_000, 1_000_000_000))  # stat-stale: no status rewrites the index
    log = _git_log_shim(tmp_path, monkeypatch)
    frozen, collecting = gc.get_freeze_count(), gc.isenabled()
    r = cli(root, "verify", "--force")
    assert r.code == 0, r.out + r.err
    assert gc.isenabled() == collecting
    calls = log.read_text().splitlines()
    assert sum(" ls-files -s " in f" {c} " for c in calls) == 1, calls
    assert sum(" status " in f" {c} " for c in calls) == 3, calls
    assert sum(" rev-parse " in f" {c} " for c in calls) == 1, calls
    assert HANDED_OVER == {} and gc.get_freeze_count() == frozen
    data = json.loads(max((root / ".tracker" / "evidence").glob("*.json")).read_text())
    assert data["status"] == "complete" and "checks/test_a.py" in data["files"], data
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    clean = not subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude).tracker"], cwd=root,
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert data["provenance"]["commit"] == head and data["provenance"]["dirty"] is (not clean), data["provenance"]


def test_a_forked_session_whose_tree_changed_after_the_parent_read_it_is_altered(
    repo, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's first reading is its parent's, taken a moment earlier: a tracked file written in between (here by
    the conftest.py, the first code of the repository to run) still differs at the session's end, so the run is
    altered and meets no gate."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    conftest = "from pathlib import Path\nPath(__file__).with_name('data.txt').write_text('changed')\n"
    root = repo(
        {
            "plans/0001-demo.md": plan,
            "tests/conftest.py": conftest,
            "tests/data.txt": "original",
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    r = cli(root, "verify", "--force")
    assert "files changed while it ran: tests/data.txt" in r.out, r.out
    assert r.code != 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("collecting", [True, False])
def test_the_tests_of_a_forked_session_have_the_collector_of_a_fresh_interpreter(
    repo, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collecting: bool
) -> None:
    """Whatever the process that forks had (here the collector on, or off as an embedding program may have it), the
    tests find it on, as ``python -m pytest`` gives it, and collecting what they make; the caller gets its own back."""
    import gc

    from tracker.commands.forkable import SPAWN_ENV

    test = (
        "import gc\n\n\ndef test_a():\n"
        "    assert gc.isenabled()\n"
        "    class Cycle:\n        pass\n"
        "    c = Cycle()\n    c.me = c\n    del c\n"
        "    assert gc.collect() >= 1\n"
    )
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": test})
    monkeypatch.setenv(SPAWN_ENV, "0")
    was = gc.isenabled()
    try:
        if not collecting:
            gc.disable()
        r = cli(root, "verify", "--force")
        assert gc.isenabled() == collecting
    finally:
        if was:
            gc.enable()
    assert r.code == 0, r.out + r.err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("how", ["nested repository", "link to a folder", "ignored file"])
def test_a_module_the_repository_shadows_in_any_form_gets_a_new_interpreter(
    repo, cli, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Round 23, F1, F4, F5: the tracker has ``textwrap`` loaded; the repository's own breaks ``shorten``, and
    ``python -m pytest`` imports the repository's. Held as an untracked nested repository (``textwrap/``), a tracked
    link to a folder, or a ``textwrap.py`` git ignores, it was no name the fork looked for: the child kept the loaded
    one and the gate was met. Now each is seen, the run gets a new interpreter and the gate fails, as pytest does."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan, "tests/test_a.py": _TEXTWRAP_TEST}
    if how == "link to a folder":
        files["vendor/tw/__init__.py"] = _TEXTWRAP_BROKEN
    if how == "ignored file":
        files[".gitignore"] = "textwrap.py\n"
    root = repo(files, commit=False)
    if how == "link to a folder":
        os.symlink("vendor/tw", root / "textwrap")
    if how == "ignored file":
        (root / "textwrap.py").write_text(_TEXTWRAP_BROKEN)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "files"], cwd=root, check=True, capture_output=True)
    if how == "nested repository":
        (root / "textwrap").mkdir()
        (root / "textwrap" / "__init__.py").write_text(_TEXTWRAP_BROKEN)
        subprocess.run(["git", "init", "-q"], cwd=root / "textwrap", check=True)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True
    )
    assert plain.returncode == 1, plain.stdout  # pytest itself imports the repository's textwrap
    r = cli(root, "verify")
    assert "BROKEN" in r.out and r.code == 1, r.out + r.err
    assert "met   0001/P1#1" not in r.out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_the_collector_answers_the_tests_as_a_fresh_interpreters_would(repo, cli, monkeypatch) -> None:
    """Round 23, F2: in the forked child the parent's objects are frozen, and ``gc.get_referrers`` found no frozen
    referrer: a test that an unloaded module is no longer referenced (``sys.modules`` still holds it) passed under
    verify and failed under pytest. The first question to the collector now unfreezes them: the test fails under
    both. A frozen-count, ``gc.get_objects`` and a collection of a cycle the tests make answer as in a new process."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    tests = {
        "tests/test_a.py": (
            "import gc, importlib\n\n\ndef test_unloaded():\n"
            "    m = importlib.import_module('plugin_x')\n"
            "    assert [r for r in gc.get_referrers(m) if isinstance(r, dict) and r.get('plugin_x') is m] == []\n"
        ),
        "tests/test_b.py": (
            "import gc, sys\n\n\ndef test_fresh():\n"
            "    assert gc.get_freeze_count() == 0\n"
            "    assert any(o is sys.modules for o in gc.get_objects())\n"
        ),
    }
    plan = CRASH_PLAN.replace(
        'test = "tests/test_c.py"', 'test = "tests/test_a.py"\n\n[[gate]]\ntest = "tests/test_b.py"'
    )
    root = repo({"plans/0001-demo.md": plan, "plugin_x.py": "X = 1\n", **tests})
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True
    )
    assert "1 failed, 1 passed" in plain.stdout, plain.stdout
    r = cli(root, "verify")
    assert "unmet 0001/P1#1" in r.out.replace("UNMET", "unmet") or "UNMET 0001/P1#1" in r.out, r.out
    assert "met   0001/P1#2" in r.out, r.out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("case", ["submodule the parent imported", "frozen garbage", "module in a pythonpath folder"])
def test_the_forked_child_has_only_what_a_new_pytest_would(repo, cli, monkeypatch, case: str) -> None:
    """Round 23 (second helper): the child kept what its parent had. F1: a submodule the parent imported
    (``xml.dom.minidom``) was an attribute of its package for a test that forgot to import it; F3: a module the parent
    loaded (``secrets``) hid the repository's, which a ``pythonpath`` folder git ignores provides; F2: objects the
    parent held were frozen, so a class a test dropped (with a failing finalizer hung on it) was never collected, and
    ``filterwarnings = error`` never saw it. ``python -m pytest`` fails each; so must verify."""
    import secrets  # noqa: F401 - loaded in the process that forks
    import shlex  # noqa: F401
    import xml.dom.minidom  # noqa: F401

    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan}
    if case == "submodule the parent imported":
        files["tests/test_a.py"] = "import xml.dom\n\n\ndef test_a():\n    assert xml.dom.minidom.parseString\n"
    elif case == "frozen garbage":
        files["pytest.ini"] = "[pytest]\nfilterwarnings = error\n"
        files["tests/test_a.py"] = (
            "import shlex\n\n\nclass Canary:\n    def __del__(self):\n        raise RuntimeError('finalizer raised')\n\n\n"
            "def test_a():\n    shlex.shlex.canary = Canary()\n    del shlex.shlex\n"
            "    keep = [[] for _ in range(400_000)]\n    assert len(keep) == 400_000\n"
        )
    else:
        files.update({"pytest.ini": "[pytest]\npythonpath = local\n", ".gitignore": "local/\n"})
        files["tests/test_a.py"] = "import secrets\n\n\ndef test_a():\n    assert len(secrets.token_hex(8)) == 16\n"
    root = repo(files)
    if case == "module in a pythonpath folder":
        (root / "local").mkdir()
        (root / "local" / "secrets.py").write_text("API_KEY = 'dev'\n")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True
    )
    assert plain.returncode == 1, plain.stdout
    r = cli(root, "verify")
    assert r.code == 1 and "met   0001/P1#1" not in r.out, r.out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "fork"), reason="Linux's /proc")
def test_the_standby_child_runs_the_session_or_is_ended(repo, cli, monkeypatch) -> None:
    """verify forks its session's child at its start, before it builds anything (tracker.commands.standby.Standby):
    the child runs the first session; a verify that runs none (every gate fresh) ends it. Either way no child is left
    behind, running or unreaped, and none waits for a later verify."""
    from tracker.commands import standby
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    me = os.getpid()

    def children() -> list[str]:
        return Path(f"/proc/{me}/task/{me}/children").read_text().split()

    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo({"plans/0001-demo.md": plan, "tests/test_a.py": "def test_a():\n    pass\n"})
    before = children()
    first = cli(root, "verify")
    assert first.code == 0 and "met   0001/P1#1" in first.out, first.out + first.err
    assert children() == before and standby._STANDBY == {}
    again = cli(root, "verify")  # fresh: no session runs, the waiting child is ended
    assert again.code == 0 and "not re-run" in again.out, again.out
    assert children() == before and standby._STANDBY == {}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("case", ["digit limit lifted", "stdout's errors", "shadow written by a bench command"])
def test_the_session_gets_a_new_interpreters_settings_and_the_repository_as_it_is(
    repo, cli, monkeypatch, case: str
) -> None:
    """Round 23, third helper. F2: a process that lifted the int-to-str digit limit (``-X int_max_str_digits=0``,
    or in-process) forked it into the tests; F3: the child's stdout kept the console entry's error handler, so a test
    printing a lone surrogate under ``-s`` passed; F1: a ``--bench`` command wrote a ``textwrap/`` package after the
    standby child had imported pytest, and textwrap with it. ``python -m pytest`` fails each; so must verify."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, "0")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    files = {"plans/0001-demo.md": plan}
    args = ["verify"]
    if case == "digit limit lifted":
        files["tests/test_a.py"] = "def test_a():\n    assert len(str(10**5000)) == 5001\n"
    elif case == "stdout's errors":
        files["pytest.ini"] = "[pytest]\naddopts = -s\n"
        files["tests/test_a.py"] = "def test_a():\n    print('lone \\ud800 surrogate')\n"
    else:
        files["tests/test_a.py"] = _TEXTWRAP_TEST
        files["tools/mk.sh"] = "mkdir -p textwrap\ncp tools/broken.py textwrap/__init__.py\n"
        files["tools/broken.py"] = _TEXTWRAP_BROKEN
        files["plans/0001-demo.md"] = plan + (
            '\n```phase\nid = "P2"\ntitle = "Bench"\n\n[[gate]]\nbench = "m.time_us"\nwhere = { impl = "x" }\n'
            'at_most = 5\nrun = "sh tools/mk.sh"\n```\n'
        )
        args = ["verify", "--bench"]
    root = repo(files)
    if case == "shadow written by a bench command":
        subprocess.run(["sh", "tools/mk.sh"], cwd=root, check=True)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root, capture_output=True
    )
    assert plain.returncode == 1, plain.stdout
    if case == "shadow written by a bench command":
        shutil.rmtree(root / "textwrap")
    before = sys.get_int_max_str_digits()
    try:
        if case == "digit limit lifted":
            sys.set_int_max_str_digits(0)
        r = cli(root, *args)
    finally:
        sys.set_int_max_str_digits(before)
    assert "met   0001/P1#1" not in r.out and "0001/P1 is done" not in r.out, r.out + r.err


@pytest.mark.parametrize("mode", ["0", "1"], ids=["forked", "spawned"])
def test_a_tracker_package_of_the_tests_own_path_meets_no_gate(
    repo, cli, monkeypatch, tmp_path: Path, mode: str
) -> None:
    """Round 23, third helper, F4: the ini's ``pythonpath`` names a folder with a ``tracker`` package of the tests'
    own; ``python -m pytest`` imports it, verify's session held the tracker's under that name, forked or not, and a
    test of the other passed. The run now says so, and meets no gate."""
    from tracker.commands.forkable import SPAWN_ENV

    monkeypatch.setenv(SPAWN_ENV, mode)
    lib = tmp_path / "lib" / "tracker"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("raise ImportError('this lib tracker is broken')\n")
    plan = CRASH_PLAN.replace("tests/test_c.py", "tests/test_a.py")
    root = repo(
        {
            "plans/0001-demo.md": plan,
            "pytest.ini": f"[pytest]\npythonpath = {tmp_path / 'lib'}\n",
            "tests/test_a.py": "def test_a():\n    import tracker  # noqa: F401\n",
        }
    )
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
    )
    assert plain.returncode != 0, plain.stdout
    r = cli(root, "verify")
    assert "met   0001/P1#1" not in r.out and "hidden by the tracker's" in r.out, r.out + r.err
