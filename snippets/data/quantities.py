"""Quantities with units: each a measure (a value and a unit from its unit table) in a plausible range."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, _Strict
from snippets.data.units import (
    BANDWIDTH_UNITS,
    BIT_UNITS,
    BYTE_UNITS,
    COUNT_UNITS,
    PERCENT_UNITS,
    TIME_UNITS,
    TRANSFER_RATE_UNITS,
    Bandwidth,
    Direction,
    FlopKind,
    Throughput,
)


class _Bounded(_Strict):
    """A quantity whose value in base units must lie in a plausible range, stated by each subclass.

    `BOUNDS` is (low, high) in the base unit of `base` (bytes, FLOP/s, watts...); a value outside
    is a typo (a unit slip, a missing exponent), not a fact, and is refused where it is read.
    """

    BOUNDS: ClassVar[tuple[float, float]] = (0.0, float("inf"))
    BASE: ClassVar[str] = ""

    def _base_value(self) -> float:
        raise NotImplementedError

    @model_validator(mode="after")
    def _plausible(self) -> _Bounded:
        low, high = self.BOUNDS
        v = self._base_value()
        if not low <= v <= high:
            raise ValueError(f"{v:g} {self.BASE} is outside the plausible range {low:g}..{high:g} {self.BASE} "
                             f"of a {type(self).__name__} (snippets/data/quantities.py, {type(self).__name__}.BOUNDS)")
        return self


def _unit_field(table: dict[str, float]) -> Any:
    return Literal[tuple(table)]


class ByteSize(_Bounded):
    """A device's memory: 1 GB to 10 TB."""

    BOUNDS = (1e9, 1e13)
    BASE = "bytes"
    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.bytes

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


