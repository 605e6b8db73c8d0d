"""Drift guards: each fault injected into a copy of the site is caught, naming the place."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT, run_build


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.build
def test_a_typed_quantity_in_prose_fails_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "while one {{ gpu_name }} carries {{ gpu_memory }} of [HBM](hbm.md)",
          "while one {{ gpu_name }} carries 50 GB of [HBM](hbm.md)")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _line(page, "carries 50 GB of")
    assert f"docs/interconnect.md:{line}: hand-typed quantity '50' in prose" in b.output


@pytest.mark.build
def test_a_claim_made_false_by_data_fails_the_build(site_copy: Path) -> None:
    # An H100 with 141 GB, as CUDA reports it (the total the engine budgets): 405B FP16 then needs
    # ceil(810 / 126.9) = 7 GPUs and fits one node, and 70B FP16 (140 GB) no longer exceeds one card.
    # Both sentences must stop the build. (The label and nvidia-smi's total move with it, or the data is refused.)
    acc = site_copy / "data/accelerators.yaml"
    _edit(acc, "memory: {value: 80, unit: GB}\n  memory_type: HBM3\n  memory_runtime:\n    value: 79.22\n    unit: GiB",
          "memory: {value: 141, unit: GB}\n  memory_type: HBM3\n  memory_runtime:\n    value: 141\n    unit: GB")
    _edit(acc, "memory_reported:\n    value: 81559\n    unit: MiB", "memory_reported:\n    value: 143000\n    unit: MiB")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "nothing was written" in b.output  # every page's errors are listed, no page is published
    page = site_copy / "docs/interconnect.md"
    line = _line(page, "{{ claim m405_fp16.spans_nodes }}")
    assert f"docs/interconnect.md:{line}: claim 'm405_fp16.spans_nodes' no longer holds" in b.output
    assert "7 GPUs needed, 8 GPUs per node" in b.output
    assert "claim 'fp16_70b_exceeds_card' no longer holds" in b.output


@pytest.mark.build
def test_a_figure_changed_by_data_shows_in_the_snapshot_diff(site_copy: Path) -> None:
    _edit(site_copy / "data/accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}",
          "{value: 3.0, unit: TB/s, direction: shared}")
    b = run_build(site_copy)
    assert b.returncode == 0, b.output
    env = {**os.environ, "SERVING_SITE_DIR": str(b.site)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         str(ROOT / "tests/site/test_snapshot.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "interconnect.md :: hbm: 3.35 TB/s -> 3 TB/s" in out
    assert "interconnect.md :: hbm_over_nvlink: 7.44444 x -> 6.66667 x" in out
    assert "hbm.md :: ceiling[Llama 3.1 70B FP8 on H100 SXM][Weights only]: 92.2116 tokens/s -> 82.5775 tokens/s" in out


@pytest.mark.build
def test_a_link_to_a_missing_anchor_fails_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/index.md"
    page.write_text(page.read_text() + "\nSee [the cliff](interconnect.md#no-such-section).\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "no-such-section" in b.output and "index.md" in b.output


@pytest.mark.build
def test_unrendered_braces_fail_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "carries {{ gpu_memory }} of", "carries {{ {gpu_memory} }} of")
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "docs/interconnect.md: unrendered '{{'" in b.output


@pytest.mark.build
def test_two_builds_are_byte_identical(site_copy: Path, tmp_path: Path) -> None:
    shutil.rmtree(site_copy / ".cache", ignore_errors=True)  # cold: the notebook is executed
    first = run_build(site_copy)
    assert first.returncode == 0, first.output
    kept = tmp_path / "first"
    first.site.rename(kept)
    shutil.rmtree(site_copy / ".cache", ignore_errors=True)  # cold again: the notebook is executed anew
    second = run_build(site_copy)
    assert second.returncode == 0, second.output

    def differences(cmp: filecmp.dircmp[str], prefix: str = "") -> list[str]:
        out = [prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files]
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        out += [prefix + n for n in mismatch + errors]
        for name, sub in cmp.subdirs.items():
            out += differences(sub, f"{prefix}{name}/")
        return out

    assert differences(filecmp.dircmp(kept, second.site)) == []
    assert (kept / "sitemap.xml").read_bytes() == (second.site / "sitemap.xml").read_bytes()


@pytest.mark.build
def test_a_typed_quantity_printed_by_an_exec_block_fails_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/interconnect.md"
    _edit(page, "print(cliff_table(load()))", 'print(cliff_table(load()))\nprint("A card holds 80 GB.")')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _line(page, "A card holds 80 GB")
    assert f"docs/interconnect.md:{line}: hand-typed quantity '80' in text of its output" in b.output, b.output[-3000:]


@pytest.mark.build
def test_a_typed_quantity_printed_from_the_page_model_names_the_model_line(site_copy: Path) -> None:
    model = site_copy / "snippets/pages/interconnect.py"
    _edit(model, "embedding and the LM head unquantized as", "embedding and the LM head at 16 bit as")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _line(model, "LM head at 16 bit as")
    assert f"the block prints, from snippets/pages/interconnect.py:{line}, hand-typed quantity '16'" in b.output, \
        b.output[-3000:]


@pytest.mark.build
def test_a_typed_quantity_in_a_link_title_fails_the_build(site_copy: Path) -> None:
    page = site_copy / "docs/index.md"
    page.write_text(page.read_text() + '\nSee [the cliff](interconnect.md "where 96 GB ends").\n')
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _line(page, "where 96 GB ends")
    assert f"docs/index.md:{line}: hand-typed quantity '96' in the title attribute" in b.output, b.output[-3000:]


@pytest.mark.build
def test_a_typed_quantity_in_a_notebook_md_cell_fails_the_build(site_copy: Path) -> None:
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text() + "\n# %% [md]\n# A node holds 640 GB.\n")
    b = run_build(site_copy)
    assert b.returncode != 0
    line = _line(nb, "A node holds 640 GB")
    assert f"docs/notebooks/size-your-deployment.py:{line}: hand-typed quantity '640' in prose" in b.output, \
        b.output[-3000:]


@pytest.mark.build
def test_a_warm_and_a_cold_build_are_byte_identical(site_copy: Path, tmp_path: Path) -> None:
    warm = run_build(site_copy)  # the notebook from the session build's cache
    assert warm.returncode == 0, warm.output
    assert "Cache hit" in warm.output or (site_copy / ".cache").is_dir()
    kept = tmp_path / "warm"
    warm.site.rename(kept)
    shutil.rmtree(site_copy / ".cache", ignore_errors=True)  # cold: the notebook is executed
    cold = run_build(site_copy)
    assert cold.returncode == 0, cold.output
    for rel in ("sitemap.xml", "search/search_index.json", "numbers.json"):
        assert (kept / rel).read_bytes() == (cold.site / rel).read_bytes(), rel
    _, mismatch, errors = filecmp.cmpfiles(kept, cold.site, [str(p.relative_to(kept)) for p in kept.rglob("*")
                                                             if p.is_file()], shallow=False)
    assert mismatch == [] and errors == []
