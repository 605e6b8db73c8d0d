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
)

DATA_DIR_ENV = "SERVING_DATA_DIR"
"""Environment variable naming the data directory; the MkDocs hook sets it to `<site root>/data`."""

FILES = ("accelerators", "interconnects", "models", "precisions", "assumptions", "prices")


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


class Flops(_Bounded):
    """Peak tensor throughput of one precision, exactly as the vendor states it: 1 TFLOP/s to 1 EFLOP/s."""

    BOUNDS = (1e12, 1e18)
    BASE = "FLOP/s"

    def _base_value(self) -> float:
        return self.per_s

    value: PositiveFloat
    unit: _unit_field(FLOPS_UNITS)  # type: ignore[valid-type]
    sparsity: Literal["dense", "sparse"]
    """dense: stated without structured sparsity; sparse: the vendor states only its 2:4-sparsity figure.
    Nothing converts one into the other: a sparse figure is shown as sparse."""

    @property
    def per_s(self) -> float:
        return self.value * FLOPS_UNITS[self.unit]


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


OPTIONAL_ACCELERATOR_FIELDS = ("fp8", "scale_up", "host_link", "host_link_lanes", "power")
"""Fields an accelerator may leave out, each only with a reason in `not_stated`."""


class Accelerator(_Strict):
    name: str
    vendor: str
    memory: ByteSize
    """As the vendor states it (GB or GiB)."""
    memory_type: str
    memory_bandwidth: BandwidthSpec
    """Always `shared`: one figure for reads and writes together."""
    bf16: Flops
    """Peak BF16 (or FP16) tensor throughput."""
    fp8: Flops | None = None
    scale_up: ScaleUp | None = None
    host_link: str | None = None
    """Id of a `pcie` entry in interconnects.yaml."""
    host_link_lanes: PositiveInt | None = None
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
    """Accelerators in one scale-up domain: a server's 8 GPUs, or the 72 of a GB200 NVL72 rack."""
    switch: str | None = None
    """Id of the `nvswitch` entry that joins its GPUs; None for a switchless mesh or torus."""
    nic: str | None = None
    """Id of the `network` entry of its compute NICs; None where the platform ships without them."""
    nics_per_gpu: PositiveFloat | None = None
    sources: Sources

    @model_validator(mode="after")
    def _nic_and_count(self) -> Node:
        if (self.nic is None) != (self.nics_per_gpu is None):
            raise ValueError("nic and nics_per_gpu: give both or neither")
        return self


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
    """A per-expert bias in the router (DeepSeek-V3's e_score_correction_bias)."""

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
    architecture: Architecture
    sources: Sources

    @model_validator(mode="after")
    def _active_only_for_moe(self) -> Model:
        if (self.stated_active_params is None) != (self.architecture.moe is None):
            raise ValueError("stated_active_params: give it for a mixture-of-experts model, and only then")
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
    site_uses: bool = False
    """True on exactly one price per priced accelerator: the one the sizing grid's cost uses."""
    sources: Sources


SCHEMAS: dict[str, Any] = {
    "accelerators": Accelerator,
    "interconnects": Interconnect,
    "models": Model,
    "precisions": Precision,
    "assumptions": Assumption,
    "prices": Price,
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
    cat = Catalog(directory=root, **tables)
    _cache[root] = (stamp, cat)
    return cat


def iter_sources(cat: Catalog) -> Iterator[tuple[str, str, Source]]:
    """(file, entry id, source) for every source in the catalog."""
    for name in FILES:
        for entry_id, entry in getattr(cat, name).items():
            for src in entry.sources:
                yield name, entry_id, src
