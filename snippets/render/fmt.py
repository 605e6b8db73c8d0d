"""Figures: a computed value with its unit and display text, and how pages show them.

Every number a page shows is a `Figure`. In HTML it becomes
`<span class="sa-fig" data-name=... data-value=... data-unit=...>text</span>`, so tests,
drift checks and `numbers.json` can read each figure back with an HTML parser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from snippets.data.units import BANDWIDTH_UNITS, BYTE_UNITS, Bandwidth


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
class ClaimSite:
    """Where `claim` was called and what its caller could read then: the build re-reads the condition written
    there with each figure it compares scaled alone (`snippets.build.claims`), so a claim that cannot fail is
    refused."""

    file: str
    position: tuple[int | None, int | None, int | None, int | None]
    """The call's (line, end line, column, end column), as the caller's code object records it."""
    scope: dict[str, object]
    """The caller's globals and locals when the claim was made."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A data-dependent statement, checked at build time."""

    holds: bool
    basis: str
    """The numbers behind it, in words: "12 GPUs > 8 GPUs per node"."""
    structural: str = ""
    """Why the claim cannot fail by the size of a figure (it compares ids, kinds or rules): given, the build does not
    ask it to fail when one of its figures is scaled by 0.1 or 10."""
    site: ClaimSite | None = field(default=None, compare=False, repr=False)


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


def claim(holds: bool, basis: str, *, structural: str = "") -> Claim:
    """A claim on `holds`, the condition written in the call (the build reads it there: `ClaimSite`)."""
    import itertools
    import sys

    frame = sys._getframe(1)
    code = frame.f_code
    position = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None), (None, None, None, None))
    site = ClaimSite(code.co_filename, position, {**frame.f_globals, **frame.f_locals})
    return Claim(bool(holds), basis, structural, site)


# --------------------------------------------------------------------------- HTML

def figure_attrs(fig: Figure, name: str) -> dict[str, str]:
    """The attributes of the span a figure is published as, wherever it is written: `fig_html` here (tables and
    block output), `snippets.build.computed` for `{{ name }}` in prose."""
    attrs = {
        "class": "sa-fig",
        "data-name": name,
        "data-value": f"{fig.value:.10g}",
        "data-unit": fig.unit,
    }
    if fig.basis:
        attrs["data-basis"] = fig.basis
        attrs["title"] = fig.basis
    return attrs


def fig_html(fig: Figure, name: str) -> str:
    """The span a figure is published as."""
    a = " ".join(f'{k}="{inert_html(v)}"' for k, v in figure_attrs(fig, name).items())
    return f"<span {a}>{inert_html(fig.text)}</span>"


FIGURE_SPAN = re.compile(r'<span class="sa-fig" [^<>]*>[^<>]*</span>')
"""A span as `fig_html` writes it (its attributes and text escaped: no `<` or `>` inside), which the build sets aside
while Markdown converts what a block printed (`snippets.build.blocks`)."""


_MD_ENTITIES = {ord(ch): f"&#{ord(ch)};" for ch in "\\`*_{}[]()!|"}
_MD_SPECIAL = re.compile(r"[\\`*_{}\[\]()!|]")


def inert_html(text: str) -> str:
    """`text` escaped for HTML text or a quoted attribute, with Markdown's specials as character references.

    A figure's span is raw HTML inside Markdown (a table cell, a printed list), and Markdown's
    inline patterns run before its raw-HTML pattern: a `[x](javascript:...)` or `**` in a name
    (a row label from data) would otherwise be turned into a link or emphasis inside the tag,
    breaking it open. Character references read back as the same text in any HTML parser.
    """
    out = html.escape(text, quote=True)
    return out.translate(_MD_ENTITIES) if _MD_SPECIAL.search(out) else out  # most hold none: skip the table


class Md(str):
    """Markdown written by the site's own code (a link list, `code`, **emphasis**), never data.

    Table cells, headers and chart labels are plain text: a `str` from `data/` is escaped where it
    is written, so markup in it shows as typed instead of becoming live HTML, a link or a computed
    value. Wrap a cell in `Md` only where the code itself writes the Markdown. Joining an `Md`
    with a `str` (`source_links(e) + " †"`) keeps it `Md`: use that only with authored text.
    """

    __slots__ = ()

    def __add__(self, other: str) -> Md:
        return Md(str.__add__(self, other))

    def __radd__(self, other: str) -> Md:
        return Md(str.__add__(other, self))


_MD_SPECIALS = frozenset("\\`*_{}[]()!#+-.|")
"""Characters a backslash makes literal in Python-Markdown (ESCAPED_CHARS, with tables' `|`)."""


def escape_markdown(text: str) -> str:
    """`text` as literal Markdown inline text: HTML-escaped, and every Markdown special backslashed.

    `<script>` shows as typed, `[x](javascript:...)` is not a link, `**` is not emphasis and
    `{{ name }}` is not a computed value.
    """
    out = html.escape(text, quote=False)
    return "".join("\\" + ch if ch in _MD_SPECIALS else ch for ch in out).replace("\n", " ")


