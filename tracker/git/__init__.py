"""The repository's past through gitpython: the log, and plans, evidence and results as they were at a revision.

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and ``git``.
"""

LAYER = 5
LIBRARIES: tuple[str, ...] = ("git",)
