"""The precision page's tables: formats and their ranges, and each model in each precision."""

from __future__ import annotations

from snippets.data import Catalog, required
from snippets.engine import Deployment, Layout, RefusedLayout
from snippets.engine.memory import stage_weights
from snippets.pages import units
from snippets.pages.precision.common import (
    COST_MODEL,
    FLOATS,
    FORMATS,
    MODELS,
    SIZED,
    Format,
    _digits,
    _gb,
    _tps,
)
from snippets.pages.scenario import Reference, reference
from snippets.render import fmt


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
    return stage_weights(s.model.architecture, s.precision, Layout(1))[0].embedding_bytes


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
