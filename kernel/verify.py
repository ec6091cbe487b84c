"""`verify_attention`: the public entry point. Validates every input, then dispatches to a backend.

Nothing launches on bad input: the cheap checks (types, dtypes, devices, shapes, contiguity, sm_scale)
always run on the host from metadata alone; the value checks (indptr monotone, slots inside the pool,
tree masks well formed) need a device sync and run only with `debug=True` or `VERIFY_ATTN_DEBUG=1`.
Every error names the argument and gives the expected and the actual value.
"""

from __future__ import annotations

import math
import os

import torch

HEAD_DIM = 576
V_DIM = 512
MAX_NODES = 64
MAX_BATCH = 65535  # the cuda backend puts requests on grid z
MAX_ROWS = 2**31 // V_DIM  # B*T*H: the cuda backend's 32-bit row arithmetic
FLT_MAX = 3.4028234663852886e38  # sm_scale * log2(e) becomes an fp32 kernel argument
BACKENDS = ("cuda", "triton", "reference")
PDL_MODES = ("off", "launch", "prefix")  # verify_attention's pdl; by index, the kernel's Params::pdl (kPdl*)
DEBUG_ENV = "VERIFY_ATTN_DEBUG"
_TENSOR_ARGS = ("q", "kv_cache", "prefix_indptr", "prefix_slots", "tree_slots", "tree_mask")
FP8 = torch.float8_e4m3fn  # an fp8 KV cache (kernel/fp8.py): e4m3 rows and their scale, `kv_scale`
FP8_BACKENDS = BACKENDS  # every backend reads an fp8 cache (cuda: kernel/csrc/verify_attention_fp8.cuh, sm_89+)
_DTYPES = {
    "q": torch.bfloat16,
    "kv_cache": torch.bfloat16,
    "prefix_indptr": torch.int32,
    "prefix_slots": torch.int32,
    "tree_slots": torch.int32,
    "tree_mask": torch.int64,
}


def _check_shapes(t: dict[str, torch.Tensor]) -> None:
    """Ranks and sizes, and their consistency with q's [B, T, H, 576]."""
    ranks = {"q": 4, "kv_cache": 2, "prefix_indptr": 1, "prefix_slots": 1, "tree_slots": 2, "tree_mask": 2}
    for name, rank in ranks.items():
        if t[name].dim() != rank:
            raise ValueError(f"{name}: expected {rank} dimensions, got {t[name].dim()} (shape {tuple(t[name].shape)})")
    batch, nodes, heads, dim = t["q"].shape
    if dim != HEAD_DIM:
        raise ValueError(f"q: expected head dim {HEAD_DIM} (shape [B, T, H, {HEAD_DIM}]), got {dim}")
    if batch < 1:
        raise ValueError(f"q: expected batch B >= 1, got {batch}")
    if not 1 <= nodes <= MAX_NODES:
        raise ValueError(f"q: expected tree nodes 1 <= T <= {MAX_NODES}, got {nodes}")
    if heads < 1:
        raise ValueError(f"q: expected heads H >= 1, got {heads}")
    if batch > MAX_BATCH:
        raise ValueError(f"q: expected batch B <= {MAX_BATCH}, got {batch}")
    if batch * nodes * heads > MAX_ROWS:
        raise ValueError(f"q: expected B*T*H <= {MAX_ROWS}, got {batch * nodes * heads}")
    pool, width = t["kv_cache"].shape
    if width != HEAD_DIM:
        raise ValueError(f"kv_cache: expected shape [S, {HEAD_DIM}], got {list(t['kv_cache'].shape)}")
    if pool < 1:
        raise ValueError(f"kv_cache: expected a pool of S >= 1 rows, got {pool}")
    if t["prefix_indptr"].shape[0] != batch + 1:
        raise ValueError(f"prefix_indptr: expected shape [{batch + 1}] (B+1), got {list(t['prefix_indptr'].shape)}")
    for name in ("tree_slots", "tree_mask"):
        if tuple(t[name].shape) != (batch, nodes):
            raise ValueError(f"{name}: expected shape [{batch}, {nodes}] (B, T), got {list(t[name].shape)}")


