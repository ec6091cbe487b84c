"""What a verify call costs before it does any work (issue 27): the floors under the fixed cost, timed as
`python -m bench verify` times a call (one CUDA graph replayed, each replay between its own pair of events).

    python3 -m bench.fixed_cost_probe [--reps 400]

Prints the median (and p10-p90) of, each on the same device in one process, each twice: as the host submits the
replays (the host's pace: a graph replay costs it about 10 us), and queued behind a wait on the GPU (what
`bench verify` does, `bench.timing.time_device(hold=True)`), the GPU's own time:
  - one 1-element fill kernel, then two in one graph: the harness's own floor and what a second kernel node adds;
  - the product with almost nothing to do: (B, H, T, L) = (1, 8, 16, 0), one split of one 16-token tile, the split
    kernel alone; and L = 2 tiles - 16 (the build's tile, SPLIT_TILE_TOKENS: 48 for v26 and v30, 112 for v40) forced
    to 2 splits of one tile each, the split kernel and the combine;
  - the product at (1, 8, 16, 5700) with its own split count, warm (the inputs stay in L2) and cold (input sets
    rotated past twice the L2, as bench verify does);
  - a layer of the engine's step at that shape, cold: the store of the tree's 16 KV rows (torch's index_copy_), then
    the product, in each pdl mode (`verify_attention`'s pdl: the split kernel's programmatic dependent launch); and
    the engine's own store (`store_rows`, itself a programmatic dependent) before the product in mode "prefix".
A probe: its numbers go to kernel/NOTES.md with this file's log, never to a result file.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from bench.timing import capture_graph, l2_bytes, rotation_sets, time_device
from kernel import build


def timed(fn, n_sets: int, reps: int, hold: bool) -> list[float]:
    """Samples (us) of graph replays of fn(i), i cycling over the input sets; hold: queued behind a GPU-side wait."""
    graphs = [capture_graph(lambda i=i: fn(i)) for i in range(n_sets)]
    assert all(g is not None for g in graphs), "a probe case did not capture"
    return time_device(lambda i: graphs[i](), n_sets, min_reps=reps, max_reps=reps, hold=hold)


def line(name: str, fn, n_sets: int, reps: int) -> None:
    """One case, at the host's pace and held."""
    for hold in (False, True):
        samples = timed(fn, n_sets, reps, hold)
        q = statistics.quantiles(samples, n=10)
        how = "held" if hold else "host"
        print(f"  {name:<54} {how} {statistics.median(samples):8.2f} us  (p10 {q[0]:.2f}, p90 {q[-1]:.2f})")


def inputs(b: int, h: int, t: int, length: int, n_sets: int, gen: torch.Generator) -> list[tuple]:
    """n_sets disjoint input sets of one shape over one pool: scattered slots, a chain tree."""
    per_set = b * (length + t)
    pool = torch.randn(per_set * n_sets, 576, generator=gen).to("cuda", torch.bfloat16)
    sets = []
    for s in range(n_sets):
        perm = torch.randperm(per_set, generator=gen).to(torch.int32) + s * per_set
        q = torch.randn(b, t, h, 576, generator=gen).to("cuda", torch.bfloat16)
        indptr = torch.arange(b + 1, dtype=torch.int32) * length
        prefix = perm[: b * length].contiguous()
        tree = perm[b * length :].reshape(b, t).contiguous()
        mask = torch.tensor([(1 << (i + 1)) - 1 if i < 63 else -1 for i in range(t)], dtype=torch.int64).repeat(b, 1)
        sets.append((q, pool, indptr.cuda(), prefix.cuda(), tree.cuda(), mask.cuda()))
    return sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    args = ap.parse_args()
    ext = build.load()
    dev = torch.cuda.current_device()
    print(f"{torch.cuda.get_device_name(dev)}, build {build.product_variant(torch.cuda.get_device_capability(dev))}")
    x = torch.zeros(1, device="cuda")
    line("one fill kernel", lambda i: x.fill_(1.0), 1, args.reps)
    line("two fill kernels", lambda i: (x.fill_(1.0), x.fill_(2.0)), 1, args.reps)
    gen = torch.Generator().manual_seed(0)
    scale = 576**-0.5

    def call(sets, splits: int):
        return lambda i: ext.forward(*sets[i], scale, False, splits)

    tiny = inputs(1, 8, 16, 0, 1, gen)
    line("product, (1,8,16) L=0: 1 split, 1 tile, no combine", call(tiny, 0), 1, args.reps)
    tile = int(ext.SPLIT_TILE_TOKENS)
    two = inputs(1, 8, 16, 2 * tile - 16, 1, gen)
    line(f"product, (1,8,16) L={2 * tile - 16}: 2 splits of 1 tile + combine", call(two, 2), 1, args.reps)
    warm = inputs(1, 8, 16, 5700, 1, gen)
    splits = ext.num_splits(1, 16, 8, 5700, torch.cuda.get_device_properties(dev).multi_processor_count)
    line(f"product, (1,8,16) L=5700, {splits} splits, warm L2", call(warm, 0), 1, args.reps)
    n_sets = rotation_sets((5700 + 16) * 1152, l2_bytes(torch.device("cuda")))
    cold = inputs(1, 8, 16, 5700, n_sets, gen)
    line(f"product, (1,8,16) L=5700, {splits} splits, {n_sets} sets rotated", call(cold, 0), n_sets, args.reps)
    rows = torch.randn(16, 576, generator=gen).to("cuda", torch.bfloat16)
    for mode, pdl, ours in (("off", 0, False), ("launch", 1, False), ("prefix", 2, False), ("prefix", 2, True)):

        def layer(i: int, pdl: int = pdl, ours: bool = ours):
            q, pool, indptr, prefix, tree, mask = cold[i]
            if ours:
                ext.store_rows(pool, tree.view(-1).long(), rows, True)
            else:
                pool.index_copy_(0, tree.view(-1).long(), rows)
            return ext.forward(q, pool, indptr, prefix, tree, mask, scale, False, 0, pdl)

        store = "store_rows (pdl)" if ours else "index_copy_"
        line(f"{store} of 16 rows + product, 5700, pdl={mode}", layer, n_sets, args.reps)


if __name__ == "__main__":
    main()
