"""tracker.git.at_revision: the statuses at a revision are what ``status`` said on a checkout of it, on the fixture
repository's tags, after gc, with new evidence and plan edits in the working tree, through symlinks, and on
hostile trees."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import report_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracker_testutil import git

from tracker.base.cache import Cache
from tracker.base.contract import file_id
from tracker.base.file_index import FileIndex
from tracker.base.fingerprint import tree_file_ids
from tracker.core.model import PhaseStatus, Store
from tracker.errors import FileError
from tracker.git.at_revision import (
    Now,
    at_revision,
    pick,
    plan_set,
    resolve_link,
    revision_cache,
    statuses_at,
    store_at,
)
from tracker.git.log import TreeEntry, UnknownRef
from tracker.plans.load import load_files, load_plans
from tracker.store.derive import derive
from tracker.store.evidence import load
from tracker.store.evidence_schema import parse_document

# The statuses the fixture's docstring documents at each tag (tracker log replays the same walk).
DOCUMENTED = {
    "c1": {"0001/P1": "planned", "0001/P2": "blocked", "0001/P3": "blocked", "0002/P1": "blocked", "0002/P2": "blocked"},
    "c2": {"0001/P1": "done", "0001/P2": "done", "0001/P3": "in-progress", "0002/P1": "planned", "0002/P2": "blocked"},
    "c3": {"0001/P1": "done", "0001/P2": "done", "0001/P3": "in-progress", "0002/P1": "done", "0002/P2": "planned"},
    "c4": {"0001/P1": "done", "0001/P2": "regressed", "0001/P3": "blocked", "0002/P1": "done", "0002/P2": "planned"},
    "c5": {"0001/P1": "done", "0001/P2": "regressed", "0001/P3": "blocked", "0002/P1": "stale", "0002/P2": "blocked"},
}  # fmt: skip


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture repository, built once (tests that change it work on a copy)."""
    return report_fixture.build(tmp_path_factory.mktemp("fixture") / "repo")


@pytest.fixture
def copy(fixture: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixture, tmp_path / "copy", symlinks=True))


def statuses(root: Path, ref: str) -> dict[str, str]:
    return {k: v.status.value for k, v in statuses_at(root, ref).statuses.items()}


def on_checkout(root: Path, ref: str, where: Path) -> dict[str, PhaseStatus]:
    """What ``status`` says on a fresh clone of ``root`` checked out at ``ref``."""
    git(where.parent, "clone", "-q", str(root), str(where))
    git(where, "checkout", "-q", ref)
    _, plans = load_plans(where, cache=Cache(None))
    return derive(where, plans, cache=Cache(None))


@pytest.mark.parametrize("ref", report_fixture.REFS)
def test_each_tag_has_the_statuses_its_docstring_documents(fixture: Path, ref: str) -> None:
    assert statuses(fixture, ref) == DOCUMENTED[ref]


def test_c5_is_stale_where_c4_is_done(fixture: Path) -> None:
    c4, c5 = statuses_at(fixture, "c4").statuses, statuses_at(fixture, "c5").statuses
    assert c4["0002/P1"].status.value == "done"
    assert c5["0002/P1"].status.value == "stale" and c5["0002/P1"].changed == ("src/engine.py",)


@pytest.mark.parametrize("ref", ["c2", "c4", "HEAD~3"])
def test_every_verdict_is_what_status_says_on_a_checkout(fixture: Path, tmp_path: Path, ref: str) -> None:
    assert statuses_at(fixture, ref).statuses == on_checkout(fixture, ref, tmp_path / "checkout")


def test_evidence_gone_since_is_read_from_the_revisions_blobs(copy: Path, tmp_path: Path) -> None:
    """tracker gc (or a hand) deleted r1 and the first result file: at c2 they still decide, read from git."""
    (copy / ".tracker/evidence/20261102T100000Z-ci-box-r1.json").unlink()
    (copy / "bench/results/20261103T100000Z-gpu-box-attn-b1.json").unlink()
    at = statuses_at(copy, "c2")
    assert {k: v.status.value for k, v in at.statuses.items()} == DOCUMENTED["c2"]
    assert at.statuses == on_checkout(copy, "c2", tmp_path / "checkout")
    assert ".tracker/evidence/20261102T100000Z-ci-box-r1.json" in at.evidence


