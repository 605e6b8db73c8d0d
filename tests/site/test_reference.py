"""The reference pages, read back from the built HTML: figures, source links, "as of" dates."""

from __future__ import annotations

import pytest

from ..conftest import Build, figures, site_price, text, value

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
        ("accelerators[NVIDIA H100 SXM][Tool's total (GiB)]", 81559 / 1024, "79.6 GiB"),  # nvidia-smi
        ("accelerators[NVIDIA H200 SXM][Tool's total (GiB)]", 143771 / 1024, "140.4 GiB"),
        ("accelerators[NVIDIA B200 (HGX B200)][Tool's total (GiB)]", 183359 / 1024, "179.1 GiB"),
        ("accelerators[AMD Instinct MI300X][Tool's total (GiB)]", 196592 / 1024, "192.0 GiB"),
        # what the engine budgets: the runtime's total (issue 26), or the label where none is published
        ("accelerators[NVIDIA H100 SXM][Memory the engine budgets (GiB)]", 79.22, "79.22 GiB (CUDA)"),  # vllm#10511
        ("accelerators[NVIDIA H200 SXM][Memory the engine budgets (GiB)]", 143156 / 1024, "139.80 GiB (CUDA)"),
        ("accelerators[NVIDIA B200 (HGX B200)][Memory the engine budgets (GiB)]", 178.35, "178.35 GiB (CUDA)"),
        ("accelerators[AMD Instinct MI300X][Memory the engine budgets (GiB)]", 196592 / 1024, "191.98 GiB (ROCm)"),
        ("accelerators[NVIDIA A100 40GB SXM][Memory the engine budgets (GiB)]", 42298834944 / 2**30, "39.39 GiB (CUDA)"),
        ("accelerators[NVIDIA H100 PCIe][Memory the engine budgets (GiB)]", 80e9 / 2**30, "74.51 GiB (label)"),
        ("accelerators[NVIDIA GB200 (per Blackwell GPU)][Memory the engine budgets (GiB)]", 186e9 / 2**30,
         "173.23 GiB (label)"),
        ("accelerators[NVIDIA GB200 (per Blackwell GPU)][Tool's total (GiB)]", 189471 / 1024, "185.0 GiB"),
        ("accelerators[Google Cloud TPU v6e (Trillium)][Memory the engine budgets (GiB)]", 32, "32.00 GiB (label)"),
        ("accelerators[AMD Instinct MI325X][Memory the engine budgets (GiB)]", 268419072 / 2**20, "255.98 GiB (ROCm)"),
        ("accelerators[NVIDIA A100 80GB SXM][Memory the engine budgets (GiB)]", 85100068864 / 2**30, "79.26 GiB (CUDA)"),
        ("accelerators[NVIDIA L4][Memory the engine budgets (GiB)]", 23570219008 / 2**30, "21.95 GiB (CUDA)"),
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


def cell(page, table: str, row: str, column: str) -> str:
    """The text of a table cell that is not a figure: in the table whose figures are named `table[...]`, the row whose
    first cell is `row`, the column named `column`."""
    tab = next(t for t in page.select("article table") if t.select_one(f'span.sa-fig[data-name^="{table}["]'))
    heads = [th.get_text(" ", strip=True) for th in tab.select("thead th")]
    for tr in tab.select("tbody tr"):
        cells = tr.find_all("td")
        if cells and cells[0].get_text(" ", strip=True) == row:
            return " ".join(cells[heads.index(column)].get_text(" ", strip=True).split())
    raise AssertionError(f"no row {row!r} in table {table!r}")


