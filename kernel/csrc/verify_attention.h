// Host-side interface of the tree-verify MLA attention kernel: parameters, sizes, split choice, launcher
// declaration. Plain C++ (no device code, no torch types) so that binding.cpp, compiled by the host
// compiler, and verify_attention_sm.cu, compiled by nvcc, share one definition.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace verify_attn {

constexpr int kHeadDim = 576;        // K width: 512 latent + 64 rope columns
constexpr int kVDim = 512;           // V is the first 512 columns of each pool row
constexpr int kMaxNodes = 64;        // tree mask is one 64-bit word per node
constexpr int kMaxBatch = 65535;     // requests run on grid z
constexpr int kRowsPerBlock = 64;    // folded (node, head) rows per block: row = node * H + head
constexpr int kWarps = 8;            // partner warps share 16 rows, each owning half of K dim and of V cols
constexpr int kThreads = kWarps * 32;
constexpr int kTileTokens = 32;      // KV tokens per pipeline stage
constexpr int kStages = 2;           // cp.async ring depth
constexpr int kRowBytes = kHeadDim * 2;        // 1152 B: one pool row
constexpr int kSmemRowBytes = kRowBytes + 16;  // +16 B pad: 8 consecutive rows hit 8 distinct bank quads
constexpr int kTileBytes = kTileTokens * kSmemRowBytes;
constexpr int kXchBytes = kWarps * 16 * 32 * 4;  // each warp's 16x32 fp32 partial S, swapped with its partner
constexpr int kSlotBytes = 2 * kTileTokens * 4;  // slot ids of the next two tiles
constexpr int kMaskBytes = kRowsPerBlock * 8;    // ancestor mask of each block row's node
// Q's 64 rope columns of the block's rows, in shared memory (16-B chunks XOR-swizzled by row) rather than in
// registers: the 8 registers this frees keep the 128 fp32 O accumulators + 64 Q registers spill-free.
constexpr int kQRopeBytes = kRowsPerBlock * 64 * 2;
// Dynamic shared memory the launcher requests (the kernel has no static shared memory).
constexpr int kSmemBytes = kStages * kTileBytes + kXchBytes + kSlotBytes + kMaskBytes + kQRopeBytes;
constexpr int kSmemLimit = 99 * 1024;  // sm_120's per-block maximum: the port target
static_assert(kSmemBytes <= kSmemLimit, "shared memory per block must fit sm_120's 99 KB");
constexpr int kMaxSplits = 128;        // bounds the partial buffers
// Below this the partial write + combine cost more than they spread: 2 since the partials are bf16; at (1,8,16)
// 5.7k, 66 splits of 3 tiles (60 since the empty ones go) beat 44 of 5 by 9-11% (kernel/NOTES.md, "Design, and why").
constexpr int kMinTilesPerSplit = 2;

// Programmatic dependent launch of the split kernel (sm_90+; on older devices every mode runs as kPdlOff):
// - kPdlOff: a plain launch, after the kernel before it on the stream has finished;
// - kPdlLaunch: the split kernel launches as that kernel's programmatic dependent and waits for it (griddepcontrol.wait)
//   before its first read or write of global memory: its launch and block setup overlap that kernel's end;
// - kPdlPrefix: as kPdlLaunch, but it reads prefix_indptr, the slot ids, tree_mask and the prefix's KV rows before the
//   wait, and waits only before q and the tree nodes' own rows. The caller promises that the kernel right before the
//   call writes none of those (a serving step: it is the layer's KV store or q projection; the plan and the prefix's
//   rows come from earlier kernels). Older kernels have finished: the split kernel starts only once every block of
//   the one before it has, and that one started after its own predecessors finished (a plain launch, or a dependent
//   that lets its own dependents go only after its wait, as the combine kernel does).
// Both overlap modes rely, as every programmatic dependent does, on the kernel before the call having waited for its
// own predecessors before it finishes.
constexpr int kPdlOff = 0, kPdlLaunch = 1, kPdlPrefix = 2;

