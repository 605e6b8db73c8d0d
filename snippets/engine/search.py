"""Search: the configurations that serve a model on an accelerator, the throughput–interactivity frontier among
them, and the cheapest one that meets a latency target. Standard library only (the calculator runs it).

A **candidate** is a way to serve `input_tokens` + `output_tokens` requests, predicted by the serving layer
(`snippets.engine.serving`), never re-derived here:

- **aggregated**: a replica on a layout the engines accept (`layouts`: every TP degree in the node, for a
  mixture-of-experts model also with expert parallelism and with data-parallel attention, each with the fewest
  pipeline stages that hold it, a shape narrower than the widest one that needs stages left out), with
  `concurrency` requests kept in flight (`serving.predict`);
- **disaggregated**: prefill workers on one layout handing their KV cache to decode workers on another, the
  decode workers at a batch, as many prefill workers as keep up with them (and meet the TTFT target), over the
  link that joins the pools (`serving.combine`);
- each with speculative decoding where the caller gives a draft and its acceptance rate, and without; a prefix
  hit rate applies to all.

Each point carries its throughput per GPU (output tokens/s ÷ the GPUs it runs on), its interactivity (tokens/s a
user sees, 1 ÷ TPOT), TTFT, TPOT, GPUs, rent and $ per million output tokens, with the bands of the time model.

- `frontier`: the points no other point beats on both throughput per GPU and interactivity (among those that
  meet the TTFT target, when one is given): what a deployment can trade between cost and speed.
- `cheapest`: the point of lowest cost per output token (rented GPU-hours per token, which with one price per
  accelerator is lowest $ per million tokens) that meets the TTFT and TPOT targets; with a request rate, the
  replicas (or prefill and decode workers) and rented GPUs that carry it, and $ per hour. When nothing meets the
  targets, `why` names the target that binds and by how much.
- `recommended`: what the site would deploy (`recommend`): the cheapest aggregated configuration meeting the
  targets, unless the cheapest disaggregated one costs at least the layout policy's `disaggregation.min_saving` less
  per token (data/policies.yaml: two pools, a KV transfer path and a router cost what a price per token does not
  show). The cheapest stays the cheapest: claims about what a target costs are about it.

Pruning makes it fast, not a coarser grid: TTFT and TPOT rise with concurrency up to what the KV cache admits (no
point beyond it is tried), so a layout's one-request point and its fullest point bound the frontier's sweep of it,
and a layout that misses the TPOT target alone misses it at every load. The cheapest point is exact: the largest
load (or decode batch) meeting the targets is found by bisection; throughput does not always rise with the load up
to there (it dips where an all-reduce changes algorithm or a step outgrows the CUDA graphs), so the load of most
throughput below it is found by branch and bound (`_peak`), which needs only that a step's time never falls as the
batch grows. Disaggregated, every number of decode workers (1 to `MAX_DECODE_WORKERS`) and of prefill workers is
tried at the batch that suits it (`_cheapest_pair`), cut off where its GPUs alone would cost more than the cheapest
found; prefill layouts that another beats on prompt time, time per prompt, GPUs and KV bytes to send are dropped.
Tightening a target therefore never makes the cheapest point cheaper.

`meet` says what must fall within the targets: the prediction (`prediction`, the default), or the slow edge of its
error band (`band`: the slow end of the range the regime's test measurements fell in for 80 % of them,
`Band.around`), for a reader who needs the target held where the time model has run fast against measurements
before. The band depends on the regime, which for time per output token changes with the load; the search takes
the slower edge of the two decode regimes at every load, so a configuration it finds meets the target at its own
band's edge, whatever its load. That is the search at targets divided by each metric's `margins`, and reported at
the targets as asked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from snippets.engine import bands as bands_mod
from snippets.engine.deployment import Deployment, NoLayout, RefusedLayout, Setting, deploy, setting
from snippets.engine.layout import Layout, layout_problems, tp_degrees
from snippets.engine.serving import (
    PREFILL_LOAD_CAP,
    DecodePool,
    DisaggPrediction,
    Draft,
    Prediction,
    PrefillPool,
    Speculation,
    at_rate,
    combine,
    decode_pool,
    disaggregated_at_rate,
    draft_of,
    kv_transfer,
    predict,
    prefill_pool,
    prefill_wait,
    rented_share,
)
from snippets.engine.specs import EngineCatalog
from snippets.engine.step import Prep, prepare

_T = TypeVar("_T")

MODES = ("aggregated", "disaggregated", "any")
MEETS = ("prediction", "band")
"""What must fall within the targets (`search`'s `meet`): the prediction, or the slow edge of its error band."""
MAX_DECODE_WORKERS = 8
"""Decode workers a disaggregated configuration is tried with (1 to this), each with the fewest prefill workers that
keep up with them and meet the TTFT target: the ratio of prefill to decode workers follows."""
MAX_NODES = 8
"""A replica (one worker) spans at most this many nodes: the fewest pipeline stages that hold the model are tried,
up to there."""
MAX_EXPERT_DATA_PARALLEL = 8
"""Data-parallel attention ranks tried with expert parallelism (2, 4, ... up to this, within one node)."""


def concurrencies(cap: int) -> list[int]:
    """The frontier's loads: 1, 2, 3, 4, 6, 8, 12, 16, ... (powers of two and half again between) below `cap`,
    and `cap` itself, the most the replica admits."""
    out: set[int] = {cap}
    n = 1
    while n < cap:
        out.add(n)
        if n >= 2 and n * 3 // 2 < cap:
            out.add(n * 3 // 2)
        n *= 2
    return sorted(x for x in out if 1 <= x <= cap)


@dataclass(frozen=True, slots=True)
class Targets:
    """A service-level objective: time to first token and time per output token, in seconds (None: no limit)."""

    ttft_s: float | None = None
    tpot_s: float | None = None

    def __post_init__(self) -> None:
        for name, v in (("TTFT", self.ttft_s), ("TPOT", self.tpot_s)):
            if v is not None and not v > 0:
                raise ValueError(f"the {name} target must be positive, not {v}")

    def ttft_met(self, ttft_s: float) -> bool:
        return self.ttft_s is None or ttft_s <= self.ttft_s

    def met(self, ttft_s: float, tpot_s: float) -> bool:
        return self.ttft_met(ttft_s) and (self.tpot_s is None or tpot_s <= self.tpot_s)

    def excess(self, ttft_s: float, tpot_s: float) -> dict[str, float]:
        """Each target's measured ÷ target ratio (above 1: missed)."""
        out = {}
        if self.ttft_s is not None:
            out["ttft_ms"] = ttft_s / self.ttft_s
        if self.tpot_s is not None:
            out["tpot_ms"] = tpot_s / self.tpot_s
        return out


Word = str | tuple[str, int]
"""A piece of a configuration's words (`configuration_words`): text, or a count by its key."""
COUNTS = ("prefill_workers", "decode_workers", "in_flight", "replicas")
"""The keys of a configuration's counts: its prefill and decode workers (disaggregated), the requests in flight on
the replica (aggregated) or on each decode worker (disaggregated), and a plan's replicas (`Served.words`)."""


def configuration_words(mode: str, layout: str, in_flight: int, *, prefill_layout: str = "",
                        prefill_workers: int = 0, decode_workers: int = 0, speculation: str = "") -> tuple[Word, ...]:
    """A configuration in words, each count apart as (key, count) so a page can show it as a figure; `layout` is the
    replica's (aggregated) or the decode workers' layout, `in_flight` the requests in flight on the replica or on
    each decode worker, `speculation` the draft's label (`Speculation.label`, "" without one)."""
    spec: tuple[Word, ...] = (f", speculative ({speculation})",) if speculation else ()
    requests = " request in flight" if in_flight == 1 else " requests in flight"
    if mode == "aggregated":
        return ("aggregated ", layout, ", ", ("in_flight", in_flight), requests, *spec)
    if mode != "disaggregated":
        raise ValueError(f"a configuration is aggregated or disaggregated, not {mode!r}")
    return ("disaggregated ", ("prefill_workers", prefill_workers), f" × {prefill_layout} prefill, ",
            ("decode_workers", decode_workers), f" × {layout} decode, ", ("in_flight", in_flight),
            f"{requests} on each decode worker", *spec)


def words_text(words: Iterable[Word]) -> str:
    """A configuration's words as plain text, each count with thousands separators (1,024)."""
    return "".join(w if isinstance(w, str) else f"{w[1]:,}" for w in words)


@dataclass(frozen=True)
class Point:
    """One configuration and what the serving layer predicts for it."""

    prediction: Prediction | DisaggPrediction
    deployment: Deployment
    """The replica (aggregated) or a decode worker (disaggregated)."""
    rented_gpus: float
    """Rented GPUs this configuration carries, rental units filled with copies of it (the divisor of its cost)."""
    usd_per_gpu_hour: float | None
    prefill_layout: Layout | None = None

    @property
    def mode(self) -> str:
        return self.prediction.mode

    @property
    def layout(self) -> Layout:
        """The replica's layout (aggregated) or the decode workers' (disaggregated)."""
        return self.deployment.layout

    @property
    def speculation(self) -> Speculation | None:
        p = self.prediction
        return p.speculation if isinstance(p, Prediction) else p.decode.speculation

    @property
    def concurrency(self) -> int:
        """Requests in flight: a replica's (aggregated), or the whole configuration's (disaggregated, by Little's
        law: the rate times the time a request spends)."""
        p = self.prediction
        return p.in_flight if isinstance(p, Prediction) else max(1, round(p.in_flight))

    @property
    def gpus(self) -> int:
        return self.prediction.gpus

    @property
    def ttft_s(self) -> float:
        return self.prediction.ttft_s

    @property
    def tpot_s(self) -> float:
        return self.prediction.tpot_s

    @property
    def output_tokens_per_s(self) -> float:
        return self.prediction.output_tokens_per_s

    @property
    def per_gpu(self) -> float:
        """Output tokens per second per GPU."""
        return self.prediction.output_tokens_per_s / self.prediction.gpus

    @property
    def per_user(self) -> float:
        """Interactivity: output tokens per second one request sees (1 ÷ TPOT)."""
        return 1 / self.prediction.tpot_s

    @property
    def requests_per_s(self) -> float:
        """Requests finished a second (`Prediction.requests_per_s`; a disaggregated pair's over its decode's output)."""
        return self.prediction.output_tokens_per_s / self._output_tokens

    @property
    def _output_tokens(self) -> int:
        p = self.prediction
        return p.output_tokens if isinstance(p, Prediction) else p.decode.output_tokens

    @property
    def gpu_hours_per_mtok(self) -> float:
        """Rented GPU-hours per million output tokens: the cost per token without a price."""
        return self.rented_gpus / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def usd_per_mtok(self) -> float | None:
        p = self.usd_per_gpu_hour
        return None if p is None else p * self.gpu_hours_per_mtok

    @property
    def usd_per_mtok_range(self) -> tuple[float, float] | None:
        """The cost per output token's range: its prediction's throughput band, inverted (`Band.inverse`)."""
        c = self.usd_per_mtok
        return None if c is None else self.prediction.throughput_band.inverse(c)

    @property
    def words(self) -> tuple[Word, ...]:
        """The configuration in words, its counts apart (`configuration_words`): pages show each as a figure."""
        p = self.prediction
        spec = "" if self.speculation is None else self.speculation.label
        if isinstance(p, Prediction):
            return configuration_words(self.mode, self.layout.label, p.in_flight, speculation=spec)
        assert self.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
        return configuration_words(self.mode, self.layout.label, p.decode.batch,
                                   prefill_layout=self.prefill_layout.label, prefill_workers=p.prefill_workers,
                                   decode_workers=p.decode_workers, speculation=spec)

    @property
    def label(self) -> str:
        """The configuration in words, as plain text (the command line, the calculator, the sizing records):
        "disaggregated 6 × TP4 prefill, 7 × TP8 decode, 409 requests in flight on each decode worker"."""
        return words_text(self.words)

    def as_dict(self) -> dict[str, Any]:
        """The point as the command line prints it."""
        p = self.prediction
        out: dict[str, Any] = {
            "mode": self.mode, "layout": self.layout.as_dict(), "layout_label": self.layout.label,
            "concurrency": self.concurrency, "gpus": self.gpus,
            "output_tokens_per_s_per_gpu": self.per_gpu, "output_tokens_per_s_per_user": self.per_user,
            "output_tokens_per_s": self.output_tokens_per_s,
            "ttft_ms": self.ttft_s * 1e3, "tpot_ms": self.tpot_s * 1e3,
            "ttft_ms_range": [x * 1e3 for x in p.ttft_range], "tpot_ms_range": [x * 1e3 for x in p.tpot_range],
            "output_tokens_per_s_range": list(p.throughput_range),
            "usd_per_mtok_output": self.usd_per_mtok,
            "usd_per_mtok_output_range": None if (c := self.usd_per_mtok_range) is None else list(c),
            "gpu_hours_per_mtok_output": self.gpu_hours_per_mtok, "rented_gpus": self.rented_gpus,
            "regime": p.regime, "ttft_regime": p.ttft_regime,
            "speculation": None if self.speculation is None else self.speculation.as_dict(),
        }
        if isinstance(p, DisaggPrediction):
            assert self.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
            out.update({
                "prefill_layout": self.prefill_layout.as_dict(), "decode_layout": self.layout.as_dict(),
                "prefill_workers": p.prefill_workers, "decode_workers": p.decode_workers,
                "prefill_gpus": p.prefill_gpus, "decode_gpus": p.decode_gpus, "decode_batch": p.decode.batch,
                "kv_transfer_ms": p.transfer_s * 1e3, "kv_link": p.link.name, "prefill_load": p.prefill_load,
            })
        else:
            out["in_flight"] = p.in_flight
        return out


def dominates(a: Point, b: Point) -> bool:
    """`a` is at least as good as `b` on throughput per GPU and interactivity, and better on one."""
    return (a.per_gpu >= b.per_gpu and a.per_user >= b.per_user
            and (a.per_gpu > b.per_gpu or a.per_user > b.per_user))


def pareto(points: Iterable[Point]) -> list[Point]:
    """The points no other point dominates, most interactive first (of equal points, the cheapest)."""
    ordered = sorted(points, key=lambda p: (-p.per_user, -p.per_gpu, p.gpu_hours_per_mtok))
    out: list[Point] = []
    best = -math.inf
    for p in ordered:
        if p.per_gpu > best:
            out.append(p)
            best = p.per_gpu
    return out


@dataclass(frozen=True)
class Plan:
    """What carries a request rate: the point's configuration copied `replicas` times (aggregated), or its decode
    and prefill workers scaled to the rate (disaggregated)."""

    point: Point
    rate: float
    """Requests per second."""
    replicas: int
    """Replicas (aggregated) or decode workers (disaggregated)."""
    prefill_workers: int
    gpus: int
    rented_gpus: int
    usd_per_hour: float | None

    def as_dict(self) -> dict[str, Any]:
        out = {"rate": self.rate, "replicas": self.replicas, "gpus": self.gpus, "rented_gpus": self.rented_gpus,
               "usd_per_hour": self.usd_per_hour}
        if self.point.mode == "disaggregated":
            out.update({"prefill_workers": self.prefill_workers, "decode_workers": self.replicas})
        return out


@dataclass(frozen=True)
class Served:
    """A plan at its rate: each replica (or decode worker) taking its share of the requests, not at the load of the
    configuration the search compared (`Plan.point`, which met the targets at its own load, at least the share). Its
    figures are those of the GPUs the plan rents: the tokens they make are the rate's, their cost the plan's."""

    plan: Plan
    prediction: Prediction | DisaggPrediction
    """One replica at the rate ÷ replicas (aggregated, `at_rate`), or the plan's workers together at the rate
    (disaggregated, `disaggregated_at_rate`)."""

    @property
    def ttft_s(self) -> float:
        return self.prediction.ttft_s

    @property
    def tpot_s(self) -> float:
        return self.prediction.tpot_s

    @property
    def in_flight(self) -> float:
        """Requests in flight across the plan (Little's law: the rate times the time a request spends)."""
        p = self.prediction
        return self.plan.rate * (p.ttft_s + (p.output_tokens - 1) * p.tpot_s)

    @property
    def output_tokens_per_s(self) -> float:
        """The tokens the rate asks for: every request's output, as many requests a second as arrive."""
        return self.plan.rate * self.prediction.output_tokens

    @property
    def per_gpu(self) -> float:
        """Output tokens per second per GPU the plan uses (the point's definition, `Point.per_gpu`)."""
        return self.output_tokens_per_s / self.plan.gpus

    @property
    def gpu_hours_per_mtok(self) -> float:
        """Rented GPU-hours per million output tokens at the rate: what the plan rents over what the rate makes."""
        return self.plan.rented_gpus / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def usd_per_mtok(self) -> float | None:
        c = self.plan.usd_per_hour
        return None if c is None else c / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def words(self) -> tuple[Word, ...]:
        """The plan in words (`configuration_words`), its counts the plan's at the rate: "disaggregated 7 × TP1
        prefill, 5 × TP8 decode, 120 requests in flight on each decode worker", or "15 replicas of aggregated TP4,
        70 requests in flight on each" (the mean a replica holds at its share of the rate, rounded)."""
        pt, z = self.plan.point, self.prediction
        spec = "" if pt.speculation is None else pt.speculation.label
        if isinstance(z, DisaggPrediction):
            assert pt.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
            return configuration_words(pt.mode, pt.layout.label, z.decode.batch,
                                       prefill_layout=pt.prefill_layout.label, prefill_workers=z.prefill_workers,
                                       decode_workers=z.decode_workers, speculation=spec)
        n = self.plan.replicas
        each = configuration_words(pt.mode, pt.layout.label, max(1, round(z.mean_in_flight)), speculation=spec)
        return (("replicas", n), " replica of " if n == 1 else " replicas of ", *each,
                *((" on each",) if n > 1 else ()))

    @property
    def label(self) -> str:
        """The plan in words, as plain text (`words`)."""
        return words_text(self.words)


@dataclass(frozen=True)
class Why:
    """Why nothing meets the targets: the target that binds at the configuration closest to meeting both."""

    text: str
    binding: str | None = None
    """ttft_ms or tpot_ms; None when no configuration serves the request at all."""
    target: float | None = None
    closest: float | None = None
    """What the closest configuration gives for the binding target (ms)."""
    over_by: float | None = None
    """(closest − target) ÷ target."""
    point: Point | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "binding": self.binding, "target": self.target, "closest": self.closest,
                "over_by": self.over_by, "configuration": None if self.point is None else self.point.as_dict()}


@dataclass(frozen=True)
class Search:
    """A search's answer: every point it predicted, the frontier, the cheapest meeting the targets."""

    setting: Setting
    input_tokens: int
    output_tokens: int
    targets: Targets
    points: tuple[Point, ...]
    frontier: tuple[Point, ...]
    best: Point | None
    plan: Plan | None
    why: Why | None
    layouts: tuple[Layout, ...]
    """Every layout that holds the model (the candidates of both pools)."""
    pruned: int
    """Layouts (with or without speculation) whose sweep the frontier's bound made unnecessary."""
    skipped: tuple[str, ...] = field(default=())
    """Layouts or modes the time model could not predict, with the reason."""
    candidates: tuple[Point, ...] = field(default=())
    """The points that meet the targets: each aggregated layout's largest load meeting them and any smaller load of
    more throughput (`_peak`); each disaggregated pairing's cheapest, and whichever of its swept batches met them."""
    recommended: Point | None = None
    """What the site recommends deploying (`recommend`): the cheapest aggregated configuration meeting the targets
    unless the cheapest disaggregated one costs at least the layout policy's `disaggregation.min_saving` less per
    output token (with a rate: needs that share fewer rented GPUs). None where nothing meets the targets."""
    recommended_plan: Plan | None = None
    """The recommended configuration's plan for the rate (None without a rate)."""
    asked: Targets | None = None
    """The targets as asked (`targets` is what the predictions were held to: the same, divided by `margins` where
    `meet` is `band`); None: `targets`."""
    meet: str = "prediction"
    """What had to fall within the targets (`MEETS`)."""
    margins: tuple[float, float] = (1.0, 1.0)
    """TTFT's and TPOT's: what a prediction was multiplied by before it was held to the target (`margins`)."""
    served: Served | None = None
    """`plan` at its rate (`Served`; None without a rate or a plan)."""
    recommended_served: Served | None = None
    """`recommended_plan` at its rate."""

    @property
    def cheapest(self) -> Point | None:
        """The configuration of lowest cost per output token meeting the targets (with a rate: of fewest rented
        GPUs carrying it), whatever its mode; `best` by its other name."""
        return self.best

    @property
    def min_saving(self) -> float:
        """The share a disaggregated configuration must save to be recommended (the layout policy's)."""
        return self.setting.layout_policy.disaggregation.min_saving

    @property
    def saving(self) -> float:
        """How much less the cheapest costs than the recommended, a share of the recommended's cost (per output
        token; with a rate, in rented GPUs): 0 where they are the same configuration or nothing meets the
        targets."""
        if self.best is None or self.recommended is None or self.best is self.recommended:
            return 0.0
        if self.plan is not None and self.recommended_plan is not None:
            return 1 - self.plan.rented_gpus / self.recommended_plan.rented_gpus
        return 1 - self.best.gpu_hours_per_mtok / self.recommended.gpu_hours_per_mtok

    def candidates_of(self, mode: str) -> tuple[Point, ...]:
        return tuple(p for p in self.candidates if p.mode == mode)


# --------------------------------------------------------------------------- candidates


def layouts(st: Setting) -> list[Deployment]:
    """Every layout the engines accept that holds the model at the setting's context: each TP degree in the node
    (for a mixture-of-experts model also TP with expert parallelism, and data-parallel attention ranks with
    expert parallelism across them); where one stage does not hold it, the widest of those shapes with the fewest
    pipeline stages that do, at most `MAX_NODES` nodes (a pipeline of part-filled nodes is not tried)."""
    arch, node = st.model.architecture, st.node
    most = node.gpus * MAX_NODES
    shapes: list[tuple[int, int, int]] = []
    for t in tp_degrees(arch, node.gpus):
        shapes.append((t, 1, 1))
        if arch.moe is not None:
            if t > 1:
                shapes.append((t, t, 1))
            dp = 2
            while dp <= MAX_EXPERT_DATA_PARALLEL and t * dp <= node.gpus:
                shapes.append((t, t * dp, dp))
                dp *= 2
    shapes = [x for x in shapes if not layout_problems(arch, Layout(x[0], 1, x[1], x[2]), st.precision)]
    widest = max((tp * dp for tp, _, dp in shapes), default=0)
    out: list[Deployment] = []
    for tp, ep, dp in shapes:
        pp = 1
        if not st.memory(Layout(tp, 1, ep, dp), 1).starts:
            if tp * dp < widest:
                continue  # a pipeline of part-filled nodes: the engines fill a node's TP group before adding stages
            # the fewest stages vLLM starts with (more stages hold fewer layers a GPU): doubling, then halving
            top = min(arch.layers, most // (tp * dp))
            lo, hi = 1, 2
            while hi < top and not st.memory(Layout(tp, hi, ep, dp), 1).starts:
                lo, hi = hi, min(2 * hi, top)
            if not st.memory(Layout(tp, hi, ep, dp), 1).starts:
                continue
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if st.memory(Layout(tp, mid, ep, dp), 1).starts:
                    hi = mid
                else:
                    lo = mid
            pp = hi
        try:
            out.append(deploy(st, Layout(tp, pp, ep, dp)))
        except RefusedLayout:
            continue
    return out


Request = tuple[int, int, float, int]
"""Input tokens, output tokens, prefix hit rate and prefix groups: with the setting, all a prediction reads."""


@dataclass(eq=False)
class Space:
    """What a search predicts apart from its targets, its rate, its mode and its bound on GPUs: the layouts that hold
    the model at the setting's context, and each replica, decode worker and prefill worker predicted on them. A search
    makes its own; a caller that keeps one and passes it to each search (`search(..., space=)`) has the next search
    of the same setting and requests reuse every prediction, while a search of anything else empties it first
    (`holds`, `reset`). It lives on its owner, never at module level (the calculator's `Calculator` keeps a few)."""

    setting: Setting | None = None
    request: Request | None = None
    deployments: tuple[Deployment, ...] = ()
    """Every layout that holds the model (`layouts`), before any bound on GPUs."""
    preps: dict[Layout, Prep] = field(default_factory=dict)
    """Each layout's resolved rates, links and shapes, made once (`step.prepare`)."""
    drafts: dict[tuple[Layout, Speculation], Draft] = field(default_factory=dict)
    senders: dict[tuple[Layout, float], Callable[[int], float | None]] = field(default_factory=dict)
    """One prompt's KV transfer by prefill layout and bytes sent (`_Run.sender`)."""
    loads: dict[tuple[Layout, Speculation | None], dict[int, Point]] = field(default_factory=dict)
    """A replica of each layout at each load (`_loads`)."""
    batches: dict[tuple[Layout, Speculation | None], dict[int, DecodePool]] = field(default_factory=dict)
    """A decode worker of each layout at each batch (`_batches`)."""
    prefills: dict[Layout, PrefillPool | str] = field(default_factory=dict)
    """A prefill worker of each layout, or why the time model cannot predict one."""

    def holds(self, st: Setting, request: Request) -> bool:
        """Whether this is the space of `st` and `request`, so its predictions hold. The setting compares by value, and
        its time models and prices by identity (they do not compare)."""
        kept = self.setting
        return (kept is not None and self.request == request and kept == st and kept.time_models is st.time_models
                and kept.prices is st.prices)

    def reset(self, st: Setting, request: Request, deployments: tuple[Deployment, ...]) -> None:
        """Make this the space of `st` and `request`, with its layouts, and nothing predicted yet. A search calls it
        once its layouts are made, so a search that fails before leaves no space bound without them."""
        for table in (self.preps, self.drafts, self.senders, self.loads, self.batches, self.prefills):
            table.clear()
        self.setting, self.request, self.deployments = st, request, deployments


@dataclass
class _Run:
    """One search's working state (local to the call: no module-level state); what does not depend on the targets is
    in its `space`."""

    targets: Targets
    n_in: int
    n_out: int
    prefix_hit: float
    prefix_groups: int
    space: Space
    max_gpus: int | None = None
    """The most GPUs one configuration may take (a replica, or a disaggregated configuration's pools together)."""
    points: list[Point] = field(default_factory=list)
    candidates: list[Point] = field(default_factory=list)
    """Points that meet the targets."""
    skipped: list[str] = field(default_factory=list)
    pruned: int = 0

    def eligible(self, p: Point) -> bool:
        return self.targets.ttft_met(p.ttft_s)

    def prep(self, d: Deployment) -> Prep:
        preps = self.space.preps
        if d.layout not in preps:
            preps[d.layout] = prepare(d)
        return preps[d.layout]

    def sender(self, p: PrefillPool, dec: DecodePool) -> Callable[[int], float | None]:
        """`_sender(p, dec)`, each link computed once in this space: the transfer depends only on the prefill layout,
        the bytes sent and whether the pools' GPUs fit one node."""
        key = (p.deployment.layout, max(p.kv_bytes_per_gpu, dec.kv_bytes_per_gpu))
        f = self.space.senders.get(key)
        if f is None:
            f = self.space.senders[key] = _sender(p, dec, {})
        return f

    def draft(self, d: Deployment, spec: Speculation | None) -> Draft | None:
        if spec is None:
            return None
        drafts = self.space.drafts
        if (d.layout, spec) not in drafts:
            drafts[d.layout, spec] = draft_of(d, spec)
        return drafts[d.layout, spec]


def _agg_point(d: Deployment, c: int, run: _Run, spec: Speculation | None) -> Point:
    x = predict(d, c, run.n_in, run.n_out, speculation=spec, prefix_hit=run.prefix_hit,
                prefix_groups=run.prefix_groups, prep=run.prep(d), draft=run.draft(d, spec))
    price = d.setting.price
    return Point(x, d, d.rented_gpus_per_replica, None if price is None else price.usd_per_gpu_hour)


def _loads(d: Deployment, run: _Run, spec: Speculation | None) -> Callable[[int], Point]:
    """A replica of `d` at each load, predicted once in the run's space."""
    return _memo(lambda c: _agg_point(d, c, run, spec), run.space.loads.setdefault((d.layout, spec), {}))


def _throughput(at: Callable[[int], Point]) -> Callable[[int], float]:
    return lambda c: at(c).output_tokens_per_s


def _batches(d: Deployment, run: _Run, spec: Speculation | None) -> Callable[[int], DecodePool]:
    """A decode worker of `d` at each batch, predicted once in the run's space."""
    return _memo(lambda b: decode_pool(d, b, run.n_in, run.n_out, speculation=spec, prefix_hit=run.prefix_hit,
                                       prefix_groups=run.prefix_groups, prep=run.prep(d), draft=run.draft(d, spec)),
                 run.space.batches.setdefault((d.layout, spec), {}))


def _largest(lo: int, hi: int, excess: Callable[[int], float], e_lo: float, e_hi: float) -> int:
    """The largest n in [lo, hi) with excess(n) <= 0, given excess(lo) = e_lo <= 0 < e_hi = excess(hi) and that
    excess rises with n: interpolated where excess crosses zero (it is nearly linear in the load), and halved
    when one end stays put twice running, so the answer is exact in a few evaluations."""
    stuck = 0
    last = 0
    while hi - lo > 1:
        if stuck >= 2:
            c = (lo + hi) // 2
        else:
            c = lo + int((hi - lo) * -e_lo / (e_hi - e_lo))
            c = min(max(c, lo + 1), hi - 1)
        e = excess(c)
        side = 1 if e <= 0 else -1
        stuck = stuck + 1 if side == last else 1
        last = side
        if e <= 0:
            lo, e_lo = c, e
        else:
            hi, e_hi = c, e
    return lo


def _memo(f: Callable[[int], _T], seed: dict[int, _T]) -> Callable[[int], _T]:
    """`f`, each n computed once (in `seed`: a table of the search's space)."""
    def g(n: int) -> _T:
        if n not in seed:
            seed[n] = f(n)
        return seed[n]
    return g


def _peak(lo: int, hi: int, value: Callable[[int], float], fits: Callable[[float], bool],
          floor: float = -math.inf) -> int | None:
    """The n in [lo, hi] of the largest value(n) above `floor` among those whose value fits (`fits` is true up to
    a value and false beyond it), or None: exact by branch and bound, given that value(n) ÷ n never rises with n (a request's
    time, or a step's, never falls as the load grows), so that on [a, b] value(a)·n ÷ a bounds value(n) from above
    and value(b)·n ÷ b from below. Where value rises with n it settles in about two halvings per bit of the range;
    where it dips (an all-reduce changing algorithm, a step outgrowing the CUDA graphs) it looks on both sides."""
    best: int | None = None
    best_v = floor
    for n in (lo, hi):
        v = value(n)
        if fits(v) and v > best_v:
            best, best_v = n, v
    stack = [(lo, hi)]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        va, vb = value(a), value(b)
        if va * (b - 1) / a <= best_v:
            continue  # nothing inside can beat the best found
        if not fits(vb * (a + 1) / b):
            continue  # everything inside is too much
        m = (a + b) // 2
        v = value(m)
        if fits(v) and v > best_v:
            best, best_v = m, v
        stack += [(a, m), (m, b)]  # the upper half first: where the value is highest
    return best


def _excess(t: Targets, ttft_s: float, tpot_s: float) -> float:
    """How far a point misses the targets: its largest figure ÷ target, less one (at most zero: it meets them)."""
    return max(t.excess(ttft_s, tpot_s).values(), default=0.0) - 1


def _aggregated(deps: Sequence[Deployment], specs: Sequence[Speculation | None], run: _Run, sweep: bool) -> None:
    """Every aggregated candidate: the corners of each layout, its sweep unless the frontier already beats its
    bound, the largest load of each layout meeting the targets, then any load of more tokens a second that would
    be cheaper than the cheapest found (`_peak`: exact where a dip in throughput makes a smaller load cheaper)."""
    t = run.targets
    corners: list[tuple[Point, Point, int, Callable[[int], Point]]] = []
    for d in deps:
        for spec in specs:
            at = _loads(d, run, spec)
            try:
                one = at(1)
            except ValueError as exc:
                run.skipped.append(f"{d.layout.label}{'' if spec is None else ' speculative'}: {exc}")
                continue
            run.points.append(one)
            if not sweep and not t.met(one.ttft_s, one.tpot_s):
                continue  # TTFT and TPOT only rise with the load: no load of this layout meets the targets
            cap = one.prediction.admitted if isinstance(one.prediction, Prediction) else 1
            full = at(cap)
            if full is not one:
                run.points.append(full)
            corners.append((one, full, cap, at))
    # most promising first: the fullest points' throughput per GPU
    corners.sort(key=lambda x: -x[1].per_gpu)
    found: list[tuple[Callable[[int], Point], int, Point]] = []
    for one, full, cap, at in corners:
        if sweep:
            eligible = [p for p in run.points if run.eligible(p)]
            bound = (full.per_gpu, one.per_user)
            if any(p.per_gpu >= bound[0] and p.per_user >= bound[1] and p is not one and p is not full
                   for p in eligible):
                run.pruned += 1
            else:
                run.points += [at(c) for c in concurrencies(cap) if c not in (1, cap)]
        if not t.met(one.ttft_s, one.tpot_s):
            continue  # TTFT and TPOT only rise with the load

        def excess(c: int, at: Callable[[int], Point] = at) -> float:
            return _excess(t, at(c).ttft_s, at(c).tpot_s)

        # the loads meeting the targets: 1 to c_star
        c_star = cap if t.met(full.ttft_s, full.tpot_s) else _largest(1, cap, excess, excess(1), excess(cap))
        pt = at(c_star)
        if not any(q is pt for q in run.points):
            run.points.append(pt)
        run.candidates.append(pt)
        found.append((at, c_star, pt))
    # a smaller load makes more tokens a second where throughput dips (an all-reduce changing algorithm, a step
    # outgrowing the CUDA graphs): each layout's loads that could beat the cheapest found
    for at, c_star, pt in found:
        best = min(p.gpu_hours_per_mtok for p in run.candidates if p.mode == "aggregated")
        floor = max(pt.output_tokens_per_s, pt.output_tokens_per_s * pt.gpu_hours_per_mtok / best)
        c = _peak(1, c_star, _throughput(at), lambda _: True, floor)
        if c is not None:
            if not any(q is at(c) for q in run.points):
                run.points.append(at(c))
            run.candidates.append(at(c))


def _prefill_pools(deps: Sequence[Deployment], run: _Run) -> list[PrefillPool]:
    """Prefill workers of every layout, less those another beats on prompt time, a worker's time per prompt, its
    GPUs and the KV bytes a GPU sends: any number of workers of the other would serve as well on no more GPUs
    (over the node's fabric where these would cross the network). GPU time per prompt alone would not do: a
    one-GPU worker can be the cheaper whole number of workers though a wider one spends less GPU time a prompt."""
    pools = []
    kept = run.space.prefills
    for d in deps:
        if d.layout not in kept:
            try:
                kept[d.layout] = prefill_pool(d, run.n_in, prefix_hit=run.prefix_hit, prep=run.prep(d))
            except ValueError as exc:
                kept[d.layout] = str(exc)
        pool = kept[d.layout]
        if isinstance(pool, str):
            run.skipped.append(f"prefill {d.layout.label}: {pool}")
        else:
            pools.append(pool)

    def key(p: PrefillPool) -> tuple[float, float, int, float]:
        return p.prefill_s, p.service_s, p.deployment.gpus, p.kv_bytes_per_gpu

    keep = []
    for p in pools:
        kp = key(p)
        if not any(all(a <= b for a, b in zip(key(o), kp, strict=True)) and key(o) != kp for o in pools):
            keep.append(p)
    return keep


def _sender(p: PrefillPool, dec: DecodePool, memo: dict[bool, float | None] | None = None) -> Callable[[int], float | None]:
    """The seconds one prompt's KV cache takes from `p`'s workers to `dec`'s when the two pools take `gpus` GPUs
    (`kv_transfer`), or None where they would span nodes whose network the data does not record. The link depends
    on `gpus` only through whether both pools fit one node; with `memo`, each of the two is computed once."""
    node_gpus = p.deployment.setting.node.gpus

    def sent(gpus: int) -> float | None:
        within = gpus <= node_gpus
        if memo is not None and within in memo:
            return memo[within]
        try:
            out: float | None = kv_transfer(p, dec, gpus)[1].seconds
        except ValueError:  # the pools would span nodes whose network the data does not record
            out = None
        if memo is not None:
            memo[within] = out
        return out
    return sent


def _workers(p: PrefillPool, dec: DecodePool, rate: float, decode_workers: int, t: Targets,
             sender: Callable[[int], float | None] | None = None) -> int | None:
    """The fewest prefill workers that keep up with `rate` requests a second (load at most the cap) and meet the
    TTFT target with the KV transfer to the decode workers (`sender`: `_sender(p, dec)` or its memo); None if no
    number of them can."""
    send = sender or _sender(p, dec)
    gp, decode_gpus = p.deployment.gpus, decode_workers * dec.deployment.gpus

    def transfer(x: int) -> float | None:
        return send(x * gp + decode_gpus)

    least = max(1, math.ceil(rate * p.service_s / PREFILL_LOAD_CAP))
    for _ in range(2):  # the transfer's link depends on whether both pools fit one node
        sent = transfer(least)
        if sent is None:
            return None
        if t.ttft_s is None:
            return least
        budget = t.ttft_s - p.prefill_s - sent
        if budget <= 0:
            return None
        # M/D/1: s ρ / (2 (1 − ρ)) <= budget  <=>  ρ <= 2 budget / (s + 2 budget)
        rho = min(PREFILL_LOAD_CAP, 2 * budget / (p.service_s + 2 * budget))
        x = max(least, math.ceil(rate * p.service_s / rho - 1e-12))
        sent_x = transfer(x)
        if sent_x is None:
            return None
        if prefill_wait(rate * p.service_s / x, p.service_s) + p.prefill_s + sent_x <= t.ttft_s:
            return x
        least = x + 1
    return None


def _disagg_point(p: PrefillPool, dec: DecodePool, run: _Run) -> Point | None:
    """The best ratio of workers for one prefill pool and one decode pool: for 1 to MAX_DECODE_WORKERS decode
    workers, the fewest prefill workers that keep up and meet the TTFT target; the cheapest per token."""
    dd = dec.deployment
    price = dd.setting.price
    unit = 1 if price is None else price.gpus_per_unit
    best: tuple[float, int, int, int] | None = None
    send = run.sender(p, dec)
    r, gp, gd = dec.requests_per_s, p.deployment.gpus, dd.gpus
    for y in range(1, MAX_DECODE_WORKERS + 1):
        x = _workers(p, dec, y * r, y, run.targets, send)
        if x is None:
            continue
        gpus = x * gp + y * gd
        if run.max_gpus is not None and gpus > run.max_gpus:
            continue
        cost = rented_share(gpus, unit) / (y * r)
        if best is None or (cost, gpus) < (best[0], best[1]):
            best = (cost, gpus, x, y)
    if best is None:
        return None
    _, _, x, y = best
    z = combine(p, dec, x, y)
    return Point(z, dd, rented_share(z.gpus, unit), None if price is None else price.usd_per_gpu_hour,
                 prefill_layout=p.deployment.layout)


def _disaggregated(deps: Sequence[Deployment], specs: Sequence[Speculation | None], run: _Run, sweep: bool) -> None:
    """Every disaggregated candidate: each surviving prefill pool with each decode layout at the frontier's
    batches, and the cheapest configuration of the two meeting the targets (`_cheapest_pair`)."""
    t = run.targets
    pools = _prefill_pools(deps, run)
    if not pools:
        return
    fastest = min(p.prefill_s for p in pools)
    if t.ttft_s is not None and fastest > t.ttft_s:
        # no prefill pool computes a prompt within the target: keep the closest for `why`
        pools = [min(pools, key=lambda p: p.prefill_s)]
    pairs: list[tuple[tuple[float, int], PrefillPool, Callable[[int], DecodePool], Callable[[int], float], int]] = []
    for d in deps:
        for spec in specs:
            pool = _batches(d, run, spec)
            try:
                first = pool(1)
            except ValueError as exc:
                run.skipped.append(f"decode {d.layout.label}{'' if spec is None else ' speculative'}: {exc}")
                continue
            cap = first.admitted

            batches = set(concurrencies(cap)) if sweep else {1, cap}
            for b in sorted(batches):
                dec = pool(b)
                for p in pools:
                    pt = _disagg_point(p, dec, run)
                    if pt is not None:
                        run.points.append(pt)
                        if t.met(pt.ttft_s, pt.tpot_s):
                            run.candidates.append(pt)
            if t.tpot_s is not None and first.tpot_s > t.tpot_s:
                continue  # no batch of this layout decodes within the target
            top = cap
            if t.tpot_s is not None and pool(cap).tpot_s > t.tpot_s:
                limit: float = t.tpot_s

                def over(b: int, limit: float = limit, pool: Callable[[int], DecodePool] = pool) -> float:
                    return pool(b).tpot_s / limit - 1

                top = _largest(1, cap, over, over(1), over(cap))
            rate = _rates(pool)
            peak = _peak(1, top, rate, lambda _: True)
            assert peak is not None  # noqa: S101 - with nothing to fit, the peak is one of the batches
            for p in pools:
                pt = _disagg_point(p, pool(top), run)  # the largest batch meeting TPOT: a first answer
                if pt is not None:
                    run.points.append(pt)
                    if t.met(pt.ttft_s, pt.tpot_s):
                        run.candidates.append(pt)
                pairs.append((_floor(p, first, rate(peak)), p, pool, rate, top))
    # the pairs whose GPUs at their fastest batch could cost least first; none after the cheapest found costs less
    bar = min((_point_cost(q) for q in run.candidates if q.mode == "disaggregated"), default=(math.inf, 0))
    for floor, p, pool, rate, top in sorted(pairs, key=lambda x: x[0]):
        if floor >= bar:
            break
        pt = _cheapest_pair(p, pool, rate, top, run, bar)
        if pt is not None:
            run.points.append(pt)
            run.candidates.append(pt)
            bar = _point_cost(pt)


def _rates(pool: Callable[[int], DecodePool]) -> Callable[[int], float]:
    """Requests a second one decode worker finishes at each batch."""
    return _memo(lambda b: pool(b).requests_per_s, {})


def _gpu_hours(share: float, y: int, r: float, n_out: int) -> float:
    """Rented GPU-hours per million output tokens of `share` rented GPUs serving y decode workers' r requests a second
    (as `Point.gpu_hours_per_mtok` computes it)."""
    return share / (y * r * n_out * 3600) * 1e6


def _floor(p: PrefillPool, first: DecodePool, r_top: float) -> tuple[float, int]:
    """The least any configuration of prefill workers `p` and decode workers `first.deployment` can cost: one
    prefill worker, decode workers at their fastest batch (`r_top` requests a second each)."""
    dd = first.deployment
    unit = 1 if dd.setting.price is None else dd.setting.price.gpus_per_unit
    gp, gd = p.deployment.gpus, dd.gpus
    return min((_even(_gpu_hours(rented_share(gp + y * gd, unit), y, r_top, first.output_tokens)), gp + y * gd)
               for y in range(1, MAX_DECODE_WORKERS + 1))


def _cheapest_pair(p: PrefillPool, pool: Callable[[int], DecodePool], rate: Callable[[int], float], top: int,
                   run: _Run, bar: tuple[float, int]) -> Point | None:
    """The cheapest configuration of workers of prefill pool `p` and of one decode layout (`pool(b)`: a decode
    worker at batch b; `rate(b)` its requests a second) at batches 1 to `top` (those meeting the TPOT target) if it
    is cheaper than `bar` (GPU-hours per million output tokens and GPUs: the cheapest disaggregated one found),
    exactly: for each number of decode workers y (1 to `MAX_DECODE_WORKERS`) and of
    prefill workers x from the fewest that keep up at batch 1, the batch of most requests a second at which x
    prefill workers carry y decode workers' rate within the TTFT target (`_peak`). More prefill workers stop
    helping once y decode workers run at their fastest batch, or once their GPUs alone at that batch cost more a
    token than the cheapest found."""
    t = run.targets
    first = pool(1)
    dd = first.deployment
    price = dd.setting.price
    unit = 1 if price is None else price.gpus_per_unit
    s, gp, gd, n_out = p.service_s, p.deployment.gpus, dd.gpus, first.output_tokens

    def gpu_hours(share: float, y: int, r: float) -> float:
        return _even(_gpu_hours(share, y, r, n_out))

    fastest = _peak(1, top, rate, lambda _: True)
    assert fastest is not None  # noqa: S101 - with nothing to fit, the peak is one of the batches
    r_top = rate(fastest)
    send = run.sender(p, first)
    best: tuple[int, int, int] | None = None  # x, y, batch
    for y in range(1, MAX_DECODE_WORKERS + 1):
        if (gpu_hours(rented_share(gp + y * gd, unit), y, r_top), gp + y * gd) >= bar:
            continue  # even one prefill worker and the fastest batch would not be cheaper
        least = _workers(p, first, y * first.requests_per_s, y, t, send)
        if least is None:
            continue  # no number of prefill workers keeps up with these at one sequence each
        # the workers up to the fewest whose rate ceiling reaches the fastest batch (more add only GPUs), each with
        # its ceiling: the most requests a second x prefill workers take within the load cap and the TTFT target
        ceilings: list[tuple[int, int, float, float]] = []  # x, GPUs, KV transfer, ceiling
        x = least
        while True:
            gpus = x * gp + y * gd
            if run.max_gpus is not None and gpus > run.max_gpus:
                break
            if (gpu_hours(rented_share(gpus, unit), y, r_top), gpus) >= bar:
                break  # no batch makes these GPUs cheaper than the best, nor more of them
            sent_or_none = send(gpus)
            if sent_or_none is None:  # the pools would span nodes whose network the data does not record
                break
            sent = sent_or_none
            rho = PREFILL_LOAD_CAP
            if t.ttft_s is not None:
                budget = t.ttft_s - p.prefill_s - sent
                if budget <= 0:
                    if gpus > dd.setting.node.gpus:
                        break  # across nodes the transfer alone misses the target, with any number of workers
                    x += 1
                    continue
                rho = min(rho, 2 * budget / (s + 2 * budget))  # M/D/1: s ρ / (2 (1 − ρ)) <= budget
            ceiling = x * rho / (y * s)
            ceilings.append((x, gpus, sent, ceiling))
            if ceiling >= r_top:
                break
            x += 1
        # most workers first: the cheapest found there bars the fewer whose ceiling cannot beat it
        for x, gpus, sent, ceiling in reversed(ceilings):
            share = rented_share(gpus, unit)
            if (gpu_hours(share, y, min(r_top, ceiling * (1 + 1e-9))), gpus) >= bar:
                continue

            def fits(v: float, x: int = x, y: int = y, sent: float = sent) -> bool:
                load = y * v * s / x  # as `combine` computes it
                return load <= PREFILL_LOAD_CAP and (
                    t.ttft_s is None or prefill_wait(load, s) + p.prefill_s + sent <= t.ttft_s)

            b = _peak(1, top, rate, fits)
            if b is not None:
                here = (gpu_hours(share, y, rate(b)), gpus)
                if here < bar:
                    bar, best = here, (x, y, b)
    if best is None:
        return None
    x, y, b = best
    z = combine(p, pool(b), x, y)
    return Point(z, dd, rented_share(z.gpus, unit), None if price is None else price.usd_per_gpu_hour,
                 prefill_layout=p.deployment.layout)


# --------------------------------------------------------------------------- the answer


def _plan(pt: Point, rate: float, t: Targets) -> Plan | None:
    """What carries `rate` requests a second in `pt`'s configuration: replicas of it, or decode workers at its
    batch and the fewest prefill workers that keep up and meet the TTFT target; None if the prefill side cannot."""
    z = pt.prediction
    d = pt.deployment
    price = d.setting.price
    unit = 1 if price is None else price.gpus_per_unit
    if isinstance(z, DisaggPrediction):
        y = math.ceil(rate / z.decode.requests_per_s - 1e-12)
        x = _workers(z.prefill, z.decode, rate, y, t)
        if x is None:
            return None
        gpus = x * z.prefill.deployment.gpus + y * d.gpus
    else:
        y = math.ceil(rate / pt.requests_per_s - 1e-12)
        x = 0
        gpus = y * d.gpus
    rented = math.ceil(gpus / unit) * unit
    return Plan(pt, rate, y, x, gpus, rented, None if price is None else rented * price.usd_per_gpu_hour)


def _served(plan: Plan, run: _Run) -> Served:
    """`plan` at its rate (`Served`): a replica at its share of the rate (`at_rate`), or the plan's workers at the
    rate with each decode worker at the batch its share keeps (`disaggregated_at_rate`, at most the point's)."""
    pt = plan.point
    d, spec, z = pt.deployment, pt.speculation, pt.prediction
    if isinstance(z, DisaggPrediction):
        return Served(plan, disaggregated_at_rate(z.prefill, _batches(d, run, spec), plan.prefill_workers,
                                                  plan.replicas, plan.rate, z.decode.batch))
    return Served(plan, at_rate(d, plan.rate / plan.replicas, run.n_in, run.n_out, speculation=spec,
                                prefix_hit=run.prefix_hit, prefix_groups=run.prefix_groups, prep=run.prep(d),
                                draft=run.draft(d, spec)))


def _why(run: _Run, n_layouts: int, st: Setting, edge: tuple[float, float] | None = None) -> Why:
    """`edge`: the margins where the targets hold at the band's slow edge (`margins`); the figures are then the
    edge's, against the targets as asked (the ratio is the same)."""
    t = run.targets
    if not n_layouts:
        return Why(f"no layout of up to {MAX_NODES} nodes holds {st.model.name} in {st.precision.name} on "
                   f"{st.chip.name} at {run.n_in + run.n_out:,} tokens")
    if not run.points:
        return Why("the time model could not predict any layout: " + "; ".join(run.skipped[:3]))

    def worst(p: Point) -> float:
        return max(t.excess(p.ttft_s, p.tpot_s).values())

    closest = min(run.points, key=worst)
    ex = t.excess(closest.ttft_s, closest.tpot_s)
    binding = max(ex, key=lambda k: ex[k])
    m = 1.0 if edge is None else edge[0 if binding == "ttft_ms" else 1]
    target = ((t.ttft_s if binding == "ttft_ms" else t.tpot_s) or 0.0) * m
    value = (closest.ttft_s if binding == "ttft_ms" else closest.tpot_s) * m
    what = "time to first token" if binding == "ttft_ms" else "time per output token"
    gives = "gives" if edge is None else "gives at the slow edge of its band"
    return Why(f"the {what} binds: the closest configuration ({closest.label}) {gives} {value * 1e3:,.1f} ms "
               f"against the {target * 1e3:,.1f} ms target, {ex[binding] - 1:.0%} over",
               binding, target * 1e3, value * 1e3, ex[binding] - 1, closest)


def margins(st: Setting, meet: str = "band") -> tuple[float, float]:
    """What a prediction is multiplied by to reach the slow edge of its error band, for TTFT and for TPOT, in
    `st`'s regimes (its chip's vendor, dense or MoE): 1 ÷ (1 + the band's lowest error), the TPOT's the larger of
    its two decode regimes' (low load, saturation), as the load decides which applies; (1, 1) where `meet` is
    `prediction`. A band whose lowest error is above zero (the model was slower than every measurement it holds)
    gives a margin below 1."""
    if meet not in MEETS:
        raise ValueError(f"meet must be one of {', '.join(MEETS)}, not {meet!r}")
    if meet == "prediction":
        return 1.0, 1.0
    table = st.time_model.bands
    vendor, moe = st.chip.vendor, st.model.architecture.moe is not None

    def edge(metric: str, phase: str) -> float:
        return 1 / (1 + bands_mod.band(table, metric, bands_mod.Regime(vendor, moe, phase)).low)

    return (edge("ttft_ms", "prefill"),
            max(edge("tpot_ms", "decode at low load"), edge("tpot_ms", "decode at saturation")))


def search(eng: EngineCatalog, model: str, precision: str, accelerator: str, input_tokens: int,
           output_tokens: int, *, ttft_ms: float | None = None, tpot_ms: float | None = None,
           rate: float | None = None, mode: str = "any", speculation: Speculation | None = None,
           prefix_hit: float = 0.0, prefix_groups: int = 1, scenario: str = "reference",
           kv_precision: str | None = None, node: str | None = None, max_gpus: int | None = None,
           sweep: bool = True, memory_policy: str | None = None, space: Space | None = None,
           meet: str = "prediction") -> Search:
    """Every configuration of `model` in `precision` on `accelerator`'s node for requests of `input_tokens` +
    `output_tokens`, in `mode` (aggregated, disaggregated or any), with and without `speculation` where given:
    the frontier (unless `sweep` is False: then only what the cheapest needs) and the cheapest meeting the
    targets, with the plan that carries `rate` requests a second. The node is `accelerator`'s first, or `node`;
    `max_gpus` bounds one configuration (a replica, or the pools of a disaggregated one), not the plan;
    `memory_policy`, where given, is the engine's budget and scheduling in place of the scenario's. A `space` the
    caller keeps lends this search the predictions of its last one where both read the same setting and requests
    (`Space`): the answer is the same as without it. A setting the engines refuse at start (`setting`'s
    RefusedSetting: a request longer than the model reads, BF16 on a chip without it) is raised, not answered.
    `meet` (`MEETS`): what must fall within the targets, the prediction or the slow edge of its band (`margins`)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if min(input_tokens, output_tokens) < 1:
        raise ValueError("input and output tokens must be at least 1")
    if rate is not None and not rate > 0:
        raise ValueError(f"the request rate must be positive, not {rate}")
    asked = Targets(None if ttft_ms is None else ttft_ms / 1e3, None if tpot_ms is None else tpot_ms / 1e3)
    st = setting(eng, model, precision, scenario, accelerator=None if node else accelerator, node=node,
                 concurrency=1, context_tokens=input_tokens + output_tokens, kv_precision=kv_precision,
                 memory_policy=memory_policy)
    m_ttft, m_tpot = margins(st, meet)  # refuses a `meet` not in MEETS
    t = Targets(None if asked.ttft_s is None else asked.ttft_s / m_ttft,
                None if asked.tpot_s is None else asked.tpot_s / m_tpot)
    space = space if space is not None else Space()
    request = (input_tokens, output_tokens, prefix_hit, prefix_groups)
    if not space.holds(st, request):
        try:
            made = tuple(layouts(st))
        except NoLayout:
            made = ()
        space.reset(st, request, made)
    deps = list(space.deployments)
    run = _Run(t, input_tokens, output_tokens, prefix_hit, prefix_groups, space, max_gpus)
    if max_gpus is not None:
        deps = [d for d in deps if d.gpus <= max_gpus]
    specs: list[Speculation | None] = [None] if speculation is None else [None, speculation]
    if mode in ("aggregated", "any"):
        _aggregated(deps, specs, run, sweep)
    if mode in ("disaggregated", "any") and output_tokens > 1:
        _disaggregated(deps, specs, run, sweep)
    front = tuple(pareto(p for p in run.points if run.eligible(p))) if sweep else ()
    plan: Plan | None = None
    best: Point | None = None
    rec_plan: Plan | None = None
    rec: Point | None = None
    saving = st.layout_policy.disaggregation.min_saving
    if rate is None:
        best = min(run.candidates, key=_point_cost, default=None)
        rec = recommend([p for p in run.candidates if p.mode == "aggregated"],
                        [p for p in run.candidates if p.mode == "disaggregated"], _point_cost, saving)
    else:
        plans = [x for x in (_plan(p, rate, t) for p in run.candidates) if x is not None]
        plan = min(plans, key=_plan_cost, default=None)
        best = None if plan is None else plan.point
        rec_plan = recommend([x for x in plans if x.point.mode == "aggregated"],
                             [x for x in plans if x.point.mode == "disaggregated"], _plan_cost, saving)
        rec = None if rec_plan is None else rec_plan.point
    why = None if best is not None else _why(run, len(deps), st, (m_ttft, m_tpot) if meet == "band" else None)
    served = None if plan is None else _served(plan, run)
    rec_served = served if rec_plan is plan else None if rec_plan is None else _served(rec_plan, run)
    return Search(st, input_tokens, output_tokens, t, tuple(run.points), front, best, plan, why,
                  tuple(d.layout for d in deps), run.pruned, tuple(run.skipped), tuple(run.candidates), rec,
                  rec_plan, asked, meet, (m_ttft, m_tpot), served, rec_served)


def _even(gpu_hours: float) -> float:
    """GPU-hours per million output tokens to 12 significant figures, where the search compares them: configurations
    that cost the same (three copies of a pair of workers and one pair) differ in the last bits of their arithmetic,
    and the last bits differ between CPython's libm and the browser's; so rounded, such a tie goes to the fewer GPUs
    on either."""
    return float(f"{gpu_hours:.12g}")


def _point_cost(p: Point) -> tuple[float, int]:
    """What the cheapest point minimizes: GPU-hours per million output tokens (`_even`), then GPUs."""
    return _even(p.gpu_hours_per_mtok), p.gpus


def _plan_cost(x: Plan) -> tuple[float, float, float, int]:
    """What the cheapest plan minimizes: rented GPUs, then GPUs, then its point's GPU-hours per million output tokens
    (`_even`), then its point's GPUs. Points of the same workers in the same proportion (three prefill and two decode
    workers, or nine and six) scale to the same plan; their costs differ in the last bits only, and those bits
    differ between CPython's libm and the browser's, so the tie goes to the smaller point on either."""
    return x.rented_gpus, x.gpus, _even(x.point.gpu_hours_per_mtok), x.point.gpus


def recommend(aggregated: Sequence[_T], disaggregated: Sequence[_T], cost: Callable[[_T], tuple[float, ...]],
              min_saving: float) -> _T | None:
    """What the site recommends among configurations meeting the targets: the cheapest aggregated one (by `cost`,
    its first figure the price), unless the cheapest disaggregated one's price is at least `min_saving` (a share)
    below it; the cheapest disaggregated one where no aggregated one meets the targets. Exact wherever each mode's
    cheapest is: the search finds each mode's cheapest exactly, so the recommendation is exact too."""
    agg = min(aggregated, key=cost, default=None)
    dis = min(disaggregated, key=cost, default=None)
    if agg is None or dis is None:
        return agg if dis is None else dis
    return dis if cost(dis)[0] <= (1 - min_saving) * cost(agg)[0] else agg


def frontier(eng: EngineCatalog, model: str, precision: str, accelerator: str, input_tokens: int,
             output_tokens: int, **kw: Any) -> tuple[Point, ...]:
    """The throughput–interactivity frontier (`search`'s, with the same keywords)."""
    return search(eng, model, precision, accelerator, input_tokens, output_tokens, **kw).frontier


def cheapest(eng: EngineCatalog, model: str, precision: str, accelerator: str, input_tokens: int,
             output_tokens: int, **kw: Any) -> Search:
    """The cheapest configuration meeting the targets, its plan for a rate, or why there is none (`search` without
    the frontier's sweep)."""
    return search(eng, model, precision, accelerator, input_tokens, output_tokens, sweep=False, **kw)


def at_scenario(eng: EngineCatalog, model: str, precision: str, scenario: str, *, accelerator: str | None = None,
                **kw: Any) -> Search:
    """`search` at a scenario of data/scenarios.yaml: its request shape and its latency target, on its node (or
    `accelerator`'s first)."""
    sc = eng.scenarios[scenario]
    chip = accelerator or eng.nodes[sc.node].chip
    kw.setdefault("ttft_ms", None if sc.ttft_s is None else sc.ttft_s * 1e3)
    kw.setdefault("tpot_ms", None if sc.tpot_s is None else sc.tpot_s * 1e3)
    return search(eng, model, precision, chip, sc.input_tokens, sc.output_tokens, scenario=scenario,
                  node=None if accelerator else sc.node, **kw)
