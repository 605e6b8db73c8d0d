"""Charts drawn at build time as inline SVG.

Each chart is written element by element with the standard library's ElementTree: bars are
`<rect>`s, labels are `<text>`, and nothing else is in it. No plotting library: a chart is a few
milliseconds of the build, and its SVG needs no post-processing to follow the site's palettes
(CONTRIBUTING.md, "Where a build's time goes", says what a plotting library cost).

- Deterministic: same input, same bytes (no dates, no random ids; the only ids are the chart's
  `<title>` and `<desc>`, prefixed by its page-unique name).
- Readable in Material's light and dark palettes: text, axes and grid use `currentColor`, so they
  take the page's text colour; data colours are mid-tones that read on both backgrounds.
- Accessible: the chart is `role="img"` labelled by its `<title>` and `<desc>`, which say in words
  what it shows; each bar also has a `<title>` (its label and value), shown on hover.
- Legible on a phone: the viewBox is `WIDTH` units wide and the chart never wider than its column
  (`MAX_WIDTH`), so at a 375 px viewport (a column of about 341 px) text of `SMALL` units renders at
  about 11.4 CSS px and `FONT` at 12.3 (tests/browser/test_chart_text.py measures every label). That
  leaves room for about `WIDTH / (CHAR × FONT)` = 44 characters across a chart, so axis titles sit
  above the plot rather than turned beside it, legends wrap, and a value label too wide for its bar
  is turned upright.
- Wide on a desktop: every chart is drawn a second time `WIDE` units wide (`_responsive`), named `<name>-wide`,
  and the stylesheet shows it instead of the phone's from 60em up, at most `WIDE_MAX_WIDTH`: the same text sizes
  over a plot nearly twice as wide, rather than the phone's chart scaled up.
- A log axis where the data spans `LOG_AXIS_DECADES` (a decade) or more; on a log axis each bar also says
  how many times the smallest bar it is, since bar lengths there no longer show the ratio.
- Text is laid out without measuring fonts: category labels sit on their own line above each
  horizontal bar, so their length never collides with the bars; where a width must be known
  (value labels, legend, group labels), it is estimated generously per character, and a label too
  long for its slot is refused rather than drawn over its neighbour.
"""

from __future__ import annotations

import functools
import html
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET

from snippets.render.fmt import number

