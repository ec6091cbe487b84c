// v40, the bf16 verify kernel on Hopper's tensor cores (issues 27 and 28's plan 0002 P7; sm_90a only; a lab build,
// kernel/build.py "v40"): FlashMLA's sm_90 shape on v30's producer warpgroup and fp8wgrw's swizzled stages.
//
// Why: v26's and v30's tile issues mma.sync, which the H200 runs at about 650 TFLOP/s against wgmma's ~990, and every
// mma.sync operand goes through ldmatrix into registers; the ablations put their MMA + ldmatrix skeleton alone at 47%
// of the floor at 23k (kernel/NOTES.md, "What bounds v30's tile on the H200"). Hopper's bf16 rate is reached through
// wgmma, whose operands come straight from shared memory.
//
// The block: 64 rows (one row tile), 384 threads: warpgroups 0 and 1 do the math (setmaxnreg: 240 registers), 2 is the
// producer (24). One 128-B-swizzled layout serves every operand: a row (a token of the ring, a row of Q) is 9 K-blocks
// of 64 dims x 128 B, row r's 16-B chunk j of a K-block at r * 128 + ((j ^ (r & 7)) << 4), 64 rows a K-block.
// - QK, warpgroup 0 alone: S[64 rows x 64 tokens] = Q . K^T, 36 m64n64k16 (A = Q, B = the stage, both K-major).
// - Softmax, warpgroup 0: a thread scores rows 16w + gq and + 8 over 16 tokens, 4 lanes a row (v26's lazy shift);
//   P goes to shared memory in bf16 (K-major, swizzled), each row's rescale beside it.
// - P.V, both warpgroups: O[64 rows x 256 dims] += P . V, 4 m64n256k16 a tile each (A = P, B = the stage's first 512
//   dims read MN-major: V needs no transpose); warpgroup w takes dims 256w .. 256w + 255, 128 fp32 registers.
// - Hand-over between the warpgroups through mbarriers of 128 arrivals (CUTLASS's pipelines): P full (warpgroup 0's
//   threads arrive once P and the rescales are written, 1 waits), P free (1 arrives once its P.V has read them, 0
//   waits before it writes the next tile's), and the epilogue's row sums; each math thread arrives on the stage's
//   empty mbarrier once its wgmma reads of the stage are done. (Named barriers between the two warpgroups, an arrive
//   on one side and a sync on the other or a sync on both, drew racecheck hazards, 12 and 18 on the small cases on
//   an H100 at b85970f and a4b1e4e, on hand-overs the PTX memory model orders; its mbarrier ring draws none.)
// - The producer: each quarter warp's cp.async copies one token's 128-B line (whole sectors, fp8wgrw's pattern), the
//   slot ids riding the ring (tile t's copies bring tile t + 2's); Q is copied by the math threads after their wait.
// - Epilogue: v26's write_rows (the wgmma accumulator of a warp is mma.sync's m16n8 layout, 32 n-tiles), its row
//   sums and shifts handed from warpgroup 0 to 1 through Q's space.
// Shared memory: 2 stages x 73,728 + Q 73,728 + P 8,192 + 1,336 B = 230,712 of sm_90's 232,448 B.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "verify_attention_v30.cuh"  // the mbarrier helpers; verify_attention.cuh's launch, softmax constants, epilogue
#include "verify_attention_wgmma_ptx.cuh"

