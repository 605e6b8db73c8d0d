"""The notebook page as the built site shows it: executed, without errors."""

from __future__ import annotations

import pytest

from snippets.data import Catalog

from ..conftest import Build, value


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
    # an eighth of the weights on each GPU (the embeddings split by vocabulary), the same as the sizing grid's
    assert value(page, "notebook-memory[Weights][Value]") == pytest.approx(410.06e9 / 8 / 2**30, abs=0.5)
    grid = built.page("reference/sizing/index.html")
    assert value(page, "notebook-memory[Weights][Value]") == pytest.approx(
        value(grid, "grid[Llama 3.1 405B · FP8 · NVIDIA H100 SXM][Weights per GPU]"))
    # the ceiling: HBM bandwidth over the bytes a token reads, 3.35 TB/s / ~51.8 GB
    assert value(page, "notebook-ceiling[Tokens per second, ceiling][Value]") == pytest.approx(
        3.35e12 / (value(page, "notebook-ceiling[Bytes read per token][Value]") * 1e9))
    assert (built.site / "notebooks/size-your-deployment/size-your-deployment.py").is_file()
    assert page.select_one('a[href="size-your-deployment.py"]') is not None
