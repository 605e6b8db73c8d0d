"""Quantities with units: each a measure (a value and a unit from its unit table) in a plausible range."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BeforeValidator,
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


def _unit_field(table: Mapping[str, float]) -> Any:
    return Literal[tuple(table)]


class _Measure(_Bounded):
    """A figure and its unit: `UNITS` maps each unit the figure may be given in to its size in `BASE` units, and
    `base` is the figure in `BASE` units. Every kind of figure below is this measure with its own unit table and
    plausible range; an unknown unit is refused, naming those the table holds."""

    UNITS: ClassVar[Mapping[str, float]] = {}
    value: PositiveFloat
    unit: str

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, unit: str) -> str:
        if unit not in cls.UNITS:
            raise ValueError(f"unit {unit!r} is not one of {', '.join(repr(u) for u in cls.UNITS)}")
        return unit

    @property
    def base(self) -> float:
        return self.value * self.UNITS[self.unit]

    def _base_value(self) -> float:
        return self.base


def in_base(measure: type[_Measure]) -> BeforeValidator:
    """For an engine record's field in a base unit (seconds, bytes) that data/ writes as a measure, `{value: 2000,
    unit: ms}`: validated as that measure (its units, a number as written, its plausible range), then held as its
    `base` figure (2.0 s). The record keeps the figure, not the unit it was written in."""
    return BeforeValidator(lambda value: measure.model_validate(value).base)


class ByteSize(_Measure):
    """A device's memory: 1 GB to 10 TB."""

    UNITS = BYTE_UNITS
    BASE = "bytes"
    BOUNDS = (1e9, 1e13)

    @property
    def bytes(self) -> float:
        return self.base


class Count(_Measure):
    """A parameter count: a million to 10^14."""

    UNITS = COUNT_UNITS
    BASE = "parameters"
    BOUNDS = (1e6, 1e14)


class Bits(_Measure):
    """A storage width: 1 to 64 bits."""

    UNITS = BIT_UNITS
    BASE = "bits"
    BOUNDS = (1.0, 64.0)

    @property
    def bytes(self) -> float:
        return self.base / 8


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


class Duration(_Measure):
    """A latency: a nanosecond to a second."""

    UNITS = TIME_UNITS
    BASE = "s"
    BOUNDS = (1e-9, 1.0)

    @property
    def seconds(self) -> float:
        return self.base


class TransferRate(_Measure):
    """A lane's signalling rate: 0.1 to 1,000 GT/s."""

    UNITS = TRANSFER_RATE_UNITS
    BASE = "transfers/s"
    BOUNDS = (1e8, 1e12)

    @property
    def per_s(self) -> float:
        return self.base


class BandwidthSpec(_Measure):
    """A link's or a memory's bandwidth: 1 MB/s to 1 PB/s."""

    UNITS = BANDWIDTH_UNITS
    BASE = "bytes/s"
    BOUNDS = (1e6, 1e15)
    direction: Direction
    """Required: per_direction, both_summed, or shared (half-duplex memory)."""

    @property
    def bandwidth(self) -> Bandwidth:
        return Bandwidth(self.base, self.direction)


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


class Flops(_Measure):
    """Peak tensor throughput of one format, exactly as the vendor states it: 1 TFLOP/s to 1 EFLOP/s."""

    UNITS = FLOPS_UNITS
    BASE = "FLOP/s"
    BOUNDS = (1e12, 1e18)
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
        return self.base

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


class Power(_Measure):
    """Maximum board or module power (TDP / TBP) as the vendor states it: 1 W to 100 kW."""

    UNITS = POWER_UNITS
    BASE = "W"
    BOUNDS = (1.0, 1e5)

    @property
    def watts(self) -> float:
        return self.base


class HourlyPrice(_Measure):
    """An hourly price per GPU: a cent to a thousand dollars."""

    UNITS = MappingProxyType({"USD/GPU-hour": 1.0})
    BASE = "USD/GPU-hour"
    BOUNDS = (0.01, 1000.0)
