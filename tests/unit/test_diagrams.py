"""The build-time diagrams (snippets/render/diagrams.py): their geometry read back from the SVG."""

from __future__ import annotations

import dataclasses
import itertools
from xml.etree import ElementTree as ET

import pytest

from snippets.render import diagrams

NS = {"s": "http://www.w3.org/2000/svg"}


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text)  # noqa: S314 - our own SVG


def _rects(svg: ET.Element, group: str, cls: str) -> list[ET.Element]:
    return [r for g in svg.iterfind(f".//s:g[@class='{group}']", NS) for r in g.iterfind(f"s:rect[@class='{cls}']", NS)]


def _f(el: ET.Element, attr: str) -> float:
    return float(el.get(attr, "nan"))


def _block(label: str, n: int) -> diagrams.Block:
    tips = [f"GPU {i}" for i in range(n)]
    return diagrams.Block(label, diagrams.Split("cols", "col", ["a"], tips), diagrams.Split("rows", "row", ["b"], tips),
                          "all-reduce <sum> & more")


@pytest.mark.parametrize("n", [2, 4, 8])
def test_tp_split_has_one_stripe_per_gpu_of_equal_share(n: int) -> None:
    svg = _svg(diagrams.tp_layer("t", n, "input", [_block("Attention", n), _block("MLP", n)], "title", "desc"))
    cols, rows = _rects(svg, "split-col", "stripe"), _rects(svg, "split-row", "stripe")
    assert len(cols) == len(rows) == 2 * n  # two blocks, one stripe per GPU in each matrix
    for block in range(2):
        c, r = cols[block * n:(block + 1) * n], rows[block * n:(block + 1) * n]
        # a column split: side by side, equal widths, together the whole matrix (each GPU 1/n of the columns)
        assert sum(_f(x, "width") for x in c) == pytest.approx(diagrams.WIDTH, abs=0.1 * n)
        assert {round(_f(x, "width"), 1) for x in c} == {round(diagrams.WIDTH / n, 1)}
        assert len({_f(x, "y") for x in c}) == 1
        # a row split: stacked, equal heights, one width
        assert len({_f(x, "height") for x in r}) == 1 and len({_f(x, "width") for x in r}) == 1
        ys = sorted(_f(x, "y") for x in r)
        assert all(b - a == pytest.approx(_f(r[0], "height"), abs=0.1) for a, b in itertools.pairwise(ys))
        # GPU i has the same colour in both matrices
        assert [x.get("fill") for x in c] == [x.get("fill") for x in r]
    assert len(_rects(svg, "allreduce", "allreduce-bar")) == 2  # two all-reduces per layer


def test_tp_split_escapes_labels_and_is_accessible() -> None:
    text = diagrams.tp_layer("t", 2, "input", [_block("A", 2)], "A <title>", "desc & more")
    svg = _svg(text)
    assert svg.get("role") == "img" and svg.get("aria-labelledby") == "t-title t-desc"
    assert svg.find("s:title", NS).text == "A <title>" and "&lt;sum&gt; &amp; more" in text
    assert "currentColor" in text and "<style" not in text
    assert text == diagrams.tp_layer("t", 2, "input", [_block("A", 2)], "A <title>", "desc & more")


def test_tp_split_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="too long"):
        diagrams.tp_layer("t", 2, "x" * 60, [_block("A", 2)], "t", "d")
    with pytest.raises(ValueError, match="tooltips"):
        diagrams.tp_layer("t", 4, "input", [_block("A", 2)], "t", "d")
    with pytest.raises(ValueError, match="at least two"):
        diagrams.tp_layer("t", 1, "input", [_block("A", 1)], "t", "d")
    # two lines fit under a column split, three beside a row split: a line more is refused, not dropped
    b = _block("A", 2)
    three = ["a", "b", "c"]
    with pytest.raises(ValueError, match="at most 2 lines under a col split"):
        diagrams.tp_layer("t", 2, "input", [dataclasses.replace(b, col=dataclasses.replace(b.col, lines=three))], "t", "d")
    with pytest.raises(ValueError, match="at most 3 lines under a row split"):
        diagrams.tp_layer("t", 2, "input", [dataclasses.replace(b, row=dataclasses.replace(b.row, lines=[*three, "d"]))],
                          "t", "d")
    svg = diagrams.tp_layer("t", 2, "input", [dataclasses.replace(b, row=dataclasses.replace(b.row, lines=three))],
                            "t", "d")
    assert all(f">{x}</text>" in svg for x in three)


