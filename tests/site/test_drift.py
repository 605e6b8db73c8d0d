"""Drift guards: each fault injected into a copy of the site is caught, naming the place."""

from __future__ import annotations

from snippets.build import computed

from ..conftest import Build


def test_no_page_publishes_broken_output(built: Build) -> None:
    pages = sorted(built.site.rglob("*.html"))
    assert len(pages) >= 3
    for path in pages:
        html = path.read_text(encoding="utf-8")
        _, _, problems = computed.collect(html)
        assert problems == [], f"{path.relative_to(built.site)}: {problems}"
        assert "Traceback" not in html, path
