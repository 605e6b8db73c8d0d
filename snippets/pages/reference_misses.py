"""The predictions page's known misses that rest on the test rows alone: each a claim on those rows, with the
figures the page quotes (`snippets.pages.reference_predictions` adds them to its namespace)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import replace

from snippets.calibration import Row, Skipped, predict_rows
from snippets.data.schema.measurements import Measurement
from snippets.engine.deployment import Deployment, deploy
from snippets.engine.params import total_params
from snippets.engine.serving import Prediction
from snippets.engine.specs import EngineCatalog
from snippets.engine.step import step
from snippets.pages.reference_common import CAL_BAND, source_label
from snippets.render import fmt

TINY_OUTPUT = 8
"""Output tokens per request at or below which a test run is mostly prefill (128 in, 4 out)."""
V10_OVERVIEW = "perf-overview at commit 00f37686"
"""The engine version the v1.0 performance overview's rows record (their MoE runs' layout is not stated)."""
SHORT_BAND = 0.30
"""How close the short-request rows of dense models (a few hundred tokens in all) come once predicted under their
engine's own limits: the claim the page makes of them."""
PROMPT_HEAVY = 4
"""A run whose prompt is at least this many times its output is dominated by its prompts (2,048 in, 128 out)."""
PP_PROMPT_MEDIAN = 0.15
"""How close, in median, the prompt-dominated runs with pipeline stages come: the claim the page makes of them."""
HOST_WORST = 2
"""The MoE runs of the 1.0 overview furthest below the measurement that the page says the host's work sets."""
KERNEL_ONE = ("llama-4-scout", 0.25)
"""The MoE model the overview runs on one GPU (its experts' layout not in doubt), and how close its runs come once
TensorRT-LLM's own CUTLASS kernel prices its experts: the claim the page makes of them."""
KERNEL_SLICED = ("qwen3-235b-a22b", 8, -0.30, 0.25)
"""The MoE model the overview runs on eight GPUs whose thin TP slices (1,536 / 8 columns) the CUTLASS kernel runs
slowly: the median signed error below which the page says its runs fall read with their experts sliced that way,
and how close they come read with their experts whole under expert parallelism (the layout data/ records)."""
MOSTLY = 0.9
"""The share of a band's test rows one source must hold for the page to say that source is behind the band."""
TRITON_BAND = 0.25
"""How close, in median, the time per output token of the test runs an engine ran with SGLang's Triton experts comes
once that kernel's own fixed cost and shares price them: the claim the page makes of them."""
PP_DECODE_BAND = 0.12
"""How close the decode-dominated runs at the smaller model's middle stage count come, each stage paying its host time
(0.10 until TensorRT-LLM's own FP4 GEMMs priced its RTX PRO 6000 runs: their large-batch share, 0.68 of the peak
against the engines' median 0.64, moved the worst of the seven from within 0.10 to 0.105)."""


def _engine_pairs(rows: list[Row], a: str, b: str) -> list[tuple[Row, Row]]:
    """Rows of engine `a` and engine `b` (the first word of the row's engine: "TGI", "vLLM") measuring the same
    thing: model, precision, accelerator, load, concurrency and prompt (to ten tokens: a tokenizer's count of one
    text differs by one), each with a TTFT."""
    def key(r: Row) -> tuple[object, ...]:
        m = r.measurement
        return (m.model, m.precision, m.accelerator, m.definitions.load, m.concurrency,
                None if m.input_tokens is None else round(m.input_tokens / 10))

    def engine(r: Row) -> str:
        return r.measurement.engine.split(" ")[0]

    of_b = {key(r): r for r in rows if engine(r) == b and r.measurement.ttft_ms is not None}
    return [(r, of_b[key(r)]) for r in rows
            if engine(r) == a and r.measurement.ttft_ms is not None and key(r) in of_b]


