"""Page model of "How well the model predicts" (docs/reference/predictions.md).

Every published measurement in data/measurements.yaml beside the engine's prediction of it
(`snippets.calibration.rows`, `snippets.engine.serving.predict`): calibration rows, on which the time
model's fitted factors were fitted, apart from test rows, which were only predicted and alone make the error
bands by regime (`snippets.engine.bands`).
"""

from __future__ import annotations

import html
from functools import partial

from snippets.calibration import METRICS, Row, fit, fit_collectives, inside_band, rows, summary
from snippets.data import Catalog, TimeModel
from snippets.data.export import engine_catalog
from snippets.engine.bands import COVERAGE
from snippets.pages.base import Page
from snippets.pages.reference_common import as_of_text
from snippets.render import charts, fmt

LABELS = {"ttft_ms": "TTFT", "itl_ms": "ITL", "output_tokens_per_s": "Throughput"}
UNITS = {"ttft_ms": "ms", "itl_ms": "ms", "output_tokens_per_s": "tokens/s"}
HEADS = {"ttft_ms": "TTFT (ms)", "itl_ms": "ITL (ms)", "output_tokens_per_s": "Output tokens/s"}
CAL_BAND = 0.15
"""The band the page states for the calibration rows' ITL and throughput (tests/unit/test_calibration.py holds each row to it)."""
SWEEP = ("nim180-llama33-70b-fp8-2xh100-in5000-out500-c",)
"""The calibration sweep the chart shows: NIM 1.8.0, 5,000 input and 500 output tokens, by concurrency."""


def _label(r: Row, cat: Catalog) -> str:
    """What ran, briefly: model and precision, GPUs and layout, input/output tokens, engine."""
    m = r.measurement
    gpus = m.layout.tp * m.layout.pp * m.layout.dp
    engine = m.engine.replace("TensorRT-LLM (NIM)", "NIM") + (f" {m.engine_version.split()[-1]}" if m.engine_version else "")
    return (f"{cat.models[m.model].name} {cat.precisions[m.precision].name} on {gpus} × "
            f"{cat.accelerators[m.accelerator].name} ({r.deployment.layout.label}), {m.input_tokens}/{m.output_tokens}, "
            f"{engine}")


def _cell(r: Row, metric: str) -> list[fmt.Cell]:
    measured = r.measured(metric)
    if measured is None:
        return ["—", "—", "—"]
    e = r.error(metric)
    assert e is not None  # noqa: S101 - measured implies an error
    digits = 0 if measured >= 100 else 1
    return [fmt.quantity(measured, UNITS[metric], digits, basis="as published"),
            fmt.quantity(r.predicted(metric), UNITS[metric], digits, basis="the engine's time model"),
            fmt.Figure(e * 100, "%", f"{e * 100:+.0f}%", "(predicted − measured) ÷ measured")]


def rows_table(cat: Catalog, role: str) -> str:
    """One row per measurement of `role`: what ran, and each metric as published, as predicted, and the error."""
    rs = rows(cat, role)
    out: list[list[fmt.Cell]] = []
    for r in rs:
        m = r.measurement
        conc: fmt.Cell = "all" if m.concurrency is None else fmt.count(m.concurrency, "requests")
        out.append([_label(r, cat), conc, *(c for metric in METRICS for c in _cell(r, metric))])
    headers = ["Run", "In flight"] + [h for k in METRICS for h in (HEADS[k], f"{LABELS[k]}, model", f"{LABELS[k]} error")]
    # HTML (the block sets html="true"): rows are named by their data/ id, which no single column is
    table = fmt.html_table(f"rows_{role}", headers, out, align="lr" + "rrr" * len(METRICS), names=[r.id for r in rs])
    dated = html.escape(as_of_text([cat.measurements[r.id] for r in rs]))
    return '<div class="sa-wide">\n' + table + "</div>\n" + f"<p><em>{dated}</em></p>\n"


def summary_table(cat: Catalog) -> str:
    """Median and worst absolute error of each metric, calibration and test rows apart."""
    out: list[list[fmt.Cell]] = []
    for role in ("calibration", "test"):
        rs = rows(cat, role)
        for metric in METRICS:
            s = summary(rs, metric)
            if s is None:
                continue
            out.append([f"{role}: {LABELS[metric]}", fmt.percent(s[0]), fmt.percent(s[1]), fmt.count(s[2], "rows")])
    return fmt.table("summary", ["Rows and metric", "Median error", "Worst error", "Rows"], out, align="lrrr")


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


