"""The time model against the measurements: each row's prediction, its error, and the fit of the two factors.

Only `role: calibration` rows (NVIDIA NIM's runs) take part in the fit of the time model's compute fraction
(from time to first token) and per-layer overhead (from inter-token latency); test rows are predicted with the
fitted model and reported apart. `python -m snippets.calibration` prints the fit and every row's error.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial

from snippets.data import Catalog, Measurement
from snippets.data.export import engine_catalog
from snippets.engine import Deployment, Layout, deploy, setting
from snippets.engine.specs import EngineCatalog, TimeModelSpec
from snippets.engine.timing import Prediction, predict

SCENARIO = "reference"
METRICS = ("ttft_ms", "itl_ms", "output_tokens_per_s")


@dataclass(frozen=True)
class Row:
    """One measurement beside the model's prediction of it."""

    id: str
    measurement: Measurement
    deployment: Deployment
    prediction: Prediction

    def predicted(self, metric: str) -> float:
        p = self.prediction
        return {"ttft_ms": p.ttft_s * 1e3, "itl_ms": p.tpot_s * 1e3, "output_tokens_per_s": p.output_tokens_per_s}[metric]

    def measured(self, metric: str) -> float | None:
        value: float | None = getattr(self.measurement, metric)
        return value

    def error(self, metric: str) -> float | None:
        """(predicted − measured) ÷ measured; None where the row does not measure it."""
        m = self.measured(metric)
        return None if m is None else (self.predicted(metric) - m) / m


def _deployment(eng: EngineCatalog, m: Measurement, tm: TimeModelSpec | None) -> Deployment:
    lay = Layout(m.layout.tp, m.layout.pp, m.layout.ep, m.layout.dp)
    # A run at a stated concurrency is served by an engine started for it (max_num_seqs at that concurrency, as the
    # benchmark recipes set it), not with vLLM's default of 1,024 on an H100, whose sampler warm-up would take
    # memory these engines (TensorRT-LLM under NIM, SGLang) do not set aside; an offline run keeps the default.
    st = setting(eng, m.model, m.precision, SCENARIO, accelerator=m.accelerator, concurrency=1,
                 context_tokens=m.input_tokens + m.output_tokens, kv_precision=m.kv_precision,
                 max_num_seqs=m.concurrency)
    if tm is not None:
        st = replace(st, time_model=tm)
    return deploy(st, lay)


def _concurrency(d: Deployment, m: Measurement) -> int:
    """The row's concurrency, or for an offline run (every request queued at once) all the KV cache holds."""
    return m.concurrency if m.concurrency is not None else max(1, d.max_concurrency)


def rows(cat: Catalog, role: str | None = None, tm: TimeModelSpec | None = None) -> list[Row]:
    """Every measurement (of `role`, if given) with the model's prediction, under `tm` or the scenario's time model."""
    eng = engine_catalog(cat)
    out = []
    for mid, m in cat.measurements.items():
        if role is not None and m.role != role:
            continue
        d = _deployment(eng, m, tm)
        out.append(Row(mid, m, d, predict(d, _concurrency(d, m), m.input_tokens, m.output_tokens)))
    return out


def _loss(rs: Iterable[Row]) -> float:
    """Squared log errors of TTFT and ITL at concurrency 1, where the two fitted factors act alone."""
    total = 0.0
    for r in rs:
        if r.measurement.concurrency != 1:
            continue
        for metric in ("ttft_ms", "itl_ms"):
            m = r.measured(metric)
            if m is not None:
                total += math.log(r.predicted(metric) / m) ** 2
    return total


def _swap(fn: Callable[[float, float], float], first: float, second: float) -> float:
    return fn(first, second)


def _golden(fn: Callable[[float], float], lo: float, hi: float, steps: int = 40) -> float:
    """The minimum of a one-dimensional function on [lo, hi] by golden-section search."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(steps):
        c, d = b - g * (b - a), a + g * (b - a)
        if fn(c) < fn(d):
            b = d
        else:
            a = c
    return (a + b) / 2


@dataclass(frozen=True)
class Fit:
    compute_fraction: float
    layer_overhead_s: float
    loss: float


def fit(cat: Catalog) -> Fit:
    """The compute fraction and per-layer overhead that best predict the calibration rows at concurrency 1,
    each searched inside the range data/policies.yaml states for it."""
    from snippets.data import TimeModel

    eng = engine_catalog(cat)
    sc = eng.scenarios[SCENARIO]
    base = eng.time_models[sc.time_model]
    entry = cat.policies[sc.time_model]
    assert isinstance(entry, TimeModel)  # noqa: S101 - the loader checks the scenario's time model
    cf_lo, cf_hi = entry.compute_fraction_range
    lo_lo, lo_hi = (x * entry.layer_overhead.seconds / entry.layer_overhead.value for x in entry.layer_overhead_range)
    cal = [m for m in cat.measurements.values() if m.role == "calibration" and m.concurrency == 1]

    def loss(cf: float, lo: float) -> float:
        tm = replace(base, compute_fraction=cf, layer_overhead_s=lo)
        rs = []
        for m in cal:
            d = _deployment(eng, m, tm)
            rs.append(Row("", m, d, predict(d, 1, m.input_tokens, m.output_tokens)))
        return _loss(rs)

    cf, lo = base.compute_fraction, base.layer_overhead_s
    for _ in range(3):  # the two factors barely interact (TTFT is compute, ITL memory): alternate
        lo = _golden(partial(_swap, loss, cf), lo_lo, lo_hi)
        cf = _golden(partial(loss, lo=lo), cf_lo, cf_hi)
    return Fit(cf, lo, loss(cf, lo))


def summary(rs: list[Row], metric: str) -> tuple[float, float, int] | None:
    """Median and worst absolute error of `metric` over the rows that measure it, and how many do."""
    errs = [abs(e) for r in rs if (e := r.error(metric)) is not None]
    if not errs:
        return None
    return statistics.median(errs), max(errs), len(errs)


def main() -> None:
    from snippets.data import load

    cat = load()
    f = fit(cat)
    print(f"fit: compute_fraction {f.compute_fraction:.4f}, layer_overhead {f.layer_overhead_s * 1e6:.2f} us "
          f"(loss {f.loss:.5f})")
    for role in ("calibration", "test"):
        rs = rows(cat, role)
        for r in rs:
            parts = [f"{k} {r.predicted(k):.1f} vs {r.measured(k):.1f} ({r.error(k):+.0%})" for k in METRICS
                     if r.measured(k) is not None]
            print(f"{role:11} {r.id}: {'; '.join(parts)}")
        for k in METRICS:
            s = summary(rs, k)
            if s:
                print(f"{role:11} {k}: median |error| {s[0]:.0%}, worst {s[1]:.0%} over {s[2]} rows")


if __name__ == "__main__":
    main()
