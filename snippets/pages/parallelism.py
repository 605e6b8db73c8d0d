"""Page model of "Tensor & pipeline parallelism" (docs/parallelism.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets`: every layout, GPU count, node count and token-time bound is a deployment
of `snippets.engine` (through `snippets.pages.scenario.reference`), on the scenario's node, as on the
interconnect page; parallel.py counts the traffic of those layouts. Activations travel in BF16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from snippets import fmt
from snippets.bandwidth import transfer_time
from snippets.data import Catalog, Network, Node, NVLink, PCIe, required
from snippets.engine import Deployment, Layout, feasible, setting
from snippets.engine.layout import kv_replicas, pp_partition, tp_degrees
from snippets.fmt import Figure
from snippets.pages.interconnect import nvlink_of, pcie_x16
from snippets.pages.scenario import reference
from snippets.parallel import (
    ALLREDUCES_PER_LAYER,
    break_even_tokens,
    comm_share,
    pp_boundary_bytes,
    pp_bytes_per_token,
    ring_allreduce_bytes_per_gpu,
    ring_allreduce_steps,
    tp_allreduce_message_bytes,
    tp_bytes_per_token,
    tp_messages_per_token,
)
from snippets.units import Bandwidth

ACTIVATIONS = "bf16"
"""Activations (and so all TP and PP traffic) stay 16-bit, also when weights are INT8 or INT4 (weight-only)."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8", "int4")
WORKED = ("llama-3.1-405b", "bf16")
SMALL = ("llama-3.1-70b", "bf16")
UNEVEN = "deepseek-v3"
"""A model whose layer count no common stage count divides (61 layers)."""
UNEVEN_STAGES = 4
FEWEST = "fewest-gpus"
"""The layout policy that asks how few GPUs an engine accepts (data/policies.yaml)."""
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
    ("models", "deepseek-v3"),
    ("precisions", "bf16"),
    ("precisions", "fp8"),
    ("precisions", "int4"),
    ("policies", "vllm-default"),
    ("policies", "tp-in-node"),
    ("policies", "fewest-gpus"),
    ("scenarios", "reference"),
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
    node = cat.interconnect(reference(cat).node.id, Node)
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
    """What one deployment sends per decode step of one token, and its memory-read lower bound."""

    dep: Deployment
    """The engine's deployment, on the layout the scenario's policy chose."""
    fewest: Deployment
    """The same model on the fewest GPUs an engine accepts (the fewest-gpus policy)."""
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
    """Lower bound on the token's time: the inverse of the engine's decode ceiling (each stage's busiest GPU
    reads its weights and KV cache from HBM, stage after stage)."""

    def tp_time(self, link: Link) -> float:
        return transfer_time(self.tp_bytes, link.one_way)

    def pp_time(self, link: Link) -> float:
        return transfer_time(self.pp_bytes, link.one_way)


