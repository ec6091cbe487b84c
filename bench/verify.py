"""`python -m bench verify`: time tree-verify attention implementations against the hardware floor.

For every case (B, H, T) x L: build >= 3 random input sets (more at short contexts, so together they
exceed 2x the L2), check each implementation's output once against the fp32 reference (a wrong kernel
is never timed), time it with `bench.timing.time_device`, and express each sample as a fraction of the
floor max(bytes / copy bandwidth, FLOPs / mma.sync rate), both ceilings measured in the same run.

With the sm_120-balance emulation (`python -m bench.verify --emulate-sm120 ...`, or `run(..., emulate_sm120=True)`):
the H200's mma.sync rate per SM-clock gives k = that rate / 1,024 (sm_120's), rounded to N/32; a build of the kernel
issuing each mma.sync N/32 times (kernel/build.py) is checked and timed beside the product, and each case is also
reported as a fraction of the emulated floor, max(bytes / copy bandwidth, FLOPs / the emulated rate measured by the
emulation's own check). Those figures are an emulation of sm_120's balance on the H200, not a measurement of sm_120:
they go under their own metrics (`verify_attn.emulated_sm120_*`, params `emulation = "sm120-balance"`), never into
`verify_attn.floor_fraction`. `--emulate-sm120=v30bulk,...` emulates the named builds too, in the same run and on
the same inputs (impl `cuda_<name>`; sm_120's own build stays `cuda`): the A/B that picks sm_120's product
(kernel/build.py PRODUCT_BY_CC: v26, ahead of v30's sm_120a build). The emulated builds must build on this GPU (v30's:
sm_90 or sm_120). With `cuda_fp8` in --impl the fp8 kernel's sm_120-balance build is timed too (`emulated_fp8_impl`,
column "sm120-balance fp8"): a timing stand-in issuing one bf16 m16n8k16 in each e4m3 m16n8k32's place (on sm_120 they
take one issue slot alike), N/32 times, its S zeroed; its output is wrong on purpose, so it is timed only where the
product's fp8 kernel passed its check in the same case (and, where the device's fp8 product is another build, its
own kernel too), against the emulated fp8 floor (580 B a token, its MMAs at twice the emulated bf16 rate: sm_120's fp8
mma.sync rate by its specification). The fp8 floor itself takes the e4m3 ceiling of the instruction the device's fp8
product issues (fp8_ceiling_kind: wgmma where it is a wgmma build, else mma.sync), measured in the same run.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from bench import ceilings, peers, results
from bench.timing import capture_graph, l2_bytes, rotation_sets, summarize, time_device
from kernel.build import FP8_BUILDS, FP8_VARIANT
from kernel.reference import attention
from kernel.trees import VerifyInputs, make_inputs

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ((1, 8, 16), (1, 8, 64), (1, 16, 32), (4, 8, 16), (1, 64, 8))  # (batch, heads, nodes)
CONTEXTS = {"short": (5700,), "long": (23000, 91000), "all": (5700, 23000, 91000)}
ROW_BYTES = 576 * 2 + 4  # one latent row + its slot id
FP8_ROW_BYTES = 576 + 4  # an e4m3 row + its slot id: the fp8 floor's bytes (its MMAs at the e4m3 ceiling)
EXIT_OK, EXIT_IMPL_FAILED, EXIT_USAGE, EXIT_NO_CUDA = 0, 1, 2, 3
MEASURED = ("verify_attn.time_us", "verify_attn.floor_fraction")
SM120 = (12, 0)  # the compute capability the emulation stands in for
EMULATED = ("verify_attn.emulated_sm120_time_us", "verify_attn.emulated_sm120_fraction")
EMULATION_LABEL = "sm120-balance"


@dataclass(frozen=True)
class Case:
    """One benchmark shape; every request has the same prefix length `ctx`."""

    batch: int
    heads: int
    nodes: int
    ctx: int

    @property
    def bytes(self) -> int:
        return self.batch * (self.ctx + self.nodes) * ROW_BYTES

    @property
    def flops(self) -> int:
        return 2 * self.heads * self.nodes * self.batch * (self.ctx + self.nodes) * (576 + 512)

    def floor_us(self, copy_tbps: float, mma_tflops: float, row_bytes: int = ROW_BYTES) -> float:
        nbytes = self.bytes * row_bytes // ROW_BYTES
        return max(nbytes / (copy_tbps * 1e12), self.flops / (mma_tflops * 1e12)) * 1e6

    def params(self, impl: str) -> dict[str, str | int | float | bool]:
        return {"impl": impl, "ctx": self.ctx, "heads": self.heads, "nodes": self.nodes, "batch": self.batch}


def cases_for(selection: str) -> list[Case]:
    """The cases of `--cases short|long|all`."""
    return [Case(b, h, t, ctx) for ctx in CONTEXTS[selection] for b, h, t in SHAPES]


def check_output(out: torch.Tensor, x: VerifyInputs, prefix_only: bool) -> str | None:
    """None when `out` passes the flash-attention rule against the fp32 reference, else why not."""
    mask = torch.zeros_like(x.tree_mask) if prefix_only else x.tree_mask
    args = (x.q, x.kv_cache, x.prefix_indptr, x.prefix_slots, x.tree_slots, mask, x.sm_scale)
    ref, _ = attention(*args)
    low, _ = attention(*args, dtype=torch.bfloat16)
    if not torch.isfinite(out).all():
        return "non-finite output"
    err = (out.float() - ref).abs().max().item()
    bound = 2 * (low.float() - ref).abs().max().item() + 1e-3 * max(1.0, ref.abs().max().item())
    return None if err <= bound else f"max error {err:.3e} > bound {bound:.3e} (2x plain bf16 torch + eps)"


def environment() -> dict[str, str | None]:
    """GPU, driver and library versions for the provenance block."""
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        driver = smi.stdout.strip().splitlines()[0] if smi.returncode == 0 and smi.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired):
        driver = None
    try:
        import triton

        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    return {
        "gpu": torch.cuda.get_device_name(),
        "driver": driver,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "triton": triton_version,
    }


def _measure_ceilings(doc_cases: list[dict[str, object]]) -> tuple[float, float]:
    copy = ceilings.copy_bandwidth()
    acc, mma = ceilings.mma_rate()
    doc_cases.append(
        results.case("ceiling.copy_tbps", {"kind": "device-to-device copy"}, "TB/s", "higher", copy, summarize(copy))
    )
    doc_cases.append(
        results.case(
            "ceiling.mma_tflops",
            {"kind": "mma.sync m16n8k16 bf16->fp32", "acc": acc},
            "TFLOP/s",
            "higher",
            mma,
            summarize(mma),
        )
    )
    return float(summarize(copy)["median"]), float(summarize(mma)["median"])


def fp8_ceiling_kind(cc: tuple[int, int]) -> str:
    """The e4m3 instruction the fp8 product issues on a device of compute capability cc, whose ceiling its floor
    takes: "wgmma" where it is a wgmma build (sm_90: kernel/build.py FP8_ARCH_SPECIFIC), else "mma.sync"."""
    from kernel import build

    return "wgmma" if build.fp8_product_variant(cc) in build.FP8_ARCH_SPECIFIC else "mma.sync"


def _measure_e4m3_ceiling(
    doc_cases: list[dict[str, object]], fp8_impls: list[str], failed: dict[str, ImplFailure], kind: str
) -> float:
    """The e4m3 ceiling (TFLOP/s) of `kind` (fp8_ceiling_kind) when an fp8 implementation runs, recorded as a case; 0
    when none does. Where it cannot be measured (before sm_89) every fp8 implementation fails with the reason."""
    if not fp8_impls:
        return 0.0
    params: dict[str, str | int | float | bool]
    try:
        if kind == "wgmma":
            metric = "ceiling.wgmma_e4m3_tflops"
            params = {"kind": "wgmma m64n256k32 e4m3->fp32, both operands in shared memory, 2 warpgroups an SM"}
            rates = ceilings.wgmma_e4m3_rate()
        else:
            acc, rates = ceilings.mma_e4m3_rate()
            metric = "ceiling.mma_e4m3_tflops"
            params = {"kind": "mma.sync m16n8k32 e4m3->fp32, fresh operands", "acc": acc}
    except Exception as err:
        # before sm_89 mma.sync e4m3 does not exist (unavailable); a wgmma ceiling that fails on sm_90 is a failure
        for name in fp8_impls:
            state = "failed" if kind == "wgmma" else "unavailable"
            failed[name] = ImplFailure(
                f"{state}: e4m3 ceiling: {type(err).__name__}: {err}", "n/a", unavailable=kind != "wgmma"
            )
        return 0.0
    doc_cases.append(results.case(metric, params, "TFLOP/s", "higher", rates, summarize(rates)))
    median = float(summarize(rates)["median"])
    print(f"ceiling: {kind} e4m3 {median:.0f} TFLOP/s", flush=True)
    return median


def stand_in_needs_own_check(variant: str, fp8_build: str) -> bool:
    """Whether an emulated fp8 build (`variant`) is checked through its own kernel before it is timed: the stand-in of
    the mma.sync kernel (FP8_VARIANT) where the device's fp8 product (`fp8_build`) is another build, so that cuda_fp8's
    check is not that kernel's. A lab build such as fp8q1, whose design breaks the rule on purpose, is not."""
    return variant == FP8_VARIANT != fp8_build


