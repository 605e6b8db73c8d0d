"""`Page`: a page model whose public attributes are the page's namespace and whose reads are its sources.

A page model subclasses `Page` and computes each figure once, in `__init__`, as a public attribute:

    class HomePage(Page):
        def __init__(self, cat: Catalog) -> None:
            super().__init__(cat)
            r = self.reference(SERVING)
            self.node_gpus = fmt.count(r.node.gpus)

    namespace = HomePage.namespace_of    # what the build calls: {"node_gpus": ...}
    sources = HomePage.sources_of        # what the page's "Where these numbers come from" block prints

`namespace()` is every public attribute that is not callable, in the order `__init__` set them; locals
and `_private` attributes stay out. Names made in a loop join with `self.extend({...})`, which refuses
a name already set.

Sources are recorded, not typed: `self.cat` is a recording view of the catalog
(`snippets.pages.sources.recording`; page models start `cat = self.cat` and compute from it). Each entry
looked up by id in it is noted in the page's `reads` set, and so is each record the engine looks up
for a deployment made through `self.reference()` or `reference(cat)`, as the record lists the entries
it was built from: model, precision, KV precision, chip, node, scenario, memory and layout policies
(`Setting.sources`); where a time, throughput or cost is computed, the time model (`TimeModelSpec.sources`,
with the measured efficiencies of each chip a time is computed on, `ChipSpec.time_sources`) and the price
(`PriceSpec.sources`), which the deployment holds as ids and looks up only there. Walking a table (`.items()`, `.values()`)
notes nothing.
`sources_of` runs the page and the functions its blocks print (`shows`, with their arguments as
`functools.partial`) on one recording view and lists what was noted, in the order of `data/`. An
entry that backs prose only is noted with `cite`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

from snippets.data import Catalog
from snippets.data.loader import Derived
from snippets.pages.scenario import SCENARIO, Reference, reference
from snippets.pages.sources import Recording, Ref, in_data_order, recording, sources_list
from snippets.render.fmt import Md


class Page:
    """A page model: subclass it, set figures as public attributes in `__init__`, list the printed functions in
    `shows`."""

    shows: ClassVar[tuple[Callable[[Catalog], object], ...]] = ()
    """The module's functions the page's blocks print (`f(catalog)`): tables, charts, worked examples."""

    def __init__(self, cat: Catalog) -> None:
        self._cat: Recording = recording(cat)

    @property
    def cat(self) -> Catalog:
        """The catalog, noting each entry looked up in it."""
        return self._cat

    def reference(self, scenario: str = SCENARIO) -> Reference:
        """`snippets.pages.scenario.reference` over `self.cat`: its deployments note what they are built from."""
        return reference(self._cat, scenario)

    def cite(self, file: str, *entry_ids: str) -> None:
        """Note entries the page's prose rests on without computing from them."""
        table = getattr(self._cat, file)
        for entry_id in entry_ids:
            table[entry_id]

    def extend(self, names: Mapping[str, object]) -> None:
        """Add names made in a loop or by a helper (`share_1_nvlink`, a quiz's figures); a name already set is
        refused, so each figure is still named once."""
        taken = sorted(set(names) & set(vars(self)))
        if taken:
            raise ValueError(f"{type(self).__name__}: {', '.join(taken)} named twice")
        vars(self).update(names)

    def namespace(self) -> dict[str, Any]:
        """The page's `{{ name }}` values and claims: its public attributes that are not callable."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and not callable(v)}

    def reads(self) -> list[Ref]:
        """The entries noted so far, in the order of `data/`."""
        return in_data_order(self._cat, self._cat.reads)

    @classmethod
    def of(cls, cat: Catalog) -> Self:
        """The page computed once per catalog: its `{{ }}` names, its blocks' worked examples and its sources list
        read one computation (a page model is a pure function of the catalog). It is kept with the catalog
        (`Catalog.derived`, with the tables computing it read, noted again each time it is handed out:
        `snippets.data.loader.derive`), by page class and by the view it was computed from (a recording view notes the
        entries the page reads into that view's sources), and goes when the catalog goes. The page is also kept
        under its own recording view (`self.cat`): a function of its `shows` that asks for the page from the view
        it is given (`sources_of`) reads the page computed once, whose reads that view has already noted."""
        hit = cat.derived.get((cls, id(cat)))
        if not isinstance(hit, Derived) or hit.value[0] is not cat:
            with cat.read_log.frame() as reads:
                page = cls(cat)
            hit = cat.derived[(cls, id(cat))] = Derived((cat, page), frozenset(reads))
            cat.derived[(cls, id(page._cat))] = Derived((page._cat, page), hit.reads)
        else:
            cat.read_log.note_all(hit.reads)
        page = hit.value[1]
        if not isinstance(page, cls):  # pragma: no cover - the key holds the class
            raise TypeError(f"{cls.__name__}: the cache holds a {type(page).__name__}")
        return page

    @classmethod
    def namespace_of(cls, cat: Catalog) -> dict[str, Any]:
        return cls.of(cat).namespace()

    @classmethod
    def sources_of(cls, cat: Catalog) -> Md:
        """The page's sources list: what computing its figures and its `shows` reads."""
        page = cls.of(cat)
        for show in cls.shows:
            show(page.cat)
        return sources_list(cat, page.reads())
