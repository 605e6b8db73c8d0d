"""The parallelism page's diagrams (snippets/pages/parallelism.py) against the engine's figures, read back from
their SVG."""

from __future__ import annotations

import math

import pytest

from snippets.data import Catalog
from snippets.pages.parallelism import (
    PIPE_MICRO,
    algorithm_prices,
    bubble,
    pipeline_diagram,
    ring_diagram,
    ring_steps_of,
    tp_allreduce,
    tp_diagram,
    tp_shard,
)
from snippets.pages.scenario import reference
from snippets.render import diagrams

from ..unit.test_diagrams import NS, _f, _rects, _svg  # reading the SVG back


@pytest.mark.parametrize(("p", "m"), [(2, 1), (2, 8), (4, 1), (4, 4), (8, 16)])
def test_pipeline_bubble_is_p_times_p_minus_1_boxes(p: int, m: int) -> None:
    svg = _svg(diagrams.pipeline("p", p, [diagrams.Schedule(m, "h")], "slots", "t", "d"))
    busy, idle = _rects(svg, "schedule", "pipe-busy"), _rects(svg, "schedule", "pipe-idle")
    assert len(busy) == p * m and len(idle) == p * (p - 1)
    assert len(idle) / (len(busy) + len(idle)) == pytest.approx(bubble(p, m))
    assert len({_f(r, "x") for r in busy + idle}) == m + p - 1  # the schedule lasts m + p − 1 slots
    # micro-batch j is on stage s at slot s + j: each stage starts one slot after the one before
    for s in range(p):
        row = [r for r in busy if r.find("s:title", NS).text.startswith(f"stage {s + 1},")]
        assert min(_f(r, "x") for r in row) == pytest.approx(min(_f(r, "x") for r in busy) + s * _f(row[0], "width")
                                                             + 2 * s, abs=0.1 * s + 0.1)


@pytest.fixture(scope="module")
def dep(catalog: Catalog):
    return reference(catalog).deployment("llama-3.1-405b", "bf16")


def test_page_tp_diagram_draws_the_engines_layout(catalog: Catalog, dep) -> None:
    a, tp = dep.setting.model.architecture, dep.layout.tp
    sh = tp_shard(dep)
    # by hand, Llama 3.1 405B on TP8: 128 heads / 8, 8 KV heads / 8, (16 + 2) × 128 columns, 53,248 / 8
    assert (sh.heads, sh.kv_heads, sh.qkv_cols, sh.o_rows, sh.ffn) == (16, 1, 2304, 2048, 6656)
    assert sh.heads * tp == a.attention_heads and sh.ffn * tp == a.ffn_size
    fig = tp_diagram(catalog)
    svg = _svg(fig[fig.index("<svg"):fig.index("</svg>") + 6])
    assert len(_rects(svg, "split-col", "stripe")) == 2 * tp
    assert "16,384 × 2,304" in fig and "6,656 of the 53,248" in fig and "<figcaption>" in fig


def test_page_ring_diagram_times_are_the_engines(catalog: Catalog, dep) -> None:
    n = dep.layout.tp
    msg = dep.setting.model.architecture.hidden_size * 2
    steps = ring_steps_of(dep, msg)
    prices = algorithm_prices(dep, msg)
    for k, name in (("ring", "nccl"), ("two-shot", "two-shot"), ("one-shot", "one-shot")):
        assert sum(steps[k]) == pytest.approx(prices[name].seconds)
    assert [len(steps[k]) for k in ("ring", "two-shot", "one-shot")] == [2 * (n - 1), 2, 1]
    chosen = tp_allreduce(dep, 1)
    assert chosen.algorithm == "one-shot" and math.isclose(sum(steps["one-shot"]), chosen.seconds)
    fig = ring_diagram(catalog)
    assert f"picks {chosen.algorithm}" in fig and f"{chosen.algorithm} (engine's choice)" in fig
    svg = _svg(fig[fig.index("<svg"):fig.index("</svg>") + 6])
    assert len(_rects(svg, "ring", "ring-cell")) == n * 2 * (n - 1)


def test_page_pipeline_diagram_draws_the_layouts_stages(catalog: Catalog, dep) -> None:
    p = dep.layout.pp
    fig = pipeline_diagram(catalog)
    svg = _svg(fig[fig.index("<svg"):fig.index("</svg>") + 6])
    panels = svg.findall(".//s:g[@class='schedule']", NS)
    assert [int(g.get("data-micro-batches", "0")) for g in panels] == list(PIPE_MICRO)
    for g, m in zip(panels, PIPE_MICRO, strict=True):
        assert len(g.findall("s:rect[@class='pipe-idle']", NS)) == p * (p - 1)
        assert len(g.findall("s:rect[@class='pipe-busy']", NS)) == p * m