def check_fp8_build(variant: str, x: VerifyInputs) -> str | None:
    """The named fp8 build's output on x against the reference on the dequantized cache (check_output): None, or what
    is wrong. The sm_120-balance stand-in is timed only where its own kernel passes this in the same case."""
    from kernel import build

    kv8, scale, checked = peers.fp8_inputs(x)
    out = build.load(variant=variant).forward_fp8(x.q, kv8, float(scale), *x.args()[2:], False, 0)[0]
    return check_output(out, checked, False)


class ImplFailure(Exception):
    """An implementation could not be measured; `unavailable` marks an optional peer that is not installed."""

    def __init__(self, message: str, cell: str, unavailable: bool = False) -> None:
        super().__init__(message)
        self.cell = cell
        self.unavailable = unavailable


def measure_impl(
    impl: peers.Impl,
    case: Case,
    sets: list[VerifyInputs],
    floor_us: float,
    budget_s: float,
    device: str = "cuda",
    info: dict[str, str | int | float | bool] | None = None,
    metrics: tuple[str, str] = MEASURED,
    labels: dict[str, str | int | float | bool] | None = None,
    check: bool = True,
) -> tuple[str, list[dict[str, object]]]:
    """Check one implementation on the first input set, then time it rotating through all sets. check=False is for
    a timing stand-in alone (the fp8 kernel's sm_120-balance build), timed only beside its product, checked in the
    same run.

    On CUDA each set's call is captured into a CUDA graph when possible (params "graph": true) and the
    replays are timed; an implementation that cannot be captured is timed eagerly ("graph": false).

    `info` goes into both result cases as is (run conditions: seeds, split count). `metrics` names the two cases
    (time, fraction of `floor_us`) and `labels` joins their params: the emulation's figures go under their own.
    Returns the table cell and the two result cases (time_us, floor_fraction); raises ImplFailure
    (never timing a wrong kernel) when it cannot be prepared or its output fails the check.
    """
    try:
        fns = [impl.prepare(x) for x in sets]
    except ImportError as err:  # an optional peer that is not installed: skipped cleanly
        raise ImplFailure(f"unavailable ({err})", "n/a", unavailable=True) from err
    except Exception as err:
        raise ImplFailure(f"error: {type(err).__name__}: {err}", "error") from err
    graphs = [g for g in (capture_graph(fn) for fn in fns) if g is not None] if device == "cuda" else []
    graphed = len(graphs) == len(fns)
    runs = graphs if graphed else fns
    # What is timed is what is checked; an fp8 implementation against the reference on the dequantized cache.
    checked = peers.fp8_inputs(sets[0])[2] if impl.kv == "fp8" else sets[0]
    problem = check_output(runs[0]().clone(), checked, impl.prefix_only) if check else None
    if problem is not None:
        raise ImplFailure(f"WRONG at {case}: {problem}", "WRONG")
    # A graph replay has no host sync: queued behind a wait, each is timed on the GPU even where it is shorter than
    # the host's ~10 us to submit it. Eager runs keep the host's pace (their launches are their cost).
    samples = time_device(lambda i: runs[i](), len(sets), device=device, budget_s=budget_s, hold=graphed)
    fractions = [floor_us / us for us in samples]
    stats = summarize(samples)
    params = {**case.params(impl.name), "graph": graphed, **(labels or {})}
    entries = [
        results.case(metrics[0], params, "us", "lower", samples, stats, info),
        results.case(metrics[1], params, "fraction", "higher", fractions, summarize(fractions), info),
    ]
    mark = "" if graphed or device != "cuda" else " eager"
    return f"{stats['median']:.1f} ({100 * floor_us / float(stats['median']):.1f}%){mark}", entries


