"""The latency-target page's tables, charts and worked example: each reads the page model (`LatencyTargetPage.of`),
one computation of the engine's searches, and presents it."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine.serving import DisaggPrediction
from snippets.pages import units
from snippets.pages.latency_target.common import WORKED_GPU, cost, frontier_of, per_gpu_banded, usd_mtok
from snippets.pages.latency_target.page import LatencyTargetPage
from snippets.pages.reference_common import source_label
from snippets.pages.sources import original
from snippets.pages.units import ms
from snippets.render import charts, fmt


def worked_frontier_chart(cat: Catalog) -> str:
    """The worked GPU's frontier (`frontier_charts`), drawn in the page's text."""
    return _frontier_charts(cat, worked=True)


def other_frontier_charts(cat: Catalog) -> str:
    """The other accelerators' frontiers (`frontier_charts`), folded below the worked GPU's."""
    return _frontier_charts(cat, worked=False)


def _frontier_charts(cat: Catalog, *, worked: bool) -> str:
    """Throughput per GPU against interactivity for the worked model on the worked GPU (or on each other
    accelerator), aggregated against disaggregated: each mode's frontier among the points meeting the TTFT
    target."""
    p = LatencyTargetPage.of(original(cat))
    out = []
    for g in p._gpus:
        if (g.chip == WORKED_GPU) != worked:
            continue
        series = []
        for mode in ("aggregated", "disaggregated"):
            front = sorted(frontier_of(g.search, mode), key=lambda q: q.per_user)
            if front:
                series.append(charts.Series(mode, [(q.per_user, q.per_gpu) for q in front],
                                            tips=[f"{q.label}: {q.per_user:,.1f} tokens/s per user, "
                                                  f"{q.per_gpu:,.0f} tokens/s per GPU" for q in front]))
        words = (f"{p.model} in {p.precision} on {g.label}, {p.n_in.text} tokens in and {p.n_out.text} out, first "
                 f"token within {p.ttft_target.text}: the most output tokens per second per GPU at each "
                 f"interactivity, served aggregated and disaggregated. The cheapest point meeting a "
                 f"{p.tpot_target.text} TPOT: {(g.disagg if cost(g.disagg) < cost(g.agg) else g.agg).label}.")
        svg = charts.lines(f"frontier-{g.chip}", series, "tokens/s per user", "tokens/s per GPU",
                           f"{g.label}: throughput against interactivity", words, log_x=None, log_y=None)
        out.append(charts.figure(svg, words))
    return "\n".join(out)


def cheapest_table(cat: Catalog) -> str:
    """Per accelerator: the cheapest aggregated and disaggregated configurations meeting the target."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for g in p._gpus:
        for mode, pt in (("aggregated", g.agg), ("disaggregated", g.disagg)):
            z = pt.prediction
            rows.append([f"{g.label}, {mode}", units.configuration(pt.words), fmt.count(pt.gpus),
                         units.ttft_banded(z, 0), units.tpot_banded(z), per_gpu_banded(pt), usd_mtok(pt)])
    return fmt.table("cheapest", ["Accelerator, mode", "Configuration", "GPUs", "TTFT", "TPOT", "Per GPU",
                                  "$ per M output tokens"], rows, align="llrrrrr")


