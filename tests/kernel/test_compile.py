"""Compile checks of the CUDA kernel without a GPU: the sm_120 readiness proof (issue 3).

The torch-free translation unit `kernel/csrc/verify_attention_sm.cu` must build with plain `nvcc -cubin` for
sm_80, sm_90 and sm_120; ptxas must report no spills; static + dynamic shared memory must fit sm_120's 99 KB;
the sm_120 SASS must use HMMA (mma.sync) and no Hopper/Blackwell-datacenter-only matrix instruction (HGMMA =
wgmma, UTC*MMA = tcgen05). Skips cleanly where `nvcc` (or, for the SASS test, `cuobjdump`) is missing.
The parser tests at the end feed known-bad reports through the same checks, so the checks can fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[2] / "kernel" / "csrc"
TU = CSRC / "verify_attention_sm.cu"
ARCHS = ("80", "90", "120")
SMEM_LIMIT = 99 * 1024
FLAGS = ("-O3", "--use_fast_math", "-std=c++17")
FORBIDDEN_SASS = re.compile(r"\b(HGMMA|UTC\w*MMA\w*|tcgen05\S*)\b", re.IGNORECASE)


def find_nvcc() -> str | None:
    """nvcc on PATH, else under $CUDA_HOME / /usr/local/cuda."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    return None


def find_cuobjdump() -> str | None:
    """The cuobjdump shipped inside the installed `triton` wheel, else one on PATH."""
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin is not None:
        candidate = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("cuobjdump")


NVCC = find_nvcc()
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, $CUDA_HOME, /usr/local/cuda)")


@dataclass
class EntryReport:
    """ptxas -v figures for one kernel entry."""

    name: str
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    static_smem: int = 0


def parse_ptxas(text: str) -> dict[str, EntryReport]:
    """Per-entry registers, spills and static shared memory from `-Xptxas -v` output."""
    reports: dict[str, EntryReport] = {}
    current: EntryReport | None = None
    for line in text.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current = reports.setdefault(m.group(1), EntryReport(m.group(1)))
        elif current is not None and (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)):
            current.spill_stores, current.spill_loads = int(m.group(1)), int(m.group(2))
        elif current is not None and (m := re.search(r"Used (\d+) registers", line)):
            current.registers = int(m.group(1))
            smem = re.search(r"(\d+) bytes smem", line)
            current.static_smem = int(smem.group(1)) if smem else 0
    return reports


def problems(reports: dict[str, EntryReport], dynamic_smem: int) -> list[str]:
    """What violates the budget: any spill; the split kernel's static + dynamic shared memory over 99 KB."""
    found = []
    if not reports:
        found.append("no kernel entries in the ptxas report")
    for rep in reports.values():
        if rep.spill_stores or rep.spill_loads:
            found.append(f"{rep.name}: {rep.spill_stores} B spill stores, {rep.spill_loads} B spill loads")
        dynamic = dynamic_smem if "split_kernel" in rep.name else 0
        if rep.static_smem + dynamic > SMEM_LIMIT:
            found.append(f"{rep.name}: shared memory {rep.static_smem} + {dynamic} B > {SMEM_LIMIT} B")
    return found


