"""Abbreviation tooltips (snippets/build/abbr.py): on the first mention of a term in each h2 section, not on every one.

Read over the built HTML: every page's article is cut into sections at each <h2> (the text before the first is
one too), and within a section each glossary term has exactly one <abbr>, on its first mention, whether that
mention is prose, a table printed by a block, an admonition, a folded answer or a tab.
"""

from __future__ import annotations

import re

import markdown
import pytest
from bs4 import BeautifulSoup, NavigableString, Tag

from ..conftest import ROOT, Build

GLOSSARY = ROOT / "docs" / "includes" / "abbreviations.md"
TERMS = re.findall(r"^\*\[([^\]]+)\]:", GLOSSARY.read_text(encoding="utf-8"), re.M)


def sections(article: Tag) -> list[list[Tag | NavigableString]]:
    """The article's nodes in reading order, cut at each <h2> (which starts its own section)."""
    out: list[list[Tag | NavigableString]] = [[]]
    for node in article.descendants:
        if isinstance(node, Tag) and node.name == "h2":
            out.append([])
        if isinstance(node, Tag | NavigableString):
            out[-1].append(node)
    return out


def _in_abbr(node: NavigableString) -> bool:
    return any(p.name == "abbr" for p in node.parents)


UNREACHED = ("code", "pre", "script", "style", "svg", "figcaption", "form")

"""Elements whose text abbr never reads: code; and HTML that code writes whole, which Python-Markdown passes
through untouched: charts and diagrams with their captions (snippets/render/charts.py `figure`), the calculator's form."""

UNREACHED_CLASSES = ("sa-text", "sa-fig", "sa-grid", "sa-calc")
"""The same by class: text and figures the hook computes (`{{ }}`), the sizing grid (`fmt.html_table`), the
calculator (written as HTML, filled in by the reader's browser)."""


def _out_of_reach(node: NavigableString, titles: set[str]) -> bool:
    """Whether abbr could not have marked this text, so it cannot be a "first mention" the rule is about."""
    for p in node.parents:
        if p.name in UNREACHED or any(c in UNREACHED_CLASSES for c in p.get("class") or ()):
            return True
        # the serving plugin's "used by" links to the pages a model or accelerator appears on, added after rendering: a page's
        # title with no <abbr> (a Markdown link to the same page, written in the prose, has its terms marked)
        if p.name == "a" and p.find("abbr") is None and p.get_text(strip=True) in titles:
            return True
    return False


def _mentions(text: str, term: str) -> int:
    return len(re.findall(rf"\b{re.escape(term)}\b", text))  # as abbr matches


def _article(built: Build, rel: str) -> Tag | None:
    return BeautifulSoup((built.site / rel).read_text(encoding="utf-8"), "html.parser").select_one("article")


def _pages(built: Build) -> list[str]:
    return sorted(p.relative_to(built.site).as_posix() for p in built.site.rglob("*.html"))


def test_the_glossary_is_read() -> None:
    assert {"HBM", "NVLink", "KV", "TP", "PP"} <= set(TERMS)


def test_each_term_has_one_tooltip_per_section_on_its_first_mention(built: Build) -> None:
    """At most one <abbr> per term and section, and it is on the section's first mention that abbr can reach."""
    failures: list[str] = []
    marked = 0
    articles = {rel: a for rel in _pages(built) if (a := _article(built, rel)) is not None}  # each page parsed once
    titles = {h1.get_text().strip().removesuffix("¶").strip() for a in articles.values() for h1 in a.select("h1")}
    for rel, article in articles.items():
        if rel.startswith("notebooks/"):  # no abbr reaches them: the test below
            continue
        for n, nodes in enumerate(sections(article)):
            heading = next((x.get_text(" ", strip=True) for x in nodes[:1] if isinstance(x, Tag)), "(before the first h2)")
            abbrs = [x for x in nodes if isinstance(x, Tag) and x.name == "abbr"]
            marked += len(abbrs)
            # the texts abbr could have marked (outside code, scripts, SVG), in order: found once per section
            texts = [x for x in nodes if isinstance(x, NavigableString) and not isinstance(x, Tag)
                     and not _out_of_reach(x, titles)]
            for term in TERMS:
                mine = [a for a in abbrs if a.get_text().strip() == term]
                if len(mine) > 1:
                    failures.append(f"{rel} section {n} ({heading}): {len(mine)} <abbr> for {term}")
                # the first mention in the section's text is the marked one
                first = next((x for x in texts if _mentions(str(x), term)), None)
                if first is not None and not _in_abbr(first):
                    failures.append(f"{rel} section {n} ({heading}): first mention of {term} has no <abbr>: "
                                    f"{str(first).strip()[:80]!r}")
    assert marked > 100, f"only {marked} <abbr> on the whole site: is the glossary still appended?"
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:60])


def test_a_tooltip_carries_the_glossary_title(built: Build) -> None:
    article = _article(built, "hbm/index.html")
    assert article is not None
    first = next(a for a in article.select("abbr") if a.get_text() == "HBM")
    assert first["title"].startswith("High Bandwidth Memory")


def test_notebook_pages_carry_no_abbreviations(built: Build) -> None:
    """mkdocs-jupyter renders notebook Markdown with nbconvert, which neither the glossary nor abbr reaches."""
    notebooks = [rel for rel in _pages(built) if rel.startswith("notebooks/")]
    assert notebooks, "no notebook page was built"
    for rel in notebooks:
        article = _article(built, rel)
        assert article is not None and not article.select("abbr"), rel


GLOSS = "\n\n*[KV]: key and value\n*[TP]: tensor parallelism\n"


def render(text: str) -> BeautifulSoup:
    md = markdown.Markdown(extensions=["abbr", "snippets.build.abbr", "tables", "admonition", "pymdownx.details",
                                       "pymdownx.superfences", "pymdownx.tabbed"])
    return BeautifulSoup(md.convert(text + GLOSS), "html.parser")


def test_later_mentions_become_plain_text() -> None:
    soup = render("The KV cache. More KV, and TP.\n\nAgain KV, then TP.")
    assert [a.get_text() for a in soup.find_all("abbr")] == ["KV", "TP"]
    assert soup.get_text().count("KV") == 3  # the words stay: only the markup goes
    assert "Again KV, then TP." in soup.get_text()


def test_each_h2_starts_a_section_and_h3_does_not() -> None:
    soup = render("KV intro.\n\n## One\n\nKV here, KV again.\n\n### Sub\n\nKV sub.\n\n## Two\n\nKV there.")
    assert len(soup.find_all("abbr")) == 3  # intro, One, Two: not Sub


@pytest.mark.parametrize("block", [
    "| a | b |\n| --- | --- |\n| KV | KV |",
    '!!! note "n"\n    KV in a note, KV twice.',
    '??? question "q"\n    KV in an answer, KV twice.',
    '=== "A"\n    KV in tab A.\n\n=== "B"\n    KV in tab B.',
])
def test_tables_admonitions_details_and_tabs_count_in_their_section(block: str) -> None:
    soup = render(f"## S\n\n{block}\n\nAnd KV after it.")
    abbrs = soup.find_all("abbr")
    assert len(abbrs) == 1
    assert "after it" not in abbrs[0].parent.get_text()  # the block's mention is the first, and keeps it


def test_a_tail_after_an_unwrapped_term_keeps_its_place() -> None:
    soup = render("KV first, *then KV* and KV, **TP** and TP.")
    assert soup.find("p").get_text() == "KV first, then KV and KV, TP and TP."
    assert [a.get_text() for a in soup.find_all("abbr")] == ["KV", "TP"]
