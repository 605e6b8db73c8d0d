"""The cost page, read back from the built HTML: prices from data/prices.yaml and the page's own division, and
the cost at the chat scenario's latency target as the engine's search finds it.

$ per million output tokens = (rented GPUs x $/GPU-hour ÷ replicas per rental) ÷ (output tokens/s x 3600) x 1e6.
The throughputs are the time model's, with fitted factors: the snapshot holds them; here the page's arithmetic
on them is checked, and the one choice it claims (the cheapest layout) against the engine's alternatives.
"""

from __future__ import annotations

import pytest

from snippets.engine import Layout
from snippets.engine.search import at_scenario
from snippets.engine.timing import predict
from snippets.pages.cost.common import in_node
from snippets.pages.scenario import reference

from ..conftest import Build, figures, text, value

N_IN, N_OUT = 1024, 1024  # data/scenarios.yaml, chat: InferenceX's 1k1k
TTFT_MS, TPOT_MS = 2000, 30  # its target: AIConfigurator's default objective
H100_PRICE, A100_PRICE = 2.69, 1.39  # data/prices.yaml, site_uses: RunPod Community Cloud, the lowest on demand (Sep 2026)


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("cost/index.html")


@pytest.fixture(scope="module")
def serving(built: Build):
    """Serving tables (docs/reference/serving.md), where the page's whole cost table is."""
    return built.page("reference/serving/index.html")


@pytest.fixture(scope="module")
def ref(catalog):
    return reference(catalog, "chat")


def deployed(ref, model: str, precision: str, acc: str, tp: int):
    return ref.deployment(model, precision, accelerator=acc, layout=Layout(tp), concurrency=1,
                          context_tokens=N_IN + N_OUT)


def per_mtok(usd_per_hour: float, tokens_per_s: float) -> float:
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def test_worked_example_is_the_division(page, ref) -> None:
    # Llama 3.1 70B FP8 on H100, TP4: four GPUs rented one at a time at $2.69, $10.76 an hour
    assert value(page, "worked.replica_gpus") == 4
    assert value(page, "worked.replica_hour") == pytest.approx(4 * H100_PRICE)
    assert not [k for k in figures(page) if k in ("worked.rental_hour", "worked.replicas", "worked.unit")]
    assert value(page, "worked.most_cost") == pytest.approx(per_mtok(4 * H100_PRICE, value(page, "worked.most_tps")))
    assert value(page, "worked.most_cost") == pytest.approx(
        value(page, "worked.replica_hour") / value(page, "worked.most_tph"))
    assert value(page, "worked.most_tph") == pytest.approx(value(page, "worked.most_tps") * 3600 / 1e6)
    # one request at a time pays the whole replica: dearer per token than a full batch
    assert value(page, "worked.one_cost") > value(page, "worked.most_cost") and value(page, "worked.most_in_flight") > 1


