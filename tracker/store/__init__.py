"""What lies on disk besides the plans: the evidence store, ingested runs, benchmark result files and their schema,
the status index, and :mod:`tracker.store.derive`, which reads them all and hands them to the evaluation.

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and ``pydantic``.
"""

LAYER = 4
LIBRARIES: tuple[str, ...] = ("pydantic",)
