"""MkDocs hooks: wire `snippets.site` into the build.

- on_config: point the loader at this site's `data/`, validate all of it (a data error stops
  the build before any page), register the computed-values Markdown extension.
- on_config (also): send the notebooks to execute to the worker process (started by the
  `serving-notebooks` plugin, serving_build/notebooks.py), beside the build; mkdocs-jupyter then
  finds the result in its cache. With nothing to execute, the worker is stopped at once.
- on_files: put those notebooks last in the build order, so the other pages are converted while
  their kernel runs.
- on_page_markdown: fresh state for every page: markdown-exec sessions are cleared, so no block
  state leaks between pages or across `mkdocs serve` rebuilds.
- on_page_content: any error collected on the page (unknown name, failing expression, false
  claim, raising block) stops the build with a message naming page and line.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from serving_build import notebooks
from snippets import data, drift, site
from snippets.data import DATA_DIR_ENV

_catcher = site.ExecWarningCatcher()
_pages: dict[str, site.PageState] = {}


def _source_date_epoch(root: Path) -> None:
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


def _fresh_snippets() -> None:
    """Import snippets anew. `mkdocs serve` loads this hook once and rebuilds in the same process, and
    Python would keep the first import of every module: an edit under snippets/ would not show until
    a restart. Dropping snippets' modules at each build makes the next import read the files again."""
    global site, drift, data, _catcher
    for name in [m for m in sys.modules if m == "snippets" or m.startswith("snippets.")]:
        del sys.modules[name]
    site = importlib.import_module("snippets.site")
    drift = importlib.import_module("snippets.drift")
    data = importlib.import_module("snippets.data")
    _catcher = site.ExecWarningCatcher()


_site_dir: list[str] = []  # set per build; a list, so rebuilds of `mkdocs serve` rebind nothing


def on_config(config: Any) -> Any:
    _fresh_snippets()
    _site_dir[:] = [] if getattr(config, "dirty", False) else [str(config.site_dir)]
    _source_date_epoch(Path(config.config_file_path).resolve().parent)
    data_dir = Path(config.config_file_path).resolve().parent / "data"
    os.environ[DATA_DIR_ENV] = str(data_dir)
    try:
        data.load(data_dir)
    except data.DataError as exc:
        raise PluginError(
            f"{exc}\nHint: the fields, units and directions each table accepts are the pydantic models in "
            "snippets/data.py; run `python -c 'import snippets.data as d; d.load()'` to check data/ alone"
        ) from None
    site.DATA_TEXT = drift.data_text(data.load(data_dir))
    site.wrap_python_formatters()
    if not any(isinstance(e, site.ComputedExtension) for e in config.markdown_extensions):
        config.markdown_extensions.append(site.ComputedExtension())
    _key_notebook_cache(config, Path(config.config_file_path).resolve().parent)
    site.write_cell_timeout_config(Path(config.config_file_path).resolve().parent / ".cache" / "jupyter-config")
    _notebooks_running[:] = _execute_notebooks_early(config)
    if not _notebooks_running:
        notebooks.worker().discard()  # started for nothing: execution is off, or every notebook is cached
    mx_logger = logging.getLogger("mkdocs.plugins.markdown_exec")
    for old in [h for h in mx_logger.handlers if type(h).__name__ == "ExecWarningCatcher"]:
        mx_logger.removeHandler(old)  # a previous rebuild's catcher
    mx_logger.addHandler(_catcher)
    mx_logger.setLevel(logging.WARNING)  # a raising block is caught even under `mkdocs build -q`
    # markdown-exec logs the block and a traceback through its own internals; the hook reports
    # each failure itself in two lines (page, line, error, hint) and stops the build
    mx_logger.propagate = False
    return config


