"""The reader's experience in a real browser, over every page of the built site.

Each page is loaded, uncached, in one headless Chromium on the site served from 127.0.0.1, which records every
request (anything for another host is aborted and fails the test, naming page and URL) and every console error,
and the tests check what a reader does: open quiz answers, filter and sort the sizing grid, search, switch
palettes, read on a phone, use assistive technology (axe-core). The checks of every page read the sweeps of
sweep.py (each page loaded once per reading, in that reading's tab, every check of that reading run in that load);
the others open the pages they need, each in a fresh context.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from bs4 import BeautifulSoup

from ..conftest import Build
from . import report
from .conftest import DESKTOP, Reader, assert_quiet, sitemap_paths
from .sweep import COLOUR_RULES, DESKTOP_LIGHT, PHONE_TOUCH, SAME_ROWS_MIN, Sweeps, _axe

pytestmark = pytest.mark.browser

TERMS = ("HBM", "NVLink", "TP", "PP", "KV")  # abbreviations every reader should be able to hover
SEARCH_TERM = "NVLink"
SEVERE = ("serious", "critical")


def _html(built: Build, path: str) -> str:
    rel = path + "index.html" if path == "" or path.endswith("/") else path
    return (built.site / rel).read_text(encoding="utf-8")


def _pages_with(built: Build, pages: list[str], selector: str) -> list[str]:
    """The pages whose article has an element matching the CSS `selector`, read with an HTML parser."""
    return [path for path in pages if BeautifulSoup(_html(built, path), "html.parser").select(f"article {selector}")]


def test_every_page_is_visited(built: Build, pages: list[str]) -> None:
    """The page list comes from the site directory and covers every sitemap entry."""
    config = (built.root / "mkdocs.yml").read_text(encoding="utf-8")
    site_url = re.search(r"^site_url:\s*(\S+)", config, re.M)
    listed = sitemap_paths(built.site, site_url.group(1) if site_url else "/")
    assert listed, "sitemap.xml lists no page"
    assert set(listed) <= set(pages), f"sitemap pages without an HTML file: {sorted(set(listed) - set(pages))}"
    assert "404.html" in pages


def test_every_page_loads_offline_and_quietly(sweeps: Sweeps, pages: list[str]) -> None:
    """Each page, loaded cold, waited on until it has fetched the search index (up to 30 s) and scrolled to its
    end a screen at a time: no request for another host, no console error, no failed request.

    The same loads weigh every page; the report goes to site-report/page-weight.md and the end of the
    session's output.
    """
    weights: list[report.PageWeight] = []
    problems: list[str] = []
    for path in pages:
        visit = sweeps[DESKTOP_LIGHT][path]
        problems += visit.problems("offline")
        if "offline" in visit.results:
            weights.append(visit.results["offline"])
    report.write(weights)
    assert not problems, "\n".join(problems)
    for w in weights:
        assert w.by_kind.get("document", 0) > 0, f"/{w.page}: no document bytes recorded"
        assert w.by_kind.get("script", 0) > 0, f"/{w.page}: no script bytes recorded"


def test_a_lazy_request_for_another_host_is_caught_only_by_scrolling(browser: Any, site_url: str) -> None:
    """The check above scrolls each page to its end: a lazy image far down a page asks another host for it only when
    scrolled to, which a load alone never sees."""
    tall = ('<div style="height:20000px">top</div>'
            '<img loading="lazy" src="https://images.example.org/x.png" width="10" height="10" alt="">')
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        r.page.set_content(tall)
        r.page.wait_for_load_state("networkidle")
        assert not r.log.foreign, "the lazy image loaded without a scroll: this test no longer shows the need"
        r.scroll_to_end()
        assert r.log.foreign == ["https://images.example.org/x.png"]


def test_quiz_answers_open_and_close(sweeps: Sweeps, built: Build, pages: list[str]) -> None:
    """Every folded block (`???`, e.g. the quiz answers) opens on a click and closes on the next (sweep.py's quiz:
    the last check of the desktop load, after those that only read the page)."""
    with_details = _pages_with(built, pages, "details")
    assert with_details, "no page has a folded block; the companion pages' quiz answers are missing"
    failures: list[str] = []
    for path in with_details:
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += visit.results.get("quiz", [])
        failures += [f"folded blocks: {problem}" for problem in visit.problems("quiz")]
    assert not failures, "\n".join(failures)


def test_abbreviations_show_tooltips(browser: Any, site_url: str, built: Build, pages: list[str]) -> None:
    """The glossary terms are marked up on the pages, and hovering one shows Material's tooltip."""
    seen: dict[str, tuple[str, str]] = {}
    for path in pages:
        for title, term in re.findall(r'<abbr title="([^"]+)">([^<]+)</abbr>', _html(built, path)):
            seen.setdefault(term.strip(), (path, html.unescape(title)))
    missing = [t for t in TERMS if t not in seen]
    assert not missing, f"terms never marked as abbreviations: {missing}"
    page_path, title = seen["HBM"]
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        page = r.open(page_path)
        term = page.locator("article abbr", has_text=re.compile(r"^HBM$")).first
        term.scroll_into_view_if_needed()
        term.hover()
        page.locator(".md-tooltip2--active", has_text=title).wait_for(state="visible", timeout=5000)
        assert_quiet(r, f"/{page_path} tooltip")


