// Torch binding of the tree-verify MLA attention kernel: checks every input (naming the argument, expected vs
// actual), allocates out / lse / the partials, picks the split count from host-known sizes (no device
// sync, in the build's tile: split_tile_tokens), and calls the torch-free launcher of the build's translation unit
// (verify_attention_sm.cu, _v30_sm.cu, _v40_sm.cu or _fp8_sm.cu) on the current stream.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/extension.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "verify_attention.h"
#ifdef VERIFY_ATTN_FP8
#include "verify_attention_fp8.h"
#endif

namespace {

// Every number in a message is formatted with std::to_string, never streamed through std::ostream: on the H200
// image (torch 2.11), streaming an integer or a double inside this extension segfaults (strings, dtypes and
// devices stream fine; docs/lab/kernel-log.md, "Recorded runs"), so a bad input crashed the process instead of raising.
std::string num(int64_t v) { return std::to_string(v); }
std::string num(double v) { return std::to_string(v); }
std::string shape(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// Multiprocessor count of a device, read once (a host attribute query: no device sync).
int sm_count(int device) {
  static int cached[64] = {};
  TORCH_CHECK(device >= 0 && device < 64, "q: expected a CUDA device index < 64, got ", num(int64_t{device}));
  if (cached[device] == 0) {
    int n = 0;
    const cudaError_t err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
    TORCH_CHECK(err == cudaSuccess, "cudaDeviceGetAttribute(MultiProcessorCount) failed: ", cudaGetErrorString(err));
    cached[device] = n;
  }
  return cached[device];
}

void check_tensor(const at::Tensor& t, const char* name, at::ScalarType dtype, int64_t dim,
                  const at::Device& device) {
  TORCH_CHECK(t.defined(), name, ": expected a tensor, got None");
  TORCH_CHECK(t.scalar_type() == dtype, name, ": expected dtype ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.is_cuda(), name, ": expected a CUDA tensor, got device ", t.device());
  TORCH_CHECK(t.device() == device, name, ": expected device ", device, " (the device of q), got ", t.device());
  TORCH_CHECK(t.dim() == dim, name, ": expected ", num(dim), " dimensions, got ", num(t.dim()), " (shape ", shape(t.sizes()), ")");
  TORCH_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor, got strides ", shape(t.strides()), " for shape ",
              shape(t.sizes()));
}

// Every input checked (the kv_cache's dtype is kv_dtype), then the launch's Params with its outputs and partials
// allocated: {out, lse (or an empty tensor), part_o, part_lse} in `keep`. splits = 0 chooses the split count; a
// positive value forces it (tuning and tests).
verify_attn::Params prepare(const at::Tensor& q, const at::Tensor& kv_cache, at::ScalarType kv_dtype,
                            const at::Tensor& prefix_indptr, const at::Tensor& prefix_slots,
                            const at::Tensor& tree_slots, const at::Tensor& tree_mask, double sm_scale,
                            bool return_lse, int64_t splits, std::vector<at::Tensor>& keep) {
  using namespace verify_attn;
  TORCH_CHECK(q.defined() && q.is_cuda(), "q: expected a CUDA tensor, got ",
              q.defined() ? q.device().str() : std::string("None"));
  const at::Device device = q.device();
  check_tensor(q, "q", at::kBFloat16, 4, device);
  check_tensor(kv_cache, "kv_cache", kv_dtype, 2, device);
  check_tensor(prefix_indptr, "prefix_indptr", at::kInt, 1, device);
  check_tensor(prefix_slots, "prefix_slots", at::kInt, 1, device);
  check_tensor(tree_slots, "tree_slots", at::kInt, 2, device);
  check_tensor(tree_mask, "tree_mask", at::kLong, 2, device);
  const int64_t batch = q.size(0), nodes = q.size(1), heads = q.size(2);
  TORCH_CHECK(q.size(3) == kHeadDim, "q: expected head dim ", num(int64_t{kHeadDim}), " (shape [B, T, H, 576]), got ",
              num(q.size(3)));
  TORCH_CHECK(batch >= 1, "q: expected batch B >= 1, got ", num(batch));
  TORCH_CHECK(nodes >= 1 && nodes <= kMaxNodes, "q: expected tree nodes 1 <= T <= ", num(int64_t{kMaxNodes}), ", got ",
              num(nodes));
  TORCH_CHECK(heads >= 1, "q: expected heads H >= 1, got ", num(heads));
  TORCH_CHECK(batch <= kMaxBatch, "q: expected batch B <= ", num(int64_t{kMaxBatch}), " (grid z), got ", num(batch));
  TORCH_CHECK(batch * nodes * heads <= (int64_t{1} << 31) / kVDim, "q: expected B*T*H <= ",
              num((int64_t{1} << 31) / kVDim), " (32-bit row arithmetic), got ", num(batch * nodes * heads));
  TORCH_CHECK(kv_cache.size(1) == kHeadDim, "kv_cache: expected shape [S, ", num(int64_t{kHeadDim}), "], got ",
              shape(kv_cache.sizes()));
  TORCH_CHECK(kv_cache.size(0) >= 1, "kv_cache: expected a pool of S >= 1 rows, got ", num(kv_cache.size(0)));
  TORCH_CHECK(prefix_indptr.size(0) == batch + 1, "prefix_indptr: expected shape [", num(batch + 1), "] (B+1), got ",
              shape(prefix_indptr.sizes()));
  TORCH_CHECK(prefix_slots.size(0) < (int64_t{1} << 31), "prefix_slots: expected fewer than 2^31 slots, got ",
              num(prefix_slots.size(0)));
  TORCH_CHECK(tree_slots.size(0) == batch && tree_slots.size(1) == nodes, "tree_slots: expected shape [", num(batch),
              ", ", num(nodes), "] (B, T), got ", shape(tree_slots.sizes()));
  TORCH_CHECK(tree_mask.size(0) == batch && tree_mask.size(1) == nodes, "tree_mask: expected shape [", num(batch), ", ",
              num(nodes), "] (B, T), got ", shape(tree_mask.sizes()));
  TORCH_CHECK(std::isfinite(sm_scale) && sm_scale > 0, "sm_scale: expected a finite value > 0, got ", num(sm_scale));
  TORCH_CHECK(sm_scale * 1.4426950408889634 < 3.4028234663852886e38, "sm_scale: expected a value whose scale in the "
              "exp2 domain fits fp32, got ", num(sm_scale));
  // The gathers and q loads are 16-byte vectors: a misaligned view (a contiguous slice at an odd offset) would
  // fault inside the kernel and kill the context.
  for (const auto& [t, name] : {std::pair<const at::Tensor*, const char*>{&q, "q"}, {&kv_cache, "kv_cache"}}) {
    const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t->data_ptr()) % 16);
    TORCH_CHECK(mis == 0, name, ": expected a 16-byte aligned data pointer, got address % 16 = ", num(mis));
  }
  TORCH_CHECK(splits >= 0 && splits <= kMaxSplits, "splits: expected 0 (auto) .. ", num(int64_t{kMaxSplits}), ", got ", num(splits));

