"""The home page answers first: what each model needs at the serving scenario, against published layouts, and what a
million tokens cost at the scenario's latency target, as the engine's search finds it (the snapshot holds every
figure); then the reading path, once."""

from __future__ import annotations

import math

import pytest

from snippets.data.export import engine_catalog
from snippets.engine.deployment import as_shipped
from snippets.engine.search import at_scenario
from snippets.pages.home import SUMMARY_MODELS, SUMMARY_PRECISIONS

from ..conftest import Build, figures, text, value

FOUNDATIONS = ["hbm/", "roofline/", "precision/", "interconnect/", "parallelism/", "moe/", "kv-cache/", "cost/",
               "latency-target/"]
TTFT_MS, TPOT_MS = 2000, 30  # data/scenarios.yaml, serving: AIConfigurator's default objective


def test_summary_rows_hold_published_layouts_and_whole_nodes(built: Build, catalog) -> None:
    page = built.page("index.html")
    # NVIDIA NIM's Llama 3.1 405B profiles (data/deployments.yaml) run FP8 on 8 H100 SXM and FP16 on 16. The serving
    # scenario holds 32 sequences of 8K, and vLLM's budget on TP8 leaves 71.30 GiB pool - 47.7 GiB weights - 4.76 GiB
    # sampler - 0.55 GiB outside PyTorch = 18.3 GiB, 37 sequences of 0.49 GiB: FP8 fits one node, as NIM runs it
    assert value(page, "summary[Llama 3.1 405B FP8][GPUs]") == 8
    assert value(page, "summary[Llama 3.1 405B BF16][GPUs]") == 16
    # Qwen's own FP8 checkpoint is block-quantized (128 x 128): at TP8 each expert's 1,536 columns split into 192, not
    # a multiple of 128, and vLLM refuses it; the row is that checkpoint, on a layout vLLM accepts
    cells = [td.get_text() for td in figures(page)["summary[Qwen3-235B-A22B FP8, 128 x 128 blocks][GPUs]"]
             .find_parent("tr").find_all("td")]
    assert cells[1] == "FP8, 128 x 128 blocks" and cells[2] != "TP8", cells
    # the opening names the rows sized in their developer's own format, from the rows themselves
    named = page.select_one('[data-name="shipped"]').get_text()
    assert named == "Qwen3-235B-A22B, FP8, 128 x 128 blocks; DeepSeek-V3, FP8, 128 x 128 blocks", named
    eng = engine_catalog(catalog)
    compared = 0
    for m in SUMMARY_MODELS:
        rows = {p: f"{catalog.models[m].name} {catalog.precisions[as_shipped(eng, m, p)].name}"
                for p in SUMMARY_PRECISIONS}
        for row in rows.values():
            gpus = value(page, f"summary[{row}][GPUs]")
            assert value(page, f"summary[{row}][Nodes]") == math.ceil(gpus / 8)  # 8-GPU H100 nodes
        bf16, fp8 = rows["bf16"], rows["fp8"]
        assert value(page, f"summary[{fp8}][GPUs]") <= value(page, f"summary[{bf16}][GPUs]")
        # half the bytes a token reads: on as many GPUs, one sequence decodes faster (on half the GPUs it need not:
        # Qwen3-235B's block FP8 runs TP4 x PP2 on 8, its BF16 TP8 x PP2 on 16)
        if value(page, f"summary[{fp8}][GPUs]") == value(page, f"summary[{bf16}][GPUs]"):
            assert (value(page, f"summary[{fp8}][Time per token, one sequence]")
                    < value(page, f"summary[{bf16}][Time per token, one sequence]"))
            compared += 1
    assert compared >= 2


def test_one_load_per_table(built: Build) -> None:
    page = built.page("index.html")
    heads = {t.get("data-table") or i: [th.get_text() for th in t.select("thead th")]
             for i, t in enumerate(page.select("article table"))}
    assert len(heads) == 2
    summary, target = heads.values()
    assert [h for h in summary if "sequence" in h] == ["Time per token, one sequence"]
    assert not any("KV cache" in h or "sequence" in h for h in target)


def test_costs_at_the_target_are_the_engines_search(built: Build, catalog) -> None:
    page = built.page("index.html")
    eng = engine_catalog(catalog)
    found = figures(page)
    met = 0
    for m in SUMMARY_MODELS:
        for asked in SUMMARY_PRECISIONS:
            p = as_shipped(eng, m, asked)  # Qwen3's and DeepSeek's own FP8 is block-quantized
            row = f"{catalog.models[m].name} {catalog.precisions[p].name}"
            s = at_scenario(eng, m, p, "serving", sweep=False)
            key = f"at_target[{row}][$ per M output tokens]"
            if s.best is None:
                assert key not in found
                continue
            met += 1
            rec = s.recommended
            assert rec is not None
            assert value(page, f"at_target[{row}][TTFT]") <= TTFT_MS
            assert value(page, f"at_target[{row}][TPOT]") <= TPOT_MS
            assert value(page, f"at_target[{row}][GPUs]") == rec.gpus
            assert value(page, key) == pytest.approx(rec.usd_per_mtok, rel=1e-5)
            # each prediction with its range, where 80 % of its regime's test measurements fell
            lo, hi = (v * 1e3 for v in rec.prediction.tpot_range)
            assert text(page, f"at_target[{row}][TPOT]") == f"{rec.tpot_s * 1e3:,.1f} ms, {lo:,.1f}–{hi:,.1f}"
            assert rec.usd_per_mtok_range is not None
            lo, hi = rec.usd_per_mtok_range
            digits = 3 if rec.usd_per_mtok < 1 else 2
            assert text(page, key).startswith(f"${rec.usd_per_mtok:,.{digits}f}, {lo:,.{digits}f}–{hi:,.{digits}f} (")
            cheapest = f"at_target[{row}][Recommended configuration meeting the target].cheapest_gpus"
            if s.saving > 0:  # the cheapest, disaggregated, saves less than the policy asks: named beside it
                assert value(page, cheapest) == s.best.gpus and 0 < s.saving < 0.10
            else:
                assert cheapest not in found
    assert value(page, "met_count") == met and 0 < met < value(page, "row_count")
    # FP8 reads half the bytes of BF16 a token: where both meet the target, FP8's token is the cheaper
    for m in SUMMARY_MODELS:
        bf16, fp8 = (f"at_target[{catalog.models[m].name} {catalog.precisions[as_shipped(eng, m, p)].name}]"
                     "[$ per M output tokens]" for p in ("bf16", "fp8"))
        if bf16 in found and fp8 in found:
            assert value(page, fp8) < value(page, bf16)


def test_start_here_lists_the_foundations_once_in_order(built: Build) -> None:
    page = built.page("index.html")
    heading = next(h for h in page.select("article h2") if h.get_text().startswith("Start here"))
    links = [a["href"] for a in heading.find_next("ol").select("a")]
    assert links == FOUNDATIONS
    hrefs = [a["href"] for a in page.select("article a")]
    for href in FOUNDATIONS[:-1]:  # the latency-target page is also linked from the cost table's prose
        assert hrefs.count(href) == 1, href
