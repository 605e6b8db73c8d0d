"""Page model of "Numeric precision" (docs/precision.md).

The formats (bits, bytes, ranges) come from `snippets.teaching.formats`; every deployment the page shows
(weights, layout, memory per GPU, GPUs, nodes, decode ceiling, cost) is the engine's, through
`snippets.pages.scenario.reference`: the node, the memory budget and the context are the
reference scenario's (`data/scenarios.yaml`).
"""

from __future__ import annotations

import math
from functools import partial
from types import SimpleNamespace
from typing import Any, TypeVar

from snippets.data import Catalog, required
from snippets.engine import Deployment, Layout, RefusedLayout
from snippets.engine.memory import stage_weights
from snippets.pages import running, units
from snippets.pages.base import Page
from snippets.pages.scenario import Reference, reference
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.formats import (
    bit_budget,
    max_finite,
    min_normal,
    min_subnormal,
    relative_step,
    shrink_factor,
)

MODELS = {"m70": "llama-3.1-70b", "m405": "llama-3.1-405b"}
REFERENCE = "fp16"
FORMATS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the bytes-per-parameter table."""
SIZED = ("fp32", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the GPU and decode tables (BF16 sizes exactly as FP16)."""
FLOATS = ("fp32", "bf16", "fp16", "fp8-e5m2", "fp8-e4m3", "mxfp4")
"""Rows of the range table; MXFP4 stands for its E2M1 element, which NVFP4 shares."""
COST_MODEL = "m70"
OLDER = "a100-80gb-sxm"
"""A GPU without FP8 tensor cores, where FP8 is weight-only."""
QUIZ_OLD_TP = 4
"""The quiz's four cards of the older GPU (TP4 inside its 8-GPU node)."""


T = TypeVar("T")


def key(precision_id: str) -> str:
    """The name a precision id goes by in the page's expressions: "int4-g128" -> "int4_g128"."""
    return precision_id.replace("-", "_")


def _digits(x: float, most: int) -> int:
    """The fewest decimals (up to `most`) that show `x` exactly: 4.15625 -> 5, 36.37 -> `most`."""
    for d in range(most + 1):
        if abs(round(x, d) - x) < 1e-12 * max(1.0, abs(x)):
            return d
    return most


def _bits(x: float) -> Figure:
    return fmt.quantity(x, "bits/weight", _digits(x, 5))


def _gb(n: float) -> Figure:
    return fmt.nbytes(n, "GB", _digits(n / 1e9, 1))


def _tps(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 0 if x >= 100 else 1,
                        basis="upper bound, one sequence: HBM ÷ (weights + KV cache) per step")


def _power_of_two(x: float) -> str:
    """2^-9 for 0.001953125, 0.5 for 2^-1: the small floats' limits are exact powers of two."""
    e = math.log2(x)
    if e != int(e):
        raise ValueError(f"{x!r} is not a power of two")
    return fmt.number(x, -int(e)) if e >= -3 else f"2^{int(e)}"


# --------------------------------------------------------------------------- formats

class Format:
    """One number format, as figures; each attribute is named once, here."""

    def __init__(self, cat: Catalog, precision_id: str) -> None:
        p = cat.precisions[precision_id]
        b = bit_budget(p)
        bs = p.block_scale
        lay = p.layout
        shrink = shrink_factor(p, cat.precisions[REFERENCE])
        self.precision = p
        self.name = p.name
        self.element_bits = _bits(b.element)
        self.scale_bits = _bits(b.scale)  # the group's scale spread over its weights, bits per weight
        self.zero_bits = _bits(b.zero_point)
        self.meta_bits = _bits(b.scale + b.zero_point)  # scale plus zero point, bits per weight
        self.bits = _bits(b.total)  # all of it: bits per weight
        self.bytes = fmt.quantity(b.total / 8, "bytes/weight", _digits(b.total / 8, 5))
        self.shrink = fmt.ratio(shrink, _digits(shrink, 2),  # times fewer bytes than FP16
                                basis=f"bytes per weight against {cat.precisions[REFERENCE].name}")
        self.overhead = fmt.percent(b.overhead, _digits(b.overhead * 100, 1))  # scale and zero point / element bits
        self.group = None if bs is None else fmt.count(bs.group_size, "weights")
        self.scale_width = None if bs is None else fmt.quantity(bs.scale_width.value, "bits", 0)
        self.zero_width = (None if bs is None or bs.zero_point_width is None
                           else fmt.quantity(bs.zero_point_width.value, "bits", 0))
        self.scale_format = "" if bs is None or bs.scale_format is None else bs.scale_format
        self.exponent_bits = None if lay is None else fmt.count(lay.exponent_bits, "bits")
        self.mantissa_bits = None if lay is None else fmt.count(lay.mantissa_bits, "bits")
        self.max = None if lay is None else fmt.Figure(max_finite(lay), "", _sci(max_finite(lay)))
        self.min_normal = None if lay is None else fmt.Figure(min_normal(lay), "", _power_of_two(min_normal(lay)))
        self.min_subnormal = (None if lay is None
                              else fmt.Figure(min_subnormal(lay), "", _power_of_two(min_subnormal(lay))))
        # the gap between neighbouring values, relative to the power of two below them: in percent, and as 2^-m
        self.step = None if lay is None else fmt.percent(relative_step(lay), _digits(relative_step(lay) * 100, 1))
        self.step_pow2 = None if lay is None else fmt.Figure(relative_step(lay), "", f"2^-{lay.mantissa_bits}")


