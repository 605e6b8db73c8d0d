"""The few private behaviours of the build's dependencies it still relies on, each pinned in
pyproject.toml: these fail loudly, naming what changed, before a build would quietly go slow or wrong.

- mkdocs-jupyter (>=0.26,<0.27) has no public API for its cache: the build keys it and fills it from
  the notebook worker with `_compute_cache_key`, `_get_cache_path` and `_get_nb_toc_tokens`
  (snippets/build/plugin.py, snippets/build/notebook_worker.py).
- nbconvert (>=7.16,<8) is used only through mkdocs-jupyter's `nb2html`, which starts its own kernel.
- markdown-exec (>=1.10,<2) is used only through its public `formatters` table.
- Python-Markdown (>=3.7,<4): `snippets/build/abbr.py` gives a table written as HTML the tooltips the
  `abbr` extension gives Markdown, with the terms and pattern abbr's treeprocessor keeps (`abbrs`, `RE`).
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import pytest

from ..conftest import ROOT

NOTEBOOK = ROOT / "docs/notebooks/size-your-deployment.py"
KEY_OPTIONS = ("kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
               "highlight_extra_classes", "include_requirejs", "custom_mathjax_url", "toc_depth")


def test_mkdocs_jupyter_cache_key_is_the_notebook_and_its_options() -> None:
    mj = pytest.importorskip("mkdocs_jupyter.plugin")
    opts = {k: "" for k in KEY_OPTIONS} | {"toc_depth": 3, "allow_errors": False}
    expected = hashlib.sha256(NOTEBOOK.read_bytes() + b"execute=True")
    for key in KEY_OPTIONS:
        expected.update(f"{key}={opts[key]!r}".encode())
    assert mj._compute_cache_key(str(NOTEBOOK), opts, True) == expected.hexdigest(), (
        "mkdocs-jupyter's _compute_cache_key changed: the notebook worker would write where the plugin no "
        "longer looks (every cold build would execute the notebook twice)")
    assert mj._get_cache_path("/c", "k") == Path("/c/k.json"), "mkdocs-jupyter's _get_cache_path changed"


def test_mkdocs_jupyter_toc_tokens_come_with_the_title() -> None:
    mj = pytest.importorskip("mkdocs_jupyter.plugin")
    tokens, title = mj._get_nb_toc_tokens(str(NOTEBOOK), 3)
    assert isinstance(tokens, list) and tokens and title == "Size your own deployment", (
        "mkdocs-jupyter's _get_nb_toc_tokens changed: the worker caches the page's toc and title with it")


def test_markdown_exec_formatters_table_is_public_and_called_with_keywords() -> None:
    mx = pytest.importorskip("markdown_exec")
    assert "formatters" in mx.__all__ and callable(mx.formatters["python"]) and callable(mx.formatters["py"])
    src = inspect.getsource(mx.formatter)
    assert "fmt(code=source, md=md, **options)" in src, (
        "markdown-exec calls its formatters differently: snippets.build.guard.run_block wraps them with (code, md, options)")


def test_abbr_treeprocessor_keeps_its_terms_and_pattern() -> None:
    import markdown

    md = markdown.Markdown(extensions=["abbr"])
    md.convert("The KV cache.\n\n*[KV]: key and value")
    abbr = md.treeprocessors["abbr"]
    assert abbr.abbrs == {"KV": "key and value"}, "abbr's treeprocessor no longer keeps its terms as `abbrs`"
    assert abbr.RE is not None and abbr.RE.search("the KV cache"), "abbr's treeprocessor no longer keeps `RE`"
