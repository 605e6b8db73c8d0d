"""Page model of "Serving to a latency target" (docs/latency-target.md), a module per section.

Every configuration, time, throughput and price on the page is the engine's search (`snippets.engine.search`:
`at_scenario`, the frontier and the cheapest point meeting a scenario's target) or its serving layer
(`snippets.engine.serving.predict` with speculative decoding or a prefix hit); every target and request shape is
a scenario of `data/scenarios.yaml`, every price the one `data/prices.yaml` marks `site_uses`, the MTP module's
acceptance rate DeepSeek's (`data/models.yaml`). What this package adds are the page's choices (`common`: the model,
the accelerators, the ladder of TPOT targets, the loads of the speculative-decoding table) and their presentation:
`page` (the names the prose uses, with `modes` and `published` for their sections) and `tables` (what the blocks
print; the comparison's tables are printed by the reference page docs/reference/serving.md).
"""

from __future__ import annotations

from snippets.pages.latency_target.common import mtok
from snippets.pages.latency_target.page import LatencyTargetPage
from snippets.pages.latency_target.tables import (
    cheapest_table,
    comparisons_table,
    ladder_table,
    other_frontier_charts,
    pd_table,
    shapes_table,
    speculation_table,
    worked_example,
    worked_frontier_chart,
)

LatencyTargetPage.shows = (worked_frontier_chart, other_frontier_charts, worked_example, ladder_table, shapes_table,
                           speculation_table)
"""What the page's blocks print; `cheapest_table`, `comparisons_table` and `pd_table` are printed by
docs/reference/serving.md."""

namespace = LatencyTargetPage.namespace_of
sources = LatencyTargetPage.sources_of

__all__ = ["LatencyTargetPage", "cheapest_table", "comparisons_table", "ladder_table", "mtok", "namespace",
           "other_frontier_charts", "pd_table", "shapes_table", "sources", "speculation_table", "worked_example",
           "worked_frontier_chart"]
