// Tree-verify MLA attention over a page_size=1 latent pool: the split-KV kernel on mma.sync and the launcher
// (the combine kernel is in verify_attention_combine.cuh, the PTX wrappers in verify_attention_ptx.cuh).
//
// Only sm_80-level instructions (mma.sync m16n8k16 bf16->fp32, ldmatrix, cp.async, named barriers), <= 99 KB of
// shared memory per block: the same source builds for sm_80, sm_90 and sm_120. No torch types here.
//
// Work decomposition. For request b the rows are the T*H (node, head) pairs, row = node * H + head, which is
// exactly q's memory order, so a block's 64 rows are 64 contiguous q rows. Each request's virtual sequence is
// its L prefix tokens followed by its T tree tokens; it is cut into num_splits tile-aligned chunks. Grid =
// (row tiles, splits, batch): block (r, s, b) runs rows [64r, 64r+64) over chunk s. Positions >= L are tree
// nodes and go through the ancestor mask; the prefix is visible to every node. The tree tokens thus land in the
// last non-empty split and are merged with the prefix by the same log-sum-exp combine as any other split.
//
// Inside a block: warps w and w+4 own the same 16 rows. Group g = w/4 keeps Q[16 rows, k in g's half of 576]
// in registers (its 256 latent columns: 16 k-steps x 4 regs; its 32 rope columns are read from shared
// memory), computes a partial S[16 x 32] for each 32-token KV tile, swaps it with its partner through shared
// memory and adds, so both hold the full S. Online softmax in registers (exp2, scale folded in), P re-packed as
// A fragments (FA2), group g accumulates O[16, 256 cols of g's half] (128 fp32 registers). KV tiles stream
// through a 2-stage cp.async ring; one __syncthreads per tile publishes tile t and frees the other stage.
//
// Two versions, selected at launch (kernel/NOTES.md has both measured, and the experiments between them):
//  v4: every thread issues its 9 cp.async of the next tile in one burst right after the tile barrier.
//  v14 (default): each warp issues its 4 rows of the next tile inside its QK loop, one row every 4 k-steps (the
//    burst stalled on the LSU queue: 14% of v4's warp stall samples, ncu), and tile 0 is gathered before Q is
//    loaded, so their latencies overlap.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "verify_attention.h"
#include "verify_attention_combine.cuh"
#include "verify_attention_ptx.cuh"

