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
// What a programmatic dependent reads after its griddepcontrol.wait may have been written by the kernel before it
// while this one already ran. An __ldg (ld.global.nc) of it is an invariant load to the compiler, which may move it
// above the wait (H100, 8c85a02: q written late by the kernel before, read stale under pdl "prefix"). So:
// - after_wait(ptr): the pointer through an empty asm volatile, ordered after the wait's own asm, so that the
//   compiler's front end keeps __ldg loads from it after the wait (they may still be re-issued later, which keeps Q's
//   64 registers free where it matters). It binds nothing in ptxas, which moved such loads above a wait inside a
//   branch: the waits before q are unconditional, and tests/kernel/test_compile.py checks the SASS. Nothing on this
//   SM read those lines before, so the read-only cache holds none of them;
// - ld_dep_s32: an ordinary load through L2 (__ldcg), for the slot ids, read both before the wait (pdl "prefix": the
//   plan) and after it.
template <class T>
__device__ __forceinline__ const T* after_wait(const T* p) {
  asm volatile("" : "+l"(p));
  return p;
}
__device__ __forceinline__ int ld_dep_s32(const int* p) { return __ldcg(p); }

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

// The sm_120-balance emulation (issue 17; kernel/NOTES.md, "The H200 as a proxy for sm_120"). Per SM and clock the
// H200 runs mma.sync bf16 -> fp32 about 2.4 times as fast as sm_120 (1,024 FLOP), while shared memory and issue run
// at about the same rate on both. A bench or timeline build compiled with -DVERIFY_MMA_REPEAT_X32=N (N = 32 k, k the
// H200's measured rate per SM-clock over 1,024) issues the seq-th mma.sync of a sequence floor((seq+1) k) -
// floor(seq k) times, so MMA, shared memory and issue stand in sm_120's ratio. The default, 32 (k = 1), is the
// product: no extra instruction, the SASS byte for byte that of the kernel without this seam
// (tests/kernel/test_emulation.py).
#ifndef VERIFY_MMA_REPEAT_X32
#define VERIFY_MMA_REPEAT_X32 32
#endif
constexpr int kMmaRepeatX32 = VERIFY_MMA_REPEAT_X32;
static_assert(kMmaRepeatX32 >= 32 && kMmaRepeatX32 < 128, "VERIFY_MMA_REPEAT_X32: 32 k with 1 <= k < 4");

// Issues of the seq-th mma.sync of an unrolled sequence (seq folds to a constant, so does this).
__device__ __forceinline__ constexpr int mma_issues(int seq) {
  return ((seq + 1) * kMmaRepeatX32) / 32 - (seq * kMmaRepeatX32) / 32;
}

// D += A * B, the seq-th mma.sync of its sequence. In an emulation build, each extra issue is A * 0 added to an
// idle accumulator, sink[s0] then sink[s1] (then sink[s2]): the same instruction with the same A, its product
// exactly zero, so every accumulator keeps its bits. Why not into D itself: in place, each extra would lengthen D's
// dependency chain; beside it (the same A, B and C into spare registers) ptxas deletes an mma.sync whose result
// nobody reads, and keeping it alive by predication cost 4 registers and 2 instructions an extra issue (spills at
// 255). An idle accumulator is one the next few real issues neither wrote nor will write: O's other columns in
// QK, and in P.V the ones 8 and 16 n-tiles away, so no issue waits on an extra one.
template <int kSinks>
__device__ __forceinline__ void mma_bf16_seq(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, int seq,
                                             float (&sink)[kSinks][4], int s0, int s1, int s2) {
  mma_bf16(d, a, b0, b1);
  if constexpr (kMmaRepeatX32 != 32) {
    const int extra = mma_issues(seq) - 1;
    const uint32_t zero = 0u;
    if (extra >= 1) mma_bf16(sink[s0 % kSinks], a, zero, zero);
    if (extra >= 2) mma_bf16(sink[s1 % kSinks], a, zero, zero);
    if (extra >= 3) mma_bf16(sink[s2 % kSinks], a, zero, zero);
  }
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

// The host side: launches `kernel` on `stream`, as the programmatic dependent of the kernel before it there when
// `dependent` (callers ask only on sm_90+, where griddepcontrol exists). Every launch that may be a programmatic
// dependent goes through it (split, combine, the fp8 split, the store), so the attribute is spelled once.
template <class... Expected, class... Actual>
inline cudaError_t launch_kernel(void (*kernel)(Expected...), dim3 grid, dim3 block, int smem, cudaStream_t stream,
                                 bool dependent, Actual&&... args) {
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Actual&&>(args)...);
}

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

}  // namespace verify_attn
