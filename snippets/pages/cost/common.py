"""The cost page's choices (scenario, models, the worked deployment, the split, the loads) and its reading of the
engine: each deployment and prediction the page shows, made by the engine (`reference`, `predict`, the search)."""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog
from snippets.engine import Deployment, Layout
from snippets.engine.deployment import RefusedLayout
from snippets.engine.layout import tp_degrees
from snippets.engine.search import Point, Search, at_scenario
from snippets.engine.serving import DisaggPrediction, prefill_alone_s, usd_per_mtok_input
from snippets.engine.specs import PriceSpec
from snippets.engine.timing import Prediction, predict
from snippets.pages import units
from snippets.pages.scenario import Reference, reference
from snippets.pages.units import tps, usd
from snippets.render import fmt
from snippets.render.fmt import Figure

SCENARIO = "chat"
"""The page's request shape and latency target (data/scenarios.yaml): InferenceX's chat turn served to
AIConfigurator's default objective."""
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
WORKED = ("llama-3.1-70b", "fp8", "h100-sxm")
"""The worked example: the model and precision of the time model's calibration runs, on the scenario's GPU."""
SPLIT = ("llama-3.1-70b", "fp8", "h100-sxm", (2, 4, 8))
"""Replicas against a larger TP: the GPUs of one node cut into TP2, TP4 or TP8 replicas."""
NIM_SWEEP = "nim180-llama33-70b-fp8-2xh100-in5000-out500-c"
"""The measured concurrency sweep whose plateau gives the latency-bound share of peak throughput."""
TTFT_BUDGET_S = 1.0
"""The page's budget for time to first token of an interactive service: one second."""
FLEET_SHARES = (0.5, 0.25)
"""Illustrative average loads of a fleet sized for its busiest hour: not measured, a sensitivity."""
SECONDS_PER_HOUR = 3600


# --------------------------------------------------------------------------- formatting

def usd_mtok(x: float, price: PriceSpec) -> Figure:
    """Dollars per million tokens: three decimals below a dollar, two above, the month of their price beside them."""
    return units.usd_mtok(x, price)


def _ms_digits(seconds: float) -> int:
    """Decimals of a time in ms on this page: none from 100 ms, one below."""
    return 0 if seconds >= 0.1 else 1


def ms(seconds: float) -> Figure:
    return fmt.quantity(seconds * 1e3, "ms", _ms_digits(seconds), show_unit=True)


# Each prediction a table shows carries its range (`units.banded`), where 80 % of its regime's test measurements fell,
# as the calculator writes one ("28.8 ms, 26.2–66.8"); the range's basis is in the figure's title.

def ms_banded(x: Prediction | DisaggPrediction) -> Figure:
    """A prediction's time per output token with its range, rounded as the page's times are."""
    return units.tpot_banded(x, _ms_digits(x.tpot_s))


def ttft_banded(x: Prediction) -> Figure:
    """A prediction's time to first token with its range (its prefill regime's), rounded as the page's times are."""
    return units.ttft_banded(x, _ms_digits(x.ttft_s))


def gpu_label(name: str) -> str:
    """'NVIDIA H100 SXM' -> 'H100 SXM'; 'NVIDIA B200 (HGX B200)' -> 'B200'; 'AMD Instinct MI300X' -> 'MI300X'."""
    return units.gpu_label(name, units.VENDORS, bare=True)


# --------------------------------------------------------------------------- reading the engine

def at_shape(r: Reference, model: str, precision: str, accelerator: str, layout: Layout | None = None) -> Deployment:
    """`model` on `accelerator`'s node, its KV cache counted at the scenario's request length."""
    return r.deployment(model, precision, accelerator=accelerator, layout=layout, concurrency=1,
                        context_tokens=r.scenario.input_tokens + r.scenario.output_tokens)


def run(d: Deployment, concurrency: int) -> Prediction:
    sc = d.setting.scenario
    return predict(d, concurrency, sc.input_tokens, sc.output_tokens)


def target(r: Reference, model: str, precision: str, accelerator: str) -> Search:
    """The search at the scenario's latency target on `accelerator`'s node (any layout of up to eight nodes,
    aggregated or disaggregated): its cheapest configuration meeting the target (`best`, None where none does) and
    the one the layout policy recommends (`recommended`)."""
    return at_scenario(r.eng, model, precision, SCENARIO, accelerator=accelerator, sweep=False)


def target_cost(x: Point) -> float:
    c = x.usd_per_mtok
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def full(d: Deployment) -> Prediction:
    """The deployment with as many requests in flight as its KV cache holds at the page's request length."""
    return run(d, max(1, d.max_concurrency))


def out_cost(x: Prediction) -> float:
    c = x.usd_per_mtok_output
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def in_cost(d: Deployment, x: Prediction) -> float:
    """Dollars per million prompt tokens were the replica only to prefill (`serving.usd_per_mtok_input`)."""
    c = usd_per_mtok_input(d, x)
    if c is None:
        raise ValueError("the page needs a price for this accelerator in data/prices.yaml")
    return c


def cheapest_layout(r: Reference, model: str, precision: str, accelerator: str) -> Deployment:
    """The TP degree inside one node (no pipeline) with the lowest $ per output token at its KV maximum; the
    scenario policy's layout (pipeline stages across nodes) where no single node holds the model.

    A helper the engine lacks: its layout policies minimise GPUs, not cost per token."""
    base = at_shape(r, model, precision, accelerator)
    found: list[Deployment] = []
    for t in tp_degrees(base.setting.model.architecture, base.setting.node.gpus):
        try:
            found.append(at_shape(r, model, precision, accelerator, Layout(t)))
        except RefusedLayout:
            continue
    return min(found or [base], key=lambda d: out_cost(full(d)))


