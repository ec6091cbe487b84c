"""The cluster merge against the combine (issue 27, "no second kernel"): one process, the same inputs, two rounds.

    python3 -m bench.cluster_probe [--reps 200] [--variants product,v26]

For each build (this device's product and v26, sm_120's build) and case, the split kernel at its own split count
(`auto`), then at that count rounded down to a multiple of 8 (S) with the partials merged by the combine alone
(`S x 1`) and in clusters of 2, 4 and 8 splits (`S x c`, Params::cluster: each cluster merges its splits through
distributed shared memory, the combine merges S / c partials). Each configuration's output is first checked against
the fp32 reference by `bench verify`'s rule, then timed as `bench verify` times a call (graph replays, input sets
rotated past twice the L2, queued behind a GPU-side wait). Then a 61-layer stack as `bench step` runs it (each layer's
own pool: the store of the tree's rows, then the attention as its programmatic dependent, pdl "prefix"), replayed from
one graph. Round two runs the configurations in reverse order. A probe: its numbers go to kernel/NOTES.md with this
file's log, never to a result file.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from bench.timing import capture_graph, l2_bytes, time_device
from bench.verify import Case, check_output, input_sets
from kernel import build

CASES = (
    Case(1, 8, 16, 5700),
    Case(1, 8, 64, 5700),
    Case(4, 8, 16, 5700),
    Case(1, 8, 16, 23000),
    Case(1, 8, 64, 23000),
    Case(1, 8, 64, 91000),
)
STEP_CASES = (Case(1, 8, 16, 5700), Case(1, 8, 64, 5700), Case(1, 8, 16, 23000))
CLUSTERS = (1, 2, 4, 8)
LAYERS = 61


def stats(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=10)
    return f"{statistics.median(samples):9.2f} us (p10 {q[0]:.2f}, p90 {q[-1]:.2f})"


FIXED: list[tuple[int, int]] = []  # --configs: (splits, cluster) pairs instead of S x c


def configs(auto: int) -> list[tuple[str, int, int]]:
    """(label, splits, cluster): the launcher's own count, then S = auto rounded down to a multiple of 8 per cluster
    (or the --configs pairs)."""
    out = [(f"auto ({auto})", 0, 1)]
    if FIXED:
        return out + [(f"{s} x {c}", s, c) for s, c in FIXED]
    s = auto - auto % 8
    if s >= 8:
        out += [(f"{s} x {c}", s, c) for c in CLUSTERS]
    return out


def standalone(ext, case: Case, reps: int, sms: int) -> None:
    sets, _ = input_sets(case, l2_bytes(torch.device("cuda")))
    auto = int(ext.num_splits(case.batch, case.nodes, case.heads, case.batch * case.ctx, sms))
    cfgs = configs(auto)
    ok = []
    for label, s, c in cfgs:
        out, _ = ext.forward(*sets[0].args(), False, s, 1, c)
        why = check_output(out, sets[0], prefix_only=False)
        print(f"  {case} {label:<12} check: {why or 'passes'}")
        if why is None:
            ok.append((label, s, c))
    for rnd in range(2):
        for label, s, c in ok if rnd == 0 else ok[::-1]:
            graphs = [capture_graph(lambda x=x, s=s, c=c: ext.forward(*x.args(), False, s, 1, c)) for x in sets]
            samples = time_device(lambda i, g=graphs: g[i](), len(sets), min_reps=reps, max_reps=reps, hold=True)
            print(f"  round {rnd + 1} {case} {label:<12} {stats(samples)}")


def step(ext, case: Case, reps: int, sms: int, gen: torch.Generator) -> None:
    """LAYERS layers, each its own pool: store_rows of the tree's rows (pdl), then the attention (pdl "prefix")."""
    b, h, t, ctx = case.batch, case.heads, case.nodes, case.ctx
    per = b * (ctx + t)
    layers = []
    for _ in range(LAYERS):
        pool = torch.randn(per, 576, generator=gen).to("cuda", torch.bfloat16)
        perm = torch.randperm(per, generator=gen).to(torch.int32)
        q = torch.randn(b, t, h, 576, generator=gen).to("cuda", torch.bfloat16)
        indptr = (torch.arange(b + 1, dtype=torch.int32) * ctx).cuda()
        prefix = perm[: b * ctx].contiguous().cuda()
        tree = perm[b * ctx :].reshape(b, t).contiguous().cuda()
        mask = torch.tensor([(1 << (i + 1)) - 1 if i < 63 else -1 for i in range(t)], dtype=torch.int64)
        rows = torch.randn(b * t, 576, generator=gen).to("cuda", torch.bfloat16)
        layers.append((q, pool, indptr, prefix, tree, mask.repeat(b, 1).cuda(), tree.view(-1).long(), rows))
    auto = int(ext.num_splits(b, t, h, b * ctx, sms))
    scale = 576**-0.5

    def run(s: int, c: int):
        out = None
        for q, pool, indptr, prefix, tree, mask, index, rows in layers:
            ext.store_rows(pool, index, rows, True)
            out, _ = ext.forward(q, pool, indptr, prefix, tree, mask, scale, False, s, 2, c)
        return out

    cfgs = configs(auto)
    ref = run(0, 1)
    for rnd in range(2):
        for label, s, c in cfgs if rnd == 0 else cfgs[::-1]:
            graph = capture_graph(lambda s=s, c=c: run(s, c))
            same = (run(s, c).float() - ref.float()).abs().max().item()
            samples = time_device(lambda i, g=graph: g(), 1, min_reps=reps // 4, max_reps=reps // 4, hold=True)
            print(f"  round {rnd + 1} step {case} {label:<12} {stats(samples)}  |diff| vs auto {same:.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--variants", default="product,v26")
    ap.add_argument("--configs", default="", help="splits x cluster pairs, e.g. 60x4,56x8 (default: S x 1, 2, 4, 8)")
    ap.add_argument("--cases", default="", help="indices into CASES (default all); STEP_CASES likewise by --step-cases")
    ap.add_argument("--step-cases", default="")
    args = ap.parse_args()
    FIXED.extend(tuple(int(v) for v in pair.split("x")) for pair in args.configs.split(",") if pair)  # type: ignore[misc]
    cases = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else CASES
    step_cases = [STEP_CASES[int(i)] for i in args.step_cases.split(",")] if args.step_cases else STEP_CASES
    dev = torch.cuda.current_device()
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    cc = torch.cuda.get_device_capability(dev)
    print(f"{torch.cuda.get_device_name(dev)}, {sms} SMs, product {build.product_variant(cc)}")
    for variant in args.variants.split(","):
        ext = build.load() if variant == "product" else build.load(variant=variant)
        print(f"== {variant}: max active clusters of 2, 4, 8: {[ext.max_active_clusters(c) for c in (2, 4, 8)]}")
        for case in cases:
            standalone(ext, case, args.reps, sms)
        gen = torch.Generator().manual_seed(0)
        for case in step_cases:
            step(ext, case, args.reps, sms, gen)


if __name__ == "__main__":
    main()
