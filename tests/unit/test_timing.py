"""The layered time model on hand-worked cases: each op's roofline and launch cost, attention's bytes with
sliding windows, the all-reduce the engines pick by size, a hierarchical all-reduce across two nodes, fabrics as
wired (MI300X's and Gaudi 3's meshes), experts with and without data-parallel attention, the embedding's rows, a
step's breakdown, serving's steady state; and the engine's command line.

Fitted values (the host's time per step, each collective's latency and share of the link) are read from the
time model, never typed here: they may move with the data. Everything else is worked by hand."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from snippets.data import load
from snippets.data.export import engine_catalog
from snippets.engine import Deployment, Layout, deploy, setting
from snippets.engine import bands as bands_mod
from snippets.engine.collectives import allreduce, alltoall, hierarchical_allreduce, network_steps, send
from snippets.engine.deployment import KVCacheRefused
from snippets.engine.ops import KINDS, Op, Rates, gemm, issue, launch
from snippets.engine.params import normal_dispatch_copies, ranks_reached, total_params
from snippets.engine.serving import (
    admitted,
    at_rate,
    chunks,
    in_turn,
    kv_sequences,
    mixed_step,
    predict,
    prefill_alone_s,
    usd_per_mtok_input,
    wave,
)
from snippets.engine.specs import GemmEfficiency, columns_factor, ramp
from snippets.engine.step import FP8_DISPATCH_BYTES, ISSUE, Batch, prepare, run, step
from snippets.engine.topology import Link, group_link, rewired

from ..conftest import ROOT, repository_catalog
from .test_cli import run_cli

ENG = engine_catalog(repository_catalog())
TM = ENG.time_models["measured-fractions"]
H100 = ENG.chips["h100-sxm"]
NVLINK = 450e9  # H100 SXM, one way: 18 links of 25 GB/s
NDR = 400e9 / 8  # one 400 Gb/s NDR adapter per GPU, one way


def _d(model: str, precision: str, layout: Layout, *, accelerator: str = "h100-sxm", context: int = 2000,
       concurrency: int = 1, kv: str | None = None) -> Deployment:
    st = setting(ENG, model, precision, "reference", accelerator=accelerator, concurrency=concurrency,
                 context_tokens=context, kv_precision=kv)
    return deploy(st, layout)


# --------------------------------------------------------------------------- ops

RATES = Rates(peak_flops=1e15, bf16_flops=5e14, gemm=GemmEfficiency(((1, 0.8), (256, 0.6)), 0.5),
              moe_stream=GemmEfficiency(((1, 0.8), (256, 0.6)), 0.5),
              hbm_bytes_per_s=1e12, stream_bytes_per_s=0.9e12, attention_flops_per_s=2.5e14, attention_grid=None,
              moe_compute=0.5,
              moe_compute_whole=0.5, moe_ramp=(), moe_ramp_whole=(), moe_columns=(1.0, ()), moe_columns_whole=(1.0, ()),
              weight_bytes=1.0,
              kernel_fraction=1.0, kernel_s=2.7e-6, host_s=16.7e-6, graph_max_tokens=512)


def test_gemm_roofline_by_hand():
    # one token through an 8,192 x 8,192 FP8 weight: 67,108,864 bytes of weights at 80 % of 1 TB/s, the token's
    # activations in and out (2 x 8,192 x 2 bytes) at 0.9 TB/s; 2 x 8,192² FLOPs at half of 1 PFLOP/s; one kernel
    o = gemm("x", 1, 8192, 8192, RATES, step_tokens=1)
    assert o.weights == 8192 * 8192
    assert o.memory_s == pytest.approx(8192 * 8192 / 0.8e12 + 2 * 8192 * 2 / 0.9e12)
    assert o.compute_s == pytest.approx(2 * 8192 * 8192 / 0.5e15)
    assert o.launch_s == pytest.approx(2.7e-6)
    assert o.seconds == pytest.approx(o.memory_s + 2.7e-6) and o.bound == "memory"
    # 16 tokens: the weight stream's share halfway (in log2) between 1 and 256 tokens, 0.7
    assert RATES.gemm.weight_fraction(16) == pytest.approx(0.7)
    # 4,096 tokens: past the measured points the share stays 0.6; the arithmetic now dominates
    big = gemm("x", 4096, 8192, 8192, RATES, step_tokens=4096)
    assert big.compute_s == pytest.approx(2 * 4096 * 8192 * 8192 / 0.5e15) and big.bound == "compute"


def test_the_kernels_around_a_gemm_add_their_traffic_to_its_time():
    # 4,096 tokens through an 8,192 x 8,192 FP8 weight with a norm before it (reads and writes 8,192 values a token
    # at 2 bytes: 4 x 8,192 x 2 bytes a token). The GEMM's arithmetic (0.55 ms at half of 1 PFLOP/s) binds its own
    # traffic; the norm is a kernel of its own, so its 134 MB at 0.9 TB/s (0.149 ms) follow it, not hide under it
    around = 4096 * 4 * 8192 * 2
    o = gemm("x", 4096, 8192, 8192, RATES, step_tokens=4096, extra_bytes=around)
    compute = 2 * 4096 * 8192 * 8192 / 0.5e15
    assert o.around_s == pytest.approx(around / 0.9e12)
    assert o.memory_s == pytest.approx(8192 * 8192 / 0.6e12 + (2 * 4096 * 8192 * 2 + around) / 0.9e12)
    assert o.compute_s == pytest.approx(compute) and o.compute_s > o.memory_s - o.around_s
    assert o.work_s == pytest.approx(compute + around / 0.9e12)
    assert o.seconds == pytest.approx(o.work_s + o.launch_s)
    # one token (decode): the weights bind, and the norm's bytes are part of the memory time as they always were
    one = gemm("x", 1, 8192, 8192, RATES, step_tokens=1, extra_bytes=4 * 8192 * 2)
    assert one.work_s == pytest.approx(one.memory_s) and one.memory_s > one.compute_s


def test_an_fp8_prefill_pays_for_the_kernels_around_its_gemms_and_experts():
    # DeepSeek-R1 FP8 on 8 x H200: each quantized GEMM's input is quantized in a kernel of its own (2 bytes read,
    # 1 written per activation), and a fused MoE layer sums each token's experts outside its GEMMs; in a prompt's
    # step the arithmetic binds, so each op's time is its arithmetic plus those kernels' traffic
    d = _d("deepseek-r1", "fp8", Layout(tp=8), accelerator="h200-sxm")
    p = prepare(d)
    assert p.quant_bytes == 3
    s = step(d, "prefill", 8192, 0)
    experts = next(o for o in s.ops if o.name == "experts")
    h, k, columns = 7168, 8, 2048 / 8
    served = 8192
    assert experts.around_s == pytest.approx((served * k * (2 * h + 2 * columns) * 2 + 3 * served * h)
                                             / p.rates.stream_bytes_per_s)
    assert experts.compute_s > experts.memory_s - experts.around_s
    assert experts.work_s == pytest.approx(experts.compute_s + experts.around_s)
    q_a = next(o for o in s.ops if o.name == "q_a")  # the norm before attention and the quantization of its input
    assert q_a.around_s == pytest.approx(served * (2 * h * 2 + 3 * h) / p.rates.stream_bytes_per_s)


def test_cuda_graphs_reach_trtllm_benchs_max_batch_size():
    # vLLM captures up to min(2 x max_num_seqs, 512) tokens: a decode step of 1,024 sequences runs eagerly and pays
    # the host's issue time; trtllm-bench pads every batch up to its max batch size (4,096 here) into a graph
    vllm = _d("llama-3.1-8b", "bf16", Layout(1))
    trt = deploy(setting(ENG, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm", context_tokens=2000,
                         memory_policy="trtllm-bench", max_num_seqs=4096, max_num_batched_tokens=8192), Layout(1))
    assert prepare(vllm).rates.graph_max_tokens == 512
    assert prepare(trt).rates.graph_max_tokens == 4096
    eager, graphed = step(vllm, "decode", 1024, 1000), step(trt, "decode", 1024, 1000)
    kernel = TM.kernel_s
    for o in graphed.ops:  # inside a graph a kernel costs its fixed cost alone: a whole number of them, or where the
        # chip's tables measured the op's own (decode attention: data/efficiencies.yaml h100-sxm-kv-stream), that
        if o.name == "attention (decode)":
            assert o.launch_s == pytest.approx(TM.chip("h100-sxm").kv_fixed) == pytest.approx(9.9e-6)
            continue
        assert o.launch_s / kernel == pytest.approx(round(o.launch_s / kernel))
    assert all(o.issue_s == 0 for o in graphed.ops) and sum(o.issue_s * o.count for o in eager.ops) > 0
    # a step of 1,024 sequences outlasts the host's issue of its kernels: no wait for it, the two steps alike
    assert not any(o.name == ISSUE for o in eager.ops)
    assert eager.total_s == pytest.approx(graphed.total_s)


def test_a_run_without_cuda_graphs_issues_every_kernel_from_the_host():
    # a harness that runs without CUDA graphs (TensorRT-LLM's Python benchmark without --enable_cuda_graph): no step
    # replays a graph and none is held in memory. A decode step of 16 sequences, which vLLM's defaults run in a graph,
    # then has the host issue each kernel in 16.7 us while the GPU works through those issued before: the step lasts
    # the longer of the two, its ops' fixed costs the same as in a graph
    graphed = _d("llama-3.1-8b", "bf16", Layout(1), concurrency=16)
    st = setting(ENG, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm", concurrency=16,
                 context_tokens=2000, cuda_graphs=False)
    eager = deploy(st, Layout(1))
    assert st.memory_policy.cuda_graph_batch == "none" and st.memory_policy.cuda_graphs == 0.0
    assert prepare(graphed).rates.graph_max_tokens == 512 and prepare(eager).rates.graph_max_tokens == 0
    g, e = step(graphed, "decode", 16, 1000), step(eager, "decode", 16, 1000)
    kernel, host = TM.kernel_s, TM.host_dispatch_s
    assert host == pytest.approx(16.7e-6)
    own = TM.chip("h100-sxm").kv_fixed  # decode attention's own fixed cost, measured with its KV read
    assert own == pytest.approx(9.9e-6)
    kernels = 0
    for go, eo in zip(g.ops, [o for o in e.ops if o.name != ISSUE], strict=True):
        k = 2 if go.name == "attention (decode)" else round(go.launch_s / kernel)  # its two kernels
        fixed = own if go.name == "attention (decode)" else k * kernel  # in a graph or out: the fixed cost alone
        assert go.launch_s == pytest.approx(fixed) and eo.launch_s == pytest.approx(fixed) and go.issue_s == 0
        assert eo.issue_s == pytest.approx(0.0 if go.kind in ("allreduce", "alltoall", "send") else k * host)
        kernels += eo.count * (k if eo.issue_s else 0)
    issued, gpu = kernels * host, g.total_s - g.host_s
    assert issued == pytest.approx(sum(o.issue_s * o.count for o in e.ops)) and 0.5 * gpu < issued < gpu
    assert e.total_s == pytest.approx(g.total_s)  # an 8B model's 16 sequences keep the GPU busier than the host
    # one sequence of its FP8 weights on a B200 does not: the GPU waits for the host, the wait shown with the launches
    small = [deploy(setting(ENG, "llama-3.1-8b", "fp8", "reference", accelerator="b200", concurrency=1,
                            context_tokens=2000, cuda_graphs=graphs), Layout(1)) for graphs in (None, False)]
    gs, es = (step(x, "decode", 1, 1000) for x in small)
    issued = sum(o.issue_s * o.count for o in es.ops)
    assert issued > gs.total_s - gs.host_s
    assert es.total_s - es.host_s == pytest.approx(issued)
    assert es.breakdown["launch"] == pytest.approx(gs.breakdown["launch"] + issued - (gs.total_s - gs.host_s))
    # keeping the policy's graphs (True, or not said) changes nothing
    kept = setting(ENG, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm", concurrency=16,
                   context_tokens=2000, cuda_graphs=True)
    assert kept.memory_policy == graphed.setting.memory_policy


def test_launch_inside_and_outside_a_cuda_graph():
    # a kernel's fixed cost is the same in a graph or out of one
    assert launch(RATES, 3) == pytest.approx(3 * 2.7e-6) and launch(RATES, 3, 5e-6) == 5e-6
    # outside a graph (more tokens than the engine captures) the host also issues each kernel, in 16.7 us
    assert issue(RATES, 3, 64) == 0
    assert issue(RATES, 3, 1024) == pytest.approx(3 * 16.7e-6)
    # an op's issue is not part of its time: the step adds what the issue of all its ops takes beyond their work
    tiny = gemm("g", 1024, 8, 8, RATES, step_tokens=1024)
    assert tiny.issue_s == pytest.approx(16.7e-6) and tiny.seconds < 16.7e-6


def test_attention_decode_reads_a_sliding_windows_tokens_only():
    # gpt-oss-120b: 36 layers, every other one on a 128-token window; 8 KV heads of 64, BF16 cache at TP1:
    # 2 x 8 x 64 x 2 = 2,048 bytes per token per layer. One sequence at 4,096 tokens reads 18 layers x 4,096
    # tokens and 18 layers x 128: 76,032 token-layers, 155,713,536 bytes
    d = _d("gpt-oss-120b", "mxfp4", Layout(1), context=8192, kv="bf16")
    s = step(d, "decode", 1, 4096)
    att = next(o for o in s.ops if o.name == "attention (decode)")
    act = 2 * 1 * 64 * 64 * 2  # the query and the output, 64 heads of 64, BF16
    assert att.count == 36
    assert (att.bytes - act) * att.count == pytest.approx((18 * 4096 + 18 * 128) * 2048)
    # (query, key) pairs: 2 x 2 x 64 heads x 64 FLOPs each
    assert att.flops * att.count == pytest.approx((18 * 4096 + 18 * 128) * 4 * 64 * 64)


def test_prefill_pairs_with_a_window_by_hand():
    # a 1,000-token prompt: a full layer attends 1 + 2 + ... + 1,000 = 500,500 pairs; a 128-token window layer
    # 1 + ... + 128 and then 128 for each of the other 872: 8,256 + 111,616 = 119,872
    d = _d("gpt-oss-120b", "mxfp4", Layout(1), context=8192, kv="bf16")
    att = next(o for o in step(d, "prefill", 1000, 0).ops if o.name == "attention (prefill)")
    assert att.flops * att.count == pytest.approx((18 * 500_500 + 18 * 119_872) * 4 * 64 * 64)


def test_prefill_attention_runs_at_its_measured_share_by_heads_and_length():
    # data/efficiencies.yaml h100-attention-bf16 (AIConfigurator's context-attention tables, the engines' median,
    # scripts/derive_attention.py): 8 heads x prompts at 2,048 tokens 0.30 of the dense BF16 peak, at 4,096 0.46;
    # 64 and more at 16,384, 0.60, is the large-work share
    g = TM.chip("h100-sxm").attention_grid
    assert g is not None and g.share(8, 2048) == 0.30 and g.share(8, 4096) == 0.46
    assert g.share(64, 16384) == pytest.approx(TM.chip("h100-sxm").attention, abs=0.005)
    assert TM.chip("h100-sxm").attention == pytest.approx(593.7 / 989.5)
    # between points, straight on log-log axes: at 2,896 tokens (2^11.5) 0.30 x (0.46 / 0.30)^0.5; at 11 heads and
    # 2,048, between 8 (0.30) and 16 (0.37) heads, log2(11 / 8) of the way
    assert g.share(8, 2 ** 11.5) == pytest.approx(0.30 * (0.46 / 0.30) ** 0.5)
    assert g.share(11, 2048) == pytest.approx(0.30 * (0.37 / 0.30) ** math.log2(11 / 8))
    # held at the grid's edges: fewer than 4 heads or 512 tokens as the first cell, beyond 64 heads or 16,384 tokens
    # as the last
    assert g.share(2, 100) == g.share(4, 512) == 0.04 and g.share(256, 131072) == g.share(64, 16384)
    # Llama 3.1 70B BF16 at TP8 on H100, one 2,048-token prompt: 64 / 8 = 8 heads on each GPU, 2,048 x 2,049 / 2 =
    # 2,098,176 pairs of 2 x 2 x 8 x 128 = 4,096 FLOPs, at the share of 8 heads and a causal length of twice the
    # pairs per query (2,049)
    d = _d("llama-3.1-70b", "bf16", Layout(8), context=4096)
    att = next(o for o in step(d, "prefill", 2048, 0).ops if o.name == "attention (prefill)")
    pairs = 2048 * 2049 / 2
    assert att.flops == pytest.approx(pairs * 4096)
    share = 0.30 * (0.46 / 0.30) ** math.log2(2049 / 2048)
    assert att.compute_s == pytest.approx(pairs * 4096 / (989.5e12 * share), rel=1e-9)  # 28.9 us
    assert att.compute_s == pytest.approx(28.94e-6, rel=1e-3)
    # four such prompts in one step give the kernel 32 heads x prompts: 0.41 of the peak at 2,048
    four = run(d, Batch(prefill_tokens=4 * 2048, prefill_seqs=4, prefill_finishing=4), "prefill")
    att4 = next(o for o in four.ops if o.name == "attention (prefill)")
    assert att4.compute_s == pytest.approx(4 * pairs * 4096 / (989.5e12 * g.share(32, 2049)), rel=1e-9)
    assert g.share(32, 2048) == 0.41
    # a chip without a measured grid keeps its share at any size (MI300X: the stated default, at AMD's fraction)
    assert TM.chip("mi300x").attention_grid is None


def test_embedding_reads_the_looked_up_rows_and_the_head_reads_the_whole_table():
    # Llama 3.1 8B, BF16, one decode token: the embedding reads one row of 4,096 x 2 bytes, not the table's
    # 128,256 x 4,096 x 2 = 1.05 GB; the LM head (untied) reads all of its own 1.05 GB
    d = _d("llama-3.1-8b", "bf16", Layout(1))
    s = step(d, "decode", 1, 2000)
    emb = next(o for o in s.ops if o.name == "embedding")
    head = next(o for o in s.ops if o.name == "lm_head")
    assert emb.weights == 4096 * 2
    assert head.weights == 128256 * 4096 * 2
    # 32 sequences look up 32 rows
    assert next(o for o in step(d, "decode", 32, 2000).ops if o.name == "embedding").weights == 32 * 4096 * 2


# --------------------------------------------------------------------------- collectives

def test_allreduce_picks_as_vllm_does_by_size():
    """vLLM 0.11's dispatch on eight H100s (vllm-default: symmetric memory on, the 9.0 table): its custom all-reduce
    below 256 KiB (one stage there), multimem from 256 KiB to below 64 MiB, NCCL above; with symmetric memory off (a
    release before it, or VLLM_ALLREDUCE_USE_SYMM_MEM=0) the custom all-reduce's own 8 MiB, two stages from 256 KiB."""
    d = _d("llama-3.1-405b", "fp8", Layout(8))
    link, tm = group_link(d, "tp"), d.setting.time_model
    one, two, nccl, mm = TM.one_shot, TM.two_shot, TM.nccl, TM.multimem
    assert mm is not None and tm.allreduce_table is not None and tm.allreduce_table.capability == "9.0"
    # 16 KB on eight GPUs: one stage, each GPU reads 7 x 16 KB over its 450 GB/s at the one-stage share
    c = allreduce(16384, link, tm)
    assert c.algorithm == "one-shot" and c.seconds == pytest.approx(one.latency_s + 7 * 16384 / (NVLINK * one.efficiency))
    # 256 KiB: the table stops the custom all-reduce; multimem sends the message once each way through the switch
    c = allreduce(256 * 1024, link, tm)
    assert c.algorithm == "multimem" and c.seconds == pytest.approx(mm.latency_s + 256 * 1024 / (NVLINK * mm.efficiency))
    assert allreduce(64 * 2**20 - 2, link, tm).algorithm == "multimem"
    # 64 MiB and up: NCCL, its latency growing by a step per GPU beyond two
    c = allreduce(64 * 2**20, link, tm)
    assert c.algorithm == "nccl"
    assert c.seconds == pytest.approx(nccl.latency_s + 6 * nccl.per_peer_s + 1.75 * 64 * 2**20 / (NVLINK * nccl.efficiency))
    # symmetric memory off: two stages from 256 KiB, NCCL from 8 MiB
    off = deploy(setting(ENG, "llama-3.1-405b", "fp8", "reference", accelerator="h100-sxm", concurrency=1,
                         context_tokens=2000, symm_mem=False), Layout(8)).setting.time_model
    assert off.allreduce_table is None
    c = allreduce(512 * 1024, link, off)
    assert c.algorithm == "two-shot"
    assert c.seconds == pytest.approx(two.latency_s + 1.75 * 512 * 1024 / (NVLINK * two.efficiency))
    assert allreduce(16 * 2**20, link, off).algorithm == "nccl"
    # two GPUs stay one-shot up to the custom all-reduce's 8 MiB, then symmetric memory's two-shot (no multimem on two)
    d2 = _d("llama-3.1-70b", "fp8", Layout(2))
    l2, tm2 = group_link(d2, "tp"), d2.setting.time_model
    assert allreduce(4 * 2**20, l2, tm2).algorithm == "one-shot"
    st = TM.symm_two_shot
    assert st is not None
    c = allreduce(16 * 2**20, l2, tm2)
    assert c.algorithm == "symm-two-shot" and c.seconds == pytest.approx(st.latency_s + 16 * 2**20 / (NVLINK * st.efficiency))
    # an AMD group takes vLLM's ROCm custom all-reduce; a chip without one (Gaudi 3) goes to the collective library
    assert allreduce(16384, link, TM, "Intel").algorithm == "nccl"


