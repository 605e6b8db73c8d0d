"""The home page answers first: its summary is the engine's deployment of each model at the serving scenario."""

from __future__ import annotations

import pytest

from snippets.engine.timing import predict
from snippets.pages.home import SUMMARY_MODELS, SUMMARY_PRECISIONS
from snippets.pages.scenario import SERVING, reference

from ..conftest import Build, value


def test_summary_is_the_engines(built: Build, catalog) -> None:
    page = built.page("index.html")
    r = reference(catalog, SERVING)
    for m in SUMMARY_MODELS:
        for p in SUMMARY_PRECISIONS:
            row = f"{catalog.models[m].name} {catalog.precisions[p].name}"
            d = r.deployment(m, p, scenario=SERVING)
            assert d.max_concurrency >= r.scenario.concurrency  # the layout holds the scenario's sequences
            assert value(page, f"summary[{row}][GPUs]") == d.gpus
            assert value(page, f"summary[{row}][ms per token, one sequence]") == pytest.approx(
                predict(d, 1).tpot_s * 1e3, rel=1e-6)
            full = predict(d, d.max_concurrency)
            if full.usd_per_mtok_output is not None:
                assert value(page, f"summary[{row}][$ per M output tokens, KV cache full]") == pytest.approx(
                    full.usd_per_mtok_output, rel=1e-6)


def test_start_here_path_links_the_foundations_in_order(built: Build) -> None:
    page = built.page("index.html")
    heading = next(h for h in page.select("article h2") if h.get_text().startswith("Start here"))
    links = [a["href"] for a in heading.find_next("ol").select("a")]
    assert links == ["hbm/", "roofline/", "precision/", "interconnect/", "parallelism/", "moe/", "kv-cache/", "cost/"]
