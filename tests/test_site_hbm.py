"""The HBM page, read back from the built HTML: the figures it shows are the hand-derived ones."""

from __future__ import annotations

import pytest

from .conftest import Build, figures, text, value

GB = 1e9
GIB = 2**30
H100 = 3.35e12            # H100 SXM datasheet, bytes/s, shared
A100 = 2.039e12           # A100 80GB SXM datasheet, bytes/s, shared
CTX = 8192                # decode-context assumption, tokens
KV70 = 2 * 80 * 8 * 128 * 2      # Llama 3.1 70B, FP16: 327,680 bytes per token
KV405 = 2 * 126 * 8 * 128 * 2    # Llama 3.1 405B, FP16: 516,096 bytes per token


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("hbm/index.html")


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("gpu_memory", 80, "80 GB"),
        ("gpu_memory_gib", 80e9 / GIB, "74.5 GiB"),           # 80e9 / 2^30 = 74.51
        ("binary_reading", 80, "80 GiB"),
        ("gib_gap", (GIB / GB - 1) * 100, "7.4%"),            # 2^30 / 10^9 = 1.0737
        ("hbm", 3.35, "3.35 TB/s"),
        ("hbm_old", 2.039, "2.04 TB/s"),
        ("sweep", 80e9 / H100 * 1e3, "23.9 ms"),              # 80 GB / 3.35 TB/s
        ("sweep_old", 80e9 / A100 * 1e3, "39.2 ms"),
        ("intensity_fp16", 1, "1"),                           # 2 FLOP / 2 bytes
        ("ridge_old", 312e12 / A100, "153"),                  # 312 TFLOP/s dense BF16 / 2,039 GB/s
        ("w.weight", 140, "140 GB"),
        ("w.bw", 6.7, "6.70 TB/s"),                           # TP2: 2 x 3.35 TB/s
        ("w.tps_weights", 6.7e12 / 140e9, "47.9"),
        ("worked.kv_token", KV70, "327,680 bytes"),
        ("worked.kv_token_mb", KV70 / 1e6, "0.33 MB"),
        ("w.kv_context", CTX * KV70 / GB, "2.68 GB"),
        ("w.tps_kv", 6.7e12 / (140e9 + CTX * KV70), "47.0"),
        ("kv_max", 131072 * KV70 / GB, "42.9 GB"),            # the full 128K context
        ("s405.weight", 810, "810 GB"),
        ("s405.gpus_needed", 12, "12"),
        ("s405.gpus", 16, "16"),                              # TP8 x PP2
        ("s405.one_gpu_tps", H100 / 810e9, "4.1"),
        ("s405.tps_weights", 16 * H100 / 810e9, "66.2"),
        ("s405.gain", 16, "16×"),
        ("s405.tps_seq", 8 * H100 / (810e9 + CTX * KV405), "32.9"),   # one stage of TP8 at a time
        ("s405.kv_token", KV405, "516,096 bytes"),
        ("fp16_cap", 40, "40B"),
        ("fp16_cap_usable", 35, "35B"),
        ("w.max_batch", 7, "7"),                              # (160 - 140) GB / 2.684 GB = 7.45
        ("hbm_over_gen5", 3350 / (32 * 16 * 128 / 130 / 8), "53×"),   # PCIe 5.0 x16: 63.0 GB/s each way
    ],
)
def test_prose_figures(page, name: str, expected: float, shown: str) -> None:
    assert value(page, name) == pytest.approx(expected, rel=1e-6)
    assert text(page, name) == shown


def test_page_names_its_binary_and_decimal_units(page) -> None:
    assert value(page, "gb") == GB and value(page, "gib") == GIB


def test_worked_example_steps(page) -> None:
    assert value(page, "worked.weight") == 140
    assert value(page, "worked.gpus") == 2
    assert value(page, "worked.step_weights") == pytest.approx(140e9 / 6.7e12 * 1e3)   # 20.9 ms
    assert value(page, "worked.kv_token") == 327_680
    assert value(page, "worked.context") == CTX
    assert value(page, "worked.kv_context") == pytest.approx(2.68435456)
    assert value(page, "worked.tps_kv") == pytest.approx(46.957, abs=1e-3)


