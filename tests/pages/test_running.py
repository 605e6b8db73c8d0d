"""The running example's banner, without a build: it names the scenario's figures and the engine's pick, and every
Foundations page has a departure sentence."""

from __future__ import annotations

import re

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.search import at_scenario
from snippets.engine.serving import DisaggPrediction
from snippets.pages.running import DEPARTURES, MODEL, PAGES, PRECISION, SCENARIO, RunningExample, banner


def test_every_page_has_a_departure() -> None:
    assert set(DEPARTURES) == set(PAGES)


def test_an_unknown_page_is_refused(catalog: Catalog) -> None:
    with pytest.raises(ValueError, match="not a Foundations page"):
        banner(catalog, "calculator")


def test_the_example_is_the_scenarios_and_the_engines(catalog: Catalog) -> None:
    sc = catalog.scenarios[SCENARIO]
    x = RunningExample(catalog)
    assert (x.n_in.value, x.n_out.value) == (sc.input_tokens, sc.output_tokens)
    # the scenario's target, held in seconds (data/scenarios.yaml writes 2000 ms and 30 ms), shown in ms
    assert (x.ttft_target.value, x.ttft_target.unit) == (sc.target.ttft * 1e3, "ms") == (2000, "ms")
    assert (x.tpot_target.value, x.tpot_target.unit) == (sc.target.tpot * 1e3, "ms") == (30, "ms")
    s = at_scenario(engine_catalog(catalog), MODEL, PRECISION, SCENARIO, sweep=False)
    assert s.best is not None and x.config is not None and x.gpus.value == s.best.gpus
    assert x.config.text == s.best.label  # the engine's words, each count written as its figure shows it
    assert s.best.ttft_s * 1e3 <= x.ttft_target.value and s.best.tpot_s * 1e3 <= x.tpot_target.value


def test_the_picks_counts_are_figures_of_the_engines(catalog: Catalog) -> None:
    """Each count of the pick is a figure the reader can follow (`running.config.<key>`), the engine's number; the
    words say what the count is: requests in flight on each decode worker, not "at 409 each"."""
    s = at_scenario(engine_catalog(catalog), MODEL, PRECISION, SCENARIO, sweep=False)
    assert s.best is not None
    text = banner(catalog, "hbm")
    spans = {m[1]: float(m[2]) for m in re.finditer(
        r'<span class="sa-fig" data-name="running\.config\.([a-z&#0-9;]+)" data-value="([0-9.e+]+)"', text)}
    z = s.best.prediction
    if isinstance(z, DisaggPrediction):
        assert spans == {"prefill&#95;workers": z.prefill_workers, "decode&#95;workers": z.decode_workers,
                         "in&#95;flight": z.decode.batch}
        n = z.decode.batch
        assert f">{n:,}</span> request{'s' * (n > 1)} in flight on each decode worker**" in text
    else:
        assert spans == {"in&#95;flight": z.in_flight}
        assert f">{z.in_flight:,}</span> request{'s' * (z.in_flight > 1)} in flight**" in text
    assert " each**" not in text and "at " not in text.split("engine's pick on the ")[1].split("**")[1]


@pytest.mark.parametrize("page", PAGES)
def test_the_banner_is_one_admonition(catalog: Catalog, page: str) -> None:
    text = banner(catalog, page)
    assert text.startswith('!!! example ""\n    **Running example:** ')
    body = text.splitlines()[1:]
    assert all(line.startswith("    ") or not line for line in body)
    assert "**This page**" in text
