"""The `serving` plugin's events in process (snippets/build/plugin.py), on a small site of its own: typed options,
a data error, what on_config wires, the build's context made and dropped, errors of all pages listed at once."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError

from snippets.build.notebooks import code_stamp
from snippets.build.plugin import (
    FULL_COLLECTION_DEFERRED,
    ServingConfig,
    ServingPlugin,
    drop_inlined_css_list,
)

from ..conftest import ROOT

CONFIG = """site_name: t
theme: {name: material}
plugins:
  - serving:
      block_timeout: 7
      sizing_targets: "off"
  - markdown-exec
markdown_extensions:
  - abbr
  - pymdownx.superfences
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "data", tmp_path / "data")
    (tmp_path / "docs" / "includes").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "docs" / "includes" / "abbreviations.md").write_text("*[HBM]: High Bandwidth Memory\n")
    (tmp_path / "mkdocs.yml").write_text(CONFIG)
    return tmp_path


@pytest.fixture
def config(site: Path) -> Iterator[MkDocsConfig]:
    cfg = load_config(str(site / "mkdocs.yml"), site_dir=str(site / "site"))
    yield cfg
    plugin = cfg.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    plugin.context = None  # MkDocs keeps one plugin object a process: leave it between builds
    plugin.end_collections()  # as on_post_build or on_build_error would: no build is left half done here


def test_options_are_typed_with_their_defaults() -> None:
    cfg = ServingConfig()
    cfg.load_dict({})
    assert cfg.validate() == ([], [])
    options = cfg.options()
    assert (options.block_timeout, options.cell_timeout, options.notebooks, options.execute) == (
        60, 120, ("notebooks/*.py",), True)
    for name, value in (("block_timeout", "soon"), ("execute", "yes"), ("notebooks", "notebooks/*.py")):
        bad = ServingConfig()
        bad.load_dict({name: value})
        errors, _ = bad.validate()
        assert [n for n, _ in errors] == [name]


def test_on_config_makes_the_builds_context_and_wires_the_build(config: MkDocsConfig, site: Path) -> None:
    import markdown_exec

    from snippets.build.computed import ComputedExtension

    config = config.plugins.on_config(config)
    plugin = config.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    ctx = plugin.ctx()
    assert ctx.root == site and ctx.options.block_timeout == 7 and ctx.blocks.timeout == 7
    assert ctx.options.sizing_targets == "off" and ctx.sizing.not_searched and ctx.sizing.pool is None
    assert ctx.catalog.directory == site / "data" and ctx.pages.catalog is ctx.catalog
    assert config.mdx_configs["abbr"]["glossary"] == {"HBM": "High Bandwidth Memory"}
    assert any(isinstance(e, ComputedExtension) and e.pages is ctx.pages for e in config.markdown_extensions)
    fences = {f["name"]: f for f in config.mdx_configs["pymdownx.superfences"]["custom_fences"]}
    assert fences["python"]["format"] == ctx.blocks.fence and fences["py"]["format"] == ctx.blocks.fence
    assert fences["python"]["validator"] is markdown_exec.validator
    assert fences["bash"]["format"] is markdown_exec.formatter  # languages the site does not run stay markdown-exec's
    # a failed build drops the context and leaves no site behind
    (site / "site").mkdir()
    plugin.on_build_error(error=RuntimeError("x"))
    assert plugin.context is None and not (site / "site").exists()
    with pytest.raises(PluginError, match="on_config did not run"):
        plugin.ctx()


def test_a_data_error_stops_the_build_naming_file_entry_and_field(config: MkDocsConfig, site: Path) -> None:
    path = site / "data" / "accelerators.yaml"
    path.write_text(path.read_text().replace("{value: 3.35, unit: TB/s, direction: shared}", "{value: 3.35, unit: TB/s}",
                                             1))
    with pytest.raises(PluginError) as err:
        config.plugins.on_config(config)
    assert "data/accelerators.yaml: entry 'h100-sxm': field 'memory_bandwidth.direction': Field required" in str(err.value)
    assert "Hint: the fields, units and directions each table accepts" in str(err.value)
    assert config.plugins["serving"].context is None  # type: ignore[attr-defined]


def test_every_pages_errors_stop_the_build_at_once_before_anything_is_written(config: MkDocsConfig) -> None:
    from snippets.build.computed import PageState

    config = config.plugins.on_config(config)
    plugin = config.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    ctx = plugin.ctx()
    ctx.states = {"a.md": PageState(src="a.md", errors=["docs/a.md:1: one"]),
                  "b.md": PageState(src="b.md", errors=["docs/b.md:2: two", "docs/b.md:3: three"])}
    with pytest.raises(PluginError) as err:
        plugin.on_env(None, config=config, files=None)  # type: ignore[arg-type]
    assert str(err.value) == "3 error(s); nothing was written:\ndocs/a.md:1: one\ndocs/b.md:2: two\ndocs/b.md:3: three"


