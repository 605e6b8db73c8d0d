"""Sizing a deployment: from model, precision and accelerator to GPUs and nodes.

Joins `snippets.capacity` with entries of `data/`; the numbers stay raw (bytes, counts).
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.capacity import gpus_exact, gpus_needed, nodes_needed, usable_bytes, weight_bytes
from snippets.data import Accelerator, Catalog, Model, Node, Precision


@dataclass(frozen=True, slots=True)
class Sizing:
    """How many GPUs one copy of a model's weights needs."""

    params: float
    bytes_per_param: float
    weight_bytes: float
    gpu_bytes: float
    usable_bytes: float
    gpus_exact: float
    """weight bytes / card memory, before rounding up."""
    gpus_weights_only: int
    gpus_exact_usable: float
    """weight bytes / usable memory, before rounding up."""
    gpus_with_headroom: int
    gpus_per_node: int
    nodes: int

    @property
    def fits_one_gpu(self) -> bool:
        return self.gpus_with_headroom == 1

    @property
    def fits_one_node(self) -> bool:
        return self.gpus_with_headroom <= self.gpus_per_node


def bytes_per_param(precision: Precision) -> float:
    """Storage bytes per weight, counting per-group scales and zero points (`Precision.bits_per_param`).

    FP16: 2, INT8: 1, bare INT4: 0.5; INT4 with an FP16 scale and a 4-bit zero point per 128
    weights: (4 + 20/128) / 8 = 0.51953125; MXFP4 (one E8M0 scale per 32): 4.25 / 8 = 0.53125.
    Formats without a block scale are unchanged: their bytes are `width / 8`.
    """
    return precision.bits_per_param / 8


def size(
    model: Model,
    precision: Precision,
    accelerator: Accelerator,
    reserve_fraction: float,
    gpus_per_node: int,
    *,
    params: float | None = None,
) -> Sizing:
    """Size one copy of `model`'s weights in `precision` on `accelerator`.

    `params` defaults to the model's nominal size (405B), as the site's worked figures use.
    """
    n = model.nominal_params.count if params is None else params
    bpp = bytes_per_param(precision)
    w = weight_bytes(n, bpp)
    cap = accelerator.memory.bytes
    usable = usable_bytes(cap, reserve_fraction)
    gpus = gpus_needed(w, usable)
    return Sizing(
        params=n,
        bytes_per_param=bpp,
        weight_bytes=w,
        gpu_bytes=cap,
        usable_bytes=usable,
        gpus_exact=gpus_exact(w, cap),
        gpus_weights_only=gpus_needed(w, cap),
        gpus_exact_usable=gpus_exact(w, usable),
        gpus_with_headroom=gpus,
        gpus_per_node=gpus_per_node,
        nodes=nodes_needed(gpus, gpus_per_node),
    )


def size_on_node(cat: Catalog, model_id: str, precision_id: str, node_id: str, reserve_id: str) -> Sizing:
    """`size` with every input looked up by id in the catalog; the node gives GPU and node size."""
    node = cat.interconnect(node_id, Node)
    return size(
        cat.models[model_id],
        cat.precisions[precision_id],
        cat.accelerators[node.accelerator],
        cat.assumptions[reserve_id].value.fraction,
        node.gpus,
    )
