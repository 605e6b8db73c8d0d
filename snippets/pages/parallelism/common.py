"""The parallelism page's choices, the traffic of one token, and the formatting its tables share."""

from __future__ import annotations

import math
from dataclasses import dataclass

from snippets.data import Catalog, Network, Node, NVLink, PCIe, required
from snippets.engine import Deployment
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.pages.scenario import SERVING, reference
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.traffic import (
    ring_allreduce_bytes_per_gpu,
    tp_allreduce_message_bytes,
    tp_bytes_per_token,
    tp_messages_per_token,
)

ACTIVATIONS = "bf16"
"""Activations (and so all TP and PP traffic) stay 16-bit, also when weights are INT8 or INT4 (weight-only)."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8", "int4")
WORKED = ("llama-3.1-405b", "bf16")
SMALL = ("llama-3.1-70b", "bf16")
UNEVEN = "deepseek-v3"
"""A model whose layer count no common stage count divides (61 layers)."""
UNEVEN_STAGES = 4
FEWEST = "fewest-gpus"
"""The layout policy that asks how few GPUs an engine accepts (data/policies.yaml)."""
RING_SIZES = (2, 4, 8)
TIME_LINKS = ("nvlink", "pcie", "network")
"""The links the page compares TP over: the node's NVLink (as deployed), the chip's PCIe host link, the network."""
PREFILL_TOKENS = (2048, 8192)
"""Prefill chunks for the all-reduce table: vLLM's chunked-prefill token budget of 2,048 per step and 8,192 (one
long prompt in one pass). Choices of the page, not data."""
BUBBLE_STAGES = (2, 4, 8)
BUBBLE_MICRO = (1, 2, 4, 8, 16, 32)
BATCH_LIMIT = 1 << 14
"""The largest batch `compute_bound_batch` tries: far beyond any KV cache of the page's deployments."""


def _short(model_id: str, precision_id: str) -> str:
    """Namespace key of a model x precision: ("llama-3.1-405b", "fp16") -> "m405_fp16"."""
    return f"m{model_id.split('-')[-1][:-1]}_{precision_id}"


def act_bytes(cat: Catalog) -> float:
    """Bytes of one activation element on the wire (BF16: 2)."""
    return cat.precisions[ACTIVATIONS].width_bytes


@dataclass(frozen=True)
class Traffic:
    """What one deployment sends for one decode token, in bytes (the time is the engine's: see `decode_step`)."""

    dep: Deployment
    """The engine's deployment, on the layout the scenario's policy chose."""
    fewest: Deployment
    """The same model on the fewest GPUs an engine accepts (the fewest-gpus policy)."""
    model: str
    precision: str
    hidden: int
    layers: int
    message: float
    """Bytes of one all-reduce at one token: the hidden state."""
    ring_per_gpu: float
    """Bytes each GPU sends in one ring (or two-shot) all-reduce."""
    tp_bytes: float
    """Bytes each TP GPU sends for one token over all layers, by ring or two-shot."""
    ring_steps: int
    """Sequential ring steps for one token over all layers: what a ring would pay in hop latencies."""
    allreduces: int
    """All-reduces on one token's path: two per layer, over all the stages in turn."""


def traffic(cat: Catalog, model_id: str, precision_id: str) -> Traffic:
    """The TP and PP bytes of one token for `model_id` in `precision_id`, on the layout the engine deploys."""
    r = reference(cat)
    dep = r.deployment(model_id, precision_id)
    arch = cat.models[model_id].architecture
    b = act_bytes(cat)
    tp = dep.layout.tp
    msg = tp_allreduce_message_bytes(arch.hidden_size, b)
    return Traffic(
        dep=dep,
        fewest=r.deployment(model_id, precision_id, layout_policy=FEWEST),
        model=cat.models[model_id].name,
        precision=cat.precisions[precision_id].name,
        hidden=arch.hidden_size,
        layers=arch.layers,
        message=msg,
        ring_per_gpu=ring_allreduce_bytes_per_gpu(msg, tp),
        tp_bytes=tp_bytes_per_token(arch.layers, arch.hidden_size, b, tp),
        ring_steps=tp_messages_per_token(arch.layers, tp),
        allreduces=ALLREDUCES_PER_LAYER * arch.layers if tp > 1 else 0,
    )


PIPE_MICRO = (1, 8)
"""The pipeline diagram's micro-batch counts: one sequence, and a row of the bubble table (a choice of the page)."""


# --------------------------------------------------------------------------- formatting

def nbytes_exact(n: float) -> Figure:
    """A small byte count, written out: 32,768 bytes."""
    if n != int(n):
        raise ValueError(f"not a whole byte count: {n!r}")
    return fmt.Figure(n, "B", f"{fmt.number(n)} bytes", "bytes")


def share(fraction: float) -> Figure:
    """A share, to two significant digits: 0.11%, 1.6%, 25%."""
    if fraction <= 0:
        return fmt.percent(0.0)
    digits = max(0, 1 - math.floor(math.log10(fraction * 100)))
    return fmt.percent(fraction, digits)


def gbps(bytes_per_s: float, basis: str = "each GPU's, one way") -> Figure:
    v = bytes_per_s / 1e9
    return fmt.quantity(v, "GB/s", 1 if v < 100 else 0, show_unit=True, basis=basis)


TIME_BASIS = "the engine's time model: the collective's fixed latency + bytes ÷ the share of the link it reaches"


def link_labels(cat: Catalog, d: Deployment) -> dict[str, str]:
    """Display names of the three links: the node's NVLink, the chip's host link (PCIe), the node's NIC."""
    node = cat.interconnect(d.setting.node.id, Node)
    acc = cat.accelerators[d.setting.chip.id]
    nic = cat.interconnect(required(node.nic, f"a NIC for {node.name}"), Network)
    host = cat.interconnect(required(acc.host_link, f"a host link for {acc.name}"), PCIe)
    return {"nvlink": cat.interconnect(required(acc.scale_up, "NVLink").fabric, NVLink).name,
            "pcie": f"{host.name} x{acc.host_link_lanes or 16}", "network": nic.name}


def serving_sequences(cat: Catalog) -> int:
    """The serving scenario's concurrency: the page's serving batch."""
    return reference(cat, SERVING).scenario.concurrency
