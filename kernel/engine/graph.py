"""`GraphRunner`: one verify step (plan + all layers) captured into one `torch.cuda.CUDAGraph`.

Captured once per (batch, tree nodes) against the static plan of `TreeVerifyAttention.init_cuda_graph_state`
(buffers sized for max_context). A replay reads only what the static buffers hold at that moment: the inputs
copied in by `init_forward_metadata_replay_cuda_graph` and the engine's req_to_token table and KV pool, so one
capture serves every later step however the contexts grow and the trees change. Capturing needs a backend
whose launch is capturable (`cuda`, `triton`); the `reference` oracle reads lengths back to the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class GraphRunner:
    """Captures `step()` (which reads and writes only static buffers) and replays it."""

    def __init__(self, step: Callable[[], Any], warmup: int = 2) -> None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # first calls off the capture stream: lazy init, autotune, module load
            for _ in range(warmup):
                step()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # so that the difference below is the graph's private pool alone
        reserved = torch.cuda.memory_reserved()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.output = step()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        self.workspace_bytes = torch.cuda.memory_reserved() - reserved  # what the graph's private pool pins

    def replay(self) -> Any:
        """Run the captured step on the current contents of the static buffers; returns the static output."""
        self.graph.replay()
        return self.output
