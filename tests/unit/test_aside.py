"""Search-excluded HTML set aside while Material's search reads a page (snippets/build/aside.py)."""

from __future__ import annotations

from snippets.build.aside import put_back, set_aside
from snippets.render.fmt import search_excluded


def test_an_element_set_aside_comes_back_in_its_place() -> None:
    grid = '<div class="sa-grid" data-search-exclude><table><tr><td>1</td></tr></table></div>'
    other = '<div data-search-exclude>two</div>'
    page = f"<p>before</p>{search_excluded(grid)}<p>between</p>{search_excluded(other)}<p>after</p>"
    read, kept, problems = set_aside(page)
    assert problems == []
    assert kept == [grid, other]
    assert "table" not in read and "two" not in read and "between" in read  # what search parses
    rendered = f"<html><body>{read}</body></html>"  # the theme's template around the content
    assert put_back(rendered, kept) == f"<html><body><p>before</p>{grid}<p>between</p>{other}<p>after</p></body></html>"


def test_an_element_search_would_index_is_not_set_aside() -> None:
    page = search_excluded('<div class="sa-grid"><table></table></div>')
    read, kept, problems = set_aside(page)
    assert kept == [] and read == page
    assert len(problems) == 1 and "not excluded" in problems[0]
