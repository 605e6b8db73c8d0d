"""Page model of "Mixture of experts and expert parallelism" (docs/moe.md).

Every deployment is the engine's (`snippets.pages.scenario.reference`, `deploy`, `feasible`); every byte and
second is the engine's `step` and `predict` (`snippets.engine.step`, `snippets.engine.serving`), with the
engine's links (`topology.group_link`) and collectives (`collectives.alltoall`, `allreduce`). What this module
adds, as page helpers the engine does not offer (flagged for the engine's owners):

- `touched_share`: the expected share of a layer's routed experts a batch of `b` tokens routes to,
  1 − (1 − k/E)^b (uniform, independent routing), the same expression the engine's step uses inside;
- `weights_read`: the weight bytes of one decode step, the step's bytes less the KV cache it reads (the engine
  reports the two only summed);
- `a2a_bytes_per_token`: what one token's combine brings back in one layer (its k experts' outputs, in BF16);
  its dispatch sends about half as much (FP8, as DeepEP sends it: `step.FP8_DISPATCH_BYTES` per element);
- `smallest_tp_only`: the fewest GPUs a pure tensor-parallel layout (no PP) needs, by `feasible` over TP degrees;
- `why_more`: the reason a documented deployment rents more GPUs than the engine's own choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.data import Catalog
from snippets.engine import Deployment, Layout, deploy, feasible, setting
from snippets.engine.collectives import allreduce, alltoall
from snippets.engine.layout import experts_per_gpu
from snippets.engine.memory import kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.params import moe_layers, total_params
from snippets.engine.serving import Prediction, predict
from snippets.engine.specs import ArchLike, ChipSpec
from snippets.engine.step import FP8_DISPATCH_BYTES, step
from snippets.engine.topology import Link, group_link
from snippets.pages import running, units
from snippets.pages.base import Page
from snippets.pages.scenario import Reference, reference
from snippets.pages.units import ms, price_of, us, usd
from snippets.render import charts, fmt
from snippets.render.fmt import Figure

MODELS = ("mixtral-8x7b", "deepseek-v3", "deepseek-r1", "qwen3-235b-a22b", "gpt-oss-120b", "gpt-oss-20b",
          "llama-4-scout", "llama-4-maverick")
"""The mixture-of-experts models of data/models.yaml, in the table's order."""
MODEL = "deepseek-v3"
DOC_MODELS = ("deepseek-v3", "deepseek-r1")
"""The documented deployments the page tabulates: DeepSeek-V3's and DeepSeek-R1's, one architecture."""
PRECISION = "fp8"
ACCEL = "h200-sxm"
NVL72 = "gb200-nvl72"
GPUS = 8
CONTEXT = 2048
"""Tokens per sequence on this page: a prompt of half and an answer of half (`predict`'s request)."""
CONCURRENCY = 64
"""The worked decode batch, and the cost lens's first load."""
HEAVY = 1024
"""The cost lens's second load: more sequences than a TP8 replica's KV cache holds at CONTEXT."""
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Decode batches of the reads table and chart."""
PREFILL_TOKENS = 8192
"""Prompt tokens each GPU's attention prefills in one pass, for the all-to-all table."""
NETWORK_EP = 16
"""Expert parallelism over two HGX H200 nodes: the all-to-all crosses the network."""
QUIZ_MODEL = "qwen3-235b-a22b"
QUIZ_MIXTRAL = "mixtral-8x7b"
QUIZ_BATCH = 32
QUIZ_MIXTRAL_BATCH = 4

"""The data entries this page's figures are computed from (every DeepSeek-V3 and DeepSeek-R1 row of
data/deployments.yaml is also read by the deployments table)."""


# --------------------------------------------------------------------------- formatting

def gb(x: float, digits: int = 1) -> Figure:
    return fmt.nbytes(x, "GB", digits)


def kb(x: float) -> Figure:
    return fmt.quantity(x / 1e3, "kB", 1, show_unit=True, basis="kB = 10^3 bytes")


