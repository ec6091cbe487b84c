"""The sm_120-balance emulation without a GPU (issue 17): what the builds contain, how k is chosen and judged, and
the shape of what a run records.

- SASS (nvcc 13 and the triton wheel's cuobjdump; skipped without them): the product's tile loop keeps its 136
  mma.sync and 70 ldmatrix with the switch off; an emulation build issues floor(72 k) + floor(64 k) mma.sync in the
  same loop with the same ldmatrix and no spill; the emulation's HMMA-only check loop issues N a period of 32.
- k: N = round(32 x the H200's FLOP per SM-clock / 1,024), refused outside 1 <= k < 4; the check's verdict.
- The result file: the emulated cases under their own metrics with `emulation = "sm120-balance"`, accepted by the
  tracker's reader, and never read as measured fractions by `bench.table`.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import ceilings, results, table
from bench.timing import summarize
from bench.verify import EMULATED, EMULATION_LABEL, MEASURED, Case, Emulation, format_table
from kernel import build
from tests.kernel.test_compile import FLAGS, NVCC, find_cuobjdump, parse_ptxas

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "kernel" / "csrc"
TU = CSRC / "verify_attention_sm.cu"
QK_MMAS, PV_MMAS = 72, 64  # a warp's mma.sync a tile: QK's 16 latent + 2 rope k-steps x 4, P.V's 2 x 32
LDSM_PER_TILE = 70  # a warp's ldmatrix a tile: QK 32 + rope 4 (+ 2 for Q's rope), P.V 32

needs_tools = pytest.mark.skipif(
    NVCC is None or find_cuobjdump() is None, reason="nvcc or cuobjdump not found (test_compile.py says where)"
)


def issues(seq: int, n: int) -> int:
    """mma_issues of verify_attention_ptx.cuh: the seq-th mma.sync of a sequence is issued this many times."""
    return ((seq + 1) * n) // 32 - (seq * n) // 32


def emulated_mmas(n: int) -> int:
    """A warp's HMMA a tile under N: QK (with rope) and P.V are two sequences."""
    return sum(issues(i, n) for i in range(QK_MMAS)) + sum(issues(i, n) for i in range(PV_MMAS))


def sass_functions(text: str) -> dict[str, list[tuple[int, str]]]:
    """cuobjdump -sass text -> {function: [(address, instruction)]}."""
    found: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in text.splitlines():
        if m := re.match(r"\s+Function : (\S+)", line):
            current = found.setdefault(m.group(1), [])
        elif current is not None and (m := re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)):
            current.append((int(m.group(1), 16), m.group(2)))
    return found


STORE_KERNEL = "verify_attn_store_rows_kernel"


def probe_functions(text: str) -> dict[str, list[tuple[int, str]]]:
    """sass_functions less the engine's store kernel (verify_attention_store.cuh), which needs no probe type for a
    name of its own: it is in an anonymous namespace, a name per translation unit (asserted here)."""
    found = sass_functions(text)
    stores = [name for name in found if STORE_KERNEL in name]
    assert all("_GLOBAL__N_" in name for name in stores), stores
    return {name: code for name, code in found.items() if STORE_KERNEL not in name}


def opcode(instruction: str) -> str:
    return re.sub(r"^@!?U?P[T0-9]\s+", "", instruction).split()[0].split(".")[0]


def loop_bodies(instructions: list[tuple[int, str]]) -> list[collections.Counter[str]]:
    """The opcodes of every backward branch's body (target..branch), innermost loops included."""
    bodies = []
    for addr, text in instructions:
        m = re.search(r"\bBRA(?:\.\w+)*\s+(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            start = int(m.group(1), 16)
            bodies.append(collections.Counter(opcode(t) for a, t in instructions if start <= a <= addr))
    return bodies


def compile_sass(tmp: Path, source: Path, *flags: str) -> tuple[str, str]:
    """(SASS, ptxas report) of a cubin for sm_90 (the H200 the emulation runs on)."""
    assert NVCC is not None
    cubin = tmp / f"{source.stem}-{abs(hash(flags))}.cubin"
    cmd = [NVCC, "-cubin", "-arch=sm_90", *FLAGS, "-Xptxas", "-v", f"-I{CSRC}", *flags, "-o", str(cubin), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    tool = find_cuobjdump()
    assert tool is not None
    sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=300, check=True)
    return sass.stdout, proc.stdout + proc.stderr


def tile_loop(sass: str) -> collections.Counter[str]:
    """The split kernel's largest loop: the tile loop."""
    (split,) = [ins for name, ins in sass_functions(sass).items() if "split_kernel" in name]
    return max(loop_bodies(split), key=lambda c: sum(c.values()))


N = 85  # 32 k for the H200's measured 2,708 FLOP per SM-clock (docs/lab/kernel-log.md, issue 17)


@pytest.fixture(scope="module")
def kernel_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, str]]:
    if NVCC is None or find_cuobjdump() is None:
        pytest.skip("nvcc or cuobjdump not found")
    tmp = tmp_path_factory.mktemp("emulation")
    return {
        32: compile_sass(tmp, TU),
        N: compile_sass(tmp, TU, *build.emulation_flags(N)[len(build.CUDA_FLAGS) :]),
    }


