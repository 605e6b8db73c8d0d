"""The HBM page model: the names its `{{ ... }}` values and claims use, and its worked example."""

from __future__ import annotations

from snippets.data import Catalog, required
from snippets.data.units import BYTE_UNITS
from snippets.engine import Layout
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.hbm.common import (
    FIT_ROWS,
    ILLUSTRATIVE_BATCH,
    LEANER,
    LONG_CONTEXT,
    OLDER,
    PIPELINED,
    TP_ONLY,
    WORKED,
    batch_ceiling,
    kv_per_token,
    older_node,
    per_gpu_hour,
    weights_read,
)
from snippets.pages.hbm.prose import (
    Shown,
    one_card_quiz,
    serving_quiz,
    tight_layout,
)
from snippets.pages.hbm.tables import (
    batch_rows,
    batch_table,
    ceiling_chart,
    ceiling_table,
    fits_table,
    gpu_table,
)
from snippets.pages.interconnect import pcie_x16
from snippets.pages.scenario import reference
from snippets.pages.units import ms, tbps, tps
from snippets.render import fmt
from snippets.teaching.rounded import FLOP_PER_PARAM_PER_TOKEN, KV_TENSORS, flop_per_byte


def worked_example(cat: Catalog) -> str:
    """Llama 3.1 70B in BF16 on the scenario's GPUs, step by step, as Markdown with figure spans."""
    ns = HbmPage.of(cat)
    h, e = fmt.fig_html, fmt.escape_markdown  # figures as spans; data text (names) escaped as Markdown
    w = ns.w
    lines = [
        f"1. **Weight bytes.** {h(w.params, 'worked.params')} parameters (counted from the architecture) × "
        f"{h(w.bytes_per_param, 'worked.bytes_per_param')} bytes = {h(w.weight, 'worked.weight')}.",
        f"2. **The pool.** vLLM may use {h(ns.utilization, 'worked.utilization')} of the "
        f"{h(ns.gpu_reported, 'worked.gpu_reported')} an {e(ns.gpu_name)} reports: "
        f"{h(ns.pool, 'worked.pool')} per GPU for the weights, the activation peak of its profiling run "
        f"({h(ns.activations, 'worked.activations')}), the memory outside PyTorch "
        f"({h(ns.non_torch, 'worked.non_torch')} at {e(w.layout)}) and the KV cache.",
        f"3. **Where it lives.** The weights alone exceed one pool. {ns._tight_words} The engine's policy therefore "
        f"picks **{w.layout}**, the smallest tensor-parallel degree vLLM accepts: {h(w.gpus, 'worked.gpus')} GPUs holding "
        f"{h(w.weights_gpu_gib, 'worked.weights_gpu_gib')} of weights each, with "
        f"{h(ns.w_room, 'worked.w_room')} of each pool left for the KV cache" + (
            ", which vLLM logs as " + " and ".join(
                f'<code title="computed by snippets.engine.memory.kv_cache_size">{fmt.inert_html(x)}</code>'
                for x in ns.w_kv_log)
            if ns.w_kv_log else "") + ".",
        f"4. **KV cache per token.** {h(ns.kv_tensors, 'worked.kv_tensors')} tensors (K and V) × "
        f"{h(w.layers, 'worked.layers')} layers × {h(w.kv_heads, 'worked.kv_heads')} KV heads × "
        f"{h(w.head_dim, 'worked.head_dim')} × {h(w.kv_bytes, 'worked.kv_bytes')} bytes = "
        f"{h(w.kv_token, 'worked.kv_token')} ({h(w.kv_token_mb, 'worked.kv_token_mb')}); each GPU holds "
        f"{h(w.kv_heads_gpu, 'worked.kv_heads_gpu')} of the KV heads, {h(w.kv_token_gpu, 'worked.kv_token_gpu')}.",
        f"5. **KV cache of one context.** {h(ns.context, 'worked.context')} tokens × "
        f"{h(w.kv_token, 'worked.kv_token')} = {h(w.kv_context, 'worked.kv_context')}, "
        f"{h(w.kv_context_gpu, 'worked.kv_context_gpu')} per GPU, read in full at every step. The pool has "
        f"{h(w.free_gib, 'worked.free_gib')} left after it.",
        f"6. **Weights only.** Each GPU reads its own {h(w.weights_gpu, 'worked.weights_gpu')} at "
        f"{h(ns.hbm, 'worked.hbm')}, all of them at once: {h(w.step_weights, 'worked.step_weights')} a "
        f"token at the least, so at most **{h(w.tps_weights, 'worked.tps_weights')} tokens per second**.",
        f"7. **With the KV cache.** ({h(w.weights_gpu, 'worked.weights_gpu')} + "
        f"{h(w.kv_context_gpu, 'worked.kv_context_gpu')}) ÷ {h(ns.hbm, 'worked.hbm')} = "
        f"{h(w.step_kv, 'worked.step_kv')}, so at most **{h(w.tps_kv, 'worked.tps_kv')} tokens per second** "
        f"for this sequence.",
    ]
    return "\n".join(lines) + "\n"


class HbmPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""

    _tight_words: str
    """The worked model on the fewest GPUs that hold its weights, and vLLM's refusal there (the worked example's step)."""
    shows = (running.shows("hbm"), gpu_table, worked_example, ceiling_table, ceiling_chart, fits_table, batch_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        chip, old = r.eng.chips[r.node.chip], r.eng.chips[OLDER]
        acc, acc_old = cat.accelerators[chip.id], cat.accelerators[old.id]
        pol = r.eng.memory_policies[r.scenario.memory_policy]
        hbm, hbm_old = chip.hbm_bytes_per_s, old.hbm_bytes_per_s
        bf16_bpp = r.eng.precisions["bf16"].bytes_per_param
        gen5 = pcie_x16(cat, "pcie-gen5")

        w = Shown(r.deployment(*WORKED))
        a70 = Shown(r.deployment(*WORKED, node=older_node(r)))
        lean = Shown(r.deployment(*LEANER, layout=r.deployment(*WORKED).layout))
        a70_layout = r.deployment(*WORKED, node=older_node(r)).layout  # FP8 against BF16 on the same GPUs
        lean_old = Shown(r.deployment(*LEANER, node=older_node(r), layout=a70_layout))
        s8 = Shown(r.deployment(*TP_ONLY))
        s405 = Shown(r.deployment(*PIPELINED))
        wd, ld, d8, d405 = w.d, lean.d, s8.d, s405.d

        # One sequence of the longest context Llama 3.1 accepts (max_position_embeddings, in data/models.yaml;
        # the upper end of the decode-context assumption gives the same 131,072 where a model lacks it).
        ctx_max = int(wd.setting.model.architecture.context_length or cat.assumptions[LONG_CONTEXT].range[1])
        long = r.deployment(*WORKED, context_tokens=ctx_max)
        kv_max = kv_per_token(long) * ctx_max
        kv_max_share = (long.decode_step_bytes(1) - weights_read(long)) / long.decode_step_bytes(1)

        if "bf16" not in old.dense_flops or "bf16" not in chip.dense_flops:
            raise ValueError("the compute contrast needs a dense BF16 figure for both GPUs")
        ridge_old = old.dense_flops["bf16"] / hbm_old
        ridge = chip.dense_flops["bf16"] / hbm
        intensity = flop_per_byte(bf16_bpp)

        on_one = {p: r.deployment(WORKED[0], p).setting.memory(Layout(1)) for p in FIT_ROWS}
        fp8_card, int4_card = on_one["fp8"], on_one["int4"]
        hour = {k: x.d.decode_ceiling / x.d.rented_gpus_per_replica for k, x in (("w", w), ("a70", a70), ("lean", lean))}
        t_pcie = gen5.bytes_per_s / wd.memory.weights
        kv_share = (wd.decode_step_bytes(1) - weights_read(wd)) / wd.decode_step_bytes(1)
        cost_w = required(w.usd_per_mtok, f"a price for the {chip.name} in data/prices.yaml")
        cost_a70 = required(a70.usd_per_mtok, f"a price for the {old.name} in data/prices.yaml")
        lean_most = batch_rows(ld)[-1]
        t_most = batch_ceiling(ld, lean_most)

        self.extend(one_card_quiz(r, chip))
        self.extend(serving_quiz(r))
        tight = tight_layout(r, wd)
        self._tight_words = str(tight.pop("tight_words"))
        self.extend(tight)
        self.gpu_name = chip.name
        self.old_gpu_name = old.name
        self.mem_type = acc.memory_type
        self.old_mem_type = acc_old.memory_type
        self.node_name = r.node.name
        self.node_gpus = fmt.count(r.node.gpus)
        self.gb = fmt.unit_definition("GB")
        self.gib = fmt.unit_definition("GiB")
        self.gpu_label = fmt.nbytes(chip.label_bytes, "GB")
        self.gpu_label_gib = fmt.nbytes(chip.label_bytes, "GiB", 1)
        self.gpu_reported_mib = fmt.quantity(chip.capacity_bytes / BYTE_UNITS["MiB"], "MiB", 0, show_unit=True)
        self.gpu_reported = fmt.nbytes(chip.capacity_bytes, "GiB", 1)
        self.gpu_reported_gb = fmt.nbytes(chip.capacity_bytes, "GB", 1)
        self.old_reported = fmt.nbytes(old.capacity_bytes, "GiB", 1)
        smi = cat.accelerators[chip.id].memory_reported
        if smi is None:
            raise ValueError(f"{chip.name}: the page compares the runtime's total with nvidia-smi's")
        self.gpu_smi_mib = fmt.quantity(smi.bytes / BYTE_UNITS["MiB"], "MiB", 0, show_unit=True)
        self.old_is_runtime = fmt.claim(old.capacity_reported,
                                        f"{old.name}: a runtime total in data/, budgeted instead of its label",
                                        structural="whether data/ records the runtime's total, not a magnitude")
        self.reported_below_smi = fmt.claim(chip.capacity_reported and chip.capacity_bytes < smi.bytes,
                                            f"{chip.capacity_bytes / 2**20:,.0f} < {smi.bytes / 2**20:,.0f} MiB")
        self.gib_gap = fmt.percent(BYTE_UNITS["GiB"] / BYTE_UNITS["GB"] - 1, 1)
        self.utilization = fmt.percent(pol.utilization)
        self.pool = fmt.nbytes(chip.capacity_bytes * pol.utilization, "GiB", 1)
        self.outside_pool = fmt.nbytes(chip.capacity_bytes * (1 - pol.utilization), "GiB", 1)
        self.activations = fmt.nbytes(wd.memory.activations, "GiB", 2)
        self.non_torch = fmt.nbytes(wd.memory.non_torch, "GiB", 2)
        self.w_room = fmt.nbytes(wd.memory.kv_room, "GiB", 1)
        self.w_kv_log = wd.kv_cache.log[1:]  # the KV lines: the step gives the available memory as its own figure
        self.max_num_seqs = fmt.count(wd.setting.memory_policy.max_num_seqs, "sequences")
        self.batched_tokens = fmt.count(wd.setting.memory_policy.max_num_batched_tokens, "tokens")
        self.sampler_bytes = fmt.quantity(required(pol.sampler_bytes_per_logit, "vLLM's sampler bytes per logit"),
                                          "bytes/logit", 1)
        self.vocab = fmt.count(wd.setting.model.architecture.vocab_size, "logits")
        nt = {point.tp: point.memory for point in pol.non_torch_by_tp}
        low_tp, most_tp = min(nt), max(nt, key=lambda t: nt[t])
        self.non_torch_low = fmt.nbytes(nt[low_tp], "GiB", 2)
        self.non_torch_low_layout = Layout(low_tp).label
        self.non_torch_most = fmt.nbytes(nt[most_tp], "GiB", 2)
        self.non_torch_most_layout = Layout(most_tp).label
        self.block_tokens = fmt.count(pol.kv_block_tokens, "tokens")
        self.policy_name = pol.name
        self.hbm = tbps(hbm)
        self.hbm_gbs = fmt.bandwidth(acc.memory_bandwidth.bandwidth)
        self.hbm_old = tbps(hbm_old)
        self.hbm_gain = fmt.ratio(hbm / hbm_old, 2, basis="H100 ÷ A100, one shared figure each")
        self.sweep = ms(chip.capacity_bytes / hbm)
        self.sweep_old = ms(old.capacity_bytes / hbm_old)
        self.bf16_bytes = fmt.quantity(bf16_bpp, "bytes/param", 0)
        self.flop_per_param = fmt.count(FLOP_PER_PARAM_PER_TOKEN, "FLOP")
        self.intensity = fmt.quantity(intensity, "FLOP/byte", 0)
        self.intensity_batch = fmt.quantity(flop_per_byte(bf16_bpp, ILLUSTRATIVE_BATCH), "FLOP/byte", 0)
        self.old_bf16 = fmt.quantity(old.dense_flops["bf16"] / 1e12, "TFLOP/s", 0, show_unit=True, basis="dense BF16")
        self.h100_bf16 = fmt.quantity(chip.dense_flops["bf16"] / 1e12, "TFLOP/s", 1, show_unit=True,
                                      basis="dense BF16, half the stated sparse figure")
        self.ridge_old = fmt.quantity(ridge_old, "FLOP/byte", 0, basis="dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge = fmt.quantity(ridge, "FLOP/byte", 0, basis="dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_gap = fmt.ratio(ridge_old / intensity, 0, basis="ridge point ÷ batch-1 BF16 intensity")
        self.h100_dense_derived = fmt.claim("bf16" in chip.dense_derived,
                                            f"{chip.name}: dense BF16 derived from the stated sparse figure")
        self.compute_waits = fmt.claim(ridge_old > 10 * intensity and ridge > 10 * intensity,
                                       f"{ridge_old:.0f} and {ridge:.0f} FLOP/byte the chips can do against "
                                       f"{intensity:.0f} decoding needs",
                structural="an order of magnitude: decoding reads each weight for one token (a few FLOP per byte) "
                           "against chips built for hundreds")
        self.batch_n = fmt.count(ILLUSTRATIVE_BATCH, "sequences")
        self.kv_tensors = fmt.count(KV_TENSORS, "tensors")
        self.context = fmt.count(r.scenario.context_tokens, "tokens")
        self.context_max = fmt.count(ctx_max, "tokens")
        self.kv_max = fmt.nbytes(kv_max, "GB", 1)
        self.kv_max_share = fmt.percent(kv_max_share, 0)
        self.long_layout = long.layout.label
        self.long_gpus = fmt.count(long.gpus)
        self.w = w
        self.a70 = a70
        self.lean = lean
        self.lean_old = lean_old
        self.s8 = s8
        self.s405 = s405
        self.fp8_card_used = fmt.nbytes(fp8_card.used, "GiB", 1)
        self.fp8_card_short = fmt.nbytes(-fp8_card.free, "GiB", 1)
        self.fp8_card_weights = fmt.nbytes(fp8_card.weights, "GiB", 1)
        self.int4_card_free = fmt.nbytes(int4_card.free, "GiB", 1)
        self.int4_card_seqs = fmt.count(int4_card.max_sequences, "sequences")
        self.lean_hour_gain = fmt.ratio(hour["lean"] / hour["w"], 2, basis="FP8 ÷ BF16 tokens per GPU-hour, same GPUs")
        self.h100_hour_gain = fmt.ratio(hour["w"] / hour["a70"], 2, basis="H100 ÷ A100 tokens per GPU-hour, BF16")
        self.usd_mtok_w = cost_w
        self.usd_mtok_a70 = cost_a70
        self.lean_most = fmt.count(lean_most, "sequences")
        self.lean_tps_most = tps(t_most)
        self.lean_hour_most = per_gpu_hour(t_most, ld.rented_gpus_per_replica)
        self.lean_batch_gain = fmt.ratio(t_most / ld.decode_ceiling, 1,
                                         basis="replica ceiling at the largest batch that fits ÷ batch 1")
        self.gen5 = fmt.bandwidth(gen5, digits=1)
        self.hbm_over_gen5 = fmt.ratio(hbm / gen5.bytes_per_s, 0, basis="one way each")
        self.pcie_tps = fmt.quantity(t_pcie, "tokens/s", 2)
        # Claims the prose makes.
        self.reported_above_label = fmt.claim(chip.capacity_reported and chip.capacity_bytes > chip.label_bytes,
                                              f"{chip.capacity_bytes / 1e9:.2f} GB reported > {chip.label_bytes / 1e9:.0f} GB")
        self.reported_below_label_gib = fmt.claim(chip.capacity_bytes < chip.label_bytes / 1e9 * BYTE_UNITS["GiB"],
                                                  f"{chip.capacity_bytes / 2**30:.2f} GiB < {chip.label_bytes / 1e9:.0f} GiB")
        self.w70_exceeds_card = fmt.claim(wd.gpus > 1 and not on_one["bf16"].fits,
                                          f"{on_one['bf16'].used / 2**30:.1f} GiB > {on_one['bf16'].pool / 2**30:.1f} GiB")
        self.h100_faster = fmt.claim(hbm > hbm_old, f"{hbm / 1e9:.0f} > {hbm_old / 1e9:.0f} GB/s")
        self.kv_small_at_batch1 = fmt.claim(kv_share < 0.05, f"KV is {kv_share:.1%} of the bytes per step")
        self.nfold = fmt.claim(0.9 * d8.layout.tp < hbm / weights_read(d8) / (hbm / d8.weight_bytes) <= d8.layout.tp,
                               f"{hbm / weights_read(d8) / (hbm / d8.weight_bytes):.2f}× on {d8.layout.tp} GPUs")
        self.pp_splits_sequence = fmt.claim(d405.layout.pp > 1, f"layout {d405.layout.label}: {d405.layout.pp} stages in turn")
        self.pp_no_faster = fmt.claim(
                d405.decode_ceiling <= d405.layout.tp * hbm / d405.weight_bytes,
                f"{d405.decode_ceiling:.1f} tokens/s ≤ TP{d405.layout.tp}'s {d405.layout.tp * hbm / d405.weight_bytes:.1f}")
        self.fp8_tp8_faster = fmt.claim(d8.decode_ceiling > 1.8 * d405.decode_ceiling and d8.gpus < d405.gpus,
                                        f"{d8.decode_ceiling:.1f} on {d8.gpus} GPUs > {d405.decode_ceiling:.1f} on {d405.gpus}")
        self.kv_max_not_small = fmt.claim(kv_max_share > 0.1, f"KV is {kv_max_share:.0%} of the bytes per step")
        self.fp8_misses_card = fmt.claim(fp8_card.weights < fp8_card.pool and not fp8_card.fits,
                                         f"weights {fp8_card.weights / 2**30:.1f} GiB < pool {fp8_card.pool / 2**30:.1f}"
                                         f" GiB < {fp8_card.used / 2**30:.1f} GiB with the rest")
        self.int4_70b_fits = fmt.claim(int4_card.fits and int4_card.max_sequences > 1,
                                       f"{int4_card.used / 2**30:.1f} GiB ≤ {int4_card.pool / 2**30:.1f} GiB",
                structural="fits is the engine's memory check; more than one sequence is the smallest batch that is a batch")
        self.batch_helps = fmt.claim(ld.max_concurrency > 1.3 * wd.max_concurrency and ld.gpus == wd.gpus,
                                     f"{ld.max_concurrency} FP8 against {wd.max_concurrency} BF16 sequences, "
                                     f"{ld.gpus} GPUs each")
        self.h100_more_per_gpu_hour = fmt.claim(
                hour["w"] > hour["a70"], f"{hour['w'] * 3600:,.0f} > {hour['a70'] * 3600:,.0f} tokens per GPU-hour")
        price_ratio = (required(wd.setting.price, f"a price for the {chip.name}").usd_per_gpu_hour
                       / required(a70.d.setting.price, f"a price for the {old.name}").usd_per_gpu_hour)
        self.older_token_cheaper = fmt.claim(price_ratio > hour["w"] / hour["a70"] and cost_a70.value < cost_w.value,
                                             f"price ×{price_ratio:.2f} > tokens per GPU-hour ×"
                                             f"{hour['w'] / hour['a70']:.2f}: ${cost_a70.value:.2f} against "
                                             f"${cost_w.value:.2f} per million tokens")
        self.h100_price_ratio = fmt.ratio(price_ratio, 2, basis="H100 ÷ A100 price per GPU-hour (data/prices.yaml)")
        self.a100_cheaper = fmt.percent(1 - cost_a70.value / cost_w.value)
        self.lean_nearly_doubles = fmt.claim(
                1.5 < hour["lean"] / hour["w"] <= 2.0, f"FP8 ÷ BF16 per GPU-hour = {hour['lean'] / hour['w']:.2f}")
        self.a100_fp8_weight_only = fmt.claim(lean_old.d.weight_only and not lean.d.weight_only,
                                              f"{old.name} computes {lean_old.d.compute_format}, "
                                              f"{chip.name} {lean.d.compute_format}")
        old_hour = {k: s.d.decode_ceiling / s.d.rented_gpus_per_replica for k, s in (("lean", lean_old), ("w", a70))}
        self.a100_fp8_still_faster = fmt.claim(old_hour["lean"] > 1.5 * old_hour["w"],
                                               f"per rented GPU: {old_hour['lean']:.1f} ({lean_old.layout}) > 1.5 × "
                                               f"{old_hour['w']:.1f} tokens/s ({a70.layout})")
        self.hbm_gt_10x_pcie = fmt.claim(hbm / gen5.bytes_per_s > 10,
                                         f"HBM ÷ PCIe 5.0 x16 one way = {hbm / gen5.bytes_per_s:.0f}")


namespace = HbmPage.namespace_of
sources = HbmPage.sources_of
