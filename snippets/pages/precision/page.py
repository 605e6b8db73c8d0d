"""The precision page model: the names its `{{ ... }}` values and claims use, and its worked example."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace
from typing import Any

from snippets.data import Catalog, required
from snippets.engine import Layout, UnsupportedFormat, setting
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.precision.common import (
    FORMATS,
    MODELS,
    OLDER,
    QUIZ_OLD_TP,
    SIZED,
    Format,
    _bits,
    _gb,
    _tps,
    key,
)
from snippets.pages.precision.tables import (
    Row,
    cost_table,
    decode_table,
    formats_table,
    kept_16bit_bytes,
    on_layout,
    ranges_table,
    sizing_table,
)
from snippets.pages.scenario import Reference, reference
from snippets.render import fmt
from snippets.teaching.formats import (
    bit_budget,
)


def worked_example(cat: Catalog) -> str:
    """Llama 3.1 70B from FP16 to INT4 with group scales, step by step, as Markdown with figure spans."""
    r = reference(cat)
    model_id = MODELS["m70"]
    a, b = Row(r, model_id, "fp16"), Row(r, model_id, "int4-g128")
    fa, fb = Format(cat, "fp16"), Format(cat, "int4-g128")
    budget = bit_budget(fb.precision)
    same = on_layout(r, model_id, "int4-g128", a.d.layout)
    if same is None:
        raise ValueError(f"INT4 on FP16's {a.layout} is refused: the worked example needs it")
    one = a.d.setting.memory(Layout(1))
    body = b.d.weight_bytes - kept_16bit_bytes(b.d)
    group, scale_width = required(fb.group, fb.name), required(fb.scale_width, fb.name)
    zero_width = required(fb.zero_width, fb.name)
    pol = r.eng.memory_policies[r.scenario.memory_policy]
    h = fmt.fig_html
    shrink = fmt.ratio(a.d.weight_bytes / b.d.weight_bytes, 2, basis="FP16 weights ÷ grouped INT4 weights, as stored")
    lines = [
        f"1. **FP16.** {h(a.params, 'worked.params')} weights (counted from the architecture) × "
        f"{h(fa.bytes, 'worked.fp16_bytes')} bytes = {h(a.weight, 'worked.fp16_weight')}.",
        f"2. **INT4 elements.** {h(fb.element_bits, 'worked.element_bits')} bits is "
        f"{h(fmt.quantity(budget.element / 8, 'bytes/weight', 1), 'worked.element_bytes')} byte per weight.",
        f"3. **Group metadata.** Every {h(group, 'worked.group')} weights share one "
        f"{fmt.escape_markdown(str(fb.scale_format))} scale "
        f"({h(scale_width, 'worked.scale_width')} bits) and one zero point "
        f"({h(zero_width, 'worked.zero_width')} bits): ({h(scale_width, 'worked.scale_width')} + "
        f"{h(zero_width, 'worked.zero_width')}) ÷ {h(group, 'worked.group')} = "
        f"{h(fb.meta_bits, 'worked.meta_bits')} bits per weight, {h(fb.bits, 'worked.bits')} in all.",
        f"4. **What stays in BF16.** The checkpoint keeps the token embedding and the LM head in BF16: "
        f"{h(b.kept16, 'worked.kept16')}. The quantized blocks are {h(_gb(body), 'worked.body')}, so the "
        f"model is **{h(b.weight, 'worked.int4_weight')}**: {h(shrink, 'worked.shrink')} smaller than FP16, "
        f"not the {h(fb.shrink, 'worked.format_shrink')} of the format alone.",
        f"5. **GPUs.** On one {fmt.escape_markdown(r.eng.chips[r.node.chip].name)} the pool is "
        f"{h(fmt.nbytes(one.pool, 'GiB', 1), 'worked.pool')} "
        f"({h(fmt.percent(pol.utilization), 'worked.utilization')} of what the card reports) and must hold the "
        f"weights, the activations, the runtime and the KV cache: FP16 would need "
        f"{h(fmt.nbytes(one.used, 'GiB', 1), 'worked.fp16_one_gpu')}, so the engine deploys it as "
        f"**{a.layout}** on {h(a.gpus, 'worked.fp16_gpus')} GPUs; grouped INT4 needs "
        f"{h(b.used_gpu, 'worked.int4_used')} and runs as **{b.layout}** on {h(b.gpus, 'worked.int4_gpus')} GPU.",
        f"6. **Decode ceiling.** Each token reads every weight and the sequence's KV cache once; the GPUs of a "
        f"tensor-parallel layout read their shares at the same time. FP16 on {a.layout}: "
        f"{h(a.ceiling, 'worked.fp16_ceiling')} tokens/s. Grouped INT4 on {b.layout}: "
        f"{h(b.ceiling, 'worked.int4_ceiling')} tokens/s, and on the same {h(a.tp, 'worked.fp16_tp')} GPUs as "
        f"FP16 it would be {h(_tps(same.decode_ceiling), 'worked.int4_same_gpus')} tokens/s.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- namespace

def older_quiz(r: Reference) -> dict[str, Any]:
    """The quiz's older-GPU problem: Llama 3.1 70B on `QUIZ_OLD_TP` cards of `OLDER` in FP8 and in BF16, both
    the engine's deployments on that layout (`deploy` refuses a layout whose memory does not hold them)."""
    node = r.eng.node_of(OLDER)
    if node is None:
        raise ValueError(f"no node in data/ is built from {OLDER}")
    lay = Layout(QUIZ_OLD_TP)
    fp8 = r.deployment(MODELS["m70"], "fp8", node=node.id, layout=lay)
    bf16 = r.deployment(MODELS["m70"], "bf16", node=node.id, layout=lay)
    return {
        "q5_node": node.name,
        "q5_gpus": fmt.count(lay.gpus),
        "q5_layout": lay.label,
        "q5_fp8_weights": fmt.nbytes(fp8.memory.weights, "GiB", 1),
        "q5_fp8_used": fmt.nbytes(fp8.memory.used, "GiB", 1),
        "q5_pool": fmt.nbytes(fp8.memory.pool, "GiB", 1),
        "q5_fp8_seqs": fmt.count(fp8.max_concurrency, "sequences"),
        "q5_bf16_seqs": fmt.count(bf16.max_concurrency, "sequences"),
        "q5_compute": fmt_name(fp8.compute_format),
        "q5_fp8_tps": _tps(fp8.decode_ceiling),
        "q5_bf16_tps": _tps(bf16.decode_ceiling),
        "q5_fits": fmt.claim(fp8.memory.fits, f"{fp8.memory.used / 2**30:.1f} GiB ≤ {fp8.memory.pool / 2**30:.1f} GiB"),
        "q5_weight_only": fmt.claim(fp8.weight_only and not bf16.weight_only,
                                    f"{fp8.setting.chip.name}: FP8 weights compute in {fp8.compute_format}"),
        "q5_fp8_faster": fmt.claim(fp8.decode_ceiling > bf16.decode_ceiling,
                                   f"{fp8.decode_ceiling:.1f} > {bf16.decode_ceiling:.1f} tokens/s on {lay.label}"),
    }


