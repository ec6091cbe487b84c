"""``python -m tracker``: the same entry point as the ``tracker`` console script.

Until :mod:`tracker.entry` has installed its Ctrl-C handler (its first statements), a Ctrl-C ends the
process by SIGINT at once, as it would before Python set up its own handler: silently, never a traceback.
"""

import _signal  # type: ignore[import-not-found]  # the C module: no enum import before the handler

_signal.signal(_signal.SIGINT, _signal.SIG_DFL)

from tracker.entry import main  # noqa: E402 - after the line above, on purpose

main()
