// The fp8 KV cache kernel on Hopper's tensor cores (issue 28, sm_90a; a lab build, kernel/build.py "fp8wg"):
// kernel/fp8.py's design q2p (Q as two e4m3 terms, exact; P rounded to e4m3) on wgmma e4m3 -> fp32 (QK m64n64k32,
// P.V m64n32k32).
//
// Why: sm_90 has no native e4m3 mma.sync (ptxas lowers each to f16 unpacks and two HMMAs; kernel/NOTES.md, "An fp8
// KV cache: the kernel"), so the mma.sync fp8 kernel is no faster than bf16 on the H100 and H200. Hopper's fp8 tensor
// cores are reached through wgmma only.
//
// The block: 64 rows (the bf16 kernel's row tile), two warpgroups of 32 rows each, 64-token tiles in a 2-stage
// cp.async ring shared by both. Each warpgroup works alone on its rows, transposed so that its tokens are wgmma's M:
// - QK: S^T[64 tokens x 32 rows] = K[64 x 576] . Q^T, A = the K tile, B = the warpgroup's Q (both from shared memory,
//   K-major, no swizzle: 8 x 16-B core matrices). Q's two terms are stacked as 64 rows of B, so one m64n64k32 a k-step
//   reads the K tile once for both (32 registers), S = S_hi + S_lo * s_lo / s_hi per row (the first cut, two m64n32
//   accumulators, read the tile twice). No S swap: a warp holds 16 tokens of every row of its warpgroup.
// - The softmax reduces over tokens, i.e. across the warpgroup's 4 warps: each warp's row maxima through shared memory
//   (one named barrier of 128 threads), every thread then moves the same lazy shift (kF8LazyShift); the row sums stay
//   per thread until the epilogue.
// - P.V as O^T[512 cols x 32 rows] = V^T[512 x 64 tokens] . P^T: A = V^T from registers (ldmatrix.trans and byte
//   permutes, as the mma.sync fp8 kernel builds its V fragments), B = P^T from shared memory (each thread's e4m3 P
//   written there in the order of the k positions those fragments give tokens; a second named barrier). 8 m-blocks of
//   64 columns: O^T is 8 x 16 = 128 fp32 registers, as in the other kernels.
// Then bf16 partials and the same combine kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "verify_attention_fp8.cuh"
#include "verify_attention_wgmma_ptx.cuh"

