"""The two hardware ceilings every verify case is judged against, measured in the same run.

- copy bandwidth: a large device-to-device copy, counting bytes read plus bytes written (TB/s);
- mma.sync rate: a microkernel issuing m16n8k16 bf16 -> fp32 `mma.sync` back to back, ACC independent
  accumulators per warp (so the tensor pipe never waits on one result), 8 warps a block, 8 blocks per SM.
  It is the instruction the sm_120-portable kernel uses, so its rate (not wgmma's) bounds that kernel.
  Built with torch.utils.cpp_extension.load_inline for the current device's arch.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from bench.timing import time_device

MMA_FLOPS = 2 * 16 * 8 * 16  # one m16n8k16: 16x8 outputs, 16-deep dot each, multiply + add
WARPS = 8
ACCUMULATORS = (4, 8, 16)

_MMA_SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_runtime.h>

template <int ACC>
__global__ void __launch_bounds__(256) mma_peak_kernel(float* out, int iters, float seed) {
  // Operands depend on the thread and a runtime seed so nothing folds; never zeros (they run faster).
  float x = seed * (1.0f + (threadIdx.x & 31) / 64.0f);
  __nv_bfloat162 a2 = __floats2bfloat162_rn(x, -x * 0.5f);
  __nv_bfloat162 b2 = __floats2bfloat162_rn(x * 0.25f, x);
  unsigned a = *reinterpret_cast<unsigned*>(&a2), b = *reinterpret_cast<unsigned*>(&b2);
  float c[ACC][4];
#pragma unroll
  for (int k = 0; k < ACC; ++k) c[k][0] = c[k][1] = c[k][2] = c[k][3] = 0.f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < ACC; ++k) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
          : "r"(a), "r"(b), "r"(b), "r"(a), "r"(a), "r"(b));
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ACC; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

void mma_peak(torch::Tensor out, int64_t acc, int64_t iters, double seed) {
  int blocks = static_cast<int>(out.numel() / 256);
  float* ptr = out.data_ptr<float>();
  switch (acc) {
    case 4: mma_peak_kernel<4><<<blocks, 256>>>(ptr, static_cast<int>(iters), static_cast<float>(seed)); break;
    case 8: mma_peak_kernel<8><<<blocks, 256>>>(ptr, static_cast<int>(iters), static_cast<float>(seed)); break;
    case 16: mma_peak_kernel<16><<<blocks, 256>>>(ptr, static_cast<int>(iters), static_cast<float>(seed)); break;
    default: TORCH_CHECK(false, "acc: expected 4, 8 or 16, got ", acc);
  }
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "mma_peak launch failed: ", cudaGetErrorString(err));
}
"""
_MMA_DECL = "void mma_peak(torch::Tensor out, int64_t acc, int64_t iters, double seed);"


def copy_bandwidth(nbytes: int = 2 * 2**30, budget_s: float = 0.3) -> list[float]:
    """Samples of device-to-device copy bandwidth in TB/s (bytes read + written) over an nbytes buffer."""
    src = torch.rand(nbytes // 4, device="cuda")  # random, not zeros
    dst = torch.empty_like(src)
    samples = time_device(lambda _i: dst.copy_(src), 1, budget_s=budget_s, min_reps=20)
    return [2 * nbytes / (us * 1e-6) / 1e12 for us in samples]


def _load_mma() -> Callable[..., None]:
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    module = load_inline(
        name=f"bench_mma_ceiling_sm{major}{minor}",
        cpp_sources=_MMA_DECL,
        cuda_sources=_MMA_SOURCE,
        functions=["mma_peak"],
        extra_cuda_cflags=["-O3", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"],
    )
    return module.mma_peak


def mma_rate(iters: int = 2048, budget_s: float = 0.3) -> tuple[int, list[float]]:
    """(best accumulator count, samples in TFLOP/s) of the mma.sync bf16 -> fp32 microkernel."""
    mma_peak = _load_mma()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks = sms * 8
    out = torch.empty(blocks * 256, device="cuda")
    best: tuple[int, list[float]] = (0, [0.0])
    for acc in ACCUMULATORS:
        flops = blocks * WARPS * iters * acc * MMA_FLOPS
        samples = time_device(lambda _i, acc=acc: mma_peak(out, acc, iters, 0.01), 1, budget_s=budget_s, min_reps=10)
        if not torch.isfinite(out).all() or not out.abs().max() > 0:
            raise RuntimeError(f"mma microkernel (ACC={acc}) wrote non-finite or zero results")
        rates = [flops / (us * 1e-6) / 1e12 for us in samples]
        if sorted(rates)[len(rates) // 2] > sorted(best[1])[len(best[1]) // 2]:
            best = (acc, rates)
    return best