def bands_table(cat: Catalog) -> str:
    """The error band of each metric by regime, from the test rows: the range that held 80 % of their errors."""
    tm = engine_catalog(cat).time_models[cat.scenarios["reference"].time_model]
    out: list[list[fmt.Cell]] = []
    names = {"tpot_ms": "Time per output token", "ttft_ms": "TTFT", "output_tokens_per_s": "Throughput"}
    for b in tm.bands:
        note = "" if b.rows >= 5 else "fewer than five rows: the metric's widest band applies"
        out.append([f"{names[b.metric]}: {b.vendor}, {'MoE' if b.moe else 'dense'}, {b.phase}",
                    fmt.Figure(b.low * 100, "%", f"{b.low * 100:+.0f}%", "(predicted − measured) ÷ measured"),
                    fmt.Figure(b.high * 100, "%", f"{b.high * 100:+.0f}%", "(predicted − measured) ÷ measured"),
                    fmt.count(b.rows, "rows"), note])
    return fmt.table("bands", ["Metric and regime", "Band low", "Band high", "Test rows", "Note"], out,
                     align="lrrrl")


class ReferencePredictionsPage(Page):
    shows = (summary_table, bands_table, sweep_chart, partial(rows_table, role="calibration"),
             partial(rows_table, role="test"))
    """The functions the page's blocks print, with the blocks' arguments."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        sc = cat.scenarios["reference"]
        tm = cat.policies[sc.time_model]
        if not isinstance(tm, TimeModel):
            raise TypeError("the scenario's time model is not a time entry")
        f = fit(cat)
        cal, test = rows(cat, "calibration"), rows(cat, "test")
        med: dict[str, dict[str, float]] = {}
        for role, rs in (("cal", cal), ("test", test)):
            med[role] = {}
            for metric in METRICS:
                s = summary(rs, metric)
                if s is not None:
                    med[role][metric] = s[0]
        worst_ttft = max((r for r in test if r.error("ttft_ms") is not None), key=lambda r: abs(r.error("ttft_ms") or 0))
        short = [r for r in test if r.measurement.input_tokens + r.measurement.output_tokens <= 256]
        first = cal[0].measurement
        self.cal_run = (f"{first.checkpoint or cat.models[first.model].name} in {cat.precisions[first.precision].name} on "
                        f"{first.layout.tp * first.layout.pp} × {cat.accelerators[first.accelerator].name}")
        self.cal_band = fmt.percent(CAL_BAND)
        self.cal_rows = fmt.count(len(cal), "rows")
        self.test_rows = fmt.count(len(test), "rows")
        self.step_overhead = fmt.quantity(tm.step_overhead.seconds * 1e3, "ms", 2, show_unit=True)
        self.fit_step_overhead = fmt.quantity(f.step_overhead_s * 1e3, "ms", 2, show_unit=True)
        lo, hi = tm.step_overhead_range
        self.step_overhead_range = fmt.Figure(lo, "ms", f"{lo:g}–{hi:g} ms", "the range data/policies.yaml states")
        colls = fit_collectives(cat)
        self.one_shot_latency = fmt.quantity(colls["one_shot"].latency_s * 1e6, "µs", 2, show_unit=True)
        self.one_shot_efficiency = fmt.percent(colls["one_shot"].efficiency)
        self.one_shot_worst = fmt.percent(colls["one_shot"].worst)
        self.nccl_worst = fmt.percent(colls["nccl"].worst)
        self.coverage = fmt.percent(COVERAGE, 0)
        n_in, n_all = inside_band(test)
        self.test_inside = fmt.count(n_in, "figures")
        self.test_figures = fmt.count(n_all, "figures")
        self.cal_itl = fmt.percent(med["cal"]["itl_ms"])
        self.cal_ttft = fmt.percent(med["cal"]["ttft_ms"])
        self.cal_tput = fmt.percent(med["cal"]["output_tokens_per_s"])
        self.test_tput = fmt.percent(med["test"]["output_tokens_per_s"])
        self.test_itl = fmt.percent(med["test"]["itl_ms"])
        self.cal_good = fmt.claim(med["cal"]["itl_ms"] <= CAL_BAND and med["cal"]["output_tokens_per_s"] <= CAL_BAND,
                                  f"median ITL error {med['cal']['itl_ms']:.1%}, "
                                  f"throughput {med['cal']['output_tokens_per_s']:.1%}")
        self.test_tput_close = fmt.claim(med["test"]["output_tokens_per_s"] <= 0.20,
                                         f"median test throughput error {med['test']['output_tokens_per_s']:.1%}")
        self.worst_ttft_run = _label(worst_ttft, cat)
        self.worst_ttft = fmt.percent(abs(worst_ttft.error("ttft_ms") or 0))
        self.ttft_under = fmt.claim((worst_ttft.error("ttft_ms") or 0) < -0.5,
                                    f"{worst_ttft.id}: {worst_ttft.error('ttft_ms'):+.0%}")
        self.short_under = fmt.claim(bool(short) and all((r.error("output_tokens_per_s") or 0) < 0 for r in short),
                                     "; ".join(f"{r.id}: {r.error('output_tokens_per_s'):+.0%}" for r in short))


namespace = ReferencePredictionsPage.namespace_of
sources = ReferencePredictionsPage.sources_of
