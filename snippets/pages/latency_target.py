"""Page model of "Serving to a latency target" (docs/latency-target.md).

Every configuration, time, throughput and price on the page is the engine's search (`snippets.engine.search`:
`at_scenario`, the frontier and the cheapest point meeting a scenario's target) or its serving layer
(`snippets.engine.serving.predict` with speculative decoding or a prefix hit); every target and request shape is
a scenario of `data/scenarios.yaml`, every price the one `data/prices.yaml` marks `site_uses`, the MTP module's
acceptance rate DeepSeek's (`data/models.yaml`). What this module adds are the page's choices: the model, the
accelerators, the ladder of TPOT targets, the loads of the speculative-decoding table.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from statistics import mean as statistics_mean
from statistics import median

from snippets.calibration import predict_rows
from snippets.comparisons import Comparison, comparisons
from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.search import Point, Search, at_scenario, pareto
from snippets.engine.serving import DisaggPrediction, Prediction, Speculation, predict
from snippets.engine.specs import PriceSpec
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.reference_predictions import source_label
from snippets.pages.sources import original
from snippets.pages.units import ms
from snippets.render import charts, fmt
from snippets.render.fmt import Figure

MODEL, PRECISION = "llama-3.1-70b", "fp8"
"""The worked model: the site's, in the precision of the time model's calibration runs."""
ACCELERATORS = ("h100-sxm", "h200-sxm", "b200", "mi300x")
SHAPE = "chat"
"""The frontier's request shape and target: InferenceX's chat-length shape, AIConfigurator's default objective."""
LONG, STRICT = "long-prompt", "interactive"
"""Where disaggregation is put to the test: InferenceX's long prompts, and AIConfigurator's strict objective."""
WORKED_GPU = "h100-sxm"
LADDER = (2.0, 1.5, 1.0, 2 / 3, 1 / 2, 1 / 3, 1 / 4)
"""TPOT targets of the tightening table, as multiples of the scenario's: a sensitivity, not a source's tiers."""
RATE = 50.0
"""Requests per second of the quiz's capacity problem (a page choice)."""
SPEC = ("deepseek-v3", "fp8-block", "h200-sxm", Layout(8))
"""DeepSeek-V3 as shipped, as SGLang documents serving it on one H200 node (data/deployments.yaml)."""
SPEC_LOADS = (1, 4, 16, 64, 256)
"""Requests in flight of the speculative-decoding table; the last row is the most the KV cache admits."""
SPEC_SHAPE = (1000, 1000)
"""Tokens in and out of the speculative-decoding table (a page choice: a chat turn)."""
PREFIX = (3200, 800, 0.625, 10, 64)
"""The prefix-caching example: dstack's shared-prefix workload (prompts, tokens out, the share of each prompt that
repeats, distinct prefixes, requests in flight; data/measurements.yaml), on the worked model and GPU."""


def mtok(p: Point) -> Figure:
    """A point's dollars per million output tokens, dated by the price it rests on."""
    return units.usd_mtok(cost(p), units.price_of(p.deployment))


def usd_mtok(p: Point | None) -> Figure | str:
    return "no price" if p is None or p.usd_per_mtok is None else mtok(p)


