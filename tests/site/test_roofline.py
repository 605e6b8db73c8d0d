"""The roofline page, read back from the built HTML and checked against arithmetic worked by hand.

The datasheet arithmetic is typed out: H100 SXM 1,979 TFLOP/s FP8 with sparsity → 989.5 dense BF16 and 1,979 dense
FP8 (half the stated sparse figures), HBM 3.35 TB/s; H200 SXM the same tensor cores over 4.8 TB/s. The worked
deployment is Llama 3.1 70B in FP8 on two H100 (TP2): its parameters from config.json (80 layers, hidden 8,192,
64 query and 8 KV heads of 128, MLP 28,672, vocabulary 128,256, untied), one byte per linear weight, the
embedding and LM head in BF16, a BF16 KV cache. Times are worked from the measured shares in data/efficiencies.yaml
and the published timings in data/latencies.yaml, never by calling the engine: that the page prints what the
engine computes is the figure snapshot's job (tests/site/test_snapshot.py).
"""

from __future__ import annotations

import math

import pytest

from snippets.engine.serving import predict
from snippets.engine.specs import ramp
from snippets.pages.roofline.common import deployments
from snippets.pages.scenario import reference

from ..conftest import Build, figures, site_price, text, value

H100_BF16, H100_FP8, H100_HBM = 989.5e12, 1979e12, 3.35e12
H200_HBM = 4.8e12
N_IN, N_OUT = 6144, 2048           # the reference scenario's request
CTX = N_IN + N_OUT / 2             # the page decodes mid-way through the answer: 7,168 tokens
TP = 2
LINEAR = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672)   # q, o, k, v, gate, up, down: 68.45e9
HEAD = 128256 * 8192                                                    # the LM head (and the embedding table)
NORMS = 80 * 2 * 8192 + 8192
W_GPU = LINEAR / TP + 2 * (2 * HEAD / TP + NORMS)     # FP8 linear and BF16 tables split by TP: 36.33 GB per GPU
W_READ = LINEAR / TP + 2 * HEAD / TP + 8192 * 2       # a decode step of one token reads the matrices and one row
KV_TOKEN = 2 * 80 * (8 // TP) * 128 * 2               # K and V, 80 layers, 4 KV heads per GPU, BF16: 163,840 B
FLOP_TOKEN = 2 * (LINEAR + HEAD) / TP                 # 2 FLOPs per weight a token meets (the head once)
ATTN_PAIR = 4 * (64 // TP) * 128                      # QK and PV, 32 query heads per GPU: FLOPs per (query, key)
ACT = 1.03
"""Bytes a step reads beside weights and cache (activations in and out of each kernel, and each FP8 GEMM's input
quantized: 3 bytes an activation) stay under 3 % of the hand-worked bytes here: 35 MB per token against a 1.17 GB
cache at 7,168 tokens."""


def decode_flops(b: int, ctx: float) -> float:
    return b * (FLOP_TOKEN + 80 * ATTN_PAIR * ctx)


def decode_bytes(b: int, ctx: float) -> float:
    return W_READ + (b - 1) * 8192 * 2 + b * KV_TOKEN * ctx


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("roofline/index.html")


def fractions(catalog) -> tuple[float, float, float, float]:
    """The H100's measured shares: a large FP8 GEMM's of the dense peak, a one-token FP8 GEMM's of HBM, fused BF16
    attention's of its dense peak in the worked prefill, and a streaming kernel's of HBM."""
    e = catalog.efficiencies
    gemm = e["h100-sxm-gemm-compute-fp8"].achieved.value / e["h100-sxm-gemm-compute-fp8"].peak.value   # 0.54
    weights1 = dict(e["h100-sxm-gemm-weights-fp8"].by_tokens)[1]                                        # 0.84
    # a prefill's attention runs at its measured share for the prompt's causal length (6,145: twice its pairs per
    # query) and the GPU's 32 query heads: between 4,096 and 8,192 tokens on the grid's row of 32 heads, 0.52 and
    # 0.59, straight on log-log axes (scripts/derive_attention.py)
    grid = e["h100-attention-bf16"].by_heads_length
    row = grid.shares[grid.heads.index(64 // TP)]
    lo, hi = row[grid.lengths.index(4096)], row[grid.lengths.index(8192)]
    attn = lo * (hi / lo) ** math.log2((N_IN + 1) / 4096)                                             # 0.56
    stream = e["h100-hbm-stream"].achieved.value / e["h100-hbm-stream"].peak.value                      # 0.887
    return gemm, weights1, attn, stream


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
    # the V100 has FP16 matrix units and neither BF16 nor FP8: each missing format is named as itself
    assert rows["V100 SXM2 32GB"][3:] == ["no BF16 figure", "—", "no FP8 figure", "—"]


def test_achieved_ridge_uses_the_measured_shares(page, catalog) -> None:
    # the measured FP8 kernels of the H100 (data/efficiencies.yaml): a large GEMM reaches 1,068.7 of 1,979 TFLOP/s,
    # a one-token GEMM 84 % of HBM; the achieved ridge is the one over the other: 1,979 x 0.54 / (3,350 x 0.84)
    gemm, weights1, _, _ = fractions(catalog)
    assert value(page, "ridge_achieved") == pytest.approx(H100_FP8 * gemm / (H100_HBM * weights1))      # 380
    assert value(page, "compute_fraction") == pytest.approx(100 * gemm)
    assert value(page, "hbm_fraction") == pytest.approx(100 * weights1)


def test_worked_decode_step_and_prefill(page, catalog) -> None:
    gemm, weights1, attn, stream = fractions(catalog)
    # decode, one sequence at 7,168 tokens: 2 FLOPs per weight met, the attention's QK and PV over the context
    assert value(page, "wx.dec.flops") == pytest.approx(decode_flops(1, CTX) / 1e9, rel=1e-9)          # 78.9 GFLOP
    assert value(page, "wx.w_gpu") == pytest.approx(W_GPU / 1e9, rel=1e-9)                             # 36.33 GB
    assert value(page, "wx.kv_gpu") == pytest.approx(KV_TOKEN * CTX / 1e9)                             # 1.17 GB
    hand = decode_bytes(1, CTX)                                                                         # 36.45 GB
    # of the weights it holds, the step reads the matrices and its token's row of the embedding table (35.28 GB); the
    # three parts the page names add up to the step's bytes
    assert value(page, "wx.w_read") == pytest.approx(W_READ / 1e9, rel=1e-3)                           # 35.28 GB
    assert (value(page, "wx.w_read") + value(page, "wx.kv_gpu") + value(page, "wx.act_read") / 1e3
            == pytest.approx(value(page, "wx.dec.bytes"), abs=0.006))
    assert hand <= value(page, "wx.dec.bytes") * 1e9 <= ACT * hand
    # its memory time: the weights at the one-token GEMM's 84 % of 3.35 TB/s, the cache at decode attention's share
    # over 7,168 tokens (data/efficiencies.yaml h100-sxm-kv-stream: 0.91 at 4,096 and 0.92 at 8,192, straight between
    # them on log-log axes: 91.8 %), the activations at streaming's 88.7 %
    kv_points = dict(catalog.efficiencies["h100-sxm-kv-stream"].by_context)
    kv_share = kv_points[4096] * (kv_points[8192] / kv_points[4096]) ** math.log2(CTX / 4096)
    assert kv_share == pytest.approx(0.918, abs=1e-3)
    mem = W_READ / (H100_HBM * weights1) + KV_TOKEN * CTX / (H100_HBM * kv_share)                      # 12.92 ms
    assert value(page, "wx.stream_fraction") == pytest.approx(100 * stream)
    assert value(page, "wx.kv_fraction") == pytest.approx(100 * kv_share, abs=0.05)
    assert mem <= value(page, "wx.dec.memory") / 1e3 <= ACT * mem
    # its compute time is the FLOPs at the measured shares, far below: the step is memory-bound
    assert value(page, "wx.dec.compute") < value(page, "wx.dec.memory") / 100
    # communication: two all-reduces of 8,192 x 2 bytes per layer (160), vLLM's custom all-reduce of 16 KiB on two
    # NVLink 4 H100 measured 4.44 us (data/latencies.yaml; the engine fits all points: within 5 %), then one after
    # the embedding and a gather of half the FP32 logits: at least its wire time over 450 GB/s, at most NCCL's
    # measured 2-GPU all-reduce of 256 KiB (8.78 us, more bytes)
    pts = {(n, s): us for n, s, us in catalog.latencies["custom-allreduce-h100"].points}
    assert value(page, "wx.allreduces") == 2 * 80
    assert value(page, "wx.ar_dec") == pytest.approx(pts[2, 8192 * 2], rel=0.05)
    gather_us = value(page, "wx.dec.comm") * 1e3 - (2 * 80 + 1) * value(page, "wx.ar_dec")
    nccl = {(n, s): us for n, s, us in catalog.latencies["nccl-allreduce-h100"].points}
    assert 128256 / TP * 4 / 2 / 450e9 * 1e6 <= gather_us <= nccl[2, 262144]
    # launches: 2.7 us per kernel in a CUDA graph, decode attention's own 9.9 us a layer (the tables' fixed cost per
    # call, data/efficiencies.yaml h100-sxm-kv-stream) and the host's 1.6 ms per step (data/latencies.yaml, policies)
    kernel_us = catalog.latencies["kernel-in-graph"].value.value
    host_ms = catalog.policies["measured-fractions"].step_overhead.value
    own_us = catalog.efficiencies["h100-sxm-kv-stream"].fixed * 1e6
    assert value(page, "wx.kernel_cost") == kernel_us and value(page, "wx.step_overhead") == host_ms
    assert value(page, "wx.kv_fixed") == pytest.approx(own_us) == pytest.approx(9.9)
    assert value(page, "wx.dec.overhead") == pytest.approx(
        (value(page, "wx.kernels_dec") * kernel_us + 80 * own_us) / 1e3 + host_ms)
    # the step adds up as the page says: memory (the larger) + communication + overhead
    parts = value(page, "wx.dec.memory") + value(page, "wx.dec.comm") + value(page, "wx.dec.overhead")
    assert parts == pytest.approx(value(page, "wx.dec.total"))
    # the prefill of 6,144 tokens: 2 FLOPs per linear weight per token, one token's LM head, and causal attention
    # over 6,144 x 6,145 / 2 (query, key) pairs
    gemm_flops = 2 * N_IN * LINEAR / TP + FLOP_TOKEN - 2 * LINEAR / TP
    attn_flops = 80 * ATTN_PAIR * N_IN * (N_IN + 1) / 2
    assert value(page, "wx.pre.flops") == pytest.approx((gemm_flops + attn_flops) / 1e12, rel=1e-9)    # 445.3 TFLOP
    # its compute: each GEMM at the measured 1,068.7 TFLOP/s times its ramp by the FLOPs of one call (data/
    # efficiencies.yaml by_gflop: the fused QKV's 515 GFLOP and the output projection's 412 reach a little less, the
    # MLP's and the one-token LM head's at the ramp's ends), attention at its measured share for this prompt
    assert value(page, "wx.attention_fraction") == pytest.approx(100 * attn)
    points = tuple((g * 1e9, f) for g, f in catalog.efficiencies["h100-sxm-gemm-compute-fp8"].by_gflop)
    calls = {"qkv": 2 * N_IN * (64 + 2 * 8) * 128 / TP * 8192, "o": 2 * N_IN * 8192 * 8192 / TP,
             "gate_up": 2 * N_IN * 2 * 28672 / TP * 8192, "down": 2 * N_IN * 8192 * 28672 / TP}
    assert 80 * sum(calls.values()) + FLOP_TOKEN - 2 * LINEAR / TP == pytest.approx(gemm_flops)
    compute = (80 * sum(f / (H100_FP8 * gemm * ramp(points, f)) for f in calls.values())
               + (FLOP_TOKEN - 2 * LINEAR / TP) / (H100_FP8 * gemm * ramp(points, FLOP_TOKEN - 2 * LINEAR / TP))
               + attn_flops / (H100_BF16 * attn))                                                      # 441 ms
    assert value(page, "wx.pre.compute") == pytest.approx(compute * 1e3, rel=1e-6)
    # the prefill's total: each op's larger part, so at least the compute, the communication and the launches,
    # and at most those with every memory time added
    pre = [value(page, k) for k in ("wx.pre.compute", "wx.pre.comm", "pre.overhead", "wx.pre.memory")]
    assert sum(pre[:3]) <= value(page, "wx.pre.total") <= sum(pre)
    assert value(page, "ttft") == value(page, "wx.pre.total") and value(page, "tpot1") == value(page, "wx.dec.total")


def test_intensity_of_decode_and_prefill(page) -> None:
    hand = decode_flops(1, CTX) / decode_bytes(1, CTX)                                                  # 2.16
    assert hand / ACT <= value(page, "dec_intensity") <= hand
    assert 1.5 < value(page, "dec_intensity") < 3       # about 2 FLOPs per 1-byte weight
    assert value(page, "pre_intensity") > 3 * value(page, "ridge_fp8")
    assert value(page, "pre_intensity") == pytest.approx(value(page, "wx.pre.flops") * 1e3 / value(page, "wx.pre.bytes"))
    # the table's rows grow with the batch and stay memory-bound at every batch that fits
    names = sorted(int(value(page, n)) for n in figures(page) if n.startswith("intensity[") and n.endswith("[Sequences]"))
    assert names[0] == 1 and value(page, "most") in names
    for b in names:
        row = f"intensity[{b}]"
        fig = figures(page)[f"{row}[FLOPs per GPU]"]
        flops = float(fig["data-value"]) * {"GFLOP": 1e9, "TFLOP": 1e12}[fig["data-unit"]]
        nbytes = value(page, f"{row}[Bytes read per GPU]")
        assert flops == pytest.approx(decode_flops(b, CTX), rel=1e-9), b
        assert decode_bytes(b, CTX) <= nbytes * 1e9 <= ACT * decode_bytes(b, CTX), b
        assert value(page, f"{row}[FLOP/byte]") == pytest.approx(flops / (nbytes * 1e9)), b
        assert value(page, f"{row}[Compute]") < value(page, f"{row}[Memory]") < value(page, f"{row}[Step]"), b
        assert value(page, f"{row}[Memory]") / 1e3 >= nbytes * 1e9 / H100_HBM, b      # never above the roofline


def test_critical_batch_and_envelope(page, catalog) -> None:
    gemm, weights1, _, _ = fractions(catalog)
    assert value(page, "envelope") == round(H100_FP8 / H100_HBM * 1 / 2)   # 295
    assert value(page, "envelope_achieved") == round(H100_FP8 * gemm / (H100_HBM * weights1) / 2)     # 190
    # with no context, b tokens do 2b FLOPs per 1-byte weight: compute overtakes memory at b = ridge / 2, the
    # ridge taken at the shares the kernels reach at that batch: between the measured extremes (a large GEMM's
    # 0.54 of peak against a one-token GEMM's 0.84 of HBM: 190) and equal shares (the datasheet's envelope: 295)
    assert value(page, "envelope_achieved") <= value(page, "crit0") <= H100_FP8 / H100_HBM / 2
    assert value(page, "crit0") > value(page, "most")
    # with the scenario's context no batch reaches the ridge
    assert value(page, "lim_ctx") < value(page, "ridge_achieved")


def test_ttft_tpot_and_cost_from_the_prices(page, catalog) -> None:
    # more sequences at once: each token waits longer, but the GPUs turn out more tokens per second
    assert value(page, "tpotm") > value(page, "tpot1")
    assert value(page, "tpotm") >= value(page, f"intensity[{int(value(page, 'most'))}][Step]")
    # tokens/s per GPU: the sequences' tokens each time per output token, over two GPUs, less the time the
    # prefills outside the decode steps take (at one sequence a 484 ms prefill per 2,048 x 18 ms of answer: 1.3 %)
    for tput, seqs, tpot in (("tput1", 1, "tpot1"), ("tputm", value(page, "most"), "tpotm")):
        assert value(page, tput) <= seqs / (value(page, tpot) / 1e3) / TP
        assert value(page, tput) >= 0.95 * seqs / (value(page, tpot) / 1e3) / TP
    # the KV room: every sequence of 8,192 tokens caches 163,840 bytes per token on each GPU; the pool (0.9 of the
    # 79.22 GiB CUDA reports on an H100, 0.9 of 143,156 MiB on an H200) less the weights bounds how many fit
    kv_seq = KV_TOKEN * (N_IN + N_OUT)                                                                # 1.34 GB
    for most, acc in (("most", "h100-sxm"), ("most2", "h200-sxm")):
        rt = catalog.accelerators[acc].memory_runtime
        pool = 0.9 * rt.value * (2**30 if rt.unit == "GiB" else 2**20)
        assert value(page, most) <= math.floor((pool - W_GPU) / kv_seq)                                # 29, 73
    assert value(page, "most2") > value(page, "most")
    # $/Mtok = the two GPUs' hourly price (data/prices.yaml) / (tokens/s per GPU x 2 x 3,600 s) x 1e6
    assert value(page, "rent") == pytest.approx(TP * site_price(catalog, "h100-sxm"))     # $7.98
    assert value(page, "rent2") == pytest.approx(TP * site_price(catalog, "h200-sxm"))
    for cost, rent, tput in (("cost1", "rent", "tput1"), ("costm", "rent", "tputm"), ("costm_2", "rent2", "tputm_2")):
        assert value(page, cost) == pytest.approx(value(page, rent) / (value(page, tput) * TP * 3600) * 1e6), cost


def test_curve_has_one_point_per_concurrency(page, catalog) -> None:
    svg = page.select_one("svg#curve-chart, svg[aria-labelledby^='curve-chart']")
    assert svg is not None
    groups = [g for g in svg.find_all("g") if g.find("polyline")]
    assert len(groups) == 2
    for g, chip, most, tput in zip(groups, ("H100 SXM", "H200 SXM"), ("most", "most2"), ("tputm", "tputm_2"),
                                   strict=True):
        dots = g.find_all("circle")
        assert len(dots) == value(page, most)
        last = dots[-1].title.get_text()
        assert last.startswith(f"{chip}, TP2: {int(value(page, most)):,} sequences")
        assert f"{value(page, tput):,.0f} tokens/s, " in last
    assert f"{value(page, 'tpotm'):.1f} ms" in groups[0].find_all("circle")[-1].title.get_text()
    # each point carries the engine's ranges for both figures: the throughput's per GPU, the time per token's in ms
    for g, d in zip(groups, deployments(reference(catalog)), strict=True):
        n = len(g.find_all("circle"))
        x = predict(d, n)
        (t_lo, t_hi), (y_lo, y_hi) = x.throughput_per_gpu_range, x.tpot_range
        assert g.find_all("circle")[-1].title.get_text().endswith(
            f"{n:,} sequences: {x.output_tokens_per_s_per_gpu:,.0f} tokens/s, {t_lo:,.0f}–{t_hi:,.0f} per GPU; "
            f"{x.tpot_s * 1e3:.1f} ms, {y_lo * 1e3:.1f}–{y_hi * 1e3:.1f} per token")
    # more tokens per second per GPU to the right: x grows with concurrency on both lines
    for g in groups:
        xs = [float(c["cx"]) for c in g.find_all("circle")]
        assert xs == sorted(xs)


def test_quiz_answers_are_computed_and_folded(page) -> None:
    answers = [x for x in page.select("details") if "Answers" in x.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    assert len(answers[0].select("ol > li")) >= 5
    # 32 sequences at the full 8,192 tokens: 2.57 TFLOP over 78.2 GB of weights and cache, far below the ridge
    hand = decode_flops(32, N_IN + N_OUT) / decode_bytes(32, N_IN + N_OUT)                             # 32.8
    assert hand / ACT <= value(page, "q_intensity") <= hand
    assert value(page, "q_intensity") < value(page, "ridge_achieved")
    # 32 sequences do not fit on TP2 (it holds fewer), so the answer deploys more GPUs: TP4, the next degree that
    # divides 64 query and 8 KV heads, holds them: 18.2 GB of weights and 32 x 0.67 GB of cache per GPU, within
    # 60 % of the 0.9 x 79.22 GiB pool (the rest more than covers activations and runtime: 8.6 GiB for the BF16
    # weights on TP4, the "How the numbers are made" trail)
    assert value(page, "most") < 32
    tp4 = (LINEAR / 4 + 2 * 2 * HEAD / 4) + 32 * 2 * 80 * 2 * 128 * 2 * (N_IN + N_OUT)
    assert tp4 < 0.9 * 79.22 * 2**30 * 0.6
    assert "deploys the load on TP4;" in answers[0].get_text()


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
