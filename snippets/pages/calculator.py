"""Page model of "Size your deployment" (docs/calculator.md): the form, and the answer before JavaScript runs.

The form's options are `data/` ids; the answer panel is filled from `snippets.engine.calc.answer` run on
the default inputs, over the catalog as the browser reads it (`export`'s records -> `codec.encode` -> JSON -> `codec.decode`),
so the build's answer and the browser's first answer are the same computation on the same records. The page's
script (docs/assets/calculator/calculator.js) replaces the text of each `data-name` element with what the
same function returns in Pyodide.
"""

from __future__ import annotations

import ast
import html
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

from snippets.data import Catalog
from snippets.data.export import export
from snippets.engine.calc import CUSTOM, MAX_CONTEXT, SCENARIO, _spell, answer, defaults
from snippets.engine.codec import decode, encode
from snippets.engine.requests import MAX_CONCURRENCY
from snippets.engine.search import MEETS
from snippets.engine.specs import EngineCatalog
from snippets.pages.base import Page
from snippets.render import fmt

MEET_LABELS = MappingProxyType({"prediction": "the prediction", "band": "the slow edge of its error band"})
"""The form's words for each way the search may hold the targets (`search.MEETS`: every one needs its words)."""

ROOT = Path(__file__).resolve().parent.parent.parent
ASSETS = ROOT / "docs" / "assets"
PYODIDE = ASSETS / "pyodide"
PYODIDE_FILES = ("pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs", "pyodide/pyodide.asm.wasm",
                 "pyodide-stdlib/python_stdlib.zip", "pyodide/pyodide-lock.json")
"""What the browser fetches of Pyodide when the engine starts, as the page loads (no package beyond the standard
library), under docs/assets/: the standard library is the site's bytecode-compiled one (calculator-worker.js's
stdLibURL, scripts/pyodide_stdlib.py), not the npm package's."""

# where each output is explained, relative to the page's URL (calculator/)
EXPLAINED = {
    "gpus": ("../parallelism/#layouts-an-engine-accepts-and-the-one-a-policy-chooses", "how a layout is chosen"),
    "layout": ("../parallelism/#layouts-an-engine-accepts-and-the-one-a-policy-chooses", "how a layout is chosen"),
    "nodes": ("../interconnect/", "why big models need many GPUs"),
    "gpus_rented": ("../reference/sizing/#indicative-prices", "prices and rental units"),
    "ttft_ms": ("../roofline/#ttft-and-time-per-output-token", "TTFT and time per output token"),
    "tpot_ms": ("../roofline/#ttft-and-time-per-output-token", "TTFT and time per output token"),
    "tokens_per_s_per_gpu": ("../roofline/#the-cost-lens", "throughput and cost"),
    "cost_per_hour": ("../reference/sizing/#indicative-prices", "the indicative prices"),
    "cost_per_replica_hour": ("../reference/sizing/#indicative-prices", "the indicative prices"),
    "rental_share": ("../reference/sizing/#indicative-prices", "prices and rental units"),
    "running": ("../hbm/#what-fits-on-one-card", "what fits on a card"),
    "at_rate": ("../latency-target/#the-cost-lens", "requests sent at a rate (Little's law)"),
    "cost_per_mtok": ("../roofline/#the-cost-lens", "cost per token"),
    "max_concurrency": ("../hbm/#what-fits-on-one-card", "what fits on a card"),
    "kv_tokens": ("../hbm/#what-fits-on-one-card", "what fits on a card"),
    "memory": ("../hbm/#what-fits-on-one-card", "what fits on a card"),
    "weight_only": ("../precision/#weights-and-gpus-per-precision", "precisions and what computes in them"),
    "accuracy": ("../reference/predictions/", "how well the time model predicts"),
}

