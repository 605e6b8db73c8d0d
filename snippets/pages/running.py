"""The running example the Foundations pages share, and the banner each of them opens with.

The example is one model in one precision served to one scenario of `data/scenarios.yaml` (its request shape and
its latency target): `SCENARIO`, `MODEL`, `PRECISION`. The banner names it, with what the engine's search picks for
it on the scenario's node (`snippets.engine.search.at_scenario`, the cheapest configuration meeting the target),
and says in one sentence where the page departs from it. The pick is in the engine's words (`Point.words`), each of
its counts a figure (`running.config.<key>`: its workers and requests in flight). This module computes nothing the
engine does not: it reads the scenario and asks the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from snippets.data import Catalog
from snippets.engine.search import at_scenario
from snippets.pages.base import Page
from snippets.pages.scenario import SCENARIO as REFERENCE
from snippets.pages.scenario import SERVING, reference
from snippets.pages.units import configuration, ms
from snippets.render import fmt
from snippets.render.fmt import Figure

SCENARIO = "chat"
"""The example's scenario: InferenceX's chat-length request shape, AIConfigurator's default objective."""
MODEL, PRECISION = "llama-3.1-70b", "bf16"
"""The example's model, as Meta ships it: the site's flagship."""
PAGES = ("hbm", "roofline", "precision", "interconnect", "parallelism", "moe", "kv-cache", "cost",
         "latency-target")
"""The Foundations pages (docs/<page>.md), each of which opens with the banner."""


