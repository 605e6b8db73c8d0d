"""What the reader reads (snippets/build/guard.py), in process: each hand-typed quantity named by the line that
typed it, in prose, attributes, front matter, a block's output, a page model or a notebook cell; notebook links."""

from __future__ import annotations

from pathlib import Path

from snippets.build import drift
from snippets.build.computed import PageState
from snippets.build.guard import Guard, notebook_link_errors
from snippets.data import Catalog

from ..conftest import ROOT
from .build_harness import convert


def test_a_quantity_in_a_link_title_is_named_by_its_line(catalog: Catalog) -> None:
    page = convert('Intro.\n\nSee [the cliff](interconnect.md "where 96 GB ends").\n', catalog)
    assert page.scanned() == ["docs/page.md:3: hand-typed quantity '96' in the title attribute: \"where 96 GB ends\". "
                              "Compute it with {{ ... }}, or if it is a name, add it to snippets/allowed_names.txt"]


def test_prose_and_front_matter_quantities_are_named(catalog: Catalog) -> None:
    guard = Guard(drift.Scanner(), [], ROOT / "snippets" / "pages")
    source = "---\ntitle: Why 80 GB is not enough\n---\n\nA node holds 640 GB.\n"
    state = PageState(src="page.md", markdown=source)
    errors = guard.source_errors(state, source, {"title": "Why 80 GB is not enough"})
    assert [e.split(": hand-typed")[0] for e in errors] == ["docs/page.md:5", "docs/page.md:2"]
    assert "in the front matter's title" in errors[1]
    assert (5, "640") in state.reported  # the rendered-text scan does not report it again


def test_a_quantity_a_block_prints_from_its_page_model_names_the_models_line(catalog: Catalog, tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "fake.py").write_text('"""A page model."""\n\n\ndef note():\n    return "kept at 16 bit as shipped"\n')
    page = convert('```python exec="on"\nprint("The LM head is kept at 16 bit as shipped.")\n```\n', catalog,
                   model="fake")
    root = drift.fragment(page.html)
    guard = Guard(page.guard.scanner, [], pages)
    # the block's own code types it too: the block's line wins
    assert guard.block_output_errors(page.state, root)[0].startswith("docs/page.md:2: hand-typed quantity '16'")
    page = convert('```python exec="on"\nfrom x import note\nprint(note())\n```\n', catalog, model="fake")
    page.state.block_runs[0] = ("print(note())", 1)
    errors = Guard(page.guard.scanner, [], pages).block_output_errors(page.state, drift.fragment(
        '<div class="sa-out" data-block="0"><p>kept at 16 bit as shipped</p></div>'))
    assert errors == ["docs/page.md:1: the block prints, from snippets/pages/fake.py:5, hand-typed quantity '16' in "
                      "text of its output: \"kept at 16 bit as shipped\". Compute it (a Figure from the page model, "
                      "printed with fmt.fig_html or in fmt.table), or if it is a name, add it to "
                      "snippets/allowed_names.txt"]


MARKDOWN_CELL = ('<div class="jp-Cell jp-MarkdownCell jp-Notebook-cell"><div class="jp-Cell-inputWrapper">'
                 '<div class="jp-InputArea jp-Cell-inputArea"><div class="jp-InputPrompt jp-InputArea-prompt"></div>'
                 '<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">{}</div></div></div></div>')
"""A Markdown cell as mkdocs-jupyter renders it (its text inside the input area, which the scan leaves out for a code
cell's source)."""


def test_a_notebooks_markdown_cells_and_outputs_are_read_against_its_script() -> None:
    script = "# %% [md]\n# A node holds 640 GB.\n\n# %%\nprint('8 GPUs')\n"
    state = PageState(src="notebooks/nb.py", markdown=script)
    html = (MARKDOWN_CELL.format("<p>A node holds 640 GB.</p>")
            + '<div class="jp-Cell jp-CodeCell"><div class="jp-OutputArea-output"><pre>8 GPUs</pre></div>'
            '<div class="jp-OutputArea-output"><p>8 GPUs</p></div></div>')
    errors = Guard(drift.Scanner(), [], ROOT / "snippets" / "pages").notebook_text_errors(state, html)
    assert [e.split(": hand-typed quantity ")[0] for e in errors] == ["docs/notebooks/nb.py:2", "docs/notebooks/nb.py:5"]


