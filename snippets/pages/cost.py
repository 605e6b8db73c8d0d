"""Page model of "The cost of a token" (docs/cost.md).

Every deployment, throughput and latency on the page is the engine's (`snippets.engine` through
`snippets.pages.scenario.reference`, and `snippets.engine.timing.predict`); every price is the one
`data/prices.yaml` marks `site_uses`. What this module adds is the page's choices (the request shape,
the models, the shares of peak load shown) and one helper the engine lacks: `cheapest_layout`, which
tries every tensor-parallel degree inside one node and keeps the one with the lowest cost per output
token at its KV cache's maximum concurrency.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.calibration import fit_basis, rows, summary
from snippets.data import Catalog
from snippets.engine import Deployment, Layout
from snippets.engine.deployment import RefusedLayout
from snippets.engine.layout import tp_degrees
from snippets.engine.search import MAX_NODES, Point, at_scenario
from snippets.engine.specs import PriceSpec
from snippets.engine.timing import Prediction, predict
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.latency_target import config
from snippets.pages.scenario import Reference, reference
from snippets.pages.sources import original
from snippets.pages.units import price_of, tps, usd
from snippets.render import charts, fmt
from snippets.render.fmt import Figure

SCENARIO = "chat"
"""The page's request shape and latency target (data/scenarios.yaml): InferenceX's chat turn served to
AIConfigurator's default objective."""
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
WORKED = ("llama-3.1-70b", "fp8", "h100-sxm")
"""The worked example: the model and precision of the time model's calibration runs, on the scenario's GPU."""
SPLIT = ("llama-3.1-70b", "fp8", "h100-sxm", (2, 4, 8))
"""Replicas against a larger TP: one 8-GPU instance cut into TP2, TP4 or TP8 replicas."""
NIM_SWEEP = "nim180-llama33-70b-fp8-2xh100-in5000-out500-c"
"""The measured concurrency sweep whose plateau gives the latency-bound share of peak throughput."""
TTFT_BUDGET_S = 1.0
"""The page's budget for time to first token of an interactive service: one second."""
FLEET_SHARES = (0.5, 0.25)
"""Illustrative average loads of a fleet sized for its busiest hour: not measured, a sensitivity."""
SECONDS_PER_HOUR = 3600


# --------------------------------------------------------------------------- formatting

def usd_mtok(x: float, price: PriceSpec) -> Figure:
    """Dollars per million tokens: three decimals below a dollar, two above, the month of their price beside them."""
    return units.usd_mtok(x, price)


def ms(seconds: float) -> Figure:
    return fmt.quantity(seconds * 1e3, "ms", 0 if seconds >= 0.1 else 1, show_unit=True)


def gpu_label(name: str) -> str:
    """'NVIDIA H100 SXM' -> 'H100 SXM'; 'NVIDIA B200 (HGX B200)' -> 'B200'; 'AMD Instinct MI300X' -> 'MI300X'."""
    return units.gpu_label(name, units.VENDORS, bare=True)


# --------------------------------------------------------------------------- reading the engine

def at_shape(r: Reference, model: str, precision: str, accelerator: str, layout: Layout | None = None) -> Deployment:
    """`model` on `accelerator`'s node, its KV cache counted at the scenario's request length."""
    return r.deployment(model, precision, accelerator=accelerator, layout=layout, concurrency=1,
                        context_tokens=r.scenario.input_tokens + r.scenario.output_tokens)


def run(d: Deployment, concurrency: int) -> Prediction:
    sc = d.setting.scenario
    return predict(d, concurrency, sc.input_tokens, sc.output_tokens)


def target(r: Reference, model: str, precision: str, accelerator: str) -> Point | None:
    """The cheapest configuration meeting the scenario's latency target on `accelerator`'s node (the engine's search:
    any layout of up to eight nodes, aggregated or disaggregated); None where none meets it."""
    return at_scenario(r.eng, model, precision, SCENARIO, accelerator=accelerator, sweep=False).best


def target_cost(x: Point) -> float:
    c = x.usd_per_mtok
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def full(d: Deployment) -> Prediction:
    """The deployment with as many requests in flight as its KV cache holds at the page's request length."""
    return run(d, max(1, d.max_concurrency))


