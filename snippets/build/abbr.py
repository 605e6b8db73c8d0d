"""A Markdown extension: an abbreviation's tooltip on its first mention in each section, not on every mention.

Python-Markdown's `abbr` extension wraps every occurrence of a glossary term (docs/includes/abbreviations.md,
appended to each page by pymdownx.snippets) in `<abbr title=...>`; on a page that says KV fifty times, that is
fifty dotted underlines and fifty tooltips. This treeprocessor runs after abbr's and keeps, within each section,
only the first `<abbr>` of each term; later ones become plain text.

- **A section starts at each `<h2>`** (and the text before the first `<h2>` is a section too). The pages are
  organised by h2: it is the unit a reader lands on from the table of contents or a link, and h3 is rare on
  this site (a handful of short subheads), so restarting at h3 would only repeat tooltips within a section the
  reader is already reading.
- **Everything inside a section counts, in reading order**: paragraphs, lists, tables, admonitions, folded
  `<details>` blocks and every tab of a tabbed set. A term defined in a folded quiz answer is not defined for
  the reader who never opens it, but the section's first mention is usually in the prose above; keeping one
  rule keeps the tooltips predictable.
- **Generated HTML counts too.** Tables and text printed by markdown-exec blocks are converted by a second
  Markdown instance (with the same extensions: `abbr` knows the glossary through its `glossary` option, which
  the `serving` plugin fills from the glossary file, and this extension runs over the block alone) and stored in
  the page's HTML stash; they appear in the tree as placeholders. Where a placeholder stands, this processor
  reads the stashed HTML in order, so a term first marked in a generated table is not marked again in the prose
  below it, and the reverse. In stashed HTML it matches only what `abbr` itself writes
  (`<abbr title="...">term</abbr>`) and `<h2` openings.

Notebook pages are rendered by mkdocs-jupyter (nbconvert), not Python-Markdown: neither the glossary nor this
extension reaches them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any
from xml.etree.ElementTree import Element

from markdown import Markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markdown.util import HTML_PLACEHOLDER_RE

PRIORITY = 6
"""Just after `abbr` (7), which marks every mention; before `toc` (5), so headings reach the TOC as marked here."""

SECTION_TAGS = frozenset({"h2"})
"""The elements that start a section."""

_STASHED = re.compile(r'<h2[\s>]|<abbr title="[^"]*">([^<]*)</abbr>')
"""In stashed HTML: a section's start, or an abbreviation as the abbr extension writes it (group 1: the term)."""


class FirstMention:
    """The terms already marked in the current section."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def new_section(self) -> None:
        self.seen.clear()

    def keep(self, term: str) -> bool:
        """Whether this mention of `term` keeps its `<abbr>`: only the section's first."""
        if term in self.seen:
            return False
        self.seen.add(term)
        return True

    def stashed(self, text: str) -> str:
        """Stashed HTML with every abbreviation after its section's first reduced to its text."""

        def one(m: re.Match[str]) -> str:
            if m.group(1) is None:  # an <h2 ...>
                self.new_section()
                return m.group(0)
            return m.group(0) if self.keep(html.unescape(m.group(1))) else m.group(1)

        return _STASHED.sub(one, text)


def _unwrap(parent: Element, child: Element) -> None:
    """Replace `child` (an `<abbr>` holding only text) by its text, kept in place in `parent`."""
    words = (child.text or "") + (child.tail or "")
    i = list(parent).index(child)
    if i == 0:
        parent.text = (parent.text or "") + words
    else:
        prev = parent[i - 1]
        prev.tail = (prev.tail or "") + words
    parent.remove(child)


class AbbrFirstTreeprocessor(Treeprocessor):
    """Keeps the first `<abbr>` of each term in each section; later ones become plain text."""

    def run(self, root: Element) -> None:
        self._process(root, FirstMention())

    def _process(self, root: Element, state: FirstMention) -> None:
        drop: list[tuple[Element, Element]] = []
        for kind, el, parent in self._walk(root, None):
            if kind == "start" and el.tag in SECTION_TAGS:
                state.new_section()
            elif kind == "start" and el.tag == "abbr" and parent is not None and el.get("title") is not None:
                if not state.keep((el.text or "").strip()):
                    drop.append((parent, el))
            elif kind in ("text", "tail"):
                self._stash(el, kind, state)
        for parent, el in drop:
            _unwrap(parent, el)

    def _walk(self, el: Element, parent: Element | None) -> Iterator[tuple[str, Element, Element | None]]:
        """Reading order: an element, its text, its children (each followed by its tail)."""
        yield "start", el, parent
        if el.text:
            yield "text", el, parent
        for child in el:
            yield from self._walk(child, el)
            if child.tail:
                yield "tail", child, el

    def _stash(self, el: Element, kind: str, state: FirstMention) -> None:
        """Apply the rule inside the stashed HTML that placeholders in `el`'s text or tail stand for."""
        text = el.text if kind == "text" else el.tail
        blocks = self.md.htmlStash.rawHtmlBlocks
        for m in HTML_PLACEHOLDER_RE.finditer(text or ""):
            i = int(m.group(1))
            if i >= len(blocks):
                continue
            block = blocks[i]
            if isinstance(block, str):
                # markdown-exec stores markupsafe.Markup, a str subclass: keep the type it stored
                blocks[i] = type(block)(state.stashed(str(block)))
            else:  # an element stashed whole: the same rule, in the same reading order
                self._process(block, state)


class AbbrFirstExtension(Extension):
    """Register `AbbrFirstTreeprocessor` after `abbr`."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.treeprocessors.register(AbbrFirstTreeprocessor(md), "abbr_first", PRIORITY)


def makeExtension(**kwargs: Any) -> AbbrFirstExtension:
    return AbbrFirstExtension(**kwargs)
