"""The latency-target page's sections on serving modes within one configuration: speculative decoding (DeepSeek-V3's
MTP module, `serving.predict` with a `Speculation`) and prefix caching (`serving.predict` with a prefix hit)."""

from __future__ import annotations

from snippets.engine import Layout
from snippets.engine.serving import Speculation, predict
from snippets.engine.specs import EngineCatalog
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.latency_target.common import (
    MODEL,
    PRECISION,
    PREFIX,
    SPEC,
    SPEC_LOADS,
    SPEC_SHAPE,
    WORKED_GPU,
    gpu_label,
)
from snippets.pages.units import ms
from snippets.render import fmt


class ModesSection(Page):
    """The names of the speculative-decoding and prefix-caching sections."""

    def _modes(self, eng: EngineCatalog, worked_layout: Layout) -> None:
        # ------------------------------------------------ speculative decoding
        sm, sp, sa, slay = SPEC
        rs = self.reference()
        d = rs.deployment(sm, sp, accelerator=sa, layout=slay, concurrency=1, context_tokens=sum(SPEC_SHAPE))
        acc = eng.models[sm].mtp_acceptance
        if acc is None:
            raise ValueError(f"{sm} needs its MTP acceptance in data/models.yaml")
        k, a_low, a_high = acc.draft_tokens, acc.low, acc.high
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
        dp = rp.deployment(MODEL, PRECISION, accelerator=WORKED_GPU, layout=worked_layout, concurrency=1,
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