WIDTH = 360.0
"""viewBox width: narrow enough that the chart's text stays legible when the column is a phone's."""
FONT = 13.0
"""Labels, legends and axis titles, in viewBox units."""
SMALL = 12.0
"""Value and tick labels, in viewBox units: 12 x 341 / 360 = 11.4 CSS px at a 375 px viewport."""
MAX_WIDTH = "28rem"
"""The widest a chart is drawn, so its text does not grow much past the prose's on a desktop."""
WIDE = 640.0
"""viewBox width of a chart's second rendering, shown where the column is wide (docs/stylesheets/extra.css, from
60em): the same text sizes in user units over a plot nearly twice as wide."""
WIDE_MAX_WIDTH = "640px"
"""The widest the wide rendering is drawn: its text at its size in user units, FONT and SMALL px."""
LOG_AXIS_DECADES = 1.0
"""The fewest powers of ten the positive values must span (log10 of largest ÷ smallest) before a chart may
use a log axis, and from which `tier_bars`, `bars` and `lines` (left to decide) use one: past a tenfold range a
linear axis squeezes the small values into a sliver (the bandwidth cliff, 3,350 GB/s against 50, spans 1.8
decades; a log axis shows each step down, and each bar prints its ratio to the smallest). Below it a linear
axis shows the ratios as lengths, which a log axis would flatten."""
CHAR = 0.62  # estimated advance of one character, in ems: generous for proportional sans-serif faces
PALETTE = ("#4c8bf5", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2")
_GRID_OPACITY = "0.18"


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    group: str = ""


def _n(x: float) -> str:
    """A coordinate, to a tenth of a unit: short, and the same on every machine."""
    text = f"{x:.1f}"
    return "0" if text == "-0.0" else text.removesuffix(".0")


def _fmt_number(x: float) -> str:
    """A tick or value label: whole from 100 up (3,350), else three significant digits (1.06, 0.164, 1.5)."""
    if x == 0 or abs(x) >= 100:
        return number(x)
    decimals = max(0, 2 - math.floor(math.log10(abs(x))))
    text = number(x, decimals)
    return text.rstrip("0").rstrip(".") if "." in text else text


def decades(values: Sequence[float]) -> float:
    """How many powers of ten the values span: log10(largest ÷ smallest); 0 if any is zero or negative."""
    if not values or min(values) <= 0:
        return 0.0
    return math.log10(max(values) / min(values))


def wants_log_axis(values: Sequence[float]) -> bool:
    """Whether the values span `LOG_AXIS_DECADES` or more, the rule for drawing them on a log axis."""
    return decades(values) >= LOG_AXIS_DECADES - 1e-9


def _ratio(x: float) -> str:
    """A bar against the smallest, for a log axis: 67×, 7.4×, 1.5×."""
    return f"{x:,.0f}×" if x >= 20 else f"{x:.1f}×"


def _text_width(text: str, size: float = FONT) -> float:
    return len(text) * CHAR * size


def _check(bars: Sequence[Bar], log: bool = False) -> None:
    if not bars:
        raise ValueError("a chart needs at least one bar")
    for b in bars:
        if not math.isfinite(b.value) or b.value < 0 or (log and b.value <= 0):
            kind = "positive" if log else "non-negative"
            raise ValueError(f"bar {b.label!r}: value {b.value!r} is not a finite {kind} number")


def svg_root(name: str, title: str, desc: str, width: float, height: float, *, cls: str, max_width: str,
             font: float) -> ET.Element:
    """An accessible SVG root (role img, named by its title and description) that scales to its column and
    draws in currentColor; charts and diagrams (snippets.render.diagrams) both start from it."""
    svg = ET.Element("svg", {
        "role": "img",
        "aria-labelledby": f"{name}-title {name}-desc",
        "class": cls,
        "style": f"width:100%;height:auto;max-width:{max_width}",
        "viewBox": f"0 0 {_n(width)} {_n(height)}",
        "xmlns": "http://www.w3.org/2000/svg",
        "font-size": _n(font),
        "fill": "currentColor",
    })
    ET.SubElement(svg, "title", {"id": f"{name}-title"}).text = title
    ET.SubElement(svg, "desc", {"id": f"{name}-desc"}).text = desc
    return svg


def _root(name: str, title: str, desc: str, height: float, width: float) -> ET.Element:
    wide = width > WIDTH
    return svg_root(name, title, desc, width, height, cls="sa-chart sa-chart--wide" if wide else "sa-chart sa-chart--narrow",
                    max_width=WIDE_MAX_WIDTH if wide else MAX_WIDTH, font=FONT)


def _responsive(draw: Callable[..., str]) -> Callable[..., str]:
    """A chart drawn twice: `WIDTH` units wide for a phone's column and `WIDE` units wide for a desktop's, the second
    named `<name>-wide`; the page's stylesheet shows one of them. Given `width=`, the one rendering."""
    @functools.wraps(draw)
    def both(name: str, *args: Any, **kw: Any) -> str:
        if "width" in kw:
            return draw(name, *args, **kw)
        return draw(name, *args, width=WIDTH, **kw) + "\n" + draw(f"{name}-wide", *args, width=WIDE, **kw)
    return both


def _fits(text: str, room: float, what: str, size: float = FONT) -> str:
    if _text_width(text, size) > room:
        raise ValueError(f"{what} {text!r} is too long for the chart's {room:.0f}-unit line: shorten it")
    return text


_LEGEND_ROW = 18.0


def _legend(parent: ET.Element, entries: Sequence[tuple[str, str, bool]], width: float) -> float:
    """Legend entries (label, colour, dashed line rather than a swatch) left to right, wrapped to the
    chart's width; the height they take."""
    x, y = 0.0, 0.0
    for label, colour, dashed in entries:
        w = (24 if dashed else 14) + _text_width(label)
        if x > 0 and x + w > width:
            x, y = 0.0, y + _LEGEND_ROW
        _fits(label, width - (24 if dashed else 14), "legend entry")
        if dashed:
            ET.SubElement(parent, "path", {"d": f"M{_n(x)} {_n(y + 11)}h20", "stroke": "currentColor",
                                           "stroke-dasharray": "5 4"})
            _text(parent, x + 24, y + 15, label)
        else:
            _rect(parent, x, y + 6, 10, 10, colour, label)
            _text(parent, x + 14, y + 15, label)
        x += w + 16
    return y + _LEGEND_ROW + 8


def _text(parent: ET.Element, x: float, y: float, text: str, anchor: str = "start", size: float = FONT,
          transform: str = "") -> None:
    attrs = {"x": _n(x), "y": _n(y)}
    if anchor != "start":
        attrs["text-anchor"] = anchor
    if size != FONT:
        attrs["font-size"] = _n(size)
    if transform:
        attrs["transform"] = transform
    ET.SubElement(parent, "text", attrs).text = text


def _line(parent: ET.Element, x1: float, y1: float, x2: float, y2: float, **attrs: str) -> None:
    ET.SubElement(parent, "line", {"x1": _n(x1), "y1": _n(y1), "x2": _n(x2), "y2": _n(y2),
                                   "stroke": "currentColor", **attrs})


def _rect(parent: ET.Element, x: float, y: float, w: float, h: float, colour: str, tip: str) -> None:
    rect = ET.SubElement(parent, "rect", {"x": _n(x), "y": _n(y), "width": _n(w), "height": _n(h), "fill": colour})
    ET.SubElement(rect, "title").text = tip


def _serialise(svg: ET.Element) -> str:
    return ET.tostring(svg, encoding="unicode")


def nice_ticks(top: float, target: int = 5) -> list[float]:
    """Ticks from 0 at a step of 1, 2 or 5 times a power of ten, the last at or above `top`."""
    if not math.isfinite(top) or top <= 0:
        raise ValueError(f"the axis top must be a positive number, not {top!r}")
    raw = top / target
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))
    count = math.ceil(top / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def decade_ticks(low: float, high: float) -> list[float]:
    """Powers of ten from the one at or below `low` to the one at or above `high`."""
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [10.0 ** k for k in range(lo, max(hi, lo + 1) + 1)]


_ROW = 34.0  # one horizontal bar: its label line, the bar, a gap
_BAR = 14.0
_BAR_AT = 17.0  # the bar's top, below its row's top
_TOP = 4.0
_AXIS = 42.0  # tick labels and the axis title under the bars
_NOTE = 16.0  # a second line under the axis title: what a log chart's ratios mean


def _horizontal(name: str, bars: Sequence[Bar], axis_label: str, title: str, desc: str, log: bool,
                colours: Sequence[str], width: float) -> str:
    _check(bars, log=log)
    values = [b.value for b in bars]
    if log and not wants_log_axis(values):
        raise ValueError(f"the values span {decades(values):.2f} powers of ten, fewer than LOG_AXIS_DECADES "
                         f"({LOG_AXIS_DECADES:g}): draw them on a linear axis, where lengths show the ratios")
    ticks = decade_ticks(min(values) / 2, max(values)) if log else nice_ticks(max(values))
    smallest = min(values)
    ratios = [_ratio(v / smallest) if log and v > smallest else "" for v in values]
    labels = [_fmt_number(v) for v in values]
    ends = [_text_width(t, SMALL) + (_text_width(r, SMALL) + 6 if r else 0) for t, r in zip(labels, ratios, strict=True)]
    x0 = _text_width(_fmt_number(ticks[0]), SMALL) / 2 + 2  # room for the first tick's label
    room = max(max(ends) + 8, _text_width(_fmt_number(ticks[-1]), SMALL) / 2 + 2)  # value labels, the last tick
    plot_w = width - x0 - room
    if log:
        lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])

        def x_of(v: float) -> float:
            return x0 + (math.log10(v) - lo) / (hi - lo) * plot_w
    else:
        def x_of(v: float) -> float:
            return x0 + v / ticks[-1] * plot_w

    plot_h = _TOP + _ROW * len(bars)
    svg = _root(name, title, desc, plot_h + _AXIS + (_NOTE if log else 0), width)
    grid = ET.SubElement(svg, "g", {"stroke-opacity": _GRID_OPACITY})
    for t in ticks:
        _line(grid, x_of(t), 0, x_of(t), plot_h)
    for i, b in enumerate(bars):
        top = _TOP + i * _ROW
        _text(svg, x0, top + FONT - 1, _fits(b.label, width - x0, "bar label"))
        end = max(x_of(b.value), x0 + 1)
        _rect(svg, x0, top + _BAR_AT, end - x0, _BAR, colours[i % len(colours)],
              f"{b.label}: {labels[i]} {axis_label}" + (f", {ratios[i]} the smallest" if ratios[i] else ""))
        baseline = top + _BAR_AT + _BAR / 2 + SMALL * 0.35
        _text(svg, end + 4, baseline, labels[i], size=SMALL)
        if ratios[i]:
            _text(svg, end + 4 + _text_width(labels[i], SMALL) + 6, baseline, ratios[i], size=SMALL)
    _line(svg, x0, 0, x0, plot_h)
    for t in ticks:
        _text(svg, x_of(t), plot_h + 16, _fmt_number(t), anchor="middle", size=SMALL)
    axis_title = f"{axis_label} (log scale)" if log else axis_label
    _text(svg, width / 2, plot_h + 35, _fits(axis_title, width, "axis title"), anchor="middle")
    if log:
        _text(svg, width / 2, plot_h + 35 + _NOTE, "n×: times the smallest bar", anchor="middle", size=SMALL)
    return _serialise(svg)


