"""The reader's experience in a real browser, over every page of the built site.

Each test opens fresh contexts of one headless Chromium on the site served from 127.0.0.1, records
every request (anything for another host is aborted and fails the test, naming page and URL) and
every console error, and checks what a reader does: open quiz answers, filter and sort the sizing
grid, search, switch palettes, read on a phone, use assistive technology (axe-core).
"""

from __future__ import annotations

import contextlib
import html
import re
from typing import Any

import pytest
from bs4 import BeautifulSoup

from ..conftest import Build
from . import report
from .conftest import DESKTOP, PHONE, Reader, assert_quiet, sitemap_paths

pytestmark = pytest.mark.browser

TERMS = ("HBM", "NVLink", "TP", "PP", "KV")  # abbreviations every reader should be able to hover
SEARCH_TERM = "NVLink"
SEVERE = ("serious", "critical")


def _weigh(browser: Any, base: str, path: str) -> tuple[report.PageWeight, list[str]]:
    """Load one page with an empty cache; its response bytes, and what went wrong on the way."""
    with Reader(browser, base, viewport=DESKTOP, color_scheme="light") as r:
        finished: list[Any] = []
        r.context.on("requestfinished", lambda request: finished.append(request))
        page = r.open(path)
        # the search worker fetches the index on every page, sometimes after the network first idles (a megabyte
        # of grid to lay out first on the sizing page: a loaded machine takes seconds), so wait up to 30 s
        for _ in range(300):
            if any(req.url.endswith("/search_index.json") for req in finished):
                break
            page.wait_for_timeout(100)
        else:
            r.log.errors.append("the search index was never loaded")
        r.scroll_to_end()  # what loads only when scrolled to is weighed and checked too
        weight = report.PageWeight(path)
        for request in finished:
            weight.add(request.resource_type, request.sizes()["responseBodySize"])
        return weight, r.log.problems()


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


def test_every_page_loads_offline_and_quietly(browser: Any, site_url: str, pages: list[str]) -> None:
    """Each page, loaded cold: no request for another host, no console error, no failed request.

    The same loads weigh every page; the report goes to site-report/page-weight.md and the end of the
    session's output.
    """
    weights, problems = [], []
    for path in pages:
        weight, seen = _weigh(browser, site_url, path)
        weights.append(weight)
        problems += [f"/{path}: {p}" for p in seen]
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


def test_quiz_answers_open_and_close(browser: Any, site_url: str, built: Build, pages: list[str]) -> None:
    """Every folded block (`???`, e.g. the quiz answers) opens on a click and closes on the next."""
    with_details = _pages_with(built, pages, "details")
    assert with_details, "no page has a folded block; the companion pages' quiz answers are missing"
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in with_details:
            page = r.open(path)
            blocks = page.locator("article details")
            for i in range(blocks.count()):
                block = blocks.nth(i)
                summary = block.locator("> summary")
                body = block.locator("> :not(summary)").first
                label = f"/{path} details #{i + 1} ({summary.inner_text().strip()!r})"
                summary.scroll_into_view_if_needed()
                if block.evaluate("d => d.open"):
                    failures.append(f"{label}: open before any click")
                    continue
                summary.click()
                page.wait_for_function("d => d.open", arg=block.element_handle())
                if not body.is_visible():
                    failures.append(f"{label}: open, but its content is not visible")
                summary.click()
                page.wait_for_function("d => !d.open", arg=block.element_handle())
        failures += [f"folded blocks: {problem}" for problem in r.log.problems()]
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


def test_code_blocks_have_copy_buttons(browser: Any, site_url: str, built: Build, pages: list[str]) -> None:
    """Every code block has Material's copy button (content.code.copy)."""
    with_code = _pages_with(built, pages, "pre > code")
    if not with_code:
        pytest.skip("the site has no code blocks to copy")
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in with_code:
            page = r.open(path)
            blocks = page.locator("article pre:has(> code)")
            # Material 9.7 puts the button in `nav.md-code__nav` (older releases: `button.md-clipboard`)
            buttons = page.locator(
                'article pre:has(> code) button.md-code__button[data-md-type="copy"], '
                "article pre:has(> code) button.md-clipboard"
            )
            assert buttons.count() == blocks.count(), (
                f"/{path}: {blocks.count()} code blocks, {buttons.count()} copy buttons"
            )
        assert_quiet(r, "code blocks")


def test_search_finds_a_term(reader: Reader) -> None:
    """Open search, type a term, see results that contain it, follow the first one."""
    page = reader.open("")
    field_ = page.locator("input.md-search__input")
    field_.click()  # at desktop width the search field sits in the header
    field_.press_sequentially(SEARCH_TERM, delay=30)  # Material searches on key events, as a reader types
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=10000)
    assert results.count() >= 1
    assert SEARCH_TERM.lower() in results.first.inner_text().lower()
    meta = page.locator(".md-search-result__meta").inner_text()
    assert re.search(r"\d+ matching document", meta), meta
    with page.expect_navigation():
        results.first.locator("a").first.click()
    assert SEARCH_TERM in page.locator("article").inner_text()
    assert_quiet(reader, f"search for {SEARCH_TERM!r}")


def test_palette_toggle_switches_and_persists(reader: Reader) -> None:
    page = reader.open("")
    scheme = "document.body.getAttribute('data-md-color-scheme')"
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


