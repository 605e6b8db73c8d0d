"""The calculator page (docs/calculator.md): its vendored Pyodide, the engine modules it ships, and its answers.

The browser half (tests/browser/test_calculator.py) drives the form; this half checks, without a browser,
that the files the page loads are the ones recorded (Pyodide's checksums, the engine's modules byte for
byte), that `snippets.engine.calc.answer` agrees with the engine called directly, with the command line and
with every row of the grid's JSON, and that a reader without JavaScript sees the default answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine import deploy, setting
from snippets.engine.__main__ import report
from snippets.engine.calc import SCENARIO, SEARCHES_KEPT, SPACES_KEPT, Calculator, _ms, answer, defaults
from snippets.engine.codec import encode

from ..conftest import ROOT
from .test_hf import DEEPSEEK_V3, LLAMA_31_8B

PYODIDE = ROOT / "docs" / "assets" / "pyodide"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_vendored_pyodide_matches_its_recorded_checksums() -> None:
    """Every file of the vendored package is the one recorded in SHA256SUMS (from `npm pack pyodide@VERSION`)."""
    recorded = dict(reversed(line.split()) for line in (PYODIDE / "SHA256SUMS").read_text().splitlines())
    present = {p.name for p in PYODIDE.iterdir()} - {"SHA256SUMS", "VERSION", "LICENSE"}
    assert present == set(recorded), "files and SHA256SUMS disagree"
    for name, digest in recorded.items():
        assert _sha(PYODIDE / name) == digest, f"{name} differs from the npm package's"
    version = (PYODIDE / "VERSION").read_text().split()[1]
    assert json.loads((PYODIDE / "package.json").read_text())["version"] == version
    assert "Mozilla Public License Version 2.0" in (PYODIDE / "LICENSE").read_text()


def test_the_engine_and_calculator_import_nothing_beyond_the_standard_library(tmp_path: Path) -> None:
    """What the browser imports runs with the build's third-party packages absent."""
    from snippets.data import load
    from snippets.data.export import export

    path = tmp_path / "engine-catalog.json"
    path.write_text(json.dumps(encode(export(load()))), encoding="utf-8")
    script = (
        "import json, sys\n"
        "for name in ('pydantic', 'pydantic_core', 'yaml', '_yaml', 'bs4', 'lxml'):\n"
        "    sys.modules[name] = None\n"
        "from snippets.engine.calc import Calculator\n"
        "c = Calculator.from_file(sys.argv[1])\n"
        "print(c.answer_json(json.dumps({'model': 'custom', 'config': sys.argv[2]})))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(path), json.dumps(LLAMA_31_8B)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ok"]


CASES = [  # (form, what the engine is called with directly)
    ({}, {}),
    ({"model": "llama-3.1-405b", "precision": "bf16", "accelerator": "h100-sxm", "concurrency": "4"}, {}),
    ({"model": "deepseek-v3", "precision": "fp8", "accelerator": "h200-sxm", "context": "16384",
      "concurrency": "8", "layout_policy": "fewest-gpus"}, {}),
    ({"model": "mixtral-8x7b", "precision": "int4-g128", "accelerator": "a100-80gb-sxm", "context": "2000",
      "concurrency": "32"}, {}),
]


@pytest.mark.parametrize(("form", "_"), CASES)
def test_an_answer_is_the_engine_called_directly(catalog: Catalog, form: dict[str, str], _: Any) -> None:
    eng = engine_catalog(catalog)
    got = answer(eng, form)
    assert got["ok"], got
    i = {**defaults(eng).query(), **form}
    st = setting(eng, i["model"], i["precision"], SCENARIO, accelerator=i["accelerator"],
                 layout_policy=i["layout_policy"], concurrency=int(i["concurrency"]), context_tokens=int(i["context"]))
    d = deploy(st)
    expected = report(d, int(i["concurrency"]), st.scenario.input_tokens, st.scenario.output_tokens)
    assert got["report"] == expected
    assert got["outputs"]["gpus"]["value"] == str(d.gpus) and got["outputs"]["layout"]["text"] == d.layout.label
    assert float(got["outputs"]["tpot_ms"]["value"]) == expected["tpot_ms"]
    parts = sum(float(b["gib"]) for b in got["bar"])  # the parts fill the GPU: weights ... headroom
    assert math.isclose(parts, d.memory.capacity / 2**30, rel_tol=1e-12)


