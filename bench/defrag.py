"""`python -m bench defrag`: KV pool defragmentation on the GPU against the copy bandwidth of the same run.

Three measurements, each on a pool of `--layers` layers (61, Kimi K2's depth; every row moves in every layer):

- Tier 0 (`defrag.tier0_*`, params rows, layers, pool_rows): one request of 91,000 tokens whose rows lie
  scattered, in random order, over the first 136,500 slots of a 196,608-slot pool (density 2/3: a pool that has
  reused freed slots for a while), 15 other requests over half of the rest; compacted into one run.
- Tier 1 (`defrag.tier1_*`, params live_requests, occupancy, layers, pool_rows): 16 live requests scattered
  uniformly over a 131,072-slot pool (9.2 GB at 61 layers), the pool half full and 90% full; compacted into 16
  runs and one free run at the end.
- The verify kernel at 91k (`defrag.verify_time_us`, params impl, ctx, heads, nodes, batch, layout): the input
  sets of `python -m bench verify` (slots scattered through a pool 25% larger than the rows), then the same
  sets after Tier 1 (each request's prefix and tree one run), each call replayed from one CUDA graph that was
  captured on the scattered layout: the slot buffers are rewritten in place and the same graph replays. The
  outputs before and after must be equal bit for bit.

Throughput is useful bytes over time: every row that changes slot is read once and written once, 2 x rows
moved x layers x 1152 bytes, however the executor got it there (`info.executor_bytes` adds the staged rows'
second trip through scratch). `defrag.tier*_copy_fraction` is that over the median of `defrag.copy_tbps`
(`bench.ceilings.copy_bandwidth`: a 2 GiB device-to-device copy, read + write) of the same run; it is not
named `ceiling.copy_tbps`, so plan 0002's gates on that ceiling keep judging the verify runs. The plan's
time (`defrag.tier*_plan_us`, on the GPU, host included) is reported apart: it is made once per
defragmentation, before anything moves.

Before timing, each tier's first execution is checked: every request's rows, in every layer, equal the rows it
had, and no other row changed. Timed executions replay the same moves over the moved rows (the same traffic).

Exit codes as `python -m bench verify`: 0 measured, 1 a check failed or a measurement raised (the rest is
still measured and written), 2 usage, 3 no CUDA device.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from bench import ceilings, results
from bench.timing import capture_graph, l2_bytes, rotation_sets, summarize, time_device
from bench.verify import ROOT, command_line, environment
from kernel.defrag import MovePlan, execute_moves, fragmentation, plan_tier0, plan_tier1
from kernel.engine.kv_pool import ROW, ROW_BYTES
from kernel.trees import VerifyInputs, make_inputs

LAYERS = 61
TIER0_ROWS, TIER0_POOL, TIER0_DENSITY, TIER0_OTHERS = 91000, 196608, 2 / 3, 15
TIER1_POOL, TIER1_REQUESTS, OCCUPANCIES = 131072, 16, (0.5, 0.9)
VERIFY_CTX, VERIFY_SHAPES = 91000, ((1, 8, 16), (1, 8, 64))  # (batch, heads, nodes)
PLAN_SAMPLES = 10
EXIT_OK, EXIT_FAILED, EXIT_NO_CUDA = 0, 1, 3


class CheckFailure(Exception):
    """A defragmentation moved a row wrong, or changed a verify output."""


@dataclass(frozen=True)
class Scenario:
    """A fragmented pool: its ownership mask and its requests' slot lists (int64, on the pool's device)."""

    owned: torch.Tensor
    requests: list[torch.Tensor]


def _split(slots: torch.Tensor, count: int, gen: torch.Generator) -> list[torch.Tensor]:
    """`slots` cut into `count` non-empty lists at random points."""
    n = slots.numel()
    cuts = torch.randperm(n - 1, generator=gen, device=slots.device)[: count - 1] + 1
    bounds = [0, *sorted(cuts.tolist()), n]
    return [slots[a:b] for a, b in itertools.pairwise(bounds)]


def tier0_scenario(
    pool_rows: int, rows: int, density: float, others: int, seed: int, device: str | torch.device
) -> Scenario:
    """Request 0: `rows` slots drawn at random, in random order, from the first rows / density slots; `others`
    requests over half of the remaining slots."""
    gen = torch.Generator(device=device).manual_seed(seed)
    region = min(pool_rows, round(rows / density))
    mine = torch.randperm(region, generator=gen, device=device)[:rows]
    rest = pool_rows - region
    theirs = torch.randperm(rest, generator=gen, device=device)[: rest // 2] + region
    requests = [mine, *_split(theirs, others, gen)] if others else [mine]
    owned = torch.zeros(pool_rows, dtype=torch.bool, device=device)
    for r in requests:
        owned[r] = True
    return Scenario(owned, requests)


def tier1_scenario(pool_rows: int, requests: int, occupancy: float, seed: int, device: str | torch.device) -> Scenario:
    """`requests` requests of random lengths holding `occupancy` of the pool, every slot drawn at random."""
    gen = torch.Generator(device=device).manual_seed(seed)
    live = round(occupancy * pool_rows)
    slots = torch.randperm(pool_rows, generator=gen, device=device)[:live]
    owned = torch.zeros(pool_rows, dtype=torch.bool, device=device)
    owned[slots] = True
    return Scenario(owned, _split(slots, requests, gen))


def useful_bytes(plan: MovePlan, layers: int) -> int:
    """Every moved row read once and written once, in every layer."""
    return 2 * plan.rows_moved * layers * ROW_BYTES


def executor_bytes(plan: MovePlan, layers: int) -> int:
    """What the executor reads and writes: the staged rows make a second trip through scratch."""
    return 2 * (plan.rows_moved + plan.moves.staged) * layers * ROW_BYTES


def check_moves(before: torch.Tensor, after: torch.Tensor, plan: MovePlan) -> None:
    """CheckFailure unless, layer by layer, every request's rows moved with it and no other row changed."""
    still = torch.ones(before.shape[1], dtype=torch.bool, device=before.device)
    still[plan.moves.dst.to(before.device)] = False
    for layer in range(before.shape[0]):
        for i, (old, new) in enumerate(zip(plan.before, plan.after, strict=True)):
            if not torch.equal(after[layer, new], before[layer, old]):
                raise CheckFailure(f"tier {plan.tier}: request {i}'s rows differ in layer {layer}")
        if not torch.equal(after[layer, still], before[layer, still]):
            raise CheckFailure(f"tier {plan.tier}: a row that should not move changed in layer {layer}")