namespace verify_attn {

constexpr float kLazyShift = 8.f;  // log2 units: P <= 256 before the running shift moves
constexpr int kBarSwap = 1;        // + (w & 3): named barrier of the pair (w, w+4) swapping S partials

// Pool slot of virtual position pos of request b (prefix first, then tree nodes), or -1 past `end`.
__device__ __forceinline__ int slot_at(const Params& p, int b, int prefix_start, int prefix_len, int end,
                                       int pos) {
  if (pos >= end) return -1;
  if (pos < prefix_len) return __ldg(p.prefix_slots + prefix_start + pos);
  return __ldg(p.tree_slots + b * p.nodes + (pos - prefix_len));
}

// One pool row (1152 B = 72 chunks of 16 B) into shared memory by one warp: lanes take chunks lane, lane+32
// and, for lanes 0-7, lane+64, so the warp reads 512 contiguous bytes per instruction. `kv` and `dst` already
// carry the lane's 16-B offset; slot < 0 zero-fills (tokens past the chunk end: P is 0 there, and 0 * stale NaN
// bit patterns in shared memory would poison O).
__device__ __forceinline__ void issue_row(const char* kv, uint32_t dst, int slot, int lane) {
  const int bytes = slot < 0 ? 0 : 16;
  const char* src = kv + static_cast<int64_t>(slot < 0 ? 0 : slot) * kRowBytes;
  cp_async_16(dst, src, bytes);
  cp_async_16(dst + 512, src + 512, bytes);
  if (lane < 8) cp_async_16(dst + 1024, src + 1024, bytes);
}

// Gather the warp's 4 tokens (4w..4w+3) of a tile in one burst (v4). The slot ids come from the shared slot ring
// in one 16-B load (4 dependent LDS -> LDGSTS round trips sat right after the tile barrier).
__device__ __forceinline__ void issue_rows(const Params& p, uint32_t dst, const int* s_slot, int warp, int lane) {
  const char* kv = static_cast<const char*>(p.kv) + lane * 16;
  const int4 slots4 = *reinterpret_cast<const int4*>(s_slot + warp * 4);
  const int slots[4] = {slots4.x, slots4.y, slots4.z, slots4.w};
  dst += warp * 4 * kSmemRowBytes + lane * 16;
#pragma unroll
  for (int j = 0; j < 4; ++j) issue_row(kv, dst + j * kSmemRowBytes, slots[j], lane);
}

// Partial S[16 rows x 32 tokens] = Q[rows, half g] . K[tile, half g]^T (latent from registers, rope by
// ldmatrix from the swizzled Q rope block: row wrow + lane%16, chunk +1 for lanes 16-31).
// kSpread (v14): when `gather`, the warp's 4 rows (tokens 4w..4w+3) of the next tile are gathered inside this
// loop, row j at k-step 4j, into stage `next`; `slots` holds their 4 slot ids (read from shared memory before
// the loop: a read next to each copy put its latency inside the loop, +2% time).
template <bool kSpread>
__device__ __forceinline__ void qk_tile(float (&s)[4][4], const uint32_t (&qf)[16][4], uint32_t tile,
                                        const unsigned char* q_rope, int wrow, int grp, int warp, int lane,
                                        const Params& p, bool gather, uint32_t next, int4 slots) {
#pragma unroll
  for (int n = 0; n < 4; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
  // ldmatrix.x4 lane address: token (lane/16)*8 + lane%8, column +8 for lanes 8-15 and 24-31.
  const uint32_t k_row = tile + (((lane >> 4) << 3) + (lane & 7)) * kSmemRowBytes + ((lane >> 3) & 1) * 16;
  const uint32_t k_lat = k_row + grp * 256 * 2;
#pragma unroll
  for (int ks = 0; ks < 16; ++ks) {
    if (kSpread && (ks & 3) == 0 && gather) {
      const int j = ks >> 2;
      const int slot = j == 0 ? slots.x : j == 1 ? slots.y : j == 2 ? slots.z : slots.w;
      issue_row(static_cast<const char*>(p.kv) + lane * 16, next + (warp * 4 + j) * kSmemRowBytes + lane * 16, slot,
                lane);
    }
#pragma unroll
    for (int nn = 0; nn < 2; ++nn) {
      uint32_t bf[4];
      ldmatrix_x4(bf, k_lat + nn * 16 * kSmemRowBytes + ks * 32);
      mma_bf16(s[2 * nn], qf[ks], bf[0], bf[1]);
      mma_bf16(s[2 * nn + 1], qf[ks], bf[2], bf[3]);
    }
  }
  const int qr = wrow + (lane & 15);
  const uint32_t k_rope = k_row + (kVDim + grp * 32) * 2;
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    uint32_t qa[4];
    const int ch = grp * 4 + ks * 2 + (lane >> 4);
    ldmatrix_x4(qa, smem_addr(q_rope + qr * 128 + ((ch ^ (qr & 7)) << 4)));
#pragma unroll
    for (int nn = 0; nn < 2; ++nn) {
      uint32_t bf[4];
      ldmatrix_x4(bf, k_rope + nn * 16 * kSmemRowBytes + ks * 32);
      mma_bf16(s[2 * nn], qa, bf[0], bf[1]);
      mma_bf16(s[2 * nn + 1], qa, bf[2], bf[3]);
    }
  }
}

// Scale S into the exp2 domain, mask (past the chunk end; tree positions by the ancestor bits), then the online
// softmax with a lazy shift (FA4's trick): the running shift m moves only when a row's max exceeds it by more
// than 8 (log2 units), so P <= 2^8 stays exact enough in bf16 and the 128-register O rescale is skipped,
// warp-uniformly, on almost every tile. A row that has seen only masked scores keeps m = -inf and uses 0 as its
// shift (its P is 0). On return s holds P (fp32).
__device__ __forceinline__ void softmax_tile(float (&s)[4][4], float (&o)[32][4], float& m_lo, float& m_hi,
                                             float& l_lo, float& l_hi, float scale, int pos0, int seq_end,
                                             int prefix_len, const uint64_t* s_mask, int wrow, int gq, int cq) {
  const bool needs_mask = pos0 + kTileTokens > min(seq_end, prefix_len);
  const uint64_t mask_lo = needs_mask ? s_mask[wrow + gq] : 0ull;
  const uint64_t mask_hi = needs_mask ? s_mask[wrow + gq + 8] : 0ull;
#pragma unroll
  for (int n = 0; n < 4; ++n) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float v_lo = s[n][e] * scale, v_hi = s[n][2 + e] * scale;
      if (needs_mask) {
        const int pos = pos0 + n * 8 + 2 * cq + e;
        bool ok_lo = pos < seq_end, ok_hi = ok_lo;
        if (ok_lo && pos >= prefix_len) {
          const int node = pos - prefix_len;
          ok_lo = (mask_lo >> node) & 1ull;
          ok_hi = (mask_hi >> node) & 1ull;
        }
        v_lo = ok_lo ? v_lo : -INFINITY;
        v_hi = ok_hi ? v_hi : -INFINITY;
      }
      s[n][e] = v_lo;
      s[n][2 + e] = v_hi;
    }
  }
  float mx_lo = fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1]));
  mx_lo = quad_max(fmaxf(mx_lo, fmaxf(fmaxf(s[2][0], s[2][1]), fmaxf(s[3][0], s[3][1]))));
  float mx_hi = fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]));
  mx_hi = quad_max(fmaxf(mx_hi, fmaxf(fmaxf(s[2][2], s[2][3]), fmaxf(s[3][2], s[3][3]))));
  const bool move_lo = mx_lo > m_lo + kLazyShift, move_hi = mx_hi > m_hi + kLazyShift;
  if (__any_sync(0xffffffffu, move_lo || move_hi)) {
    const float mn_lo = move_lo ? mx_lo : m_lo, mn_hi = move_hi ? mx_hi : m_hi;
    const float a_lo = move_lo ? exp2f(m_lo - mn_lo) : 1.f, a_hi = move_hi ? exp2f(m_hi - mn_hi) : 1.f;
    m_lo = mn_lo;
    m_hi = mn_hi;
    l_lo *= a_lo;
    l_hi *= a_hi;
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      o[n][0] *= a_lo;
      o[n][1] *= a_lo;
      o[n][2] *= a_hi;
      o[n][3] *= a_hi;
    }
  }
  const float sh_lo = m_lo == -INFINITY ? 0.f : m_lo, sh_hi = m_hi == -INFINITY ? 0.f : m_hi;
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    s[n][0] = exp2f(s[n][0] - sh_lo);
    s[n][1] = exp2f(s[n][1] - sh_lo);
    s[n][2] = exp2f(s[n][2] - sh_hi);
    s[n][3] = exp2f(s[n][3] - sh_hi);
    l_lo += s[n][0] + s[n][1];
    l_hi += s[n][2] + s[n][3];
  }
}

