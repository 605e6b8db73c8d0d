"""The calculator page in a real browser: Pyodide vendored on the site runs the engine's own modules.

The tests open the page in Debian's Chromium (nothing may leave 127.0.0.1; the desktop tests share one
load, the others open their own), wait for the engine the page starts in a Web Worker as it loads, drive
the form like a reader (select, type, paste) and compare every output the page writes with the engine
run here, in the test's Python (`snippets.engine.calc.answer`, which is the command line's report), and,
for the combinations that are rows of the grid, with reference/sizing.json.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.calc import answer, defaults

from ..conftest import Build
from ..site.test_calculator import assert_matches_grid
from ..unit.test_hf import DEEPSEEK_V3, LLAMA_31_8B, MIXTRAL_8X7B, QWEN25_72B
from .conftest import DESKTOP, PHONE, Reader, assert_quiet

# every test of this page in one worker: the desktop tests share one started engine (`engine`), one Pyodide start
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("calculator")]

START_TIMEOUT = 180_000  # ms: Pyodide's first start on a busy 2-core machine
SELECTS = ("model", "precision", "accelerator", "memory_policy", "layout_policy", "meet")
GRID = {"context": "8192", "concurrency": "1"}  # the grid's case: the reference scenario
TEXTS = ("context", "concurrency", "ttft_ms", "tpot_ms", "rate")
NOT_SHOWN = {"queued"}  # in the answer for scripts; the page shows it within "running" ("N run, M queue")

COMBOS: list[dict[str, str]] = [
    # rows of the grid
    {"model": "llama-3.1-8b", "precision": "bf16", "accelerator": "h100-sxm", **GRID},
    {"model": "llama-3.1-70b", "precision": "fp8", "accelerator": "h100-sxm", **GRID},
    {"model": "llama-3.1-405b", "precision": "fp8", "accelerator": "h200-sxm", **GRID},
    {"model": "mixtral-8x7b", "precision": "int4-g128", "accelerator": "a100-80gb-sxm", **GRID},
    {"model": "deepseek-v3", "precision": "fp8-block", "accelerator": "b200", **GRID},  # its own checkpoint
    {"model": "qwen2.5-72b", "precision": "bf16", "accelerator": "mi300x", **GRID},
    {"model": "gpt-oss-120b", "precision": "fp8", "accelerator": "h100-sxm", **GRID},
    {"model": "qwen3-32b", "precision": "fp8", "accelerator": "l40s", **GRID},
    {"model": "qwen3-30b-a3b", "precision": "int4-g128", "accelerator": "l4", **GRID},
    {"model": "deepseek-r1", "precision": "fp8-block", "accelerator": "l4", **GRID},  # sized, not timed
    {"model": "llama-3.1-405b", "precision": "bf16", "accelerator": "a100-40gb-sxm", **GRID},
    # other contexts, loads and policies
    {"model": "llama-3.1-70b", "precision": "bf16", "accelerator": "h100-sxm", "context": "32768",
     "concurrency": "16"},
    {"model": "llama-3.1-8b", "precision": "fp8", "accelerator": "l4", "context": "4096", "concurrency": "64"},
    {"model": "deepseek-v3", "precision": "bf16", "accelerator": "h200-sxm", "context": "16384",
     "concurrency": "8", "layout_policy": "fewest-gpus"},
    {"model": "llama-3.1-405b", "precision": "bf16", "accelerator": "h100-sxm", "context": "8192",
     "concurrency": "4"},
    {"model": "mixtral-8x7b", "precision": "fp8", "accelerator": "h100-pcie", "context": "2000",
     "concurrency": "32"},
    {"model": "gpt-oss-20b", "precision": "mxfp4", "accelerator": "b200", "context": "131072",
     "concurrency": "2"},
    {"model": "qwen3-235b-a22b", "precision": "fp8", "accelerator": "mi355x", "context": "40000",
     "concurrency": "12", "layout_policy": "fewest-gpus"},
    {"model": "llama-4-scout", "precision": "int4-g128", "accelerator": "h100-sxm", "context": "100000",
     "concurrency": "1"},
    {"model": "gpt-3-175b", "precision": "fp8", "accelerator": "gaudi-3", "context": "2048", "concurrency": "3"},
    {"model": "llama-2-70b", "precision": "int4-g128", "accelerator": "l4", "context": "4096", "concurrency": "1"},
    # pasted config.json files
    {"model": "custom", "config": json.dumps(LLAMA_31_8B, indent=2), "precision": "bf16",
     "accelerator": "h100-sxm", "context": "8192", "concurrency": "4"},
    {"model": "custom", "config": json.dumps(DEEPSEEK_V3), "precision": "fp8", "accelerator": "h200-sxm",
     "context": "8192", "concurrency": "1"},
    {"model": "custom", "config": json.dumps(MIXTRAL_8X7B), "precision": "int4-g128", "accelerator": "l40s",
     "context": "16000", "concurrency": "8"},
    {"model": "custom", "config": json.dumps(QWEN25_72B), "precision": "fp8", "accelerator": "mi300x",
     "context": "65536", "concurrency": "4"},
]

WAIT_FOR = """(want) => {
    const q = document.getElementById('sa-calc').dataset.query;
    if (!q) return false;
    const got = JSON.parse(q);
    return Object.keys(want).length === Object.keys(got).length && Object.keys(want).every(k => got[k] === want[k]);
}"""
READ = """() => Object.fromEntries(Array.from(document.querySelectorAll('#sa-calc [data-name]'))
    .map(e => [e.dataset.name, {text: e.textContent, value: e.dataset.value}]))"""


def _full(eng: Any, combo: dict[str, str]) -> dict[str, str]:
    """The whole form as the page sends it: the defaults, the combination over them, config only for custom."""
    form = {**defaults(eng).query(), **combo}
    if form["model"] != "custom":
        form.pop("config", None)
    return form


def _start(r: Reader, path: str = "calculator/") -> Any:
    """Open the page; the engine starts by itself and answers the form as it loaded."""
    page = r.open(path)
    page.wait_for_function("document.getElementById('sa-calc').dataset.answers >= 1", timeout=START_TIMEOUT)
    return page


class Engine:
    """The calculator page with its engine started, which the desktop tests share (one Pyodide start per xdist
    worker, not six): each drives the whole form before it reads an answer, so none depends on what the one before it
    left. What the page showed once the engine had answered the form it loaded with is kept for the tests that read
    it."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.page = _start(reader)
        self.started = {
            "state": self.page.get_attribute("#sa-calc", "data-state"),
            "circles": self.page.evaluate("() => document.querySelectorAll('#sa-calc-frontier svg circle').length"),
            "worker_ms": float(self.page.get_attribute("#sa-calc", "data-worker-start-ms") or "nan"),
            "script_ms": float(self.page.get_attribute("#sa-calc", "data-script-start-ms") or "nan"),
            "own_worker": self.page.evaluate("() => Boolean(document.getElementById('sa-calc').saEngine)"),
        }
        self.at_start = reader.log.problems()  # what went wrong while it started: against every test that shares it

    def mark(self) -> tuple[int, int]:
        return len(self.reader.log.foreign), len(self.reader.log.errors)

    def assert_quiet(self, mark: tuple[int, int], where: str) -> None:
        """Nothing left 127.0.0.1 and nothing went wrong while the engine started nor since `mark`."""
        log = self.reader.log
        since = [f"request to another host: {u}" for u in log.foreign[mark[0]:]] + log.errors[mark[1]:]
        problems = self.at_start + since
        assert not problems, f"{where}:\n  " + "\n  ".join(problems)


