"""The validated catalog as the engine reads it: one JSON-ready mapping in base units.

`export(cat)` is the only place where the loader's entries (pydantic, units as the sources state
them) become the engine's inputs (bytes, bytes/s per direction, dense FLOP/s). The build calls
`engine_catalog(cat)`; the same mapping, written as JSON, is what a browser would load.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

from snippets.data import (
    Catalog,
    ComputeEfficiency,
    Efficiency,
    LayoutPolicy,
    MemoryPolicy,
    Network,
    Node,
    PCIe,
    Precision,
    TimeModel,
)
from snippets.engine.specs import EngineCatalog

CHIP_EFFICIENCIES = ("hbm", "gemm_weights", "gemm_compute", "attention_compute", "moe_compute", "moe_compute_whole")
"""The efficiencies.yaml resources the time model reads per chip: a chip's `time_sources`."""


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


def precision_export(p: Precision) -> dict[str, Any]:
    """A precision as the engine reads it (`PrecisionSpec.from_dict`): its bits per weight with the group scales
    counted, its tensor format, what it keeps at 16 bit and its weight block."""
    return {"name": p.name, "bits_per_param": p.bits_per_param, "tensor_format": p.tensor_format,
            "keeps_16bit": sorted(p.keeps_16bit),
            "weight_block": None if p.weight_block is None else [p.weight_block.rows, p.weight_block.cols]}


def _memory_policy(p: MemoryPolicy) -> dict[str, Any]:
    large = p.large_device_defaults
    return {"name": p.name, "utilization": p.utilization,
            "max_num_seqs": p.serve_defaults.max_num_seqs,
            "max_num_batched_tokens": p.serve_defaults.max_num_batched_tokens,
            "sampler_bytes_per_logit": p.sampler_bytes_per_logit.bytes,
            "non_torch_by_tp": [[n.tp, n.memory.bytes] for n in p.non_torch_by_tp],
            "cuda_graph_bytes": p.cuda_graphs.bytes, "cuda_graphs_in_pool": p.cuda_graphs_in_pool,
            "kv_block_tokens": p.kv_block_tokens, "hybrid_kv_cache": p.hybrid_kv_cache,
            "large_device_bytes": None if p.large_device_memory is None else p.large_device_memory.bytes,
            "large_max_num_seqs": None if large is None else large.max_num_seqs,
            "large_max_num_batched_tokens": None if large is None else large.max_num_batched_tokens,
            "large_device_excludes": sorted(p.large_device_excludes), "kv_share_of": p.kv_share_of,
            "profile_rows": p.profile_rows, "cuda_graph_batch": p.cuda_graph_batch,
            "chunked_prefill": p.chunked_prefill}


