"""Tree-verify MLA attention over a page_size=1 latent KV pool (see kernel/verify.py for the API)."""

from kernel.verify import BACKENDS, verify_attention

__all__ = ["BACKENDS", "verify_attention"]
