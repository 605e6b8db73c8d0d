"""The engine against the field: every documented deployment (data/deployments.yaml) is feasible under
the engine's rules and memory, and the engine's own choice never needs more GPUs than a documented one."""

from __future__ import annotations

import pytest

from snippets.data.export import engine_catalog
from snippets.engine import Layout, deploy, feasible, setting

from ..conftest import repository_catalog

CAT = repository_catalog()
ENG = engine_catalog(CAT)
SCENARIO = "reference"


def _setting(dep):
    ctx = dep.context_tokens or ENG.scenarios[SCENARIO].context_tokens
    return setting(ENG, dep.model, dep.precision, SCENARIO, accelerator=dep.accelerator, concurrency=1,
                   context_tokens=ctx)


@pytest.mark.parametrize("dep_id", sorted(CAT.deployments))
def test_documented_deployment_is_feasible(dep_id):
    dep = CAT.deployments[dep_id]
    lay = Layout(dep.layout.tp, dep.layout.pp, dep.layout.ep, dep.layout.dp)
    assert feasible(_setting(dep), lay) == [], dep.note


@pytest.mark.parametrize("dep_id", sorted(CAT.deployments))
def test_engine_needs_no_more_gpus_than_documented(dep_id):
    dep = CAT.deployments[dep_id]
    chosen = deploy(_setting(dep))
    assert chosen.gpus <= dep.gpus, f"engine chose {chosen.layout.label} ({chosen.why}); documented {dep.gpus}"


def test_the_field_covers_sglangs_deepseek_table_and_nims_llama_profiles():
    engines = {d.engine for d in CAT.deployments.values()}
    assert {"SGLang", "TensorRT-LLM (NIM)"} <= engines
    deepseek = {(d.precision, d.accelerator, d.gpus) for d in CAT.deployments.values()
                if d.model in ("deepseek-v3", "deepseek-r1")}
    assert {("fp8", "h200-sxm", 8), ("fp8", "h100-sxm", 16), ("bf16", "h100-sxm", 32), ("bf16", "a100-80gb-sxm", 32),
            ("int8", "a100-80gb-sxm", 16), ("int8", "l40s", 32)} <= deepseek
