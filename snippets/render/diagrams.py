"""Diagrams drawn at build time as inline SVG: how tensor parallelism splits a layer, how a ring all-reduce
runs beside two-shot and one-shot, and a pipeline schedule with its bubble.

Like `snippets.render.charts`, each diagram is written element by element with ElementTree, and shares its rules:

- Pure: every function takes numbers and labels and returns SVG text; nothing here reads `data/` or the
  engine. The page model computes the figures and passes them in; these functions only lay them out.
- Deterministic: same input, same bytes. The only ids are the `<title>` and `<desc>`, prefixed by the
  diagram's page-unique name.
- Both palettes: text and outlines use `currentColor`; fills are the charts' mid-tones at a reduced
  opacity, with no text drawn on them.
- Accessible: `role="img"`, labelled by a `<title>` and a `<desc>` that say in words what is drawn; each box
  has its own `<title>` (shown on hover). ElementTree escapes every label.
- Legible on a phone: the viewBox is `WIDTH` units wide and the diagram never wider than its column, so at a
  375 px viewport (a column of about 343 px) text of `FONT` units renders at about 12 CSS px and `SMALL` at
  11 px (the browser test measures it). Lines are laid out for about `WIDTH / (CHAR × FONT)` characters, and a
  label estimated longer than its line is refused rather than drawn over its neighbour.

Elements carry a `class` naming what they are (`split-col`, `split-row`, `ring-cell`, `algo-step`,
`pipe-busy`, `pipe-idle`...), so tests read the geometry back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from snippets.render.charts import CHAR, PALETTE, nice_ticks, svg_root
from snippets.render.fmt import number

WIDTH = 360.0
"""viewBox width: narrow, so the diagram's text stays legible when the column is a phone's."""
FONT = 13.0
SMALL = 12.0
MAX_WIDTH = "28rem"
"""The widest a diagram is drawn, so its text does not grow past the prose's on a desktop."""
FILL_OPACITY = "0.55"


def _n(x: float) -> str:
    text = f"{x:.1f}"
    return "0" if text == "-0.0" else text.removesuffix(".0")


def text_width(text: str, size: float = FONT) -> float:
    """A generous estimate of a label's width in viewBox units (the fonts are not measured)."""
    return len(text) * CHAR * size


def _fits(text: str, room: float, size: float = FONT) -> str:
    if text_width(text, size) > room + 1e-9:
        raise ValueError(f"label {text!r} is too long for its {room:.0f}-unit line: shorten it")
    return text


def _root(name: str, title: str, desc: str, height: float) -> ET.Element:
    return svg_root(name, title, desc, WIDTH, height, cls="sa-diagram", max_width=MAX_WIDTH, font=FONT)


def _text(parent: ET.Element, x: float, y: float, text: str, *, anchor: str = "start", size: float = FONT,
          cls: str = "", bold: bool = False) -> None:
    attrs = {"x": _n(x), "y": _n(y)}
    if anchor != "start":
        attrs["text-anchor"] = anchor
    if size != FONT:
        attrs["font-size"] = _n(size)
    if bold:
        attrs["font-weight"] = "bold"
    if cls:
        attrs["class"] = cls
    ET.SubElement(parent, "text", attrs).text = text


def _box(parent: ET.Element, x: float, y: float, w: float, h: float, tip: str, *, cls: str, colour: str = "",
         dashed: bool = False) -> ET.Element:
    """A rectangle with a tooltip: filled with `colour` at `FILL_OPACITY`, or an outline if no colour."""
    attrs = {"class": cls, "x": _n(x), "y": _n(y), "width": _n(w), "height": _n(h), "stroke": "currentColor",
             "stroke-width": "0.75"}
    if colour:
        attrs |= {"fill": colour, "fill-opacity": FILL_OPACITY}
    else:
        attrs["fill"] = "none"
    if dashed:
        attrs["stroke-dasharray"] = "3 2"
    rect = ET.SubElement(parent, "rect", attrs)
    ET.SubElement(rect, "title").text = tip
    return rect