@needs_tools
def test_product_loop_is_unchanged_and_the_emulation_adds_only_mma(kernel_builds: dict[int, tuple[str, str]]) -> None:
    product, emulated = tile_loop(kernel_builds[32][0]), tile_loop(kernel_builds[N][0])
    assert product["HMMA"] == QK_MMAS + PV_MMAS and product["LDSM"] == LDSM_PER_TILE
    assert emulated["HMMA"] == emulated_mmas(N) == 361  # 191 + 170
    assert emulated["LDSM"] == LDSM_PER_TILE
    # Besides the extra issues, ptxas materialises the zero B operand (CS2R): what the emulation adds to issue.
    extra = {op: emulated[op] - product[op] for op in emulated if op not in ("HMMA",) and emulated[op] != product[op]}
    assert sum(v for v in extra.values() if v > 0) < 0.5 * (emulated_mmas(N) - QK_MMAS - PV_MMAS), extra
    # Its own names (EmulationProbe), so that it and the product can live in one process.
    emulated_names = [name for name in probe_functions(kernel_builds[N][0]) if "kernel" in name]
    assert len(emulated_names) == 2 and all("EmulationProbe" in name for name in emulated_names), emulated_names
    assert all("NoProbe" in name for name in probe_functions(kernel_builds[32][0]))
    for build_n, (_, report) in kernel_builds.items():
        spills = [(r.name, r.spill_stores, r.spill_loads) for r in parse_ptxas(report).values() if r.spill_stores]
        assert spills == [], (build_n, spills)


@needs_tools
def test_the_switch_at_its_default_is_the_product(tmp_path: Path, kernel_builds: dict[int, tuple[str, str]]) -> None:
    """-DVERIFY_MMA_REPEAT_X32=32 spelled out compiles to the product's SASS, byte for byte."""
    explicit, _ = compile_sass(tmp_path, TU, "-DVERIFY_MMA_REPEAT_X32=32")
    assert explicit == kernel_builds[32][0]


@needs_tools
def test_the_emulation_check_loop_issues_n_a_period(tmp_path: Path) -> None:
    source = tmp_path / "check.cu"
    body = ceilings._EMU_SOURCE[: ceilings._EMU_SOURCE.index("void mma_emulated(torch")]
    source.write_text(body + "template __global__ void mma_emulated_kernel<4>(float*, long long*, int, float);\n")
    for n in (32, N, 90):
        sass, report = compile_sass(tmp_path, source, f"-DVERIFY_MMA_REPEAT_X32={n}", "-std=c++17")
        counts = [c["HMMA"] for c in loop_bodies(next(iter(sass_functions(sass).values())))]
        assert counts and all(c % n == 0 for c in counts), (n, counts)
        assert all(r.spill_stores == 0 for r in parse_ptxas(report).values())


@needs_tools
def test_the_timeline_tool_builds_emulated_without_spills(tmp_path: Path) -> None:
    sass, report = compile_sass(tmp_path, ROOT / "kernel" / "tools" / "timeline.cu", f"-DVERIFY_MMA_REPEAT_X32={N}")
    assert [r.name for r in parse_ptxas(report).values() if r.spill_stores] == []
    assert tile_loop(sass)["HMMA"] == emulated_mmas(N)


