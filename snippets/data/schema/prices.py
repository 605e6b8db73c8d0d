"""data/prices.yaml: an hourly price of renting an accelerator, with its kind and term."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import (
    Field,
    model_validator,
)

from snippets.data.base import PositiveInt, Sources, _Strict
from snippets.data.quantities import (
    HourlyPrice,
)

PRICE_KINDS = ("on-demand", "reserved", "spot")


"""How a price is bought: by the hour with no commitment, against a term commitment, or preemptible capacity."""


class Price(_Strict):
    """An indicative list price of one accelerator at one provider, per GPU-hour, as a price list gave it on the date
    its source read it (a transcription's date where the price list itself could not be read)."""

    accelerator: str
    """Id of the accelerator in accelerators.yaml."""
    provider: str
    offering: str
    """What the provider sells at that price: "8x H100 SXM instance, on demand"."""
    kind: Literal["on-demand", "reserved", "spot"]
    """on-demand: by the hour, no commitment; reserved: against a term (`term` says which); spot: preemptible."""
    tier: Annotated[str, Field(min_length=3)] | None = None
    """The provider's tier where it sells the same GPU at several prices (RunPod's Community or Secure Cloud)."""
    term: Annotated[str, Field(min_length=3)] | None = None
    """The commitment a reserved price needs ("1 year"); only for `kind: reserved`."""
    price: HourlyPrice
    gpus_per_unit: PositiveInt = 1
    """GPUs in the smallest unit the offering rents (8 for an 8-GPU instance sold only whole)."""
    site_uses: bool = False
    """True on exactly one price per priced accelerator: the one every cost on the site uses (on demand only)."""
    sources: Sources

    @model_validator(mode="after")
    def _kind_consistent(self) -> Price:
        if self.site_uses and self.kind != "on-demand":
            raise ValueError("site_uses: the site's costs use an on-demand price, not a reserved or spot one")
        if (self.term is not None) != (self.kind == "reserved"):
            raise ValueError("term: a reserved price states its term, and only a reserved price has one")
        return self

    @property
    def read(self) -> dt.date:
        """The date the price list was read: the first source's, which for a transcription is the copy's own date."""
        return self.sources[0].read

    @property
    def secondary(self) -> bool:
        """The price comes from a transcription of the provider's price list, not the list itself."""
        return self.sources[0].secondary