namespace verify_attn {
namespace v40 {

constexpr int kTokens = 64;                                // a tile: QK's N, P.V's K
constexpr int kKBlocks = kHeadDim / 64;                    // 9 K-blocks of 64 dims a row
constexpr int kKBlockBytes = 64 * 128;                     // 8,192: 64 rows x 128 B
constexpr int kStageBytes = kKBlocks * kKBlockBytes;       // 73,728: a tile of 64 tokens
constexpr int kStages = 2;
constexpr int kQOff = kStages * kStageBytes;
constexpr int kPOff = kQOff + kKBlocks * kKBlockBytes;     // Q: the block's 64 rows
constexpr int kAlphaOff = kPOff + kKBlockBytes;            // P: 64 rows x 64 tokens, one K-block
constexpr int kMaskOff = kAlphaOff + kRowsPerBlock * 4;  // the rows' rescales of a tile
constexpr int kSlotOff = kMaskOff + kRowsPerBlock * 8;     // [kStages][64] slot ids, the ring's
constexpr int kBarOff = kSlotOff + kStages * kTokens * 4;  // full[kStages], empty[kStages], P full, P free, sums
constexpr int kSmemBytes = kBarOff + (2 * kStages + 3) * 8;
static_assert(kRowsPerBlock == 64 && kTokens == 64, "a row tile and a tile are each one K-block's 64 rows");
static_assert(kStageBytes % 1024 == 0 && kQOff % 1024 == 0 && kPOff % 1024 == 0, "operands on 1,024-B swizzle atoms");
static_assert(kSmemBytes <= 227 * 1024, "shared memory per block must fit sm_90's 227 KB");
constexpr int kMathThreads = 256;
constexpr int kThreads = kMathThreads + 128;  // + the producer warpgroup
constexpr int kMathRegs = 240;
constexpr int kProducerRegs = 24;
constexpr int kBarMath = 1;  // a named barrier of the 256 math threads (Q landed)
constexpr int kBarWg0 = 2;   // warpgroup 0's own (128 threads): the epilogue, past every warp's last QK

// Byte offset of row r's 16-B chunk c (c < 72) in a swizzled block of 64-row K-blocks.
__host__ __device__ constexpr uint32_t sw_chunk(int r, int c) {
  return static_cast<uint32_t>((c >> 3) * kKBlockBytes + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}
// QK's k-step ks (16 dims, 32 B) from a block's start: its K-block, then 32 B a step inside the 128-B line.
__host__ __device__ constexpr uint32_t qk_step(int ks) { return (ks >> 2) * kKBlockBytes + (ks & 3) * 32; }
static_assert(qk_step(35) == 8 * kKBlockBytes + 96, "36 k-steps over 576 dims");
// The producer's destination, folded by hand: producer warp pw's quarter warp q = lane / 8 copies tokens 16pw + q + 4k,
// lane % 8 the chunk, i.e. sw_chunk(16pw + q + 4k, sub) of K-block 0 (+ j K-blocks for the others). Its row is
// (16pw + q) * 128 + 512k, and its XOR (sub ^ q ^ 4 (k & 1)) << 4 flips bit 6 for odd k (q < 4 leaves bit 2 to k), so
// the lane's line offset for k = 0 plus 512k, XOR 64 for odd k: one add and one XOR a token in the 24-register producer.
__host__ __device__ constexpr uint32_t producer_lane_dst(int pw, int lane) {
  return static_cast<uint32_t>((16 * pw + (lane >> 3)) * 128 + (((lane & 7) ^ (lane >> 3)) << 4));
}
__host__ __device__ constexpr uint32_t producer_dst(uint32_t lane_dst, int k) {
  return (lane_dst + 512 * k) ^ (k & 1 ? 64 : 0);
}
// Checked here for every producer thread and token, at compile time.
constexpr bool producer_dst_is_sw_chunk() {
  for (int pw = 0; pw < 4; ++pw)
    for (int lane = 0; lane < 32; ++lane)
      for (int k = 0; k < 4; ++k)
        if (producer_dst(producer_lane_dst(pw, lane), k) != sw_chunk(16 * pw + (lane >> 3) + 4 * k, lane & 7))
          return false;
  return true;
}
static_assert(producer_dst_is_sw_chunk(), "the producer's folded destinations are sw_chunk's");

// S[64 x 64] (+)= A[64 x 16] . B[64 x 16]^T, bf16 -> fp32, both K-major from shared memory.
__device__ __forceinline__ void wgmma_qk(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(accumulate));
}
// O[64 x 256] += A[64 x 16] . B[16 x 256], bf16 -> fp32: A K-major (P), B MN-major (V, whose rows are tokens).
__device__ __forceinline__ void wgmma_pv(float (&d)[128], uint64_t a, uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
        "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
        "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
        "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
        "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
        "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
        "+f"(d[126]), "+f"(d[127])
      : "l"(a), "l"(b), "r"(1));
}
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The producer warpgroup: every tile of the split into stage t % kStages once the math has released it (empty),
// arriving on full when its copies land. Warp pw copies tokens 16pw .. 16pw + 15; its quarter warp q (lane / 8) tokens
// 16pw + q + 4k, k = 0..3, one 128-B line (a K-block of one token) an instruction, lane % 8 its chunk. Slot ids ride
// the ring (fp8wgrw's scheme): tile t's copies bring tile t + kStages's (lane l < 16 those of token 16pw + l) into
// the stage's slot area, read after the stage's empty wait; the first kStages tiles' are loaded before the loop.
// Past seq_end, or at a negative id: zero-filled. early (pdl "prefix"): the rows of a tile that holds a tree node are
// gathered only after the wait for the kernel before (Params::pdl); the plan (slot ids) before it.
__device__ __forceinline__ void produce(const Params& p, uint32_t base, uint32_t slots, uint32_t full, uint32_t empty,
                                        int b, int prefix_start, int prefix_len, int seq_end, int tile0, int ntiles,
                                        int pw, int lane, bool early) {
  const int own = 16 * pw + (lane & 15);
  const int q = lane >> 3, sub = lane & 7;
  const uint32_t lane_dst = producer_lane_dst(pw, lane);  // + producer_dst's fold a token: sw_chunk's, checked above
  store_first_slot_ids<kStages, kTokens>(p, slots, b, prefix_start, prefix_len, seq_end, tile0, ntiles, own, lane < 16);
  for (int t = 0; t < ntiles; ++t) {
    const int s = t % kStages;
    if (t >= kStages) v30::mbar_wait(empty + 8 * s, ((t / kStages) - 1) & 1);
    if (early && (tile0 + t + 1) * kTokens > prefix_len) {
      pdl_wait_primary();  // this tile holds a tree node's row, which the kernel before may write
      early = false;
    }
    const uint32_t area = slots + 4 * s * kTokens, stage = base + s * kStageBytes;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int token = 16 * pw + q + 4 * k;
      int id;
      asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(id) : "r"(area + 4 * token) : "memory");
      const bool in = (tile0 + t) * kTokens + token < seq_end && id >= 0;
      const char* src = static_cast<const char*>(p.kv) + static_cast<int64_t>(in ? id : 0) * kRowBytes + sub * 16;
      const uint32_t dst = stage + producer_dst(lane_dst, k);
#pragma unroll
      for (int j = 0; j < kKBlocks; ++j) cp_async_16(dst + j * kKBlockBytes, src + j * 128, in ? 16 : 0);
    }
    __syncwarp();
    const int ahead = (tile0 + t + kStages) * kTokens + own;
    if (lane < 16 && t + kStages < ntiles)
      cp_async_slot_id(p, area + 4 * own, b, prefix_start, prefix_len, seq_end, ahead);  // tile t + kStages's ids
    v30::cp_async_arrive_noinc(full + 8 * s);
  }
  pdl_launch_dependents();
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // nothing in flight past the producer's exit
}

