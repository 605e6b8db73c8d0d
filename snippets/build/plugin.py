"""The `serving` MkDocs plugin: the whole build of the site.

Registered through the package's entry point (`pyproject.toml`, `[project.entry-points."mkdocs.plugins"]`) and
listed first under `plugins:` in mkdocs.yml, with its options (`ServingConfig`). MkDocs keeps one plugin object
for the whole `mkdocs` process (it has `on_startup`), so a build's state is not kept on it: each build makes
one `BuildContext` (`snippets.build.context`) in `on_config` and drops it in `on_post_build` or
`on_build_error`. No module of `snippets` keeps state: a second build in the process starts from its files.

Events, top to bottom in the order MkDocs sends them (each runs after the other plugins' handlers of the event):

- `on_startup`: whether this is `mkdocs serve`;
- `on_config`: import again any `snippets` module whose file changed since the last build of this process (an edit
  while `serve` runs); date the build by the last commit; start executing the notebooks (`snippets.build.notebooks`:
  under `serve`, in the kernels the last build started for them); load and validate all of data/ (a data error stops
  the build before any page); take what the last build of the same engine inputs kept (the bands, the fit:
  `snippets.data.results`); make the build's context (its guard takes what earlier builds scanned in the same code and
  text, `snippets.build.drift`); give `abbr` the glossary, register the `{{ }}` Markdown extension, run the python
  exec blocks through the build (`snippets.build.blocks`);
- `on_files`: each notebook script replaced by its executed notebook, converted last;
- `on_pre_page`: a notebook page waits for its notebook, before any other plugin's handler reads it (mkdocs-jupyter
  reads the `.ipynb` in its own `on_pre_page`);
- `on_page_read_source`: a notebook page's source is its script;
- `on_page_markdown`, `on_page_content`: the page's computed values, claims and guards
  (`snippets.build.computed`, `snippets.build.guard`); the names each page shows (`snippets.render.usage`);
- `on_env`: any error on any page stops the build here, before anything is written;
- `on_post_page`: the reference pages' "used by" links;
- `on_post_build`: `numbers.json`, the sizing grid's records and the engine's catalog (`reference/`), the
  engine's modules for the calculator (`assets/calculator/py/`); what is kept by content for the next build (the
  engine's results, the guard's scans) written to the cache directory; under `serve`, a kernel started for each
  notebook, for the next build; the context is dropped;
- `on_build_error`: no site is left behind (unless serving); the context is dropped;
- `on_shutdown`: the kernels started for a next build that will not come are shut down.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority

from snippets.build.notebooks import code_stamp

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    from snippets.build.context import BuildContext, Options
    from snippets.build.notebooks import Kernels, Notebooks
    from snippets.build.pagecache import PageCache
    from snippets.data.loader import Parsed
    from snippets.pages.sizing_records import Written

LAST = -100
"""Priority of the page handlers: after the other plugins' (markdown-exec's fences, mkdocs-jupyter's files)."""
FIRST = 100
"""Priority of `on_pre_page`: before the other plugins' (mkdocs-jupyter reads the executed notebook there)."""
CALCULATOR_DIR = Path("assets") / "calculator" / "py"
EXEC_LANGUAGES = ("python", "py")
"""The fences whose blocks the build runs (markdown-exec's other languages are not used on this site)."""
log = logging.getLogger("mkdocs.plugins.serving")