namespace verify_attn {

constexpr int kWgTokens = 64;                              // tokens a tile (wgmma's M in QK)
constexpr int kWgRows = 32;                                // rows a warpgroup (wgmma's N)
constexpr int kWgCoreK = kHeadDim / 16;                    // 36 core matrices along a 576-B row
constexpr int kWgGroupBytes = kWgCoreK * 128;              // 8 rows x 576 B: one 8-row group of core matrices
constexpr int kWgTileBytes = kWgTokens / 8 * kWgGroupBytes;  // 36,864 B: one 64-token tile
constexpr int kWgStages = 2;
constexpr int kWgQTermBytes = kWgRows / 8 * kWgGroupBytes;   // 18,432 B: one term of a warpgroup's Q
constexpr int kWgPGroupBytes = kWgTokens / 16 * 128;         // 8 rows x 64 tokens of P
constexpr int kWgPBytes = kWgRows / 8 * kWgPGroupBytes;      // 2,048 B a warpgroup
constexpr int kWgRedBytes = kWgRows * 4 * 4;                 // [32 rows][4 warps] fp32 a warpgroup
constexpr int kWgThreads = 256;
// What the index arithmetic below takes for granted: threads 0-63 fill a tile's slot ids (kRowsPerBlock of them),
// 8 warps of 8 tokens copy a tile, 9 copies a thread fill one term of the block's Q.
static_assert(kWgTokens == kRowsPerBlock && kWgThreads == 8 * 32 && kWgTokens == 8 * 8, "one token group a warp");
static_assert(9 * kWgThreads == kRowsPerBlock * kWgCoreK, "9 copies a thread: a term of the block's Q");

// Shared memory, in order: the ring, Q (2 warpgroups x kF8QTerms terms), P (2), the reductions (2), slot ids (2 tiles),
// ancestor masks (64 rows), row scales (64).
constexpr int kWgQOff = kWgStages * kWgTileBytes;
constexpr int kWgPOff = kWgQOff + 2 * kF8QTerms * kWgQTermBytes;
constexpr int kWgRedOff = kWgPOff + 2 * kWgPBytes;
constexpr int kWgSlotOff = kWgRedOff + 2 * kWgRedBytes;
constexpr int kWgMaskOff = kWgSlotOff + 2 * kWgTokens * 4;
constexpr int kWgScaleOff = kWgMaskOff + kRowsPerBlock * 8;
constexpr int kWgSmemBytes = kWgScaleOff + kRowsPerBlock * 8;
static_assert(kWgSmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");


// D[64 x 32] (+)= A[64 x 32] . B[32 x 32]^T, e4m3, both from shared memory; zero_d starts D from 0.
__device__ __forceinline__ void wgmma_ss(float (&d)[16], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(a), "l"(b), "r"(accumulate));
}

// D[64 x 64] (+)= A[64 x 32] . B[64 x 32]^T, e4m3, both from shared memory; zero_d starts D from 0.
__device__ __forceinline__ void wgmma_ss64(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,"
      "%30,%31}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(accumulate));
}

// D[64 x 32] += A[64 x 32] . B[32 x 32]^T, e4m3, A from registers (the m16n8k32 A layout, a warp's 16 rows).
__device__ __forceinline__ void wgmma_rs(float (&d)[16], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}


// Byte offset of (row r, 16-B chunk c) in a K-major no-swizzle block whose 8-row groups are kWgGroupBytes apart.
__device__ __forceinline__ uint32_t wg_core(int r, int c) {
  return static_cast<uint32_t>((r >> 3) * kWgGroupBytes + c * 128 + (r & 7) * 16);
}

// The epilogue for one of a thread's O^T columns: row r (j, e: o[mb][4j + 2h + e] is column 64mb + 16wq + 2gq + h) over
// its row sum, and its lse (shift + log2 sum; -inf where nothing was seen), as the bf16 kernels write them: the output
// itself with one split, else split `split`'s partial for the combine kernel.
__device__ __forceinline__ void wg_store_row(const Fp8Params& f, const float (&o)[8][16], int j, int e, int b, int split,
                                             int r, float sum, float shift, int wq, int gq) {
  const Params& p = f.p;
  const int rows = p.nodes * p.heads;
  const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;
  const float inv = sum > 0.f ? f.out_scale / sum : 0.f;
  const float lse = sum > 0.f ? shift + __log2f(sum) : -INFINITY;
  if (r < rows) {
    __nv_bfloat16* out = p.num_splits == 1 ? static_cast<__nv_bfloat16*>(p.out) + (static_cast<int64_t>(b) * rows + r) * kVDim
                                           : static_cast<__nv_bfloat16*>(p.part_o) + (base_row + r) * kVDim;
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
      *reinterpret_cast<uint32_t*>(out + 64 * mb + 16 * wq + 2 * gq) =
          pack_bf16(o[mb][4 * j + e] * inv, o[mb][4 * j + 2 + e] * inv);
    if (wq == 0 && gq == 0) {
      if (p.num_splits > 1) {
        p.part_lse[base_row + r] = lse;
      } else if (p.lse != nullptr) {
        p.lse[static_cast<int64_t>(b) * rows + r] = lse * 0.6931471805599453f;
      }
    }
  }
}

// P.V's A fragment in registers (V^T, which ldmatrix.trans cannot give in e4m3): one ldmatrix.x4.trans (b16) over 32
// tokens, this lane's row at `addr`, then byte permutes: a[0] column 2gq of tokens {2cq, 2cq + 1, 8 + 2cq, 9 + 2cq},
// a[1] column 2gq + 1, a[2] and a[3] the same 16 tokens on. Written before the wgmma.fence that precedes its wgmma.
__device__ __forceinline__ void wg_v_fragment_at(uint32_t (&a)[4], uint32_t addr) {
  uint32_t r[4];
  ldmatrix_x4_trans(r, addr);
  a[0] = __byte_perm(r[0], r[1], 0x6420);
  a[1] = __byte_perm(r[0], r[1], 0x7531);
  a[2] = __byte_perm(r[2], r[3], 0x6420);
  a[3] = __byte_perm(r[2], r[3], 0x7531);
  wg_keep(a);
}
// The same for k-step ks (tokens 32ks + 0..31) of 16-column chunk `chunk` of the core-matrix tile, `v_lane` the tile +
// wg_core(lane, 0).
__device__ __forceinline__ void wg_v_fragment(uint32_t (&a)[4], uint32_t v_lane, int ks, int chunk) {
  wg_v_fragment_at(a, v_lane + ks * 4 * kWgGroupBytes + chunk * 128);
}

// This thread's 9 copies of a 64-token tile: warp w takes token groups w (8 tokens x 36 chunks, 9 x 32 copies); lane
// (r = lane % 8, c4 = lane / 8) copies chunk 4i + c4 of token 8w + r, i = 0..8 (512 contiguous shared bytes a copy).
__device__ __forceinline__ void wg_issue_tile(const Params& p, uint32_t dst, const int* slots, int warp, int lane) {
  const int token = warp * 8 + (lane & 7), c4 = lane >> 3;
  const int slot = slots[token];
  const char* src = static_cast<const char*>(p.kv) + static_cast<int64_t>(slot < 0 ? 0 : slot) * kF8RowBytes;
  const int bytes = slot < 0 ? 0 : 16;
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    const int c = 4 * i + c4;
    cp_async_16(dst + wg_core(token, c), src + c * 16, bytes);
  }
}