def test_symmetric_memory_needs_the_chips_table_bf16_and_an_nvswitch():
    """Llama 2 70B computes in FP16, which vLLM's symmetric memory refuses: the 9.0 table still caps the custom
    all-reduce at 256 KiB on eight H100s, so 1 MiB goes to NCCL. B300 has no table in vLLM 0.11 (custom all-reduce to
    8 MiB) and one from 0.19 (vllm-v021: multimem from 4 MiB on eight). Eight H100s over PCIe have no multicast, an
    SGLang run (its torch symmetric memory is opt-in) none either; B200's 10.0 table sends eight GPUs' 1 MiB to
    multimem."""
    fp16 = _d("llama-2-70b", "fp16", Layout(8))
    assert fp16.setting.model.dtype == "fp16"
    assert allreduce(2**20, group_link(fp16, "tp"), fp16.setting.time_model).algorithm == "nccl"
    assert allreduce(2**17, group_link(fp16, "tp"), fp16.setting.time_model).algorithm == "one-shot"
    b300 = _d("deepseek-r1", "fp8", Layout(8), accelerator="b300")
    assert b300.setting.time_model.allreduce_table is None
    assert allreduce(4 * 2**20, group_link(b300, "tp"), b300.setting.time_model).algorithm == "two-shot"
    v021 = deploy(setting(ENG, "deepseek-r1", "fp8", "reference", accelerator="b300", concurrency=1,
                          context_tokens=2000, memory_policy="vllm-v021"), Layout(8))
    assert allreduce(4 * 2**20, group_link(v021, "tp"), v021.setting.time_model).algorithm == "multimem"
    assert allreduce(4 * 2**20 - 2, group_link(v021, "tp"), v021.setting.time_model).algorithm == "two-shot"
    pcie = rewired(_d("llama-3.1-70b", "fp8", Layout(2)), "pcie")
    assert allreduce(16 * 2**20, group_link(pcie, "tp"), pcie.setting.time_model).algorithm == "nccl"
    sgl = deploy(setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator="h100-sxm", concurrency=1,
                         context_tokens=2000, engine="SGLang"), Layout(8))
    assert sgl.setting.time_model.allreduce_table is None
    assert allreduce(2**20, group_link(sgl, "tp"), sgl.setting.time_model).algorithm == "two-shot"
    b200 = _d("deepseek-r1", "fp8", Layout(8), accelerator="b200")
    assert allreduce(2**20, group_link(b200, "tp"), b200.setting.time_model).algorithm == "multimem"
    assert allreduce(2**20 - 2, group_link(b200, "tp"), b200.setting.time_model).algorithm == "two-shot"


def test_the_custom_allreduce_model_stays_near_its_published_timings():
    """AIConfigurator's vLLM 0.14.0 timings on H100s, each priced as vLLM's dispatch ran it: within 25 % (two-shot
    35 %: its fit splits two sources' harnesses)."""
    cat = load()
    tm = cat.policies["measured-fractions"]
    pts = cat.latencies[tm.custom_allreduce_points].points
    d8 = _d("llama-3.1-405b", "fp8", Layout(8))
    for n, nbytes, us in pts:
        d = d8 if n == 8 else Deployment(d8.setting, Layout(n), "a group of n")
        c = allreduce(nbytes, group_link(d, "tp"), d8.setting.time_model)
        assert c.seconds * 1e6 == pytest.approx(us, rel=0.35 if c.algorithm == "two-shot" else 0.25), \
            (n, nbytes, c.algorithm)
    for points in (tm.multimem_points, tm.symm_two_shot_points):  # vLLM's own tables, on four to eight H100s
        for n, nbytes, us in cat.latencies[points].points:
            c = allreduce(nbytes, group_link(Deployment(d8.setting, Layout(n), "a group of n"), "tp"),
                          d8.setting.time_model)
            if c.algorithm in ("multimem", "symm-two-shot") and (points == tm.multimem_points) == (c.algorithm == "multimem"):
                assert c.seconds * 1e6 == pytest.approx(us, rel=0.25), (points, n, nbytes)


def test_a_chip_with_its_own_timings_prices_its_allreduce_under_the_engine_timed():
    """16 KB on eight B200s under vLLM: B200's own one stage (vLLM 0.19.0's timings below the 10.0 table's caps:
    7.17 us and a payload at 0.32 of NVLink 5's 900 GB/s), 7 x 16 KB / 288 GB/s + 7.17 = 7.57 us; under SGLang's
    memory policy, whose own B200 timings are not adopted, the reference fit's 4.47 us and 0.6 of the link. An H100
    is priced alike under both."""
    b200 = ENG.chips["b200"]
    assert b200.scale_up_bytes_per_s == 900e9
    vllm = _d("deepseek-r1", "fp8", Layout(8), accelerator="b200")
    sgl = deploy(setting(ENG, "deepseek-r1", "fp8", "reference", accelerator="b200", concurrency=1,
                         context_tokens=2000, memory_policy="sglang-default"), Layout(8))
    own = vllm.setting.time_model.one_shot
    assert (own.latency_s, own.efficiency) == pytest.approx((7.17e-6, 0.32))
    c = allreduce(16384, group_link(vllm, "tp"), vllm.setting.time_model)
    assert c.algorithm == "one-shot" and c.seconds == pytest.approx(7.17e-6 + 7 * 16384 / (900e9 * 0.32))
    assert c.seconds * 1e6 == pytest.approx(7.57, abs=0.01)
    ref = sgl.setting.time_model
    assert (ref.one_shot, ref.two_shot) == (TM.one_shot, TM.two_shot)
    assert allreduce(16384, group_link(sgl, "tp"), ref).seconds == pytest.approx(
        TM.one_shot.latency_s + 7 * 16384 / (900e9 * TM.one_shot.efficiency))
    # B300 has no two-stage factors of its own (its two-stage timings fit no share of the link): the reference's
    b300 = TM.for_chip("b300", "vLLM")
    assert b300.one_shot != TM.one_shot and b300.two_shot == TM.two_shot
    # a chip without timings of its own is the time model itself; an engine not timed keeps its custom all-reduce
    assert TM.for_chip("h100-sxm", "vLLM") is TM and TM.for_chip("h200-sxm", "SGLang") is TM
    assert TM.for_chip("b200", "TensorRT-LLM").one_shot == TM.one_shot
    h100 = _d("llama-3.1-70b", "fp8", Layout(8)).setting.time_model
    assert h100.allreduce_table is not None and replace(h100, allreduce_table=None) == TM


def test_a_chips_own_nccl_prices_its_large_allreduces_under_every_engine():
    """16 MiB on eight B200s goes to NCCL under SGLang (above vLLM's custom all-reduce's 8 MiB, which its budget keeps
    without symmetric memory) and under vLLM from 128 MiB (the 10.0 table's symmetric-memory limit): B200's own NCCL
    timings give 10.29 us + 6 peers x 2.73 us and 2 x 7/8 of the message at 0.582 of NVLink 5's 900 GB/s, 82.7 us for
    16 MiB; the H100's fit would have given 7.45 + 6 x 1.62 us at 0.698, 63.9 us. Under vLLM 16 MiB is multimem's."""
    def nccl_at(nbytes: int) -> float:
        return 10.29e-6 + 6 * 2.73e-6 + 1.75 * nbytes / (900e9 * 0.582)

    sgl = deploy(setting(ENG, "deepseek-r1", "fp8", "reference", accelerator="b200", concurrency=1,
                         context_tokens=2000, memory_policy="sglang-default"), Layout(8))
    c = allreduce(16 * 2**20, group_link(sgl, "tp"), sgl.setting.time_model)
    assert c.algorithm == "nccl" and c.seconds == pytest.approx(nccl_at(16 * 2**20))
    vllm = _d("deepseek-r1", "fp8", Layout(8), accelerator="b200")
    assert allreduce(16 * 2**20, group_link(vllm, "tp"), vllm.setting.time_model).algorithm == "multimem"
    c = allreduce(128 * 2**20, group_link(vllm, "tp"), vllm.setting.time_model)
    assert c.algorithm == "nccl" and c.seconds == pytest.approx(nccl_at(128 * 2**20))
    assert nccl_at(16 * 2**20) * 1e6 == pytest.approx(82.7, abs=0.1)
    ref = TM.nccl.latency_s + 6 * TM.nccl.per_peer_s + 1.75 * 16 * 2**20 / (900e9 * TM.nccl.efficiency)
    assert ref * 1e6 == pytest.approx(63.9, abs=0.1)


def test_every_chips_own_allreduce_stays_near_its_timings():
    """Each chip_collectives entry priced on its own chip under its engine keeps within 30 % of every published point
    it was fitted on (one-shot always; two-shot where the entry has its own)."""
    cat = load()
    tm = cat.policies["measured-fractions"]
    policy = {"vLLM": tm.allreduce_timed_under, "SGLang": "sglang-default"}  # the release the timings ran
    for cc in tm.chip_collectives:
        acc = cat.latencies[cc.points].accelerator
        st = setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator=acc, memory_policy=policy[cc.engine])
        d8 = deploy(st, Layout(8 if acc not in ("gb200", "gb300") else 4))
        t = d8.setting.time_model
        assert t.one_shot.latency_s == pytest.approx(cc.one_shot.latency.seconds), cc.points
        for n, nbytes, us in cat.latencies[cc.points].points:
            c = allreduce(nbytes, group_link(Deployment(d8.setting, Layout(n), "a group of n"), "tp"), t)
            if c.algorithm == "one-shot" or cc.two_shot is not None:
                assert c.seconds * 1e6 == pytest.approx(us, rel=0.30), (cc.points, n, nbytes, c.algorithm)


def test_an_mi325x_allreduce_is_priced_by_each_engines_own_kernel():
    """Eight MI325X (MI300X's die and fabric): a 32 KiB all-reduce (one stage) under SGLang is aiter's kernel's fit
    (9.2 us and 0.726 of the links), under vLLM vLLM's (6.9 us and 0.773), each over all seven 64 GB/s links of the
    full mesh: 9.2 + 7 x 32,768 / (448e9 x 0.726) = 9.905 us, and 6.9 + 7 x 32,768 / (448e9 x 0.773) = 7.562 us."""
    for policy, want in (("sglang-default", 9.2e-6 + 7 * 32768 / (448e9 * 0.726)),
                         ("vllm-default", 6.9e-6 + 7 * 32768 / (448e9 * 0.773))):
        d = deploy(setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator="mi325x", memory_policy=policy),
                   Layout(8))
        link = group_link(d, "tp")
        assert (link.shape, link.bytes_per_s) == ("full_mesh", 448e9)
        c = allreduce(32768, link, d.setting.time_model, "AMD")
        assert c.algorithm == "one-shot" and c.seconds == pytest.approx(want), policy
        assert c.seconds * 1e6 == pytest.approx({"sglang-default": 9.905, "vllm-default": 7.562}[policy], abs=1e-3)


