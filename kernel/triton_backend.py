"""The baseline: tree verify the way serving stacks ship it today (SGLang's Triton "extend" kernel design).

Faithful to that design, which is what our speedups are measured against:
- grid = batch x heads x ceil(T / BLOCK_M): one program per (request, head, block of tree nodes);
- each program walks its request's whole prefix serially through the page_size=1 slot list, BLOCK_N
  tokens a step: gather the K rows (512 latent + 64 rope columns, as two tl.dot), online softmax in fp32,
  gather V (the first 512 columns again), accumulate; no split of the KV range across programs, so the
  shared latent row is re-read once per head;
- then the tree part: the request's T node rows, masked by the ancestor bitmask (SGLang takes a byte
  matrix; the bitmask carries the same information).
Block sizes follow SGLang's choice for a 576-wide head on sm_80+/sm_90 (BLOCK_N 64, 8 warps, 1 stage),
with BLOCK_M shrunk to 16 when a tree has <= 16 nodes so no program computes padding rows it cannot use.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

HEAD_DIM = 576
V_DIM = 512
ROPE_DIM = HEAD_DIM - V_DIM


@triton.jit
def _dot(a, b, DOT_F32: tl.constexpr):
    # Triton's CPU interpreter multiplies bf16 as raw uint16 (numpy has no bf16): there, and only there,
    # upcast the operands; on the GPU the dot is the bf16 tensor-core dot with fp32 accumulation.
    if DOT_F32:
        return tl.dot(a.to(tl.float32), b.to(tl.float32))
    return tl.dot(a, b)


@triton.jit
def _row(x, FP8: tl.constexpr):
    # An fp8 cache's e4m3 values are bf16 values exactly; its scale is folded into sm_scale (scores) and the output.
    # One return: compiled Triton visits every return of a constexpr-if (3.6 refused bf16 beside fp8e4nv), and the
    # cast is a no-op on a bf16 cache.
    return x.to(tl.bfloat16)


@triton.jit
def _verify_fwd_kernel(
    Q,
    KV,
    Indptr,
    PrefixSlots,
    TreeSlots,
    TreeMask,
    Out,
    Lse,
    sm_scale,
    kv_scale,
    T,
    H,
    D_NOPE: tl.constexpr,
    D_ROPE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_T: tl.constexpr,
    DOT_F32: tl.constexpr,
    FP8: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    mblock = tl.program_id(2)
    stride_kv: tl.constexpr = D_NOPE + D_ROPE

    offs_m = mblock * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < T
    offs_d = tl.arange(0, D_NOPE)
    offs_r = D_NOPE + tl.arange(0, D_ROPE)
    # q[b, m, h, :] lives at ((b*T + m)*H + h) * 576.
    q_row = ((b * T + offs_m) * H + h).to(tl.int64) * stride_kv
    q = tl.load(Q + q_row[:, None] + offs_d[None, :], mask=mask_m[:, None], other=0.0)
    q_pe = tl.load(Q + q_row[:, None] + offs_r[None, :], mask=mask_m[:, None], other=0.0)

    acc = tl.zeros([BLOCK_M, D_NOPE], dtype=tl.float32)
    denom = tl.zeros([BLOCK_M], dtype=tl.float32)
    row_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")

    # Stage 1: the whole prefix, serially, BLOCK_N gathered rows per step; every node sees every token.
    start = tl.load(Indptr + b)
    end = tl.load(Indptr + b + 1)
    offs_n = tl.arange(0, BLOCK_N)
    # A while loop rather than `for start_n in range(start, end, BLOCK_N)`: the same scf loop on the GPU
    # (SGLang runs its for loop with num_stages=1, i.e. unpipelined), and Triton's CPU interpreter
    # evaluates it without int() on a 1-element array, which numpy >= 2.4 rejects.
    start_n = start
    while start_n < end:
        mask_n = (start_n + offs_n) < end
        slots = tl.load(PrefixSlots + start_n + offs_n, mask=mask_n, other=0).to(tl.int64)
        k = _row(tl.load(KV + slots[None, :] * stride_kv + offs_d[:, None], mask=mask_n[None, :], other=0.0), FP8)
        qk = _dot(q, k, DOT_F32)
        k_pe = _row(tl.load(KV + slots[None, :] * stride_kv + offs_r[:, None], mask=mask_n[None, :], other=0.0), FP8)
        qk += _dot(q_pe, k_pe, DOT_F32)
        qk = tl.where(mask_n[None, :], qk * sm_scale, float("-inf"))
        new_max = tl.maximum(tl.max(qk, 1), row_max)
        rescale = tl.exp(row_max - new_max)
        p = tl.exp(qk - new_max[:, None])
        denom = denom * rescale + tl.sum(p, 1)
        v = _row(tl.load(KV + slots[:, None] * stride_kv + offs_d[None, :], mask=mask_n[:, None], other=0.0), FP8)
        acc = acc * rescale[:, None] + _dot(p.to(v.dtype), v, DOT_F32)
        row_max = new_max
        start_n += BLOCK_N

    # Stage 2: the tree nodes (T <= 64 fits one step), visible where the ancestor bit is set.
    offs_t = tl.arange(0, BLOCK_T)
    mask_t = offs_t < T
    slots = tl.load(TreeSlots + b * T + offs_t, mask=mask_t, other=0).to(tl.int64)
    bits = tl.load(TreeMask + b * T + offs_m, mask=mask_m, other=0)
    visible = ((bits[:, None] >> offs_t[None, :].to(tl.int64)) & 1) != 0
    visible = visible & mask_t[None, :] & mask_m[:, None]
    k = _row(tl.load(KV + slots[None, :] * stride_kv + offs_d[:, None], mask=mask_t[None, :], other=0.0), FP8)
    qk = _dot(q, k, DOT_F32)
    k_pe = _row(tl.load(KV + slots[None, :] * stride_kv + offs_r[:, None], mask=mask_t[None, :], other=0.0), FP8)
    qk += _dot(q_pe, k_pe, DOT_F32)
    qk = tl.where(visible, qk * sm_scale, float("-inf"))
    new_max = tl.maximum(tl.max(qk, 1), row_max)
    # A row that sees no token (empty prefix, no mask bit; or a padding row m >= T) would shift by -inf and
    # turn NaN: keep its shift finite. It ends with denom 0, stored as out 0 and lse -inf (every backend's
    # contract for such a row).
    new_max = tl.where(mask_m & (new_max > float("-inf")), new_max, 0.0)
    rescale = tl.exp(row_max - new_max)
    p = tl.exp(qk - new_max[:, None])
    denom = denom * rescale + tl.sum(p, 1)
    v = _row(tl.load(KV + slots[:, None] * stride_kv + offs_d[None, :], mask=mask_t[:, None], other=0.0), FP8)
    acc = acc * rescale[:, None] + _dot(p.to(v.dtype), v, DOT_F32)

    empty = denom == 0.0  # a visible token contributes exp(0) = 1 to its row: denom >= 1 otherwise
    denom = tl.where(empty, 1.0, denom)
    out_row = ((b * T + offs_m) * H + h).to(tl.int64) * D_NOPE
    tl.store(
        Out + out_row[:, None] + offs_d[None, :],
        (acc * (kv_scale / denom[:, None])).to(Out.dtype.element_ty),
        mask=mask_m[:, None],
    )
    tl.store(Lse + (b * T + offs_m) * H + h, tl.where(empty, float("-inf"), new_max + tl.log(denom)), mask=mask_m)


def block_sizes(nodes: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_T) for a tree of `nodes` nodes; tl.dot needs every dim >= 16."""
    block_m = 16 if nodes <= 16 else 32
    block_t = max(16, triton.next_power_of_2(nodes))
    return block_m, 64, block_t