def plan_times(make: Callable[[], MovePlan]) -> list[float]:
    """Samples (us) of making the plan on the GPU, host work included."""
    make()
    samples = []
    for _ in range(PLAN_SAMPLES):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        make()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e6)
    return samples


def measure_tier(
    name: str,
    scenario: Scenario,
    make: Callable[[Scenario], MovePlan],
    params: dict[str, str | int | float | bool],
    layers: int,
    copy_tbps: float,
    budget_s: float,
    seed: int,
) -> tuple[list[dict[str, object]], str]:
    """Plan, check and time one tier on a fresh random pool of `layers` layers."""
    capacity = int(scenario.owned.numel())
    kv = torch.empty(layers, capacity, ROW, dtype=torch.bfloat16, device="cuda")
    kv.normal_(generator=torch.Generator(device="cuda").manual_seed(seed))
    report = fragmentation(scenario.owned, scenario.requests)
    plans = plan_times(lambda: make(scenario))
    plan = make(scenario)
    before = kv.clone()
    execute_moves(kv, plan)
    check_moves(before, kv, plan)
    del before
    torch.cuda.empty_cache()
    times = time_device(lambda _i: execute_moves(kv, plan), 1, budget_s=budget_s)
    moved = useful_bytes(plan, layers)
    tbps = [moved / (us * 1e-6) / 1e12 for us in times]
    info: dict[str, str | int | float | bool] = {
        "rows_moved": plan.rows_moved,
        "waves": plan.moves.waves,
        "staged_rows": plan.moves.staged,
        "useful_bytes": moved,
        "executor_bytes": executor_bytes(plan, layers),
        "pool_bytes": layers * capacity * ROW_BYTES,
        "copy_tbps": round(copy_tbps, 4),
        "runs_before": sum(report.request_runs),
        "free_runs_before": report.free_runs,
    }
    entries = [
        results.case(f"defrag.{name}_tbps", params, "TB/s", "higher", tbps, summarize(tbps), info),
        results.case(
            f"defrag.{name}_copy_fraction",
            params,
            "fraction",
            "higher",
            [t / copy_tbps for t in tbps],
            summarize([t / copy_tbps for t in tbps]),
            info,
        ),
        results.case(f"defrag.{name}_time_us", params, "us", "lower", times, summarize(times), info),
        results.case(f"defrag.{name}_plan_us", params, "us", "lower", plans, summarize(plans), info),
    ]
    median = float(summarize(tbps)["median"])
    cell = (
        f"{median:.2f} TB/s ({median / copy_tbps:.0%} of copy), {float(summarize(times)['median']):.0f} us, "
        f"{plan.rows_moved} rows in {plan.moves.waves} waves + {plan.moves.staged} staged, "
        f"plan {float(summarize(plans)['median']) / 1e3:.1f} ms"
    )
    return entries, cell


