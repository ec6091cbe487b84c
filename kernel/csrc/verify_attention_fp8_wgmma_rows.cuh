// The decoupled wgmma fp8 kernel with each warp owning its rows' scores (issue 28, sm_90a; lab builds, kernel/build.py
// "fp8wgr"): fp8wgws's producer, ring, numerics and P.V, with QK the other way round.
//
// Why: in fp8wgws (verify_attention_fp8_wgmma_ws.cuh) QK is S^T = K . Q^T, so a warp holds 16 tokens of every row and
// a row's maximum crosses the warpgroup's 4 warps through shared memory and a named barrier every tile, on the serial
// chain QK -> softmax -> P.V that sets the tile (kernel/NOTES.md, "The decoupled kernel, measured"). Here:
// - QK is S = Q . K^T with A = the warpgroup's Q, its two terms interleaved as wgmma's 64 rows (8-row group 2w + term:
//   warp w's accumulator rows gq and gq + 8 are row 8w + gq's hi and lo terms), and B = the K tile (N = 64 tokens).
//   The same 18 m64n64k32 a tile, the same 32 accumulator registers; a thread combines hi and lo of its own row.
// - A thread scores one row (8w + gq) over 16 tokens, 4 lanes a row: the maximum is 2 shuffles, every lane of the quad
//   moves the same lazy shift, no exchange. P goes to shared memory as P.V's B operand in the same k order as fp8wgws's
//   (4 consecutive bytes a thread a 16-token chunk: no shuffle), and each moved row's rescale beside it; one named
//   barrier a tile (a bar.red.or: whether any row of the warpgroup moved) hands both to P.V, whose O^T needs the
//   rescale of 8 rows that other warps own.
// - P is double-buffered by tile parity: with one barrier a tile, a fast warp writes tile t + 1's P while a slow warp's
//   P.V of tile t may still read tile t's (each warp waits for its own P.V at the end of its tile, before the barrier
//   of the next, so tile t + 2 may reuse tile t's buffer).
// - Not done here: the next tile's QK under this one's softmax (FA3's intra-warpgroup overlap), or P.V's wait deferred
//   past the next QK's issue. Either keeps S's 32 accumulator registers in flight beside O's 128 and P.V's A fragments
//   (64: 8 m-blocks x 2 k-steps, reserved until P.V completes), and ptxas serialised every wgmma (C7512) both ways,
//   with the issue of the last tile's QK peeled off the loop too, and so did FA3's own order (tile t's QK issued with
//   tile t - 1's P.V, t's softmax under that P.V). "fp8wgvt" (code at 86e2398) moved V's transpose to the producer, so
//   that P.V needed no A registers and FA3's order compiled: 8.5% slower than fp8wgws, its producer (gathers and
//   transposes behind a 2-tile ring, all shared memory holds beside V^T's) too slow (kernel/NOTES.md).
#pragma once

#include "verify_attention_fp8_wgmma_ws.cuh"

