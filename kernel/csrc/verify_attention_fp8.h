// Host-side interface of the fp8 KV cache kernel (issue 28, design q2p of kernel/fp8.py): sizes and the launcher.
// Plain C++ (no device code, no torch types), shared by binding_fp8.cpp and verify_attention_fp8_sm.cu.
#pragma once

#include "verify_attention.h"

namespace verify_attn {

constexpr int kF8RowBytes = kHeadDim;                 // 576 B: one e4m3 pool row
constexpr int kF8SmemRowBytes = kF8RowBytes + 16;     // 592 B = 37 x 16: 8 consecutive rows hit 8 bank quads
constexpr int kF8TileBytes = kTileTokens * kF8SmemRowBytes;
constexpr int kF8Stages = 2;
constexpr int kF8QRowBytes = 2 * kHeadDim;            // a quantized Q row: its e4m3 hi term, then its lo term
// Q's rope columns, both terms, of the block's rows in shared memory ([64 rows][hi 64 B, lo 64 B], 16-B chunks
// XOR-swizzled by row), as the bf16 kernel keeps its rope there: in registers they made the kernel spill.
constexpr int kF8QRopeBytes = kRowsPerBlock * 2 * 64;
// Per block row: s_lo / s_hi and s_hi * the scores' scale (read each tile rather than held in registers).
constexpr int kF8RowScaleBytes = kRowsPerBlock * 8;
// Dynamic shared memory: the ring, the S swap, the slot ids, the ancestor masks, Q's rope and the row scales.
constexpr int kF8SmemBytes =
    kF8Stages * kF8TileBytes + kXchBytes + kSlotBytes + kMaskBytes + kF8QRopeBytes + kF8RowScaleBytes;
static_assert(kF8SmemBytes <= kSmemLimit, "shared memory per block must fit sm_120's 99 KB");

struct Fp8Params {
  Params p;             // p.q: the quantized Q, [B*T*H][2][576] e4m3 (written by the launch); p.kv: the e4m3 pool;
                        // p.scale_log2: sm_scale * log2(e) * kv_scale
  const void* q_bf16;   // [B, T, H, 576] bf16: what the launch quantizes into p.q
  float* q_scales;      // [B*T*H][2] fp32: each row's hi and lo scales (powers of two), written by the launch
  float out_scale;      // kv_scale / kF8PScale: V's scale and P's pre-scale, applied with 1/l in the epilogue
};

// P = exp2(S - shift) <= 2^kF8LazyShift is multiplied by kF8PScale before its rounding to e4m3, so P <= 256 (under
// e4m3's 448) and weights down to 2^-15..2^-17 of the row's maximum stay non-zero (kernel/fp8.py's P_SHIFT = 8 on
// P <= 1 keeps 2^-17).
constexpr int kF8LazyShift = 2;
constexpr float kF8PScale = 64.f;  // 2^(8 - kF8LazyShift)

// Quantizes Q (a kernel), then launches the fp8 split kernel and, with several splits, the combine kernel (bf16
// partials, as the bf16 path). Needs sm_89+ (e4m3 mma.sync). Returns cudaErrorInvalidValue for a bad size, a
// missing buffer or a misaligned pointer, else the first CUDA error.
cudaError_t launch_verify_attention_fp8(const Fp8Params& f, cudaStream_t stream);

}  // namespace verify_attn
