"""The latency-target page model: the names its prose uses, each section's computed once (`LatencyTargetPage.of`).

The frontier on four accelerators, the worked example, the tightening ladder, when disaggregation pays, the cost
lens and the quiz are here; speculative decoding and prefix caching in `modes`, the comparison with published
results in `published`."""

from __future__ import annotations

from itertools import pairwise

from snippets.data import Catalog
from snippets.engine.search import at_scenario
from snippets.engine.serving import at_rate
from snippets.pages import units
from snippets.pages.latency_target.common import (
    ACCELERATORS,
    LADDER,
    LONG,
    MODEL,
    PRECISION,
    RATE,
    SHAPE,
    STRICT,
    WORKED_GPU,
    Gpu,
    Worked,
    best_of,
    cost,
    gpu_label,
    mtok,
    per_user,
)
from snippets.pages.latency_target.modes import ModesSection
from snippets.pages.latency_target.published import PublishedSection
from snippets.pages.units import ms
from snippets.render import fmt


class LatencyTargetPage(ModesSection, PublishedSection):
    """The names the page's `{{ ... }}` values and claims use (its `shows` are set by the package, `__init__`)."""

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
        # which accelerators disaggregation pays on, each with its gain: more than half of them, the claim says
        wins = [g for g in gpus if gains[g.chip] > 1]
        self.disagg_mostly = fmt.claim(len(wins) > len(gpus) / 2,
                                       "; ".join(f"{k} {v:.2f}x" for k, v in gains.items()))
        parts: list[str | tuple[str, fmt.Figure]] = []
        for i, g in enumerate(gpus):
            parts += ["; " if i else "", ("gain" + str(i), fmt.ratio(gains[g.chip], 2,
                                                                     basis="tokens/s per GPU, disaggregated ÷ aggregated")),
                      f" on the {g.label}"]
        self.gain_by_gpu = fmt.Phrase(tuple(parts))
        self.disagg_wins = fmt.count(len(wins), "accelerators")
        self.disagg_which = "every one of" if len(wins) == len(gpus) else "most of"
        self.agg_ttft = ms(worked.agg.ttft_s, 0)
        self.disagg_ttft = ms(worked.disagg.ttft_s, 0)
        # slower than aggregated, and well within the target: at most half of it
        self.disagg_ttft_longer = fmt.claim(
            worked.disagg.ttft_s > worked.agg.ttft_s and worked.disagg.ttft_s <= sc.ttft_s / 2,
            f"{worked.disagg.ttft_s * 1e3:.0f} > {worked.agg.ttft_s * 1e3:.0f} ms, and <= {sc.ttft_s * 1e3 / 2:.0f} ms")
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
        self.tight_config = units.configuration(tight.words)
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
        self.min_saving = fmt.percent(worked.search.setting.layout_policy.disaggregation.min_saving)

        self._modes(eng, worked.agg.layout)

        # ------------------------------------------------ the cost lens
        loose = at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=WORKED_GPU, ttft_ms=None, tpot_ms=None,
                            sweep=False)
        if loose.best is None:
            raise ValueError("the page needs the worked model's cheapest configuration without a target")
        self.no_target_cost = mtok(loose.best)
        self.no_target_tpot = ms(loose.best.tpot_s, 0)
        self.no_target_config = units.configuration(loose.best.words)
        self.target_premium = fmt.ratio(cost(worked.search.best) / cost(loose.best), 1,
                                        basis="$/Mtok at the target ÷ with none")
        self.target_costs_more = fmt.claim(cost(worked.search.best) > cost(loose.best),
                                           f"${cost(worked.search.best):.3f} > ${cost(loose.best):.3f}")

        # ------------------------------------------------ the cost lens: a rate, not a concurrency
        agg = worked.agg
        n_in, n_out = sc.input_tokens, sc.output_tokens
        target_rate = agg.requests_per_s
        half = at_rate(agg.deployment, target_rate / 2, n_in, n_out)
        full = at_rate(agg.deployment, float(10**6), n_in, n_out)
        cap = full.requests_per_s
        self.rate_layout = agg.layout.label
        self.rate_target = fmt.quantity(target_rate, "requests/s", 1)
        self.rate_held = fmt.count(agg.concurrency, "requests")
        self.rate_half = fmt.quantity(target_rate / 2, "requests/s", 1)
        self.rate_half_held = fmt.count(round(half.mean_in_flight), "requests")
        self.rate_cap = fmt.quantity(cap, "requests/s", 1)
        self.rate_headroom = fmt.ratio(cap / target_rate, 1, basis="requests/s with every slot full ÷ at the target")
        self.rate_full_misses = fmt.claim(full.tpot_s > sc.tpot_s,
                                          f"TPOT {full.tpot_s * 1e3:.1f} ms > {sc.tpot_s * 1e3:.0f} ms")

        self._published(eng)

        # ------------------------------------------------ the quiz's capacity problem
        plan_s = at_scenario(eng, MODEL, PRECISION, SHAPE, accelerator=WORKED_GPU, rate=RATE, sweep=False)
        plan, served = plan_s.plan, plan_s.served
        hourly = None if plan is None else plan.usd_per_hour
        if plan is None or served is None or hourly is None:
            raise ValueError("the quiz needs a priced plan for its rate")
        self.q_rate = fmt.quantity(RATE, "requests/s", 0)
        # the workers that carry the rate, each at its share of it (not the configuration the search compared)
        self.q_config = units.configuration(served.words)
        self.q_gpus = fmt.count(plan.rented_gpus)
        self.q_hour = units.usd_hour(hourly, units.price_of(plan.point.deployment))
        self.q_ttft = ms(served.ttft_s, 0)
        self.q_tpot = ms(served.tpot_s)
        self.q_disagg = fmt.claim(plan.point.mode == "disaggregated", plan.point.label)