def _gpu_pairs(rows: list[Row], a: str, b: str) -> list[tuple[Row, Row]]:
    """Rows on an accelerator whose id starts with `a` and on one starting with `b` that ran the same launch on the
    same work: engine, precision, prompt and output lengths (to ten tokens: a run's mean output differs by one),
    load and chunked prefill, each with a TPOT."""
    def key(r: Row) -> tuple[object, ...]:
        m = r.measurement
        return (m.engine, m.model, m.precision, None if m.input_tokens is None else round(m.input_tokens / 10),
                None if m.output_tokens is None else round(m.output_tokens / 10), m.definitions.load,
                None if m.chunked_prefill is None else m.chunked_prefill.enabled)

    with_itl = [r for r in rows if r.error("itl_ms") is not None]
    of_b = {key(r): r for r in with_itl if r.measurement.accelerator.startswith(b)}
    return [(r, of_b[key(r)]) for r in with_itl if r.measurement.accelerator.startswith(a) and key(r) in of_b]


def _experts_sliced(m: Measurement) -> Measurement:
    """`m` with its experts sliced by its TP degree (no expert parallelism)."""
    assert m.layout is not None  # noqa: S101 - a predicted row has its layout
    return m.model_copy(update={"layout": m.layout.model_copy(update={"ep": 1})})


def experts_fixed(d: Deployment) -> float:
    """The fixed cost one MoE layer's experts op pays in `d`'s one-sequence decode step (inside a CUDA graph: its
    kernel's own where measured, else the time model's count of kernels), as the engine charges it."""
    return next(o for o in step(d, "decode", 1, 1.0).ops if o.name == "experts").launch_s


def counted(d: Deployment) -> Deployment:
    """`d` with no fused-MoE kernel named: its experts at the engines' median, the time model's count of kernels."""
    st = d.setting
    return deploy(replace(st, memory_policy=replace(st.memory_policy, moe_kernel="")), d.layout)


