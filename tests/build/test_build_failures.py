"""Builds of modified copies of the site: the wiring of data, blocks, links and notebooks into a strict build.

Each error path itself is tested in process (tests/unit/test_computed.py, test_blocks.py, test_guard.py,
test_plugin.py, test_notebooks.py); these few builds prove that a real `mkdocs build --strict` reaches them. Each
builds a small copy (tests/build/small_site.py): the pages its subject needs, every other page a stub with its title
and anchors, the notebook stubbed unless it is the subject, and the sizing grid's searches off unless they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import Build, figures, run_build, without_sizing_searches
from .small_site import keep_only

pytestmark = pytest.mark.build


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def small(site_copy: Path, built: Build, *pages: str, notebook: bool = False, sizing: bool = False) -> None:
    """`site_copy` cut to `pages` (and the notebook, if `notebook`), the sizing grid's searches off unless `sizing`."""
    keep_only(site_copy, built, pages, notebook=notebook)
    if not sizing:
        without_sizing_searches(site_copy)


def test_figures_follow_the_data(site_copy: Path, built: Build) -> None:
    before = {n: float(e["data-value"]) for n, e in figures(built.page("interconnect/index.html")).items()}
    # Give the H100 3.0 TB/s of HBM instead of 3.35 and the A100 1,935 GB/s instead of 2,039 (its
    # PCIe card's figure): every figure that depends on them moves, and no claim on the page turns false.
    _edit(site_copy / "data/accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}",
          "{value: 3.0, unit: TB/s, direction: shared}")
    _edit(site_copy / "data/accelerators.yaml", "{value: 2039, unit: GB/s, direction: shared}",
          "{value: 1935, unit: GB/s, direction: shared}")
    small(site_copy, built, "interconnect.md")
    b = run_build(site_copy)
    assert b.returncode == 0, b.output
    after = {n: float(e["data-value"]) for n, e in figures(b.page("interconnect/index.html")).items()}
    # the charts are redrawn from the new data too
    chart_before = str(built.page("interconnect/index.html").select_one("figure.sa-figure svg"))
    chart_after = str(b.page("interconnect/index.html").select_one("figure.sa-figure svg"))
    assert chart_before != chart_after and ">3,000<" in chart_after
    assert set(after) == set(before)

    # independently: 3,000 / 450 = 6.67; 3,000 / 31.5077 = 95.2; 1,935 / 31.5077 = 61.4
    assert after["hbm"] == pytest.approx(3.0)
    assert after["hbm_over_gen4"] == pytest.approx(3000 / 31.5077, rel=1e-4)
    assert after["hbm_old_over_gen4"] == pytest.approx(1935 / 31.5077, rel=1e-4)
    assert after["hbm_over_nvlink"] == pytest.approx(3000 / 450)
    assert after["cliff[HBM3 on NVIDIA H100 SXM][One way]"] == pytest.approx(3000)

    changed = {n for n in before if before[n] != pytest.approx(after[n])}
    # every figure computed from the two edited rows moved, and nothing else did
    dependent = {n for n in before if n.startswith("hbm") or n == "cliff[HBM3 on NVIDIA H100 SXM][One way]"} | {
        n for n in before if n.startswith("cliff[") and n.endswith("[HBM is this many times faster]")
        and not n.startswith("cliff[HBM")} | {
        # the quiz's decode times read the H100's weights and KV cache through its HBM
        n for n in before if n.startswith(("q2_", "q3_")) and n.endswith(("_tpot", "_mem", "_speedup"))} | {
        # the running example's banner: the engine's cheapest configuration on the scenario's node, an HGX H100,
        # its GPUs and the counts in its words (workers, requests in flight)
        n for n in before if n == "running.gpus" or n.startswith("running.config.")}
    assert dependent == changed, (sorted(dependent - changed), sorted(changed - dependent))
    assert {"hbm", "hbm_over_nvlink", "hbm_over_nvlink_summed", "hbm_over_gen4",
            "hbm_old_over_gen4", "cliff[HBM3 on NVIDIA H100 SXM][One way]"} <= changed


def test_a_data_error_stops_the_build(site_copy: Path) -> None:
    _edit(site_copy / "data/accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}", "{value: 3.35, unit: TB/s}")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "data/accelerators.yaml: entry 'h100-sxm': field 'memory_bandwidth.direction': Field required" in b.output
    assert not (b.site / "interconnect/index.html").exists()


