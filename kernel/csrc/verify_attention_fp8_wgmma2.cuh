// The wgmma fp8 kernel, FlashMLA's split of the block (issue 28, sm_90a; a lab build, kernel/build.py "fp8wg2"):
// design q2p as in verify_attention_fp8_wgmma.cuh (the same operands, transposes, P layout and lazy shift), with the
// producer warpgroup and mbarrier ring of verify_attention_fp8_wgmma_ws.cuh, but the two math warpgroups no longer
// split the block's 64 rows. Each holds all 64 rows and half of O's 512 columns, and they take the tiles in turn:
// - Tile u is warpgroup u % 2's to score: S^T = K . Q^T as one m64n128k32 a k-step (Q's two terms of all 64 rows
//   stacked as 128 B rows: the K tile read once a tile, not once a warpgroup), the row maxima across its 4 warps, the
//   new shift m_u from the previous tile's (published by the other warpgroup), P_u in e4m3 written as P^T's B operand
//   with m_u and the rescale alpha_u of every row; then it arrives on ready[u % 2].
// - Both warpgroups add P_u . V_u into their half of O, in tile order, each after rescaling it by alpha_u: O^T +=
//   V^T . P^T as 4 m-blocks x 2 k-steps of m64n64k32 (V^T from registers, ldmatrix.trans and byte permutes), and
//   release the tile (empty) and P's buffer (free[u % 2]).
// - A warpgroup's turn is: QK(u); wait for ready[u - 1] (the chain of shifts: tile u's needs tile u - 1's); softmax;
//   publish; P.V of tile u - 1 (the other's) and of tile u. The other warpgroup's QK runs under this one's softmax,
//   and only the softmaxes are in a chain.
// - The row sums: each warpgroup keeps those of its own tiles' P, rescaled by every alpha in order; the epilogue adds
//   the two. Each writes its half of the columns.
// Why: fp8wg's warpgroups each read the whole K tile for QK and the whole V tile for P.V for 32 rows; here a tile's K
// is read once for 64 rows, each warpgroup reads half of V, and the GEMMs are twice as wide (N = 128 and 64).
#pragma once

#include "verify_attention_fp8_wgmma_ws.cuh"

