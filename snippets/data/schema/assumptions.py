"""data/assumptions.yaml: a value the site assumes, with its reason and source."""

from __future__ import annotations

from pydantic import (
    field_validator,
)

from snippets.data.base import PositiveFloat, Sources, _Strict
from snippets.data.quantities import (
    AssumedValue,
)


class Assumption(_Strict):
    name: str
    value: AssumedValue
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the range the sources give, in the unit of `value`."""
    rationale: str
    sources: Sources

    @field_validator("range")
    @classmethod
    def _ordered(cls, v: tuple[float, float]) -> tuple[float, float]:
        if v[0] > v[1]:
            raise ValueError("range must be [low, high]")
        return v
