"""Deployable TP x PP layouts, against layouts worked out by hand."""

import pytest

from snippets.layout import Layout, deploy, deployable_layout, pp_degrees, tp_degrees

NODE = "hgx-h100-8"
RESERVE = "runtime-reserve"


def test_tp_degrees_llama_405b() -> None:
    # 128 attention heads, 8 KV heads, 8-GPU node: divisors of 8 up to 8
    assert tp_degrees(128, 8, 8) == [1, 2, 4, 8]


def test_heads_forbid_some_tp_degrees() -> None:
    # 40 heads and 10 KV heads (a Llama-2-13B-like shape with grouped KV): common divisors <= 8 are 1, 2, 5
    assert tp_degrees(40, 10, 8) == [1, 2, 5]
    # 3 GPUs of capacity: 3 and 4 are not valid, so the smallest valid degree >= 3 is 5
    assert deployable_layout(3, 40, 10, 40, 8) == Layout(5, 1)
    # 6 GPUs: the largest valid degree in the node is 5; 2 stages (40 layers / 2 = 20) give 10 GPUs
    assert deployable_layout(6, 40, 10, 40, 8) == Layout(5, 2)
    # 7 KV heads (prime): only TP1 or TP7 in an 8-GPU node
    assert tp_degrees(28, 7, 8) == [1, 7]
    assert deployable_layout(2, 28, 7, 28, 8) == Layout(7, 1)


def test_pp_degrees() -> None:
    # divisors of 126 up to 10: 1, 2, 3, 6, 7, 9
    assert pp_degrees(126, 10) == [1, 2, 3, 6, 7, 9]
    assert pp_degrees(80, 5) == [1, 2, 4, 5]


@pytest.mark.parametrize(
    ("gpus", "expected", "label"),
    [
        (1, Layout(1, 1), "TP1"),
        (2, Layout(2, 1), "TP2"),
        (3, Layout(4, 1), "TP4"),
        (6, Layout(8, 1), "TP8"),
        (8, Layout(8, 1), "TP8"),
        (12, Layout(8, 2), "TP8 × PP2"),
        (17, Layout(8, 3), "TP8 × PP3"),  # 126 layers: 3 stages of 42 give 24 GPUs
        (25, Layout(8, 6), "TP8 × PP6"),  # 4 and 5 do not divide 126; 6 does: 48 GPUs
    ],
)
def test_llama_405b_layouts(gpus: int, expected: Layout, label: str) -> None:
    got = deployable_layout(gpus, 128, 8, 126, 8)
    assert got == expected
    assert got.label == label
    assert got.gpus == expected.tp * expected.pp


def test_no_layout_raises() -> None:
    with pytest.raises(ValueError, match="no TP x PP layout"):
        deployable_layout(100, 8, 8, 3, 8)  # TP8 x at most 3 stages = 24 GPUs
    with pytest.raises(ValueError):
        deployable_layout(0, 128, 8, 126, 8)


@pytest.mark.parametrize(
    ("model", "precision", "capacity", "layout", "rented", "extra", "nodes"),
    [
        # 140 GB / 70 GB usable = 2 -> TP2
        ("llama-3.1-70b", "fp16", 2, "TP2", 2, 0, 1),
        # 70 GB / 70 GB = 1 -> one GPU
        ("llama-3.1-70b", "int8", 1, "TP1", 1, 0, 1),
        # 810 / 70 = 11.6 -> 12 -> TP8 x PP2 = 16 GPUs over 2 nodes
        ("llama-3.1-405b", "fp16", 12, "TP8 × PP2", 16, 4, 2),
        # 405 / 70 = 5.8 -> 6 -> TP8 in one node
        ("llama-3.1-405b", "int8", 6, "TP8", 8, 2, 1),
        # 202.5 / 70 = 2.9 -> 3 -> TP4
        ("llama-3.1-405b", "int4", 3, "TP4", 4, 1, 1),
    ],
)
def test_deploy_from_data(catalog, model, precision, capacity, layout, rented, extra, nodes) -> None:
    d = deploy(catalog, model, precision, NODE, RESERVE)
    assert d.gpus_capacity == capacity
    assert d.layout.label == layout
    assert d.gpus_rented == rented
    assert d.extra_gpus == extra
    assert d.nodes == nodes
