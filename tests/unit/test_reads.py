"""What a build notes as read from data/ (`snippets.data.loader.ReadLog`): every kind of access to a table, through
whatever view or kept result it comes, so that a page kept across `mkdocs serve`'s rebuilds (snippets/build/
pagecache.py) is keyed by every table it depends on. The build's own test: tests/build/test_serve.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from snippets.data import Catalog, load
from snippets.data.export import engine_catalog
from snippets.data.loader import ReadLog, derive

from ..conftest import ROOT


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load(ROOT / "data")


def reads(cat: Catalog, f: Callable[[], Any]) -> set[str]:
    with cat.read_log.frame() as got:
        f()
    return got


@pytest.mark.parametrize("access", [
    lambda t: t["h100-sxm"], lambda t: t.get("h100-sxm"), lambda t: t.get("no-such-id"), lambda t: "h100-sxm" in t,
    lambda t: len(t), lambda t: list(t), lambda t: list(t.items()), lambda t: list(t.values()), lambda t: list(t.keys()),
    lambda t: t == {}, lambda t: dict(t), lambda t: sorted(t),
], ids=["key", "get", "get-missing", "in", "len", "iter", "items", "values", "keys", "eq", "dict", "sorted"])
def test_every_access_to_a_table_notes_it(cat: Catalog, access: Callable[[Any], Any]) -> None:
    """A lookup by id, a walk of the whole table, a count or a membership test: each reads the table."""
    assert reads(cat, lambda: access(cat.accelerators)) == {"accelerators"}


def test_a_record_is_noted_in_the_records_it_was_opened_inside(cat: Catalog) -> None:
    log = cat.read_log
    with log.frame() as outer:
        cat.models["llama-3.1-8b"]
        with log.frame() as inner:
            list(cat.prices.values())
        assert inner == {"prices"}
        cat.scenarios.items()
    assert outer == {"models", "prices", "scenarios"}
    assert len(log.frames) == 1  # every record closed


def test_closing_a_record_closes_those_left_open_inside_it() -> None:
    log = ReadLog()
    outer = log.open()
    log.open()
    log.note("models")
    log.close(outer)
    assert outer == {"models"} and len(log.frames) == 1 and log.frames[0] == {"models"}
    log.close(outer)  # closed already: nothing happens
    assert len(log.frames) == 1


def test_a_kept_result_notes_what_computing_it_read_each_time_it_is_handed_out() -> None:
    """`derive`: computed once per catalog; a second caller, in another record, is noted as reading the tables the
    first computation read, without computing again."""
    cat = load(ROOT / "data")
    calls: list[int] = []

    def make() -> int:
        calls.append(1)
        return len(cat.accelerators) + len(cat.prices)

    first = reads(cat, lambda: derive(cat, "test", make))
    second = reads(cat, lambda: derive(cat, "test", make))
    assert first == second == {"accelerators", "prices"} and len(calls) == 1


def test_the_engine_records_and_page_models_note_what_they_were_computed_from() -> None:
    """The engine's records (made once per catalog) and a page model (`Page.of`, once per catalog) are kept with the
    catalog: the page that asks for them second is noted as reading what computing them read."""
    from snippets.pages.home import HomePage
    from snippets.pages.sources import recording

    cat = load(ROOT / "data")
    first = reads(cat, lambda: engine_catalog(cat))
    assert {"accelerators", "models", "precisions", "interconnects", "policies"} <= first
    assert "assumptions" not in first  # the engine reads none
    assert reads(cat, lambda: engine_catalog(cat)) == first
    assert reads(cat, lambda: engine_catalog(recording(cat))) == first  # through a page's recording view too
    page = reads(cat, lambda: HomePage.of(cat))
    assert first <= page
    assert reads(cat, lambda: HomePage.of(cat)) == page
    assert reads(cat, lambda: HomePage.namespace_of(cat)) == page


def test_the_engine_results_and_the_build_searches_are_noted() -> None:
    """What is read back from the cache directory is noted as what it depends on: the engine's results as the tables
    their key hashes (`EngineResults.reads`), the sizing grid's searches as the build's `TARGETS`."""
    from snippets.data.results import EngineResults, results_of
    from snippets.pages.reference_sizing import NOT_SEARCHED, TARGETS, grid_targets

    cat = load(ROOT / "data")
    store = cat.derived[EngineResults] = EngineResults("0" * 16, reads=frozenset({"measurements", "policies"}))
    assert reads(cat, lambda: results_of(cat)) == {"measurements", "policies"} and results_of(cat) is store
    cat.derived[TARGETS] = NOT_SEARCHED
    assert reads(cat, lambda: grid_targets(cat)) == {TARGETS}
    cat.derived[TARGETS] = {}
    assert reads(cat, lambda: grid_targets(cat)) == {TARGETS}


def test_the_build_keeps_the_tables_its_engine_results_key(tmp_path: Any) -> None:
    """`EngineResults.load`: the key is the export without the bands and three files as written; the store notes the
    export's tables and those three."""
    from snippets.data.results import EngineResults

    cat = load(ROOT / "data")
    store = EngineResults.load(cat, ROOT, tmp_path)
    assert {"measurements", "policies", "efficiencies", "accelerators", "models"} <= store.reads
    assert "assumptions" not in store.reads