@dataclass(frozen=True)
class Emulation:
    """The sm_120-balance emulation of one run: N (each mma.sync issued N/32 times), the H200's rate per SM-clock
    it came from, the emulation's own check and the emulated mma.sync rate (TFLOP/s) the emulated floor uses."""

    repeat_x32: int
    h200_flop_per_sm_clk: float
    check_flop_per_sm_clk: float
    expected_flop_per_sm_clk: float
    within_tolerance: bool
    tflops: float

    @property
    def k(self) -> float:
        return self.repeat_x32 / 32

    @property
    def fp8_tflops(self) -> float:
        """The emulated rate of the fp8 kernel's MMAs: twice the bf16 one (sm_120 runs e4m3 mma.sync m16n8k32 at twice
        bf16's FLOPs by its specification, one issue slot each, which the fp8 stand-in's bf16 m16n8k16 takes)."""
        return 2 * self.tflops

    def labels(self) -> dict[str, str | int | float | bool]:
        """Params every emulated case carries: what it is, and the k it ran under."""
        return {"emulation": EMULATION_LABEL, "mma_repeat": self.k}


def _measure_emulation(doc_cases: list[dict[str, object]]) -> Emulation:
    """k from the H200's mma.sync rate per SM-clock, then the emulation's own check under it; records both."""
    h200 = ceilings.mma_per_clock()
    per_clk = h200.flop_per_sm_clk()
    h200_rate = float(statistics.median(per_clk))
    n = ceilings.repeat_x32_for(h200_rate)
    check = ceilings.mma_emulated(n)
    check_per_clk = check.flop_per_sm_clk()
    check_rate = float(statistics.median(check_per_clk))
    expected, ok = ceilings.emulation_verdict(h200_rate, n, check_rate)
    emu = Emulation(n, h200_rate, check_rate, expected, ok, float(statistics.median(check.tflops)))
    kind = "mma.sync m16n8k16 bf16->fp32"
    doc_cases.append(
        results.case(
            "ceiling.mma_flop_per_sm_clk",
            {"kind": kind, "acc": h200.acc},
            "FLOP/SM/clk",
            "higher",
            per_clk,
            summarize(per_clk),
            {"sms": h200.sms, "sm_clock_ghz": round(h200.clock_ghz, 4)},
        )
    )
    check_params = {"kind": f"{kind}, HMMA-only loop, each issued k times", "acc": check.acc, **emu.labels()}
    info: dict[str, str | int | float | bool] = {
        "sm_clock_ghz": round(check.clock_ghz, 4),
        "expected_flop_per_sm_clk": round(expected, 1),
        "sm120_flop_per_sm_clk": ceilings.SM120_FLOP_PER_SM_CLK,
        "within_tolerance": ok,
        "tolerance": ceilings.EMULATION_TOLERANCE,
    }
    doc_cases.append(
        results.case(
            "emulation.mma_flop_per_sm_clk",
            check_params,
            "FLOP/SM/clk",
            "higher",
            check_per_clk,
            summarize(check_per_clk),
            info,
        )
    )
    doc_cases.append(
        results.case(
            "emulation.mma_tflops", check_params, "TFLOP/s", "higher", check.tflops, summarize(check.tflops), info
        )
    )
    return emu


