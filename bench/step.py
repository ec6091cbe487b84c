"""`python -m bench step`: one verify step of a 61-layer attention stack, eager and replayed from a CUDA graph.

A step is what the engine (`kernel/engine/`) runs per decode step, attention part: the step's plan, computed
once on the device (`StepPlan.compute`), then per layer the tree nodes' KV rows stored into that layer's pool
and `kernel.verify_attention` over the request's prefix and tree. The model's dense projections are left out
(they are not this project's code and would hide the attention's cost); per-layer q and KV rows are fixed
random inputs. Every layer has its own pool (one 1152-byte row per token), so no layer finds the previous
one's rows in the L2, as in a real model. Slots are scattered through each pool (page_size = 1).

Every case runs from buffers sized for MAX_CONTEXT tokens per request, as a serving engine's captured graphs
are: one capture serves every context up to it. For each case (impl, ctx, heads 8, nodes, batch, layers):

- `engine.step_time_us`: the eager step (Python per layer, the public API's checks included), CUDA events;
- `engine.graph_replay_step_us`: the same step replayed from one CUDA graph;
- `engine.kernel_time_us`: the time the GPU is busy inside one replayed step (the union of its kernels'
  intervals, from the profiler's trace), and `engine.graph_over_kernels` = replay / busy (the target: <= 1.3
  at 5.7k), whose `info.outside_kernels_us` is median replay - median busy (the time outside kernels);
- `engine.plan_overhead_us`: the plan's time on the GPU in a graph holding the plan alone (first kernel start
  to last kernel end, from the profiler's trace): the whole per-step planning cost, whatever the layer count;
  `engine.plan_graph_replay_us`: that graph's replay timed by CUDA events (its launch included);
- `engine.graph_workspace_bytes`: what the step's graph pins for MAX_CONTEXT: its private memory pool
  (outputs, split partials, temporaries) plus the plan's buffers (`info` splits the two);
  `engine.pool_bytes_per_token`: the pool's bytes per token for the stack's layers.

Before timing, the last layer's output of the replayed step must equal the eager step's bit for bit and pass
the fp32 reference's flash-attention rule (`bench.verify.check_output`); a wrong step is not timed. Triton's
eager step is timed at 5.7k and at the gate's case (91k, T 16, batch 1) only: at long contexts its kernels
take ~99% of the step, and each of its 91k steps costs ~0.6 s.

Exit codes as `python -m bench verify`: 0 measured, 1 an implementation failed its check or raised, 2 usage,
3 no CUDA device.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from bench import results
from bench.cli import STEP_IMPLS, WARMUP_S
from bench.timing import summarize, time_device
from bench.verify import ROOT, check_output, command_line, environment
from kernel.engine.attention import StepInputs, TreeVerifyAttention
from kernel.engine.graph import GraphRunner
from kernel.engine.kv_pool import KVPool
from kernel.trees import VerifyInputs, tree_mask, tree_parents, yarn_sm_scale

LAYERS = 61  # Kimi K2's depth
HEADS = 8
SHAPES = ((16, 1), (64, 1), (16, 4), (64, 4))  # (nodes, batch)
CONTEXTS = {"short": (5700,), "long": (23000, 91000), "all": (5700, 23000, 91000)}
MAX_CONTEXT = 98304  # the graphs' buffers: 96k tokens per request
TRITON_EAGER = {(5700, 16, 1), (5700, 64, 1), (5700, 16, 4), (5700, 64, 4), (91000, 16, 1)}  # (ctx, nodes, batch)
EXIT_OK, EXIT_IMPL_FAILED, EXIT_NO_CUDA = 0, 1, 3


@dataclass(frozen=True)
class StepCase:
    """One step shape: every request holds `ctx` committed tokens and verifies a tree of `nodes` nodes."""

    ctx: int
    nodes: int
    batch: int
    heads: int = HEADS
    layers: int = LAYERS

    def params(self, impl: str) -> dict[str, str | int | float | bool]:
        return {
            "impl": impl,
            "ctx": self.ctx,
            "heads": self.heads,
            "nodes": self.nodes,
            "batch": self.batch,
            "layers": self.layers,
        }


def cases_for(selection: str, layers: int = LAYERS) -> list[StepCase]:
    return [StepCase(ctx, nodes, batch, layers=layers) for ctx in CONTEXTS[selection] for nodes, batch in SHAPES]


class AttentionStack:
    """The engine's step machinery over `layers` layers of attention alone, for one case."""

    def __init__(
        self, case: StepCase, impl: str, seed: int, max_context: int = MAX_CONTEXT, device: str = "cuda"
    ) -> None:
        self.case = case
        gen = torch.Generator(device=device).manual_seed(seed)
        b, t, h, layers = case.batch, case.nodes, case.heads, case.layers
        rows = b * (case.ctx + t) + max(1, b * (case.ctx + t) // 4)
        self.pool = KVPool(layers, rows, torch.device(device))
        self.pool.kv.normal_(generator=gen)
        order = torch.randperm(rows, generator=gen, device=device)[: b * (case.ctx + t)].to(torch.int32).view(b, -1)
        self.req_to_token = torch.zeros(b, max_context, dtype=torch.int32, device=device)
        self.req_to_token[:, : case.ctx] = order[:, : case.ctx]
        # An impl of STEP_IMPLS, or a backend by its name (tests: "reference").
        backend, pdl, pdl_store = STEP_IMPLS.get(impl, (impl, "launch", False))
        self.attention = TreeVerifyAttention(
            self.pool, self.req_to_token, backend, yarn_sm_scale(), pdl=pdl, pdl_store=pdl_store
        )
        self.q = torch.randn(layers, b, t, h, 576, generator=gen, device=device).to(torch.bfloat16)
        self.kv_rows = torch.randn(layers, b * t, 576, generator=gen, device=device).to(torch.bfloat16)
        import random

        rng = random.Random(seed)
        parents = [tree_parents("random", t, rng) for _ in range(b)]
        depths = [[0] * t for _ in range(b)]
        for r, ps in enumerate(parents):
            for i in range(1, t):
                depths[r][i] = depths[r][ps[i]] + 1
        self.inputs = StepInputs(
            seq_lens=torch.full((b,), case.ctx, dtype=torch.int32),
            tokens=torch.zeros(b, t, dtype=torch.int64),
            slots=order[:, case.ctx :].cpu(),
            masks=torch.tensor([tree_mask("random", t, random.Random(seed + r)) for r in range(b)], dtype=torch.int64),
            depths=torch.tensor(depths, dtype=torch.int64),
        )

    def layers(self) -> torch.Tensor:
        """Every layer's KV store + attention on the current plan; returns the last layer's output."""
        out = None
        for layer in range(self.case.layers):
            out = self.attention.forward(self.q[layer], self.kv_rows[layer], layer)
        assert out is not None
        return out

    def eager_step(self) -> torch.Tensor:
        self.attention.init_forward_metadata(self.inputs)
        return self.layers()

    def capture(self) -> tuple[GraphRunner, GraphRunner]:
        """(the whole step's graph, the plan-alone graph), both against the static plan for this (B, T)."""
        plan = self.attention.init_forward_metadata_capture_cuda_graph(self.case.batch, self.case.nodes)
        self.attention.init_forward_metadata_replay_cuda_graph(self.inputs)

        def step() -> torch.Tensor:
            plan.compute()
            return self.layers()

        return GraphRunner(step), GraphRunner(plan.compute)

    def last_layer_inputs(self) -> VerifyInputs:
        plan = self.attention.plan
        assert plan is not None
        return VerifyInputs(
            self.q[-1],
            self.pool.layer(self.case.layers - 1),
            plan.prefix_indptr,
            plan.prefix_slots,
            plan.tree_slots,
            plan.tree_mask,
            self.attention.sm_scale,
        )


def device_activity(run, reps: int) -> list[tuple[float, float]]:
    """Per call of `run()`: (span, busy) in us on the GPU's timeline, from the profiler's trace of `reps` calls.

    span: first kernel start to last kernel end (the call's time on the GPU, its internal gaps included, the
    graph launch before it not); busy: the union of its kernel, memcpy and memset intervals. Calls are kept
    apart by a synchronise and a 5 ms sleep, so a gap over 1 ms in the trace separates two calls. Returns []
    when the trace holds no device activity or does not split into `reps` calls."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            run()
            torch.cuda.synchronize()
            time.sleep(0.005)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as handle:
            events = json.load(handle).get("traceEvents", [])
    spans = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in events
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "ts" in e
    )
    return span_and_busy(spans, reps)


def span_and_busy(spans: list[tuple[float, float]], calls: int, gap_us: float = 1000.0) -> list[tuple[float, float]]:
    """Split sorted (start, end) device intervals into calls at idle gaps over `gap_us`; per call, (first start
    to last end, the union's length). [] unless there are exactly `calls` calls."""
    groups: list[list[tuple[float, float]]] = []
    for s, e in sorted(spans):
        if groups and s - max(end for _, end in groups[-1]) < gap_us:
            groups[-1].append((s, e))
        else:
            groups.append([(s, e)])
    if len(groups) != calls:
        return []
    out = []
    for group in groups:
        busy, (start, end) = 0.0, group[0]
        for s, e in group[1:]:
            if s > end:
                busy, start, end = busy + end - start, s, e
            else:
                end = max(end, e)
        out.append((max(e for _, e in group) - group[0][0], busy + end - start))
    return out


class StepFailure(Exception):
    """An implementation's step could not be measured (wrong output, or an error)."""


def warm_up(replay, seconds: float) -> int:
    """Replay the step for `seconds` (at least once when seconds > 0); returns the count. A long step draws the GPU
    to its power cap within about a second, and its clock then dips and settles (H100, a 91k step at batch 4:
    1,960 MHz, then 1,480-1,510, then ~1,780 after ~1.2 s; `docs/lab/runs/h100_20261206_397baad_step_power.log`):
    timings taken from a cool start fall partly into that dip, by how long the GPU idled before."""
    count, start = 0, time.perf_counter()
    while seconds > 0 and (count == 0 or time.perf_counter() - start < seconds):
        replay()
        torch.cuda.synchronize()
        count += 1
    return count


def measure(
    stack: AttentionStack, impl: str, budget_s: float, warmup_s: float = 0.0
) -> tuple[list[dict[str, object]], str]:
    """Check, then time one case's step for one implementation, after `warmup_s` seconds of replays; returns its
    result cases and a table cell."""
    case = stack.case
    params = case.params(impl)
    eager_out = stack.eager_step().clone()
    graph, plan_graph = stack.capture()
    replay_out = graph.replay().clone()
    if not torch.equal(replay_out, eager_out):
        raise StepFailure(f"{impl} {params}: the replayed step's output differs from the eager step's")
    problem = check_output(replay_out, stack.last_layer_inputs(), prefix_only=False)
    if problem is not None:
        raise StepFailure(f"{impl} {params}: WRONG: {problem}")
    entries: list[dict[str, object]] = []
    warm = warm_up(graph.replay, warmup_s)

    def add(metric: str, unit: str, direction: str, samples: list[float], extra: dict | None = None) -> None:
        entries.append(
            results.case(
                metric,
                {**params, **(extra or {})},
                unit,
                direction,
                samples,
                summarize(samples),
                {"max_context": MAX_CONTEXT, **({"warmup_replays": warm} if warm else {})},
            )
        )

    cell = []
    # The replays first, right after the warm-up, for every implementation alike: under the power cap the clock
    # oscillates, and timing cuda's eager step (only cuda's, at 23k and 91k) between its warm-up and its replays put
    # them at another phase of it than cuda_pdl_off's (65ce753: cuda read 4-5% slower at 91k in the bench, while
    # timed alike, 40 replays after a warm-up, the two stood within 0.6%; docs/lab/runs/
    # h100_20261206_397baad_step_power.log).
    replays = time_device(lambda i: graph.replay(), 1, budget_s=budget_s)
    add("engine.graph_replay_step_us", "us", "lower", replays)
    median = float(summarize(replays)["median"])
    cell.append(f"graph {median:.0f}")
    activity = device_activity(graph.replay, 3)
    if activity:
        busy = [b for _, b in activity]
        kernels = float(summarize(busy)["median"])
        add("engine.kernel_time_us", "us", "lower", busy)
        # The time outside kernels is replay - busy; it goes into `info`, not into samples: the profiler's
        # kernel intervals run a little long, so it can come out slightly negative, and a time must be > 0.
        ratios = [r / kernels for r in replays]
        entries.append(
            results.case(
                "engine.graph_over_kernels",
                params,
                "x",
                "lower",
                ratios,
                summarize(ratios),
                {"max_context": MAX_CONTEXT, "outside_kernels_us": round(median - kernels, 1)},
            )
        )
        cell.append(f"kernels {kernels:.0f} ({median / kernels:.2f}x)")
    plan_spans = [span for span, _ in device_activity(plan_graph.replay, 20)]
    if plan_spans:
        add("engine.plan_overhead_us", "us", "lower", plan_spans)
        cell.append(f"plan {summarize(plan_spans)['median']:.1f}")
    plan_replays = time_device(lambda i: plan_graph.replay(), 1, budget_s=min(budget_s, 0.1))
    add("engine.plan_graph_replay_us", "us", "lower", plan_replays)
    cell.append(f"plan graph {summarize(plan_replays)['median']:.1f}")
    plan_bytes = stack.attention.plan.nbytes() if stack.attention.plan is not None else 0
    entries.append(
        results.case(
            "engine.graph_workspace_bytes",
            params,
            "B",
            "lower",
            [float(graph.workspace_bytes + plan_bytes)],
            summarize([float(graph.workspace_bytes + plan_bytes)]),
            {"max_context": MAX_CONTEXT, "graph_pool_bytes": graph.workspace_bytes, "plan_bytes": plan_bytes},
        )
    )
    cell.append(f"workspace {(graph.workspace_bytes + plan_bytes) / 2**20:.1f} MiB")
    # The eager step last: only some implementations time it, so anything timed after it would stand at another
    # phase of the power cap's oscillation for those than for the others.
    if impl == "cuda" or (case.ctx, case.nodes, case.batch) in TRITON_EAGER:
        eager = time_device(lambda i: stack.eager_step(), 1, budget_s=budget_s)
        add("engine.step_time_us", "us", "lower", eager)
        cell.insert(0, f"eager {summarize(eager)['median']:.0f}")
    return entries, ", ".join(cell)


def pooled(rounds: list[list[dict[str, object]]]) -> list[dict[str, object]]:
    """One implementation's result cases of several rounds of one case as one set: the samples of each (metric,
    params) joined in round order and summarized again. `info` is the first round's, but where several rounds
    pooled: `rounds` = how many gave that metric (the profiler's may give none), `warmup_replays` their sum, and
    `outside_kernels_us` the pooled replays' median minus the pooled kernel time's."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (metric, params) -> that case in each round
    for entries in rounds:
        for entry in entries:
            groups.setdefault((str(entry["metric"]), json.dumps(entry["params"], sort_keys=True)), []).append(entry)
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for key, group in groups.items():
        samples = [s for entry in group for s in entry["samples"]]
        merged[key] = {**group[0], "samples": samples, "stats": summarize(samples)}
    for (_, params), entry in merged.items():
        group = groups[entry["metric"], params]
        if len(group) < 2:
            continue
        info = {**entry.get("info", {}), "rounds": len(group)}
        if "warmup_replays" in info:
            info["warmup_replays"] = sum(int(e.get("info", {}).get("warmup_replays", 0)) for e in group)
        if "outside_kernels_us" in info:
            replay = merged.get(("engine.graph_replay_step_us", params))
            busy = merged.get(("engine.kernel_time_us", params))
            if replay is None or busy is None:
                del info["outside_kernels_us"]
            else:
                info["outside_kernels_us"] = round(float(replay["stats"]["median"]) - float(busy["stats"]["median"]), 1)
        entry["info"] = info
    return list(merged.values())


def run(
    selection: str,
    impls: list[str],
    out_dir: Path,
    command: str,
    budget_s: float = 0.5,
    layers: int = LAYERS,
    rounds: int = 1,
    warmup_s: float = WARMUP_S,
) -> int:
    """Run the step benchmark; returns the exit code. With rounds > 1 each case is measured that many times, the
    implementations in order, then reversed, and so on (A B, B A, A B...), and each implementation's samples are
    pooled: a drift of the GPU's clock over a case (a 91k step at batch 4 is 20 ms a replay) then weighs on every
    implementation alike instead of on the one measured last. `warmup_s`: seconds of replays before each
    implementation's timings in each round (`warm_up`), so that they are taken at the GPU's sustained clock."""
    if not torch.cuda.is_available():
        print("bench step: no CUDA device", file=sys.stderr)
        return EXIT_NO_CUDA
    now = results.utc_now()
    doc_cases: list[dict[str, object]] = []
    doc_cases.append(
        results.case(
            "engine.pool_bytes_per_token",
            {"layers": layers},
            "B",
            "lower",
            [float(layers * 1152)],
            summarize([float(layers * 1152)]),
        )
    )
    failed = False
    for index, case in enumerate(cases_for(selection, layers)):
        measured: dict[str, list[list[dict[str, object]]]] = {impl: [] for impl in impls}
        broken: set[str] = set()
        for round_ in range(rounds):
            for impl in impls if round_ % 2 == 0 else impls[::-1]:
                if impl in broken:
                    continue
                stack = None
                where = f"{impl:6} ctx {case.ctx:6} T {case.nodes:2} B {case.batch}" + (
                    f" round {round_ + 1}" if rounds > 1 else ""
                )
                try:
                    stack = AttentionStack(case, impl, seed=1000 + index)
                    entries, cell = measure(stack, impl, budget_s, warmup_s)
                    measured[impl].append(entries)
                    print(f"{where}: {cell} us", flush=True)
                except Exception as err:
                    failed = True
                    broken.add(impl)
                    print(f"{where}: FAILED {type(err).__name__}: {err}", file=sys.stderr, flush=True)
                del stack
                torch.cuda.empty_cache()
        for impl in impls:
            if impl not in broken:
                doc_cases.extend(pooled(measured[impl]))
    doc = results.document("step", results.provenance(ROOT, command, environment(), now), doc_cases)
    print(f"wrote {results.write(doc, out_dir, now)}")
    return EXIT_IMPL_FAILED if failed else EXIT_OK


__all__ = ["AttentionStack", "StepCase", "cases_for", "command_line", "device_activity", "run"]
