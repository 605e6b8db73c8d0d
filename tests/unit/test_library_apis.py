"""What the build takes from its libraries, each a public API, checked so that a release that changes one fails here,
naming it, before a build would quietly go wrong. No private function or attribute is used.

- markdown-exec: `validator` and `formatter` (the custom fences its plugin registers), `base_format` with its `run`
  parameter (snippets/build/blocks.py), `markdown_config` (what a block's output is converted with).
- Python-Markdown: abbr's `glossary` option (3.7), and `AbbrBlockprocessor.RE`, the definition syntax the glossary
  file is read with (snippets/build/plugin.py).
- nbclient: `NotebookClient` with `timeout`, `allow_errors`, `record_timing` and the `on_cell_start` hook, and
  `execute(**kernel_kwargs)` (snippets/build/notebooks.py).
- mkdocs-jupyter: its documented options only (`include`, `ignore`, `execute`), set in mkdocs.yml.
"""

from __future__ import annotations

import inspect

import markdown
import markdown_exec
import yaml
from markdown.extensions.abbr import AbbrBlockprocessor

from ..conftest import ROOT


def test_markdown_exec_formats_through_base_format_with_a_run_of_ours() -> None:
    for name in ("validator", "formatter", "base_format", "markdown_config"):
        assert name in markdown_exec.__all__, name
    assert "run" in inspect.signature(markdown_exec.base_format).parameters
    calls: list[str] = []

    def run(code: str, **_: object) -> str:
        calls.append(code)
        return "**printed**"

    out = markdown_exec.base_format(language="python", run=run, code="x = 1", md=markdown.Markdown())
    assert calls == ["x = 1"] and "<strong>printed</strong>" in out


def test_abbr_takes_a_glossary_and_the_definition_pattern_is_public() -> None:
    md = markdown.Markdown(extensions=["abbr"], extension_configs={"abbr": {"glossary": {"KV": "key and value"}}})
    assert md.convert("The KV cache.") == '<p>The <abbr title="key and value">KV</abbr> cache.</p>'
    assert AbbrBlockprocessor.RE.search("*[KV]: key and value")["abbr"] == "KV"


def test_nbclient_takes_the_options_the_build_sets() -> None:
    from nbclient import NotebookClient

    traits = NotebookClient.class_trait_names()
    for name in ("timeout", "allow_errors", "record_timing", "on_cell_start"):
        assert name in traits, name
    assert "kwargs" in inspect.signature(NotebookClient.execute).parameters


def test_mkdocs_jupyter_is_configured_by_its_documented_options_only() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # noqa: S506 - !!python tags unused
    (options,) = [p["mkdocs-jupyter"] for p in config["plugins"] if isinstance(p, dict) and "mkdocs-jupyter" in p]
    assert set(options) <= {"include", "ignore", "execute", "execute_ignore", "theme", "kernel_name", "include_source",
                            "ignore_h1_titles", "allow_errors", "show_input", "no_input", "no_prompt", "toc_depth",
                            "cache", "cache_dir", "remove_tag_config", "highlight_extra_classes", "include_requirejs",
                            "data_files", "custom_mathjax_url"}
    assert options["execute"] == "false"  # the serving plugin executes the notebooks
