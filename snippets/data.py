"""Load and validate `data/`.

Every YAML file in `data/` is a mapping of entry ids to entries. Loading checks each entry
against its schema (types, required and unknown fields, positive quantities, known units, a
direction on every bandwidth, a dated primary source) and then every cross-reference between
files. Anything wrong raises `DataError`, whose message names file, entry and field, so a bad
edit stops the build instead of publishing half-correct numbers.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import types
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, cast, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from snippets.units import (
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

DATA_DIR_ENV = "SERVING_DATA_DIR"
"""Environment variable naming the data directory; the MkDocs hook sets it to `<site root>/data`."""

FILES = ("accelerators", "interconnects", "models", "precisions", "assumptions", "prices", "policies", "scenarios",
         "deployments", "latencies", "efficiencies", "measurements")


class DataError(ValueError):
    """Invalid data. The message names file, entry and field of every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid data:\n  " + "\n  ".join(problems))


# --------------------------------------------------------------------------- schema

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[<>]"), "an angle bracket (HTML markup)"),
    (re.compile(r"\]\s*[(\[]|\[[^\]]*\]:"), "Markdown link syntax"),
    (re.compile(r"`"), "a backtick (Markdown code)"),
    (re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}"), "template syntax ({{ }}, {% %})"),
    (re.compile(r"(?i)\b(?:javascript|vbscript|data)\s*:"), "a script URL scheme"),
)


def check_text(value: str) -> str:
    """Data text is shown as text: refuse markup, template syntax and control characters in it.

    Every page escapes data where it writes it; this keeps the data itself free of anything that
    would mean something to Markdown, HTML or the computed-value syntax if one place did not.
    """
    bad = _CONTROL.search(value)
    if bad:
        raise ValueError(f"text holds the control or invisible character U+{ord(bad.group(0)):04X}")
    for pattern, what in _MARKUP:
        found = pattern.search(value)
        if found:
            raise ValueError(f"text holds {what}: {found.group(0)!r}; data is plain text")
    return value


def _check_texts(value: Any) -> Any:
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_texts(k)
            _check_texts(v)
    elif isinstance(value, list | tuple):
        for v in value:
            _check_texts(v)
    return value


_SCALARS = (bool, int, float, dt.date)


@cache
def _scalar_kinds(tp: Any) -> frozenset[type]:  # tp: a field's annotation
    """The bare scalar types a field accepts (bool, int, float, date), or {object} if it takes anything else."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _scalar_kinds(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        out: set[type] = set()
        for arg in get_args(tp):
            if arg is not type(None):
                out |= _scalar_kinds(arg)
        return frozenset(out)
    if tp in _SCALARS:
        return frozenset({tp})
    return frozenset({object})


def _strict_scalar(kinds: frozenset[type], value: Any) -> Any:
    """Refuse the coercions pydantic's lax mode would make: "96" or "yes" read as a number or a bool."""
    if object in kinds or value is None:
        return value
    if isinstance(value, bool):
        if bool not in kinds:
            raise ValueError("a boolean")
    elif isinstance(value, int | float):
        if kinds == {bool}:
            raise ValueError("a number: write true or false")
        if float not in kinds and not (int in kinds and isinstance(value, int)):
            raise ValueError("not a whole number" if int in kinds else "a number")
    elif isinstance(value, str):
        if kinds == {dt.date}:
            return value  # a quoted date is still a date: pydantic parses YYYY-MM-DD and refuses the rest
        raise ValueError("text: write numbers, true/false and YYYY-MM-DD dates unquoted, in those forms only")
    elif isinstance(value, dt.datetime) or not isinstance(value, dt.date) or dt.date not in kinds:
        raise ValueError(f"a {type(value).__name__}")
    return value


class _Refused:
    """A scalar in the wrong form ("96" for a number): no field type accepts it, so pydantic reports it at its field."""

    __slots__ = ("reason", "value")

    def __init__(self, value: Any, reason: str) -> None:
        self.value, self.reason = value, reason

    def __repr__(self) -> str:
        return f"{self.value!r}, {self.reason}"


class _Strict(BaseModel):
    """Base of every schema class: no unknown keys, immutable, strict scalars, plain-text strings.

    Every field of every subclass (new ones too) gets two checks: a number, bool or date field
    takes only that scalar as YAML wrote it (`"96"`, `yes` or `1` for a bool are refused, not
    coerced), and every string anywhere in a field is plain text (`check_text`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    @model_validator(mode="before")
    @classmethod
    def _scalars_as_written(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = None
        for key, value in data.items():
            fld = cls.model_fields.get(key) if isinstance(key, str) else None
            if fld is None:
                continue
            try:
                _strict_scalar(_scalar_kinds(cast(Hashable, fld.annotation)), value)
            except ValueError as exc:
                out = dict(data) if out is None else out
                out[key] = _Refused(value, str(exc))  # pydantic refuses it at the field, naming the field
        return data if out is None else out

    @field_validator("*", mode="after")
    @classmethod
    def _plain_text(cls, value: Any) -> Any:
        return _check_texts(value)


PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
PositiveInt = Annotated[int, Field(gt=0, strict=True)]
Text = Annotated[str, AfterValidator(check_text)]
"""Plain text from data: no markup, template syntax or control characters (every str field is checked so)."""

_HOST = re.compile(r"^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_URL_CHARS = re.compile(r"^https://[A-Za-z0-9._~:/?#@!$&*+,;=%()-]+$")


def _check_url(url: str) -> str:
    """An https:// URL to a named host, with nothing that could end a Markdown link or an HTML attribute."""
    from urllib.parse import urlsplit

    if not _URL_CHARS.match(url):
        raise ValueError("a source URL is https:// followed only by URL characters (no spaces, quotes, "
                         "angle brackets, backticks, braces or backslashes)")
    parts = urlsplit(url)
    if "@" in parts.netloc or not parts.hostname or not _HOST.match(parts.hostname) or parts.netloc != parts.netloc.lower():
        raise ValueError(f"a source URL needs a proper lower-case host name (got {parts.netloc!r})")
    return url


def build_date() -> dt.date:
    """The latest date a source can have been read: today, or the build's SOURCE_DATE_EPOCH if later."""
    today = dt.datetime.now(dt.UTC).date()
    stamp = os.environ.get("SOURCE_DATE_EPOCH", "")
    if stamp.isdigit():
        today = max(today, dt.datetime.fromtimestamp(int(stamp), dt.UTC).date())
    return today


def _not_future(day: dt.date) -> dt.date:
    if day > build_date():
        raise ValueError(f"read {day.isoformat()} is after the build date {build_date().isoformat()}")
    return day


