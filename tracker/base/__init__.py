"""The ground floor: the standard library's helpers every other layer stands on (file contracts, atomic files,
the working tree's file ids, git's dirty rule, pytest's selection rules, the caches' envelope and code identity).
The pytest plugin runs on machines where only pytest is installed, and it imports from here alone.

Rule (tests/tracker/test_layers.py holds every folder to its own): a module here imports the standard library,
``tracker`` (its version), ``tracker.errors``, the folders of a lower :data:`LAYER`, this folder, and nothing else.
"""

LAYER = 1
LIBRARIES: tuple[str, ...] = ()