namespace verify_attn {

constexpr int kRsPBuffers = 2;
// A stage's full barrier: every producer thread arrives (cp.async.mbarrier.arrive.noinc).
constexpr int kRsFullArrivals = 128;
#ifdef VERIFY_F8WG_Q_LINES
constexpr int kRsQArrivals = kWsMathThreads;  // the math threads' copies of Q (fp8wgrwq; fp8wgrwf waits on none)
#else
constexpr int kRsQArrivals = 128;  // the producer's copies of Q
#endif
#ifdef VERIFY_F8WG_LINES
// "fp8wgrw", sm_90's product: a stage in wgmma's 128-B-swizzled K-major layout, 5 K-blocks of 64 tokens x 128 B
// (latent dims 128k .. 128k + 127; the rope's 64 in the fifth's first half), token r's 16-B chunk j of a K-block at
// r * 128 + ((j ^ (r & 7)) << 4). Why: in the core-matrix layout a warp's cp.async instruction reads 16 B of each of
// 8 tokens a quarter warp (so its writes are conflict-free), and each 32-B sector is requested twice, by two quarter
// warps: Nsight Compute counted 861 MB from L2 for 420 MB of KV at (1,8,64) 91k, L2 at 82% of its throughput, and
// half the reads zero-filled took 179 us against 232 (docs/lab/patches/fp8wgr_ablate.patch, 128). Swizzled, a quarter
// warp reads one token's 128 contiguous bytes (whole sectors) and writes one 128-B row (conflict-free).
constexpr int kSwKBlockBytes = kWgTokens * 128;  // 8,192
constexpr int kRsStageBytes = 5 * kSwKBlockBytes;  // 40,960: 3 stages fit beside Q, 4 no longer (kRsSmemBytes)
static_assert(kRsStageBytes % 1024 == 0, "every stage starts on a 128-B swizzle atom");
#else
constexpr int kRsStageBytes = kWgTileBytes;
#endif
constexpr int kRsQOff = kWsStages * kRsStageBytes;
static_assert(kF8QTerms == 2, "the rows-own layout interleaves Q's two terms");

// Shared memory, in order: the ring, Q (2 warpgroups x 2 terms, interleaved), P (2 warpgroups x kRsPBuffers), each
// row's rescale (2 warpgroups x 2 parities x 32 rows), the row sums and shifts for the epilogue (2 x 32 float2),
// ancestor masks, row scales, barriers (full[kWsStages], empty[kWsStages], Q's).
#ifdef VERIFY_F8WG_Q_LINES
// Lab build "fp8wgrwq": Q in the swizzled layout too, a warpgroup's 64 wgmma rows (32 rows x 2 terms, interleaved as
// fp8wgr's) x 5 K-blocks of 128 B, so that Q's copies read whole sectors as the ring's do (fp8wgr's Q copies take
// 16 B of 8 rows a quarter warp: every sector of Q requested twice, 147 KB from L2 for a block's 74 KB of Q, all at
// the block's start: at (1,8,16) 23k about as much as its KV).
constexpr int kRsQWgBytes = 5 * kSwKBlockBytes;  // 40,960
#else
constexpr int kRsQWgBytes = kF8QTerms * kWgQTermBytes;
#endif
constexpr int kRsPOff = kRsQOff + 2 * kRsQWgBytes;
constexpr int kRsAlphaOff = kRsPOff + 2 * kRsPBuffers * kWgPBytes;
constexpr int kRsSumOff = kRsAlphaOff + 2 * 2 * kWgRows * 4;
constexpr int kRsMaskOff = kRsSumOff + 2 * kWgRows * 8;
constexpr int kRsScaleOff = kRsMaskOff + kRowsPerBlock * 8;
#ifdef VERIFY_F8WG_LINES
constexpr int kRsSlotOff = kRsScaleOff + kRowsPerBlock * 8;  // [kWsStages][64] slot ids, the ring's (ws_produce_lines)
constexpr int kRsBarOff = kRsSlotOff + kWsStages * kWgTokens * 4;
#else
constexpr int kRsBarOff = kRsScaleOff + kRowsPerBlock * 8;
#endif
constexpr int kRsSmemBytes = kRsBarOff + (2 * kWsStages + 1) * 8;
static_assert(kRsSmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");

#if defined(VERIFY_F8WG_Q_LINES) && !defined(VERIFY_F8WG_LINES)
#error "VERIFY_F8WG_Q_LINES needs VERIFY_F8WG_LINES"
#endif
#if defined(VERIFY_F8WG_Q_FUSED) && !defined(VERIFY_F8WG_Q_LINES)
#error "VERIFY_F8WG_Q_FUSED needs VERIFY_F8WG_Q_LINES"
#endif
#ifdef VERIFY_F8WG_LINES
// Byte offset in a swizzled stage of token r's 16-B chunk c (c < 32 the latent's, 32-35 the rope's).
__device__ __forceinline__ uint32_t sw_chunk(int r, int c) {
  return static_cast<uint32_t>((c >> 3) * kSwKBlockBytes + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}
// QK's k-step ks (32 B of K) from the stage's start: its K-block, then 32 B a step inside the swizzle atom.
__host__ __device__ constexpr uint32_t sw_k_offset(int ks) { return (ks >> 2) * kSwKBlockBytes + (ks & 3) * 32; }
static_assert(sw_k_offset(16) == 4 * kSwKBlockBytes && sw_k_offset(17) == 4 * kSwKBlockBytes + 32, "the rope's steps");

#ifdef VERIFY_F8WG_Q_FUSED
// A math warpgroup quantizes its own 32 rows of Q into the swizzled layout (lab build "fp8wgrwf"): no quantize kernel
// ahead of the split kernel, so neither its launch nor the wait for its last block is on the call's path. Warp wq
// takes rows 8wq .. 8wq + 7, one at a time, as the quantize kernel's warps do (quantize_q_row: the same bytes and
// scales); lane l's pair j lands at column 2 (32j + l) of its term's wgmma row (fp8wgr's interleave), 64 contiguous
// bytes a warp in one 128-B line of the swizzle (no bank conflict). Padding rows are zeros with scales 1, as the
// copies' zero fill and the launch's scales were. The rows' scales go to s_scale as the unfused kernel's do.
__device__ __forceinline__ void wg_quantize_q(unsigned char* q, float2* s_scale, const __nv_bfloat16* qb, int wq,
                                              int lane, int row0, int rows, float scale_log2) {
#pragma unroll 1
  for (int i = 0; i < 8; ++i) {
    const int wr = 8 * wq + i, r = row0 + wr;
    QRowTerms t{};
    if (r < rows) {
      t = quantize_q_row(reinterpret_cast<const uint32_t*>(qb + static_cast<int64_t>(r) * kHeadDim), lane);
    } else {
      t.s_hi = t.s_lo = 1.f;
    }
#pragma unroll
    for (int term = 0; term < 2; ++term) {
      const int m = 16 * (wr >> 3) + 8 * term + (wr & 7);
#pragma unroll
      for (int j = 0; j < 9; ++j) {
        const int col = 2 * (32 * j + lane);
        *reinterpret_cast<__nv_fp8x2_storage_t*>(q + sw_chunk(m, col >> 4) + (col & 15)) = term ? t.lo[j] : t.hi[j];
      }
    }
    if (lane == 0) s_scale[wr] = make_float2(__fdiv_rn(t.s_lo, t.s_hi), t.s_hi * scale_log2);  // exact: powers of two
  }
}
#endif
#ifdef VERIFY_F8WG_Q_LINES
// A math warpgroup's copies of its own Q into the swizzled layout (fp8wgrwq), right after its griddepcontrol.wait:
// the producer, whose 24 registers spilled under them, keeps only the ring. Its 64 wgmma rows m are fp8wgr's
// interleave (8-row group 2 (r / 8) + term: row r = 8 (m / 16) + m % 8 of the warpgroup's 32, term (m / 8) % 2);
// warp wq takes m = 16wq .. 16wq + 15: the latent as 16 instructions (quarter q of instruction i: m = 16wq +
// (4i + q) % 16, K-block (4i + q) / 16, the lane's chunk sub of it: one 128-B line), the rope as 2 (two rows 4 apart
// a quarter, lane % 4 its chunk, as the ring's). Padding rows read the last row and copy nothing.
__device__ __forceinline__ void wg_issue_q_lines(uint32_t q, const unsigned char* qb, int wq, int lane, int row0,
                                                 int rows) {
  const int quarter = lane >> 3, sub = lane & 7;
  const auto copy = [&](int m, int c) {
    const int r = row0 + 8 * (m >> 4) + (m & 7), term = (m >> 3) & 1;
    const unsigned char* src = qb + static_cast<int64_t>(min(r, rows - 1)) * kF8QRowBytes + term * kHeadDim;
    cp_async_16(q + sw_chunk(m, c), src + c * 16, r < rows ? 16 : 0);
  };
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int x = 4 * i + quarter;
    copy(16 * wq + (x & 15), 8 * (x >> 4) + sub);
  }
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int x = 4 * j + quarter;
    copy(16 * wq + 8 * (x >> 2) + (x & 3) + 4 * (sub >> 2), 32 + (sub & 3));
  }
}
#endif

// The producer for the swizzled stages. Warp pw copies tokens 16pw .. 16pw + 15 of a tile; its quarter warp q
// (lane / 8) tokens 16pw + q + 4k, k = 0..3: the latent as 16 instructions (token k, K-block j: lane's chunk
// 8j + lane % 8, one 128-B row of the stage), the rope as 2 (tokens k = 2i, 2i + 1 in a quarter: lane % 4 its chunk,
// tokens 4 apart so that their 64-B halves of the XOR pattern do not share banks). A lane needs 4 slot ids a tile:
// they ride the ring (fp8wgrs's scheme, kernel/NOTES.md): tile t's copies bring tile t + kStages's ids (lane l < 16
// those of token 16pw + l) into the stage's slot area, read after the stage's empty wait; the first kStages tiles' are
// loaded and stored before the loop. Past seq_end: zero-filled, read as -1 from the position. The slot ids of the
// first kStages + 1 tiles are read before the producer's griddepcontrol.wait (with Q_LINES every slot id: that producer
// never waits): the primary, the quantize kernel where there is one, writes only Q; a primary that wrote the slot
// tables would need these reads after a wait.
template <int kStages, class IssueQ>
__device__ __forceinline__ void ws_produce_lines(const Params& p, uint32_t base, uint32_t slots, uint32_t full,
                                                 uint32_t empty, uint32_t q_full, int b, int rows, int prefix_start,
                                                 int prefix_len, int seq_end, int tile0, int ntiles, int pw, int lane,
                                                 IssueQ issue_q) {
  const int own = 16 * pw + (lane & 15);  // the token whose id this lane brings (lanes 0-15)
  const int q = lane >> 3, sub = lane & 7;
  const uint32_t lane_dst = (16 * pw + q) * 128 + ((sub ^ q) << 4);  // sw_chunk(16pw + q, sub): see the loop
  store_first_slot_ids<kStages, kWgTokens>(p, slots, b, prefix_start, prefix_len, seq_end, tile0, ntiles, own,
                                           lane < 16);
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kStages;
    if (t >= kStages) v30::mbar_wait(empty + 8 * s, ((t / kStages) - 1) & 1);
    const uint32_t area = slots + 4 * s * kWgTokens, stage = base + s * kRsStageBytes;
    // Token k's slot id read back where it is used (one live at a time: the producer has 24 registers). Its
    // destinations, sw_chunk(token, 8j + sub), folded by hand (ptxas hoisted all 16 out of the tile loop and spilled):
    // token & 7 is q + 4 (k & 1), so the XOR is lane_x ^ 4 (k & 1), lane_x = sub ^ q: a lane's row at `lane_dst`,
    // 64 B over for odd k, 512 B a k and 8,192 a j on. The rope's token 2i + (sub >> 2), chunk 32 + (sub & 3): its
    // XOR (sub & 3) ^ (q + 4 (sub >> 2)) is sub ^ q again, so `lane_dst` + 512 (sub >> 2) + 1,024 i in the fifth K-block.
    const auto read_id = [&](int k, const char*& src) {
      const int token = 16 * pw + q + 4 * k;
      int id;
      asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(id) : "r"(area + 4 * token) : "memory");
      const bool in = (tile0 + t) * kWgTokens + token < seq_end && id >= 0;
      src = static_cast<const char*>(p.kv) + static_cast<int64_t>(in ? id : 0) * kF8RowBytes;
      return in ? 16 : 0;
    };
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const char* src;
      const int bytes = read_id(k, src);
      const uint32_t dst = stage + ((lane_dst + 512 * k) ^ (k & 1 ? 64 : 0));
#pragma unroll
      for (int j = 0; j < 4; ++j) cp_async_16(dst + j * kSwKBlockBytes, src + (8 * j + sub) * 16, bytes);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const char* src;
      const int bytes = read_id(2 * i + (sub >> 2), src);
      cp_async_16(stage + 4 * kSwKBlockBytes + lane_dst + 512 * (sub >> 2) + 1024 * i, src + (32 + (sub & 3)) * 16,
                  bytes);
    }
    __syncwarp();
    const int ahead = (tile0 + t + kStages) * kWgTokens + own;
    if (lane < 16 && t + kStages < ntiles)
      cp_async_slot_id(p, area + 4 * own, b, prefix_start, prefix_len, seq_end, ahead);  // tile t + kStages's ids
    v30::cp_async_arrive_noinc(full + 8 * s);
