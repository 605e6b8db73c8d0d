"""The entries of every table in data/: one pydantic model per kind, and `SCHEMAS` by file."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from snippets.data.bandwidth import nvlink_per_gpu, pcie_bandwidth
from snippets.data.base import PositiveFloat, PositiveInt, Source, Sources, Text, _read_only, _Strict
from snippets.data.quantities import (
    FLOPS_UNITS,
    POWER_UNITS,
    AssumedValue,
    BandwidthSpec,
    Bits,
    ByteSize,
    Count,
    Duration,
    Encoding,
    Flops,
    HourlyPrice,
    Power,
    TensorFormat,
    TransferRate,
    _unit_field,
)
from snippets.data.units import (
    BANDWIDTH_UNITS,
    BYTE_UNITS,
    Bandwidth,
    Direction,
    Throughput,
)

DISPUTABLE: dict[str, dict[str, float]] = {
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
        if self.unit not in DISPUTABLE[self.field]:
            expected = sorted(DISPUTABLE[self.field])
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
    basis: Annotated[str, Field(min_length=10)] | None = None
    """What the figure counts where it is not every link the device drives (Gaudi 3's 21 scale-up ports of 24, an
    MI250X's 6 GPU-facing links of 8 in the node modelled); shown beside the figure wherever it is shown."""


OPTIONAL_ACCELERATOR_FIELDS = ("memory_runtime", "memory_reported", "scale_up", "host_link", "host_link_lanes", "power")
"""Fields an accelerator may leave out, each only with a reason in `not_stated`."""


class RuntimeMemory(_Strict):
    """The device's total as its runtime reports it to a program: what CUDA's cudaMemGetInfo (torch.cuda.mem_get_info,
    vLLM's total_gpu_memory) or cudaDeviceProp.totalGlobalMem give, ROCm's HIP equivalents, a TPU runtime's limit.
    Less than a management tool's total (nvidia-smi counts memory the driver keeps for itself): the total an engine
    budgets from."""

    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]
    runtime: Literal["CUDA", "ROCm", "TPU runtime", "Neuron runtime", "Habana runtime"]
    tool: Annotated[str, Field(min_length=5)]
    """How it was read: "torch.cuda.get_device_properties total_memory", "vLLM's total_gpu_memory (mem_get_info)"."""
    source: Source

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


