"""Page model of "Prefill, decode and the roofline" (docs/roofline.md), a package by section.

Every time on the page is the engine's (`snippets.engine.step.step` and `snippets.engine.serving.predict`) for the
reference scenario's request (`data/scenarios.yaml`) and time model (`data/policies.yaml`,
`measured-fractions`); the deployments are the engine's (`snippets.pages.scenario.reference`).
What this module adds is teaching arithmetic the engine does not offer as a function (flagged for
the engine's owners):

- `critical_batch`: the smallest decode batch whose step the engine finds compute-bound, by
  bisection over `step` (the compute and memory parts of a step both grow linearly with the batch,
  so their ratio rises monotonically and the search is exact);
- `intensity_limit`: what a decode step's FLOPs per byte tend to as the batch grows (the slope of
  FLOPs over the slope of bytes, read off two `step` calls);
- the ridge point: dense FLOP/s ÷ HBM bandwidth, per chip and format, at datasheet peak and at the
  shares the time model's kernels reach (a large GEMM's throughput, a one-token GEMM's weight stream).

Sections: `common` (the page's choices and roofline arithmetic), `tables` (tables and charts), `page` (the page
model and its worked example).
"""

from snippets.pages.roofline.common import (
    BATCHES,
    CURVE_TP,
    MODEL,
    OLDER,
    PRECISION,
    SEARCH_LIMIT,
    SECOND,
    achieved_ridge,
    compute_bound,
    critical_batch,
    decode,
    decode_context,
    deployments,
    fractions,
    gbytes,
    gflop,
    intensity,
    intensity_limit,
    kv_per_gpu,
    node_of,
    ridge,
    tflops,
    weights_per_gpu,
)
from snippets.pages.roofline.page import (
    PassShown,
    RooflinePage,
    namespace,
    sources,
    worked_example,
)
from snippets.pages.roofline.tables import (
    ROOF_CHIPS,
    Curve,
    batch_rows,
    curve_chart,
    curves,
    intensity_table,
    ridge_table,
    roof_format,
    roof_marks,
    roofline_chart,
)

__all__ = [
    "BATCHES",
    "CURVE_TP",
    "MODEL",
    "OLDER",
    "PRECISION",
    "ROOF_CHIPS",
    "SEARCH_LIMIT",
    "SECOND",
    "Curve",
    "PassShown",
    "RooflinePage",
    "achieved_ridge",
    "batch_rows",
    "compute_bound",
    "critical_batch",
    "curve_chart",
    "curves",
    "decode",
    "decode_context",
    "deployments",
    "fractions",
    "gbytes",
    "gflop",
    "intensity",
    "intensity_limit",
    "intensity_table",
    "kv_per_gpu",
    "namespace",
    "node_of",
    "ridge",
    "ridge_table",
    "roof_format",
    "roof_marks",
    "roofline_chart",
    "sources",
    "tflops",
    "weights_per_gpu",
    "worked_example",
]