def fmt_name(format_id: str) -> str:
    """A tensor format's id as the prose writes it: bf16 -> BF16."""
    return format_id.upper()


def _model_rows(r: Reference, model_id: str) -> SimpleNamespace:
    return SimpleNamespace(**{key(p): Row(r, model_id, p) for p in SIZED})


class PrecisionPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("precision"),
             formats_table, worked_example, partial(sizing_table, model="m70"), partial(sizing_table, model="m405"),
             partial(decode_table, model="m70"), partial(decode_table, model="m405"), cost_table, ranges_table)
    """The functions the page's blocks print, with the blocks' arguments."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        node = r.node
        chip = r.eng.chips[node.chip]
        pol = r.eng.memory_policies[r.scenario.memory_policy]
        pool = chip.capacity_bytes * pol.utilization
        formats = {key(p): Format(cat, p) for p in (*FORMATS, "fp8-e4m3", "fp8-e5m2")}
        models = {m: _model_rows(r, mid) for m, mid in MODELS.items()}
        m70, m405 = models["m70"], models["m405"]
        f = SimpleNamespace(**formats)

        def total(pid: str) -> float:
            return bit_budget(cat.precisions[pid]).total

        # On one whole node, the ceiling rises by less than the bytes of the format shrink: the KV cache
        # (BF16) and the embedding and LM head (BF16) do not shrink with it.
        base = m70.fp16.whole_node
        if base is None:
            raise ValueError("the decode comparison needs 70B in FP16 on one whole node")
        gains = []
        for pid in SIZED:
            x = getattr(m70, key(pid))
            if x.whole_node is not None and pid != "fp16" and total(pid) < total("fp16"):
                gains.append((x.whole_node.decode_ceiling / base.decode_ceiling) / (total("fp16") / total(pid)))
        below_shrink = all(0.5 < g < 1 for g in gains)
        # FP32 on TP4 and FP16 on TP2: twice the bytes on twice the GPUs, about the same ceiling.
        fewest = [m70.fp32.d.decode_ceiling, m70.fp16.d.decode_ceiling]
        same_speed = max(fewest) / min(fewest) - 1 < 0.05
        int4_one_gpu = [x for x in vars(m70).values() if x.d.gpus == 1]
        lean = r.deployment(MODELS["m70"], "fp8", accelerator=OLDER)

        e4m3, e5m2 = formats["fp8_e4m3"], formats["fp8_e5m2"]
        e4m3_max, e5m2_max = required(e4m3.max, e4m3.name), required(e5m2.max, e5m2.name)
        e4m3_step, e5m2_step = required(e4m3.step, e4m3.name), required(e5m2.step, e5m2.name)
        fp16_max, bf16_max = required(formats["fp16"].max, "FP16"), required(formats["bf16"].max, "BF16")
        int4_budget = bit_budget(cat.precisions["int4-g128"])
        scale_only = int4_budget.element + int4_budget.scale
        ordered = total("int4") < total("int4-g128") < total("mxfp4") < total("nvfp4")
        scale_cost = m405.int4_g128.d.weight_bytes - m405.int4.d.weight_bytes

        # where the engine has no INT8 kernel (data/precisions.yaml, int8's kernel_gaps): each chip refused at start
        gap_chips = [c for g in r.eng.precisions["int8"].kernel_gaps if g.engine == pol.engine
                     for c in sorted(g.accelerators)]
        refusals = []
        for c in gap_chips:
            try:
                setting(r.eng, MODELS["m70"], "int8", r.scenario.id, accelerator=c)
            except UnsupportedFormat as exc:
                refusals.append(str(exc))

        self.extend(older_quiz(r))
        self.extend(formats)
        self.f = f
        self.extend(models)
        self.gpu_name = chip.name
        self.old_gpu_name = r.eng.chips[OLDER].name
        self.node_name = node.name
        self.gpu_label = fmt.nbytes(chip.label_bytes, "GB")
        self.gpu_reported = fmt.nbytes(chip.capacity_bytes, "GiB", 1)
        self.pool = fmt.nbytes(pool, "GiB", 1)
        self.utilization = fmt.percent(pol.utilization)
        self.context = fmt.count(r.scenario.context_tokens, "tokens")
        self.node_gpus = fmt.count(node.gpus)
        self.int8_gap_engine = pol.engine
        self.int8_gap_chips = ", ".join(r.eng.chips[c].name for c in gap_chips)
        self.int8_gap_message = refusals[0] if refusals else ""
        self.int8_gap_first = r.eng.chips[gap_chips[0]].name if gap_chips else ""  # whose message is quoted
        self.int8_gap_refused = fmt.claim(bool(gap_chips) and len(refusals) == len(gap_chips)
                                          and chip.id not in gap_chips,
                                          f"{len(refusals)} of {len(gap_chips)} chips refused INT8 under "
                                          f"{pol.engine}; the page's {chip.id} not among them")
        self.hbm = fmt.quantity(chip.hbm_bytes_per_s / 1e12, "TB/s", 2, show_unit=True, basis="shared by reads and writes")
        self.int4_scale_only_bits = _bits(scale_only)
        self.m405_scale_cost = _gb(scale_cost)
        self.m405_scale_pool = fmt.percent(scale_cost / pool)
        self.m70_first_single_gpu = int4_one_gpu[0].precision if int4_one_gpu else "none"
        self.m70_meta = _gb(m70.int4_g128.d.weight_bytes - m70.int4.d.weight_bytes)
        self.e4m3_max = e4m3_max
        self.e5m2_max = e5m2_max
        self.e4m3_step = e4m3_step
        self.e5m2_step = e5m2_step
        self.e5m2_over_e4m3_range = fmt.ratio(e5m2_max.value / e4m3_max.value, 0, basis="largest values")
        self.a100_fp8_ceiling = _tps(lean.decode_ceiling)
        # Claims the prose makes.
        self.bf16_same_bytes_as_fp16 = fmt.claim(
                total("bf16") == total("fp16"), f"BF16 {total('bf16')} bits, FP16 {total('fp16')} bits")
        self.bf16_wider_than_fp16 = fmt.claim(
                bf16_max.value > fp16_max.value, f"largest BF16 {bf16_max.text} > largest FP16 {fp16_max.text}",
                structural="the formats' exponent widths (8 bits against 5) fix the ranges")
        self.metadata_ordered = fmt.claim(
                ordered, f"INT4 {total('int4')} < INT4 g128 {total('int4-g128')} < MXFP4 {total('mxfp4')} "
                         f"< NVFP4 {total('nvfp4')} bits per weight")
        self.e4m3_finer_e5m2_wider = fmt.claim(
                e4m3_step.value < e5m2_step.value and e4m3_max.value < e5m2_max.value,
                f"steps {e4m3_step.text} < {e5m2_step.text}; largest {e4m3_max.text} < {e5m2_max.text}")
        self.m70_int4_one_gpu_either_way = fmt.claim(
                m70.int4.d.gpus == 1 and m70.int4_g128.d.gpus == 1,
                f"{m70.int4.d.gpus} GPU bare, {m70.int4_g128.d.gpus} with scales")
        self.kept16_matters = fmt.claim(
                m70.int4_g128.d.weight_bytes > 1.05 * m70.int4_g128.d.params * total("int4-g128") / 8,
                "grouped INT4 weights > 1.05 × params × bits / 8")
        self.int8_fewer_gpus = fmt.claim(
                m70.int8.d.gpus < m70.fp16.d.gpus
                and 0.8 < m70.int8.d.decode_ceiling / m70.fp16.d.decode_ceiling < 1.25,
                f"{m70.int8.d.gpus} GPUs in INT8 and {m70.fp16.d.gpus} in FP16; "
                f"{m70.int8.d.decode_ceiling:.1f} against {m70.fp16.d.decode_ceiling:.1f} tokens/s")
        self.int8_misses_one_gpu = fmt.claim(
                m70.int8.d.setting.memory(Layout(1)).weights < pool and not m70.int8.d.setting.memory(Layout(1)).fits,
                f"INT8 on one GPU: {m70.int8.d.setting.memory(Layout(1)).used / 2**30:.1f} GiB > pool {pool / 2**30:.1f} GiB")
        self.m405_fp8_first_in_node = fmt.claim(
                not m405.fp16.d.fits_one_node and m405.fp8.d.fits_one_node,
                f"FP16 {m405.fp16.d.layout.label}, FP8 {m405.fp8.d.layout.label}, {node.gpus} GPUs per node")
        self.m405_int4_scales_no_gpu = fmt.claim(
                m405.int4.d.gpus == m405.int4_g128.d.gpus,
                f"{m405.int4.d.layout.label} bare, {m405.int4_g128.d.layout.label} with scales")
        self.ceiling_below_shrink = fmt.claim(
                below_shrink, "ceiling gain ÷ bytes shrink on one node: " + ", ".join(f"{g:.2f}" for g in gains))
        self.same_speed_on_fewest = fmt.claim(
                same_speed, "70B FP32 and FP16 ceilings: " + ", ".join(f"{x:.2f}" for x in fewest) + " tokens/s")
        self.pp_no_faster = fmt.claim(
                m405.fp16.d.decode_ceiling < m405.fp8.d.decode_ceiling and m405.fp16.d.gpus > m405.fp8.d.gpus,
                f"{m405.fp16.d.layout.label}: {m405.fp16.d.decode_ceiling:.1f} tokens/s; "
                f"{m405.fp8.d.layout.label}: {m405.fp8.d.decode_ceiling:.1f}")
        self.int4_weight_only_on_h100 = fmt.claim(
                m70.int4_g128.d.weight_only and not m70.fp8.d.weight_only,
                f"{chip.name}: INT4 computes in {m70.int4_g128.d.compute_format}, FP8 in {m70.fp8.d.compute_format}")
        self.fp8_weight_only_on_a100 = fmt.claim(
                lean.weight_only, f"{lean.setting.chip.name} computes FP8 weights in {lean.compute_format}")
        self.m70_fp32_fits_node = m70.fp32.fits_node
        self.fp4_same_gpus = fmt.claim(
                m405.mxfp4.d.gpus == m405.nvfp4.d.gpus and m405.nvfp4.d.weight_bytes > m405.mxfp4.d.weight_bytes,
                f"MXFP4 {m405.mxfp4.d.layout.label}, NVFP4 {m405.nvfp4.d.layout.label}")
        self.fp4_compute = fmt_name(m405.nvfp4.d.compute_format)
        self.fp4_weight_only = fmt.claim(
                m405.mxfp4.d.weight_only and m405.nvfp4.d.weight_only,
                f"{chip.name}: MXFP4 and NVFP4 compute in {m405.nvfp4.d.compute_format}")


namespace = PrecisionPage.namespace_of
sources = PrecisionPage.sources_of
