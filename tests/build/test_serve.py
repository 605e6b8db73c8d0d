"""Live preview and repeated builds in one process: what `mkdocs serve` watches, and that nothing but the files
carries from one build to the next (no module of snippets/ keeps state: snippets/build/context.py)."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ..conftest import ROOT, Build, run_build, without_sizing_searches
from .small_site import keep_only

BLOCK = '''
```python exec="on"
try:
    seen += 1
except NameError:
    seen = 1
print(f"block-state-{'fresh' if seen == 1 else 'leaked'}")
```
'''


def test_serve_watches_data_and_snippets() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # noqa: S506 - !!python tags unused
    watched = {Path(w).as_posix().rstrip("/") for w in config["watch"]}
    assert {"data", "snippets"} <= watched  # docs/ and mkdocs.yml are watched by mkdocs itself
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '"mkdocs", "serve", "--strict"' in noxfile


@pytest.mark.parametrize(("setting", "indexed"), [(None, True), ("true", True), ("false", False)])
def test_the_search_index_follows_serving_search(setting: str | None, indexed: bool) -> None:
    """mkdocs.yml builds Material's search index unless SERVING_SEARCH=false, which `nox -s serve` sets (the index
    is about a second of a rebuild's 2.6 s); every other session builds it (the site tests read it)."""
    env = {k: v for k, v in os.environ.items() if k != "SERVING_SEARCH"} | ({"SERVING_SEARCH": setting} if setting else {})
    script = ("from mkdocs.config import load_config; "
              "print(load_config(config_file='mkdocs.yml').plugins['material/search'].config.enabled)")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env={**env, "NO_MKDOCS_2_WARNING": "1"},
                          capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.split()[-1] == str(indexed)
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '"SERVING_SEARCH": os.environ.get("SERVING_SEARCH", "false")' in noxfile  # serve: off unless asked
    assert '"SERVING_SEARCH": "true"' in noxfile  # build, tests, bench: on


def test_the_build_is_one_plugin_registered_by_the_package() -> None:
    """The whole build is the `serving` plugin, found through the package's entry point, listed first, with no hook
    beside it."""
    from importlib.metadata import entry_points

    from mkdocs.plugins import BasePlugin

    from snippets.build.plugin import ServingPlugin

    (ep,) = [e for e in entry_points(group="mkdocs.plugins") if e.name == "serving"]
    assert ep.load() is ServingPlugin and issubclass(ServingPlugin, BasePlugin)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # noqa: S506 - !!python tags unused
    first = config["plugins"][0]
    assert (first if isinstance(first, str) else next(iter(first))) == "serving" and "hooks" not in config
    assert not (ROOT / "hooks").exists() and not (ROOT / "serving_build").exists()


