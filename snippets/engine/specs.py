"""The engine's inputs: plain, frozen records of the validated catalog, in base units.

The build validates `data/` with pydantic (`snippets.data`): a model (with its `Arch`), a precision, a memory or
layout policy and a scenario validate straight into these records (the schema's class is a subclass of the record that
adds only provenance, `snippets.data.schema`); chips, nodes, time models and prices, joined across entries or files,
are made by a typed builder each (`snippets.data.export.export`). They travel to the browser as JSON:
`snippets.engine.codec.encode` writes a record's JSON form and `codec.decode(EngineCatalog, obj)` reads it back, by
the fields' declared types, with no per-record code (a record filed in a table by its `id` marks that field
`codec.KEY`). The engine reads nothing else, so it needs only the standard library and runs the same in the build and
in a browser. Bytes are bytes, bandwidths bytes/s per direction (HBM: shared), FLOP/s dense.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal, TypeVar

from snippets.engine.bands import BandEntry
from snippets.engine.codec import KEY

T = TypeVar("T")


def required(value: T | None, what: str) -> T:
    """`value`, or a clear error naming what the data lacks (for fields that are optional in the schema)."""
    if value is None:
        raise ValueError(f"data lacks {what}")
    return value


# --------------------------------------------------------------------------- architecture


@dataclass(frozen=True, slots=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values cached as one compressed latent."""

    kv_lora_rank: int
    """Width of the cached key-value latent."""
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    """Width of the rotary key part, shared by all heads and cached beside the latent."""
    v_head_dim: int
    q_lora_rank: int | None = None
    """Rank of the query down-projection; None when queries are projected directly."""


@dataclass(frozen=True, slots=True)
class MoE:
    """Mixture of experts: which layers route, to how many experts, of what size."""

    experts: int
    """Routed experts per MoE layer (n_routed_experts / num_local_experts)."""
    active_experts: int
    """Routed experts each token uses (num_experts_per_tok)."""
    expert_ffn_size: int
    """Intermediate size of one expert (moe_intermediate_size; Mixtral: intermediate_size)."""
    shared_experts: int = 0
    """Experts every token uses (n_shared_experts)."""
    dense_layers: int = 0
    """Leading layers with a dense MLP of `ffn_size` instead (first_k_dense_replace)."""
    router_bias: bool = False
    """A per-expert bias in the router (DeepSeek-V3's e_score_correction_bias, gpt-oss's router bias)."""
    layer_step: int = 1
    """Every `layer_step`-th layer routes, the others have a dense MLP of `ffn_size` (Llama 4's
    interleave_moe_layer_step: 2 in Maverick, layers 1, 3, 5... route; 1 means every layer)."""


@dataclass(frozen=True, slots=True)
class VisionEncoder:
    """A multimodal checkpoint's image encoder and its projector into the text model (Llama 4's vision_config): a ViT
    of `layers` pre-norm blocks (LayerNorms with biases; biased q, k, v, o and a two-matrix GELU MLP of `ffn_size`),
    its patches embedded by one unbiased linear map of channels x patch x patch values, a class token and a learned
    position per patch; then a pixel shuffle that folds each 1/ratio x 1/ratio square of patches into one feature of
    hidden_size / ratio^2 values, an unbiased two-matrix adapter to `projector_input_dim` and `projector_output_dim`,
    and an unbiased projector to the text model's width (vLLM's `Llama4VisionModel` and
    `Llama4MultiModalProjector`). Text requests do not run it; an engine that builds it holds its weights
    (`MemoryPolicySpec.vision_encoder_vendors`)."""

    layers: int
    hidden_size: int
    ffn_size: int
    attention_heads: int
    patch_size: int
    image_size: int
    """Side of one image tile in pixels: (image_size / patch_size)^2 patches a tile."""
    channels: int
    pixel_shuffle_ratio: float
    """The pixel shuffle's ratio (0.5: 2 x 2 patches fold into one feature of 4 x hidden_size values)."""
    projector_input_dim: int
    projector_output_dim: int


@dataclass(frozen=True, slots=True)
class Arch:
    """A model's architecture: the fields of its config.json, renamed plainly; optional fields default to a
    Llama-style model. The one record of an architecture: data/models.yaml validates into it
    (`snippets.data.schema.models.ArchRecord`), the calculator's config.json reader makes one (`snippets.engine.hf`),
    and both apply `arch_problems`. Hashable, so the engine may memoize what it derives from one
    (`memory.stage_weights`)."""

    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    ffn_size: int
    """Dense MLP intermediate size (for an MoE model: of its dense layers)."""
    vocab_size: int
    tied_embeddings: bool
    mlp: str = "gated"
    """gated: SwiGLU, three matrices (gate, up, down); plain: two (up, down), as GPT-3's GELU MLP."""
    norm: str = "rmsnorm"
    """rmsnorm has a scale per channel; layernorm a scale and a bias."""
    qkv_bias: bool = False
    """Biases on the query, key and value projections only (Qwen2.5)."""
    linear_bias: bool = False
    """Biases on every linear layer (GPT-3)."""
    position_embeddings: str = "rope"
    """rope or learned."""
    context_length: int | None = None
    """max_position_embeddings; required with learned position embeddings, which it sizes."""
    qk_norm: bool = False
    """An RMSNorm over head_dim on queries and on keys in every layer (Qwen3's q_norm, k_norm): 2 x head_dim
    scales a layer. Llama 4's use_qk_norm is a weightless L2 norm and is not this."""
    attention_sinks: bool = False
    """A learned sink logit per attention head in every layer (gpt-oss's sinks)."""
    sliding_window: int | None = None
    """Tokens a sliding-window layer attends to, and so caches (gpt-oss: 128)."""
    sliding_window_layers: str | None = None
    """Which layers use the window: "alternate" (layers 0, 2, 4... as gpt-oss's layer_types begins with
    sliding_attention), "all"; None with no window."""
    attention_chunk_size: int | None = None
    """Chunked local attention (Llama 4's attention_chunk_size): a chunked layer attends only within chunks of this
    many tokens (8,192), and so caches at most a chunk of a sequence; None without chunked attention."""
    global_layer_interval: int | None = None
    """With chunked attention: every n-th layer (n-1, 2n-1, ... 0-based) attends over the whole context, the others
    within chunks (Llama 4: its config.json's no_rope_layers is empty, so transformers' default applies, a NoPE
    layer every no_rope_layer_interval = 4 layers; vLLM gives the RoPE layers chunked attention)."""
    mla: MLA | None = None
    moe: MoE | None = None
    vision: VisionEncoder | None = None
    """The checkpoint's image encoder (its config.json's vision_config), None for a text model. Not among the
    parameters counted (`params.total_params`) nor in any step's time: only in memory, where the engine builds it."""
    mtp_layers: int = 0
    """Multi-token-prediction modules after the last block (DeepSeek-V3/R1's num_nextn_predict_layers: 1): each one
    more block of the model's own structure, two RMSNorms and a projection of 2 x hidden_size to hidden_size, sharing
    the embedding and the LM head. Left out of the parameter count (the model card's 671B leaves it out); engines run
    it as the draft of speculative decoding (`snippets.engine.serving.Speculation`); not among the blocks counted or
    served."""


