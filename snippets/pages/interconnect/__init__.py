"""Page model of "Interconnect & Why Big Models Need Many GPUs" (docs/interconnect.md), a package by section.

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets`. The node is the reference scenario's (`snippets.pages.scenario`); the A100
appears where the source material compares link generations.

Two kinds of sizing, kept apart: the source's rounded arithmetic (nominal parameters x bytes, over
the card's label less a flat reserve: `snippets.teaching.rounded`), shown as the teaching example and named
so; and what a serving engine deploys (`snippets.engine` through `reference(cat).deployment`),
which every other GPU count, layout, node count and verdict on the page comes from.

Sections: `common` (the page's choices, the source's arithmetic), `deployed` (the engine's deployments as figures),
`tables` (tables and charts), `page` (the page model and its worked examples).
"""

from snippets.pages.interconnect.common import (
    GIB,
    MODELS,
    OLDER_NODE,
    ORDER_OF_MAGNITUDE,
    PRECISIONS,
    QUIZ_ALLREDUCE,
    QUIZ_SPLIT,
    SOURCE_MODELS,
    SOURCE_PRECISION,
    SOURCE_RESERVE,
    SOURCE_TABLE_PRECISIONS,
    Row,
    nvlink_of,
    pcie_x16,
    sizing_fields,
)
from snippets.pages.interconnect.deployed import (
    Deployed,
    cost_figure,
    quiz,
)
from snippets.pages.interconnect.page import (
    InterconnectPage,
    engine_example,
    namespace,
    source_table,
    sources,
    worked_example,
)
from snippets.pages.interconnect.tables import (
    CHART_PRECISIONS,
    Tier,
    cliff_chart,
    cliff_table,
    gpus_chart,
    nvlink_table,
    sizing_table,
    tiers,
)

__all__ = [
    "CHART_PRECISIONS",
    "GIB",
    "MODELS",
    "OLDER_NODE",
    "ORDER_OF_MAGNITUDE",
    "PRECISIONS",
    "QUIZ_ALLREDUCE",
    "QUIZ_SPLIT",
    "SOURCE_MODELS",
    "SOURCE_PRECISION",
    "SOURCE_RESERVE",
    "SOURCE_TABLE_PRECISIONS",
    "Deployed",
    "InterconnectPage",
    "Row",
    "Tier",
    "cliff_chart",
    "cliff_table",
    "cost_figure",
    "engine_example",
    "gpus_chart",
    "namespace",
    "nvlink_of",
    "nvlink_table",
    "pcie_x16",
    "quiz",
    "sizing_fields",
    "sizing_table",
    "source_table",
    "sources",
    "tiers",
    "worked_example",
]
