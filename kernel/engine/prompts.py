"""Test prompts whose greedy decisions are clear: no backend's rounding can flip them.

Two correct backends round attention differently (bf16 probabilities in the kernels, fp32 in the oracle), so
wherever the target's best and second-best logits are closer than that rounding, each may take a different
token, and from there the streams part for reasons that are not a bug. Prompts whose every decision under the
reference keeps a margin above `min_margin` compare exactly: a wrong kernel (a missed token, a wrong mask)
moves logits by far more than that margin and still shows up.
"""

from __future__ import annotations

import random

from kernel.engine.engine import Engine


def clear_prompts(
    engine: Engine,
    count: int,
    lengths: list[int],
    max_new_tokens: int,
    min_margin: float,
    seed: int = 0,
    tries: int = 50,
) -> list[list[int]]:
    """`count` random prompts, the i-th of length lengths[i % len(lengths)], whose greedy decoding by `engine`
    decides every token by a logit margin above `min_margin`; ValueError when `tries` candidates for one
    prompt are all too close to a tie."""
    rng = random.Random(seed)
    kept: list[list[int]] = []
    for i in range(count):
        length = lengths[i % len(lengths)]
        for _ in range(tries):
            prompt = [rng.randrange(engine.config.vocab) for _ in range(length)]
            engine.generate([prompt], max_new_tokens, speculative=False)
            if engine.margins[0] > min_margin:
                kept.append(prompt)
                break
        else:
            raise ValueError(
                f"clear_prompts: no prompt of length {length} with margins > {min_margin} in {tries} tries"
            )
    return kept