def test_issue_counts_spread_k_over_a_sequence() -> None:
    for n in range(32, 128):
        assert all(issues(i, n) in (n // 32, n // 32 + 1) for i in range(96))
        assert sum(issues(i, n) for i in range(64)) == 2 * n  # a whole number of periods: exactly k a mma.sync
    assert [issues(i, 78) for i in range(8)] == [2, 2, 3, 2, 3, 2, 3, 2]


def test_k_from_the_rate_per_sm_clock() -> None:
    assert ceilings.repeat_x32_for(2496.0) == 78
    assert ceilings.repeat_x32_for(1024.0) == 32
    assert ceilings.repeat_x32_for(1024.0, target=512.0) == 64
    for bad in (900.0, 4 * 1024.0, float("nan")):
        with pytest.raises(ValueError, match="expected 1x to 4x the target"):
            ceilings.repeat_x32_for(bad)
    expected, ok = ceilings.emulation_verdict(2496.0, 78, 1030.0)
    assert expected == pytest.approx(2496 * 32 / 78) and ok
    assert not ceilings.emulation_verdict(2496.0, 78, 1200.0)[1]
    assert not ceilings.emulation_verdict(2496.0, 78, 900.0)[1]


def test_build_flags_and_names() -> None:
    assert build.emulation_flags(32) == build.CUDA_FLAGS and build.variant_suffix(32) == ""
    assert build.emulation_flags(78) == (*build.CUDA_FLAGS, "-DVERIFY_MMA_REPEAT_X32=78")
    assert build.variant_suffix(78) == "_mma_repeat_x32_78"
    for bad in (31, 128, 0, -32):
        with pytest.raises(ValueError, match="mma_repeat_x32: expected 32 <= N < 128"):
            build.emulation_flags(bad)


def measured_pair(
    metrics: tuple[str, str], params: dict[str, str | int | float | bool], floor: float, times: list[float]
) -> list[dict[str, object]]:
    fractions = [floor / t for t in times]
    return [
        results.case(metrics[0], params, "us", "lower", times, summarize(times)),
        results.case(metrics[1], params, "fraction", "higher", fractions, summarize(fractions)),
    ]


def emulated_doc(tmp_path: Path) -> Path:
    """A verify result file as an emulation run writes it: measured and emulated cases side by side."""
    emu = Emulation(78, 2496.0, 1021.0, 1024.0, True, 268.0)
    params = {**Case(1, 8, 64, 91000).params("cuda"), "graph": True}
    cases = [
        results.case(
            "ceiling.copy_tbps", {"kind": "device-to-device copy"}, "TB/s", "higher", [4.25], summarize([4.25])
        ),
        results.case(
            "ceiling.mma_tflops", {"kind": "mma.sync", "acc": 8}, "TFLOP/s", "higher", [650.0], summarize([650.0])
        ),
        *measured_pair(MEASURED, params, 155.0, [390.0, 392.0]),
        *measured_pair(EMULATED, {**params, **emu.labels()}, 377.0, [520.0, 524.0]),
    ]
    env = {"gpu": "NVIDIA H200", "driver": None, "cuda": "13.0", "torch": "2.11.0", "triton": "3.6.0"}
    now = results.utc_now()
    doc = results.document(
        "verify", results.provenance(ROOT, "python -m bench.verify --emulate-sm120", env, now), cases
    )
    return results.write(doc, tmp_path, now)


def test_emulated_cases_are_labelled_and_apart_from_measured_ones(tmp_path: Path) -> None:
    path = emulated_doc(tmp_path)
    cases = json.loads(path.read_text())["cases"]
    emulated = [c for c in cases if c["metric"] in EMULATED]
    assert emulated and all(c["params"]["emulation"] == EMULATION_LABEL for c in emulated)
    assert all("emulation" not in c["params"] for c in cases if c["metric"] in MEASURED)
    assert not set(EMULATED) & set(MEASURED)
    pytest.importorskip("pydantic", reason="the tracker's result schema needs pydantic")
    from tracker.store.result_files import load_result

    run = load_result(path)
    assert {c.metric for c in run.cases} >= {*MEASURED, *EMULATED}


def test_table_reads_only_measured_fractions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = emulated_doc(tmp_path)
    assert table.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "39.6%" in out  # 155 / 391: the measured fraction
    assert "72.2%" not in out and "522.0" not in out  # the emulated build's figures are nowhere in its tables


def test_the_printed_table_has_a_column_for_the_emulation() -> None:
    text = format_table(
        [(Case(1, 8, 64, 91000), 155.4, {"cuda": "390.0 (39.8%)", EMULATION_LABEL: "520.0 (72.0%)"})],
        ["cuda"],
        4.25,
        650.0,
        {"gpu": "NVIDIA H200"},
    )
    header, row = text.splitlines()[1:3]
    assert header.split()[-1] == EMULATION_LABEL and row.split()[-2:] == ["520.0", "(72.0%)"]


def test_cli_flag_is_parsed_and_needs_cuda() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.verify", "--emulate-sm120", "--cases", "long", "--impl", "cuda"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert proc.returncode == 3, proc.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "bench.verify", "--emulate-sm120", "--cases", "medium"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert bad.returncode == 2 and "invalid choice: 'medium'" in bad.stderr


def test_the_flag_names_more_builds_to_emulate() -> None:
    from bench.verify import emulate_option

    assert emulate_option(["--cases", "long"]) == (False, (), ["--cases", "long"])
    assert emulate_option(["--emulate-sm120", "--impl", "cuda"]) == (True, (), ["--impl", "cuda"])
    given, also, rest = emulate_option(["--emulate-sm120=v26,v30bulk,v26", "--cases", "all"])
    assert given and also == ("v26", "v30bulk") and rest == ["--cases", "all"]
    for bad in ("--emulate-sm120=", "--emulate-sm120=v26,", "--emulate-sm120=v27"):
        with pytest.raises(ValueError, match=r"v26|build name"):
            emulate_option([bad])
    with pytest.raises(ValueError, match=r"cuda_fp8 in --impl"):  # the fp8 stand-in comes only beside its product
        emulate_option(["--emulate-sm120=v30bulk,fp8"])


def test_the_emulation_refuses_a_gpu_its_builds_do_not_build_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.verify import emulation_unbuildable
    from kernel import build

    monkeypatch.setattr(build, "nvcc_version", lambda: (13, 0))  # sm_120's build is v30 from CUDA 12.8 on

    assert emulation_unbuildable((), (9, 0)) is None and emulation_unbuildable(("v26", "v30bulkx2s6"), (9, 0)) is None
    # sm_120's own build is v26, which builds anywhere; v30's builds need sm_90a or sm_120a.
    assert emulation_unbuildable((), (8, 0)) is None
    why = emulation_unbuildable(("v30bulk",), (8, 0))
    assert why is not None and "sm_80" in why and "v30bulk" in why
    why = emulation_unbuildable(("v30bulkx2s6",), (12, 0))  # sm_90's 6-stage ring does not fit sm_120's 99 KB
    assert why is not None and "v30bulkx2s6" in why and "sm_90" in why
    # the fp8 kernel's stand-in needs e4m3 mma.sync in the PTX it compiles: sm_89 or newer
    assert emulation_unbuildable(("fp8",), (9, 0)) is None and emulation_unbuildable(("fp8",), (8, 9)) is None
    why = emulation_unbuildable(("fp8",), (8, 0))
    assert why is not None and "fp8" in why and "sm_80" in why


def test_the_fp8_stand_in_is_an_emulated_build_of_its_own_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.verify import EMULATION_LABEL, emulate_option, emulated_builds, emulated_fp8_impl, emulation_unbuildable
    from kernel import build

    monkeypatch.setattr(build, "nvcc_version", lambda: (13, 0))
    assert "cuda_fp8" not in [name for name, _ in emulated_builds(("v30bulk",)).values()]
    with_fp8 = emulated_builds(("v30bulk",), fp8=True)
    assert with_fp8[f"{EMULATION_LABEL} fp8"] == ("cuda_fp8", build.FP8_VARIANT)
    assert list(with_fp8)[:2] == [EMULATION_LABEL, f"{EMULATION_LABEL} v30bulk"]
    impl = emulated_fp8_impl(85)
    assert impl.name == "cuda_fp8" and impl.kv == "fp8" and "stand-in" in impl.label and "85/32" in impl.label
    # a lab fp8 build (fp8q1: Q as one e4m3 term) is named like any other, and emulated as a stand-in of its own
    assert emulate_option(["--emulate-sm120=fp8q1"])[1] == ("fp8q1",)
    assert emulated_builds(("fp8q1",))[f"{EMULATION_LABEL} fp8q1"] == ("cuda_fp8q1", "fp8q1")
    lab = emulated_fp8_impl(85, "fp8q1")
    assert lab.name == "cuda_fp8q1" and lab.kv == "fp8" and "fp8q1" in lab.label and "stand-in" in lab.label
    assert emulation_unbuildable(("fp8q1",), (9, 0)) is None and "sm_80" in str(
        emulation_unbuildable(("fp8q1",), (8, 0))
    )


def test_the_printed_table_has_a_column_for_each_emulated_build() -> None:
    label_v26 = f"{EMULATION_LABEL} v26"
    text = format_table(
        [
            (
                Case(1, 8, 64, 91000),
                155.4,
                {"cuda": "390.0 (39.8%)", EMULATION_LABEL: "520.0 (72.0%)", label_v26: "530.0 (70.6%)"},
            )
        ],
        ["cuda"],
        4.25,
        650.0,
        {"gpu": "NVIDIA H200"},
    )
    header, row = text.splitlines()[1:3]
    assert header.endswith(f"{EMULATION_LABEL}  {label_v26}") and row.split()[-4:] == [
        "520.0",
        "(72.0%)",
        "530.0",
        "(70.6%)",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--emulate-sm120=v30bulk", "--impl", "triton"], "--impl must name cuda"),
        (["--emulate-sm120", "--impl", "torch"], "--impl must name cuda"),
        (["--emulate-sm120=v26"], "that is sm_120's own build"),  # v26 against itself: a ratio of 1 that says nothing
    ],
)
def test_an_emulation_that_would_weigh_nothing_is_a_usage_error(argv: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.verify", *argv, "--cases", "long"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