def mb(x: float) -> Figure:
    return fmt.quantity(x / 1e6, "MB", 2, show_unit=True, basis="MB = 10^6 bytes")


def gbps(x: float) -> Figure:
    return fmt.quantity(x / 1e9, "GB/s", 0, show_unit=True, basis="per direction, each GPU's")


def tok_s(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 0)


def seqs(n: int) -> Figure:
    return fmt.count(n, "sequences")


def gpu_label(chip: ChipSpec) -> str:
    """'NVIDIA H200 SXM' -> 'H200 SXM'; 'AMD Instinct MI300X' -> 'MI300X'."""
    return units.gpu_label(chip, units.VENDORS)


# --------------------------------------------------------------------------- page helpers (not in the engine)

def touched_share(arch: ArchLike, tokens: int) -> float:
    """Expected share of a layer's routed experts that `tokens` tokens route to: 1 − (1 − k/E)^b."""
    moe = arch.moe
    if moe is None:
        return 1.0
    return 1 - (1 - moe.active_experts / moe.experts) ** tokens


def kv_read(d: Deployment, batch: int, context: float) -> float:
    """KV-cache bytes one decode step of `batch` sequences at `context` reads on the busiest GPU (one stage)."""
    s = d.setting
    arch = s.model.arch
    return kv_bytes_per_token_per_gpu(arch, arch.layers, d.layout.tp, s.kv_precision.bytes_per_param,
                                      context_tokens=context) * context * batch / d.layout.dp


def weights_read(d: Deployment, batch: int) -> float:
    """Weight bytes a decode step of `batch` tokens reads per GPU: the step's weight reads (its GEMMs' weight
    streams, without activations or KV cache)."""
    return step(d, "decode", batch, 1).weights_read


def a2a_bytes_per_token(arch: ArchLike) -> float:
    """What one token gets back in one combine: its k routed experts' outputs, in BF16 (its dispatch sends the
    same vectors in FP8, about half the bytes)."""
    moe = arch.moe
    if moe is None:
        raise ValueError("not a mixture-of-experts model")
    return moe.active_experts * arch.hidden_size * ACTIVATION_BYTES


def ds_deployment(r: Reference, layout: Layout, concurrency: int = CONCURRENCY, node: str | None = None) -> Deployment:
    if node is None:
        return r.deployment(MODEL, PRECISION, accelerator=ACCEL, layout=layout, concurrency=concurrency,
                            context_tokens=CONTEXT)
    return r.deployment(MODEL, PRECISION, node=node, layout=layout, concurrency=concurrency, context_tokens=CONTEXT)


def layouts() -> dict[str, Layout]:
    """The three layouts of DeepSeek-V3 on one 8-GPU node the page compares."""
    return {"tp": Layout(GPUS), "ep": Layout(GPUS, ep=GPUS), "dp": Layout(1, ep=GPUS, dp=GPUS)}


# --------------------------------------------------------------------------- total and active parameters