def arch_problems(a: Arch) -> list[tuple[str, str]]:
    """The rules an architecture's fields must meet together, as (field, why) pairs; none for a sound one.

    One set of rules for every reader: data/models.yaml's schema (`snippets.data.schema.models.ArchRecord`) and the
    calculator's config.json reader (`snippets.engine.hf`) both apply these, so a config the calculator accepts is
    one the data would accept. Fields are named as data/models.yaml names them (`moe.dense_layers`)."""
    found = _arch_ranges(a)
    if found:  # the rules below divide and compare these
        return found
    if a.position_embeddings == "learned" and a.context_length is None:
        found.append(("context_length", "required with learned position embeddings"))
    if a.attention_heads % a.kv_heads:
        found.append(("kv_heads", f"{a.kv_heads} does not divide attention_heads {a.attention_heads}"))
    if a.moe is not None:
        if a.moe.active_experts > a.moe.experts:
            found.append(("moe.active_experts", f"{a.moe.active_experts} is more than the {a.moe.experts} experts"))
        if a.moe.dense_layers >= a.layers:
            found.append(("moe.dense_layers", f"{a.moe.dense_layers} leading dense layers leave none of the "
                                              f"{a.layers} layers to route to experts"))
        if a.moe.layer_step > a.layers:
            found.append(("moe.layer_step", f"{a.moe.layer_step} is more than the {a.layers} layers"))
    if (a.sliding_window is None) != (a.sliding_window_layers is None):
        found.append(("sliding_window", "sliding_window and sliding_window_layers: give both or neither"))
    if a.sliding_window is not None and a.mla is not None:
        found.append(("sliding_window", "not modelled with multi-head latent attention"))
    if (a.attention_chunk_size is None) != (a.global_layer_interval is None):
        found.append(("attention_chunk_size",
                      "attention_chunk_size and global_layer_interval: give both or neither"))
    if a.attention_chunk_size is not None and (a.sliding_window is not None or a.mla is not None):
        found.append(("attention_chunk_size", "not modelled beside a sliding window or latent attention"))
    v = a.vision
    if v is not None:
        if v.image_size % v.patch_size:
            found.append(("vision.image_size", f"{v.image_size} is not a whole number of {v.patch_size}-pixel patches"))
        if v.hidden_size % v.attention_heads:
            found.append(("vision.attention_heads", f"{v.attention_heads} does not divide hidden_size {v.hidden_size}"))
        if not 0 < v.pixel_shuffle_ratio <= 1 or (v.hidden_size / v.pixel_shuffle_ratio ** 2) % 1:
            found.append(("vision.pixel_shuffle_ratio", f"{v.pixel_shuffle_ratio} must be above 0, at most 1, and fold "
                                                        f"hidden_size {v.hidden_size} into a whole number of values"))
    return found


_CHOICES: Mapping[str, tuple[str | None, ...]] = MappingProxyType({
    "mlp": ("gated", "plain"), "norm": ("rmsnorm", "layernorm"), "position_embeddings": ("rope", "learned"),
    "sliding_window_layers": ("alternate", "all", None)})


def _arch_ranges(a: Arch) -> list[tuple[str, str]]:
    """Each field's own range: counts positive (some may be 0, `global_layer_interval` at least 2), and the named
    choices of the text fields."""
    found: list[tuple[str, str]] = []

    def at_least(prefix: str, record: object, names: tuple[str, ...], least: int) -> None:
        for name in names:
            value = getattr(record, name)
            if value is not None and value < least:
                found.append((prefix + name, f"{value} is less than {least}"))

    at_least("", a, ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "ffn_size", "vocab_size",
                     "context_length", "sliding_window", "attention_chunk_size"), 1)
    at_least("", a, ("global_layer_interval",), 2)
    at_least("", a, ("mtp_layers",), 0)
    if a.mla is not None:
        at_least("mla.", a.mla, ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "q_lora_rank"), 1)
    if a.moe is not None:
        at_least("moe.", a.moe, ("experts", "active_experts", "expert_ffn_size", "layer_step"), 1)
        at_least("moe.", a.moe, ("shared_experts", "dense_layers"), 0)
    if a.vision is not None:
        at_least("vision.", a.vision, ("layers", "hidden_size", "ffn_size", "attention_heads", "patch_size", "image_size",
                                       "channels", "projector_input_dim", "projector_output_dim"), 1)
    for name, choices in _CHOICES.items():
        if getattr(a, name) not in choices:
            found.append((name, f"{getattr(a, name)!r} is not one of {', '.join(repr(c) for c in choices)}"))
    return found


# --------------------------------------------------------------------------- catalog records


@dataclass(frozen=True, slots=True)
class MTPAcceptance:
    """How often a model's own multi-token-prediction module guesses right: the share of its drafted tokens the model
    accepts, as the developer measured it (a range where they give one)."""

    draft_tokens: int
    """Tokens the module drafts per step in the measurement (DeepSeek-V3: 1, the second token)."""
    low: float
    high: float


KeptLinear = Literal["attention_in", "attention_out"]
"""A group of a block's linear layers a quantized checkpoint may leave at 16 bits (`ModelSpec.keeps_16bit`)."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model: its parameter counts, its architecture and its checkpoints. The one record of a model: data/models.yaml
    validates into it (`snippets.data.schema.models.Model` adds the counts the model card states besides, the
    checkpoints' notes and contexts, and the sources); the calculator's config.json reader makes one
    (`snippets.engine.hf`)."""

    id: str = field(metadata=KEY)
    name: str
    nominal_params: float
    """The size in the model's name (405B), or its headline total where the name has none: the source's rounded
    arithmetic uses it; sizing never does."""
    stated_params: float
    """The total parameter count the model card or paper states; tests recompute it from `architecture`."""
    architecture: Arch
    dtype: str | None = None
    """Precision id of config.json's torch_dtype: what vLLM computes activations in (--dtype auto) and stores the KV
    cache in (--kv-cache-dtype auto); None where no checkpoint is published."""
    checkpoint_precision: str | None = None
    """Precision id of the weights of the developer's main checkpoint: the model "as shipped" (DeepSeek-V3: fp8-block;
    gpt-oss: mxfp4, for its expert weights)."""
    other_checkpoint_precisions: tuple[str, ...] = ()
    """Precision ids of further checkpoints the developer released (Qwen3's block-FP8)."""
    keeps_16bit: Mapping[str, frozenset[KeptLinear]] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """By the precision id of a published checkpoint, the linear layers of the blocks that checkpoint leaves at 16
    bits, as its quantization config lists them (gpt-oss's MXFP4: the attention projections, config.json's
    modules_to_not_convert): the engine stores them, streams them and computes them at 16 bits (`kept_16bit`).
    `attention_in`: the projections into attention (q, k, v; MLA's q_a, q_b, kv_a, kv_b); `attention_out`: o_proj.
    (`PrecisionSpec.keeps_16bit` is the other list: the embedding and LM head every checkpoint of a precision keeps.)"""
    mtp_acceptance: MTPAcceptance | None = None
    """The acceptance of the model's own multi-token-prediction module (`architecture.mtp_layers`), as its developer
    measured it; None where not measured."""

    def kept_16bit(self, precision: PrecisionSpec) -> frozenset[KeptLinear]:
        """The linear layers a checkpoint of this model in `precision` keeps at 16 bits (`keeps_16bit`); none at 16
        bits or wider."""
        if precision.bits_per_param >= 16:
            return frozenset()
        return frozenset(self.keeps_16bit.get(precision.id, ()))

    @property
    def shipped_precisions(self) -> tuple[str, ...]:
        """Every precision the developer released the weights in, the main checkpoint first."""
        main = () if self.checkpoint_precision is None else (self.checkpoint_precision,)
        return main + self.other_checkpoint_precisions


@dataclass(frozen=True, slots=True)
class ChipSpec:
    id: str = field(metadata=KEY)
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
    vendor: str = ""
    """Who makes it (NVIDIA, AMD, Google, Intel, AWS): the engines' kernels and collectives differ by vendor."""
    scale_up_links: int | None = None
    """Scale-up links per GPU where the data states them (7 on an MI300X, 18 NVLinks on an H100)."""
    scale_up_name: str | None = None
    """The scale-up fabric's name (NVLink 4, AMD Infinity Fabric (MI300 series))."""
    time_sources: tuple[tuple[str, str], ...] = ()
    """The (file, id) of the data/ entries a time model reads for this chip: its measured efficiencies."""
    tool_total_bytes: float | None = None
    """The total the vendor's management tool reports (nvidia-smi's memory.total: 81,559 MiB on an H100 SXM), where
    recorded: SGLang sizes its defaults by it."""
    package_bytes_per_s: float | None = None
    """Per direction, the link inside the package to the GPU's twin where one module holds two GPUs (an MI250X's two
    GCDs); `scale_up_bytes_per_s` is then its links beyond the package."""

    def computes(self, tensor_format: str) -> bool:
        return tensor_format in self.dense_flops


def compute_format(dense_formats: Collection[str], tensor_format: str) -> str:
    """The format a chip with matrix units for `dense_formats` runs weights of `tensor_format` in: that format, if it
    has it, else BF16 (weight-only), or FP16 on a chip without BF16 (a V100 runs `--dtype half`)."""
    if tensor_format in dense_formats:
        return tensor_format
    return "bf16" if "bf16" in dense_formats else "fp16"