class ServingConfig(base.Config):  # type: ignore[no-untyped-call]  # mkdocs' __init_subclass__ is unannotated
    """The build's options (mkdocs.yml: `plugins: - serving: {block_timeout: 60, ...}`). What the build reads
    besides them is data/, docs/ and snippets/."""

    block_timeout = c.Type(int, default=60)
    """Seconds an exec block may run."""
    cell_timeout = c.Type(int, default=120)
    """Seconds a notebook cell may run."""
    notebooks = c.ListOfItems(c.Type(str), default=["notebooks/*.py"])
    """Jupytext scripts under docs/ that are notebook pages (mkdocs-jupyter converts their executed notebooks)."""
    execute = c.Type(bool, default=True)
    """Execute the notebooks; off, they are rendered without outputs."""
    cache_dir = c.Type(str, default=".cache/serving")
    """Executed notebooks and the sizing grid's searches, by content, relative to mkdocs.yml."""
    glossary = c.Type(str, default="includes/abbreviations.md")
    """The abbreviations (`*[HBM]: ...` lines) under docs/ that Markdown's `abbr` gives every page."""
    sizing_targets = c.Choice(("search", "cached", "off"), default="search")
    """The sizing grid's searches at the latency target (a thousand, minutes of CPU on a cold cache): `search` them
    (read from the cache where data/ and the code are unchanged), take them only from the cache (`cached`), or not
    (`off`); the sizing page then says they were not searched. `mkdocs serve` searches on its first build and
    takes them from the cache on a rebuild, so an edit shows at once."""

    def options(self) -> Options:
        from snippets.build.context import Options

        return Options(block_timeout=self.block_timeout, cell_timeout=self.cell_timeout,
                       notebooks=tuple(self.notebooks), execute=self.execute, cache_dir=self.cache_dir,
                       sizing_targets=self.sizing_targets)


