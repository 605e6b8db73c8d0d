"""The interconnect page's tables and charts: the bandwidth tiers, the GPUs each model needs, NVLink by generation."""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog, Network, Node, NVLink, PCIe, required
from snippets.data.units import Bandwidth
from snippets.pages.interconnect.common import (
    MODELS,
    OLDER_NODE,
    PRECISIONS,
    nvlink_of,
    pcie_x16,
)
from snippets.pages.interconnect.deployed import (
    Deployed,
)
from snippets.pages.scenario import reference
from snippets.render import charts, fmt


@dataclass(frozen=True)
class Tier:
    """One rung of the bandwidth cliff, on the per-direction basis."""

    tier: str
    link: str
    one_way: Bandwidth
    as_quoted: str


def tiers(cat: Catalog, node_id: str | None = None) -> list[Tier]:
    """HBM, NVLink, the GPU's PCIe host link and the network of a node (the scenario's by default), one way each."""
    node = cat.interconnect(node_id or reference(cat).node.id, Node)
    acc = cat.accelerators[node.accelerator]
    nic = cat.interconnect(required(node.nic, f"a NIC for {node.name}"), Network)
    nics_per_gpu = required(node.nics_per_gpu, f"NICs per GPU for {node.name}")
    host_id = required(acc.host_link, f"a PCIe host link for {acc.name}")
    lanes = required(acc.host_link_lanes, f"host link lanes for {acc.name}")
    host = cat.interconnect(host_id, PCIe)
    out = [
        Tier("HBM", f"{acc.memory_type} on {acc.name}", acc.memory_bandwidth.bandwidth.one_way(),
             f"{fmt.number(acc.memory_bandwidth.value, 2).rstrip('0').rstrip('.')} {acc.memory_bandwidth.unit}, "
             "shared by reads and writes"),
    ]
    if acc.scale_up is not None:
        link = cat.interconnect(acc.scale_up.fabric, NVLink)
        bw = acc.scale_up.bandwidth
        out.append(Tier("NVLink", f"{link.name}, {link.links_per_gpu} links per GPU", nvlink_of(cat, acc),
                        f"{fmt.number(bw.value)} {bw.unit}, {bw.direction.label}"))
    out.append(Tier("PCIe", f"{host.name} x{lanes}", pcie_x16(cat, host_id, lanes),
                    f"derived: {fmt.number(host.transfer_rate.value)} {host.transfer_rate.unit} × "
                    f"{lanes} lanes × {host.encoding.payload_bits}/{host.encoding.line_bits}"))
    nic_bw = nic.port.bandwidth.one_way() * nics_per_gpu
    out.append(Tier("Network", f"{nic.name}, {fmt.number(nics_per_gpu)} port per GPU", nic_bw,
                    f"{fmt.number(nic.port.value)} {nic.port.unit} per port, {nic.port.direction.label}"))
    return out


def cliff_table(cat: Catalog) -> str:
    """The bandwidth cliff: each tier one way, and how many times slower than HBM it is."""
    ts = tiers(cat)
    hbm = ts[0].one_way
    rows: list[list[fmt.Cell]] = []
    for t in ts:
        rows.append([
            t.tier,
            t.link,
            fmt.bandwidth(t.one_way, "GB/s", 1 if t.one_way.in_unit("GB/s") < 100 else 0),
            t.as_quoted,
            fmt.ratio(hbm.ratio(t.one_way), 1 if hbm.ratio(t.one_way) < 20 else 0),
        ])
    return fmt.table(
        "cliff",
        ["Tier", "Link", "One way", "As its source quotes it", "HBM is this many times faster"],
        rows,
        align="llrlr",
        key=1,
    )