def test_each_engines_kernel_picks_its_own_stages_on_mi325x():
    """128 KiB on eight MI325X: aiter's kernel (SGLang) runs two stages from 80 KB, at the reference two-stage fit
    (it was timed on two GPUs only): 10.85 + 1.75 x 131,072 / (448e9 x 0.742) = 11.54 us; vLLM's runs one stage below
    256 KB: 6.9 + 7 x 131,072 / (448e9 x 0.773) = 9.55 us. On four GPUs aiter's switches at 160 KB."""
    got = {}
    for policy in ("sglang-default", "vllm-default"):
        d = deploy(setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator="mi325x", memory_policy=policy),
                   Layout(8))
        got[policy] = allreduce(131072, group_link(d, "tp"), d.setting.time_model, "AMD")
    ref = TM.two_shot
    assert got["sglang-default"].algorithm == "two-shot"
    assert got["sglang-default"].seconds == pytest.approx(ref.latency_s + 1.75 * 131072 / (448e9 * ref.efficiency))
    assert got["vllm-default"].algorithm == "one-shot"
    assert got["vllm-default"].seconds * 1e6 == pytest.approx(6.9 + 7 * 131072 / (448e9 * 0.773) * 1e6)
    d4 = deploy(setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator="mi325x",
                        memory_policy="sglang-default"), Layout(4))
    tm, link = d4.setting.time_model, group_link(d4, "tp")
    assert [allreduce(kib * 1024, link, tm, "AMD").algorithm for kib in (159, 160)] == ["one-shot", "two-shot"]


def test_hierarchical_allreduce_tp16_on_two_hgx_h100_by_hand():
    """TP16 over two HGX H100 nodes, one MiB per GPU (32 tokens of Llama 3.1 405B in BF16: 32 x 16,384 x 2)."""
    d = _d("llama-3.1-405b", "bf16", Layout(16))
    link = group_link(d, "tp")
    assert (link.nodes, link.local_gpus, link.bytes_per_s, link.local_bytes_per_s) == (2, 8, NDR, NVLINK)
    nbytes = 32 * 16384 * 2  # 1,048,576
    n = TM.nccl
    # 1. reduce-scatter among the node's 8 GPUs: 7/8 of the message over NVLink at NCCL's share, and half of NCCL's
    #    8-GPU latency (one of its two passes): 917,504 bytes
    inside = 7 / 8 * nbytes
    half = (n.latency_s + 6 * n.per_peer_s) / 2
    rs = half + inside / (NVLINK * n.efficiency)
    # 2. each GPU all-reduces its 1/8 shard (131,072 bytes) with its counterpart in the other node over its own
    #    NIC: 2 x (2 − 1)/2 of the shard, at a copy's share of 50 GB/s, NCCL's latency and a network hop per step
    shard = nbytes / 8
    net = n.latency_s + 2 * 1 * TM.network_hop_s + 2 * (2 - 1) / 2 * shard / (NDR * TM.link_fraction)
    # 3. all-gather inside the node: the same as the reduce-scatter
    c = hierarchical_allreduce(nbytes, link, TM)
    assert c.algorithm == "hierarchical"
    assert c.seconds == pytest.approx(2 * rs + net)
    assert c.bytes_moved == pytest.approx(2 * inside + shard)
    # the same through the engine's choice; and for a prompt-sized message (64 MiB), where bytes dominate, far
    # quicker than a flat ring of 16 at one NIC's rate: an eighth of the message crosses each NIC, not 2 x 15/16
    assert allreduce(nbytes, link, TM).seconds == pytest.approx(c.seconds)
    big = 64 * 2**20
    flat = n.latency_s + 14 * n.per_peer_s + 2 * 15 / 16 * big / (NDR * TM.link_fraction)
    assert hierarchical_allreduce(big, link, TM).seconds < flat / 4


def test_network_steps_are_a_ring_or_a_tree_whichever_is_fewer():
    """NCCL's tuner counts 2(N − 1) network steps for a ring across N nodes and 2 floor(log2 N) for a tree: the same at
    two nodes, the tree's fewer from four."""
    assert [network_steps(n) for n in (1, 2, 3, 4, 8, 16, 32)] == [0, 2, 2, 4, 6, 8, 10]
    assert all(network_steps(n) <= 2 * (n - 1) for n in range(1, 65))


def test_a_small_allreduce_between_two_nodes_against_nccl_tests():
    """An 8-byte all-reduce between two nodes of one GPU each, as the time model prices it (NCCL's fitted latency and two
    network steps at NCCL's own figure for one), against nccl-tests on two A100 nodes over HDR InfiniBand: 18.96 to
    20.67 us for 8 to 64 bytes (NVIDIA/nccl-tests#150; data/latencies.yaml, nccl-network-step). A check, not a fit:
    the step's figure is NCCL's tuner constant; the 10 us the time model charged before it was sourced gives 27 us."""
    hdr = 200e9 / 8
    link = Link("InfiniBand HDR", hdr, TM.network_hop_s, "network", gpus=2, nodes=2, local_gpus=1)
    c = allreduce(8, link, TM)
    assert c.algorithm == "hierarchical"
    assert c.seconds == pytest.approx(TM.nccl.latency_s + 2 * TM.network_hop_s + 8 / (hdr * TM.link_fraction))
    for measured_us in (18.96, 20.67):
        assert abs(c.seconds * 1e6 / measured_us - 1) < 0.2


def test_alltoall_splits_its_bytes_between_fabric_and_network():
    # EP16 over two HGX H200 nodes: of what a GPU sends, 7/15 goes to the other GPUs of its node over NVLink, 8/15
    # over its NIC, both at once
    d = _d("deepseek-v3", "fp8", Layout(1, ep=16, dp=16), accelerator="h200-sxm", context=2048)
    link = group_link(d, "ep")
    assert (link.gpus, link.nodes, link.local_gpus) == (16, 2, 8)
    nbytes = 1e6
    c = alltoall(nbytes, link, TM)
    t_in = nbytes * 7 / 15 / (NVLINK * TM.alltoall.efficiency)
    t_out = nbytes * 8 / 15 / (NDR * TM.link_fraction)
    assert c.seconds == pytest.approx(TM.alltoall.latency_s + TM.network_hop_s + max(t_in, t_out))


def test_pipeline_send():
    d = _d("llama-3.1-405b", "bf16", Layout(8, 2))
    link = group_link(d, "pp")
    assert link.bytes_per_s == NDR  # the stages are on two nodes
    c = send(65536, link, TM)
    assert c.seconds == pytest.approx(TM.network_hop_s + 65536 / (NDR * TM.link_fraction))


# --------------------------------------------------------------------------- topology

def test_mi300x_tp2_gets_one_link_and_tp8_all_seven():
    # 7 Infinity Fabric links of 128 GB/s both directions summed: 64 GB/s each way, one to each of the 7 peers
    two = group_link(_d("llama-3.1-70b", "fp8", Layout(2), accelerator="mi300x"), "tp")
    eight = group_link(_d("llama-3.1-405b", "fp8", Layout(8), accelerator="mi300x"), "tp")
    assert (two.shape, two.bytes_per_s, two.fully_connected) == ("full_mesh", pytest.approx(64e9), True)
    assert eight.bytes_per_s == pytest.approx(7 * 64e9)
    # an H100 pair behind NVSwitch gets each GPU's whole 450 GB/s
    assert group_link(_d("llama-3.1-70b", "fp8", Layout(2)), "tp").bytes_per_s == pytest.approx(NVLINK)


def test_mi250x_gcds_pair_in_the_package_and_share_the_links_between_modules():
    """An HPE Cray EX node: four MI250X, eight GCDs to software. A TP2 pair is one module's two GCDs, joined in the
    package at 400 GB/s both directions summed: 200 GB/s each way, fully connected (vLLM's custom all-reduce may run).
    Beyond the pair each GCD's three 100 GB/s links to other modules (150 GB/s each way) are spread over the six GCDs
    of the other modules, 25 GB/s each; an all-reduce sends each peer an equal share, paced by those: TP4 3 x 25 =
    75 GB/s, TP8 7 x 25 = 175 GB/s, and neither group is fully connected (three links cannot reach six GCDs)."""
    got = {tp: group_link(_d("llama-3.1-8b", "bf16", Layout(tp), accelerator="mi250x"), "tp") for tp in (2, 4, 8)}
    assert {tp: (g.shape, g.bytes_per_s, g.fully_connected) for tp, g in got.items()} == {
        2: ("paired_mesh", pytest.approx(200e9), True),
        4: ("paired_mesh", pytest.approx(75e9), False),
        8: ("paired_mesh", pytest.approx(175e9), False)}


def test_v100s_hybrid_cube_mesh_gives_a_pair_one_link_and_is_not_fully_connected_at_eight():
    """Eight V100 SXM2: six NVLinks of 25 GB/s each way per GPU, reaching four of the seven peers (Alibaba Cloud's
    description of the hybrid cube mesh). GPU0 and GPU1 share one link: 25 GB/s. A set of four is fully connected:
    3 x 25 = 75 GB/s. All eight get every link, 150 GB/s, not 7 x 25 = 175, and are not fully connected (GPU0 has no
    link to GPU6), so vLLM's custom all-reduce stands aside and NCCL runs."""
    got = {tp: group_link(_d("llama-3.1-8b", "fp16", Layout(tp), accelerator="v100-sxm2-32gb"), "tp") for tp in (2, 4, 8)}
    assert {tp: (g.bytes_per_s, g.fully_connected) for tp, g in got.items()} == {
        2: (pytest.approx(25e9), True), 4: (pytest.approx(75e9), True), 8: (pytest.approx(150e9), False)}
    d8 = _d("llama-3.1-8b", "fp16", Layout(8), accelerator="v100-sxm2-32gb")
    assert allreduce(32768, got[8], d8.setting.time_model, "NVIDIA").algorithm == "nccl"


def test_an_mi250x_is_budgeted_as_the_gcd_vllm_sees():
    """vLLM sees one GCD as a GPU of 68,702,699,520 bytes (63.98 GiB, HIP's total on LUMI): Llama 3.1 70B in BF16
    (65.71 GiB per GPU at TP2) does not load on two GCDs and runs on four; in INT4 (39.8 GB) it runs on one."""
    chip = _d("llama-3.1-8b", "bf16", Layout(1), accelerator="mi250x").setting.chip
    assert (chip.capacity_bytes, chip.capacity_reported, chip.hbm_bytes_per_s) == (68702699520, True, 1.6e12)
    with pytest.raises(KVCacheRefused, match=r"65\.71 GiB per GPU, exceed the GPU's 63\.98 GiB.*HIP out of memory"):
        _d("llama-3.1-70b", "bf16", Layout(2), accelerator="mi250x")
    assert _d("llama-3.1-70b", "bf16", Layout(4), accelerator="mi250x").gpus == 4
    assert _d("llama-3.1-70b", "int4-g128", Layout(1), accelerator="mi250x").gpus == 1


def test_mi300x_tp2_on_one_link_slows_a_loaded_decode():
    """The issue's case, as the engine now has it: Llama 3.1 70B FP8 as TP2 on MI300X with the KV cache full at
    1,000 + 1,000 tokens. The pair's all-reduces cross one 64 GB/s link; if the pair got all 448 GB/s (as the
    engine used to assume), the step would be much shorter."""
    d = _d("llama-3.1-70b", "fp8", Layout(2), accelerator="mi300x")
    switched = Deployment(replace(d.setting, node=replace(d.setting.node, fabric_shape="switched")), d.layout, d.why)
    c = admitted(d, 2000)
    one, wide = predict(d, c, 1000, 1000), predict(switched, c, 1000, 1000)
    assert one.breakdown["allreduce"] > 4 * wide.breakdown["allreduce"]
    assert one.tpot_s > 1.3 * wide.tpot_s
    assert one.breakdown["gemm"] == pytest.approx(wide.breakdown["gemm"])


def test_gaudi3_gives_three_ports_per_peer():
    st = setting(ENG, "llama-3.1-70b", "bf16", "reference", accelerator="gaudi-3", concurrency=1, context_tokens=2000)
    d = Deployment(st, Layout(2), "given")
    # 21 scale-up ports of 200 Gb/s (25 GB/s each way), three to each of the seven other cards
    assert group_link(d, "tp").bytes_per_s == pytest.approx(3 * 25e9)
    assert group_link(Deployment(st, Layout(8), "given"), "tp").bytes_per_s == pytest.approx(21 * 25e9)


# --------------------------------------------------------------------------- experts

def test_experts_without_dp_attention_combine_like_tp():
    d = _d("deepseek-v3", "fp8", Layout(8, ep=8), accelerator="h200-sxm", context=2048)
    s = step(d, "decode", 64, 1024)
    names = {o.name for o in s.ops}
    assert "MoE all-reduce" in names and not s.of("alltoall")
    tp = step(_d("deepseek-v3", "fp8", Layout(8), accelerator="h200-sxm", context=2048), "decode", 64, 1024)
    # the same communication as plain TP, and the same arithmetic: every token's experts computed once
    assert s.comm_s == pytest.approx(tp.comm_s)
    assert s.flops == pytest.approx(tp.flops, rel=1e-9)


def test_experts_with_dp_attention_dispatch_in_fp8_and_combine_in_bf16():
    d = _d("deepseek-v3", "fp8", Layout(1, ep=8, dp=8), accelerator="h200-sxm", context=2048)
    s = step(d, "decode", 64, 1024)
    assert not [o for o in s.ops if o.kind == "allreduce"]
    dispatch, combine = (next(o for o in s.ops if o.name == n) for n in ("dispatch", "combine"))
    arch = d.setting.model.architecture
    # 64 tokens over 8 ranks: 8 each, each to 8 experts, 7/8 of them on other GPUs
    per_gpu = 64 / 8 * arch.moe.active_experts * arch.hidden_size * 7 / 8
    assert dispatch.bytes == pytest.approx(per_gpu * FP8_DISPATCH_BYTES)
    assert combine.bytes == pytest.approx(per_gpu * 2)
    moe_layers = arch.layers - arch.moe.dense_layers
    assert dispatch.count == combine.count == moe_layers
    # the experts' surrounding traffic: each rank's 64 assignments (8 ranks' 8 tokens x 8 experts, spread over 8 ranks)
    # in and out at the whole expert's width, and the quantization of the rank's own 8 tokens, before the dispatch
    experts = next(o for o in s.ops if o.name == "experts")
    h, ffn = arch.hidden_size, arch.moe.expert_ffn_size
    assignments = 64 * 8 / 8
    assert experts.around_s == pytest.approx((assignments * (2 * h + 2 * ffn) * 2 + 8 * h * 3)
                                             / prepare(d).rates.stream_bytes_per_s)


def test_a_prompt_step_dispatches_once_per_rank_as_deepep_normal_kernels_do():
    # a step carrying prompt tokens runs DeepEP's normal kernels (SGLang's --deepep-mode auto): a token goes once to
    # each rank holding any of its 8 experts, 8 x (1 - (7/8)^8) = 5.25 ranks of 8 on average, not once per expert
    d = _d("deepseek-v3", "fp8", Layout(1, ep=8, dp=8), accelerator="h200-sxm", context=4096)
    arch = d.setting.model.architecture
    assert ranks_reached(arch, 8) == pytest.approx(8 * (1 - (7 / 8) ** 8))                          # 5.25
    assert ranks_reached(arch, 1) == 1.0
    s = step(d, "prefill", 2048, 0)
    dispatch, combine = (next(o for o in s.ops if o.name == n) for n in ("dispatch", "combine"))
    per_gpu = 2048 / 8 * 8 * (1 - (7 / 8) ** 8) * arch.hidden_size * 7 / 8
    assert dispatch.bytes == pytest.approx(per_gpu * FP8_DISPATCH_BYTES)
    assert combine.bytes == pytest.approx(per_gpu * 2)
    # across two nodes (EP16, 8 a node) a token crosses the network once per other node reached, 1 - (1/2)^8 of one,
    # and the fabric carries the ranks reached in its own node and those it forwards to in the other: 15 x hit
    assert normal_dispatch_copies(arch, 8, 8) == pytest.approx((7 * (1 - (7 / 8) ** 8), 0.0))
    hit = 1 - (15 / 16) ** 8
    assert normal_dispatch_copies(arch, 16, 8) == pytest.approx((15 * hit, 1 - 0.5 ** 8))
    # a decode step of as many tokens sends a copy per expert: 8 / 5.25 = 1.52 times the bytes
    dec = next(o for o in step(d, "decode", 2048, 1024).ops if o.name == "dispatch")
    assert dec.bytes / dispatch.bytes == pytest.approx(8 / (8 * (1 - (7 / 8) ** 8)))