class ServingPlugin(BasePlugin[ServingConfig]):  # type: ignore[no-untyped-call]  # as above
    supports_multiple_instances = False

    def __init__(self) -> None:
        super().__init__()
        self.serving = False
        self.context: BuildContext | None = None
        """The build under way (None between builds)."""
        self.site_dir: Path | None = None
        """The site directory of the build under way, removed if it fails: MkDocs sends `on_build_error` after
        `on_post_build` too (a warning under --strict), when the context is gone."""
        self.code_stamp: tuple[Path, str] | None = None
        """The root of the last build and `code_stamp` of its snippets/: `on_config` imports an edited file anew."""
        self.gc_thresholds: tuple[int, int, int] | None = None
        """The garbage collector's thresholds as the build found them, while it runs (`defer_full_collections`)."""
        self.late_collection: LateCollection | None = None
        """Under `mkdocs serve`, the last build's full collection, run a moment after it ended (`LateCollection`)."""
        self.parsed: Parsed | None = None
        """data/'s files as the last build parsed and validated them (`snippets.data.loader.Parsed`): a rebuild
        parses only the files that changed."""
        self.page_cache: PageCache | None = None
        """The pages converted by the last builds, with what each read (`snippets.build.pagecache`): a rebuild
        converts only the pages whose source or inputs changed."""
        self.kernels: Kernels | None = None
        """Under `mkdocs serve`, the notebooks' kernels started as a build ends for the next one to take
        (`snippets.build.notebooks.Kernels`); shut down in `on_shutdown`."""
        self.records_written: Written | None = None
        """The sizing records the last build wrote and their text (`sizing_records.write_records`): a rebuild whose
        records are equal writes that text again."""

    def ctx(self) -> BuildContext:
        if self.context is None:
            raise PluginError("the serving plugin's on_config did not run before this event")
        return self.context

    def on_startup(self, *, command: Literal["build", "gh-deploy", "serve"], dirty: bool) -> None:
        self.serving = command == "serve"
        if self.serving:
            from snippets.build.notebooks import Kernels

            self.kernels = Kernels()

    def on_shutdown(self) -> None:
        """`mkdocs serve` stops (or a `build` ends): no kernel started ahead outlives the process's builds, and no full
        collection is left waiting. MkDocs keeps the plugin object for the process: the next build is served only if
        its `on_startup` says so."""
        self.collect_late_now()
        if self.kernels is not None:
            self.kernels.close()
        self.serving = False

    # ------------------------------------------------------------------ the build

    @event_priority(LAST)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.collect_late_now()  # an edit saved before the last build's collection ran: it runs first
        if self.gc_thresholds is None:
            self.gc_thresholds = defer_full_collections()
        try:
            return self._configure(config)
        except BaseException:
            self.end_collections()  # MkDocs sends on_build_error too; a caller that does not leaves nothing deferred
            raise

    def _configure(self, config: MkDocsConfig) -> MkDocsConfig:
        root = Path(config.config_file_path).resolve().parent
        self.site_dir = None if getattr(config, "dirty", False) else Path(config.site_dir)
        rebuild = self.code_stamp is not None  # a build of this process came before: `serve` rebuilds
        last = self.code_stamp
        self.code_stamp = reimport_edited_code(root, last)
        if self.code_stamp != last:  # what was kept across builds was made by other code, or for another root
            self.records_written = None
            self.parsed = None
            self.page_cache = None
        source_date_epoch(root)
        options = self.config.options()
        from snippets.build.notebooks import Notebooks

        # the notebooks first: their cells run in a kernel of their own while this build loads data/ and converts
        # the other pages (a rebuild under `serve` takes a kernel started for it as the last build ended)
        notebooks = Notebooks(root, Path(config.docs_dir), root / options.cache_dir, list(options.notebooks),
                              execute=options.execute, timeout=options.cell_timeout, kernels=self.kernels)
        notebooks.start()
        try:
            return self._load(config, root, options, notebooks, rebuild)
        except BaseException:
            if self.context is None:  # on_build_error closes the notebooks of a build that has its context
                notebooks.close()
                if self.kernels is not None:
                    notebooks.prepare(self.kernels)
            raise

    def _load(self, config: MkDocsConfig, root: Path, options: Options, notebooks: Notebooks,
              rebuild: bool) -> MkDocsConfig:
        """The rest of `on_config`: data/ loaded and validated, the build's context made, the Markdown extensions
        registered, the sizing grid's searches started."""
        from snippets import data
        from snippets.build import computed
        from snippets.build.context import make_context
        from snippets.data.loader import Parsed

        if self.parsed is None:
            self.parsed = Parsed()
        try:
            cat = data.load(root / "data", self.parsed)
        except data.DataError as exc:
            raise PluginError(
                f"{exc}\nHint: the fields, units and directions each table accepts are the pydantic models in "
                "snippets/data/schema/ (a module per data file); run "
                "`python -c 'import snippets.data as d; d.load()'` to check data/ alone"
            ) from None
        from snippets.data.results import EngineResults

        # what the engine computes from its inputs, kept by their content: a data edit that does not reach the
        # engine reuses the last build's (snippets.data.results); written back in on_post_build
        cat.derived[EngineResults] = EngineResults.load(cat, root, root / options.cache_dir)
        if self.serving and rebuild and options.sizing_targets == "search":
            options = replace(options, sizing_targets="cached")  # a rebuild of `serve`: an edit shows at once
        ctx = self.context = make_context(root, Path(config.docs_dir), options, cat, notebooks)
        from snippets.build.pagecache import BuildPages, PageCache, build_key, table_keys

        if self.page_cache is None:
            self.page_cache = PageCache()
        ctx.kept = BuildPages(self.page_cache, build_key(root, Path(config.docs_dir), Path(config.config_file_path),
                                                         replace(options, sizing_targets=""), ctx.guard.scanner.data,
                                                         config.site_url),
                              table_keys(root / "data", data.FILES), cat.read_log)
        ctx.site_errors.extend(site_errors(config, ctx))
        self._glossary(config)
        # typed list[str], but MkDocs hands the list to Python-Markdown, which takes Extension instances too
        config.markdown_extensions.append(computed.ComputedExtension(ctx.pages))  # type: ignore[arg-type]
        self._exec_fences(config)
        from snippets.pages.reference_sizing import target_queries

        ctx.sizing.start(lambda: target_queries(cat))
        return config

    def _glossary(self, config: MkDocsConfig) -> None:
        """The glossary, as Python-Markdown's `abbr` takes it (its `glossary` option): every Markdown conversion of
        the build marks the terms, exec blocks' output included. Read with abbr's own definition pattern."""
        from markdown.extensions.abbr import AbbrBlockprocessor

        path = Path(config.docs_dir) / self.config.glossary
        if "abbr" not in config.markdown_extensions or not path.is_file():
            return
        terms = {m["abbr"]: m["title"] for m in AbbrBlockprocessor.RE.finditer(path.read_text(encoding="utf-8"))}
        config.mdx_configs.setdefault("abbr", {})["glossary"] = terms

    def _exec_fences(self, config: MkDocsConfig) -> None:
        """Run the python exec blocks through the build: markdown-exec's plugin lists its fences in superfences'
        `custom_fences` (with its public `validator` and `formatter`); the python/py ones get the build's
        `Blocks.fence` as their format, which formats with markdown-exec's public `base_format`."""
        import markdown_exec

        fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
        for i, fence in enumerate(fences):
            if fence.get("name") in EXEC_LANGUAGES and fence.get("format") is markdown_exec.formatter:
                fences[i] = {**fence, "format": self.ctx().blocks.fence}

    @event_priority(LAST)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        return self.ctx().notebooks.files(files, config)

    @event_priority(FIRST)
    def on_pre_page(self, page: Page, *, config: MkDocsConfig, files: Files) -> Page:
        """A notebook page waits here until its notebook is written: mkdocs-jupyter's `on_pre_page` reads it (its
        cache key) before the page's source is read. Without the wait, a site whose other pages convert faster than
        the notebook executes fails with the notebook not found."""
        self.ctx().notebooks.wait(page.file.src_uri)
        return page

    def on_page_read_source(self, *, page: Page, config: MkDocsConfig) -> str | None:
        return self.ctx().notebooks.source(page.file.src_uri)

    @event_priority(LAST)
    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        from snippets.build import drift
        from snippets.build.sizing import MODELS as SIZING_MODELS

        ctx = self.ctx()
        notebook = page.file.src_uri in ctx.notebooks.found
        # the whole source, front matter included, so reported line numbers match the file
        source = markdown if notebook else page.file.content_string
        model = page.meta.get("model")
        src = page.file.src_uri
        if model in SIZING_MODELS:  # the grid's searches, waited for outside the blocks' time limit
            self._sizing_ready(ctx)
        if ctx.kept is not None and not notebook:
            kept = ctx.kept.lookup(src, source, files)  # else what the page reads from now on is recorded
            if kept is not None:  # converted by an earlier build from the same source and inputs: its HTML is kept
                ctx.states[src] = ctx.kept.state(src, kept, source, model if isinstance(model, str) else None)
                self._count_words(src, source)
                return ""
        state = ctx.pages.begin(src, source, model if isinstance(model, str) else None)
        ctx.states[src] = state
        if notebook:  # a jupytext script: its prose is its Markdown cells; it ran in the notebook's thread
            state.errors.extend(ctx.notebooks.errors(page.file.src_uri))
            source = drift.notebook_markdown(source)
        state.errors.extend(ctx.guard.source_errors(state, source, page.meta))
        self._count_words(src, source)
        return markdown

    @staticmethod
    def _sizing_ready(ctx: BuildContext) -> None:
        """The grid's searches handed to the page models (`SizingTargets.ready`), and keyed for the pages kept."""
        from snippets.pages.reference_sizing import TARGETS

        ctx.sizing.ready(ctx.catalog)
        state = ctx.sizing.state()
        if ctx.kept is not None and state is not None:
            ctx.kept.tables[TARGETS] = state

    @staticmethod
    def _count_words(src: str, source: str) -> None:
        from snippets.build import drift

        if words := drift.count_words(source):  # a warning, not an error: "twice" is often plain English
            log.info("docs/%s: count words, each to compute if it states a quantity from data: %s", src,
                     ", ".join(f"{w.line} {w.token!r}" for w in words))

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        from snippets.build import computed, drift, guard

        ctx = self.ctx()
        src = page.file.src_uri
        if ctx.kept is not None and src in ctx.kept.replayed:
            html = ctx.kept.replay(page, files)
            shown_before = ctx.kept.replayed[src].shown
            if shown_before is not None:
                ctx.usage.record(page.url, page.title or page.url, shown_before)
            return html
        state = ctx.states[src]
        notebook = src in ctx.notebooks.found
        if notebook:  # the notebook's cells are numbered in order, as jupytext's random ids were
            html = computed.stable_cell_ids(html)
            html = drop_inlined_css_list(html)
            state.errors.extend(ctx.guard.notebook_text_errors(state, html))
            state.errors.extend(guard.notebook_link_errors(state, html, page.url, link_targets(files, page),
                                                           guard.anchor_ids(html)))
        # one parse of the page serves every reading of it, in this order: each takes away what it has read
        root = drift.fragment(html)
        if root is not None:
            from snippets.build import links

            state.errors.extend(links.page_link_errors(state, root))
            if not notebook:  # a notebook carries Jupyter's CSS inline, with icons as escapes
                state.errors.extend(links.page_style_errors(state, root, ctx.guard.scanner))
        shown = root.text_content() if root is not None else ""  # type: ignore[attr-defined]
        figures, claims, problems = computed.collect_tree(root) if root is not None else ([], [], [])
        if not notebook and root is not None:
            state.errors.extend(ctx.guard.block_output_errors(state, root))
            state.errors.extend(ctx.guard.page_text_errors(state, root))
            html = guard.unwrap_block_outputs(html)
            if f'class="{drift.BLOCK_OUTPUT_CLASS}"' in html:
                state.errors.append(f"docs/{state.src}: a block's output wrapper ({drift.BLOCK_OUTPUT_CLASS!r}) "
                                    "reached the page changed, so it was not removed: the build cannot publish it")
        state.errors.extend(f"docs/{state.src}: {p}" for p in problems)
        state.figures = figures
        # keep the processor's record of each claim (it knows the basis), in page order
        state.claims = [c for c in state.claims if any(c["claim"] == h["claim"] for h in claims)]
        # the names this page shows, for the reference pages' "used by" links
        recorded = shown if not page.url.startswith("reference/") and shown.strip() else None
        if recorded is not None:
            ctx.usage.record(page.url, page.title or page.url, recorded)
        if ctx.kept is not None:
            ctx.kept.converted(page, html, state, recorded, files)
        return html

    @event_priority(LAST)
    def on_env(self, env: Environment, *, config: MkDocsConfig, files: Files) -> Environment:
        """Every page is converted and none is written yet: stop here if any page had an error.

        Reporting at this point lists the errors of all pages at once, and publishes nothing.
        """
        ctx = self.ctx()
        opaque = {src: sorted({c.split(" (", 1)[0] for c in st.opaque_claims})
                  for src, st in ctx.states.items() if st.opaque_claims}
        if opaque:  # not refused: the checker could not find their fmt.claim call in its file
            log.info("%d claims whose call the build could not read again (snippets.build.claims): %s",
                     sum(map(len, opaque.values())), "; ".join(f"docs/{k}: {', '.join(v)}" for k, v in opaque.items()))
        errors = one_per_cause([*ctx.site_errors, *(e for st in ctx.states.values() for e in st.errors)])
        if errors:
            raise PluginError(f"{len(errors)} error(s); nothing was written:\n" + "\n".join(errors))
        # MkDocs makes a new Jinja environment every build, so Material's templates were compiled
        # anew on every `mkdocs serve` rebuild; Jinja's bytecode cache (keyed on each template's
        # source) keeps them compiled in .cache/ instead.
        import jinja2

        cache = ctx.root / ".cache" / "jinja"
        cache.mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(cache))
        return env

    @event_priority(LAST)
    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        if 'class="sa-used-by"' not in output:
            return output
        return self.ctx().usage.fill(output, page.url)

    @event_priority(LAST)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        from snippets.build.computed import numbers_json
        from snippets.data.export import engine_catalog
        from snippets.data.results import results_of
        from snippets.engine.codec import encode
        from snippets.pages.sizing_records import Written, write_records

        ctx, self.context = self.ctx(), None
        try:
            ctx.notebooks.close()
            site = Path(config.site_dir)
            (site / "numbers.json").write_text(numbers_json(ctx.states), encoding="utf-8")
            out = site / "reference"
            self._sizing_ready(ctx)
            if self.records_written is None:
                self.records_written = Written()
            write_records(ctx.catalog, out, targets=True, last=self.records_written,
                          tables=None if ctx.kept is None else ctx.kept.tables)
            # the engine's records as JSON (`codec.encode`), in data/'s order, not sorted: an accelerator's node is
            # the first one built from it (node_of)
            (out / "engine-catalog.json").write_text(json.dumps(encode(engine_catalog(ctx.catalog)), indent=1) + "\n",
                                                     encoding="utf-8")
            write_engine_sources(ctx.root, site / CALCULATOR_DIR)
            results_of(ctx.catalog).save(ctx.root / ctx.options.cache_dir)
            ctx.guard.scanner.save(ctx.root / ctx.options.cache_dir)
            if ctx.kept is not None:
                ctx.kept.keep()
        finally:
            self.code_stamp = (ctx.root, code_stamp(ctx.root))
            if self.kernels is not None:  # serving: the next build's kernels boot while the reader looks
                ctx.notebooks.prepare(self.kernels)
            ctx.release()
            self.end_collections()

    def end_collections(self) -> None:
        """The build is over: the collector's thresholds as they were, and the build's garbage collected once
        (`restore_full_collections`); nothing if they are not deferred. Under `mkdocs serve` that runs a moment
        later (`LateCollection`), off the path from the saved edit to the reloaded page."""
        if self.gc_thresholds is None:
            return
        was, self.gc_thresholds = self.gc_thresholds, None
        if self.serving:
            self.collect_late_now()
            self.late_collection = LateCollection(was, LATE_COLLECTION_S)
        else:
            restore_full_collections(was)

    def collect_late_now(self) -> None:
        """The last build's full collection, if it still waits, runs now (the next build, or the process's end)."""
        late, self.late_collection = self.late_collection, None
        if late is not None:
            late.now()

    def on_build_error(self, *, error: Exception) -> None:
        # a build that fails after its pages were kept (a warning under --strict comes after on_post_build) keeps
        # none: a kept page does not repeat what MkDocs warned while converting it
        self.page_cache = None
        ctx, self.context = self.context, None
        if ctx is not None:
            ctx.notebooks.close()  # no kernel this build started outlives it
            ctx.sizing.close()  # nor a worker searching the sizing grid
            self.code_stamp = (ctx.root, code_stamp(ctx.root))
            if self.kernels is not None:  # serving: the build that follows the fix takes them
                ctx.notebooks.prepare(self.kernels)
            ctx.release()
        self.end_collections()
        # a failed build (an error, or a warning under --strict, raised after every page was written)
        # leaves no complete-looking site behind: `mkdocs build` cleaned the directory before writing
        if self.site_dir is not None and not self.serving:
            shutil.rmtree(self.site_dir, ignore_errors=True)


