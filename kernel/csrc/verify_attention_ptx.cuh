// Inline-PTX wrappers of the verify kernels: cp.async, ldmatrix, mma.sync m16n8k16 bf16 and quad reductions.
// Every instruction here exists on sm_80, sm_90 and sm_120 (no wgmma, no tcgen05, no TMA).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace verify_attn {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; src_bytes == 0 zero-fills (tokens past the chunk end: P is 0 there, and 0 * stale NaN
// bit patterns from uninitialised shared memory would poison O).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// D += A * B for one m16n8k16 bf16 tile with fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Programmatic dependent launch (sm_90+; no-ops below, where the launcher does not ask for it): the split
// kernel lets the combine grid launch early, and the combine waits for the split grid's completion and memory
// flush before its first read of the partials.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Per-block timestamps for kernel/tools/timeline.cu only: with VERIFY_ATTN_TIMELINE undefined (every real
// build) VA_STAMP expands to nothing and the kernels are unchanged.
#ifdef VERIFY_ATTN_TIMELINE
constexpr int kTimelineReps = 32, kTimelineBlocks = 1024, kTimelineSlots = 4;
__device__ int va_rep;  // set by the tool's marker kernel before each timed call
// [rep][block][slot]: globaltimer (ns) and clock64 of thread 0 at each stamp; [rep][block] tiles of the block.
__device__ unsigned long long va_split_ns[kTimelineReps][kTimelineBlocks][kTimelineSlots];
__device__ long long va_split_clk[kTimelineReps][kTimelineBlocks][kTimelineSlots];
__device__ int va_split_tiles[kTimelineReps][kTimelineBlocks];
__device__ unsigned long long va_combine_ns[kTimelineReps][2];  // first block start (min), last block end (max)
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void va_stamp_split(int slot, int tiles) {
  if (threadIdx.x != 0) return;
  const int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (blk >= kTimelineBlocks || va_rep < 0 || va_rep >= kTimelineReps) return;
  va_split_ns[va_rep][blk][slot] = globaltimer_ns();
  va_split_clk[va_rep][blk][slot] = clock64();
  va_split_tiles[va_rep][blk] = tiles;
}
__device__ __forceinline__ void va_stamp_combine(bool end) {
  if (threadIdx.x != 0 || va_rep < 0 || va_rep >= kTimelineReps) return;
  if (end) atomicMax(&va_combine_ns[va_rep][1], globaltimer_ns());
  else atomicMin(&va_combine_ns[va_rep][0], globaltimer_ns());
}
#define VA_STAMP_SPLIT(slot, tiles) ::verify_attn::va_stamp_split(slot, tiles)
#define VA_STAMP_COMBINE(end) ::verify_attn::va_stamp_combine(end)
#else
#define VA_STAMP_SPLIT(slot, tiles) ((void)0)
#define VA_STAMP_COMBINE(end) ((void)0)
#endif

// Ablation bits, for kernel/tools/timeline.cu only (`-DVERIFY_ATTN_ABLATE=N`): each set bit leaves one stage of
// the split kernel's tile loop out, so that the loop's time with and without it says what the stage costs on the
// critical path. The results are garbage then; a real build (0) compiles every stage, unchanged.
#ifndef VERIFY_ATTN_ABLATE
#define VERIFY_ATTN_ABLATE 0
#endif
#if VERIFY_ATTN_ABLATE != 0 && !defined(VERIFY_ATTN_TIMELINE)
#error "VERIFY_ATTN_ABLATE is for kernel/tools/timeline.cu only"
#endif
enum Ablate : int {
  kNoQk = 1,        // no K ldmatrix / QK MMAs (S stays 0)
  kNoSwap = 2,      // no partial-S swap with the partner warp (and no pair barrier)
  kNoSoftmax = 4,   // no scale / mask / max / rescale / exp2: P is S packed as is
  kNoPv = 8,        // no V ldmatrix / P.V MMAs
  kNoGather = 16,   // no gather or L2 prefetch after tile 0 (the stages keep stale rows)
  kNoBarrier = 32,  // no per-tile cp.async wait + block barrier
  kNoPrefetch = 64, // no L2 prefetch of tile t+2 (warp 0)
  kNoWait = 128,    // the block barrier without the cp.async wait before it (rows land whenever they land)
  // Emulations rather than removals: what a P.V that reads each V element once a block (O^T = V^T P^T, P shared
  // by all warps) would cost, before building it.
  kHalfV = 256,     // P.V loads every other V fragment and reuses it: half the V ldmatrix traffic, same MMAs
  kPvBarrier = 512, // a block barrier between softmax and P.V (the shared-P form needs every pair's P first)
  kHalfK = 1024,    // QK loads every other K fragment and reuses it: half the K ldmatrix traffic, same MMAs
};
constexpr int kAblate = VERIFY_ATTN_ABLATE;

}  // namespace verify_attn
