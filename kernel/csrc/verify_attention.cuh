// Tree-verify MLA attention over a page_size=1 latent pool: the split-KV kernel on mma.sync and the launcher
// (the combine kernel is in verify_attention_combine.cuh, the PTX wrappers in verify_attention_ptx.cuh).
//
// Only sm_80-level instructions (mma.sync m16n8k16 bf16->fp32, ldmatrix, cp.async), <= 99 KB of shared
// memory per block: the same source builds for sm_80, sm_90 and sm_120. No torch types here.
//
// Work decomposition. For request b the rows are the T*H (node, head) pairs, row = node * H + head, which is
// exactly q's memory order, so a block's 64 rows are 64 contiguous q rows. Each request's virtual sequence is
// its L prefix tokens followed by its T tree tokens; it is cut into num_splits tile-aligned chunks. Grid =
// (row tiles, splits, batch): block (r, s, b) runs rows [64r, 64r+64) over chunk s. Positions >= L are tree
// nodes and go through the ancestor mask; the prefix is visible to every node. The tree tokens thus land in the
// last non-empty split and are merged with the prefix by the same log-sum-exp combine as any other split.
//
// Inside a block: two partner warps w and w^1 own the same 16 rows (w/2)*16, one half g = w&1 of K each. Group g
// keeps Q[16 rows, k in g's half of 576] in registers (its 256 latent columns: 16 k-steps x 4 regs; its 32 rope columns are read from shared
// memory), computes a partial S[16 x 32] for each 32-token tile, swaps it with its partner through shared
// memory and adds, so both hold the full S. Online softmax in registers (exp2, scale
// folded in), P re-packed as A fragments (FA2), group g accumulates O[16, 256 cols of g's half] (128 fp32).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "verify_attention.h"
#include "verify_attention_combine.cuh"
#include "verify_attention_store.cuh"
#include "verify_attention_probe.cuh"
#include "verify_attention_ptx.cuh"

namespace verify_attn {

constexpr float kLazyShift = 8.f;  // log2 units: P <= 256 before the running shift moves

// Pool slot of virtual position pos of request b (prefix first, then tree nodes), or -1 past `end`.
__device__ __forceinline__ int slot_at(const Params& p, int b, int prefix_start, int prefix_len, int end,
                                       int pos) {
  if (pos >= end) return -1;
  if (pos < prefix_len) return ld_dep_s32(p.prefix_slots + prefix_start + pos);
  return ld_dep_s32(p.tree_slots + b * p.nodes + (pos - prefix_len));
}

// A cp.async of the pool slot of position pos into shared `dst` (4 B, zero-filled past `end`): slot_at's addresses
// without its load, for the producers whose slot ids ride their ring (fp8wgrw's, v40's). Sharing one helper with
// slot_at's load moved every product kernel's SASS, so the two stay side by side.
__device__ __forceinline__ void cp_async_slot_id(const Params& p, uint32_t dst, int b, int prefix_start, int prefix_len,
                                                 int end, int pos) {
  const bool in = pos < end;
  const int* src = !in                ? p.tree_slots
                   : pos < prefix_len ? p.prefix_slots + prefix_start + pos
                                      : p.tree_slots + b * p.nodes + (pos - prefix_len);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 4 : 0) : "memory");
}

// The slot ids of a ring's first kStages tiles (kTile tokens a tile), stored to `slots` ([kStages][kTile] ints) for
// token `own` of each, by the caller's lanes that own one (`owner`), then its warp meets: the ids that fp8wgrw's and
// v40's producers read back from their ring (later tiles' come by cp_async_slot_id).
template <int kStages, int kTile>
__device__ __forceinline__ void store_first_slot_ids(const Params& p, uint32_t slots, int b, int prefix_start,
                                                     int prefix_len, int seq_end, int tile0, int ntiles, int own,
                                                     bool owner) {
  if (owner)
#pragma unroll
    for (int t = 0; t < kStages; ++t)
      if (t < ntiles) {
        const int id = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + t) * kTile + own);
        asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(slots + 4 * (t * kTile + own)), "r"(id) : "memory");
      }
  __syncwarp();
}

