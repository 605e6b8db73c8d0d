"""The `{{ }}` Markdown extension (snippets/build/computed.py) in process, over the interconnect page's model: every
error path names the page and line, and what is computed is published as a named span."""

from __future__ import annotations

import pytest

from snippets.build.computed import collect, computed_occurrences, numbers_json, stable_cell_ids
from snippets.data import Catalog

from .build_harness import convert


def test_a_value_is_a_named_span_and_a_claim_is_checked(catalog: Catalog) -> None:
    page = convert("One carries {{ gpu_memory }}; {{ claim m405_fp16.spans_nodes }}it spans nodes{{ /claim }}.",
                   catalog)
    assert page.errors == []
    assert 'class="sa-fig"' in page.html and 'data-name="gpu_memory"' in page.html
    assert page.state.figures[0]["name"] == "gpu_memory" and page.state.figures[0]["unit"] == "GB"
    assert page.state.claims[0]["claim"] == "m405_fp16.spans_nodes" and page.state.claims[0]["holds"] is True
    assert 'class="sa-claim" data-claim="m405_fp16.spans_nodes" title="Checked at build time: ' in page.html


def test_an_unknown_name_is_named_with_a_suggestion(catalog: Catalog) -> None:
    page = convert("Line one.\n\nOne carries {{ gpu_memroy }} of HBM.", catalog)
    assert len(page.errors) == 1
    assert page.errors[0].startswith("docs/page.md:3: unknown name in {{ gpu_memroy }}: name 'gpu_memroy' is not "
                                     "defined; did you mean gpu_memory")
    assert page.errors[0].endswith("(names come from snippets/pages/interconnect/)")  # a package by section


@pytest.mark.parametrize(("typed", "expected"), [
    ("{{ gpu_memory.nonexistent }}", "{{ gpu_memory.nonexistent }} failed: AttributeError: "),
    ("{{ gpu_memory.value }}", "{{ gpu_memory.value }} gave a float, not a Figure: wrap numbers with a "
                               "snippets.render.fmt constructor so they carry a unit"),
    ("{{ claim 1 == 1 }}always{{ /claim }}", "{{ claim 1 == 1 }} holds a comparison: a claim is a name of the page model"),
    ("{{ claim True }}always{{ /claim }}", "{{ claim True }} holds a literal"),
    ("{{ claim None }}nothing{{ /claim }}", "{{ claim None }} holds a literal"),
    ("{{ None }}", "{{ None }} holds a literal: a value is a name of the page model"),
    ('{{ "80 GB" }}', "holds a literal"),
    ("{{ claim gpu_memory is None }}x{{ /claim }}", "holds a comparison"),
    ("{{ claim gpu_memory }} never closed", "{{ claim gpu_memory }} is never closed"),
    ("{{ claim gpu_memory.value }}x{{ /claim }}", "claim 'gpu_memory.value' gave a float, not a Claim or bool"),
])
def test_what_computes_nothing_or_fails_is_refused_at_its_line(catalog: Catalog, typed: str, expected: str) -> None:
    page = convert(f"Intro.\n\nPlanted: {typed}\n", catalog)
    assert len(page.errors) == 1, page.errors
    assert page.errors[0].startswith("docs/page.md:3: ") and expected in page.errors[0], page.errors


def test_a_stray_claim_end_is_refused(catalog: Catalog) -> None:
    page = convert("Text {{ /claim }} here.", catalog)
    assert page.errors == ["docs/page.md: {{ /claim }} without an opening {{ claim ... }}"]


def test_each_occurrence_is_reported_at_its_own_line(catalog: Catalog) -> None:
    page = convert("First {{ gpu_memory.value }} here.\n\nAnd again {{ gpu_memory.value }} there.\n", catalog)
    assert [e.split(": ", 1)[0] for e in page.errors] == ["docs/page.md:1", "docs/page.md:3"]


def test_a_page_without_a_model_cannot_compute(catalog: Catalog) -> None:
    page = convert("Needs {{ gpu_memory }}.", catalog, model=None)
    assert page.errors == ["docs/page.md: uses {{ ... }} computed values but its front matter names no `model:`"]


def test_a_failing_page_model_is_named(catalog: Catalog) -> None:
    page = convert("Needs {{ gpu_memory }}.", catalog, model="no_such_model")
    assert page.errors[0].startswith("docs/page.md: page model snippets.pages.no_such_model failed: ModuleNotFoundError: "
                                     "No module named 'snippets.pages.no_such_model'")


