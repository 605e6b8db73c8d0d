"""data/scenarios.yaml: a request shape, its load and its latency target."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
)

from snippets.data.base import PositiveInt, Sources, _Strict
from snippets.data.quantities import (
    _Measure,
)
from snippets.data.units import (
    TIME_UNITS,
)


class TargetTime(_Measure):
    """A service-level time, a TTFT or TPOT target: a tenth of a millisecond to ten minutes."""

    UNITS = TIME_UNITS
    BASE = "s"
    BOUNDS = (1e-4, 600.0)

    @property
    def seconds(self) -> float:
        return self.base


class LatencyTarget(_Strict):
    """The service-level objective a scenario is served to: the time to first token (queueing included) and the
    time per output token after the first, each a limit a request's figure must not exceed."""

    ttft: TargetTime
    tpot: TargetTime
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


class Scenario(_Strict):
    """What a deployment is sized for: where, under which policies, for how many sequences of what length, and the
    latency target it is served to."""

    name: str
    node: str
    """Id of the `node` entry whose accelerator and size the page uses by default."""
    memory_policy: str
    layout_policy: str
    time_model: str
    """Id of the `time` entry in policies.yaml the scenario's times use."""
    input_tokens: PositiveInt
    output_tokens: PositiveInt
    concurrency: PositiveInt
    """Sequences served at once, each holding input + output tokens of KV cache at its end."""
    kv_precision: str
    """Id of the precision the KV cache is stored in for a model with no published checkpoint (GPT-3). Otherwise the
    engine stores it as vLLM's --kv-cache-dtype auto does, in the model's dtype, unless told another."""
    target: LatencyTarget
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.output_tokens
