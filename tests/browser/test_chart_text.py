"""Every label of every chart and diagram (snippets/render/charts.py, snippets/render/diagrams.py) as a reader sees it: at least
11 CSS px on a 375 px phone, and not much larger than the prose on a desktop.

An SVG with a viewBox scales its text with it: a label's rendered size is its computed font size (in the SVG's
user units) times the scale from user units to screen pixels, which `getScreenCTM()` gives with every transform
on the way (the viewBox, a rotated axis title). The scale is the length of the CTM's first column, so a label
rotated by 90 degrees measures like a level one.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import DESKTOP, PHONE, Reader

pytestmark = pytest.mark.browser

MIN_PX = 11.0
"""The smallest label a chart or diagram may render, in CSS px, with the page 375 px wide."""
MAX_OVER_PROSE = 1.6
"""On a desktop a chart's smallest label may be at most this many times the prose's size."""

_MEASURE = """() => Array.from(document.querySelectorAll('article svg')).filter(s => s.querySelector('text'))
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


def measure(r: Reader, path: str) -> list[dict[str, Any]]:
    """Every `<text>` in an SVG of the page's article: its chart, its words and its rendered size in CSS px."""
    return list(r.open(path).evaluate(_MEASURE))


def test_chart_labels_are_legible_on_a_phone(browser: Any, site_url: str, pages: list[str]) -> None:
    failures: list[str] = []
    measured = 0
    with Reader(browser, site_url, viewport=PHONE, is_mobile=True, has_touch=True) as r:
        for path in pages:
            labels = measure(r, path)
            measured += len(labels)
            for t in labels:
                if not t["rendered"]:
                    failures.append(f"/{path} {t['chart']}: {t['label']!r} is not rendered at 375 px")
                elif t["px"] < MIN_PX:
                    failures.append(f"/{path} {t['chart']}: {t['label']!r} at {t['px']:.1f} px < {MIN_PX} px")
            for chart in sorted({t["chart"] for t in labels if t["right"] > t["client"] + 1}):
                failures.append(f"/{path} {chart}: wider than the page")
        failures += r.log.problems()
    assert measured > 100, f"only {measured} chart labels on the whole site: is the selector still right?"
    assert not failures, f"{len(failures)} labels too small or hidden:\n" + "\n".join(failures)


def test_chart_labels_do_not_outgrow_the_prose_on_a_desktop(browser: Any, site_url: str, pages: list[str]) -> None:
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in pages:
            labels = measure(r, path)
            if not labels:
                continue
            prose = r.page.evaluate("parseFloat(getComputedStyle(document.querySelector('article p')).fontSize)")
            for chart in sorted({t["chart"] for t in labels}):
                smallest = min(t["px"] for t in labels if t["chart"] == chart)
                if smallest > MAX_OVER_PROSE * prose:
                    failures.append(f"/{path} {chart}: its smallest label is {smallest:.1f} px, the prose {prose} px")
        failures += r.log.problems()
    assert not failures, "\n".join(failures)


_BOXES = """(id) => Array.from(document.querySelectorAll(`article svg[aria-labelledby^="${id}"]`))
    .filter(s => getComputedStyle(s).display !== 'none')
    .map(s => {
        const box = s.getBoundingClientRect();
        return {box: [box.left, box.top, box.right, box.bottom],
                labels: Array.from(s.querySelectorAll('text')).map(t => {
                    const r = t.getBoundingClientRect();
                    return {label: t.textContent.trim(), box: [r.left, r.top, r.right, r.bottom]};
                })};
    })"""


def _overlap(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


@pytest.mark.parametrize(("path", "chart"), [("kv-cache/", "kv-chart"), ("interconnect/", "gpus-chart"),
                                            ("reference/predictions/", "sweep-chart")])
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_grouped_bar_labels_keep_clear_of_each_other(browser: Any, site_url: str, path: str, chart: str,
                                                       viewport: str) -> None:
    """Every label of the grouped-bar charts inside its drawing, and no two labels touching (test_layout.py's check of
    every chart forgives a quarter of a label's height: a tick label half under the axis title passed it)."""
    kw: dict[str, Any] = {"viewport": PHONE, "is_mobile": True, "has_touch": True} if viewport == "phone" else {
        "viewport": DESKTOP}
    failures: list[str] = []
    with Reader(browser, site_url, **kw) as r:
        drawn = r.open(path).evaluate(_BOXES, chart)
        assert len(drawn) == 1, f"/{path}: {len(drawn)} visible drawings of {chart}"
        box, labels = drawn[0]["box"], drawn[0]["labels"]
        assert len(labels) > 10
        for t in labels:
            b = t["box"]
            if b[0] < box[0] - 0.5 or b[1] < box[1] - 0.5 or b[2] > box[2] + 0.5 or b[3] > box[3] + 0.5:
                failures.append(f"{t['label']!r} is clipped: {b} outside {box}")
        for i, a in enumerate(labels):
            for c in labels[i + 1:]:
                if _overlap(a["box"], c["box"]):
                    failures.append(f"{a['label']!r} overlaps {c['label']!r}")
        failures += r.log.problems()
    assert not failures, f"/{path} {chart} at {viewport}:\n" + "\n".join(failures)
