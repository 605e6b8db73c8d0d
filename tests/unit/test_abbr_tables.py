"""A table fmt.table writes as HTML gets the tooltips Markdown's abbr would give the Markdown table
(snippets/build/abbr.py): the same page, byte for byte, with the first-mention rule applied across both."""

from __future__ import annotations

import markdown

from snippets.build.abbr import AbbrFirstExtension
from snippets.render import fmt

GLOSSARY = '''
*[KV]: key and value tensors of attention
*[TP]: tensor parallelism: each layer's matrices split across "GPUs"
*[HBM]: High Bandwidth Memory
'''


def _page(table: str) -> str:
    text = ("## One\n\nThe KV cache sits in HBM.\n\n" + table + "\nAfter the table, TP again and KV.\n\n"
            "## Two\n\n" + table + GLOSSARY)
    return markdown.markdown(text, extensions=["abbr", "tables", AbbrFirstExtension()])


def test_terms_in_an_html_table_are_marked_as_in_the_markdown_table() -> None:
    headers = ["Layout", "KV room per GPU", "Note"]
    rows: list[list[fmt.Cell]] = [["TP8", fmt.nbytes(4e9, "GB"), "TP and KV split"], ["PP2", fmt.count(2), "HBM < KV"],
                                  ["PP4", fmt.count(4), fmt.Md("`HBM` in code, [HBM](https://example.com) in a link")]]
    as_html = fmt.table("t", headers, rows)
    as_markdown = fmt._markdown_table("t", headers, rows, None, 0)
    assert as_html != as_markdown
    page = _page(as_html)
    # the same but for one blank line: Python-Markdown keeps the newline a raw HTML block ends with
    assert page.replace("</table>\n\n", "</table>\n") == _page(as_markdown)
    assert fmt.TERMS_MARK not in page
    one, two = page.split("<h2>Two</h2>")
    # section One: KV and HBM first met in the prose, TP first in the table (its Note column), nothing after
    tp = '<abbr title="tensor parallelism: each layer\'s matrices split across &quot;GPUs&quot;">TP</abbr>'
    assert one.count("<abbr") == 3 and f"{tp} and KV split" in one
    # section Two: the table alone, each term once, at its first mention in reading order
    assert "<code>HBM</code>" in two  # code is left alone, as abbr leaves it
    assert two.count("<abbr") == 3 and '<abbr title="key and value tensors of attention">KV</abbr> room per GPU' in two
