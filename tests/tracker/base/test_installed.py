"""The repository's own projects (tracker/base/installed.py): every pyproject of the tree, vendored libraries excepted."""

from __future__ import annotations

from pathlib import Path


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
