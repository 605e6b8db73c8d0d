"""One load of every page per way of reading it, and every per-page measurement taken in that load.

The browser tests check each page of the site in several ways (nothing leaves 127.0.0.1, axe-core, key columns,
chart labels, overflow, ...). Loading every page again for each check made the browser tier the slowest part of CI
(issue 25), so a sweep loads each page once per reading (a desktop, a phone, a 375 px window without touch), runs
every collector of that reading on it and keeps what each returned, page by page. The desktop reader also switches
each page to the dark palette with the header's toggle, as a reader does, and scans it there (`_dark_axe`): that
took a fourth sweep before, every page loaded again in a context that prefers the dark palette (71-91 CPU-s of
loads and scans; the scan alone is about a third of it).

Each worker reads a reading's pages in one browser tab of that reading, going from page to page as a reader does: a
fresh context for every page cost Chromium a new renderer process per load, about half of a load's CPU time (2.6
against 1.35 CPU seconds a page, measured on 3 December 2026). The tab fetches every file again (the context routes
requests, which turns Playwright's HTTP cache off), so each load is as cold as the first and weighs the same. Only
the desktop reading gets the site's search index; the others get its configuration and no documents
(`SEARCH_INDEX_READINGS`). The tests assert on those results, as strictly as when each loaded the pages itself, and
each names the page and the check that failed.

What went wrong in a load (a request for another host, a console error, a failed request) counts against every test
that reads the load; what went wrong while one collector ran counts against that collector's tests. A collector that
raises (a timeout, a script error) fails the tests that read it, with its error.

The order of the collectors within a load matters: the read-only ones first, then the ones that scroll a table and
put it back, then axe-core (it adds its script to the page) in the light palette and then in the dark one (the
palette toggle clicked and clicked back by click events, with no pointer over the page), and last the ones that click
with the pointer (the folded blocks), whose hover would otherwise show in the scans.

The sweeps are one session fixture (`sweeps`, conftest.py) whose results the xdist workers share through files: each
page is loaded once per reading in the whole session, whichever worker runs the tests that read it (see `Sweeps`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from . import report
from .conftest import DESKTOP, PHONE, Reader

DESKTOP_LIGHT = "desktop"
PHONE_TOUCH = "phone"
PHONE_PLAIN = "phone-plain"
READINGS: dict[str, dict[str, Any]] = {
    # the browser context of each sweep
    DESKTOP_LIGHT: {"viewport": DESKTOP, "color_scheme": "light"},
    PHONE_TOUCH: {"viewport": PHONE, "is_mobile": True, "has_touch": True, "color_scheme": "light"},
    PHONE_PLAIN: {"viewport": PHONE, "color_scheme": "light"},  # test_layout's 375 px: a narrow window, no touch
}

# The dark palette changes colours only: scan it with the colour rules, the light one with all rules.
DARK = "slate"
"""Material's scheme of the dark palette (mkdocs.yml), on the body as `data-md-color-scheme`."""
TOGGLE = "form[data-md-component=palette] label:visible"
"""The header's palette toggle: the label a reader clicks for the other palette."""
COLOUR_RULES = ("color-contrast", "link-in-text-block")

GROUPED = (("kv-cache/", "kv-chart"), ("interconnect/", "gpus-chart"), ("reference/predictions/", "sweep-chart"))
"""The grouped-bar charts whose labels test_chart_text.py checks box by box: page and chart."""


# ---- collectors: each a script run in the page, or a few steps driven from here ----

SCHEME = "document.body.getAttribute('data-md-color-scheme')"

HEIGHT = "document.documentElement.scrollHeight"

PROSE = "parseFloat(getComputedStyle(document.querySelector('article p')).fontSize)"

CHART_WIDTHS = """() => Array.from(document.querySelectorAll('article svg.sa-chart'))
    .filter(s => s.getBoundingClientRect().width > 0).map(s => ({
        chart: (s.getAttribute('aria-labelledby') || '').split(' ')[0],
        width: s.getBoundingClientRect().width,
        column: s.closest('article').getBoundingClientRect().width}))"""

