"""Read data/: a YAML loader that accepts only the scalar forms the schema means, errors with file, line and
column, and the `Catalog` it returns. `load()` reads the files every time it is called: whoever holds a
catalog (the build's context, a notebook, the command line) holds what is computed from it too
(`Catalog.derived`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import types
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    TypeAdapter,
    ValidationError,
)

from snippets.data.base import Source, check_text
from snippets.data.checks import _check_references
from snippets.data.errors import DATA_DIR_ENV, FILES, RESULTS_DIR_ENV, DataError
from snippets.data.schema import (
    SCHEMAS,
    Accelerator,
    Assumption,
    ComputeEfficiency,
    DocumentedDeployment,
    Efficiency,
    Fabric,
    Latency,
    LayoutPolicy,
    Measurement,
    MemoryPolicy,
    Model,
    Network,
    Node,
    NVLink,
    NVSwitch,
    PCIe,
    Precision,
    PredictorAccuracy,
    Price,
    Scenario,
    TimeModel,
)

T = TypeVar("T")


# --------------------------------------------------------------------------- reads

class ReadLog:
    """Which of data/'s tables were read, by whom: one per catalog (`Catalog.read_log`), noted into by every table of
    it (`Table`) and by what is computed from it once (`derive`).

    `frame()` opens a record of its own: what is read while it is open (an entry looked up, a table walked, counted
    or asked whether it holds a key; any of these reads the table) is noted in it, and, when it closes, in the
    record it was opened inside. A value `derive` keeps notes what computing it read wherever it is handed out
    again, so a record lists every table its result depends on, whoever computed what first. The build opens one
    per page (`snippets.build.pagecache`). A name that is no data file says that something else was read, which the
    reader of the record must key itself (`snippets.pages.reference_sizing.TARGETS`), or treat as unkeyed."""

    __slots__ = ("frames",)

    def __init__(self) -> None:
        self.frames: list[set[str]] = [set()]
        """The open records, innermost last; the first one, never closed, takes what is read outside any other."""

    def note(self, table: str) -> None:
        self.frames[-1].add(table)

    def note_all(self, tables: Iterable[str]) -> None:
        self.frames[-1].update(tables)

    def open(self) -> set[str]:
        """A new record, innermost: what is read from now on (the set, filled as reads come)."""
        reads: set[str] = set()
        self.frames.append(reads)
        return reads

    def close(self, reads: set[str]) -> None:
        """Close `reads` (and any record still open inside it), each noted in the record it was opened inside."""
        if not any(f is reads for f in self.frames[1:]):
            return
        while True:
            top = self.frames.pop()
            self.frames[-1].update(top)
            if top is reads:
                return

    @contextmanager
    def frame(self) -> Iterator[set[str]]:
        """A record of what is read until the block ends (`open`, `close`)."""
        reads = self.open()
        try:
            yield reads
        finally:
            self.close(reads)


class Table(Mapping[str, T]):
    """One data file's entries, read-only, by id: every lookup, walk, count or membership test notes the table in
    its catalog's `ReadLog`."""

    __slots__ = ("_entries", "_log", "_name")

    def __init__(self, name: str, entries: dict[str, T], log: ReadLog) -> None:
        self._name = name
        self._entries = MappingProxyType(entries)  # read-only even to code that reaches past the table
        self._log = log

    def __getitem__(self, key: str) -> T:
        self._log.note(self._name)
        return self._entries[key]

    def __iter__(self) -> Iterator[str]:
        self._log.note(self._name)
        return iter(self._entries)

    def __len__(self) -> int:
        self._log.note(self._name)
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        self._log.note(self._name)
        return key in self._entries

    def get(self, key: str, default: Any = None) -> Any:
        self._log.note(self._name)
        return self._entries.get(key, default)

    def keys(self) -> KeysView[str]:
        self._log.note(self._name)
        return self._entries.keys()

    def items(self) -> ItemsView[str, T]:
        self._log.note(self._name)
        return self._entries.items()

    def values(self) -> ValuesView[T]:
        self._log.note(self._name)
        return self._entries.values()

    def __eq__(self, other: object) -> bool:
        self._log.note(self._name)
        return dict(self._entries) == (dict(other.items()) if isinstance(other, Mapping) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Table({self._name!r}, {len(self._entries)} entries)"


@dataclass(frozen=True)
class Derived:
    """A value computed once from a catalog (`derive`) and the tables computing it read."""

    value: Any
    reads: frozenset[str]


def derive(cat: Catalog, key: Any, make: Callable[[], T]) -> T:
    """`make()`, computed once per catalog and kept with it (`Catalog.derived`, under `key`); each time it is handed
    out, the tables computing it read are noted in the catalog's `ReadLog` as read again."""
    derived, log = cat.derived, cat.read_log
    hit = derived.get(key)
    if isinstance(hit, Derived):
        log.note_all(hit.reads)
        value: T = hit.value
        return value
    with log.frame() as reads:
        value = make()
    derived[key] = Derived(value, frozenset(reads))
    return value


# --------------------------------------------------------------------------- catalog

@dataclass(frozen=True)
class Catalog:
    """All of `data/`, validated. Look entries up by id with `get`, or by kind with the `of_kind` helpers."""

    accelerators: Mapping[str, Accelerator]
    interconnects: Mapping[str, NVLink | PCIe | NVSwitch | Network | Node | Fabric]
    models: Mapping[str, Model]
    precisions: Mapping[str, Precision]
    assumptions: Mapping[str, Assumption]
    prices: Mapping[str, Price]
    policies: Mapping[str, MemoryPolicy | LayoutPolicy | TimeModel]
    scenarios: Mapping[str, Scenario]
    deployments: Mapping[str, DocumentedDeployment]
    latencies: Mapping[str, Latency]
    efficiencies: Mapping[str, Efficiency | ComputeEfficiency]
    measurements: Mapping[str, Measurement]
    predictors: Mapping[str, PredictorAccuracy]
    directory: Path
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, hash=False, repr=False, kw_only=True)
    """What is computed once from this catalog and lives as long as it does: the engine's records
    (`snippets.data.export.engine_catalog`) and each page model (`snippets.pages.base.Page.of`), each with the tables
    it read (`derive`). A view of the catalog (`snippets.pages.sources.recording`) shares it. Nothing outside a
    catalog keeps such results, so a new catalog (a new build, an edited data/) computes everything anew."""
    read_log: ReadLog = field(default_factory=ReadLog, compare=False, hash=False, repr=False, kw_only=True)
    """Which tables were read (`ReadLog`): `load` makes the tables note into it; a view of the catalog shares it."""

    @property
    def loaded(self) -> Catalog:
        """The catalog as `load` made it: itself (a view of a catalog answers the catalog it views)."""
        return self

    def interconnect(self, entry_id: str, kind: type[T]) -> T:
        entry = self.interconnects[entry_id]
        if not isinstance(entry, kind):
            raise TypeError(f"interconnect {entry_id!r} is a {type(entry).__name__}, not a {kind.__name__}")
        return entry

    def of_kind(self, kind: type[T]) -> dict[str, T]:
        return {k: v for k, v in self.interconnects.items() if isinstance(v, kind)}