class RunningExample(Page):
    """The example's figures: its scenario's shape and target, and the engine's cheapest configuration meeting it."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        r = self.reference(SCENARIO)
        sc = r.scenario
        if sc.ttft_s is None or sc.tpot_s is None:
            raise ValueError(f"the running example's scenario {sc.id} needs a TTFT and a TPOT target")
        eng = r.eng
        self.model = eng.models[MODEL].name
        self.precision = eng.precisions[PRECISION].name
        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.ttft_target = ms(sc.ttft_s, 0)
        self.tpot_target = ms(sc.tpot_s, 0)
        s = at_scenario(eng, MODEL, PRECISION, SCENARIO, sweep=False)
        self.gpu = s.setting.chip.name
        best = s.best
        if best is None:
            self.config: fmt.Phrase | None = None
            self.why = s.why.text if s.why is not None else "no configuration serves it"
            return
        self.why = ""
        self.config = configuration(best.words)
        self.gpus = fmt.count(best.gpus)


def _context(cat: Catalog, scenario: str = REFERENCE) -> Figure:
    return fmt.count(reference(cat, scenario).scenario.context_tokens, "tokens")


def _name(cat: Catalog, table: str, entry: str) -> str:
    return fmt.escape_markdown(getattr(cat, table)[entry].name)


h = fmt.fig_html


def _hbm(cat: Catalog) -> str:
    return f"sizes its model and neighbours for one sequence of {h(_context(cat), 'running.context')} tokens."


def _roofline(cat: Catalog) -> str:
    from snippets.pages.roofline import PRECISION as P  # the page model imports this module

    sc = reference(cat).scenario
    return (f"deploys the example in {_name(cat, 'precisions', P)}, the precision of the time model's "
            f"calibration runs, for the reference scenario's requests of "
            f"{h(fmt.count(sc.input_tokens, 'tokens'), 'running.ref_in')} tokens in and "
            f"{h(fmt.count(sc.output_tokens, 'tokens'), 'running.ref_out')} out.")


def _precision(cat: Catalog) -> str:
    return (f"stores the example's model in each format in turn and sizes it for one sequence of "
            f"{h(_context(cat), 'running.context')} tokens (the reference scenario).")


def _interconnect(cat: Catalog) -> str:
    return ("starts from its source's rounded FP16 arithmetic, then sizes the example's model and its "
            f"larger sibling for one sequence of {h(_context(cat), 'running.context')} tokens (the reference "
            "scenario).")


def _parallelism(cat: Catalog) -> str:
    from snippets.pages.parallelism import WORKED  # the page model imports this module

    return (f"takes {_name(cat, 'models', WORKED[0])} in {_name(cat, 'precisions', WORKED[1])}, one sequence "
            f"of {h(_context(cat), 'running.context')} tokens.")


def _moe(cat: Catalog) -> str:
    from snippets.pages.moe import ACCEL, CONTEXT, GPUS  # the page model imports this module
    from snippets.pages.moe import MODEL as M
    from snippets.pages.moe import PRECISION as P

    return (f"works with a mixture of experts, {_name(cat, 'models', M)} in "
            f"{_name(cat, 'precisions', P)} on {h(fmt.count(GPUS), 'running.moe_gpus')} "
            f"{_name(cat, 'accelerators', ACCEL)} cards, at sequences of "
            f"{h(fmt.count(CONTEXT, 'tokens'), 'running.moe_context')} tokens.")


def _kv_cache(cat: Catalog) -> str:
    return (f"sizes the example's model for one sequence of {h(_context(cat), 'running.context')} tokens "
            f"and for {h(fmt.count(reference(cat, SERVING).scenario.concurrency, 'sequences'), 'running.serving')} "
            "of them at once (the reference and serving scenarios), beside models of the other attention designs.")


def _in_precision(cat: Catalog, page: str, scenario: str, precision: str, verb: str = "serves",
                  where: str = "") -> str:
    if scenario != SCENARIO:
        raise ValueError(f"{page} serves the {scenario} scenario, not the running example's {SCENARIO}: say so")
    return (f"{verb} the example's requests in {_name(cat, 'precisions', precision)}, the precision of the time "
            f"model's calibration runs{where}.")


def _cost(cat: Catalog) -> str:
    from snippets.pages.cost.common import SCENARIO as S
    from snippets.pages.cost.common import WORKED as W

    return _in_precision(cat, "the cost page", S, W[1], "prices", ", in its worked example")


def _latency_target(cat: Catalog) -> str:
    from snippets.pages.latency_target.common import PRECISION as P
    from snippets.pages.latency_target.common import SHAPE as S

    return _in_precision(cat, "the latency-target page", S, P)


DEPARTURES: dict[str, Callable[[Catalog], str]] = {
    "hbm": _hbm, "roofline": _roofline, "precision": _precision, "interconnect": _interconnect,
    "parallelism": _parallelism, "moe": _moe, "kv-cache": _kv_cache, "cost": _cost,
    "latency-target": _latency_target,
}
"""Where each Foundations page departs from the example, one sentence (after "This page")."""


def banner(cat: Catalog, page: str) -> str:
    """The banner `docs/<page>.md` opens with: the example, what the engine picks for it, where the page departs."""
    if page not in DEPARTURES:
        raise ValueError(f"{page}: not a Foundations page ({', '.join(PAGES)})")
    x = RunningExample.of(cat)
    example = (f"**Running example:** {fmt.escape_markdown(x.model)} in {fmt.escape_markdown(x.precision)}, "
               f"{h(x.n_in, 'running.n_in')} tokens in / {h(x.n_out, 'running.n_out')} out, TTFT ≤ "
               f"{h(x.ttft_target, 'running.ttft_target')}, TPOT ≤ {h(x.tpot_target, 'running.tpot_target')}")
    if x.config is not None:
        pick = (f"the engine's pick on the {fmt.escape_markdown(x.gpu)} is **{x.config.markdown('running.config')}**, "
                f"{h(x.gpus, 'running.gpus')} GPUs.")
    else:
        pick = f"on the {fmt.escape_markdown(x.gpu)} no configuration meets it: {fmt.escape_markdown(x.why)}."
    # one paragraph under no title bar: the banner stays a few lines tall
    return f'!!! example ""\n    {example}: {pick} **This page** {DEPARTURES[page](cat)}\n'


def shows(page: str) -> Callable[[Catalog], str]:
    """The banner as a page model's `shows` entry (its sources join the page's list)."""
    return partial(banner, page=page)