namespace verify_attn {

constexpr int kW2Stages = 3;                                    // 4 x 36,864 B does not fit beside Q
constexpr int kW2QBytes = 2 * kF8QTerms * kWgQTermBytes;        // 64 rows x 2 terms: 16 groups of 8 rows
constexpr int kW2PBytes = kRowsPerBlock / 8 * kWgPGroupBytes;   // P^T of 64 rows x 64 tokens: 4,096 B
constexpr int kW2RedBytes = kRowsPerBlock * 4 * 4;              // [64 rows][4 warps] fp32
static_assert(kF8QTerms == 2, "fp8wg2 stacks Q's two terms as N = 128");
// Shared memory, in order: the ring, Q, P (2 buffers), the row-max exchange (2 warpgroups x 2 parities), the shift
// and rescale of each row (2 buffers each), ancestor masks, row scales, barriers (full[3], empty[3], Q's, ready[2],
// free[2]).
constexpr int kW2QOff = kW2Stages * kWgTileBytes;
constexpr int kW2POff = kW2QOff + kW2QBytes;
constexpr int kW2RedOff = kW2POff + 2 * kW2PBytes;
constexpr int kW2MOff = kW2RedOff + 4 * kW2RedBytes;
constexpr int kW2AlphaOff = kW2MOff + 2 * kRowsPerBlock * 4;
constexpr int kW2MaskOff = kW2AlphaOff + 2 * kRowsPerBlock * 4;
constexpr int kW2ScaleOff = kW2MaskOff + kRowsPerBlock * 8;
constexpr int kW2BarOff = kW2ScaleOff + kRowsPerBlock * 8;
constexpr int kW2SmemBytes = kW2BarOff + (2 * kW2Stages + 5) * 8;
static_assert(kW2SmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");
constexpr int kW2EpilogueBarrier = 5;  // both math warpgroups (1 and 2 are each one's own)

// D[64 x 128] (+)= A[64 x 32] . B[128 x 32]^T, e4m3, both from shared memory; acc 0 starts D from 0.
__device__ __forceinline__ void wgmma_ss128(float (&d)[64], uint64_t a, uint64_t b, int acc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
      "%64, %65, p, 1, 1;\n}\n"
      :
        "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(acc));
}

// D[64 x 64] += A[64 x 32] . B[64 x 32]^T, e4m3, A from registers (the m16n8k32 A layout, a warp's 16 rows).
__device__ __forceinline__ void wgmma_rs64(float (&d)[32], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
      "{%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"
      :
        "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// The first k-step of wgmma_ss128: D = A . B^T, D written only (scale-d 0), so no accumulator lives across tiles.
__device__ __forceinline__ void wgmma_ss128_first(float (&d)[64], uint64_t a, uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 0, 0;\n"  // scale-d is a predicate: false
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
      "%64, %65, p, 1, 1;\n}\n"
      :
        "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
        "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
        "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
        "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
        "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
        "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
        "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
        "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63])
      : "l"(a), "l"(b));
}

// The block's Q for fp8wg2, by the producer's 128 threads (36 copies each): QK's B operand, N = 128, 8-row group
// g = 8 term + row / 8 (Q hi of rows 0-63, then Q lo), K-major core matrices as in fp8wg.
__device__ __forceinline__ void w2_issue_q(const unsigned char* qb, uint32_t q_base, int rows, int row0, int pt) {
#pragma unroll 6
  for (int i = 0; i < 2 * kWgCoreK * kRowsPerBlock / 8 * 8 / 128; ++i) {
    const int idx = pt + i * 128;  // (row within its group, chunk, group), the row fastest
    const int r8 = idx & 7, c = (idx >> 3) % kWgCoreK, g = (idx >> 3) / kWgCoreK;
    const int term = g >> 3, r = (g & 7) * 8 + r8;
    // A row past the last is zero-filled (0 source bytes); its address stays the last row's, inside the buffer.
    const int src_row = min(row0 + r, rows - 1);
    cp_async_16(q_base + g * kWgGroupBytes + c * 128 + r8 * 16,
                qb + static_cast<int64_t>(src_row) * kF8QRowBytes + term * kHeadDim + c * 16, row0 + r < rows ? 16 : 0);
  }
}

template <class Probe>
__global__ void __launch_bounds__(kWsThreads, 1) verify_attn_split_kernel_fp8_wgmma2(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = smem_addr(smem);
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kW2MaskOff);  // [64]
  float2* s_scale = reinterpret_cast<float2*>(smem + kW2ScaleOff);    // [64]: (s_lo / s_hi, s_hi * scale)
  float* s_m = reinterpret_cast<float*>(smem + kW2MOff);              // [2][64]: tile u's shift, by u % 2
  float* s_alpha = reinterpret_cast<float*>(smem + kW2AlphaOff);      // [2][64]: its rescale of what came before
  const uint32_t full = base + kW2BarOff, empty = full + 8 * kW2Stages, q_full = empty + 8 * kW2Stages;
  const uint32_t ready = q_full + 8, freed = ready + 16;  // [2] each, by tile parity

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  const int prefix_start = p.prefix_indptr[b];
  const int prefix_len = p.prefix_indptr[b + 1] - prefix_start;
  const int total = prefix_len + p.nodes;
  const int total_tiles = (total + kWgTokens - 1) / kWgTokens;
  const int per_split = (total_tiles + p.num_splits - 1) / p.num_splits;
  const int tile0 = split * per_split;
  const int ntiles = max(0, min(total_tiles, tile0 + per_split) - tile0);
  const int seq_end = min(total, (tile0 + ntiles) * kWgTokens);

  if (tid == 0) {
    for (int s = 0; s < kW2Stages; ++s) {
      v30::mbar_init(full + 8 * s, 128);
      v30::mbar_init(empty + 8 * s, kWsMathThreads / 32);
    }
    v30::mbar_init(q_full, 128);
    for (int i = 0; i < 2; ++i) {
      v30::mbar_init(ready + 8 * i, 128);                 // the scoring warpgroup's threads
      v30::mbar_init(freed + 8 * i, kWsMathThreads / 32);  // every math warp, once its P.V of the tile is done
    }
  }
  if (tid < kRowsPerBlock) {
    const int r = row0 + tid;
    s_mask[tid] = r < rows ? p.tree_mask[b * p.nodes + r / p.heads] : 0ull;
  }
  __syncthreads();

  if (warp >= kWsMathThreads / 32) {
    // The producer, fp8wgws's (Q in fp8wg2's order).
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kWsProducerRegs));
    const auto issue_q = [&](const unsigned char* qb) { w2_issue_q(qb, base + kW2QOff, rows, row0, tid - kWsMathThreads); };
    ws_produce<kW2Stages>(p, base, full, empty, q_full, b, rows, prefix_start, prefix_len, seq_end, tile0, ntiles,
                          warp - kWsMathThreads / 32, lane, issue_q);
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kWsMathRegs));
  const int w = warp >> 2, wq = warp & 3;  // math warpgroup (its tiles: u % 2 == w; its columns: 256w..), warp in it
  const int gq = lane >> 2, cq = lane & 3;
  // This thread's rows, in QK's S^T and in P.V's O^T alike: n = 8j + 2cq + e, j 0..7, e 0..1.
  pdl_wait_primary();
  if (wq == 0) {
    const int r = row0 + 32 * w + lane;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[32 * w + lane] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
  asm volatile("bar.sync %0, 256;\n" ::"n"(kW2EpilogueBarrier) : "memory");  // both warpgroups read all 64 rows

  float o[4][32];  // O^T of columns 64 (4w + mb) .. + 63: o[mb][4j + 2h + e], column 16wq + 2gq + h, row 8j + 2cq + e
#pragma unroll
  for (int mb = 0; mb < 4; ++mb)
#pragma unroll
    for (int i = 0; i < 32; ++i) o[mb][i] = 0.f;
  // The row sums of this warpgroup's own tiles' P over the warp's tokens, reduced and scattered so that this thread
  // keeps those of rows 8gq + 2cq + e (2 registers, not 16: QK's accumulators leave no more).
  float lr[2] = {0.f, 0.f};
  if (ntiles > 0) v30::mbar_wait(q_full, 0);
  const uint32_t q_base = base + kW2QOff;

  // P.V of tile t into this warpgroup's columns, after its rescale; then the tile and P's buffer are released.
  const auto pv = [&](int t, bool scale_l) {
    v30::mbar_wait(ready + 8 * (t & 1), (t >> 1) & 1);
    const float* al = s_alpha + (t & 1) * kRowsPerBlock;
    float a8[8][2];
    bool moved = false;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        a8[j][e] = al[8 * j + 2 * cq + e];
        moved |= a8[j][e] != 1.f;
      }
    if (scale_l) lr[0] *= al[8 * gq + 2 * cq], lr[1] *= al[8 * gq + 2 * cq + 1];
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int mb = 0; mb < 4; ++mb)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) o[mb][4 * j + 2 * h + e] *= a8[j][e];
    }
    const int s = t % kW2Stages;
    const uint32_t v_lane = base + s * kWgTileBytes + wg_core(lane, 0);
    const uint32_t p_base = base + kW2POff + (t & 1) * kW2PBytes;
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) {
      uint32_t a[2][4];
#pragma unroll
      for (int ks = 0; ks < 2; ++ks) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, v_lane + ks * 4 * kWgGroupBytes + (4 * (4 * w + mb) + wq) * 128);
        a[ks][0] = __byte_perm(r[0], r[1], 0x6420);
        a[ks][1] = __byte_perm(r[0], r[1], 0x7531);
        a[ks][2] = __byte_perm(r[2], r[3], 0x6420);
        a[ks][3] = __byte_perm(r[2], r[3], 0x7531);
        wg_keep(a[ks]);
      }
      wg_keep(o[mb]);
      wg_fence();
