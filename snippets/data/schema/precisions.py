"""data/precisions.yaml: a numeric precision, its bits per parameter, tensor format and block scales."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import (
    Field,
)

from snippets.data.base import PositiveInt, Sources, _Strict, as_written, obeys
from snippets.data.quantities import (
    Bits,
    TensorFormat,
    in_base,
)
from snippets.engine import specs
from snippets.engine.specs import PrecisionSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockScale(specs.BlockScale):
    """The engine's `BlockScale` as data/precisions.yaml states it: its widths with their unit, held in bits, and the
    scale's number format as its source names it ("FP16", "E8M0", "E4M3")."""

    scale_width: Annotated[float, in_base(Bits)]
    zero_point_width: Annotated[float, in_base(Bits)] | None = None
    scale_format: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelGap(specs.KernelGap):
    """The engine's `KernelGap` as data/precisions.yaml states it: the chips listed (ids of data/accelerators.yaml,
    checked by the loader), their compute capability or the engine's message (one of them, checked by the loader),
    and where they and the engine's gap were read."""

    accelerators: Annotated[frozenset[str], Field(min_length=1)]
    sm: PositiveInt | None = None
    message: Annotated[str, Field(min_length=10)] | None = None
    note: str
    sources: Sources


class FloatLayout(_Strict):
    """Bit fields of a floating-point element: one sign bit, then exponent and mantissa bits."""

    exponent_bits: PositiveInt
    mantissa_bits: Annotated[int, Field(ge=0, strict=True)]
    bias: int
    """Exponent bias: a normal value is 2^(exponent field - bias) x 1.mantissa."""
    specials: Literal["ieee", "nan_only", "none"]
    """Codes set aside: "ieee" (top exponent is Inf/NaN, as E5M2), "nan_only" (only the all-ones code is NaN,
    as E4M3), "none" (every code is a number, as E2M1)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Precision(PrecisionSpec):
    """A precision as data/precisions.yaml states it: the engine's own record (`PrecisionSpec`, whose fields and
    docstrings say what each means, and whose `bits_per_param` counts the group scales), its id the entry's, its widths
    written with their unit and held in bits, with what only the teaching pages read (`kind`, the float `layout`, the
    scale's format), its notes and sources."""

    kind: Literal["float", "int"]
    width: Annotated[float, in_base(Bits)]
    block_scale: BlockScale | None = None
    layout: FloatLayout | None = None
    """Sign, exponent and mantissa bits of a float element, where the page needs its range."""
    tensor_format: TensorFormat
    kernel_gaps: tuple[KernelGap, ...] = ()
    keeps_16bit_note: str | None = None
    """Which checkpoints keep tensors at 16 bit, with the source in `sources`."""
    sources: Sources


def _layout_fills_width(p: Precision) -> list[tuple[str, str]]:
    if p.layout is None:
        return []
    bits = 1 + p.layout.exponent_bits + p.layout.mantissa_bits
    if p.kind != "float" or bits != p.width:
        return [("layout", f"a float of 1 + exponent + mantissa = {bits} bits, width is {p.width:g}")]
    return []


def _counts(p: Precision) -> list[tuple[str, str]]:
    found = [] if p.block_scale is None or p.block_scale.group_size >= 1 else [
        ("block_scale.group_size", f"{p.block_scale.group_size} is less than 1")]
    if p.weight_block is not None:
        found += [(f"weight_block.{n}", f"{v} is less than 1")
                  for n, v in (("rows", p.weight_block.rows), ("cols", p.weight_block.cols)) if v < 1]
    return found + _layout_fills_width(p)


PrecisionEntry = Annotated[Precision, as_written(Precision), obeys(_counts)]
"""An entry of data/precisions.yaml: validated straight into the engine's record (`Precision` is a `PrecisionSpec`)."""
