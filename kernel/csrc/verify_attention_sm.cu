// The torch-free translation unit: instantiates the kernels of verify_attention.cuh with the product's NoProbe and
// defines the exported launcher. Built by torch.utils.cpp_extension.load together with binding.cpp, and on its own
// with plain `nvcc -cubin -arch=sm_XX` by tests/kernel/test_compile.py (the sm_120 readiness proof).
#include "verify_attention.cuh"

namespace verify_attn {

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) {
  return launch_split_and_combine<BuildProbeOf<NoProbe>>(p, stream);
}

int split_tile_tokens() { return kTileTokens; }

cudaError_t launch_store_rows(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n, bool pdl,
                              cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!pool || !index || !rows))) return cudaErrorInvalidValue;
  return store_rows_launch(pool, pool_rows, index, rows, n, pdl, stream);
}

}  // namespace verify_attn
