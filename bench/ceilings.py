"""The two hardware ceilings every verify case is judged against, measured in the same run.

- copy bandwidth: a large device-to-device copy, counting bytes read plus bytes written (TB/s);
- mma.sync rate: a microkernel issuing m16n8k16 bf16 -> fp32 `mma.sync` back to back, ACC independent
  accumulators per warp (so the tensor pipe never waits on one result), 8 warps a block, 8 blocks per SM.
  It is the instruction the sm_120-portable kernel uses, so its rate (not wgmma's) bounds that kernel.
  Built with torch.utils.cpp_extension.load_inline for the current device's arch.

And, for the sm_120-balance emulation (issue 17; kernel/NOTES.md, "The H200 as a proxy for sm_120"):

- the mma.sync rate per SM and SM clock: the same microkernel with clock64 and globaltimer read by each block's
  first thread, so TFLOP/s over (SMs x the clock the blocks ran at) is FLOP per SM-clock;
- the emulation's own check: the same loop through the verify kernel's mma_bf16_seq compiled with
  -DVERIFY_MMA_REPEAT_X32=N, each real mma.sync issued N/32 times; counting the real FLOPs it must land at the
  H200's rate over N/32, about 1,024 FLOP per SM-clock (sm_120's bf16 rate with fp32 accumulation).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// mma_peak_kernel with each block's first thread reading the SM clock and the global timer around the loop:
// stamps[2 * block] = SM clocks, stamps[2 * block + 1] = ns.
template <int ACC>
__global__ void __launch_bounds__(256) mma_clock_kernel(float* out, long long* stamps, int iters, float seed) {
  const long long c0 = clock64();
  const unsigned long long n0 = globaltimer_ns();
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
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = clock64() - c0;
    stamps[2 * blockIdx.x + 1] = static_cast<long long>(globaltimer_ns() - n0);
  }
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

void mma_clock(torch::Tensor out, torch::Tensor stamps, int64_t acc, int64_t iters, double seed) {
  int blocks = static_cast<int>(out.numel() / 256);
  TORCH_CHECK(stamps.numel() >= 2 * blocks, "stamps: expected >= ", 2 * blocks, " elements, got ", stamps.numel());
  float* ptr = out.data_ptr<float>();
  long long* st = reinterpret_cast<long long*>(stamps.data_ptr<int64_t>());
  switch (acc) {
    case 4: mma_clock_kernel<4><<<blocks, 256>>>(ptr, st, static_cast<int>(iters), static_cast<float>(seed)); break;
    case 8: mma_clock_kernel<8><<<blocks, 256>>>(ptr, st, static_cast<int>(iters), static_cast<float>(seed)); break;
    case 16: mma_clock_kernel<16><<<blocks, 256>>>(ptr, st, static_cast<int>(iters), static_cast<float>(seed)); break;
    default: TORCH_CHECK(false, "acc: expected 4, 8 or 16, got ", acc);
  }
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "mma_clock launch failed: ", cudaGetErrorString(err));
}
"""
_MMA_DECL = (
    "void mma_peak(torch::Tensor out, int64_t acc, int64_t iters, double seed);\n"
    "void mma_clock(torch::Tensor out, torch::Tensor stamps, int64_t acc, int64_t iters, double seed);"
)

CSRC = Path(__file__).resolve().parents[1] / "kernel" / "csrc"
SM120_FLOP_PER_SM_CLK = 1024.0  # RTX PRO 6000 Blackwell, bf16 with fp32 accumulation (spec sheets, not measured)
EMULATION_PER_ITER = 32  # real mma.sync an iteration of the check loop: one whole period of N/32
EMULATION_TOLERANCE = 0.03  # |check / expected - 1| above this fails the emulation's own check

