"""verify's bench commands (tracker/commands/verify_bench.py): plain words run directly, shell syntax through the shell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tracker_testutil import phase, plan_text


def bench_repo(repo, run: str, extra: dict[str, str] | None = None) -> Path:
    """A repository with one bench gate whose `run` is ``run`` and a script writing a result that meets it."""
    from resultfiles import case, result, writer_script

    doc = result([case("m.time_us", {"impl": "cuda"}, [100.0] * 5)], files={"kernel/k.cu": b"// k\n"})
    writer = writer_script(doc, echo=True)
    gate = f'bench = "m.time_us"\nwhere = {{ impl = "cuda" }}\nat_most = 200.0\nmin_samples = 3\nrun = "{run}"'
    return repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", gate)),
            "make_result.py": writer,
            "kernel/k.cu": "// k\n",
            **(extra or {}),
        }
    )


@pytest.mark.parametrize(
    "command",
    [
        "python bench.py",
        "  python\tbench.py --n 3 ",
        "./run-bench",
        "/usr/bin/env python -V",
        "python bench.py --out results/a.json",
        "bench ü,+@:^.-/",
    ],
)
def test_plain_words_run_without_a_shell(command: str) -> None:
    from tracker.commands.verify_bench import command_words

    assert command_words(command) == command.replace("\t", " ").split()


@pytest.mark.parametrize(
    "command",
    [
        "python b.py > out",
        "a | b",
        "a && b",
        "a; b",
        "a & b",
        "(a)",
        "echo $HOME",
        "echo `date`",
        "echo ~",
        "ls *.json",
        "ls ?",
        "ls [ab]",
        "echo {a,b}",
        "a # note",
        "FOO=1 python b.py",
        "python b.py --size=3",
        "echo 'a b'",
        'echo "a b"',
        "echo a\\ b",
        "a\nb",
        "! false",
        "%1",
        "cd bench",
        "exit 3",
        "export A",
        ". ./env",
        "source env",
        "ulimit -n 64",
        "exec python b.py",
        "if",
        "time python b.py",
        "",
        "   ",
    ],
)
def test_shell_syntax_and_the_shell_s_own_words_go_to_the_shell(command: str) -> None:
    from tracker.commands.verify_bench import command_words

    assert command_words(command) is None


def test_verify_bench_runs_a_plain_command_directly(repo, cli) -> None:
    root = bench_repo(repo, f"{sys.executable} make_result.py a  b")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert f"tracker: [1/1] {sys.executable} make_result.py a  b  (for 0001/P1#1)\n" in r.out
    assert "writer args ['a', 'b']" in r.out and "met   0001/P1#1 m.time_us" in r.out


def test_verify_bench_runs_shell_syntax_through_the_shell_and_says_so(repo, cli) -> None:
    root = bench_repo(repo, f"{sys.executable} make_result.py 'a  b' && echo the shell ran it")
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert "(for 0001/P1#1; by /bin/sh: it uses shell syntax)\n" in r.out
    assert "writer args ['a  b']" in r.out and "the shell ran it\n" in r.out and "met   0001/P1#1 m.time_us" in r.out


def test_verify_bench_a_program_that_does_not_exist_is_unmet_with_the_reason(repo, cli) -> None:
    root = bench_repo(repo, "no-such-program-xyz --flag")
    r = cli(root, "verify", "--bench")
    assert r.code == 1
    assert "tracker: `no-such-program-xyz --flag`: cannot run no-such-program-xyz: No such file or directory\n" in r.out
    assert (
        "UNMET 0001/P1#1 m.time_us: `no-such-program-xyz --flag` exited with 127: its results are not used\n" in r.out
    )
    assert "sh:" not in r.err  # no shell was involved


def test_verify_bench_an_executable_script_without_a_shebang_runs_as_sh_would(repo, cli) -> None:
    root = bench_repo(repo, "./bench-script", {"bench-script": f"{sys.executable} make_result.py from-the-script\n"})
    (root / "bench-script").chmod(0o755)
    r = cli(root, "verify", "--bench")
    assert r.code == 0, r.out + r.err
    assert "writer args ['from-the-script']" in r.out and "(for 0001/P1#1)\n" in r.out
