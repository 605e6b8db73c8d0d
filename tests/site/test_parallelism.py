"""The built parallelism page: TP's communication is the engine's own, recomputed here through the engine (never
from hard-coded fitted values: they may move), and the page shows those figures."""

from __future__ import annotations

import json
import re

import pytest

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.serving import predict
from snippets.engine.topology import group_link
from snippets.pages.parallelism import (
    TIME_LINKS,
    algorithm_prices,
    decode_step,
    message_tokens,
    over,
)
from snippets.pages.scenario import SERVING, reference

from ..conftest import Build, figures, text, value
from ..pages.test_parallelism import ALLREDUCES, MESSAGE, NVLINK, RING, TP_BYTES  # worked by hand there


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("parallelism/index.html")


@pytest.fixture(scope="module")
def dep(catalog: Catalog):
    d = reference(catalog).deployment("llama-3.1-405b", "bf16")
    assert d.layout.label == "TP8 × PP2"
    return d


@pytest.fixture(scope="module")
def serving(catalog: Catalog) -> int:
    return reference(catalog, SERVING).scenario.concurrency


def test_worked_example(page, dep, serving: int) -> None:
    tm = dep.setting.time_model
    assert value(page, "worked.message") == MESSAGE
    assert text(page, "worked.message") == "32,768 bytes"
    assert value(page, "worked.allreduces") == ALLREDUCES
    assert value(page, "worked.gpus") == 16
    s1, ss = decode_step(dep, 1), decode_step(dep, serving)
    assert value(page, "worked.nvl_bw") == pytest.approx(NVLINK / 1e9)
    # by hand: NCCL's ring (its latency grows by a step per GPU), custom two-shot and one-shot, each its fitted price
    assert value(page, "worked.ring_1") == pytest.approx(
        (tm.nccl.latency_s + 6 * tm.nccl.per_peer_s + RING / (NVLINK * tm.nccl.efficiency)) * 1e6)
    assert value(page, "worked.two_1") == pytest.approx((tm.two_shot.latency_s + RING / (NVLINK * tm.two_shot.efficiency)) * 1e6)
    one = tm.one_shot.latency_s + 7 * MESSAGE / (NVLINK * tm.one_shot.efficiency)
    assert value(page, "worked.one_1") == pytest.approx(one * 1e6)
    assert value(page, "worked.ar_1") == pytest.approx(one * 1e6)
    assert value(page, "worked.tp_1") == pytest.approx(s1.tp_s * 1e3)
    assert value(page, "worked.lat_1") == pytest.approx(s1.tp_latency_s * 1e3)
    assert value(page, "worked.step_1") == pytest.approx(predict(dep, 1).tpot_s * 1e3)
    assert value(page, "worked.share_1") == pytest.approx(100 * s1.comm_share)
    # the PP send over the network: one hop, and the hidden state and residual at the copy's share of the NIC
    pp = group_link(dep, "pp")
    assert value(page, "worked.pp_send") == pytest.approx(
        (tm.network_hop_s + 2 * MESSAGE / (pp.bytes_per_s * tm.link_fraction)) * 1e6)
    # what the page used to show: ring bytes ÷ datasheet NVLink against the memory read, 0.11 %
    old = TP_BYTES / NVLINK
    assert value(page, "worked.old_share") == pytest.approx(100 * old / (old + 1 / dep.decode_ceiling))
    assert text(page, "worked.old_share") == "0.11%"
    assert value(page, "worked.share_1") > 5 * value(page, "worked.old_share")
    assert value(page, "worked.micro") == serving / 2
    assert value(page, "worked.step_s") == pytest.approx(ss.total_s * 1e3)
    assert value(page, "worked.over_compute_s") == pytest.approx(ss.comm_s / ss.engine.compute_s)