  const int num_sms = sm_count(device.index());
  const int num_splits = splits > 0 ? static_cast<int>(splits)
                                    : choose_num_splits(static_cast<int>(batch), static_cast<int>(nodes),
                                                        static_cast<int>(heads), prefix_slots.size(0), num_sms,
                                                        split_tile_tokens());
  const auto f32 = q.options().dtype(at::kFloat);
  at::Tensor out = at::empty({batch, nodes, heads, kVDim}, q.options());
  at::Tensor lse = return_lse ? at::empty({batch, nodes, heads}, f32) : at::Tensor();
  const int b = static_cast<int>(batch), t = static_cast<int>(nodes), h = static_cast<int>(heads);
  at::Tensor part_o = at::empty({static_cast<int64_t>(partial_o_elems(b, t, h, num_splits))}, q.options());
  at::Tensor part_lse = at::empty({static_cast<int64_t>(partial_lse_elems(b, t, h, num_splits))}, f32);

  Params p{};
  p.q = q.data_ptr();
  p.kv = kv_cache.data_ptr();
  p.prefix_indptr = prefix_indptr.data_ptr<int32_t>();
  p.prefix_slots = prefix_slots.data_ptr<int32_t>();
  p.tree_slots = tree_slots.data_ptr<int32_t>();
  p.tree_mask = reinterpret_cast<const uint64_t*>(tree_mask.data_ptr<int64_t>());
  p.out = out.data_ptr();
  p.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  p.part_o = part_o.numel() ? part_o.data_ptr() : nullptr;
  p.part_lse = part_lse.numel() ? part_lse.data_ptr<float>() : nullptr;
  p.batch = b;
  p.nodes = t;
  p.heads = h;
  p.num_splits = num_splits;
  p.scale_log2 = static_cast<float>(sm_scale * 1.4426950408889634);
  keep = {out, return_lse ? lse : at::empty({0}, f32), part_o, part_lse};
  return p;
}

