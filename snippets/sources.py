"""The sources behind a page: each data entry it uses, with its primary sources and read dates."""

from __future__ import annotations

from collections.abc import Iterable

from snippets.data import Catalog
from snippets.fmt import Md, escape_markdown, link


def sources_list(cat: Catalog, refs: Iterable[tuple[str, str]]) -> Md:
    """A Markdown list: one item per (file, entry id), naming the row and linking its sources.

    Names and titles are data: escaped as text; URLs are percent-encoded (`fmt.link`).
    """
    lines = []
    for file, entry_id in refs:
        entry = getattr(cat, file)[entry_id]
        links = "; ".join(f"{link(s.title, s.url)}, read {s.read.isoformat()}" for s in entry.sources)
        lines.append(f"- **{escape_markdown(entry.name)}** (`data/{file}.yaml`, "
                     f"`{entry_id.replace('`', '')}`): {links}")
    return Md("\n".join(lines) + "\n")