def params_rows(cat: Catalog) -> list[dict[str, Any]]:
    r = reference(cat)
    out = []
    for mid in MODELS:
        m = r.eng.models[mid]
        a = m.arch
        moe = a.moe
        assert moe is not None  # noqa: S101 - every model of MODELS routes to experts
        total, active = total_params(a), total_params(a, active=True)
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
    arch = d.setting.model.arch
    held = d.memory.weights
    rows: list[list[fmt.Cell]] = []
    for b in BATCHES:
        w = weights_read(d, b)
        rows.append([fmt.count(b, "tokens"), fmt.percent(touched_share(arch, b), 1), gb(w),
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
    arch = r.eng.models[MODEL].arch
    per_tok = a2a_bytes_per_token(arch)
    n_moe = moe_layers(arch)
    out = []
    nvl = r.eng.nodes[NVL72].gpus
    h200_node = r.eng.node_of(ACCEL)
    assert h200_node is not None  # noqa: S101 - the data has an HGX H200 node
    for node, ep in ((h200_node.id, GPUS), (NVL72, nvl), (h200_node.id, NETWORK_EP)):
        lay = Layout(1, ep=ep, dp=ep)
        d = ds_deployment(r, lay, concurrency=CONCURRENCY * ep, node=node)
        link = group_link(d, "ep")
        tm = d.setting.time_model
        remote = (ep - 1) / ep
        dispatch = per_tok * FP8_DISPATCH_BYTES / ACTIVATION_BYTES * remote  # FP8 out, as DeepEP sends it
        one = alltoall(CONCURRENCY * dispatch, link, tm).seconds
        pre_one = alltoall(PREFILL_TOKENS * dispatch, link, tm).seconds
        dec = step(d, "decode", CONCURRENCY * ep, CONTEXT)
        pre = step(d, "prefill", PREFILL_TOKENS * ep, 0)
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
                     context_tokens=ctx)
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
                     tok_s(lo.output_tokens_per_s), usd(cost_of(lo), price_of(d)),
                     seqs(hi.in_flight), tok_s(hi.output_tokens_per_s), usd(cost_of(hi), price_of(d))])
    return fmt.table("cost", ["Layout", "Weights per GPU", "Sequences held",
                              f"Tokens/s at {CONCURRENCY}", f"$/Mtok at {CONCURRENCY}",
                              f"In flight of {HEAVY}", f"Tokens/s at {HEAVY}", f"$/Mtok at {HEAVY}"], rows)


# --------------------------------------------------------------------------- worked example

def worked_example(cat: Catalog) -> str:
    """One decode step of the worked deployment, step by step, as Markdown with figure spans."""
    p = MoePage.of(cat)
    h = fmt.fig_html
    w = p.w
    lines = [
        f"1. **Weights held.** Each GPU holds {h(w.experts_gpu, 'wx.experts_gpu')} of the "
        f"{h(w.experts, 'wx.experts')} routed experts of every MoE layer, and a slice of everything else: "
        f"{h(w.held, 'wx.held')} per GPU, of which the routed experts are {h(w.expert_held, 'wx.expert_held')}.",
        f"2. **Experts touched.** Each of the {h(w.batch, 'wx.batch')} tokens picks "
        f"{h(w.k, 'wx.k')} of the {h(w.experts, 'wx.experts')}; the expected share of experts at least one token "
        f"picks is `1 − (1 − k ÷ E)^b` with k = {h(w.k, 'wx.k')}, E = {h(w.experts, 'wx.experts')} and "
        f"b = {h(w.batch, 'wx.batch')}: {h(w.touched, 'wx.touched')}.",
        f"3. **Weights read.** Everything but the routed experts, plus that share of them: "
        f"{h(w.other_held, 'wx.other_held')} + {h(w.touched, 'wx.touched')} × {h(w.expert_held, 'wx.expert_held')} = "
        f"{h(w.read, 'wx.read')} per GPU, against {h(w.read1, 'wx.read1')} for one token.",
        f"4. **KV cache read.** The latent cache of {h(w.batch, 'wx.batch')} sequences at "
        f"{h(w.context, 'wx.context')} tokens, whole on every GPU: {h(w.kv, 'wx.kv')}.",
        f"5. **Memory time.** {h(w.read, 'wx.read')} and {h(w.kv, 'wx.kv')}, with the activations, at the shares of "
        f"HBM bandwidth the engine's kernels reach: {h(w.memory, 'wx.memory')}.",
        f"6. **Combine.** Attention ran tensor-parallel, so every GPU already holds all "
        f"{h(w.batch, 'wx.batch')} tokens: each computes its own experts' share for them and the shares are "
        f"summed by the same all-reduce tensor parallelism uses, {h(w.msg, 'wx.msg')} per GPU in "
        f"{h(w.a2a, 'wx.a2a')}, once in each of {h(w.moe_layers, 'wx.moe_layers')} MoE layers. With the "
        f"all-reduces after attention, communication is {h(w.comm, 'wx.comm')}.",
        f"7. **The step.** Each operation's larger part, the communication and the launches: "
        f"**{h(w.step, 'wx.step')}**, so {h(w.tps, 'wx.tps')} tokens per second for the batch.",
    ]
    return "\n".join(lines) + "\n"


