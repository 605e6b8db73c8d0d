"""The reference pages, read back from the built HTML: figures, source links, "as of" dates."""

from __future__ import annotations

import pytest

from ..conftest import Build, figures, text, value

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
        notes = [em for em in soup.select("article em") if em.get_text().startswith("As of 2026-")]
        assert tables and len(notes) == len(tables), name


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("accelerators[NVIDIA H100 SXM][Memory (as stated)]", 80, "80 GB"),
        # the reported capacity, not the label converted (80 GB would be 74.5 GiB)
        ("accelerators[NVIDIA H100 SXM][Memory reported (GiB)]", 81559 / 1024, "79.6 GiB"),
        ("accelerators[NVIDIA H200 SXM][Memory reported (GiB)]", 143771 / 1024, "140.4 GiB"),
        ("accelerators[NVIDIA B200 (HGX B200)][Memory reported (GiB)]", 183359 / 1024, "179.1 GiB"),
        ("accelerators[AMD Instinct MI300X][Memory reported (GiB)]", 196592 / 1024, "192.0 GiB"),
        ("accelerators[NVIDIA H100 SXM][Memory bandwidth (shared)]", 3350, "3,350 GB/s"),
        # dense in the comparison column, derived from the sparse figure; as stated beside it
        ("accelerators[NVIDIA H100 SXM][BF16 dense TFLOP/s]", 989.5, "989.5 (derived)"),
        ("accelerators[NVIDIA H100 SXM][BF16 as stated]", 1979, "1,979 (sparse, as stated)"),
        ("accelerators[AMD Instinct MI300X][BF16 dense TFLOP/s]", 1307.4, "1,307.4"),
        ("accelerators[NVIDIA B200 (HGX B200)][Memory bandwidth (shared)]", 7700, "7,700 GB/s"),
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


@pytest.mark.parametrize(
    ("acc_id", "name"),
    [("tpu7x", "Google Cloud TPU7x (Ironwood)"), ("trainium2", "AWS Trainium2")],
)
def test_new_accelerators_read_back_as_the_data_states(pages, catalog, acc_id: str, name: str) -> None:
    """Accelerators added for issue 14: what the reference page prints is what data/accelerators.yaml states."""
    p, acc = pages["accelerators"], catalog.accelerators[acc_id]
    assert acc.name == name
    assert value(p, f"accelerators[{name}][Memory (as stated)]") == acc.memory.value  # GiB, as stated
    assert figures(p)[f"accelerators[{name}][Memory (as stated)]"]["data-unit"] == acc.memory.unit == "GiB"
    hbm = acc.memory_bandwidth.bandwidth.bytes_per_s / 1e9  # shown in GB/s
    assert value(p, f"accelerators[{name}][Memory bandwidth (shared)]") == pytest.approx(hbm)
    for fmt_id, col in (("bf16", "BF16"), ("fp8", "FP8")):
        stated = acc.tensor[fmt_id]
        assert stated.sparsity == "dense"  # both vendors state dense peaks: nothing derived
        assert value(p, f"accelerators[{name}][{col} dense TFLOP/s]") == pytest.approx(stated.per_s / 1e12)
        assert value(p, f"tensor[{name}][{col}]") == pytest.approx(stated.per_s / 1e12)
    # the scale-up figure is both directions summed: one way is half of it
    one_way = acc.scale_up.bandwidth.bandwidth.one_way().bytes_per_s / 1e9
    assert value(p, f"scaleup[{name}][One way]") == pytest.approx(one_way)