def _algos(n: int, step: float = 1.0, two: float = 3.0, one: float = 5.0, chosen: str = "two-shot"
           ) -> tuple[diagrams.Algorithm, list[diagrams.Algorithm]]:
    ring = diagrams.Algorithm("ring", [step] * (2 * (n - 1)), ["RS"] * (n - 1) + ["AG"] * (n - 1), "r",
                              chosen=chosen == "ring")
    return ring, [diagrams.Algorithm("two-shot", [two, two], ["RS", "AG"], "t", chosen=chosen == "two-shot"),
                  diagrams.Algorithm("one-shot", [one], ["all"], "o", chosen=chosen == "one-shot")]


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ring_grid_has_2n_minus_2_steps_per_gpu(n: int) -> None:
    ring, others = _algos(n)
    svg = _svg(diagrams.allreduce_steps("r", n, ring, others, "µs", 1e6, "t", "d"))
    cells = _rects(svg, "ring", "ring-cell")
    assert len(cells) == n * 2 * (n - 1)
    columns = sorted({_f(c, "x") for c in cells})
    assert len(columns) == 2 * (n - 1)
    assert len({round(_f(c, "width"), 1) for c in cells}) == 1  # every step the same time
    # every GPU sends every chunk once in each phase, and at each step the GPUs send n different chunks
    for k in range(2 * (n - 1)):
        assert sorted(diagrams.ring_chunk(g, k, n) for g in range(n)) == list(range(n))
    # after the reduce-scatter GPU g holds summed chunk g + 1, the one it sends first in the all-gather
    assert all(diagrams.ring_chunk(g, n - 1, n) == (g + 1) % n for g in range(n))


def test_ring_reduce_scatter_sums_each_chunk_over_every_gpu() -> None:
    """Simulate the ring from `ring_chunk`: after the reduce-scatter each chunk is summed once on one GPU, after the
    all-gather every GPU holds every summed chunk."""
    n = 5
    held = [[{g} for _ in range(n)] for g in range(n)]  # held[g][c]: the GPUs whose chunk c GPU g has added up
    for k in range(2 * (n - 1)):
        sends = [(g, diagrams.ring_chunk(g, k, n), set(held[g][diagrams.ring_chunk(g, k, n)])) for g in range(n)]
        for g, c, have in sends:
            dst = (g + 1) % n
            held[dst][c] = held[dst][c] | have if k < n - 1 else have
        if k == n - 2:
            assert all(held[g][(g + 1) % n] == set(range(n)) for g in range(n))
    assert all(h == set(range(n)) for row in held for h in row)


def test_algorithm_bars_are_as_long_as_their_times() -> None:
    n = 4
    ring, others = _algos(n, step=1.0, two=2.5, one=9.0)
    svg = _svg(diagrams.allreduce_steps("r", n, ring, others, "µs", 1.0, "t", "d"))
    bars = {g.get("data-name"): g.findall("s:rect", NS) for g in svg.iterfind(".//s:g[@class='algo']", NS)}
    assert [len(bars[k]) for k in ("ring", "two-shot", "one-shot")] == [2 * (n - 1), 2, 1]
    length = {k: sum(_f(r, "width") for r in v) for k, v in bars.items()}
    assert length["one-shot"] / length["ring"] == pytest.approx(9.0 / 6.0, rel=0.01)
    assert length["two-shot"] / length["ring"] == pytest.approx(5.0 / 6.0, rel=0.01)
    # the grid's steps line up with the ring's bar
    cells = _rects(svg, "ring", "ring-cell")
    assert sorted({_f(c, "x") for c in cells}) == sorted(_f(r, "x") for r in bars["ring"])
    chosen = [k for k, v in bars.items() if v[0].get("fill") != "none"]
    assert chosen == ["two-shot"]


def test_algorithm_diagram_refuses_a_wrong_ring() -> None:
    ring, others = _algos(4)
    with pytest.raises(ValueError, match="takes 8 steps, not 6"):
        diagrams.allreduce_steps("r", 5, ring, others, "µs", 1.0, "t", "d")
    with pytest.raises(ValueError, match="exactly one"):
        diagrams.allreduce_steps("r", 4, ring, _algos(4, chosen="none")[1], "µs", 1.0, "t", "d")


def test_pipeline_panels_share_one_slot_width() -> None:
    svg = _svg(diagrams.pipeline("p", 2, [diagrams.Schedule(1, "a"), diagrams.Schedule(8, "b")], "slots", "t", "d"))
    widths = {_f(r, "width") for r in svg.iterfind(".//s:rect", NS)}
    assert len(widths) == 1
