"""fmt.table (Markdown, which Python-Markdown makes a table of) and fmt.html_table (HTML, for the grid) publish the
same table."""

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


def test_a_table_is_markdown_that_markdown_makes_a_table_of() -> None:
    """Text is escaped (data may hold any character: it shows as typed), figures are named spans, `Md` cells are
    the code's own Markdown; Python-Markdown makes the HTML."""
    headers = ["Row (label)", "Text *cell*", "More", "Figure"]
    written = fmt.table("t", headers, TRICKY, align="lclr")
    assert written.startswith("\n| Row \\(label\\) | Text \\*cell\\* |")
    html = markdown.markdown(written, extensions=["tables"])
    soup = BeautifulSoup(html, "html.parser")
    rows = [[td.get_text() for td in tr.find_all(["th", "td"])] for tr in soup.select("tr")]
    assert rows[0] == headers
    assert rows[1][:3] == ["a | b", "**not bold** [not](a link) `no code`", "x_y_z \\ {{ n }}"]
    assert rows[2][0] == "<script>alert(1)</script>" and not soup.find("script")
    assert rows[3][1] == "&amp; &#91; &lt;" and rows[3][2] == "line break"
    assert _cells(html)[1][3] == ("td:text-align: right;", "2", "t[a | b][Figure]")
    assert _cells(html)[2][3][2] == "t[<script>alert(1)</script>][Figure]"


def test_markdown_cells_are_the_codes_markdown() -> None:
    rows: list[list[fmt.Cell]] = [
        ["a", fmt.link("NVLink [spec] (v4)", "https://example.com/a b?x=1&y=2", 'title "quoted"'), fmt.count(1)],
        ["b", fmt.Md("`engine.params.total_params` and **bold** *em* a | pipe"), fmt.count(2)],
        ["c", fmt.Md("[HBM](hbm.md)"), fmt.count(3)],
    ]
    soup = BeautifulSoup(markdown.markdown(fmt.table("t", ["Row", "Source", "N"], rows), extensions=["tables"]),
                         "html.parser")
    links = soup.select("td a")
    assert links[0]["href"] == "https://example.com/a%20b?x=1&y=2" and links[0].get_text() == "NVLink [spec] (v4)"
    assert links[1]["href"] == "hbm.md"  # a relative link: MkDocs resolves and checks it in the page
    assert soup.select_one("td code").get_text() == "engine.params.total_params" and soup.select_one("td strong")
    assert "a | pipe" in soup.select("td")[4].get_text()


def test_html_table_is_the_markdown_table_without_markdown() -> None:
    via_markdown = markdown.markdown(fmt.table("t", HEADERS, ROWS, "lrr"), extensions=["tables"])
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


def test_a_phrase_is_escaped_text_with_named_figures() -> None:
    """A phrase's text is escaped as the cell's text is (data may hold any character), its figures are spans named
    after the cell's name and their keys, and its plain text reads as the reader sees it."""
    phrase = fmt.Phrase(("<b>a</b> *x* | ", ("n", fmt.count(1024, "requests")), " then ", ("m", fmt.count(2))))
    assert phrase.text == "<b>a</b> *x* | 1,024 then 2"
    rows: list[list[fmt.Cell]] = [["r", phrase]]
    for html in (fmt.html_table("t", ["Row", "Words"], rows),
                 markdown.markdown(fmt.table("t", ["Row", "Words"], rows), extensions=["tables"])):
        soup = BeautifulSoup(html, "html.parser")
        cell = soup.select("td")[1]
        assert cell.get_text() == phrase.text and not cell.find("b") and not cell.find("em")
        spans = {s["data-name"]: (s.get_text(), s["data-value"], s["data-unit"]) for s in cell.select("span.sa-fig")}
        assert spans == {"t[r][Words].n": ("1,024", "1024", "requests"), "t[r][Words].m": ("2", "2", "GPUs")}
    md = BeautifulSoup(markdown.markdown(phrase.markdown("x"), extensions=["tables"]), "html.parser")  # the site's
    assert md.get_text() == phrase.text and [s["data-name"] for s in md.select("span.sa-fig")] == ["x.n", "x.m"]
    with pytest.raises(ValueError, match="keys of their own"):
        fmt.Phrase((("n", fmt.count(1)), " and ", ("n", fmt.count(2))))


def test_bullets_are_a_markdown_list() -> None:
    items = [fmt.Md("**A** (`x`): " + fmt.link("t", "https://example.com/")), fmt.Md("[page](../hbm.md)")]
    assert fmt.bullets(items) == "\n- **A** (`x`): [t](https://example.com/)\n- [page](../hbm.md)\n"


def test_the_as_of_line_is_an_emphasised_paragraph(catalog) -> None:
    from snippets.pages.reference_common import as_of, as_of_text

    models = catalog.models.values()
    assert markdown.markdown(as_of(models)) == f"<p><em>{as_of_text(models)}</em></p>"
