"""The built "Numeric precision" page, read back with an HTML parser: the figures it shows are the right ones.

Expected values are worked out by hand from the definitions, not copied from the page model:
bits per weight = element bits + (scale bits + zero-point bits) / group size. Deployments are the
engine's at the reference scenario (vLLM's pool of 0.9 x the 79.22 GiB CUDA reports of an H100; one
8,192-token sequence; the activation peak of vllm serve's profiling run, 4.76 GiB on an H100, and the memory
outside PyTorch by TP degree: vLLM refuses Llama 3.1 70B FP16 on TP2, whose pool leaves less than one sequence's KV
cache); weights count the architecture's parameters, with the embedding and LM head in BF16 in the quantized formats.
"""

from __future__ import annotations

import json

import pytest

from ..conftest import Build, figures, text, value

GROUPED = "INT4, groups of 128 (GPTQ/AWQ)"
H100 = 3.35e12
P70 = 70_553_706_496                      # Llama 3.1 70B from its architecture
VOCAB70 = 2 * 128_256 * 8192              # embedding + LM head, kept in BF16
NORMS70 = (2 * 80 + 1) * 8192
LINEAR70 = P70 - VOCAB70 - NORMS70
KV70_GPU = 2 * 80 * 8 * 128 * 2 * 8192    # one BF16 sequence, whole model (TP1)
W70_FP16_TP4 = ((P70 - NORMS70) / 4 + NORMS70) * 2
W70_G128 = LINEAR70 * 4.15625 / 8 + (VOCAB70 + NORMS70) * 2   # 39.77 GB


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
    assert value(page, "worked.fp16_weight") == pytest.approx(P70 * 2 / 1e9)  # 141.1 GB
    assert value(page, "worked.meta_bits") == pytest.approx(0.15625)
    assert value(page, "worked.kept16") == pytest.approx((VOCAB70 + 8192) * 2 / 1e9)  # 4.2 GB
    assert value(page, "worked.int4_weight") == pytest.approx(W70_G128 / 1e9)
    assert value(page, "worked.fp16_gpus") == 4 and value(page, "worked.int4_gpus") == 1
    # FP16 on TP4: each GPU reads its quarter of the weights (norms whole) and a quarter of the KV heads
    assert value(page, "worked.fp16_ceiling") == pytest.approx(H100 / (W70_FP16_TP4 + KV70_GPU / 4))  # 93.2
    assert value(page, "worked.int4_ceiling") == pytest.approx(H100 / (W70_G128 + KV70_GPU))  # 78.9


@pytest.mark.parametrize(
    ("model", "prec", "weight_gb", "layout"),
    [
        ("m70", "FP32", P70 * 4 / 1e9, "TP8"),   # 4 GPUs' 65.7 GiB each leave no room for the runtime
        ("m70", "FP16", P70 * 2 / 1e9, "TP4"),   # TP2 is refused: 65.7 + 4.76 + 0.55 GiB leave less than one sequence
        ("m70", "INT8", (LINEAR70 + (VOCAB70 + NORMS70) * 2) / 1e9, "TP2"),  # 72.7 GB + runtime + KV > one pool
        ("m70", GROUPED, W70_G128 / 1e9, "TP1"),
        ("m405", "FP32", None, "TP8 × PP3"),
        ("m405", "FP16", 405_853_388_800 * 2 / 1e9, "TP8 × PP2"),
        ("m405", "FP8", None, "TP8"),
        ("m405", "INT4", None, "TP4"),
        ("m405", GROUPED, None, "TP4"),  # the scales cost 7.8 GB, not a GPU
        ("m405", "NVFP4", None, "TP4"),
    ],
)
def test_sizing_tables(page, model: str, prec: str, weight_gb: float | None, layout: str) -> None:
    t = f"sizing_{model}[{prec}]"
    if weight_gb is not None:
        assert value(page, f"{t}[Weights]") == pytest.approx(weight_gb)
    table = next(tb for tb in page.select("table") if f"sizing_{model}[" in str(tb))
    row = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text() == prec)
    assert row.find_all("td")[4].get_text() == layout
    assert value(page, f"{t}[Pool used per GPU]") <= 0.9 * 79.22


def test_decode_ceiling_rises_with_fewer_bytes(page) -> None:
    col = "Ceiling on one node (TP8), tokens/s"
    fp16 = value(page, f"decode_m70[FP16][{col}]")
    int8 = value(page, f"decode_m70[INT8][{col}]")
    nvfp4 = value(page, f"decode_m70[NVFP4][{col}]")
    # rises, but by less than the format shrinks the weights: BF16 KV cache and embeddings stay
    assert fp16 < int8 < 2 * fp16 and int8 < nvfp4 < fp16 * 16 / 4.5
    assert f"decode_m405[FP16][{col}]" not in figures(page)
    # the pipelined FP16 405B is slower for one sequence than FP8 on half the GPUs
    assert value(page, "decode_m405[FP16][Ceiling on it, tokens/s]") < value(page, "decode_m405[FP8][Ceiling on it, tokens/s]")
    assert value(page, "decode_m405[FP16][Ceiling on it, tokens/s]") < 8 * H100 / (405_853_388_800 * 2)


def test_cost_table(page) -> None:
    assert value(page, "cost_m70[FP16][Replicas per node]") == 2  # 8 // TP4
    assert value(page, "cost_m70[INT8][Replicas per node]") == 4  # INT8 on TP2
    assert value(page, f"cost_m70[{GROUPED}][Replicas per node]") == 8
    assert value(page, "cost_m70[FP32][Replicas per node]") == 1  # TP8
    per_node = 2 * H100 / (W70_FP16_TP4 + KV70_GPU / 4)
    assert value(page, "cost_m70[FP16][Node, one sequence per replica, tokens/s]") == pytest.approx(per_node)
    # $2.69 per GPU-hour (RunPod Community Cloud, Sep 2026) x 4 GPUs over the FP16 replica's tokens per hour, per million
    ceiling = H100 / (W70_FP16_TP4 + KV70_GPU / 4)
    assert value(page, "cost_m70[FP16][Per million tokens]") == pytest.approx(4 * 2.69 / (ceiling * 3600) * 1e6)


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
    questions = page.find(id="check-your-understanding").find_next("ol").find_all("li", recursive=False)
    assert len(answers[0].select("ol > li")) == len(questions) == 5
    assert "4.15625" in answers[0].get_text()
    assert not any(q.get_text().startswith("Why ") for q in questions)   # applied problems, not recall


def test_quiz_answers_are_the_hand_worked_ones(page) -> None:
    # Llama 3.1 405B in MXFP4 (4 bits + an 8-bit scale per 32: 4.25 bits) and NVFP4 (4 bits + an 8-bit scale per
    # 16: 4.5 bits): the linear weights a sixteenth apart
    mx, nv = value(page, "m405.mxfp4.weight"), value(page, "m405.nvfp4.weight")
    assert nv > mx and (nv - mx) / mx == pytest.approx((4.5 - 4.25) / 4.25, rel=0.05)
    # four A100s with Llama 3.1 70B in FP8: a quarter of 70.6 GB each (plus the BF16 embeddings), more sequences
    # than in BF16, and half the bytes read a token (weight-only: stored in FP8, computed in BF16)
    assert value(page, "q5_gpus") == 4
    assert 70.55e9 / 4 / 2**30 < value(page, "q5_fp8_weights") < 20
    assert value(page, "q5_bf16_seqs") < value(page, "q5_fp8_seqs")
    assert 1.5 < value(page, "q5_fp8_tps") / value(page, "q5_bf16_tps") < 2
