"""The time model on hand-worked cases: a memory-bound decode, a compute-bound prefill, a latency-bound and a
bandwidth-bound all-reduce; and the engine's command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from snippets.data import load
from snippets.data.export import engine_catalog
from snippets.engine import Layout, deploy, setting
from snippets.engine.memory import stage_weights
from snippets.engine.timing import Link, allreduce, forward, predict, tp_link

from ..conftest import ROOT

ENG = engine_catalog(load())
TM = ENG.time_models["measured-fractions"]
H100 = ENG.chips["h100-sxm"]


def _d(model: str, precision: str, layout: Layout, *, context: int = 2000, concurrency: int = 1):
    st = setting(ENG, model, precision, "reference", node="hgx-h100-8", concurrency=concurrency,
                 context_tokens=context)
    return deploy(st, layout)


def test_small_allreduce_is_latency_bound_and_takes_one_hop():
    nvl = Link("nvlink", 450e9 * 0.8, 2e-6)
    c = allreduce(16 * 1024, 8, nvl)  # one decode token of a 8,192-wide model: 16 KiB
    assert c.algorithm == "one-shot"
    assert c.latency_s == 2e-6
    assert c.seconds == pytest.approx(2e-6 + 7 * 16 * 1024 / (450e9 * 0.8))
    assert c.seconds < 3e-6  # the bytes add a third of a microsecond: the hop dominates


def test_large_allreduce_is_bandwidth_bound_on_a_ring():
    nvl = Link("nvlink", 360e9, 2e-6)
    n, size = 8, 256 * 2**20  # a 256 MiB gradient-sized message
    c = allreduce(size, n, nvl)
    assert c.algorithm in ("ring", "two-shot")
    assert c.seconds == pytest.approx(c.latency_s + 2 * (n - 1) / n * size / 360e9)
    assert c.seconds - c.latency_s > 100 * c.latency_s  # bytes dominate
    # a ring of 8 pays 14 hops, two-shot 2: at this size both move the same bytes, so two-shot wins
    assert c.algorithm == "two-shot"


def test_one_gpu_has_no_collective():
    assert allreduce(1e6, 1, Link("nvlink", 1e9, 1e-6)).seconds == 0


def test_decode_at_batch_1_is_memory_bound_and_reads_the_weights():
    d = _d("llama-3.1-70b", "fp8", Layout(2))
    p = forward(d, 1, 2000, prefill=False)
    assert p.bound == "memory"
    weights_gpu = stage_weights(d.setting.model.arch, d.setting.precision, Layout(2))[0].total
    kv_gpu = 2 * 80 * 4 * 128 * 2 * 2000  # 4 KV heads per GPU, BF16, 2,000 tokens
    assert p.bytes_read == pytest.approx(weights_gpu + kv_gpu)
    assert p.memory_s == pytest.approx((weights_gpu + kv_gpu) / (H100.hbm_bytes_per_s * TM.hbm_fraction))
    assert p.memory_s > 10 * p.compute_s
    # 160 all-reduces (two per layer) of one token's 16 KiB activations, one NVLink hop each
    assert p.comm_latency_s == pytest.approx(160 * TM.nvlink_hop_s)
    assert p.total_s == pytest.approx(p.memory_s + p.comm_s + 80 * TM.layer_overhead_s)


def test_prefill_of_a_long_prompt_is_compute_bound():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=8192)
    p = forward(d, 8192, 0, prefill=True)
    assert p.bound == "compute"
    # 2 FLOPs per active parameter per token on each GPU, plus causal attention, at the fitted fraction
    assert p.compute_s == pytest.approx(p.flops / (H100.dense_flops["fp8"] * TM.compute_fraction))
    params_gpu = 70.55e9 / 2
    assert p.flops > 2 * params_gpu * 8192 * 0.98


def test_predict_puts_throughput_and_cost_together():
    d = _d("llama-3.1-70b", "fp8", Layout(2), context=2000, concurrency=16)
    x = predict(d, 16, 1000, 1000)
    # a generation of the 16 sequences: 16 prefills and 1,000 decode steps of all 16
    assert x.output_tokens_per_s == pytest.approx(16 * 1000 / (16 * x.prefill_s + 1000 * x.decode.total_s))
    assert x.tpot_s == pytest.approx(x.decode.total_s + 15 * x.prefill_s / 1000)
    assert x.output_tokens_per_s_per_gpu == pytest.approx(x.output_tokens_per_s / 2)
    assert x.usd_per_mtok_output == pytest.approx(d.cost_per_replica_hour / (x.output_tokens_per_s * 3600) * 1e6)
    # a larger batch shares the weight read: more tokens per second, each a little later
    x1 = predict(d, 1, 1000, 1000)
    assert x.tpot_s > x1.tpot_s and x.output_tokens_per_s > 10 * x1.output_tokens_per_s


def test_tp_across_nodes_crosses_the_network():
    d = _d("llama-3.1-405b", "bf16", Layout(16))
    link = tp_link(d)
    assert link.name == "network" and link.hop_s == TM.network_hop_s
    assert tp_link(_d("llama-3.1-405b", "fp8", Layout(8))).name == "nvlink"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "snippets.engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_cli_predict_prints_one_json_object():
    out = _cli("predict", "--model", "llama-3.1-405b", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "8",
               "--pp", "1", "--input-tokens", "1000", "--output-tokens", "500", "--concurrency", "16")
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert {"ttft_ms", "tpot_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "gpus", "memory_per_gpu",
            "assumptions"} <= set(j)
    d = _d("llama-3.1-405b", "fp8", Layout(8), context=1500, concurrency=16)
    x = predict(d, 16, 1000, 500)
    assert j["gpus"] == 8 and j["tpot_ms"] == pytest.approx(x.tpot_s * 1e3)
    assert j["output_tokens_per_s"] == pytest.approx(x.output_tokens_per_s)
    assert j["ttft_ms"] == pytest.approx(x.ttft_s * 1e3)


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


def test_alltoall_writes_the_others_share_in_one_hop():
    from snippets.engine.timing import alltoall

    link = Link("nvlink", 400e9, 2e-6)
    c = alltoall(8 * 2**20, 8, link)
    assert c.algorithm == "all-to-all" and c.latency_s == 2e-6
    assert c.seconds == pytest.approx(2e-6 + 7 / 8 * 8 * 2**20 / 400e9)
    assert alltoall(1e6, 1, link).seconds == 0


def test_expert_parallelism_trades_an_allreduce_for_two_alltoalls_per_moe_layer():
    from snippets.engine.timing import alltoall, ep_link

    st = setting(ENG, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", concurrency=8, context_tokens=2048)
    tp = forward(deploy(st, Layout(8)), 8, 1536, prefill=False)
    ep_d = deploy(st, Layout(8, ep=8))
    ep = forward(ep_d, 8, 1536, prefill=False)
    arch = ep_d.setting.model.arch
    moe_layers = arch.layers - arch.moe.dense_layers  # 58 of 61
    link = tp_link(ep_d)
    ar = allreduce(8 * arch.hidden_size * 2, 8, link)
    a2a = alltoall(8 * arch.moe.active_experts * arch.hidden_size * 2, 8, ep_link(ep_d))
    assert ep.comm_s - tp.comm_s == pytest.approx(moe_layers * (2 * a2a.seconds - ar.seconds))
    # the same arithmetic either way: every token's experts are computed once, wherever they live
    assert ep.flops == pytest.approx(tp.flops, rel=1e-9)


def test_data_parallel_attention_holds_each_sequence_on_one_rank():
    st = setting(ENG, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", concurrency=1, context_tokens=2048)
    tp8 = deploy(st, Layout(8))
    dp8 = deploy(st, Layout(1, ep=8, dp=8))
    # MLA's latent cache is whole on every TP rank: DP attention splits the sequences instead, so eight times as
    # many fit in what the KV room allows (the attention weights, replicated, take some of it back)
    per_seq = tp8.memory.kv_per_sequence
    assert dp8.memory.kv_per_sequence == per_seq
    assert dp8.max_concurrency == 8 * dp8.memory.max_sequences
    assert dp8.max_concurrency > 4 * tp8.max_concurrency