def _time_model(cat: Catalog, key: str, t: TimeModel) -> dict[str, Any]:
    """The time model with every chip's efficiencies resolved: its measured entries where data/efficiencies.yaml
    has them, the policy's stated defaults otherwise."""
    d = t.defaults
    default_gemm = {"weights": [[1, d.gemm_weights.value], [256, d.gemm_weights_256.value]],
                    "compute": d.gemm_compute.value}
    chips: dict[str, dict[str, Any]] = {}
    used: list[tuple[str, str]] = [("policies", key)]  # a chip's own efficiencies are noted with the chip
    for e in cat.efficiencies.values():
        if isinstance(e, Efficiency) and e.resource not in ("hbm", "gemm_weights"):
            continue
        c = chips.setdefault(e.accelerator, {"hbm": d.hbm.value, "attention": d.attention_compute.value,
                                             "moe": {}, "moe_whole": {}, "gemm": {},
                                             "default_gemm": default_gemm})
        if isinstance(e, ComputeEfficiency):
            if e.resource == "attention_compute":
                c["attention"] = e.fraction
            elif e.resource == "moe_compute":
                c["moe"][e.tensor_format] = e.fraction
            elif e.resource == "moe_compute_whole":
                c["moe_whole"][e.tensor_format] = e.fraction
            else:
                c["gemm"].setdefault(e.tensor_format, dict(default_gemm))["compute"] = e.fraction
        elif e.resource == "hbm":
            c["hbm"] = e.fraction
        else:
            assert e.tensor_format is not None  # noqa: S101 - the schema requires it for gemm_weights
            points = [[tok, f] for tok, f in e.by_tokens] or [[1, e.fraction]]
            c["gemm"].setdefault(e.tensor_format, dict(default_gemm))["weights"] = points
    for c in chips.values():  # a chip measured in BF16 only keeps its BF16 kernels for other formats
        if "bf16" in c["gemm"]:
            c["default_gemm"] = c["gemm"]["bf16"]
    lat = cat.latencies
    for lid in (t.hop_latency_nvlink, t.hop_latency_pcie, t.kernel_launch, t.host_dispatch, t.custom_allreduce_points,
                t.nccl_allreduce_points, t.alltoall_points):
        used.append(("latencies", lid))
    used.append(("efficiencies", t.link_efficiency))
    link = cat.efficiencies[t.link_efficiency]

    def ab(x: Any) -> dict[str, float]:
        return {"latency_s": x.latency.seconds, "efficiency": x.efficiency,
                "per_peer_s": 0.0 if x.per_peer is None else x.per_peer.seconds}

    co = t.collectives
    return {
        "name": t.name, "chips": chips,
        "default": {"hbm": d.hbm.value, "attention": d.attention_compute.value, "moe": {}, "moe_whole": {},
                    "gemm": {}, "default_gemm": default_gemm},
        "link_fraction": link.fraction,
        "nvlink_hop_s": lat[t.hop_latency_nvlink].value.seconds, "pcie_hop_s": lat[t.hop_latency_pcie].value.seconds,
        "network_hop_s": t.hop_latency_network.seconds, "kernel_s": lat[t.kernel_launch].value.seconds,
        "host_dispatch_s": lat[t.host_dispatch].value.seconds, "graph_max_tokens": t.cuda_graph_max_tokens,
        "custom_allreduce_max_bytes": float(t.custom_allreduce_max_bytes),
        "one_shot": ab(co.one_shot), "two_shot": ab(co.two_shot), "nccl": ab(co.nccl), "alltoall": ab(co.alltoall),
        "step_overhead_s": t.step_overhead.seconds, "vendor_kernel_fraction": dict(t.vendor_kernel_fraction),
        "sources": sorted(set(used)),
    }


def export(cat: Catalog) -> dict[str, Any]:
    """Every entry the engine reads, keyed by `data/` id, in base units, with each time model's error bands
    (computed from the test measurements by the time model itself, `snippets.calibration.band_table`; a function of
    the engine's inputs alone, so kept with them, `snippets.data.results`)."""
    from snippets.data.results import results_of

    out = _export(cat)
    eng = EngineCatalog.from_export(out)
    results = results_of(cat)
    for key in out["time_models"]:
        out["time_models"][key]["bands"] = results.get(("export.bands", key), partial(_bands, eng, cat, key))
    return out


def _bands(eng: EngineCatalog, cat: Catalog, key: str) -> list[dict[str, Any]]:
    from snippets.calibration import band_table

    return [asdict(b) for b in band_table(eng, cat.measurements, eng.time_models[key])]


