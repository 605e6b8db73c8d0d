"""The notebook page as the built site shows it: executed, without errors."""

from __future__ import annotations

import pytest

from snippets.data import Catalog

from ..conftest import Build, text, value


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


def test_the_notebook_serves_the_replica_at_loads_and_at_rates(built: Build, catalog: Catalog) -> None:
    """The notebook's times: a closed loop at each load (beyond what the KV cache holds, the rest queue and wait
    for a slot), and requests sent at shares of what the replica finishes, each holding the rate times a request's
    life (Little's law, worked here from the page's own figures)."""
    from snippets.pages.scenario import reference

    page = built.page("notebooks/size-your-deployment/index.html")
    r = reference(catalog)
    d = r.deployment("llama-3.1-405b", "fp8", node=r.node.id, layout_policy=r.scenario.layout_policy)
    n_out = d.setting.scenario.output_tokens
    most = d.max_concurrency
    assert value(page, f"notebook-times[{most:,}][Running]") == most
    assert value(page, f"notebook-times[{2 * most:,}][Running]") == most  # the rest queue
    assert value(page, f"notebook-times[{2 * most:,}][TTFT]") > 10 * value(page, f"notebook-times[{most:,}][TTFT]")
    assert value(page, f"notebook-times[{2 * most:,}][TPOT]") == value(page, f"notebook-times[{most:,}][TPOT]")
    assert value(page, "notebook-times[1][TPOT]") < value(page, f"notebook-times[{most:,}][TPOT]")
    # each time with the band its regime's test measurements give it, as the engine bands it
    from snippets.engine.serving import predict

    one = predict(d, 1, d.setting.scenario.input_tokens, n_out)
    lo, hi = (v * 1e3 for v in one.tpot_range)
    assert text(page, "notebook-times[1][TPOT]") == f"{one.tpot_s * 1e3:,.2f} ms, {lo:,.2f}–{hi:,.2f}"
    lo, hi = (v * 1e3 for v in one.ttft_range)
    assert text(page, "notebook-times[1][TTFT]") == f"{one.ttft_s * 1e3:,.1f} ms, {lo:,.1f}–{hi:,.1f}"
    held = []
    for share in ("25%", "50%", "90%"):
        rate = value(page, f"notebook-rate[{share}][Requests a second]")
        life_s = (value(page, f"notebook-rate[{share}][TTFT]")
                  + (n_out - 1) * value(page, f"notebook-rate[{share}][TPOT]")) / 1e3
        held.append(value(page, f"notebook-rate[{share}][Requests held]"))
        assert held[-1] == pytest.approx(rate * life_s, rel=1e-9), share
    assert held == sorted(held) and held[-1] < most