OUTPUTS = (  # (data-name, label)
    ("layout", "Layout"), ("gpus", "GPUs per replica"), ("nodes", "Nodes"), ("gpus_rented", "GPUs rented"),
    ("ttft_ms", "Time to first token"), ("tpot_ms", "Time per output token"),
    ("tokens_per_s_per_gpu", "Throughput per GPU"),
    ("cost_per_replica_hour", "Cost per hour, this replica (its share of the rental)"),
    ("cost_per_hour", "Cost per hour, the whole rented instance"), ("rental_share", "The replica uses"),
    ("cost_per_mtok", "Cost per million output tokens (the replica's share)"),
    ("max_concurrency", "Sequences at once, as the KV cache and max_num_seqs admit"),
    ("kv_tokens", "KV cache, as the engine logs it"),
    ("running", "Requests running and queued"), ("at_rate", "At the request rate, one replica"),
    ("weight_only", "Compute format"),
)
TARGET_OUTPUTS = (  # (data-name, label) of the recommended configuration meeting the latency target
    ("t_mode", "Mode"), ("t_config", "Configuration"), ("t_layout", "Layout"), ("t_gpus", "GPUs in one configuration"),
    ("t_ttft_ms", "Time to first token"), ("t_tpot_ms", "Time per output token"),
    ("t_per_gpu", "Throughput per GPU"), ("t_cost_per_mtok", "Cost per million output tokens"),
    ("t_replicas", "For the rate"), ("t_rented", "GPUs rented for the rate"),
    ("t_cost_per_hour", "Cost per hour for the rate"), ("t_cheapest", "The cheapest"),
)
TARGET_LINK = ("../latency-target/", "serving to a latency target")


def engine_imports(entry: str = "snippets.engine.calc") -> list[str]:
    """The module files the browser loads: `entry` and what it imports, transitively, within the engine (with the
    packages' __init__ modules), as paths from the repository's root; nothing else of the shipped modules."""
    todo, seen = [entry], set()
    while todo:
        name = todo.pop()
        if name in seen or not (name == "snippets" or name.startswith("snippets.engine")):
            continue  # the standard library, or a build-only import inside a function (the CLI's data loader)
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages run first
        path = ROOT.joinpath(*parts)
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                todo.append(node.module)
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names]
    out = []
    for name in sorted(seen):
        path = ROOT.joinpath(*name.split("."))
        out.append((path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).relative_to(ROOT).as_posix())
    return out


def browser_catalog(cat: Catalog) -> EngineCatalog:
    """The catalog exactly as the browser reads it: the export, through JSON, into the engine's records. Made once per
    catalog and per view of it (`Catalog.derived`, as `Page.of`): on a recording view, the first call notes what the
    export reads; a later one would note the same."""
    hit = cat.derived.get((browser_catalog, id(cat)))
    if hit is None or hit[0] is not cat:
        eng = decode(EngineCatalog, json.loads(json.dumps(encode(export(cat)))))
        hit = cat.derived[(browser_catalog, id(cat))] = (cat, eng)
    found = hit[1]
    if not isinstance(found, EngineCatalog):  # pragma: no cover - the key holds the function
        raise TypeError("browser_catalog: the cache holds another record")
    return found


def default_answer(cat: Catalog) -> dict[str, Any]:
    eng = browser_catalog(cat)
    got = answer(eng, defaults(eng).query())
    if not got["ok"]:
        raise ValueError(f"the calculator's default inputs have no answer: {got['error']}")
    return got


def _options(items: list[tuple[str, str]], selected: str) -> str:
    return "".join(f'<option value="{html.escape(v)}"{" selected" if v == selected else ""}>{html.escape(t)}</option>'
                   for v, t in items)


def _select(name: str, label: str, items: list[tuple[str, str]], selected: str, hint: str) -> str:
    return (f'<div class="sa-calc-field"><label for="sa-calc-{name}">{label}</label>'
            f'<select id="sa-calc-{name}" name="{name}" aria-describedby="sa-calc-{name}-hint">'
            f'{_options(items, selected)}</select><small id="sa-calc-{name}-hint">{hint}</small></div>')


