"""Page model of "Interconnect & Why Big Models Need Many GPUs" (docs/interconnect.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets`. The node is the reference scenario's (`snippets.pages.scenario`); the A100
appears where the source material compares link generations.

Two kinds of sizing, kept apart: the source's rounded arithmetic (nominal parameters x bytes, over
the card's label less a flat reserve: `snippets.teaching.rounded`), shown as the teaching example and named
so; and what a serving engine deploys (`snippets.engine` through `reference(cat).deployment`),
which every other GPU count, layout, node count and verdict on the page comes from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from snippets.data import Accelerator, Catalog, Network, Node, NVLink, PCIe, required
from snippets.data.units import Bandwidth
from snippets.engine import Deployment, Layout, feasible, setting
from snippets.engine.collectives import Collective, allreduce
from snippets.engine.layout import tp_degrees
from snippets.engine.memory import BYTES_16BIT
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.serving import predict
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import Link, group_link
from snippets.pages import running, units
from snippets.pages.base import Page
from snippets.pages.scenario import Reference, reference
from snippets.pages.units import ms, us
from snippets.render import charts, fmt
from snippets.render.fmt import Claim, Figure
from snippets.teaching.rounded import Sizing, max_params, size_on_node, usable_bytes

OLDER_NODE = "hgx-a100-8"
"""The previous generation's node, for the NVLink comparison (a link table, not a deployment)."""
SOURCE_RESERVE = "runtime-reserve"
"""The source's flat reserve (data/assumptions.yaml): the teaching example's rounded arithmetic only."""
SOURCE_MODELS = ("llama-3.1-70b", "llama-3.1-405b")
SOURCE_PRECISION = "fp16"
"""The source's worked example: nominal parameters x FP16 bytes, against the card's label."""
SOURCE_TABLE_PRECISIONS = ("fp16", "int8")
"""The precisions of the source's closing table: its rows are each model in FP16 and in INT8."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
"""What an engine deploys: the table's rows, each sized by snippets.engine."""
ORDER_OF_MAGNITUDE = 10.0
QUIZ_SPLIT = ("llama-3.1-70b", "bf16")
"""The quiz's model that one card cannot hold, and whose TP degrees it compares."""
QUIZ_ALLREDUCE = ("llama-3.1-405b", "fp8")
"""The quiz's all-reduce: the largest model one node holds, on TP across the node."""


def pcie_x16(cat: Catalog, pcie_id: str, lanes: int = 16) -> Bandwidth:
    """Per-direction bandwidth of a PCIe generation at `lanes` lanes, derived from the spec's parts."""
    p = cat.interconnect(pcie_id, PCIe)
    return p.lanes(lanes)


def nvlink_of(cat: Catalog, acc: Accelerator) -> Bandwidth:
    """Per-GPU NVLink bandwidth from links x per-link rate (per direction)."""
    if acc.scale_up is None:
        raise ValueError(f"{acc.name} has no scale-up fabric")
    link = cat.interconnect(acc.scale_up.fabric, NVLink)
    return link.per_gpu


@dataclass(frozen=True)
class Row:
    """The source's rounded arithmetic for one model x precision, as figures (the teaching example)."""

    model: str
    precision: str
    params: Figure
    weight: Figure
    gpus_exact: Figure
    gpus_weights: Figure
    gpus_exact_usable: Figure
    gpus: Figure
    nodes: Figure
    fits_node: Claim
    spans_nodes: Claim
    fits_one_gpu: Claim
    sizing: Sizing