_EMU_SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "verify_attention_ptx.cuh"

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The ceiling's loop through the verify kernel's own mma_bf16_seq: 32 real mma.sync an iteration (a whole period
// of N/32), ACC real accumulators, 8 idle ones taking the extra issues as the kernel's O does.
template <int ACC>
__global__ void __launch_bounds__(256) mma_emulated_kernel(float* out, long long* stamps, int iters, float seed) {
  const long long c0 = clock64();
  const unsigned long long n0 = globaltimer_ns();
  float x = seed * (1.0f + (threadIdx.x & 31) / 64.0f);
  __nv_bfloat162 a2 = __floats2bfloat162_rn(x, -x * 0.5f);
  __nv_bfloat162 b2 = __floats2bfloat162_rn(x * 0.25f, x);
  const unsigned a = *reinterpret_cast<unsigned*>(&a2), b = *reinterpret_cast<unsigned*>(&b2);
  const uint32_t av[4] = {a, b, b, a};
  float c[ACC][4], sink[8][4];
#pragma unroll
  for (int k = 0; k < ACC; ++k) c[k][0] = c[k][1] = c[k][2] = c[k][3] = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) sink[k][0] = sink[k][1] = sink[k][2] = sink[k][3] = 0.f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) verify_attn::mma_bf16_seq(c[j % ACC], av, a, b, j, sink, 3 * j, 3 * j + 1, 3 * j + 2);
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ACC; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
#pragma unroll
  for (int k = 0; k < 8; ++k) s += sink[k][0] + sink[k][1] + sink[k][2] + sink[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = clock64() - c0;
    stamps[2 * blockIdx.x + 1] = static_cast<long long>(globaltimer_ns() - n0);
  }
}

void mma_emulated(torch::Tensor out, torch::Tensor stamps, int64_t acc, int64_t iters, double seed) {
  int blocks = static_cast<int>(out.numel() / 256);
  TORCH_CHECK(stamps.numel() >= 2 * blocks, "stamps: expected >= ", 2 * blocks, " elements, got ", stamps.numel());
  float* ptr = out.data_ptr<float>();
  long long* st = reinterpret_cast<long long*>(stamps.data_ptr<int64_t>());
  switch (acc) {
    case 4: mma_emulated_kernel<4><<<blocks, 256>>>(ptr, st, static_cast<int>(iters), static_cast<float>(seed)); break;
    case 8: mma_emulated_kernel<8><<<blocks, 256>>>(ptr, st, static_cast<int>(iters), static_cast<float>(seed)); break;
    default: TORCH_CHECK(false, "acc: expected 4 or 8, got ", acc);
  }
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "mma_emulated launch failed: ", cudaGetErrorString(err));
}
"""
_EMU_DECL = "void mma_emulated(torch::Tensor out, torch::Tensor stamps, int64_t acc, int64_t iters, double seed);"


def copy_bandwidth(nbytes: int = 2 * 2**30, budget_s: float = 0.3) -> list[float]:
    """Samples of device-to-device copy bandwidth in TB/s (bytes read + written) over an nbytes buffer."""
    src = torch.rand(nbytes // 4, device="cuda")  # random, not zeros
    dst = torch.empty_like(src)
    samples = time_device(lambda _i: dst.copy_(src), 1, budget_s=budget_s, min_reps=20)
    return [2 * nbytes / (us * 1e-6) / 1e12 for us in samples]


def _load_mma_module() -> object:
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    return load_inline(
        name=f"bench_mma_ceiling_sm{major}{minor}_v2",
        cpp_sources=_MMA_DECL,
        cuda_sources=_MMA_SOURCE,
        functions=["mma_peak", "mma_clock"],
        extra_cuda_cflags=["-O3", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"],
    )


_E4M3_SOURCE = r"""
#include <cuda_runtime.h>

