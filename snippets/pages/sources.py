"""The sources behind a page: each data entry it reads, with its primary sources and read dates.

`recording(cat)` gives a `Catalog` that notes into its `reads` set every entry looked up by id in it
(`cat.models[id]`, `.get(id)`, `cat.interconnect(id, kind)`); going through a table (`.items()`,
`.values()`, `in`, `len`) reads no entry. Through `snippets.pages.scenario.reference` the engine's
records are looked up in tables that note the same way (`Recording.engine`), each by the `data/`
entries its record says it was built from: a model, precision, chip, node, scenario or policy its
own entry (what `Setting.sources` lists for a deployment); a time model its `TimeModelSpec.sources`
(the policy, the latencies and the link efficiency), and, for each chip a time is computed on (its
per-chip table, `TimeModelSpec.chip`), that chip's `ChipSpec.time_sources` (its measured
efficiencies); a price its `PriceSpec.sources` (the site's prices.yaml entries of that
accelerator). A deployment (`snippets.engine.Setting`) holds its time model and price as ids and
looks them up where a time or a cost is computed, so a page that only sizes memory lists neither.
No record is subclassed and no attribute read intercepted: tables note lookups by id (a time
model's per-chip table too, in a copy made with `dataclasses.replace`), records list their entries.
`sources_list` prints what was noted, in the order of `data/` (file by file, entries in file
order), whatever the order of the reads.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, ValuesView
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from snippets.data import FILES, Catalog, DocumentedDeployment, Measurement, Price, entry_sources
from snippets.engine.specs import EngineCatalog
from snippets.render.fmt import Md, bullets, escape_markdown, link

V = TypeVar("V")
Ref = tuple[str, str]
"""(data file, entry id), e.g. ("accelerators", "h100-sxm")."""


class _Noted(Mapping[str, V]):
    """A read-only view of `inner` that calls `note(key)` for every entry looked up by key."""

    __slots__ = ("_inner", "_note")

    def __init__(self, inner: Mapping[str, V], note: Callable[[str], None]) -> None:
        self._inner = inner
        self._note = note

    def __getitem__(self, key: str) -> V:
        value = self._inner[key]
        self._note(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)

    def __contains__(self, key: object) -> bool:
        return key in self._inner

    def items(self) -> ItemsView[str, V]:
        return self._inner.items()

    def values(self) -> ValuesView[V]:
        return self._inner.values()


@dataclass(frozen=True)
class Recording(Catalog):
    """`original`'s tables, each noting into `reads` the entries looked up in it."""

    original: Catalog
    reads: set[Ref]

    @property
    def loaded(self) -> Catalog:
        return self.original

    def engine(self, eng: EngineCatalog) -> EngineCatalog:
        """`eng` (the engine's records of `original`) noting into `reads`, for each record asked for by id, the
        `data/` entries the record lists as built from: a model, chip, node, precision, policy or scenario its own
        entry; a time model its `TimeModelSpec.sources` (asked for where a time is computed, `Setting.time_model`),
        and for each chip a time is computed on (`TimeModelSpec.chip`) the chip's `ChipSpec.time_sources`; a price
        its `PriceSpec.sources` (asked for where a cost is computed, `Setting.price`)."""
        reads = self.reads

        def to(file: str) -> Callable[[str], None]:
            return lambda key: reads.add((file, key))

        def timed_on(chip_id: str) -> None:
            reads.update(eng.chips[chip_id].time_sources)

        time_models = {k: replace(t, chips=_Noted(t.chips, timed_on)) for k, t in eng.time_models.items()}
        return replace(
            eng, models=_Noted(eng.models, to("models")), chips=_Noted(eng.chips, to("accelerators")),
            nodes=_Noted(eng.nodes, to("interconnects")), precisions=_Noted(eng.precisions, to("precisions")),
            memory_policies=_Noted(eng.memory_policies, to("policies")),
            layout_policies=_Noted(eng.layout_policies, to("policies")),
            scenarios=_Noted(eng.scenarios, to("scenarios")),
            time_models=_Noted(time_models, lambda key: reads.update(eng.time_models[key].sources)),
            prices=_Noted(eng.prices, lambda key: reads.update(eng.prices[key].sources)),
        )


def recording(cat: Catalog) -> Recording:
    """A catalog like `cat` that notes the entries looked up in it (in `.reads`); `cat` itself if it already does
    (a page model computed inside another's sources notes into the same reads)."""
    if isinstance(cat, Recording):
        return cat
    reads: set[Ref] = set()

    def table(name: str) -> _Noted[Any]:
        return _Noted(getattr(cat, name), lambda key: reads.add((name, key)))

    kept: dict[str, Any] = {f.name: getattr(cat, f.name) for f in fields(Catalog) if f.name not in FILES}
    noted: dict[str, Any] = {name: table(name) for name in FILES}
    return Recording(**kept, **noted, original=cat, reads=reads)


def original(cat: Catalog) -> Catalog:
    """The loaded catalog behind `cat` (itself, unless it is a `Recording`)."""
    return cat.loaded


def in_data_order(cat: Catalog, refs: Iterable[Ref]) -> list[Ref]:
    """`refs` without repeats, file by file in `data.FILES` order, entries in the order of their file."""
    cat = original(cat)
    refs = set(refs)
    files = {file for file, _ in refs}  # only the tables the refs are in: walking another would read it
    rank = {(name, key): (i, j) for i, name in enumerate(FILES) if name in files
            for j, key in enumerate(getattr(cat, name))}
    return sorted(refs, key=lambda ref: rank[ref])


def _name(cat: Catalog, entry: Any) -> str:
    """An entry's name; prices, measurements and documented deployments have none: their provider and offering, or
    engine and model."""
    if isinstance(entry, Price):
        return f"{entry.provider}, {entry.offering}"
    if isinstance(entry, Measurement):
        return f"{entry.engine}, {entry.checkpoint or cat.models[entry.model].name}"
    if isinstance(entry, DocumentedDeployment):
        return f"{entry.engine}, {cat.models[entry.model].name} on {cat.accelerators[entry.accelerator].name}"
    return str(entry.name)


def sources_list(cat: Catalog, refs: Iterable[Ref]) -> Md:
    """A bulleted list (`fmt.bullets`): one item per (file, entry id), naming the row and linking its sources.

    Names and titles are data: escaped as text; URLs are percent-encoded (`fmt.link`).
    """
    cat = original(cat)
    items = []
    for file, entry_id in refs:
        entry = getattr(cat, file)[entry_id]
        links = "; ".join(f"{link(s.title, s.url)}, read {s.read.isoformat()}"
                          + ("" if s.copies is None else f" (secondary: a transcription of {escape_markdown(s.copies)})")
                          for s in entry_sources(entry))
        items.append(Md(f"**{escape_markdown(_name(cat, entry))}** (`data/{file}.yaml`, "
                        f"`{entry_id.replace('`', '')}`): {links}"))
    return bullets(items)