def test_code_is_left_alone(catalog: Catalog) -> None:
    page = convert("Literal `{{ not_a_name }}` in code.\n\n```text\n{{ also_not }}\n```\n", catalog)
    assert page.errors == [] and "{{ not_a_name }}" in page.html and "{{ also_not }}" in page.html
    assert computed_occurrences("`{{ a }}` {{ b }}\n\n```\n{{ c }}\n```\n<!-- {{ d }} -->\n") == {"value b": [1]}


def test_a_model_value_inside_a_code_span_is_refused(catalog: Catalog) -> None:
    # a name the page's model computes, typed inside backticks, would be shown as typed: refused at its line, for a
    # value and a claim alike; the syntax shown in code (`{{ not_a_name }}` above) still passes
    page = convert("Line one.\n\nThe budget is `{{ gpu_memory }}` and ``{{ claim m405_fp16.spans_nodes }}``.", catalog)
    assert len(page.errors) == 2, page.errors
    assert page.errors[0].startswith("docs/page.md:3: {{ gpu_memory }} inside a code span is shown as typed")
    assert "{{ claim m405_fp16.spans_nodes }} inside a code span" in page.errors[1]
    assert convert("Shown as written: `{{ value }}`, `{{ claim expr }}`.", catalog).errors == []


def test_unrendered_braces_and_tracebacks_are_problems() -> None:
    _, _, problems = collect("<p>carries {{ {gpu_memory} }} of</p><pre>{{ fine in code }}</pre>")
    assert problems == ["unrendered '{{' in the page: ...carries {{ {gpu_memory} }} of...",
                        "unrendered '}}' in the page: ...carries {{ {gpu_memory} }} of..."]
    _, _, problems = collect("<pre>Traceback (most recent call last):\n  boom</pre>")
    assert problems == ["a traceback is published in a code block"]


def test_a_figure_shown_with_two_values_is_a_problem() -> None:
    spans = ('<span class="sa-fig" data-name="x" data-value="1" data-unit="GB">1 GB</span>'
             '<span class="sa-fig" data-name="x" data-value="2" data-unit="GB">2 GB</span>')
    _, _, problems = collect(f"<p>{spans}</p>")
    assert problems == ["figure 'x' is shown with two values: '1 GB' and '2 GB'"]


def test_numbers_json_is_one_record_a_line_in_page_order(catalog: Catalog) -> None:
    page = convert("A {{ gpu_memory }} and {{ claim m405_fp16.spans_nodes }}spans{{ /claim }}.", catalog)
    text = numbers_json({"b.md": page.state, "a.md": convert("None.", catalog).state})
    assert text.index('"a.md"') < text.index('"b.md"')
    assert '\n   {"name": "gpu_memory", "text": ' in text and text.endswith("}\n")


def test_notebook_cell_ids_are_numbered_in_order() -> None:
    assert stable_cell_ids('<div id="cell-id=9f"></div><div id="cell-id=a1"></div>') == (
        '<div id="cell-1"></div><div id="cell-2"></div>')


def test_computed_syntax_in_data_text_is_shown_as_text_and_refused(catalog: Catalog) -> None:
    """A name from data/ that holds `{{ }}` (data/ refuses it: tests/unit/test_data.py) is never evaluated: a value
    shows it as text, which the page's scan then refuses as unrendered."""
    import markdown

    from snippets.build.computed import ComputedExtension, Pages

    pages = Pages(catalog=catalog)
    state = pages.begin("page.md", "The {{ gpu_name }} card.", "interconnect")
    state.namespace = {"gpu_name": "NVIDIA H100 SXM {{ gpu_memory }}"}
    html = markdown.Markdown(extensions=[ComputedExtension(pages)]).convert("The {{ gpu_name }} card.")
    assert state.errors == [] and 'data-name="gpu_memory"' not in html and "SXM {{ gpu_memory }}" in html
    _, _, problems = collect(html)
    assert problems and problems[0].startswith("unrendered '{{' in the page")


# ---------------------------------------------------------------- guards that cannot be talked around (issue 27)