def test_new_accelerator_figures_as_shown(pages) -> None:
    p = pages["accelerators"]
    # TPU7x: Google's table, 192 GiB at 7380 GB/s, BF16 2307 and FP8 4614 TFLOPs, ICI 1200 GB/s summed
    assert text(p, "accelerators[Google Cloud TPU7x (Ironwood)][Memory (as stated)]") == "192 GiB"
    assert text(p, "accelerators[Google Cloud TPU7x (Ironwood)][FP8 as stated]") == "4,614 (dense)"
    assert value(p, "scaleup[Google Cloud TPU7x (Ironwood)][One way]") == 600  # 1200 / 2
    # Trainium2: 96 GiB at 2.9 TB/s; the modelled 16-chip instance's NeuronLink-v3 is 1,024 GB/s per chip inside
    # it (trn2-arch.rst's "Intra-instance NeuronLink-v3 bandwidth (GB/sec/chip) 1,024"), read as both directions
    # summed: 512 GB/s one way; the chip's 1.28 TB/s (with the 256 GB/s to other instances) is the range's top
    assert text(p, "accelerators[AWS Trainium2][Memory bandwidth (shared)]") == "2,900 GB/s"
    assert value(p, "scaleup[AWS Trainium2][Figure used]") == 1024
    assert value(p, "scaleup[AWS Trainium2][One way]") == 512
    assert "inside one trn2.48xlarge" in cell(p, "scaleup", "AWS Trainium2", "What it counts")
    assert value(p, "disagreements[AWS Trainium2: Scale-up bandwidth][High]") == 1280
    assert value(p, "disagreements[AWS Trainium2: Scale-up bandwidth][Site uses]") == 1024
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
    assert value(p, f"scaleup[{n350}][Figure used]") == pytest.approx(1075.2)
    assert value(p, f"scaleup[{n350}][One way]") == pytest.approx(7 * 153.6 / 2)
    # MI250X, as software sees it: one GCD, half of AMD's CDNA 2 module figures (383.0 TF FP16/BF16 dense, no FP8;
    # 128 GB at 3.2 TB/s), and HIP's total of one device on LUMI, which the engine budgets from
    assert text(p, f"accelerators[{n250}][Memory (as stated)]") == "64 GB"
    assert value(p, f"accelerators[{n250}][BF16 dense TFLOP/s]") == pytest.approx(383.0 / 2)
    assert mi250x.fp8 is None and f"tensor[{n250}][FP8]" not in figures(p)
    assert mi250x.capacity_bytes == 68702699520 and mi250x.capacity_basis == "ROCm"
    assert value(p, f"disagreements[{n250}: Memory bandwidth][High]") == pytest.approx(3.2768 / 2)  # endnote MI200-30
    assert value(p, f"disagreements[{n250}: Memory bandwidth][Site uses]") == pytest.approx(1.6)
    assert cell(p, "accelerators", n250, "Power") == "not stated"  # AMD states the module's TDP only
    # 8 external links of 100 GB/s both summed is AMD's 800 GB/s a module, 4 a GCD; in the Frontier node one link of
    # each GCD faces the CPU, so 3 join other modules: 300 GB/s, 150 GB/s one way, said beside the figure; its twin
    # is joined in the package at 400 GB/s both summed, 200 one way
    assert value(p, f"scaleup[{n250}][Figure used]") == 300
    assert value(p, f"scaleup[{n250}][One way]") == pytest.approx(3 * 100 / 2)
    assert "3 of its 4 Infinity Fabric links" in cell(p, "scaleup", n250, "What it counts")
    assert "its twin in the package over its own link ( 200 GB/s each way)" in cell(p, "scaleup", n250, "Joins")
    assert value(p, f"scaleup[{n250}][Joins].twin") == 200  # a figure of the page, as the bridges' counts are
    assert value(p, "scaleup[NVIDIA H100 NVL][Joins].devices") == 2
    assert value(p, f"disagreements[{n250}: Scale-up bandwidth][High]") == 400
    assert value(i, "fabrics[AMD Infinity Fabric (MI200 series)][Per link, one way]") == 50
    # each on its own node, appended after the others
    assert value(i, "nodes[AMD Instinct MI350X Platform (8 OAM)][In the node]") == 8
    assert value(i, "nodes[4 x MI250X node, 8 GCDs (HPE Cray EX, OLCF Frontier)][In the node]") == 8