def test_cost_table_rows_at_the_target_are_the_engines_search(page, serving, ref) -> None:
    assert not [k for k in figures(page) if k.startswith("cost[")]  # on the reference page, linked from here
    assert any(a["href"] == "../reference/serving/#cost-per-token-by-model-precision-and-accelerator"
               for a in page.select("article a[href]"))
    page = serving
    rows = {k.split("][")[0][len("cost["):] for k in figures(page) if k.startswith("cost[")}
    assert len(rows) >= 25
    met = 0
    for label in ("Llama 3.1 70B FP8 on H100 SXM", "Llama 3.1 70B FP8 on A100 80GB SXM", "Llama 3.1 8B FP8 on MI300X"):
        model, precision, acc = {"Llama 3.1 70B": "llama-3.1-70b", "Llama 3.1 8B": "llama-3.1-8b"}[
            label.split(" FP8")[0]], "fp8", {"H100 SXM": "h100-sxm", "A100 80GB SXM": "a100-80gb-sxm",
                                             "MI300X": "mi300x"}[label.split(" on ")[1]]
        s = at_scenario(ref.eng, model, precision, "chat", accelerator=acc, sweep=False)
        assert s.best is not None and s.recommended is not None
        row = f"cost[{label}]"
        rec = s.recommended
        assert value(page, f"{row}[Output $/M at the target]") == pytest.approx(rec.usd_per_mtok, rel=1e-6)
        assert value(page, f"{row}[GPUs]") == rec.gpus and value(page, f"{row}[TPOT]") <= TPOT_MS
        # the time between tokens with its band: where 80 % of its regime's test measurements fell
        z = rec.prediction
        lo, hi = (v * 1e3 for v in z.tpot_range)
        assert text(page, f"{row}[TPOT]") == f"{z.tpot_s * 1e3:.1f} ms, {lo:.1f}–{hi:.1f}"
        assert figures(page)[f"{row}[TPOT]"]["title"] == z.tpot_band.basis("tpot_ms", z.regime)
        cheapest = f"{row}[Recommended meeting the target].cheapest_gpus"
        if s.saving > 0:  # the cheapest saves less than the layout policy asks of a second pool: named beside it
            assert value(page, cheapest) == s.best.gpus and s.best.mode == "disaggregated"
            assert value(page, f"{row}[Recommended meeting the target].cheapest_saving") == pytest.approx(
                s.saving * 100, rel=1e-9)
        else:
            assert cheapest not in figures(page)
        met += 1
    # Llama 3.1 8B FP8 on MI300X: disaggregated on 7 GPUs is the cheapest by under 1%; one aggregated GPU is shown
    s = at_scenario(ref.eng, "llama-3.1-8b", "fp8", "chat", accelerator="mi300x", sweep=False)
    assert s.best is not None and s.recommended is not None and 0 < s.saving < 0.10
    assert (s.recommended.mode, s.recommended.gpus) == ("aggregated", 1) and s.best.gpus > 1
    assert value(page, "differ_rows") >= 1
    for label in rows:
        key = f"cost[{label}][TPOT]"
        if key in figures(page):
            assert value(page, key) <= TPOT_MS
    assert met == 3


def test_the_worked_model_at_the_target(page, ref) -> None:
    s = at_scenario(ref.eng, "llama-3.1-70b", "fp8", "chat", accelerator="h100-sxm", sweep=False)
    assert s.best is not None
    assert value(page, "worked.at_cost") == pytest.approx(s.best.usd_per_mtok, rel=1e-6)
    assert value(page, "w_at_gpus") == s.best.gpus
    assert value(page, "worked.ttft_target") == TTFT_MS and value(page, "worked.tpot_target") == TPOT_MS
    # its rent by hand: its GPUs, rented one at a time at $2.69 a GPU-hour
    rented = s.best.gpus
    assert s.best.usd_per_mtok == pytest.approx(per_mtok(rented * H100_PRICE, s.best.output_tokens_per_s))
    assert value(page, "w_at_ratio") == pytest.approx(
        value(page, "worked.at_cost") / value(page, "worked.most_cost"), rel=1e-3)


def test_table_keeps_the_cheapest_layout_in_one_node(serving, ref) -> None:
    row = "cost[Llama 3.1 70B FP8 on H100 SXM]"
    shown = value(serving, f"{row}[Output $/M, KV cache full]")
    for tp in (2, 4, 8):
        d = deployed(ref, "llama-3.1-70b", "fp8", "h100-sxm", tp)
        assert shown <= predict(d, d.max_concurrency, N_IN, N_OUT).usd_per_mtok_output * (1 + 1e-9)  # data-value: 10 digits


