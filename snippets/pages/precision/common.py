"""The precision page's choices, its formatting, and each number format as the page shows it."""

from __future__ import annotations

import math
from typing import TypeVar

from snippets.data import Catalog
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.formats import (
    bit_budget,
    max_finite,
    min_normal,
    min_subnormal,
    relative_step,
    shrink_factor,
)

MODELS = {"m70": "llama-3.1-70b", "m405": "llama-3.1-405b"}
REFERENCE = "fp16"
FORMATS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the bytes-per-parameter table."""
SIZED = ("fp32", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the GPU and decode tables (BF16 sizes exactly as FP16)."""
FLOATS = ("fp32", "bf16", "fp16", "fp8-e5m2", "fp8-e4m3", "mxfp4")
"""Rows of the range table; MXFP4 stands for its E2M1 element, which NVFP4 shares."""
COST_MODEL = "m70"
OLDER = "a100-80gb-sxm"
"""A GPU without FP8 tensor cores, where FP8 is weight-only."""
QUIZ_OLD_TP = 4
"""The quiz's four cards of the older GPU (TP4 inside its 8-GPU node)."""


T = TypeVar("T")


def key(precision_id: str) -> str:
    """The name a precision id goes by in the page's expressions: "int4-g128" -> "int4_g128"."""
    return precision_id.replace("-", "_")


def _digits(x: float, most: int) -> int:
    """The fewest decimals (up to `most`) that show `x` exactly: 4.15625 -> 5, 36.37 -> `most`."""
    for d in range(most + 1):
        if abs(round(x, d) - x) < 1e-12 * max(1.0, abs(x)):
            return d
    return most


def _bits(x: float) -> Figure:
    return fmt.quantity(x, "bits/weight", _digits(x, 5))


def _gb(n: float) -> Figure:
    return fmt.nbytes(n, "GB", _digits(n / 1e9, 1))


def _tps(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 0 if x >= 100 else 1,
                        basis="upper bound, one sequence: HBM ÷ (weights + KV cache) per step")


def _power_of_two(x: float) -> str:
    """2^-9 for 0.001953125, 0.5 for 2^-1: the small floats' limits are exact powers of two."""
    e = math.log2(x)
    if e != int(e):
        raise ValueError(f"{x!r} is not a power of two")
    return fmt.number(x, -int(e)) if e >= -3 else f"2^{int(e)}"


# --------------------------------------------------------------------------- formats

class Format:
    """One number format, as figures; each attribute is named once, here."""

    def __init__(self, cat: Catalog, precision_id: str) -> None:
        p = cat.precisions[precision_id]
        b = bit_budget(p)
        bs = p.block_scale
        lay = p.layout
        shrink = shrink_factor(p, cat.precisions[REFERENCE])
        self.precision = p
        self.name = p.name
        self.element_bits = _bits(b.element)
        self.scale_bits = _bits(b.scale)  # the group's scale spread over its weights, bits per weight
        self.zero_bits = _bits(b.zero_point)
        self.meta_bits = _bits(b.scale + b.zero_point)  # scale plus zero point, bits per weight
        self.bits = _bits(b.total)  # all of it: bits per weight
        self.bytes = fmt.quantity(b.total / 8, "bytes/weight", _digits(b.total / 8, 5))
        self.shrink = fmt.ratio(shrink, _digits(shrink, 2),  # times fewer bytes than FP16
                                basis=f"bytes per weight against {cat.precisions[REFERENCE].name}")
        self.overhead = fmt.percent(b.overhead, _digits(b.overhead * 100, 1))  # scale and zero point / element bits
        self.group = None if bs is None else fmt.count(bs.group_size, "weights")
        self.scale_width = None if bs is None else fmt.quantity(bs.scale_width, "bits", 0)
        self.zero_width = (None if bs is None or bs.zero_point_width is None
                           else fmt.quantity(bs.zero_point_width, "bits", 0))
        self.scale_format = "" if bs is None or bs.scale_format is None else bs.scale_format
        self.exponent_bits = None if lay is None else fmt.count(lay.exponent_bits, "bits")
        self.mantissa_bits = None if lay is None else fmt.count(lay.mantissa_bits, "bits")
        self.max = None if lay is None else fmt.Figure(max_finite(lay), "", _sci(max_finite(lay)))
        self.min_normal = None if lay is None else fmt.Figure(min_normal(lay), "", _power_of_two(min_normal(lay)))
        self.min_subnormal = (None if lay is None
                              else fmt.Figure(min_subnormal(lay), "", _power_of_two(min_subnormal(lay))))
        # the gap between neighbouring values, relative to the power of two below them: in percent, and as 2^-m
        self.step = None if lay is None else fmt.percent(relative_step(lay), _digits(relative_step(lay) * 100, 1))
        self.step_pow2 = None if lay is None else fmt.Figure(relative_step(lay), "", f"2^-{lay.mantissa_bits}")


def _sci(x: float) -> str:
    """A float format's largest value: exact below a million (448, 57,344, 65,504), else 3.40 × 10^38."""
    if x < 1e6:
        return fmt.number(x, _digits(x, 2))
    exp = len(str(int(x))) - 1
    return f"{x / 10**exp:.2f} × 10^{exp}"
