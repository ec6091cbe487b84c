// Cost of swapping a partial S between two warps' worth of threads, on one SM (shared memory and a 64-thread named
// barrier, as the split kernel does today) and across the two SMs of a 2-CTA cluster (distributed shared memory and
// a remote mbarrier arrive, as a K-split across a cluster would need every tile). It measures the riskiest step of
// that design before anyone builds it (kernel/NOTES.md, "Where it stands").
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/dsmem_probe kernel/tools/dsmem_probe.cu && /tmp/dsmem_probe
//
// Each of 64 threads writes 4 float4 (4 KB a side: one warp pair's 16 x 32 fp32 partial S, twice over) and then reads
// what the other side wrote, adding it into a running sum that the next write depends on, so each exchange is a full
// round of latency. Buffers and barriers alternate by iteration parity; a barrier can then never run two phases
// ahead of its waiter. Prints cycles and ns per exchange (median over the launched CTAs), one cluster or a full
// wave.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));        \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

constexpr int kThreads = 64, kVec = 4;  // 64 threads x 4 float4 = 4 KB a side

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// Same SM: two warps swap through shared memory on named barrier 1 (the split kernel's swap).
__global__ void __launch_bounds__(kThreads) local_swap(int iters, float* out, long long* cycles) {
  __shared__ __align__(16) float4 buf[2][2][kVec][32];  // [parity][warp][vec][lane]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float acc = threadIdx.x;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    const int b = i & 1;
#pragma unroll
    for (int k = 0; k < kVec; ++k) buf[b][warp][k][lane] = make_float4(acc, acc + k, acc - k, acc * 0.5f);
    asm volatile("bar.sync 1, 64;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float4 v = buf[b][warp ^ 1][k][lane];
      acc += (v.x + v.y + v.z + v.w) * 1e-9f;
    }
  }
  const long long t1 = clock64();
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = (t1 - t0) / iters;
}

// Across the cluster: each CTA writes into its peer's buffer, then arrives on the peer's mbarrier of that parity
// (release at cluster scope orders the writes before the arrival); it waits on its own (acquire).
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads) cluster_swap(int iters, float* out, long long* cycles) {
  __shared__ __align__(16) float4 buf[2][kVec][kThreads];  // [parity][vec][thread], written by the peer
  __shared__ __align__(8) uint64_t mbar[2];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned peer = cluster.block_rank() ^ 1u;
  if (threadIdx.x == 0) {
    for (int b = 0; b < 2; ++b) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(&mbar[b])), "r"(kThreads) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cluster.sync();
  uint32_t peer_buf, peer_mbar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_buf) : "r"(smem_u32(buf)), "r"(peer));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_mbar) : "r"(smem_u32(mbar)), "r"(peer));
  float acc = threadIdx.x;
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    const int b = i & 1;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const uint32_t dst = peer_buf + static_cast<uint32_t>(((b * kVec + k) * kThreads + threadIdx.x) * 16);
      asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "f"(acc), "f"(acc + k),
                   "f"(acc - k), "f"(acc * 0.5f)
                   : "memory");
    }
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(peer_mbar + b * 8) : "memory");
    const uint32_t mine = smem_u32(&mbar[b]), parity = (i >> 1) & 1;
    uint32_t done = 0;
    while (!done) {
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
          " selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(mine), "r"(parity)
          : "memory");
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float4 v = buf[b][k][threadIdx.x];
      acc += (v.x + v.y + v.z + v.w) * 1e-9f;
    }
  }
  const long long t1 = clock64();
  cluster.sync();  // no CTA leaves while its peer may still write into it
  out[blockIdx.x * kThreads + threadIdx.x] = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = (t1 - t0) / iters;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const int iters = 20000, max_blocks = prop.multiProcessorCount & ~1;
  float* out;
  long long* cycles;
  CHECK(cudaMalloc(&out, size_t(max_blocks) * kThreads * sizeof(float)));
  CHECK(cudaMalloc(&cycles, size_t(max_blocks) * sizeof(long long)));
  std::printf("%s, %d SMs, max SM clock %.2f GHz; %d exchanges of 4 KB a side\n", prop.name, prop.multiProcessorCount,
              clock_khz * 1e-6, iters);
  for (const int blocks : {2, max_blocks}) {
    for (const bool clustered : {false, true}) {
      if (clustered) cluster_swap<<<blocks, kThreads>>>(iters, out, cycles);
      else local_swap<<<blocks, kThreads>>>(iters, out, cycles);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      std::vector<long long> c(blocks);
      CHECK(cudaMemcpy(c.data(), cycles, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
      std::sort(c.begin(), c.end());
      const long long med = c[blocks / 2];
      std::printf("  %-36s %4d CTAs: %6lld cycles an exchange (%.0f ns at the max clock)\n",
                  clustered ? "cluster of 2: DSMEM + remote mbarrier" : "one SM: shared memory + bar.sync 64", blocks,
                  med, med / (clock_khz * 1e-6));
    }
  }
  return 0;
}
