"""The time model against published measurements: the fitted factors are the fit, and each of NIM's rows (the
ones today's factors are fitted on, data/policies.yaml measured-fractions) stays in its stated band
(|predicted − measured| ÷ measured): ITL and throughput 15 %, TTFT 70 % (the onset of queueing at the KV cache's
limit is the worst). The other rows are predicted and reported by regime (tests/unit/test_measurements.py); their
bands come with issue 24's time model."""

from __future__ import annotations

import pytest

from snippets import calibration
from snippets.data import TimeModel, load

CAT = load()
BANDS = {"itl_ms": 0.15, "output_tokens_per_s": 0.15, "ttft_ms": 0.70}
MEDIANS = {"calibration": {"itl_ms": 0.10, "output_tokens_per_s": 0.12, "ttft_ms": 0.20}}


def test_the_data_holds_the_fit():
    f = calibration.fit(CAT)
    tm = CAT.policies[CAT.scenarios["reference"].time_model]
    assert isinstance(tm, TimeModel)
    assert tm.compute_fraction == pytest.approx(f.compute_fraction, rel=0.02)
    assert tm.layer_overhead.seconds == pytest.approx(f.layer_overhead_s, rel=0.02)


def test_only_nim_runs_are_fitted():
    basis = calibration.fit_basis(CAT)
    assert len(basis) >= 2
    assert all(m.engine.startswith("TensorRT-LLM (NIM)") and m.role == "calibration" for m in basis.values())
    assert all(s.url.startswith("https://docs.nvidia.com/nim/benchmarking/") for m in basis.values() for s in m.sources)


def test_every_nim_row_within_its_band():
    rows = [r for r in calibration.rows(CAT, "calibration") if r.id.startswith("nim180-")]
    assert len(rows) >= 9
    for r in rows:
        for metric, band in BANDS.items():
            e = r.error(metric)
            if e is not None:
                assert abs(e) <= band, f"{r.id} {metric}: predicted {r.predicted(metric):.1f}, measured " \
                                       f"{r.measured(metric):.1f} ({e:+.0%}, band {band:.0%})"


def test_calibration_medians():
    rows = [r for r in calibration.rows(CAT, "calibration") if r.id.startswith("nim180-")]
    for metric, most in MEDIANS["calibration"].items():
        s = calibration.summary(rows, metric)
        assert s is not None and s[0] <= most, (metric, s)
