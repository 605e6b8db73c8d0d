"""Deployable layouts: tensor-parallel degree x pipeline stages that a real serving engine accepts.

A tensor-parallel (TP) degree must divide the attention heads and the KV heads (each GPU holds
whole heads) and fit inside one node (TP traffic needs NVLink); pipeline stages (PP) must divide
the layers evenly. 11 or 12 GPUs of raw capacity therefore become, say, TP8 x PP2 = 16 GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.capacity import nodes_needed
from snippets.data import Catalog, Node
from snippets.sizing import Sizing, size_on_node


@dataclass(frozen=True, slots=True)
class Layout:
    tp: int
    pp: int

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return f"TP{self.tp}" + (f" × PP{self.pp}" if self.pp > 1 else "")


def tp_degrees(attention_heads: int, kv_heads: int, gpus_per_node: int) -> list[int]:
    """TP degrees that divide both head counts and fit in a node, smallest first."""
    return [t for t in range(1, gpus_per_node + 1) if attention_heads % t == 0 and kv_heads % t == 0]


def pp_degrees(layers: int, limit: int) -> list[int]:
    """Stage counts up to `limit` that divide the layers evenly, smallest first."""
    return [p for p in range(1, limit + 1) if layers % p == 0]


def deployable_layout(
    gpus_needed: int, attention_heads: int, kv_heads: int, layers: int, gpus_per_node: int
) -> Layout:
    """The layout a serving team would deploy for `gpus_needed` GPUs of capacity.

    Tensor parallelism stays inside the node and pipeline stages span nodes:
    - if the model fits in a node, one stage with the smallest valid TP degree >= `gpus_needed`
      (6 GPUs of capacity with 8 KV heads -> TP8);
    - otherwise the largest valid TP degree in a node, and the fewest stages that divide the
      layers and reach `gpus_needed` (12 GPUs, 126 layers -> TP8 x PP2 = 16 GPUs).

    Raises ValueError when no layout exists.
    """
    if gpus_needed <= 0:
        raise ValueError("gpus_needed must be positive")
    tps = tp_degrees(attention_heads, kv_heads, gpus_per_node)
    in_node = [t for t in tps if t >= gpus_needed]
    if in_node:
        return Layout(in_node[0], 1)
    tp = tps[-1]
    for pp in pp_degrees(layers, layers):
        if tp * pp >= gpus_needed:
            return Layout(tp, pp)
    raise ValueError(f"no TP x PP layout reaches {gpus_needed} GPUs for this model")


@dataclass(frozen=True, slots=True)
class Deployment:
    """One copy of a model: the GPUs its weights need, and the layout that gets rented for them."""

    sizing: Sizing
    layout: Layout
    gpus_per_node: int

    @property
    def gpus_capacity(self) -> int:
        """GPUs the weights need with headroom (`Sizing.gpus_with_headroom`)."""
        return self.sizing.gpus_with_headroom

    @property
    def gpus_rented(self) -> int:
        """GPUs of the deployable layout: TP x PP."""
        return self.layout.gpus

    @property
    def extra_gpus(self) -> int:
        """GPUs rented beyond capacity, the price of rounding up to a valid layout."""
        return self.gpus_rented - self.gpus_capacity

    @property
    def nodes(self) -> int:
        """Nodes the rented GPUs occupy."""
        return nodes_needed(self.gpus_rented, self.gpus_per_node)


def deploy(cat: Catalog, model_id: str, precision_id: str, node_id: str, reserve_id: str) -> Deployment:
    """Size `model_id` in `precision_id` on `node_id`'s GPUs, then round up to its deployable layout."""
    s = size_on_node(cat, model_id, precision_id, node_id, reserve_id)
    arch = cat.models[model_id].architecture
    gpus_per_node = cat.interconnect(node_id, Node).gpus
    lay = deployable_layout(s.gpus_with_headroom, arch.attention_heads, arch.kv_heads, arch.layers, gpus_per_node)
    return Deployment(s, lay, gpus_per_node)
