"""Builds and caches the CUDA extension of the verify kernel (`torch.utils.cpp_extension.load`).

The build directory is keyed by torch version, CUDA version and the current device's compute capability,
`~/.cache/verify-kernel/<key>/` (or `$VERIFY_KERNEL_CACHE/<key>/`), and the module name carries a hash of the
sources and headers in `kernel/csrc/`, so an edited kernel never loads a stale build. The code is compiled
for the current device's architecture only.

`load(mma_repeat_x32=N, variant=...)` builds the sm_120-balance emulation of a variant's sources
(`-DVERIFY_MMA_REPEAT_X32=N`: each mma.sync issued N/32 times, kernel/NOTES.md) as a module and directory of its own;
the benchmark builds sm_120's variant so and times it beside this device's product, which is always `load()`.

The product is chosen per device, by `product_variant`: on sm_90 (H200, H100) it is v40
(`kernel/csrc/verify_attention_v40.cuh`: the bf16 tile on wgmma, a producer warpgroup with setmaxnreg filling an
mbarrier ring), built for sm_90a where the CUDA toolkit is 12.8 or newer; v30 (`verify_attention_v30.cuh`, mma.sync fed
by the same kind of producer), the product there before it, stays as the lab builds v30*. On every other device,
sm_120 (RTX PRO 6000 Blackwell) included, or with an older toolkit, it is v26 (`verify_attention_sm.cu`), the portable
path of sm_80-level instructions: v30's sm_120a build (4 stages, one swap buffer and read barriers in 99 KB)
builds and is correct, but at sm_120's MMA balance, emulated on the H200 in one run, v26 is 1.5-2.2% faster in every
case (kernel/NOTES.md, "Weighed for sm_120"). `load(variant=...)` builds a named one instead: "v26" (the portable
path anywhere) or a build of VARIANTS (each device's product, and the lab's: v30's cp.async gather, ring depth, swap
buffers).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path
from types import ModuleType

import torch

CSRC = Path(__file__).resolve().parent / "csrc"
SOURCES = ("binding.cpp", "verify_attention_sm.cu")
HEADERS = (
    "verify_attention.h",
    "verify_attention.cuh",
    "verify_attention_combine.cuh",
    "verify_attention_probe.cuh",
    "verify_attention_ptx.cuh",
    "verify_attention_store.cuh",
    "verify_attention_fp8.h",  # binding.cpp includes it under -DVERIFY_ATTN_FP8
)
CUDA_FLAGS = ("-O3", "--use_fast_math", "-std=c++17")
CACHE_ENV = "VERIFY_KERNEL_CACHE"
PRODUCT_REPEAT_X32 = 32  # VERIFY_MMA_REPEAT_X32 of the product: each mma.sync issued once
PORTABLE_VARIANT = "v26"  # sm_80-level instructions only: every device without a v30 build
V30_SOURCES = ("binding.cpp", "verify_attention_v30_sm.cu")
V30_HEADERS = (*HEADERS, "verify_attention_v30.cuh")
V30_ARCHS = ((9, 0), (12, 0))  # setmaxnreg: sm_90a and sm_120a
# The fp8 KV cache kernel (issue 28, verify_attention_fp8.cuh): its own module, binding.cpp built with
# -DVERIFY_ATTN_FP8 (it exports forward_fp8), for sm_89+ (e4m3 mma.sync) at the device's plain architecture.
FP8_VARIANT = "fp8"
FP8_SOURCES = ("binding.cpp", "verify_attention_fp8_sm.cu")
FP8_HEADERS = (
    *HEADERS,
    "verify_attention_fp8.cuh",
    "verify_attention_fp8_wgmma.cuh",
    "verify_attention_fp8_wgmma_ws.cuh",
    "verify_attention_fp8_wgmma_rows.cuh",
    "verify_attention_wgmma_ptx.cuh",
    "verify_attention_v30.cuh",
)
FP8_FLAGS = ("-DVERIFY_ATTN_FP8",)
# The fp8 builds by name, with their nvcc flags: the product, and the lab's "fp8q1" (Q as one e4m3 term: design qkp,
# whose error bf16's rule does not hold; kept to time what Q's second term costs, never the product).
# "fp8wg" and "fp8wgq1": the same designs (q2p, qkp) on Hopper's wgmma (verify_attention_fp8_wgmma.cuh), sm_90a only;
# "fp8wgws", "fp8wgws4": fp8wg's tile with a producer warpgroup and an mbarrier ring (3 or 4 tiles), no block barrier
# in the tile loop, descriptors built once and the scores straight-line (verify_attention_fp8_wgmma_ws.cuh; measured
# as "fp8wgwsh" before it replaced the first cut: kernel/NOTES.md, "The decoupled kernel, measured").
# "fp8wgr": fp8wgws with QK as S = Q . K^T, each warp owning its rows' maxima (verify_attention_fp8_wgmma_rows.cuh).
FP8_BUILDS: dict[str, tuple[str, ...]] = {
    FP8_VARIANT: FP8_FLAGS,
    "fp8q1": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_Q1"),
    "fp8wg": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA"),
    "fp8wgq1": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA", "-DVERIFY_ATTN_FP8_Q1"),
    "fp8wgws": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA", "-DVERIFY_F8WG_WS"),
    "fp8wgws4": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA", "-DVERIFY_F8WG_WS", "-DVERIFY_F8WG_WS_STAGES=4"),
    "fp8wgr": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA", "-DVERIFY_F8WG_ROWS"),
    # fp8wgr with 128-B-swizzled stages, each quarter warp's copies one token's 128 contiguous bytes (lab; _rows.cuh).
    "fp8wgrw": (*FP8_FLAGS, "-DVERIFY_ATTN_FP8_WGMMA", "-DVERIFY_F8WG_ROWS", "-DVERIFY_F8WG_LINES"),
    # fp8wgrw with Q swizzled too, its copies whole lines as well (lab; _rows.cuh).
    "fp8wgrwq": (
        *FP8_FLAGS,
        "-DVERIFY_ATTN_FP8_WGMMA",
        "-DVERIFY_F8WG_ROWS",
        "-DVERIFY_F8WG_LINES",
        "-DVERIFY_F8WG_Q_LINES",
    ),
    # fp8wgrwq with Q quantized in the split kernel, no quantize kernel ahead of it (lab; _rows.cuh).
    "fp8wgrwf": (
        *FP8_FLAGS,
        "-DVERIFY_ATTN_FP8_WGMMA",
        "-DVERIFY_F8WG_ROWS",
        "-DVERIFY_F8WG_LINES",
        "-DVERIFY_F8WG_Q_LINES",
        "-DVERIFY_F8WG_Q_FUSED",
    ),
}
FP8_MIN_CC = (8, 9)
# fp8 builds for an arch-specific target only (wgmma: sm_90a), by name.
FP8_ARCH_SPECIFIC: dict[str, tuple[tuple[int, int], ...]] = {n: ((9, 0),) for n in FP8_BUILDS if n.startswith("fp8wg")}
# The fp8 product where it is not FP8_VARIANT (fp8_product_variant): on sm_90 the decoupled wgmma kernel with rows
# owned by warps and 128-B-swizzled stages gathered a whole line a quarter warp, Q too (fp8wgrwq): on one H100 in one
# call 19.1 us at (1,8,16) 5.7k against fp8wgrw's 23.1, 57.7 against 62.2 at (1,8,64) 23k, 173.1 against 175.2 at
# (1,8,64) 91k, the same bits as fp8wgr (Hopper's e4m3 tensor cores are reached through wgmma only; kernel/NOTES.md,
# "fp8wgrw: whole lines").
FP8_PRODUCT_BY_CC: dict[tuple[int, int], str] = {(9, 0): "fp8wgrwq"}


def fp8_product_variant(cc: tuple[int, int], cuda: tuple[int, int] | None = None) -> str:
    """The fp8 build `verify_attention` runs on a device of compute capability cc: FP8_PRODUCT_BY_CC's where the
    toolkit (`cuda`, default `nvcc_version()`) builds it (the wgmma builds include v30's mbarrier helpers:
    V30_MIN_CUDA), else FP8_VARIANT."""
    name = FP8_PRODUCT_BY_CC.get(cc)
    if name is None:
        return FP8_VARIANT
    toolkit = nvcc_version() if cuda is None else cuda
    return name if toolkit is not None and toolkit >= V30_MIN_CUDA else FP8_VARIANT


def _v30(
    bulk: bool = False,
    stages: int = 4,
    xch: int = 1,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[tuple[int, int], ...]]:
    """A v30 build: its defines (kernel/csrc/verify_attention_v30.cuh) and where it builds (6 stages: sm_90a only)."""
    flags = (
        *(("-DVERIFY_V30_BULK=1",) if bulk else ()),
        *((f"-DVERIFY_V30_STAGES={stages}",) if stages != 4 else ()),
        *((f"-DVERIFY_V30_XCH_BUFFERS={xch}",) if xch != 1 else ()),
    )
    return V30_SOURCES, V30_HEADERS, flags, V30_ARCHS if stages == 4 and xch == 1 else ((9, 0),)


# v30's builds: (sources, headers, extra nvcc flags, compute capabilities it builds for). Each device's product
# and the steps between them, kept for A/B runs: v30, the cp.async gather; bulk, one bulk copy a row; x2, two S swap
# buffers instead of read barriers; s6, a 6-stage ring (x2 and s6: sm_90a's shared memory only; sm_90's product until
# v40).
VARIANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[tuple[int, int], ...]]] = {
    "v30": _v30(),
    "v30bulk": _v30(bulk=True),
    "v30bulkx2": _v30(bulk=True, xch=2),
    "v30bulkx2s6": _v30(bulk=True, xch=2, stages=6),
    # v40 (issue 27, sm_90's product): the bf16 tile on wgmma, FlashMLA's sm_90 shape on v30's producer and
    # fp8wgrw's swizzled stages (kernel/csrc/verify_attention_v40.cuh); sm_90a only. Not v26's MMAs in v26's order:
    # its output keeps the rule against the reference, not v26's bits (WGMMA_VARIANTS).
    "v40": (
        ("binding.cpp", "verify_attention_v40_sm.cu"),
        (*V30_HEADERS, "verify_attention_wgmma_ptx.cuh", "verify_attention_v40.cuh"),
        (),
        ((9, 0),),
    ),
}
# The VARIANTS on wgmma: their accumulation order is the tensor core's, so they match the reference by the rule but
# not v26 bit for bit (tests/kernel/test_gpu_v30.py checks the others so; tests/kernel/test_gpu_v40.py these).
WGMMA_VARIANTS = ("v40",)
# The product on each compute capability (product_variant); any other device runs PORTABLE_VARIANT, v26. sm_120 runs
# v26: the sm_120-balance emulation (bench/verify.py --emulate-sm120=v30bulk, the A/B in one run) has v26 ahead of
# v30's sm_120a build there. sm_90 runs v40: 172.6 us at (1,8,64) 91k against v30bulkx2s6's 341.7, 17.9 against 21.4
# at (1,8,16) 5.7k, faster in every case of `bench verify --cases all` on one H100 in one run, its GPU tests passing
# with memcheck, racecheck and synccheck clean (docs/lab/runs/h100_20261207_2d58e16_v40_sanitized.log, code at
# 2d58e16; kernel/NOTES.md, "v40").
PRODUCT_BY_CC: dict[tuple[int, int], str] = {(9, 0): "v40"}
assert all(cc in VARIANTS[name][3] for cc, name in PRODUCT_BY_CC.items())


# v30 needs CUDA 12.8 to build: cp.async.bulk into .shared::cta is PTX ISA 8.6, and sm_120a arrived with 12.8. v40
# and the fp8 wgmma builds include its helpers, so the same toolkit.
V30_MIN_CUDA = (12, 8)


def product_variant(cc: tuple[int, int], cuda: tuple[int, int] | None = None) -> str:
    """The variant `load()` builds for a device of compute capability cc: PRODUCT_BY_CC's (v40 on sm_90) where the
    CUDA toolkit that compiles the extension (`cuda`, default `nvcc_version()`) is 12.8 or newer; else v26,
    the portable path (an H100 with CUDA 12.4 keeps the kernel it had)."""
    name = PRODUCT_BY_CC.get(cc)
    if name is None:
        return PORTABLE_VARIANT
    toolkit = nvcc_version() if cuda is None else cuda
    return name if toolkit is not None and toolkit >= V30_MIN_CUDA else PORTABLE_VARIANT


@functools.cache
def nvcc_version() -> tuple[int, int] | None:
    """(major, minor) of the nvcc torch's extension builder runs (`$CUDA_HOME/bin/nvcc`); None where there is none."""
    from torch.utils.cpp_extension import CUDA_HOME

    if CUDA_HOME is None:
        return None
    try:
        out = subprocess.run(
            [str(Path(CUDA_HOME) / "bin" / "nvcc"), "--version"], capture_output=True, text=True, timeout=120
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"release (\d+)\.(\d+)", out)
    return (int(found[1]), int(found[2])) if found else None


