// The rows-own wgmma fp8 kernel with V transposed by the producer (issue 28, sm_90a; lab build, kernel/build.py
// "fp8wgvt"): verify_attention_fp8_wgmma_rows.cuh's QK, softmax and numerics, FA3's fp8 pipeline around them.
//
// Why: in fp8wgws and fp8wgr each math warpgroup runs QK, its wait, the softmax and P.V in series every tile, and the
// next QK cannot go in under the softmax: P.V's A operand (V^T, which e4m3 wgmma takes K-major only, so ldmatrix.trans
// and byte permutes build it in registers) holds 64 registers until P.V completes, and with O's 128 and S's 32 ptxas
// serialised every wgmma (C7512). Here, as FA3 does for fp8 V:
// - The producer warpgroup transposes each tile's V (its first 512 columns) into a V^T buffer in shared memory, in the
//   same byte order the math warps' fragments had (ldmatrix.trans, 4 byte permutes, 4 conflict-free 4-B stores a
//   32-token x 16-column unit), so P.V is wgmma from shared memory on both sides (m64n32k32 ss) and the epilogue and P's
//   k order are unchanged.
// - Barriers: full_k (a tile's copies landed: QK and the transpose may read it), full_v (its V^T is written: P.V may
//   read it), empty (a ring slot free again: the math warps' QK and the producer's transpose are done with it, 12 warps
//   arrive), vt_empty (a V^T buffer free: P.V of the tile that used it completed, 8 math warps arrive). A ring of 2
//   tiles and 2 V^T buffers fill shared memory (with Q's 72 KB).
// - The math warpgroups pipeline: tile t + 1's QK is issued as soon as tile t's scores have left the accumulator, so it
//   runs under tile t's softmax; tile t's P.V is issued and not waited for until after tile t + 1's barrier, so it runs
//   under tile t + 1's scores and softmax. A warp holds O (128), S (32) and the scores (16) at most.
// - P then needs 3 buffers: a warp writes tile t's P after the barrier of tile t - 1, by which every warp has waited for
//   QK of t - 1 and so (in issue order) for P.V of t - 3, not of t - 2.
// - setmaxnreg: 232 registers a math thread, 40 a producer thread (the transpose's fragments).
#pragma once

#include "verify_attention_fp8_wgmma_rows.cuh"

namespace verify_attn {

constexpr int kVtStages = 2;                            // ring slots
constexpr int kVtBuffers = 2;                           // V^T buffers
constexpr int kVtPBuffers = 3;                          // P buffers a warpgroup
constexpr int kVtGroupBytes = kWgTokens / 16 * 128;     // 8 V columns x 64 tokens: one 8-row group of V^T
constexpr int kVtBytes = kVDim / 8 * kVtGroupBytes;     // 32,768 B: a tile's V^T
constexpr int kVtMathRegs = 232;
constexpr int kVtProducerRegs = 40;
static_assert(kVtMathRegs * kWsMathThreads + kVtProducerRegs * 128 <= 65536, "setmaxnreg budget over the register file");

// Shared memory, in order: the ring, Q (as fp8wgr's), V^T (kVtBuffers), P (2 warpgroups x kVtPBuffers), each row's
// rescale (2 x 2 parities x 32), row sums and shifts (2 x 32 float2), ancestor masks, row scales, barriers (full_k,
// empty, full_v, vt_empty: 2 each; Q's).
constexpr int kVtQOff = kVtStages * kWgTileBytes;
constexpr int kVtVtOff = kVtQOff + 2 * kF8QTerms * kWgQTermBytes;
constexpr int kVtPOff = kVtVtOff + kVtBuffers * kVtBytes;
constexpr int kVtAlphaOff = kVtPOff + 2 * kVtPBuffers * kWgPBytes;
constexpr int kVtSumOff = kVtAlphaOff + 2 * 2 * kWgRows * 4;
constexpr int kVtMaskOff = kVtSumOff + 2 * kWgRows * 8;
constexpr int kVtScaleOff = kVtMaskOff + kRowsPerBlock * 8;
constexpr int kVtBarOff = kVtScaleOff + kRowsPerBlock * 8;
constexpr int kVtSmemBytes = kVtBarOff + (2 * kVtStages + 2 * kVtBuffers + 1) * 8;
static_assert(kVtSmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");

// The producer's transpose of one tile's V (ring slot at `tile`) into V^T at `vt`: 64 units of 32 tokens x 16 columns
// (chunk ch, half ks), 16 a producer warp. A unit is one ldmatrix.x4.trans (b16: lane gq, cq gets tokens 2cq, 2cq + 1
// of each 8-token matrix at columns 2gq, 2gq + 1) and the math kernels' byte permutes: word h + 2i holds column
// 16ch + 2gq + h, tokens 32ks + 16i + {2cq, 2cq + 1, 8 + 2cq, 9 + 2cq}. It goes to V^T row 16ch + 8h + gq (wgmma's M:
// the rows kernels' column order), 16-token chunk 2ks + i, bytes 4cq .. 4cq + 3 (P's k order).
__device__ __forceinline__ void vt_transpose(uint32_t tile, uint32_t vt, int pw, int lane) {
  const int gq = lane >> 2, cq = lane & 3;
  const uint32_t src_lane = tile + wg_core(lane, 0);
  const uint32_t dst_lane = vt + gq * 16 + 4 * cq;
#pragma unroll 4
  for (int u = 0; u < 16; ++u) {
    const int ch = 8 * pw + (u >> 1), ks = u & 1;
    uint32_t r[4];
    ldmatrix_x4_trans(r, src_lane + ks * 4 * kWgGroupBytes + ch * 128);
    const uint32_t w[4] = {__byte_perm(r[0], r[1], 0x6420), __byte_perm(r[0], r[1], 0x7531),
                           __byte_perm(r[2], r[3], 0x6420), __byte_perm(r[2], r[3], 0x7531)};
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t addr = dst_lane + (2 * ch + h) * kVtGroupBytes + (2 * ks + i) * 128;
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(w[h + 2 * i]) : "memory");
      }
  }
}

