// The fp8 kernel's translation unit (issue 28): instantiates verify_attention_fp8.cuh and defines its launcher. Built
// with binding_fp8.cpp by kernel/build.py load_fp8() for sm_89+ (e4m3 mma.sync), and on its own with plain
// `nvcc -cubin` for sm_90 and sm_120 by tests/kernel/test_compile.py.
#include "verify_attention_fp8.cuh"
#ifdef VERIFY_ATTN_FP8_WGMMA
#include "verify_attention_fp8_wgmma.cuh"
#endif
#ifdef VERIFY_F8WG_WS
#include "verify_attention_fp8_wgmma_ws.cuh"
#endif
#ifdef VERIFY_F8WG_ROWS
#include "verify_attention_fp8_wgmma_rows.cuh"
#endif

namespace verify_attn {

// A probe type of its own: the launcher's static per-device LaunchInfo and the combine kernel's instantiation stay
// apart from the bf16 product's when both modules live in one process; the sm_120-balance stand-in
// (VERIFY_MMA_REPEAT_X32 != 32, verify_attention_fp8.cuh) gets its own from BuildProbeOf, as the bf16 emulation does.
// The lab's one-term build (VERIFY_ATTN_FP8_Q1, kernel/build.py "fp8q1") likewise has its own: sharing the product's
// LaunchInfo, its stand-in's launch skipped its shared-memory attribute ("invalid argument", first H100 call).
struct Fp8Probe : NoProbe {};
struct Fp8Q1Probe : NoProbe {};
// The lab's wgmma builds (VERIFY_ATTN_FP8_WGMMA, kernel/build.py "fp8wg", "fp8wgq1"), sm_90a.
struct Fp8WgProbe : NoProbe {};
struct Fp8WgQ1Probe : NoProbe {};
// The warp-specialised ones (VERIFY_F8WG_WS, "fp8wgws", "fp8wgws4").
struct Fp8WgWsProbe : NoProbe {};
struct Fp8WgWs4Probe : NoProbe {};
// Rows owned by warps (VERIFY_F8WG_ROWS, "fp8wgr").
struct Fp8WgRProbe : NoProbe {};
// fp8wgr with swizzled stages and whole-line copies (VERIFY_F8WG_LINES, "fp8wgrw": sm_90's product), and with Q
// swizzled too (VERIFY_F8WG_Q_LINES, "fp8wgrwq"; lab).
struct Fp8WgRwProbe : NoProbe {};
struct Fp8WgRwqProbe : NoProbe {};
// fp8wgrwq with Q quantized in the split kernel (VERIFY_F8WG_Q_FUSED, "fp8wgrwf"; lab).
struct Fp8WgRwfProbe : NoProbe {};
#if defined(VERIFY_F8WG_ROWS) && defined(VERIFY_F8WG_Q_FUSED)
using Fp8BuildProbe = Fp8WgRwfProbe;
#elif defined(VERIFY_F8WG_ROWS) && defined(VERIFY_F8WG_Q_LINES)
using Fp8BuildProbe = Fp8WgRwqProbe;
#elif defined(VERIFY_F8WG_ROWS) && defined(VERIFY_F8WG_LINES)
using Fp8BuildProbe = Fp8WgRwProbe;
#elif defined(VERIFY_F8WG_ROWS)
using Fp8BuildProbe = Fp8WgRProbe;
#elif defined(VERIFY_F8WG_WS) && defined(VERIFY_F8WG_WS_STAGES) && VERIFY_F8WG_WS_STAGES == 4
using Fp8BuildProbe = Fp8WgWs4Probe;
#elif defined(VERIFY_F8WG_WS)
using Fp8BuildProbe = Fp8WgWsProbe;
#elif defined(VERIFY_ATTN_FP8_WGMMA) && defined(VERIFY_ATTN_FP8_Q1)
using Fp8BuildProbe = Fp8WgQ1Probe;
#elif defined(VERIFY_ATTN_FP8_WGMMA)
using Fp8BuildProbe = Fp8WgProbe;
#elif defined(VERIFY_ATTN_FP8_Q1)
using Fp8BuildProbe = Fp8Q1Probe;
#else
using Fp8BuildProbe = Fp8Probe;
#endif

cudaError_t launch_verify_attention_fp8(const Fp8Params& f, cudaStream_t stream) {
#if defined(VERIFY_F8WG_ROWS)
  return launch_split_and_combine_fp8_wgmma_rows<BuildProbeOf<Fp8BuildProbe>>(f, stream);
#elif defined(VERIFY_F8WG_WS)
  return launch_split_and_combine_fp8_wgmma_ws<BuildProbeOf<Fp8BuildProbe>>(f, stream);
#elif defined(VERIFY_ATTN_FP8_WGMMA)
  return launch_split_and_combine_fp8_wgmma<BuildProbeOf<Fp8BuildProbe>>(f, stream);
#else
  return launch_split_and_combine_fp8<BuildProbeOf<Fp8BuildProbe>>(f, stream);
#endif
}

#if defined(VERIFY_F8WG_ROWS) || defined(VERIFY_F8WG_WS) || defined(VERIFY_ATTN_FP8_WGMMA)
int split_tile_tokens() { return kWgTokens; }
#else
int split_tile_tokens() { return kTileTokens; }
#endif

}  // namespace verify_attn