def test_errors_of_every_page_stop_the_build_each_at_its_line(site_copy: Path, built: Build) -> None:
    """A raising block, a typed quantity and an unknown name on two pages: one strict build lists each, once, at
    its line, without a traceback, and writes nothing."""
    small(site_copy, built, "index.md", "interconnect.md")
    page = site_copy / "docs/interconnect.md"
    _edit(page, "print(cliff_table(catalog))", "print(cliff_table(catalog))\nraise RuntimeError('boom in a block')")
    _edit(page, "carries {{ gpu_memory }} of", "carries {{ gpu_memroy }} of")
    home = site_copy / "docs/index.md"
    home.write_text(home.read_text() + "\nA node holds 640 GB.\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    lines = page.read_text().splitlines()
    boom = next(i for i, ln in enumerate(lines, 1) if "boom in a block" in ln)
    memroy = next(i for i, ln in enumerate(lines, 1) if "gpu_memroy" in ln)
    assert f"docs/interconnect.md:{boom}: a Python block raised RuntimeError: boom in a block" in b.output
    assert f"docs/interconnect.md:{memroy}: unknown name in {{{{ gpu_memroy }}}}" in b.output
    assert f"docs/index.md:{len(home.read_text().splitlines())}: hand-typed quantity '640' in prose" in b.output
    assert "error(s); nothing was written" in b.output and "Traceback" not in b.output
    assert not (b.site / "index.html").exists()


def test_a_broken_link_stops_the_strict_build_and_leaves_no_site(site_copy: Path, built: Build) -> None:
    small(site_copy, built, "index.md")
    page = site_copy / "docs/index.md"
    page.write_text(page.read_text() + "\nSee [the missing page](missing.md) and [a lost anchor](interconnect.md#nowhere).\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "missing.md" in b.output and "nowhere" in b.output
    # the two links are all that stopped it: MkDocs' own validation (mkdocs.yml's `validation:`), under --strict
    assert "Aborted with 2 warnings in strict mode!" in b.output and "error(s); nothing was written" not in b.output, \
        b.output[-3000:]
    assert not (b.site / "index.html").exists(), "a strict failure left a complete-looking site/"


def test_a_raising_notebook_cell_stops_the_build_at_its_line(site_copy: Path, built: Build) -> None:
    small(site_copy, built, notebook=True)
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text().replace("cat = load()", "cat = load()\nraise ValueError('boom in a notebook cell')", 1))
    b = run_build(site_copy)
    assert b.returncode != 0
    cell = next(i for i, ln in enumerate(nb.read_text().splitlines(), 1) if ln.startswith("from IPython"))
    assert f"docs/notebooks/size-your-deployment.py:{cell}: a notebook cell raised ValueError: boom in a notebook cell" \
        in b.output, b.output[-3000:]


def test_hostile_content_of_every_class_stops_one_build_each_at_its_line(site_copy: Path, built: Build) -> None:
    """Issue 27: content that dressed a typed number as computed, links and loads that leave the site, a data slip
    that breaks every page model. Before, each of these was published, or crashed the build with a traceback, or
    gave hundreds of "unknown name" errors; now one strict build lists each once, at its file and line."""
    small(site_copy, built, "index.md")
    home = site_copy / "docs/index.md"
    planted = ["See [run](javascript:alert(1)) now.", '<img src="https://example.com/t.png" loading="lazy" alt="t">',
               'It carries <span class="sa-fig">eighty</span> of HBM.', "It takes ½ the card.", "Run `serve --mem 80 GB`.",
               '{{ model_count.text + " GPUs" }}']
    home.write_text(home.read_text() + "\n\n" + "\n\n".join(planted) + "\n")
    lines = home.read_text().splitlines()
    at = [lines.index(p) + 1 for p in planted]
    _edit(site_copy / "mkdocs.yml", "  - Home: index.md", "  - Home of 80 GB: index.md")
    css = site_copy / "docs/stylesheets/extra.css"
    css.write_text(css.read_text() + '\n.sa-x::after { content: "80 GB"; }\n@import "https://example.com/f.css";\n')
    b = run_build(site_copy)
    assert b.returncode != 0 and "Traceback" not in b.output, b.output[-3000:]
    for i, what in enumerate(["the link 'javascript:alert(1)' is a javascript: link",
                              "<img src='https://example.com/t.png'> loads from another host",
                              "is written by hand with the markup of a computed figure", "hand-typed quantity '½' in prose",
                              "hand-typed quantity '80 GB' in a code span", "holds an operator"]):
        assert any(ln.startswith(f"docs/index.md:{at[i]}: ") and what in ln for ln in b.output.splitlines()), \
            (what, b.output[-3000:])
    assert "mkdocs.yml:" in b.output and "in the nav title 'Home of 80 GB'" in b.output
    assert "docs/stylesheets/extra.css:" in b.output and "in generated content" in b.output
    assert "url('https://example.com/f.css') loads from another host" in b.output
    assert not (b.site / "index.html").exists()


def test_one_data_slip_is_one_message(site_copy: Path, built: Build) -> None:
    """Issue 27: an id every page model looks up, renamed in data/ (it passes validation), stopped every page with
    an "unknown name" for each of its values; now it is one message naming the entry, which lists where else the
    same cause stopped the build."""
    # two pages with page models, the sizing grid's searches (which then cannot list their queries) and the notebook
    small(site_copy, built, "interconnect.md", "reference/sizing.md", notebook=True, sizing=True)
    _edit(site_copy / "data/scenarios.yaml", "\nreference:\n", "\nreferense:\n")
    b = run_build(site_copy)
    assert b.returncode != 0 and "Traceback" not in b.output
    assert "unknown name" not in b.output, b.output[-3000:]
    causes = [ln for ln in b.output.splitlines() if "no entry 'reference' where the code looks it up" in ln]
    assert len(causes) == 1 and "[the same cause also stopped: " in causes[0], b.output[-3000:]
    also = causes[0].split("[the same cause also stopped: ", 1)[1]
    assert {"docs/reference/sizing.md", "docs/notebooks/size-your-deployment.py"} <= {
        p.split(":")[0].split(" (")[0] for p in also.rstrip("]").split(", ")}, causes[0]