def _serialise(svg: ET.Element) -> str:
    return ET.tostring(svg, encoding="unicode")


def gpu_colour(i: int) -> str:
    """GPU i's colour, the same in every diagram; neighbours always differ."""
    return PALETTE[i % len(PALETTE)]


# --------------------------------------------------------------------------- (a) a TP layer's splits

@dataclass(frozen=True, slots=True)
class Split:
    """One weight matrix of a TP layer as each GPU holds it.

    `axis` is "col" (split along its output columns: each GPU computes a slice of the output) or "row" (split
    along its input rows: each GPU multiplies its slice and holds a partial sum of the whole output)."""

    label: str
    """What the matrix is, with its split: "Q, K, V: columns split by heads"."""
    axis: str
    lines: Sequence[str]
    """Short lines, up to two under a column split and three beside a row split: the per-GPU shape."""
    tips: Sequence[str]
    """One tooltip per GPU: what GPU i holds."""


@dataclass(frozen=True, slots=True)
class Block:
    """Attention or the MLP: a column split, a row split, then the all-reduce of the partial sums."""

    label: str
    col: Split
    row: Split
    allreduce: str
    """The all-reduce's label: what it adds up and what it costs."""


_COL_H = 26.0
_ROW_W = 112.0
_ROW_STRIPE = 10.0
_LINE = 16.0
_INDEX_ROOM = 14.0  # GPU indices under a column split


def tp_layer(name: str, gpus: int, input_label: str, blocks: Sequence[Block], title: str, desc: str) -> str:
    """One transformer layer under tensor parallelism over `gpus` GPUs, top to bottom: the input every GPU
    holds, then per block a column-split matrix (`gpus` equal vertical stripes, one per GPU), a row-split matrix
    (`gpus` equal horizontal stripes) and the all-reduce that adds the partial sums, drawn across the width."""
    if gpus < 2:
        raise ValueError("a TP diagram needs at least two GPUs")
    for b in blocks:
        for s, axis in ((b.col, "col"), (b.row, "row")):
            if s.axis != axis:
                raise ValueError(f"{b.label}: {s.label!r} must be a {axis} split")
            if len(s.tips) != gpus:
                raise ValueError(f"{s.label!r}: {len(s.tips)} tooltips for {gpus} GPUs")
            most = 2 if axis == "col" else 3  # the room the drawing leaves: two lines under a column split
            if len(s.lines) > most:
                raise ValueError(f"{s.label!r}: at most {most} lines under a {axis} split")
    row_h = _ROW_STRIPE * gpus
    block_h = (_LINE + 6 + _LINE + _COL_H + _INDEX_ROOM + _LINE * 2 + 10 + max(row_h, _LINE * 4) + 10
               + 24 + 14)
    height = _LINE + 8 + 10 + 14 + block_h * len(blocks)
    svg = _root(name, title, desc, height)
    y = _LINE - 3
    _text(svg, 0, y, _fits(input_label, WIDTH))
    y += 6
    bar = ET.SubElement(svg, "g", {"class": "input"})
    _box(bar, 0, y, WIDTH, 10, input_label, cls="input-bar")
    y += 10 + 14
    for b in blocks:
        y += _LINE
        _text(svg, 0, y, _fits(b.label, WIDTH), bold=True)
        y += 6
        # the column split: vertical stripes across the width
        y += _LINE - 3
        _text(svg, 0, y, _fits(b.col.label, WIDTH))
        y += 6
        col = ET.SubElement(svg, "g", {"class": "split-col"})
        w = WIDTH / gpus
        label_each = text_width(str(gpus - 1), SMALL) + 2 <= w
        for i in range(gpus):
            _box(col, i * w, y, w, _COL_H, b.col.tips[i], cls="stripe", colour=gpu_colour(i))
            if label_each:
                _text(svg, i * w + w / 2, y + _COL_H + 12, str(i), anchor="middle", size=SMALL, cls="gpu-index")
        y += _COL_H + _INDEX_ROOM
        for line in b.col.lines:
            y += _LINE
            _text(svg, 0, y - 3, _fits(line, WIDTH, SMALL), size=SMALL)
        y += 10
        # the row split: horizontal stripes, its shape beside it
        top = y
        row = ET.SubElement(svg, "g", {"class": "split-row"})
        for i in range(gpus):
            _box(row, 0, top + i * _ROW_STRIPE, _ROW_W, _ROW_STRIPE, b.row.tips[i], cls="stripe", colour=gpu_colour(i))
        room = WIDTH - _ROW_W - 10
        _text(svg, _ROW_W + 10, top + _LINE - 3, _fits(b.row.label, room))
        for k, line in enumerate(b.row.lines):
            _text(svg, _ROW_W + 10, top + _LINE * (k + 2) - 3, _fits(line, room, SMALL), size=SMALL)
        y = top + max(row_h, _LINE * 4) + 10
        # the all-reduce: across every GPU
        ar = ET.SubElement(svg, "g", {"class": "allreduce"})
        _box(ar, 0, y, WIDTH, 24, b.allreduce, cls="allreduce-bar", dashed=True)
        _text(svg, WIDTH / 2, y + 16, _fits(b.allreduce, WIDTH - 8, SMALL), anchor="middle", size=SMALL)
        y += 24 + 14
    return _serialise(svg)


