"""Page model of "Tensor & pipeline parallelism" (docs/parallelism.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets` (parallel.py for the traffic, layout.py for the layouts, decode.py for the
token-time lower bound). The reference hardware is the 8-GPU HGX H100 node, as on the
interconnect page; activations travel in BF16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from snippets import fmt
from snippets.bandwidth import transfer_time
from snippets.data import Catalog, Network, Node, NVLink, PCIe, required
from snippets.fmt import Figure
from snippets.layout import Deployment, deploy, tp_degrees
from snippets.pages.interconnect import nvlink_of, pcie_x16
from snippets.parallel import (
    ALLREDUCES_PER_LAYER,
    break_even_tokens,
    comm_share,
    pp_boundary_bytes,
    pp_bytes_per_token,
    ring_allreduce_bytes_per_gpu,
    ring_allreduce_steps,
    token_read_time,
    tp_allreduce_message_bytes,
    tp_bytes_per_token,
    tp_messages_per_token,
)
from snippets.units import Bandwidth

NODE = "hgx-h100-8"
RESERVE = "runtime-reserve"
ACTIVATIONS = "bf16"
"""Activations (and so all TP and PP traffic) stay 16-bit, also when weights are INT8 or INT4 (weight-only)."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("fp16", "int8", "int4")
WORKED = ("llama-3.1-405b", "fp16")
SMALL = ("llama-3.1-70b", "fp16")
RING_SIZES = (2, 4, 8)

SOURCES = (
    ("accelerators", "h100-sxm"),
    ("interconnects", "nvlink-4"),
    ("interconnects", "nvswitch-gen3"),
    ("interconnects", "pcie-gen4"),
    ("interconnects", "pcie-gen5"),
    ("interconnects", "infiniband-ndr"),
    ("interconnects", "hgx-h100-8"),
    ("models", "llama-3.1-70b"),
    ("models", "llama-3.1-405b"),
    ("precisions", "bf16"),
    ("precisions", "fp16"),
    ("precisions", "int8"),
    ("precisions", "int4"),
    ("assumptions", "runtime-reserve"),
)
"""The data entries this page's figures are computed from."""


def _short(model_id: str, precision_id: str) -> str:
    """Namespace key of a model x precision: ("llama-3.1-405b", "fp16") -> "m405_fp16"."""
    return f"m{model_id.split('-')[-1][:-1]}_{precision_id}"


def act_bytes(cat: Catalog) -> float:
    """Bytes of one activation element on the wire (BF16: 2)."""
    return cat.precisions[ACTIVATIONS].width.bytes


@dataclass(frozen=True)
class Link:
    """A link TP or PP traffic may cross, one way."""

    label: str
    one_way: Bandwidth


def links(cat: Catalog) -> dict[str, Link]:
    """NVLink of the node's GPU, PCIe 5.0 and 4.0 x16, and the node's network port per GPU: one way each."""
    node = cat.interconnect(NODE, Node)
    acc = cat.accelerators[node.accelerator]
    nic = cat.interconnect(required(node.nic, f"a NIC for {node.name}"), Network)
    if acc.scale_up is None:
        raise ValueError(f"{acc.name} has no NVLink: this page compares NVLink with the other links")
    out = {"nvlink": Link(cat.interconnect(acc.scale_up.fabric, NVLink).name, nvlink_of(cat, acc))}
    for key, pid in (("gen5", "pcie-gen5"), ("gen4", "pcie-gen4")):
        out[key] = Link(f"{cat.interconnect(pid, PCIe).name} x16", pcie_x16(cat, pid))
    out["network"] = Link(nic.name, nic.port.bandwidth.one_way() * required(node.nics_per_gpu, "NICs per GPU"))
    return out


