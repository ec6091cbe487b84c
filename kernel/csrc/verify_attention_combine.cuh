// The combine kernel of the verify attention: merges the bf16 partial outputs and log2-domain lse of the splits of
// each (request, row). Launched when num_splits > 1, as the split kernel's programmatic dependent (sm_90+), so it
// first waits for the split grid.
#pragma once

#include "verify_attention.h"
#include "verify_attention_probe.cuh"
#include "verify_attention_ptx.cuh"

namespace verify_attn {

constexpr int kCombineThreads = 256;  // 4 split groups x 64 float4 columns: one 256-column half per block

// Merge the splits of one (request, row, column half): max-shifted weights in the exp2 domain; empty splits
// (lse -inf) weigh 0; a row that saw nothing at all gets 0 and lse -inf. Four groups of threads walk
// interleaved splits with eight independent 16-B loads each in flight (a one-load-at-a-time walk is pure
// latency: 11-16 us at 44-66 splits in v3), then add their sums through shared memory. Each lse is read once,
// and the first 8 partial loads of each thread are issued before the weights are computed, so the block waits on
// one round trip to L2 before its math, not two (v20).
template <class Probe>
__global__ void __launch_bounds__(kCombineThreads) verify_attn_combine_kernel(const Params p) {
  pdl_wait_primary();
  // A programmatic dependent of this kernel (the next call's split kernel) may launch now: past the wait, so every
  // kernel before this one has finished (the promise kPdlPrefix relies on, Params::pdl).
  pdl_launch_dependents();
  Probe::combine(false);
  __shared__ float w[kMaxSplits];
  __shared__ float stats[2];
  __shared__ float4 part[3][64];
  const int row = blockIdx.x, half = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
  const int rows = p.nodes * p.heads, splits = p.num_splits;
  const int64_t lse_base = static_cast<int64_t>(b) * splits * rows + row;
  const int group = tid >> 6, c4 = tid & 63;
  const int64_t first = (static_cast<int64_t>(b) * splits * rows + row) * kVDim + half * 256 + c4 * 4;
  const int64_t stride = static_cast<int64_t>(rows) * kVDim;
  const __nv_bfloat16* src = static_cast<const __nv_bfloat16*>(p.part_o) + first;
  uint2 ahead[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int s = group + 4 * j;
    ahead[j] = s < splits ? __ldcs(reinterpret_cast<const uint2*>(src + s * stride)) : make_uint2(0u, 0u);
  }
  // The weights: each lse read once (warp 0: lane t holds splits t, t+32, t+64, t+96), max, exp2, sum.
  if (tid < 32) {
    float l[kMaxSplits / 32];
#pragma unroll
    for (int k = 0; k < kMaxSplits / 32; ++k) {
      const int s = tid + 32 * k;
      l[k] = s < splits ? p.part_lse[lse_base + static_cast<int64_t>(s) * rows] : -INFINITY;
    }
    float mx = l[0];
#pragma unroll
    for (int k = 1; k < kMaxSplits / 32; ++k) mx = fmaxf(mx, l[k]);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    const float shift = mx == -INFINITY ? 0.f : mx;
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kMaxSplits / 32; ++k) {
      const int s = tid + 32 * k;
      const float e = exp2f(l[k] - shift);  // 0 for an empty split or past the end (-inf)
      if (s < splits) w[s] = e;
      sum += e;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (tid == 0) {
      stats[0] = sum;
      stats[1] = sum > 0.f ? (shift + __log2f(sum)) * 0.6931471805599453f : -INFINITY;
    }
  }
  __syncthreads();
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int s0 = group; s0 < splits; s0 += 4 * 8) {
    float4 v[8];
    uint2 raw[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int s = s0 + 4 * j;
      if (s0 == group) raw[j] = ahead[j];
      else raw[j] = s < splits ? __ldcs(reinterpret_cast<const uint2*>(src + s * stride)) : make_uint2(0u, 0u);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[j].x));
      const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[j].y));
      v[j] = make_float4(lo.x, lo.y, hi.x, hi.y);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int s = s0 + 4 * j;
      const float ws = s < splits ? w[s] : 0.f;
      acc.x += ws * v[j].x;
      acc.y += ws * v[j].y;
      acc.z += ws * v[j].z;
      acc.w += ws * v[j].w;
    }
  }
  if (group > 0) part[group - 1][c4] = acc;
  __syncthreads();
  if (group != 0) return;
#pragma unroll
  for (int g = 0; g < 3; ++g) {
    acc.x += part[g][c4].x;
    acc.y += part[g][c4].y;
    acc.z += part[g][c4].z;
    acc.w += part[g][c4].w;
  }
  const float sum = stats[0];
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  __nv_bfloat16* ob =
      static_cast<__nv_bfloat16*>(p.out) + (static_cast<int64_t>(b) * rows + row) * kVDim + half * 256 + c4 * 4;
  *reinterpret_cast<uint2*>(ob) = make_uint2(pack_bf16(acc.x * inv, acc.y * inv), pack_bf16(acc.z * inv, acc.w * inv));
  if (p.lse != nullptr && half == 0 && c4 == 0) p.lse[static_cast<int64_t>(b) * rows + row] = stats[1];
  Probe::combine(true);
}

}  // namespace verify_attn
