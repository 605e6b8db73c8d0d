"""Teaching arithmetic that pages show beside the engine's figures; nothing on the site sizes with it.

- The source page's rounded arithmetic, which the interconnect page works through before the engine's
  answer: weights at the model's nominal size, the card's label less a flat reserve, GPUs rounded up
  (`size_on_node`).
- A decode step's weights-only arithmetic intensity (`flop_per_byte`), which the HBM page uses to
  introduce the roofline; the engine's `timing.forward` counts attention and the KV cache as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from snippets.data import Accelerator, Catalog, Model, Node, Precision

# --------------------------------------------------------------------------- the source page's rounded sizing

_EPS = 1e-9


def ceil_count(x: float) -> int:
    """Round a count up, ignoring float noise (140e9 / 70e9 is 2, not 3)."""
    if x < 0 or not math.isfinite(x):
        raise ValueError(f"count must be a non-negative finite number, got {x!r}")
    return math.ceil(x - _EPS * max(1.0, x))


def weight_bytes(params: float, bytes_per_param: float) -> float:
    """Bytes to hold `params` weights at `bytes_per_param` each (FP16: 2, INT8: 1, INT4: 0.5)."""
    if params <= 0 or bytes_per_param <= 0:
        raise ValueError("params and bytes_per_param must be positive")
    return params * bytes_per_param


def usable_bytes(capacity: float, reserve_fraction: float) -> float:
    """Memory left for weights after holding back `reserve_fraction` of it for KV cache, activations, runtime."""
    if not 0 <= reserve_fraction < 1:
        raise ValueError(f"reserve_fraction must be in [0, 1), got {reserve_fraction!r}")
    return capacity * (1 - reserve_fraction)


def gpus_needed(total_bytes: float, per_gpu_bytes: float) -> int:
    """The fewest GPUs whose `per_gpu_bytes` together hold `total_bytes`."""
    if per_gpu_bytes <= 0:
        raise ValueError("per_gpu_bytes must be positive")
    return max(1, ceil_count(total_bytes / per_gpu_bytes))


def gpus_exact(total_bytes: float, per_gpu_bytes: float) -> float:
    """`total_bytes / per_gpu_bytes` before rounding up (810 GB / 80 GB = 10.125)."""
    if per_gpu_bytes <= 0:
        raise ValueError("per_gpu_bytes must be positive")
    return total_bytes / per_gpu_bytes


def max_params(capacity: float, bytes_per_param: float) -> float:
    """The most parameters whose weights fit in `capacity` bytes."""
    if bytes_per_param <= 0:
        raise ValueError("bytes_per_param must be positive")
    return capacity / bytes_per_param


def nodes_needed(gpus: int, gpus_per_node: int) -> int:
    """Nodes of `gpus_per_node` GPUs needed to host `gpus` GPUs."""
    if gpus_per_node <= 0:
        raise ValueError("gpus_per_node must be positive")
    return ceil_count(gpus / gpus_per_node)


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
    n = model.nominal_params if params is None else params
    bpp = precision.bytes_per_param
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


# --------------------------------------------------------------------------- weights-only decode intensity

KV_TENSORS = 2
"""Tensors cached per layer and KV head: one of keys (K), one of values (V)."""

FLOP_PER_PARAM_PER_TOKEN = 2
"""A weight takes part in one multiply and one add for every token that passes through it."""


def flop_per_byte(bytes_per_param: float, batch: int = 1) -> float:
    """Arithmetic intensity of decoding: FLOPs done per byte of weights read.

    Each weight read serves `batch` tokens with a multiply and an add each: FP16 at batch 1 is
    2 FLOP / 2 bytes = 1 FLOP per byte. (KV cache reads, which add bytes, are not counted.)
    """
    if bytes_per_param <= 0 or batch <= 0:
        raise ValueError("bytes_per_param and batch must be positive")
    return FLOP_PER_PARAM_PER_TOKEN * batch / bytes_per_param