@dataclass(frozen=True, slots=True)
class Stack:
    """One bar of a `stacked_bars` chart: its label and its parts, (part name, value), in the legend's order."""

    label: str
    parts: Sequence[tuple[str, float]]

    @property
    def total(self) -> float:
        return sum(v for _, v in self.parts)


@_responsive
def stacked_bars(name: str, stacks: Sequence[Stack], axis_label: str, title: str, desc: str, *,
                 width: float = WIDTH) -> str:
    """Horizontal bars split into coloured parts (one colour per part name, named in the legend), each bar's label
    above it and its total after it; each part's tooltip gives its value and its share of the bar. Parts of
    zero in every bar are left out of the legend."""
    if not stacks:
        raise ValueError("a chart needs at least one bar")
    names = list(dict.fromkeys(n for s in stacks for n, v in s.parts if v > 0))
    if len(names) > len(PALETTE):
        raise ValueError(f"{len(names)} parts, more than the palette's {len(PALETTE)} colours")
    for s in stacks:
        if any(v < 0 or not math.isfinite(v) for _, v in s.parts) or s.total <= 0:
            raise ValueError(f"bar {s.label!r}: parts must be non-negative and add up to more than zero")
    colour = {n: PALETTE[i] for i, n in enumerate(names)}
    totals = [_fmt_number(s.total) for s in stacks]
    ticks = nice_ticks(max(s.total for s in stacks))
    x0 = _text_width(_fmt_number(ticks[0]), SMALL) / 2 + 2
    room = max(max(_text_width(t, SMALL) for t in totals) + 8, _text_width(_fmt_number(ticks[-1]), SMALL) / 2 + 2)
    plot_w = width - x0 - room

    def x_of(v: float) -> float:
        return x0 + v / ticks[-1] * plot_w

    svg = _root(name, title, desc, 0, width)
    legend_h = _legend(svg, [(n, colour[n], False) for n in names], width)
    top0 = legend_h + 4
    plot_h = _TOP + _ROW * len(stacks)
    svg.set("viewBox", f"0 0 {_n(width)} {_n(top0 + plot_h + _AXIS)}")
    grid = ET.SubElement(svg, "g", {"stroke-opacity": _GRID_OPACITY})
    for t in ticks:
        _line(grid, x_of(t), top0, x_of(t), top0 + plot_h)
    for i, s in enumerate(stacks):
        top = top0 + _TOP + i * _ROW
        _text(svg, x0, top + FONT - 1, _fits(s.label, width - x0, "bar label"))
        at = 0.0
        for part, v in s.parts:
            if v <= 0:
                continue
            _rect(svg, x_of(at), top + _BAR_AT, max(x_of(at + v) - x_of(at), 0.5), _BAR, colour[part],
                  f"{s.label}, {part}: {_fmt_number(v)} {axis_label} ({v / s.total:.0%})")
            at += v
        baseline = top + _BAR_AT + _BAR / 2 + SMALL * 0.35
        _text(svg, x_of(at) + 4, baseline, totals[i], size=SMALL)
    _line(svg, x0, top0, x0, top0 + plot_h)
    for t in ticks:
        _text(svg, x_of(t), top0 + plot_h + 16, _fmt_number(t), anchor="middle", size=SMALL)
    _text(svg, width / 2, top0 + plot_h + 35, _fits(axis_label, width, "axis title"), anchor="middle")
    return _serialise(svg)


