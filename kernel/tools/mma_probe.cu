// mma.sync and ldmatrix probe (any sm_80+; rewritten for issue 17): what one SM does per clock with
//   - mma.sync m16n8k16 bf16 -> fp32 with B in registers (the tensor pipe alone),
//   - ldmatrix.x4 (and .trans) alone: shared-memory bandwidth with many loads in flight, and latency (a chase),
//   - one ldmatrix.x4 feeding two mma.sync (the verify kernel's QK / P.V pattern, 16 FLOP a shared byte),
// as a function of warps per sub-partition (SMSP) and independent accumulators per warp.
//
// The first version measured no ldmatrix: its addresses did not depend on the loop, so ptxas hoisted the loads
// (one LDSM per 64 HMMA in the kAcc=16 loop), and its 256-B row stride put the 8 rows of each 8x8 matrix into the
// same banks (8-way conflicts). Here every load's address moves with the iteration (a slot of 512 B picked from
// the loop counter, so no load can leave the loop), each 8x8 matrix is 128 contiguous bytes (the 8 lanes of an
// ldmatrix phase cover all 32 banks once: conflict-free), the loop is not unrolled, and
// tests/kernel/test_emulation_probe.py counts the LDSM and HMMA of each loop in the SASS.
//
// One block per SM, clock64 around the work of each block (thread 0, between two block barriers): the figures are
// per SM and per SM clock, whatever the clock runs at. With -DVERIFY_MMA_REPEAT_X32=N the mma.sync go through the
// kernel's emulation seam (verify_attention_ptx.cuh): N/32 issues a real MMA, FLOPs counted for the real ones.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o /tmp/mma_probe kernel/tools/mma_probe.cu
//   /tmp/mma_probe                (add -DVERIFY_MMA_REPEAT_X32=78 for the sm_120-balance emulation)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../csrc/verify_attention_ptx.cuh"  // the kernel's own mma.sync / ldmatrix wrappers and emulation seam

using verify_attn::ldmatrix_x4;
using verify_attn::ldmatrix_x4_trans;
using verify_attn::mma_bf16;
using verify_attn::mma_bf16_seq;

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

enum Mode : int { kMmaRegs = 0, kMmaLdsm = 1, kLdsm = 2, kLdsmTrans = 3, kLdsmChase = 4 };

constexpr int kSlotBytes = 512;                // one ldmatrix.x4: 4 matrices x 8 rows x 16 B
constexpr int kSlots = 64;                     // slots the loop walks through (32 KB)
constexpr int kPerIter = 32;                   // MMAs (or ldmatrix) an iteration
constexpr int kTileBytes = (kSlots + kPerIter) * kSlotBytes;  // + slack: a slot run never wraps inside an iteration
constexpr int kSinks = 8;                      // idle accumulators for the emulation's extra issues

__device__ __forceinline__ uint32_t slot_base(uint32_t tile, int it, int warp) {
  // Loop-dependent: the iteration picks the first slot of this iteration's run (7 apart per warp).
  return tile + static_cast<uint32_t>(((it * 5 + warp * 7) & (kSlots - 1)) * kSlotBytes);
}

// One block per SM. cycles[block] = SM clocks of the block's work; out keeps the results alive.
template <int kMode, int kAcc>
__global__ void probe(float* out, long long* cycles, int iters, float sentinel) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t tile = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  // Fill: the first 128 B (matrix 0) of slot s hold, in word l, the address lane l gives for slot s+1 (the chase);
  // every other word a bf16 pair that is neither zero nor large.
  for (int i = tid; i < kTileBytes / 4; i += blockDim.x) {
    const int slot = i / (kSlotBytes / 4), word = i % (kSlotBytes / 4);
    uint32_t v = 0x3c003c00u ^ (static_cast<uint32_t>(i) * 0x00010001u & 0x007f007fu);
    if (kMode == kLdsmChase && word < 32) v = tile + static_cast<uint32_t>(((slot + 1) % kSlots) * kSlotBytes + word * 16);
    reinterpret_cast<uint32_t*>(smem)[i] = v;
  }
  const uint32_t x = 0x3f803f80u ^ static_cast<uint32_t>(lane);
  const uint32_t a[4] = {x, x ^ 0x10001u, x ^ 0x20002u, x ^ 0x30003u};
  const uint32_t b0 = x ^ 0x40004u, b1 = x ^ 0x50005u;
  float d[kAcc][4];
  float sink[kSinks][4];
#pragma unroll
  for (int k = 0; k < kAcc; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.f;
#pragma unroll
  for (int k = 0; k < kSinks; ++k) sink[k][0] = sink[k][1] = sink[k][2] = sink[k][3] = 0.f;
  uint32_t acc_bits = 0u;
  uint32_t chase = tile + lane * 16;
  __syncthreads();
  long long t0 = 0;
  if (tid == 0) t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    if constexpr (kMode == kMmaRegs) {
#pragma unroll
      for (int j = 0; j < kPerIter; ++j)
        mma_bf16_seq(d[j % kAcc], a, b0, b1, j, sink, 3 * j, 3 * j + 1, 3 * j + 2);
    } else if constexpr (kMode == kMmaLdsm) {
      const uint32_t base = slot_base(tile, it, warp) + lane * 16;
#pragma unroll
      for (int j = 0; j < kPerIter; j += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, base + (j / 2) * kSlotBytes);
        mma_bf16_seq(d[j % kAcc], a, r[0], r[1], j, sink, 3 * j, 3 * j + 1, 3 * j + 2);
        mma_bf16_seq(d[(j + 1) % kAcc], a, r[2], r[3], j + 1, sink, 3 * j + 3, 3 * j + 4, 3 * j + 5);
      }
    } else if constexpr (kMode == kLdsm || kMode == kLdsmTrans) {
      // kPerIter/2 loads in flight a warp, then consumed (one LOP3 a register pair).
      const uint32_t base = slot_base(tile, it, warp) + lane * 16;
      uint32_t r[kPerIter / 2][4];
#pragma unroll
      for (int j = 0; j < kPerIter / 2; ++j) {
        if constexpr (kMode == kLdsm) ldmatrix_x4(r[j], base + j * kSlotBytes);
        else ldmatrix_x4_trans(r[j], base + j * kSlotBytes);
      }
#pragma unroll
      for (int j = 0; j < kPerIter / 2; ++j) acc_bits ^= (r[j][0] ^ r[j][1]) ^ (r[j][2] + r[j][3]);
    } else {  // kLdsmChase: each load's address is the previous load's result
#pragma unroll
      for (int j = 0; j < kPerIter; ++j) {
        uint32_t r[4];
        ldmatrix_x4(r, chase);
        chase = r[0];
      }
    }
  }
  __syncthreads();
  if (tid == 0) cycles[blockIdx.x] = clock64() - t0;
  float s = __uint_as_float(acc_bits & 0x3fffffffu) + static_cast<float>(chase & 1u);
