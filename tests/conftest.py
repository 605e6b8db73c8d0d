"""Shared fixtures: the catalog, the built site, and builds of modified copies of the site."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

from snippets.data import Catalog, load

# the browser tests' page-weight report, printed at the end of the session that wrote it
from .browser.report import pytest_sessionstart, pytest_terminal_summary  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
SITE_PARTS = ("mkdocs.yml", "docs", "data", "snippets")


@functools.cache
def repository_catalog() -> Catalog:
    """The repository's data/, loaded once per test process: the `catalog` fixture and the modules that read it at
    import share it, and with it what is derived from it once (the engine's records, the calibration's rows)."""
    return load(ROOT / "data")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return repository_catalog()


@dataclass
class Build:
    root: Path
    returncode: int
    output: str
    site: Path

    def page(self, rel: str) -> BeautifulSoup:
        return BeautifulSoup((self.site / rel).read_text(encoding="utf-8"), "html.parser")


def copy_site(dest: Path) -> Path:
    """Copy what a build reads (config, pages, data, the package with its plugin) into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in SITE_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part)
        else:
            shutil.copy2(src, dest / part)
    return dest


def edited_data(tmp_path: Path, edits: list[tuple[str, str, str]]) -> Path:
    """A copy of data/ under `tmp_path` with each (file, old, new) edit made once: `old` must be in the file."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    for file, old, new in edits:
        path = data / file
        text = path.read_text()
        assert old in text, (file, old)
        path.write_text(text.replace(old, new, 1))
    return data


def without_sizing_searches(root: Path) -> None:
    """Turn the sizing grid's searches off in a copy's mkdocs.yml (`sizing_targets: off`): a test that edits data/
    for another purpose would otherwise search the whole grid again, minutes of CPU, for a page it does not read."""
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    if "  - serving:\n" not in text:
        raise AssertionError("mkdocs.yml no longer lists the serving plugin as '  - serving:'")
    config.write_text(text.replace("  - serving:\n", "  - serving:\n      sizing_targets: \"off\"\n", 1), encoding="utf-8")


def run_build(root: Path, *extra: str) -> Build:
    """`mkdocs build --strict` in `root`, as CI runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SOURCE_DATE_EPOCH": "1700000000"}
    env.pop("SERVING_DATA_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "site", *extra],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )
    return Build(root, proc.returncode, proc.stdout + proc.stderr, root / "site")


@pytest.fixture
def site_copy(tmp_path: Path, built: Build) -> Path:
    """A fresh copy of the site sources, to modify and build.

    It starts with the caches of the session's build (the executed notebooks, keyed on each notebook and on
    data/ and snippets/, and mkdocs-jupyter's conversions): a copy that changes none of those renders the
    notebook from the cache instead of executing it again; one that changes any executes it anew.
    """
    dest = copy_site(tmp_path / "copy")
    for cache in ("serving", "mkdocs-jupyter"):
        if (built.root / ".cache" / cache).is_dir():
            shutil.copytree(built.root / ".cache" / cache, dest / ".cache" / cache)
    return dest


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The site as built from the repository: `$SERVING_SITE_DIR` if nox built it already, else built here."""
    given = os.environ.get("SERVING_SITE_DIR")
    if given and (ROOT / given / "index.html").is_file():
        return Build(ROOT, 0, "", ROOT / given)
    root = copy_site(tmp_path_factory.mktemp("built") / "copy")
    b = run_build(root)
    assert b.returncode == 0, b.output
    return b


def site_price(catalog: Catalog, accelerator: str) -> float:
    """The hourly price per GPU the site uses for `accelerator` (data/prices.yaml's one entry marked `site_uses`),
    in US dollars: tests work costs from it, whichever provider data/ picks."""
    (price,) = [p for p in catalog.prices.values() if p.site_uses and p.accelerator == accelerator]
    return float(price.price.value)


def figures(soup: BeautifulSoup) -> dict[str, Tag]:
    """Every computed figure on a page, by name."""
    return {el["data-name"]: el for el in soup.select("span.sa-fig")}


def value(soup: BeautifulSoup, name: str) -> float:
    found = figures(soup)
    assert name in found, f"no figure {name!r} on the page; have {sorted(found)[:20]}..."
    return float(found[name]["data-value"])


def text(soup: BeautifulSoup, name: str) -> str:
    return figures(soup)[name].get_text()


Mutator = Callable[[Path], None]


def _xdist_group(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return None
    return str(marker.args[0] if marker.args else marker.kwargs["name"])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the suite for `nox -s tests` (`pytest -n N --dist worksteal`), which hands each of N workers one
    contiguous share of this list (the first N-th to the first worker, and so on), then lets an idle worker take the
    end of a busy one's queue.

    The long tests are the browser sweeps (sweep.py: each page loaded once per reading, shared by the workers) and
    the builds of modified copies (tests/build/). Run late, they leave one worker on a long test while the others
    are idle; so each share starts with its part of the browser tests (every N-th: the workers take different
    readings, or split the pages of one), the last share with the builds, and the short tests fill every queue
    behind them, where stealing evens out the end. Browser tests marked with one `xdist_group` (xdist's marker for
    tests that must share a worker) share a module-scoped page that is seconds of CPU to open (the calculator's
    started engine, the sizing grid's page): each such group goes whole into the share with the fewest browser tests,
    after its sweep tests, so the page is opened once, not once per worker (each worker opened both, every N-th
    test being theirs: 13-15 s a Pyodide start here). Without xdist the tests run in this order too; none depends
    on it."""
    workers = getattr(config.option, "numprocesses", None)
    n = workers if isinstance(workers, int) and workers > 1 else 2
    browser = [i for i in items if i.get_closest_marker("browser")]
    build = [i for i in items if i.get_closest_marker("build") and not i.get_closest_marker("browser")]
    long = {id(i) for i in browser + build}
    short = [i for i in items if id(i) not in long]
    groups: dict[str, list[pytest.Item]] = {}
    for i in browser:
        name = _xdist_group(i)
        if name is not None:
            groups.setdefault(name, []).append(i)
    heads = [[i for i in browser if _xdist_group(i) is None][k::n] for k in range(n)]
    for group in sorted(groups.values(), key=len, reverse=True):
        min(heads, key=len).extend(group)
    heads[-1] += build
    ordered: list[pytest.Item] = []
    for k, head in enumerate(heads):
        end = len(items) * (k + 1) // n  # where xdist's share k ends
        ordered += head
        take = max(0, end - len(ordered)) if k < n - 1 else len(short)
        ordered += short[:take]
        short = short[take:]
    items[:] = ordered
