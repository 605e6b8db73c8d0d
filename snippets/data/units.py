"""Units and bandwidth bases.

Decimal and binary byte units are kept apart: GB = 10^9 bytes, GiB = 2^30 bytes.
A bandwidth always carries the basis its figure was quoted on, and arithmetic
that would mix two bases raises `BasisMismatchError` instead of guessing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

BYTE_UNITS: dict[str, float] = {
    "B": 1.0,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "TiB": 2.0**40,
}
"""Bytes per unit. Decimal (SI) and binary (IEC) prefixes are distinct units."""

BANDWIDTH_UNITS: dict[str, float] = {
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
    "Gb/s": 1e9 / 8,
    "Tb/s": 1e12 / 8,
}
"""Bytes per second per unit. Lower-case b is bits: 400 Gb/s = 50 GB/s."""

TRANSFER_RATE_UNITS: dict[str, float] = {"GT/s": 1e9}
"""Transfers (symbols) per second per lane per unit."""

COUNT_UNITS: dict[str, float] = {"count": 1.0, "million": 1e6, "billion": 1e9}
"""Plain counts, such as parameters. Never written as a bare "B", which means bytes."""

BIT_UNITS: dict[str, float] = {"bit": 1.0}
PERCENT_UNITS: dict[str, float] = {"%": 0.01}
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class UnitError(ValueError):
    """A unit that is not in the table for its kind of quantity."""


def to_base(value: float, unit: str, table: dict[str, float]) -> float:
    """Convert `value` in `unit` to the table's base unit (bytes, bytes/s, ...)."""
    try:
        return value * table[unit]
    except KeyError:
        raise UnitError(f"unknown unit {unit!r}; expected one of {sorted(table)}") from None


class Direction(StrEnum):
    """The basis a bandwidth figure is quoted on."""

    PER_DIRECTION = "per_direction"
    """Full-duplex link, one way. Traffic the other way gets the same again."""
    BOTH_SUMMED = "both_summed"
    """Full-duplex link, the two directions added up (vendor "bidirectional" figures)."""
    SHARED = "shared"
    """Half-duplex total, such as HBM: reads and writes share one figure, and one direction alone may use all of it."""

    @property
    def label(self) -> str:
        return _DIRECTION_LABELS[self]


_DIRECTION_LABELS = {
    Direction.PER_DIRECTION: "per direction",
    Direction.BOTH_SUMMED: "both directions summed",
    Direction.SHARED: "shared by reads and writes",
}


class BasisMismatchError(ValueError):
    """Two bandwidths on different bases were compared or combined."""


@dataclass(frozen=True, slots=True)
class Bandwidth:
    """A bandwidth in bytes per second, with the basis it was quoted on."""

    bytes_per_s: float
    direction: Direction

    def __post_init__(self) -> None:
        if not math.isfinite(self.bytes_per_s) or self.bytes_per_s <= 0:
            raise ValueError(f"bandwidth must be a positive number of bytes/s, got {self.bytes_per_s!r}")

    def one_way(self) -> Bandwidth:
        """What a single direction of traffic can use, as a per-direction figure.

        A both-directions-summed figure of a symmetric full-duplex link is halved. A shared
        (half-duplex) figure is kept whole: one direction alone, such as reading weights, may use all of it.
        """
        if self.direction is Direction.BOTH_SUMMED:
            return Bandwidth(self.bytes_per_s / 2, Direction.PER_DIRECTION)
        return Bandwidth(self.bytes_per_s, Direction.PER_DIRECTION)

    def both_summed(self) -> Bandwidth:
        """The two directions of a symmetric full-duplex link added up."""
        if self.direction is Direction.PER_DIRECTION:
            return Bandwidth(self.bytes_per_s * 2, Direction.BOTH_SUMMED)
        if self.direction is Direction.SHARED:
            raise BasisMismatchError("a shared (half-duplex) bandwidth has no separate directions to sum")
        return self

    def _check_same_basis(self, other: Bandwidth, what: str) -> None:
        if self.direction is not other.direction:
            raise BasisMismatchError(
                f"cannot {what} a bandwidth quoted {self.direction.label} with one quoted {other.direction.label}; "
                "convert both with .one_way() (or .both_summed()) first"
            )

    def ratio(self, other: Bandwidth) -> float:
        """How many times `other` fits in `self`; both must be on the same basis."""
        self._check_same_basis(other, "compare")
        return self.bytes_per_s / other.bytes_per_s

    def __add__(self, other: Bandwidth) -> Bandwidth:
        self._check_same_basis(other, "add")
        return Bandwidth(self.bytes_per_s + other.bytes_per_s, self.direction)

    def __mul__(self, factor: float) -> Bandwidth:
        return Bandwidth(self.bytes_per_s * factor, self.direction)

    __rmul__ = __mul__

    def in_unit(self, unit: str) -> float:
        """The figure expressed in `unit` (e.g. "GB/s")."""
        return self.bytes_per_s / BANDWIDTH_UNITS[unit]


class FlopKind(StrEnum):
    """Whether a tensor throughput counts a dense matrix product or assumes 2:4 structured sparsity."""

    DENSE = "dense"
    SPARSE = "sparse"


class KindMismatchError(ValueError):
    """A dense and a sparse FLOP/s figure were compared or combined."""


@dataclass(frozen=True, slots=True)
class Throughput:
    """Tensor throughput in FLOP/s, with its kind (dense or sparse) and whether the site derived it.

    Like `Bandwidth` and its direction, two throughputs of different kinds refuse to be compared:
    a sparse figure is twice the dense one on NVIDIA's datasheets, and dense serving never sees it.
    """

    flops_per_s: float
    kind: FlopKind
    derived: bool = False
    """True when the site derived a dense figure from the vendor's sparse one (÷ the stated speedup)."""

    def __post_init__(self) -> None:
        if not math.isfinite(self.flops_per_s) or self.flops_per_s <= 0:
            raise ValueError(f"throughput must be a positive number of FLOP/s, got {self.flops_per_s!r}")

    def _check_same_kind(self, other: Throughput, what: str) -> None:
        if self.kind is not other.kind:
            raise KindMismatchError(
                f"cannot {what} a {self.kind.value} FLOP/s figure with a {other.kind.value} one; "
                "compare dense figures (Flops.dense)"
            )

    def ratio(self, other: Throughput) -> float:
        """How many times `other` fits in `self`; both must be of the same kind."""
        self._check_same_kind(other, "compare")
        return self.flops_per_s / other.flops_per_s

    def __add__(self, other: Throughput) -> Throughput:
        self._check_same_kind(other, "add")
        return Throughput(self.flops_per_s + other.flops_per_s, self.kind, self.derived or other.derived)

    def __mul__(self, factor: float) -> Throughput:
        return Throughput(self.flops_per_s * factor, self.kind, self.derived)

    __rmul__ = __mul__
