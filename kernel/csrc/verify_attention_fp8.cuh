// The fp8 KV cache kernel (issue 28): kernel/fp8.py's design q2p on mma.sync m16n8k32 e4m3 -> fp32.
//
// The pool rows are e4m3 (576 B) with one power-of-two scale; Q is quantized per call by a small kernel into two
// e4m3 terms a row, hi = e4m3(q / s_hi) and lo = e4m3((q - hi s_hi) / s_lo), each with a power-of-two scale per
// (node, head) row (kernel/fp8.py's _e4m3_split); P = exp2(S - shift) is rounded to e4m3 after a pre-scale
// (kF8PScale) for P.V. Every MMA runs in e4m3 with fp32 accumulators; every sum outside them is fp32.
//
// The block is v26's (verify_attention.cuh): 64 rows, 8 warps, partner warps w and w^1 with one half of K each, a
// 2-stage cp.async ring of 32-token tiles, one block barrier a tile, the S swap, the online softmax, bf16 partials
// and the same combine kernel. What changes is the tile's operands:
// - QK: a warp's half is 288 columns = 9 k-steps of 32 (8 latent from registers, 1 rope by ldmatrix from shared
//   memory). K's B fragments (k = 4 consecutive columns of one token) are what ldmatrix (b16) gives on token rows:
//   4 bytes = 4 e4m3 columns. The lo term's 9
//   k-steps run first into S, S is rescaled per row by s_lo / s_hi (exact: powers of two), then the hi term's 9;
//   S * s_hi is the partial score. One accumulator (16 registers) rather than two: O (128) and Q (72) leave no room.
// - P.V: the A fragment wants 4 consecutive k (tokens) where S's accumulator layout gives 2; P's A position
//   4cq + {0,1,2,3} is taken to be tokens {2cq, 2cq+1, 8+2cq, 9+2cq} (and +16), so the packing needs no shuffle.
//   V's B fragment wants 4 tokens of one column in a register, which ldmatrix.trans (16-bit elements) does not give:
//   it gives 2 tokens x 2 columns. An x4.trans over tokens 0-7, 8-15, 16-23, 24-31 of 16 columns, then __byte_perm,
//   yields the fragments of two n-tiles: the group's even columns and its odd columns. Lane (gq, cq) thus holds O
//   columns 16m + 4cq .. +3 (write_rows<true>: one 8-B store each, no shuffle).
// - Scales: S * s_hi(row) * sm_scale * log2(e) * kv_scale is the exp2-domain score; O * kv_scale / kF8PScale / l the
//   output. The shift moves when a row's max exceeds it by more than kF8LazyShift = 2, so P <= 4 and P * 64 <= 256.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "verify_attention.cuh"
#include "verify_attention_fp8.h"