@pytest.mark.parametrize(("typed", "expected"), [
    ('{{ gpu_memory.text + " or 80 GB" }}', "holds an operator"),
    ("{{ gpu_memory.text[:2] }}", "takes a slice: an index is a plain int or string"),
    ("{{ gpu_memory.text[0:1] }}", "takes a slice"),
    ('{{ gpu_memory.__class__(80.0, "GB", "80 GB") }}', "holds a call"),
    ("{{ gpu_memory.__class__ }}", "reads the private attribute '__class__'"),
    ("{{ [gpu_memory][0] }}", "holds a List"),
    ("{{ claim m405_fp16.spans_nodes.__class__(True, 'always') }}always{{ /claim }}", "holds a call"),
    ("{{ claim m405_fp16.spans_nodes or m405_fp16.fits_node }}either{{ /claim }}", "holds an operator"),
    ("{{ claim gpu_memory == gpu_memory }}same{{ /claim }}", "holds a comparison"),
    ("{{ claim gpu_memory.value >= 0 }}positive{{ /claim }}", "holds a comparison"),
])
def test_a_value_or_claim_only_reads_what_the_model_computed(catalog: Catalog, typed: str, expected: str) -> None:
    """Issue 27: string building, slicing, construction, tautologies typed in the page are refused at their line;
    before, each was published (a string holding a typed quantity, a hand-made Figure or Claim)."""
    page = convert(f"Intro.\n\nPlanted: {typed}\n", catalog)
    assert len(page.errors) == 1, page.errors
    assert page.errors[0].startswith("docs/page.md:3: ") and expected in page.errors[0], page.errors
    assert 'class="sa-fig"' not in page.html and "sa-text" not in page.html


def test_names_attributes_and_plain_indexes_are_values(catalog: Catalog) -> None:
    from snippets.build.computed import shape_problem

    assert shape_problem("m405_fp16.weight") is None
    assert shape_problem('share["fp8"].text') is None and shape_problem("tiers[0]") is None
    assert shape_problem("_private") == "reads the private name '_private'"


def test_a_failing_page_model_is_one_message_not_one_per_name(catalog: Catalog) -> None:
    """Issue 27: a page model that raises is reported once; before, each {{ }} of the page added an "unknown name"."""
    page = convert("A {{ a }}, {{ b }}, {{ c.d }} and {{ claim e }}x{{ /claim }}.", catalog, model="no_such_model")
    assert len(page.errors) == 1, page.errors
    assert page.errors[0].startswith("docs/page.md: page model snippets.pages.no_such_model failed: ModuleNotFoundError")


def test_a_missing_data_entry_names_the_entry_and_the_line_that_looked_it_up() -> None:
    from snippets.build.computed import failure
    from snippets.build.plugin import one_per_cause
    from snippets.render import fmt

    try:
        fmt.unit_definition("h100-sxm")
    except KeyError as exc:
        said = failure(exc)
    assert said.startswith("KeyError: no entry 'h100-sxm' where the code looks it up") and \
        "(raised at snippets/render/fmt.py:" in said
    errors = [f"docs/a.md: page model snippets.pages.a failed: {said}; the page's values are not evaluated",
              f"docs/a.md:12: a Python block raised {said} (line 2 of the block that starts at line 10)",
              f"docs/b.md:40: a Python block raised {said} (line 1 of the block that starts at line 39)",
              "docs/c.md:3: something else"]
    folded = one_per_cause(errors)
    assert len(folded) == 2 and folded[0].endswith("[the same cause also stopped: docs/a.md:12, docs/b.md:40]")
    # the same entry missing elsewhere, and what a page's later blocks raise once it is missing, follow from it
    errors += ["docs/b.md:60: a Python block raised KeyError: no entry 'h100-sxm' where the code looks it up "
               "(raised at snippets/pages/b.py:9) (line 1 of the block)",
               "docs/b.md:70: a Python block raised IndexError: list index out of range (line 3 of the block)",
               "docs/nb.py:31: a notebook cell raised KeyError: 'h100-sxm'",
               "docs/nb.py: a traceback is published in a code block",
               "docs/c.md:80: a Python block raised IndexError: list index out of range (line 3 of the block)"]
    folded = one_per_cause(errors)
    assert folded[0].endswith("[the same cause also stopped: docs/a.md:12, docs/b.md:40, docs/b.md:60, "
                              "docs/b.md:70 (IndexError), docs/nb.py:31, docs/nb.py (a traceback)]"), folded[0]
    assert folded[1:] == ["docs/c.md:3: something else", errors[-1]]


def test_words_with_figures_are_text_with_named_spans(catalog: Catalog) -> None:
    """A `fmt.Phrase` (the engine's configuration words) is its text, escaped, with each count a figure span named
    `<name>.<key>`, published with the page's figures."""
    page = convert("The cheapest is {{ tight_config }}.", catalog, model="latency_target")
    assert page.errors == []
    phrase = page.state.figures
    names = [f["name"] for f in phrase]
    assert names and all(n.startswith("tight_config.") for n in names), names
    assert {n.split(".", 1)[1] for n in names} <= {"prefill_workers", "decode_workers", "in_flight"}
    assert "in_flight" in {n.split(".", 1)[1] for n in names}
    assert '<span class="sa-text" data-name="tight_config">' in page.html
    for f in phrase:
        assert f'data-name="{f["name"]}"' in page.html and f["unit"] in ("workers", "requests")
    assert "requests in flight" in page.html or "request in flight" in page.html