def sizing_fields(s: Sizing, weight: Figure | None = None, digits: int = 1) -> dict[str, Any]:
    """The figures and claims a model x precision row shows for one `Sizing` (this page's teaching rows and the
    precision page's): weight bytes (`weight` if the page formats them itself), GPU counts unrounded
    to `digits` decimals and rounded up, nodes, and the claims about one node and one GPU."""
    basis = f"{s.gpus_with_headroom} GPUs needed, {s.gpus_per_node} GPUs per node"
    return {
        "params": fmt.params(s.params),
        "weight": weight if weight is not None else fmt.nbytes(s.weight_bytes, "GB"),
        "gpus_exact": fmt.quantity(s.gpus_exact, "GPUs", digits),
        "gpus_weights": fmt.count(s.gpus_weights_only),
        "gpus_exact_usable": fmt.quantity(s.gpus_exact_usable, "GPUs", digits),
        "gpus": fmt.count(s.gpus_with_headroom),
        "nodes": fmt.count(s.nodes, "nodes"),
        "fits_node": fmt.claim(s.fits_one_node, basis),
        "spans_nodes": fmt.claim(not s.fits_one_node, basis),
        "fits_one_gpu": fmt.claim(s.fits_one_gpu, f"{s.gpus_with_headroom} GPU(s) needed"),
        "sizing": s,
    }


def _row(cat: Catalog, model_id: str, precision_id: str) -> Row:
    """The source's arithmetic on the scenario's node: nominal parameters, the label, the flat reserve."""
    s = size_on_node(cat, model_id, precision_id, reference(cat).node.id, SOURCE_RESERVE)
    return Row(model=cat.models[model_id].name, precision=cat.precisions[precision_id].name, **sizing_fields(s))


GIB = 2**30


class Deployed:
    """What a serving engine deploys for one model x precision on the scenario's node, as figures."""

    def __init__(self, r: Reference, model_id: str, precision_id: str, **kw: Any) -> None:
        """The engine's deployment of `model_id` in `precision_id` (on the scenario's node unless `kw` says otherwise)."""
        d = r.deployment(model_id, precision_id, **kw)
        m = d.memory
        basis = f"{d.layout.label}: {d.gpus} GPUs, {d.gpus_per_node} GPUs per node, {d.nodes} node(s)"
        self.model = r.eng.models[model_id].name
        self.precision = r.eng.precisions[precision_id].name
        self.params = fmt.params(d.params, 1)
        self.weight = fmt.nbytes(d.weight_bytes, "GB", 1)
        self.layout = d.layout.label
        self.why = d.why
        self.tp = fmt.count(d.layout.tp, "GPUs")
        self.pp = fmt.count(d.layout.pp, "stages")
        self.gpus = fmt.count(d.gpus)
        self.nodes = fmt.count(d.nodes, "nodes")
        self.weights_per_gpu = fmt.nbytes(m.weights, "GiB", 1)
        self.kv_per_gpu = fmt.nbytes(m.kv_cache, "GiB", 2)
        self.used_per_gpu = fmt.nbytes(m.used, "GiB", 1)
        self.pool = fmt.nbytes(m.pool, "GiB", 1)
        self.free_per_gpu = fmt.nbytes(m.free, "GiB", 1)
        self.fits_node = fmt.claim(d.fits_one_node, basis)
        self.spans_nodes = fmt.claim(not d.fits_one_node, basis)
        self.dep = d


def over_pcie(d: Deployment) -> Deployment:
    """The same deployment if its node's GPUs talked over PCIe alone (no NVLink): the engine's own PCIe link
    (`topology.group_link` on a node whose fabric is PCIe), a hypothetical for the quiz."""
    st = d.setting
    return Deployment(dataclasses.replace(st, node=dataclasses.replace(st.node, scale_up="pcie", fabric_shape="pcie")),
                      d.layout, d.why)


