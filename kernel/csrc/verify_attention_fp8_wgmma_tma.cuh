// fp8wgr's tile through the TMA (issue 28, sm_90a; lab build, kernel/build.py "fp8wgrt"; not yet run on a GPU).
//
// Why: without its copies fp8wgr's tile is 29% shorter, while a fourth ring stage and copies reading whole L2 sectors
// changed nothing (kernel/NOTES.md, "Where fp8wgr's tile goes"): the producer's 72 cp.async warp instructions a tile,
// 16 B a lane through the LSU beside the math's ldmatrix, are the suspect. Here the producer issues 5 TMA copies a
// token instead (two threads a token): the row's four 128-B latent pieces and its 64 rope bytes, each into its
// 128-B-swizzled K-block, all completing on the stage's full mbarrier (expect-tx); rows past the split's end are read
// at row -1, which the TMA fills with zeros. (Issued one lane at a time: UTMALDG takes uniform operands, so 320 issues
// a tile, 80 from each producer warp, which may cost more than they save: the timing decides.)
// - A stage's layout: 5 K-blocks of 64 tokens x 128 B (latent dims 128k .. 128k + 127, the rope's 64 in the fifth's
//   first half; token r's 16-B chunk j at r * 128 + ((j ^ (r & 7)) << 4)): 40,960 B. A TMA destination must be 128-B
//   aligned, so the rope is not packed at 64 B a token. The TMA swizzles by the destination's address bits (the CUDA
//   guide's offset rule), so a one-row box written at row r of a 1,024-B-aligned atom lands XORed by r & 7; the
//   kernel traps on a misaligned stage.
// - QK's B descriptors: 128-B swizzle, 1,024 B between 8-token groups, a k-step 32 B into its K-block's atom (as
//   CUTLASS's descriptor iterator steps K inside a swizzle atom). Q keeps its core-matrix layout, and gets a proxy
//   fence once before the first QK (its copies are cp.async).
// - P.V's ldmatrix.trans rows at the swizzled addresses (conflict-free: 8 tokens of one chunk column are 8 columns).
// - The tensor maps are encoded at each launch from the pool's address, with 2^30 rows (slot ids are validated before
//   the launch, as for the cp.async kernels, which trust them alike).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "verify_attention_fp8_wgmma_ws.cuh"

