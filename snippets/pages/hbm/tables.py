"""The HBM page's tables and its decode-ceiling chart: each row the engine's deployment."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.data.units import BYTE_UNITS
from snippets.engine import Deployment, Layout, UnsupportedFormat
from snippets.pages.hbm.common import (
    BATCHES,
    CHART_MODEL,
    CHART_PRECISION,
    FIT_ROWS,
    LEANER,
    MODELS,
    OLDER,
    PRECISIONS,
    SECONDS_PER_HOUR,
    WORKED,
    batch_ceiling,
    older_node,
    one_card,
    per_gpu_hour,
    weights_only_ceiling,
    weights_read,
)
from snippets.pages.scenario import reference
from snippets.pages.units import gpu_label, ms, tps, usd
from snippets.render import charts, fmt

# --------------------------------------------------------------------------- tables

def gpu_table(cat: Catalog) -> str:
    """Label and budgeted capacity (the runtime's total, or the label where none is published), bandwidth, and the
    time to read all of the budgeted memory once."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for chip_id in (OLDER, r.node.chip):
        chip, acc = r.eng.chips[chip_id], cat.accelerators[chip_id]
        rows.append([
            chip.name, acc.memory_type,
            fmt.nbytes(chip.label_bytes, "GB"),
            fmt.quantity(chip.capacity_bytes / BYTE_UNITS["MiB"], "MiB", 0),
            fmt.nbytes(chip.capacity_bytes, "GiB", 1),
            f"{acc.capacity_basis}'s total" if chip.capacity_reported else "the label (no runtime total published)",
            fmt.bandwidth(acc.memory_bandwidth.bandwidth, "GB/s"), acc.memory_bandwidth.bandwidth.direction.label,
            ms(chip.capacity_bytes / chip.hbm_bytes_per_s),
        ])
    return fmt.table(
        "gpus",
        ["GPU", "Memory", "Label", "Budgeted (MiB)", "Budgeted (GiB)", "Budgeted is", "Bandwidth", "Quoted as",
         "Read all of it once"],
        rows, align="llrrrlrlr",
    )


def ceiling_table(cat: Catalog) -> str:
    """The engine's deployment of each model x precision on each node, and its single-sequence ceilings."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for node_id in (older_node(r), r.node.id):
        for m in MODELS:
            for p in PRECISIONS:
                d = r.deployment(m, p, node=node_id)
                s = d.setting
                math_in = s.precision.tensor_format.upper()
                if d.weight_only:
                    math_in = f"{d.compute_format.upper()} (weight-only {s.precision.name})"
                cost = d.cost_per_replica_hour
                rows.append([
                    f"{s.model.name} {s.precision.name} on {gpu_label(s.chip)}",
                    fmt.nbytes(d.weight_bytes, "GB"),
                    d.layout.label,
                    fmt.nbytes(d.memory.weights, "GiB", 1),
                    math_in,
                    tps(weights_only_ceiling(d)),
                    tps(d.decode_ceiling),
                    per_gpu_hour(d.decode_ceiling, d.rented_gpus_per_replica),
                    "unpriced" if cost is None or s.price is None else usd(cost, s.price),
                ])
    return fmt.table(
        "ceiling",
        ["Model, precision, GPU", "Weights", "Layout", "Weights per GPU", "Matrix math in", "Weights only",
         "One sequence", "Per GPU-hour", "Per hour"],
        rows, align="lrlrlrrrr",
    )


def fits_table(cat: Catalog) -> str:
    """The worked model on one card of the scenario's GPU, by precision: what the pool must hold, and whether it does."""
    r = reference(cat)
    model = WORKED[0]
    rows: list[list[fmt.Cell]] = []
    for p in FIT_ROWS:
        d = r.deployment(model, p)
        mem = d.setting.memory(Layout(1))
        bits = d.setting.precision.bits_per_param
        rows.append([
            d.setting.precision.name,
            fmt.quantity(bits, "bits", 0 if bits == int(bits) else 3),
            fmt.nbytes(d.weight_bytes, "GB", 1),
            fmt.nbytes(mem.weights, "GiB", 1),
            fmt.nbytes(mem.used, "GiB", 1),
            fmt.nbytes(mem.pool, "GiB", 1),
            "Yes" if mem.fits else "No",
            d.layout.label,
        ])
    return fmt.table(
        "fits",
        ["Precision", "Bits per weight", "Weights", "Weights on one GPU", "Pool must hold", "Pool",
         "Fits one card?", "Layout chosen"],
        rows, align="lrrrrrll",
    )


def batch_rows(d: Deployment) -> list[int]:
    most = d.max_concurrency
    return sorted({b for b in (*BATCHES, most) if 1 <= b <= most} or {1})


def batch_table(cat: Catalog) -> str:
    """The leaner deployment at growing batch: bytes per step, ceilings, tokens per GPU-hour and per dollar."""
    r = reference(cat)
    d = r.deployment(*LEANER, layout=r.deployment(*WORKED).layout)
    cost = d.cost_per_replica_hour
    rows: list[list[fmt.Cell]] = []
    for b in batch_rows(d):
        t = batch_ceiling(d, b)
        rows.append([
            fmt.count(b, "sequences"),
            fmt.nbytes(d.decode_step_bytes(b) - weights_read(d), "GB", 1),
            fmt.nbytes(d.decode_step_bytes(b), "GB", 1),
            tps(t),
            tps(t / b),
            per_gpu_hour(t, d.rented_gpus_per_replica),
            "unpriced" if cost is None or d.setting.price is None else usd(cost / (t * SECONDS_PER_HOUR) * 1e6,
                                                                           d.setting.price),
        ])
    return fmt.table(
        "batch",
        ["Sequences", "KV cache read per GPU", "Bytes per step per GPU", "Replica ceiling", "Per sequence",
         "Per GPU-hour", "Per million tokens"],
        rows, align="rrrrrrr",
    )


def ceiling_chart(cat: Catalog) -> str:
    """The engine's single-sequence decode ceiling of a small model on one card of every accelerator in data/.

    Llama 3.1 8B in FP8 fits on one card of each, so the bars compare the cards' memory bandwidth:
    ceiling = HBM bandwidth ÷ (weights + one context's KV cache), as the engine reads them.
    """
    r = reference(cat)
    ds: list[Deployment] = []
    refused: list[str] = []
    for chip in r.eng.chips.values():
        try:
            ds.append(one_card(r, CHART_MODEL, CHART_PRECISION, chip))
        except UnsupportedFormat:  # the scenario's engine has no kernel for the format there (a kernel gap)
            refused.append(chip.name)
    rows = sorted(((d.setting.chip.name, d.decode_ceiling) for d in ds), key=lambda x: -x[1])
    d0 = ds[0]
    bars_ = [charts.Bar(name, tok) for name, tok in rows]
    left_out = (f" Not shown: the {', the '.join(refused)}, where the scenario's engine has no kernel for "
                f"{d0.setting.precision.name}." if refused else "")
    words = (
        f"Upper bound on tokens per second for one sequence of {d0.setting.model.name} in "
        f"{d0.setting.precision.name} ({d0.weight_bytes / 1e9:,.1f} GB of weights, embeddings and LM head unquantized, "
        f"and a {r.scenario.context_tokens:,}-token KV cache), memory bandwidth ÷ bytes per step, by accelerator: "
        f"from {rows[0][1]:,.0f} on the {rows[0][0]} to {rows[-1][1]:,.0f} on the {rows[-1][0]}.{left_out}"
    )
    svg = charts.bars("ceiling-chart", bars_, "tokens/s, one sequence (ceiling)",
                      "Decode ceiling by accelerator", words)
    return charts.figure(svg, words)