// The tiles split `split` of request b takes, kTile tokens a tile: its prefix, its first tile and count, and where its
// tokens end (the request's end, or its last tile's). Every split kernel's (kTileTokens = 32 for v26, v30 and the
// mma.sync fp8 kernel; 64 for the fp8 wgmma kernels and v40).
struct SplitRange {
  int prefix_start, prefix_len, tile0, ntiles, seq_end;
};
template <int kTile>
__device__ __forceinline__ SplitRange split_range(const Params& p, int b, int split) {
  SplitRange r;
  r.prefix_start = p.prefix_indptr[b];
  r.prefix_len = p.prefix_indptr[b + 1] - r.prefix_start;
  const int total = r.prefix_len + p.nodes;
  const int total_tiles = (total + kTile - 1) / kTile;
  const int per_split = (total_tiles + p.num_splits - 1) / p.num_splits;
  r.tile0 = split * per_split;
  r.ntiles = max(0, min(total_tiles, r.tile0 + per_split) - r.tile0);
  r.seq_end = min(total, (r.tile0 + r.ntiles) * kTile);
  return r;
}

// The ancestor mask of folded row r (node * H + head) of request b, every split kernel's s_mask entry: bit j set where
// the row's node sees tree node j; 0 for a row past the block's last (rows = nodes * heads).
__device__ __forceinline__ uint64_t row_tree_mask(const Params& p, int b, int rows, int r) {
  return r < rows ? p.tree_mask[b * p.nodes + r / p.heads] : 0ull;
}

// One row of the warp's 4 tokens (4w..4w+3) of a tile, by the warp; `dst` is the stage base. The 1152-B row is 72
// chunks of 16 B: lanes take chunks lane, lane+32 and, for lanes 0-7, lane+64, so a warp reads 512 contiguous bytes
// an instruction. Each warp issues its 4 rows of the next tile inside its QK loop, one every 4 k-steps (a burst of 9
// copies a thread right after the tile barrier stalled on the LSU queue: kernel/NOTES.md).
__device__ __forceinline__ void issue_row(const Params& p, uint32_t dst, int slot, int token, int lane) {
  const char* src = static_cast<const char*>(p.kv) + lane * 16 + static_cast<int64_t>(slot < 0 ? 0 : slot) * kRowBytes;
  const int bytes = slot < 0 ? 0 : 16;
  const uint32_t d = dst + token * kSmemRowBytes + lane * 16;
  cp_async_16(d, src, bytes);
  cp_async_16(d + 512, src + 512, bytes);
  if (lane < 8) cp_async_16(d + 1024, src + 1024, bytes);
}

// One warp's 16 rows x 256 columns of O (the mma accumulator layout: lane (gq, cq) holds columns 8n + 2cq,
// +1 of rows gq and gq + 8) scaled and stored as bf16 in whole 32-B sectors. Lanes cq and cq ^ 1 swap one packed
// pair per 16 columns, so each lane stores 4 contiguous bf16 (8 B) and a quad covers 32 contiguous bytes of its
// row (v4's 4-B stores leave half-written sectors: v15's first cut, with them, had a slower epilogue than fp32).
__device__ __forceinline__ void store_rows_bf16(__nv_bfloat16* row_lo, __nv_bfloat16* row_hi, bool ok_lo, bool ok_hi,
                                                const float (&o)[32][4], float inv_lo, float inv_hi, int cq) {
  const bool even = (cq & 1) == 0;
  const int col = even ? 2 * cq : 8 + 2 * (cq - 1);  // within each group of 16 columns
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    const uint32_t a_lo = pack_bf16(o[2 * m][0] * inv_lo, o[2 * m][1] * inv_lo);
    const uint32_t b_lo = pack_bf16(o[2 * m + 1][0] * inv_lo, o[2 * m + 1][1] * inv_lo);
    const uint32_t a_hi = pack_bf16(o[2 * m][2] * inv_hi, o[2 * m][3] * inv_hi);
    const uint32_t b_hi = pack_bf16(o[2 * m + 1][2] * inv_hi, o[2 * m + 1][3] * inv_hi);
    const uint32_t got_lo = __shfl_xor_sync(0xffffffffu, even ? b_lo : a_lo, 1);
    const uint32_t got_hi = __shfl_xor_sync(0xffffffffu, even ? b_hi : a_hi, 1);
    if (ok_lo) *reinterpret_cast<uint2*>(row_lo + 16 * m + col) = even ? make_uint2(a_lo, got_lo) : make_uint2(got_lo, b_lo);
    if (ok_hi) *reinterpret_cast<uint2*>(row_hi + 16 * m + col) = even ? make_uint2(a_hi, got_hi) : make_uint2(got_hi, b_hi);
  }
}

