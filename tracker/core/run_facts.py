"""What one recorded test run says of itself and of a gate: where it ran (machine, host), which options narrowed
or altered it, whether it knows markers and xpasses, which arguments it covers, why a test it did not collect may
still stand. Pure functions over :class:`tracker.core.model.TestRun`; the verdicts that use them are
:mod:`tracker.core.testgate`'s.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from typing import Any

from tracker.base.selection import conftests_of, normalize_arg, plugin_names
from tracker.core.model import RAN, EvidenceSource, TestGate, TestRun

FAILURES = ("failed", "error", "xpassed")  # outcomes that are a real failure of a test that ran (``failed``)


def one_test(gate: TestGate, recs: list[dict[str, Any]]) -> bool:
    """Does the gate name one test, the one its records are of? A node id may name a class or a parametrized
    function (``t.py::TestParser``, ``t.py::test_parse``): its tests are known only from a run of all of it, as a
    file's are; a run of one of them says nothing of the others (adv round 5)."""
    if "::" not in gate.test:
        return False
    named = normalize_arg(gate.test)
    return all(r["nodeid"] == named for r in recs)


def source_of(run: TestRun) -> EvidenceSource:
    """Where a verdict drawn from ``run`` came from: the machine is its host with its GPU, else its CPU model, as
    the run recorded them (``vm (NVIDIA H200)`` is not ``vm (AMD EPYC 7B13)``)."""
    commit = run.provenance.get("commit")
    return EvidenceSource(run.file, machine_of(run.provenance), commit, run.time)


def machine_of(provenance: dict[str, Any]) -> str:
    """``host (GPU or CPU model)``, or the host alone when the run recorded neither (older evidence)."""
    host = str(provenance.get("host", "?"))
    model = provenance.get("gpu") or provenance.get("cpu")
    return f"{host} ({model})" if isinstance(model, str) and model.strip() else host


def other_machine(passing: TestRun, skipping: TestRun) -> bool:
    """Did ``passing`` run on a machine of other means than ``skipping``: both recorded by the plugin (an ingested
    run's host is what ``ingest --host`` said: round 15, A3), their operating system, architecture, Python version
    or GPUs differ? Not their host name or CPU model alone: two CI runners or containers of one image differ in
    those, and a skip there is an environment's, not the machine's (round 16, F4; round 17, M1). The GPUs are the
    driver's list (``accelerator``): ``gpu`` is recorded only where the tests imported torch (round 15, A2); a run
    older than ``accelerator`` has only that."""

    def key(run: TestRun) -> tuple[str, ...] | None:
        prov = run.provenance
        if prov.get("ingested_from") or not isinstance(prov.get("host"), str):
            return None
        # The driver's GPU list (``accelerator``), None on a CPU machine; an older run has only torch's ``gpu``.
        gpu = prov["accelerator"] if "accelerator" in prov else prov.get("gpu")
        system = str(prov.get("platform", "")).split("-")
        python = ".".join(str(prov.get("python", "")).split(".")[:2])
        return system[0], system[-1], python, str(gpu)

    mine, theirs = key(passing), key(skipping)
    return mine is not None and theirs is not None and mine != theirs


def unknown_set(gate: TestGate, cut: TestRun) -> str:
    """Why the tests ``gate`` has are unknown: the run ``cut`` ran it with its collection narrowed, or without the
    gate's options, and no run collected all of it as the gate says."""
    how = narrowed(cut)
    if how is not None:
        return (
            f"which tests {gate.test} selects is unknown: {cut.file} ran it with its collection narrowed by "
            f"{printable(how)}, and no run collected all of it without such options (tracker verify does)"
        )
    return (
        f"which tests {gate.test} selects is unknown: {cut.file} ran it without {missing_options(cut, gate)}, and no "
        "run collected all of it with them (tracker verify does)"
    )


def host_of(run: TestRun) -> str:
    """The machine a run was recorded on (``provenance.host``)."""
    return str(run.provenance.get("host", "?"))


