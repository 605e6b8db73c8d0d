"""Page model of "How the numbers are made" (docs/how-the-numbers-are-made.md).

The page follows one figure from its data rows, through the engine's functions, to the sentence that
shows it, and counts what the data tables hold. It computes nothing new: the sizing is the engine's
deployment (`snippets.engine`, through `snippets.pages.scenario.reference`), the same one the
interconnect page's table shows.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from snippets.data import FILES, Catalog, iter_sources
from snippets.engine import Deployment
from snippets.pages.base import Page
from snippets.pages.scenario import reference
from snippets.render import fmt

MODEL = "llama-3.1-70b"
PRECISION = "bf16"


def example(cat: Catalog) -> Deployment:
    """The worked example: the model in the precision as the engine deploys it for the reference scenario."""
    return reference(cat).deployment(MODEL, PRECISION)


def trail_table(cat: Catalog) -> str:
    """One row per step from data to figure: the engine function, the data row it reads, and the figure."""
    r = reference(cat)
    d = example(cat)
    m = d.memory
    st = d.setting
    # the total the engine budgets from: the runtime's (CUDA's, ROCm's) where published, else the vendor's label
    acc = cat.accelerators[r.node.chip]
    label = acc.capacity_basis == "label"
    basis = "on the vendor's label" if label else f"the runtime reports ({acc.capacity_basis})"
    field = "memory" if label else "memory_runtime"
    rows: list[list[fmt.Cell]] = [
        ["Parameters", "`engine.params.total_params`", f"`data/models.yaml`, `{MODEL}`: `architecture`",
         fmt.params(d.params, 1)],
        ["Bytes per parameter", "`PrecisionSpec.bytes_per_param`", f"`data/precisions.yaml`, `{PRECISION}`: `width`",
         fmt.quantity(st.precision.bytes_per_param, "bytes/param", 0, show_unit=True)],
        ["Weight memory", "`engine.memory.weight_bytes`", "the two rows above, by tensor class",
         fmt.nbytes(d.weight_bytes, "GB", 1)],
        [f"Memory {basis}", "`ChipSpec.capacity_bytes`",
         f"`data/accelerators.yaml`, `{r.node.chip}`: `{field}`", fmt.nbytes(m.capacity, "GiB", 1)],
        ["The engine's pool", "`GpuMemory.pool`", f"`data/policies.yaml`, `{r.scenario.memory_policy}`: `utilization`",
         fmt.nbytes(m.pool, "GiB", 1)],
        ["Activations and runtime", "`engine.memory.activation_peak`, `GpuMemory.non_torch`",
         f"`data/policies.yaml`, `{r.scenario.memory_policy}`: `max_num_batched_tokens` (of `serve_defaults` or "
         f"`large_device_defaults`), `sampler_bytes_per_logit`, `non_torch_by_tp`",
         fmt.nbytes(m.activations + m.non_torch, "GiB", 1)],
        ["KV cache per GPU", "`engine.memory.gpu_memory`",
         f"`data/scenarios.yaml`, `{r.scenario.id}`: tokens, sequences, `kv_precision`", fmt.nbytes(m.kv_cache, "GiB", 2)],
        ["Layout", "`engine.deployment.choose`", f"`data/policies.yaml`, `{r.scenario.layout_policy}`", d.layout.label],
        ["GPUs", "`Deployment.gpus`", f"`data/interconnects.yaml`, `{r.node.id}`: `gpus`",
         fmt.count(d.gpus, "GPUs", show_unit=True)],
    ]
    # the middle columns are this module's own Markdown (code spans), not data
    rows = [[row[0], *(fmt.Md(str(c)) for c in row[1:-1]), row[-1]] for row in rows]
    return fmt.table("trail", ["Step", "Engine function", "Data row", "Figure"], rows, align="lllr")


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


class NumbersPage(Page):
    shows = (trail_table, data_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = self.reference()
        d = example(cat)
        counts = _entries_with_sources(cat)
        unsourced = [f"{name}/{entry_id}" for name in FILES for entry_id, entry in getattr(cat, name).items()
                     if not entry.sources]
        self.model = d.setting.model.name
        self.precision = d.setting.precision.name
        self.gpu_name = d.setting.chip.name
        self.node_name = r.node.name
        self.weight = fmt.nbytes(d.weight_bytes, "GB", 1)
        self.gpus = fmt.count(d.gpus, "GPUs")
        self.layout = d.layout.label
        self.policy_name = d.setting.layout_policy.name
        self.tables = fmt.count(len(FILES), "tables")
        self.entries = fmt.count(sum(e for e, _ in counts.values()), "entries")
        self.sources = fmt.count(sum(n for _, n in counts.values()), "sources")
        self.secondary_sources = fmt.count(sum(1 for _, _, s in iter_sources(cat) if s.secondary), "sources")
        self.every_entry_sourced = fmt.claim(not unsourced,
                                             "entries without a source: " + (", ".join(unsourced) or "none"))
        self.more_than_one_gpu = fmt.claim(d.gpus > 1, f"{d.layout.label}: {d.gpus} GPUs")


namespace = NumbersPage.namespace_of
sources = NumbersPage.sources_of
