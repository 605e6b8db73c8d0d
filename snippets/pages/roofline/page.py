"""The roofline page model: the names its `{{ ... }}` values and claims use, and its worked example."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.serving import predict, usd_per_mtok_input
from snippets.engine.step import Step, step
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import group_link
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.roofline.common import (
    CURVE_TP,
    MODEL,
    OLDER,
    PRECISION,
    SEARCH_LIMIT,
    SECOND,
    achieved_ridge,
    critical_batch,
    decode,
    decode_context,
    deployments,
    fractions,
    gbytes,
    gflop,
    intensity,
    intensity_limit,
    kv_per_gpu,
    node_of,
    ridge,
    tflops,
    weights_per_gpu,
)
from snippets.pages.roofline.tables import (
    curve_chart,
    intensity_table,
    ridge_table,
    roofline_chart,
)
from snippets.pages.scenario import SERVING
from snippets.pages.units import gpu_label, ms, price_of, tbps, tps, us, usd
from snippets.render import fmt
from snippets.teaching.rounded import FLOP_PER_PARAM_PER_TOKEN

# --------------------------------------------------------------------------- worked example

class PassShown:
    """A step's figures as the prose uses them (`{{ dec.memory }}`)."""

    def __init__(self, p: Step) -> None:
        self.flops = gflop(p.flops)
        self.bytes = gbytes(p.bytes_read)
        self.intensity = intensity(p.flops / p.bytes_read)
        self.compute = ms(p.compute_s, 2)
        self.memory = ms(p.memory_s, 2)
        self.comm = ms(p.comm_s, 2)
        self.comm_latency = ms(p.comm_latency_s, 2)
        self.overhead = ms(p.launch_s, 1)
        self.total = ms(p.total_s, 1)