# --------------------------------------------------------------------------- (b) ring, two-shot, one-shot

def ring_chunk(gpu: int, step: int, n: int) -> int:
    """The chunk GPU `gpu` sends to its right-hand neighbour at ring step `step` (0-based) of an all-reduce over
    `n` GPUs: steps 0 to n − 2 reduce-scatter (send chunk gpu − step), steps n − 1 to 2n − 3 all-gather (send
    the summed chunk gpu + 1 − (step − n + 1)); every index mod n."""
    if not 0 <= step < 2 * (n - 1):
        raise ValueError(f"a ring of {n} GPUs has steps 0 to {2 * (n - 1) - 1}, not {step}")
    if step < n - 1:
        return (gpu - step) % n
    return (gpu + 1 - (step - (n - 1))) % n


@dataclass(frozen=True, slots=True)
class Algorithm:
    """One all-reduce algorithm as a run of steps, each a hop and its bytes, with its time in seconds."""

    name: str
    steps: Sequence[float]
    """Seconds of each step, in order."""
    step_labels: Sequence[str]
    """A short name for each step ("RS", "AG", "all"), drawn inside it when it fits."""
    caption: str
    """One line under its bar: "ring: 14 steps of 1.0 µs = 14.3 µs"."""
    chosen: bool = False

    @property
    def seconds(self) -> float:
        return sum(self.steps)


_GRID_LEFT = 44.0
_CELL_H = 16.0