class Source(_Strict):
    """A primary source: a vendor datasheet, a standard, a model's config.json."""

    url: Annotated[str, Field(max_length=2000), AfterValidator(_check_url)]
    title: Annotated[Text, Field(min_length=3)]
    read: Annotated[dt.date, AfterValidator(_not_future)]
    """The date the figure was read from the source; never after the build date."""
    note: Text | None = None


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
                             f"of a {type(self).__name__} (snippets/data.py, {type(self).__name__}.BOUNDS)")
        return self


Sources = Annotated[list[Source], Field(min_length=1)]


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


_DISPUTABLE: dict[str, dict[str, float]] = {
    "memory": BYTE_UNITS,
    "memory_bandwidth": BANDWIDTH_UNITS,
    "bf16": FLOPS_UNITS,
    "fp8": FLOPS_UNITS,
    "power": POWER_UNITS,
    "scale_up.bandwidth": BANDWIDTH_UNITS,
}
"""Accelerator quantities a `Disagreement` may name, with the unit table of each."""


class Disagreement(_Strict):
    """Sources give different figures for one quantity: the range they span and why the site uses its value."""

    field: Literal["memory", "memory_bandwidth", "bf16", "fp8", "power", "scale_up.bandwidth"]
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources give, in `unit`."""
    unit: str
    note: Annotated[str, Field(min_length=10)]
    """Which source says what, and why the site uses the value it records."""

    @model_validator(mode="after")
    def _ordered_known_unit(self) -> Disagreement:
        if self.range[0] > self.range[1]:
            raise ValueError("range must be [low, high]")
        if self.unit not in _DISPUTABLE[self.field]:
            expected = sorted(_DISPUTABLE[self.field])
            raise ValueError(f"unit {self.unit!r} is not a unit of {self.field}; expected one of {expected}")
        return self


class ScaleUp(_Strict):
    fabric: str
    """Id of an `nvlink` or `fabric` entry in interconnects.yaml."""
    links: PositiveInt | None = None
    """Links or ports this device drives. Omit for an NVLink GPU that uses all of its generation's
    `links_per_gpu`; required for a `fabric` entry that states a per-link rate."""
    bandwidth: BandwidthSpec
    """The vendor's per-device figure, as the datasheet states it."""
    joins: Annotated[int, Field(ge=2, strict=True)] | None = None
    """Devices the fabric joins directly where that is fewer than a node: an NVLink bridge joins 2 cards.
    None: every device of the node (an NVSwitch baseboard, a fully connected mesh, a torus)."""


OPTIONAL_ACCELERATOR_FIELDS = ("memory_reported", "scale_up", "host_link", "host_link_lanes", "power")
"""Fields an accelerator may leave out, each only with a reason in `not_stated`."""


class ReportedMemory(_Strict):
    """Device memory as the device itself reports it (nvidia-smi's total, amd-smi's VRAM total)."""

    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]
    tool: str
    """What reported it: "nvidia-smi", "amd-smi", "rocm-smi", or the vendor's documentation of it."""
    source: Source

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


class Accelerator(_Strict):
    name: str
    vendor: str
    memory: ByteSize
    """The vendor's label (80 GB), as the datasheet states it; not what an engine can allocate."""
    memory_reported: ReportedMemory | None = None
    """What the device reports (an H100's 81,559 MiB); the engine fits against it where given."""
    memory_type: str
    memory_bandwidth: BandwidthSpec
    """Always `shared`: one figure for reads and writes together."""
    tensor: dict[TensorFormat, Flops]
    """Peak tensor throughput of every format the chip's matrix units compute in, as stated. A format that
    is absent is not computed natively: weights stored in it are converted before the product (weight-only)."""
    tensor_notes: dict[TensorFormat, Annotated[str, Field(min_length=10)]] = Field(default_factory=dict)
    """Why a format is absent, where a reader would expect it: `{fp8: "FP8 arrived with Hopper"}`."""
    scale_up: ScaleUp | None = None
    host_link: str | None = None
    """Id of a `pcie` entry in interconnects.yaml."""
    host_link_lanes: PositiveInt | None = None
    host_link_other: Annotated[str, Field(min_length=3)] | None = None
    """A host link that is not PCIe, named for display ("NVLink-C2C to its Grace CPU"); `not_stated.host_link`
    still says why the PCIe table has no entry for it."""
    power: Power | None = None
    not_stated: dict[str, Annotated[str, Field(min_length=10)]] = Field(default_factory=dict)
    """Why an optional field is left out: `{power: "Google publishes no per-chip power"}`."""
    disagreements: list[Disagreement] = Field(default_factory=list)
    sources: Sources

    @model_validator(mode="after")
    def _complete_and_consistent(self) -> Accelerator:
        problems = []
        for key in self.not_stated:
            if key not in OPTIONAL_ACCELERATOR_FIELDS:
                problems.append(f"not_stated.{key}: not an optional field (optional: {', '.join(OPTIONAL_ACCELERATOR_FIELDS)})")
            elif getattr(self, key) is not None:
                problems.append(f"not_stated.{key}: the field is given, so it needs no reason")
        for key in OPTIONAL_ACCELERATOR_FIELDS:
            if getattr(self, key) is None and key not in self.not_stated:
                if key == "host_link_lanes" and self.host_link is None:
                    continue
                problems.append(f"{key}: missing; give it, or say why under not_stated.{key}")
        if "bf16" not in self.tensor:
            problems.append("tensor.bf16: every accelerator states its BF16 (or FP16) tensor throughput")
        for key in self.tensor_notes:
            if key in self.tensor:
                problems.append(f"tensor_notes.{key}: the format is given, so it needs no note")
        if self.memory_reported is not None and self.memory_reported.bytes > self.memory.bytes * 1.1:
            problems.append("memory_reported: more than the vendor's label plus 10 %: check the unit")
        if self.memory_bandwidth.direction is not Direction.SHARED:
            problems.append("memory_bandwidth: memory bandwidth is one shared figure: direction must be 'shared'")
        for d in self.disagreements:
            used = self.used_value(d.field)
            if used is None:
                problems.append(f"disagreements: {d.field} is not given, so there is nothing to disagree on")
                continue
            table = _DISPUTABLE[d.field]
            low, high = (v * table[d.unit] for v in d.range)
            if not low * (1 - 1e-9) <= used <= high * (1 + 1e-9):
                problems.append(
                    f"disagreements: the site's {d.field} ({used / table[d.unit]:g} {d.unit}) lies outside "
                    f"the recorded range {d.range[0]:g}-{d.range[1]:g} {d.unit}"
                )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def bf16(self) -> Flops:
        """The BF16 (or FP16) tensor figure, as stated."""
        return self.tensor["bf16"]

    @property
    def fp8(self) -> Flops | None:
        """The FP8 tensor figure, as stated; None on a chip without FP8 matrix units."""
        return self.tensor.get("fp8")

    def dense(self, fmt: str) -> Throughput | None:
        """Dense throughput in `fmt` (stated, or derived from a sparse figure); None if the chip lacks the format."""
        f = self.tensor.get(fmt)  # type: ignore[call-overload]
        return None if f is None else f.dense

    @property
    def capacity_bytes(self) -> float:
        """The memory an engine can budget: the reported capacity where recorded, else the vendor's label."""
        return self.memory.bytes if self.memory_reported is None else self.memory_reported.bytes

    def used_value(self, field: str) -> float | None:
        """The site's value of a disputable quantity in base units (bytes, bytes/s, FLOP/s, W); None if absent."""
        if field == "memory":
            return self.memory.bytes
        if field == "memory_bandwidth":
            return self.memory_bandwidth.bandwidth.bytes_per_s
        if field in ("bf16", "fp8"):
            f: Flops | None = getattr(self, field)
            return None if f is None else f.per_s
        if field == "power":
            return None if self.power is None else self.power.watts
        if field == "scale_up.bandwidth":
            return None if self.scale_up is None else self.scale_up.bandwidth.bandwidth.bytes_per_s
        raise KeyError(field)

    def disagreement(self, field: str) -> Disagreement | None:
        """The recorded disagreement on `field`, if sources differ on it."""
        return next((d for d in self.disagreements if d.field == field), None)


