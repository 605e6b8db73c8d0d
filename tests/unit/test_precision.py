"""Numeric formats against figures worked out by hand from the format definitions."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from snippets.data import FloatLayout, Precision
from snippets.data.schema import SCHEMAS
from snippets.teaching.formats import (
    bit_budget,
    max_finite,
    min_normal,
    min_subnormal,
    relative_step,
    shrink_factor,
)
from snippets.teaching.rounded import size_on_node

SRC = [{"url": "https://example.org/spec", "title": "a spec", "read": "2026-11-30"}]


def prec(width: float, kind: str = "int", block: dict[str, Any] | None = None,
         layout: dict[str, Any] | None = None) -> Precision:
    body: dict[str, Any] = {"name": "X", "kind": kind, "width": {"value": width, "unit": "bit"}, "sources": SRC,
                            "tensor_format": "int4" if kind == "int" else "fp8"}
    if block is not None:
        body["block_scale"] = block
    if layout is not None:
        body["layout"] = layout
    out: Precision = TypeAdapter(SCHEMAS["precisions"]).validate_python(body, context={"key": "x"})
    return out


def bits(v: float) -> dict[str, Any]:
    return {"value": v, "unit": "bit"}


def lay(e: int, m: int, bias: int, specials: str) -> FloatLayout:
    return FloatLayout(exponent_bits=e, mantissa_bits=m, bias=bias, specials=specials)  # type: ignore[arg-type]


def test_int4_with_fp16_scale_and_4bit_zero_per_128() -> None:
    p = prec(4, block={"group_size": 128, "scale_width": bits(16), "zero_point_width": bits(4)})
    b = bit_budget(p)
    # 16 / 128 = 0.125 for the scale, 4 / 128 = 0.03125 for the zero point, 4.15625 in all
    assert (b.element, b.scale, b.zero_point) == (4, 0.125, 0.03125)
    assert b.total == 4.15625 == p.bits_per_param
    assert b.overhead == pytest.approx(0.15625 / 4)  # 3.9 % on top of the bare 4 bits
    assert p.bytes_per_param == pytest.approx(4.15625 / 8)  # 0.51953125 bytes


def test_scale_only_group_formats() -> None:
    mx = prec(4, "float", block={"group_size": 32, "scale_width": bits(8)})  # MXFP4: 4 + 8/32
    nv = prec(4, "float", block={"group_size": 16, "scale_width": bits(8)})  # NVFP4: 4 + 8/16
    assert bit_budget(mx).total == 4.25 and bit_budget(mx).zero_point == 0
    assert bit_budget(nv).total == 4.5
    assert mx.bytes_per_param == 0.53125 and nv.bytes_per_param == 0.5625


def test_formats_without_block_scale_are_their_width() -> None:
    for width, expected_bytes in [(32, 4), (16, 2), (8, 1), (4, 0.5)]:
        p = prec(width)
        assert bit_budget(p).total == width and bit_budget(p).overhead == 0
        assert p.bytes_per_param == expected_bytes


def test_shrink_factor_counts_the_scales() -> None:
    fp16 = prec(16, "float")
    assert shrink_factor(prec(8), fp16) == 2
    assert shrink_factor(prec(4), fp16) == 4
    # NVFP4: 16 / 4.5 = 3.56x, not 4x
    nv = prec(4, "float", block={"group_size": 16, "scale_width": bits(8)})
    assert shrink_factor(nv, fp16) == pytest.approx(3.5556, abs=1e-4)


def test_repository_formats(catalog) -> None:
    p = catalog.precisions
    assert p["int4-g128"].bits_per_param == 4 + (16 + 4) / 128
    assert p["mxfp4"].bits_per_param == 4 + 8 / 32
    assert p["nvfp4"].bits_per_param == 4 + 8 / 16
    # the ids other pages use keep their meaning: no block scale, bytes = width / 8
    for pid, b in [("fp32", 4), ("bf16", 2), ("fp16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5)]:
        assert p[pid].block_scale is None and p[pid].bytes_per_param == b


def test_sizing_counts_the_group_scales(catalog) -> None:
    # Llama 3.1 405B: bare INT4 is 405e9 x 0.5 = 202.5 GB, 202.5 / 70 = 2.89 -> 3 GPUs;
    # with scales and zero points 405e9 x 0.51953125 = 210.41 GB, 210.41 / 70 = 3.006 -> 4 GPUs.
    bare = size_on_node(catalog, "llama-3.1-405b", "int4", "hgx-h100-8", "runtime-reserve")
    grouped = size_on_node(catalog, "llama-3.1-405b", "int4-g128", "hgx-h100-8", "runtime-reserve")
    assert bare.weight_bytes == pytest.approx(202.5e9) and bare.gpus_with_headroom == 3
    assert grouped.weight_bytes == pytest.approx(210.41015625e9) and grouped.gpus_with_headroom == 4
    # FP16 unchanged by counting scales: 810 GB, 12 GPUs
    fp16 = size_on_node(catalog, "llama-3.1-405b", "fp16", "hgx-h100-8", "runtime-reserve")
    assert fp16.weight_bytes == pytest.approx(810e9) and fp16.gpus_with_headroom == 12


def test_zero_point_alone_is_refused_without_a_scale() -> None:
    with pytest.raises(ValidationError, match=r"block_scale.scale_width\n  Field required"):
        prec(4, block={"group_size": 128, "zero_point_width": bits(4)})
    with pytest.raises(ValidationError, match=r"block_scale.group_size\n  Value error, 0 is less than 1"):
        prec(4, block={"group_size": 0, "scale_width": bits(16)})


@pytest.mark.parametrize(
    ("layout", "largest"),
    [
        (lay(4, 3, 7, "nan_only"), 448),  # E4M3: 1.75 x 2^(15 - 7)
        (lay(5, 2, 15, "ieee"), 57344),  # E5M2: 1.75 x 2^(30 - 15)
        (lay(2, 1, 1, "none"), 6),  # E2M1: 1.5 x 2^(3 - 1)
        (lay(5, 10, 15, "ieee"), 65504),  # FP16: (2 - 2^-10) x 2^15
        (lay(8, 7, 127, "ieee"), (2 - 2**-7) * 2.0**127),  # BF16: about 3.39e38
        (lay(8, 23, 127, "ieee"), 3.4028234663852886e38),  # FP32, numpy's finfo max
    ],
)
def test_max_finite(layout: FloatLayout, largest: float) -> None:
    assert max_finite(layout) == largest


def test_smallest_values_and_step() -> None:
    e4m3, e5m2, e2m1 = lay(4, 3, 7, "nan_only"), lay(5, 2, 15, "ieee"), lay(2, 1, 1, "none")
    assert min_subnormal(e4m3) == 2.0**-9 and min_normal(e4m3) == 2.0**-6
    assert min_subnormal(e5m2) == 2.0**-16 and min_normal(e5m2) == 2.0**-14
    assert min_subnormal(e2m1) == 0.5 and min_normal(e2m1) == 1
    assert min_subnormal(lay(5, 10, 15, "ieee")) == pytest.approx(5.960464477539063e-08)  # FP16: 2^-24
    assert relative_step(e4m3) == 0.125 and relative_step(e5m2) == 0.25  # 1.000 -> 1.125, 1.00 -> 1.25


def test_impossible_layouts_are_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        max_finite(lay(4, 0, 7, "nan_only"))
    with pytest.raises(ValueError, match="two exponent bits"):
        max_finite(lay(1, 2, 0, "ieee"))
    with pytest.raises(ValidationError, match="layout"):
        prec(8, "float", layout={"exponent_bits": 4, "mantissa_bits": 2, "bias": 7, "specials": "ieee"})
    with pytest.raises(ValidationError, match="layout"):
        prec(8, "int", layout={"exponent_bits": 4, "mantissa_bits": 3, "bias": 7, "specials": "nan_only"})


def test_repository_layouts_match_the_papers(catalog) -> None:
    p = catalog.precisions
    assert max_finite(p["fp8-e4m3"].layout) == 448 and max_finite(p["fp8-e5m2"].layout) == 57344
    assert max_finite(p["mxfp4"].layout) == max_finite(p["nvfp4"].layout) == 6
    assert max_finite(p["fp16"].layout) == 65504
