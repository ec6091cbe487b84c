"""Compile checks of the fp8 KV cache kernel (issue 28, kernel/csrc/verify_attention_fp8.cuh) without a GPU.

The bar is sm_120 (and sm_89, the other device with native e4m3 mma.sync): plain `nvcc -cubin`, no spills, shared
memory within 99 KB, the split kernel's MMAs all QMMA.16832 e4m3 (no HMMA, no wgmma/tcgen05). On sm_90 ptxas has no
native e4m3 mma.sync: it unpacks each operand to f16 (F2FP.F16.E4M3.UNPACK_B) and issues two HMMA.16816 per MMA.
That build is correct (the GPU suite runs it on the H200) but no faster than bf16; the test pins the lowering, so a
toolkit that changes it is noticed (kernel/NOTES.md, "An fp8 KV cache: the kernel").
"""

from __future__ import annotations

import itertools
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.kernel.test_compile import (
    FLAGS,
    FORBIDDEN_SASS,
    NVCC,
    SMEM_LIMIT,
    find_cuobjdump,
    parse_ptxas,
    print_constant,
)

CSRC = Path(__file__).resolve().parents[2] / "kernel" / "csrc"
TU = CSRC / "verify_attention_fp8_sm.cu"
NATIVE = ("89", "120")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda)")


