"""The validated catalog as the engine's records (`snippets.engine.specs`), in base units.

`export(cat)` is the only place where the loader's entries become the engine's inputs (bytes, bytes/s per direction,
dense FLOP/s): an entry that is its engine record plus provenance is made that record by a plain conversion
(`base.as_record`); an entity joined across entries or files keeps one typed function that makes its record
(`chip_record`, `node_record`, `time_model_record`, `price_record`); `export` gathers them into the `EngineCatalog`.
The build calls `engine_catalog(cat)`; the same records as JSON (`snippets.engine.codec.encode`) are
reference/engine-catalog.json, which the calculator reads back in the browser (`codec.decode`): no mapping is built by
hand on either side.

Where an entry validates straight into its engine record, and where it keeps a builder here. An entity whose entry is
its record's figures as written, in the record's shape, plus provenance (rationale, sources, notes, ranges) is one
record: its schema class is the engine's dataclass itself, or a subclass of it that adds the provenance only
(`base.as_written` checks the mapping as every schema class is checked, and files a keyed record under its entry's
id; `base.obeys` applies the record's rules, or the schema's on its ranges), and its engine record here is a plain
conversion, `base.as_record` (the record's own fields, the provenance left behind). These are:

- architectures: `specs.Arch` itself (`schema/models.py`, `ArchRecord`), under the engine's rules (`arch_problems`);
- layout policies: `schema/policies.py`'s `LayoutPolicy`, a `specs.LayoutPolicySpec` with its rationale and sources,
  whose `disaggregation` block is a `specs.DisaggregationSpec` with its range, rationale and sources;
- scenarios: `schema/scenarios.py`'s `Scenario`, a `specs.ScenarioSpec` with its rationale and sources, whose
  `target` is a `specs.LatencyTargetSpec` with its own; the target's times are written as measures (`{value: 2000,
  unit: ms}`) and held in seconds, validated as `TargetTime`s (`quantities.in_base`), so the entry keeps the figure,
  not the unit it was written in (every page shows the target from the record, in ms);
- memory policies: `schema/policies.py`'s `MemoryPolicy`, a `specs.MemoryPolicySpec` with the engine's name, its
  usage context, the ranges its figures may take, its rationale and sources; its sizes (`cuda_graphs`,
  `large_device_memory`, `sampler_bytes_per_logit`, each `non_torch_by_tp` point's `memory`, a `specs.NonTorchAtTP`
  with its note) are written with their units and held in bytes (`RuntimeBytes`, `ByteSize`, `BytesPerElement`), and
  its two classes of device's limits are `specs.ServeDefaults` records, as the data nests them (no page shows a
  policy's size as written);
- precisions: `schema/precisions.py`'s `Precision`, a `specs.PrecisionSpec` with what only the teaching pages read
  (`kind`, the float `layout`, the block scale's `scale_format`), its note and sources; its widths are written in
  bits with their unit and held as bits, its `block_scale` a `specs.BlockScale` and its `weight_block` a
  `specs.WeightBlock`, as the data nests them; `bits_per_param` (the width plus the group's scale and zero point) is
  the record's property, computed where it is read, not a figure stored;
- models: `schema/models.py`'s `Model`, a `specs.ModelSpec` with what the model card states besides (the active
  parameters), which checkpoint's context the architecture gives, its notes and sources; its counts are written with
  their unit (`{value: 8, unit: billion}`) and held as counts (`Count`), its `architecture` is the engine's `Arch`
  itself, and its `mtp_acceptance` a `specs.MTPAcceptance` with its note and sources (the pages show counts from the
  figure, `fmt.params`, never as written).

The other entities join entries or files into one record, so each keeps its typed builder below:

- prices (`price_record`): the price is a measure (USD per GPU-hour), `read` and `secondary` come from the entry's
  first source, and `sources` joins every price entry the site uses for the accelerator.
- chips, nodes and time models (`chip_record`, `node_record`, `time_model_record`): joined across files and converted.
  A chip's host link is a PCIe generation of data/interconnects.yaml at the chip's lanes, its scale-up bandwidth
  one direction of its fabric's figure, its dense FLOP/s derived from sparse ones where the datasheet gives those,
  and its `time_sources` the efficiencies.yaml entries measured on it; a node's network is its NICs' port bandwidth
  (interconnects.yaml) times NICs per GPU; a time model's chips are data/efficiencies.yaml's measured entries over
  the policy's defaults, its latencies data/latencies.yaml's entries in seconds, and its bands computed by the engine
  from the test measurements (`export`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from types import MappingProxyType
from typing import Any, TypeVar

from snippets.data import (
    Accelerator,
    Catalog,
    ComputeEfficiency,
    Efficiency,
    LayoutPolicy,
    MemoryPolicy,
    Network,
    Node,
    PCIe,
    Price,
    TimeModel,
)
from snippets.data.base import as_record
from snippets.data.loader import derive
from snippets.data.schema.efficiencies import CHIP_EFFICIENCIES
from snippets.data.schema.policies import AlphaBeta, ChipCollectives
from snippets.engine.bands import BandEntry
from snippets.engine.codec import decode, encode
from snippets.engine.specs import (
    AlphaBetaSpec,
    AttentionGrid,
    ChipCollectivesSpec,
    ChipEfficiency,
    ChipSpec,
    EngineCatalog,
    GemmEfficiency,
    LayoutPolicySpec,
    MemoryPolicySpec,
    ModelSpec,
    NodeSpec,
    PrecisionSpec,
    PriceSpec,
    ScenarioSpec,
    TimeModelSpec,
    moe_key,
)


def _host_link(cat: Catalog, acc_id: str) -> float | None:
    acc = cat.accelerators[acc_id]
    if acc.host_link is None or acc.host_link_lanes is None:
        return None
    p = cat.interconnect(acc.host_link, PCIe)
    return p.lanes(acc.host_link_lanes).bytes_per_s


def _network(cat: Catalog, node: Node) -> float | None:
    """One GPU's share of the node's scale-out NICs, per direction."""
    if node.nic is None or node.nics_per_gpu is None:
        return None
    port = cat.interconnect(node.nic, Network).port.bandwidth.one_way()
    return port.bytes_per_s * node.nics_per_gpu


def chip_record(cat: Catalog, key: str, a: Accelerator) -> ChipSpec:
    """An accelerator as the engine reads it: its label and the runtime's total in bytes, HBM and its scale-up
    link per direction, dense FLOP/s by format, its host link from data/interconnects.yaml's PCIe generation at its
    lanes, its scale-up fabric's name, and the efficiencies.yaml entries a time model reads for it."""
    dense = {fmt: f.dense for fmt, f in a.tensor.items()}
    up = a.scale_up
    return ChipSpec(
        id=key, name=a.name, label_bytes=a.memory.bytes, capacity_bytes=a.capacity_bytes,
        capacity_reported=a.memory_runtime is not None, hbm_bytes_per_s=a.memory_bandwidth.bandwidth.bytes_per_s,
        dense_flops=MappingProxyType({fmt: t.flops_per_s for fmt, t in dense.items() if t is not None}),
        dense_derived=frozenset(fmt for fmt, t in dense.items() if t is not None and t.derived),
        scale_up_bytes_per_s=None if up is None else up.bandwidth.bandwidth.one_way().bytes_per_s,
        host_link_bytes_per_s=_host_link(cat, key), vendor=a.vendor,
        scale_up_links=None if up is None else up.links,
        scale_up_name=None if up is None else cat.interconnects[up.fabric].name,
        time_sources=tuple(("efficiencies", e) for e, x in cat.efficiencies.items()
                           if x.accelerator == key and x.resource in CHIP_EFFICIENCIES),
        tool_total_bytes=None if a.memory_reported is None else a.memory_reported.bytes,
        package_bytes_per_s=None if up is None or up.package is None else up.package.bandwidth.one_way().bytes_per_s)


