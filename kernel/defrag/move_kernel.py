"""One Triton launch that copies rows between two [layers, rows, 576] bf16 buffers, every layer at once.

Program (i, l) copies rows src_index[i*ROWS : (i+1)*ROWS] of layer l of `src` to rows dst_index[...] of layer l
of `dst`. A row is 1152 contiguous bytes, nine 128-byte lines: each program loads its ROWS x 512 and ROWS x 64
tiles before storing either, so each thread has ~72 bytes of loads in flight (the row offsets are multiples of
576 elements, which lets Triton issue 16-byte accesses). Loads all finish before the program's stores, but
programs run in no order: a launch is in place only when no destination is also a source (`schedule` makes
every wave so). Offsets are int64: a multi-GB pool passes 2^31 elements.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

ROW = 576
ROWS = 16  # rows a program
WARPS = 8


@triton.jit
def _move_rows(
    src,
    src_index,
    src_layer_stride,
    dst,
    dst_index,
    dst_layer_stride,
    count,
    ROWS: tl.constexpr,
    ROW: tl.constexpr,
):
    block = tl.program_id(0)
    layer = tl.program_id(1).to(tl.int64)
    rows = block * ROWS + tl.arange(0, ROWS)
    live = rows < count
    s = tl.load(src_index + rows, mask=live, other=0).to(tl.int64)
    d = tl.load(dst_index + rows, mask=live, other=0).to(tl.int64)
    head = tl.arange(0, 512)
    tail = 512 + tl.arange(0, ROW - 512)
    src_rows = src + layer * src_layer_stride + s[:, None] * ROW
    dst_rows = dst + layer * dst_layer_stride + d[:, None] * ROW
    a = tl.load(src_rows + head[None, :], mask=live[:, None])
    b = tl.load(src_rows + tail[None, :], mask=live[:, None])
    tl.store(dst_rows + head[None, :], a, mask=live[:, None])
    tl.store(dst_rows + tail[None, :], b, mask=live[:, None])


def move_rows(src: torch.Tensor, src_index: torch.Tensor, dst: torch.Tensor, dst_index: torch.Tensor) -> None:
    """dst[:, dst_index[i]] = src[:, src_index[i]] for every i and layer, in one launch (see the module
    docstring for when that is in place). src, dst: [layers, rows, 576] bf16, rows contiguous; indices int64."""
    count = int(src_index.numel())
    if count == 0:
        return
    assert src.shape[0] == dst.shape[0] and src.shape[2] == dst.shape[2] == ROW
    assert src.stride(1) == dst.stride(1) == ROW and src.stride(2) == dst.stride(2) == 1
    grid = (triton.cdiv(count, ROWS), src.shape[0])
    _move_rows[grid](
        src,
        src_index,
        src.stride(0),
        dst,
        dst_index,
        dst.stride(0),
        count,
        ROWS=ROWS,
        ROW=ROW,
        num_warps=WARPS,
    )