def compile_fp8(arch: str, out: Path) -> tuple[Path, str]:
    assert NVCC is not None
    cubin = out / f"fp8_sm{arch}.cubin"
    cmd = [NVCC, "-cubin", f"-arch=sm_{arch}", *FLAGS, "-Xptxas", "-v", "-o", str(cubin), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return cubin, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    if NVCC is None:
        pytest.skip("nvcc not found")
    out = tmp_path_factory.mktemp("fp8_cubins")
    return {arch: compile_fp8(arch, out) for arch in (*NATIVE, "90")}


@pytest.fixture(scope="module")
def fp8_smem(tmp_path_factory: pytest.TempPathFactory) -> int:
    """kF8SmemBytes, the dynamic shared memory the fp8 launcher requests, printed by a tiny host program."""
    if NVCC is None:
        pytest.skip("nvcc not found")
    return print_constant(tmp_path_factory.mktemp("fp8_smem"), "verify_attention_fp8.h", "kF8SmemBytes")


def split_sass(cubin: Path) -> str:
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    functions = re.split(r"\n\s*Function : ", proc.stdout)
    found = [f for f in functions if f.startswith("_ZN11verify_attn28verify_attn_split_kernel_fp8")]
    assert len(found) == 1, f"expected one fp8 split kernel in {cubin.name}, got {len(found)}"
    return found[0]


@needs_nvcc
@pytest.mark.parametrize("arch", NATIVE)
def test_fp8_kernel_builds_without_spills_within_99kb(
    builds: dict[str, tuple[Path, str]], fp8_smem: int, arch: str
) -> None:
    _, report = builds[arch]
    reports = parse_ptxas(report)
    names = sorted(reports)
    assert any("split_kernel_fp8" in n for n in names) and any("quantize_q" in n for n in names), names
    for rep in reports.values():
        assert rep.spill_stores == 0 and rep.spill_loads == 0, f"{rep.name} spills on sm_{arch}:\n{report}"
        dynamic = fp8_smem if "split_kernel_fp8" in rep.name else 0
        assert rep.static_smem + dynamic <= SMEM_LIMIT, f"{rep.name}: {rep.static_smem} + {dynamic} B"
    assert 0 < fp8_smem <= SMEM_LIMIT


@needs_nvcc
@pytest.mark.parametrize("arch", NATIVE)
def test_fp8_split_kernel_issues_native_e4m3_mma_sync_only(builds: dict[str, tuple[Path, str]], arch: str) -> None:
    sass = split_sass(builds[arch][0])
    # Per tile and warp: QK 2 terms x 9 k-steps x 4 n-tiles = 72, P.V 16 groups x 2 n-tiles = 32.
    assert len(re.findall(r"\bQMMA\.16832\.F32\.E4M3\.E4M3\b", sass)) == 104
    assert re.findall(r"\bHMMA\.", sass) == [], f"a bf16/f16 MMA in the sm_{arch} fp8 split kernel"
    assert FORBIDDEN_SASS.findall(sass) == []


@needs_nvcc
def test_sm90_lowers_e4m3_mma_sync_to_unpacks_and_f16_hmma(builds: dict[str, tuple[Path, str]]) -> None:
    sass = split_sass(builds["90"][0])
    assert re.findall(r"\bQMMA\.", sass) == []
    assert len(re.findall(r"\bHMMA\.16816\.F32\b", sass)) == 2 * 104
    assert len(re.findall(r"\bF2FP\.F16\.E4M3\.UNPACK_B\b", sass)) > 104


def compile_fp8_with(arch: str, out: Path, repeat_x32: int, spelled: bool = True) -> tuple[Path, str]:
    """The fp8 TU for sm_<arch> with -DVERIFY_MMA_REPEAT_X32=repeat_x32 (spelled out even at its default)."""
    assert NVCC is not None
    cubin = out / f"fp8_sm{arch}_x{repeat_x32}.cubin"
    define = [f"-DVERIFY_MMA_REPEAT_X32={repeat_x32}"] if spelled else []
    cmd = [NVCC, "-cubin", f"-arch=sm_{arch}", *FLAGS, *define, "-Xptxas", "-v", "-o", str(cubin), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return cubin, proc.stdout + proc.stderr


def issues(repeat_x32: int, count: int) -> int:
    """mma.sync issues of a sequence of `count` under VERIFY_MMA_REPEAT_X32 (verify_attention_ptx.cuh mma_issues)."""
    return sum(((s + 1) * repeat_x32) // 32 - (s * repeat_x32) // 32 for s in range(count))


@needs_nvcc
@pytest.mark.parametrize("repeat_x32", [85, 64])
def test_the_sm120_stand_in_issues_one_bf16_mma_per_e4m3_mma_k_times(repeat_x32: int, tmp_path: Path) -> None:
    """The sm_120-balance build of the fp8 kernel (kF8TimingStandIn), built for sm_90 as on an H100 or H200: in each
    e4m3 MMA's place a bf16 m16n8k16, issued as the bf16 emulation issues its own (QK's 72 a tile and warp in one
    sequence, P.V's 32 in another), no QMMA, no unpack, no spill. An opaque "mov 0" as S's mask let ptxas delete
    QK's 72 MMAs (204 HMMA at 85, not 276)."""
    cubin, report = compile_fp8_with("90", tmp_path, repeat_x32)
    sass = split_sass(cubin)
    bf16 = len(re.findall(r"\bHMMA\.16816\.F32\.BF16\b", sass))
    assert bf16 == issues(repeat_x32, 72) + issues(repeat_x32, 32) and len(re.findall(r"\bHMMA\.", sass)) == bf16
    assert re.findall(r"\bQMMA\.", sass) == [] and re.findall(r"UNPACK", sass) == []
    for rep in parse_ptxas(report).values():
        if "split_kernel_fp8" in rep.name:
            assert rep.spill_stores == 0 and rep.spill_loads == 0, report


@needs_nvcc
def test_the_lab_build_with_one_q_term_halves_qk(tmp_path: Path) -> None:
    """kernel/build.py's "fp8q1" (Q as one e4m3 term, design qkp: a lab build timed beside the product, never shipped):
    on sm_120 QK's 36 QMMA a tile and warp and P.V's 32, spill-free; its sm_120-balance stand-in on sm_90 issues the
    second half of QK's sequence (seq 36-71) and P.V's, as the product's stand-in issues all of it."""
    from kernel.build import FP8_BUILDS

    assert NVCC is not None
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    flags = FP8_BUILDS["fp8q1"]
    for arch, repeat_x32 in (("120", 32), ("90", 85)):
        cubin = tmp_path / f"q1_sm{arch}.cubin"
        cmd = [NVCC, "-cubin", f"-arch=sm_{arch}", *FLAGS, *flags, f"-DVERIFY_MMA_REPEAT_X32={repeat_x32}"]
        proc = subprocess.run([*cmd, "-Xptxas", "-v", "-o", str(cubin), str(TU)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        for rep in parse_ptxas(proc.stdout + proc.stderr).values():
            assert rep.spill_stores == 0 and rep.spill_loads == 0, proc.stderr
        sass = split_sass(cubin)
        # kernels and launcher statics of its own beside the product's in one process (Fp8Q1Probe): sharing the
        # product's LaunchInfo, its stand-in's first launch skipped its shared-memory attribute ("invalid argument")
        assert "Fp8Q1Probe" in sass.split("\n", 1)[0], sass[:200]
        if arch == "120":
            assert len(re.findall(r"\bQMMA\.16832\.F32\.E4M3\.E4M3\b", sass)) == 36 + 32
            assert re.findall(r"\bHMMA\.", sass) == []
        else:
            qk = sum(((s + 1) * repeat_x32) // 32 - (s * repeat_x32) // 32 for s in range(36, 72))
            assert len(re.findall(r"\bHMMA\.16816\.F32\.BF16\b", sass)) == qk + issues(repeat_x32, 32)


@needs_nvcc
@pytest.mark.parametrize("arch", NATIVE)
def test_the_stand_in_switch_at_its_default_is_the_product(arch: str, tmp_path: Path) -> None:
    """The switch's default is 32, the product: spelled out or not, the fp8 kernel compiles to the same SASS. (That
    the product's SASS did not change when the stand-in came, 8c35c2e, was checked against its parent by hand.)"""
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    sass = []
    for spelled in (False, True):
        (tmp_path / str(spelled)).mkdir()
        cubin, _ = compile_fp8_with(arch, tmp_path / str(spelled), 32, spelled)
        proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        sass.append(proc.stdout)
    assert sass[0] == sass[1]


# The ceilings' microkernels (bench/ceilings.py) must issue every MMA they count. v1 of the e4m3 one gave all its
# accumulators the same operands: on sm_90, where ptxas lowers e4m3 mma.sync to f16 unpacks and HMMAs, it computed
# A.B once and added it to each accumulator with FADDs (4 HMMA in the whole kernel), and the bench reported 1,807
# TFLOP/s on an H100 beside 652 for bf16. Per loop iteration of the 16-accumulator build: at least 16 MMAs (two
# HMMA each on sm_90), counted in the SASS of the kernel source alone (its torch launcher left out).
CEILING_KERNELS = {  # name: (the source's attribute, the kernel, its instantiation)
    "bf16": ("_MMA_SOURCE", "mma_peak_kernel", "template __global__ void mma_peak_kernel<16>(float*, int, float);"),
    "e4m3": ("_E4M3_SOURCE", "mma_e4m3_kernel", "template __global__ void mma_e4m3_kernel<16>(float*, int, unsigned);"),
}
MMAS_PER_INSTRUCTION = {  # (kernel, arch): SASS MMA instructions a source mma.sync issues as
    ("bf16", "90a"): (r"\bHMMA\.16816\.F32\.BF16\b", 1),
    ("bf16", "120a"): (r"\bHMMA\.16816\.F32\.BF16\b", 1),
    ("e4m3", "90a"): (r"\bHMMA\.16816\.F32\b", 2),
    ("e4m3", "89"): (r"\bQMMA\.16832\.F32\.E4M3\.E4M3\b", 1),
    ("e4m3", "120a"): (r"\bQMMA\.16832\.F32\.E4M3\.E4M3\b", 1),
}


@needs_nvcc
@pytest.mark.parametrize(("kernel", "arch"), sorted(MMAS_PER_INSTRUCTION), ids=lambda v: str(v))
def test_the_ceilings_microkernels_issue_every_mma_they_count(kernel: str, arch: str, tmp_path: Path) -> None:
    from bench import ceilings

    assert NVCC is not None
    attribute, name, instantiation = CEILING_KERNELS[kernel]
    source: str = getattr(ceilings, attribute)
    cut = source.index("\nvoid ")  # the first host function: the torch launcher
    cu = tmp_path / f"{kernel}.cu"
    cu.write_text(source[:cut] + "\n" + instantiation + "\n")
    cubin = tmp_path / f"{kernel}_sm{arch}.cubin"
    cmd = [NVCC, "-cubin", f"-arch=sm_{arch}", "-O3", "-o", str(cubin), str(cu)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300).stdout
    (function,) = [f for f in re.split(r"\n\s*Function : ", sass) if f.startswith(f"_Z{len(name)}{name}")]
    pattern, per = MMAS_PER_INSTRUCTION[(kernel, arch)]
    assert len(re.findall(pattern, function)) >= 16 * per, f"{name}<16> on sm_{arch} lost MMAs:\n{function[:4000]}"


@needs_nvcc
def test_the_wgmma_e4m3_ceiling_issues_its_16_wgmmas_a_round_pipelined(tmp_path: Path) -> None:
    """bench/ceilings.py's wgmma e4m3 microkernel (the fp8 floor's ceiling where the fp8 product is a wgmma build):
    m64n256k32 e4m3 only, 16 a round (ptxas may unroll the rounds), one wait a round, so that none is waited on singly
    (C7512 would make it a latency figure), and no spill."""
    from bench import ceilings

    assert NVCC is not None
    source = ceilings._WGMMA_E4M3_SOURCE
    cu = tmp_path / "wgmma_e4m3.cu"
    cu.write_text(source[: source.index("\nvoid ")] + "\n")
    cubin = tmp_path / "wgmma_e4m3.cubin"
    cmd = [NVCC, "-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-Xptxas", "-v", "-o", str(cubin), str(cu)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    log = proc.stdout + proc.stderr
    assert "C7512" not in log and "C7514" not in log, log
    for rep in parse_ptxas(log).values():
        assert rep.spill_stores == 0 and rep.spill_loads == 0, log
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300).stdout
    wgmmas = re.findall(r"\bQGMMA\.(\d+x\d+x\d+)\.F32\.E4M3\.E4M3\b", sass)
    assert wgmmas and set(wgmmas) == {"64x256x32"} and len(wgmmas) % 16 == 0, wgmmas
    # In program order the wgmmas come 16 at a time, each round's run closed by one wait and its result summed (an
    # FADD) before the next run: a round whose accumulators nothing reads is dropped by ptxas (f5aa191: 3 rounds in 4,
    # a "ceiling" four times the tensor cores' rate).
    kinds = {"QGMMA": "Q", "DEPBAR": "W", "FADD": "F"}
    order = "".join(
        next(c for k, c in kinds.items() if k in ln) for ln in sass.splitlines() if any(k in ln for k in kinds)
    )
    # The whole kernel, not only the runs that start with a wgmma: a wait left behind by a dropped round fails it too
    # (a helper's review: with `if (r & 1) total += d[0]` ptxas kept half the rounds and a per-run check passed).
    assert re.fullmatch(r"(Q{16}WF+)+", order), order
    assert re.findall(r"\b[HQ]MMA\.", sass) == []


def test_the_fp8_product_and_its_ceiling_by_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify_attention's fp8 build on a device (kernel/build.py fp8_product_variant) is FP8_VARIANT unless
    FP8_PRODUCT_BY_CC names one the toolkit builds (the wgmma builds need v30's CUDA 12.8); bench verify judges the fp8
    product against the ceiling of the instruction it issues (wgmma for a wgmma build, else mma.sync)."""
    from bench.verify import fp8_ceiling_kind
    from kernel import build

    for cc in ((8, 9), (9, 0), (12, 0)):
        assert build.fp8_product_variant(cc, (13, 0)) == build.FP8_PRODUCT_BY_CC.get(cc, build.FP8_VARIANT)
    assert set(build.FP8_PRODUCT_BY_CC.values()) <= set(build.FP8_ARCH_SPECIFIC)
    assert all(cc in build.FP8_ARCH_SPECIFIC[name] for cc, name in build.FP8_PRODUCT_BY_CC.items())
    monkeypatch.setitem(build.FP8_PRODUCT_BY_CC, (9, 0), "fp8wgr")
    monkeypatch.setattr(build, "nvcc_version", lambda: (13, 0))
    assert build.fp8_product_variant((9, 0), (13, 0)) == "fp8wgr"
    assert build.fp8_product_variant((9, 0), (12, 6)) == build.FP8_VARIANT  # too old a toolkit for the wgmma build
    assert build.fp8_product_variant((12, 0), (13, 0)) == build.FP8_VARIANT
    assert fp8_ceiling_kind((9, 0)) == "wgmma" and fp8_ceiling_kind((12, 0)) == "mma.sync"


def test_the_sm120_stand_in_is_checked_through_its_own_kernel_only_where_that_is_not_the_product() -> None:
    """bench verify times the mma.sync kernel's sm_120-balance stand-in unchecked, beside a cuda_fp8 that passed: where
    the device's fp8 product is another build (fp8wgr on sm_90), the mma.sync kernel's own check first; never for a lab
    build such as fp8q1, whose design breaks the flash-attention rule on purpose (a helper's review, 2026-12-07)."""
    from bench.verify import stand_in_needs_own_check
    from kernel import build

    assert stand_in_needs_own_check(build.FP8_VARIANT, "fp8wgr")
    assert not stand_in_needs_own_check(build.FP8_VARIANT, build.FP8_VARIANT)
    assert not stand_in_needs_own_check("fp8q1", "fp8wgr") and not stand_in_needs_own_check("fp8q1", build.FP8_VARIANT)


@needs_nvcc
@pytest.mark.parametrize(
    "variant, shapes",
    [
        ("fp8wg", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgq1", {"64x32x32": 18 + 16}),
        ("fp8wgws", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgws4", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgr", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgrw", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgrwq", {"64x64x32": 18, "64x32x32": 16}),
        ("fp8wgrwf", {"64x64x32": 18, "64x32x32": 16}),
    ],
)
def test_the_wgmma_lab_builds_issue_qgmma_only_without_spills(
    variant: str, shapes: dict[str, int], tmp_path: Path
) -> None:
    """kernel/build.py's wgmma fp8 builds (verify_attention_fp8_wgmma.cuh, sm_90a, lab): spill-free, their own probe
    type, and only wgmma e4m3 in the split kernel: QK one m64n64k32 a k-step over Q's two stacked terms (18; with one
    term 18 m64n32k32), P.V 16 m64n32k32 (8 m-blocks x 2 k-steps), no mma.sync at all (kernel/NOTES.md, "On Hopper's
    tensor cores")."""
    from kernel.build import FP8_ARCH_SPECIFIC, FP8_BUILDS

    assert NVCC is not None and FP8_ARCH_SPECIFIC[variant] == ((9, 0),)
    cubin = tmp_path / f"{variant}.cubin"
    cmd = [NVCC, "-cubin", "-gencode=arch=compute_90a,code=sm_90a", *FLAGS, *FP8_BUILDS[variant]]
    proc = subprocess.run([*cmd, "-Xptxas", "-v", "-o", str(cubin), str(TU)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for rep in parse_ptxas(proc.stdout + proc.stderr).values():
        assert rep.spill_stores == 0 and rep.spill_loads == 0, proc.stderr
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300).stdout
    found = [
        f for f in re.split(r"\n\s*Function : ", sass) if "verify_attn_split_kernel_fp8_wgmma" in f.split("\n", 1)[0]
    ]
    assert len(found) == 1, f"expected one wgmma split kernel, got {len(found)}"
    kernel = found[0]
    probe = {
        "fp8wg": "Fp8WgProbe",
        "fp8wgq1": "Fp8WgQ1Probe",
        "fp8wgws": "Fp8WgWsProbe",
        "fp8wgws4": "Fp8WgWs4Probe",
        "fp8wgr": "Fp8WgRProbe",
        "fp8wgrw": "Fp8WgRwProbe",
        "fp8wgrwq": "Fp8WgRwqProbe",
        "fp8wgrwf": "Fp8WgRwfProbe",
    }
    assert probe[variant] in kernel.split("\n", 1)[0], kernel[:200]
    found_shapes = dict(Counter(re.findall(r"\bQGMMA\.(\d+x\d+x\d+)\.F32\.E4M3\.E4M3\b", kernel)))
    assert found_shapes == shapes, found_shapes
    assert re.findall(r"\b[HQ]MMA\.", kernel) == []
    if "ws" in variant or variant.startswith("fp8wgr"):  # the decoupled ones: a producer warpgroup
        # The producer's registers handed to the math (ptxas drops a setmaxnreg it cannot place: C7508), and the entry
        # count that budget assumes (240 x 256 + 24 x 128 = 232 x 256 + 40 x 128 = 168 x 384): with fewer, the math's
        # setmaxnreg.inc would wait forever for registers no warp frees.
        assert "USETMAXREG.DEALLOC" in kernel and "USETMAXREG.TRY_ALLOC" in kernel, "setmaxnreg dropped"
        entry = [r for n, r in parse_ptxas(proc.stdout + proc.stderr).items() if "split_kernel_fp8_wgmma" in n]
        assert [r.registers for r in entry] == [168], entry
        # Descriptors built once and stepped in uniform registers: no R2UR between two QK wgmmas, and hardly any vector
        # instruction (ptxas may schedule a few of the scores' address sums there: 5 today; with each descriptor
        # built from its address, as before 2026-12-07, there were 125, 34 of them R2UR moves)
        lines = [ln.split("*/", 1)[1].strip() for ln in kernel.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", ln)]
        qk = [i for i, ln in enumerate(lines) if "QGMMA.64x64x32" in ln]
        assert len(qk) == shapes["64x64x32"], qk
        runs = [qk[i : i + 18] for i in range(0, len(qk), 18)]  # each copy of a tile's QK
        between = [ln for run in runs for a, b in itertools.pairwise(run) for ln in lines[a + 1 : b]]
        vector = [ln for ln in between if not ln.startswith(("U", "NOP"))]
        assert between and not any(ln.startswith("R2UR") for ln in vector) and len(vector) <= 17, vector
    if variant.startswith("fp8wgr"):
        assert "BAR.RED.OR" in kernel, "the tile's one barrier is not a bar.red.or of the rows that moved"
    # No wgmma waited on singly: ptxas serialises every wgmma of a kernel it cannot pipeline (C7512, e.g. for
    # registers), and then a WARPGROUP.DEPBAR follows each QGMMA
    assert "C7512" not in proc.stdout + proc.stderr and kernel.count("WARPGROUP.DEPBAR") < 8, "wgmma serialised"
