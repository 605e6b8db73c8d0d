"""The time model against the measurements: each row's prediction and error, the fits, and the error bands.

Every row of data/measurements.yaml is either predicted or skipped with the reason (never dropped silently):
rows served in another mode are predicted in it (disaggregated prefill and decode with the pools the source
states, kept at its concurrency; speculative decoding with the acceptance it states; a repeated prefix at its hit
rate: `snippets.engine.serving`), unless the source leaves out what the mode needs; rows loaded by request rate are
predicted at that rate (`snippets.engine.serving.at_rate`); rows whose layout, lengths or load the source does not
state cannot be put to the engine; a layout the engine refuses is listed with the engine's message. Rows that
give only a speed-up are compared in `snippets.comparisons`.

The engine predicts each row's own quantity (`Measurement.definitions`): TTFT with or without the wait for a
slot, time per output token with or without the first token, and throughput as output tokens per second of the
whole run (a per-GPU or total-token figure is converted by `Measurement.output_tokens_per_s`). Where a source's
client starts every request at once (the row's `definitions.burst`: InferenceX's, dstack's, the SGLang
cookbook's), the first wave, computed as the engine batches its prompts, moves the mean TTFT the engine's steady
state predicts by that wave's share of the requests (`first_wave_s`; none where the source's own spread shows no
wave queued, `Burst.queued`), and where it also draws random lengths
(`Burst.range_ratio`), the run's last requests finish with fewer in flight: the whole run's throughput is the steady
state's times `drain_factor`, the run played out with lengths drawn as the client draws them. A run
that is one wave (`one_wave`: a static batch, or an offline run that says how many requests it queued, no more
than the deployment admits at once) has no steady state: all its figures are the wave's
(`snippets.engine.serving.wave`); so has a burst of requests of one length that the deployment prefills in one step
(`lockstep`: they end together and the next start together, the same wave each time); a static batch of more than
the deployment admits takes its TTFT from `static_batch_ttft_s`. Errors are
(predicted − measured) ÷ measured, reported by role and by regime (vendor; dense or MoE; prefill, decode at low
load, decode at saturation: `snippets.engine.bands`).

Calibration discipline: only `role: calibration` rows (the sources issue 24 names: NVIDIA NIM's benchmarking
1.0.0 pages, SemiAnalysis InferenceX, Azure's AI benchmarking guide) take part in the fit of the time model's
factors; test rows are predicted with the fitted model, reported apart, and alone make the error bands.

- `fit`: the host's time per engine step (`step_overhead`), from the fit basis' inter-token latency at
  concurrency 1, where it acts alone; and for a vendor whose fitted rows run only on chips without measured
  kernel efficiencies, the share of the default efficiencies (and of a kernel's fixed cost) its kernels reach
  (`vendor_kernel_fraction`), on that vendor's rows' inter-token latency and throughput. The fit basis
  (`fit_basis`) is every calibration row of the three named sources the engine can predict; rows whose
  configuration the data infers are never fitted.
- `fit_collectives`: each collective algorithm's latency and share of the link, least squares on relative
  error over the published timings by message size (data/latencies.yaml `points`).
- `band_table`: the test rows' errors by regime (`snippets.engine.bands`).

`python -m snippets.calibration` prints the fits, every row's error, the skipped rows, the errors by regime and
the bands.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from snippets.data import Catalog, Measurement, TimeModel
from snippets.engine import Deployment, Layout, deploy, setting
from snippets.engine import bands as bands_mod
from snippets.engine.collectives import ONE_SHOT_LIMITS, one_shot_applies
from snippets.engine.deployment import NoLayout, RefusedLayout
from snippets.engine.serving import (
    BatchWait,
    DisaggPrediction,
    Prediction,
    Speculation,
    Wave,
    admitted,
    at_rate,
    disaggregated_at,
    in_turn,
    mixed_step,
    predict,
    token_budget,
    wave,
)
from snippets.engine.specs import EngineCatalog, TimeModelSpec
from snippets.engine.step import prepare
from snippets.engine.topology import group_fabric_bandwidth

SCENARIO = "reference"
METRICS = ("ttft_ms", "itl_ms", "output_tokens_per_s")
BAND_METRIC = {"ttft_ms": "ttft_ms", "itl_ms": "tpot_ms", "output_tokens_per_s": "output_tokens_per_s"}
"""Each measured metric and the predicted figure it is compared with (the band's metric)."""
FIT_SOURCES = (
    "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/",
    "https://github.com/SemiAnalysisAI/InferenceX",
    "https://github.com/Azure/AI-benchmarking-guide",
)
"""The sources issue 24 names for the fit (NVIDIA NIM's benchmarking 1.0.0 pages, SemiAnalysis InferenceX,
Azure's AI benchmarking guide): only calibration rows all of whose sources are among these are fitted."""


def prompts_per_slot(m: Measurement) -> float | None:
    """Prompts the row's client sends per request it keeps in flight, where its client starts them all at once
    (`Definitions.burst`, a fact of the source's harness the row records); None for another client."""
    burst = m.definitions.burst
    if burst is None or m.concurrency is None:
        return None
    if burst.prompts_per_request is not None:
        return float(burst.prompts_per_request)
    return (burst.prompts or 0) / m.concurrency


def first_wave_s(m: Measurement, d: Deployment, p: Prediction | DisaggPrediction) -> float:
    """What a run's first wave adds to its mean TTFT when its client starts all `c` requests it keeps in flight at
    once and sends `k × c` prompts in all: the wave's prompts reach an idle engine together, which computes them as
    a static batch does (`static_batch_ttft_s`: as many a step as its token budget holds, the i-th waiting for the
    steps before its own), where the steady state has each arrive alone, wait for the step under way (and, where the
    row's engine polls every N decode steps, for the poll: `Prediction.recv_wait_s`) and take its own steps. That
    wave is 1 ÷ k of the requests (later waves arrive staggered by the first's prompts, as the steady state has
    them), so the run's mean moves by (the wave's mean − the steady state's) ÷ k, the wait for a slot alike in both.
    Zero for other sources, for an aggregated prediction's absence, and where TTFT excludes the wait.

    Disaggregated, the router hands the wave round-robin to the W prefill workers, c ÷ W each, and a worker computes
    k of them a step (`PrefillPool.prompts_per_step`) at `service_s` a prompt: the i-th waits for the batches before
    its own, (c ÷ W − k) ÷ 2 prompts' service on average."""
    burst = m.definitions.burst
    if m.definitions.ttft != "queueing-included" or m.concurrency is None or (burst is not None and not burst.queued):
        return 0.0
    per = prompts_per_slot(m)
    if per is None:
        return 0.0
    if isinstance(p, DisaggPrediction):
        n = m.concurrency / p.prefill_workers
        return max(0.0, n - p.prefill.prompts_per_step) / 2 * p.prefill.service_s / max(1.0, per)
    wave = static_batch_ttft_s(d, p, m.concurrency)
    return (wave - p.ttft_s) / max(1.0, per)


def static_batch_ttft_s(d: Deployment, p: Prediction, batch: int) -> float:
    """The mean TTFT of a static batch of more requests than the deployment admits (one that fits is one wave:
    `one_wave`): its `batch` prompts start together and the engine fills each step's token
    budget (`token_budget`, per data-parallel rank) with them in turn, so the i-th of a rank's b prompts (from 0)
    has its first token after ceil((i + 1) ÷ k) steps when k = budget ÷ n of its n-token prompts fit a step, each
    a step of min(budget, b × n) prompt tokens (`mixed_step`); a prompt longer than the budget takes its own
    chunked steps (`p.prefill_s`), so the i-th waits for the i before it. Requests beyond what the deployment admits
    wait for a slot as the steady state has them (`p.queue_s`). Unlike `first_wave_s`, which adds a wave to the
    steady state a long run settles into, a static batch is nothing but its first wave."""
    b = max(1, math.ceil(min(batch, p.in_flight) / d.layout.dp))
    n = max(1, p.input_tokens - p.cached_tokens)
    budget = token_budget(d)
    if n >= budget:
        return (b + 1) / 2 * p.prefill_s + p.queue_s
    k = budget // n
    t = total = gpu_before = 0.0
    for first in range(0, b, k):  # each step the next k prompts (the last step the rest), their attention their own
        count = min(k, b - first)
        x = mixed_step(d, 0, 0.0, count * n, 0.0, finishing=count, prompts=count)
        t += in_turn(d, [x], gpu_before)[0]
        gpu_before = x.gpu_s
        total += count * t
    return total / b + p.queue_s


DRAIN_DRAWS = 8
"""Draws of a run's lengths that `drain_factor` averages over (seeded 0 to 7, so every build draws the same)."""


def drain_run(outs: Sequence[int], slots: int, offset: float, full_s: float,
              step_s: Callable[[int], float]) -> tuple[float, float]:
    """(duration, mean requests in flight) of a run whose requests emit `outs[i]` tokens each, `slots` at a time in
    the order given, a freed slot taking the next (a client's semaphore over its list of prompts). Time is counted in
    steps: a request lasts its tokens less one plus `offset` steps (its prompt and wait, as the steady state prices
    them), one step taking `full_s` while requests still wait for a slot (the steady state's time per output token,
    the other prompts' steps included) and `step_s(b)` once none wait and `b` are left decoding, no prompt beside
    them."""
    n = len(outs)
    if n == 0 or slots < 1:
        raise ValueError("a run has at least one request and one slot")
    running = [outs[i] - 1 + offset for i in range(min(slots, n))]  # the step count at which each ends
    heapq.heapify(running)
    taken, done, t, area = len(running), 0.0, 0.0, 0.0
    while running:
        end = heapq.heappop(running)
        b = len(running) + 1
        dt = (end - done) * (full_s if taken < n else step_s(b))
        t += dt
        area += b * dt
        done = end
        if taken < n:
            heapq.heappush(running, done + outs[taken] - 1 + offset)
            taken += 1
    return t, area / t if t > 0 else float(min(slots, n))


def drain(m: Measurement, d: Deployment, p: Prediction | DisaggPrediction) -> tuple[float, float] | None:
    """(whole-run throughput over the steady state's, mean requests in flight) of a run whose client draws random
    lengths (`Burst.range_ratio`) and sends a fixed number of prompts, or None for any other run. The steady state
    keeps every slot busy for ever; the run ends once its last requests finish, and as they do fewer are in flight,
    each step faster but emitting fewer tokens. `drain_run` plays the run with lengths drawn as the client draws
    them (uniform on the integers from range_ratio x the nominal to the nominal, the nominal read back from the
    row's mean), `DRAIN_DRAWS` times; the steady state's own figures set the step (`Prediction.tpot_s`, and its
    lifetime for a request's prompt and waits), and the decode step of `b` sequences (`mixed_step`, at the powers of
    two up to the slots and between them linearly) the steps once none wait. Aggregated, plain runs only."""
    burst = m.definitions.burst
    if burst is None or burst.range_ratio is None or m.concurrency is None or not isinstance(p, Prediction) \
            or not m.mode.plain or m.definitions.load != "fixed-concurrency":
        return None
    slots = min(m.concurrency, p.in_flight)
    n = round((prompts_per_slot(m) or 1.0) * m.concurrency)
    r = burst.range_ratio
    hi = max(1, round(2 * p.output_tokens / (1 + r)))
    lo = max(1, int(r * hi))
    lifetime = slots * p.output_tokens / p.output_tokens_per_s
    offset = max(0.0, lifetime / p.tpot_s - (p.output_tokens - 1))
    prep = prepare(d)
    ctx = p.input_tokens + p.output_tokens / 2
    points: list[int] = []
    b = 1
    while b < slots:
        points.append(b)
        b *= 2
    points.append(slots)
    at = {x: mixed_step(d, x, ctx, 0, 0.0, prep=prep).total_s for x in points}

    def step_s(x: int) -> float:
        lo_b = max(q for q in points if q <= x)
        hi_b = min(q for q in points if q >= x)
        if lo_b == hi_b:
            return at[lo_b]
        return at[lo_b] + (at[hi_b] - at[lo_b]) * (x - lo_b) / (hi_b - lo_b)

    ratios: list[float] = []
    flights: list[float] = []
    for seed in range(DRAIN_DRAWS):
        rng = random.Random(seed)  # noqa: S311 - a seeded draw of lengths, the same every build, not a secret
        outs = [rng.randint(lo, hi) for _ in range(n)]
        t, flight = drain_run(outs, slots, offset, p.tpot_s, step_s)
        mean = sum(outs) / n
        steady = slots * mean / (p.tpot_s * (mean - 1 + offset))
        ratios.append(sum(outs) / t / steady)
        flights.append(flight)
    return statistics.fmean(ratios), statistics.fmean(flights)


def drain_factor(m: Measurement, d: Deployment, p: Prediction | DisaggPrediction) -> float:
    """The whole run's output throughput over the steady state's (`drain`), 1 where the run is not modelled so."""
    got = drain(m, d, p)
    return 1.0 if got is None else got[0]


def lockstep(m: Measurement, d: Deployment, p: Prediction | DisaggPrediction) -> int | None:
    """The requests of a wave that the whole run repeats, or None. A client that starts all `c` requests it keeps in
    flight at once (`Definitions.burst`), each of the same prompt and output length (`Burst.same_lengths`), on a
    deployment that computes all `c` prompts in one step (`c ÷ dp` of them fit each rank's token budget, and it admits
    `c`): every request gets its first token in that step, decodes in the same steps and ends in the same step, so
    the client sends the next `c` together and the run is that wave again and again, each request's TTFT the whole
    wave's prefill (`snippets.engine.serving.wave`), not the steady state's own prompt after a staggered arrival.
    Where the wave needs more than one step, first tokens (and so ends and arrivals) stagger, and the steady state
    with its first wave (`first_wave_s`) applies. Plain aggregated serving only."""
    burst = m.definitions.burst
    c, n = m.concurrency, m.input_tokens
    if burst is None or not burst.same_lengths or not burst.queued or c is None or n is None or not m.mode.plain:
        return None
    if m.definitions.load != "fixed-concurrency" or not isinstance(p, Prediction) or c > p.admitted:
        return None
    return c if math.ceil(c / d.layout.dp) * n <= token_budget(d) else None


def one_wave(m: Measurement, p: Prediction | DisaggPrediction) -> int | None:
    """The requests of a run that is one wave, or None: a static batch, or an offline run that states how many
    requests it queued, served plainly (aggregated, no speculation, no repeated prefix), of no more requests than
    the deployment admits at once (`Prediction.admitted`): every request is in from the first step and runs to its
    end, so the run is not a steady state (`snippets.engine.serving.wave`)."""
    if m.definitions.load not in ("static-batch", "offline") or m.concurrency is None or not m.mode.plain:
        return None
    if not isinstance(p, Prediction) or m.concurrency > p.admitted:
        return None
    return m.concurrency


@dataclass(frozen=True)
class Row:
    """One measurement beside the model's prediction of the same quantity."""

    id: str
    measurement: Measurement
    deployment: Deployment
    """The replica, or a decode worker of a disaggregated run."""
    prediction: Prediction | DisaggPrediction
    vendor: str = ""
    """The accelerator's vendor as data/accelerators.yaml names it (NVIDIA, AMD)."""
    wave: Wave | None = None
    """The run as one wave (`one_wave`), or the wave it repeats (`lockstep`), whose figures the row compares; None
    for a run the steady state serves."""
    drain: float = 1.0
    """The whole run's output throughput over the steady state's (`drain_factor`): mostly below 1 where the client's
    random lengths leave its last requests finishing with fewer in flight (a little above it where the steady
    state's steps carry long prompts the run's end no longer has), 1 for any other run."""

    def predicted(self, metric: str) -> float:
        """The engine's figure of `metric` as the row's source defines it (`Measurement.definitions`): the wave's
        where the run is one wave (`one_wave`) or repeats one (`lockstep`), else the steady state's."""
        p, d = self.prediction, self.measurement.definitions
        w = self.wave
        # a mean TTFT that counts the requests which generated nothing at zero is that share short of the others'
        kept = 1.0 - (d.ttft_zero_share or 0.0)
        if w is not None:
            if metric == "ttft_ms":
                return w.ttft_s * kept * 1e3
            if metric == "itl_ms":
                if d.token_latency == "tpot-including-first":  # noqa: S105 - a definition; latency over output tokens
                    return (w.ttft_s + (w.output_tokens - 1) * w.tpot_s) / w.output_tokens * 1e3
                return w.tpot_s * 1e3
            if metric == "output_tokens_per_s":
                return w.output_tokens_per_s
            raise ValueError(f"unknown metric {metric!r}")
        if metric == "ttft_ms":
            if self.measurement.definitions.load == "static-batch" and isinstance(p, Prediction):
                assert self.measurement.concurrency is not None  # noqa: S101 - the schema requires it
                queued = p.queue_s if d.ttft == "queueing-excluded" else 0.0
                return (static_batch_ttft_s(self.deployment, p, self.measurement.concurrency) - queued) * kept * 1e3
            # queueing-excluded: from the request's scheduling, so without the wait for a slot
            wave = first_wave_s(self.measurement, self.deployment, p)
            return (p.ttft_s + wave - (p.queue_s if d.ttft == "queueing-excluded" else 0.0)) * kept * 1e3
        if metric == "itl_ms":
            if d.token_latency == "tpot-including-first":  # noqa: S105 - a definition; latency over output tokens
                n = p.output_tokens
                return (p.ttft_s + (n - 1) * p.tpot_s) / n * 1e3
            return p.tpot_s * 1e3
        if metric == "output_tokens_per_s":
            return p.output_tokens_per_s * self.drain
        raise ValueError(f"unknown metric {metric!r}")

    def measured(self, metric: str) -> float | None:
        """The row's figure of `metric`, None where it has none or where it tests nothing: the output throughput of a
        run loaded by a request rate, which the client's rate sets (a finite run's throughput is its prompts over the
        time to send them and drain the last), not the engine."""
        if metric == "output_tokens_per_s" and self.measurement.definitions.load == "request-rate":
            return None
        value: float | None = getattr(self.measurement, metric)
        return value

    def error(self, metric: str) -> float | None:
        """(predicted − measured) ÷ measured; None where the row does not measure it."""
        m = self.measured(metric)
        return None if m is None else (self.predicted(metric) - m) / m

    @property
    def in_flight(self) -> int:
        """Sequences the prediction serves at once: the row's concurrency, capped by what the deployment admits."""
        return round(self.prediction.in_flight)

    def regime(self, metric: str) -> bands_mod.Regime:
        """The regime of `metric`'s prediction: prefill for time to first token, else the decode regime the
        engine assigns (`snippets.engine.serving`)."""
        label = self.prediction.ttft_regime if metric == "ttft_ms" else self.prediction.regime
        vendor, kind, phase = (x.strip() for x in label.split(",", 2))
        return bands_mod.Regime(vendor, kind == "MoE", phase)


SKIP_KINDS = ("unstated", "unmodelled", "refused")
"""Why a row is not predicted: its source leaves out something the engine needs (a disaggregated run's pools, a
speculative run's acceptance, the load, the token counts); it was served in a combination the engine does not model;
or the engine refuses it as the source ran it (a layout that does not hold the model, a KV cache that cannot hold one
sequence: vLLM's message)."""


@dataclass(frozen=True)
class Skipped:
    """A measurement today's engine does not predict, and why (`kind`, one of `SKIP_KINDS`, and the reason)."""

    id: str
    measurement: Measurement
    reason: str
    kind: str


SGLANG_EAGLE = (5, 4, 8)
"""SGLang's EAGLE defaults (--speculative-num-steps 5, --speculative-eagle-topk 4, --speculative-num-draft-tokens 8;
docs.sglang.io, Speculative Decoding, EAGLE Decoding), for a row that runs them without stating its settings."""


def speculation_of(m: Measurement) -> Speculation | None:
    """The row's speculative decoding as the engine runs it (the MTP module, or an EAGLE head with SGLang's tree
    where the row names no settings), or None where the row states no acceptance (or names a separate draft model,
    which data/models.yaml does not hold)."""
    sp = m.mode.speculation
    if sp is None or sp.method not in ("mtp", "eagle", "eagle3"):
        return None
    if sp.acceptance_rate is None and sp.acceptance_length is None:
        return None
    if sp.method == "mtp":
        if sp.draft_tokens is None:
            return None
        return Speculation(sp.draft_tokens, sp.acceptance_rate or 0.0, "mtp", acceptance_length=sp.acceptance_length)
    steps, width, verify = SGLANG_EAGLE if sp.draft_tokens is None else (sp.draft_tokens, 1, None)
    return Speculation(steps, sp.acceptance_rate or 0.0, "eagle", acceptance_length=sp.acceptance_length,
                       tree_width=width, verify_tokens=verify)


def _mode_gap(m: Measurement) -> tuple[str, str] | None:
    """What the row's mode needs that its source does not state, or that the engine does not model, with its kind
    (`SKIP_KINDS`); or None."""
    mode = m.mode
    if mode.speculation is not None and speculation_of(m) is None:
        return "unstated", ("its speculative decoding's acceptance (or its draft) is not stated, and the speed-up it "
                            "brings depends on it")
    dis = mode.disaggregation
    if dis is not None:
        if dis.prefill is None or dis.decode is None:
            return "unstated", "its prefill and decode pools are not stated"
        if m.definitions.load != "fixed-concurrency":
            return "unmodelled", "a disaggregated run is predicted at the concurrency its client keeps in flight"
        if mode.speculation is not None:
            return "unmodelled", "disaggregated and speculative at once: not modelled together"
    return None


def why_not(m: Measurement) -> tuple[str, str] | None:
    """Why a row cannot be put to today's engine as it stands, with its kind (`SKIP_KINDS`: the engine's refusal
    comes only from trying, `predict_rows`), or None if it can."""
    gap = _mode_gap(m)
    if gap is not None:
        return gap
    if m.definitions.load == "not-stated":
        return "unstated", "the source does not state the load"
    missing = [f for f in ("layout", "input_tokens", "output_tokens") if getattr(m, f) is None]
    if missing:
        return "unstated", "the source does not state its " + " or ".join(f.replace("_", " ") for f in missing)
    if m.ttft_ms is None and m.itl_ms is None and m.output_tokens_per_s is None:
        return "unstated", "no figure the engine predicts (only a speed-up)"
    return None


def why_not_predicted(m: Measurement) -> str | None:
    """Why a row cannot be put to today's engine as it stands (`why_not`'s reason), or None if it can."""
    why = why_not(m)
    return None if why is None else why[1]


def _deployment(eng: EngineCatalog, m: Measurement, tm: TimeModelSpec | None) -> Deployment:
    assert m.layout is not None and m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - why_not_predicted
    lay = Layout(m.layout.tp, m.layout.pp, m.layout.ep, m.layout.dp)
    # A run at a stated concurrency is served by an engine started for it (max_num_seqs at that concurrency, as the
    # benchmark recipes set it), not with vLLM's default of 1,024 on an H100, whose sampler warm-up would take
    # memory these engines (TensorRT-LLM under NIM, SGLang) do not set aside; an offline run keeps the default.
    # A row whose engine ran with its own memory budget and limits (`Measurement.engine_limits`: trtllm-bench's
    # computed max batch size and max num tokens) is predicted under those. Its steps' collectives are priced as its
    # own engine runs them (a chip's own all-reduce timings are an engine's: `TimeModelSpec.for_chip`).
    lim = m.engine_limits
    st = setting(eng, m.model, m.precision, SCENARIO, accelerator=m.accelerator, concurrency=1,
                 context_tokens=m.input_tokens + m.output_tokens, kv_precision=m.kv_precision,
                 max_num_seqs=m.concurrency if lim is None else lim.max_num_seqs,
                 max_num_batched_tokens=None if lim is None else lim.max_num_batched_tokens,
                 memory_fraction=None if lim is None else lim.memory_fraction,
                 memory_policy=None if lim is None else lim.memory_policy,
                 chunked_prefill=None if m.chunked_prefill is None else m.chunked_prefill.enabled,
                 cuda_graphs=None if m.cuda_graphs is None else m.cuda_graphs.enabled,
                 mixed_steps=None if m.mixed_steps is None else m.mixed_steps.enabled,
                 cuda_graph_max_batch=None if lim is None else lim.cuda_graph_max_batch,
                 engine=m.engine.split(" ")[0], moe_kernel=None if lim is None else lim.moe_kernel,
                 symm_mem=None if m.symm_mem is None else m.symm_mem.enabled, keeps_16bit=m.keeps_16bit)
    if tm is not None:
        st = replace(st, time_models={st.time_model_id: tm})
    return deploy(st, lay)


def _concurrency(d: Deployment, m: Measurement) -> int:
    """The row's concurrency, or for an offline run (every request queued at once) all the replica admits."""
    if m.concurrency is not None:
        return m.concurrency
    assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - why_not_predicted
    return max(1, admitted(d, m.input_tokens + m.output_tokens))


def _predict(eng: EngineCatalog, m: Measurement, d: Deployment,
             tm: TimeModelSpec | None) -> Prediction | DisaggPrediction:
    """The row's prediction in its mode: aggregated (with its speculation and its prefix hit), or its prefill pool's
    workers handing prompts to its decode pool's at the concurrency its client keeps."""
    assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - why_not_predicted
    hit = 0.0 if m.mode.prefix_cache is None else m.mode.prefix_cache.hit_rate
    spec = speculation_of(m)
    dis = m.mode.disaggregation
    if dis is None:
        it = m.intake
        recv = 1 if it is None or it.recv_interval is None else it.recv_interval
        wait = None if it is None or it.batch_wait_steps is None or it.batch_wait_tokens is None else \
            BatchWait(it.batch_wait_steps, it.batch_wait_tokens)
        if m.request_rate is not None:  # an open loop: requests arriving at the client's rate (`at_rate`)
            return at_rate(d, m.request_rate, m.input_tokens, m.output_tokens, speculation=spec, prefix_hit=hit,
                           recv_interval=recv, batch_wait=wait)
        return predict(d, _concurrency(d, m), m.input_tokens, m.output_tokens, speculation=spec, prefix_hit=hit,
                       recv_interval=recv, batch_wait=wait)
    assert dis.prefill is not None and dis.decode is not None and m.concurrency is not None  # noqa: S101 - _mode_gap
    pl = dis.prefill.layout
    prefill = deploy(d.setting, Layout(pl.tp, pl.pp, pl.ep, pl.dp))
    return disaggregated_at(prefill, d, dis.prefill.workers, dis.decode.workers, m.concurrency, m.input_tokens,
                            m.output_tokens, prefix_hit=hit)


def predict_rows(eng: EngineCatalog, measurements: Iterable[tuple[str, Measurement]],
                 tm: TimeModelSpec | None = None) -> tuple[list[Row], list[Skipped]]:
    """Each measurement predicted under `tm` (or its scenario's time model), or skipped with the reason."""
    done: list[Row] = []
    skipped: list[Skipped] = []
    for mid, m in measurements:
        why = why_not(m)
        if why is None:
            try:
                d = _deployment(eng, m, tm)
                assert m.input_tokens is not None and m.output_tokens is not None  # noqa: S101 - checked above
                p = _predict(eng, m, d, tm)
                n = one_wave(m, p) or lockstep(m, d, p)
                w = None if n is None else wave(d, n, m.input_tokens, m.output_tokens)
                done.append(Row(mid, m, d, p, eng.chips[m.accelerator].vendor, w,
                                drain_factor(m, d, p) if w is None else 1.0))
                continue
            except (RefusedLayout, NoLayout, ValueError, KeyError) as exc:
                why = "refused", f"the engine refuses it: {exc}"
        skipped.append(Skipped(mid, m, why[1], why[0]))
    return done, skipped


def evaluate(cat: Catalog, role: str | None = None,
             tm: TimeModelSpec | None = None) -> tuple[list[Row], list[Skipped]]:
    """Every measurement (of `role`, if given): predicted under `tm` or the scenario's time model, or skipped
    with the reason."""
    from snippets.data.export import engine_catalog

    return predict_rows(engine_catalog(cat), ((k, m) for k, m in cat.measurements.items()
                                              if role is None or m.role == role), tm)


def rows(cat: Catalog, role: str | None = None, tm: TimeModelSpec | None = None) -> list[Row]:
    """Every measurement (of `role`, if given) the engine predicts, with the prediction (`evaluate` lists the rest)."""
    return evaluate(cat, role, tm)[0]


def rows_with_prompt_step_host(cat: Catalog, role: str, seconds: float) -> list[Row]:
    """`rows(cat, role)` under the scenario's time model with `seconds` of host time added to every step that carries
    prompt tokens (`TimeModelSpec.prompt_step_host_s`, none in data/): a what-if, never a fit."""
    from snippets.data.export import engine_catalog

    tm = engine_catalog(cat).time_models[_time_model_entry(cat)[0]]
    return rows(cat, role, replace(tm, prompt_step_host_s=seconds))


def rows_at_time_model_issue(cat: Catalog, role: str) -> list[Row]:
    """`rows(cat, role)` with every engine's host issue of a kernel outside a CUDA graph at the time model's figure
    (`MemoryPolicySpec.host_dispatch` left out: one call through vLLM's compiled custom op) and no step issued under
    the one before (`overlap_schedule` off): the engine before it priced SGLang's own. A what-if, never a fit."""
    from snippets.data.export import engine_catalog

    eng = engine_catalog(cat)
    plain = MappingProxyType({k: replace(p, host_dispatch=None, overlap_schedule=False)
                              for k, p in eng.memory_policies.items()})
    return predict_rows(replace(eng, memory_policies=plain),
                        ((k, m) for k, m in cat.measurements.items() if m.role == role))[0]


def skipped(cat: Catalog, role: str | None = None) -> list[Skipped]:
    """Every measurement (of `role`, if given) the engine does not predict today, with the reason."""
    return evaluate(cat, role)[1]


def fit_basis(cat: Catalog) -> dict[str, Measurement]:
    """The rows the time model's factors are fitted on: calibration rows of the named sources (`FIT_SOURCES`) whose
    configuration the source states, served plainly (no speculation, disaggregation or prefix cache), that the
    engine can be put to. The host's time per step is fitted on those at one request in flight; a vendor's kernel
    fraction on that vendor's rows."""
    return {k: m for k, m in cat.measurements.items()
            if m.role == "calibration" and m.config_from == "source" and m.mode.plain
            and why_not_predicted(m) is None
            and all(any(s.url.startswith(f) for f in FIT_SOURCES) for s in m.sources)}


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
    step_overhead_s: float
    vendor_kernel_fraction: Mapping[str, float]
    loss: float
    """Sum of squared log errors of the fitted rows' metrics."""
    rows: int
    """Calibration rows the fit used."""


def _time_model_entry(cat: Catalog) -> tuple[str, TimeModel]:
    key = cat.scenarios[SCENARIO].time_model
    entry = cat.policies[key]
    assert isinstance(entry, TimeModel)  # noqa: S101 - the loader checks the scenario's time model
    return key, entry


def _measured_chips(cat: Catalog) -> set[str]:
    return {e.accelerator for e in cat.efficiencies.values() if e.resource in ("gemm_weights", "gemm_compute")}


def fit(cat: Catalog) -> Fit:
    """The time model's fitted factors, each searched inside the range data/policies.yaml states for it, on the
    fit basis (`fit_basis`: calibration rows only)."""
    from snippets.data.export import engine_catalog

    eng = engine_catalog(cat)
    key, entry = _time_model_entry(cat)
    base = eng.time_models[key]
    cal = [(k, m) for k, m in sorted(fit_basis(cat).items())]
    lo, hi = (x * entry.step_overhead.seconds / entry.step_overhead.value for x in entry.step_overhead_range)

    def loss_of(tm: TimeModelSpec, chosen: list[tuple[str, Measurement]], metrics: tuple[str, ...]) -> float:
        total = 0.0
        for r in predict_rows(eng, chosen, tm)[0]:
            for metric in metrics:
                mv = r.measured(metric)
                if mv is not None:
                    total += math.log(r.predicted(metric) / mv) ** 2
        return total

    single = [(k, m) for k, m in cal if m.concurrency == 1]
    overhead = _golden(lambda x: loss_of(replace(base, step_overhead_s=x), single, ("itl_ms",)), lo, hi)
    tm = replace(base, step_overhead_s=overhead)
    # a vendor whose fitted rows all run on chips without measured kernels: how far its kernels fall short
    measured = _measured_chips(cat)
    vendors: dict[str, list[tuple[str, Measurement]]] = {}
    for k, m in cal:
        vendors.setdefault(eng.chips[m.accelerator].vendor, []).append((k, m))
    fractions: dict[str, float] = {}
    vlo, vhi = entry.vendor_kernel_fraction_range
    for vendor, vrows in sorted(vendors.items()):
        if any(m.accelerator in measured for _, m in vrows):
            continue

        def vloss(x: float, vendor: str = vendor, vrows: list[tuple[str, Measurement]] = vrows) -> float:
            t = replace(tm, vendor_kernel_fraction=MappingProxyType({**tm.vendor_kernel_fraction, vendor: x}))
            return loss_of(t, vrows, ("itl_ms", "output_tokens_per_s"))

        fractions[vendor] = _golden(vloss, vlo, vhi)
    tm = replace(tm, vendor_kernel_fraction=MappingProxyType(dict(fractions)))
    return Fit(overhead, fractions, loss_of(tm, single, ("itl_ms",)), len(cal))


# ------------------------------------------------------------------------------------------- collectives


@dataclass(frozen=True)
class CollectiveFit:
    latency_s: float
    efficiency: float
    per_peer_s: float
    worst: float
    """Largest |relative error| over the points."""
    points: int


def _least_squares(rows: list[list[float]], ts: list[float]) -> list[float]:
    """Parameters p minimizing Σ((row · p − t) / t)²: the normal equations, by Gaussian elimination."""
    k = len(rows[0])
    m = [[sum(r[i] * r[j] / t / t for r, t in zip(rows, ts, strict=True)) for j in range(k)]
         + [sum(r[i] / t for r, t in zip(rows, ts, strict=True))] for i in range(k)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(k):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][k] / m[i][i] for i in range(k)]