# every label of every chart, clipped by the chart's box or overlapping another beyond a sliver of line gap
CHART_LABELS = """() => Array.from(document.querySelectorAll('article svg.sa-chart')).filter(s => {
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

# every <text> in an SVG of the article as rendered: its chart, its words, its size in CSS px (test_chart_text.py)
LABEL_SIZES = """() => Array.from(document.querySelectorAll('article svg')).filter(s => s.querySelector('text'))
    .filter(s => getComputedStyle(s).display !== 'none')  // a chart's rendering for the other width is hidden
    .flatMap(s => {
    const name = (s.getAttribute('aria-labelledby') || '').split(' ')[0].replace(/-title$/, '')
        || s.getAttribute('class') || 'an unnamed svg';
    const box = s.getBoundingClientRect();
    return Array.from(s.querySelectorAll('text')).map(t => {
        const m = t.getScreenCTM();
        const r = t.getBoundingClientRect();
        return {chart: name, label: t.textContent.trim(), rendered: r.width > 0 && r.height > 0,
                px: m ? Math.hypot(m.a, m.b) * parseFloat(getComputedStyle(t).fontSize) : 0,
                right: box.right, client: document.documentElement.clientWidth};
    });
})"""

# each build-time diagram's smallest text in CSS px, and where it ends (test_diagrams.py)
DIAGRAMS = """() => Array.from(document.querySelectorAll('article svg.sa-diagram')).map(s => {
    const box = s.getBoundingClientRect();
    const scale = box.width / s.viewBox.baseVal.width;
    const own = parseFloat(s.getAttribute('font-size'));
    const sizes = Array.from(s.querySelectorAll('text'))
        .map(t => parseFloat(t.getAttribute('font-size') || own) * scale);
    return {name: s.getAttribute('aria-labelledby'), smallest: Math.min(...sizes), right: box.right,
            client: document.documentElement.clientWidth};
})"""

# the boxes of one chart's visible drawing and of each of its labels (the grouped-bar charts of GROUPED)
BOXES = """(id) => Array.from(document.querySelectorAll(`article svg[aria-labelledby^="${id}"]`))
    .filter(s => getComputedStyle(s).display !== 'none')
    .map(s => {
        const box = s.getBoundingClientRect();
        return {box: [box.left, box.top, box.right, box.bottom],
                labels: Array.from(s.querySelectorAll('text')).map(t => {
                    const r = t.getBoundingClientRect();
                    return {label: t.textContent.trim(), box: [r.left, r.top, r.right, r.bottom]};
                })};
    })"""

COPY_BUTTONS = """() => ({
    blocks: document.querySelectorAll('article pre:has(> code)').length,
    // Material 9.7 puts the button in `nav.md-code__nav` (older releases: `button.md-clipboard`)
    buttons: document.querySelectorAll('article pre:has(> code) button.md-code__button[data-md-type="copy"], '
        + 'article pre:has(> code) button.md-clipboard').length})"""

# Material wraps each table in its scrolling wrapper from its own script, after the page has loaded; on a busy
# machine that can come after "network idle"
WRAPPED = ("() => Array.from(document.querySelectorAll('article table'))"
           ".every(t => t.closest('.md-typeset__scrollwrap'))")

OVERFLOW = """() => {
    const d = document.documentElement;
    const wide = Array.from(document.querySelectorAll('article *'))
        .filter(e => e.getBoundingClientRect().right > d.clientWidth + 1)
        .filter(e => !e.closest('.md-typeset__scrollwrap, .md-typeset__table, pre, .highlight'))
        .slice(0, 3).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
    const unwrapped = Array.from(document.querySelectorAll('article table'))
        .filter(t => !t.closest('.md-typeset__scrollwrap')).length;
    return {scroll: d.scrollWidth, client: d.clientWidth, wide, unwrapped};
}"""

# every table wrapped, and a11y.js has marked exactly the wrappers that scroll
MARKED = """() => Array.from(document.querySelectorAll('article table')).every(t => {
    const w = t.closest('.md-typeset__scrollwrap');
    return w && (w.scrollWidth > w.clientWidth + 1) === (w.getAttribute('data-sa-wide') === '1');
})"""

WIDE_TABLES = """() => Array.from(document.querySelectorAll('article .md-typeset__scrollwrap'))
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

