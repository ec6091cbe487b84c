// The wgmma fp8 kernel with its warpgroups decoupled (issue 28, sm_90a; lab builds, kernel/build.py "fp8wgws",
// "fp8wgws4"): verify_attention_fp8_wgmma.cuh's tile, math and numerics unchanged, but no block barrier in the tile
// loop, and less issued around the same work.
//
// Why: in fp8wg both math warpgroups meet at a __syncthreads every tile (the cp.async ring's hand-over), so they run
// QK, softmax and P.V in step and the tensor cores idle while both do their softmax; its ping-pong (fp8wgpp) only
// serialised them, since the tile barrier still kept them in step. Here, as in v30 (verify_attention_v30.cuh):
// - 384 threads: warps 0-7 the two math warpgroups, warpgroup 2 (warps 8-11) the producer; setmaxnreg gives the math
//   240 registers a thread and the producer 24.
// - A ring of kWsStages 64-token tiles, each with a full mbarrier (the producer's 128 threads arrive through
//   cp.async.mbarrier.arrive.noinc, i.e. once their copies have landed) and an empty one (each math warp arrives once
//   its P.V has completed). The producer reads the slot ids straight from global memory.
// - Q goes in with the first tile, on a barrier of its own.
// - The QK and P.V descriptors are built once, from the warp's lane 0 (so in uniform registers), and stepped by a
//   32-bit add to their address field: 5 SASS instructions a QK wgmma, all uniform, against 13 when each was built
//   from its address, where Nsight Compute put about a fifth of the math warps' stall samples; and a tile's scores
//   are straight-line code, masked or not, not a branch an element (-3.3% at (1,8,64) 91k; kernel/NOTES.md, "The
//   decoupled kernel, measured", where this is "fp8wgwsh"). The turns at the tensor cores (fp8wgpp's) cost more than
//   they overlapped here too, and are gone.
// - Tried and gone (2026-12-07, code at 53255b0; kernel/NOTES.md): copies that read whole 32-B sectors a quarter warp
//   ("fp8wgwsg", 6.6% slower), and the row maximum's exchange skipped when no lazy shift moves ("fp8wgwsr", superseded
//   by fp8wgr, where a warp owns its rows and there is no exchange).
#pragma once

#include <type_traits>

#include "verify_attention_fp8_wgmma.cuh"
#include "verify_attention_v30.cuh"  // the mbarrier helpers

#ifndef VERIFY_F8WG_WS_STAGES
#define VERIFY_F8WG_WS_STAGES 3
#endif

