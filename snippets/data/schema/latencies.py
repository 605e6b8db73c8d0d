"""data/latencies.yaml: a measured launch or collective latency, with its source."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, Sources, _Strict
from snippets.data.quantities import (
    Duration,
)


class Latency(_Strict):
    """An indicative latency of one path or operation, as a published measurement or datasheet gives it.

    Never a guarantee: the figure depends on the software, the message size and the system, so pages label it
    indicative and show the range the sources span.
    """

    name: str
    path: Literal["nvlink", "pcie", "network", "collective", "kernel"]
    """What the time crosses: GPU to GPU over NVLink, GPU to GPU over PCIe and the host, the scale-out
    network, a whole collective (launch and synchronisation included), or one kernel's fixed cost on a GPU."""
    what: Annotated[str, Field(min_length=10)]
    """What exactly is timed: "one-way small write between two GPUs, p2pBandwidthLatencyTest"."""
    accelerator: str | None = None
    """Id of the accelerator measured, where the figure belongs to one."""
    value: Duration
    """The indicative figure the site uses."""
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `value`'s unit."""
    basis: Literal["measured", "datasheet", "derived"]
    """measured: read from a published run; datasheet: a vendor's stated figure; derived: computed from a
    published run (a time from a bus bandwidth and a message size), the note says how."""
    points: tuple[tuple[PositiveInt, PositiveFloat, PositiveFloat], ...] = ()
    """For a collective: the published times it was read from, each (GPUs, message bytes, time in `value`'s
    unit); the time model's collective factors are fitted on them (`snippets.calibration.fit_collectives`)."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _value_in_range(self) -> Latency:
        low, high = self.range
        if low > high:
            raise ValueError("range must be [low, high]")
        if self.points and self.path != "collective":
            raise ValueError("points: only a collective's time is tabulated by message size")
        if not low <= self.value.value <= high:
            raise ValueError(f"value: {self.value.value:g} {self.value.unit} lies outside the range {low:g}-{high:g}")
        return self
