"""The mixture-of-experts page, read back from the built HTML and recomputed through the engine.

Arithmetic typed out where it is fixed by config.json: DeepSeek-V3 routes each token to 8 of 256 experts in 58
of its 61 layers, hidden size 7,168, MLA latent 512 + rotary key 64 per layer; Qwen3-235B-A22B 8 of 128, hidden
4,096, 94 MoE layers; Mixtral 8x7B 2 of 8. One combine brings back a token's k experts' outputs in BF16: k x
hidden x 2 bytes; its dispatch sends them in FP8 (one byte and a four-byte scale per 128). Times come from the
time model (fitted factors among them), so they are recomputed with the engine.
"""

from __future__ import annotations

import pytest

from snippets.engine import Layout, deploy, feasible, setting
from snippets.engine.collectives import allreduce, alltoall
from snippets.engine.memory import stage_weights
from snippets.engine.params import total_params
from snippets.engine.serving import predict
from snippets.engine.step import step
from snippets.engine.topology import group_link
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


def test_total_and_active_parameters(page, r) -> None:
    arch = r.eng.models["deepseek-v3"].arch
    assert value(page, "params[DeepSeek-V3][Total]") == pytest.approx(total_params(arch) / 1e9)        # 671.0
    assert value(page, "params[DeepSeek-V3][Active per token]") == pytest.approx(total_params(arch, active=True) / 1e9)
    assert 37 < value(page, "ds_active") < 38
    m = r.eng.models["mixtral-8x7b"].arch
    assert value(page, "params[Mixtral 8x7B][Active share]") == pytest.approx(
        100 * total_params(m, active=True) / total_params(m))                                         # 27.6 %
    names = {n.split("]")[0][len("params["):] for n in figures(page) if n.startswith("params[")}
    assert len(names) == 8                                                                               # every MoE model


def test_memory_follows_the_total_and_reads_the_batch(page, r) -> None:
    d = ds(r, Layout(8, ep=8))
    sw = stage_weights(d.setting.model.arch, d.setting.precision, d.layout)[0]
    assert value(page, "held") == pytest.approx(d.memory.weights / 1e9)
    for b in (1, 8, 64, 256, 1024):
        touched = 1 - (1 - 8 / 256) ** b
        assert value(page, f"reads[{b:,}][Experts touched]") == pytest.approx(100 * touched)
        # the weights a decode step reads: all but the routed experts, the touched share of them, and of the
        # embedding only the batch's rows (the table itself is not read)
        read = step(d, "decode", b, 1).weights_read
        emb = 129280 * 7168 * 2 / 8  # the first stage's vocabulary-parallel slice of the BF16 table
        rows = b * 7168 * 2
        assert read == pytest.approx(sw.total - sw.expert_bytes * (1 - touched) - emb + rows, rel=1e-3)
        assert value(page, f"reads[{b:,}][Weights read per GPU]") == pytest.approx(read / 1e9)
    assert value(page, "read1") < 0.1 * value(page, "held") < value(page, "read_big")
    assert value(page, "half_batch") == 22                       # 1 - (31/32)^22 = 0.503, ^21 = 0.487
    chart = page.select_one('svg.sa-chart[aria-labelledby~="moe-reads-title"]')
    assert chart is not None and len(chart.select("circle")) == 2 * 11                 # two series, eleven batches


def test_worked_decode_step(page, r) -> None:
    d = ds(r, Layout(8, ep=8))
    p = step(d, "decode", BATCH, CTX)
    assert value(page, "wx.experts_gpu") == 256 / 8
    assert value(page, "wx.touched") == pytest.approx(100 * (1 - (1 - 8 / 256) ** BATCH))            # 86.9 %
    assert value(page, "wx.kv") == pytest.approx(61 * (512 + 64) * 2 * CTX * BATCH / 1e9)             # 9.21 GB
    assert value(page, "wx.read") == pytest.approx(step(d, "decode", BATCH, 1).weights_read / 1e9)
    # without DP attention the experts' outputs are summed by the TP all-reduce of the batch's activations
    assert value(page, "wx.msg") == pytest.approx(BATCH * 7168 * 2 / 1e6)
    assert not p.of("alltoall")
    tm = d.setting.time_model
    assert value(page, "wx.a2a") == pytest.approx(allreduce(BATCH * 7168 * 2, group_link(d, "tp"), tm).seconds * 1e6)
    assert value(page, "wx.comm") == pytest.approx(p.comm_s * 1e3)
    assert value(page, "wx.step") == pytest.approx(p.total_s * 1e3)


