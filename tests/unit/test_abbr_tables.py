"""Markdown's abbr marks the glossary's terms in what a block prints too (its `glossary` option, which the build
fills from docs/includes/abbreviations.md), and snippets/build/abbr.py keeps only each section's first mention,
across the prose and the blocks' stashed output."""

from __future__ import annotations

import markdown
from markdown.extensions.abbr import AbbrBlockprocessor

from snippets.build.abbr import AbbrFirstExtension
from snippets.render import fmt

from ..conftest import ROOT

GLOSSARY = {"KV": "key and value tensors of attention", "TP": 'tensor parallelism: split across "GPUs"',
            "HBM": "High Bandwidth Memory"}


def _md() -> markdown.Markdown:
    return markdown.Markdown(extensions=["abbr", "tables", AbbrFirstExtension()],
                             extension_configs={"abbr": {"glossary": GLOSSARY}})


def test_terms_in_a_printed_table_are_marked_once_per_section() -> None:
    headers = ["Layout", "KV room per GPU", "Note"]
    rows: list[list[fmt.Cell]] = [["TP8", fmt.nbytes(4e9, "GB"), "TP and KV split"], ["PP2", fmt.count(2), "HBM < KV"],
                                  ["PP4", fmt.count(4), fmt.Md("`HBM` in code, [HBM](https://example.com) in a link")]]
    # a block's output is converted by a Markdown instance of its own, and its HTML kept in the page's stash
    # (markdown-exec and superfences do so; a raw HTML block is stashed the same way)
    table = _md().convert(fmt.table("t", headers, rows))
    page = _md().convert(f"## One\n\nThe KV cache sits in HBM.\n\n{table}\n\nAfter the table, TP again and KV.\n\n"
                         f"## Two\n\n{table}\n")
    one, two = page.split("<h2>Two</h2>")
    # section One: KV and HBM first met in the prose, TP first in the table (its Note column), nothing after
    tp = '<abbr title="tensor parallelism: split across &quot;GPUs&quot;">TP</abbr>'
    assert one.count("<abbr") == 3 and f"{tp} and KV split" in one
    # section Two: the table alone, each term once, at its first mention in reading order
    assert "<code>HBM</code>" in two  # code is left alone, as abbr leaves it
    assert two.count("<abbr") == 3 and '<abbr title="key and value tensors of attention">KV</abbr> room per GPU' in two


def test_the_glossary_file_is_read_with_abbrs_own_pattern() -> None:
    text = (ROOT / "docs" / "includes" / "abbreviations.md").read_text(encoding="utf-8")
    terms = {m["abbr"]: m["title"] for m in AbbrBlockprocessor.RE.finditer(text)}
    assert len(terms) == len([ln for ln in text.splitlines() if ln.startswith("*[")]) >= 8
    assert terms["HBM"].startswith("High Bandwidth Memory")