@pytest.fixture(scope="module")
def engine(browser: Any, site_url: str) -> Iterator[Engine]:
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme="light") as r:
        yield Engine(r)


def _drive(page: Any, form: dict[str, str]) -> None:
    """Set each field as a reader does, then wait for the answer to the whole form."""
    page.select_option("[name=model]", form["model"])
    if form["model"] == "custom":
        page.fill("[name=config]", form["config"])
    for name in SELECTS[1:]:
        page.select_option(f"[name={name}]", form[name])
    for name in TEXTS:
        page.fill(f"[name={name}]", form[name])
    page.wait_for_function(WAIT_FOR, arg=form, timeout=60_000)


def _assert_same(shown: dict[str, Any], expected: dict[str, Any], where: str) -> None:
    """Every output the page shows is the Python engine's: the same text, the same value (to 1e-12)."""
    want = {**{k: v for k, v in expected["outputs"].items() if k not in NOT_SHOWN},
            **{f"mem_{b['part']}": {"text": b["text"], "value": b["gib"]} for b in expected["bar"]},
            **expected["target"]["outputs"]}
    assert set(want) <= set(shown), (where, sorted(set(want) - set(shown)))
    for name, out in want.items():
        got = shown[name]
        assert got["text"] == out["text"], (where, name, got, out)
        value = "" if out["value"] is None else out["value"]
        try:
            assert math.isclose(float(got["value"]), float(value), rel_tol=1e-12), (where, name, got, out)
        except ValueError:
            assert got["value"] == value, (where, name, got, out)


