"""Build-time SVG charts: deterministic, proportional, honest axes, legible labels, accessible."""

from __future__ import annotations

import functools

import pytest
from bs4 import BeautifulSoup, Tag

from snippets.render import charts
from snippets.render.charts import (
    LOG_AXIS_DECADES,
    WIDTH,
    Bar,
    Mark,
    Roof,
    decade_ticks,
    decades,
    figure,
    nice_ticks,
    wants_log_axis,
)

# each chart's phone rendering alone, what the legibility rules are written for (tests/unit/test_charts_lines.py
# checks the pair a page gets)
bars, log_bars, tier_bars, grouped_bars, roofline = (functools.partial(f, width=WIDTH) for f in (
    charts.bars, charts.log_bars, charts.tier_bars, charts.grouped_bars, charts.roofline))

CLIFF = [Bar("HBM", 3350), Bar("NVLink", 450), Bar("PCIe", 63), Bar("Network", 50)]


def test_charts_are_deterministic_and_follow_their_data() -> None:
    one = tier_bars("c", CLIFF, "GB/s", "title", "desc")
    assert one == tier_bars("c", CLIFF, "GB/s", "title", "desc")
    changed = tier_bars("c", [Bar("HBM", 3000), *CLIFF[1:]], "GB/s", "title", "desc")
    assert changed != one
    assert ">3,350<" in one and ">3,000<" in changed  # value labels are drawn as text


def _bars(svg: str) -> list[Tag]:
    """The data bars of a chart: rects with a value in their tooltip (legend swatches have none)."""
    return [r for r in BeautifulSoup(svg, "html.parser").find_all("rect") if ":" in r.title.get_text()]


def test_bar_lengths_are_proportional_to_their_values() -> None:
    widths = [float(r["width"]) for r in _bars(bars("b", [Bar("a", 100), Bar("b", 50), Bar("c", 25)],
                                                            "GB/s", "t", "d"))]
    assert widths[0] == pytest.approx(2 * widths[1], abs=0.2) and widths[1] == pytest.approx(2 * widths[2], abs=0.2)
    # on a log axis, each tenfold step is the same length
    w1000, w100, w10 = (float(r["width"]) for r in _bars(log_bars("l", [Bar("a", 1000), Bar("b", 100), Bar("c", 10)],
                                                                          "GB/s", "t", "d")))
    assert w1000 - w100 == pytest.approx(w100 - w10, abs=0.2) and w10 > 0


def test_a_log_axis_only_where_the_values_span_decades() -> None:
    # the cliff, 3,350 against 50 GB/s, spans log10(67) = 1.83 decades: more than one, so a log axis
    assert decades([b.value for b in CLIFF]) == pytest.approx(1.826, abs=1e-3)
    assert decades([b.value for b in CLIFF]) >= LOG_AXIS_DECADES == 1.0
    assert wants_log_axis([3350, 50]) and wants_log_axis([1000, 100]) and not wants_log_axis([5, 0])
    assert not wants_log_axis([900, 100])  # 0.95 decades: linear, lengths proportional
    hbm, nvlink, _, net = (float(r["width"]) for r in _bars(tier_bars("c", CLIFF, "GB/s", "t", "d")))
    # each tenfold step the same length: HBM over NVLink is 7.4x (0.87 decades), NVLink over the network 9x (0.95)
    assert (hbm - nvlink) / (nvlink - net) == pytest.approx(0.871 / 0.954, rel=0.02)
    assert "GB/s (log scale)" in tier_bars("c", CLIFF, "GB/s", "t", "d")
    near = [Bar("a", 900), Bar("b", 450), Bar("c", 100)]
    a, b, c = (float(r["width"]) for r in _bars(tier_bars("n", near, "GB/s", "t", "d")))
    assert a == pytest.approx(9 * c, rel=0.02) and b == pytest.approx(4.5 * c, rel=0.02)
    assert "log scale" not in tier_bars("n", near, "GB/s", "t", "d")
    with pytest.raises(ValueError, match=r"0\.95 powers of ten"):
        log_bars("l", near, "GB/s", "t", "d")
    # one colour or many, the same rule
    assert "$ (log scale)" in bars("b", [Bar("a", 30), Bar("b", 788)], "$", "t", "d")
    # 3,350 against 25: 2.1 decades, a log axis that says so, with each bar's ratio to the smallest printed on it
    wide = tier_bars("w", [Bar("HBM", 3350), Bar("PCIe", 63), Bar("slow", 25)], "GB/s", "t", "d")
    texts = [t.get_text() for t in BeautifulSoup(wide, "html.parser").find_all("text")]
    assert "GB/s (log scale)" in texts and "n×: times the smallest bar" in texts
    assert "134×" in texts and "2.5×" in texts and "3,350" in texts  # 3350 / 25 = 134, 63 / 25 = 2.52
    assert sum(t.endswith("×") for t in texts) == 2  # the smallest bar has none


