// The one seam through which a tool observes the verify kernels: each kernel is a template on a Probe type and
// calls it at a few points of a block's life. The product instantiates NoProbe, whose calls compile to nothing
// (its SASS is what the kernels would be without them); kernel/tools/timeline_instrument.cuh supplies a Probe
// that records per-block timestamps.
#pragma once

#include <type_traits>

#include "verify_attention_ptx.cuh"  // VERIFY_MMA_REPEAT_X32

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

// The probe a translation unit's launcher instantiates: Product itself, or in an sm_120-balance emulation build
// (VERIFY_MMA_REPEAT_X32 != 32, kernel/build.py) a type of its own derived from it. Such a build is loaded into the
// same process as the product's, and its own probe type gives its kernels and its launcher names of their own: the
// launcher's static per-device LaunchInfo is a process-wide (GNU unique) symbol, and shared with the product's it
// skipped the emulated kernel's shared-memory attribute (its launch failed with "invalid argument",
// docs/lab/kernel-log.md).
template <class Product>
struct EmulationProbe : Product {};
template <class Product>
using BuildProbeOf = std::conditional_t<VERIFY_MMA_REPEAT_X32 == 32, Product, EmulationProbe<Product>>;

}  // namespace verify_attn
