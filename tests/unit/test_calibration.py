"""The time model against published measurements: the fitted factors are the fit (the host's time per step on
NIM's rows, data/policies.yaml measured-fractions; each collective's latency and share of the link on its published
timings), and each of NIM's rows stays in its stated band (|predicted − measured| ÷ measured): ITL and throughput
15 %, TTFT 75 % (a short prompt's wait behind others at low load is the worst). The other rows are predicted and
reported by regime (tests/unit/test_measurements.py); the test rows alone make the error bands."""

from __future__ import annotations

import pytest

from snippets import calibration
from snippets.data import TimeModel, load

CAT = load()
BANDS = {"itl_ms": 0.15, "output_tokens_per_s": 0.15, "ttft_ms": 0.75}
MEDIANS = {"calibration": {"itl_ms": 0.10, "output_tokens_per_s": 0.12, "ttft_ms": 0.20}}


def test_the_data_holds_the_fit():
    f = calibration.fit(CAT)
    tm = CAT.policies[CAT.scenarios["reference"].time_model]
    assert isinstance(tm, TimeModel)
    assert tm.step_overhead.seconds == pytest.approx(f.step_overhead_s, rel=0.02)
    assert dict(tm.vendor_kernel_fraction) == pytest.approx(dict(f.vendor_kernel_fraction), rel=0.02)


def test_the_data_holds_the_collectives_fit():
    """Each algorithm's latency and share of the link, as data/policies.yaml records them, are the least-squares fit
    on its published timings (data/latencies.yaml), and the fitted model stays near every point."""
    tm = CAT.policies[CAT.scenarios["reference"].time_model]
    assert isinstance(tm, TimeModel)
    fits = calibration.fit_collectives(CAT)
    worst = {"one_shot": 0.10, "two_shot": 0.25, "nccl": 0.40, "alltoall": 0.15}
    for name, f in fits.items():
        rec = getattr(tm.collectives, name)
        assert rec.latency.seconds == pytest.approx(f.latency_s, rel=0.01), name
        assert rec.efficiency == pytest.approx(f.efficiency, rel=0.01), name
        assert (0.0 if rec.per_peer is None else rec.per_peer.seconds) == pytest.approx(f.per_peer_s, abs=2e-8), name
        assert f.worst <= worst[name], (name, f.worst)
        assert f.points >= 5


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
