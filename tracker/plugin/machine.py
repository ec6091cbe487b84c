"""The machine a run ran on and its provenance: host, platform, processor, GPUs, versions, commit (part of
:mod:`tracker.pytest_plugin`; rule: :mod:`tracker.plugin`)."""

from __future__ import annotations

import os
import platform
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tracker.base.contract import utc_now
from tracker.base.dirty import commit_state


def platform_name() -> str:
    """``Linux-6.8.0-x86_64``: system, release and machine. Not :func:`platform.platform`, which runs ``uname -p``
    in a child process (a fork of the whole pytest process) at the start of every recorded session."""
    uname = getattr(os, "uname", None)
    if uname is None:  # pragma: no cover - Windows
        return "-".join((platform.system(), platform.release(), platform.machine()))
    u = uname()
    return f"{u.sysname}-{u.release}-{u.machine}"


def cpu_model() -> str | None:
    """``Intel Xeon Platinum 8480+``: the processor's model name (Linux's ``/proc/cpuinfo``, trademarks, "CPU" and
    the clock dropped), to tell machines apart whose host names are alike; None where it cannot be read."""
    import re

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return None
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    if found is None:
        return None
    name = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@.*$|\d+-Core", " ", found.group(1))
    return " ".join(name.split())[:80] or None


def accelerator() -> str | None:
    """The machine's NVIDIA GPUs as its driver lists them (``NVIDIA H200``; several joined by ", "), whatever the
    tests import, or None where there is none: what tells a GPU machine from a CPU one with the same host name and
    CPU (``gpu`` is recorded only where the tests imported torch: round 15, A2)."""
    import glob

    models = []
    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        try:
            with open(info, encoding="utf-8", errors="replace") as f:
                found = re.search(r"^Model:\s*(.+)$", f.read(4096), re.MULTILINE)
        except OSError:
            continue
        if found:
            models.append(" ".join(found.group(1).split())[:80])
    if not models and os.path.exists("/dev/nvidiactl"):
        return "NVIDIA (model unknown)"
    return ", ".join(sorted(set(models))) or None


def provenance(root: Path, state: tuple[str | None, bool | None] | None = None) -> dict[str, Any]:
    """The run's provenance: commit and dirty flag by :func:`tracker.base.dirty.commit_state` (``state``, or asked now:
    the rule every writer uses, TRACKER_COMMIT / TRACKER_DIRTY first), plus machine and versions. ValueError for
    a TRACKER_COMMIT or TRACKER_DIRTY that every reader would refuse."""
    commit, dirty = commit_state(root) if state is None else state
    return {
        "commit": commit,
        "dirty": dirty,
        "time": utc_now(),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform_name(),
        **({"cpu": cpu} if (cpu := cpu_model()) else {}),
        "accelerator": accelerator(),
        "cuda": None,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
    }


def invocation_dir(config: pytest.Config, root: Path) -> str:
    """The directory pytest was started in, relative to the rootdir (``.`` there), or ``outside`` when not under it:
    ``python -m pytest`` puts it first on ``sys.path`` and tests may open files relative to it, so a run from
    another one is not ``pytest GATE`` as the repository runs it (tracker.core.run_index.RunIndex.alone)."""
    here = Path(config.invocation_params.dir)
    for base in (root.absolute(), root.resolve()):
        for given in (here, here.resolve()):
            if given.is_relative_to(base):
                return given.relative_to(base).as_posix() or "."
    return "outside"


def note_cuda(prov: dict[str, Any]) -> None:
    """Set ``cuda`` (and ``gpu``, the machine's GPU: a host name alone may not tell machines apart) in ``prov`` when
    the tests imported torch; never import torch here."""
    torch = sys.modules.get("torch")  # only if the tests imported it: never import torch here
    if torch is not None:
        try:
            prov["cuda"] = bool(torch.cuda.is_available())
            if prov["cuda"]:  # the machine's GPU: a host name alone may not tell machines apart
                prov["gpu"] = str(torch.cuda.get_device_name(0))[:80]
        except Exception:  # a broken CUDA setup is "not available", not a recorder crash
            prov["cuda"] = False
