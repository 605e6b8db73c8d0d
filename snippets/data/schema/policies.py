"""data/policies.yaml: the named choices of sizing and serving (memory, layout, the time model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, Sources, _read_only, _Strict, as_written, obeys
from snippets.data.quantities import (
    ByteSize,
    Duration,
    _Measure,
    in_base,
)
from snippets.data.schema.accelerators import Vendor
from snippets.data.schema.efficiencies import GemmKernel, MoeKernel
from snippets.data.units import (
    BYTE_UNITS,
)
from snippets.engine import specs
from snippets.engine.specs import DisaggregationSpec, LayoutPolicySpec, MemoryPolicySpec

Share = Annotated[float, Field(gt=0, lt=1, strict=True)]


class RuntimeBytes(_Measure):
    """Memory a serving engine holds beside the weights (an activation peak, buffers outside PyTorch, CUDA graphs):
    1 MiB to 1 TiB."""

    UNITS = BYTE_UNITS
    BASE = "bytes"
    BOUNDS = (2.0**20, 2.0**40)


class BytesPerElement(_Measure):
    """Bytes held per element of a tensor shape (per logit of the sampler's batch): 1 to 1,000 bytes."""

    UNITS = BYTE_UNITS
    BASE = "bytes"
    BOUNDS = (1.0, 1000.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class NonTorchAtTP(specs.NonTorchAtTP):
    """The engine's `NonTorchAtTP` as a start-up log reports it: the memory with its unit, held in bytes, and the
    log it comes from."""

    memory: Annotated[float, in_base(RuntimeBytes)]
    note: Annotated[str, Field(min_length=10)]
    """Which log, model and version it comes from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpertPadding(specs.ExpertPadding):
    """The engine's `ExpertPadding` as data/policies.yaml states it: a kernel the release runs MXFP4 experts with on
    one vendor's chips, the multiples it pads them to (1: none), and where the release's source says so."""

    kernel: MoeKernel
    vendor: Vendor
    hidden: PositiveInt
    intermediate: PositiveInt
    accelerators: tuple[str, ...] = ()
    note: Annotated[str, Field(min_length=10)]
    """The release's file and lines that pad, and a log that shows the loaded size where one was read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceClass(specs.DeviceClass):
    """The engine's `DeviceClass` as data/policies.yaml states it: the size below which a device takes the class,
    with its unit (None: every larger device)."""

    below: Annotated[float, in_base(ByteSize)] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StaticReserve(specs.StaticReserve):
    """The engine's `StaticReserve` (SGLang's reserve rule) as data/policies.yaml states it: each size with its unit,
    held in bytes; the classes by rising size, the last without a bound."""

    base: Annotated[float, in_base(RuntimeBytes)]
    per_prefill_token: Annotated[float, in_base(RuntimeBytes)]
    per_graph_sequence: Annotated[float, in_base(RuntimeBytes)]
    per_parallel_gpu: Annotated[float, in_base(RuntimeBytes)]
    floor: Annotated[float, in_base(RuntimeBytes)]
    floor_above: Annotated[float, in_base(ByteSize)]
    classes: tuple[DeviceClass, ...]


def _reserve_rules(r: StaticReserve) -> list[tuple[str, str]]:
    """The classes by rising size, every one bounded but the last; counts at least 1."""
    found: list[tuple[str, str]] = []
    if not r.classes:
        return [("classes", "give at least one class")]
    bounds = [c.below for c in r.classes]
    if bounds[-1] is not None or any(b is None for b in bounds[:-1]):
        found.append(("classes", "bound every class with below but the last, which takes every larger device"))
    elif bounds[:-1] != sorted(set(b for b in bounds[:-1] if b is not None)):
        found.append(("classes", "order the classes by rising below, each size once"))
    for i, c in enumerate(r.classes):
        found += [(f"classes.{i}.{name}", f"{v} is less than 1") for name, v in (
            ("chunked_prefill", c.chunked_prefill), ("graph_batch", c.graph_batch),
            ("graph_batch_large_tp", c.graph_batch_large_tp)) if v < 1]
    found += [(name, f"{v} is less than 1") for name, v in (("min_prefill_tokens", r.min_prefill_tokens),
                                                             ("large_tp", r.large_tp)) if v < 1]
    if r.device_total is not None:
        found.append(("device_total", "set when the policy is resolved for a chip, never in data/"))
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryPolicy(MemoryPolicySpec):
    """A memory policy as data/policies.yaml states it: the engine's own record (`MemoryPolicySpec`, whose fields and
    docstrings say what each means), its id the entry's, its sizes written with their units and held in bytes, with
    the engine's name, how it is started, the ranges its figures may take, its reasons and sources."""

    kind: Literal["memory"]
    usage_context: Annotated[str, Field(min_length=5)]
    """How the engine is started (vLLM's defaults differ between `vllm serve` and the offline `LLM` class)."""
    large_device_memory: Annotated[float, in_base(ByteSize)] | None = None
    sampler_bytes_per_logit: Annotated[float, in_base(BytesPerElement)] | None = None
    sampler_bytes_range: tuple[PositiveFloat, PositiveFloat] | None = None
    """In bytes per logit; `sampler_bytes_per_logit` lies inside. Both given for an engine that runs a profiling
    run, neither for one that does not (`kv_share_of` "static")."""
    static_reserve: Annotated[StaticReserve, obeys(_reserve_rules)] | None = None
    non_torch_by_tp: tuple[NonTorchAtTP, ...]
    non_torch_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in GiB; every `non_torch_by_tp` point lies inside."""
    cuda_graphs: Annotated[float, in_base(RuntimeBytes)]
    cuda_graph_batch: Literal["vllm", "max_num_seqs", "device_class", "none"] | PositiveInt = "vllm"
    host_per_request: Annotated[float, in_base(Duration)] = 0.0
    host_dispatch: Annotated[float, in_base(Duration)] | None = None
    overlap_schedule: bool = False
    moe_kernel: Literal["", MoeKernel] = ""
    mxfp4_experts: tuple[ExpertPadding, ...] = ()
    gemm_kernel: Literal["", GemmKernel] = ""
    """The engine's own dense GEMM ops where they differ from the other engines' ("trtllm": TensorRT-LLM's PyTorch
    backend calls its own FP4 GEMM): its measured figures price the matrix products where a chip has them, else the
    engines' median."""
    chunked_prefill: bool
    """Stated by every policy (the record's default is vLLM's: True)."""
    mixed_steps: bool
    """Stated by every policy (the record's default is vLLM's: True)."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


def _memory_rules(p: MemoryPolicy) -> list[tuple[str, str]]:
    """A memory policy's figures together: counts at least 1, a share of the device, the large device's class whole,
    the points outside PyTorch by rising degree and inside their range, the sampler's figure inside its range."""
    counts = [("kv_block_tokens", p.kv_block_tokens), *((f"non_torch_by_tp.{i}.tp", n.tp)
                                                        for i, n in enumerate(p.non_torch_by_tp))]
    for name, limits in (("serve_defaults", p.serve_defaults), ("large_device_defaults", p.large_device_defaults)):
        if limits is not None:
            counts += [(f"{name}.max_num_seqs", limits.max_num_seqs),
                       (f"{name}.max_num_batched_tokens", limits.max_num_batched_tokens)]
    found = [(name, f"{value} is less than 1") for name, value in counts if value < 1]
    if not 0 < p.utilization <= 1:
        found.append(("utilization", "a share of the device's reported total: above 0, at most 1"))
    if (p.large_device_defaults is None) != (p.large_device_memory is None):
        found.append(("large_device_defaults", "large_device_defaults and large_device_memory: give both or neither"))
    tps = [n.tp for n in p.non_torch_by_tp]
    if not tps or tps[0] != 1 or tps != sorted(set(tps)):
        found.append(("non_torch_by_tp", "give TP1 first, then larger degrees, each once"))
    gib = 2.0**30
    low, high = p.non_torch_range
    found += [(f"non_torch_by_tp.{i}.memory", f"TP{n.tp}'s {n.memory / gib:g} GiB lies outside non_torch_range "
                                              f"{low:g}-{high:g}")
              for i, n in enumerate(p.non_torch_by_tp) if not low * (1 - 1e-9) <= n.memory / gib <= high * (1 + 1e-9)]
    static = p.kv_share_of == "static"
    if (p.sampler_bytes_per_logit is None) != static or (p.sampler_bytes_range is None) != static:
        found.append(("sampler_bytes_per_logit", "give it and sampler_bytes_range where the engine runs a profiling "
                                                 "run, neither where its pool is static (kv_share_of: static)"))
    elif p.sampler_bytes_per_logit is not None and p.sampler_bytes_range is not None:
        lo, hi = p.sampler_bytes_range
        if not lo <= p.sampler_bytes_per_logit <= hi:
            found.append(("sampler_bytes_per_logit", f"lies outside sampler_bytes_range {lo:g}-{hi:g}"))
    if (p.static_reserve is None) == static:
        found.append(("static_reserve", "give it with kv_share_of: static (SGLang's rule), and only then"))
    if p.cuda_graph_batch == "device_class" and p.static_reserve is None:
        found.append(("cuda_graph_batch", "device_class reads static_reserve's classes: give static_reserve"))
    if p.fraction_given:
        found.append(("fraction_given", "set by a run's command (setting's memory_fraction), never in data/"))
    pads = [(e.kernel, e.vendor, frozenset(e.accelerators)) for e in p.mxfp4_experts]
    if len(pads) != len(set(pads)):
        found.append(("mxfp4_experts", "give each kernel once per vendor and set of chips"))
    defaults = [(e.vendor, frozenset(e.accelerators)) for e in p.mxfp4_experts if e.default]
    if len(defaults) != len(set(defaults)):
        found.append(("mxfp4_experts", "mark at most one kernel per vendor and set of chips as the default"))
    if p.symm_mem and not p.allreduce_tables:
        found.append(("symm_mem", "give allreduce_tables: the limits by CUDA capability its release routes by"))
    seen: set[str] = set()
    for i, t in enumerate(p.allreduce_tables):
        where = f"allreduce_tables.{i}"
        if not t.symm_dtype_ok:
            found.append((f"{where}.symm_dtype_ok", "set from the model's dtype when a step is priced, never in data/"))
        for name, pairs in (("custom_max", t.custom_max), ("symm_max", t.symm_max)):
            groups = [n for n, _ in pairs]
            if groups != sorted(set(groups)) or any(n < 2 for n in groups) or any(b <= 0 for _, b in pairs):
                found.append((f"{where}.{name}", "(GPUs, bytes) pairs: groups rising from 2, each once, bytes above 0"))
        if not set(t.multimem) <= {n for n, _ in t.symm_max}:
            found.append((f"{where}.multimem", "a group size multimem runs on must have a symm_max limit"))
        dup = seen & set(t.accelerators)
        if dup:
            found.append((f"{where}.accelerators", f"{', '.join(sorted(dup))} already in an earlier table"))
        seen |= set(t.accelerators)
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class Disaggregation(DisaggregationSpec):
    """The engine's `DisaggregationSpec` (`min_saving`) as data/policies.yaml states it: with the shares a team
    might choose, its reasons and sources."""

    min_saving_range: tuple[Share, Share]
    """The shares a reasonable team might choose; `min_saving` lies inside."""
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


def _saving_within(d: Disaggregation) -> list[tuple[str, str]]:
    lo, hi = d.min_saving_range
    return [] if lo <= d.min_saving <= hi else [("min_saving", f"lies outside min_saving_range {lo:g}-{hi:g}")]


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutPolicy(LayoutPolicySpec):
    """A layout policy as data/policies.yaml states it: the engine's own record (`LayoutPolicySpec`, whose fields
    and docstrings say what each means), its id the entry's, with its reasons and sources."""

    kind: Literal["layout"]
    disaggregation: Annotated[Disaggregation, obeys(_saving_within)]
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
    multimem: AlphaBeta | None = None
    """PyTorch's symmetric-memory all-reduce in multimem (the NVSwitch adds the messages up), which vLLM runs between
    its custom all-reduce's cap and its symmetric-memory limit on the group sizes its table names."""
    symm_two_shot: AlphaBeta | None = None
    """PyTorch's symmetric-memory two-shot all-reduce, which vLLM runs there on the other group sizes."""


class ChipCollectives(_Strict):
    """A chip's own custom all-reduce, fitted on its published timings (`points`), in place of the time model's
    one-shot and two-shot factors (fitted on `custom_allreduce_points`' chip) on the chips it names."""

    points: Annotated[str, Field(min_length=2)]
    """Id of the latencies.yaml entry (path collective) with the chip's custom all-reduce timings by size."""
    engine: Annotated[str, Field(min_length=2)]
    """The engine whose all-reduce was timed: the factors price steps under a memory policy of that engine only."""
    accelerators: Annotated[tuple[str, ...], Field(min_length=1)]
    """The accelerator ids it prices: the entry's own chip, and any other form of the same die and fabric."""
    one_shot: AlphaBeta
    two_shot: AlphaBeta | None = None
    """None: the time model's, where the chip's two-stage timings are too few to fit or fit no share of the link."""
    one_stage_below: tuple[tuple[PositiveInt, PositiveInt | None], ...] | None = None
    """Where the engine's kernel runs one stage, as its source picks: (largest group, message bytes below which; null:
    every size), smallest group first; None: vLLM's rule (`snippets.engine.collectives.ONE_SHOT_LIMITS`). Its
    timings are fitted, and its steps priced, by it."""

    @field_validator("one_stage_below")
    @classmethod
    def _groups_rise(cls, v: tuple[tuple[int, int | None], ...] | None) -> tuple[tuple[int, int | None], ...] | None:
        groups = [n for n, _ in v or ()]
        if groups != sorted(set(groups)) or any(n < 2 for n in groups):
            raise ValueError(f"groups {groups} must rise from 2, each once")
        return v


class ChipNccl(_Strict):
    """A chip's own NCCL all-reduce, fitted on its published timings (`points`), in place of the time model's NCCL
    factors (fitted on `nccl_allreduce_points`' chip) on the chips it names, under every engine (NCCL is the
    library they all fall back to)."""

    points: Annotated[str, Field(min_length=2)]
    """Id of the latencies.yaml entry (path collective) with the chip's NCCL all-reduce timings by size."""
    accelerators: Annotated[tuple[str, ...], Field(min_length=1)]
    """The accelerator ids it prices: the entry's own chip, and any other form of the same die and fabric."""
    nccl: AlphaBeta


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
    hop_latency_network: str
    """Id of a latencies.yaml entry (path network): one step of a collective between nodes (NCCL's own figure)."""
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
    multimem_points: str | None = None
    """Id of the latencies.yaml entry (path collective) with the symmetric-memory multimem all-reduce's timings."""
    symm_two_shot_points: str | None = None
    """Id of the latencies.yaml entry (path collective) with the symmetric-memory two-shot all-reduce's timings."""
    two_stage_points: str | None = None
    """Id of the latencies.yaml entry (path collective) with further timings of the custom all-reduce forced to its
    two stages, at sizes where vLLM's rule runs two: fitted with `custom_allreduce_points`' two-stage points."""
    allreduce_timed_under: str | None = None
    """Id of the memory policy whose all-reduce tables routed the custom all-reduce timings' messages (vLLM's
    tensor_model_parallel_all_reduce, timed whole): a point its table sends to symmetric memory is that path's,
    not the custom all-reduce's; None: every point is the custom all-reduce's."""
    collectives: Collectives
    chip_collectives: tuple[ChipCollectives, ...] = ()
    """Chips whose own custom all-reduce timings are published: their fitted one-shot and two-shot factors."""
    chip_nccl: tuple[ChipNccl, ...] = ()
    """Chips whose own NCCL all-reduce timings are published: their fitted NCCL factors."""
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
        checks = [("step_overhead", self.step_overhead.value, self.step_overhead_range)]
        checks += [(f"vendor_kernel_fraction.{k}", v, self.vendor_kernel_fraction_range)
                   for k, v in self.vendor_kernel_fraction.items()]
        for name, value, rng in checks:
            if not rng[0] <= value <= rng[1]:
                raise ValueError(f"{name}: {value:g} lies outside its range {rng[0]:g}-{rng[1]:g}")
        return self


Policy = Annotated[Annotated[MemoryPolicy, as_written(MemoryPolicy), obeys(_memory_rules)]
                   | Annotated[LayoutPolicy, as_written(LayoutPolicy)] | TimeModel, Field(discriminator="kind")]
