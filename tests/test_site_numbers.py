""""How the numbers are made", read back from the built HTML: the trail and the counts are the data's."""

from __future__ import annotations

import pytest

from snippets.data import FILES, Catalog

from .conftest import Build, figures, text, value


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("how-the-numbers-are-made/index.html")


def test_the_trail_is_the_hand_derived_sizing(page) -> None:
    # Llama 3.1 70B in FP16 on an H100 SXM (80 GB) with a 12.5 % runtime reserve:
    # 70e9 params x 2 bytes = 140 GB; usable 80 x 0.875 = 70 GB; 140 / 70 = 2 GPUs
    assert value(page, "trail[Parameters][Figure]") == 70
    assert value(page, "trail[Bytes per parameter][Figure]") == 2
    assert value(page, "trail[Weight memory][Figure]") == pytest.approx(140)
    assert value(page, "trail[Memory per GPU][Figure]") == 80
    assert value(page, "trail[Runtime reserve][Figure]") == pytest.approx(12.5)
    assert value(page, "trail[Usable memory per GPU][Figure]") == pytest.approx(70)
    assert value(page, "trail[GPUs][Figure]") == 2
    # the prose shows the same figures as the table
    assert text(page, "weight") == "140 GB"
    assert value(page, "gpus") == 2


def test_counts_are_the_catalogs(page, catalog: Catalog) -> None:
    entries = sum(len(getattr(catalog, name)) for name in FILES)
    sources = sum(len(e.sources) for name in FILES for e in getattr(catalog, name).values())
    assert value(page, "tables") == len(FILES)
    assert value(page, "entries") == entries
    assert value(page, "sources") == sources
    rows = {n: v for n, v in ((n, float(el["data-value"])) for n, el in figures(page).items()) if n.startswith("tables[")}
    assert sum(v for n, v in rows.items() if n.endswith("[Entries]")) == entries
    assert sum(v for n, v in rows.items() if n.endswith("[Sources cited]")) == sources


def test_claims_hold_and_are_marked(page) -> None:
    claims = {el["data-claim"] for el in page.select("span.sa-claim")}
    assert claims == {"more_than_one_gpu", "every_entry_sourced"}


def test_the_page_is_second_in_the_nav(built: Build) -> None:
    home = built.page("index.html")
    links = [a["href"] for a in home.select("nav.md-nav--primary a.md-nav__link[href]") if not a["href"].startswith("#")]
    assert links[:2] == [".", "how-the-numbers-are-made/"]