def source_hash(files: tuple[str, ...] | None = None) -> str:
    """Short sha256 over the kernel's sources and headers (names and bytes); `files` names a variant's instead."""
    digest = hashlib.sha256()
    for name in sorted(SOURCES + HEADERS if files is None else files):
        digest.update(name.encode() + b"\0" + (CSRC / name).read_bytes())
    return digest.hexdigest()[:12]


def build_key(device: torch.device | None = None) -> str:
    """`torch<ver>-cuda<ver>-sm<cc>`: what a compiled extension depends on besides its sources."""
    major, minor = torch.cuda.get_device_capability(device)
    key = f"torch{torch.__version__}-cuda{torch.version.cuda}-sm{major}{minor}"
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in key)


def build_dir(device: torch.device | None = None) -> Path:
    """Cache directory of the build for `device` (created on demand)."""
    root = Path(os.environ.get(CACHE_ENV, "~/.cache/verify-kernel")).expanduser()
    return root / build_key(device)


def emulation_flags(mma_repeat_x32: int) -> tuple[str, ...]:
    """The nvcc flags of a build: the product's, plus the emulation's define when mma_repeat_x32 is not 32.

    Raises ValueError outside 32 <= N < 128 (1 <= k < 4, what verify_attention_ptx.cuh accepts)."""
    if not PRODUCT_REPEAT_X32 <= mma_repeat_x32 < 4 * PRODUCT_REPEAT_X32:
        raise ValueError(f"mma_repeat_x32: expected 32 <= N < 128 (N/32 issues a mma.sync), got {mma_repeat_x32}")
    if mma_repeat_x32 == PRODUCT_REPEAT_X32:
        return CUDA_FLAGS
    return (*CUDA_FLAGS, f"-DVERIFY_MMA_REPEAT_X32={mma_repeat_x32}")


