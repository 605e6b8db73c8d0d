"""The roofline page, read back from the built HTML and recomputed through the engine.

The kernels' measured efficiencies and the host's fitted time per step may move with the data, so every
time below is recomputed with the engine's `step` and `predict`, never typed in. The datasheet
arithmetic is typed out: H100 SXM 1,979 TFLOP/s FP8 with sparsity → 989.5 dense BF16 and 1,979 dense
FP8 (half the stated sparse figures), HBM 3.35 TB/s; H200 SXM the same tensor cores over 4.8 TB/s.
"""

from __future__ import annotations

import pytest

from snippets.engine import Layout
from snippets.engine.serving import predict
from snippets.engine.step import step
from snippets.pages.roofline import critical_batch
from snippets.pages.scenario import reference

from ..conftest import Build, figures, text, value

H100_BF16, H100_FP8, H100_HBM = 989.5e12, 1979e12, 3.35e12
H200_HBM = 4.8e12
N_IN, N_OUT = 6144, 2048           # the reference scenario's request
CTX = N_IN + N_OUT / 2             # predict decodes mid-way through the answer: 7,168 tokens


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("roofline/index.html")


@pytest.fixture(scope="module")
def eng(catalog):
    r = reference(catalog)
    d = r.deployment("llama-3.1-70b", "fp8")
    d2 = r.deployment("llama-3.1-70b", "fp8", node="hgx-h200-8", layout=Layout(2))
    return r, d, d2


def test_ridge_points_are_dense_flops_over_hbm(page) -> None:
    assert value(page, "ridge_bf16") == pytest.approx(H100_BF16 / H100_HBM)   # 295
    assert text(page, "ridge_bf16") == "295"
    assert value(page, "ridge_fp8") == pytest.approx(H100_FP8 / H100_HBM)     # 591
    assert value(page, "ridge2_fp8") == pytest.approx(H100_FP8 / H200_HBM)    # 412
    assert value(page, "ridge[H100 SXM][BF16 ridge (FLOP/byte)]") == pytest.approx(H100_BF16 / H100_HBM)
    assert value(page, "ridge[A100 80GB SXM][BF16 ridge (FLOP/byte)]") == pytest.approx(312e12 / 2.039e12)


def test_ridge_table_marks_derived_figures_and_missing_fp8(page) -> None:
    table = next(t for t in page.select("table") if "FP8 ridge" in t.get_text())
    rows = {tr.find("td").get_text(): [td.get_text() for td in tr.find_all("td")] for tr in table.select("tbody tr")}
    # columns: accelerator, HBM, dense figure, BF16 dense, BF16 ridge, FP8 dense, FP8 ridge (the answer, last)
    assert rows["H100 SXM"][2].startswith("derived")
    assert rows["AMD Instinct MI300X"][2] == "stated dense"
    assert rows["A100 80GB SXM"][5] == "no FP8 figure" and rows["A100 80GB SXM"][-1] == "—"


def test_achieved_ridge_uses_the_time_model(page, eng) -> None:
    _, d, _ = eng
    # the measured FP8 kernels of the H100: a large GEMM's share of the peak over a one-token GEMM's share of HBM
    g = d.setting.time_model.chip("h100-sxm").gemm_for("fp8")
    assert value(page, "ridge_achieved") == pytest.approx(H100_FP8 * g.compute / (H100_HBM * g.weight_fraction(1)))
    assert value(page, "compute_fraction") == pytest.approx(100 * g.compute)
    assert value(page, "hbm_fraction") == pytest.approx(100 * g.weight_fraction(1))


def test_worked_decode_step_and_prefill(page, eng) -> None:
    _, d, _ = eng
    dec = step(d, "decode", 1, CTX)
    pre = step(d, "prefill", N_IN, 0)
    assert value(page, "wx.dec.flops") == pytest.approx(dec.flops / 1e9)
    assert value(page, "wx.dec.bytes") == pytest.approx(dec.bytes_read / 1e9)
    assert value(page, "wx.dec.memory") == pytest.approx(dec.memory_s * 1e3)
    assert value(page, "wx.dec.total") == pytest.approx(dec.total_s * 1e3)
    # the step adds up as the page says: memory (the larger) + communication + overhead
    parts = value(page, "wx.dec.memory") + value(page, "wx.dec.comm") + value(page, "wx.dec.overhead")
    assert parts == pytest.approx(value(page, "wx.dec.total"))
    assert value(page, "wx.pre.flops") == pytest.approx(pre.flops / 1e12)
    assert value(page, "wx.pre.total") == pytest.approx(pre.total_s * 1e3)
    # the prefill: each op's larger part, its communication and launches
    assert pre.total_s == pytest.approx(sum((max(o.compute_s, o.memory_s) + o.comm_s + o.launch_s) * o.count
                                            for o in pre.ops) + pre.host_s)
    # decode: weights per GPU (half of 70.55B FP8 linear weights, the BF16 vocab halves) + a 7,168-token KV
    kv = 2 * 80 * 4 * 128 * 2 * CTX
    assert value(page, "wx.kv_gpu") == pytest.approx(kv / 1e9)
    assert dec.bound == "memory" and pre.bound == "compute"