def test_twenty_combinations_agree_with_the_engine_and_the_grid(engine: Engine, built: Build, catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    grid = {(r["model"], r["precision"], r["accelerator"]): r
            for r in json.loads((built.site / "reference" / "sizing.json").read_text())["records"]}
    assert len(COMBOS) >= 20
    checked_grid = 0
    page = engine.page
    mark = engine.mark()
    for combo in COMBOS:
        form = _full(eng, combo)
        where = json.dumps({k: v for k, v in combo.items() if k != "config"})
        _drive(page, form)
        expected = answer(eng, form)
        assert expected["ok"], (where, expected)
        assert page.get_attribute("#sa-calc", "data-state") == "answered", where
        assert page.is_hidden("#sa-calc-error"), where
        shown = page.evaluate(READ)
        _assert_same(shown, expected, where)
        widths = page.evaluate("() => Array.from(document.querySelectorAll('.sa-calc-seg')).map(s => s.style.width)")
        assert [float(w.removesuffix("%")) for w in widths] == [float(b["percent"]) for b in expected["bar"]], where
        row = (form["model"], form["precision"], form["accelerator"])
        if row in grid and combo.get("context") == GRID["context"] and combo.get("concurrency") == "1" \
                and form["layout_policy"] == "tp-in-node":
            assert_matches_grid({k: {"value": v["value"] or None} for k, v in shown.items()}, grid[row], where)
            checked_grid += 1
        # the address carries the inputs
        assert page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))") == form, where
    engine.assert_quiet(mark, "calculator, 20 combinations")
    assert checked_grid >= 10


STALE = """() => {
    const root = document.getElementById('sa-calc');
    const out = root.querySelector('.sa-calc-out');
    return {stale: root.dataset.stale === 'true', note: !document.getElementById('sa-calc-stale-note').hidden,
            grey: getComputedStyle(out).filter === 'grayscale(1)'};
}"""