def cliff_chart(cat: Catalog) -> str:
    """The bandwidth cliff, one way each, with a caption that says it in words; on a log axis only where the
    tiers span `charts.LOG_AXIS_DECADES` (they span nearly two decades: each bar also prints its ratio to the slowest)."""
    ts = tiers(cat)
    hbm = ts[0].one_way
    bars_ = [charts.Bar(f"{t.tier}: {t.link}", t.one_way.in_unit("GB/s")) for t in ts]
    steps = ", ".join(f"{hbm.ratio(t.one_way):.0f}× {t.tier}" if hbm.ratio(t.one_way) >= 20
                      else f"{hbm.ratio(t.one_way):.1f}× {t.tier}" for t in ts[1:])
    scale = ", log scale" if charts.wants_log_axis([b.value for b in bars_]) else ""
    words = (f"One-way bandwidth per GPU on an {reference(cat).node.name} node{scale}: "
             f"HBM at {hbm.in_unit('GB/s'):,.0f} GB/s is {steps}.")
    svg = charts.tier_bars("cliff-chart", bars_, "GB/s, one way", "The bandwidth cliff", words)
    return charts.figure(svg, words)


CHART_PRECISIONS = ("bf16", "fp8", "int8", "int4")


def gpus_chart(cat: Catalog) -> str:
    """GPUs the engine deploys, by model and precision, against the GPUs of one node."""
    r = reference(cat)
    node = r.node
    bars_: list[charts.Bar] = []
    parts = []
    for m in MODELS:
        for p in CHART_PRECISIONS:
            d = r.deployment(m, p)
            bars_.append(charts.Bar(cat.precisions[p].name, d.gpus, cat.models[m].name))
            parts.append(f"{cat.models[m].name} {cat.precisions[p].name}: {d.gpus} ({d.layout.label})")
    words = (f"GPUs a serving engine deploys on an {node.name} node ({r.eng.layout_policies[r.scenario.layout_policy].name}), "
             f"by model and precision ({'; '.join(parts)}); the dashed line is one {node.gpus}-GPU node.")
    svg = charts.grouped_bars("gpus-chart", bars_, "GPUs deployed", "GPUs deployed by model and precision", words,
                              line=node.gpus, line_label=f"one node ({node.gpus} GPUs)")
    return charts.figure(svg, words)


def sizing_table(cat: Catalog) -> str:
    """Model x precision as the engine deploys it: weights, layout, GPUs, nodes, memory of the busiest GPU."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for m in MODELS:
        for p in PRECISIONS:
            e = Deployed(r, m, p)
            d = e.dep
            if d.gpus == 1:
                verdict = "Yes: a single GPU"
            elif d.fits_one_node:
                verdict = "Yes"
            else:
                verdict = "No: spans nodes"
            rows.append([f"{e.model} {e.precision}", e.weight, e.layout, e.gpus, e.nodes, e.weights_per_gpu,
                         e.kv_per_gpu, e.used_per_gpu, verdict])
    return fmt.table(
        "sizing",
        ["Model and precision", "Weights", "Layout", "GPUs", "Nodes", "Weights per GPU", "KV cache per GPU",
         "Pool used per GPU", f"One {r.node.gpus}-GPU node?"],
        rows,
        align="lrlrrrrrl",
    )


def nvlink_table(cat: Catalog) -> str:
    """NVLink per GPU on A100 and H100 against PCIe Gen4 and Gen5 x16, on both bases."""
    rows: list[list[fmt.Cell]] = []
    for node_id in (OLDER_NODE, reference(cat).node.id):
        acc = cat.accelerators[cat.interconnect(node_id, Node).accelerator]
        link = cat.interconnect(required(acc.scale_up, f"a scale-up fabric for {acc.name}").fabric, NVLink)
        one = nvlink_of(cat, acc)
        rows.append([f"{link.name} on {acc.name}", fmt.count(link.links_per_gpu, "links"),
                     fmt.bandwidth(one), fmt.bandwidth(one.both_summed())])
    for pid in ("pcie-gen4", "pcie-gen5"):
        one = pcie_x16(cat, pid)
        rows.append([f"{cat.interconnect(pid, PCIe).name} x16", fmt.count(16, "lanes"),
                     fmt.bandwidth(one, digits=1), fmt.bandwidth(one.both_summed(), digits=1)])
    return fmt.table("nvlink", ["Link", "Links or lanes", "Per direction", "Both directions summed"],
                     rows, align="lrrr")