def test_labels_keep_their_significant_digits() -> None:
    svg = bars("b", [Bar("a", 1.06), Bar("b", 0.164417), Bar("c", 1.25)], "$", "t", "d")
    texts = [t.get_text() for t in BeautifulSoup(svg, "html.parser").find_all("text")]
    assert {"1.06", "0.164", "1.25"} <= set(texts)   # not "1", "0.164417"
    assert {"0", "0.5", "1", "1.5"} <= set(texts)    # ticks
    ticks = [t.get_text() for t in BeautifulSoup(bars("b", [Bar("a", 1.06)], "$", "t", "d"), "html.parser")("text")]
    assert "1.5" in ticks and "2" not in ticks        # 1.5 was drawn as "2"


def test_grouped_value_labels_stand_upright_when_their_bars_are_narrow() -> None:
    narrow = grouped_bars("g", [Bar(s, v, g) for g in ("a", "b", "c", "d") for s, v in (("x", 0.625), ("y", 320))],
                          "GiB", "t", "d")
    turned = [t for t in BeautifulSoup(narrow, "html.parser").find_all("text") if "rotate(-90" in t.get("transform", "")]
    assert {t.get_text() for t in turned} == {"0.625", "320"}
    wide = grouped_bars("g", [Bar("x", 2, "a"), Bar("x", 16, "b")], "GPUs", "t", "d", line=8, line_label="one node")
    soup = BeautifulSoup(wide, "html.parser")
    assert not [t for t in soup.find_all("text") if "rotate(-90" in t.get("transform", "") and t.get_text() != "GPUs"]
    assert "one node" in [t.get_text() for t in soup.find_all("text")]  # the dashed line is named in the legend
    assert soup.find("path", attrs={"stroke-dasharray": True}) is not None


def test_grouped_bars_stand_on_zero_and_meet_the_reference_line() -> None:
    svg = grouped_bars("g", [Bar("FP16", 8, "405B"), Bar("INT8", 4, "405B"), Bar("FP16", 2, "70B")], "GPUs", "t", "d",
                       line=8, line_label="one node")
    fp16, int8, small = _bars(svg)
    bottoms = {float(r["y"]) + float(r["height"]) for r in (fp16, int8, small)}
    assert max(bottoms) - min(bottoms) < 0.2  # one baseline
    assert float(fp16["height"]) == pytest.approx(2 * float(int8["height"]), abs=0.2)
    dashed = BeautifulSoup(svg, "html.parser").find("line", attrs={"stroke-dasharray": True})
    assert float(dashed["y1"]) == pytest.approx(float(fp16["y"]), abs=0.1)  # 8 GPUs: the line
    assert fp16.title.get_text() == "405B, FP16: 8 GPUs"  # a tooltip per bar


def test_axis_ticks_are_round_numbers_that_cover_the_data() -> None:
    assert nice_ticks(1000) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(13.44) == [0, 5, 10, 15]
    assert nice_ticks(0.7) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8])
    assert decade_ticks(25, 3350) == [10, 100, 1000, 10000]
    assert decade_ticks(100, 100) == [100, 1000]


@pytest.mark.parametrize(("chart", "message"), [
    (lambda: bars("b", [], "x", "t", "d"), "at least one bar"),
    (lambda: bars("b", [Bar("H100", float("nan"))], "x", "t", "d"), "'H100'"),
    (lambda: bars("b", [Bar("H100", -1)], "x", "t", "d"), "non-negative"),
    (lambda: log_bars("l", [Bar("PCIe", 0)], "x", "t", "d"), "positive"),
    (lambda: log_bars("l", [Bar("PCIe", 630), Bar("HBM", 3350)], "x", "t", "d"), "LOG_AXIS_DECADES"),
    (lambda: bars("b", [Bar("a bar label far longer than the chart is wide, which no phone could show", 1)],
                  "x", "t", "d"), "too long"),
    (lambda: grouped_bars("g", [Bar("FP16", 1, "a model name far too long to sit under its own bars " * 3)],
                          "x", "t", "d"), "too long"),
    (lambda: grouped_bars("g", [Bar("FP16", 12, "405B"), Bar("FP16", 6, "405B")], "x", "t", "d"), "twice"),
])
def test_charts_refuse_what_they_cannot_draw_truthfully(chart, message) -> None:
    with pytest.raises(ValueError, match=message):
        chart()


def test_charts_are_accessible_and_theme_neutral() -> None:
    svg = grouped_bars("g", [Bar("FP16", 12, "405B"), Bar("INT8", 6, "405B")], "GPUs", "GPUs needed",
                       "Twelve in FP16, six in INT8", line=8, line_label="one node")
    assert svg.startswith('<svg role="img" aria-labelledby="g-title g-desc"')
    assert '<title id="g-title">GPUs needed</title>' in svg
    assert '<desc id="g-desc">Twelve in FP16, six in INT8</desc>' in svg
    assert "currentColor" in svg and "#010203" not in svg  # text and axes follow the palette
    assert "<?xml" not in svg and "<style" not in svg and "Date" not in svg
    ids = [part.split('"')[0] for part in svg.split(' id="')[1:]]
    assert ids and all(i.startswith("g-") for i in ids)
    assert "<figcaption>Twelve" in figure(svg, "Twelve in FP16")


