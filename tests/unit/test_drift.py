"""Drift guards: each fault injected into a copy of the site is caught, naming the place."""

from __future__ import annotations

from snippets.build.drift import Scanner, prose

SCANNER = Scanner()
typed_quantities = SCANNER.typed_quantities
quantities_in = SCANNER.quantities_in


def test_prose_drops_code_blocks_values_and_markup() -> None:
    md = (
        "---\nmodel: x\n---\n# Title\n\nNeeds {{ m.gpus }} GPUs and `80 GB` in code.\n\n"
        '```python exec="on"\nprint(810)\n```\n\n'
        "1. A [link](page.md#s2) to <span data-x=\"9\">here</span>.\n"
    )
    text = prose(md)
    assert "810" not in text and "80 GB" not in text and "m.gpus" not in text and "s2" not in text
    assert text.count("\n") == md.count("\n")  # line numbers survive
    assert typed_quantities(md) == []


def test_typed_quantities_are_found_with_their_line() -> None:
    md = "Intro.\n\nA card holds 80 GB, and an 8-GPU node is common.\n"
    found = typed_quantities(md)
    assert [(f.line, f.token) for f in found] == [(3, "80"), (3, "8-GPU")]


def test_names_on_the_allowlist_pass_but_quantities_beside_them_do_not() -> None:
    assert typed_quantities("FP16 on an H100 over PCIe 5.0 x16 and NVLink 4, Llama 3.1.\n") == []
    assert [f.token for f in typed_quantities("Llama 3.1 405B in FP16.\n")] == ["405B"]
    assert [f.token for f in typed_quantities("HBM3e at 4.8 TB/s.\n")] == ["4.8"]


def test_notebook_markdown_is_read_with_jupytext_md_alias_included() -> None:
    from snippets.build.drift import notebook_markdown

    nb = "# %% [md]\n# A card holds 80 GB.\n\n# %%\nx = 1\n\n# %% [markdown]\n# Then 405B.\n"
    text = notebook_markdown(nb)
    assert [(f.line, f.token) for f in typed_quantities(text)] == [(2, "80"), (8, "405B")]


def test_the_rendered_scan_reads_attributes_and_skips_computed_spans() -> None:
    from snippets.build.drift import fragment, shown_text

    html = ('<p>On <abbr title="Peripheral">PCIe</abbr> 5.0 a <span class="sa-fig">80 GB</span> card '
            '<a href="x" title="holds 96 GB">link</a> <img alt="a 4-GPU box"></p><pre>print(7)</pre>'
            '<svg aria-label="12 bars"><text>9</text></svg>')
    found = [(s.where, lit.token) for s in shown_text(fragment(html)) for lit in quantities_in(s.text)]
    assert found == [("title", "96"), ("alt", "4-GPU")]


def test_text_beside_blocks_is_read_once() -> None:
    """A list item's words before its sublist, and text printed straight beside a table, are read; each cell once."""
    from snippets.build.drift import fragment, shown_text

    html = ('<div>Loose 12 GB <em>and 3 more</em><table><tr><td>7 GPUs</td></tr></table> then 5 nodes</div>'
            '<ul><li>Item 40 cards<ul><li>nested 9 layers</li></ul></li></ul>')
    pieces = [s.text for s in shown_text(fragment(html))]
    found = sorted(lit.token for p in pieces for lit in quantities_in(p))
    assert found == ["12", "3", "40", "5", "7", "9"]  # each once: the cell is not read again with the div
    assert not any("7 GPUs" in p and "Loose" in p for p in pieces)


def test_count_words_are_found_and_units_of_price_are_not() -> None:
    from snippets.build.drift import count_words

    text = ("Twice the GPUs hold eighty gigabytes, a hundred times more.\n"
            "It costs $2 per million tokens, and two of them halve the cost.\n")
    found = [(w.line, w.token) for w in count_words(text)]
    assert found == [(1, "Twice"), (1, "eighty gigabytes"), (1, "hundred times"), (2, "halve")]
    assert count_words("`twice` in code, {{ twice }} computed\n") == []


def test_a_scanner_reads_its_allowlist_once_and_data_text_is_not_typed(tmp_path) -> None:
    allow = tmp_path / "allowed.txt"
    allow.write_text("# names\nH100\n")
    scanner = Scanner(frozenset({"NVIDIA H100 SXM 80GB"}), allow)
    assert [lit.token for lit in scanner.typed_quantities("An H100 and an A100.\n")] == ["A100"]
    allow.write_text("A100\n")  # an edit is read by the next build's scanner, not this one
    assert [lit.token for lit in scanner.typed_quantities("An A100.\n")] == ["A100"]
    assert Scanner(allowlist=allow).typed_quantities("An A100.\n") == []
    assert scanner.quantities_in("The NVIDIA H100 SXM 80GB card") == ()  # a name from data/, shown whole
    assert [lit.token for lit in scanner.quantities_in("A 80GB card")] == ["80GB"]
