"""Builds and caches the CUDA extension of the verify kernel (`torch.utils.cpp_extension.load`).

The build directory is keyed by torch version, CUDA version and the current device's compute capability,
`~/.cache/verify-kernel/<key>/` (or `$VERIFY_KERNEL_CACHE/<key>/`), and the module name carries a hash of the
sources and headers in `kernel/csrc/`, so an edited kernel never loads a stale build. The code is compiled
for the current device's architecture only.

`load(mma_repeat_x32=N)` builds the sm_120-balance emulation of the same sources (`-DVERIFY_MMA_REPEAT_X32=N`: each
mma.sync issued N/32 times, kernel/NOTES.md) as a module and directory of its own; the benchmark times it beside
the product, which is always the default `load()`.
"""

from __future__ import annotations

import functools
import hashlib
import os
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
)
CUDA_FLAGS = ("-O3", "--use_fast_math", "-std=c++17")
CACHE_ENV = "VERIFY_KERNEL_CACHE"
PRODUCT_REPEAT_X32 = 32  # VERIFY_MMA_REPEAT_X32 of the product: each mma.sync issued once


def source_hash() -> str:
    """Short sha256 over the kernel's sources and headers (names and bytes)."""
    digest = hashlib.sha256()
    for name in sorted(SOURCES + HEADERS):
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


@functools.cache
def load(verbose: bool = False, mma_repeat_x32: int = PRODUCT_REPEAT_X32) -> ModuleType:
    """Compile (first call per key and source hash) and import the extension for the current CUDA device.

    mma_repeat_x32 other than 32 gives the sm_120-balance emulation build (never the product's path).
    Raises RuntimeError when no CUDA device is visible (the extension targets the device's architecture).
    """
    flags = emulation_flags(mma_repeat_x32)
    if not torch.cuda.is_available():
        raise RuntimeError("kernel.build.load: expected a visible CUDA device, found none")
    from torch.utils.cpp_extension import load as torch_load  # imports ninja lookups; keep it lazy

    major, minor = torch.cuda.get_device_capability()
    suffix = variant_suffix(mma_repeat_x32)
    directory = build_dir()
    directory = directory.with_name(directory.name + suffix)
    directory.mkdir(parents=True, exist_ok=True)
    # torch reads the target list from this variable; set it to the current device only, then restore.
    saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
    os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    try:
        return torch_load(
            name=f"verify_attn_{source_hash()}{suffix}",
            sources=[str(CSRC / name) for name in SOURCES],
            extra_cflags=["-O3"],  # torch picks the C++ standard its own headers need
            extra_cuda_cflags=list(flags),
            extra_include_paths=[str(CSRC)],
            build_directory=str(directory),
            verbose=verbose,
        )
    finally:
        if saved is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = saved