namespace verify_attn {

constexpr int kWsStages = VERIFY_F8WG_WS_STAGES;
static_assert(kWsStages >= 2 && kWsStages <= 4, "VERIFY_F8WG_WS_STAGES: 2 to 4 (4 x 36,864 B fills sm_90's 227 KB)");
constexpr int kWsMathThreads = 256;
constexpr int kWsThreads = kWsMathThreads + 128;  // + the producer warpgroup
constexpr int kWsMathRegs = 240;
constexpr int kWsProducerRegs = 24;
static_assert(kWsMathRegs * kWsMathThreads + kWsProducerRegs * 128 <= 65536, "setmaxnreg budget over the register file");
// A named barrier of one warpgroup that also returns whether any of its threads passed `pred` (bar.red.or: it orders
// shared memory as bar.sync does).
__device__ __forceinline__ bool wg_bar_or(int id, bool pred) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\nselp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(any)
      : "r"(static_cast<uint32_t>(pred)), "r"(id)
      : "memory");
  return any != 0;
}
// Shared memory, in order: the ring, Q (2 warpgroups x kF8QTerms terms), P (2), the reductions (2), ancestor masks,
// row scales, barriers (full[kWsStages], empty[kWsStages], Q's).
constexpr int kWsQOff = kWsStages * kWgTileBytes;
constexpr int kWsPOff = kWsQOff + 2 * kF8QTerms * kWgQTermBytes;
constexpr int kWsRedOff = kWsPOff + 2 * kWgPBytes;
constexpr int kWsMaskOff = kWsRedOff + 2 * kWgRedBytes;
constexpr int kWsScaleOff = kWsMaskOff + kRowsPerBlock * 8;
constexpr int kWsBarOff = kWsScaleOff + kRowsPerBlock * 8;
constexpr int kWsSmemBytes = kWsBarOff + (2 * kWsStages + 1) * 8;
static_assert(kWsSmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");

// The producer's copies of one 64-token tile: producer warp w takes tokens 16w .. 16w + 15 as two 8-token groups,
// lane (r = lane % 8, c4 = lane / 8) chunk 4i + c4 of token 8g + r, i = 0..8 (fp8wg's copy pattern, twice).
__device__ __forceinline__ int ws_token(int pw, int g, int lane) { return 16 * pw + 8 * g + (lane & 7); }
// This thread's two slot ids of the tile at sequence position first_pos (-1 past the end).
__device__ __forceinline__ void ws_tile_slots(const Params& p, int b, int prefix_start, int prefix_len, int seq_end,
                                              int first_pos, int pw, int lane, int (&slot)[2]) {
#pragma unroll
  for (int g = 0; g < 2; ++g)
    slot[g] = slot_at(p, b, prefix_start, prefix_len, seq_end, first_pos + ws_token(pw, g, lane));
}
// Group g's copies (its 8 tokens' rows, 9 chunks a thread) from slot id `slot`.
__device__ __forceinline__ void ws_issue_group(const Params& p, uint32_t dst, int slot, int pw, int g, int lane) {
  const int token = ws_token(pw, g, lane), c4 = lane >> 3;
  const char* src = static_cast<const char*>(p.kv) + static_cast<int64_t>(slot < 0 ? 0 : slot) * kF8RowBytes;
  const int bytes = slot < 0 ? 0 : 16;
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    const int c = 4 * i + c4;
    cp_async_16(dst + wg_core(token, c), src + c * 16, bytes);
  }
}
__device__ __forceinline__ void ws_issue_tile(const Params& p, uint32_t dst, int b, int prefix_start, int prefix_len,
                                              int seq_end, int first_pos, int pw, int lane) {
#pragma unroll
  for (int g = 0; g < 2; ++g)
    ws_issue_group(p, dst, slot_at(p, b, prefix_start, prefix_len, seq_end, first_pos + ws_token(pw, g, lane)), pw, g,
                   lane);
}

// The producer warpgroup's whole job: every tile of the split into stage t % kStages once the math warps have released
// it (empty), arriving on full when its copies land; after the first tile's copies, Q (the quantize kernel's output,
// this grid's programmatic primary) through issue_q(qb), arriving on q_full. kSlotsAhead (fp8wgr): each tile's slot ids
// are loaded one tile ahead, before the producer waits for the stage of the tile before, so that their latency is not
// on the copies' path (-3.1% at (1,8,64) 91k on an H100; kernel/NOTES.md, "Where fp8wgr's tile goes").
// Producer thread pt's copies of the block's Q (the quantize kernel's output for request b from qb) into each math
// warpgroup's Q at `q` (kF8QTerms terms of its 32 rows as wgmma operand rows, 36 copies a thread): term after term
// (fp8wgws: its B, rows term * 32 + r), or kInterleaved, 8-row group 2 (r / 8) + term (fp8wgr: its A, so that a warp's
// accumulator rows gq and gq + 8 are one row's two terms). Padding rows read the last row and copy nothing.
template <bool kInterleaved>
__device__ __forceinline__ void ws_issue_q(uint32_t q, const unsigned char* qb, int pt, int row0, int rows) {
#pragma unroll 6
  for (int i = 0; i < 18 * kF8QTerms; ++i) {
    const int idx = pt + i * 128;  // fp8wg's (row, term, chunk) order
    const int r8 = idx & 7, c = (idx >> 3) % kWgCoreK, rest = (idx >> 3) / kWgCoreK;
    const int grp = rest % 8, term = rest / 8;
    const int r = grp * 8 + r8;
    const int w = r / kWgRows, wr = r % kWgRows;
    const int src_row = min(row0 + r, rows - 1);
    const unsigned char* src = qb + static_cast<int64_t>(src_row) * kF8QRowBytes + term * kHeadDim + c * 16;
    const uint32_t dst = kInterleaved ? w * kF8QTerms * kWgQTermBytes + wg_core(16 * (wr >> 3) + 8 * term + (wr & 7), c)
                                      : (w * kF8QTerms + term) * kWgQTermBytes + wg_core(wr, c);
    cp_async_16(q + dst, src, row0 + r < rows ? 16 : 0);
  }
}