# ---------------------------------------------------------------------- helpers


def site_errors(config: MkDocsConfig, ctx: BuildContext) -> list[str]:
    """What a reader sees or loads outside the pages: the nav's titles, the stylesheets' generated content and
    `url()`s, the extra scripts and stylesheets (`snippets.build.links`)."""
    from snippets.build import links

    text = Path(config.config_file_path).read_text(encoding="utf-8")
    errors = links.nav_errors(config.nav, text, ctx.guard.scanner)
    for key in ("site_name", "site_description"):  # the title of every page, and its meta description
        value = config.get(key)
        for lit in ctx.guard.scanner.typed_quantities(f"{value}\n") if isinstance(value, str) else []:
            line = next((i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(f"{key}:")), 0)
            errors.append(f"mkdocs.yml:{line}: hand-typed quantity {lit.token!r} in {key}: a reader sees it on every "
                          "page; if it is a name, add it to snippets/allowed_names.txt")
    errors += links.config_asset_errors(config.extra_css, config.extra_javascript)
    docs = Path(config.docs_dir)
    for css in config.extra_css:
        path = docs / str(css)
        if path.is_file():
            errors += links.stylesheet_errors(path, f"docs/{css}", ctx.guard.scanner)
    return errors


_CAUSE = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt): [^;]*?\(raised at snippets/[^)]+\)")
"""An exception as `computed.failure` writes it: its type, its message and the line under snippets/ that raised."""
_MISSING_ENTRY = re.compile(r"KeyError: (?:no entry )?'(?P<id>[^']*)'")
"""A lookup of a data entry that is not there, as a page model, a block or a notebook cell reports it."""
_RAISED = re.compile(r"(?:a Python block|a notebook cell) raised (?P<type>\w+)|a traceback is published")


