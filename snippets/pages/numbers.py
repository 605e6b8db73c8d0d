"""Page model of "How the numbers are made" (docs/how-the-numbers-are-made.md).

The page follows one figure from its data rows to the sentence that shows it, and counts what
the data tables hold. It computes nothing new: the sizing is `snippets.sizing.size`, as on the
interconnect page.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from snippets import fmt
from snippets.data import FILES, Catalog, Node, iter_sources
from snippets.sizing import Sizing, size

MODEL = "llama-3.1-70b"
PRECISION = "fp16"
NODE = "hgx-h100-8"
RESERVE = "runtime-reserve"

SOURCES = (
    ("models", MODEL),
    ("precisions", PRECISION),
    ("interconnects", NODE),
    ("accelerators", "h100-sxm"),
    ("assumptions", RESERVE),
)
"""The data entries the worked example reads."""


def example(cat: Catalog) -> Sizing:
    """The worked example: the model in the precision on one GPU of the node, with the runtime reserve."""
    node = cat.interconnect(NODE, Node)
    return size(cat.models[MODEL], cat.precisions[PRECISION], cat.accelerators[node.accelerator],
                cat.assumptions[RESERVE].value.fraction, node.gpus)


def trail_table(cat: Catalog) -> str:
    """One row per step from data to figure: the row or function it comes from, and the figure."""
    s = example(cat)
    node = cat.interconnect(NODE, Node)
    gpu = cat.accelerators[node.accelerator]
    reserve = cat.assumptions[RESERVE].value
    rows: list[list[fmt.Cell]] = [
        ["Parameters", f"`data/models.yaml`, `{MODEL}`: `nominal_params`", fmt.params(s.params)],
        ["Bytes per parameter", f"`data/precisions.yaml`, `{PRECISION}`, through `sizing.bytes_per_param`",
         fmt.quantity(s.bytes_per_param, "bytes/param", 0, show_unit=True)],
        ["Weight memory", "`sizing.size`: parameters × bytes per parameter", fmt.nbytes(s.weight_bytes, "GB")],
        ["Memory per GPU", f"`data/accelerators.yaml`, `{node.accelerator}`: `memory`", fmt.nbytes(gpu.memory.bytes, "GB")],
        ["Runtime reserve", f"`data/assumptions.yaml`, `{RESERVE}`",
         fmt.percent(reserve.fraction, 1 if reserve.value % 1 else 0)],
        ["Usable memory per GPU", "`capacity.usable_bytes`: memory less the reserve", fmt.nbytes(s.usable_bytes, "GB")],
        ["GPUs", "`sizing.size`: weight ÷ usable memory, rounded up", fmt.count(s.gpus_with_headroom, "GPUs", show_unit=True)],
    ]
    # the middle column is this module's own Markdown (code spans), not data
    rows = [[step, fmt.Md(str(source)), fig] for step, source, fig in rows]
    return fmt.table("trail", ["Step", "Comes from", "Figure"], rows, align="llr")


def _entries_with_sources(cat: Catalog) -> dict[str, tuple[int, int]]:
    counts = {name: (len(getattr(cat, name)), 0) for name in FILES}
    for name, _, _ in iter_sources(cat):
        entries, sources = counts[name]
        counts[name] = (entries, sources + 1)
    return counts


def data_table(cat: Catalog) -> str:
    """One row per data table: its entries, the sources they cite, and the hosts those sources live on."""
    counts = _entries_with_sources(cat)
    hosts: dict[str, set[str]] = {name: set() for name in FILES}
    for name, _, src in iter_sources(cat):
        hosts[name].add(urlsplit(src.url).hostname or "")
    rows: list[list[fmt.Cell]] = [
        [f"data/{name}.yaml", fmt.count(counts[name][0], "entries"), fmt.count(counts[name][1], "sources"),
         fmt.count(len(hosts[name]), "hosts")]
        for name in FILES
    ]
    return fmt.table("tables", ["Table", "Entries", "Sources cited", "Distinct hosts"], rows, align="lrrr")


def namespace(cat: Catalog) -> dict[str, Any]:
    """The names the page's `{{ ... }}` values and claims use."""
    s = example(cat)
    counts = _entries_with_sources(cat)
    entries = sum(e for e, _ in counts.values())
    sources = sum(n for _, n in counts.values())
    unsourced = [f"{name}/{entry_id}" for name in FILES for entry_id, entry in getattr(cat, name).items()
                 if not entry.sources]
    node = cat.interconnect(NODE, Node)
    return {
        "model": cat.models[MODEL].name,
        "precision": cat.precisions[PRECISION].name,
        "gpu_name": cat.accelerators[node.accelerator].name,
        "weight": fmt.nbytes(s.weight_bytes, "GB"),
        "gpus": fmt.count(s.gpus_with_headroom, "GPUs"),
        "tables": fmt.count(len(FILES), "tables"),
        "entries": fmt.count(entries, "entries"),
        "sources": fmt.count(sources, "sources"),
        "every_entry_sourced": fmt.claim(not unsourced, "entries without a source: " + (", ".join(unsourced) or "none")),
        "more_than_one_gpu": fmt.claim(s.gpus_with_headroom > 1, f"{s.gpus_with_headroom} GPUs needed"),
    }
