"""Page model of "Numeric precision" (docs/precision.md), a package by section.

The formats (bits, bytes, ranges) come from `snippets.teaching.formats`; every deployment the page shows
(weights, layout, memory per GPU, GPUs, nodes, decode ceiling, cost) is the engine's, through
`snippets.pages.scenario.reference`: the node, the memory budget and the context are the
reference scenario's (`data/scenarios.yaml`).

Sections: `common` (the page's choices and formats), `tables`, `page` (the page model and its worked example).
"""

from snippets.pages.precision.common import (
    COST_MODEL,
    FLOATS,
    FORMATS,
    MODELS,
    OLDER,
    QUIZ_OLD_TP,
    REFERENCE,
    SIZED,
    Format,
    T,
    key,
)
from snippets.pages.precision.page import (
    PrecisionPage,
    fmt_name,
    namespace,
    older_quiz,
    sources,
    worked_example,
)
from snippets.pages.precision.tables import (
    Row,
    cost_table,
    decode_table,
    formats_table,
    kept_16bit_bytes,
    on_layout,
    ranges_table,
    sizing_table,
)

__all__ = [
    "COST_MODEL",
    "FLOATS",
    "FORMATS",
    "MODELS",
    "OLDER",
    "QUIZ_OLD_TP",
    "REFERENCE",
    "SIZED",
    "Format",
    "PrecisionPage",
    "Row",
    "T",
    "cost_table",
    "decode_table",
    "fmt_name",
    "formats_table",
    "kept_16bit_bytes",
    "key",
    "namespace",
    "older_quiz",
    "on_layout",
    "ranges_table",
    "sizing_table",
    "sources",
    "worked_example",
]
