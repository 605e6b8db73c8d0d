"""data/precisions.yaml: a numeric precision, its bits per parameter, tensor format and block scales."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    model_validator,
)

from snippets.data.base import PositiveInt, Sources, _Strict
from snippets.data.quantities import (
    Bits,
    TensorFormat,
)


class BlockScale(_Strict):
    """A scale stored once per group of weights (4-bit formats): its cost is spread over the group."""

    group_size: PositiveInt
    """Weights that share one scale."""
    scale_width: Bits
    """Storage width of one scale (FP16: 16 bit, E8M0: 8 bit)."""
    scale_format: str | None = None
    """The scale's number format, as its source names it: "FP16", "E8M0", "E4M3"."""
    zero_point_width: Bits | None = None
    """Storage width of one zero point per group (asymmetric integer formats: 4 bit); None if none is stored."""


class WeightBlock(_Strict):
    """Block quantization: one scale per block of `rows` output rows x `cols` input columns of a weight matrix
    (vLLM's weight_block_size [block_n, block_k]). Tensor parallelism must cut every weight along block edges."""

    rows: PositiveInt
    cols: PositiveInt


class FloatLayout(_Strict):
    """Bit fields of a floating-point element: one sign bit, then exponent and mantissa bits."""

    exponent_bits: PositiveInt
    mantissa_bits: Annotated[int, Field(ge=0, strict=True)]
    bias: int
    """Exponent bias: a normal value is 2^(exponent field - bias) x 1.mantissa."""
    specials: Literal["ieee", "nan_only", "none"]
    """Codes set aside: "ieee" (top exponent is Inf/NaN, as E5M2), "nan_only" (only the all-ones code is NaN,
    as E4M3), "none" (every code is a number, as E2M1)."""


class Precision(_Strict):
    name: str
    kind: Literal["float", "int"]
    width: Bits
    """Storage width of one weight, before any per-group scales."""
    block_scale: BlockScale | None = None
    """Per-group scale, for formats that need one; None when scales are per tensor or per channel (negligible)."""
    layout: FloatLayout | None = None
    """Sign, exponent and mantissa bits of a float element, where the page needs its range."""
    weight_block: WeightBlock | None = None
    """Block-quantized checkpoints (DeepSeek-V3's and Qwen3's FP8, 128 x 128): every TP shard of a weight must be a
    multiple of the block, which vLLM checks when it creates the layer."""
    tensor_format: TensorFormat
    """The matrix-unit format a chip computes in when it stores weights in this precision and supports it
    natively (FP8 weights: fp8; INT4 with group scales: int4). A chip without it converts the weights to BF16
    before each product: the speed of BF16, the memory of this precision (weight-only)."""
    keeps_16bit: tuple[Literal["embeddings", "lm_head"], ...] = ()
    """Tensors that quantized checkpoints in this precision keep at 16 bit (norms and routers always are)."""
    keeps_16bit_note: str | None = None
    """Which checkpoints show it, with the source in `sources`."""
    sources: Sources

    @model_validator(mode="after")
    def _layout_fills_width(self) -> Precision:
        if self.layout is not None:
            bits = 1 + self.layout.exponent_bits + self.layout.mantissa_bits
            if self.kind != "float" or bits != self.width.value:
                raise ValueError(f"layout: a float of 1 + exponent + mantissa = {bits} bits, width is {self.width.value}")
        return self

    @property
    def bits_per_param(self) -> float:
        """Effective storage bits per weight, counting per-group scale and zero point: 4 + (16 + 4)/128 = 4.15625."""
        bs = self.block_scale
        if bs is None:
            return self.width.value
        zero = 0.0 if bs.zero_point_width is None else bs.zero_point_width.value
        return self.width.value + (bs.scale_width.value + zero) / bs.group_size