# --------------------------------------------------------------------------- steps and serving

@pytest.mark.parametrize(("model", "precision", "layout", "acc"), [
    ("llama-3.1-70b", "fp8", Layout(2), "h100-sxm"),
    ("llama-3.1-405b", "bf16", Layout(8, 2), "h100-sxm"),
    ("deepseek-v3", "fp8", Layout(1, ep=8, dp=8), "h200-sxm"),
])
def test_a_steps_breakdown_sums_to_its_time(model, precision, layout, acc):
    d = _d(model, precision, layout, accelerator=acc, context=4096)
    for s in (step(d, "decode", 16, 2000), step(d, "prefill", 2048, 0)):
        b = s.breakdown
        assert set(b) == set(KINDS)
        assert sum(b.values()) == pytest.approx(s.total_s)
        assert b["launch"] >= TM.step_overhead_s


def test_decode_at_one_sequence_is_memory_bound_and_prefill_compute_bound():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=8192)
    assert step(d, "decode", 1, 2000).bound == "memory"
    assert step(d, "prefill", 8192, 0).bound == "compute"


def test_predict_alone_is_its_own_steps():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=2000)
    x = predict(d, 1, 1000, 1000)
    # one request: no wait, its prompt in one step, then one decode step per token
    assert x.queue_s == x.prefill_wait_s == 0
    assert x.ttft_s == pytest.approx(step(d, "prefill", 1000, 0).total_s)
    assert x.tpot_s == pytest.approx(x.decode.total_s)
    assert x.output_tokens_per_s == pytest.approx(1000 / (x.ttft_s + 999 * x.tpot_s))


def test_sglangs_issue_cost_is_its_logged_eager_forward_over_the_calls_the_model_counts():
    # sgl-project/sglang#12160: a DeepSeek-V3 prefill of one new token (one cached) took 82.6 ms eager and 23.1 ms
    # replayed in a CUDA graph. The GPUs' work is no more than the graph's, so the eager forward is the host's issue
    # of its kernels and collective calls: 82.6 ms over the 1,631 the time model counts at TP8 (61 layers), the
    # 50.6 us data/policies.yaml gives SGLang
    st = setting(ENG, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", memory_policy="sglang-default")
    host = st.memory_policy.host_dispatch
    assert host == pytest.approx(50.6e-6)
    d = deploy(st, Layout(8))
    forward = step(d, "prefill", 1, 1)
    calls = forward.issued_s / host
    assert forward.issued_s == pytest.approx(sum(o.issue_s * o.count for o in forward.ops))
    assert calls == pytest.approx(1631)
    assert calls * host == pytest.approx(82.6e-3, abs=0.1e-3)
    # the model's forward is the host's too: its GPU work is short of the issue, and the step waits for the rest
    gpu = forward.gpu_s
    assert gpu < 23.1e-3 and forward.waiting_on_issue_s == pytest.approx(calls * host - gpu)
    assert forward.total_s == pytest.approx(forward.host_s + calls * host)
    # vLLM's compiled custom-op call (the time model's figure) issues the same forward in a third of the time
    assert st.time_model.host_dispatch_s == pytest.approx(16.7e-6)


def test_sglang_issues_a_prompt_step_while_the_gpu_runs_the_decode_step_before():
    # SGLang's overlap scheduler issues step N + 1 while the GPU runs step N: a prompt's eager step arriving among
    # decoding requests waits for its issue only as far as the decode step before leaves it to. At one request in
    # flight the GPU is idle when the prompt comes, and the prompt's step waits for all of it
    st = setting(ENG, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", memory_policy="sglang-default",
                 context_tokens=2000)
    assert st.memory_policy.overlap_schedule and not st.memory_policy.mixed_steps
    d = deploy(st, Layout(8))
    alone = predict(d, 1, 1000, 1000)
    pre = step(d, "prefill", 1000, 0)
    assert pre.waiting_on_issue_s > 0  # a 1,000-token prompt of DeepSeek's: the host binds the eager step
    assert alone.prefill_s == pytest.approx(pre.total_s) == pytest.approx(prefill_alone_s(d, 1000))
    loaded = predict(d, 8, 1000, 1000)
    hidden = min(pre.waiting_on_issue_s, loaded.decode.gpu_s)
    assert 0 < hidden < pre.waiting_on_issue_s
    assert loaded.prefill_s == pytest.approx(loaded.prefill.total_s - hidden)
    # without the overlap (the scheduler's flag off) the prompt's step waits for all of its issue under load too
    plain = deploy(replace(st, memory_policy=replace(st.memory_policy, overlap_schedule=False)), Layout(8))
    assert predict(plain, 8, 1000, 1000).prefill_s == pytest.approx(loaded.prefill.total_s)
    # nor across pipeline stages, where both engines run another loop than the overlapping one
    staged = deploy(st, Layout(4, 2))
    steps = [step(staged, "prefill", 1000, 0)] * 2
    assert steps[0].waiting_on_issue_s > 0
    assert in_turn(staged, steps, 1.0) == [x.total_s for x in steps]
    # after a long step the issue hides whole; after a step like itself, as much as that step's GPU work covers
    assert in_turn(d, [pre, pre], 1.0) == pytest.approx(
        [pre.gpu_s + pre.host_s, pre.total_s - min(pre.waiting_on_issue_s, pre.gpu_s)])


def test_tensorrt_llms_pytorch_executor_overlaps_its_steps_as_sglang_does():
    # TensorRT-LLM's PyTorch executor runs its overlap scheduler unless disable_overlap_scheduler (llm_args: False by
    # default); its C++ executor over a TensorRT engine states none. Both issue at the time model's 16.7 us a call
    for name, overlaps in (("trtllm-serve", True), ("trtllm-serve-plain", True), ("trtllm-bench", True),
                           ("trtllm-bench-engine", False), ("vllm-default", False), ("sglang-default", True)):
        pol = ENG.memory_policies[name]
        assert pol.overlap_schedule == overlaps, name
        assert pol.host_dispatch == (50.6e-6 if name == "sglang-default" else None), name


def test_predict_under_load_is_bounded_by_its_prefills():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=5500, kv="fp8")
    cap = admitted(d, 5500)
    x = predict(d, cap, 5000, 500)
    # every prompt takes its turn: requests cannot finish faster than one prompt's steps each
    assert x.output_tokens_per_s <= 500 / x.prefill_s * (1 + 1e-9)
    # a larger batch shares the weight read: more tokens per second, each a little later
    x1 = predict(d, 1, 5000, 500)
    assert x.tpot_s > x1.tpot_s and x.output_tokens_per_s > 10 * x1.output_tokens_per_s
    # beyond what the replica admits, requests wait for a slot
    y = predict(d, 2 * cap, 5000, 500)
    assert y.in_flight == cap and y.queue_s > 0 and y.ttft_s > x.ttft_s


def test_requests_at_a_rate_settle_where_they_finish_as_fast_as_they_arrive():
    """An open loop (`at_rate`): by Little's law the replica holds rate x lifetime requests; the closed loops of the
    two whole numbers around that hold finish just below and just above the rate, and the figures lie between
    theirs. Below one request's own rate the replica serves each alone; at or above the full replica's rate the
    queue grows without end and the figures are the full replica's."""
    d = _d("llama-3.1-70b", "fp8", Layout(4), context=1250)
    rate, n_out = 5.0, 250
    x = at_rate(d, rate, 1000, n_out)
    below, above = predict(d, x.in_flight - 1, 1000, n_out), predict(d, x.in_flight, 1000, n_out)
    assert below.output_tokens_per_s / n_out <= rate < above.output_tokens_per_s / n_out
    assert below.ttft_s <= x.ttft_s <= above.ttft_s and below.tpot_s <= x.tpot_s <= above.tpot_s
    assert x.output_tokens_per_s == pytest.approx(rate * n_out) and x.request_rate == rate and not x.saturated
    # Little's law by hand: the requests held are the rate times a request's life, within the one between the two
    life = x.ttft_s + (n_out - 1) * x.tpot_s
    assert x.in_flight - 1 <= rate * life <= x.in_flight + 1e-9
    alone = predict(d, 1, 1000, n_out)
    slow = at_rate(d, 0.1 * alone.output_tokens_per_s / n_out, 1000, n_out)
    assert (slow.in_flight, slow.ttft_s, slow.tpot_s) == (1, alone.ttft_s, alone.tpot_s)
    full = predict(d, 10**6, 1000, n_out)
    flood = at_rate(d, 2 * full.output_tokens_per_s / n_out, 1000, n_out)
    assert flood.saturated and flood.in_flight == full.in_flight and flood.queue_s == 0
    assert flood.ttft_s == pytest.approx(full.ttft_s - full.queue_s) and flood.tpot_s == full.tpot_s
    assert flood.output_tokens_per_s == full.output_tokens_per_s
    with pytest.raises(ValueError, match="positive number of requests"):
        at_rate(d, 0.0, 1000, n_out)


def test_admission_defaults_to_the_kv_cache_without_a_max_num_seqs():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=2000)
    assert admitted(d, 2000) == kv_sequences(d, 2000)


def test_chunked_prefill_splits_a_prompt_into_the_budget():
    assert chunks(5000, 2048) == [(2048, 0), (2048, 2048), (904, 4096)]
    assert chunks(5000, None) == [(5000, 0)]


def test_every_prediction_carries_its_band_and_regime():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=2000)
    x = predict(d, 8, 1000, 1000)
    assert x.regime == "NVIDIA, dense, decode at low load" and x.ttft_regime == "NVIDIA, dense, prefill"
    lo, hi = x.tpot_range
    assert lo <= hi and x.tpot_band == bands_mod.band(TM.bands, "tpot_ms", bands_mod.Regime("NVIDIA", False,
                                                                                             "decode at low load"))


def test_a_throughputs_range_per_gpu_is_its_range_shared_by_its_gpus():
    """Llama 3.1 70B in FP8 on TP4 at 16 requests: four GPUs share the throughput and its range alike, as
    `output_tokens_per_s_per_gpu` shares the throughput (the sizing records and the calculator print it per GPU)."""
    x = predict(_d("llama-3.1-70b", "fp8", Layout(4)), 16)
    lo, hi = x.throughput_range
    assert x.gpus == 4 and hi > lo
    assert x.throughput_per_gpu_range == pytest.approx((lo / 4, hi / 4))
    assert x.output_tokens_per_s_per_gpu == pytest.approx(x.output_tokens_per_s / 4)


def test_a_band_holds_the_central_share_of_its_errors():
    errs = [-0.3, -0.1, 0.0, 0.05, 0.1, 0.2, 0.25, 0.3, 0.9, 1.5]
    lo, hi = bands_mod.central(errs)
    inside = [e for e in errs if lo <= e <= hi]
    assert len(inside) >= 8 and hi - lo == pytest.approx(0.6)  # -0.3 .. 0.3 is the narrowest holding eight
    r = bands_mod.Regime("AMD", False, "prefill")
    few = (bands_mod.BandEntry("ttft_ms", "AMD", False, "prefill", -0.1, 0.1, 2),
           bands_mod.BandEntry("ttft_ms", "NVIDIA", False, "prefill", -0.4, 0.2, 9))
    b = bands_mod.band(few, "ttft_ms", r)
    assert b.widest and (b.low, b.high, b.rows) == (-0.4, 0.2, 2)  # too few rows: the span of the metric's bands
    assert b.around(100.0) == pytest.approx((100 / 1.2, 100 / 0.6))
    # a cost per token goes as one over the throughput: where the throughput measured fell between 100 ÷ 1.2 and
    # 100 ÷ 0.6 tokens/s, a cost of $2 at 100 tokens/s fell between $2 × 0.6 and $2 × 1.2, the cheap end the fast one
    assert b.inverse(2.0) == pytest.approx((2 * 0.6, 2 * 1.2))
    slow, fast = b.around(100.0)  # the throughput's range: its low end the slow one
    assert b.inverse(2.0) == pytest.approx((2.0 * 100 / fast, 2.0 * 100 / slow))


def test_a_band_says_where_it_comes_from():
    """Its own regime's rows, or too few of them and the span of the metric's bands (issue 24: "a regime with fewer
    than five test rows says so")."""
    entries = (bands_mod.BandEntry("tpot_ms", "NVIDIA", True, "decode at low load", -0.7, -0.5, 6),
               bands_mod.BandEntry("tpot_ms", "AMD", True, "decode at low load", -0.6, -0.4, 2))
    own = bands_mod.band(entries, "tpot_ms", bands_mod.Regime("NVIDIA", True, "decode at low load"))
    assert own.basis("tpot_ms", "R") == "where 80 % of the 6 test measurements of time per output token in R fell"
    few = bands_mod.band(entries, "tpot_ms", bands_mod.Regime("AMD", True, "decode at low load"))
    assert (few.low, few.high, few.rows, few.widest) == (-0.7, -0.5, 2, True)  # AMD's 2 rows are too few
    assert few.basis("tpot_ms", "R") == ("only 2 test measurements of time per output token in R, fewer than 5: the "
                                         "span of the bands with enough rows")
    # two regimes with enough rows: the span runs from the lowest error of either to the highest, a range neither has;
    # a regime with too few rows is left out of it, even where its band reaches further
    two = (*entries, bands_mod.BandEntry("tpot_ms", "AMD", False, "decode at low load", -0.2, 0.3, 7),
           bands_mod.BandEntry("tpot_ms", "Intel", False, "decode at low load", -0.9, 0.9, 3))
    span = bands_mod.band(two, "tpot_ms", bands_mod.Regime("Google", True, "decode at low load"))
    assert (span.low, span.high, span.rows, span.widest) == (-0.7, 0.3, 0, True)
    none = bands_mod.band(entries, "tpot_ms", bands_mod.Regime("NVIDIA", False, "decode at low load"))
    assert none.rows == 0 and none.basis("tpot_ms", "R") == ("no test measurement of time per output token in R: "
                                                             "the span of the bands with enough rows")
    assert bands_mod.band(entries, "ttft_ms", bands_mod.Regime("NVIDIA", True, "prefill")).basis(
        "ttft_ms", "R") == "no test measurement of time to first token in any regime: no band"
    assert few.as_dict("tpot_ms", "R") == {"regime": "R", "test_rows": 2, "widest": True,
                                           "basis": few.basis("tpot_ms", "R")}


# --------------------------------------------------------------------------- the command line

def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "snippets.engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


_cli = run_cli


def test_cli_predict_prints_one_json_object():
    """`python -m snippets.engine`, as a command (the other tests run its `main` in this process)."""
    out = _command("predict", "--model", "llama-3.1-405b", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "8",
               "--pp", "1", "--input-tokens", "1000", "--output-tokens", "500", "--concurrency", "16",
               "--kv-precision", "fp8")
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert {"ttft_ms", "tpot_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "gpus", "memory_per_gpu",
            "assumptions", "breakdown", "links", "tpot_ms_range", "ttft_ms_range", "output_tokens_per_s_range",
            "regime"} <= set(j)
    d = _d("llama-3.1-405b", "fp8", Layout(8), context=1500, concurrency=16, kv="fp8")
    x = predict(d, 16, 1000, 500)
    assert j["assumptions"]["kv_precision"] == "fp8"
    assert j["gpus"] == 8 and j["tpot_ms"] == pytest.approx(x.tpot_s * 1e3)
    assert j["output_tokens_per_s"] == pytest.approx(x.output_tokens_per_s)
    assert j["ttft_ms"] == pytest.approx(x.ttft_s * 1e3)
    # one decode step's seconds by kind, every kind present, summing to the step
    assert set(j["breakdown"]) == set(KINDS)
    assert sum(j["breakdown"].values()) == pytest.approx(x.decode.total_s)
    # what each group's links give it, per direction: TP8 over NVSwitch 450 GB/s, no EP, no PP
    assert j["links"]["tp"] == {"name": "NVLink 4", "gb_per_s": pytest.approx(450.0), "hop_us": pytest.approx(2.0)}
    assert j["links"]["ep"]["gb_per_s"] == 0 and j["links"]["pp"]["name"] == "none"
    for k in ("tpot_ms_range", "ttft_ms_range", "output_tokens_per_s_range"):
        lo, hi = j[k]
        assert 0 < lo <= hi
    assert j["tpot_ms_range"] == pytest.approx([v * 1e3 for v in x.tpot_range])
    assert j["regime"] == x.regime
    # the cost per token's range is the rent over the throughput range's ends: the fast end is the cheap one
    lo, hi = j["output_tokens_per_s_range"]
    rent = x.usd_per_mtok_output * x.output_tokens_per_s  # the replica's dollars an hour, in tokens' terms
    assert j["usd_per_mtok_output_range"] == pytest.approx([rent / hi, rent / lo])
    assert 0 < j["usd_per_mtok_output_range"][0] < j["usd_per_mtok_output_range"][1]