def test_a_result_file_edited_since_is_read_as_the_revision_had_it(copy: Path) -> None:
    b2 = copy / "bench/results/20261108T100000Z-gpu-box-attn-b2.json"
    doc = json.loads(b2.read_text())
    doc["cases"] = [c for c in doc["cases"] if c["metric"] != "attn.time_us"]  # now no speedup case at all
    b2.write_text(json.dumps(doc))
    assert statuses(copy, "c4") == DOCUMENTED["c4"]  # at c4 the file held the 1.04x that regressed 0001/P2


@pytest.mark.parametrize("ref", ["HEAD", "c4"])
def test_a_store_file_edited_since_is_read_as_the_revision_had_it(copy: Path, tmp_path: Path, ref: str) -> None:
    """Evidence files are never edited, by the rules; one edited all the same (by hand, a bad merge) must not make
    the revision's statuses the working tree's: at HEAD r4 passed and 0001/P1 was done (it was read from disk, so
    summary said "no change against HEAD" about a run turned failing)."""
    r4 = copy / ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
    doc = json.loads(r4.read_text())
    doc["tests"][1]["outcome"], doc["exitstatus"] = "failed", 1
    r4.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    want = DOCUMENTED["c5" if ref == "HEAD" else ref]
    assert statuses(copy, ref) == want
    assert statuses_at(copy, ref).statuses == on_checkout(copy, ref, tmp_path / "checkout")
    _, now = load_plans(copy, cache=Cache(None))
    assert derive(copy, now, cache=Cache(None))["0001/P1"].status.value == "regressed"  # while now it is
    assert statuses(copy, ref) == want  # warm: the status index holds the working tree's answers now


def test_new_evidence_and_plan_edits_of_the_working_tree_are_not_the_revisions(copy: Path) -> None:
    run = json.loads((copy / ".tracker/evidence/20261106T100000Z-ci-box-r3.json").read_text())
    run["provenance"]["time"] = "2026-11-10T10:00:00Z"  # a newer failing run of the kernel tests
    (copy / ".tracker/evidence/20261110T100000Z-ci-box-r9.json").write_text(json.dumps(run))
    plan = copy / "plans/0001-verify-kernel.md"
    plan.write_text(plan.read_text().split('```phase\nid = "P3"')[0])  # P3 removed now
    assert statuses(copy, "HEAD") == DOCUMENTED["c5"]
    _, now = load_plans(copy, cache=Cache(None))
    assert derive(copy, now, cache=Cache(None))["0001/P1"].status.value == "regressed"  # while now it is