def _number(name: str, label: str, value: float | int | None, low: float, high: float, hint: str,
            whole: bool = True) -> str:
    return (f'<div class="sa-calc-field"><label for="sa-calc-{name}">{label}</label>'
            f'<input id="sa-calc-{name}" name="{name}" type="number" inputmode="decimal" min="{low:g}" '
            f'max="{high:g}" step="{1 if whole else "any"}" value="{html.escape(_spell(value))}" '
            f'aria-describedby="sa-calc-{name}-hint"><small id="sa-calc-{name}-hint">{hint}</small></div>')


def _output(name: str, label: str, out: dict[str, Any], link: tuple[str, str] | None = None) -> str:
    href, why = link or EXPLAINED[name]
    return (f'<div class="sa-calc-item"><dt>{html.escape(label)} <a href="{href}" class="sa-calc-why" '
            f'title="{html.escape(why)}">(why)</a></dt><dd><span data-name="{name}" '
            f'data-value="{"" if out["value"] is None else html.escape(str(out["value"]))}" '
            f'data-unit="{html.escape(out["unit"])}">'
            f'{html.escape(out["text"])}</span></dd></div>')


def _bar(got: dict[str, Any]) -> str:
    segs = "".join(f'<span class="sa-calc-seg sa-calc-seg-{b["part"]}" data-part="{b["part"]}" '
                   f'style="width:{b["percent"]}%"></span>' for b in got["bar"])
    legend = "".join(f'<li><span class="sa-calc-swatch sa-calc-seg-{b["part"]}"></span>{html.escape(b["label"])}: '
                     f'<span data-name="mem_{b["part"]}" data-value="{b["gib"]}" data-unit="GiB">{b["text"]}</span></li>'
                     for b in got["bar"])
    href, _ = EXPLAINED["memory"]
    cap = got["outputs"]["capacity"]
    return (f'<h3 id="sa-calc-memory-title">Memory per GPU <a href="{href}" class="sa-calc-why" '
            f'title="what fits on a card">(why)</a></h3>'
            f'<p>The busiest GPU\'s <span data-name="capacity" data-value="{cap["value"]}" data-unit="GiB">'
            f'{cap["text"]}</span>, by part.</p>'
            f'<div class="sa-calc-bar" role="img" aria-label="{html.escape(got["bar_label"])}">{segs}</div>'
            f'<ul class="sa-calc-legend">{legend}</ul>')


def calculator_html(cat: Catalog) -> str:
    """The form (options from data/), the script that starts the engine's worker as the page loads (`START_SCRIPT`),
    and the answer panel holding the default answer. Written once
    per catalog (its block prints it, the page's sources list runs it again): it reads the catalog only through
    `browser_catalog`, called here on `cat` itself, so a recording view notes what the export reads."""
    browser_catalog(cat)
    loaded = cat.loaded
    html_text = loaded.derived.get(calculator_html)
    if not isinstance(html_text, str):
        html_text = loaded.derived[calculator_html] = _calculator_html(loaded)
    return html_text


