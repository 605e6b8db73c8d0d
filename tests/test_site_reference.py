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
    """The grid's figures are the engine's deployments, recomputed here from data/ through the engine."""
    from snippets.pages.scenario import reference

    p = pages["sizing"]
    row = "Llama 3.1 405B · FP8 · NVIDIA H100 SXM"
    d = reference(catalog).deployment("llama-3.1-405b", "fp8")
    assert value(p, f"grid[{row}][Weights]") == pytest.approx(d.weight_bytes / 1e9, abs=0.5)
    assert 410 <= value(p, f"grid[{row}][Weights]") <= 411  # 405.85B params, embeddings and LM head at 16 bit
    assert value(p, f"grid[{row}][GPUs]") == 8 == d.gpus  # TP8 on one HGX H100
    assert value(p, f"grid[{row}][Weights per GPU]") == pytest.approx(d.memory.weights / 2**30, abs=0.05)
    assert value(p, f"grid[{row}][Cost per hour]") == pytest.approx(8 * catalog.prices["h100-sxm-lambda"].price.value)
    bf16 = "Llama 3.1 405B · BF16 · NVIDIA H100 SXM"
    assert value(p, f"grid[{bf16}][GPUs]") == 16 and value(p, f"grid[{bf16}][Nodes]") == 2
    ds = "DeepSeek-V3 · BF16 · NVIDIA H100 SXM"
    assert value(p, f"grid[{ds}][GPUs]") < 488  # the old rule (stages divide 61 layers) rented TP8 x PP61
    table = p.select_one(".sa-grid table")
    headers = [th.get_text() for th in table.select("thead th")]
    assert "Row" not in headers and headers[:3] == ["Model", "Precision", "Accelerator"]
    assert len(table.select("tbody tr")) == len(catalog.models) * 3 * len(catalog.accelerators)
    assert p.select_one('script[src="../sizing-grid.js"]') is not None
    assert "indicative" in p.get_text().lower()
    links = {a["href"] for a in p.select("article a")}
    assert {"../sizing.json", "../sizing.csv"} <= links


def test_sizing_records_are_published_and_agree_with_the_engine(built: Build, catalog) -> None:
    import csv
    import io
    import json

    from snippets.engine import Layout
    from snippets.pages.scenario import reference

    recs = json.loads((built.site / "reference" / "sizing.json").read_text(encoding="utf-8"))["records"]
    assert len(recs) == len(catalog.models) * 3 * len(catalog.accelerators)
    ref = reference(catalog)
    by = {(r["model"], r["precision"], r["accelerator"]): r for r in recs}
    for (m, p, _a), r in list(by.items())[::7]:
        assert {"model", "precision", "accelerator", "deployable"} <= set(r)
        if not r["deployable"]:
            continue
        d = ref.deployment(m, p, node=r["node"])
        assert r["layout"] == d.layout.as_dict() and set(r["layout"]) == {"tp", "pp", "ep", "dp"}
        assert r["gpus"] == d.gpus and r["nodes"] == d.nodes and r["gpus_per_node"] == d.gpus_per_node
        assert r["memory_per_gpu"]["weights"] == {"value": d.memory.weights, "unit": "B"}
        assert set(r["memory_per_gpu"]) >= {"weights", "kv_cache", "activations", "runtime", "capacity", "pool"}
        if r["cost_per_hour"] is not None:
            assert r["cost_per_hour"]["unit"] == "USD/hour"
            assert r["cost_per_hour"]["value"] == pytest.approx(d.cost_per_hour)
        assert Layout(**r["layout"]).gpus == r["gpus"]
    rows = list(csv.DictReader(io.StringIO((built.site / "reference" / "sizing.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(recs)
    row = next(x for x in rows if (x["model"], x["precision"], x["accelerator"]) == ("llama-3.1-405b", "fp8", "h100-sxm"))
    rec = by["llama-3.1-405b", "fp8", "h100-sxm"]
    assert int(row["gpus"]) == rec["gpus"] and row["layout"] == "tp8-pp1-ep1-dp1"
    assert float(row["weights_per_gpu_GiB"]) == pytest.approx(rec["memory_per_gpu"]["weights"]["value"] / 2**30, abs=1e-3)


def test_sizing_grid_is_left_out_of_search_but_its_page_is_found(built: Build, pages) -> None:
    """The grid's rows are not indexed (data-search-exclude), the page's prose and price table are."""
    import json

    index = json.loads((built.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    sizing = [d for d in index["docs"] if d["location"].startswith("reference/sizing/")]
    text_of = " ".join(d["title"] + " " + d["text"] for d in sizing)
    assert pages["sizing"].select_one(".sa-grid[data-search-exclude]") is not None
    row = "data-name=\"grid[Llama 3.1 405B · FP8 · NVIDIA H100 SXM][GPUs]\""
    assert row in str(pages["sizing"])  # on the page ...
    assert "NVIDIA L40S" not in text_of  # ... but its rows are not in the index
    assert "Sizing grid" in text_of and "Indicative prices" in text_of
    assert "engine's deployment" in text_of  # the page's prose is indexed