#pragma unroll
      for (int ks = 0; ks < 2; ++ks) wgmma_rs64(o[mb], a[ks], wg_desc(p_base + ks * 256, 128, kWgPGroupBytes));
      wg_commit();
    }
    wg_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 4; ++mb) wg_keep(o[mb]);
    __syncwarp();
    if (lane == 0) {
      v30::mbar_arrive(empty + 8 * s);
      v30::mbar_arrive(freed + 8 * (t & 1));
    }
  };

  for (int u = w; u < ntiles; u += 2) {
    const int s = u % kW2Stages;
    v30::mbar_wait(full + 8 * s, (u / kW2Stages) & 1);
    fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
    if (u == 0) Probe::split(kFirstTileLanded, ntiles);
    const uint32_t tile = base + s * kWgTileBytes;

    // QK: S^T = K . Q^T, 18 k-steps of m64n128k32 (B: Q hi then Q lo of the 64 rows).
    float acc[64];
    wg_fence();
    wgmma_ss128_first(acc, wg_desc(tile, 128, kWgGroupBytes), wg_desc(q_base, 128, kWgGroupBytes));
#pragma unroll
    for (int ks = 1; ks < kHeadDim / 32; ++ks)
      wgmma_ss128(acc, wg_desc(tile + ks * 256, 128, kWgGroupBytes), wg_desc(q_base + ks * 256, 128, kWgGroupBytes), 1);
    wg_commit();

    // While it runs: the wait for the previous tile's shift (the other warpgroup's). Read after QK's wait, with its
    // rescale of this one's row sums (registers: QK's 64 accumulators are in flight until then).
    if (u >= 1) v30::mbar_wait(ready + 8 * ((u - 1) & 1), ((u - 1) >> 1) & 1);
    wg_wait<0>();
    wg_keep(acc);
    float m[8][2];
    if (u >= 1) {
      const float* mp = s_m + ((u - 1) & 1) * kRowsPerBlock;
      const float* ap = s_alpha + ((u - 1) & 1) * kRowsPerBlock;
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) m[j][e] = mp[8 * j + 2 * cq + e];
      lr[0] *= ap[8 * gq + 2 * cq], lr[1] *= ap[8 * gq + 2 * cq + 1];
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) m[j][0] = m[j][1] = -INFINITY;
    }

    // Scores in the exp2 domain, masked, into acc[0..31]: acc[4j + 2h + e] is token 16wq + gq + 8h, row 8j + 2cq + e.
    const int pos_base = (tile0 + u) * kWgTokens + wq * 16 + gq;
    const bool needs_mask = (tile0 + u) * kWgTokens + kWgTokens > min(seq_end, prefix_len);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int n = 8 * j + 2 * cq + e;
        const float2 sc = s_scale[n];
        const uint64_t mask = needs_mask ? s_mask[n] : 0ull;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 4 * j + 2 * h + e;
          float v = (acc[i] + acc[i + 32] * sc.x) * sc.y;
          if (needs_mask) {
            const int pos = pos_base + 8 * h;
            bool ok = pos < seq_end;
            if (ok && pos >= prefix_len) ok = (mask >> (pos - prefix_len)) & 1ull;
            v = ok ? v : -INFINITY;
          }
          acc[i] = v;
        }
      }
    // Row maxima over the warp's 16 tokens, then over the warpgroup's 4 warps (a buffer a parity of its turns).
    float* red = reinterpret_cast<float*>(smem + kW2RedOff + (2 * w + ((u >> 1) & 1)) * kW2RedBytes);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float v = fmaxf(acc[4 * j + e], acc[4 * j + 2 + e]);
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
        if (gq == 0) red[(8 * j + 2 * cq + e) * 4 + wq] = v;
      }
    wg_bar(1 + w);
    // P's buffer and the shift's slot of this parity: free once both warpgroups' P.V of tile u - 2 is done.
    if (u >= 2) v30::mbar_wait(freed + 8 * (u & 1), ((u >> 1) - 1) & 1);
    float* m_out = s_m + (u & 1) * kRowsPerBlock;
    float* a_out = s_alpha + (u & 1) * kRowsPerBlock;
    const bool writer = wq == 0 && gq == 0;  // 4 threads x 16 rows: each row once
    float a_mine[2] = {1.f, 1.f};            // the rescale of rows 8gq + 2cq + e, this thread's row sums
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int n = 8 * j + 2 * cq + e;
        const float4 r4 = *reinterpret_cast<const float4*>(red + n * 4);
        const float v = fmaxf(fmaxf(r4.x, r4.y), fmaxf(r4.z, r4.w));
        const bool move = v > m[j][e] + static_cast<float>(kF8LazyShift);
        const float alpha = move ? exp2f(m[j][e] - v) : 1.f;
        m[j][e] = move ? v : m[j][e];
        if (j == gq) a_mine[e] = alpha;
        if (writer) m_out[n] = m[j][e], a_out[n] = alpha;
      }
    lr[0] *= a_mine[0], lr[1] *= a_mine[1];
    // P = exp2(S - shift) x kF8PScale in e4m3, written as P^T's B operand (fp8wg's layout, 64 rows).
    {
      uint32_t half[8][2];
      float ps[8][2];  // row sums over this thread's two tokens
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float sh = m[j][e] == -INFINITY ? 0.f : m[j][e];
          const float p0 = exp2f(acc[4 * j + e] - sh), p1 = exp2f(acc[4 * j + 2 + e] - sh);
          ps[j][e] = p0 + p1;
          uint16_t two;
          asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(two) : "f"(p1 * kF8PScale), "f"(p0 * kF8PScale));
          half[j][e] = two;
        }
      // Reduce-scatter over the 8 lanes of one cq (gq's bits 2, 1, 0 pick j's): 14 shuffles, not 48.
      const bool b2 = gq & 4, b1 = gq & 2, b0 = gq & 1;
      float r4[4][2], r2[2][2];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          r4[j][e] = (b2 ? ps[j + 4][e] : ps[j][e]) + __shfl_xor_sync(0xffffffffu, b2 ? ps[j][e] : ps[j + 4][e], 16);
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          r2[j][e] = (b1 ? r4[j + 2][e] : r4[j][e]) + __shfl_xor_sync(0xffffffffu, b1 ? r4[j][e] : r4[j + 2][e], 8);
#pragma unroll
      for (int e = 0; e < 2; ++e)
        lr[e] += (b0 ? r2[1][e] : r2[0][e]) + __shfl_xor_sync(0xffffffffu, b0 ? r2[0][e] : r2[1][e], 4);
      const bool even = (gq & 1) == 0;
      unsigned char* pw = smem + kW2POff + (u & 1) * kW2PBytes;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const uint32_t got = __shfl_xor_sync(0xffffffffu, even ? half[j][1] : half[j][0], 4);
        const uint32_t lo16 = even ? half[j][0] : got, hi16 = even ? got : half[j][1];
        const uint32_t word = __byte_perm(lo16, hi16, 0x5140);
        const int n = 8 * j + 2 * cq + (even ? 0 : 1);
        *reinterpret_cast<uint32_t*>(pw + (n >> 3) * kWgPGroupBytes + wq * 128 + (n & 7) * 16 + 4 * (gq >> 1)) = word;
      }
    }
    fence_proxy_async();  // P's generic writes, then wgmma's reads
    v30::mbar_arrive(ready + 8 * (u & 1));
    if (u >= 1) pv(u - 1, false);  // its alpha is in l already (above)
    pv(u, false);                  // likewise
  }
  // The last tile, when it was the other warpgroup's: no turn of this one's follows to rescale l.
  if (ntiles > 0 && ((ntiles - 1) & 1) != w) pv(ntiles - 1, true);
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();

  // Row sums: this warpgroup's over its 4 warps, then both warpgroups' (each thread holds rows 8gq + 2cq + e).
  wg_bar(1 + w);  // each warp of this warpgroup past its last read of its exchange buffers
  float* red_l = reinterpret_cast<float*>(smem + kW2RedOff + 2 * w * kW2RedBytes);
  red_l[(8 * gq + 2 * cq) * 4 + wq] = lr[0];
  red_l[(8 * gq + 2 * cq + 1) * 4 + wq] = lr[1];
  asm volatile("bar.sync %0, 256;\n" ::"n"(kW2EpilogueBarrier) : "memory");
  const float* red0 = reinterpret_cast<const float*>(smem + kW2RedOff);
  const float* red1 = reinterpret_cast<const float*>(smem + kW2RedOff + 2 * kW2RedBytes);
  const float* m_last = s_m + ((ntiles - 1) & 1) * kRowsPerBlock;
  const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int n = 8 * j + 2 * cq + e, r = row0 + n;
      const float4 x0 = *reinterpret_cast<const float4*>(red0 + n * 4);
      const float4 x1 = *reinterpret_cast<const float4*>(red1 + n * 4);
      const float sum = ((x0.x + x0.y) + (x0.z + x0.w)) + ((x1.x + x1.y) + (x1.z + x1.w));
      const float mf = ntiles > 0 ? m_last[n] : -INFINITY;
      const float inv = sum > 0.f ? f.out_scale / sum : 0.f;
      const float lse = sum > 0.f ? mf + __log2f(sum) : -INFINITY;
      if (r < rows) {
        __nv_bfloat16* out = p.num_splits == 1 ? static_cast<__nv_bfloat16*>(p.out) + (static_cast<int64_t>(b) * rows + r) * kVDim
                                               : static_cast<__nv_bfloat16*>(p.part_o) + (base_row + r) * kVDim;
#pragma unroll
        for (int mb = 0; mb < 4; ++mb)
          *reinterpret_cast<uint32_t*>(out + 64 * (4 * w + mb) + 16 * wq + 2 * gq) =
              pack_bf16(o[mb][4 * j + e] * inv, o[mb][4 * j + 2 + e] * inv);
        if (w == 0 && wq == 0 && gq == 0) {
          if (p.num_splits > 1) {
            p.part_lse[base_row + r] = lse;
          } else if (p.lse != nullptr) {
            p.lse[static_cast<int64_t>(b) * rows + r] = lse * 0.6931471805599453f;
          }
        }
      }
    }
  Probe::split(kBlockExit, ntiles);
}

template <class Probe>
inline cudaError_t launch_split_and_combine_fp8_wgmma2(const Fp8Params& f, cudaStream_t stream) {
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8_wgmma2<Probe>, kWsThreads,
                                                   kW2SmemBytes);
}

}  // namespace verify_attn