def build_of_sm120() -> str:
    """The variant sm_120 runs (kernel/build.py product_variant), which the emulation builds for this GPU."""
    from kernel import build

    return build.product_variant(SM120)


def emulated_impl(repeat_x32: int, variant: str, name: str) -> peers.Impl:
    """Build ``variant`` of the CUDA kernel (v26 or one of VARIANTS) with each mma.sync issued repeat_x32/32 times,
    named ``name``: "cuda" for sm_120's own build (kernel/build.py product_variant((12, 0)): the same source and shared
    memory as on sm_120, compiled for this GPU), "cuda_<variant>" for a build named beside it. Their cases are told
    apart from measured ones by their metric names and `emulation` param, never by the implementation's name."""

    def prepare(x: VerifyInputs) -> peers.Run:
        import kernel
        from kernel import build

        kernel.verify_attention(*x.args(), backend="cuda", debug=True)  # validates the inputs once
        ext = build.load(mma_repeat_x32=repeat_x32, variant=variant)
        args = (*x.args(), False)
        return lambda: ext.forward(*args)[0]  # type: ignore[no-any-return]

    label = f"CUDA kernel ({variant}), sm_120-balance emulation (each mma.sync issued {repeat_x32}/32 times)"
    return peers.Impl(name, label, prepare)


