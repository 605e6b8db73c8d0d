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
    _Measure,
    _unit_field,
)
from snippets.data.units import (
    BANDWIDTH_UNITS,
    BYTE_UNITS,
    TIME_UNITS,
    Bandwidth,
    Direction,
    Throughput,
)
from snippets.engine.specs import Arch, arch_problems

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


Vendor = Literal["NVIDIA", "AMD", "Google", "Intel", "AWS"]
"""Who makes an accelerator: an id the engine keys on (custom all-reduce's platforms, a vendor's fitted kernel
fraction), so a closed set, not free text."""


class Accelerator(_Strict):
    name: str
    vendor: Vendor
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
    fabric_shape: Literal["switched", "full_mesh", "torus", "rack", "pcie"]
    """How the scale-up links are wired, which decides what a group of its GPUs gets: `switched`, every link of
    every GPU into switches (any group gets each GPU's whole bandwidth); `full_mesh`, each GPU's links spread
    evenly over its peers (a group of g gets g − 1 peers' share); `torus`, each chip's links to its neighbours
    on a ring per dimension; `rack`, a switched domain spanning a rack's compute trays; `pcie`, no scale-up
    fabric."""
    torus_dims: PositiveInt | None = None
    """Dimensions of a torus (2 for a 2D torus); only for `fabric_shape: torus`."""
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
        if (self.fabric_shape == "pcie") != (self.scale_up == "pcie"):
            raise ValueError("fabric_shape: pcie exactly when scale_up is pcie")
        if (self.fabric_shape in ("switched", "rack")) != (self.switch is not None):
            raise ValueError("fabric_shape: switched or rack exactly when a switch joins the GPUs")
        if (self.fabric_shape == "torus") != (self.torus_dims is not None):
            raise ValueError("torus_dims: give it for a torus, and only for a torus")
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
    attention_chunk_size: PositiveInt | None = None
    """Chunked local attention (Llama 4's attention_chunk_size): a chunked layer attends only within chunks of this
    many tokens, and so caches at most a chunk of a sequence."""
    global_layer_interval: Annotated[int, Field(ge=2, strict=True)] | None = None
    """With chunked attention: every n-th layer (n-1, 2n-1, ... 0-based) attends over the whole context, the others
    within chunks (Llama 4: its config.json's no_rope_layers is empty, so transformers' default applies, a NoPE
    layer every no_rope_layer_interval = 4 layers; vLLM gives the RoPE layers chunked attention)."""
    mla: MLA | None = None
    moe: MoE | None = None
    mtp_layers: Annotated[int, Field(ge=0, strict=True)] = 0
    """Multi-token-prediction modules after the last block (DeepSeek-V3/R1's num_nextn_predict_layers: 1): each one
    more block of the model's own structure, two RMSNorms and a projection of 2 x hidden_size to hidden_size, sharing
    the embedding and the LM head. Left out of the parameter count (the model card's 671B leaves it out); engines run
    it as the draft of speculative decoding (vLLM's and SGLang's DeepSeek MTP)."""

    @model_validator(mode="after")
    def _consistent(self) -> Architecture:
        """The engine's rules for an architecture (`snippets.engine.specs.arch_problems`): the calculator's config.json
        reader applies the same ones."""
        found = arch_problems(Arch.from_dict(self.model_dump()))
        if found:
            raise ValueError("; ".join(f"{field}: {why}" for field, why in found))
        return self


class MTPAcceptance(_Strict):
    """How often a model's own multi-token-prediction module guesses right: the share of its drafted tokens the model
    accepts, as the developer measured it (a range where they give one)."""

    draft_tokens: PositiveInt
    """Tokens the module drafts per step in the measurement (DeepSeek-V3: 1, the second token)."""
    low: Annotated[float, Field(gt=0, le=1, strict=True)]
    high: Annotated[float, Field(gt=0, le=1, strict=True)]
    note: Text
    sources: Sources

    @model_validator(mode="after")
    def _ordered(self) -> MTPAcceptance:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
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
    dtype: str | None = None
    """Id in precisions.yaml of config.json's torch_dtype (bf16, fp16): the data type vLLM computes activations in
    (--dtype auto) and, with --kv-cache-dtype auto, stores the KV cache in. None for a model with no checkpoint."""
    checkpoint_precision: str | None = None
    """Id in precisions.yaml of the precision the developer's main checkpoint stores its weights in
    (DeepSeek-V3: fp8-block; gpt-oss: mxfp4, for its expert weights)."""
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
    mtp_acceptance: MTPAcceptance | None = None
    """Where the model has a multi-token-prediction module (`architecture.mtp_layers`) and its developer measured it."""
    sources: Sources

    @model_validator(mode="after")
    def _active_only_for_moe(self) -> Model:
        if (self.stated_active_params is None) != (self.architecture.moe is None):
            raise ValueError("stated_active_params: give it for a mixture-of-experts model, and only then")
        if self.stated_active_excludes_embedding and self.stated_active_params is None:
            raise ValueError("stated_active_excludes_embedding: only with stated_active_params")
        if self.other_checkpoint_precisions and self.checkpoint_precision is None:
            raise ValueError("other_checkpoint_precisions: give checkpoint_precision first")
        if (self.dtype is None) != (self.checkpoint_precision is None):
            raise ValueError("dtype and checkpoint_precision: a published checkpoint has both, a model without one neither")
        if self.mtp_acceptance is not None and self.architecture.mtp_layers < 1:
            raise ValueError("mtp_acceptance: only for a model with a multi-token-prediction module (mtp_layers)")
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


