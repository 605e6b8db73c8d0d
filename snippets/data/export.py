"""The validated catalog as the engine's records (`snippets.engine.specs`), in base units.

`export(cat)` is the only place where the loader's entries (pydantic, units as the sources state them) become the
engine's inputs (bytes, bytes/s per direction, dense FLOP/s): one typed function per entity makes its record from
the validated data (`chip_record`, `node_record`, `model_record`, ...), and `export` gathers them into the
`EngineCatalog`. The build calls `engine_catalog(cat)`; the same records as JSON (`snippets.engine.codec.encode`) are
reference/engine-catalog.json, which the calculator reads back in the browser (`codec.decode`): no mapping is built by
hand on either side.

Where an entry validates straight into its engine record, and where it keeps a builder here. Only a record that is
its data entry's figures as written, in the same units and the same shape, less provenance (name aside: rationale,
sources, notes, ranges), can be the schema's field itself (`base.as_written`, `base.obeys`); today that is the
architecture, `specs.Arch` (`schema/models.py`, `ArchRecord`). Every other entity differs from its record in more than
provenance, so each keeps its typed builder below:

- layout policies (`layout_policy_record`): one-to-one but for one field: the engine's `disaggregated_min_saving` is
  the entry's `disaggregation.min_saving`, a block that carries its own range, rationale and sources. Validating
  into the record would mean nesting the record (and so the published JSON) or flattening the data's sourced block.
- scenarios (`scenario_record`): the latency target is `target.ttft` and `target.tpot`, measures with a unit as
  written (`{value: 2000, unit: ms}`) inside a block with its rationale and sources; the record holds seconds.
- precisions (`precision_record`): `bits_per_param` is computed (the width plus its group's scale and zero point:
  4 + (16 + 4) / 128 for INT4 with groups of 128), the width has a unit (`{value: 4, unit: bit}`), the weight block is
  `{rows, cols}` as written and a pair in the record, and `kind`, `layout` and `block_scale` are the teaching
  pages', not the engine's.
- memory policies (`memory_policy_record`): every size is a measure with a unit (`RuntimeBytes`, `ByteSize`,
  `BytesPerElement`) made bytes, the two classes of device's defaults (`serve_defaults`, `large_device_defaults`)
  are flattened, and each `non_torch_by_tp` point carries its note.
- models (`model_record`): the counts are measures (`{value: 8, unit: billion}`), `mtp_acceptance` a block with its
  note and sources made a triple; the architecture inside is the engine's record already.
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

from dataclasses import replace
from functools import partial
from types import MappingProxyType
from typing import Any

from snippets.data import (
    Accelerator,
    Catalog,
    ComputeEfficiency,
    Efficiency,
    LayoutPolicy,
    MemoryPolicy,
    Model,
    Network,
    Node,
    PCIe,
    Precision,
    Price,
    Scenario,
    TimeModel,
)
from snippets.data.loader import derive
from snippets.data.schema.efficiencies import CHIP_EFFICIENCIES
from snippets.data.schema.policies import AlphaBeta
from snippets.engine.bands import BandEntry
from snippets.engine.codec import decode, encode
from snippets.engine.specs import (
    AlphaBetaSpec,
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
                           if x.accelerator == key and x.resource in CHIP_EFFICIENCIES))


def node_record(cat: Catalog, key: str, n: Node) -> NodeSpec:
    """A node: its GPUs and fabric, and one GPU's share of its NICs from data/interconnects.yaml's network entry."""
    return NodeSpec(id=key, name=n.name, chip=n.accelerator, gpus=n.gpus, domain=n.domain, scale_up=n.scale_up,
                    network_bytes_per_s=_network(cat, n), fabric_shape=n.fabric_shape, torus_dims=n.torus_dims,
                    network_name=None if n.nic is None else cat.interconnects[n.nic].name)


def model_record(key: str, m: Model) -> ModelSpec:
    """A model: its counts, its architecture (validated straight into the engine's `Arch`), its checkpoints."""
    mtp = m.mtp_acceptance
    return ModelSpec(id=key, name=m.name, nominal_params=m.nominal_params.count, stated_params=m.stated_params.count,
                     arch=m.architecture, dtype=m.dtype, checkpoint_precision=m.checkpoint_precision,
                     other_checkpoint_precisions=tuple(m.other_checkpoint_precisions),
                     mtp_acceptance=None if mtp is None else (mtp.draft_tokens, mtp.low, mtp.high))


def precision_record(key: str, p: Precision) -> PrecisionSpec:
    """A precision: its bits per weight with the group scales counted, its tensor format, what it keeps at 16 bit
    and its weight block."""
    return PrecisionSpec(id=key, name=p.name, bits_per_param=p.bits_per_param, tensor_format=p.tensor_format,
                         keeps_16bit=frozenset(p.keeps_16bit),
                         weight_block=None if p.weight_block is None else (p.weight_block.rows, p.weight_block.cols))


def memory_policy_record(key: str, p: MemoryPolicy) -> MemoryPolicySpec:
    """A memory policy in bytes, its two classes of device's defaults flattened."""
    large = p.large_device_defaults
    return MemoryPolicySpec(
        id=key, name=p.name, utilization=p.utilization, max_num_seqs=p.serve_defaults.max_num_seqs,
        max_num_batched_tokens=p.serve_defaults.max_num_batched_tokens,
        sampler_bytes_per_logit=p.sampler_bytes_per_logit.bytes,
        non_torch_by_tp=tuple((n.tp, n.memory.bytes) for n in p.non_torch_by_tp),
        cuda_graph_bytes=p.cuda_graphs.bytes, cuda_graphs_in_pool=p.cuda_graphs_in_pool,
        kv_block_tokens=p.kv_block_tokens, hybrid_kv_cache=p.hybrid_kv_cache,
        large_device_bytes=None if p.large_device_memory is None else p.large_device_memory.bytes,
        large_max_num_seqs=None if large is None else large.max_num_seqs,
        large_max_num_batched_tokens=None if large is None else large.max_num_batched_tokens,
        large_device_excludes=frozenset(p.large_device_excludes), kv_share_of=p.kv_share_of,
        profile_rows=p.profile_rows, cuda_graph_batch=p.cuda_graph_batch, chunked_prefill=p.chunked_prefill)


def layout_policy_record(key: str, p: LayoutPolicy) -> LayoutPolicySpec:
    """A layout policy, its disaggregation threshold without the threshold's range and reasons."""
    return LayoutPolicySpec(id=key, name=p.name, tp_limit=p.tp_limit, across_nodes=p.across_nodes, prefer=p.prefer,
                            expert_parallel=p.expert_parallel, whole_nodes=p.whole_nodes,
                            disaggregated_min_saving=p.disaggregation.min_saving)


def scenario_record(key: str, s: Scenario) -> ScenarioSpec:
    """A scenario, its latency target in seconds."""
    return ScenarioSpec(id=key, name=s.name, node=s.node, memory_policy=s.memory_policy, layout_policy=s.layout_policy,
                        time_model=s.time_model, input_tokens=s.input_tokens, output_tokens=s.output_tokens,
                        concurrency=s.concurrency, kv_precision=s.kv_precision, ttft_s=s.target.ttft.seconds,
                        tpot_s=s.target.tpot.seconds)


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


def time_model_record(cat: Catalog, key: str, t: TimeModel) -> TimeModelSpec:
    """The time model with every chip's efficiencies resolved (its measured entries where data/efficiencies.yaml
    has them, the policy's stated defaults otherwise) and its latencies read from data/latencies.yaml, in seconds;
    without its error bands (`export` adds them)."""
    d = t.defaults
    default_gemm = GemmEfficiency(((1, d.gemm_weights.value), (256, d.gemm_weights_256.value)), d.gemm_compute.value)
    default = ChipEfficiency(hbm=d.hbm.value, attention=d.attention_compute.value, moe=MappingProxyType({}),
                             moe_whole=MappingProxyType({}), gemm=MappingProxyType({}), default_gemm=default_gemm)
    chips: dict[str, ChipEfficiency] = {}  # a chip's own efficiencies are noted with the chip (`time_sources`)
    for e in cat.efficiencies.values():
        if isinstance(e, Efficiency) and e.resource not in ("hbm", "gemm_weights"):
            continue
        c = chips.get(e.accelerator, default)
        if isinstance(e, ComputeEfficiency):
            if e.resource == "attention_compute":
                c = replace(c, attention=e.fraction)
            elif e.resource == "moe_compute":
                c = replace(c, moe=MappingProxyType({**c.moe, e.tensor_format: e.fraction}))
            elif e.resource == "moe_compute_whole":
                c = replace(c, moe_whole=MappingProxyType({**c.moe_whole, e.tensor_format: e.fraction}))
            else:
                g = replace(c.gemm.get(e.tensor_format, default_gemm), compute=e.fraction)
                c = replace(c, gemm=MappingProxyType({**c.gemm, e.tensor_format: g}))
        elif e.resource == "hbm":
            c = replace(c, hbm=e.fraction)
        else:
            assert e.tensor_format is not None  # noqa: S101 - the schema requires it for gemm_weights
            points = tuple((tok, f) for tok, f in e.by_tokens) or ((1, e.fraction),)
            g = replace(c.gemm.get(e.tensor_format, default_gemm), weights=points)
            c = replace(c, gemm=MappingProxyType({**c.gemm, e.tensor_format: g}))
        chips[e.accelerator] = c
    # a chip measured in BF16 only keeps its BF16 kernels for other formats
    chips = {k: c if "bf16" not in c.gemm else replace(c, default_gemm=c.gemm["bf16"]) for k, c in chips.items()}
    lat = cat.latencies
    used = {("policies", key), ("efficiencies", t.link_efficiency)}
    used |= {("latencies", lid) for lid in (t.hop_latency_nvlink, t.hop_latency_pcie, t.kernel_launch,
                                           t.host_dispatch, t.custom_allreduce_points, t.nccl_allreduce_points,
                                           t.alltoall_points)}
    co = t.collectives
    return TimeModelSpec(
        id=key, name=t.name, chips=MappingProxyType(chips), default=default,
        link_fraction=cat.efficiencies[t.link_efficiency].fraction,
        nvlink_hop_s=lat[t.hop_latency_nvlink].value.seconds, pcie_hop_s=lat[t.hop_latency_pcie].value.seconds,
        network_hop_s=t.hop_latency_network.seconds, kernel_s=lat[t.kernel_launch].value.seconds,
        host_dispatch_s=lat[t.host_dispatch].value.seconds, graph_max_tokens=t.cuda_graph_max_tokens,
        custom_allreduce_max_bytes=float(t.custom_allreduce_max_bytes),
        one_shot=_alpha_beta(co.one_shot), two_shot=_alpha_beta(co.two_shot), nccl=_alpha_beta(co.nccl),
        alltoall=_alpha_beta(co.alltoall), step_overhead_s=t.step_overhead.seconds,
        vendor_kernel_fraction=MappingProxyType({str(v): f for v, f in t.vendor_kernel_fraction.items()}),
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
        models=MappingProxyType({k: model_record(k, m) for k, m in cat.models.items()}),
        chips=MappingProxyType({k: chip_record(cat, k, a) for k, a in cat.accelerators.items()}),
        nodes=MappingProxyType({k: node_record(cat, k, n) for k, n in cat.of_kind(Node).items()}),
        precisions=MappingProxyType({k: precision_record(k, p) for k, p in cat.precisions.items()}),
        memory_policies=MappingProxyType({k: memory_policy_record(k, p) for k, p in cat.policies.items()
                                          if isinstance(p, MemoryPolicy)}),
        layout_policies=MappingProxyType({k: layout_policy_record(k, p) for k, p in cat.policies.items()
                                          if isinstance(p, LayoutPolicy)}),
        scenarios=MappingProxyType({k: scenario_record(k, s) for k, s in cat.scenarios.items()}),
        time_models=MappingProxyType({k: time_model_record(cat, k, t) for k, t in cat.policies.items()
                                      if isinstance(t, TimeModel)}),
        prices=MappingProxyType({p.accelerator: price_record(cat, p) for p in cat.prices.values() if p.site_uses}),
    )


def engine_catalog(cat: Catalog) -> EngineCatalog:
    """The engine's records of `cat`, made once per catalog and kept with it (`Catalog.derived`, which a page's
    recording view shares with the catalog it views; `loader.derive`: each use notes the tables the export read)."""
    return derive(cat.loaded, EngineCatalog, lambda: export(cat.loaded))
