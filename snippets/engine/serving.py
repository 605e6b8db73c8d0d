"""Serving: how steps make time to first token, time per output token and throughput.

Aggregated serving, as vLLM's v1 scheduler runs it (`Scheduler.schedule`): every step first gives each running
sequence its next token, then fills what is left of `max_num_batched_tokens` with prompt chunks, first come
first served; a request is admitted while fewer than `max_num_seqs` run and the KV cache holds it.

With `concurrency` requests kept in flight (a closed loop: each finished request is replaced at once):

- **Admission**: at most `Deployment.max_concurrency`-style limits decode at once: the sequences of the
  request's length the KV pool holds, and `max_num_seqs` per data-parallel rank (from the memory policy, when
  it records one). The rest wait for a slot (`queue_s`).
- **Steps**: of the admitted requests, those past their prompt decode one token per step. Prompts arrive at
  the rate requests finish; their tokens ride in the same steps, a chunk of at most the budget left after the
  decode tokens. A request's prefill is its chunks' steps (`prefill_s`); a step carrying a chunk takes longer
  for everyone decoding in it, so the time per output token a request sees is the mean of plain decode steps
  and the steps carrying the other requests' chunks.
- **Queueing**: a prompt waits for the prompts ahead of it (an M/D/1 wait at the load the prefills put on the
  replica) before its own chunks; a request beyond the admitted ones waits for a slot.
- **Pipeline parallelism**: the decoding sequences are split into one micro-batch per stage; each step of a
  micro-batch passes every stage.

`predict` solves that steady state (a few fixed-point passes) and carries the band of each figure
(`snippets.engine.bands`). Disaggregated prefill/decode and speculative decoding build on `admitted`,
`mixed_step` and `Batch.query_per_seq`; they are not modelled here. Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from snippets.engine import bands as bands_mod
from snippets.engine.deployment import Deployment
from snippets.engine.step import Batch, Prep, Step, prepare, run

FIXED_POINT_PASSES = 4
PREFILL_LOAD_CAP = 0.95
"""The prefill queue's load is capped below 1 (an M/D/1 wait diverges at 1)."""
SATURATION = 0.9
"""Decode is "at saturation" once the admitted sequences reach this share of what the replica admits."""


def kv_sequences(d: Deployment, tokens: int) -> int:
    """Sequences of `tokens` tokens the KV pool holds, all data-parallel ranks together."""
    return d.kv_sequences(tokens)


def max_num_seqs(d: Deployment) -> int:
    """The engine's cap on sequences in flight per data-parallel rank (the memory policy's, resolved per chip)."""
    return d.setting.memory_policy.max_num_seqs


def token_budget(d: Deployment) -> int:
    """Tokens one step may compute per data-parallel rank (`max_num_batched_tokens`)."""
    return d.setting.memory_policy.max_num_batched_tokens


def admitted(d: Deployment, tokens: int) -> int:
    """Sequences of `tokens` tokens that may run at once: the KV cache's and `max_num_seqs`' limit."""
    return min(kv_sequences(d, tokens), max_num_seqs(d) * d.layout.dp)


def mixed_step(d: Deployment, decoding: int, context: float, chunk: int, chunk_context: float,
               finishing: int = 0, prep: Prep | None = None) -> Step:
    """One step of `decoding` sequences (one micro-batch per pipeline stage) and a prompt chunk."""
    micro = math.ceil(decoding / d.layout.pp) if decoding else 0
    return run(d, Batch(decode_seqs=micro, decode_context=context, prefill_tokens=chunk,
                        prefill_context=chunk_context, prefill_finishing=finishing),
               "decode" if decoding else "prefill", prep)


