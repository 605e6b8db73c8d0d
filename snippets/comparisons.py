"""The serving modes against published ratios: what disaggregation, speculative decoding and a prefix cache bought
in a published run, beside what the engine predicts they buy in the same configurations.

A row of data/measurements.yaml gives a ratio in one of two ways: a `speedup` it states (against the same
deployment without its mode), or a `baseline` row measured beside it, whose figures divide its own. The engine
predicts the same ratio from the same two configurations (`snippets.engine.serving`, `snippets.engine.search`):

- speculative decoding: the row's layout and load with and without its draft (its acceptance as the row states
  it); the ratio of output tokens per second, or of tokens per second per user (1 ÷ TPOT);
- a repeated prefix: the row's configuration at its hit rate against its baseline's without;
- disaggregation: the most output tokens per second per GPU of the disaggregated configurations that fit the run's
  GPUs, against the aggregated ones', both meeting the pages' default objective (the source's own latency limits
  are in a figure, not in its text).

Where a row states no request lengths, the engine runs the `chat` scenario's (said in the row's `basis`). Test
rows only, reported apart, never fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.calibration import SCENARIO, speculation_of
from snippets.data import Catalog, Measurement
from snippets.engine import Deployment, Layout, deploy, setting
from snippets.engine.search import search
from snippets.engine.serving import Prediction, predict
from snippets.engine.specs import EngineCatalog

SHAPE = "chat"
"""The scenario whose request lengths stand in where a row states none."""


@dataclass(frozen=True)
class Comparison:
    """One published ratio beside the engine's."""

    id: str
    measurement: Measurement
    what: str
    """The ratio in words: "output tokens/s, EAGLE-3 ÷ without"."""
    measured: float
    bound: str
    """exact, up-to or at-least: how the source gives the ratio."""
    predicted: float | None
    basis: str
    """How the engine's ratio was computed (the configurations), or why there is none."""

    @property
    def error(self) -> float | None:
        """(predicted − measured) ÷ measured; None without a prediction."""
        return None if self.predicted is None else (self.predicted - self.measured) / self.measured

    @property
    def consistent(self) -> bool | None:
        """Whether the prediction agrees with a bound ("at least 2x": predicted at or above 2x); None if exact."""
        if self.predicted is None or self.bound == "exact":
            return None
        return self.predicted >= self.measured if self.bound == "at-least" else self.predicted <= self.measured


def _lengths(eng: EngineCatalog, m: Measurement) -> tuple[int, int, str]:
    if m.input_tokens is not None and m.output_tokens is not None:
        return m.input_tokens, m.output_tokens, ""
    sc = eng.scenarios[SHAPE]
    return sc.input_tokens, sc.output_tokens, (f"; the source states no lengths: {sc.input_tokens:,} in and "
                                               f"{sc.output_tokens:,} out, the {SHAPE} scenario's")


def _deployment(eng: EngineCatalog, m: Measurement, n_in: int, n_out: int) -> Deployment:
    st = setting(eng, m.model, m.precision, SCENARIO, accelerator=m.accelerator, concurrency=1,
                 context_tokens=n_in + n_out, kv_precision=m.kv_precision, max_num_seqs=m.concurrency,
                 keeps_16bit=m.keeps_16bit)
    if m.layout is None:
        return deploy(st)
    lay = m.layout
    return deploy(st, Layout(lay.tp, lay.pp, lay.ep, lay.dp))


def _with_mode(eng: EngineCatalog, m: Measurement, n_in: int, n_out: int, *, mode: bool) -> tuple[Prediction, str]:
    d = _deployment(eng, m, n_in, n_out)
    c = m.concurrency or 1
    hit = 0.0 if not mode or m.mode.prefix_cache is None else m.mode.prefix_cache.hit_rate
    spec = speculation_of(m) if mode else None
    load = f"{c:,} in flight" if m.concurrency is not None else "one request (the source states no load)"
    return predict(d, c, n_in, n_out, speculation=spec, prefix_hit=hit), f"{d.layout.label}, {load}"


