"""The sizing grid's latency targets (reference/sizing.json and .csv), searched beside the build and kept by content.

Each record of the grid carries the cheapest configuration meeting the scenario's latency target: one engine search
per record (`snippets.pages.reference_sizing.target_queries`), over a thousand of them, several times the CPU of the
rest of the build. So, at the start of a build (`SizingTargets.start`, from `on_config`):

- its key is the hash of every file the searches read: data/, the engine (snippets/engine/), the loader and its
  conversion to the engine's catalog (snippets/data/), and the page code that states the query and shapes its answer
  (`KEYED_FILES`); a result already cached under that key (`<cache_dir>/sizing-targets-<key>.json`) is read as it is;
- otherwise the searches run in worker processes (`spawn`: a fresh interpreter each, importing the build's code
  and loading the build's data/; at a lower priority than the build, so they take the CPU its pages leave), while
  the build converts its pages; `result` (from `on_post_build`) waits for them, writes the cache and removes the
  entries of other keys.

A cold clone (CI) searches everything: the cache only spares a rebuild the searches of unchanged data and code. The
plugin's `sizing_targets` option takes them from the cache only (`cached`: what `mkdocs serve` does on a rebuild, so
a data edit shows at once) or not at all (`off`: the builds of the tests that edit data/ for another purpose); the
sizing page and its records then say the targets were not searched.
Nothing outlives the build: `close` stops the workers of a failed build. The cache is a file, not a folder, beside
the notebooks' folders (`snippets.build.notebooks` removes the folders it did not use).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snippets.data import Catalog

KEYED = (("data", (".yaml", ".yml")), ("snippets/engine", (".py",)), ("snippets/data", (".py",)))
"""The folders, and the kinds of file in them, the searches read."""
KEYED_FILES = ("snippets/pages/reference_sizing.py", "snippets/pages/sizing_target.py", "snippets/pages/scenario.py")
"""The page code that lists the searches and shapes their answers."""
PREFIX = "sizing-targets-"
MODELS = ("reference_sizing",)
"""The page models that read the searches (`ready` before their page's blocks run)."""
CHUNKS_PER_WORKER = 4
"""Queries are dealt round-robin into this many chunks a worker, so no worker waits on another's slow tail."""

Query = tuple[str, str, str]
Found = dict[Query, dict[str, Any] | None]


def cache_key(root: Path) -> str:
    """The hash of what the searches read (`KEYED`, `KEYED_FILES`)."""
    digest = hashlib.sha256()
    paths = [p for folder, suffixes in KEYED for p in sorted((root / folder).rglob("*"))
             if p.suffix in suffixes and p.is_file() and "__pycache__" not in p.parts]
    paths += [root / f for f in KEYED_FILES]
    for path in paths:  # a file missing from the root (a site without the page code) is keyed as missing
        body = path.read_bytes() if path.is_file() else b"\0missing"
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16]


def _lower_priority() -> None:
    os.nice(10)


def _search(data_dir: str, queries: list[Query]) -> list[tuple[Query, dict[str, Any] | None]]:
    """One worker's share: the build's data loaded anew, each query searched (`targets_of`)."""
    from snippets.data import load
    from snippets.pages.reference_sizing import targets_of

    found = targets_of(load(Path(data_dir)), queries)
    return list(found.items())


def _encode(found: Found) -> str:
    return json.dumps([[list(q), t] for q, t in found.items()], sort_keys=True)


def _decode(text: str) -> Found:
    return {(q[0], q[1], q[2]): t for q, t in json.loads(text)}


@dataclass
class SizingTargets:
    """The grid's searches of one build."""

    root: Path
    data_dir: Path
    cache_dir: Path
    workers: int = 0
    """Worker processes (0: one per CPU)."""
    mode: str = "search"
    """`search` (the cache first), `cached` (the cache only) or `off`: the plugin's `sizing_targets` option."""
    not_searched: bool = False
    """Nothing was searched or read from the cache (`off`, or `cached` on a miss): the page says so."""
    key: str = ""
    found: Found | None = None
    pool: ProcessPoolExecutor | None = None
    futures: list[Future[list[tuple[Query, dict[str, Any] | None]]]] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    skipped: bool = False
    """The queries could not be listed: nothing was searched here (`start`)."""

    @property
    def path(self) -> Path:
        return self.cache_dir / f"{PREFIX}{self.key}.json"

    def start(self, queries: Callable[[], list[Query]]) -> None:
        """Read the cached searches of `queries()`, or start searching them in worker processes. Where the queries
        cannot be listed (data the page models cannot read: an id they look up, renamed), nothing starts: the
        sizing page computes them itself (`grid_targets`), and reports the error with the other pages'."""
        if self.mode == "off":
            self.not_searched = True
            return
        self.key = cache_key(self.root)
        if self.mode == "cached" and not self.path.is_file():  # nothing to read: the queries are not needed
            self.not_searched = True
            return
        try:
            self.queries = list(queries())
        except Exception:  # reported by the page that computes them, with the build's other errors
            self.skipped = True
            return
        if self.path.is_file():
            found = _decode(self.path.read_text(encoding="utf-8"))
            if set(found) == set(self.queries):
                self.found = found
                return
        if self.mode == "cached":
            self.not_searched = True
            return
        n = self.workers or os.cpu_count() or 1
        chunks = [c for c in (self.queries[i::n * CHUNKS_PER_WORKER] for i in range(n * CHUNKS_PER_WORKER)) if c]
        self.pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_lower_priority)
        self.futures = [self.pool.submit(_search, str(self.data_dir), c) for c in chunks]

    def result(self) -> Found:
        """Every query's answer, waiting for the workers; a fresh result is written to the cache, and the entries of
        other keys are removed."""
        if self.found is not None:
            return self.found
        found: Found = {}
        try:
            for f in self.futures:
                found.update(f.result())
        finally:
            self.close()
        self.found = {q: found[q] for q in self.queries}
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(_encode(self.found), encoding="utf-8")
        tmp.replace(self.path)
        for old in self.cache_dir.glob(f"{PREFIX}*.json"):
            if old != self.path:
                old.unlink(missing_ok=True)
        return self.found

    def ready(self, cat: Catalog) -> None:
        """Hand the searches to the page models (`reference_sizing.grid_targets` reads them from the catalog),
        waiting for the workers: before the sizing page's blocks run (their time limit would count the wait) and
        before the records are written."""
        from snippets.pages.reference_sizing import NOT_SEARCHED, TARGETS

        if self.not_searched:
            cat.derived[TARGETS] = NOT_SEARCHED
        elif not self.skipped:
            cat.derived[TARGETS] = self.result()

    def state(self) -> str | None:
        """What `ready` hands the page models, as a key: not searched, or the searches of `key` (a function of data/,
        the engine and the page code, `cache_key`); None where the page models compute them (`skipped`)."""
        if self.not_searched:
            return "not searched"
        if self.skipped:
            return None
        return f"searched {self.key}"

    def close(self) -> None:
        """Stop the workers (a failed build's, or after `result`)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.futures = []
