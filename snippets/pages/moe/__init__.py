"""Page model of "Mixture of experts and expert parallelism" (docs/moe.md), a package by section.

Every deployment is the engine's (`snippets.pages.scenario.reference`, `deploy`, `feasible`); every byte and
second is the engine's `step` and `predict` (`snippets.engine.step`, `snippets.engine.serving`), with the
engine's links (`topology.group_link`) and collectives (`collectives.alltoall`, `allreduce`); the share of
experts a batch touches is `params.experts_touched` and the KV cache a decode step reads `memory.decode_kv_read`
(`kv_read` gives it the page's deployment). What this module adds, as page helpers the engine does not offer
(flagged for the engine's owners):

- `weights_read`: the weight bytes of one decode step, the step's bytes less the KV cache it reads (the engine
  reports the two only summed);
- `a2a_bytes_per_token`: what one token's combine brings back in one layer (its k experts' outputs, in BF16);
  its dispatch sends about half as much (FP8, as DeepEP sends it: `step.FP8_DISPATCH_BYTES` per element);
- `smallest_tp_only`: the fewest GPUs a pure tensor-parallel layout (no PP) needs, by `feasible` over TP degrees;
- `why_more`: the reason a documented deployment rents more GPUs than the engine's own choice.

Sections: `common` (the page's choices, formatting and helpers), `tables` (its tables and chart), `page`
(the page model and its worked example).
"""

from snippets.pages.moe.common import (
    ACCEL,
    BATCHES,
    CONCURRENCY,
    CONTEXT,
    DOC_MODELS,
    GPUS,
    HEAVY,
    MODEL,
    MODELS,
    NETWORK_EP,
    NVL72,
    PRECISION,
    PREFILL_TOKENS,
    QUIZ_BATCH,
    QUIZ_MIXTRAL,
    QUIZ_MIXTRAL_BATCH,
    QUIZ_MODEL,
    a2a_bytes_per_token,
    ds_deployment,
    gb,
    gbps,
    gpu_label,
    kb,
    kv_read,
    layouts,
    mb,
    seqs,
    tok_s,
    weights_read,
)
from snippets.pages.moe.page import (
    MoePage,
    Worked,
    namespace,
    sources,
    worked_example,
)
from snippets.pages.moe.tables import (
    A2aRow,
    DocRow,
    a2a_rows,
    a2a_table,
    cost_of,
    cost_rows,
    cost_table,
    doc_rows,
    doc_table,
    params_rows,
    params_table,
    reads_chart,
    reads_table,
    smallest_tp_only,
    why_more,
)

__all__ = [
    "ACCEL",
    "BATCHES",
    "CONCURRENCY",
    "CONTEXT",
    "DOC_MODELS",
    "GPUS",
    "HEAVY",
    "MODEL",
    "MODELS",
    "NETWORK_EP",
    "NVL72",
    "PRECISION",
    "PREFILL_TOKENS",
    "QUIZ_BATCH",
    "QUIZ_MIXTRAL",
    "QUIZ_MIXTRAL_BATCH",
    "QUIZ_MODEL",
    "A2aRow",
    "DocRow",
    "MoePage",
    "Worked",
    "a2a_bytes_per_token",
    "a2a_rows",
    "a2a_table",
    "cost_of",
    "cost_rows",
    "cost_table",
    "doc_rows",
    "doc_table",
    "ds_deployment",
    "gb",
    "gbps",
    "gpu_label",
    "kb",
    "kv_read",
    "layouts",
    "mb",
    "namespace",
    "params_rows",
    "params_table",
    "reads_chart",
    "reads_table",
    "seqs",
    "smallest_tp_only",
    "sources",
    "tok_s",
    "weights_read",
    "why_more",
    "worked_example",
]
