"""Exec blocks, in process (snippets/build/blocks.py): what a block sees, and every way it can fail, each reported
once at the page's line."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from snippets.build.blocks import changed_state, markdown_in_html, shared_state
from snippets.data import Catalog

from .build_harness import convert


def block(code: str, options: str = "") -> str:
    return f'Intro.\n\n```python exec="on"{options}\n{code}\n```\n\nAfter.\n'


def test_a_block_prints_markdown_that_markdown_converts_with_the_builds_catalog(catalog: Catalog) -> None:
    page = convert(block("from snippets.pages.interconnect import cliff_table\n\nprint(cliff_table(catalog))"),
                   catalog)
    assert page.errors == []
    assert "<table>" in page.published and 'class="sa-fig"' in page.published
    assert page.state.block_runs == [("from snippets.pages.interconnect import cliff_table\n\n"
                                      "print(cliff_table(catalog))", 3)]


def test_a_raising_block_is_reported_at_its_line(catalog: Catalog) -> None:
    page = convert(block("x = 1\nraise RuntimeError('boom in a block')"), catalog)
    # the block starts at line 3; its second line is the page's line 5
    assert page.errors == [
        "docs/page.md:5: a Python block raised RuntimeError: boom in a block (line 2 of the block that starts at "
        "line 3). Hint: run the block's code in `python` after `pip install -e .` (with `catalog = "
        "snippets.data.load()`) to see the full traceback"]
    assert "Traceback" not in page.published


def test_a_block_cannot_change_the_catalog(catalog: Catalog) -> None:
    page = convert(block('print("x")\ncatalog.accelerators.pop("l4")'), catalog)
    assert page.errors[0].startswith("docs/page.md:5: a Python block raised AttributeError: 'Table' object "
                                     "has no attribute 'pop'")
    page = convert(block('print("x")\ncatalog.accelerators._entries.pop("l4")'), catalog)
    assert page.errors[0].startswith("docs/page.md:5: a Python block raised AttributeError: 'mappingproxy' object "
                                     "has no attribute 'pop'")
    assert "l4" in catalog.accelerators


def test_a_block_that_changes_shared_state_is_named(catalog: Catalog) -> None:
    from snippets.render import fmt

    defaults = fmt.number.__defaults__
    try:
        page = convert(block('print("x")\nimport snippets.render.fmt as f\nf.number.__defaults__ = (3,)'), catalog)
    finally:
        fmt.number.__defaults__ = defaults
    # the function is fmt.number, which other loaded modules import too: each name it goes by is named
    (error,) = page.errors
    assert error.startswith("docs/page.md:3: the Python block changed shared state the pages after it would see: ")
    assert "snippets.render.fmt.number defaults" in error and error.endswith("A block only prints; keep its changes local")


def test_an_html_block_that_prints_markdown_is_refused(catalog: Catalog) -> None:
    page = convert(block('print("<p>ok</p>")\nprint("Read **this** first.")', ' html="true"'), catalog)
    assert page.errors == ['docs/page.md:3: the html="true" block printed Markdown, which would be published as '
                           "typed: 'Read **this** first.'. Print HTML only, or drop html=\"true\" so Markdown "
                           "converts what the block prints"]


def test_a_block_that_prints_nothing_is_refused(catalog: Catalog) -> None:
    page = convert(block("silent = 1"), catalog)
    assert page.errors == ['docs/page.md:3: the python exec="on" block printed nothing: a block prints the table or '
                           "text it stands for; remove it or print what it computes"]


def test_a_block_that_hangs_is_stopped_at_its_time_limit(catalog: Catalog) -> None:
    page = convert(block("while True:\n    pass"), catalog, timeout=0.5)
    assert page.errors == ["docs/page.md:3: the Python block ran longer than 0.5 s and was stopped (the limit is the "
                           "serving plugin's `block_timeout`, in seconds)"]


def test_a_block_session_is_refused(catalog: Catalog) -> None:
    page = convert(block('print("kept")', ' session="shared"'), catalog)
    assert page.errors == ["docs/page.md:3: session='shared': a session shares one block's state with the blocks "
                           "after it; each block computes from the page model alone"]


def test_a_block_showing_its_source_is_refused(catalog: Catalog) -> None:
    page = convert(block('print("x")', ' source="above"'), catalog)
    assert page.errors == ["docs/page.md:3: source= and result= are not supported: a block prints what it stands for "
                           "(show its code in a fenced block of its own)"]


def test_block_state_never_reaches_the_next_block(catalog: Catalog) -> None:
    code = "try:\n    seen += 1\nexcept NameError:\n    seen = 1\nprint(f'seen {seen}')"
    page = convert(block(code) + block(code), catalog)
    assert page.errors == [] and page.published.count("seen 1") == 2


def test_computed_syntax_in_a_blocks_output_is_never_evaluated(catalog: Catalog) -> None:
    page = convert(block('print("A name from data {{ gpu_memory }}")'), catalog)
    assert any("in the output of an exec block: block output is never read for {{ }} values" in e
               for e in page.errors), page.errors
    assert 'data-name="gpu_memory"' not in page.published


def test_a_quantity_typed_in_a_block_is_named_by_its_line(catalog: Catalog) -> None:
    page = convert(block('print("A card holds 80 GB.")'), catalog)
    assert page.scanned() == ["docs/page.md:4: hand-typed quantity '80' in text of its output: \"A card holds 80 "
                              "GB.\". Compute it (a Figure from the page model, printed with fmt.fig_html or in "
                              "fmt.table), or if it is a name, add it to snippets/allowed_names.txt"]


# ---------------------------------------------------------------- the shared-state check itself


def _f(x: int = 1, *, y: str = "a") -> None: ...


def _g(xs: list[int] = [1]) -> None: ...  # noqa: B006 - the mutable default is the point


@pytest.fixture
def probe() -> Iterator[types.ModuleType]:
    mod = types.ModuleType("snippets._probe")
    mod.DEFAULT = 3  # type: ignore[attr-defined]
    mod.f = types.FunctionType(_f.__code__, {}, "f", _f.__defaults__)  # type: ignore[attr-defined]
    mod.f.__kwdefaults__ = {"y": "a"}  # type: ignore[attr-defined]
    mod.g = types.FunctionType(_g.__code__, {}, "g", ([1],))  # type: ignore[attr-defined]
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


def test_each_change_a_block_could_make_is_named(probe: types.ModuleType) -> None:
    before = shared_state()
    assert changed_state(before, shared_state()) == []
    probe.DEFAULT = 4
    probe.f.__defaults__ = (2,)
    probe.f.__kwdefaults__["y"] = "b"
    probe.g.__defaults__[0].append(2)
    assert changed_state(before, shared_state()) == [
        "snippets._probe.DEFAULT", "snippets._probe.f defaults", "snippets._probe.g defaults"]


def test_one_state_checker_across_blocks_still_sees_every_change(probe: types.ModuleType) -> None:
    """The build keeps one `SharedState` for all its blocks (it remembers which defaults are immutable): what it
    remembers never hides a change, in place or by assignment, positional or keyword, made after it looked."""
    from snippets.build.blocks import SharedState

    shared = SharedState()
    probe.h = types.FunctionType(_f.__code__, {}, "h", (1,))  # type: ignore[attr-defined]
    probe.h.__kwdefaults__ = {"y": []}  # type: ignore[attr-defined]  # a mutable keyword default
    before = shared.snapshot()
    assert changed_state(before, shared.snapshot()) == []  # looked twice: nothing changed
    probe.g.__defaults__[0].append(2)  # a list default edited in place
    probe.h.__kwdefaults__["y"].append(1)  # a keyword default edited in place
    assert changed_state(before, shared.snapshot()) == ["snippets._probe.g defaults", "snippets._probe.h defaults"]
    before = shared.snapshot()
    probe.f.__kwdefaults__["y"] = "b"  # a keyword default replaced
    probe.f.__defaults__ = (1,)  # a new tuple, equal to the old one: still another object
    assert changed_state(before, shared.snapshot()) == ["snippets._probe.f defaults"]
    before = shared.snapshot()
    probe.f.__kwdefaults__ = None
    probe.h.__defaults__ = None
    assert changed_state(before, shared.snapshot()) == ["snippets._probe.f defaults", "snippets._probe.h defaults"]


def test_a_name_added_is_no_change_and_a_rebound_function_is_named_once(probe: types.ModuleType) -> None:
    before = shared_state()
    probe.NEW = object()  # a module imported by a block adds names
    assert changed_state(before, shared_state()) == []
    probe.f = lambda: None
    assert changed_state(before, shared_state()) == ["snippets._probe.f"]


def test_markdown_in_the_output_of_an_html_block_is_found() -> None:
    assert markdown_in_html('<table>\n<tr><td title="a **b**">x</td></tr>\n</table>\n<p><em>As of</em></p>') == ""
    assert markdown_in_html("<td>data text shown as typed: **b** [x](y)</td>") == ""  # escaped data, as Markdown shows it
    for typed in ("- a list item", "| a | table |", "## A heading", "Plain **prose**.", "1. A step"):
        assert markdown_in_html(f"<p>ok</p>\n{typed}\n<p>ok</p>") == typed, typed