// mma_peak_kernel's loop on mma.sync m16n8k32 e4m3 -> fp32 (sm_89+): the instruction the fp8 kernel issues, on
// operands that are new at every MMA, as the kernel's are. On sm_90 ptxas lowers it to f16 unpacks and two
// HMMA.16816 (tests/kernel/test_compile_fp8.py), and with the same operands at every MMA (v1 of this kernel) it
// computed A.B once and added it to each accumulator with FADDs: v1 measured FADDs, 1,807 "TFLOP/s" on an H100
// beside 652 for bf16. So A is read from shared memory each iteration (a volatile load ptxas cannot hoist) and
// differs per accumulator (its low bits XOR k: e4m3 bytes below 0x40 stay finite and non-zero); each MMA then
// runs, with its unpacks where e4m3 is not native: what the fp8 kernel gets there.
template <int ACC>
__global__ void __launch_bounds__(256) mma_e4m3_kernel(float* out, int iters, unsigned seed) {
  static_assert(ACC <= 16, "the per-accumulator operands are a XOR k, k < 16");
  __shared__ unsigned s_a[256];
  // e4m3 bytes that depend on the thread and a runtime seed; 0x38 = 1.0, small exponents, never zero or NaN.
  const unsigned t = (threadIdx.x & 31) + seed;
  s_a[threadIdx.x] = 0x38303428u ^ ((t & 7u) * 0x01010101u);
  const unsigned b = 0x30343830u ^ (((t >> 3) & 3u) * 0x01010101u);
  const unsigned where = static_cast<unsigned>(__cvta_generic_to_shared(&s_a[threadIdx.x]));
  __syncthreads();
  float c[ACC][4];
#pragma unroll
  for (int k = 0; k < ACC; ++k) c[k][0] = c[k][1] = c[k][2] = c[k][3] = 0.f;
  for (int i = 0; i < iters; ++i) {
    unsigned a;
    asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(a) : "r"(where));
#pragma unroll
    for (int k = 0; k < ACC; ++k) {
      const unsigned ak = a ^ (static_cast<unsigned>(k) * 0x01010101u);
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
          : "r"(ak), "r"(b), "r"(b), "r"(ak), "r"(ak), "r"(b));
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ACC; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

void mma_e4m3_peak(torch::Tensor out, int64_t acc, int64_t iters, int64_t seed) {
  int blocks = static_cast<int>(out.numel() / 256);
  float* ptr = out.data_ptr<float>();
  const unsigned s = static_cast<unsigned>(seed);
  switch (acc) {
    case 4: mma_e4m3_kernel<4><<<blocks, 256>>>(ptr, static_cast<int>(iters), s); break;
    case 8: mma_e4m3_kernel<8><<<blocks, 256>>>(ptr, static_cast<int>(iters), s); break;
    case 16: mma_e4m3_kernel<16><<<blocks, 256>>>(ptr, static_cast<int>(iters), s); break;
    default: TORCH_CHECK(false, "acc: expected 4, 8 or 16, got ", acc);
  }
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "mma_e4m3_peak launch failed: ", cudaGetErrorString(err));
}
"""
E4M3_MMA_FLOPS = 2 * 16 * 8 * 32  # one m16n8k32
E4M3_MIN_CC = (8, 9)


def mma_e4m3_rate(iters: int = 1024, budget_s: float = 0.3) -> tuple[int, list[float]]:
    """(best accumulator count, samples in TFLOP/s) of the mma.sync m16n8k32 e4m3 -> fp32 microkernel (sm_89+)."""
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < E4M3_MIN_CC:
        raise RuntimeError(f"mma.sync e4m3 needs sm_89 or newer, not sm_{major}{minor}")
    peak = load_inline(
        name=f"bench_mma_e4m3_ceiling_sm{major}{minor}_v2",
        cpp_sources="void mma_e4m3_peak(torch::Tensor out, int64_t acc, int64_t iters, int64_t seed);",
        cuda_sources=_E4M3_SOURCE,
        functions=["mma_e4m3_peak"],
        extra_cuda_cflags=["-O3", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"],
    ).mma_e4m3_peak
    return _best_rate(lambda out, acc: peak(out, acc, iters, 1), iters * E4M3_MMA_FLOPS, budget_s, "e4m3 mma")


# Hopper's e4m3 tensor cores are reached through wgmma only (on sm_90 ptxas unpacks e4m3 mma.sync to f16 HMMA), so
# where the fp8 product is a wgmma kernel its floor takes this ceiling: m64n256k32 (the peak shape) from shared memory
# on both sides, 2 warpgroups a block, one block an SM, 16 wgmmas into one accumulator between a fence and a wait
# (kernel/tools/wgmma_probe.cu measured 8,191 FLOP a clock an SM so, 100% of the H100's e4m3 rate). The operands are
# small non-zero e4m3 values (0x30 = 0.5), so the result is finite and non-zero and nothing folds.
_WGMMA_E4M3_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

__device__ __forceinline__ uint64_t wgmma_e4m3_desc(uint32_t addr) {  // no swizzle: LBO 128 along K, SBO 1024 along M/N
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(128 >> 4) << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32);
}

__global__ void __launch_bounds__(256, 1) wgmma_e4m3_kernel(float* out, int rounds) {
  extern __shared__ __align__(1024) unsigned char smem[];  // A: 64 rows x 128 B, B: 256 rows x 128 B
  for (int i = threadIdx.x; i < 40 * 1024 / 4; i += blockDim.x) reinterpret_cast<uint32_t*>(smem)[i] = 0x30303030u;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint32_t a_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem)), b_base = a_base + 8 * 1024;
  float d[128], total = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  for (int r = 0; r < rounds; ++r) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint64_t a = wgmma_e4m3_desc(a_base + 256 * (j & 3)), b = wgmma_e4m3_desc(b_base + 256 * (j & 3));
      asm volatile(
          "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
          "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
          "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,"
          "%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,"
          "%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
          "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,"
          "%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,"
          "%126,%127}, %128, %129, p, 1, 1;\n}\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
            "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
            "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
            "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
            "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
            "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
            "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
            "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
            "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
            "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
            "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
            "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
            "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
            "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
            "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
            "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
            "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
          : "l"(a), "l"(b), "r"(j));  // j = 0: d = A.B (scale-d 0), so each round starts from zero
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    total += d[0];  // every round's result used: ptxas drops a round whose accumulators the next one overwrites
  }
  float s = total;
#pragma unroll
  for (int i = 1; i < 128; ++i) s += d[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

void wgmma_e4m3_peak(torch::Tensor out, int64_t rounds) {
  const int blocks = static_cast<int>(out.numel() / 256), smem = 40 * 1024;
  cudaFuncSetAttribute(wgmma_e4m3_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  wgmma_e4m3_kernel<<<blocks, 256, smem>>>(out.data_ptr<float>(), static_cast<int>(rounds));
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "wgmma_e4m3_peak launch failed: ", cudaGetErrorString(err));
}
"""
WGMMA_E4M3_FLOPS = 2 * 64 * 256 * 32  # one m64n256k32
WGMMA_E4M3_CC = (9, 0)  # sm_90a: wgmma


