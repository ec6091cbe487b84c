// v30's torch-free translation unit (a LAB VARIANT, kernel/csrc/verify_attention_v30.cuh): defines the launcher the
// binding calls, launch_verify_attention, as v30's. It is built only into an extension of its own
// (kernel/build.py load(variant="v30")), never beside the product's verify_attention_sm.cu, and only for targets with
// setmaxnreg: sm_90a and sm_120a (-gencode=arch=compute_90a,code=sm_90a; tests/kernel/test_compile_v30.py).
#include "verify_attention_v30.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(__CUDA_ARCH_FEAT_SM120_ALL)
#error "v30 needs an arch-specific target with setmaxnreg: sm_90a or sm_120a"
#endif

namespace verify_attn {

// Probe types of its own, so that none of v30's kernels or launcher statics share a name with the product's or the
// emulation's (the launcher's static LaunchInfo is a process-wide GNU unique symbol: verify_attention_sm.cu).
#if VERIFY_MMA_REPEAT_X32 == 32
struct V30Probe : NoProbe {};
#else
struct V30EmulationProbe : NoProbe {};
using V30Probe = V30EmulationProbe;
#endif

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) { return v30::launch<V30Probe>(p, stream); }

}  // namespace verify_attn
