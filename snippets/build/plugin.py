"""The `serving` MkDocs plugin: the whole build of the site, one object per build.

Registered through the package's entry point (`pyproject.toml`, `[project.entry-points."mkdocs.plugins"]`)
and listed first under `plugins:` in mkdocs.yml. MkDocs creates the plugin as it reads mkdocs.yml, so
`mkdocs serve` gets a new one for every rebuild: everything a build knows is an attribute of the plugin
(the pages converted, the notebook cache paths, the usage of names); what must outlive a rebuild (the
notebook worker) is the one object of `snippets.build.notebooks`.

Events, in the order MkDocs sends them (each runs after the other plugins' handlers of the event, as the
hooks it replaces did):

- created (`__init__`): start the notebook worker and defer nbconvert's import (`snippets.build.notebooks`);
- `on_config`: date the build by the last commit; validate all of `data/` (a data error stops the build
  before any page); register the computed-values Markdown extension; key mkdocs-jupyter's cache on data/
  and snippets/; send the notebooks to execute to the worker;
- `on_files`: notebooks last, so the other pages are converted while their kernel runs;
- `on_page_markdown`, `on_page_content`: the page's computed values, claims and guards
  (`snippets.build.computed`, `snippets.build.guard`); the names each page shows (`snippets.render.usage`);
- `on_env`: any error on any page stops the build here, before anything is written;
- `on_page_context` (Material's search plugin): reads each page with its search-excluded elements set aside
  (`snippets.build.aside`);
- `on_post_page`: those elements back in place; the reference pages' "used by" links;
- `on_post_build`: `numbers.json`, the sizing grid's records and the engine's catalog (`reference/`),
  the engine's modules for the calculator (`assets/calculator/py/`);
- after every build, built or failed: the `snippets` modules are dropped from `sys.modules`, so the next
  build of `mkdocs serve` imports an edit under snippets/ (this module included).
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
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs.config import base
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority

from snippets.build import notebooks

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    from snippets.build.computed import ExecWarningCatcher, Pages, PageState
    from snippets.render.usage import Usage

LAST = -100
"""Priority of every event handler: after the other plugins' (mkdocs-jupyter's files, markdown-exec's fences)."""
KEPT = ("snippets", "snippets.build", "snippets.build.notebooks")
"""Modules kept between the builds of `mkdocs serve`: the worker's. Nothing in them imports the others."""
NB_OPTIONS = ("kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
              "highlight_extra_classes", "include_requirejs", "custom_mathjax_url")
"""mkdocs-jupyter's options that its `nb2html` takes: the worker converts with the same."""
CALCULATOR_DIR = Path("assets") / "calculator" / "py"
log = logging.getLogger("mkdocs.plugins.serving")


class ServingConfig(base.Config):  # type: ignore[no-untyped-call]  # mkdocs' __init_subclass__ is unannotated
    """No options: what the build reads is `data/`, `docs/` and `snippets/`."""


