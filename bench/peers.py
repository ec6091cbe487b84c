"""The registry of implementations the verify benchmark times.

Each `Impl` turns one input set into a zero-argument callable (host-side setup happens in `prepare`,
outside the timed region) and says what it computes: the full tree verify, or ("prefix only") attention
over the prefix without the tree part, which is all FlashInfer's MLA wrapper can do (no custom mask).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch

from kernel.build import PRODUCT_BY_CC, VARIANTS
from kernel.reference import ancestor_matrix
from kernel.trees import VerifyInputs

Run = Callable[[], torch.Tensor]


@dataclass(frozen=True)
class Impl:
    """One implementation: `prepare(inputs)` returns the callable to time; `prefix_only` marks a partial peer."""

    name: str
    label: str
    prepare: Callable[[VerifyInputs], Run]
    prefix_only: bool = False
    kv: str = "bf16"  # "fp8": it reads the inputs' cache quantized (fp8_inputs), checked on the dequantized cache


def _prepare_backend(backend: str) -> Callable[[VerifyInputs], Run]:
    def prepare(x: VerifyInputs) -> Run:
        import kernel

        kernel.verify_attention(*x.args(), backend=backend, debug=True)  # validates and builds/compiles once
        if backend == "cuda":
            from kernel.cuda_backend import verify_attention_cuda as fn
        else:
            from kernel.triton_backend import verify_attention_triton as fn
        args = (*x.args(), False)
        # Inputs validated above: time the kernel, not the Python checks. return_lse=False: a tensor.
        return lambda: cast(torch.Tensor, fn(*args))

    return prepare


def _prepare_cuda_variant(variant: str) -> Callable[[VerifyInputs], Run]:
    """A named build of the CUDA kernel (kernel/build.py load(variant=...)), called like the product: the binding's
    own checks, the launcher's split count, no lse."""

    def prepare(x: VerifyInputs) -> Run:
        import kernel
        from kernel import build

        kernel.verify.validate(*x.args(), backend="cuda", debug=True)
        ext = build.load(variant=variant)
        args = (*x.args(), False, 0)
        return lambda: cast(torch.Tensor, ext.forward(*args)[0])

    return prepare


def _variant_label(name: str) -> str:
    """What a VARIANTS build is: the product of which devices (kernel/build.py PRODUCT_BY_CC), else a lab variant."""
    devices = [f"sm_{major}{minor}" for (major, minor), product in PRODUCT_BY_CC.items() if product == name]
    role = f"the product on {', '.join(devices)}" if devices else "lab variant"
    return f"CUDA {name}, {role} (kernel/build.py)"


def _prepare_torch(x: VerifyInputs) -> Run:
    """Plain torch: per request, gather the visible rows, one matmul for scores, softmax, one matmul for P.V."""
    batch, nodes, heads, _ = x.q.shape
    bounds = x.prefix_indptr.tolist()  # lengths are known on the host in a serving loop
    slots = [torch.cat([x.prefix_slots[bounds[b] : bounds[b + 1]], x.tree_slots[b]]).long() for b in range(batch)]
    q2d = [x.q[b].reshape(nodes * heads, -1) for b in range(batch)]  # rows (node, head): views, no copy
    out = torch.empty(batch, nodes, heads, 512, dtype=torch.bfloat16, device=x.q.device)
    kv, mask, scale = x.kv_cache, x.tree_mask, x.sm_scale

    def run() -> torch.Tensor:
        # [B, T*H, T], rows (node, head); expand + reshape, not repeat_interleave (which syncs for its size)
        visible = ancestor_matrix(mask).unsqueeze(2).expand(batch, nodes, heads, nodes).reshape(batch, -1, nodes)
        for b in range(batch):
            keys = kv.index_select(0, slots[b])  # [L+T, 576]
            scores = (q2d[b] @ keys.t()).float().mul_(scale)  # [T*H, L+T]
            tree = scores[:, scores.shape[1] - nodes :]
            tree.masked_fill_(~visible[b], float("-inf"))
            probs = torch.softmax(scores, dim=-1).to(torch.bfloat16)
            torch.matmul(probs, keys[:, :512], out=out[b].view(nodes * heads, 512))
        return out

    return run