// O[16 rows, half g's 256 cols] += P . V; V^T fragments via ldmatrix.trans (token rows, 8 columns each).
__device__ __forceinline__ void pv_tile(float (&o)[32][4], const float (&s)[4][4], uint32_t tile, int grp,
                                        int lane) {
  const uint32_t v_addr =
      tile + ((((lane >> 3) & 1) << 3) + (lane & 7)) * kSmemRowBytes + (grp * 256 + (lane >> 4) * 8) * 2;
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    uint32_t pa[4];
    pa[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
    pa[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
    pa[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    pa[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) {
      uint32_t bf[4];
      ldmatrix_x4_trans(bf, v_addr + kk * 16 * kSmemRowBytes + nt * 32);
      mma_bf16(o[2 * nt], pa, bf[0], bf[1]);
      mma_bf16(o[2 * nt + 1], pa, bf[2], bf[3]);
    }
  }
}

// Write my S partial, wait for the partner's (named barrier of the pair's 64 threads), add it. 16-B accesses:
// 4 stores + 4 loads a thread instead of 16 + 16.
template <bool kFenced>
__device__ __forceinline__ void swap_add(float (&s)[4][4], float* xch, int warp, int lane) {
  float4* mine = reinterpret_cast<float4*>(xch) + warp * 128;
  const float4* other = reinterpret_cast<const float4*>(xch) + (warp ^ 4) * 128;
#pragma unroll
  for (int n = 0; n < 4; ++n) mine[n * 32 + lane] = make_float4(s[n][0], s[n][1], s[n][2], s[n][3]);
  if constexpr (kFenced) {
    named_barrier_sync(kBarSwap + (warp & 3), 64);
  } else {
    asm volatile("bar.sync %0, 64;\n" ::"r"(kBarSwap + (warp & 3)));  // v4 as measured
  }
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    const float4 v = other[n * 32 + lane];
    s[n][0] += v.x;
    s[n][1] += v.y;
    s[n][2] += v.z;
    s[n][3] += v.w;
  }
}

// One 256-thread block per SM (254 registers a thread). Overridable only so the compile test can squeeze the
// register budget and prove that its spill check fires.
#ifndef VERIFY_ATTN_MIN_BLOCKS
#define VERIFY_ATTN_MIN_BLOCKS 1
#endif

// kV14 = false: v4; true: v14 (see the header comment).
template <bool kV14>
__global__ void __launch_bounds__(kThreads, VERIFY_ATTN_MIN_BLOCKS) verify_attn_split_kernel(const Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  float* xch = reinterpret_cast<float*>(smem + kStages * kTileBytes);
  int* s_slot = reinterpret_cast<int*>(smem + kStages * kTileBytes + kXchBytes);  // [2][32]
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kStages * kTileBytes + kXchBytes + kSlotBytes);
  unsigned char* q_rope = smem + kStages * kTileBytes + kXchBytes + kSlotBytes + kMaskBytes;  // [64][64] bf16
  const uint32_t kv_base = smem_addr(smem);

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int grp = warp >> 2, wrow = (warp & 3) * 16;
  const int gq = lane >> 2, cq = lane & 3;  // mma fragment coordinates: row group, column pair

  const int prefix_start = p.prefix_indptr[b];
  const int prefix_len = p.prefix_indptr[b + 1] - prefix_start;
  const int total = prefix_len + p.nodes;
  const int total_tiles = (total + kTileTokens - 1) / kTileTokens;
  const int per_split = (total_tiles + p.num_splits - 1) / p.num_splits;
  const int tile0 = split * per_split;
  const int ntiles = max(0, min(total_tiles, tile0 + per_split) - tile0);
  const int seq_end = min(total, (tile0 + ntiles) * kTileTokens);

  if constexpr (kV14) {
    // Gather tile 0 before loading Q, so the two latencies overlap: lanes 0-3 fetch the slot ids of the warp's
    // 4 tokens, broadcast by shuffle.
    const int my_slot =
        lane < 4 ? slot_at(p, b, prefix_start, prefix_len, seq_end, tile0 * kTileTokens + warp * 4 + lane) : -1;
    if (ntiles > 0) {
      const char* kv = static_cast<const char*>(p.kv) + lane * 16;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        issue_row(kv, kv_base + (warp * 4 + j) * kSmemRowBytes + lane * 16, __shfl_sync(0xffffffffu, my_slot, j),
                  lane);
    }
    cp_async_commit();
  }
  if (tid < kRowsPerBlock) {
    const int r = row0 + tid;
    s_mask[tid] = r < rows ? p.tree_mask[b * p.nodes + r / p.heads] : 0ull;
  }
  if (tid < kTileTokens) {
    s_slot[tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + 0) * kTileTokens + tid);
    s_slot[kTileTokens + tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + 1) * kTileTokens + tid);
  }

  // Q fragments of this warp's 16 rows, latent columns [grp*256, grp*256+256), straight from global (once).
  // The group's 32 rope columns 512 + grp*32 come from shared memory each tile (see kQRopeBytes).
  uint32_t qf[16][4];
  {
    const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
    const __nv_bfloat16* qb = static_cast<const __nv_bfloat16*>(p.q) + static_cast<int64_t>(b) * rows * kHeadDim;
    const uint32_t* q_lo = reinterpret_cast<const uint32_t*>(qb + static_cast<int64_t>(r_lo) * kHeadDim);
    const uint32_t* q_hi = reinterpret_cast<const uint32_t*>(qb + static_cast<int64_t>(r_hi) * kHeadDim);
#pragma unroll
    for (int s = 0; s < 16; ++s) {
      const int w = (grp * 256 + s * 16 + 2 * cq) / 2;  // 32-bit word index of the column pair
      qf[s][0] = r_lo < rows ? __ldg(q_lo + w) : 0u;
      qf[s][1] = r_hi < rows ? __ldg(q_hi + w) : 0u;
      qf[s][2] = r_lo < rows ? __ldg(q_lo + w + 4) : 0u;
      qf[s][3] = r_hi < rows ? __ldg(q_hi + w + 4) : 0u;
    }
    // Rope columns of all 64 rows: 512 chunks of 16 B, two per thread; chunk c of row r at c ^ (r & 7).
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = tid + i * kThreads, r = idx >> 3, ch = idx & 7;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (row0 + r < rows)
        v = __ldg(reinterpret_cast<const uint4*>(qb + static_cast<int64_t>(row0 + r) * kHeadDim + kVDim) + ch);
      *reinterpret_cast<uint4*>(q_rope + r * 128 + ((ch ^ (r & 7)) << 4)) = v;
    }
  }
  __syncthreads();
  if constexpr (!kV14) {
    if (ntiles > 0) issue_rows(p, kv_base, s_slot, warp, lane);
    cp_async_commit();
  }

  float o[32][4];
