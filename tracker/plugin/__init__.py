"""The parts of the tracker's pytest plugin (:mod:`tracker.pytest_plugin`, which holds its hooks and its per-session
state).

Rule: like the three top-level plugin modules (:mod:`tracker.pytest_plugin`, :mod:`tracker.pytest_boot`,
:mod:`tracker.pytest_argcheck`), a module here imports only the standard library, pytest, :mod:`tracker`,
:mod:`tracker.errors`, :mod:`tracker.base` and this folder, because the plugin loads where only pytest is installed
(the GPU machine: none of the tracker's other dependencies). It imports the tracker's modules at its top, never
inside a function (:mod:`tracker.pytest_boot`), and never :mod:`tracker.pytest_plugin` (an import circle).

No module here holds per-session state (constants, pure functions, classes made per session, ``pytest.StashKey``
constants only): ``tracker verify``'s standby child drops :mod:`tracker.pytest_plugin` and
:mod:`tracker.pytest_argcheck` from ``sys.modules`` so that each session imports them afresh
(``tracker.commands.pytest_run``), but keeps the tracker's other modules, these included, as its parent imported
them. What one session must not hand the next (the reading taken before any ``conftest.py`` ran, the modules
imported before the bytecode caches moved) lives in :mod:`tracker.pytest_plugin` and reaches the recorder through
its constructor.

- :mod:`~tracker.plugin.recorder`: the recorder's hooks (outcomes, provenance, the session's end).
- :mod:`~tracker.plugin.outcomes`: each test's record, from pytest's reports.
- :mod:`~tracker.plugin.evidence_file`: the evidence file being written (its head, ``running`` tail, running slot).
- :mod:`~tracker.plugin.collection`: verify's selection, xdist workers' notes, lint's collection.
- :mod:`~tracker.plugin.options`: what a run's options narrow or alter; its arguments.
- :mod:`~tracker.plugin.machine`: the machine and the run's provenance.
- :mod:`~tracker.plugin.modules`: where the modules the tests imported came from.
- :mod:`~tracker.plugin.xdist_schedule`: under pytest-xdist without ``--dist``, each gate's tests in one worker.
"""
