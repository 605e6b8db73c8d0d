"""The built "Numeric precision" page, read back with an HTML parser: the figures it shows are the right ones.

Expected values are worked out by hand from the definitions, not copied from the page model:
bits per weight = element bits + (scale bits + zero-point bits) / group size; weights = params x bits / 8;
GPUs = weights / 70 GB usable, rounded up; ceilings = GPUs reading at once x 3.35 TB/s / weight bytes.
"""

from __future__ import annotations

import json

import pytest

from .conftest import Build, figures, text, value

GROUPED = "INT4, groups of 128 (GPTQ/AWQ)"


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("precision/index.html")


@pytest.mark.parametrize(
    ("fmt", "bits", "bytes_", "vs_fp16"),
    [
        ("FP32", 32, 4, 0.5),
        ("BF16", 16, 2, 1),
        ("FP16", 16, 2, 1),
        ("FP8", 8, 1, 2),
        ("INT8", 8, 1, 2),
        ("INT4", 4, 0.5, 4),
        (GROUPED, 4 + (16 + 4) / 128, 4.15625 / 8, 16 / 4.15625),  # FP16 scale + 4-bit zero per 128
        ("MXFP4", 4 + 8 / 32, 4.25 / 8, 16 / 4.25),  # E8M0 scale per 32
        ("NVFP4", 4 + 8 / 16, 4.5 / 8, 16 / 4.5),  # E4M3 scale per 16
    ],
)
def test_formats_table(page, fmt: str, bits: float, bytes_: float, vs_fp16: float) -> None:
    assert value(page, f"formats[{fmt}][Bits per weight]") == pytest.approx(bits)
    assert value(page, f"formats[{fmt}][Bytes per weight]") == pytest.approx(bytes_)
    assert value(page, f"formats[{fmt}][FP16 bytes ÷ these]") == pytest.approx(vs_fp16)


def test_block_scale_prose(page) -> None:
    assert text(page, "int4_g128.bits") == "4.15625"
    assert text(page, "int4_scale_only_bits") == "4.125"  # 4 + 16/128, the scale without a zero point
    assert text(page, "mxfp4.bits") == "4.25"
    assert text(page, "nvfp4.bits") == "4.5"
    assert text(page, "nvfp4.shrink") == "3.56×"
    assert value(page, "int4_g128.overhead") == pytest.approx(0.15625 / 4 * 100)


def test_worked_example(page) -> None:
    assert value(page, "worked.fp16_weight") == 140  # 70e9 x 2 bytes
    assert value(page, "worked.element_weight") == 35  # 70e9 x 0.5 bytes
    assert value(page, "worked.meta_bits") == pytest.approx(0.15625)
    assert value(page, "worked.meta_weight") == pytest.approx(70 * 0.15625 / 8)  # 1.37 GB
    assert value(page, "worked.int4_weight") == pytest.approx(70 * 4.15625 / 8)  # 36.37 GB
    assert value(page, "worked.fp16_gpus") == 2 and value(page, "worked.int4_gpus") == 1
    assert value(page, "worked.fp16_ceiling") == pytest.approx(2 * 3350 / 140)  # 47.9 tokens/s
    assert value(page, "worked.int4_ceiling") == pytest.approx(3350 / (70 * 4.15625 / 8))  # 92.1
    assert value(page, "worked.int4_same_gpus") == pytest.approx(2 * 3350 / (70 * 4.15625 / 8))  # 184


