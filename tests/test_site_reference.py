"""The reference pages, read back from the built HTML: figures, source links, "as of" dates."""

from __future__ import annotations

import pytest

from .conftest import Build, figures, text, value

PAGES = ("accelerators", "interconnects", "models", "sizing")


@pytest.fixture(scope="module")
def pages(built: Build):
    return {p: built.page(f"reference/{p}/index.html") for p in PAGES}


def test_every_accelerator_row_links_a_source(pages, catalog) -> None:
    table = pages["accelerators"].select("article table")[0]
    rows = table.select("tbody tr")
    assert len(rows) == len(catalog.accelerators)
    for tr in rows:
        links = tr.find_all("td")[-1].find_all("a")
        assert links and all(a["href"].startswith("https://") for a in links), tr.find("td").get_text()


def test_every_table_has_an_as_of_date(pages) -> None:
    for name, soup in pages.items():
        tables = soup.select("article table")
        notes = [em for em in soup.select("article em") if em.get_text().startswith("As of 2026-11-30")]
        assert tables and len(notes) == len(tables), name


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("accelerators[NVIDIA H100 SXM][Memory (as stated)]", 80, "80 GB"),
        ("accelerators[NVIDIA H100 SXM][Memory (GiB)]", 80e9 / 2**30, "74.5 GiB"),
        ("accelerators[NVIDIA H100 SXM][Memory bandwidth (shared)]", 3350, "3,350 GB/s"),
        ("accelerators[NVIDIA H100 SXM][BF16/FP16 TFLOP/s]", 1979, "1,979 (sparse, as stated)"),
        ("accelerators[AMD Instinct MI300X][BF16/FP16 TFLOP/s]", 1307.4, "1,307.4 (dense)"),
        # PCIe 5.0 x16 one way: 32e9 x 16 x 128/130 / 8 bytes
        ("accelerators[NVIDIA H100 SXM][Host link, one way]", 32 * 16 * 128 / 130 / 8, "63.0 GB/s"),
        ("accelerators[NVIDIA B200 (HGX B200)][Memory (as stated)]", 180, "180 GB"),
        ("accelerators[Google Cloud TPU v5p][Memory (as stated)]", 95, "95 GiB"),
        ("accelerators[Intel Gaudi 3 (OAM)][Power]", 900, "900 W"),
    ],
)
def test_accelerator_figures(pages, name: str, expected: float, shown: str) -> None:
    assert value(pages["accelerators"], name) == pytest.approx(expected)
    assert text(pages["accelerators"], name) == shown


def test_sparse_figures_are_never_halved(pages) -> None:
    figs = figures(pages["accelerators"])
    for n, f in figs.items():
        if "TFLOP/s]" in n:
            assert f["data-basis"] in {"dense", "sparse"}
            assert ("sparse" in f.get_text()) == (f["data-basis"] == "sparse")


def test_scale_up_one_way_and_check(pages) -> None:
    p = pages["accelerators"]
    # MI300X: 896 GB/s summed -> 448 one way; 7 links x 128/2 = 448
    assert value(p, "scaleup[AMD Instinct MI300X][One way]") == 448
    assert value(p, "scaleup[AMD Instinct MI300X][Links × per-link rate, one way]") == 448
    # Gaudi 3: 24 ports x 200 Gb/s / 8 = 600 GB/s one way
    assert value(p, "scaleup[Intel Gaudi 3 (OAM)][Links × per-link rate, one way]") == 600


def test_disagreements_shown(pages) -> None:
    p = pages["accelerators"]
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][Low]") == 180
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][High]") == 192
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][Site uses]") == 180
    assert value(p, "disagreements[NVIDIA GB200 (per Blackwell GPU): Memory][Site uses]") == 186


def test_interconnect_figures(pages) -> None:
    p = pages["interconnects"]
    assert value(p, "nvlink[NVLink 5][Per GPU, one way]") == 900  # 18 x 50
    assert value(p, "nvlink[NVLink 3][Per GPU, both directions summed]") == 600  # 12 x 25 x 2
    assert value(p, "pcie[PCIe 6.0][x16, one way]") == pytest.approx(64 * 16 * 242 / 256 / 8)  # 121.0
    assert value(p, "pcie[PCIe 4.0][x16, one way]") == pytest.approx(16 * 16 * 128 / 130 / 8)
    assert value(p, "networks[InfiniBand XDR][Port, one way]") == 100  # 800 Gb/s / 8
    # 72 GPUs x 1.8 TB/s summed
    assert value(p, "nodes[NVIDIA GB200 NVL72 (one NVLink domain)][Domain scale-up, as its datasheet sums it]") \
        == pytest.approx(129.6)
    assert value(p, "gen6_efficiency") == pytest.approx(242 / 256 * 100)


def test_model_figures(pages) -> None:
    p = pages["models"]
    assert value(p, "params[GPT-3 175B][Computed]") == pytest.approx(174.604259328)
    assert value(p, "params[DeepSeek-V3][Stated]") == 671
    assert abs(value(p, "params[Llama 2 70B][Difference]")) < 2
    assert value(p, "kv[Llama 3.1 70B][Per token (BF16, KiB)]") == 320  # 327,680 B / 1024
    assert value(p, "worked.total") == pytest.approx(70_553_706_496, rel=1e-9)


def test_sizing_grid(pages, catalog) -> None:
    p = pages["sizing"]
    row = "Llama 3.1 405B · FP8 · NVIDIA H100 SXM"
    assert value(p, f"grid[{row}][Weights]") == 405
    assert value(p, f"grid[{row}][GPUs with headroom]") == 6  # 405 / 70 = 5.8
    assert value(p, f"grid[{row}][Layout GPUs]") == 8  # TP8: 8 KV heads
    assert value(p, f"grid[{row}][Cost per hour]") == pytest.approx(8 * 2.99)
    table = p.select_one(".sa-grid table")
    assert len(table.select("tbody tr")) == len(catalog.models) * 3 * len(catalog.accelerators)
    l4 = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text() == "Llama 3.1 8B · BF16 · NVIDIA L4")
    assert "no node in data" in l4.get_text()
    assert p.select_one('script[src="../sizing-grid.js"]') is not None
    assert "indicative" in p.get_text().lower()


def test_sizing_grid_is_left_out_of_search_but_its_page_is_found(built: Build, pages) -> None:
    """The grid's rows are not indexed (data-search-exclude), the page's prose and price table are."""
    import json

    index = json.loads((built.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    sizing = [d for d in index["docs"] if d["location"].startswith("reference/sizing/")]
    text_of = " ".join(d["title"] + " " + d["text"] for d in sizing)
    assert pages["sizing"].select_one(".sa-grid[data-search-exclude]") is not None
    row = "Llama 3.1 405B · FP8 · NVIDIA H100 SXM"
    assert row in pages["sizing"].get_text()  # on the page ...
    assert row not in text_of  # ... but not in the index
    assert "Sizing grid" in text_of and "Indicative prices" in text_of
    assert "weight bytes" in text_of  # the page's prose is indexed
