"""The one timing function of the benchmarks, and the input-rotation rule it relies on.

`time_device(fn, n_sets)` times `fn(i)` where `i` cycles through `n_sets` prepared input sets:
  1. warm-up: every set runs `warmup` times (module load, JIT, allocator and cuBLAS handles stay out);
  2. the repetition count follows from the warm-up's mean time: enough runs to fill `budget_s`, clamped
     to [min_reps, max_reps];
  3. each timed run is bracketed by its own pair of CUDA events (host clock on a CPU device), the events
     all read after one final synchronize, so the host never stalls the queue between runs; with `hold`, every
     run is queued behind a GPU-side wait first, so that runs shorter than the host's own submission of them (a
     graph replay costs the host about 10 us: `bench/fixed_cost_probe.py`) are timed on the GPU, back to
     back, not at the host's pace;
  4. runs rotate through the sets, so with `rotation_sets` sizing the sets to exceed 2x the L2 no run
     finds its inputs still cached by the previous one.
Returns every sample in microseconds; callers take the median (see `summarize`).

`capture_graph(fn)` records one call into a CUDA graph: serving stacks replay verify steps from graphs,
so the benchmark times graph replays where an implementation can be captured, which takes the Python
and launch overhead of multi-kernel implementations out of the comparison.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

L2_BYTES_DEFAULT = 60 * 2**20  # the H200's 60 MB L2, used when the device does not report its own
HOLD_CLOCK_HZ = 2e9  # clock at which time_device(hold=True) counts its wait's cycles


def l2_bytes(device: torch.device) -> int:
    """The device's L2 size in bytes (torch reports it for CUDA devices)."""
    if device.type == "cuda":
        size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        if size:
            return int(size)
    return L2_BYTES_DEFAULT


def rotation_sets(bytes_per_set: int, l2: int, min_sets: int = 3) -> int:
    """How many distinct input sets to rotate through: >= min_sets, and together more than 2x the L2."""
    if bytes_per_set <= 0:
        raise ValueError(f"bytes_per_set: expected > 0, got {bytes_per_set}")
    return max(min_sets, math.floor(2 * l2 / bytes_per_set) + 1)


def summarize(samples: list[float]) -> dict[str, float | int]:
    """n, median, min, mean and p90 (linear interpolation between order statistics) of the samples."""
    if not samples:
        raise ValueError("samples: expected at least one sample, got none")
    ordered = sorted(samples)
    pos = 0.9 * (len(ordered) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    p90 = ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
    return {
        "n": len(ordered),
        "median": statistics.median(ordered),
        "min": ordered[0],
        "mean": statistics.fmean(ordered),
        "p90": p90,
    }


def time_device(
    fn: Callable[[int], Any],
    n_sets: int,
    *,
    device: torch.device | str = "cuda",
    warmup: int = 2,
    budget_s: float = 0.5,
    min_reps: int = 20,
    max_reps: int = 200,
    hold: bool = False,
) -> list[float]:
    """Time `fn(i)` (i = input set index) after a warm-up; returns one sample per run, in microseconds. `hold`
    (CUDA): queue every run behind a wait on the GPU, so that the samples are the GPU's time even where a run takes
    the host longer to submit than the GPU to do (for runs with no host sync: graph replays)."""
    device = torch.device(device)
    if n_sets < 1:
        raise ValueError(f"n_sets: expected >= 1, got {n_sets}")
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(warmup):
        for i in range(n_sets):
            fn(i)
    sync()
    per_run = (time.perf_counter() - start) / max(1, warmup * n_sets)
    reps = int(min(max_reps, max(min_reps, budget_s / max(per_run, 1e-9))))
    if device.type != "cuda":
        samples = []
        for r in range(reps):
            t0 = time.perf_counter()
            fn(r % n_sets)
            samples.append((time.perf_counter() - t0) * 1e6)
        return samples
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    if hold:
        # Long enough for the host to queue every run (each takes the host at most per_run), counted at 2 GHz (an
        # SM clock at or above the devices' own, so the wait only lasts longer), at most a second.
        torch.cuda._sleep(int(min(1.0, 2 * reps * per_run + 1e-3) * HOLD_CLOCK_HZ))
    for r, (begin, end) in enumerate(events):
        begin.record()
        fn(r % n_sets)
        end.record()
    sync()
    return [begin.elapsed_time(end) * 1e3 for begin, end in events]


def capture_graph(fn: Callable[[], Any]) -> Callable[[], Any] | None:
    """`fn` captured into a CUDA graph (the returned callable replays it and returns the captured output),
    or None when `fn` cannot be captured (a host sync, an uncapturable op)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up off the capture stream, as torch.cuda.graph requires
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            out = fn()
    except RuntimeError:
        torch.cuda.synchronize()
        return None

    def replay() -> Any:
        graph.replay()
        return out

    return replay