@pytest.mark.parametrize(
    ("model", "prec", "weight_gb", "weights_only", "headroom", "layout"),
    [
        ("m70", "FP32", 280, 4, 4, "TP4"),
        ("m70", "FP16", 140, 2, 2, "TP2"),
        ("m70", "INT8", 70, 1, 1, "TP1"),
        ("m70", GROUPED, 70 * 4.15625 / 8, 1, 1, "TP1"),
        ("m405", "FP32", 1620, 21, 24, "TP8 × PP3"),  # 1620/80 = 20.25; 1620/70 = 23.1
        ("m405", "FP16", 810, 11, 12, "TP8 × PP2"),
        ("m405", "FP8", 405, 6, 6, "TP8"),  # 6 GPUs, rounded up to a TP degree that divides 8 KV heads
        ("m405", "INT4", 202.5, 3, 3, "TP4"),
        ("m405", GROUPED, 405 * 4.15625 / 8, 3, 4, "TP4"),  # 210.4/70 = 3.006: the scales cost a GPU
        ("m405", "MXFP4", 405 * 4.25 / 8, 3, 4, "TP4"),
        ("m405", "NVFP4", 405 * 4.5 / 8, 3, 4, "TP4"),
    ],
)
def test_sizing_tables(page, model: str, prec: str, weight_gb: float, weights_only: int, headroom: int,
                       layout: str) -> None:
    t = f"sizing_{model}[{prec}]"
    assert value(page, f"{t}[Weights]") == pytest.approx(weight_gb)
    assert value(page, f"{t}[GPUs, weights only]") == weights_only
    assert value(page, f"{t}[GPUs with headroom]") == headroom
    table = next(tb for tb in page.select("table") if f"sizing_{model}[" in str(tb))
    row = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text() == prec)
    assert row.find_all("td")[7].get_text() == layout


def test_decode_ceiling_rises_with_fewer_bytes(page) -> None:
    col = "Ceiling on one node (TP8), tokens/s"
    fp16 = value(page, f"decode_m70[FP16][{col}]")
    assert fp16 == pytest.approx(8 * 3350 / 140)  # 191.4
    assert value(page, f"decode_m70[INT8][{col}]") == pytest.approx(2 * fp16)
    assert value(page, f"decode_m70[NVFP4][{col}]") == pytest.approx(fp16 * 16 / 4.5)
    assert value(page, f"decode_m405[FP8][{col}]") == pytest.approx(8 * 3350 / 405)  # 66.2
    # 405B in FP16 does not fit one node: the cell says so instead of a number
    assert f"decode_m405[FP16][{col}]" not in figures(page)
    # with pipeline stages only one stage's TP8 reads at a time: 8 x 3.35 TB/s / 810 GB
    assert value(page, "decode_m405[FP16][Ceiling on it, tokens/s]") == pytest.approx(8 * 3350 / 810)


def test_cost_table(page) -> None:
    assert value(page, "cost_m70[FP16][Replicas per node]") == 4  # 8 // TP2
    assert value(page, "cost_m70[INT8][Replicas per node]") == 8
    assert value(page, "cost_m70[FP32][Replicas per node]") == 2
    per_node = 8 * 3350 / 140  # the node's summed ceiling in FP16
    assert value(page, "cost_m70[FP16][Node, one sequence per replica, tokens/s]") == pytest.approx(per_node)
    assert value(page, "cost_m70[INT8][Node, one sequence per replica, tokens/s]") == pytest.approx(2 * per_node)


def test_float_ranges(page) -> None:
    assert value(page, "ranges[FP8 E4M3][Largest value]") == 448
    assert value(page, "ranges[FP8 E5M2][Largest value]") == 57344
    assert value(page, "ranges[FP16][Largest value]") == 65504
    assert value(page, "ranges[FP8 E4M3][Smallest value above zero]") == 2**-9
    assert text(page, "e4m3_step") == "12.5%" and text(page, "e5m2_step") == "25%"
    assert value(page, "e5m2_over_e4m3_range") == 128


def test_claims_hold_and_links_resolve(page, built: Build) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 15
    assert all(c["title"].startswith("Checked at build time") for c in claims)
    hrefs = {a["href"] for a in page.select("article a[href]")}
    for target in ("../interconnect/", "../hbm/", "../parallelism/"):
        assert target in hrefs
    data = json.loads((built.site / "numbers.json").read_text())
    assert all(c["holds"] for c in data["precision.md"]["claims"])


def test_page_shape(page) -> None:
    headings = [h.get_text().rstrip("¶") for h in page.select("article h2")]
    for h in ("The cost lens", "The architect's lens", "Check your understanding", "Where these numbers come from"):
        assert h in headings
    assert any(h.startswith("Worked example") for h in headings)
    assert any(h.startswith("Under the hood") for h in headings)
    assert len(page.select("article dl dt")) == 5
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 4
    assert "4.15625" in answers[0].get_text()