def allreduce_steps(name: str, n: int, ring: Algorithm, others: Sequence[Algorithm], unit_label: str,
                    scale: float, title: str, desc: str, grid_label: str = "each cell: the chunk a GPU sends") -> str:
    """A ring all-reduce over `n` GPUs as a grid (one row per GPU, one column per step, each cell the chunk that
    GPU sends), on a time axis shared with the bars of the `others` (two-shot, one-shot): every box's width is
    its step's time. `scale` converts seconds to the axis unit (1e6 for µs), `unit_label` names it."""
    if n < 2:
        raise ValueError("an all-reduce needs at least two GPUs")
    if len(ring.steps) != 2 * (n - 1):
        raise ValueError(f"a ring of {n} GPUs takes {2 * (n - 1)} steps, not {len(ring.steps)}")
    algos = [ring, *others]
    for a in algos:
        if not a.steps or any(not math.isfinite(s) or s <= 0 for s in a.steps):
            raise ValueError(f"{a.name}: every step needs a positive finite time")
        if len(a.step_labels) != len(a.steps):
            raise ValueError(f"{a.name}: {len(a.step_labels)} step labels for {len(a.steps)} steps")
    if sum(a.chosen for a in algos) != 1:
        raise ValueError("exactly one algorithm is the engine's choice")
    ticks = nice_ticks(max(a.seconds for a in algos) * scale)
    plot_w = WIDTH - _GRID_LEFT - text_width(number(ticks[-1]), SMALL) / 2 - 2

    def x_of(seconds: float) -> float:
        return _GRID_LEFT + seconds * scale / ticks[-1] * plot_w

    phases_h = _LINE
    grid_h = _CELL_H * n
    bars_h = (_LINE + 18 + _LINE) * len(algos)
    axis_h = 40.0
    svg = _root(name, title, desc, _LINE + 4 + phases_h + grid_h + 10 + bars_h + axis_h)
    y = _LINE - 3
    _text(svg, 0, y, _fits(grid_label, WIDTH, SMALL), size=SMALL)
    y += 4
    # phases over the grid
    t_rs = sum(ring.steps[: n - 1])
    for label, x0, x1 in (("reduce-scatter", x_of(0), x_of(t_rs)), ("all-gather", x_of(t_rs), x_of(ring.seconds))):
        phase = label if text_width(label, SMALL) <= x1 - x0 else label.split("-")[0]
        _text(svg, (x0 + x1) / 2, y + _LINE - 4, phase, anchor="middle", size=SMALL, cls="phase")
    y += phases_h
    grid = ET.SubElement(svg, "g", {"class": "ring"})
    starts = [sum(ring.steps[:k]) for k in range(len(ring.steps))]
    for g in range(n):
        _text(svg, _GRID_LEFT - 4, y + g * _CELL_H + _CELL_H / 2 + SMALL * 0.35, f"GPU {g}", anchor="end",
              size=SMALL)
        for k, t0 in enumerate(starts):
            x0, x1 = x_of(t0), x_of(t0 + ring.steps[k])
            chunk = ring_chunk(g, k, n)
            phase = "reduce-scatter" if k < n - 1 else "all-gather"
            tip = (f"{phase} step {k + 1}: GPU {g} sends chunk {chunk} to GPU {(g + 1) % n}"
                   + (", which adds it to its own" if k < n - 1 else ", fully summed"))
            _box(grid, x0, y + g * _CELL_H, x1 - x0, _CELL_H, tip, cls="ring-cell", colour=gpu_colour(chunk))
            if text_width(str(chunk), SMALL) + 2 <= x1 - x0:
                _text(svg, (x0 + x1) / 2, y + g * _CELL_H + _CELL_H / 2 + SMALL * 0.35, str(chunk),
                      anchor="middle", size=SMALL, cls="chunk")
    y += grid_h + 10
    # every algorithm as a bar of its steps
    for a in algos:
        _text(svg, 0, y + _LINE - 3, _fits(a.name + (" (engine's choice)" if a.chosen else ""), WIDTH),
              bold=a.chosen)
        y += _LINE + 2
        g_el = ET.SubElement(svg, "g", {"class": "algo", "data-name": a.name})
        t0 = 0.0
        for s, label in zip(a.steps, a.step_labels, strict=True):
            x0, x1 = x_of(t0), x_of(t0 + s)
            _box(g_el, x0, y, x1 - x0, 14, f"{a.name}, {label}: {number(s * scale, 2)} {unit_label}",
                 cls="algo-step", colour=PALETTE[0] if a.chosen else "")
            t0 += s
        _text(svg, _GRID_LEFT, y + 14 + _LINE - 2, _fits(a.caption, WIDTH - _GRID_LEFT, SMALL), size=SMALL)
        y += 16 + _LINE
    # the time axis
    axis_y = y + 4
    ET.SubElement(svg, "line", {"x1": _n(x_of(0)), "y1": _n(axis_y), "x2": _n(x_of(ticks[-1] / scale)),
                                "y2": _n(axis_y), "stroke": "currentColor"})
    for t in ticks:
        _text(svg, x_of(t / scale), axis_y + 14, number(t) if t >= 1 else f"{t:g}", anchor="middle", size=SMALL)
    _text(svg, _GRID_LEFT + plot_w / 2, axis_y + 30, unit_label, anchor="middle", size=SMALL)
    return _serialise(svg)


