"""MkDocs hook: link every model and accelerator on the reference pages to the pages that show it.

on_page_content records which names each page outside reference/ shows (its visible text); on_post_page, which
runs once every page's content exists, fills the reference pages' placeholders (`snippets.usage`).
"""

from __future__ import annotations

from typing import Any

from lxml import html as lxml_html

_state: dict[str, Any] = {}


def on_pre_build(config: Any) -> None:
    from snippets.data import load
    from snippets.usage import Usage

    cat = load()
    names = {("model", k): m.name for k, m in cat.models.items()}
    names |= {("accelerator", k): a.name for k, a in cat.accelerators.items()}
    _state["usage"] = Usage(names)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    if not page.url.startswith("reference/") and html.strip():
        text = lxml_html.fromstring(f"<div>{html}</div>").text_content()
        _state["usage"].record(page.url, page.title or page.url, text)
    return html


def on_post_page(output: str, page: Any, config: Any) -> str:
    if 'class="sa-used-by"' not in output:
        return output
    filled: str = _state["usage"].fill(output, page.url)
    return filled