class Count(_Bounded):
    """A parameter count: a million to 10^14."""

    BOUNDS = (1e6, 1e14)
    BASE = "parameters"
    value: PositiveFloat
    unit: _unit_field(COUNT_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.count

    @property
    def count(self) -> float:
        return self.value * COUNT_UNITS[self.unit]


class Bits(_Bounded):
    """A storage width: 1 to 64 bits."""

    BOUNDS = (1.0, 64.0)
    BASE = "bits"
    value: PositiveFloat
    unit: _unit_field(BIT_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.value

    @property
    def bytes(self) -> float:
        return self.value / 8


class Percent(_Strict):
    value: Annotated[float, Field(gt=0, lt=100)]
    unit: _unit_field(PERCENT_UNITS)  # type: ignore[valid-type]

    @property
    def fraction(self) -> float:
        return self.value / 100


class AssumedValue(_Strict):
    """An assumption's value: a percentage, a token count or a plain count."""

    value: PositiveFloat
    unit: Literal["%", "tokens", "count"]

    @model_validator(mode="after")
    def _percent_below_100(self) -> AssumedValue:
        if self.unit == "%" and self.value >= 100:
            raise ValueError("a percentage must be below 100")
        return self

    @property
    def fraction(self) -> float:
        if self.unit != "%":
            raise TypeError(f"not a percentage: {self.value} {self.unit}")
        return self.value / 100

    @property
    def count(self) -> float:
        if self.unit == "%":
            raise TypeError(f"not a count: {self.value} %")
        return self.value


class Duration(_Bounded):
    """A latency: a nanosecond to a second."""

    BOUNDS = (1e-9, 1.0)
    BASE = "s"
    value: PositiveFloat
    unit: _unit_field(TIME_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.seconds

    @property
    def seconds(self) -> float:
        return self.value * TIME_UNITS[self.unit]


class TransferRate(_Bounded):
    """A lane's signalling rate: 0.1 to 1,000 GT/s."""

    BOUNDS = (1e8, 1e12)
    BASE = "transfers/s"
    value: PositiveFloat
    unit: _unit_field(TRANSFER_RATE_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.per_s

    @property
    def per_s(self) -> float:
        return self.value * TRANSFER_RATE_UNITS[self.unit]


class BandwidthSpec(_Bounded):
    """A link's or a memory's bandwidth: 1 MB/s to 1 PB/s."""

    BOUNDS = (1e6, 1e15)
    BASE = "bytes/s"
    value: PositiveFloat
    unit: _unit_field(BANDWIDTH_UNITS)  # type: ignore[valid-type]

    def _base_value(self) -> float:
        return self.value * BANDWIDTH_UNITS[self.unit]
    direction: Direction
    """Required: per_direction, both_summed, or shared (half-duplex memory)."""

    @property
    def bandwidth(self) -> Bandwidth:
        return Bandwidth(self.value * BANDWIDTH_UNITS[self.unit], self.direction)


class Encoding(_Strict):
    """Line code: `payload_bits` of data carried in every `line_bits` sent (128b/130b)."""

    payload_bits: PositiveInt
    line_bits: PositiveInt

    @field_validator("line_bits")
    @classmethod
    def _not_below_payload(cls, v: int, info: Any) -> int:
        payload = info.data.get("payload_bits")
        if payload is not None and v < payload:
            raise ValueError("line_bits must be at least payload_bits")
        return v


FLOPS_UNITS: dict[str, float] = {"TFLOP/s": 1e12, "PFLOP/s": 1e15}
"""Floating-point operations per second per unit."""

POWER_UNITS: dict[str, float] = {"W": 1.0, "kW": 1e3}
"""Watts per unit."""


TensorFormat = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4"]
"""Number formats a chip's matrix units (tensor cores, MXUs) compute in; `Accelerator.tensor` is keyed by them."""

TENSOR_FORMATS: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4")


class Flops(_Bounded):
    """Peak tensor throughput of one format, exactly as the vendor states it: 1 TFLOP/s to 1 EFLOP/s."""

    BOUNDS = (1e12, 1e18)
    BASE = "FLOP/s"

    def _base_value(self) -> float:
        return self.per_s

    value: PositiveFloat
    unit: _unit_field(FLOPS_UNITS)  # type: ignore[valid-type]
    sparsity: Literal["dense", "sparse"]
    """dense: stated without structured sparsity; sparse: the vendor states only its 2:4-sparsity figure."""
    sparse_speedup: Annotated[float, Field(gt=1, le=4)] | None = None
    """For a sparse figure: the factor the vendor states 2:4 sparsity multiplies dense throughput by (NVIDIA: 2).
    Only with it does the site derive a dense figure, labelled derived."""

    @model_validator(mode="after")
    def _speedup_only_for_sparse(self) -> Flops:
        if self.sparse_speedup is not None and self.sparsity != "sparse":
            raise ValueError("sparse_speedup: only a sparse figure has one")
        return self

    @property
    def per_s(self) -> float:
        """The figure as stated, in FLOP/s (of its own kind: see `throughput`)."""
        return self.value * FLOPS_UNITS[self.unit]

    @property
    def throughput(self) -> Throughput:
        """The figure as stated, with its kind: comparing a dense with a sparse one raises."""
        return Throughput(self.per_s, FlopKind(self.sparsity))

    @property
    def dense(self) -> Throughput | None:
        """The dense figure: as stated, or derived from a sparse one by the vendor's stated speedup; None if neither."""
        if self.sparsity == "dense":
            return self.throughput
        if self.sparse_speedup is None:
            return None
        return Throughput(self.per_s / self.sparse_speedup, FlopKind.DENSE, derived=True)


class Power(_Bounded):
    """Maximum board or module power (TDP / TBP) as the vendor states it: 1 W to 100 kW."""

    BOUNDS = (1.0, 1e5)
    BASE = "W"

    def _base_value(self) -> float:
        return self.watts

    value: PositiveFloat
    unit: _unit_field(POWER_UNITS)  # type: ignore[valid-type]

    @property
    def watts(self) -> float:
        return self.value * POWER_UNITS[self.unit]


class HourlyPrice(_Bounded):
    """An hourly price per GPU: a cent to a thousand dollars."""

    BOUNDS = (0.01, 1000.0)
    BASE = "USD/GPU-hour"

    def _base_value(self) -> float:
        return self.value

    value: PositiveFloat
    unit: Literal["USD/GPU-hour"]