class RuntimeBytes(_Measure):
    """Memory a serving engine holds beside the weights (an activation peak, buffers outside PyTorch, CUDA graphs):
    1 MiB to 1 TiB."""

    UNITS = BYTE_UNITS
    BASE = "bytes"
    BOUNDS = (2.0**20, 2.0**40)

    @property
    def bytes(self) -> float:
        return self.base


class BytesPerElement(_Measure):
    """Bytes held per element of a tensor shape (per logit of the sampler's batch): 1 to 1,000 bytes."""

    UNITS = BYTE_UNITS
    BASE = "bytes"
    BOUNDS = (1.0, 1000.0)

    @property
    def bytes(self) -> float:
        return self.base


class ServeDefaults(_Strict):
    """vLLM's scheduler defaults for one class of device (`EngineArgs` sets them from the device and usage context)."""

    max_num_seqs: PositiveInt
    """Sequences one engine (one DP rank) schedules at once at most."""
    max_num_batched_tokens: PositiveInt
    """Tokens one step processes at most; the profiling run's dummy forward pass is this many tokens."""


class NonTorchAtTP(_Strict):
    """Memory outside PyTorch's allocator per GPU at one TP degree, as a start-up log reports it."""

    tp: PositiveInt
    memory: RuntimeBytes
    note: Annotated[str, Field(min_length=10)]
    """Which log, model and version it comes from."""


class MemoryPolicy(_Strict):
    """How a serving engine budgets each GPU's memory: the pool it may take and what the pool must hold.

    vLLM: the pool is the total the runtime reports (`torch.cuda.mem_get_info`) x `utilization`; inside it the
    weights, the activation peak of a profiling run (a dummy forward pass of `max_num_batched_tokens` tokens and
    the sampler over one logit row per dummy request), the memory it finds outside PyTorch (by TP degree); the rest
    is the paged KV cache, in blocks of `kv_block_tokens`. CUDA graphs are captured after the KV cache is allocated,
    from the memory outside the pool."""

    kind: Literal["memory"]
    name: str
    engine: str
    utilization: Annotated[float, Field(gt=0, le=1)]
    """Fraction of the device's reported total the engine's pool may take (vLLM's --gpu-memory-utilization)."""
    usage_context: Annotated[str, Field(min_length=5)]
    """How the engine is started (vLLM's defaults differ between `vllm serve` and the offline `LLM` class)."""
    serve_defaults: ServeDefaults
    """max_num_seqs and max_num_batched_tokens on a device of no special class."""
    large_device_defaults: ServeDefaults | None = None
    """The same on a large device (vLLM: reported total of at least `large_device_memory`, not an A100)."""
    large_device_memory: ByteSize | None = None
    large_device_excludes: tuple[str, ...] = ()
    """Accelerator ids that keep `serve_defaults` however much memory they report (vLLM: a device name with "a100")."""
    sampler_bytes_per_logit: BytesPerElement
    """Bytes the profiling run's sampler holds at its peak per logit of its batch (rows x vocabulary): the logits
    and their float32 copy, sorted values and indices, probabilities."""
    sampler_bytes_range: tuple[PositiveFloat, PositiveFloat]
    non_torch_by_tp: tuple[NonTorchAtTP, ...]
    """Memory outside PyTorch per GPU (CUDA context, NCCL and custom all-reduce buffers), by TP degree (a layout
    with pipeline stages reads it at TP x PP). A degree between two measured ones takes the figure of the largest
    measured degree below it."""
    non_torch_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in GiB."""
    cuda_graphs: RuntimeBytes
    """Memory the captured CUDA graphs take per GPU."""
    cuda_graphs_in_pool: bool
    """Whether the engine counts CUDA-graph memory inside the pool (False: it comes out of the headroom)."""
    kv_block_tokens: PositiveInt
    """Tokens per block of the paged KV cache: a sequence's cache is allocated in whole blocks."""
    hybrid_kv_cache: bool
    """The hybrid KV cache manager: a sliding-window or chunked-attention layer holds its window (or chunk) of a
    sequence plus one step's tokens, not the whole context. False: every layer is cached as full attention."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources

    @model_validator(mode="after")
    def _consistent(self) -> MemoryPolicy:
        problems = []
        if (self.large_device_defaults is None) != (self.large_device_memory is None):
            problems.append("large_device_defaults and large_device_memory: give both or neither")
        tps = [n.tp for n in self.non_torch_by_tp]
        if not tps or tps[0] != 1 or tps != sorted(set(tps)):
            problems.append("non_torch_by_tp: give TP1 first, then larger degrees, each once")
        gib = 2.0**30
        low, high = self.non_torch_range
        for n in self.non_torch_by_tp:
            if not low * (1 - 1e-9) <= n.memory.bytes / gib <= high * (1 + 1e-9):
                problems.append(f"non_torch_by_tp: TP{n.tp}'s {n.memory.bytes / gib:g} GiB lies outside non_torch_range")
        lo, hi = self.sampler_bytes_range
        if not lo <= self.sampler_bytes_per_logit.bytes <= hi:
            problems.append("sampler_bytes_per_logit: lies outside sampler_bytes_range")
        if problems:
            raise ValueError("; ".join(problems))
        return self


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


class AlphaBeta(_Strict):
    """A collective's cost as the time model prices it: a fixed latency (plus one per peer beyond the first) and
    its payload at a share of the link's per-direction bandwidth. Fitted on published timings by message size."""

    latency: Duration
    latency_range: tuple[PositiveFloat, PositiveFloat]
    """In `latency`'s unit."""
    per_peer: Duration | None = None
    """Added per GPU beyond the second (NCCL's ring steps); None where the time does not grow with the group."""
    efficiency: Annotated[float, Field(gt=0, le=1)]
    """Share of the per-direction link bandwidth the payload moves at."""
    efficiency_range: tuple[PositiveFloat, PositiveFloat]

    @model_validator(mode="after")
    def _within(self) -> AlphaBeta:
        for name, value, rng in (("latency", self.latency.value, self.latency_range),
                                 ("efficiency", self.efficiency, self.efficiency_range)):
            if not rng[0] <= value <= rng[1]:
                raise ValueError(f"{name}: {value:g} lies outside its range {rng[0]:g}-{rng[1]:g}")
        return self


