"""``tracker check``: for CI; fails on a regressed phase, on plan files and docs (``[tool.tracker] docs``) whose
regions are out of date or were edited by hand, on a milestone report in ``plans/reports/`` that is not what
``tracker report`` renders now, on an invalid benchmark result file in the repository or an
unusable file in the evidence store, on evidence whose commit is not in the repository's history, and on evidence
or result files the current statuses rest on that git ignores (a clone can never see them). Such files that are
merely not added yet (every fresh ``verify`` writes one; CI runs ``verify`` then ``check``) are warnings: named, the
exit unchanged. Both come with the ``git add`` that fixes them."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple, TextIO

from tracker.base.cache import Cache, command_cache
from tracker.core.history import regressions
from tracker.core.model import PhaseStatus, Status
from tracker.errors import ExitCode, RegionEditedError
from tracker.plans.load import load_plans
from tracker.plans.regions import rewrite
from tracker.report.render import plan_regions
from tracker.store.derive import derive


class Problem(NamedTuple):
    """One line of ``tracker check``: what kind of problem, the file it is in, the phase (regressions), the line."""

    # regressed | invalid-evidence | invalid-result | unknown-commit | ignored-evidence | region-edited | out-of-date
    # | git; warnings (WARNING_KINDS): untracked-evidence | undecided
    kind: str
    path: str | None
    message: str
    phase: str | None = None
    gate: int | None = None  # 1-based, where one gate is the problem (regressed, undecided): its line is annotated

    def as_json(self) -> dict[str, str | None]:
        """The problem as ``--json`` prints it (README)."""
        return {"kind": self.kind, "path": self.path, "phase": self.phase, "message": self.message}


WARNING_KINDS = frozenset({"untracked-evidence", "undecided"})  # named by check, never its exit: --json's "warnings"


def run(root: Path, out: TextIO | None = None, as_json: bool = False, fmt: str = "text") -> int:
    """Print one line per problem, then one per warning; exit 1 (CHECK_FAILED) when there is a problem, else 0.
    ``as_json``: print one object instead, ``{"ok", "exit", "problems": [{"kind", "path", "phase", "message"}],
    "warnings": [same]}`` (docs/reference.md). ``fmt="github"``: one GitHub Actions annotation per problem
    (``::error``) and per warning (``::warning``), and a Markdown summary appended to ``$GITHUB_STEP_SUMMARY``
    (:mod:`tracker.commands.github_output`); the exit code is the same in every format."""
    out = out or sys.stdout
    with command_cache(root) as cache:
        found = find_problems(root, cache=cache)
        if fmt == "github":
            from tracker.commands.github_output import check_output
            from tracker.plans.load import load_plans as plans_of

            return check_output(plans_of(root, cache=cache)[1], found, WARNING_KINDS, add_line(found), out)
    problems = [p for p in found if p.kind not in WARNING_KINDS]
    warnings = [p for p in found if p.kind in WARNING_KINDS]
    code = int(ExitCode.CHECK_FAILED) if problems else 0
    if as_json:
        from tracker.commands.common import json_text

        doc = {
            "ok": not problems,
            "exit": code,
            "problems": [p.as_json() for p in problems],
            "warnings": [p.as_json() for p in warnings],
        }
        out.write(json_text(out, doc) + "\n")
        return code
    for problem in problems + warnings:
        out.write(problem.message + "\n")
    add = add_line(found)
    if add:
        out.write(f"tracker check: commit the evidence the statuses rest on: {add}\n")
    counted = f", {len(warnings)} warning(s)" if warnings else ""
    if problems:
        out.write(f"tracker check: {len(problems)} problem(s){counted}\n")
    else:
        from tracker.report.doc_files import declared_docs
        from tracker.report.milestones import REPORTS_DIR

        kinds = ["plan files"] + ["docs"] * bool(declared_docs(root))
        reports = root / REPORTS_DIR
        kinds += ["milestone reports"] * (
            reports.is_dir() and any(p.suffix in (".md", ".html") for p in reports.iterdir())
        )
        shown = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]
        counted = f"; {len(warnings)} warning(s)" if warnings else ""
        out.write(f"tracker check: no regressions, {shown} up to date{counted}\n")
    return code


def find_problems(root: Path, *, cache: Cache | None = None) -> list[Problem]:
    """Every problem and warning (:data:`WARNING_KINDS`) ``tracker check`` reports, in the order it prints them
    (``cache``: the command's; None: the repository's cache read, nothing kept)."""
    cache = Cache(root) if cache is None else cache
    files, plans = load_plans(root, cache=cache)
    statuses = derive(root, plans, cache=cache)
    paths = {p.id: p.path for p in plans}
    problems = [
        Problem("regressed", paths.get(st.plan_id), line, key, number)
        for key, st in statuses.items()
        if st.status is Status.REGRESSED
        # regressions() says each failed gate, in order
        for line, number in zip(
            regressions({key: st}), [n for n, v in enumerate(st.verdicts, 1) if v.failed], strict=True
        )
    ]
    from tracker.store.evidence import load as load_store
    from tracker.store.result_files import load_repo_results, repo_result_files

    store = load_store(root, strict=False)
    invalid = store.invalid  # unusable store files: every test and bench gate unmet
    problems += [
        Problem("invalid-evidence", line.split(": ", 1)[0], f"invalid evidence file, fix or remove it: {line}")
        for line in invalid
    ]
    listed = {line.split(": ", 1)[0] for line in invalid}
    result_files = repo_result_files(root, [rel for rel, _ in store.bench])  # the store is not read a second time
    results = load_repo_results(root, strict=False, files=result_files, cache=cache) if result_files else None
    if results is not None:  # invalid result files make every bench gate unmet: say which
        problems += [Problem("invalid-result", err.path, f"{err}") for err in results.errors if err.path not in listed]
    claimed = [(r.file, r.provenance.get("commit")) for r in store.runs]
    claimed += [(f, d.get("commit")) for f, d in store.signoffs]
    claimed += [(r.path, r.commit) for r in results or []]
    problems += unknown_commits(root, claimed)
    problems += untracked_evidence(root, statuses)
    problems += undecided_gates(statuses, paths)
    for f in files:
        assert f.plan is not None  # load_plans raised otherwise
        try:
            stale = rewrite(f.text, plan_regions(f.plan, statuses), f.path) != f.text
        except RegionEditedError as err:  # one problem among others, not the end of the check
            problems.append(Problem("region-edited", f.path, str(err)))
            continue
        if stale:
            problems.append(
                Problem("out-of-date", f.path, f"{f.path}: generated regions out of date (run `tracker update`)")
            )
    return problems + doc_problems(root, cache) + report_problems(root)


def untracked_evidence(root: Path, statuses: Mapping[str, PhaseStatus]) -> list[Problem]:
    """One entry per evidence or result file a current verdict rests on (its source, or another run its passes
    come from) that git does not track: a clone, CI's checkout, shows those gates without it (README's commit line
    once left ``bench/results/`` out, and a clone showed a benchmark phase planned). A file git ignores can never
    reach a clone: a problem (``ignored-evidence``, ``git add -f``). One never added is what every fresh ``verify``
    leaves until it is committed: a warning (``untracked-evidence``, ``git add``)."""
    from tracker.base.dirty import untracked

    resting: dict[str, list[str]] = {}
    for key, st in statuses.items():
        for number, v in enumerate(st.verdicts, 1):
            for file in (v.source.file, *v.also) if v.source is not None else ():
                resting.setdefault(file, []).append(f"{key} gate {number}")
    missing = untracked(root, list(resting))
    found = []
    for file, ignored in sorted(missing.items()):
        gates = ", ".join(dict.fromkeys(resting[file]))
        phase = resting[file][0].split(" ", 1)[0]
        if ignored:
            message = f"{file}: git ignores it, yet {gates} rest(s) on it: a clone can never see it (git add -f {file})"
            found.append(Problem("ignored-evidence", file, message, phase))
        else:
            message = (
                f"warning: {file}: git does not track it yet (never added), and {gates} rest(s) on it: a clone will "
                f"not see it until it is committed (git add {file})"
            )
            found.append(Problem("untracked-evidence", file, message, phase))
    return found


def undecided_gates(statuses: Mapping[str, PhaseStatus], paths: Mapping[str, str]) -> list[Problem]:
    """A warning per bench gate its newest runs cannot decide (docs/evidence.md): named, never the exit, as noise
    must not fail CI either way. Where no decided verdict stands (a newer run alone contradicts the last decided
    one), a phase that was done is done no longer, and says why here rather than in silence (round 19, W1)."""
    return [
        Problem("undecided", paths.get(st.plan_id), f"warning: {key}: gate {number}: {v.reason}", key, number)
        for key, st in statuses.items()
        for number, v in enumerate(st.verdicts, 1)
        if v.undecided and not (v.failed and st.status is Status.REGRESSED)  # a regression is a problem already
    ]


def add_line(found: Iterable[Problem]) -> str:
    """The git commands that add the files of ``found``'s ``untracked-evidence`` (``git add``) and
    ``ignored-evidence`` (``git add -f``) entries, then commit; "" for none."""
    plain = [shlex.quote(p.path) for p in found if p.kind == "untracked-evidence" and p.path]
    forced = [shlex.quote(p.path) for p in found if p.kind == "ignored-evidence" and p.path]
    parts = [f"git add {' '.join(plain)}"] * bool(plain) + [f"git add -f {' '.join(forced)}"] * bool(forced)
    return " && ".join([*parts, "git commit"]) if parts else ""


def report_problems(root: Path) -> list[Problem]:
    """One problem per milestone report in ``plans/reports/`` that is not what ``tracker report`` renders now
    (:func:`tracker.report.milestones.reports_out_of_date`): regenerate it with the command the message names."""
    from tracker.report.milestones import REPORTS_DIR, reports_out_of_date

    if not (root / REPORTS_DIR).is_dir():
        return []
    return [Problem("out-of-date", line.split(": ", 1)[0], line) for line in reports_out_of_date(root)]


def doc_problems(root: Path, cache: Cache) -> list[Problem]:
    """One problem per declared doc whose results tables are out of date or were edited by hand. An invalid
    ``results`` block raises (exit 2), as an invalid plan file does; an unreadable doc too (exit 8)."""
    from tracker.report.doc_files import Tables, declared_docs, may_change, read_doc

    problems: list[Problem] = []
    tables: Tables | None = None
    for rel in declared_docs(root):
        doc = read_doc(root, rel)
        if not may_change(doc):
            continue
        tables = tables or Tables(root, cache)
        try:
            new = tables.rewrite(doc, force=False)
        except RegionEditedError as err:
            problems.append(Problem("region-edited", rel, str(err)))
            continue
        if new != doc.text:
            line = first_changed_line(doc.text, new)
            problems.append(
                Problem(
                    "out-of-date",
                    rel,
                    f"{rel}:{line}: generated results tables or figures out of date (run `tracker update`)",
                )
            )
    return problems


def first_changed_line(old: str, new: str) -> int:
    """The 1-based line of ``old`` where ``new`` first differs from it (where a stale table or figure starts)."""
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    return old.count("\n", 0, at) + 1


def unknown_commits(root: Path, claimed: Iterable[tuple[str, object]]) -> list[Problem]:
    """One problem per evidence file whose recorded commit is not a commit of this repository.

    Evidence is trusted the way a committed file is: anyone who can commit can write it. A commit that does not
    exist here (made up, or from a history that was never pushed) is the one claim check can test. One ``git
    cat-file --batch-check`` answers for every file. Skipped outside a git repository and in a shallow clone,
    whose history is cut off (nothing is claimed then)."""
    wanted = sorted({(str(commit), file) for file, commit in claimed if isinstance(commit, str) and commit})
    if not wanted or not (root / ".git").exists():
        return []
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], cwd=root, capture_output=True, text=True, check=False
    )
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        return []
    commits = sorted({commit for commit, _ in wanted})
    query = "".join(f"{commit}^{{commit}}\n" for commit in commits)
    proc = subprocess.run(
        ["git", "cat-file", "--batch-check"], cwd=root, input=query, capture_output=True, text=True, check=False
    )
    answers = proc.stdout.splitlines()
    if proc.returncode != 0 or len(answers) != len(commits):
        return [
            Problem(
                "git",
                None,
                "tracker check: cannot ask git which evidence commits exist: "
                f"{proc.stderr.strip() or 'unexpected answer'}",
            )
        ]
    missing = {
        commit
        for commit, answer in zip(commits, answers, strict=False)
        if answer.endswith(" missing") or " commit " not in f" {answer} "
    }
    return [
        Problem(
            "unknown-commit",
            file,
            f"{file}: its commit {commit} is not in this repository's history (evidence is "
            "trusted like a committed file: fetch that history, or remove the file)",
        )
        for commit, file in sorted(wanted, key=lambda x: x[1])
        if commit in missing
    ]