def _compact_inputs(x: VerifyInputs, ctx: int) -> None:
    """Tier 1 over the input set's pool (each request: its prefix, then its tree), slot buffers rewritten in place."""
    batch = x.tree_slots.shape[0]
    lists = [
        torch.cat([x.prefix_slots[b * ctx : (b + 1) * ctx], x.tree_slots[b]]).to(torch.int64) for b in range(batch)
    ]
    owned = torch.zeros(x.kv_cache.shape[0], dtype=torch.bool, device=x.kv_cache.device)
    for slots in lists:
        owned[slots] = True
    plan = plan_tier1(owned, lists)
    execute_moves(x.kv_cache.unsqueeze(0), plan)
    for b, new in enumerate(plan.after):
        x.prefix_slots[b * ctx : (b + 1) * ctx].copy_(new[:ctx])
        x.tree_slots[b].copy_(new[ctx:])


def measure_verify(impls: list[str], budget_s: float) -> tuple[list[dict[str, object]], list[str], bool]:
    """The verify kernel at 91k on scattered and on compacted slots, one graph per set replayed on both."""
    from kernel import verify_attention

    entries: list[dict[str, object]] = []
    lines, failed = [], False
    for batch, heads, nodes in VERIFY_SHAPES:
        ctx = VERIFY_CTX
        n_sets = rotation_sets(batch * (ctx + nodes) * ROW_BYTES, l2_bytes(torch.device("cuda")))
        sets = [make_inputs(batch, heads, nodes, [ctx] * batch, seed=9000 + s, device="cuda") for s in range(n_sets)]
        graphs: dict[str, list[Callable[[], torch.Tensor]]] = {}
        outputs: dict[str, list[torch.Tensor]] = {}
        samples: dict[tuple[str, str], list[float]] = {}
        for impl in impls:
            calls = []
            for x in sets:
                replay = capture_graph(lambda x=x, impl=impl: verify_attention(*x.args(), backend=impl))
                if replay is None:
                    raise RuntimeError(f"{impl}: the verify call could not be captured")
                calls.append(replay)
            graphs[impl] = calls
            outputs[impl] = [call().clone() for call in calls]
            samples[impl, "fragmented"] = time_device(lambda i, c=calls: c[i](), n_sets, budget_s=budget_s)
        for x in sets:
            _compact_inputs(x, ctx)
        for impl in impls:
            for s, call in enumerate(graphs[impl]):
                if not torch.equal(call(), outputs[impl][s]):
                    failed = True
                    print(
                        f"defrag verify {impl} ({batch},{heads},{nodes}): output changed by compaction", file=sys.stderr
                    )
            samples[impl, "compacted"] = time_device(lambda i, c=graphs[impl]: c[i](), n_sets, budget_s=budget_s)
            medians = {}
            for layout in ("fragmented", "compacted"):
                params: dict[str, str | int | float | bool] = {
                    "impl": impl,
                    "ctx": ctx,
                    "heads": heads,
                    "nodes": nodes,
                    "batch": batch,
                    "layout": layout,
                }
                times = samples[impl, layout]
                entries.append(
                    results.case(
                        "defrag.verify_time_us",
                        params,
                        "us",
                        "lower",
                        times,
                        summarize(times),
                        {"seeds": ",".join(str(9000 + s) for s in range(n_sets)), "graph": True},
                    )
                )
                medians[layout] = float(summarize(times)["median"])
            lines.append(
                f"verify {impl:6} ({batch},{heads},{nodes}) 91k: fragmented {medians['fragmented']:.1f} us, "
                f"compacted {medians['compacted']:.1f} us ({medians['compacted'] / medians['fragmented'] - 1:+.1%})"
            )
        del sets, graphs, outputs
        torch.cuda.empty_cache()
    return entries, lines, failed