class Worked:

    def __init__(self, r: Reference) -> None:
        d = ds_deployment(r, layouts()["ep"])
        arch = d.setting.model.arch
        moe = arch.moe
        assert moe is not None  # noqa: S101
        sw = stage_weights(arch, d.setting.precision, d.layout)[0]
        p = step(d, "decode", CONCURRENCY, CONTEXT)
        per_tok = a2a_bytes_per_token(arch)
        t = touched_share(arch, CONCURRENCY)
        self.layout = d.layout.label
        self.experts = fmt.count(moe.experts, "experts")
        self.experts_gpu = fmt.count(experts_per_gpu(moe.experts, d.layout.ep), "experts")
        self.k = fmt.count(moe.active_experts, "experts")
        self.batch = fmt.count(CONCURRENCY, "tokens")
        self.context = fmt.count(CONTEXT, "tokens")
        self.held = gb(sw.total)
        self.expert_held = gb(sw.expert_bytes)
        self.other_held = gb(sw.total - sw.expert_bytes)
        self.touched = fmt.percent(t, 1)
        self.read = gb(weights_read(d, CONCURRENCY))
        self.read1 = gb(weights_read(d, 1))
        self.kv = gb(kv_read(d, CONCURRENCY, CONTEXT), 2)
        self.memory = ms(p.memory_s, 2)
        self.tok_bytes = kb(per_tok)
        msg = CONCURRENCY * arch.hidden_size * ACTIVATION_BYTES
        self.msg = mb(msg)
        self.a2a = us(allreduce(msg, group_link(d, "tp"), d.setting.time_model, d.setting.chip.vendor).seconds)
        self.moe_layers = fmt.count(moe_layers(arch), "layers")
        self.comm = ms(p.comm_s, 2)
        self.step = ms(p.total_s, 1)
        self.tps = tok_s(CONCURRENCY / p.total_s)


# --------------------------------------------------------------------------- namespace