def known_misses(test: list[Row], skipped: list[Skipped], eng: EngineCatalog) -> dict[str, object]:
    """The short-request, few-output-token, engine-pair and one-source claims with their figures, by name (`eng`
    predicts the runs whose layout a claim weighs under the other reading)."""

    # trtllm-bench's runs: predicted under the limits it computed (`engine_limits`), which the claims are about
    bench = [r for r in test if r.vendor.split(" ")[0] == "NVIDIA" and r.measurement.input_tokens is not None
             and r.measurement.output_tokens is not None and r.measurement.engine_limits is not None
             and r.measurement.engine_limits.memory_policy == "trtllm-bench" and r.error("output_tokens_per_s") is not None]
    # the 1.0 overview's runs (PyTorch backend: every batch in a padded CUDA graph, as the page says of them), those
    # without pipeline stages (its RTX PRO 6000 tables run up to eight: `pipeline_misses`)
    overview = [r for r in bench if (r.measurement.engine_version or "").startswith(V10_OVERVIEW)]
    v10 = [r for r in overview if r.deployment.layout.pp == 1]
    dense10 = [r for r in v10 if r.deployment.setting.model.architecture.moe is None]
    short = [r for r in dense10 if (r.measurement.input_tokens or 0) + (r.measurement.output_tokens or 0) <= 256]
    short_errors = [r.error("output_tokens_per_s") or 0.0 for r in short]
    short_within = fmt.claim(bool(short) and all(abs(e) <= SHORT_BAND for e in short_errors),
                             "; ".join(f"{r.id}: {r.error('output_tokens_per_s'):+.0%}" for r in short))
    short_band = fmt.percent(SHORT_BAND)
    short_rows = fmt.count(len(short), "runs")
    short_median = fmt.percent(statistics.median(abs(e) for e in short_errors) if short else 0.0)
    # the same runs of mixture-of-experts models, whose attention data parallelism and expert parallelism the source
    # does not size: predicted with expert parallelism over the TP group and no data-parallel attention, against
    # the dense runs of the same table
    moe = [r for r in v10 if r.deployment.setting.model.architecture.moe is not None]
    moe_errors = [r.error("output_tokens_per_s") or 0.0 for r in moe]
    dense_abs = statistics.median(abs(r.error("output_tokens_per_s") or 0.0) for r in dense10) if dense10 else 0.0
    moe_abs = statistics.median(abs(e) for e in moe_errors) if moe else 0.0
    bench_moe_rows = fmt.count(len(moe), "runs")
    bench_dense_rows = fmt.count(len(dense10), "runs")
    bench_moe_low = fmt.percent(min(moe_errors, default=0.0))
    bench_moe_high = fmt.percent(max(moe_errors, default=0.0))
    bench_moe_median = fmt.percent(moe_abs)
    bench_dense_median = fmt.percent(dense_abs)
    bench_moe_apart = fmt.claim(len(moe) >= 5 and len(dense10) >= 5 and moe_abs > 2 * dense_abs,
                                f"median |error| MoE {moe_abs:.0%} over {len(moe)}, dense {dense_abs:.0%} over "
                                f"{len(dense10)}")
    # without data-parallel attention every GPU does the executor's host work for every request: the runs the model
    # puts furthest below the measurement are those whose decode step that work sets (more than half of it)
    worst_moe = sorted(moe, key=lambda r: r.error("output_tokens_per_s") or 0.0)[:HOST_WORST]

    def host_share(r: Row) -> float:
        s = getattr(r.prediction, "decode", None)
        return s.host_s / s.total_s if s is not None and s.total_s > 0 else 0.0

    bench_moe_host = fmt.claim(len(worst_moe) == HOST_WORST and all(host_share(r) > 0.5 for r in worst_moe),
                               "; ".join(f"{r.id}: {r.error('output_tokens_per_s'):+.0%}, host {host_share(r):.0%} "
                                         "of the decode step" for r in worst_moe))
    # TensorRT-LLM runs its own CUTLASS kernel (`moe_kernel`): on one GPU, where the layout is not in doubt, against
    # the 8-GPU runs, held whole under EP and, as read before, sliced by TP: that kernel runs thin slices slowly
    one = [r for r in moe if r.deployment.layout.tp == 1 and r.measurement.model == KERNEL_ONE[0]]
    whole = [r for r in moe if r.deployment.layout.tp == KERNEL_SLICED[1] and r.measurement.model == KERNEL_SLICED[0]
             and r.deployment.layout.ep == r.deployment.layout.tp]
    # the same runs with their experts sliced by the TP degree (ep 1), as the page read them before
    sliced, _ = predict_rows(eng, ((r.id, _experts_sliced(r.measurement)) for r in whole))
    one_abs = statistics.median(abs(r.error("output_tokens_per_s") or 0.0) for r in one) if one else 1.0
    sliced_signed = statistics.median(r.error("output_tokens_per_s") or 0.0 for r in sliced) if sliced else 0.0
    whole_abs = statistics.median(abs(r.error("output_tokens_per_s") or 0.0) for r in whole) if whole else 1.0
    kernel_one_close = fmt.claim(len(one) >= 5 and one_abs <= KERNEL_ONE[1] and all(
        r.deployment.setting.memory_policy.moe_kernel == "cutlass" for r in one),
        f"median |error| {one_abs:.0%} over {len(one)} runs on one GPU")
    kernel_sliced_under = fmt.claim(len(sliced) >= 5 and len(sliced) == len(whole) and sliced_signed < KERNEL_SLICED[2],
                                    f"median error {sliced_signed:+.0%} over {len(sliced)} runs at TP {KERNEL_SLICED[1]}, "
                                    "experts sliced")
    kernel_whole_close = fmt.claim(len(whole) >= 5 and whole_abs <= KERNEL_SLICED[3],
                                   f"median |error| {whole_abs:.0%} over {len(whole)} runs, experts whole under EP")
    shares: dict[str, object] = {"kernel_cutlass_whole": "", "kernel_median_whole": "", "kernel_cutlass_sliced": "",
              "kernel_median_sliced": ""}
    if one:
        st = one[0].deployment.setting
        eff, f = st.time_model.chip(st.chip.id), st.precision.tensor_format
        shares = {"kernel_cutlass_whole": fmt.percent(eff.moe_for(f, whole=True, kernel="cutlass"), 1),
                  "kernel_median_whole": fmt.percent(eff.moe_for(f, whole=True), 1),
                  "kernel_cutlass_sliced": fmt.percent(eff.moe_for(f, kernel="cutlass"), 1),
                  "kernel_median_sliced": fmt.percent(eff.moe_for(f), 1)}
    # SGLang's Triton experts where a release ran them (the SGLang cookbook's BF16 runs on Blackwell), at that kernel's
    # own fixed cost a layer against the time model's count of the median's kernels
    triton = [r for r in test if r.deployment.setting.memory_policy.moe_kernel == "triton"
              and r.error("itl_ms") is not None]
    triton_abs = statistics.median(abs(r.error("itl_ms") or 0.0) for r in triton) if triton else 1.0
    triton_close = fmt.claim(len(triton) >= 5 and triton_abs <= TRITON_BAND,
                             f"median |ITL error| {triton_abs:.0%} over {len(triton)} runs")
    triton_names: dict[str, object] = {}
    if triton:
        d = triton[0].deployment
        st = d.setting
        median = counted(d)
        triton_names = {"triton_model": st.model.name, "triton_chip": st.chip.name,
                        "triton_version": triton[0].measurement.engine_version or "",
                        "triton_fixed": fmt.quantity(experts_fixed(d) * 1e6, "µs", 1, show_unit=True),
                        "triton_median_fixed": fmt.quantity(experts_fixed(median) * 1e6, "µs", 1, show_unit=True)}
    # prompts many times the output: offline runs of a few output tokens a prompt
    tiny = [r for r in test if r.measurement.output_tokens is not None and r.measurement.input_tokens is not None
            and r.measurement.output_tokens <= TINY_OUTPUT and r.error("output_tokens_per_s") is not None]
    tiny_errors = [r.error("output_tokens_per_s") or 0.0 for r in tiny]
    tiny_rows = fmt.count(len(tiny), "rows")
    tiny_output = fmt.count(TINY_OUTPUT, "tokens")
    tiny_low = fmt.percent(min(tiny_errors, default=0.0))
    tiny_high = fmt.percent(max(tiny_errors, default=0.0))
    tiny_over = fmt.claim(bool(tiny) and min(tiny_errors) > 0,
                          "; ".join(f"{r.id}: {r.error('output_tokens_per_s'):+.0%}" for r in tiny))
    # the prompt rate those predictions imply, in FLOP/s of the weights' products alone (2 per active parameter
    # and prompt token), over the GPUs' dense peak in the format they compute in
    def peak_share(r: Row, output_tokens_per_s: float) -> float:
        m = r.measurement
        assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - tiny rows state both
        d = r.deployment
        flops = output_tokens_per_s * m.input_tokens / m.output_tokens * 2 * total_params(d.setting.model.architecture,
                                                                                          active=True)
        return flops / (d.gpus * d.setting.chip.dense_flops[d.compute_format])

    roof = [peak_share(r, r.predicted("output_tokens_per_s")) for r in tiny if isinstance(r.prediction, Prediction)]
    measured_roof = [peak_share(r, r.measurement.output_tokens_per_s or 0.0) for r in tiny
                     if isinstance(r.prediction, Prediction)]
    tiny_roof = fmt.percent(max(roof, default=0.0))
    tiny_measured_roof = fmt.percent(max(measured_roof, default=0.0))
    tiny_under_roof = fmt.claim(bool(roof) and max(roof) <= 1, ", ".join(f"{x:.2f}" for x in roof))
    # the same machine, model and prompts under two engines of late 2024 (dstack's TGI-vs-vLLM runs)
    pairs = _engine_pairs(test, "TGI", "vLLM")
    tgi = [abs(a.error("ttft_ms") or 0.0) for a, _ in pairs]
    vllm = [abs(b.error("ttft_ms") or 0.0) for _, b in pairs]
    pair_rows = fmt.count(len(pairs), "pairs")
    pair_tgi = fmt.percent(statistics.median(tgi) if tgi else 0.0)
    pair_vllm = fmt.percent(statistics.median(vllm) if vllm else 0.0)
    ratios = [b.measurement.ttft_ms / a.measurement.ttft_ms for a, b in pairs
              if a.measurement.ttft_ms and b.measurement.ttft_ms]
    pair_ratio = fmt.ratio(statistics.median(ratios) if ratios else 0.0, basis="vLLM's TTFT over TGI's")
    pair_apart = fmt.claim(bool(pairs) and statistics.median(vllm) > 2 * statistics.median(tgi),
                           f"median |TTFT error| TGI {statistics.median(tgi) if tgi else 0:.0%}, "
                           f"vLLM {statistics.median(vllm) if vllm else 0:.0%} over {len(pairs)} pairs")
    # one source behind the TPOT band of NVIDIA dense decode at saturation, and the runs of it the engine refuses
    sat = [r for r in test if r.error("itl_ms") is not None
           and r.regime("itl_ms").label == "NVIDIA, dense, decode at saturation"]
    by_source = Counter(source_label(r.measurement) for r in sat)
    main_source, from_main = by_source.most_common(1)[0] if by_source else ("", 0)
    origins = [main_source]
    band_source = main_source
    sat_rows = fmt.count(len(sat), "rows")
    sat_from = fmt.count(from_main, "rows")
    one_source = fmt.claim(len(sat) >= 5 and from_main >= MOSTLY * len(sat),
                           f"{len(sat)} rows from {dict(by_source)}")
    refused = [x for x in skipped if source_label(x.measurement) in origins and "refuses" in x.reason]
    refused_runs = fmt.count(len(refused), "runs")
    served_refused = fmt.claim(bool(refused) and all(x.measurement.accelerator == "h100-sxm"
                                                     and x.measurement.config_from == "source" for x in refused),
                               "; ".join(f"{x.id}: {x.reason[:60]}" for x in refused))
    # that source's launches run on both of its GPUs: the model's TPOT error on each, pair by pair
    gpu_pairs = _gpu_pairs([r for r in test if source_label(r.measurement) in origins], "h100", "a100")
    h100 = [h.error("itl_ms") or 0.0 for h, _ in gpu_pairs]
    a100 = [a.error("itl_ms") or 0.0 for _, a in gpu_pairs]
    h100_itl = fmt.percent(-statistics.median(h100) if h100 else 0.0)
    a100_itl = fmt.percent(-statistics.median(a100) if a100 else 0.0)
    gpu_pair_rows = fmt.count(len(gpu_pairs), "pairs")
    gpu_apart = fmt.claim(len(gpu_pairs) >= 3 and statistics.median(h100) < 2 * statistics.median(a100) < 0,
                          "; ".join(f"{h.id}: {h.error('itl_ms'):+.0%} / {a.id}: {a.error('itl_ms'):+.0%}"
                                    for h, a in gpu_pairs))
    # that source's runs of the models its paired pages do not serve, on a GPU it names an H100 SXM (config not
    # inferred): how close the model comes there, held to the calibration's band
    paired = {h.measurement.model for h, _ in gpu_pairs}
    named = [r for r in test if source_label(r.measurement) in origins and r.measurement.accelerator == "h100-sxm"
             and r.measurement.model not in paired and r.measurement.config_from == "source"
             and r.error("itl_ms") is not None]
    named_worst = max((abs(r.error("itl_ms") or 0.0) for r in named), default=0.0)
    sxm_rows = fmt.count(len(named), "runs")
    sxm_worst = fmt.percent(named_worst)
    sxm_close = fmt.claim(len(named) >= 3 and named_worst <= CAL_BAND,
                          "; ".join(f"{r.id}: {r.error('itl_ms'):+.0%}" for r in named))
    return {**pipeline_misses(overview), **host_misses(overview),
            "short_within": short_within, "short_band": short_band, "short_rows": short_rows,
            "short_median": short_median, "bench_moe_rows": bench_moe_rows, "bench_dense_rows": bench_dense_rows,
            "bench_moe_low": bench_moe_low, "bench_moe_high": bench_moe_high, "bench_moe_median": bench_moe_median,
            "bench_dense_median": bench_dense_median, "bench_moe_apart": bench_moe_apart,
            "bench_moe_host": bench_moe_host, "bench_moe_worst": fmt.count(HOST_WORST, "runs"), "tiny_rows": tiny_rows,
            "kernel_one_close": kernel_one_close, "kernel_one_median": fmt.percent(one_abs),
            "kernel_one_rows": fmt.count(len(one), "runs"), "kernel_one_band": fmt.percent(KERNEL_ONE[1]),
            "kernel_sliced_under": kernel_sliced_under, "kernel_sliced_median": fmt.percent(sliced_signed),
            "kernel_sliced_rows": fmt.count(len(whole), "runs"), **shares,
            "kernel_one_model": one[0].deployment.setting.model.name if one else KERNEL_ONE[0],
            "kernel_sliced_model": whole[0].deployment.setting.model.name if whole else KERNEL_SLICED[0],
            "kernel_whole_close": kernel_whole_close, "kernel_whole_median": fmt.percent(whole_abs),
            "kernel_whole_band": fmt.percent(KERNEL_SLICED[3]),
            "triton_close": triton_close, "triton_rows": fmt.count(len(triton), "runs"),
            "triton_median": fmt.percent(triton_abs), "triton_band": fmt.percent(TRITON_BAND), **triton_names,
            "tiny_output": tiny_output, "tiny_low": tiny_low, "tiny_high": tiny_high, "tiny_over": tiny_over,
            "tiny_roof": tiny_roof, "tiny_measured_roof": tiny_measured_roof, "tiny_under_roof": tiny_under_roof,
            "pair_rows": pair_rows, "pair_tgi": pair_tgi, "pair_vllm": pair_vllm, "pair_ratio": pair_ratio,
            "pair_apart": pair_apart, "band_source": band_source, "sat_rows": sat_rows, "one_source": one_source,
            "sat_from": sat_from, "refused_runs": refused_runs, "served_refused": served_refused, "h100_itl": h100_itl,
            "a100_itl": a100_itl, "gpu_pair_rows": gpu_pair_rows, "gpu_apart": gpu_apart, "sxm_rows": sxm_rows,
            "sxm_worst": sxm_worst, "sxm_close": sxm_close}