def test_code_blocks_have_copy_buttons(sweeps: Sweeps, built: Build, pages: list[str]) -> None:
    """Every code block has Material's copy button (content.code.copy)."""
    with_code = _pages_with(built, pages, "pre > code")
    if not with_code:
        pytest.skip("the site has no code blocks to copy")
    failures: list[str] = []
    for path in with_code:
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += [f"code blocks: {problem}" for problem in visit.problems("copy_buttons")]
        got = visit.results.get("copy_buttons")
        if got and got["buttons"] != got["blocks"]:
            failures.append(f"/{path}: {got['blocks']} code blocks, {got['buttons']} copy buttons")
    assert not failures, "\n".join(failures)


def test_search_finds_a_term(reader: Reader) -> None:
    """Open search, type a term, see results that contain it, follow the first one."""
    page = reader.open("")
    field_ = page.locator("input.md-search__input")
    field_.click()  # at desktop width the search field sits in the header
    field_.press_sequentially(SEARCH_TERM, delay=30)  # Material searches on key events, as a reader types
    from playwright.sync_api import expect

    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=10000)
    assert results.count() >= 1
    # Material redraws the results on every key: the first list drawn may answer a prefix of the term ("n", "nv"),
    # so wait for the list that answers the whole of it (CI once read a prefix's list, led by the sizing notebook)
    expect(results.first).to_contain_text(re.compile(re.escape(SEARCH_TERM), re.IGNORECASE), timeout=10000)
    meta = page.locator(".md-search-result__meta").inner_text()
    assert re.search(r"\d+ matching document", meta), meta
    with page.expect_navigation():
        results.first.locator("a").first.click()
    assert SEARCH_TERM in page.locator("article").inner_text()
    assert_quiet(reader, f"search for {SEARCH_TERM!r}")


def test_palette_toggle_switches_and_persists(reader: Reader, browser: Any, site_url: str) -> None:
    """A reader who prefers the dark palette gets it; the header's toggle switches the palette and the next page
    keeps it (the sweeps' dark scan switches each page so: sweep.py `_dark_axe`)."""
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme="dark") as dark:
        assert dark.open("").evaluate(scheme) == "slate", "a reader who prefers the dark palette did not get it"
        assert_quiet(dark, "a first load that prefers the dark palette")
    page = reader.open("")
    assert page.evaluate(scheme) == "default"
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert page.evaluate(scheme) == "slate"
    reader.open("interconnect/")
    assert page.evaluate(scheme) == "slate", "the dark palette was not kept on the next page"
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert page.evaluate(scheme) == "default"
    assert_quiet(reader, "palette toggle")


def _grid(page: Any) -> tuple[Any, Any]:
    """The sizing grid's filter box and table: the first search box and table inside the article."""
    box = page.locator("article input[type=search]")
    assert box.count() == 1, "the sizing page has no filter box"
    table = page.locator("article table:has(tbody tr)").first
    return box.first, table


def _visible_rows(table: Any) -> list[str]:
    return table.evaluate(
        "t => Array.from(t.tBodies[0].rows).filter(r => r.offsetParent !== null).map(r => r.textContent)"
    )


GRID_LINES = 3
"""The most lines of text a typical row of the sizing grid may take at a desktop's width: a reader runs an eye
across a row, and eight-line rows (the recommendation squeezed to a figure's width) put three rows on a screen."""
GRID_TALLEST = 6
"""The most lines any row may take: a sentence (vLLM's refusal) wraps in the recommendation's column in four; in a
figure's column it took twenty-six."""