# each table's key (first) and answer (last) columns in view, with the table scrolled to either end (test_layout.py)
KEY_COLUMNS = """() => Array.from(document.querySelectorAll('article table')).map(t => {
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

# each sizing-grid table's rows in lines of text (height less the cell's padding, over its line height): the median,
# the 90th percentile and the tallest, at the reading's width (test_reader.py)
GRID_ROWS = """() => Array.from(document.querySelectorAll('article .sa-grid table')).filter(t => t.tBodies[0].rows.length)
    .map(t => {
        const style = getComputedStyle(t.tBodies[0].rows[0].cells[0]);
        const line = parseFloat(style.lineHeight), pad = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
        const lines = Array.from(t.tBodies[0].rows).map(r => (r.getBoundingClientRect().height - pad) / line)
            .sort((a, b) => a - b);
        return {rows: lines.length, median: lines[lines.length >> 1], p90: lines[Math.floor(lines.length * 0.9)],
                tallest: lines[lines.length - 1]};
    })"""

AXE = """async (options) => (await axe.run(document, options)).violations
    .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))"""

# Every body row of an article table that repeats an earlier row of the same table in everything a colour rule reads:
# for the row and each element in it, its tag, its class, whether it holds text of its own, and the computed
# style that sets a colour contrast (colours, backgrounds, opacity, font, shadow, what its pseudo-elements draw).
# Where there are SAME_ROWS_MIN of them or more, the colour rules scan the page with those rows taken out (and put
# back after): one row of each kind. The sizing grid's 1,144 body rows are 12 kinds, and scanning every one was most of
# the browser tier's axe time: color-contrast alone took 15 CPU-s of the sizing page's scan in each palette (measured
# on 3 December 2026). Below that, a second scan costs more than the rows it leaves out.
FIND_SAME_ROWS = """() => {
    const props = ['color', 'background-color', 'background-image', 'opacity', 'font-size', 'font-weight',
        'font-family', 'text-shadow', 'visibility', 'display', 'filter', 'mix-blend-mode', 'text-decoration-line',
        '-webkit-text-stroke-width', 'position'];
    const style = (e, pseudo) => { const c = getComputedStyle(e, pseudo); return props.map(p => c.getPropertyValue(p)); };
    const kind = e => [e.tagName, e.getAttribute('class') || '',
        Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()),
        ...style(e), getComputedStyle(e, '::before').content, ...style(e, '::before'),
        getComputedStyle(e, '::after').content, ...style(e, '::after')].join('|');
    const out = [];
    for (const table of document.querySelectorAll('article table')) {
        const seen = new Set();
        for (const row of table.querySelectorAll(':scope > tbody > tr')) {
            const key = [row, ...row.querySelectorAll('*')].map(kind).join('/');
            if (seen.has(key)) out.push([row, row.parentNode, row.nextSibling]); else seen.add(key);
        }
    }
    window.saSameRows = out;
    return out.length;
}"""

TAKE_OUT = "() => { for (const [row] of window.saSameRows) row.remove(); }"

SAME_ROWS_MIN = 100

PUT_BACK_SAME_ROWS = """() => {
    const out = window.saSameRows || [];
    for (const [row, parent, next] of out.reverse()) parent.insertBefore(row, next);
    delete window.saSameRows;
    return out.length;
}"""


def _wait(page: Any, script: str) -> None:
    """Wait up to 10 s for `script` to hold; a page that never gets there is reported by the check that reads it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(script, timeout=10_000)