def _sci(x: float) -> str:
    """A float format's largest value: exact below a million (448, 57,344, 65,504), else 3.40 × 10^38."""
    if x < 1e6:
        return fmt.number(x, _digits(x, 2))
    exp = len(str(int(x))) - 1
    return f"{x / 10**exp:.2f} × 10^{exp}"


def formats_table(cat: Catalog) -> str:
    """Bits and bytes per weight of each format, its per-group metadata, and its shrink against FP16."""
    rows: list[list[fmt.Cell]] = []
    for pid in FORMATS:
        f = Format(cat, pid)
        if f.group is None:
            group = "none (per tensor or per channel, negligible)"
        else:
            zero = f" + {f.zero_width.text}-bit zero point" if f.zero_width is not None else ""
            group = f"{f.scale_format} scale{zero} per {f.group.text} weights"
        rows.append([f.name, f.element_bits, group, f.meta_bits, f.bits, f.bytes, f.shrink])
    return fmt.table(
        "formats",
        ["Format", "Element bits", "Per-group metadata", "Metadata bits per weight", "Bits per weight",
         "Bytes per weight", "FP16 bytes ÷ these"],
        rows,
        align="lrlrrrr",
    )


def ranges_table(cat: Catalog) -> str:
    """Exponent and mantissa bits of the floats, and what they buy: range and relative step."""
    rows: list[list[fmt.Cell]] = []
    for pid in FLOATS:
        f = Format(cat, pid)
        label = "FP4 E2M1 (element of MXFP4 and NVFP4)" if pid == "mxfp4" else f.name
        rows.append([label, required(f.exponent_bits, f.name), required(f.mantissa_bits, f.name),
                     required(f.max, f.name), required(f.min_subnormal, f.name), required(f.step_pow2, f.name)])
    return fmt.table(
        "ranges",
        ["Format", "Exponent bits", "Mantissa bits", "Largest value", "Smallest value above zero",
         "Relative step between neighbours"],
        rows,
        align="lrrrrr",
    )


# --------------------------------------------------------------------------- model x precision

def kept_16bit_bytes(d: Deployment) -> float:
    """Bytes of one whole copy kept at 16 bit beside the quantized blocks: embedding, LM head, final norm."""
    s = d.setting
    return stage_weights(s.model.arch, s.precision, Layout(1))[0].embedding_bytes


def on_layout(r: Reference, model_id: str, precision_id: str, layout: Layout) -> Deployment | None:
    """The deployment on `layout`, or None where the engines refuse it or its GPUs cannot hold it."""
    try:
        return r.deployment(model_id, precision_id, layout=layout)
    except RefusedLayout:
        return None


