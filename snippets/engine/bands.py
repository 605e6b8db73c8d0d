"""Error bands: how far the time model's predictions fell from published measurements, by regime.

The table is computed at build time from the **test** measurements only (`snippets.calibration.band_table`;
calibration rows never widen or narrow a band) and travels with the time model (`TimeModelSpec.bands`), so
the browser's engine has it too. A regime is the chip's vendor, dense or mixture-of-experts, and the phase a
metric depends on: decode at low load, decode at saturation (time per output token, throughput), or prefill
(time to first token). A metric's band in a regime is the range of relative errors, (predicted − measured) ÷
measured, that held the central 80 % of that regime's test rows; a regime with fewer than `MIN_ROWS` rows
says so and takes the span of that metric's bands in every regime with enough rows (the lowest error of any to the
highest).
Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

METRICS = ("tpot_ms", "ttft_ms", "output_tokens_per_s")
PHASES = ("decode at low load", "decode at saturation", "prefill")
MIN_ROWS = 5
"""Fewer test rows than this in a regime: its band spans the metric's bands in every regime, from the lowest error
of any to the highest."""
COVERAGE = 0.8
"""The share of a regime's test errors its band holds."""
METRIC_WORDS = {"tpot_ms": "time per output token", "ttft_ms": "time to first token",
                "output_tokens_per_s": "throughput"}
"""Each metric as the band's basis names it."""


@dataclass(frozen=True, slots=True)
class Regime:
    vendor: str
    moe: bool
    phase: str

    @property
    def label(self) -> str:
        return f"{self.vendor}, {'MoE' if self.moe else 'dense'}, {self.phase}"


@dataclass(frozen=True, slots=True)
class BandEntry:
    metric: str
    vendor: str
    moe: bool
    phase: str
    low: float
    """Relative error at the low end of the band (−0.2: the prediction was 20 % under the measurement)."""
    high: float
    rows: int
    """Test rows of this regime and metric."""


@dataclass(frozen=True, slots=True)
class Band:
    """The band a prediction of one metric carries."""

    low: float
    high: float
    rows: int
    """Test rows behind it in its own regime (fewer than MIN_ROWS: the band spans the metric's bands in every
    regime with enough rows)."""
    widest: bool
    """True when the regime had too few rows and took the span of the metric's bands in every regime with
    enough rows."""

    def around(self, predicted: float) -> tuple[float, float]:
        """The range the measured value fell in for 80 % of this regime's test rows: predicted ÷ (1 + error)."""
        return predicted / (1 + self.high), predicted / (1 + self.low)

    def inverse(self, value: float) -> tuple[float, float]:
        """The range of a figure that goes as the inverse of the predicted one (a cost per token, of a throughput):
        where the throughput measured came out at predicted ÷ (1 + error), the cost came out at value × (1 + error)."""
        return value * (1 + self.low), value * (1 + self.high)

    @property
    def empty(self) -> bool:
        """No test row of the metric in any regime: no band at all."""
        return self.widest and self.low == self.high == 0.0

    def basis(self, metric: str, regime: str) -> str:
        """Where the band comes from, in words: the regime's own test rows, or too few of them and the span of every
        regime's band of the metric (what the command line's `bands` and the calculator say beside a range)."""
        what = METRIC_WORDS[metric]
        if self.empty:
            return f"no test measurement of {what} in any regime: no band"
        if not self.widest:
            return f"where {COVERAGE * 100:.0f} % of the {self.rows:,} test measurements of {what} in {regime} fell"
        if self.rows == 0:
            return f"no test measurement of {what} in {regime}: the span of the bands with enough rows"
        return (f"only {self.rows} test measurement{'s' * (self.rows > 1)} of {what} in {regime}, fewer than "
                f"{MIN_ROWS}: the span of the bands with enough rows")

    def as_dict(self, metric: str, regime: str) -> dict[str, object]:
        """The command line's account of a band: its regime, that regime's test rows, whether it is the span of others."""
        return {"regime": regime, "test_rows": self.rows, "widest": self.widest, "basis": self.basis(metric, regime)}


NO_BAND = Band(0.0, 0.0, 0, True)


def central(errors: Sequence[float], coverage: float = COVERAGE) -> tuple[float, float]:
    """The narrowest interval holding `coverage` of `errors` (at least ceil(coverage × n) of them)."""
    xs = sorted(errors)
    n = len(xs)
    if n == 0:
        raise ValueError("no errors to band")
    k = max(1, math.ceil(coverage * n))
    best = min(range(n - k + 1), key=lambda i: xs[i + k - 1] - xs[i])
    return xs[best], xs[best + k - 1]


def table(errors: Iterable[tuple[str, Regime, float]]) -> tuple[BandEntry, ...]:
    """Band entries from (metric, regime, relative error) of the test rows."""
    by: dict[tuple[str, Regime], list[float]] = {}
    for metric, regime, e in errors:
        by.setdefault((metric, regime), []).append(e)
    out = []
    for (metric, regime), es in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1].label)):
        lo, hi = central(es)
        out.append(BandEntry(metric, regime.vendor, regime.moe, regime.phase, lo, hi, len(es)))
    return tuple(out)


def band(entries: tuple[BandEntry, ...], metric: str, regime: Regime) -> Band:
    """The band of `metric` in `regime`: its own if at least MIN_ROWS test rows are behind it, else the span of
    the metric's bands in the regimes that have enough (from the lowest error of any to the highest; all regimes, if none
    has)."""
    mine = next((e for e in entries if e.metric == metric and e.vendor == regime.vendor and e.moe == regime.moe
                 and e.phase == regime.phase), None)
    if mine is not None and mine.rows >= MIN_ROWS:
        return Band(mine.low, mine.high, mine.rows, False)
    same = [e for e in entries if e.metric == metric]
    if not same:
        return NO_BAND
    enough = [e for e in same if e.rows >= MIN_ROWS] or same
    lo = min(e.low for e in enough)
    hi = max(e.high for e in enough)
    return Band(lo, hi, 0 if mine is None else mine.rows, True)
