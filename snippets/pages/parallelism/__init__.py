"""Page model of "Tensor & pipeline parallelism" (docs/parallelism.md), a package by section.

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets`: every layout, GPU count, node count and time is a deployment of
`snippets.engine` (through `snippets.pages.scenario.reference`), on the scenario's node, as on the
interconnect page. Times are the engine's time model (`snippets.engine.step`, `serving`, `collectives`):
each operation's roofline, the all-reduces the engines pick priced by their published timings, pipeline
sends, and every kernel's fixed cost, with every figure read from the deployment's `setting.time_model`;
every link is the engine's (`snippets.engine.topology.group_link`, and `rewired` for the same deployment over
PCIe or the network). `snippets.teaching.traffic` counts the bytes of those layouts. Activations travel in BF16.

Sections: `common` (the page's choices, one token's traffic, formatting), `steps` (time through the engine),
`tables`, `drawings` (diagrams), `worked` (the worked deployment's figures), `page` (the page model). Helpers
the engine lacks: `bubble` is the pipeline's fill-and-drain share; `compute_bound_batch` searches the engine's
step for the first batch whose arithmetic outlasts its memory traffic.
"""

from snippets.pages.parallelism.common import (
    ACTIVATIONS,
    MODELS,
    PIPE_MICRO,
    PRECISIONS,
    SMALL,
    TIME_LINKS,
    WORKED,
    Traffic,
    traffic,
)
from snippets.pages.parallelism.drawings import pipeline_diagram, ring_diagram, tp_diagram
from snippets.pages.parallelism.page import ParallelismPage, worked_example
from snippets.pages.parallelism.steps import (
    Step,
    TPShard,
    algorithm_prices,
    bubble,
    compute_bound_batch,
    decode_step,
    over,
    ring_steps_of,
    tp_allreduce,
    tp_shard,
)
from snippets.pages.parallelism.tables import (
    across_table,
    algorithm_table,
    breakdown_chart,
    bubble_table,
    comm_table,
    layout_table,
    message_tokens,
    ring_table,
    rules_table,
)

namespace = ParallelismPage.namespace_of
sources = ParallelismPage.sources_of

__all__ = [
    "ACTIVATIONS", "MODELS", "PIPE_MICRO", "PRECISIONS", "SMALL", "TIME_LINKS", "WORKED", "ParallelismPage", "Step",
    "TPShard", "Traffic", "across_table", "algorithm_prices", "algorithm_table", "breakdown_chart", "bubble",
    "bubble_table", "comm_table", "compute_bound_batch", "decode_step", "layout_table", "message_tokens", "namespace",
    "over", "pipeline_diagram", "ring_diagram", "ring_steps_of", "ring_table", "rules_table", "sources",
    "tp_allreduce", "tp_diagram", "tp_shard", "traffic", "worked_example",
]