Point = tuple[int, float, float]
"""(GPUs, message bytes, seconds): one published timing of a collective."""


def routed(cat: Catalog, eng: EngineCatalog, points: str, engine: str = "vLLM") -> dict[str, list[Point]]:
    """Each timing of an all-reduce entry by the path its engine's dispatch took for it: vLLM's timings were taken
    through its whole dispatch (AIConfigurator's collector times tensor_model_parallel_all_reduce), so on a chip its
    release's table covers (the time model's `allreduce_timed_under` policy), each point is the path the table gives
    it (`AllreduceTable.path`: "custom", "multimem", "symm-two-shot" or "nccl"), and only the "custom" ones time the
    custom all-reduce. Another engine's timings, or a chip no table covers, are all custom."""
    _, entry = _time_model_entry(cat)
    lat = cat.latencies[points]
    pts = [(n, float(s), t * 1e-6) for n, s, t in lat.points]
    pol = None if entry.allreduce_timed_under is None else eng.memory_policies[entry.allreduce_timed_under]
    table = None if pol is None or pol.engine != engine or lat.accelerator is None else \
        pol.allreduce_table(lat.accelerator)
    out: dict[str, list[Point]] = {"custom": [], "multimem": [], "symm-two-shot": [], "nccl": []}
    for n, size, sec in pts:
        out["custom" if table is None else table.path(n, size, entry.custom_allreduce_max_bytes)].append((n, size, sec))
    return out