def _calculator_html(cat: Catalog) -> str:
    eng = browser_catalog(cat)
    d = defaults(eng)
    got = default_answer(cat)
    models = [(k, m.name) for k, m in eng.models.items()] + [(CUSTOM, "Your own model (paste its config.json)")]
    precisions = [(k, p.name) for k, p in eng.precisions.items()]
    chips = []
    for k, c in eng.chips.items():
        node = eng.node_of(k)
        if node is not None:
            chips.append((k, f"{c.name} ({node.name})"))
    mem = [(k, p.name) for k, p in eng.memory_policies.items()]
    lay = [(k, p.name) for k, p in eng.layout_policies.items()]
    sc = eng.scenarios[SCENARIO]
    form = (
        '<form id="sa-calc-form" class="sa-calc-form" novalidate>'
        + _select("model", "Model", models, d.model, "from data/models.yaml, or your own")
        + _select("precision", "Precision of the weights", precisions, d.precision, "from data/precisions.yaml")
        + _select("accelerator", "Accelerator", chips, d.accelerator, "on the first node built from it")
        + _number("context", "Context, input + output tokens", d.context, 2, MAX_CONTEXT,
                  f"of which output: up to {sc.output_tokens:,} tokens")
        + _number("concurrency", "Concurrency, requests in flight", d.concurrency, 1, MAX_CONCURRENCY,
                  f"by default the scenario's ({html.escape(sc.name)}); beyond what the KV cache and max_num_seqs "
                  "admit, the rest queue")
        + _number("ttft_ms", "Target time to first token, ms", d.ttft_ms, 0, 3_600_000,
                  "above zero; empty: no limit", whole=False)
        + _number("tpot_ms", "Target time per output token, ms", d.tpot_ms, 0, 3_600_000,
                  "above zero; empty: no limit", whole=False)
        + _number("rate", "Request rate, requests/s", d.rate, 0, 1_000_000,
                  "a rate: what one replica does with requests sent at it; with a target, the replicas (or workers) "
                  "and $ per hour that carry it, and what a request sees there", whole=False)
        + _select("meet", "Targets met by", [(m, MEET_LABELS[m]) for m in MEETS], d.meet,
                  "the band: where the time model's errors against published test measurements fell")
        + _select("memory_policy", "Engine memory policy", mem, d.memory_policy, "from data/policies.yaml")
        + _select("layout_policy", "Layout policy", lay, d.layout_policy, "from data/policies.yaml")
        + '<details class="sa-calc-field sa-calc-custom" id="sa-calc-custom">'
          '<summary>Your own model: paste its config.json</summary>'
          '<label for="sa-calc-config">Your model\'s config.json (from its Hugging Face page)</label>'
          '<textarea id="sa-calc-config" name="config" rows="8" spellcheck="false" '
          'aria-describedby="sa-calc-config-hint"></textarea>'
          '<small id="sa-calc-config-hint">Llama, Mistral, Mixtral, Qwen2, Qwen3, DeepSeek-V3 and gpt-oss '
          'configs are read; the engine counts its parameters and KV bytes per token.</small></details>'
        + '<p class="sa-calc-actions"><span id="sa-calc-status" role="status" aria-live="polite">Showing the '
          'default answer, computed when the site was built; with JavaScript the engine starts in your browser '
          'and follows the form.</span></p>'
        + '<p id="sa-calc-error" class="sa-calc-error" role="alert" hidden></p>'
        + '<p class="sa-calc-stale-note" id="sa-calc-stale-note" hidden>Stale: the answer below, greyed, is for '
          'the last inputs the engine could answer, not for the form as it stands.</p>'
        + '</form>'
    )
    items = "".join(_output(n, label, got["outputs"][n]) for n, label in OUTPUTS)
    why = got["outputs"]["why"]
    panel = (
        '<section class="sa-calc-out" aria-labelledby="sa-calc-answer-title">'
        '<h3 id="sa-calc-answer-title">The engine\'s answer for '
        f'<span data-name="model_name" data-value="{html.escape(got["outputs"]["model_name"]["value"])}" '
        f'data-unit="">{html.escape(got["outputs"]["model_name"]["text"])}</span></h3>'
        f'<p>Chosen because: <span data-name="why" data-value="{html.escape(why["value"])}" data-unit="">'
        f'{html.escape(why["text"])}</span>. Counted parameters: <span data-name="params" '
        f'data-value="{got["outputs"]["params"]["value"]}" data-unit="parameters">'
        f'{got["outputs"]["params"]["text"]}</span>. The context is <span data-name="input_tokens" '
        f'data-value="{got["outputs"]["input_tokens"]["value"]}" data-unit="tokens">'
        f'{got["outputs"]["input_tokens"]["text"]}</span> tokens in and <span data-name="output_tokens" '
        f'data-value="{got["outputs"]["output_tokens"]["value"]}" data-unit="tokens">'
        f'{got["outputs"]["output_tokens"]["text"]}</span> out.</p>'
        f'<dl class="sa-calc-results">{items}</dl>'
        f'<p class="sa-calc-note" data-name="note" data-value="" data-unit="">{html.escape(got["outputs"]["note"]["text"])}</p>'
        + _bar(got) + '</section>' + _target_panel(got)
    )
    return ('<div id="sa-calc" class="sa-calc" data-assets="../assets/" '
            f'data-modules="{html.escape(" ".join(engine_imports()))}" '
            'data-catalog="../reference/engine-catalog.json" data-answers="0">' + START_SCRIPT
            + form + panel + '</div>\n<link rel="stylesheet" href="../assets/calculator/calculator.css">\n'
            '<script type="module" async src="../assets/calculator/calculator.js"></script>\n')