template <class Probe>
__global__ void __launch_bounds__(kThreads, 1) verify_attn_v40_split_kernel(const Params p) {
  Probe::split(kBlockEntry, 0);
  extern __shared__ __align__(1024) unsigned char smem_v40[];
  unsigned char* const smem = smem_v40;
  const uint32_t base = smem_addr(smem);
  uint64_t* s_mask = reinterpret_cast<uint64_t*>(smem + kMaskOff);
  float* s_alpha = reinterpret_cast<float*>(smem + kAlphaOff);
  const uint32_t full = base + kBarOff, empty = full + kStages * 8;
  const uint32_t p_full = empty + kStages * 8, p_free = p_full + 8, sums_full = p_free + 8;

  const int b = blockIdx.z, split = blockIdx.y;
  const int rows = p.nodes * p.heads;
  const int row0 = blockIdx.x * kRowsPerBlock;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  const bool early = p.pdl == kPdlPrefix;  // the plan and the prefix's rows before the wait (Params::pdl)
  if (!early) pdl_wait_primary();
  const SplitRange sp = split_range<kTokens>(p, b, split);  // (plain names: lambdas below capture them)
  const int prefix_start = sp.prefix_start, prefix_len = sp.prefix_len, tile0 = sp.tile0, ntiles = sp.ntiles;
  const int seq_end = sp.seq_end;

  if (tid < kStages) {
    v30::mbar_init(full + 8 * tid, 128);            // every producer thread (cp.async.mbarrier.arrive.noinc)
    v30::mbar_init(empty + 8 * tid, kMathThreads);  // every math thread, after its last read of the stage
  }
  if (tid == kStages) {  // each a warpgroup's 128 threads
    v30::mbar_init(p_full, 128);
    v30::mbar_init(p_free, 128);
    v30::mbar_init(sums_full, 128);
  }
  if (tid < kRowsPerBlock) {
    s_mask[tid] = row_tree_mask(p, b, rows, row0 + tid);
  }
  __syncthreads();

  if (warp >= kMathThreads / 32) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
    // The 128-B swizzle needs 1,024-B aligned operands; the statement of that assumption (ptxas may prove it).
    if (tid == kMathThreads && (base & 1023) != 0) __trap();
    produce(p, base, base + kSlotOff, full, empty, b, prefix_start, prefix_len, seq_end, tile0, ntiles,
            warp - kMathThreads / 32, lane, early);
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMathRegs));
  const int wg = warp >> 2, wq = warp & 3;
  const int gq = lane >> 2, cq = lane & 3;
  const int r0 = 16 * wq + gq, r1 = r0 + 8;  // this thread's two rows (of the block's 64), in QK's S and in O

  // Q, which the kernel before may write: 64 rows x 9 lines, a quarter warp a line (18 each), after the wait; none
  // for an empty split.
  pdl_wait_primary();
  if (ntiles > 0) {
    const __nv_bfloat16* qb =
        after_wait(static_cast<const __nv_bfloat16*>(p.q)) + static_cast<int64_t>(b) * rows * kHeadDim;
    const int qw = tid >> 3, sub = tid & 7;
#pragma unroll 6
    for (int i = 0; i < 18; ++i) {
      const int line = qw + 32 * i, r = line & 63, kb = line >> 6;
      const __nv_bfloat16* src = qb + static_cast<int64_t>(min(row0 + r, rows - 1)) * kHeadDim + kb * 64 + sub * 8;
      cp_async_16(base + kQOff + sw_chunk(r, 8 * kb + sub), src, row0 + r < rows ? 16 : 0);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    fence_proxy_async();  // these writes, then QK's wgmma reads (the async proxy), past the barrier
  }
  bar_sync(kBarMath, kMathThreads);
  if (ntiles > 0) Probe::split(kFirstTileLanded, ntiles);

  float o[32][4];
#pragma unroll
  for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float(&o_flat)[128] = *reinterpret_cast<float(*)[128]>(&o[0][0]);
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;
  // Descriptors from the warp's lane 0, so that they sit in uniform registers.
  const int wg0 = __shfl_sync(0xffffffffu, wg, 0);
  const uint64_t p_desc = wg_desc_sw128(base + kPOff);
  const auto rescale = [&](float a0, float a1) {
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      o[n][0] *= a0;
      o[n][1] *= a0;
      o[n][2] *= a1;
      o[n][3] *= a1;
    }
  };
  // O += P . V over stage s, this warpgroup's 256 dims (K-blocks 4 wg .. 4 wg + 3), then the stage's reads are done.
  const auto pv = [&](int s) {
    const uint64_t v_desc = wg_desc_sw128_mn(base + s * kStageBytes + wg0 * 4 * kKBlockBytes, kKBlockBytes);
    wg_keep(o_flat);
    wg_fence();
#pragma unroll
    for (int ks = 0; ks < kTokens / 16; ++ks)
      wgmma_pv(o_flat, wg_desc_step(p_desc, 32 * ks), wg_desc_step(v_desc, 16 * 128 * ks));
    wg_commit();
    wg_wait<0>();
    wg_keep(o_flat);
  };

  if (wg == 0) {
    const uint64_t q_desc = wg_desc_sw128(base + kQOff);
    const uint64_t mask0 = s_mask[r0], mask1 = s_mask[r1];
    unsigned char* const p_rows = smem + kPOff;
    const float scale = p.scale_log2;
    float s_acc[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) s_acc[i] = 0.f;
    for (int t = 0; t < ntiles; ++t) {
      const int s = t % kStages;
      v30::mbar_wait(full + 8 * s, (t / kStages) & 1);
      fence_proxy_async();  // the copies' writes, then wgmma's reads (the async proxy)
      const uint64_t k_desc = wg_desc_sw128(base + s * kStageBytes);
      wg_keep(s_acc);
      wg_fence();
#pragma unroll
      for (int ks = 0; ks < kHeadDim / 16; ++ks)
        wgmma_qk(s_acc, wg_desc_step(q_desc, qk_step(ks)), wg_desc_step(k_desc, qk_step(ks)), ks > 0);
      wg_commit();
      wg_wait<0>();
      wg_keep(s_acc);
      // Scores in the exp2 domain, masked: s_acc[4j + e] is row r0's token 8j + 2cq + e, s_acc[4j + 2 + e] row r1's.
      const int pos_base = (tile0 + t) * kTokens + 2 * cq;
      const auto scores = [&](auto masked_tile) {
        constexpr bool masked = decltype(masked_tile)::value;
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float v0 = s_acc[4 * j + e] * scale, v1 = s_acc[4 * j + 2 + e] * scale;
            if (masked) {
              const int pos = pos_base + 8 * j + e;
              bool ok0 = pos < seq_end, ok1 = ok0;
              if (ok0 && pos >= prefix_len) {
                ok0 = (mask0 >> (pos - prefix_len)) & 1ull;
                ok1 = (mask1 >> (pos - prefix_len)) & 1ull;
              }
              v0 = ok0 ? v0 : -INFINITY;
              v1 = ok1 ? v1 : -INFINITY;
            }
            s_acc[4 * j + e] = v0;
            s_acc[4 * j + 2 + e] = v1;
          }
      };
      if ((tile0 + t) * kTokens + kTokens > min(seq_end, prefix_len)) {
        scores(std::true_type{});
      } else {
        scores(std::false_type{});
      }
      float mx0 = s_acc[0], mx1 = s_acc[2];
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          mx0 = fmaxf(mx0, s_acc[4 * j + e]);
          mx1 = fmaxf(mx1, s_acc[4 * j + 2 + e]);
        }
      mx0 = quad_max(mx0);
      mx1 = quad_max(mx1);
      const bool move0 = mx0 > m0 + kLazyShift, move1 = mx1 > m1 + kLazyShift;
      const float a0 = move0 ? exp2f(m0 - mx0) : 1.f, a1 = move1 ? exp2f(m1 - mx1) : 1.f;
      m0 = move0 ? mx0 : m0;
      m1 = move1 ? mx1 : m1;
      l0 *= a0;
      l1 *= a1;
      const float sh0 = m0 == -INFINITY ? 0.f : m0, sh1 = m1 == -INFINITY ? 0.f : m1;
      uint32_t pk0[8], pk1[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float p00 = exp2f(s_acc[4 * j] - sh0), p01 = exp2f(s_acc[4 * j + 1] - sh0);
        const float p10 = exp2f(s_acc[4 * j + 2] - sh1), p11 = exp2f(s_acc[4 * j + 3] - sh1);
        l0 += p00 + p01;
        l1 += p10 + p11;
        pk0[j] = pack_bf16(p00, p01);
        pk1[j] = pack_bf16(p10, p11);
      }
      if (t > 0) v30::mbar_wait(p_free, (t - 1) & 1);  // warpgroup 1's P.V of the tile before has read P
      // P's rows r0 and r1 (both r % 8 = gq): tokens 8j + 2cq, + 1 in chunk j at byte 4cq.
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        *reinterpret_cast<uint32_t*>(p_rows + sw_chunk(r0, j) + 4 * cq) = pk0[j];
        *reinterpret_cast<uint32_t*>(p_rows + sw_chunk(r1, j) + 4 * cq) = pk1[j];
      }
      if (cq == 0) {
        s_alpha[r0] = a0;
        s_alpha[r1] = a1;
      }
      fence_proxy_async();  // P's writes, then P.V's reads (the async proxy)
      __syncwarp();         // this warp's own P.V reads its lanes' rows 16wq .. 16wq + 15 of P (FA3's order)
      v30::mbar_arrive(p_full);
      if (__any_sync(0xffffffffu, move0 || move1)) rescale(a0, a1);
      pv(s);
      v30::mbar_arrive(empty + 8 * s);
    }
  } else {
    for (int t = 0; t < ntiles; ++t) {
      const int s = t % kStages;
      v30::mbar_wait(full + 8 * s, (t / kStages) & 1);
      v30::mbar_wait(p_full, t & 1);
      fence_proxy_async();  // the stage's copies and P's writes, then this warpgroup's wgmma reads (the async proxy)
      const float a0 = s_alpha[r0], a1 = s_alpha[r1];
      if (__any_sync(0xffffffffu, a0 != 1.f || a1 != 1.f)) rescale(a0, a1);
      pv(s);
      v30::mbar_arrive(p_free);  // P and the rescales read (P.V has completed)
      v30::mbar_arrive(empty + 8 * s);
    }
  }
  Probe::split(kLoopEnd, ntiles);
  pdl_launch_dependents();

  // Warpgroup 1 takes the row sums' partials and the shifts of its twin thread in warpgroup 0 through Q's space, so
  // that write_rows' quad sums are the same in both. Thread tid's slot is Q's row tid / 8 (K-block 0), for warps 1-3
  // rows that warp 0's QK reads: so warpgroup 0 first meets at a barrier of its own, past which every warp's last QK
  // has completed (since the hand-overs are mbarriers, nothing else orders warpgroup 0's warps among themselves).
  float4* const hand = reinterpret_cast<float4*>(smem + kQOff);
  if (wg == 0) {
    wg_bar(kBarWg0);
    hand[tid] = make_float4(l0, l1, m0, m1);
    v30::mbar_arrive(sums_full);
  } else {
    v30::mbar_wait(sums_full, 0);
    const float4 h = hand[tid - 128];
    l0 = h.x, l1 = h.y, m0 = h.z, m1 = h.w;
  }
  write_rows(p, b, split, rows, row0, 16 * wq, wg, gq, cq, o, m0, m1, l0, l1);
  Probe::split(kBlockExit, ntiles);
}

// v40's launcher: v30's with this split kernel, its threads and shared memory. Its own template, so its static
// per-device LaunchInfo is not another build's.
template <class Probe>
inline cudaError_t launch(const Params& p, cudaStream_t stream) {
  return launch_split_kernel_and_combine<Probe, verify_attn_v40_split_kernel<Probe>>(p, stream, kThreads, kSmemBytes);
}

}  // namespace v40
}  // namespace verify_attn