#ifndef VERIFY_F8WG_Q_LINES  // (else the math warpgroups bring Q, and the producer waits for no primary)
    if (t == 0) ws_issue_q_after_wait(p, b, rows, q_full, issue_q);
#endif
  }
  pdl_launch_dependents();
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
#endif

template <class Probe>
__global__ void __launch_bounds__(kWsThreads, 1) verify_attn_split_kernel_fp8_wgmma_rows(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
#ifdef VERIFY_F8WG_LINES
  extern __shared__ __align__(1024) unsigned char smem_swizzled[];  // (its own name: the others' are 128-B aligned)
  unsigned char* const smem = smem_swizzled;
#else
  extern __shared__ __align__(128) unsigned char smem[];
#endif
  const uint32_t base = smem_addr(smem);
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kRsMaskOff);  // [64]
  float2* s_scale = reinterpret_cast<float2*>(smem + kRsScaleOff);    // [64]: (s_lo / s_hi, s_hi * scale)
  const uint32_t full = base + kRsBarOff, empty = full + kWsStages * 8, q_full = empty + kWsStages * 8;

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
      v30::mbar_init(full + 8 * s, kRsFullArrivals);
      v30::mbar_init(empty + 8 * s, kWsMathThreads);  // every math thread (racecheck follows no __syncwarp)
    }
    v30::mbar_init(q_full, kRsQArrivals);
  }
  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
  }
  __syncthreads();

  if (warp >= kWsMathThreads / 32) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kWsProducerRegs));
    // Q as wgmma's A: each math warpgroup's 32 rows x 2 terms as 64 rows, 8-row group 2 (r / 8) + term.