def test_comm_table_405b(page, dep, serving: int) -> None:
    labels = {"nvlink": "NVLink 4", "pcie": "PCIe 5.0 x16", "network": "InfiniBand NDR"}
    for key in TIME_LINKS:
        link = group_link(over(dep, key), "tp")
        for c in (1, serving):
            s = decode_step(dep, c, key)
            row = f"comm405[{c} seq. over {labels[key]}]"
            assert value(page, f"{row}[Link per GPU]") == pytest.approx(link.bytes_per_s / 1e9)
            assert value(page, f"{row}[Fixed latency]") == pytest.approx(s.allreduce.latency_s * 1e6)
            assert value(page, f"{row}[One all-reduce]") == pytest.approx(s.allreduce.seconds * 1e6)
            assert value(page, f"{row}[Communication per step]") == pytest.approx(s.comm_s * 1e3)
            assert value(page, f"{row}[Step time]") == pytest.approx(s.total_s * 1e3)
            assert value(page, f"{row}[Share of step]") == pytest.approx(100 * s.comm_share, rel=1e-6)
    # the conclusion the numbers carry: over PCIe or the network, communication is several times NVLink's share
    # of the arithmetic at the serving batch
    nvl = value(page, f"comm405[{serving} seq. over NVLink 4][Communication ÷ compute]")
    assert value(page, f"comm405[{serving} seq. over InfiniBand NDR][Communication ÷ compute]") > 2 * nvl
    assert value(page, f"comm405[{serving} seq. over PCIe 5.0 x16][Communication ÷ compute]") > 2 * nvl


def test_comm_table_70b_has_no_pipeline(page, catalog: Catalog) -> None:
    d = reference(catalog).deployment("llama-3.1-70b", "bf16")
    assert d.layout.label == "TP4"  # vLLM refuses TP2 (no KV room): the smallest TP degree it starts
    s = decode_step(d, 1)
    assert not s.engine.of("send")
    # 80 layers x 2 all-reduces and the embedding's, one-shot at TP4: the fitted latency and 3 x 16,384 bytes per
    # GPU at its share of 450 GB/s; and the logits' gather
    tm = d.setting.time_model
    ar = tm.one_shot.latency_s + 3 * 16384 / (NVLINK * tm.one_shot.efficiency)
    gather = next(o for o in s.engine.ops if o.name == "logits gather").comm_s
    assert s.comm_s == pytest.approx(161 * ar + gather)
    assert value(page, "comm70[1 seq. over NVLink 4][Communication per step]") == pytest.approx(s.comm_s * 1e3)


def test_breakdown_chart_sums_to_the_step(page, dep, serving: int) -> None:
    fig = next(f for f in page.select("figure.sa-figure") if f.select_one("svg[aria-labelledby^='breakdown-chart']"))
    bars = fig.select("svg rect title")
    assert bars
    for c in (1, serving):
        total = decode_step(dep, c).total_s * 1e3
        assert f"{c} seq., NVLink 4: {total:.1f} ms" in fig.figcaption.get_text()


def test_algorithm_table(page, catalog: Catalog, dep) -> None:
    names = [n for n in figures(page) if n.startswith("algorithms[")]
    assert names
    for label, tokens in message_tokens(catalog):
        algs = algorithm_prices(dep, tokens * MESSAGE)
        assert value(page, f"algorithms[{label}][Bytes]") == pytest.approx(tokens * MESSAGE / 1e6)
        assert value(page, f"algorithms[{label}][NCCL (ring)]") == pytest.approx(algs["nccl"].seconds * 1e6)
        assert value(page, f"algorithms[{label}][Custom, one-shot]") == pytest.approx(algs["one-shot"].seconds * 1e6)
        # the worked group of eight H100s has symmetric memory: multimem's price, whichever the engine picks
        assert value(page, f"algorithms[{label}][Symmetric memory]") == pytest.approx(
            algs["symmetric memory"].seconds * 1e6)
    assert message_tokens(catalog)[0] == ("one decode token", 1)
    mm = dep.setting.time_model.multimem
    assert value(page, "cw.mm_latency") == pytest.approx(mm.latency_s * 1e6, abs=0.05)
    assert value(page, "cw.mm_efficiency") == pytest.approx(mm.efficiency * 100, abs=0.5)


def test_ring_table(page) -> None:
    for n in (2, 4, 8):
        assert value(page, f"ring[{n} GPUs][Reduce-scatter steps]") == n - 1
        assert value(page, f"ring[{n} GPUs][Sent per GPU]") == pytest.approx(2 * (n - 1) / n * MESSAGE)