// The P^T k position of token u (0..15) of a 16-token half: what the V^T fragments' byte permutes give position
// 4c + i (tokens 2c, 2c+1, 8+2c, 9+2c).
__device__ __forceinline__ constexpr int wg_kpos(int u) { return u < 8 ? 4 * (u >> 1) + (u & 1) : 4 * ((u - 8) >> 1) + 2 + (u & 1); }

template <class Probe>
__global__ void __launch_bounds__(kWgThreads, 1) verify_attn_split_kernel_fp8_wgmma(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = smem_addr(smem);
  int* s_slot = reinterpret_cast<int*>(smem + kWgSlotOff);             // [2][64]
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kWgMaskOff);   // [64]
  float2* s_scale = reinterpret_cast<float2*>(smem + kWgScaleOff);     // [64]: (s_lo / s_hi, s_hi * scale)

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wg = warp >> 2, wq = warp & 3;  // warpgroup, warp within it (its 16 tokens of a tile)
  const int gq = lane >> 2, cq = lane & 3;
  const int wrow0 = wg * kWgRows;          // the warpgroup's first row in the block
  float* red = reinterpret_cast<float*>(smem + kWgRedOff + wg * kWgRedBytes);  // [32 rows][4 warps]
  const uint32_t q_base = base + kWgQOff + wg * kF8QTerms * kWgQTermBytes;
  const uint32_t p_base = base + kWgPOff + wg * kWgPBytes;

  // (plain names: lambdas below capture them, which C++17 bindings cannot be)
  const SplitRange sp = split_range<kWgTokens>(p, b, split);
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
    s_slot[tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, tile0 * kWgTokens + tid);
  } else if (tid < 2 * kRowsPerBlock) {
    s_slot[tid] = slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + 1) * kWgTokens + tid - kWgTokens);
  }
  __syncthreads();
  if (ntiles > 0) wg_issue_tile(p, base, s_slot, warp, lane);
  cp_async_commit();

  // Q and its scales are the quantize kernel's output (this grid's programmatic primary on sm_90+).
  pdl_wait_primary();
  if (tid < kRowsPerBlock) {
    const int r = row0 + tid;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[tid] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
  {
    // Both warpgroups' Q, each term in core-matrix order: 64 rows x kF8QTerms x 36 chunks, 9 x kF8QTerms a thread.
    const unsigned char* qb =
        after_wait(static_cast<const unsigned char*>(p.q)) + static_cast<int64_t>(b) * rows * kF8QRowBytes;
#pragma unroll
    for (int i = 0; i < 9 * kF8QTerms; ++i) {
      const int idx = tid + i * kWgThreads;         // (row r, term, chunk c): r fastest within 8, then chunks
      const int r8 = idx & 7, c = (idx >> 3) % kWgCoreK, rest = (idx >> 3) / kWgCoreK;  // rest: 8-row group, term
      const int grp = rest % 8, term = rest / 8;    // 8 groups of 8 rows = the block's 64 rows
      const int r = grp * 8 + r8;                   // block row
      const int w = r / kWgRows, wr = r % kWgRows;  // its warpgroup and row there
      // Term 0 of the buffer is hi; with one term only hi is read (kF8QTerms == 1).
      // A row past the last is zero-filled (0 source bytes); its address stays the last row's, inside the buffer.
      const int src_row = min(row0 + r, rows - 1);
      const unsigned char* src = qb + static_cast<int64_t>(src_row) * kF8QRowBytes + term * kHeadDim + c * 16;
      cp_async_16(base + kWgQOff + (w * kF8QTerms + term) * kWgQTermBytes + wg_core(wr, c), src,
                  row0 + r < rows ? 16 : 0);
    }
    cp_async_commit();
  }

  float o[8][16];
#pragma unroll
  for (int mb = 0; mb < 8; ++mb)
#pragma unroll
    for (int i = 0; i < 16; ++i) o[mb][i] = 0.f;
  // This thread's rows: n = 8j + 2cq + e (j 0..3, e 0..1) of the warpgroup; shift m and partial sum l of each.
  float m[4][2], l[4][2];
#pragma unroll
  for (int j = 0; j < 4; ++j) m[j][0] = m[j][1] = -INFINITY, l[j][0] = l[j][1] = 0.f;

  // S^T's accumulator: with two terms one m64n64 over the warpgroup's Q hi and Q lo stacked as 64 B rows (the K tile
  // read once for both), s[4j + 2h + e] with j < 4 the hi term's rows, j >= 4 the lo term's; with one term m64n32.
  constexpr int kSRegs = 16 * kF8QTerms;
  float s_acc[kSRegs];
#pragma unroll
  for (int i = 0; i < kSRegs; ++i) s_acc[i] = 0.f;
  for (int t = 0; t < ntiles; ++t) {
    // Slot ids two tiles ahead (threads 0-63), stored once this tile's copies of tile t+1 are issued.
    const int next_slot = tid < kWgTokens ? slot_at(p, b, prefix_start, prefix_len, seq_end, (tile0 + t + 2) * kWgTokens + tid) : -1;
    cp_async_wait<0>();
    fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
    __syncthreads();
    if (t == 0) Probe::split(kFirstTileLanded, ntiles);
    if (t + 1 < ntiles) wg_issue_tile(p, base + ((t + 1) & 1) * kWgTileBytes, s_slot + ((t + 1) & 1) * kWgTokens, warp, lane);
    cp_async_commit();
    const uint32_t tile = base + (t & 1) * kWgTileBytes;

    // QK: S^T = K . Q^T, 18 k-steps of 32 B a term.
    wg_keep(s_acc);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 32; ++ks) {
      const uint64_t a = wg_desc(tile + ks * 256, 128, kWgGroupBytes), q = wg_desc(q_base + ks * 256, 128, kWgGroupBytes);
      if constexpr (kF8QTerms == 2) {
        // Q's two terms are consecutive 8-row groups: N = 64 (the casts: the branch not taken still compiles)
        wgmma_ss64(*reinterpret_cast<float(*)[32]>(s_acc), a, q, ks > 0);
      } else {
        wgmma_ss(*reinterpret_cast<float(*)[16]>(s_acc), a, q, ks > 0);
      }
    }
    wg_commit();
    cp_async_commit();
    if (tid < kWgTokens) s_slot[(t & 1) * kWgTokens + tid] = next_slot;  // tile t's entry: its copies are issued
    wg_wait<0>();
    wg_keep(s_acc);

    // Scores in the exp2 domain, masked. s[4j + 2h + e]: token 16wq + gq + 8h, row n = 8j + 2cq + e.
    float s[16];
    const int pos_base = (tile0 + t) * kWgTokens + wq * 16 + gq;
    const bool needs_mask = (tile0 + t) * kWgTokens + kWgTokens > min(seq_end, prefix_len);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int n = 8 * j + 2 * cq + e;
        const float2 sc = s_scale[wrow0 + n];
        const uint64_t mask = needs_mask ? s_mask[wrow0 + n] : 0ull;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 4 * j + 2 * h + e;
          float v = kF8QTerms == 2 ? (s_acc[i] + s_acc[i + 16] * sc.x) * sc.y : s_acc[i] * sc.y;
          if (needs_mask) {
            const int pos = pos_base + 8 * h;
            bool ok = pos < seq_end;
            if (ok && pos >= prefix_len) ok = (mask >> (pos - prefix_len)) & 1ull;
            v = ok ? v : -INFINITY;
          }
          s[i] = v;
        }
      }
    }
    // Row maxima over the warp's 16 tokens (lanes of one cq), then over the warpgroup's 4 warps.
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = fmaxf(s[4 * j + e], s[4 * j + 2 + e]);
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
    // P = exp2(S - shift) x kF8PScale in e4m3, written as P^T's B operand: row n, k position of its token.
    {
      uint32_t half[4][2];  // per row slot: this thread's two tokens (gq, gq + 8) as 2 bytes
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float sh = m[j][e] == -INFINITY ? 0.f : m[j][e];
          const float p0 = exp2f(s[4 * j + e] - sh), p1 = exp2f(s[4 * j + 2 + e] - sh);
          l[j][e] += p0 + p1;
          uint16_t two;
          asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(two) : "f"(p1 * kF8PScale), "f"(p0 * kF8PScale));
          half[j][e] = two;  // byte 0: token gq, byte 1: token gq + 8
        }
      // Lanes gq and gq ^ 1 hold the 4 k positions 4(gq/2) .. +3 of each row: bytes [even.gq, odd.gq, even.gq+8,
      // odd.gq+8]. The even lane writes the row of e = 0, the odd lane that of e = 1, one word each.
      const bool even = (gq & 1) == 0;
      unsigned char* pw = smem + kWgPOff + wg * kWgPBytes;
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
    // O^T += V^T . P^T: m-block mb = V columns 64mb.., warp wq's 16 of them = chunk 4mb + wq of the token rows.
    {
      // ldmatrix.x4.trans lane address: token 32ks + lane of chunk c.
      const uint32_t v_lane = tile + wg_core(lane, 0);
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) {
        uint32_t a[2][4];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) wg_v_fragment(a[ks], v_lane, ks, 4 * mb + wq);
        wg_keep(o[mb]);  // its rescale above, before the fence
        wg_fence();
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) wgmma_rs(o[mb], a[ks], wg_desc(p_base + ks * 256, 128, kWgPGroupBytes));
        wg_commit();
      }
      // Before the next tile: its rescale reads O, its softmax rewrites P's buffer, and P.V's A registers stay pinned
      // until their wgmma completes (leaving this wait to the next QK's kept 64 of them live: the build spilled).
      wg_wait<0>();
#pragma unroll
      for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
    }
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();
  cp_async_wait<0>();

  // Row sums over the warp's lanes of one cq, then the warpgroup's warps.
  __syncthreads();  // every warp is done with red
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

// Quantize Q, then the wgmma split kernel as its programmatic dependent, then the combine (as the mma.sync fp8 path).
template <class Probe>
inline cudaError_t launch_split_and_combine_fp8_wgmma(const Fp8Params& f, cudaStream_t stream) {
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8_wgmma<Probe>, kWgThreads,
                                                   kWgSmemBytes);
}

}  // namespace verify_attn
