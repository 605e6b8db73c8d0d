"""Every file, folder, module and function the pages name in a code span exists: a page that points a reader at
`snippets/pages/hbm.py` after the model became the package `snippets/pages/hbm/`, or at `snippets/params.py` after
it moved into the engine, sends them nowhere (the build runs the code blocks, but nothing else reads the spans)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
SPAN = re.compile(r"`([^`]+)`")
PATH = re.compile(r"(?<![\w./-])((?:snippets|data|docs|tests|scripts)/[\w./-]*\w/?)")
DOTTED = re.compile(r"(?<![\w./-])(snippets(?:\.\w+)+)")


def _prose(text: str) -> str:
    """The text without its fenced blocks (the build runs those), indented ones (in an admonition) included."""
    kept, fence = [], ""
    for line in text.splitlines():
        mark = line.strip()[:3]
        if fence:
            fence = "" if mark == fence else fence
        elif mark in ("```", "~~~"):
            fence = mark
        else:
            kept.append(line)
    return "\n".join(kept)


def _spans(page: Path) -> list[str]:
    """The page's inline code spans, outside its fenced blocks."""
    return [" ".join(m.group(1).split()) for m in SPAN.finditer(_prose(page.read_text(encoding="utf-8")))]


def _resolves(dotted: str) -> bool:
    """An importable module, followed by attributes of it (a class, a function, a method)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def named(page: Path) -> tuple[list[str], list[str]]:
    """The paths and the dotted names the page's code spans hold."""
    paths, dotted = [], []
    for span in _spans(page):
        if span.startswith(("python -m", "pip ", "nox ", "python3 ")):
            continue  # a command: its module is checked by running it, elsewhere
        paths += PATH.findall(span)
        dotted += DOTTED.findall(span)
    return paths, dotted


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_every_code_path_a_page_names_exists(page: Path) -> None:
    paths, dotted = named(page)
    missing = [p for p in paths if not (ROOT / p.rstrip("/")).exists()]
    unresolved = [d for d in dotted if not _resolves(d)]
    assert not missing and not unresolved, f"{page.name}: no such path {missing}, no such name {unresolved}"


def test_the_scan_finds_what_it_checks(tmp_path: Path) -> None:
    """The scan reads wrapped spans and both kinds of name, skips fenced blocks, and a stale name fails it."""
    page = tmp_path / "page.md"
    page.write_text("Computed by `snippets/pages/hbm.py` and `snippets.engine.serving.predict`, from\n"
                    "`data/models.yaml`; `snippets.engine.search.nowhere` and a span that\n`wraps snippets/params.py`.\n"
                    "```python\nfrom snippets.not_there import x\n```\n"
                    "    ```python\n    print(`snippets.nor_here`)\n    ```\n", encoding="utf-8")
    paths, dotted = named(page)
    assert paths == ["snippets/pages/hbm.py", "data/models.yaml", "snippets/params.py"]
    assert dotted == ["snippets.engine.serving.predict", "snippets.engine.search.nowhere"]
    assert [_resolves(d) for d in dotted] == [True, False]
    assert [(ROOT / p).exists() for p in paths] == [False, True, False]
