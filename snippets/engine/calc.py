"""The calculator page's one call: the form's values in, the engine's answer out. Standard library only.

The page "Size your deployment" runs this module in the reader's browser (Pyodide) and the build runs the
same module for the answer a reader without JavaScript sees. `answer(eng, form)` reads the form's fields
(`data/` ids and numbers, as strings), deploys with the engine (`deploy(setting(...))`, the layout chosen
by the policy) and returns the command line's report (`snippets.engine.__main__.report`) with every
figure the page shows already formatted, and the memory bar's parts as shares of the GPU. The page's
JavaScript only writes these strings into the page; it computes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from snippets.engine.__main__ import report
from snippets.engine.deployment import NoLayout, RefusedLayout, deploy, setting
from snippets.engine.hf import ConfigError, model_from_config
from snippets.engine.specs import EngineCatalog, PriceSpec

SCENARIO = "reference"
"""The scenario the form starts from and takes what it does not ask for (node, time model, KV precision)."""
CUSTOM = "custom"
"""The model field's value for a pasted config.json."""
FIELDS = ("model", "precision", "accelerator", "context", "concurrency", "memory_policy", "layout_policy", "config")
MAX_CONTEXT = 10_000_000
MAX_CONCURRENCY = 100_000
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
    config: str = ""

    def query(self) -> dict[str, str]:
        """The inputs as the form (and the page's URL) spells them."""
        q = {k: str(getattr(self, k)) for k in FIELDS if k != "config"}
        if self.model == CUSTOM:
            q["config"] = self.config
        return q


def defaults(eng: EngineCatalog, model: str = "llama-3.1-70b", precision: str = "fp8") -> Inputs:
    """The default scenario's inputs: its context, concurrency, policies and node's accelerator."""
    sc = eng.scenarios[SCENARIO]
    return Inputs(model=model, precision=precision, accelerator=eng.nodes[sc.node].chip,
                  context=sc.context_tokens, concurrency=sc.concurrency, memory_policy=sc.memory_policy,
                  layout_policy=sc.layout_policy)