@_responsive
def log_bars(name: str, bars: Sequence[Bar], unit: str, title: str, desc: str, *, width: float = WIDTH) -> str:
    """Horizontal bars on a log axis, in the given order, each labelled with its value and with how many times the
    smallest bar it is, each in its own colour. Refused unless the values span `LOG_AXIS_DECADES`."""
    return _horizontal(name, bars, unit, title, desc, log=True, colours=PALETTE, width=width)


@_responsive
def bars(name: str, bars: Sequence[Bar], xlabel: str, title: str, desc: str, *, width: float = WIDTH) -> str:
    """Horizontal bars in one colour, in the given order, each labelled with its value: on a linear axis from zero,
    or on a log axis where the values span `LOG_AXIS_DECADES` (each bar then also says its ratio to the smallest)."""
    log = wants_log_axis([b.value for b in bars])
    return _horizontal(name, bars, xlabel, title, desc, log=log, colours=PALETTE[:1], width=width)


@_responsive
def tier_bars(name: str, bars: Sequence[Bar], unit: str, title: str, desc: str, *, width: float = WIDTH) -> str:
    """Horizontal bars each in its own colour, on a log axis where the values span `LOG_AXIS_DECADES` (with each
    bar's ratio to the smallest printed on it), else on a linear axis from zero."""
    log = wants_log_axis([b.value for b in bars])
    return _horizontal(name, bars, unit, title, desc, log=log, colours=PALETTE, width=width)


_TITLE_H = 18.0  # a y axis title, level, above the plot
_TOP_TICK = 8.0  # what the top tick label, centred on the plot's top edge, reaches above it: clear of the title


