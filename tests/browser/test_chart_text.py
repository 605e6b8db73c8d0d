"""Every label of every chart and diagram (snippets/render/charts.py, snippets/render/diagrams.py) as a reader sees it: at least
11 CSS px on a 375 px phone, and not much larger than the prose on a desktop.

An SVG with a viewBox scales its text with it: a label's rendered size is its computed font size (in the SVG's
user units) times the scale from user units to screen pixels, which `getScreenCTM()` gives with every transform
on the way (the viewBox, a rotated axis title). The scale is the length of the CTM's first column, so a label
rotated by 90 degrees measures like a level one.

The labels are measured (sweep.py's LABEL_SIZES, BOXES) in the sweeps of the phone (375 px, touch) and of the
desktop: each page loaded once per reading, every check of that reading run in that load.
"""

from __future__ import annotations

import pytest

from .sweep import DESKTOP_LIGHT, GROUPED, PHONE_TOUCH, Sweeps

pytestmark = pytest.mark.browser

MIN_PX = 11.0
"""The smallest label a chart or diagram may render, in CSS px, with the page 375 px wide."""
MAX_OVER_PROSE = 1.6
"""On a desktop a chart's smallest label may be at most this many times the prose's size."""


def test_chart_labels_are_legible_on_a_phone(sweeps: Sweeps, pages: list[str]) -> None:
    failures: list[str] = []
    measured = 0
    for path in pages:
        visit = sweeps[PHONE_TOUCH][path]
        failures += visit.problems("label_sizes")
        labels = visit.results.get("label_sizes", [])
        measured += len(labels)
        for t in labels:
            if not t["rendered"]:
                failures.append(f"/{path} {t['chart']}: {t['label']!r} is not rendered at 375 px")
            elif t["px"] < MIN_PX:
                failures.append(f"/{path} {t['chart']}: {t['label']!r} at {t['px']:.1f} px < {MIN_PX} px")
        for chart in sorted({t["chart"] for t in labels if t["right"] > t["client"] + 1}):
            failures.append(f"/{path} {chart}: wider than the page")
    assert measured > 100, f"only {measured} chart labels on the whole site: is the selector still right?"
    assert not failures, f"{len(failures)} labels too small or hidden:\n" + "\n".join(failures)


def test_chart_labels_do_not_outgrow_the_prose_on_a_desktop(sweeps: Sweeps, pages: list[str]) -> None:
    failures: list[str] = []
    for path in pages:
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += visit.problems("label_sizes")
        labels = visit.results.get("label_sizes", [])
        if not labels:
            continue
        prose = visit["prose"]
        for chart in sorted({t["chart"] for t in labels}):
            smallest = min(t["px"] for t in labels if t["chart"] == chart)
            if smallest > MAX_OVER_PROSE * prose:
                failures.append(f"/{path} {chart}: its smallest label is {smallest:.1f} px, the prose {prose} px")
    assert not failures, "\n".join(failures)


def _overlap(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


@pytest.mark.parametrize(("path", "chart"), GROUPED)
@pytest.mark.parametrize("reading", [
    pytest.param(PHONE_TOUCH, id="phone"),
    pytest.param(DESKTOP_LIGHT, id="desktop"),
])
def test_grouped_bar_labels_keep_clear_of_each_other(sweeps: Sweeps, path: str, chart: str, reading: str) -> None:
    """Every label of the grouped-bar charts inside its drawing, and no two labels touching (test_layout.py's check of
    every chart forgives a quarter of a label's height: a tick label half under the axis title passed it)."""
    viewport = "phone" if reading == PHONE_TOUCH else "desktop"
    visit = sweeps[reading][path]
    failures: list[str] = list(visit.problems("grouped"))
    drawn = visit["grouped"][chart]
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
    assert not failures, f"/{path} {chart} at {viewport}:\n" + "\n".join(failures)