def verify_attention_triton(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    prefix_indptr: torch.Tensor,
    prefix_slots: torch.Tensor,
    tree_slots: torch.Tensor,
    tree_mask: torch.Tensor,
    sm_scale: float,
    return_lse: bool,
    out: torch.Tensor | None = None,
    lse: torch.Tensor | None = None,
    kv_scale: float | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The `triton` backend (inputs already validated). `out`/`lse` may be preallocated (tests poison them). An fp8
    (e4m3) `kv_cache` comes with `kv_scale`: rows are turned into bf16 exactly, the scale folded into the scores'
    scale and the output, so the math is the bf16 path's on the dequantized cache (kernel/NOTES.md, fp8)."""
    fp8 = kv_cache.dtype == torch.float8_e4m3fn
    scale = float(kv_scale) if fp8 and kv_scale is not None else 1.0
    batch, nodes, heads, _ = q.shape
    if out is None:
        out = torch.empty(batch, nodes, heads, V_DIM, dtype=torch.bfloat16, device=q.device)
    if lse is None:
        lse = torch.empty(batch, nodes, heads, dtype=torch.float32, device=q.device)
    block_m, block_n, block_t = block_sizes(nodes)
    grid = (batch, heads, triton.cdiv(nodes, block_m))
    _verify_fwd_kernel[grid](
        q,
        kv_cache,
        prefix_indptr,
        prefix_slots,
        tree_slots,
        tree_mask,
        out,
        lse,
        float(sm_scale) * scale,
        scale,
        nodes,
        heads,
        D_NOPE=V_DIM,
        D_ROPE=ROPE_DIM,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_T=block_t,
        DOT_F32=q.device.type == "cpu",
        FP8=fp8,
        num_warps=8,
        num_stages=1,
    )
    return (out, lse) if return_lse else out