@dataclass(frozen=True, slots=True)
class NodeSpec:
    id: str = field(metadata=KEY)
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
    fabric_shape: str = "switched"
    """How the scale-up links are wired: switched, full_mesh, paired_mesh, torus, rack or pcie
    (`snippets.engine.topology`)."""
    torus_dims: int | None = None
    network_name: str | None = None
    """The scale-out NICs' fabric (InfiniBand NDR), where the node records them."""


@dataclass(frozen=True, slots=True)
class BlockScale:
    """A scale stored once per group of weights (4-bit formats): its cost is spread over the group."""

    group_size: int
    """Weights that share one scale."""
    scale_width: float
    """Storage bits of one scale (FP16: 16, E8M0: 8)."""
    zero_point_width: float | None = None
    """Storage bits of one zero point per group (asymmetric integer formats: 4); None if none is stored."""


@dataclass(frozen=True, slots=True)
class WeightBlock:
    """Block quantization: one scale per block of `rows` output rows x `cols` input columns of a weight matrix
    (vLLM's weight_block_size [block_n, block_k]). Tensor parallelism must cut every weight along block edges."""

    rows: int
    cols: int


@dataclass(frozen=True, slots=True)
class KernelGap:
    """An engine that has no kernel for a precision's products on some chips and stops at start (vLLM's CUTLASS W8A8
    path on Blackwell computes FP8 only; on CDNA 2 none of its ROCm FP8 kernels applies): no layout of that engine
    serves the precision there."""

    engine: str
    """The engine, as a memory policy names it (`MemoryPolicySpec.engine`: "vLLM")."""
    accelerators: frozenset[str]
    """The chips (accelerator ids) it has no kernel for."""
    sm: int | None = None
    """The chips' CUDA compute capability as the engine names it in its error (10.0: 100), where the error names it
    (vLLM's INT8 message: `deployment.int8_gap_message`)."""
    message: str | None = None
    """The engine's error word for word, where it names no chip (vLLM on ROCm finding no FP8 kernel); None where the
    engine words it from `sm` (INT8)."""


@dataclass(frozen=True, slots=True)
class PrecisionSpec:
    """A numeric precision of weights (or of the KV cache): its storage bits and the format a chip computes in. The one
    record of a precision: data/precisions.yaml validates into it (`snippets.data.schema.precisions.Precision` adds
    what the teaching pages read, its kind and float layout, its notes and sources)."""

    id: str = field(metadata=KEY)
    name: str
    width: float
    """Storage bits of one weight, before any per-group scales."""
    tensor_format: str
    """The matrix-unit format a chip computes in when it stores weights in this precision and supports it natively
    (FP8 weights: fp8; INT4 with group scales: int4). A chip without it converts the weights to BF16 before each
    product: the speed of BF16, the memory of this precision (weight-only)."""
    keeps_16bit: frozenset[Literal["embeddings", "lm_head"]] = frozenset()
    """Tensors its checkpoints keep at 16 bit (norms and routers always are)."""
    block_scale: BlockScale | None = None
    """Per-group scale, for formats that need one; None when scales are per tensor or per channel (negligible)."""
    weight_block: WeightBlock | None = None
    """Block-quantized checkpoints (DeepSeek-V3's and Qwen3's FP8, 128 x 128): every TP shard of a weight must be a
    multiple of the block, which vLLM checks when it creates the layer."""
    kv_cache_dtype: str = ""
    """vLLM's --kv-cache-dtype that keeps a KV cache in this format (a `CacheDType` of vllm/config/cache.py); "" for a
    weight format it has no value for (group- or block-scaled weights), refused as a KV precision."""
    kernel_gaps: tuple[KernelGap, ...] = ()
    """Engines that have no kernel for this format's weight products on some chips (`KernelGap`)."""

    def kernel_gap(self, engine: str, chip: str) -> KernelGap | None:
        """The gap that stops `engine` computing this precision on `chip`, or None where it has a kernel."""
        return next((g for g in self.kernel_gaps if g.engine == engine and chip in g.accelerators), None)

    @property
    def bits_per_param(self) -> float:
        """Storage bits per weight, per-group scale and zero point counted: 4 + (16 + 4) / 128 = 4.15625."""
        bs = self.block_scale
        if bs is None:
            return self.width
        zero = 0.0 if bs.zero_point_width is None else bs.zero_point_width
        return self.width + (bs.scale_width + zero) / bs.group_size

    @property
    def bytes_per_param(self) -> float:
        """Storage bytes per weight, per-group scale and zero point counted (`bits_per_param` / 8): FP16 2, INT8 1,
        bare INT4 0.5; INT4 with an FP16 scale and a 4-bit zero point per 128 weights (4 + 20/128) / 8 = 0.51953125;
        MXFP4 (one E8M0 scale per 32) 4.25 / 8 = 0.53125. Without a block scale it is `width_bytes`."""
        return self.bits_per_param / 8

    @property
    def width_bytes(self) -> float:
        """Bytes of one element as stored, before any per-group scales (`width` / 8): FP8 1, BF16 2."""
        return self.width / 8


@dataclass(frozen=True, slots=True)
class ServeDefaults:
    """A serving engine's scheduler limits for one class of device (vLLM's `EngineArgs` sets them from the device and
    the usage context)."""

    max_num_seqs: int
    """Sequences one engine (one DP rank) schedules at once at most."""
    max_num_batched_tokens: int
    """Tokens one step processes at most; the profiling run's dummy forward pass is this many tokens."""


@dataclass(frozen=True, slots=True)
class NonTorchAtTP:
    """Memory outside PyTorch's allocator per GPU at one TP degree, as a start-up log reports it."""

    tp: int
    memory: float
    """Bytes."""


@dataclass(frozen=True, slots=True)
class ExpertPadding:
    """How an engine's fused-MoE kernel lays out MXFP4 expert weights in memory: each expert's matrices padded to a
    multiple of `hidden` along the model's hidden size and of `intermediate` along its share of the expert's
    intermediate size (vLLM's `Mxfp4MoEMethod.create_weights` rounds both up per backend before it allocates), on
    `vendor`'s chips when `kernel` runs them."""

    kernel: str
    vendor: str
    hidden: int
    intermediate: int
    default: bool = False
    """The kernel the engine picks on `vendor`'s chips (or on `accelerators`) where no command names one."""
    accelerators: tuple[str, ...] = ()
    """The chips the entry is for, where the engine picks its kernel or pads by the chip's generation (vLLM by CUDA
    capability); empty: every chip of `vendor` that no entry names."""


@dataclass(frozen=True, slots=True)
class DeviceClass:
    """SGLang's defaults for devices below a memory size (`ServerArgs._handle_gpu_memory_settings`): the chunked
    prefill size and the largest batch captured in a CUDA graph, below and from `StaticReserve.large_tp`."""

    below: float | None
    """Bytes: a device whose management-tool total is under this takes the class (the last class: None, any)."""
    chunked_prefill: int
    graph_batch: int
    """The CUDA-graph batch cap below `large_tp`."""
    graph_batch_large_tp: int
    """The cap at `large_tp` and above."""


@dataclass(frozen=True, slots=True)
class StaticReserve:
    """SGLang's rule for its static pool when --mem-fraction-static is not given: the share of the device that weights
    and KV cache may take is (G - R) / G, rounded to three places, G the device's total as its management tool reports
    it and R what it keeps for activations and CUDA graphs: `base` + `per_prefill_token` x max(chunked prefill,
    `min_prefill_tokens`) + `per_graph_sequence` x the CUDA-graph cap + `per_parallel_gpu` x TP x PP, at least `floor`
    on a device above `floor_above`. Sizes in bytes."""

    base: float
    per_prefill_token: float
    min_prefill_tokens: int
    per_graph_sequence: float
    per_parallel_gpu: float
    floor: float
    floor_above: float
    large_tp: int
    """The TP degree from which a device class takes its larger CUDA-graph cap."""
    classes: tuple[DeviceClass, ...]
    """By rising `below`; the last class takes every larger device."""
    device_total: float | None = None
    """G in bytes once the policy is resolved for a chip (`MemoryPolicySpec.for_chip`), None before."""

    def device_class(self) -> DeviceClass:
        """The class of the resolved device (the last class before one is resolved)."""
        g = self.device_total
        return next((c for c in self.classes if g is not None and c.below is not None and g < c.below), self.classes[-1])

    def graph_cap(self, tp: int) -> int:
        """The largest batch captured in a CUDA graph at TP degree `tp` on the resolved device."""
        c = self.device_class()
        return c.graph_batch_large_tp if tp >= self.large_tp else c.graph_batch

    def reserved(self, tp: int, pp: int, chunk: int | None = None) -> float:
        """R in bytes on the resolved device at TP `tp` and PP `pp`, for chunks of `chunk` prompt tokens (the device
        class's where the command sets none: SGLang reads its chunked_prefill_size, given or defaulted)."""
        c = self.device_class()
        prefill = c.chunked_prefill if chunk is None else chunk
        r = (self.base + self.per_prefill_token * max(prefill, self.min_prefill_tokens)
             + self.per_graph_sequence * self.graph_cap(tp) + self.per_parallel_gpu * tp * pp)
        if self.device_total is not None and self.device_total > self.floor_above:
            r = max(r, self.floor)
        return r

    def fraction(self, tp: int, pp: int, chunk: int | None = None) -> float | None:
        """(G - R) / G rounded to three places, as SGLang sets mem_fraction_static; None before a device is resolved."""
        g = self.device_total
        return None if g is None else round((g - self.reserved(tp, pp, chunk)) / g, 3)


