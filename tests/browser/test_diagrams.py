"""The build-time diagrams (snippets/render/diagrams.py) as a reader sees them: on a phone their text stays legible and
they stay inside the column; on a desktop they do not grow past the prose. Measured (sweep.py's DIAGRAMS) in the sweeps
of the phone (375 px, touch) and of the desktop."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from ..conftest import Build
from .sweep import DESKTOP_LIGHT, PHONE_TOUCH, Sweeps

pytestmark = pytest.mark.browser

MIN_PX = 11.0
"""The smallest text a diagram may render, in CSS px, at 375 px."""

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


def test_diagram_text_is_legible_on_a_phone(sweeps: Sweeps, built: Build, pages: list[str]) -> None:
    failures: list[str] = []
    for path in _diagram_pages(built, pages):
        visit = sweeps[PHONE_TOUCH][path]
        failures += visit.problems("diagrams")
        for d in visit.results.get("diagrams", []):
            if d["smallest"] < MIN_PX:
                failures.append(f"/{path} {d['name']}: text at {d['smallest']:.1f} px < {MIN_PX} px")
            if d["right"] > d["client"] + 1:
                failures.append(f"/{path} {d['name']}: ends at {d['right']:.0f} px of {d['client']}")
    assert not failures, "\n".join(failures)


def test_diagram_text_does_not_outgrow_the_prose_on_a_desktop(sweeps: Sweeps, built: Build, pages: list[str]) -> None:
    failures: list[str] = []
    for path in _diagram_pages(built, pages):
        visit = sweeps[DESKTOP_LIGHT][path]
        failures += visit.problems("diagrams", "prose")
        prose = visit["prose"]
        for d in visit.results.get("diagrams", []):
            if d["smallest"] > 1.6 * prose:
                failures.append(f"/{path} {d['name']}: its smallest text is {d['smallest']:.1f} px, prose {prose}")
    assert not failures, "\n".join(failures)
