"""v40 (the bf16 tile on wgmma, issue 27's lab build for sm_90; kernel/csrc/verify_attention_v40.cuh), compiled
without a GPU.

`kernel/csrc/verify_attention_v40_sm.cu` with plain `nvcc -cubin` for sm_90a: ptxas reports no spill and 168
registers at entry (384 threads, one block an SM), and no C75xx warning (ptxas serialising the wgmma, each waited
for before the next, or ignoring setmaxnreg); the SASS holds the two setmaxnreg, no register above R239, the tile's
wgmma and nothing else on the tensor cores (QK 36 HGMMA.64x64x16 with both operands from shared memory, P.V 4
HGMMA.64x256x16 a warpgroup with V read MN-major, `.tnspB`; no mma.sync), and q's loads only past a
griddepcontrol.wait. A plain sm_90 build and any other target are refused (#error). Its shared memory fits sm_90's
227 KB. Skips where nvcc or cuobjdump is missing.
"""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path

import pytest

from kernel import build
from tests.kernel.test_compile import FLAGS, NVCC, find_cuobjdump, loads_before_the_wait, parse_ptxas
from tests.kernel.test_compile_v30 import ENTRY_REGS, assert_registers_split, host_ints
from tests.kernel.test_emulation import sass_functions

CSRC = Path(__file__).resolve().parents[2] / "kernel" / "csrc"
TU = CSRC / "verify_attention_v40_sm.cu"
SMEM_SM90 = 227 * 1024

needs_tools = pytest.mark.skipif(
    NVCC is None or find_cuobjdump() is None, reason="nvcc or cuobjdump not found (test_compile.py says where)"
)


def compile_v40(tmp: Path, gencode: str) -> subprocess.CompletedProcess[str]:
    assert NVCC is not None
    cmd = [NVCC, "-cubin", gencode, *FLAGS, "-Xptxas", "-v", f"-I{CSRC}", "-o", str(tmp / "v40.cubin"), str(TU)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def v40(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    if NVCC is None or find_cuobjdump() is None:
        pytest.skip("nvcc or cuobjdump not found")
    tmp = tmp_path_factory.mktemp("v40")
    proc = compile_v40(tmp, "-gencode=arch=compute_90a,code=sm_90a")
    assert proc.returncode == 0, proc.stderr
    tool = find_cuobjdump()
    assert tool is not None
    sass = subprocess.run([tool, "-sass", str(tmp / "v40.cubin")], capture_output=True, text=True, check=True)
    return sass.stdout, proc.stdout + proc.stderr


@needs_tools
def test_v40_builds_clean_on_wgmma_alone(v40: tuple[str, str]) -> None:
    sass, report = v40
    (rep,) = [r for name, r in parse_ptxas(report).items() if "v40_split_kernel" in name]
    assert (rep.registers, rep.spill_stores, rep.spill_loads) == (ENTRY_REGS, 0, 0), report
    assert not re.search(r"C75(0[0-9]|1[0-9]|20)", report), report  # wgmma serialised, or setmaxnreg ignored
    (split,) = [ins for name, ins in sass_functions(sass).items() if "v40_split_kernel" in name]
    assert_registers_split(split)
    ops = [text for _, text in split]
    mma = collections.Counter(m.group(0) for t in ops if (m := re.search(r"\b[HQ]?[GM]MMA\.\S+", t)))
    assert mma == {"HGMMA.64x64x16.F32.BF16": 36, "HGMMA.64x256x16.F32.BF16": 8}, mma
    assert all(".tnspB" in t for t in ops if "HGMMA.64x256x16" in t)
    assert not any(".tnsp" in t for t in ops if "HGMMA.64x64x16" in t)
    assert "LDGSTSBAR" in sass  # cp.async.mbarrier.arrive.noinc: the producer's stage completes on full
    assert loads_before_the_wait(sass, "v40_split_kernel") == []


@needs_tools
@pytest.mark.parametrize("gencode", ["-arch=sm_90", "-gencode=arch=compute_120a,code=sm_120a"])
def test_v40_refuses_other_targets(tmp_path: Path, gencode: str) -> None:
    proc = compile_v40(tmp_path, gencode)
    assert proc.returncode != 0 and "v40 needs sm_90a" in proc.stderr, proc.stderr


@needs_tools
def test_v40_shared_memory_fits_sm90(tmp_path: Path) -> None:
    smem, threads = host_ints(
        tmp_path, "verify_attention_v40.cuh", "verify_attn::v40::kSmemBytes", "verify_attn::v40::kThreads"
    )
    # 2 stages and Q of 64 rows x 1,152 B, P (64 x 64 bf16), the rescales, masks, slot ids, 7 mbarriers.
    assert smem == 3 * 64 * 1152 + 8192 + 256 + 512 + 512 + 56 == 230_712 <= SMEM_SM90
    assert threads == 384


def test_v40_is_sm90s_product_and_builds_for_sm90a_only() -> None:
    assert build.VARIANTS["v40"][3] == ((9, 0),) and "v40" in build.WGMMA_VARIANTS
    assert build.PRODUCT_BY_CC == {(9, 0): "v40"}