@dataclass(frozen=True, slots=True)
class AllreduceTable:
    """vLLM's all-reduce limits on one chip, as its release's tables give them for the chip's CUDA capability
    (vllm/distributed/device_communicators/all_reduce_utils.py and symm_mem.py): below `custom_max` bytes for its
    group size the custom all-reduce runs; from there, a BF16 message below `symm_max` goes to PyTorch's
    symmetric-memory all-reduce (multimem on the group sizes `multimem`, two-shot on the others); the rest to NCCL.
    A group size the table leaves out keeps the custom all-reduce's own limit and has no symmetric memory."""

    capability: str
    """The CUDA compute capability the release's tables name ("9.0": Hopper; "10.0": B200, GB200; "10.3": B300)."""
    accelerators: tuple[str, ...]
    """The accelerator ids of that capability whose GPUs meet in an NVSwitch (multicast)."""
    custom_max: tuple[tuple[int, float], ...]
    """(GPUs, bytes): CUSTOM_ALL_REDUCE_MAX_SIZES, which caps the custom all-reduce's own limit while symmetric
    memory is on."""
    symm_max: tuple[tuple[int, float], ...]
    """(GPUs, bytes): SYMM_MEM_ALL_REDUCE_MAX_SIZES."""
    multimem: tuple[int, ...]
    """Group sizes that run multimem (the switch adds the messages up); two-shot on the others."""
    symm_dtype_ok: bool = True
    """Whether the model's activations are in BF16, the only type the symmetric-memory path takes."""

    def custom_limit(self, n: int, own: float) -> float:
        return min(own, dict(self.custom_max).get(n, own))

    def symm_limit(self, n: int) -> float:
        """Bytes below which a message of `n` GPUs goes to symmetric memory (0: never)."""
        return dict(self.symm_max).get(n, 0.0) if self.symm_dtype_ok else 0.0

    def path(self, n: int, nbytes: float, own: float) -> str:
        """Where the release sends a message of `nbytes` on `n` GPUs while its symmetric-memory communicator is up
        (`own`: the custom all-reduce's own limit): "custom" below its capped limit, "multimem" or "symm-two-shot"
        below the table's limit, "nccl" above."""
        if nbytes < self.custom_limit(n, own):
            return "custom"
        if nbytes < self.symm_limit(n):
            return "multimem" if n in self.multimem else "symm-two-shot"
        return "nccl"