def _prepare_flashinfer(x: VerifyInputs) -> Run:
    """FlashInfer's MLA paged wrapper (FA2 = its mma.sync path), page_size=1, on the prefix only."""
    import flashinfer  # optional: ImportError marks the peer unavailable

    batch, nodes, heads, _ = x.q.shape
    dev = x.q.device
    lens = x.prefix_indptr[1:] - x.prefix_indptr[:-1]
    wrapper = flashinfer.mla.BatchMLAPagedAttentionWrapper(
        torch.empty(128 * 2**20, dtype=torch.uint8, device=dev), backend="fa2"
    )
    wrapper.plan(
        torch.arange(0, (batch + 1) * nodes, nodes, dtype=torch.int32, device=dev),
        x.prefix_indptr,
        x.prefix_slots,
        lens.to(torch.int32),
        heads,
        512,
        64,
        1,
        False,
        x.sm_scale,
        torch.bfloat16,
        torch.bfloat16,
    )
    # FlashInfer keeps the latent and rope parts as separate caches, [pages, page_size, dim].
    ckv = x.kv_cache[:, :512].contiguous().unsqueeze(1)
    kpe = x.kv_cache[:, 512:].contiguous().unsqueeze(1)
    q_nope = x.q[..., :512].reshape(batch * nodes, heads, 512).contiguous()
    q_pe = x.q[..., 512:].reshape(batch * nodes, heads, 64).contiguous()
    out = torch.empty(batch * nodes, heads, 512, dtype=torch.bfloat16, device=dev)

    def run() -> torch.Tensor:
        wrapper.run(q_nope, q_pe, ckv, kpe, out=out)
        return out.view(batch, nodes, heads, 512)

    return run


def fp8_inputs(x: VerifyInputs) -> tuple[torch.Tensor, float, VerifyInputs]:
    """(the cache as e4m3, its scale, the inputs with the dequantized cache): what an fp8 implementation reads and
    what its output is checked against (kernel/fp8.py; the dequantized rows are exact in bf16)."""
    from kernel.fp8 import dequantize, quantize_kv

    kv8, scale = quantize_kv(x.kv_cache)
    return kv8, scale, dataclasses.replace(x, kv_cache=dequantize(kv8, scale, torch.bfloat16))


def _prepare_fp8(backend: str) -> Callable[[VerifyInputs], Run]:
    """An fp8 cache through `kernel.verify_attention` (validated once), then the backend's function directly."""

    def prepare(x: VerifyInputs) -> Run:
        import kernel

        kv8, scale, _ = fp8_inputs(x)
        args = (x.q, kv8, *x.args()[2:])
        kernel.verify_attention(*args, backend=backend, debug=True, kv_scale=scale)
        if backend == "cuda":
            from kernel.cuda_backend import verify_attention_cuda as fn
        else:
            from kernel.triton_backend import verify_attention_triton as fn
        return lambda: cast(torch.Tensor, fn(*args, False, kv_scale=scale))

    return prepare


IMPLS: dict[str, Impl] = {
    "cuda": Impl("cuda", "CUDA split-KV kernel (kernel/csrc), this device's build", _prepare_backend("cuda")),
    "cuda_v26": Impl(
        "cuda_v26", "CUDA v26, the portable path (sm_80-level instructions)", _prepare_cuda_variant("v26")
    ),
    # kernel/build.py VARIANTS (v30's and v40: sm_90a / sm_120a only), never in the default list: a device's product
    # by name, or a lab build beside it.
    **{f"cuda_{name}": Impl(f"cuda_{name}", _variant_label(name), _prepare_cuda_variant(name)) for name in VARIANTS},
    "triton": Impl("triton", "Triton, SGLang extend-kernel design", _prepare_backend("triton")),
    # The fp8 KV cache (issue 28): e4m3 rows and one scale, timed against the fp8 floor (half the bytes, the e4m3
    # mma.sync ceiling measured in the same run).
    "cuda_fp8": Impl(
        "cuda_fp8",
        "CUDA fp8 cache (q2p: e4m3 wgmma on sm_90, verify_attention_fp8_wgmma_rows.cuh; mma.sync elsewhere)",
        _prepare_fp8("cuda"),
        kv="fp8",
    ),
    "triton_fp8": Impl("triton_fp8", "Triton on the fp8 cache (bf16 math)", _prepare_fp8("triton"), kv="fp8"),
    "torch": Impl("torch", "plain torch gather + matmul, tree mask applied", _prepare_torch),
    "flashinfer": Impl(
        "flashinfer", "FlashInfer MLA FA2, prefix only, no tree mask", _prepare_flashinfer, prefix_only=True
    ),
}