class NVLink(_Strict):
    kind: Literal["nvlink"]
    name: str
    generation: PositiveInt
    links_per_gpu: PositiveInt
    per_link: BandwidthSpec
    sources: Sources


class Fabric(_Strict):
    """A scale-up fabric other than NVLink: AMD Infinity Fabric, Google ICI, Gaudi's on-die RoCE ports."""

    kind: Literal["fabric"]
    name: str
    family: str
    per_link: BandwidthSpec | None = None
    """One link's rate where the vendor states it; None where only a per-device total is published."""
    topology: str | None = None
    sources: Sources


class PCIe(_Strict):
    kind: Literal["pcie"]
    name: str
    generation: PositiveInt
    transfer_rate: TransferRate
    """Per lane, per direction."""
    encoding: Encoding
    """Gen3-5: 128b/130b line code. Gen6 (FLIT mode): 242 of every 256 bytes of a FLIT are TLP and DLLP
    bytes, the rest CRC and FEC, recorded as 242/256."""
    signalling: Literal["NRZ", "PAM4"] = "NRZ"
    """NRZ carries one bit per symbol; PAM4 two, so 64 GT/s runs at 32 GBaud. Transfer rate counts bits."""
    flit_mode: bool = False
    encoding_note: str | None = None
    """What the derived figure still includes (packet headers, DLLP bytes)."""
    sources: Sources


class NVSwitch(_Strict):
    kind: Literal["nvswitch"]
    name: str
    generation: PositiveInt
    fabric: str
    """Id of the `nvlink` generation it switches."""
    sources: Sources


class Network(_Strict):
    kind: Literal["network"]
    name: str
    family: str
    port: BandwidthSpec
    """One port (one NIC link) of the fabric."""
    latency: Duration | None = None
    """Indicative latency, labelled as such where shown; `latency_note` says what it covers."""
    latency_note: str | None = None
    sources: Sources


class Node(_Strict):
    kind: Literal["node"]
    name: str
    accelerator: str
    gpus: PositiveInt
    """Accelerators in one node as it is built and rented: a server's 8 GPUs, or the 72 of a GB200 NVL72 rack."""
    domain_gpus: PositiveInt | None = None
    """Accelerators one scale-up fabric joins, where it reaches beyond the node (a TPU slice); None: the node."""
    scale_up: Literal["nvlink", "fabric", "pcie"] = "nvlink"
    """What tensor-parallel traffic crosses inside the domain: NVLink, another scale-up fabric, or only PCIe."""
    switch: str | None = None
    """Id of the `nvswitch` entry that joins its GPUs; None for a switchless mesh or torus."""
    nic: str | None = None
    """Id of the `network` entry of its compute NICs; None where the platform ships without them."""
    nics_per_gpu: PositiveFloat | None = None
    switch_chips: PositiveInt | None = None
    """NVSwitch chips in the node (HGX H100: 4); None for a switchless node."""
    switch_trays: PositiveInt | None = None
    """Switch trays that hold the chips, where the node is a rack (GB200 NVL72: 9 trays of 2 chips)."""
    note: Annotated[str, Field(min_length=10)] | None = None
    """What a reader should know about the node that the fields do not say (a bridge joins only pairs)."""
    sources: Sources

    @model_validator(mode="after")
    def _nic_and_count(self) -> Node:
        if (self.nic is None) != (self.nics_per_gpu is None):
            raise ValueError("nic and nics_per_gpu: give both or neither")
        if self.domain_gpus is not None and self.domain_gpus < self.gpus:
            raise ValueError("domain_gpus: a scale-up domain holds at least the node's own accelerators")
        if (self.switch is None) != (self.switch_chips is None):
            raise ValueError("switch and switch_chips: give both or neither")
        if self.switch_trays is not None and self.switch_chips is not None and self.switch_chips % self.switch_trays:
            raise ValueError("switch_trays: the chips must divide evenly into the trays")
        if self.scale_up == "pcie" and self.switch is not None:
            raise ValueError("scale_up: a node whose GPUs meet only over PCIe has no NVSwitch")
        return self

    @property
    def domain(self) -> int:
        """Accelerators in the node's scale-up domain."""
        return self.gpus if self.domain_gpus is None else self.domain_gpus


Interconnect = Annotated[NVLink | PCIe | NVSwitch | Network | Node | Fabric, Field(discriminator="kind")]