def test_bubble_table(page) -> None:
    assert value(page, "bubble[1 micro-batch][2 stages]") == 50
    assert value(page, "bubble[4 micro-batches][4 stages]") == pytest.approx(300 / 7)
    assert value(page, "worked.pp") == 2


def test_across_nodes(page, catalog: Catalog, dep) -> None:
    x = reference(catalog).deployment("llama-3.1-405b", "bf16", layout=Layout(16))
    assert group_link(x, "tp").shape == "network"
    s1 = decode_step(x, 1)
    assert value(page, "across[TP16, one sequence][Time per token]") == pytest.approx(s1.total_s * 1e3)
    full = decode_step(dep, dep.max_concurrency)
    assert value(page, "across[TP8 × PP2, KV cache full][Output tokens/s]") == pytest.approx(
        dep.max_concurrency / full.total_s)


def test_layout_table(built: Build, catalog: Catalog) -> None:
    page = built.page("reference/models/index.html")  # the table moved there from the parallelism page (issue 29)
    # fewest GPUs an engine accepts (fewest-gpus policy) against the layout rented (tp-in-node policy)
    # pipeline stages win the fewest-GPU count: only the last stage holds the sampler's activation peak
    # (4.76 GiB on an H100 at vllm serve's 1,024 sequences); 405B BF16 on 12 GPUs: 811.7 GB / 12 = 63.0 GiB of
    # weights a GPU, under the 71.30 GiB pool with the sampler and 0.55 GiB outside PyTorch on the last stage
    expect = {
        "Llama 3.1 70B BF16": ("TP1 × PP3", 3, "TP4", 4, 1, 1),
        "Llama 3.1 70B INT4": ("TP1", 1, "TP1", 1, 0, 1),
        "Llama 3.1 405B BF16": ("TP4 × PP3", 12, "TP8 × PP2", 16, 4, 2),
        "Llama 3.1 405B FP8": ("TP2 × PP3", 6, "TP8", 8, 2, 1),
        "Llama 3.1 405B INT4": ("TP4", 4, "TP4", 4, 0, 1),
    }
    table = next(t for t in page.select("table") if "Chosen layout" in t.get_text())
    rows = {tr.find("td").get_text(): tr for tr in table.select("tbody tr")}
    for label, (fewest, n_fewest, layout, rented, extra, nodes) in expect.items():
        cells = rows[label].find_all("td")
        assert cells[2].get_text() == fewest and cells[4].get_text() == layout
        assert value(page, f"layouts[{label}][GPUs, fewest]") == n_fewest
        assert value(page, f"layouts[{label}][GPUs, chosen]") == rented
        assert value(page, f"layouts[{label}][Extra GPUs]") == extra
        assert value(page, f"layouts[{label}][Nodes]") == nodes
    r = reference(catalog)
    d = r.deployment("llama-3.1-405b", "fp8")
    assert value(page, "layouts[Llama 3.1 405B FP8][Share of step time]") == pytest.approx(
        100 * decode_step(d, 1).comm_share, rel=1e-6)
    # the same GPU counts as the interconnect page's chart and table: both are the engine's
    assert r.deployment("llama-3.1-405b", "bf16").gpus == 16 and r.deployment("llama-3.1-405b", "int4").gpus == 4


def test_layouts_engines_accept_beyond_the_policy(page) -> None:
    table = next(t for t in page.select("table") if "Layers per stage" in t.get_text())
    rows = {tr.find("td").get_text(): [td.get_text() for td in tr.find_all("td")] for tr in table.select("tbody tr")}
    # TP16 over two nodes: 8 KV heads, each on 16 / 8 = 2 GPUs; TP4 x PP3 holds 405B BF16 on 12 GPUs, 126 layers
    # as vLLM splits them, 42 each, and each KV head on one GPU (8 heads over 4)
    assert rows["Llama 3.1 405B BF16 on TP16"][3] == "2" and rows["Llama 3.1 405B BF16 on TP16"][4] == "accepted"
    assert rows["Llama 3.1 405B BF16 on TP4 × PP3"][2] == "42, 42, 42"
    assert rows["Llama 3.1 405B BF16 on TP4 × PP3"][3] == "1"
    assert rows["Llama 3.1 405B BF16 on TP4 × PP3"][4] == "accepted"
    # vLLM's get_pp_indices: 61 // 4 = 15 each, the one left over to the stage before the last
    assert rows["DeepSeek-V3 FP8 on TP8 × PP4"][2] == "15, 15, 16, 15"
    assert rows["DeepSeek-V3 FP8 on TP8 × PP4"][3] == "8"  # MLA: the compressed latent on every TP rank