@dataclass(frozen=True, slots=True)
class MemoryPolicySpec:
    """How a serving engine budgets each GPU's memory: the pool it may take and what the pool must hold (vLLM:
    `data/policies.yaml`, `vllm-default`). The one record of a memory policy: data/policies.yaml validates into it
    (`snippets.data.schema.policies.MemoryPolicy` adds the engine's name, its usage context, the ranges of the
    figures, the notes, rationale and sources); sizes in bytes.

    vLLM: the pool is the total the runtime reports (`torch.cuda.mem_get_info`) x `utilization`; inside it the
    weights, the activation peak of a profiling run (a dummy forward pass of `max_num_batched_tokens` tokens and
    the sampler over one logit row per dummy request), the memory it finds outside PyTorch (by TP degree); the rest
    is the paged KV cache, in blocks of `kv_block_tokens`. CUDA graphs are captured after the KV cache is allocated,
    from the memory outside the pool."""

    id: str = field(metadata=KEY)
    name: str
    utilization: float
    """Share of the reported total the engine's pool takes (--gpu-memory-utilization)."""
    serve_defaults: ServeDefaults
    """max_num_seqs and max_num_batched_tokens. The record in the catalog holds the engine's defaults on a device of
    no special class; `setting` resolves them for the setting's chip (`for_chip`) and for a run that sets its own, so a
    deployment's `setting.memory_policy.max_num_seqs` is what the engine would use there."""
    sampler_bytes_per_logit: float | None
    """Bytes the profiling run's sampler holds at its peak per logit of its batch (rows x vocabulary): the logits
    and their float32 copy, sorted values and indices, probabilities. None where the engine runs no profiling run
    (`kv_share_of` "static")."""
    non_torch_by_tp: tuple[NonTorchAtTP, ...]
    """Memory outside PyTorch per GPU (CUDA context, NCCL and custom all-reduce buffers), by TP degree, smallest first
    (a layout with pipeline stages reads it at TP x PP). A degree between two measured ones takes the figure of the
    largest measured degree below it."""
    cuda_graphs: float
    """Bytes the captured CUDA graphs take per GPU."""
    cuda_graphs_in_pool: bool
    """False: CUDA graphs are captured after the KV cache is allocated, from the memory outside the pool."""
    kv_block_tokens: int
    """Tokens per block of the paged KV cache: a sequence's cache is allocated in whole blocks."""
    hybrid_kv_cache: bool
    """Sliding-window and chunked-attention layers hold their window (chunk) plus one step; False: full attention."""
    large_device_defaults: ServeDefaults | None = None
    """The same limits on a large device (vLLM: a reported total of at least `large_device_memory`, not an A100)."""
    large_device_memory: float | None = None
    """Reported total in bytes from which a device takes the large defaults (vLLM: 70 GiB), None if the engine has
    none."""
    large_device_excludes: frozenset[str] = frozenset()
    """Chip ids that keep the general defaults whatever they report (vLLM: A100s)."""
    kv_share_of: Literal["pool", "free", "static"] = "pool"
    """"pool": the KV cache is what the pool (reported total x `utilization`) leaves once the weights, the activation
    peak and the memory outside PyTorch are in (vLLM's --gpu-memory-utilization); "free": it is `utilization` of what
    the device has free after those (TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction); "static": it is the
    share (`share`) of what the device has free at start (the total less the memory outside PyTorch) less the
    weights, with no profiling run: activations and CUDA graphs live in the rest (SGLang's mem_fraction_static,
    `ModelRunner.profile_max_num_token`)."""
    profile_rows: Literal["max_num_seqs", "prompts"] = "max_num_seqs"
    """Logit rows of the profiling run's sampler: "max_num_seqs" (vLLM: one per dummy request, min(max_num_seqs,
    max_num_batched_tokens)); "prompts" (TensorRT-LLM: dummy prompts of max_model_len tokens filling
    max_num_batched_tokens, one logit each)."""
    cuda_graph_batch: Literal["vllm", "max_num_seqs", "device_class", "none"] | int = "vllm"
    """Which steps run in CUDA graphs: "vllm" (the time model's cap, min(2 x max_num_seqs, 512), within the step's
    token budget); "max_num_seqs" (every step of up to max_num_seqs tokens: TensorRT-LLM's padded graphs up to its
    max batch size); a number n (every step of up to n tokens, and none above: TensorRT-LLM's default graphs, every
    batch of 1 to 31 and then 32, 64 and 128 exactly, without padding, which this takes as up to 31; SGLang's
    --cuda-graph-max-bs n, every batch padded up to its next captured size, `setting`'s `cuda_graph_max_batch`); "none" (no
    step: a run without CUDA graphs, where a row's harness says so, `setting`'s `cuda_graphs`); "device_class" (every
    step of up to `static_reserve`'s cap for the device and TP degree: SGLang pads a batch up to its next captured
    size)."""
    chunked_prefill: bool = True
    """True: a step fills what the decoding sequences leave of its token budget with prompt tokens, a prompt split
    across steps where the budget ends inside it (vLLM v1's chunked prefill); False: a step takes whole prompts that
    fit what is left, and a prompt that does not waits (TensorRT-LLM without chunked context)."""
    mixed_steps: bool = True
    """True: a step carries prompt tokens beside the decoding sequences' (vLLM v1's and TensorRT-LLM's in-flight
    batching); False: prompts run in steps of their own, all of the token budget theirs, and the decoding sequences
    wait for each (SGLang's Scheduler.get_next_batch_to_run runs a waiting prefill batch alone unless
    --enable-mixed-chunk, off by default)."""
    graphs_decode_only: bool = False
    """True: only a step without prompt tokens replays a CUDA graph, a step with any runs eagerly (SGLang captures
    decode batches only: its extend batches run eagerly unless --enable-piecewise-cuda-graph; TensorRT-LLM's PyTorch
    backend replays one only for a batch with no context request, ScheduledRequests.can_run_cuda_graph); False: a step
    of up to the cap replays one whatever it holds (vLLM V1's piecewise graphs cover mixed steps)."""
    static_reserve: StaticReserve | None = None
    """SGLang's rule (`kv_share_of` "static"): the share of the device the static pool takes, from the device and the
    layout, where the command gives none (`utilization` then stands for a command that gives one, or for a device
    whose total is unknown: SGLang's 0.88)."""
    fraction_given: bool = False
    """True where the run's command sets the share itself (`utilization`), so `static_reserve`'s rule is not used."""
    engine: str = ""
    """The serving engine whose budget and scheduling this is (vLLM, SGLang, TensorRT-LLM): which engine's own
    collective timings price its steps, where a chip has them (`TimeModelSpec.for_chip`)."""
    gemm_kernel: str = ""
    """The engine's own dense GEMM ops where they differ from the other engines' ("trtllm"): their measured figures
    price its matrix products where a chip has them (`ChipEfficiency.gemm_for`), else the engines' median."""
    moe_kernel: str = ""
    """The fused-MoE kernel the engine runs unless its command names another ("cutlass": TensorRT-LLM's PyTorch
    backend, whose moe_config.backend defaults to CUTLASS; a row or a command may name "triton", SGLang's, where its
    release runs it): its own measured figures price the experts where a chip has them, their arithmetic
    (`ChipEfficiency.moe_for`) and, where measured with its fixed cost, their weight stream (`moe_stream_for`,
    `moe_fixed_for`); "" or a kernel without figures on the chip: the engines' median."""
    host_per_request: float = 0.0
    """Seconds of host work the engine's executor spends on each request of a step (its Python loop's bookkeeping,
    scheduling, input preparation and sampling per request: TensorRT-LLM's PyTorch executor); 0 where no source
    times it. Where the executor overlaps it with the GPU's work, a step lasts at least that long; with
    `stage_host`, every pipeline stage adds it to its own work."""
    overlap_schedule: bool = False
    """True: at one pipeline stage the scheduler issues a step's kernels while the GPU still runs the step before
    (SGLang's overlap scheduler, on unless --disable-overlap-schedule; TensorRT-LLM's PyTorch executor's, on unless
    disable_overlap_scheduler), so an eager step's issue waits only for what the step before does not cover."""
    host_dispatch: float | None = None
    """Seconds the host takes to issue one kernel of a step run outside a CUDA graph under this engine, where a source
    times its eager forward (SGLang's Python model code: its own log of a prefill forward, eager and in a graph);
    None: the time model's figure (`TimeModelSpec.host_dispatch_s`, one call through vLLM's custom op)."""
    stage_host: bool = False
    """True: with pipeline stages, each stage's process runs the executor's loop for every micro-batch in turn,
    its host time per step (the time model's and `host_per_request`'s) added to the stage's GPU work, not hidden
    behind it (TensorRT-LLM's PyTorch executor before its non-blocking pipeline loop); False: the host's time is
    paid once per micro-batch."""
    symm_mem: bool = False
    """Whether the engine sends mid-sized all-reduces to PyTorch's symmetric memory (vLLM since 0.11.0:
    VLLM_ALLREDUCE_USE_SYMM_MEM on by default), on the chips `allreduce_tables` lists."""
    allreduce_tables: tuple[AllreduceTable, ...] = ()
    """The release's all-reduce limits per CUDA capability, each with the accelerators it covers."""
    mxfp4_experts: tuple[ExpertPadding, ...] = ()
    """How the release's fused-MoE kernels pad an MXFP4 checkpoint's experts, by kernel, vendor and the chips where
    the release picks its kernel by generation (none: the checkpoint's own shapes)."""
    vision_encoder_vendors: frozenset[str] = frozenset()
    """The vendors on whose chips the engine builds a multimodal checkpoint's image encoder and projector
    (`Arch.vision`) and so holds their weights, in 16 bits (vLLM's model code on NVIDIA and AMD GPUs and, through
    vllm-gaudi's subclass, on Intel's Gaudi, unless --limit-mm-per-prompt gives images 0, its quantization not applied
    to them; not on Google's TPUs, where tpu-inference's JAX Llama 4 loads the text model only). Empty: the text
    model only everywhere (SGLang unless --enable-multimodal), or no source read."""

    def loads_vision_encoder(self, chip: ChipSpec) -> bool:
        """Whether the engine builds a multimodal checkpoint's image encoder on `chip` (`vision_encoder_vendors`)."""
        return chip.vendor in self.vision_encoder_vendors

    @property
    def max_num_seqs(self) -> int:
        """Sequences one engine (one DP rank) runs at once at most (`serve_defaults`)."""
        return self.serve_defaults.max_num_seqs

    @property
    def max_num_batched_tokens(self) -> int:
        """Tokens one step processes at most (`serve_defaults`)."""
        return self.serve_defaults.max_num_batched_tokens

    def allreduce_table(self, chip_id: str, bf16: bool = True) -> AllreduceTable | None:
        """The engine's all-reduce limits on `chip_id` where it runs symmetric memory there (`bf16`: whether the
        model's activations are BF16, the only type that path takes); None: its custom all-reduce's own limit."""
        t = next((t for t in self.allreduce_tables if chip_id in t.accelerators), None) if self.symm_mem else None
        return None if t is None else t if bf16 else replace(t, symm_dtype_ok=False)

    def is_large(self, chip: ChipSpec) -> bool:
        """Whether vLLM gives `chip` its large-device defaults (reported total at least the threshold, not excluded)."""
        return (self.large_device_memory is not None and chip.capacity_bytes >= self.large_device_memory
                and chip.id not in self.large_device_excludes)

    def for_chip(self, chip: ChipSpec) -> MemoryPolicySpec:
        """This policy as it runs on `chip`: `max_num_seqs` and `max_num_batched_tokens` as vLLM sets them there; with
        `static_reserve`, the device's total resolved (the management tool's, else the label) and the step's token
        budget the device class's chunked prefill."""
        out = self
        if self.static_reserve is not None:
            r = replace(self.static_reserve, device_total=chip.tool_total_bytes or chip.label_bytes)
            out = replace(out, static_reserve=r, serve_defaults=ServeDefaults(
                self.max_num_seqs, r.device_class().chunked_prefill))
        if not self.is_large(chip) or self.large_device_defaults is None:
            return out
        return replace(out, serve_defaults=self.large_device_defaults)

    def share(self, tp: int, pp: int) -> float:
        """The share of memory the pool takes at TP `tp` and PP `pp`: `static_reserve`'s fraction where the policy has
        one, a device is resolved and the command gives none (its R counting the step's token budget as the chunked
        prefill size); `utilization` otherwise."""
        r = self.static_reserve
        f = None if r is None or self.fraction_given else r.fraction(tp, pp, self.max_num_batched_tokens)
        return self.utilization if f is None else f

    def graph_cap(self, tp: int) -> int | None:
        """The CUDA-graph cap `static_reserve` gives at TP `tp` (SGLang's cuda_graph_max_bs), None without one."""
        return None if self.static_reserve is None else self.static_reserve.graph_cap(tp)

    def mxfp4_padding(self, chip: ChipSpec) -> tuple[int, int]:
        """(hidden, intermediate) multiples the engine pads an MXFP4 checkpoint's experts to on `chip`: the kernel the
        run names (`moe_kernel`), else the one the engine picks there; the chip's own entries before its vendor's;
        (1, 1) where none is recorded."""
        own = [e for e in self.mxfp4_experts if e.vendor == chip.vendor and chip.id in e.accelerators]
        rest = [e for e in self.mxfp4_experts if e.vendor == chip.vendor and not e.accelerators]
        for group in (own, rest):
            e = next((e for e in group if (e.kernel == self.moe_kernel if self.moe_kernel else e.default)), None)
            if e is not None:
                return (e.hidden, e.intermediate)
        return (1, 1)

    def non_torch_bytes(self, tp: int) -> float:
        """Memory outside PyTorch per GPU at TP degree `tp`: the figure of the largest measured degree not above it."""
        out = self.non_torch_by_tp[0].memory
        for point in self.non_torch_by_tp:
            if point.tp <= tp:
                out = point.memory
        return out


