"""kernel/tools/mma_probe.cu measures what it says (issue 17): every timed loop keeps its ldmatrix and mma.sync.

The first probe's loads were loop-invariant, so ptxas hoisted them (one LDSM per 64 HMMA in one loop): its
"ldmatrix" figures measured no ldmatrix. Here each probe kernel's timed loop must hold exactly the loads and MMAs
its source issues an iteration, in the product build and under the emulation (N/32 issues a real mma.sync), with
no spill. Needs nvcc 13 and the triton wheel's cuobjdump (skipped without them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernel.test_compile import NVCC, find_cuobjdump, parse_ptxas
from tests.kernel.test_emulation import compile_sass, loop_bodies, sass_functions

PROBE = Path(__file__).resolve().parents[2] / "kernel" / "tools" / "mma_probe.cu"
PER_ITER = 32  # kPerIter of the probe: MMAs (or chased loads) an iteration
# mode -> (LDSM, real mma.sync) an iteration: registers, ldmatrix-fed MMA, ldmatrix, ldmatrix.trans, the chase
EXPECTED = {
    0: (0, PER_ITER),
    1: (PER_ITER // 2, PER_ITER),
    2: (PER_ITER // 2, 0),
    3: (PER_ITER // 2, 0),
    4: (PER_ITER, 0),
}


@pytest.mark.skipif(NVCC is None or find_cuobjdump() is None, reason="nvcc or cuobjdump not found")
@pytest.mark.parametrize("n", [32, 85])
def test_each_probe_loop_keeps_its_loads_and_mmas(tmp_path: Path, n: int) -> None:
    sass, report = compile_sass(tmp_path, PROBE, f"-DVERIFY_MMA_REPEAT_X32={n}")
    assert [r.name for r in parse_ptxas(report).values() if r.spill_stores or r.spill_loads] == []
    seen = set()
    for name, instructions in sass_functions(sass).items():
        m = re.match(r"_Z5probeILi(\d)ELi(\d+)E", name)
        assert m, name
        mode = int(m.group(1))
        ldsm, mma = EXPECTED[mode]
        timed = max(loop_bodies(instructions), key=lambda c: c["LDSM"] + c["HMMA"])
        assert timed["LDSM"] == ldsm, (name, timed)
        assert timed["HMMA"] == mma * n // 32, (name, timed)  # one iteration: the loop is not unrolled
        seen.add(mode)
    assert seen == set(EXPECTED)
