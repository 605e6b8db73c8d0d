"""MkDocs hooks: wire `snippets.site` into the build.

- on_config: point the loader at this site's `data/`, validate all of it (a data error stops
  the build before any page), register the computed-values Markdown extension.
- on_page_markdown: fresh state for every page: markdown-exec sessions are cleared, so no block
  state leaks between pages or across `mkdocs serve` rebuilds.
- on_page_content: any error collected on the page (unknown name, failing expression, false
  claim, raising block) stops the build with a message naming page and line.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from snippets import drift, site
from snippets.data import DATA_DIR_ENV, DataError, load

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


def on_config(config: Any) -> Any:
    _source_date_epoch(Path(config.config_file_path).resolve().parent)
    data_dir = Path(config.config_file_path).resolve().parent / "data"
    os.environ[DATA_DIR_ENV] = str(data_dir)
    try:
        load(data_dir)
    except DataError as exc:
        raise PluginError(
            f"{exc}\nHint: the fields, units and directions each table accepts are the pydantic models in "
            "snippets/data.py; run `python -c 'import snippets.data as d; d.load()'` to check data/ alone"
        ) from None
    if not any(isinstance(e, site.ComputedExtension) for e in config.markdown_extensions):
        config.markdown_extensions.append(site.ComputedExtension())
    _key_notebook_cache(config, Path(config.config_file_path).resolve().parent)
    mx_logger = logging.getLogger("mkdocs.plugins.markdown_exec")
    if _catcher not in mx_logger.handlers:
        mx_logger.addHandler(_catcher)
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


def on_pre_build(config: Any) -> None:
    _pages.clear()
    site.reset_markdown_exec()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    site.reset_markdown_exec()
    _catcher.records.clear()
    # the whole source, front matter included, so reported line numbers match the file
    state = site.begin_page(page.file.src_uri, page.file.content_string, page.meta.get("model"))
    _pages[page.file.src_uri] = state
    source = page.file.content_string
    if page.file.src_uri.endswith(".py"):  # a jupytext notebook: its prose is its Markdown cells
        source = drift.notebook_markdown(source)
    for lit in drift.typed_quantities(source):
        state.errors.append(
            f"docs/{state.src}:{lit.line}: hand-typed quantity {lit.token!r} in prose: \"{lit.context}\". "
            "Compute it with {{ ... }}, or if it is a name, add it to snippets/allowed_names.txt"
        )
    return markdown


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    state = _pages[page.file.src_uri]
    block_failed = bool(_catcher.records)
    for record in _catcher.records:
        state.errors.append(site.describe_block_failure(state, record.getMessage()))
    _catcher.records.clear()
    figures, claims, problems = site.collect(html)
    if block_failed:  # the published traceback is that failure again: say it once
        problems = [p for p in problems if "traceback" not in p.lower()]
    state.errors.extend(f"docs/{state.src}: {p}" for p in problems)
    state.figures = figures
    # keep the processor's record of each claim (it knows the basis), in page order
    state.claims = [c for c in state.claims if any(c["claim"] == h["claim"] for h in claims)]
    return html


def on_env(env: Any, config: Any, files: Any) -> Any:
    """Every page is converted and none is written yet: stop here if any page had an error.

    Reporting at this point lists the errors of all pages at once, and publishes nothing.
    """
    errors = [e for st in _pages.values() for e in st.errors]
    if errors:
        raise PluginError(f"{len(errors)} error(s); nothing was written:\n" + "\n".join(errors))
    return env


def on_post_build(config: Any) -> None:
    out = Path(config.site_dir) / "numbers.json"
    out.write_text(site.numbers_json(_pages), encoding="utf-8")