class MLA(_Strict):
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values cached as one compressed latent."""

    q_lora_rank: PositiveInt | None = None
    """Rank of the query down-projection; None when queries are projected directly."""
    kv_lora_rank: PositiveInt
    """Width of the cached key-value latent."""
    qk_nope_head_dim: PositiveInt
    qk_rope_head_dim: PositiveInt
    """Width of the rotary key part, shared by all heads and cached beside the latent."""
    v_head_dim: PositiveInt


class MoE(_Strict):
    """Mixture of experts: which layers route, to how many experts, of what size."""

    experts: PositiveInt
    """Routed experts per MoE layer (n_routed_experts / num_local_experts)."""
    active_experts: PositiveInt
    """Routed experts each token uses (num_experts_per_tok)."""
    shared_experts: Annotated[int, Field(ge=0, strict=True)] = 0
    """Experts every token uses (n_shared_experts)."""
    expert_ffn_size: PositiveInt
    """Intermediate size of one expert (moe_intermediate_size; Mixtral: intermediate_size)."""
    dense_layers: Annotated[int, Field(ge=0, strict=True)] = 0
    """Leading layers with a dense MLP of `ffn_size` instead (first_k_dense_replace)."""
    router_bias: bool = False
    """A per-expert bias in the router (DeepSeek-V3's e_score_correction_bias, gpt-oss's router bias)."""
    layer_step: PositiveInt = 1
    """Every `layer_step`-th layer routes, the others have a dense MLP of `ffn_size` (Llama 4's
    interleave_moe_layer_step: 2 in Maverick, layers 1, 3, 5... route; 1 means every layer)."""

    @model_validator(mode="after")
    def _active_within(self) -> MoE:
        if self.active_experts > self.experts:
            raise ValueError("active_experts cannot exceed experts")
        return self


class Architecture(_Strict):
    """Fields of the model's config.json, renamed plainly. Optional fields default to a Llama-style model."""

    layers: PositiveInt
    hidden_size: PositiveInt
    attention_heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    ffn_size: PositiveInt
    """Dense MLP intermediate size (for an MoE model: of its dense layers)."""
    vocab_size: PositiveInt
    tied_embeddings: bool
    mlp: Literal["gated", "plain"] = "gated"
    """gated: SwiGLU, three matrices (gate, up, down); plain: two (up, down), as GPT-3's GELU MLP."""
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    """RMSNorm has a scale per channel; LayerNorm a scale and a bias."""
    qkv_bias: bool = False
    """Biases on the query, key and value projections only (Qwen2.5)."""
    linear_bias: bool = False
    """Biases on every linear layer (GPT-3)."""
    position_embeddings: Literal["rope", "learned"] = "rope"
    context_length: PositiveInt | None = None
    """max_position_embeddings; required with learned position embeddings, which it sizes."""
    qk_norm: bool = False
    """An RMSNorm over head_dim on queries and on keys in every layer (Qwen3's q_norm, k_norm): 2 x head_dim
    scales a layer. Llama 4's use_qk_norm is a weightless L2 norm and is not this."""
    attention_sinks: bool = False
    """A learned sink logit per attention head in every layer (gpt-oss's sinks)."""
    sliding_window: PositiveInt | None = None
    """Tokens a sliding-window layer attends to, and so caches (gpt-oss: 128)."""
    sliding_window_layers: Literal["alternate", "all"] | None = None
    """Which layers use the window: "alternate" (layers 0, 2, 4... as gpt-oss's layer_types begins with
    sliding_attention), "all"; None with no window."""
    mla: MLA | None = None
    moe: MoE | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Architecture:
        if self.position_embeddings == "learned" and self.context_length is None:
            raise ValueError("context_length: required with learned position embeddings")
        if self.attention_heads % self.kv_heads:
            raise ValueError("kv_heads must divide attention_heads")
        if self.moe is not None and self.moe.dense_layers >= self.layers:
            raise ValueError("moe.dense_layers must be fewer than layers")
        if self.moe is not None and self.moe.layer_step > self.layers:
            raise ValueError("moe.layer_step must not exceed layers")
        if (self.sliding_window is None) != (self.sliding_window_layers is None):
            raise ValueError("sliding_window and sliding_window_layers: give both or neither")
        if self.sliding_window is not None and self.mla is not None:
            raise ValueError("sliding_window: not modelled with multi-head latent attention")
        return self


class Model(_Strict):
    name: str
    nominal_params: Count
    """The size in the model's name (405B), or its headline total where the name has none; the site's
    worked figures use it."""
    stated_params: Count
    """The total parameter count the model card or paper states; tests recompute it from `architecture`."""
    stated_active_params: Count | None = None
    """Parameters used per token, as stated; MoE models only."""
    stated_active_excludes_embedding: bool = False
    """The stated active count leaves out the token-embedding lookup (vocab x hidden), as OpenAI's gpt-oss
    model card does; tests then compare it with the computed active count less the embedding."""
    checkpoint_precision: str | None = None
    """Id in precisions.yaml of the precision the developer's main checkpoint stores its weights in
    (DeepSeek-V3: fp8; gpt-oss: mxfp4, for its expert weights)."""
    other_checkpoint_precisions: list[str] = Field(default_factory=list)
    """Precisions of further checkpoints the developer released (Llama 4 Maverick: fp8 beside bf16)."""
    checkpoint_note: Text | None = None
    """Which tensors the checkpoint keeps in another precision, with the source in `sources`."""
    architecture: Architecture
    sources: Sources

    @model_validator(mode="after")
    def _active_only_for_moe(self) -> Model:
        if (self.stated_active_params is None) != (self.architecture.moe is None):
            raise ValueError("stated_active_params: give it for a mixture-of-experts model, and only then")
        if self.stated_active_excludes_embedding and self.stated_active_params is None:
            raise ValueError("stated_active_excludes_embedding: only with stated_active_params")
        if self.other_checkpoint_precisions and self.checkpoint_precision is None:
            raise ValueError("other_checkpoint_precisions: give checkpoint_precision first")
        return self


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
    tensor_format: TensorFormat
    """The matrix-unit format a chip computes in when it stores weights in this precision and supports it
    natively (FP8 weights: fp8; INT4 with group scales: int4). A chip without it converts the weights to BF16
    before each product: the speed of BF16, the memory of this precision (weight-only)."""
    keeps_16bit: list[Literal["embeddings", "lm_head"]] = Field(default_factory=list)
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


class Assumption(_Strict):
    name: str
    value: AssumedValue
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the range the sources give, in the unit of `value`."""
    rationale: str
    sources: Sources

    @field_validator("range")
    @classmethod
    def _ordered(cls, v: tuple[float, float]) -> tuple[float, float]:
        if v[0] > v[1]:
            raise ValueError("range must be [low, high]")
        return v


class HourlyPrice(_Bounded):
    """An hourly price per GPU: a cent to a thousand dollars."""

    BOUNDS = (0.01, 1000.0)
    BASE = "USD/GPU-hour"

    def _base_value(self) -> float:
        return self.value

    value: PositiveFloat
    unit: Literal["USD/GPU-hour"]


class Price(_Strict):
    """An indicative on-demand list price of one accelerator at one provider, from its public price page."""

    accelerator: str
    """Id of the accelerator in accelerators.yaml."""
    provider: str
    offering: str
    """What the provider sells at that price: "8x H100 SXM instance, on demand"."""
    price: HourlyPrice
    gpus_per_unit: PositiveInt = 1
    """GPUs in the smallest unit the offering rents (8 for an 8-GPU instance sold only whole)."""
    site_uses: bool = False
    """True on exactly one price per priced accelerator: the one the sizing grid's cost uses."""
    sources: Sources


