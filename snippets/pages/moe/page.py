"""The MoE page model: the names its `{{ ... }}` values and claims use, and its worked example."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine.collectives import allreduce
from snippets.engine.layout import experts_per_gpu
from snippets.engine.memory import stage_weights
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.params import experts_touched, moe_layers, ranks_reached
from snippets.engine.step import FP8_DISPATCH_BYTES, step
from snippets.engine.topology import group_link
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.moe.common import (
    ACCEL,
    BATCHES,
    CONCURRENCY,
    CONTEXT,
    GPUS,
    HEAVY,
    MODEL,
    NETWORK_EP,
    NVL72,
    PRECISION,
    PREFILL_TOKENS,
    QUIZ_BATCH,
    QUIZ_MIXTRAL,
    QUIZ_MIXTRAL_BATCH,
    QUIZ_MODEL,
    a2a_bytes_per_token,
    ds_deployment,
    gb,
    gbps,
    gpu_label,
    kb,
    kv_read,
    layouts,
    mb,
    seqs,
    tok_s,
    weights_read,
)
from snippets.pages.moe.tables import (
    a2a_rows,
    a2a_table,
    cost_of,
    cost_rows,
    cost_table,
    doc_rows,
    doc_table,
    params_rows,
    params_table,
    reads_chart,
    reads_table,
)
from snippets.pages.scenario import Reference, reference
from snippets.pages.units import ms, price_of, us, usd
from snippets.render import fmt

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
        f"3. **Weights read.** Everything but the routed experts and the embedding table (the step looks up only its "
        f"tokens' rows), plus that share of the experts: "
        f"{h(w.other_read, 'wx.other_read')} + {h(w.touched, 'wx.touched')} × {h(w.expert_held, 'wx.expert_held')} = "
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
        arch = d.setting.model.architecture
        moe = arch.moe
        assert moe is not None  # noqa: S101
        sw = stage_weights(arch, d.setting.precision, d.layout, d.setting.kept_16bit)[0]
        p = step(d, "decode", CONCURRENCY, CONTEXT)
        per_tok = a2a_bytes_per_token(arch)
        t = experts_touched(arch, CONCURRENCY)
        self.layout = d.layout.label
        self.experts = fmt.count(moe.experts, "experts")
        self.experts_gpu = fmt.count(experts_per_gpu(moe.experts, d.layout.ep), "experts")
        self.k = fmt.count(moe.active_experts, "experts")
        self.batch = fmt.count(CONCURRENCY, "tokens")
        self.context = fmt.count(CONTEXT, "tokens")
        self.held = gb(sw.total)
        self.expert_held = gb(sw.expert_bytes)
        self.touched = fmt.percent(t, 1)
        read = weights_read(d, CONCURRENCY)
        self.read = gb(read)
        self.other_read = gb(read - t * sw.expert_bytes)  # the step's reads of all but the routed experts
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
        arch = r.eng.models[MODEL].architecture
        moe = arch.moe
        assert moe is not None  # noqa: S101
        lays = layouts()
        d_tp, d_ep, d_dp = (ds_deployment(r, lays[k]) for k in ("tp", "ep", "dp"))
        chip = d_ep.setting.chip
        w = Worked(r)
        held = d_ep.memory.weights
        read1, read_big = weights_read(d_ep, 1), weights_read(d_ep, BATCHES[-1])
        total_bytes = d_ep.weight_bytes
        half = next(b for b in range(1, 1 << 16) if experts_touched(arch, b) >= 0.5)

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
        qarch = r.eng.models[QUIZ_MODEL].architecture
        qmoe = qarch.moe
        march = r.eng.models[QUIZ_MIXTRAL].architecture
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
        without = [p["name"] for p in prows.values() if cat.models[p["id"]].stated_active_excludes_embedding]
        if not without:
            raise ValueError("the MoE page says which models count their active parameters without the embedding")
        self.without_embedding = " and ".join(without)
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
        self.ranks_reached = fmt.quantity(ranks_reached(arch, GPUS), "GPUs", 2,
                                          basis=f"{GPUS} × (1 − (1 − 1/{GPUS})^k), experts chosen uniformly")
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
        self.network_prefill_close = fmt.claim(nv8.prefill_one < net.prefill_one < 2 * nv8.prefill_one,
                                               f"{net.prefill_one * 1e6:.0f} µs vs {nv8.prefill_one * 1e6:.0f} µs")
        self.net_dec_slower = fmt.ratio(net.decode_one / nv8.decode_one)
        self.network_hurts_decode = fmt.claim(net.decode_one > 2 * nv8.decode_one,
                                              f"{net.decode_one * 1e6:.1f} µs vs {nv8.decode_one * 1e6:.1f} µs")
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
        self.q_touched = fmt.percent(experts_touched(qarch, QUIZ_BATCH), 1)
        self.q_hidden = fmt.count(qarch.hidden_size, "channels")
        self.q_tok_bytes = fmt.count(q_tok, "bytes", show_unit=True)
        self.q_layers = fmt.count(moe_layers(qarch), "layers")
        self.q_dispatch_bytes = fmt.count(q_tok * FP8_DISPATCH_BYTES / ACTIVATION_BYTES, "bytes", show_unit=True)
        self.q_step_bytes = mb(q_tok * (1 + FP8_DISPATCH_BYTES / ACTIVATION_BYTES) * moe_layers(qarch))
        self.m_name = prows[QUIZ_MIXTRAL]["name"]
        self.m_experts = fmt.count(mmoe.experts, "experts")
        self.m_k = fmt.count(mmoe.active_experts, "experts")
        self.m_batch = fmt.count(QUIZ_MIXTRAL_BATCH, "tokens")
        self.m_touched = fmt.percent(experts_touched(march, QUIZ_MIXTRAL_BATCH), 0)


namespace = MoePage.namespace_of
sources = MoePage.sources_of
