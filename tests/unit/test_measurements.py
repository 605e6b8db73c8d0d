"""data/measurements.yaml: every row valid and complete, calibration rows only from the sources issue 24 names for
fitting, each source's definitions recorded, and every row either predicted or skipped with its reason."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from snippets import calibration
from snippets.engine.serving import DisaggPrediction

from ..conftest import repository_catalog
from .test_data import Edit, _del, _set, broken

CAT = repository_catalog()
NIM_ROW = "nim180-llama33-70b-fp8-2xh100-in5000-out500-c1"
IX_ROW = "inferencex-dsr1-fp8-sglang-8xh200-in1024-out1024-c8-issue870"
TRT_ROW = "trtllm10-llama3370b-fp8-2xh100-in1000-out1000-cmax"
DSTACK_405B = "dstack-llama31405b-fp8-vllm-8xh100-in2048-out2048-b4"
SEC_ROW = "inferencex-dsr1-fp8-sglang-8xb200-in1024-out1024-c1"
PD_ROW = "dstack-gptoss120b-mxfp4-sglang-1p3d-tp2-h200-in2048-out2048-c64"
PD_3P1D = "dstack-gptoss120b-mxfp4-sglang-3p1d-tp2-h200-in2048-out2048-c64"  # three prefill workers at TP2, one decoding
QWEN_8K_64 = "sglcookbook-qwen3235b-bf16-sglang-8xb200-in8000-out1000-c64"
SCOUT_C1 = "sglcookbook-llama4scout-bf16-sglang-8xmi300x-in1000-out1000-c1"

# Issue 24 names these for fitting, and nothing else: written out here, apart from the schema's own list.
FITTING_SOURCES = {
    "docs.nvidia.com": ("/nim/benchmarking/llm/1.0.0/",),
    "github.com": ("/semianalysisai/inferencex/", "/semianalysisai/inferencex-app/", "/azure/ai-benchmarking-guide/"),
    "inferencex.semianalysis.com": ("/",),
}


def _fitting_source(url: str) -> bool:
    parts = urlsplit(url.lower())
    return any(parts.path.startswith(p) for p in FITTING_SOURCES.get(parts.hostname or "", ()))


def test_calibration_rows_only_from_the_fitting_sources_and_test_rows_never():
    roles = {m.role for m in CAT.measurements.values()}
    assert roles == {"calibration", "test"}
    for mid, m in CAT.measurements.items():
        from_fitting = [_fitting_source(s.url) for s in m.sources]
        if m.role == "calibration":
            assert all(from_fitting), (mid, [s.url for s in m.sources])
        else:
            assert not any(from_fitting), (mid, [s.url for s in m.sources])


def test_every_fitting_source_is_represented():
    """NIM, InferenceX (NVIDIA and AMD accelerators) and Azure all give calibration rows."""
    cal = [m for m in CAT.measurements.values() if m.role == "calibration"]
    hosts = {urlsplit(s.url.lower()).path.split("/")[1] if "github.com" in s.url else urlsplit(s.url).hostname
             for m in cal for s in m.sources}
    assert {"docs.nvidia.com", "semianalysisai", "azure"} <= hosts, hosts
    ix = [m for m in cal if "semianalysisai" in m.sources[0].url.lower()]
    assert {CAT.accelerators[m.accelerator].vendor for m in ix} >= {"NVIDIA", "AMD"}
    assert {m.engine for m in ix} >= {"SGLang", "vLLM", "TensorRT-LLM"}


def test_definitions_follow_the_figures():
    """A row states what each of its figures means; published per-GPU figures stay per GPU."""
    for mid, m in CAT.measurements.items():
        d = m.definitions
        assert (m.ttft_ms is None) == (d.ttft is None), mid
        assert (m.itl_ms is None) == (d.token_latency is None), mid
        assert (m.throughput is None) == (d.throughput_tokens is None), mid
    ix = CAT.measurements[IX_ROW]
    assert (ix.definitions.throughput_tokens, ix.definitions.throughput_per) == ("output", "gpu")
    assert ix.throughput == 74.6 and ix.output_tokens_per_s == pytest.approx(74.6 * 8)
    assert (ix.definitions.token_latency, ix.definitions.statistic) == ("tpot-excluding-first", "mean")
    total = CAT.measurements[DSTACK_405B]  # tokens_per_second counts prompt and output tokens
    assert total.definitions.throughput_tokens == "total"
    assert total.output_tokens_per_s == pytest.approx(total.throughput * 2048 / (2048 + 2048))
    assert CAT.measurements[TRT_ROW].definitions.load == "offline"


def test_a_client_that_starts_its_requests_at_once_says_so():
    """The first wave is the row's fact, recorded with the command that shows it: InferenceX's 10 prompts per request
    in flight, dstack's 500 in all; NIM's and TensorRT-LLM's rows record none."""
    ix = CAT.measurements[IX_ROW].definitions.burst
    assert ix is not None and ix.prompts_per_request == 10 and "--num-prompts $((CONC * 10))" in ix.how
    dstack = [m.definitions.burst for k, m in CAT.measurements.items() if k.startswith("dstack-dsr1-")
              and m.definitions.load == "fixed-concurrency"]
    assert dstack and all(b is not None and b.prompts == 500 for b in dstack)
    assert CAT.measurements[NIM_ROW].definitions.burst is None
    cookbook = {k: m.definitions.burst for k, m in CAT.measurements.items() if k.startswith("sglcookbook-")}
    assert cookbook and all(b is not None and "no request rate" in b.how for b in cookbook.values())  # bench_serving
    assert {k for k, b in cookbook.items() if b is not None and not b.queued} == {
        QWEN_8K_64, *(f"sglcookbook-llama3170b-bf16-sglang-8xa100-{s}" for s in
                      ("in1000-out1000-c100", "in8000-out1000-c16", "in8000-out1000-c64"))}
    assert all(m.definitions.burst is None for m in CAT.measurements.values() if m.definitions.load != "fixed-concurrency")