class ServingPlugin(BasePlugin[ServingConfig]):  # type: ignore[no-untyped-call]  # as above
    supports_multiple_instances = False

    def __init__(self) -> None:
        super().__init__()
        for key, value in notebooks.WORKER_ENV.items():
            os.environ.setdefault(key, value)
        notebooks.defer(notebooks.DEFERRED)
        self.worker = notebooks.worker()
        self.worker.start()
        self.root = Path.cwd()
        self.pages: dict[str, PageState] = {}
        self.cursor: Pages | None = None
        self.catcher: ExecWarningCatcher | None = None
        self.usage: Usage | None = None
        self.site_dir: Path | None = None
        """Removed if the build fails (not when serving, nor for a dirty build)."""
        self.cache_paths: dict[str, Path] = {}
        self.notebooks_running: list[str] = []
        self.aside: dict[str, list[str]] = {}
        """By page URL: the search-excluded elements set aside while search reads the page (`snippets.build.aside`)."""

    # ------------------------------------------------------------------ once per `mkdocs serve`

    def on_startup(self, *, command: str, dirty: bool) -> None:
        # called once, on the first build's plugin, before it. Serving: keep the notebook worker between
        # rebuilds, and start it now, so its imports are done before the first edit needs it.
        if command == "serve":
            self.worker.serving = True
            self.worker.start()

    def on_shutdown(self) -> None:
        self.worker.close()

    # ------------------------------------------------------------------ the build

    @event_priority(LAST)
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        from snippets import data
        from snippets.build import computed, drift, guard

        self.root = Path(config.config_file_path).resolve().parent
        self.site_dir = None if getattr(config, "dirty", False) else Path(config.site_dir)
        source_date_epoch(self.root)
        data_dir = self.root / "data"
        os.environ[data.DATA_DIR_ENV] = str(data_dir)
        try:
            cat = data.load(data_dir)
        except data.DataError as exc:
            raise PluginError(
                f"{exc}\nHint: the fields, units and directions each table accepts are the pydantic models in "
                "snippets/data/schema.py; run `python -c 'import snippets.data as d; d.load()'` to check data/ alone"
            ) from None
        self.cursor = computed.Pages(data_text=drift.data_text(cat))
        self.catcher = computed.ExecWarningCatcher(self.cursor)
        guard.wrap_python_formatters(self.cursor)
        # typed list[str], but MkDocs hands the list to Python-Markdown, which takes Extension instances too
        config.markdown_extensions.append(computed.ComputedExtension(self.cursor))  # type: ignore[arg-type]
        self._key_notebook_cache(config)
        guard.write_cell_timeout_config(self.root / ".cache" / "jupyter-config")
        self.notebooks_running = self._execute_notebooks_early(config)
        if not self.notebooks_running:
            self.worker.discard()  # started for nothing: execution is off, or every notebook is cached
        mx_logger = logging.getLogger("mkdocs.plugins.markdown_exec")
        for old in [h for h in mx_logger.handlers if type(h).__name__ == "ExecWarningCatcher"]:
            mx_logger.removeHandler(old)  # a previous rebuild's catcher
        mx_logger.addHandler(self.catcher)
        mx_logger.setLevel(logging.WARNING)  # a raising block is caught even under `mkdocs build -q`
        # markdown-exec logs the block and a traceback through its own internals; the plugin reports
        # each failure itself in two lines (page, line, error, hint) and stops the build
        mx_logger.propagate = False
        return config

    def _key_notebook_cache(self, config: MkDocsConfig) -> None:
        """Key mkdocs-jupyter's cache on data/ and snippets/ too: its own key covers only the notebook file."""
        plugin = config.plugins.get("mkdocs-jupyter")
        if plugin is None or not plugin.config.get("cache", False):
            return
        digest = hashlib.sha256()
        for part in ("data", "snippets"):
            for path in sorted((self.root / part).rglob("*")):
                if path.is_file() and path.suffix in {".yaml", ".py", ".txt"}:
                    digest.update(path.relative_to(self.root).as_posix().encode())
                    digest.update(path.read_bytes())
        plugin.config["cache_dir"] = str(self.root / ".cache" / "mkdocs-jupyter" / digest.hexdigest()[:16])

    def _execute_notebooks_early(self, config: MkDocsConfig) -> list[str]:
        """Execute the notebooks now, in the worker process, so they run beside the rest of the build.

        mkdocs-jupyter executes a notebook only when it reaches the page, and the build waits for
        nbconvert's imports, the Jupyter kernel's start, the cells and the shutdown. The worker makes
        the same conversion the plugin would, with the plugin's options, and leaves the result where the
        plugin's cache looks, so the plugin finds it there. (A process, not a thread: nbconvert's work is
        Python and would compete with the build for the interpreter lock.) Anything that goes wrong there
        is left for mkdocs-jupyter to meet and report itself: a raising cell still stops the build, with
        its message. The docs are listed with MkDocs' own `get_files`, as the build will list them a
        moment later. Returns the `src_uri` of each notebook being executed.
        """
        plugin = config.plugins.get("mkdocs-jupyter")
        if plugin is None or not plugin.config.get("cache", False) or not plugin.config.get("execute", False):
            return []
        from mkdocs.structure.files import get_files
        from mkdocs_jupyter import plugin as mj

        opts = plugin.config
        try:
            job_options = {k: opts[k] for k in NB_OPTIONS}
        except KeyError:  # the plugin's options changed: it runs the notebooks itself
            return []
        todo: list[tuple[str, str]] = []
        running: list[str] = []
        for file in get_files(config):
            src = file.abs_src_path
            if (src is None or not plugin.should_include(file)
                    or any(Path(src).match(p) for p in opts.get("execute_ignore") or [])):
                continue
            # mkdocs-jupyter has no public API for its cache: pinned, and tests/unit/test_private_apis.py checks these
            cache_path = mj._get_cache_path(opts["cache_dir"], mj._compute_cache_key(src, opts, True))
            self.cache_paths[file.src_uri] = cache_path
            if not cache_path.exists():
                todo.append((src, str(cache_path)))
                running.append(file.src_uri)
        if todo:
            self.worker.submit(json.dumps({"todo": todo, "options": job_options, "toc_depth": opts["toc_depth"],
                                           "env": dict(os.environ)}))
        return running

    @event_priority(LAST)
    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        from snippets.data import load
        from snippets.render.usage import Usage

        self.pages.clear()
        cat = load()
        names = {("model", k): m.name for k, m in cat.models.items()}
        names |= {("accelerator", k): a.name for k, a in cat.accelerators.items()}
        self.usage = Usage(names)

    @event_priority(LAST)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        # Pages are converted in the order of `files`. Every notebook page goes last, so the other pages
        # are converted while a notebook's kernel runs rather than after it; every notebook, executing or
        # cached, so the order (and with it sitemap.xml and the search index) is the same whatever the
        # cache holds. The navigation comes from mkdocs.yml and does not change.
        plugin = config.plugins.get("mkdocs-jupyter")
        for file in [f for f in files if plugin is not None and plugin.should_include(f)]:
            files.remove(file)
            files.append(file)
        return files

    @event_priority(LAST)
    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        from snippets.build import drift

        if self.cursor is None or self.catcher is None:
            raise PluginError("the serving plugin's on_config did not run before the pages")
        if page.file.src_uri.endswith((".py", ".ipynb")):
            self.worker.join()  # mkdocs-jupyter renders this notebook next: let it find the result
        self.catcher.records.clear()
        # the whole source, front matter included, so reported line numbers match the file
        source = page.file.content_string
        model = page.meta.get("model")
        state = self.cursor.begin(page.file.src_uri, source, model if isinstance(model, str) else None)
        self.pages[page.file.src_uri] = state
        if page.file.src_uri.endswith(".py"):  # a jupytext notebook: its prose is its Markdown cells
            source = drift.notebook_markdown(source)
        for lit in drift.typed_quantities(source):
            state.reported.add((lit.line, lit.token))
            state.errors.append(
                f"docs/{state.src}:{lit.line}: hand-typed quantity {lit.token!r} in prose: \"{lit.context}\". "
                "Compute it with {{ ... }}, or if it is a name, add it to snippets/allowed_names.txt"
            )
        if words := drift.count_words(source):  # a warning, not an error: "twice" is often plain English
            log.info("docs/%s: count words, each to compute if it states a quantity from data: %s", state.src,
                     ", ".join(f"{w.line} {w.token!r}" for w in words))
        # the front matter's title and description reach the reader too (<title>, the meta description)
        lines = page.file.content_string.splitlines()
        for key in ("title", "description"):
            value = page.meta.get(key)
            if not isinstance(value, str):
                continue
            line = next((i for i, ln in enumerate(lines, 1) if ln.startswith(f"{key}:")), 1)
            for lit in drift.typed_quantities(value + "\n"):
                state.errors.append(
                    f"docs/{state.src}:{line}: hand-typed quantity {lit.token!r} in the front matter's {key}: "
                    f"\"{lit.context}\". Compute it in the prose instead, or if it is a name, add it to "
                    "snippets/allowed_names.txt"
                )
        return markdown

    @event_priority(LAST)
    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        from snippets.build import aside, computed, drift, guard
        from snippets.render.fmt import TERMS_MARK

        if self.cursor is None or self.catcher is None or self.usage is None:
            raise PluginError("the serving plugin's on_config and on_pre_build did not run before the pages")
        state = self.pages[page.file.src_uri]
        src, data_text = page.file.src_uri, self.cursor.data_text
        if src.endswith(".py"):  # a notebook: jupytext gives its cells random ids
            html = computed.stable_cell_ids(html)
        block_failed = bool(state.block_failures)  # each reported by guard.run_block, at its block's line
        self.catcher.records.clear()
        if src.endswith(".py") and (timeouts := guard.notebook_timeout_errors(state, html)):
            state.errors.extend(timeouts)
            cached = self.cache_paths.get(src)
            if cached is not None:
                cached.unlink(missing_ok=True)  # the next build executes the notebook again
        elif src.endswith(".py"):
            state.errors.extend(guard.notebook_text_errors(state, html, data_text))
            state.errors.extend(guard.notebook_link_errors(state, html, page.url, link_targets(files, page),
                                                           guard.anchor_ids(html)))
        if src.endswith(".py"):  # a table fmt.table wrote as HTML in a notebook's output keeps its mark: drop it
            html = re.sub(f'<table {TERMS_MARK}(?:="")?>', "<table>", html)  # (on a page, abbr.py removes it)
        # one parse of the page serves every reading of it, in this order: each takes away what it has read
        root = drift.fragment(html)
        shown = root.text_content() if root is not None else ""  # type: ignore[attr-defined]
        figures, claims, problems = computed.collect_tree(root) if root is not None else ([], [], [])
        if not src.endswith(".py") and root is not None:
            state.errors.extend(guard.block_output_errors(state, root, data_text))
            state.errors.extend(guard.page_text_errors(state, root, [Path(config.docs_dir) / "includes"], data_text))
            html = guard.unwrap_block_outputs(html)
            if f'class="{drift.BLOCK_OUTPUT_CLASS}"' in html:
                state.errors.append(f"docs/{state.src}: a block's output wrapper ({drift.BLOCK_OUTPUT_CLASS!r}) "
                                    "reached the page changed, so it was not removed: the build cannot publish it")
        if block_failed:  # the published traceback is that failure again: say it once
            problems = [p for p in problems if "traceback" not in p.lower()]
        state.errors.extend(f"docs/{state.src}: {p}" for p in problems)
        state.figures = figures
        # keep the processor's record of each claim (it knows the basis), in page order
        state.claims = [c for c in state.claims if any(c["claim"] == h["claim"] for h in claims)]
        # the names this page shows, for the reference pages' "used by" links
        if not page.url.startswith("reference/") and shown.strip():
            self.usage.record(page.url, page.title or page.url, shown)
        html, self.aside[page.url], problems = aside.set_aside(html)
        state.errors.extend(f"docs/{state.src}: {p}" for p in problems)
        return html

    @event_priority(LAST)
    def on_env(self, env: Environment, *, config: MkDocsConfig, files: Files) -> Environment:
        """Every page is converted and none is written yet: stop here if any page had an error.

        Reporting at this point lists the errors of all pages at once, and publishes nothing.
        """
        errors = [e for st in self.pages.values() for e in st.errors]
        if errors:
            raise PluginError(f"{len(errors)} error(s); nothing was written:\n" + "\n".join(errors))
        # MkDocs makes a new Jinja environment every build, so Material's templates were compiled
        # anew on every `mkdocs serve` rebuild; Jinja's bytecode cache (keyed on each template's
        # source) keeps them compiled in .cache/ instead.
        import jinja2

        cache = self.root / ".cache" / "jinja"
        cache.mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(cache))
        return env

    @event_priority(LAST)
    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        from snippets.build import aside

        output = aside.put_back(output, self.aside.pop(page.url, []))
        if self.usage is None or 'class="sa-used-by"' not in output:
            return output
        return self.usage.fill(output, page.url)

    @event_priority(LAST)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        from snippets.build.computed import numbers_json
        from snippets.data import load
        from snippets.data.export import export
        from snippets.pages.reference_sizing import write_records

        try:
            self.worker.join()
            if not self.worker.serving:
                self.worker.close()  # the worker has stopped its kernel by now, or is about to
            site = Path(config.site_dir)
            (site / "numbers.json").write_text(numbers_json(self.pages), encoding="utf-8")
            out = site / "reference"
            write_records(load(), out)
            # in data/'s order, not sorted: an accelerator's node is the first one built from it (node_of)
            (out / "engine-catalog.json").write_text(json.dumps(export(load()), indent=1) + "\n", encoding="utf-8")
            write_engine_sources(self.root, site / CALCULATOR_DIR)
        finally:
            forget_snippets()

    def on_build_error(self, *, error: Exception) -> None:
        try:
            self.worker.join()  # no kernel outlives a failed build
            # a failed build (an error, or a warning under --strict, raised after every page was written)
            # leaves no complete-looking site behind: `mkdocs build` cleaned the directory before writing
            if self.site_dir is not None and not self.worker.serving:
                shutil.rmtree(self.site_dir, ignore_errors=True)
            if not self.worker.serving:
                self.worker.close()
        finally:
            forget_snippets()


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