def test_cli_predict_wave_runs_the_concurrency_as_one_wave():
    args = ("predict", "--model", "llama-3.1-8b", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "1",
            "--input-tokens", "128", "--output-tokens", "128", "--concurrency", "64", "--kv-precision", "fp8")
    j = json.loads(_cli(*args, "--wave").stdout)
    d = _d("llama-3.1-8b", "fp8", Layout(1), context=256, concurrency=64, kv="fp8")
    w = wave(d, 64, 128, 128)
    assert j["wave"] == {"requests": 64, "prefill_steps": w.prefill_steps, "ttft_ms": pytest.approx(w.ttft_s * 1e3),
                         "tpot_ms": pytest.approx(w.tpot_s * 1e3),
                         "output_tokens_per_s": pytest.approx(w.output_tokens_per_s)}
    assert json.loads(_cli(*args).stdout)["wave"] is None


def test_cli_max_concurrency_and_size():
    j = json.loads(_cli("predict", "--model", "llama-3.1-70b", "--precision", "fp8", "--accelerator", "h100-sxm",
                        "--tp", "2", "--input-tokens", "1000", "--output-tokens", "500", "--concurrency", "max").stdout)
    assert j["concurrency"] == j["max_concurrency"] > 100
    s = _cli("size", "--model", "llama-3.1-405b", "--precision", "bf16", "--accelerator", "h100-sxm")
    assert s.returncode == 0 and json.loads(s.stdout)["layout"] == {"tp": 8, "pp": 2, "ep": 1, "dp": 1}


@pytest.mark.parametrize(("args", "code", "words"), [
    (("--model", "nope", "--tp", "1"), 2, "unknown id"),
    (("--model", "llama-3.1-405b", "--tp", "3"), 1, "does not divide the 128 attention heads"),
    (("--model", "llama-3.1-405b", "--tp", "8", "--precision", "bf16"), 1, "GiB per GPU"),
    (("--model", "llama-3.1-405b", "--tp", "8", "--kv-precision", "nope"), 2, "unknown id"),
])
def test_cli_refuses_in_one_line(args, code, words):
    base = {"--precision": "fp8", "--accelerator": "h100-sxm"}
    argv = list(args)
    for k, v in base.items():
        if k not in argv:
            argv += [k, v]
    out = _cli("predict", *argv)
    assert out.returncode == code
    assert words in out.stderr and out.stderr.count("\n") == 1 and out.stdout == ""