def _points(cat: Catalog, points: str | None) -> list[Point]:
    return [] if points is None else [(n, float(s), t * 1e-6) for n, s, t in cat.latencies[points].points]


def fit_collectives(cat: Catalog) -> dict[str, CollectiveFit]:
    """Each algorithm's latency (and per-peer latency, NCCL) and share of the measured chip's per-direction
    scale-up bandwidth, fitted on its published timings: one-shot and two-shot custom all-reduce split as vLLM
    splits them (on the timings its dispatch gave the custom all-reduce: `routed`, with the forced two-stage
    timings), the symmetric-memory multimem (the message each way) and two-shot (2(n − 1)/n of it) on their own
    timings and the ones the dispatch gave them, NCCL's all-reduce (2(n − 1)/n of the message), the expert
    all-to-all (bytes sent)."""
    from snippets.data.export import engine_catalog

    eng = engine_catalog(cat)
    _, entry = _time_model_entry(cat)
    paths = routed(cat, eng, entry.custom_allreduce_points)
    out = _custom_allreduce_fits(cat, eng, entry.custom_allreduce_points, extra_two=_points(cat, entry.two_stage_points))
    b = _timed_bandwidth(cat, eng, entry.custom_allreduce_points)
    if entry.multimem_points is not None:
        out["multimem"] = _alpha_beta_fit([*_points(cat, entry.multimem_points), *paths["multimem"]],
                                          lambda n, s: s, b, False)
    if entry.symm_two_shot_points is not None:
        out["symm_two_shot"] = _alpha_beta_fit([*_points(cat, entry.symm_two_shot_points), *paths["symm-two-shot"]],
                                               lambda n, s: 2 * (n - 1) / n * s, b, False)
    out["nccl"] = _nccl_fit(cat, eng, entry.nccl_allreduce_points)
    a2a = [(n, s, t * 1e-6) for n, s, t in cat.latencies[entry.alltoall_points].points]
    out["alltoall"] = _alpha_beta_fit(a2a, lambda n, s: s, _timed_bandwidth(cat, eng, entry.alltoall_points), False)
    return out


