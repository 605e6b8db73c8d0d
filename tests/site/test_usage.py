"""The reference pages link each model and accelerator to the pages that show it."""

from __future__ import annotations

import pytest

from ..conftest import Build


@pytest.mark.parametrize("page", ["reference/models/index.html", "reference/accelerators/index.html"])
def test_every_entry_links_the_pages_that_show_it(built: Build, catalog, page) -> None:
    soup = built.page(page)
    assert not soup.select(".sa-used-by")  # every placeholder was filled
    table = next(t for t in soup.select("article table") if "Shown on" in t.get_text())
    rows = {tr.find("td").get_text(): tr.find_all("td")[1] for tr in table.select("tbody tr")}
    entries = catalog.models if "models" in page else catalog.accelerators
    assert set(rows) == {e.name for e in entries.values()}
    texts: dict[str, str] = {}  # each linked page read once: many entries link the same pages
    for name, cell in rows.items():
        for a in cell.select("a"):
            target = built.site / "reference" / page.split("/")[1] / a["href"] / "index.html"
            assert target.resolve().is_file(), (name, a["href"])
            rel = str(target.resolve().relative_to(built.site))
            if rel not in texts:
                texts[rel] = built.page(rel).get_text()
            assert name in texts[rel]
    if "models" in page:
        assert "HBM: capacity and bandwidth" in rows["Llama 3.1 70B"].get_text()
    else:
        assert "HBM: capacity and bandwidth" in rows["NVIDIA H100 SXM"].get_text()
