"""The mixture-of-experts page, read back from the built HTML and checked against arithmetic worked by hand.

Every figure below is worked from config.json (as data/models.yaml transcribes it), the datasheets in data/ and
published measurements (data/latencies.yaml, data/efficiencies.yaml), never by calling the engine: that the page
prints what the engine computes is the figure snapshot's job (tests/site/test_snapshot.py).

DeepSeek-V3 routes each token to 8 of 256 experts (gate, up and down projections of 7,168 x 2,048) in 58 of its 61
layers, hidden size 7,168, MLA latent 512 + rotary key 64 per layer, vocabulary 129,280; its checkpoint is FP8 (one
byte per weight) but for the BF16 embedding, LM head, norms and routers. Qwen3-235B-A22B 8 of 128, hidden 4,096,
94 MoE layers; Mixtral 8x7B 2 of 8. One combine brings back a token's k experts' outputs in BF16: k x hidden x 2
bytes; its dispatch sends them in FP8 (one byte and a four-byte scale per 128).
"""

from __future__ import annotations

import math

import pytest

from ..conftest import Build, figures, site_price, value

CTX = 2048
BATCH = 64
H, V, LAYERS, MOE_LAYERS, DENSE_LAYERS = 7168, 129280, 61, 58, 3
EXPERT = 3 * H * 2048                                   # one expert's gate, up and down: 44,040,192 parameters
# MLA per layer: q_a 7,168 x 1,536, kv_a 7,168 x (512 + 64) (both replicated on every TP rank, vLLM's
# ReplicatedLinear), q_b 1,536 x 128 x (128 + 64), kv_b 512 x 128 x (128 + 128), o 128 x 128 x 7,168 (TP-split)
ATTN_REPLICATED = H * 1536 + H * (512 + 64)             # 15,138,816
ATTN_SPLIT = 1536 * 128 * 192 + 512 * 128 * 256 + 128 * 128 * H   # 171,966,464
DENSE_MLP = 3 * H * 18432                               # the first three layers' MLP
NORMS = LAYERS * (1536 + 512 + 2 * H) + H               # q_a and kv_a norms, two layer norms, the final norm
ROUTER = 256 * H + 256                                  # gate and e_score_correction_bias, per MoE layer
DS_TOTAL = (2 * V * H + NORMS + LAYERS * (ATTN_REPLICATED + ATTN_SPLIT) + DENSE_LAYERS * DENSE_MLP
            + MOE_LAYERS * (257 * EXPERT + ROUTER))     # 256 routed + 1 shared expert: 671,026,419,200
DS_INACTIVE = MOE_LAYERS * (256 - 8) * EXPERT          # the routed experts a token skips

