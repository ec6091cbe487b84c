// The engine's KV store as a programmatic dependent (issue 27, "overlap the launch"): writes a step's tree rows into
// one layer's pool, launched while the kernel before it finishes. It waits for that kernel, then lets its own
// dependent go at once (the layer's split kernel under pdl "prefix", which gathers the prefix's rows while this
// kernel writes the tree's and waits for it before reading those), then copies. One 16-byte chunk a thread; an index
// outside the pool traps (torch's index_copy_ asserts on the device the same way).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "verify_attention.h"
#include "verify_attention_ptx.cuh"

namespace verify_attn {
namespace {

constexpr int kStoreThreads = 256;
constexpr int kRowChunks = kRowBytes / 16;  // 72

__global__ void __launch_bounds__(kStoreThreads) verify_attn_store_rows_kernel(uint4* pool, int64_t pool_rows,
                                                                                const int64_t* index,
                                                                                const uint4* rows, int n) {
  pdl_wait_primary();
  pdl_launch_dependents();
  const int i = blockIdx.x * kStoreThreads + threadIdx.x;
  if (i >= n * kRowChunks) return;
  const int r = i / kRowChunks, c = i - r * kRowChunks;
  const int64_t slot = index[r];
  if (slot < 0 || slot >= pool_rows) __trap();
  pool[slot * kRowChunks + c] = rows[static_cast<int64_t>(r) * kRowChunks + c];
}

}  // namespace

// Launches the store of `n` rows (bf16, [n, 576], contiguous) at `index` [n] of `pool` [pool_rows, 576]; `pdl`: as a
// programmatic dependent of the kernel before it (the caller asks only on sm_90+). No sync, no allocation.
inline cudaError_t store_rows_launch(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n,
                                     bool pdl, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>((static_cast<int64_t>(n) * kRowChunks + kStoreThreads - 1) / kStoreThreads);
  return launch_kernel(verify_attn_store_rows_kernel, dim3(blocks), dim3(kStoreThreads), 0, stream, pdl,
                       static_cast<uint4*>(pool), pool_rows, index, static_cast<const uint4*>(rows), n);
}

}  // namespace verify_attn