def _run(site_copy: Path, script: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(site_copy), "NO_MKDOCS_2_WARNING": "1", "SOURCE_DATE_EPOCH": "1700000000"}
    env.pop("SERVING_DATA_DIR", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=site_copy, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [ln for ln in proc.stdout.splitlines() if ln[:1] in "012"]


@pytest.mark.build
def test_a_rebuild_in_one_process_shows_every_edit_and_keeps_no_state(site_copy: Path, built: Build) -> None:
    """As `mkdocs serve` rebuilds: the same plugin object, builds in one process. Block state never leaks from page
    to page or build to build; an edit under snippets/ (every module of snippets/ imported anew) and one under data/
    (which the notebook reads too) show in the next build. On a small copy (tests/build/small_site.py): the two
    pages and the notebook it reads, every other page a stub, the sizing grid's searches off."""
    keep_only(site_copy, built, ("index.md", "interconnect.md"), notebook=True)
    without_sizing_searches(site_copy)
    for page in ("index.md", "interconnect.md"):
        path = site_copy / "docs" / page
        path.write_text(path.read_text() + BLOCK)
    site = site_copy / "site"
    lines = _run(site_copy, f"""
        import gc, json, os
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        home, data = {str(site_copy / "snippets/pages/home.py")!r}, {str(site_copy / "data/policies.yaml")!r}
        name = "notebook-memory[The engine's pool][Value]"
        for run in range(2):
            cfg = load_config(config_file={str(site_copy / "mkdocs.yml")!r}, site_dir={str(site)!r})
            if run == 0:
                cfg.plugins.on_startup(command="serve", dirty=False)
            build(cfg)
            for page in ("index.html", "interconnect/index.html"):
                html = open(os.path.join({str(site)!r}, page)).read()
                print(run, page, "fresh" if "block-state-fresh" in html else
                      "leaked" if "block-state-leaked" in html else "missing")
            html = open(os.path.join({str(site)!r}, "index.html")).read()
            print(run, "row_count", html.split('data-name="row_count"')[1].split(">")[1].split("<")[0])
            figs = json.load(open(os.path.join({str(site)!r}, "numbers.json")))["notebooks/size-your-deployment.py"]
            print(run, "pool", next(f["text"] for f in figs["figures"] if f["name"] == name))
            # nothing a build computed outlives it (markdown-exec keeps every Markdown instance, which holds the
            # page cursor and the blocks' runner: BuildContext.release lets go of what they reach)
            gc.collect()
            print(run, "page models alive", sum(any(c.__name__ == "Page" and c.__module__ == "snippets.pages.base"
                                                    for c in type(o).__mro__) for o in gc.get_objects()))
            # edits between rebuilds, as a contributor makes them while `serve` runs
            for path, old, new in ((home, "fmt.count(len(rows), ", "fmt.count(len(rows) * 2, "),
                                   (data, "utilization: 0.9", "utilization: 0.895")):
                text = open(path).read()
                open(path, "w").write(text.replace(old, new, 1))
        # each build ends by starting the notebook's kernel for the next one to take (that the next execution runs
        # in it: tests/unit/test_notebooks.py); none outlives serve
        spare = list(cfg.plugins["serving"].kernels.spare.values())
        print(2, "kernels waiting", len(spare), all(k.is_alive() for k in spare))
        cfg.plugins.on_shutdown()
        print(2, "after shutdown", len(cfg.plugins["serving"].kernels.spare), any(k.is_alive() for k in spare))
    """)
    # the engine's pool: the 79.22 GiB CUDA reports x 0.9 = 71.3 GiB, then x 0.895 = 70.9 GiB (0.89 makes a claim on
    # the parallelism page false, and 0.91 gives the flagship's TP2 its 1.25 GiB sequence at 256 sequences, so the HBM
    # page's refusal no longer holds: either stops the build, as it should)
    assert lines == ["0 index.html fresh", "0 interconnect/index.html fresh", "0 row_count 14", "0 pool 71.3 GiB",
                     "0 page models alive 0",
                     "1 index.html fresh", "1 interconnect/index.html fresh", "1 row_count 28", "1 pool 70.9 GiB",
                     "1 page models alive 0", "2 kernels waiting 1 True", "2 after shutdown 0 False"]


def _differences(cmp: filecmp.dircmp[str], prefix: str = "") -> list[str]:
    out = [prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files]
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    out += [prefix + n for n in mismatch + errors]
    for name, sub in cmp.subdirs.items():
        out += _differences(sub, f"{prefix}{name}/")
    return out


@pytest.mark.build
def test_builds_in_one_process_with_every_module_imported_twice_are_byte_identical(site_copy: Path) -> None:
    """Every module of snippets/ imported, the whole site built cold (the notebook executed, every cache empty); every
    module imported anew and the site built again (caches warm); then built a third time with those same modules: the
    three sites are the same, byte for byte, in one process. Importing a module twice changes nothing, no module keeps
    state that a build could leave for the next, and the caches change nothing but time. (The sizing grid's searches
    run in worker processes, apart from this one, and cold they would cost minutes: off here;
    tests/unit/test_sizing_build.py shows a cached answer equals a searched one.)"""
    without_sizing_searches(site_copy)
    lines = _run(site_copy, f"""
        import importlib, pkgutil, shutil, sys
        from mkdocs.commands.build import build
        from mkdocs.config import load_config

        def import_all():
            import snippets
            for m in pkgutil.walk_packages(snippets.__path__, "snippets."):
                importlib.import_module(m.name)

        shutil.rmtree({str(site_copy / ".cache")!r}, ignore_errors=True)  # cold: the notebook executed anew
        for run in range(3):
            if run == 1:  # every module imported anew
                for name in [m for m in sys.modules if m == "snippets" or m.startswith("snippets.")]:
                    del sys.modules[name]
            import_all()
            build(load_config(config_file={str(site_copy / "mkdocs.yml")!r}, site_dir={str(site_copy)!r} + f"/site-{{run}}"))
            print(run, "built")
    """)
    assert lines == ["0 built", "1 built", "2 built"]
    for run in (1, 2):
        assert _differences(filecmp.dircmp(site_copy / "site-0", site_copy / f"site-{run}")) == [], run
    assert (site_copy / "site-0" / "numbers.json").stat().st_size > 100_000


@pytest.mark.build
def test_a_rebuild_converts_again_only_the_pages_that_read_an_edited_table(site_copy: Path, built: Build) -> None:
    """`mkdocs serve`'s rebuilds keep a page whose source and inputs are unchanged (snippets/build/pagecache.py): after
    an edit of one value, the pages that read its table are converted anew and show it, the others are kept, and
    every file of the site is byte-identical to a clean build of the edited tree. The interconnect page reads the
    runtime reserve by id; the accelerators reference page reaches the A100 40GB's power only by walking the table.
    On a small copy (tests/build/small_site.py), the notebook a stub, the sizing grid's searches off."""
    kept = ("index.md", "interconnect.md", "reference/accelerators.md")
    keep_only(site_copy, built, kept)
    without_sizing_searches(site_copy)
    site = site_copy / "site"
    edits = [("data/assumptions.yaml", 'value: {value: 12.5, unit: "%"}', 'value: {value: 12.4, unit: "%"}'),
             ("data/accelerators.yaml", "  power: {value: 400, unit: W}", "  power: {value: 399, unit: W}")]
    probes = [("interconnect/index.html", 'data-name="reserve" data-unit="%" data-value="12.4"'),
              ("reference/accelerators/index.html", 'A100 40GB SXM&#93;&#91;Power&#93;" data-value="399"')]
    lines = _run(site_copy, f"""
        import os
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        kept, edits, probes = {kept!r}, {edits!r}, {probes!r}
        for run in range(3):
            cfg = load_config(config_file={str(site_copy / "mkdocs.yml")!r}, site_dir={str(site)!r})
            if run == 0:
                cfg.plugins.on_startup(command="serve", dirty=False)
            build(cfg)
            cache = cfg.plugins["serving"].page_cache
            print(run, "converted", *[p for p in cache.converted if p in kept])
            print(run, "kept", *[p for p in cache.replayed if p in kept])
            for page, probe in probes:
                print(run, page, probe in open(os.path.join({str(site)!r}, page)).read())
            if run < 2:
                path, old, new = edits[run]
                text = open(path).read()
                assert old in text, old
                open(path, "w").write(text.replace(old, new, 1))
        cfg.plugins.on_shutdown()
    """)
    assert lines == [
        "0 converted index.md interconnect.md reference/accelerators.md", "0 kept",
        "0 interconnect/index.html False", "0 reference/accelerators/index.html False",
        # the runtime reserve: of the three, only the interconnect page reads data/assumptions.yaml
        "1 converted interconnect.md", "1 kept index.md reference/accelerators.md",
        "1 interconnect/index.html True", "1 reference/accelerators/index.html False",
        # a chip's power: every page that read the accelerators (the reference page by walking them)
        "2 converted index.md interconnect.md reference/accelerators.md", "2 kept",
        "2 interconnect/index.html True", "2 reference/accelerators/index.html True"]
    fresh = run_build(site_copy, "-d", "site-fresh")
    assert fresh.returncode == 0, fresh.output
    assert _differences(filecmp.dircmp(site, site_copy / "site-fresh")) == []
