"""The HBM page, read back from the built HTML: the figures it shows are the hand-derived ones.

The page sizes through the engine for the reference scenario (one sequence of 8,192 tokens, BF16
KV cache, vLLM's pool of 0.9 x the reported memory; on an H100, vllm serve's 1,024 sequences, whose
sampler warm-up holds 1,024 x 128,256 logits x 38.9 bytes = 4.76 GiB for Llama 3.1, and the memory
outside PyTorch by TP degree: 0.13 GiB at TP1, 0.55 GiB at TP2 and above, vLLM 0.11.0's worker). The expected
values below are
worked out by hand from config.json shapes.
"""

from __future__ import annotations

import copy
import math

import pytest

from snippets.data import Catalog
from snippets.pages.scenario import SERVING, reference

from ..conftest import Build, figures, text, value

GB = 1e9
GIB = 2**30
H100 = 3.35e12                    # H100 SXM datasheet, bytes/s, shared
A100 = 2.039e12                   # A100 80GB SXM datasheet, bytes/s, shared
H100_REPORTED = 79.22 * 2**30     # CUDA's total (vllm-project/vllm#10511): 81,121 MiB, 85.06 GB; nvidia-smi shows 81,559 MiB
A100_REPORTED = 85_100_068_864   # A100 80GB SXM: deviceQuery's totalGlobalMem, 81,158 MiB (thamada/nvidia-smi)
POOL = 0.9 * H100_REPORTED        # vllm-default: 71.30 GiB
SAMPLER = 1024 * 128_256 * 38.9   # the profiling run's sampler: 1,024 rows of Llama 3's logits, 4.76 GiB
NON_TORCH = {1: 0.13 * GIB, 2: 0.55 * GIB, 4: 0.55 * GIB}   # vLLM 0.11.0's logs (llm-d); TP4 takes TP2's
CTX = 8192

# Llama 3.1 70B: 80 layers, hidden 8192, vocab 128,256, untied embedding and LM head, 8 KV heads of 128
P70 = 70_553_706_496              # parameters from the architecture
NORMS70 = (2 * 80 + 1) * 8192     # RMSNorm weights, kept whole on every GPU
VOCAB70 = 2 * 128_256 * 8192      # embedding + LM head
LINEAR70 = P70 - NORMS70 - VOCAB70
KV70 = 2 * 80 * 8 * 128 * 2       # 327,680 bytes per token, BF16

# TP2 in BF16: half of everything but the norms; vLLM refuses it (71.30 - 65.71 - 4.76 - 0.55 = 0.28 GiB < 1.25)
W70_TP2 = ((P70 - NORMS70) / 2 + NORMS70) * 2          # 70,555,025,408 bytes per GPU
KV70_TP2 = KV70 / 2 * CTX                              # 1,342,177,280 bytes per GPU
# TP4 in BF16, the smallest layout vLLM accepts: a quarter of everything but the norms
W70_TP4 = ((P70 - NORMS70) / 4 + NORMS70) * 2          # 35,278,831,616 bytes per GPU
KV70_TP4 = KV70 / 4 * CTX                              # 671,088,640 bytes per GPU
ROOM70_TP4 = POOL - W70_TP4 - SAMPLER - NON_TORCH[4]   # 33.13 GiB of KV room: 53.0 sequences

# FP8: linear weights 1 byte, the embedding, LM head and norms 2 bytes
W70_FP8_TP2 = LINEAR70 / 2 + VOCAB70 / 2 * 2 + NORMS70 * 2   # 36,329,504,768 bytes per GPU
W70_FP8_TP4 = LINEAR70 / 4 + VOCAB70 / 4 * 2 + NORMS70 * 2   # 18,166,071,296 bytes per GPU
W70_FP8 = LINEAR70 + VOCAB70 * 2 + NORMS70 * 2               # 72,656,371,712 bytes, one copy

