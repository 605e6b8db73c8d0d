"""The predictions page's light-load TTFT gap: what the model leaves out of InferenceX's NVIDIA DeepSeek-R1 TTFTs at up
to LIGHT_LOAD requests at once, where it does not grow, what SGLang's own cost of issuing an eager step's kernels
explains of a test source's, and why the rest is not charged inside the engine's steps
(`snippets.pages.reference_predictions` adds these figures and claims to its namespace)."""

from __future__ import annotations

import statistics

from snippets.calibration import Row
from snippets.data import Catalog, required
from snippets.data.export import engine_catalog
from snippets.engine import Layout, deploy, setting
from snippets.engine.step import step
from snippets.pages.calibrated import at_time_model_issue, with_prompt_step_host
from snippets.pages.reference_common import source_label
from snippets.pages.units import ms, us
from snippets.render import fmt

SGLANG = "sglang-default"
"""The memory policy whose engine issues its eager steps' kernels at its own cost (`MemoryPolicySpec.host_dispatch`)."""

LIGHT_LOAD = 8
"""Requests at once up to which a run's TTFT holds hardly any wait for other prompts (the known-misses paragraph)."""


def light_load_gap(cat: Catalog, cal: list[Row], test: list[Row], cal_band: float) -> dict[str, object]:
    """The gap's figures and claims by name; `cal_band` is the band the page holds the calibration's TPOT to."""
    out: dict[str, object] = {}
    # what the model leaves out of InferenceX's NVIDIA DeepSeek-R1 TTFTs at light load (up to LIGHT_LOAD requests
    # at once, so hardly any queue): measured minus predicted, in seconds, by prompt length, over the recipes (model,
    # precision, engine, chip) InferenceX ran at both lengths, so that the lengths compare the same machines
    light = [r for r in cal
             if (m := r.measurement).ttft_ms is not None and r.deployment.setting.model.architecture.moe is not None
             and r.vendor.split(" ")[0] == "NVIDIA" and source_label(m).startswith("InferenceX")
             and m.concurrency is not None and m.concurrency <= LIGHT_LOAD]

    def recipe_of(r: Row) -> tuple[str, str, str, str]:
        m = r.measurement
        return m.model, m.precision, m.engine, m.accelerator

    lengths_of: dict[tuple[str, str, str, str], set[int]] = {}
    for r in light:
        lengths_of.setdefault(recipe_of(r), set()).add(r.measurement.input_tokens or 0)
    gaps = [(r.measurement.input_tokens or 0, ((r.measurement.ttft_ms or 0.0) - r.predicted("ttft_ms")) / 1e3)
            for r in light if len(lengths_of[recipe_of(r)]) > 1]
    lengths = sorted({n for n, _ in gaps})
    if len(lengths) < 2:
        raise ValueError("InferenceX's light-load DeepSeek-R1 rows no longer hold two prompt lengths: the page "
                         "compares them")
    short_gap = statistics.median(g for n, g in gaps if n == lengths[0])
    long_gap = statistics.median(g for n, g in gaps if n == lengths[-1])
    out["moe_gap_rows"] = fmt.count(len(gaps), "rows")
    out["moe_gap_load"] = fmt.count(LIGHT_LOAD, "requests")
    out["moe_gap_low"] = ms(min(g for _, g in gaps), 0)
    out["moe_gap_high"] = ms(max(g for _, g in gaps), 0)
    out["moe_gap_short"] = ms(short_gap, 0)
    out["moe_gap_long"] = ms(long_gap, 0)
    out["moe_gap_short_tokens"] = fmt.count(lengths[0], "tokens")
    out["moe_gap_long_tokens"] = fmt.count(lengths[-1], "tokens")
    # the chip whose long-prompt runs come nearest the model (the largest |gap| of its runs at that length)
    near: dict[str, float] = {}
    for r in cal:
        m = r.measurement
        if (m.ttft_ms is not None and r.deployment.setting.model.architecture.moe is not None
                and r.vendor.split(" ")[0] == "NVIDIA" and source_label(m).startswith("InferenceX")
                and m.concurrency is not None and m.concurrency <= LIGHT_LOAD and m.input_tokens == lengths[-1]):
            gap = abs(m.ttft_ms - r.predicted("ttft_ms")) / 1e3
            near[m.accelerator] = max(near.get(m.accelerator, 0.0), gap)
    near_acc = min(near, key=lambda a: near[a])
    out["moe_gap_near_chip"] = cat.accelerators[near_acc].name
    out["moe_gap_near"] = ms(near[near_acc], 0)
    out["moe_gap_growth"] = fmt.ratio(lengths[-1] / lengths[0], 0, "the longer prompt over the shorter")
    # SGLang's own cost of issuing a kernel outside a CUDA graph (data/policies.yaml sglang-default, from its log of
    # a DeepSeek-V3 prefill of one new token), over the kernels and collective calls the model counts in that forward
    eng = engine_catalog(cat)
    st = setting(eng, "deepseek-v3", "fp8", "reference", accelerator="h200-sxm", memory_policy=SGLANG)
    host = required(st.memory_policy.host_dispatch, "SGLang's own cost of issuing a kernel")
    forward = step(deploy(st, Layout(8)), "prefill", 1, 1)
    out["issue_sglang"] = us(host, basis="data/policies.yaml sglang-default host_dispatch")
    out["issue_vllm"] = us(st.time_model.host_dispatch_s, basis="data/latencies.yaml host-dispatch-eager")
    out["issue_calls"] = fmt.count(round(forward.issued_s / host), "calls")
    # a test source, never fitted: the SGLang cookbook's NVIDIA runs of a mixture of experts with one request in
    # flight (its plain launch_server, no tuning flag), measured minus predicted, as the model prices them and at
    # vLLM's cost of an issue (`calibration.rows_at_time_model_issue`)
    runs = [r for r in test
            if (m := r.measurement).ttft_ms is not None and r.deployment.setting.model.architecture.moe is not None
            and r.vendor.split(" ")[0] == "NVIDIA" and source_label(m) == "SGLang cookbook" and m.concurrency == 1]
    if not runs:
        raise ValueError("no SGLang cookbook run of a mixture of experts on NVIDIA at one request: the page "
                         "compares its TTFT")
    was_rows = {r.id: r for r in at_time_model_issue(cat, "test")}
    plain = [((r.measurement.ttft_ms or 0.0) - r.predicted("ttft_ms")) / 1e3 for r in runs]
    was = [((r.measurement.ttft_ms or 0.0) - was_rows[r.id].predicted("ttft_ms")) / 1e3 for r in runs]
    # the models and GPUs of those runs, named as data/ names them
    names = sorted({cat.models[r.measurement.model].name for r in runs})
    chips = sorted({cat.accelerators[r.measurement.accelerator].name for r in runs})
    out["plain_gap_models"] = fmt.Figure(len(names), "models", " and ".join(names), "the runs' models")
    out["plain_gap_chips"] = fmt.Figure(len(chips), "accelerators", " and ".join(chips), "the runs' GPUs")
    out["plain_gap_rows"] = fmt.count(len(plain), "runs")
    out["plain_gap_low"] = ms(min(plain), 0)
    out["plain_gap_high"] = ms(max(plain), 0)
    out["plain_gap_was_low"] = ms(min(was), 0)
    out["plain_gap_was_high"] = ms(max(was), 0)
    # the runs whose gap the issue's price leaves as it was: their prefill steps bound by the GPU, not the host
    kept = [i for i in range(len(runs)) if abs(was[i] - plain[i]) < 1e-4]
    moved = [i for i in range(len(runs)) if i not in kept]
    tokens = sorted({runs[i].measurement.input_tokens or 0 for i in kept})
    out["plain_gap_long_tokens"] = fmt.count(tokens[0] if len(tokens) == 1 else 0, "tokens", show_unit=True)
    # every run still above the model, none further from it than before; only the longest prompt's gap as it was
    # (the sentence names its length), every shorter prompt's smaller
    out["plain_gap_issue"] = fmt.claim(
        all(g > 0 for g in plain) and all(g <= w + 1e-9 for g, w in zip(plain, was, strict=True))
        and len(tokens) == 1 and bool(moved)
        and all((runs[i].measurement.input_tokens or 0) < tokens[0] for i in moved),
        f"cookbook gaps {sorted(round(g * 1e3) for g in plain)} ms, at vLLM's issue "
        f"{sorted(round(g * 1e3) for g in was)} ms; unchanged at {tokens} tokens")
    # a part that does not grow with the prompt: both medians positive, the long prompts' under twice the short
    # ones' (a run may come out a little over the measured TTFT: the gaps scatter by tens of ms)
    out["moe_gap_fixed"] = fmt.claim(short_gap > 0 and 0 < long_gap < 2 * short_gap,
                                   f"gaps {sorted(round(g * 1e3) for _, g in gaps)} ms; median {short_gap * 1e3:.0f} ms at "
                                   f"{lengths[0]} tokens, {long_gap * 1e3:.0f} ms at {lengths[-1]}")
    # one launch recipe on two machines: the chips whose light-load short-prompt runs match most often (same model,
    # engine, image, launch limits, intake, TP and concurrency); the model prices the pair's TTFTs alike, the
    # measured gap differs by machine
    short = [r for r in cal if (m := r.measurement).ttft_ms is not None and m.input_tokens == lengths[0]
             and r.deployment.setting.model.architecture.moe is not None and r.vendor.split(" ")[0] == "NVIDIA"
             and source_label(m).startswith("InferenceX") and m.concurrency is not None
             and m.concurrency <= LIGHT_LOAD]

    def recipe(r: Row) -> tuple[object, ...]:
        m = r.measurement
        limits = None if m.engine_limits is None else repr(m.engine_limits.model_dump(exclude={"how"}))
        intake = None if m.intake is None else repr(m.intake.model_dump(exclude={"how"}))
        return (m.model, m.engine, m.engine_version, limits, intake, r.deployment.layout.tp, m.concurrency)

    by_chip: dict[str, dict[tuple[object, ...], Row]] = {}
    for r in short:
        by_chip.setdefault(r.measurement.accelerator, {}).setdefault(recipe(r), r)
    chips_seen = sorted(by_chip)
    matched = {(a, b): sorted(set(by_chip[a]) & set(by_chip[b]), key=repr)
               for i, a in enumerate(chips_seen) for b in chips_seen[i + 1:]}
    pair = max(matched, key=lambda k: (len(matched[k]), k))
    keys = matched[pair]
    if len(keys) < 3:
        raise ValueError("no two machines share three light-load InferenceX runs of one recipe: the page compares them")

    def gap_of(r: Row) -> float:
        return ((r.measurement.ttft_ms or 0.0) - r.predicted("ttft_ms")) / 1e3

    medians = {c: statistics.median(gap_of(by_chip[c][k]) for k in keys) for c in pair}
    hi_chip, lo_chip = sorted(pair, key=lambda c: -medians[c])
    pred_diff = max(abs(by_chip[hi_chip][k].predicted("ttft_ms") / by_chip[lo_chip][k].predicted("ttft_ms") - 1)
                    for k in keys)
    out["gap_pair_runs"] = fmt.count(len(keys), "runs")
    out["gap_pair_hi_chip"] = cat.accelerators[hi_chip].name
    out["gap_pair_lo_chip"] = cat.accelerators[lo_chip].name
    out["gap_pair_hi"] = ms(medians[hi_chip], 0)
    out["gap_pair_lo"] = ms(medians[lo_chip], 0)
    out["gap_pair_pred"] = fmt.percent(pred_diff)
    # the model prices the two machines' TTFTs within a tenth of each other, the measured gap of one is under half
    # the other's: the difference is the machine's, not anything the model prices
    out["gap_pair_machine"] = fmt.claim(pred_diff <= 0.1 and medians[lo_chip] < medians[hi_chip] / 2,
                                      f"{hi_chip} median gap {medians[hi_chip] * 1e3:.0f} ms, {lo_chip} "
                                      f"{medians[lo_chip] * 1e3:.0f} ms over {len(keys)} matched runs; predicted "
                                      f"TTFTs at most {pred_diff:.1%} apart")
    # were that part inside the engine's steps (a prompt's step run eagerly, slower by the short prompts' median
    # gap), the other requests' decoding would wait for it at every step that carries a prompt: the same runs of
    # the same model at more than LIGHT_LOAD requests, predicted again with that host time on each such step
    models = {r.measurement.model for r in cal if (m := r.measurement).ttft_ms is not None
              and r.deployment.setting.model.architecture.moe is not None and r.vendor.split(" ")[0] == "NVIDIA"
              and source_label(m).startswith("InferenceX") and m.concurrency is not None
              and m.concurrency <= LIGHT_LOAD}
    busy = [r for r in cal if (m := r.measurement).model in models and m.itl_ms is not None
              and r.vendor.split(" ")[0] == "NVIDIA" and source_label(m).startswith("InferenceX")
              and m.concurrency is not None and m.concurrency > LIGHT_LOAD]
    if not busy:
        raise ValueError("no InferenceX run of the light-load gap's model above the light load: the page compares "
                         "its TPOT")
    charged = {r.id: r for r in with_prompt_step_host(cat, "calibration", short_gap)}
    itl_now = statistics.median(r.error("itl_ms") or 0.0 for r in busy)
    itl_charged = statistics.median(charged[r.id].error("itl_ms") or 0.0 for r in busy)
    out["moe_gap_itl_rows"] = fmt.count(len(busy), "runs")
    out["moe_gap_itl_now"] = fmt.percent(itl_now)
    out["moe_gap_itl_charged"] = fmt.percent(itl_charged)
    # the model's TPOT for those runs within the calibration's band as it is, and above it once every
    # prompt-carrying step is charged the gap
    out["moe_gap_outside"] = fmt.claim(abs(itl_now) <= cal_band < itl_charged,
                                     f"median TPOT error {itl_now:+.1%} now, {itl_charged:+.1%} charged "
                                     f"{short_gap * 1e3:.0f} ms a prompt step, over {len(busy)} runs")
    return out