#ifndef VERIFY_ATTN_FP8
// Returns {out [B,T,H,512] bf16, lse [B,T,H] fp32 (empty unless return_lse)}. pdl: Params::pdl (0 off, 1 launch,
// 2 prefix).
std::vector<at::Tensor> forward(const at::Tensor& q, const at::Tensor& kv_cache, const at::Tensor& prefix_indptr,
                                const at::Tensor& prefix_slots, const at::Tensor& tree_slots,
                                const at::Tensor& tree_mask, double sm_scale, bool return_lse, int64_t splits,
                                int64_t pdl) {
  TORCH_CHECK(q.defined() && q.is_cuda(), "q: expected a CUDA tensor, got ",
              q.defined() ? q.device().str() : std::string("None"));
  const c10::cuda::CUDAGuard guard(q.device());
  TORCH_CHECK(pdl >= verify_attn::kPdlOff && pdl <= verify_attn::kPdlPrefix,
              "pdl: expected 0 (off), 1 (launch) or 2 (prefix), got ", num(pdl));
  std::vector<at::Tensor> keep;
  verify_attn::Params p = prepare(q, kv_cache, at::kBFloat16, prefix_indptr, prefix_slots, tree_slots, tree_mask,
                                  sm_scale, return_lse, splits, keep);
  p.pdl = static_cast<int>(pdl);
  const cudaError_t err =
      verify_attn::launch_verify_attention(p, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  TORCH_CHECK(err == cudaSuccess, "verify_attention launch failed: ", cudaGetErrorString(err));
  return {keep[0], keep[1]};
}

// pool[index[i]] = rows[i] for a bf16 pool [S, 576], index [N] int64 and rows [N, 576] bf16 on one device; pdl: as a
// programmatic dependent of the kernel before it, where the device has griddepcontrol (sm_90+; otherwise a plain
// launch). An index outside the pool traps on the device, as torch's index_copy_ asserts.
void store_rows(const at::Tensor& pool, const at::Tensor& index, const at::Tensor& rows, bool pdl) {
  using namespace verify_attn;
  TORCH_CHECK(pool.defined() && pool.is_cuda(), "pool: expected a CUDA tensor, got ",
              pool.defined() ? pool.device().str() : std::string("None"));
  const c10::cuda::CUDAGuard guard(pool.device());
  check_tensor(pool, "pool", at::kBFloat16, 2, pool.device());
  check_tensor(index, "index", at::kLong, 1, pool.device());
  check_tensor(rows, "rows", at::kBFloat16, 2, pool.device());
  TORCH_CHECK(pool.size(1) == kHeadDim, "pool: expected shape [S, ", num(int64_t{kHeadDim}), "], got ",
              shape(pool.sizes()));
  TORCH_CHECK(rows.size(1) == kHeadDim && rows.size(0) == index.size(0), "rows: expected shape [",
              num(index.size(0)), ", ", num(int64_t{kHeadDim}), "] (one row per index), got ", shape(rows.sizes()));
  TORCH_CHECK(index.size(0) < (int64_t{1} << 31) / (kRowBytes / 16), "index: expected fewer than ",
              num((int64_t{1} << 31) / (kRowBytes / 16)), " rows, got ", num(index.size(0)));
  for (const auto& [t, name] : {std::pair<const at::Tensor*, const char*>{&pool, "pool"}, {&rows, "rows"}}) {
    const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t->data_ptr()) % 16);
    TORCH_CHECK(mis == 0, name, ": expected a 16-byte aligned data pointer, got address % 16 = ", num(mis));
  }
  int major = 0;
  cudaError_t err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, pool.device().index());
  TORCH_CHECK(err == cudaSuccess, "cudaDeviceGetAttribute(ComputeCapabilityMajor) failed: ", cudaGetErrorString(err));
  err = launch_store_rows(pool.data_ptr(), pool.size(0), index.data_ptr<int64_t>(), rows.data_ptr(),
                          static_cast<int>(index.size(0)), pdl && major >= 9,
                          c10::cuda::getCurrentCUDAStream(pool.device().index()).stream());
  TORCH_CHECK(err == cudaSuccess, "store_rows launch failed: ", cudaGetErrorString(err));
}
#else
// The fp8 cache (kernel/csrc/verify_attention_fp8.cuh): kv_cache float8_e4m3fn with its scale kv_scale (a finite
// fp32 value > 0; stored value x kv_scale = the value). Q is quantized per call into a workspace of this call.
std::vector<at::Tensor> forward_fp8(const at::Tensor& q, const at::Tensor& kv_cache, double kv_scale,
                                    const at::Tensor& prefix_indptr, const at::Tensor& prefix_slots,
                                    const at::Tensor& tree_slots, const at::Tensor& tree_mask, double sm_scale,
                                    bool return_lse, int64_t splits) {
  using namespace verify_attn;
  TORCH_CHECK(q.defined() && q.is_cuda(), "q: expected a CUDA tensor, got ",
              q.defined() ? q.device().str() : std::string("None"));
  const c10::cuda::CUDAGuard guard(q.device());
  TORCH_CHECK(std::isfinite(kv_scale) && kv_scale > 0 && kv_scale < 3.4028234663852886e38,
              "kv_scale: expected a finite fp32 value > 0, got ", num(kv_scale));
  TORCH_CHECK(sm_scale * 1.4426950408889634 * kv_scale < 3.4028234663852886e38,
              "kv_scale: expected sm_scale x kv_scale in the exp2 domain to fit fp32, got ", num(kv_scale));
  std::vector<at::Tensor> keep;
  Fp8Params f{};
  f.p = prepare(q, kv_cache, at::kFloat8_e4m3fn, prefix_indptr, prefix_slots, tree_slots, tree_mask, sm_scale,
                return_lse, splits, keep);
  const int64_t rows = q.size(0) * q.size(1) * q.size(2);
  at::Tensor q8 = at::empty({rows * kF8QRowBytes}, q.options().dtype(at::kByte));
  at::Tensor scales = at::empty({rows * 2}, q.options().dtype(at::kFloat));
  f.q_bf16 = q.data_ptr();
  f.p.q = q8.data_ptr();
  f.q_scales = scales.data_ptr<float>();
  f.p.scale_log2 = static_cast<float>(sm_scale * 1.4426950408889634 * kv_scale);
  f.out_scale = static_cast<float>(kv_scale / kF8PScale);
  const cudaError_t err = launch_verify_attention_fp8(f, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  TORCH_CHECK(err == cudaSuccess, "verify_attention (fp8) launch failed: ", cudaGetErrorString(err));
  return {keep[0], keep[1]};
}
#endif

int64_t num_splits(int64_t batch, int64_t nodes, int64_t heads, int64_t prefix_tokens, int64_t num_sms) {
  return verify_attn::choose_num_splits(static_cast<int>(batch), static_cast<int>(nodes), static_cast<int>(heads),
                                        prefix_tokens, static_cast<int>(num_sms), verify_attn::split_tile_tokens());
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Tree-verify MLA attention (split-KV) over a page_size=1 latent pool";
#ifndef VERIFY_ATTN_FP8
  m.def("forward", &forward, "out, lse = forward(q, kv_cache, prefix_indptr, prefix_slots, tree_slots, tree_mask, "
                             "sm_scale, return_lse, splits=0, pdl=1)",
        pybind11::arg("q"), pybind11::arg("kv_cache"), pybind11::arg("prefix_indptr"), pybind11::arg("prefix_slots"),
        pybind11::arg("tree_slots"), pybind11::arg("tree_mask"), pybind11::arg("sm_scale"),
        pybind11::arg("return_lse"), pybind11::arg("splits") = 0, pybind11::arg("pdl") = verify_attn::kPdlLaunch);
  m.def("store_rows", &store_rows, "store_rows(pool, index, rows, pdl): pool[index[i]] = rows[i] (bf16 rows of 576)",
        pybind11::arg("pool"), pybind11::arg("index"), pybind11::arg("rows"), pybind11::arg("pdl"));
#else
  m.def("forward_fp8", &forward_fp8, "out, lse = forward_fp8(q, kv_cache, kv_scale, prefix_indptr, prefix_slots, "
                                     "tree_slots, tree_mask, sm_scale, return_lse, splits=0)",
        pybind11::arg("q"), pybind11::arg("kv_cache"), pybind11::arg("kv_scale"), pybind11::arg("prefix_indptr"),
        pybind11::arg("prefix_slots"), pybind11::arg("tree_slots"), pybind11::arg("tree_mask"),
        pybind11::arg("sm_scale"), pybind11::arg("return_lse"), pybind11::arg("splits") = 0);
  m.attr("FP8_SMEM_BYTES") = verify_attn::kF8SmemBytes;
#endif
  m.def("num_splits", &num_splits, "split count the launcher would choose");
  m.attr("SMEM_BYTES") = verify_attn::kSmemBytes;
  m.attr("MAX_SPLITS") = verify_attn::kMaxSplits;
  m.attr("SPLIT_TILE_TOKENS") = verify_attn::split_tile_tokens();  // the build's tile, the unit of its splits
}