#pragma unroll
  for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.f, l_hi = 0.f;
  const float scale = p.scale_log2;

  for (int t = 0; t < ntiles; ++t) {
    // Slot ids two tiles ahead: the global load's latency hides behind this tile's math.
    const int next_slot =
        warp == 0 ? slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + t + 2) * kTileTokens + lane) : -1;
    // One barrier per tile: after it, tile t is visible to every thread and every warp has finished tile t-1,
    // so stage (t+1)&1 is free for the next gather (and the slot entry written at the end of t-1 is visible).
    cp_async_wait<0>();
    __syncthreads();
    const uint32_t tile = kv_base + (t & 1) * kTileBytes;
    const uint32_t next_stage = kv_base + ((t + 1) & 1) * kTileBytes;
    const int* next_slots = s_slot + ((t + 1) & 1) * kTileTokens;
    float s[4][4];
    if constexpr (kV14) {
      qk_tile<true>(s, qf, tile, q_rope, wrow, grp, warp, lane, p, t + 1 < ntiles, next_stage,
                    *reinterpret_cast<const int4*>(next_slots + warp * 4));
      cp_async_commit();
    } else {
      if (t + 1 < ntiles) {
        issue_rows(p, next_stage, next_slots, warp, lane);
        cp_async_commit();
      }
      qk_tile<false>(s, qf, tile, q_rope, wrow, grp, warp, lane, p, false, 0u, int4{});
    }
    swap_add<kV14>(s, xch, warp, lane);
    softmax_tile(s, o, m_lo, m_hi, l_lo, l_hi, scale, (tile0 + t) * kTileTokens, seq_end, prefix_len, s_mask,
                       wrow, gq, cq);
    pv_tile(o, s, tile, grp, lane);
    if (warp == 0) {
      s_slot[(t & 1) * kTileTokens + lane] = next_slot;  // tile t+2 reuses tile t's entry
      // Pull tile t+2's rows into L2 now, so the gather of tile t+2 (issued during tile t+1) hits L2.
      if (next_slot >= 0) {
        const char* row = static_cast<const char*>(p.kv) + static_cast<int64_t>(next_slot) * kRowBytes;
#pragma unroll
        for (int i = 0; i < kRowBytes / 128; ++i) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(row + i * 128));
      }
    }
  }
  cp_async_wait<0>();

  // Normalise and write: directly as bf16 (+ natural-log lse) with one split, else fp32 partials + log2 lse.
  l_lo = quad_sum(l_lo);
  l_hi = quad_sum(l_hi);
  const float inv_lo = l_lo > 0.f ? 1.f / l_lo : 0.f, inv_hi = l_hi > 0.f ? 1.f / l_hi : 0.f;
  const float lse_lo = l_lo > 0.f ? m_lo + __log2f(l_lo) : -INFINITY;
  const float lse_hi = l_hi > 0.f ? m_hi + __log2f(l_hi) : -INFINITY;
  const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
  const int col0 = grp * 256 + 2 * cq;
  if (p.num_splits == 1) {
    __nv_bfloat16* ob = static_cast<__nv_bfloat16*>(p.out) + static_cast<int64_t>(b) * rows * kVDim;
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      if (r_lo < rows)
        *reinterpret_cast<uint32_t*>(ob + static_cast<int64_t>(r_lo) * kVDim + col0 + n * 8) =
            pack_bf16(o[n][0] * inv_lo, o[n][1] * inv_lo);
      if (r_hi < rows)
        *reinterpret_cast<uint32_t*>(ob + static_cast<int64_t>(r_hi) * kVDim + col0 + n * 8) =
            pack_bf16(o[n][2] * inv_hi, o[n][3] * inv_hi);
    }
    if (p.lse != nullptr && grp == 0 && cq == 0) {
      const float ln2 = 0.6931471805599453f;
      if (r_lo < rows) p.lse[static_cast<int64_t>(b) * rows + r_lo] = lse_lo * ln2;
      if (r_hi < rows) p.lse[static_cast<int64_t>(b) * rows + r_hi] = lse_hi * ln2;
    }
  } else {
    const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;
    float* po = p.part_o + base_row * kVDim;
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      if (r_lo < rows)
        *reinterpret_cast<float2*>(po + static_cast<int64_t>(r_lo) * kVDim + col0 + n * 8) =
            make_float2(o[n][0] * inv_lo, o[n][1] * inv_lo);
      if (r_hi < rows)
        *reinterpret_cast<float2*>(po + static_cast<int64_t>(r_hi) * kVDim + col0 + n * 8) =
            make_float2(o[n][2] * inv_hi, o[n][3] * inv_hi);
    }
    if (grp == 0 && cq == 0) {
      if (r_lo < rows) p.part_lse[base_row + r_lo] = lse_lo;
      if (r_hi < rows) p.part_lse[base_row + r_hi] = lse_hi;
    }
  }
}

