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
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.__main__ import main
from snippets.engine.calc import SCENARIO, answer
from snippets.engine.search import MEETS
from snippets.pages.calculator import MEET_LABELS

from ..conftest import ROOT, Build

PYODIDE = ROOT / "docs" / "assets" / "pyodide"
PAGE = "calculator/index.html"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_site_ships_the_engine_unchanged(built: Build) -> None:
    """Each module under assets/calculator/py/ is byte for byte the repository's; the manifest lists them all."""
    out = built.site / "assets" / "calculator" / "py"
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    expected = ["snippets/__init__.py", *sorted(f"snippets/engine/{p.name}"
                                                for p in (ROOT / "snippets" / "engine").glob("*.py"))]
    assert [f["path"] for f in manifest] == expected
    for f in manifest:
        assert (out / f["path"]).read_bytes() == (ROOT / f["path"]).read_bytes()
        assert f["sha256"] == _sha(ROOT / f["path"])
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        assert _sha(built.site / "assets" / "pyodide" / name) == _sha(PYODIDE / name)
    stdlib = "pyodide-stdlib/python_stdlib.zip"  # what the worker passes to loadPyodide as stdLibURL
    assert _sha(built.site / "assets" / stdlib) == _sha(ROOT / "docs" / "assets" / stdlib)
    assert f'"{stdlib}"' in (built.site / "assets" / "calculator" / "calculator-worker.js").read_text()


def test_an_answer_is_the_command_lines_report(built: Build, capsys: pytest.CaptureFixture[str],
                                               catalog: Catalog) -> None:
    got = answer(engine_catalog(catalog), {"model": "llama-3.1-70b", "precision": "bf16", "accelerator": "h100-sxm",
                                           "context": "4000", "concurrency": "16"})
    assert main(["size", "--model", "llama-3.1-70b", "--precision", "bf16", "--accelerator", "h100-sxm",
                 "--input-tokens", str(got["report"]["input_tokens"]), "--output-tokens",
                 str(got["report"]["output_tokens"]), "--concurrency", "16", "--scenario", SCENARIO,
                 "--catalog", str(built.site / "reference" / "engine-catalog.json")]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(got["report"]))


GRID = {"concurrency": "1", "ttft_ms": "", "tpot_ms": ""}
"""The grid's case in the calculator's form: one sequence (the reference scenario's), no latency target."""


def test_every_grid_row_is_the_calculators_answer_at_the_default_case(built: Build, catalog: Catalog) -> None:
    """All of reference/sizing.json: the same rows deploy, on the same layout, GPUs, times and costs."""
    eng = engine_catalog(catalog)
    rows = json.loads((built.site / "reference" / "sizing.json").read_text())["records"]
    for r in rows:
        got = answer(eng, {"model": r["model"], "precision": r["precision"], "accelerator": r["accelerator"], **GRID})
        where = f"{r['model']} {r['precision']} {r['accelerator']}"
        limit = eng.models[r["model"]].architecture.context_length
        if limit is not None and limit < eng.scenarios[SCENARIO].context_tokens:  # the grid sizes it regardless
            assert not got["ok"] and f"context of {limit:,} tokens" in got["error"], where
            continue
        assert got["ok"] == r["deployable"], where
        if got["ok"]:
            assert_matches_grid(got["outputs"], r, where)


def assert_matches_grid(out: dict[str, Any], r: dict[str, Any], where: str) -> None:
    """The calculator's outputs (`data-value` strings) against one record of reference/sizing.json."""
    lay = r["layout"]
    assert int(out["gpus"]["value"]) == r["gpus"] == lay["tp"] * lay["pp"] * lay["dp"], where
    assert int(out["nodes"]["value"]) == r["nodes"] and int(out["gpus_rented"]["value"]) == r["gpus_rented"], where
    cost = r["cost_per_hour"]
    assert (out["cost_per_hour"]["value"] is None) == (cost is None), where
    if cost is not None:
        assert float(out["cost_per_hour"]["value"]) == pytest.approx(cost["value"], rel=1e-12), where
    pairs = (("tpot_ms", "tpot_ms_c1"), ("ttft_ms", "ttft_ms"), ("cost_per_mtok", "usd_per_mtok_output"))
    for name, key in pairs:
        want = r[key]
        if want is None or want.get("value") is None:
            assert out[name]["value"] is None, (where, name)
        else:
            assert float(out[name]["value"]) == pytest.approx(want["value"], rel=1e-12), (where, name)


