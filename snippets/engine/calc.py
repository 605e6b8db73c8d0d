"""The calculator page's one call: the form's values in, the engine's answer out. Standard library only.

The page "Size your deployment" runs this module in the reader's browser (Pyodide) and the build runs the
same module for the answer a reader without JavaScript sees. `answer(eng, form)` reads the form's fields
(`data/` ids and numbers, as strings), deploys with the engine (`deploy(setting(...))`, the layout chosen
by the policy) and returns the command line's report (`snippets.engine.__main__.report`) with every
figure the page shows already formatted, and the memory bar's parts as shares of the GPU. The page's
JavaScript only writes these strings into the page; it computes nothing.

The form's fields are checked by the command line's rules (`snippets.engine.requests`): a context beyond the
model's is refused with its limit, a pasted config.json is bounded before any work, a field the form does not
have (a mistyped address parameter) is refused by name, and a concurrency beyond what the KV cache admits is
answered with how many run and how many queue. With a request rate (`rate`), the answer says what one replica of
the configuration does with requests arriving at it (`at_rate_outputs`: `snippets.engine.serving.at_rate`). With a
latency target (`ttft_ms`, `tpot_ms`, and the rate), the answer also holds the configuration recommended to meet
it (and the cheapest where it differs) and the throughput-interactivity frontier, from
`snippets.engine.search.search` (`target`, `frontier_svg`).
`answer` never raises: any failure of the engine is an error the page shows beside the inputs.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, TypeVar

from snippets.engine.__main__ import report
from snippets.engine.bands import COVERAGE
from snippets.engine.codec import decode
from snippets.engine.deployment import NoLayout, RefusedLayout, Setting, setting
from snippets.engine.hf import ConfigError, arch_from_config, kept_from_config
from snippets.engine.memory import vision_bytes
from snippets.engine.params import total_params
from snippets.engine.requests import (
    MAX_CONCURRENCY,
    MAX_TOKENS,
    RequestError,
    check_config_text,
    check_request,
    deploy_admitting,
    queue_split,
)
from snippets.engine.search import MEETS, Search, Space, search
from snippets.engine.serving import Prediction, at_rate
from snippets.engine.specs import EngineCatalog, ModelSpec, PriceSpec

_V = TypeVar("_V")

SCENARIO = "serving"
"""The scenario the form starts from (its concurrency and latency target) and takes what it does not ask for
(node, time model, KV precision)."""
CUSTOM = "custom"
"""The model field's value for a pasted config.json."""
FIELDS = ("model", "precision", "accelerator", "context", "concurrency", "memory_policy", "layout_policy",
          "ttft_ms", "tpot_ms", "rate", "meet", "config")
"""The form's fields, which are also the only parameters the page's address may carry."""
TARGETS = ("ttft_ms", "tpot_ms", "rate")
MAX_CONTEXT = MAX_TOKENS
MAX_TARGET_MS = 3_600_000.0
"""A latency target of up to an hour; beyond it a target no longer selects anything."""
MAX_RATE = 1e6
"""Requests per second: a million, beyond the busiest public APIs' published peaks."""
MAX_PARAMS = 1e14
"""Parameters a pasted config may count: 100 trillion, a hundred times the largest model in data/."""
MAX_WEIGHT_NODES = 16
"""Nodes whose memory a pasted model's weights alone may fill: twice the most a search replica spans
(`search.MAX_NODES`); beyond it the sizing's walk over pipeline stages would take seconds, and no engine would
serve one replica across so many nodes."""
GiB = 2**30

BAR_PARTS = (("weights", "Weights"), ("kv_cache", "KV cache"), ("activations", "Activations"),
             ("runtime", "Runtime (outside PyTorch)"), ("free", "Free in the pool"),
             ("headroom", "Outside the engine's pool"))


class InputError(ValueError):
    """A form value the calculator cannot use; the message says which and why."""


@dataclass(frozen=True)
class Inputs:
    model: str
    precision: str
    accelerator: str
    context: int
    concurrency: int
    memory_policy: str
    layout_policy: str
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    rate: float | None = None
    meet: str = "prediction"
    """What must fall within the targets (`search.MEETS`): the prediction, or the slow edge of its error band."""
    config: str = ""

    def query(self) -> dict[str, str]:
        """The inputs as the form (and the page's URL) spells them; an empty target is no target."""
        q = {k: _spell(getattr(self, k)) for k in FIELDS if k != "config"}
        if self.model == CUSTOM:
            q["config"] = self.config
        return q