def test_each_nodes_tp_groups_get_what_its_wiring_gives(pages) -> None:
    """What a TP group of two, four and eight gets per GPU, one way, and the largest fully connected one: a switch
    gives every group each GPU's whole NVLink (H100: 18 links of 25 GB/s); the MI300X's mesh one 64 GB/s link per
    peer; the MI250X's two GCDs of a module their 200 GB/s package link, larger groups three 25 GB/s shares of the
    links between modules per peer beyond the twin (3 x 25 and 7 x 25); the V100's six 25 GB/s links one per peer,
    all six for eight, which are not fully connected."""
    i = pages["interconnects"]
    want = {"NVIDIA HGX H100 8-GPU": (450, 450, 450, 8), "AMD Instinct MI300X Platform (8 OAM)": (64, 192, 448, 8),
            "4 x MI250X node, 8 GCDs (HPE Cray EX, OLCF Frontier)": (200, 75, 175, 2),
            "AWS p3dn.24xlarge (8 x V100 SXM2 32GB)": (25, 75, 150, 4)}
    for node, (two, four, eight, full) in want.items():
        got = tuple(value(i, f"groups[{node}][TP{g}, per GPU one way]") for g in (2, 4, 8))
        assert got == pytest.approx((two, four, eight)), node
        assert value(i, f"groups[{node}][Largest fully connected group]") == full, node
    assert cell(i, "groups", "AMD Instinct MI300X Platform (8 OAM)", "Wired as") == "full mesh"


def test_vllms_allreduce_limits_are_its_releases_tables(pages) -> None:
    """vLLM's all-reduce by message size, per release and capability: on eight H100s (9.0) the custom all-reduce
    below 256 KiB, multimem to 64 MiB; on two H100s its own 8 MiB, symmetric two-shot to 64 MiB; on eight B200s (10.0)
    1 MiB and 128 MiB; on two B300s (10.3, from vllm-v021) 4 MiB, then NCCL, the table's two limits being equal; the
    without-symmetric-memory limit is the custom all-reduce's own 8 MiB."""
    i = pages["interconnects"]
    h100, b200, b300 = "vllm-default, capability 9.0", "vllm-default, capability 10.0", "vllm-v021, capability 10.3"
    assert cell(i, "vllmallreduce", h100, "TP8: custom below, then") == "256 KiB , multimem to 64 MiB"
    assert value(i, f"vllmallreduce[{h100}][TP8: custom below, then].custom") == 256
    assert value(i, f"vllmallreduce[{h100}][TP8: custom below, then].symm") == 64
    assert cell(i, "vllmallreduce", h100, "TP2: custom below, then") == "8 MiB , two-shot to 64 MiB"
    assert cell(i, "vllmallreduce", b200, "TP8: custom below, then") == "1 MiB , multimem to 128 MiB"
    assert cell(i, "vllmallreduce", b300, "TP2: custom below, then") == "4 MiB , then NCCL"
    assert "NVIDIA H200 SXM" in cell(i, "vllmallreduce", h100, "Accelerators")
    assert value(i, "custom_own_limit") == 8


