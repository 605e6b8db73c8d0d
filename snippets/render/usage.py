"""Which pages show each model and accelerator: the reference pages link every entry to the pages that use it.

The build records, for every page outside reference/, the models and accelerators whose names its rendered
text shows (`Usage.record`, from the `serving` plugin's on_page_content); the reference pages print a
placeholder per entry (`placeholder`) that the build plugin fills with links once every page is rendered
(`Usage.fill`, on_post_page). Names are data, so they are matched as text and written escaped.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field

from snippets.render import fmt

_PLACEHOLDER = re.compile(r'<span class="sa-used-by" data-kind="(model|accelerator)" data-id="([a-z0-9._-]+)"></span>')


def placeholder(kind: str, entry_id: str) -> fmt.Md:
    """Where the links to the pages that show entry `entry_id` of `kind` (model or accelerator) go."""
    if kind not in ("model", "accelerator") or not re.fullmatch(r"[a-z0-9._-]+", entry_id):
        raise ValueError(f"not a model or accelerator id: {kind} {entry_id!r}")
    return fmt.Md(f'<span class="sa-used-by" data-kind="{kind}" data-id="{entry_id}"></span>')


@dataclass
class Usage:
    """Names to look for, and the pages found to show each (in build order, each page once)."""

    names: dict[tuple[str, str], str]
    """(kind, id) -> the name as pages write it."""
    pages: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    """(kind, id) -> [(page url, page title)]."""

    def record(self, url: str, title: str, text: str) -> None:
        """Note every entry whose name `text` (a page's visible text) contains."""
        for key, name in self.names.items():
            if name in text:
                seen = self.pages.setdefault(key, [])
                if all(u != url for u, _ in seen):
                    seen.append((url, title))

    def links(self, kind: str, entry_id: str, from_url: str) -> str:
        """HTML links from the page at `from_url` to each page that shows the entry; a dash if none does."""
        found = self.pages.get((kind, entry_id), [])
        if not found:
            return "—"
        base = posixpath.dirname(from_url.rstrip("/") + "/x")
        out = []
        for url, title in sorted(found, key=lambda p: p[0]):
            rel = posixpath.relpath(url or ".", base or ".")
            href = rel if rel.endswith("/") or rel == "." else rel + "/"
            out.append(f'<a href="{html.escape(href, quote=True)}">{html.escape(title)}</a>')
        return ", ".join(out)

    def fill(self, output: str, from_url: str) -> str:
        """`output` (a rendered page) with every placeholder replaced by its links."""
        return _PLACEHOLDER.sub(lambda m: self.links(m.group(1), m.group(2), from_url), output)