// After the first tile's copies: wait for the quantize kernel (this grid's programmatic primary), then Q's copies through
// issue_q(qb), arriving on q_full once they land.
template <class IssueQ>
__device__ __forceinline__ void ws_issue_q_after_wait(const Params& p, int b, int rows, uint32_t q_full,
                                                      IssueQ issue_q) {
  pdl_wait_primary();
  issue_q(after_wait(static_cast<const unsigned char*>(p.q)) + static_cast<int64_t>(b) * rows * kF8QRowBytes);
  v30::cp_async_arrive_noinc(q_full);
}

template <int kStages, bool kSlotsAhead, class IssueQ>
__device__ __forceinline__ void ws_produce(const Params& p, uint32_t base, uint32_t full, uint32_t empty,
                                           uint32_t q_full, int b, int rows, int prefix_start, int prefix_len,
                                           int seq_end, int tile0, int ntiles, int pw, int lane, IssueQ issue_q) {
  int slot[2] = {-1, -1};
  if (kSlotsAhead && ntiles > 0)
    ws_tile_slots(p, b, prefix_start, prefix_len, seq_end, tile0 * kWgTokens, pw, lane, slot);
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kStages;
    int next[2] = {-1, -1};  // the next tile's slot ids, loading while this tile's stage is awaited
    if (kSlotsAhead && t + 1 < ntiles)
      ws_tile_slots(p, b, prefix_start, prefix_len, seq_end, (tile0 + t + 1) * kWgTokens, pw, lane, next);
    if (t >= kStages) v30::mbar_wait(empty + 8 * s, ((t / kStages) - 1) & 1);
    if (kSlotsAhead) {
#pragma unroll
      for (int g = 0; g < 2; ++g) ws_issue_group(p, base + s * kWgTileBytes, slot[g], pw, g, lane);
      slot[0] = next[0], slot[1] = next[1];
    } else {
      ws_issue_tile(p, base + s * kWgTileBytes, b, prefix_start, prefix_len, seq_end, (tile0 + t) * kWgTokens, pw, lane);
    }
    v30::cp_async_arrive_noinc(full + 8 * s);
    if (t == 0) ws_issue_q_after_wait(p, b, rows, q_full, issue_q);
  }
  pdl_launch_dependents();
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // nothing in flight past the producer's exit (none is committed)
}

