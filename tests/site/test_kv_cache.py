"""The KV-cache page, read back from the built HTML: its figures are the hand-derived ones and the engine's.

By hand, from config.json shapes (BF16 KV cache, 2 bytes per element):
- GPT-3 175B (MHA): 2 x 96 layers x 96 heads x 128 x 2 = 4,718,592 bytes per token.
- Llama 3.1 70B (GQA): 2 x 80 x 8 KV heads x 128 x 2 = 327,680 bytes per token; per GPU at TP2 163,840,
  at TP4 81,920, at TP8 and TP16 40,960 (one KV head per GPU, replicated twice at TP16).
- DeepSeek-V3 (MLA): 61 x (512 + 64) x 2 = 70,272 bytes per token.
- gpt-oss-120b: 36 layers, 18 of them a 128-token window; at 8,192 tokens
  2 x (18 + 18 x 128 / 8192) x 8 x 64 x 2 = 37,440 bytes per token on average (73,728 unbounded).
The pool is vllm-default's 0.9 x the 79.22 GiB CUDA reports = 71.30 GiB. The runtime beside the weights: the
profiling run's sampler over vllm serve's 1,024 rows of 128,256 logits x 38.9 bytes (4.76 GiB) and 0.55 GiB outside
PyTorch at TP2 and TP4 (vLLM 0.11.0's TP2 figure): 5.31 GiB. At TP2 that leaves 0.28 GiB of KV room, less than one
sequence needs, and vLLM refuses to start.
"""

from __future__ import annotations

import math

import pytest

from snippets.data import Catalog

from ..conftest import Build, text, value

GIB = 2**30
CTX = 8192
POOL = 0.9 * 79.22 * 2**30
RUNTIME = 1024 * 128_256 * 38.9 + 0.55 * GIB   # sampler peak + memory outside PyTorch at TP2 and TP4
KV70 = 2 * 80 * 8 * 128 * 2
LONGEST = 131072


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("kv-cache/index.html")


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("mha_tok", 2 * 96 * 96 * 128 * 2, "4,718,592 bytes"),
        ("gqa_tok", KV70, "327,680 bytes"),
        ("mla_tok", 61 * (512 + 64) * 2, "70,272 bytes"),
        # DeepSeek-V3 decompressed: 128 heads, each a key of 128 + 64 (its rotary part) and a value of 128
        ("mla_as_mha", 61 * 128 * (128 + 64 + 128) * 2, "4,997,120 bytes"),
        ("mla_saving", 61 * 128 * (128 + 64 + 128) / (61 * (512 + 64)), "71×"),
        ("swa_tok", 2 * (18 + 18 * 128 / 8192) * 8 * 64 * 2, "37,440 bytes"),
        ("swa_full", 2 * 36 * 8 * 64 * 2, "73,728 bytes"),
        ("gqa_seq", KV70 * CTX / 1e9, "2.68 GB"),
        ("long_seq", KV70 * LONGEST / 1e9, "42.9 GB"),
        ("context_max", LONGEST, "131,072"),
        ("small_tok", 2 * 32 * 8 * 128 * 2, "131,072 bytes"),
        ("rep_hi_gpu", KV70 / 8, "40,960 bytes"),
        ("rep_copies", 2, "2"),
        ("partial_paged", math.ceil(6145 / 16) * 16, "6,160"),
        ("partial_waste", 15, "15"),
        ("reserve_waste", (1 - CTX / LONGEST) * 100, "93.8%"),
    ],
)
def test_prose_figures(page, name: str, expected: float, shown: str) -> None:
    assert value(page, name) == pytest.approx(expected, rel=1e-9)
    assert text(page, name) == shown


def test_worked_example_by_hand(page) -> None:
    # TP2: half of the weights but the norms on each GPU; TP4: a quarter. 32 sequences of 8,192 tokens.
    for key, tp, fits in (("w_lo", 2, False), ("w_hi", 4, True)):
        weights = value(page, f"{key}.weights") * GIB
        room = POOL - weights - RUNTIME
        assert value(page, f"{key}.pool") == pytest.approx(POOL / GIB)
        assert value(page, f"{key}.runtime") == pytest.approx(RUNTIME / GIB)
        assert value(page, f"{key}.kv_room") == pytest.approx(room / GIB)
        assert value(page, f"{key}.kv_token_gpu") == KV70 / tp
        per_seq = KV70 / tp * CTX
        assert value(page, f"{key}.kv_per_seq") == pytest.approx(per_seq / GIB)
        assert value(page, f"{key}.kv_need") == pytest.approx(32 * per_seq / GIB)
        assert value(page, f"{key}.max_seq") == max(0, math.floor(room / per_seq))
        assert (weights + RUNTIME + 32 * per_seq <= POOL) is fits
    # TP2: 71.30 - 65.71 - 5.31 = 0.28 GiB, short of the 1.25 GiB one sequence needs
    assert 0 < value(page, "w_lo.kv_room") < value(page, "w_lo.kv_per_seq")
    assert value(page, "w_lo.max_seq") == 0 and value(page, "w_hi.max_seq") == 53