def node_record(cat: Catalog, key: str, n: Node) -> NodeSpec:
    """A node: its GPUs and fabric, and one GPU's share of its NICs from data/interconnects.yaml's network entry."""
    return NodeSpec(id=key, name=n.name, chip=n.accelerator, gpus=n.gpus, domain=n.domain, scale_up=n.scale_up,
                    network_bytes_per_s=_network(cat, n), fabric_shape=n.fabric_shape, torus_dims=n.torus_dims,
                    network_name=None if n.nic is None else cat.interconnects[n.nic].name)


def price_record(cat: Catalog, p: Price) -> PriceSpec:
    """The price the site uses for one accelerator, with every price entry the site uses for it as its sources."""
    return PriceSpec(accelerator=p.accelerator, usd_per_gpu_hour=p.price.value, gpus_per_unit=p.gpus_per_unit,
                     provider=p.provider, offering=p.offering, read=p.read.isoformat(), kind=p.kind,
                     tier=p.tier or "", secondary=p.secondary,
                     sources=tuple(("prices", k) for k, q in cat.prices.items()
                                   if q.accelerator == p.accelerator and q.site_uses))


def _alpha_beta(x: AlphaBeta) -> AlphaBetaSpec:
    return AlphaBetaSpec(latency_s=x.latency.seconds, efficiency=x.efficiency,
                         per_peer_s=0.0 if x.per_peer is None else x.per_peer.seconds)


