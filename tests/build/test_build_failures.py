"""Builds of modified copies of the site: data changes move figures; faults stop the build, saying where."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import figures, run_build

pytestmark = pytest.mark.build


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_figures_follow_the_data(site_copy: Path, built) -> None:
    before = {n: float(e["data-value"]) for n, e in figures(built.page("interconnect/index.html")).items()}
    # Give the H100 3.0 TB/s of HBM instead of 3.35 and the A100 1,935 GB/s instead of 2,039 (its
    # PCIe card's figure): every figure that depends on them moves, and no claim on any page turns false.
    _edit(site_copy / "data/accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}",
          "{value: 3.0, unit: TB/s, direction: shared}")
    _edit(site_copy / "data/accelerators.yaml", "{value: 2039, unit: GB/s, direction: shared}",
          "{value: 1935, unit: GB/s, direction: shared}")
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
        n for n in before if n.startswith(("q2_", "q3_")) and n.endswith(("_tpot", "_mem", "_speedup"))}
    assert dependent == changed, (sorted(dependent - changed), sorted(changed - dependent))
    assert {"hbm", "hbm_over_nvlink", "hbm_over_nvlink_summed", "hbm_over_gen4",
            "hbm_old_over_gen4", "cliff[HBM3 on NVIDIA H100 SXM][One way]"} <= changed


def test_a_data_error_stops_the_build(site_copy: Path) -> None:
    _edit(site_copy / "data/accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}", "{value: 3.35, unit: TB/s}")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "data/accelerators.yaml: entry 'h100-sxm': field 'memory_bandwidth.direction': Field required" in b.output
    assert not (b.site / "interconnect/index.html").exists()


def test_a_raising_block_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "print(cliff_table(load()))", "print(cliff_table(load()))\nraise RuntimeError('boom in a block')")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = next(i for i, ln in enumerate(page.read_text().splitlines(), 1) if "boom in a block" in ln)
    assert f"docs/interconnect.md:{line}: a Python block raised RuntimeError: boom in a block" in b.output
    assert "Traceback" not in b.output  # one actionable line, not a wall of markdown-exec internals


def test_an_unknown_inline_name_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "carries {{ gpu_memory }} of", "carries {{ gpu_memroy }} of")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = next(i for i, ln in enumerate(page.read_text().splitlines(), 1) if "gpu_memroy" in ln)
    assert f"docs/interconnect.md:{line}: unknown name in {{{{ gpu_memroy }}}}" in b.output


def test_a_failing_expression_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "carries {{ gpu_memory }} of", "carries {{ gpu_memory.nonexistent }} of")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "docs/interconnect.md:" in b.output and "AttributeError" in b.output


def test_a_bare_number_is_refused(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "carries {{ gpu_memory }} of", "carries {{ gpu_memory.value }} of")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "gave a float, not a Figure" in b.output


def test_code_is_left_alone(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    page.write_text(page.read_text() + "\nLiteral `{{ not_a_name }}` in code.\n\n```text\n{{ also_not }}\n```\n")
    b = run_build(site_copy)
    assert b.returncode == 0, b.output
    html = (b.site / "interconnect/index.html").read_text()
    assert "{{ not_a_name }}" in html and "{{ also_not }}" in html


def test_a_broken_link_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/index.md"
    page.write_text(page.read_text() + "\nSee [the missing page](missing.md) and [a lost anchor](interconnect.md#nowhere).\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "missing.md" in b.output


@pytest.mark.parametrize(("typed", "expected"), [
    ("{{ claim 1 == 1 }}always{{ /claim }}", "{{ claim 1 == 1 }} uses no name from the page's namespace"),
    ("{{ claim True }}always{{ /claim }}", "{{ claim True }} uses no name from the page's namespace"),
    ("{{ claim None }}nothing{{ /claim }}", "{{ claim None }} uses no name from the page's namespace"),
    ("{{ None }}", "{{ None }} uses no name from the page's namespace"),
    ('{{ "80 GB" }}', "uses no name from the page's namespace"),
    ("{{ claim gpu_memory is None }}x{{ /claim }}", "claim 'gpu_memory is None' no longer holds"),
    ("{{ claim gpu_memory }} never closed", "{{ claim gpu_memory }} is never closed"),
])
def test_values_and_claims_that_compute_nothing_stop_the_build(site_copy: Path, typed: str, expected: str) -> None:
    page = site_copy / "docs/interconnect.md"
    page.write_text(page.read_text() + f"\nPlanted: {typed}\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = len(page.read_text().splitlines())
    assert expected in b.output, b.output[-3000:]
    assert f"docs/interconnect.md:{line}:" in b.output, b.output[-3000:]
    assert "SyntaxError" not in b.output


def test_each_occurrence_is_reported_at_its_own_line(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    text = page.read_text()
    # the first occurrence of the expression is fine; the planted one, far below, is the one that fails
    page.write_text(text + "\nFirst {{ gpu_memory.value }} here.\n\nAnd again {{ gpu_memory.value }} there.\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    lines = page.read_text().splitlines()
    one, two = (i for i, ln in enumerate(lines, 1) if "{{ gpu_memory.value }}" in ln)
    assert f"docs/interconnect.md:{one}: {{{{ gpu_memory.value }}}} gave a float" in b.output
    assert f"docs/interconnect.md:{two}: {{{{ gpu_memory.value }}}} gave a float" in b.output


def test_a_typed_quantity_in_the_front_matter_title_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    text = page.read_text()
    assert text.startswith("---\n")
    page.write_text("---\ndescription: Why 80 GB is not enough\n" + text[len("---\n"):])
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "docs/interconnect.md:2: hand-typed quantity '80' in the front matter's description" in b.output, b.output[-2000:]


def _block_line(page: Path, needle: str) -> int:
    lines = page.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines, 1) if needle in ln)
    return max(i for i, ln in enumerate(lines[:at], 1) if ln.startswith('```python exec="on"'))


def test_a_block_that_changes_shared_state_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "print(cliff_table(load()))",
          "print(cliff_table(load()))\nimport snippets.render.fmt as f\nf.number.__defaults__ = (3,)")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _block_line(page, "f.number.__defaults__")
    said = next((ln for ln in b.output.splitlines()
                 if ln.startswith(f"docs/interconnect.md:{line}: the Python block changed shared state")), "")
    assert "snippets.render.fmt.number defaults" in said, b.output[-3000:]


def test_a_block_that_removes_a_catalog_entry_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "print(cliff_table(load()))", 'print(cliff_table(load()))\nload().accelerators.pop("l4")')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = next(i for i, ln in enumerate(page.read_text().splitlines(), 1) if 'pop("l4")' in ln)
    assert f"docs/interconnect.md:{line}: a Python block raised AttributeError: 'mappingproxy' object has no attribute 'pop'" \
        in b.output, b.output[-3000:]


def test_an_html_block_that_prints_markdown_stops_the_build(site_copy: Path) -> None:
    """A block marked html="true" skips Markdown: a Markdown line in its output would be published as typed."""
    page = site_copy / "docs/reference/models.md"
    _edit(page, "print(kv_table(load()))", 'print(kv_table(load()))\nprint("Read **this** first.")')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _block_line(page, 'print("Read **this** first.")')
    assert (f'docs/reference/models.md:{line}: the html="true" block printed Markdown, which would be '
            "published as typed: 'Read **this** first.'") in b.output, b.output[-3000:]


def test_a_block_that_prints_nothing_stops_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    page.write_text(page.read_text() + '\n```python exec="on"\nsilent = 1\n```\n')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _block_line(page, "silent = 1")
    assert f'docs/interconnect.md:{line}: the python exec="on" block printed nothing' in b.output, b.output[-3000:]


def test_a_block_that_hangs_is_stopped_at_its_time_limit(site_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = site_copy / "docs/interconnect.md"
    page.write_text(page.read_text() + '\n```python exec="on"\nimport time\nwhile True:\n    time.sleep(0.1)\n```\n')
    monkeypatch.setenv("SERVING_BLOCK_TIMEOUT", "2")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _block_line(page, "while True:")
    assert f"docs/interconnect.md:{line}: the Python block ran longer than 2 s and was stopped" in b.output, b.output[-3000:]


def test_a_strict_failure_leaves_no_site_behind(site_copy: Path) -> None:
    page = site_copy / "docs/index.md"
    page.write_text(page.read_text() + "\nSee [the missing page](missing.md).\n")
    b = run_build(site_copy)
    assert b.returncode != 0 and "missing.md" in b.output
    assert not (b.site / "index.html").exists(), "a strict failure left a complete-looking site/"


@pytest.mark.parametrize(("link", "expected"), [
    ("[the HBM page](../hbm.md)", "the link '../hbm.md' in a Markdown cell reaches no page or file of the site"),
    ("[the quiz](../../hbm/#no-such-quiz)", "the link '../../hbm/#no-such-quiz' in a Markdown cell names the anchor "
                                            "#no-such-quiz, which 'hbm/' does not have"),
])
def test_a_broken_link_in_a_notebook_stops_the_build(site_copy: Path, link: str, expected: str) -> None:
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text() + f"\n# %% [markdown]\n# See {link} and [the quiz](../../hbm/#check-your-understanding).\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = len(nb.read_text().splitlines())
    assert f"docs/notebooks/size-your-deployment.py:{line}: {expected}" in b.output, b.output[-3000:]
    assert "check-your-understanding" not in b.output


def test_a_notebook_cell_that_hangs_is_stopped_at_its_time_limit(site_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text() + "\n# %%\nimport time\n\nwhile True:\n    time.sleep(0.2)\n")
    monkeypatch.setenv("SERVING_CELL_TIMEOUT", "3")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = next(i for i, ln in enumerate(nb.read_text().splitlines(), 1) if ln == "import time")
    assert f"docs/notebooks/size-your-deployment.py:{line}: a notebook cell ran longer than 3 s and was stopped" \
        in b.output, b.output[-3000:]
    # the marker is not left in the cache: the next build executes the notebook again
    again = run_build(site_copy)
    assert f"docs/notebooks/size-your-deployment.py:{line}: a notebook cell ran longer than 3 s" in again.output


def test_a_block_session_is_refused(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    page.write_text(page.read_text() + '\n```python exec="on" session="shared"\nprint("kept")\n```\n')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _block_line(page, 'print("kept")')
    assert f"docs/interconnect.md:{line}: session='shared': a session shares one block's state" in b.output, b.output[-3000:]