def test_a_first_wave_that_did_not_queue_adds_nothing_to_ttft_but_the_run_still_drains():
    """The SGLang cookbook's Qwen3-235B run at 64 in flight: its client's code starts the first 64 together, but its
    P99 TTFT (510 ms) is below what such a wave takes, so the row says the wave did not queue (`Burst.queued`): no
    first wave is added to its TTFT, while its 320 prompts of random lengths still play the run's end. Its sibling at
    16 in flight keeps its wave."""
    by_id = {r.id: r for r in calibration.rows(CAT, "test") if "qwen3235b-bf16-sglang-8xb200-in8000" in r.id}
    quiet, queued = by_id[QWEN_8K_64], by_id[QWEN_8K_64.replace("-c64", "-c16")]
    assert CAT.measurements[QWEN_8K_64].ttft_p99_ms == 510.48
    assert calibration.first_wave_s(quiet.measurement, quiet.deployment, quiet.prediction) == 0.0
    assert quiet.predicted("ttft_ms") == pytest.approx(quiet.prediction.ttft_s * 1e3)
    assert calibration.first_wave_s(queued.measurement, queued.deployment, queued.prediction) > 0.05
    assert calibration.drain_factor(quiet.measurement, quiet.deployment, quiet.prediction) < 1.0


def test_meta_fp8_405b_runs_keep_attention_at_16_bits():
    """Meta's FP8 checkpoint of Llama 3.1 405B quantizes only the MLP weights (meta-llama/llama-models,
    quantization/loader.py): every row serving it says its attention projections stay BF16, and the engine holds them
    so. Worked by hand at TP8: 126 layers' MLPs (3 x 16,384 x 53,248) at one byte, their attention (2 x 16,384^2 +
    2 x 16,384 x 1,024) at two, embedding and LM head (2 x 128,256 x 16,384) at two: 60.24 GB a GPU, 9.0 GB above
    an all-FP8 body (60.25 with the FP8 weights' per-channel scales)."""
    rows = {k: m for k, m in CAT.measurements.items() if m.checkpoint == "meta-llama/Llama-3.1-405B-FP8"}
    assert len(rows) == 8
    assert all(m.keeps_16bit == ["attention_in", "attention_out"] for m in rows.values())
    hand = (126 * 3 * 16384 * 53248 + 2 * 126 * (2 * 16384**2 + 2 * 16384 * 1024) + 2 * 2 * 128256 * 16384) / 8
    assert hand == pytest.approx(60.24e9, rel=1e-3)
    row = next(r for r in calibration.rows(CAT, "test") if r.id == DSTACK_405B)
    assert row.deployment.memory.weights == pytest.approx(hand, rel=2e-4)
    attention = 126 * (2 * 16384**2 + 2 * 16384 * 1024) / 8  # a byte more per attention weight than under FP8
    assert row.deployment.memory.weights - attention == pytest.approx(51.25e9, rel=1e-3)


