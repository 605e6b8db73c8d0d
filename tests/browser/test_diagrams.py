"""The build-time diagrams (snippets/render/diagrams.py) as a reader sees them: on a phone their text stays legible and
they stay inside the column; on a desktop they do not grow past the prose."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from ..conftest import Build
from .conftest import DESKTOP, PHONE, Reader

pytestmark = pytest.mark.browser

MIN_PX = 11.0
"""The smallest text a diagram may render, in CSS px, at 375 px."""

_MEASURE = """() => Array.from(document.querySelectorAll('article svg.sa-diagram')).map(s => {
    const box = s.getBoundingClientRect();
    const scale = box.width / s.viewBox.baseVal.width;
    const own = parseFloat(s.getAttribute('font-size'));
    const sizes = Array.from(s.querySelectorAll('text'))
        .map(t => parseFloat(t.getAttribute('font-size') || own) * scale);
    return {name: s.getAttribute('aria-labelledby'), smallest: Math.min(...sizes), right: box.right,
            client: document.documentElement.clientWidth};
})"""


def _diagram_pages(built: Build, pages: list[str]) -> list[str]:
    out = []
    for path in pages:
        rel = path + "index.html" if path == "" or path.endswith("/") else path
        if BeautifulSoup((built.site / rel).read_text(encoding="utf-8"), "html.parser").select("article svg.sa-diagram"):
            out.append(path)
    return out


def test_the_parallelism_page_has_its_three_diagrams(built: Build, pages: list[str]) -> None:
    assert "parallelism/" in _diagram_pages(built, pages)
    soup = BeautifulSoup((built.site / "parallelism/index.html").read_text(encoding="utf-8"), "html.parser")
    names = [s["aria-labelledby"].split()[0] for s in soup.select("article figure.sa-figure svg.sa-diagram")]
    assert names == ["tp-split-title", "pipe-schedule-title", "ring-steps-title"]


def test_diagram_text_is_legible_on_a_phone(browser: Any, site_url: str, built: Build, pages: list[str]) -> None:
    failures: list[str] = []
    with Reader(browser, site_url, viewport=PHONE, is_mobile=True, has_touch=True) as r:
        for path in _diagram_pages(built, pages):
            for d in r.open(path).evaluate(_MEASURE):
                if d["smallest"] < MIN_PX:
                    failures.append(f"/{path} {d['name']}: text at {d['smallest']:.1f} px < {MIN_PX} px")
                if d["right"] > d["client"] + 1:
                    failures.append(f"/{path} {d['name']}: ends at {d['right']:.0f} px of {d['client']}")
        failures += r.log.problems()
    assert not failures, "\n".join(failures)


def test_diagram_text_does_not_outgrow_the_prose_on_a_desktop(browser: Any, site_url: str, built: Build,
                                                               pages: list[str]) -> None:
    failures: list[str] = []
    with Reader(browser, site_url, viewport=DESKTOP) as r:
        for path in _diagram_pages(built, pages):
            page = r.open(path)
            prose = page.evaluate("parseFloat(getComputedStyle(document.querySelector('article p')).fontSize)")
            for d in page.evaluate(_MEASURE):
                if d["smallest"] > 1.6 * prose:
                    failures.append(f"/{path} {d['name']}: its smallest text is {d['smallest']:.1f} px, prose {prose}")
        failures += r.log.problems()
    assert not failures, "\n".join(failures)