def _speculative(eng: EngineCatalog, rid: str, m: Measurement) -> Comparison:
    assert m.speedup is not None  # noqa: S101 - the caller's filter
    n_in, n_out, note = _lengths(eng, m)
    what = {"output-throughput": "output tokens/s", "tokens-per-s-per-user": "tokens/s per user",
            "throughput-per-gpu": "output tokens/s per GPU"}[m.speedup.of]
    label = f"{what}, {m.mode.label} ÷ without"
    spec = speculation_of(m)
    if spec is None:
        return Comparison(rid, m, label, m.speedup.value, m.speedup.bound, None,
                          "the source states no acceptance for the draft")
    plain, where = _with_mode(eng, m, n_in, n_out, mode=False)
    fast, _ = _with_mode(eng, m, n_in, n_out, mode=True)
    ratio = (plain.tpot_s / fast.tpot_s if m.speedup.of == "tokens-per-s-per-user"
             else fast.output_tokens_per_s / plain.output_tokens_per_s)
    return Comparison(rid, m, label, m.speedup.value, m.speedup.bound, ratio,
                      f"{where}, {fast.tokens_per_step:.2f} tokens a verify step{note}")


def _disaggregated(eng: EngineCatalog, rid: str, m: Measurement) -> Comparison:
    assert m.speedup is not None  # noqa: S101 - the caller's filter
    label = "output tokens/s per GPU, disaggregated ÷ aggregated"
    gpus = m.gpu_count
    if m.input_tokens is None or m.output_tokens is None or gpus is None:
        return Comparison(rid, m, label, m.speedup.value, m.speedup.bound, None,
                          "the source states neither the output length nor the pools' layouts")
    sc = eng.scenarios[SCENARIO]
    ttft, tpot = (None if x is None else x * 1e3 for x in (sc.ttft_s, sc.tpot_s))
    s = search(eng, m.model, m.precision, m.accelerator, m.input_tokens, m.output_tokens, ttft_ms=ttft, tpot_ms=tpot,
               max_gpus=gpus, kv_precision=m.kv_precision)
    met = [p for p in s.points if s.targets.met(p.ttft_s, p.tpot_s)]
    best = {mode: max((p for p in met if p.mode == mode), key=lambda p: p.per_gpu, default=None)
            for mode in ("aggregated", "disaggregated")}
    agg, dis = best["aggregated"], best["disaggregated"]
    if agg is None or dis is None:
        return Comparison(rid, m, label, m.speedup.value, m.speedup.bound, None,
                          f"no {'aggregated' if agg is None else 'disaggregated'} configuration of at most {gpus} GPUs "
                          "meets the default objective")
    return Comparison(rid, m, label, m.speedup.value, m.speedup.bound, dis.per_gpu / agg.per_gpu,
                      f"at most {gpus} GPUs, TTFT at most {ttft:,.0f} ms and TPOT {tpot:,.0f} ms: {dis.label} "
                      f"against {agg.label}")


def _baseline(eng: EngineCatalog, rid: str, m: Measurement, base: Measurement) -> list[Comparison]:
    out = []
    n_in, n_out, note = _lengths(eng, m)
    b_in, b_out, _ = _lengths(eng, base)
    fast, where = _with_mode(eng, m, n_in, n_out, mode=True)
    plain, _ = _with_mode(eng, base, b_in, b_out, mode=False)
    if fast.speculation is not None:
        where += f", {fast.tokens_per_step:.2f} tokens a verify step"
    for metric, what, pred in (("throughput", "output tokens/s", fast.output_tokens_per_s / plain.output_tokens_per_s),
                               ("ttft_ms", "TTFT", fast.ttft_s / plain.ttft_s),
                               ("itl_ms", "TPOT", fast.tpot_s / plain.tpot_s)):
        mine, theirs = getattr(m, metric), getattr(base, metric)
        if mine is None or theirs is None:
            continue
        out.append(Comparison(rid, m, f"{what}, {m.mode.label} ÷ without", mine / theirs, "exact", pred,
                              f"{where}{note}"))
    return out


def comparisons(cat: Catalog, eng: EngineCatalog | None = None) -> list[Comparison]:
    """Every published ratio of a mode in data/measurements.yaml, beside the engine's."""
    from snippets.data.export import engine_catalog

    eng = eng or engine_catalog(cat)
    out: list[Comparison] = []
    for rid, m in cat.measurements.items():
        if m.mode.plain:
            continue
        if m.speedup is not None:
            out.append(_disaggregated(eng, rid, m) if m.mode.serving == "disaggregated" else _speculative(eng, rid, m))
        if m.baseline is not None:
            out += _baseline(eng, rid, m, cat.measurements[m.baseline])
    return out