# the weights each GPU holds on TP8 x EP8 (eight H200, FP8 checkpoint): its 32 routed experts whole, the
# TP-split layers' eighth, MLA's two down-projections whole, and in BF16 an eighth of the embedding and of the LM
# head (vocabulary-parallel), every router and every norm
ROUTED_GPU = MOE_LAYERS * (256 // 8) * EXPERT          # 81,738,596,352 bytes
HELD_GPU = (ROUTED_GPU + (LAYERS * ATTN_SPLIT + DENSE_LAYERS * DENSE_MLP + MOE_LAYERS * EXPERT) / 8
            + LAYERS * ATTN_REPLICATED + 2 * (2 * V * H / 8 + MOE_LAYERS * ROUTER + NORMS))   # 85,119,478,784
EMB_SLICE = V * H * 2 / 8                              # the embedding table's slice: held, not read by a step
KV_SEQ = LAYERS * (512 + 64) * 2 * CTX                 # MLA's latent and rotary key, BF16: 143,917,056 bytes
DISPATCH = 8 * H * (1 + 4 / 128)                       # FP8 out, one four-byte scale per 128 elements


def touched(b: int, k: int = 8, experts: int = 256) -> float:
    """The share of experts at least one of b tokens routes to, routing uniformly: 1 - (1 - k/E)^b."""
    return 1 - (1 - k / experts) ** b


def read_gpu(b: int) -> float:
    """Weights one decode step of b tokens reads per GPU: the matrices it holds but the untouched experts and the
    embedding table, plus the batch's embedding rows (the step counts matrices only: the norms' and router
    biases' 2.0 MB, 0.04 % at one token, are left out)."""
    return HELD_GPU - 2 * (NORMS + MOE_LAYERS * 256) - ROUTED_GPU * (1 - touched(b)) - EMB_SLICE + b * H * 2


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("moe/index.html")


def test_total_and_active_parameters(page, catalog) -> None:
    # the count worked from config.json, exact; and DeepSeek's published 671B / 37B (arXiv 2412.19437), rounded
    assert value(page, "params[DeepSeek-V3][Total]") == pytest.approx(DS_TOTAL / 1e9, rel=1e-9)      # 671.03
    assert value(page, "params[DeepSeek-V3][Total]") == pytest.approx(
        catalog.models["deepseek-v3"].stated_params / 1e9, abs=0.5)
    assert value(page, "params[DeepSeek-V3][Active per token]") == pytest.approx((DS_TOTAL - DS_INACTIVE) / 1e9,
                                                                                 rel=1e-9)          # 37.55
    # and the published 37B activated: within its rounding once the 0.93B input embedding (a table lookup, no
    # arithmetic) is left out: 37.55 - 0.93 = 36.6
    assert value(page, "ds_active") - V * H / 1e9 == pytest.approx(
        catalog.models["deepseek-v3"].stated_active_params / 1e9, abs=0.5)
    # Mixtral 8x7B: 32 layers of attention (4,096 x 4,096 x 2 + 4,096 x 1,024 x 2), 8 experts of 3 x 4,096 x 14,336,
    # a router and two norms, untied 32,000-row embedding and head: 46.70B, of which 2 of 8 experts run
    mx_expert = 3 * 4096 * 14336
    mx_total = 2 * 32000 * 4096 + 4096 + 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 8 * mx_expert + 8 * 4096 + 2 * 4096)
    mx_active = mx_total - 32 * 6 * mx_expert
    assert value(page, "params[Mixtral 8x7B][Total]") == pytest.approx(mx_total / 1e9, rel=1e-9)    # 46.70
    assert value(page, "params[Mixtral 8x7B][Active share]") == pytest.approx(100 * mx_active / mx_total)  # 27.6 %
    # Mistral's published 12.9B of 46.7B: each rounded to 0.1B, so the ratio is 27.49 % to 27.76 %
    stated = catalog.models["mixtral-8x7b"]
    assert value(page, "params[Mixtral 8x7B][Active share]") == pytest.approx(
        100 * stated.stated_active_params / stated.stated_params, abs=0.15)
    names = {n.split("]")[0][len("params["):] for n in figures(page) if n.startswith("params[")}
    # every model of data/models.yaml that routes to experts, and only those
    assert names == {m.name for m in catalog.models.values() if m.architecture.moe is not None}
    # Qwen3-30B-A3B (config.json): 48 layers of q, o (2,048 x 4,096), k, v (2,048 x 512), q and k norms (128) and two
    # norms (2,048), a router (2,048 x 128) and 128 experts of gate, up, down (2,048 x 768), 8 of them routed per
    # token; a final norm and an untied 151,936-row embedding and LM head
    attn = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 2 * 2048 + 2048 * 128
    expert = 3 * 2048 * 768
    rest = 2048 + 2 * 151936 * 2048
    assert value(page, "params[Qwen3-30B-A3B][Total]") == pytest.approx((48 * (attn + 128 * expert) + rest) / 1e9,
                                                                         rel=1e-9)               # 30.53, stated 30.5
    assert value(page, "params[Qwen3-30B-A3B][Active per token]") == pytest.approx(
        (48 * (attn + 8 * expert) + rest) / 1e9, rel=1e-9)                                        # 3.35, stated 3.3
    # gpt-oss counts its active parameters without the embedding table (OpenAI's card: 5.13B and 3.61B), and so does
    # the table, as the models reference does: every model's active count within its card's rounding
    for m in catalog.models.values():
        if m.stated_active_params is not None:
            assert value(page, f"params[{m.name}][Active per token]") == pytest.approx(
                m.stated_active_params / 1e9, rel=0.04), m.name
    for name, stated in (("gpt-oss-120b", 5.13), ("gpt-oss-20b", 3.61)):
        assert value(page, f"params[{name}][Active per token]") == pytest.approx(stated, abs=0.01)
    assert "gpt-oss-120b and gpt-oss-20b leave out the embedding table" in " ".join(page.get_text().split())


