"""A small MLA transformer with seeded random weights, its attention through `kernel.verify_attention`.

Absorbed MLA at decode time, real attention shapes, small everything else (fp32 outside attention):

    x = embed[token]
    per layer:  a = rms(x);  q = a Wq -> [H, 576] (rope on the last 64 columns);  c = a Wkv -> [576] (rope too)
                o = tree-verify attention of q over the pool (c is this token's pool row)  -> [H, 512]
                x += attn_gain * o Wo;   x += mlp_gain * W2 silu(W1 rms(x))
    logits = logit_scale * rms(x) Wout

The draft head is the same model without its layers: logits = logit_scale * rms(embed) Wout (`draft_logits`).
"""

from __future__ import annotations

import torch

from kernel.engine.config import EngineConfig
from kernel.engine.plan import StepPlan

HEAD_DIM, V_DIM, ROPE_DIM = 576, 512, 64
ROPE_BASE = 10000.0


def rope_table(max_context: int, device: torch.device) -> torch.Tensor:
    """[max_context, 64] fp32: cos | sin of position x frequency for the 32 rotary pairs."""
    freqs = ROPE_BASE ** (-torch.arange(0, ROPE_DIM, 2, dtype=torch.float64) / ROPE_DIM)
    angles = torch.arange(max_context, dtype=torch.float64)[:, None] * freqs[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=1).float().to(device)


def apply_rope(x: torch.Tensor, rope: torch.Tensor) -> torch.Tensor:
    """Rotate the last 64 columns of x [..., 576] by rope [..., 64] (cos | sin), broadcast over middle dims."""
    half = ROPE_DIM // 2
    cos, sin = rope[..., :half], rope[..., half:]
    x1, x2 = x[..., V_DIM : V_DIM + half], x[..., V_DIM + half :]
    return torch.cat([x[..., :V_DIM], x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def rms(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class MLAModel:
    """Weights (seeded on the CPU, then moved) and the forward pass of one verify step."""

    def __init__(self, config: EngineConfig, device: torch.device) -> None:
        self.config = config
        gen = torch.Generator().manual_seed(config.seed)
        d, h, f, v = config.hidden, config.heads, config.mlp_hidden, config.vocab

        def weight(*shape: int, std: float) -> torch.Tensor:
            return (torch.randn(*shape, generator=gen) * std).to(device)

        # q's scale makes the scaled scores ~N(0, 1.5^2): attention neither uniform nor one-hot.
        q_std = 1.5 / (config.sm_scale * HEAD_DIM**0.5)
        self.embed = weight(v, d, std=1.0)
        self.layers = [
            dict(
                wq=weight(d, h * HEAD_DIM, std=q_std / d**0.5),
                wkv=weight(d, HEAD_DIM, std=d**-0.5),
                wo=weight(h * V_DIM, d, std=(h * V_DIM) ** -0.5),
                w1=weight(d, f, std=d**-0.5),
                w2=weight(f, d, std=f**-0.5),
            )
            for _ in range(config.layers)
        ]
        self.unembed = weight(d, v, std=d**-0.5)

    def draft_logits(self) -> torch.Tensor:
        """[vocab, vocab]: the draft head's logits after each token (the model without its layers)."""
        return self.config.logit_scale * rms(self.embed) @ self.unembed

    def forward(self, plan: StepPlan, attention) -> torch.Tensor:
        """Logits [B, T, vocab] of every tree node; `attention.forward(q, kv_row, layer)` runs each layer."""
        cfg = self.config
        batch, nodes = plan.batch, plan.nodes
        rope = plan.rope  # [B, T, 64], computed once per step
        x = self.embed[plan.tree_tokens]  # [B, T, D]
        for index, w in enumerate(self.layers):
            a = rms(x)
            q = apply_rope((a @ w["wq"]).view(batch, nodes, cfg.heads, HEAD_DIM), rope[:, :, None, :])
            kv_row = apply_rope(a @ w["wkv"], rope).view(batch * nodes, HEAD_DIM)
            o = attention.forward(q.to(torch.bfloat16).contiguous(), kv_row, index)
            x = x + cfg.attn_gain * (o.float().view(batch, nodes, cfg.heads * V_DIM) @ w["wo"])
            x = x + cfg.mlp_gain * (torch.nn.functional.silu(rms(x) @ w["w1"]) @ w["w2"])
        return cfg.logit_scale * rms(x) @ self.unembed
