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


def test_no_class_in_snippets_intercepts_attribute_reads() -> None:
    """Sources come from lists the records carry, not from reads intercepted at run time: no `__getattribute__` (or
    `__getattr__`) is defined anywhere in snippets/, and no class is made at run time with `type(name, bases, ns)`."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "snippets"
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in ("__getattribute__",
                                                                                         "__getattr__"):
                found.append(f"{path.relative_to(root)}:{node.lineno} def {node.name}")
            elif isinstance(node, ast.Constant) and node.value in ("__getattribute__", "__getattr__"):
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.value!r}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
                  and len(node.args) == 3):
                found.append(f"{path.relative_to(root)}:{node.lineno} type(name, bases, namespace)")
    assert not found, found
    assert len(list(root.rglob("*.py"))) > 50  # the walk found the package