#ifdef VERIFY_F8WG_Q_LINES
    const auto issue_q = [](const unsigned char*) {};  // unused: the math warpgroups bring their own Q
#else
    const int pt = tid - kWsMathThreads;
    const auto issue_q = [&](const unsigned char* qb) { ws_issue_q<true>(base + kRsQOff, qb, pt, row0, rows); };
#endif
#ifdef VERIFY_F8WG_LINES
    // The 128-B swizzle needs 1,024-B aligned stages. ptxas proves this one (the dynamic window starts after the 1 KB
    // it reserves) and drops the check; it stays as the assumption's statement, should a layout change break it.
    if (tid == kWsMathThreads && (base & 1023) != 0) __trap();
    ws_produce_lines<kWsStages>(p, base, base + kRsSlotOff, full, empty, q_full, b, rows, prefix_start, prefix_len,
                                seq_end, tile0, ntiles, warp - kWsMathThreads / 32, lane, issue_q);
#else
    ws_produce<kWsStages, true>(p, base, full, empty, q_full, b, rows, prefix_start, prefix_len, seq_end, tile0,
                                ntiles, warp - kWsMathThreads / 32, lane, issue_q);
#endif
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kWsMathRegs));
  const int wg = warp >> 2, wq = warp & 3;
  const int gq = lane >> 2, cq = lane & 3;
  const int wrow0 = wg * kWgRows;
  const int own = 8 * wq + gq;  // the row this thread scores, within its warpgroup
  float* alpha_buf = reinterpret_cast<float*>(smem + kRsAlphaOff) + wg * 2 * kWgRows;  // [2 parities][32 rows]
  float2* sum_buf = reinterpret_cast<float2*>(smem + kRsSumOff) + wg * kWgRows;         // [32 rows]: (sum, shift)

  pdl_wait_primary();
