"""The line chart of snippets/render/charts.py: markers where the data says, refusals where it cannot be drawn."""

from __future__ import annotations

import functools
import itertools
import math

import pytest
from bs4 import BeautifulSoup

from snippets.render import charts
from snippets.render.charts import WIDE, WIDTH, Series

lines = functools.partial(charts.lines, width=WIDTH)
"""The phone's rendering alone: what the legibility rules are written for (the wide one is tested below)."""

TWO = [Series("A", [(0, 0), (50, 10), (100, 20)]), Series("B", [(25, 5), (75, 30)], tips=("one", "two"))]


def _soup(svg: str) -> BeautifulSoup:
    return BeautifulSoup(svg, "html.parser")


def test_lines_are_deterministic_and_follow_their_data() -> None:
    one = lines("l", TWO, "x units", "y units", "t", "d")
    assert one == lines("l", TWO, "x units", "y units", "t", "d")
    assert one != lines("l", [TWO[0], Series("B", [(25, 5), (75, 31)], tips=("one", "two"))], "x", "y", "t", "d")


def test_markers_sit_at_their_values_on_linear_axes_from_zero() -> None:
    soup = _soup(lines("l", TWO, "x units", "y units", "t", "d"))
    dots = soup.find_all("circle")
    assert len(dots) == 5
    (x0, y0), (x1, y1), (x2, y2) = ((float(c["cx"]), float(c["cy"])) for c in dots[:3])
    # equal steps in the data are equal steps on the page; y grows upwards
    assert x1 - x0 == pytest.approx(x2 - x1, abs=0.2) and y0 - y1 == pytest.approx(y1 - y2, abs=0.2)
    assert y1 < y0
    # the origin is where the two axes meet
    axes = [ln for ln in soup.find_all("line") if ln.find_parent("g") is None]
    assert any(float(a["x1"]) == pytest.approx(x0, abs=0.1) for a in axes)
    assert any(float(a["y1"]) == pytest.approx(y0, abs=0.1) for a in axes)
    # series B: (25, 5) and (75, 30) on the same scales as A
    (bx0, by0), (bx1, by1) = ((float(c["cx"]), float(c["cy"])) for c in dots[3:])
    assert bx1 - bx0 == pytest.approx((x2 - x0) * 50 / 100, abs=0.2)  # 50 of A's 100 x units
    assert by0 - by1 == pytest.approx((y0 - y2) * 25 / 20, abs=0.2)   # 25 against A's 20 y units
    assert bx0 - x0 == pytest.approx((x2 - x0) * 25 / 100, abs=0.2)


def test_each_series_has_a_line_a_colour_and_tooltips() -> None:
    soup = _soup(lines("l", TWO, "x units", "y units", "t", "d"))
    polys = soup.find_all("polyline")
    assert len(polys) == 2 and all(p["fill"] == "none" for p in polys)
    colours = [g["stroke"] for g in soup.find_all("g") if g.get("stroke") and g["stroke"] != "currentColor"]
    assert len(set(colours)) == 2
    tips = [c.title.get_text() for c in soup.find_all("circle")]
    assert tips[1] == "A: 50 x units, 10 y units" and tips[3:] == ["B: one", "B: two"]


def test_lines_are_accessible_theme_neutral_and_escape_labels() -> None:
    svg = lines("l", [Series("<b>&", [(1, 1)])], "x", "y", "A <title>", "desc & more")
    soup = _soup(svg)
    root = soup.find("svg")
    assert root["role"] == "img" and root["aria-labelledby"] == "l-title l-desc" and root["fill"] == "currentColor"
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
    assert soup.find("title", id="l-title").get_text() == "A <title>"


@pytest.mark.parametrize(("series", "message"), [
    ([], "at least one series"),
    ([Series("A", [])], "no points"),
    ([Series("A", [(1, math.nan)])], "finite non-negative"),
    ([Series("A", [(-1, 2)])], "finite non-negative"),
    ([Series("A", [(1, math.inf)])], "finite non-negative"),
    ([Series("A", [(1, 1)]), Series("A", [(2, 2)])], "share a label"),
    ([Series("A", [(1, 1)], tips=("a", "b"))], "tooltips"),
    ([Series("x" * 100, [(1, 1)])], "too long"),
])
def test_lines_refuse_what_they_cannot_draw_truthfully(series, message) -> None:
    with pytest.raises(ValueError, match=message):
        lines("l", series, "x", "y", "t", "d")


