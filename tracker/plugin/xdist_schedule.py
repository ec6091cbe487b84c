"""Under pytest-xdist, a recorded run's scheduling by gate (part of :mod:`tracker.pytest_plugin`; rule:
:mod:`tracker.plugin`).

A test gate ``pytest PATH`` is met only where its tests all passed in one process (:mod:`tracker.core.testgate`:
"split over N xdist workers"), and xdist's default ``--dist load`` spreads a file's tests, let alone a folder's, over
its workers. So when a recorded run asks for workers (``-n N``, ``-n auto``) and gives no ``--dist`` (nor ``-d``),
the controller schedules by gate (:class:`GateSchedule`): xdist's ``LoadScopeScheduling`` whose scope of a test is
the group of gates that select it (:func:`gate_scopes`), so each gate's tests run in one worker and gates that share
no test run in parallel. A ``--dist`` the user gave, ``load`` included, is kept as asked.

The gates are verify's ``--tracker-select`` pairs (:class:`tracker.plugin.collection.GatePairs`, which the
controller's :class:`tracker.plugin.collection.Selector` read), matched by their pytest argument alone: the controller
sees node ids only (the workers collected, and know the markers), so two gates on one folder with different ``-m``
expressions share a group, which never splits a gate. A test no gate selects (a plain ``pytest --tracker-record -n
2``, which names no gates) is scheduled by its file, as ``--dist loadfile`` does.

xdist stays optional: this module imports it only inside :func:`make_scheduler`, which xdist itself calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracker.base.selection import selects
from tracker.plugin.collection import GatePairs


def by_gate(config: pytest.Config) -> bool:
    """Does this run leave xdist's distribution to the tracker? Asked before xdist's ``pytest_cmdline_main``, which
    turns a missing ``--dist`` into ``load`` where workers were asked for: no ``--dist`` and no ``-d`` given (a
    ``--dist`` option exists only where xdist is loaded), and not in a worker."""
    return (
        config.getoption("dist", None) == "no"
        and not config.getoption("distload", False)
        and not hasattr(config, "workerinput")
    )


def gate_scopes(pairs: GatePairs, nodeids: list[str]) -> dict[str, str]:
    """{node id: its scope} for the tests some pair's argument selects: the connected group of the pairs that
    select it (two pairs are joined where one test belongs to both: union-find over the collection), named
    ``<gates N>`` after one pair of it. A test no pair selects is left out."""
    parent = list(range(len(pairs.pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for nodeid in nodeids:
        mine = [i for i in pairs.indexes(nodeid) if selects(pairs.pairs[i][0], nodeid)]
        if not mine:
            continue
        first[nodeid] = mine[0]
        for i in mine[1:]:
            a, b = find(mine[0]), find(i)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {nodeid: f"<gates {find(i)}>" for nodeid, i in first.items()}


class GateSchedule:
    """The controller's ``pytest_xdist_make_scheduler``, registered where :func:`by_gate` holds: a scheduler by
    gate when xdist's distribution is still its default (``load``, from no ``--dist``), else xdist's own."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist", None) != "load":
            return None
        selector = config.pluginmanager.get_plugin("tracker-selector")
        pairs = getattr(selector, "pairs", None)
        return make_scheduler(config, log, pairs if isinstance(pairs, GatePairs) else GatePairs([]))


def make_scheduler(config: pytest.Config, log: Any, pairs: GatePairs) -> Any:
    """xdist's ``LoadScopeScheduling`` with the scopes of :func:`gate_scopes` (a test no gate selects: its file),
    computed once over the collection, when xdist first asks for one."""
    from xdist.scheduler import LoadScopeScheduling

    class GateScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
        def __init__(self) -> None:
            super().__init__(config, log)
            self.scopes: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.scopes is None:
                self.scopes = gate_scopes(pairs, list(self.collection or ()))
            return self.scopes.get(nodeid) or nodeid.split("::", 1)[0]

        def remove_node(self, node: Any) -> str | None:
            """As xdist's, but the test a crashed worker was running is not sent again: ``LoadScopeScheduling``
            puts it back with the rest of its unit, so it killed each worker started in its place, until xdist
            stopped restarting them (``--max-worker-restart``; xdist's ``load`` drops it too)."""
            workload: dict[str, dict[str, bool]] = self.assigned_work.pop(node)
            pending = [(unit, nodeid) for unit in workload.values() for nodeid, done in unit.items() if not done]
            if not pending:
                return None
            unit, crashed = pending[0]
            unit[crashed] = True
            self.workqueue.update({scope: u for scope, u in workload.items() if not all(u.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

    return GateScheduling()
