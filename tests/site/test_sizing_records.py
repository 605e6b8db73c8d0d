"""The sizing grid as the build publishes it (reference/sizing.json, reference/sizing.csv and the page's table): each
record carries the cheapest configuration meeting the reference scenario's latency target and the recommended one
(the page shows the recommended, and names the cheapest where it differs), and they are the engine's search for that
record (`snippets.engine.search.at_scenario`), priced by hand for one."""

from __future__ import annotations

import csv
import json

import pytest
from bs4 import BeautifulSoup

from snippets.data.export import engine_catalog
from snippets.engine.search import at_scenario

from ..conftest import Build, figures, text, value

TTFT_MS, TPOT_MS = 2000, 30  # data/scenarios.yaml, reference: AIConfigurator's default objective
H100_PRICE = 2.69  # data/prices.yaml, site_uses: RunPod Community Cloud, the lowest on-demand H100 price (Sep 2026)
PICKED = [("llama-3.1-70b", "fp8", "h100-sxm"), ("mixtral-8x7b", "fp8", "mi300x"), ("qwen3-32b", "int4-g128", "l40s"),
          ("llama-3.1-405b", "bf16", "h100-sxm"), ("gpt-oss-20b", "int4-g128", "gb300")]


@pytest.fixture(scope="module")
def recs(built: Build) -> dict[tuple[str, str, str], dict]:
    doc = json.loads((built.site / "reference" / "sizing.json").read_text(encoding="utf-8"))
    return {(r["model"], r["precision"], r["accelerator"]): r for r in doc["records"]}


@pytest.fixture(scope="module")
def grid(built: Build) -> BeautifulSoup:
    """The sizing page, parsed once for this module's tests (three megabytes; they only read it)."""
    return built.page("reference/sizing/index.html")


@pytest.fixture(scope="module")
def rows(built: Build) -> dict[tuple[str, str, str], dict[str, str]]:
    with (built.site / "reference" / "sizing.csv").open(encoding="utf-8") as f:
        return {(r["model"], r["precision"], r["accelerator"]): r for r in csv.DictReader(f)}


def test_every_searched_record_carries_the_target(recs) -> None:
    with_target = [r for r in recs.values() if r["at_target"] is not None]
    assert len(with_target) > 1000
    met = [r for r in with_target if r["at_target"]["met"]]
    assert 0 < len(met) < len(with_target)  # some meet it, some cannot
    for r in with_target:
        t = r["at_target"]
        assert t["ttft_target"] == {"value": TTFT_MS, "unit": "ms"} and t["tpot_target"] == {"value": TPOT_MS, "unit": "ms"}
        if t["met"]:
            assert t["ttft"]["value"] <= TTFT_MS and t["tpot"]["value"] <= TPOT_MS
        else:
            assert t["binding"] in ("ttft_ms", "tpot_ms", None) and t["why"]
    for r in recs.values():
        if r["at_target"] is None:  # not searched: no node for the accelerator, or a format its chip refuses
            assert r["why_not"] == "no node in data" or r["why_not"].startswith("refused")


