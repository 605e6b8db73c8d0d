"""Charts drawn at build time as inline SVG.

Deterministic (same input, same bytes: fixed hash salt, no dates, ids prefixed per chart) and
readable in Material's light and dark palettes: text, axes and grid use `currentColor`, so they
take the page's text colour; data colours are mid-tones that read on both backgrounds.
Each chart carries a <title> and <desc> that say in words what it shows.
"""

from __future__ import annotations

import functools
import hashlib
import html
import io
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, imported on the first chart actually drawn: a page
    model that imports this module but takes its charts from the cache never loads matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_INK = "#010203"  # sentinel drawn by matplotlib, replaced by currentColor in the SVG
_PALETTE = ("#4c8bf5", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2")
_RC: dict[str, Any] = {  # matplotlib rcParams
    "svg.hashsalt": "serving-arithmetic",
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 11,
    "text.color": _INK,
    "axes.labelcolor": _INK,
    "axes.edgecolor": _INK,
    "xtick.color": _INK,
    "ytick.color": _INK,
    "grid.color": _INK,
    "grid.alpha": 0.15,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "path.simplify": False,
}


CACHE_DIR_ENV = "SERVING_CHART_CACHE"
"""A directory where drawn charts are kept between builds (hooks/serving.py sets it to
.cache/charts); unset, every chart is drawn. A chart is found there only when its drawing
function, every argument, this file and matplotlib's version are all the same, so a cached SVG
is the one matplotlib would draw: `mkdocs serve` then redraws only the charts a data edit changed."""

_P = ParamSpec("_P")
_CODE = hashlib.sha256(Path(__file__).read_bytes() + version("matplotlib").encode()).hexdigest()


def _cached(draw: Callable[_P, str]) -> Callable[_P, str]:
    @functools.wraps(draw)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> str:
        where = os.environ.get(CACHE_DIR_ENV)
        if not where:
            return draw(*args, **kwargs)
        key = hashlib.sha256(repr((draw.__name__, args, sorted(kwargs.items()), _CODE)).encode()).hexdigest()
        path = Path(where) / f"{key}.svg"
        if path.is_file():
            return path.read_text(encoding="utf-8")
        svg = draw(*args, **kwargs)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{key}.{os.getpid()}.part")
        part.write_text(svg, encoding="utf-8")
        part.replace(path)
        return svg

    return wrapper


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    group: str = ""


def _to_svg(fig: Figure, name: str, title: str, desc: str) -> str:
    for ax in fig.axes:  # every chart is open on the top and the right
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    _pyplot().close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    svg = svg.replace(_INK, "currentColor")
    # ids are unique per chart, so several charts can share a page
    svg = re.sub(r'id="([^"]+)"', rf'id="{name}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{name}-\1"', svg)
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    # matplotlib's <style>*{...}</style> would apply to the whole page once inlined
    svg = re.sub(r"\s*<defs>\s*<style[^>]*>.*?</style>\s*</defs>", "", svg, flags=re.S)
    head = (
        f'<svg role="img" aria-labelledby="{name}-title {name}-desc" class="sa-chart" '
        'style="width:100%;height:auto;max-width:44rem"'
    )
    svg = svg.replace("<svg", head, 1)
    first_close = svg.index(">") + 1
    svg = (
        svg[:first_close]
        + f'\n <title id="{name}-title">{html.escape(title)}</title>'
        + f'\n <desc id="{name}-desc">{html.escape(desc)}</desc>'
        + svg[first_close:]
    )
    # drop fixed width/height so the chart scales with the column; keep the viewBox
    svg = re.sub(r'(<svg[^>]*?) width="[^"]+" height="[^"]+"', r"\1", svg, count=1)
    return svg


def _fmt_number(x: float, _: object = None) -> str:
    return f"{x:,.0f}" if x >= 1 else f"{x:g}"


@_cached
def log_bars(name: str, bars: Sequence[Bar], unit: str, title: str, desc: str) -> str:
    """Horizontal bars on a log axis (the bandwidth cliff), largest first, each labelled with its value."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter

    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(bars) + 1.0))
        labels = [b.label for b in bars][::-1]
        values = [b.value for b in bars][::-1]
        ax.barh(labels, values, color=[_PALETTE[i % len(_PALETTE)] for i in range(len(bars))][::-1])
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(_fmt_number))
        ax.set_xlabel(unit)
        ax.grid(axis="x", which="major")
        ax.set_xlim(min(values) / 2, max(values) * 4)
        for y, v in enumerate(values):
            ax.text(v * 1.08, y, f"{_fmt_number(v)}", va="center")
        return _to_svg(fig, name, title, desc)


@_cached
def grouped_bars(
    name: str, bars: Sequence[Bar], ylabel: str, title: str, desc: str, line: float | None = None,
    line_label: str = "",
) -> str:
    """Vertical bars grouped by `group` (e.g. model) and coloured by `label` (e.g. precision),
    with an optional horizontal reference line (e.g. GPUs in one node)."""
    groups = list(dict.fromkeys(b.group for b in bars))
    series = list(dict.fromkeys(b.label for b in bars))
    width = 0.8 / len(series)
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.0, 3.6))
        for i, s in enumerate(series):
            xs, ys = [], []
            for g_i, g in enumerate(groups):
                for b in bars:
                    if b.group == g and b.label == s:
                        xs.append(g_i + (i - (len(series) - 1) / 2) * width)
                        ys.append(b.value)
            rects = ax.bar(xs, ys, width * 0.95, label=s, color=_PALETTE[i % len(_PALETTE)])
            ax.bar_label(rects, labels=[_fmt_number(v) for v in ys], padding=2)
        ax.set_xticks(range(len(groups)), groups)
        ax.set_ylabel(ylabel)
        if line is not None:
            ax.axhline(line, color=_INK, linestyle="--", linewidth=1)
            ax.text(len(groups) - 0.5, line, f" {line_label}", va="bottom", ha="right")
        ax.legend(frameon=False, ncols=len(series), loc="upper left")
        top = max([b.value for b in bars] + [line or 0])
        ax.set_ylim(0, top * 1.25)
        return _to_svg(fig, name, title, desc)


@_cached
def bars(name: str, bars: Sequence[Bar], xlabel: str, title: str, desc: str) -> str:
    """Horizontal bars on a linear axis, in the given order, each labelled with its value."""
    plt = _pyplot()
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(7.0, 0.42 * len(bars) + 1.0))
        labels = [b.label for b in bars][::-1]
        values = [b.value for b in bars][::-1]
        ax.barh(labels, values, color=_PALETTE[0])
        ax.set_xlabel(xlabel)
        ax.grid(axis="x")
        ax.set_xlim(0, max(values) * 1.18)
        for y, v in enumerate(values):
            ax.text(v + max(values) * 0.01, y, _fmt_number(v), va="center")
        return _to_svg(fig, name, title, desc)


def figure(svg: str, caption: str) -> str:
    """The chart as a captioned HTML figure, ready to print from an exec block."""
    return f'<figure class="sa-figure">\n{svg}\n<figcaption>{html.escape(caption)}</figcaption>\n</figure>\n'