// The tile's math, shared by v26 (below) and v30 (verify_attention_v30.cuh): one warp's 16 rows wrow..wrow+15 and
// K half grp (partner warps w, w^1 share the rows), lane (gq, cq) in the mma fragment layout.

// Q of the warp's 16 rows, its half grp of the latent columns, as A fragments straight from global (once); and the
// rope columns of all 64 block rows into the swizzled shared block q_rope (chunk c of row r at c ^ (r & 7)) by the
// kLoaders threads of the math, two 16-B chunks each (tid < kLoaders).
template <int kLoaders>
__device__ __forceinline__ void load_q(const Params& p, int b, int rows, int row0, int wrow, int grp, int gq, int cq,
                                       int tid, unsigned char* q_rope, uint32_t (&qf)[16][4]) {
  static_assert(2 * kLoaders == kRowsPerBlock * 8, "two 16-B rope chunks a loader");
  const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
  // Called after the split kernel's wait: q may be the last kernel's write (after_wait).
  const __nv_bfloat16* qb =
      after_wait(static_cast<const __nv_bfloat16*>(p.q)) + static_cast<int64_t>(b) * rows * kHeadDim;
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
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int idx = tid + i * kLoaders, r = idx >> 3, ch = idx & 7;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (row0 + r < rows)
      v = __ldg(reinterpret_cast<const uint4*>(qb + static_cast<int64_t>(row0 + r) * kHeadDim + kVDim) + ch);
    *reinterpret_cast<uint4*>(q_rope + r * 128 + ((ch ^ (r & 7)) << 4)) = v;
  }
}

// QK's rope part: S += Q[:, 512 + grp*32, 32 columns] . K[the same]^T, A fragments by ldmatrix from the swizzled Q
// rope block (row wrow + lane%16, chunk +1 for lanes 16-31); k_row is the lane's ldmatrix row address in the tile.
__device__ __forceinline__ void qk_rope(float (&s)[4][4], float (&o)[32][4], uint32_t k_row,
                                        const unsigned char* q_rope, int wrow, int grp, int lane) {
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
      const int i = 64 + ks * 4 + nn * 2;
      mma_bf16_seq(s[2 * nn], qa, bf[0], bf[1], i, o, 3 * i, 3 * i + 1, 3 * i + 2);
      mma_bf16_seq(s[2 * nn + 1], qa, bf[2], bf[3], i + 1, o, 3 * i + 3, 3 * i + 4, 3 * i + 5);
    }
  }
}

// The full S of the tile at virtual positions pos0.. (after the pair's swap) into unnormalised P = exp2(S - shift):
// scaled into the exp2 domain, masked past the chunk end (seq_end) and, at tree positions (>= prefix_len), by the
// rows' ancestor bits (s_mask). Online softmax with a lazy shift (FA4's trick): the running shift m moves only when
// a row's max exceeds it by more than kLazyShift (log2 units), so P <= 2^8 stays exact enough in bf16 and the
// 128-register O rescale is skipped, warp-uniformly, on almost every tile. A row that has seen only masked scores
// keeps m = -inf and uses 0 as its shift (its P is 0). The fp8 kernel moves the shift sooner (kLazy = 2: its P is
// rounded to e4m3 after a fixed pre-scale, verify_attention_fp8.h).
template <int kLazy = static_cast<int>(kLazyShift)>
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
  const bool move_lo = mx_lo > m_lo + static_cast<float>(kLazy), move_hi = mx_hi > m_hi + static_cast<float>(kLazy);
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

