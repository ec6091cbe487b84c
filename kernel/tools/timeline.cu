// Where a verify call's time goes: per-block timestamps of the split and combine kernels (TimelineProbe of
// timeline_instrument.cuh, the product kernels observed at their ProbePoints) between two marker kernels, for one
// (B, H, T, L) shape and split count.
//
//   nvcc -O3 --use_fast_math -std=c++17 -arch=sm_90 -Ikernel/csrc kernel/tools/timeline.cu -o /tmp/timeline
//   (v40, sm_90's product: -gencode=arch=compute_90a,code=sm_90a -DTIMELINE_V40; v30bulkx2s6, sm_90's before it:
//    -gencode=arch=compute_90a,code=sm_90a -DTIMELINE_V30 -DVERIFY_V30_BULK=1 -DVERIFY_V30_XCH_BUFFERS=2
//    -DVERIFY_V30_STAGES=6)
//   /tmp/timeline B H T L [splits] [reps]      (splits 0, the default: the launcher's own choice)
//
// Prints the medians over the timed calls of: call (CUDA events around the launch), marker -> first split block,
// split span, per block prologue (entry -> tile 0 landed), loop per tile, epilogue, last split block -> first
// combine block, combine span, combine -> marker. Inputs: random bf16 pool, scattered slots, a chain tree, input
// sets rotated so the KV rows read per call exceed the L2 several times, a sleep kernel queued first so the host
// never gates the GPU. The timestamps cost a few stores per block: compare the event time with `python -m bench
// verify`'s unstamped figure. Timing several split counts of one shape is the split sweep.
//
// The stage ablations of the lab log (docs/lab/kernel-log.md: each stage of the tile loop left out, or its
// shared-memory traffic halved) were compile-time branches inside the product kernel; they are not kept. Their
// code is at commit f7a911b (VERIFY_ATTN_ABLATE in kernel/csrc/verify_attention_ptx.cuh).
#include "timeline_instrument.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

namespace va = verify_attn;
namespace tl = verify_attn::timeline;

__device__ unsigned long long marker_ns[tl::kReps][2];

__global__ void marker_kernel(int rep, int which) {
  if (which == 0) tl::rep = rep;
  marker_ns[rep][which] = tl::globaltimer_ns();
}

__global__ void sleep_kernel(long long ns) {
  const unsigned long long t0 = tl::globaltimer_ns();
  while (tl::globaltimer_ns() - t0 < static_cast<unsigned long long>(ns)) __nanosleep(1000);
}

__global__ void fill_bf16(__nv_bfloat16* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    x[i] = __float2bfloat16((static_cast<float>(h & 0xffff) / 65535.f - 0.5f) * 3.f);
  }
}