template <class Probe>
__global__ void __launch_bounds__(kWsThreads, 1) verify_attn_split_kernel_fp8_wgmma_vt(const Fp8Params f) {
  const Params& p = f.p;
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t base = smem_addr(smem);
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kVtMaskOff);  // [64]
  float2* s_scale = reinterpret_cast<float2*>(smem + kVtScaleOff);    // [64]: (s_lo / s_hi, s_hi * scale)
  const uint32_t full_k = base + kVtBarOff, empty = full_k + kVtStages * 8, full_v = empty + kVtStages * 8,
                 vt_empty = full_v + kVtBuffers * 8, q_full = vt_empty + kVtBuffers * 8;

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
    for (int s = 0; s < kVtStages; ++s) {
      v30::mbar_init(full_k + 8 * s, 128);
      v30::mbar_init(empty + 8 * s, kWsThreads / 32);  // 8 math warps (QK done) and 4 producer warps (transpose done)
    }
    for (int v = 0; v < kVtBuffers; ++v) {
      v30::mbar_init(full_v + 8 * v, 128);
      v30::mbar_init(vt_empty + 8 * v, kWsMathThreads / 32);
    }
    v30::mbar_init(q_full, 128);
  }
  if (tid < kRowsPerBlock) {
    const int r = row0 + tid;
    s_mask[tid] = r < rows ? p.tree_mask[b * p.nodes + r / p.heads] : 0ull;
  }
  __syncthreads();

  if (warp >= kWsMathThreads / 32) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kVtProducerRegs));
    const int pt = tid - kWsMathThreads, pw = warp - kWsMathThreads / 32;
    const auto copy_tile = [&](int t) {
      const int s = t % kVtStages;
      if (t >= kVtStages) v30::mbar_wait(empty + 8 * s, ((t / kVtStages) - 1) & 1);
      ws_issue_tile(p, base + s * kWgTileBytes, b, prefix_start, prefix_len, seq_end, (tile0 + t) * kWgTokens, pw, lane);
      v30::cp_async_arrive_noinc(full_k + 8 * s);
    };
    if (ntiles > 0) {
      copy_tile(0);
      pdl_wait_primary();
      // Q as fp8wgr's A: each math warpgroup's 32 rows x 2 terms as 64 rows, 8-row group 2 (r / 8) + term.
      const unsigned char* qb =
          after_wait(static_cast<const unsigned char*>(p.q)) + static_cast<int64_t>(b) * rows * kF8QRowBytes;
#pragma unroll 6
      for (int i = 0; i < 18 * kF8QTerms; ++i) {
        const int idx = pt + i * 128;
        const int r8 = idx & 7, c = (idx >> 3) % kWgCoreK, rest = (idx >> 3) / kWgCoreK;
        const int grp = rest % 8, term = rest / 8;
        const int r = grp * 8 + r8;
        const int w = r / kWgRows, wr = r % kWgRows;
        const int src_row = min(row0 + r, rows - 1);
        const unsigned char* src = qb + static_cast<int64_t>(src_row) * kF8QRowBytes + term * kHeadDim + c * 16;
        cp_async_16(base + kVtQOff + w * kF8QTerms * kWgQTermBytes + wg_core(16 * (wr >> 3) + 8 * term + (wr & 7), c),
                    src, row0 + r < rows ? 16 : 0);
      }
      v30::cp_async_arrive_noinc(q_full);
    }
    for (int t = 0; t < ntiles; ++t) {
      if (t + 1 < ntiles) copy_tile(t + 1);
      const int s = t % kVtStages, v = t % kVtBuffers;
      v30::mbar_wait(full_k + 8 * s, (t / kVtStages) & 1);  // every producer thread's copies of tile t
      if (t >= kVtBuffers) v30::mbar_wait(vt_empty + 8 * v, ((t / kVtBuffers) - 1) & 1);
      vt_transpose(base + s * kWgTileBytes, base + kVtVtOff + v * kVtBytes, pw, lane);
      fence_proxy_async();  // V^T's writes, then P.V's reads (the async proxy)
      v30::mbar_arrive(full_v + 8 * v);
      __syncwarp();
      if (lane == 0) v30::mbar_arrive(empty + 8 * s);
    }
    pdl_launch_dependents();
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kVtMathRegs));
  const int wg = warp >> 2, wq = warp & 3;
  const int gq = lane >> 2, cq = lane & 3;
  const int wrow0 = wg * kWgRows;
  const int own = 8 * wq + gq;  // the row this thread scores, within its warpgroup
  float* alpha_buf = reinterpret_cast<float*>(smem + kVtAlphaOff) + wg * 2 * kWgRows;  // [2 parities][32 rows]
  float2* sum_buf = reinterpret_cast<float2*>(smem + kVtSumOff) + wg * kWgRows;         // [32 rows]: (sum, shift)

  pdl_wait_primary();
  if (wq == 0) {
    const int r = row0 + wrow0 + lane;
    const float2 sc = r < rows ? *reinterpret_cast<const float2*>(f.q_scales + 2 * (static_cast<int64_t>(b) * rows + r))
                               : make_float2(1.f, 1.f);
    s_scale[wrow0 + lane] = make_float2(__fdiv_rn(sc.y, sc.x), sc.x * p.scale_log2);  // exact: powers of two
  }
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
  const uint64_t q_desc = wg_desc(base + kVtQOff + wg0 * kF8QTerms * kWgQTermBytes, 128, kWgGroupBytes);
  const uint64_t p_desc = wg_desc(base + kVtPOff + wg0 * kVtPBuffers * kWgPBytes, 128, kWgPGroupBytes);
  const uint64_t vt_desc = wg_desc(base + kVtVtOff, 128, kVtGroupBytes);
  unsigned char* p_wg = smem + kVtPOff + wg * kVtPBuffers * kWgPBytes;
  // QK of tile t: S = Q . K^T, 18 k-steps of 32 B, once its copies have landed.
  const auto issue_qk = [&](int t) {
    const int s = t % kVtStages;
    v30::mbar_wait(full_k + 8 * s, (t / kVtStages) & 1);
    fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
    const uint64_t k_desc = wg_desc(base + s * kWgTileBytes, 128, kWgGroupBytes);
    // Q's descriptor anew in each of the two copies of this code (before and in the loop): shared, the 18 steps were
    // kept in vector registers across the loop and moved back to uniform ones (R2UR) before each wgmma.
    uint64_t qd = q_desc;
    asm volatile("" : "+l"(qd));
    wg_keep(s_acc);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 32; ++ks)
      wgmma_ss64(s_acc, wg_desc_step(qd, ks * 256), wg_desc_step(k_desc, ks * 256), ks > 0);
    wg_commit();
  };
  // Once QK of tile t has completed: release its ring slot, score it, move the lazy shift, write P (buffer t % 3) and
  // each row's rescale (buffer t % 2), and meet the warpgroup at the tile's one barrier. Returns whether any of the
  // warpgroup's rows moved.
  const auto softmax = [&](int t) {
    wg_keep(s_acc);
    __syncwarp();
    if (lane == 0) v30::mbar_arrive(empty + 8 * (t % kVtStages));  // QK is done with the slot (the transpose may not be)
    float s_v[16];  // s_v[2k + e]: token 8k + 2cq + e of row `own`, exp2 domain, masked
    const int pos_base = (tile0 + t) * kWgTokens + 2 * cq;
    const bool needs_mask = (tile0 + t) * kWgTokens + kWgTokens > min(seq_end, prefix_len);
    const auto scores = [&](auto masked_tile) {
      constexpr bool masked = decltype(masked_tile)::value;
#pragma unroll
      for (int k = 0; k < 8; ++k)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x = (s_acc[4 * k + e] + s_acc[4 * k + 2 + e] * sc.x) * sc.y;
          if (masked) {
            const int pos = pos_base + 8 * k + e;
            bool ok = pos < seq_end;
            if (ok && pos >= prefix_len) ok = (own_mask >> (pos - prefix_len)) & 1ull;
            x = ok ? x : -INFINITY;
          }
          s_v[2 * k + e] = x;
        }
    };
    if (needs_mask) {
      scores(std::true_type{});
    } else {
      scores(std::false_type{});
    }
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
    unsigned char* pw = p_wg + (t % kVtPBuffers) * kWgPBytes + wq * kWgPGroupBytes + gq * 16 + 4 * cq;
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
    if (cq == 0) alpha_buf[(t & 1) * kWgRows + own] = alpha;
    fence_proxy_async();  // P's writes, then P.V's reads (the async proxy)
    return wg_bar_or(1 + wg, move);
  };
  // O = O x (tile t's rescale, where a row moved), then O^T += V^T . P^T of tile t, both from shared memory, once the
  // producer has written its V^T.
  const auto issue_pv = [&](int t, bool any_move) {
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
    if (any_move) {
      const float* alpha_t = alpha_buf + (t & 1) * kWgRows;
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
    const int v = t % kVtBuffers;
    v30::mbar_wait(full_v + 8 * v, (t / kVtBuffers) & 1);
    const uint64_t p_t = wg_desc_step(p_desc, (t % kVtPBuffers) * kWgPBytes);
    const uint64_t vt_t = wg_desc_step(vt_desc, v * kVtBytes);
#pragma unroll
    for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
    wg_fence();
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
      for (int ks = 0; ks < 2; ++ks)
        wgmma_ss(o[mb], wg_desc_step(vt_t, mb * 8 * kVtGroupBytes + ks * 256), wg_desc_step(p_t, ks * 256), 1);
    wg_commit();
  };
  // FA3's intra-warpgroup overlap: tile t's QK and tile t - 1's P.V go in together, tile t's softmax runs under that
  // P.V, and each iteration waits for both, so that no wgmma is in flight across the loop's back edge (with QK of t + 1
  // issued under tile t's softmax instead, in flight across it, ptxas serialised every wgmma: C7514).
  if (ntiles > 0) {
    v30::mbar_wait(q_full, 0);
    issue_qk(0);
    wg_wait<0>();
    Probe::split(kFirstTileLanded, ntiles);
    bool any_move = softmax(0);
    for (int t = 1; t < ntiles; ++t) {
      issue_qk(t);
      issue_pv(t - 1, any_move);
      wg_wait<1>();  // QK of t (P.V of t - 1 runs on)
      any_move = softmax(t);
      wg_wait<0>();  // P.V of t - 1: its V^T buffer is free
      __syncwarp();
      if (lane == 0) v30::mbar_arrive(vt_empty + 8 * ((t - 1) % kVtBuffers));
    }
    issue_pv(ntiles - 1, any_move);
  }
  wg_wait<0>();
#pragma unroll
  for (int mb = 0; mb < 8; ++mb) wg_keep(o[mb]);
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();

  // The row's sum over its 4 lanes; then each thread takes the 8 rows its O^T columns hold.
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (cq == 0) sum_buf[own] = make_float2(l, m);
  wg_bar(1 + wg);
  const int64_t base_row = (static_cast<int64_t>(b) * p.num_splits + split) * rows;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int n = 8 * j + 2 * cq + e, r = row0 + wrow0 + n;
      const float2 sm = sum_buf[n];
      const float inv = sm.x > 0.f ? f.out_scale / sm.x : 0.f;
      const float lse = sm.x > 0.f ? sm.y + __log2f(sm.x) : -INFINITY;
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
  Probe::split(kBlockExit, ntiles);
}

template <class Probe>
inline cudaError_t launch_split_and_combine_fp8_wgmma_vt(const Fp8Params& f, cudaStream_t stream) {
  return launch_quantized_split_and_combine<Probe>(f, stream, verify_attn_split_kernel_fp8_wgmma_vt<Probe>, kWsThreads,
                                                   kVtSmemBytes);
}

}  // namespace verify_attn
