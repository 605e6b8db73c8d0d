"""Hostile and careless content (issue 27), in process: what used to be published and is now refused at its file
and line. Each test failed before the commit that added it: quantities written without ASCII digits, in code
spans, nav titles or stylesheet `content`; figure spans written by hand (a bare one crashed the build); links and
loads that leave the site."""

from __future__ import annotations

from pathlib import Path

import pytest

from snippets.build import drift, links
from snippets.build.computed import PageState, collect
from snippets.build.guard import Guard
from snippets.data import Catalog

from ..conftest import ROOT
from .build_harness import convert


def source_errors(body: str) -> list[str]:
    guard = Guard(drift.Scanner(), [], ROOT / "snippets" / "pages")
    state = PageState(src="page.md", markdown=body)
    return guard.source_errors(state, body, {})


@pytest.mark.parametrize("typed", ["½", "10³", "③", "Ⅻ", "x₂", "⑧"])
def test_a_number_without_ascii_digits_is_a_typed_quantity(typed: str) -> None:
    errors = source_errors(f"Intro.\n\nIt needs {typed} of the card.\n")
    assert len(errors) == 1 and errors[0].startswith(f"docs/page.md:3: hand-typed quantity '{typed}' in prose"), errors


@pytest.mark.parametrize(("typed", "token"), [("XII GB", "XII GB"), ("IV GPUs", "IV GPUs"), ("CC tokens", "CC tokens")])
def test_a_number_in_ascii_roman_numerals_with_a_unit_is_a_typed_quantity(typed: str, token: str) -> None:
    errors = source_errors(f"Intro.\n\nIt needs {typed} of the card.\n")
    assert len(errors) == 1 and errors[0].startswith(f"docs/page.md:3: hand-typed quantity '{token}' in prose"), errors


def test_roman_letters_that_are_words_or_names_stay_prose() -> None:
    assert source_errors("Intro.\n\nMI300X GPUs, I think, and X GB as a placeholder; see section IV.\n") == []


def test_the_rendered_scan_reads_roman_quantities(catalog: Catalog) -> None:
    page = convert("Intro.\n\n| a | b |\n| - | - |\n| x | XII GB of it |\n", catalog)
    assert any("hand-typed quantity 'XII GB'" in e for e in page.scanned()), page.scanned()


def test_the_rendered_scan_reads_them_too(catalog: Catalog) -> None:
    page = convert("Intro.\n\n| a | b |\n| - | - |\n| x | ¾ of it |\n", catalog)
    assert any("hand-typed quantity '¾'" in e for e in page.scanned()), page.scanned()


@pytest.mark.parametrize(("code", "token"), [("`80 GB`", "80 GB"), ("`--mem 3.35TB/s`", "3.35TB/s"), ("`2× faster`", "2×"),
                                              ("`700 W`", "700 W")])
def test_a_quantity_in_a_code_span_is_refused(code: str, token: str) -> None:
    errors = source_errors(f"Intro.\n\nRun {code} here.\n")
    assert errors == [f"docs/page.md:3: hand-typed quantity {token!r} in a code span: \"{code}\". A code span shows "
                      "code as typed; compute the quantity with {{ ... }} outside it"]


def test_code_spans_keep_their_code() -> None:
    assert source_errors("Intro.\n\n`--tp 2`, `(p − 1) / (m + p − 1)`, `2 × (N − 1)`, `fp8`.\n") == []


@pytest.mark.parametrize("span", ['<span class="sa-fig" data-name="gpu_memory" data-value="80" data-unit="GB">eighty</span>',
                                  '<span class="sa-fig">eighty</span>', "<b data-claim=x>holds</b>",
                                  "<span class='x sa-text'>H100</span>"])
def test_a_figure_span_written_by_hand_is_refused_at_its_line(span: str) -> None:
    errors = source_errors(f"Intro.\n\nIt carries {span} of HBM.\n")
    assert len(errors) == 1 and errors[0].startswith("docs/page.md:3: ") and "only the build writes it" in errors[0]


def test_a_bare_figure_span_is_a_message_not_a_traceback(catalog: Catalog) -> None:
    page = convert('Intro.\n\nIt carries <span class="sa-fig">80 GB</span> of HBM.\n', catalog)
    scanned = page.scanned()  # raised ValueError: could not convert string to float: 'None'
    assert any("without a number in data-value (None)" in e for e in scanned), scanned
    assert any(e.startswith("docs/page.md:3: ") and "only the build writes it" in e for e in source_errors(
        'Intro.\n\nIt carries <span class="sa-fig">80 GB</span> of HBM.\n'))
    _, _, problems = collect('<p><span class="sa-fig" data-value="lots">x</span></p>')
    assert problems == ["a figure span 'x' without a number in data-value ('lots'): only the build writes figure spans"]