def _check_values(t: dict[str, torch.Tensor]) -> None:
    """Debug-mode checks of tensor contents (each one syncs with the device)."""
    indptr = t["prefix_indptr"].tolist()
    total = t["prefix_slots"].numel()
    if indptr[0] != 0:
        raise ValueError(f"prefix_indptr: expected prefix_indptr[0] == 0, got {indptr[0]}")
    for b in range(len(indptr) - 1):
        if indptr[b + 1] < indptr[b]:
            raise ValueError(
                f"prefix_indptr: expected non-decreasing values, got prefix_indptr[{b + 1}] = "
                f"{indptr[b + 1]} < prefix_indptr[{b}] = {indptr[b]}"
            )
    if indptr[-1] != total:
        raise ValueError(f"prefix_indptr: expected last value == prefix_slots.numel() = {total}, got {indptr[-1]}")
    pool = t["kv_cache"].shape[0]
    for name in ("prefix_slots", "tree_slots"):
        flat = t[name].reshape(-1)
        bad = ((flat < 0) | (flat >= pool)).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            raise ValueError(
                f"{name}: expected slot ids in [0, {pool}) (kv_cache rows), got {int(flat[i])} at flat index {i}"
            )
    nodes = t["tree_mask"].shape[1]
    for b, row in enumerate(t["tree_mask"].tolist()):
        for i, bits in enumerate(row):
            bits &= (1 << 64) - 1  # view the int64 as its 64 unsigned bits
            if not bits >> i & 1:
                raise ValueError(
                    f"tree_mask: expected bit {i} (the node itself) set in tree_mask[{b}, {i}], got {bits:#x}"
                )
            if bits >> nodes:
                raise ValueError(f"tree_mask: expected only bits < T = {nodes} in tree_mask[{b}, {i}], got {bits:#x}")


def _check_kv_scale(fp8: bool, kv_scale: float | None, backend: str) -> None:
    """An fp8 cache comes with its scale (a finite fp32 value > 0), a bf16 one with none; only FP8_BACKENDS read fp8."""
    if not fp8:
        if kv_scale is not None:
            raise ValueError(f"kv_scale: only an fp8 kv_cache has a scale, got {kv_scale!r} for a bf16 kv_cache")
        return
    if kv_scale is None:
        raise ValueError(f"kv_scale: an fp8 ({FP8}) kv_cache needs its scale (stored value x kv_scale = the value)")
    if isinstance(kv_scale, bool) or not isinstance(kv_scale, (int, float)):
        raise TypeError(f"kv_scale: expected a float, got {type(kv_scale).__name__}")
    if not (math.isfinite(kv_scale) and 0 < kv_scale < FLT_MAX):
        raise ValueError(f"kv_scale: expected a finite fp32 value > 0, got {kv_scale}")
    if backend not in FP8_BACKENDS:
        raise ValueError(
            f"kv_cache: an fp8 cache runs on backend {', '.join(map(repr, FP8_BACKENDS))} so far, not {backend!r}"
        )