def test_a_row_links_the_sources_nested_in_its_entry(pages, catalog) -> None:
    """The MI250X's runtime total was read from a LUMI HIP report, a source of its `memory_runtime`, not of the entry:
    its row in the accelerators table links it beside the white paper and ROCm's page."""
    acc = catalog.accelerators["mi250x"]
    tab = next(t for t in pages["accelerators"].select("article table")
               if t.select_one('span.sa-fig[data-name^="accelerators["]'))
    row = next(tr for tr in tab.select("tbody tr") if tr.find("td").get_text(" ", strip=True) == acc.name)
    hrefs = [a["href"] for a in row.select("a[href]")]
    assert acc.memory_runtime.source.url in hrefs
    assert all(s.url in hrefs for s in acc.sources)


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
    assert value(p, f"grid[{row}][Cost per hour]") == pytest.approx(8 * site_price(catalog, "h100-sxm"))
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
    for (m, p, a), r in by.items():
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
            assert r["tpot_ms_c1"]["value"] == pytest.approx(figs[f"grid[{label}][Time per token]"])
            assert r["output_tokens_per_s_per_gpu"]["unit"] == "tokens/s/GPU"
            assert r["usd_per_mtok_output"] is None or r["usd_per_mtok_output"]["unit"] == "USD/Mtok"
    rows = list(csv.DictReader(io.StringIO((built.site / "reference" / "sizing.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(recs)
    # every CSV row is its JSON record: the layout, the GPUs and the weights per GPU, or empty where refused
    for row in rows:
        rec = by[row["model"], row["precision"], row["accelerator"]]
        assert row["deployable"] == str(rec["deployable"])
        if not rec["deployable"]:
            assert row["gpus"] == row["layout"] == "" and row["why_not"], row
            continue
        lay = rec["layout"]
        assert row["layout"] == f"tp{lay['tp']}-pp{lay['pp']}-ep{lay['ep']}-dp{lay['dp']}"
        assert int(row["gpus"]) == rec["gpus"] and int(row["nodes"]) == rec["nodes"]
        assert float(row["weights_per_gpu_GiB"]) == pytest.approx(rec["memory_per_gpu"]["weights"]["value"] / 2**30,
                                                                  abs=1e-3)
    row = next(x for x in rows if (x["model"], x["precision"], x["accelerator"]) == ("llama-3.1-405b", "fp8", "h100-sxm"))
    assert row["layout"] == "tp8-pp1-ep1-dp1"  # 405B in FP8 fits one HGX H100 under TP8


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


def test_prediction_rows_have_a_page_of_their_own_that_search_leaves_out(built: Build, catalog) -> None:
    """The predictions page's two thousand row figures are on a page of their own, left out of the search index like
    the grid (Material parsed them again at every rebuild of `mkdocs serve`); the summary page stays indexed and links
    it. Between them every measurement of data/measurements.yaml is shown once: a row of its role's table on the rows
    page, or a row of the summary page's table of runs not predicted."""
    import json

    index = json.loads((built.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    located = {d["location"] for d in index["docs"]}
    assert "reference/predictions/" in located
    assert not [loc for loc in located if loc.startswith("reference/prediction-rows/")]
    summary, rows = built.page("reference/predictions/index.html"), built.page("reference/prediction-rows/index.html")
    assert summary.select_one('article a[href="../prediction-rows/"]') is not None
    assert not summary.select('article [data-name^="rows_"]')  # the rows left the summary page
    shown: dict[str, int] = {}
    for role in ("calibration", "test"):
        shown[role] = len({f["data-name"].split("][")[0] for f in rows.select(f'article [data-name^="rows_{role}["]')})
    # the summary page's table of runs not predicted, found by its header: Run, Role, Source, Mode, Why not ...
    tables = [t for t in summary.select("article table")
              if [th.get_text(strip=True) for th in t.select("thead th")][:2] == ["Run", "Role"]]
    assert len(tables) == 1
    skipped = tables[0].select("tbody tr")
    for role in ("calibration", "test"):
        shown[role] += sum(1 for tr in skipped if tr.select("td")[1].get_text() == role)
    recorded = {role: sum(1 for m in catalog.measurements.values() if m.role == role) for role in ("calibration", "test")}
    assert shown == recorded


# --------------------------------------------------------------------------- issue 26: read back what was corrected


def test_llama4_context_names_its_checkpoint(pages) -> None:
    """Scout's 10,485,760 and Maverick's 1,048,576 are the Instruct configs'; the base configs' is 262,144
    (huggingface/text-generation-inference#3245: the Instruct's max_position_embeddings is 40 times the base's)."""
    p = pages["models"]
    for name, instruct, ckpt in (("Llama 4 Scout (17B-16E)", 10_485_760, "Llama-4-Scout-17B-16E-Instruct"),
                                 ("Llama 4 Maverick (17B-128E)", 1_048_576, "Llama-4-Maverick-17B-128E-Instruct")):
        assert value(p, f"architecture[{name}][Context]") == instruct
        shown = cell(p, "architecture", name, "Context of")
        assert shown.startswith(f"meta-llama/{ckpt} (others: ") and "262,144" in shown
    assert 10_485_760 == 40 * 262_144
    assert cell(p, "architecture", "Llama 3.1 70B", "Context of") == "its config.json"
    # Qwen2.5-72B's base and Instruct configs differ too; GPT-3 has no published checkpoint, so no config.json
    assert value(p, "architecture[Qwen2.5-72B][Context]") == 131_072
    assert cell(p, "architecture", "Qwen2.5-72B", "Context of") == "Qwen/Qwen2.5-72B (others: Qwen/Qwen2.5-72B-Instruct: 32,768)"
    assert value(p, "architecture[GPT-3 175B][Context]") == 2048
    assert cell(p, "architecture", "GPT-3 175B", "Context of") == "its paper (no published checkpoint)"


def test_gaudi3_scale_up_says_what_it_counts(pages) -> None:
    """21 of 24 ports of 200 GbE: 21 x 200 Gb/s = 525 GB/s each way, 1,050 GB/s both summed, the basis said beside it."""
    p, i = pages["accelerators"], pages["interconnects"]
    name = "Intel Gaudi 3 (OAM)"
    assert value(p, f"scaleup[{name}][Figure used]") == 1050
    assert value(p, f"scaleup[{name}][One way]") == 525
    assert cell(p, "scaleup", name, "What it counts").startswith("21 of its 24 ports of 200 GbE")
    assert cell(i, "nodes", "Intel Gaudi 3 HLS-3 baseboard (8 OAM)", "Each accelerator's figure counts").startswith(
        "21 of its 24 ports")
    assert cell(p, "scaleup", "NVIDIA H100 SXM", "What it counts") == "every link it drives"


def test_capacity_basis_said_on_the_page(pages, catalog) -> None:
    """The engine budgets the runtime's total where one is published, and the page says '(label)' where not."""
    p = pages["accelerators"]
    for acc_id, acc in catalog.accelerators.items():
        shown = text(p, f"accelerators[{acc.name}][Memory the engine budgets (GiB)]")
        assert shown.endswith("(label)") == (acc.memory_runtime is None), acc_id
    notes = " ".join(p.select_one("article").get_text().split())
    assert "Memory the runtime reports (the engine budgets the label)" in notes


def test_prices_by_kind_tier_date_and_source(pages, catalog) -> None:
    """Each price with its kind and tier, the date read (the snapshot's own), its age, and a transcription marked."""
    p = pages["sizing"]
    assert value(p, "prices[NVIDIA H100 SXM at Lambda][Per GPU-hour (indicative)]") == 3.99
    assert value(p, "prices[NVIDIA H100 SXM at RunPod, Community Cloud][Per GPU-hour (indicative)]") == 2.69
    assert value(p, "prices[NVIDIA H100 SXM at RunPod, Secure Cloud][Per GPU-hour (indicative)]") == 3.49
    assert value(p, "prices[NVIDIA H100 SXM at Microsoft Azure, spot][Per GPU-hour (indicative)]") == pytest.approx(3.687)
    assert value(p, "prices[NVIDIA H100 SXM at Google Cloud][Per GPU-hour (indicative)]") == pytest.approx(10.9791)
    assert cell(p, "prices", "NVIDIA H100 SXM at Lambda", "Price read") == "2026-09-25"
    assert cell(p, "prices", "NVIDIA H100 SXM at Microsoft Azure", "Kind") == "on-demand"
    assert cell(p, "prices", "NVIDIA H100 SXM at Microsoft Azure, spot", "Kind") == "spot"
    # months before the latest reading of the accelerators, models and prices (2026-12-06, the context lengths of
    # four models): 2023-12-06 -> 36, 2026-09-25 -> 2
    assert value(p, "prices[NVIDIA H100 SXM at Microsoft Azure][Older than the data by]") == 36
    assert value(p, "prices[NVIDIA H100 SXM at Lambda][Older than the data by]") == 2
    assert "(secondary)" in cell(p, "prices", "NVIDIA H100 SXM at Lambda", "Source")
    assert "(secondary)" not in cell(p, "prices", "AMD Instinct MI300X at Vultr", "Source")
    # the grid shows the month of the price beside each cost
    grid = p.select_one(".sa-grid table")
    heads = [th.get_text() for th in grid.select("thead th")]
    row = next(tr for tr in grid.select("tbody tr")
               if [td.get_text() for td in tr.find_all("td")][:3] == ["Llama 3.1 8B", "BF16", "NVIDIA H100 SXM"])
    assert row.find_all("td")[heads.index("Price read")].get_text() == "Sep 2026"


def test_secondary_sources_are_shown_as_such(pages) -> None:
    """A transcription's link is marked secondary, and its hover names the document it copies."""
    p = pages["accelerators"]
    b200 = next(tr for tr in p.select("article table")[0].select("tbody tr") if tr.find("td").get_text().startswith(
        "NVIDIA B200"))
    assert "(secondary)" in b200.get_text()  # NVIDIA's aiconfigurator, a transcription of the Blackwell datasheet
    assert any("secondary, a transcription of NVIDIA Blackwell datasheet" in (a.get("title") or "")
               for a in b200.select("a"))
    # GB200's nvidia-smi total comes from a transcription too: its figure's tooltip says so
    assert "secondary" in figures(p)["accelerators[NVIDIA GB200 (per Blackwell GPU)][Tool's total (GiB)]"]["title"]


def test_new_accelerators_read_back(pages) -> None:
    """B300 and GB300 (NVIDIA's Blackwell Ultra datasheet as NVIDIA's aiconfigurator transcribes it; MLPerf v6.0's
    system descriptions), A100 80GB PCIe and V100 (their datasheets as TensorRT-LLM and composer transcribe them)."""
    p, i = pages["accelerators"], pages["interconnects"]
    b300, gb300 = "NVIDIA B300 (HGX B300)", "NVIDIA GB300 (per Blackwell Ultra GPU)"
    assert text(p, f"accelerators[{b300}][Memory (as stated)]") == "288 GB"
    assert value(p, f"accelerators[{b300}][Tool's total (GiB)]") == pytest.approx(275040 / 1024)  # nvidia-smi
    assert text(p, f"accelerators[{b300}][Memory the engine budgets (GiB)]") == "268.22 GiB (label)"  # 288e9 / 2^30
    assert value(p, f"accelerators[{b300}][BF16 dense TFLOP/s]") == 2250  # 4.5 PF sparse / 2
    assert value(p, f"tensor[{b300}][FP4]") == 14000  # stated dense
    assert value(p, f"accelerators[{b300}][Power]") == 1100
    assert value(p, f"disagreements[{b300}: Memory][Low]") == 268 and value(p, f"disagreements[{b300}: Memory][High]") == 288
    assert value(p, f"accelerators[{gb300}][Memory bandwidth (shared)]") == 8000
    assert value(p, f"accelerators[{gb300}][BF16 dense TFLOP/s]") == 2500
    assert value(p, f"accelerators[{gb300}][Power]") == 1400
    pcie = "NVIDIA A100 80GB PCIe"
    assert value(p, f"accelerators[{pcie}][Memory bandwidth (shared)]") == 1935
    assert value(p, f"accelerators[{pcie}][Power]") == 300
    v100 = "NVIDIA V100 SXM2 32GB"
    assert value(p, f"accelerators[{v100}][Memory bandwidth (shared)]") == 900
    assert cell(p, "accelerators", v100, "BF16 as stated") == "not stated"
    assert value(p, f"tensor[{v100}][FP16]") == 125
    assert value(p, f"scaleup[{v100}][One way]") == 150
    nodes = {("NVIDIA HGX B300 8-GPU", 8), ("NVIDIA GB300 NVL72 (one NVLink domain)", 72),
             ("8 x A100 80GB PCIe server", 8), ("AWS p3dn.24xlarge (8 x V100 SXM2 32GB)", 8)}
    for name, n in nodes:
        assert value(i, f"nodes[{name}][In the node]") == n, name
    s = pages["sizing"]
    refused = [tr.get_text(" ") for tr in s.select(".sa-grid table tbody tr")
               if "NVIDIA V100 SXM2 32GB" in tr.get_text() and " BF16 " in f" {tr.get_text(' ')} "]
    assert refused and all("refused: Bfloat16 is only supported on GPUs with compute capability" in r for r in refused)


def test_infiniband_latency_not_stated_with_its_reason(pages) -> None:
    i = pages["interconnects"]
    for name in ("InfiniBand HDR", "InfiniBand NDR", "InfiniBand XDR"):
        assert cell(i, "networks", name, "Switch latency") == "not stated (see below)"
        assert cell(i, "networks", name, "Adapter latency") == "not stated (see below)"
    body = " ".join(i.select_one("article").get_text().split())
    assert "InfiniBand NDR, switch latency: The pages of NVIDIA's QM97xx (NDR) switch manual read here" in body


def test_the_predictions_page_names_each_chips_collective_library(built: Build, catalog) -> None:
    """The chips whose own all-reduce timings price the collective library's all-reduce there: NCCL's on NVIDIA's,
    RCCL's (NCCL's port to ROCm) on AMD's, each chip counted once."""
    page = built.page("reference/predictions/index.html")
    shown = text(page, "chip_nccl_chips")
    nvidia, amd = shown.split("; ")
    assert nvidia.startswith("NCCL's on NVIDIA ") and amd == "RCCL's on AMD Instinct MI300X"
    tm = catalog.policies[catalog.scenarios["reference"].time_model]
    assert value(page, "chip_nccl_chips") == len(tm.chip_nccl) == 6


def test_the_cookbooks_one_request_ttft_gap_shrinks_by_sglangs_issue_of_an_eager_prefill(built: Build, catalog) -> None:
    """The SGLang cookbook's one-request runs (test rows, never fitted) miss the model's TTFT by less now that an
    eager prefill waits for SGLang's own issue of its kernels: the least gap is gpt-oss-120b's, its measured TTFT
    less the model's as the rows page shows it; at vLLM's cost of an issue every gap was larger, the long prompt's
    (whose step the GPU binds) excepted; SGLang's cost per kernel is the policy's, a call of vLLM's the latency's."""
    from snippets import calibration

    page = built.page("reference/predictions/index.html")
    rows = built.page("reference/prediction-rows/index.html")
    rid = "sglcookbook-gptoss120b-mxfp4-sglang-8xb200-sharegpt-c1"
    gap = catalog.measurements[rid].ttft_ms - value(rows, f"rows_test[{rid}][TTFT, model]")
    assert value(page, "plain_gap_low") == pytest.approx(gap, abs=0.5)
    was = {r.id: r for r in calibration.rows_at_time_model_issue(catalog, "test")}
    was_gap = catalog.measurements[rid].ttft_ms - was[rid].predicted("ttft_ms")
    assert was_gap > 3 * gap and value(page, "plain_gap_was_low") <= was_gap + 0.5
    assert value(page, "plain_gap_was_high") > value(page, "plain_gap_high") > value(page, "plain_gap_low") > 0
    assert value(page, "issue_sglang") == pytest.approx(catalog.policies["sglang-default"].host_dispatch * 1e6)
    assert value(page, "issue_vllm") == pytest.approx(catalog.latencies["host-dispatch-eager"].value.value)
    assert value(page, "issue_calls") == 1631  # DeepSeek-V3's prefill of one token at TP8, as the model counts it
    # the one run whose gap stays is the longest prompt's, its length shown with its unit
    longest = max(catalog.measurements[r.id].input_tokens for r in calibration.rows(catalog, "test")
                  if r.id.startswith("sglcookbook-dsr1-fp8-sglang-8xb200-") and r.measurement.concurrency == 1)
    shown = figures(page)["plain_gap_long_tokens"]
    assert value(page, "plain_gap_long_tokens") == longest and shown.get_text() == f"{longest:,} tokens"


def test_the_predictions_page_sets_other_predictors_beside_the_engine(built: Build, catalog) -> None:
    """Beside other predictors: the engine's test-row medians (throughput, TTFT, ITL) as the rows page's errors give
    them, then each published evaluation of another tool with its figures as data/predictors.yaml records them, and
    the page's claims of where the engine stands, each as the figures decide it."""
    import statistics

    from snippets import calibration

    page = built.page("reference/predictions/index.html")
    test = [r for r in calibration.rows(catalog) if r.measurement.role == "test"]
    site = "This site's engine, on its test rows"
    e2e = "End to end (the site: throughput)"
    medians = {}
    for column, metric in ((e2e, "output_tokens_per_s"), ("TTFT", "ttft_ms"), ("ITL", "itl_ms")):
        errs = [abs(e) for r in test if (e := r.error(metric)) is not None]
        medians[column] = statistics.median(errs)
        assert value(page, f"predictors[{site}][{column}]") == pytest.approx(100 * medians[column], rel=1e-6)
    assert value(page, f"predictors[{site}][Runs]") == len(test)
    for entry in catalog.predictors.values():
        for column, metric in ((e2e, "e2e"), ("TTFT", "ttft"), ("ITL", "itl")):
            published = getattr(entry, metric)
            if published is None:
                assert cell(page, "predictors", entry.predictor, column) == "not recorded"
            else:
                assert value(page, f"predictors[{entry.predictor}][{column}]") == published.value
    aic = catalog.predictors["aiconfigurator-showdown"]
    assert cell(page, "predictors", aic.predictor, "Figures") == "read off a chart"
    assert cell(page, "predictors", catalog.predictors["blis-trained-physics"].predictor, "Figures") == "printed"
    # each GPU an evaluation reports alone: the engine's test rows on that GPU beside it
    per_gpu = {}
    for entry in catalog.predictors.values():
        if entry.accelerator is None:
            continue
        row = f"{site} on the {catalog.accelerators[entry.accelerator].name}"
        on = [abs(e) for r in test if r.measurement.accelerator == entry.accelerator
              and (e := r.error("output_tokens_per_s")) is not None]
        per_gpu[entry.accelerator] = 100 * statistics.median(on)
        assert value(page, f"predictors[{row}][{e2e}]") == pytest.approx(per_gpu[entry.accelerator], rel=1e-6)
        assert value(page, f"predictors[{row}][Runs]") == sum(r.measurement.accelerator == entry.accelerator
                                                                for r in test)
    assert set(per_gpu) == {"a100-80gb-sxm", "l40s"}
    assert cell(page, "predictors", f"{site} on the NVIDIA L40S", "ITL") == "none measured"
    # the claims, as the figures decide them: between BLIS's own end-to-end error and AIConfigurator's on throughput;
    # on the GPUs BLIS's fit never saw, ahead of it on the A100 and behind on the L40S; behind every published ITL
    # and TTFT figure
    blis = catalog.predictors["blis-trained-physics"]
    tput, itl, ttft = (100 * medians[c] for c in (e2e, "ITL", "TTFT"))
    claims = {c["data-claim"]: c for c in page.select("span.sa-claim")}
    assert blis.e2e.value < tput < aic.e2e.value
    assert per_gpu["a100-80gb-sxm"] < catalog.predictors["blis-trained-physics-a100"].e2e.value
    assert per_gpu["l40s"] > catalog.predictors["blis-trained-physics-l40s"].e2e.value
    assert itl > max(p.itl.value for p in catalog.predictors.values() if p.itl is not None)
    assert ttft > max(p.ttft.value for p in catalog.predictors.values() if p.ttft is not None)
    tm = catalog.policies[catalog.scenarios["reference"].time_model]
    assert "l40s" not in {catalog.latencies[cn.points].accelerator for cn in tm.chip_nccl}  # priced by the H100's fit
    for name in ("predictor_tput_between", "predictor_a100_ahead", "predictor_l40s_behind", "predictor_l40s_untimed",
                 "predictor_itl_behind", "predictor_ttft_behind"):
        assert claims[name]["title"].startswith("Checked at build time")
    # each evaluation links its sources from its row
    tab = next(t for t in page.select("article table") if t.select_one('span.sa-fig[data-name^="predictors["]'))
    for entry in catalog.predictors.values():
        tr = next(tr for tr in tab.select("tbody tr") if tr.find("td").get_text(" ", strip=True) == entry.predictor)
        assert [a["href"] for a in tr.find_all("td")[-1].select("a")] == [s.url for s in entry.sources]


def test_llama4_counts_its_image_encoder_against_the_card(pages, catalog) -> None:
    """The cards' totals include the image encoder, so the computed count does (871,932,416 parameters by hand:
    tests/unit/test_memory.py); and the sentence on where engines hold it is read from data/policies.yaml."""
    p = pages["models"]
    assert value(p, "params[Llama 4 Scout (17B-16E)][Computed]") == pytest.approx(108.6418, abs=1e-4)  # billions
    assert value(p, "params[Llama 4 Scout (17B-16E)][Difference]") == pytest.approx(-0.3286, abs=1e-3)
    assert "image encoder (34 layers of 1,408, 0.87B)" in cell(p, "architecture", "Llama 4 Scout (17B-16E)", "Features")
    prose = p.select_one("article").get_text(" ", strip=True)
    vendors = catalog.policies["vllm-default"].vision_encoder_vendors
    assert vendors == {"NVIDIA", "AMD", "Intel"}
    assert "vLLM builds it on AMD, Intel and NVIDIA chips, not on AWS or Google chips" in prose
    assert "SGLang builds it on no chip" in prose