def _spell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def defaults(eng: EngineCatalog, model: str = "llama-3.1-70b", precision: str = "fp8") -> Inputs:
    """The default scenario's inputs: its context, concurrency, latency target, policies and node's accelerator
    (no request rate: the answer is then one configuration's)."""
    sc = eng.scenarios[SCENARIO]
    return Inputs(model=model, precision=precision, accelerator=eng.nodes[sc.node].chip,
                  context=sc.context_tokens, concurrency=sc.concurrency, memory_policy=sc.memory_policy,
                  layout_policy=sc.layout_policy, ttft_ms=None if sc.ttft_s is None else sc.ttft_s * 1e3,
                  tpot_ms=None if sc.tpot_s is None else sc.tpot_s * 1e3)


def _count(text: str, what: str, low: int, high: int) -> int:
    try:
        n = int(str(text).strip().replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(f"{what} must be a whole number, not {text!r}") from None
    if not low <= n <= high:
        raise InputError(f"{what} must be between {low:,} and {high:,}, not {n:,}")
    return n


def _amount(text: str, what: str, high: float) -> float | None:
    """A positive number or, empty, None (no target)."""
    t = str(text).strip().replace(",", "").replace("_", "")
    if not t:
        return None
    try:
        x = float(t)
    except ValueError:
        raise InputError(f"{what} must be a number, not {text!r}") from None
    if not (math.isfinite(x) and 0 < x <= high):
        raise InputError(f"{what} must be above 0 and at most {high:,.0f}, not {text}")
    return x


def _pick(table: Mapping[str, Any], value: str, what: str, field: str) -> str:
    if value not in table:
        raise InputError(f"{field}: unknown {what} {value!r}; known: {', '.join(sorted(table))}")
    return value


def read(eng: EngineCatalog, form: Mapping[str, str]) -> Inputs:
    """The form's values, checked against the catalog; an absent field takes the default scenario's, a field the
    form does not have (from a mistyped address) is refused by name. An empty target is no target."""
    unknown = sorted(set(form) - set(FIELDS))
    if unknown:
        raise InputError(f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown[:5]))}; "
                         f"the calculator reads {', '.join(FIELDS)}")
    d = defaults(eng)
    get = {k: str(form[k]) if k in form else _spell(getattr(d, k)) for k in FIELDS}
    for k in ("model", "precision", "accelerator", "context", "concurrency", "memory_policy", "layout_policy",
              "meet"):
        if not get[k].strip():
            get[k] = _spell(getattr(d, k))
    model = get["model"]
    if model != CUSTOM:
        _pick(eng.models, model, "model", "model")
    _pick(eng.precisions, get["precision"], "precision", "precision")
    _pick(eng.chips, get["accelerator"], "accelerator", "accelerator")
    _pick(eng.memory_policies, get["memory_policy"], "memory policy", "memory_policy")
    _pick(eng.layout_policies, get["layout_policy"], "layout policy", "layout_policy")
    _pick(dict.fromkeys(MEETS), get["meet"], "way to meet the targets", "meet")
    return Inputs(model=model, precision=get["precision"], accelerator=get["accelerator"],
                  context=_count(get["context"], "context (input + output tokens)", 2, MAX_CONTEXT),
                  concurrency=_count(get["concurrency"], "concurrency (requests in flight)", 1, MAX_CONCURRENCY),
                  memory_policy=get["memory_policy"], layout_policy=get["layout_policy"],
                  ttft_ms=_amount(get["ttft_ms"], "the TTFT target (ms)", MAX_TARGET_MS),
                  tpot_ms=_amount(get["tpot_ms"], "the TPOT target (ms)", MAX_TARGET_MS),
                  rate=_amount(get["rate"], "the request rate (requests/s)", MAX_RATE), meet=get["meet"],
                  config=get["config"] if model == CUSTOM else "")


def custom_model(text: str) -> ModelSpec:
    """A pasted config.json's model, bounded before any work (`requests.check_config_text`): text, nesting,
    counts, strings, numbers, the sizes it declares, and the parameters they count."""
    cfg = check_config_text(text)
    arch = arch_from_config(cfg)
    n = float(total_params(arch))
    if n > MAX_PARAMS:
        raise InputError(f"config.json counts {n:,.0f} parameters, more than the {MAX_PARAMS:,.0f} the calculator "
                         f"sizes")
    name = cfg.get("_name_or_path") or cfg.get("name_or_path")
    label = name if isinstance(name, str) and name else f"your {cfg['model_type']} model"
    return ModelSpec(id=CUSTOM, name=label, nominal_params=n, stated_params=n, architecture=arch,
                     keeps_16bit=MappingProxyType(kept_from_config(cfg)))


def _out(value: float | int | str | None, unit: str, text: str) -> dict[str, Any]:
    return {"value": None if value is None else (value if isinstance(value, str) else repr(value)),
            "unit": unit, "text": text}


def _banded(text: str, rng: Sequence[float] | None, digits: int = 1) -> str:
    """A figure's text and, where it has one that is not a point, the band that held 80 % of its regime's test
    errors: "12.7 ms, 11.0–15.2"."""
    if rng is None or not rng[1] > rng[0]:
        return text
    return f"{text}, {rng[0]:,.{digits}f}–{rng[1]:,.{digits}f}"


