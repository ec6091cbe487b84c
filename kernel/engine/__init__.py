"""A small serving engine around the verify kernel: greedy tree speculative decoding of an MLA model.

Modules, one job each: `config` (EngineConfig, the backend switch), `model` (the MLA transformer),
`kv_pool` (the page_size=1 pool and its slot allocator), `drafter` (draft trees and greedy acceptance),
`plan` (one step's metadata, computed once on the device for every layer; for batch > 1 on
CUDA one Triton launch, `plan_kernel`), `attention` (the attention
backend object), `graph` (the captured step), `engine` (the decode loop) and `prompts` (test prompts whose
greedy decisions are far from ties, so backends that round differently must agree on them).

    from kernel.engine import Engine, EngineConfig
    engine = Engine(EngineConfig(layers=2, heads=2, vocab=64, seed=0, max_context=256, tree_nodes=8),
                    backend="cuda", device="cuda", graphs=True)
    tokens = engine.generate([[1, 2, 3]], max_new_tokens=32)          # speculative
    assert tokens == engine.generate([[1, 2, 3]], 32, speculative=False)  # plain greedy: the same tokens

The backend is `reference` | `triton` | `cuda`: the `backend` argument, else $VERIFY_ATTN_BACKEND, else
cuda on a GPU and reference on a CPU.

How `TreeVerifyAttention` maps onto SGLang's `AttentionBackend` (so a thin adapter to that engine stays
possible):

- `init_forward_metadata(step)`: load inputs, compute the step's plan once
  (SGLang: `init_forward_metadata(forward_batch)`);
- `init_cuda_graph_state(batch, nodes)`: the static plan for max_context
  (`init_cuda_graph_state(max_bs, max_num_tokens)`);
- `init_forward_metadata_capture_cuda_graph(batch, nodes)` (the same name; bs, num_tokens, ..., spec_info);
- `init_forward_metadata_replay_cuda_graph(step)`: copy the raw inputs only
  (the same name; bs, req_pool_indices, seq_lens, ...);
- `forward(q, kv_row, layer)`: store the nodes' KV rows, attend
  (`forward(q, k, v, layer, forward_batch)`, extend / target-verify);
- `StepInputs` (seq_lens, tree tokens / slots / masks / depths)
  (`ForwardBatch` + `EagleVerifyInput`: custom mask, positions);
- `req_to_token` [max_batch, max_context] int32 (`req_to_token_pool.req_to_token`).

One difference: SGLang computes replay metadata on the host before the replay; here the plan's computation
is itself part of the captured graph, so a replay costs one copy of the raw inputs and one graph launch.
"""

from kernel.engine.config import BACKEND_ENV, EngineConfig
from kernel.engine.engine import Engine

__all__ = ["BACKEND_ENV", "Engine", "EngineConfig"]