def emulated_fp8_impl(repeat_x32: int, variant: str = FP8_VARIANT) -> peers.Impl:
    """The fp8 kernel's sm_120-balance build (kernel/csrc/verify_attention_fp8.cuh, kF8TimingStandIn): a timing
    stand-in issuing one bf16 m16n8k16 in each e4m3 m16n8k32's place, each repeat_x32/32 times, named "cuda_fp8". Its
    output is wrong on purpose: it is timed unchecked, and only where the product's fp8 kernel passed its check in
    the same run (`run`)."""

    def prepare(x: VerifyInputs) -> peers.Run:
        import kernel
        from kernel import build

        kv8, scale, _ = peers.fp8_inputs(x)
        rest = x.args()[2:]
        kernel.verify_attention(x.q, kv8, *rest, backend="cuda", debug=True, kv_scale=scale)  # validates them once
        ext = build.load(mma_repeat_x32=repeat_x32, variant=variant)
        return lambda: ext.forward_fp8(x.q, kv8, float(scale), *rest, False, 0)[0]  # type: ignore[no-any-return]

    name = "cuda_fp8" if variant == FP8_VARIANT else f"cuda_{variant}"
    label = (
        f"CUDA fp8 kernel{'' if variant == FP8_VARIANT else ' (' + variant + ')'}, sm_120-balance timing stand-in "
        f"(bf16 m16n8k16 for each e4m3 MMA, {repeat_x32}/32 times)"
    )
    return peers.Impl(name, label, prepare, kv="fp8")


def emulated_builds(also: tuple[str, ...], fp8: bool = False) -> dict[str, tuple[str, str]]:
    """{table column and failure key: (implementation name, variant)} of the emulated builds: sm_120's own build
    under EMULATION_LABEL as "cuda", then each of ``also`` under "EMULATION_LABEL <name>" as "cuda_<name>", then with
    fp8 the fp8 kernel's stand-in under "EMULATION_LABEL fp8" as "cuda_fp8"."""
    return {
        EMULATION_LABEL: ("cuda", build_of_sm120()),
        **{f"{EMULATION_LABEL} {v}": (f"cuda_{v}", v) for v in also},
        **({f"{EMULATION_LABEL} {FP8_VARIANT}": ("cuda_fp8", FP8_VARIANT)} if fp8 else {}),
    }


def emulation_unbuildable(variants: tuple[str, ...], cc: tuple[int, int]) -> str | None:
    """Why the emulation cannot run on a GPU of compute capability cc (sm_120's build or a named one does not build
    here: v30's builds need sm_90a or sm_120a), or None."""
    from kernel import build

    for name in (build_of_sm120(), *variants):
        if name in build.FP8_BUILDS:
            if cc < build.FP8_MIN_CC:
                return f"the emulation builds the fp8 kernel, which needs sm_89 or newer, not sm_{cc[0]}{cc[1]}"
        elif name != build.PORTABLE_VARIANT and cc not in build.VARIANTS[name][3]:
            where = ", ".join(f"sm_{a}{b}" for a, b in build.VARIANTS[name][3])
            return f"the emulation builds {name} for this GPU, which builds only for {where}, not sm_{cc[0]}{cc[1]}"
    return None


def _measure_emulated(
    impl: peers.Impl,
    variant: str,
    emu: Emulation,
    case: Case,
    sets: list[VerifyInputs],
    copy_tbps: float,
    budget_s: float,
    seeds: list[int],
) -> tuple[str, list[dict[str, object]]]:
    """The emulated build at one case, against the emulated floor; info says whether its output equals the
    product's bit for bit on the first input set (the extra issues add exact zeros: it should). The fp8 kernel's
    timing stand-in instead: its floor at sm_120's fp8 balance (580 B a token; its MMAs at twice the emulated bf16
    rate, sm_120's fp8 mma.sync rate by its specification), timed unchecked (its caller times it only after the
    product's fp8 kernel passed its check)."""
    if variant in FP8_BUILDS:
        info_fp8: dict[str, str | int | float | bool] = {
            "seeds": ",".join(map(str, seeds)),
            "emulated_build": variant,
            "emulated_mma_tflops": round(emu.fp8_tflops, 2),
            "timing_stand_in": "bf16 m16n8k16 for each e4m3 m16n8k32; output not checked",
        }
        floor = case.floor_us(copy_tbps, emu.fp8_tflops, FP8_ROW_BYTES)
        return measure_impl(
            impl, case, sets, floor, budget_s, info=info_fp8, metrics=EMULATED, labels=emu.labels(), check=False
        )
    try:
        same = bool(torch.equal(peers.IMPLS["cuda"].prepare(sets[0])(), impl.prepare(sets[0])()))
    except Exception as err:
        raise ImplFailure(f"error: {type(err).__name__}: {err}", "error") from err
    info: dict[str, str | int | float | bool] = {
        "seeds": ",".join(map(str, seeds)),
        "emulated_build": variant,
        "emulated_mma_tflops": round(emu.tflops, 2),
        "bitwise_equal_to_product": same,
    }
    floor = case.floor_us(copy_tbps, emu.tflops)
    return measure_impl(impl, case, sets, floor, budget_s, info=info, metrics=EMULATED, labels=emu.labels())