class MemoryPolicy(_Strict):
    """How a serving engine budgets each GPU's memory: the pool it may take and what the pool must hold."""

    kind: Literal["memory"]
    name: str
    engine: str
    utilization: Annotated[float, Field(gt=0, le=1)]
    """Fraction of the device's memory the engine's pool may take (vLLM's --gpu-memory-utilization)."""
    activation_peak: ByteSize
    """Per GPU, inside the pool: the activation peak of the engine's profiling run (a full batch of tokens)."""
    activation_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the activation peaks the sources show, in `activation_peak`'s unit."""
    non_torch: ByteSize
    """Per GPU, inside the pool: memory outside PyTorch's allocator (CUDA context, NCCL and cuBLAS workspaces)."""
    non_torch_range: tuple[PositiveFloat, PositiveFloat]
    kv_block_tokens: PositiveInt
    """Tokens per block of the paged KV cache: a sequence's cache is allocated in whole blocks."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


class LayoutPolicy(_Strict):
    """A named choice among the layouts an engine accepts: what the site would rent, not what engines require."""

    kind: Literal["layout"]
    name: str
    tp_limit: Literal["node", "domain"]
    """Tensor parallelism stays inside the node, or inside the scale-up domain where that is larger (a TPU slice)."""
    across_nodes: Literal["pp", "any"]
    """pp: a layout larger than a node keeps TP at the node's width and adds pipeline stages (vLLM's guidance);
    any: every TP x PP split within the TP limit is considered."""
    prefer: Literal["tp", "pp"]
    """Between two layouts of the same GPU count: the larger TP degree first (tp), or the larger PP (pp)."""
    expert_parallel: bool
    """Mixture-of-experts layers split whole experts across the GPUs (EP = TP x DP) instead of slicing each."""
    whole_nodes: bool
    """A layout that spans nodes takes every GPU of each (a partial node cannot be rented or networked alone)."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


class TimeModel(_Strict):
    """The engine's time model: achieved fractions of peak and per-hop latencies, each traced to data or a fit.

    The fractions of HBM and link bandwidth and the hop latencies name entries of efficiencies.yaml and
    latencies.yaml; the compute fraction and the per-step overhead are the two factors fitted on the
    calibration measurements, each inside a stated range."""

    kind: Literal["time"]
    name: str
    hbm_efficiency: str
    """Id of an efficiencies.yaml entry (resource hbm): achieved ÷ peak is the share of HBM bandwidth a step gets."""
    link_efficiency: str
    """Id of an efficiencies.yaml entry (resource nvlink): the share of scale-up bandwidth a collective gets."""
    hop_latency_nvlink: str
    """Id of a latencies.yaml entry (path nvlink): one GPU-to-GPU step of a collective inside an NVLink domain."""
    hop_latency_pcie: str
    """Id of a latencies.yaml entry (path pcie): the same step between PCIe-only cards."""
    hop_latency_network: Duration
    """One step of a collective between nodes (adapter, switch and NCCL's proxy), indicative."""
    hop_latency_network_range: tuple[PositiveFloat, PositiveFloat]
    compute_fraction: Annotated[float, Field(gt=0, le=1)]
    """Share of the dense tensor peak the matrix products reach (fitted on the calibration rows' time to first token)."""
    compute_fraction_range: tuple[PositiveFloat, PositiveFloat]
    layer_overhead: Duration
    """Fixed time per layer of a forward pass: the launch, ramp and tail of its kernels, which no roofline counts
    (fitted on the calibration rows' inter-token latency)."""
    layer_overhead_range: tuple[PositiveFloat, PositiveFloat]
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources

    @model_validator(mode="after")
    def _within_ranges(self) -> TimeModel:
        for name, value, rng in (("compute_fraction", self.compute_fraction, self.compute_fraction_range),
                                 ("layer_overhead", self.layer_overhead.value, self.layer_overhead_range),
                                 ("hop_latency_network", self.hop_latency_network.value, self.hop_latency_network_range)):
            if not rng[0] <= value <= rng[1]:
                raise ValueError(f"{name}: {value:g} lies outside its range {rng[0]:g}-{rng[1]:g}")
        return self


Policy = Annotated[MemoryPolicy | LayoutPolicy | TimeModel, Field(discriminator="kind")]


class Scenario(_Strict):
    """What a deployment is sized for: where, under which policies, and for how many sequences of what length."""

    name: str
    node: str
    """Id of the `node` entry whose accelerator and size the page uses by default."""
    memory_policy: str
    layout_policy: str
    time_model: str
    """Id of the `time` entry in policies.yaml the scenario's times use."""
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    concurrency: PositiveInt
    """Sequences served at once, each holding input + output tokens of KV cache at its end."""
    kv_precision: str
    """Id of the precision the KV cache is stored in (BF16 unless the engine is told --kv-cache-dtype fp8)."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class DeployedLayout(_Strict):
    tp: PositiveInt
    pp: PositiveInt = 1
    ep: PositiveInt = 1
    dp: PositiveInt = 1


class DocumentedDeployment(_Strict):
    """A deployment an engine's docs or a vendor publishes: the field the engine is checked against."""

    model: str
    precision: str
    accelerator: str
    gpus: PositiveInt
    nodes: PositiveInt
    layout: DeployedLayout
    engine: str
    context_tokens: PositiveInt | None = None
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _layout_is_the_gpus(self) -> DocumentedDeployment:
        lay = self.layout
        if lay.tp * lay.pp * lay.dp != self.gpus:
            raise ValueError(f"layout: tp x pp x dp = {lay.tp * lay.pp * lay.dp}, gpus is {self.gpus}")
        return self


