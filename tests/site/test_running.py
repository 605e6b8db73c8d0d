"""The running example, read back from the built site: every Foundations page opens with its banner, and the
banner's figures are the scenario's in data/scenarios.yaml (read here as YAML, not through the site's code) and the
engine's cheapest configuration for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.search import at_scenario
from snippets.pages.running import MODEL, PAGES, PRECISION, SCENARIO

from ..conftest import ROOT, Build, figures, text, value


def foundations() -> list[str]:
    """The pages under "Foundations" in mkdocs.yml's nav, as docs/<page>.md names them."""
    # mkdocs.yml holds !!python/name tags: read the nav section only
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1].split("\n\n", 1)[0]
    nav = yaml.safe_load(lines)
    section = next(item["Foundations"] for item in nav if isinstance(item, dict) and "Foundations" in item)
    return [Path(next(iter(entry.values()))).stem for entry in section]


def test_every_foundations_page_is_a_running_page() -> None:
    assert foundations() == list(PAGES)


@pytest.fixture(scope="module")
def scenario() -> dict[str, object]:
    doc = yaml.safe_load((ROOT / "data" / "scenarios.yaml").read_text(encoding="utf-8"))
    sc: dict[str, object] = doc[SCENARIO]
    return sc


@pytest.mark.parametrize("page", PAGES)
def test_the_page_opens_with_the_banner(built: Build, page: str) -> None:
    soup = built.page(f"{page}/index.html")
    article = soup.select_one("article")
    assert article is not None
    h1 = article.find("h1")
    assert h1 is not None
    first = h1.find_next_sibling()
    assert first is not None
    assert "admonition" in first.get("class", []) and "example" in first.get("class", []), (
        f"{page}: the first thing under the title is {first.name}.{first.get('class')}, not the banner")
    assert first.select_one(".admonition-title") is None  # no title bar: the banner stays a few lines tall
    assert first.get_text().strip().startswith("Running example:")
    # the departure sentence, with its own figures where it names a quantity
    assert "This page" in first.get_text()
    names = {el["data-name"] for el in first.select("span.sa-fig")}
    assert {"running.n_in", "running.n_out", "running.ttft_target", "running.tpot_target"} <= names


@pytest.mark.parametrize("page", PAGES)
def test_the_banner_reads_the_scenario(built: Build, page: str, scenario: dict[str, object]) -> None:
    soup = built.page(f"{page}/index.html")
    target = scenario["target"]
    assert isinstance(target, dict)
    assert target["ttft"]["unit"] == target["tpot"]["unit"] == "ms"
    assert value(soup, "running.n_in") == scenario["input_tokens"]
    assert value(soup, "running.n_out") == scenario["output_tokens"]
    assert value(soup, "running.ttft_target") == target["ttft"]["value"]
    assert value(soup, "running.tpot_target") == target["tpot"]["value"]
    assert text(soup, "running.n_in") == f"{scenario['input_tokens']:,}"


def test_the_banner_names_the_engines_pick(built: Build, catalog: Catalog) -> None:
    s = at_scenario(engine_catalog(catalog), MODEL, PRECISION, SCENARIO, sweep=False)
    assert s.best is not None
    soup = built.page("hbm/index.html")
    banner = soup.select_one("article .admonition.example")
    assert banner is not None
    assert s.best.label in banner.get_text()
    assert value(soup, "running.gpus") == s.best.gpus
    # each count of the pick is a figure, the engine's: its workers and the requests in flight on each
    counts = {f"running.config.{w[0]}": w[1] for w in s.best.words if not isinstance(w, str)}
    assert {k for k in figures(soup) if k.startswith("running.config.")} == set(counts) and counts
    for name, n in counts.items():
        assert value(soup, name) == n and text(soup, name) == f"{n:,}"
    pick = banner.select("strong")[1]  # the pick, in bold after "Running example:"
    assert pick.get_text() == s.best.label and "each" not in pick.get_text().replace("on each decode worker", "")
    assert pick.get_text().endswith("in flight" + (" on each decode worker" if s.best.mode == "disaggregated" else ""))
    # the pick meets the target the banner states
    assert s.best.ttft_s * 1e3 <= value(soup, "running.ttft_target")
    assert s.best.tpot_s * 1e3 <= value(soup, "running.tpot_target")
    assert catalog.models[MODEL].name in banner.get_text()


def test_the_departures_name_their_pages_figures(built: Build, catalog: Catalog) -> None:
    ref = catalog.scenarios["reference"]
    for page in ("hbm", "precision", "interconnect", "parallelism", "kv-cache"):
        found = figures(built.page(f"{page}/index.html"))
        assert float(found["running.context"]["data-value"]) == ref.input_tokens + ref.output_tokens, page
    roof = built.page("roofline/index.html")
    assert value(roof, "running.ref_in") == ref.input_tokens
    assert value(roof, "running.ref_out") == ref.output_tokens
