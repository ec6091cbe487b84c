"""`DefragEngine`: the engine with a call between its verify steps, where a defragmentation can run.

The engine's decode loop (kernel/engine/engine.py) runs `_step` once per verify step; this subclass calls
`between_steps(engine, requests)` before each one, when no request of the batch has a step in flight. It
changes nothing else, so kernel/engine/ (and the GPU evidence of plan 0002's engine phases) stays as it is.

    engine = DefragEngine(config, backend="cuda", device="cuda", graphs=True)
    engine.between_steps = lambda engine, requests: compact_engine(engine, requests, tier=1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernel.engine.drafter import TreeShape
from kernel.engine.engine import Engine


class DefragEngine(Engine):
    """`Engine` plus `between_steps`, called with the batch's requests before every verify step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.between_steps: Callable[[Engine, list[Any]], None] | None = None

    def _step(self, requests: list[Any], shape: TreeShape, max_new: int) -> None:
        if self.between_steps is not None:
            self.between_steps(self, requests)
        super()._step(requests, shape, max_new)
