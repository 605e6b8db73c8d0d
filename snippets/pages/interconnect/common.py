"""The interconnect page's choices and the source's rounded arithmetic, row by row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.data import Accelerator, Catalog, NVLink, PCIe
from snippets.data.units import Bandwidth
from snippets.pages.scenario import reference
from snippets.render import fmt
from snippets.render.fmt import Claim, Figure
from snippets.teaching.rounded import Sizing, size_on_node

OLDER_NODE = "hgx-a100-8"
"""The previous generation's node, for the NVLink comparison (a link table, not a deployment)."""
SOURCE_RESERVE = "runtime-reserve"
"""The source's flat reserve (data/assumptions.yaml): the teaching example's rounded arithmetic only."""
SOURCE_MODELS = ("llama-3.1-70b", "llama-3.1-405b")
SOURCE_PRECISION = "fp16"
"""The source's worked example: nominal parameters x FP16 bytes, against the card's label."""
SOURCE_TABLE_PRECISIONS = ("fp16", "int8")
"""The precisions of the source's closing table: its rows are each model in FP16 and in INT8."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
"""What an engine deploys: the table's rows, each sized by snippets.engine."""
ORDER_OF_MAGNITUDE = 10.0
QUIZ_SPLIT = ("llama-3.1-70b", "bf16")
"""The quiz's model that one card cannot hold, and whose TP degrees it compares."""
QUIZ_ALLREDUCE = ("llama-3.1-405b", "fp8")
"""The quiz's all-reduce: the largest model one node holds, on TP across the node."""


def pcie_x16(cat: Catalog, pcie_id: str, lanes: int = 16) -> Bandwidth:
    """Per-direction bandwidth of a PCIe generation at `lanes` lanes, derived from the spec's parts."""
    p = cat.interconnect(pcie_id, PCIe)
    return p.lanes(lanes)


def nvlink_of(cat: Catalog, acc: Accelerator) -> Bandwidth:
    """Per-GPU NVLink bandwidth from links x per-link rate (per direction)."""
    if acc.scale_up is None:
        raise ValueError(f"{acc.name} has no scale-up fabric")
    link = cat.interconnect(acc.scale_up.fabric, NVLink)
    return link.per_gpu


@dataclass(frozen=True)
class Row:
    """The source's rounded arithmetic for one model x precision, as figures (the teaching example)."""

    model: str
    precision: str
    params: Figure
    weight: Figure
    gpus_exact: Figure
    gpus_weights: Figure
    gpus_exact_usable: Figure
    gpus: Figure
    nodes: Figure
    fits_node: Claim
    spans_nodes: Claim
    fits_one_gpu: Claim
    sizing: Sizing


def sizing_fields(s: Sizing, weight: Figure | None = None, digits: int = 1) -> dict[str, Any]:
    """The figures and claims a model x precision row shows for one `Sizing` (this page's teaching rows and the
    precision page's): weight bytes (`weight` if the page formats them itself), GPU counts unrounded
    to `digits` decimals and rounded up, nodes, and the claims about one node and one GPU."""
    basis = f"{s.gpus_with_headroom} GPUs needed, {s.gpus_per_node} GPUs per node"
    return {
        "params": fmt.params(s.params),
        "weight": weight if weight is not None else fmt.nbytes(s.weight_bytes, "GB"),
        "gpus_exact": fmt.quantity(s.gpus_exact, "GPUs", digits),
        "gpus_weights": fmt.count(s.gpus_weights_only),
        "gpus_exact_usable": fmt.quantity(s.gpus_exact_usable, "GPUs", digits),
        "gpus": fmt.count(s.gpus_with_headroom),
        "nodes": fmt.count(s.nodes, "nodes"),
        "fits_node": fmt.claim(s.fits_one_node, basis),
        "spans_nodes": fmt.claim(not s.fits_one_node, basis),
        "fits_one_gpu": fmt.claim(s.fits_one_gpu, f"{s.gpus_with_headroom} GPU(s) needed"),
        "sizing": s,
    }


def _row(cat: Catalog, model_id: str, precision_id: str) -> Row:
    """The source's arithmetic on the scenario's node: nominal parameters, the label, the flat reserve."""
    s = size_on_node(cat, model_id, precision_id, reference(cat).node.id, SOURCE_RESERVE)
    return Row(model=cat.models[model_id].name, precision=cat.precisions[precision_id].name, **sizing_fields(s))


GIB = 2**30