def test_consecutive_code_cells_keep_every_later_cell_paired_with_its_source() -> None:
    """mkdocs-jupyter wraps each code cell's jp-Cell in another of the same classes: two code cells in a row are two
    cells, and the Markdown cell after them is still read against its own source line."""
    script = "# %% [md]\n# Intro.\n\n# %%\nx = 1\n\n# %%\ny = 2\n\n# %% [md]\n# A node holds 640 GB.\n"
    state = PageState(src="notebooks/nb.py", markdown=script)
    code = '<div class="jp-Cell jp-CodeCell"><div class="jp-Cell jp-CodeCell"><pre>{}</pre></div></div>'
    html = (MARKDOWN_CELL.format("<p>Intro.</p>") + code.format("x = 1") + code.format("y = 2")
            + MARKDOWN_CELL.format("<p>A node holds 640 GB.</p>"))
    guard = Guard(drift.Scanner(), [], ROOT / "snippets" / "pages")
    errors = guard.notebook_text_errors(state, html)
    assert [e.split(": hand-typed quantity ")[0] for e in errors] == ["docs/notebooks/nb.py:11"]
    # a rendering whose cells do not match the script's is refused, not read out of step
    errors = guard.notebook_text_errors(PageState(src="notebooks/nb.py", markdown=script), html + code.format("z"))
    assert errors == ["docs/notebooks/nb.py: the notebook renders 5 cells for its 4 Markdown and code cells, so its "
                      "rendered text cannot be checked cell by cell (mkdocs-jupyter's markup changed?)"]
    # a cell of another kind than the script's at its place, and a Markdown cell without its rendered Markdown, are
    # named, not read out of step or as empty
    swapped = (code.format("x") + code.format("x = 1") + code.format("y = 2")
               + '<div class="jp-Cell jp-MarkdownCell"><p>A node holds 640 GB.</p></div>')
    errors = guard.notebook_text_errors(PageState(src="notebooks/nb.py", markdown=script), swapped)
    assert errors == ["docs/notebooks/nb.py:2: the notebook's cell 1 renders as code where the script has markdown, so "
                      "its rendered text cannot be checked against its source",
                      "docs/notebooks/nb.py:11: the notebook's Markdown cell 4 renders no jp-RenderedMarkdown, so its "
                      "text cannot be read (mkdocs-jupyter's markup changed?)"]


def test_a_notebooks_links_must_reach_a_page_and_its_anchor() -> None:
    script = "# %% [md]\n# See [HBM](../hbm.md), [the quiz](../../hbm/#no-such-quiz) and [ok](../../hbm/#quiz).\n"
    state = PageState(src="notebooks/nb.py", markdown=script)
    html = ('<p><a href="../hbm.md">HBM</a> <a href="../../hbm/#no-such-quiz">the quiz</a> '
            '<a href="../../hbm/#quiz">ok</a> <a href="https://example.org/">out</a></p>')
    errors = notebook_link_errors(state, html, "notebooks/nb/", {"hbm/": {"quiz"}, "": None}, set())
    assert errors == [
        "docs/notebooks/nb.py:2: the link '../hbm.md' in a Markdown cell reaches no page or file of the site (it "
        "resolves to 'notebooks/hbm.md' from 'notebooks/nb/'; link to the page's URL, e.g. '../../hbm/')",
        "docs/notebooks/nb.py:2: the link '../../hbm/#no-such-quiz' in a Markdown cell names the anchor "
        "#no-such-quiz, which 'hbm/' does not have"]


def test_a_page_model_split_into_a_package_is_read_module_by_module(catalog: Catalog, tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    (pages / "fake").mkdir(parents=True)
    (pages / "fake" / "__init__.py").write_text('"""A page model, a package by section."""\n')
    (pages / "fake" / "tables.py").write_text('"""A section."""\n\n\ndef note():\n    return "kept at 16 bit as shipped"\n')
    page = convert('```python exec="on"\nfrom x import note\nprint(note())\n```\n', catalog, model="fake")
    page.state.block_runs[0] = ("print(note())", 1)
    errors = Guard(page.guard.scanner, [], pages).block_output_errors(page.state, drift.fragment(
        '<div class="sa-out" data-block="0"><p>kept at 16 bit as shipped</p></div>'))
    assert len(errors) == 1
    assert errors[0].startswith("docs/page.md:1: the block prints, from snippets/pages/fake/tables.py:5, hand-typed "
                                "quantity '16'")