def test_the_status_index_answers_as_the_store_does(fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same evidence at HEAD as now: REF's answers come from the index, without opening the store."""
    from tracker.base import fileio
    from tracker.store import statusindex

    monkeypatch.setattr(fileio, "SETTLED_NS", -(10**12))  # files just written count as settled: an index is kept
    monkeypatch.setattr(statusindex, "SETTLED_NS", -(10**12))
    cache = Cache(fixture)
    files = load_files(fixture, cache=cache)
    _, plans = load_plans(fixture, cache=cache)
    derive(fixture, plans, cache=cache)  # what status does first: the index is in the command's cache now

    def no_store() -> Store:
        raise AssertionError("the store was opened although the index holds every answer")

    def tree() -> FileIndex:
        return FileIndex(tree_file_ids(fixture))

    indexed = at_revision(fixture, "HEAD", Now(files, no_store, tree), cache)
    live = at_revision(fixture, "HEAD", Now(files, lambda: load(fixture, strict=False), tree), Cache(None))
    assert indexed.statuses == live.statuses
    assert {k: v.status.value for k, v in indexed.statuses.items()} == DOCUMENTED["c5"]


@pytest.mark.parametrize("change", ["a result added since", "a result gone since"])
def test_what_the_revision_learns_stays_out_of_the_files_status_reads(copy: Path, change: str) -> None:
    cache = Cache(copy)
    files = load_files(copy, cache=Cache(None))
    now = Now(files, lambda: load(copy, strict=False), lambda: FileIndex(tree_file_ids(copy)))
    b2 = copy / "bench/results/20261108T100000Z-gpu-box-attn-b2.json"
    if change == "a result added since":  # REF's result files all on disk: evaluated through the caches
        doc = json.loads(b2.read_text())
        doc["provenance"]["time"] = "2026-11-10T10:00:00Z"
        (copy / "bench/results/20261110T100000Z-gpu-box-attn-b9.json").write_text(json.dumps(doc))
    else:  # one read from REF's blob: evaluated over the runs read here
        b2.unlink()
    assert {k: v.status.value for k, v in at_revision(copy, "c4", now, cache).statuses.items()} == DOCUMENTED["c4"]
    cache.write()
    written = {p.name for p in (copy / ".tracker/cache").iterdir()} if (copy / ".tracker/cache").exists() else set()
    assert written <= {
        "result-checks.json",
        "result-metrics.json",  # what a result file holds: a fact of its bytes, wherever they are read
        "bootstrap.json",
        "revision-plans.json",
        "revision-bench-verdicts.json",
        "revision-index.json",
    }
    if change == "a result added since":
        kept = json.loads((copy / ".tracker/cache/revision-bench-verdicts.json").read_text())
        assert revision_cache(Cache(copy)).read("bench-verdicts", kept["key"]) == kept["data"]  # read back next time


def add_failing_run(root: Path) -> None:
    """A newer failing run of the kernel tests, not committed (what a device run leaves)."""
    run = json.loads((root / ".tracker/evidence/20261106T100000Z-ci-box-r3.json").read_text())
    run["provenance"]["time"] = "2026-11-10T10:00:00Z"
    (root / ".tracker/evidence/20261110T100000Z-ci-box-r9.json").write_text(json.dumps(run))


def now_of(root: Path, store: Callable[[], Store] | None = None) -> Now:
    files = load_files(root, cache=Cache(None))
    return Now(files, store or (lambda: load(root, strict=False)), lambda: FileIndex(tree_file_ids(root)))


def no_store() -> Store:
    raise AssertionError("the store was opened although the revision's index holds every answer")


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written count as settled: an index is kept (the listing's rule, tracker.store.statusindex)."""
    from tracker.base import fileio
    from tracker.store import statusindex

    monkeypatch.setattr(fileio, "SETTLED_NS", -(10**12))
    monkeypatch.setattr(statusindex, "SETTLED_NS", -(10**12))


@pytest.mark.parametrize("ref", ["HEAD", "c4", "c2"])
def test_the_revisions_own_index_answers_once_new_evidence_is_not_committed(
    copy: Path, tmp_path: Path, ref: str, settled: None
) -> None:
    """Evidence added since REF (every device run leaves some): REF's store is read and judged once, then REF's
    index (by its files' blob ids) answers, without opening a store, what the store and a checkout answer."""
    add_failing_run(copy)
    cache = Cache(copy)
    cold = at_revision(copy, ref, now_of(copy), cache).statuses
    cache.write()
    assert (copy / ".tracker/cache/revision-index.json").is_file()
    warm = at_revision(copy, ref, now_of(copy, no_store), Cache(copy)).statuses
    assert warm == cold == on_checkout(copy, ref, tmp_path / "checkout")
    want = DOCUMENTED["c5" if ref == "HEAD" else ref]
    assert {k: v.status.value for k, v in warm.items()} == want


def test_the_revisions_index_is_keyed_by_what_its_files_hold(copy: Path, settled: None) -> None:
    """An index of c4's evidence answers for c5 (c5 changed code alone: the same blobs; staleness is judged on
    c5's files, never cached), never for c3 (other blobs), nor for c4 once a store file of c4's is edited in the
    working tree (read from its blob then, and judged live)."""
    add_failing_run(copy)
    cache = Cache(copy)
    at_revision(copy, "c4", now_of(copy), cache)
    cache.write()
    c5 = at_revision(copy, "c5", now_of(copy, no_store), Cache(copy)).statuses
    assert {k: v.status.value for k, v in c5.items()} == DOCUMENTED["c5"]
    with pytest.raises(AssertionError, match="store was opened"):
        at_revision(copy, "c3", now_of(copy, no_store), Cache(copy))
    r4 = copy / ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
    doc = json.loads(r4.read_text())
    doc["tests"][1]["outcome"], doc["exitstatus"] = "failed", 1
    r4.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    with pytest.raises(AssertionError, match="store was opened"):
        at_revision(copy, "HEAD", now_of(copy, no_store), Cache(copy))


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_a_store_file_edited_where_git_does_not_look_is_read_as_the_revision_had_it(
    copy: Path, tmp_path: Path, flag: str, settled: None
) -> None:
    """Round 11: git diff never looks at a file git was told not to watch, so an edit to a store file under
    skip-worktree was read as REF's, cold, and kept in REF's index after the file was put back, warm."""
    add_failing_run(copy)
    r4 = copy / ".tracker/evidence/20261107T100000Z-ci-box-r4.json"
    before = r4.read_bytes()
    git(copy, "update-index", flag, ".tracker/evidence/20261107T100000Z-ci-box-r4.json")
    doc = json.loads(before)
    doc["tests"][1]["outcome"], doc["exitstatus"] = "failed", 1
    r4.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    cache = Cache(copy)
    assert {k: v.status.value for k, v in at_revision(copy, "HEAD", now_of(copy), cache).statuses.items()} == (
        DOCUMENTED["c5"]
    )
    cache.write()
    r4.write_bytes(before)  # put back: REF's answers are what they were
    again = at_revision(copy, "HEAD", now_of(copy), Cache(copy)).statuses
    assert again == on_checkout(copy, "HEAD", tmp_path / "checkout")


def test_a_revision_whose_store_holds_a_symlink_keeps_no_index(copy: Path) -> None:
    """A symlink's blob is the name of what it points to, not what it holds: no index by blob ids then."""
    store = copy / ".tracker/evidence"
    r4 = store / "20261107T100000Z-ci-box-r4.json"
    (copy / "kept").mkdir()
    shutil.move(r4, copy / "kept" / r4.name)
    r4.symlink_to(Path("../..") / "kept" / r4.name)
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "r4 through a link")
    add_failing_run(copy)
    cache = Cache(copy)
    at = at_revision(copy, "HEAD", now_of(copy), cache)
    cache.write()
    assert {k: v.status.value for k, v in at.statuses.items()} == DOCUMENTED["c5"]
    assert not (copy / ".tracker/cache/revision-index.json").exists()


def test_plans_parsed_from_the_revision_are_kept_by_blob_and_a_broken_cache_is_rebuilt(copy: Path) -> None:
    plan = copy / "plans/0002-engine.md"
    plan.write_text(plan.read_text().replace("CUDA graphs", "CUDA graphs, captured"))  # now's text is not c3's
    cache = Cache(copy)
    files = load_files(copy, cache=Cache(None))
    now = Now(files, lambda: load(copy, strict=False), lambda: FileIndex(tree_file_ids(copy)))
    first = at_revision(copy, "c3", now, cache)
    cache.write()
    kept = json.loads((copy / ".tracker/cache/revision-plans.json").read_text())["data"]
    assert any(k.startswith("plans/0002-engine.md\0") for k in kept)
    assert [ph.title for ph in first.plans[1].phases] == ["Engine runs the kernel", "CUDA graphs"]
    for garbage in ({k: {"plan": {"id": 3}, "problems": []} for k in kept}, {k: 7 for k in kept}, [1, 2]):
        doc = json.loads((copy / ".tracker/cache/revision-plans.json").read_text())
        doc["data"] = garbage
        (copy / ".tracker/cache/revision-plans.json").write_text(json.dumps(doc))
        assert at_revision(copy, "c3", now, Cache(copy)).statuses == first.statuses


def test_head_of_a_repository_without_a_commit_is_empty(tmp_path: Path) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "plans").mkdir()
    (root / "plans/0001-x.md").write_text(report_fixture.PLAN_KERNEL)
    at = statuses_at(root, "HEAD")
    assert (at.commit, at.plans, at.statuses, at.evidence) == (None, [], {}, ())
    with pytest.raises(UnknownRef):
        statuses_at(root, "main~1")


