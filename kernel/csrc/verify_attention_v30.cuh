// v30, the verify kernel on sm_90 and sm_120 (issue 17 part 2; kernel/build.py product_variant picks it there, v26
// everywhere else). Same math tile as v26 (verify_attention.cuh), the portable path: two math warpgroups, partner
// warps w and w^1 sharing 16 rows, O 128 registers and Q's latent half 64 a thread, the S swap through shared memory,
// the lazy-shift online softmax, bf16 partials and the same combine. What changes is who gathers and how the stages
// are handed over:
//
// - 384 threads: warps 0-7 do the math, warpgroup 2 (warps 8-11) is the producer, of which warp 8 alone works (9-11
//   leave at once). setmaxnreg gives the math 240 registers a thread and the producer 24 (sm_90a / sm_120a only).
// - A ring of 16-token stages (18,688 B each; VERIFY_V30_STAGES, 4 or on sm_90a 6): math tile t (32 tokens) is
//   stages 2 (t % R) and 2 (t % R) + 1 (R = stages / 2), so its 32 rows are contiguous, exactly v26's tile layout.
//   Each stage has a full and an empty mbarrier; no block barrier in the tile loop. The math waits for full,
//   releases a stage (all 256 math threads arrive on empty) after its half of P.V; the producer waits for empty,
//   reads the slot ids straight from global memory two stages ahead and gathers the rows, zero-filling rows past the
//   chunk end.
// - Gather (VERIFY_V30_BULK): 0, cp.async 16 B (8 lanes a row, 4 rows an instruction, 9 instructions a 4-row group)
//   then cp.async.mbarrier.arrive.noinc (full counts the 32 producer lanes); 1, one cp.async.bulk of 1,152 B a row
//   (lanes 0-15) completing on full's transaction count, rows past the end zeroed by st.shared, every lane arriving.
// - The S swap (VERIFY_V30_XCH_BUFFERS): with one buffer, read barriers keep a warp from overwriting its S before
//   its partner has read it (no block barrier does); with two (sm_90a), by tile parity, none are needed.
// - Lab knobs, measured and lost on the H200 (kernel/NOTES.md): VERIFY_V30_PINGPONG (the math warpgroups take turns
//   at the tensor pipes) and VERIFY_V30_PREFETCH (ldmatrix fragments in flight).
//
// Bit for bit v26's output at the same split count: the same MMAs in the same order on the same data.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "verify_attention.cuh"

#ifndef VERIFY_V30_BULK
#define VERIFY_V30_BULK 0
#endif
#ifndef VERIFY_V30_PINGPONG
#define VERIFY_V30_PINGPONG 0
#endif
#ifndef VERIFY_V30_PREFETCH
#define VERIFY_V30_PREFETCH 1
#endif
#ifndef VERIFY_V30_XCH_BUFFERS
#define VERIFY_V30_XCH_BUFFERS 1
#endif
#ifndef VERIFY_V30_READ_BARRIERS
#if VERIFY_V30_XCH_BUFFERS == 1
#define VERIFY_V30_READ_BARRIERS 1
#else
#define VERIFY_V30_READ_BARRIERS 0
#endif
#endif
#ifndef VERIFY_V30_STAGES
#define VERIFY_V30_STAGES 4
#endif