def test_new_accelerator_figures_as_shown(pages) -> None:
    p = pages["accelerators"]
    # TPU7x: Google's table, 192 GiB at 7380 GB/s, BF16 2307 and FP8 4614 TFLOPs, ICI 1200 GB/s summed
    assert text(p, "accelerators[Google Cloud TPU7x (Ironwood)][Memory (as stated)]") == "192 GiB"
    assert text(p, "accelerators[Google Cloud TPU7x (Ironwood)][FP8 as stated]") == "4,614 (dense)"
    assert value(p, "scaleup[Google Cloud TPU7x (Ironwood)][One way]") == 600  # 1200 / 2
    # Trainium2: 96 GiB at 2.9 TB/s; NeuronLink-v3 1.28 TB/s summed over 4 links, 640 GB/s one way
    assert text(p, "accelerators[AWS Trainium2][Memory bandwidth (shared)]") == "2,900 GB/s"
    assert value(p, "scaleup[AWS Trainium2][One way]") == 640
    assert value(p, "disagreements[AWS Trainium2: Scale-up bandwidth][Low]") == 1024  # inside one instance
    i = pages["interconnects"]
    assert value(i, "nodes[AWS trn2.48xlarge (16 x Trainium2, NeuronLink-v3 2D torus)][In the node]") == 16
    assert value(i, "nodes[AWS trn2.48xlarge (16 x Trainium2, NeuronLink-v3 2D torus)]"
                    "[Network per accelerator, one way]") == 25  # 3,200 Gb/s / 16 chips / 8
    assert value(i, "nodes[Cloud TPU7x VM (4 chips)][Network per accelerator, one way]") == 12.5  # 100 Gb/s


def test_amd_mi350x_and_mi250x_read_back_as_the_data_states(pages, catalog) -> None:
    """AMD accelerators added for issue 14: the reference pages print what data/accelerators.yaml states."""
    p, i = pages["accelerators"], pages["interconnects"]
    mi350x, mi250x = catalog.accelerators["mi350x"], catalog.accelerators["mi250x"]
    n350, n250 = mi350x.name, mi250x.name
    # MI350X, ROCm's MI350 Series table: dense BF16 2.3 PF, FP8 4.6 PF, MXFP6/MXFP4 9.2 PF; 288 GB at 8 TB/s
    assert text(p, f"accelerators[{n350}][Memory (as stated)]") == "288 GB"
    assert text(p, f"accelerators[{n350}][Memory bandwidth (shared)]") == "8,000 GB/s"
    assert text(p, f"accelerators[{n350}][BF16 as stated]") == "2,300 (dense)"
    assert text(p, f"accelerators[{n350}][FP8 as stated]") == "4,600 (dense)"
    for col, fmt_id in (("BF16", "bf16"), ("FP8", "fp8"), ("FP6", "fp6"), ("FP4", "fp4")):
        assert value(p, f"tensor[{n350}][{col}]") == pytest.approx(mi350x.tensor[fmt_id].per_s / 1e12)
    assert value(p, f"tensor[{n350}][FP4]") == 9200  # 9.2 PF, twice the FP8 rate
    assert value(p, f"accelerators[{n350}][Power]") == 1000
    # 7 links of 153.6 GB/s both directions summed: 1,075.2 GB/s, 537.6 GB/s one way
    assert value(p, f"scaleup[{n350}][Datasheet figure]") == pytest.approx(1075.2)
    assert value(p, f"scaleup[{n350}][One way]") == pytest.approx(7 * 153.6 / 2)
    # MI250X, AMD's CDNA 2 table per module: 383.0 TF FP16/BF16 dense, no FP8; 128 GB at 3.2 TB/s
    assert text(p, f"accelerators[{n250}][Memory (as stated)]") == "128 GB"
    assert value(p, f"accelerators[{n250}][BF16 dense TFLOP/s]") == pytest.approx(383.0)
    assert mi250x.fp8 is None and f"tensor[{n250}][FP8]" not in figures(p)
    assert value(p, f"disagreements[{n250}: Memory bandwidth][High]") == pytest.approx(3.2768)  # endnote MI200-30
    assert value(p, f"disagreements[{n250}: Memory bandwidth][Site uses]") == pytest.approx(3.2)
    assert value(p, f"accelerators[{n250}][Power]") == 560  # top of "500W & 560W TDP"
    # 8 external links of 100 GB/s both directions summed: 800 GB/s, 400 GB/s one way
    assert value(p, f"scaleup[{n250}][One way]") == pytest.approx(8 * 100 / 2)
    assert value(i, "fabrics[AMD Infinity Fabric (MI200 series)][Per link, one way]") == 50
    # each on its own node, appended after the others
    assert value(i, "nodes[AMD Instinct MI350X Platform (8 OAM)][In the node]") == 8
    assert value(i, "nodes[4 x MI250X node (HPE Cray EX, OLCF Frontier)][In the node]") == 4


