"""fmt.table's two forms (Markdown, and the HTML Markdown would make of it) and fmt.html_table publish the same table."""

from __future__ import annotations

import markdown
import pytest
from bs4 import BeautifulSoup

from snippets.render import fmt

HEADERS = ["Model", "Weights", "GPUs"]
ROWS: list[list[fmt.Cell]] = [
    ["Llama 3.1 405B · FP8", fmt.nbytes(405e9, "GB"), fmt.count(6)],
    ["A < B & C", fmt.nbytes(70e9, "GB"), "—"],
]


def _cells(html: str) -> list[list[tuple[str, str, str | None]]]:
    """Each row's cells: alignment, text, and the figure's name if the cell holds one."""
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for tr in soup.select("table tr"):
        row = []
        for cell in tr.find_all(["th", "td"]):
            span = cell.find("span", class_="sa-fig")
            row.append((cell.name + ":" + cell.get("style", ""), cell.get_text(), span["data-name"] if span else None))
        out.append(row)
    return out


TRICKY: list[list[fmt.Cell]] = [
    ["a | b", "**not bold** [not](a link) `no code`", "x_y_z \\ {{ n }}", fmt.count(2)],
    ["<script>alert(1)</script>", "", "  padded  ", fmt.nbytes(3e9, "GB")],
    ["é · — “quoted” 'single' \"double\"", "&amp; &#91; &lt;", "line\nbreak", "#1 +2 -3 .4 !5"],
]


def test_a_table_without_markdown_cells_is_written_as_markdown_would_render_it() -> None:
    """Byte for byte: the HTML path must publish what the Markdown path published through Python-Markdown."""
    headers = ["Row (label)", "Text *cell*", "More", "Figure"]
    for rows in (TRICKY, [[r[0], "t", "u", r[1]] for r in ROWS]):
        written = fmt.table("t", headers, rows, align="lclr")
        assert written.lstrip().startswith(f"<table {fmt.TERMS_MARK}>")
        via_markdown = markdown.markdown(fmt._markdown_table("t", headers, rows, "lclr", 0), extensions=["tables"])
        assert written.strip().replace(f"<table {fmt.TERMS_MARK}>", "<table>") == via_markdown.strip()


def test_markdown_cells_that_need_no_mkdocs_are_rendered_as_markdown_would() -> None:
    """https:// links, code, emphasis and inline HTML: the HTML path renders each cell as the Markdown table did."""
    rows: list[list[fmt.Cell]] = [
        ["a", fmt.link("NVLink [spec] (v4)", "https://example.com/a b?x=1&y=2", 'title "quoted"'), fmt.count(1)],
        ["b", fmt.Md("`engine.params.total_params` and **bold** *em* a | pipe"), fmt.count(2)],
        ["c", fmt.Md('<span class="sa-used-by" data-id="x"></span>'), fmt.count(3)],
    ]
    written = fmt.table("t", ["Row", "Source", "N"], rows)
    assert written.lstrip().startswith(f"<table {fmt.TERMS_MARK}>")
    via_markdown = markdown.markdown(fmt._markdown_table("t", ["Row", "Source", "N"], rows, None, 0), extensions=["tables"])
    assert written.strip().replace(f"<table {fmt.TERMS_MARK}>", "<table>") == via_markdown.strip()


def test_a_table_with_a_relative_link_stays_markdown() -> None:
    """MkDocs resolves and checks relative links only in Markdown."""
    written = fmt.table("t", ["Page", "GPUs"], [[fmt.Md("[HBM](hbm.md)"), fmt.count(8)]])
    assert written.startswith("| Page | GPUs |") and "[HBM](hbm.md)" in written


def test_html_table_is_the_markdown_table_without_markdown() -> None:
    via_markdown = markdown.markdown(fmt._markdown_table("t", HEADERS, ROWS, "lrr", 0), extensions=["tables"])
    direct = fmt.html_table("t", HEADERS, ROWS, align="lrr")
    assert _cells(direct) == _cells(via_markdown)
    cells = _cells(direct)
    assert cells[0][1] == ("th:text-align: right;", "Weights", None)
    assert cells[1][1] == ("td:text-align: right;", "405 GB", "t[Llama 3.1 405B · FP8][Weights]")
    assert cells[2][0][1] == "A < B & C"  # text is escaped, then read back as written


def test_html_table_escapes_text_cells() -> None:
    direct = fmt.html_table("t", HEADERS, ROWS)
    assert "A &lt; B &amp; C" in direct
    assert "<tbody>" in direct and direct.count("<tr>") == 1 + len(ROWS)


@pytest.mark.parametrize("render", [fmt.table, fmt.html_table])
def test_bad_tables_are_refused(render) -> None:
    with pytest.raises(ValueError, match="every row needs 3 cells"):
        render("t", HEADERS, [["x", "y"]])
    with pytest.raises(ValueError, match="row labels in column 0 repeat"):
        render("t", HEADERS, [["x", "1", "2"], ["x", "3", "4"]])
    with pytest.raises(ValueError, match="align needs one of l, r, c per column"):
        render("t", HEADERS, ROWS, align="lr")
    with pytest.raises(ValueError, match="align needs one of l, r, c per column"):
        render("t", HEADERS, ROWS, align="lrx")


def test_bullets_are_the_list_markdown_makes() -> None:
    items = [fmt.Md("**A** (`x`): " + fmt.link("t", "https://example.com/")), fmt.Md("plain & <b>html</b>")]
    written = fmt.bullets(items)
    assert written.lstrip().startswith(f"<ul {fmt.TERMS_MARK}>")
    via_markdown = markdown.markdown("".join(f"- {i}\n" for i in items))
    assert written.strip().replace(f"<ul {fmt.TERMS_MARK}>", "<ul>") == via_markdown.strip()
    relative = [fmt.Md("[page](../hbm.md)")]
    assert fmt.bullets(relative) == "- [page](../hbm.md)\n"  # MkDocs resolves and checks it


def test_the_as_of_line_is_the_paragraph_markdown_makes() -> None:
    from snippets.data import load
    from snippets.pages.reference_common import as_of, as_of_text

    models = load().models.values()
    assert as_of(models).strip() == markdown.markdown(f"*{as_of_text(models)}*").strip()