def pipeline_misses(overview: list[Row]) -> dict[str, object]:
    """The 1.0 overview's runs with pipeline stages (its RTX PRO 6000 tables, over PCIe): how close the runs dominated
    by their prompts come, how close the runs of Llama 3.3 70B dominated by decoding come at four stages and how they
    miss at eight, against Llama 3.1 405B's at eight."""
    staged = [r for r in overview if r.deployment.layout.pp > 1]

    def err(r: Row) -> float:
        return r.error("output_tokens_per_s") or 0.0

    def prompt_heavy(r: Row) -> bool:
        return (r.measurement.input_tokens or 0) >= PROMPT_HEAVY * (r.measurement.output_tokens or 1)

    prompts = [err(r) for r in staged if prompt_heavy(r)]
    prompt_median = statistics.median(abs(e) for e in prompts) if prompts else 0.0
    decoding = [r for r in staged if (r.measurement.output_tokens or 0) >= (r.measurement.input_tokens or 0)
                and r.deployment.setting.model.architecture.moe is None]
    small = [r for r in decoding if r.measurement.model == "llama-3.1-70b"]
    # the smaller model's two largest stage counts (4 and 8 in the overview), and the larger model's runs
    mid, most = [0, 0, *sorted({r.deployment.layout.pp for r in small})][-2:]
    by_stages = {n: [err(r) for r in small if r.deployment.layout.pp == n] for n in (mid, most)}
    big_rows = [r for r in decoding if r.measurement.model == "llama-3.1-405b"]
    big = [err(r) for r in big_rows]
    med4 = statistics.median(by_stages[mid]) if by_stages[mid] else 0.0
    med8 = statistics.median(by_stages[most]) if by_stages[most] else 0.0
    big_worst = max((abs(e) for e in big), default=0.0)
    worst4 = max((abs(e) for e in by_stages[mid]), default=1.0)
    # each model by the checkpoints its runs served (Llama 3.3 70B's on Llama 3.1 70B's entry), else by its entry
    served: dict[str, set[str]] = {}
    for r in staged:
        ck = r.measurement.checkpoint
        served.setdefault(r.measurement.model, set()).add(ck.split(" (")[0] if ck else r.deployment.setting.model.name)
    names = {m: " and ".join(sorted(v)) for m, v in served.items()}
    chips = sorted({r.deployment.setting.chip.name for r in staged})
    return {
        "pp_chip": ", ".join(chips),
        "pp_small": names.get("llama-3.1-70b", ""),
        "pp_big": names.get("llama-3.1-405b", ""),
        "pp_rows": fmt.count(len(staged), "runs"),
        "pp_max": fmt.count(max((r.deployment.layout.pp for r in staged), default=0), "stages"),
        "pp_mid": fmt.count(mid, "stages"),
        "pp_most": fmt.count(most, "stages"),
        "pp_prompt_rows": fmt.count(len(prompts), "runs"),
        "pp_prompt_ratio": fmt.count(PROMPT_HEAVY, "times"),
        "pp_prompt_median": fmt.percent(prompt_median),
        "pp_prompt_low": fmt.percent(min(prompts, default=0.0)),
        "pp_prompt_high": fmt.percent(max(prompts, default=0.0)),
        "pp_prompt_band": fmt.percent(PP_PROMPT_MEDIAN),
        "pp_prompt_close": fmt.claim(len(prompts) >= 5 and prompt_median <= PP_PROMPT_MEDIAN,
                                     f"median |error| {prompt_median:.0%} over {len(prompts)}"),
        "pp4_median": fmt.percent(med4),
        "pp4_worst": fmt.percent(worst4),
        "pp8_median": fmt.percent(med8),
        "pp_decode_band": fmt.percent(PP_DECODE_BAND),
        "pp_decode_close": fmt.claim(len(by_stages[mid]) >= 3 and worst4 <= PP_DECODE_BAND,
                                     f"PP{mid} {[round(e, 3) for e in by_stages[mid]]}"),
        "pp_decode_over": fmt.claim(len(by_stages[most]) >= 3 and min(by_stages[most]) > 0 and med8 > PP_DECODE_BAND,
                                    f"PP{most} {[round(e, 3) for e in by_stages[most]]}"),
        "pp_big_rows": fmt.count(len(big), "runs"),
        "pp_big_stages": fmt.count(max((r.deployment.layout.pp for r in big_rows), default=0), "stages"),
        "pp_big_worst": fmt.percent(big_worst),
        "pp_big_close": fmt.claim(len(big) >= 3 and big_worst < med8, f"405B {big}, 70B PP{most} median {med8:.0%}"),
    }


