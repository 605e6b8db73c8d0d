"""Page model of "How well the model predicts" (docs/reference/predictions.md).

Every published measurement in data/measurements.yaml beside the engine's prediction of it
(`snippets.calibration.evaluate`, `snippets.engine.serving.predict`): calibration rows, from the sources issue 24
names for fitting (NIM's runs among them are the ones the host's time per step is fitted on), apart from test rows,
which were only predicted and alone make the error bands by regime (`snippets.engine.bands`); errors by regime; and
the rows the engine does not predict yet, with the reason. The rows themselves (`rows_table`) are printed on a page
of their own, which the search index leaves out (`reference_prediction_rows`).
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Mapping

from snippets.calibration import (
    METRICS,
    CollectiveFit,
    Row,
    by_regime,
    fit_basis,
    fit_chip_collectives,
    fit_collectives,
    inside_band,
    summary,
)
from snippets.data import Catalog, Measurement, TimeModel
from snippets.data.export import engine_catalog
from snippets.engine.bands import COVERAGE
from snippets.engine.serving import SATURATION, SATURATION_STEP
from snippets.pages.base import Page
from snippets.pages.calibrated import evaluate, fit, rows
from snippets.pages.reference_common import CAL_BAND, as_of_text, source_label
from snippets.pages.reference_drain import run_drain
from snippets.pages.reference_fixed import fixed_by_format, marlin_experts
from snippets.pages.reference_gap import light_load_gap
from snippets.pages.reference_misses import known_misses
from snippets.pages.reference_predictors import beside_predictors, predictors_table
from snippets.pages.reference_skipped import skipped_figures, skipped_table
from snippets.pages.reference_symm import symm_off_hopper
from snippets.pages.units import ms
from snippets.render import charts, fmt

LABELS = {"ttft_ms": "TTFT", "itl_ms": "ITL", "output_tokens_per_s": "Throughput"}
UNITS = {"ttft_ms": "ms", "itl_ms": "ms", "output_tokens_per_s": "tokens/s"}
HEADS = {"ttft_ms": "TTFT (ms)", "itl_ms": "ITL (ms)", "output_tokens_per_s": "Output tokens/s"}
SWEEP = ("nim180-llama33-70b-fp8-2xh100-in5000-out500-c",)
"""The calibration sweep the chart shows: NIM 1.8.0, 5,000 input and 500 output tokens, by concurrency."""
STATISTIC = {"mean": "mean", "median": "median", "p90": "p90", "p99": "p99", "one-run": "one run",
             "not-stated": "statistic not stated"}
LATENCY = {"tpot-excluding-first": "TPOT", "tpot-including-first": "TPOT with the first token", "itl-per-token": "ITL",
           "itl-per-chunk": "ITL per chunk", "not-stated": "ITL not defined"}
TOKENS = {"output": "output tokens/s", "total": "prompt + output tokens/s",
          "not-stated": "tokens/s (output or total not stated)"}
PER = {"whole-run": "of the whole run", "gpu": "per GPU", "node": "per node", "not-stated": "(basis not stated)"}
LOAD = {"fixed-concurrency": "fixed concurrency", "request-rate": "request rate", "offline": "offline, all at once",
        "static-batch": "static batch", "not-stated": "load not stated"}


def defined_as(m: Measurement) -> str:
    """The source's definitions in a few words: statistic, throughput tokens and basis, load."""
    d = m.definitions
    parts = []
    if d.statistic is not None:
        parts.append(STATISTIC[d.statistic])
    if d.ttft == "queueing-included":
        parts.append("TTFT with queueing")
    if d.token_latency is not None:
        parts.append(LATENCY[d.token_latency])
    if d.throughput_tokens is not None and d.throughput_per is not None:
        parts.append(f"{TOKENS[d.throughput_tokens]} {PER[d.throughput_per]}")
    parts.append(LOAD[d.load])
    return "; ".join(parts)


def _label(r: Row, cat: Catalog) -> str:
    """What ran, briefly: model and precision, GPUs and layout, input/output tokens, engine."""
    m = r.measurement
    d = r.deployment
    return (f"{cat.models[m.model].name} {cat.precisions[m.precision].name} on {d.gpus} × "
            f"{cat.accelerators[m.accelerator].name} ({d.layout.label}), {m.input_tokens}/{m.output_tokens}, "
            f"{m.engine}")