def out_cost(x: Prediction) -> float:
    c = x.usd_per_mtok_output
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def in_cost(x: Prediction) -> float:
    c = x.usd_per_mtok_input
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def cheapest_layout(r: Reference, model: str, precision: str, accelerator: str) -> Deployment:
    """The TP degree inside one node (no pipeline) with the lowest $ per output token at its KV maximum; the
    scenario policy's layout (pipeline stages across nodes) where no single node holds the model.

    A helper the engine lacks: its layout policies minimise GPUs, not cost per token."""
    base = at_shape(r, model, precision, accelerator)
    found: list[Deployment] = []
    for t in tp_degrees(base.setting.model.arch, base.setting.node.gpus):
        try:
            found.append(at_shape(r, model, precision, accelerator, Layout(t)))
        except RefusedLayout:
            continue
    return min(found or [base], key=lambda d: out_cost(full(d)))


def priced(r: Reference) -> list[str]:
    """The accelerators with a price the site uses, cheapest GPU-hour first."""
    return sorted(r.eng.prices, key=lambda a: r.eng.prices[a].usd_per_gpu_hour)


@dataclass(frozen=True)
class Row:
    d: Deployment
    one: Prediction
    most: Prediction
    at: Point | None
    """The cheapest configuration meeting the scenario's target."""

    @property
    def label(self) -> str:
        s = self.d.setting
        return f"{s.model.name} {s.precision.name} on {gpu_label(s.chip.name)}"


def grid(r: Reference) -> list[Row]:
    out = []
    for m in MODELS:
        for p in PRECISIONS:
            for a in priced(r):
                d = cheapest_layout(r, m, p, a)
                out.append(Row(d, run(d, 1), full(d), target(r, m, p, a)))
    return out


def page_grid(cat: Catalog) -> list[Row]:
    """The grid as the page computed it: the table, the chart and the prose read one computation."""
    return CostPage.of(original(cat))._grid


def nim_share(cat: Catalog) -> tuple[float, int, float, float]:
    """From the measured NIM sweep: the plateau (most output tokens/s of any concurrency), the highest concurrency
    whose TTFT stays within the budget, its throughput, and that throughput's share of the plateau."""
    sweep = {k: m for k, m in cat.measurements.items() if k.startswith(NIM_SWEEP)}
    top = cat.measurements[max(sweep, key=lambda k: sweep[k].output_tokens_per_s or 0.0)]
    plateau = top.output_tokens_per_s or 0.0
    ok = [k for k, m in sweep.items() if m.ttft_ms is not None and m.ttft_ms <= TTFT_BUDGET_S * 1e3 and m.concurrency]
    best = cat.measurements[max(ok, key=lambda k: sweep[k].concurrency or 0)]
    t = best.output_tokens_per_s or 0.0
    return plateau, best.concurrency or 0, t, t / plateau


# --------------------------------------------------------------------------- tables and chart

def cost_table(cat: Catalog) -> str:
    """$ per million output tokens by model x precision x priced accelerator: the cheapest configuration meeting the
    scenario's latency target, and for contrast one replica with its KV cache full (no target)."""
    body: list[list[fmt.Cell]] = []
    for row in page_grid(cat):
        pr = price_of(row.d)
        x = row.at
        at: list[fmt.Cell] = ["none meets it", "—", "—", "—"] if x is None else [
            config(x), fmt.count(x.gpus), ms(x.tpot_s), usd_mtok(target_cost(x), pr)]
        body.append([row.label, *at, usd_mtok(out_cost(row.most), pr), ms(row.most.tpot_s)])
    return fmt.table(
        "cost",
        ["Model, precision, GPU", "Cheapest meeting the target", "GPUs", "TPOT", "Output $/M at the target",
         "Output $/M, KV cache full", "ITL, KV cache full"],
        body, align="llrrrrr",
    )


def split_rows(cat: Catalog) -> list[tuple[Deployment, Prediction, Prediction]]:
    r = reference(cat, SCENARIO)
    m, p, a, tps_ = SPLIT
    out = []
    for t in tps_:
        d = at_shape(r, m, p, a, Layout(t))
        out.append((d, run(d, 1), full(d)))
    return out


def split_table(cat: Catalog) -> str:
    """One rented instance cut into replicas of growing TP: latency and cost at one request and at the KV maximum."""
    body: list[list[fmt.Cell]] = []
    for d, one, most in split_rows(cat):
        n = d.replicas_per_rental
        for what, x in (("one request each", one), ("most in flight", most)):
            body.append([
                f"{n} × {d.layout.label}, {what}",
                fmt.count(x.in_flight * n, "sequences"),
                tps(x.output_tokens_per_s * n),
                ms(x.ttft_s),
                ms(x.tpot_s),
                usd_mtok(out_cost(x), price_of(d)),
            ])
    return fmt.table(
        "split",
        ["Replicas, load", "In flight", "Output tokens/s", "TTFT", "ITL", "Output $/Mtok"],
        body, align="lrrrrr",
    )