def one_stage_limits(cc: ChipCollectives, max_bytes: float) -> tuple[tuple[int, float], ...]:
    """An entry's one-stage rule as the engine reads it: (largest group, bytes below which), "every size" as the
    custom all-reduce's own limit (`custom_allreduce_max_bytes`: above it NCCL runs); () for vLLM's rule."""
    return tuple((n, float(max_bytes if below is None else below)) for n, below in cc.one_stage_below or ())


def _moe_compute(c: ChipEfficiency, e: ComputeEfficiency) -> ChipEfficiency:
    """`c` with a fused-MoE compute entry's share, ramp and columns curve, under its format (the engines' median)
    or under its format and kernel (`moe_key`: one kernel's own figures)."""
    key = e.tensor_format if e.kernel is None else moe_key(e.tensor_format, e.kernel)
    ramp = tuple((float(r), f) for r, f in e.by_rows)
    cols = None if e.columns is None else (float(e.columns), tuple((float(x), f) for x, f in e.by_columns))
    if e.resource == "moe_compute":
        c = replace(c, moe=MappingProxyType({**c.moe, key: e.fraction}))
        if ramp:
            c = replace(c, moe_ramp=MappingProxyType({**c.moe_ramp, key: ramp}))
        if cols is not None:
            c = replace(c, moe_columns=MappingProxyType({**c.moe_columns, key: cols}))
        return c
    c = replace(c, moe_whole=MappingProxyType({**c.moe_whole, key: e.fraction}))
    if ramp:
        c = replace(c, moe_ramp_whole=MappingProxyType({**c.moe_ramp_whole, key: ramp}))
    if cols is not None:
        c = replace(c, moe_columns_whole=MappingProxyType({**c.moe_columns_whole, key: cols}))
    return c


_V = TypeVar("_V")


def _fp16_reads_bf16(c: ChipEfficiency) -> ChipEfficiency:
    """`c` with its fused-MoE figures in BF16 read for FP16 too where none is measured in FP16: the engines run the same
    grouped kernels in either at the same peak (an FP16 checkpoint on an A100 runs them), and the tables time BF16."""

    def also_fp16(v: Mapping[str, _V]) -> Mapping[str, _V]:
        return v if "bf16" not in v or "fp16" in v else MappingProxyType({**v, "fp16": v["bf16"]})

    return replace(c, moe=also_fp16(c.moe), moe_whole=also_fp16(c.moe_whole), moe_ramp=also_fp16(c.moe_ramp),
                   moe_ramp_whole=also_fp16(c.moe_ramp_whole), moe_columns=also_fp16(c.moe_columns),
                   moe_columns_whole=also_fp16(c.moe_columns_whole), moe_weights=also_fp16(c.moe_weights))


def _gemm_key(c: ChipEfficiency, tensor_format: str, kernel: str | None,
              default: GemmEfficiency) -> tuple[str, GemmEfficiency]:
    """Where a dense GEMM entry's figures go in `c.gemm` and what they replace: its format (the engines' median), or
    its format and an engine's own GEMM ops (`moe_key`), which start from the median's figures (an engine's entry
    gives its weight stream and compute share; the rest, its ramp where it gives none, stays the median's)."""
    if kernel is None:
        return tensor_format, c.gemm.get(tensor_format, default)
    own = moe_key(tensor_format, kernel)
    return own, c.gemm.get(own, c.gemm.get(tensor_format, default))