def collection_skips(file_level: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of a run's file-level records, those of a file or directory skipped at collection."""
    return [r for r in file_level if r["outcome"] == "skipped"]


def unseen(whole: TestRun, collected: bool, older: TestRun, nodeid: str) -> str | None:
    """Why ``whole`` (the newest run of all of a gate), which did not collect test ``nodeid`` that ``older`` recorded,
    cannot prove it gone (so it stands), or None when it can: the test's file changed or went since ``older`` (the
    newest run that recorded it on the bytes ``whole`` ran, else the newest that recorded it); or
    ``whole`` collected other tests of the file, the test is a doctest (its id a dotted name) and one run had
    ``--import-mode=importlib`` and the other not (it names doctests otherwise); or ``whole`` collected nothing of
    the file and a ``conftest.py`` on the way to it, or the ini file pytest read (``provenance.inifile``), changed (a
    ``collect_ignore``, ``python_files`` or ``testpaths`` edit leaves it out). Anything else that hides a test while
    its file is the same (an environment variable in a ``collect_ignore`` or in a test's parameters, a plugin, the
    devices of the machine, a data file of parameters) leaves it standing. Where either run has no file ids at all
    (evidence from before they were recorded), one on the same machine is taken to have seen it."""
    file = nodeid.split("::", 1)[0]
    where = printable(host_of(whole))
    if not older.files or not whole.files:
        if host_of(whole) == host_of(older):
            return None
        return f"not collected on {where}, {printable(file)} maybe unchanged (no file id)"
    then = older.files.get(file)
    if then is None:  # a file git ignores (generated tests) has no id: whether it changed is unknown
        return f"not collected on {where}, {printable(file)} has no file id (ignored by git?)"
    if whole.files.get(file) != then:
        return None
    if collected:
        if doctest_id(nodeid) and import_mode(whole) != import_mode(older):
            return None
    elif config_changed(older, whole, file):
        return None
    seen = "unchanged, its other tests collected" if collected else "and its pytest configuration unchanged"
    return (
        f"not collected on {where}, {printable(file)} {seen}: an environment variable, a plugin or the machine hid "
        f"it; gone for good? a change to {printable(file)} retires it"
    )


def long_parameter(older: TestRun, judge: TestRun, nodeid: str) -> bool:
    """Is ``nodeid`` a test with a parameter id over 100 characters, recorded by another pytest version than the
    judge's (both known)? pytest 9.2 names a str or bytes parameter that long ``argnameN`` where 9.1 wrote it out:
    such an id is renamed, not hidden."""
    then, now = older.provenance.get("pytest"), judge.provenance.get("pytest")
    params = nodeid.split("[", 1)[1] if "[" in nodeid else ""
    return bool(then and now and then != now) and len(params) > 100


def doctest_id(nodeid: str) -> bool:
    """Is ``nodeid`` a doctest's (``src/mod.py::mod.func``, ``README.txt::README.txt``): a name with a dot, which no
    Python test function or class has?"""
    return any("." in part.split("[", 1)[0] for part in nodeid.split("::")[1:])


def config_changed(older: TestRun, whole: TestRun, file: str) -> bool:
    """Did a ``conftest.py`` on the way to ``file``, or the ini file pytest read, differ between the two runs?"""
    then, now = older.provenance.get("inifile"), whole.provenance.get("inifile")
    known = not older.provenance.get("ingested_from") and not whole.provenance.get("ingested_from")
    if known and then != now:  # an ingested run records no ini file: unknown, never a change (adv round 4)
        return True
    if known and isinstance(now, str) and older.files.get(now) != whole.files.get(now):
        return True
    return conftest_changed(older, whole, file)


def conftest_changed(older: TestRun, newer: TestRun, file: str) -> bool:
    """Does a ``conftest.py`` on the way to ``file`` differ (its id, or there and not) between the two runs?"""
    return any(older.files.get(c) != newer.files.get(c) for c in conftests_of(file))


def prefixed(ids: list[str], prefix: str) -> Iterator[str]:
    """The ids of the sorted list ``ids`` that start with ``prefix``, in order (found by bisection)."""
    for i in range(bisect.bisect_left(ids, prefix), len(ids)):
        if not ids[i].startswith(prefix):
            return
        yield ids[i]


def import_mode(run: TestRun) -> str:
    """The ``--import-mode`` a run recorded (``provenance.options``), pytest's default ``prepend`` where it names
    none. Only ``importlib`` names doctests otherwise."""
    given = run.provenance.get("options")
    modes = [str(x) for x in given if str(x).startswith("--import-mode=")] if isinstance(given, list) else []
    return "importlib" if "--import-mode=importlib" in modes else "other"


def kept_note(recs: list[dict[str, Any]]) -> str:
    """What a verdict adds for tests that stand on another run's record (gate_tests.keep_unseen)."""
    kept: dict[str, int] = {}
    for rec in recs:
        if "kept" in rec:
            kept[rec["kept"]] = kept.get(rec["kept"], 0) + 1
    shown = [f"kept {n} as last run on {where}" for where, n in list(kept.items())[:2]]
    more = f"; and {len(kept) - 2} more such" if len(kept) > 2 else ""
    return "".join(f"; {s}" for s in shown) + more


def worst_first(outcome: str) -> int:
    """Where a record of this outcome goes among one run's records of the same test: failures, then the other
    outcomes of a test that ran, then the rest (skipped, notrun, deselected)."""
    return 0 if outcome in FAILURES else 1 if outcome in RAN else 2


def skip_allowed(allowed: tuple[str, ...], reason: str) -> bool:
    """Does a gate's ``skips_allowed`` expect a skip with this recorded reason? When the reason holds one of its
    strings, case and all (a substring: pytest records ``could not import 'x': No module named 'x'`` for
    ``importorskip``, JUnit XML may keep a ``Skipped:`` prefix)."""
    return any(want in reason for want in allowed)


def outside_file(run: TestRun, nodeid: str) -> str | None:
    """Why ``run`` says the file of test ``nodeid`` is not the repository's (``provenance.outside``: it, or a
    ``conftest.py`` above it, resolved outside the repository through a symlink when it ran), or None."""
    found = run.provenance.get("outside")
    why = found.get(nodeid.split("::", 1)[0]) if isinstance(found, dict) else None
    return why if isinstance(why, str) else None


def has_markers(run: TestRun, rec: dict[str, Any]) -> bool:
    """Does this record say which markers its test has? Not when its run was ingested from JUnit XML (which
    has no markers; ingest stores ``[]``), nor when the record has no ``markers`` key."""
    return "markers" in rec and not from_junit(run)


def tells_xpass(run: TestRun) -> bool:
    """Can this run's "passed" be told from an xpass? Not when it was ingested from JUnit XML, which writes a
    non-strict xpass as a plain pass."""
    return not from_junit(run)


def from_junit(run: TestRun) -> bool:
    """Was ``run`` ingested from JUnit XML? Such a run records no markers (ingest stores ``[]``) and writes a
    non-strict xpass as a plain pass."""
    return run.provenance.get("ingested_from") == "junit"


def xfail_known(hist: list[tuple[TestRun, dict[str, Any]]]) -> bool:
    """Did any run record this test as xfailed or xpassed, or (one with markers) with an ``xfail`` marker? Then a
    pass that cannot be told from an xpass is no pass."""
    return any(
        x["outcome"] in ("xfailed", "xpassed") or (has_markers(r, x) and "xfail" in x["markers"]) for r, x in hist
    )


def printable(text: str) -> str:
    """``text`` (recorded by a run, so any text) as a reason names it on one line: each unprintable character (a line
    break, a terminal escape, a bidirectional override) as its Python escape. Half a surrogate pair never gets here:
    the store refuses a file holding one (:func:`tracker.store.evidence_schema.lone_surrogate`)."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def narrowed(run: TestRun) -> str | None:
    """The options that may have kept tests under the run's arguments from being collected at all (``--ignore``,
    ``-o python_functions``, ...: ``provenance.narrowed``), or None. A verify run (one that records gates) by an
    older plugin recorded only ``args: null``, after ``--ignore``, ``--lf`` or ``--pyargs``."""
    prov = run.provenance
    given = prov.get("narrowed")
    if isinstance(given, str) and given:
        return given
    old = run.gates and "args" in prov and prov["args"] is None
    return "an option (--ignore, --lf or --pyargs)" if old else None


def option_units(options: tuple[str, ...] | list[str]) -> list[str]:
    """A gate's ``options`` as runs record theirs (``provenance.options``): one string each, ``-p`` with its plugin
    (``["-p", "xdist"]`` is ``-p xdist``)."""
    out: list[str] = []
    for item in options:
        if out and out[-1] == "-p":
            out[-1] = f"-p {item}"
        else:
            out.append(item)
    return out


def missing_options(run: TestRun, gate: TestGate) -> str | None:
    """The gate's ``options`` that ``run`` did not have (``provenance.options``; pytest's default
    ``--import-mode=prepend`` is had by a run that names no import mode), joined; None when it had them all."""
    if not gate.options:
        return None
    given = run.provenance.get("options")
    have = {str(x) for x in given} if isinstance(given, list) else set()
    if not any(h.startswith("--import-mode=") for h in have):
        have.add("--import-mode=prepend")
    lacking = [u for u in option_units(gate.options) if u not in have]
    return ", ".join(lacking) if lacking else None


def extra_options(run: TestRun, gate: TestGate) -> list[str]:
    """The collection options ``run`` had (``provenance.options``: ``--doctest-modules``, an import mode, ...) that the
    gate does not carry: such a run collected more, or otherwise, than ``pytest GATE`` (pytest's default import mode
    aside)."""
    given = run.provenance.get("options")
    have = [str(x) for x in given] if isinstance(given, list) else []
    mine = set(option_units(gate.options)) | {"--import-mode=prepend"}
    return [h for h in have if h not in mine]


def altered(run: TestRun, gate: TestGate | None = None) -> str | None:
    """The options that may have turned a failing test into a pass in ``run`` (``-p no:warnings``, ``-W``,
    ``--runxfail``, ``--rootdir`` elsewhere, ...: ``provenance.altered``), and a working directory other than the
    rootdir (``provenance.cwd``), or None. A pass from such a run meets no gate; its failures count. For ``gate``,
    also the plugins the run loaded as the gates' own options (``provenance.declared_options``: verify's, or anyone's
    who sets its variable) that ``gate``'s options do not load: a plugin may turn a failure into a pass (A5b)."""
    given = run.provenance.get("altered")
    parts = [given] if isinstance(given, str) and given else []
    where = run.provenance.get("cwd", ".")
    if where != ".":  # python -m pytest puts it first on sys.path; tests may open files relative to it (round 14, F10)
        parts.append(f"the working directory {where} (not the rootdir)")
    declared = run.provenance.get("declared_options")
    if gate is not None and isinstance(declared, list):
        extra = set(plugin_names([str(x) for x in declared])) - set(plugin_names(list(gate.options)))
        if extra:
            parts.append("plugins the gate's options do not load (" + ", ".join(f"-p {p}" for p in sorted(extra)) + ")")
    return ", ".join(parts) or None