def wgmma_e4m3_rate(rounds: int = 256, budget_s: float = 0.3) -> list[float]:
    """Samples in TFLOP/s of the wgmma m64n256k32 e4m3 -> fp32 microkernel (sm_90 only: one block of 2 warpgroups
    an SM, each issuing 16 wgmmas a round)."""
    from torch.utils.cpp_extension import load_inline

    cc = torch.cuda.get_device_capability()
    if cc != WGMMA_E4M3_CC:
        raise RuntimeError(f"wgmma e4m3 is sm_90's, not sm_{cc[0]}{cc[1]}'s")
    peak = load_inline(
        name="bench_wgmma_e4m3_ceiling_sm90a_v3",
        cpp_sources="void wgmma_e4m3_peak(torch::Tensor out, int64_t rounds);",
        cuda_sources=_WGMMA_E4M3_SOURCE,
        functions=["wgmma_e4m3_peak"],
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"],
    ).wgmma_e4m3_peak
    blocks = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    out = torch.full((blocks * 256,), float("nan"), device="cuda")  # a launch that writes nothing fails the check
    samples = time_device(lambda _i: peak(out, rounds), 1, budget_s=budget_s, min_reps=10)
    # Every wgmma ran: each round starts its accumulators at zero and each of its 16 wgmmas adds 32 x 0.5 x 0.5 = 8, so
    # a round leaves 128 in each; the kernel sums accumulator 0 over the rounds (in fp32 FADDs: integers, exact) and the
    # other 127 of the last round: rounds x 128 + 127 x 128. Two checks failed before this one, on an H100: all rounds
    # summed in the accumulators (to 2^15 each) came out short at 5e0b4c5, past what e4m3 wgmma's reduced-precision
    # accumulation keeps exact (about 14 bits, DeepSeek-V3's report); and with only the last round's sum checked (at
    # f5aa191) ptxas dropped the rounds whose accumulators the next overwrote, 3 of every 4, and the "ceiling" read
    # 7,315 TFLOP/s, four times the 1,815 measured before (runs/h100_20261207_f5aa191_producer.log).
    expected = float((rounds + 127) * 128)
    if not bool((out == expected).all()):
        raise RuntimeError(f"wgmma e4m3 microkernel wrote {out.min().item()}..{out.max().item()}, not {expected}")
    flops = blocks * 2 * rounds * 16 * WGMMA_E4M3_FLOPS
    return [flops / (us * 1e-6) / 1e12 for us in samples]


