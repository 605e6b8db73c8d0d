"""The built parallelism page, read back with an HTML parser: the figures it shows are the right ones."""

from __future__ import annotations

import json

import pytest

from snippets.data import Catalog
from snippets.pages.scenario import reference

from .conftest import Build, figures, text, value

# By hand, Llama 3.1 405B in BF16 (BF16 activations, 2 bytes) on TP8 x PP2 of H100 SXM, the layout the
# engine deploys for the reference scenario (tp-in-node policy):
MESSAGE = 16384 * 2  # 32,768 bytes per all-reduce
RING = 2 * 7 / 8 * MESSAGE  # 57,344 bytes sent per GPU
TP_BYTES = 126 * 2 * RING  # 14,450,688 bytes per token
# The token's lower bound is the engine's decode ceiling: each stage's busiest GPU reads its weights
# (811.7 GB / 8 per stage, roughly) and one sequence's KV cache; the two stages take turns. Bounded by hand:
# at least 811.7e9 / (8 x 3.35e12) = 30.29 ms (weights alone), at most 1 % more (the KV cache of 8,192 tokens).
READ_FLOOR_S = 811.7e9 / (8 * 3.35e12)
NVLINK = 18 * 25e9  # 450 GB/s one way
NETWORK = 400e9 / 8  # 50 GB/s one way
GEN5 = 32e9 * 16 * 128 / 130 / 8  # 63.0 GB/s one way


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("parallelism/index.html")


@pytest.fixture(scope="module")
def read_s(catalog: Catalog) -> float:
    d = reference(catalog).deployment("llama-3.1-405b", "bf16")
    assert d.layout.label == "TP8 × PP2"
    s = 1 / d.decode_ceiling
    assert READ_FLOOR_S <= s <= READ_FLOOR_S * 1.01
    return s


def test_worked_example(page, read_s: float) -> None:
    assert value(page, "worked.message") == MESSAGE
    assert text(page, "worked.message") == "32,768 bytes"
    assert value(page, "worked.ring_factor") == pytest.approx(1.75)
    assert value(page, "worked.ring_per_gpu") == RING == 57344
    assert value(page, "worked.tp_bytes") == pytest.approx(TP_BYTES / 1e6)  # MB
    assert value(page, "worked.tp_messages") == 126 * 2 * 14
    assert value(page, "worked.read") == pytest.approx(read_s * 1e3)  # ms
    assert text(page, "worked.read") == "30.4 ms"
    assert value(page, "worked.gpus") == 16
    assert value(page, "worked.tp_nvlink") == pytest.approx(TP_BYTES / NVLINK * 1e6)  # µs
    assert value(page, "worked.tp_network") == pytest.approx(TP_BYTES / NETWORK * 1e6)
    nvl_s = TP_BYTES / NVLINK
    assert value(page, "worked.tp_nvlink_share") == pytest.approx(100 * nvl_s / (nvl_s + read_s))
    assert value(page, "worked.pp_bytes") == MESSAGE
    assert value(page, "worked.pp_network") == pytest.approx(MESSAGE / NETWORK * 1e6)


def test_tp_against_pp_in_prose(page, read_s: float) -> None:
    assert value(page, "tp_over_pp_bytes") == pytest.approx(TP_BYTES / MESSAGE) == 441
    assert value(page, "nvlink_over_network") == pytest.approx(9)
    assert value(page, "w.break_even_network") == pytest.approx(read_s / (TP_BYTES / NETWORK))
    assert value(page, "one_stage_read") == pytest.approx(read_s / 2 * 1e3)  # the two stages at once


def test_traffic_table_405b(page) -> None:
    rows = {
        "NVLink 4": NVLINK,
        "PCIe 5.0 x16": GEN5,
        "InfiniBand NDR": NETWORK,
    }
    for link, bw in rows.items():
        label = f"TP8 all-reduces over {link}"
        assert value(page, f"traffic405[{label}][One way]") == pytest.approx(bw / 1e9)
        assert value(page, f"traffic405[{label}][Bytes per token]") == pytest.approx(TP_BYTES / 1e6)
        assert value(page, f"traffic405[{label}][Sequential messages]") == 3528
        assert value(page, f"traffic405[{label}][Bandwidth time]") == pytest.approx(TP_BYTES / bw * 1e6)
    pp = "PP2 boundary over InfiniBand NDR"
    assert value(page, f"traffic405[{pp}][Bytes per token]") == pytest.approx(MESSAGE / 1e3)  # KB
    assert value(page, f"traffic405[{pp}][Sequential messages]") == 1