@dataclass(frozen=True, slots=True)
class DisaggregationSpec:
    """When the site recommends disaggregated prefill and decode over serving both on one replica: only when the
    cheapest disaggregated configuration meeting the targets costs at least `min_saving` less per output token than
    the cheapest aggregated one. The search's cheapest stays the cheapest; this names what a team would deploy."""

    min_saving: float = 0.0
    """The least saving per output token, a share of the aggregated configuration's cost (0.10: 10 % cheaper); 0:
    the cheaper of the two, whichever it is."""


@dataclass(frozen=True, slots=True)
class LayoutPolicySpec:
    """A named choice among the layouts an engine accepts: what the site would rent, not what engines require. The
    one record of a layout policy: data/policies.yaml validates into it (`snippets.data.schema.policies.LayoutPolicy`
    adds the rationale and sources)."""

    id: str = field(metadata=KEY)
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
    disaggregation: DisaggregationSpec = DisaggregationSpec()
    """When a search recommends disaggregated serving over its cheapest aggregated configuration."""


@dataclass(frozen=True, slots=True)
class GemmEfficiency:
    """How well one chip's matrix products run in one format."""

    weights: tuple[tuple[float, float], ...]
    """(tokens, share of the HBM datasheet bandwidth the weight stream reaches), tokens rising."""
    compute: float
    """Share of the dense peak reached with every dimension large."""
    compute_ramp: tuple[tuple[float, float], ...] = ()
    """(FLOPs of one call, fraction of `compute`) rising to a last fraction of 1, where measured: a compute-bound
    product of fewer FLOPs (a thin TP slice, a batch of hundreds of tokens) fills the GPU's units for less of its
    time; none: `compute` at any size (`compute_at`)."""

    def compute_at(self, flops: float) -> float:
        """The share of the dense peak a product of `flops` FLOPs reaches: `compute` times its ramp (`ramp`)."""
        return self.compute * ramp(self.compute_ramp, flops)

    def weight_fraction(self, tokens: float) -> float:
        """The weight stream's share at `tokens` tokens: linear in log2(tokens) between the measured points, flat
        beyond them."""
        return curve_at(self.weights, tokens,
                        lambda t0, f0, t1, f1, t: f0 + (f1 - f0) * math.log2(t / t0) / math.log2(t1 / t0))

    def stream_share(self, tokens: float) -> float:
        """The share a GEMM of `tokens` rows is charged for its weight stream: the measured curve
        (`weight_fraction`), but never above its share at fewer rows. Where a measured curve rises with the rows (B200
        FP8: 0.71 at one token, 0.78 at 64), more rows would stream the same weights in less time, and a step of a
        larger batch would take less time than a smaller one; capped so, a GEMM's achieved FLOP/s never rises faster
        than its rows, and its time never falls as the batch grows."""
        out = self.weight_fraction(tokens)
        for t, f in self.weights:
            if t > tokens:
                break
            out = min(out, f)
        return out


@dataclass(frozen=True, slots=True)
class AttentionGrid:
    """A fused attention kernel's share of the dense BF16 peak in prefill, measured by the work it is given: the
    query heads times the prompts on one GPU (`heads`, rising), and the causal length each prompt attends over
    (`lengths`, rising); `shares[i][j]` at `heads[i]` and `lengths[j]`. Short prompts and few heads leave the
    kernel's tiles and the GPU's units idle; long ones approach its large-batch share."""

    heads: tuple[float, ...]
    lengths: tuple[float, ...]
    shares: tuple[tuple[float, ...], ...]

    def share(self, heads: float, length: float) -> float:
        """The share at `heads` and `length`: straight between the points on log-log axes in each direction
        (bilinear in the logarithms), held at the edge beyond the grid. Between two points the data checks that the
        share grows no faster than the heads, nor than the square of the length (the work), so more heads or a
        longer prompt never take less time."""
        i, u = _bracket(self.heads, heads)
        j, v = _bracket(self.lengths, length)
        s = self.shares
        lo = _log_mix(s[i][j], s[i][j + 1], v) if v else s[i][j]
        if not u:
            return lo
        hi = _log_mix(s[i + 1][j], s[i + 1][j + 1], v) if v else s[i + 1][j]
        return _log_mix(lo, hi, u)


def _bracket(points: tuple[float, ...], x: float) -> tuple[int, float]:
    """The index of the point at or below `x` and `x`'s place towards the next on a log axis (0 to 1), held at
    the ends: (0, 0) below the first point, (last, 0) beyond the last."""
    if x <= points[0] or len(points) == 1:
        return 0, 0.0
    for k in range(len(points) - 1):
        if x < points[k + 1]:
            return k, math.log(x / points[k]) / math.log(points[k + 1] / points[k])
    return len(points) - 1, 0.0


def _log_mix(a: float, b: float, t: float) -> float:
    return float(a * (b / a) ** t)


MOE_KERNELS = ("cutlass", "trtllm-gen", "deepgemm", "triton", "marlin")
"""The fused-MoE kernels an engine may be said to run (`MemoryPolicySpec.moe_kernel`; data/'s `MoeKernel`)."""


def moe_key(tensor_format: str, kernel: str) -> str:
    """The key of one fused-MoE kernel's own compute figures in `ChipEfficiency`'s maps: "fp4/cutlass"."""
    return f"{tensor_format}/{kernel}"


