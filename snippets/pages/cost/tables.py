"""The cost page's tables, chart and worked example, each presenting the page model's one computation
(`CostPage.of`); `cost_table`, the whole grid, is printed by the reference page docs/reference/serving.md."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.pages import units
from snippets.pages.cost.common import (
    SCENARIO,
    WORKED,
    Row,
    cheapest_layout,
    full,
    gpu_label,
    in_node,
    load_rows,
    ms_banded,
    priced,
    split_rows,
    target_cost,
    ttft_banded,
)
from snippets.pages.cost.page import CostPage
from snippets.pages.scenario import reference
from snippets.pages.sources import original
from snippets.pages.units import mtok_banded, price_of, tps_banded, usd
from snippets.render import charts, fmt


def page_grid(cat: Catalog) -> list[Row]:
    """The grid as the page computed it: the table, the chart and the prose read one computation."""
    return CostPage.of(original(cat))._grid


def cost_table(cat: Catalog) -> str:
    """$ per million output tokens by model x precision x priced accelerator: the recommended configuration meeting
    the scenario's latency target (and the cheapest, where it differs: its mode, GPUs and how much less it costs),
    and for contrast one replica with its KV cache full (no target)."""
    body: list[list[fmt.Cell]] = []
    for row in page_grid(cat):
        pr = price_of(row.d)
        x, c = row.rec, row.at
        at: list[fmt.Cell] = ["none meets it", "—", "—", "—"]
        if x is not None and c is not None:
            parts = (*units.configuration(x.words).parts, *units.cheapest_aside(c.mode, c.gpus, row.saving))
            at = [fmt.Phrase(parts), fmt.count(x.gpus), ms_banded(x.prediction), units.point_mtok_banded(x)]
        body.append([row.label, *at, mtok_banded(row.most, pr), ms_banded(row.most)])
    return fmt.table(
        "cost",
        ["Model, precision, GPU", "Recommended meeting the target", "GPUs", "TPOT", "Output $/M at the target",
         "Output $/M, KV cache full", "ITL, KV cache full"],
        body, align="llrrrrr",
    )




def split_table(cat: Catalog) -> str:
    """One node's GPUs cut into replicas of growing TP: latency and cost at one request and at the KV maximum."""
    body: list[list[fmt.Cell]] = []
    for d, one, most in split_rows(cat):
        n = in_node(d)
        for what, x in (("one request each", one), ("most in flight", most)):
            body.append([
                f"{n} × {d.layout.label}, {what}",
                fmt.count(x.in_flight * n, "sequences"),
                tps_banded(x, n),
                ttft_banded(x),
                ms_banded(x),
                mtok_banded(x, price_of(d)),
            ])
    return fmt.table(
        "split",
        ["Replicas, load", "In flight", "Output", "TTFT", "ITL", "Output $/Mtok"],
        body, align="lrrrrr",
    )



def load_table(cat: Catalog) -> str:
    """The worked deployment's $ per million output tokens at shares of its peak throughput."""
    r = reference(cat, SCENARIO)
    d = cheapest_layout(r, *WORKED)
    x = full(d)
    body: list[list[fmt.Cell]] = []
    for label, s in load_rows(cat):
        body.append([label, fmt.percent(s, 0), tps_banded(x, s), mtok_banded(x, price_of(d), s)])
    return fmt.table("load", ["Load", "Share of peak", "Output", "Output $/Mtok"], body, align="lrrr")


def price_table(cat: Catalog) -> str:
    """The price the site uses for each priced accelerator: provider and tier, how it is bought, the date the price
    list was read and whether from the list itself or a dated transcription of it."""
    rows_: list[list[fmt.Cell]] = []
    r = reference(cat, SCENARIO)
    for a in priced(r):
        p = next(p for p in cat.prices.values() if p.accelerator == a and p.site_uses)
        provider = p.provider if p.tier is None else f"{p.provider}, {p.tier}"
        rows_.append([cat.accelerators[a].name, provider, p.offering, p.kind, usd(p.price.value, r.eng.prices[a]),
                      fmt.count(p.gpus_per_unit, "GPUs"), p.read.isoformat(),
                      "a dated transcription" if p.secondary else "the provider's page"])
    return fmt.table("prices", ["Accelerator", "Provider", "Offering", "Kind", "$/GPU-hour", "Rented in units of",
                                "Read", "Read from"], rows_, align="llllrrll")