def test_secondary_rows_name_their_primary():
    secondary = {k: m for k, m in CAT.measurements.items() if m.secondary}
    assert secondary
    assert all(m.primary and len(m.primary) > 20 for m in secondary.values())
    assert CAT.measurements[SEC_ROW].secondary and not CAT.measurements[IX_ROW].secondary


def test_modes_for_issue_28():
    """At least two aggregated-vs-disaggregated comparisons and two speculative speed-ups, all test rows."""
    tests = {k: m for k, m in CAT.measurements.items() if m.role == "test"}
    disagg = {k: m for k, m in tests.items() if m.mode.serving == "disaggregated" and m.speedup is not None}
    spec = {k: m for k, m in tests.items() if m.mode.speculation is not None
            and (m.speedup is not None or m.baseline is not None)}
    assert len(disagg) >= 2 and len(spec) >= 2, (sorted(disagg), sorted(spec))
    pd = CAT.measurements[PD_ROW].mode.disaggregation
    assert pd is not None and pd.prefill is not None and pd.decode is not None
    assert (pd.prefill.workers, pd.decode.workers, pd.decode.layout.tp) == (1, 3, 2)
    assert CAT.measurements[PD_ROW].gpu_count == 8


def test_every_row_is_predicted_or_skipped_with_its_reason():
    done, skipped = calibration.evaluate(CAT)
    ids = [r.id for r in done] + [s.id for s in skipped]
    assert sorted(ids) == sorted(CAT.measurements)
    for s in skipped:
        assert len(s.reason) > 15, s
        assert "issue 28" not in s.reason, s  # every mode is predicted where the source states what it needs
    # rows in each mode are predicted in it: prefix hits, disaggregated pools at their concurrency
    modes = {r.measurement.mode.label.split(" (")[0] for r in done if not r.measurement.mode.plain}
    assert {"disaggregated", "prefix cache"} <= modes, modes
    assert all(isinstance(r.prediction, DisaggPrediction) == (r.measurement.mode.serving == "disaggregated")
               for r in done)
    for r in done:
        for metric in calibration.METRICS:
            e = r.error(metric)
            assert e is None or (e == e and abs(e) < 1e3), (r.id, metric, e)
    # the fit uses NIM's rows alone, never an inferred configuration
    basis = calibration.fit_basis(CAT)
    assert basis and NIM_ROW in basis and all(m.config_from == "source" for m in basis.values())
    assert not any(k.startswith("nim150") for k in basis)


def test_every_regime_reports_its_rows():
    done = calibration.rows(CAT, "test")
    table = calibration.by_regime(done)
    counted = sum(n for (_, metric), (*_, n) in table.items() if metric == "output_tokens_per_s")
    assert counted == sum(1 for r in done if r.measured("output_tokens_per_s") is not None)
    vendors = {reg.split(",")[0] for reg, _ in table}
    assert vendors == {"NVIDIA", "AMD"}


