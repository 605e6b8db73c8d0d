"""The predictions page's errors by source: each source's medians are those of its own rows' errors."""

from __future__ import annotations

import statistics

from snippets.data import Catalog
from snippets.pages.calibrated import rows
from snippets.pages.reference_sources import by_source, source_table


def test_each_source_holds_its_own_rows_errors(catalog: Catalog):
    test = rows(catalog, "test")
    groups = by_source(test)
    # every predicted test row lands in exactly one source, and every figure it carries is counted there
    figures = sum(1 for r in test for m in ("ttft_ms", "itl_ms", "output_tokens_per_s") if r.error(m) is not None)
    assert sum(len(v) for g in groups.values() for v in g.values()) == figures
    # dstack's throughput median, worked from its rows' addresses rather than the labels
    dstack = [abs(e) for r in test if r.measurement.sources[0].url.lower().startswith("https://github.com/dstackai/")
              and (e := r.error("output_tokens_per_s")) is not None]
    assert len(dstack) >= 10
    assert statistics.median(groups["dstack benchmarks"]["output_tokens_per_s"]) == statistics.median(dstack)
    # a source publishing no TTFT shows none (the Azure guide's offline throughput): a dash, not a zero
    table = source_table(catalog)
    azure = next(line for line in table.splitlines() if "Azure benchmarking guide" in line)
    assert azure.count("—") == 4
