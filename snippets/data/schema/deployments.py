"""data/deployments.yaml: a deployment someone documented, with its layout."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    model_validator,
)

from snippets.data.base import PositiveInt, Sources, _Strict
from snippets.engine.specs import KeptLinear


class DeployedLayout(_Strict):
    tp: PositiveInt
    pp: PositiveInt = 1
    ep: PositiveInt = 1
    dp: PositiveInt = 1


class DocumentedDeployment(_Strict):
    """A deployment an engine's docs or a vendor publishes: the field the engine is checked against."""

    model: str
    precision: str
    accelerator: str
    gpus: PositiveInt
    nodes: PositiveInt
    layout: DeployedLayout
    engine: str
    context_tokens: PositiveInt | None = None
    keeps_16bit: list[KeptLinear] | None = None
    """The linear layers the checkpoint the deployment serves keeps at 16 bits (`Measurement.keeps_16bit`)."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _layout_is_the_gpus(self) -> DocumentedDeployment:
        lay = self.layout
        if lay.tp * lay.pp * lay.dp != self.gpus:
            raise ValueError(f"layout: tp x pp x dp = {lay.tp * lay.pp * lay.dp}, gpus is {self.gpus}")
        return self