def fit_chip_collectives(cat: Catalog) -> dict[str, dict[str, CollectiveFit]]:
    """Per `chip_collectives` entry of the scenario's time model (by its points' id): one-shot and two-shot fitted
    on that chip's own custom all-reduce timings, at its per-direction scale-up bandwidth, as `fit_collectives`
    fits the reference chip's; per `chip_nccl` entry, NCCL's factors on that chip's NCCL timings likewise."""
    from snippets.data.export import engine_catalog, one_stage_limits

    eng = engine_catalog(cat)
    _, entry = _time_model_entry(cat)
    out = {cc.points: _custom_allreduce_fits(cat, eng, cc.points,
                                             one_stage_limits(cc, entry.custom_allreduce_max_bytes) or ONE_SHOT_LIMITS,
                                             engine=cc.engine)
           for cc in entry.chip_collectives}
    step = entry.collectives.nccl.per_peer
    out.update({cn.points: {"nccl": _nccl_fit(cat, eng, cn.points, None if step is None else step.seconds)}
                for cn in entry.chip_nccl})
    return out


def _timed_bandwidth(cat: Catalog, eng: EngineCatalog, points: str) -> Callable[[int], float]:
    """The per-direction bandwidth each GPU of a group of n had where a collective's timings (`points`) were taken:
    its chip's scale-up fabric as its node wires it (`topology.group_fabric_bandwidth`: the whole of it on a
    switched node, n − 1 of its links on a full mesh), the same that prices the collective on that chip."""
    acc = cat.latencies[points].accelerator
    assert acc is not None  # noqa: S101 - a collective's timings name their chip (the data checks)
    chip, node = eng.chips[acc], eng.node_of(acc)
    assert chip.scale_up_bytes_per_s is not None and node is not None  # noqa: S101 - timed inside one node's fabric
    return lambda n: group_fabric_bandwidth(node, chip, n)


