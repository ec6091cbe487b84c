// The one seam through which a tool observes the verify kernels: each kernel is a template on a Probe type and
// calls it at a few points of a block's life. The product instantiates NoProbe, whose calls compile to nothing
// (its SASS is what the kernels would be without them); kernel/tools/timeline_instrument.cuh supplies a Probe
// that records per-block timestamps.
#pragma once

namespace verify_attn {

// Where the split kernel calls Probe::split(point, tiles): tiles is the block's tile count (0 at entry).
enum ProbePoint : int {
  kBlockEntry = 0,       // first instruction of the block
  kFirstTileLanded = 1,  // tile 0 is in shared memory and Q is loaded (after the first barrier)
  kLoopEnd = 2,          // the tile loop is done; the epilogue (normalise, store) follows
  kBlockExit = 3,        // the last store has been issued
  kProbePoints = 4,
};

// The product's probe: observes nothing. The combine kernel calls combine(false) when its wait for the split grid
// returns and combine(true) after its last store.
struct NoProbe {
  __device__ __forceinline__ static void split(ProbePoint, int) {}
  __device__ __forceinline__ static void combine(bool) {}
};

}  // namespace verify_attn
