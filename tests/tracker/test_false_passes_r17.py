"""Adversarial round 17 (issues 24 and 31), against a09a376: each finding a test that failed before its fix. B1 and
B2 (pooled bench runs) are in test_bench_verdict.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import SKIPPABLE, phase, plan_text, record, set_newest_provenance, status_of

PLAN = plan_text(phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"'))


def test_a_cpu_model_alone_is_no_other_machine(repo: Any, cli: Any) -> None:
    """M1: two runners of one image on different CPU models (a cloud pool mixes them): the run of all on one skipped
    test_b (an environment variable), the other passed b alone; the skip was taken for another machine's, and the
    file gate met though its tests never passed together."""
    root: Path = repo({"plans/0001-demo.md": PLAN, "tests/test_x.py": SKIPPABLE})
    assert record(root, "tests/test_x.py", env={"FAST": "1"}) == 0
    set_newest_provenance(root, "cpu", "Intel(R) Xeon(R) Platinum 8480+")
    assert record(root, "tests/test_x.py::test_b") == 0
    set_newest_provenance(root, "cpu", "AMD EPYC 9654 96-Core Processor")
    assert status_of(cli, root) != "done"


BROKEN = "def add(a, b):\n    return a - b\n"
TEST_CORE = "from calc.core import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _install(site: Path, core: str, name: str, url: str | None) -> None:
    """What a non-editable ``pip install`` of a ``python/calc`` layout leaves in ``site``: the package and its
    dist-info (METADATA, RECORD and, for a local folder, PEP 610's direct_url.json); ``url`` "egg": what a legacy
    ``setup.py install`` leaves (an .egg-info with PKG-INFO and installed-files.txt)."""
    (site / "calc").mkdir(parents=True)
    (site / "calc/__init__.py").write_text("")
    (site / "calc/core.py").write_text(core)
    if url == "egg-folder":  # the egg folder itself goes on the path (its modules inside it)
        egg = site
        (egg / "EGG-INFO").mkdir()
        (egg / "EGG-INFO/PKG-INFO").write_text(f"Metadata-Version: 1.0\nName: {name}\nVersion: 0.1\n\n")
        return
    if url == "egg":
        egg = site / f"{name}-0.1-py3.11.egg-info"
        egg.mkdir()
        (egg / "PKG-INFO").write_text(f"Metadata-Version: 1.0\nName: {name}\nVersion: 0.1\n\n")
        (egg / "installed-files.txt").write_text("../calc/__init__.py\n../calc/core.py\nPKG-INFO\n")
        return
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n\n")
    (info / "RECORD").write_text(f"calc/__init__.py,,\ncalc/core.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": url, "dir_info": {}}))


@pytest.mark.parametrize(
    ("installed_as", "altered"),
    [
        ("from-this-folder", True),  # direct_url.json names the repository
        ("same-project-elsewhere", True),  # another checkout of the project (its name is pyproject's)
        ("a-wheel-built-here", True),  # round 18: `pip install dist/*.whl` (direct_url names the wheel)
        ("egg-info", True),  # round 18: a legacy `setup.py install`
        ("egg-folder", True),  # round 19: an .egg folder on the path
        ("snapshot", True),  # round 19: a stale install equal to a snapshot elsewhere in the tree, not the source
        ("same-bytes", False),  # a fresh install: the same code ran
        ("another-project", False),  # someone else's calc: not the repository's module
    ],
)
def test_a_stale_install_of_any_layout_is_seen(
    repo: Any, cli: Any, tmp_path: Path, installed_as: str, altered: bool
) -> None:
    """A1: round 16's F5 saw a stale install only of root and ``src/`` layouts. Triton's ``python/NAME``, ``lib/``
    and ``package_dir`` remaps: the tree's add() is broken, the tests import the installed old copy and pass."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"python/**", "tests/**"'))
    root: Path = repo(
        {
            "plans/0001-demo.md": plan,
            "pyproject.toml": '[project]\nname = "Calc_Tools"\nversion = "0.1"\n',
            "python/calc/__init__.py": "",
            "python/calc/core.py": BROKEN,
            "tests/test_core.py": TEST_CORE,
        }
    )
    site = tmp_path / ("site.egg" if installed_as == "egg-folder" else "site")
    good = "def add(a, b):\n    return a + b\n"
    if installed_as == "snapshot":  # a committed old copy elsewhere in the tree, the same bytes as the stale install
        (root / "benchmarks/v0_1/calc").mkdir(parents=True)
        (root / "benchmarks/v0_1/calc/core.py").write_text(good)
    name, url = {
        "from-this-folder": ("something", root.as_uri()),
        "same-project-elsewhere": ("calc.tools", (tmp_path / "elsewhere").as_uri()),
        "same-bytes": ("calc-tools", root.as_uri()),
        "another-project": ("calc", "file:///opt/calc"),
        "a-wheel-built-here": ("something", (root / "dist/calc-0.1-py3-none-any.whl").as_uri()),
        "egg-info": ("Calc-Tools", "egg"),
        "egg-folder": ("calc_tools", "egg-folder"),
        "snapshot": ("calc-tools", root.as_uri()),
    }[installed_as]
    _install(site, BROKEN if installed_as == "same-bytes" else good, name, url)
    code = record(root, "tests/test_core.py", env={"PYTHONPATH": str(site)})
    assert code == (1 if installed_as == "same-bytes" else 0)
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    said = json.loads(evidence.read_text())["provenance"].get("altered", "")
    assert (f"calc.core from {site / 'calc/core.py'}" in said) is altered, said
    if installed_as != "same-bytes":
        assert (status_of(cli, root) == "done") is not altered