def test_memory_follows_the_total_and_reads_the_batch(page) -> None:
    assert value(page, "held") == pytest.approx(HELD_GPU / 1e9, rel=1e-9)                            # 85.1 GB
    assert value(page, "wx.expert_held") == pytest.approx(ROUTED_GPU / 1e9, rel=1e-9)                # 81.7 GB
    for b in (1, 8, 64, 256, 1024):
        assert value(page, f"reads[{b:,}][Experts touched]") == pytest.approx(100 * touched(b))
        # the weights a decode step reads: all but the routed experts, the touched share of them, and of the
        # embedding only the batch's rows (the table itself is not read)
        assert value(page, f"reads[{b:,}][Weights read per GPU]") == pytest.approx(read_gpu(b) / 1e9, rel=1e-9)
    assert value(page, "read1") == pytest.approx(read_gpu(1) / 1e9, rel=1e-9)                        # 5.7 GB
    # the worked example's sum adds up: all the step reads but the routed experts (not the embedding table, only the
    # batch's rows of it), plus the touched share of the experts
    assert value(page, "wx.other_read") == pytest.approx((read_gpu(64) - touched(64) * ROUTED_GPU) / 1e9, rel=1e-9)
    assert value(page, "wx.other_read") == pytest.approx((HELD_GPU - ROUTED_GPU - EMB_SLICE) / 1e9, abs=0.01)  # 3.1
    assert value(page, "wx.other_read") + value(page, "wx.touched") / 100 * value(page, "wx.expert_held") \
        == pytest.approx(value(page, "wx.read"), abs=0.1)
    assert value(page, "read1") < 0.1 * value(page, "held") < value(page, "read_big")
    assert value(page, "half_batch") == 22                       # 1 - (31/32)^22 = 0.503, ^21 = 0.487
    chart = page.select_one('svg.sa-chart[aria-labelledby~="moe-reads-title"]')
    assert chart is not None and len(chart.select("circle")) == 2 * 11                 # two series, eleven batches


