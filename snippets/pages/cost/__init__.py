"""Page model of "The cost of a token" (docs/cost.md), a module per part.

Every deployment, throughput and latency on the page is the engine's (`snippets.engine` through
`snippets.pages.scenario.reference`, and `snippets.engine.timing.predict`); every price is the one
`data/prices.yaml` marks `site_uses`. What this package adds is the page's choices (`common`: the request shape,
the models, the shares of peak load shown) and one helper the engine lacks: `common.cheapest_layout`, which
tries every tensor-parallel degree inside one node and keeps the one with the lowest cost per output
token at its KV cache's maximum concurrency. `page` names the figures the prose uses, `tables` prints the
blocks (the whole grid, `cost_table`, on the reference page docs/reference/serving.md).
"""

from __future__ import annotations

from snippets.pages.cost.page import CostPage
from snippets.pages.cost.tables import (
    cost_chart,
    cost_table,
    load_table,
    page_grid,
    price_table,
    split_table,
    worked_example,
)

CostPage.shows = (price_table, worked_example, cost_chart, split_table, load_table)
"""What the page's blocks print; `cost_table` is printed by docs/reference/serving.md."""

namespace = CostPage.namespace_of
sources = CostPage.sources_of

__all__ = ["CostPage", "cost_chart", "cost_table", "load_table", "namespace", "page_grid", "price_table", "sources",
           "split_table", "worked_example"]