def compile_cubin(arch: str, out_dir: Path, *extra: str) -> tuple[Path, str]:
    """nvcc -cubin for sm_<arch>; returns (cubin, ptxas report). Fails the test on a compile error."""
    assert NVCC is not None
    cubin = out_dir / f"verify_attention_sm{arch}.cubin"
    cmd = [NVCC, "-cubin", f"-arch=sm_{arch}", *FLAGS, "-Xptxas", "-v", *extra, "-o", str(cubin), str(TU)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return cubin, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """One cubin + ptxas report per architecture (compiled once for the module)."""
    if NVCC is None:
        pytest.skip("nvcc not found")
    out = tmp_path_factory.mktemp("cubins")
    return {arch: compile_cubin(arch, out) for arch in ARCHS}


@pytest.fixture(scope="module")
def dynamic_smem(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The dynamic shared memory the launcher requests (kSmemBytes), printed by a tiny host program."""
    if NVCC is None:
        pytest.skip("nvcc not found")
    return print_constant(tmp_path_factory.mktemp("smem"), "verify_attention.h", "kSmemBytes")


def print_constant(out: Path, header: str, name: str) -> int:
    """The int constant verify_attn::``name`` of kernel/csrc/``header``, printed by a tiny host program."""
    assert NVCC is not None
    src = out / "print_constant.cu"
    src.write_text(
        f'#include <cstdio>\n#include "{header}"\n'
        f'int main() {{ std::printf("%d\\n", verify_attn::{name}); return 0; }}\n'
    )
    exe = out / "print_constant"
    proc = subprocess.run(
        [NVCC, "-std=c++17", f"-I{CSRC}", "-o", str(exe), str(src)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return int(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_builds_without_spills_within_99kb(builds: dict[str, tuple[Path, str]], dynamic_smem: int, arch: str) -> None:
    cubin, report = builds[arch]
    assert cubin.stat().st_size > 0
    reports = parse_ptxas(report)
    splits = [name for name in reports if "split_kernel" in name]
    # The product has one kernel of each (no A/B versions), instantiated with the probe that observes nothing.
    assert len(splits) == 1, f"expected 1 split kernel, got {splits}:\n{report}"
    combines = [name for name in reports if "combine_kernel" in name]
    assert len(combines) == 1, f"expected 1 combine kernel, got {combines}:\n{report}"
    assert problems(reports, dynamic_smem) == [], report


# v26 as every device builds it; v30 as sm_90's product before v40 (kernel/build.py's v30bulkx2s6) under
# -DTIMELINE_V30; v40, sm_90's product, under -DTIMELINE_V40.
TIMELINE_BUILDS = {
    "v40": ("-gencode=arch=compute_90a,code=sm_90a", "-DTIMELINE_V40"),
    "v26": ("-arch=sm_90",),
    "v30": (
        "-gencode=arch=compute_90a,code=sm_90a",
        "-DTIMELINE_V30",
        "-DVERIFY_V30_BULK=1",
        "-DVERIFY_V30_XCH_BUFFERS=2",
        "-DVERIFY_V30_STAGES=6",
    ),
}


@needs_nvcc
@pytest.mark.parametrize("build", sorted(TIMELINE_BUILDS))
def test_timeline_tool_builds_on_the_product_kernels(tmp_path: Path, build: str) -> None:
    """kernel/tools/timeline.cu instruments the product kernels through their Probe parameter: it must keep building
    (a change to the kernels' template or launcher would otherwise break it unseen), without spills."""
    assert NVCC is not None
    tool = CSRC.parent / "tools" / "timeline.cu"
    cmd = [
        NVCC,
        "-cubin",
        *TIMELINE_BUILDS[build],
        *FLAGS,
        "-Xptxas",
        "-v",
        f"-I{CSRC}",
        "-o",
        str(tmp_path / "t.cubin"),
        str(tool),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    reports = parse_ptxas(proc.stdout + proc.stderr)
    observed = [name for name in reports if "TimelineProbe" in name]
    assert len(observed) == 2, f"expected the split and combine kernels with TimelineProbe, got {list(reports)}"
    for tag in ("v30", "v40"):
        seen = [name for name in observed if tag in name]
        assert len(seen) == (1 if build == tag else 0), f"the {build} build observed {observed}"
    assert [item for item in problems(reports, 0) if "spill" in item] == []


@needs_nvcc
def test_dynamic_smem_fits_sm120(dynamic_smem: int) -> None:
    assert 0 < dynamic_smem <= SMEM_LIMIT


def loads_before_the_wait(sass: str, kernel: str) -> list[str]:
    """The read-only-path loads (LDG...CONSTANT, __ldg: q) of `kernel`'s SASS that a thread may issue before it has
    passed a griddepcontrol.wait (ACQBULK): each such load must have an ACQBULK as the nearest wait-or-branch before
    it, and no branch may land between that wait and the load. Under pdl "prefix", ptxas had moved q's loads above a
    wait behind `if (early)` (nvcc 13.0, 8c85a02: the GPU's late-writer tests read q stale)."""
    code: list[tuple[int, str]] = []
    inside = False
    for line in sass.splitlines():
        if m := re.match(r"\s+Function : (\S+)", line):
            inside = kernel in m.group(1)
        elif inside and (m := re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)):
            code.append((int(m.group(1), 16), m.group(2)))
    assert code, f"no SASS for {kernel}"
    targets = {int(t, 16) for _, ins in code for t in re.findall(r"\bBRA(?:\.\S+)?\s+(?:`\()?0x([0-9a-f]+)", ins)}
    bad = []
    for i, (addr, ins) in enumerate(code):
        if not re.search(r"\bLDG\S*\.CONSTANT\b", ins):
            continue
        before = next((j for j in range(i - 1, -1, -1) if re.search(r"\bACQBULK\b|\bBRA\b", code[j][1])), None)
        if before is None or "ACQBULK" not in code[before][1]:
            bad.append(f"{addr:#06x} {ins}: no wait right before it")
        elif any(code[before][0] < t <= addr for t in targets):
            bad.append(f"{addr:#06x} {ins}: a branch lands between the wait at {code[before][0]:#06x} and it")
    return bad


@needs_nvcc
@pytest.mark.parametrize("arch", ["90", "120"])  # griddepcontrol (ACQBULK) exists from sm_90
def test_q_is_read_after_the_wait(builds: dict[str, tuple[Path, str]], arch: str) -> None:
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    sass = subprocess.run([tool, "-sass", str(builds[arch][0])], capture_output=True, text=True, check=True).stdout
    assert re.search(r"\bLDG\S*\.CONSTANT\b", sass) and "ACQBULK" in sass
    assert loads_before_the_wait(sass, "verify_attn_split_kernel") == []


def test_the_wait_check_catches_a_load_moved_above_a_conditional_wait() -> None:
    fine = """
        Function : _Z24verify_attn_split_kernel
        /*0070*/                   @P0 BRA 0x00a0 ;
        /*0080*/                   ACQBULK ;
        /*0090*/                   @!P3 LDG.E.CONSTANT R76, desc[UR14][R12.64] ;
        /*00a0*/                   EXIT ;
    """
    assert loads_before_the_wait(fine, "split_kernel") == []
    hoisted = fine.replace("/*0080*/                   ACQBULK", "/*0080*/                   NOP").replace(
        "/*00a0*/                   EXIT", "/*00a0*/                   ACQBULK"
    )
    assert len(loads_before_the_wait(hoisted, "split_kernel")) == 1
    landing = fine.replace("@P0 BRA 0x00a0", "@P0 BRA 0x0090")
    assert "a branch lands" in loads_before_the_wait(landing, "split_kernel")[0]


@needs_nvcc
def test_sm120_sass_uses_mma_sync_only(builds: dict[str, tuple[Path, str]]) -> None:
    tool = find_cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither in the triton wheel's backends/nvidia/bin nor on PATH)")
    cubin, _ = builds["120"]
    proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    sass = proc.stdout
    assert "sm_120" in sass or "SM120" in sass.upper(), "cuobjdump did not disassemble an sm_120 cubin"
    assert re.search(r"\bHMMA\.16816\.F32\.BF16\b", sass), "no bf16 m16n8k16 HMMA in the sm_120 SASS"
    assert re.search(r"\bLDSM\b", sass), "no ldmatrix (LDSM) in the sm_120 SASS"
    assert re.search(r"\bLDGSTS\b", sass), "no cp.async (LDGSTS) in the sm_120 SASS"
    assert FORBIDDEN_SASS.findall(sass) == []


@needs_nvcc
def test_spill_check_catches_a_register_cap(tmp_path: Path, dynamic_smem: int) -> None:
    """The same kernel squeezed to 128 registers (2 blocks per SM) must spill, and the check must say so."""
    _, report = compile_cubin("90", tmp_path, "-DVERIFY_ATTN_MIN_BLOCKS=2")
    found = problems(parse_ptxas(report), dynamic_smem)
    assert any("spill" in item for item in found), report


def test_checks_flag_spills_smem_and_forbidden_sass() -> None:
    report = (
        "ptxas info    : Compiling entry function '_ZN11verify_attn24verify_attn_split_kernelENS_6ParamsE' "
        "for 'sm_120'\n    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 16 barriers, 2048 bytes smem\n"
    )
    reports = parse_ptxas(report)
    (rep,) = reports.values()
    assert (rep.registers, rep.spill_stores, rep.spill_loads, rep.static_smem) == (255, 8, 4, 2048)
    found = problems(reports, dynamic_smem=SMEM_LIMIT)
    assert len(found) == 2 and "spill" in found[0] and "shared memory" in found[1]
    assert problems({}, 0) == ["no kernel entries in the ptxas report"]
    assert FORBIDDEN_SASS.findall("HGMMA.64x128x16.F32.BF16 R0, gdesc[UR4]; UTCHMMA gdesc[UR8]") == ["HGMMA", "UTCHMMA"]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


SPLIT_CASES = [  # (batch, nodes, heads, prefix tokens, SMs)
    (1, 16, 8, 91000, 132),
    (1, 64, 8, 91000, 132),
    (1, 32, 16, 23000, 132),
    (4, 16, 8, 4 * 91000, 132),
    (1, 8, 64, 5700, 132),
    (1, 16, 8, 5700, 132),
    (1, 1, 1, 0, 132),
    (16, 64, 128, 16 * 50, 132),
    (3, 7, 16, 1101, 132),
    (1, 16, 8, 10_000_000, 188),
    (2, 1, 1, 1, 188),
]


@needs_nvcc
@pytest.mark.parametrize("tile", [None, 64])
def test_split_count_bounds(tmp_path: Path, tile: int | None) -> None:
    """choose_num_splits (host side, no device sync): one wave, >= 2 tiles a split, <= kMaxSplits, and no split of
    the average request empty, counted in the build's tile (split_tile_tokens): v26's and v30's 32 tokens (the
    default argument), the wgmma builds' 64."""
    assert NVCC is not None
    extra = "" if tile is None else f", {tile}"
    lines = "".join(
        f'  std::printf("%d\\n", verify_attn::choose_num_splits({b}, {t}, {h}, {n}LL, {sms}{extra}));\n'
        for b, t, h, n, sms in SPLIT_CASES
    )
    src = tmp_path / "splits.cu"
    src.write_text(f'#include <cstdio>\n#include "verify_attention.h"\nint main() {{\n{lines}  return 0;\n}}\n')
    exe = tmp_path / "splits"
    proc = subprocess.run(
        [NVCC, "-std=c++17", f"-I{CSRC}", "-o", str(exe), str(src)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    # (1,8,16) 91k: 2 row tiles -> 66 would fill the 132 SMs, but 2,845 tiles at 44 a split need 65 (1,423 of 64
    # tokens at 22 a split, 65 too); 8 row tiles -> 16
    assert got[:3] == [65, 16, 16]
    # (1,8,16) 5.7k: 179 tiles, 3 a split in 60 splits, where 66 left 6 empty (kernel/NOTES.md, "Empty splits"); 90
    # tiles of 64 tokens, 2 a split in 45, where 60 left 15 empty
    assert got[SPLIT_CASES.index((1, 16, 8, 5700, 132))] == (60 if tile is None else 45)
    for (b, t, h, n, sms), splits in zip(SPLIT_CASES, got, strict=True):
        row_tiles = ceil_div(t * h, 64)
        avg_tiles = ceil_div(ceil_div(n + b * t, b), tile or 32)
        assert 1 <= splits <= 128
        if splits > 1:
            assert b * row_tiles * splits <= sms, (b, t, h, n, splits)
            assert avg_tiles // splits >= 2, (b, t, h, n, splits)
        per_split = ceil_div(avg_tiles, splits)
        assert ceil_div(avg_tiles, per_split) == splits, (b, t, h, n, splits)  # the last split holds a tile
    assert got[SPLIT_CASES.index((16, 64, 128, 16 * 50, 132))] == 1  # 2048 blocks already: no split


# (combine blocks, SMs, threads per SM, shared memory per SM, per block max, static, reserved per block): the H200
# (sm_90) and an RTX PRO 6000-like sm_120 (188 SMs, 1536 threads, 100 KB per SM).
SPREAD_CASES = [(b, 132, 2048, 233472, 232448, 3712, 1024) for b in (1, 132, 133, 256, 512, 1000, 1024, 1056, 8000)] + [
    (b, 188, 1536, 102400, 101376, 3712, 1024) for b in (1, 188, 189, 256, 700, 1128, 1129, 5000)
]


@needs_nvcc
def test_combine_spread_keeps_at_most_its_share_of_blocks_on_an_sm(tmp_path: Path) -> None:
    """combine_spread_smem (v19+): the reserved shared memory lets exactly ceil(blocks / SMs) combine blocks share an
    SM when the thread limit alone would allow more, and reserves nothing otherwise."""
    assert NVCC is not None
    lines = "".join(
        f'  std::printf("%zu\\n", verify_attn::combine_spread_smem({b}, {sms}, {thr}, {smem}, {mx}, {st}, {res}));\n'
        for b, sms, thr, smem, mx, st, res in SPREAD_CASES
    )
    src = tmp_path / "spread.cu"
    src.write_text(f'#include <cstdio>\n#include "verify_attention.cuh"\nint main() {{\n{lines}  return 0;\n}}\n')
    exe = tmp_path / "spread"
    proc = subprocess.run(
        [NVCC, "-std=c++17", "-arch=sm_90", f"-I{CSRC}", "-o", str(exe), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    for (blocks, sms, threads, smem, block_max, static, reserved), dyn in zip(SPREAD_CASES, got, strict=True):
        by_threads = threads // 256
        share = ceil_div(blocks, sms)
        fit = min(by_threads, smem // (static + dyn + reserved))
        assert static + dyn <= block_max, (blocks, sms, dyn)
        if share >= by_threads:
            assert dyn == 0, (blocks, sms, dyn)
        else:
            assert fit == share, (blocks, sms, dyn, fit, share)


def test_build_key_and_source_hash_cover_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited header must change the extension's module name (no stale build is ever loaded)."""
    pytest.importorskip("torch")
    from kernel import build

    for name in build.SOURCES + build.HEADERS:
        (tmp_path / name).write_bytes((CSRC / name).read_bytes())
    monkeypatch.setattr(build, "CSRC", tmp_path)
    before = build.source_hash()
    header = tmp_path / "verify_attention.cuh"
    header.write_bytes(header.read_bytes() + b"\n// edited\n")
    assert build.source_hash() != before
    assert set(build.CUDA_FLAGS) == {"-O3", "--use_fast_math", "-std=c++17"}


def test_cuda_backend_signature() -> None:
    """The contract kernel/verify.py dispatches to."""
    pytest.importorskip("torch")
    import inspect

    from kernel.cuda_backend import verify_attention_cuda

    params = list(inspect.signature(verify_attention_cuda).parameters)
    assert params == [
        "q",
        "kv_cache",
        "prefix_indptr",
        "prefix_slots",
        "tree_slots",
        "tree_mask",
        "sm_scale",
        "return_lse",
        "kv_scale",
        "pdl",
    ]
