"""HTML that the search index leaves out, set aside while Material's search plugin reads the page.

Material's search plugin indexes each page by parsing its whole content with Python's `html.parser`
(in `on_page_context`), including the elements it is told to leave out (`data-search-exclude`), which
it parses only to skip. The sizing grid is such an element: most of the site's markup, none of its
index. Code that writes a search-excluded element marks it with `snippets.render.fmt.search_excluded`;
after the page is converted and every guard has read it (`on_page_content`), `set_aside` replaces
each marked element by a placeholder, and `put_back` restores it in the rendered page
(`on_post_page`). The search index is what it would be without this; the published page is
unchanged, byte for byte.
"""

from __future__ import annotations

import re

from snippets.render.fmt import ASIDE_CLOSE, ASIDE_OPEN

_MARKED = re.compile(re.escape(ASIDE_OPEN) + r"(.*?)" + re.escape(ASIDE_CLOSE), re.S)
_PLACEHOLDER = "<!--sa-aside:{}-->"
_PLACED = re.compile(r"<!--sa-aside:([0-9]+)-->")


def set_aside(html_text: str) -> tuple[str, list[str], list[str]]:
    """The page with each marked element replaced by a placeholder, the elements in order, and problems: a
    marked element that is not excluded from search (setting it aside would take it out of the index)."""
    kept: list[str] = []
    problems: list[str] = []

    def one(m: re.Match[str]) -> str:
        element = m.group(1)
        if "data-search-exclude" not in element.split(">", 1)[0]:
            problems.append(f"an element marked to be set aside from search is not excluded from it: "
                            f"{element[:80]!r}")
            return m.group(0)
        kept.append(element)
        return _PLACEHOLDER.format(len(kept) - 1)

    return _MARKED.sub(one, html_text), kept, problems


def put_back(output: str, kept: list[str]) -> str:
    """The rendered page with each element set aside back in its place."""
    if not kept:
        return output
    return _PLACED.sub(lambda m: kept[int(m.group(1))], output)
