"""Page model of "Numeric precision" (docs/precision.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets` (precision, sizing, capacity, decode, layout). The reference hardware is
the 8-GPU HGX H100 node, as on the interconnect page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeVar

from snippets import fmt
from snippets.capacity import usable_bytes, weight_bytes
from snippets.data import Catalog, Node, Precision
from snippets.fmt import Claim, Figure
from snippets.layout import Layout, deployable_layout, tp_degrees
from snippets.pages.interconnect import sizing_fields
from snippets.precision import (
    bit_budget,
    max_finite,
    min_normal,
    min_subnormal,
    relative_step,
    replica_ceiling,
    replicas_per_node,
    shrink_factor,
)
from snippets.sizing import Sizing, size_on_node

NODE = "hgx-h100-8"
RESERVE = "runtime-reserve"
MODELS = {"m70": "llama-3.1-70b", "m405": "llama-3.1-405b"}
REFERENCE = "fp16"
FORMATS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the bytes-per-parameter table."""
SIZED = ("fp32", "fp16", "fp8", "int8", "int4", "int4-g128", "mxfp4", "nvfp4")
"""Rows of the GPU and decode tables (BF16 sizes exactly as FP16)."""
FLOATS = ("fp32", "bf16", "fp16", "fp8-e5m2", "fp8-e4m3", "mxfp4")
"""Rows of the range table; MXFP4 stands for its E2M1 element, which NVFP4 shares."""
COST_MODEL = "m70"

SOURCES = (
    ("accelerators", "h100-sxm"),
    ("interconnects", "hgx-h100-8"),
    ("models", "llama-3.1-70b"),
    ("models", "llama-3.1-405b"),
    ("precisions", "fp32"),
    ("precisions", "bf16"),
    ("precisions", "fp16"),
    ("precisions", "fp8"),
    ("precisions", "fp8-e4m3"),
    ("precisions", "fp8-e5m2"),
    ("precisions", "int8"),
    ("precisions", "int4"),
    ("precisions", "int4-g128"),
    ("precisions", "mxfp4"),
    ("precisions", "nvfp4"),
    ("assumptions", "runtime-reserve"),
)
"""The data entries this page's figures are computed from."""


T = TypeVar("T")


def need(x: T | None, what: str) -> T:
    """`x`, or a ValueError naming the format that lacks it (a range of a format with no float layout)."""
    if x is None:
        raise ValueError(f"{what}: the page needs a figure this format's data does not give")
    return x


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
    return fmt.quantity(x, "tokens/s", 0 if x >= 100 else 1, basis="upper bound, one sequence, weights only")


def _power_of_two(x: float) -> str:
    """2^-9 for 0.001953125, 0.5 for 2^-1: the small floats' limits are exact powers of two."""
    e = math.log2(x)
    if e != int(e):
        raise ValueError(f"{x!r} is not a power of two")
    return fmt.number(x, -int(e)) if e >= -3 else f"2^{int(e)}"


# --------------------------------------------------------------------------- formats

@dataclass(frozen=True)
class Format:
    """One number format, as figures."""

    name: str
    element_bits: Figure
    scale_bits: Figure
    """The group's scale spread over its weights, bits per weight."""
    zero_bits: Figure
    meta_bits: Figure
    """Scale plus zero point, bits per weight."""
    bits: Figure
    """All of it: bits per weight."""
    bytes: Figure
    shrink: Figure
    """Times fewer bytes than FP16."""
    overhead: Figure
    """Scale and zero point as a share of the element bits."""
    group: Figure | None
    scale_width: Figure | None
    zero_width: Figure | None
    scale_format: str
    exponent_bits: Figure | None
    mantissa_bits: Figure | None
    max: Figure | None
    min_normal: Figure | None
    min_subnormal: Figure | None
    step: Figure | None
    """Gap between neighbouring values, relative to the power of two below them, in percent."""
    step_pow2: Figure | None
    """The same gap as a power of two: 2^-3."""
    precision: Precision