def _custom_allreduce_fits(cat: Catalog, eng: EngineCatalog, points: str,
                           limits: tuple[tuple[int, float], ...] = ONE_SHOT_LIMITS, *, engine: str = "vLLM",
                           extra_two: Sequence[Point] = ()) -> dict[str, CollectiveFit]:
    """One-shot and two-shot fitted on a custom all-reduce's timings (those its engine's dispatch gave it: `routed`),
    each point on the algorithm its kernel picks for it (`one_shot_applies` by `limits`: vLLM's unless the entry
    states its own), `extra_two` (timings forced to two stages) with the two-stage ones; two-shot only where two or
    more points fall to it (timings of two GPUs, which run one stage at every size, give none)."""
    b = _timed_bandwidth(cat, eng, points)
    car = routed(cat, eng, points, engine)["custom"]
    two = [x for x in car if not one_shot_applies(x[0], x[1], limits)] + list(extra_two)
    out = {"one_shot": _alpha_beta_fit([x for x in car if one_shot_applies(x[0], x[1], limits)],
                                       lambda n, s: (n - 1) * s, b, False)}
    if len(two) >= 2:
        out["two_shot"] = _alpha_beta_fit(two, lambda n, s: 2 * (n - 1) / n * s, b, False)
    return out


def _nccl_fit(cat: Catalog, eng: EngineCatalog, points: str, per_peer_s: float | None = None) -> CollectiveFit:
    """NCCL's all-reduce factors (a latency step per GPU beyond two) fitted on its timings. Timings of one group
    size cannot tell the step from the latency: there `per_peer_s` (the reference fit's step) is taken, and the
    latency is what the points' fixed time leaves once that group's steps are in."""
    pts = [(n, s, t * 1e-6) for n, s, t in cat.latencies[points].points]
    moved, b = (lambda n, s: 2 * (n - 1) / n * s), _timed_bandwidth(cat, eng, points)
    sizes = {n for n, *_ in pts}
    if len(sizes) > 1:
        return _alpha_beta_fit(pts, moved, b, True)
    if per_peer_s is None:
        raise ValueError(f"{points}: timings of one group size need the reference fit's step per GPU")
    f = _alpha_beta_fit(pts, moved, b, False)
    (n,) = sizes
    return replace(f, latency_s=f.latency_s - (n - 2) * per_peer_s, per_peer_s=per_peer_s)