def _cell(r: Row, metric: str) -> list[fmt.Cell]:
    measured = r.measured(metric)
    if measured is None:
        return ["—", "—", "—"]
    e = r.error(metric)
    assert e is not None  # noqa: S101 - measured implies an error
    digits = 0 if measured >= 100 else 1
    return [fmt.quantity(measured, UNITS[metric], digits, basis="as published, on the site's definitions"),
            fmt.quantity(r.predicted(metric), UNITS[metric], digits, basis="the engine's time model"),
            fmt.Figure(e * 100, "%", f"{e * 100:+.0f}%", "(predicted − measured) ÷ measured")]


def rows_table(cat: Catalog, role: str) -> str:
    """One row per predicted measurement of `role`: what ran, its source and definitions, and each metric as
    published, as predicted, and the error."""
    rs = rows(cat, role)
    out: list[list[fmt.Cell]] = []
    for r in rs:
        m = r.measurement
        conc: fmt.Cell = "all" if m.concurrency is None else fmt.count(m.concurrency, "requests")
        out.append([_label(r, cat), source_label(m), defined_as(m), conc,
                    *(c for metric in METRICS for c in _cell(r, metric))])
    headers = (["Run", "Source", "Defined as", "In flight"]
               + [h for k in METRICS for h in (HEADS[k], f"{LABELS[k]}, model", f"{LABELS[k]} error")])
    # HTML (the block sets html="true"): rows are named by their data/ id, which no single column is
    table = fmt.html_table(f"rows_{role}", headers, out, align="llll" + "rrr" * len(METRICS), names=[r.id for r in rs])
    dated = html.escape(as_of_text([cat.measurements[r.id] for r in rs]))
    return '<div class="sa-wide">\n' + table + "</div>\n" + f"<p><em>{dated}</em></p>\n"


def _fitted(cat: Catalog) -> list[Row]:
    """The calibration rows the factors are fitted on (`fit_basis`: NIM's, InferenceX's and Azure's guide's rows
    whose configuration the source states), at every load."""
    basis = fit_basis(cat)
    return [r for r in rows(cat, "calibration") if r.id in basis]


def summary_table(cat: Catalog) -> str:
    """Median and worst absolute error of each metric: the fitted calibration rows, the calibration rows whose
    configuration the data infers (never fitted), the test rows."""
    fitted = _fitted(cat)
    ids = {r.id for r in fitted}
    groups = (("calibration, fitted on", fitted),
              ("calibration, configuration inferred (not fitted)",
               [r for r in rows(cat, "calibration") if r.id not in ids]),
              ("test", rows(cat, "test")))
    out: list[list[fmt.Cell]] = []
    for name, rs in groups:
        for metric in METRICS:
            s = summary(rs, metric)
            if s is None:
                continue
            out.append([f"{name}: {LABELS[metric]}", fmt.percent(s[0]), fmt.percent(s[1]), fmt.count(s[2], "rows")])
    return fmt.table("summary", ["Rows and metric", "Median error", "Worst error", "Rows"], out, align="lrrr")


def regime_table(cat: Catalog) -> str:
    """Errors by regime (vendor; dense or MoE; prefill, decode at low load, decode at saturation), each role apart."""
    out: list[list[fmt.Cell]] = []
    for role in ("calibration", "test"):
        for (regime, metric), (med, signed, worst, n) in by_regime(rows(cat, role)).items():
            out.append([f"{role}: {regime}, {LABELS[metric]}", fmt.percent(med),
                        fmt.Figure(signed * 100, "%", f"{signed * 100:+.0f}%", "median of (predicted − measured) ÷ measured"),
                        fmt.percent(worst), fmt.count(n, "rows")])
    return fmt.table("regimes", ["Rows, regime and metric", "Median error", "Median signed", "Worst error", "Rows"],
                     out, align="lrrrr")