START_SCRIPT = (
    "<script>(() => {"
    "const root = document.getElementById('sa-calc');"
    "const assets = new URL(root.dataset.assets, location.href);"
    "const worker = new Worker(new URL('calculator/calculator-worker.js', assets), {type: 'module'});"
    "const early = [];"
    "worker.onmessage = worker.onerror = (event) => early.push(event);"
    "worker.postMessage({type: 'start', assets: assets.href, catalog: new URL(root.dataset.catalog, location.href).href,"
    " modules: root.dataset.modules.split(' ').filter(Boolean)});"
    "root.saEngine = {worker, early, at: performance.now()};"
    "})();</script>"
)
"""The engine's start, as soon as the parser reaches the calculator: the worker is made and told to start here, in
the page, before the rest of it is parsed and painted, not when the page's script (a module, fetched and run after)
gets to it: about 0.3 s sooner. The page's script adopts the worker and the messages it posted meanwhile. It reads
only the calculator's own attributes; no data reaches it."""


def _target_panel(got: dict[str, Any]) -> str:
    """The recommended configuration meeting the latency target (the cheapest where it differs), and the frontier
    chart (SVG from the engine)."""
    t = got["target"]
    outs = t["outputs"]
    items = "".join(_output(n, label, outs.get(n, {"value": None, "unit": "", "text": "none"}), TARGET_LINK)
                    for n, label in TARGET_OUTPUTS)
    return ('<section class="sa-calc-out sa-calc-target" aria-labelledby="sa-calc-target-title">'
            '<h3 id="sa-calc-target-title">The recommended configuration meeting the target '
            f'<a href="{TARGET_LINK[0]}" class="sa-calc-why" title="{TARGET_LINK[1]}">(why)</a></h3>'
            f'<p data-name="t_text" data-value="" data-unit="">{html.escape(t["text"])}</p>'
            f'<dl class="sa-calc-results">{items}</dl>'
            '<p>The throughput-interactivity frontier: every configuration no other beats on both output tokens per '
            'second per GPU and per user, aggregated and disaggregated (the search of '
            '<code>python -m snippets.engine search</code>), the recommended configuration meeting the target '
            'ringed, and the cheapest with a dashed ring where it differs.</p>'
            f'<div id="sa-calc-frontier" class="sa-calc-frontier-box">{t["svg"]}</div></section>')


def download_bytes() -> int:
    """Bytes of Pyodide the browser fetches as the engine starts (the engine's modules and the catalog add a few
    hundred KB)."""
    return sum((ASSETS / f).stat().st_size for f in PYODIDE_FILES)


class CalculatorPage(Page):
    shows = (calculator_html,)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        eng = browser_catalog(cat)
        sc = eng.scenarios[SCENARIO]
        d = defaults(eng)
        version = (PYODIDE / "VERSION").read_text(encoding="utf-8").split()[1]
        self.default_model = eng.models[d.model].name
        self.default_precision = eng.precisions[d.precision].name
        self.default_accelerator = eng.chips[d.accelerator].name
        self.default_context = fmt.count(sc.context_tokens, "tokens")
        self.min_saving = fmt.percent(eng.layout_policies[sc.layout_policy].disaggregation.min_saving)
        self.default_concurrency = fmt.count(sc.concurrency, "sequences")
        self.default_ttft = fmt.count(round(sc.ttft_s * 1e3), "ms") if sc.ttft_s is not None else "no"
        self.default_tpot = fmt.count(round(sc.tpot_s * 1e3), "ms") if sc.tpot_s is not None else "no"
        self.download = fmt.nbytes(download_bytes(), "MB", 1)
        self.pyodide_version = version


namespace = CalculatorPage.namespace_of
sources = CalculatorPage.sources_of
