"""RealPaths (tracker/base/realpaths.py) resolves every path as os.path.realpath does."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

_PARTS = ["a", "b", "to_a", "to_b_up", "m.py", "to_m.py", "dangling.py", "loop", "missing", "..", "."]


def _link_tree(base: Path) -> None:
    """Folders, a file, and links of every kind: to a folder, through ``..``, to a file, dangling, a loop."""
    (base / "a" / "b").mkdir(parents=True, exist_ok=True)
    (base / "a" / "m.py").write_text("x = 1\n")
    (base / "a" / "b" / "m.py").write_text("x = 2\n")
    for name, target in [
        ("to_a", "a"),
        ("a/to_b_up", "b/.."),
        ("a/b/to_m.py", "../m.py"),
        ("a/dangling.py", "nowhere/m.py"),
        ("a/loop", "loop"),
        ("a/b/to_a", "../../to_a"),
    ]:
        if not os.path.lexists(base / name):
            os.symlink(target, base / name)


@settings(max_examples=300, deadline=None)
@given(paths=st.lists(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=6), min_size=1, max_size=12))
def test_real_paths_resolve_every_path_as_realpath_does(paths: list[list[str]]) -> None:
    """RealPaths caches each folder's realpath: whatever the links (to folders, through ``..``, to files, dangling,
    looping) and in whatever order one instance is asked, it answers what ``os.path.realpath`` answers."""
    import tempfile

    from tracker.base.realpaths import RealPaths

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _link_tree(base)
        real = RealPaths()
        for parts in paths:
            path = os.path.join(tmp, *parts)
            assert real(path) == os.path.realpath(path), path
            assert real(path) == os.path.realpath(path), path  # asked again: the cached answer
