"""Page model of the sizing grid (docs/reference/sizing.md), and its downloadable records.

Every model x storage width x accelerator, deployed by the engine (`snippets.engine`) on the accelerator's node at the
pages' scenario: the layout its policy chooses, GPUs, nodes, memory per GPU by part, the single-sequence decode
ceiling and the hourly cost of what is rented. The same records are published as reference/sizing.json and
reference/sizing.csv (`snippets.pages.sizing_records`). Each row also shows the recommended configuration meeting the
scenario's latency target and the cheapest where it differs (`snippets.engine.search.at_scenario`: TP in the node,
the fewest pipeline stages that hold the model, up to eight nodes, aggregated or disaggregated) or which target
binds, a search per row (`grid_targets`: run beside the pages, kept by content, `snippets.build.sizing`).
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from snippets.data import Catalog, Price, derive
from snippets.engine import Deployment, NoLayout, RefusedSetting
from snippets.engine.bands import COVERAGE
from snippets.engine.deployment import as_shipped
from snippets.engine.memory import BYTES_16BIT, weight_bytes
from snippets.engine.search import MAX_NODES, Search, Word, at_scenario, configuration_words
from snippets.engine.timing import Prediction, predict
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.reference_common import as_of, as_of_text, latest_read, source_links
from snippets.pages.scenario import Reference, reference
from snippets.pages.sizing_target import at_target, ms_range
from snippets.pages.sources import original
from snippets.render import fmt

PRECISIONS = ("bf16", "fp8", "int4-g128")
"""One precision per storage width the site serves in: 16, 8 and 4 bits (INT4 with its group scales, as AWQ ships).
A model whose developer ships its own checkpoint of that format and width is sized in it (`as_shipped`: Qwen3's and
DeepSeek's FP8 are block-quantized, 128 x 128, which rules out some TP degrees)."""
GiB = 2**30


@dataclass(frozen=True)
class Row:
    model: str
    precision: str
    accelerator: str
    deployment: Deployment | None
    why_not: str
    """Why no layout serves it (no node in data, vLLM's refusal, or it does not fit), where `deployment` is None."""
    at_one: Prediction | None = None
    """The time model at one sequence of the scenario's length (None where the data lacks a link it needs)."""
    at_scenario: Prediction | None = None
    """The time model at the scenario's concurrency."""


def grid_rows(cat: Catalog, ref: Reference | None = None) -> list[Row]:
    """Every model x precision x accelerator, as the engine deploys it at the scenario."""
    r = ref or reference(cat)
    rows = []
    for m in cat.models:
        for p in (as_shipped(r.eng, m, q) for q in PRECISIONS):
            for a in cat.accelerators:
                node = r.eng.node_of(a)
                if node is None:
                    rows.append(Row(m, p, a, None, "no node in data"))
                    continue
                try:
                    d = r.deployment(m, p, node=node.id)
                except RefusedSetting as exc:  # BF16 on a chip without it, a model shorter than the request
                    rows.append(Row(m, p, a, None, f"refused: {exc}"))
                    continue
                except NoLayout as exc:
                    rows.append(Row(m, p, a, None, f"does not fit: {exc}"))
                    continue
                one: Prediction | None
                at: Prediction | None
                try:
                    one, at = predict(d, 1), predict(d)
                except ValueError:  # a layout across nodes whose node records no network
                    one = at = None
                rows.append(Row(m, p, a, d, "", one, at))
    return rows


def target(r: Reference, model: str, precision: str, accelerator: str) -> Search | None:
    """The search for the cheapest configuration meeting the scenario's latency target on `accelerator`'s node (None
    where the scenario sets no target)."""
    sc = r.scenario
    if sc.ttft_s is None and sc.tpot_s is None:
        return None
    return at_scenario(r.eng, model, precision, sc.id, accelerator=accelerator, sweep=False)


Query = tuple[str, str, str]
"""A record's model, precision (as sized) and accelerator: what its search at the scenario's target is of."""


def searched(row: Row) -> bool:
    """Whether a record's target is searched: not where no node records the accelerator, nor where the engines refuse
    the setting at start (the chip lacks the precision, the model reads fewer tokens than the scenario's); a model
    that does not fit the node's layout policy is searched all the same (the search tries up to eight nodes)."""
    return row.why_not != "no node in data" and not row.why_not.startswith("refused")


def target_queries(cat: Catalog) -> list[Query]:
    """The searches the records at the target need, one per searched record, in the grid's order."""
    return [(row.model, row.precision, row.accelerator) for row in page_rows(cat) if searched(row)]


def targets_of(cat: Catalog, queries: list[Query]) -> dict[Query, dict[str, Any] | None]:
    """Each query's cheapest configuration at the scenario's target (`at_target` of `target`), computed here: the
    build computes the same beside its pages, in worker processes, and keeps it by content
    (`snippets.build.sizing`)."""
    r = reference(cat)
    return {q: at_target(target(r, *q)) for q in queries}


NOT_SEARCHED = "not searched"
"""What the build puts under `TARGETS` when its `sizing_targets` option searched nothing (`snippets.build.sizing`)."""
TARGETS = "sizing-grid-targets"
"""Where the grid's searches are kept with the catalog (`Catalog.derived`): the build puts there what its workers
found (`snippets.build.sizing`) before the page's blocks run; elsewhere `grid_targets` computes them. Also what
`grid_targets` notes as read (`loader.ReadLog`) where it hands that out: the build keys it (`SizingTargets.state`)."""


def grid_targets(cat: Catalog) -> Mapping[Query, dict[str, Any] | None] | None:
    """Every searched record's cheapest configuration at the target, computed once per catalog; None where the build
    searched nothing (`NOT_SEARCHED`)."""
    derived = original(cat).derived
    found = derived.get(TARGETS)
    if found != NOT_SEARCHED and not isinstance(found, dict):
        return derive(original(cat), (TARGETS, "computed"), lambda: targets_of(original(cat), target_queries(cat)))
    cat.read_log.note(TARGETS)  # what the build put there (searched or not), which the build keys
    return found if isinstance(found, dict) else None


def page_rows(cat: Catalog) -> list[Row]:
    """The grid's rows as the page computed them (`Page.of`): the page's prose, its table and the published
    records show one computation of the grid, not three."""
    return ReferenceSizingPage.of(original(cat))._rows


def _gib(x: float) -> fmt.Figure:
    return fmt.nbytes(x, "GiB", 1)


def grid_table(cat: Catalog) -> str:
    """The whole grid as one HTML table, wrapped for the page's sort-and-filter script."""
    r = reference(cat)
    found = grid_targets(cat)
    rows: list[list[fmt.Cell]] = []
    names = []
    for row in page_rows(cat):
        m, p, a = cat.models[row.model], cat.precisions[row.precision], cat.accelerators[row.accelerator]
        names.append(f"{m.name} · {p.name} · {a.name}")
        at = target_cells(found[(row.model, row.precision, row.accelerator)]
                          if searched(row) and found is not None else None)
        d = row.deployment
        if d is None:  # the weights' size (no accelerator needed), and why not in the recommendation's wide column
            size = fmt.nbytes(weight_bytes(m.architecture, p, m.kept_16bit(p)), "GB")
            why = [row.why_not, *at] if searched(row) else ["—", row.why_not, "—"]  # unless a search fills it
            rows.append([m.name, p.name, a.name, size, *(["—"] * 7), *why, "—"])
            continue
        one = row.at_one
        # each prediction with its range (`units.banded`), its basis in the page's text, not in every cell's title
        tpot: fmt.Cell = "—" if one is None else units.banded(
            fmt.quantity(one.tpot_s * 1e3, "ms", 1, show_unit=True, basis="time per output token, one sequence"),
            ms_range(one.tpot_range), 1, "")
        mtok, mrng = (None, None) if one is None else (one.usd_per_mtok_output, one.usd_per_mtok_output_range)
        per_m: fmt.Cell = "—" if mtok is None else units.banded(
            fmt.Figure(mtok, "USD/Mtok", f"${mtok:,.2f}", "one sequence; the rented unit filled with replicas"),
            mrng, 2, "")
        cost: fmt.Cell = "no price" if d.cost_per_hour is None else fmt.Figure(
            d.cost_per_hour, "USD/hour", f"${d.cost_per_hour:,.2f}", "indicative on-demand, GPUs rented")
        pr = d.setting.price
        read: fmt.Cell = "—" if pr is None else pr.as_of
        prec = f"{p.name}, weight-only" if d.weight_only else p.name  # stored in it, computed in BF16
        rows.append([
            m.name, prec, a.name,
            fmt.nbytes(d.weight_bytes, "GB"),
            d.layout.label,
            fmt.count(d.gpus),
            fmt.count(d.nodes, "nodes"),
            _gib(d.memory.weights),
            _gib(d.memory.kv_room),
            cost,
            tpot,
            per_m,
            *at,
            read,
        ])
    table = fmt.html_table(
        "grid",
        ["Model", "Precision", "Accelerator", "Weights", "Layout", "GPUs", "Nodes", "Weights per GPU",
         "KV room per GPU", "Cost per hour", "Time per token", "$ per M tokens", "Recommended at the target",
         "$ per M tokens at the target", "Price read"],
        rows, align="lllrlrrrrrrrlrl", names=names,
    )
    # HTML, not Markdown: the page's block sets html="true", so the grid's cells skip the Markdown pass. The grid
    # is left out of the search index (thousands of figures would double the index every reader downloads): the
    # page whole (front matter `search: exclude: true`, Material's own switch, which spares its indexer the grid's
    # megabyte), and the element by `data-search-exclude`, should the page be indexed again.
    filt = ('<p><label>Filter rows: <input type="search" id="sa-grid-filter" '
            'placeholder="e.g. 405B FP8 H100"></label> <span id="sa-grid-count"></span></p>')
    dated = as_of_text([*cat.models.values(), *cat.accelerators.values(), *cat.prices.values(),
                        cat.scenarios[r.scenario.id]])
    return (filt + "\n" + ('<div class="sa-grid sa-wide" data-search-exclude>\n' + table + "</div>")
            + "\n"
            + '<script src="../sizing-grid.js"></script>\n'
            + f"<p><em>{html.escape(dated)}</em></p>\n")


BINDS = {"ttft_ms": "none: the first token binds", "tpot_ms": "none: the time per token binds"}
"""A record the target is not met for, by the target that binds (`Why.binding`)."""


def target_cells(t: dict[str, Any] | None) -> list[fmt.Cell]:
    """A record's recommended configuration at the target (`at_target`), the cheapest beside it where it differs, and
    its $ per million output tokens; where none meets it, which target binds; "—" where nothing is searched."""
    if t is None:
        return ["—", "—"]
    if not t["met"]:
        return [BINDS.get(t["binding"] or "", "none: no layout holds it"), "—"]
    rec = t["recommended"]
    usd = rec["usd_per_mtok_output"]
    cost: fmt.Cell = "no price" if usd is None else units.banded(fmt.Figure(
        usd["value"], "USD/Mtok", f"${usd['value']:,.2f}", f"output tokens, {rec['configuration']}, {rec['gpus']} GPUs"),
        None if usd["range"] is None else (usd["range"][0], usd["range"][1]), 2, "")
    config = units.configuration(target_words(rec))
    return [fmt.Phrase((*config.parts, " (", ("gpus", fmt.count(rec["gpus"])), " GPUs)",
                        *units.cheapest_aside(t["mode"], t["gpus"], t["cheapest_saving"]))), cost]


def target_words(t: dict[str, Any]) -> tuple[Word, ...]:
    """A configuration at the target (`at_target`, met, or its `recommended`) in the engine's words, from its fields."""
    if t["mode"] == "aggregated":
        return configuration_words(t["mode"], t["layout_label"], t["in_flight"])
    return configuration_words(t["mode"], t["layout_label"], t["decode_batch"],
                               prefill_layout=t["prefill_layout_label"], prefill_workers=t["prefill_workers"],
                               decode_workers=t["decode_workers"])


def target_note(cat: Catalog) -> str:
    """What the target columns show, with the target and how many searched rows meet it, as Markdown."""
    r = reference(cat)
    sc = r.scenario
    if sc.ttft_s is None or sc.tpot_s is None:
        raise ValueError(f"scenario {sc.id} needs a latency target for the sizing grid's target columns")
    found = grid_targets(cat)
    h = fmt.fig_html
    ttft = fmt.quantity(sc.ttft_s * 1e3, "ms", 0, show_unit=True)
    tpot = fmt.quantity(sc.tpot_s * 1e3, "ms", 0, show_unit=True)
    saving = h(fmt.percent(r.eng.layout_policies[sc.layout_policy].disaggregation.min_saving), 'target.min_saving')
    what = (f"*Recommended at the target* is what the site would deploy among the configurations whose first token "
            f"comes within {h(ttft, 'target.ttft')} and each next one within {h(tpot, 'target.tpot')}: the cheapest "
            f"aggregated one, unless the cheapest with prefill and decode workers apart costs at least {saving} "
            f"less per output token or no aggregated one meets the target (the layout policy's rule in `data/policies.yaml`: "
            f"two pools, a KV-cache transfer path and a router cost what a price per token does not show)")
    if found is None:
        return (f"{what}: this build did not search it (the serving plugin's `sizing_targets` option is `off`, or "
                "`cached` with nothing cached for this data, as on a rebuild of `mkdocs serve`); `nox -s build` "
                "searches every row.\n")
    met = [t for t in found.values() if t is not None and t["met"]]
    n_met, total = fmt.count(len(met), "rows"), fmt.count(len(found), "rows")
    differ = fmt.count(sum(1 for t in met if t["cheapest_saving"] > 0), "rows")
    nodes = h(fmt.count(MAX_NODES, 'nodes', show_unit=True), 'target.nodes')
    return (f"{what}. The engine's search runs on the accelerator's node: each TP layout in the node, with the fewest "
            f"pipeline stages that hold the model, on up to {nodes}, served aggregated or with prefill and decode "
            f"workers apart, at the most requests in flight that still meet the target; the cell gives the $ per "
            f"million output tokens of what it recommends. {h(n_met, 'target.met')} of the {h(total, 'target.searched')} "
            f"rows searched meet the target; in {h(differ, 'target.differ')} of them the cheapest is disaggregated and "
            f"saves less than that, and the cell names it, its GPUs and how much cheaper it is. Where none meets the "
            f"target, the cell says which target binds. [The latency-target page](../latency-target.md) explains the search.\n")


def downloads() -> str:
    """Links to the grid's records (raw HTML: the files are written after the build, not pages MkDocs knows)."""
    share = fmt.percent(COVERAGE).text  # as the other pages write the band's share
    return (f'<p>Beside each time and cost the grid predicts is its range: where {share} of the test measurements of its '
            'regime fell (vendor; dense or MoE; decode at low load, at saturation, or prefill), as on '
            '<a href="../predictions/">Predictions</a>.</p>\n'
            '<p>Download the grid: <a href="../sizing.json">sizing.json</a> (every record, each number with its unit, '
            'each prediction with its <code>range</code>) · <a href="../sizing.csv">sizing.csv</a> (one row per record, '
            'units in the column names, each prediction\'s range in its <code>_low</code> and <code>_high</code> '
            'columns).</p>\n')


def months_between(earlier: dt.date, later: dt.date) -> int:
    """Whole months from `earlier` to `later` (a price read on 2026-09-25 is 2 months old on 2026-12-01)."""
    months = (later.year - earlier.year) * 12 + later.month - earlier.month
    return months - (1 if later.day < earlier.day else 0)


def price_age(p: Price, newest: dt.date) -> fmt.Figure:
    """How much older a price's reading is than the data's latest reading: what "indicative" hides."""
    n = months_between(p.read, newest)
    return fmt.Figure(float(n), "months", f"{n:,} months",
                      f"read {p.read.isoformat()}; the data's latest reading is {newest.isoformat()}")


def prices_table(cat: Catalog) -> str:
    """Every recorded price: provider and tier, how it is bought (on demand, reserved, spot), $/GPU-hour, rental unit,
    the date the price list was read and how much older that is than the data's latest reading, whether the site's
    costs use it, and its sources (a transcription marked secondary)."""
    newest = latest_read([*cat.accelerators.values(), *cat.models.values(), *cat.prices.values()])
    rows: list[list[fmt.Cell]] = []
    for p in cat.prices.values():
        provider = p.provider if p.tier is None else f"{p.provider}, {p.tier}"
        kind = p.kind if p.term is None else f"{p.kind}, {p.term}"
        spot = "" if p.kind == "on-demand" else f", {p.kind}"
        rows.append([f"{cat.accelerators[p.accelerator].name} at {provider}{spot}", p.offering, kind,
                     fmt.Figure(p.price.value, "USD/GPU-hour", f"${p.price.value:,.2f}", f"indicative, {p.kind}"),
                     fmt.count(p.gpus_per_unit), p.read.isoformat(), price_age(p, newest),
                     "yes" if p.site_uses else "", source_links(p)])
    return fmt.table("prices", ["Accelerator and provider", "Offering", "Kind", "Per GPU-hour (indicative)",
                                "Rented by (GPUs)", "Price read", "Older than the data by", "Site's costs use",
                                "Source"], rows, align="lllrrlrll") + as_of(cat.prices.values())


class ReferenceSizingPage(Page):
    """Names the page's prose uses."""
    shows = (grid_table, target_note, prices_table)
    """The functions the page's blocks print (`downloads` reads no data)."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        rows = self._rows = grid_rows(cat, r)
        ex = r.deployment("llama-3.1-405b", "fp8")
        if ex.cost_per_hour is None:
            raise ValueError("the worked sizing-grid example needs a price")
        pol = cat.policies[r.scenario.layout_policy]
        mem = cat.policies[r.scenario.memory_policy]
        self.rows = fmt.count(len(rows), "rows")
        self.deployable = fmt.count(sum(1 for x in rows if x.deployment is not None), "rows")
        self.models = fmt.count(len(cat.models), "models")
        self.precisions = fmt.count(len(PRECISIONS), "precisions")
        self.accelerators = fmt.count(len(cat.accelerators), "accelerators")
        self.scenario = r.scenario.name
        self.context = fmt.count(r.scenario.context_tokens, "tokens", show_unit=True)
        self.policy = pol.name
        self.memory_policy = mem.name
        self.kept_width = fmt.quantity(BYTES_16BIT * 8, "bit", 0, show_unit=True, basis="storage width of the tensors "
                                       "quantized checkpoints keep unquantized")
        self.ex_model = cat.models["llama-3.1-405b"].name
        self.ex_precision = cat.precisions["fp8"].name
        self.ex_gpu = r.eng.chips[r.node.chip].name
        self.ex_weight = fmt.nbytes(ex.weight_bytes, "GB")
        self.ex_layout = ex.layout.label
        self.ex_gpus = fmt.count(ex.gpus)
        self.ex_per_gpu = _gib(ex.memory.weights)
        self.ex_pool = _gib(ex.memory.pool)
        self.ex_capacity = _gib(ex.memory.capacity)
        self.ex_cost = units.usd_hour(ex.cost_per_hour, units.price_of(ex))
        self.ex_node_gpus = fmt.count(ex.gpus_per_node)
        qwen, width = "qwen3-235b-a22b", "fp8"
        shipped = as_shipped(r.eng, qwen, width)
        self.shipped_example = (f"{cat.models[qwen].name} in {cat.precisions[shipped].name}, its own "
                                f"{cat.precisions[width].name} checkpoint")
        self.ex_fits = fmt.claim(ex.fits_one_node, f"{ex.gpus} GPUs on {ex.nodes} node(s) of {ex.gpus_per_node}")


namespace = ReferenceSizingPage.namespace_of
sources = ReferenceSizingPage.sources_of