# Llama 3.1 405B in BF16 on TP8 x PP2 (63 + 63 layers): per GPU, per stage
L405 = (2 * 16384 * 16384 + 2 * 16384 * 1024 + 3 * 16384 * 53248) / 8 + 2 * 16384   # one layer on one GPU
EMB405 = 128_256 * 16384 / 8
STAGES405 = 2 * (63 * L405 + EMB405) + 16384          # parameters: stage 1 + stage 2 (final norm)
KV405_GPU = 2 * 63 * 1 * 128 * 2 * CTX                # one KV head per GPU, each stage
STEP405 = STAGES405 * 2 + 2 * KV405_GPU               # the stages in turn: 101,999,083,520 bytes
KV405 = 2 * 126 * 8 * 128 * 2                         # 516,096 bytes per token, whole model


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("hbm/index.html")


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("gpu_label", 80, "80 GB"),
        ("gpu_label_gib", 80e9 / GIB, "74.5 GiB"),
        ("gpu_reported_mib", 79.22 * 1024, "81,121 MiB"),
        ("gpu_reported", H100_REPORTED / GIB, "79.2 GiB"),
        ("gpu_smi_mib", 81559, "81,559 MiB"),
        ("gpu_reported_gb", H100_REPORTED / GB, "85.1 GB"),
        ("pool", POOL / GIB, "71.3 GiB"),
        ("utilization", 90, "90%"),
        ("gib_gap", (GIB / GB - 1) * 100, "7.4%"),
        ("hbm", 3.35, "3.35 TB/s"),
        ("hbm_old", 2.039, "2.04 TB/s"),
        ("sweep", H100_REPORTED / H100 * 1e3, "25.4 ms"),
        ("sweep_old", A100_REPORTED / A100 * 1e3, "41.7 ms"),
        ("intensity", 1, "1"),                                  # 2 FLOP / 2 bytes
        ("ridge_old", 312e12 / A100, "153"),                    # 312 TFLOP/s dense BF16 / 2,039 GB/s
        ("ridge", 989.5e12 / H100, "295"),                      # 1,979 sparse / 2 = 989.5 dense
        ("worked.params", P70 / 1e9, "70.55B"),
        ("w.weight", P70 * 2 / GB, "141.1 GB"),
        ("w.weights_gpu", W70_TP4 / GB, "35.3 GB"),
        ("w.tps_weights", H100 / W70_TP4, "95.0"),
        ("w.kv_context_gpu", KV70_TP4 / GB, "0.67 GB"),
        ("w.tps_kv", H100 / (W70_TP4 + KV70_TP4), "93.2"),
        ("w.max_seq", 53, "53"),                                # 33.13 GiB / 0.625 GiB = 53.01
        ("tight_weights", W70_TP2 / GIB, "65.7 GiB"),
        ("tight_activations", SAMPLER / GIB, "4.76 GiB"),
        ("tight_non_torch", 0.55, "0.55 GiB"),
        ("tight_room_small", (POOL - W70_TP2 - 256 * 128_256 * 38.9 - NON_TORCH[2]) / GIB, "3.85 GiB"),
        ("tight_seqs_small", 3, "3"),                           # 3.85 GiB / 1.25 GiB = 3.08
        ("tight_need", KV70_TP2 / GIB, "1.25 GiB"),
        ("kv_max", 131072 * KV70 / GB, "42.9 GB"),              # the full 128K context
        ("s8.one_gpu_tps", H100 / (405_853_388_800 + 2 * 128_256 * 16384) * 1, "8.2"),
        ("s405.gpus", 16, "16"),
        ("s405.tps_kv", H100 / STEP405, "32.8"),                # two stages in turn, TP8 each
        ("s405.kv_token", KV405, "516,096 bytes"),
        ("lean.max_seq", 78, "78"),                             # FP8 on TP4: (71.30 - 16.92 - 5.31) / 0.625 = 78.5
        ("hbm_over_gen5", 3350 / (32 * 16 * 128 / 130 / 8), "53×"),   # PCIe 5.0 x16: 63.0 GB/s each way
    ],
)
def test_prose_figures(page, name: str, expected: float, shown: str) -> None:
    assert value(page, name) == pytest.approx(expected, rel=1e-3 if name == "s8.one_gpu_tps" else 1e-6)
    assert text(page, name) == shown


def test_page_names_its_binary_and_decimal_units(page) -> None:
    assert value(page, "gb") == GB and value(page, "gib") == GIB