def _polyline(svg: str, i: int) -> list[tuple[float, float]]:
    line = BeautifulSoup(svg, "html.parser").find_all("polyline")[i]
    return [(float(a), float(b)) for a, b in (p.split(",") for p in line["points"].split())]


def test_a_roofline_rises_at_its_bandwidth_to_its_ridge_then_stays_level_on_log_log_axes() -> None:
    # H100-like: 1,979 TFLOP/s over 3.35 TB/s, ridge 590.7 FLOP/byte; A100-like: 312 over 2.04, ridge 152.9
    roofs = [Roof("fast", 1979, 3.35), Roof("slow", 312, 2.04)]
    marks = [Mark("decode", 2.0, 4.0), Mark("prefill", 2000, 900)]
    svg = roofline("r", roofs, marks, "FLOP per byte", "TFLOP/s", "t", "d")
    (x0, y0), (xr, yr), (x1, y1) = _polyline(svg, 0)
    assert x0 < xr and y0 > yr  # rising (screen y falls) up to the ridge
    assert y1 == yr and x1 > xr  # level past the ridge
    ticks = BeautifulSoup(svg, "html.parser").find_all("text")
    labels = [t.get_text() for t in ticks]
    assert "1" in labels and "10,000" in labels  # decade ticks on both axes
    # the slow roof's ridge sits left of and below the fast one's: ridge 153 < 591, peak 312 < 1,979
    (_, _), (xs, ys), (_, _) = _polyline(svg, 1)
    assert xs < xr and ys > yr
    # the ridge's x over the peak's decades: log10(590.7 / 152.9) decades apart in x as on the axis
    xt = {t.get_text(): float(t["x"]) for t in ticks if t.get("text-anchor") == "middle" and t.get_text()[0].isdigit()}
    decade = xt["10"] - xt["1"]
    assert xr - xs == pytest.approx(decade * 0.5870, abs=0.3)  # log10(590.7/152.9) = 0.587
    # each mark drawn with its tooltip, and a legend entry for every roof and mark
    assert "decode: 2 FLOP per byte, 4 TFLOP/s" in svg and all(f">{n}<" in svg for n in ("fast", "slow", "prefill"))


@pytest.mark.parametrize(("roofs", "marks", "message"), [
    ([], [], "at least one roof"),
    ([Roof("r", 0, 1)], [], "finite positive"),
    ([Roof("r", 1, 1)], [Mark("m", -1, 1)], "finite positive"),
    ([Roof(str(i), 1, 1) for i in range(7)], [], "at most"),
])
def test_a_roofline_refuses_what_a_log_axis_cannot_show(roofs, marks, message) -> None:
    with pytest.raises(ValueError, match=message):
        roofline("r", roofs, marks, "x", "y", "t", "d")


def test_grouped_bars_on_a_log_axis_rise_from_a_power_of_ten_with_room_for_their_labels() -> None:
    data = [Bar(s, v * c, f"{c} seqs") for c in (1, 4, 16, 32) for s, v in (("8K", 0.625), ("32K", 2.5), ("128K", 10))]
    svg = grouped_bars("g", data, "GiB", "t", "d", line=3.0, line_label="room", log=True)
    soup = BeautifulSoup(svg, "html.parser")
    texts = [t.get_text() for t in soup.find_all("text")]
    assert "GiB (log scale)" in texts
    ticks = [t.get_text() for t in soup.find_all("text") if t.get("text-anchor") == "end"]
    assert ticks[:3] == ["0.1", "1", "10"]  # powers of ten, from the one below the smallest bar
    rects = _bars(svg)
    bottoms = {round(float(r["y"]) + float(r["height"]), 1) for r in rects}
    assert len(bottoms) == 1  # one baseline, the lowest power of ten
    # equal ratios are equal steps: 0.625 -> 2.5 -> 10 (x4 each) rise by the same height
    h = [float(r["height"]) for r in rects[:3]]
    assert h[1] - h[0] == pytest.approx(h[2] - h[1], abs=0.2)
    # every value label sits under the axis title, inside the plot
    title_y = float(next(t for t in soup.find_all("text") if t.get_text() == "GiB (log scale)")["y"])
    for t in soup.find_all("text"):
        if "rotate(-90" in t.get("transform", ""):
            assert float(t["y"]) - charts._text_width(t.get_text(), charts.SMALL) > title_y
    with pytest.raises(ValueError, match="LOG_AXIS_DECADES"):
        grouped_bars("g", [Bar("a", 2, "x"), Bar("b", 3, "x")], "GiB", "t", "d", log=True)
