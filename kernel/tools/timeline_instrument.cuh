// The product kernels of kernel/csrc/verify_attention.cuh instantiated with TimelineProbe: thread 0 of every block
// records globaltimer and clock64 at the four ProbePoints of the split kernel, and the combine grid's first start
// and last end. Only kernel/tools/timeline.cu includes this; the product build instantiates NoProbe and carries
// none of it. Needs -I kernel/csrc. Built with -DTIMELINE_V30 (and v30's defines, an sm_90a or sm_120a target) it
// observes v30's split kernel (verify_attention_v30.cuh) instead of v26's, with -DTIMELINE_V40 (sm_90a) v40's
// (verify_attention_v40.cuh, sm_90's product); the combine is the same.
#pragma once

#include "verify_attention.cuh"
#if defined(TIMELINE_V30) && defined(TIMELINE_V40)
#error "timeline: observe one build, TIMELINE_V30 or TIMELINE_V40"
#endif
#ifdef TIMELINE_V30
#include "verify_attention_v30.cuh"
#elif defined(TIMELINE_V40)
#include "verify_attention_v40.cuh"
#endif

namespace verify_attn::timeline {

constexpr int kReps = 32, kBlocks = 1024;  // timed calls and blocks a call that are recorded

__device__ int rep;  // the timed call now running; set by the tool's marker kernel, -1 during warm-up
// [rep][block][point]: globaltimer (ns) and clock64 of thread 0 at each point; [rep][block]: the block's tiles.
__device__ unsigned long long split_ns[kReps][kBlocks][kProbePoints];
__device__ long long split_clk[kReps][kBlocks][kProbePoints];
__device__ int split_tiles[kReps][kBlocks];
__device__ unsigned long long combine_ns[kReps][2];  // first combine block's start (min), last block's end (max)

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

struct TimelineProbe {
  __device__ __forceinline__ static void split(ProbePoint point, int tiles) {
    if (threadIdx.x != 0) return;
    const int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (blk >= kBlocks || rep < 0 || rep >= kReps) return;
    split_ns[rep][blk][point] = globaltimer_ns();
    split_clk[rep][blk][point] = clock64();
    split_tiles[rep][blk] = tiles;
  }
  __device__ __forceinline__ static void combine(bool end) {
    if (threadIdx.x != 0 || rep < 0 || rep >= kReps) return;
    if (end) atomicMax(&combine_ns[rep][1], globaltimer_ns());
    else atomicMin(&combine_ns[rep][0], globaltimer_ns());
  }
};

// The observed build's tile, the unit its launcher's split count is chosen in (split_tile_tokens of its translation
// unit).
#ifdef TIMELINE_V40
constexpr int kSplitTileTokens = v40::kTokens;
#else
constexpr int kSplitTileTokens = kTileTokens;
#endif

// The product's launcher (same checks, grids, shared memory and programmatic dependent launch) on the observed
// kernels.
inline cudaError_t launch(const Params& p, cudaStream_t stream) {
#ifdef TIMELINE_V30
  return v30::launch<TimelineProbe>(p, stream);
#elif defined(TIMELINE_V40)
  return v40::launch<TimelineProbe>(p, stream);
#else
  return launch_split_and_combine<TimelineProbe>(p, stream);
#endif
}

}  // namespace verify_attn::timeline