namespace verify_attn {
namespace v30 {

constexpr int kMathWarps = 8;
constexpr int kMathThreads = kMathWarps * 32;
constexpr int kThreads = kMathThreads + 128;  // + the producer warpgroup
constexpr int kMathRegs = 240;
constexpr int kProducerRegs = 24;
static_assert(kMathRegs * kMathThreads + kProducerRegs * 128 <= 65536, "setmaxnreg budget over the register file");
constexpr int kStageTokens = 16;
// Stages in the ring: 4 (fits sm_120's 99 KB) or, on sm_90a only, 6 (VERIFY_V30_STAGES; three tiles in flight).
constexpr int kStages = VERIFY_V30_STAGES;
static_assert(kStages == 4 || kStages == 6, "VERIFY_V30_STAGES: 4 or 6");
constexpr int kRingTiles = kStages / 2;
constexpr int kStageBytes = kStageTokens * kSmemRowBytes;  // 18,688 B
static_assert(2 * kStageTokens == kTileTokens && 2 * kStageBytes == kTileBytes, "a math tile is two stages");
constexpr int kRingBytes = kStages * kStageBytes;          // 74,752 B
constexpr int kBarBytes = 2 * kStages * 8;                 // full[kStages], empty[kStages]
// The S swap: 1 buffer (fits sm_120's 99 KB; the read barriers order a warp's next write after its partner's read)
// or 2, by tile parity (sm_90a: a warp writes buffer (t + 2) & 1 only past the pair barrier of tile t + 1, which its
// partner reaches after reading tile t's).
constexpr int kXchBuffers = VERIFY_V30_XCH_BUFFERS;
static_assert(kXchBuffers == 1 || kXchBuffers == 2, "VERIFY_V30_XCH_BUFFERS: 1 or 2");
constexpr int kSmemBytes = kRingBytes + kXchBuffers * kXchBytes + kMaskBytes + kQRopeBytes + kBarBytes;  // 99,904 B
static_assert((kStages != 4 || kXchBuffers != 1) || kSmemBytes <= kSmemLimit, "v30's shared memory must fit sm_120's 99 KB");
static_assert(kSmemBytes <= 227 * 1024, "v30's shared memory must fit sm_90's 227 KB");
constexpr bool kBulk = VERIFY_V30_BULK != 0;
constexpr bool kPingPong = VERIFY_V30_PINGPONG != 0;
// ldmatrix fragments of K (QK) and V (P.V) in flight a warp: 1 loads each just before its two MMAs (ptxas keeps the
// order of the inline asm); 2 or 3 load ahead, so that a warp alone on its scheduler (ping-pong) hides the latency.
constexpr int kPrefetch = VERIFY_V30_PREFETCH;
static_assert(kPrefetch >= 1 && kPrefetch <= 4, "VERIFY_V30_PREFETCH: 1 to 4");
constexpr int kMathBarrier = 5;  // named barrier of the 256 math threads (1-4 are the pairs' swaps)
constexpr int kTurnBarrier = 6;  // ping-pong: 6 + g is warpgroup g's turn at the tensor pipes
constexpr bool kReadBarriers = VERIFY_V30_READ_BARRIERS != 0;
constexpr int kReadBarrier = 8;  // 8 + w: warp w's partner has read w's S (8-15: every hardware barrier is in use)

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// Arrives on bar (without raising its expected count) once every earlier cp.async of this thread has landed.
__device__ __forceinline__ void cp_async_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The producer warp: stage c & 3 of chunk c (16 tokens), for every chunk of the block's tiles.
__device__ __forceinline__ void produce(const Params& p, uint32_t ring, uint32_t full, uint32_t empty, int b,
                                        int prefix_start, int prefix_len, int seq_end, int first_pos, int nchunks,
                                        int lane) {
  const auto slot_of = [&](int c) {
    return c < nchunks && lane < kStageTokens
               ? slot_at(p, b, prefix_start, prefix_len, seq_end, first_pos + c * kStageTokens + lane)
               : -1;
  };
  int next = slot_of(0), after = slot_of(1);  // slot ids two stages ahead
  for (int c = 0; c < nchunks; ++c) {
    const int cur = next;
    next = after;
    after = slot_of(c + 2);
    const int stage = static_cast<unsigned>(c) % kStages;
    if (c >= kStages) mbar_wait(empty + stage * 8, ((static_cast<unsigned>(c) / kStages) - 1) & 1);
    const uint32_t dst = ring + stage * kStageBytes;
    if constexpr (kBulk) {
      const unsigned valid = __ballot_sync(0xffffffffu, cur >= 0);
      const unsigned zero_rows = ~valid & 0xffffu;
      if (zero_rows != 0u) {
        for (unsigned rows = zero_rows; rows != 0u; rows &= rows - 1) {
          const uint32_t row = dst + (__ffs(rows) - 1) * kSmemRowBytes + lane * 16;
          asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(row), "r"(0) : "memory");
          asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(row + 512), "r"(0) : "memory");
          if (lane < 8) asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(row + 1024), "r"(0) : "memory");
        }
        fence_proxy_async();  // a later bulk copy into this stage must land after these stores
      }
      // Every lane arrives (full counts 32), each after its own zero-fill stores: lane 0 with the stage's transaction
      // bytes. An arrive of lane 0 alone, after a __syncwarp, orders the other lanes' stores only through the warp
      // barrier, which compute-sanitizer's racecheck does not follow (9 hazards a small case at ea46131).
      if (lane == 0)
        mbar_arrive_expect_tx(full + stage * 8, __popc(valid) * kRowBytes);
      else
        mbar_arrive(full + stage * 8);
      __syncwarp();  // the transaction count is raised before any copy of the stage can complete
      if (cur >= 0)
        bulk_copy(dst + lane * kSmemRowBytes, static_cast<const char*>(p.kv) + static_cast<int64_t>(cur) * kRowBytes,
                  kRowBytes, full + stage * 8);
    } else {
      // 8 lanes a row, 4 rows an instruction: lane (sub, ch) copies chunks ch, ch+8, ..., ch+64 of row 4 it + sub.
      const int sub = lane >> 3, ch = lane & 7;
#pragma unroll
      for (int it = 0; it < 4; ++it) {
        const int slot = __shfl_sync(0xffffffffu, cur, it * 4 + sub);
        const char* src = static_cast<const char*>(p.kv) + static_cast<int64_t>(slot < 0 ? 0 : slot) * kRowBytes + ch * 16;
        const int bytes = slot < 0 ? 0 : 16;
        const uint32_t d = dst + (it * 4 + sub) * kSmemRowBytes + ch * 16;
#pragma unroll
        for (int m = 0; m < 9; ++m) cp_async_16(d + m * 128, src + m * 128, bytes);
      }
      cp_async_arrive_noinc(full + stage * 8);
    }
  }
}