#if defined(VERIFY_F8WG_Q_FUSED)
  wg_quantize_q(smem + kRsQOff + wg * kRsQWgBytes, s_scale + wrow0,
                after_wait(static_cast<const __nv_bfloat16*>(f.q_bf16)) + static_cast<int64_t>(b) * rows * kHeadDim, wq,
                lane, row0 + wrow0, rows, p.scale_log2);
  fence_proxy_async();  // these generic-proxy stores, then QK's wgmma reads (the async proxy), past the barrier below
#elif defined(VERIFY_F8WG_Q_LINES)
  if (ntiles > 0) {
    wg_issue_q_lines(base + kRsQOff + wg * kRsQWgBytes,
                     after_wait(static_cast<const unsigned char*>(p.q)) + static_cast<int64_t>(b) * rows * kF8QRowBytes,
                     wq, lane, row0 + wrow0, rows);
    v30::cp_async_arrive_noinc(q_full);
  }
#endif
#ifndef VERIFY_F8WG_Q_FUSED
  if (wq == 0) {
    const int r = row0 + wrow0 + lane;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[wrow0 + lane] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
#endif
  wg_bar(1 + wg);
  const float2 sc = s_scale[wrow0 + own];
  const uint64_t own_mask = s_mask[wrow0 + own];

  float o[8][16];
#pragma unroll
  for (int mb = 0; mb < 8; ++mb)
#pragma unroll
    for (int i = 0; i < 16; ++i) o[mb][i] = 0.f;
  float m = -INFINITY, l = 0.f;
  float s_acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) s_acc[i] = 0.f;
  const int wg0 = __shfl_sync(0xffffffffu, wg, 0);  // lane 0's, so that the descriptors sit in uniform registers