def cost_chart(cat: Catalog) -> str:
    """$ per million output tokens at the scenario's target for the worked model, by accelerator and precision."""
    r = reference(cat, SCENARIO)
    m = WORKED[0]
    bars_: list[charts.Bar] = []
    rows_ = [x for x in page_grid(cat) if x.d.setting.model.id == m and x.at is not None]
    for row in sorted(rows_, key=lambda x: target_cost(x.at) if x.at else 0.0):
        s, at = row.d.setting, row.at
        assert at is not None  # noqa: S101 - filtered above
        bars_.append(charts.Bar(f"{gpu_label(s.chip.name)}, {s.precision.name}", target_cost(at)))
    name = r.eng.models[m].name
    sc = r.scenario
    months = sorted({r.eng.prices[a].as_of for a in priced(r)}, key=lambda m: (m[-4:], units.MONTH_ORDER[m[:3]]))
    words = (f"Predicted dollars per million output tokens of {name}, {sc.input_tokens:,} tokens in and "
             f"{sc.output_tokens:,} out, in the cheapest configuration whose first token comes within "
             f"{(sc.ttft_s or 0) * 1e3:,.0f} ms and each next one within {(sc.tpot_s or 0) * 1e3:,.0f} ms, on each "
             f"priced accelerator: from ${bars_[0].value:.3f} ({bars_[0].label}) to ${bars_[-1].value:.2f} "
             f"({bars_[-1].label}), at prices read in {' and '.join(months)}.")
    svg = charts.bars("cost-chart", bars_, "$ per million output tokens", f"{name}: cost per token at the target",
                      words)
    return charts.figure(svg, words)


def worked_example(cat: Catalog) -> str:
    """The worked deployment's cost per token, step by step, as Markdown with figure spans."""
    p = CostPage.of(cat)
    w = p.w
    h, e = fmt.fig_html, fmt.escape_markdown
    rent = (f"sold in units of {h(w.unit, 'worked.unit')} GPUs: {h(w.rental_hour, 'worked.rental_hour')} an hour "
            f"for the unit, which holds {h(w.replicas, 'worked.replicas')} replicas" if w.whole_units
            else "rented one GPU at a time")
    lines = [
        f"1. **The rent.** {e(w.gpu)} at {h(w.price, 'worked.price')} per GPU-hour, {rent}.",
        f"2. **The layout.** {e(w.model)} in {e(w.precision)} runs as **{w.layout}**, the TP degree with the "
        f"lowest cost per token in one node: a replica carries {h(w.replica_gpus, 'worked.replica_gpus')} rented "
        f"GPUs, {h(w.replica_hour, 'worked.replica_hour')} an hour.",
        f"3. **The load.** At {h(p.context, 'worked.context')} tokens a request, the replica's KV cache holds "
        f"{h(w.most_in_flight, 'worked.most_in_flight')} requests at once.",
        f"4. **The throughput.** The time model predicts {h(w.most_tps, 'worked.most_tps')} output tokens per second "
        f"for the replica with them all in flight: {h(w.most_tph, 'worked.most_tph')} million an hour.",
        f"5. **Dollars per million output tokens.** {h(w.replica_hour, 'worked.replica_hour')} ÷ "
        f"{h(w.most_tph, 'worked.most_tph')} = **{h(w.most_cost, 'worked.most_cost')}**.",
        f"6. **One request instead.** Alone, the replica makes {h(w.one_tps, 'worked.one_tps')} tokens per second: "
        f"{h(w.one_cost, 'worked.one_cost')} per million, {h(w.one_over_most, 'worked.one_over_most')} the price.",
        f"7. **Input tokens.** Prefill alone takes in {h(w.in_tps, 'worked.in_tps')} prompt tokens per second, "
        f"so a million of them cost {h(w.in_cost, 'worked.in_cost')} of rent.",
        f"8. **At the target.** Within {h(p.ttft_target, 'worked.ttft_target')} to the first token and "
        f"{h(p.tpot_target, 'worked.tpot_target')} between tokens, the engine's search finds "
        f"{p.w_at_config.markdown('worked.at_config')} the cheapest: {h(p.w_at_cost, 'worked.at_cost')} per "
        "million output tokens.",
    ]
    return "\n".join(lines) + "\n"