def format_of(cat: Catalog, precision_id: str) -> Format:
    p = cat.precisions[precision_id]
    b = bit_budget(p)
    bs = p.block_scale
    lay = p.layout
    shrink = shrink_factor(p, cat.precisions[REFERENCE])
    return Format(
        name=p.name,
        element_bits=_bits(b.element),
        scale_bits=_bits(b.scale),
        zero_bits=_bits(b.zero_point),
        meta_bits=_bits(b.scale + b.zero_point),
        bits=_bits(b.total),
        bytes=fmt.quantity(b.total / 8, "bytes/weight", _digits(b.total / 8, 5)),
        shrink=fmt.ratio(shrink, _digits(shrink, 2),
                         basis=f"bytes per weight against {cat.precisions[REFERENCE].name}"),
        overhead=fmt.percent(b.overhead, _digits(b.overhead * 100, 1)),
        group=None if bs is None else fmt.count(bs.group_size, "weights"),
        scale_width=None if bs is None else fmt.quantity(bs.scale_width.value, "bits", 0),
        zero_width=None if bs is None or bs.zero_point_width is None
        else fmt.quantity(bs.zero_point_width.value, "bits", 0),
        scale_format="" if bs is None or bs.scale_format is None else bs.scale_format,
        exponent_bits=None if lay is None else fmt.count(lay.exponent_bits, "bits"),
        mantissa_bits=None if lay is None else fmt.count(lay.mantissa_bits, "bits"),
        max=None if lay is None else fmt.Figure(max_finite(lay), "", _sci(max_finite(lay))),
        min_normal=None if lay is None else fmt.Figure(min_normal(lay), "", _power_of_two(min_normal(lay))),
        min_subnormal=None if lay is None else fmt.Figure(min_subnormal(lay), "", _power_of_two(min_subnormal(lay))),
        step=None if lay is None else fmt.percent(relative_step(lay), _digits(relative_step(lay) * 100, 1)),
        step_pow2=None if lay is None else fmt.Figure(relative_step(lay), "", f"2^-{lay.mantissa_bits}"),
        precision=p,
    )


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
        f = format_of(cat, pid)
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
        f = format_of(cat, pid)
        label = "FP4 E2M1 (element of MXFP4 and NVFP4)" if pid == "mxfp4" else f.name
        rows.append([label, need(f.exponent_bits, f.name), need(f.mantissa_bits, f.name), need(f.max, f.name),
                     need(f.min_subnormal, f.name), need(f.step_pow2, f.name)])
    return fmt.table(
        "ranges",
        ["Format", "Exponent bits", "Mantissa bits", "Largest value", "Smallest value above zero",
         "Relative step between neighbours"],
        rows,
        align="lrrrrr",
    )


# --------------------------------------------------------------------------- model x precision

@dataclass(frozen=True)
class Row:
    """One model in one precision, as figures."""

    model: str
    precision: str
    params: Figure
    bytes_per_param: Figure
    weight: Figure
    gpus_exact: Figure
    gpus_weights: Figure
    gpus_exact_usable: Figure
    gpus: Figure
    nodes: Figure
    layout: str
    tp: Figure
    rented: Figure
    ceiling: Figure
    """Tokens/s ceiling of one sequence on the smallest deployable layout."""
    node_ceiling: Figure | None
    """Tokens/s ceiling of one sequence with the weights spread over one whole node; None if they do not fit."""
    replicas: Figure
    node_total: Figure
    """Replicas per node x ceiling per replica."""
    fits_node: Claim
    spans_nodes: Claim
    fits_one_gpu: Claim
    sizing: Sizing
    deployed: Layout


def row(cat: Catalog, model_id: str, precision_id: str) -> Row:
    s = size_on_node(cat, model_id, precision_id, NODE, RESERVE)
    node = cat.interconnect(NODE, Node)
    arch = cat.models[model_id].architecture
    hbm = cat.accelerators[node.accelerator].memory_bandwidth.bandwidth
    lay = deployable_layout(s.gpus_with_headroom, arch.attention_heads, arch.kv_heads, arch.layers, node.gpus)
    whole_node = s.fits_one_node and node.gpus in tp_degrees(arch.attention_heads, arch.kv_heads, node.gpus)
    per_replica = replica_ceiling(s.weight_bytes, hbm, lay.tp)
    reps = replicas_per_node(lay.gpus, node.gpus)
    return Row(
        model=cat.models[model_id].name,
        precision=cat.precisions[precision_id].name,
        bytes_per_param=fmt.quantity(s.bytes_per_param, "bytes/weight", _digits(s.bytes_per_param, 5)),
        **sizing_fields(s, weight=_gb(s.weight_bytes), digits=2),
        layout=lay.label,
        tp=fmt.count(lay.tp),
        rented=fmt.count(lay.gpus),
        ceiling=_tps(per_replica),
        node_ceiling=_tps(replica_ceiling(s.weight_bytes, hbm, node.gpus)) if whole_node else None,
        replicas=fmt.count(reps, "replicas"),
        node_total=_tps(reps * per_replica),
        deployed=lay,
    )