def test_figures_are_the_hand_worked_ones(page) -> None:
    # the serving scenario's 32 sequences of 8K: vLLM refuses TP2 (w_lo, above), TP4 holds 53, so TP4
    assert "chooses the same TP4" in page.get_text()
    assert value(page, "answer_gpus") == 4 and value(page, "serving_max") == 53
    # an FP8 KV cache halves the bytes a token keeps: twice the sequences in the same room (33.13 GiB / 0.3125 GiB
    # = 106.03, twice 53)
    assert value(page, "n_bf16") == 53 and value(page, "n_fp8") == 106
    # 131,072 tokens: 327,680 B x 131,072 = 42.9 GB a sequence; TP4's room (4 x 71.30 GiB less 131.4 GiB of weights
    # and 4 x 5.31 GiB of runtime, 132.5 GiB = 142.3 GB) holds 3 of them
    room = 4 * POOL - 141.1e9 - 4 * RUNTIME
    assert value(page, "long_serving") == math.floor(room / (KV70 * LONGEST)) == 3
    assert value(page, "long_node") > value(page, "long_serving")


def test_the_fp8_caches_read_is_vllms_measured_kernel(page, catalog: Catalog) -> None:
    # the cost lens's FP8 row decodes at 7,168 cached tokens a sequence (a 6,144-token prompt and half of 2,048 out).
    # data/efficiencies.yaml h100-sxm-kv-stream-fp8-vllm: vLLM's FlashAttention-3 reads an FP8 cache at 0.80 of the
    # H100's datasheet at 4,096 tokens and 0.83 at 8,192, straight between them on log-log axes: 0.80 x (0.83 / 0.80)
    # ^ log2(7,168 / 4,096) = 0.8241. The chip's BF16 curve (h100-sxm-kv-stream): 0.91 and 0.92, 0.9181. Half the bytes
    # at that share take 0.5 x 0.9181 / 0.8241 = 0.557 of the BF16 read's time.
    fp8 = dict(catalog.efficiencies["h100-sxm-kv-stream-fp8-vllm"].by_context)
    bf16 = dict(catalog.efficiencies["h100-sxm-kv-stream"].by_context)
    t = math.log2(7168 / 4096)
    share_fp8 = fp8[4096] * (fp8[8192] / fp8[4096]) ** t
    share_bf16 = bf16[4096] * (bf16[8192] / bf16[4096]) ** t
    assert share_fp8 == pytest.approx(0.8241, abs=1e-4) and share_bf16 == pytest.approx(0.9181, abs=1e-4)
    assert value(page, "read_context") == 7168
    assert value(page, "kv_fp8_share") == pytest.approx(100 * share_fp8, rel=1e-9) and text(page, "kv_fp8_share") == "82%"
    assert value(page, "kv_bf16_share") == pytest.approx(100 * share_bf16, rel=1e-9)
    assert value(page, "kv_read_ratio") == pytest.approx(50 * share_bf16 / share_fp8, rel=1e-9)
    assert text(page, "kv_read_ratio") == "56%"
    assert catalog.efficiencies["h100-sxm-kv-stream-fp8-vllm"].engine == "vLLM"


def test_tables_read_back(page, catalog: Catalog) -> None:
    assert value(page, "kv[Llama 3.1 70B][Bytes per token]") == KV70
    assert value(page, "kv[DeepSeek-V3][Bytes per token]") == 70272
    assert value(page, "kv[Llama 3.1 70B][One sequence, longest]") == pytest.approx(KV70 * LONGEST / 1e9)
    assert value(page, "pool[Llama 3.1 70B BF16, TP4][Sequences, scenario context]") == 53   # 33.1 / 0.625 GiB
    assert value(page, "pool[Llama 3.1 70B BF16, TP4][Same, FP8 KV cache]") == 106   # 33.1 / 0.3125 GiB
    assert value(page, "replication[TP16][KV per token, one GPU]") == value(page, "replication[TP8][KV per token, one GPU]")
    assert value(page, "replication[TP16][KV per token, whole group]") == 2 * KV70
    # cost at the KV cache's max concurrency, $2.69 per GPU-hour, rented a GPU at a time (data/prices.yaml, Sep 2026);
    # TP2 is refused by vLLM: the page says so instead of pricing it
    held = {}
    for tp in (4, 8):
        row = f"cost[TP{tp}, BF16 KV cache]"
        held[tp] = value(page, f"{row}[Sequences held]")
        assert value(page, f"{row}[Replica per hour]") == pytest.approx(tp * 2.69)
        assert value(page, f"{row}[Sequences per $/hour]") == pytest.approx(held[tp] / (tp * 2.69))
    assert held[4] == 53 and held[8] > held[4]


def test_chart_is_drawn(page) -> None:
    svg = page.select_one("svg#kv-chart, svg[aria-labelledby^='kv-chart']")
    assert svg is not None
    # the dashed line: what TP4's pool leaves for the KV cache, 71.30 - 32.86 - 4.76 - 0.55 = 33.1 GiB
    assert "33.1 GiB" in page.select_one("figure.sa-figure figcaption").get_text()


def test_claims_are_marked_and_hold(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 15
    for c in claims:
        assert c["title"].startswith("Checked at build time")


def test_quiz_answers_are_folded_and_match_questions(page) -> None:
    quiz = page.find(id="check-your-understanding")
    questions = quiz.find_next("ol").find_all("li", recursive=False)
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) == len(questions) == 6
    assert answers[0].select("ol > li")[0].get_text().startswith("4 (TP4)")
    # the padding question: the factor each expert grows is the padded shapes over the checkpoint's
    assert answers[0].select("ol > li")[5].get_text().startswith("1.090×: (3,072 × 2,944) ÷ (2,880 × 2,880)")


def test_linked_from_home_and_hbm(built: Build) -> None:
    for rel, prefix in (("index.html", "kv-cache/"), ("hbm/index.html", "../kv-cache/")):
        hrefs = {a["href"] for a in built.page(rel).select("article a[href]")}
        assert any(h.startswith(prefix) for h in hrefs), rel
