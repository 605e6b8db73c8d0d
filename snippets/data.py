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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

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

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
PositiveInt = Annotated[int, Field(gt=0, strict=True)]


class Source(_Strict):
    """A primary source: a vendor datasheet, a standard, a model's config.json."""

    url: Annotated[str, Field(pattern=r"^https://\S+$")]
    title: Annotated[str, Field(min_length=3)]
    read: dt.date
    """The date the figure was read from the source."""
    note: str | None = None


Sources = Annotated[list[Source], Field(min_length=1)]


def _unit_field(table: dict[str, float]) -> Any:
    return Literal[tuple(table)]


class ByteSize(_Strict):
    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


class Count(_Strict):
    value: PositiveFloat
    unit: _unit_field(COUNT_UNITS)  # type: ignore[valid-type]

    @property
    def count(self) -> float:
        return self.value * COUNT_UNITS[self.unit]


class Bits(_Strict):
    value: PositiveFloat
    unit: _unit_field(BIT_UNITS)  # type: ignore[valid-type]

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


class Duration(_Strict):
    value: PositiveFloat
    unit: _unit_field(TIME_UNITS)  # type: ignore[valid-type]

    @property
    def seconds(self) -> float:
        return self.value * TIME_UNITS[self.unit]


class TransferRate(_Strict):
    value: PositiveFloat
    unit: _unit_field(TRANSFER_RATE_UNITS)  # type: ignore[valid-type]

    @property
    def per_s(self) -> float:
        return self.value * TRANSFER_RATE_UNITS[self.unit]


class BandwidthSpec(_Strict):
    value: PositiveFloat
    unit: _unit_field(BANDWIDTH_UNITS)  # type: ignore[valid-type]
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


class Flops(_Strict):
    """Peak tensor throughput of one precision, exactly as the vendor states it."""

    value: PositiveFloat
    unit: _unit_field(FLOPS_UNITS)  # type: ignore[valid-type]
    sparsity: Literal["dense", "sparse"]
    """dense: stated without structured sparsity; sparse: the vendor states only its 2:4-sparsity figure.
    Nothing converts one into the other: a sparse figure is shown as sparse."""

    @property
    def per_s(self) -> float:
        return self.value * FLOPS_UNITS[self.unit]


class Power(_Strict):
    """Maximum board or module power (TDP / TBP) as the vendor states it."""

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


class HourlyPrice(_Strict):
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
    """A YAML loader that refuses duplicate keys instead of silently keeping the last."""


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


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _field_path(loc: tuple[int | str, ...], schema_is_union: bool) -> str:
    parts = list(loc)
    if schema_is_union and parts:
        parts = parts[1:]  # drop the discriminator tag pydantic puts first
    return ".".join(str(p) for p in parts) or "(entry)"


def _load_file(directory: Path, name: str, problems: list[str]) -> dict[str, Any]:
    path = directory / f"{name}.yaml"
    shown = f"data/{name}.yaml"
    if not path.is_file():
        problems.append(f"{shown}: file missing")
        return {}
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - safe subclass
    except yaml.YAMLError as exc:
        problems.append(f"{shown}: not valid YAML: {exc}")
        return {}
    if not isinstance(raw, dict) or not raw:
        problems.append(f"{shown}: expected a mapping of entry ids to entries")
        return {}
    schema = SCHEMAS[name]
    adapter: TypeAdapter[Any] = TypeAdapter(schema)
    is_union = schema is Interconnect
    entries: dict[str, Any] = {}
    for entry_id, body in raw.items():
        if not isinstance(entry_id, str):
            problems.append(f"{shown}: entry {entry_id!r}: entry ids must be strings")
            continue
        try:
            entries[entry_id] = adapter.validate_python(body)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                field = _field_path(err["loc"], is_union)
                got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
                problems.append(f"{shown}: entry '{entry_id}': field '{field}': {err['msg']}{got}")
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
    out = []
    for name in FILES:
        p = directory / f"{name}.yaml"
        try:
            st = p.stat()
            out.append((name, st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            out.append((name, -1, -1))
    return tuple(out)


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
    problems: list[str] = []
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