template <class Probe>
__global__ void __launch_bounds__(kThreads, 1) verify_attn_v30_split_kernel(const Params p) {
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  float* xch = reinterpret_cast<float*>(smem + kRingBytes);
  constexpr int kXchAll = kXchBuffers * kXchBytes;
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kRingBytes + kXchAll);
  unsigned char* q_rope = smem + kRingBytes + kXchAll + kMaskBytes;  // [64][64] bf16
  const uint32_t ring = smem_addr(smem);
  const uint32_t full = smem_addr(smem + kRingBytes + kXchAll + kMaskBytes + kQRopeBytes);
  const uint32_t empty = full + kStages * 8;

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  const int prefix_start = p.prefix_indptr[b];
  const int prefix_len = p.prefix_indptr[b + 1] - prefix_start;
  const int total = prefix_len + p.nodes;
  const int total_tiles = (total + kTileTokens - 1) / kTileTokens;
  const int per_split = (total_tiles + p.num_splits - 1) / p.num_splits;
  const int tile0 = split * per_split;
  const int ntiles = max(0, min(total_tiles, tile0 + per_split) - tile0);
  const int seq_end = min(total, (tile0 + ntiles) * kTileTokens);

  if (tid < kStages) {
    mbar_init(full + tid * 8, 32);  // the producer warp's 32 lanes (their cp.async arrives, or the bulk path's)
    mbar_init(empty + tid * 8, kMathThreads);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine too
  }
  __syncthreads();  // the barriers' init, before any thread leaves

  if (warp >= kMathWarps) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
    if (warp == kMathWarps)
      produce(p, ring, full, empty, b, prefix_start, prefix_len, seq_end, tile0 * kTileTokens, 2 * ntiles, lane);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMathRegs));
    const int grp = warp & 1, wrow = (warp >> 1) * 16;
    const int partner = warp ^ 1, pair_id = warp >> 1;
    const int gq = lane >> 2, cq = lane & 3;  // mma fragment coordinates: row group, column pair

    if (tid < kRowsPerBlock) {
      const int r = row0 + tid;
      s_mask[tid] = r < rows ? p.tree_mask[b * p.nodes + r / p.heads] : 0ull;
    }
    uint32_t qf[16][4];
    {
      const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
      const __nv_bfloat16* qb = static_cast<const __nv_bfloat16*>(p.q) + static_cast<int64_t>(b) * rows * kHeadDim;
      const uint32_t* q_lo = reinterpret_cast<const uint32_t*>(qb + static_cast<int64_t>(r_lo) * kHeadDim);
      const uint32_t* q_hi = reinterpret_cast<const uint32_t*>(qb + static_cast<int64_t>(r_hi) * kHeadDim);
#pragma unroll
      for (int s = 0; s < 16; ++s) {
        const int w = (grp * 256 + s * 16 + 2 * cq) / 2;
        qf[s][0] = r_lo < rows ? __ldg(q_lo + w) : 0u;
        qf[s][1] = r_hi < rows ? __ldg(q_hi + w) : 0u;
        qf[s][2] = r_lo < rows ? __ldg(q_lo + w + 4) : 0u;
        qf[s][3] = r_hi < rows ? __ldg(q_hi + w + 4) : 0u;
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int idx = tid + i * kMathThreads, r = idx >> 3, ch = idx & 7;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (row0 + r < rows)
          v = __ldg(reinterpret_cast<const uint4*>(qb + static_cast<int64_t>(row0 + r) * kHeadDim + kVDim) + ch);
        *reinterpret_cast<uint4*>(q_rope + r * 128 + ((ch ^ (r & 7)) << 4)) = v;
      }
    }
    asm volatile("bar.sync %0, %1;\n" ::"n"(kMathBarrier), "n"(kMathThreads) : "memory");

    float o[32][4];
