"""Issue 31, item 5: evidence names the machine so that people can tell machines apart (a host called ``vm`` with an
H200 is not the CPU VM called ``vm``): status shows the GPU, else the CPU model, beside the host."""

from __future__ import annotations

from typing import Any

from tracker_testutil import phase, plan_text

from tracker.core.run_facts import machine_of
from tracker.plugin.machine import cpu_model


def test_the_machine_is_the_host_with_its_gpu_else_its_cpu() -> None:
    assert machine_of({"host": "vm", "gpu": "NVIDIA H200", "cpu": "Intel Xeon Platinum 8480+"}) == "vm (NVIDIA H200)"
    assert machine_of({"host": "vm", "cpu": "AMD EPYC 7B13"}) == "vm (AMD EPYC 7B13)"
    assert machine_of({"host": "vm"}) == "vm"  # evidence written before machines were named
    assert machine_of({"host": "vm", "gpu": " ", "cpu": 7}) == "vm"  # nothing usable: the host alone


def test_a_recorded_run_names_its_cpu_and_status_shows_it(repo: Any, cli: Any) -> None:
    model = cpu_model()
    root = repo(
        {
            "plans/0001-demo.md": plan_text(phases=phase("P1", 'test = "tests/test_a.py"')),
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    assert cli(root, "verify").code == 0
    line = next(x for x in cli(root, "status").out.splitlines() if x.strip().startswith("P1 "))
    assert (f"({model})]" in line) if model else "]" in line, line