def _count(text: str, what: str, low: int, high: int) -> int:
    try:
        n = int(str(text).strip().replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(f"{what} must be a whole number, not {text!r}") from None
    if not low <= n <= high:
        raise InputError(f"{what} must be between {low:,} and {high:,}, not {n:,}")
    return n


def _pick(table: Mapping[str, Any], value: str, what: str) -> str:
    if value not in table:
        raise InputError(f"unknown {what} {value!r}; known: {', '.join(sorted(table))}")
    return value


def read(eng: EngineCatalog, form: Mapping[str, str]) -> Inputs:
    """The form's values, checked against the catalog; missing fields take the default scenario's."""
    d = defaults(eng)
    get = {k: str(form.get(k) or getattr(d, k)) for k in FIELDS}
    model = get["model"]
    if model != CUSTOM:
        _pick(eng.models, model, "model")
    _pick(eng.precisions, get["precision"], "precision")
    _pick(eng.chips, get["accelerator"], "accelerator")
    _pick(eng.memory_policies, get["memory_policy"], "memory policy")
    _pick(eng.layout_policies, get["layout_policy"], "layout policy")
    return Inputs(model=model, precision=get["precision"], accelerator=get["accelerator"],
                  context=_count(get["context"], "context (input + output tokens)", 2, MAX_CONTEXT),
                  concurrency=_count(get["concurrency"], "concurrency (sequences at once)", 1, MAX_CONCURRENCY),
                  memory_policy=get["memory_policy"], layout_policy=get["layout_policy"],
                  config=get["config"] if model == CUSTOM else "")


def _out(value: float | int | str | None, unit: str, text: str) -> dict[str, Any]:
    return {"value": None if value is None else (value if isinstance(value, str) else repr(value)),
            "unit": unit, "text": text}


def _money(x: float | None, unit: str, price: PriceSpec | None) -> dict[str, Any]:
    """A cost, the month of the price it rests on beside it (every cost on the site shows how old its price is)."""
    if x is None or price is None:
        return _out(None, unit, "no price in data")
    return _out(x, unit, f"${x:,.2f} ({price.as_of or 'undated'} price)")


def compute(eng: EngineCatalog, inputs: Inputs) -> dict[str, Any]:
    """The engine's report for `inputs`, with the page's figures and bar parts. Raises InputError, ConfigError,
    NoLayout or RefusedLayout with a one-line reason. Where the time model lacks data (a layout across nodes
    whose node records no network), the report is None, the times say "not predicted" and `note` says why."""
    if inputs.model == CUSTOM:
        if not inputs.config.strip():
            raise InputError("paste a config.json to size your own model")
        eng = replace(eng, models=MappingProxyType({**eng.models, CUSTOM: model_from_config(inputs.config, CUSTOM)}))
    spec = eng.models[inputs.model]
    limit = spec.arch.context_length
    notes = []
    if limit is not None and inputs.context > limit:  # sized all the same, as the grid sizes it
        notes.append(f"{spec.name} reads at most {limit:,} tokens (max_position_embeddings), fewer than "
                     f"{inputs.context:,}: the memory and times are for a context it cannot serve.")
    st = setting(eng, inputs.model, inputs.precision, SCENARIO, accelerator=inputs.accelerator,
                 layout_policy=inputs.layout_policy, concurrency=inputs.concurrency, context_tokens=inputs.context,
                 memory_policy=inputs.memory_policy)
    d = deploy(st)
    sc = st.scenario
    rep: dict[str, Any] | None
    try:
        rep = report(d, inputs.concurrency, sc.input_tokens, sc.output_tokens)
    except ValueError as exc:  # a layout across nodes whose node records no network: sized, but not timed
        rep = None
        notes.append(f"Times and cost per token are not predicted: {exc}.")
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
        shown = text.format(rep[key])
        rng = rep.get(f"{key}_range")
        if rng is not None and rng[1] > rng[0]:
            shown += f", {rng[0]:,.1f}–{rng[1]:,.1f}"
        return _out(rep[key], unit, shown)

    cost = d.cost_per_hour
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
        "capacity": _out(m.capacity / GiB, "GiB", f"{m.capacity / GiB:,.1f} GiB"),
        "ttft_ms": timing("ttft_ms", "ms", "{:,.1f} ms"),
        "tpot_ms": timing("tpot_ms", "ms", "{:,.1f} ms"),
        "tokens_per_s_per_gpu": timing("output_tokens_per_s_per_gpu", "tokens/s/GPU", "{:,.1f} tokens/s per GPU"),
        "cost_per_hour": _money(cost, "USD/hour", st.price),
        "cost_per_mtok": (_money(rep["usd_per_mtok_output"], "USD/Mtok", st.price) if rep is not None
                          else _out(None, "USD/Mtok", "not predicted")),
        "weight_only": _out("yes" if d.weight_only else "no", "",
                            f"stored in {st.precision.name}, computed in {d.compute_format.upper()}" if d.weight_only
                            else f"computed in {st.precision.name}"),
        "note": _out(note, "", note),
    }
    return {"report": rep, "outputs": outputs, "bar": bar,
            "bar_label": "Memory per GPU: " + ", ".join(f"{b['label']} {b['text']}" for b in bar)}


def answer(eng: EngineCatalog, form: Mapping[str, str]) -> dict[str, Any]:
    """`{"ok": True, "inputs", "report", "outputs", "bar"}`, or `{"ok": False, "error"}` with a one-line reason."""
    try:
        inputs = read(eng, form)
        return {"ok": True, "inputs": inputs.query(), **compute(eng, inputs)}
    except (InputError, ConfigError) as exc:
        return {"ok": False, "error": str(exc)}
    except KeyError as exc:  # an accelerator no node in data/ is built from
        return {"ok": False, "error": str(exc.args[0]) if exc.args else "unknown id"}
    except (NoLayout, RefusedLayout) as exc:
        return {"ok": False, "error": f"no layout serves this: {exc}"}
    except ValueError as exc:
        return {"ok": False, "error": f"the engine cannot predict this: {exc}"}


class Calculator:
    """The catalog read once; `answer_json` is what the page's JavaScript calls, JSON text in and out."""

    def __init__(self, eng: EngineCatalog) -> None:
        self.eng = eng

    @classmethod
    def from_file(cls, path: str) -> Calculator:
        with open(path, encoding="utf-8") as f:
            return cls(EngineCatalog.from_export(json.load(f)))

    def answer_json(self, form_json: str) -> str:
        return json.dumps(answer(self.eng, json.loads(form_json)))