def one_per_cause(errors: list[str]) -> list[str]:
    """`errors` with every error that repeats an earlier one's cause folded into the first: one data slip is one
    message, which lists the other places it stopped.

    One cause is one exception raised at one line of snippets/, or one missing data entry wherever it was looked
    up; on a page where an entry was missing, what its later blocks and cells raise (an empty table, an index out
    of range) follows from it and is listed with it too."""
    first: dict[str, int] = {}
    slipped: dict[str, int] = {}  # page -> the message of the missing entry that stopped it
    also: dict[int, list[str]] = {}
    out: list[str] = []
    for err in errors:
        place = err.split(": ", 1)[0]
        page = place.split(":", 1)[0]
        slip = _MISSING_ENTRY.search(err)
        cause = _CAUSE.search(err)
        key = f"entry {slip.group('id')}" if slip else cause.group(0) if cause else None
        if key is None:
            raised = _RAISED.search(err)
            if raised is not None and page in slipped:
                also.setdefault(slipped[page], []).append(f"{place} ({raised.group('type') or 'a traceback'})")
            else:
                out.append(err)
            continue
        at = first.get(key)
        if at is None:
            at = first[key] = len(out)
            out.append(err)
        else:
            also.setdefault(at, []).append(place)
        if slip:
            slipped.setdefault(page, at)
    for i, places in also.items():
        out[i] += f" [the same cause also stopped: {', '.join(dict.fromkeys(places))}]"
    return out



