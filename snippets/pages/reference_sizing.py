"""Page model of the sizing grid (docs/reference/sizing.md).

Every model x storage width x accelerator: weight bytes, GPUs for the weights alone and with the
runtime reserve (`snippets.sizing.size`), the deployable TP x PP layout
(`snippets.layout.deployable_layout`) inside the accelerator's node, whether it fits one node, and
the hourly cost of that layout at the indicative price (`snippets.prices`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from snippets import fmt
from snippets.data import Accelerator, Catalog, Model, Node, Precision
from snippets.layout import Layout, deployable_layout
from snippets.pages.reference_common import as_of, as_of_text
from snippets.prices import hourly_cost, site_price
from snippets.sizing import Sizing, size

RESERVE = "runtime-reserve"
PRECISIONS = ("bf16", "fp8", "int4")
"""One precision per storage width the site serves in: 16, 8 and 4 bits (FP16 and INT8 weigh the same)."""


def node_of(cat: Catalog, accelerator_id: str) -> Node | None:
    """The first node entry built from this accelerator, or None if data/ has none."""
    return next((n for n in cat.of_kind(Node).values() if n.accelerator == accelerator_id), None)


@dataclass(frozen=True)
class Cell:
    """One grid row's inputs and results."""

    model: Model
    precision: Precision
    accelerator: Accelerator
    node: Node | None
    sizing: Sizing
    layout: Layout | None
    cost: float | None


def cell(cat: Catalog, model_id: str, precision_id: str, accelerator_id: str) -> Cell:
    """Size one model in one precision on one accelerator, inside its node where data/ has one."""
    m, p, acc = cat.models[model_id], cat.precisions[precision_id], cat.accelerators[accelerator_id]
    node = node_of(cat, accelerator_id)
    per_node = node.gpus if node is not None else 1  # no node: node-dependent results are not shown
    s = size(m, p, acc, cat.assumptions[RESERVE].value.fraction, per_node)
    layout = None
    if node is not None:
        a = m.architecture
        try:
            layout = deployable_layout(s.gpus_with_headroom, a.attention_heads, a.kv_heads, a.layers, node.gpus)
        except ValueError:
            layout = None
    price = site_price(cat, accelerator_id)
    cost = None
    if price is not None and layout is not None:
        cost = hourly_cost(layout.gpus, price.price.value)
    return Cell(m, p, acc, node, s, layout, cost)


def grid_rows(cat: Catalog) -> list[Cell]:
    return [cell(cat, m, p, a) for m in cat.models for p in PRECISIONS for a in cat.accelerators]


def grid_table(cat: Catalog) -> str:
    """The whole grid as one HTML table, wrapped for the page's sort-and-filter script."""
    rows: list[list[fmt.Cell]] = []
    for c in grid_rows(cat):
        s = c.sizing
        if c.node is None:
            fits: fmt.Cell = "no node in data"
        elif s.fits_one_node:
            fits = "yes"
        else:
            fits = f"no: {fmt.number(s.nodes)} nodes"
        layout: fmt.Cell = "—" if c.layout is None else c.layout.label
        lgpus: fmt.Cell = "—" if c.layout is None else fmt.count(c.layout.gpus)
        cost: fmt.Cell = "no price" if c.cost is None else fmt.Figure(c.cost, "USD/hour", f"${c.cost:,.2f}",
                                                                       "indicative on-demand")
        rows.append([
            f"{c.model.name} · {c.precision.name} · {c.accelerator.name}",
            c.model.name, c.precision.name, c.accelerator.name,
            fmt.nbytes(s.weight_bytes, "GB"),
            fmt.count(s.gpus_weights_only),
            fmt.count(s.gpus_with_headroom),
            layout, lgpus, fits, cost,
        ])
    table = fmt.html_table(
        "grid",
        ["Row", "Model", "Precision", "Accelerator", "Weights", "GPUs, weights only", "GPUs with headroom",
         "Layout", "Layout GPUs", "One node?", "Cost per hour"],
        rows,
        align="lllllrrlrlr",
    )
    # HTML, not Markdown: the page's block sets html="true", so the grid's cells skip the Markdown
    # pass. The grid is left out of the search index (data-search-exclude): thousands of figures
    # would double the index every reader downloads, and the page's prose is indexed.
    filt = ('<p><label>Filter rows: <input type="search" id="sa-grid-filter" '
            'placeholder="e.g. 405B FP8 H100"></label> <span id="sa-grid-count"></span></p>')
    dated = as_of_text([*cat.models.values(), *cat.accelerators.values(), *cat.prices.values(),
                        cat.assumptions[RESERVE]])
    return (filt + '\n<div class="sa-grid" data-search-exclude>\n' + table + "</div>\n"
            + '<script src="../sizing-grid.js"></script>\n'
            + f"<p><em>{html.escape(dated)}</em></p>\n")


def prices_table(cat: Catalog) -> str:
    """Every recorded price: provider, offering, $/GPU-hour, which one the grid uses, source and date."""
    from snippets.pages.reference_common import source_links

    rows: list[list[fmt.Cell]] = []
    for p in cat.prices.values():
        rows.append([f"{cat.accelerators[p.accelerator].name} at {p.provider}", p.offering,
                     fmt.Figure(p.price.value, "USD/GPU-hour", f"${p.price.value:,.2f}", "indicative on-demand"),
                     "yes" if p.site_uses else "", source_links(p)])
    return fmt.table("prices", ["Accelerator and provider", "Offering", "Per GPU-hour (indicative)", "Grid uses",
                                "Source"], rows, align="llrll") + as_of(cat.prices.values())


def namespace(cat: Catalog) -> dict[str, Any]:
    """Names the page's prose uses."""
    reserve = cat.assumptions[RESERVE]
    cells = grid_rows(cat)
    ex = cell(cat, "llama-3.1-405b", "fp8", "h100-sxm")
    if ex.layout is None or ex.cost is None or ex.node is None:
        raise ValueError("the worked sizing-grid example needs a layout, a node and a price")
    return {
        "rows": fmt.count(len(cells), "rows"),
        "models": fmt.count(len(cat.models), "models"),
        "precisions": fmt.count(len(PRECISIONS), "precisions"),
        "accelerators": fmt.count(len(cat.accelerators), "accelerators"),
        "reserve": fmt.percent(reserve.value.fraction, 1 if reserve.value.value % 1 else 0),
        "ex_model": ex.model.name,
        "ex_precision": ex.precision.name,
        "ex_gpu": ex.accelerator.name,
        "ex_weight": fmt.nbytes(ex.sizing.weight_bytes, "GB"),
        "ex_gpus": fmt.count(ex.sizing.gpus_with_headroom),
        "ex_layout": ex.layout.label,
        "ex_layout_gpus": fmt.count(ex.layout.gpus),
        "ex_cost": fmt.Figure(ex.cost, "USD/hour", f"${ex.cost:,.2f}", "indicative on-demand"),
        "ex_node_gpus": fmt.count(ex.node.gpus),
        "ex_fits": fmt.claim(ex.sizing.fits_one_node,
                             f"{ex.sizing.gpus_with_headroom} GPUs needed, {ex.node.gpus} per node"),
    }