@dataclass(frozen=True)
class Traffic:
    """What one deployment sends per decode step of one token, and its weight-read lower bound."""

    dep: Deployment
    model: str
    precision: str
    hidden: int
    layers: int
    message: float
    """Bytes of one all-reduce: the hidden state."""
    ring_per_gpu: float
    """Bytes each GPU sends in one ring all-reduce."""
    tp_bytes: float
    """Bytes each TP GPU sends on the critical path of one token, all layers."""
    tp_messages: int
    pp_bytes: float
    """Bytes over all stage boundaries."""
    read_s: float
    """Lower bound on the token's time: weights ÷ (TP x HBM), stage after stage."""

    def tp_time(self, link: Link) -> float:
        return transfer_time(self.tp_bytes, link.one_way)

    def pp_time(self, link: Link) -> float:
        return transfer_time(self.pp_bytes, link.one_way)


def traffic(cat: Catalog, model_id: str, precision_id: str) -> Traffic:
    """The TP and PP traffic of one token for `model_id` in `precision_id`, on its deployable layout."""
    dep = deploy(cat, model_id, precision_id, NODE, RESERVE)
    arch = cat.models[model_id].architecture
    b = act_bytes(cat)
    acc = cat.accelerators[cat.interconnect(NODE, Node).accelerator]
    tp, pp = dep.layout.tp, dep.layout.pp
    msg = tp_allreduce_message_bytes(arch.hidden_size, b)
    return Traffic(
        dep=dep,
        model=cat.models[model_id].name,
        precision=cat.precisions[precision_id].name,
        hidden=arch.hidden_size,
        layers=arch.layers,
        message=msg,
        ring_per_gpu=ring_allreduce_bytes_per_gpu(msg, tp),
        tp_bytes=tp_bytes_per_token(arch.layers, arch.hidden_size, b, tp),
        tp_messages=tp_messages_per_token(arch.layers, tp),
        pp_bytes=pp_bytes_per_token(arch.hidden_size, b, pp),
        read_s=token_read_time(dep.sizing.weight_bytes, acc.memory_bandwidth.bandwidth, tp, pp),
    )


# --------------------------------------------------------------------------- formatting