_URL_SAFE = ":/?#@!$&'*+,;=%-._~"
"""Characters a URL keeps as written in a link; anything else (quotes, brackets, parentheses,
angle brackets, backticks, whitespace) is percent-encoded, so it can neither end the Markdown
link nor the HTML attribute it becomes."""


_TITLE_QUOTES = str.maketrans({'"': "\u201d", "'": "\u2019"})
"""A link title's straight quotes as typographic ones. Python-Markdown ends a title at any straight quote followed
by `)` (a source titled "... column 'vllm cr') ..." closed there, and the rest of the title, a data string, became
live Markdown): a title keeps none."""


def link(text: str, url: str, title: str = "") -> Md:
    """A Markdown link to an `https://` URL: `text` escaped as text, the URL percent-encoded, and `title` with no
    straight quote (`_TITLE_QUOTES`), so nothing in it can end it; Python-Markdown escapes it into the attribute."""
    from urllib.parse import quote, urlsplit

    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"not an https:// URL with a host: {url!r}")
    href = quote(url, safe=_URL_SAFE)
    shown_title = "" if not title else ' "' + " ".join(title.translate(_TITLE_QUOTES).split()) + '"'
    return Md(f"[{escape_markdown(text)}]({href}{shown_title})")


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words with figures in them ("2 × TP4 prefill, 3 × TP8 decode, 409 requests in flight on each decode
    worker"): a table cell, or a stretch of a block's text, whose counts a reader can follow as figures. Each part
    is text (plain: escaped where it is written, for it may hold data) or a figure under a key; a figure's span is
    named `<name>.<key>`, `<name>` being its cell's (`table`, `html_table`) or the one `markdown` or `html` is
    given."""

    parts: tuple[str | tuple[str, Figure], ...]

    def __post_init__(self) -> None:
        keys = [p[0] for p in self.parts if not isinstance(p, str)]
        if len(set(keys)) != len(keys):
            raise ValueError(f"a phrase's figures need keys of their own, not {keys}")

    @property
    def text(self) -> str:
        """What the reader sees, as plain text."""
        return "".join(p if isinstance(p, str) else p[1].text for p in self.parts)

    def render(self, name: str, escape: Callable[[str], str]) -> str:
        """Its text through `escape`, its figures as spans named `<name>.<key>`."""
        return "".join(escape(p) if isinstance(p, str) else fig_html(p[1], f"{name}.{p[0]}") for p in self.parts)

    def markdown(self, name: str) -> str:
        """For a block's Markdown: its text escaped as literal Markdown (`escape_markdown`)."""
        return self.render(name, escape_markdown)

    def html(self, name: str) -> str:
        """For HTML: its text HTML-escaped."""
        return self.render(name, lambda t: html.escape(t, quote=False))


Cell = Figure | str | Phrase


def _cell_text(cell: Cell) -> str:
    return cell if isinstance(cell, str) else cell.text


def _md_cell(cell: str) -> str:
    """A Markdown table cell: authored `Md` as written, any other text escaped."""
    text = cell if isinstance(cell, Md) else escape_markdown(cell)
    return text.replace("|", r"\|") if isinstance(cell, Md) else text


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
            fig_html(cell, f"{name}[{label}][{header}]") if isinstance(cell, Figure)
            else cell.render(f"{name}[{label}][{header}]", text) if isinstance(cell, Phrase) else text(cell)
            for header, cell in zip(headers, row, strict=True)
        ])
    return align, out


def table(
    name: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str | None = None, key: int = 0
) -> str:
    """A Markdown table for a block's output, whose Figure cells are published as named spans.

    A cell's name is `name[row label][column header]`, the row label being the row's cell in
    column `key` (the first by default); labels must be unique.
    `align` is one character per column: "l", "r" or "c" (default: first left, others right).
    Text cells and headers are plain text, escaped (data may hold any character); a cell the code
    writes as Markdown (links, code, emphasis) is wrapped in `Md`.

    Markdown (the block's, converted by markdown-exec with the page's extensions: `tables`, `abbr`'s glossary,
    MkDocs' link checks) makes the HTML; a figure's span is raw inline HTML, which Python-Markdown keeps in its
    HTML stash as written. Print it from a block without `html="true"`.
    """
    align, cells = _cells(name, headers, rows, align, key, _md_cell)
    rule = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = [
        "| " + " | ".join(_md_cell(h) for h in headers) + " |",
        "| " + " | ".join(rule[a] for a in align) + " |",
        *("| " + " | ".join(row) + " |" for row in cells),
    ]
    return "\n" + "\n".join(lines) + "\n"


def bullets(items: Sequence[Md]) -> Md:
    """A bulleted list of `Md` items, as Markdown for a block's output (print it without `html="true"`)."""
    return Md("\n" + "".join(f"- {i}\n" for i in items))


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
