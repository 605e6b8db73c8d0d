"""The latency-target page's choices (model, accelerators, scenarios, ladder) and the helpers its sections share."""

from __future__ import annotations

from dataclasses import dataclass

from snippets.engine import Layout
from snippets.engine.bands import COVERAGE, Band
from snippets.engine.search import Point, Search, pareto
from snippets.engine.specs import PriceSpec
from snippets.pages import units
from snippets.pages.units import ms
from snippets.render import fmt
from snippets.render.fmt import Figure

MODEL, PRECISION = "llama-3.1-70b", "fp8"
"""The worked model: the site's, in the precision of the time model's calibration runs."""
ACCELERATORS = ("h100-sxm", "h200-sxm", "b200", "mi300x")
SHAPE = "chat"
"""The frontier's request shape and target: InferenceX's chat-length shape, AIConfigurator's default objective."""
LONG, STRICT = "long-prompt", "interactive"
"""Where disaggregation is put to the test: InferenceX's long prompts, and AIConfigurator's strict objective."""
WORKED_GPU = "h100-sxm"
LADDER = (2.0, 1.5, 1.0, 2 / 3, 1 / 2, 1 / 3, 1 / 4)
"""TPOT targets of the tightening table, as multiples of the scenario's: a sensitivity, not a source's tiers."""
RATE = 50.0
"""Requests per second of the quiz's capacity problem (a page choice)."""
SPEC = ("deepseek-v3", "fp8-block", "h200-sxm", Layout(8))
"""DeepSeek-V3 as shipped, as SGLang documents serving it on one H200 node (data/deployments.yaml)."""
SPEC_LOADS = (1, 4, 16, 64, 256)
"""Requests in flight of the speculative-decoding table; the last row is the most the KV cache admits."""
SPEC_SHAPE = (1000, 1000)
"""Tokens in and out of the speculative-decoding table (a page choice: a chat turn)."""
PREFIX = (3200, 800, 0.625, 10, 64)
"""The prefix-caching example: dstack's shared-prefix workload (prompts, tokens out, the share of each prompt that
repeats, distinct prefixes, requests in flight; data/measurements.yaml), on the worked model and GPU."""


def mtok(p: Point) -> Figure:
    """A point's dollars per million output tokens, dated by the price it rests on."""
    return units.usd_mtok(cost(p), units.price_of(p.deployment))


def usd_mtok(p: Point | None) -> Figure | str:
    """A point's dollars per million output tokens in a table: with its range, the throughput's inverted."""
    return "no price" if p is None or p.usd_per_mtok is None else units.point_mtok_banded(p)


def per_gpu_banded(p: Point) -> Figure:
    """A point's output tokens a second per GPU with its range."""
    return units.tps_banded(p.prediction, 1 / p.prediction.gpus, per_gpu=True)


def per_gpu(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s/GPU", 0 if x >= 100 else 1)


def per_user(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 1)


def gpu_label(chip_name: str) -> str:
    return units.gpu_label(chip_name, units.VENDORS, bare=True)


def best_of(s: Search, mode: str) -> Point | None:
    """The cheapest point of one mode meeting the search's targets."""
    ok = [p for p in s.points if p.mode == mode and s.targets.met(p.ttft_s, p.tpot_s)]
    return min(ok, key=lambda p: (p.gpu_hours_per_mtok, p.gpus), default=None)


def frontier_of(s: Search, mode: str) -> list[Point]:
    """One mode's frontier among the points meeting the TTFT target."""
    return pareto(p for p in s.points if p.mode == mode and s.targets.ttft_met(p.ttft_s))


def cost(p: Point | None) -> float:
    if p is None or p.usd_per_mtok is None:
        raise ValueError("the page needs a priced configuration meeting its target")
    return p.usd_per_mtok


@dataclass(frozen=True)
class Gpu:
    """One accelerator's search at the frontier's shape and target."""

    chip: str
    label: str
    search: Search
    agg: Point
    disagg: Point


# --------------------------------------------------------------------------- names for prose


def band_basis(band: Band, regime: str, what: str) -> fmt.Phrase:
    """Where a prediction's range comes from, in the page's words (the engine's `Band.basis` for the calculator):
    the share of its regime's test measurements it held, or, where the regime had too few, that it is the widest
    band of any regime."""
    if not band.widest:
        return fmt.Phrase(("the range in which ", ("share", fmt.percent(COVERAGE)), " of the ",
                           ("rows", fmt.count(band.rows, "measurements")), f" test measurements of {what} in the "
                           f"regime {regime} fell"))
    if band.rows == 0:
        return fmt.Phrase((f"the span of the bands with enough rows, as no test measurement of {what} in the regime {regime} "
                           "gives it one of its own",))
    return fmt.Phrase(("the span of the bands with enough rows, as only ", ("rows", fmt.count(band.rows, "measurements")),
                       f" test measurements of {what} in the regime {regime} are too few for one of its own"))


class Worked:
    """The worked example: the cheapest point on the worked GPU at the frontier's target."""

    def __init__(self, g: Gpu, pr: PriceSpec) -> None:
        s = g.search
        b = s.best
        if b is None:
            raise ValueError("the worked example needs a configuration meeting the target")
        self.gpu = s.setting.chip.name
        self.evaluated = fmt.count(len(s.points), "points")
        self.layouts = fmt.count(len(s.layouts), "layouts")
        self.frontier = fmt.count(len(s.frontier), "points")
        self.interactivity = per_user(1 / (s.targets.tpot_s or 1.0))
        self.config = units.configuration(b.words)
        self.mode = b.mode
        self.gpus = fmt.count(b.gpus)
        self.ttft = ms(b.ttft_s, 0)
        self.tpot = ms(b.tpot_s)
        lo, hi = b.prediction.tpot_range
        self.tpot_lo, self.tpot_hi = ms(lo), ms(hi)
        self.tpot_basis = band_basis(b.prediction.tpot_band, b.prediction.regime, "time per output token")
        self.per_gpu = per_gpu(b.per_gpu)
        self.rented = fmt.quantity(b.rented_gpus, "GPUs", 0)
        self.price = units.usd_gpu_hour(pr)
        self.tokens_per_hour = fmt.quantity(b.output_tokens_per_s * 3600 / 1e6, "Mtok/hour", 2)
        self.cost = mtok(b)
