"""The engine's inputs: plain, frozen records of the validated catalog, in base units.

The build validates `data/` with pydantic (`snippets.data`) and exports it as one JSON-ready
mapping (`snippets.data.export.export`); `EngineCatalog.from_export` turns that mapping into these
records. The engine reads nothing else, so it needs only the standard library and runs the same in
the build and in a browser. Bytes are bytes, bandwidths bytes/s per direction (HBM: shared),
FLOP/s dense.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


def required(value: T | None, what: str) -> T:
    """`value`, or a clear error naming what the data lacks (for fields that are optional in the schema)."""
    if value is None:
        raise ValueError(f"data lacks {what}")
    return value


# --------------------------------------------------------------------------- architecture


class MLALike(Protocol):
    @property
    def q_lora_rank(self) -> int | None: ...
    @property
    def kv_lora_rank(self) -> int: ...
    @property
    def qk_nope_head_dim(self) -> int: ...
    @property
    def qk_rope_head_dim(self) -> int: ...
    @property
    def v_head_dim(self) -> int: ...


class MoELike(Protocol):
    @property
    def experts(self) -> int: ...
    @property
    def active_experts(self) -> int: ...
    @property
    def shared_experts(self) -> int: ...
    @property
    def expert_ffn_size(self) -> int: ...
    @property
    def dense_layers(self) -> int: ...
    @property
    def router_bias(self) -> bool: ...
    @property
    def layer_step(self) -> int: ...


class ArchLike(Protocol):
    """What the parameter counts read: the fields of a model's config.json, renamed plainly. Hashable (a frozen
    record), so the engine may memoize what it derives from one (`memory.stage_weights`)."""

    def __hash__(self) -> int: ...

    @property
    def layers(self) -> int: ...
    @property
    def hidden_size(self) -> int: ...
    @property
    def attention_heads(self) -> int: ...
    @property
    def kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def ffn_size(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def tied_embeddings(self) -> bool: ...
    @property
    def mlp(self) -> str: ...
    @property
    def norm(self) -> str: ...
    @property
    def qkv_bias(self) -> bool: ...
    @property
    def linear_bias(self) -> bool: ...
    @property
    def position_embeddings(self) -> str: ...
    @property
    def context_length(self) -> int | None: ...
    @property
    def qk_norm(self) -> bool: ...
    @property
    def attention_sinks(self) -> bool: ...
    @property
    def sliding_window(self) -> int | None: ...
    @property
    def sliding_window_layers(self) -> str | None: ...
    @property
    def mla(self) -> MLALike | None: ...
    @property
    def moe(self) -> MoELike | None: ...


@dataclass(frozen=True, slots=True)
class MLA:
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None


@dataclass(frozen=True, slots=True)
class MoE:
    experts: int
    active_experts: int
    expert_ffn_size: int
    shared_experts: int = 0
    dense_layers: int = 0
    router_bias: bool = False
    layer_step: int = 1


@dataclass(frozen=True, slots=True)
class Arch:
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    ffn_size: int
    vocab_size: int
    tied_embeddings: bool
    mlp: str = "gated"
    norm: str = "rmsnorm"
    qkv_bias: bool = False
    linear_bias: bool = False
    position_embeddings: str = "rope"
    context_length: int | None = None
    qk_norm: bool = False
    attention_sinks: bool = False
    sliding_window: int | None = None
    sliding_window_layers: str | None = None
    mla: MLA | None = None
    moe: MoE | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Arch:
        body = dict(d)
        mla = body.pop("mla", None)
        moe = body.pop("moe", None)
        return cls(**_known(cls, body), mla=None if mla is None else MLA(**_known(MLA, mla)),
                   moe=None if moe is None else MoE(**_known(MoE, moe)))


def _known(cls: type, d: Mapping[str, Any]) -> dict[str, Any]:
    """`d`, refusing any key `cls` has no field for: a field the engine does not model must not pass silently."""
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError(f"{cls.__name__}: the engine does not model {', '.join(unknown)}")
    return dict(d)


# --------------------------------------------------------------------------- catalog records


@dataclass(frozen=True, slots=True)
class ModelSpec:
    id: str
    name: str
    nominal_params: float
    """The size in the model's name (405B): the source's rounded arithmetic uses it; sizing never does."""
    stated_params: float
    arch: Arch


@dataclass(frozen=True, slots=True)
class ChipSpec:
    id: str
    name: str
    label_bytes: float
    """The vendor's label (80 GB as 80e9 bytes)."""
    capacity_bytes: float
    """The total the runtime reports to a program (CUDA's mem_get_info total: 79.22 GiB on an H100 SXM), or the label
    where none is published."""
    capacity_reported: bool
    """True where `capacity_bytes` is the runtime's total, False where it is the label."""
    hbm_bytes_per_s: float
    """Memory bandwidth, one shared figure for reads and writes."""
    dense_flops: Mapping[str, float]
    """Dense FLOP/s per tensor format the chip computes in natively."""
    dense_derived: frozenset[str]
    """Formats whose dense figure the site derived from a sparse one."""
    scale_up_bytes_per_s: float | None
    """Scale-up fabric bandwidth per GPU, per direction; None for a PCIe-only card."""
    host_link_bytes_per_s: float | None
    """Host link (PCIe) bandwidth per direction."""

    def computes(self, tensor_format: str) -> bool:
        return tensor_format in self.dense_flops


