"""Page model of "KV cache and concurrency" (docs/kv-cache.md), a package by section.

Every byte, sequence count, layout, time and price the page shows is the engine's
(`snippets.engine`): KV bytes per token from the architecture (`params.kv_bytes_per_token`, and per GPU
`memory.kv_bytes_per_token_per_gpu`), the pool and what it leaves for the KV cache (`GpuMemory`), the
sequences a layout holds (`GpuMemory.max_sequences`, `Deployment.max_concurrency`) and the time and cost
of a load (`timing.predict`). The node, the memory policy, the context and the concurrency are those of
`data/scenarios.yaml` (`reference`, one sequence; `serving`, many).

What this module adds, and flags as such, are small readings of the engine that size nothing new:
`sequences_fit` (a setting's `memory(layout).max_sequences x dp` at any context and KV precision,
without `deploy`'s check that one sequence fits), `longest_context` (Llama 3.1's
length comes from the `decode-context` assumption: `data/models.yaml` does not record it) and the
contiguous-reservation contrast of the paging section.

Sections: `common` (the page's choices, what it reads from the engine), `tables` (tables and chart), `page` (the
page model).
"""

from snippets.pages.kv_cache.common import (
    CHART_CONCURRENCY,
    COMPARED,
    COST_ROWS,
    GIB,
    KV_FP8,
    LONG_CONTEXT,
    MIDDLE_CONTEXT,
    POOL_ROWS,
    REPLICATION_TPS,
    TIGHT_TP,
    WORKED,
    WORKED_TPS,
    Worked,
    at,
    gib,
    kv_token_gpu,
    longest_context,
    seqs,
    sequences_fit,
    tokens,
)
from snippets.pages.kv_cache.page import (
    KvCachePage,
    namespace,
    sources,
)
from snippets.pages.kv_cache.tables import (
    CostRow,
    chart_contexts,
    cost_rows,
    cost_table,
    kv_chart,
    kv_table,
    pool_rows,
    pool_table,
    replication_rows,
    replication_table,
)

__all__ = [
    "CHART_CONCURRENCY",
    "COMPARED",
    "COST_ROWS",
    "GIB",
    "KV_FP8",
    "LONG_CONTEXT",
    "MIDDLE_CONTEXT",
    "POOL_ROWS",
    "REPLICATION_TPS",
    "TIGHT_TP",
    "WORKED",
    "WORKED_TPS",
    "CostRow",
    "KvCachePage",
    "Worked",
    "at",
    "chart_contexts",
    "cost_rows",
    "cost_table",
    "gib",
    "kv_chart",
    "kv_table",
    "kv_token_gpu",
    "longest_context",
    "namespace",
    "pool_rows",
    "pool_table",
    "replication_rows",
    "replication_table",
    "seqs",
    "sequences_fit",
    "sources",
    "tokens",
]
