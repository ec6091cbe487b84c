"""The engine on the CPU with the `reference` backend: speculative decoding emits exactly greedy's tokens.

Tiny models (2 layers, 2 heads, 64 tokens of vocabulary, the real 576/512 attention widths), so each test
takes well under a second. Prompts come from `clear_prompts` (every greedy decision decided by a logit margin
above 0.01): a decision closer to a tie than rounding is not the kernel's to make (kernel/engine/prompts.py).
"""

from __future__ import annotations

import pytest
import torch

from kernel.engine import BACKEND_ENV, Engine, EngineConfig
from kernel.engine.drafter import accept_path, tree_shape
from kernel.engine.prompts import clear_prompts

MARGIN = 0.01


def engine(**overrides: object) -> Engine:
    config = dict(layers=2, heads=2, vocab=64, seed=0, max_context=192, tree_nodes=8, tree_branching=2)
    config.update(overrides)
    return Engine(EngineConfig(**config), backend="reference", device="cpu")


@pytest.mark.parametrize(
    ("nodes", "branching"),
    [(4, 1), (8, 2), (16, 3), (7, 6), (64, 4)],
    ids=["chain4", "binary8", "ternary16", "star7", "wide64"],
)
def test_speculative_emits_greedy_tokens_for_every_tree_shape(nodes: int, branching: int) -> None:
    eng = engine(tree_nodes=nodes, tree_branching=branching)
    prompts = clear_prompts(eng, 3, [1, 9, 70], 20, MARGIN, seed=nodes)
    greedy = eng.generate(prompts, 20, speculative=False)
    assert eng.generate(prompts, 20, speculative=True) == greedy
    assert all(len(tokens) == 20 for tokens in greedy)


@pytest.mark.parametrize("batch", [1, 2, 3, 5])
def test_speculative_emits_greedy_tokens_for_every_batch_size(batch: int) -> None:
    eng = engine(max_batch=3)  # 5 prompts run as a batch of 3, then one of 2
    prompts = clear_prompts(eng, batch, [3, 17, 1, 64, 65], 16, MARGIN, seed=100 + batch)
    greedy = eng.generate(prompts, 16, speculative=False)
    assert eng.generate(prompts, 16, speculative=True) == greedy
    for prompt, tokens in zip(prompts, greedy, strict=True):  # batching changes nothing either
        assert eng.generate([prompt], 16, speculative=False)[0] == tokens


def test_speculation_accepts_drafts_and_rejects_some() -> None:
    eng = engine()
    prompts = clear_prompts(eng, 3, [5, 12], 24, MARGIN, seed=7)
    eng.generate(prompts, 24, speculative=True)
    lengths = [a for step in eng.steps for a in step.accepted if a]
    speculative_steps = len(eng.steps)
    assert max(lengths) >= 3, lengths  # deep paths are accepted...
    assert min(lengths) == 1, lengths  # ...and some drafts are all rejected
    assert sum(lengths) / len(lengths) > 1.5
    eng.generate(prompts, 24, speculative=False)
    assert speculative_steps < len(eng.steps)  # fewer target passes for the same tokens


def test_the_pool_is_whole_after_generate() -> None:
    eng = engine()
    eng.generate([[1, 2, 3], [4] * 40], 30, speculative=True)
    eng.pool.allocator.check()
    assert eng.pool.allocator.used_count == 0


def test_tokens_depend_on_the_whole_context() -> None:
    """Attention matters: prompts that share their last token continue differently (so equality is not trivial)."""
    eng = engine()
    prompts = [[p, 2 * p + 1, 3, 5] for p in range(6)]
    continuations = eng.generate(prompts, 6, speculative=False)
    assert len({tuple(c) for c in continuations}) >= 5


def test_accept_path_follows_the_targets_choices() -> None:
    shape = tree_shape(7, 2)  # 0 -> (1, 2); 1 -> (3, 4); 2 -> (5, 6)
    tokens = [10, 11, 12, 13, 14, 15, 16]
    assert accept_path(shape, tokens, [12, 0, 16, 0, 0, 0, 9]) == [0, 2, 6]
    assert accept_path(shape, tokens, [99, 0, 0, 0, 0, 0, 0]) == [0]
    assert accept_path(shape, tokens, [11, 14, 0, 0, 5, 0, 0]) == [0, 1, 4]


def test_backend_switch_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKEND_ENV, "reference")
    assert Engine(EngineConfig(), device="cpu").backend == "reference"
    monkeypatch.setenv(BACKEND_ENV, "bogus")
    with pytest.raises(ValueError, match=f"{BACKEND_ENV}: expected one of"):
        Engine(EngineConfig(), device="cpu")
    monkeypatch.delenv(BACKEND_ENV)
    assert Engine(EngineConfig(), device="cpu").backend == "reference"
    with pytest.raises(ValueError, match="'cuda' needs a CUDA device"):
        Engine(EngineConfig(), backend="cuda", device="cpu")
    with pytest.raises(ValueError, match="graphs: CUDA graphs need backend"):
        Engine(EngineConfig(), backend="reference", device="cpu", graphs=True)


@pytest.mark.parametrize(
    ("prompts", "max_new", "message"),
    [
        ([], 4, "prompts: expected a non-empty list"),
        ([[1], []], 4, r"prompts\[1\]: expected a non-empty list"),
        ([[1, 64]], 4, r"prompts\[0\]: expected token ids in \[0, 64\), got 64"),
        ([[1, True]], 4, r"prompts\[0\]: expected token ids"),
        ([[1]], -1, "max_new_tokens: expected an integer >= 0"),
        ([[1] * 150], 40, r"prompts\[0\]: 150 prompt \+ 40 new tokens \+ a tree of 8 need max_context >= 198"),
    ],
)
def test_bad_requests_are_refused_naming_the_argument(prompts: object, max_new: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        engine().generate(prompts, max_new)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("layers", 0, "EngineConfig.layers: expected an integer >= 1"),
        ("tree_nodes", 65, "EngineConfig.tree_nodes: expected 1..64"),
        ("vocab", 1, "EngineConfig.vocab: expected >= 2"),
        ("max_context", 8, "EngineConfig.max_context: expected >= tree_nodes"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(field: str, value: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EngineConfig(**{field: value})


def test_zero_new_tokens_and_the_model_is_seeded() -> None:
    assert engine().generate([[1, 2]], 0) == [[]]
    a = engine(seed=3).generate([[1, 2, 3]], 8, speculative=False)
    assert engine(seed=3).generate([[1, 2, 3]], 8, speculative=False) == a
    assert torch.equal(engine(seed=3).model.embed, engine(seed=3).model.embed)


@pytest.mark.parametrize("speculative", [True, False])
def test_a_step_that_fails_leaves_the_pool_whole(speculative: bool) -> None:
    eng = engine()
    eng.attention.backend = "cuda"  # a real failure inside the step: verify_attention refuses CPU tensors for it
    with pytest.raises(ValueError, match="expected a CUDA device for backend 'cuda'"):
        eng.generate([[1, 2, 3], [4, 5]], 8, speculative=speculative)
    eng.pool.allocator.check()
    assert eng.pool.allocator.used_count == 0
