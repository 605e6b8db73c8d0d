"""The cost page model: the names its prose uses, computed once (`CostPage.of`)."""

from __future__ import annotations

from dataclasses import replace

from snippets.calibration import fit_basis, summary
from snippets.data import Catalog, TimeModel
from snippets.data.export import price_record
from snippets.engine.bands import COVERAGE
from snippets.engine.search import MAX_NODES
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.calibrated import rows
from snippets.pages.cost.common import (
    FLEET_SHARES,
    MODELS,
    NIM_SWEEP,
    SCENARIO,
    SPLIT,
    TTFT_BUDGET_S,
    WORKED,
    Worked,
    cheapest_layout,
    full,
    gpu_label,
    grid,
    in_cost,
    in_node,
    ms,
    nim_share,
    out_cost,
    run,
    split_rows,
    target_cost,
    usd_mtok,
)
from snippets.pages.scenario import reference
from snippets.pages.units import price_of, tps, usd, usd_gpu_hour
from snippets.render import fmt


class CostPage(Page):
    """The names the page's `{{ ... }}` values and claims use (its `shows` are set by the package, `__init__`)."""

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

        # replicas against a larger TP, on the GPUs of one node
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
        wholes = sorted(((k, p) for k, p in cat.prices.items() if p.accelerator == WORKED[2] and p.kind == "on-demand"
                         and p.gpus_per_unit > 1), key=lambda kp: kp[1].price.value)
        if not wholes:
            raise ValueError(f"the rent lever names an offering of the {WORKED[2]} sold only as whole instances")

        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.context = fmt.count(sc.input_tokens + sc.output_tokens, "tokens")
        self.scenario = sc.name
        self.ttft_target = ms(sc.ttft_s)
        self.tpot_target = ms(sc.tpot_s)
        self.max_nodes = fmt.count(MAX_NODES, "nodes", show_unit=True)
        self.met_rows = fmt.count(sum(1 for x in every if x.at is not None), "rows")
        self.min_saving = fmt.percent(r.eng.layout_policies[sc.layout_policy].disaggregation.min_saving)
        self.differ_rows = fmt.count(sum(1 for x in every if x.saving > 0), "rows")
        self.grid_rows = fmt.count(len(every), "rows")
        self.w_at_config = units.configuration(w_at.words)
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
        whole_id, whole = wholes[0]
        self.whole_seller = whole.provider
        self.whole_unit = fmt.count(whole.gpus_per_unit, "GPUs", show_unit=True)
        self.whole_price = usd_gpu_hour(replace(price_record(cat, whole), sources=(("prices", whole_id),)))
        used_units = {a: p.gpus_per_unit for a, p in r.eng.prices.items()}
        self.site_rents_single = fmt.claim(all(u == 1 for u in used_units.values()),
                                           f"GPUs per rental unit of the prices used: {used_units}")
        self.big_model = r.eng.models[MODELS[-1]].name
        # replicas against TP
        self.split_model = r.eng.models[SPLIT[0]].name
        self.split_precision = r.eng.precisions[SPLIT[1]].name
        n_small = in_node(sd)
        self.split_gpus = fmt.count(sd.gpus_per_node)
        self.band_share = fmt.percent(COVERAGE)  # the share of a regime's test errors a range holds (engine.bands)
        self.small_layout = sd.layout.label
        self.big_layout = bd.layout.label
        self.small_n = fmt.count(n_small, "replicas")
        self.small_itl1 = ms(s1.tpot_s)
        self.big_itl1 = ms(b1.tpot_s)
        self.small_ttft1 = ms(s1.ttft_s)
        self.big_ttft1 = ms(b1.ttft_s)
        self.small_cost1 = usd_mtok(out_cost(s1), price_of(sd))
        self.big_cost1 = usd_mtok(out_cost(b1), price_of(bd))
        self.small_inflight = fmt.count(sm.in_flight * n_small, "sequences")
        self.big_inflight = fmt.count(bm.in_flight, "sequences")
        self.small_tps = tps(sm.output_tokens_per_s * n_small)
        self.big_tps = tps(bm.output_tokens_per_s)
        self.small_itl = ms(sm.tpot_s)
        self.big_itl = ms(bm.tpot_s)
        self.small_cost = usd_mtok(s_cost, price_of(sd))
        self.big_cost = usd_mtok(b_cost, price_of(bd))
        self.split_gap = fmt.percent(abs(s_cost / b_cost - 1), 0)
        self.big_itl1_gain = fmt.ratio(s1.tpot_s / b1.tpot_s, 1, basis="ITL of the small TP ÷ the large, one request")
        # accelerators
        self.cheap_hour_gpu = gpu_label(ch.d.setting.chip.name)
        sellers = sorted({f"{p.provider} ({p.tier})" if p.tier else p.provider for p in ps.values()})
        if len(sellers) < 2:
            raise ValueError("the page says the accelerators' prices come from several providers")
        self.sellers = ", ".join(sellers[:-1]) + " and " + sellers[-1]
        self.cheap_hour_price = usd(price[cheap_hour], ps[cheap_hour])
        self.cheap_hour_cost = usd_mtok(tok[cheap_hour], ps[cheap_hour])
        self.cheap_tok_gpu = gpu_label(ct.d.setting.chip.name)
        self.cheap_tok_price = usd(price[cheap_tok], ps[cheap_tok])
        self.cheap_tok_cost = usd_mtok(tok[cheap_tok], ps[cheap_tok])
        self.cheap_tok_layout = units.configuration(at_of[cheap_tok].words)
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
        self.cal_gpus = fmt.count(len(cal_accs), "accelerators", show_unit=True)
        # the fitted factors the prose names: the host's time per step, and each vendor's kernel fraction in data/
        tm = cat.policies[sc.time_model]
        if not isinstance(tm, TimeModel):
            raise TypeError(f"{sc.time_model}: the scenario's time model is not a time entry")
        vendors = sorted(tm.vendor_kernel_fraction)
        if not vendors:
            raise ValueError(f"{sc.time_model} fits no vendor's kernel fraction: the page's text names one")
        self.kernel_fractions = " and ".join(f"{v}'s" for v in vendors) + (" kernel fraction" if len(vendors) == 1
                                                                           else " kernel fractions")
        unfitted = sorted(a for a in by_acc if a not in cal_accs)
        self.table_gpus = fmt.count(len(by_acc), "accelerators", show_unit=True)
        # claims
        self.batching_pays = fmt.claim(out_cost(run(wd, 1)) > 10 * out_cost(w_most),
                                       f"${out_cost(run(wd, 1)):.2f} at one request > 10 × ${out_cost(w_most):.3f}")
        self.input_cheaper = fmt.claim(in_cost(wd, w_most) < out_cost(w_most),
                                       f"input ${in_cost(wd, w_most):.3f} < output ${out_cost(w_most):.3f} per Mtok")
        self.tp_faster_alone = fmt.claim(b1.tpot_s < s1.tpot_s and b1.ttft_s < s1.ttft_s,
                                         f"ITL {b1.tpot_s * 1e3:.1f} < {s1.tpot_s * 1e3:.1f} ms, "
                                         f"TTFT {b1.ttft_s * 1e3:.0f} < {s1.ttft_s * 1e3:.0f} ms")
        self.replicas_cheaper_alone = fmt.claim(out_cost(s1) < out_cost(b1),
                                                f"${out_cost(s1):.2f} < ${out_cost(b1):.2f} per Mtok at one request each")
        self.split_close_at_peak = fmt.claim(abs(s_cost / b_cost - 1) < 0.15,
                                             f"${s_cost:.3f} against ${b_cost:.3f} per Mtok at the KV maximum")
        self.big_holds_more = fmt.claim(bm.in_flight > sm.in_flight * n_small,
                                        f"{bm.in_flight} > {n_small} × {sm.in_flight} sequences")
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

