"""The built parallelism page, read back with an HTML parser: the figures it shows are the right ones."""

from __future__ import annotations

import json

import pytest

from .conftest import Build, figures, text, value

# By hand, Llama 3.1 405B in FP16 (BF16 activations, 2 bytes) on TP8 x PP2 of H100 SXM:
MESSAGE = 16384 * 2  # 32,768 bytes per all-reduce
RING = 2 * 7 / 8 * MESSAGE  # 57,344 bytes sent per GPU
TP_BYTES = 126 * 2 * RING  # 14,450,688 bytes per token
READ_S = 810e9 / (8 * 3.35e12)  # 30.22 ms: the two stages take turns
NVLINK = 18 * 25e9  # 450 GB/s one way
NETWORK = 400e9 / 8  # 50 GB/s one way
GEN5 = 32e9 * 16 * 128 / 130 / 8  # 63.0 GB/s one way


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("parallelism/index.html")


def test_worked_example(page) -> None:
    assert value(page, "worked.message") == MESSAGE
    assert text(page, "worked.message") == "32,768 bytes"
    assert value(page, "worked.ring_factor") == pytest.approx(1.75)
    assert value(page, "worked.ring_per_gpu") == RING == 57344
    assert value(page, "worked.tp_bytes") == pytest.approx(TP_BYTES / 1e6)  # MB
    assert value(page, "worked.tp_messages") == 126 * 2 * 14
    assert value(page, "worked.read") == pytest.approx(READ_S * 1e3)  # ms
    assert text(page, "worked.read") == "30.2 ms"
    assert value(page, "worked.tp_nvlink") == pytest.approx(TP_BYTES / NVLINK * 1e6)  # µs
    assert value(page, "worked.tp_network") == pytest.approx(TP_BYTES / NETWORK * 1e6)
    nvl_s = TP_BYTES / NVLINK
    assert value(page, "worked.tp_nvlink_share") == pytest.approx(100 * nvl_s / (nvl_s + READ_S))
    assert value(page, "worked.pp_bytes") == MESSAGE
    assert value(page, "worked.pp_network") == pytest.approx(MESSAGE / NETWORK * 1e6)


def test_tp_against_pp_in_prose(page) -> None:
    assert value(page, "tp_over_pp_bytes") == pytest.approx(TP_BYTES / MESSAGE) == 441
    assert value(page, "nvlink_over_network") == pytest.approx(9)
    assert value(page, "w.break_even_network") == pytest.approx(READ_S / (TP_BYTES / NETWORK))
    assert value(page, "one_stage_read") == pytest.approx(810e9 / (16 * 3.35e12) * 1e3)


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


def test_layout_table(page) -> None:
    expect = {
        "Llama 3.1 70B FP16": (2, "TP2", 2, 0, 1),
        "Llama 3.1 70B INT8": (1, "TP1", 1, 0, 1),
        "Llama 3.1 405B FP16": (12, "TP8 × PP2", 16, 4, 2),
        "Llama 3.1 405B INT8": (6, "TP8", 8, 2, 1),
    }
    table = next(t for t in page.select("table") if "Deployable layout" in t.get_text())
    rows = {tr.find("td").get_text(): tr for tr in table.select("tbody tr")}
    for label, (capacity, layout, rented, extra, nodes) in expect.items():
        assert value(page, f"layouts[{label}][GPUs of capacity]") == capacity
        assert rows[label].find_all("td")[3].get_text() == layout
        assert value(page, f"layouts[{label}][GPUs rented]") == rented
        assert value(page, f"layouts[{label}][Extra GPUs]") == extra
        assert value(page, f"layouts[{label}][Nodes]") == nodes


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
