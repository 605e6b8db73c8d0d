"""The predictions page's errors by source: each publication's rows apart, so a reader sees which sources the
medians rest on (docs/reference/predictions.md prints the table)."""

from __future__ import annotations

import statistics
from collections import Counter

from snippets.calibration import METRICS, Row
from snippets.data import Catalog
from snippets.pages.calibrated import rows
from snippets.pages.reference_common import source_label
from snippets.pages.reference_predictions import LABELS
from snippets.render import fmt


def by_source(rs: list[Row]) -> dict[str, dict[str, list[float]]]:
    """The |errors| of each metric, by the short name of each row's first source (`source_label`)."""
    out: dict[str, dict[str, list[float]]] = {}
    for r in rs:
        errs = out.setdefault(source_label(r.measurement), {m: [] for m in METRICS})
        for m in METRICS:
            e = r.error(m)
            if e is not None:
                errs[m].append(abs(e))
    return out


def source_table(cat: Catalog) -> str:
    """One line per source and role: its predicted rows, and each metric's median |error| over the figures it
    publishes (with how many), most figures first."""
    out: list[list[fmt.Cell]] = []
    for role in ("calibration", "test"):
        rs = rows(cat, role)
        groups = by_source(rs)
        counts = Counter(source_label(r.measurement) for r in rs)
        for source in sorted(groups, key=lambda s: (-sum(len(groups[s][m]) for m in METRICS), s)):
            line: list[fmt.Cell] = [f"{role}: {source}", fmt.count(counts[source], "rows")]
            for m in METRICS:
                errs = groups[source][m]
                line.append(fmt.percent(statistics.median(errs)) if errs else "—")
                line.append(fmt.count(len(errs), "figures") if errs else "—")
            out.append(line)
    headers = ["Rows and source", "Rows"]
    for m in METRICS:
        headers += [f"{LABELS[m]} median error", f"{LABELS[m]} figures"]
    return fmt.table("sources", headers, out, align="lrrrrrrr")