static double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s B H T L [splits] [reps]\n", argv[0]);
    return 2;
  }
  const int B = std::atoi(argv[1]), H = std::atoi(argv[2]), T = std::atoi(argv[3]), L = std::atoi(argv[4]);
  const int forced_splits = argc > 5 ? std::atoi(argv[5]) : 0;
  const int reps = std::min(argc > 6 ? std::atoi(argv[6]) : 20, tl::kReps);
  if (B < 1 || H < 1 || T < 1 || T > va::kMaxNodes || L < 0 || forced_splits < 0 || forced_splits > va::kMaxSplits ||
      reps < 1) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int rows = T * H;
  const int splits = forced_splits > 0 ? forced_splits : va::choose_num_splits(B, T, H, int64_t{B} * L, sms, tl::kSplitTileTokens);
  const int64_t per_set = int64_t{B} * (L + T);
  const int sets = static_cast<int>(std::max<int64_t>(3, ((512ll << 20) + per_set * 1152 - 1) / (per_set * 1152)));
  const int64_t pool_rows = per_set * sets;

  // Host-side slots: one random permutation of a set's rows, shifted per set.
  std::mt19937 rng(1234);
  std::vector<int> perm(per_set);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int> prefix(static_cast<size_t>(sets) * B * L), tree(static_cast<size_t>(sets) * B * T);
  for (int s = 0; s < sets; ++s)
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < L; ++i) prefix[(size_t(s) * B + b) * L + i] = int(s * per_set) + perm[size_t(b) * L + i];
      for (int i = 0; i < T; ++i) tree[(size_t(s) * B + b) * T + i] = int(s * per_set) + perm[size_t(B) * L + b * T + i];
    }
  std::vector<int> indptr(B + 1);
  for (int b = 0; b <= B; ++b) indptr[b] = b * L;
  std::vector<unsigned long long> mask(size_t(B) * T);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < T; ++i) mask[size_t(b) * T + i] = i == 63 ? ~0ull : ((1ull << (i + 1)) - 1);  // a chain

  __nv_bfloat16 *q, *kv, *out;
  int *d_indptr, *d_prefix, *d_tree;
  unsigned long long* d_mask;
  void* part_o;
  float* part_lse;
  const size_t part_elems = va::partial_o_elems(B, T, H, splits);
  CHECK(cudaMalloc(&q, size_t(B) * rows * va::kHeadDim * 2));
  CHECK(cudaMalloc(&kv, size_t(pool_rows) * va::kHeadDim * 2));
  CHECK(cudaMalloc(&out, size_t(B) * rows * va::kVDim * 2));
  CHECK(cudaMalloc(&d_indptr, indptr.size() * 4));
  CHECK(cudaMalloc(&d_prefix, std::max<size_t>(1, prefix.size()) * 4));
  CHECK(cudaMalloc(&d_tree, tree.size() * 4));
  CHECK(cudaMalloc(&d_mask, mask.size() * 8));
  CHECK(cudaMalloc(&part_o, std::max<size_t>(1, part_elems) * 2));
  CHECK(cudaMalloc(&part_lse, std::max<size_t>(1, va::partial_lse_elems(B, T, H, splits)) * 4));
  fill_bf16<<<1024, 256>>>(q, size_t(B) * rows * va::kHeadDim, 1u);
  fill_bf16<<<4096, 256>>>(kv, size_t(pool_rows) * va::kHeadDim, 2u);
  CHECK(cudaMemcpy(d_indptr, indptr.data(), indptr.size() * 4, cudaMemcpyHostToDevice));
  if (!prefix.empty()) CHECK(cudaMemcpy(d_prefix, prefix.data(), prefix.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_tree, tree.data(), tree.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_mask, mask.data(), mask.size() * 8, cudaMemcpyHostToDevice));

  auto params = [&](int set) {
    va::Params p{};
    p.q = q;
    p.kv = kv;
    p.prefix_indptr = d_indptr;
    p.prefix_slots = d_prefix + size_t(set) * B * L;  // set s's slots: indptr offsets stay 0..B*L
    p.tree_slots = d_tree + size_t(set) * B * T;
    p.tree_mask = reinterpret_cast<const uint64_t*>(d_mask);
    p.out = out;
    p.lse = nullptr;
    p.part_o = part_o;
    p.part_lse = part_lse;
    p.batch = B;
    p.nodes = T;
    p.heads = H;
    p.num_splits = splits;
    p.scale_log2 = 1.f / std::sqrt(576.f) * 1.4426950408889634f;
    return p;
  };
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  const int none = -1;
  CHECK(cudaMemcpyToSymbol(tl::rep, &none, sizeof none));
  for (int i = 0; i < 5; ++i) CHECK(tl::launch(params(i % sets), stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<unsigned long long> init(size_t(tl::kReps) * 2);
  for (size_t i = 0; i < init.size(); i += 2) init[i] = ~0ull, init[i + 1] = 0;
  CHECK(cudaMemcpyToSymbol(tl::combine_ns, init.data(), init.size() * 8));
  std::vector<int> zero_tiles(size_t(tl::kReps) * tl::kBlocks, -1);
  CHECK(cudaMemcpyToSymbol(tl::split_tiles, zero_tiles.data(), zero_tiles.size() * 4));

  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  sleep_kernel<<<1, 1, 0, stream>>>(30'000'000);
  for (int r = 0; r < reps; ++r) {
    marker_kernel<<<1, 1, 0, stream>>>(r, 0);
    CHECK(cudaEventRecord(ev[2 * r], stream));
    CHECK(tl::launch(params((r + 5) % sets), stream));
    CHECK(cudaEventRecord(ev[2 * r + 1], stream));
    marker_kernel<<<1, 1, 0, stream>>>(r, 1);
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());

  static unsigned long long split_ns[tl::kReps][tl::kBlocks][va::kProbePoints];
  static long long split_clk[tl::kReps][tl::kBlocks][va::kProbePoints];
  static int split_tiles[tl::kReps][tl::kBlocks];
  unsigned long long comb[tl::kReps][2], mark[tl::kReps][2];
  CHECK(cudaMemcpyFromSymbol(split_ns, tl::split_ns, sizeof split_ns));
  CHECK(cudaMemcpyFromSymbol(split_clk, tl::split_clk, sizeof split_clk));
  CHECK(cudaMemcpyFromSymbol(split_tiles, tl::split_tiles, sizeof split_tiles));
  CHECK(cudaMemcpyFromSymbol(comb, tl::combine_ns, sizeof comb));
  CHECK(cudaMemcpyFromSymbol(mark, marker_ns, sizeof mark));

  const int blocks = va::row_tiles(T, H) * splits * B;
  std::vector<double> call, to_first, span, start_spread, end_spread, prologue, per_tile, epilogue, gap, cspan,
      ctail, ghz;
  int max_tiles = 0;
  for (int r = 0; r < reps; ++r) {
    float ms = 0.f;
    CHECK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    call.push_back(ms * 1e3);
    unsigned long long first = ~0ull, last_start = 0, first_end = ~0ull, last = 0;
    std::vector<double> pro, tile, epi;
    for (int k = 0; k < std::min(blocks, tl::kBlocks); ++k) {
      const auto* ns = split_ns[r][k];
      const auto* clk = split_clk[r][k];
      first = std::min(first, ns[va::kBlockEntry]);
      last_start = std::max(last_start, ns[va::kBlockEntry]);
      first_end = std::min(first_end, ns[va::kBlockExit]);
      last = std::max(last, ns[va::kBlockExit]);
      const int n = split_tiles[r][k];
      if (n <= 0) continue;
      max_tiles = std::max(max_tiles, n);
      const double cyc_per_ns = double(clk[va::kBlockExit] - clk[va::kBlockEntry]) /
                                double(ns[va::kBlockExit] - ns[va::kBlockEntry]);
      ghz.push_back(cyc_per_ns);
      pro.push_back((clk[va::kFirstTileLanded] - clk[va::kBlockEntry]) / cyc_per_ns * 1e-3);
      tile.push_back((clk[va::kLoopEnd] - clk[va::kFirstTileLanded]) / cyc_per_ns * 1e-3 / n);
      epi.push_back((clk[va::kBlockExit] - clk[va::kLoopEnd]) / cyc_per_ns * 1e-3);
    }
    to_first.push_back((first - mark[r][0]) * 1e-3);
    span.push_back((last - first) * 1e-3);
    start_spread.push_back((last_start - first) * 1e-3);
    end_spread.push_back((last - first_end) * 1e-3);
    prologue.push_back(median(pro));
    per_tile.push_back(median(tile));
    epilogue.push_back(median(epi));
    if (splits > 1) {
      gap.push_back((double(comb[r][0]) - double(last)) * 1e-3);
      cspan.push_back((comb[r][1] - comb[r][0]) * 1e-3);
      ctail.push_back((double(mark[r][1]) - double(comb[r][1])) * 1e-3);
    } else {
      ctail.push_back((double(mark[r][1]) - double(last)) * 1e-3);
    }
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s B=%d H=%d T=%d L=%d splits=%d%s blocks=%d tiles/block<=%d reps=%d sm_clock=%.2f GHz\n", prop.name,
              B, H, T, L, splits, forced_splits > 0 ? " (forced)" : "", blocks, max_tiles, reps, median(ghz));
  std::printf("  call (events)            %7.2f us\n", median(call));
  std::printf("  marker -> first split    %7.2f us\n", median(to_first));
  std::printf("  split span               %7.2f us  (block starts spread %.2f, ends spread %.2f)\n", median(span),
              median(start_spread), median(end_spread));
  std::printf("  per block: prologue      %7.2f us  (entry -> tile 0 landed)\n", median(prologue));
  std::printf("             per tile      %7.3f us\n", median(per_tile));
  std::printf("             epilogue      %7.2f us  (loop end -> last store issued)\n", median(epilogue));
  if (splits > 1) {
    std::printf("  split end -> combine     %7.2f us\n", median(gap));
    std::printf("  combine span             %7.2f us\n", median(cspan));
  }
  std::printf("  last kernel -> marker    %7.2f us\n", median(ctail));
  return 0;
}