def quiz(r: Reference) -> dict[str, Any]:
    """The quiz's applied problems, each the engine's: one card against the deployment (`QUIZ_SPLIT`), one
    decode step's all-reduce on NVLink and on PCIe (`QUIZ_ALLREDUCE`), and the predicted time per output token
    on two TP degrees (`serving.predict` at one sequence)."""
    card = setting(r.eng, *QUIZ_SPLIT, r.scenario.id).memory(Layout(1))
    split = r.deployment(*QUIZ_SPLIT)

    big = r.deployment(*QUIZ_ALLREDUCE)
    arch = big.setting.model.arch
    msg = arch.hidden_size * ACTIVATION_BYTES  # one token's activations: a decode step of one sequence
    per_token = ALLREDUCES_PER_LAYER * arch.layers
    links: dict[str, tuple[Link, Collective, float]] = {}
    for key, d in (("nvl", big), ("pcie", over_pcie(big))):
        link = group_link(d, "tp")
        links[key] = (link, allreduce(msg, link, d.setting.time_model, d.setting.chip.vendor),
                      predict(d, concurrency=1).tpot_s)
    (l_nvl, a_nvl, t_nvl), (l_pcie, a_pcie, t_pcie) = links["nvl"], links["pcie"]

    # the quiz's two TP degrees of one node: the fewest GPUs vLLM accepts for QUIZ_SPLIT (the policy's), the node
    lo, hi = split, r.deployment(*QUIZ_SPLIT, layout=Layout(r.node.gpus))
    p_lo, p_hi = (predict(d, concurrency=1) for d in (lo, hi))
    speedup = p_lo.tpot_s / p_hi.tpot_s
    gpus_ratio = hi.gpus / lo.gpus

    return {
        "q1_card_used": fmt.nbytes(card.used, "GiB", 1),
        "q1_card_weights": fmt.nbytes(card.weights, "GiB", 1),
        "q1_pool": fmt.nbytes(card.pool, "GiB", 1),
        "q1_seqs": fmt.count(split.max_concurrency, "sequences"),
        "q1_misses": fmt.claim(not card.fits and card.weights > card.pool,
                               f"weights {card.weights / GIB:.1f} GiB > pool {card.pool / GIB:.1f} GiB"),
        "q2_msg": fmt.quantity(msg, "bytes", 0, show_unit=True),
        "q2_hidden": fmt.count(arch.hidden_size, "elements"),
        "q2_act_bytes": fmt.quantity(ACTIVATION_BYTES, "bytes/element", 0),
        "q2_nvl_bw": fmt.quantity(l_nvl.bytes_per_s / 1e9, "GB/s", 0, show_unit=True, basis="each GPU's, one way"),
        "q2_pcie_bw": fmt.quantity(l_pcie.bytes_per_s / 1e9, "GB/s", 1, show_unit=True, basis="each GPU's, one way"),
        "q2_nvl_hop": us(a_nvl.latency_s),
        "q2_pcie_hop": us(a_pcie.latency_s),
        "q2_nvl_ar": us(a_nvl.seconds),
        "q2_pcie_ar": us(a_pcie.seconds),
        "q2_nvl_alg": a_nvl.algorithm,
        "q2_pcie_alg": a_pcie.algorithm,
        "q2_per_token": fmt.count(per_token, "all-reduces"),
        "q2_nvl_tok": ms(a_nvl.seconds * per_token),
        "q2_pcie_tok": ms(a_pcie.seconds * per_token),
        "q2_nvl_tpot": ms(t_nvl),
        "q2_pcie_tpot": ms(t_pcie),
        "q2_latency_bound": fmt.claim(a_nvl.latency_s > a_nvl.seconds / 2 and a_pcie.latency_s > a_pcie.seconds / 2,
                                      f"fixed {a_nvl.latency_s * 1e6:.1f} of {a_nvl.seconds * 1e6:.1f} µs (NVLink), "
                                      f"{a_pcie.latency_s * 1e6:.1f} of {a_pcie.seconds * 1e6:.1f} µs (PCIe)"),
        "q3_lo": lo.layout.label,
        "q3_hi": hi.layout.label,
        "q3_lo_tpot": ms(p_lo.tpot_s),
        "q3_hi_tpot": ms(p_hi.tpot_s),
        "q3_lo_mem": ms(p_lo.decode.memory_s),
        "q3_hi_mem": ms(p_hi.decode.memory_s),
        "q3_lo_comm": ms(p_lo.decode.comm_s),
        "q3_hi_comm": ms(p_hi.decode.comm_s),
        "q3_overhead": ms(p_hi.decode.launch_s),
        "q3_speedup": fmt.ratio(speedup, 1, basis=f"time per output token, {lo.layout.label} ÷ {hi.layout.label}"),
        "q3_gpus_ratio": fmt.ratio(gpus_ratio, 0, basis=f"GPUs, {hi.layout.label} ÷ {lo.layout.label}"),
        "q3_sublinear": fmt.claim(speedup < gpus_ratio and p_hi.decode.comm_s > p_lo.decode.comm_s
                                  and p_hi.decode.launch_s >= p_lo.decode.launch_s,
                                  f"{speedup:.2f}× faster on {gpus_ratio:.0f}× the GPUs"),
    }