def test_gpu_table_shows_gb_and_gib(page) -> None:
    for gpu, bw, sweep in (("NVIDIA A100 80GB SXM", 2039, 39.23), ("NVIDIA H100 SXM", 3350, 23.88)):
        assert value(page, f"gpus[{gpu}][Capacity (GB)]") == 80
        assert value(page, f"gpus[{gpu}][Capacity (GiB)]") == pytest.approx(74.506, abs=1e-3)
        assert value(page, f"gpus[{gpu}][Bandwidth]") == pytest.approx(bw)
        assert figures(page)[f"gpus[{gpu}][Bandwidth]"]["data-basis"] == "shared by reads and writes"
        assert value(page, f"gpus[{gpu}][Read all of it once]") == pytest.approx(sweep, abs=0.01)


def test_what_fits_table(page, catalog) -> None:
    # 80 GB / bytes per weight, and 70 GB usable / bytes per weight
    expect = {"FP32": (20, 17.5), "BF16 / FP16": (40, 35), "FP8": (80, 70), "INT8": (80, 70)}
    int4_bits = catalog.precisions["int4"].bits_per_param
    expect["INT4"] = (80 * 8 / int4_bits, 70 * 8 / int4_bits)   # 160B and 140B at a bare 4 bits
    for label, (bare, usable) in expect.items():
        assert value(page, f"fits[{label}][Most params, weights only]") == pytest.approx(bare)
        assert value(page, f"fits[{label}][Most params, with reserve]") == pytest.approx(usable)
    table = next(t for t in page.select("table") if "Fits one card with reserve?" in t.get_text())
    verdicts = {tr.find("td").get_text(): tr.find_all("td")[-1].get_text() for tr in table.select("tbody tr")}
    # Llama 3.1 70B: 280, 140, 70, 70, 35 GB against 70 GB usable
    assert verdicts == {"FP32": "No", "BF16 / FP16": "No", "FP8": "Yes", "INT8": "Yes", "INT4": "Yes"}


def test_ceiling_table(page) -> None:
    row = "ceiling[Llama 3.1 405B FP16 on H100 SXM]"
    assert value(page, f"{row}[HBM, all GPUs]") == pytest.approx(53.6)
    assert value(page, f"{row}[Weights only]") == pytest.approx(53.6e12 / 810e9)
    assert value(page, f"{row}[With KV cache]") == pytest.approx(53.6e12 / (810e9 + CTX * KV405))
    assert value(page, f"{row}[One sequence]") == pytest.approx(26.8e12 / (810e9 + CTX * KV405))
    # one A100 holds 70B in INT8 (70 GB on 70 GB usable): 2,039 GB/s / 72.68 GB, per GPU-hour x 3600
    row = "ceiling[Llama 3.1 70B INT8 on A100 80GB SXM]"
    assert value(page, f"{row}[Per GPU-hour]") == pytest.approx(A100 / (70e9 + CTX * KV70) * 3600)


def test_batch_table_stops_at_what_fits(page) -> None:
    names = [n for n in figures(page) if n.startswith("batch[") and n.endswith("[Sequences]")]
    batches = sorted(int(value(page, n)) for n in names)
    assert batches == [1, 2, 4, 7]
    # 7 sequences: 7 x 6.7 TB/s / (140 GB + 7 x 2.684 GB) = 295.4 tokens/s
    assert value(page, "batch[7][Replica ceiling]") == pytest.approx(7 * 6.7e12 / (140e9 + 7 * CTX * KV70))
    assert value(page, "batch[1][Replica ceiling]") == pytest.approx(value(page, "w.tps_kv"))


def test_claims_are_marked_and_hold(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 12
    for c in claims:
        assert c["title"].startswith("Checked at build time")


def test_quiz_answers_are_folded(page) -> None:
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 4
    assert "516,096 bytes" in answers[0].get_text()


def test_links_to_the_companion_pages(page) -> None:
    hrefs = {a["href"] for a in page.select("article a[href]")}
    for target in ("../interconnect/", "../precision/", "../parallelism/"):
        assert any(h.startswith(target) for h in hrefs), target


def test_sources_include_the_context_assumption(page, catalog) -> None:
    ctx = catalog.assumptions["decode-context"]
    assert ctx.value.unit == "tokens" and ctx.range[0] <= ctx.value.value <= ctx.range[1]
    assert ctx.range[1] == 131072  # Llama 3.1 max_position_embeddings
    assert "decode-context" in page.get_text()