class Collectives(_Strict):
    """The α–β factors of each collective algorithm the engines pick, fitted on data/latencies.yaml's points."""

    one_shot: AlphaBeta
    """Custom all-reduce, one stage: each GPU reads every peer's buffer and reduces."""
    two_shot: AlphaBeta
    """Custom all-reduce, two stages: reduce-scatter then all-gather through the peers' buffers."""
    nccl: AlphaBeta
    """NCCL's all-reduce (ring or tree as its tuner picks), the fallback for what custom all-reduce refuses."""
    alltoall: AlphaBeta
    """Expert parallelism's dispatch and combine (DeepEP's low-latency kernels)."""


class DefaultEfficiency(_Strict):
    """A factor for chips no published measurement covers: a stated value inside the range the measured chips span."""

    value: Annotated[float, Field(gt=0, le=1)]
    range: tuple[PositiveFloat, PositiveFloat]

    @model_validator(mode="after")
    def _within(self) -> DefaultEfficiency:
        if not self.range[0] <= self.value <= self.range[1]:
            raise ValueError(f"value: {self.value:g} lies outside its range {self.range[0]:g}-{self.range[1]:g}")
        return self


class Defaults(_Strict):
    hbm: DefaultEfficiency
    """Share of the HBM datasheet bandwidth a streaming kernel reaches."""
    gemm_weights: DefaultEfficiency
    """Share of the HBM datasheet bandwidth a decode GEMM's weight stream reaches at one token."""
    gemm_weights_256: DefaultEfficiency
    """The same at 256 tokens, where the tiles fill and the stream slows."""
    gemm_compute: DefaultEfficiency
    """Share of the dense peak a large GEMM reaches."""
    attention_compute: DefaultEfficiency
    """Share of the dense peak a fused attention kernel reaches in prefill."""


