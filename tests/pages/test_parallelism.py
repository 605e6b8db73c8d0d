"""The parallelism page and its page model: TP's communication is the engine's α–β time model, recomputed here
through the engine (never from hard-coded fractions: the time model's fitted values may move), and the built page
shows those figures."""

from __future__ import annotations

import math

import pytest

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.timing import allreduce, forward, pp_link, predict, send, tp_link
from snippets.pages.parallelism import (
    algorithm_times,
    bubble,
    compute_bound_batch,
    decode_step,
    message_tokens,
    time_links,
)
from snippets.pages.scenario import SERVING, reference

# By hand, Llama 3.1 405B in BF16 (BF16 activations, 2 bytes) on TP8 x PP2 of H100 SXM, the layout the
# engine deploys for the reference scenario (tp-in-node policy):
MESSAGE = 16384 * 2  # 32,768 bytes per all-reduce at one token
RING = 2 * 7 / 8 * MESSAGE  # 57,344 bytes sent per GPU by a ring (or two-shot)
TP_BYTES = 126 * 2 * RING  # 14,450,688 bytes per token
ALLREDUCES = 126 * 2  # 252 all-reduces per token, one after another
NVLINK = 18 * 25e9  # 450 GB/s one way (datasheet)
NETWORK = 400e9 / 8  # 50 GB/s one way per GPU (one 400 Gb/s NIC per GPU)
GEN5 = 32e9 * 16 * 128 / 130 / 8  # 63.0 GB/s one way


@pytest.fixture(scope="module")
def dep(catalog: Catalog):
    d = reference(catalog).deployment("llama-3.1-405b", "bf16")
    assert d.layout.label == "TP8 × PP2"
    return d


@pytest.fixture(scope="module")
def serving(catalog: Catalog) -> int:
    return reference(catalog, SERVING).scenario.concurrency


def test_links_are_the_engines_own(catalog: Catalog, dep) -> None:
    tm = dep.setting.time_model
    ls = time_links(dep)
    r = reference(catalog)
    assert ls["nvlink"] == tp_link(dep)
    # the network: the engine's own link once one TP group spans the two nodes
    assert ls["network"] == tp_link(r.deployment("llama-3.1-405b", "bf16", layout=Layout(16)))
    # PCIe: the engine's own link on a PCIe-only node whose card has the same host link (PCIe 5.0 x16)
    assert ls["pcie"] == tp_link(r.deployment("llama-3.1-70b", "bf16", node="h100-pcie-8"))
    # by hand: the datasheet one-way figures at the time model's achieved fraction and hop latencies
    assert ls["nvlink"].bytes_per_s == pytest.approx(NVLINK * tm.link_fraction)
    assert ls["pcie"].bytes_per_s == pytest.approx(GEN5 * tm.link_fraction)
    assert ls["network"].bytes_per_s == pytest.approx(NETWORK * tm.link_fraction)
    assert (ls["nvlink"].hop_s, ls["pcie"].hop_s, ls["network"].hop_s) == (
        tm.nvlink_hop_s, tm.pcie_hop_s, tm.network_hop_s)


def test_decode_step_is_the_engines_pass(dep, serving: int) -> None:
    for c in (1, serving):
        s, x = decode_step(dep, c), predict(dep, c)
        assert s.total_s == pytest.approx(x.decode.total_s)
        assert s.comm_s == pytest.approx(x.decode.comm_s)
        # the engine splits the sequences into one micro-batch per stage; one send per boundary
        tokens = math.ceil(c / 2)
        assert s.tokens == tokens
        assert s.sends_s == pytest.approx(send(tokens * MESSAGE, pp_link(dep)))
    # one token on NVLink, by hand: one-shot, one hop and 7 x the message per GPU, 252 times in turn
    s = decode_step(dep, 1)
    link = s.link
    assert s.allreduce.algorithm == "one-shot"
    assert s.tp_s == pytest.approx(ALLREDUCES * (link.hop_s + 7 * MESSAGE / link.bytes_per_s))
    assert s.tp_latency_s == pytest.approx(ALLREDUCES * link.hop_s)
    assert s.tp_latency_s > s.tp_s / 2  # latency, not bytes
    # another link swaps the all-reduces alone; the roofline, the overhead and the PP send stay
    net = decode_step(dep, 1, time_links(dep)["network"])
    assert net.total_s - s.total_s == pytest.approx(net.tp_s - s.tp_s)
    assert net.sends_s == pytest.approx(s.sends_s)


def test_algorithms_are_those_the_engine_chooses_from(catalog: Catalog, dep) -> None:
    for _, tokens in message_tokens(catalog):
        nbytes = tokens * MESSAGE
        for link in time_links(dep).values():
            algs = {a.name: a for a in algorithm_times(nbytes, 8, link)}
            assert (algs["ring"].hops, algs["two-shot"].hops, algs["one-shot"].hops) == (14, 2, 1)
            assert algs["ring"].bytes_per_gpu == algs["two-shot"].bytes_per_gpu == pytest.approx(1.75 * nbytes)
            assert algs["one-shot"].bytes_per_gpu == pytest.approx(7 * nbytes)
            best = min(algs.values(), key=lambda a: a.seconds)
            c = allreduce(nbytes, 8, link)
            assert best.name == c.algorithm and best.seconds == pytest.approx(c.seconds)
            assert best.seconds == pytest.approx(best.hops * link.hop_s + best.bytes_per_gpu / link.bytes_per_s)


def test_bubble() -> None:
    assert bubble(2, 1) == 0.5  # one sequence on two stages: each idles half the time
    assert bubble(4, 4) == pytest.approx(3 / 7)
    assert bubble(1, 5) == 0
    with pytest.raises(ValueError):
        bubble(2, 0)


def test_compute_bound_batch(dep) -> None:
    b = compute_bound_batch(dep, 0)
    assert b is not None
    assert forward(dep, b, 0, prefill=False).bound == "compute"
    assert forward(dep, b - 1, 0, prefill=False).bound != "compute"
    # weights alone, BF16: 2 FLOPs per weight of 2 bytes, one FLOP per byte per token; the ridge, at the achieved
    # fractions, is FLOP/s ÷ bytes/s, so b is near it (the LM head and per-layer norms move it a little)
    tm, chip = dep.setting.time_model, dep.setting.chip
    ridge = chip.dense_flops["bf16"] * tm.compute_fraction / (chip.hbm_bytes_per_s * tm.hbm_fraction)
    assert b == pytest.approx(ridge, rel=0.1)
    # at the scenario's context each sequence also reads its KV cache: compute-bound later, if at all (whether it
    # ever is depends on the fitted compute fraction), and never within what the KV cache holds
    sc = dep.setting.scenario
    at_ctx = compute_bound_batch(dep, sc.input_tokens + sc.output_tokens / 2)
    assert at_ctx is None or at_ctx > max(b, dep.max_concurrency)
