"""What people read: phase detail, milestone reports, commit summaries, the docs' generated tables, charts
(matplotlib), templates (jinja2) and text as it shows (regex's grapheme clusters, graphemes.py).

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and ``jinja2``,
``matplotlib``, ``pydantic``, ``regex``.
"""

LAYER = 6
LIBRARIES: tuple[str, ...] = ("jinja2", "matplotlib", "pydantic", "regex")
