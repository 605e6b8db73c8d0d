"""Numeric formats: what a weight really costs in bits, and how far a small float reaches.

A block-scaled format stores, besides each weight, one scale (and for asymmetric integer formats
one zero point) per group of weights; their bits are spread over the group. `bit_budget` splits
the cost into those parts; the engine's `PrecisionSpec.bits_per_param` (a precision entry is that record) gives
the same total. The range functions read a float's bit fields (`FloatLayout`): E4M3 reaches 448,
E5M2 57344, E2M1 6.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import FloatLayout, Precision


@dataclass(frozen=True, slots=True)
class BitBudget:
    """Storage bits per weight, split into the weight itself and its share of the group's metadata."""

    element: float
    """Bits of the weight itself (INT4: 4)."""
    scale: float
    """The group's scale spread over the group: scale bits / group size (FP16 per 128: 0.125)."""
    zero_point: float
    """The group's zero point spread over the group (4 bits per 128: 0.03125); 0 if none is stored."""

    @property
    def total(self) -> float:
        return self.element + self.scale + self.zero_point

    @property
    def overhead(self) -> float:
        """Metadata as a fraction of the element bits: (0.125 + 0.03125) / 4 = 0.0390625."""
        return (self.scale + self.zero_point) / self.element


def bit_budget(precision: Precision) -> BitBudget:
    """The bits one weight of `precision` costs, by part. Formats without a block scale are all element."""
    bs = precision.block_scale
    if bs is None:
        return BitBudget(precision.width, 0.0, 0.0)
    zero = 0.0 if bs.zero_point_width is None else bs.zero_point_width / bs.group_size
    return BitBudget(precision.width, bs.scale_width / bs.group_size, zero)


def shrink_factor(precision: Precision, reference: Precision) -> float:
    """How many times fewer bytes `precision` needs than `reference`, scales counted: FP16 / NVFP4 = 16 / 4.5."""
    return bit_budget(reference).total / bit_budget(precision).total


def _check(layout: FloatLayout) -> None:
    if layout.specials == "nan_only" and layout.mantissa_bits == 0:
        raise ValueError("a nan_only layout needs mantissa bits: its NaN is the all-ones mantissa")


def max_finite(layout: FloatLayout) -> float:
    """The largest finite value of a float with these bit fields.

    - "ieee": the top exponent field is Inf/NaN, so the largest is (2 - 2^-m) x 2^(2^e - 2 - bias);
      E5M2: 1.75 x 2^15 = 57344; FP16: 65504.
    - "nan_only": the top exponent holds numbers except the all-ones mantissa (NaN), so the largest
      mantissa is one step below all ones: (2 - 2^(1-m)) x 2^(2^e - 1 - bias); E4M3: 1.75 x 2^8 = 448.
    - "none": every code is a number: (2 - 2^-m) x 2^(2^e - 1 - bias); E2M1: 1.5 x 2^2 = 6.
    """
    _check(layout)
    e, m, bias = layout.exponent_bits, layout.mantissa_bits, layout.bias
    top = 2**e - 1
    if layout.specials == "ieee":
        if e < 2:
            raise ValueError("an IEEE-style layout needs at least two exponent bits")
        return float((2 - 2.0**-m) * 2.0 ** (top - 1 - bias))
    if layout.specials == "nan_only":
        return float((2 - 2.0 ** (1 - m)) * 2.0 ** (top - bias))
    return float((2 - 2.0**-m) * 2.0 ** (top - bias))


def min_normal(layout: FloatLayout) -> float:
    """The smallest positive normal value, 2^(1 - bias): E4M3 2^-6, E5M2 2^-14, E2M1 1."""
    return 2.0 ** (1 - layout.bias)


def min_subnormal(layout: FloatLayout) -> float:
    """The smallest positive value, a subnormal, 2^(1 - bias - m): E4M3 2^-9, E5M2 2^-16, E2M1 0.5."""
    return 2.0 ** (1 - layout.bias - layout.mantissa_bits)


def relative_step(layout: FloatLayout) -> float:
    """Gap between neighbouring normal values, relative to the power of two below them: 2^-m.

    E4M3: 1/8 (12.5 %), E5M2: 1/4 (25 %). Rounding error is at most half of it.
    """
    return 2.0**-layout.mantissa_bits