def sweep_chart(cat: Catalog) -> str:
    """Measured against predicted throughput across the calibration sweep's concurrencies."""
    rs = [r for r in rows(cat, "calibration") if r.id.startswith(SWEEP)]
    rs.sort(key=lambda r: r.measurement.concurrency or 0)
    bars = []
    for r in rs:
        group = f"c{r.measurement.concurrency}"
        measured = r.measured("output_tokens_per_s")
        if measured is None:
            continue
        bars.append(charts.Bar("measured", measured, group))
        bars.append(charts.Bar("predicted", r.predicted("output_tokens_per_s"), group))
    first = rs[0]
    words = (f"Output tokens per second of {_label(first, cat).rsplit(',', 1)[0]}, as NVIDIA's NIM benchmark "
             f"measured it and as the engine predicts it, by concurrency (requests in flight).")
    svg = charts.grouped_bars("sweep-chart", bars, "output tokens/s", "Measured and predicted throughput", words)
    return charts.figure(svg, words)


ACCURACY_ROLES = (("calibration", "calibration rows"), ("test", "test rows"))


def accuracy_charts(cat: Catalog) -> str:
    """Predicted against measured, both axes on a log scale, one chart per metric: every predicted row that measures
    the metric, calibration and test rows marked apart, with the line where prediction equals measurement."""
    by_role = {role: rows(cat, role) for role, _ in ACCURACY_ROLES}
    out = []
    for metric in METRICS:
        series = []
        values: list[float] = []
        for role, label in ACCURACY_ROLES:
            pts, tips = [], []
            for r in by_role[role]:
                m = r.measured(metric)
                if m is None or m <= 0:
                    continue
                p = r.predicted(metric)
                pts.append((m, p))
                tips.append(f"{r.id}: measured {m:,.4g}, predicted {p:,.4g} {UNITS[metric]}")
                values += [m, p]
            if pts:
                series.append(charts.Series(label, pts, tips, joined=False))
        lo, hi = min(values), max(values)
        series.append(charts.Series("predicted = measured", [(lo, lo), (hi, hi)], ("", ""), joined=True))
        name = f"accuracy-{metric.replace('_', '-')}"
        words = (f"{LABELS[metric]} as the engine predicts it against as published, in {UNITS[metric]}, both on a "
                 f"log scale: each point is a row, calibration and test rows in their own colours; points on the "
                 f"line are exact, above it over-predicted, below it under-predicted.")
        svg = charts.lines(name, series, f"measured ({UNITS[metric]})", f"predicted ({UNITS[metric]})",
                           f"{LABELS[metric]}: predicted against measured", words, log_x=True, log_y=True)
        out.append(charts.figure(svg, words))
    return "".join(out)


def bands_table(cat: Catalog) -> str:
    """The error band of each metric by regime, from the test rows: the range that held 80 % of their errors."""
    tm = engine_catalog(cat).time_models[cat.scenarios["reference"].time_model]
    out: list[list[fmt.Cell]] = []
    names = {"tpot_ms": "Time per output token", "ttft_ms": "TTFT", "output_tokens_per_s": "Throughput"}
    for b in tm.bands:
        note = "" if b.rows >= 5 else "fewer than five rows: the span of the bands with enough rows applies"
        out.append([f"{names[b.metric]}: {b.vendor}, {'MoE' if b.moe else 'dense'}, {b.phase}",
                    fmt.Figure(b.low * 100, "%", f"{b.low * 100:+.0f}%", "(predicted − measured) ÷ measured"),
                    fmt.Figure(b.high * 100, "%", f"{b.high * 100:+.0f}%", "(predicted − measured) ÷ measured"),
                    fmt.count(b.rows, "rows"), note])
    return fmt.table("bands", ["Metric and regime", "Band low", "Band high", "Test rows", "Note"], out,
                     align="lrrrl")


