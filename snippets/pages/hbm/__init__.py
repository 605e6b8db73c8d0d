"""Page model of "HBM: capacity and bandwidth" (docs/hbm.md), a package by section.

Every deployment the page shows (layout, memory per GPU, GPUs, nodes, decode ceiling, cost) is the
engine's (`snippets.engine`, through `snippets.pages.scenario.reference`): the node, the memory
budget and the context are the reference scenario's (`data/scenarios.yaml`). What this module adds
is teaching arithmetic that sizes nothing: arithmetic intensity, the ridge point, the time to read
a card's memory once, a hypothetical card that holds what it cannot.

Sections: `common` (the page's choices and what it reads from the engine), `tables` (its tables and chart),
`prose` (figures for the prose and the quiz), `page` (the page model and its worked example).
"""

from snippets.pages.hbm.common import (
    BATCHES,
    CHART_MODEL,
    CHART_PRECISION,
    FIT_ROWS,
    ILLUSTRATIVE_BATCH,
    LEANER,
    LONG_CONTEXT,
    MODELS,
    OLDER,
    ONE_CARD,
    PIPELINED,
    PRECISIONS,
    SECONDS_PER_HOUR,
    TP_ONLY,
    WORKED,
    batch_ceiling,
    kv_per_token,
    older_node,
    one_card,
    per_gpu_hour,
    weights_only_ceiling,
    weights_read,
)
from snippets.pages.hbm.page import (
    HbmPage,
    namespace,
    sources,
    worked_example,
)
from snippets.pages.hbm.prose import (
    Shown,
    TpRoom,
    one_card_quiz,
    serving_quiz,
    tight_layout,
)
from snippets.pages.hbm.tables import (
    batch_rows,
    batch_table,
    ceiling_chart,
    ceiling_table,
    fits_table,
    gpu_table,
)

__all__ = [
    "BATCHES", "CHART_MODEL", "CHART_PRECISION", "FIT_ROWS", "ILLUSTRATIVE_BATCH", "LEANER", "LONG_CONTEXT",
    "MODELS", "OLDER", "ONE_CARD", "PIPELINED", "PRECISIONS", "SECONDS_PER_HOUR", "TP_ONLY", "WORKED", "HbmPage",
    "Shown", "TpRoom", "batch_ceiling", "batch_rows", "batch_table", "ceiling_chart", "ceiling_table",
    "fits_table", "gpu_table", "kv_per_token", "namespace", "older_node", "one_card", "one_card_quiz",
    "per_gpu_hour", "serving_quiz", "sources", "tight_layout", "weights_only_ceiling", "weights_read",
    "worked_example",
]