def chunks(n_in: int, budget: int | None) -> list[tuple[int, int]]:
    """(chunk tokens, tokens before it) of a prompt split into the step budget left for it."""
    if budget is None or budget >= n_in:
        return [(n_in, 0)]
    out, done = [], 0
    while done < n_in:
        c = min(budget, n_in - done)
        out.append((c, done))
        done += c
    return out


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the model predicts for a deployment at a concurrency and request shape."""

    concurrency: int
    in_flight: int
    """Sequences admitted at once: the concurrency, or as many as the KV cache and `max_num_seqs` allow."""
    input_tokens: int
    output_tokens: int
    prefill_s: float
    """One request's prompt through its chunks' steps, alongside the others' decoding."""
    prefill_load: float
    """Share of the replica's steps that carry a prompt chunk (ρ of the prefill queue)."""
    queue_s: float
    """Average wait for a slot when more requests are in flight than the replica admits."""
    prefill_wait_s: float
    """Average wait behind other prompts (M/D/1)."""
    ttft_s: float
    """Time to first token: the wait for a slot, the wait behind other prompts, the prompt's own steps."""
    tpot_s: float
    """Time per output token after the first, as a decoding request sees it."""
    decode: Step
    """One decode step of the decoding sequences (a micro-batch per stage), no prompt chunk."""
    prefill: Step
    """The request's first prompt chunk, with the decoding sequences alongside."""
    output_tokens_per_s: float
    """All sequences of the replica together."""
    gpus: int
    cost_per_replica_hour: float | None
    regime: str
    """The regime of the decode figures (vendor; dense or MoE; decode at low load or at saturation)."""
    ttft_regime: str
    tpot_band: bands_mod.Band
    ttft_band: bands_mod.Band
    throughput_band: bands_mod.Band

    @property
    def output_tokens_per_s_per_gpu(self) -> float:
        return self.output_tokens_per_s / self.gpus

    @property
    def input_tokens_per_s(self) -> float:
        return self.output_tokens_per_s * self.input_tokens / self.output_tokens

    @property
    def usd_per_mtok_output(self) -> float | None:
        c = self.cost_per_replica_hour
        return None if c is None else c / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def usd_per_mtok_input(self) -> float | None:
        """The rent divided over prompt tokens when the replica only prefilled, one prompt after another."""
        c = self.cost_per_replica_hour
        return None if c is None else c / (self.input_tokens / self.prefill_s * 3600) * 1e6

    @property
    def breakdown(self) -> dict[str, float]:
        """One decode step's seconds by kind of op."""
        return self.decode.breakdown

    @property
    def tpot_range(self) -> tuple[float, float]:
        return self.tpot_band.around(self.tpot_s)

    @property
    def ttft_range(self) -> tuple[float, float]:
        return self.ttft_band.around(self.ttft_s)

    @property
    def throughput_range(self) -> tuple[float, float]:
        return self.throughput_band.around(self.output_tokens_per_s)


def _steady(b: int, n_out: int, dec: float, prefill: float, extra: float,
            shared: bool) -> tuple[float, float, float, float]:
    """(lifetime, time per output token, prefill wait, prefill load) of `b` requests kept in flight.

    A request lives L = W + P + D: W waiting behind other prompts, P its own prompt's steps, D its n_out − 1
    decode steps. Prompts start at λ = b / L; the other b − 1 requests' prompts land in a decoding request's
    window at λ (b − 1)/b, each adding `extra` to the steps it shares, so D = (n_out − 1) dec / (1 − λ extra
    (b − 1)/b). W is M/D/1's wait at load ρ = λ P (or half a step when several prompts share a step). The
    lifetime cannot fall below b P (every prompt takes its turn) nor leave the decoding no time; between those
    bounds L − f(L) rises, so bisection finds the one steady state."""
    def f(life: float) -> tuple[float, float, float, float]:
        lam = b / life
        busy = lam * extra * (b - 1) / b
        d_win = (n_out - 1) * dec / max(1e-9, 1 - busy)
        rho = lam * prefill if b > 1 else 0.0
        if b <= 1:
            w = 0.0
        elif shared:
            w = dec / 2
        else:
            w = prefill * rho / (2 * (1 - rho)) if rho < 1 else math.inf
        return w + prefill + d_win, d_win / max(1, n_out - 1), w, rho

    lo = max(prefill + (n_out - 1) * dec, b * prefill if b > 1 and not shared else 0.0,
             extra * (b - 1) if b > 1 else 0.0) * (1 + 1e-9)
    hi = max(lo * 2, f(lo * 2)[0])
    while f(hi)[0] > hi:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid - f(mid)[0] > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-6 * hi:
            break
    life = hi
    _, tpot, w, rho = f(life)
    return life, (tpot if n_out > 1 else dec), w, rho