def test_alltoall_over_nvlink_nvl72_and_network(page, r) -> None:
    dispatch = 8 * 7168 * (1 + 4 / 128)  # FP8 out, one four-byte scale per 128 elements
    h200, nvl = r.eng.node_of("h200-sxm"), r.eng.nodes["gb200-nvl72"]
    tm = r.eng.time_models[r.scenario.time_model]
    rows = {}
    for node, ep in ((h200.id, 8), (nvl.id, nvl.gpus), (h200.id, 16)):
        d = ds(r, Layout(1, ep=ep, dp=ep), concurrency=BATCH * ep, node=node)
        link = group_link(d, "ep")
        rows[ep] = link
        label = f"{d.setting.node.name}: {ep} GPUs over {link.name}"
        remote = (ep - 1) / ep
        assert value(page, f"a2a[{label}][Decode all-to-all]") == pytest.approx(
            alltoall(BATCH * dispatch * remote, link, tm).seconds * 1e6)
        assert value(page, f"a2a[{label}][Prefill all-to-all]") == pytest.approx(
            alltoall(8192 * dispatch * remote, link, tm).seconds * 1e6)
    assert rows[8].name == "NVLink 4" and rows[72].name == "NVLink 5" and rows[16].shape == "network"
    assert rows[16].bytes_per_s == pytest.approx(h200.network_bytes_per_s)
    assert rows[16].hop_s == tm.network_hop_s and rows[16].local_gpus == 8
    assert value(page, "nv72_pre") < value(page, "nv8_pre") < value(page, "net_pre")


def test_dp_attention_holds_more_sequences(page, r) -> None:
    tp, dp = ds(r, Layout(8)), ds(r, Layout(1, ep=8, dp=8))
    assert tp.memory.kv_per_sequence == dp.memory.kv_per_sequence == 61 * (512 + 64) * 2 * CTX   # 143,917,056
    assert value(page, "tp_seqs") == tp.max_concurrency
    assert value(page, "dp_seqs") == dp.max_concurrency
    assert value(page, "dp_seqs") > 3 * value(page, "tp_seqs")
    assert value(page, "dp_weights") == pytest.approx(dp.memory.weights / 1e9)


def test_documented_deployments(page, r, catalog) -> None:
    rows = [d for d in catalog.deployments.values() if d.model in ("deepseek-v3", "deepseek-r1")]
    assert value(page, "doc_count") == len(rows)
    seq_names = [n for n in figures(page) if n.startswith("docs[") and n.endswith("[Engine's]")]
    assert len(seq_names) == len(rows)
    dep = catalog.deployments["sglang-deepseek-v3-fp8-8xh200"]
    st = setting(r.eng, dep.model, dep.precision, "reference", accelerator=dep.accelerator, concurrency=1,
                 context_tokens=r.scenario.context_tokens)
    assert feasible(st, Layout(8)) == []
    doc, eng = deploy(st, Layout(8)), deploy(st)
    assert value(page, "h200_doc_used") == pytest.approx(doc.memory.used / 1e9)
    assert value(page, "docs[FP8 · 8 × H200 SXM][Sequences of 8,192]") == doc.max_concurrency
    assert value(page, "docs[FP8 · 8 × H200 SXM][Engine's]") == eng.max_concurrency
    assert value(page, "doc_batches") + value(page, "doc_tp_only") == value(page, "doc_larger")


def test_cost_lens_is_predicts(page, r) -> None:
    for lay in (Layout(8), Layout(8, ep=8), Layout(1, ep=8, dp=8)):
        d = ds(r, lay, concurrency=1)
        lo, hi = predict(d, 64, CTX // 2, CTX // 2), predict(d, 1024, CTX // 2, CTX // 2)
        assert value(page, f"cost[{lay.label}][$/Mtok at 64]") == pytest.approx(lo.usd_per_mtok_output)
        assert value(page, f"cost[{lay.label}][$/Mtok at 1024]") == pytest.approx(hi.usd_per_mtok_output)
    assert value(page, "c_dp_hi") < value(page, "c_tp_hi")
    # at 64 in flight the three cost within 15 % of one another; EP without DP attention communicates as TP does
    lows = [value(page, k) for k in ("c_tp_lo", "c_ep_lo", "c_dp_lo")]
    assert max(lows) < 1.15 * min(lows)
    assert value(page, "ep_comm") == pytest.approx(value(page, "tp_comm"))


def test_quiz_answers_equal_questions_and_are_folded(page) -> None:
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    heading = page.find(id="check-your-understanding")
    questions = heading.find_next("ol")
    assert len(questions.find_all("li", recursive=False)) == len(answers[0].select("ol > li")) == 5
    assert value(page, "q_touched") == pytest.approx(100 * (1 - (1 - 8 / 128) ** 32))               # 87.3 %
    assert value(page, "m_touched") == pytest.approx(100 * (1 - (1 - 2 / 8) ** 4))                   # 68 %
    assert value(page, "q_tok_bytes") == 8 * 4096 * 2                                               # 65,536
    # a combine of 8 x 4,096 x 2 bytes and a dispatch of 8 x 4,096 x (1 + 4/128) bytes in each of 94 layers
    assert value(page, "q_dispatch_bytes") == pytest.approx(8 * 4096 * (1 + 4 / 128))             # 33,792
    assert value(page, "q_step_bytes") == pytest.approx(8 * 4096 * (2 + 1 + 4 / 128) * 94 / 1e6)    # 9.34 MB
    assert "65,536 bytes" in answers[0].get_text()