def _load_mma() -> Callable[..., None]:
    return _load_mma_module().mma_peak  # type: ignore[attr-defined,no-any-return]


def mma_rate(iters: int = 2048, budget_s: float = 0.3) -> tuple[int, list[float]]:
    """(best accumulator count, samples in TFLOP/s) of the mma.sync bf16 -> fp32 microkernel."""
    mma_peak = _load_mma()
    return _best_rate(lambda out, acc: mma_peak(out, acc, iters, 0.01), iters * MMA_FLOPS, budget_s, "mma")


def _best_rate(
    launch: Callable[[torch.Tensor, int], None], flops_per_acc: int, budget_s: float, what: str
) -> tuple[int, list[float]]:
    """(best accumulator count, samples in TFLOP/s) of a microkernel launched as ``launch(out, acc)`` on 8 blocks
    an SM, each warp issuing ``flops_per_acc`` FLOPs per accumulator."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks = sms * 8
    out = torch.empty(blocks * 256, device="cuda")
    best: tuple[int, list[float]] = (0, [0.0])
    for acc in ACCUMULATORS:
        flops = blocks * WARPS * acc * flops_per_acc
        samples = time_device(lambda _i, acc=acc: launch(out, acc), 1, budget_s=budget_s, min_reps=10)
        if not torch.isfinite(out).all() or not out.abs().max() > 0:
            raise RuntimeError(f"{what} microkernel (ACC={acc}) wrote non-finite or zero results")
        rates = [flops / (us * 1e-6) / 1e12 for us in samples]
        if sorted(rates)[len(rates) // 2] > sorted(best[1])[len(best[1]) // 2]:
            best = (acc, rates)
    return best


@dataclass(frozen=True)
class PerClock:
    """An mma.sync loop timed twice over: CUDA events (TFLOP/s samples) and each block's SM clock (GHz, from clock64
    over globaltimer in the last launch), so that its rate per SM and SM clock does not depend on the clock."""

    acc: int
    sms: int
    tflops: list[float]
    ghz: list[float]

    @property
    def clock_ghz(self) -> float:
        return float(statistics.median(self.ghz))

    def flop_per_sm_clk(self) -> list[float]:
        """Each TFLOP/s sample over (SMs x the median block clock)."""
        return [t * 1e12 / (self.sms * self.clock_ghz * 1e9) for t in self.tflops]


def _per_clock(
    launch: Callable[[torch.Tensor, torch.Tensor, int], None], acc: int, flops_per_warp: float, budget_s: float
) -> PerClock:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks = sms * 8
    out = torch.empty(blocks * 256, device="cuda")
    stamps = torch.zeros(2 * blocks, dtype=torch.int64, device="cuda")
    samples = time_device(lambda _i: launch(out, stamps, acc), 1, budget_s=budget_s, min_reps=10)
    if not torch.isfinite(out).all() or not out.abs().max() > 0:
        raise RuntimeError(f"mma clock microkernel (ACC={acc}) wrote non-finite or zero results")
    st = stamps.view(blocks, 2).cpu().tolist()
    ghz = [clk / ns for clk, ns in st if ns > 0]
    if len(ghz) != blocks:
        raise RuntimeError(f"mma clock microkernel (ACC={acc}): {blocks - len(ghz)} blocks left no clock stamp")
    flops = blocks * WARPS * flops_per_warp
    return PerClock(acc, sms, [flops / (us * 1e-6) / 1e12 for us in samples], ghz)


def _best(runs: list[PerClock]) -> PerClock:
    return max(runs, key=lambda r: statistics.median(r.flop_per_sm_clk()))


def mma_per_clock(iters: int = 2048, budget_s: float = 0.3) -> PerClock:
    """The ceiling's microkernel with clock stamps, best accumulator count: the H200's mma.sync FLOP per SM-clock."""
    clock = _load_mma_module().mma_clock  # type: ignore[attr-defined]
    return _best(
        [
            _per_clock(lambda o, s, a: clock(o, s, a, iters, 0.01), acc, iters * acc * MMA_FLOPS, budget_s)
            for acc in ACCUMULATORS
        ]
    )


def repeat_x32_for(flop_per_sm_clk: float, target: float = SM120_FLOP_PER_SM_CLK) -> int:
    """N = 32 k, k = the measured rate per SM-clock over the target's, rounded to 1/32 (the build's step).

    Raises ValueError outside 1 <= k < 4, the range the emulation seam takes (verify_attention_ptx.cuh)."""
    n = round(32 * flop_per_sm_clk / target) if math.isfinite(flop_per_sm_clk) else 0
    if not 32 <= n < 128:
        raise ValueError(f"flop_per_sm_clk: expected 1x to 4x the target {target:.0f}, got {flop_per_sm_clk:.1f}")
    return n


def _load_emulated(repeat_x32: int) -> Callable[..., None]:
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    module = load_inline(
        name=f"bench_mma_emulated_sm{major}{minor}_x{repeat_x32}",
        cpp_sources=_EMU_DECL,
        cuda_sources=_EMU_SOURCE,
        functions=["mma_emulated"],
        extra_cuda_cflags=[
            "-O3",
            "-std=c++17",
            f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}",
            f"-DVERIFY_MMA_REPEAT_X32={repeat_x32}",
        ],
        extra_include_paths=[str(CSRC)],
    )
    return module.mma_emulated  # type: ignore[no-any-return]


def mma_emulated(repeat_x32: int, iters: int = 512, budget_s: float = 0.3) -> PerClock:
    """The emulation's check: the HMMA-only loop through mma_bf16_seq under N = repeat_x32, real FLOPs counted.

    Best of 4 and 8 real accumulators; it should land at the H200's FLOP per SM-clock over N/32."""
    emulated = _load_emulated(repeat_x32)
    flops = iters * EMULATION_PER_ITER * MMA_FLOPS
    return _best([_per_clock(lambda o, s, a: emulated(o, s, a, iters, 0.01), acc, flops, budget_s) for acc in (4, 8)])


def emulation_verdict(h200_flop_per_sm_clk: float, repeat_x32: int, check_flop_per_sm_clk: float) -> tuple[float, bool]:
    """(expected FLOP per SM-clock under N, whether the check landed within EMULATION_TOLERANCE of it)."""
    expected = h200_flop_per_sm_clk * 32 / repeat_x32
    return expected, abs(check_flop_per_sm_clk / expected - 1) <= EMULATION_TOLERANCE