#ifdef VERIFY_F8WG_Q_LINES
  const uint64_t q_desc = wg_desc_sw128(base + kRsQOff + wg0 * kRsQWgBytes);
  const auto q_step = [](int ks) { return sw_k_offset(ks); };
#else
  const uint64_t q_desc = wg_desc(base + kRsQOff + wg0 * kF8QTerms * kWgQTermBytes, 128, kWgGroupBytes);
  const auto q_step = [](int ks) { return static_cast<uint32_t>(ks * 256); };
#endif
  const uint64_t p_desc = wg_desc(base + kRsPOff + wg0 * kRsPBuffers * kWgPBytes, 128, kWgPGroupBytes);
  unsigned char* p_wg = smem + kRsPOff + wg * kRsPBuffers * kWgPBytes;
  // QK of tile t: S = Q . K^T, 18 k-steps of 32 B, once its stage has landed.
  const auto issue_qk = [&](int t) {
    const int s = t % kWsStages;
    v30::mbar_wait(full + 8 * s, (t / kWsStages) & 1);
    fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
#ifdef VERIFY_F8WG_LINES
    const uint64_t k_desc = wg_desc_sw128(base + s * kRsStageBytes);
    const auto k_step = [](int ks) { return sw_k_offset(ks); };
#else
    const uint64_t k_desc = wg_desc(base + s * kWgTileBytes, 128, kWgGroupBytes);
    const auto k_step = [](int ks) { return static_cast<uint32_t>(ks * 256); };
#endif
    wg_keep(s_acc);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 32; ++ks)
      wgmma_ss64(s_acc, wg_desc_step(q_desc, q_step(ks)), wg_desc_step(k_desc, k_step(ks)), ks > 0);
    wg_commit();
  };
#ifndef VERIFY_F8WG_Q_FUSED  // (fused: Q is this warpgroup's own stores, past the barrier above)
  if (ntiles > 0) v30::mbar_wait(q_full, 0);
#endif
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kWsStages, pbuf = t & 1;
    issue_qk(t);
    wg_wait<0>();
    if (t == 0) Probe::split(kFirstTileLanded, ntiles);
    wg_keep(s_acc);
    // Scores in the exp2 domain, masked: s_v[2k + e] is token 8k + 2cq + e of row `own`.
    float s_v[16];
    const int pos_base = (tile0 + t) * kWgTokens + 2 * cq;
    const bool needs_mask = (tile0 + t) * kWgTokens + kWgTokens > min(seq_end, prefix_len);
    const auto scores = [&](auto masked_tile) {
      constexpr bool masked = decltype(masked_tile)::value;
#pragma unroll
      for (int k = 0; k < 8; ++k)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float v = (s_acc[4 * k + e] + s_acc[4 * k + 2 + e] * sc.x) * sc.y;
          if (masked) {
            const int pos = pos_base + 8 * k + e;
            bool ok = pos < seq_end;
            if (ok && pos >= prefix_len) ok = (own_mask >> (pos - prefix_len)) & 1ull;
            v = ok ? v : -INFINITY;
          }
          s_v[2 * k + e] = v;
        }
    };
    if (needs_mask) {
      scores(std::true_type{});
    } else {
      scores(std::false_type{});
    }
    // The row's maximum over its 4 lanes, the lazy shift, P.
    float mx = s_v[0];