// The fp8 kernel's O layout (verify_attention_fp8.cuh): its P.V n-tiles 2m and 2m+1 hold the even and odd columns of
// the 16-column group m, so lane (gq, cq) holds 4 contiguous columns 16m + 4cq.. of rows gq and gq + 8 and stores
// them as one 8-B vector (a quad: 32 contiguous bytes) with no shuffle.
__device__ __forceinline__ void store_rows_bf16_quads(__nv_bfloat16* row_lo, __nv_bfloat16* row_hi, bool ok_lo,
                                                      bool ok_hi, const float (&o)[32][4], float inv_lo, float inv_hi,
                                                      int cq) {
#pragma unroll
  for (int m = 0; m < 16; ++m) {
    if (ok_lo)
      *reinterpret_cast<uint2*>(row_lo + 16 * m + 4 * cq) =
          make_uint2(pack_bf16(o[2 * m][0] * inv_lo, o[2 * m + 1][0] * inv_lo),
                     pack_bf16(o[2 * m][1] * inv_lo, o[2 * m + 1][1] * inv_lo));
    if (ok_hi)
      *reinterpret_cast<uint2*>(row_hi + 16 * m + 4 * cq) =
          make_uint2(pack_bf16(o[2 * m][2] * inv_hi, o[2 * m + 1][2] * inv_hi),
                     pack_bf16(o[2 * m][3] * inv_hi, o[2 * m + 1][3] * inv_hi));
  }
}

// Normalise the warp's O and write it: directly as bf16 (+ natural-log lse) with one split, else this split's bf16
// partials + log2 lse. One lse a row, by the K-half-0 warp's quad leaders. kQuads: the fp8 kernel's O layout
// (store_rows_bf16_quads); out_scale multiplies O (the fp8 kernel's V scale and P pre-scale; 1 for bf16).
template <bool kQuads = false>
__device__ __forceinline__ void write_rows(const Params& p, int b, int split, int rows, int row0, int wrow, int grp,
                                           int gq, int cq, const float (&o)[32][4], float m_lo, float m_hi,
                                           float l_lo, float l_hi, float out_scale = 1.f) {
  l_lo = quad_sum(l_lo);
  l_hi = quad_sum(l_hi);
  const float inv_lo = l_lo > 0.f ? out_scale / l_lo : 0.f, inv_hi = l_hi > 0.f ? out_scale / l_hi : 0.f;
  const float lse_lo = l_lo > 0.f ? m_lo + __log2f(l_lo) : -INFINITY;
  const float lse_hi = l_hi > 0.f ? m_hi + __log2f(l_hi) : -INFINITY;
  const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
  const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;  // of this split's partials
  {
    __nv_bfloat16* ob = p.num_splits == 1 ? static_cast<__nv_bfloat16*>(p.out) + static_cast<int64_t>(b) * rows * kVDim
                                          : static_cast<__nv_bfloat16*>(p.part_o) + base_row * kVDim;
    __nv_bfloat16* row_lo = ob + static_cast<int64_t>(r_lo) * kVDim + grp * 256;
    __nv_bfloat16* row_hi = ob + static_cast<int64_t>(r_hi) * kVDim + grp * 256;
    if constexpr (kQuads)
      store_rows_bf16_quads(row_lo, row_hi, r_lo < rows, r_hi < rows, o, inv_lo, inv_hi, cq);
    else
      store_rows_bf16(row_lo, row_hi, r_lo < rows, r_hi < rows, o, inv_lo, inv_hi, cq);
  }
  if (grp == 0 && cq == 0) {
    if (p.num_splits > 1) {
      if (r_lo < rows) p.part_lse[base_row + r_lo] = lse_lo;
      if (r_hi < rows) p.part_lse[base_row + r_hi] = lse_hi;
    } else if (p.lse != nullptr) {
      const float ln2 = 0.6931471805599453f;
      if (r_lo < rows) p.lse[static_cast<int64_t>(b) * rows + r_lo] = lse_lo * ln2;
      if (r_hi < rows) p.lse[static_cast<int64_t>(b) * rows + r_hi] = lse_hi * ln2;
    }
  }
}

