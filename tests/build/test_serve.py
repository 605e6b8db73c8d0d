"""Live preview: what `mkdocs serve` watches, and that block state never survives a page or a rebuild."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ..conftest import ROOT

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


@pytest.mark.build
def test_rebuilds_in_one_process_start_fresh(site_copy: Path) -> None:
    # the same block on two pages (sessions are refused: test_a_block_session_is_refused), and the site
    # built twice in one process, as `serve` does: block state never leaks, and an edit under snippets/ shows on the next rebuild
    for page in ("index.md", "interconnect.md"):
        path = site_copy / "docs" / page
        path.write_text(path.read_text() + BLOCK)
    script = textwrap.dedent(f"""
        import os
        os.environ["NO_MKDOCS_2_WARNING"] = "1"
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        home = {str(site_copy / "snippets/pages/home.py")!r}
        for run in range(2):
            cfg = load_config(config_file={str(site_copy / "mkdocs.yml")!r}, site_dir={str(site_copy / "site")!r})
            build(cfg)
            for page in ("index.html", "interconnect/index.html"):
                html = open(os.path.join({str(site_copy / "site")!r}, page)).read()
                print(run, page, "fresh" if "block-state-fresh" in html else
                      "leaked" if "block-state-leaked" in html else "missing")
            html = open(os.path.join({str(site_copy / "site")!r}, "index.html")).read()
            print(run, "node_gpus", html.split('data-name="node_gpus"')[1].split(">")[1].split("<")[0])
            # an edit under snippets/ between rebuilds, as a contributor makes while `serve` runs
            text = open(home).read()
            open(home, "w").write(text.replace("fmt.count(node.gpus)", "fmt.count(node.gpus * 2)"))
    """)
    env = {**os.environ, "PYTHONPATH": str(site_copy)}  # import snippets from the copy, which the test edits
    proc = subprocess.run([sys.executable, "-c", script], cwd=site_copy, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln[:1] in "01"]
    assert lines == [
        "0 index.html fresh", "0 interconnect/index.html fresh", "0 node_gpus 8",
        "1 index.html fresh", "1 interconnect/index.html fresh", "1 node_gpus 16",
    ]


@pytest.mark.build
def test_serve_keeps_the_notebook_worker_and_shows_a_data_edit(site_copy: Path) -> None:
    # as `mkdocs serve` runs: on_startup("serve") once, then builds in one process. A data edit
    # re-executes the notebook (its outputs follow the data) in the same worker process, which
    # outlives each rebuild and exits at shutdown.
    script = textwrap.dedent(f"""
        import json, os, sys
        os.environ["NO_MKDOCS_2_WARNING"] = "1"
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        site = {str(site_copy / "site")!r}
        data = {str(site_copy / "data" / "policies.yaml")!r}
        name = "notebook-memory[The engine's pool][Value]"
        first = None
        pids = []
        for run in range(2):
            cfg = load_config(config_file={str(site_copy / "mkdocs.yml")!r}, site_dir=site)
            if first is None:
                first = cfg
                cfg.plugins.on_startup(command="serve", dirty=False)
            build(cfg)
            from snippets.build import notebooks
            worker = notebooks.worker()
            pids.append(worker.proc.pid if worker.proc and worker.proc.poll() is None else None)
            figs = json.load(open(os.path.join(site, "numbers.json")))["notebooks/size-your-deployment.py"]["figures"]
            print(run, "pool", next(f["text"] for f in figs if f["name"] == name))
            text = open(data).read()
            open(data, "w").write(text.replace("utilization: 0.9", "utilization: 0.91", 1))
        print("same worker", pids[0] is not None and pids[0] == pids[1])
        proc = worker.proc
        first.plugins.on_shutdown()
        print("worker exited", proc.poll() is not None)
    """)
    env = {**os.environ, "PYTHONPATH": str(site_copy)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=site_copy, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln[:1] in "01" or ln.startswith(("same", "worker"))]
    # the engine's pool: 79.22 GiB reported by CUDA x 0.9 = 71.3 GiB, then x 0.91 = 72.1 GiB (a cut to 0.89 makes
    # claims on the parallelism page false, as it should: the build stops)
    assert lines == ["0 pool 71.3 GiB", "1 pool 72.1 GiB", "same worker True", "worker exited True"]


_EARLY = '''
import json, os, sys
os.environ["NO_MKDOCS_2_WARNING"] = "1"
from mkdocs.commands.build import build
from mkdocs.config import load_config
from snippets.build import notebooks
cfg = load_config(config_file={config!r}, site_dir={site!r})
proc = notebooks.worker().proc
print("worker running at config load", proc is not None and proc.poll() is None)
print("nbconvert imported at config load", "nbconvert" in sys.modules)
build(cfg)
print("nbconvert imported by the build", "nbconvert" in sys.modules)
html = open(os.path.join({site!r}, "notebooks/size-your-deployment/index.html")).read()
print("notebook outputs", ' jp-OutputArea-output jp-OutputArea-executeResult' in html)
'''


@pytest.mark.build
def test_the_worker_starts_as_the_config_is_read_and_the_build_never_imports_nbconvert(site_copy: Path) -> None:
    """The `serving` plugin (listed first) starts the worker while MkDocs reads mkdocs.yml,
    and defers mkdocs-jupyter's nbconvert import: a cold build executes the notebook in the worker
    and its own process never loads nbconvert. With execution off, the plugin converts the notebook
    in this process, and the deferred import is loaded on that first use."""
    import shutil

    shutil.rmtree(site_copy / ".cache", ignore_errors=True)  # cold: the notebook is executed
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from bench import write_noexec_config  # the bench's execution-off configuration
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    off = write_noexec_config(site_copy)
    results = {}
    for name, config in (("on", site_copy / "mkdocs.yml"), ("off", off)):
        script = _EARLY.format(config=str(config), site=str(site_copy / f"site-{name}"))
        proc = subprocess.run([sys.executable, "-c", script], cwd=site_copy, capture_output=True, text=True,
                              timeout=600, env={**os.environ, "PYTHONPATH": str(site_copy)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[name] = [ln for ln in proc.stdout.splitlines() if ln.endswith(("True", "False"))]
    assert results["on"] == ["worker running at config load True", "nbconvert imported at config load False",
                             "nbconvert imported by the build False", "notebook outputs True"]
    # execution off: the worker is started too (the plugin cannot know yet), then stopped in
    # on_config; the page is converted here, without outputs
    assert results["off"] == ["worker running at config load True", "nbconvert imported at config load False",
                              "nbconvert imported by the build True", "notebook outputs False"]


def test_the_build_is_one_plugin_registered_by_the_package() -> None:
    """The whole build is the `serving` plugin, found through the package's entry point, listed first (it starts
    the notebook worker as MkDocs reads mkdocs.yml), with no hook beside it."""
    from importlib.metadata import entry_points

    from mkdocs.plugins import BasePlugin

    from snippets.build.plugin import ServingPlugin

    (ep,) = [e for e in entry_points(group="mkdocs.plugins") if e.name == "serving"]
    assert ep.load() is ServingPlugin and issubclass(ServingPlugin, BasePlugin)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # noqa: S506 - !!python tags unused
    assert config["plugins"][0] == "serving" and "hooks" not in config
    assert not (ROOT / "hooks").exists() and not (ROOT / "serving_build").exists()