def input_sets(case: Case, l2: int, device: str = "cuda") -> tuple[list[VerifyInputs], list[int]]:
    """Fresh random input sets for a case, enough of them to exceed 2x the L2 together, and their seeds."""
    seeds = [torch.seed() % 2**31 for _ in range(rotation_sets(case.bytes, l2))]
    return [
        make_inputs(
            case.batch,
            case.heads,
            case.nodes,
            [case.ctx] * case.batch,
            tree="random",
            slots="scattered",
            seed=seed,
            device=device,
        )
        for seed in seeds
    ], seeds


def cuda_build() -> str:
    """The variant kernel/build.py builds as the product on this device ("v40" on an H200, "v26" on sm_80)."""
    from kernel import build

    return build.product_variant(torch.cuda.get_device_capability())


def cuda_splits(case: Case) -> int | None:
    """The split count the CUDA launcher chooses for a case (None where the extension cannot load)."""
    try:
        from kernel import build

        ext = build.load()
    except Exception:
        return None
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return int(ext.num_splits(case.batch, case.nodes, case.heads, case.batch * case.ctx, sms))


def run(
    selection: str,
    impl_names: list[str],
    out_dir: Path,
    command: str,
    budget_s: float = 0.5,
    emulate_sm120: bool = False,
    emulate_also: tuple[str, ...] = (),
) -> int:
    """Run the benchmark; returns the exit code (see bench/__main__.py).

    emulate_sm120 (needs "cuda" in impl_names) adds the sm_120-balance emulation: its ceilings and check, and the
    emulated build timed beside the product at every case; emulate_also names more builds to emulate beside it (v26,
    VARIANTS). With "cuda_fp8" in impl_names it also times the fp8 kernel's stand-in (`emulated_fp8_impl`) where
    the product's fp8 kernel passed its check. A failed check, an emulated build that does not build on this GPU
    or a wrong one counts as a failed implementation (exit 1), and its cases are not timed."""
    if not torch.cuda.is_available():
        print("bench verify: no CUDA device", file=sys.stderr)
        return EXIT_NO_CUDA
    now = results.utc_now()
    doc_cases: list[dict[str, object]] = []
    copy_tbps, mma_tflops = _measure_ceilings(doc_cases)
    print(f"ceilings: copy {copy_tbps:.2f} TB/s, mma.sync bf16 {mma_tflops:.0f} TFLOP/s", flush=True)
    failed: dict[str, ImplFailure] = {}
    from kernel import build

    cc = torch.cuda.get_device_capability()
    fp8_build, fp8_kind = build.fp8_product_variant(cc), fp8_ceiling_kind(cc)
    fp8_impls = [n for n in impl_names if peers.IMPLS[n].kv == "fp8"]
    e4m3_tflops = _measure_e4m3_ceiling(doc_cases, fp8_impls, failed, fp8_kind)
    emu: Emulation | None = None
    fp8_stand_in = "cuda_fp8" in impl_names
    builds = emulated_builds(emulate_also, fp8_stand_in) if emulate_sm120 and "cuda" in impl_names else {}
    variants = (*emulate_also, FP8_VARIANT) if fp8_stand_in else emulate_also
    unbuildable = emulation_unbuildable(variants, torch.cuda.get_device_capability()) if builds else None
    if unbuildable is not None:
        failed[EMULATION_LABEL] = ImplFailure(f"emulation unavailable: {unbuildable}", "n/a")
    elif builds:
        try:
            emu = _measure_emulation(doc_cases)
        except Exception as err:
            failed[EMULATION_LABEL] = ImplFailure(f"emulation unavailable: {type(err).__name__}: {err}", "error")
        else:
            print(
                f"emulation: H200 mma.sync {emu.h200_flop_per_sm_clk:.0f} FLOP/SM/clk, k = {emu.repeat_x32}/32 = "
                f"{emu.k:.4f}; check {emu.check_flop_per_sm_clk:.0f} FLOP/SM/clk (expected "
                f"{emu.expected_flop_per_sm_clk:.0f}, {'ok' if emu.within_tolerance else 'OUT OF TOLERANCE'}), "
                f"emulated mma.sync {emu.tflops:.0f} TFLOP/s",
                flush=True,
            )
            if not emu.within_tolerance:
                why = (
                    f"check {emu.check_flop_per_sm_clk:.0f} vs expected {emu.expected_flop_per_sm_clk:.0f} FLOP/SM/clk"
                )
                failed[EMULATION_LABEL] = ImplFailure(f"emulation check failed: {why}", "check failed")
    # Every emulated build needs the emulation itself (its ceilings and check); a wrong build stops only itself.
    emulated = (
        {
            label: emulated_fp8_impl(emu.repeat_x32, variant)
            if variant in FP8_BUILDS
            else emulated_impl(emu.repeat_x32, variant, name)
            for label, (name, variant) in builds.items()
        }
        if emu is not None and EMULATION_LABEL not in failed
        else {}
    )
    l2 = l2_bytes(torch.device("cuda"))
    table: list[tuple[Case, float, dict[str, str]]] = []
    for case in cases_for(selection):
        sets, seeds = input_sets(case, l2)
        floor = case.floor_us(copy_tbps, mma_tflops)
        floor_fp8 = case.floor_us(copy_tbps, e4m3_tflops, FP8_ROW_BYTES) if e4m3_tflops else 0.0
        splits = cuda_splits(case) if "cuda" in impl_names else None
        cells: dict[str, str] = {}
        for name in impl_names:
            if name in failed:  # once failed, not retried at every case
                cells[name] = failed[name].cell
                continue
            try:
                info: dict[str, str | int | float | bool] = {"seeds": ",".join(map(str, seeds))}
                if name == "cuda" and splits is not None:
                    info["cuda_splits"] = splits
                    info["cuda_build"] = cuda_build()  # which kernel this device runs (kernel/build.py)
                impl = peers.IMPLS[name]
                if impl.kv == "fp8":
                    info["floor"] = f"fp8: 580 B a token, {fp8_kind} e4m3 ceiling"
                    if name == "cuda_fp8":
                        info["cuda_fp8_build"] = fp8_build  # which fp8 kernel this device runs (kernel/build.py)
                cells[name], entries = measure_impl(
                    impl, case, sets, floor_fp8 if impl.kv == "fp8" else floor, budget_s, info=info
                )
                doc_cases.extend(entries)
            except ImplFailure as failure:
                failed[name], cells[name] = failure, failure.cell
        for label, impl in emulated.items():
            if emu is None or label in failed:
                continue
            if builds[label][1] in FP8_BUILDS and ("cuda_fp8" in failed or "cuda_fp8" not in impl_names):
                # the stand-in is timed unchecked: only beside a product fp8 kernel that passed its check here (it
                # ran above in this case; a lab build such as fp8q1 is timed only with cuda_fp8 in --impl too)
                unavailable = failed["cuda_fp8"].unavailable if "cuda_fp8" in failed else True
                why = "was not measured" if unavailable else "did not pass its check"
                failed[label] = ImplFailure(
                    f"not timed: the product's fp8 kernel {why}", "n/a", unavailable=unavailable
                )
                cells[label] = failed[label].cell
                continue
            if stand_in_needs_own_check(builds[label][1], fp8_build):
                try:
                    problem = check_fp8_build(builds[label][1], sets[0])
                except Exception as err:
                    problem = f"error: {type(err).__name__}: {err}"
                if problem is not None:
                    failed[label] = ImplFailure(
                        f"not timed: its kernel ({builds[label][1]}) at {case}: {problem}", "WRONG"
                    )
                    cells[label] = failed[label].cell
                    continue
            try:
                cells[label], entries = _measure_emulated(
                    impl, builds[label][1], emu, case, sets, copy_tbps, budget_s, seeds
                )
                doc_cases.extend(entries)
            except ImplFailure as failure:
                failed[label], cells[label] = failure, failure.cell
        del sets
        torch.cuda.empty_cache()
        table.append((case, floor, cells))
        setup = f"seeds {seeds}" + (f", cuda splits {splits}" if "cuda" in impl_names else "")
        print(f"done {case}: " + ", ".join(f"{k} {v}" for k, v in cells.items()) + f" [{setup}]", flush=True)
    env = environment()
    doc = results.document("verify", results.provenance(ROOT, command, env, now), doc_cases)
    path = results.write(doc, out_dir, now)
    for name, reason in failed.items():
        label = peers.IMPLS[name].label if name in peers.IMPLS else f"the sm_120-balance emulation ({name})"
        print(f"{name}: {reason} ({label})", file=sys.stderr)
    print(f"\nwrote {path}")
    print(format_table(table, impl_names, copy_tbps, mma_tflops, env))
    if emu is not None:
        print(
            f"{EMULATION_LABEL}: an emulation of sm_120's balance on this GPU, not a measurement of sm_120: the "
            f"{EMULATION_LABEL} column ({build_of_sm120()}, sm_120's build; columns '{EMULATION_LABEL} <name>' the "
            "named builds) is the emulated build's median us and, in brackets, its fraction of the emulated floor "
            f"(mma.sync at {emu.tflops:.0f} TFLOP/s, each issued k = {emu.k:.4f} times)"
            + (
                f"; the '{EMULATION_LABEL} fp8' column is the fp8 kernel's timing stand-in (output not checked, timed "
                "only where cuda_fp8 passed and, where that is another build, its own kernel too), against the "
                f"emulated fp8 floor (580 B a token, MMAs at {emu.fp8_tflops:.0f} TFLOP/s)"
                if fp8_stand_in
                else ""
            )
        )
    return EXIT_IMPL_FAILED if any(not f.unavailable for f in failed.values()) else EXIT_OK


