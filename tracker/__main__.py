"""``python -m tracker``: the same typer CLI as the ``tracker`` console script."""

from tracker.cli import main

main()