def _y_axis(svg: ET.Element, ylabel: str, legend_h: float, ticks: list[float], left: float, plot_w: float,
            y_of: Callable[[float], float], width: float) -> ET.Element:
    """The y axis's title (level, above the plot), its grid lines and tick labels; returns the grid group."""
    _text(svg, 0, legend_h + 10, _fits(ylabel, width, "axis title"))
    grid = ET.SubElement(svg, "g", {"stroke-opacity": _GRID_OPACITY})
    for t in ticks:
        _line(grid, left, y_of(t), left + plot_w, y_of(t))
        _text(svg, left - 4, y_of(t) + SMALL * 0.35, _fmt_number(t), anchor="end", size=SMALL)
    return grid


@_responsive
def grouped_bars(
    name: str, bars: Sequence[Bar], ylabel: str, title: str, desc: str, line: float | None = None,
    line_label: str = "", *, log: bool = False, width: float = WIDTH,
) -> str:
    """Vertical bars grouped by `group` (e.g. model) and coloured by `label` (e.g. precision),
    with an optional dashed horizontal reference line (e.g. GPUs in one node), named in the legend.
    Value labels too wide for their bars stand upright above them. With `log`, the y axis runs over powers of ten
    (refused unless the values span `LOG_AXIS_DECADES`), each bar rising from the lowest."""
    _check(bars, log=log)
    if log and not wants_log_axis(values := [b.value for b in bars]):
        raise ValueError(f"the values span {decades(values):.2f} powers of ten, fewer than LOG_AXIS_DECADES "
                         f"({LOG_AXIS_DECADES:g}): draw them on a linear axis, where lengths show the ratios")
    groups = list(dict.fromkeys(b.group for b in bars))
    series = list(dict.fromkeys(b.label for b in bars))
    cell: dict[tuple[str, str], Bar] = {}
    for b in bars:  # two bars in one place would hide one of them
        if cell.setdefault((b.group, b.label), b) is not b:
            raise ValueError(f"bar {b.label!r} appears twice in group {b.group!r}")
    top_value = max([b.value for b in bars] + [line or 0])
    svg = _root(name, title, desc, 0, width)  # the height is set once the legend is laid out
    entries = [(s, PALETTE[i % len(PALETTE)], False) for i, s in enumerate(series)]
    if line is not None:
        entries.append((line_label, "", True))
    legend_h = _legend(svg, entries, width)
    plot_top, bottom, plot_h = legend_h + _TITLE_H + _TOP_TICK, 26.0, 230.0
    low_value = min([b.value for b in bars] + ([line] if line else []))
    ticks = decade_ticks(low_value, top_value) if log else nice_ticks(top_value * 1.12)
    left = max(_text_width(_fmt_number(t), SMALL) for t in ticks) + 6  # tick labels
    plot_w = width - left - 4
    slot = plot_w / len(groups)
    for g in groups:
        if _text_width(g) > slot - 4:
            raise ValueError(f"group label {g!r} is too long for its {slot:.0f}-unit slot: shorten it or chart fewer groups")
    bar_w = 0.8 * slot / len(series)
    widest = max(_text_width(_fmt_number(b.value), SMALL) for b in bars)
    upright = widest > bar_w  # a level label would run into its neighbour's
    if log:  # each bar's label needs room above it, under the top of the axis: a decade more until all have it
        def room(b: Bar) -> float:
            return math.log10(ticks[-1] / b.value) / math.log10(ticks[-1] / ticks[0]) * plot_h

        def label_h(b: Bar) -> float:
            return _text_width(_fmt_number(b.value), SMALL) if upright else SMALL

        while any(room(b) < label_h(b) + 6 for b in bars):
            ticks.append(ticks[-1] * 10)
        left = max(_text_width(_fmt_number(t), SMALL) for t in ticks) + 6
        plot_w = width - left - 4
        slot = plot_w / len(groups)
        bar_w = 0.8 * slot / len(series)
    elif upright:  # the tallest bar's label needs room above it, under the top of the axis
        ticks = nice_ticks(max(top_value * 1.12, max(b.value for b in bars) * plot_h / (plot_h - widest - 6)))
        left = max(_text_width(_fmt_number(t), SMALL) for t in ticks) + 6
        plot_w = width - left - 4
        slot = plot_w / len(groups)
        bar_w = 0.8 * slot / len(series)
    svg.set("viewBox", f"0 0 {_n(width)} {_n(plot_top + plot_h + bottom)}")

    def y_of(v: float) -> float:
        if log:
            return plot_top + plot_h - math.log10(v / ticks[0]) / math.log10(ticks[-1] / ticks[0]) * plot_h
        return plot_top + plot_h - v / ticks[-1] * plot_h

    base = ticks[0]  # where the bars rise from: 0, or on a log axis the lowest power of ten
    _y_axis(svg, f"{ylabel} (log scale)" if log else ylabel, legend_h, ticks, left, plot_w, y_of, width)
    for g_i, g in enumerate(groups):
        centre = left + (g_i + 0.5) * slot
        for i, s in enumerate(series):
            bar = cell.get((g, s))
            if bar is None:  # this group has no bar in this series: its place stays empty
                continue
            x = centre + (i - len(series) / 2) * bar_w
            _rect(svg, x + bar_w * 0.025, y_of(bar.value), bar_w * 0.95, y_of(base) - y_of(bar.value),
                  PALETTE[i % len(PALETTE)], f"{g}, {s}: {_fmt_number(bar.value)} {ylabel}")
            if upright:
                cx, cy = x + bar_w / 2 + SMALL * 0.35, y_of(bar.value) - 3
                _text(svg, cx, cy, _fmt_number(bar.value), size=SMALL, transform=f"rotate(-90 {_n(cx)} {_n(cy)})")
            else:
                _text(svg, x + bar_w / 2, y_of(bar.value) - 3, _fmt_number(bar.value), anchor="middle", size=SMALL)
        _text(svg, centre, plot_top + plot_h + 18, g, anchor="middle")
    _line(svg, left, y_of(base), left + plot_w, y_of(base))
    if line is not None:
        _line(svg, left, y_of(line), left + plot_w, y_of(line), **{"stroke-dasharray": "5 4"})
    return _serialise(svg)


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a `lines` chart: its legend label and its (x, y) points, drawn in the given order."""

    label: str
    points: Sequence[tuple[float, float]]
    tips: Sequence[str] = ()
    """A tooltip per point (its concurrency, say); empty: the point's x and y."""
    joined: bool = True
    """False: markers only, no line between them (a scatter of points in no order)."""


