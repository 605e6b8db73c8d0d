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

FILES = ("accelerators", "interconnects", "models", "precisions", "assumptions")


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
    return Literal[tuple(table)]  # type: ignore[valid-type]


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


class ScaleUp(_Strict):
    fabric: str
    """Id of an `nvlink` entry in interconnects.yaml."""
    bandwidth: BandwidthSpec
    """The vendor's per-GPU figure, as the datasheet states it."""


class Accelerator(_Strict):
    name: str
    vendor: str
    memory: ByteSize
    memory_type: str
    memory_bandwidth: BandwidthSpec
    scale_up: ScaleUp | None = None
    host_link: str
    """Id of a `pcie` entry in interconnects.yaml."""
    host_link_lanes: PositiveInt
    sources: Sources


class NVLink(_Strict):
    kind: Literal["nvlink"]
    name: str
    generation: PositiveInt
    links_per_gpu: PositiveInt
    per_link: BandwidthSpec
    sources: Sources


class PCIe(_Strict):
    kind: Literal["pcie"]
    name: str
    generation: PositiveInt
    transfer_rate: TransferRate
    """Per lane, per direction."""
    encoding: Encoding
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
    """Indicative end-to-end latency, labelled as such where shown."""
    sources: Sources


class Node(_Strict):
    kind: Literal["node"]
    name: str
    accelerator: str
    gpus: PositiveInt
    switch: str
    """Id of the `nvswitch` entry that joins its GPUs."""
    nic: str
    """Id of the `network` entry of its compute NICs."""
    nics_per_gpu: PositiveFloat
    sources: Sources


Interconnect = Annotated[NVLink | PCIe | NVSwitch | Network | Node, Field(discriminator="kind")]


class Architecture(_Strict):
    """Fields of the model's config.json, renamed plainly."""

    layers: PositiveInt
    hidden_size: PositiveInt
    attention_heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    ffn_size: PositiveInt
    vocab_size: PositiveInt
    tied_embeddings: bool


class Model(_Strict):
    name: str
    nominal_params: Count
    """The size in the model's name (405B), which the site's worked figures use."""
    architecture: Architecture
    sources: Sources


class BlockScale(_Strict):
    """A scale stored once per group of weights (4-bit formats): its cost is spread over the group."""

    group_size: PositiveInt
    """Weights that share one scale."""
    scale_width: Bits
    """Storage width of one scale (FP16: 16 bit, E8M0: 8 bit)."""


class Precision(_Strict):
    name: str
    kind: Literal["float", "int"]
    width: Bits
    """Storage width of one weight, before any per-group scales."""
    block_scale: BlockScale | None = None
    """Per-group scale, for formats that need one; None when scales are per tensor or per channel (negligible)."""
    sources: Sources

    @property
    def bits_per_param(self) -> float:
        """Effective storage bits per weight, counting the per-group scale: INT4 with an FP16 scale per 128 is 4.125."""
        extra = 0.0 if self.block_scale is None else self.block_scale.scale_width.value / self.block_scale.group_size
        return self.width.value + extra


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


SCHEMAS: dict[str, Any] = {
    "accelerators": Accelerator,
    "interconnects": Interconnect,
    "models": Model,
    "precisions": Precision,
    "assumptions": Assumption,
}

T = TypeVar("T")


# --------------------------------------------------------------------------- catalog

@dataclass(frozen=True)
class Catalog:
    """All of `data/`, validated. Look entries up by id with `get`, or by kind with the `of_kind` helpers."""

    accelerators: Mapping[str, Accelerator]
    interconnects: Mapping[str, NVLink | PCIe | NVSwitch | Network | Node]
    models: Mapping[str, Model]
    precisions: Mapping[str, Precision]
    assumptions: Mapping[str, Assumption]
    directory: Path

    def interconnect(self, entry_id: str, kind: type[T]) -> T:
        entry = self.interconnects[entry_id]
        if not isinstance(entry, kind):
            raise TypeError(f"interconnect {entry_id!r} is a {type(entry).__name__}, not a {kind.__name__}")
        return entry

    def of_kind(self, kind: type[T]) -> dict[str, T]:
        return {k: v for k, v in self.interconnects.items() if isinstance(v, kind)}


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses duplicate keys instead of silently keeping the last."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep)  # type: ignore[no-untyped-call]


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

    def ref(file: str, entry: str, field: str, target: str, kind: type) -> None:
        found = ics.get(target)
        if found is None:
            problems.append(f"data/{file}.yaml: entry '{entry}': field '{field}': unknown interconnect {target!r}")
        elif not isinstance(found, kind):
            problems.append(
                f"data/{file}.yaml: entry '{entry}': field '{field}': {target!r} is a "
                f"{found.kind}, expected a {kind.__name__.lower()}"
            )

    for acc_id, acc in cat["accelerators"].items():
        ref("accelerators", acc_id, "host_link", acc.host_link, PCIe)
        if acc.scale_up is not None:
            ref("accelerators", acc_id, "scale_up.fabric", acc.scale_up.fabric, NVLink)
            link = ics.get(acc.scale_up.fabric)
            if isinstance(link, NVLink):
                from snippets.bandwidth import nvlink_per_gpu  # local: bandwidth imports this module

                derived = nvlink_per_gpu(link.links_per_gpu, link.per_link.bandwidth)
                stated = acc.scale_up.bandwidth.bandwidth
                one, two = derived.one_way().bytes_per_s, stated.one_way().bytes_per_s
                if abs(one - two) > 1e-6 * two:
                    problems.append(
                        f"data/accelerators.yaml: entry '{acc_id}': field 'scale_up.bandwidth': datasheet figure "
                        f"({two / 1e9:g} GB/s per direction) disagrees with {acc.scale_up.fabric}'s links x "
                        f"per-link rate ({one / 1e9:g} GB/s per direction)"
                    )
    for ic_id, ic in ics.items():
        if isinstance(ic, NVSwitch):
            ref("interconnects", ic_id, "fabric", ic.fabric, NVLink)
        if isinstance(ic, Node):
            if ic.accelerator not in cat["accelerators"]:
                problems.append(
                    f"data/interconnects.yaml: entry '{ic_id}': field 'accelerator': unknown accelerator {ic.accelerator!r}"
                )
            ref("interconnects", ic_id, "switch", ic.switch, NVSwitch)
            ref("interconnects", ic_id, "nic", ic.nic, Network)


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