// One 256-thread block per SM (254 registers a thread). Overridable only so the compile test can squeeze the
// register budget and prove that its spill check fires.
#ifndef VERIFY_ATTN_MIN_BLOCKS
#define VERIFY_ATTN_MIN_BLOCKS 1
#endif

// Partners are warps w and w^1: a scheduler runs warps w and w+4, which thus belong to two pairs that may drift apart
// within a tile, one's softmax beside the other's MMAs. Tile 0 is gathered before Q is loaded (the two latencies
// overlap); a multi-split launch writes bf16 partials, each row as whole 32-B sectors (store_rows_bf16); and the
// combine grid may launch once every split block has left its tile loop (programmatic dependent launch, sm_90+).
// Probe observes the block (verify_attention_probe.cuh); the product's NoProbe compiles to nothing.
template <class Probe>
__global__ void __launch_bounds__(kThreads, VERIFY_ATTN_MIN_BLOCKS) verify_attn_split_kernel(const Params p) {
  Probe::split(kBlockEntry, 0);
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
  const int grp = warp & 1, wrow = (warp >> 1) * 16;
  const int partner = warp ^ 1, pair_id = warp >> 1;
  const int gq = lane >> 2, cq = lane & 3;  // mma fragment coordinates: row group, column pair

  const bool early = p.pdl == kPdlPrefix;  // the plan and the prefix's rows before the wait (Params::pdl)
  if (!early) pdl_wait_primary();
  const SplitRange sp = split_range<kTileTokens>(p, b, split);  // (plain names: lambdas below capture them)
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
  }
  // Tile 0's rows before the wait only if all of them are the prefix's (the tree's may be the last kernel's writes).
  if (early && (tile0 + 1) * kTileTokens > prefix_len) pdl_wait_primary();
  {
    // Tile 0 now, before Q: lanes 0-3 fetch the slot ids of the warp's 4 tokens, broadcast by shuffle.
    const int my_slot =
        lane < 4 ? slot_at(p, b, prefix_start, prefix_len, seq_end, tile0 * kTileTokens + warp * 4 + lane) : -1;
    if (ntiles > 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j) issue_row(p, kv_base, __shfl_sync(0xffffffffu, my_slot, j), warp * 4 + j, lane);
    }
    cp_async_commit();
  }
  // Tile 1's slot ids (tile t's entry is written during tile t-2, from tile 2 on).
  if (tid < kTileTokens) s_slot[kTileTokens + tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + 1) * kTileTokens + tid);

  // q, and every later tile's rows, may be the last kernel's writes. Unconditional (a second wait returns at once):
  // behind `if (early)`, ptxas moved q's loads above the wait (nvcc 13.0; tests/kernel/test_compile.py).
  pdl_wait_primary();
  // The group's 32 rope columns come from shared memory each tile (see kQRopeBytes).
  uint32_t qf[16][4];
  load_q<kThreads>(p, b, rows, row0, wrow, grp, gq, cq, tid, q_rope, qf);
  __syncthreads();

  float o[32][4];