def test_replicas_against_tp8(page, ref) -> None:
    tp2, tp8 = deployed(ref, "llama-3.1-70b", "fp8", "h100-sxm", 2), deployed(ref, "llama-3.1-70b", "fp8", "h100-sxm", 8)
    assert in_node(tp2) == 4 and in_node(tp8) == 1 and value(page, "split_gpus") == tp2.gpus_per_node == 8
    for name in ("4 × TP2", "1 × TP8"):  # the node's eight GPUs, its replicas together
        row = f"split[{name}, most in flight]"
        assert value(page, f"{row}[Output $/Mtok]") == pytest.approx(
            per_mtok(8 * H100_PRICE, value(page, f"{row}[Output]")))
    assert value(page, "big_itl1") < value(page, "small_itl1")           # TP8 is faster for one user
    assert value(page, "small_cost1") < value(page, "big_cost1")         # four replicas serve four users


def test_every_prediction_in_the_split_and_load_tables_carries_its_range(page, ref) -> None:
    """Each time, throughput and cost the two tables predict has beside it where 80 % of its regime's test
    measurements fell, as the engine bands it; a cost's range is its throughput's turned over, scaled alike."""
    d = deployed(ref, "llama-3.1-70b", "fp8", "h100-sxm", 2)
    x = predict(d, max(1, d.max_concurrency), N_IN, N_OUT)
    row = "split[4 × TP2, most in flight]"
    lo, hi = (4 * v for v in x.throughput_range)
    assert text(page, f"{row}[Output]") == f"{4 * x.output_tokens_per_s:,.0f} tokens/s, {lo:,.0f}–{hi:,.0f}"
    assert figures(page)[f"{row}[Output]"]["title"] == x.throughput_band.basis("output_tokens_per_s", x.regime)
    lo, hi = (v * 1e3 for v in x.ttft_range)
    digits = 0 if x.ttft_s >= 0.1 else 1
    assert text(page, f"{row}[TTFT]") == f"{x.ttft_s * 1e3:,.{digits}f} ms, {lo:,.{digits}f}–{hi:,.{digits}f}"
    assert figures(page)[f"{row}[TTFT]"]["title"] == x.ttft_band.basis("ttft_ms", x.ttft_regime)
    lo, hi = (v * 1e3 for v in x.tpot_range)
    assert text(page, f"{row}[ITL]") == f"{x.tpot_s * 1e3:.1f} ms, {lo:.1f}–{hi:.1f}"
    # the cost: the rent over the throughput range's ends, the fast end the cheap one
    cost = value(page, f"{row}[Output $/Mtok]")
    tps_lo, tps_hi = x.throughput_range
    low, high = cost * x.output_tokens_per_s / tps_hi, cost * x.output_tokens_per_s / tps_lo
    assert text(page, f"{row}[Output $/Mtok]").startswith(f"${cost:.3f}, {low:.3f}–{high:.3f} (")
    assert "the throughput's range, inverted" in figures(page)[f"{row}[Output $/Mtok]"]["title"]
    # the load table: the worked deployment's range at each share of its peak, the cost's divided alike
    peak, half = "load[peak: the KV cache full]", "load[fleet at 50% of peak (illustrative)]"
    assert value(page, f"{half}[Output]") == pytest.approx(value(page, f"{peak}[Output]") / 2)
    ends = [text(page, f"{k}[Output $/Mtok]").split(", ")[1].split(" (")[0].split("–") for k in (peak, half)]
    for a, b in zip(*ends, strict=True):
        assert float(b) == pytest.approx(2 * float(a), abs=0.011)


def test_the_hour_and_the_token_rank_differently(page, catalog) -> None:
    used = {p.accelerator: p.price.value for p in catalog.prices.values() if p.site_uses}
    assert value(page, "cheap_hour_price") == min(used.values()) == 1.39  # RunPod's Community Cloud A100, 2026-09-25
    # the most inverted pair: the cheaper hour makes the dearer token
    assert value(page, "inv_hour_price") < value(page, "inv_tok_price")
    assert value(page, "inv_hour_cost") > value(page, "inv_tok_cost")
    assert value(page, "inv_gap") == pytest.approx(value(page, "inv_hour_cost") / value(page, "inv_tok_cost"))
    assert value(page, "h100_cost") < value(page, "a100_cost")
    body = " ".join(page.select_one("article").get_text().split())
    assert "Ranked by the price of an hour and by the price of a token" in body