def _alpha_beta_fit(pts: list[tuple[int, float, float]], moved: Callable[[int, float], float],
                    b: Callable[[int], float], per_peer: bool) -> CollectiveFit:
    """Latency (and per-peer latency) and share of the group's bandwidth `b(n)` fitted on `pts` (GPUs, bytes,
    seconds), least squares on relative error."""
    rows = [[1.0] + ([float(n - 2)] if per_peer else []) + [moved(n, s) / b(n)] for n, s, _ in pts]
    ts = [t for *_, t in pts]
    p = _least_squares(rows, ts)
    pred = [sum(x * y for x, y in zip(r, p, strict=True)) for r in rows]
    worst = max(abs(q - t) / t for q, t in zip(pred, ts, strict=True))
    return CollectiveFit(p[0], 1 / p[-1], p[1] if per_peer else 0.0, worst, len(pts))


# ------------------------------------------------------------------------------------------- bands


def band_errors(rs: Iterable[Row]) -> list[tuple[str, bands_mod.Regime, float]]:
    out = []
    for r in rs:
        for metric in METRICS:
            e = r.error(metric)
            if e is not None:
                out.append((BAND_METRIC[metric], r.regime(metric), e))
    return out


def band_table(eng: EngineCatalog, measurements: Mapping[str, Measurement],
               tm: TimeModelSpec | None = None) -> tuple[bands_mod.BandEntry, ...]:
    """The error bands by regime from the test rows alone, predicted by `eng` under `tm` (a time model without
    bands yet: a band never feeds back into a prediction). Rows served in another mode (disaggregated, speculative,
    a repeated prefix) are reported apart and make no band: a band is the aggregated time model's."""
    tests = [(k, m) for k, m in measurements.items() if m.role == "test" and m.mode.plain]
    return bands_mod.table(band_errors(predict_rows(eng, tests, tm)[0]))