class MoePage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("moe"), params_table, reads_table, reads_chart, worked_example, a2a_table, doc_table, cost_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        prows = {p["id"]: p for p in params_rows(cat)}
        ds, mx = prows[MODEL], prows["mixtral-8x7b"]
        scout, mav = prows["llama-4-scout"], prows["llama-4-maverick"]
        sparsest = min(prows.values(), key=lambda p: p["active"] / p["total"])
        densest = max(prows.values(), key=lambda p: p["active"] / p["total"])
        arch = r.eng.models[MODEL].arch
        moe = arch.moe
        assert moe is not None  # noqa: S101
        lays = layouts()
        d_tp, d_ep, d_dp = (ds_deployment(r, lays[k]) for k in ("tp", "ep", "dp"))
        chip = d_ep.setting.chip
        w = Worked(r)
        held = d_ep.memory.weights
        read1, read_big = weights_read(d_ep, 1), weights_read(d_ep, BATCHES[-1])
        total_bytes = d_ep.weight_bytes
        half = next(b for b in range(1, 1 << 16) if touched_share(arch, b) >= 0.5)

        a2a = a2a_rows(r)
        nv8, nv72, net = a2a
        per_tok = a2a_bytes_per_token(arch)

        docs = doc_rows(cat)
        doc_h200 = next(x for x in docs if x.documented.setting.chip.id == ACCEL and x.documented.gpus == GPUS
                        and x.documented.setting.precision.id == PRECISION)
        larger = [x for x in docs if x.documented.gpus > x.engine.gpus]
        batches = [x for x in larger if x.reason.startswith("sized for serving")]
        tp_only = [x for x in larger if x.reason.startswith("tensor parallelism alone")]

        cost = cost_rows(r)
        c_tp, c_ep, c_dp = cost["tp"], cost["ep"], cost["dp"]
        cheapest_hi = min(cost.values(), key=lambda c: c["hi"].usd_per_mtok_output)

        qwen = prows[QUIZ_MODEL]
        qarch = r.eng.models[QUIZ_MODEL].arch
        qmoe = qarch.moe
        march = r.eng.models[QUIZ_MIXTRAL].arch
        mmoe = march.moe
        assert qmoe is not None and mmoe is not None  # noqa: S101
        q_tok = a2a_bytes_per_token(qarch)

        kv_seq = d_tp.memory.kv_per_sequence
        # parameters
        self.ds_name = r.eng.models[MODEL].name
        self.r1_name = r.eng.models["deepseek-r1"].name
        self.ds_total = fmt.params(ds["total"])
        self.ds_active = fmt.params(ds["active"], 1)
        self.ds_share = fmt.percent(ds["active"] / ds["total"], 1)
        self.ds_experts = fmt.count(ds["experts"], "experts")
        self.ds_k = fmt.count(ds["k"], "experts")
        self.ds_shared = fmt.count(ds["shared"], "experts")
        self.mx_name = mx["name"]
        self.mx_total = fmt.params(mx["total"], 1)
        self.mx_active = fmt.params(mx["active"], 1)
        self.mx_share = fmt.percent(mx["active"] / mx["total"], 0)
        self.scout_name = scout["name"]
        self.mav_name = mav["name"]
        self.scout_total = fmt.params(scout["total"])
        self.mav_total = fmt.params(mav["total"])
        self.scout_active = fmt.params(scout["active"], 1)
        self.mav_active = fmt.params(mav["active"], 1)
        self.mav_over_scout = fmt.ratio(mav["total"] / scout["total"])
        self.same_active = fmt.claim(abs(scout["active"] - mav["active"]) / mav["active"] < 0.01
                                     and mav["total"] > 3 * scout["total"],
                                     f"{scout['active']:,} vs {mav['active']:,} active; {mav['total']:,} vs "
                                     f"{scout['total']:,} total")
        self.sparsest_name = sparsest["name"]
        self.sparsest_share = fmt.percent(sparsest["active"] / sparsest["total"], 1)
        self.densest_name = densest["name"]
        self.densest_share = fmt.percent(densest["active"] / densest["total"], 0)
        # memory and reads
        self.gpus = fmt.count(GPUS)
        self.gpu_name = gpu_label(chip)
        self.precision = d_ep.setting.precision.name
        self.ep_layout = d_ep.layout.label
        self.tp_layout = d_tp.layout.label
        self.dp_layout = d_dp.layout.label
        self.total_bytes = gb(total_bytes, 0)
        self.held = gb(held)
        self.read1 = gb(read1)
        self.read_big = gb(read_big)
        self.read1_share = fmt.percent(read1 / held, 0)
        self.read_big_share = fmt.percent(read_big / held, 0)
        self.big_batch = fmt.count(BATCHES[-1], "tokens")
        self.half_batch = fmt.count(half, "tokens")
        self.reads_follow_active = fmt.claim(read1 < 0.2 * held, f"{read1 / 1e9:.1f} GB read of {held / 1e9:.1f} GB held")
        self.reads_approach_total = fmt.claim(read_big > 0.9 * held,
                                              f"{read_big / 1e9:.1f} GB read of {held / 1e9:.1f} GB held")
        self.w = w
        self.context = fmt.count(CONTEXT, "tokens")
        self.concurrency = fmt.count(CONCURRENCY, "sequences")
        # all-to-all
        self.tok_bytes = kb(per_tok)
        self.hidden = fmt.count(arch.hidden_size, "channels")
        self.act_bytes = fmt.count(ACTIVATION_BYTES, "bytes")
        self.prefill_tokens = fmt.count(PREFILL_TOKENS, "tokens")
        self.nv8_one = us(nv8.decode_one)
        self.nv72_one = us(nv72.decode_one)
        self.net_one = us(net.decode_one)
        self.nv8_pre = us(nv8.prefill_one, 0)
        self.nv72_pre = us(nv72.prefill_one, 0)
        self.net_pre = us(net.prefill_one, 0)
        self.nvl72_gpus = fmt.count(r.eng.nodes[NVL72].gpus)
        self.net_ep = fmt.count(NETWORK_EP)
        self.net_bw = gbps(net.link.bytes_per_s)
        self.nv8_bw = gbps(nv8.link.bytes_per_s)
        self.nv72_bw = gbps(nv72.link.bytes_per_s)
        self.net_pre_share = fmt.percent(net.prefill_pass_comm / net.prefill_pass_total, 0)
        self.nv8_pre_share = fmt.percent(nv8.prefill_pass_comm / nv8.prefill_pass_total, 0)
        self.net_slower = fmt.ratio(net.prefill_one / nv8.prefill_one)
        self.network_hurts_prefill = fmt.claim(net.prefill_one > 3 * nv8.prefill_one,
                                               f"{net.prefill_one * 1e6:.0f} µs vs {nv8.prefill_one * 1e6:.0f} µs")
        self.nvl72_fastest = fmt.claim(nv72.prefill_one < nv8.prefill_one < net.prefill_one,
                                       f"{nv72.prefill_one * 1e6:.0f} < {nv8.prefill_one * 1e6:.0f} < "
                                       f"{net.prefill_one * 1e6:.0f} µs")
        self.net_dec_share = fmt.percent(net.decode_pass_comm / net.decode_pass_total, 0)
        self.nv8_dec_share = fmt.percent(nv8.decode_pass_comm / nv8.decode_pass_total, 0)
        # DP attention
        self.kv_seq = gb(kv_seq, 3)
        self.tp_seqs = seqs(d_tp.max_concurrency)
        self.dp_seqs = seqs(d_dp.max_concurrency)
        self.dp_gain = fmt.ratio(d_dp.max_concurrency / d_tp.max_concurrency)
        self.tp_weights = gb(d_tp.memory.weights)
        self.dp_weights = gb(d_dp.memory.weights)
        self.kv_room_tp = gb(d_tp.memory.kv_room)
        self.kv_room_dp = gb(d_dp.memory.kv_room)
        self.dp_holds_more = fmt.claim(d_dp.max_concurrency > 3 * d_tp.max_concurrency,
                                       f"{d_dp.max_concurrency} vs {d_tp.max_concurrency} sequences")
        self.dp_more_weights = fmt.claim(d_dp.memory.weights > d_tp.memory.weights,
                                         f"{d_dp.memory.weights / 1e9:.1f} GB vs {d_tp.memory.weights / 1e9:.1f} GB")
        self.latent_whole = fmt.claim(d_tp.memory.kv_per_sequence == d_dp.memory.kv_per_sequence,
                                      "the same KV bytes per sequence on a GPU of TP8 and of TP1")
        # documented deployments
        self.doc_count = fmt.count(len(docs), "deployments")
        self.doc_larger = fmt.count(len(larger), "deployments")
        self.doc_batches = fmt.count(len(batches), "deployments")
        self.doc_tp_only = fmt.count(len(tp_only), "deployments")
        self.all_feasible = fmt.claim(all(not feasible(x.documented.setting, x.documented.layout) for x in docs),
                                      f"{len(docs)} documented layouts, each accepted")
        self.every_larger_explained = fmt.claim(len(batches) + len(tp_only) == len(larger),
                                                f"{len(batches)} + {len(tp_only)} = {len(larger)}")
        self.h200_label = doc_h200.label
        self.h200_doc_layout = doc_h200.documented.layout.label
        self.h200_doc_used = gb(doc_h200.documented.memory.used)
        self.h200_pool = gb(doc_h200.documented.memory.pool)
        self.h200_engine = doc_h200.engine.layout.label
        self.h200_matches = fmt.claim(doc_h200.engine.gpus == doc_h200.documented.gpus,
                                      f"engine {doc_h200.engine.gpus} GPUs = documented {doc_h200.documented.gpus}")
        self.ref_context = fmt.count(r.scenario.context_tokens, "tokens")
        # cost lens
        self.heavy = fmt.count(HEAVY, "sequences")
        self.c_tp_lo = usd(cost_of(c_tp["lo"]), price_of(c_tp["d"]))
        self.c_ep_lo = usd(cost_of(c_ep["lo"]), price_of(c_ep["d"]))
        self.c_dp_lo = usd(cost_of(c_dp["lo"]), price_of(c_dp["d"]))
        self.c_tp_hi = usd(cost_of(c_tp["hi"]), price_of(c_tp["d"]))
        self.c_dp_hi = usd(cost_of(c_dp["hi"]), price_of(c_dp["d"]))
        self.c_ep_hi = usd(cost_of(c_ep["hi"]), price_of(c_ep["d"]))
        self.tp_in_flight = seqs(c_tp["hi"].in_flight)
        self.dp_cheaper_hi = fmt.ratio(c_tp["hi"].usd_per_mtok_output / c_dp["hi"].usd_per_mtok_output)
        lo_costs = [c["lo"].usd_per_mtok_output for c in cost.values()]
        self.lo_spread = fmt.percent(max(lo_costs) / min(lo_costs) - 1, 0)
        self.lo_close = fmt.claim(max(lo_costs) < 1.15 * min(lo_costs),
                                  f"{min(lo_costs):.2f} to {max(lo_costs):.2f} $/Mtok at {CONCURRENCY}")
        self.dp_cheapest_hi = fmt.claim(cheapest_hi is c_dp, f"cheapest at {HEAVY}: {cheapest_hi['d'].layout.label}")
        self.ep_comm = ms(c_ep["lo"].decode.comm_s, 2)
        self.tp_comm = ms(c_tp["lo"].decode.comm_s, 2)
        self.dp_comm = ms(c_dp["lo"].decode.comm_s, 2)
        self.ep_same_comm = fmt.claim(abs(c_ep["lo"].decode.comm_s - c_tp["lo"].decode.comm_s)
                                      < 1e-3 * c_tp["lo"].decode.comm_s
                                      and not c_ep["lo"].decode.of("alltoall"),
                                      f"{c_ep['lo'].decode.comm_s * 1e3:.3f} ms = {c_tp['lo'].decode.comm_s * 1e3:.3f} ms, "
                                      "no all-to-all")
        self.dp_alltoall = fmt.claim(bool(c_dp["lo"].decode.of("alltoall")) and not c_dp["lo"].decode.of("allreduce"),
                                     f"{len(c_dp['lo'].decode.of('alltoall'))} all-to-all ops per step")
        self.tp_queues = fmt.claim(c_tp["hi"].in_flight < HEAVY, f"{c_tp['hi'].in_flight} of {HEAVY} in flight")
        # quiz
        self.one = fmt.count(1, "")
        self.q_name = qwen["name"]
        self.q_experts = fmt.count(qmoe.experts, "experts")
        self.q_k = fmt.count(qmoe.active_experts, "experts")
        self.q_batch = fmt.count(QUIZ_BATCH, "tokens")
        self.q_touched = fmt.percent(touched_share(qarch, QUIZ_BATCH), 1)
        self.q_hidden = fmt.count(qarch.hidden_size, "channels")
        self.q_tok_bytes = fmt.count(q_tok, "bytes", show_unit=True)
        self.q_layers = fmt.count(moe_layers(qarch), "layers")
        self.q_dispatch_bytes = fmt.count(q_tok * FP8_DISPATCH_BYTES / ACTIVATION_BYTES, "bytes", show_unit=True)
        self.q_step_bytes = mb(q_tok * (1 + FP8_DISPATCH_BYTES / ACTIVATION_BYTES) * moe_layers(qarch))
        self.m_name = prows[QUIZ_MIXTRAL]["name"]
        self.m_experts = fmt.count(mmoe.experts, "experts")
        self.m_k = fmt.count(mmoe.active_experts, "experts")
        self.m_batch = fmt.count(QUIZ_MIXTRAL_BATCH, "tokens")
        self.m_touched = fmt.percent(touched_share(march, QUIZ_MIXTRAL_BATCH), 0)


namespace = MoePage.namespace_of
sources = MoePage.sources_of
