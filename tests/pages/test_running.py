"""The running example's banner, without a build: it names the scenario's figures and the engine's pick, and every
Foundations page has a departure sentence."""

from __future__ import annotations

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.search import at_scenario
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
    assert x.ttft_target.value == sc.target.ttft.value and sc.target.ttft.unit == "ms"
    assert x.tpot_target.value == sc.target.tpot.value and sc.target.tpot.unit == "ms"
    s = at_scenario(engine_catalog(catalog), MODEL, PRECISION, SCENARIO, sweep=False)
    assert s.best is not None and x.config == s.best.label and x.gpus.value == s.best.gpus
    assert s.best.ttft_s * 1e3 <= x.ttft_target.value and s.best.tpot_s * 1e3 <= x.tpot_target.value


@pytest.mark.parametrize("page", PAGES)
def test_the_banner_is_one_admonition(catalog: Catalog, page: str) -> None:
    text = banner(catalog, page)
    assert text.startswith('!!! example ""\n    **Running example:** ')
    body = text.splitlines()[1:]
    assert all(line.startswith("    ") or not line for line in body)
    assert "**This page**" in text