FULL_COLLECTION_DEFERRED = 1_000_000
"""The garbage collector's third threshold during a build: no full collection before the build's end."""


def defer_full_collections() -> tuple[int, int, int]:
    """Defer CPython's full garbage collections to the end of the build; the thresholds as they were.

    A build makes some 300,000 objects that live until it ends (page models, engine records, claims); CPython runs
    a full collection each time the long-lived objects grow by a quarter, and each one walks every object of the
    process (the modules, MkDocs, the build so far): five or six a build, more than a second of a `serve` rebuild.
    The young generations are still collected as before; the build's cycles are collected once, at its end
    (`restore_full_collections`). Only when the collector runs changes, not what it collects."""
    import gc

    was = gc.get_threshold()
    gc.set_threshold(was[0], was[1], max(was[2], FULL_COLLECTION_DEFERRED))
    return was


def restore_full_collections(was: tuple[int, int, int]) -> None:
    """The thresholds `defer_full_collections` found, and one full collection of what the build left."""
    import gc

    gc.set_threshold(*was)
    gc.collect()


LATE_COLLECTION_S = 1.0
"""Under `mkdocs serve`, how long after a build its full collection waits: the reader's page has reloaded by then."""


class LateCollection:
    """A build's full garbage collection (`restore_full_collections`), run `delay` seconds after the build in a
    thread of its own, or at once (`now`) when the next build or the process's end comes first; once either way.

    The collection takes about a tenth of a second after a rebuild: under `mkdocs serve`, `on_post_build` ran it
    before the reload the contributor waits for. Until it runs the thresholds stay deferred; the collector's work is
    the same, only its moment moves."""

    def __init__(self, was: tuple[int, int, int], delay: float) -> None:
        self.was = was
        self.ran = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(delay, self.run)
        self.timer.daemon = True
        self.timer.start()

    def run(self) -> None:
        with self.lock:
            if not self.ran:
                self.ran = True
                restore_full_collections(self.was)

    def now(self) -> None:
        self.timer.cancel()
        self.run()