@pytest.mark.parametrize("q", PICKED, ids=lambda q: "-".join(q))
def test_a_record_at_the_target_is_the_engines_search(recs, rows, catalog, q) -> None:
    s = at_scenario(engine_catalog(catalog), q[0], q[1], "reference", accelerator=q[2], sweep=False)
    t, row = recs[q]["at_target"], rows[q]
    assert t is not None and t["met"] == (s.best is not None) and row["target_met"] == str(s.best is not None)
    if s.best is None:
        assert s.why is not None and t["binding"] == s.why.binding and t["why"] == s.why.text
        assert row["target_configuration"] == ""
        return
    b = s.best
    assert (t["configuration"], t["gpus"], t["mode"]) == (b.label, b.gpus, b.mode)
    assert t["ttft"]["value"] == pytest.approx(b.ttft_s * 1e3, rel=1e-12)
    assert t["tpot"]["value"] == pytest.approx(b.tpot_s * 1e3, rel=1e-12)
    assert row["target_configuration"] == b.label and int(row["target_gpus"]) == b.gpus
    if b.usd_per_mtok is None:  # an accelerator without a price the site uses
        assert t["usd_per_mtok_output"] is None and row["target_usd_per_mtok_output"] == ""
        return
    assert t["usd_per_mtok_output"]["value"] == pytest.approx(b.usd_per_mtok, rel=1e-12)
    assert float(row["target_usd_per_mtok_output"]) == pytest.approx(b.usd_per_mtok, rel=1e-3)
    # each prediction with its range, as the engine bands it; the CSV's `_low` and `_high` columns the same
    z = b.prediction
    assert t["ttft"]["range"] == pytest.approx([v * 1e3 for v in z.ttft_range], rel=1e-12)
    assert t["tpot"]["range"] == pytest.approx([v * 1e3 for v in z.tpot_range], rel=1e-12)
    assert t["output_tokens_per_s_per_gpu"]["range"] == pytest.approx([v / z.gpus for v in z.throughput_range])
    assert b.usd_per_mtok_range is not None
    assert t["usd_per_mtok_output"]["range"] == pytest.approx(list(b.usd_per_mtok_range), rel=1e-12)
    for k, rng in (("target_tpot_ms", t["tpot"]["range"]), ("target_usd_per_mtok_output", b.usd_per_mtok_range)):
        assert [float(row[f"{k}_low"]), float(row[f"{k}_high"])] == pytest.approx(list(rng), rel=1e-3)
    rec = s.recommended
    assert rec is not None and (t["recommended"]["configuration"], t["recommended"]["gpus"]) == (rec.label, rec.gpus)
    assert row["recommended_configuration"] == rec.label and t["cheapest_saving"] == pytest.approx(s.saving)


def test_one_record_priced_by_hand(recs) -> None:
    # Llama 3.1 70B FP8 on H100 SXM at 6,144 tokens in and 2,048 out: its GPUs, rented one at a time at $2.69 a
    # GPU-hour, divided by the output tokens they make in an hour
    t = recs[("llama-3.1-70b", "fp8", "h100-sxm")]["at_target"]
    g = t["gpus"]
    rented = g
    assert t["rented_gpus"] == rented
    tokens_per_hour = t["output_tokens_per_s_per_gpu"]["value"] * g * 3600
    assert t["usd_per_mtok_output"]["value"] == pytest.approx(rented * H100_PRICE / tokens_per_hour * 1e6)
    assert t["tpot"]["value"] <= TPOT_MS and t["ttft"]["value"] <= TTFT_MS


def test_the_page_shows_the_target_column(grid: BeautifulSoup, recs) -> None:
    page = grid
    head = [th.get_text() for th in page.select("table thead th")]
    assert "Recommended at the target" in head and "$ per M tokens at the target" in head
    t = recs[("llama-3.1-70b", "fp8", "h100-sxm")]["at_target"]
    name = "grid[Llama 3.1 70B · FP8 · NVIDIA H100 SXM][$ per M tokens at the target]"
    assert value(page, name) == pytest.approx(t["recommended"]["usd_per_mtok_output"]["value"], rel=1e-9)
    usd = t["recommended"]["usd_per_mtok_output"]
    lo, hi = usd["range"]
    assert text(page, name) == f"${usd['value']:,.2f}, {lo:,.2f}–{hi:,.2f}"
    # one sequence's time per token and cost, each with its range, the record's
    one = recs[("llama-3.1-70b", "fp8", "h100-sxm")]["tpot_ms_c1"]
    lo, hi = one["range"]
    assert text(page, "grid[Llama 3.1 70B · FP8 · NVIDIA H100 SXM][Time per token]") == (
        f"{one['value']:,.1f} ms, {lo:,.1f}–{hi:,.1f}")
    shown = [k for k in figures(page) if k.endswith("[$ per M tokens at the target]")]
    priced = [r for r in recs.values() if (a := r["at_target"]) and a["met"] and a["usd_per_mtok_output"]]
    assert len(shown) == len(priced)
    met = sum(1 for r in recs.values() if r["at_target"] and r["at_target"]["met"])
    assert value(page, "target.met") == met
    body = page.select_one("article").get_text()
    assert "none: the time per token binds" in body