def _export(cat: Catalog) -> dict[str, Any]:
    """Every entry the engine reads, without the bands."""
    chips: dict[str, Any] = {}
    for k, a in cat.accelerators.items():
        dense = {fmt: f.dense for fmt, f in a.tensor.items()}
        chips[k] = {
            "name": a.name,
            "label_bytes": a.memory.bytes,
            "capacity_bytes": a.capacity_bytes,
            "capacity_reported": a.memory_runtime is not None,
            "hbm_bytes_per_s": a.memory_bandwidth.bandwidth.bytes_per_s,
            "dense_flops": {fmt: t.flops_per_s for fmt, t in dense.items() if t is not None},
            "dense_derived": sorted(fmt for fmt, t in dense.items() if t is not None and t.derived),
            "scale_up_bytes_per_s": None if a.scale_up is None else a.scale_up.bandwidth.bandwidth.one_way().bytes_per_s,
            "host_link_bytes_per_s": _host_link(cat, k),
            "vendor": a.vendor,
            "scale_up_links": None if a.scale_up is None else a.scale_up.links,
            "scale_up_name": None if a.scale_up is None else cat.interconnects[a.scale_up.fabric].name,
            "time_sources": [["efficiencies", e] for e, x in cat.efficiencies.items()
                             if x.accelerator == k and x.resource in CHIP_EFFICIENCIES],
        }
    nodes = {k: {"name": n.name, "chip": n.accelerator, "gpus": n.gpus, "domain": n.domain, "scale_up": n.scale_up,
                 "network_bytes_per_s": _network(cat, n), "fabric_shape": n.fabric_shape,
                 "torus_dims": n.torus_dims,
                 "network_name": None if n.nic is None else cat.interconnects[n.nic].name}
             for k, n in cat.of_kind(Node).items()}
    models = {k: {"name": m.name, "nominal_params": m.nominal_params.count, "stated_params": m.stated_params.count,
                  "arch": asdict(m.architecture), "dtype": m.dtype,
                  "checkpoint_precision": m.checkpoint_precision,
                  "other_checkpoint_precisions": list(m.other_checkpoint_precisions),
                  "mtp_acceptance": None if m.mtp_acceptance is None else
                  [m.mtp_acceptance.draft_tokens, m.mtp_acceptance.low, m.mtp_acceptance.high]}
              for k, m in cat.models.items()}
    precisions = {k: precision_export(p) for k, p in cat.precisions.items()}
    memory = {k: _memory_policy(p) for k, p in cat.policies.items() if isinstance(p, MemoryPolicy)}
    layout = {k: {"name": p.name, "tp_limit": p.tp_limit, "across_nodes": p.across_nodes, "prefer": p.prefer,
                  "expert_parallel": p.expert_parallel, "whole_nodes": p.whole_nodes,
                  "disaggregated_min_saving": p.disaggregation.min_saving}
              for k, p in cat.policies.items() if isinstance(p, LayoutPolicy)}
    times = {k: _time_model(cat, k, t) for k, t in cat.policies.items() if isinstance(t, TimeModel)}
    scenarios = {k: {"name": s.name, "node": s.node, "memory_policy": s.memory_policy, "layout_policy": s.layout_policy,
                     "time_model": s.time_model,
                     "input_tokens": s.input_tokens, "output_tokens": s.output_tokens, "concurrency": s.concurrency,
                     "kv_precision": s.kv_precision, "ttft_s": s.target.ttft.seconds, "tpot_s": s.target.tpot.seconds}
                 for k, s in cat.scenarios.items()}
    prices = {p.accelerator: {"accelerator": p.accelerator, "usd_per_gpu_hour": p.price.value,
                              "gpus_per_unit": p.gpus_per_unit, "provider": p.provider, "offering": p.offering,
                              "read": p.read.isoformat(), "kind": p.kind, "tier": p.tier or "",
                              "secondary": p.secondary,
                              "sources": [["prices", k] for k, q in cat.prices.items()
                                          if q.accelerator == p.accelerator and q.site_uses]}
              for p in cat.prices.values() if p.site_uses}
    return {"models": models, "chips": chips, "nodes": nodes, "precisions": precisions, "memory_policies": memory,
            "layout_policies": layout, "scenarios": scenarios, "time_models": times, "prices": prices}


def engine_catalog(cat: Catalog) -> EngineCatalog:
    """The engine's records of `cat`, made once per catalog and kept with it (`Catalog.derived`, which a page's
    recording view shares with the catalog it views)."""
    eng = cat.derived.get(EngineCatalog)
    if not isinstance(eng, EngineCatalog):
        eng = cat.derived[EngineCatalog] = EngineCatalog.from_export(export(cat.loaded))
    return eng
