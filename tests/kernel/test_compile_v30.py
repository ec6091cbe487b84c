"""v30 (issue 17 part 2: producer warpgroup + mbarrier ring), sm_90's product before v40, compiled without a GPU.

`kernel/csrc/verify_attention_v30_sm.cu` with plain `nvcc -cubin` (nvcc 13) for the arch-specific targets it needs
(setmaxnreg): sm_90a and sm_120a. ptxas reports no spills and 168 registers at entry (384 threads, one block an SM);
the SASS holds the two setmaxnreg (the math warpgroups raised to 240, the producer lowered to 24), no register above
R239, the product's 136 HMMA in the tile loop (72 QK + 64 P.V) and no wgmma or tcgen05; the 4-stage build's shared
memory fits sm_120's 99 KB. A plain sm_90 build is refused (#error): v26 stays the portable path. Each device's
product build (kernel/build.py PRODUCT_BY_CC: one bulk copy a row) is clean on its target with no call in it (a bulk
copy into `.shared::cluster` was an extern call on sm_120a that disabled setmaxnreg and spilled 376 B), and its tile
loop has no block barrier: the pair's swap, plus the read barriers where the swap has one buffer. The sm_120-balance
emulation (VERIFY_MMA_REPEAT_X32) builds for v30 too, with the emulated HMMA count; at 240 registers it spills a
few bytes (bounded here). Skips where nvcc or cuobjdump is missing.
"""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path

import pytest

from kernel import build
from tests.kernel.test_compile import (
    FLAGS,
    FORBIDDEN_SASS,
    NVCC,
    SMEM_LIMIT,
    find_cuobjdump,
    loads_before_the_wait,
    parse_ptxas,
)
from tests.kernel.test_emulation import N, emulated_mmas, loop_bodies, probe_functions, sass_functions

CSRC = Path(__file__).resolve().parents[2] / "kernel" / "csrc"
TU = CSRC / "verify_attention_v30_sm.cu"
ARCHS = ("90a", "120a")
ENTRY_REGS = 168  # 65536 / 384, rounded down to 8: the cap setmaxnreg starts from
MATH_REGS, PRODUCER_REGS = 240, 24

needs_tools = pytest.mark.skipif(
    NVCC is None or find_cuobjdump() is None, reason="nvcc or cuobjdump not found (test_compile.py says where)"
)


def compile_v30(tmp: Path, arch: str, *extra: str) -> tuple[str, str]:
    """(SASS, ptxas report) of v30 for sm_<arch> (an arch-specific target)."""
    assert NVCC is not None
    cubin = tmp / f"v30_{arch}_{abs(hash(extra))}.cubin"
    gencode = f"-gencode=arch=compute_{arch},code=sm_{arch}"
    cmd = [NVCC, "-cubin", gencode, *FLAGS, "-Xptxas", "-v", f"-I{CSRC}", *extra, "-o", str(cubin), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    tool = find_cuobjdump()
    assert tool is not None
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300, check=True)
    return sass.stdout, proc.stdout + proc.stderr


def split_entry(report: str) -> tuple[int, int, int]:
    """(registers, spill stores, spill loads) of v30's split kernel."""
    (rep,) = [r for name, r in parse_ptxas(report).items() if "v30_split_kernel" in name]
    return rep.registers, rep.spill_stores, rep.spill_loads


def tile_loop(sass: str) -> collections.Counter[str]:
    """v30's tile loop: the smallest loop with MMAs in it (the mbarrier waits' retry blocks sit after the kernel and
    branch back into the loop, so the largest backward branch spans the loop and the epilogue)."""
    (split,) = [ins for name, ins in sass_functions(sass).items() if "v30_split_kernel" in name]
    return min((body for body in loop_bodies(split) if body["HMMA"]), key=lambda c: sum(c.values()))


def included(sources: tuple[str, ...]) -> list[str]:
    """The sources and every kernel/csrc file they #include "...", transitively."""
    seen: list[str] = []
    todo = list(sources)
    while todo:
        name = todo.pop()
        if name in seen or not (CSRC / name).is_file():
            continue
        seen.append(name)
        todo += re.findall(r'^\s*#include\s+"([^"]+)"', (CSRC / name).read_text(), re.M)
    return seen


def highest_register(instructions: list[tuple[int, str]]) -> int:
    return max(int(m) for _, text in instructions for m in re.findall(r"\bR(\d+)\b", text))