def test_bad_inputs_get_a_one_line_reason(catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    cases = {
        "must be between 1 and": {"concurrency": "0"},
        "must be a whole number": {"context": "lots"},
        "beyond Llama 3.1 405B's context of 131,072 tokens": {"model": "llama-3.1-405b", "context": "2000000"},
        "unknown parameter 'contxt'": {"contxt": "8192"},
        "model: unknown model 'llama-9'": {"model": "llama-9"},
        "the TPOT target (ms) must be above 0": {"tpot_ms": "-3"},
        "the request rate (requests/s) must be a number": {"rate": "lots"},
        "num_hidden_layers is 1,000,000, more than the 1,000": {"model": "custom", "config": json.dumps(
            {**LLAMA_31_8B, "num_hidden_layers": 1_000_000})},
        "nests objects and arrays more than": {"model": "custom", "config": "[" * 40_000 + "]" * 40_000},
        "more than 16 nodes of 8": {"model": "custom", "config": json.dumps(
            {**LLAMA_31_8B, "num_hidden_layers": 40, "hidden_size": 65536, "intermediate_size": 262144,
             "num_attention_heads": 512}), "precision": "bf16", "accelerator": "l4"},
        "unknown precision": {"precision": "fp7"},
        "paste a config.json": {"model": "custom"},
        "num_hidden_layers is missing": {"model": "custom", "config": json.dumps(
            {k: v for k, v in LLAMA_31_8B.items() if k != "num_hidden_layers"})},
    }
    for expected, form in cases.items():
        got = answer(eng, form)
        assert not got["ok"] and expected in got["error"] and "\n" not in got["error"], (form, got)
    custom = answer(eng, {"model": "custom", "config": json.dumps(DEEPSEEK_V3), "precision": "fp8",
                          "accelerator": "h200-sxm"})
    direct = answer(eng, {"model": "deepseek-v3", "precision": "fp8", "accelerator": "h200-sxm"})
    assert custom["ok"] and custom["report"]["gpus"] == direct["report"]["gpus"]
    assert custom["report"]["tpot_ms"] == direct["report"]["tpot_ms"]


def test_the_calculators_costs_show_their_price_month_and_bf16_on_a_v100_is_refused(catalog: Catalog) -> None:
    """Every cost the calculator prints carries its price's month (RunPod's Community Cloud H100 price, read 2026-09-25 in the
    silybench snapshot); BF16 on a V100 gets vLLM's one-line refusal."""
    eng = engine_catalog(catalog)
    got = answer(eng, {"model": "llama-3.1-8b", "precision": "bf16", "accelerator": "h100-sxm"})
    assert got["ok"]
    assert got["outputs"]["cost_per_hour"]["text"].endswith("(Sep 2026 price)")
    assert got["outputs"]["cost_per_mtok"]["text"].endswith("(Sep 2026 price)")
    bad = answer(eng, {"model": "llama-3.1-8b", "precision": "bf16", "accelerator": "v100-sxm2-32gb"})
    assert not bad["ok"] and "Bfloat16 is only supported on GPUs with compute capability" in bad["error"]
    fp16 = answer(eng, {"model": "llama-3.1-8b", "precision": "fp16", "accelerator": "v100-sxm2-32gb"})
    assert fp16["ok"] and fp16["outputs"]["cost_per_hour"]["text"] == "no price in data"


def test_concurrency_beyond_the_kv_cache_is_answered_with_who_runs_and_who_queues(catalog: Catalog) -> None:
    """100,000 requests in flight: as many run as the layout admits (the KV cache and max_num_seqs), the rest
    queue, and the queue's wait is in the time to first token (issue 29: it said "does not fit")."""
    eng = engine_catalog(catalog)
    got = answer(eng, {"model": "llama-3.1-405b", "concurrency": "100000"})
    assert got["ok"], got
    rep = got["report"]
    running, queued = int(got["outputs"]["running"]["value"]), int(got["outputs"]["queued"]["value"])
    assert running == rep["in_flight"] <= rep["max_concurrency"] and running + queued == 100_000
    assert "queue for a slot" in got["outputs"]["note"]["text"]
    held = answer(eng, {"model": "llama-3.1-405b", "concurrency": str(running)})
    assert held["ok"] and held["outputs"]["queued"]["value"] == "0"
    assert float(got["outputs"]["ttft_ms"]["value"]) > float(held["outputs"]["ttft_ms"]["value"])


def test_the_weights_say_when_they_hold_the_image_encoder(catalog: Catalog) -> None:
    """Llama 4 under vLLM: the memory bar's weights hold the image encoder vLLM builds (0.87B parameters, in 16 bits,
    split over TP: tests/unit/test_memory.py works it), and the note says how much, so a reader who sums the
    checkpoint is not left 1.6 GiB short at TP1; SGLang, which builds none, says nothing of it."""
    eng = engine_catalog(catalog)
    got = answer(eng, {"model": "llama-4-scout", "precision": "fp8", "accelerator": "h100-sxm"})
    assert got["ok"], got
    tp = int(got["report"]["layout"]["tp"])
    note = got["outputs"]["note"]["text"]
    assert f"image encoder, {(870_825_728 / tp + 1_106_688) * 2 / 2**30:,.2f} GiB a GPU" in note
    assert "vLLM builds it unless images are limited to none" in note
    sgl = answer(eng, {"model": "llama-4-scout", "precision": "fp8", "accelerator": "h100-sxm",
                       "memory_policy": "sglang-default"})
    assert sgl["ok"], sgl
    assert "image encoder" not in sgl["outputs"]["note"]["text"]
    plain = answer(eng, {"model": "llama-3.1-70b"})
    assert plain["ok"] and "image encoder" not in plain["outputs"]["note"]["text"]


def test_a_rate_says_what_one_replica_holds_or_that_its_queue_grows(catalog: Catalog) -> None:
    """With a request rate, one replica of the configuration shown: below what it finishes, the requests it holds
    are the rate times a request's life (Little's law, worked here from the TTFT and TPOT the answer shows); at a
    rate beyond what it finishes with every slot it admits full, it says so and what it does finish, which is more
    than the closed loop at the form's concurrency finishes. Without a rate it asks for one."""
    import re

    eng = engine_catalog(catalog)
    base = answer(eng, {})
    assert base["ok"] and base["outputs"]["at_rate"]["text"] == "give a request rate"
    n_out = base["report"]["output_tokens"]
    closed = base["report"]["output_tokens_per_s"] / n_out  # requests a second at the form's concurrency
    full = answer(eng, {"rate": "1000"})["outputs"]["at_rate"]
    done = float(full["value"])
    assert full["unit"] == "requests/s" and "the queue grows" in full["text"] and f"{done:,.2f} a second" in full["text"]
    assert done > closed
    for share in (0.05, 0.5, 0.9):
        rate = round(share * done, 3)
        got = answer(eng, {"rate": str(rate)})
        assert got["ok"], got
        out = got["outputs"]["at_rate"]
        held = float(out["value"])
        ttft, tpot = (float(x.replace(",", "")) for x in re.findall(r"([\d,.]+) ms", out["text"]))
        life = (ttft + (n_out - 1) * tpot) / 1e3
        assert out["unit"] == "requests" and f"{held:,.1f} requests in flight" in out["text"]
        assert held == pytest.approx(rate * life, rel=0.01), (share, held, rate * life)
        assert got["outputs"]["layout"] == base["outputs"]["layout"]  # the configuration the form shows
    assert answer(eng, {"rate": "0"})["ok"] is False  # a rate is above zero
    untimed = answer(eng, {"model": "deepseek-r1", "precision": "fp8-block", "accelerator": "l4", "rate": "1"})
    assert untimed["ok"] and untimed["report"] is None  # sized across nodes whose network data/ lacks: not timed
    assert untimed["outputs"]["at_rate"]["text"] == "not predicted"


def test_a_range_that_is_not_its_regimes_own_says_so(catalog: Catalog) -> None:
    """Beside the times, a range taken from the span of the bands with enough rows (its regime has fewer than five
    test rows) is named as such in the answer's note, in the engine's words (issue 24)."""
    eng = engine_catalog(catalog)
    # the default case's regimes hold test rows of their own; a TPU's hold none (no measurement of a Google chip)
    for form, widest in (({}, False), ({"accelerator": "tpu-v5e"}, True)):
        got = answer(eng, form)
        assert got["ok"], got
        bands = got["report"]["bands"]
        note = got["outputs"]["note"]["text"]
        for key in ("ttft_ms", "tpot_ms"):
            assert bands[key]["widest"] is widest, (form, key, bands[key])
            assert (bands[key]["basis"] in note) is widest, (key, bands[key], note)
            assert (bands[key]["test_rows"] >= 5) is not widest
        b = bands["output_tokens_per_s"]
        assert b["widest"] is widest and (f"The ranges beside the throughput and the cost per token: {b['basis']}."
                                          in note) is widest, (form, b, note)
        if widest:
            assert "The ranges beside the times: " in note and "the span of the bands with enough rows" in note, note


def test_a_range_that_misses_its_prediction_says_which_way_the_regimes_runs_missed(catalog: Catalog) -> None:
    """Where every test run of a regime but a fifth came out slower (or faster) than predicted, its range lies above
    (or below) the prediction; the note says so, by the figures, and says nothing where the range holds it."""
    eng = engine_catalog(catalog)
    seen = {True: 0, False: 0}
    for form in ({}, {"model": "deepseek-r1", "precision": "fp8", "accelerator": "h200-sxm", "concurrency": "64"},
                 {"accelerator": "mi300x"}, {"model": "llama-3.1-8b", "precision": "bf16", "concurrency": "1"}):
        got = answer(eng, form)
        assert got["ok"], got
        rep, note = got["report"], got["outputs"]["note"]["text"]
        for key, what in (("ttft_ms", "time to first token"), ("tpot_ms", "time per output token")):
            v, (lo, hi) = rep[key], rep[f"{key}_range"]
            outside = not lo <= v <= hi
            regime = rep["bands"][key]["regime"]
            above = (f"The range beside the {what} lies above it: in its regime ({regime}) at least 80% of the test "
                     "measurements came out slower than the engine predicts them.")
            below = above.replace("lies above", "lies below").replace("slower", "faster")
            assert (above in note) == (outside and v < lo) and (below in note) == (outside and v > hi), (form, key)
            seen[outside] += 1
        # the throughput's range the other way about, and the cost per token's opposite it
        v, (lo, hi) = rep["output_tokens_per_s"], rep["output_tokens_per_s_range"]
        outside = not lo <= v <= hi
        regime = rep["bands"]["output_tokens_per_s"]["regime"]
        above = (f"The range beside the throughput lies above it, and the cost per token's below it: in its regime "
                 f"({regime}) at least 80% of the test measurements came out faster than the engine predicts them.")
        below = (above.replace("lies above", "lies below").replace("'s below", "'s above")
                 .replace("faster", "slower"))
        assert (above in note) == (outside and v < lo) and (below in note) == (outside and v > hi), (form, note)
        seen[outside] += 1
    assert seen[True] and seen[False], seen  # both cases met: a range above its prediction and one holding it


def test_every_failure_of_the_engine_is_an_error_never_a_raise(catalog: Catalog, monkeypatch: Any) -> None:
    """Whatever the engine raises (an overflow, a recursion error, a bug) reaches the reader as an error."""
    import snippets.engine.calc as calc

    eng = engine_catalog(catalog)
    for exc in (OverflowError("math range error"), RecursionError("maximum recursion depth"),
                ZeroDivisionError("float division by zero"), AttributeError("x")):
        def boom(*_: Any, exc: BaseException = exc, **__: Any) -> Any:
            raise exc
        monkeypatch.setattr(calc, "search", boom)
        got = answer(eng, {})
        assert not got["ok"] and "cannot compute this" in got["error"], (exc, got)


def test_the_target_answer_is_the_search_and_tightening_tpot_never_cheapens_it(catalog: Catalog) -> None:
    from snippets.engine.search import search

    eng = engine_catalog(catalog)
    got = answer(eng, {"rate": "20"})
    assert got["ok"], got
    t = got["target"]
    res = search(eng, "llama-3.1-70b", "fp8", "h100-sxm", got["report"]["input_tokens"],
                 got["report"]["output_tokens"], ttft_ms=2000, tpot_ms=30, rate=20, scenario="serving")
    assert res.recommended is not None and res.recommended_plan is not None and res.best is not None
    rec, plan = res.recommended, res.recommended_plan
    assert t["outputs"]["t_mode"]["value"] == rec.mode
    assert float(t["outputs"]["t_cost_per_mtok"]["value"]) == rec.usd_per_mtok
    assert int(t["outputs"]["t_rented"]["value"]) == plan.rented_gpus
    assert float(t["outputs"]["t_cost_per_hour"]["value"]) == plan.usd_per_hour
    # each time and the throughput per GPU with the band that held 80 % of its regime's test errors
    lo, hi = (x * 1e3 for x in rec.prediction.tpot_range)
    assert t["outputs"]["t_tpot_ms"]["text"] == f"{rec.tpot_s * 1e3:,.1f} ms, {lo:,.1f}–{hi:,.1f}"
    lo, hi = (x / rec.gpus for x in rec.prediction.throughput_range)
    assert t["outputs"]["t_per_gpu"]["text"] == f"{rec.per_gpu:,.1f} tokens/s per GPU, {lo:,.1f}–{hi:,.1f}"
    # the cost per token with its throughput's band, inverted: the fast end the cheap one
    month = rec.deployment.setting.price.as_of if rec.deployment.setting.price is not None else None
    lo, hi = (rec.usd_per_mtok * rec.output_tokens_per_s / x for x in reversed(rec.prediction.throughput_range))
    assert t["outputs"]["t_cost_per_mtok"]["text"] == f"${rec.usd_per_mtok:,.2f}, {lo:,.2f}–{hi:,.2f} ({month} price)"
    rep = got["report"]
    lo, hi = rep["output_tokens_per_s_per_gpu_range"]
    assert lo == pytest.approx(rep["output_tokens_per_s_range"][0] / rep["gpus"], rel=1e-12)
    assert got["outputs"]["tokens_per_s_per_gpu"]["text"] == (
        f"{rep['output_tokens_per_s_per_gpu']:,.1f} tokens/s per GPU, {lo:,.1f}–{hi:,.1f}")
    lo, hi = rep["usd_per_mtok_output_range"]
    assert got["outputs"]["cost_per_mtok"]["text"].startswith(f"${rep['usd_per_mtok_output']:,.2f}, {lo:,.2f}–{hi:,.2f} (")
    # the workers for the rate at their share of it: their TTFT, TPOT and cost per token, not the configuration's
    v = res.recommended_served
    assert v is not None and v.plan is plan and v.usd_per_mtok is not None
    assert t["outputs"]["t_replicas"]["text"].endswith(
        f"for 20 requests/s: TTFT {_ms(v.ttft_s * 1e3)}, TPOT {_ms(v.tpot_s * 1e3)}, "
        f"${v.usd_per_mtok:,.2f} ({res.setting.price.as_of} price) per million output tokens at that rate")
    assert float(t["outputs"]["t_cheapest"]["value"]) == res.best.usd_per_mtok
    assert len(t["frontier"]) == len(res.frontier) and t["svg"].startswith("<svg")
    # the claim is about the cheapest: a tighter target never buys a cheaper token (the recommended may move)
    costs = []
    for tpot in ("60", "30", "20", "15"):
        g = answer(eng, {"tpot_ms": tpot})["target"]
        if g["met"]:
            costs.append(float(g["outputs"]["t_cheapest"]["value"]))
    assert costs == sorted(costs) and len(costs) >= 2
    none = answer(eng, {"tpot_ms": "1"})["target"]
    assert not none["met"] and "time per output token binds" in none["text"]
    # the memory policy chosen in the form is the search's too: SGLang's budget and its prefill steps
    sgl = answer(eng, {"rate": "20", "memory_policy": "sglang-default"})["target"]
    res = search(eng, "llama-3.1-70b", "fp8", "h100-sxm", got["report"]["input_tokens"],
                 got["report"]["output_tokens"], ttft_ms=2000, tpot_ms=30, rate=20, scenario="serving",
                 memory_policy="sglang-default")
    assert res.recommended is not None and res.setting.memory_policy.id == "sglang-default"
    assert float(sgl["outputs"]["t_cost_per_mtok"]["value"]) == res.recommended.usd_per_mtok
    assert answer(eng, {"memory_policy": "sglang-default"})["report"]["assumptions"]["mixed_steps"] is False
    off = answer(eng, {"ttft_ms": "", "tpot_ms": ""})["target"]
    assert off["asked"] is False


def test_the_form_can_hold_the_band_edge_to_the_targets(catalog: Catalog) -> None:
    """The form's `meet` is the search's: `band` answers what `search(..., meet="band")` recommends, says so, costs
    no less than the prediction's answer and is kept apart from it; anything else is refused by name."""
    from snippets.engine.search import search

    eng = engine_catalog(catalog)
    calc = Calculator(eng)
    plain = calc.answer({"ttft_ms": "20000", "tpot_ms": "40"})
    band = calc.answer({"ttft_ms": "20000", "tpot_ms": "40", "meet": "band"})
    assert plain["ok"] and band["ok"] and calc.searches == 2
    assert (plain["inputs"]["meet"], band["inputs"]["meet"]) == ("prediction", "band")
    res = search(eng, "llama-3.1-70b", "fp8", "h100-sxm", band["report"]["input_tokens"],
                 band["report"]["output_tokens"], ttft_ms=20000, tpot_ms=40, scenario="serving", meet="band")
    assert res.recommended is not None and res.best is not None and res.meet == "band"
    t, p = band["target"], plain["target"]
    assert t["met"] and float(t["outputs"]["t_cost_per_mtok"]["value"]) == res.recommended.usd_per_mtok
    assert "TPOT at most 40.0 ms at the slow edge of each prediction's error band" in t["text"]
    assert "error band" not in p["text"]
    assert float(t["outputs"]["t_cheapest"]["value"]) > float(p["outputs"]["t_cheapest"]["value"])
    assert res.best.prediction.tpot_range[1] <= 0.04 * (1 + 1e-9)
    bad = answer(eng, {"meet": "median"})
    assert bad == {"ok": False, "error": "meet: unknown way to meet the targets 'median'; known: band, prediction"}


def test_the_calculator_keeps_its_searches_and_answers_as_answer_does(catalog: Catalog) -> None:
    """The page's Calculator searches again only when what the search reads changes: a new concurrency or layout
    policy reuses the kept target section, a new target, rate, context, model or memory policy searches; a new target
    or rate searches in the space kept for the rest (its predictions reused), anything else in a new one; every
    answer is `answer`'s, and the kept searches and spaces are the most recently used."""
    eng = engine_catalog(catalog)
    calc = Calculator(eng)
    form = defaults(eng).query()
    steps = [  # (form, searches run so far, search spaces made so far)
        (form, 1, 1),
        ({**form, "concurrency": "8"}, 1, 1),
        ({**form, "layout_policy": "fewest-gpus"}, 1, 1),
        ({**form, "tpot_ms": "40"}, 2, 1),  # a new search in the same space: its predictions reused
        ({**form, "concurrency": "16"}, 2, 1),
        ({**form, "rate": "5"}, 3, 1),
        ({**form, "context": "4096"}, 4, 2),
        ({**form, "memory_policy": "sglang-default"}, 5, 3),
        ({**form, "model": "llama-3.1-8b"}, 6, 4),
        ({**form, "model": "custom", "config": json.dumps(LLAMA_31_8B)}, 7, 5),
        ({**form, "model": "custom", "config": json.dumps({**LLAMA_31_8B, "num_hidden_layers": 16})}, 8, 6),
        ({**form, "model": "custom", "config": json.dumps(LLAMA_31_8B), "ttft_ms": "900"}, 9, 6),
        ({**form, "ttft_ms": "900"}, 10, 7),  # its space was the least recently used of SPACES_KEPT + 1: dropped
    ]
    assert SPACES_KEPT == 4
    for f, searches, spaces in steps:
        assert calc.answer(f) == answer(eng, f), f
        assert (calc.searches, calc.spaces) == (searches, spaces), (f, calc.searches, calc.spaces)
    assert json.loads(calc.answer_json(json.dumps({**form, "concurrency": "4"}))) == answer(eng, {**form, "concurrency": "4"})
    # the form's own search was the least recently used of SEARCHES_KEPT + 2: searched again, in the kept space
    assert (calc.searches, calc.spaces) == (11, 7)
    # an answer changed by its caller leaves the kept search as it was
    changed = calc.answer(form)
    changed["target"]["outputs"].clear()
    assert calc.answer(form) == answer(eng, form) and calc.searches == 11
    # the least recently used is dropped once more than SEARCHES_KEPT are kept
    fresh = Calculator(eng)
    for i in range(SEARCHES_KEPT + 1):
        fresh.answer({**form, "tpot_ms": str(31 + i)})
    assert fresh.searches == SEARCHES_KEPT + 1
    fresh.answer({**form, "tpot_ms": str(31 + SEARCHES_KEPT)})  # the newest: kept
    assert fresh.searches == SEARCHES_KEPT + 1
    fresh.answer({**form, "tpot_ms": "31"})  # the oldest: dropped, searched again
    assert fresh.searches == SEARCHES_KEPT + 2


def test_the_target_names_the_cheapest_where_it_is_not_the_recommended(catalog: Catalog) -> None:
    """gpt-oss-20b FP8 on H100: disaggregated on 88 GPUs is the cheapest by about 5%, under the 10% the layout
    policy asks of a second pool; the calculator recommends one aggregated replica and names the cheapest."""
    from snippets.engine.search import search

    eng = engine_catalog(catalog)
    form = {"model": "gpt-oss-20b", "precision": "fp8", "accelerator": "h100-sxm", "ttft_ms": "2000", "tpot_ms": "30"}
    got = answer(eng, form)
    assert got["ok"], got
    t = got["target"]
    res = search(eng, "gpt-oss-20b", "fp8", "h100-sxm", got["report"]["input_tokens"], got["report"]["output_tokens"],
                 ttft_ms=2000, tpot_ms=30, scenario="serving")
    assert res.best is not None and res.recommended is not None and 0 < res.saving < 0.10
    out = t["outputs"]
    assert out["t_mode"]["value"] == "aggregated" and int(out["t_gpus"]["value"]) == res.recommended.gpus
    assert float(out["t_cheapest"]["value"]) == res.best.usd_per_mtok < res.recommended.usd_per_mtok
    pct = f"{res.saving * 100:.1f}%"
    assert out["t_cheapest"]["text"].startswith(f"The cheapest, {res.best.label} on {res.best.gpus:,} GPUs, is {pct}")
    assert f"is {pct} cheaper per output token" in t["text"] and "at least 10%" in t["text"]
    assert t["svg"].count('class="sa-calc-cheapest"') == 2 and t["svg"].count('class="sa-calc-best"') == 2
    # where the two agree, the answer says so and draws one ring
    same = answer(eng, {"tpot_ms": "30"})["target"]
    assert same["text"].endswith("which is also the cheapest.") and "sa-calc-cheapest" not in same["svg"]


def test_cost_per_hour_is_labelled_per_replica_and_per_instance(catalog: Catalog) -> None:
    """TP4 in an 8-GPU rental: the replica's share is half the instance's hour, and $/Mtok rests on the share."""
    eng = engine_catalog(catalog)
    got = answer(eng, {})
    out = got["outputs"]
    per_instance, per_replica = float(out["cost_per_hour"]["value"]), float(out["cost_per_replica_hour"]["value"])
    gpus, rented = int(out["gpus"]["value"]), int(out["gpus_rented"]["value"])
    assert math.isclose(per_replica * (rented // gpus), per_instance)
    assert out["rental_share"]["text"] == f"{gpus} of {rented} rented GPUs"
    assert got["inputs"]["concurrency"] == str(eng.scenarios["serving"].concurrency)


def test_the_browser_loads_exactly_the_modules_the_calculator_imports() -> None:
    """The page lists what `snippets.engine.calc` imports (issue 29: load only what the engine imports); a module
    it imports but the list lacks would fail in the browser, one listed but never imported is a wasted request."""
    from snippets.pages.calculator import engine_imports

    out = subprocess.run([sys.executable, "-c", "import sys, snippets.engine.calc\n"
                          "print(' '.join(sorted(m for m in sys.modules if m.startswith('snippets'))))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    imported = set(out.stdout.split())
    listed = {p.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for p in engine_imports()}
    assert listed == imported


STDLIB = ROOT / "docs" / "assets" / "pyodide-stdlib"


def test_the_compiled_standard_library_is_the_vendored_one_compiled() -> None:
    """docs/assets/pyodide-stdlib/python_stdlib.zip holds, for each module of the vendored (source-only) zip, one
    unchecked hash-based .pyc (PEP 552) with the bytecode magic of the Python Pyodide reports, made from this very
    source zip (its SOURCE record names it by sha256); every other member is copied as it is. That the bytecode
    runs is the browser tests' part (every calculator test starts Pyodide on it); remaking it needs node, and
    `python scripts/pyodide_stdlib.py --check` compares byte for byte."""
    import zipfile

    record = dict(line.split(": ", 1) for line in (STDLIB / "SOURCE").read_text().splitlines())
    assert record["source"].split()[-1] == _sha(PYODIDE / "python_stdlib.zip"), "made from another python_stdlib.zip"
    assert record["sha256"] == _sha(STDLIB / "python_stdlib.zip")
    lock = json.loads((PYODIDE / "pyodide-lock.json").read_text())
    assert record["python"].split()[0] == lock["info"]["python"], "compiled by another Python than Pyodide's"
    magic = bytes.fromhex(record["magic"])
    assert len(magic) == 4 and magic[2:] == b"\r\n"
    with zipfile.ZipFile(PYODIDE / "python_stdlib.zip") as source, zipfile.ZipFile(STDLIB / "python_stdlib.zip") as made:
        names = {n[:-3] + ".pyc" if n.endswith(".py") else n for n in source.namelist()}
        assert set(made.namelist()) == names
        for name in source.namelist():
            got = made.read(name[:-3] + ".pyc" if name.endswith(".py") else name)
            if not name.endswith(".py"):
                assert got == source.read(name), name
                continue
            assert got[:4] == magic, name
            assert int.from_bytes(got[4:8], "little") == 0b01, f"{name}: not an unchecked hash-based pyc"
            assert len(got) > 16, name


def test_the_calculator_shows_the_kv_cache_as_the_engine_logs_it(catalog: Catalog) -> None:
    """The tokens of the KV cache per GPU, with the lines vLLM prints of it at start (`memory.KVCacheSize`)."""
    eng = engine_catalog(catalog)
    got = answer(eng, {"model": "llama-3.1-70b"})
    assert got["ok"], got
    k = got["report"]["kv_cache_size"]
    out = got["outputs"]["kv_tokens"]
    assert out["value"] == str(k["tokens"]) and k["engine"] == "vLLM"
    # vLLM logs the tokens a worker's cache holds: each GPU of the TP group its share of every token's heads, so the
    # figure is the group's capacity, not one to multiply by the TP degree
    assert out["text"] == (f"{k['tokens']:,} tokens, each GPU holding its share of every token "
                           f"(vLLM logs: {'; '.join(k['log'])})")
    assert k["log"][1] == f"GPU KV cache size: {k['tokens']:,} tokens"
    assert k["log"][0] == f"Available KV cache memory: {k['available_gib']:.2f} GiB"


def test_the_download_the_page_states_is_what_the_worker_fetches() -> None:
    """The page's Pyodide download counts the files calculator-worker.js loads: the loader, the WebAssembly module,
    the lock file and the site's compiled standard library (its stdLibURL), not the npm package's source zip."""
    import re

    from snippets.pages.calculator import ASSETS, PYODIDE_FILES, download_bytes

    worker = (ROOT / "docs" / "assets" / "calculator" / "calculator-worker.js").read_text(encoding="utf-8")
    stdlib = re.search(r'stdLibURL: new URL\("([^"]+)"', worker)
    index = re.search(r'indexURL: new URL\("([^"]+)"', worker)
    assert stdlib is not None and index is not None
    assert stdlib.group(1) in PYODIDE_FILES and index.group(1) + "python_stdlib.zip" not in PYODIDE_FILES
    assert all(f.startswith(index.group(1)) for f in PYODIDE_FILES if f != stdlib.group(1))
    assert download_bytes() == sum((ASSETS / f).stat().st_size for f in PYODIDE_FILES)
    assert download_bytes() - (ASSETS / stdlib.group(1)).stat().st_size == sum(
        (ASSETS / index.group(1) / f).stat().st_size
        for f in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json"))