def time_model_record(cat: Catalog, key: str, t: TimeModel) -> TimeModelSpec:
    """The time model with every chip's efficiencies resolved (its measured entries where data/efficiencies.yaml
    has them, the policy's stated defaults otherwise) and its latencies read from data/latencies.yaml, in seconds;
    without its error bands (`export` adds them)."""
    d = t.defaults
    default_gemm = GemmEfficiency(((1, d.gemm_weights.value), (256, d.gemm_weights_256.value)), d.gemm_compute.value)
    default = ChipEfficiency(hbm=d.hbm.value, attention=d.attention_compute.value, moe=MappingProxyType({}),
                             moe_whole=MappingProxyType({}), gemm=MappingProxyType({}), default_gemm=default_gemm)
    chips: dict[str, ChipEfficiency] = {}  # a chip's own efficiencies are noted with the chip (`time_sources`)
    # an engine's own GEMM entries start from the median's, so they are read after every entry without a kernel
    for e in sorted(cat.efficiencies.values(), key=lambda x: getattr(x, "kernel", None) is not None):
        if isinstance(e, Efficiency) and e.resource not in ("hbm", "kv_stream", "gemm_weights", "moe_weights"):
            continue
        c = chips.get(e.accelerator, default)
        if isinstance(e, ComputeEfficiency):
            if e.resource == "attention_compute":
                grid = e.by_heads_length
                c = replace(c, attention=e.fraction, attention_grid=None if grid is None else AttentionGrid(
                    tuple(map(float, grid.heads)), tuple(map(float, grid.lengths)), tuple(map(tuple, grid.shares))))
            elif e.resource in ("moe_compute", "moe_compute_whole"):
                c = _moe_compute(c, e)
            else:
                at, base = _gemm_key(c, e.tensor_format, e.kernel, default_gemm)  # not `key`: the time model's id
                ramp = tuple((gf * 1e9, f) for gf, f in e.by_gflop) if e.by_gflop or e.kernel is None else None
                g = replace(base, compute=e.fraction, compute_ramp=base.compute_ramp if ramp is None else ramp)
                c = replace(c, gemm=MappingProxyType({**c.gemm, at: g}))
        elif e.resource == "hbm":
            c = replace(c, hbm=e.fraction)
        elif e.resource == "kv_stream":
            assert e.fixed is not None  # noqa: S101 - the schema requires it for kv_stream
            curve = tuple((float(tok), f) for tok, f in e.by_context)
            if e.tensor_format is None:
                c = replace(c, kv_stream=curve, kv_fixed=e.fixed)
            else:
                assert e.engine is not None  # noqa: S101 - the schema requires it with an 8-bit cache
                c = replace(c, kv_own=MappingProxyType({**c.kv_own, moe_key(e.tensor_format, e.engine): (curve, e.fixed)}))
        elif e.resource == "moe_weights":
            assert e.tensor_format is not None  # noqa: S101 - the schema requires it for moe_weights
            curve = tuple((float(tok), f) for tok, f in e.by_tokens) or ((1.0, e.fraction),)
            own = e.tensor_format if e.kernel is None else moe_key(e.tensor_format, e.kernel)
            c = replace(c, moe_weights=MappingProxyType({**c.moe_weights, own: curve}))
            if e.fixed is not None:
                c = replace(c, moe_fixed=MappingProxyType({**c.moe_fixed, own: e.fixed}))
            if e.fixed_by_hidden:
                scaled = tuple((float(h), m) for h, m in e.fixed_by_hidden)
                c = replace(c, moe_fixed_hidden=MappingProxyType({**c.moe_fixed_hidden, own: scaled}))
        else:
            assert e.tensor_format is not None  # noqa: S101 - the schema requires it for gemm_weights
            points = tuple((tok, f) for tok, f in e.by_tokens) or ((1, e.fraction),)
            at, base = _gemm_key(c, e.tensor_format, e.kernel, default_gemm)
            c = replace(c, gemm=MappingProxyType({**c.gemm, at: replace(base, weights=points)}))
        chips[e.accelerator] = c
    # a chip measured in BF16 only keeps its BF16 kernels for other formats
    chips = {k: c if "bf16" not in c.gemm else replace(c, default_gemm=c.gemm["bf16"]) for k, c in chips.items()}
    chips = {k: _fp16_reads_bf16(c) for k, c in chips.items()}
    lat = cat.latencies
    used = {("policies", key), ("efficiencies", t.link_efficiency)}
    used |= {("latencies", lid) for lid in (t.hop_latency_nvlink, t.hop_latency_pcie, t.hop_latency_network,
                                           t.kernel_launch, t.host_dispatch, t.custom_allreduce_points,
                                           t.nccl_allreduce_points, t.alltoall_points)}
    used |= {("latencies", cc.points) for cc in t.chip_collectives} | {("latencies", cn.points) for cn in t.chip_nccl}
    used |= {("latencies", lid) for lid in (t.multimem_points, t.symm_two_shot_points, t.two_stage_points)
             if lid is not None}
    co = t.collectives
    per_chip: dict[str, tuple[ChipCollectivesSpec, ...]] = {}
    for cc in t.chip_collectives:
        spec = ChipCollectivesSpec(cc.engine, _alpha_beta(cc.one_shot),
                                   _alpha_beta(co.two_shot if cc.two_shot is None else cc.two_shot),
                                   one_stage_limits(cc, t.custom_allreduce_max_bytes))
        for acc in cc.accelerators:
            per_chip[acc] = (*per_chip.get(acc, ()), spec)
    return TimeModelSpec(
        id=key, name=t.name, chips=MappingProxyType(chips), default=default,
        link_fraction=cat.efficiencies[t.link_efficiency].fraction,
        nvlink_hop_s=lat[t.hop_latency_nvlink].value.seconds, pcie_hop_s=lat[t.hop_latency_pcie].value.seconds,
        network_hop_s=lat[t.hop_latency_network].value.seconds, kernel_s=lat[t.kernel_launch].value.seconds,
        host_dispatch_s=lat[t.host_dispatch].value.seconds, graph_max_tokens=t.cuda_graph_max_tokens,
        custom_allreduce_max_bytes=float(t.custom_allreduce_max_bytes),
        one_shot=_alpha_beta(co.one_shot), two_shot=_alpha_beta(co.two_shot), nccl=_alpha_beta(co.nccl),
        alltoall=_alpha_beta(co.alltoall), step_overhead_s=t.step_overhead.seconds,
        multimem=None if co.multimem is None else _alpha_beta(co.multimem),
        symm_two_shot=None if co.symm_two_shot is None else _alpha_beta(co.symm_two_shot),
        vendor_kernel_fraction=MappingProxyType({str(v): f for v, f in t.vendor_kernel_fraction.items()}),
        chip_collectives=MappingProxyType(per_chip),
        chip_nccl=MappingProxyType({acc: _alpha_beta(cn.nccl) for cn in t.chip_nccl for acc in cn.accelerators}),
        sources=tuple(sorted(used)))