def _gpus(r: Row) -> str:
    return "GPU" if r.sizing.gpus_with_headroom == 1 else "GPUs"


def sizing_table(cat: Catalog, model: str) -> str:
    """One model in each precision: weights, GPUs weights-only and with headroom, layout, one node or not."""
    model_id = MODELS[model]
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        r = row(cat, model_id, pid)
        if r.sizing.fits_one_gpu:
            verdict = "Yes: a single GPU"
        elif r.sizing.fits_one_node:
            verdict = "Yes"
        else:
            verdict = f"No: {r.nodes.text} nodes"
        rows.append([r.precision, r.bytes_per_param, r.weight, r.gpus_exact, r.gpus_weights,
                     r.gpus_exact_usable, r.gpus, r.layout, verdict])
    return fmt.table(
        f"sizing_{model}",
        ["Precision", "Bytes per weight", "Weights", "Weights ÷ card", "GPUs, weights only",
         "Weights ÷ usable", "GPUs with headroom", "Deployable layout", "One 8-GPU node?"],
        rows,
        align="lrrrrrrll",
    )


def decode_table(cat: Catalog, model: str) -> str:
    """Bytes read per token and the decode ceiling on one whole node, for one model in each precision."""
    model_id = MODELS[model]
    node = cat.interconnect(NODE, Node)
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        r = row(cat, model_id, pid)
        f = format_of(cat, pid)
        on_node: fmt.Cell = r.node_ceiling if r.node_ceiling is not None else "does not fit in one node"
        rows.append([r.precision, r.weight, f.shrink, on_node, r.layout, r.ceiling])
    return fmt.table(
        f"decode_{model}",
        ["Precision", "Bytes read per token", "FP16 bytes ÷ these",
         f"Ceiling on one node (TP{node.gpus}), tokens/s", "Smallest layout", "Ceiling on it, tokens/s"],
        rows,
        align="lrrrlr",
    )


def cost_table(cat: Catalog, model: str = COST_MODEL) -> str:
    """Replicas of one model per node in each precision, and the node's summed decode ceiling."""
    model_id = MODELS[model]
    rows: list[list[fmt.Cell]] = []
    for pid in SIZED:
        r = row(cat, model_id, pid)
        rows.append([r.precision, r.layout, r.rented, r.replicas, r.ceiling, r.node_total])
    return fmt.table(
        f"cost_{model}",
        ["Precision", "Layout", "GPUs per replica", "Replicas per node", "Ceiling per replica, tokens/s",
         "Node, one sequence per replica, tokens/s"],
        rows,
        align="llrrrr",
    )


