"""Charts on the built pages: their captions, and one bar per accelerator on the HBM page."""

from __future__ import annotations

from ..conftest import Build


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


def test_hbm_page_charts_the_decode_ceiling_of_every_accelerator(built: Build, catalog) -> None:
    page = built.page("hbm/index.html")
    chart = next(f for f in page.select("figure.sa-figure") if f.find("svg")["aria-labelledby"].startswith("ceiling-chart"))
    svg = str(chart.find("svg"))
    refused = {a for g in catalog.precisions["fp8"].kernel_gaps if g.engine == "vLLM" for a in g.accelerators}
    for key, acc in catalog.accelerators.items():  # one bar per accelerator the engine runs FP8 on, with its name
        assert acc.name in svg
        assert (f">{acc.name}</text>" in svg) == (key not in refused), acc.name
    # where vLLM has no FP8 kernel (the MI250X's CDNA 2), the caption says the bar is left out, and why
    assert ("Not shown: the AMD Instinct MI250X (one GCD), where the scenario's engine has no kernel for FP8."
            in chart.find("figcaption").get_text())
    # Llama 3.1 8B in FP8 through the engine: 6.98e9 linear weights at 1 byte, embedding, LM head and norms
    # (1.05e9 + 0.27e6) at 2 bytes = 9.08 GB, plus one 8,192-token BF16 KV cache (1.07 GB) = 10.15 GB a step:
    # GB200 8 TB/s / 10.15 GB = 788 tokens/s (B200 is 7.7 TB/s since the data correction); L4 300 GB/s: 29.5
    caption = chart.find("figcaption").get_text()
    assert "from 788 on the NVIDIA GB200 (per Blackwell GPU)" in caption and "to 30 on the NVIDIA L4" in caption