def _axe(page: Any, source: str, rules: tuple[str, ...] | None) -> dict[str, Any]:
    """axe-core's scan with `rules` (None: its default rules; else colour rules only), the colour rules over one
    table row of each kind where many rows repeat others (FIND_SAME_ROWS), every other rule over every row."""
    if rules and not set(rules) <= set(COLOUR_RULES):
        raise ValueError(f"a scan with chosen rules takes colour rules only, not {rules}")
    scheme = page.evaluate(SCHEME)  # before the scan: the palette the page is in
    if not page.evaluate("typeof axe !== 'undefined'"):  # the dark scan follows the light one on the same page
        page.add_script_tag(content=source)
    found: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules:
        found["runOnly"] = list(rules)
    same = page.evaluate(FIND_SAME_ROWS)
    if same < SAME_ROWS_MIN:
        return {"scheme": scheme, "rules": found.get("runOnly"), "violations": page.evaluate(AXE, found),
                "rows_left_out": 0}
    violations = []
    if not rules:  # every default rule but the colour ones, over every row
        violations += page.evaluate(AXE, {**found, "rules": {rule: {"enabled": False} for rule in COLOUR_RULES}})
    page.evaluate(TAKE_OUT)
    try:
        violations += page.evaluate(AXE, {**found, "runOnly": list(rules or COLOUR_RULES)})
    finally:
        put_back = page.evaluate(PUT_BACK_SAME_ROWS)
    if put_back != same:
        raise AssertionError(f"{same} table rows taken out for the colour rules, {put_back} put back")
    return {"scheme": scheme, "rules": found.get("runOnly"), "violations": violations, "rows_left_out": same}


def _dark_axe(page: Any, source: str) -> dict[str, Any]:
    """The page switched to the dark palette with the header's toggle, as a reader switches it, scanned with the
    colour rules (`_axe`), and switched back (Material keeps the choice for the next page: the toggle back restores
    it). Material's styles follow the body's scheme attribute, not the media query, so the colours are those of a
    load that prefers the dark palette (test_reader.py loads a page so as well, and checks it comes up dark)."""
    scheme = f"document.body.getAttribute('data-md-color-scheme') === '{DARK}'"
    # a click event, not the pointer: a pointer left on the toggle shows its tooltip, which the scan would catch
    # fading in (part-transparent, so below the contrast threshold) on a page it reached mid-fade
    page.locator(TOGGLE).first.dispatch_event("click")
    page.wait_for_function(scheme)
    try:
        return _axe(page, source, COLOUR_RULES)
    finally:
        page.locator(TOGGLE).first.dispatch_event("click")
        page.wait_for_function(f"!({scheme})")


def _quiz(page: Any, path: str) -> list[str]:
    """Every folded block (`???`, e.g. the quiz answers) opened with a click and closed with the next: what failed."""
    failures: list[str] = []
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
    return failures


def _grouped(page: Any) -> dict[str, list[dict[str, Any]]]:
    return {chart: page.evaluate(BOXES, chart) for chart in sorted({chart for _, chart in GROUPED})}


# ---- one page's results ----


@dataclass
class Visit:
    """One page loaded in one reading: what went wrong, and what each collector returned."""

    reading: str
    path: str
    loaded: list[str] = field(default_factory=list)
    """what went wrong while the page loaded (up to network idle): it counts against every check of the load"""
    results: dict[str, Any] = field(default_factory=dict)
    raised: dict[str, str] = field(default_factory=dict)
    during: dict[str, list[str]] = field(default_factory=dict)
    """what went wrong while a collector ran, by collector"""
    after: list[str] = field(default_factory=list)
    """what went wrong between collectors (while waiting for the page's scripts) or after the last: it counts against
    every check of the load"""

    def __getitem__(self, name: str) -> Any:
        """What collector `name` returned; the test fails, naming page and reading, if it could not run."""
        if name in self.raised:
            pytest.fail(f"/{self.path} ({self.reading}): {name} could not run: {self.raised[name]}")
        if name not in self.results:
            why = "; ".join(self.loaded) or "the sweep has no such collector"
            pytest.fail(f"/{self.path} ({self.reading}): {name} was not collected ({why})")
        return self.results[name]

    def problems(self, *names: str) -> list[str]:
        """What went wrong in the load and while the collectors `names` ran (or why they did not), each naming the
        page."""
        found = list(self.loaded)
        for name in names:
            found += self.during.get(name, [])
            if name in self.raised:
                found.append(f"{name} could not run: {self.raised[name]}")
            elif name not in self.results and not self.loaded:
                found.append(f"{name} was not collected in the {self.reading} sweep")
        return [f"/{self.path}: {p}" for p in found + self.after]


