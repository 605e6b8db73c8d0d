"""The sizing grid's downloadable records (reference/sizing.json and reference/sizing.csv, `write_records`): every
row of the grid (`snippets.pages.reference_sizing`) as a record, each number with its unit, and the cheapest
configuration meeting the scenario's latency target and the one the layout policy recommends
(`reference_sizing.grid_targets`, which the site's build fills from its worker processes: `snippets.build.sizing`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snippets.data import Catalog
from snippets.pages.reference_sizing import GiB, Query, grid_targets, page_rows, searched
from snippets.pages.scenario import reference
from snippets.pages.sizing_target import ms_range, predicted, quantity


def records(cat: Catalog, *, targets: bool = False,
            found: Mapping[Query, dict[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """The grid as records: ids, layout, GPUs, nodes, memory per GPU by part and cost, each number with its unit;
    with `targets`, also the cheapest configuration meeting the scenario's latency target and the recommended one
    (`target`, `at_target`: the target_* fields are the cheapest's, recommended_* the recommended's),
    read from `found` (each of `target_queries`, as `targets_of` gives them) or, without it, `grid_targets`.

    A search per record costs several times the CPU of the rest of the build, so the site's build searches beside
    its pages, in worker processes, and keeps the answers by the content of what they depend on
    (`snippets.build.sizing`); it hands them to the catalog (`grid_targets`) before the page's blocks run."""
    r = reference(cat)
    if targets and found is None:
        found = grid_targets(cat)
    out = []
    for row in page_rows(cat):
        rec: dict[str, Any] = {"model": row.model, "precision": row.precision, "accelerator": row.accelerator,
                               "scenario": r.scenario.id}
        if targets and found is not None:
            q = (row.model, row.precision, row.accelerator)
            if searched(row) and q not in found:
                raise ValueError(f"the sizing grid's targets lack the search of {q}")
            rec["at_target"] = found[q] if searched(row) else None
        d = row.deployment
        if d is None:
            out.append({**rec, "deployable": False, "why_not": row.why_not})
            continue
        m = d.memory
        rec.update({
            "deployable": True,
            "node": d.setting.node.id,
            "layout": d.layout.as_dict(),
            "layout_policy": d.setting.layout_policy.id,
            "why": d.why,
            "gpus": d.gpus,
            "nodes": d.nodes,
            "gpus_per_node": d.gpus_per_node,
            "gpus_rented": d.gpus_rented,
            "weight_only": d.weight_only,
            "weights_total": quantity(d.weight_bytes, "B"),
            "memory_per_gpu": {
                "capacity": quantity(m.capacity, "B"),
                "pool": quantity(m.pool, "B"),
                "weights": quantity(m.weights, "B"),
                "kv_cache": quantity(m.kv_cache, "B"),
                "activations": quantity(m.activations, "B"),
                "runtime": quantity(m.non_torch, "B"),
                "free": quantity(m.free, "B"),
            },
            "max_concurrency": d.max_concurrency,
            "decode_ceiling": quantity(d.decode_ceiling, "tokens/s"),
            "cost_per_hour": None if d.cost_per_hour is None else quantity(d.cost_per_hour, "USD/hour"),
            "price_read": None if d.setting.price is None else d.setting.price.read,
        })
        one, at = row.at_one, row.at_scenario
        rec["tpot_ms_c1"] = None if one is None else predicted(one.tpot_s * 1e3, "ms", ms_range(one.tpot_range))
        rec["ttft_ms"] = None if one is None else predicted(one.ttft_s * 1e3, "ms", ms_range(one.ttft_range))
        rec["output_tokens_per_s_per_gpu"] = None if at is None else {
            **predicted(at.output_tokens_per_s_per_gpu, "tokens/s/GPU", at.throughput_per_gpu_range),
            "concurrency": at.concurrency}
        mtok = None if at is None else at.usd_per_mtok_output
        rec["usd_per_mtok_output"] = None if mtok is None or at is None else {
            **predicted(mtok, "USD/Mtok", at.usd_per_mtok_output_range), "concurrency": at.concurrency}
        out.append(rec)
    return out


BANDED = ("tpot_ms_c1", "output_tokens_per_s_per_gpu", "usd_per_mtok_output", "target_ttft_ms", "target_tpot_ms",
          "target_usd_per_mtok_output", "recommended_usd_per_mtok_output")
"""The CSV's predictions: each has its range beside it, `_low` and `_high`, where 80 % of its regime's test
measurements fell."""
CSV_FIELDS = ("model", "precision", "accelerator", "deployable", "layout", "gpus", "nodes", "gpus_per_node",
              "gpus_rented", "weights_total_GB", "weights_per_gpu_GiB", "kv_cache_per_gpu_GiB", "free_per_gpu_GiB",
              "max_concurrency", "cost_per_hour_USD", "tpot_ms_c1", "output_tokens_per_s_per_gpu",
              "usd_per_mtok_output", "weight_only", "why_not", "target_met", "target_configuration", "target_gpus",
              "target_ttft_ms", "target_tpot_ms", "target_usd_per_mtok_output", "recommended_configuration",
              "recommended_gpus", "recommended_usd_per_mtok_output", "cheapest_saving",
              *(f"{k}_{end}" for k in BANDED for end in ("low", "high")))


