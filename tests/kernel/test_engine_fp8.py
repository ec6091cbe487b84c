"""The engine with an fp8 KV pool on the CPU (`reference` backend, which reads an fp8 cache dequantized): speculative
decoding emits exactly greedy's tokens within the fp8 engine, the pool holds half the bytes a token, a compaction
between steps moves e4m3 rows bit for bit, and a bad configuration is refused naming the field."""

from __future__ import annotations

import pytest
import torch

from kernel.defrag import compact_engine
from kernel.engine import Engine, EngineConfig
from kernel.engine.kv_pool import KVPool
from kernel.engine.prompts import clear_prompts

MARGIN = 0.01


def engine(kv_dtype: str = "fp8", **overrides: object) -> Engine:
    config = dict(layers=2, heads=2, vocab=64, seed=0, max_context=192, tree_nodes=8, tree_branching=2)
    config.update(overrides)
    return Engine(EngineConfig(kv_dtype=kv_dtype, **config), backend="reference", device="cpu")  # type: ignore[arg-type]


@pytest.mark.parametrize(("nodes", "branching"), [(4, 1), (8, 2), (16, 3)], ids=["chain4", "binary8", "ternary16"])
def test_speculative_emits_greedy_tokens_with_an_fp8_pool(nodes: int, branching: int) -> None:
    eng = engine(tree_nodes=nodes, tree_branching=branching)
    assert eng.pool.kv.dtype == torch.float8_e4m3fn and eng.pool.scale == 2.0**-4
    prompts = clear_prompts(eng, 3, [1, 9, 70], 20, MARGIN, seed=nodes)
    greedy = eng.generate(prompts, 20, speculative=False)
    assert eng.generate(prompts, 20, speculative=True) == greedy
    eng.pool.allocator.check()
    assert eng.pool.allocator.used_count == 0


def test_the_fp8_pool_holds_half_the_bytes_a_token() -> None:
    bf16, fp8 = engine("bf16"), engine("fp8")
    assert bf16.pool.bytes_per_token == 2 * 576 * 2 and fp8.pool.bytes_per_token == 2 * 576
    assert fp8.pool.bytes_per_token <= 0.52 * bf16.pool.bytes_per_token
    assert fp8.pool.kv.nbytes == bf16.pool.kv.nbytes // 2


def test_rows_are_stored_as_e4m3_of_value_over_scale_and_saturate() -> None:
    pool = KVPool(1, 4, torch.device("cpu"), "fp8", 2.0**-4)
    rows = torch.tensor([[1.0] * 576, [-1000.0] * 576, [0.3] * 576, [5e-4] * 576])
    pool.store(0, torch.tensor([0, 1, 2, 3]), rows)
    back = pool.kv[0].float() * pool.scale
    assert back[0].eq(1.0).all() and back[1].eq(-448 * 2.0**-4).all()  # saturated, never NaN or inf
    assert (back[2] - 0.3).abs().max().item() <= 0.3 * 2**-4
    assert torch.isfinite(back).all()


def test_a_compaction_between_steps_moves_fp8_rows_bit_for_bit() -> None:
    eng = engine(max_batch=3)
    prompts = clear_prompts(eng, 3, [5, 40, 12], 16, MARGIN, seed=3)
    plain = eng.generate(prompts, 16, speculative=True)
    compacted = engine(max_batch=3)
    seen: list[bool] = []

    def between(e: Engine, requests: list) -> None:
        before = {id(r): e.pool.kv[:, r.slots].clone() for r in requests}
        compact_engine(e, requests, tier=1)
        seen.append(
            all(torch.equal(e.pool.kv[:, r.slots].view(torch.uint8), before[id(r)].view(torch.uint8)) for r in requests)
        )

    compacted.between_steps = between
    assert compacted.generate(prompts, 16, speculative=True) == plain
    assert seen and all(seen)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("kv_dtype", "fp4", "EngineConfig.kv_dtype: expected 'bf16' or 'fp8', got 'fp4'"),
        ("kv_scale", 0.1, "EngineConfig.kv_scale: expected a power of two"),
        ("kv_scale", True, "EngineConfig.kv_scale: expected a float in"),
        ("kv_scale", 0.0, "EngineConfig.kv_scale: expected a float in"),
        ("kv_scale", float("inf"), "EngineConfig.kv_scale: expected a float in"),
        ("kv_scale", float("nan"), "EngineConfig.kv_scale: expected a float in"),
    ],
)
def test_a_bad_fp8_configuration_is_refused(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        EngineConfig(**{field: value})  # type: ignore[arg-type]


def test_a_pool_and_its_scale_agree() -> None:
    with pytest.raises(ValueError, match="an fp8 pool needs one"):
        KVPool(1, 4, torch.device("cpu"), "fp8")
    with pytest.raises(ValueError, match="an fp8 pool needs one"):
        KVPool(1, 4, torch.device("cpu"), "bf16", 0.5)
    with pytest.raises(ValueError, match="kv_dtype: expected one of"):
        KVPool(1, 4, torch.device("cpu"), "int8")