SETTINGS_TEST = "from calc.settings import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 10\n"


def _ignored_settings_repo(repo: Any) -> Path:
    """One test gate whose tests import calc/settings.py, which git ignores."""
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    return Path(
        repo(
            {
                "plans/0001-demo.md": plan,
                ".gitignore": "calc/settings.py\n.tracker/\n",
                "calc/__init__.py": "",
                "calc/settings.py": "LIMIT = 10\n",
                "tests/test_core.py": SETTINGS_TEST,
            }
        )
    )


def test_an_edit_to_a_module_git_ignores_stales_the_gate(repo: Any, cli: Any) -> None:
    """F2: the tests import calc/settings.py, which git ignores (generated, or local): no id of the tree names it, so
    an edit to it never made the gate stale, and a run of the edited code fails."""
    root = _ignored_settings_repo(repo)
    assert record(root, "tests/test_core.py") == 0
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    assert list(json.loads(evidence.read_text())["provenance"]["ignored_modules"]) == ["calc/settings.py"]
    assert status_of(cli, root) == "done"
    (root / "calc/settings.py").write_text("LIMIT = 11\n")
    assert status_of(cli, root) == "stale"
    assert "calc/settings.py" in cli(root, "status").out
    (root / "calc/settings.py").write_text("LIMIT = 10\n")  # the same bytes again: the same code
    assert status_of(cli, root) == "done"
    (root / "calc/settings.py").unlink()
    assert status_of(cli, root) == "stale"