class TimeModel(_Strict):
    """The engine's time model: each figure traced to data/ (an efficiency, a latency, a collective's published
    timings) or to a fit on the calibration measurements, each inside a stated range."""

    kind: Literal["time"]
    name: str
    link_efficiency: str
    """Id of an efficiencies.yaml entry (resource nvlink): the share of a link a point-to-point copy reaches
    (pipeline sends, the network's share of a collective)."""
    hop_latency_nvlink: str
    """Id of a latencies.yaml entry (path nvlink): one GPU-to-GPU write inside a scale-up domain."""
    hop_latency_pcie: str
    """Id of a latencies.yaml entry (path pcie): the same between PCIe-only cards."""
    hop_latency_network: Duration
    """One step between nodes (adapter, switch and NCCL's proxy), indicative."""
    hop_latency_network_range: tuple[PositiveFloat, PositiveFloat]
    kernel_launch: str
    """Id of a latencies.yaml entry (path kernel): a kernel's fixed cost inside a CUDA graph."""
    host_dispatch: str
    """Id of a latencies.yaml entry (path kernel): the host's time to issue one operation outside a CUDA graph."""
    cuda_graph_max_tokens: PositiveInt
    """The largest batch (tokens in one step) the engine replays as a CUDA graph; larger steps run eagerly."""
    custom_allreduce_max_bytes: PositiveInt
    """The largest message (bytes) vLLM's custom all-reduce takes (`max_size`, 8 MiB); NCCL takes larger ones."""
    custom_allreduce_points: str
    """Id of the latencies.yaml entry (path collective) with the custom all-reduce's timings by size."""
    nccl_allreduce_points: str
    """Id of the latencies.yaml entry (path collective) with NCCL's all-reduce timings by size."""
    alltoall_points: str
    """Id of the latencies.yaml entry (path collective) with the expert all-to-all's timings by size."""
    collectives: Collectives
    defaults: Defaults
    step_overhead: Duration
    """Host time per engine step that the GPU waits for (scheduling, sampling, input preparation): fitted on the
    calibration rows' inter-token latency."""
    step_overhead_range: tuple[PositiveFloat, PositiveFloat]
    vendor_kernel_fraction: Annotated[Mapping[Vendor, Annotated[float, Field(gt=0, le=1)]],
                                      AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Per vendor whose calibration rows allow the fit: the share of the measured (or default) kernel efficiencies
    its software stack reaches; 1 for a vendor not listed."""
    vendor_kernel_fraction_range: tuple[PositiveFloat, PositiveFloat]
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources

    @model_validator(mode="after")
    def _within_ranges(self) -> TimeModel:
        checks = [("hop_latency_network", self.hop_latency_network.value, self.hop_latency_network_range),
                  ("step_overhead", self.step_overhead.value, self.step_overhead_range)]
        checks += [(f"vendor_kernel_fraction.{k}", v, self.vendor_kernel_fraction_range)
                   for k, v in self.vendor_kernel_fraction.items()]
        for name, value, rng in checks:
            if not rng[0] <= value <= rng[1]:
                raise ValueError(f"{name}: {value:g} lies outside its range {rng[0]:g}-{rng[1]:g}")
        return self


Policy = Annotated[MemoryPolicy | LayoutPolicy | TimeModel, Field(discriminator="kind")]


class TargetTime(_Measure):
    """A service-level time, a TTFT or TPOT target: a tenth of a millisecond to ten minutes."""

    UNITS = TIME_UNITS
    BASE = "s"
    BOUNDS = (1e-4, 600.0)

    @property
    def seconds(self) -> float:
        return self.base


class LatencyTarget(_Strict):
    """The service-level objective a scenario is served to: the time to first token (queueing included) and the
    time per output token after the first, each a limit a request's figure must not exceed."""

    ttft: TargetTime
    tpot: TargetTime
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


class Scenario(_Strict):
    """What a deployment is sized for: where, under which policies, for how many sequences of what length, and the
    latency target it is served to."""

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
    """Id of the precision the KV cache is stored in for a model with no published checkpoint (GPT-3). Otherwise the
    engine stores it as vLLM's --kv-cache-dtype auto does, in the model's dtype, unless told another."""
    target: LatencyTarget
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
    path: Literal["nvlink", "pcie", "network", "collective", "kernel"]
    """What the time crosses: GPU to GPU over NVLink, GPU to GPU over PCIe and the host, the scale-out
    network, a whole collective (launch and synchronisation included), or one kernel's fixed cost on a GPU."""
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
    points: tuple[tuple[PositiveInt, PositiveFloat, PositiveFloat], ...] = ()
    """For a collective: the published times it was read from, each (GPUs, message bytes, time in `value`'s
    unit); the time model's collective factors are fitted on them (`snippets.calibration.fit_collectives`)."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _value_in_range(self) -> Latency:
        low, high = self.range
        if low > high:
            raise ValueError("range must be [low, high]")
        if self.points and self.path != "collective":
            raise ValueError("points: only a collective's time is tabulated by message size")
        if not low <= self.value.value <= high:
            raise ValueError(f"value: {self.value.value:g} {self.value.unit} lies outside the range {low:g}-{high:g}")
        return self


class Efficiency(_Strict):
    """A bandwidth achieved in a published measurement, as a fraction of the datasheet figure it is measured against.

    These become the engine's efficiency factors: the share of a peak a real transfer reaches.
    """

    name: str
    resource: Literal["nvlink", "pcie_h2d", "hbm", "network", "gemm_weights", "allreduce", "alltoall"]
    """What moved: a link's or HBM's copy, a decode GEMM's weight stream (`gemm_weights`), or a collective's
    payload (`allreduce`, `alltoall`, against the link it crosses)."""
    accelerator: str
    """Id of the accelerator measured."""
    tensor_format: TensorFormat | None = None
    """For `gemm_weights`: the format the weights are stored and computed in."""
    by_tokens: tuple[tuple[PositiveInt, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `gemm_weights`: the fraction of `peak` reached with each number of tokens in the batch, (tokens,
    fraction), tokens rising; the time model interpolates between them."""
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
        if (self.resource == "gemm_weights") != (self.tensor_format is not None):
            raise ValueError("tensor_format: give it for gemm_weights, and only there")
        if self.by_tokens:
            if self.resource != "gemm_weights":
                raise ValueError("by_tokens: only a GEMM's weight stream is given by batch")
            tokens = [t for t, _ in self.by_tokens]
            if tokens != sorted(set(tokens)):
                raise ValueError("by_tokens: tokens must rise")
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


class ComputeEfficiency(_Strict):
    """A throughput achieved in published runs, as a fraction of the dense peak of the same format."""

    name: str
    resource: Literal["gemm_compute", "attention_compute"]
    """Matrix products at large batch (`gemm_compute`), or a fused attention kernel (`attention_compute`)."""
    accelerator: str
    tensor_format: TensorFormat
    achieved: Flops
    achieved_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `achieved`'s unit."""
    peak: Flops
    """The datasheet's dense figure in the same format."""
    method: Annotated[str, Field(min_length=5)]
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _consistent(self) -> ComputeEfficiency:
        low, high = self.achieved_range
        if low > high:
            raise ValueError("achieved_range must be [low, high]")
        if not low <= self.achieved.value <= high:
            raise ValueError("achieved: the value lies outside achieved_range")
        if self.achieved.sparsity != "dense" or self.peak.sparsity != "dense":
            raise ValueError("achieved and peak: compare dense figures")
        if self.fraction > 1:
            raise ValueError(f"achieved exceeds peak ({self.fraction:.3f}): check units")
        return self

    @property
    def fraction(self) -> float:
        return self.achieved.per_s / self.peak.per_s

    @property
    def fraction_range(self) -> tuple[float, float]:
        per = FLOPS_UNITS[self.achieved.unit]
        return self.achieved_range[0] * per / self.peak.per_s, self.achieved_range[1] * per / self.peak.per_s


EfficiencyEntry = Annotated[Efficiency | ComputeEfficiency, Field(discriminator="resource")]


MEASUREMENT_OPTIONAL_FIELDS = ("engine_version", "layout", "input_tokens", "output_tokens")
"""Fields a measurement may leave out, each only with the reason in `not_stated` (the source does not say)."""

PERMITTED_CALIBRATION_SOURCES = (
    "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/",
    "https://github.com/semianalysisai/inferencex/",
    "https://github.com/semianalysisai/inferencex-app/",
    "https://inferencex.semianalysis.com/",
    "https://github.com/azure/ai-benchmarking-guide/",
)
"""The sources issue 24 names for fitting (compared lower-case, by URL prefix): NVIDIA NIM's LLM benchmarking 1.0.0
performance page, SemiAnalysis InferenceX's published results (its repositories and its results API), and Azure's
AI-benchmarking-guide results. A calibration row comes from one of them; a test row from none."""

NotStated = Annotated[Mapping[str, Annotated[str, Field(min_length=10)]], AfterValidator(_read_only)]


def _given_or_not_stated(where: str, values: dict[str, object], not_stated: Mapping[str, str]) -> list[str]:
    """Each optional field is either given or named in `not_stated` with the reason, never both, never neither."""
    problems = [f"{where}not_stated.{k}: not an optional field here (optional: {', '.join(values)})"
                for k in not_stated if k not in values]
    for key, value in values.items():
        if value is None and key not in not_stated:
            problems.append(f"{where}{key}: required, or say in not_stated why the source does not give it")
        elif value is not None and key in not_stated:
            problems.append(f"{where}{key}: given and also listed in not_stated")
    return problems


def _layout_problems(where: str, lay: DeployedLayout) -> list[str]:
    """Shape rules every engine applies: the expert-parallel group is built from the TP x DP ranks, so EP is 1
    or divides TP x DP (vLLM's --enable-expert-parallel makes EP = TP x DP; SGLang's --ep-size <= --tp-size)."""
    ranks = lay.tp * lay.dp
    if lay.ep > 1 and ranks % lay.ep:
        return [f"{where}ep: EP {lay.ep} must divide TP x DP = {ranks} (experts are spread over the TP x DP ranks)"]
    return []


class Definitions(_Strict):
    """What the source's figures mean, as the source defines them (issue 24, Deliver 9). A field is given for each
    figure the row holds (and only then); "not-stated" where the source does not say, the note arguing a reading."""

    ttft: Literal["queueing-included", "queueing-excluded", "not-stated"] | None = None
    """queueing-included: from the client's request to its first token, the wait for a slot included (vLLM's and
    SGLang's bench_serving, AIPerf, NIM's guide); queueing-excluded: from the request's scheduling."""
    token_latency: Literal["tpot-excluding-first", "tpot-including-first", "itl-per-token", "itl-per-chunk",
                           "not-stated"] | None = None
    """tpot-excluding-first: (latency - TTFT) / (output tokens - 1), per request; tpot-including-first: latency /
    output tokens; itl-per-token: the gap between consecutive tokens; itl-per-chunk: the gap between streamed
    chunks (several tokens each when the server batches its stream)."""
    statistic: Literal["mean", "median", "p90", "p99", "one-run", "not-stated"] | None = None
    """Of the latency figures over the run's requests; one-run: a single batch timed as a whole."""
    throughput_tokens: Literal["output", "total", "not-stated"] | None = None
    """output: generated tokens only; total: prompt and generated tokens."""
    throughput_per: Literal["whole-run", "gpu", "node", "not-stated"] | None = None
    """whole-run: every request together; gpu / node: the whole run divided by the GPUs (nodes) it used."""
    per_gpu_counts: Literal["all-gpus", "decode-gpus", "not-stated"] | None = None
    """For a per-GPU (per-node) figure, which GPUs it divides by: all the run's GPUs (prefill and decode pools
    together) or the decode pool's only."""
    load: Literal["fixed-concurrency", "request-rate", "offline", "static-batch", "not-stated"]
    """fixed-concurrency: the client keeps `concurrency` requests in flight (online); request-rate: requests
    arrive at `request_rate` per second (online); offline: every request is queued at once and the engine serves
    as many as it can hold; static-batch: one batch of `concurrency` requests run together to the end."""


class Pool(_Strict):
    """One side of a disaggregated deployment: how many workers, each on which layout."""

    workers: PositiveInt
    layout: DeployedLayout

    @property
    def gpus(self) -> int:
        return self.workers * self.layout.tp * self.layout.pp * self.layout.dp


class Disaggregation(_Strict):
    """Prefill and decode on separate workers, the KV cache sent from one to the other."""

    prefill: Pool | None = None
    decode: Pool | None = None
    kv_transfer: Text | None = None
    """What moves the KV cache between the pools (NIXL, Mooncake, DeepEP), where the source says."""
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))

    @model_validator(mode="after")
    def _pools(self) -> Disaggregation:
        problems = _given_or_not_stated("", {"prefill": self.prefill, "decode": self.decode}, self.not_stated)
        for side, pool in (("prefill", self.prefill), ("decode", self.decode)):
            if pool is not None:
                problems += _layout_problems(f"{side}.layout.", pool.layout)
        if problems:
            raise ValueError("; ".join(problems))
        return self