def test_a_nav_title_and_generated_content_are_read_like_prose(tmp_path: Path) -> None:
    scanner = drift.Scanner()
    nav = [{"Home": "index.md"}, {"Foundations": [{"Why 80 GB": "hbm.md"}, {"H100 notes": "h.md"}]}]
    config = "site_name: x\nnav:\n  - Home: index.md\n  - Foundations:\n    - Why 80 GB: hbm.md\n    - H100 notes: h.md\n"
    assert links.nav_errors(nav, config, scanner) == [
        "mkdocs.yml:5: hand-typed quantity '80' in the nav title 'Why 80 GB': a reader sees it on every page; name the "
        "page without it, or if it is a name, add it to snippets/allowed_names.txt"]
    css = tmp_path / "extra.css"
    css.write_text('.a::after {\n  content: "Scroll for more";\n}\n.b::before { content: "only ½ shown, 80 GB"; }\n'
                   "/* content: '9 GB' in a comment */\n", encoding="utf-8")
    errors = links.stylesheet_errors(css, "docs/stylesheets/extra.css", scanner)
    assert [e.split(": hand-typed quantity ")[1].split(" ")[0] for e in errors] == ["'½'", "'80'"]
    assert all(e.startswith("docs/stylesheets/extra.css:4: ") for e in errors)


# ---------------------------------------------------------------- links and loads


@pytest.mark.parametrize(("markdown", "expected"), [
    ("[run](javascript:alert(1))", "the link 'javascript:alert(1)' is a javascript: link"),
    ('<a href="java\tscript:alert(1)">x</a>', "is a javascript: link"),
    ("[old](http://example.com/)", "the link 'http://example.com/' is a http: link"),
    ("[mail](mailto:a@example.com)", "is a mailto: link"),
    ("[data](data:text/html,hi)", "is a data: link"),
    ("[proto](//example.com/x)", "a scheme-relative address"),
    ('<img src="https://example.com/t.png" loading="lazy" alt="x">', "<img src='https://example.com/t.png'> loads from "
                                                                      "another host (https:)"),
    ('<img srcset="a.png 1x, https://example.com/b.png 2x" alt="x">', "<img srcset='https://example.com/b.png'>"),
    ('<script src="https://cdn.example.com/x.js"></script>', "<script src='https://cdn.example.com/x.js'>"),
    ('<iframe src="https://example.com/" loading="lazy"></iframe>', "<iframe src='https://example.com/'>"),
    ('<link rel="stylesheet" href="https://example.com/x.css">', "<link href='https://example.com/x.css'> loads"),
    ('<video poster="https://example.com/p.jpg"></video>', "<video poster='https://example.com/p.jpg'>"),
    ('<video><source src="https://example.com/v.mp4"></video>', "<source src='https://example.com/v.mp4'>"),
    ('<div style="background: url(https://example.com/t.gif)">x</div>', "a style attribute loads from another host"),
])
def test_a_link_that_leaves_the_site_or_a_load_from_another_host_is_refused(catalog: Catalog, markdown: str,
                                                                            expected: str) -> None:
    page = convert(f"Intro.\n\nSee {markdown} here.\n", catalog)
    root = drift.fragment(page.html)
    errors = links.page_link_errors(page.state, root)
    assert len(errors) == 1 and errors[0].startswith("docs/page.md:3: ") and expected in errors[0], errors


def test_the_sites_own_links_and_loads_pass(catalog: Catalog) -> None:
    page = convert('Intro.\n\nSee [a](hbm.md#x), [b](https://example.com/), [c](#top), <img src="../assets/a.png" '
                   'alt="a"> and <img src="data:image/png;base64,AAAA" alt="b">.\n', catalog)
    assert links.page_link_errors(page.state, drift.fragment(page.html)) == []


def test_a_stylesheet_or_extra_asset_from_another_host_is_refused(tmp_path: Path) -> None:
    css = tmp_path / "extra.css"
    css.write_text('@import "https://fonts.example.com/f.css";\n.a { background: url("img/a.png"); }\n'
                   ".b { background: url(//cdn.example.com/b.png); }\n", encoding="utf-8")
    errors = links.stylesheet_errors(css, "docs/stylesheets/extra.css", drift.Scanner())
    assert [e.split(": ", 1)[0] for e in errors] == ["docs/stylesheets/extra.css:1", "docs/stylesheets/extra.css:3"]
    assert links.config_asset_errors(["stylesheets/extra.css", "https://cdn.example.com/x.css"], ["js/a.js"]) == [
        "mkdocs.yml: extra_css 'https://cdn.example.com/x.css' loads from another host (https:)"]