def assert_registers_split(split: list[tuple[int, str]]) -> None:
    """A split kernel with a producer warpgroup (v30, v40): setmaxnreg raises the math warps to MATH_REGS and lowers
    the producer to PRODUCER_REGS, no instruction names a register past the math warps' share, no local memory."""
    ops = [text for _, text in split]
    assert any(re.search(rf"USETMAXREG\.TRY_ALLOC\S*\s+\S+,\s*{MATH_REGS:#x}\b", t) for t in ops), "no setmaxnreg.inc"
    assert any(re.search(rf"USETMAXREG\.DEALLOC\S*\s+{PRODUCER_REGS:#x}\b", t) for t in ops), "no setmaxnreg.dec"
    assert highest_register(split) < MATH_REGS
    assert not any(re.match(r"(@!?P\w+\s+)?(LDL|STL)\b", t) for t in ops), "local memory in the split kernel"


@pytest.fixture(scope="module")
def v30_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    if NVCC is None or find_cuobjdump() is None:
        pytest.skip("nvcc or cuobjdump not found")
    tmp = tmp_path_factory.mktemp("v30")
    return {arch: compile_v30(tmp, arch) for arch in ARCHS}


@needs_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_v30_builds_without_spills_with_setmaxnreg_and_hmma_only(
    v30_builds: dict[str, tuple[str, str]], arch: str
) -> None:
    sass, report = v30_builds[arch]
    assert split_entry(report) == (ENTRY_REGS, 0, 0), report
    assert all(r.spill_stores == 0 and r.spill_loads == 0 for r in parse_ptxas(report).values()), report
    assert f"sm_{arch[:-1]}" in sass.lower() or f"sm{arch[:-1]}" in sass.lower()
    (split,) = [ins for name, ins in sass_functions(sass).items() if "v30_split_kernel" in name]
    assert_registers_split(split)
    loop = tile_loop(sass)
    assert loop["HMMA"] == 136 and loop["LDSM"] == 70, loop
    assert loop["BAR"] == 3, "the pair's S swap and the read barriers (no block barrier)"
    assert FORBIDDEN_SASS.findall(sass) == []
    assert re.search(r"\bHMMA\.16816\.F32\.BF16\b", sass)
    assert "LDGSTSBAR" in sass  # cp.async.mbarrier.arrive.noinc: the producer's stage completes on full


def host_ints(tmp: Path, header: str, *values: str) -> list[int]:
    """The int constants `values` (C++ expressions) of kernel/csrc's `header`, compiled and printed on the host."""
    assert NVCC is not None
    src = tmp / "print_values.cu"
    printed = ", ".join(f"static_cast<int>({v})" for v in values)
    src.write_text(
        f'#include <cstdio>\n#include "{header}"\n'
        f'int main() {{ std::printf("{" ".join(["%d"] * len(values))}\\n", {printed}); }}\n'
    )
    exe = tmp / "print_values"
    cmd = [NVCC, "-std=c++17", "-arch=sm_90", f"-I{CSRC}", "-o", str(exe), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]


@needs_tools
def test_v30_shared_memory_fits_sm120(tmp_path: Path) -> None:
    smem, threads = host_ints(
        tmp_path, "verify_attention_v30.cuh", "verify_attn::v30::kSmemBytes", "verify_attn::v30::kThreads"
    )
    # 4 stages of 16 rows x 1,168 B, the S swap, the masks, Q's rope block, 8 mbarriers.
    assert smem == 4 * 16 * 1168 + 16384 + 512 + 8192 + 64 == 99904 <= SMEM_LIMIT
    assert threads == 384