namespace verify_attn {

// D += A * B for one m16n8k32 e4m3 tile with fp32 accumulators (sm_89+).
__device__ __forceinline__ void mma_e4m3(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The sm_120-balance emulation of this kernel (a build with VERIFY_MMA_REPEAT_X32 != 32: `python -m bench.verify
// --emulate-sm120 --impl cuda,cuda_fp8`) is a timing stand-in. sm_120 issues e4m3 mma.sync m16n8k32 as one QMMA in
// the time of its bf16 m16n8k16 (twice the FLOPs at twice the rate); sm_90 has no e4m3 mma.sync (ptxas unpacks the
// operands to f16 and issues two HMMA a QMMA). So in each e4m3 MMA's place this build issues one bf16 m16n8k16 on
// the same registers, repeated as the bf16 emulation repeats its own (mma_bf16_seq: the same k, idle accumulators as
// sinks), and zeroes S after QK (f8_stand_in_scores) so that the online softmax takes the path it takes on almost
// every tile of a real run (no shift moving). Its products mean nothing and its output is wrong on purpose: the
// bench times it beside the product, whose output it checks in the same run, never in its place.
constexpr bool kF8TimingStandIn = kMmaRepeatX32 != 32;

// Q's e4m3 terms in QK: 2 (q2p, the product: hi and lo, Q exact) or 1 (a lab build with VERIFY_ATTN_FP8_Q1, design
// qkp: the hi term alone, 36 QK MMAs a tile and warp instead of 72; Q rounded to e4m3, an error bf16's rule does not
// hold: kernel/NOTES.md, "An fp8 KV cache: the numerics"). Built to time what the lo term costs, not shipped.
#ifdef VERIFY_ATTN_FP8_Q1
constexpr int kF8QTerms = 1;
#else
constexpr int kF8QTerms = 2;
#endif

// D += A * B for one e4m3 MMA of the tile, the seq-th of its sequence (a stand-in build: see above).
template <int kSinks>
__device__ __forceinline__ void mma_f8_seq(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, int seq,
                                           float (&sink)[kSinks][4], int s0, int s1, int s2) {
  if constexpr (kF8TimingStandIn) {
    mma_bf16_seq(d, a, b0, b1, seq, sink, s0, s1, s2);
  } else {
    mma_e4m3(d, a, b0, b1);
  }
}

// A stand-in build's S after QK: zero, through a mask that only the launch's batch (>= 1, checked before launch)
// makes zero, so that neither the front end nor ptxas can drop the MMAs before it (an asm "mov 0" ptxas folds, and
// deleted QK's 72). The product's S is left as it is.
__device__ __forceinline__ void f8_stand_in_scores(float (&s)[4][4], int batch) {
  if constexpr (kF8TimingStandIn) {
    const uint32_t keep = batch < 1 ? 0xffffffffu : 0u;
#pragma unroll
    for (int n = 0; n < 4; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) s[n][i] = __uint_as_float(__float_as_uint(s[n][i]) & keep);
  }
}

// Four floats rounded to e4m3 (nearest even, saturating at +-448), x0 in the lowest byte.
__device__ __forceinline__ uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3) {
  uint16_t lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(x1), "f"(x0));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(x3), "f"(x2));
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// The power-of-two scale that maps amax at or under e4m3's 448 (kernel/fp8.py: 2^ceil(log2(amax / 448)), exponent
// in [-126, 127]); 1 for an all-zero row.
__device__ __forceinline__ float pow2_scale(float amax) {
  if (!(amax > 0.f)) return 1.f;
  int e = 0;
  const float f = frexpf(__fdiv_rn(amax, 448.f), &e);  // amax / 448 = f 2^e, f in [0.5, 1)
  if (f == 0.5f) --e;                                   // an exact power of two: its own exponent
  return ldexpf(1.f, max(-126, min(127, e)));
}

