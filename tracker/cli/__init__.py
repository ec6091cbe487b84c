"""The ``tracker`` command line: every command declared once (:mod:`tracker.cli.declared`), read by the plain-line
reader (:mod:`tracker.cli.plain`, no typer: the commonest lines) or by typer (:mod:`tracker.cli.app`: help,
completion, what is wrong with a line). Both run the same declared function, so the output and the exit code of a
line are the same either way (tests compare them). The process around a command line (Ctrl-C, output streams, the
exit) is :mod:`tracker.entry`'s.

Rule (tests/tracker/test_layers.py): the command line stands above the commands; it imports typer and click, and the
commands' modules only inside the command that runs them.
"""

from tracker.cli.main import main, run

__all__ = ["main", "run"]

LAYER = 8
LIBRARIES: tuple[str, ...] = ("typer", "click")