@pytest.mark.parametrize("ref", ["nope", "HEAD~9", "HEAD^{tree}", "-h", "", "a\nb", "0" * 40, "HEAD:src"])
def test_a_ref_that_names_no_commit_is_a_usage_error(fixture: Path, ref: str) -> None:
    with pytest.raises(UnknownRef, match="not a commit in this repository"):
        statuses_at(fixture, ref)


def test_not_a_git_repository_is_a_file_error(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    with pytest.raises(FileError, match="not a git repository"):
        statuses_at(tmp_path, "HEAD")


def test_plan_files_through_symlinks_of_the_revisions_tree(tmp_path: Path) -> None:
    """plans/ a link to docs/plans, one plan a link to a file elsewhere, one link out of the tree, one not UTF-8."""
    root = tmp_path / "links"
    (root / "docs/plans").mkdir(parents=True)
    (root / "elsewhere").mkdir()
    (root / "docs/plans/0001-verify-kernel.md").write_text(report_fixture.PLAN_KERNEL)
    (root / "elsewhere/engine.md").write_text(report_fixture.PLAN_ENGINE)
    os.symlink("docs/plans", root / "plans")
    os.symlink("../../elsewhere/engine.md", root / "docs/plans/0002-engine.md")
    os.symlink("../../../outside.md", root / "docs/plans/0003-out.md")
    (root / "docs/plans/0004-latin.md").write_bytes(b"# caf\xe9\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plans through links")
    for rel in ("docs/plans/0001-verify-kernel.md", "elsewhere/engine.md"):
        (root / rel).write_text("# edited since\n")  # the working tree's text is not the revision's
    at = statuses_at(root, "HEAD")
    assert [p.id for p in at.plans] == ["0001", "0002"]
    assert {i.path: i.problems for i in at.invalid} == {
        "plans/0003-out.md": ["plans/0003-out.md: refused: not a regular file of the revision's tree"],
        "plans/0004-latin.md": ["plans/0004-latin.md: not UTF-8 text (byte 5: invalid continuation byte)"],
    }
    assert set(at.statuses) == set(DOCUMENTED["c1"])


def test_a_test_gate_path_linked_out_of_the_revisions_tree_meets_nothing_there(tmp_path: Path) -> None:
    """Lint's rule (tracker.base.gate_paths) holds at a revision as on a checkout of it: a gate whose path leaves REF's tree
    through a symlink is unmet there, whatever evidence says (here a run by a plugin from before provenance.outside).
    The revision's statuses ignored the rule, so a summary showed 'done' at REF for the phase status calls planned.
    A loop is not called outside (the working tree's rule cannot look at it either), a link inside is fine."""
    from tracker_testutil import phase, plan_text

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_x.py").write_text("def test_x():\n    pass\n")
    root = tmp_path / "repo"
    (root / "plans").mkdir(parents=True)
    gates = {"P1": "tests/test_link.py", "P2": "tests/ext/test_x.py", "P3": "tests/test_alias.py", "P4": "tests/loop"}
    phases = "".join(phase(ph, f'test = "{test}"') for ph, test in gates.items())
    (root / "plans/0001-demo.md").write_text(plan_text(phases=phases))
    (root / "tests").mkdir()
    (root / "tests/test_real.py").write_text("def test_x():\n    pass\n")
    os.symlink(outside / "test_x.py", root / "tests/test_link.py")
    os.symlink("../../outside", root / "tests/ext")
    os.symlink("test_real.py", root / "tests/test_alias.py")
    os.symlink("loop", root / "tests/loop")
    (root / ".tracker/evidence").mkdir(parents=True)
    tests = [
        {"nodeid": f"{t}::test_x", "outcome": "passed", "reason": "", "duration": 0.1, "markers": []}
        for t in gates.values()
    ]
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    run = {
        "schema": "tracker-test-run", "version": 1, "status": "complete",
        "provenance": {"time": "2026-11-29T11:02:03Z", "host": "h", "commit": git(root, "rev-parse", "HEAD").strip(),
                       "dirty": False, "args": ["tests"]},
        "gates": {}, "files": tree_file_ids(root), "tests": tests, "rootdir": "repo",
    }  # fmt: skip
    (root / ".tracker/evidence/20261129T110203Z-h-r1.json").write_text(json.dumps(run))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "evidence")
    at = {k: (v.status.value, v.verdicts[0].met) for k, v in statuses_at(root, "HEAD").statuses.items()}
    there = {k: (v.status.value, v.verdicts[0].met) for k, v in on_checkout(root, "HEAD", tmp_path / "co").items()}
    assert at == there
    assert at == {"0001/P1": ("planned", False), "0001/P2": ("planned", False), "0001/P3": ("done", True),
                  "0001/P4": ("done", True)}  # fmt: skip
    reason = statuses_at(root, "HEAD").statuses["0001/P2"].verdicts[0].reason
    assert reason.startswith("test path 'tests/ext/test_x.py' leaves the repository through a symlink"), reason