namespace verify_attn {

constexpr int kTmaKBlockBytes = kWgTokens * 128;     // 8,192: one 128-byte K-block of a stage's 64 tokens
constexpr int kTmaRopeOff = 4 * kTmaKBlockBytes;     // 32,768: the fifth K-block, the rope's
constexpr int kTmaStageBytes = 5 * kTmaKBlockBytes;  // 40,960
static_assert(kTmaStageBytes % 1024 == 0, "every stage starts on a 128-B swizzle atom");
constexpr int kTmaRows = 1 << 30;  // the tensor maps' rows: any slot id

struct Fp8TmaMaps {  // (CUtensorMap is 64-B aligned itself)
  CUtensorMap latent;  // the pool as [kTmaRows][576] bytes, box 128 x 1, 128-B swizzle
  CUtensorMap rope;    // the same, box 64 x 1, 128-B swizzle (into its own K-block's 128-B rows)
};

// Byte offset of (token r, 16-B chunk c of the latent, c < 32) in a stage.
__device__ __forceinline__ uint32_t tma_latent(int r, int c) {
  return static_cast<uint32_t>((c >> 3) * kTmaKBlockBytes + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

// A K-major 128-B-swizzled wgmma descriptor (layout 1 in bits 62-63), 1,024 B between 8-row groups; the leading
// offset is unused for swizzled K-major operands, 16 B (1) by convention (CUTLASS's mma_sm90_desc.hpp).
__device__ __forceinline__ uint64_t wg_desc_sw128(uint32_t addr) { return wg_desc(addr, 16, 1024) | (1ull << 62); }

// QK's B operand for k-step ks (32 B of K): bytes from the stage's start (its K-block, then 32 B a step in its atom).
__host__ __device__ constexpr uint32_t tma_k_offset(int ks) { return (ks >> 2) * kTmaKBlockBytes + (ks & 3) * 32; }
static_assert(tma_k_offset(16) == kTmaRopeOff && tma_k_offset(17) == kTmaRopeOff + 32, "the rope's k-steps");

// wg_v_fragment over the swizzled stage: tokens 32ks + lane, latent chunk `chunk`.
__device__ __forceinline__ void tma_v_fragment(uint32_t (&a)[4], uint32_t stage, int ks, int chunk, int lane) {
  wg_v_fragment_at(a, stage + tma_latent(32 * ks + lane, chunk));
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// The producer warpgroup's job with the TMA: producer threads pt and pt + 64 copy token pt of every tile (each loads
// its slot id a tile ahead), the first the latent's pieces 0-2, the second piece 3 and the rope, each arriving on the
// stage's full barrier (128 arrivals) with its bytes expected, so that the four producer warps (one a scheduler) share
// the copies' issue; all 128 copy Q with the first tile, as ws_produce.
template <int kStages, int kStageBytes, class IssueQ>
__device__ __forceinline__ void ws_produce_tma(const Params& p, const Fp8TmaMaps* maps, uint32_t base, uint32_t full,
                                               uint32_t empty, uint32_t q_full, int b, int rows, int prefix_start,
                                               int prefix_len, int seq_end, int tile0, int ntiles, int pt,
                                               IssueQ issue_q) {
  const int token = pt % kWgTokens;
  const bool first = pt < kWgTokens;  // pieces 0-2 of the latent (384 B); else piece 3 and the rope (192 B)
  int slot = ntiles > 0 ? slot_at(p, b, prefix_start, prefix_len, seq_end, tile0 * kWgTokens + token) : -1;
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kStages;
    const int next_pos = (tile0 + t + 1) * kWgTokens + token;
    const int next = t + 1 < ntiles ? slot_at(p, b, prefix_start, prefix_len, seq_end, next_pos) : -1;
    if (t >= kStages) v30::mbar_wait(empty + 8 * s, ((t / kStages) - 1) & 1);
    const uint32_t stage = base + s * kStageBytes + token * 128, bar = full + 8 * s;
    const int y = slot < 0 ? -1 : slot;  // row -1: out of the map, zeros
    if (first) {
      v30::mbar_arrive_expect_tx(bar, 3 * 128);
#pragma unroll
      for (int k = 0; k < 3; ++k) tma_load_2d(stage + k * kTmaKBlockBytes, &maps->latent, 128 * k, y, bar);
    } else {
      v30::mbar_arrive_expect_tx(bar, 128 + 64);
      tma_load_2d(stage + 3 * kTmaKBlockBytes, &maps->latent, 3 * 128, y, bar);
      tma_load_2d(stage + kTmaRopeOff, &maps->rope, 4 * 128, y, bar);
    }
    slot = next;
    if (t == 0) ws_issue_q_after_wait(p, b, rows, q_full, issue_q);
  }
  pdl_launch_dependents();
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // Q's copies; the TMA's complete on the barriers the math awaits
}

// The launch's tensor maps over the pool `kv` (host).
inline cudaError_t encode_kv_maps(const void* kv, Fp8TmaMaps& maps) {
  if (reinterpret_cast<uintptr_t>(kv) % 128 != 0) return cudaErrorInvalidValue;  // a swizzled map's base alignment
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (encode == nullptr) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess) return err;
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) return cudaErrorNotSupported;
    encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kF8RowBytes), static_cast<cuuint64_t>(kTmaRows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kF8RowBytes)};
  const cuuint32_t unit[2] = {1, 1};
  const cuuint32_t box_latent[2] = {128, 1}, box_rope[2] = {64, 1};
  void* base = const_cast<void*>(kv);
  CUresult r = encode(&maps.latent, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box_latent, unit,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return cudaErrorInvalidValue;
  r = encode(&maps.rope, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box_rope, unit,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace verify_attn
