"""``tracker hook install [--uninstall]``: real ``git commit``s through the installed prepare-commit-msg hook, an
existing hook chained and put back byte for byte, core.hooksPath, and a tracker that fails never stopping a commit."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import report_fixture

from tests.tracker.commands.test_summary import NEW_RESULT, NEW_RUN, new_evidence
from tracker.commands import hook

IDENTITY = {**report_fixture.IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(
    root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """git as a person runs it (hooks and all), outside any user or system configuration."""
    full = {**os.environ, **IDENTITY, **(env or {})}
    full.pop("GIT_DIR", None)
    full.pop("GIT_INDEX_FILE", None)
    return subprocess.run(["git", *args], cwd=root, env=full, capture_output=True, text=True, check=check)


def message(root: Path) -> str:
    return git(root, "log", "-1", "--format=%B").stdout


def trailers(root: Path) -> list[str]:
    """The trailers git reads in the last commit's message."""
    return git(root, "log", "-1", "--format=%(trailers:only,unfold)").stdout.strip().splitlines()


def folder(path: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry of a folder: its bytes (a symlink: its target) and its mode."""
    out: dict[str, tuple[bytes | str, int]] = {}
    for entry in sorted(path.iterdir()) if path.exists() else []:
        st = entry.lstat()
        content = os.readlink(entry) if entry.is_symlink() else "dir" if entry.is_dir() else entry.read_bytes()
        out[entry.name] = (content, st.st_mode)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return report_fixture.build(tmp_path_factory.mktemp("fixture") / "repo")


@pytest.fixture
def repo(built: Path, tmp_path: Path) -> Path:
    """The fixture repository at c5, with uncommitted new evidence (0001/P2 and 0001/P3 done by it)."""
    return new_evidence(Path(shutil.copytree(built, tmp_path / "repo", symlinks=True)))


WANT = ["Phase-Done: 0001/P2", "Phase-Done: 0001/P3", f"Evidence: {NEW_RUN}", f"Evidence: {NEW_RESULT}"]


def test_a_commit_with_a_message_keeps_it_and_gets_the_trailers(repo: Path, cli: Callable[..., Any]) -> None:
    got = cli(repo, "hook", "install")
    assert got.code == 0 and "installed" in got.out
    git(repo, "add", "-A")
    done = git(repo, "commit", "-q", "-m", "evidence: the kernel is fast again")
    assert "warning" not in done.stderr
    assert message(repo) == "evidence: the kernel is fast again\n\n" + "\n".join(WANT) + "\n\n"
    assert trailers(repo) == WANT


@pytest.mark.parametrize(
    ("config", "text", "drafted"),
    [
        ([], "#123 fix the engine", False),
        ([], "#123 fix the engine\n\n#45 too", False),
        (["-c", "core.commentChar=;"], "fix the engine\n\n; see #45", True),
        (["-c", "commit.cleanup=verbatim"], "#123 fix the engine", False),
        ([], "#123 fix the engine\n\nbody", True),
    ],
)
def test_a_message_given_with_m_is_kept_whatever_its_first_character(
    repo: Path, cli: Callable[..., Any], config: list[str], text: str, drafted: bool
) -> None:
    """Without an editor git keeps every line of a -m message (no comment is stripped), so neither may the hook:
    "#123 fix" stays the subject (it was taken for a comment, and the whole summary put above it as the subject; a
    last line taken for a comment ended up after the trailers). It gets the trailers where some line of it is no
    comment: the hook cannot see a --cleanup=strip on git's command line, and under it git aborts a message of
    comments alone, which the trailers would have made a commit of trailers."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo, *config, "commit", "-q", "-m", text)
    assert message(repo) == text + "\n\n" + ("\n".join(WANT) + "\n\n" if drafted else "")
    assert trailers(repo) == (WANT if drafted else [])


@pytest.mark.parametrize(
    "args",
    [
        ["-c", "commit.cleanup=strip", "commit", "-m", "#123 fix"],
        ["commit", "--cleanup=strip", "-m", "#123 fix"],
        ["commit", "--cleanup=strip", "-m", "#123 fix", "-m", "# 45"],
        ["commit", "-m", ""],
        ["commit", "--no-edit"],
        ["commit", "--allow-empty", "--no-edit"],
    ],
)
def test_a_commit_git_aborts_is_aborted_with_the_hook_too(repo: Path, cli: Callable[..., Any], args: list[str]) -> None:
    """Without an editor git aborts a commit whose message is empty once cleaned: "#123 fix" under
    --cleanup=strip (or commit.cleanup=strip), an empty -m, --no-edit with no message. The hook made each a commit:
    of the trailers alone (git stripped the subject), or of the whole summary. It writes nothing now where no line
    would be left: git aborts as it does without the hook."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    head = git(repo, "rev-parse", "HEAD").stdout
    refused = git(repo, *args, check=False)
    assert refused.returncode != 0 and "empty commit message" in refused.stderr, refused
    assert git(repo, "rev-parse", "HEAD").stdout == head


def test_a_message_git_strips_in_part_gets_the_trailers(repo: Path, cli: Callable[..., Any]) -> None:
    """With commit.cleanup=strip, -m "#123 fix" -m body: git keeps "body", and it gets the trailers."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    done = git(repo, "-c", "commit.cleanup=strip", "commit", "-q", "-m", "#123 fix", "-m", "body")
    assert "warning" not in done.stderr
    assert message(repo) == "body\n\n" + "\n".join(WANT) + "\n\n"
    assert trailers(repo) == WANT


def test_bullets_are_stars_where_the_comment_character_is_a_dash(repo: Path, cli: Callable[..., Any]) -> None:
    """With core.commentChar=- git stripped every bullet of the drafted body ("- 0001/P2 ...: planned -> done"):
    the status transitions vanished from the commit. The bullets are "* " then, and every line is kept."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    drafted = cli(repo, "summary").out
    assert "\n- 0001/P2 " in drafted
    git(repo, "-c", "core.commentChar=-", "commit", "-q", env={"GIT_EDITOR": "true"})
    want = "".join("* " + x[2:] if x.startswith("- ") else x for x in drafted.splitlines(keepends=True))
    assert message(repo) == want + "\n" and trailers(repo) == WANT


@pytest.mark.parametrize("char", ["P", "E", "0", "S"])  # git 2.39 takes one character alone
@pytest.mark.parametrize(
    "args",
    [
        [],  # the editor opens on no message: the whole summary
        ["-e", "-m", "fix the engine"],  # the editor opens on a message: the trailers
        ["--cleanup=strip", "-m", "fix the engine"],
        ["-m", "fix the engine"],  # git strips nothing, unless its command line says --cleanup=strip
    ],
)
def test_no_drafted_line_starts_with_the_comment_character(
    repo: Path, cli: Callable[..., Any], char: str, args: list[str]
) -> None:
    """git strips every line that starts with core.commentChar: with P the Phase-* trailers, with E the Evidence
    ones (the commit claimed part of what it proved), with 0 the subject ("0001/P2, 0001/P3 done"). A draft that
    git would cut is not written: the commit gets the trailers where none starts with the character, else it goes
    as it would without the hook (the editor's empty message: aborted)."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    head = git(repo, "rev-parse", "HEAD").stdout
    done = git(repo, "-c", f"core.commentChar={char}", "commit", "-q", *args, env={"GIT_EDITOR": "true"}, check=False)
    if not args:
        assert done.returncode != 0 and "empty commit message" in done.stderr
        assert git(repo, "rev-parse", "HEAD").stdout == head
        return
    assert done.returncode == 0, done.stderr
    kept = not any(t.startswith(char) for t in WANT)
    assert message(repo) == "fix the engine\n\n" + ("\n".join(WANT) + "\n\n" if kept else "")
    assert trailers(repo) == (WANT if kept else [])


@pytest.mark.parametrize(
    ("config", "args", "want"),
    [
        (["commit.cleanup=strip", "core.commentChar=auto"], ["-m", "#123 fix"], "#123 fix"),
        (["commit.cleanup=strip", "core.commentChar=auto"], ["-m", "#123 fix\n;45\n\n@ too"], "#123 fix\n;45\n\n@ too"),
        (["core.commentChar=auto"], ["-e", "-m", "#123 fix"], "#123 fix"),
        (["core.commentChar=AUTO"], ["-e", "-m", "#123 fix"], "#123 fix"),
        (["core.commentChar=auto"], [], None),
        (["core.commentChar=AUTO"], [], None),
    ],
)
def test_comment_char_auto_is_the_character_git_picks(
    repo: Path, cli: Callable[..., Any], config: list[str], args: list[str], want: str | None
) -> None:
    """With core.commentChar=auto (any case) git comments with the first of "#;@!$%^&|:" that starts no line of
    the message: "#123 fix" is the message then, even where git strips comments. The hook read "auto" as "#" (the
    summary went above the subject, which ended up after the trailers) and "AUTO" as "A" (git's own comments were
    taken for a message: the commit got the trailers alone)."""
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    options = [x for c in config for x in ("-c", c)]
    git(repo, *options, "commit", "-q", *args, env={"GIT_EDITOR": "true"})
    text = message(repo)
    if want is None:
        assert text.startswith("0001/P2, 0001/P3 done\n\nStatus at HEAD (") and "Please enter" not in text
    else:
        assert text == want + "\n\n" + "\n".join(WANT) + "\n\n"
    assert trailers(repo) == WANT


def test_a_message_through_the_editor_still_drops_gits_comments(repo: Path, cli: Callable[..., Any]) -> None:
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-e", "-m", "by hand", env={"GIT_EDITOR": "true"})
    assert message(repo) == "by hand\n\n" + "\n".join(WANT) + "\n\n"


def test_the_trailers_are_the_commits_not_the_working_trees(repo: Path, cli: Callable[..., Any]) -> None:
    """The new evidence is in the working tree but not staged: a commit of README.md alone proves nothing, and got
    "Phase-Done: 0001/P2 ... Evidence: <a file not in the commit>" (the summary judged the working tree). In the
    hook the change is what git commits: its index."""
    cli(repo, "hook", "install")
    (repo / "README.md").write_text("# docs\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "docs only")
    assert message(repo) == "docs only\n\n" and trailers(repo) == []
    git(repo, "add", NEW_RUN)
    git(repo, "commit", "-q", "-m", "the run alone")  # the result file still not added: 0001/P2 waits for it
    assert trailers(repo) == [f"Evidence: {NEW_RUN}"]
    (repo / "src/kernel.py").write_text("# edited, not staged\n")
    git(repo, "add", NEW_RESULT)
    git(repo, "commit", "-q", "-m", "the result")
    assert trailers(repo) == ["Phase-Done: 0001/P2", "Phase-Done: 0001/P3", f"Evidence: {NEW_RESULT}"]
    git(repo, "commit", "-q", "-a", "-m", "the kernel edit")  # -a: git's own index of the commit
    assert "Phase-Stale: 0001/P1" in trailers(repo)


def test_a_commit_through_the_editor_gets_the_whole_summary(repo: Path, cli: Callable[..., Any]) -> None:
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", env={"GIT_EDITOR": "true"})  # the editor keeps what the hook wrote
    text = message(repo)
    assert text.startswith("0001/P2, 0001/P3 done\n\nStatus at HEAD (")
    assert "Benchmarks:" in text and "Please enter the commit message" not in text  # git's comments stripped
    assert not any(line.startswith("#") for line in text.splitlines())
    assert trailers(repo) == WANT


FORGED = ("Phase-Done: 0002", "Tracker-Status: done", "Signed-off-by: M <m@x>")  # a file name holds no "/"


@pytest.mark.parametrize("editor", [False, True])
def test_a_file_name_with_line_breaks_forges_no_trailer(repo: Path, cli: Callable[..., Any], editor: bool) -> None:
    """git takes any byte but NUL in a file name: an evidence file named "r\\nPhase-Done: 0002.json" is one
    trailer, its breaks and control characters shown as spaces and escapes, never a line of its own."""
    one, two, three = FORGED
    for name in (f"r\n{one}\n\n{three}.json", f"r\r{two}\x1b[2J\u2028{one}\x85\n{three}.json"):
        shutil.copyfile(repo / NEW_RUN, repo / ".tracker/evidence" / name)
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", *([] if editor else ["-m", "hostile names"]), env={"GIT_EDITOR": "true"})
    assert not any(line.startswith(FORGED) for line in message(repo).splitlines())
    assert all(line.isprintable() for line in message(repo).splitlines())
    assert not any(t.startswith(FORGED) for t in trailers(repo))
    assert [t for t in trailers(repo) if one in t] == [
        f"Evidence: .tracker/evidence/r {one}  {three}.json",
        f"Evidence: .tracker/evidence/r {two}\\x1b[2J\\u2028{one}\\x85 {three}.json",
    ]


def test_a_commit_from_a_subdirectory(repo: Path, cli: Callable[..., Any]) -> None:
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo / "src", "commit", "-q", "-m", "from src/")
    assert trailers(repo) == WANT


def test_an_existing_hook_is_chained_runs_first_and_is_put_back_byte_for_byte(
    repo: Path, cli: Callable[..., Any]
) -> None:
    hooks = repo / ".git/hooks"
    old = hooks / "prepare-commit-msg"
    old.write_bytes(b'#!/bin/sh\necho "ran: $2" >> "$(git rev-parse --git-dir)/old-hook.log"\nprintf "\\nReviewed-by: B <b@x>\\n" >> "$1"\n')  # fmt: skip
    old.chmod(0o750)
    before = folder(hooks)
    got = cli(repo, "hook", "install")
    assert got.code == 0 and "prepare-commit-msg.before-tracker" in got.out
    assert (hooks / "prepare-commit-msg.before-tracker").read_bytes() == before["prepare-commit-msg"][0]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "with both hooks")
    assert (repo / ".git/old-hook.log").read_text() == "ran: message\n"
    assert trailers(repo) == ["Reviewed-by: B <b@x>", *WANT]  # the old hook's trailer first: it ran first
    got = cli(repo, "hook", "install", "--uninstall")
    assert got.code == 0
    assert folder(hooks) == before  # bytes and mode, nothing else left


def test_a_chained_hook_that_fails_still_stops_the_commit(repo: Path, cli: Callable[..., Any]) -> None:
    (repo / ".git/hooks/prepare-commit-msg").write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    (repo / ".git/hooks/prepare-commit-msg").chmod(0o755)
    cli(repo, "hook", "install")
    head = git(repo, "rev-parse", "HEAD").stdout
    git(repo, "add", "-A")
    refused = git(repo, "commit", "-q", "-m", "nope", check=False)
    assert refused.returncode != 0 and "no commits today" in refused.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == head


def test_a_symlinked_hook_is_put_back_as_the_same_link(repo: Path, cli: Callable[..., Any]) -> None:
    hooks = repo / ".git/hooks"
    (repo / "tools").mkdir()
    (repo / "tools/hook.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "tools/hook.sh").chmod(0o755)
    os.symlink("../../tools/hook.sh", hooks / "prepare-commit-msg")
    before = folder(hooks)
    cli(repo, "hook", "install")
    assert os.readlink(hooks / "prepare-commit-msg.before-tracker") == "../../tools/hook.sh"
    cli(repo, "hook", "install", "--uninstall")
    assert folder(hooks) == before


def test_a_hook_that_is_a_directory_is_put_back_without_a_traceback(repo: Path, cli: Callable[..., Any]) -> None:
    """git cannot run a directory as a hook (the commit fails, as it did before the install); uninstall renamed it
    back over the tracker's hook file: NotADirectoryError, a traceback."""
    hooks = repo / ".git/hooks"
    (hooks / "prepare-commit-msg").mkdir()
    (hooks / "prepare-commit-msg/notes").write_text("mine\n")
    before = folder(hooks)
    assert cli(repo, "hook", "install").code == 0
    assert (hooks / "prepare-commit-msg.before-tracker/notes").read_text() == "mine\n"
    got = cli(repo, "hook", "install", "--uninstall")
    assert (got.code, got.err) == (0, "")
    assert folder(hooks) == before and (hooks / "prepare-commit-msg/notes").read_text() == "mine\n"


def test_install_and_uninstall_without_a_hook_before(repo: Path, cli: Callable[..., Any]) -> None:
    hooks = repo / ".git/hooks"
    before = folder(hooks)
    assert cli(repo, "hook", "install").code == 0
    installed = (hooks / "prepare-commit-msg").read_bytes()
    assert stat.S_IMODE((hooks / "prepare-commit-msg").stat().st_mode) == 0o755
    again = cli(repo, "hook", "install")
    assert again.code == 0 and "already installed" in again.out
    assert (hooks / "prepare-commit-msg").read_bytes() == installed
    assert cli(repo, "hook", "install", "--uninstall").code == 0
    assert folder(hooks) == before
    nothing = cli(repo, "hook", "install", "--uninstall")
    assert nothing.code == 0 and "not installed" in nothing.out


@pytest.mark.parametrize("where", ["relative", "absolute", "shared"])
def test_core_hooks_path_is_honoured(repo: Path, cli: Callable[..., Any], tmp_path: Path, where: str) -> None:
    paths = {"relative": ".githooks", "absolute": str(repo / ".githooks"), "shared": str(tmp_path / "shared-hooks")}
    path = paths[where]
    git(repo, "config", "core.hooksPath", path)
    assert cli(repo, "hook", "install", *(["--shared"] if where == "shared" else [])).code == 0
    installed = (repo / path if where == "relative" else Path(path)) / "prepare-commit-msg"
    assert installed.is_file() and not (repo / ".git/hooks/prepare-commit-msg").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "through hooksPath")
    assert trailers(repo) == WANT
    assert cli(repo, "hook", "install", "--uninstall").code == 0
    assert not installed.exists()


def shared_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A global core.hooksPath (a user's ~/.gitconfig) naming a folder outside every repository: the folder, and
    the environment git runs with it (the tracker in this process reads it too)."""
    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {shared}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return shared, {"GIT_CONFIG_GLOBAL": str(config)}


def test_a_hooks_path_outside_the_repository_is_refused_without_shared(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global core.hooksPath is every repository's hooks folder: install wrote the tracker's hook there silently,
    and every repository's commits ran it. Refused now (exit 8, nothing written), saying how to install it there
    anyway: --shared."""
    shared, env = shared_hooks(tmp_path, monkeypatch)
    got = cli(repo, "hook", "install")
    assert got.code == 8 and "Traceback" not in got.err and got.out == ""
    assert f"{shared}: core.hooksPath is outside this repository" in got.err and "--shared" in got.err
    assert folder(shared) == {}
    link = repo / ".githooks"  # a folder in the repository that is a link to one outside: the same
    link.symlink_to(shared)
    git(repo, "config", "core.hooksPath", ".githooks")
    got = cli(repo, "hook", "install")
    assert got.code == 8 and "outside this repository" in got.err and folder(shared) == {}
    git(repo, "config", "--unset", "core.hooksPath")
    link.unlink()
    got = cli(repo, "hook", "install", "--shared")
    assert got.code == 0 and (shared / "prepare-commit-msg").is_file()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "through the shared hook", env=env)
    assert trailers(repo) == WANT
    assert cli(repo, "hook", "install", "--uninstall").code == 0 and folder(shared) == {}


@pytest.mark.parametrize("args", [[], ["--no-edit"], ["-m", ""], ["--cleanup=strip", "-m", "# nothing"]])
def test_a_repository_without_plans_commits_as_if_there_were_no_hook(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """Under a shared hook an unrelated repository (no plans) got a drafted message ("changes 1 file outside every
    phase's paths") for a commit git aborts (an empty message): it was committed. With no plan on either side the
    hook writes nothing: git aborts as it would without it, and a message given is left as it is."""
    shared, env = shared_hooks(tmp_path, monkeypatch)
    assert cli(repo, "hook", "install", "--shared").code == 0
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main", env=env)
    (other / "notes.txt").write_text("one\n")
    git(other, "add", "-A", env=env)
    git(other, "commit", "-q", "-m", "first", env=env)
    assert message(other) == "first\n\n"
    (other / "notes.txt").write_text("two\n")
    git(other, "add", "-A", env=env)
    head = git(other, "rev-parse", "HEAD").stdout
    refused = git(other, "commit", "-q", *args, env={**env, "GIT_EDITOR": "true"}, check=False)
    assert refused.returncode != 0 and "empty commit message" in refused.stderr
    assert git(other, "rev-parse", "HEAD").stdout == head and "warning" not in refused.stderr
    assert (shared / "prepare-commit-msg").is_file()  # it ran, and did nothing
    git(other, "commit", "-q", "-m", "by hand", env=env)
    assert message(other) == "by hand\n\n"


def hooks_linked_out(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(.git/hooks, the folder outside the repository it now links to), with no global git configuration."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    shared = tmp_path / "linked-hooks"
    shared.mkdir()
    hooks = repo / ".git/hooks"
    shutil.rmtree(hooks)
    hooks.symlink_to(shared)
    return hooks, shared


def test_a_hooks_folder_linked_out_without_a_hooks_path_is_refused_saying_so(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adversarial review L2: with .git/hooks a link to a folder outside and no core.hooksPath, the refusal said
    "core.hooksPath is outside" and advised `git config --local core.hooksPath .git/hooks`: the same link. It now
    names the link and where it leads."""
    hooks, shared = hooks_linked_out(repo, tmp_path, monkeypatch)
    got = cli(repo, "hook", "install")
    assert got.code == 8 and "Traceback" not in got.err and got.out == "" and folder(shared) == {}
    assert got.err == (
        f"tracker: error: {hooks}: the hooks folder is a link to {shared}, outside this repository: every repository "
        "whose hooks are there would run the tracker's hook; install it there anyway with `tracker hook install "
        f"--shared`, or make {hooks} a folder of this repository (remove the link)\n"
    ), got.err
    assert cli(repo, "hook", "install", "--shared").code == 0 and (shared / "prepare-commit-msg").is_file()


def test_a_hooks_path_of_the_repository_that_links_out_is_refused_naming_the_link(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """adv (low): with core.hooksPath set to .git/hooks, itself a link out, the refusal advised setting core.hooksPath
    to .git/hooks: what it already was. It names the link, as without core.hooksPath."""
    _, shared = hooks_linked_out(repo, tmp_path, monkeypatch)
    subprocess.run(["git", "config", "--local", "core.hooksPath", ".git/hooks"], cwd=repo, check=True)
    got = cli(repo, "hook", "install")
    assert got.code == 8 and folder(shared) == {}, got.err
    assert "the hooks folder is a link to" in got.err and "core.hooksPath .git/hooks" not in got.err, got.err


def test_a_failing_tracker_never_stops_a_commit(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "python-broken"
    broken.write_text("#!/bin/sh\necho 'Traceback: the tracker broke' >&2\nexit 7\n")
    broken.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(broken))  # the Python the hook will run tracker with
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    done = git(repo, "commit", "-q", "-m", "despite tracker")
    assert "tracker: warning:" in done.stderr and "(exit 7)" in done.stderr
    assert message(repo) == "despite tracker\n\n"
    broken.unlink()  # the Python gone altogether: the same
    (repo / "src/kernel.py").write_text("# more\n")
    git(repo, "commit", "-q", "-am", "python gone")
    assert message(repo) == "python gone\n\n"


def test_amend_merge_and_squash_keep_their_message(repo: Path, cli: Callable[..., Any]) -> None:
    cli(repo, "hook", "install")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    assert message(repo) == "amended\n\n"
    git(repo, "checkout", "-q", "-b", "side", "c4")
    (repo / "src/other.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "side work")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert message(repo) == "merge side\n\n"
    git(repo, "checkout", "-q", "-b", "squashed", "c5")
    git(repo, "merge", "-q", "--squash", "side")
    git(repo, "commit", "-q", env={"GIT_EDITOR": "true"})
    assert "Phase-" not in message(repo) and message(repo).startswith("Squashed commit of the following:")


def test_the_first_commit_of_a_repository(tmp_path: Path, cli: Callable[..., Any]) -> None:
    root = tmp_path / "new"
    (root / "plans").mkdir(parents=True)
    (root / "plans/0001-k.md").write_text(report_fixture.PLAN_KERNEL)
    git(root, "init", "-q", "-b", "main")
    cli(root, "hook", "install")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plans")
    assert trailers(root) == ["Phase-Blocked: 0001/P2", "Phase-Blocked: 0001/P3", "Phase-Planned: 0001/P1"]


def test_a_hook_set_aside_before_is_never_overwritten(repo: Path, cli: Callable[..., Any]) -> None:
    hooks = repo / ".git/hooks"
    (hooks / "prepare-commit-msg").write_text("#!/bin/sh\n# mine\n")
    (hooks / "prepare-commit-msg.before-tracker").write_text("#!/bin/sh\n# left from before\n")
    before = folder(hooks)
    got = cli(repo, "hook", "install")
    assert got.code == 8 and "set aside by an earlier install" in got.err and "Traceback" not in got.err
    assert folder(hooks) == before
    (hooks / "prepare-commit-msg").unlink()
    before = folder(hooks)
    assert cli(repo, "hook", "install").code == 8  # no hook, but one set aside: still not chained silently
    assert folder(hooks) == before


def test_a_tracker_hook_edited_by_hand_is_left_alone(repo: Path, cli: Callable[..., Any]) -> None:
    hooks = repo / ".git/hooks"
    cli(repo, "hook", "install")
    edited = (hooks / "prepare-commit-msg").read_text() + "echo mine\n"
    (hooks / "prepare-commit-msg").write_text(edited)
    for args in (("hook", "install"), ("hook", "install", "--uninstall")):
        got = cli(repo, *args)
        assert got.code == 8 and "edited by hand" in got.err
        assert (hooks / "prepare-commit-msg").read_text() == edited


def test_a_foreign_hook_is_not_uninstalled(repo: Path, cli: Callable[..., Any]) -> None:
    hooks = repo / ".git/hooks"
    (hooks / "prepare-commit-msg").write_text("#!/bin/sh\n# someone else's\n")
    before = folder(hooks)
    got = cli(repo, "hook", "install", "--uninstall")
    assert got.code == 0 and "not the tracker's hook" in got.out
    assert folder(hooks) == before


@pytest.mark.parametrize("python", ["/usr/bin/python3", "/opt/it's here/python", "/p/$(rm -rf x)/`x`/python"])
def test_the_script_names_its_python_safely_and_knows_itself(python: str) -> None:
    text = hook.script(python)
    assert hook.ours(text) is True and hook.ours(text + "\n") is False and hook.ours("#!/bin/sh\n") is None
    out = subprocess.run(["sh", "-c", text.split("python=", 1)[1].split("\n", 1)[0].join(["x=", '; printf %s "$x"'])],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert out == python


@pytest.mark.parametrize("shadow", ["json.py", "subprocess.py", "tracker/__init__.py"])
def test_a_commit_runs_no_module_of_the_repository_s_root(
    repo: Path, cli: Callable[..., Any], tmp_path: Path, shadow: str
) -> None:
    """Round 20, N3: the hook ran `python -m tracker`, which puts the repository's root first on the import path, so
    a root `json.py` (or `subprocess.py`, or a `tracker/` folder) ran on `git commit`: in any repository, under a
    `--shared` hook. The hook runs Python with -P; the trailers are the tracker's, drafted as ever."""
    marker = tmp_path / "ran"
    assert cli(repo, "hook", "install").code == 0
    (repo / shadow).parent.mkdir(exist_ok=True)
    (repo / shadow).write_text(f"open({str(marker)!r}, 'w').close()\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "evidence: the kernel is fast again")
    assert not marker.exists()
    assert trailers(repo) == WANT
