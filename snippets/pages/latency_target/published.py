"""The latency-target page's comparison with published results: each published ratio of a mode (disaggregation,
speculative decoding, a prefix cache) beside the engine's (`snippets.comparisons`), and dstack's disaggregated runs
measured and predicted (`snippets.calibration.predict_rows`). Their tables are on the reference page
docs/reference/serving.md."""

from __future__ import annotations

from statistics import mean as statistics_mean
from statistics import median

from snippets.calibration import predict_rows
from snippets.comparisons import Comparison, comparisons
from snippets.engine.serving import DisaggPrediction
from snippets.engine.specs import EngineCatalog
from snippets.pages.base import Page
from snippets.pages.latency_target.common import MODEL, gpu_label
from snippets.pages.sources import original
from snippets.render import fmt


class PublishedSection(Page):
    """The names of the comparison with published results."""

    def _published(self, eng: EngineCatalog) -> None:
        cat = self.cat
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
