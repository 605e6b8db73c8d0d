"""The sizing grid's records at the latency target (`records(cat, targets=True)`, as the site's build writes them):
each record's cheapest configuration meeting the scenario's target is the engine's search, priced by hand."""

from __future__ import annotations

import csv
import io

import pytest

from snippets.data.export import engine_catalog
from snippets.engine.search import at_scenario
from snippets.engine.serving import Prediction
from snippets.pages.reference_sizing import target, target_cells, target_words
from snippets.pages.scenario import reference
from snippets.pages.sizing_records import records_csv
from snippets.pages.sizing_target import at_target
from snippets.render import fmt

from ..conftest import repository_catalog

TTFT_MS, TPOT_MS = 2000, 30  # data/scenarios.yaml, reference: AIConfigurator's default objective
H100_PRICE = 2.69  # data/prices.yaml, site_uses: RunPod Community Cloud, the lowest on-demand H100 price (Sep 2026)
CAT = repository_catalog()


def test_a_record_at_the_target_is_the_engines_search_and_its_rent() -> None:
    s = target(reference(CAT), "llama-3.1-70b", "fp8", "h100-sxm")
    want = at_scenario(engine_catalog(CAT), "llama-3.1-70b", "fp8", "reference", accelerator="h100-sxm", sweep=False)
    assert s is not None and s.best is not None and want.best is not None
    t = at_target(s)
    assert t is not None and t["met"]
    assert t["ttft_target"] == {"value": TTFT_MS, "unit": "ms"} and t["tpot_target"] == {"value": TPOT_MS, "unit": "ms"}
    assert t["configuration"] == want.best.label and t["gpus"] == want.best.gpus
    assert t["ttft"]["value"] <= TTFT_MS and t["tpot"]["value"] <= TPOT_MS
    g = t["gpus"]
    rented = g  # the site's H100 price rents one GPU at a time
    assert t["rented_gpus"] == rented
    per_s = t["output_tokens_per_s_per_gpu"]["value"] * g
    assert t["usd_per_mtok_output"]["value"] == pytest.approx(rented * H100_PRICE / (per_s * 3600) * 1e6)


@pytest.mark.parametrize(("model", "mode"), [("llama-3.1-70b", "disaggregated"), ("gpt-oss-120b", "aggregated")])
def test_the_target_cell_is_the_engines_words_with_its_counts_as_figures(model, mode) -> None:
    """The grid's target cell is built from the record's fields (the build's worker processes hand the page records,
    not points): the engine's words for its best point, each count a figure, and its GPUs."""
    s = target(reference(CAT), model, "fp8", "h100-sxm")
    assert s is not None and s.recommended is not None and s.recommended.mode == mode  # both modes checked
    assert s.best is s.recommended and s.saving == 0  # here the recommended is the cheapest: nothing more is said
    t = at_target(s)
    assert t is not None and target_words(t["recommended"]) == s.recommended.words == target_words(t)
    cell, _ = target_cells(t)
    assert isinstance(cell, fmt.Phrase) and cell.text == f"{s.recommended.label} ({s.recommended.gpus:,} GPUs)"
    figs = {k: f.value for k, f in (p for p in cell.parts if not isinstance(p, str))}
    z = s.recommended.prediction
    want = ({"in_flight": z.in_flight} if isinstance(z, Prediction) else
            {"prefill_workers": z.prefill_workers, "decode_workers": z.decode_workers, "in_flight": z.decode.batch})
    assert figs == {**want, "gpus": s.recommended.gpus}


def test_a_cell_whose_cheapest_saves_too_little_shows_the_recommended_and_names_the_cheapest() -> None:
    """gpt-oss-20b FP8 on H100: the cheapest is disaggregated on 34 GPUs (10 one-GPU prefill workers, 3 decode workers
    of 8), about one per cent cheaper than one aggregated 8-GPU replica (TP1 x DP8 x EP8), less than the 10% the
    layout policy asks of a second pool (data/policies.yaml)."""
    s = target(reference(CAT), "gpt-oss-20b", "fp8", "h100-sxm")
    assert s is not None and s.best is not None and s.recommended is not None
    t = at_target(s)
    assert t is not None and t["met"]
    rec = t["recommended"]
    assert (rec["mode"], rec["gpus"]) == ("aggregated", 8) and (t["mode"], t["gpus"]) == ("disaggregated", 34)
    saving = 1 - t["gpu_hours_per_mtok_output"]["value"] / rec["gpu_hours_per_mtok_output"]["value"]
    assert t["cheapest_saving"] == pytest.approx(saving, rel=1e-12) and 0.005 < saving < 0.10
    assert t["disaggregated_min_saving"] == 0.10
    cell, cost = target_cells(t)
    assert isinstance(cell, fmt.Phrase) and isinstance(cost, fmt.Figure)
    assert cell.text == (f"{s.recommended.label} (8 GPUs); the cheapest, disaggregated on 34 GPUs, is "
                         f"{saving * 100:.1f}% cheaper")
    figs = {k: f.value for k, f in (p for p in cell.parts if not isinstance(p, str))}
    assert figs["gpus"] == 8 and figs["cheapest_gpus"] == 34 and figs["cheapest_saving"] == pytest.approx(saving * 100)
    assert cost.value == rec["usd_per_mtok_output"]["value"] == pytest.approx(s.recommended.usd_per_mtok)
    (got,) = csv.DictReader(io.StringIO(records_csv([{"model": "gpt-oss-20b", "precision": "fp8",
                                                        "accelerator": "h100-sxm", "deployable": False, "why_not": "",
                                                        "at_target": t}])))
    assert (int(got["target_gpus"]), int(got["recommended_gpus"])) == (34, 8)
    assert float(got["cheapest_saving"]) == pytest.approx(saving, rel=1e-3)


def test_a_record_that_misses_says_which_target_binds() -> None:
    # Llama 3.1 405B in BF16 decodes one token in more than 30 ms on any H100 layout of up to eight nodes
    t = at_target(target(reference(CAT), "llama-3.1-405b", "bf16", "h100-sxm"))
    assert t is not None and not t["met"] and t["binding"] == "tpot_ms" and "time per output token" in t["why"]


def test_the_csv_carries_the_target() -> None:
    t = at_target(target(reference(CAT), "llama-3.1-8b", "fp8", "h100-sxm"))
    assert t is not None and t["met"]
    rec = {"model": "llama-3.1-8b", "precision": "fp8", "accelerator": "h100-sxm", "deployable": False,
           "why_not": "", "at_target": t}
    (got,) = csv.DictReader(io.StringIO(records_csv([rec])))
    assert got["target_met"] == "True" and int(got["target_gpus"]) == t["gpus"]
    assert float(got["target_usd_per_mtok_output"]) == pytest.approx(t["usd_per_mtok_output"]["value"], rel=1e-3)