# --- the pure parts ---------------------------------------------------------------------------------------------


def entry(oid: str = "a" * 40, mode: str = "100644") -> TreeEntry:
    return TreeEntry(mode, "blob", oid)


def test_pick_sorts_the_revisions_files() -> None:
    entries = {
        "plans/0001-a.md": entry("1" * 40),
        "plans/notes.md": entry(),
        "plans/0002-b.md/inside.md": entry(),  # a folder named like a plan: refused, as status refuses it
        ".tracker/evidence/r1.json": entry("2" * 40),
        ".tracker/evidence/sub/r2.json": entry(),
        ".tracker/evidence/.r1.json.running": entry(),
        ".tracker/.gitignore": entry(),
        "bench/results/b1.json": entry("3" * 40),
        "bench/results/old/b0.json": entry(),
        "src/a.py": entry("4" * 40),
    }
    picked = pick(entries, lambda oid: "")
    assert picked.plans == {"plans/0001-a.md": "plans/0001-a.md", "plans/0002-b.md": ""}
    assert picked.evidence == {"r1.json": "2" * 40}
    assert picked.results == {"bench/results/b1.json": "3" * 40}
    assert ".tracker/evidence/r1.json" not in picked.code and picked.code["src/a.py"] == "4" * 40


names = st.text(alphabet="ab.", min_size=1, max_size=3)
paths = st.lists(names, min_size=1, max_size=4).map("/".join)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(paths, st.one_of(st.none(), st.lists(st.sampled_from(["..", ".", "a", "b", "/", "a.b"]),
                                                              min_size=1, max_size=4).map("/".join)), max_size=8),
       paths)  # fmt: skip