def test_without_javascript_the_page_shows_the_default_answer(built: Build, catalog: Catalog) -> None:
    """The build's answer is the engine's at the default inputs, every output has a unit and a working link."""
    soup = built.page(PAGE)
    got = answer(engine_catalog(catalog), {})
    linked: dict[str, Any] = {}  # each linked page parsed once (several outputs link one page)
    for name in ("gpus", "layout", "tpot_ms", "ttft_ms", "cost_per_hour", "cost_per_mtok", "nodes",
                 "tokens_per_s_per_gpu"):
        el = soup.select_one(f'#sa-calc [data-name="{name}"]')
        assert el is not None, name
        assert el.get_text() == got["outputs"][name]["text"] and el["data-value"] == got["outputs"][name]["value"]
        assert el["data-unit"] == got["outputs"][name]["unit"]
        link = el.find_parent("div", class_="sa-calc-item").select_one("a.sa-calc-why")
        url = urlsplit(urljoin("https://x/calculator/", link["href"]))
        target = built.site / url.path.lstrip("/") / "index.html"
        assert target.is_file(), (name, link["href"])
        if url.fragment:
            rel = target.relative_to(built.site).as_posix()
            page = linked[rel] = linked.get(rel) or built.page(rel)
            assert page.find(id=url.fragment), (name, link["href"])
    for field in ("model", "precision", "accelerator", "context", "concurrency", "memory_policy", "layout_policy"):
        assert soup.select_one(f'#sa-calc-form [name="{field}"]') is not None, field
    assert {o["value"] for o in soup.select('select[name="model"] option')} == {*catalog.models, "custom"}
    # every way the search may hold the targets, in its order, the prediction chosen by default
    meet = soup.select('select[name="meet"] option')
    assert [o["value"] for o in meet] == list(MEETS) and [o.get_text() for o in meet] == [MEET_LABELS[m] for m in MEETS]
    assert soup.select_one('select[name="meet"] option[selected]')["value"] == "prediction"
    widths = [float(s["style"].removeprefix("width:").removesuffix("%")) for s in soup.select(".sa-calc-seg")]
    assert math.isclose(sum(widths), 100, abs_tol=0.01)
    assert soup.select_one('article a[href="../reference/sizing/"]') is not None  # the grid, for every case
    # the latency target's answer and the frontier, as the build computed them
    target = got["target"]
    assert target["asked"] and target["svg"]
    for name, out in target["outputs"].items():
        el = soup.select_one(f'#sa-calc .sa-calc-target [data-name="{name}"]')
        assert el is not None and el.get_text() == out["text"], name
    assert soup.select_one('#sa-calc [data-name="t_text"]').get_text() == target["text"]
    assert len(soup.select("#sa-calc-frontier svg circle")) >= len(target["frontier"])
    assert not soup.select_one("#sa-calc-custom").has_attr("open"), "the config.json box is folded"
    assert soup.select_one('#sa-calc [name="concurrency"]')["value"] == got["inputs"]["concurrency"]
    home, grid = built.page("index.html"), built.page("reference/sizing/index.html")
    assert home.select_one('article a[href="calculator/"]') and grid.select_one('article a[href="../../calculator/"]')


def test_pyodide_loads_only_on_the_calculator_page(built: Build) -> None:
    for html in built.site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        if html.relative_to(built.site).as_posix() != PAGE:
            assert "assets/pyodide/" not in text, html
            assert "calculator.js" not in text and "calculator.css" not in text, html


def test_the_published_catalog_puts_each_accelerator_on_the_builds_node(built: Build, catalog: Catalog) -> None:
    """The browser reads reference/engine-catalog.json; an accelerator's node there is the build's (data/'s order)."""
    from snippets.engine.codec import decode
    from snippets.engine.specs import EngineCatalog

    published = decode(EngineCatalog, json.loads((built.site / "reference" / "engine-catalog.json").read_text()))
    eng = engine_catalog(catalog)
    assert list(published.nodes) == list(eng.nodes)
    for chip in eng.chips:
        assert published.node_of(chip) == eng.node_of(chip), chip