_LINES_PLOT_H = 240.0
_LINES_BOTTOM = 42.0  # tick labels and the x axis title


@_responsive
def lines(name: str, series: Sequence[Series], xlabel: str, ylabel: str, title: str, desc: str, *,
          log_x: bool | None = None, log_y: bool | None = None, width: float = WIDTH) -> str:
    """Lines with a marker on every point, each series in its own colour, with a legend above. Each marker has a
    tooltip. An axis is linear from zero, or logarithmic (between the powers of ten around the data) where
    `log_x` / `log_y` say so; None (the default) lets the data decide, by the site's rule (`wants_log_axis`: the values span
    `LOG_AXIS_DECADES` or more). A point that is not a finite non-negative number (positive, on a log axis), an
    empty series, two series of one label or a legend entry wider than the chart is refused."""
    if not series:
        raise ValueError("a chart needs at least one series")
    if len({s.label for s in series}) != len(series):
        raise ValueError("two series share a label: the legend could not tell them apart")
    for s in series:
        if not s.points:
            raise ValueError(f"series {s.label!r} has no points")
        if s.tips and len(s.tips) != len(s.points):
            raise ValueError(f"series {s.label!r}: {len(s.tips)} tooltips for {len(s.points)} points")
        for x, y in s.points:
            if not (math.isfinite(x) and math.isfinite(y)) or x < 0 or y < 0:
                raise ValueError(f"series {s.label!r}: point ({x!r}, {y!r}) is not a pair of finite non-negative numbers")
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    lx = wants_log_axis(xs) if log_x is None else log_x
    ly = wants_log_axis(ys) if log_y is None else log_y
    for axis, log, vals in (("x", lx, xs), ("y", ly, ys)):
        if log and min(vals) <= 0:
            raise ValueError(f"a log {axis} axis cannot show {min(vals)!r}")
    xticks = decade_ticks(min(xs), max(xs)) if lx else nice_ticks(max(max(xs), 1e-12) * 1.02)
    yticks = decade_ticks(min(ys), max(ys)) if ly else nice_ticks(max(max(ys), 1e-12) * 1.05)
    left = max(_text_width(_fmt_number(t), SMALL) for t in yticks) + 6  # tick labels
    right = _text_width(_fmt_number(xticks[-1]), SMALL) / 2 + 4  # the last x tick's label
    plot_w = width - left - right
    svg = _root(name, title, desc, 0, width)  # the height is set once the legend is laid out
    legend_h = _legend(svg, [(s.label, PALETTE[i % len(PALETTE)], False) for i, s in enumerate(series)], width)
    top, plot_h = legend_h + _TITLE_H, _LINES_PLOT_H
    svg.set("viewBox", f"0 0 {_n(width)} {_n(top + plot_h + _LINES_BOTTOM)}")

    def share(v: float, ticks: list[float], log: bool) -> float:
        """Where `v` falls between the axis's first and last tick, 0 to 1."""
        if log:
            return (math.log10(v) - math.log10(ticks[0])) / (math.log10(ticks[-1]) - math.log10(ticks[0]))
        return v / ticks[-1]

    def x_of(v: float) -> float:
        return left + share(v, xticks, lx) * plot_w

    def y_of(v: float) -> float:
        return top + plot_h - share(v, yticks, ly) * plot_h

    grid = _y_axis(svg, ylabel, legend_h, yticks, left, plot_w, y_of, width)
    labelled = _spaced(xticks, x_of)
    for t in xticks:
        _line(grid, x_of(t), top, x_of(t), top + plot_h)
        if t in labelled:
            _text(svg, x_of(t), top + plot_h + 16, _fmt_number(t), anchor="middle", size=SMALL)
    _text(svg, left + plot_w / 2, top + plot_h + 35, _fits(xlabel, width, "axis title"), anchor="middle")
    _line(svg, left, top, left, top + plot_h)
    _line(svg, left, top + plot_h, left + plot_w, top + plot_h)
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        g = ET.SubElement(svg, "g", {"fill": colour, "stroke": colour})
        if s.joined:
            ET.SubElement(g, "polyline", {
                "points": " ".join(f"{_n(x_of(px))},{_n(y_of(py))}" for px, py in s.points),
                "fill": "none", "stroke-width": "2",
            })
        for j, (px, py) in enumerate(s.points):
            dot = ET.SubElement(g, "circle", {"cx": _n(x_of(px)), "cy": _n(y_of(py)), "r": "2.5"})
            tip = s.tips[j] if s.tips else f"{_fmt_number(px)} {xlabel}, {_fmt_number(py)} {ylabel}"
            ET.SubElement(dot, "title").text = f"{s.label}: {tip}"
    return _serialise(svg)