def cost_figure(d: Deployment) -> fmt.Cell:
    """Dollars per hour of the GPUs a deployment rents, at the site's indicative price, or "no price"."""
    c, p = d.cost_per_hour, d.setting.price
    if c is None or p is None:
        return "no price"
    return units.dated(fmt.Figure(c, "USD/hour", f"${c:,.2f}",
                                  f"{d.gpus_rented} GPUs × ${p.usd_per_gpu_hour:,.2f} per GPU-hour, indicative"), p)


def _short(model_id: str, precision_id: str, prefix: str = "d") -> str:
    """Namespace key of a model x precision: ("llama-3.1-405b", "bf16") -> "d405_bf16"."""
    return f"{prefix}{model_id.split('-')[-1][:-1]}_{precision_id}"


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


def source_table(cat: Catalog) -> str:
    """The source's closing table, row by row, beside what the engine decides for the same model and precision: the
    source's nominal bytes over a card less its flat reserve, rounded up; the engine's bytes from the architecture
    (embeddings and LM head kept at 16 bit in quantized checkpoints) and its layout."""
    r = reference(cat)
    ns = InterconnectPage.of(cat)
    rows: list[list[fmt.Cell]] = []
    for m in SOURCE_MODELS:
        for p in SOURCE_TABLE_PRECISIONS:
            src = _row(cat, m, p)
            e = Deployed(r, m, p)
            rows.append([f"{src.model} {src.precision}", src.weight, src.gpus_exact_usable, src.gpus,
                         "Yes" if src.sizing.fits_one_node else "No", e.weight, e.layout, e.gpus,
                         "Yes" if e.dep.fits_one_node else "No"])
    usable = ns.gpu_usable.text
    return fmt.table(
        "source",
        ["Model and precision", "Source: weights", f"Source: weights ÷ {usable}", "Source: GPUs",
         f"Source: one {r.node.gpus}-GPU node?", "Engine: weights", "Engine: layout", "Engine: GPUs",
         f"Engine: one {r.node.gpus}-GPU node?"],
        rows, align="lrrrlrlrl",
    )


def worked_example(cat: Catalog) -> str:
    """The source's 405B FP16 arithmetic, step by step, as Markdown with figure spans."""
    r = _row(cat, "llama-3.1-405b", SOURCE_PRECISION)
    s = r.sizing
    ns = InterconnectPage.of(cat)
    h = fmt.fig_html
    gpu, usable, per_node = ns.gpu_memory, ns.gpu_usable, ns.node_gpus
    lines = [
        f"1. **Weight bytes.** {h(fmt.params(s.params), 'worked.params')} parameters × "
        f"{h(fmt.quantity(s.bytes_per_param, 'bytes/param', 0), 'worked.bytes_per_param')} bytes each = "
        f"{h(r.weight, 'worked.weight')}.",
        f"2. **Weights alone.** {h(r.weight, 'worked.weight')} ÷ {h(gpu, 'worked.gpu_memory')} = "
        f"{h(r.gpus_exact, 'worked.gpus_exact')}, rounded up to **{h(r.gpus_weights, 'worked.gpus_weights')} GPUs**.",
        f"3. **With headroom.** Hold back {h(ns.reserve, 'worked.reserve')} of each card and "
        f"{h(usable, 'worked.gpu_usable')} is left for weights: {h(r.weight, 'worked.weight')} ÷ "
        f"{h(usable, 'worked.gpu_usable')} = {h(r.gpus_exact_usable, 'worked.gpus_exact_usable')}, rounded up to "
        f"**{h(r.gpus, 'worked.gpus')} GPUs**.",
        f"4. **One node or more?** {h(r.gpus, 'worked.gpus')} GPUs against {h(per_node, 'worked.node_gpus')} per node: "
        f"**{h(r.nodes, 'worked.nodes')} nodes**, so some traffic crosses the network between them.",
    ]
    return "\n".join(lines) + "\n"