class ReferencePredictionsPage(Page):
    shows = (summary_table, regime_table, bands_table, accuracy_charts, sweep_chart, skipped_table, predictors_table)
    """The functions the page's blocks print, with the blocks' arguments."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        sc = cat.scenarios["reference"]
        tm = cat.policies[sc.time_model]
        if not isinstance(tm, TimeModel):
            raise TypeError("the scenario's time model is not a time entry")
        f = fit(cat)
        basis = fit_basis(cat)
        cal, cal_skip = evaluate(cat, "calibration")
        test, test_skip = evaluate(cat, "test")
        fitted = _fitted(cat)
        ids = {r.id for r in fitted}
        med = {metric: s[0] for metric in METRICS if (s := summary(fitted, metric)) is not None}
        other = [r for r in cal if r.id not in ids]
        test_med = {metric: s[0] for metric in METRICS if (s := summary(test, metric)) is not None}
        other_med = {metric: s[0] for metric in METRICS if (s := summary(other, metric)) is not None}
        single = [r.measurement for r in fitted if r.measurement.concurrency == 1]
        runs = sorted({(f"{m.checkpoint or cat.models[m.model].name} on {m.gpu_count or 0} × "
                        f"{cat.accelerators[m.accelerator].name} ({source_label(m).removesuffix(' (secondary)')})")
                       for m in single})
        every = [*cal, *test]
        moe_ttft = [e for r in every if r.deployment.setting.model.architecture.moe is not None
                    and (e := r.error("ttft_ms")) is not None]
        # the vendor as data/accelerators.yaml spells it ("AMD"), read by its first word: the name is data text
        amd_moe = [r for r in test if r.vendor.split(" ")[0] == "AMD" and r.deployment.setting.model.architecture.moe is not None]
        amd_tput = [e for r in amd_moe if (e := r.error("output_tokens_per_s")) is not None]
        sources = {source_label(m).removesuffix(" (secondary)") for m in cat.measurements.values()}
        self.cal_run = fmt.Figure(len(runs), "runs", " and ".join(runs), "the fit basis' runs at one request")
        self.single_rows = fmt.count(len(single), "rows")
        kf = f.vendor_kernel_fraction.get("AMD")
        data_kf = dict(tm.vendor_kernel_fraction).get("AMD")
        if kf is None or data_kf is None:
            raise ValueError("AMD's kernel fraction is neither fitted nor recorded: the page's text names it")
        self.amd_fraction = fmt.Figure(data_kf, "", f"{data_kf:.2f}", "data/policies.yaml measured-fractions")
        self.fit_amd_fraction = fmt.Figure(kf, "", f"{kf:.3f}", "python -m snippets.calibration")
        klo, khi = tm.vendor_kernel_fraction_range
        self.amd_fraction_range = fmt.Figure(klo, "", f"{klo:g}–{khi:g}", "the range data/policies.yaml states")
        amd_rows = {r.measurement.accelerator for r in fitted if r.vendor.split(" ")[0] == "AMD"}
        self.amd_chips = fmt.Figure(len(amd_rows), "chips", " and ".join(sorted(cat.accelerators[a].name
                                                                                for a in amd_rows)), "the fit basis")
        self.cal_band = fmt.percent(CAL_BAND)
        self.cal_rows = fmt.count(len(cal) + len(cal_skip), "rows")
        self.test_rows = fmt.count(len(test) + len(test_skip), "rows")
        self.n_sources = fmt.count(len(sources), "sources")
        self.predicted = fmt.count(len(cal) + len(test), "rows")
        self.cal_predicted = fmt.count(len(cal), "rows")  # on the page of the rows (reference_prediction_rows)
        self.test_predicted = fmt.count(len(test), "rows")
        self.not_predicted = fmt.count(len(cal_skip) + len(test_skip), "rows")
        self.fit_rows = fmt.count(len(fitted), "rows")
        self.basis_rows = fmt.count(len(basis), "rows")
        self.saturation = fmt.percent(SATURATION, 0)
        self.saturation_step = fmt.Figure(SATURATION_STEP, "×", f"{SATURATION_STEP:g}", "snippets.engine.serving")
        self.step_overhead = ms(tm.step_overhead.seconds, 2)
        self.fit_step_overhead = ms(f.step_overhead_s, 2)
        lo, hi = tm.step_overhead_range
        self.step_overhead_range = fmt.Figure(lo, "ms", f"{lo:g}–{hi:g} ms", "the range data/policies.yaml states")
        colls = fit_collectives(cat)
        self.one_shot_latency = fmt.quantity(colls["one_shot"].latency_s * 1e6, "µs", 2, show_unit=True)
        self.one_shot_efficiency = fmt.percent(colls["one_shot"].efficiency)
        self.one_shot_worst = fmt.percent(colls["one_shot"].worst)
        self.nccl_worst = fmt.percent(colls["nccl"].worst)
        self.multimem_worst = fmt.percent(colls["multimem"].worst)
        # the chips whose own timings price their collectives: an engine's custom all-reduce (chip_collectives, its
        # one stage; each chip named with the engine whose kernel was timed), NCCL's all-reduce (chip_nccl)
        chip_fits = fit_chip_collectives(cat)
        engines = {cc.points: cc.engine for cc in tm.chip_collectives}
        own = _own_timings(cat, chip_fits, "one_shot", "chip_collectives", engines)
        self.chip_ar_chips = own[0]
        self.chip_ar_low = fmt.quantity(min(f.latency_s for f in own[1]) * 1e6, "µs", 2, show_unit=True)
        self.chip_ar_high = fmt.quantity(max(f.latency_s for f in own[1]) * 1e6, "µs", 2, show_unit=True)
        self.chip_ar_worst = fmt.percent(max(f.worst for f in own[1]))
        # NCCL's timings on NVIDIA's chips, RCCL's (NCCL's port to ROCm, which the engines call there) on AMD's
        library = {cn.points: "RCCL" if (a := cat.latencies[cn.points].accelerator) is not None
                   and cat.accelerators[a].vendor == "AMD" else "NCCL" for cn in tm.chip_nccl}
        nccl = _own_timings(cat, chip_fits, "nccl", "chip_nccl", library)
        self.chip_nccl_chips = nccl[0]
        self.chip_nccl_worst = fmt.percent(max(f.worst for f in nccl[1]))
        self.coverage = fmt.percent(COVERAGE, 0)
        n_in, n_all = inside_band(test)
        self.test_inside = fmt.count(n_in, "figures")
        self.test_figures = fmt.count(n_all, "figures")
        # the calibration rows (tuned launches) against the same bands: held less often than the test rows themselves
        c_in, c_all = inside_band(cal)
        self.cal_inside = fmt.count(c_in, "figures")
        self.cal_figures = fmt.count(c_all, "figures")
        self.tuned_outside = fmt.claim(c_all > 0 and n_all > 0 and c_in / c_all < n_in / n_all,
                                       f"calibration {c_in}/{c_all} inside, test {n_in}/{n_all}")
        self.cal_itl = fmt.percent(med["itl_ms"])
        self.cal_ttft = fmt.percent(med["ttft_ms"])
        self.cal_tput = fmt.percent(med["output_tokens_per_s"])
        self.other_tput = fmt.percent(other_med["output_tokens_per_s"])
        self.other_itl = fmt.percent(other_med["itl_ms"])
        self.test_tput = fmt.percent(test_med["output_tokens_per_s"])
        self.test_itl = fmt.percent(test_med["itl_ms"])
        self.cal_good = fmt.claim(med["itl_ms"] <= CAL_BAND and med["output_tokens_per_s"] <= CAL_BAND,
                                  f"median ITL error {med['itl_ms']:.1%}, throughput {med['output_tokens_per_s']:.1%}")
        self.others_worse = fmt.claim(other_med["output_tokens_per_s"] > med["output_tokens_per_s"]
                                      and test_med["output_tokens_per_s"] > med["output_tokens_per_s"],
                                      f"fitted {med['output_tokens_per_s']:.1%}, other calibration "
                                      f"{other_med['output_tokens_per_s']:.1%}, test {test_med['output_tokens_per_s']:.1%}")
        under = sum(1 for e in moe_ttft if e < 0)
        self.moe_ttft_rows = fmt.count(len(moe_ttft), "rows")
        self.moe_ttft_under = fmt.count(under, "rows")
        self.moe_ttft_low = fmt.claim(bool(moe_ttft) and under >= 0.8 * len(moe_ttft),
                                      f"{under} of {len(moe_ttft)} MoE TTFT rows under-predicted")
        self.extend(light_load_gap(cat, cal, test, CAL_BAND))
        self.extend(fixed_by_format(cal, CAL_BAND))
        self.extend(marlin_experts(cal, CAL_BAND))
        over = sum(1 for e in amd_tput if e > 0)
        self.amd_rows = fmt.count(len(amd_tput), "rows")
        self.amd_over = fmt.count(over, "rows")
        self.amd_high = fmt.claim(bool(amd_tput) and over >= 0.8 * len(amd_tput),
                                  f"{over} of {len(amd_tput)} AMD MoE test throughput rows over-predicted")
        # whose runs those are, and the untuned ones' time per token against the model
        named = {"dstack benchmarks": "dstack's", "SGLang cookbook": "the SGLang cookbook's"}
        over_sources = sorted({source_label(r.measurement) for r in amd_moe if (r.error("output_tokens_per_s") or 0) > 0})
        self.amd_over_sources_names = fmt.Figure(len(over_sources), "sources", " or ".join(
            sorted((named.get(s, s) for s in over_sources), key=str.lower)), "the over-predicted runs' sources")
        self.amd_over_sources = fmt.claim(set(over_sources) <= set(named), f"sources {over_sources}")
        plain = [e for r in amd_moe if source_label(r.measurement) == "SGLang cookbook"
                 and r.measurement.model.startswith("deepseek") and (e := r.error("itl_ms")) is not None]
        plain_itl = statistics.median(plain) if plain else 0.0
        self.amd_plain_rows = fmt.count(len(plain), "runs")
        self.amd_plain_itl = fmt.percent(-plain_itl)
        # slower than the model by more than the band the calibration's own rows hold to
        self.amd_plain_slow = fmt.claim(bool(plain) and plain_itl < -CAL_BAND, f"median ITL error {plain_itl:+.1%}")
        # which engines' rows run each prompt in a step of its own: their memory policy's mixed_steps, or the row's
        apart = {r.measurement.engine.split(" ")[0] for r in every if not r.deployment.setting.memory_policy.mixed_steps}
        sglang = [r for r in every if r.measurement.engine.split(" ")[0] == "SGLang"]
        mixed = sum(r.deployment.setting.memory_policy.mixed_steps for r in sglang)
        self.sglang_apart = fmt.claim(
            bool(sglang) and mixed == 0,
            f"{len(sglang)} SGLang rows, {mixed} with mixed steps; engines whose rows run prompts apart: "
            f"{', '.join(sorted(apart))}",
            structural="a yes or no per row: whether its engine mixes prompts into decode steps")
        self.extend(run_drain(every))
        self.extend(known_misses(test, test_skip, engine_catalog(cat)))
        self.extend(skipped_figures([*cal, *test], [*cal_skip, *test_skip]))
        self.extend(beside_predictors(cat, test))
        self.extend(symm_off_hopper(cat))


def _own_timings(cat: Catalog, chip_fits: dict[str, dict[str, CollectiveFit]], algorithm: str,
                 field: str, engines: Mapping[str, str] | None = None) -> tuple[fmt.Figure, list[CollectiveFit]]:
    """The chips whose own timings give `algorithm`'s fit (named as data/ names them, each with the engine whose
    kernel was timed where `engines` gives it by timings' id; one figure), and those fits."""
    found = [(p, cat.latencies[p].accelerator, fits[algorithm]) for p, fits in chip_fits.items() if algorithm in fits
             and (engines is None or p in engines)]
    if not found:
        raise ValueError(f"no chip has its own {algorithm} timings: the page says which do")
    names = [cat.accelerators[a].name for _, a, _ in found if a is not None]
    text = ", ".join(names)
    if engines is not None:  # by engine, in the order data/ lists them: "vLLM's on A, B; SGLang's on C"
        by: dict[str, list[str]] = {}
        for p, a, _ in found:
            if a is not None:
                by.setdefault(engines[p], []).append(cat.accelerators[a].name)
        text = "; ".join(f"{e}'s on {', '.join(ns)}" for e, ns in by.items())
    # a chip timed under two engines is one chip
    return fmt.Figure(len(set(names)), "chips", text, f"data/policies.yaml, {field}"), [f for *_, f in found]


namespace = ReferencePredictionsPage.namespace_of
sources = ReferencePredictionsPage.sources_of