def variant_suffix(mma_repeat_x32: int) -> str:
    """What an emulation build adds to the module and directory names ("" for the product)."""
    return "" if mma_repeat_x32 == PRODUCT_REPEAT_X32 else f"_mma_repeat_x32_{mma_repeat_x32}"


def variant_build(variant: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str]:
    """(sources, files hashed, extra nvcc flags, module-name suffix) of a variant; ValueError for an unknown one."""
    if variant == PORTABLE_VARIANT:
        return SOURCES, SOURCES + HEADERS, (), ""
    if variant in FP8_BUILDS:
        return FP8_SOURCES, FP8_SOURCES + FP8_HEADERS, FP8_BUILDS[variant], f"_{variant}"
    if variant not in VARIANTS:
        known = ", ".join([PORTABLE_VARIANT, *VARIANTS, *FP8_BUILDS])
        raise ValueError(f"variant: expected one of {known}, got {variant!r}")
    sources, headers, flags, _ = VARIANTS[variant]
    return sources, tuple(dict.fromkeys(sources + headers)), flags, f"_{variant}"


def load(verbose: bool = False, mma_repeat_x32: int = PRODUCT_REPEAT_X32, variant: str | None = None) -> ModuleType:
    """Compile (first call per key and source hash) and import the extension for the current CUDA device; one module
    a process for each (variant, mma_repeat_x32), whichever way the variant was named.

    variant None is the product for this device (product_variant); "v26" the portable path; another name a lab
    variant (VARIANTS), built for the device's arch-specific target (compute capability + "a"). mma_repeat_x32 other
    than 32 gives the sm_120-balance emulation build of the same variant (never the product's path). Raises
    RuntimeError when no CUDA device is visible (the extension targets the device's architecture) or when the
    variant does not build for this device.
    """
    emulation_flags(mma_repeat_x32)  # ValueError outside 32 <= N < 128, before any device check
    if variant is not None:
        variant_build(variant)  # ValueError for an unknown name, likewise
    if not torch.cuda.is_available():
        raise RuntimeError("kernel.build.load: expected a visible CUDA device, found none")
    major, minor = torch.cuda.get_device_capability()
    if variant is None:
        variant = product_variant((major, minor))
    return _load(variant, mma_repeat_x32, (major, minor), verbose)


