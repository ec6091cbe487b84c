"""``tracker verify --bench``: run the selected bench gates' ``run`` commands, then take in what they wrote.

Each distinct command runs once (several gates may share it), in the repository root, with its own
output streaming through as progress. A result file that appeared or changed in the result
directories (``.tracker/evidence/``, ``bench/results/``) during the command is validated at once; an
invalid one stops verify with ``path: reason``. The gates of a command that fails or writes no result
file are reported unmet (whatever other results say). Gates met by a result whose measured files are
unchanged are not re-run unless ``force``. A gate still undecided after its command ran has the command run
again, its runs pooled (the same code on the same machine: tracker.core.bench_verdict), until the gate decides, or
:data:`~tracker.core.bench_verdict.MAX_POOLED` runs are pooled, or another run would take the command past
:data:`DECIDE_SECONDS`; verify then says which gates stayed undecided and why.

Plans are code, like a Makefile: a bench gate's ``run`` is executed as written. A string that is only
words separated by blanks (:func:`command_words`) runs directly, without a shell; one that uses shell
syntax (quotes, ``$``, pipes, redirections, globs, ``;`` and so on) or starts with a shell builtin or
keyword runs through ``/bin/sh -c``, and verify says so.
"""

from __future__ import annotations

import errno
import hashlib
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from tracker.base.cache import Cache
from tracker.core.bench_verdict import MAX_POOLED
from tracker.core.model import BenchGate, Phase, Plan
from tracker.errors import ExitCode
from tracker.store.bench_evaluator import Evaluator, RepoResults
from tracker.store.result_files import load_repo_results, load_result, repo_result_files

# An undecided gate's command runs again, its runs pooled (tracker.core.bench_verdict: the same code on the same
# machine), until the gate decides, MAX_POOLED runs are pooled, or another run would take the command past this many
# seconds.
DECIDE_SECONDS = 600.0

# Characters after which /bin/sh does more than split a line into words at blanks: quoting and escapes
# (" ' \\), expansions ($ ` ~ * ? [ ] and bash's { }), pipes, lists and redirections (| & ; < > ( )),
# comments (#), assignments (=), job and history syntax (% !), and line ends (a newline ends a command).
SHELL_SYNTAX = frozenset("\"'\\$`~*?[]{}|&;<>()#=%!\n\r")
# First words that are the shell's own (keywords, special and state-changing builtins): no program does
# what they do, so a command starting with one runs in the shell even without shell syntax.
SHELL_WORDS = frozenset(
    [
        "case",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "if",
        "in",
        "then",
        "until",
        "while",
        "select",
        "function",
        "time",
        ".",
        ":",
        "alias",
        "bg",
        "break",
        "builtin",
        "cd",
        "command",
        "continue",
        "declare",
        "eval",
        "exec",
        "exit",
        "export",
        "fc",
        "fg",
        "getopts",
        "hash",
        "jobs",
        "let",
        "local",
        "read",
        "readonly",
        "return",
        "set",
        "shift",
        "source",
        "times",
        "trap",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
    ]
)


def command_words(command: str) -> list[str] | None:
    """The words of a ``run`` string that needs no shell (split at spaces and tabs, as /bin/sh would split
    it), or None when only /bin/sh can run it as meant: shell syntax (:data:`SHELL_SYNTAX`), a first word
    that is the shell's own (:data:`SHELL_WORDS`), or no word at all."""
    if any(c in SHELL_SYNTAX for c in command):
        return None
    words = command.replace("\t", " ").split(" ")
    words = [w for w in words if w]
    if not words or words[0] in SHELL_WORDS:
        return None
    return words


def run_command(command: str, root: Path, out: TextIO) -> int:
    """Run a ``run`` string in ``root`` (directly when :func:`command_words` allows, else by /bin/sh);
    its exit status, with the shell's 127 (not found) and 126 (cannot execute) when it cannot start."""
    words = command_words(command)
    if words is not None:
        try:
            return subprocess.run(words, cwd=root, check=False).returncode
        except OSError as err:
            if err.errno != errno.ENOEXEC:
                out.write(f"tracker: `{command}`: cannot run {words[0]}: {err.strerror}\n")
                return 127 if err.errno == errno.ENOENT else 126
            # an executable text file without #!: /bin/sh runs it as a shell script, and so do we
    return subprocess.run(command, shell=True, cwd=root, check=False).returncode


def _snapshot(root: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in repo_result_files(root)}


