"""Build-time charts and the executed notebook page."""

from __future__ import annotations

from pathlib import Path

import pytest

from snippets.charts import Bar, figure, grouped_bars, log_bars

from .conftest import Build, run_build, value

CLIFF = [Bar("HBM", 3350), Bar("NVLink", 450), Bar("PCIe", 63), Bar("Network", 50)]


def test_charts_are_deterministic_and_follow_their_data() -> None:
    one = log_bars("c", CLIFF, "GB/s", "title", "desc")
    assert one == log_bars("c", CLIFF, "GB/s", "title", "desc")
    changed = log_bars("c", [Bar("HBM", 3000), *CLIFF[1:]], "GB/s", "title", "desc")
    assert changed != one
    assert ">3,350<" in one and ">3,000<" in changed  # value labels are drawn as text


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
    assert "Llama 3.1 405B FP16: 12" in gpus.find("figcaption").get_text()


def test_notebook_page_is_executed_without_errors(built: Build) -> None:
    page = built.page("notebooks/size-your-deployment/index.html")
    outputs = page.select(".jp-OutputArea-output")
    assert len(outputs) >= 4
    assert not page.select('[data-mime-type="application/vnd.jupyter.stderr"]')
    text = page.get_text()
    assert "Traceback" not in text and "Error" not in text
    # the notebook's default choice: Llama 3.1 405B in INT8 on H100 -> 405 GB, 6 GPUs, TP8 on 8 GPUs
    assert value(page, "notebook-sizing[Weight memory][Value]") == 405
    assert value(page, "notebook-sizing[GPUs with the reserve][Value]") == 6
    assert value(page, "notebook-layout[GPUs rented][Value]") == 8
    # tokens/s ceiling = 8 x 3.35 TB/s / 405 GB
    assert value(page, "notebook-ceiling[Tokens per second, ceiling][Value]") == pytest.approx(8 * 3.35e12 / 405e9)
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
    # Llama 3.1 8B in FP8 is 8 GB: B200 8 TB/s / 8 GB = 1,000 tokens/s; L4 300 GB/s / 8 GB = 37.5
    caption = chart.find("figcaption").get_text()
    assert "from 1,000 on the NVIDIA B200" in caption and "to 38 on the NVIDIA L4" in caption


@pytest.mark.build
def test_the_notebook_worker_converts_as_mkdocs_jupyter_does(tmp_path: Path) -> None:
    """hooks/notebook_worker.py hands nbconvert a kernel it started itself; the page must not differ
    from mkdocs-jupyter's own conversion (jupytext's random cell ids aside: the hook renumbers them)."""
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
    job = {"todo": [[src, str(tmp_path / "worker.json"), "python3"]], "options": options, "toc_depth": 6}
    worker = subprocess.run([sys.executable, str(ROOT / "hooks/notebook_worker.py")], input=json.dumps(job) + "\n",
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


def test_a_cached_chart_is_the_drawn_chart_and_changed_inputs_redraw(tmp_path: Path, monkeypatch) -> None:
    from snippets import charts

    monkeypatch.setenv(charts.CACHE_DIR_ENV, str(tmp_path))
    drawn = log_bars("c", CLIFF, "GB/s", "title", "desc")
    assert len(list(tmp_path.glob("*.svg"))) == 1
    monkeypatch.setattr(charts, "_pyplot", lambda: pytest.fail("drew a chart the cache holds"))
    assert log_bars("c", CLIFF, "GB/s", "title", "desc") == drawn  # from the cache, byte for byte
    with pytest.raises(pytest.fail.Exception, match="drew a chart"):  # any changed input is drawn anew
        log_bars("c", [Bar("HBM", 3000), *CLIFF[1:]], "GB/s", "title", "desc")
    with pytest.raises(pytest.fail.Exception, match="drew a chart"):
        log_bars("c", CLIFF, "GB/s", "another title", "desc")
    monkeypatch.delenv(charts.CACHE_DIR_ENV)
    with pytest.raises(pytest.fail.Exception, match="drew a chart"):  # no cache directory: always drawn
        log_bars("c", CLIFF, "GB/s", "title", "desc")