def test_worked_example_steps(page) -> None:
    assert value(page, "worked.weight") == pytest.approx(P70 * 2 / GB)
    assert value(page, "worked.gpus") == 4
    assert value(page, "worked.kv_token") == KV70
    assert value(page, "worked.kv_token_gpu") == KV70 / 4
    assert value(page, "worked.context") == CTX
    assert value(page, "worked.step_weights") == pytest.approx(W70_TP4 / H100 * 1e3)
    assert value(page, "worked.tps_kv") == pytest.approx(H100 / (W70_TP4 + KV70_TP4))
    assert value(page, "worked.activations") == pytest.approx(SAMPLER / GIB)
    assert value(page, "worked.w_room") == pytest.approx(ROOM70_TP4 / GIB)
    free = ROOM70_TP4 - KV70_TP4
    assert value(page, "worked.free_gib") == pytest.approx(free / GIB)
    # TP2: 71.30 - 65.71 - 4.76 - 0.55 = 0.28 GiB, short of one sequence's 1.25 GiB, and vLLM's own words for it:
    # 0.28 GiB holds 114 blocks of 16 tokens, 1,824 tokens
    assert value(page, "tight.room") == pytest.approx((POOL - W70_TP2 - SAMPLER - NON_TORCH[2]) / GIB)
    # vLLM's message whole, in one code element: its own backticks shown as typed, not ending a code span
    codes = [c.get_text() for c in page.select("article code")]
    assert ("To serve at least one request with the models's max seq len (8192), (1.25 GiB KV cache is needed, "
            "which is larger than the available KV cache memory (0.28 GiB). Based on the available memory, the "
            "estimated maximum model length is 1824. Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.") in codes
    # at 256 sequences the sampler's peak is 1.19 GiB and vLLM starts: 3.85 GiB, three sequences of 1.25 GiB
    assert value(page, "tight_room_small") == pytest.approx((POOL - W70_TP2 - 256 * 128_256 * 38.9 - NON_TORCH[2]) / GIB)
    assert value(page, "tight_seqs_small") == 3
    # and at TP4 the KV cache as vLLM logs it at start: blocks of 16 tokens of the 80 layers, a block of one layer
    # 16 x 2 x (8 KV heads / 4) x 128 x 2 bytes; one 8,192-token sequence is 512 blocks
    blocks = int(ROOM70_TP4 // (16 * 2 * 2 * 128 * 2) // 80)
    assert f"GPU KV cache size: {blocks * 16:,} tokens" in codes
    assert f"Maximum concurrency for 8,192 tokens per request: {blocks / 512:.2f}x" in codes
    assert "GPU KV cache size: 434,288 tokens" in codes


def test_gpu_table_shows_label_and_report(page) -> None:
    for gpu, bw, reported in (("NVIDIA A100 80GB SXM", 2039, A100_REPORTED), ("NVIDIA H100 SXM", 3350, H100_REPORTED)):
        assert value(page, f"gpus[{gpu}][Label]") == 80
        assert value(page, f"gpus[{gpu}][Budgeted (GiB)]") == pytest.approx(reported / GIB)
        assert value(page, f"gpus[{gpu}][Bandwidth]") == pytest.approx(bw)
        assert figures(page)[f"gpus[{gpu}][Bandwidth]"]["data-basis"] == "shared by reads and writes"
        assert value(page, f"gpus[{gpu}][Read all of it once]") == pytest.approx(reported / (bw * 1e9) * 1e3)


def test_what_fits_table(page) -> None:
    fp8 = "fits[FP8]"
    assert value(page, f"{fp8}[Weights]") == pytest.approx(W70_FP8 / GB)
    assert value(page, f"{fp8}[Pool must hold]") == pytest.approx(
        (W70_FP8 + SAMPLER + NON_TORCH[1] + KV70 * CTX) / GIB)
    table = next(t for t in page.select("table") if "Fits one card?" in t.get_text())
    verdicts = {tr.find("td").get_text(): tr.find_all("td")[6].get_text() for tr in table.select("tbody tr")}
    # FP8 weights (67.7 GiB) sit in the 71.7 GiB pool, but not with 6.8 GiB of runtime and 2.5 GiB of KV
    assert verdicts == {"FP32": "No", "BF16": "No", "FP8": "No", "INT8": "No", "INT4": "Yes"}


def test_ceiling_table(page) -> None:
    row = "ceiling[Llama 3.1 405B BF16 on H100 SXM]"
    assert value(page, f"{row}[One sequence]") == pytest.approx(H100 / STEP405)
    # pipelining adds no bandwidth to one sequence: no more than TP8 reading all of the weights
    assert value(page, f"{row}[One sequence]") < 8 * H100 / (405_853_388_800 * 2)
    row = "ceiling[Llama 3.1 70B FP8 on H100 SXM]"
    assert value(page, f"{row}[Weights only]") == pytest.approx(H100 / W70_FP8_TP2)
    assert value(page, f"{row}[Per GPU-hour]") == pytest.approx(H100 / (W70_FP8_TP2 + KV70_TP2) / 2 * 3600)
    table = next(t for t in page.select("table") if "Matrix math in" in t.get_text())
    math_in = {tr.find("td").get_text(): tr.find_all("td")[4].get_text() for tr in table.select("tbody tr")}
    assert math_in["Llama 3.1 70B FP8 on A100 80GB SXM"] == "BF16 (weight-only FP8)"
    assert math_in["Llama 3.1 70B FP8 on H100 SXM"] == "FP8"


def test_batch_table_stops_at_what_fits(page) -> None:
    names = [n for n in figures(page) if n.startswith("batch[") and n.endswith("[Sequences]")]
    batches = sorted(int(value(page, n)) for n in names)
    # FP8 on the BF16 deployment's TP4: 78 sequences fit ((71.30 - 16.92 - 4.76 - 0.55) / 0.625 = 78.5)
    assert batches == [1, 2, 4, 8, 16, 78]
    assert value(page, "batch[78][Replica ceiling]") == pytest.approx(78 * H100 / (W70_FP8_TP4 + 78 * KV70_TP4))
    # one sequence on TP4 (the ceiling table's FP8 row is the policy's TP2, half the bandwidth)
    assert value(page, "batch[1][Replica ceiling]") == pytest.approx(H100 / (W70_FP8_TP4 + KV70_TP4))


def test_the_old_reserve_reading_is_gone(page) -> None:
    # the page's own text, not the titles of its sources (a deviceQuery printout's "CUDA 12.5 driver")
    article = copy.copy(page.select_one("article"))
    for block in article.select("details"):
        if block.select_one("summary").get_text(" ", strip=True).startswith("The rows of"):
            block.decompose()
    body = article.get_text()
    assert "12.5" not in body and "runtime-reserve" not in body and "with reserve" not in body


def test_the_a100_token_is_the_cheaper_one(page, catalog) -> None:
    # the cost lens: at the lowest on-demand prices (RunPod Community Cloud, $2.69 and $1.39 per GPU-hour) the H100's
    # hour costs 1.94x the A100's, more than its tokens per GPU-hour gain, and the page says by how much (a
    # one-sequence ceiling's dollars per million tokens, A100 against H100)
    a100, h100 = value(page, "usd_mtok_a70"), value(page, "usd_mtok_w")
    used = {p.accelerator: p.price.value for p in catalog.prices.values() if p.site_uses}
    assert value(page, "h100_price_ratio") == pytest.approx(used["h100-sxm"] / used["a100-80gb-sxm"], abs=0.005)
    assert value(page, "h100_price_ratio") > value(page, "h100_hour_gain")
    assert a100 < h100
    assert value(page, "a100_cheaper") == pytest.approx(100 * (1 - a100 / h100))


def test_claims_are_marked_and_hold(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 12
    for c in claims:
        assert c["title"].startswith("Checked at build time")


def test_quiz_answers_are_folded(page) -> None:
    quiz = page.find(id="check-your-understanding")
    questions = quiz.find_next("ol").find_all("li", recursive=False)
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) == len(questions) == 5
    assert "516,096 bytes" in answers[0].get_text()
    # applied problems, not recall
    for recall in ("Why does generating text", "How much of an"):
        assert recall not in quiz.find_next("ol").get_text()


def test_quiz_answers_are_the_hand_worked_ones(page, catalog: Catalog) -> None:
    # one card of Llama 3.1 8B in FP8: the sequences its KV room holds, and the ceiling with all of them decoding
    n = value(page, "q1.max_seq")
    assert n == 57  # (71.30 GiB pool - 8.46 GiB weights - 4.76 sampler - 0.13 outside PyTorch) / 1 GiB = 57.9
    kv8 = 2 * 32 * 8 * 128 * 2 * CTX                                 # 1 GiB a sequence of 8K (BF16 KV cache)
    assert math.floor(value(page, "q1_room") * GIB / kv8) == n
    assert value(page, "q1_tps") == pytest.approx(n * value(page, "q1_tps_seq"))
    assert value(page, "q1_intensity") == pytest.approx(2 * n / 1)            # 2 FLOP per FP8 byte per sequence
    assert value(page, "q1_ridge") == pytest.approx(1979e12 / H100)           # 3,958 sparse FP8 / 2
    # the serving load on Llama 3.1 70B BF16: the smallest TP whose memory holds all 32 sequences of 8K
    assert value(page, "q5_need") == reference(catalog, SERVING).scenario.concurrency == 32
    assert value(page, "q5_gpus") == 4
    assert value(page, "q5_hi.seqs") == 53 and value(page, "q5_lo.seqs") == 0  # TP2 is refused: 0.28 GiB, short of one
    assert value(page, "q5_lo.room") == pytest.approx((POOL - W70_TP2 - SAMPLER - NON_TORCH[2]) / GIB)


def test_links_to_the_companion_pages(page) -> None:
    hrefs = {a["href"] for a in page.select("article a[href]")}
    for target in ("../interconnect/", "../precision/", "../parallelism/"):
        assert any(h.startswith(target) for h in hrefs), target


def test_sources_include_the_scenario_and_the_pool(page) -> None:
    body = page.get_text()
    assert "data/scenarios.yaml" in body and "vllm-default" in body