def per_gpu(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s/GPU", 0 if x >= 100 else 1)


def per_user(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 1)


def gpu_label(chip_name: str) -> str:
    return units.gpu_label(chip_name, units.VENDORS, bare=True)


def config(p: Point) -> str:
    """A point's configuration in words: the layout and load, or each pool's workers and layout."""
    z = p.prediction
    if isinstance(z, Prediction):
        return f"{p.layout.label} at {z.in_flight:,} in flight"
    assert p.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
    return (f"{z.prefill_workers} × {p.prefill_layout.label} prefill, {z.decode_workers} × {p.layout.label} "
            f"decode at {z.decode.batch:,}")


def best_of(s: Search, mode: str) -> Point | None:
    """The cheapest point of one mode meeting the search's targets."""
    ok = [p for p in s.points if p.mode == mode and s.targets.met(p.ttft_s, p.tpot_s)]
    return min(ok, key=lambda p: (p.gpu_hours_per_mtok, p.gpus), default=None)


def frontier_of(s: Search, mode: str) -> list[Point]:
    """One mode's frontier among the points meeting the TTFT target."""
    return pareto(p for p in s.points if p.mode == mode and s.targets.ttft_met(p.ttft_s))


def cost(p: Point | None) -> float:
    if p is None or p.usd_per_mtok is None:
        raise ValueError("the page needs a priced configuration meeting its target")
    return p.usd_per_mtok


@dataclass(frozen=True)
class Gpu:
    """One accelerator's search at the frontier's shape and target."""

    chip: str
    label: str
    search: Search
    agg: Point
    disagg: Point


# --------------------------------------------------------------------------- tables and charts


def frontier_charts(cat: Catalog) -> str:
    """Throughput per GPU against interactivity for the worked model on each accelerator, aggregated against
    disaggregated: each mode's frontier among the points meeting the TTFT target."""
    p = LatencyTargetPage.of(original(cat))
    out = []
    for g in p._gpus:
        series = []
        for mode in ("aggregated", "disaggregated"):
            front = sorted(frontier_of(g.search, mode), key=lambda q: q.per_user)
            if front:
                series.append(charts.Series(mode, [(q.per_user, q.per_gpu) for q in front],
                                            tips=[f"{config(q)}: {q.per_user:,.1f} tokens/s per user, "
                                                  f"{q.per_gpu:,.0f} tokens/s per GPU" for q in front]))
        words = (f"{p.model} in {p.precision} on {g.label}, {p.n_in.text} tokens in and {p.n_out.text} out, first "
                 f"token within {p.ttft_target.text}: the most output tokens per second per GPU at each "
                 f"interactivity, served aggregated and disaggregated. The cheapest point meeting a "
                 f"{p.tpot_target.text} TPOT: {config(g.disagg if cost(g.disagg) < cost(g.agg) else g.agg)}.")
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
            rows.append([f"{g.label}, {mode}", config(pt), fmt.count(pt.gpus), ms(pt.ttft_s, 0), ms(pt.tpot_s),
                         per_gpu(pt.per_gpu), usd_mtok(pt)])
    return fmt.table("cheapest", ["Accelerator, mode", "Configuration", "GPUs", "TTFT", "TPOT", "Tokens/s per GPU",
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
            rows.append([label, "none meets it", "—", "—", "—", "—"])
            continue
        rows.append([label, f"{b.mode}: {config(b)}", ms(b.tpot_s), per_gpu(b.per_gpu), usd_mtok(b),
                     fmt.ratio(cost(b) / p._loosest, 1, basis="$/Mtok ÷ at the loosest target")])
    return fmt.table("ladder", ["TPOT target", "Cheapest configuration", "TPOT", "Tokens/s per GPU",
                                "$ per M output tokens", "× the loosest"], rows, align="llrrrr")


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
        rows.append([fmt.count(c, "requests"), ms(plain.tpot_s), ms(spec.tpot_s),
                     units.tps(plain.output_tokens_per_s), units.tps(spec.output_tokens_per_s),
                     fmt.ratio(spec.output_tokens_per_s / plain.output_tokens_per_s, 2,
                               basis="output tokens/s with MTP ÷ without")])
    return fmt.table("speculation", ["In flight", "TPOT", "TPOT, MTP", "Tokens/s", "Tokens/s, MTP", "Speed-up"], rows,
                     align="rrrrrr")


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
        f"cheapest: **{fmt.escape_markdown(w.config)}**, {h(w.gpus, 'w.gpus')} GPUs.",
        f"4. **What it gives.** A first token in {h(w.ttft, 'w.ttft')}, one every {h(w.tpot, 'w.tpot')} after it "
        f"({h(w.tpot_lo, 'w.tpot_lo')} to {h(w.tpot_hi, 'w.tpot_hi')}, the range in which measurements of this "
        f"regime fell), {h(w.per_gpu, 'w.per_gpu')} output tokens per second per GPU.",
        f"5. **The price.** {h(w.rented, 'w.rented')} rented GPUs at {h(w.price, 'w.price')} an hour make "
        f"{h(w.tokens_per_hour, 'w.tokens_per_hour')} million output tokens an hour: "
        f"**{h(w.cost, 'w.cost')} per million**.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose


class Worked:
    """The worked example: the cheapest point on the worked GPU at the frontier's target."""

    def __init__(self, g: Gpu, pr: PriceSpec) -> None:
        s = g.search
        b = s.best
        if b is None:
            raise ValueError("the worked example needs a configuration meeting the target")
        self.gpu = s.setting.chip.name
        self.evaluated = fmt.count(len(s.points), "points")
        self.layouts = fmt.count(len(s.layouts), "layouts")
        self.frontier = fmt.count(len(s.frontier), "points")
        self.interactivity = per_user(1 / (s.targets.tpot_s or 1.0))
        self.config = f"{b.mode}, {config(b)}"
        self.mode = b.mode
        self.gpus = fmt.count(b.gpus)
        self.ttft = ms(b.ttft_s, 0)
        self.tpot = ms(b.tpot_s)
        lo, hi = b.prediction.tpot_range
        self.tpot_lo, self.tpot_hi = ms(lo), ms(hi)
        self.per_gpu = per_gpu(b.per_gpu)
        self.rented = fmt.quantity(b.rented_gpus, "GPUs", 0)
        price = pr.usd_per_gpu_hour
        self.price = units.usd_gpu_hour(pr)
        self.tokens_per_hour = fmt.quantity(b.output_tokens_per_s * 3600 / 1e6, "Mtok/hour", 2)
        c = cost(b)
        self.cost = mtok(b)
        self.cost_check = fmt.claim(abs(c - b.rented_gpus * price / (b.output_tokens_per_s * 3600) * 1e6) < 1e-9,
                                    f"{b.rented_gpus:g} x ${price} / {b.output_tokens_per_s * 3600 / 1e6:.3f} Mtok")


class LatencyTargetPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (frontier_charts, cheapest_table, worked_example, ladder_table, shapes_table, speculation_table,
             comparisons_table, pd_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = self.reference(SHAPE)
        eng = r.eng
        sc = r.scenario
        self.model = eng.models[MODEL].name
        self.precision = eng.precisions[PRECISION].name
        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        if sc.ttft_s is None or sc.tpot_s is None:
            raise ValueError(f"scenario {sc.id} needs a latency target")
        self.ttft_target = ms(sc.ttft_s, 0)
        self.tpot_target = ms(sc.tpot_s, 0)
        self.target_interactivity = per_user(1 / sc.tpot_s)
        self.scenario = sc.name

        # ------------------------------------------------ the frontier on four accelerators
        gpus = []
        for a in ACCELERATORS:
            s = at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=a)
            agg, dis = best_of(s, "aggregated"), best_of(s, "disaggregated")
            if agg is None or dis is None:
                raise ValueError(f"{a}: the page needs both modes to meet the target")
            gpus.append(Gpu(a, gpu_label(s.setting.chip.name), s, agg, dis))
        self._gpus = gpus
        self.gpu_count = fmt.count(len(gpus), "accelerators")
        self.points_total = fmt.count(sum(len(g.search.points) for g in gpus), "points")
        worked = next(g for g in gpus if g.chip == WORKED_GPU)
        self.w = Worked(worked, r.eng.prices[WORKED_GPU])
        self.worked_gpu = worked.label
        gains = {g.chip: g.disagg.per_gpu / g.agg.per_gpu for g in gpus}
        cheapest = min(gpus, key=lambda g: min(cost(g.agg), cost(g.disagg)))
        self.cheapest_gpu = cheapest.label
        self.cheapest_cost = mtok(min(cheapest.agg, cheapest.disagg, key=cost))
        self.gain_low = fmt.ratio(min(gains.values()), 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")
        self.gain_high = fmt.ratio(max(gains.values()), 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")
        self.disagg_everywhere = fmt.claim(all(v > 1 for v in gains.values()),
                                           "; ".join(f"{k} {v:.2f}x" for k, v in gains.items()))
        self.agg_ttft = ms(worked.agg.ttft_s, 0)
        self.disagg_ttft = ms(worked.disagg.ttft_s, 0)
        self.disagg_ttft_longer = fmt.claim(worked.disagg.ttft_s > worked.agg.ttft_s,
                                            f"{worked.disagg.ttft_s * 1e3:.0f} > {worked.agg.ttft_s * 1e3:.0f} ms")
        xfer = worked.disagg.prediction
        self.transfer = ms(getattr(xfer, "transfer_s", 0.0), 2)
        self.transfer_link = getattr(getattr(xfer, "link", None), "name", "")

        # ------------------------------------------------ tightening the TPOT target
        ladder = []
        for k in LADDER:
            tpot = sc.tpot_s * k
            ladder.append((tpot, at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=WORKED_GPU,
                                             tpot_ms=tpot * 1e3, sweep=False)))
        self._ladder = ladder
        met = [(t, s.best) for t, s in ladder if s.best is not None]
        self._loosest = cost(met[0][1])
        costs = [cost(b) for _, b in met]
        self.ladder_monotone = fmt.claim(all(b >= a for a, b in pairwise(costs)),
                                         " <= ".join(f"${c:.4f}" for c in costs))
        default = next(s.best for t, s in ladder if abs(t - sc.tpot_s) < 1e-12)
        tight_t, tight = met[-1]
        self.tight_target = ms(tight_t, 1 if tight_t < 0.0095 else 0)
        self.tight_cost = mtok(tight)
        self.tight_over_default = fmt.ratio(cost(tight) / cost(default), 1,
                                            basis="$/Mtok at the tightest target met ÷ at the scenario's")
        self.tight_config = config(tight)
        misses = [(t, s) for t, s in ladder if s.best is None]
        self.some_miss = fmt.claim(bool(misses), f"{len(misses)} of {len(ladder)} targets unmet")
        if misses:
            t_miss, s_miss = misses[0]
            assert s_miss.why is not None  # noqa: S101 - a search without a best says why
            self.miss_target = ms(t_miss, 1)
            self.miss_closest = ms((s_miss.why.closest or 0) / 1e3, 1)
            self.miss_binding = fmt.claim(s_miss.why.binding == "tpot_ms", s_miss.why.text)

        # ------------------------------------------------ when disaggregation pays
        shapes = []
        for name in (SHAPE, LONG, STRICT):
            s = at_scenario(eng, MODEL, PRECISION, name, accelerator=WORKED_GPU, sweep=False)
            shapes.append((eng.scenarios[name].name, s, best_of(s, "aggregated"), best_of(s, "disaggregated")))
        self._shapes = shapes
        gain = {n: (d.per_gpu / a.per_gpu if a and d else 0.0) for n, _, a, d in shapes}
        chat_g, long_g, strict_g = (gain[eng.scenarios[n].name] for n in (SHAPE, LONG, STRICT))
        self.gain_chat = fmt.ratio(chat_g, 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")
        self.gain_long = fmt.ratio(long_g, 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")
        self.gain_strict = fmt.ratio(strict_g, 2, basis="tokens/s per GPU, disaggregated ÷ aggregated")
        self.strict_pays_most = fmt.claim(strict_g > max(chat_g, long_g),
                                          f"{strict_g:.2f} > {chat_g:.2f}, {long_g:.2f}")
        self.long_pays_more = fmt.claim(long_g > chat_g, f"{long_g:.2f} > {chat_g:.2f}")
        strict = eng.scenarios[STRICT]
        self.strict_ttft = ms(strict.ttft_s or 0, 0)
        self.strict_tpot = ms(strict.tpot_s or 0, 0)
        long_sc = eng.scenarios[LONG]
        self.long_in = fmt.count(long_sc.input_tokens, "tokens")
        self.long_out = fmt.count(long_sc.output_tokens, "tokens")
        mi300 = next(g for g in gpus if g.chip == "mi300x")
        mi = mi300.disagg.prediction
        self.mi300x_pools_in_node = fmt.claim(mi300.disagg.gpus <= mi300.search.setting.node.gpus,
                                              f"{mi300.disagg.gpus} GPUs; node {mi300.search.setting.node.name} "
                                              f"records network: {mi300.search.setting.node.network_bytes_per_s}")
        self.mi300x_link = getattr(getattr(mi, "link", None), "name", "")

        # ------------------------------------------------ speculative decoding
        sm, sp, sa, slay = SPEC
        rs = self.reference()
        d = rs.deployment(sm, sp, accelerator=sa, layout=slay, concurrency=1, context_tokens=sum(SPEC_SHAPE))
        acc = eng.models[sm].mtp_acceptance
        if acc is None:
            raise ValueError(f"{sm} needs its MTP acceptance in data/models.yaml")
        k, a_low, a_high = acc
        spec = Speculation(k, a_low)
        n_in, n_out = SPEC_SHAPE
        first = predict(d, 1, n_in, n_out, speculation=spec)
        cap = first.admitted
        spec_rows = []
        for c in (*[x for x in SPEC_LOADS if x < cap], cap):
            spec_rows.append((c, predict(d, c, n_in, n_out), predict(d, c, n_in, n_out, speculation=spec)))
        self._spec_rows = spec_rows
        one_plain, one_spec = spec_rows[0][1], spec_rows[0][2]
        sat_plain, sat_spec = spec_rows[-1][1], spec_rows[-1][2]
        self.spec_model = eng.models[sm].name
        self.spec_gpu = gpu_label(d.setting.chip.name)
        self.spec_layout = d.layout.label
        self.spec_gpus = fmt.count(d.gpus)
        self.spec_k = fmt.count(k, "tokens")
        self.spec_alpha_low = fmt.percent(a_low)
        self.spec_alpha_high = fmt.percent(a_high)
        self.spec_per_step = fmt.quantity(spec.tokens_per_step, "tokens", 2)
        self.spec_per_step_high = fmt.quantity(Speculation(k, a_high).tokens_per_step, "tokens", 2)
        self.spec_draft = ms(one_spec.draft_s, 2)
        self.spec_verify = ms(one_spec.verify_extra_s, 2)
        self.spec_one = fmt.ratio(one_plain.tpot_s / one_spec.tpot_s, 2, basis="TPOT without ÷ with MTP, one request")
        self.spec_one_high = fmt.ratio(
            one_plain.tpot_s / predict(d, 1, n_in, n_out, speculation=Speculation(k, a_high)).tpot_s, 2,
            basis="TPOT without ÷ with MTP at the high acceptance, one request")
        self.spec_sat = fmt.ratio(sat_spec.output_tokens_per_s / sat_plain.output_tokens_per_s, 2,
                                  basis="output tokens/s with MTP ÷ without, at the KV cache's limit")
        self.spec_cap = fmt.count(cap, "requests")
        self.spec_cap_plain = fmt.count(sat_plain.in_flight, "requests")
        self.spec_in, self.spec_out = fmt.count(n_in, "tokens"), fmt.count(n_out, "tokens")
        self.spec_gain_shrinks = fmt.claim(sat_spec.output_tokens_per_s / sat_plain.output_tokens_per_s
                                           < one_plain.tpot_s / one_spec.tpot_s,
                                           f"{sat_spec.output_tokens_per_s / sat_plain.output_tokens_per_s:.2f}x "
                                           f"at {cap} < {one_plain.tpot_s / one_spec.tpot_s:.2f}x alone")
        self.spec_holds_fewer = fmt.claim(cap <= sat_plain.admitted,
                                          f"{cap} with the MTP module's KV cache and weights <= {sat_plain.admitted}")
        self.spec_slower_at_zero = fmt.claim(
            predict(d, 1, n_in, n_out, speculation=Speculation(k, 0.0)).tpot_s > one_plain.tpot_s,
            "TPOT at zero acceptance > without speculation")
        self.spec_breakeven = fmt.percent(one_spec.speculation_cost_s / one_plain.tpot_s, 0)

        # ------------------------------------------------ prefix caching
        p_in, p_out, hit, groups, conc = PREFIX
        rp = self.reference()
        dp = rp.deployment(MODEL, PRECISION, accelerator=WORKED_GPU, layout=worked.agg.layout, concurrency=1,
                           context_tokens=p_in + p_out)
        cold = predict(dp, conc, p_in, p_out)
        warm = predict(dp, conc, p_in, p_out, prefix_hit=hit, prefix_groups=groups)
        self.prefix_in = fmt.count(p_in, "tokens")
        self.prefix_out = fmt.count(p_out, "tokens")
        self.prefix_hit = fmt.percent(hit, 1)
        self.prefix_cached = fmt.count(warm.cached_tokens, "tokens")
        self.prefix_groups = fmt.count(groups, "prefixes")
        self.prefix_conc = fmt.count(conc, "requests")
        self.prefix_layout = dp.layout.label
        self.prefix_ttft_cold = ms(cold.ttft_s, 0)
        self.prefix_ttft_warm = ms(warm.ttft_s, 0)
        self.prefix_ttft_ratio = fmt.ratio(cold.ttft_s / warm.ttft_s, 1, basis="TTFT without ÷ with the prefix hit")
        self.prefix_tps_cold = units.tps(cold.output_tokens_per_s)
        self.prefix_tps_warm = units.tps(warm.output_tokens_per_s)
        self.prefix_admit_cold = fmt.count(cold.admitted, "sequences")
        self.prefix_admit_warm = fmt.count(warm.admitted, "sequences")
        if cold.usd_per_mtok_output is None or warm.usd_per_mtok_output is None:
            raise ValueError("the prefix-caching example needs a priced accelerator")
        self.prefix_cost_cold = units.usd_mtok(cold.usd_per_mtok_output, units.price_of(dp))
        self.prefix_cost_warm = units.usd_mtok(warm.usd_per_mtok_output, units.price_of(dp))
        self.prefix_faster = fmt.claim(warm.ttft_s < cold.ttft_s and warm.output_tokens_per_s >= cold.output_tokens_per_s,
                                       f"TTFT {warm.ttft_s * 1e3:.0f} < {cold.ttft_s * 1e3:.0f} ms")

        # ------------------------------------------------ the cost lens
        loose = at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=WORKED_GPU, ttft_ms=None, tpot_ms=None,
                            sweep=False)
        if loose.best is None:
            raise ValueError("the page needs the worked model's cheapest configuration without a target")
        self.no_target_cost = mtok(loose.best)
        self.no_target_tpot = ms(loose.best.tpot_s, 0)
        self.no_target_config = f"{loose.best.mode}, {config(loose.best)}"
        self.target_premium = fmt.ratio(cost(worked.search.best) / cost(loose.best), 1,
                                        basis="$/Mtok at the target ÷ with none")
        self.target_costs_more = fmt.claim(cost(worked.search.best) > cost(loose.best),
                                           f"${cost(worked.search.best):.3f} > ${cost(loose.best):.3f}")

        # ------------------------------------------------ compared with published results
        measured = original(cat).measurements
        comps = comparisons(original(cat), eng)
        self._comparisons = comps
        pd_ids = [k for k, m in measured.items() if m.mode.serving == "disaggregated" and m.mode.disaggregation
                  is not None and m.mode.disaggregation.prefill is not None and m.role == "test"]
        self._pd_rows = predict_rows(eng, [(k, measured[k]) for k in pd_ids])[0]
        self.cite("measurements", *sorted({c.id for c in comps} | {m.baseline for c in comps
                                                                     if (m := c.measurement).baseline} | set(pd_ids)))
        self._names = {**{k: m.name for k, m in eng.models.items()},
                          **{k: gpu_label(c.name) for k, c in eng.chips.items()}}
        def one(found: list[Comparison]) -> Comparison:
            if len(found) != 1 or found[0].predicted is None:
                raise ValueError(f"the page needs one predicted comparison, found {[c.id for c in found]}")
            return found[0]

        dyn = sorted((c for c in comps if c.measurement.mode.serving == "disaggregated" and c.predicted is not None
                      and c.measurement.speedup is not None and c.measurement.model == MODEL),
                     key=lambda c: c.measurement.gpu_count or 0)
        if len(dyn) != 2:
            raise ValueError(f"the page compares two disaggregated runs of {MODEL}, found {[c.id for c in dyn]}")
        one_node, two_node = dyn
        eagle = sorted((c for c in comps if (spc := c.measurement.mode.speculation) is not None
                        and spc.method == "eagle3" and c.what.startswith("output tokens/s")),
                       key=lambda c: c.measurement.concurrency or 0)
        e1, e64 = one(eagle[:1]), one(eagle[1:])
        mtp = one([c for c in comps if (spc := c.measurement.mode.speculation) is not None and spc.method == "mtp"
                   and c.measurement.speedup is not None and c.predicted is not None])
        self.eagle_model = eng.models[e1.measurement.model].name
        self.eagle_batch = fmt.count(e64.measurement.concurrency or 0, "requests")
        self.dyn_one, self.dyn_one_pred = fmt.ratio(one_node.measured, 1), fmt.ratio(one_node.predicted or 0, 2)
        self.dyn_one_err = fmt.percent(abs(one_node.error or 0), 0)
        self.dyn_two, self.dyn_two_pred = fmt.ratio(two_node.measured, 1), fmt.ratio(two_node.predicted or 0, 2)
        self.dyn_two_short = fmt.claim((two_node.predicted or 0) < two_node.measured,  # the bound is "at least"
                                       f"{two_node.predicted:.2f} < {two_node.measured}")
        self.dyn_one_over = fmt.claim((one_node.predicted or 0) > one_node.measured,
                                      f"{one_node.predicted:.2f} > {one_node.measured}")
        self.eagle_one, self.eagle_one_pred = fmt.ratio(e1.measured, 2), fmt.ratio(e1.predicted or 0, 2)
        self.eagle_one_err = fmt.percent(abs(e1.error or 0), 0)
        self.eagle_64, self.eagle_64_pred = fmt.ratio(e64.measured, 2), fmt.ratio(e64.predicted or 0, 2)
        self.eagle_64_err = fmt.percent(abs(e64.error or 0), 0)
        self.mtp_pub, self.mtp_pred = fmt.ratio(mtp.measured, 1), fmt.ratio(mtp.predicted or 0, 2)
        self.mtp_err = fmt.percent(abs(mtp.error or 0), 0)
        self.eagle_under_alone = fmt.claim((e1.predicted or 0) < e1.measured,
                                           f"{e1.predicted:.2f} < {e1.measured:.2f}")
        self.eagle_gain_shrinks = fmt.claim(e64.measured < e1.measured and (e64.predicted or 0) < (e1.predicted or 0),
                                            f"published {e1.measured:.2f} -> {e64.measured:.2f}, engine "
                                            f"{e1.predicted:.2f} -> {e64.predicted:.2f}")
        pd = self._pd_rows[0]
        pz = pd.prediction
        if not isinstance(pz, DisaggPrediction):
            raise TypeError("the page's disaggregated runs are predicted disaggregated")
        self.pd_model = eng.models[pd.measurement.model].name
        self.pd_node_gpus = fmt.count(pd.deployment.setting.node.gpus)
        self.pd_worker_gpus = fmt.count(pd.deployment.gpus)
        pd_errs = {metric: sorted(abs(e) for r in self._pd_rows if (e := r.error(metric)) is not None)
                   for metric in ("ttft_ms", "itl_ms", "output_tokens_per_s")}
        self.pd_runs = fmt.count(len(self._pd_rows), "runs")
        self.pd_tpot_err = fmt.percent(median(pd_errs["itl_ms"]), 0)
        self.pd_tput_err = fmt.percent(median(pd_errs["output_tokens_per_s"]), 0)
        self.pd_ttft_err = fmt.percent(median(pd_errs["ttft_ms"]), 0)
        self.pd_ttft_under = fmt.claim(all(r.predicted("ttft_ms") < (r.measured("ttft_ms") or 0)
                                           for r in self._pd_rows),
                                       "; ".join(f"{r.predicted('ttft_ms'):.0f} < {r.measured('ttft_ms'):.0f} ms"
                                                 for r in self._pd_rows))
        prefix = [c for c in comps if c.measurement.mode.prefix_cache is not None and c.predicted is not None]
        self.prefix_runs = fmt.count(len({c.id for c in prefix}), "runs")
        tput = [c for c in prefix if c.what.startswith("output tokens/s")]
        self.prefix_tput_pub_lo = fmt.ratio(min(c.measured for c in tput), 2)
        self.prefix_tput_pub_hi = fmt.ratio(max(c.measured for c in tput), 2)
        self.prefix_tput_pred = fmt.ratio(statistics_mean([c.predicted or 0 for c in tput]), 2)
        self.prefix_tput_under = fmt.claim(all((c.predicted or 0) < c.measured for c in tput),
                                           "; ".join(f"{c.predicted:.2f} < {c.measured:.2f}" for c in tput))

        # ------------------------------------------------ the quiz's capacity problem
        plan_s = at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=WORKED_GPU, rate=RATE, sweep=False)
        plan = plan_s.plan
        hourly = None if plan is None else plan.usd_per_hour
        if plan is None or hourly is None:
            raise ValueError("the quiz needs a priced plan for its rate")
        self.q_rate = fmt.quantity(RATE, "requests/s", 0)
        self.q_config = f"{plan.point.mode}, {config(plan.point)}"
        self.q_gpus = fmt.count(plan.rented_gpus)
        self.q_hour = units.usd_hour(hourly, units.price_of(plan.point.deployment))
        self.q_units = fmt.count(plan.replicas)
        self.q_prefill = fmt.count(plan.prefill_workers)
        self.q_disagg = fmt.claim(plan.point.mode == "disaggregated", plan.point.label)


namespace = LatencyTargetPage.namespace_of
sources = LatencyTargetPage.sources_of