def test_installed_libraries_inside_the_repository_are_not_ignored_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F2's rule withdrawn in 047808a voided runs for libraries inside the repository: a virtual environment or
    conda prefix (Python's prefixes), ``pip install --target lib`` (a RECORD lists it). None of them is recorded;
    the repository's own ignored module is."""
    from tracker.plugin.modules import ignored_modules

    root = tmp_path / "repo"
    (root / "lib/dep").mkdir(parents=True)
    (root / "lib/dep/__init__.py").write_text("X = 1\n")
    (root / "lib/dep-1.0.dist-info").mkdir()
    (root / "lib/dep-1.0.dist-info/RECORD").write_text("dep/__init__.py,sha256=x,6\ndep-1.0.dist-info/RECORD,,\n")
    (root / "env/lib/python3/site-packages/other").mkdir(parents=True)
    (root / "env/lib/python3/site-packages/other/__init__.py").write_text("")
    (root / "conda/lib").mkdir(parents=True)
    (root / "conda/lib/os.py").write_text("")
    (root / "calc").mkdir()
    (root / "calc/_version.py").write_text("version = '1.0'\n")
    (root / "calc/__init__.py").write_text("")
    monkeypatch.setattr("sys.path", [str(root / "lib"), *__import__("sys").path])
    monkeypatch.setattr("sys.prefix", str(root / "conda"))
    modules = {
        "dep": str(root / "lib/dep/__init__.py"),
        "other": str(root / "env/lib/python3/site-packages/other/__init__.py"),
        "os": str(root / "conda/lib/os.py"),
        "calc": str(root / "calc/__init__.py"),
        "calc._version": str(root / "calc/_version.py"),
        "json": __import__("json").__file__,
    }
    found = ignored_modules(root, {"calc/__init__.py": "0" * 40}, modules)
    # env/ is no prefix of the running Python and no RECORD lists `other`: a folder named site-packages is no library
    # by its name alone (round 19, W3)
    assert list(found) == ["calc/_version.py", "env/lib/python3/site-packages/other/__init__.py"]


@pytest.fixture(scope="module")
def passed_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose one test gate passed, recorded with no module git ignores."""
    import subprocess

    root = tmp_path_factory.mktemp("hostile") / "repo"
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    for rel, text in {
        "plans/0001-demo.md": plan,
        ".gitignore": ".tracker/\n",
        "calc/__init__.py": "",
        "calc/settings.py": "LIMIT = 10\n",
        "tests/test_core.py": SETTINGS_TEST,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *cmd], cwd=root, check=True)
    assert record(root, "tests/test_core.py") == 0
    return root


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(
        st.one_of(
            st.sampled_from(
                [
                    "../outside.py",
                    "/etc/passwd",
                    "calc/./settings.py",
                    "calc//settings.py",
                    "",
                    ".",
                    "calc/settings.py",
                    "calc",
                    "calc/settings.py/",
                    "\x00",
                    "a" * 5000,
                ]
            ),
            st.text(min_size=1, max_size=30),
        ),
        st.sampled_from(["0" * 40, "f" * 40, "not-a-blob", "", "0" * 64]),
        max_size=4,
    )
)
def test_hostile_ignored_modules_never_crash_and_never_pass(
    passed_repo: Path, cli: Any, modules: dict[str, str]
) -> None:
    """Evidence naming ignored modules outside the tree, no path at all, or ids that are none: a clear problem or a
    stale phase, never a traceback, never a pass (no id given is any file's)."""
    [evidence] = (passed_repo / ".tracker/evidence").glob("*.json")
    doc = json.loads(evidence.read_text())
    doc["provenance"]["ignored_modules"] = modules
    evidence.write_text(json.dumps(doc))
    r = cli(passed_repo, "status")
    assert "Traceback" not in r.out + r.err
    line = next(x for x in r.out.splitlines() if x.strip().startswith("P1 "))
    assert (line.split()[1] == "done") is (not modules), r.out + r.err


EVIL = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.outcome = 'passed'\n    return report\n"
)


def test_a_plugin_declared_as_the_gates_options_counts_only_for_gates_that_load_it(repo: Any, cli: Any) -> None:
    """A5b (round 14): TRACKER_GATE_OPTIONS (verify's, anyone's to set) declared `-p evil` as the gates' own, so the
    plugin's load was not counted; evil turns every failure into a pass, and a gate without `-p evil` met."""
    plan = plan_text(
        phases=phase("P1", 'test = "tests/test_x.py"', paths='"tests/**"')
        + phase("P2", 'test = "tests/test_x.py"\noptions = ["-p", "evil"]', paths='"tests/**"')
    )
    body = "def test_a():\n    assert 1 == 2\n"
    root: Path = repo({"plans/0001-demo.md": plan, "evil.py": EVIL, "tests/test_x.py": body})
    gates = root / "gates.json"
    gates.write_text("{}")
    env = {"TRACKER_GATE_OPTIONS": json.dumps(["-p", "evil"]), "PYTHONPATH": str(root)}
    assert record(root, "tests/test_x.py", "-p", "evil", f"--tracker-gates={gates}", env=env) == 0
    assert status_of(cli, root, "P1") != "done"
    out = cli(root, "show", "0001/P1").out
    assert "plugins the gate's options do not load (-p evil)" in out, out
    assert status_of(cli, root, "P2") == "done"  # the gate that loads it is defined with it (its plugin is the repo's)


def test_verify_runs_a_gate_again_when_a_module_git_ignores_changed(repo: Any, cli: Any) -> None:
    """Round 18, F2a: status said stale after an edit to calc/settings.py (git ignores it), but verify's incremental
    check found the gate "up to date with its evidence", did not run it, and said the phase was done: the tests now
    fail."""
    root = _ignored_settings_repo(repo)
    assert cli(root, "verify").code == 0
    assert "up to date" in cli(root, "verify").out  # nothing changed: not run again
    (root / "calc/settings.py").write_text("LIMIT = 11\n")
    r = cli(root, "verify")
    assert "up to date" not in r.out and r.code != 0, r.out
    assert status_of(cli, root) != "done"


def test_a_virtual_environment_at_the_root_exempts_no_module_of_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 18, F2b: `python -m venv .` makes the repository Python's prefix, and every module git ignores was taken
    for a library. Its libraries are in site-packages; the tree's own ignored module is recorded."""
    from tracker.plugin.modules import ignored_modules

    root = tmp_path / "repo"
    site_dir = Path(__import__("site").getsitepackages([str(root)])[0])
    (site_dir / "dep").mkdir(parents=True)
    (site_dir / "dep/__init__.py").write_text("")
    (root / "calc").mkdir()
    (root / "calc/settings.py").write_text("LIMIT = 10\n")
    monkeypatch.setattr("sys.prefix", str(root))
    modules = {"dep": str(site_dir / "dep/__init__.py"), "calc.settings": str(root / "calc/settings.py")}
    assert list(ignored_modules(root, {}, modules)) == ["calc/settings.py"]


def test_a_folder_named_site_packages_is_no_library_by_its_name(tmp_path: Path) -> None:
    """Round 19, W3: any folder named `site-packages` (or `dist-packages`) was exempt, so a settings module git
    ignores put in `calc/site-packages/` was never hashed and its edits never staled the gate. Only the running
    Python's site folders are libraries."""
    from tracker.plugin.modules import ignored_modules, library_dirs, linked_out_modules

    root = tmp_path / "repo"
    for folder in ("calc/site-packages", "calc/dist-packages"):
        (root / folder).mkdir(parents=True)
        (root / folder / "settings.py").write_text("LIMIT = 10\n")
    modules = {
        "settings": str(root / "calc/site-packages/settings.py"),
        "other": str(root / "calc/dist-packages/settings.py"),
    }
    assert list(ignored_modules(root, {}, modules)) == [
        "calc/dist-packages/settings.py",
        "calc/site-packages/settings.py",
    ]
    assert not any(d.startswith(str(root)) for d in library_dirs())
    (tmp_path / "elsewhere.py").write_text("LIMIT = 10\n")
    (root / "calc/site-packages/linked.py").symlink_to(tmp_path / "elsewhere.py")
    said = linked_out_modules(root, {"linked": str(root / "calc/site-packages/linked.py")})
    assert said == f"modules imported through links out of the repository (linked -> {tmp_path / 'elsewhere.py'})"


def test_a_module_through_a_link_out_of_the_repository_counts_no_pass(repo: Any, cli: Any, tmp_path: Path) -> None:
    """Round 18, F2b: a tracked calc/settings.py is a link to a file outside the repository; the tree's id is the
    link's text, so an edit of the file it leads to was never seen (status and verify stayed done)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "settings.py").write_text("LIMIT = 10\n")
    plan = plan_text(phases=phase("P1", 'test = "tests/test_core.py"', paths='"calc/**", "tests/**"'))
    root: Path = repo({"plans/0001-demo.md": plan, "calc/__init__.py": "", "tests/test_core.py": SETTINGS_TEST})
    (root / "calc/settings.py").symlink_to(outside / "settings.py")
    assert record(root, "tests/test_core.py") == 0
    [evidence] = (root / ".tracker/evidence").glob("*.json")
    said = json.loads(evidence.read_text())["provenance"].get("altered", "")
    assert f"modules imported through links out of the repository (calc.settings -> {outside / 'settings.py'})" in said
    assert status_of(cli, root) != "done"


def test_the_projects_of_a_repository_are_every_pyproject_s(tmp_path: Path) -> None:
    """Round 18, A1: a project in a subfolder (Triton's `python/pyproject.toml`), a Poetry project (`[tool.poetry]`
    and no `[project]`): their installs are the repository's too."""
    from tracker.base.installed import project_names

    (tmp_path / "python").mkdir()
    (tmp_path / "python/pyproject.toml").write_text('[project]\nname = "Triton_Lang"\n')
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools/pyproject.toml").write_text('[tool.poetry]\nname = "my.tools"\n')
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/pyproject.toml").write_text("[project\n")
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy/setup.cfg").write_text("[metadata]\nname = Old_Calc\n")
    found = project_names(
        tmp_path, ["python/pyproject.toml", "tools/pyproject.toml", "bad/pyproject.toml", "gone", "legacy/setup.cfg"]
    )
    assert found == {"triton-lang": "python", "my-tools": "tools", "old-calc": "legacy"}


def test_a_vendored_library_is_not_the_repository_s_project() -> None:
    """Round 19, FP1: every pyproject.toml of the tree named "the repository's projects", so a vendored
    third_party/iniconfig made pytest's own iniconfig (installed) a stale copy: every run altered, forever. Only
    the root's and one folder down name the repository's projects."""
    from tracker.base.installed import project_files

    files = ["pyproject.toml", "python/pyproject.toml", "third_party/iniconfig/pyproject.toml", "setup.cfg",
             "legacy/setup.cfg", "a/b/setup.cfg", "docs/conf.py"]  # fmt: skip
    assert project_files(files) == ["legacy/setup.cfg", "pyproject.toml", "python/pyproject.toml", "setup.cfg"]


def test_the_user_site_is_no_library_where_python_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 21, 10: inside a virtual environment Python leaves the user site off, yet it was exempt, so a
    PYTHONUSERBASE pointing into the repository hid a module git ignores from being hashed."""
    import os
    import site

    from tracker.plugin.modules import library_dirs

    user = os.path.realpath(site.getusersitepackages()) + os.sep
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    assert user not in library_dirs()
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    assert user in library_dirs()
