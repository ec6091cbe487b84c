// The torch-free translation unit: instantiates the kernels of verify_attention.cuh with the product's NoProbe and
// defines the exported launcher. Built by torch.utils.cpp_extension.load together with binding.cpp, and on its own
// with plain `nvcc -cubin -arch=sm_XX` by tests/kernel/test_compile.py (the sm_120 readiness proof).
#include "verify_attention.cuh"

namespace verify_attn {

#if VERIFY_MMA_REPEAT_X32 == 32
using BuildProbe = NoProbe;
#else
// An sm_120-balance emulation build (kernel/build.py) is loaded into the same process as the product's. Its own probe
// type gives its kernels and its launcher names of their own: the launcher's static per-device LaunchInfo is a
// process-wide (GNU unique) symbol, and shared with the product's it skipped the emulated kernel's shared-memory
// attribute (its launch failed with "invalid argument", docs/lab/kernel-log.md).
struct EmulationProbe : NoProbe {};
using BuildProbe = EmulationProbe;
#endif

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) {
  return launch_split_and_combine<BuildProbe>(p, stream);
}

cudaError_t launch_store_rows(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n, bool pdl,
                              cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!pool || !index || !rows))) return cudaErrorInvalidValue;
  return store_rows_launch(pool, pool_rows, index, rows, n, pdl, stream);
}

}  // namespace verify_attn
