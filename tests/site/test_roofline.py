"""The roofline page, read back from the built HTML.

The datasheet arithmetic is typed out: H100 SXM 1,979 TFLOP/s FP8 with sparsity → 989.5 dense BF16 and 1,979
dense FP8 (half the stated sparse figures), HBM 3.35 TB/s; H200 SXM the same tensor cores over 4.8 TB/s. The
times rest on the time model's fitted factors and are held by the snapshot: here the page's own arithmetic on
them is checked (a step's parts add up, the intensity is FLOPs over bytes), and the critical batch against the
engine's step on either side of it.
"""

from __future__ import annotations

import pytest

from snippets.engine import Layout
from snippets.engine.timing import forward
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
    assert rows["H100 SXM"][-1].startswith("derived")
    assert rows["AMD Instinct MI300X"][-1] == "stated dense"
    assert rows["A100 80GB SXM"][4] == "no FP8 figure"


def test_achieved_ridge_uses_the_time_model(page, eng) -> None:
    _, d, _ = eng
    tm = d.setting.time_model
    assert value(page, "ridge_achieved") == pytest.approx(H100_FP8 * tm.compute_fraction / (H100_HBM * tm.hbm_fraction))


def test_worked_decode_step_and_prefill(page, eng) -> None:
    # the step adds up as the page says: memory (the larger) + communication + overhead
    parts = value(page, "wx.dec.memory") + value(page, "wx.dec.comm") + value(page, "wx.dec.overhead")
    assert parts == pytest.approx(value(page, "wx.dec.total"))
    # decode reads about one byte a weight for two FLOPs a weight: 70.6B FP8 on TP2, 35 GB a GPU
    assert value(page, "wx.dec.flops") / value(page, "wx.dec.bytes") == pytest.approx(
        value(page, "dec_intensity"), rel=1e-6)
    parts = value(page, "wx.pre.compute") + value(page, "wx.pre.comm") + value(page, "wx.pre.overhead")
    assert parts == pytest.approx(value(page, "wx.pre.total"))
    # decode: weights per GPU (half of 70.55B FP8 linear weights, the BF16 vocab halves) + a 7,168-token KV
    kv = 2 * 80 * 4 * 128 * 2 * CTX
    assert value(page, "wx.kv_gpu") == pytest.approx(kv / 1e9)


def test_intensity_of_decode_and_prefill(page, eng) -> None:
    assert 1.5 < value(page, "dec_intensity") < 3       # about 2 FLOPs per 1-byte weight
    assert value(page, "pre_intensity") > 10 * value(page, "ridge_fp8")
    # the table's rows grow with the batch and stay below the ridge at every batch that fits
    names = sorted(int(value(page, n)) for n in figures(page) if n.startswith("intensity[") and n.endswith("[Sequences]"))
    assert names[0] == 1 and int(value(page, "most")) in names
    shown = [value(page, f"intensity[{b}][FLOP/byte]") for b in names]
    assert shown == sorted(shown) and shown[-1] < value(page, "ridge_fp8")


def test_critical_batch_engine_and_envelope(page, eng) -> None:
    _, d, _ = eng
    assert value(page, "envelope") == round(H100_FP8 / H100_HBM * 1 / 2)   # 295
    crit = int(value(page, "crit0"))
    assert crit == critical_batch(d, 0)
    # exact: one fewer sequence is still memory-bound, this many is not
    below, at = forward(d, crit - 1, 0, prefill=False), forward(d, crit, 0, prefill=False)
    assert below.compute_s < below.memory_s and at.compute_s >= at.memory_s
    assert crit > value(page, "most")
    # with the scenario's context no batch reaches the ridge
    assert critical_batch(d, CTX) is None
    assert value(page, "lim_ctx") < value(page, "ridge_achieved")


def test_batching_trades_latency_for_cost(page) -> None:
    # a full batch reads the weights once for all its sequences: each token a little later, far cheaper
    assert value(page, "tpotm") > value(page, "tpot1")
    assert value(page, "costm") < value(page, "cost1")
    # the H200's larger HBM holds more sequences on the same TP2, and its token is cheaper at full batch
    assert value(page, "most2") > value(page, "most") and value(page, "costm_2") < value(page, "costm")


def test_curve_has_one_point_per_concurrency(page) -> None:
    svg = page.select_one("svg#curve-chart, svg[aria-labelledby^='curve-chart']")
    assert svg is not None
    groups = [g for g in svg.find_all("g") if g.find("polyline")]
    assert len(groups) == 2
    for g, chip, most, tpot in zip(groups, ("H100 SXM", "H200 SXM"), ("most", "most2"), ("tpotm", None), strict=True):
        dots = g.find_all("circle")
        assert len(dots) == int(value(page, most))
        assert dots[-1].title.get_text().startswith(f"{chip}, TP2: {int(value(page, most)):,} sequences")
        if tpot:
            assert f"{value(page, tpot):.1f} ms" in dots[-1].title.get_text()
    # more tokens per second per GPU to the right: x grows with concurrency on both lines
    for g in groups:
        xs = [float(c["cx"]) for c in g.find_all("circle")]
        assert xs == sorted(xs)


def test_quiz_answers_are_computed_and_folded(page, eng) -> None:
    answers = [x for x in page.select("details") if "Answers" in x.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 5
    # 32 sequences of 8K on TP2: more than the KV cache holds, and still far below the ridge
    assert value(page, "most") < 32 and value(page, "q_intensity") < value(page, "ridge_fp8") / 10
    assert "deploys the load on TP4" in answers[0].get_text()


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