_LOADED: dict[tuple[str, int, tuple[int, int]], ModuleType] = {}


def _load(variant: str, mma_repeat_x32: int, cc: tuple[int, int], verbose: bool) -> ModuleType:
    """load()'s build and import of a named variant for compute capability cc, once a process (_LOADED)."""
    key = (variant, mma_repeat_x32, cc)
    if key in _LOADED:
        return _LOADED[key]
    from torch.utils.cpp_extension import load as torch_load  # imports ninja lookups; keep it lazy

    flags = emulation_flags(mma_repeat_x32)
    major, minor = cc
    sources, hashed, variant_flags, variant_tag = variant_build(variant)
    arch = f"{major}.{minor}"
    if variant in FP8_BUILDS:
        if (major, minor) < FP8_MIN_CC:
            raise RuntimeError(
                f"kernel.build.load: the fp8 kernel needs sm_89 or newer (e4m3 mma.sync), not sm_{major}{minor}"
            )
        if variant in FP8_ARCH_SPECIFIC:
            if (major, minor) not in FP8_ARCH_SPECIFIC[variant]:
                targets = ", ".join(f"sm_{a}{b}a" for a, b in FP8_ARCH_SPECIFIC[variant])
                raise RuntimeError(f"kernel.build.load: variant {variant} builds for {targets}, not sm_{major}{minor}")
            arch += "a"
    elif variant != PORTABLE_VARIANT:
        if (major, minor) not in VARIANTS[variant][3]:
            targets = ", ".join(f"sm_{a}{b}" for a, b in VARIANTS[variant][3])
            raise RuntimeError(f"kernel.build.load: variant {variant} builds for {targets}, not sm_{major}{minor}")
        arch += "a"
    suffix = variant_tag + variant_suffix(mma_repeat_x32)
    directory = build_dir()
    directory = directory.with_name(directory.name + suffix)
    directory.mkdir(parents=True, exist_ok=True)
    # torch reads the target list from this variable; set it to the current device only, then restore.
    saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    try:
        module = _LOADED[key] = torch_load(
            name=f"verify_attn_{source_hash(hashed)}{suffix}",
            sources=[str(CSRC / name) for name in sources],
            extra_cflags=["-O3", *(FP8_FLAGS if variant in FP8_BUILDS else ())],  # torch picks the C++ standard
            extra_cuda_cflags=[*flags, *variant_flags],
            extra_include_paths=[str(CSRC)],
            build_directory=str(directory),
            verbose=verbose,
        )
        return module
    finally:
        if saved is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = saved
