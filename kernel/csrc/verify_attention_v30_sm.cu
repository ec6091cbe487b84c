// v30's torch-free translation unit (kernel/csrc/verify_attention_v30.cuh): defines the launcher the binding calls,
// launch_verify_attention, as v30's. kernel/build.py builds it instead of v26's verify_attention_sm.cu (never beside
// it) for a named variant (sm_90's product before v40), only for targets with setmaxnreg: sm_90a and sm_120a (-gencode=arch=compute_90a,code=sm_90a; tests/kernel/test_compile_v30.py).
#include "verify_attention_v30.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(__CUDA_ARCH_FEAT_SM120_ALL)
#error "v30 needs an arch-specific target with setmaxnreg: sm_90a or sm_120a"
#endif

namespace verify_attn {

// Probe types of its own, one per build (each define of verify_attention_v30.cuh and the emulation's), so that no two
// of the extensions loaded in one process share a kernel or launcher-static name: the launcher's static LaunchInfo is a
// process-wide GNU unique symbol (verify_attention_sm.cu), and shared between v30 and v30bulk it skipped v30bulk's
// shared-memory attribute (first H200 call at abbdbfe: v30bulk's launch failed, "invalid argument").
#define V30_PROBE_NAME_(b, s, x, rb, r) V30Probe_b##b##_s##s##_x##x##_rb##rb##_r##r
#define V30_PROBE_NAME(b, s, x, rb, r) V30_PROBE_NAME_(b, s, x, rb, r)
#define V30_PROBE \
  V30_PROBE_NAME(VERIFY_V30_BULK, VERIFY_V30_STAGES, VERIFY_V30_XCH_BUFFERS, VERIFY_V30_READ_BARRIERS, VERIFY_MMA_REPEAT_X32)
struct V30_PROBE : NoProbe {};
using V30Probe = V30_PROBE;

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) { return v30::launch<V30Probe>(p, stream); }

int split_tile_tokens() { return kTileTokens; }

cudaError_t launch_store_rows(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n, bool pdl,
                              cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!pool || !index || !rows))) return cudaErrorInvalidValue;
  return store_rows_launch(pool, pool_rows, index, rows, n, pdl, stream);
}

}  // namespace verify_attn