def _spaced(ticks: Sequence[float], at: Callable[[float], float], gap: float = 6.0) -> set[float]:
    """The ticks of a horizontal axis that get a label: every one where the labels, centred on their ticks, keep
    `gap` apart; otherwise every second from the first, or every third, and so on (the grid keeps every tick). Many
    decades on a narrow chart would otherwise run '100,000' into '1,000,000'."""
    for step in range(1, len(ticks) + 1):
        shown = list(ticks[::step])
        if all(at(b) - at(a) >= (_text_width(_fmt_number(a), SMALL) + _text_width(_fmt_number(b), SMALL)) / 2 + gap
               for a, b in itertools.pairwise(shown)):
            return set(shown)
    return {ticks[0]}


def figure(svg: str, caption: str) -> str:
    """The chart as a captioned HTML figure, ready to print from an exec block."""
    return f'<figure class="sa-figure">\n{svg}\n<figcaption>{html.escape(caption)}</figcaption>\n</figure>\n'


@dataclass(frozen=True, slots=True)
class Roof:
    """One accelerator's roofline: its peak (FLOP/s, in the chart's unit) and its memory bandwidth (the same unit
    per FLOP/byte of intensity, so that the sloped roof is `bandwidth × intensity`)."""

    label: str
    peak: float
    bandwidth: float

    @property
    def ridge(self) -> float:
        return self.peak / self.bandwidth


@dataclass(frozen=True, slots=True)
class Mark:
    """A measured or predicted point on a roofline chart: (intensity, attainable) and its tooltip."""

    label: str
    x: float
    y: float
    tip: str = ""


_MARK_SHAPES = ("circle", "square", "diamond", "triangle")
_MARK_R = 5.0


def _mark(parent: ET.Element, shape: str, x: float, y: float, tip: str, r: float = _MARK_R) -> None:
    """A point marker in currentColor with a thin outline in the page's background, so it reads over a roof line."""
    attrs = {"style": "stroke:var(--md-default-bg-color,#fff)", "stroke-width": "1.2"}
    if shape == "circle":
        el = ET.SubElement(parent, "circle", {"cx": _n(x), "cy": _n(y), "r": _n(r), **attrs})
    elif shape == "square":
        el = ET.SubElement(parent, "rect", {"x": _n(x - r * 0.9), "y": _n(y - r * 0.9), "width": _n(r * 1.8),
                                            "height": _n(r * 1.8), **attrs})
    elif shape == "diamond":
        el = ET.SubElement(parent, "path", {"d": f"M{_n(x)} {_n(y - r * 1.2)}L{_n(x + r * 1.2)} {_n(y)}"
                                                 f"L{_n(x)} {_n(y + r * 1.2)}L{_n(x - r * 1.2)} {_n(y)}Z", **attrs})
    else:
        el = ET.SubElement(parent, "path", {"d": f"M{_n(x)} {_n(y - r * 1.2)}L{_n(x + r * 1.1)} {_n(y + r * 0.8)}"
                                                 f"L{_n(x - r * 1.1)} {_n(y + r * 0.8)}Z", **attrs})
    if tip:
        ET.SubElement(el, "title").text = tip


