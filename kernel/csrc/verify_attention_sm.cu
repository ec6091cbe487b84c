// The torch-free translation unit: instantiates the kernels of verify_attention.cuh with the product's NoProbe and
// defines the exported launcher. Built by torch.utils.cpp_extension.load together with binding.cpp, and on its own
// with plain `nvcc -cubin -arch=sm_XX` by tests/kernel/test_compile.py (the sm_120 readiness proof).
#include "verify_attention.cuh"

namespace verify_attn {

cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream) {
  return launch_split_and_combine<NoProbe>(p, stream);
}

}  // namespace verify_attn