def test_intensity_of_decode_and_prefill(page, eng) -> None:
    _, d, _ = eng
    dec = step(d, "decode", 1, CTX)
    assert value(page, "dec_intensity") == pytest.approx(dec.flops / dec.bytes_read)
    assert 1.5 < value(page, "dec_intensity") < 3       # about 2 FLOPs per 1-byte weight
    assert value(page, "pre_intensity") > 3 * value(page, "ridge_fp8")
    # the table's rows grow with the batch and stay memory-bound at every batch that fits
    names = sorted(int(value(page, n)) for n in figures(page) if n.startswith("intensity[") and n.endswith("[Sequences]"))
    assert names[0] == 1 and d.max_concurrency in names
    for b in names:
        p = step(d, "decode", b, CTX)
        assert value(page, f"intensity[{b}][FLOP/byte]") == pytest.approx(p.flops / p.bytes_read)


def test_critical_batch_engine_and_envelope(page, eng) -> None:
    _, d, _ = eng
    assert value(page, "envelope") == round(H100_FP8 / H100_HBM * 1 / 2)   # 295
    crit = int(value(page, "crit0"))
    assert crit == critical_batch(d, 0)
    # exact: one fewer sequence is still memory-bound, this many is not
    below, at = step(d, "decode", crit - 1, 0), step(d, "decode", crit, 0)
    assert below.compute_s < below.memory_s and at.compute_s >= at.memory_s
    assert crit > value(page, "most")
    # with the scenario's context no batch reaches the ridge
    assert critical_batch(d, CTX) is None
    assert value(page, "lim_ctx") < value(page, "ridge_achieved")


def test_ttft_tpot_and_cost_are_predict_s(page, eng) -> None:
    _, d, d2 = eng
    x1, xm = predict(d, 1), predict(d, d.max_concurrency)
    assert value(page, "ttft") == pytest.approx(x1.ttft_s * 1e3)
    assert value(page, "tpot1") == pytest.approx(x1.tpot_s * 1e3)
    assert value(page, "tpotm") == pytest.approx(xm.tpot_s * 1e3)
    assert value(page, "tputm") == pytest.approx(xm.output_tokens_per_s_per_gpu)
    assert value(page, "most") == d.max_concurrency
    assert value(page, "cost1") == pytest.approx(x1.usd_per_mtok_output)
    assert value(page, "costm") == pytest.approx(xm.usd_per_mtok_output)
    assert value(page, "costm_2") == pytest.approx(predict(d2, d2.max_concurrency).usd_per_mtok_output)
    assert value(page, "most2") == d2.max_concurrency > d.max_concurrency


def test_curve_has_one_point_per_concurrency(page, eng) -> None:
    _, d, d2 = eng
    svg = page.select_one("svg#curve-chart, svg[aria-labelledby^='curve-chart']")
    assert svg is not None
    groups = [g for g in svg.find_all("g") if g.find("polyline")]
    assert len(groups) == 2
    for g, dep in zip(groups, (d, d2), strict=True):
        dots = g.find_all("circle")
        assert len(dots) == dep.max_concurrency
        last = predict(dep, dep.max_concurrency)
        assert dots[-1].title.get_text().startswith(f"{dep.setting.chip.name.replace('NVIDIA ', '')}, TP2: "
                                                    f"{dep.max_concurrency:,} sequences")
        assert f"{last.tpot_s * 1e3:.1f} ms" in dots[-1].title.get_text()
    # more tokens per second per GPU to the right: x grows with concurrency on both lines
    for g in groups:
        xs = [float(c["cx"]) for c in g.find_all("circle")]
        assert xs == sorted(xs)


def test_quiz_answers_are_computed_and_folded(page, eng) -> None:
    r, d, _ = eng
    answers = [x for x in page.select("details") if "Answers" in x.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 5
    q = step(d, "decode", 32, N_IN + N_OUT)
    assert value(page, "q_intensity") == pytest.approx(q.flops / q.bytes_read)
    assert q.bound == "memory"
    bigger = r.deployment("llama-3.1-70b", "fp8", concurrency=32)
    assert bigger.gpus > d.gpus and d.max_concurrency < 32
    assert f"deploys the load on {bigger.layout.label}" in answers[0].get_text()


def test_claims_are_marked_and_sources_listed(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 15
    for c in claims:
        assert c["title"].startswith("Checked at build time")
    body = page.get_text()
    assert "measured-fractions" in body and "data/policies.yaml" in body and "data/scenarios.yaml" in body


def test_linked_from_home_and_hbm(built: Build) -> None:
    for rel, target in (("index.html", "roofline/"), ("hbm/index.html", "../roofline/")):
        hrefs = {a["href"] for a in built.page(rel).select("article a[href]")}
        assert any(h.startswith(target) for h in hrefs), rel