# --------------------------------------------------------------------------- (c) a pipeline schedule

@dataclass(frozen=True, slots=True)
class Schedule:
    """One pipeline schedule to draw: `micro_batches` micro-batches passing the diagram's stages, forward only."""

    micro_batches: int
    heading: str
    """One line above its grid, with the computed bubble: "1 micro-batch: each stage idle 50%"."""


def schedule_slots(stages: int, micro_batches: int) -> list[tuple[int, int, int | None]]:
    """Every (stage, slot, micro-batch or None if idle) of a forward-only pipeline: micro-batch j enters stage s
    at slot s + j, and the schedule lasts m + p − 1 slots."""
    if stages < 1 or micro_batches < 1:
        raise ValueError("stages and micro-batches must be at least 1")
    out: list[tuple[int, int, int | None]] = []
    for s in range(stages):
        for t in range(micro_batches + stages - 1):
            j = t - s
            out.append((s, t, j if 0 <= j < micro_batches else None))
    return out


_PIPE_LEFT = 60.0
_PIPE_H = 20.0


def pipeline(name: str, stages: int, schedules: Sequence[Schedule], slot_label: str, title: str, desc: str) -> str:
    """Gantt-style grids of a forward-only pipeline, one per schedule, on one slot width: a row per stage, a column
    per time slot, a filled box where a stage works on a micro-batch (numbered from 1) and a dashed one where it
    idles. The idle boxes are the bubble: p(p − 1) of the p(m + p − 1) slots."""
    if stages < 1:
        raise ValueError("a pipeline needs at least one stage")
    if not schedules:
        raise ValueError("a pipeline diagram needs at least one schedule")
    most = max(s.micro_batches for s in schedules) + stages - 1
    slot = (WIDTH - _PIPE_LEFT) / most
    panel_h = _LINE + 4 + _PIPE_H * stages + 12
    svg = _root(name, title, desc, panel_h * len(schedules) + _LINE + 4)
    y = 0.0
    for sc in schedules:
        _text(svg, 0, y + _LINE - 3, _fits(sc.heading, WIDTH, SMALL), size=SMALL, bold=True)
        y += _LINE + 4
        g = ET.SubElement(svg, "g", {"class": "schedule", "data-micro-batches": str(sc.micro_batches)})
        for s in range(stages):
            _text(svg, _PIPE_LEFT - 4, y + s * _PIPE_H + _PIPE_H / 2 + SMALL * 0.35, f"stage {s + 1}", anchor="end",
                  size=SMALL)
        for s, t, j in schedule_slots(stages, sc.micro_batches):
            x, top = _PIPE_LEFT + t * slot, y + s * _PIPE_H
            if j is None:
                _box(g, x + 1, top + 1, slot - 2, _PIPE_H - 2, f"stage {s + 1}, slot {t + 1}: idle (the bubble)",
                     cls="pipe-idle", dashed=True)
            else:
                _box(g, x + 1, top + 1, slot - 2, _PIPE_H - 2, f"stage {s + 1}, slot {t + 1}: micro-batch {j + 1}",
                     cls="pipe-busy", colour=gpu_colour(j))
                if text_width(str(j + 1), SMALL) + 2 <= slot - 2:
                    _text(svg, x + slot / 2, top + _PIPE_H / 2 + SMALL * 0.35, str(j + 1), anchor="middle",
                          size=SMALL, cls="micro")
        y += _PIPE_H * stages + 12
    _text(svg, 0, y + _LINE - 3, _fits(slot_label, WIDTH, SMALL), size=SMALL)
    return _serialise(svg)
