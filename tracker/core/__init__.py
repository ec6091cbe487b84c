"""The evaluation: plans and evidence in, statuses and verdicts out, as pure functions over data. It reads no file
(none of ``tracker.base.fileio`` or ``tracker.base.cache``); the readers in ``tracker.store`` hand it what it judges.

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and nothing else.
"""

LAYER = 2
LIBRARIES: tuple[str, ...] = ()
