// v30, the verify kernel on sm_90 until v40 (issue 17 part 2; kept as kernel/build.py's lab builds v30*: its sm_120a
// build, which fits 99 KB, loses to v26 at sm_120's emulated balance). Same math tile as v26 (verify_attention.cuh), the portable path: two math warpgroups, partner
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
// - Measured and lost on the H200, and no longer in this file (kernel/NOTES.md, "Tried and lost"; their code is at
//   commit 1ee06b9): a ping-pong of the math warpgroups at the tensor pipes, ldmatrix fragments prefetched ahead.
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
constexpr int kRingBytes = kStages * kStageBytes;          // 74,752 B with 4 stages, 112,128 B with 6
constexpr int kBarBytes = 2 * kStages * 8;                 // full[kStages], empty[kStages]
// The S swap: 1 buffer (fits sm_120's 99 KB; the read barriers order a warp's next write after its partner's read)
// or 2, by tile parity (sm_90a: a warp writes buffer (t + 2) & 1 only past the pair barrier of tile t + 1, which its
// partner reaches after reading tile t's).
constexpr int kXchBuffers = VERIFY_V30_XCH_BUFFERS;
static_assert(kXchBuffers == 1 || kXchBuffers == 2, "VERIFY_V30_XCH_BUFFERS: 1 or 2");
// 99,904 B with 4 stages and one swap buffer (sm_120a's build), 153,696 B with 6 and two (sm_90a's product).
constexpr int kSmemBytes = kRingBytes + kXchBuffers * kXchBytes + kMaskBytes + kQRopeBytes + kBarBytes;
#if defined(__CUDA_ARCH_FEAT_SM120_ALL)
static_assert(kSmemBytes <= kSmemLimit, "v30's sm_120a build must fit sm_120's 99 KB: 4 stages, one swap buffer");
#endif
static_assert(kSmemBytes <= 227 * 1024, "v30's shared memory must fit sm_90's 227 KB");
constexpr bool kBulk = VERIFY_V30_BULK != 0;
constexpr int kMathBarrier = 5;  // named barrier of the 256 math threads (1-4 are the pairs' swaps)
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

// The producer warp: stage c % kStages of chunk c (16 tokens), for every chunk of the block's tiles.
__device__ __forceinline__ void produce(const Params& p, uint32_t ring, uint32_t full, uint32_t empty, int b,
                                        int prefix_start, int prefix_len, int seq_end, int first_pos, int nchunks,
                                        int lane, bool early) {
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
    // early (kPdlPrefix): the prefix's rows are gathered before the wait, a chunk holding a tree node's after it.
    if (early && first_pos + (c + 1) * kStageTokens > prefix_len) {
      pdl_wait_primary();
      early = false;
    }
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

  const bool early = p.pdl == kPdlPrefix;  // the plan and the prefix's rows before the wait (Params::pdl)
  if (!early) pdl_wait_primary();
  const SplitRange sp = split_range<kTileTokens>(p, b, split);  // (plain names: lambdas below capture them)
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid < kStages) {
    mbar_init(full + tid * 8, 32);  // the producer warp's 32 lanes (their cp.async arrives, or the bulk path's)
    mbar_init(empty + tid * 8, kMathThreads);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine too
  }
  __syncthreads();  // the barriers' init, before any thread leaves

  if (warp >= kMathWarps) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
    if (warp == kMathWarps)
      produce(p, ring, full, empty, b, prefix_start, prefix_len, seq_end, tile0 * kTileTokens, 2 * ntiles, lane,
              early);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMathRegs));
    const int grp = warp & 1, wrow = (warp >> 1) * 16;
    const int partner = warp ^ 1, pair_id = warp >> 1;
    const int gq = lane >> 2, cq = lane & 3;  // mma fragment coordinates: row group, column pair

    if (tid < kRowsPerBlock) {
      s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
    }
    uint32_t qf[16][4];
    // q may be the last kernel's write. Unconditional (a second wait returns at once): behind `if (early)`, ptxas moved
    // q's loads above the wait (nvcc 13.0, the late-writer tests at 8c85a02; tests/kernel/test_compile_v30.py).
    pdl_wait_primary();
    load_q<kMathThreads>(p, b, rows, row0, wrow, grp, gq, cq, tid, q_rope, qf);
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
#pragma unroll
      for (int ks = 0; ks < 16; ++ks) {
#pragma unroll
        for (int nn = 0; nn < 2; ++nn) {
          uint32_t bf[4];
          ldmatrix_x4(bf, k_lat + nn * 16 * kSmemRowBytes + ks * 32);
          const int i = ks * 4 + nn * 2;
          mma_bf16_seq(s[2 * nn], qf[ks], bf[0], bf[1], i, o, 3 * i, 3 * i + 1, 3 * i + 2);
          mma_bf16_seq(s[2 * nn + 1], qf[ks], bf[2], bf[3], i + 1, o, 3 * i + 3, 3 * i + 4, 3 * i + 5);
        }
      }
      qk_rope(s, o, k_row, q_rope, wrow, grp, lane);
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
        asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair_id) : "memory");
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
      softmax_tile(s, o, m_lo, m_hi, l_lo, l_hi, scale, (tile0 + t) * kTileTokens, seq_end, prefix_len, s_mask, wrow,
                   gq, cq);
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
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) {
#pragma unroll
        for (int nt = 0; nt < 16; ++nt) {
          uint32_t bf[4];
          ldmatrix_x4_trans(bf, v_addr + kk * 16 * kSmemRowBytes + nt * 32);
          const int i = kk * 32 + nt * 2;
          mma_bf16_seq(o[2 * nt], pa[kk], bf[0], bf[1], i, o, i + 16, i + 24, i + 20);
          mma_bf16_seq(o[2 * nt + 1], pa[kk], bf[2], bf[3], i + 1, o, i + 17, i + 25, i + 21);
        }
        mbar_arrive(empty + (st + kk) * 8);  // this thread is done with stage st + kk (its 16 tokens)
      }
    };

    float s[4][4];
    uint32_t pa[2][4];
    // Warp w writes its S of tile t + 1 only after its partner has read that of tile t: the partner arrives on
    // barrier kReadBarrier + w after each read but the last, and once before the first tile.
    if (kReadBarriers && ntiles > 0) asm volatile("bar.arrive %0, 64;\n" ::"r"(kReadBarrier + partner) : "memory");
    for (int t = 0; t < ntiles; ++t) {
      wait_full(t);
      if (t == 0) Probe::split(kFirstTileLanded, ntiles);
      qk(tile_of(t), s);
      softmax(t, s, pa);
      pv(t, pa);
    }
    Probe::split(kLoopEnd, ntiles);
    pdl_launch_dependents();

    write_rows(p, b, split, rows, row0, wrow, grp, gq, cq, o, m_lo, m_hi, l_lo, l_hi);
    Probe::split(kBlockExit, ntiles);
  }
}

// v30's launcher: v26's (launch_split_and_combine) with this split kernel, 384 threads and v30's shared memory.
// Its own template, so its static per-device LaunchInfo is not the product's (see verify_attention_sm.cu).
template <class Probe>
inline cudaError_t launch(const Params& p, cudaStream_t stream) {
  return launch_split_kernel_and_combine<Probe, verify_attn_v30_split_kernel<Probe>>(p, stream, kThreads, kSmemBytes);
}

}  // namespace v30
}  // namespace verify_attn