def test_a_bad_input_says_why_and_greys_the_last_good_answer_as_stale(engine: Engine, catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    page = engine.page
    mark = engine.mark()
    good = _full(eng, {"model": "llama-3.1-405b", "precision": "fp8", "accelerator": "h100-sxm"})
    _drive(page, good)
    assert page.evaluate(STALE) == {"stale": False, "note": False, "grey": False}
    before = page.evaluate(READ)
    url = page.url
    bad_inputs = [
        ({**good, "context": "2000000"}, "beyond Llama 3.1 405B's context of 131,072 tokens"),
        ({**good, "concurrency": "0"}, "must be between 1 and"),
        ({**good, "tpot_ms": "-1"}, "the TPOT target (ms) must be above 0"),
        ({**good, "model": "custom", "config": json.dumps(
            {k: v for k, v in LLAMA_31_8B.items() if k not in ("num_hidden_layers", "hidden_size")})},
         "num_hidden_layers is missing"),
        ({**good, "model": "custom", "config": "{\"model_type\": \"llama\","}, "config.json is not JSON"),
        ({**good, "model": "custom", "config": json.dumps({**LLAMA_31_8B, "hidden_size": 1e200})},
         "hidden_size is 1e+200"),
        ({**good, "model": "custom", "config": "[" * 5000 + "]" * 5000}, "nests objects and arrays more than"),
        ({**good, "model": "custom", "config": json.dumps({**LLAMA_31_8B, "num_hidden_layers": 1_000_000})},
         "num_hidden_layers is 1,000,000, more than the 1,000"),
    ]
    for form, words in bad_inputs:
        if form["model"] != "custom":
            form.pop("config", None)
        _drive(page, form)
        assert page.get_attribute("#sa-calc", "data-state") == "refused", words
        message = page.inner_text("#sa-calc-error")
        assert page.is_visible("#sa-calc-error") and words in message, (words, message)
        assert message == answer(eng, form)["error"], (words, message)
        assert page.evaluate(READ) == before, f"{words}: the last good answer changed"
        stale = page.evaluate(STALE)
        assert stale["stale"] and stale["note"] and stale["grey"], (words, stale)
        assert page.is_visible("#sa-calc-stale-note"), words
        assert page.url == url, "a refused input must not replace the shared address"
    _drive(page, good)
    assert page.is_hidden("#sa-calc-error")
    assert page.evaluate(STALE) == {"stale": False, "note": False, "grey": False}
    engine.assert_quiet(mark, "calculator, bad inputs")


def test_concurrency_beyond_the_kv_cache_says_how_many_run_and_how_many_queue(engine: Engine, catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    page = engine.page
    mark = engine.mark()
    form = _full(eng, {"model": "llama-3.1-70b", "precision": "fp8", "accelerator": "h100-sxm",
                       "concurrency": "100000"})
    _drive(page, form)
    expected = answer(eng, form)
    assert expected["ok"] and page.get_attribute("#sa-calc", "data-state") == "answered"
    shown = page.evaluate(READ)
    _assert_same(shown, expected, "100,000 in flight")
    running, queued = int(shown["running"]["value"]), int(expected["outputs"]["queued"]["value"])
    assert running + queued == 100_000 and 0 < running < 100_000
    assert f"{running:,} run, {queued:,} queue" == shown["running"]["text"]
    assert "queue for a slot" in shown["note"]["text"]
    engine.assert_quiet(mark, "calculator, queueing")


def test_the_target_answers_with_the_cheapest_configuration_and_the_frontier(engine: Engine, catalog: Catalog) -> None:
    """ttft_ms, tpot_ms, rate and meet: the browser's search is the engine's, to the digit; an unmeetable target
    says which target binds."""
    eng = engine_catalog(catalog)
    page = engine.page
    mark = engine.mark()
    assert engine.started["circles"] > 2, "the build's frontier chart"
    for combo in ({"tpot_ms": "20", "rate": "10"}, {"model": "llama-3.1-8b", "precision": "bf16",
                                                    "ttft_ms": "500", "tpot_ms": "15", "rate": "50"},
                  {"ttft_ms": "20000", "tpot_ms": "40", "meet": "band"}, {"tpot_ms": "1"}):
        form = _full(eng, combo)
        _drive(page, form)
        expected = answer(eng, form)
        assert expected["ok"]
        _assert_same(page.evaluate(READ), expected, json.dumps(combo))
        t = expected["target"]
        assert page.inner_text('[data-name="t_text"]') == t["text"]
        assert page.locator("#sa-calc-frontier svg circle").count() == t["svg"].count("<circle"), combo
        label = page.get_attribute("#sa-calc-frontier svg", "aria-label")
        assert label is not None and html.escape(label) in t["svg"], combo
        if t["met"]:
            assert page.locator("#sa-calc-frontier .sa-calc-best").count() == 2  # one in each drawing
        else:
            assert "binds" in t["text"]
    engine.assert_quiet(mark, "calculator, targets")


def test_the_address_restores_the_inputs(browser: Any, site_url: str, catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    form = _full(eng, {"model": "qwen3-32b", "precision": "bf16", "accelerator": "h200-sxm", "context": "4096",
                       "concurrency": "8"})
    query = "&".join(f"{k}={v}" for k, v in form.items())
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme="light") as r:
        page = r.open("calculator/?" + query)
        for k, v in form.items():
            assert page.input_value(f"[name={k}]") == v, k
        page.wait_for_function(WAIT_FOR, arg=form, timeout=START_TIMEOUT)
        _assert_same(page.evaluate(READ), answer(eng, form), "from the address")
        page.select_option("[name=precision]", "fp8")
        page.wait_for_function(WAIT_FOR, arg={**form, "precision": "fp8"}, timeout=60_000)
        assert "precision=fp8" in page.url and "model=qwen3-32b" in page.url
        assert_quiet(r, "calculator, restored from the address")
    # a parameter the form does not have, or a value it has no option for, is refused by name, never replaced
    for bad, words in (("contxt=4096", "unknown parameter 'contxt'"), ("model=llama-9", "unknown model 'llama-9'"),
                       ("concurrency=1000000", "concurrency (requests in flight) must be between 1 and")):
        with Reader(browser, site_url, viewport=DESKTOP, color_scheme="light") as r:
            page = r.open("calculator/?" + bad)
            page.wait_for_function("document.getElementById('sa-calc').dataset.answers >= 1", timeout=START_TIMEOUT)
            assert page.get_attribute("#sa-calc", "data-state") == "refused", bad
            assert words in page.inner_text("#sa-calc-error"), bad
            assert page.evaluate(STALE)["stale"], bad
            assert_quiet(r, f"calculator, address {bad}")


def test_the_running_calculator_is_accessible(engine: Engine, axe_source: str) -> None:
    """axe-core, after Start, with the config.json box open and an error shown: nothing serious."""
    page = engine.page
    mark = engine.mark()
    page.select_option("[name=model]", "custom")
    page.fill("[name=config]", "{}")
    page.wait_for_function("document.getElementById('sa-calc').dataset.state === 'refused'")
    page.add_script_tag(content=axe_source)
    violations = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .filter(v => ['serious', 'critical'].includes(v.impact))
        .map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))""")
    assert not violations, violations
    engine.assert_quiet(mark, "calculator, axe")


def test_usable_on_a_phone(browser: Any, site_url: str, catalog: Catalog) -> None:
    """At 375 px: the form, the answer and the memory bar fit the width, and the form still drives the answer."""
    eng = engine_catalog(catalog)
    with Reader(browser, site_url, viewport=PHONE, is_mobile=True, has_touch=True) as r:
        page = _start(r)
        form = _full(eng, {"model": "mixtral-8x7b", "precision": "fp8", "accelerator": "h100-sxm"})
        _drive(page, form)
        _assert_same(page.evaluate(READ), answer(eng, form), "phone")
        got = page.evaluate("""() => {
            const d = document.documentElement, w = d.clientWidth;
            const out = Array.from(document.querySelectorAll('#sa-calc *'))
                .filter(e => e.getBoundingClientRect().right > w + 1).map(e => e.tagName + '.' + e.className);
            return {scroll: d.scrollWidth, client: w, out: out.slice(0, 5),
                    bar: document.querySelector('.sa-calc-bar').getBoundingClientRect().width};
        }""")
        assert got["scroll"] <= got["client"] and not got["out"], got
        assert got["bar"] > 200, got
        assert_quiet(r, "calculator, phone")


def test_the_engine_starts_on_the_compiled_standard_library(engine: Engine, site_url: str) -> None:
    """The worker hands Pyodide the standard library compiled to bytecode (docs/assets/pyodide-stdlib/, see
    scripts/pyodide_stdlib.py), never the npm package's source-only zip, and the engine answers on it."""
    mark = engine.mark()
    assert engine.started["state"] == "answered"
    fetched = [u for u in engine.reader.log.requests if u.endswith("python_stdlib.zip")]
    assert fetched == [site_url + "assets/pyodide-stdlib/python_stdlib.zip"], fetched
    engine.assert_quiet(mark, "calculator, compiled standard library")


def test_the_page_starts_the_engine_before_its_script_runs(engine: Engine) -> None:
    """The worker is started by the page as its parser reaches the calculator (snippets/pages/calculator.py
    START_SCRIPT), before the page's module script is fetched and run, and that script adopts it."""
    assert engine.started["own_worker"], "the page's script started a worker of its own"
    assert engine.started["worker_ms"] < engine.started["script_ms"], engine.started