@_responsive
def roofline(name: str, roofs: Sequence[Roof], marks: Sequence[Mark], xlabel: str, ylabel: str, title: str,
             desc: str, *, width: float = WIDTH) -> str:
    """A log-log roofline: each roof a line (rising at its bandwidth up to its ridge, then level at its peak) in its
    own colour, each mark a shape in the text colour, both named in the legend above; a dot on each roof's ridge.
    Both axes span whole decades around the roofs' ridges and the marks. Refused: no roof, more roofs than
    colours or marks than shapes, a value that is not a finite positive number, a legend entry wider than the
    chart."""
    if not roofs:
        raise ValueError("a roofline chart needs at least one roof")
    if len(roofs) > len(PALETTE) or len(marks) > len(_MARK_SHAPES):
        raise ValueError(f"at most {len(PALETTE)} roofs and {len(_MARK_SHAPES)} marks")
    for v, what in [(x, f"roof {r.label!r}") for r in roofs for x in (r.peak, r.bandwidth)] + \
                   [(x, f"mark {m.label!r}") for m in marks for x in (m.x, m.y)]:
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{what}: {v!r} is not a finite positive number")
    ridges = [r.ridge for r in roofs]
    xs = [m.x for m in marks] + ridges
    x_lo, x_hi = min(xs) / 2, max(xs) * 2
    xticks = decade_ticks(x_lo, x_hi)
    ys = [m.y for m in marks] + [r.peak for r in roofs] + [r.bandwidth * xticks[0] for r in roofs]
    yticks = decade_ticks(min(ys), max(ys) * 1.2)
    left = max(_text_width(_fmt_number(t), SMALL) for t in yticks) + 6
    right = _text_width(_fmt_number(xticks[-1]), SMALL) / 2 + 4
    plot_w = width - left - right
    svg = _root(name, title, desc, 0, width)
    legend_h = _legend(svg, [(r.label, PALETTE[i], False) for i, r in enumerate(roofs)], width)
    # the marks' legend: a shape and a label each, wrapped like the roofs'
    x, y = 0.0, legend_h - 8
    for i, m in enumerate(marks):
        w = 14 + _text_width(m.label)
        if x > 0 and x + w > width:
            x, y = 0.0, y + _LEGEND_ROW
        _fits(m.label, width - 14, "legend entry")
        _mark(svg, _MARK_SHAPES[i], x + 5, y + 11, "", r=4.0)
        _text(svg, x + 14, y + 15, m.label)
        x += w + 16
    legend_h = (y + _LEGEND_ROW + 8) if marks else legend_h
    top, plot_h = legend_h + _TITLE_H, _LINES_PLOT_H
    svg.set("viewBox", f"0 0 {_n(width)} {_n(top + plot_h + _LINES_BOTTOM)}")
    lx0, lx1 = math.log10(xticks[0]), math.log10(xticks[-1])
    ly0, ly1 = math.log10(yticks[0]), math.log10(yticks[-1])

    def x_of(v: float) -> float:
        return left + (math.log10(v) - lx0) / (lx1 - lx0) * plot_w

    def y_of(v: float) -> float:
        return top + plot_h - (math.log10(v) - ly0) / (ly1 - ly0) * plot_h

    grid = _y_axis(svg, ylabel, legend_h, yticks, left, plot_w, y_of, width)
    labelled = _spaced(xticks, x_of)
    for t in xticks:
        _line(grid, x_of(t), top, x_of(t), top + plot_h)
        if t in labelled:
            _text(svg, x_of(t), top + plot_h + 16, _fmt_number(t), anchor="middle", size=SMALL)
    _text(svg, left + plot_w / 2, top + plot_h + 35, _fits(xlabel, width, "axis title"), anchor="middle")
    _line(svg, left, top, left, top + plot_h)
    _line(svg, left, top + plot_h, left + plot_w, top + plot_h)
    for i, r in enumerate(roofs):
        colour = PALETTE[i]
        g = ET.SubElement(svg, "g", {"fill": colour, "stroke": colour})
        start = max(xticks[0], yticks[0] / r.bandwidth)  # where the sloped roof enters the plot
        pts = [(start, r.bandwidth * start), (r.ridge, r.peak), (xticks[-1], r.peak)]
        line = ET.SubElement(g, "polyline", {
            "points": " ".join(f"{_n(x_of(px))},{_n(y_of(py))}" for px, py in pts),
            "fill": "none", "stroke-width": "2",
        })
        ET.SubElement(line, "title").text = (f"{r.label}: peak {_fmt_number(r.peak)} {ylabel}, "
                                             f"ridge at {_fmt_number(r.ridge)} {xlabel}")
        dot = ET.SubElement(g, "circle", {"cx": _n(x_of(r.ridge)), "cy": _n(y_of(r.peak)), "r": "2.5"})
        ET.SubElement(dot, "title").text = f"{r.label}: ridge at {_fmt_number(r.ridge)} {xlabel}"
    for i, m in enumerate(marks):
        _mark(svg, _MARK_SHAPES[i], x_of(m.x), y_of(m.y),
              m.tip or f"{m.label}: {_fmt_number(m.x)} {xlabel}, {_fmt_number(m.y)} {ylabel}")
    return _serialise(svg)