def test_dense_columns_hold_only_dense_figures(pages) -> None:
    figs = figures(pages["accelerators"])
    dense = {n: f for n, f in figs.items() if "dense TFLOP/s]" in n}
    assert dense
    for n, f in dense.items():
        assert f["data-basis"].startswith("dense"), n
        assert ("derived" in f.get_text()) == ("derived" in f["data-basis"]), n
    for n, f in figs.items():
        if "as stated]" in n:
            assert f["data-basis"] in {"dense", "sparse"}
            assert ("sparse" in f.get_text()) == (f["data-basis"] == "sparse")


def test_tensor_formats_table(pages) -> None:
    p = pages["accelerators"]
    assert value(p, "tensor[NVIDIA A100 80GB SXM][INT8]") == 624  # dense as stated
    assert value(p, "tensor[NVIDIA H100 SXM][INT8]") == pytest.approx(3958 / 2)  # sparse, halved
    assert value(p, "tensor[NVIDIA B200 (HGX B200)][FP4]") == pytest.approx(9000)  # 18 PFLOPS sparse / 2
    assert value(p, "tensor[Google Cloud TPU v5e][INT8]") == 393
    assert value(p, "tensor[AMD Instinct MI355X][FP4]") == 10000
    table = p.select_one("article table:has(th:-soup-contains('FP6'))")
    assert table is not None
    a100 = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text() == "NVIDIA A100 80GB SXM")
    assert a100.find_all("td")[5].get_text() == "—"  # FP8: no native unit


def test_scale_up_one_way_and_check(pages) -> None:
    p = pages["accelerators"]
    # MI300X: 896 GB/s summed -> 448 one way; 7 links x 128/2 = 448
    assert value(p, "scaleup[AMD Instinct MI300X][One way]") == 448
    assert value(p, "scaleup[AMD Instinct MI300X][Links × per-link rate, one way]") == 448
    # Gaudi 3: 21 scale-up ports x 200 Gb/s / 8 = 525 GB/s one way (3 of 24 go to scale-out)
    assert value(p, "scaleup[Intel Gaudi 3 (OAM)][Links × per-link rate, one way]") == 525
    assert value(p, "disagreements[Intel Gaudi 3 (OAM): Scale-up bandwidth][High]") == 1200
    bridge = next(tr for tr in p.select("article table tbody tr") if tr.find("td").get_text() == "NVIDIA H100 PCIe"
                  and "bridge" in tr.get_text())
    assert "not the node" in bridge.get_text()


def test_disagreements_shown(pages) -> None:
    p = pages["accelerators"]
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][Low]") == 180
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][High]") == 192
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory][Site uses]") == 180
    assert value(p, "disagreements[NVIDIA GB200 (per Blackwell GPU): Memory][Site uses]") == 186
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory bandwidth][Site uses]") == 7.7
    assert value(p, "disagreements[NVIDIA B200 (HGX B200): Memory bandwidth][High]") == 8


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
    # 100 GbE is 12.5 GB/s each way: the display keeps the half
    assert text(p, "networks[100 Gigabit Ethernet][Port, one way]") == "12.5 GB/s"
    # TPU slices: the domain is the slice, not the host
    assert value(p, "nodes[Cloud TPU v5e host (8 chips)][In the scale-up domain]") == 256
    assert value(p, "nodes[Cloud TPU v5p VM (4 chips)][In the scale-up domain]") == 6144
    assert value(p, "nodes[Cloud TPU v5p VM (4 chips)][Network per accelerator, one way]") == 6.25  # 50 Gb/s
    # an H100 PCIe server meets over PCIe: no NVLink domain figure
    row = next(tr for tr in p.select("article table tbody tr")
               if tr.find("td").get_text() == "8 x H100 PCIe server (NVLink bridges in pairs)")
    assert "PCIe only" in row.get_text()
    assert "nodes[8 x H100 PCIe server (NVLink bridges in pairs)][Domain scale-up, as its datasheet sums it]" \
        not in figures(p)
    assert value(p, "nodes[NVIDIA HGX H100 8-GPU][Switch chips]") == 4
    assert value(p, "nodes[NVIDIA GB200 NVL72 (one NVLink domain)][Switch chips]") == 18
    assert value(p, "nodes[AWS p5.48xlarge (8 x H100 SXM, EFA)][NICs per accelerator]") == 4
    switches = p.select_one("article table:has(th:-soup-contains('Switches per node'))").get_text()
    assert "NVIDIA HGX H100 8-GPU: 4 chips" in switches and "18 chips in 9 trays" in switches
    assert value(p, "efficiency[NVLink 4, one GPU to another, H100 SXM][Fraction]") == pytest.approx(376 / 450 * 100)
    assert value(p, "latency[GPU to GPU over NVLink, P2P enabled][Indicative]") == 2