def us(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in microseconds."""
    return fmt.quantity(seconds * 1e6, "µs", digits, show_unit=True, basis=basis)


def ms(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in milliseconds."""
    return fmt.quantity(seconds * 1e3, "ms", digits, show_unit=True, basis=basis)


def nbytes_exact(n: float) -> Figure:
    """A small byte count, written out: 32,768 bytes."""
    if n != int(n):
        raise ValueError(f"not a whole byte count: {n!r}")
    return fmt.Figure(n, "B", f"{fmt.number(n)} bytes", "bytes")


def share(fraction: float) -> Figure:
    """A share of a token's time, to two significant digits: 0.11%, 0.0022%, 1.5%."""
    if fraction <= 0:
        return fmt.percent(0.0)
    digits = max(1, 1 - math.floor(math.log10(fraction * 100)))
    return fmt.percent(fraction, digits)


def link_bw(link: Link) -> Figure:
    """A link's one-way bandwidth, one decimal below 100 GB/s."""
    return fmt.bandwidth(link.one_way, "GB/s", 1 if link.one_way.in_unit("GB/s") < 100 else 0)


BW_BASIS = "bandwidth time only: no per-message latency"


def traffic_table(cat: Catalog, model_id: str, precision_id: str, name: str) -> str:
    """One token's TP all-reduces over each link, and the PP boundary over the network, at batch 1."""
    t = traffic(cat, model_id, precision_id)
    ls = links(cat)
    rows: list[list[fmt.Cell]] = []
    lay = t.dep.layout
    for key in ("nvlink", "gen5", "gen4", "network"):
        link = ls[key]
        c = t.tp_time(link)
        rows.append([
            f"TP{lay.tp} all-reduces over {link.label}",
            link_bw(link),
            fmt.nbytes(t.tp_bytes, "MB", 2),
            fmt.count(t.tp_messages, "messages"),
            us(c, basis=BW_BASIS),
            share(comm_share(c, t.read_s)),
            fmt.quantity(break_even_tokens(t.read_s, c), "tokens", 0),
        ])
    if lay.pp > 1:
        link = ls["network"]
        c = t.pp_time(link)
        rows.append([
            f"PP{lay.pp} boundary over {link.label}",
            link_bw(link),
            fmt.nbytes(t.pp_bytes, "KB", 1),
            fmt.count(lay.pp - 1, "messages"),
            us(c, 2, basis=BW_BASIS),
            share(comm_share(c, t.read_s)),
            fmt.quantity(break_even_tokens(t.read_s, c), "tokens", 0),
        ])
    return fmt.table(
        name,
        ["Traffic", "One way", "Bytes per token", "Sequential messages", "Bandwidth time",
         "Share of token time", "Tokens per step to match the weight read"],
        rows,
        align="lrrrrrr",
    )


def layout_table(cat: Catalog) -> str:
    """Model x precision: GPUs of capacity, the deployable layout, GPUs rented, nodes, TP traffic per token."""
    nvl = links(cat)["nvlink"]
    rows: list[list[fmt.Cell]] = []
    for m in MODELS:
        for p in PRECISIONS:
            t = traffic(cat, m, p)
            d = t.dep
            c = t.tp_time(nvl)
            rows.append([
                f"{t.model} {t.precision}",
                fmt.nbytes(d.sizing.weight_bytes, "GB", 1 if d.sizing.weight_bytes % 1e9 else 0),
                fmt.count(d.gpus_capacity),
                d.layout.label,
                fmt.count(d.gpus_rented),
                fmt.count(d.extra_gpus),
                fmt.count(d.nodes, "nodes"),
                fmt.nbytes(t.tp_bytes, "MB", 2) if d.layout.tp > 1 else "none",
                share(comm_share(c, t.read_s)) if d.layout.tp > 1 else "none: one GPU",
            ])
    return fmt.table(
        "layouts",
        ["Model and precision", "Weights", "GPUs of capacity", "Deployable layout", "GPUs rented",
         "Extra GPUs", "Nodes", "TP bytes per token", "TP on NVLink, share of token time"],
        rows,
        align="lrrlrrrrr",
    )


def ring_table(cat: Catalog) -> str:
    """A ring all-reduce of the worked model's hidden state over 2, 4 and 8 GPUs."""
    t = traffic(cat, *WORKED)
    nvl = links(cat)["nvlink"]
    rows: list[list[fmt.Cell]] = []
    for n in RING_SIZES:
        per_gpu = ring_allreduce_bytes_per_gpu(t.message, n)
        rows.append([
            f"{n} GPUs",
            fmt.count(ring_allreduce_steps(n) // 2, "steps"),
            fmt.count(ring_allreduce_steps(n) // 2, "steps"),
            nbytes_exact(t.message / n),
            fmt.quantity(per_gpu / t.message, "× message", 2),
            nbytes_exact(per_gpu),
            us(transfer_time(per_gpu, nvl.one_way), 3, basis=BW_BASIS),
        ])
    return fmt.table(
        "ring",
        ["Ring of", "Reduce-scatter steps", "All-gather steps", "Chunk per step", "Sent per GPU ÷ message",
         "Sent per GPU", "On NVLink"],
        rows,
        align="lrrrrrr",
    )


def worked_example(cat: Catalog) -> str:
    """The worked example, step by step, as Markdown with figure spans."""
    ns = namespace(cat)
    w = ns["w"]
    h = fmt.fig_html
    lines = [
        f"1. **Layout.** The weights need {h(w.gpus_capacity, 'worked.capacity')} GPUs; the deployable layout is "
        f"{ns['worked_layout']}: a TP group of {h(w.tp, 'worked.tp')} GPUs inside each node, and "
        f"{h(w.pp, 'worked.pp')} pipeline stages, one per node.",
        f"2. **One all-reduce.** Hidden size {h(w.hidden, 'worked.hidden')} × {h(ns['act_bytes'], 'worked.act_bytes')} "
        f"bytes = {h(w.message, 'worked.message')}.",
        f"3. **Ring over the TP group.** Each GPU sends 2 × ({h(w.tp, 'worked.tp')} − 1) / {h(w.tp, 'worked.tp')} = "
        f"{h(w.ring_factor, 'worked.ring_factor')} times the message: {h(w.ring_per_gpu, 'worked.ring_per_gpu')}, "
        "and receives as much.",
        f"4. **Per token.** {h(ns['allreduces_per_layer'], 'worked.allreduces_per_layer')} all-reduces per layer × "
        f"{h(w.layers, 'worked.layers')} layers × {h(w.ring_per_gpu, 'worked.ring_per_gpu')} = "
        f"{h(w.tp_bytes, 'worked.tp_bytes')} per GPU on the token's critical path, in "
        f"{h(w.tp_messages, 'worked.tp_messages')} sequential ring steps.",
        f"5. **Bandwidth time.** Over NVLink at {h(ns['nvlink'], 'worked.nvlink')} one way: "
        f"{h(w.tp_nvlink, 'worked.tp_nvlink')}. Over the network at {h(ns['network'], 'worked.network')}: "
        f"{h(w.tp_network, 'worked.tp_network')}.",
        f"6. **Token time, lower bound.** {h(w.weight, 'worked.weight')} of weights ÷ "
        f"({h(w.tp, 'worked.tp')} × {h(ns['hbm'], 'worked.hbm')}) = {h(w.read, 'worked.read')}: the "
        "stages take turns, so only one TP group reads at a time.",
        f"7. **Share.** Added to the weight read, the all-reduces take {h(w.tp_nvlink_share, 'worked.tp_nvlink_share')} "
        f"of the token's time on NVLink, and {h(w.tp_network_share, 'worked.tp_network_share')} if they crossed the "
        "network.",
        f"8. **The PP boundary.** The hidden state crosses between the nodes once: "
        f"{h(w.pp_bytes_exact, 'worked.pp_bytes')}, {h(w.pp_network, 'worked.pp_network')} on the network.",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Case:
    """One deployment's figures for prose."""

    model: str
    precision: str
    params: Figure
    weight: Figure
    gpus_capacity: Figure
    gpus_rented: Figure
    extra_gpus: Figure
    nodes: Figure
    layout: str
    tp: Figure
    pp: Figure
    hidden: Figure
    layers: Figure
    message: Figure
    ring_factor: Figure
    ring_per_gpu: Figure
    tp_bytes: Figure
    tp_messages: Figure
    pp_bytes_exact: Figure
    read: Figure
    tp_nvlink: Figure
    tp_network: Figure
    tp_nvlink_share: Figure
    tp_network_share: Figure
    pp_network: Figure
    break_even_nvlink: Figure
    break_even_network: Figure
    traffic: Traffic


def _case(cat: Catalog, model_id: str, precision_id: str) -> Case:
    t = traffic(cat, model_id, precision_id)
    d = t.dep
    ls = links(cat)
    nvl, net = ls["nvlink"], ls["network"]
    c_nvl = t.tp_time(nvl) if d.layout.tp > 1 else 0.0
    c_net = t.tp_time(net) if d.layout.tp > 1 else 0.0
    pp_b = pp_boundary_bytes(t.hidden, act_bytes(cat))
    return Case(
        model=t.model,
        precision=t.precision,
        params=fmt.params(d.sizing.params),
        weight=fmt.nbytes(d.sizing.weight_bytes, "GB"),
        gpus_capacity=fmt.count(d.gpus_capacity),
        gpus_rented=fmt.count(d.gpus_rented),
        extra_gpus=fmt.count(d.extra_gpus),
        nodes=fmt.count(d.nodes, "nodes"),
        layout=d.layout.label,
        tp=fmt.count(d.layout.tp, "GPUs"),
        pp=fmt.count(d.layout.pp, "stages"),
        hidden=fmt.count(t.hidden, "elements"),
        layers=fmt.count(t.layers, "layers"),
        message=nbytes_exact(t.message),
        ring_factor=fmt.quantity(ring_allreduce_steps(d.layout.tp) / d.layout.tp, "× message", 2),
        ring_per_gpu=nbytes_exact(t.ring_per_gpu),
        tp_bytes=fmt.nbytes(t.tp_bytes, "MB", 2),
        tp_messages=fmt.count(t.tp_messages, "messages"),
        pp_bytes_exact=nbytes_exact(pp_b),
        read=ms(t.read_s, basis="lower bound: weights ÷ (TP × HBM bandwidth)"),
        tp_nvlink=us(c_nvl, basis=BW_BASIS),
        tp_network=us(c_net, 0, basis=BW_BASIS),
        tp_nvlink_share=share(comm_share(c_nvl, t.read_s)),
        tp_network_share=share(comm_share(c_net, t.read_s)),
        pp_network=us(transfer_time(pp_b, net.one_way), 2, basis=BW_BASIS),
        break_even_nvlink=fmt.quantity(break_even_tokens(t.read_s, c_nvl), "tokens", 0) if c_nvl else
        fmt.Figure(0, "tokens", "none"),
        break_even_network=fmt.quantity(break_even_tokens(t.read_s, c_net), "tokens", 0) if c_net else
        fmt.Figure(0, "tokens", "none"),
        traffic=t,
    )


def namespace(cat: Catalog) -> dict[str, Any]:
    """The names the page's `{{ ... }}` values and claims use."""
    node = cat.interconnect(NODE, Node)
    acc = cat.accelerators[node.accelerator]
    ls = links(cat)
    cases = {_short(m, p): _case(cat, m, p) for m in MODELS for p in PRECISIONS}
    w, s = cases[_short(*WORKED)], cases[_short(*SMALL)]
    wt, st = w.traffic, s.traffic
    nvl, net = ls["nvlink"], ls["network"]
    arch405 = cat.models[WORKED[0]].architecture
    valid_tp = tp_degrees(arch405.attention_heads, arch405.kv_heads, node.gpus)
    i8 = cases["m405_int8"].traffic.dep

    tp_over_pp_bytes = wt.tp_bytes / wt.pp_bytes
    tp_net_s = wt.tp_time(net)
    pp_net_s = wt.pp_time(net)
    rounded = [c.traffic.dep for c in cases.values() if c.traffic.dep.extra_gpus > 0]
    chunk = wt.message / wt.dep.layout.tp
    one_stage_read = token_read_time(wt.dep.sizing.weight_bytes, acc.memory_bandwidth.bandwidth,
                                     wt.dep.layout.gpus)
    tp_net_share = comm_share(tp_net_s, wt.read_s)
    tp_nvl_share = comm_share(wt.tp_time(nvl), wt.read_s)

    return {
        "gpu_name": acc.name,
        "node_name": node.name,
        "node_gpus": fmt.count(node.gpus),
        "gpu_memory": fmt.nbytes(acc.memory.bytes, "GB"),
        "reserve": fmt.percent(cat.assumptions[RESERVE].value.fraction, 1),
        "hbm": fmt.bandwidth(acc.memory_bandwidth.bandwidth.one_way(), "TB/s", 2),
        "nvlink": fmt.bandwidth(nvl.one_way),
        "gen5": fmt.bandwidth(ls["gen5"].one_way, digits=1),
        "gen4": fmt.bandwidth(ls["gen4"].one_way, digits=1),
        "network": fmt.bandwidth(net.one_way),
        "network_name": net.label,
        "act_name": cat.precisions[ACTIVATIONS].name,
        "act_bytes": fmt.quantity(act_bytes(cat), "bytes/element", 0),
        "allreduces_per_layer": fmt.count(ALLREDUCES_PER_LAYER, "all-reduces"),
        **cases,
        "w": w,
        "s": s,
        "worked_layout": w.layout,
        "valid_tp_405": ", ".join(str(t) for t in valid_tp),
        "heads_405": fmt.count(arch405.attention_heads, "heads"),
        "kv_heads_405": fmt.count(arch405.kv_heads, "heads"),
        "layers_405": fmt.count(arch405.layers, "layers"),
        "tp_over_pp_bytes": fmt.ratio(tp_over_pp_bytes, 0, basis="TP bytes per GPU per token ÷ PP boundary bytes"),
        "tp_over_pp_time": fmt.ratio(tp_net_s / pp_net_s, 0, basis="both over the network, bandwidth time"),
        "nvlink_over_network": fmt.ratio(nvl.one_way.ratio(net.one_way), basis="one way each"),
        "chunk": nbytes_exact(chunk),
        "chunk_nvlink": fmt.quantity(transfer_time(chunk, nvl.one_way) * 1e9, "ns", 1, show_unit=True,
                                     basis=BW_BASIS),
        "chunk_network": fmt.quantity(transfer_time(chunk, net.one_way) * 1e9, "ns", 0, show_unit=True,
                                      basis=BW_BASIS),
        "one_stage_read": ms(one_stage_read, basis="if all the GPUs read at once"),
        "m405_int8_extra_share": fmt.percent(i8.extra_gpus / i8.gpus_rented),
        "w_extra_share": fmt.percent(wt.dep.extra_gpus / wt.dep.gpus_rented),
        # Claims the prose makes.
        "worked_spans_nodes": fmt.claim(wt.dep.nodes > 1 and wt.dep.layout.pp > 1,
                                        f"{wt.dep.layout.label} on {wt.dep.nodes} nodes"),
        "worked_tp_in_node": fmt.claim(wt.dep.layout.tp <= node.gpus, f"TP{wt.dep.layout.tp} ≤ {node.gpus} GPUs"),
        "tp_dwarfs_pp": fmt.claim(tp_over_pp_bytes > 100,
                                  f"TP sends {tp_over_pp_bytes:.0f}× the PP boundary's bytes per token"),
        "network_share_above_nvlink": fmt.claim(tp_net_share > 5 * tp_nvl_share,
                                                f"{tp_net_share:.2%} over the network vs {tp_nvl_share:.2%} on NVLink"),
        "batch1_bandwidth_small": fmt.claim(tp_net_share < 0.05 and tp_nvl_share < 0.01,
                                            f"shares at batch 1: {tp_nvl_share:.2%} (NVLink), {tp_net_share:.2%} "
                                            "(network)"),
        "int8_rounds_up": fmt.claim(i8.gpus_rented > i8.gpus_capacity and i8.nodes == 1,
                                    f"{i8.gpus_capacity} GPUs of capacity → {i8.layout.label} = {i8.gpus_rented}"),
        "capacity_not_valid_tp": fmt.claim(
            arch405.attention_heads % i8.gpus_capacity != 0 and arch405.kv_heads % i8.gpus_capacity != 0,
            f"{arch405.attention_heads} and {arch405.kv_heads} heads are not multiples of {i8.gpus_capacity}"),
        "tp_thousands_of_messages": fmt.claim(wt.tp_messages >= 1000, f"{wt.tp_messages} ring steps per token"),
        "worked_exceeds_node": fmt.claim(wt.dep.gpus_capacity > node.gpus,
                                         f"{wt.dep.gpus_capacity} GPUs of capacity > {node.gpus} per node"),
        "int8_no_stages": fmt.claim(i8.nodes == 1 and i8.layout.pp == 1, f"{i8.layout.label} on {i8.nodes} node"),
        "small_fits_node": fmt.claim(st.dep.nodes == 1 and st.dep.layout.pp == 1, st.dep.layout.label),
        "pp_no_faster": fmt.claim(wt.read_s > one_stage_read * 1.5,
                                  f"{wt.read_s * 1e3:.1f} ms with stages in turn vs {one_stage_read * 1e3:.1f} ms"),
        "rounding_costs_gpus": fmt.claim(
            len(rounded) >= 3, "; ".join(f"{d.gpus_capacity} → {d.gpus_rented}" for d in rounded)),
    }