def test_every_cost_shows_the_month_of_its_price(page) -> None:
    """RunPod's H100 and A100 prices come from the snapshot of 2026-09-25, Vultr's MI300X from 2026-11-30: each
    dollar figure carries its price's month beside it, and its tooltip the reading."""
    assert text(page, "h100_price") == "$2.69 (Sep 2026 price)"
    assert text(page, "a100_price") == "$1.39 (Sep 2026 price)"
    assert text(page, "cheap_hour_price") == "$1.39 (Sep 2026 price)"
    # the rent lever's whole-instance offer is Lambda's, read from the same snapshot, not a price the site uses
    assert text(page, "whole_price") == "$3.99 (Sep 2026 price)" and value(page, "whole_unit") == 8
    dollars = [s for s in page.select("article span.sa-fig") if s.get_text().startswith("$")]
    assert len(dollars) > 40
    for s in dollars:
        assert s.get_text().endswith(("(Sep 2026 price)", "(Nov 2026 price)")), s
        assert "read 2026-" in s["title"], s
    assert value(page, "prices[NVIDIA H100 SXM][$/GPU-hour]") == H100_PRICE


def test_utilization_from_the_nim_plateau(page, catalog) -> None:
    sweep = [m for k, m in catalog.measurements.items() if k.startswith("nim180-llama33-70b-fp8-2xh100-in5000-out500-c")]
    plateau = max(m.output_tokens_per_s for m in sweep)
    within = max((m for m in sweep if m.ttft_ms <= 1000), key=lambda m: m.concurrency)
    assert value(page, "nim_plateau") == pytest.approx(plateau)
    assert value(page, "nim_c") == within.concurrency == 50
    assert value(page, "nim_share") == pytest.approx(within.output_tokens_per_s / plateau * 100)
    peak = value(page, "worked.most_cost")
    assert value(page, "w_cost_nim") == pytest.approx(peak / (within.output_tokens_per_s / plateau))
    assert value(page, "w_cost_half") == pytest.approx(2 * peak)


def test_chart_and_prices_with_dates(page, serving) -> None:
    chart = next(f for f in page.select("figure.sa-figure") if f.find("svg")["aria-labelledby"].startswith("cost-chart"))
    bars = [k for k in figures(serving) if k.startswith("cost[Llama 3.1 70B ") and k.endswith("[Output $/M at the target]")]
    assert len(chart.select("svg.sa-chart--narrow rect")) == len(bars) >= 8  # each 70B row that meets the target
    body = page.select_one("article").get_text()
    assert "2026-11-30" in body and "indicative" in body


def test_claims_hold_and_answers_are_folded(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 12
    for c in claims:
        assert c["title"].startswith("Checked at build time")
    questions = page.find(id="check-your-understanding").find_next("ol").find_all("li", recursive=False)
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) == len(questions) == 5
    assert text(page, "w_cost_nim") in answers[0].get_text()


def test_kernel_fractions_are_named_from_the_data(page, catalog) -> None:
    tm = catalog.policies[catalog.scenarios["chat"].time_model]
    vendors = sorted(tm.vendor_kernel_fraction)
    assert vendors == ["AMD"]  # data/policies.yaml, measured-fractions: the one vendor fraction fitted
    body = " ".join(page.select_one("article").get_text().split())
    assert "Its few fitted factors (the host's time per step, AMD's kernel fraction) come from" in body


def test_links(page, built: Build) -> None:
    hrefs = {a["href"] for a in page.select("article a[href]")}
    for target in ("../hbm/", "../precision/", "../interconnect/", "../parallelism/", "../reference/predictions/"):
        assert any(h.startswith(target) for h in hrefs), target
    home = {a["href"] for a in built.page("index.html").select("article a[href]")}
    assert any(h.startswith("cost/") for h in home)