// Enable > 48 KB dynamic shared memory once per device and version, then launch split (+ combine) kernels.
template <bool kV14>
inline cudaError_t launch_split_and_combine(const Params& p, cudaStream_t stream) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  static bool configured[64] = {};
  if (device >= 64) return cudaErrorInvalidDevice;
  if (!configured[device]) {
    err = cudaFuncSetAttribute(verify_attn_split_kernel<kV14>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes);
    if (err != cudaSuccess) return err;
    configured[device] = true;
  }
  const dim3 grid(row_tiles(p.nodes, p.heads), p.num_splits, p.batch);
  verify_attn_split_kernel<kV14><<<grid, kThreads, kSmemBytes, stream>>>(p);
  err = cudaGetLastError();
  if (err != cudaSuccess || p.num_splits == 1) return err;
  verify_attn_combine_kernel<<<dim3(p.nodes * p.heads, 2, p.batch), kCombineThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

inline cudaError_t launch_verify_attention_impl(const Params& p, cudaStream_t stream, int variant) {
  if (p.num_splits < 1 || p.num_splits > kMaxSplits || p.nodes < 1 || p.nodes > kMaxNodes || p.heads < 1 ||
      p.batch < 1 || !valid_variant(variant))
    return cudaErrorInvalidValue;
  const int v = variant == kDefaultVariant ? kBestVariant : variant;
  return v == 14 ? launch_split_and_combine<true>(p, stream) : launch_split_and_combine<false>(p, stream);
}

}  // namespace verify_attn