def test_worked_decode_step(page, catalog) -> None:
    assert value(page, "wx.experts_gpu") == 256 / 8
    assert value(page, "wx.touched") == pytest.approx(100 * touched(BATCH))                           # 86.9 %
    assert value(page, "wx.kv") == pytest.approx(KV_SEQ * BATCH / 1e9)                                # 9.21 GB
    assert value(page, "wx.read") == pytest.approx(read_gpu(BATCH) / 1e9, rel=1e-9)                  # 74.2 GB
    # the memory time: the bytes at the H200's 4.8 TB/s would take 17.4 ms; the kernels reach between the lowest
    # share an FP8 decode GEMM of up to 64 tokens was measured at on an H200 (0.73) and HBM's streaming share
    # (Triad, 4.15 of 4.8 TB/s), so the time lies between those two rooflines
    h200 = catalog.accelerators["h200-sxm"]
    hbm = h200.memory_bandwidth.value * 1e12
    roofline = (read_gpu(BATCH) + KV_SEQ * BATCH) / hbm
    best = catalog.efficiencies["h200-hbm-stream"].achieved.value * 1e12 / hbm                       # 0.865
    worst = min(f for tok, f in catalog.efficiencies["h200-sxm-gemm-weights-fp8"].by_tokens if tok <= BATCH)
    assert roofline / best <= value(page, "wx.memory") / 1e3 <= roofline / worst                      # 20.1 - 23.8 ms
    # without DP attention the experts' outputs are summed by the TP all-reduce of the batch's activations:
    # 64 x 7,168 x 2 bytes; vLLM's custom all-reduce of that size on eight GPUs of one NVLink 4 node was measured
    # between 14.71 us (256 KiB) and 17.26 us (1 MiB) (data/latencies.yaml; the H200 has the H100's NVLink 4)
    msg = BATCH * H * 2
    assert value(page, "wx.msg") == pytest.approx(msg / 1e6)                                           # 0.92 MB
    assert h200.scale_up.fabric == catalog.accelerators["h100-sxm"].scale_up.fabric == "nvlink-4"
    pts = {size: us for n, size, us in catalog.latencies["custom-allreduce-h100"].points if n == 8}
    below, above = max(s for s in pts if s <= msg), min(s for s in pts if s >= msg)
    assert pts[below] <= value(page, "wx.a2a") <= pts[above]                                          # 15.7 us
    # a decode step's communication: one such all-reduce after each of the 61 attention blocks, the 3 dense MLPs
    # and the 58 MoE layers, one after the embedding, and the gather of the batch's logits in BF16 (the engines cast
    # to FP32 after gathering): 7/8 of 64 x 129,280 x 2 bytes, at least its wire time over 450 GB/s (32 us), at most
    # what NCCL took for an 8-GPU all-reduce that moves more bytes (16 MiB: 2 x 7/8 x 16 MiB in 122.08 us,
    # data/latencies.yaml)
    link = catalog.interconnects["nvlink-4"]
    link_bps = link.links_per_gpu * link.per_link.value * 1e9                                        # 450 GB/s
    logits = 7 / 8 * BATCH * V * 2
    nccl = {size: us for n, size, us in catalog.latencies["nccl-allreduce-h100"].points if n == 8}
    big = min(s for s in nccl if 2 * 7 / 8 * s >= logits)
    gather_us = value(page, "wx.comm") * 1e3 - (LAYERS + DENSE_LAYERS + MOE_LAYERS + 1) * value(page, "wx.a2a")
    assert logits / link_bps * 1e6 <= gather_us <= nccl[big]                                          # 63 us
    # the step: at least its memory, its communication and the host's time per step (1.70 ms, data/policies.yaml);
    # the rest is the kernels' fixed cost, 2.7 us each in a CUDA graph: about 25 per layer, at most 32 (a dense
    # layer launches 12, the roofline page counts; an MoE layer adds its router, top-k, sort, shared expert and
    # the routed experts' GEMMs, activation and weighted sum)
    host = catalog.policies["measured-fractions"].step_overhead.value
    kernels_ms = value(page, "wx.step") - value(page, "wx.memory") - value(page, "wx.comm") - host
    kernel_us = catalog.latencies["kernel-in-graph"].value.value
    assert 0 < kernels_ms <= 32 * LAYERS * kernel_us / 1e3                                             # 4.07 ms
    assert value(page, "wx.tps") == pytest.approx(BATCH / value(page, "wx.step") * 1e3)               # 2,156


def _a2a_us(nbytes_out: float, local: int, ep: int, nvlink_bps: float, catalog, network_bps: float = 0.0,
            split: tuple[float, float] | None = None) -> float:
    """DeepEP's all-to-all by hand from its published H100 runs: the fixed cost of a one-token dispatch, then the
    bytes at the share of NVLink 4 its 1,024-token FP8 dispatch reached (51,380,224 bytes in 224.06 us, less the
    fixed cost: 244 GB/s of 450); the share bound for other nodes at NVLink's measured point-to-point share of
    the NIC, after one network step (5 us, NCCL's own figure: data/latencies.yaml, nccl-network-step), both at once."""
    pts = catalog.latencies["deepep-alltoall-h100"].points
    fixed = pts[0][2]                                                       # one token: 13.19 us
    size = 1024 * 8 * H * 7 // 8                                            # 1,024 tokens' FP8 dispatch
    us = min(t for _, s, t in pts if s == size)                             # 224.06 us
    nv4 = catalog.interconnects["nvlink-4"]
    share = size / ((us - fixed) * 1e-6) / (nv4.links_per_gpu * nv4.per_link.value * 1e9)          # 0.54
    intra = nbytes_out * (local - 1) / (ep - 1)
    inter = nbytes_out - intra
    if split is not None:  # bytes over the fabric and over the network, given
        intra, inter = split
    t = intra / (nvlink_bps * share)
    if inter:
        p2p = catalog.efficiencies["h100-nvlink-p2p"]
        t = max(t, inter / (network_bps * p2p.achieved.value / p2p.peak.value))
        fixed += catalog.latencies[catalog.policies["measured-fractions"].hop_latency_network].value.value
    return fixed + t * 1e6


