"""The MoE page's tables and chart: parameters, reads against the batch, all-to-all, documented deployments, cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.data import Catalog
from snippets.engine import Deployment, Layout, deploy, feasible, setting
from snippets.engine.params import experts_touched, moe_layers, total_params
from snippets.engine.serving import Prediction, predict
from snippets.engine.step import step
from snippets.engine.topology import Link, group_link
from snippets.pages.moe.common import (
    ACCEL,
    BATCHES,
    CONCURRENCY,
    CONTEXT,
    DOC_MODELS,
    GPUS,
    HEAVY,
    MODEL,
    MODELS,
    NETWORK_EP,
    NVL72,
    PREFILL_TOKENS,
    ds_deployment,
    gb,
    gbps,
    gpu_label,
    layouts,
    seqs,
    weights_read,
)
from snippets.pages.scenario import Reference, reference
from snippets.pages.units import active_as_counted, mtok_banded, price_of, tps_banded, us
from snippets.render import charts, fmt

# --------------------------------------------------------------------------- total and active parameters

def params_rows(cat: Catalog) -> list[dict[str, Any]]:
    r = reference(cat)
    routed = {mid for mid, m in r.eng.models.items() if m.architecture.moe is not None}
    if routed != set(MODELS):
        raise ValueError(f"the MoE page's parameter table lists every model with experts: MODELS "
                         f"(snippets/pages/moe/common.py) leaves out {sorted(routed - set(MODELS))} and lists "
                         f"{sorted(set(MODELS) - routed)} without")
    out = []
    for mid in MODELS:
        m = r.eng.models[mid]
        a = m.architecture
        moe = a.moe
        assert moe is not None  # noqa: S101 - every model of MODELS routes to experts
        total, active = total_params(a), active_as_counted(a, cat.models[mid].stated_active_excludes_embedding)
        out.append({"id": mid, "name": m.name, "total": total, "active": active, "experts": moe.experts,
                    "k": moe.active_experts, "shared": moe.shared_experts, "moe_layers": moe_layers(a),
                    "layers": a.layers})
    return out


def params_table(cat: Catalog) -> str:
    rows: list[list[fmt.Cell]] = []
    for p in params_rows(cat):
        rows.append([p["name"], fmt.params(p["total"], 1), fmt.params(p["active"], 1),
                     fmt.percent(p["active"] / p["total"], 1), fmt.count(p["experts"], "experts"),
                     fmt.count(p["k"], "experts"), fmt.count(p["shared"], "experts"),
                     f"{p['moe_layers']} of {p['layers']}"])
    return fmt.table("params", ["Model", "Total", "Active per token", "Active share", "Routed experts",
                                "Routed per token", "Shared", "MoE layers"], rows)


# --------------------------------------------------------------------------- reads against the batch

def reads_table(cat: Catalog) -> str:
    r = reference(cat)
    d = ds_deployment(r, layouts()["ep"])
    arch = d.setting.model.architecture
    held = d.memory.weights
    rows: list[list[fmt.Cell]] = []
    for b in BATCHES:
        w = weights_read(d, b)
        rows.append([fmt.count(b, "tokens"), fmt.percent(experts_touched(arch, b), 1), gb(w),
                     fmt.percent(w / held, 0), gb(w / b, 2)])
    return fmt.table("reads", ["Batch (tokens)", "Experts touched", "Weights read per GPU", "Of weights held",
                               "Per token"], rows)


def reads_chart(cat: Catalog) -> str:
    r = reference(cat)
    d = ds_deployment(r, layouts()["ep"])
    held = d.memory.weights / 1e9
    pts = [(float(b), weights_read(d, b) / 1e9) for b in BATCHES]
    svg = charts.lines(
        "moe-reads",
        [charts.Series("weights read per step", pts),
         charts.Series("weights held", [(float(b), held) for b in BATCHES])],
        "decode batch (tokens)", "GB per GPU",
        f"Weight bytes a decode step reads, {d.setting.model.name} on {d.layout.label}",
        "Weight bytes one GPU reads in one decode step against the batch, rising from the active experts at one "
        "token towards every expert the GPU holds, with the flat line of the weights it holds.",
    )
    return charts.figure(svg, f"Weight bytes per GPU per decode step, {d.setting.model.name} in "
                              f"{d.setting.precision.name} on {d.gpus} {gpu_label(d.setting.chip)} "
                              f"({d.layout.label}); the engine's forward pass with no KV cache.")


# --------------------------------------------------------------------------- all-to-all

@dataclass(frozen=True)
class A2aRow:
    label: str
    d: Deployment
    link: Link
    decode_one: float
    decode_step: float
    decode_pass_comm: float
    decode_pass_total: float
    prefill_one: float
    prefill_pass_comm: float
    prefill_pass_total: float


def a2a_rows(r: Reference) -> list[A2aRow]:
    arch = r.eng.models[MODEL].architecture
    n_moe = moe_layers(arch)
    out = []
    nvl = r.eng.nodes[NVL72].gpus
    h200_node = r.eng.node_of(ACCEL)
    assert h200_node is not None  # noqa: S101 - the data has an HGX H200 node
    for node, ep in ((h200_node.id, GPUS), (NVL72, nvl), (h200_node.id, NETWORK_EP)):
        lay = Layout(1, ep=ep, dp=ep)
        d = ds_deployment(r, lay, concurrency=CONCURRENCY * ep, node=node)
        link = group_link(d, "ep")
        dec = step(d, "decode", CONCURRENCY * ep, CONTEXT)
        pre = step(d, "prefill", PREFILL_TOKENS * ep, 0)
        # one dispatch, as the engine prices it in each step: a copy per expert in decode (DeepEP's low-latency
        # kernels), one per rank reached in a prefill (its normal kernels)
        one = next(o for o in dec.ops if o.name == "dispatch").seconds
        pre_one = next(o for o in pre.ops if o.name == "dispatch").seconds
        label = f"{d.setting.node.name}: {ep} GPUs over {link.name}"
        out.append(A2aRow(label, d, link, one, 2 * n_moe * one, dec.comm_s, dec.total_s, pre_one, pre.comm_s,
                          pre.total_s))
    return out


def a2a_table(cat: Catalog) -> str:
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for x in a2a_rows(r):
        rows.append([x.label, gbps(x.link.bytes_per_s), us(x.link.hop_s), us(x.decode_one),
                     fmt.percent(x.decode_pass_comm / x.decode_pass_total, 0), us(x.prefill_one, 0),
                     fmt.percent(x.prefill_pass_comm / x.prefill_pass_total, 0)])
    return fmt.table("a2a", ["Expert-parallel group", "Link", "Hop", "Decode all-to-all", "Of the decode step",
                             "Prefill all-to-all", "Of the prefill"], rows)


# --------------------------------------------------------------------------- documented deployments

def smallest_tp_only(st: Any, limit: int = 64) -> int | None:
    """The fewest GPUs of a pure tensor-parallel layout (no PP, no EP) that `feasible` accepts, up to `limit`."""
    for t in range(1, limit + 1):
        if not feasible(st, Layout(t)):
            return t
    return None


@dataclass(frozen=True)
class DocRow:
    label: str
    documented: Deployment
    engine: Deployment
    tp_only: int | None
    reason: str


def why_more(doc: Deployment, eng: Deployment, tp_only: int | None) -> str:
    """Why the documented layout rents more GPUs than the engine's; the build stops if none of the reasons holds."""
    if doc.gpus <= eng.gpus:
        return "no more GPUs than the engine's"
    if doc.max_concurrency > eng.max_concurrency:
        return f"sized for serving batches: holds {doc.max_concurrency / eng.max_concurrency:,.1f}× the sequences"
    if doc.layout.pp == 1 and doc.layout.ep == 1 and tp_only == doc.gpus:
        return f"tensor parallelism alone: TP{doc.gpus} is the smallest TP-only layout that fits, the engine uses PP"
    raise ValueError(f"no reason found why {doc.layout.label} needs more GPUs than the engine's {eng.layout.label}")


