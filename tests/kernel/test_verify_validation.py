"""Every validation error of `kernel.verify_attention`, with its exact message, on CPU tensors."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch

import kernel
from kernel.trees import make_inputs

NAMES = ("q", "kv_cache", "prefix_indptr", "prefix_slots", "tree_slots", "tree_mask", "sm_scale")


def valid(**overrides: Any) -> dict[str, Any]:
    x = make_inputs(2, 3, 4, [5, 2], tree="chain", seed=1)
    args = dict(zip(NAMES, x.args(), strict=True))
    args.update(overrides)
    return args


def call(args: dict[str, Any], **kw: Any) -> Any:
    return kernel.verify_attention(*(args[n] for n in NAMES), **{"backend": "reference", **kw})


def expect(exc: type[Exception], message: str, args: dict[str, Any], **kw: Any) -> None:
    with pytest.raises(exc, match=f"^{re.escape(message)}$"):
        call(args, **kw)


def test_valid_inputs_pass() -> None:
    out = call(valid(), debug=True)
    assert out.shape == (2, 4, 3, 512)


def test_backend_name() -> None:
    expect(ValueError, "backend: expected one of 'cuda', 'triton', 'reference', got 'flash'", valid(), backend="flash")


@pytest.mark.parametrize("pdl", ["on", "", "PREFIX", 1, None])
def test_pdl_mode(pdl: Any) -> None:
    expect(ValueError, f"pdl: expected one of 'off', 'launch', 'prefix', got {pdl!r}", valid(), pdl=pdl)


@pytest.mark.parametrize("pdl", ["off", "launch", "prefix"])
def test_every_pdl_mode_gives_the_reference_the_same_result(pdl: str) -> None:
    assert torch.equal(call(valid(), pdl=pdl), call(valid()))


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_gpu_backends_refuse_cpu_tensors(backend: str) -> None:
    expect(ValueError, f"q: expected a CUDA device for backend '{backend}', got cpu", valid(), backend=backend)


def test_not_a_tensor() -> None:
    expect(TypeError, "tree_slots: expected a torch.Tensor, got list", valid(tree_slots=[[0, 1]]))


@pytest.mark.parametrize(
    "value,exc,message",
    [
        (True, TypeError, "sm_scale: expected a float, got bool"),
        ("0.1", TypeError, "sm_scale: expected a float, got str"),
        (0.0, ValueError, "sm_scale: expected a finite value > 0, got 0.0"),
        (-1, ValueError, "sm_scale: expected a finite value > 0, got -1"),
        (float("nan"), ValueError, "sm_scale: expected a finite value > 0, got nan"),
        (float("inf"), ValueError, "sm_scale: expected a finite value > 0, got inf"),
        (1e39, ValueError, "sm_scale: expected a value < 2.359e+38 (fp32 in the kernels), got 1e+39"),
    ],
)
def test_sm_scale(value: Any, exc: type[Exception], message: str) -> None:
    expect(exc, message, valid(sm_scale=value))


@pytest.mark.parametrize(
    "name,dtype,expected",
    [
        ("q", torch.float16, "torch.bfloat16"),
        ("kv_cache", torch.float32, "torch.bfloat16 or torch.float8_e4m3fn (with kv_scale)"),
        ("kv_cache", torch.float8_e5m2, "torch.bfloat16 or torch.float8_e4m3fn (with kv_scale)"),
        ("prefix_indptr", torch.int64, "torch.int32"),
        ("prefix_slots", torch.int64, "torch.int32"),
        ("tree_slots", torch.int64, "torch.int32"),
        ("tree_mask", torch.int32, "torch.int64"),
    ],
)
def test_dtypes(name: str, dtype: torch.dtype, expected: str) -> None:
    args = valid()
    args[name] = args[name].to(dtype)
    expect(TypeError, f"{name}: expected dtype {expected}, got {dtype}", args)


def fp8_args() -> dict[str, Any]:
    from kernel.fp8 import quantize_kv

    args = valid()
    args["kv_cache"], scale = quantize_kv(args["kv_cache"])
    return {**args, "scale": scale}


def test_an_fp8_cache_with_its_scale_is_the_reference_on_the_dequantized_cache() -> None:
    from kernel.fp8 import dequantize

    args = fp8_args()
    scale = args.pop("scale")
    out, lse = call(args, kv_scale=scale, debug=True, return_lse=True)
    want, want_lse = call({**args, "kv_cache": dequantize(args["kv_cache"], scale, torch.bfloat16)}, return_lse=True)
    assert torch.equal(out, want) and torch.equal(lse, want_lse)


@pytest.mark.parametrize(
    "scale,exc,message",
    [
        (
            None,
            ValueError,
            "kv_scale: an fp8 (torch.float8_e4m3fn) kv_cache needs its scale (stored value x kv_scale = the value)",
        ),
        (True, TypeError, "kv_scale: expected a float, got bool"),
        ("1", TypeError, "kv_scale: expected a float, got str"),
        (0.0, ValueError, "kv_scale: expected a finite fp32 value > 0, got 0.0"),
        (-0.5, ValueError, "kv_scale: expected a finite fp32 value > 0, got -0.5"),
        (float("nan"), ValueError, "kv_scale: expected a finite fp32 value > 0, got nan"),
        (1e39, ValueError, "kv_scale: expected a finite fp32 value > 0, got 1e+39"),
    ],
)
def test_an_fp8_cache_needs_a_usable_scale(scale: Any, exc: type[Exception], message: str) -> None:
    args = fp8_args()
    args.pop("scale")
    expect(exc, message, args, kv_scale=scale)


def test_a_bf16_cache_has_no_scale_and_the_gpu_backends_refuse_cpu_tensors_before_launch() -> None:
    expect(ValueError, "kv_scale: only an fp8 kv_cache has a scale, got 0.5 for a bf16 kv_cache", valid(), kv_scale=0.5)
    args = fp8_args()
    scale = args.pop("scale")
    expect(ValueError, "q: expected a CUDA device for backend 'cuda', got cpu", args, kv_scale=scale, backend="cuda")
    expect(
        ValueError, "q: expected a CUDA device for backend 'triton', got cpu", args, kv_scale=scale, backend="triton"
    )


def test_device_mismatch() -> None:
    args = valid()
    args["tree_mask"] = args["tree_mask"].to("meta")
    expect(ValueError, "tree_mask: expected device cpu (the device of q), got meta", args)


@pytest.mark.parametrize(
    "name,shape,message",
    [
        ("q", (2, 4, 3), "q: expected 4 dimensions, got 3 (shape (2, 4, 3))"),
        ("q", (2, 4, 3, 512), "q: expected head dim 576 (shape [B, T, H, 576]), got 512"),
        ("q", (0, 4, 3, 576), "q: expected batch B >= 1, got 0"),
        ("q", (2, 65, 3, 576), "q: expected tree nodes 1 <= T <= 64, got 65"),
        ("q", (2, 0, 3, 576), "q: expected tree nodes 1 <= T <= 64, got 0"),
        ("q", (2, 4, 0, 576), "q: expected heads H >= 1, got 0"),
        ("kv_cache", (100, 512), "kv_cache: expected shape [S, 576], got [100, 512]"),
        ("kv_cache", (0, 576), "kv_cache: expected a pool of S >= 1 rows, got 0"),
        ("kv_cache", (100,), "kv_cache: expected 2 dimensions, got 1 (shape (100,))"),
        ("prefix_indptr", (2,), "prefix_indptr: expected shape [3] (B+1), got [2]"),
        ("prefix_slots", (7, 1), "prefix_slots: expected 1 dimensions, got 2 (shape (7, 1))"),
        ("tree_slots", (2, 5), "tree_slots: expected shape [2, 4] (B, T), got [2, 5]"),
        ("tree_mask", (1, 4), "tree_mask: expected shape [2, 4] (B, T), got [1, 4]"),
    ],
)
def test_shapes(name: str, shape: tuple[int, ...], message: str) -> None:
    args = valid()
    args[name] = torch.zeros(shape, dtype=args[name].dtype)
    expect(ValueError, message, args)


def test_shape_consistency_checks_q_first() -> None:
    # A q for batch 3 against the batch-2 metadata: the metadata is named, with q's B+1 expected.
    args = valid(q=torch.zeros(3, 4, 3, 576, dtype=torch.bfloat16))
    expect(ValueError, "prefix_indptr: expected shape [4] (B+1), got [3]", args)


def test_contiguity() -> None:
    args = valid()
    args["q"] = args["q"].transpose(1, 2).contiguous().transpose(1, 2)
    expect(
        ValueError, "q: expected a contiguous tensor, got strides (6912, 576, 2304, 1) for shape [2, 4, 3, 576]", args
    )


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("prefix_indptr", [1, 5, 7], "prefix_indptr: expected prefix_indptr[0] == 0, got 1"),
        (
            "prefix_indptr",
            [0, 5, 4],
            "prefix_indptr: expected non-decreasing values, got prefix_indptr[2] = 4 < prefix_indptr[1] = 5",
        ),
        ("prefix_indptr", [0, 5, 6], "prefix_indptr: expected last value == prefix_slots.numel() = 7, got 6"),
    ],
)
def test_debug_indptr(field: str, value: list[int], message: str) -> None:
    args = valid(**{field: torch.tensor(value, dtype=torch.int32)})
    expect(ValueError, message, args, debug=True)


def test_debug_slots_in_pool() -> None:
    args = valid()
    pool = args["kv_cache"].shape[0]
    args["prefix_slots"] = args["prefix_slots"].clone()
    args["prefix_slots"][3] = pool
    expect(
        ValueError,
        f"prefix_slots: expected slot ids in [0, {pool}) (kv_cache rows), got {pool} at flat index 3",
        args,
        debug=True,
    )
    args = valid()
    args["tree_slots"] = args["tree_slots"].clone()
    args["tree_slots"][1, 2] = -1
    expect(
        ValueError,
        f"tree_slots: expected slot ids in [0, {pool}) (kv_cache rows), got -1 at flat index 6",
        args,
        debug=True,
    )


def test_debug_tree_mask_bits() -> None:
    args = valid()
    args["tree_mask"] = args["tree_mask"].clone()
    args["tree_mask"][1, 2] = 0b011  # node 2 without its own bit
    expect(ValueError, "tree_mask: expected bit 2 (the node itself) set in tree_mask[1, 2], got 0x3", args, debug=True)
    args["tree_mask"][1, 2] = 0b10100  # bit 4 >= T = 4
    expect(ValueError, "tree_mask: expected only bits < T = 4 in tree_mask[1, 2], got 0x14", args, debug=True)
    args["tree_mask"][1, 2] = -1  # bit 63 set: reported as the unsigned 64-bit pattern
    expect(
        ValueError, "tree_mask: expected only bits < T = 4 in tree_mask[1, 2], got 0xffffffffffffffff", args, debug=True
    )


def test_debug_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    args = valid(prefix_indptr=torch.tensor([0, 5, 6], dtype=torch.int32))
    monkeypatch.setenv("VERIFY_ATTN_DEBUG", "1")
    expect(ValueError, "prefix_indptr: expected last value == prefix_slots.numel() = 7, got 6", args)
    monkeypatch.setenv("VERIFY_ATTN_DEBUG", "0")
    call(args)


@pytest.mark.parametrize(
    "shape,message",
    [
        ((65536, 1, 1, 576), "q: expected batch B <= 65535, got 65536"),
        ((1, 64, 65537, 576), "q: expected B*T*H <= 4194304, got 4194368"),
    ],
)
def test_grid_limits(shape: tuple[int, ...], message: str) -> None:
    # Shapes are checked before contiguity, so a stride-0 view stands in for a huge q.
    expect(ValueError, message, valid(q=torch.empty(1, 1, 1, 576, dtype=torch.bfloat16).expand(*shape)))