// One Q row by one warp: its 576 bf16 at `src` -> hi and lo e4m3 terms and their scales (powers of two). Lane l's
// pair j (j < 9) is columns 2 (32j + l) and + 1 of each term: hi[j], lo[j]. Shared by the quantize kernel and the
// lab build that quantizes in the split kernel (fp8wgrwf), so that both give the same bytes.
struct QRowTerms {
  __nv_fp8x2_storage_t hi[9], lo[9];
  float s_hi, s_lo;
};
__device__ __forceinline__ QRowTerms quantize_q_row(const uint32_t* src, int lane) {
  QRowTerms t;
  float v[18];
  float amax = 0.f;
#pragma unroll
  for (int j = 0; j < 9; ++j) {  // word j * 32 + lane: columns 2w, 2w + 1 (coalesced)
    const uint32_t w = __ldg(src + j * 32 + lane);
    const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
    v[2 * j] = f.x;
    v[2 * j + 1] = f.y;
    amax = fmaxf(amax, fmaxf(fabsf(f.x), fabsf(f.y)));
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  t.s_hi = pow2_scale(amax);
  const float inv_hi = __frcp_rn(t.s_hi);  // exact: a power of two (no fast-math rcp)
  const float s_hi = t.s_hi;
  float rem_max = 0.f;
#pragma unroll
  for (int j = 0; j < 9; ++j) {
    const __nv_fp8x2_storage_t h =
        __nv_cvt_float2_to_fp8x2(make_float2(v[2 * j] * inv_hi, v[2 * j + 1] * inv_hi), __NV_SATFINITE, __NV_E4M3);
    t.hi[j] = h;
    const __half2_raw back = __nv_cvt_fp8x2_to_halfraw2(h, __NV_E4M3);
    v[2 * j] -= __half2float(__half(__half_raw{back.x})) * s_hi;
    v[2 * j + 1] -= __half2float(__half(__half_raw{back.y})) * s_hi;
    rem_max = fmaxf(rem_max, fmaxf(fabsf(v[2 * j]), fabsf(v[2 * j + 1])));
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) rem_max = fmaxf(rem_max, __shfl_xor_sync(0xffffffffu, rem_max, o));
  t.s_lo = pow2_scale(rem_max);
  const float inv_lo = __frcp_rn(t.s_lo);
#pragma unroll
  for (int j = 0; j < 9; ++j)
    t.lo[j] =
        __nv_cvt_float2_to_fp8x2(make_float2(v[2 * j] * inv_lo, v[2 * j + 1] * inv_lo), __NV_SATFINITE, __NV_E4M3);
  return t;
}

// One warp a Q row: 576 bf16 -> hi and lo e4m3 terms (kF8QRowBytes a row) and their two scales.
__global__ void __launch_bounds__(256) verify_attn_quantize_q_kernel(const __nv_bfloat16* __restrict__ q,
                                                                     unsigned char* __restrict__ q8,
                                                                     float* __restrict__ scales, int rows) {
  pdl_launch_dependents();  // the split kernel's prologue needs none of this kernel's output (it waits before Q)
  const int row = static_cast<int>((blockIdx.x * 256u + threadIdx.x) >> 5), lane = threadIdx.x & 31;
  if (row >= rows) return;
  const QRowTerms t = quantize_q_row(reinterpret_cast<const uint32_t*>(q + static_cast<int64_t>(row) * kHeadDim), lane);
  uint16_t* hi_out = reinterpret_cast<uint16_t*>(q8 + static_cast<int64_t>(row) * kF8QRowBytes);
  uint16_t* lo_out = reinterpret_cast<uint16_t*>(q8 + static_cast<int64_t>(row) * kF8QRowBytes + kHeadDim);
#pragma unroll
  for (int j = 0; j < 9; ++j) {
    hi_out[j * 32 + lane] = t.hi[j];
    lo_out[j * 32 + lane] = t.lo[j];
  }
  if (lane == 0) {
    scales[2 * row] = t.s_hi;
    scales[2 * row + 1] = t.s_lo;
  }
}

// One e4m3 row of the warp's 4 tokens of a tile: 36 chunks of 16 B, lanes take chunk lane and, for lanes 0-3, +32.
__device__ __forceinline__ void issue_row_fp8(const Params& p, uint32_t dst, int slot, int token, int lane) {
  const char* src =
      static_cast<const char*>(p.kv) + lane * 16 + static_cast<int64_t>(slot < 0 ? 0 : slot) * kF8RowBytes;
  const int bytes = slot < 0 ? 0 : 16;
  const uint32_t d = dst + token * kF8SmemRowBytes + lane * 16;
  cp_async_16(d, src, bytes);
  if (lane < 4) cp_async_16(d + 512, src + 512, bytes);
}

// Column of k-step ks (0-7 latent, 8 rope) in group grp's half of the 576.
__device__ __forceinline__ constexpr int f8_col(int grp, int ks) { return ks < 8 ? grp * 256 + ks * 32 : kVDim + grp * 32; }

template <class Probe>
__global__ void __launch_bounds__(kThreads, 1) verify_attn_split_kernel_fp8(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  float* xch = reinterpret_cast<float*>(smem + kF8Stages * kF8TileBytes);
  int* s_slot = reinterpret_cast<int*>(smem + kF8Stages * kF8TileBytes + kXchBytes);  // [2][32]
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kF8Stages * kF8TileBytes + kXchBytes + kSlotBytes);
  unsigned char* q_rope = smem + kF8Stages * kF8TileBytes + kXchBytes + kSlotBytes + kMaskBytes;  // [64][128]
  float2* s_scale = reinterpret_cast<float2*>(q_rope + kF8QRopeBytes);  // [64]: (s_lo / s_hi, s_hi * scale)
  const uint32_t kv_base = smem_addr(smem);

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int grp = warp & 1, wrow = (warp >> 1) * 16;
  const int partner = warp ^ 1, pair_id = warp >> 1;
  const int gq = lane >> 2, cq = lane & 3;

  const SplitRange sp = split_range<kTileTokens>(p, b, split);  // (plain names: lambdas below capture them)
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
  }
  {
    const int my_slot =
        lane < 4 ? slot_at(p, b, prefix_start, prefix_len, seq_end, tile0 * kTileTokens + warp * 4 + lane) : -1;
    if (ntiles > 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) issue_row_fp8(p, kv_base, __shfl_sync(0xffffffffu, my_slot, j), warp * 4 + j, lane);
    }
    cp_async_commit();
  }
  if (tid < kTileTokens)
    s_slot[kTileTokens + tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + 1) * kTileTokens + tid);

  // Q's two terms and their scales are what the quantize kernel, this grid's programmatic primary (sm_90+), writes:
  // everything above reads only what was written before that kernel began, and so overlaps its run.
  pdl_wait_primary();
  if (tid < kRowsPerBlock) {
    const int r = row0 + tid;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[tid] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
  // Q's A fragments, both terms: qf[term][ks] for the 8 latent k-steps of the group's half (term 0 hi, 1 lo); the
  // rope columns of all 64 rows into q_rope (chunk c = term * 4 + column / 16 of row r at c ^ (r & 7)).
  const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
  uint32_t qf[kF8QTerms][8][4];
  {
    // After the wait: q is the quantize kernel's output (after_wait keeps these loads after it).
    const unsigned char* qb =
        after_wait(static_cast<const unsigned char*>(p.q)) + static_cast<int64_t>(b) * rows * kF8QRowBytes;
    const unsigned char* q_lo = qb + static_cast<int64_t>(r_lo) * kF8QRowBytes;
    const unsigned char* q_hi = qb + static_cast<int64_t>(r_hi) * kF8QRowBytes;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = tid + i * kThreads, r = idx >> 3, ch = idx & 7;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (row0 + r < rows)
        v = __ldg(reinterpret_cast<const uint4*>(qb + static_cast<int64_t>(row0 + r) * kF8QRowBytes +
                                                 (ch >> 2) * kHeadDim + kVDim + (ch & 3) * 16));
      *reinterpret_cast<uint4*>(q_rope + r * 128 + ((ch ^ (r & 7)) << 4)) = v;
    }
#pragma unroll
    for (int term = 0; term < kF8QTerms; ++term) {
#pragma unroll
      for (int ks = 0; ks < 8; ++ks) {
        const int c = term * kHeadDim + f8_col(grp, ks) + 4 * cq;
        qf[term][ks][0] = r_lo < rows ? __ldg(reinterpret_cast<const uint32_t*>(q_lo + c)) : 0u;
        qf[term][ks][1] = r_hi < rows ? __ldg(reinterpret_cast<const uint32_t*>(q_hi + c)) : 0u;
        qf[term][ks][2] = r_lo < rows ? __ldg(reinterpret_cast<const uint32_t*>(q_lo + c + 16)) : 0u;
        qf[term][ks][3] = r_hi < rows ? __ldg(reinterpret_cast<const uint32_t*>(q_hi + c + 16)) : 0u;
      }
    }
  }
  __syncthreads();

  float o[32][4];
