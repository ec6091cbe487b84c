// Inline-PTX wrappers of Hopper's warpgroup MMA (sm_90a): shared-memory matrix descriptors, the fence, commit and
// wait of wgmma, the operand fences, and the proxy fence and named barrier its kernels use. The wgmma instructions
// themselves, one per shape and type, sit beside the kernels that issue them (verify_attention_fp8_wgmma.cuh for e4m3,
// verify_attention_v40.cuh for bf16).
#pragma once

#include <cstdint>

namespace verify_attn {

// A shared-memory matrix descriptor for wgmma, no swizzle: 8-row x 16-B core matrices, `lbo` bytes apart along K and
// `sbo` bytes apart along M or N.
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32);
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of an accumulator across a wgmma's issue and its wait (CUTLASS's
// warpgroup_fence_operand).
template <int N>
__device__ __forceinline__ void wg_keep(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// Likewise for an A fragment in registers: written (ldmatrix, byte permutes) before the wgmma.fence that precedes its
// wgmma, as wgmma asks of every register it reads.
__device__ __forceinline__ void wg_keep(uint32_t (&a)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// Descriptor `d` moved `bytes` along shared memory: its address field (bits 0-13) is (address & 0x3FFFF) >> 4, and
// every operand here ends below 227 KB, so a 32-bit add to the low word never carries out of the field (a 64-bit add
// cost the carry and register moves: 8 instructions a QK wgmma).
__device__ __forceinline__ uint64_t wg_desc_step(uint64_t d, uint32_t bytes) {
  const uint32_t lo = static_cast<uint32_t>(d) + (bytes >> 4);
  return (d & 0xFFFFFFFF00000000ull) | lo;
}
// A K-major 128-B-swizzled wgmma descriptor (layout 1 in bits 62-63), 1,024 B between 8-row groups; the leading
// offset is unused for swizzled K-major operands, 16 B (1) by convention (CUTLASS's mma_sm90_desc.hpp).
__device__ __forceinline__ uint64_t wg_desc_sw128(uint32_t addr) { return wg_desc(addr, 16, 1024) | (1ull << 62); }
// An MN-major 128-B-swizzled descriptor (wgmma's imm-trans 1, 16-bit types only): each K row holds 64 MN elements in
// one 128-B line, 8 K rows a 1,024-B atom, 1,024 B between 8-row groups along K (the stride offset) and `lbo` bytes
// between 64-element blocks along MN (CUTLASS's canonical MN-major SW128 layout, ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))).
__device__ __forceinline__ uint64_t wg_desc_sw128_mn(uint32_t addr, uint32_t lbo) {
  return wg_desc(addr, lbo, 1024) | (1ull << 62);
}

__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wg_bar(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

}  // namespace verify_attn
