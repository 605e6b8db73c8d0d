"""Figures: a computed value with its unit and display text, and how pages show them.

Every number a page shows is a `Figure`. In HTML it becomes
`<span class="sa-fig" data-name=... data-value=... data-unit=...>text</span>`, so tests,
drift checks and `numbers.json` can read each figure back with an HTML parser.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from snippets.units import BANDWIDTH_UNITS, BYTE_UNITS, Bandwidth


@dataclass(frozen=True, slots=True)
class Figure:
    """A computed quantity as shown on a page."""

    value: float
    """The number in `unit`, unrounded."""
    unit: str
    """Unit of `value`: "GB", "GiB", "GB/s", "GPUs", "x", "params", "%", "" for a pure number."""
    text: str
    """What the reader sees, rounded, usually with the unit."""
    basis: str = ""
    """How the figure is quoted, when that matters: "per direction", "dense", "GB = 10^9 bytes"."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A data-dependent statement, checked at build time."""

    holds: bool
    basis: str
    """The numbers behind it, in words: "12 GPUs > 8 GPUs per node"."""


def number(x: float, digits: int = 0) -> str:
    """`x` with thousands separators and `digits` decimals: number(3350.0) == "3,350"."""
    return f"{x:,.{digits}f}"


def nbytes(n: float, unit: str = "GB", digits: int = 0) -> Figure:
    """A byte count shown in a decimal (GB = 10^9) or binary (GiB = 2^30) unit."""
    v = n / BYTE_UNITS[unit]
    basis = "GiB = 2^30 bytes" if unit.endswith("iB") else f"{unit} = 10^{len(str(int(BYTE_UNITS[unit]))) - 1} bytes"
    return Figure(v, unit, f"{number(v, digits)} {unit}", basis)


def bandwidth(bw: Bandwidth, unit: str = "GB/s", digits: int = 0) -> Figure:
    """A bandwidth in `unit`, keeping its direction basis."""
    v = bw.bytes_per_s / BANDWIDTH_UNITS[unit]
    return Figure(v, unit, f"{number(v, digits)} {unit}", bw.direction.label)


def count(n: float, unit: str = "GPUs", *, show_unit: bool = False) -> Figure:
    """A whole count (GPUs, nodes, links). The unit is shown only if asked."""
    if n != int(n):
        raise ValueError(f"count must be whole, got {n!r}")
    text = f"{int(n):,}" + (f" {unit}" if show_unit else "")
    return Figure(float(n), unit, text)


def quantity(x: float, unit: str, digits: int = 1, *, show_unit: bool = False, basis: str = "") -> Figure:
    """A non-integer quantity, such as an unrounded GPU count (10.1)."""
    return Figure(x, unit, number(x, digits) + (f" {unit}" if show_unit else ""), basis)


def ratio(x: float, digits: int = 1, basis: str = "") -> Figure:
    """A "times" ratio: 7.4x."""
    return Figure(x, "x", f"{number(x, digits)}×", basis)


def params(n: float, digits: int = 0) -> Figure:
    """A parameter count in billions: 405B."""
    v = n / 1e9
    return Figure(v, "billion params", f"{number(v, digits)}B")


def percent(fraction: float, digits: int = 0) -> Figure:
    return Figure(fraction * 100, "%", f"{number(fraction * 100, digits)}%")


def unit_definition(unit: str) -> Figure:
    """What a byte unit means, as a figure: unit_definition("GiB").text == "1,073,741,824 bytes"."""
    return Figure(BYTE_UNITS[unit], "bytes", f"{number(BYTE_UNITS[unit])} bytes")


def claim(holds: bool, basis: str) -> Claim:
    return Claim(bool(holds), basis)


# --------------------------------------------------------------------------- HTML

def fig_html(fig: Figure, name: str) -> str:
    """The span a figure is published as."""
    attrs = {
        "class": "sa-fig",
        "data-name": name,
        "data-value": f"{fig.value:.10g}",
        "data-unit": fig.unit,
    }
    if fig.basis:
        attrs["data-basis"] = fig.basis
        attrs["title"] = fig.basis
    a = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    return f"<span {a}>{html.escape(fig.text, quote=False)}</span>"


Cell = Figure | str


def _cell_text(cell: Cell) -> str:
    return cell if isinstance(cell, str) else cell.text


_ALIGN = {"l": "left", "r": "right", "c": "center"}


def _cells(
    name: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str | None, key: int,
    text: Callable[[str], str], names: Sequence[str] | None = None,
) -> tuple[str, list[list[str]]]:
    """Check a table's shape and render its cells: figures as named spans, text through `text`."""
    if any(len(r) != len(headers) for r in rows):
        raise ValueError(f"table {name!r}: every row needs {len(headers)} cells")
    align = align or "l" + "r" * (len(headers) - 1)
    if len(align) != len(headers) or any(a not in _ALIGN for a in align):
        raise ValueError(f"table {name!r}: align needs one of l, r, c per column ({len(headers)}), got {align!r}")
    labels = [_cell_text(r[key]) for r in rows] if names is None else list(names)
    if len(labels) != len(rows):
        raise ValueError(f"table {name!r}: {len(labels)} row names for {len(rows)} rows")
    if len(set(labels)) != len(labels):
        raise ValueError(f"table {name!r}: row labels in column {key} repeat: {labels}")
    out = []
    for label, row in zip(labels, rows, strict=True):
        out.append([
            fig_html(cell, f"{name}[{label}][{header}]") if isinstance(cell, Figure) else text(cell)
            for header, cell in zip(headers, row, strict=True)
        ])
    return align, out


def table(
    name: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str | None = None, key: int = 0
) -> str:
    """A Markdown table whose Figure cells are published as named spans.

    A cell's name is `name[row label][column header]`, the row label being the row's cell in
    column `key` (the first by default); labels must be unique.
    `align` is one character per column: "l", "r" or "c" (default: first left, others right).
    Text cells are Markdown (links, code, emphasis).
    """
    align, cells = _cells(name, headers, rows, align, key, lambda t: t.replace("|", r"\|"))
    rule = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join(rule[a] for a in align) + " |",
        *("| " + " | ".join(row) + " |" for row in cells),
    ]
    return "\n".join(lines) + "\n"


def html_table(
    name: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str | None = None, key: int = 0,
    names: Sequence[str] | None = None,
) -> str:
    """The same table as `table`, written as HTML, for blocks whose output skips Markdown (`html="true"`).

    The markup is what Python-Markdown's tables extension writes, so the page styles and scripts
    treat both alike; text cells are plain text, escaped. Meant for large tables: the sizing grid's
    thousands of cells cost half a second to pass through Markdown. `names` labels the rows where no
    single column is unique (the grid's model · precision · accelerator), instead of column `key`.
    """
    align, cells = _cells(name, headers, rows, align, key, lambda t: html.escape(t, quote=False), names)

    def tr(tag: str, row: Sequence[str]) -> str:
        return "<tr>" + "".join(f'<{tag} style="text-align: {_ALIGN[a]};">{c}</{tag}>'
                                for a, c in zip(align, row, strict=True)) + "</tr>"

    head = tr("th", [html.escape(h, quote=False) for h in headers])
    body = "\n".join(tr("td", row) for row in cells)
    return f"<table>\n<thead>\n{head}\n</thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"
