"""The serving engine: sizes a deployment the way vLLM and SGLang do. Standard library only.

- `specs`: the records it reads (built from `data/` by `snippets.data.export`);
- `params`: parameter counts from an architecture;
- `layout`: the layouts engines accept (TP and KV heads, uneven PP, EP);
- `memory`: memory per GPU by part (weights by tensor class, KV cache, the engine's pool);
- `deployment`: `deploy(setting(...))`, the one `Deployment` every page reads.
"""

from snippets.engine.deployment import (
    ContextTooLong,
    Deployment,
    NoLayout,
    RefusedLayout,
    RefusedSetting,
    Setting,
    UnsupportedFormat,
    deploy,
    feasible,
    setting,
)
from snippets.engine.layout import Layout

__all__ = ["ContextTooLong", "Deployment", "Layout", "NoLayout", "RefusedLayout", "RefusedSetting", "Setting",
           "UnsupportedFormat", "deploy", "feasible", "setting"]
