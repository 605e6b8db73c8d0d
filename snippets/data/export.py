"""The validated catalog as the engine reads it: one JSON-ready mapping in base units.

`export(cat)` is the only place where the loader's entries (pydantic, units as the sources state
them) become the engine's inputs (bytes, bytes/s per direction, dense FLOP/s). The build calls
`engine_catalog(cat)`; the same mapping, written as JSON, is what a browser would load.
"""

from __future__ import annotations

from typing import Any

from snippets.data import Catalog, Efficiency, LayoutPolicy, MemoryPolicy, Network, Node, PCIe, TimeModel
from snippets.engine.specs import EngineCatalog


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


def export(cat: Catalog) -> dict[str, Any]:
    """Every entry the engine reads, keyed by `data/` id, in base units."""
    chips: dict[str, Any] = {}
    for k, a in cat.accelerators.items():
        dense = {fmt: f.dense for fmt, f in a.tensor.items()}
        chips[k] = {
            "name": a.name,
            "label_bytes": a.memory.bytes,
            "capacity_bytes": a.capacity_bytes,
            "capacity_reported": a.memory_reported is not None,
            "hbm_bytes_per_s": a.memory_bandwidth.bandwidth.bytes_per_s,
            "dense_flops": {fmt: t.flops_per_s for fmt, t in dense.items() if t is not None},
            "dense_derived": sorted(fmt for fmt, t in dense.items() if t is not None and t.derived),
            "scale_up_bytes_per_s": None if a.scale_up is None else a.scale_up.bandwidth.bandwidth.one_way().bytes_per_s,
            "host_link_bytes_per_s": _host_link(cat, k),
        }
    nodes = {k: {"name": n.name, "chip": n.accelerator, "gpus": n.gpus, "domain": n.domain, "scale_up": n.scale_up,
                 "network_bytes_per_s": _network(cat, n)}
             for k, n in cat.of_kind(Node).items()}
    models = {k: {"name": m.name, "nominal_params": m.nominal_params.count, "stated_params": m.stated_params.count,
                  "arch": m.architecture.model_dump()}
              for k, m in cat.models.items()}
    precisions = {k: {"name": p.name, "bits_per_param": p.bits_per_param, "tensor_format": p.tensor_format,
                      "keeps_16bit": sorted(p.keeps_16bit)}
                  for k, p in cat.precisions.items()}
    memory = {k: {"name": p.name, "utilization": p.utilization, "activation_bytes": p.activation_peak.bytes,
                  "non_torch_bytes": p.non_torch.bytes, "kv_block_tokens": p.kv_block_tokens}
              for k, p in cat.policies.items() if isinstance(p, MemoryPolicy)}
    layout = {k: {"name": p.name, "tp_limit": p.tp_limit, "across_nodes": p.across_nodes, "prefer": p.prefer,
                  "expert_parallel": p.expert_parallel, "whole_nodes": p.whole_nodes}
              for k, p in cat.policies.items() if isinstance(p, LayoutPolicy)}
    def fraction(e: Efficiency) -> float:
        return e.achieved.bandwidth.ratio(e.peak.bandwidth)

    times = {k: {"name": t.name, "hbm_fraction": fraction(cat.efficiencies[t.hbm_efficiency]),
                 "link_fraction": fraction(cat.efficiencies[t.link_efficiency]),
                 "nvlink_hop_s": cat.latencies[t.hop_latency_nvlink].value.seconds,
                 "pcie_hop_s": cat.latencies[t.hop_latency_pcie].value.seconds,
                 "network_hop_s": t.hop_latency_network.seconds, "compute_fraction": t.compute_fraction,
                 "layer_overhead_s": t.layer_overhead.seconds}
             for k, t in cat.policies.items() if isinstance(t, TimeModel)}
    scenarios = {k: {"name": s.name, "node": s.node, "memory_policy": s.memory_policy, "layout_policy": s.layout_policy,
                     "time_model": s.time_model,
                     "input_tokens": s.input_tokens, "output_tokens": s.output_tokens, "concurrency": s.concurrency,
                     "kv_precision": s.kv_precision}
                 for k, s in cat.scenarios.items()}
    prices = {p.accelerator: {"accelerator": p.accelerator, "usd_per_gpu_hour": p.price.value,
                              "gpus_per_unit": p.gpus_per_unit, "provider": p.provider, "offering": p.offering}
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
