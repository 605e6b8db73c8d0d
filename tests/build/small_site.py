"""A small copy of the site, for a build test whose subject is one or two pages.

Every other page under docs/ is replaced by a stub: its title, and an empty element for each id the full build
gave its content, so the kept pages' links and anchors into it still resolve under mkdocs.yml's own `validation:`
(a strict build still fails on a broken link). mkdocs.yml, data/, snippets/ and the nav are the repository's; the
notebook is kept, or stubbed with execution off (no kernel). Such a build converts two pages instead of nineteen:
seconds instead of half a minute, and the wiring it proves (data, blocks, links, notebook into a strict build) is
the same.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

from ..conftest import Build

NOTEBOOK_STUB = "# %% [markdown]\n# # Sizing notebook\n"


def html_path(src: str) -> str:
    """Where MkDocs writes page `src` (a path under docs/), with its directory URLs."""
    stem = src.removesuffix(".md")
    return "index.html" if stem == "index" else f"{stem.removesuffix('/index')}/index.html"


def serving_option(root: Path, name: str, value: str) -> None:
    """Set one of the serving plugin's options in the copy's mkdocs.yml."""
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    if "  - serving:\n" not in text:
        raise AssertionError("mkdocs.yml no longer lists the serving plugin as '  - serving:'")
    config.write_text(text.replace("  - serving:\n", f"  - serving:\n      {name}: {value}\n", 1), encoding="utf-8")


def stub(src: str, source: str, built: Build) -> str:
    """Page `src` as a stub: the title of `source` and every id of its content in the full build `built`."""
    title = next((ln[2:].strip() for ln in source.splitlines() if ln.startswith("# ")), src)
    article = built.page(html_path(src)).select_one("article")
    assert article is not None, f"no <article> in the full build's page for {src}"
    ids = sorted({str(el["id"]) for el in article.find_all(id=True)})
    spans = "".join(f'<span id="{html.escape(i)}"></span>' for i in ids)
    return f"# {title}\n\n<div hidden>{spans}</div>\n"


def keep_only(root: Path, built: Build, keep: Iterable[str], *, notebook: bool = False) -> list[str]:
    """Stub every page of the copy at `root` but `keep` (paths under docs/), and the notebook unless `notebook`;
    return the stubbed pages."""
    docs, kept, stubbed = root / "docs", set(keep), []
    missing = kept - {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    assert not missing, missing
    for page in sorted(docs.rglob("*.md")):
        src = page.relative_to(docs).as_posix()
        if src.startswith("includes/") or src in kept:
            continue
        page.write_text(stub(src, page.read_text(encoding="utf-8"), built), encoding="utf-8")
        stubbed.append(src)
    if not notebook:
        for script in sorted((docs / "notebooks").glob("*.py")):
            script.write_text(NOTEBOOK_STUB, encoding="utf-8")
        serving_option(root, "execute", "false")
    return stubbed