def run_bench_gates(
    root: Path,
    chosen: list[tuple[Plan, Phase]],
    force: bool,
    out: TextIO,
    current: dict[str, str],
    cache: Cache | None = None,
    failed: dict[str, str] | None = None,
) -> int:
    """Run what the chosen bench gates need; 0 when every one is met afterwards, else 1.

    ``current`` is the working tree's {path: blob id} (for "measured files unchanged"); ``cache``: the command's
    (None: the repository's cache read, nothing kept); ``failed`` gets {gate key: why its command gave it nothing}
    (such a gate is unmet whatever results say). ``out`` gets progress only, no gate verdicts: verify says every
    gate's once, after all its runs.
    """
    cache = Cache(root) if cache is None else cache
    failed = {} if failed is None else failed
    gates = [
        (f"{p.id}/{ph.id}#{i + 1}", g) for p, ph in chosen for i, g in enumerate(ph.gates) if isinstance(g, BenchGate)
    ]
    if not gates:
        out.write("tracker: no bench gates selected\n")
        return 0
    evaluator = Evaluator(load_repo_results(root, cache=cache))
    commands: dict[str, list[str]] = {}
    for key, gate in gates:
        verdict = evaluator(gate)
        if gate.run is None:
            out.write(f"tracker: {key}: no `run` command, uses the stored results\n")
        elif not force and verdict.met and verdict.source and not evaluator.changed(verdict.source.file, current):
            out.write(f"tracker: {key}: up to date, not re-run (--force re-runs): {verdict.reason}\n")
        else:
            commands.setdefault(gate.run, []).append(key)
    by_key = dict(gates)
    for n, (command, keys) in enumerate(commands.items(), 1):
        by_shell = "" if command_words(command) is not None else "; by /bin/sh: it uses shell syntax"
        out.write(f"tracker: [{n}/{len(commands)}] {command}  (for {', '.join(keys)}{by_shell})\n")
        spent = 0.0
        for attempt in range(1, MAX_POOLED + 1):
            start = time.monotonic()
            if not _run_once(root, command, keys, out, cache, failed):
                break
            took = time.monotonic() - start
            spent += took
            evaluator = Evaluator(load_repo_results(root, cache=cache))
            undecided = {key: v for key in keys if (v := evaluator(by_key[key])).undecided}
            if not undecided:
                break
            if attempt == MAX_POOLED or spent + took > DECIDE_SECONDS:
                limit = f"{MAX_POOLED} runs pooled" if attempt == MAX_POOLED else f"{DECIDE_SECONDS:.0f} s spent"
                for key, verdict in undecided.items():
                    out.write(f"tracker: {key} stays undecided after {attempt} run(s) ({limit}): {verdict.reason}\n")
                break
            out.write(
                f"tracker: undecided, measuring again to decide ({attempt + 1} of at most {MAX_POOLED} runs, "
                f"{spent:.0f} of {DECIDE_SECONDS:.0f} s): {', '.join(undecided)}\n"
            )
    evaluator = Evaluator(load_repo_results(root, cache=cache))
    # A gate whose command failed is unmet: other commands' results (or older ones) must not meet it in its place.
    unmet = sum(not evaluator(gate).met for key, gate in gates if key not in failed)
    return int(ExitCode.CHECK_FAILED) if failed or unmet else 0


def _run_once(root: Path, command: str, keys: list[str], out: TextIO, cache: Cache, failed: dict[str, str]) -> bool:
    """Run ``command`` once and take in the result files it wrote; False (``failed`` told why, for ``keys``) when it
    failed or wrote none."""
    out.flush()
    before = _snapshot(root)
    sys.stdout.flush()
    code = run_command(command, root, out)
    if code != 0:
        why = f"`{command}` exited with {code}: its results are not used"
        out.write(f"tracker: {why}\n")
        failed.update(dict.fromkeys(keys, why))
        return False
    written = [p for p, digest in _snapshot(root).items() if before.get(p) != digest]
    if not written:
        why = f"`{command}` wrote no result file in .tracker/evidence/ or bench/results/"
        out.write(f"tracker: {why}\n")
        failed.update(dict.fromkeys(keys, why))
        return False
    for path in written:
        run = load_result(path, cache)  # raises ResultFileError: path: reason
        out.write(
            f"tracker: took in {path.relative_to(root).as_posix()}: {len(run.cases)} case(s) from {run.host} "
            f"({run.gpu or 'no GPU'})\n"
        )
    return True


def report_stored(root: Path, chosen: list[tuple[Plan, Phase]], out: TextIO, cache: Cache | None = None) -> None:
    """One line per selected bench gate, judged on the results already in the repository (``cache``: as
    :func:`run_bench_gates`)."""
    gates = [
        (f"{p.id}/{ph.id}#{i + 1}", g) for p, ph in chosen for i, g in enumerate(ph.gates) if isinstance(g, BenchGate)
    ]
    if not gates:
        return
    evaluator = Evaluator(RepoResults(root, cache=cache))
    out.write(f"tracker: {len(gates)} bench gate(s) judged on the stored results (--bench runs their commands)\n")
    for key, gate in gates:
        verdict = evaluator(gate)
        out.write(f"{'met  ' if verdict.met else 'UNMET'} {key} {gate.bench}: {verdict.reason}\n")