def test_sizing_grid_rows_stay_low(sweeps: Sweeps, built: Build, pages: list[str]) -> None:
    """On a desktop, the median row of the sizing grid and nine rows in ten take at most GRID_LINES lines (the
    recommendation wraps in a column of its own width, docs/stylesheets/extra.css), and none more than
    GRID_TALLEST (a record nothing is recommended for says why in that column too)."""
    grids = [path for path in pages if 'class="sa-grid' in _html(built, path)]  # the grid's page, without parsing it
    assert grids, "no page has the sizing grid"
    for path in grids:
        visit = sweeps[DESKTOP_LIGHT][path]
        assert not visit.problems("grid_rows"), visit.problems("grid_rows")
        (got,) = visit["grid_rows"]
        grid = _html(built, path).split('class="sa-grid', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
        assert got["rows"] == grid.count("<tr>"), (path, got)  # the whole grid was laid out when it was measured
        assert got["median"] <= GRID_LINES and got["p90"] <= GRID_LINES, (path, got)
        assert got["tallest"] <= GRID_TALLEST, (path, got)


@pytest.fixture(scope="module")
def grid_reader(browser: Any, site_url: str) -> Iterator[Reader]:
    """The sizing grid's page, loaded once for the tests that drive it (three megabytes of table: each load is
    seconds of CPU); each test works from the state it finds and leaves every row shown."""
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme="light") as r:
        r.open("reference/sizing/")
        # the table is laid out once the page's megabytes are parsed: on a loaded CI runner that once took longer than
        # the default 15 s a step; wait for it as for a navigation (a readiness bound, not a speed check)
        r.page.locator("article table:has(tbody tr)").first.wait_for(state="attached", timeout=60_000)
        yield r


@pytest.mark.xdist_group("sizing-grid")  # one worker opens the page for both (conftest.py)
def test_sizing_grid_filters_rows(grid_reader: Reader) -> None:
    """Typing in the filter hides exactly the rows that lack a typed word; clearing shows all again."""
    reader, page = grid_reader, grid_reader.page
    box, table = _grid(page)
    everything = _visible_rows(table)
    assert len(everything) > 2
    first = table.locator("tbody tr").first.locator("td").all_inner_texts()
    # words from the first row: the last of its model's name (column 2) and its accelerator (column 4);
    # the page promises that a row stays when it contains every typed word
    words = [first[1].split()[-1], *first[3].split()]
    box.fill(" ".join(words))
    shown = _visible_rows(table)
    expected = [row for row in everything if all(w.lower() in row.lower() for w in words)]
    assert 0 < len(shown) < len(everything), f"filter {words} showed {len(shown)} of {len(everything)} rows"
    assert sorted(shown) == sorted(expected)
    box.fill("no-such-row-anywhere")
    assert _visible_rows(table) == []
    box.fill("")
    assert len(_visible_rows(table)) == len(everything)
    assert_quiet(reader, "/reference/sizing/ filter")


@pytest.mark.xdist_group("sizing-grid")
def test_sizing_grid_sorts_by_a_column(grid_reader: Reader) -> None:
    """Clicking a numeric column's header orders the rows by the figures' values, then reverses."""
    reader, page = grid_reader, grid_reader.page
    _, table = _grid(page)
    headers = table.locator("thead th")
    col = next(
        (i for i in range(headers.count())
         if table.evaluate(f"t => Array.from(t.tBodies[0].rows).every(r => r.cells[{i}].querySelector('.sa-fig'))")),
        None,
    )
    assert col is not None, "no column of computed figures in the grid"
    values = (
        f"t => Array.from(t.tBodies[0].rows)"
        f".map(r => parseFloat(r.cells[{col}].querySelector('.sa-fig').dataset.value))"
    )
    before = table.evaluate(values)
    headers.nth(col).click()
    up = table.evaluate(values)
    assert headers.nth(col).get_attribute("aria-sort") == "ascending"
    headers.nth(col).click()
    down = table.evaluate(values)
    assert up == sorted(before), f"column {col}: not ascending after one click"
    assert down == sorted(before, reverse=True), f"column {col}: not descending after two clicks"
    assert headers.nth(col).get_attribute("aria-sort") == "descending"
    # from the keyboard: the header's button takes focus and Enter sorts
    button = headers.nth(col).locator("button")
    assert button.count() == 1, f"column {col}: the header has no sort button"
    button.focus()
    page.keyboard.press("Enter")
    assert table.evaluate(values) == sorted(before), f"column {col}: Enter on the header did not sort ascending"
    assert headers.nth(col).get_attribute("aria-sort") == "ascending"
    assert_quiet(reader, "/reference/sizing/ sort")


