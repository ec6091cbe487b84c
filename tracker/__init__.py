"""A declarative plan tracker: Markdown plans whose phase status is derived from test evidence.

This package's ``__init__`` imports nothing on purpose: every command imports only what it uses, so
``tracker status`` stays fast and :mod:`tracker.pytest_plugin` runs where only pytest is installed.
"""

__version__ = "0.1.0"