def validate(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    backend: str,
    debug: bool = False,
    kv_scale: float | None = None,
    pdl: str = "launch",
) -> None:
    """Raise TypeError/ValueError naming the first bad argument; see `verify_attention` for the contract."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    if not isinstance(pdl, str) or pdl not in PDL_MODES:
        raise ValueError(f"pdl: expected one of {', '.join(map(repr, PDL_MODES))}, got {pdl!r}")
    values = (q, kv_cache, prefix_indptr, prefix_slots, tree_slots, tree_mask)
    t = dict(zip(_TENSOR_ARGS, values, strict=True))
    for name, value in t.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if isinstance(sm_scale, bool) or not isinstance(sm_scale, (int, float)):
        raise TypeError(f"sm_scale: expected a float, got {type(sm_scale).__name__}")
    if not (math.isfinite(sm_scale) and sm_scale > 0):
        raise ValueError(f"sm_scale: expected a finite value > 0, got {sm_scale}")
    if sm_scale * math.log2(math.e) >= FLT_MAX:
        raise ValueError(
            f"sm_scale: expected a value < {FLT_MAX / math.log2(math.e):.4g} (fp32 in the kernels), got {sm_scale}"
        )
    for name, dtype in _DTYPES.items():
        if t[name].dtype != dtype and not (name == "kv_cache" and t[name].dtype == FP8):
            allowed = f"{dtype} or {FP8} (with kv_scale)" if name == "kv_cache" else str(dtype)
            raise TypeError(f"{name}: expected dtype {allowed}, got {t[name].dtype}")
    _check_kv_scale(kv_cache.dtype == FP8, kv_scale, backend)
    device = q.device
    for name, value in t.items():
        if value.device != device:
            raise ValueError(f"{name}: expected device {device} (the device of q), got {value.device}")
    if backend != "reference" and device.type != "cuda":
        raise ValueError(f"q: expected a CUDA device for backend {backend!r}, got {device}")
    _check_shapes(t)
    for name, value in t.items():
        if not value.is_contiguous():
            raise ValueError(
                f"{name}: expected a contiguous tensor, got strides {value.stride()} for shape {list(value.shape)}"
            )
    if backend == "cuda":  # its gathers and q loads are 16-byte vectors: a misaligned view would kill the context
        for name in ("q", "kv_cache"):
            if t[name].data_ptr() % 16:
                raise ValueError(
                    f"{name}: expected a 16-byte aligned data pointer for backend 'cuda', "
                    f"got address % 16 = {t[name].data_ptr() % 16}"
                )
    if debug or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        _check_values(t)


def verify_attention(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    *,
    backend: str = "cuda",
    return_lse: bool = False,
    debug: bool = False,
    kv_scale: float | None = None,
    pdl: str = "launch",
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """MLA attention of a batch of draft trees over a page_size=1 latent KV pool.

    Args:
        q: [B, T, H, 576] bf16, contiguous; T <= 64 tree nodes, H >= 1 heads.
        kv_cache: [S, 576] bf16 latent pool; K is a whole row, V its first 512 columns. Or an fp8 pool
            (float8_e4m3fn, kernel/fp8.py) with `kv_scale`: row values are stored value x kv_scale.
        prefix_indptr: [B+1] int32; request b's prefix is prefix_slots[indptr[b]:indptr[b+1]] (may be empty).
        prefix_slots: [N] int32 slot ids into kv_cache, in token order.
        tree_slots: [B, T] int32 slots of the tree nodes' own K/V rows.
        tree_mask: [B, T] int64; bit j of row i set <=> node i attends node j (its ancestors and itself).
        sm_scale: finite softmax scale > 0.
        backend: "cuda" (the split-KV kernel), "triton" (the serving-stack baseline) or "reference" (fp32).
        return_lse: also return the natural-log log-sum-exp of the scaled scores.
        debug: also check values (indptr, slot bounds, mask bits); env VERIFY_ATTN_DEBUG=1 does the same.
        kv_scale: an fp8 kv_cache's scale (finite > 0; a power of two keeps the dequantized rows exact in bf16);
            None for a bf16 one. cuda reads fp8 on sm_89 and newer (e4m3 mma.sync; kernel/fp8.py's design q2p).
        pdl: how cuda's bf16 kernel overlaps the kernel before it on the stream (programmatic dependent launch,
            sm_90 and newer; elsewhere, and on the other backends and the fp8 kernel, calls run in plain stream
            order). "off": a plain launch. "launch" (the default, safe for any caller): the kernel launches while the
            one before it finishes and waits for it before reading anything. "prefix": it also reads prefix_indptr,
            the slot ids, tree_mask and the prefix's KV rows before that wait, so the caller promises that the
            kernel right before the call writes none of those (only q and the rows at tree_slots) and was itself a
            plain launch or waited for its predecessors; a serving engine's step, whose plan and prefix rows come
            from earlier kernels, is that case (kernel/engine/attention.py).

    Returns:
        out [B, T, H, 512] bf16, and lse [B, T, H] fp32 when return_lse. A node that sees no token (an
        empty prefix and no bit set in its mask row, possible only without `debug`) gets out = 0 and
        lse = -inf on every backend.

    Raises:
        TypeError / ValueError naming the argument, with expected vs actual, before anything launches.
    """
    validate(q, kv_cache, prefix_indptr, prefix_slots, tree_slots, tree_mask, sm_scale, backend, debug, kv_scale, pdl)
    args = (q, kv_cache, prefix_indptr, prefix_slots, tree_slots, tree_mask, float(sm_scale), return_lse)
    if backend == "reference":
        from kernel.reference import verify_attention_reference

        return verify_attention_reference(*args, kv_scale=None if kv_scale is None else float(kv_scale))
    if backend == "triton":
        from kernel.triton_backend import verify_attention_triton

        return verify_attention_triton(*args, kv_scale=kv_scale)
    from kernel.cuda_backend import verify_attention_cuda  # built on first use (kernel/build.py)

    return verify_attention_cuda(*args, kv_scale=kv_scale, pdl=PDL_MODES.index(pdl))