def _regimes(d: Deployment, saturated: bool) -> tuple[bands_mod.Regime, bands_mod.Regime]:
    moe = d.setting.model.arch.moe is not None
    vendor = d.setting.chip.vendor
    phase = "decode at saturation" if saturated else "decode at low load"
    return bands_mod.Regime(vendor, moe, phase), bands_mod.Regime(vendor, moe, "prefill")


def predict(d: Deployment, concurrency: int | None = None, input_tokens: int | None = None,
            output_tokens: int | None = None) -> Prediction:
    """TTFT, time per output token, throughput and cost per token of `d` with `concurrency` requests kept in
    flight (default: the scenario's), each `input_tokens` + `output_tokens` long (default: the scenario's)."""
    sc = d.setting.scenario
    c = sc.concurrency if concurrency is None else concurrency
    n_in = sc.input_tokens if input_tokens is None else input_tokens
    n_out = sc.output_tokens if output_tokens is None else output_tokens
    if min(c, n_in, n_out) < 1:
        raise ValueError("concurrency, input and output tokens must be at least 1")
    cap = admitted(d, n_in + n_out)
    if cap < 1:
        raise ValueError(f"{d.layout.label}: not one sequence of {n_in + n_out} tokens fits the KV cache")
    b = min(c, cap)
    dp = d.layout.dp
    per_rank_budget = token_budget(d)
    ctx = n_in + n_out / 2
    # steady state: for a decoding set of `bd` sequences, the lifetime L of a request solves L = f(L)
    # (f falls as L grows), found by bisection; bd itself is the decoding share of b at that L
    decoding = float(b)
    dec_step = pre_step = None
    tpot = prefill_s = wait = rho = lifetime = 0.0
    prep = prepare(d)
    seen: set[int] = set()
    for _ in range(FIXED_POINT_PASSES):
        bd = max(1, round(decoding))
        if bd in seen:  # the decoding set no longer moves
            break
        seen.add(bd)
        left = max(1, per_rank_budget - math.ceil(bd / dp)) * dp
        dec_step = mixed_step(d, bd, ctx, 0, 0, prep=prep)
        alongside = bd if b > 1 else 0
        steps = [mixed_step(d, alongside, ctx, ck, before, finishing=1 if before + ck == n_in else 0, prep=prep)
                 for ck, before in chunks(n_in, left)]
        pre_step = steps[0]
        prefill_s = sum(x.total_s for x in steps)
        extra = sum(x.total_s - dec_step.total_s for x in steps)  # what a prompt's steps cost the decoding ones
        shared = b > 1 and left is not None and n_in <= left / 2  # several prompts fit one step
        lifetime, tpot, wait, rho = _steady(b, n_out, dec_step.total_s, prefill_s, max(0.0, extra), shared)
        decoding = b * (n_out - 1) * tpot / lifetime if n_out > 1 else 1.0
    assert dec_step is not None and pre_step is not None  # noqa: S101 - the loop ran
    throughput = b * n_out / lifetime
    queue = (c - b) * lifetime / b if c > b else 0.0
    saturated = c >= cap or b >= SATURATION * cap
    dec_regime, pre_regime = _regimes(d, saturated)
    table = d.setting.time_model.bands
    return Prediction(
        concurrency=c, in_flight=b, input_tokens=n_in, output_tokens=n_out, prefill_s=prefill_s,
        prefill_load=rho, queue_s=queue, prefill_wait_s=wait, ttft_s=queue + wait + prefill_s, tpot_s=tpot,
        decode=dec_step, prefill=pre_step, output_tokens_per_s=throughput, gpus=d.gpus,
        cost_per_replica_hour=d.cost_per_replica_hour, regime=dec_regime.label, ttft_regime=pre_regime.label,
        tpot_band=bands_mod.band(table, "tpot_ms", dec_regime),
        ttft_band=bands_mod.band(table, "ttft_ms", pre_regime),
        throughput_band=bands_mod.band(table, "output_tokens_per_s", dec_regime),
    )
