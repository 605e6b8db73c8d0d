"""The sources behind a page: each data entry it uses, with its primary sources and read dates."""

from __future__ import annotations

from collections.abc import Iterable

from snippets.data import Catalog


def sources_list(cat: Catalog, refs: Iterable[tuple[str, str]]) -> str:
    """A Markdown list: one item per (file, entry id), naming the row and linking its sources."""
    lines = []
    for file, entry_id in refs:
        entry = getattr(cat, file)[entry_id]
        links = "; ".join(f"[{s.title}]({s.url}), read {s.read.isoformat()}" for s in entry.sources)
        lines.append(f"- **{entry.name}** (`data/{file}.yaml`, `{entry_id}`): {links}")
    return "\n".join(lines) + "\n"