def worked_example(cat: Catalog) -> str:
    """Llama 3.1 70B from FP16 to INT4 with group scales, step by step, as Markdown with figure spans."""
    model_id = MODELS["m70"]
    a, b = row(cat, model_id, "fp16"), row(cat, model_id, "int4-g128")
    fa, fb = format_of(cat, "fp16"), format_of(cat, "int4-g128")
    budget = bit_budget(fb.precision)
    node = cat.interconnect(NODE, Node)
    acc = cat.accelerators[node.accelerator]
    hbm = acc.memory_bandwidth.bandwidth
    n = b.sizing.params
    element_only = weight_bytes(n, budget.element / 8)
    meta = weight_bytes(n, (budget.scale + budget.zero_point) / 8)
    same_gpus = replica_ceiling(b.sizing.weight_bytes, hbm, a.deployed.tp)
    usable = usable_bytes(acc.memory.bytes, cat.assumptions[RESERVE].value.fraction)
    group, scale_width = need(fb.group, fb.name), need(fb.scale_width, fb.name)
    zero_width = need(fb.zero_width, fb.name)
    h = fmt.fig_html
    lines = [
        f"1. **FP16.** {h(a.params, 'worked.params')} weights × {h(fa.bytes, 'worked.fp16_bytes')} bytes = "
        f"{h(a.weight, 'worked.fp16_weight')}.",
        f"2. **INT4 elements.** {h(fb.element_bits, 'worked.element_bits')} bits is "
        f"{h(fmt.quantity(budget.element / 8, 'bytes/weight', 1), 'worked.element_bytes')} byte per weight: "
        f"{h(_gb(element_only), 'worked.element_weight')} if nothing else were stored.",
        f"3. **Group metadata.** Every {h(group, 'worked.group')} weights share one "
        f"{fmt.escape_markdown(str(fb.scale_format))} scale "
        f"({h(scale_width, 'worked.scale_width')} bits) and one zero point "
        f"({h(zero_width, 'worked.zero_width')} bits): ({h(scale_width, 'worked.scale_width')} + "
        f"{h(zero_width, 'worked.zero_width')}) ÷ {h(group, 'worked.group')} = "
        f"{h(fb.meta_bits, 'worked.meta_bits')} bits per weight, another {h(_gb(meta), 'worked.meta_weight')}. "
        f"In all {h(fb.bits, 'worked.bits')} bits per weight and **{h(b.weight, 'worked.int4_weight')}**: "
        f"{h(fb.shrink, 'worked.shrink')} smaller than FP16, against "
        f"{h(format_of(cat, 'int4').shrink, 'worked.bare_shrink')} for the elements alone.",
        f"4. **GPUs.** With {h(_gb(usable), 'worked.usable')} usable per card, FP16 needs "
        f"{h(a.weight, 'worked.fp16_weight')} ÷ {h(_gb(usable), 'worked.usable')} = "
        f"{h(a.gpus_exact_usable, 'worked.fp16_exact')}, so **{h(a.gpus, 'worked.fp16_gpus')} {_gpus(a)}**, "
        f"deployed as {a.layout}; INT4 needs {h(b.gpus_exact_usable, 'worked.int4_exact')}, so "
        f"**{h(b.gpus, 'worked.int4_gpus')} {_gpus(b)}**, deployed as {b.layout}.",
        f"5. **Decode ceiling.** Each token reads every weight once, and the GPUs of a tensor-parallel layout "
        f"read their shares at the same time. FP16: {h(a.tp, 'worked.fp16_tp')} × "
        f"{h(fmt.bandwidth(hbm, 'TB/s', 2), 'worked.hbm')} ÷ {h(a.weight, 'worked.fp16_weight')} = "
        f"{h(a.ceiling, 'worked.fp16_ceiling')} tokens/s. INT4: {h(b.tp, 'worked.int4_tp')} × "
        f"{h(fmt.bandwidth(hbm, 'TB/s', 2), 'worked.hbm')} ÷ {h(b.weight, 'worked.int4_weight')} = "
        f"{h(b.ceiling, 'worked.int4_ceiling')} tokens/s, and on the same {h(a.tp, 'worked.fp16_tp')} GPUs "
        f"as FP16 it would be {h(_tps(same_gpus), 'worked.int4_same_gpus')} tokens/s, "
        f"{h(fb.shrink, 'worked.shrink')} the FP16 figure.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- namespace

def _model_rows(cat: Catalog, model_id: str) -> SimpleNamespace:
    return SimpleNamespace(**{key(p): row(cat, model_id, p) for p in SIZED})


def namespace(cat: Catalog) -> dict[str, Any]:
    """The names the page's `{{ ... }}` values and claims use."""
    node = cat.interconnect(NODE, Node)
    acc = cat.accelerators[node.accelerator]
    reserve = cat.assumptions[RESERVE]
    usable = usable_bytes(acc.memory.bytes, reserve.value.fraction)
    formats = {key(p): format_of(cat, p) for p in (*FORMATS, "fp8-e4m3", "fp8-e5m2")}
    models = {m: _model_rows(cat, mid) for m, mid in MODELS.items()}
    m70, m405 = models["m70"], models["m405"]
    f = SimpleNamespace(**formats)

    def total(pid: str) -> float:
        return bit_budget(cat.precisions[pid]).total

    # Decode on one whole node: ceiling x bytes read is the same for every precision that fits.
    on_node = [(r.sizing.weight_bytes, r.node_ceiling.value)
               for ns in models.values() for r in vars(ns).values() if r.node_ceiling is not None]
    products = [w * c for w, c in on_node]
    proportional = max(products) / min(products) - 1 < 1e-9
    # On the fewest GPUs, FP32, FP16 and INT8 70B all hit the same per-replica ceiling.
    fewest = [m70.fp32.ceiling.value, m70.fp16.ceiling.value, m70.int8.ceiling.value]
    same_speed = max(fewest) / min(fewest) - 1 < 1e-9
    cost = [r.node_total.value * r.sizing.bytes_per_param for r in vars(m70).values()]
    node_total_proportional = max(cost) / min(cost) - 1 < 1e-9

    e4m3, e5m2 = formats["fp8_e4m3"], formats["fp8_e5m2"]
    e4m3_max, e5m2_max = need(e4m3.max, e4m3.name), need(e5m2.max, e5m2.name)
    e4m3_step, e5m2_step = need(e4m3.step, e4m3.name), need(e5m2.step, e5m2.name)
    fp16_max, bf16_max = need(formats["fp16"].max, "FP16"), need(formats["bf16"].max, "BF16")
    int4_budget = bit_budget(cat.precisions["int4-g128"])
    scale_only = int4_budget.element + int4_budget.scale
    ordered = total("int4") < total("int4-g128") < total("mxfp4") < total("nvfp4")

    return {
        **formats,
        "f": f,
        **models,
        "gpu_name": acc.name,
        "node_name": node.name,
        "gpu_memory": fmt.nbytes(acc.memory.bytes, "GB"),
        "gpu_usable": fmt.nbytes(usable, "GB"),
        "reserve": fmt.percent(reserve.value.fraction, 1 if reserve.value.value % 1 else 0),
        "node_gpus": fmt.count(node.gpus),
        "hbm": fmt.bandwidth(acc.memory_bandwidth.bandwidth, "TB/s", 2),
        "int4_scale_only_bits": _bits(scale_only),
        "m405_scale_cost": _gb(m405.int4_g128.sizing.weight_bytes - m405.int4.sizing.weight_bytes),
        "m405_scale_cards": fmt.percent(
            (m405.int4_g128.sizing.weight_bytes - m405.int4.sizing.weight_bytes) / usable),
        "m70_first_single_gpu": next(r.precision for r in vars(m70).values() if r.sizing.fits_one_gpu),
        "m70_meta": _gb(m70.int4_g128.sizing.weight_bytes - m70.int4.sizing.weight_bytes),
        "e4m3_max": e4m3_max,
        "e5m2_max": e5m2_max,
        "e4m3_step": e4m3_step,
        "e5m2_step": e5m2_step,
        "e5m2_over_e4m3_range": fmt.ratio(e5m2_max.value / e4m3_max.value, 0, basis="largest values"),
        # Claims the prose makes.
        "bf16_same_bytes_as_fp16": fmt.claim(
            total("bf16") == total("fp16"), f"BF16 {total('bf16')} bits, FP16 {total('fp16')} bits"),
        "bf16_wider_than_fp16": fmt.claim(
            bf16_max.value > fp16_max.value, f"largest BF16 {bf16_max.text} > largest FP16 {fp16_max.text}"),
        "metadata_ordered": fmt.claim(
            ordered, f"INT4 {total('int4')} < INT4 g128 {total('int4-g128')} < MXFP4 {total('mxfp4')} "
                     f"< NVFP4 {total('nvfp4')} bits per weight"),
        "e4m3_finer_e5m2_wider": fmt.claim(
            e4m3_step.value < e5m2_step.value and e4m3_max.value < e5m2_max.value,
            f"steps {e4m3_step.text} < {e5m2_step.text}; largest {e4m3_max.text} < {e5m2_max.text}"),
        "m70_int4_one_gpu_either_way": fmt.claim(
            m70.int4.sizing.fits_one_gpu and m70.int4_g128.sizing.fits_one_gpu,
            f"{m70.int4.sizing.gpus_with_headroom} GPU bare, {m70.int4_g128.sizing.gpus_with_headroom} with scales"),
        "int8_halves_70b": fmt.claim(
            m70.int8.deployed.gpus * 2 == m70.fp16.deployed.gpus,
            f"{m70.int8.deployed.gpus} GPU(s) per replica in INT8, {m70.fp16.deployed.gpus} in FP16"),
        "m405_fp8_first_in_node": fmt.claim(
            not m405.fp16.sizing.fits_one_node and m405.fp8.sizing.fits_one_node,
            f"FP16 {m405.fp16.sizing.gpus_with_headroom} GPUs, FP8 {m405.fp8.sizing.gpus_with_headroom} GPUs, "
            f"{node.gpus} per node"),
        "ceiling_proportional": fmt.claim(
            proportional, f"ceiling × bytes read is the same within 1e-9 for {len(on_node)} rows"),
        "same_speed_on_fewest": fmt.claim(
            same_speed, "70B per-replica ceilings: " + ", ".join(f"{x:.2f}" for x in fewest) + " tokens/s"),
        "node_total_proportional": fmt.claim(
            node_total_proportional, "node ceiling × bytes per weight is the same for every precision of 70B"),
        "m70_fp32_fits_node": m70.fp32.fits_node,
    }