class ReportedMemory(_Strict):
    """Device memory as a management tool reports it (nvidia-smi's total, amd-smi's or rocm-smi's VRAM total)."""

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
    memory_runtime: RuntimeMemory | None = None
    """The total the runtime reports to a program (an H100 SXM's 79.22 GiB to CUDA): the capacity the engine budgets
    from. Where none is published the engine budgets from the label, and `not_stated.memory_runtime` says so."""
    memory_reported: ReportedMemory | None = None
    """What a management tool reports as the total (nvidia-smi's 81,559 MiB on an H100 SXM): shown beside the
    runtime's figure, never budgeted from (it counts memory the driver keeps for itself)."""
    memory_type: str
    memory_bandwidth: BandwidthSpec
    """Always `shared`: one figure for reads and writes together."""
    tensor: Annotated[Mapping[TensorFormat, Flops], AfterValidator(_read_only)]
    """Peak tensor throughput of every format the chip's matrix units compute in, as stated. A format that
    is absent is not computed natively: weights stored in it are converted before the product (weight-only)."""
    tensor_notes: Annotated[Mapping[TensorFormat, Annotated[str, Field(min_length=10)]],
                            AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why a format is absent, where a reader would expect it: `{fp8: "FP8 arrived with Hopper"}`."""
    scale_up: ScaleUp | None = None
    host_link: str | None = None
    """Id of a `pcie` entry in interconnects.yaml."""
    host_link_lanes: PositiveInt | None = None
    host_link_other: Annotated[str, Field(min_length=3)] | None = None
    """A host link that is not PCIe, named for display ("NVLink-C2C to its Grace CPU"); `not_stated.host_link`
    still says why the PCIe table has no entry for it."""
    power: Power | None = None
    not_stated: Annotated[Mapping[str, Annotated[str, Field(min_length=10)]],
                          AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why an optional field is left out: `{power: "Google publishes no per-chip power"}`."""
    disagreements: tuple[Disagreement, ...] = ()
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
        if "bf16" not in self.tensor and "fp16" not in self.tensor:
            problems.append("tensor.bf16: every accelerator states its BF16 or FP16 tensor throughput")
        if "bf16" not in self.tensor and "bf16" not in self.tensor_notes:
            problems.append("tensor_notes.bf16: a chip without BF16 says why (engines refuse BF16 weights on it)")
        for key in self.tensor_notes:
            if key in self.tensor:
                problems.append(f"tensor_notes.{key}: the format is given, so it needs no note")
        if self.memory_reported is not None and self.memory_reported.bytes > self.memory.bytes * 1.1:
            problems.append("memory_reported: more than the vendor's label plus 10 %: check the unit")
        if self.memory_runtime is not None:
            if not self.memory.bytes * 0.8 <= self.memory_runtime.bytes <= self.memory.bytes * 1.1:
                problems.append("memory_runtime: more than 20 % under or 10 % over the vendor's label: check the unit")
            if self.memory_reported is not None and self.memory_runtime.bytes > self.memory_reported.bytes:
                problems.append("memory_runtime: more than the management tool's total, which counts the driver's "
                                "own memory as well: check the unit")
        if self.memory_bandwidth.direction is not Direction.SHARED:
            problems.append("memory_bandwidth: memory bandwidth is one shared figure: direction must be 'shared'")
        for d in self.disagreements:
            used = self.used_value(d.field)
            if used is None:
                problems.append(f"disagreements: {d.field} is not given, so there is nothing to disagree on")
                continue
            table = DISPUTABLE[d.field]
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
    def bf16(self) -> Flops | None:
        """The BF16 tensor figure, as stated; None on a chip without BF16 (V100: FP16 only)."""
        return self.tensor.get("bf16")

    @property
    def half(self) -> Flops:
        """The 16-bit tensor figure every accelerator states: BF16's, or FP16's on a chip without BF16."""
        return self.tensor["bf16"] if "bf16" in self.tensor else self.tensor["fp16"]

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
        """The memory an engine budgets from: the total the runtime reports (CUDA's, ROCm's) where one is published,
        else the vendor's label (and the pages say it is the label)."""
        return self.memory.bytes if self.memory_runtime is None else self.memory_runtime.bytes

    @property
    def capacity_basis(self) -> str:
        """What `capacity_bytes` is: "CUDA", "ROCm"... (the runtime that reported it), or "label"."""
        return "label" if self.memory_runtime is None else self.memory_runtime.runtime

    def used_value(self, field: str) -> float | None:
        """The site's value of a disputable quantity in base units (bytes, bytes/s, FLOP/s, W); None if absent."""
        if field == "memory":
            return self.memory.bytes
        if field == "memory_bandwidth":
            return self.memory_bandwidth.bandwidth.bytes_per_s
        if field in ("bf16", "fp8"):
            f: Flops | None = self.tensor.get(field)  # type: ignore[call-overload]
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

    @property
    def per_gpu(self) -> Bandwidth:
        """A GPU's NVLink bandwidth, per direction: links x the per-link rate."""
        return nvlink_per_gpu(self.links_per_gpu, self.per_link.bandwidth).one_way()


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

    def lanes(self, lanes: int = 16) -> Bandwidth:
        """Per-direction data rate of `lanes` lanes, after line encoding or FLIT overhead."""
        return pcie_bandwidth(self.transfer_rate.per_s, lanes, self.encoding.payload_bits, self.encoding.line_bits)


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
    switch_latency: Duration | None = None
    """Port-to-port latency of one switch as the switch's manual prints it; InfiniBand entries give it or say why not."""
    adapter_latency: Duration | None = None
    """Latency of the host adapter as its manual prints it; InfiniBand entries give it or say why not."""
    not_stated: Annotated[Mapping[str, Annotated[str, Field(min_length=10)]],
                          AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why `switch_latency` or `adapter_latency` is left out."""
    sources: Sources

    @model_validator(mode="after")
    def _latencies_given_or_explained(self) -> Network:
        problems = []
        for key in self.not_stated:
            if key not in ("switch_latency", "adapter_latency"):
                problems.append(f"not_stated.{key}: only switch_latency and adapter_latency may be explained")
            elif getattr(self, key) is not None:
                problems.append(f"not_stated.{key}: the field is given, so it needs no reason")
        if self.family == "InfiniBand":
            for key in ("switch_latency", "adapter_latency"):
                if getattr(self, key) is None and key not in self.not_stated:
                    problems.append(f"{key}: give the manual's figure, or say why under not_stated.{key}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


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
        if self.switch_chips is not None and self.switch is None:
            raise ValueError("switch_chips: a node without a switch has no switch chips")
        if self.switch is not None and self.switch_chips is None and self.note is None:
            raise ValueError("switch_chips: give the switch chips, or say in `note` why the sources do not")
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
    other_checkpoint_precisions: tuple[str, ...] = ()
    """Precisions of further checkpoints the developer released (Llama 4 Maverick: fp8 beside bf16)."""
    checkpoint_note: Text | None = None
    """Which tensors the checkpoint keeps in another precision, with the source in `sources`."""
    context_checkpoint: Annotated[str, Field(min_length=3)] | None = None
    """The released checkpoint whose config.json `architecture.context_length` is, where its checkpoints differ."""
    context_by_checkpoint: Annotated[Mapping[str, PositiveInt], AfterValidator(_read_only)] = Field(
        default_factory=lambda: MappingProxyType({}))
    """max_position_embeddings of each released checkpoint, where they differ (Llama 4: the base configs' 262,144,
    the Instruct configs' 10,485,760 and 1,048,576)."""
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
        if (self.context_checkpoint is None) != (not self.context_by_checkpoint):
            raise ValueError("context_checkpoint and context_by_checkpoint: give both or neither")
        if self.context_checkpoint is not None:
            own = self.context_by_checkpoint.get(self.context_checkpoint)
            if own is None:
                raise ValueError(f"context_checkpoint: {self.context_checkpoint!r} is not in context_by_checkpoint")
            if own != self.architecture.context_length:
                raise ValueError(f"context_checkpoint: {self.context_checkpoint} gives {own:,} tokens, but "
                                 f"architecture.context_length is {self.architecture.context_length}")
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


PRICE_KINDS = ("on-demand", "reserved", "spot")
"""How a price is bought: by the hour with no commitment, against a term commitment, or preemptible capacity."""


class Price(_Strict):
    """An indicative list price of one accelerator at one provider, per GPU-hour, as a price list gave it on the date
    its source read it (a transcription's date where the price list itself could not be read)."""

    accelerator: str
    """Id of the accelerator in accelerators.yaml."""
    provider: str
    offering: str
    """What the provider sells at that price: "8x H100 SXM instance, on demand"."""
    kind: Literal["on-demand", "reserved", "spot"]
    """on-demand: by the hour, no commitment; reserved: against a term (`term` says which); spot: preemptible."""
    tier: Annotated[str, Field(min_length=3)] | None = None
    """The provider's tier where it sells the same GPU at several prices (RunPod's Community or Secure Cloud)."""
    term: Annotated[str, Field(min_length=3)] | None = None
    """The commitment a reserved price needs ("1 year"); only for `kind: reserved`."""
    price: HourlyPrice
    gpus_per_unit: PositiveInt = 1
    """GPUs in the smallest unit the offering rents (8 for an 8-GPU instance sold only whole)."""
    site_uses: bool = False
    """True on exactly one price per priced accelerator: the one every cost on the site uses (on demand only)."""
    sources: Sources

    @model_validator(mode="after")
    def _kind_consistent(self) -> Price:
        if self.site_uses and self.kind != "on-demand":
            raise ValueError("site_uses: the site's costs use an on-demand price, not a reserved or spot one")
        if (self.term is not None) != (self.kind == "reserved"):
            raise ValueError("term: a reserved price states its term, and only a reserved price has one")
        return self

    @property
    def read(self) -> dt.date:
        """The date the price list was read: the first source's, which for a transcription is the copy's own date."""
        return self.sources[0].read

    @property
    def secondary(self) -> bool:
        """The price comes from a transcription of the provider's price list, not the list itself."""
        return self.sources[0].secondary


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
