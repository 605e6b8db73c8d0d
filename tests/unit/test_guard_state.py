"""The shared-state check of exec blocks (snippets/build/guard.py `shared_state`, `changed_state`), on a
throwaway module registered as `snippets._probe`: each kind of change a block could make is named, and what is
no change (a name added by an import, a value equal but the same object) is not."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from snippets.build.guard import changed_state, shared_state


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


def test_a_name_added_is_no_change_and_a_rebound_function_is_named_once(probe: types.ModuleType) -> None:
    before = shared_state()
    probe.NEW = object()  # a module imported by a block adds names
    assert changed_state(before, shared_state()) == []
    probe.f = lambda: None
    assert changed_state(before, shared_state()) == ["snippets._probe.f"]


def test_markdown_in_the_output_of_an_html_block_is_found() -> None:
    from snippets.build.guard import markdown_in_html

    assert markdown_in_html('<table>\n<tr><td title="a **b**">x</td></tr>\n</table>\n<p><em>As of</em></p>') == ""
    assert markdown_in_html("<td>data text shown as typed: **b** [x](y)</td>") == ""  # escaped data, as Markdown shows it
    for typed in ("- a list item", "| a | table |", "## A heading", "Plain **prose**.", "1. A step"):
        assert markdown_in_html(f"<p>ok</p>\n{typed}\n<p>ok</p>") == typed, typed