def host_misses(overview: list[Row]) -> dict[str, object]:
    """The 1.0 overview's same cells on one B200 and one GB200 (the same model, format, layout and request lengths) of
    its model with the fewest active parameters: how often the GB200 measured slower, by how much at most, and how far
    apart the model prices the two."""
    def key(r: Row) -> tuple[object, ...]:
        m = r.measurement
        return (m.model, m.precision, m.layout, m.input_tokens, m.output_tokens)

    gb = {key(r): r for r in overview if r.measurement.accelerator == "gb200"}
    every = [(r, gb[key(r)]) for r in overview if r.measurement.accelerator == "b200" and key(r) in gb]
    small = min((b.deployment.setting.model for b, _ in every),
                key=lambda mod: total_params(mod.architecture, active=True), default=None)
    pairs = [(b, g) for b, g in every if small is not None and b.measurement.model == small.id]
    measured = [(g.measurement.output_tokens_per_s or 0.0) / (b.measurement.output_tokens_per_s or 1.0) - 1
                for b, g in pairs]
    modelled = [g.predicted("output_tokens_per_s") / b.predicted("output_tokens_per_s") - 1 for b, g in pairs]
    slower = [x for x in measured if x < 0]
    b_err = [b.error("output_tokens_per_s") or 0.0 for b, _ in pairs]
    g_err = [g.error("output_tokens_per_s") or 0.0 for _, g in pairs]
    b_med = statistics.median(b_err) if b_err else 0.0
    g_med = statistics.median(g_err) if g_err else 0.0
    return {
        "gb_small": "" if small is None else small.name,
        "gb_host_us": fmt.quantity(pairs[0][0].deployment.setting.memory_policy.host_per_request * 1e6 if pairs else 0.0,
                                   "µs", 1, show_unit=True),
        "gb_small_active": fmt.quantity(0.0 if small is None else total_params(small.architecture, active=True) / 1e9,
                                        "billion", 1),
        "gb_pairs": fmt.count(len(pairs), "cells"),
        "gb_slower": fmt.count(len(slower), "cells"),
        "gb_worst": fmt.percent(-min(measured, default=0.0)),
        "gb_model_low": fmt.percent(min(modelled, default=0.0)),
        "gb_model_high": fmt.percent(max(modelled, default=0.0)),
        "gb_apart": fmt.claim(len(pairs) >= 5 and len(slower) > len(pairs) / 2 and min(modelled, default=-1.0) > -0.05,
                              f"measured GB200/B200 - 1: {[round(x, 2) for x in measured]}; "
                              f"modelled: {[round(x, 2) for x in modelled]}"),
        "gb_b200_median": fmt.percent(b_med),
        "gb_gb200_median": fmt.percent(g_med),
        "gb_still_over": fmt.claim(len(pairs) >= 5 and 0 < b_med < g_med,
                                   f"B200 {[round(e, 2) for e in b_err]}; GB200 {[round(e, 2) for e in g_err]}"),
    }