def traffic(cat: Catalog, model_id: str, precision_id: str) -> Traffic:
    """The TP and PP traffic of one token for `model_id` in `precision_id`, on the layout the engine deploys."""
    r = reference(cat)
    dep = r.deployment(model_id, precision_id)
    arch = cat.models[model_id].architecture
    b = act_bytes(cat)
    tp, pp = dep.layout.tp, dep.layout.pp
    msg = tp_allreduce_message_bytes(arch.hidden_size, b)
    return Traffic(
        dep=dep,
        fewest=r.deployment(model_id, precision_id, layout_policy=FEWEST),
        model=cat.models[model_id].name,
        precision=cat.precisions[precision_id].name,
        hidden=arch.hidden_size,
        layers=arch.layers,
        message=msg,
        ring_per_gpu=ring_allreduce_bytes_per_gpu(msg, tp),
        tp_bytes=tp_bytes_per_token(arch.layers, arch.hidden_size, b, tp),
        tp_messages=tp_messages_per_token(arch.layers, tp),
        pp_bytes=pp_bytes_per_token(arch.hidden_size, b, pp),
        read_s=1 / dep.decode_ceiling,
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
    """Model x precision: the fewest GPUs an engine accepts, the layout the policy chooses, GPUs rented, nodes,
    TP traffic per token."""
    nvl = links(cat)["nvlink"]
    rows: list[list[fmt.Cell]] = []
    for m in MODELS:
        for p in PRECISIONS:
            t = traffic(cat, m, p)
            d, f = t.dep, t.fewest
            c = t.tp_time(nvl)
            rows.append([
                f"{t.model} {t.precision}",
                fmt.nbytes(d.weight_bytes, "GB", 1),
                f.layout.label,
                fmt.count(f.gpus),
                d.layout.label,
                fmt.count(d.gpus),
                fmt.count(d.gpus - f.gpus),
                fmt.count(d.nodes, "nodes"),
                fmt.nbytes(t.tp_bytes, "MB", 2) if d.layout.tp > 1 else "none",
                share(comm_share(c, t.read_s)) if d.layout.tp > 1 else "none: one GPU",
            ])
    return fmt.table(
        "layouts",
        ["Model and precision", "Weights", "Fewest-GPU layout", "GPUs, fewest", "Chosen layout", "GPUs, chosen",
         "Extra GPUs", "Nodes", "TP bytes per token", "TP on NVLink, share of token time"],
        rows,
        align="lrlrlrrrrr",
    )


def rules_table(cat: Catalog) -> str:
    """Layouts the engines accept that the scenario's policy does not choose: each checked with `feasible`."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for model_id, precision_id, lay, what in _accepted(cat):
        st = setting(r.eng, model_id, precision_id, r.scenario.id)
        arch = st.model.arch
        problems = feasible(st, lay)
        rows.append([
            f"{st.model.name} {st.precision.name} on {lay.label}",
            fmt.count(lay.gpus),
            ", ".join(str(n) for n in pp_partition(arch.layers, lay.pp)),
            # MLA caches one compressed latent per token that every TP rank holds whole
            fmt.count(kv_replicas(arch.kv_heads, lay.tp) if arch.mla is None else lay.tp, "GPUs"),
            "accepted" if not problems else "refused: " + "; ".join(problems),
            what,
        ])
    return fmt.table("rules", ["Layout", "GPUs", "Layers per stage", "GPUs holding each KV head (MLA: the latent)",
                               "The engine's rules and memory", "Why the policy does not choose it"],
                     rows, align="lrlrll")


def _accepted(cat: Catalog) -> list[tuple[str, str, Layout, str]]:
    """The valid layouts the page shows beside the chosen ones, with why the policy passes them over."""
    r = reference(cat)
    node = r.node.gpus
    w = r.deployment(*WORKED)
    fewest = r.deployment(*WORKED, layout_policy=FEWEST).layout
    uneven = r.deployment(UNEVEN, "fp8")
    return [
        (WORKED[0], WORKED[1], Layout(w.layout.tp * w.layout.pp), "TP across nodes: its all-reduces cross the network"),
        (WORKED[0], WORKED[1], fewest, f"{fewest.gpus} GPUs are not whole {node}-GPU nodes"),
        (UNEVEN, "fp8", Layout(node, UNEVEN_STAGES), f"more stages than it needs: the policy stops at {uneven.layout.label}"),
    ]


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
        f"1. **Layout.** Chosen by policy ({ns['policy_name']}): {ns['worked_layout']}, a TP group of "
        f"{h(w.tp, 'worked.tp')} GPUs inside each node and {h(w.pp, 'worked.pp')} pipeline stages, one per node, "
        f"{h(w.gpus_rented, 'worked.gpus')} GPUs in all.",
        f"2. **One all-reduce.** Hidden size {h(w.hidden, 'worked.hidden')} × {h(ns['act_bytes'], 'worked.act_bytes')} "
        f"bytes = {h(w.message, 'worked.message')}.",
        f"3. **Ring over the TP group.** Each GPU sends `2 × (TP − 1) / TP` times the message; at "
        f"TP {h(w.tp, 'worked.tp')} that is {h(w.ring_factor, 'worked.ring_factor')} times: "
        f"{h(w.ring_per_gpu, 'worked.ring_per_gpu')}, "
        "and receives as much.",
        f"4. **Per token.** {h(ns['allreduces_per_layer'], 'worked.allreduces_per_layer')} all-reduces per layer × "
        f"{h(w.layers, 'worked.layers')} layers × {h(w.ring_per_gpu, 'worked.ring_per_gpu')} = "
        f"{h(w.tp_bytes, 'worked.tp_bytes')} per GPU on the token's critical path, in "
        f"{h(w.tp_messages, 'worked.tp_messages')} sequential ring steps.",
        f"5. **Bandwidth time.** Over NVLink at {h(ns['nvlink'], 'worked.nvlink')} one way: "
        f"{h(w.tp_nvlink, 'worked.tp_nvlink')}. Over the network at {h(ns['network'], 'worked.network')}: "
        f"{h(w.tp_network, 'worked.tp_network')}.",
        f"6. **Token time, lower bound.** The engine's decode ceiling: each stage's busiest GPU reads its "
        f"{h(w.weights_per_gpu, 'worked.weights_per_gpu')} of weights and its KV cache at {h(ns['hbm'], 'worked.hbm')}, "
        f"stage after stage, {h(w.read, 'worked.read')} per token: the stages take turns, so only one TP group "
        "reads at a time.",
        f"7. **Share.** Added to the memory read, the all-reduces take {h(w.tp_nvlink_share, 'worked.tp_nvlink_share')} "
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
    fewest_layout: str
    gpus_fewest: Figure
    gpus_rented: Figure
    extra_gpus: Figure
    weights_per_gpu: Figure
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
        params=fmt.params(d.params, 1),
        weight=fmt.nbytes(d.weight_bytes, "GB", 1),
        fewest_layout=t.fewest.layout.label,
        gpus_fewest=fmt.count(t.fewest.gpus),
        gpus_rented=fmt.count(d.gpus),
        extra_gpus=fmt.count(d.gpus - t.fewest.gpus),
        weights_per_gpu=fmt.nbytes(d.memory.weights, "GiB", 1),
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
        read=ms(t.read_s, basis="lower bound: the engine's decode ceiling, stages in turn"),
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
    r = reference(cat)
    node = cat.interconnect(r.node.id, Node)
    acc = cat.accelerators[node.accelerator]
    ls = links(cat)
    cases = {_short(m, p): _case(cat, m, p) for m in MODELS for p in PRECISIONS}
    w, s = cases[_short(*WORKED)], cases[_short(*SMALL)]
    wt, st = w.traffic, s.traffic
    nvl, net = ls["nvlink"], ls["network"]
    arch405 = r.eng.models[WORKED[0]].arch
    valid_tp = tp_degrees(arch405, node.gpus)
    f8c = cases["m405_fp8"].traffic
    f8, f8_fewest = f8c.dep, f8c.fewest
    wf = wt.fewest
    lpol = r.eng.layout_policies[r.scenario.layout_policy]
    fewest_pol = r.eng.layout_policies[FEWEST]
    st405 = setting(r.eng, WORKED[0], WORKED[1], r.scenario.id)
    tp_across = Layout(wt.dep.layout.tp * wt.dep.layout.pp)
    tp_across_ok = not feasible(st405, tp_across)
    fewest_ok = not feasible(st405, wf.layout)
    uneven = r.eng.models[UNEVEN]
    uneven_parts = pp_partition(uneven.arch.layers, UNEVEN_STAGES)
    parts_405 = pp_partition(arch405.layers, UNEVEN_STAGES)

    tp_over_pp_bytes = wt.tp_bytes / wt.pp_bytes
    tp_net_s = wt.tp_time(net)
    pp_net_s = wt.pp_time(net)
    rounded = [c.traffic for c in cases.values() if c.traffic.dep.gpus > c.traffic.fewest.gpus]
    chunk = wt.message / wt.dep.layout.tp
    # Teaching bound: the same bytes if every stage could read at once (the mean stage, not the engine's sum).
    one_stage_read = wt.read_s / wt.dep.layout.pp
    tp_net_share = comm_share(tp_net_s, wt.read_s)
    tp_nvl_share = comm_share(wt.tp_time(nvl), wt.read_s)

    return {
        "gpu_name": acc.name,
        "node_name": node.name,
        "node_gpus": fmt.count(node.gpus),
        "gpu_memory": fmt.nbytes(acc.memory.bytes, "GB"),
        "policy_name": lpol.name,
        "fewest_policy_name": fewest_pol.name,
        "context": fmt.count(r.scenario.context_tokens, "tokens", show_unit=True),
        "tp_across": tp_across.label,
        "tp_across_replicas": fmt.count(kv_replicas(arch405.kv_heads, tp_across.tp), "GPUs"),
        "uneven_model": uneven.name,
        "uneven_layers": fmt.count(uneven.arch.layers, "layers"),
        "uneven_stages": fmt.count(UNEVEN_STAGES, "stages"),
        "uneven_parts": ", ".join(str(n) for n in uneven_parts),
        "parts_405": ", ".join(str(n) for n in parts_405),
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
        "m405_fp8_extra_share": fmt.percent((f8.gpus - f8_fewest.gpus) / f8.gpus),
        "w_extra_share": fmt.percent((wt.dep.gpus - wf.gpus) / wt.dep.gpus),
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
        "fp8_rounds_up": fmt.claim(f8.gpus > f8_fewest.gpus and f8.nodes == 1 and f8.layout.pp == 1,
                                   f"fewest {f8_fewest.layout.label} = {f8_fewest.gpus} → {f8.layout.label} = "
                                   f"{f8.gpus}"),
        "fewest_not_valid_tp": fmt.claim(
            arch405.attention_heads % f8_fewest.gpus != 0 and arch405.kv_heads % f8_fewest.gpus != 0,
            f"{arch405.attention_heads} and {arch405.kv_heads} heads are not multiples of {f8_fewest.gpus}"),
        "fewest_uses_stages": fmt.claim(f8_fewest.layout.pp > 1 and f8_fewest.nodes == 1,
                                        f"{f8_fewest.layout.label} on {f8_fewest.nodes} node"),
        "tp_above_kv_accepted": fmt.claim(
            tp_across_ok and tp_across.tp > arch405.kv_heads,
            f"{tp_across.label} > {arch405.kv_heads} KV heads: feasible, each KV head on "
            f"{kv_replicas(arch405.kv_heads, tp_across.tp)} GPUs"),
        "fewest_accepted": fmt.claim(fewest_ok and wf.gpus < wt.dep.gpus,
                                     f"{wf.layout.label} = {wf.gpus} GPUs feasible; the policy rents {wt.dep.gpus}"),
        "fewest_not_whole_nodes": fmt.claim(wf.gpus % node.gpus != 0 and wf.gpus > node.gpus,
                                            f"{wf.gpus} GPUs over nodes of {node.gpus}"),
        "uneven_split": fmt.claim(uneven.arch.layers % UNEVEN_STAGES != 0 and len(set(uneven_parts)) > 1,
                                  f"{uneven.arch.layers} layers in {UNEVEN_STAGES} stages: {uneven_parts}"),
        "tp_thousands_of_messages": fmt.claim(wt.tp_messages >= 1000, f"{wt.tp_messages} ring steps per token"),
        "worked_exceeds_node": fmt.claim(wf.gpus > node.gpus,
                                         f"fewest {wf.layout.label} = {wf.gpus} GPUs > {node.gpus} per node"),
        "fp8_no_stages": fmt.claim(f8.nodes == 1 and f8.layout.pp == 1, f"{f8.layout.label} on {f8.nodes} node"),
        "small_fits_node": fmt.claim(st.dep.nodes == 1 and st.dep.layout.pp == 1, st.dep.layout.label),
        "pp_no_faster": fmt.claim(wt.read_s > one_stage_read * 1.5,
                                  f"{wt.read_s * 1e3:.1f} ms with stages in turn vs {one_stage_read * 1e3:.1f} ms"),
        "rounding_costs_gpus": fmt.claim(
            len(rounded) >= 3, "; ".join(f"{t.fewest.layout.label} → {t.dep.layout.label}" for t in rounded)),
    }