def link_targets(files: Files, page: Page) -> dict[str, set[str] | None]:
    """Every URL of the site, with its page's anchor ids where MkDocs has them (notebooks are converted
    last, so every Markdown page has been rendered by then)."""
    out: dict[str, set[str] | None] = {}
    for f in files:
        url = f.url.removeprefix("./")
        anchors = getattr(f.page, "present_anchor_ids", None) if f.page is not None else None
        out[url] = set(anchors) if anchors is not None else None
        out.setdefault(f.dest_uri, None)
    # mkdocs-jupyter's include_source copies the notebook next to its page
    out.setdefault(page.url.removeprefix("./") + Path(page.file.src_uri).name, None)
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
    files = []
    for src in engine_sources(root):
        rel = src.relative_to(root).as_posix()
        data = src.read_bytes()
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        files.append({"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    (out / "manifest.json").write_text(json.dumps({"files": files}, indent=1) + "\n", encoding="utf-8")


def forget_snippets() -> None:
    """Drop every `snippets` module but the worker's from `sys.modules`: `mkdocs serve` builds again in this
    process, and the next build (a new plugin, from a fresh import of this module) reads every file anew."""
    for name in [m for m in sys.modules if (m == "snippets" or m.startswith("snippets.")) and m not in KEPT]:
        del sys.modules[name]
    for name in KEPT[:-1]:  # a kept package must not hand out a dropped submodule as its attribute
        package = sys.modules.get(name)
        if package is not None:
            for attr in [a for a, v in vars(package).items() if type(v).__name__ == "module"
                         and getattr(v, "__name__", "").startswith("snippets.") and v.__name__ not in KEPT]:
                delattr(package, attr)