# ---------------------------------------------------------------- a basis is read from data, never typed


def test_a_basis_typed_after_a_figure_must_be_the_figures_own() -> None:
    """Issue 27: NVLink entered on its other valid basis (450 GB/s per direction) published "with both directions
    summed" beside it. The build now refuses words after a bandwidth figure that type another basis than data's."""
    import markdown

    from snippets.build.computed import ComputedExtension, Pages
    from snippets.render.fmt import Figure

    pages = Pages()
    text = ("Intro.\n\nNVLink as {{ link }} with both directions summed, which is {{ one }} each way; "
            "{{ summed }} with both directions summed.\n")
    state = pages.begin("page.md", text, "interconnect")
    state.namespace = {"link": Figure(450, "GB/s", "450 GB/s", "per direction"),
                       "one": Figure(450, "GB/s", "450 GB/s", "per direction"),
                       "summed": Figure(900, "GB/s", "900 GB/s", "both directions summed")}
    markdown.Markdown(extensions=[ComputedExtension(pages)]).convert(text)
    assert state.errors == ["docs/page.md:3: {{ link }} is quoted per direction (from data/), and the words after it "
                            "type 'both directions summed': read the basis with {{ link.basis }} instead of typing it"]


def test_a_basis_typed_after_a_phrases_figure_must_be_the_figures_own() -> None:
    """The same rule inside a phrase ("a link of {{ bw }} ...") and after it: words that follow a figure up to the
    next one, within the phrase or on the page, may not type another direction than the figure's own."""
    import markdown

    from snippets.build.computed import ComputedExtension, Pages
    from snippets.render.fmt import Figure, Phrase

    one = Figure(450, "GB/s", "450 GB/s", "per direction")
    pages = Pages()
    text = "Intro.\n\nInside: {{ inside }}.\n\nAfter: {{ after }} with both directions summed.\n\nFine: {{ fine }}.\n"
    state = pages.begin("page.md", text, "interconnect")
    state.namespace = {
        "inside": Phrase((("bw", one), " both directions summed, over ", ("n", Figure(7, "links", "7")), " links")),
        "after": Phrase(("two links of ", ("bw", one))),
        "fine": Phrase((("bw", one), " each way, over ", ("n", Figure(7, "links", "7")), " links")),
    }
    markdown.Markdown(extensions=[ComputedExtension(pages)]).convert(text)
    assert state.errors == [
        "docs/page.md:3: {{ inside }}'s bw is quoted per direction (from data/), and the words after it type "
        "'both directions summed': a phrase says its figures' bases itself",
        "docs/page.md:5: {{ after }}'s bw is quoted per direction (from data/), and the words after it type "
        "'both directions summed': a phrase says its figures' bases itself"]


def test_the_reference_page_reads_nvlinks_basis_from_data(tmp_path: Path) -> None:
    import shutil

    import yaml

    from snippets.data import load
    from snippets.pages.reference_accelerators import namespace

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    path = data / "accelerators.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["h100-sxm"]["scale_up"]["bandwidth"] = {"value": 450, "unit": "GB/s", "direction": "per_direction"}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    fig = namespace(load(data))["h100_nvlink_summed"]
    assert (fig.text, fig.basis) == ("450 GB/s", "per direction")
    page = (ROOT / "docs" / "reference" / "accelerators.md").read_text(encoding="utf-8")
    assert "{{ h100_nvlink_summed }}, {{ h100_nvlink_summed.basis }}" in page
    assert "both directions summed" not in page  # the basis is the figure's, from data


def test_generated_content_in_a_pages_style_is_read_and_icons_are_not_digits(catalog: Catalog) -> None:
    page = convert('Intro.\n\n<style>\n.a::after { content: "80 GB more"; }\n.b::before { content: "\\25B6"; }\n'
                   "</style>\n\nText.\n", catalog)
    errors = links.page_style_errors(page.state, drift.fragment(page.html), drift.Scanner())
    assert errors == ["docs/page.md:4: hand-typed quantity '80' in generated content of a <style> (\"80 GB more\"): a "
                      "reader sees it as text; write it in the page, computed"]


def test_a_block_that_writes_figure_markup_by_hand_is_refused(catalog: Catalog) -> None:
    body = ('Intro.\n\n```python exec="on"\nx = 1\nprint(\'It has <span class="sa-fig" data-name="m" data-value="80" '
            'data-unit="GB">80 GB</span>.\')\n```\n')
    errors = convert(body, catalog).scanned()
    assert any(e.startswith("docs/page.md:5: the block writes the markup of a computed figure") for e in errors), errors
