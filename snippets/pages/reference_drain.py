"""The predictions page's run drain: how near the modelled end of a run comes to the mean requests in flight its
client reports (`snippets.pages.reference_predictions` adds these figures and a claim to its namespace)."""

from __future__ import annotations

from snippets.calibration import Row, drain
from snippets.render import fmt


def run_drain(rows: list[Row]) -> dict[str, object]:
    """The figures and claim by name, over the rows of more than one request whose client reports its mean
    requests in flight and whose run the model plays out (`snippets.calibration.drain`)."""
    drained = [(got[1], mif, c) for r in rows
               if (mif := r.measurement.mean_in_flight) is not None and (c := r.measurement.concurrency) is not None
               and c > 1 and (got := drain(r.measurement, r.deployment, r.prediction)) is not None]
    return {
        "drain_runs": fmt.count(len(drained), "runs"),
        "drain_worst": fmt.percent(max((abs(sim / mif - 1) for sim, mif, _ in drained), default=0.0)),
        "drain_steady_worst": fmt.percent(max((abs(c / mif - 1) for _, mif, c in drained), default=0.0)),
        "drain_closer": fmt.claim(
            bool(drained) and all(abs(sim / mif - 1) < abs(c / mif - 1) for sim, mif, c in drained),
            f"{len(drained)} runs: the modelled run's mean in flight nearer the client's figure than the "
            "concurrency"),
    }