def format_table(
    rows: list[tuple[Case, float, dict[str, str]]],
    impl_names: list[str],
    copy_tbps: float,
    mma_tflops: float,
    env: dict[str, str | None],
) -> str:
    """Median us per implementation, and (in brackets) the fraction of the floor it reaches."""
    emulated = [n for _, _, cells in rows for n in cells if n not in impl_names and n.startswith(EMULATION_LABEL)]
    names = [*impl_names, *dict.fromkeys(emulated)]
    labels = [
        n + (" (prefix only, no tree mask)" if n in peers.IMPLS and peers.IMPLS[n].prefix_only else "") for n in names
    ]
    header = ["B,H,T", "L", "floor us", *labels]
    body = [
        [f"{c.batch},{c.heads},{c.nodes}", str(c.ctx), f"{floor:.1f}", *(cells.get(n, "") for n in names)]
        for c, floor, cells in rows
    ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [
        f"{env['gpu']}: copy {copy_tbps:.2f} TB/s, mma.sync bf16 {mma_tflops:.0f} TFLOP/s; "
        "median us (fraction of floor)"
    ]
    lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in [header, *body]]
    return "\n".join(lines)


def command_line(argv: list[str]) -> str:
    """The command as the result file records it."""
    return shlex.join(["python", "-m", "bench", *argv])