@pytest.mark.parametrize("q", PICKED, ids=lambda q: "-".join(q))
def test_the_target_cell_shows_the_records_counts_as_figures(grid: BeautifulSoup, recs, catalog, q) -> None:
    """The recommended configuration at the target, in the engine's words (the record's `configuration`), its counts
    figures a reader can follow: the workers, the requests in flight, the GPUs."""
    page = grid
    t = recs[q]["at_target"]
    cell = f"grid[{catalog.models[q[0]].name} · {catalog.precisions[q[1]].name} · {catalog.accelerators[q[2]].name}]"
    cell += "[Recommended at the target]"
    shown = {k.removeprefix(cell + "."): v for k, v in figures(page).items() if k.startswith(cell + ".")}
    if not t["met"]:
        assert not shown
        return
    assert t["cheapest_saving"] == 0  # these cells recommend the cheapest
    t = t["recommended"]
    want = {"gpus": t["gpus"]}
    if t["mode"] == "aggregated":
        want["in_flight"] = t["in_flight"]
    else:
        want.update(prefill_workers=t["prefill_workers"], decode_workers=t["decode_workers"],
                    in_flight=t["decode_batch"])
    assert {k: float(v["data-value"]) for k, v in shown.items()} == want
    td = shown["gpus"].find_parent("td")
    assert td.get_text() == f"{t['configuration']} ({t['gpus']:,} GPUs)"
    n = want["in_flight"]
    assert f"{n:,} request{'s' * (n > 1)} in flight" in t["configuration"]


def test_every_met_cell_has_its_gpus_as_a_figure(grid: BeautifulSoup, recs) -> None:
    page = grid
    gpus = [k for k in figures(page) if k.endswith("[Recommended at the target].gpus")]
    assert len(gpus) == sum(1 for r in recs.values() if r["at_target"] and r["at_target"]["met"])
    cheapest = [k for k in figures(page) if k.endswith("[Recommended at the target].cheapest_gpus")]
    differ = [r for r in recs.values() if r["at_target"] and r["at_target"]["met"] and r["at_target"]["cheapest_saving"]]
    assert len(cheapest) == len(differ) == value(page, "target.differ") > 0
    for r in differ:  # only a disaggregated cheapest saving less than the policy asks is passed over
        t = r["at_target"]
        assert t["mode"] == "disaggregated" and t["recommended"]["mode"] == "aggregated"
        assert 0 < t["cheapest_saving"] < t["disaggregated_min_saving"] == 0.10


def test_gpt_oss_20b_fp8_on_h100_recommends_one_replica_and_names_the_cheapest(grid: BeautifulSoup, recs) -> None:
    """A cell whose cheapest is disaggregated on 34 H100, about one per cent cheaper than one aggregated 8-GPU replica
    (TP1 x DP8 x EP8); the policy asks 10% of a second pool, so the cell recommends the 8 GPUs."""
    page = grid
    t = recs[("gpt-oss-20b", "fp8", "h100-sxm")]["at_target"]
    assert (t["mode"], t["gpus"]) == ("disaggregated", 34)
    assert (t["recommended"]["mode"], t["recommended"]["gpus"]) == ("aggregated", 8)
    cell = "grid[gpt-oss-20b · FP8 · NVIDIA H100 SXM][Recommended at the target]"
    assert value(page, cell + ".gpus") == 8 and value(page, cell + ".cheapest_gpus") == 34
    saving = value(page, cell + ".cheapest_saving")
    assert saving == pytest.approx(t["cheapest_saving"] * 100) and 0.5 < saving < 10
    td = figures(page)[cell + ".gpus"].find_parent("td")
    assert td.get_text().startswith("aggregated ") and f"is {saving:.1f}% cheaper" in td.get_text()
    cost = value(page, "grid[gpt-oss-20b · FP8 · NVIDIA H100 SXM][$ per M tokens at the target]")
    assert cost == pytest.approx(t["recommended"]["usd_per_mtok_output"]["value"], rel=1e-9)