def test_alltoall_over_nvlink_nvl72_and_network(page, catalog) -> None:
    nv4, nv5 = catalog.interconnects["nvlink-4"], catalog.interconnects["nvlink-5"]
    nv4_bps = nv4.links_per_gpu * nv4.per_link.value * 1e9                 # 18 links x 25 GB/s = 450 GB/s
    nv5_bps = nv5.links_per_gpu * nv5.per_link.value * 1e9                 # 18 links x 50 GB/s = 900 GB/s
    ndr_bps = catalog.interconnects["infiniband-ndr"].port.value / 8 * 1e9  # one 400 Gb/s NIC per GPU: 50 GB/s
    rows = (("NVIDIA HGX H200 8-GPU: 8 GPUs over NVLink 4", 8, 8, nv4_bps, 0.0),
            ("NVIDIA GB200 NVL72 (one NVLink domain): 72 GPUs over NVLink 5", 72, 72, nv5_bps, 0.0),
            ("NVIDIA HGX H200 8-GPU: 16 GPUs over InfiniBand NDR", 8, 16, nv4_bps, ndr_bps))
    for label, local, ep, nvlink_bps, network_bps in rows:
        assert value(page, f"a2a[{label}][Link]") == pytest.approx((network_bps or nvlink_bps) / 1e9)
        # in decode each GPU dispatches its tokens' 8 FP8 copies, one per expert (DeepEP's low-latency kernels), all
        # but the 1/ep bound for its own experts, spread over the group
        sent = BATCH * DISPATCH * (ep - 1) / ep
        # the engine fits its fixed cost and link share on all of DeepEP's points (12.87 us, 0.526) rather than these
        # two: within 5 % of the hand-worked time
        assert value(page, f"a2a[{label}][Decode all-to-all]") == pytest.approx(
            _a2a_us(sent, local, ep, nvlink_bps, catalog, network_bps), rel=0.05), label
        # in a prefill (the normal kernels) a token goes once to each other rank of its node holding any of its 8
        # experts, and once to each other node holding any, forwarded there over NVLink to the ranks reached
        rank_hit, node_hit = 1 - (1 - 1 / ep) ** 8, 1 - (1 - local / ep) ** 8
        per_copy = 8192 * DISPATCH / 8
        split = (per_copy * (ep - 1) * rank_hit, per_copy * (ep / local - 1) * node_hit)  # 4.59, 7.51, 6.05 + 1.0
        assert value(page, f"a2a[{label}][Prefill all-to-all]") == pytest.approx(
            _a2a_us(0.0, local, ep, nvlink_bps, catalog, network_bps, split), rel=0.05), label
    hop = catalog.latencies[catalog.policies["measured-fractions"].hop_latency_network].value.value  # NCCL's: 5 us
    assert value(page, "a2a[NVIDIA HGX H200 8-GPU: 16 GPUs over InfiniBand NDR][Hop]") == hop
    assert value(page, "ranks_reached") == pytest.approx(8 * (1 - (7 / 8) ** 8))                   # 5.25
    # DeepEP's own run: 64 tokens' FP8 dispatch on eight H100 (3,211,264 bytes out) took 26.26 us
    assert value(page, "nv8_one") == pytest.approx(26.26, rel=0.05)
    assert value(page, "nv72_pre") < value(page, "nv8_pre") < value(page, "net_pre")