def _money(x: float | None, unit: str, price: PriceSpec | None, rng: Sequence[float] | None = None) -> dict[str, Any]:
    """A cost, the month of the price it rests on beside it (every cost on the site shows how old its price is), and
    where it has one the band its throughput's carries, inverted: "$1.23, 1.10–1.52 (Oct 2026 price)"."""
    if x is None or price is None:
        return _out(None, unit, "no price in data")
    return _out(x, unit, f"{_banded(f'${x:,.2f}', rng, 2)} ({price.as_of or 'undated'} price)")


def compute(eng: EngineCatalog, inputs: Inputs,
            target_of: Callable[[EngineCatalog, Inputs, int, int], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The engine's report for `inputs`, with the page's figures and bar parts, and with a latency target the
    cheapest configuration meeting it (`target`) and the frontier. Raises InputError, RequestError, ConfigError,
    NoLayout or RefusedLayout with a one-line reason. Where the time model lacks data (a layout across nodes whose
    node records no network), the report is None, the times say "not predicted" and `note` says why. The target
    section comes from `target_of` (default `target`; a `Calculator` passes its own, which keeps recent searches)."""
    if inputs.model == CUSTOM:
        if not inputs.config.strip():
            raise InputError("paste a config.json to size your own model")
        eng = replace(eng, models=MappingProxyType({**eng.models, CUSTOM: custom_model(inputs.config)}))
        _bound_weights(eng, inputs)
    spec = eng.models[inputs.model]
    n_out = min(eng.scenarios[SCENARIO].output_tokens, inputs.context - 1)  # as `setting` splits the context
    check_request(eng, inputs.model, input_tokens=inputs.context - n_out, output_tokens=n_out,
                  concurrency=inputs.concurrency, accelerator=inputs.accelerator, scenario=SCENARIO,
                  context_name="context (input + output tokens)")  # the command line's rules
    notes = []

    def make(k: int) -> Setting:
        return setting(eng, inputs.model, inputs.precision, SCENARIO, accelerator=inputs.accelerator,
                       layout_policy=inputs.layout_policy, concurrency=k, context_tokens=inputs.context,
                       memory_policy=inputs.memory_policy)

    d = deploy_admitting(make, inputs.concurrency)
    st = d.setting
    sc = st.scenario
    rep: dict[str, Any] | None
    try:
        rep = report(d, inputs.concurrency, sc.input_tokens, sc.output_tokens)
    except ValueError as exc:  # a layout across nodes whose node records no network: sized, but not timed
        rep = None
        notes.append(f"Times and cost per token are not predicted: {exc}.")
    if st.vision:  # the weights in the bar hold it: say so, or a reader sums the checkpoint and finds them short
        enc = vision_bytes(st.model.architecture, st.precision, d.layout.tp)
        notes.append(f"The weights include the checkpoint's image encoder, {enc / GiB:,.2f} GiB a GPU in 16 bits: "
                     f"{st.memory_policy.engine} builds it unless images are limited to none.")
    split = queue_split(inputs.concurrency, d.max_concurrency if rep is None else rep["in_flight"])
    if split.queued:
        notes.append(f"Of the {inputs.concurrency:,} requests in flight, {split.text}: the layout is the one the "
                     f"policy chooses for {sc.concurrency:,} at once, and the queue's wait is in the time to first "
                     f"token.")
    if rep is not None:  # a range that is not its regime's own says so
        widest = [b["basis"] for k in ("ttft_ms", "tpot_ms") if (b := rep["bands"][k])["widest"]]
        if widest:
            notes.append(f"The ranges beside the times: {'; '.join(widest)}.")
        if (b := rep["bands"]["output_tokens_per_s"])["widest"]:
            notes.append(f"The ranges beside the throughput and the cost per token: {b['basis']}.")
        for key, what in (("ttft_ms", "time to first token"), ("tpot_ms", "time per output token"),
                          ("output_tokens_per_s", "throughput")):
            v, (lo, hi), b = rep[key], rep[f"{key}_range"], rep["bands"][key]
            if not b["widest"] and hi > lo and not lo <= v <= hi:  # the regime's runs all missed one way
                side, other = ("above", "below") if v < lo else ("below", "above")
                time = key != "output_tokens_per_s"  # a time's range above it: slower; a throughput's: faster
                runs = "slower" if (v < lo) == time else "faster"
                also = "" if time else f", and the cost per token's {other} it"
                notes.append(f"The range beside the {what} lies {side} it{also}: in its regime ({b['regime']}) at "
                             f"least {COVERAGE:.0%} of the test measurements came out {runs} than the engine predicts "
                             "them.")
    note = " ".join(notes)
    m = d.memory
    parts = {"weights": m.weights, "kv_cache": m.kv_cache, "activations": m.activations, "runtime": m.non_torch,
             "free": m.free, "headroom": m.capacity - m.pool}
    bar = [{"part": k, "label": label, "gib": repr(parts[k] / GiB), "text": f"{parts[k] / GiB:,.1f} GiB",
            "percent": f"{100 * parts[k] / m.capacity:.3f}"} for k, label in BAR_PARTS]

    def timing(key: str, unit: str, text: str) -> dict[str, Any]:
        """The figure, and where the report carries it the band that held 80 % of the regime's test errors."""
        if rep is None:
            return _out(None, unit, "not predicted")
        return _out(rep[key], unit, _banded(text.format(rep[key]), rep.get(f"{key}_range")))

    per_replica = d.cost_per_replica_hour
    kv = d.kv_cache
    opened = None if rep is None or inputs.rate is None else at_rate(d, inputs.rate, sc.input_tokens, sc.output_tokens)
    outputs = {
        "model_name": _out(spec.name, "", spec.name),
        "params": _out(d.params, "parameters", f"{d.params / 1e9:,.2f} billion"),
        "gpus": _out(d.gpus, "GPUs", f"{d.gpus:,}"),
        "gpus_rented": _out(d.gpus_rented, "GPUs", f"{d.gpus_rented:,}"),
        "nodes": _out(d.nodes, "nodes", f"{d.nodes:,}"),
        "layout": _out(d.layout.label, "", d.layout.label),
        "why": _out(d.why, "", d.why),
        "input_tokens": _out(sc.input_tokens, "tokens", f"{sc.input_tokens:,}"),
        "output_tokens": _out(sc.output_tokens, "tokens", f"{sc.output_tokens:,}"),
        "max_concurrency": _out(d.max_concurrency, "sequences", f"{d.max_concurrency:,}"),
        "kv_tokens": _out(kv.tokens, "tokens", f"{kv.tokens:,} tokens, each GPU holding its share of every token" + (
            f" ({st.memory_policy.engine} logs: {'; '.join(kv.log)})" if kv.log else "")),
        "running": _out(split.running, "sequences", f"{split.running:,} run, {split.queued:,} queue"),
        "queued": _out(split.queued, "sequences", f"{split.queued:,}"),
        "capacity": _out(m.capacity / GiB, "GiB", f"{m.capacity / GiB:,.1f} GiB"),
        "ttft_ms": timing("ttft_ms", "ms", "{:,.1f} ms"),
        "tpot_ms": timing("tpot_ms", "ms", "{:,.1f} ms"),
        "tokens_per_s_per_gpu": timing("output_tokens_per_s_per_gpu", "tokens/s/GPU", "{:,.1f} tokens/s per GPU"),
        "cost_per_hour": _money(d.cost_per_hour, "USD/hour", st.price),
        "cost_per_replica_hour": _money(per_replica, "USD/hour", st.price),
        "rental_share": _out(d.replicas_per_rental, "replicas", f"{d.gpus:,} of {d.gpus_rented:,} rented GPUs"),
        "cost_per_mtok": (_money(rep["usd_per_mtok_output"], "USD/Mtok", st.price, rep["usd_per_mtok_output_range"])
                          if rep is not None
                          else _out(None, "USD/Mtok", "not predicted")),
        "weight_only": _out("yes" if d.weight_only else "no", "",
                            f"stored in {st.precision.name}, computed in {d.compute_format.upper()}" if d.weight_only
                            else f"computed in {st.precision.name}"),
        "note": _out(note, "", note),
        "at_rate": at_rate_outputs(opened, inputs.rate),
    }
    return {"report": rep, "outputs": outputs, "bar": bar,
            "bar_label": "Memory per GPU: " + ", ".join(f"{b['label']} {b['text']}" for b in bar),
            "target": (target_of or target)(eng, inputs, sc.input_tokens, sc.output_tokens)}


def at_rate_outputs(x: Prediction | None, rate: float | None) -> dict[str, Any]:
    """What one replica does with requests arriving at `rate` a second (`x`, from `at_rate`, None where the times are
    not predicted): the requests it holds on average (the rate times a request's life, Little's law) with their TTFT
    and TPOT; or, where the rate is at or beyond what it finishes with every slot it admits full, what it does
    finish, and that the queue grows for as long as requests keep coming."""
    if rate is None:
        return _out(None, "requests", "give a request rate")
    if x is None:
        return _out(None, "requests", "not predicted")
    if x.saturated:
        done = x.requests_per_s
        return _out(done, "requests/s", f"beyond what it finishes: with all {x.in_flight:,} requests it admits in "
                                        f"flight it finishes {done:,.2f} a second, so at {rate:,g} the queue grows "
                                        f"(a latency target sizes the replicas)")
    return _out(x.mean_in_flight, "requests",
                f"{x.mean_in_flight:,.1f} requests in flight on average at {rate:,g} a second: time to first token "
                f"{x.ttft_s * 1e3:,.1f} ms, time per output token {x.tpot_s * 1e3:,.1f} ms")


def _bound_weights(eng: EngineCatalog, inputs: Inputs) -> None:
    """Refuse a pasted model whose weights alone fill more than MAX_WEIGHT_NODES nodes of the accelerator."""
    node = eng.node_of(inputs.accelerator)
    if node is None:
        return
    spec, prec, chip = eng.models[inputs.model], eng.precisions[inputs.precision], eng.chips[inputs.accelerator]
    weights = spec.nominal_params * prec.bits_per_param / 8
    room = MAX_WEIGHT_NODES * node.gpus * chip.capacity_bytes
    if weights > room:
        raise InputError(f"{spec.name}'s weights in {prec.name} come to {weights / 1e12:,.1f} TB, more than "
                         f"{MAX_WEIGHT_NODES} nodes of {node.gpus} {chip.name} hold ({room / 1e12:,.1f} TB): "
                         f"the calculator refuses a model whose weights alone fill more than {MAX_WEIGHT_NODES} nodes")


# --------------------------------------------------------------------------- the latency target


def target(eng: EngineCatalog, inputs: Inputs, n_in: int, n_out: int, space: Space | None = None) -> dict[str, Any]:
    """The recommended configuration meeting the form's TTFT and TPOT targets (with the rate, the replicas and $ per
    hour that carry it), the cheapest where it differs, and the frontier, from `search` (given `space`, with the
    predictions it keeps); `asked` False when the form gives no target."""
    if inputs.ttft_ms is None and inputs.tpot_ms is None:
        return {"asked": False, "text": "Give a TTFT or TPOT target for the recommended configuration meeting it.",
                "outputs": {}, "svg": "", "frontier": []}
    res = search(eng, inputs.model, inputs.precision, inputs.accelerator, n_in, n_out, ttft_ms=inputs.ttft_ms,
                 tpot_ms=inputs.tpot_ms, rate=inputs.rate, scenario=SCENARIO, memory_policy=inputs.memory_policy,
                 space=space, meet=inputs.meet)
    return {"asked": True, **target_outputs(res), "svg": frontier_svg(res),
            "frontier": [{"mode": p.mode, "label": p.label, "per_user": repr(p.per_user), "per_gpu": repr(p.per_gpu)}
                         for p in res.frontier]}


def _ms(x: float | None) -> str:
    return "none" if x is None else f"{x:,.0f} ms" if x >= 100 else f"{x:,.1f} ms"


def _pct(x: float) -> str:
    """A share as a percentage, one decimal below 10%: 3.1%, 22% (as the pages' `fmt.percent` writes it)."""
    return f"{x * 100:,.1f}%" if x < 0.1 else f"{x * 100:,.0f}%"


def cheapest_words(res: Search) -> str:
    """Where the cheapest configuration differs from the recommended one, what it is and how much less it costs, and
    the rule that passed it over; "" where they are the same."""
    best, rec = res.best, res.recommended
    if best is None or rec is None or res.saving <= 0:
        return ""
    gpus = res.plan.rented_gpus if res.plan is not None else best.gpus
    saves = (f"needs {_pct(res.saving)} fewer rented GPUs for the rate" if res.plan is not None
             else f"is {_pct(res.saving)} cheaper per output token")
    label = res.served.label if res.served is not None else best.label  # with a rate, the workers that carry it
    return (f"the cheapest, {label} on {gpus:,} GPUs, {saves}: disaggregated serving is recommended only where "
            f"it saves at least {_pct(res.min_saving)}")


def target_outputs(res: Search) -> dict[str, Any]:
    """The target section's figures: the recommended configuration's mode, layout, GPUs, times, $/Mtok, and for a
    rate its replicas (or workers), rented GPUs and $/hour; the cheapest where it differs; or why nothing meets the
    targets."""
    t = res.asked or res.targets
    asked = (f"TTFT at most {_ms(None if t.ttft_s is None else t.ttft_s * 1e3)}, "
             f"TPOT at most {_ms(None if t.tpot_s is None else t.tpot_s * 1e3)}")
    if res.meet == "band":
        asked += " at the slow edge of each prediction's error band"
    best, plan, cheapest = res.recommended, res.recommended_plan, res.best
    if best is None or cheapest is None:
        why = res.why.text if res.why is not None else "no configuration meets the targets"
        return {"met": False, "text": f"Nothing meets {asked}: {why}.",
                "outputs": {"t_mode": _out(None, "", "none meets the targets"),
                            "t_cheapest": _out(None, "USD/Mtok", "none meets the targets")}}
    price = best.deployment.setting.price
    z = best.as_dict()
    differs = cheapest_words(res)
    c_cost = _money(cheapest.usd_per_mtok, "USD/Mtok", price)
    out = {
        "t_mode": _out(best.mode, "", best.mode),
        "t_config": _out(best.label, "", best.label),
        "t_gpus": _out(best.gpus, "GPUs", f"{best.gpus:,}"),
        "t_ttft_ms": _out(best.ttft_s * 1e3, "ms", _banded(f"{best.ttft_s * 1e3:,.1f} ms",
                                                            [x * 1e3 for x in best.prediction.ttft_range])),
        "t_tpot_ms": _out(best.tpot_s * 1e3, "ms", _banded(f"{best.tpot_s * 1e3:,.1f} ms",
                                                            [x * 1e3 for x in best.prediction.tpot_range])),
        "t_per_gpu": _out(best.per_gpu, "tokens/s/GPU", _banded(f"{best.per_gpu:,.1f} tokens/s per GPU",
                                                                 best.prediction.throughput_per_gpu_range)),
        "t_cost_per_mtok": _money(best.usd_per_mtok, "USD/Mtok", price, best.usd_per_mtok_range),
        "t_cheapest": {**c_cost, "text": (f"{differs[0].upper()}{differs[1:]}. It costs {c_cost['text']} per "
                                          "million output tokens.") if differs else "The recommended configuration"},
    }
    if "prefill_layout" in z:
        out["t_layout"] = _out(best.layout.label, "", f"prefill {z['prefill_workers']} × "
                               f"{best.prefill_layout.label if best.prefill_layout else ''}, decode "
                               f"{z['decode_workers']} × {best.layout.label}")
    else:
        out["t_layout"] = _out(best.layout.label, "", best.layout.label)
    if plan is None:
        out["t_replicas"] = _out(None, "", "give a request rate")
        out["t_rented"] = _out(None, "GPUs", "give a request rate")
        out["t_cost_per_hour"] = _out(None, "USD/hour", "give a request rate")
    else:
        workers = (f"{plan.replicas:,} replicas" if best.mode == "aggregated" else
                   f"{plan.prefill_workers:,} prefill and {plan.replicas:,} decode workers")
        there = ""
        served = res.recommended_served
        if served is not None:  # the workers at their share of the rate, not the configuration's own load
            cost = served.usd_per_mtok  # with the month of its price, as every cost on the site
            there = (f": TTFT {_ms(served.ttft_s * 1e3)}, TPOT {_ms(served.tpot_s * 1e3)}"
                     + ("" if cost is None or price is None else
                        f", {_money(cost, 'USD/Mtok', price)['text']} per million output tokens") + " at that rate")
        out["t_replicas"] = _out(plan.replicas, "replicas", f"{workers} for {plan.rate:,g} requests/s{there}")
        out["t_rented"] = _out(plan.rented_gpus, "GPUs", f"{plan.rented_gpus:,} ({plan.gpus:,} used)")
        out["t_cost_per_hour"] = _money(plan.usd_per_hour, "USD/hour", price)
    text = f"The recommended configuration meeting {asked}" + (f"; {differs}." if differs else
                                                              ", which is also the cheapest.")
    return {"met": True, "text": text, "outputs": out}


SVG_W, SVG_H, PAD_L, PAD_B, PAD_T, PAD_R = 640, 360, 64, 44, 12, 16
MODE_COLOURS = {"aggregated": "#1565c0", "disaggregated": "#ef6c00"}


def _axis(lo: float, hi: float) -> tuple[Callable[[float], float], list[float]]:
    """A log scale over [lo, hi] (widened to whole decades' 1-2-5 ticks) as a function to [0, 1], and its ticks."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b += 1
    ticks = [m * 10**e for e in range(a, b + 1) for m in (1, 2, 5) if lo / 2 <= m * 10**e <= hi * 2]

    def f(x: float) -> float:
        return (math.log10(x) - a) / (b - a)
    return f, ticks


NARROW_W = 360
"""The phone's drawing: as the site's charts (snippets/render/charts.py), each chart comes twice, 360 units wide for a
phone's column and SVG_W for a desktop's, so its 12-unit labels read at the same size on both; the stylesheet shows
one (sa-chart--narrow, sa-chart--wide)."""


def frontier_svg(res: Search) -> str:
    """The throughput-interactivity frontier as an SVG chart (log axes), drawn for a phone and for a desktop: each
    frontier point by mode, the recommended configuration ringed (and the cheapest, dashed, where it differs), the
    TPOT target as a vertical line."""
    return _frontier_svg(res, NARROW_W, "sa-chart--narrow") + _frontier_svg(res, SVG_W, "sa-chart--wide")


def _frontier_svg(res: Search, width: int, kind: str) -> str:
    pts = list(res.frontier)
    for extra in (res.best, res.recommended):
        if extra is not None and extra not in pts:
            pts.append(extra)
    if not pts:
        return ""
    xs = [p.per_user for p in pts]
    ys = [p.per_gpu for p in pts]
    t = res.targets
    if t.tpot_s is not None:
        xs.append(1 / t.tpot_s)
    fx, xt = _axis(min(xs), max(xs))
    fy, yt = _axis(min(ys), max(ys))
    w, h = width - PAD_L - PAD_R, SVG_H - PAD_T - PAD_B

    def X(v: float) -> float:
        return PAD_L + w * fx(v)

    def Y(v: float) -> float:
        return PAD_T + h * (1 - fy(v))
    e = html.escape
    parts = [f'<svg class="sa-calc-frontier sa-chart {kind}" viewBox="0 0 {width} {SVG_H}" role="img" '
             f'aria-label="{e(_svg_label(res))}" xmlns="http://www.w3.org/2000/svg">',
             f'<rect x="{PAD_L}" y="{PAD_T}" width="{w}" height="{h}" fill="none" stroke="currentColor" '
             f'stroke-opacity="0.4"/>']
    for v in xt:
        if 0 <= fx(v) <= 1:
            parts.append(f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{PAD_T}" y2="{PAD_T + h}" stroke="currentColor" '
                         f'stroke-opacity="0.12"/><text x="{X(v):.1f}" y="{PAD_T + h + 16}" text-anchor="middle" '
                         f'font-size="12" fill="currentColor">{v:g}</text>')
    for v in yt:
        if 0 <= fy(v) <= 1:
            parts.append(f'<line x1="{PAD_L}" x2="{PAD_L + w}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="currentColor" '
                         f'stroke-opacity="0.12"/><text x="{PAD_L - 6}" y="{Y(v) + 4:.1f}" text-anchor="end" '
                         f'font-size="12" fill="currentColor">{v:g}</text>')
    x_title = ("Tokens/s per user (1000 ÷ TPOT ms)" if width < SVG_W
               else "Interactivity, output tokens/s per user (1000 ÷ TPOT in ms)")
    parts.append(f'<text x="{PAD_L + w / 2}" y="{SVG_H - 6}" text-anchor="middle" font-size="13" '
                 f'fill="currentColor">{x_title}</text>')
    parts.append(f'<text transform="translate(14 {PAD_T + h / 2}) rotate(-90)" text-anchor="middle" font-size="13" '
                 f'fill="currentColor">Output tokens/s per GPU</text>')
    if t.tpot_s is not None:
        x = X(1 / t.tpot_s)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{PAD_T}" y2="{PAD_T + h}" stroke="currentColor" '
                     f'stroke-dasharray="4 3"/><text x="{x + 4:.1f}" y="{PAD_T + 14}" font-size="12" '
                     f'fill="currentColor">TPOT target</text>')
    front = sorted(res.frontier, key=lambda p: p.per_user)
    if len(front) > 1:
        path = " ".join(f"{X(p.per_user):.1f},{Y(p.per_gpu):.1f}" for p in front)
        parts.append(f'<polyline points="{path}" fill="none" stroke="currentColor" stroke-opacity="0.5"/>')
    for p in front:
        parts.append(f'<circle cx="{X(p.per_user):.1f}" cy="{Y(p.per_gpu):.1f}" r="4" '
                     f'fill="{MODE_COLOURS.get(p.mode, "#555")}"><title>{e(p.label)}</title></circle>')
    if res.recommended is not None:
        b = res.recommended
        parts.append(f'<circle class="sa-calc-best" cx="{X(b.per_user):.1f}" cy="{Y(b.per_gpu):.1f}" r="9" '
                     f'fill="none" stroke="#c62828" stroke-width="2.5"><title>recommended meeting the targets: '
                     f'{e(b.label)}</title></circle>')
    if res.best is not None and res.saving > 0:
        c = res.best
        parts.append(f'<circle class="sa-calc-cheapest" cx="{X(c.per_user):.1f}" cy="{Y(c.per_gpu):.1f}" r="9" '
                     f'fill="none" stroke="#c62828" stroke-width="2" stroke-dasharray="3 2"><title>cheapest, '
                     f'{_pct(res.saving)} cheaper: {e(c.label)}</title></circle>')
    ly = PAD_T + h - 8
    for i, (mode, colour) in enumerate(MODE_COLOURS.items()):
        parts.append(f'<circle cx="{PAD_L + 12}" cy="{ly - 18 * i - 4}" r="4" fill="{colour}"/>'
                     f'<text x="{PAD_L + 22}" y="{ly - 18 * i}" font-size="12" fill="currentColor">{mode}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _svg_label(res: Search) -> str:
    front = ", ".join(f"{p.per_user:,.1f} tokens/s per user at {p.per_gpu:,.1f} per GPU ({p.mode})"
                      for p in sorted(res.frontier, key=lambda p: p.per_user)[:12])
    best = "" if res.recommended is None else f"; recommended meeting the targets: {res.recommended.label}"
    if res.best is not None and res.saving > 0:
        best += f"; cheapest, {_pct(res.saving)} cheaper: {res.best.label}"
    return f"Throughput-interactivity frontier: {front}{best}"


def answer(eng: EngineCatalog, form: Mapping[str, str],
           target_of: Callable[[EngineCatalog, Inputs, int, int], dict[str, Any]] | None = None) -> dict[str, Any]:
    """`{"ok": True, "inputs", "report", "outputs", "bar", "target"}`, or `{"ok": False, "error"}` with a one-line
    reason. It never raises: whatever the engine raises on a reader's input is that reader's error message.
    `target_of` makes the target section (`compute`)."""
    try:
        inputs = read(eng, form)
        return {"ok": True, "inputs": inputs.query(), **compute(eng, inputs, target_of)}
    except (InputError, RequestError, ConfigError) as exc:
        return {"ok": False, "error": str(exc)}
    except KeyError as exc:  # an accelerator no node in data/ is built from
        return {"ok": False, "error": str(exc.args[0]) if exc.args else "unknown id"}
    except (NoLayout, RefusedLayout) as exc:
        return {"ok": False, "error": f"no layout serves this: {exc}"}
    except ValueError as exc:
        return {"ok": False, "error": f"the engine cannot predict this: {exc}"}
    except RecursionError:
        return {"ok": False, "error": "the engine cannot compute this: the input nests too deep"}
    except Exception as exc:  # the page's boundary: a reader sees a message, never a stale answer
        return {"ok": False, "error": f"the engine cannot compute this: {type(exc).__name__}: {exc}"[:500]}


SEARCHES_KEPT = 8
"""Target sections a `Calculator` keeps, the most recently used."""
SPACES_KEPT = 4
"""Search spaces (`snippets.engine.search.Space`: the predictions a search makes apart from its targets) a
`Calculator` keeps, the most recently used."""


def _keep(table: dict[tuple[Any, ...], _V], key: tuple[Any, ...], value: _V, most: int) -> None:
    """Put `value` last in `table` (the most recently used) and drop the least recently used beyond `most`."""
    table.pop(key, None)
    table[key] = value
    while len(table) > most:
        del table[next(iter(table))]


class Calculator:
    """The catalog read once; `answer_json` is what the page's JavaScript calls, JSON text in and out.

    It keeps the target sections of its last `SEARCHES_KEPT` searches, keyed by everything `target` reads: the
    model (and a pasted config's text), precision, accelerator, prompt and output tokens, the targets, the rate, what
    must meet the targets and the memory policy. A reader who changes only what the search does not read (the
    concurrency, the layout policy) gets the answer without the search run again, the same answer `answer` gives
    (tests/unit/test_calculator.py). A reader who changes the targets, the rate or what must meet the targets gets
    a new search, which reuses the predictions of the last search
    of the same model, precision, accelerator, request and memory policy (its `Space`: the last `SPACES_KEPT`
    kept): they do not depend on the targets. `searches` counts the searches it ran, `spaces` the spaces it made."""

    def __init__(self, eng: EngineCatalog) -> None:
        self.eng = eng
        self.searches = 0
        self.spaces = 0
        self._targets: dict[tuple[Any, ...], str] = {}
        self._spaces: dict[tuple[Any, ...], Space] = {}

    def target(self, eng: EngineCatalog, inputs: Inputs, n_in: int, n_out: int) -> dict[str, Any]:
        """`target`'s section for these inputs: kept, or searched now in the space kept for them. It is kept as JSON
        text and handed out as a new object each time, so an answer a caller changes cannot change a later one."""
        where = (inputs.model, inputs.config if inputs.model == CUSTOM else "", inputs.precision, inputs.accelerator,
                 n_in, n_out, inputs.memory_policy)
        key = (*where, inputs.ttft_ms, inputs.tpot_ms, inputs.rate, inputs.meet)
        kept = self._targets.get(key)
        if kept is None:
            space = self._spaces.get(where)
            if space is None:
                space = Space()
                self.spaces += 1
            kept = json.dumps(target(eng, inputs, n_in, n_out, space))
            self.searches += 1
            _keep(self._spaces, where, space, SPACES_KEPT)
        _keep(self._targets, key, kept, SEARCHES_KEPT)
        section: dict[str, Any] = json.loads(kept)
        return section

    def answer(self, form: Mapping[str, str]) -> dict[str, Any]:
        """`answer` for this catalog, with the searches kept."""
        return answer(self.eng, form, self.target)

    @classmethod
    def from_file(cls, path: str) -> Calculator:
        with open(path, encoding="utf-8") as f:
            return cls(decode(EngineCatalog, json.load(f)))

    def answer_json(self, form_json: str) -> str:
        return json.dumps(self.answer(json.loads(form_json)))
