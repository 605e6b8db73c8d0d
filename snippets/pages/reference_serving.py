"""Page model of "Serving tables" (docs/reference/serving.md): the reference-grade tables of the cost and
latency-target pages, presented where a reader looks a row up rather than reads a page.

Nothing is computed here but the share of a regime's test errors a prediction's band holds (`band_share`, the
engine's `bands.COVERAGE`): the cost grid is the cost page's (`snippets.pages.cost`: the recommended and the cheapest
configuration meeting the chat scenario's target, the engine's search, for every model, precision and priced accelerator of the
page), the published comparisons the latency-target page's (`snippets.pages.latency_target`). The names this page's
prose uses are those pages' own figures, read from their one computation (`Page.of`).
"""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine.bands import COVERAGE
from snippets.pages.base import Page
from snippets.pages.cost import CostPage, cost_table
from snippets.pages.latency_target import LatencyTargetPage, cheapest_table, comparisons_table, pd_table
from snippets.pages.sources import original
from snippets.render import fmt


class ReferenceServingPage(Page):
    """The names the page's prose uses, each the cost or latency-target page's figure."""

    shows = (cost_table, cheapest_table, comparisons_table, pd_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        c = CostPage.of(original(cat))
        lt = LatencyTargetPage.of(original(cat))
        self.scenario = c.scenario
        self.n_in, self.n_out = c.n_in, c.n_out
        self.ttft_target, self.tpot_target = c.ttft_target, c.tpot_target
        self.max_nodes = c.max_nodes
        self.met_rows, self.grid_rows = c.met_rows, c.grid_rows
        self.min_saving, self.differ_rows = c.min_saving, c.differ_rows
        self.context = c.context
        self.band_share = fmt.percent(COVERAGE)  # the share of a regime's test errors a band holds (engine.bands)
        self.model = lt.model
        self.precision = lt.precision
        self.pd_model = lt.pd_model
        self.pd_runs = lt.pd_runs


namespace = ReferenceServingPage.namespace_of
sources = ReferenceServingPage.sources_of