def _ranged(name: str, q: dict[str, Any] | None) -> dict[str, str]:
    """A prediction's CSV cells: its value and its range's ends (empty where it has none)."""
    if q is None:
        return {name: ""}
    rng = q.get("range")
    return {name: f"{q['value']:.4g}", **({} if rng is None else {f"{name}_low": f"{rng[0]:.4g}",
                                                                   f"{name}_high": f"{rng[1]:.4g}"})}


def records_csv(recs: list[dict[str, Any]]) -> str:
    """The records as CSV, one row each, the unit in each column's name."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for rec in recs:
        row: dict[str, Any] = {k: rec.get(k, "") for k in ("model", "precision", "accelerator", "deployable",
                                                            "gpus", "nodes", "gpus_per_node", "gpus_rented",
                                                            "max_concurrency", "weight_only", "why_not")}
        if rec["deployable"]:
            mem = rec["memory_per_gpu"]
            lay = rec["layout"]
            row.update({
                "layout": f"tp{lay['tp']}-pp{lay['pp']}-ep{lay['ep']}-dp{lay['dp']}",
                "weights_total_GB": f"{rec['weights_total']['value'] / 1e9:.3f}",
                "weights_per_gpu_GiB": f"{mem['weights']['value'] / GiB:.3f}",
                "kv_cache_per_gpu_GiB": f"{mem['kv_cache']['value'] / GiB:.3f}",
                "free_per_gpu_GiB": f"{mem['free']['value'] / GiB:.3f}",
                "cost_per_hour_USD": "" if rec["cost_per_hour"] is None else f"{rec['cost_per_hour']['value']:.2f}",
            })
            for k in ("tpot_ms_c1", "output_tokens_per_s_per_gpu", "usd_per_mtok_output"):
                row.update(_ranged(k, rec[k]))
        t = rec.get("at_target")
        if t is not None:
            row["target_met"] = t["met"]
            if t["met"]:
                row.update({"target_configuration": t["configuration"], "target_gpus": t["gpus"],
                            **_ranged("target_ttft_ms", t["ttft"]), **_ranged("target_tpot_ms", t["tpot"]),
                            **_ranged("target_usd_per_mtok_output", t["usd_per_mtok_output"])})
                rec_t = t["recommended"]
                row.update({"recommended_configuration": rec_t["configuration"], "recommended_gpus": rec_t["gpus"],
                            **_ranged("recommended_usd_per_mtok_output", rec_t["usd_per_mtok_output"]),
                            "cheapest_saving": f"{t['cheapest_saving']:.4g}"})
        w.writerow(row)
    return buf.getvalue()


@dataclass
class Written:
    """The records `write_records` wrote last and their text, kept by the caller across builds (the serving plugin,
    over the rebuilds of `mkdocs serve`): where a build's records equal them, their text is written again as it was
    instead of encoded anew (json's encoder with `indent` is its pure-Python one: about half a second for the
    grid's thousand records)."""

    records: list[dict[str, Any]] | None = None
    json: str = ""
    csv: str = ""
    targets: bool = False
    """Whether `records` carry the searches at the target (`records`' argument)."""
    reads: dict[str, str] = field(default_factory=dict)
    """The tables computing `records` read (`loader.ReadLog`), each with its key then: where the caller's keys of
    them are the same, the records are not computed again. Empty: computed every time."""


def write_records(cat: Catalog, directory: Path, *, targets: bool = False,
                  found: Mapping[Query, dict[str, Any] | None] | None = None,
                  last: Written | None = None, tables: Mapping[str, str] | None = None) -> list[Path]:
    """Write sizing.json and sizing.csv into `directory` (the built site's reference/); with `targets`, each record
    with the cheapest configuration meeting the scenario's latency target (`records`, from `found` where given).
    With `last`, the text of records equal to `last.records` is `last`'s, and `last` is updated to what is
    written; with `tables` too (the key of each table of data/ and of the build's searches, `TARGETS`, as the
    build has them), the records are not computed again where every table they were computed from has the key it
    had for `last`."""
    unchanged = (last is not None and tables is not None and found is None and last.records is not None
                 and last.targets == targets
                 and bool(last.reads) and all(tables.get(t) == k for t, k in last.reads.items()))
    if last is not None and unchanged:
        written = last
    else:
        with cat.read_log.frame() as reads:
            recs = records(cat, targets=targets, found=found)
        if last is not None and last.records == recs:
            written = last
        else:
            written = Written(recs, json.dumps({"records": recs}, indent=1, sort_keys=True) + "\n", records_csv(recs))
        if last is not None:
            last.records, last.json, last.csv, last.targets = written.records, written.json, written.csv, targets
            keyed = tables is not None and found is None and reads <= tables.keys()
            last.reads = {t: tables[t] for t in sorted(reads)} if keyed and tables is not None else {}
    directory.mkdir(parents=True, exist_ok=True)
    js, cs = directory / "sizing.json", directory / "sizing.csv"
    js.write_text(written.json, encoding="utf-8")
    cs.write_text(written.csv, encoding="utf-8")
    return [js, cs]