def ladder_table(cat: Catalog) -> str:
    """The cheapest configuration on the worked GPU as the TPOT target tightens."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for tpot, s in p._ladder:
        b = s.best
        label = f"{tpot * 1e3:,.0f} ms" if tpot >= 0.0095 else f"{tpot * 1e3:,.1f} ms"
        if b is None:
            assert s.why is not None  # noqa: S101 - a search without a best says why
            rows.append([label, "none meets it", "—", "—", "—"])
            continue
        rows.append([label, units.configuration(b.words), units.tpot_banded(b.prediction), usd_mtok(b),
                     fmt.ratio(cost(b) / p._loosest, 1, basis="$/Mtok ÷ at the loosest target")])
    # no column of tokens per GPU: on one GPU at one price the cost per token is its inverse, and the page stays short
    return fmt.table("ladder", ["TPOT target", "Cheapest configuration", "TPOT", "$ per M output tokens",
                                "× the loosest"], rows, align="llrrr")


def shapes_table(cat: Catalog) -> str:
    """Aggregated against disaggregated at three request shapes and targets, on the worked GPU."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for name, s, agg, dis in p._shapes:
        rows.append([name, fmt.count(s.input_tokens), fmt.count(s.output_tokens), ms(s.targets.ttft_s or 0, 0),
                     ms(s.targets.tpot_s or 0, 0), usd_mtok(agg),
                     usd_mtok(dis),
                     "—" if agg is None or dis is None else
                     fmt.ratio(dis.per_gpu / agg.per_gpu, 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")])
    return fmt.table("shapes", ["Scenario", "In", "Out", "TTFT target", "TPOT target", "Aggregated $/Mtok",
                                "Disaggregated $/Mtok", "Per-GPU gain"], rows, align="lrrrrrrr")


def speculation_table(cat: Catalog) -> str:
    """DeepSeek-V3 with and without its MTP module drafting, at loads from one request to the KV cache's limit."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for c, plain, spec in p._spec_rows:
        rows.append([fmt.count(c, "requests"), units.tpot_banded(plain), units.tpot_banded(spec),
                     fmt.ratio(spec.output_tokens_per_s / plain.output_tokens_per_s, 2,
                               basis="output tokens/s with MTP ÷ without")])
    # the throughputs themselves are left to the ratio: their ranges would crowd the page past its length
    return fmt.table("speculation", ["In flight", "TPOT", "TPOT, MTP", "Speed-up"], rows,
                     align="rrrr")


def comparisons_table(cat: Catalog) -> str:
    """Each published ratio of a mode beside the engine's, with the error."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for c in p._comparisons:
        m = c.measurement
        src = m.sources[0]
        gpus = "" if m.gpu_count is None else f"{m.gpu_count} × "
        load = "" if m.concurrency is None else f", {m.concurrency:,} in flight"
        run = f"{c.what}: {m.engine}, {p._names[m.model]}, {gpus}{p._names[m.accelerator]}{load}"
        bound = {"exact": "", "at-least": "at least ", "up-to": "up to "}[c.bound]
        published = fmt.Figure(c.measured, "x", f"{bound}{fmt.number(c.measured, 2)}×", c.what)
        link = fmt.link(source_label(m), src.url)
        if c.predicted is None:
            rows.append([run, link, published, "—", "—", c.basis])
            continue
        err: fmt.Cell = fmt.percent(c.error or 0.0, 0)
        if c.bound != "exact":
            err = "within the bound" if c.consistent else fmt.percent(c.error or 0.0, 0)
        rows.append([run, link, published, fmt.ratio(c.predicted, 2, basis=c.what), err, c.basis])
    return fmt.table("comparisons", ["Ratio and run", "Source", "Published", "Engine", "Error",
                                     "How the engine ran it"], rows, align="llrrrl")


def pd_table(cat: Catalog) -> str:
    """dstack's disaggregated runs (prefill and decode workers on one 8-GPU H200 node): measured and predicted."""
    p = LatencyTargetPage.of(original(cat))
    rows: list[list[fmt.Cell]] = []
    for r in p._pd_rows:
        z = r.prediction
        m = r.measurement
        if not isinstance(z, DisaggPrediction) or m.concurrency is None:
            continue
        label = (f"{z.prefill_workers}P{z.decode_workers}D, {m.input_tokens:,} in, {m.output_tokens:,} out, "
                 f"{m.concurrency:,} in flight")
        cells: list[fmt.Cell] = [label]
        for metric, unit in (("ttft_ms", "ms"), ("itl_ms", "ms"), ("output_tokens_per_s", "tokens/s")):
            measured, err = r.measured(metric), r.error(metric)
            cells += [fmt.quantity(measured or 0.0, unit, 0 if unit != "ms" or (measured or 0) >= 100 else 1),
                      fmt.quantity(r.predicted(metric), unit, 0 if unit != "ms" or r.predicted(metric) >= 100 else 1),
                      fmt.percent(err or 0.0, 0)]
        rows.append(cells)
    return fmt.table("pd", ["Workers, requests", "TTFT", "TTFT, engine", "TTFT error", "TPOT", "TPOT, engine",
                            "TPOT error", "Tokens/s", "Tokens/s, engine", "Tokens/s error"], rows, align="lrrrrrrrrr")


def worked_example(cat: Catalog) -> str:
    """How the TPOT target picks the point on the worked GPU, step by step, as Markdown with figure spans."""
    p = LatencyTargetPage.of(original(cat))
    w = p.w
    h = fmt.fig_html
    lines = [
        f"1. **Every configuration.** The search predicts {h(w.evaluated, 'w.evaluated')} points for "
        f"{fmt.escape_markdown(p.model)} on the {fmt.escape_markdown(w.gpu)}: {h(w.layouts, 'w.layouts')} layouts "
        f"at loads from one request to what each one's KV cache admits, aggregated and disaggregated.",
        f"2. **The TTFT target.** Points whose first token comes later than {h(p.ttft_target, 'ttft_target')} "
        f"are dropped; of the rest, {h(w.frontier, 'w.frontier')} are on the frontier, none beaten on both "
        f"throughput per GPU and interactivity.",
        f"3. **The TPOT target.** {h(p.tpot_target, 'tpot_target')} between tokens is "
        f"{h(w.interactivity, 'w.interactivity')} tokens a second for each user: the frontier's points to the "
        f"right of that line are fast enough, and the one with the most tokens per GPU among them is the "
        f"cheapest: **{w.config.markdown('w.config')}**, {h(w.gpus, 'w.gpus')} GPUs.",
        f"4. **What it gives.** A first token in {h(w.ttft, 'w.ttft')}, one every {h(w.tpot, 'w.tpot')} after it "
        f"({h(w.tpot_lo, 'w.tpot_lo')} to {h(w.tpot_hi, 'w.tpot_hi')}: {w.tpot_basis.markdown('w.tpot_basis')}), "
        f"{h(w.per_gpu, 'w.per_gpu')} output tokens per second per GPU.",
        f"5. **The price.** {h(w.rented, 'w.rented')} rented GPUs at {h(w.price, 'w.price')} an hour make "
        f"{h(w.tokens_per_hour, 'w.tokens_per_hour')} million output tokens an hour: "
        f"**{h(w.cost, 'w.cost')} per million**.",
    ]
    return "\n".join(lines) + "\n"