class Sweeps:
    """The sweeps of one test session, each run the first time a test asks for it, and shared by the xdist workers.

    Each page's visit is kept in `shared` (a pickle per reading and page), which every worker of the session sees:
    a worker that needs a reading visits the pages no other worker has claimed (an flock on the page's file while it
    visits), then waits for the pages the others are visiting and reads their results. Two workers that need the
    same reading at once split its pages between them; none loads a page twice.
    """

    def __init__(self, browser: Any, base: str, pages: list[str], axe: str, shared: Path, search_index: bytes) -> None:
        self.browser, self.base, self.pages, self.axe, self.shared = browser, base, pages, axe, shared
        self.empty_index = empty_index(search_index)
        self.done: dict[str, dict[str, Visit]] = {}
        self.tabs: dict[str, Tab] = {}

    def tab(self, reading: str) -> Tab:
        """This worker's tab of `reading`, opened the first time a page is visited in it."""
        if reading not in self.tabs:
            index = None if reading in SEARCH_INDEX_READINGS else self.empty_index
            self.tabs[reading] = Tab(Reader(self.browser, self.base, **READINGS[reading]), index)
        return self.tabs[reading]

    def close(self) -> None:
        for tab in self.tabs.values():
            tab.reader.close()
        self.tabs.clear()

    def _file(self, reading: str, path: str) -> Path:
        return self.shared / f"{reading}--{path.replace('/', '_') or 'home'}.pickle"

    def _claim(self, reading: str, path: str, wait: bool) -> Visit | None:
        """The visit of `path` in `reading`: read if a worker made it, else made here, under the page's lock;
        None if another worker holds the lock and `wait` is false."""
        file = self._file(reading, path)
        with open(file.with_suffix(".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                return None
            try:
                if file.is_file():
                    return pickle.loads(file.read_bytes())  # noqa: S301 - written by this session's workers
                found = visit(self.tab(reading), reading, path, self.axe)
                part = file.with_suffix(".part")
                part.write_bytes(pickle.dumps(found))
                part.replace(file)
                return found
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def __getitem__(self, reading: str) -> dict[str, Visit]:
        """Every page of the site in `reading`, by path."""
        if reading not in self.done:
            self.shared.mkdir(parents=True, exist_ok=True)
            got = {path: self._claim(reading, path, wait=False) for path in self.pages}
            self.done[reading] = {path: v or self._claim(reading, path, wait=True) for path, v in got.items()}
        return self.done[reading]  # type: ignore[return-value]


class Recorder:
    """Runs the collectors of one page in its reader, keeping each one's result or error, and its problems.

    Every problem the reader logs lands in exactly one place: the load's (`Visit.loaded`), the collector's that was
    running (`Visit.during`), or, if it came between collectors (while waiting for the page's scripts),
    `Visit.after`."""

    def __init__(self, reader: Reader, visit: Visit) -> None:
        self.reader, self.visit = reader, visit
        self.last = self.mark()

    def mark(self) -> tuple[int, int]:
        return len(self.reader.log.foreign), len(self.reader.log.errors)

    def since(self, mark: tuple[int, int]) -> list[str]:
        log = self.reader.log
        return [f"request to another host: {u}" for u in log.foreign[mark[0]:]] + log.errors[mark[1]:]

    def settle(self) -> None:
        """Whatever went wrong since the last collector counts against every check of the load."""
        self.visit.after += self.since(self.last)
        self.last = self.mark()

    def __call__(self, name: str, collect: Callable[[], Any]) -> None:
        self.settle()
        try:
            self.visit.results[name] = collect()
        except Exception as exc:  # kept, and raised by the tests that read this collector
            self.visit.raised[name] = f"{type(exc).__name__}: {exc}"
        self.visit.during[name] = self.since(self.last)
        self.last = self.mark()


def _collect(reading: str, r: Recorder, page: Any, path: str, axe: str) -> None:
    """The collectors of each reading, in the order they may run in (read-only first, clicks last)."""
    if reading == DESKTOP_LIGHT:
        page.evaluate("window.scrollTo(0, 0)")  # back from the offline check's scroll to the end
        r("height", lambda: page.evaluate(HEIGHT))
        r("chart_widths", lambda: page.evaluate(CHART_WIDTHS))
        r("chart_labels", lambda: page.evaluate(CHART_LABELS))
        r("label_sizes", lambda: page.evaluate(LABEL_SIZES))
        r("diagrams", lambda: page.evaluate(DIAGRAMS))
        r("prose", lambda: page.evaluate(PROSE))
        r("copy_buttons", lambda: page.evaluate(COPY_BUTTONS))
        r("grid_rows", lambda: page.evaluate(GRID_ROWS))
        r("grouped", lambda: _grouped(page))
        _wait(page, MARKED)  # Material wraps tables and a11y.js marks the scrolling ones after load
        r("wide_tables", lambda: page.evaluate(WIDE_TABLES))
        r("key_columns", lambda: page.evaluate(KEY_COLUMNS))
        r("axe", lambda: _axe(page, axe, None))
        r("axe_dark", lambda: _dark_axe(page, axe))  # before the quiz: no pointer has hovered anything yet
        r("quiz", lambda: _quiz(page, path))
    elif reading == PHONE_TOUCH:
        _wait(page, WRAPPED)
        r("overflow", lambda: page.evaluate(OVERFLOW))
        r("label_sizes", lambda: page.evaluate(LABEL_SIZES))
        r("diagrams", lambda: page.evaluate(DIAGRAMS))
        r("grouped", lambda: _grouped(page))
    elif reading == PHONE_PLAIN:
        r("chart_labels", lambda: page.evaluate(CHART_LABELS))
        _wait(page, MARKED)
        r("key_columns", lambda: page.evaluate(KEY_COLUMNS))
    else:
        raise ValueError(f"no reading {reading!r}")


def _offline(r: Reader, page: Any, finished: list[Any], path: str) -> report.PageWeight:
    """The desktop sweep's first step: wait for the search index, scroll to the end; the page's weight so far."""
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
    for request in list(finished):
        weight.add(request.resource_type, request.sizes()["responseBodySize"])
    return weight


SEARCH_INDEX = "search/search_index.json"

SEARCH_INDEX_READINGS = (DESKTOP_LIGHT,)
"""The readings whose loads get the site's search index. The others (a phone, a narrow window) are
handed an index with the site's search configuration and no documents (`empty_index`): the index is one file for
every page and reading, which the desktop sweep loads and weighs on every page (the offline check) and
test_reader.py searches, and which Material's search worker turns into a lunr index on each page load. Built from
the real file, that is about one CPU-second a page, a third of a phone sweep's CPU (measured on 3 December 2026,
one worker, quiet: the phone sweep 45.5 → 29.7 CPU-s, the dark one, then a sweep of its own, 83 → 64.5)."""


def empty_index(real: bytes) -> str:
    """The search index `real` with its configuration kept and its documents left out."""
    return json.dumps({**json.loads(real), "docs": []})


class Tab:
    """One reading's browser tab in one worker: its reader, and the requests finished since the current visit began."""

    def __init__(self, reader: Reader, search_index: str | None = None) -> None:
        self.reader = reader
        if search_index is not None:
            reader.context.route(reader.base + SEARCH_INDEX, lambda route: route.fulfill(
                status=200, content_type="application/json", body=search_index))
        self.finished: list[Any] = []
        reader.context.on("requestfinished", lambda request: self.finished.append(request))
        self.last = (0, 0)
        """The reader's log where the last visit's record ended: whatever comes after it (a late error of the page
        left) counts against the next page's load, never lost."""


def visit(tab: Tab, reading: str, path: str, axe: str) -> Visit:
    """Load `path` in the tab of `reading` and run every collector of that reading on it."""
    v = Visit(reading, path)
    r = tab.reader
    tab.finished.clear()  # the last page was left at network idle: what finishes from here on is this page's
    rec = Recorder(r, v)
    rec.last = tab.last
    try:
        page = r.open(path)
    except Exception as exc:  # a page that does not load fails every check of the reading
        v.loaded = [*rec.since(rec.last), f"did not load: {type(exc).__name__}: {exc}"]
        tab.last = rec.mark()
        return v
    v.loaded = rec.since(rec.last)
    rec.last = rec.mark()
    if reading == DESKTOP_LIGHT:
        # the offline check (test_reader.py): the cold load, the search index, the scroll to the end; its weight
        rec("offline", lambda: _offline(r, page, tab.finished, path))
    _collect(reading, rec, page, path, axe)
    rec.settle()
    tab.last = rec.last
    return v
