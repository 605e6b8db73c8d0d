"""data/predictors.yaml: another tool's published accuracy at predicting serving latency, as its evaluation states it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from snippets.data.base import PositiveInt, Sources, Text, _Strict
from snippets.data.quantities import Percent

PREDICTOR_METRICS = ("e2e", "ttft", "itl")
"""The errors an evaluation may report: a request's end-to-end latency, its time to first token, its time
between output tokens."""


class PredictorAccuracy(_Strict):
    """One published evaluation of a tool that predicts serving latency without running the deployment: what it was
    measured against, and the errors it reports, each the statistic the publication names.

    Never one of the site's rows: the site does not hold the runs these errors were computed on, so the predictions
    page sets them beside its own errors on other runs, for a reader to weigh, and fits nothing on them.
    """

    predictor: Annotated[Text, Field(min_length=3)]
    """The tool, and the variant evaluated ("BLIS, trained physics")."""
    method: Annotated[Text, Field(min_length=10)]
    """How it predicts, and what it was fitted or profiled on."""
    evaluated_on: Annotated[Text, Field(min_length=10)]
    """The runs its errors were computed against: engine, models, GPUs, what was held out."""
    accelerator: str | None = None
    """Id of the accelerator in accelerators.yaml where the figures are one GPU's runs alone (the predictions page then
    sets the engine's test rows on that GPU beside them); None for an evaluation over several."""
    experiments: PositiveInt | None = None
    """How many runs the reported figures summarise; None where the publication does not say."""
    statistic: Annotated[Text, Field(min_length=10)]
    """What each figure is: per run, the error of which latency; across runs, which summary."""
    e2e: Percent | None = None
    ttft: Percent | None = None
    itl: Percent | None = None
    read_from: Literal["text", "chart"]
    """text: the figures are printed in the publication; chart: read off its bar chart (good to a few tenths of a
    point; the note says how)."""
    note: Annotated[Text, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _reports_an_error(self) -> PredictorAccuracy:
        if all(getattr(self, m) is None for m in PREDICTOR_METRICS):
            raise ValueError("e2e, ttft, itl: an evaluation reports at least one of the three errors")
        return self

    @property
    def name(self) -> str:
        """What a sources list calls the entry: the tool and variant."""
        return self.predictor

    def error(self, metric: str) -> float | None:
        """The reported error of `metric` (one of `PREDICTOR_METRICS`) as a fraction, or None where not reported."""
        if metric not in PREDICTOR_METRICS:
            raise ValueError(f"unknown metric {metric!r}: one of {', '.join(PREDICTOR_METRICS)}")
        p: Percent | None = getattr(self, metric)
        return None if p is None else p.fraction
