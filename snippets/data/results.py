"""What is computed from the engine's inputs and the calibration's data alone, kept by their content: the time
models' error bands and the time model's fit.

The engine reads a catalog only as `export` writes it (`snippets.data.export`): its records are made from that
mapping and nothing else. The bands `export` adds to it (`snippets.calibration.band_table`: the test measurements
predicted by the engine's time model) and the fit of the time model's factors (`snippets.calibration.fit`, which
the reference predictions page reads through `snippets.pages.calibrated.fit`) are therefore functions of exactly:

- the export of the catalog without the bands (`export._export`: every entry the engine reads, in base units);
- `data/measurements.yaml` as written (the rows both are computed from), `data/policies.yaml` (the time model's
  entry as the fit reads it: the ranges it searches are not exported) and `data/efficiencies.yaml` (which chips
  have measured kernels, as the fit reads it);
- the code under `snippets/engine/` and `snippets/data/` (the loader, the schema, the export, this module) and
  `snippets/calibration.py`, and the Python that runs it.

`inputs_key` hashes exactly these. An edit that reaches none of them (an assumption, a source, a note, a page)
leaves the key as it was, and the build reads what the last build kept in its cache directory
(`engine-results-<key>.json`, written by `snippets.build.plugin` in `on_post_build`); any edit that reaches one of
them makes a new key, and everything is computed anew. tests/unit/test_results.py edits each kind of input.

`EngineResults.get(name, compute)` is the one way in: `name` must say, with the key, everything `compute` depends on
(`export.export` names the bands by their time model; the fit is the reference scenario's). Values are JSON,
handed out as read back from their JSON text, the first time as on a reuse, so a cold build and a warm one read the
same values (JSON writes a float so that it reads back equal).

Measured before keeping more this way: the engine's searches, pickled, took more than half as long to read back as
to compute (thousands of records each, and the page's sources would have had to be noted again from a list), so
they are computed every build.

The store belongs to one catalog (`Catalog.derived`) and goes with it; `results_of` makes one that keeps nothing
where the build put none (a test, the command line, the sizing grid's workers, a notebook run by a reader). A
notebook the build executes reads what the last build kept (`loader.load`'s `results_dir`, set for its kernel), and
writes nothing: the build that runs it saves what it computed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snippets.data.loader import Catalog

PREFIX = "engine-results-"
SUFFIX = ".json"
CODE = (("snippets/engine", "*.py"), ("snippets/data", "**/*.py"))
"""The code the results are computed by, besides `CODE_FILES`: folders of the package and the files in them."""
CODE_FILES = ("snippets/__init__.py", "snippets/calibration.py")
DATA_FILES = ("measurements.yaml", "policies.yaml", "efficiencies.yaml")
"""The files of data/ read as written, besides the export: the rows the bands and the fit are computed from, and the
time model's entry and the measured efficiencies as the fit reads them (its stated ranges are not exported)."""


def inputs_key(cat: Catalog, root: Path) -> str:
    """The hash of what the results depend on (the module's docstring): the export without the bands, the
    measurements as written, the code under `CODE` and `CODE_FILES` of `root`, and the Python version."""
    from snippets.data.export import _export
    from snippets.engine.codec import encode

    digest = hashlib.sha256()
    digest.update(sys.version.encode() + b"\0")
    digest.update(json.dumps(encode(_export(cat.loaded)), sort_keys=True).encode() + b"\0")
    for name in DATA_FILES:
        path = cat.loaded.directory / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"\0missing") + b"\0")
    paths = [p for folder, pattern in CODE for p in sorted((root / folder).glob(pattern))
             if p.is_file() and "__pycache__" not in p.parts]
    paths += [root / f for f in CODE_FILES]
    for path in paths:  # a file missing from the root is keyed as missing
        body = path.read_bytes() if path.is_file() else b"\0missing"
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16]


@dataclass
class EngineResults:
    """The results of one catalog's engine inputs, by name, as JSON text: those read from the cache (`stored`) and
    those computed by this build (`fresh`)."""

    key: str = ""
    """`inputs_key` of the catalog; "" for a store that keeps nothing (outside a build)."""
    stored: dict[str, str] = field(default_factory=dict)
    fresh: dict[str, str] = field(default_factory=dict)
    hits: int = 0
    """How many `get`s a stored result answered (the tests read it)."""
    reads: frozenset[str] = frozenset()
    """The tables of data/ `key` hashes (what the export without the bands read, and `DATA_FILES`): a result handed
    out, stored or not, depends on them, and `results_of` notes them as read (`loader.ReadLog`). None for a store
    that keeps nothing: what its computations read is noted as they read it."""

    def get(self, name: tuple[str, ...], compute: Callable[[], Any]) -> Any:
        """The result called `name` (a tuple of strings): stored, or computed now (a JSON value)."""
        if not all(isinstance(part, str) for part in name):
            raise TypeError(f"engine results: a name is a tuple of strings, not {name!r}")
        if not self.key:  # a store that keeps nothing: as without one
            return compute()
        label = json.dumps(name)
        text = self.stored.get(label)
        if text is not None:
            try:
                value = json.loads(text)
            except ValueError:  # a damaged entry: computed anew, and replaced
                del self.stored[label]
            else:
                self.hits += 1
                return value
        text = self.fresh.get(label)
        if text is None:
            text = self.fresh[label] = json.dumps(compute(), allow_nan=False)
        return json.loads(text)

    def path(self, cache_dir: Path) -> Path:
        return cache_dir / f"{PREFIX}{self.key}{SUFFIX}"

    @classmethod
    def load(cls, cat: Catalog, root: Path, cache_dir: Path) -> EngineResults:
        """The store of `cat`'s engine inputs, with what a build of the same inputs kept in `cache_dir`. Where the
        catalog cannot be exported (data the engine cannot read: an id it looks up, renamed), a store that keeps
        nothing: the pages that read the engine report the error with the build's other errors."""
        try:
            with cat.read_log.frame() as reads:
                key = inputs_key(cat, root)
        except Exception:  # reported by the pages, which compute the same export
            return cls()
        out = cls(key, reads=frozenset(reads | {name.removesuffix(".yaml") for name in DATA_FILES}))
        path = out.path(cache_dir)
        try:
            stored = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except ValueError:  # a damaged file: computed anew, and replaced
            stored = {}
        if isinstance(stored, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in stored.items()):
            out.stored = stored
        return out

    def save(self, cache_dir: Path) -> None:
        """Keep the results in `cache_dir` when this build computed any, and remove those of other keys."""
        if not self.key or not self.fresh:
            return
        cache_dir.mkdir(parents=True, exist_ok=True)
        path = self.path(cache_dir)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**self.stored, **self.fresh}, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
        for old in cache_dir.glob(f"{PREFIX}*{SUFFIX}"):
            if old != path:
                old.unlink(missing_ok=True)


def results_of(cat: Catalog) -> EngineResults:
    """The store of `cat` (`Catalog.derived`; a view of the catalog shares it): the build's, or one that keeps
    nothing."""
    derived = cat.loaded.derived
    found = derived.get(EngineResults)
    if not isinstance(found, EngineResults):
        found = derived[EngineResults] = EngineResults()
    cat.read_log.note_all(found.reads)
    return found
