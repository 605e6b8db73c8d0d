"""Page model of the home page (docs/index.md): the answer first, then the reading path.

Two tables, one load each: what each model needs and how fast one sequence decodes (the engine's deployment at
the serving scenario, `snippets.engine.timing.predict` at one sequence), and what a million output tokens cost
at the scenario's latency target (`snippets.engine.search.at_scenario`: among the configurations whose time to
first token and time per output token meet the target in data/scenarios.yaml, the one the layout policy recommends,
the cheapest aggregated one unless a disaggregated one saves the policy's share, with the cheapest named beside it
where they differ).
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog
from snippets.engine import NoLayout
from snippets.engine.bands import COVERAGE
from snippets.engine.deployment import as_shipped
from snippets.engine.search import MAX_NODES, Search, at_scenario
from snippets.engine.timing import predict
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.latency_target.common import usd_mtok
from snippets.pages.scenario import SERVING
from snippets.pages.sources import original
from snippets.pages.units import ms
from snippets.render import fmt

SUMMARY_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-235b-a22b", "gpt-oss-120b",
                  "llama-4-maverick", "deepseek-v3")
"""One model of each family and size readers deploy, small to large."""
SUMMARY_PRECISIONS = ("bf16", "fp8")


@dataclass(frozen=True)
class Row:
    model: str
    precision: str
    name: str
    """'Llama 3.1 70B FP8': the row's label in both tables."""
    fit: list[fmt.Cell]
    """The fit table's cells after the model and precision."""
    search: Search | None
    """The search at the scenario's target (None where no layout holds the model)."""


def _rows(cat: Catalog) -> list[Row]:
    return HomePage.of(original(cat))._rows


def summary_table(cat: Catalog) -> str:
    """What each model needs on the scenario's node, as the engine deploys it, and the time per output token of one
    sequence: one load, one sequence."""
    rows = _rows(cat)
    return fmt.html_table("summary", ["Model", "Precision", "Layout", "GPUs", "Nodes", "Time per token, one sequence"],
                          [[cat.models[r.model].name, cat.precisions[r.precision].name, *r.fit] for r in rows],
                          align="lllrrr", names=[r.name for r in rows])


def target_table(cat: Catalog) -> str:
    """What a million output tokens cost at the scenario's latency target: the recommended configuration meeting it
    (the cheapest named beside it where it saves less than the layout policy asks of disaggregation), its GPUs,
    time to first token and time per output token; where none meets it, which target binds."""
    body: list[list[fmt.Cell]] = []
    rows = _rows(cat)
    for r in rows:
        head: list[fmt.Cell] = [cat.models[r.model].name, cat.precisions[r.precision].name]
        s = r.search
        if s is None:
            body.append([*head, "no layout holds it", "—", "—", "—", "—"])
        elif s.best is None:
            w = s.why
            text = "nothing meets it" if w is None or w.binding is None else (
                f"nothing meets it: the {'TTFT' if w.binding == 'ttft_ms' else 'TPOT'} binds, "
                f"{w.closest:,.1f} ms at best")
            body.append([*head, text, "—", "—", "—", "—"])
        elif s.recommended is not None:
            b, c = s.recommended, s.best
            parts = (*units.configuration(b.words).parts, *units.cheapest_aside(c.mode, c.gpus, s.saving))
            z = b.prediction  # each prediction with its range, where 80 % of its regime's test measurements fell
            body.append([*head, fmt.Phrase(parts), fmt.count(b.gpus), units.ttft_banded(z, 0), units.tpot_banded(z),
                         usd_mtok(b)])
    return fmt.html_table("at_target", ["Model", "Precision", "Recommended configuration meeting the target", "GPUs",
                                        "TTFT", "TPOT", "$ per M output tokens"],
                          body, align="lllrrrr", names=[r.name for r in rows])


class HomePage(Page):
    shows = (summary_table, target_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = self.reference(SERVING)
        node, sc = r.node, r.scenario
        if sc.ttft_s is None or sc.tpot_s is None:
            raise ValueError(f"scenario {sc.id} needs a latency target for the home page's costs")
        rows = []
        for m in SUMMARY_MODELS:
            for asked in SUMMARY_PRECISIONS:
                p = as_shipped(r.eng, m, asked)  # the developer's own checkpoint of that width (block FP8), as the grid
                name = f"{cat.models[m].name} {cat.precisions[p].name}"
                try:
                    d = r.deployment(m, p, scenario=SERVING)
                except NoLayout as exc:
                    rows.append(Row(m, p, name, [str(exc), "—", "—", "—"], None))
                    continue
                one = predict(d, 1)
                fit: list[fmt.Cell] = [d.layout.label, fmt.count(d.gpus), fmt.count(d.nodes, "nodes"),
                                       units.tpot_banded(one)]
                rows.append(Row(m, p, name, fit, at_scenario(r.eng, m, p, SERVING, sweep=False)))
        self._rows = rows
        shipped = [(cat.models[x.model].name, cat.precisions[x.precision].name) for x in rows
                   if x.precision not in SUMMARY_PRECISIONS]
        if not shipped:
            raise ValueError("the page says which rows are sized in their developer's own checkpoint format")
        self.shipped = "; ".join(f"{model}, {precision}" for model, precision in shipped)
        met = [x for x in rows if x.search is not None and x.search.best is not None]
        self.gb = fmt.unit_definition("GB")
        self.gib = fmt.unit_definition("GiB")
        self.node_name = node.name
        self.scenario = sc.name
        self.policy = r.eng.layout_policies[sc.layout_policy].name
        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.ttft_target = ms(sc.ttft_s, 0)
        self.tpot_target = ms(sc.tpot_s, 0)
        self.max_nodes = fmt.count(MAX_NODES, "nodes", show_unit=True)
        self.min_saving = fmt.percent(r.eng.layout_policies[sc.layout_policy].disaggregation.min_saving)
        self.met_count = fmt.count(len(met), "rows")
        self.row_count = fmt.count(len(rows), "rows")
        misses = [x.name for x in rows if x not in met]
        self.some_miss = fmt.claim(bool(misses), "; ".join(misses) or "every row meets the target")
        self.coverage = fmt.percent(COVERAGE, 0)
        recs = {x.name: x.search.recommended.prediction for x in met
                if x.search is not None and x.search.recommended is not None}
        above = [name for name, z in recs.items() if z.ttft_range[0] > z.ttft_s]
        listed = " and ".join(above) if len(above) < 3 else "; ".join(above[:-1]) + " and " + above[-1]  # names hold commas
        self.band_above_rows = fmt.Figure(len(above), "configurations", listed,
                                          "the recommended configurations whose TTFT band starts above their figure")
        self.band_above = fmt.claim(bool(above), "; ".join(above) or "no TTFT band starts above its figure")

namespace = HomePage.namespace_of
sources = HomePage.sources_of
