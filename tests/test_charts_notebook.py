"""Build-time charts and the executed notebook page."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

from snippets.charts import (
    LOG_AXIS_DECADES,
    Bar,
    bars,
    decade_ticks,
    decades,
    figure,
    grouped_bars,
    log_bars,
    nice_ticks,
    tier_bars,
    wants_log_axis,
)
from snippets.data import Catalog
from snippets.pages.scenario import reference

from .conftest import Build, run_build, value

CLIFF = [Bar("HBM", 3350), Bar("NVLink", 450), Bar("PCIe", 63), Bar("Network", 50)]


def test_charts_are_deterministic_and_follow_their_data() -> None:
    one = tier_bars("c", CLIFF, "GB/s", "title", "desc")
    assert one == tier_bars("c", CLIFF, "GB/s", "title", "desc")
    changed = tier_bars("c", [Bar("HBM", 3000), *CLIFF[1:]], "GB/s", "title", "desc")
    assert changed != one
    assert ">3,350<" in one and ">3,000<" in changed  # value labels are drawn as text


def _bars(svg: str) -> list[Tag]:
    """The data bars of a chart: rects with a value in their tooltip (legend swatches have none)."""
    return [r for r in BeautifulSoup(svg, "html.parser").find_all("rect") if ":" in r.title.get_text()]


def test_bar_lengths_are_proportional_to_their_values() -> None:
    widths = [float(r["width"]) for r in _bars(bars("b", [Bar("a", 100), Bar("b", 50), Bar("c", 25)],
                                                            "GB/s", "t", "d"))]
    assert widths[0] == pytest.approx(2 * widths[1], abs=0.2) and widths[1] == pytest.approx(2 * widths[2], abs=0.2)
    # on a log axis, each tenfold step is the same length
    w1000, w100, w10 = (float(r["width"]) for r in _bars(log_bars("l", [Bar("a", 1000), Bar("b", 100), Bar("c", 10)],
                                                                          "GB/s", "t", "d")))
    assert w1000 - w100 == pytest.approx(w100 - w10, abs=0.2) and w10 > 0


def test_a_log_axis_only_where_the_values_span_decades() -> None:
    # the cliff, 3,350 against 50 GB/s, spans log10(67) = 1.83 decades: linear, lengths proportional
    assert decades([b.value for b in CLIFF]) == pytest.approx(1.826, abs=1e-3)
    assert decades([b.value for b in CLIFF]) < LOG_AXIS_DECADES
    assert not wants_log_axis([3350, 50]) and wants_log_axis([1000, 10]) and not wants_log_axis([5, 0])
    hbm, _, _, net = (float(r["width"]) for r in _bars(tier_bars("c", CLIFF, "GB/s", "t", "d")))
    assert hbm == pytest.approx(67 * net, rel=0.02)
    assert "log scale" not in tier_bars("c", CLIFF, "GB/s", "t", "d")
    with pytest.raises(ValueError, match=r"1\.8 powers of ten"):
        log_bars("l", CLIFF, "GB/s", "t", "d")
    # 3,350 against 25: 2.1 decades, a log axis that says so, with each bar's ratio to the smallest printed on it
    wide = tier_bars("w", [Bar("HBM", 3350), Bar("PCIe", 63), Bar("slow", 25)], "GB/s", "t", "d")
    texts = [t.get_text() for t in BeautifulSoup(wide, "html.parser").find_all("text")]
    assert "GB/s (log scale)" in texts and "n×: times the smallest bar" in texts
    assert "134×" in texts and "2.5×" in texts and "3,350" in texts  # 3350 / 25 = 134, 63 / 25 = 2.52
    assert sum(t.endswith("×") for t in texts) == 2  # the smallest bar has none


def test_labels_keep_their_significant_digits() -> None:
    svg = bars("b", [Bar("a", 1.06), Bar("b", 0.164417), Bar("c", 12.5)], "$", "t", "d")
    texts = [t.get_text() for t in BeautifulSoup(svg, "html.parser").find_all("text")]
    assert {"1.06", "0.164", "12.5"} <= set(texts)   # not "1", "0.164417"
    assert {"0", "5", "10", "15"} <= set(texts)      # ticks
    ticks = [t.get_text() for t in BeautifulSoup(bars("b", [Bar("a", 1.06)], "$", "t", "d"), "html.parser")("text")]
    assert "1.5" in ticks and "2" not in ticks        # 1.5 was drawn as "2"


def test_grouped_value_labels_stand_upright_when_their_bars_are_narrow() -> None:
    narrow = grouped_bars("g", [Bar(s, v, g) for g in ("a", "b", "c", "d") for s, v in (("x", 0.625), ("y", 320))],
                          "GiB", "t", "d")
    turned = [t for t in BeautifulSoup(narrow, "html.parser").find_all("text") if "rotate(-90" in t.get("transform", "")]
    assert {t.get_text() for t in turned} == {"0.625", "320"}
    wide = grouped_bars("g", [Bar("x", 2, "a"), Bar("x", 16, "b")], "GPUs", "t", "d", line=8, line_label="one node")
    soup = BeautifulSoup(wide, "html.parser")
    assert not [t for t in soup.find_all("text") if "rotate(-90" in t.get("transform", "") and t.get_text() != "GPUs"]
    assert "one node" in [t.get_text() for t in soup.find_all("text")]  # the dashed line is named in the legend
    assert soup.find("path", attrs={"stroke-dasharray": True}) is not None


def test_grouped_bars_stand_on_zero_and_meet_the_reference_line() -> None:
    svg = grouped_bars("g", [Bar("FP16", 8, "405B"), Bar("INT8", 4, "405B"), Bar("FP16", 2, "70B")], "GPUs", "t", "d",
                       line=8, line_label="one node")
    fp16, int8, small = _bars(svg)
    bottoms = {float(r["y"]) + float(r["height"]) for r in (fp16, int8, small)}
    assert max(bottoms) - min(bottoms) < 0.2  # one baseline
    assert float(fp16["height"]) == pytest.approx(2 * float(int8["height"]), abs=0.2)
    dashed = BeautifulSoup(svg, "html.parser").find("line", attrs={"stroke-dasharray": True})
    assert float(dashed["y1"]) == pytest.approx(float(fp16["y"]), abs=0.1)  # 8 GPUs: the line
    assert fp16.title.get_text() == "405B, FP16: 8 GPUs"  # a tooltip per bar


def test_axis_ticks_are_round_numbers_that_cover_the_data() -> None:
    assert nice_ticks(1000) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(13.44) == [0, 5, 10, 15]
    assert nice_ticks(0.7) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8])
    assert decade_ticks(25, 3350) == [10, 100, 1000, 10000]
    assert decade_ticks(100, 100) == [100, 1000]


@pytest.mark.parametrize(("chart", "message"), [
    (lambda: bars("b", [], "x", "t", "d"), "at least one bar"),
    (lambda: bars("b", [Bar("H100", float("nan"))], "x", "t", "d"), "'H100'"),
    (lambda: bars("b", [Bar("H100", -1)], "x", "t", "d"), "non-negative"),
    (lambda: log_bars("l", [Bar("PCIe", 0)], "x", "t", "d"), "positive"),
    (lambda: log_bars("l", [Bar("PCIe", 63), Bar("HBM", 3350)], "x", "t", "d"), "LOG_AXIS_DECADES"),
    (lambda: bars("b", [Bar("a bar label far longer than the chart is wide, which no phone could show", 1)],
                  "x", "t", "d"), "too long"),
    (lambda: grouped_bars("g", [Bar("FP16", 1, "a model name far too long to sit under its own bars " * 3)],
                          "x", "t", "d"), "too long"),
    (lambda: grouped_bars("g", [Bar("FP16", 12, "405B"), Bar("FP16", 6, "405B")], "x", "t", "d"), "twice"),
])
def test_charts_refuse_what_they_cannot_draw_truthfully(chart, message) -> None:
    with pytest.raises(ValueError, match=message):
        chart()


def test_charts_are_accessible_and_theme_neutral() -> None:
    svg = grouped_bars("g", [Bar("FP16", 12, "405B"), Bar("INT8", 6, "405B")], "GPUs", "GPUs needed",
                       "Twelve in FP16, six in INT8", line=8, line_label="one node")
    assert svg.startswith('<svg role="img" aria-labelledby="g-title g-desc"')
    assert '<title id="g-title">GPUs needed</title>' in svg
    assert '<desc id="g-desc">Twelve in FP16, six in INT8</desc>' in svg
    assert "currentColor" in svg and "#010203" not in svg  # text and axes follow the palette
    assert "<?xml" not in svg and "<style" not in svg and "Date" not in svg
    ids = [part.split('"')[0] for part in svg.split(' id="')[1:]]
    assert ids and all(i.startswith("g-") for i in ids)
    assert "<figcaption>Twelve" in figure(svg, "Twelve in FP16")


def test_interconnect_page_carries_the_charts_with_captions(built: Build) -> None:
    page = built.page("interconnect/index.html")
    charts = page.select("figure.sa-figure")
    assert len(charts) == 2
    cliff, gpus = charts
    assert cliff.find("svg")["aria-labelledby"] == "cliff-chart-title cliff-chart-desc"
    caption = cliff.find("figcaption").get_text()
    assert "HBM at 3,350 GB/s" in caption and "7.4× NVLink" in caption
    # the engine's layouts, the same as the parallelism page's: 405B BF16 on TP8 x PP2, INT4 on TP4
    caption = gpus.find("figcaption").get_text()
    assert "Llama 3.1 405B BF16: 16 (TP8 × PP2)" in caption and "Llama 3.1 405B INT4: 4 (TP4)" in caption


def test_notebook_page_is_executed_without_errors(built: Build, catalog: Catalog) -> None:
    page = built.page("notebooks/size-your-deployment/index.html")
    outputs = page.select(".jp-OutputArea-output")
    assert len(outputs) >= 4
    assert not page.select('[data-mime-type="application/vnd.jupyter.stderr"]')
    text = page.get_text()
    assert "Traceback" not in text and "Error" not in text
    # the notebook's default choice: Llama 3.1 405B in FP8 on an HGX H100 -> 410.1 GB, TP8 on 8 GPUs, one node
    assert value(page, "notebook-sizing[Weight memory, one copy][Value]") == pytest.approx(410.06, abs=0.01)
    assert value(page, "notebook-sizing[GPUs][Value]") == 8
    assert value(page, "notebook-sizing[Nodes][Value]") == 1
    # every figure is the engine's own, not a re-derivation: the same deployment, read back
    d = reference(catalog).deployment("llama-3.1-405b", "fp8")
    assert value(page, "notebook-memory[Weights][Value]") == pytest.approx(d.memory.weights / 2**30)
    assert value(page, "notebook-memory[Sequences the KV cache can hold][Value]") == d.max_concurrency
    # the pipelined ceiling: HBM bandwidth over the bytes the stages read in turn, 3.35 TB/s / ~51.8 GB
    assert value(page, "notebook-ceiling[Tokens per second, ceiling][Value]") == pytest.approx(d.decode_ceiling)
    assert d.decode_ceiling == pytest.approx(3.35e12 / d.decode_step_bytes(1))
    assert (built.site / "notebooks/size-your-deployment/size-your-deployment.py").is_file()
    assert page.select_one('a[href="size-your-deployment.py"]') is not None


@pytest.mark.build
def test_a_raising_notebook_cell_fails_the_build(site_copy: Path) -> None:
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text().replace("cat = load()", "cat = load()\nraise ValueError('boom in a notebook cell')", 1))
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "boom in a notebook cell" in b.output


def test_hbm_page_charts_the_decode_ceiling_of_every_accelerator(built: Build, catalog) -> None:
    page = built.page("hbm/index.html")
    chart = next(f for f in page.select("figure.sa-figure") if f.find("svg")["aria-labelledby"].startswith("ceiling-chart"))
    svg = str(chart.find("svg"))
    for acc in catalog.accelerators.values():  # one bar per accelerator, labelled with its name
        assert acc.name in svg
    # Llama 3.1 8B in FP8 through the engine: 6.98e9 linear weights at 1 byte, embedding, LM head and norms
    # (1.05e9 + 0.27e6) at 2 bytes = 9.08 GB, plus one 8,192-token BF16 KV cache (1.07 GB) = 10.15 GB a step:
    # GB200 8 TB/s / 10.15 GB = 788 tokens/s (B200 is 7.7 TB/s since the data correction); L4 300 GB/s: 29.5
    caption = chart.find("figcaption").get_text()
    assert "from 788 on the NVIDIA GB200 (per Blackwell GPU)" in caption and "to 30 on the NVIDIA L4" in caption


@pytest.mark.build
def test_the_notebook_worker_converts_as_mkdocs_jupyter_does(tmp_path: Path) -> None:
    """snippets/build/notebook_worker.py converts the notebook in a second process; the page must not differ
    from mkdocs-jupyter's own conversion (jupytext's random cell ids aside: the plugin renumbers them)."""
    import json
    import os
    import re
    import subprocess
    import sys

    from .conftest import ROOT

    src = str(ROOT / "docs/notebooks/size-your-deployment.py")
    options = {"kernel_name": "", "theme": "", "allow_errors": False, "show_input": True, "no_input": False,
               "no_prompt": False, "remove_tag_config": {}, "highlight_extra_classes": "",
               "include_requirejs": False, "custom_mathjax_url": ""}
    env = {**os.environ, "SERVING_DATA_DIR": str(ROOT / "data")}
    job = {"todo": [[src, str(tmp_path / "worker.json")]], "options": options, "toc_depth": 6}
    worker = subprocess.run([sys.executable, "-m", "snippets.build.notebook_worker"], input=json.dumps(job) + "\n",
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert worker.stdout == "done\n", worker.stderr[-2000:]
    plain = f"""
import json
from mkdocs_jupyter import plugin as mj
from mkdocs_jupyter.convert import nb2html
body = nb2html({src!r}, execute=True, **json.loads({json.dumps(options)!r}))
toc, title = mj._get_nb_toc_tokens({src!r}, 6)
print(json.dumps({{"content": body, "toc_tokens": toc, "title": title}}))
"""
    own = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert own.returncode == 0, own.stderr[-2000:]

    def norm(text: str) -> str:
        return re.sub(r"cell-id=[0-9a-f-]+", "cell-id=N", text)

    ours = json.loads((tmp_path / "worker.json").read_text(encoding="utf-8"))
    theirs = json.loads(own.stdout)
    assert ours["title"] == theirs["title"] and ours["toc_tokens"] == theirs["toc_tokens"]
    assert "jp-OutputArea-output" in ours["content"]  # executed
    assert norm(ours["content"]) == norm(theirs["content"])