@dataclass(frozen=True, slots=True)
class ChipEfficiency:
    """The shares of its peaks one chip's kernels reach, each from data/efficiencies.yaml or the stated default."""

    hbm: float
    """A streaming kernel's share of the HBM datasheet bandwidth (attention's KV reads, elementwise work)."""
    attention: float
    """A fused attention kernel's share of the dense BF16 peak in prefill (at large work, where `attention_grid`
    is measured)."""
    moe: Mapping[str, float] = field(hash=False)
    """By tensor format: a fused MoE layer's grouped expert GEMMs' share of the dense peak at large batch, where
    measured (no default), with the experts sliced by tensor parallelism; it sets the experts' compute time only
    (`step._moe_ops`). A chip or format without one keeps the dense GEMM's share. Keyed by the format for the
    engines' median, and by `moe_key(format, kernel)` for one kernel's own figure (the four `moe_*` compute maps
    alike): an engine that runs that kernel reads it (`MemoryPolicySpec.moe_kernel`), any other the median."""
    moe_whole: Mapping[str, float] = field(hash=False)
    """The same with whole experts on each GPU (expert parallelism, or one GPU)."""
    gemm: Mapping[str, GemmEfficiency] = field(hash=False)
    """By tensor format."""
    default_gemm: GemmEfficiency
    """For a format the chip has no measurement of."""
    moe_weights: Mapping[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By tensor format: a fused MoE layer's expert weight stream, (rows each touched expert sees, share of the HBM
    datasheet bandwidth), rows rising, where measured (no default). A chip or format without one streams its experts
    at the dense GEMM's share (`moe_stream_for`)."""
    moe_fixed: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """By `moe_key(format, kernel)`: a kernel's own fixed cost a fused MoE layer in seconds, where its weight stream
    is measured with it (`moe_weights` under the same key): the experts op's fixed part in place of the time model's
    count of its kernels (`moe_fixed_for`)."""
    moe_fixed_hidden: Mapping[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By `moe_key(format, kernel)`: how that fixed cost scales with the model's hidden size, (hidden size, multiple of
    `moe_fixed`), sizes rising, where measured (`moe_fixed_for`)."""
    moe_ramp: Mapping[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By tensor format: the experts' compute share as each touched expert sees more rows, (rows, fraction of the
    large-batch share `moe`), rows rising to a last fraction of 1, where measured; none: the large-batch share at any
    rows (`moe_ramp_for`)."""
    moe_ramp_whole: Mapping[str, tuple[tuple[float, float], ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """The same with whole experts on each GPU (of `moe_whole`)."""
    moe_columns: Mapping[str, tuple[float, tuple[tuple[float, float], ...]]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By tensor format: the columns of each expert a GPU held where `moe` was read, and the large-batch share by the
    columns a GPU holds, (columns, share), where measured (`moe_columns_for`)."""
    moe_columns_whole: Mapping[str, tuple[float, tuple[tuple[float, float], ...]]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """The same for `moe_whole`."""
    attention_grid: AttentionGrid | None = None
    """The prefill attention share by heads and prompt length, where measured; None: `attention` at any size."""
    kv_stream: tuple[tuple[float, float], ...] = ()
    """Decode attention's share of the HBM datasheet bandwidth as it reads the KV cache, by the cached tokens each
    sequence attends, (tokens, share), tokens rising, where measured (`kv_share`); none: a streaming kernel's `hbm`."""
    kv_fixed: float | None = None
    """Decode attention's own fixed cost a layer in seconds, where `kv_stream` is measured net of it: the attention
    op's fixed part in place of the time model's count of its kernels."""
    kv_own: Mapping[str, tuple[tuple[tuple[float, float], ...], float]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By `moe_key(cache format, engine)` ("fp8/vLLM"): one engine's decode kernel over an 8-bit cache, its share by
    context and its fixed cost a layer, where measured (`kv_for`)."""

    def kv_for(self, kv_format: str, engine: str) -> tuple[tuple[tuple[float, float], ...], float | None]:
        """The curve and fixed cost decode attention reads a `kv_format` cache at under `engine`: the engine's own
        where measured (an 8-bit cache, whose kernels differ by engine), else the chip's 16-bit one (`kv_stream`,
        `kv_fixed`; TensorRT-LLM's FP8 kernel reaches about its BF16 share: scripts/derive_kv_stream.py)."""
        return self.kv_own.get(moe_key(kv_format, engine), (self.kv_stream, self.kv_fixed))

    def kv_share(self, context: float, kv_format: str = "", engine: str = "") -> float:
        """Decode attention's share of the HBM datasheet bandwidth when each sequence attends `context` cached tokens
        of a `kv_format` cache under `engine` (`kv_for`; the 16-bit curve by default): the measured curve (straight
        between its points on log-log axes, held at its ends, `ramp`), else `hbm`. Short contexts give each (sequence,
        head) block little to read, and the kernel's fixed work per block shows."""
        curve = self.kv_for(kv_format, engine)[0]
        return ramp(curve, context) if curve else self.hbm

    def gemm_for(self, tensor_format: str, kernel: str = "") -> GemmEfficiency:
        """The dense GEMMs' figures in `tensor_format`: `kernel`'s own (an engine's own GEMM ops, keyed
        `moe_key(format, kernel)`) where measured, else the engines' median, else the chip's default."""
        own = self.gemm.get(moe_key(tensor_format, kernel)) if kernel else None
        return own or self.gemm.get(tensor_format, self.default_gemm)

    def moe_stream_for(self, tensor_format: str, kernel: str = "") -> GemmEfficiency:
        """The curve a fused MoE layer streams its experts' weights at in `tensor_format`: `kernel`'s own where measured
        (with its fixed cost, `moe_fixed_for`), else the engines' median, else the dense GEMM's (the returned `compute`
        is the dense GEMM's either way; the experts' arithmetic is `moe_for`)."""
        dense = self.gemm_for(tensor_format)
        own = moe_key(tensor_format, kernel)
        measured = self.moe_weights.get(own if kernel and own in self.moe_fixed else tensor_format)
        return dense if measured is None else GemmEfficiency(measured, dense.compute, dense.compute_ramp)

    def measures_kernel(self, tensor_format: str, kernel: str) -> bool:
        """Whether any of `kernel`'s own MoE figures in `tensor_format` is measured on the chip (else it reads the
        engines' median, as an engine with no kernel named does)."""
        own = moe_key(tensor_format, kernel)
        return any(own in m for m in (self.moe, self.moe_whole, self.moe_fixed, self.moe_weights))

    def moe_fixed_for(self, tensor_format: str, kernel: str = "", hidden: float = 0.0) -> float | None:
        """`kernel`'s own fixed cost a fused MoE layer in `tensor_format` (seconds), where its weight stream is measured
        with it, for a model of `hidden` hidden size where the cost is measured by it (`moe_fixed_hidden`: straight
        between its points, held at its ends); None: the time model's count of kernels."""
        own = moe_key(tensor_format, kernel)
        fixed = self.moe_fixed.get(own) if kernel else None
        curve = self.moe_fixed_hidden.get(own, ())
        return fixed if fixed is None or not curve or hidden <= 0 else fixed * linear(curve, hidden)

    def _moe_key(self, tensor_format: str, kernel: str, whole: bool) -> str:
        """The key of the figures the experts' arithmetic reads: `kernel`'s own where the chip has its share in
        `tensor_format` (sliced or `whole`), else the engines' median (the format). Its ramp and columns curve go
        with its share: an entry of a kernel carries both (the data checks it)."""
        own = moe_key(tensor_format, kernel)
        return own if kernel and own in (self.moe_whole if whole else self.moe) else tensor_format

    def moe_for(self, tensor_format: str, *, whole: bool = False, kernel: str = "") -> float:
        """The experts' compute share in `tensor_format`, sliced by tensor parallelism or `whole` on each GPU, as
        `kernel` reaches it where measured, else the engines' median: its measured figure, else the dense GEMM's."""
        measured = (self.moe_whole if whole else self.moe).get(self._moe_key(tensor_format, kernel, whole))
        return self.gemm_for(tensor_format).compute if measured is None else measured

    def moe_columns_for(self, tensor_format: str, *, whole: bool = False,
                        kernel: str = "") -> tuple[float, tuple[tuple[float, float], ...]]:
        """The experts' compute share by the columns per GPU in `tensor_format` (`moe_columns`, `moe_columns_whole`),
        `kernel`'s own where measured: the columns `moe_for` was read at and the curve, or (1, ()) where none is
        measured (a factor of 1 at any columns: `columns_factor`)."""
        key = self._moe_key(tensor_format, kernel, whole)
        return (self.moe_columns_whole if whole else self.moe_columns).get(key, (1.0, ()))

    def moe_ramp_for(self, tensor_format: str, *, whole: bool = False,
                     kernel: str = "") -> tuple[tuple[float, float], ...]:
        """The experts' compute ramp in `tensor_format` (`moe_ramp`, `moe_ramp_whole`), `kernel`'s own where measured,
        or () where none is measured (a ramp of 1 at any rows: `ramp`)."""
        return (self.moe_ramp_whole if whole else self.moe_ramp).get(self._moe_key(tensor_format, kernel, whole), ())


def columns_factor(reference: float, points: tuple[tuple[float, float], ...], columns: float) -> float:
    """How a fused MoE layer's large-batch share at `columns` of each expert per GPU compares with its share at
    `reference` columns (where `moe_for` was read): the ratio of the measured curve at the two, each read straight
    between its points on a log scale of columns and held at its end points beyond them; 1 without points."""
    def at(c: float) -> float:
        return curve_at(points, c, lambda c0, s0, c1, s1, x: s0 + (s1 - s0) * math.log(x / c0) / math.log(c1 / c0))

    return at(columns) / at(reference)


def curve_at(points: tuple[tuple[float, float], ...], x: float,
             between: Callable[[float, float, float, float, float], float]) -> float:
    """A measured curve's value at `x`: `between(x0, y0, x1, y1, x)` on the segment of its points that holds `x`, the
    first point's value below them, the last's beyond; 1 without points. The curves read it each with its own
    interpolation (`linear`, `ramp`, `columns_factor`, `GemmEfficiency.weight_fraction`)."""
    if not points:
        return 1.0
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x <= x1:
            return between(x0, y0, x1, y1, x)
    return points[-1][1]


def ramp(points: tuple[tuple[float, float], ...], rows: float) -> float:
    """The fraction of its large-batch compute share a fused MoE layer's expert GEMMs reach when each touched expert
    sees `rows` rows: a power of the rows between the measured points (straight on log-log axes), the first point's
    fraction below them, the last's (1) beyond; 1 without points. Between two points whose fraction grows no faster
    than their rows (the data checks it), the layer's arithmetic time never falls as its rows grow."""
    return curve_at(points, rows,
                    lambda r0, f0, r1, f1, r: float(f0 * (r / r0) ** (math.log(f1 / f0) / math.log(r1 / r0))))


def linear(points: tuple[tuple[float, float], ...], x: float) -> float:
    """The value of a measured curve at `x`: straight between its points, the first's below them, the last's beyond;
    1 without points."""
    return curve_at(points, x, lambda x0, y0, x1, y1, v: y0 + (y1 - y0) * (v - x0) / (x1 - x0))


@dataclass(frozen=True, slots=True)
class AlphaBetaSpec:
    """A collective algorithm's cost: `latency_s` (+ `per_peer_s` per GPU beyond two) and its payload at
    `efficiency` times the group's per-direction link bandwidth."""

    latency_s: float
    efficiency: float
    per_peer_s: float = 0.0


@dataclass(frozen=True, slots=True)
class ChipCollectivesSpec:
    """A chip's own custom all-reduce factors under one engine, fitted on its published timings, in place of the
    time model's."""

    engine: str
    one_shot: AlphaBetaSpec
    two_shot: AlphaBetaSpec
    one_stage: tuple[tuple[int, float], ...] = ()
    """(largest group, message bytes below which) the engine's kernel runs one stage; empty: vLLM's rule."""


@dataclass(frozen=True, slots=True)
class TimeModelSpec:
    id: str = field(metadata=KEY)
    name: str
    chips: Mapping[str, ChipEfficiency] = field(hash=False)
    """Per accelerator id: its efficiencies, measured parts and defaults merged. Looked up by id (`chip`), so a
    table that notes its lookups notes the chips a time is computed on (`snippets.pages.sources`)."""
    default: ChipEfficiency
    """For an accelerator no entry covers."""
    link_fraction: float
    """Share of a link a point-to-point copy reaches (pipeline sends; the network's share of a collective)."""
    nvlink_hop_s: float
    pcie_hop_s: float
    network_hop_s: float
    kernel_s: float
    """A kernel's fixed cost inside a CUDA graph (launch, ramp, tail)."""
    host_dispatch_s: float
    """The host's time to issue one operation outside a CUDA graph."""
    graph_max_tokens: int
    """Steps of at most this many tokens replay a CUDA graph; larger ones run eagerly."""
    custom_allreduce_max_bytes: float
    one_shot: AlphaBetaSpec
    two_shot: AlphaBetaSpec
    nccl: AlphaBetaSpec
    alltoall: AlphaBetaSpec
    step_overhead_s: float
    """Host time per engine step the GPU waits for (fitted)."""
    vendor_kernel_fraction: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Per vendor: the share of the measured or default kernel efficiencies its software reaches (fitted; 1 if absent)."""
    sources: tuple[tuple[str, str], ...] = ()
    """The (file, id) of every data/ entry the record was built from."""
    bands: tuple[BandEntry, ...] = ()
    """The error bands by regime, computed from the test measurements (`snippets.engine.bands`)."""
    chip_collectives: Mapping[str, tuple[ChipCollectivesSpec, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """Per accelerator id whose own custom all-reduce timings are published: its one-shot and two-shot factors under
    each engine whose kernel was timed on it (`for_chip`; one entry per engine); every other chip, or engine, takes
    `one_shot` and `two_shot`."""
    chip_nccl: Mapping[str, AlphaBetaSpec] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Per accelerator id whose own NCCL all-reduce timings are published: its NCCL factors, under every engine
    (`for_chip`); every other chip takes `nccl`."""
    one_stage: tuple[tuple[int, float], ...] = ()
    """(largest group, message bytes below which) custom all-reduce runs one stage, where the engine's kernel on this
    chip picks otherwise than vLLM's (`for_chip`); empty: vLLM's rule (`snippets.engine.collectives`)."""
    multimem: AlphaBetaSpec | None = None
    """PyTorch's symmetric-memory multimem all-reduce (the NVSwitch adds the messages up), fitted on its timings."""
    symm_two_shot: AlphaBetaSpec | None = None
    """PyTorch's symmetric-memory two-shot all-reduce, fitted on its timings."""
    allreduce_table: AllreduceTable | None = None
    """The engine's all-reduce limits on this chip, where its release routes messages to symmetric memory (`for_chip`
    from the memory policy's tables); None: the custom all-reduce below `custom_allreduce_max_bytes`, NCCL above."""
    prompt_step_host_s: float = 0.0
    """Host time a step adds when it carries prompt tokens, over `step_overhead_s`: none in data/'s time models. A
    what-if: the predictions page asks how much of a light-load TTFT gap the measured TPOT leaves room for inside the
    steps, as the other requests' decoding waits for every step that carries a prompt."""

    def chip(self, chip_id: str) -> ChipEfficiency:
        return self.chips.get(chip_id, self.default)

    def for_chip(self, chip_id: str, engine: str, table: AllreduceTable | None = None) -> TimeModelSpec:
        """This time model as it prices a step on `chip_id` under `engine`: the chip's own custom all-reduce where
        that engine's was timed on it, the chip's own NCCL all-reduce where it was timed, and `table`, the engine's
        all-reduce limits on the chip where its release sends messages to symmetric memory (its memory policy's)."""
        c = next((c for c in self.chip_collectives.get(chip_id, ()) if c.engine == engine), None)
        one, two, stage = (self.one_shot, self.two_shot, ()) if c is None else (c.one_shot, c.two_shot, c.one_stage)
        nccl = self.chip_nccl.get(chip_id, self.nccl)
        if (one, two, stage, nccl, table) == (self.one_shot, self.two_shot, self.one_stage, self.nccl,
                                              self.allreduce_table):
            return self
        return replace(self, one_shot=one, two_shot=two, one_stage=stage, nccl=nccl, allreduce_table=table)

    def kernel_fraction(self, vendor: str) -> float:
        return self.vendor_kernel_fraction.get(vendor, 1.0)


@dataclass(frozen=True, slots=True)
class LatencyTargetSpec:
    """The service-level objective a scenario is served to: the time to first token (queueing included) and the
    time per output token after the first, each a limit a request's figure must not exceed, in seconds."""

    ttft: float
    tpot: float


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    """What a deployment is sized for: where, under which policies, for how many sequences of what length, and the
    latency target it is served to. The one record of a scenario: data/scenarios.yaml validates into it
    (`snippets.data.schema.scenarios.Scenario` adds the rationale and sources)."""

    id: str = field(metadata=KEY)
    name: str
    node: str
    """Id of the node whose accelerator and size a page uses by default."""
    memory_policy: str
    layout_policy: str
    time_model: str
    """Id of the time model (data/policies.yaml, kind time) the scenario's times use."""
    input_tokens: int
    output_tokens: int
    concurrency: int
    """Sequences served at once, each holding input + output tokens of KV cache at its end."""
    kv_precision: str
    """Id of the precision the KV cache is stored in for a model with no published checkpoint (GPT-3). Otherwise the
    engine stores it as vLLM's --kv-cache-dtype auto does, in the model's dtype, unless told another."""
    target: LatencyTargetSpec | None = None
    """The latency target the scenario is served to; None where none is set."""

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def ttft_s(self) -> float | None:
        """The target's time to first token, None without a target."""
        return None if self.target is None else self.target.ttft

    @property
    def tpot_s(self) -> float | None:
        """The target's time per output token, None without a target."""
        return None if self.target is None else self.target.tpot


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
    sources: tuple[tuple[str, str], ...] = ()
    """The (file, id) of the data/ entries the price was built from: the site's prices of this accelerator."""

    @property
    def as_of(self) -> str:
        """The month the price was read, as every cost shows it beside its figure: "Sep 2026"; "" if not recorded."""
        if len(self.read) < 7:
            return ""
        return f"{MONTHS[int(self.read[5:7]) - 1]} {self.read[:4]}"


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

    def node_of(self, chip_id: str) -> NodeSpec | None:
        """The first node built from this accelerator, or None."""
        return next((n for n in self.nodes.values() if n.chip == chip_id), None)