#pragma unroll
    for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.f, l_hi = 0.f;
    const float scale = p.scale_log2;

    // Tile t is stages 2 (t % kRingTiles) and 2 (t % kRingTiles) + 1, filled for the (t / kRingTiles)-th time.
    const auto tile_of = [&](int t) { return ring + (static_cast<unsigned>(t) % kRingTiles) * kTileBytes; };
    const auto wait_full = [&](int t) {
      const uint32_t st = 2 * (static_cast<unsigned>(t) % kRingTiles), parity = (static_cast<unsigned>(t) / kRingTiles) & 1;
      mbar_wait(full + st * 8, parity);
      mbar_wait(full + st * 8 + 8, parity);
    };
    // S = Q K^T over tile t for this warp's 16 rows: its half of the latent columns, then its 32 rope columns.
    const auto qk = [&](uint32_t tile, float (&s)[4][4]) {
#pragma unroll
      for (int n = 0; n < 4; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      const uint32_t k_row = tile + (((lane >> 4) << 3) + (lane & 7)) * kSmemRowBytes + ((lane >> 3) & 1) * 16;
      const uint32_t k_lat = k_row + grp * 256 * 2;
      // Fragment j = 2 ks + nn of K's latent half; kPrefetch of them in flight.
      const auto k_frag = [&](int j) { return k_lat + (j & 1) * 16 * kSmemRowBytes + (j >> 1) * 32; };
      uint32_t bf[kPrefetch][4];
#pragma unroll
      for (int j = 0; j < kPrefetch - 1; ++j) ldmatrix_x4(bf[j], k_frag(j));
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        if (j + kPrefetch - 1 < 32) ldmatrix_x4(bf[(j + kPrefetch - 1) % kPrefetch], k_frag(j + kPrefetch - 1));
        const int ks = j >> 1, nn = j & 1, i = ks * 4 + nn * 2;
        const uint32_t(&b)[4] = bf[j % kPrefetch];
        mma_bf16_seq(s[2 * nn], qf[ks], b[0], b[1], i, o, 3 * i, 3 * i + 1, 3 * i + 2);
        mma_bf16_seq(s[2 * nn + 1], qf[ks], b[2], b[3], i + 1, o, 3 * i + 3, 3 * i + 4, 3 * i + 5);
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
          const int i = 64 + ks * 4 + nn * 2;
          mma_bf16_seq(s[2 * nn], qa, bf[0], bf[1], i, o, 3 * i, 3 * i + 1, 3 * i + 2);
          mma_bf16_seq(s[2 * nn + 1], qa, bf[2], bf[3], i + 1, o, 3 * i + 3, 3 * i + 4, 3 * i + 5);
        }
      }
    };
    // The pair's S swap, the mask and the online softmax of tile t: P (unnormalised, exp2) packed as P.V's A.
    const auto softmax = [&](int t, float (&s)[4][4], uint32_t (&pa)[2][4]) {
      {
        float4* const buf = reinterpret_cast<float4*>(xch) + (kXchBuffers == 2 ? (t & 1) * (kXchBytes / 16) : 0);
        float4* mine = buf + warp * 128;
        const float4* other = buf + partner * 128;
        if constexpr (kReadBarriers) asm volatile("bar.sync %0, 64;\n" ::"r"(kReadBarrier + warp) : "memory");
#pragma unroll
        for (int n = 0; n < 4; ++n) mine[n * 32 + lane] = make_float4(s[n][0], s[n][1], s[n][2], s[n][3]);
        asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair_id));
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          const float4 v = other[n * 32 + lane];
          s[n][0] += v.x;
          s[n][1] += v.y;
          s[n][2] += v.z;
          s[n][3] += v.w;
        }
        if (kReadBarriers && t + 1 < ntiles)
          asm volatile("bar.arrive %0, 64;\n" ::"r"(kReadBarrier + partner) : "memory");
      }
      const int pos0 = (tile0 + t) * kTileTokens;
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
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) {
        pa[kk][0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
        pa[kk][1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
        pa[kk][2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        pa[kk][3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      }
    };
    // O += P V over tile t; each of its two stages is released (all 256 math threads arrive on empty) after its half.
    const auto pv = [&](int t, const uint32_t (&pa)[2][4]) {
      const uint32_t st = 2 * (static_cast<unsigned>(t) % kRingTiles);
      const uint32_t v_addr = tile_of(t) + ((((lane >> 3) & 1) << 3) + (lane & 7)) * kSmemRowBytes +
                              (grp * 256 + (lane >> 4) * 8) * 2;
      // Fragment j = 16 kk + nt of V; kPrefetch of them in flight.
      const auto v_frag = [&](int j) { return v_addr + (j >> 4) * 16 * kSmemRowBytes + (j & 15) * 32; };
      uint32_t bf[kPrefetch][4];
#pragma unroll
      for (int j = 0; j < kPrefetch - 1; ++j) ldmatrix_x4_trans(bf[j], v_frag(j));
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        if (j + kPrefetch - 1 < 32) ldmatrix_x4_trans(bf[(j + kPrefetch - 1) % kPrefetch], v_frag(j + kPrefetch - 1));
        const int kk = j >> 4, nt = j & 15, i = kk * 32 + nt * 2;
        const uint32_t(&b)[4] = bf[j % kPrefetch];
        mma_bf16_seq(o[2 * nt], pa[kk], b[0], b[1], i, o, i + 16, i + 24, i + 20);
        mma_bf16_seq(o[2 * nt + 1], pa[kk], b[2], b[3], i + 1, o, i + 17, i + 25, i + 21);
        // This thread is done with stage st + kk (its 16 tokens) once its last fragment is consumed.
        if (nt == 15) mbar_arrive(empty + (st + kk) * 8);
      }
    };

    float s[4][4];
    uint32_t pa[2][4];
    // Warp w writes its S of tile t + 1 only after its partner has read that of tile t: the partner arrives on
    // barrier kReadBarrier + w after each read but the last, and once before the first tile.
    if (kReadBarriers && ntiles > 0) asm volatile("bar.arrive %0, 64;\n" ::"r"(kReadBarrier + partner) : "memory");
    if constexpr (!kPingPong) {
      for (int t = 0; t < ntiles; ++t) {
        wait_full(t);
        if (t == 0) Probe::split(kFirstTileLanded, ntiles);
        qk(tile_of(t), s);
        softmax(t, s, pa);
        pv(t, pa);
      }
    } else {
      // Ping-pong (FA3's warp-scheduler barriers, on mma.sync): the two math warpgroups take turns at the tensor
      // pipes, one running P.V of tile t-1 and QK of tile t while the other swaps S and runs its softmax. Warpgroup
      // g waits on named barrier 6 + g, then hands the turn over by arriving on the other's; warpgroup 1 gives the
      // first turn, and its last hand-over is left out, so that both barriers see as many arrivals as waits.
      const int wg = warp >> 2;
      const uint32_t my_turn = kTurnBarrier + wg, their_turn = kTurnBarrier + (wg ^ 1);
      if (ntiles > 0 && wg == 1) asm volatile("bar.arrive %0, %1;\n" ::"r"(their_turn), "n"(kMathThreads) : "memory");
      for (int it = 0; ntiles > 0 && it <= ntiles; ++it) {
        if (it < ntiles) wait_full(it);
        if (it == 0) Probe::split(kFirstTileLanded, ntiles);
        asm volatile("bar.sync %0, %1;\n" ::"r"(my_turn), "n"(kMathThreads) : "memory");
        if (it > 0) pv(it - 1, pa);
        if (it < ntiles) qk(tile_of(it), s);
        if (it < ntiles || wg == 0) asm volatile("bar.arrive %0, %1;\n" ::"r"(their_turn), "n"(kMathThreads) : "memory");
        if (it < ntiles) softmax(it, s, pa);
      }
    }
    Probe::split(kLoopEnd, ntiles);
    pdl_launch_dependents();

    l_lo = quad_sum(l_lo);
    l_hi = quad_sum(l_hi);
    const float inv_lo = l_lo > 0.f ? 1.f / l_lo : 0.f, inv_hi = l_hi > 0.f ? 1.f / l_hi : 0.f;
    const float lse_lo = l_lo > 0.f ? m_lo + __log2f(l_lo) : -INFINITY;
    const float lse_hi = l_hi > 0.f ? m_hi + __log2f(l_hi) : -INFINITY;
    const int r_lo = row0 + wrow + gq, r_hi = r_lo + 8;
    const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;
    {
      __nv_bfloat16* ob = p.num_splits == 1 ? static_cast<__nv_bfloat16*>(p.out) + static_cast<int64_t>(b) * rows * kVDim
                                            : static_cast<__nv_bfloat16*>(p.part_o) + base_row * kVDim;
      store_rows_bf16(ob + static_cast<int64_t>(r_lo) * kVDim + grp * 256,
                      ob + static_cast<int64_t>(r_hi) * kVDim + grp * 256, r_lo < rows, r_hi < rows, o, inv_lo, inv_hi,
                      cq);
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
    Probe::split(kBlockExit, ntiles);
  }
}

// v30's launcher: v26's (launch_split_and_combine) with this split kernel, 384 threads and v30's shared memory.
// Its own template, so its static per-device LaunchInfo is not the product's (see verify_attention_sm.cu).
template <class Probe>
inline cudaError_t launch(const Params& p, cudaStream_t stream) {
  if (!launchable(p)) return cudaErrorInvalidValue;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  static LaunchInfo info[64];
  if (device >= 64) return cudaErrorInvalidDevice;
  LaunchInfo& in = info[device];
  if (!in.configured) {
    err = cudaFuncSetAttribute(verify_attn_v30_split_kernel<Probe>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes);
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
  }
  const dim3 grid(row_tiles(p.nodes, p.heads), p.num_splits, p.batch);
  verify_attn_v30_split_kernel<Probe><<<grid, kThreads, kSmemBytes, stream>>>(p);
  err = cudaGetLastError();
  if (err != cudaSuccess || p.num_splits == 1) return err;
  const dim3 combine_grid(p.nodes * p.heads, 2, p.batch);
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = combine_grid;
  config.blockDim = dim3(kCombineThreads);
  config.dynamicSmemBytes = combine_spread_smem(static_cast<int>(combine_grid.x * combine_grid.y * combine_grid.z),
                                                in.sms, in.threads_per_sm, in.smem_per_sm, in.smem_per_block_max,
                                                in.combine_static, in.reserved_per_block);
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = in.cc_major >= 9 ? 1 : 0;
  return cudaLaunchKernelEx(&config, verify_attn_combine_kernel<Probe>, p);
}

}  // namespace v30
}  // namespace verify_attn
