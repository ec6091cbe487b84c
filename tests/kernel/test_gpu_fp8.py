"""An fp8 KV cache on the GPU (marker `gpu`; skipped cleanly without CUDA): the Triton backend against the fp32
reference on the dequantized cache by the flash-attention rule, over the GPU suite's shapes (mixed lengths, empty
prefixes, 64-node trees, 128 heads); and the engine with an fp8 pool, eager and graphed, emitting greedy's tokens."""

from __future__ import annotations

import random

import pytest
import torch

import kernel
from kernel.engine import Engine, EngineConfig
from kernel.engine.prompts import clear_prompts
from kernel.fp8 import dequantize, quantize_kv
from kernel.reference import attention
from kernel.trees import make_inputs, mixed_lengths

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

CASES = [  # (batch, heads, nodes, mean prefix, tree)
    (1, 8, 16, 5700, "random"),
    (3, 16, 32, 900, "binary"),
    (4, 8, 64, 300, "random"),
    (2, 128, 8, 1000, "chain"),
    (2, 8, 16, 0, "random"),  # empty prefixes: the tree alone
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_triton_on_an_fp8_cache_keeps_the_flash_attention_rule(case: tuple[int, int, int, int, str]) -> None:
    batch, heads, nodes, mean, tree = case
    seed = sum(case[:4])
    lens = mixed_lengths(batch, mean, random.Random(seed))
    x = make_inputs(batch, heads, nodes, lens, tree=tree, seed=seed, device="cuda")
    kv8, scale = quantize_kv(x.kv_cache)
    rest = (x.prefix_indptr, x.prefix_slots, x.tree_slots, x.tree_mask, x.sm_scale)
    out, lse = kernel.verify_attention(x.q, kv8, *rest, backend="triton", return_lse=True, kv_scale=scale)
    deq = dequantize(kv8, scale, torch.bfloat16)
    ref, ref_lse = attention(x.q, deq, *rest)
    low, low_lse = attention(x.q, deq, *rest, dtype=torch.bfloat16)
    eps = 1e-3 * max(1.0, ref.abs().max().item())
    err, err_low = (out.float() - ref).abs().max().item(), (low.float() - ref).abs().max().item()
    assert torch.isfinite(out).all() and out.abs().max() > 0
    assert err <= 2 * err_low + eps, f"out error {err:.3e} > 2 x bf16 torch {err_low:.3e} + {eps:.1e}: {case}"
    assert (lse - ref_lse).abs().max().item() <= 2 * (low_lse - ref_lse).abs().max().item() + 1e-3


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "graph"])
def test_the_fp8_engine_emits_greedy_tokens_on_the_gpu(graphs: bool) -> None:
    config = dict(layers=2, heads=4, vocab=64, seed=0, max_context=512, tree_nodes=16, tree_branching=2)
    reference = Engine(EngineConfig(kv_dtype="fp8", **config), backend="reference", device="cuda")  # type: ignore[arg-type]
    prompts = clear_prompts(reference, 3, [5, 200, 60], 24, 0.01, seed=28)
    engine = Engine(EngineConfig(kv_dtype="fp8", **config), backend="triton", device="cuda", graphs=graphs)  # type: ignore[arg-type]
    greedy = engine.generate(prompts, 24, speculative=False)
    assert engine.generate(prompts, 24, speculative=True) == greedy
    assert greedy == reference.generate(prompts, 24, speculative=False)
    engine.pool.allocator.check()