def test_the_code_stamp_follows_an_edit(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    module = tmp_path / "snippets" / "m.py"
    module.write_text("x = 1\n")
    before = code_stamp(tmp_path)
    assert code_stamp(tmp_path) == before
    module.write_text("x = 22\n")
    assert code_stamp(tmp_path) != before


def test_mkdocs_jupyters_stray_style_is_dropped_and_nothing_else() -> None:
    page = "<div>cells</div>\n<style>.jp{}</style>"
    assert drop_inlined_css_list(page) == page
    stray = page + "\n        <style>\n        ['pre { line-height: 125%; }', '.x {}']\n        </style>\n        "
    assert drop_inlined_css_list(stray) == page + "\n"


def test_a_serve_rebuild_reads_the_sizing_searches_from_the_cache_only(site: Path) -> None:
    """`mkdocs serve`: the first build searches (the option's default), a rebuild only reads the cache, so a data edit
    shows at once; on a miss nothing is searched and no worker starts."""
    (site / "mkdocs.yml").write_text(CONFIG.replace('      sizing_targets: "off"\n', ""))
    cfg = load_config(str(site / "mkdocs.yml"), site_dir=str(site / "site"))
    plugin = cfg.plugins["serving"]
    assert isinstance(plugin, ServingPlugin) and plugin.config.sizing_targets == "search"
    plugin.on_startup(command="serve", dirty=False)
    plugin.code_stamp = (site, code_stamp(site))  # what on_post_build leaves: this is a rebuild (of unedited code)
    try:
        cfg = cfg.plugins.on_config(cfg)
        ctx = plugin.ctx()
        assert ctx.options.sizing_targets == "cached" and ctx.sizing.not_searched and ctx.sizing.pool is None
    finally:
        plugin.context = None
        plugin.end_collections()
        plugin.on_shutdown()  # serve's end: the collection left waiting by the build's end runs


def test_full_collections_wait_for_the_builds_end_and_no_longer(config: MkDocsConfig) -> None:
    """A build defers CPython's full garbage collections (`defer_full_collections`) and ends them once it ends, failed
    or not: the thresholds are as they were after it, an on_config that raises included."""
    import gc

    was = gc.get_threshold()
    plugin = config.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    config = config.plugins.on_config(config)
    assert gc.get_threshold()[:2] == was[:2] and gc.get_threshold()[2] >= FULL_COLLECTION_DEFERRED
    plugin.on_build_error(error=RuntimeError("x"))
    assert gc.get_threshold() == was and plugin.gc_thresholds is None
    path = Path(config.config_file_path).parent / "data" / "accelerators.yaml"
    path.write_text(path.read_text() + "\nbroken: {}\n")
    with pytest.raises(PluginError):
        config.plugins.on_config(config)
    assert gc.get_threshold() == was and plugin.gc_thresholds is None


def test_under_serve_a_builds_full_collection_runs_a_moment_after_it_or_when_the_next_begins(
        config: MkDocsConfig) -> None:
    """Under `mkdocs serve` the end of a build leaves its full collection to a thread that runs it a moment later, off
    the path to the reloaded page: until then the thresholds stay deferred; then they are as they were. An edit saved
    before it ran has the next build's on_config run it first; the process's end runs one still waiting."""
    import gc

    from snippets.build.plugin import LATE_COLLECTION_S

    was = gc.get_threshold()
    plugin = config.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    plugin.on_startup(command="serve", dirty=False)
    try:
        config = config.plugins.on_config(config)
        plugin.context = None
        plugin.end_collections()
        late = plugin.late_collection
        assert late is not None and not late.ran and 0 < LATE_COLLECTION_S <= 5
        assert gc.get_threshold()[2] >= FULL_COLLECTION_DEFERRED  # nothing collected yet
        late.timer.join(timeout=30)
        assert late.ran and gc.get_threshold() == was
        config = config.plugins.on_config(config)  # the next build: deferred again
        assert gc.get_threshold()[2] >= FULL_COLLECTION_DEFERRED
        plugin.context = None
        plugin.end_collections()
        late = plugin.late_collection
        assert late is not None and not late.ran
        config = config.plugins.on_config(config)  # saved before the collection ran: it runs first
        assert late.ran and plugin.late_collection is None and plugin.gc_thresholds == was
        plugin.context = None
        plugin.end_collections()
        late = plugin.late_collection
        assert late is not None and not late.ran
    finally:
        plugin.on_shutdown()  # the process's end: the one waiting runs
    assert late.ran and plugin.late_collection is None and gc.get_threshold() == was


def test_a_builds_objects_are_let_go_when_it_ends(config: MkDocsConfig) -> None:
    """Markdown instances outlive a build (markdown-exec caches each one), and hold its page cursor and its blocks'
    runner: what the build computed is dropped from them when it ends, so a `serve` rebuild does not keep the last
    one's page models alive."""
    from snippets.pages.home import HomePage

    config = config.plugins.on_config(config)
    plugin = config.plugins["serving"]
    assert isinstance(plugin, ServingPlugin)
    ctx = plugin.ctx()
    HomePage.of(ctx.catalog)
    assert ctx.catalog.derived and ctx.pages.catalog is ctx.catalog
    ctx.release()
    assert not ctx.catalog.derived and ctx.pages.catalog is None and ctx.pages.current.namespace is None
    assert ctx.pages.state_after_block is None and not ctx.states