def says_all(key: str, gate: TestGate, run: TestRun) -> bool:
    """Did ``run`` collect all of gate ``key`` as the gate says: verify ran it, or its recorded arguments cover it, and
    its collection was neither narrowed (:func:`narrowed`) nor without the gate's options (:func:`missing_options`)?"""
    return names(key, gate, run) and narrowed(run) is None and missing_options(run, gate) is None


def names(key: str, gate: TestGate, run: TestRun) -> bool:
    """Does ``run`` say it ran all of gate ``key``: do its recorded arguments cover it? (verify's runs record the
    gates' paths as arguments; a run that only lists the gate in ``gates``, a plain run given ``--tracker-gates``,
    names nothing: adv round 6.)"""
    return covers(run.provenance.get("args"), gate.test)


def covers(args: object, arg: str) -> bool:
    """Do a run's recorded pytest arguments (``provenance.args``) collect everything ``arg`` selects? A path argument
    covers its file and what is under a folder, a node id itself, its class's or function's tests and parameters,
    ``.`` or ``""`` everything. (Set lookups over the argument's own prefixes: a verify run of 1,000 node-id gates
    records 1,000 arguments, and each gate asks.)"""
    if not isinstance(args, list):
        return False
    whole, paths, nodes = _argument_sets(tuple(str(a) for a in args))
    if whole:
        return True
    want = normalize_arg(arg)
    file = want.split("::", 1)[0]
    parts = file.split("/")
    if any("/".join(parts[:i]) in paths for i in range(1, len(parts) + 1)):
        return True
    if not nodes:
        return False
    if want in nodes:
        return True
    cuts = [i for i in range(len(want)) if want.startswith("::", i) or want[i] == "["]
    return any(want[:i] in nodes for i in cuts)


@functools.lru_cache(maxsize=64)
def _argument_sets(args: tuple[str, ...]) -> tuple[bool, frozenset[str], frozenset[str]]:
    """(an argument covers everything, the path arguments, the node-id arguments), each normalized."""
    normal = [normalize_arg(a) for a in args]
    whole = any(have in ("", ".") for have in normal)
    return whole, frozenset(h for h in normal if "::" not in h), frozenset(h for h in normal if "::" in h)