class Row:
    """One model in one precision, deployed by the engine, as figures."""

    def __init__(self, r: Reference, model_id: str, precision_id: str) -> None:
        d = r.deployment(model_id, precision_id)
        node = r.node
        whole = on_layout(r, model_id, precision_id, Layout(node.gpus)) if d.fits_one_node else None
        reps = node.gpus // d.gpus if d.fits_one_node else 0
        cost = d.cost_per_replica_hour
        bpp = d.setting.precision.bytes_per_param
        basis = f"{d.layout.label}: {d.gpus} GPUs, {d.nodes} node(s) of {node.gpus}"
        self.model = d.setting.model.name
        self.precision = d.setting.precision.name
        self.params = fmt.params(d.params, 2)
        self.bytes_per_param = fmt.quantity(bpp, "bytes/weight", _digits(bpp, 5))
        # One whole copy, embeddings and LM head as the checkpoint keeps them.
        self.weight = _gb(d.weight_bytes)
        self.kept16 = _gb(kept_16bit_bytes(d))
        self.weights_gpu = fmt.nbytes(d.memory.weights, "GiB", 1)
        self.used_gpu = fmt.nbytes(d.memory.used, "GiB", 1)
        self.layout = d.layout.label
        self.tp = fmt.count(d.layout.tp)
        self.gpus = fmt.count(d.gpus)
        self.rented = fmt.count(d.rented_gpus_per_replica)
        self.nodes = fmt.count(d.nodes, "nodes")
        # The engine's single-sequence ceiling on the layout its policy chose.
        self.ceiling = _tps(d.decode_ceiling)
        # The same on one whole node (TP across all its GPUs); None if that layout cannot hold it.
        self.node_ceiling = None if whole is None else _tps(whole.decode_ceiling)
        self.replicas = fmt.count(reps, "replicas")
        # Replicas per node x ceiling per replica.
        self.node_total = _tps(reps * d.decode_ceiling)
        # Dollars per million tokens at one sequence per replica, at the site's indicative price.
        self.cost_mtok = None if cost is None else units.dated(
            fmt.Figure(cost / (d.decode_ceiling * 3600) * 1e6, "USD", f"${cost / (d.decode_ceiling * 3600) * 1e6:,.2f}",
                       "indicative list price, one sequence"), units.price_of(d))
        self.fits_node = fmt.claim(d.fits_one_node, basis)
        self.spans_nodes = fmt.claim(not d.fits_one_node, basis)
        self.fits_one_gpu = fmt.claim(d.gpus == 1, basis)
        self.d = d
        self.whole_node = whole


def sizing_table(cat: Catalog, model: str) -> str:
    """One model in each precision: weights, what stays at 16 bit, memory per GPU, the engine's layout, one node or not."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        x = Row(r, MODELS[model], pid)
        if x.d.gpus == 1:
            verdict = "Yes: a single GPU"
        elif x.d.fits_one_node:
            verdict = "Yes"
        else:
            verdict = f"No: {x.nodes.text} nodes"
        rows.append([x.precision, x.bytes_per_param, x.weight, x.kept16, x.layout, x.gpus, x.weights_gpu,
                     x.used_gpu, verdict])
    return fmt.table(
        f"sizing_{model}",
        ["Precision", "Bytes per weight", "Weights", "Embedding and LM head", "Layout", "GPUs", "Weights per GPU",
         "Pool used per GPU", f"One {r.node.gpus}-GPU node?"],
        rows,
        align="lrrrlrrrl",
    )


def decode_table(cat: Catalog, model: str) -> str:
    """The engine's single-sequence ceiling on one whole node and on the layout its policy chose."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        x = Row(r, MODELS[model], pid)
        f = Format(cat, pid)
        on_node: fmt.Cell = x.node_ceiling if x.node_ceiling is not None else "does not fit in one node"
        rows.append([x.precision, x.weight, f.shrink, on_node, x.layout, x.ceiling])
    return fmt.table(
        f"decode_{model}",
        ["Precision", "Weights", "FP16 bytes ÷ these",
         f"Ceiling on one node (TP{r.node.gpus}), tokens/s", "Layout", "Ceiling on it, tokens/s"],
        rows,
        align="lrrrlr",
    )


def cost_table(cat: Catalog, model: str = COST_MODEL) -> str:
    """Replicas of one model per node in each precision, the node's summed ceiling and the cost per token."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        x = Row(r, MODELS[model], pid)
        rows.append([x.precision, x.layout, x.rented, x.replicas, x.ceiling, x.node_total,
                     "unpriced" if x.cost_mtok is None else x.cost_mtok])
    return fmt.table(
        f"cost_{model}",
        ["Precision", "Layout", "GPUs per replica", "Replicas per node", "Ceiling per replica, tokens/s",
         "Node, one sequence per replica, tokens/s", "Per million tokens"],
        rows,
        align="llrrrrr",
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