def doc_rows(cat: Catalog) -> list[DocRow]:
    r = reference(cat)
    out = []
    for key, found in cat.deployments.items():
        if found.model not in DOC_MODELS:
            continue
        dep = cat.deployments[key]  # by id: the page shows this documented deployment, so its sources list names it
        ctx = dep.context_tokens or r.scenario.context_tokens
        st = setting(r.eng, dep.model, dep.precision, r.scenario.id, accelerator=dep.accelerator, concurrency=1,
                     context_tokens=ctx, keeps_16bit=dep.keeps_16bit)
        lay = Layout(dep.layout.tp, dep.layout.pp, dep.layout.ep, dep.layout.dp)
        problems = feasible(st, lay)
        if problems:
            raise ValueError(f"documented {lay.label} is refused: {problems}")
        doc, eng = deploy(st, lay), deploy(st)
        tp_only = smallest_tp_only(st)
        label = f"{st.precision.name} · {dep.gpus} × {gpu_label(st.chip)}"
        out.append(DocRow(label, doc, eng, tp_only, why_more(doc, eng, tp_only)))
    return out


def doc_table(cat: Catalog) -> str:
    rows: list[list[fmt.Cell]] = []
    for x in doc_rows(cat):
        m = x.documented.memory
        rows.append([x.label, x.documented.layout.label, f"yes, {m.used / 1e9:,.0f} of {m.pool / 1e9:,.0f} GB",
                     x.engine.layout.label, seqs(x.documented.max_concurrency), seqs(x.engine.max_concurrency),
                     x.reason])
    ctx = f"{reference(cat).scenario.context_tokens:,}"
    return fmt.table("docs", ["Documented (SGLang)", "Layout", "Fits, per GPU", "Engine's choice",
                              f"Sequences of {ctx}", "Engine's", "Why the documented count is larger"], rows,
                     align="llllrrl")


# --------------------------------------------------------------------------- cost lens

def cost_rows(r: Reference) -> dict[str, dict[str, Any]]:
    out = {}
    for key, lay in layouts().items():
        d = ds_deployment(r, lay, concurrency=1)
        lo, hi = predict(d, CONCURRENCY, CONTEXT // 2, CONTEXT // 2), predict(d, HEAVY, CONTEXT // 2, CONTEXT // 2)
        out[key] = {"d": d, "lo": lo, "hi": hi}
    return out


def cost_of(p: Prediction) -> float:
    """A prediction's dollars per million output tokens (the page prices only priced accelerators)."""
    x = p.usd_per_mtok_output
    if x is None:
        raise ValueError("the cost lens needs a price for its accelerator in data/prices.yaml")
    return x


def cost_table(cat: Catalog) -> str:
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for c in cost_rows(r).values():
        d, lo, hi = c["d"], c["lo"], c["hi"]
        rows.append([d.layout.label, gb(d.memory.weights), seqs(d.max_concurrency),
                     tps_banded(lo), mtok_banded(lo, price_of(d)),
                     seqs(hi.in_flight), tps_banded(hi), mtok_banded(hi, price_of(d))])
    return fmt.table("cost", ["Layout", "Weights per GPU", "Sequences held",
                              f"Output at {CONCURRENCY}", f"$/Mtok at {CONCURRENCY}",
                              f"In flight of {HEAVY}", f"Output at {HEAVY}", f"$/Mtok at {HEAVY}"], rows)