struct Params {
  const void* q;                    // [B, T, H, 576] bf16
  const void* kv;                   // [S, 576] bf16
  const int32_t* prefix_indptr;     // [B + 1]
  const int32_t* prefix_slots;      // [N]
  const int32_t* tree_slots;        // [B, T]
  const uint64_t* tree_mask;        // [B, T]
  void* out;                        // [B, T, H, 512] bf16
  float* lse;                       // [B, T, H] natural log, or nullptr
  void* part_o;                     // [B, splits, T*H, 512] bf16 (unused when splits == 1)
  float* part_lse;                  // [B, splits, T*H] log2 domain (unused when splits == 1)
  int batch, nodes, heads;
  int num_splits;
  float scale_log2;                 // sm_scale * log2(e): scores go straight to the exp2 domain
  int pdl = kPdlOff;                // how the split kernel overlaps the kernel before it (kPdl*, below)
};

inline int row_tiles(int nodes, int heads) { return (nodes * heads + kRowsPerBlock - 1) / kRowsPerBlock; }

// KV tokens a tile of this build's split kernel, the unit its splits are cut in: kTileTokens for v26 and v30, 64 for
// the wgmma builds (v40 and the sm_90a fp8 kernels). Each build's launcher translation unit defines it.
int split_tile_tokens();

// Splits of each request's (prefix + tree) sequence. Chosen from sizes known on the host without a device
// sync: one wave of blocks (the kernel runs one block per SM), at least kMinTilesPerSplit tiles of `tile_tokens`
// (the build's split_tile_tokens) of the average request per split, and none of its splits empty: the fewest splits
// that give it the same tiles a split. An empty split's block still wrote a partial the combine read: at (1,8,16)
// 5.7k, 179 tiles, 66 splits of 3 left 6 empty, and 60 took 2.7-3.6% less time on an H100, the other cases unmoved
// (kernel/NOTES.md, "Empty splits"); counted in v26's 32-token tiles, a 64-token build's 60 splits left 15 empty.
inline int choose_num_splits(int batch, int nodes, int heads, int64_t prefix_tokens, int num_sms,
                             int tile_tokens = kTileTokens) {
  const int64_t base = static_cast<int64_t>(batch) * row_tiles(nodes, heads);
  if (base >= num_sms) return 1;
  const int64_t by_sms = num_sms / base;
  const int64_t avg_tokens = (prefix_tokens + static_cast<int64_t>(batch) * nodes + batch - 1) / batch;
  const int64_t avg_tiles = (avg_tokens + tile_tokens - 1) / tile_tokens;
  int64_t by_ctx = avg_tiles / kMinTilesPerSplit;
  if (by_ctx < 1) by_ctx = 1;
  int64_t s = by_sms < by_ctx ? by_sms : by_ctx;
  if (s > kMaxSplits) s = kMaxSplits;
  if (s < 1) s = 1;
  const int64_t per_split = (avg_tiles + s - 1) / s;
  return static_cast<int>((avg_tiles + per_split - 1) / per_split);
}

// Elements of the partial buffers for a launch (0 when the kernel writes the output directly).
inline size_t partial_o_elems(int batch, int nodes, int heads, int splits) {
  return splits == 1 ? 0 : static_cast<size_t>(batch) * splits * nodes * heads * kVDim;
}
inline size_t partial_lse_elems(int batch, int nodes, int heads, int splits) {
  return splits == 1 ? 0 : static_cast<size_t>(batch) * splits * nodes * heads;
}

// Launches the split kernel (and the combine kernel when num_splits > 1, as its programmatic dependent on sm_90+) on
// `stream`; no allocation, no sync. Returns the first CUDA error (cudaErrorInvalidValue for a bad size, a missing
// buffer or a misaligned q / kv). The caller allocates part_o in bf16 (partial_o_elems) and part_lse in fp32.
cudaError_t launch_verify_attention(const Params& p, cudaStream_t stream);

// Writes n bf16 rows [n, 576] at index [n] (int64) of pool [pool_rows, 576], on `stream`: the engine's KV store,
// as a programmatic dependent of the kernel before it when `pdl` (the caller asks only on sm_90+;
// verify_attention_store.cuh). cudaErrorInvalidValue for a negative n or a null pointer.
cudaError_t launch_store_rows(void* pool, int64_t pool_rows, const int64_t* index, const void* rows, int n, bool pdl,
                              cudaStream_t stream);

// The kernel's version in the lab log (docs/lab/kernel-log.md): bench/table.py labels each result file with it.
constexpr int kKernelVersion = 26;

}  // namespace verify_attn