#pragma unroll
  for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.f, l_hi = 0.f;
  const float scale = p.scale_log2;

  for (int t = 0; t < ntiles; ++t) {
    int next_slot = -1;
    // Slot ids two tiles ahead: the global load's latency hides behind this tile's math.
    if (warp == 0) next_slot = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + t + 2) * kTileTokens + lane);
    // One barrier per tile: after it, tile t is visible to every thread and every warp has finished tile t-1,
    // so stage (t+1)&1 is free for the next gather (and the slot entry written at the end of t-1 is visible).
    cp_async_wait<0>();
    __syncthreads();
    if (t == 0) Probe::split(kFirstTileLanded, ntiles);
    // The warp's 4 slot ids of tile t+1 in one 16-B load, here, before the QK loop (a read beside each copy cost 2%).
    const int4 next4 = *reinterpret_cast<const int4*>(s_slot + ((t + 1) & 1) * kTileTokens + warp * 4);
    const uint32_t tile = kv_base + (t & 1) * kTileBytes;

    // S partial = Q[:, grp half] . K[:, grp half]^T for 32 tokens (4 n-tiles of 8).
    float s[4][4];
#pragma unroll
    for (int n = 0; n < 4; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    {
      // ldmatrix.x4 lane address: token (lane/16)*8 + lane%8, column +8 for lanes 8-15 and 24-31.
      const uint32_t k_row = tile + (((lane >> 4) << 3) + (lane & 7)) * kSmemRowBytes + ((lane >> 3) & 1) * 16;
      const uint32_t k_lat = k_row + grp * 256 * 2;
#pragma unroll
      for (int ks = 0; ks < 16; ++ks) {
        if ((ks & 3) == 0 && t + 1 < ntiles) {
          const int j = ks >> 2;
          issue_row(p, kv_base + ((t + 1) & 1) * kTileBytes,
                    j == 0 ? next4.x : j == 1 ? next4.y : j == 2 ? next4.z : next4.w, warp * 4 + j, lane);
        }
        uint32_t bf[4];
#pragma unroll
        for (int nn = 0; nn < 2; ++nn) {
          ldmatrix_x4(bf, k_lat + nn * 16 * kSmemRowBytes + ks * 32);
          const int i = ks * 4 + nn * 2;  // this pair's place in QK's sequence (mma_bf16_seq)
          mma_bf16_seq(s[2 * nn], qf[ks], bf[0], bf[1], i, o, 3 * i, 3 * i + 1, 3 * i + 2);
          mma_bf16_seq(s[2 * nn + 1], qf[ks], bf[2], bf[3], i + 1, o, 3 * i + 3, 3 * i + 4, 3 * i + 5);
        }
      }
      qk_rope(s, o, k_row, q_rope, wrow, grp, lane);
    }
    cp_async_commit();
    // Swap partial S with the partner warp on a named barrier of just those 64 threads. 16-B accesses:
    // 4 stores + 4 loads a thread instead of 16 + 16 (the shared-memory pipe is this kernel's busiest).
    {
      float4* mine = reinterpret_cast<float4*>(xch) + warp * 128;
      const float4* other = reinterpret_cast<const float4*>(xch) + partner * 128;
#pragma unroll
      for (int n = 0; n < 4; ++n) mine[n * 32 + lane] = make_float4(s[n][0], s[n][1], s[n][2], s[n][3]);
      asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair_id) : "memory");
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const float4 v = other[n * 32 + lane];
        s[n][0] += v.x;
        s[n][1] += v.y;
        s[n][2] += v.z;
        s[n][3] += v.w;
      }
    }
    softmax_tile(s, o, m_lo, m_hi, l_lo, l_hi, scale, (tile0 + t) * kTileTokens, seq_end, prefix_len, s_mask, wrow, gq, cq);
    // O[:, grp's 256 cols] += P . V; V^T fragments via ldmatrix.trans (token rows, 8 columns each).
    {
      const uint32_t v_addr = tile + ((((lane >> 3) & 1) << 3) + (lane & 7)) * kSmemRowBytes +
                              (grp * 256 + (lane >> 4) * 8) * 2;
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) {
        uint32_t pa[4];
        pa[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
        pa[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
        pa[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        pa[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        uint32_t bf[4];
#pragma unroll
        for (int nt = 0; nt < 16; ++nt) {
          ldmatrix_x4_trans(bf, v_addr + kk * 16 * kSmemRowBytes + nt * 32);
          const int i = kk * 32 + nt * 2;  // the real issue writes O[i % 32]; its extras O 16, 24 and 20 further on
          mma_bf16_seq(o[2 * nt], pa, bf[0], bf[1], i, o, i + 16, i + 24, i + 20);
          mma_bf16_seq(o[2 * nt + 1], pa, bf[2], bf[3], i + 1, o, i + 17, i + 25, i + 21);
        }
      }
    }
    if (warp == 0) s_slot[(t & 1) * kTileTokens + lane] = next_slot;  // tile t+2 reuses tile t's entry
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();
  cp_async_wait<0>();

  write_rows(p, b, split, rows, row0, wrow, grp, gq, cq, o, m_lo, m_hi, l_lo, l_hi);
  Probe::split(kBlockExit, ntiles);
}

// Shared memory a combine block reserves, unused, so that at most ceil(blocks / SMs) of them fit on one SM: a
// programmatic dependent grid is placed as soon as its primary lets it, on whatever SMs are free then, and a
// small combine grid would otherwise pile up 8 blocks per SM on the few SMs that finished their splits first.
inline size_t combine_spread_smem(int blocks, int sms, int threads_per_sm, int smem_per_sm, int smem_per_block_max,
                                  int static_smem, int reserved_per_block) {
  const int per_sm = (blocks + sms - 1) / sms;
  if (per_sm >= threads_per_sm / kCombineThreads) return 0;  // the thread limit alone allows no more
  const int share = smem_per_sm / per_sm - static_smem - reserved_per_block - 128;
  return share <= 0 ? 0 : static_cast<size_t>(share < smem_per_block_max - static_smem ? share : smem_per_block_max - static_smem);
}

// Per device and instantiation: enable > 48 KB dynamic shared memory and read what the launches need.
struct LaunchInfo {
  bool configured = false;
  int cc_major = 0, sms = 0, threads_per_sm = 0, smem_per_sm = 0, smem_per_block_max = 0, reserved_per_block = 0;
  int combine_static = 0;
};

// Per device and instantiation, once: allow `split_kernel` its `smem` bytes of dynamic shared memory, read the device
// facts the launches need, and give the combine kernel of Probe what it may reserve. Every launcher's own.
template <class Probe, class Kernel>
inline cudaError_t configure_launch(LaunchInfo& in, Kernel split_kernel, int smem, int device) {
  if (in.configured) return cudaSuccess;
  cudaError_t err = cudaFuncSetAttribute(split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  const std::pair<cudaDeviceAttr, int*> attrs[] = {
      {cudaDevAttrComputeCapabilityMajor, &in.cc_major},
      {cudaDevAttrMultiProcessorCount, &in.sms},
      {cudaDevAttrMaxThreadsPerMultiProcessor, &in.threads_per_sm},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, &in.smem_per_sm},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, &in.smem_per_block_max},
      {cudaDevAttrReservedSharedMemoryPerBlock, &in.reserved_per_block}};
  for (const auto& [attr, value] : attrs) {
    err = cudaDeviceGetAttribute(value, attr, device);
    if (err != cudaSuccess) return err;
  }
  cudaFuncAttributes fa{};
  err = cudaFuncGetAttributes(&fa, verify_attn_combine_kernel<Probe>);
  if (err != cudaSuccess) return err;
  in.combine_static = static_cast<int>(fa.sharedSizeBytes);
  err = cudaFuncSetAttribute(verify_attn_combine_kernel<Probe>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             in.smem_per_block_max - in.combine_static);
  if (err != cudaSuccess) return err;
  in.configured = true;
  return cudaSuccess;
}

// A split kernel's launch: grid (row tiles, splits, batch), a programmatic dependent of the kernel before it on
// `stream` when p.pdl asks for it and the device has griddepcontrol (sm_90+; Params::pdl).
template <class Kernel>
inline cudaError_t launch_split(Kernel split_kernel, const Params& p, const LaunchInfo& in, int threads, int smem,
                                cudaStream_t stream) {
  return launch_kernel(split_kernel, dim3(row_tiles(p.nodes, p.heads), p.num_splits, p.batch), dim3(threads), smem,
                       stream, in.cc_major >= 9 && p.pdl != kPdlOff, p);
}

// The combine kernel of Probe after a multi-split launch: the split kernel's programmatic dependent (sm_90+), its
// shared memory reserved so that its blocks spread over the SMs (combine_spread_smem).
template <class Probe>
inline cudaError_t launch_combine(const Params& p, const LaunchInfo& in, cudaStream_t stream) {
  const dim3 grid(p.nodes * p.heads, 2, p.batch);
  const int smem = combine_spread_smem(static_cast<int>(grid.x * grid.y * grid.z), in.sms, in.threads_per_sm,
                                       in.smem_per_sm, in.smem_per_block_max, in.combine_static,
                                       in.reserved_per_block);
  return launch_kernel(verify_attn_combine_kernel<Probe>, grid, dim3(kCombineThreads), smem, stream,
                       in.cc_major >= 9, p);  // griddepcontrol is sm_90+
}

// What the launcher refuses by itself (cudaErrorInvalidValue), for callers other than the torch binding (the
// timeline tool, the engine): sizes out of range, a missing buffer, and q / kv not 16-byte aligned (the kernel reads
// both with 16-byte vectors; a misaligned pointer would fault inside it). prefix_slots may be null: an all-empty
// batch has no prefix slot at all.
inline bool launchable(const Params& p) {
  const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  const bool sizes = p.pdl >= kPdlOff && p.pdl <= kPdlPrefix && p.num_splits >= 1 && p.num_splits <= kMaxSplits &&
                     p.nodes >= 1 && p.nodes <= kMaxNodes && p.heads >= 1 && p.batch >= 1 && p.batch <= kMaxBatch &&
                     static_cast<int64_t>(p.batch) * p.nodes * p.heads <= (int64_t{1} << 31) / kVDim;
  const bool buffers = p.q && p.kv && p.prefix_indptr && p.tree_slots && p.tree_mask && p.out &&
                       (p.num_splits == 1 || (p.part_o && p.part_lse));
  return sizes && buffers && aligned(p.q) && aligned(p.kv);
}

// Launch the split (+ combine) kernels observed by Probe (NoProbe in the product, verify_attention_sm.cu). The
// combine is the split kernel's programmatic dependent (sm_90+) and reserves shared memory so that it spreads over
// the SMs (combine_spread_smem).
// Every bf16 build's launcher (v26's below, v30's, v40's): split_kernel with its threads and shared memory, then the
// combine. A template on the kernel itself, so that each kernel has its own static per-device LaunchInfo (one shared
// between two builds skipped the second's shared-memory attribute: verify_attention_v30_sm.cu says when).
template <class Probe, auto split_kernel>
inline cudaError_t launch_split_kernel_and_combine(const Params& p, cudaStream_t stream, int threads, int smem) {
  if (!launchable(p)) return cudaErrorInvalidValue;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  static LaunchInfo info[64];
  if (device >= 64) return cudaErrorInvalidDevice;
  LaunchInfo& in = info[device];
  err = configure_launch<Probe>(in, split_kernel, smem, device);
  if (err != cudaSuccess) return err;
  err = launch_split(split_kernel, p, in, threads, smem, stream);
  if (err != cudaSuccess || p.num_splits == 1) return err;
  return launch_combine<Probe>(p, in, stream);
}

template <class Probe>
inline cudaError_t launch_split_and_combine(const Params& p, cudaStream_t stream) {
  return launch_split_kernel_and_combine<Probe, verify_attn_split_kernel<Probe>>(p, stream, kThreads, kSmemBytes);
}

}  // namespace verify_attn