def engine_example(cat: Catalog) -> str:
    """What a serving engine deploys for the same model, step by step, as Markdown with figure spans."""
    ns = InterconnectPage.of(cat)
    deps = ns.namespace()  # the deployments join the page's names in a loop (`extend`): not typed attributes
    b, f8 = deps["d405_bf16"], deps["d405_fp8"]
    h, e = fmt.fig_html, fmt.escape_markdown  # figures as spans; data text (names, messages) escaped as Markdown
    lines = [
        f"1. **Parameters from the architecture.** The layers of its `config.json` add up to "
        f"{h(b.params, 'engine.params')} parameters, not the name's round figure. In {e(b.precision)}, with the "
        f"embedding and the LM head unquantized as the checkpoint keeps them, one copy is "
        f"{h(b.weight, 'engine.weight')}; in {e(f8.precision)}, {h(f8.weight, 'engine.weight_fp8')}.",
        f"2. **What the card reports.** The {e(ns.gpu_name)} reports {h(ns.capacity, 'engine.capacity')} "
        f"to the engine, not the label's {h(ns.gpu_memory, 'engine.label')}.",
        f"3. **The engine's pool.** The engine may use {h(ns.utilization, 'engine.utilization')} of it, "
        f"{h(ns.pool, 'engine.pool')} per GPU, and that pool holds everything: the weights, the activation peak "
        f"({h(ns.activations, 'engine.activations')}), memory outside PyTorch "
        f"({h(ns.non_torch, 'engine.non_torch')}) and the KV cache of the scenario's "
        f"{h(ns.concurrency, 'engine.concurrency')} sequence of {h(ns.context, 'engine.context')}.",
        f"4. **Whole heads per GPU.** {h(ns.heads_405, 'engine.heads')} attention heads and "
        f"{h(ns.kv_heads_405, 'engine.kv_heads')} KV heads: the TP degrees inside a node are "
        f"{ns.valid_tp_405}.",
        f"5. **The layout.** Chosen by policy ({e(ns.policy_name)}): {e(b.precision)} on one node is refused "
        f"({e(ns.one_node_refusal)}), so it runs as **{b.layout}**, **{h(b.gpus, 'engine.gpus')} GPUs** over "
        f"**{h(b.nodes, 'engine.nodes')} nodes**; its busiest GPU holds {h(b.weights_per_gpu, 'engine.weights_per_gpu')} "
        f"of weights, {h(b.used_per_gpu, 'engine.used_per_gpu')} of its {h(b.pool, 'engine.pool')} pool. "
        f"In {e(f8.precision)} it is **{f8.layout}** on **{h(f8.gpus, 'engine.gpus_fp8')} GPUs** in "
        f"{h(f8.nodes, 'engine.nodes_fp8')} node.",
    ]
    return "\n".join(lines) + "\n"


class InterconnectPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("interconnect"),
             cliff_table, cliff_chart, worked_example, engine_example, source_table, sizing_table, gpus_chart,
             nvlink_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        node = cat.interconnect(r.node.id, Node)
        acc = cat.accelerators[node.accelerator]
        old = cat.accelerators[cat.interconnect(OLDER_NODE, Node).accelerator]
        reserve = cat.assumptions[SOURCE_RESERVE]
        usable = usable_bytes(acc.memory.bytes, reserve.value.fraction)
        rows = {_short(m, p, "m"): _row(cat, m, p) for m in SOURCE_MODELS for p in SOURCE_TABLE_PRECISIONS}
        deps = {_short(m, p): Deployed(r, m, p) for m in MODELS for p in PRECISIONS}
        d405_int8 = Deployed(r, "llama-3.1-405b", "int8")
        i405 = rows["m405_int8"]
        b16, f8, b70 = deps["d405_bf16"], deps["d405_fp8"], deps["d70_bf16"]
        fewest = Deployed(r, "llama-3.1-405b", "bf16", layout_policy="fewest-gpus")
        mem = b16.dep.memory
        mpol = r.eng.memory_policies[r.scenario.memory_policy]
        lpol = r.eng.layout_policies[r.scenario.layout_policy]
        arch405 = r.eng.models["llama-3.1-405b"].arch
        valid_tp = tp_degrees(arch405, r.node.gpus)
        st405 = setting(r.eng, "llama-3.1-405b", "bf16", r.scenario.id)
        one_node = feasible(st405, Layout(r.node.gpus))
        price = r.eng.prices.get(r.node.chip)
        src = rows["m405_fp16"].sizing

        tier_list = tiers(cat)
        ts = {t.tier: t for t in tier_list}
        hbm = acc.memory_bandwidth.bandwidth.one_way()
        hbm_old = old.memory_bandwidth.bandwidth.one_way()
        nvl, nvl_old = nvlink_of(cat, acc), nvlink_of(cat, old)
        gen4, gen5 = pcie_x16(cat, "pcie-gen4"), pcie_x16(cat, "pcie-gen5")
        net = ts["Network"].one_way
        fp16_bpp = cat.precisions["fp16"].width.bytes

        hbm_over_nvl = hbm.ratio(nvl)
        hbm_over_nvl_summed = hbm.bytes_per_s / nvl.both_summed().bytes_per_s  # the source's mixed basis
        nvl_over_gen5 = nvl.ratio(gen5)
        nvl_old_over_gen4 = nvl_old.ratio(gen4)
        # The source's comparison: NVLink both directions summed against PCIe one way.
        mixed_h100 = nvl.both_summed().bytes_per_s / gen5.bytes_per_s
        mixed_a100 = nvl_old.both_summed().bytes_per_s / gen4.bytes_per_s
        hbm_over_gen4 = hbm.ratio(gen4)
        hbm_old_over_gen4 = hbm_old.ratio(gen4)
        nvl_over_net = nvl.ratio(net)

        fp16_cap = max_params(acc.memory.bytes, fp16_bpp)
        fp16_cap_pool = max_params(mem.pool - mem.activations - mem.non_torch, fp16_bpp)

        def cost(e: Deployed) -> Figure:
            c = cost_figure(e.dep)
            if not isinstance(c, Figure):
                raise ValueError(f"no price the site uses for {r.node.chip}")
            return c

        self.extend(quiz(r))
        self.gpu_name = acc.name
        self.old_gpu_name = old.name
        self.node_name = node.name
        self.gpu_memory = fmt.nbytes(acc.memory.bytes, "GB")
        self.gpu_usable = fmt.nbytes(usable, "GB")
        self.reserve = fmt.percent(reserve.value.fraction, 1 if reserve.value.value % 1 else 0)
        self.reserve_low = fmt.percent(reserve.range[0] / 100)
        self.reserve_high = fmt.percent(reserve.range[1] / 100)
        self.node_gpus = fmt.count(node.gpus)
        # What an engine deploys (snippets.engine), and the inputs that make it differ from the source.
        self.extend(deps)
        self.d405_bf16_fewest = fewest
        self.d405_int8 = d405_int8
        self.kept_width = fmt.quantity(BYTES_16BIT * 8, "bit", 0, show_unit=True,
                                       basis="storage width of the tensors quantized checkpoints keep unquantized")
        self.int8_source_fits = fmt.claim(i405.sizing.fits_one_node and i405.sizing.gpus_with_headroom not in valid_tp,
                                          f"{i405.sizing.gpus_with_headroom} GPUs in one node of {r.node.gpus}, "
                                          f"TP degrees {valid_tp}")
        self.int8_engine_more = fmt.claim(d405_int8.dep.gpus > i405.sizing.gpus_with_headroom
                                          and d405_int8.dep.fits_one_node,
                                          f"engine {d405_int8.layout} = {d405_int8.dep.gpus} GPUs > the source's "
                                          f"{i405.sizing.gpus_with_headroom}, one node")
        self.int8_weight_above_nominal = fmt.claim(d405_int8.dep.weight_bytes > i405.sizing.weight_bytes,
                                                   f"{d405_int8.dep.weight_bytes / 1e9:.1f} GB > "
                                                   f"{i405.sizing.weight_bytes / 1e9:.0f} GB")
        self.policy_name = lpol.name
        self.capacity = fmt.nbytes(mem.capacity, "GiB", 1)
        self.label_gib = fmt.nbytes(mem.label, "GiB", 1)
        self.utilization = fmt.percent(mpol.utilization)
        self.pool = fmt.nbytes(mem.pool, "GiB", 1)
        self.activations = fmt.nbytes(mem.activations, "GiB", 1)
        self.non_torch = fmt.nbytes(mem.non_torch, "GiB", 1)
        self.concurrency = fmt.count(r.scenario.concurrency, "sequences")
        self.context = fmt.count(r.scenario.context_tokens, "tokens", show_unit=True)
        self.gpu_usable_gib = fmt.nbytes(usable, "GiB", 1)
        self.heads_405 = fmt.count(arch405.attention_heads, "heads")
        self.kv_heads_405 = fmt.count(arch405.kv_heads, "heads")
        self.valid_tp_405 = ", ".join(str(t) for t in valid_tp)
        self.one_node_refusal = "; ".join(one_node) or "it fits"
        self.d405_bf16_cost = cost(b16)
        self.d405_fp8_cost = cost(f8)
        if price is None:
            raise ValueError(f"no price the site uses for {r.node.chip}")
        self.price = units.usd_gpu_hour(price)
        self.fp16_bytes = fmt.quantity(fp16_bpp, "bytes/param", 0)
        self.fp8_bytes = fmt.quantity(cat.precisions["fp8"].width.bytes, "bytes/param", 0)
        self.bf16_same_as_fp16 = fmt.claim(cat.precisions["bf16"].width.bytes == fp16_bpp,
                                           f"BF16 {cat.precisions['bf16'].width.bytes:g} bytes, FP16 {fp16_bpp:g}")
        self.fp8_half_of_bf16 = fmt.claim(cat.precisions["fp8"].width.bytes * 2 == cat.precisions["bf16"].width.bytes,
                                          f"FP8 {cat.precisions['fp8'].width.bytes:g} byte, BF16 "
                                          f"{cat.precisions['bf16'].width.bytes:g}")
        self.extend(rows)
        self.fp16_cap = fmt.params(fp16_cap)
        self.fp16_cap_pool = fmt.params(fp16_cap_pool)
        self.hbm = fmt.bandwidth(hbm, "TB/s", 2)
        self.hbm_old = fmt.bandwidth(hbm_old, "TB/s", 2)
        self.nvlink = fmt.bandwidth(nvl)
        self.nvlink_summed = fmt.bandwidth(nvl.both_summed())
        self.nvlink_old = fmt.bandwidth(nvl_old)
        self.nvlink_old_summed = fmt.bandwidth(nvl_old.both_summed())
        self.gen4 = fmt.bandwidth(gen4, digits=1)
        self.gen5 = fmt.bandwidth(gen5, digits=1)
        self.gen4_summed = fmt.bandwidth(gen4.both_summed(), digits=1)
        self.gen5_summed = fmt.bandwidth(gen5.both_summed(), digits=1)
        self.network = fmt.bandwidth(net)
        self.hbm_over_nvlink = fmt.ratio(hbm_over_nvl, basis="one way each")
        self.hbm_over_nvlink_summed = fmt.ratio(hbm_over_nvl_summed, basis="HBM against NVLink both directions summed")
        self.nvlink_over_gen5 = fmt.ratio(nvl_over_gen5, basis="one way each")
        self.nvlink_old_over_gen4 = fmt.ratio(nvl_old_over_gen4, basis="one way each")
        self.mixed_h100 = fmt.ratio(mixed_h100, 0, basis="NVLink summed against PCIe one way: mixed bases")
        self.mixed_a100 = fmt.ratio(mixed_a100, 0, basis="NVLink summed against PCIe one way: mixed bases")
        self.hbm_over_gen4 = fmt.ratio(hbm_over_gen4, 0, basis="one way each")
        self.hbm_old_over_gen4 = fmt.ratio(hbm_old_over_gen4, 0, basis="one way each")
        self.nvlink_over_network = fmt.ratio(nvl_over_net, basis="one way each")
        # Claims the prose makes.
        self.nvlink_below_hbm_less_than_10x = fmt.claim(
                hbm_over_nvl < ORDER_OF_MAGNITUDE, f"HBM ÷ NVLink one way = {hbm_over_nvl:.1f}")
        self.nvlink_about_10x_pcie = fmt.claim(
                5 <= nvl_over_gen5 < 20 and 5 <= nvl_old_over_gen4 < 20,
                f"NVLink ÷ PCIe one way = {nvl_over_gen5:.1f} (H100, Gen5), {nvl_old_over_gen4:.1f} (A100, Gen4)")
        self.pcie_about_100x_below_hbm = fmt.claim(
                50 <= hbm_over_gen4 < 200, f"HBM ÷ PCIe Gen4 x16 one way = {hbm_over_gen4:.0f}")
        self.network_below_nvlink = fmt.claim(net.ratio(nvl) < 1, f"network {net.in_unit('GB/s'):.0f} GB/s < NVLink "
                                              f"{nvl.in_unit('GB/s'):.0f} GB/s one way")
        self.tiers_descend = fmt.claim(
                all(a.one_way.bytes_per_s > b.one_way.bytes_per_s for a, b in pairwise(tier_list)),
                " > ".join(f"{t.tier} {t.one_way.in_unit('GB/s'):,.0f} GB/s" for t in tier_list) + " (one way)")
        self.fp8_halves_gpus = fmt.claim(
                f8.dep.gpus * 2 <= b16.dep.gpus, f"{f8.dep.gpus} GPUs in FP8 against {b16.dep.gpus} in BF16")
        self.engine_exceeds_source = fmt.claim(
                b16.dep.gpus > src.gpus_with_headroom,
                f"engine {b16.dep.gpus} GPUs ({b16.layout}) > the source's {src.gpus_with_headroom}")
        self.pool_above_source_usable = fmt.claim(
                mem.pool > usable, f"pool {mem.pool / GIB:.1f} GiB > the source's {usable / GIB:.1f} GiB usable")
        self.capacity_above_label = fmt.claim(
                mem.capacity > mem.label, f"reported {mem.capacity / GIB:.1f} GiB > label {mem.label / GIB:.1f} GiB")
        self.one_node_refused = fmt.claim(bool(one_node), "; ".join(one_node) or f"TP{r.node.gpus} fits")
        self.source_count_not_tp = fmt.claim(
                src.gpus_with_headroom not in valid_tp and src.gpus_with_headroom > r.node.gpus,
                f"{src.gpus_with_headroom} GPUs: more than a node's {r.node.gpus}, and TP degrees are {valid_tp}")
        self.whole_nodes = fmt.claim(lpol.whole_nodes and b16.dep.gpus % r.node.gpus == 0,
                                     f"{b16.dep.gpus} GPUs = {b16.dep.nodes} × {r.node.gpus}")
        self.engine_accepts_fewer = fmt.claim(
                fewest.dep.gpus < b16.dep.gpus,
                f"fewest-gpus policy: {fewest.layout} = {fewest.dep.gpus} GPUs < {b16.layout} = {b16.dep.gpus}")
        self.small_fits_node = fmt.claim(b70.dep.fits_one_node and b70.dep.gpus > 1,
                                         f"{b70.layout} on {b70.dep.nodes} node")
        self.fp16_70b_exceeds_card = fmt.claim(
                rows["m70_fp16"].sizing.weight_bytes > acc.memory.bytes, "weights > one card's memory")


namespace = InterconnectPage.namespace_of
sources = InterconnectPage.sources_of