def export(cat: Catalog) -> EngineCatalog:
    """Every entry the engine reads, keyed by `data/` id, in base units, with each time model's error bands
    (computed from the test measurements by the time model itself, `snippets.calibration.band_table`; a function of
    the engine's inputs alone, so kept with them, `snippets.data.results`, as their JSON form)."""
    from snippets.data.results import results_of

    eng = _export(cat)
    results = results_of(cat)
    times = {key: replace(tm, bands=tuple(decode(BandEntry, b) for b in results.get(
                 ("export.bands", key), partial(_bands, eng, cat, key))))
             for key, tm in eng.time_models.items()}
    return replace(eng, time_models=MappingProxyType(times))


def _bands(eng: EngineCatalog, cat: Catalog, key: str) -> list[Any]:
    from snippets.calibration import band_table

    return [encode(b) for b in band_table(eng, cat.measurements, eng.time_models[key])]


def _export(cat: Catalog) -> EngineCatalog:
    """Every entry the engine reads, without the bands."""
    return EngineCatalog(
        models=MappingProxyType({k: as_record(ModelSpec, m) for k, m in cat.models.items()}),
        chips=MappingProxyType({k: chip_record(cat, k, a) for k, a in cat.accelerators.items()}),
        nodes=MappingProxyType({k: node_record(cat, k, n) for k, n in cat.of_kind(Node).items()}),
        precisions=MappingProxyType({k: as_record(PrecisionSpec, p) for k, p in cat.precisions.items()}),
        memory_policies=MappingProxyType({k: as_record(MemoryPolicySpec, p) for k, p in cat.policies.items()
                                          if isinstance(p, MemoryPolicy)}),
        layout_policies=MappingProxyType({k: as_record(LayoutPolicySpec, p) for k, p in cat.policies.items()
                                          if isinstance(p, LayoutPolicy)}),
        scenarios=MappingProxyType({k: as_record(ScenarioSpec, s) for k, s in cat.scenarios.items()}),
        time_models=MappingProxyType({k: time_model_record(cat, k, t) for k, t in cat.policies.items()
                                      if isinstance(t, TimeModel)}),
        prices=MappingProxyType({p.accelerator: price_record(cat, p) for p in cat.prices.values() if p.site_uses}),
    )


def engine_catalog(cat: Catalog) -> EngineCatalog:
    """The engine's records of `cat`, made once per catalog and kept with it (`Catalog.derived`, which a page's
    recording view shares with the catalog it views; `loader.derive`: each use notes the tables the export read)."""
    return derive(cat.loaded, EngineCatalog, lambda: export(cat.loaded))