def test_links_resolve_inside_the_tree_or_not_at_all(tree: dict[str, str | None], path: str) -> None:
    """Hostile trees: links in circles, out of the top, through each other. Always ends; never leaves the tree."""
    entries = {p: entry(str(i).rjust(40, "0"), "120000" if t is not None else "100644") for i, (p, t) in
               enumerate(tree.items())}  # fmt: skip
    targets = {e.id: t for (p, t), e in zip(tree.items(), entries.values(), strict=True) if t is not None}
    got = resolve_link(entries, path, lambda oid: targets[oid])
    assert got is None or not (got.startswith("/") or got == ".." or got.startswith("../") or "/../" in got)
    picked = pick(entries, lambda oid: targets[oid])
    assert all(t == "" or t in entries for t in picked.plans.values())


CYCLE = report_fixture.PLAN_ENGINE.replace('depends = ["0001/P1"]', 'depends = ["P2"]')
UNKNOWN = report_fixture.PLAN_ENGINE.replace('depends = ["0001/P1"]', 'depends = ["0009/P1"]')
BROKEN = report_fixture.PLAN_KERNEL.replace('id = "P3"', "id = 3")


@pytest.mark.parametrize(
    "files",
    [
        {"0001-k.md": report_fixture.PLAN_KERNEL, "0002-e.md": report_fixture.PLAN_ENGINE},
        {"0001-k.md": report_fixture.PLAN_KERNEL, "0002-e.md": report_fixture.PLAN_ENGINE,
         "0003-copy.md": report_fixture.PLAN_ENGINE},  # a duplicate id: both files invalid
        {"0001-k.md": report_fixture.PLAN_KERNEL, "0002-e.md": CYCLE},
        {"0001-k.md": report_fixture.PLAN_KERNEL, "0002-e.md": UNKNOWN},
        {"0001-k.md": BROKEN, "0002-e.md": report_fixture.PLAN_ENGINE},  # 0002 depends into a broken file
        {"0002-e.md": report_fixture.PLAN_ENGINE},
    ],
)  # fmt: skip
def test_plan_set_decides_validity_as_load_plan_set_does(tmp_path: Path, files: dict[str, str]) -> None:
    from tracker.plans.load import load_plan_set

    for name, text in files.items():
        (tmp_path / "plans").mkdir(exist_ok=True)
        (tmp_path / "plans" / name).write_text(text)
    plans, invalid = plan_set(load_files(tmp_path, cache=Cache(None)))
    want = load_plan_set(tmp_path, cache=Cache(None))
    assert (plans, invalid) == (want.plans, want.invalid)


