// mma.sync issue-rate probe (H200 / any sm_80+): how many HMMA.16816 (bf16 -> fp32) an SM sub-partition
// completes per clock as a function of warps per sub-partition and independent accumulators per warp, with the
// B operand either in registers or loaded by ldmatrix.x4 from shared memory before every two MMAs (the verify
// kernel's QK/PV pattern). It separates "the tensor pipe is the limit" from "one warp cannot issue fast enough".
//
//   nvcc -O3 -arch=sm_90 -o /tmp/mma_probe kernel/tools/mma_probe.cu && /tmp/mma_probe
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

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
        uint32_t r0, r1, r2, r3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                     : "r"(base + ((it * kAcc + k) & 7) * 32));
        mma(d[k], a, r0, r1);
        mma(d[k + 1], a, r2, r3);
      } else {
        mma(d[k], a, b0, b1);
        mma(d[k + 1], a, b1, b0);
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