#pragma unroll
  for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.f, l_hi = 0.f;

  for (int t = 0; t < ntiles; ++t) {
    int next_slot = -1;
    if (warp == 0) next_slot = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + t + 2) * kTileTokens + lane);
    cp_async_wait<0>();
    __syncthreads();
    if (t == 0) Probe::split(kFirstTileLanded, ntiles);
    const int* next_slots = s_slot + ((t + 1) & 1) * kTileTokens + warp * 4;
    const uint32_t tile = kv_base + (t & 1) * kF8TileBytes;

    float s[4][4];
#pragma unroll
    for (int n = 0; n < 4; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    {
      // ldmatrix.x4 lane address: token (lane/16)*8 + lane%8, 16 columns further for lanes 8-15 and 24-31.
      const uint32_t k_row = tile + (((lane >> 4) << 3) + (lane & 7)) * kF8SmemRowBytes + ((lane >> 3) & 1) * 16;
#pragma unroll
      for (int pass = 2 - kF8QTerms; pass < 2; ++pass) {
        const int term = 1 - pass;  // lo first, then hi
#pragma unroll
        for (int ks = 0; ks < 8; ++ks) {
          // Row j = 0..3 of the warp's 4 tokens of tile t+1, spread over the latent k-steps (8 a pass, 2 per row
          // with one term).
          constexpr int kEvery = 2 * kF8QTerms;
          const int step = (pass - (2 - kF8QTerms)) * 8 + ks;
          if (step % kEvery == 0 && t + 1 < ntiles) {
            const int j = step / kEvery;
            issue_row_fp8(p, kv_base + ((t + 1) & 1) * kF8TileBytes, next_slots[j], warp * 4 + j, lane);
          }
#pragma unroll
          for (int nn = 0; nn < 2; ++nn) {
            uint32_t bf[4];
            ldmatrix_x4(bf, k_row + nn * 16 * kF8SmemRowBytes + f8_col(grp, ks));
            // A stand-in's extra issues go into O's accumulators, idle during QK.
            const int seq = pass * 36 + ks * 4 + nn * 2;
            mma_f8_seq(s[2 * nn], qf[term][ks], bf[0], bf[1], seq, o, seq, seq + 11, seq + 22);
            mma_f8_seq(s[2 * nn + 1], qf[term][ks], bf[2], bf[3], seq + 1, o, seq + 1, seq + 12, seq + 23);
          }
        }
        {
          // The rope k-step, A fragments from q_rope: x4 lane address row wrow + lane%8 (+8 for lanes 8-15, 24-31),
          // chunk term * 4 + grp * 2 (+1 for lanes 16-31).
          uint32_t qa[4];
          const int qr = wrow + (lane & 7) + (((lane >> 3) & 1) << 3), ch = term * 4 + grp * 2 + (lane >> 4);
          ldmatrix_x4(qa, smem_addr(q_rope + qr * 128 + ((ch ^ (qr & 7)) << 4)));
#pragma unroll
          for (int nn = 0; nn < 2; ++nn) {
            uint32_t bf[4];
            ldmatrix_x4(bf, k_row + nn * 16 * kF8SmemRowBytes + f8_col(grp, 8));
            const int seq = pass * 36 + 32 + nn * 2;
            mma_f8_seq(s[2 * nn], qa, bf[0], bf[1], seq, o, seq, seq + 11, seq + 22);
            mma_f8_seq(s[2 * nn + 1], qa, bf[2], bf[3], seq + 1, o, seq + 1, seq + 12, seq + 23);
          }
        }
        if (pass == 0) {
          const float ratio_lo = s_scale[wrow + gq].x, ratio_hi = s_scale[wrow + gq + 8].x;
#pragma unroll
          for (int n = 0; n < 4; ++n) {
            s[n][0] *= ratio_lo;
            s[n][1] *= ratio_lo;
            s[n][2] *= ratio_hi;
            s[n][3] *= ratio_hi;
          }
        }
      }
    }
    f8_stand_in_scores(s, p.batch);
    cp_async_commit();
    {
      float4* mine = reinterpret_cast<float4*>(xch) + warp * 128;
      const float4* other = reinterpret_cast<const float4*>(xch) + partner * 128;
#pragma unroll
      for (int n = 0; n < 4; ++n) mine[n * 32 + lane] = make_float4(s[n][0], s[n][1], s[n][2], s[n][3]);
      asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair_id) : "memory");
      const float score_lo = s_scale[wrow + gq].y, score_hi = s_scale[wrow + gq + 8].y;
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const float4 v = other[n * 32 + lane];
        s[n][0] = (s[n][0] + v.x) * score_lo;
        s[n][1] = (s[n][1] + v.y) * score_lo;
        s[n][2] = (s[n][2] + v.z) * score_hi;
        s[n][3] = (s[n][3] + v.w) * score_hi;
      }
    }
    softmax_tile<kF8LazyShift>(s, o, m_lo, m_hi, l_lo, l_hi, 1.f, (tile0 + t) * kTileTokens, seq_end, prefix_len,
                               s_mask, wrow, gq, cq);
    // O[:, grp's 256 cols] += P . V, one k = 32 step: P's A position 4cq + {0..3} is tokens 2cq, 2cq+1, 8+2cq, 9+2cq.
    {
      uint32_t pa[4];
      pa[0] = pack_e4m3x4(s[0][0] * kF8PScale, s[0][1] * kF8PScale, s[1][0] * kF8PScale, s[1][1] * kF8PScale);
      pa[1] = pack_e4m3x4(s[0][2] * kF8PScale, s[0][3] * kF8PScale, s[1][2] * kF8PScale, s[1][3] * kF8PScale);
      pa[2] = pack_e4m3x4(s[2][0] * kF8PScale, s[2][1] * kF8PScale, s[3][0] * kF8PScale, s[3][1] * kF8PScale);
      pa[3] = pack_e4m3x4(s[2][2] * kF8PScale, s[2][3] * kF8PScale, s[3][2] * kF8PScale, s[3][3] * kF8PScale);
      // x4.trans lane address: token lane (matrices: tokens 0-7, 8-15, 16-23, 24-31), the group's 16 columns.
      const uint32_t v_addr = tile + lane * kF8SmemRowBytes + grp * 256;
#pragma unroll
      for (int m = 0; m < 16; ++m) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, v_addr + m * 16);
        // r[i]: tokens 8i + 2cq, +1 (16-bit halves) x columns 2gq, 2gq+1 (bytes). Even columns, then odd.
        // A stand-in's extra issues go into the accumulators 16, 8 and 24 away (4 or more m-steps from their own MMAs).
        mma_f8_seq(o[2 * m], pa, __byte_perm(r[0], r[1], 0x6420), __byte_perm(r[2], r[3], 0x6420), 2 * m, o,
                   2 * m + 16, 2 * m + 8, 2 * m + 24);
        mma_f8_seq(o[2 * m + 1], pa, __byte_perm(r[0], r[1], 0x7531), __byte_perm(r[2], r[3], 0x7531), 2 * m + 1, o,
                   2 * m + 17, 2 * m + 9, 2 * m + 25);
      }
    }
    if (warp == 0) s_slot[(t & 1) * kTileTokens + lane] = next_slot;
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();
  cp_async_wait<0>();

  write_rows<true>(p, b, split, rows, row0, wrow, grp, gq, cq, o, m_lo, m_hi, l_lo, l_hi, f.out_scale);
  Probe::split(kBlockExit, ntiles);
}

