"""The `Page` base (snippets/pages/base.py) and the recording catalog behind its sources (snippets/pages/sources.py)."""

from __future__ import annotations

import pytest

from snippets.data import Catalog, load
from snippets.pages.base import Page


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load()


class _Example(Page):
    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        self.name = self.cat.models["llama-3.1-8b"].name
        self._hidden = 1
        self.helper = len


def test_namespace_is_the_public_values(cat: Catalog) -> None:
    assert _Example.namespace_of(cat) == {"name": cat.models["llama-3.1-8b"].name}
    assert "llama-3.1-8b" in _Example.sources_of(cat)


def test_a_name_is_set_once(cat: Catalog) -> None:
    page = _Example(cat)
    page.extend({"other": "x"})
    assert page.namespace()["other"] == "x"
    with pytest.raises(ValueError, match="name named twice"):
        page.extend({"name": "again"})


def test_a_page_is_computed_once_per_catalog(cat: Catalog, tmp_path) -> None:
    import shutil

    from ..conftest import ROOT

    class Counted(Page):
        made = 0

        def __init__(self, cat: Catalog) -> None:
            super().__init__(cat)
            Counted.made += 1
            self.n = Counted.made

    first = Counted.of(cat)
    assert Counted.of(cat) is first and Counted.namespace_of(cat) == {"n": 1} and Counted.made == 1
    Counted.sources_of(cat)  # the sources list reads the same computation
    assert Counted.made == 1
    # another catalog (data/ edited: load() reads it anew) is another computation
    shutil.copytree(ROOT / "data", tmp_path / "data")
    other = load(tmp_path / "data")
    assert other is not cat and Counted.of(other).n == 2