def test_traffic_table_70b_has_no_pipeline_row(page) -> None:
    names = [n for n in figures(page) if n.startswith("traffic70[")]
    assert names and not any("PP" in n for n in names)
    # 80 layers x 2 x (2 x 1/2 x 16,384 bytes) = 2,621,440 bytes
    assert value(page, "traffic70[TP2 all-reduces over NVLink 4][Bytes per token]") == pytest.approx(2.62144)


def test_layout_table(page, catalog: Catalog) -> None:
    # fewest GPUs an engine accepts (fewest-gpus policy) against the layout rented (tp-in-node policy)
    expect = {
        "Llama 3.1 70B BF16": ("TP2", 2, "TP2", 2, 0, 1),
        "Llama 3.1 70B INT4": ("TP1", 1, "TP1", 1, 0, 1),
        "Llama 3.1 405B BF16": ("TP4 × PP3", 12, "TP8 × PP2", 16, 4, 2),
        "Llama 3.1 405B FP8": ("TP2 × PP3", 6, "TP8", 8, 2, 1),
        "Llama 3.1 405B INT4": ("TP1 × PP3", 3, "TP4", 4, 1, 1),
    }
    table = next(t for t in page.select("table") if "Chosen layout" in t.get_text())
    rows = {tr.find("td").get_text(): tr for tr in table.select("tbody tr")}
    for label, (fewest, n_fewest, layout, rented, extra, nodes) in expect.items():
        cells = rows[label].find_all("td")
        assert cells[2].get_text() == fewest and cells[4].get_text() == layout
        assert value(page, f"layouts[{label}][GPUs, fewest]") == n_fewest
        assert value(page, f"layouts[{label}][GPUs, chosen]") == rented
        assert value(page, f"layouts[{label}][Extra GPUs]") == extra
        assert value(page, f"layouts[{label}][Nodes]") == nodes
    # the same GPU counts as the interconnect page's chart and table: both are the engine's
    r = reference(catalog)
    assert r.deployment("llama-3.1-405b", "bf16").gpus == 16 and r.deployment("llama-3.1-405b", "int4").gpus == 4


def test_layouts_engines_accept_beyond_the_policy(page) -> None:
    table = next(t for t in page.select("table") if "Layers per stage" in t.get_text())
    rows = {tr.find("td").get_text(): [td.get_text() for td in tr.find_all("td")] for tr in table.select("tbody tr")}
    # TP16 over two nodes: 8 KV heads, each on 16 / 8 = 2 GPUs; TP4 x PP3 holds 405B BF16 on 12 GPUs
    assert rows["Llama 3.1 405B BF16 on TP16"][3] == "2" and rows["Llama 3.1 405B BF16 on TP16"][4] == "accepted"
    assert rows["Llama 3.1 405B BF16 on TP4 × PP3"][2] == "42, 42, 42"
    assert rows["Llama 3.1 405B BF16 on TP4 × PP3"][4] == "accepted"
    # vLLM's get_pp_indices: 61 // 4 = 15 each, the one left over to the stage before the last
    assert rows["DeepSeek-V3 FP8 on TP8 × PP4"][2] == "15, 15, 16, 15"
    assert rows["DeepSeek-V3 FP8 on TP8 × PP4"][3] == "8"  # MLA: the compressed latent on every TP rank


def test_ring_table(page) -> None:
    for n in (2, 4, 8):
        assert value(page, f"ring[{n} GPUs][Reduce-scatter steps]") == n - 1
        assert value(page, f"ring[{n} GPUs][Sent per GPU]") == pytest.approx(2 * (n - 1) / n * MESSAGE)


def test_claims_hold_and_answers_are_folded(built: Build, page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 10
    assert all(c["title"].startswith("Checked at build time") for c in claims)
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 4
    assert "57,344 bytes" in answers[0].get_text()
    data = json.loads((built.site / "numbers.json").read_text())
    assert all(c["holds"] for c in data["parallelism.md"]["claims"])


def test_links_to_companion_pages(page) -> None:
    hrefs = {a.get("href") for a in page.select("article a")}
    for target in ("../interconnect/", "../hbm/", "../precision/"):
        assert target in hrefs
