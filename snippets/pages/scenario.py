"""The scenario every page sizes for, chosen once: the ids come from `data/scenarios.yaml`.

A page asks `reference(cat)` for the engine's records and the scenario, and `deployment(...)` for a
model in a precision on a node; no page model names a node, a memory reserve or a context length
of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine import Deployment, Layout, deploy, setting
from snippets.engine.specs import EngineCatalog, NodeSpec, ScenarioSpec
from snippets.pages.sources import Recording

SCENARIO = "reference"
"""The scenario the pages size for: one sequence at a moderate context, vLLM's memory budget."""
SERVING = "serving"
"""The scenario of a serving load (many sequences at once), where a page contrasts it."""
NEWER_VLLM = "vllm-v021"
"""The memory policy of vLLM's releases from v0.21 (data/policies.yaml): pages that show the default budget's
verdict show this one's beside it."""


@dataclass(frozen=True)
class Reference:
    eng: EngineCatalog
    scenario: ScenarioSpec
    node: NodeSpec

    def deployment(self, model: str, precision: str, *, node: str | None = None, accelerator: str | None = None,
                   layout: Layout | None = None, scenario: str | None = None, layout_policy: str | None = None,
                   concurrency: int | None = None, context_tokens: int | None = None) -> Deployment:
        """`model` in `precision` at the scenario, on its node (or `node`, or `accelerator`'s first node),
        on `layout` or on the one the scenario's policy chooses."""
        st = setting(self.eng, model, precision, scenario or self.scenario.id, node=node, accelerator=accelerator,
                     layout_policy=layout_policy, concurrency=concurrency, context_tokens=context_tokens)
        return deploy(st, layout)


def reference(cat: Catalog, scenario: str = SCENARIO) -> Reference:
    """The engine's records, the scenario and its node. From a recording catalog (`snippets.pages.sources.recording`, a
    page's `self.cat`), the records note the entries each deployment is built from."""
    eng = engine_catalog(cat)
    if isinstance(cat, Recording):
        eng = cat.engine(eng)
    sc = eng.scenarios[scenario]
    return Reference(eng, sc, eng.nodes[sc.node])
