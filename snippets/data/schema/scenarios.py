"""data/scenarios.yaml: a request shape, its load and its latency target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import (
    Field,
)

from snippets.data.base import Sources, as_written, obeys
from snippets.data.quantities import (
    _Measure,
    in_base,
)
from snippets.data.units import (
    TIME_UNITS,
)
from snippets.engine.specs import LatencyTargetSpec, ScenarioSpec


class TargetTime(_Measure):
    """A service-level time, a TTFT or TPOT target: a tenth of a millisecond to ten minutes."""

    UNITS = TIME_UNITS
    BASE = "s"
    BOUNDS = (1e-4, 600.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyTarget(LatencyTargetSpec):
    """The engine's `LatencyTargetSpec` as data/scenarios.yaml states it: each time a measure with its unit, held in
    seconds, with its reasons and sources."""

    ttft: Annotated[float, in_base(TargetTime)]
    tpot: Annotated[float, in_base(TargetTime)]
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario(ScenarioSpec):
    """A scenario as data/scenarios.yaml states it: the engine's own record (`ScenarioSpec`, whose fields and
    docstrings say what each means), its id the entry's, with its latency target (required here), reasons and
    sources."""

    target: LatencyTarget
    rationale: Annotated[str, Field(min_length=20)]
    sources: Sources


def _counts(s: Scenario) -> list[tuple[str, str]]:
    return [(name, f"{getattr(s, name)} is less than 1") for name in ("input_tokens", "output_tokens", "concurrency")
            if getattr(s, name) < 1]


ScenarioEntry = Annotated[Scenario, as_written(Scenario), obeys(_counts)]
"""An entry of data/scenarios.yaml: validated straight into the engine's record (`Scenario` is a `ScenarioSpec`)."""