// Quantize Q, then `split_kernel` (`threads` a block, `smem` bytes) as its programmatic dependent (sm_90+: the split
// kernel's launch, indptr, slot ids and first gather overlap the quantization; it waits for it before reading Q), and
// with several splits the combine as the split kernel's. Shared by this kernel and the wgmma lab kernel
// (verify_attention_fp8_wgmma.cuh); the launch state is per Probe, as each build has its own. Without
// `quantize_kernel` (the lab's fp8wgrwf, which quantizes in the split kernel) the split kernel is launched alone, not
// as anyone's programmatic dependent.
template <class Probe>
inline cudaError_t launch_quantized_split_and_combine(const Fp8Params& f, cudaStream_t stream,
                                                      void (*split_kernel)(Fp8Params), int threads, int smem,
                                                      bool quantize_kernel = true) {
  const Params& p = f.p;
  const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  if (!launchable(p) || f.q_bf16 == nullptr || f.q_scales == nullptr || !aligned(f.q_bf16) || !aligned(f.q_scales))
    return cudaErrorInvalidValue;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  static LaunchInfo info[64];
  if (device >= 64) return cudaErrorInvalidDevice;
  LaunchInfo& in = info[device];
  err = configure_launch<Probe>(in, split_kernel, smem, device);
  if (err != cudaSuccess) return err;
  if (quantize_kernel) {
    const int q_rows = p.batch * p.nodes * p.heads;
    verify_attn_quantize_q_kernel<<<(q_rows + 7) / 8, 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(f.q_bf16), static_cast<unsigned char*>(const_cast<void*>(p.q)), f.q_scales,
        q_rows);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  // The quantization's programmatic dependent where there is one (griddepcontrol is sm_90+).
  err = launch_kernel(split_kernel, dim3(row_tiles(p.nodes, p.heads), p.num_splits, p.batch), dim3(threads), smem,
                      stream, quantize_kernel && in.cc_major >= 9, f);
  if (err != cudaSuccess || p.num_splits == 1) return err;
  return launch_combine<Probe>(p, in, stream);
}

template <class Probe>
inline cudaError_t launch_split_and_combine_fp8(const Fp8Params& f, cudaStream_t stream) {
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8<Probe>, kThreads,
                                                   kF8SmemBytes);
}

}  // namespace verify_attn