def test_claims_hold_and_answers_are_folded(built: Build, page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 10
    assert all(c["title"].startswith("Checked at build time") for c in claims)
    answers = [d for d in page.select("details") if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 5
    assert "32,768 bytes" in answers[0].get_text()
    data = json.loads((built.site / "numbers.json").read_text())
    assert all(c["holds"] for c in data["parallelism.md"]["claims"])
    # no bandwidth-only break-even left on the page
    assert "to match the weight read" not in page.get_text()


def test_links_to_companion_pages(page) -> None:
    hrefs = {a.get("href") for a in page.select("article a")}
    for target in ("../interconnect/", "../hbm/", "../precision/"):
        assert target in hrefs


def test_diagrams_show_the_engines_figures(page, dep) -> None:
    """The three diagrams and the prose that announces them, against arithmetic by hand."""
    prices = algorithm_prices(dep, MESSAGE)
    # TP8 of 405B: 128 / 8 = 16 query heads, 8 / 8 = 1 KV head, 16 x 128 = 2,048 rows of O, 53,248 / 8 = 6,656
    assert (value(page, "tpd.heads"), value(page, "tpd.kv"), value(page, "tpd.o_rows")) == (16, 1, 2048)
    assert (value(page, "tpd.ffn"), value(page, "tpd.ffn_total")) == (6656, 53248)
    # a ring step moves 32,768 / 8 = 4,096 bytes; each algorithm's price spread over its steps
    assert value(page, "rd.chunk") == MESSAGE / 8
    assert value(page, "rd.step") == pytest.approx(prices["nccl"].seconds / 14 * 1e6)
    assert value(page, "rd.two_step") == pytest.approx(prices["two-shot"].seconds / 2 * 1e6)
    assert 14 * value(page, "rd.step") == pytest.approx(value(page, "worked.ring_1"))
    # two stages: 2 x 1 idle boxes; with 8 micro-batches (2 - 1) / (8 + 2 - 1) = 11%
    assert value(page, "pd.idle") == 2 and value(page, "pd.bubble_2") == pytest.approx(100 / 9, abs=0.5)
    figs = page.select("figure.sa-figure")
    svgs = {f.find("svg")["aria-labelledby"].split("-title")[0]: f for f in figs if f.select_one("svg.sa-diagram")}
    assert list(svgs) == ["tp-split", "pipe-schedule", "ring-steps"]  # in the order of the page
    assert "2,048 rows of O" in svgs["tp-split"].figcaption.get_text()
    assert len(svgs["ring-steps"].select("rect.ring-cell")) == 8 * 14
    assert len(svgs["pipe-schedule"].select("rect.pipe-idle")) == 2 * 2
    # the ring diagram's times are the all-reduce table's first row (one decode token), to its rounding
    table = next(t for t in page.select("table") if "Engine's choice" in t.get_text() and "two-shot" in t.get_text())
    first = [td.get_text() for td in table.select("tbody tr")[0].find_all("td")]
    caption = svgs["ring-steps"].figcaption.get_text()
    shown = [float(x) for x in re.findall(r"([\d.]+) µs", caption)]
    for cell in first[2:5]:  # NCCL's ring, two-shot, one-shot: the table to 0.1 µs, the caption to 0.01 µs
        assert any(abs(float(cell.removesuffix(" µs").replace(",", "")) - x) <= 0.051 for x in shown), (cell, shown)
    assert f"picks {first[6]}" in caption  # after the symmetric-memory column