def _key_notebook_cache(config: Any, root: Path) -> None:
    """Key mkdocs-jupyter's cache on data/ and snippets/ too: its own key covers only the notebook file."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config.get("cache", False):
        return
    digest = hashlib.sha256()
    for part in ("data", "snippets"):
        for path in sorted((root / part).rglob("*")):
            if path.is_file() and path.suffix in {".yaml", ".py", ".txt"}:
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    plugin.config["cache_dir"] = str(root / ".cache" / "mkdocs-jupyter" / digest.hexdigest()[:16])


_NB_OPTIONS = ("kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
               "highlight_extra_classes", "include_requirejs", "custom_mathjax_url")
# The worker process is started by the `serving-notebooks` plugin (serving_build/notebooks.py) as
# the configuration is read; this hook gives it its job. It lives in that installed module, so it
# outlives `mkdocs serve`'s rebuilds, which import this hook anew each time.

_notebooks_running: list[str] = []
_cache_paths: dict[str, Path] = {}


def _execute_notebooks_early(config: Any) -> list[str]:
    """Execute the notebooks now, in a second process, so they run beside the rest of the build.

    mkdocs-jupyter executes a notebook only when it reaches the page, and the build waits for
    nbconvert's imports, the Jupyter kernel's start, the cells and the shutdown. The second
    process makes the same conversion the plugin would, with the plugin's options, and leaves the
    result where the plugin's cache looks, so the plugin finds it there. (A process, not a thread:
    nbconvert's work is Python and would compete with the build for the interpreter lock.)
    Anything that goes wrong there is left for the plugin to meet and report itself: a raising
    cell still stops the build, with the plugin's message.

    Called from on_config, as early as the plugin's options are known (the worker itself was
    started while the configuration was read, and has been importing nbconvert since); the docs are listed here
    with MkDocs' own `get_files`, as the build will list them a moment later.
    Returns the `src_uri` of each notebook being executed, so `on_files` can put it last.
    """
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config.get("cache", False) or not plugin.config.get("execute", False):
        return []
    from mkdocs_jupyter import plugin as mj

    opts = plugin.config
    try:
        job_options = {k: opts[k] for k in _NB_OPTIONS}
    except KeyError:  # the plugin's options changed: it runs the notebooks itself
        return []
    from mkdocs.structure.files import get_files

    todo: list[tuple[str, str, str]] = []
    running: list[str] = []
    for file in get_files(config):
        src = file.abs_src_path
        if not plugin.should_include(file) or any(Path(src).match(p) for p in opts.get("execute_ignore") or []):
            continue
        try:
            cache_path = mj._get_cache_path(opts["cache_dir"], mj._compute_cache_key(src, opts, True))
        except Exception:  # the plugin's internals changed: it runs the notebooks itself
            return []
        _cache_paths[file.src_uri] = cache_path
        if not cache_path.exists():
            todo.append((src, str(cache_path), _kernel_name(src, opts["kernel_name"])))
            running.append(file.src_uri)
    if todo:
        worker = notebooks.worker()
        worker.submit(json.dumps({"todo": todo, "options": job_options, "toc_depth": opts["toc_depth"],
                                  "serving": worker.serving, "env": dict(os.environ)}))
    return running


def _kernel_name(src: str, configured: str) -> str:
    """The kernel nbconvert would start: the plugin's option, else the notebook's kernelspec ("": its default)."""
    if configured:
        return str(configured)
    try:
        import jupytext

        return str(jupytext.read(src).metadata.get("kernelspec", {}).get("name", ""))
    except Exception:
        return ""


def _join_notebooks() -> None:
    notebooks.worker().join()


def on_startup(command: str, dirty: bool) -> None:
    # called once, on the first build's hook, before it. Serving: keep the notebook worker between
    # rebuilds, and start it now, so its imports are done before the first edit needs it.
    if command == "serve":
        worker = notebooks.worker()
        worker.serving = True
        worker.start()


def on_shutdown() -> None:
    notebooks.worker().close()


def on_pre_build(config: Any) -> None:
    _pages.clear()
    site.reset_markdown_exec()


def on_files(files: Any, config: Any) -> Any:
    # Pages are converted in the order of `files`. Every notebook page goes last, so the other pages
    # are converted while a notebook's kernel runs rather than after it; every notebook, executing or
    # cached, so the order (and with it sitemap.xml and the search index) is the same whatever the
    # cache holds. The navigation comes from mkdocs.yml and does not change.
    plugin = config.plugins.get("mkdocs-jupyter")
    notebooks_ = [f for f in files if plugin is not None and plugin.should_include(f)]
    for file in notebooks_:
        files.remove(file)
        files.append(file)
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri.endswith((".py", ".ipynb")):
        _join_notebooks()  # the plugin renders this notebook next: let it find the result
    site.reset_markdown_exec()
    _catcher.records.clear()
    # the whole source, front matter included, so reported line numbers match the file
    state = site.begin_page(page.file.src_uri, page.file.content_string, page.meta.get("model"))
    _pages[page.file.src_uri] = state
    source = page.file.content_string
    if page.file.src_uri.endswith(".py"):  # a jupytext notebook: its prose is its Markdown cells
        source = drift.notebook_markdown(source)
    for lit in drift.typed_quantities(source):
        state.reported.add((lit.line, lit.token))
        state.errors.append(
            f"docs/{state.src}:{lit.line}: hand-typed quantity {lit.token!r} in prose: \"{lit.context}\". "
            "Compute it with {{ ... }}, or if it is a name, add it to snippets/allowed_names.txt"
        )
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


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    state = _pages[page.file.src_uri]
    if page.file.src_uri.endswith(".py"):  # a notebook: jupytext gives its cells random ids
        html = site.stable_cell_ids(html)
    block_failed = bool(state.block_failures)  # each reported by site.run_block, at its block's line
    _catcher.records.clear()
    if page.file.src_uri.endswith(".py") and (timeouts := site.notebook_timeout_errors(state, html)):
        state.errors.extend(timeouts)
        cached = _cache_paths.get(page.file.src_uri)
        if cached is not None:
            cached.unlink(missing_ok=True)  # the next build executes the notebook again
    elif page.file.src_uri.endswith(".py"):
        state.errors.extend(site.notebook_text_errors(state, html))
        state.errors.extend(site.notebook_link_errors(state, html, page.url, _link_targets(files, page),
                                                      site.anchor_ids(html)))
    else:
        includes = [Path(config.docs_dir) / "includes"]
        state.errors.extend(site.page_text_errors(state, html, includes))
    figures, claims, problems = site.collect(html)
    if block_failed:  # the published traceback is that failure again: say it once
        problems = [p for p in problems if "traceback" not in p.lower()]
    state.errors.extend(f"docs/{state.src}: {p}" for p in problems)
    state.figures = figures
    # keep the processor's record of each claim (it knows the basis), in page order
    state.claims = [c for c in state.claims if any(c["claim"] == h["claim"] for h in claims)]
    return html


def _link_targets(files: Any, page: Any) -> dict[str, set[str] | None]:
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


def on_env(env: Any, config: Any, files: Any) -> Any:
    """Every page is converted and none is written yet: stop here if any page had an error.

    Reporting at this point lists the errors of all pages at once, and publishes nothing.
    """
    errors = [e for st in _pages.values() for e in st.errors]
    if errors:
        raise PluginError(f"{len(errors)} error(s); nothing was written:\n" + "\n".join(errors))
    # MkDocs makes a new Jinja environment every build, so Material's templates were compiled
    # anew on every `mkdocs serve` rebuild; Jinja's bytecode cache (keyed on each template's
    # source) keeps them compiled in .cache/ instead.
    import jinja2

    cache = Path(config.config_file_path).resolve().parent / ".cache" / "jinja"
    cache.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(cache))
    return env


def on_build_error(error: Exception) -> None:
    _join_notebooks()  # no kernel outlives a failed build
    # a failed build (an error, or a warning under --strict, raised after every page was written)
    # leaves no complete-looking site behind: `mkdocs build` cleaned the directory before writing
    if _site_dir and not notebooks.worker().serving:
        shutil.rmtree(_site_dir[0], ignore_errors=True)
    if not notebooks.worker().serving:
        notebooks.worker().close()


def on_post_build(config: Any) -> None:
    _join_notebooks()
    if not notebooks.worker().serving:
        notebooks.worker().close()  # the worker has stopped its kernel by now, or is about to
    out = Path(config.site_dir) / "numbers.json"
    out.write_text(site.numbers_json(_pages), encoding="utf-8")
