// mma.sync issue-rate probe (H200 / any sm_80+): how many HMMA.16816 (bf16 -> fp32) an SM sub-partition
// completes per clock as a function of warps per sub-partition and independent accumulators per warp, with the
// B operand either in registers or loaded by ldmatrix.x4 from shared memory before every two MMAs (the verify
// kernel's QK/PV pattern). It separates "the tensor pipe is the limit" from "one warp cannot issue fast enough".
//
//   nvcc -O3 -arch=sm_90 -o /tmp/mma_probe kernel/tools/mma_probe.cu && /tmp/mma_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "../csrc/verify_attention_ptx.cuh"  // the kernel's own mma.sync / ldmatrix wrappers

using verify_attn::ldmatrix_x4;
using verify_attn::mma_bf16;

template <int kAcc, bool kLdsm>
__global__ void probe(float* out, int iters) {
  __shared__ __align__(16) unsigned char tile[8192];
  const int lane = threadIdx.x & 31;
  for (int i = threadIdx.x; i < 8192 / 4; i += blockDim.x) reinterpret_cast<uint32_t*>(tile)[i] = i * 2654435761u;
  __syncthreads();
  uint32_t a[4] = {lane * 3u, lane * 5u, lane * 7u, lane * 11u};
  uint32_t b0 = lane * 13u, b1 = lane * 17u;
  float d[kAcc][4];
#pragma unroll
  for (int k = 0; k < kAcc; ++k) d[k][0] = d[k][1] = d[k][2] = d[k][3] = 0.f;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(tile)) + (lane & 15) * 256 + (lane >> 4) * 16;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kAcc; k += 2) {
      if constexpr (kLdsm) {
        uint32_t r[4];
        ldmatrix_x4(r, base + ((it * kAcc + k) & 7) * 32);
        mma_bf16(d[k], a, r[0], r[1]);
        mma_bf16(d[k + 1], a, r[2], r[3]);
      } else {
        mma_bf16(d[k], a, b0, b1);
        mma_bf16(d[k + 1], a, b1, b0);
      }
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kAcc; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  if (s == 12345.f) out[threadIdx.x] = s;  // keep the work alive
}

template <int kAcc, bool kLdsm>
void run(int sms, int warps_per_sm, float* out) {
  const int iters = 4096 / kAcc * 8;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  probe<kAcc, kLdsm><<<sms, warps_per_sm * 32>>>(out, iters);  // warm-up
  cudaEventRecord(e0);
  const int reps = 5;
  for (int r = 0; r < reps; ++r) probe<kAcc, kLdsm><<<sms, warps_per_sm * 32>>>(out, iters);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, e0, e1);
  const double flops = 4096.0 * kAcc * iters * warps_per_sm * sms * reps;
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  printf("warps/SMSP=%d acc/warp=%2d B=%s  %6.1f TFLOP/s\n", warps_per_sm / 4, kAcc, kLdsm ? "ldmatrix" : "regs    ",
         flops / (ms * 1e-3) / 1e12);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out = nullptr;
  cudaMalloc(&out, 4096 * sizeof(float));
  for (int w : {4, 8, 12, 16, 32}) {
    run<2, false>(sms, w, out);
    run<4, false>(sms, w, out);
    run<8, false>(sms, w, out);
    run<16, false>(sms, w, out);
    run<4, true>(sms, w, out);
    run<8, true>(sms, w, out);
    run<16, true>(sms, w, out);
  }
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    printf("error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}