#pragma unroll
    for (int i = 1; i < 16; ++i) mx = fmaxf(mx, s_v[i]);
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const bool move = mx > m + static_cast<float>(kF8LazyShift);
    const float alpha = move ? exp2f(m - mx) : 1.f;
    m = move ? mx : m;
    l *= alpha;
    const float sh = m == -INFINITY ? 0.f : m;
    unsigned char* pw = p_wg + pbuf * kWgPBytes + wq * kWgPGroupBytes + gq * 16 + 4 * cq;
#pragma unroll
    for (int c = 0; c < 4; ++c) {  // 16-token chunk c: tokens 16c + {2cq, 2cq + 1, 8 + 2cq, 9 + 2cq}, in that order
      float pv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        pv[i] = exp2f(s_v[4 * c + i] - sh);
        l += pv[i];
      }
      uint16_t lo, hi;
      asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(pv[1] * kF8PScale), "f"(pv[0] * kF8PScale));
      asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(pv[3] * kF8PScale), "f"(pv[2] * kF8PScale));
      *reinterpret_cast<uint32_t*>(pw + c * 128) = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
    float* alpha_t = alpha_buf + (t & 1) * kWgRows;
    if (cq == 0) alpha_t[own] = alpha;
    fence_proxy_async();  // P's writes, then P.V's reads (the async proxy)
    const bool any_move = wg_bar_or(1 + wg, move);
    if (any_move) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 a2 = *reinterpret_cast<const float2*>(alpha_t + 8 * j + 2 * cq);
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            o[mb][4 * j + 2 * h] *= a2.x;
            o[mb][4 * j + 2 * h + 1] *= a2.y;
          }
      }
    }
    // O^T += V^T . P^T (fp8wgws's fragments); the stage goes back to the producer once its V is in registers.
    {
#ifndef VERIFY_F8WG_LINES
      const uint32_t v_lane = base + s * kWgTileBytes + wg_core(lane, 0);
#endif
      const uint64_t p_t = wg_desc_step(p_desc, pbuf * kWgPBytes);
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) {
        uint32_t a[2][4];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
#ifdef VERIFY_F8WG_LINES
          wg_v_fragment_at(a[ks], base + s * kRsStageBytes + sw_chunk(32 * ks + lane, 4 * mb + wq));
#else
          wg_v_fragment(a[ks], v_lane, ks, 4 * mb + wq);
#endif
        }
        wg_keep(o[mb]);
        wg_fence();
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) wgmma_rs(o[mb], a[ks], wg_desc_step(p_t, ks * 256));
      }
      wg_commit();
      wg_wait<0>();
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
      // Every thread arrives after its own reads of the slot, as v30's producer does on full: an arrive of lane 0
      // alone, after a __syncwarp, orders the other lanes' ldmatrix reads only through the warp barrier, which
      // compute-sanitizer's racecheck does not follow (16 hazards, the producer's copies against P.V's ldmatrix, on
      // an H100 at bbec18f).
      v30::mbar_arrive(empty + 8 * s);
    }
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();

  // The row's sum over its 4 lanes; then each thread takes the 8 rows its O^T columns hold.
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (cq == 0) sum_buf[own] = make_float2(l, m);
  wg_bar(1 + wg);
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int n = 8 * j + 2 * cq + e, r = row0 + wrow0 + n;
      const float2 sm = sum_buf[n];
      wg_store_row(f, o, j, e, b, split, r, sm.x, sm.y, wq, gq);
    }
  Probe::split(kBlockExit, ntiles);
}

template <class Probe>
inline cudaError_t launch_split_and_combine_fp8_wgmma_rows(const Fp8Params& f, cudaStream_t stream) {
#ifdef VERIFY_F8WG_Q_FUSED
  constexpr bool kQuantizeKernel = false;  // the split kernel quantizes Q itself
#else
  constexpr bool kQuantizeKernel = true;
#endif
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8_wgmma_rows<Probe>,
                                                   kWsThreads, kRsSmemBytes, kQuantizeKernel);
}

}  // namespace verify_attn
