"""The predictions page beside other predictors: the errors other tools publish for themselves (`data/predictors.yaml`)
next to the engine's on its own test rows (docs/reference/predictions.md prints the table;
`snippets.pages.reference_predictions` adds the claims to its namespace).

The tools were measured on their own runs, which the site does not hold: the table sets the figures side by side,
and the page says what differs. An end-to-end latency error is set beside the engine's throughput error: with a
fixed number of requests in flight, throughput is that number times each request's output tokens over its
end-to-end latency, so the two errors are one error seen from either side.
"""

from __future__ import annotations

from snippets.calibration import Row, summary
from snippets.data import Catalog, PredictorAccuracy, TimeModel
from snippets.pages.calibrated import rows
from snippets.pages.reference_common import source_links
from snippets.render import fmt

SITE_METRIC = {"e2e": "output_tokens_per_s", "ttft": "ttft_ms", "itl": "itl_ms"}
"""For each error another tool publishes, the engine's metric set beside it."""
HEADERS = ("Predictor", "How it predicts", "Measured against", "Runs", "Each figure is",
           "End to end (the site: throughput)", "TTFT", "ITL", "Figures", "Source")
SITE = "This site's engine, on its test rows"


def _site(test: list[Row], accelerator: str | None = None) -> dict[str, float]:
    """The engine's median |error| on the test rows (those on `accelerator` alone, if one is given), by the other
    tools' metric names; a metric no row measures is left out."""
    if accelerator is not None:
        test = [r for r in test if r.measurement.accelerator == accelerator]
    return {metric: s[0] for metric, ours in SITE_METRIC.items() if (s := summary(test, ours)) is not None}


def _cell(p: PredictorAccuracy, metric: str, entry: str) -> fmt.Cell:
    e = p.error(metric)
    if e is None:
        return "not recorded"
    fig = fmt.percent(e, 1)
    return fmt.Figure(fig.value, fig.unit, fig.text, f"data/predictors.yaml {entry}")


def predictors_table(cat: Catalog) -> str:
    """The engine's test-row medians, then the same on each GPU a published evaluation reports alone, then each
    published evaluation of another tool, in data/ order."""
    test = rows(cat, "test")
    site = _site(test)
    lines: list[list[fmt.Cell]] = [[
        SITE, "Published efficiencies and timings, two fitted factors; no profiling (above)",
        "Other publications' runs: vendors' tables, benchmark sites, engine cookbooks",
        fmt.count(len(test), "rows"),
        "Per row, the error of the figure its source publishes; across the rows, the median of its size",
        *(fmt.percent(site[m], 1) if m in site else "—" for m in SITE_METRIC),
        "computed", fmt.Md("[the rows](prediction-rows.md)")]]
    # the engine on each GPU an evaluation reports alone, so a GPU's figures stand beside the same GPU's
    for acc in dict.fromkeys(p.accelerator for p in cat.predictors.values() if p.accelerator is not None):
        on = [r for r in test if r.measurement.accelerator == acc]
        mine = _site(on)
        lines.append([f"{SITE} on the {cat.accelerators[acc].name}", "The same engine",
                      "The test rows above that ran on this GPU", fmt.count(len(on), "rows"),
                      "As above, over this GPU's rows",
                      *(fmt.percent(mine[m], 1) if m in mine else "none measured" for m in SITE_METRIC),
                      "computed", fmt.Md("[the rows](prediction-rows.md)")])
    for entry in cat.predictors:
        p = cat.predictors[entry]  # looked up by id: the page's sources list names each entry shown
        lines.append([p.predictor, p.method, p.evaluated_on,
                      fmt.count(p.experiments, "runs") if p.experiments is not None else "not stated", p.statistic,
                      *(_cell(p, m, entry) for m in SITE_METRIC),
                      "read off a chart" if p.read_from == "chart" else "printed", source_links(p)])
    return fmt.table("predictors", list(HEADERS), lines, align="lllllrrrll")


def beside_predictors(cat: Catalog, test: list[Row]) -> dict[str, object]:
    """The claims the page makes of the table: where the engine's test-row medians fall among the published figures
    of BLIS (its own post, and on each GPU its fit never saw, against the engine's rows on that GPU) and of
    AIConfigurator (in BLIS's comparison)."""
    site = _site(test)
    tput, itl, ttft = site["e2e"], site["itl"], site["ttft"]
    pred = cat.predictors
    blis, aic = pred["blis-trained-physics"], pred["aiconfigurator-showdown"]
    a100, l40s = pred["blis-trained-physics-a100"], pred["blis-trained-physics-l40s"]
    # the same GPU's rows beside BLIS's figure on it: throughput against end to end, as in the table
    on_a100 = _site(test, a100.accelerator or "").get("e2e", 0.0)
    on_l40s = _site(test, l40s.accelerator or "").get("e2e", 0.0)
    # the chips whose own NCCL timings price their all-reduce (the reference time model's chip_nccl): not the L40S
    tm = cat.policies[cat.scenarios["reference"].time_model]
    timed = [cat.latencies[cn.points].accelerator for cn in tm.chip_nccl] if isinstance(tm, TimeModel) else []
    a100_e2e, l40s_e2e = a100.error("e2e") or 0.0, l40s.error("e2e") or 0.0
    blis_e2e, aic_e2e = blis.error("e2e") or 0.0, aic.error("e2e") or 0.0
    itls = [e for p in pred.values() if (e := p.error("itl")) is not None]
    ttfts = [e for p in pred.values() if (e := p.error("ttft")) is not None]
    return {
        "predictor_tput_between": fmt.claim(
            blis_e2e < tput < aic_e2e,
            f"test throughput {tput:.1%} against BLIS {blis_e2e:.1%} and AIConfigurator {aic_e2e:.1%} end to end"),
        "predictor_a100_ahead": fmt.claim(
            0 < on_a100 < a100_e2e, f"test throughput on the A100 {on_a100:.1%} against BLIS there {a100_e2e:.1%}"),
        "predictor_l40s_behind": fmt.claim(
            on_l40s > l40s_e2e > 0, f"test throughput on the L40S {on_l40s:.1%} against BLIS there {l40s_e2e:.1%}"),
        "predictor_l40s_untimed": fmt.claim(
            bool(timed) and all(acc != l40s.accelerator for acc in timed),
            f"chips with their own NCCL timings: {', '.join(str(a) for a in timed)}"),
        "predictor_itl_behind": fmt.claim(
            bool(itls) and itl > max(itls), f"test ITL {itl:.1%} against {', '.join(f'{e:.1%}' for e in itls)}"),
        "predictor_ttft_behind": fmt.claim(
            bool(ttfts) and ttft > max(ttfts), f"test TTFT {ttft:.1%} against {', '.join(f'{e:.1%}' for e in ttfts)}"),
    }