SPECULATION_NAMES = {"eagle": "EAGLE", "eagle3": "EAGLE-3", "mtp": "MTP", "draft-model": "a draft model",
                     "ngram": "n-gram lookup", "medusa": "Medusa"}
"""How a page names each speculative-decoding method (the ids are SGLang's and vLLM's --speculative-algorithm)."""


class Speculation(_Strict):
    """Speculative decoding: a draft proposes tokens, the model verifies them in one step."""

    method: Literal["eagle", "eagle3", "mtp", "draft-model", "ngram", "medusa"]
    """mtp: the model's own multi-token-prediction head (DeepSeek-V3/R1); draft-model: a separate smaller model."""
    draft_tokens: PositiveInt | None = None
    """k: tokens drafted per verify step."""
    acceptance_rate: Annotated[float, Field(gt=0, le=1, strict=True)] | None = None
    """Share of drafted tokens accepted, where the source states it."""
    acceptance_length: Annotated[float, Field(ge=1, strict=True)] | None = None
    """Mean tokens emitted per verify step (accepted drafts plus the verified token), where stated."""
    draft_model: Text | None = None
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))

    @model_validator(mode="after")
    def _stated(self) -> Speculation:
        problems = _given_or_not_stated("", {"draft_tokens": self.draft_tokens,
                                             "acceptance_rate": self.acceptance_rate}, self.not_stated)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class PrefixCache(_Strict):
    """Prefix caching where the source sets it up: the share of each prompt already in the cache."""

    hit_rate: Annotated[float, Field(ge=0, le=1, strict=True)]
    """Share of prompt tokens served from the cache (or, as the note says, the share the workload repeats)."""


