"""Layout as a reader meets it (issue 29): every table's key and answer columns in view at 1280 and 375 px, chart
labels neither overlapping nor clipped by their chart, and the Foundations pages short enough to read.

A table's key column is its first (the row's name) and its answer column its last; a table wider than its column
keeps both in view (sticky, docs/stylesheets/extra.css) while the columns between them scroll, so each is checked
with the table scrolled to either end.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from .conftest import DESKTOP, PHONE, Reader

pytestmark = pytest.mark.browser

FOUNDATIONS_MAX_PX = 9_000
"""The tallest a Foundations page may be at 1280 px, in CSS px (issue 29: about 9,000)."""
FOUNDATIONS = ("hbm/", "roofline/", "precision/", "interconnect/", "parallelism/", "moe/", "kv-cache/", "cost/",
               "latency-target/")
TALL: dict[str, int] = {
    # pages known to be taller than FOUNDATIONS_MAX_PX at 1280 px, with their height (strict xfail, so a page that
    # gets short enough fails here until it is taken off this list); none now: the cost page (15,694 px) and the
    # latency-target page (21,218 px) moved their long tables to reference/serving (7,728 and 8,440 px)
}

_MARKED = """() => Array.from(document.querySelectorAll('article table')).every(t => {
    const w = t.closest('.md-typeset__scrollwrap');
    return w && (w.scrollWidth > w.clientWidth + 1) === (w.getAttribute('data-sa-wide') === '1');
})"""

_TABLES = """() => Array.from(document.querySelectorAll('article table')).map(t => {
    const w = t.closest('.md-typeset__scrollwrap') || t.parentElement;
    const head = (t.querySelector('th') || {}).textContent || '';
    const rows = Array.from(t.querySelectorAll('tr'));
    const out = [];
    for (const end of ['start', 'end']) {
        w.scrollLeft = end === 'start' ? 0 : w.scrollWidth;
        const box = w.getBoundingClientRect();
        for (const row of rows.slice(0, 3)) {
            const cells = row.children;
            if (!cells.length) continue;
            for (const [which, cell] of [['key', cells[0]], ['answer', cells[cells.length - 1]]]) {
                const r = cell.getBoundingClientRect();
                if (r.left < box.left - 1 || r.right > box.right + 1)
                    out.push(`${which} column (${cell.textContent.trim().slice(0, 20)}) out of view, scrolled to the ${end}`);
            }
            const [k, a] = [cells[0], cells[cells.length - 1]].map(c => c.getBoundingClientRect());
            if (cells.length > 1 && k.right > a.left + 1)
                out.push(`key and answer columns overlap, scrolled to the ${end}`);
        }
    }
    w.scrollLeft = 0;
    return {head: head.trim().slice(0, 30), problems: Array.from(new Set(out))};
})"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "375px"])
def test_every_table_keeps_its_key_and_answer_columns_in_view(browser: Any, site_url: str, pages: list[str],
                                                              viewport: dict[str, int]) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    failures: list[str] = []
    checked = 0
    with Reader(browser, site_url, viewport=viewport) as r:
        for path in pages:
            page = r.open(path)
            # Material wraps tables and a11y.js marks the scrolling ones after load: wait until every one is marked
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function(_MARKED, timeout=10_000)
            for t in page.evaluate(_TABLES):
                checked += 1
                failures += [f"/{path} table ({t['head']}): {p}" for p in t["problems"]]
        failures += r.log.problems()
    assert checked > 50, f"only {checked} tables on the whole site: is the selector still right?"
    assert not failures, f"{len(failures)} at {viewport['width']} px:\n" + "\n".join(failures)


_LABELS = """() => Array.from(document.querySelectorAll('article svg.sa-chart')).filter(s => {
    const b = s.getBoundingClientRect(); return b.width > 0 && b.height > 0;
}).map(s => {
    const name = (s.getAttribute('aria-labelledby') || '').split(' ')[0].replace(/-title$/, '');
    const box = s.getBoundingClientRect();
    const texts = Array.from(s.querySelectorAll('text')).map(t => {
        const r = t.getBoundingClientRect();
        return {label: t.textContent.trim(), l: r.left, r: r.right, t: r.top, b: r.bottom};
    });
    const problems = [];
    for (const t of texts) {
        if (t.l < box.left - 1 || t.r > box.right + 1 || t.t < box.top - 1 || t.b > box.bottom + 1)
            problems.push(`'${t.label}' clipped by the chart's box`);
    }
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i], c = texts[j];
        // glyph boxes include the font's line gap: overlap counts beyond a sliver of it
        const w = Math.min(a.r, c.r) - Math.max(a.l, c.l), h = Math.min(a.b, c.b) - Math.max(a.t, c.t);
        if (w > 1 && h > 0.25 * Math.min(a.b - a.t, c.b - c.t))
            problems.push(`'${a.label}' overlaps '${c.label}'`);
    }
    return {chart: name, count: texts.length, problems};
})"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "375px"])
def test_chart_labels_neither_overlap_nor_are_clipped(browser: Any, site_url: str, pages: list[str],
                                                      viewport: dict[str, int]) -> None:
    failures: list[str] = []
    labels = 0
    with Reader(browser, site_url, viewport=viewport) as r:
        for path in pages:
            for c in r.open(path).evaluate(_LABELS):
                labels += c["count"]
                failures += [f"/{path} {c['chart']}: {p}" for p in c["problems"]]
        failures += r.log.problems()
    assert labels > 100, f"only {labels} chart labels on the whole site: is the selector still right?"
    assert not failures, f"{len(failures)} at {viewport['width']} px:\n" + "\n".join(failures)


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=f"{TALL[p]:,} px at 1280 px: not yet shortened"))
    if p in TALL else p for p in FOUNDATIONS
])
def test_foundations_pages_are_short_enough_to_read(browser: Any, site_url: str, path: str) -> None:
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        height = r.open(path).evaluate("document.documentElement.scrollHeight")
    assert height <= FOUNDATIONS_MAX_PX, f"/{path} is {height:,} px tall at 1280 px (at most {FOUNDATIONS_MAX_PX:,})"


def test_charts_take_the_width_the_column_allows(browser: Any, site_url: str, pages: list[str]) -> None:
    """At 1280 px every chart is at least 640 px wide where its column is, and never wider than its column."""
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in pages:
            got = r.open(path).evaluate("""() => Array.from(document.querySelectorAll('article svg.sa-chart'))
                .filter(s => s.getBoundingClientRect().width > 0).map(s => ({
                    chart: (s.getAttribute('aria-labelledby') || '').split(' ')[0],
                    width: s.getBoundingClientRect().width,
                    column: s.closest('article').getBoundingClientRect().width}))""")
            for c in got:
                if c["width"] < min(640, c["column"]) - 1 or c["width"] > c["column"] + 1:
                    failures.append(f"/{path} {c['chart']}: {c['width']:.0f} px in a {c['column']:.0f} px column")
    assert not failures, "\n".join(failures)
