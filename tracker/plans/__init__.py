"""The plans: Markdown parsed with markdown-it-py, blocks validated with pydantic, loaded (and cached) from
``plans/``, and the generated regions written back.

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and ``markdown_it``,
``pydantic``.
"""

LAYER = 3
LIBRARIES: tuple[str, ...] = ("markdown_it", "pydantic")