def worked_example(cat: Catalog) -> str:
    """One decode step and one prefill of the worked deployment, step by step, as Markdown with figure spans."""
    p = RooflinePage.of(cat)
    h = fmt.fig_html
    dec, pre = p.dec, p.pre
    lines = [
        "**One decode step** (one sequence):",
        "",
        f"1. **Arithmetic.** Each GPU holds half of every weight matrix, and each weight does "
        f"{h(p.flop_per_param, 'wx.flop_per_param')} FLOPs for the token, plus attention over the "
        f"{h(p.ctx_decode, 'wx.ctx_decode')} cached tokens: {h(dec.flops, 'wx.dec.flops')} per GPU.",
        f"2. **Bytes.** Each GPU holds {h(p.w_gpu, 'wx.w_gpu')} of weights and reads {h(p.w_read, 'wx.w_read')} "
        f"of them (of the embedding table, only the token's row), its {h(p.kv_gpu, 'wx.kv_gpu')} of KV cache and "
        f"{h(p.act_read, 'wx.act_read')} of activations: {h(dec.bytes, 'wx.dec.bytes')}.",
        f"3. **Intensity.** {h(dec.flops, 'wx.dec.flops')} ÷ {h(dec.bytes, 'wx.dec.bytes')} = "
        f"{h(dec.intensity, 'wx.dec.intensity')} FLOP per byte, against a ridge of "
        f"{h(p.ridge_achieved, 'wx.ridge_achieved')}: far left of it.",
        f"4. **Compute time.** Each operation's FLOPs at the share of {h(p.fp8_dense, 'wx.fp8_dense')} its "
        f"kernel reaches (up to {h(p.compute_fraction, 'wx.compute_fraction')} for the matrix products, less for "
        f"a small one), summed: "
        f"{h(dec.compute, 'wx.dec.compute')}.",
        f"5. **Memory time.** Each operation's bytes at the share of {h(p.hbm, 'wx.hbm')} its kind reaches (a "
        f"one-token GEMM's weight stream, {h(p.hbm_fraction, 'wx.hbm_fraction')}; the KV cache at the "
        f"{h(p.kv_fraction, 'wx.kv_fraction')} decode attention reaches over {h(p.ctx_decode, 'wx.ctx_decode')}, "
        f"{p.kv_basis}; activations at a streaming kernel's {h(p.stream_fraction, 'wx.stream_fraction')}): "
        f"{h(dec.memory, 'wx.dec.memory')}, the larger in every operation, so the step is memory-bound.",
        f"6. **Communication.** {h(p.allreduces, 'wx.allreduces')} all-reduces of one token's activations "
        f"({p.algorithm_dec}, {h(p.ar_dec, 'wx.ar_dec')} each, nearly all of it the collective's fixed "
        f"cost), and the embedding's and the logits' own: {h(dec.comm, 'wx.dec.comm')}, of which "
        f"{h(dec.comm_latency, 'wx.dec.comm_latency')} is fixed latency.",
        f"7. **Launches.** {h(p.kernels_dec, 'wx.kernels_dec')} kernels at {h(p.kernel_cost, 'wx.kernel_cost')} "
        f"each inside the CUDA graph"
        + (f", decode attention's own fixed {h(p.kv_fixed, 'wx.kv_fixed')} a layer (its kernels' as measured)"
           if p.kv_measured else "")
        + f", and the host's {h(p.step_overhead, 'wx.step_overhead')} per step: "
        f"{h(dec.overhead, 'wx.dec.overhead')}.",
        f"8. **Time per output token.** {h(dec.memory, 'wx.dec.memory')} + {h(dec.comm, 'wx.dec.comm')} + "
        f"{h(dec.overhead, 'wx.dec.overhead')} = **{h(dec.total, 'wx.dec.total')}**.",
        "",
        f"**One prefill** (a {h(p.n_in, 'wx.n_in')}-token prompt):",
        "",
        f"1. **Arithmetic.** Every prompt token passes every weight, and attends to the tokens before it: "
        f"{h(pre.flops, 'wx.pre.flops')} per GPU.",
        f"2. **Bytes.** The same weights, read once for the whole prompt, the activations and the KV cache "
        f"written: {h(pre.bytes, 'wx.pre.bytes')}.",
        f"3. **Intensity.** {h(pre.intensity, 'wx.pre.intensity')} FLOP per byte: far right of the ridge.",
        f"4. **Compute time.** The matrix products at up to {h(p.compute_fraction, 'wx.compute_fraction')} of "
        f"{h(p.fp8_dense, 'wx.fp8_dense')} (a product of fewer FLOPs reaches less), attention at "
        f"{h(p.attention_fraction, 'wx.attention_fraction')} "
        f"of the BF16 peak (its measured share for this prompt's length and each GPU's heads): "
        f"{h(pre.compute, 'wx.pre.compute')}, the larger in the heavy operations, so "
        f"the prefill is compute-bound.",
        f"5. **Memory time.** {h(pre.bytes, 'wx.pre.bytes')} at the same shares: {h(pre.memory, 'wx.pre.memory')}.",
        f"6. **Communication.** The same {h(p.allreduces, 'wx.allreduces')} all-reduces, now of the whole "
        f"prompt's activations ({p.algorithm_pre}): {h(pre.comm, 'wx.pre.comm')}.",
        f"7. **Time to first token.** Each operation's larger part, the communication and the launches: "
        f"**{h(pre.total, 'wx.pre.total')}**.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose

class RooflinePage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("roofline"), ridge_table, roofline_chart, intensity_table, worked_example, curve_chart)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        r = self.reference()
        sc = r.scenario
        d, d2 = deployments(r)
        chip, chip2, old = d.setting.chip, d2.setting.chip, r.eng.chips[OLDER]
        tm = d.setting.time_model
        arch = d.setting.model.architecture
        ctx = decode_context(r)
        fmt_c = d.compute_format

        dec = decode(d, 1, ctx)
        pre = step(d, "prefill", sc.input_tokens, 0)
        x1, x2 = predict(d, 1), predict(d2, 1)
        most, most2 = d.max_concurrency, d2.max_concurrency
        xm, xm2 = predict(d, most), predict(d2, most2)
        ra = achieved_ridge(d)
        r_bf16, r_fp8 = ridge(chip, "bf16"), ridge(chip, fmt_c)
        r2_fp8 = ridge(chip2, d2.compute_format)
        bpp = d.setting.precision.bytes_per_param
        envelope = r_fp8 * bpp / FLOP_PER_PARAM_PER_TOKEN
        envelope_achieved = ra * bpp / FLOP_PER_PARAM_PER_TOKEN
        crit0 = critical_batch(d, 0)
        crit_ctx = critical_batch(d, ctx)
        lim_ctx = intensity_limit(d, ctx)
        if crit0 is None:
            raise ValueError("the page expects a weights-only decode step to turn compute-bound at some batch")
        at_max = decode(d, most, ctx)
        eff = tm.chip(chip.id)
        cf, wf = fractions(d)
        ar_dec = next(o for o in dec.ops if o.name == "attention all-reduce")

        # the quiz: 32 sequences of the scenario's whole context on 2 GPUs, then on the layout the policy picks
        full = sc.input_tokens + sc.output_tokens
        q_n = self.reference(SERVING).scenario.concurrency  # the serving scenario's concurrency
        q_p = decode(d, q_n, full)
        q_d = r.deployment(MODEL, PRECISION, concurrency=q_n)
        q_pp = decode(q_d, q_n, full)
        d_old = r.deployment(MODEL, PRECISION, node=node_of(r, OLDER), layout=Layout(CURVE_TP))
        x_old = predict(d_old, 1)
        d2_policy = r.deployment(MODEL, PRECISION, node=node_of(r, SECOND))

        cost1, costm = x1.usd_per_mtok_output, xm.usd_per_mtok_output
        cost1_2, costm_2 = x2.usd_per_mtok_output, xm2.usd_per_mtok_output
        if cost1 is None or costm is None or cost1_2 is None or costm_2 is None:
            raise ValueError("the cost lens needs prices for both accelerators in data/prices.yaml")

        gain_tput = xm.output_tokens_per_s_per_gpu / x1.output_tokens_per_s_per_gpu
        gain_tpot = xm.tpot_s / x1.tpot_s

        self.model = d.setting.model.name
        self.precision = d.setting.precision.name
        self.gpu = gpu_label(chip)
        self.gpu2 = gpu_label(chip2)
        self.gpu_old = gpu_label(old)
        self.layout = d.layout.label
        self.gpus = fmt.count(d.gpus)
        self.layout2_policy = d2_policy.layout.label
        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.ctx_full = fmt.count(full, "tokens")
        self.ctx_decode = fmt.count(ctx, "tokens")
        self.flop_per_param = fmt.count(FLOP_PER_PARAM_PER_TOKEN, "FLOP")
        self.bytes_per_param = fmt.quantity(bpp, "bytes/param", 0)
        # the roofline's two roofs
        self.bf16_dense = tflops(chip.dense_flops["bf16"], "dense BF16, half the stated sparse figure"
                                 if "bf16" in chip.dense_derived else "dense BF16")
        self.fp8_dense = tflops(chip.dense_flops[fmt_c], f"dense {fmt_c.upper()}, half the stated sparse figure"
                                if fmt_c in chip.dense_derived else f"dense {fmt_c.upper()}")
        self.hbm = tbps(chip.hbm_bytes_per_s)
        self.hbm2 = tbps(chip2.hbm_bytes_per_s)
        self.ridge_bf16 = intensity(r_bf16, "dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_fp8 = intensity(r_fp8, "dense FP8 FLOP/s ÷ HBM bandwidth")
        self.ridge2_fp8 = intensity(r2_fp8, "dense FP8 FLOP/s ÷ HBM bandwidth")
        self.ridge_old_bf16 = intensity(ridge(old, "bf16"), "dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_achieved = intensity(ra, "achieved FLOP/s ÷ achieved HBM bandwidth")
        self.compute_fraction = fmt.percent(cf)
        self.hbm_fraction = fmt.percent(wf, 1)
        self.stream_fraction = fmt.percent(eff.hbm, 1)
        att_dec = next(o for o in dec.ops if o.name == "attention (decode)")
        own = att_dec if eff.kv_stream else None  # the op charged its kernel's own fixed cost, not a count of kernels
        self.kv_fraction = fmt.percent(eff.kv_share(ctx), 1)  # decode attention's share at the context (or `hbm`)
        self.kv_measured = own is not None
        self.kv_basis = "measured per chip" if own else "a streaming kernel's, for want of a measurement on this chip"
        self.kv_fixed = us(att_dec.launch_s, 1)
        att = next(o for o in pre.ops if o.name == "attention (prefill)")  # at the share the engine used
        self.attention_fraction = fmt.percent(att.flops / att.compute_s / chip.dense_flops["bf16"])
        self.kernel_cost = us(tm.kernel_s, 1)
        self.step_overhead = ms(tm.step_overhead_s, 2)
        self.kernels_dec = fmt.count(sum(round(o.launch_s / tm.kernel_s) * o.count for o in dec.ops
                                         if o.launch_s and o.kind != "launch" and o is not own), "kernels")
        self.ar_dec = us(ar_dec.seconds, 1)
        self.hop = us(group_link(d, "tp").hop_s, 1)
        self.layers = fmt.count(arch.layers, "layers")
        self.allreduces = fmt.count(ALLREDUCES_PER_LAYER * arch.layers, "all-reduces")
        self.algorithm_dec = dec.algorithm
        self.algorithm_pre = pre.algorithm
        self.w_gpu = gbytes(weights_per_gpu(d))
        self.kv_gpu = gbytes(kv_per_gpu(d, ctx))
        w_read = sum(o.weights * o.count for o in dec.ops)
        self.w_read = gbytes(w_read)
        self.act_read = fmt.nbytes(dec.bytes_read - w_read - kv_per_gpu(d, ctx), "MB")
        if not 0 < dec.bytes_read - w_read - kv_per_gpu(d, ctx) < w_read:
            raise ValueError("the step's bytes should be its weights read, its KV cache and a few activations")
        self.dec = PassShown(dec)
        self.pre = PassShown(pre)
        self.dec_intensity = intensity(dec.flops / dec.bytes_read)
        self.pre_intensity = intensity(pre.flops / pre.bytes_read)
        # the critical batch
        self.envelope = fmt.count(round(envelope), "sequences")
        self.envelope_achieved = fmt.count(round(envelope_achieved), "sequences")
        self.crit0 = fmt.count(crit0, "sequences")
        self.crit_gap = fmt.percent(crit0 / envelope_achieved - 1, 0)
        self.lim_ctx = intensity(lim_ctx, "extra FLOPs ÷ extra bytes of one more sequence")
        self.most = fmt.count(most, "sequences")
        self.most2 = fmt.count(most2, "sequences")
        self.most_intensity = intensity(at_max.flops / at_max.bytes_read)
        # TTFT and TPOT
        self.ttft = ms(x1.ttft_s, 0)
        self.ttft_2 = ms(x2.ttft_s, 0)
        self.tpot1 = ms(x1.tpot_s, 1)
        self.tpotm = ms(xm.tpot_s, 1)
        self.tput1 = tps(x1.output_tokens_per_s_per_gpu)
        self.tputm = tps(xm.output_tokens_per_s_per_gpu)
        self.tpot1_2 = ms(x2.tpot_s, 1)
        self.tpotm_2 = ms(xm2.tpot_s, 1)
        self.tput1_2 = tps(x2.output_tokens_per_s_per_gpu)
        self.tputm_2 = tps(xm2.output_tokens_per_s_per_gpu)
        self.gain_tput = fmt.ratio(gain_tput, 0, basis="tokens/s per GPU at the most sequences ÷ at one")
        self.gain_tpot = fmt.ratio(gain_tpot, 1, basis="time per output token at the most sequences ÷ at one")
        self.reads_per_s = fmt.quantity(x1.output_tokens_per_s, "tokens/s", 0)
        # the cost lens
        self.cost1 = usd(cost1, price_of(d))
        self.costm = usd(costm, price_of(d))
        self.cost1_2 = usd(cost1_2, price_of(d2))
        self.costm_2 = usd(costm_2, price_of(d2))
        self.cost_drop = fmt.ratio(cost1 / costm, 0, basis="$ per million output tokens at one sequence ÷ at the most")
        self.cost_in = usd(usd_per_mtok_input(d, x1) or 0.0, price_of(d))
        self.rent = usd(d.cost_per_replica_hour or 0.0, price_of(d))
        self.rent2 = usd(d2.cost_per_replica_hour or 0.0, price_of(d2))
        # the quiz
        self.q_conc = fmt.count(q_n, "sequences")
        self.q_intensity = intensity(q_p.flops / q_p.bytes_read)
        self.q_layout = q_d.layout.label
        self.q_intensity_policy = intensity(q_pp.flops / q_pp.bytes_read)
        self.q_ridge_policy = intensity(achieved_ridge(q_d), "achieved FLOP/s ÷ achieved HBM bandwidth")
        self.ttft_old = ms(x_old.ttft_s, 0)
        self.ttft_ratio_old = fmt.ratio(x_old.ttft_s / x1.ttft_s, 1, basis="A100 TTFT ÷ H100 TTFT, both TP2")
        self.old_format = d_old.compute_format.upper()
        self.old_bf16_dense = tflops(old.dense_flops["bf16"], "dense BF16")
        # claims
        self.decode_memory_bound = fmt.claim(dec.bound == "memory" and dec.flops / dec.bytes_read < ra / 10,
                                             f"{dec.flops / dec.bytes_read:.1f} FLOP/byte against a ridge of {ra:.0f}; "
                                             f"memory {dec.memory_s * 1e3:.2f} ms > compute {dec.compute_s * 1e3:.2f} ms",
                structural="an order of magnitude: decoding does a few FLOP per byte, every ridge in data/ is hundreds")
        self.prefill_compute_bound = fmt.claim(pre.bound == "compute" and pre.flops / pre.bytes_read > 3 * ra,
                                               f"{pre.flops / pre.bytes_read:,.0f} FLOP/byte against {ra:.0f}; compute "
                                               f"{pre.compute_s * 1e3:.0f} ms > memory {pre.memory_s * 1e3:.0f} ms")
        self.fp8_ridge_twice = fmt.claim(abs(r_fp8 / r_bf16 - 2) < 0.01, f"{r_fp8:.0f} ÷ {r_bf16:.0f}")
        self.h200_lower_ridge = fmt.claim(
                r2_fp8 < r_fp8 and chip2.dense_flops[fmt_c] == chip.dense_flops[fmt_c],
                f"same {chip.dense_flops[fmt_c] / 1e12:.0f} TFLOP/s; {r2_fp8:.0f} < {r_fp8:.0f} FLOP/byte")
        self.crit_beyond_kv = fmt.claim(crit0 > most, f"{crit0} sequences > the {most} the KV cache holds",
                structural="the batch where compute catches up against the KV cache's, both from the engine")
        self.crit_near_envelope = fmt.claim(envelope_achieved <= crit0 <= 2 * envelope_achieved,
                                            f"engine {crit0} against ridge × bytes ÷ 2 = {envelope_achieved:.0f}")
        self.never_at_ctx = fmt.claim(crit_ctx is None and lim_ctx < ra,
                                      f"limit {lim_ctx:.0f} FLOP/byte < ridge {ra:.0f}; no batch up to {SEARCH_LIMIT:,}")
        self.max_still_memory = fmt.claim(at_max.bound == "memory", f"{most} sequences: {at_max.bound}-bound")
        self.h200_faster_everywhere = fmt.claim(
                x2.tpot_s < x1.tpot_s and xm2.output_tokens_per_s_per_gpu > xm.output_tokens_per_s_per_gpu,
                f"{x2.tpot_s * 1e3:.1f} < {x1.tpot_s * 1e3:.1f} ms at one sequence; "
                f"{xm2.output_tokens_per_s_per_gpu:.0f} > {xm.output_tokens_per_s_per_gpu:.0f} tokens/s per GPU at the most")
        self.h200_more_seqs = fmt.claim(most2 > 2 * most, f"{most2} > 2 × {most}")
        self.h200_policy_one_gpu = fmt.claim(d2_policy.layout.gpus < d2.gpus,
                                             f"policy: {d2_policy.layout.label}, curve: {d2.layout.label}")
        hbm_gain = chip2.hbm_bytes_per_s / chip.hbm_bytes_per_s - 1
        ttft_gain = x1.ttft_s / x2.ttft_s - 1
        self.hbm_gain = fmt.percent(hbm_gain)
        self.ttft_gain = fmt.percent(ttft_gain)
        self.same_ttft = fmt.claim(0 <= ttft_gain < hbm_gain / 2,
                                   f"{x2.ttft_s * 1e3:.0f} against {x1.ttft_s * 1e3:.0f} ms: {ttft_gain:.0%} faster, "
                                   f"HBM {hbm_gain:.0%}")
        self.batching_cheaper = fmt.claim(cost1 > 5 * costm, f"${cost1:.2f} > 5 × ${costm:.2f}")
        self.tpot_rises_less = fmt.claim(gain_tpot < gain_tput / 4, f"{gain_tpot:.1f}× slower, {gain_tput:.0f}× more")
        self.q_memory_bound = fmt.claim(q_p.bound == "memory" and q_p.flops / q_p.bytes_read < ra,
                                        f"{q_p.flops / q_p.bytes_read:.0f} FLOP/byte < {ra:.0f}",
                structural="the bound the engine computes, and its intensity under the ridge")
        self.q_does_not_fit = fmt.claim(most < q_n and q_d.gpus > d.gpus,
                                        f"{q_n} > {most} sequences; policy: {q_d.layout.label}")
        self.q_policy_memory_bound = fmt.claim(q_pp.bound == "memory", f"{q_d.layout.label}: {q_pp.bound}-bound")
        self.old_weight_only = fmt.claim(d_old.weight_only and not d.weight_only,
                                         f"{old.name} computes {d_old.compute_format}")
        self.old_slower_prefill = fmt.claim(x_old.ttft_s > 2 * x1.ttft_s,
                                            f"{x_old.ttft_s * 1e3:.0f} > 2 × {x1.ttft_s * 1e3:.0f} ms")


namespace = RooflinePage.namespace_of
sources = RooflinePage.sources_of