def priced(r: Reference) -> list[str]:
    """The accelerators with a price the site uses, cheapest GPU-hour first."""
    return sorted(r.eng.prices, key=lambda a: r.eng.prices[a].usd_per_gpu_hour)


@dataclass(frozen=True)
class Row:
    d: Deployment
    one: Prediction
    most: Prediction
    at: Point | None
    """The cheapest configuration meeting the scenario's target: what the page's comparisons of cost are about."""
    rec: Point | None = None
    """The configuration the layout policy recommends among those meeting the target: what the cost table shows."""
    saving: float = 0.0
    """How much less the cheapest costs per output token than the recommended (0: they are the same)."""

    @property
    def label(self) -> str:
        s = self.d.setting
        return f"{s.model.name} {s.precision.name} on {gpu_label(s.chip.name)}"


def grid(r: Reference) -> list[Row]:
    out = []
    for m in MODELS:
        for p in PRECISIONS:
            for a in priced(r):
                d = cheapest_layout(r, m, p, a)
                s = target(r, m, p, a)
                out.append(Row(d, run(d, 1), full(d), s.best, s.recommended, s.saving))
    return out



def nim_share(cat: Catalog) -> tuple[float, int, float, float]:
    """From the measured NIM sweep: the plateau (most output tokens/s of any concurrency), the highest concurrency
    whose TTFT stays within the budget, its throughput, and that throughput's share of the plateau."""
    sweep = {k: m for k, m in cat.measurements.items() if k.startswith(NIM_SWEEP)}
    top = cat.measurements[max(sweep, key=lambda k: sweep[k].output_tokens_per_s or 0.0)]
    plateau = top.output_tokens_per_s or 0.0
    ok = [k for k, m in sweep.items() if m.ttft_ms is not None and m.ttft_ms <= TTFT_BUDGET_S * 1e3 and m.concurrency]
    best = cat.measurements[max(ok, key=lambda k: sweep[k].concurrency or 0)]
    t = best.output_tokens_per_s or 0.0
    return plateau, best.concurrency or 0, t, t / plateau


# --------------------------------------------------------------------------- tables and chart


def split_rows(cat: Catalog) -> list[tuple[Deployment, Prediction, Prediction]]:
    r = reference(cat, SCENARIO)
    m, p, a, tps_ = SPLIT
    out = []
    for t in tps_:
        d = at_shape(r, m, p, a, Layout(t))
        out.append((d, run(d, 1), full(d)))
    return out


def in_node(d: Deployment) -> int:
    """Replicas of `d` the GPUs of one node hold: the split's budget, whatever unit the price rents in."""
    return d.gpus_per_node // d.gpus



def load_rows(cat: Catalog) -> list[tuple[str, float]]:
    _, _, _, share = nim_share(cat)
    return [("peak: the KV cache full", 1.0),
            (f"within a {TTFT_BUDGET_S:g} s first-token budget (measured NIM share)", share),
            *((f"fleet at {s:.0%} of peak (illustrative)", s) for s in FLEET_SHARES)]



class Worked:

    def __init__(self, d: Deployment) -> None:
        s = d.setting
        if s.price is None:
            raise ValueError(f"{s.chip.name} has no price in data/prices.yaml")
        pr = s.price
        one, most = run(d, 1), full(d)
        self.model = s.model.name
        self.precision = s.precision.name
        self.gpu = s.chip.name
        self.layout = d.layout.label
        self.price = usd(pr.usd_per_gpu_hour, pr)
        self.unit = fmt.count(pr.gpus_per_unit, "GPUs")
        self.whole_units = pr.gpus_per_unit > 1
        """Whether the price rents whole instances of several GPUs (the worked example then says how they fill)."""
        self.rental_hour = usd(pr.usd_per_gpu_hour * pr.gpus_per_unit, pr)
        self.replicas = fmt.count(d.replicas_per_rental, "replicas")
        self.replica_gpus = fmt.count(d.rented_gpus_per_replica, "GPUs")
        self.replica_hour = usd(d.cost_per_replica_hour or 0.0, pr)
        self.most_in_flight = fmt.count(most.in_flight, "sequences")
        self.most_tps = tps(most.output_tokens_per_s)
        self.most_tph = fmt.quantity(most.output_tokens_per_s * SECONDS_PER_HOUR / 1e6, "Mtok/hour", 2)
        self.most_cost = usd_mtok(out_cost(most), pr)
        self.most_itl = ms(most.tpot_s)
        self.one_tps = tps(one.output_tokens_per_s)
        self.one_cost = usd_mtok(out_cost(one), pr)
        self.one_over_most = fmt.ratio(out_cost(one) / out_cost(most), 0, basis="$/Mtok at one request ÷ at the KV maximum")
        self.in_tps = tps(s.scenario.input_tokens / prefill_alone_s(d, s.scenario.input_tokens))
        self.in_cost = usd_mtok(in_cost(d, most), pr)
        self.out_over_in = fmt.ratio(out_cost(most) / in_cost(d, most), 1, basis="output ÷ input $/Mtok, KV maximum")