def required(value: T | None, what: str) -> T:
    """`value`, or a clear error naming what the data lacks (for fields that are optional in the schema)."""
    if value is None:
        raise ValueError(f"data lacks {what}")
    return value


# libyaml's parser where PyYAML was built with it (its wheels are), else the pure-Python one:
# same documents, same errors with line and column, about seven times faster on data/.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[valid-type,misc]
    """A YAML loader that reads only the scalar forms the schema means, and refuses duplicate keys.

    PyYAML's SafeLoader follows YAML 1.1: `yes`/`no`/`on`/`off` are booleans, `010` is octal 8,
    `12:30` is the sexagesimal 750, `1e2` is a string. This one resolves plain scalars by the YAML
    1.2 core schema, narrowed: `true`/`false`, `null`/`~`, decimal integers without leading zeros,
    decimal floats (`1.5`, `1e2`, `3.35E+1`) and dates written `YYYY-MM-DD`. Anything else is a
    string, which a number, bool or date field then refuses (see `_Strict`), naming the field.
    """


_UniqueKeyLoader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    ("tag:yaml.org,2002:float", r"^[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$", "-+0123456789"),
    ("tag:yaml.org,2002:timestamp", r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "0123456789"),
):
    _UniqueKeyLoader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))
# "" (an empty value) is null too
_UniqueKeyLoader.yaml_implicit_resolvers.setdefault("", []).append(
    ("tag:yaml.org,2002:null", re.compile(r"^$")))


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep)
    return mapping