CASES = [
    ("unknown model", _set(f"{NIM_ROW}/model", "llama-9-70b"), ["field 'model'", "unknown model 'llama-9-70b'"]),
    ("unknown accelerator", _set(f"{NIM_ROW}/accelerator", "h900"), ["field 'accelerator'", "unknown accelerator 'h900'"]),
    ("unknown kv precision", _set(f"{NIM_ROW}/kv_precision", "fp3"), ["field 'kv_precision'", "unknown kv_precision"]),
    ("definition outside the enum", _set(f"{NIM_ROW}/definitions/ttft", "sometimes"),
     ["field 'definitions.ttft'", "queueing-included"]),
    ("figure without its definition", _del(f"{NIM_ROW}/definitions/token_latency"),
     ["definitions.token_latency: required"]),
    ("per-GPU figure without what it divides by", _del(f"{IX_ROW}/definitions/per_gpu_counts"),
     [f"entry '{IX_ROW}'", "definitions.per_gpu_counts"]),
    ("fixed concurrency without a concurrency", _del(f"{NIM_ROW}/concurrency"), ["concurrency: required"]),
    ("EP that does not divide TP x DP", _set(f"{IX_ROW}/layout", {"tp": 8, "ep": 3}), ["layout.ep", "must divide"]),
    ("EP on a dense model", _set(f"{NIM_ROW}/layout", {"tp": 2, "ep": 2}),
     ["field 'layout.ep'", "which has no experts"]),
    ("disaggregated without its pools", _set(f"{TRT_ROW}/mode", {"serving": "disaggregated"}),
     ["disaggregation: give it exactly when serving is disaggregated"]),
    ("pools that disagree with the GPU count", _set(f"{PD_ROW}/gpus", 6), ["gpus: 6, but the layout gives 8"]),
    ("pool layout of the wrong shape", _set(f"{PD_ROW}/mode/disaggregation/decode/layout", {"tp": 2, "ep": 4}),
     ["decode.layout.ep"]),
    ("secondary without its primary", _del(f"{SEC_ROW}/primary"), ["primary: name the primary document"]),
    ("a burst with both prompt counts", _set(f"{IX_ROW}/definitions/burst", {"prompts": 500, "prompts_per_request": 10,
                                                                         "how": "the launch script's flags"}),
     ["burst: give prompts or prompts_per_request"]),
    ("a burst on an offline run", _set(f"{TRT_ROW}/definitions/burst", {"prompts": 500, "how": "the launch script"}),
     ["burst: only for a fixed-concurrency load"]),
    ("a first wave its own P99 rules out", _set(f"{QWEN_8K_64}/definitions/burst/queued", True),
     [f"entry '{QWEN_8K_64}'", "field 'definitions.burst'", "the P99 of 320 requests is at least their 5th slowest",
      "60 prompts of 3,981 tokens, at least 556 ms", "dense BF16 peak", "P99 TTFT (ttft_p99_ms) is 510 ms"]),
    ("a P99 without a TTFT", _del(f"{QWEN_8K_64}/ttft_ms"), ["ttft_p99_ms: only beside a ttft_ms"]),
    ("a disaggregated run's first wave, against its prefill pool", _set(f"{PD_3P1D}/ttft_p99_ms", 100.0),
     [f"entry '{PD_3P1D}'", "field 'definitions.burst'", "at the 6 GPUs' dense BF16 peak"]),
    ("a P99 below its median", _set(f"{SCOUT_C1}/ttft_p99_ms", 50.0),
     [f"entry '{SCOUT_C1}'", "ttft_p99_ms: 50 ms, below the median TTFT (68.57 ms)"]),
    ("a zero-TTFT share without a mean TTFT", _set(f"{TRT_ROW}/definitions/ttft_zero_share", 0.3),
     ["ttft_zero_share: only for a mean TTFT"]),
    ("a zero-TTFT share of every request", _set(f"{NIM_ROW}/definitions/ttft_zero_share", 1.0),
     ["field 'definitions.ttft_zero_share'"]),
    ("optional field neither given nor said missing", _del(f"{NIM_ROW}/engine_version"),
     ["engine_version: required, or say in not_stated"]),
    ("test row from a fitting source", _set(f"{NIM_ROW}/role", "test"), ["field 'role'", "other publications"]),
    ("calibration row from another source", _set(f"{TRT_ROW}/role", "calibration"),
     [f"entry '{TRT_ROW}'", "field 'role'", "only from the sources issue 24 names"]),
    ("baseline that is not a row", _set("sglang-llama318b-bf16-1xh100-mtbench-c1-eagle3/baseline", "nope"),
     ["field 'baseline'", "'nope' is not another entry"]),
    ("speed-up on a plainly served row", _set(f"{TRT_ROW}/speedup", {"value": 2.0, "of": "output-throughput",
                                                                   "bound": "exact", "against": "nothing at all here"}),
     ["speedup: only a row in another mode"]),
]


@pytest.mark.parametrize(("case", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_measurements_are_refused_naming_file_entry_field(tmp_path: Path, case: str, edit: Edit,
                                                              expected: list[str]) -> None:
    message = broken(tmp_path, "measurements", edit)
    assert "data/measurements.yaml" in message, message
    assert "entry '" in message, message
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"