class Mode(_Strict):
    """How the engine served the run. Today's time model predicts aggregated serving without speculation or a
    prefix cache; the other modes wait for issue 28."""

    serving: Literal["aggregated", "disaggregated"] = "aggregated"
    disaggregation: Disaggregation | None = None
    """Required exactly when serving is disaggregated."""
    speculation: Speculation | None = None
    """None: no speculative decoding."""
    prefix_cache: PrefixCache | None = None
    """None: no prefix the workload repeats (random prompts), whether or not the engine caches prefixes."""

    @model_validator(mode="after")
    def _consistent(self) -> Mode:
        if (self.serving == "disaggregated") != (self.disaggregation is not None):
            raise ValueError("disaggregation: give it exactly when serving is disaggregated")
        return self

    @property
    def plain(self) -> bool:
        """Aggregated, no speculation, no repeated prefix: the mode today's model predicts."""
        return self.serving == "aggregated" and self.speculation is None and self.prefix_cache is None

    @property
    def label(self) -> str:
        """"aggregated", or what sets the mode apart: "disaggregated", "speculative decoding (eagle3)", ..."""
        parts: list[str] = [] if self.serving == "aggregated" else [self.serving]
        if self.speculation is not None:
            parts.append(f"speculative decoding ({SPECULATION_NAMES[self.speculation.method]})")
        if self.prefix_cache is not None:
            parts.append(f"prefix cache (hit rate {self.prefix_cache.hit_rate:.1%})")
        return ", ".join(parts) or "aggregated"