def summary(rs: list[Row], metric: str) -> tuple[float, float, int] | None:
    """Median and worst absolute error of `metric` over the rows that measure it, and how many do."""
    errs = [abs(e) for r in rs if (e := r.error(metric)) is not None]
    if not errs:
        return None
    return statistics.median(errs), max(errs), len(errs)


def by_regime(rs: list[Row]) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """(regime label, metric) -> median |error|, signed median error, worst |error|, rows."""
    errs: dict[tuple[str, str], list[float]] = {}
    for r in rs:
        for metric in METRICS:
            e = r.error(metric)
            if e is not None:
                errs.setdefault((r.regime(metric).label, metric), []).append(e)
    return {k: (statistics.median(abs(x) for x in v), statistics.median(v), max(abs(x) for x in v), len(v))
            for k, v in sorted(errs.items())}


def inside_band(rs: list[Row]) -> tuple[int, int]:
    """Of the rows' measured figures, how many fall inside their prediction's band, and how many there are."""
    inside = total = 0
    for r in rs:
        p = r.prediction
        for metric, band in (("ttft_ms", p.ttft_band), ("itl_ms", p.tpot_band),
                             ("output_tokens_per_s", p.throughput_band)):
            m = r.measured(metric)
            if m is None:
                continue
            lo, hi = band.around(r.predicted(metric))
            total += 1
            inside += lo <= m <= hi
    return inside, total


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    cat = load()
    f = fit(cat)
    print(f"fit on {f.rows} rows: step_overhead {f.step_overhead_s * 1e3:.3f} ms, vendor kernel fractions "
          f"{dict(f.vendor_kernel_fraction) or 'none fitted'} (loss {f.loss:.5f})")
    for name, c in fit_collectives(cat).items():
        print(f"collective {name}: latency {c.latency_s * 1e6:.2f} us + {c.per_peer_s * 1e6:.2f} us per peer, "
              f"efficiency {c.efficiency:.3f}, worst |error| {c.worst:.0%} over {c.points} points")
    for points, fits in fit_chip_collectives(cat).items():
        for name, c in fits.items():
            print(f"collective {name} on {points}: latency {c.latency_s * 1e6:.2f} us + {c.per_peer_s * 1e6:.2f} us "
                  f"per peer, efficiency {c.efficiency:.3f}, worst |error| {c.worst:.0%} over {c.points} points")
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
        n_in, n = inside_band(rs)
        print(f"{role:11} predicted {len(rs)}, not predicted {len(skip)}; inside their band: {n_in} of {n}")
    tm = engine_catalog(cat).time_models[_time_model_entry(cat)[0]]
    for b in tm.bands:
        print(f"band {b.metric:20} {b.vendor}, {'MoE' if b.moe else 'dense'}, {b.phase}: "
              f"{b.low:+.0%} to {b.high:+.0%} over {b.rows} test rows")


if __name__ == "__main__":
    main()
