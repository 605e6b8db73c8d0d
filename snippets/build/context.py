"""The build context: everything one build knows, made in `on_config` and dropped when the build ends.

The `serving` plugin object lives as long as the `mkdocs` process (MkDocs keeps a plugin that has
`on_startup` across the rebuilds of `mkdocs serve`), so nothing a build computes is kept on it: the plugin
makes one `BuildContext` per build and drops it in `on_post_build` or `on_build_error`. No module of `snippets`
keeps state of its own, so a second build in the same process (a rebuild of `serve`, a test) starts from
nothing but its files.

What a context holds:

- `catalog`: data/ as this build loaded and validated it; what is computed from it once (the engine's records,
  each page model) is kept with it (`Catalog.derived`), so it goes with the context; so does the store of what
  depends on the engine's inputs alone (`snippets.data.results`), the one thing read from and written to the cache
  directory besides the notebooks, the sizing grid and the guard's scans;
- `pages`: the page cursor the `{{ }}` extension and the exec blocks share, and `states`, every converted
  page's figures, claims and errors, by its path under docs/;
- `blocks`: the exec blocks' runner (the catalog they see, their time limit, the shared-state check);
- `guard`: the rendered-text scans with the build's prose scanner (allowlist, the catalog's texts, memos; what it
  read in code's string literals and found in rendered text is kept in the cache directory, by content,
  `snippets.build.drift.Scanner`);
- `usage`: which pages show each model and accelerator (the reference pages' "used by" links);
- `notebooks`: the notebook pages, executed beside the build and cached in the build's cache directory;
- `sizing`: the sizing grid's searches at the latency target, run beside the build and cached there too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from snippets.build.blocks import Blocks
    from snippets.build.computed import Pages, PageState
    from snippets.build.guard import Guard
    from snippets.build.notebooks import Notebooks
    from snippets.build.pagecache import BuildPages
    from snippets.build.sizing import SizingTargets
    from snippets.data import Catalog
    from snippets.render.usage import Usage


@dataclass(frozen=True)
class Options:
    """The serving plugin's options (mkdocs.yml, `plugins: - serving: {...}`), as one build reads them."""

    block_timeout: int = 60
    """Seconds an exec block may run: a block that sleeps or loops stops the build, not CI."""
    cell_timeout: int = 120
    """Seconds a notebook cell may run (nbclient's `timeout`)."""
    notebooks: tuple[str, ...] = ("notebooks/*.py",)
    """Jupytext scripts under docs/ that are notebook pages: executed by the build and handed to mkdocs-jupyter."""
    execute: bool = True
    """Execute the notebooks (off: they are rendered as written, without outputs)."""
    cache_dir: str = ".cache/serving"
    """Where executed notebooks and the sizing grid's searches are kept, by content, relative to mkdocs.yml."""
    sizing_targets: str = "search"
    """The sizing grid's searches: `search`, `cached` (from the cache only) or `off` (`snippets.build.sizing`)."""


@dataclass
class BuildContext:
    """One build: its root (the folder of mkdocs.yml), options, catalog and everything computed from them."""

    root: Path
    options: Options
    catalog: Catalog
    pages: Pages
    blocks: Blocks
    guard: Guard
    usage: Usage
    notebooks: Notebooks
    sizing: SizingTargets
    states: dict[str, PageState] = field(default_factory=dict)
    site_errors: list[str] = field(default_factory=list)
    """Errors of what is not a page (mkdocs.yml's nav, the stylesheets), reported with the pages' in `on_env`."""
    kept: BuildPages | None = None
    """The pages earlier builds converted from the same source and inputs, and what this one converts anew
    (`snippets.build.pagecache`); None outside the plugin."""

    def release(self) -> None:
        """Let go of what the build computed, when it ends (`on_post_build`, `on_build_error`).

        The build's Markdown instances outlive it: markdown-exec 1.12 keeps every instance it converted a block
        for (a `functools.cache` on the instance, in `markdown_exec._internal.rendering`), and an instance holds
        the build's `{{ }}` extension (the page cursor) and its exec fences (the blocks' runner). Through them each
        build of `mkdocs serve` kept its page models, engine records and claims alive, some 290,000 objects a
        rebuild, which every later full garbage collection walked again. What those objects reach is dropped
        here, so only the cursor and the runner themselves, emptied, stay with the instances."""
        from snippets.build.blocks import SharedState
        from snippets.build.claims import ClaimChecker
        from snippets.build.computed import PageState

        self.catalog.derived.clear()
        self.pages.catalog = None
        self.pages.current = PageState()
        self.pages.claim_checker = ClaimChecker()
        self.pages.state_after_block = None
        self.blocks.shared = SharedState()
        self.states.clear()
        self.kept = None


def make_context(root: Path, docs_dir: Path, options: Options, catalog: Catalog, notebooks: Notebooks) -> BuildContext:
    """A build's context over `catalog`, loaded from `root`/data by the plugin, with the `notebooks` it started
    before loading data/."""
    from snippets.build import drift
    from snippets.build.blocks import Blocks
    from snippets.build.computed import Pages
    from snippets.build.guard import Guard
    from snippets.build.sizing import SizingTargets
    from snippets.render.usage import Usage

    pages = Pages(catalog=catalog)
    scanner = drift.Scanner(drift.data_text(catalog))
    scanner.load(root / options.cache_dir)  # what an earlier build read in the same code (its docstring)
    names = {("model", k): m.name for k, m in catalog.models.items()}
    names |= {("accelerator", k): a.name for k, a in catalog.accelerators.items()}
    return BuildContext(
        root=root, options=options, catalog=catalog, pages=pages,
        blocks=Blocks(pages, catalog, timeout=options.block_timeout),
        guard=Guard(scanner, [docs_dir / "includes"], root / "snippets" / "pages"),
        usage=Usage(names),
        notebooks=notebooks,
        sizing=SizingTargets(root, root / "data", root / options.cache_dir, mode=options.sizing_targets),
    )