def run(impls: list[str], out_dir: Path, command: str, budget_s: float = 0.5, layers: int = LAYERS) -> int:
    """Run the defrag benchmark; returns the exit code."""
    if not torch.cuda.is_available():
        print("bench defrag: no CUDA device", file=sys.stderr)
        return EXIT_NO_CUDA
    now = results.utc_now()
    copy = ceilings.copy_bandwidth()
    copy_tbps = float(summarize(copy)["median"])
    doc_cases: list[dict[str, object]] = [
        results.case("defrag.copy_tbps", {"kind": "device-to-device copy"}, "TB/s", "higher", copy, summarize(copy))
    ]
    print(f"copy {copy_tbps:.2f} TB/s (read + write)", flush=True)
    failed = False
    tiers: list[tuple[str, Callable[[], Scenario], Callable[[Scenario], MovePlan], dict]] = [
        (
            "tier0",
            lambda: tier0_scenario(TIER0_POOL, TIER0_ROWS, TIER0_DENSITY, TIER0_OTHERS, 1, "cuda"),
            lambda s: plan_tier0(s.owned, s.requests, 0),
            {"rows": TIER0_ROWS, "layers": layers, "pool_rows": TIER0_POOL},
        ),
        *(
            (
                "tier1",
                lambda occ=occ: tier1_scenario(TIER1_POOL, TIER1_REQUESTS, occ, 2, "cuda"),
                lambda s: plan_tier1(s.owned, s.requests),
                {"live_requests": TIER1_REQUESTS, "occupancy": occ, "layers": layers, "pool_rows": TIER1_POOL},
            )
            for occ in OCCUPANCIES
        ),
    ]
    for seed, (name, scenario, make, params) in enumerate(tiers):
        label = " ".join(f"{k}={v}" for k, v in params.items())
        try:
            entries, cell = measure_tier(name, scenario(), make, params, layers, copy_tbps, budget_s, seed)
            doc_cases.extend(entries)
            print(f"{name} {label}: {cell}", flush=True)
        except Exception as err:
            failed = True
            print(f"{name} {label}: FAILED {type(err).__name__}: {err}", file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
    if impls:
        try:
            entries, lines, wrong = measure_verify(impls, budget_s)
            doc_cases.extend(entries)
            failed |= wrong
            print("\n".join(lines), flush=True)
        except Exception as err:
            failed = True
            print(f"verify: FAILED {type(err).__name__}: {err}", file=sys.stderr, flush=True)
    doc = results.document("defrag", results.provenance(ROOT, command, environment(), now), doc_cases)
    print(f"wrote {results.write(doc, out_dir, now)}")
    return EXIT_FAILED if failed else EXIT_OK


__all__ = [
    "Scenario",
    "check_moves",
    "command_line",
    "executor_bytes",
    "run",
    "tier0_scenario",
    "tier1_scenario",
    "useful_bytes",
]
