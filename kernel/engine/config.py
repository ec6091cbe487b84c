"""`EngineConfig`: the model's shapes, the pool's size and the draft tree's shape, checked once.

The attention shapes are the real ones (576-wide q/k rows, 512-wide latent v, one shared KV row per token
per layer: `kernel.verify_attention`'s contract); everything else (hidden width, MLP, vocabulary) is small.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from kernel.trees import yarn_sm_scale

KV_SCALE = 2.0**-4  # the fp8 pool's default scale (EngineConfig.kv_scale)
BACKEND_ENV = "VERIFY_ATTN_BACKEND"  # the engine's OFF/ON switch: reference | triton | cuda
MAX_NODES = 64  # one 64-bit ancestor mask per tree node


@dataclass(frozen=True)
class EngineConfig:
    """Shapes and seeds of one engine.

    layers, heads, vocab: the target model (every layer's attention goes through `kernel.verify_attention`).
    seed: the weights' seed (CPU generator, so every device builds the same model).
    max_context: most tokens one request may hold (prompt + generated + one draft tree); sizes the per-step
        buffers, hence the CUDA graphs' fixed launch.
    tree_nodes: draft-tree nodes verified per speculative step (1..64; 1 is plain greedy decoding).
    tree_branching: children per node, filled breadth-first (1: a chain; >= tree_nodes - 1: a star).
    max_batch: most requests decoded together; pool_tokens: KV pool rows (default max_batch * max_context).
    kv_dtype: the pool's rows, "bf16" or "fp8" (e4m3, half the bytes, kernel/fp8.py); kv_scale: an fp8 pool's scale,
        a power of two (the model's KV rows are ~N(0, 1): 2**-4 stores up to 28 before e4m3 saturates).
    attn_gain, mlp_gain, logit_scale: how strongly attention and the MLP move the residual stream away from
        the token's embedding (the draft head sees the embedding alone): the defaults accept ~2.4 tokens per
        step with 8-node binary trees while every continuation still depends on the whole context.
    """

    layers: int = 2
    heads: int = 2
    vocab: int = 64
    seed: int = 0
    max_context: int = 256
    tree_nodes: int = 8
    tree_branching: int = 2
    hidden: int = 64
    mlp_hidden: int = 128
    max_batch: int = 4
    pool_tokens: int = 0
    sm_scale: float = field(default_factory=yarn_sm_scale)
    attn_gain: float = 0.5
    mlp_gain: float = 0.25
    logit_scale: float = 4.0
    kv_dtype: str = "bf16"
    kv_scale: float = KV_SCALE

    def __post_init__(self) -> None:
        positive = ("layers", "heads", "vocab", "max_context", "hidden", "mlp_hidden", "max_batch", "tree_branching")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"EngineConfig.{name}: expected an integer >= 1, got {value!r}")
        if self.vocab < 2:
            raise ValueError(f"EngineConfig.vocab: expected >= 2 (a decision needs a runner-up), got {self.vocab}")
        if not 1 <= self.tree_nodes <= MAX_NODES:
            raise ValueError(f"EngineConfig.tree_nodes: expected 1..{MAX_NODES}, got {self.tree_nodes!r}")
        if self.max_context < self.tree_nodes + 1:
            raise ValueError(
                f"EngineConfig.max_context: expected >= tree_nodes + 1 = {self.tree_nodes + 1}, got {self.max_context}"
            )
        if self.pool_tokens and self.pool_tokens < self.max_context:
            raise ValueError(
                f"EngineConfig.pool_tokens: expected 0 (default) or >= max_context = "
                f"{self.max_context}, got {self.pool_tokens}"
            )
        if not self.sm_scale > 0:
            raise ValueError(f"EngineConfig.sm_scale: expected > 0, got {self.sm_scale}")
        if self.kv_dtype not in ("bf16", "fp8"):
            raise ValueError(f"EngineConfig.kv_dtype: expected 'bf16' or 'fp8', got {self.kv_dtype!r}")
        scale = self.kv_scale
        if isinstance(scale, bool) or not isinstance(scale, float) or not (0 < scale < 2.0**127):
            raise ValueError(f"EngineConfig.kv_scale: expected a float in (0, 2**127), got {scale!r}")
        if math.frexp(scale)[0] != 0.5:
            raise ValueError(f"EngineConfig.kv_scale: expected a power of two (rows exact in bf16), got {scale!r}")

    @property
    def pool_rows(self) -> int:
        """KV pool rows: `pool_tokens`, or enough for max_batch full requests."""
        return self.pool_tokens or self.max_batch * self.max_context


def resolve_backend(backend: str | None, device_type: str) -> str:
    """The attention backend: the argument, else $VERIFY_ATTN_BACKEND, else cuda on a GPU, reference on a CPU."""
    from kernel.verify import BACKENDS

    name = backend or os.environ.get(BACKEND_ENV) or ("cuda" if device_type == "cuda" else "reference")
    if name not in BACKENDS:
        source = "backend" if backend else BACKEND_ENV
        raise ValueError(f"{source}: expected one of {', '.join(BACKENDS)}, got {name!r}")
    if name != "reference" and device_type != "cuda":
        raise ValueError(f"backend: {name!r} needs a CUDA device, got device type {device_type!r}")
    return name