def test_a_log_axis_puts_each_decade_an_equal_step_apart() -> None:
    # throughput per GPU from 10 to 1,000 (two decades: log by the site's rule); interactivity 20 to 80 (linear)
    data = [Series("A", [(20, 10), (40, 100), (80, 1000)])]
    soup = _soup(lines("l", data, "x units", "y units", "t", "d", log_y=None, log_x=None))
    (x0, y0), (x1, y1), (x2, y2) = ((float(c["cx"]), float(c["cy"])) for c in soup.find_all("circle"))
    assert y0 - y1 == pytest.approx(y1 - y2, abs=0.2)  # ×10 is one step on the log y axis
    assert x2 - x1 == pytest.approx(2 * (x1 - x0), abs=0.3)  # x stays linear: 40 units against 20
    ticks = [t.get_text() for t in soup.find_all("text")]
    assert {"10", "100", "1,000"} <= set(ticks)
    # the data decides: the same y values on a span of less than two decades stay linear
    flat = _soup(lines("l", [Series("A", [(20, 10), (40, 50), (80, 90)])], "x", "y", "t", "d", log_y=None))
    (_, f0), (_, f1), (_, f2) = ((float(c["cx"]), float(c["cy"])) for c in flat.find_all("circle"))
    assert f0 - f1 == pytest.approx(f1 - f2, abs=0.2)  # 40 units each: equal steps on a linear axis


def test_a_log_axis_refuses_zero() -> None:
    with pytest.raises(ValueError, match="log y axis"):
        lines("l", [Series("A", [(1, 0), (2, 100)])], "x", "y", "t", "d", log_y=True)


def test_a_chart_is_drawn_for_a_phone_and_again_for_a_desktop() -> None:
    both = charts.lines("l", TWO, "x units", "y units", "t", "d")
    narrow, wide = _soup(both).find_all("svg")
    assert narrow["viewbox"].split()[2] == f"{WIDTH:g}" and wide["viewbox"].split()[2] == f"{WIDE:g}"
    assert "sa-chart--narrow" in narrow["class"] and "sa-chart--wide" in wide["class"]
    assert narrow["aria-labelledby"] == "l-title l-desc" and wide["aria-labelledby"] == "l-wide-title l-wide-desc"
    # the same data in both: the same tooltips, in the same order
    assert [t.get_text() for t in narrow.find_all("title")][2:] == [t.get_text() for t in wide.find_all("title")][2:]


def test_a_scatter_series_has_markers_and_no_line() -> None:
    """A series with joined=False (points in no order, as on the predictions page) draws its markers only; a joined
    series beside it keeps its line (in each of the phone's and the desktop's drawings)."""
    pts = Series("rows", [(10, 12), (1000, 800), (100, 30)], joined=False)
    ref = Series("predicted = measured", [(10, 10), (1000, 1000)])
    svg = _soup(lines("s", [pts, ref], "measured", "predicted", "t", "d", log_x=True, log_y=True)).find("svg")
    assert len(svg.find_all("polyline")) == 1
    assert len(svg.find_all("circle")) == 5
    x0, x1, x2 = (float(c["cx"]) for c in svg.find_all("circle")[:3])
    assert x2 - x0 == pytest.approx(x1 - x2, abs=0.2)  # a decade is an equal step on the log axis


def test_a_long_log_axis_labels_every_other_decade_rather_than_run_its_labels_together() -> None:
    """Seven decades of x on the phone's drawing: a label on every decade would run '100,000' into '1,000,000'
    (the predictions page's TTFT chart, 2026-12-05); the labels then skip a decade, each centred on its tick with room
    between them, while the grid keeps a line at every decade. Three decades keep every label."""
    many = [Series("rows", [(1, 2), (1_000_000, 900_000)], joined=False)]
    soup = _soup(lines("s", many, "measured", "predicted", "t", "d", log_x=True, log_y=True))
    svg = soup.find("svg")
    under = sorted(((float(t["x"]), t.get_text()) for t in svg.find_all("text")  # the x axis: centred on their ticks
                    if t.get("text-anchor") == "middle" and t.get_text()[0].isdigit()), key=lambda p: p[0])
    labels = [text for _, text in under]
    assert labels == ["1", "100", "10,000", "1,000,000"]
    for (xa, a), (xb, b) in itertools.pairwise(under):
        assert xb - xa >= (charts._text_width(a, charts.SMALL) + charts._text_width(b, charts.SMALL)) / 2 + 6
    few = _soup(lines("s", [Series("rows", [(10, 10), (5000, 5000)], joined=False)], "measured", "predicted", "t",
                      "d", log_x=True, log_y=True))
    assert [t.get_text() for t in few.find("svg").find_all("text") if t.get("text-anchor") == "middle"
            and t.get_text()[0].isdigit()] == ["10", "100", "1,000", "10,000"]
    assert len(svg.find_all("line")) > len(few.find("svg").find_all("line"))  # a grid line at every decade
