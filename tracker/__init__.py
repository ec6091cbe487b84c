"""A declarative plan tracker: Markdown plans whose phase status is derived from test evidence.

This package's ``__init__`` imports nothing on purpose: every command imports only what it uses, so
``tracker status`` stays fast and :mod:`tracker.pytest_plugin` runs where only pytest is installed.

PYTEST_DONT_REWRITE: pytest's documented opt-out from assertion rewriting, for this module alone (it has no
assert). Installed as a plugin's distribution (``pip install .``, not editable), the package ``tracker`` is one
pytest marks for rewriting, and ``verify``'s pytest runs in a fork of the tracker, which has imported it: without
this mark every run warned "Module already imported so cannot be rewritten: tracker", an error under
``filterwarnings = ["error"]``. A ``python -m pytest`` in such a repository still rewrites the submodules.
"""

__version__ = "0.1.0"
