"""The mixture-of-experts page, read back from the built HTML and recomputed through the engine.

Arithmetic typed out where it is fixed by config.json: DeepSeek-V3 routes each token to 8 of 256 experts in 58
of its 61 layers, hidden size 7,168, MLA latent 512 + rotary key 64 per layer; Qwen3-235B-A22B 8 of 128, hidden
4,096, 94 MoE layers; Mixtral 8x7B 2 of 8. One dispatch sends a token's hidden vector to each of its k experts
in BF16: k x hidden x 2 bytes. Times rest on the fitted time model and are held by the snapshot: here the page's
orderings and its arithmetic on them are checked.
"""

from __future__ import annotations

import pytest

from snippets.engine import Layout
from snippets.pages.scenario import reference

from ..conftest import Build, figures, value

CTX = 2048
BATCH = 64


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("moe/index.html")


@pytest.fixture(scope="module")
def r(catalog):
    return reference(catalog)


def ds(r, layout, concurrency=BATCH, node=None):
    kw = {"node": node} if node else {"accelerator": "h200-sxm"}
    return r.deployment("deepseek-v3", "fp8", layout=layout, concurrency=concurrency, context_tokens=CTX, **kw)


def test_total_and_active_parameters(page) -> None:
    # DeepSeek-V3's model card: 671B parameters, 37B activated per token (without its MTP module)
    assert value(page, "params[DeepSeek-V3][Total]") == pytest.approx(671.0, abs=0.5)
    assert 37 < value(page, "params[DeepSeek-V3][Active per token]") < 38 and 37 < value(page, "ds_active") < 38
    # Mixtral 8x7B: 46.7B parameters, 12.9B active (Mistral's announcement): 27.6 %
    assert value(page, "params[Mixtral 8x7B][Active share]") == pytest.approx(100 * 12.9 / 46.7, abs=0.3)
    names = {n.split("]")[0][len("params["):] for n in figures(page) if n.startswith("params[")}
    assert len(names) == 8                                                                               # every MoE model


def test_memory_follows_the_total_and_reads_the_batch(page) -> None:
    # all 671B in FP8 over 8 GPUs: at least 671 GB / 8 held by each, whatever the batch reads
    assert value(page, "held") > 671 / 8
    reads = []
    for b in (1, 8, 64, 256, 1024):
        touched = 1 - (1 - 8 / 256) ** b
        assert value(page, f"reads[{b:,}][Experts touched]") == pytest.approx(100 * touched)
        reads.append(value(page, f"reads[{b:,}][Weights read per GPU]"))
    assert reads == sorted(reads) and reads[-1] <= value(page, "held")
    assert value(page, "read1") < 0.1 * value(page, "held") < value(page, "read_big")
    assert value(page, "half_batch") == 22                       # 1 - (31/32)^22 = 0.503, ^21 = 0.487
    chart = page.select_one('svg.sa-chart[aria-labelledby~="moe-reads-title"]')
    assert chart is not None and len(chart.select("circle")) == 2 * 11                 # two series, eleven batches


def test_worked_decode_step(page) -> None:
    assert value(page, "wx.experts_gpu") == 256 / 8
    assert value(page, "wx.touched") == pytest.approx(100 * (1 - (1 - 8 / 256) ** BATCH))            # 86.9 %
    assert value(page, "wx.kv") == pytest.approx(61 * (512 + 64) * 2 * CTX * BATCH / 1e9)             # 9.21 GB
    assert value(page, "wx.tok_bytes") == 8 * 7168 * 2 / 1e3                                           # 114.688 kB
    assert value(page, "wx.msg") == pytest.approx(BATCH * 8 * 7168 * 2 / 1e6)
    # a dispatch and a combine in each of the 58 MoE layers: the step's communication is many all-to-alls
    assert value(page, "wx.comm") * 1e3 >= 2 * 58 * value(page, "wx.a2a") * 0.999
    assert value(page, "wx.step") > value(page, "wx.comm")


def test_alltoall_over_nvlink_nvl72_and_network(page) -> None:
    rows = {n.split("][")[0][len("a2a["):] for n in figures(page) if n.startswith("a2a[")}
    # eight GPUs of one HGX H200 and 72 of an NVL72 rack over NVLink; sixteen H200s need the network between nodes
    assert {r.split(": ")[1] for r in rows} == {"8 GPUs over nvlink", "72 GPUs over nvlink", "16 GPUs over network"}
    for row in rows:  # a prefill's 8,192 tokens send far more than a decode step's batch
        assert value(page, f"a2a[{row}][Prefill all-to-all]") > value(page, f"a2a[{row}][Decode all-to-all]")
    assert value(page, "nv72_pre") < value(page, "nv8_pre") < value(page, "net_pre")


def test_dp_attention_holds_more_sequences(page, r) -> None:
    # MLA keeps one latent per layer for all heads: TP8 replicates it on every GPU, DP attention splits the
    # sequences instead, each GPU caching only its own: 61 x (512 + 64) x 2 bytes x 2,048 tokens a sequence
    tp, dp = ds(r, Layout(8)), ds(r, Layout(1, ep=8, dp=8))
    assert tp.memory.kv_per_sequence == dp.memory.kv_per_sequence == 61 * (512 + 64) * 2 * CTX   # 143,917,056
    assert value(page, "dp_seqs") > 3 * value(page, "tp_seqs")


def test_documented_deployments(page, catalog) -> None:
    rows = [d for d in catalog.deployments.values() if d.model == "deepseek-v3"]
    assert value(page, "doc_count") == len(rows)
    seq_names = [n for n in figures(page) if n.startswith("docs[") and n.endswith("[Engine's]")]
    assert len(seq_names) == len(rows)
    # SGLang's documented DeepSeek-V3 FP8 on one 8 x H200 node (data/deployments.yaml): it fits, an eighth of the
    # 671 GB of weights and more on each GPU, within its 141 GB
    assert 671 / 8 < value(page, "h200_doc_used") < 141
    assert value(page, "docs[FP8 · 8 × H200 SXM][Sequences of 8,192]") >= 1
    assert value(page, "doc_batches") + value(page, "doc_tp_only") == value(page, "doc_larger")


def test_cost_lens_orders_the_layouts(page) -> None:
    for lay in (Layout(8), Layout(8, ep=8), Layout(1, ep=8, dp=8)):  # a larger batch makes each token cheaper
        assert value(page, f"cost[{lay.label}][$/Mtok at 1024]") < value(page, f"cost[{lay.label}][$/Mtok at 64]")
    assert value(page, "c_dp_hi") < value(page, "c_tp_hi")
    assert value(page, "c_tp_lo") < value(page, "c_ep_lo")


def test_quiz_answers_equal_questions_and_are_folded(page) -> None:
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    heading = page.find(id="check-your-understanding")
    questions = heading.find_next("ol")
    assert len(questions.find_all("li", recursive=False)) == len(answers[0].select("ol > li")) == 5
    assert value(page, "q_touched") == pytest.approx(100 * (1 - (1 - 8 / 128) ** 32))               # 87.3 %
    assert value(page, "m_touched") == pytest.approx(100 * (1 - (1 - 2 / 8) ** 4))                   # 68 %
    assert value(page, "q_tok_bytes") == 8 * 4096 * 2                                               # 65,536
    assert value(page, "q_step_bytes") == pytest.approx(8 * 4096 * 2 * 2 * 94 / 1e6)                # 12.32 MB
    assert "65,536 bytes" in answers[0].get_text()