@dataclass(frozen=True, slots=True)
class NodeSpec:
    id: str
    name: str
    chip: str
    gpus: int
    """GPUs in one node as built and rented."""
    domain: int
    """GPUs one scale-up fabric joins (the node, or a TPU slice)."""
    scale_up: str
    """nvlink, fabric or pcie: what tensor-parallel traffic crosses inside the domain."""
    network_bytes_per_s: float | None = None
    """Scale-out bandwidth per GPU, per direction (its share of the node's NICs); None where none is recorded."""


@dataclass(frozen=True, slots=True)
class PrecisionSpec:
    id: str
    name: str
    bits_per_param: float
    """Storage bits per weight, per-group scales counted."""
    tensor_format: str
    keeps_16bit: frozenset[str]
    """Tensors its checkpoints keep at 16 bit: embeddings, lm_head."""

    @property
    def bytes_per_param(self) -> float:
        return self.bits_per_param / 8


@dataclass(frozen=True, slots=True)
class MemoryPolicySpec:
    id: str
    name: str
    utilization: float
    activation_bytes: float
    non_torch_bytes: float
    kv_block_tokens: int


@dataclass(frozen=True, slots=True)
class LayoutPolicySpec:
    id: str
    name: str
    tp_limit: str
    across_nodes: str
    prefer: str
    expert_parallel: bool
    whole_nodes: bool


@dataclass(frozen=True, slots=True)
class TimeModelSpec:
    id: str
    name: str
    hbm_fraction: float
    """Share of the HBM datasheet bandwidth a step's reads reach."""
    link_fraction: float
    """Share of the scale-up (or PCIe, or network) bandwidth a collective's transfers reach."""
    nvlink_hop_s: float
    pcie_hop_s: float
    network_hop_s: float
    compute_fraction: float
    """Share of the dense tensor peak the matrix products reach."""
    layer_overhead_s: float
    """Fixed time per layer of a forward pass (kernel launch, ramp and tail)."""


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    id: str
    name: str
    node: str
    memory_policy: str
    layout_policy: str
    time_model: str
    input_tokens: int
    output_tokens: int
    concurrency: int
    kv_precision: str

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class PriceSpec:
    accelerator: str
    usd_per_gpu_hour: float
    gpus_per_unit: int
    provider: str
    offering: str
    read: str = ""
    """The date (YYYY-MM-DD) the price list was read: a transcription's own date where the list was not read."""
    kind: str = "on-demand"
    tier: str = ""
    """The provider's tier where it has several for one GPU (RunPod's Community or Secure Cloud); "" where none."""
    secondary: bool = False
    """Read from a transcription of the provider's price list, not the list itself."""

    @property
    def as_of(self) -> str:
        """The month the price was read, as every cost shows it beside its figure: "Sep 2026"; "" if not recorded."""
        if len(self.read) < 7:
            return ""
        return f"{MONTHS[int(self.read[5:7]) - 1]} {self.read[:4]}"


def _records(cls: type[T], table: Mapping[str, Mapping[str, Any]]) -> Mapping[str, T]:
    return MappingProxyType({k: _make(cls, k, v) for k, v in table.items()})


def _make(cls: type[T], key: str, body: Mapping[str, Any]) -> T:
    d = _known(cls, {"id": key, **body})
    return cls(**d)


@dataclass(frozen=True, slots=True)
class EngineCatalog:
    """Everything the engine reads, by `data/` id. Immutable."""

    models: Mapping[str, ModelSpec]
    chips: Mapping[str, ChipSpec]
    nodes: Mapping[str, NodeSpec]
    precisions: Mapping[str, PrecisionSpec]
    memory_policies: Mapping[str, MemoryPolicySpec]
    layout_policies: Mapping[str, LayoutPolicySpec]
    scenarios: Mapping[str, ScenarioSpec]
    time_models: Mapping[str, TimeModelSpec]
    prices: Mapping[str, PriceSpec]
    """The price the site uses, by accelerator id."""

    @classmethod
    def from_export(cls, d: Mapping[str, Any]) -> EngineCatalog:
        """Records from `snippets.data.export.export`'s mapping (or the same mapping read back from JSON)."""
        models = {k: ModelSpec(id=k, name=v["name"], nominal_params=v["nominal_params"],
                               stated_params=v["stated_params"], arch=Arch.from_dict(v["arch"]))
                  for k, v in d["models"].items()}
        chips = {k: _make(ChipSpec, k, {**v, "dense_flops": MappingProxyType(dict(v["dense_flops"])),
                                        "dense_derived": frozenset(v["dense_derived"])})
                 for k, v in d["chips"].items()}
        precisions = {k: _make(PrecisionSpec, k, {**v, "keeps_16bit": frozenset(v["keeps_16bit"])})
                      for k, v in d["precisions"].items()}
        return cls(
            models=MappingProxyType(models),
            chips=MappingProxyType(chips),
            nodes=_records(NodeSpec, d["nodes"]),
            precisions=MappingProxyType(precisions),
            memory_policies=_records(MemoryPolicySpec, d["memory_policies"]),
            layout_policies=_records(LayoutPolicySpec, d["layout_policies"]),
            scenarios=_records(ScenarioSpec, d["scenarios"]),
            time_models=_records(TimeModelSpec, d["time_models"]),
            prices=MappingProxyType({k: PriceSpec(**_known(PriceSpec, v)) for k, v in d["prices"].items()}),
        )

    def node_of(self, chip_id: str) -> NodeSpec | None:
        """The first node built from this accelerator, or None."""
        return next((n for n in self.nodes.values() if n.chip == chip_id), None)
