"""``python -m tracker``: the same entry point as the ``tracker`` console script."""

from tracker.entry import main

main()