class Latency(_Strict):
    """An indicative latency of one path or operation, as a published measurement or datasheet gives it.

    Never a guarantee: the figure depends on the software, the message size and the system, so pages label it
    indicative and show the range the sources span.
    """

    name: str
    path: Literal["nvlink", "pcie", "network", "collective"]
    """What the time crosses: GPU to GPU over NVLink, GPU to GPU over PCIe and the host, the scale-out
    network, or a whole collective (launch and synchronisation included)."""
    what: Annotated[str, Field(min_length=10)]
    """What exactly is timed: "one-way small write between two GPUs, p2pBandwidthLatencyTest"."""
    accelerator: str | None = None
    """Id of the accelerator measured, where the figure belongs to one."""
    value: Duration
    """The indicative figure the site uses."""
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `value`'s unit."""
    basis: Literal["measured", "datasheet", "derived"]
    """measured: read from a published run; datasheet: a vendor's stated figure; derived: computed from a
    published run (a time from a bus bandwidth and a message size), the note says how."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _value_in_range(self) -> Latency:
        low, high = self.range
        if low > high:
            raise ValueError("range must be [low, high]")
        if not low <= self.value.value <= high:
            raise ValueError(f"value: {self.value.value:g} {self.value.unit} lies outside the range {low:g}-{high:g}")
        return self


class Efficiency(_Strict):
    """A bandwidth achieved in a published measurement, as a fraction of the datasheet figure it is measured against.

    These become the engine's efficiency factors: the share of a peak a real transfer reaches.
    """

    name: str
    resource: Literal["nvlink", "pcie_h2d", "hbm", "network"]
    accelerator: str
    """Id of the accelerator measured."""
    achieved: BandwidthSpec
    """What the run reached, on the same basis as `peak` (the loader refuses two bases)."""
    achieved_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `achieved`'s unit."""
    peak: BandwidthSpec
    """The datasheet (or derived link) figure the run is compared with."""
    method: Annotated[str, Field(min_length=5)]
    """The tool and test: "nvbandwidth host_to_device_memcpy_ce", "BabelStream Triad"."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _consistent(self) -> Efficiency:
        low, high = self.achieved_range
        if low > high:
            raise ValueError("achieved_range must be [low, high]")
        if not low <= self.achieved.value <= high:
            raise ValueError("achieved: the value lies outside achieved_range")
        if self.achieved.direction is not self.peak.direction:
            raise ValueError(
                f"achieved and peak: quoted {self.achieved.direction.label} and {self.peak.direction.label}; "
                "compare on one basis")
        if self.fraction > 1:
            raise ValueError(f"achieved exceeds peak ({self.fraction:.3f}): check units and basis")
        return self

    @property
    def fraction(self) -> float:
        """Achieved over peak; both on one basis (Bandwidth.ratio refuses two)."""
        return self.achieved.bandwidth.ratio(self.peak.bandwidth)

    @property
    def fraction_range(self) -> tuple[float, float]:
        per = BANDWIDTH_UNITS[self.achieved.unit]
        peak = self.peak.bandwidth.bytes_per_s
        return self.achieved_range[0] * per / peak, self.achieved_range[1] * per / peak


class Measurement(_Strict):
    """A published serving measurement: what ran, how it was loaded, and what it measured.

    calibration rows are the only ones the time model's fitted factors may be fitted on (NVIDIA's NIM
    benchmark runs); test rows are compared and reported, never fitted."""

    role: Literal["calibration", "test"]
    engine: str
    engine_version: str | None = None
    model: str
    checkpoint: str | None = None
    """The released checkpoint where it is not the model entry itself (Llama 3.3 70B on Llama 3.1 70B's architecture)."""
    precision: str
    kv_precision: str
    """Id of the precision of its KV cache, as the source states it or as the note argues it."""
    accelerator: str
    layout: DeployedLayout
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    concurrency: PositiveInt | None
    """Requests kept in flight; None for an offline run that queues every request at once (maximum throughput)."""
    ttft_ms: PositiveFloat | None = None
    itl_ms: PositiveFloat | None = None
    """Inter-token latency (time per output token after the first)."""
    output_tokens_per_s: PositiveFloat | None = None
    """Output tokens per second of the whole run, all requests together."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _measures_something(self) -> Measurement:
        if self.ttft_ms is None and self.itl_ms is None and self.output_tokens_per_s is None:
            raise ValueError("a measurement needs at least one of ttft_ms, itl_ms, output_tokens_per_s")
        return self


SCHEMAS: dict[str, Any] = {
    "accelerators": Accelerator,
    "interconnects": Interconnect,
    "models": Model,
    "precisions": Precision,
    "assumptions": Assumption,
    "prices": Price,
    "policies": Policy,
    "scenarios": Scenario,
    "deployments": DocumentedDeployment,
    "latencies": Latency,
    "efficiencies": Efficiency,
    "measurements": Measurement,
}

T = TypeVar("T")


# --------------------------------------------------------------------------- catalog

@dataclass(frozen=True)
class Catalog:
    """All of `data/`, validated. Look entries up by id with `get`, or by kind with the `of_kind` helpers."""

    accelerators: Mapping[str, Accelerator]
    interconnects: Mapping[str, NVLink | PCIe | NVSwitch | Network | Node | Fabric]
    models: Mapping[str, Model]
    precisions: Mapping[str, Precision]
    assumptions: Mapping[str, Assumption]
    prices: Mapping[str, Price]
    policies: Mapping[str, MemoryPolicy | LayoutPolicy | TimeModel]
    scenarios: Mapping[str, Scenario]
    deployments: Mapping[str, DocumentedDeployment]
    latencies: Mapping[str, Latency]
    efficiencies: Mapping[str, Efficiency]
    measurements: Mapping[str, Measurement]
    directory: Path

    def interconnect(self, entry_id: str, kind: type[T]) -> T:
        entry = self.interconnects[entry_id]
        if not isinstance(entry, kind):
            raise TypeError(f"interconnect {entry_id!r} is a {type(entry).__name__}, not a {kind.__name__}")
        return entry

    def of_kind(self, kind: type[T]) -> dict[str, T]:
        return {k: v for k, v in self.interconnects.items() if isinstance(v, kind)}


def required(value: T | None, what: str) -> T:
    """`value`, or a clear error naming what the data lacks (for fields that are optional in the schema)."""
    if value is None:
        raise ValueError(f"data lacks {what}")
    return value


# libyaml's parser where PyYAML was built with it (its wheels are), else the pure-Python one:
# same documents, same errors with line and column, about seven times faster on data/.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """A YAML loader that reads only the scalar forms the schema means, and refuses duplicate keys.

    PyYAML's SafeLoader follows YAML 1.1: `yes`/`no`/`on`/`off` are booleans, `010` is octal 8,
    `12:30` is the sexagesimal 750, `1e2` is a string. This one resolves plain scalars by the YAML
    1.2 core schema, narrowed: `true`/`false`, `null`/`~`, decimal integers without leading zeros,
    decimal floats (`1.5`, `1e2`, `3.35E+1`) and dates written `YYYY-MM-DD`. Anything else is a
    string, which a number, bool or date field then refuses (see `_Strict`), naming the field.
    """


_UniqueKeyLoader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    ("tag:yaml.org,2002:float", r"^[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$", "-+0123456789"),
    ("tag:yaml.org,2002:timestamp", r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "0123456789"),
):
    _UniqueKeyLoader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))
# "" (an empty value) is null too
_UniqueKeyLoader.yaml_implicit_resolvers.setdefault("", []).append(
    ("tag:yaml.org,2002:null", re.compile(r"^$")))


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep)
    return mapping


def _construct_bool(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


def _construct_int(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> int:
    return int(str(loader.construct_scalar(node)))


def _construct_float(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> float:
    return float(str(loader.construct_scalar(node)))


def _construct_date(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> dt.date:
    text = str(loader.construct_scalar(node))
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a date: {exc}", node.start_mark) from None


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_date)


def _marks(node: yaml.Node | None, path: tuple[Any, ...] = (), out: dict[tuple[Any, ...], tuple[int, int]] | None = None,
           ) -> dict[tuple[Any, ...], tuple[int, int]]:
    """(line, column), 1-based, of every key and list item in a composed YAML document, by path."""
    out = {} if out is None else out
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _marks(value_node, (*path, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out[(*path, i)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            _marks(item, (*path, i), out)
    return out


def _where(marks: dict[tuple[Any, ...], tuple[int, int]], path: tuple[Any, ...]) -> tuple[int, int] | None:
    """The mark of `path`, or of its longest prefix the document has (a missing field: its entry)."""
    for n in range(len(path), 0, -1):
        key = tuple(str(p) if not isinstance(p, int) else p for p in path[:n])
        if key in marks:
            return marks[key]
    return None


def _field_path(loc: tuple[int | str, ...], schema_is_union: bool) -> str:
    parts = list(loc)
    if schema_is_union and parts:
        parts = parts[1:]  # drop the discriminator tag pydantic puts first
    return ".".join(str(p) for p in parts) or "(entry)"


def _read_yaml(path: Path, shown: str, problems: list[str]) -> tuple[Any, dict[tuple[Any, ...], tuple[int, int]]]:
    """Parse one file: its document and the position of every key; a syntax error is reported at file:line:column."""
    loader = _UniqueKeyLoader(path.read_text(encoding="utf-8"))
    try:
        node = loader.get_single_node()
        raw = None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" ({shown}:{mark.line + 1}:{mark.column + 1})" if mark is not None else ""
        problems.append(f"{shown}: not valid YAML: {exc.problem or exc.context}{at}")
        return None, {}
    except yaml.YAMLError as exc:
        problems.append(f"{shown}: not valid YAML: {exc}")
        return None, {}
    finally:
        loader.dispose()
    return raw, _marks(node)


def _load_file(directory: Path, name: str, problems: list[str]) -> dict[str, Any]:
    path = directory / f"{name}.yaml"
    shown = f"data/{name}.yaml"
    if not path.is_file():
        problems.append(f"{shown}: file missing")
        return {}
    raw, marks = _read_yaml(path, shown, problems)
    if raw is None and not marks and problems and problems[-1].startswith(shown):
        return {}
    if not isinstance(raw, dict) or not raw:
        problems.append(f"{shown}: expected a mapping of entry ids to entries")
        return {}
    schema = SCHEMAS[name]
    adapter: TypeAdapter[Any] = TypeAdapter(schema)
    is_union = get_origin(schema) is Annotated and get_origin(get_args(schema)[0]) in (Union, types.UnionType)
    entries: dict[str, Any] = {}
    for entry_id, body in raw.items():
        if not isinstance(entry_id, str):
            problems.append(f"{shown}: entry {entry_id!r}: entry ids must be strings")
            continue
        try:
            check_text(entry_id)
            entries[entry_id] = adapter.validate_python(body)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc = tuple(err["loc"])
                field = _field_path(loc, is_union)
                got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
                pos = _where(marks, (entry_id, *(loc[1:] if is_union else loc)))
                at = f" ({shown}:{pos[0]}:{pos[1]})" if pos else ""
                problems.append(f"{shown}: entry '{entry_id}': field '{field}': {err['msg']}{got}{at}")
        except ValueError as exc:
            pos = _where(marks, (entry_id,))
            at = f" ({shown}:{pos[0]}:{pos[1]})" if pos else ""
            problems.append(f"{shown}: entry {entry_id!r}: entry id: {exc}{at}")
    return entries


def _check_references(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    ics = cat["interconnects"]

    def ref(file: str, entry: str, field: str, target: str, *kinds: type) -> None:
        found = ics.get(target)
        if found is None:
            problems.append(f"data/{file}.yaml: entry '{entry}': field '{field}': unknown interconnect {target!r}")
        elif not isinstance(found, kinds):
            expected = " or ".join(f"a {k.__name__.lower()}" for k in kinds)
            problems.append(
                f"data/{file}.yaml: entry '{entry}': field '{field}': {target!r} is a "
                f"{found.kind}, expected {expected}"
            )

    for acc_id, acc in cat["accelerators"].items():
        if acc.host_link is not None:
            ref("accelerators", acc_id, "host_link", acc.host_link, PCIe)
        if acc.scale_up is not None:
            ref("accelerators", acc_id, "scale_up.fabric", acc.scale_up.fabric, NVLink, Fabric)
            link = ics.get(acc.scale_up.fabric)
            if isinstance(link, NVLink | Fabric) and link.per_link is not None:
                links = acc.scale_up.links or (link.links_per_gpu if isinstance(link, NVLink) else None)
                if links is None:
                    problems.append(
                        f"data/accelerators.yaml: entry '{acc_id}': field 'scale_up.links': required, "
                        f"{acc.scale_up.fabric} states a per-link rate"
                    )
                    continue
                from snippets.bandwidth import nvlink_per_gpu  # local: bandwidth imports this module

                derived = nvlink_per_gpu(links, link.per_link.bandwidth)
                stated = acc.scale_up.bandwidth.bandwidth
                one, two = derived.one_way().bytes_per_s, stated.one_way().bytes_per_s
                if abs(one - two) > 1e-6 * two:
                    problems.append(
                        f"data/accelerators.yaml: entry '{acc_id}': field 'scale_up.bandwidth': datasheet figure "
                        f"({two / 1e9:g} GB/s per direction) disagrees with {acc.scale_up.fabric}'s links x "
                        f"per-link rate ({links} x {link.per_link.bandwidth.one_way().bytes_per_s / 1e9:g} = "
                        f"{one / 1e9:g} GB/s per direction)"
                    )
    for ic_id, ic in ics.items():
        if isinstance(ic, NVSwitch):
            ref("interconnects", ic_id, "fabric", ic.fabric, NVLink)
        if isinstance(ic, Node):
            if ic.accelerator not in cat["accelerators"]:
                problems.append(
                    f"data/interconnects.yaml: entry '{ic_id}': field 'accelerator': unknown accelerator {ic.accelerator!r}"
                )
            if ic.switch is not None:
                ref("interconnects", ic_id, "switch", ic.switch, NVSwitch)
            if ic.nic is not None:
                ref("interconnects", ic_id, "nic", ic.nic, Network)
    used: dict[str, list[str]] = {}
    for price_id, price in cat.get("prices", {}).items():
        if price.accelerator not in cat["accelerators"]:
            problems.append(
                f"data/prices.yaml: entry '{price_id}': field 'accelerator': unknown accelerator {price.accelerator!r}"
            )
        used.setdefault(price.accelerator, [])
        if price.site_uses:
            used[price.accelerator].append(price_id)
    pols = cat.get("policies", {})
    for sc_id, sc in cat.get("scenarios", {}).items():
        where = f"data/scenarios.yaml: entry '{sc_id}'"
        if not isinstance(ics.get(sc.node), Node):
            problems.append(f"{where}: field 'node': {sc.node!r} is not a node in interconnects.yaml")
        if not isinstance(pols.get(sc.memory_policy), MemoryPolicy):
            problems.append(f"{where}: field 'memory_policy': {sc.memory_policy!r} is not a memory policy")
        if not isinstance(pols.get(sc.layout_policy), LayoutPolicy):
            problems.append(f"{where}: field 'layout_policy': {sc.layout_policy!r} is not a layout policy")
        if not isinstance(pols.get(sc.time_model), TimeModel):
            problems.append(f"{where}: field 'time_model': {sc.time_model!r} is not a time model")
        if sc.kv_precision not in cat["precisions"]:
            problems.append(f"{where}: field 'kv_precision': unknown precision {sc.kv_precision!r}")
    lats, effs = cat.get("latencies", {}), cat.get("efficiencies", {})
    for tm_id, tm in pols.items():
        if not isinstance(tm, TimeModel):
            continue
        where = f"data/policies.yaml: entry '{tm_id}'"
        for field, entries, kind, attr in (("hbm_efficiency", effs, "hbm", "resource"),
                                           ("link_efficiency", effs, "nvlink", "resource"),
                                           ("hop_latency_nvlink", lats, "nvlink", "path"),
                                           ("hop_latency_pcie", lats, "pcie", "path")):
            target = entries.get(getattr(tm, field))
            if target is None or getattr(target, attr) != kind:
                problems.append(f"{where}: field '{field}': {getattr(tm, field)!r} is not a {kind} entry")
    for m_id, meas in cat.get("measurements", {}).items():
        where = f"data/measurements.yaml: entry '{m_id}'"
        for field, table in (("model", "models"), ("precision", "precisions"), ("kv_precision", "precisions"),
                             ("accelerator", "accelerators")):
            if getattr(meas, field) not in cat[table]:
                problems.append(f"{where}: field '{field}': unknown {field} {getattr(meas, field)!r}")
    for model_id, model in cat.get("models", {}).items():
        for field, ids in (("checkpoint_precision", [model.checkpoint_precision]),
                           ("other_checkpoint_precisions", model.other_checkpoint_precisions)):
            for pid in ids:
                if pid is not None and pid not in cat["precisions"]:
                    problems.append(f"data/models.yaml: entry '{model_id}': field '{field}': unknown precision {pid!r}")
    for dep_id, dep in cat.get("deployments", {}).items():
        where = f"data/deployments.yaml: entry '{dep_id}'"
        for field, table in (("model", "models"), ("precision", "precisions"), ("accelerator", "accelerators")):
            if getattr(dep, field) not in cat[table]:
                problems.append(f"{where}: field '{field}': unknown {field} {getattr(dep, field)!r}")
    for acc_id, chosen in used.items():
        if len(chosen) != 1:
            problems.append(
                f"data/prices.yaml: accelerator '{acc_id}': field 'site_uses': exactly one price must be marked, "
                f"found {len(chosen)} ({', '.join(chosen) or 'none'})"
            )


def _fingerprint(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """mtime and size of every YAML file in `directory` (known or not): any change reloads."""
    out = []
    names = set(FILES) | {p.name for p in directory.glob("*.y*ml")}
    for name in sorted(names):
        p = directory / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
        try:
            st = p.stat()
            out.append((name, st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            out.append((name, -1, -1))
    return tuple(out)


def _unknown_files(directory: Path) -> list[str]:
    """A file in data/ that no schema reads would be silently ignored: refuse it instead."""
    known = {f"{name}.yaml" for name in FILES}
    return [f"data/{p.name}: unknown data file: no schema reads it (known: {', '.join(sorted(known))}); "
            "add its schema to SCHEMAS and FILES in snippets/data.py, or remove it"
            for p in sorted(directory.iterdir()) if p.suffix in (".yaml", ".yml") and p.name not in known]


_cache: dict[Path, tuple[tuple[tuple[str, int, int], ...], Catalog]] = {}


def default_dir() -> Path:
    """`$SERVING_DATA_DIR` if set, else the repository's `data/`."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "data"


def load(directory: Path | str | None = None) -> Catalog:
    """Load and validate all of `data/`. Re-reads the files whenever one of them changes."""
    root = Path(directory) if directory is not None else default_dir()
    root = root.resolve()
    stamp = _fingerprint(root)
    hit = _cache.get(root)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    problems: list[str] = _unknown_files(root)
    tables = {name: _load_file(root, name, problems) for name in FILES}
    if not problems:
        _check_references(tables, problems)
    if problems:
        raise DataError(problems)
    # read-only views: one page's block cannot remove or replace an entry for the pages after it
    cat = Catalog(directory=root, **{name: MappingProxyType(dict(table)) for name, table in tables.items()})
    _cache[root] = (stamp, cat)
    return cat


def iter_sources(cat: Catalog) -> Iterator[tuple[str, str, Source]]:
    """(file, entry id, source) for every source in the catalog."""
    for name in FILES:
        for entry_id, entry in getattr(cat, name).items():
            for src in entry.sources:
                yield name, entry_id, src