class Speedup(_Strict):
    """A ratio the source publishes against the same deployment without the row's mode."""

    value: PositiveFloat
    of: Literal["output-throughput", "throughput-per-gpu", "tokens-per-s-per-user"]
    bound: Literal["exact", "up-to", "at-least"]
    """exact: the ratio as measured; up-to / at-least: the source gives a bound ("up to 5x", "over 2x")."""
    against: Annotated[str, Field(min_length=10)]
    """The baseline, in the source's words."""


class Measurement(_Strict):
    """A published serving measurement: what ran, how it was loaded, what it measured and how the source defines
    each figure.

    calibration rows come only from the sources issue 24 names for fitting (`PERMITTED_CALIBRATION_SOURCES`); test
    rows from any other publication, compared and reported apart, never fitted. Figures are as published: a
    per-GPU throughput stays per GPU, a TPOT stays a TPOT; `definitions` says which, and `snippets.calibration`
    compares the engine's prediction of that same quantity."""

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
    layout: DeployedLayout | None = None
    """The layout of one aggregated replica, or of the decode pool of a disaggregated run."""
    gpus: PositiveInt | None = None
    """Every GPU the run used; required where the layout (or the pools) does not give it."""
    nodes: PositiveInt | None = None
    """Nodes the run used, for a throughput the source gives per node."""
    config_from: Literal["source", "inferred"] = "source"
    """inferred: the source does not state part of the configuration (GPU, layout, lengths) where its figures
    are printed, and the note says how it was inferred. Never fitted on."""
    input_tokens: PositiveInt | None = None
    output_tokens: PositiveInt | None = None
    concurrency: PositiveInt | None = None
    """Requests kept in flight (fixed-concurrency), or the batch (static-batch), or the requests queued at once
    where an offline run gives it; None for an offline run that queues more than the engine holds."""
    request_rate: PositiveFloat | None = None
    """Requests per second, for a request-rate load."""
    mode: Mode = Field(default_factory=Mode)
    definitions: Definitions
    ttft_ms: PositiveFloat | None = None
    itl_ms: PositiveFloat | None = None
    """Time per output token as the source defines it (`definitions.token_latency`)."""
    throughput: PositiveFloat | None = None
    """Tokens per second as published: output or total, whole run or per GPU (`definitions`)."""
    speedup: Speedup | None = None
    baseline: str | None = None
    """Id of the row measuring the same deployment without this row's mode, where the source publishes both."""
    secondary: bool = False
    """The source is a transcription of another document (a blog quoting a table, a PR quoting a results API)."""
    primary: Text | None = None
    """The primary document a secondary source copies, named (title and address)."""
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _complete_and_consistent(self) -> Measurement:
        optional = {k: getattr(self, k) for k in MEASUREMENT_OPTIONAL_FIELDS}
        problems = _given_or_not_stated("", optional, self.not_stated)
        d = self.definitions
        if all(x is None for x in (self.ttft_ms, self.itl_ms, self.throughput, self.speedup)):
            problems.append("a measurement needs at least one of ttft_ms, itl_ms, throughput, speedup")
        for figure, fields in ((self.ttft_ms, ("ttft", "statistic")), (self.itl_ms, ("token_latency", "statistic")),
                               (self.throughput, ("throughput_tokens", "throughput_per"))):
            for f in fields:
                if figure is not None and getattr(d, f) is None:
                    problems.append(f"definitions.{f}: required for the figures this row holds (or not-stated)")
        if self.ttft_ms is None and d.ttft is not None:
            problems.append("definitions.ttft: given, but the row holds no ttft_ms")
        if self.itl_ms is None and d.token_latency is not None:
            problems.append("definitions.token_latency: given, but the row holds no itl_ms")
        if self.throughput is None and (d.throughput_tokens, d.throughput_per) != (None, None):
            problems.append("definitions.throughput_*: given, but the row holds no throughput")
        per_unit = d.throughput_per in ("gpu", "node")
        if per_unit != (d.per_gpu_counts is not None):
            problems.append("definitions.per_gpu_counts: give it exactly when throughput is per GPU or per node")
        if d.load in ("fixed-concurrency", "static-batch") and self.concurrency is None:
            problems.append(f"concurrency: required for a {d.load} load")
        if d.load == "request-rate" and (self.request_rate is None or self.concurrency is not None):
            problems.append("request_rate: required for a request-rate load, and concurrency left out")
        if d.load != "request-rate" and self.request_rate is not None:
            problems.append("request_rate: only for a request-rate load")
        if self.layout is not None:
            problems += _layout_problems("layout.", self.layout)
        pooled = self._pool_gpus()
        if self.gpus is not None and pooled is not None and self.gpus != pooled:
            problems.append(f"gpus: {self.gpus}, but the layout gives {pooled}")
        if (d.throughput_per == "node") != (self.nodes is not None):
            problems.append("nodes: give it exactly when throughput is per node")
        if self.gpu_count is None and (d.throughput_per == "gpu" or self.mode.serving == "disaggregated"):
            problems.append("gpus: required where the layout does not give the GPU count")
        if self.secondary != (self.primary is not None):
            problems.append("primary: name the primary document exactly when secondary is true")
        if self.baseline is not None and self.mode.plain:
            problems.append("baseline: only a row in another mode (disaggregated, speculative, prefix cache) has one")
        if self.speedup is not None and self.mode.plain:
            problems.append("speedup: only a row in another mode (disaggregated, speculative, prefix cache) has one")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _pool_gpus(self) -> int | None:
        if self.mode.serving == "disaggregated":
            dis = self.mode.disaggregation
            if dis is None or dis.prefill is None or dis.decode is None:
                return None
            return dis.prefill.gpus + dis.decode.gpus
        lay = self.layout
        return None if lay is None else lay.tp * lay.pp * lay.dp

    @property
    def gpu_count(self) -> int | None:
        """Every GPU the run used: stated, or from the layout (the pools of a disaggregated run)."""
        return self.gpus if self.gpus is not None else self._pool_gpus()

    @property
    def output_tokens_per_s(self) -> float | None:
        """The published throughput as output tokens per second of the whole run: a per-GPU (per-node) figure
        times the GPUs (nodes) it divides by, a total-token figure times the output share of each request's tokens
        (output / (input + output), exact for runs of fixed lengths). A figure whose tokens the source does not
        state is read as output tokens, the reading its note argues."""
        v, d = self.throughput, self.definitions
        if v is None:
            return None
        if d.throughput_per in ("gpu", "node"):
            gpus = self._decode_gpus() if d.per_gpu_counts == "decode-gpus" else self.gpu_count
            if d.per_gpu_counts == "not-stated" and self.mode.serving == "disaggregated":
                gpus = None  # all GPUs or the decode pool's: the source does not say which
            units = gpus if d.throughput_per == "gpu" else self.nodes
            if units is None:
                return None
            v *= units
        if d.throughput_tokens == "total":
            if self.input_tokens is None or self.output_tokens is None:
                return None
            v *= self.output_tokens / (self.input_tokens + self.output_tokens)
        return v

    def _decode_gpus(self) -> int | None:
        dis = self.mode.disaggregation
        if dis is None:
            return self.gpu_count
        return None if dis.decode is None else dis.decode.gpus

    @property
    def sourced_from_permitted(self) -> bool:
        """Every source of the row is one issue 24 permits for fitting (see `PERMITTED_CALIBRATION_SOURCES`)."""
        return all(s.url.lower().startswith(PERMITTED_CALIBRATION_SOURCES) for s in self.sources)


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
    "efficiencies": EfficiencyEntry,
    "measurements": Measurement,
}