def test_model_figures(pages) -> None:
    p = pages["models"]
    assert value(p, "params[GPT-3 175B][Computed]") == pytest.approx(174.604259328)
    assert value(p, "params[DeepSeek-V3][Stated]") == 671
    assert abs(value(p, "params[Llama 2 70B][Difference]")) < 2
    assert value(p, "kv[Llama 3.1 70B][Per token (BF16, KiB)]") == 320  # 327,680 B / 1024
    assert figures(p)["kv[Llama 3.1 70B][Per token (BF16, KiB)]"]["title"] == "KiB = 2^10 bytes"
    assert value(p, "worked.total") == pytest.approx(70_553_706_496, rel=1e-9)
    # Llama 3.1's max_position_embeddings, and one sequence's BF16 KV cache at it: 327,680 B x 131,072
    assert value(p, "architecture[Llama 3.1 70B][Context]") == 131072
    assert value(p, "kv[Llama 3.1 70B][One sequence at its context length]") == pytest.approx(
        327_680 * 131_072 / 1e9, rel=1e-4)


def test_sizing_grid(pages, catalog) -> None:
    """The grid against hand-worked and published figures (the snapshot holds every cell)."""
    p = pages["sizing"]
    row = "Llama 3.1 405B · FP8 · NVIDIA H100 SXM"
    assert 410 <= value(p, f"grid[{row}][Weights]") <= 411  # 405.85B params, embeddings and LM head at 16 bit
    assert value(p, f"grid[{row}][GPUs]") == 8  # TP8 on one HGX H100, as NVIDIA NIM's 405B FP8 profile
    # an eighth of the weights on each GPU, within a GiB (the embeddings are split by vocabulary)
    assert value(p, f"grid[{row}][Weights per GPU]") == pytest.approx(value(p, f"grid[{row}][Weights]") / 8 * 1e9 / 2**30,
                                                                      abs=1)
    assert value(p, f"grid[{row}][Cost per hour]") == pytest.approx(8 * catalog.prices["h100-sxm-lambda"].price.value)
    bf16 = "Llama 3.1 405B · BF16 · NVIDIA H100 SXM"
    assert value(p, f"grid[{bf16}][GPUs]") == 16 and value(p, f"grid[{bf16}][Nodes]") == 2
    ds = "DeepSeek-V3 · BF16 · NVIDIA H100 SXM"
    assert value(p, f"grid[{ds}][GPUs]") < 488  # the old rule (stages divide 61 layers) rented TP8 x PP61
    table = p.select_one(".sa-grid table")
    headers = [th.get_text() for th in table.select("thead th")]
    assert "Row" not in headers and headers[:3] == ["Model", "Precision", "Accelerator"]
    assert len(table.select("tbody tr")) == len(catalog.models) * 3 * len(catalog.accelerators)
    l4 = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text() == "Llama 3.1 8B" and "NVIDIA L4" in
              [td.get_text() for td in tr.find_all("td")] and "BF16" in tr.get_text())
    assert "no price" in l4.get_text()  # an 8 x L4 server now exists, but no price is recorded
    assert "no node in data" not in table.get_text()  # every accelerator has a node (issue 14)
    assert p.select_one('script[src="../sizing-grid.js"]') is not None
    assert "indicative" in p.get_text().lower()
    links = {a["href"] for a in p.select("article a")}
    assert {"../sizing.json", "../sizing.csv"} <= links