#pragma unroll
  for (int k = 0; k < kAcc; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
#pragma unroll
  for (int k = 0; k < kSinks; ++k) s += sink[k][0] + sink[k][1] + sink[k][2] + sink[k][3];
  if (s == sentinel) out[tid] = s;  // never true (ptxas cannot know): keeps every result alive
}

struct Figures {
  double flop_per_clk = 0, bytes_per_clk = 0, clk_per_load = 0, tflops = 0;
};

template <int kMode, int kAcc>
Figures run(int sms, int warps_per_block, float* out, long long* cycles) {
  const int iters = kMode == kLdsmChase ? 256 : 2048;
  auto kernel = probe<kMode, kAcc>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kTileBytes));
  cudaFuncAttributes attr{};
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (warps_per_block * 32 > attr.maxThreadsPerBlock) return Figures{};  // too many registers for that block: n/a
  kernel<<<sms, warps_per_block * 32, kTileBytes>>>(out, cycles, iters, -1.f);  // warm-up
  CHECK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  kernel<<<sms, warps_per_block * 32, kTileBytes>>>(out, cycles, iters, -1.f);
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  CHECK(cudaGetLastError());
  float ms = 0.f;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  std::vector<long long> clk(sms);
  CHECK(cudaMemcpy(clk.data(), cycles, sms * sizeof(long long), cudaMemcpyDeviceToHost));
  std::sort(clk.begin(), clk.end());
  const double med = static_cast<double>(clk[sms / 2]);
  const double warp_iters = static_cast<double>(iters) * warps_per_block;
  Figures f;
  if (kMode == kMmaRegs || kMode == kMmaLdsm) {
    f.flop_per_clk = warp_iters * kPerIter * 4096.0 / med;
    f.tflops = warp_iters * kPerIter * 4096.0 * sms / (ms * 1e-3) / 1e12;
  }
  if (kMode == kMmaLdsm) f.bytes_per_clk = warp_iters * (kPerIter / 2) * kSlotBytes / med;
  if (kMode == kLdsm || kMode == kLdsmTrans) f.bytes_per_clk = warp_iters * (kPerIter / 2) * kSlotBytes / med;
  if (kMode == kLdsmChase) {
    f.bytes_per_clk = warp_iters * kPerIter * kSlotBytes / med;
    f.clk_per_load = med / (static_cast<double>(iters) * kPerIter);
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return f;
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float* out = nullptr;
  long long* cycles = nullptr;
  CHECK(cudaMalloc(&out, 4096 * sizeof(float)));
  CHECK(cudaMalloc(&cycles, sms * sizeof(long long)));
  std::printf("%s, %d SMs, one block an SM; mma.sync issues a real MMA: %d/32 (VERIFY_MMA_REPEAT_X32)\n", prop.name,
              sms, verify_attn::kMmaRepeatX32);
  std::printf("mode            warps/SM acc  FLOP/clk/SM  B/clk/SM  clk/load  TFLOP/s\n");
  auto line = [](const char* mode, int warps, int acc, const Figures& f) {
    if (f.flop_per_clk == 0 && f.bytes_per_clk == 0) {
      std::printf("%-15s %8d %3d  n/a (the block needs more registers than an SM has)\n", mode, warps, acc);
      return;
    }
    std::printf("%-15s %8d %3d  %11.0f  %8.1f  %8.1f  %7.1f\n", mode, warps, acc, f.flop_per_clk, f.bytes_per_clk,
                f.clk_per_load, f.tflops);
  };
  for (int w : {4, 8, 16}) {
    line("mma-regs", w, 4, run<kMmaRegs, 4>(sms, w, out, cycles));
    line("mma-regs", w, 8, run<kMmaRegs, 8>(sms, w, out, cycles));
  }
  for (int w : {4, 8, 12, 16, 32}) {
    line("mma+ldmatrix", w, 4, run<kMmaLdsm, 4>(sms, w, out, cycles));
    line("mma+ldmatrix", w, 8, run<kMmaLdsm, 8>(sms, w, out, cycles));
    line("mma+ldmatrix", w, 16, run<kMmaLdsm, 16>(sms, w, out, cycles));
  }
  for (int w : {4, 8, 16, 32}) {
    line("ldmatrix", w, 0, run<kLdsm, 1>(sms, w, out, cycles));
    line("ldmatrix.trans", w, 0, run<kLdsmTrans, 1>(sms, w, out, cycles));
  }
  for (int w : {1, 4, 8, 16}) line("ldmatrix-chase", w, 0, run<kLdsmChase, 1>(sms, w, out, cycles));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