@pytest.fixture(scope="module")
def store_files(fixture: Path) -> dict[str, bytes]:
    folder = fixture / ".tracker/evidence"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_store_at_a_revision_is_the_store_of_its_files(
    store_files: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """For any subset of the store's files, some of them gone now: what a store of exactly those files loads."""
    names = sorted(store_files)
    kept = data.draw(st.lists(st.sampled_from(names), unique=True))
    gone = data.draw(st.lists(st.sampled_from(kept), unique=True)) if kept else []
    now_dir = tmp_path_factory.mktemp("now")
    then_dir = tmp_path_factory.mktemp("then")
    for name, raw in store_files.items():
        for root, wanted in ((now_dir, name not in gone), (then_dir, name in kept)):
            if wanted:
                (root / ".tracker/evidence").mkdir(parents=True, exist_ok=True)
                (root / ".tracker/evidence" / name).write_bytes(raw)
    current = load(now_dir, strict=False)
    got = store_at(current, kept, {n: parse_document(store_files[n]) for n in gone})
    want = load(then_dir, strict=False)
    assert (got.runs, got.signoffs, got.bench, got.invalid) == (want.runs, want.signoffs, want.bench, want.invalid)


def test_a_gone_file_that_cannot_be_used_is_listed_as_invalid(fixture: Path) -> None:
    current = load(fixture, strict=False)
    got = store_at(current, ["x.json"], {"x.json": "not a readable evidence file: broken"})
    assert got.invalid == [".tracker/evidence/x.json: not a readable evidence file: broken"]
    assert got.runs == [] and got.signoffs == []


def test_the_revision_cache_reads_through_and_keeps_only_content_facts() -> None:
    base = Cache(None)
    base.folder = Path("/nonexistent")  # put() keeps entries only for a cache with a folder
    rev = revision_cache(base)
    base.put("plans", "k", {"a": 1})
    assert rev.read("plans", "k") == {"a": 1}
    rev.put("bench-verdicts", "k2", {"b": 2})
    rev.put("result-ids", "k4", {"d": 4})
    rev.put("bootstrap", "k3", {"c": 3.0})
    assert base.read("bench-verdicts", "k2") is None and rev.read("bench-verdicts", "k2") == {"b": 2}
    assert base.read("revision-bench-verdicts", "k2") == {"b": 2}
    assert base.read("result-ids", "k4") is None and rev.read("result-ids", "k4") == {"d": 4}
    assert base.read("bootstrap", "k3") == {"c": 3.0}
    assert rev.memo("result-runs") is base.memo("result-runs")


def test_odd_file_names_and_missing_blobs_in_git_plumbing(tmp_path: Path) -> None:
    from tracker.git.log import read_blobs, revision_tree

    root = tmp_path / "odd"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    odd = [b"new\nline.py", b"tab\there.py", b"caf\xe9.py", b"sp ace.py", "ünï.py".encode()]
    for raw in odd:
        with open(os.path.join(os.fsencode(root), raw), "wb") as fh:
            fh.write(raw)
    os.symlink("sp ace.py", root / "link.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd names")
    commit, entries = revision_tree(root, "HEAD")
    assert commit == git(root, "rev-parse", "HEAD").strip()
    assert {os.fsencode(p) for p in entries} == {*odd, b"link.py"}
    assert entries["link.py"].mode == "120000"
    assert read_blobs(root, [entries["link.py"].id]) == {entries["link.py"].id: b"sp ace.py"}
    ids = {p: file_id(e.id, e.mode) for p, e in entries.items()}  # what fingerprints record: the link's mode folded in
    assert FileIndex(tree_file_ids(root)).files == ids and ids["link.py"] != entries["link.py"].id
    with pytest.raises(FileError, match="not a blob here"):
        read_blobs(root, ["0" * 40])