def test_data_parallel_attention_holds_each_sequence_on_one_rank():
    st = setting(ENG, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", concurrency=1, context_tokens=2048)
    tp8 = deploy(st, Layout(8))
    dp8 = deploy(st, Layout(1, ep=8, dp=8))
    # MLA's latent cache is whole on every TP rank: DP attention splits the sequences instead, so eight times as
    # many fit in what the KV room allows (the attention weights, replicated, take some of it back)
    assert dp8.memory.kv_per_sequence == tp8.memory.kv_per_sequence
    assert dp8.max_concurrency == 8 * dp8.memory.max_sequences
    assert dp8.max_concurrency > 4 * tp8.max_concurrency
    assert math.isfinite(predict(dp8, 64, 1024, 1024).tpot_s)


# --------------------------------------------------------------------------- one wave and prompts sharing a step


def _three(context: int, budget: int, **policy: bool) -> tuple[Any, Deployment, Any]:
    """Llama 3.1 8B FP8 on one H100 for a wave of three: (its setting, the deployment, its prep), sequences of at most
    `context` tokens, `budget` tokens a step, and the memory policy's settings `policy` overrides."""
    st = setting(ENG, "llama-3.1-8b", "fp8", "reference", accelerator="h100-sxm", concurrency=3, context_tokens=context,
                 max_num_seqs=3, max_num_batched_tokens=budget, **policy)
    d = deploy(st, Layout(1))
    return st, d, prepare(d)


def test_a_wave_runs_step_by_step_as_the_scheduler_does():
    _, d, p = _three(103, 250)
    w = wave(d, 3, 100, 3, prep=p)
    # step 1: 250 prompt tokens, prompts 0 and 1 whole and half of prompt 2; both finished prompts have a token
    t1 = mixed_step(d, 0, 0.0, 250, 0, finishing=2, prep=p, prompts=3).total_s
    # step 2: the two decode at 101 tokens (100 + their first), the budget's 248 left take prompt 2's last 50
    t2 = mixed_step(d, 2, 101, 50, 50, finishing=1, prep=p).total_s
    # step 3: all three decode, two at 102 tokens and one at 101; the first two are done (3 tokens each)
    t3 = mixed_step(d, 3, (2 * 102 + 101) / 3, 0, 0, prep=p).total_s
    # step 4: the last one decodes its third token at 102
    t4 = mixed_step(d, 1, 102, 0, 0, prep=p).total_s
    T1, T2, T3, T4 = t1, t1 + t2, t1 + t2 + t3, t1 + t2 + t3 + t4
    assert w.prefill_steps == 2
    assert w.total_s == pytest.approx(T4)
    assert w.ttft_s == pytest.approx((2 * T1 + T2) / 3)
    assert w.tpot_s == pytest.approx((2 * (T3 - T1) / 2 + (T4 - T2) / 2) / 3)
    assert w.output_tokens_per_s == pytest.approx(9 / T4)
    with pytest.raises(ValueError, match="not one wave"):
        wave(d, 4, 100, 3, prep=p)


def test_a_wave_without_chunked_prefill_takes_whole_prompts_and_the_next_waits():
    # TensorRT-LLM without chunked context (MicroBatchScheduler): decode tokens first, then whole prompts while they
    # fit max_num_tokens; the first that does not fit waits. Three prompts of 200 tokens, three tokens out, 201 a step
    st, d, p = _three(203, 201, chunked_prefill=False)
    w = wave(d, 3, 200, 3, prep=p)
    # step 1: prompt A alone (a second would need 400 tokens); A has its first token
    t1 = mixed_step(d, 0, 0.0, 200, 0, finishing=1, prep=p).total_s
    # step 2: A decodes at 201 tokens; the 200 left take prompt B whole
    t2 = mixed_step(d, 1, 201, 200, 0, finishing=1, prep=p).total_s
    # step 3: A (202) and B (201) decode; the 199 left cannot hold prompt C, which waits (chunked: 199 of it). A is done
    t3 = mixed_step(d, 2, 201.5, 0, 0, prep=p).total_s
    # step 4: B decodes its last token at 202; the 200 left take C whole
    t4 = mixed_step(d, 1, 202, 200, 0, finishing=1, prep=p).total_s
    # steps 5 and 6: C decodes its two tokens, at 201 and 202 (201.5 on average)
    t56 = 2 * mixed_step(d, 1, 201.5, 0, 0, prep=p).total_s
    T1, T2, T4 = t1, t1 + t2, t1 + t2 + t3 + t4
    T6 = T4 + t56
    assert w.prefill_steps == 3
    assert w.ttft_s == pytest.approx((T1 + T2 + T4) / 3)
    assert w.tpot_s == pytest.approx(((T1 + t2 + t3 - T1) / 2 + (T4 - T2) / 2 + (T6 - T4) / 2) / 3)
    assert w.total_s == pytest.approx(T6)
    chunked = wave(deploy(replace(st, memory_policy=replace(st.memory_policy, chunked_prefill=True)), Layout(1)),
                   3, 200, 3)
    assert chunked.ttft_s < w.ttft_s
    with pytest.raises(ValueError, match="does not split prompts"):
        wave(d, 1, 202, 1, prep=p)


@pytest.mark.parametrize("chunked", [True, False])
def test_prompts_beyond_what_full_steps_take_wait_in_a_queue(chunked):
    # Llama 3.1 8B in FP8 on one H100, 200 requests of 100 tokens in and 4 out, 1,000 tokens a step: each request
    # lives about five steps, so some 40 prompts arrive per step, and a step has room for at most 9 or 10 of them.
    # Every step is then full (vLLM's Scheduler.schedule: decode tokens first, then waiting prompts up to the
    # budget): bd sequences decode and the budget's 1,000 - bd tokens are prompts, all of them with chunked
    # prefill, whole prompts only without. Prompts start at (prompt tokens a step) / 100 / t_full a second, and
    # the rest of a request's life, L - t_full (its prompt's step) - 3 t_full (its decode steps), is its queue.
    st = setting(ENG, "llama-3.1-8b", "fp8", "reference", accelerator="h100-sxm", concurrency=200, context_tokens=104,
                 max_num_seqs=200, max_num_batched_tokens=1000, chunked_prefill=chunked)
    d = deploy(st, Layout(1))
    x = predict(d, 200, 100, 4)
    bd = x.decode.batch.decode_seqs
    left = 1000 - bd
    tokens = left if chunked else left // 100 * 100
    full = mixed_step(d, bd, 102, tokens, 0, finishing=left // 100, prompts=math.ceil(tokens / 100)).total_s
    rate = x.output_tokens_per_s / 4  # requests a second: prompts started a second
    assert rate == pytest.approx(tokens / 100 / full, rel=1e-9)
    assert x.prefill.batch.prefill_tokens == tokens and x.prefill_load == 1.0
    assert x.tpot_s == pytest.approx(full) and x.prefill_s == pytest.approx(full)
    lifetime = 200 / rate
    assert x.prefill_wait_s == pytest.approx(lifetime - full - 3 * full)
    assert x.prefill_wait_s > 5 * full  # the queue is most of the TTFT
    assert x.ttft_s == pytest.approx(x.prefill_wait_s + full)


def test_prompts_that_share_a_step_stay_under_the_compute_roof():
    # Qwen3-32B in BF16 on one H100, 128 tokens in and 4 out at all the KV cache admits: prompts arrive far
    # faster than decode steps finish, so several share each step, and their rate stays under the dense peak
    d = _d("qwen3-32b", "bf16", Layout(1), context=132)
    x = predict(d, admitted(d, 132), 128, 4)
    k = x.prefill.batch.prefill_seqs
    assert k > 1 and x.prefill.batch.prefill_tokens == 128 * k
    # the prompts a step takes are those that arrive while it runs, at the steady state's rate b / L
    rate = x.output_tokens_per_s / 4
    assert rate * x.prefill.total_s == pytest.approx(k, abs=1)
    flops = x.input_tokens_per_s * 2 * total_params(d.setting.model.architecture, active=True)
    assert flops < d.setting.chip.dense_flops[d.compute_format]
    # charged as one prompt a step each, they would pass it
    one = mixed_step(d, x.in_flight, 130, 128, 0, finishing=1).total_s - x.decode.total_s
    assert 128 / one * 2 * total_params(d.setting.model.architecture, active=True) > d.setting.chip.dense_flops[d.compute_format]


@pytest.mark.parametrize("accelerator", ["a100-80gb-sxm", "h100-sxm"])
def test_one_more_request_in_flight_moves_no_figure_by_a_jump(accelerator: str):
    # Qwen3-32B in BF16 on one GPU, 128 tokens in and 4 out, closed loops of up to all the KV cache admits: prompts
    # arrive faster than decode steps finish, near the rate full steps take them. The steady state must move
    # smoothly with the load. The fixed point used to swing between a state where prompts queue for full steps
    # and one where they share steps, and reported whichever its last pass gave: on the A100 the time per output
    # token went from 500 ms at 248 requests to 2,242 ms at 249.
    d = _d("qwen3-32b", "bf16", Layout(1), accelerator=accelerator, context=132)
    cap = admitted(d, 132)
    last = None
    for c in range(cap - 12, cap + 1):
        x = predict(d, c, 128, 4)
        if last is not None:
            assert x.tpot_s == pytest.approx(last.tpot_s, rel=0.05), c
            assert x.output_tokens_per_s == pytest.approx(last.output_tokens_per_s, rel=0.05), c
        last = x


def _experts(d: Deployment, tokens: int):
    return next(o for o in step(d, "prefill", tokens, 0.0).ops if o.name == "experts")


def test_experts_arithmetic_runs_at_the_measured_fused_moe_share():
    # DeepSeek-V3 FP8 on 8 x H200 at TP 8, a 16,384-token prefill chunk: one GPU's experts do
    # 2 x 16,384 tokens x top-8 x (3 x 7,168 x 2,048) / 8 = 1.4431e12 FLOPs per MoE layer. At the measured
    # fused-MoE share (data/efficiencies.yaml h200-sxm-moe-compute-fp8: 308.0 of 1,979 TFLOP/s, the engines'
    # median; sglang's Triton kernel took 3.65 ms here) that is 1.4431e12 / 308.0e12 = 4.685 ms, where the dense
    # GEMM share would give far less; the weight stream's time is the same either way.
    d = _d("deepseek-v3", "fp8", Layout(8), accelerator="h200-sxm", context=16384)
    experts = _experts(d, 16384)
    flops = 2 * 16384 * 8 * 3 * 7168 * 2048 / 8
    assert experts.flops == pytest.approx(flops) == pytest.approx(1.4431e12, rel=1e-4)
    assert experts.compute_s == pytest.approx(flops / 308.0e12, rel=1e-9) == pytest.approx(4.685e-3, rel=1e-3)
    dense = TM.chip("h200-sxm").gemm_for("fp8").compute
    assert experts.compute_s > 3 * flops / (1979e12 * dense)
    # a format the fused-MoE tables do not cover keeps the dense GEMM's share
    assert TM.chip("h200-sxm").moe_for("fp4") == pytest.approx(TM.chip("h200-sxm").gemm_for("fp4").compute)


def test_experts_arithmetic_ramps_with_the_rows_each_expert_sees():
    # DeepSeek-V3 FP8 on 8 x B200 at TP 8, a 1,024-token prefill: every expert is touched (1 - (1 - 8/256)^1,024 = 1),
    # each by 1,024 x 8 / 256 = 32 rows, where the grouped GEMMs reach 0.37 of their large-batch share (data/
    # efficiencies.yaml b200-moe-compute-fp8 by_rows, the engines' median in AIConfigurator's tables, scripts/
    # derive_moe_ramp.py): 2 x 1,024 x 8 x 3 x 7,168 x 2,048 / 8 = 9.0194e10 FLOPs at 591.4 x 0.37 TFLOP/s = 0.412 ms,
    # more than its weight stream takes, so the layer is bound by its arithmetic (SGLang's table: 0.397 ms at 1,024
    # tokens). At 48 rows the ramp lies between its points at 32 (0.37) and 64 (0.62), a power of the rows:
    # 0.37 x 1.5^log2(0.62 / 0.37).
    b200 = TM.chip("b200")
    points = b200.moe_ramp_for("fp8")
    assert points[2] == (32.0, 0.37) and points[-1] == (512.0, 1.0)
    assert ramp(points, 48) == pytest.approx(0.37 * 1.5 ** math.log2(0.62 / 0.37))
    assert ramp(points, 2) == 0.14 and ramp(points, 4096) == 1.0 and ramp((), 32) == 1.0
    d = _d("deepseek-v3", "fp8", Layout(8), accelerator="b200", context=1024)
    experts = _experts(d, 1024)
    flops = 2 * 1024 * 8 * 3 * 7168 * 2048 / 8
    assert experts.flops == pytest.approx(flops) == pytest.approx(9.0194e10, rel=1e-4)
    assert experts.compute_s == pytest.approx(flops / (591.4e12 * 0.37), rel=1e-9)
    assert experts.compute_s == pytest.approx(0.412e-3, rel=2e-3) and experts.compute_s > experts.memory_s
    # a decode step of 64 sequences (2.3 rows each) is bound by its weight stream: the ramp's first point, 0.14,
    # leaves its arithmetic below the stream, and the step is what it was without a ramp
    experts = next(o for o in step(d, "decode", 64, 2000.0).ops if o.name == "experts")
    assert experts.compute_s == pytest.approx(experts.flops / (591.4e12 * 0.14), rel=1e-9)
    assert experts.compute_s < experts.memory_s
    # whole experts ramp on their own curve; a chip without a measured ramp keeps its share at any rows
    assert TM.chip("h200-sxm").moe_ramp_for("fp8", whole=True)[0] == (8.0, 0.11)
    assert TM.chip("mi300x").moe_ramp_for("fp8") == ()
    # in FP4 the experts take FP4 kernels' own measured share and ramp (b200-moe-compute-fp4: 1,212.8 TFLOP/s, 0.31
    # at 32 rows), not the dense FP4 GEMM's share they took before those entries: the same prefill in NVFP4 computes
    # its 9.0194e10 FLOPs at 1,212.8 x 0.31 TFLOP/s = 0.240 ms
    assert TM.chip("b200").moe_ramp_for("fp4")[2] == (32.0, 0.31)
    fp4 = _experts(_d("deepseek-v3", "nvfp4", Layout(8), accelerator="b200", context=1024), 1024)
    assert fp4.flops == pytest.approx(flops)
    assert fp4.compute_s == pytest.approx(flops / (1212.8e12 * 0.31), rel=1e-9) == pytest.approx(0.240e-3, rel=2e-3)
    dense_fp4 = TM.chip("b200").gemm_for("fp4").compute * 9000e12
    assert fp4.compute_s > 3 * flops / dense_fp4


def test_whole_experts_run_at_their_own_measured_share_and_unmeasured_chips_at_the_dense_one():
    # the same 16,384-token chunk of DeepSeek-V3 FP8 with whole experts on each GPU. Under EP 8 each of 8 H200s
    # holds 32 whole experts and serves an 8th of the 16,384 x 8 assignments: 2 x 16,384 x 8 / 8 x 3 x 7,168 x
    # 2,048 = 1.4431e12 FLOPs, the TP slice's count, at the whole-expert share (data/efficiencies.yaml
    # h200-sxm-moe-compute-whole-fp8: 601.6 of 1,979 TFLOP/s): 1.4431e12 / 601.6e12 = 2.399 ms, about half the
    # TP slices' 4.685 ms (whole 2,048-column experts fill the tiles better)
    def dense_s(d: Deployment, flops: float) -> float:
        chip = d.setting.chip
        return flops / (chip.dense_flops["fp8"] * TM.chip(chip.id).gemm_for("fp8").compute
                        * TM.kernel_fraction(chip.vendor))

    ep = _d("deepseek-v3", "fp8", Layout(8, ep=8), accelerator="h200-sxm", context=16384)
    experts = _experts(ep, 16384)
    assert experts.flops == pytest.approx(1.4431e12, rel=1e-4)
    assert experts.compute_s == pytest.approx(experts.flops / 601.6e12, rel=1e-9) == pytest.approx(2.399e-3, rel=1e-3)
    assert experts.compute_s > 2 * dense_s(ep, experts.flops)
    # MI300X has no fused-MoE measurement (and no default): its experts keep the dense share, sliced or whole (at
    # the AMD kernel fraction every AMD kernel runs at)
    assert dict(TM.chip("mi300x").moe) == {} and dict(TM.chip("mi300x").moe_whole) == {}
    gb = _d("deepseek-v3", "fp8", Layout(8), accelerator="mi300x", context=16384)
    experts = _experts(gb, 16384)
    assert experts.compute_s == pytest.approx(dense_s(gb, experts.flops), rel=1e-9)
    # one GPU runs whole experts: gpt-oss-20b in FP8 on one H200 takes the whole-expert 601.6 TFLOP/s, read at
    # DeepSeek's 2,048 columns, scaled to its own 2,880 by the chip's curve (h200-sxm-moe-compute-fp8 by_columns:
    # 0.278 at 2,048, 0.358 at 4,096, so 0.278 + 0.080 x log2(2,880 / 2,048)); at TP 2 its experts are sliced to
    # 1,440 columns and take the slices' 308.0 TFLOP/s, read at 256 columns (0.143), scaled to 0.241 + 0.037 x
    # log2(1,440 / 1,024)
    one = _d("gpt-oss-20b", "fp8", Layout(1), accelerator="h200-sxm", context=16384)
    experts = _experts(one, 16384)
    whole = (0.278 + 0.080 * math.log2(2880 / 2048)) / 0.278
    assert experts.compute_s == pytest.approx(experts.flops / (601.6e12 * whole), rel=1e-6)
    two = _d("gpt-oss-20b", "fp8", Layout(2), accelerator="h200-sxm", context=16384)
    sliced = _experts(two, 16384)
    assert sliced.flops == pytest.approx(experts.flops / 2)
    thin = (0.241 + 0.037 * math.log2(1440 / 1024)) / 0.143
    assert sliced.compute_s == pytest.approx(sliced.flops / (308.0e12 * thin), rel=1e-6)


def test_an_fp16_moe_on_the_a100_runs_its_experts_at_the_measured_bf16_grouped_kernels_share():
    # Mixtral 8x7B in FP16 on 4 x A100 at TP 4, a 16,384-token prefill chunk: one GPU's experts do 2 x 16,384 tokens x
    # top-2 x (3 x 4,096 x 14,336) / 4 = 2.8862e12 FLOPs per MoE layer. The A100's fused-MoE entry is BF16 (the tables
    # time BF16; FP16 runs the same kernels at the same 312 TFLOP/s) and is read at 512 columns (0.303); Mixtral's
    # experts sliced four ways are 3,584 columns, on the curve between 2,048 (0.419) and 4,096 (0.542):
    # 94.4 TFLOP/s x (0.419 + 0.123 x log2(3,584 / 2,048)) / 0.303 = 94.4 x 0.5183 / 0.303 = 161.5 TFLOP/s, 17.87 ms,
    # not the dense BF16 GEMM's 0.84 (a100-80gb-sxm-gemm-compute-bf16), which the layer took before the entry
    a100 = TM.chip("a100-80gb-sxm")
    assert a100.moe_for("fp16") == a100.moe_for("bf16") == pytest.approx(94.4 / 312)
    assert a100.moe_columns_for("fp16")[0] == 512.0
    # so does the experts' weight stream where a chip measures it in BF16 (the H100's)
    h100 = TM.chip("h100-sxm")
    assert h100.moe_stream_for("fp16").weights == h100.moe_stream_for("bf16").weights != h100.gemm_for("bf16").weights
    d = _d("mixtral-8x7b", "fp16", Layout(4), accelerator="a100-80gb-sxm", context=16384)
    experts = _experts(d, 16384)
    flops = 2 * 16384 * 2 * 3 * 4096 * 14336 / 4
    assert experts.flops == pytest.approx(flops) == pytest.approx(2.8862e12, rel=1e-4)
    share = 0.419 + (0.542 - 0.419) * math.log2(3584 / 2048)
    assert share == pytest.approx(0.5183, abs=1e-4)
    assert experts.compute_s == pytest.approx(flops / (94.4e12 * share / 0.303), rel=1e-9)
    assert experts.compute_s == pytest.approx(17.87e-3, rel=1e-3)
    assert experts.compute_s > 1.5 * flops / (312e12 * a100.gemm_for("bf16").compute)


def test_tensor_parallel_logits_are_gathered_in_bf16():
    # the LM head's column slices are gathered in the model's 16-bit dtype (vLLM's LogitsProcessor._gather_logits,
    # SGLang's without --enable-fp32-lm-head, TensorRT-LLM's LMHead gather_output in the checkpoint's dtype; each
    # casts to FP32 after): Llama 3.1 70B at TP 4, 64 decoding sequences, 64 x 128,256 x 2 bytes of which each GPU's
    # three quarters cross the links
    d = _d("llama-3.1-70b", "bf16", Layout(4), concurrency=64)
    gather = next(o for o in step(d, "decode", 64, 2000.0).ops if o.name == "logits gather")
    assert gather.bytes == pytest.approx(3 / 4 * 64 * 128256 * 2)


def test_experts_stream_their_weights_at_the_measured_fused_moe_share():
    # DeepSeek-V3 FP8 on 8 x B200 at TP 8, one decoding sequence: its token takes 8 of 256 experts, so the step
    # touches 1 - (1 - 8/256) = 3.125 % of them, 8 experts, each seeing one row. One GPU streams its slice of them:
    # 8 x 3 x 7,168 x 2,048 / 8 x 1 byte = 44.04 MB per MoE layer, at the fused-MoE weight stream's share at one
    # row (data/efficiencies.yaml b200-moe-weights-fp8: 0.87 of 7.7 TB/s, the engines' median), not the dense FP8
    # GEMM's 0.71 (b200-gemm-weights-fp8): 44.04e6 / (7.7e12 x 0.87) = 6.57 us, and the activations around it
    # (8 assignments x (2 x 7,168 + 2 x 2,048 / 8) x 2 bytes, each expert's slice of 256 columns; and the token's
    # quantization to FP8, 7,168 x (2 + 1) bytes) at the streaming share.
    b200 = TM.chip("b200")
    assert b200.moe_stream_for("fp8").weights[0] == (1.0, 0.87)
    assert b200.gemm_for("fp8").weights[0] == (1, 0.71)
    d = _d("deepseek-v3", "fp8", Layout(8), accelerator="b200")
    experts = next(o for o in step(d, "decode", 1, 2000.0).ops if o.name == "experts")
    weights = 8 * 3 * 7168 * 2048 / 8
    assert experts.weights == pytest.approx(weights, rel=1e-9) == pytest.approx(44.04e6, rel=1e-3)
    act = 8 * (2 * 7168 + 2 * 2048 / 8) * 2 + 7168 * 3
    stream = 7.7e12 * b200.hbm
    assert experts.memory_s == pytest.approx(weights / (7.7e12 * 0.87) + act / stream, rel=1e-9)
    assert weights / (7.7e12 * 0.87) == pytest.approx(6.57e-6, rel=1e-3)
    # at 64 sequences 87 % of the experts are touched, each by 64 x 8 / (256 x 0.87) = 2.3 rows: the curve there lies
    # between its points at 2 rows (0.88) and 4 (0.87), but a share is never above its share at fewer rows, so the
    # experts stream at one row's 0.87 (GemmEfficiency.stream_share)
    experts = next(o for o in step(d, "decode", 64, 2000.0).ops if o.name == "experts")
    touched = 1 - (1 - 8 / 256) ** 64
    rows = 64 * 8 / (256 * touched)
    curve = b200.moe_stream_for("fp8")
    assert rows == pytest.approx(2.3, abs=0.01) and 0.87 < curve.weight_fraction(rows) < 0.88
    share = curve.stream_share(rows)
    assert share == 0.87
    weights = 256 * touched * 3 * 7168 * 2048 / 8
    act = 64 * 8 * (2 * 7168 + 2 * 2048 / 8) * 2 + 64 * 7168 * 3
    assert experts.memory_s == pytest.approx(weights / (7.7e12 * share) + act / stream, rel=1e-9)
    # MI300X has no fused-MoE measurement: its experts stream at the dense GEMM's share (AMD's fraction applied)
    mi = TM.chip("mi300x")
    assert dict(mi.moe_weights) == {}
    assert mi.moe_stream_for("fp8") == mi.gemm_for("fp8")
    # H200 streams its FP4 experts at the dense share too: the tables hold no FP4 kernel on Hopper
    assert TM.chip("h200-sxm").moe_stream_for("fp4") == TM.chip("h200-sxm").gemm_for("fp4")


def test_a_wave_without_mixed_steps_runs_the_prompts_first_and_the_decoding_waits():
    # SGLang (mixed_steps false): the same three prompts of 100 tokens and a budget of 250 as the vLLM wave above.
    # Step 1: 250 prompt tokens, prompts 0 and 1 whole and half of prompt 2; step 2: prompt 2's last 50 alone, the two
    # finished prompts getting no token from it; then all three decode their two remaining tokens together, at 101
    # and 102 tokens (101.5 on average)
    _, d, p = _three(103, 250, mixed_steps=False)
    w = wave(d, 3, 100, 3, prep=p)
    t1 = mixed_step(d, 0, 0.0, 250, 0, finishing=2, prep=p, prompts=3).total_s
    t2 = mixed_step(d, 0, 0.0, 50, 50, finishing=1, prep=p).total_s
    t34 = 2 * mixed_step(d, 3, 101.5, 0, 0, prep=p).total_s
    T1, T2, T4 = t1, t1 + t2, t1 + t2 + t34
    assert w.prefill_steps == 2
    assert w.ttft_s == pytest.approx((2 * T1 + T2) / 3)
    assert w.tpot_s == pytest.approx((2 * (T4 - T1) / 2 + (T4 - T2) / 2) / 3)
    assert w.total_s == pytest.approx(T4)


def test_without_mixed_steps_a_prompt_costs_the_decoding_its_whole_step():
    # Llama 3.1 8B FP8 on one H100, 8 requests of 6,000 + 200 tokens kept in flight: a prompt fills more than half of
    # the 8,192-token budget, so each runs in steps of its own (k = 1). Under vLLM the decoding sequences ride in the
    # prompt's steps and lose only what it adds to them; under SGLang (mixed_steps false) the prompt's steps hold no
    # decoding sequence, and each costs the decoding ones all of its time: with L the lifetime and b the requests in
    # flight, TPOT = t_decode / (1 - (b / L) x t_prompt x (b - 1) / b)
    kw = dict(accelerator="h100-sxm", concurrency=8, context_tokens=6200)
    mixed = deploy(setting(ENG, "llama-3.1-8b", "fp8", "reference", **kw), Layout(1))
    alone = deploy(setting(ENG, "llama-3.1-8b", "fp8", "reference", mixed_steps=False, **kw), Layout(1))
    assert mixed.setting.memory_policy.mixed_steps and not alone.setting.memory_policy.mixed_steps
    pm, pa = predict(mixed, 8, 6000, 200), predict(alone, 8, 6000, 200)
    assert pm.prefill.batch.decode_seqs > 0 and pa.prefill.batch.decode_seqs == 0
    b = pa.in_flight
    life = b * 200 / pa.output_tokens_per_s
    assert pa.tpot_s == pytest.approx(pa.decode.total_s / (1 - b / life * pa.prefill_s * (b - 1) / b), rel=1e-6)
    # the prompt alone is quicker than beside the decoding, and the decoding slower for waiting on it
    assert pa.prefill_s < pm.prefill_s and pa.tpot_s > pm.tpot_s
    # SGLang's own policy says so, and vLLM's and TensorRT-LLM's mix
    pols = ENG.memory_policies
    assert not pols["sglang-default"].mixed_steps
    assert all(pols[k].mixed_steps for k in ("vllm-default", "trtllm-bench", "trtllm-serve", "trtllm-serve-plain"))


def test_wide_experts_compute_at_the_share_their_columns_reach():
    # the share by columns per GPU (data/efficiencies.yaml h100-sxm-moe-compute-fp8 by_columns, the engines' median
    # over every gated shape of AIConfigurator's tables): DeepSeek-V3's experts at TP 8 hold 2,048 / 8 = 256 columns
    # a GPU, where the entry's 288.4 TFLOP/s was read, so nothing moves for them; Mixtral 8x7B's at TP 2 hold
    # 14,336 / 2 = 7,168, between the curve's 4,096 (0.313) and 8,192 (0.333) columns: 0.313 + 0.020 x
    # log2(7,168 / 4,096) = 0.32915, over the 0.134 at 256 columns, 2.456 times the thin slices' share
    eff = TM.chip("h100-sxm")
    ref, curve = eff.moe_columns_for("fp8")
    assert ref == 256 and curve[1] == (256.0, 0.134)
    assert columns_factor(ref, curve, 256) == 1.0 and columns_factor(1.0, (), 9999) == 1.0
    at_7168 = 0.313 + 0.020 * math.log2(7168 / 4096)
    assert columns_factor(ref, curve, 7168) == pytest.approx(at_7168 / 0.134)
    assert columns_factor(ref, curve, 64) == pytest.approx(0.083 / 0.134)  # held at the ends
    assert columns_factor(ref, curve, 65536) == pytest.approx(0.335 / 0.134)
    # the DeepSeek-V3 prefill at TP 8 (on H200s, which hold it) computes its experts as before: the factor is 1 at
    # the entry's own shape
    ds = _experts(_d("deepseek-v3", "fp8", Layout(8), accelerator="h200-sxm", context=16384), 16384)
    assert ds.compute_s == pytest.approx(ds.flops / 308.0e12, rel=1e-9)
    # Mixtral at TP 2, a 16,384-token chunk: 8,192 rows for each of its 8 experts (past the rows' ramp), at
    # 288.4 TFLOP/s x 2.456
    mx = _experts(_d("mixtral-8x7b", "fp8", Layout(2), context=16384), 16384)
    assert mx.flops == pytest.approx(2 * 16384 * 2 * 3 * 4096 * 14336 / 2)
    assert mx.compute_s == pytest.approx(mx.flops / (288.4e12 * at_7168 / 0.134), rel=1e-6)
    # whole experts (one GPU) read their own entry at its own 2,048 columns: Mixtral's 14,336 on one H100 take
    # 522.5 TFLOP/s (h100-sxm-moe-compute-whole-fp8) x curve(14,336) / curve(2,048)
    ref_w, curve_w = eff.moe_columns_for("fp8", whole=True)
    assert ref_w == 2048 and curve_w == curve  # one curve per chip and format, each entry read at its own columns
    one = _experts(_d("mixtral-8x7b", "fp8", Layout(1), context=16384), 16384)
    at_14336 = 0.333 + 0.002 * math.log2(14336 / 8192)
    assert one.compute_s == pytest.approx(one.flops / (522.5e12 * at_14336 / 0.267), rel=1e-6)


def test_pipeline_stages_take_prompts_in_lanes():
    # Llama 3.1 70B in FP8 on four H100s, TP 4, against eight, TP 4 x PP 2, at 64 requests of a 4,096-token prompt
    # and 8 output tokens: the prompts' steps are nearly all of the work. Each stage of two holds half the layers,
    # and with a micro-batch in each stage two prompts are computed at once, so the throughput about doubles;
    # a prompt's own steps still pass both stages in turn, so its prefill time does not halve
    one = _d("llama-3.1-70b", "fp8", Layout(4), context=4104, concurrency=64)
    two = _d("llama-3.1-70b", "fp8", Layout(4, 2), context=4104, concurrency=64)
    p1, p2 = predict(one, 64, 4096, 8), predict(two, 64, 4096, 8)
    assert p2.output_tokens_per_s / p1.output_tokens_per_s == pytest.approx(2.0, rel=0.15)
    assert p2.prefill_s == pytest.approx(p1.prefill_s, rel=0.15)
    # decoding alone (short prompts, long outputs, the same sequences in flight): each sequence's step still passes
    # both stages, on half the sequences a micro-batch, so the per-token time barely moves while both stages work
    d1, d2 = predict(one, 64, 16, 2048), predict(two, 64, 16, 2048)
    assert d2.tpot_s == pytest.approx(d1.tpot_s, rel=0.25)


def _trt(layout: Layout, policy: str = "trtllm-bench", precision: str = "bf16", accelerator: str = "h100-sxm"
         ) -> Deployment:
    return deploy(setting(ENG, "llama-3.1-8b", precision, "reference", accelerator=accelerator, context_tokens=2000,
                          memory_policy=policy, max_num_seqs=4096, max_num_batched_tokens=8192), layout)


def test_a_python_executor_bounds_a_step_by_its_work_per_request():
    # TensorRT-LLM's PyTorch executor spends 29.4 us of host time on each request of a step (NVIDIA/TensorRT-LLM#10273:
    # 45.11 ms a step at 1,536 requests a rank), overlapped with the GPU's work (its overlap scheduler). Llama 3.1 8B in
    # FP8 on one B200 decoding 4,096 sequences of 100 tokens: the GPU's step (65 TFLOP, 8 GB of weights and 27 GB of
    # KV cache) is shorter than 4,096 x 29.4 us = 120.4 ms, so the step takes that long, the excess shown as the host's
    # time
    pol = ENG.memory_policies["trtllm-bench"]
    assert pol.host_per_request == pytest.approx(29.4e-6)
    d = _trt(Layout(1), precision="fp8", accelerator="b200")
    s = step(d, "decode", 4096, 100)
    assert s.total_s - s.host_s < 0.06
    assert s.total_s == pytest.approx(4096 * 29.4e-6)
    assert sum(s.breakdown.values()) == pytest.approx(s.total_s)
    # a batch of 64: 1.9 ms of host work hides behind the GPU's step, which keeps the time model's host time per step
    small = step(d, "decode", 64, 100)
    assert small.host_s == pytest.approx(TM.step_overhead_s) and small.total_s > 64 * 29.4e-6
    # the C++ executor (a TensorRT engine) is charged no work per request: only the GPU's and the step's
    engine = step(_trt(Layout(1), "trtllm-bench-engine", "fp8", "b200"), "decode", 4096, 100)
    assert engine.host_s == pytest.approx(TM.step_overhead_s) and engine.total_s < s.total_s


def test_each_pipeline_stage_adds_its_host_time_under_trtllm_bench():
    # Before NVIDIA/TensorRT-LLM#10349 every pipeline rank ran the executor loop for each micro-batch in turn, waiting on
    # the previous rank's sampled tokens: each of four stages adds the step's host time (the time model's per step and
    # 29.4 us for each of the micro-batch's sequences) to its own work. 400 sequences in flight on TP1 x PP4 make
    # micro-batches of 100: 4 x (step overhead + 100 x 29.4 us)
    d = _trt(Layout(1, 4))
    s = mixed_step(d, 400, 2000, 0, 0)
    assert s.batch.decode_seqs == 100
    assert s.host_s == pytest.approx(4 * (TM.step_overhead_s + 100 * 29.4e-6))
    # trtllm-serve (a 2026 release, its pipeline loop non-blocking) pays the host's time once per micro-batch
    serve = mixed_step(_trt(Layout(1, 4), "trtllm-serve"), 400, 2000, 0, 0)
    assert serve.host_s == pytest.approx(TM.step_overhead_s)


def test_a_small_compute_bound_gemm_reaches_less_of_the_peak():
    # AIConfigurator's A100 BF16 GEMM tables (data/efficiencies.yaml a100-80gb-sxm-gemm-compute-bf16, by_gflop, the
    # engines' median, scripts/derive_gemm_ramp.py): a compute-bound product of 4.3 GFLOP reaches 0.66 of the 0.84 a
    # large one does, 17.2 GFLOP 0.79. Llama 3.1 70B at TP 8 decoding 615 sequences: its output projection, 615 rows
    # through an 8,192 x 1,024 slice, is 2 x 615 x 8,192 x 1,024 = 10.32 GFLOP, between those points: a power of the
    # FLOPs, 0.66 x (10.32 / 4.3)^log4(0.79 / 0.66) = 0.739 of the share, so 10.32e9 / (312e12 x 0.840 x 0.739) =
    # 53.3 us, where the large-batch share alone gives 39.4 us
    g = TM.chip("a100-80gb-sxm").gemm_for("bf16")
    assert g.compute_ramp[:2] == ((4.3e9, 0.66), (17.2e9, 0.79)) and g.compute_ramp[-1][1] == 1.0
    f = 2 * 615 * 8192 * 1024
    share = 0.66 * (f / 4.3e9) ** math.log(0.79 / 0.66, 4)
    assert g.compute_at(f) == pytest.approx(g.compute * share) and share == pytest.approx(0.739, abs=1e-3)
    d = _d("llama-3.1-70b", "bf16", Layout(8), accelerator="a100-80gb-sxm", context=1200)
    o = next(o for o in step(d, "decode", 615, 1200.0).ops if o.name == "o")
    assert o.flops == pytest.approx(f)
    assert o.compute_s == pytest.approx(f / (312e12 * g.compute * share), rel=1e-9)
    assert o.compute_s == pytest.approx(53.3e-6, rel=2e-3) and o.compute_s > o.memory_s
    # beyond the last point (1,099.5 GFLOP) the large-batch share; a chip and format whose every bin reaches it (H100
    # BF16) has no ramp, and a product of any size keeps the share
    assert g.compute_at(4e12) == g.compute
    h100 = TM.chip("h100-sxm").gemm_for("bf16")
    assert h100.compute_ramp == () and h100.compute_at(1e9) == h100.compute


def test_tensorrt_llm_prices_its_experts_at_its_own_cutlass_kernel():
    # Llama 4 Scout in NVFP4 on one B200, a 16,384-token prefill: 16 experts of 8,192 columns whole on the GPU, top-1,
    # each expert sees 16,384 / 16 = 1,024 rows (past every ramp). FLOPs 2 x 16,384 x 3 x 5,120 x 8,192 = 4.123e12.
    # The engines' median (data/efficiencies.yaml b200-moe-compute-whole-fp4: 3,218.4 of 9,000 TFLOP/s; its columns
    # curve ends at 2,048, so 8,192 columns keep it) gives 1.281 ms. TensorRT-LLM's PyTorch backend runs its CUTLASS
    # kernel (data/policies.yaml trtllm-bench, moe_kernel cutlass): b200-moe-compute-whole-fp4-cutlass, 1,395.3
    # TFLOP/s at 2,048 columns, its own curve 0.209 there and 0.233 at 8,192: 1,395.3 x 0.233 / 0.209 = 1,555.5
    # TFLOP/s, 2.651 ms, twice as long: what the v1.0 overview measured (its Scout runs on one B200 were over-predicted
    # by a median 41 % at the median's share).
    flops = 2 * 16384 * 3 * 5120 * 8192
    assert flops == pytest.approx(4.123e12, rel=1e-3)

    def experts(policy: str | None, kernel: str | None = None) -> float:
        st = setting(ENG, "llama-4-scout", "nvfp4", "reference", accelerator="b200", concurrency=1,
                     context_tokens=16384, memory_policy=policy, moe_kernel=kernel)
        return _experts(deploy(st, Layout(1)), 16384).compute_s

    median, cutlass = experts(None), experts("trtllm-bench")
    assert median == pytest.approx(flops / 3218.4e12, rel=1e-3) == pytest.approx(1.281e-3, rel=1e-3)
    assert cutlass == pytest.approx(flops / (1395.3e12 * 0.233 / 0.209), rel=1e-3) == pytest.approx(2.651e-3, rel=1e-3)
    # a command that names a kernel whose arithmetic the chip has no figures of (InferenceX's MOE_BACKEND TRTLLM: only
    # its weight stream and fixed cost are measured apart) computes at the median's share
    assert experts("trtllm-bench", "trtllm-gen") == pytest.approx(median, rel=1e-9)
    assert TM.chip("b200").moe_for("fp4", whole=True, kernel="cutlass") == pytest.approx(1395.3 / 9000)
    assert TM.chip("b200").moe_for("fp8", whole=True, kernel="cutlass") == TM.chip("b200").moe_for("fp8", whole=True)


def test_sglang_streams_its_triton_experts_with_their_own_fixed_cost():
    # Qwen3-235B-A22B in BF16 on 8 x B200 at TP 8, one sequence decoding: its 8 experts of 128 each hold 1,536 / 8 = 192
    # columns on a GPU, 8 x 3 x 4,096 x 192 x 2 bytes = 37.75 MB a layer, each touched expert seeing one row. SGLang
    # 0.5.6 runs them with its Triton kernel (data/measurements.yaml, the SGLang cookbook's rows, moe_kernel triton):
    # data/efficiencies.yaml b200-moe-weights-bf16-triton, a fixed 24.3 us a layer and 0.77 of the 7.7 TB/s datasheet
    # at one row, where the median entry (FlashInfer's TRT-LLM kernels, 0.96) is charged the time model's six kernels
    # at 2.7 us, 16.2 us: 24.3 us + 6.4 us of weights a layer against 16.2 us + 5.1 us.
    weights = 8 * 3 * 4096 * 192 * 2
    assert weights == pytest.approx(37.75e6, rel=1e-3)

    def experts(kernel: str | None) -> Op:
        st = setting(ENG, "qwen3-235b-a22b", "bf16", "reference", accelerator="b200", concurrency=1, context_tokens=2000,
                     memory_policy="sglang-default", moe_kernel=kernel)
        return next(o for o in step(deploy(st, Layout(8)), "decode", 1, 1000.0).ops if o.name == "experts")

    triton, median = experts("triton"), experts(None)
    assert triton.launch_s == pytest.approx(24.3e-6)
    assert median.launch_s == pytest.approx(6 * 2.7e-6)
    act = 8 * (2 * 4096 + 2 * 1536 / 8) * 2
    stream = 7.7e12 * TM.chip("b200").hbm
    assert triton.memory_s == pytest.approx(weights / (7.7e12 * 0.77) + act / stream, rel=1e-3)
    assert median.memory_s == pytest.approx(weights / (7.7e12 * 0.96) + act / stream, rel=1e-3)
    # its arithmetic at its own share: 16.9 % of the BF16 peak on 256-column slices against the median's 29.8 %
    assert TM.chip("b200").moe_for("bf16", kernel="triton") == pytest.approx(379.9 / 2250)
    assert TM.chip("h100-sxm").moe_fixed_for("bf16", "triton") is None


def test_flashinfer_trtllm_experts_pay_their_own_fixed_cost_by_hidden_size():
    # One sequence decoding on 8 x B200 at TP 8 under SGLang's flashinfer_trtllm runner (moe_kernel trtllm-gen, as the
    # InferenceX DeepSeek-R1 rows run it). data/efficiencies.yaml b200-moe-weights-fp8-trtllm-gen: a fixed 20.9 us a
    # layer, times 1.42 at DeepSeek's hidden 7,168 and 1.10 at Qwen3's 4,096 (fixed_by_hidden), and 0.90 of the 7.7 TB/s
    # datasheet at one row; -fp4-: 15.9 us, 1.00 at 7,168, 0.95. The time model had charged both formats its seven
    # kernels at 2.7 us, 18.9 us, and so found FP4's step little faster than FP8's. The layer as AIConfigurator timed it
    # (its B200 SGLang 0.5.14 moe_perf table, kernel sglang_flashinfer_trtllm_moe, one token, moe_tp 8, balanced
    # routing): DeepSeek-V3's shape 36.13 us in fp8_block and 20.55 in nvfp4, Qwen3-235B's 25.51 in fp8_block.
    def experts(model: str, precision: str, kernel: str | None) -> Op:
        st = setting(ENG, model, precision, "reference", accelerator="b200", concurrency=1, context_tokens=2000,
                     memory_policy="sglang-default", moe_kernel=kernel)
        return next(o for o in step(deploy(st, Layout(8)), "decode", 1, 1000.0).ops if o.name == "experts")

    def layer(o: Op) -> float:
        return o.launch_s + max(o.compute_s, o.memory_s)

    fp8, fp4, qwen = (experts("deepseek-r1", "fp8", "trtllm-gen"), experts("deepseek-r1", "nvfp4", "trtllm-gen"),
                      experts("qwen3-235b-a22b", "fp8", "trtllm-gen"))
    assert fp8.launch_s == pytest.approx(20.9e-6 * 1.42) and qwen.launch_s == pytest.approx(20.9e-6 * 1.10)
    assert fp4.launch_s == pytest.approx(15.9e-6)
    assert fp8.memory_s > fp8.weights / (7.7e12 * 0.90) and fp4.weights == pytest.approx(fp8.weights * 0.5625)
    assert layer(fp8) == pytest.approx(36.13e-6, rel=0.03)
    assert layer(fp4) == pytest.approx(20.55e-6, rel=0.07)
    assert layer(qwen) == pytest.approx(25.51e-6, rel=0.03)
    # the gap between the formats, a layer: 16.8 us where the count of kernels left 3.1 (the weights alone)
    plain8, plain4 = experts("deepseek-r1", "fp8", None), experts("deepseek-r1", "nvfp4", None)
    assert plain8.launch_s == plain4.launch_s == pytest.approx(7 * 2.7e-6)
    assert layer(fp8) - layer(fp4) == pytest.approx(16.75e-6, rel=0.02)
    assert layer(plain8) - layer(plain4) == pytest.approx(3.12e-6, rel=0.03)
    assert TM.chip("h200-sxm").moe_fixed_for("fp8", "trtllm-gen", 7168) is None  # not measured off Blackwell
    # between the curve's sizes it is read straight (Qwen3-30B's hidden 2,048 is a point; 2,560 halfway to 3,072's
    # 1.03), beyond its ends held, and a model of no stated size takes the entry's plain figure
    b200 = TM.chip("b200")
    assert b200.moe_fixed_for("fp8", "trtllm-gen", 2048) == pytest.approx(20.9e-6 * 0.84)
    assert b200.moe_fixed_for("fp8", "trtllm-gen", 2560) == pytest.approx(20.9e-6 * (0.84 + 1.03) / 2)
    assert b200.moe_fixed_for("fp8", "trtllm-gen", 1024) == pytest.approx(20.9e-6 * 0.84)
    assert b200.moe_fixed_for("fp8", "trtllm-gen", 16384) == pytest.approx(20.9e-6 * 1.42)
    assert b200.moe_fixed_for("fp8", "trtllm-gen") == pytest.approx(20.9e-6)


def test_vllm_streams_marlin_experts_at_its_int4_timing():
    # gpt-oss-120b as shipped (MXFP4 experts) on 8 x H100 at TP 8, one sequence decoding, under vLLM with Marlin's
    # kernel (VLLM_MXFP4_USE_MARLIN=1, as InferenceX's H100 script runs it; moe_kernel marlin): its 4 experts of 128 each
    # hold 2,880 / 8 = 360 columns on a GPU, 4 x 3 x 2,880 x 360 x 0.53125 bytes (4 bits and an 8-bit scale per 32) =
    # 6.61 MB a layer. data/efficiencies.yaml h100-sxm-moe-weights-fp4-marlin, read from AIConfigurator's INT4 timing of
    # the same kernel (fused_marlin_moe, the weight type an argument) at Kimi K2's shape: a fixed 36.9 us a layer (the
    # median of its one-token points at 8, 16 and 32 ways: 40.35, 40.31 and 45.01 us less 22.7, 11.4 and 5.7 MB of INT4
    # weights in groups of 128 at 3.35 TB/s, 33.6, 36.9 and 43.3 us) and 0.80 of the datasheet at one row, where the
    # engines' median is charged the time model's six kernels at 2.7 us, 16.2 us.
    weights = 4 * 3 * 2880 * 360 * (0.5 + 1 / 32)
    assert weights == pytest.approx(6.61e6, rel=1e-3)
    assert sorted(round(lat - w / 3.35e12 * 1e6, 1) for lat, w in
                  ((40.35, 22.71e6), (40.31, 11.35e6), (45.01, 5.68e6))) == [33.6, 36.9, 43.3]

    def experts(kernel: str | None) -> Op:
        st = setting(ENG, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm", concurrency=1,
                     context_tokens=2000, memory_policy="vllm-default", moe_kernel=kernel)
        return next(o for o in step(deploy(st, Layout(8)), "decode", 1, 1000.0).ops if o.name == "experts")

    marlin, median = experts("marlin"), experts(None)
    assert marlin.launch_s == pytest.approx(36.9e-6) and median.launch_s == pytest.approx(6 * 2.7e-6)
    assert marlin.weights == pytest.approx(weights, rel=1e-3)
    act = 4 * (2 * 2880 + 2 * 2880 / 8) * 2
    stream = 3.35e12 * TM.chip("h100-sxm").hbm
    assert marlin.memory_s == pytest.approx(weights / (3.35e12 * 0.80) + act / stream, rel=1e-3)
    # the layer: 36.9 + 2.5 = 39.4 us where the count of kernels gave 16.2 + 2.4 = 18.6; an INT4 layer of Kimi K2's at 8
    # ways (22.7 MB) priced so is 36.9 + 8.5 = 45.4 us against the 40.35 the table measured
    assert marlin.launch_s + marlin.memory_s == pytest.approx(39.4e-6, rel=0.01)
    assert median.launch_s + median.memory_s == pytest.approx(18.6e-6, rel=0.01)
    assert TM.chip("h100-sxm").measures_kernel("fp4", "marlin") and not TM.chip("b200").measures_kernel("fp4", "marlin")


def test_bf16_experts_run_at_the_grouped_kernels_share():
    # Qwen3-235B-A22B in BF16 on 8 x B200 at TP 8, an 8,192-token prefill: each GPU holds 1,536 / 8 = 192 columns of
    # each expert, and each of the 128 experts sees 8,192 x 8 / 128 = 512 rows (the ramp's end). The BF16 grouped
    # kernels' share (data/efficiencies.yaml b200-moe-compute-bf16: 670.1 of 2,250 TFLOP/s at 256 columns, by_columns
    # 0.199 at 128 and 0.298 at 256) at 192 columns: 0.199 + 0.099 x log2(1.5) = 0.2569 of the peak, 0.862 of the
    # entry's; 2 x 8,192 x 8 x 3 x 4,096 x 1,536 / 8 = 3.092e11 FLOPs at 670.1 x 0.862 TFLOP/s = 0.535 ms. Before
    # those entries the experts took the dense BF16 GEMM's share, 0.66 of the peak: 0.21 ms.
    b200 = TM.chip("b200")
    assert b200.moe_for("bf16") == pytest.approx(670.1 / 2250)
    d = _d("qwen3-235b-a22b", "bf16", Layout(8), accelerator="b200", context=8192)
    experts = _experts(d, 8192)
    flops = 2 * 8192 * 8 * 3 * 4096 * 1536 / 8
    assert experts.flops == pytest.approx(flops) == pytest.approx(3.092e11, rel=1e-3)
    factor = (0.199 + (0.298 - 0.199) * math.log2(192 / 128)) / 0.298
    assert experts.compute_s == pytest.approx(flops / (670.1e12 * factor), rel=1e-3)
    assert experts.compute_s == pytest.approx(0.535e-3, rel=3e-3)
    assert experts.compute_s > 2 * flops / (2250e12 * b200.gemm_for("bf16").compute)


def test_decode_attention_reads_the_kv_cache_at_its_measured_share_by_context():
    # Llama 3.1 70B in BF16 on 4 x H100 at TP 4, a decode step of 64 sequences each attending 3,000 cached tokens:
    # each GPU holds 8 / 4 = 2 KV heads, 2 (K and V) x 2 x 128 x 2 bytes = 1,024 bytes a token a layer, 64 x 3,000 x
    # 1,024 = 196.6 MB a layer. data/efficiencies.yaml h100-sxm-kv-stream (AIConfigurator's generation-attention
    # tables): 0.89 of the 3.35 TB/s datasheet at 2,048 tokens, 0.91 at 4,096, straight between them on log-log axes:
    # 0.89 x (0.91 / 0.89) ^ log2(3,000 / 2,048) = 0.9010, 65.1 us; BabelStream's 0.887 would give 66.2 us. The op's
    # fixed cost is the kernel's own 9.9 us (the tables' fixed cost per call), not two kernels at 2.7 us.
    h100 = TM.chip("h100-sxm")
    share = 0.89 * (0.91 / 0.89) ** math.log2(3000 / 2048)
    assert h100.kv_share(3000) == pytest.approx(share) == pytest.approx(0.9010, abs=1e-4)
    assert h100.kv_share(64) == 0.64 and h100.kv_share(100_000) == 0.91  # held at the ends
    d = _d("llama-3.1-70b", "bf16", Layout(4), context=3000, concurrency=64)
    att = next(o for o in step(d, "decode", 64, 3000.0).ops if o.name == "attention (decode)")
    kv = 64 * 3000 * 2 * 2 * 128 * 2
    assert kv == pytest.approx(196.6e6, rel=1e-3)
    act = 2 * 64 * 64 / 4 * 128 * 2  # the queries and outputs: 64 query heads of 128 over 4 GPUs
    assert att.memory_s == pytest.approx(kv / (3.35e12 * share) + act / (3.35e12 * h100.hbm), rel=1e-6)
    assert kv / (3.35e12 * share) == pytest.approx(65.1e-6, rel=2e-3)
    assert att.launch_s == pytest.approx(9.9e-6)
    # a prefill's cache and a chip without a measurement keep a streaming kernel's share and the kernels' count
    pre = next(o for o in step(d, "prefill", 2000, 0.0).ops if o.name == "attention (prefill)")
    assert pre.launch_s == pytest.approx(2 * 2.7e-6)
    assert TM.chip("mi300x").kv_stream == () and TM.chip("mi300x").kv_share(3000) == TM.chip("mi300x").hbm


def test_an_fp8_kv_cache_is_read_at_each_engines_own_decode_kernels_share():
    # Llama 3.1 70B in FP8 on 4 x H200 at TP 4, a decode step of 64 sequences each attending 4,096 cached tokens: each
    # GPU holds 2 KV heads, 2 (K and V) x 2 x 128 x 1 byte = 512 bytes a token a layer in an FP8 cache, 64 x 4,096 x
    # 512 = 134.2 MB a layer. AIConfigurator's H200 tables time each engine's decode kernel over an FP8 cache
    # (data/efficiencies.yaml h200-sxm-kv-stream-fp8-vllm and -sglang): at 4,096 tokens vLLM's FlashAttention-3 reads
    # it at 0.62 of the 4.8 TB/s datasheet (45.1 us, fixed cost 13.7 us), SGLang's at 0.51 (54.8 us, 13.1 us), where
    # both read a BF16 cache at about 0.89. TensorRT-LLM's FP8 kernel reaches its BF16 share at this model's 8 query
    # heads a KV head, so it reads the chip's BF16 curve: 0.89, 31.4 us, 9.9 us. Under vLLM the FP8 cache saves 28 %
    # of the BF16 cache's 62.8 us, not half.
    kv = 64 * 4096 * 2 * 2 * 128 * 1
    assert kv == pytest.approx(134.2e6, rel=1e-3)

    def attention(policy: str, cache: str) -> Op:
        st = setting(ENG, "llama-3.1-70b", "fp8", "reference", accelerator="h200-sxm", concurrency=64,
                     context_tokens=4096, kv_precision=cache, memory_policy=policy)
        return next(o for o in step(deploy(st, Layout(4)), "decode", 64, 4096.0).ops if o.name == "attention (decode)")

    act = 2 * 64 * 64 / 4 * 128 * 2 / (4.8e12 * TM.chip("h200-sxm").hbm)  # the queries and outputs
    for policy, share, fixed in (("vllm-default", 0.62, 13.7e-6), ("sglang-default", 0.51, 13.1e-6),
                                 ("trtllm-bench", 0.89, 9.9e-6)):
        att = attention(policy, "fp8")
        assert att.memory_s == pytest.approx(kv / (4.8e12 * share) + act, rel=1e-6), policy
        assert att.launch_s == pytest.approx(fixed), policy
    assert kv / (4.8e12 * 0.62) == pytest.approx(45.1e-6, rel=1e-3)
    assert kv / (4.8e12 * 0.51) == pytest.approx(54.8e-6, rel=1e-3)
    bf16 = attention("vllm-default", "bf16")  # a BF16 cache under vLLM: twice the bytes at the chip's BF16 curve
    assert bf16.memory_s == pytest.approx(2 * kv / (4.8e12 * 0.89) + act, rel=1e-6)
    assert 1 - (kv / 0.62) / (2 * kv / 0.89) == pytest.approx(0.28, abs=0.005)
    h200 = TM.chip("h200-sxm")  # the shares the pages read, by cache and engine
    assert h200.kv_share(4096, "fp8", "vLLM") == 0.62 and h200.kv_share(4096, "fp8", "SGLang") == 0.51
    assert h200.kv_share(4096, "fp8", "TensorRT-LLM") == h200.kv_share(4096) == 0.89
    # the engine reads its own curve only where one is measured: an FP8 cache on an MI300X keeps a streaming share
    assert TM.chip("mi300x").kv_for("fp8", "vLLM") == ((), None)
    assert TM.chip("mi300x").kv_share(4096, "fp8", "vLLM") == TM.chip("mi300x").hbm


def test_tensorrt_llm_prices_its_dense_fp4_gemms_at_its_own_kernel():
    # Llama 3.1 70B in NVFP4 on one B200, one sequence decoding: the MLP's gate and up projection, 2 x 28,672 x 8,192
    # weights at 0.5625 bytes (NVFP4 with its scales), 264.2 MB. TensorRT-LLM's PyTorch backend runs its own FP4 GEMM
    # (data/policies.yaml trtllm-bench, gemm_kernel trtllm): data/efficiencies.yaml b200-gemm-weights-fp4-trtllm
    # streams them at 0.60 of the 7.7 TB/s datasheet at one token, 57.2 us, where vLLM's (FlashInfer's CuTe DSL
    # kernel, the engines' median entry) reaches 0.66, 52.0 us. A 16,384-token prefill's products run at 3,609.9
    # TFLOP/s against the median's 4,052.6 (both times the median's ramp by FLOPs).
    w = 2 * 28672 * 8192 * 0.5625
    assert w == pytest.approx(264.2e6, rel=1e-3)

    def gate_up(policy: str, phase: str, tokens: int) -> Op:
        st = setting(ENG, "llama-3.1-70b", "nvfp4", "reference", accelerator="b200", concurrency=1,
                     context_tokens=2000, memory_policy=policy)
        return next(o for o in step(deploy(st, Layout(1)), phase, tokens, 0.0 if phase == "prefill" else 1000.0).ops
                    if o.name == "gate_up")

    b200 = TM.chip("b200")
    trt, median = gate_up("trtllm-bench", "decode", 1), gate_up("vllm-default", "decode", 1)
    stream = 7.7e12 * b200.hbm  # the activations around the product, at a streaming kernel's share
    assert trt.memory_s - (trt.bytes - w) / stream == pytest.approx(w / (7.7e12 * 0.60), rel=1e-6)
    assert median.memory_s - (median.bytes - w) / stream == pytest.approx(w / (7.7e12 * 0.66), rel=1e-6)
    assert w / (7.7e12 * 0.60) == pytest.approx(57.2e-6, rel=1e-3)
    assert b200.gemm_for("fp4", "trtllm").compute == pytest.approx(3609.9 / 9000)
    assert b200.gemm_for("fp4").compute == pytest.approx(4052.6 / 9000)
    assert b200.gemm_for("fp4", "trtllm").compute_ramp == b200.gemm_for("fp4").compute_ramp
    pre_trt, pre_median = gate_up("trtllm-bench", "prefill", 16384), gate_up("vllm-default", "prefill", 16384)
    assert pre_trt.compute_s / pre_median.compute_s == pytest.approx(4052.6 / 3609.9, rel=1e-6)
    # a chip without TensorRT-LLM's own entries (the H100 in FP8) keeps the median under TensorRT-LLM's policy
    h100 = TM.chip("h100-sxm")
    assert h100.gemm_for("fp8", "trtllm") == h100.gemm_for("fp8")


def test_the_input_price_is_the_prompt_alone_whatever_the_load() -> None:
    """Dollars per million prompt tokens divide the rent over prompts prefilled one after another with nothing else
    in the step: at one request that is `predict`'s own prefill; at full load a prompt rides a step of hundreds of
    decoding sequences and takes longer, which must not raise the price of an input token."""
    d = _d("llama-3.1-70b", "fp8", Layout(4))
    n_in = d.setting.scenario.input_tokens
    one, most = predict(d, 1), predict(d, d.max_concurrency)
    assert prefill_alone_s(d, n_in) == pytest.approx(one.prefill_s, rel=1e-12)
    assert most.prefill_s > 1.2 * one.prefill_s  # a mixed step carries the decoding sequences too
    rent = d.cost_per_replica_hour
    assert rent is not None
    price = rent / (n_in / one.prefill_s * 3600) * 1e6
    assert usd_per_mtok_input(d, one) == pytest.approx(price) and usd_per_mtok_input(d, most) == pytest.approx(price)
    # a prompt longer than a step's budget is its chunks, each alone
    budget = d.setting.memory_policy.max_num_batched_tokens
    long = prefill_alone_s(d, 3 * budget)
    assert long == pytest.approx(sum(mixed_step(d, 0, 3 * budget, budget, k * budget, finishing=int(k == 2)).total_s
                                     for k in range(3)))
    # and `predict` at one request splits it the same way: no sequence decodes beside the prompt to take a token of
    # the budget (one token over the budget is two chunks, not three)
    for n in (3 * budget, budget + 1):
        alone = predict(d, 1, input_tokens=n)
        assert alone.prefill_s == pytest.approx(prefill_alone_s(d, n), rel=1e-12), n
