"""The parallelism page and its page model: TP's communication is the engine's own (its step over each link,
the collectives it picks), recomputed here by hand from the time model's data (never from hard-coded fitted
values: they may move), and the built page shows those figures."""

from __future__ import annotations

import math

import pytest

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.serving import mixed_step
from snippets.engine.step import step
from snippets.engine.topology import group_link
from snippets.pages.parallelism import (
    algorithm_prices,
    bubble,
    compute_bound_batch,
    decode_step,
    message_tokens,
    over,
    ring_steps_of,
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
    r = reference(catalog)
    nvl, pcie, net = (group_link(over(dep, k), "tp") for k in ("nvlink", "pcie", "network"))
    assert nvl == group_link(dep, "tp")
    # by hand: each GPU's per-direction figure from the datasheets, what the group's wiring gives it
    assert (nvl.bytes_per_s, nvl.shape) == (pytest.approx(NVLINK), "switched")
    assert (pcie.bytes_per_s, pcie.shape) == (pytest.approx(GEN5), "pcie")
    assert (net.bytes_per_s, net.shape, net.nodes) == (pytest.approx(NETWORK), "network", 8)
    # PCIe: the engine's own link on a PCIe-only node whose card has the same host link (PCIe 5.0 x16)
    assert pcie.bytes_per_s == group_link(r.deployment("llama-3.1-70b", "bf16", node="h100-pcie-8"), "tp").bytes_per_s


def test_decode_step_is_the_engines_step(dep, serving: int) -> None:
    tm = dep.setting.time_model
    sc = dep.setting.scenario
    for c in (1, serving):
        s = decode_step(dep, c)
        assert s.engine == mixed_step(dep, c, sc.input_tokens + sc.output_tokens / 2, 0, 0)
        assert s.tokens == math.ceil(c / 2)  # one micro-batch per stage
    # one token on NVLink, by hand: vLLM's custom all-reduce in one stage (two GPUs, or eight below 256 KB):
    # its fitted latency and 7 x the message per GPU at its share of 450 GB/s, 252 times in turn
    s = decode_step(dep, 1)
    one = tm.one_shot.latency_s + 7 * MESSAGE / (NVLINK * tm.one_shot.efficiency)
    assert s.allreduce.algorithm == "one-shot"
    assert s.allreduce.seconds == pytest.approx(one)
    assert s.allreduces == ALLREDUCES
    assert s.tp_latency_s > s.tp_s / 2  # latency, not bytes
    # over PCIe vLLM refuses its custom all-reduce for eight GPUs: NCCL at its fitted latency for 8 GPUs
    p = decode_step(dep, 1, "pcie")
    assert p.allreduce.algorithm == "nccl"
    nccl = tm.nccl.latency_s + 6 * tm.nccl.per_peer_s + RING / (GEN5 * tm.nccl.efficiency)
    assert p.allreduce.seconds == pytest.approx(nccl)
    # the network: every GPU of the group in its own node, the all-reduce across them hierarchical with one GPU a
    # node, so all of it crosses the NICs: NCCL's latency plus a network step for each of a tree's 2 x log2(8) = 6
    # (fewer than a ring's 2 x 7 = 14, so NCCL's tuner takes the tree), 2 x 7/8 of the message
    n = decode_step(dep, 1, "network")
    assert n.allreduce.algorithm == "hierarchical"
    net = tm.nccl.latency_s + 6 * tm.network_hop_s + RING / (NETWORK * tm.link_fraction)
    assert n.allreduce.seconds == pytest.approx(net)


def test_algorithm_prices_by_hand(catalog: Catalog, dep) -> None:
    tm = dep.setting.time_model
    for _, tokens in message_tokens(catalog):
        nbytes = tokens * MESSAGE
        p = algorithm_prices(dep, nbytes)
        assert p["one-shot"].seconds == pytest.approx(tm.one_shot.latency_s + 7 * nbytes / (NVLINK * tm.one_shot.efficiency))
        assert p["two-shot"].seconds == pytest.approx(tm.two_shot.latency_s + 1.75 * nbytes / (NVLINK * tm.two_shot.efficiency))
        assert p["nccl"].seconds == pytest.approx(tm.nccl.latency_s + 6 * tm.nccl.per_peer_s
                                                  + 1.75 * nbytes / (NVLINK * tm.nccl.efficiency))
        mm = tm.multimem
        assert mm is not None and p["symmetric memory"].seconds == pytest.approx(mm.latency_s + nbytes / (NVLINK * mm.efficiency))
    # the ring diagram spreads each price over its steps
    st = ring_steps_of(dep, MESSAGE)
    assert [len(st[k]) for k in ("ring", "two-shot", "one-shot")] == [14, 2, 1]
    assert sum(st["ring"]) == pytest.approx(algorithm_prices(dep, MESSAGE)["nccl"].seconds)


def test_bubble() -> None:
    assert bubble(2, 1) == 0.5  # one sequence on two stages: each idles half the time
    assert bubble(4, 4) == pytest.approx(3 / 7)
    assert bubble(1, 5) == 0
    with pytest.raises(ValueError):
        bubble(2, 0)


def test_compute_bound_batch(dep) -> None:
    b = compute_bound_batch(dep, 0)
    assert b is not None

    def ratio(n: int) -> float:
        p = step(dep, "decode", n, 1)
        return p.compute_s / p.memory_s

    assert ratio(b) >= 1 > ratio(b - 1)
    # weights alone, BF16: 2 FLOPs per weight of 2 bytes, one FLOP per byte per token; the ridge of the measured
    # kernels (a large GEMM's share of the peak over the weight stream's share of HBM at that batch) is near b
    chip, tm = dep.setting.chip, dep.setting.time_model
    g = tm.chip(chip.id).gemm_for("bf16")
    ridge = chip.dense_flops["bf16"] * g.compute / (chip.hbm_bytes_per_s * g.weight_fraction(b))
    assert b == pytest.approx(ridge, rel=0.15)
    # at the scenario's context each sequence also reads its KV cache: compute-bound later, if at all, and never
    # within what the KV cache holds
    sc = dep.setting.scenario
    at_ctx = compute_bound_batch(dep, sc.input_tokens + sc.output_tokens / 2)
    assert at_ctx is None or at_ctx > max(b, dep.max_concurrency)


def test_tp_across_nodes_is_hierarchical(catalog: Catalog) -> None:
    d = reference(catalog).deployment("llama-3.1-405b", "bf16", layout=Layout(16))
    s = decode_step(d, 1)
    assert s.allreduce.algorithm == "hierarchical" and s.link.nodes == 2 and s.link.local_gpus == 8


def test_the_symmetric_memory_claim_holds_and_fails_without_it(catalog: Catalog, tmp_path) -> None:
    """On the worked TP group of eight H100s vLLM's custom all-reduce stops at 256 KiB (the 9.0 table), multimem takes
    messages up to 64 MiB and NCCL the rest: the page's claim holds. With symmetric memory off in vllm-default (a
    release before it), the custom all-reduce keeps its own 8 MiB and no message goes to multimem: the claim fails."""
    from snippets.data import load
    from snippets.pages.parallelism.page import ParallelismPage

    from ..conftest import edited_data

    ns = ParallelismPage.of(catalog)
    assert ns.custom_below_limit.holds
    assert (ns.custom_limit.value, ns.custom_limit.unit, ns.symm_limit.value) == (256, "KiB", 64)
    on = "  symm_mem: true\n  allreduce_tables:\n    - capability: \"9.0\"\n"  # vllm-default's, the first
    off = ParallelismPage.of(load(edited_data(tmp_path, [("policies.yaml", on, on.replace("true", "false"))])))
    assert not off.custom_below_limit.holds
    assert off.custom_limit.value == 8 and off.custom_limit.unit == "MiB"