def _construct_bool(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


def _construct_int(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> int:
    return int(str(loader.construct_scalar(node)))


def _construct_float(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> float:
    return float(str(loader.construct_scalar(node)))


def _construct_date(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> dt.date:
    text = str(loader.construct_scalar(node))
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a date: {exc}", node.start_mark) from None


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_date)


def _marks(node: yaml.Node | None, path: tuple[Any, ...] = (), out: dict[tuple[Any, ...], tuple[int, int]] | None = None,
           ) -> dict[tuple[Any, ...], tuple[int, int]]:
    """(line, column), 1-based, of every key and list item in a composed YAML document, by path."""
    out = {} if out is None else out
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _marks(value_node, (*path, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out[(*path, i)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            _marks(item, (*path, i), out)
    return out


def _where(marks: dict[tuple[Any, ...], tuple[int, int]], path: tuple[Any, ...]) -> tuple[int, int] | None:
    """The mark of `path`, or of its longest prefix the document has (a missing field: its entry)."""
    for n in range(len(path), 0, -1):
        key = tuple(str(p) if not isinstance(p, int) else p for p in path[:n])
        if key in marks:
            return marks[key]
    return None


def _field_path(loc: tuple[int | str, ...], schema_is_union: bool) -> str:
    parts = list(loc)
    if schema_is_union and parts:
        parts = parts[1:]  # drop the discriminator tag pydantic puts first
    return ".".join(str(p) for p in parts) or "(entry)"


def _read_yaml(text: str, shown: str, problems: list[str]) -> tuple[Any, yaml.Node | None, bool]:
    """Parse one file's text: its document, its composed node (`_marks` gives the position of every key from it, when
    an error needs one) and whether it parsed; a syntax error is reported at file:line:column."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        raw = None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" ({shown}:{mark.line + 1}:{mark.column + 1})" if mark is not None else ""
        problems.append(f"{shown}: not valid YAML: {exc.problem or exc.context}{at}")
        return None, None, False
    except yaml.YAMLError as exc:
        problems.append(f"{shown}: not valid YAML: {exc}")
        return None, None, False
    finally:
        loader.dispose()
    return raw, node, True


@dataclass
class Parsed:
    """Each data file's text and its entries as the last `load` given this validated them without a problem, by file
    name: a later `load` given it takes the entries of a file whose text is unchanged instead of parsing and
    validating it again (entries are frozen pydantic models; the references between files are checked every time).
    Held by whoever loads again (the serving plugin, over the rebuilds of `mkdocs serve`), and dropped with the code
    that validated them."""

    files: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    schemas: object = None
    """The schema the entries are instances of (`SCHEMAS` of the loader that validated them): a loader imported anew
    (every module of snippets/, as `serve` does after a code edit or a test does on purpose) reads every file again."""


def _load_file(directory: Path, name: str, problems: list[str], parsed_before: Parsed | None = None,
               ) -> dict[str, Any]:
    path = directory / f"{name}.yaml"
    shown = f"data/{name}.yaml"
    if not path.is_file():
        problems.append(f"{shown}: file missing")
        return {}
    text = path.read_text(encoding="utf-8")
    if parsed_before is not None:
        before = parsed_before.files.pop(name, None)
        if before is not None and before[0] == text:
            parsed_before.files[name] = before
            return dict(before[1])
    found = len(problems)
    entries = _validate_file(text, name, shown, problems)
    if parsed_before is not None and len(problems) == found:
        parsed_before.files[name] = (text, dict(entries))
    return entries


def _validate_file(text: str, name: str, shown: str, problems: list[str]) -> dict[str, Any]:
    raw, node, parsed = _read_yaml(text, shown, problems)
    if not parsed:
        return {}
    found: list[dict[tuple[Any, ...], tuple[int, int]]] = []

    def marks() -> dict[tuple[Any, ...], tuple[int, int]]:
        """The position of every key, read from the document's node the first time an error needs one."""
        if not found:
            found.append(_marks(node))
        return found[0]

    if not isinstance(raw, dict) or not raw:
        problems.append(f"{shown}: expected a mapping of entry ids to entries")
        return {}
    schema = SCHEMAS[name]
    adapter: TypeAdapter[Any] = TypeAdapter(schema)
    is_union = get_origin(schema) is Annotated and get_origin(get_args(schema)[0]) in (Union, types.UnionType)
    entries: dict[str, Any] = {}
    for entry_id, body in raw.items():
        if not isinstance(entry_id, str):
            problems.append(f"{shown}: entry {entry_id!r}: entry ids must be strings")
            continue
        try:
            check_text(entry_id)
            entries[entry_id] = adapter.validate_python(body, context={"key": entry_id})  # a record's id (`as_written`)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                loc = tuple(err["loc"])
                field = _field_path(loc, is_union)
                got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
                pos = _where(marks(), (entry_id, *(loc[1:] if is_union else loc)))
                at = f" ({shown}:{pos[0]}:{pos[1]})" if pos else ""
                problems.append(f"{shown}: entry '{entry_id}': field '{field}': {err['msg']}{got}{at}")
        except ValueError as exc:
            pos = _where(marks(), (entry_id,))
            at = f" ({shown}:{pos[0]}:{pos[1]})" if pos else ""
            problems.append(f"{shown}: entry {entry_id!r}: entry id: {exc}{at}")
    return entries


def _unknown_files(directory: Path) -> list[str]:
    """A file in data/ that no schema reads would be silently ignored: refuse it instead."""
    known = {f"{name}.yaml" for name in FILES}
    return [f"data/{p.name}: unknown data file: no schema reads it (known: {', '.join(sorted(known))}); "
            "add its schema to SCHEMAS (snippets/data/schema/__init__.py) and FILES (snippets/data/errors.py), or remove it"
            for p in sorted(directory.iterdir()) if p.suffix in (".yaml", ".yml") and p.name not in known]


def default_dir() -> Path:
    """`$SERVING_DATA_DIR` if set, else the repository's `data/`."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "data"


def load(directory: Path | str | None = None, parsed_before: Parsed | None = None,
         results_dir: Path | str | None = None) -> Catalog:
    """Load and validate all of `data/` (`directory`, else `default_dir()`): a new catalog at every call. With
    `parsed_before`, a file whose text it holds is not parsed again (`Parsed`), and it is updated with this load's.

    With `results_dir` (else `$SERVING_RESULTS_DIR`, which a build sets for its notebooks' kernels), the catalog's
    engine results are those a build of the same inputs kept there (`snippets.data.results`: keyed on the inputs and
    on the code of this package, read only): the notebook's kernel reads the error bands the build computed instead
    of predicting every test row again, about 0.4 s of its first cell."""
    root = Path(directory) if directory is not None else default_dir()
    root = root.resolve()
    problems: list[str] = _unknown_files(root)
    if parsed_before is not None and parsed_before.schemas is not SCHEMAS:
        parsed_before.files.clear()
        parsed_before.schemas = SCHEMAS
    tables = {name: _load_file(root, name, problems, parsed_before) for name in FILES}
    if not problems:
        _check_references(tables, problems)
    if problems:
        raise DataError(problems)
    # read-only: one page's block cannot remove or replace an entry for the pages after it; every read noted
    log = ReadLog()
    views: dict[str, Any] = {name: Table(name, dict(table), log) for name, table in tables.items()}
    cat = Catalog(directory=root, read_log=log, **views)
    kept = results_dir if results_dir is not None else os.environ.get(RESULTS_DIR_ENV)
    if kept:
        from snippets.data.results import EngineResults

        cat.derived[EngineResults] = EngineResults.load(cat, Path(__file__).resolve().parents[2], Path(kept))
    return cat


def _nested_sources(value: object) -> Iterator[Source]:
    """Every `Source` inside `value`, depth first in field order: an entry's own `sources`, and those of the records
    it holds (an accelerator's runtime memory, a precision's kernel gaps, a policy's figures)."""
    if isinstance(value, Source):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _nested_sources(getattr(value, name))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _nested_sources(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _nested_sources(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _nested_sources(item)


def entry_sources(entry: object) -> tuple[Source, ...]:
    """The sources of one entry for a reader: its own `sources` first, then those nested in its fields, each address
    once (`iter_sources` counts every citation, so a source cited twice in one entry counts twice there)."""
    seen: set[str] = set()
    out: list[Source] = []
    for src in (*getattr(entry, "sources", ()), *_nested_sources(entry)):
        if src.url not in seen:
            seen.add(src.url)
            out.append(src)
    return tuple(out)


def iter_sources(cat: Catalog) -> Iterator[tuple[str, str, Source]]:
    """(file, entry id, source) for every source in the catalog: each entry's `sources` and every source nested in
    its fields (`RuntimeMemory.source`, a kernel gap's, a policy figure's)."""
    for name in FILES:
        for entry_id, entry in getattr(cat, name).items():
            for src in _nested_sources(entry):
                yield name, entry_id, src