def reimport_edited_code(root: Path, last: tuple[Path, str] | None) -> tuple[Path, str]:
    """`root` and its code's stamp now. If the last build of this process was of the same root and its code has
    changed since (an edit while `mkdocs serve` runs), the `snippets` modules are removed from `sys.modules`, so
    this build imports every edit under snippets/.

    No module keeps state, so nothing else is carried between builds: this only brings edited code in. Every
    module goes, not only the edited ones, since the others hold objects (classes, functions) of the old ones."""
    now = code_stamp(root)
    if last is not None and last[0] == root and last[1] != now:
        for name in [m for m in sys.modules if m == "snippets" or m.startswith("snippets.")]:
            del sys.modules[name]
    return root, now


def source_date_epoch(root: Path) -> None:
    """Date the build by the last commit unless SOURCE_DATE_EPOCH is set: same commit, same bytes."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root, capture_output=True,  # noqa: S607
                             text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    if out.isdigit():
        os.environ["SOURCE_DATE_EPOCH"] = out


_INLINED_CSS_LIST = re.compile(r"\s*<style>\s*\['.*?'\]\s*</style>\s*$", re.S)


def drop_inlined_css_list(html_text: str) -> str:
    """A converted `.ipynb` without the `<style>` mkdocs-jupyter 0.26 appends to it: the Python list of the
    exporter's CSS written as text (`f"<style>{resources['inlining']['css']}</style>"`), which is not CSS; the
    page already carries that CSS in its own `<style>` elements."""
    return _INLINED_CSS_LIST.sub("\n", html_text) if html_text.rstrip().endswith("</style>") else html_text


def link_targets(files: Files, page: Page) -> dict[str, set[str] | None]:
    """Every URL of the site, with its page's anchor ids where MkDocs has them (notebooks are converted
    last, so every Markdown page has been rendered by then)."""
    out: dict[str, set[str] | None] = {}
    for f in files:
        url = f.url.removeprefix("./")
        anchors = getattr(f.page, "present_anchor_ids", None) if f.page is not None else None
        out[url] = set(anchors) if anchors is not None else None
        out.setdefault(f.dest_uri, None)
    return out


def engine_sources(root: Path) -> list[Path]:
    """The modules the calculator's browser imports: the package's (import-free) __init__ and the engine,
    standard library only."""
    return [root / "snippets" / "__init__.py", *sorted((root / "snippets" / "engine").glob("*.py"))]


def write_engine_sources(root: Path, out: Path) -> None:
    """The engine's modules, byte for byte, for the calculator page ("Size your deployment"), which runs
    `snippets.engine` in the reader's browser with Pyodide; with a manifest (path, bytes, sha256) its
    script reads to write them into Pyodide's filesystem. The catalog it loads is
    reference/engine-catalog.json."""
    files: list[dict[str, Any]] = []
    for src in engine_sources(root):
        rel = src.relative_to(root).as_posix()
        data = src.read_bytes()
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        files.append({"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    (out / "manifest.json").write_text(json.dumps({"files": files}, indent=1) + "\n", encoding="utf-8")