def test_dp_attention_holds_more_sequences(page, catalog) -> None:
    # a sequence of 2,048 tokens caches 61 x (512 + 64) x 2 bytes per token, on every GPU either way (MLA's
    # latent is not split by heads): as many sequences as whole caches fit in the room the page states
    assert value(page, "kv_seq") == pytest.approx(KV_SEQ / 1e9)                                        # 0.144 GB
    assert value(page, "tp_seqs") == math.floor(value(page, "kv_room_tp") * 1e9 / KV_SEQ)              # 266
    assert value(page, "dp_seqs") == 8 * math.floor(value(page, "kv_room_dp") * 1e9 / KV_SEQ)          # 8 x 186
    assert value(page, "dp_seqs") > 3 * value(page, "tp_seqs")
    # under DP attention each GPU holds the whole attention, dense MLPs, shared experts, embedding and head, and
    # its 32 routed experts: 100.8 GB
    dp_held = (ROUTED_GPU + LAYERS * (ATTN_SPLIT + ATTN_REPLICATED) + DENSE_LAYERS * DENSE_MLP + MOE_LAYERS * EXPERT
               + 2 * (2 * V * H + MOE_LAYERS * ROUTER + NORMS))
    assert value(page, "dp_weights") == pytest.approx(dp_held / 1e9, rel=1e-9)
    # the room is vLLM's pool (0.9 of the 143,156 MiB CUDA reports on an H200) less the weights and the activations
    pool = 0.9 * catalog.accelerators["h200-sxm"].memory_runtime.value * 2**20
    assert value(page, "h200_pool") == pytest.approx(pool / 1e9)                                      # 135.1 GB
    assert value(page, "kv_room_tp") < (pool - HELD_GPU) / 1e9
    assert value(page, "kv_room_dp") < (pool - dp_held) / 1e9


def test_documented_deployments(page, catalog) -> None:
    rows = [d for d in catalog.deployments.values() if d.model in ("deepseek-v3", "deepseek-r1")]
    assert value(page, "doc_count") == len(rows)
    seq_names = [n for n in figures(page) if n.startswith("docs[") and n.endswith("[Engine's]")]
    assert len(seq_names) == len(rows)
    # SGLang's documented 8 x H200 FP8 on TP8: the memory the page says it uses is the TP8 weights, the activation
    # peak, what lives outside PyTorch and one sequence's cache of 8,192 tokens (61 x 576 x 2 x 8,192 bytes, whole
    # on every GPU); the pool's rest holds as many more whole caches as fit
    kv_8k = LAYERS * (512 + 64) * 2 * 8192                                                        # 0.576 GB
    used = value(page, "h200_doc_used") * 1e9
    assert HELD_GPU + kv_8k < used < value(page, "h200_pool") * 1e9
    assert value(page, "docs[FP8 · 8 × H200 SXM][Sequences of 8,192]") == 1 + math.floor(
        (value(page, "h200_pool") * 1e9 - used) / kv_8k)                                            # 1 + 65
    assert value(page, "doc_batches") + value(page, "doc_tp_only") == value(page, "doc_larger")


def test_cost_lens_is_price_over_tokens(page, catalog) -> None:
    # $/Mtok = 8 GPUs x $3.59 per GPU-hour (RunPod's H200, data/prices.yaml) / (tokens/s x 3,600 s) x 1e6
    usd_h = 8 * site_price(catalog, "h200-sxm")
    for lay in ("TP8", "TP8 × EP8", "TP1 × DP8 × EP8"):
        assert value(page, f"cost[{lay}][Weights per GPU]") == pytest.approx(
            (HELD_GPU if lay != "TP1 × DP8 × EP8" else value(page, "dp_weights") * 1e9) / 1e9)
        for n in (64, 1024):
            tps = value(page, f"cost[{lay}][Output at {n}]")
            assert value(page, f"cost[{lay}][$/Mtok at {n}]") == pytest.approx(usd_h / (tps * 3600) * 1e6)
    # TP8 x EP8 at 64 in flight is the worked step, with prefills between its decodes: fewer tokens/s than 64
    # tokens every worked step
    assert value(page, "cost[TP8 × EP8][Output at 64]") <= value(page, "wx.tps")
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