def test_sizing_grid_filters_rows(reader: Reader) -> None:
    """Typing in the filter hides exactly the rows that lack a typed word; clearing shows all again."""
    page = reader.open("reference/sizing/")
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


def test_sizing_grid_sorts_by_a_column(reader: Reader) -> None:
    """Clicking a numeric column's header orders the rows by the figures' values, then reverses."""
    page = reader.open("reference/sizing/")
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


def test_no_horizontal_overflow_on_a_phone(browser: Any, site_url: str, pages: list[str]) -> None:
    """At 375 px the page never scrolls sideways; wide tables scroll inside their own wrapper."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    failures: list[str] = []
    with Reader(browser, site_url, viewport=PHONE, is_mobile=True, has_touch=True) as r:
        for path in pages:
            page = r.open(path)
            # Material wraps each table in its scrolling wrapper from its own script, after the page
            # has loaded; on a busy machine that can come after "network idle". Wait for it (a page
            # that never gets there is reported below), then measure.
            wrapped = ("() => Array.from(document.querySelectorAll('article table'))"
                       ".every(t => t.closest('.md-typeset__scrollwrap'))")
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function(wrapped, timeout=10_000)
            got = page.evaluate(
                """() => {
                    const d = document.documentElement;
                    const wide = Array.from(document.querySelectorAll('article *'))
                        .filter(e => e.getBoundingClientRect().right > d.clientWidth + 1)
                        .filter(e => !e.closest('.md-typeset__scrollwrap, .md-typeset__table, pre, .highlight'))
                        .slice(0, 3).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
                    return {scroll: d.scrollWidth, client: d.clientWidth, wide};
                }"""
            )
            if got["scroll"] > got["client"]:
                failures.append(
                    f"/{path}: {got['scroll']} px wide in a {got['client']} px viewport; widest: {got['wide']}"
                )
            unwrapped = page.evaluate(
                "() => Array.from(document.querySelectorAll('article table'))"
                ".filter(t => !t.closest('.md-typeset__scrollwrap')).length"
            )
            if unwrapped:
                failures.append(f"/{path}: {unwrapped} table(s) outside a scrolling wrapper")
        failures += [f"phone viewport: {problem}" for problem in r.log.problems()]
    assert not failures, "\n".join(failures)


def test_wide_tables_keep_their_key_column_and_say_they_scroll(browser: Any, site_url: str, pages: list[str]) -> None:
    """At 1280 px a table wider than its column says that it scrolls, and its first (key) column stays in view
    when the reader scrolls it to the far end."""
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in pages:
            page = r.open(path)
            page.wait_for_timeout(200)  # Material wraps tables and a11y.js marks the scrolling ones after load
            got = page.evaluate(
                """() => Array.from(document.querySelectorAll('article .md-typeset__scrollwrap'))
                    .filter(w => w.querySelector('table') && w.scrollWidth > w.clientWidth + 1)
                    .map(w => {
                        const head = (w.querySelector('th') || {}).textContent || '';
                        const hint = getComputedStyle(w, '::before').content;
                        const key = w.querySelector('tbody td');
                        w.scrollLeft = w.scrollWidth;
                        // after scrolling to the far end, the key cell must still lie inside the visible wrapper
                        const k = key ? key.getBoundingClientRect() : null, r = w.getBoundingClientRect();
                        const left = !k ? 0 : k.left < r.left - 1 ? k.left - r.left
                            : k.right > r.right + 1 ? k.right - r.right : 0;
                        w.scrollLeft = 0;
                        return {head: head.trim().slice(0, 30), marked: w.getAttribute('data-sa-wide'), hint, left};
                    })"""
            )
            for t in got:
                if t["marked"] != "1" or "Scroll sideways" not in t["hint"]:
                    failures.append(f"/{path}: table ({t['head']}) scrolls with no signal")
                if abs(t["left"]) > 1:
                    failures.append(f"/{path}: table ({t['head']}) hides its key column when scrolled ({t['left']} px)")
    assert not failures, "\n".join(failures)


# The dark palette changes colours only: scan it with the colour rules, the light one with all rules.
COLOUR_RULES = ("color-contrast", "link-in-text-block")


@pytest.mark.parametrize(
    ("scheme", "material", "rules"),
    [("light", "default", None), ("dark", "slate", COLOUR_RULES)],
)
def test_accessibility(
    browser: Any, site_url: str, pages: list[str], axe_source: str, scheme: str, material: str,
    rules: tuple[str, ...] | None,
) -> None:
    """axe-core finds no serious or critical violation on any page, in either palette."""
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = list(rules)
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme=scheme) as r:
        for path in pages:
            page = r.open(path)
            assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == material
            page.add_script_tag(content=axe_source)
            violations = page.evaluate(
                """async (options) => (await axe.run(document, options)).violations
                    .map(v => ({id: v.id, impact: v.impact, help: v.help,
                                nodes: v.nodes.map(n => n.target.join(' '))}))""",
                options,
            )
            for v in violations:
                if v["impact"] in SEVERE:
                    nodes = ", ".join(v["nodes"][:5]) + (" ..." if len(v["nodes"]) > 5 else "")
                    failures.append(f"/{path} [{scheme}] {v['impact']} {v['id']}: {v['help']} -> {nodes}")
        failures += [f"axe scan, {scheme} palette: {problem}" for problem in r.log.problems()]
    assert not failures, "\n".join(failures)