@needs_tools
def test_sm90s_ring_and_swap_buffers_do_not_build_for_sm120(tmp_path: Path) -> None:
    assert NVCC is not None
    flags = build.VARIANTS["v30bulkx2s6"][2]
    assert "-DVERIFY_V30_STAGES=6" in flags  # 153,696 B of shared memory: sm_90a's 227 KB only
    gencode = "-gencode=arch=compute_120a,code=sm_120a"
    cmd = [NVCC, "-cubin", gencode, *FLAGS, f"-I{CSRC}", *flags, "-o", str(tmp_path / "x.cubin"), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode != 0 and "must fit sm_120's 99 KB" in proc.stderr, proc.stderr


@needs_tools
def test_v30_refuses_a_portable_target(tmp_path: Path) -> None:
    assert NVCC is not None
    cmd = [NVCC, "-cubin", "-arch=sm_90", *FLAGS, f"-I{CSRC}", "-o", str(tmp_path / "x.cubin"), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode != 0 and "needs an arch-specific target" in proc.stderr


@needs_tools
def test_v30s_sm90_build_is_clean(tmp_path: Path) -> None:
    """v30bulkx2s6, sm_90's product until v40 and its A/B baseline since."""
    flags = build.VARIANTS["v30bulkx2s6"][2]
    sass, report = compile_v30(tmp_path, "90a", *flags)
    assert split_entry(report) == (ENTRY_REGS, 0, 0), report
    assert "C7506" not in report, report  # "setmaxnreg ignored to maintain compatibility into 'extern' call"
    assert not re.search(r"\bCALL\b", sass), "a call in the split kernel (setmaxnreg is dropped around one)"
    assert "UBLKCP" in sass and "LDGSTS" not in sass  # one bulk copy a row, no cp.async
    loop = tile_loop(sass)
    assert loop["HMMA"] == 136 and loop["LDSM"] == 70, loop
    # No block barrier: the pair's swap, and with one swap buffer the read barriers (a sync and an arrive).
    assert loop["BAR"] == (1 if "-DVERIFY_V30_XCH_BUFFERS=2" in flags else 3), loop
    # Names of its own: loaded beside another build, a shared launcher static skipped its shared-memory attribute.
    assert all("V30Probe_b1_" in n for n in probe_functions(sass)), list(sass_functions(sass))
    # q's loads (the read-only path) only past a griddepcontrol.wait (pdl "prefix").
    assert "ACQBULK" in sass and loads_before_the_wait(sass, "v30_split_kernel") == []


def test_product_by_device() -> None:
    for cuda in ((12, 8), (13, 0)):
        assert build.product_variant((9, 0), cuda) == "v40" and build.product_variant((12, 0), cuda) == "v26"
        for cc in ((8, 0), (8, 6), (8, 9), (10, 0), (12, 1)):
            assert build.product_variant(cc, cuda) == build.PORTABLE_VARIANT == "v26"
    # A toolkit before 12.8 (no .shared::cta bulk copy, no sm_120a) keeps v26 everywhere, as does none at all.
    for cuda in ((12, 4), (12, 6), (11, 8)):
        assert {build.product_variant(cc, cuda) for cc in ((9, 0), (12, 0), (8, 0))} == {"v26"}
    # v30's sm_120a build fits its 99 KB (4 stages, one swap buffer); sm_90a's 6-stage, 2-buffer build only sm_90.
    assert build.VARIANTS["v30bulk"][3] == ((9, 0), (12, 0))
    assert build.VARIANTS["v30bulkx2s6"][3] == ((9, 0),)


@needs_tools
def test_v30_under_the_sm120_balance_emulation(tmp_path: Path, v30_builds: dict[str, tuple[str, str]]) -> None:
    sass, report = compile_v30(tmp_path, "90a", *build.emulation_flags(N)[len(build.CUDA_FLAGS) :])
    registers, stores, loads = split_entry(report)
    assert registers == ENTRY_REGS and stores <= 16 and loads <= 16, report  # 12 / 8 B with nvcc 13.0
    assert tile_loop(sass)["HMMA"] == emulated_mmas(N)
    assert all(f"V30Probe_b0_s4_x1_rb1_r{N}" in name for name in probe_functions(sass))
    # What the benchmark emulates beside sm_120's product (v26): v30's sm_120a build, built for the H200.
    sm120 = "v30bulk"
    assert build.VARIANTS[sm120][3] == build.V30_ARCHS
    sass, report = compile_v30(
        tmp_path, "90a", *build.VARIANTS[sm120][2], *build.emulation_flags(N)[len(build.CUDA_FLAGS) :]
    )
    registers, stores, loads = split_entry(report)
    assert registers == ENTRY_REGS and stores <= 16 and loads <= 16, report
    assert tile_loop(sass)["HMMA"] == emulated_mmas(N) and "UBLKCP" in sass
    assert all(f"V30Probe_b1_s4_x1_rb1_r{N}" in name for name in probe_functions(sass))
    names = {arch: list(probe_functions(sass)) for arch, (sass, _) in v30_builds.items()}
    assert all("V30Probe_b0_s4_x1_rb1_r32" in name for found in names.values() for name in found), names


def test_variant_names_and_files() -> None:
    assert build.variant_build("v26") == (build.SOURCES, build.SOURCES + build.HEADERS, (), "")
    sources, hashed, flags, tag = build.variant_build("v30")
    assert sources == ("binding.cpp", "verify_attention_v30_sm.cu") and tag == "_v30" and flags == ()
    assert "verify_attention_v30.cuh" in hashed and "verify_attention_ptx.cuh" in hashed
    assert build.variant_build("v30bulk")[2] == ("-DVERIFY_V30_BULK=1",)
    assert build.source_hash(hashed) != build.source_hash()
    # Every file a build compiles is in its name's hash, so an edited header never loads a stale build.
    for name in (build.PORTABLE_VARIANT, *build.VARIANTS, build.FP8_VARIANT):
        sources, hashed, _, _ = build.variant_build(name)
        assert set(included(sources)) <= set(hashed), name
    with pytest.raises(ValueError, match=r"variant: expected one of v26, v30, v30bulk, .*, got 'v31'"):
        build.variant_build("v31")
