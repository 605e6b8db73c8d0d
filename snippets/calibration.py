"""The time model against the measurements: each row's prediction, its error, and the fit of the two factors.

Every row of data/measurements.yaml is either predicted or skipped with the reason (never dropped silently):
rows served in a mode today's engine cannot predict (disaggregated prefill/decode, speculative decoding, a
repeated prefix) wait for issue 28; rows loaded by request rate, or whose layout or lengths the source does not
state, cannot be put to the engine; a layout the engine refuses is listed with the engine's message.

The engine predicts each row's own quantity (`Measurement.definitions`): its TTFT, its time per output token,
and its throughput as output tokens per second of the whole run (a per-GPU or total-token figure is converted
by `Measurement.output_tokens_per_s`). Errors are (predicted - measured) / measured, reported by role and by
regime (vendor; dense or MoE; prefill, decode at low load, decode at saturation).

Only the rows the time model's rationale names (NVIDIA NIM's runs, data/policies.yaml `measured-fractions`) take
part in the fit of its compute fraction (from time to first token) and per-layer overhead (from inter-token
latency), at one request in flight; rows whose configuration the data infers are never fitted. The other
calibration rows are the fitting set of issue 24's layered model; today they are predicted and reported.
`python -m snippets.calibration` prints the fit, every row's error, the skipped rows and the errors by regime.
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
from snippets.engine.deployment import NoLayout, RefusedLayout
from snippets.engine.specs import EngineCatalog, TimeModelSpec
from snippets.engine.timing import Prediction, predict

SCENARIO = "reference"
METRICS = ("ttft_ms", "itl_ms", "output_tokens_per_s")
FIT_SOURCE = "https://docs.nvidia.com/nim/benchmarking/"
"""The rows today's two factors are fitted on come from this source (the time model's rationale names it)."""
LOW_LOAD_SEQUENCES = 16
"""Decode "at low load" while at most this many sequences decode together (the weights, read once per step,
dominate the step's traffic); beyond it "at saturation". A provisional line: issue 24's bands own the regimes."""


@dataclass(frozen=True)
class Row:
    """One measurement beside the model's prediction of it."""

    id: str
    measurement: Measurement
    deployment: Deployment
    prediction: Prediction
    vendor: str = ""
    """The accelerator's vendor as data/accelerators.yaml names it (NVIDIA, AMD)."""

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

    @property
    def in_flight(self) -> int:
        """Sequences the prediction serves at once: the row's concurrency, capped by what the deployment admits."""
        return min(_concurrency(self.deployment, self.measurement), max(1, self.deployment.max_concurrency))

    def regime(self, metric: str) -> str:
        """"<vendor>, <dense|MoE>, <phase>": prefill for time to first token, decode at low load or at
        saturation for the other metrics (`LOW_LOAD_SEQUENCES`)."""
        st = self.deployment.setting
        kind = "MoE" if st.model.arch.moe is not None else "dense"
        if metric == "ttft_ms":
            phase = "prefill"
        else:
            phase = "decode at low load" if self.in_flight <= LOW_LOAD_SEQUENCES else "decode at saturation"
        return f"{self.vendor}, {kind}, {phase}"


@dataclass(frozen=True)
class Skipped:
    """A measurement today's engine does not predict, and why."""

    id: str
    measurement: Measurement
    reason: str


def why_not_predicted(m: Measurement) -> str | None:
    """Why a row cannot be put to today's engine as it stands, or None if it can."""
    if not m.mode.plain:
        return "awaiting issue 28: today's engine predicts aggregated serving without speculation or a repeated prefix"
    if m.definitions.load == "request-rate":
        return "loaded by request rate: today's serving model takes the requests kept in flight"
    if m.definitions.load == "not-stated":
        return "the source does not state the load"
    missing = [f for f in ("layout", "input_tokens", "output_tokens") if getattr(m, f) is None]
    if missing:
        return "the source does not state its " + " or ".join(f.replace("_", " ") for f in missing)
    if m.ttft_ms is None and m.itl_ms is None and m.output_tokens_per_s is None:
        return "no figure the engine predicts (only a speed-up)"
    return None


def _deployment(eng: EngineCatalog, m: Measurement, tm: TimeModelSpec | None) -> Deployment:
    assert m.layout is not None and m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - why_not_predicted
    lay = Layout(m.layout.tp, m.layout.pp, m.layout.ep, m.layout.dp)
    st = setting(eng, m.model, m.precision, SCENARIO, accelerator=m.accelerator, concurrency=1,
                 context_tokens=m.input_tokens + m.output_tokens, kv_precision=m.kv_precision)
    if tm is not None:
        st = replace(st, time_model=tm)
    return deploy(st, lay)


def _concurrency(d: Deployment, m: Measurement) -> int:
    """The row's concurrency, or for an offline run (every request queued at once) all the KV cache holds."""
    return m.concurrency if m.concurrency is not None else max(1, d.max_concurrency)


def evaluate(cat: Catalog, role: str | None = None,
             tm: TimeModelSpec | None = None) -> tuple[list[Row], list[Skipped]]:
    """Every measurement (of `role`, if given): predicted under `tm` or the scenario's time model, or skipped
    with the reason."""
    eng = engine_catalog(cat)
    done: list[Row] = []
    skipped: list[Skipped] = []
    for mid, m in cat.measurements.items():
        if role is not None and m.role != role:
            continue
        why = why_not_predicted(m)
        if why is None:
            try:
                d = _deployment(eng, m, tm)
                assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - checked above
                done.append(Row(mid, m, d, predict(d, _concurrency(d, m), m.input_tokens, m.output_tokens),
                                cat.accelerators[m.accelerator].vendor))
                continue
            except (RefusedLayout, NoLayout, ValueError, KeyError) as exc:
                why = f"the engine refuses it: {exc}"
        skipped.append(Skipped(mid, m, why))
    return done, skipped


def rows(cat: Catalog, role: str | None = None, tm: TimeModelSpec | None = None) -> list[Row]:
    """Every measurement (of `role`, if given) the engine predicts, with the prediction (`evaluate` lists the rest)."""
    return evaluate(cat, role, tm)[0]


def skipped(cat: Catalog, role: str | None = None) -> list[Skipped]:
    """Every measurement (of `role`, if given) the engine does not predict today, with the reason."""
    return evaluate(cat, role)[1]


def fit_basis(cat: Catalog) -> dict[str, Measurement]:
    """The rows the two factors are fitted on: calibration rows from NIM (`FIT_SOURCE`) whose configuration the
    source states, served plainly, at one request in flight."""
    return {k: m for k, m in cat.measurements.items()
            if m.role == "calibration" and m.config_from == "source" and m.concurrency == 1 and m.mode.plain
            and why_not_predicted(m) is None and all(s.url.startswith(FIT_SOURCE) for s in m.sources)}


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
    """The compute fraction and per-layer overhead that best predict the fit basis (`fit_basis`) at concurrency 1,
    each searched inside the range data/policies.yaml states for it."""
    from snippets.data import TimeModel

    eng = engine_catalog(cat)
    sc = eng.scenarios[SCENARIO]
    base = eng.time_models[sc.time_model]
    entry = cat.policies[sc.time_model]
    assert isinstance(entry, TimeModel)  # noqa: S101 - the loader checks the scenario's time model
    cf_lo, cf_hi = entry.compute_fraction_range
    lo_lo, lo_hi = (x * entry.layer_overhead.seconds / entry.layer_overhead.value for x in entry.layer_overhead_range)
    cal = list(fit_basis(cat).values())

    def loss(cf: float, lo: float) -> float:
        tm = replace(base, compute_fraction=cf, layer_overhead_s=lo)
        rs = []
        for m in cal:
            d = _deployment(eng, m, tm)
            assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - fit_basis checks
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


def by_regime(rs: list[Row]) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """(regime, metric) -> median |error|, signed median error, worst |error|, rows."""
    errs: dict[tuple[str, str], list[float]] = {}
    for r in rs:
        for metric in METRICS:
            e = r.error(metric)
            if e is not None:
                errs.setdefault((r.regime(metric), metric), []).append(e)
    return {k: (statistics.median(abs(x) for x in v), statistics.median(v), max(abs(x) for x in v), len(v))
            for k, v in sorted(errs.items())}


def main() -> None:
    from snippets.data import load

    cat = load()
    f = fit(cat)
    print(f"fit on {len(fit_basis(cat))} rows: compute_fraction {f.compute_fraction:.4f}, "
          f"layer_overhead {f.layer_overhead_s * 1e6:.2f} us (loss {f.loss:.5f})")
    for role in ("calibration", "test"):
        rs, skip = evaluate(cat, role)
        for r in rs:
            parts = [f"{k} {r.predicted(k):.1f} vs {r.measured(k):.1f} ({r.error(k):+.0%})" for k in METRICS
                     if r.measured(k) is not None]
            print(f"{role:11} {r.id}: {'; '.join(parts)}")
        for s in skip:
            print(f"{role:11} {s.id}: not predicted: {s.reason}")
        for k in METRICS:
            sm = summary(rs, k)
            if sm:
                print(f"{role:11} {k}: median |error| {sm[0]:.0%}, worst {sm[1]:.0%} over {sm[2]} rows")
        for (reg, k), (med, signed, worst, n) in by_regime(rs).items():
            print(f"{role:11} {reg:40} {k:20} median |error| {med:4.0%} (signed {signed:+.0%}), worst {worst:.0%}, "
                  f"{n} rows")
        print(f"{role:11} predicted {len(rs)}, not predicted {len(skip)}")


if __name__ == "__main__":
    main()
