// v40's torch-free translation unit (kernel/csrc/verify_attention_v40.cuh, the bf16 tile on wgmma): defines the
// launcher the binding calls, launch_verify_attention, as v40's. kernel/build.py builds it for the lab variant "v40",
// for sm_90a only (wgmma and setmaxnreg: -gencode=arch=compute_90a,code=sm_90a; tests/kernel/test_compile_v40.py).
#include "verify_attention_v40.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "v40 needs sm_90a: wgmma and setmaxnreg"
#endif

namespace verify_attn {

// A probe type of its own, so that no kernel or launcher-static name is shared with another build loaded in the same
// process (verify_attention_v30_sm.cu says why).
struct V40Probe : NoProbe {};

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) { return v40::launch<V40Probe>(p, stream); }

int split_tile_tokens() { return v40::kTokens; }

cudaError_t launch_store_rows(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n, bool pdl,
                              cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!pool || !index || !rows))) return cudaErrorInvalidValue;
  return store_rows_launch(pool, pool_rows, index, rows, n, pdl, stream);
}

}  // namespace verify_attn