def load_rows(cat: Catalog) -> list[tuple[str, float]]:
    _, _, _, share = nim_share(cat)
    return [("peak: the KV cache full", 1.0),
            (f"within a {TTFT_BUDGET_S:g} s first-token budget (measured NIM share)", share),
            *((f"fleet at {s:.0%} of peak (illustrative)", s) for s in FLEET_SHARES)]


def load_table(cat: Catalog) -> str:
    """The worked deployment's $ per million output tokens at shares of its peak throughput."""
    r = reference(cat, SCENARIO)
    d = cheapest_layout(r, *WORKED)
    x = full(d)
    body: list[list[fmt.Cell]] = []
    for label, s in load_rows(cat):
        body.append([label, fmt.percent(s, 0), tps(x.output_tokens_per_s * s), usd_mtok(out_cost(x) / s, price_of(d))])
    return fmt.table("load", ["Load", "Share of peak", "Output tokens/s", "Output $/Mtok"], body, align="lrrr")


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
    lines = [
        f"1. **The rent.** {e(w.gpu)} at {h(w.price, 'worked.price')} per GPU-hour, sold in units of "
        f"{h(w.unit, 'worked.unit')} GPUs: {h(w.rental_hour, 'worked.rental_hour')} an hour for the unit.",
        f"2. **The layout.** {e(w.model)} in {e(w.precision)} runs as **{w.layout}**, the TP degree with the "
        f"lowest cost per token in one node; the unit holds {h(w.replicas, 'worked.replicas')} replicas, so one "
        f"replica's share is {h(w.replica_hour, 'worked.replica_hour')} an hour.",
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
        f"{h(p.tpot_target, 'worked.tpot_target')} between tokens, the engine's search finds {e(p.w_at_config)} "
        f"the cheapest: {h(p.w_at_cost, 'worked.at_cost')} per million output tokens.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose

class Worked:

    def __init__(self, d: Deployment) -> None:
        s = d.setting
        if s.price is None:
            raise ValueError(f"{s.chip.name} has no price in data/prices.yaml")
        pr = s.price
        one, most = run(d, 1), full(d)
        self.model = s.model.name
        self.precision = s.precision.name
        self.gpu = s.chip.name
        self.layout = d.layout.label
        self.price = usd(pr.usd_per_gpu_hour, pr)
        self.unit = fmt.count(pr.gpus_per_unit, "GPUs")
        self.rental_hour = usd(pr.usd_per_gpu_hour * pr.gpus_per_unit, pr)
        self.replicas = fmt.count(d.replicas_per_rental, "replicas")
        self.replica_hour = usd(d.cost_per_replica_hour or 0.0, pr)
        self.most_in_flight = fmt.count(most.in_flight, "sequences")
        self.most_tps = tps(most.output_tokens_per_s)
        self.most_tph = fmt.quantity(most.output_tokens_per_s * SECONDS_PER_HOUR / 1e6, "Mtok/hour", 2)
        self.most_cost = usd_mtok(out_cost(most), pr)
        self.most_itl = ms(most.tpot_s)
        self.one_tps = tps(one.output_tokens_per_s)
        self.one_cost = usd_mtok(out_cost(one), pr)
        self.one_over_most = fmt.ratio(out_cost(one) / out_cost(most), 0, basis="$/Mtok at one request ÷ at the KV maximum")
        self.in_tps = tps(s.scenario.input_tokens / most.prefill_s)
        self.in_cost = usd_mtok(in_cost(most), pr)
        self.out_over_in = fmt.ratio(out_cost(most) / in_cost(most), 1, basis="output ÷ input $/Mtok, KV maximum")


class CostPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (price_table, worked_example, cost_table, cost_chart, split_table, load_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat, SCENARIO)
        sc = r.scenario
        if sc.ttft_s is None or sc.tpot_s is None:
            raise ValueError(f"scenario {sc.id} needs a latency target for the cost page")
        every = self._grid = grid(r)
        wd = cheapest_layout(r, *WORKED)
        w = Worked(wd)
        w_most = full(wd)
        w_at = next(x.at for x in every if (x.d.setting.model.id, x.d.setting.precision.id, x.d.setting.chip.id)
                    == WORKED)
        if w_at is None:
            raise ValueError("the worked example needs a configuration meeting the scenario's target")

        # replicas against a larger TP, on one rented instance
        sp = split_rows(cat)
        small, big = sp[0], sp[-1]
        sd, s1, sm = small
        bd, b1, bm = big
        s_cost, b_cost = out_cost(sm), out_cost(bm)

        # accelerators: the cheapest GPU-hour against the cheapest token, for the worked model at the target
        rows_ = [x for x in every if x.d.setting.model.id == WORKED[0] and x.d.setting.precision.id == WORKED[1]
                 and x.at is not None]
        by_acc = {x.d.setting.chip.id: x for x in rows_}
        at_of = {a: x.at for a, x in by_acc.items() if x.at is not None}
        cheap_hour = min(by_acc, key=lambda a: r.eng.prices[a].usd_per_gpu_hour)
        cheap_tok = min(by_acc, key=lambda a: target_cost(at_of[a]))
        ch, ct = by_acc[cheap_hour], by_acc[cheap_tok]
        h100, a100 = at_of["h100-sxm"], at_of["a100-80gb-sxm"]
        ps = {a: r.eng.prices[a] for a in by_acc}
        price = {a: ps[a].usd_per_gpu_hour for a in by_acc}
        tok = {a: target_cost(at_of[a]) for a in by_acc}
        # Pairs the hourly price ranks one way and the token price the other: the cheaper hour, the cheaper token.
        inverted = [(a, b) for a in by_acc for b in by_acc if price[a] < price[b] and tok[a] > tok[b]]
        inv_hour, inv_tok = max(inverted, key=lambda ab: tok[ab[0]] / tok[ab[1]]) if inverted else (cheap_hour, cheap_tok)
        met_8b = [x for x in every if x.d.setting.model.id == MODELS[0] and x.at is not None]
        cheapest_8b = min(met_8b, key=lambda x: target_cost(x.at) if x.at else 0.0)
        r405 = [x for x in every if x.d.setting.model.id == MODELS[-1]]
        pp405 = [x for x in r405 if x.d.layout.pp > 1]

        # utilization
        plateau, nim_c, nim_t, share = nim_share(cat)
        nim_first = next(m for k, m in cat.measurements.items() if k.startswith(NIM_SWEEP))
        nim_gpus, nim_acc = nim_first.gpu_count or 0, nim_first.accelerator
        # how well the time model predicts: on the rows its two factors are fitted on (NIM's), and on the test rows
        basis = fit_basis(cat)
        fit_source = {s.url.split("/")[2] for m in basis.values() for s in m.sources}
        cal = [r for r in rows(cat, "calibration") if r.measurement.config_from == "source"
               and {s.url.split("/")[2] for s in r.measurement.sources} <= fit_source]
        test = rows(cat, "test")
        cal_itl, cal_tput = summary(cal, "itl_ms"), summary(cal, "output_tokens_per_s")
        test_tput = summary(test, "output_tokens_per_s")
        if cal_itl is None or cal_tput is None or test_tput is None:
            raise ValueError("the page needs calibration and test rows with ITL and throughput")
        cal_accs = {m.accelerator for m in basis.values()}
        measured_accs = {m.accelerator for m in cat.measurements.values()}
        reads = sorted({p.read.isoformat() for p in cat.prices.values() if p.site_uses})

        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.context = fmt.count(sc.input_tokens + sc.output_tokens, "tokens")
        self.scenario = sc.name
        self.ttft_target = ms(sc.ttft_s)
        self.tpot_target = ms(sc.tpot_s)
        self.max_nodes = fmt.count(MAX_NODES, "nodes", show_unit=True)
        self.met_rows = fmt.count(sum(1 for x in every if x.at is not None), "rows")
        self.grid_rows = fmt.count(len(every), "rows")
        self.w_at_config = config(w_at)
        self.w_at_gpus = fmt.count(w_at.gpus)
        self.w_at_tpot = ms(w_at.tpot_s)
        self.w_at_ttft = ms(w_at.ttft_s)
        self.w_at_cost = usd_mtok(target_cost(w_at), price_of(wd))
        at_over_most = target_cost(w_at) / out_cost(w_most)
        self.w_at_ratio = fmt.ratio(at_over_most, 3, basis="$/Mtok at the target ÷ with the KV cache full")
        self.priced_count = fmt.count(len(r.eng.prices), "accelerators")
        self.price_read = reads[-1]
        self.w = w
        self.w_gpu_label = gpu_label(w.gpu)
        self.big_model = r.eng.models[MODELS[-1]].name
        # replicas against TP
        self.split_model = r.eng.models[SPLIT[0]].name
        self.split_precision = r.eng.precisions[SPLIT[1]].name
        self.split_gpus = fmt.count(sd.gpus_rented)
        self.small_layout = sd.layout.label
        self.big_layout = bd.layout.label
        self.small_n = fmt.count(sd.replicas_per_rental, "replicas")
        self.small_itl1 = ms(s1.tpot_s)
        self.big_itl1 = ms(b1.tpot_s)
        self.small_ttft1 = ms(s1.ttft_s)
        self.big_ttft1 = ms(b1.ttft_s)
        self.small_cost1 = usd_mtok(out_cost(s1), price_of(sd))
        self.big_cost1 = usd_mtok(out_cost(b1), price_of(bd))
        self.small_inflight = fmt.count(sm.in_flight * sd.replicas_per_rental, "sequences")
        self.big_inflight = fmt.count(bm.in_flight, "sequences")
        self.small_tps = tps(sm.output_tokens_per_s * sd.replicas_per_rental)
        self.big_tps = tps(bm.output_tokens_per_s)
        self.small_itl = ms(sm.tpot_s)
        self.big_itl = ms(bm.tpot_s)
        self.small_cost = usd_mtok(s_cost, price_of(sd))
        self.big_cost = usd_mtok(b_cost, price_of(bd))
        self.split_gap = fmt.percent(abs(s_cost / b_cost - 1), 0)
        self.big_itl1_gain = fmt.ratio(s1.tpot_s / b1.tpot_s, 1, basis="ITL of the small TP ÷ the large, one request")
        # accelerators
        self.cheap_hour_gpu = gpu_label(ch.d.setting.chip.name)
        self.cheap_hour_price = usd(price[cheap_hour], ps[cheap_hour])
        self.cheap_hour_cost = usd_mtok(tok[cheap_hour], ps[cheap_hour])
        self.cheap_tok_gpu = gpu_label(ct.d.setting.chip.name)
        self.cheap_tok_price = usd(price[cheap_tok], ps[cheap_tok])
        self.cheap_tok_cost = usd_mtok(tok[cheap_tok], ps[cheap_tok])
        self.cheap_tok_layout = config(at_of[cheap_tok])
        self.inv_hour_gpu = gpu_label(by_acc[inv_hour].d.setting.chip.name)
        self.inv_hour_price = usd(price[inv_hour], ps[inv_hour])
        self.inv_hour_cost = usd_mtok(tok[inv_hour], ps[inv_hour])
        self.inv_tok_gpu = gpu_label(by_acc[inv_tok].d.setting.chip.name)
        self.inv_tok_price = usd(price[inv_tok], ps[inv_tok])
        self.inv_tok_cost = usd_mtok(tok[inv_tok], ps[inv_tok])
        self.inv_gap = fmt.ratio(tok[inv_hour] / tok[inv_tok], 1,
                                 basis="$/Mtok of the cheaper hour ÷ the cheaper token, the most inverted pair")
        self.inverted_pairs = fmt.count(len(inverted), "pairs")
        self.h100_price = usd(price["h100-sxm"], ps["h100-sxm"])
        self.a100_price = usd(price["a100-80gb-sxm"], ps["a100-80gb-sxm"])
        self.h100_cost = usd_mtok(tok["h100-sxm"], ps["h100-sxm"])
        self.a100_cost = usd_mtok(tok["a100-80gb-sxm"], ps["a100-80gb-sxm"])
        self.h100_price_ratio = fmt.ratio(price["h100-sxm"] / price["a100-80gb-sxm"], 2, basis="H100 ÷ A100 $/GPU-hour")
        self.h100_tput_ratio = fmt.ratio(h100.output_tokens_per_s / h100.rented_gpus
                                         / (a100.output_tokens_per_s / a100.rented_gpus), 1,
                                         basis="H100 ÷ A100 output tokens/s per rented GPU, at the target")
        self.cheapest_8b = cheapest_8b.label
        assert cheapest_8b.at is not None  # noqa: S101 - filtered above
        self.cheapest_8b_cost = usd_mtok(target_cost(cheapest_8b.at), price_of(cheapest_8b.d))
        # load
        self.nim_plateau = tps(plateau)
        self.nim_gpus = fmt.count(nim_gpus)
        self.nim_gpu = gpu_label(cat.accelerators[nim_acc].name)
        self.nim_c = fmt.count(nim_c, "requests")
        self.nim_t = tps(nim_t)
        self.nim_share = fmt.percent(share, 0)
        self.ttft_budget = fmt.quantity(TTFT_BUDGET_S, "s", 0, show_unit=True)
        self.w_cost_nim = usd_mtok(out_cost(w_most) / share, price_of(wd))
        self.w_cost_half = usd_mtok(out_cost(w_most) / FLEET_SHARES[0], price_of(wd))
        self.fleet_half = fmt.percent(FLEET_SHARES[0], 0)
        # the time model
        self.cal_itl = fmt.percent(cal_itl[0])
        self.cal_tput = fmt.percent(cal_tput[0])
        self.test_tput = fmt.percent(test_tput[0])
        self.test_tput_worst = fmt.percent(test_tput[1])
        self.cal_gpus = fmt.count(len(cal_accs), "accelerators")
        unfitted = sorted(a for a in by_acc if a not in cal_accs)
        self.table_gpus = fmt.count(len(by_acc), "accelerators")
        # claims
        self.batching_pays = fmt.claim(out_cost(run(wd, 1)) > 10 * out_cost(w_most),
                                       f"${out_cost(run(wd, 1)):.2f} at one request > 10 × ${out_cost(w_most):.3f}")
        self.input_cheaper = fmt.claim(in_cost(w_most) < out_cost(w_most),
                                       f"input ${in_cost(w_most):.3f} < output ${out_cost(w_most):.3f} per Mtok")
        self.tp_faster_alone = fmt.claim(b1.tpot_s < s1.tpot_s and b1.ttft_s < s1.ttft_s,
                                         f"ITL {b1.tpot_s * 1e3:.1f} < {s1.tpot_s * 1e3:.1f} ms, "
                                         f"TTFT {b1.ttft_s * 1e3:.0f} < {s1.ttft_s * 1e3:.0f} ms")
        self.replicas_cheaper_alone = fmt.claim(out_cost(s1) < out_cost(b1),
                                                f"${out_cost(s1):.2f} < ${out_cost(b1):.2f} per Mtok at one request each")
        self.split_close_at_peak = fmt.claim(abs(s_cost / b_cost - 1) < 0.15,
                                             f"${s_cost:.3f} against ${b_cost:.3f} per Mtok at the KV maximum")
        self.big_holds_more = fmt.claim(bm.in_flight > sm.in_flight * sd.replicas_per_rental,
                                        f"{bm.in_flight} > {sd.replicas_per_rental} × {sm.in_flight} sequences")
        self.big_slower_full = fmt.claim(bm.tpot_s > sm.tpot_s,
                                         f"ITL {bm.tpot_s * 1e3:.1f} > {sm.tpot_s * 1e3:.1f} ms at the KV maximum")
        self.rank_differs = fmt.claim(bool(inverted),
                                      f"{inv_hour} ${price[inv_hour]:.2f}/GPU-hour, ${tok[inv_hour]:.3f}/Mtok; "
                                      f"{inv_tok} ${price[inv_tok]:.2f}, ${tok[inv_tok]:.3f}")
        self.h100_beats_a100 = fmt.claim(price["h100-sxm"] > price["a100-80gb-sxm"] and tok["h100-sxm"] < tok["a100-80gb-sxm"],
                                         f"${price['h100-sxm']:.2f} > ${price['a100-80gb-sxm']:.2f}/GPU-hour, "
                                         f"${tok['h100-sxm']:.3f} < ${tok['a100-80gb-sxm']:.3f}/Mtok")
        self.a100_weight_only = fmt.claim(by_acc["a100-80gb-sxm"].d.weight_only,
                                          f"A100 computes {by_acc['a100-80gb-sxm'].d.compute_format}")
        self.pp405 = fmt.claim(bool(pp405) and all(x.d.setting.precision.id == "bf16" for x in pp405),
                               "; ".join(f"{x.label}: {x.d.layout.label}" for x in pp405) or "none")
        self.latency_share_below_one = fmt.claim(0.5 < share < 1.0, f"{nim_t:.0f} ÷ {plateau:.0f} tokens/s")
        self.cal_several = fmt.claim(len(cal_accs) > 1, f"calibration accelerators: {sorted(cal_accs)}")
        self.table_fitted = fmt.claim(not unfitted, f"in the table, not fitted on: {unfitted}; fitted on "
                                      f"{sorted(cal_accs)}; measured {sorted(measured_accs)}")


namespace = CostPage.namespace_of
sources = CostPage.sources_of