def test_sizing_records_are_published_and_agree_with_the_grid(built: Build, pages, catalog) -> None:
    """sizing.json, sizing.csv and the grid's HTML are one table: a reader who downloads the records gets the
    figures the page shows."""
    import csv
    import io
    import json

    from snippets.engine import Layout

    recs = json.loads((built.site / "reference" / "sizing.json").read_text(encoding="utf-8"))["records"]
    assert len(recs) == len(catalog.models) * 3 * len(catalog.accelerators)
    figs = {name: float(el["data-value"]) for name, el in figures(pages["sizing"]).items()}  # parsed once
    by = {(r["model"], r["precision"], r["accelerator"]): r for r in recs}
    for (m, p, a), r in list(by.items())[::7]:
        assert {"model", "precision", "accelerator", "deployable"} <= set(r)
        if not r["deployable"]:
            continue
        label = next(n for n in (f"{catalog.models[m].name} · {catalog.precisions[p].name}{w} · "
                                 f"{catalog.accelerators[a].name}" for w in ("", ", weight-only"))
                     if f"grid[{n}][GPUs]" in figs)
        assert set(r["layout"]) == {"tp", "pp", "ep", "dp"} and Layout(**r["layout"]).gpus == r["gpus"]
        assert r["gpus"] == figs[f"grid[{label}][GPUs]"] and r["nodes"] == figs[f"grid[{label}][Nodes]"]
        assert r["memory_per_gpu"]["weights"]["unit"] == "B"
        assert r["memory_per_gpu"]["weights"]["value"] / 2**30 == pytest.approx(figs[f"grid[{label}][Weights per GPU]"],
                                                                                abs=1e-6)
        assert set(r["memory_per_gpu"]) >= {"weights", "kv_cache", "activations", "runtime", "capacity", "pool"}
        if r["cost_per_hour"] is not None:
            assert r["cost_per_hour"]["unit"] == "USD/hour"
            assert r["cost_per_hour"]["value"] == pytest.approx(figs[f"grid[{label}][Cost per hour]"])
        if r["tpot_ms_c1"] is not None:
            assert r["tpot_ms_c1"]["unit"] == "ms"
            assert r["tpot_ms_c1"]["value"] == pytest.approx(figs[f"grid[{label}][ms per token]"])
            assert r["output_tokens_per_s_per_gpu"]["unit"] == "tokens/s/GPU"
            assert r["usd_per_mtok_output"] is None or r["usd_per_mtok_output"]["unit"] == "USD/Mtok"
    rows = list(csv.DictReader(io.StringIO((built.site / "reference" / "sizing.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(recs)
    row = next(x for x in rows if (x["model"], x["precision"], x["accelerator"]) == ("llama-3.1-405b", "fp8", "h100-sxm"))
    rec = by["llama-3.1-405b", "fp8", "h100-sxm"]
    assert int(row["gpus"]) == rec["gpus"] and row["layout"] == "tp8-pp1-ep1-dp1"
    assert float(row["weights_per_gpu_GiB"]) == pytest.approx(rec["memory_per_gpu"]["weights"]["value"] / 2**30, abs=1e-3)


def test_sizing_grid_is_left_out_of_search(built: Build, pages) -> None:
    """The grid's thousands of figures are not indexed: its page is excluded whole, with Material's own front matter
    switch (`search: exclude: true`), which spares the indexer the grid's megabyte; every other reference page is
    indexed."""
    import json

    index = json.loads((built.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert not [d for d in index["docs"] if d["location"].startswith("reference/sizing/")]
    assert {"reference/accelerators/", "reference/models/"} <= {d["location"] for d in index["docs"]}
    assert pages["sizing"].select_one(".sa-grid[data-search-exclude]") is not None
    row = "data-name=\"grid[Llama 3.1 405B · FP8 · NVIDIA H100 SXM][GPUs]\""
    assert row in str(pages["sizing"])  # on the page, not in the index
