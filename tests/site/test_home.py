"""The home page answers first: its summary, each model at the serving scenario, against published layouts and
the arithmetic that holds whatever the time model's fitted factors (the snapshot holds every figure)."""

from __future__ import annotations

import math

from snippets.pages.home import SUMMARY_MODELS, SUMMARY_PRECISIONS

from ..conftest import Build, value


def test_summary_rows_hold_published_layouts_and_whole_nodes(built: Build, catalog) -> None:
    page = built.page("index.html")
    # NVIDIA NIM's Llama 3.1 405B profiles (data/deployments.yaml) run FP8 on 8 H100 SXM and FP16 on 16. The serving
    # scenario holds 32 sequences of 8K, and vLLM's budget on TP8 leaves 71.30 GiB pool - 47.7 GiB weights - 5.05 GiB
    # sampler - 5.68 GiB outside PyTorch = 12.9 GiB, 26 sequences of 0.49 GiB: so FP8 takes two nodes too
    assert value(page, "summary[Llama 3.1 405B FP8][GPUs]") == 16
    assert value(page, "summary[Llama 3.1 405B BF16][GPUs]") == 16
    for m in SUMMARY_MODELS:
        rows = {p: f"{catalog.models[m].name} {catalog.precisions[p].name}" for p in SUMMARY_PRECISIONS}
        for row in rows.values():
            gpus = value(page, f"summary[{row}][GPUs]")
            assert value(page, f"summary[{row}][Nodes]") == math.ceil(gpus / 8)  # 8-GPU H100 nodes
        if {"bf16", "fp8"} <= set(rows):  # half the bytes a token reads: fewer GPUs, a cheaper token
            bf16, fp8 = rows["bf16"], rows["fp8"]
            assert value(page, f"summary[{fp8}][GPUs]") <= value(page, f"summary[{bf16}][GPUs]")
            assert (value(page, f"summary[{fp8}][$ per M output tokens, KV cache full]")
                    < value(page, f"summary[{bf16}][$ per M output tokens, KV cache full]"))


def test_start_here_path_links_the_foundations_in_order(built: Build) -> None:
    page = built.page("index.html")
    heading = next(h for h in page.select("article h2") if h.get_text().startswith("Start here"))
    links = [a["href"] for a in heading.find_next("ol").select("a")]
    assert links == ["hbm/", "roofline/", "precision/", "interconnect/", "parallelism/", "moe/", "kv-cache/", "cost/"]