def test_no_horizontal_overflow_on_a_phone(sweeps: Sweeps, pages: list[str]) -> None:
    """At 375 px (a phone: touch, the page's viewport tag honoured) the page never scrolls sideways; wide tables
    scroll inside their own wrapper. Material wraps each table from its own script, after the page has loaded; on a
    busy machine that can come after "network idle": the sweep waits for it (up to 10 s), then measures."""
    failures: list[str] = []
    for path in pages:
        visit = sweeps[PHONE_TOUCH][path]
        failures += [f"phone viewport: {problem}" for problem in visit.problems("overflow")]
        got = visit.results.get("overflow")
        if got is None:
            continue
        if got["scroll"] > got["client"]:
            failures.append(
                f"/{path}: {got['scroll']} px wide in a {got['client']} px viewport; widest: {got['wide']}"
            )
        if got["unwrapped"]:
            failures.append(f"/{path}: {got['unwrapped']} table(s) outside a scrolling wrapper")
    assert not failures, "\n".join(failures)


def test_wide_tables_keep_their_key_column_and_say_they_scroll(sweeps: Sweeps, pages: list[str]) -> None:
    """At 1280 px a table wider than its column says that it scrolls, and its first (key) column stays in view
    when the reader scrolls it to the far end (measured once Material has wrapped the tables and a11y.js has marked
    the scrolling ones)."""
    failures: list[str] = []
    for path in pages:
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += visit.problems("wide_tables")
        for t in visit.results.get("wide_tables", []):
            if t["marked"] != "1" or "Scroll sideways" not in t["hint"]:
                failures.append(f"/{path}: table ({t['head']}) scrolls with no signal")
            if abs(t["left"]) > 1:
                failures.append(f"/{path}: table ({t['head']}) hides its key column when scrolled ({t['left']} px)")
    assert not failures, "\n".join(failures)


def test_the_colour_rules_read_one_row_of_each_kind_and_miss_no_kind(reader: Reader, axe_source: str) -> None:
    """The sweeps' axe scan (sweep.py `_axe`) runs the colour rules over one table row of each kind where many rows
    repeat others: a faint row among hundreds of plain ones is its own kind and is found; a faint kind repeated
    on every row is found once; every row is put back."""
    def rows(n: int, span: str) -> str:
        return "".join(f"<tr><td>row {i}</td><td>{span}</td></tr>" for i in range(n))

    plain, faint = "<span class='x'>42</span>", "<span class='x' style='color: #c8c8c8'>42</span>"
    tables = "".join(f"<table><thead><tr><th>Row</th><th>Value</th></tr></thead><tbody>{body}</tbody></table>"
                     for body in (rows(200, plain) + rows(1, faint) + rows(50, plain), rows(150, faint)))
    page = reader.page
    page.set_content(f"<!doctype html><html lang='en'><head><title>Rows</title></head><body><main><article><h1>Rows</h1>"
                     f"{tables}</article></main></body></html>")
    got = _axe(page, axe_source, None)
    assert got["rows_left_out"] == 249 + 149 >= SAME_ROWS_MIN, got["rows_left_out"]
    (contrast,) = [v for v in got["violations"] if v["id"] == "color-contrast"]
    assert len(contrast["nodes"]) == 2, contrast  # the odd row of the first table, one row of the second
    assert page.evaluate("() => document.querySelectorAll('tbody tr').length") == 251 + 150
    assert page.evaluate("() => document.querySelectorAll('tbody')[0].rows[200].textContent") == "row 042"
    assert_quiet(reader, "a page of repeated rows")


# The dark palette changes colours only: sweep.py scans it with the colour rules (COLOUR_RULES), once the desktop
# reader has switched the page to it with the header's toggle; the light one with all rules. The colour rules read
# one table row of each kind where many rows repeat others (the test above).
@pytest.mark.parametrize(
    ("scheme", "material", "collector", "rules"),
    [pytest.param("light", "default", "axe", None, id="light-default-None"),  # the ids of before the sweeps
     pytest.param("dark", "slate", "axe_dark", COLOUR_RULES, id="dark-slate-rules1")],
)
def test_accessibility(
    sweeps: Sweeps, pages: list[str], scheme: str, material: str, collector: str, rules: tuple[str, ...] | None,
) -> None:
    """axe-core finds no serious or critical violation on any page, in either palette."""
    failures: list[str] = []
    for path in pages:
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += [f"axe scan, {scheme} palette: {problem}" for problem in visit.problems(collector)]
        got = visit.results.get(collector)
        if got is None:
            continue
        assert got["rules"] == (list(rules) if rules else None), f"/{path}: scanned with {got['rules']}"
        assert got["scheme"] == material, f"/{path}: scanned in the {got['scheme']} palette, not {material}"
        for v in got["violations"]:
            if v["impact"] in SEVERE:
                nodes = ", ".join(v["nodes"][:5]) + (" ..." if len(v["nodes"]) > 5 else "")
                failures.append(f"/{path} [{scheme}] {v['impact']} {v['id']}: {v['help']} -> {nodes}")
    assert not failures, "\n".join(failures)