template <class Probe>
__global__ void __launch_bounds__(kWsThreads, 1) verify_attn_split_kernel_fp8_wgmma_ws(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = smem_addr(smem);
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kWsMaskOff);  // [64]
  float2* s_scale = reinterpret_cast<float2*>(smem + kWsScaleOff);    // [64]: (s_lo / s_hi, s_hi * scale)
  const uint32_t full = base + kWsBarOff, empty = full + kWsStages * 8, q_full = empty + kWsStages * 8;

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  // (plain names: lambdas below capture them, which C++17 bindings cannot be)
  const SplitRange sp = split_range<kWgTokens>(p, b, split);
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid == 0) {
    for (int s = 0; s < kWsStages; ++s) {
      v30::mbar_init(full + 8 * s, 128);
      v30::mbar_init(empty + 8 * s, kWsMathThreads / 32);
    }
    v30::mbar_init(q_full, 128);
  }
  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
  }
  __syncthreads();

  if (warp >= kWsMathThreads / 32) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kWsProducerRegs));
    const int pt = tid - kWsMathThreads;
    const auto issue_q = [&](const unsigned char* qb) { ws_issue_q<false>(base + kWsQOff, qb, pt, row0, rows); };
    ws_produce<kWsStages, false>(p, base, full, empty, q_full, b, rows, prefix_start, prefix_len, seq_end, tile0,
                                 ntiles, warp - kWsMathThreads / 32, lane, issue_q);
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kWsMathRegs));
  const int wg = warp >> 2, wq = warp & 3;  // math warpgroup, warp within it (its 16 tokens of a tile)
  const int gq = lane >> 2, cq = lane & 3;
  const int wrow0 = wg * kWgRows;
  float* red = reinterpret_cast<float*>(smem + kWsRedOff + wg * kWgRedBytes);  // [32 rows][4 warps]

  pdl_wait_primary();
  if (wq == 0) {
    const int r = row0 + wrow0 + lane;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[wrow0 + lane] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
  wg_bar(1 + wg);

  float o[8][16];
#pragma unroll
  for (int mb = 0; mb < 8; ++mb)
#pragma unroll
    for (int i = 0; i < 16; ++i) o[mb][i] = 0.f;
  float m[4][2], l[4][2];
#pragma unroll
  for (int j = 0; j < 4; ++j) m[j][0] = m[j][1] = -INFINITY, l[j][0] = l[j][1] = 0.f;
  constexpr int kSRegs = 16 * kF8QTerms;
  float s_acc[kSRegs];
#pragma unroll
  for (int i = 0; i < kSRegs; ++i) s_acc[i] = 0.f;
  // Q's and P's descriptors from the warp's lane 0 (CUTLASS's canonical_warp_group_idx), so that ptxas may keep them in
  // uniform registers.
  const uint64_t q_desc = wg_desc(base + kWsQOff + __shfl_sync(0xffffffffu, wg, 0) * kF8QTerms * kWgQTermBytes, 128,
                                  kWgGroupBytes);
  const uint64_t p_desc = wg_desc(base + kWsPOff + __shfl_sync(0xffffffffu, wg, 0) * kWgPBytes, 128, kWgPGroupBytes);
  // QK: S^T = K . Q^T, 18 k-steps of 32 B a term, once the tile in stage s has landed.
  const auto issue_qk = [&](int s, int phase) {
    v30::mbar_wait(full + 8 * s, phase);
    fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
    const uint32_t tile = base + s * kWgTileBytes;
    const uint64_t a_desc = wg_desc(tile, 128, kWgGroupBytes);
    wg_keep(s_acc);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 32; ++ks) {
      const uint64_t a = wg_desc_step(a_desc, ks * 256), q = wg_desc_step(q_desc, ks * 256);
      if constexpr (kF8QTerms == 2) {
        wgmma_ss64(*reinterpret_cast<float(*)[32]>(s_acc), a, q, ks > 0);
      } else {
        wgmma_ss(*reinterpret_cast<float(*)[16]>(s_acc), a, q, ks > 0);
      }
    }
    wg_commit();
  };
  if (ntiles > 0) v30::mbar_wait(q_full, 0);
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kWsStages;
    issue_qk(s, (t / kWsStages) & 1);
    if (t == 0) Probe::split(kFirstTileLanded, ntiles);
    const uint32_t tile = base + s * kWgTileBytes;
    wg_wait<0>();
    wg_keep(s_acc);
    // Scores in the exp2 domain, masked. s[4j + 2h + e]: token 16wq + gq + 8h, row n = 8j + 2cq + e.
    float s_v[16];
    const int pos_base = (tile0 + t) * kWgTokens + wq * 16 + gq;
    const bool needs_mask = (tile0 + t) * kWgTokens + kWgTokens > min(seq_end, prefix_len);
    // The masked and the unmasked tile as two straight-line copies (one branch per element, in one body, kept ptxas
    // from overlapping the elements' loads and FMAs).
    const auto scores = [&](auto masked_tile) {
      constexpr bool masked = decltype(masked_tile)::value;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int n = 8 * j + 2 * cq + e;
          const float2 sc = s_scale[wrow0 + n];
          const uint64_t mask = masked ? s_mask[wrow0 + n] : 0ull;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int i = 4 * j + 2 * h + e;
            float v = kF8QTerms == 2 ? (s_acc[i] + s_acc[i + 16] * sc.x) * sc.y : s_acc[i] * sc.y;
            if (masked) {
              const int pos = pos_base + 8 * h;
              bool ok = pos < seq_end;
              if (ok && pos >= prefix_len) ok = (mask >> (pos - prefix_len)) & 1ull;
              v = ok ? v : -INFINITY;
            }
            s_v[i] = v;
          }
        }
      }
    };
    if (needs_mask) {
      scores(std::true_type{});
    } else {
      scores(std::false_type{});
    }
    // Row maxima over the warp's 16 tokens, then over the warpgroup's 4 warps.
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = fmaxf(s_v[4 * j + e], s_v[4 * j + 2 + e]);
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
        if (gq == 0) red[(8 * j + 2 * cq + e) * 4 + wq] = v;
      }
    wg_bar(1 + wg);
    bool moved = false;
    float alpha[4][2];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float4 r4 = *reinterpret_cast<const float4*>(red + (8 * j + 2 * cq + e) * 4);
        const float v = fmaxf(fmaxf(r4.x, r4.y), fmaxf(r4.z, r4.w));
        const bool move = v > m[j][e] + static_cast<float>(kF8LazyShift);
        alpha[j][e] = move ? exp2f(m[j][e] - v) : 1.f;
        m[j][e] = move ? v : m[j][e];
        l[j][e] *= alpha[j][e];
        moved |= move;
      }
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) o[mb][4 * j + 2 * h + e] *= alpha[j][e];
    }
    // P = exp2(S - shift) x kF8PScale in e4m3, written as P^T's B operand (fp8wg's layout).
    {
      uint32_t half[4][2];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float sh = m[j][e] == -INFINITY ? 0.f : m[j][e];
          const float p0 = exp2f(s_v[4 * j + e] - sh), p1 = exp2f(s_v[4 * j + 2 + e] - sh);
          l[j][e] += p0 + p1;
          uint16_t two;
          asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(two) : "f"(p1 * kF8PScale), "f"(p0 * kF8PScale));
          half[j][e] = two;
        }
      const bool even = (gq & 1) == 0;
      unsigned char* pw = smem + kWsPOff + wg * kWgPBytes;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t got = __shfl_xor_sync(0xffffffffu, even ? half[j][1] : half[j][0], 4);
        const uint32_t lo16 = even ? half[j][0] : got, hi16 = even ? got : half[j][1];
        const uint32_t word = __byte_perm(lo16, hi16, 0x5140);
        const int n = 8 * j + 2 * cq + (even ? 0 : 1);
        *reinterpret_cast<uint32_t*>(pw + (n >> 3) * kWgPGroupBytes + wq * 128 + (n & 7) * 16 + 4 * (gq >> 1)) = word;
      }
    }
    fence_proxy_async();
    wg_bar(1 + wg);
    // O^T += V^T . P^T (fp8wg's fragments), then the stage goes back to the producer.
    {
      const uint32_t v_lane = tile + wg_core(lane, 0);
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) {
        uint32_t a[2][4];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) wg_v_fragment(a[ks], v_lane, ks, 4 * mb + wq);
        wg_keep(o[mb]);
        wg_fence();