EMULATE_FLAG = "--emulate-sm120"


def emulate_option(argv: list[str]) -> tuple[bool, tuple[str, ...], list[str]]:
    """(--emulate-sm120 given, the builds named by --emulate-sm120=NAME,..., the other arguments). Raises ValueError
    naming an unknown build (kernel/build.py: v26 or one of VARIANTS) or an empty list."""
    from kernel import build

    given, names, rest = False, [], []
    for arg in argv:
        if arg == EMULATE_FLAG or arg.startswith(EMULATE_FLAG + "="):
            given = True
            if "=" in arg:
                listed = arg.split("=", 1)[1].split(",")
                if not all(listed):
                    raise ValueError(f"{EMULATE_FLAG}=NAME[,NAME...]: a build name, got {arg!r}")
                for name in listed:
                    if name == build.FP8_VARIANT:  # the fp8 stand-in comes with cuda_fp8 in --impl, checked beside it
                        raise ValueError(
                            f"{EMULATE_FLAG}=fp8: the fp8 kernel's stand-in is emulated with cuda_fp8 in --impl"
                        )
                    build.variant_build(name)  # ValueError naming the known builds
                names += listed
        else:
            rest.append(arg)
    return given, tuple(dict.fromkeys(names)), rest


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.verify [--emulate-sm120[=NAME,...]] [bench verify's options]`: `python -m bench verify` with
    the sm_120-balance emulation added when the flag is given, of sm_120's build and of the builds it names
    (`python -m bench`'s parser, bench/cli.py, reads the other options)."""
    from bench.cli import parse

    argv = sys.argv[1:] if argv is None else argv
    try:
        emulate, also, rest = emulate_option(argv)
    except ValueError as err:
        print(f"bench.verify: {err}", file=sys.stderr)
        return EXIT_USAGE
    args = parse(["verify", *rest])
    if emulate and "cuda" not in args.impl:
        print(
            f"bench.verify: {EMULATE_FLAG} times the emulation beside the product: --impl must name cuda",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if build_of_sm120() in also:
        print(
            f"bench.verify: {EMULATE_FLAG}={build_of_sm120()}: that is sm_120's own build, emulated as cuda already "
            "(name the builds to weigh against it)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    command = shlex.join(["python", "-m", "bench.verify", *argv])
    return run(args.cases, args.impl, args.out, command, args.budget, emulate_sm120=emulate, emulate_also=also)


if __name__ == "__main__":
    sys.exit(main())