#pragma unroll
        for (int ks = 0; ks < 2; ++ks)
          wgmma_rs(o[mb], a[ks], wg_desc_step(p_desc, ks * 256));
        wg_commit();
      }
      wg_wait<0>();
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
      __syncwarp();
      if (lane == 0) v30::mbar_arrive(empty + 8 * s);
    }
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();

  // Row sums over the warp's lanes of one cq, then the warpgroup's warps (each past its last read of red).
  wg_bar(1 + wg);
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float v = l[j][e];
      v += __shfl_xor_sync(0xffffffffu, v, 4);
      v += __shfl_xor_sync(0xffffffffu, v, 8);
      v += __shfl_xor_sync(0xffffffffu, v, 16);
      if (gq == 0) red[(8 * j + 2 * cq + e) * 4 + wq] = v;
    }
  wg_bar(1 + wg);
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int n = 8 * j + 2 * cq + e, r = row0 + wrow0 + n;
      const float4 r4 = *reinterpret_cast<const float4*>(red + n * 4);
      wg_store_row(f, o, j, e, b, split, r, (r4.x + r4.y) + (r4.z + r4.w), m[j][e], wq, gq);
    }
  Probe::split(kBlockExit, ntiles);
}

template <class Probe>
inline cudaError_t launch_split_and_combine_fp8_wgmma_ws(const Fp8Params& f, cudaStream_t stream) {
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8_wgmma_ws<Probe>, kWsThreads,
                                                   kWsSmemBytes);
}

}  // namespace verify_attn
