"""Time, through the engine: the decode step of a deployment with its TP group over each link, the all-reduces
the engine picks and prices, the pipeline bubble, a TP group's shard of one layer."""

from __future__ import annotations

import math
from dataclasses import dataclass

from snippets.engine import Deployment
from snippets.engine.collectives import Collective, allreduce, priced
from snippets.engine.layout import kv_replicas
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.serving import mixed_step
from snippets.engine.step import Step as EngineStep
from snippets.engine.step import step as engine_step
from snippets.engine.topology import Link as TimeLink
from snippets.engine.topology import group_link, rewired
from snippets.pages.parallelism.common import (
    BATCH_LIMIT,
    TIME_LINKS,
)

# --------------------------------------------------------------------------- time, through the engine

def over(d: Deployment, link: str) -> Deployment:
    """Deployment `d` with its TP group's traffic over `link`: "nvlink" (as deployed), "pcie" or "network" (the
    engine's `rewired` deployment, whose every step the engine then prices itself)."""
    if link not in TIME_LINKS:
        raise ValueError(f"link must be one of {TIME_LINKS}, got {link!r}")
    return d if link == "nvlink" else rewired(d, link)


@dataclass(frozen=True)
class Step:
    """One decode step of `sequences` sequences (one micro-batch per pipeline stage) of a deployment, with its
    TP group's traffic over `link`: the engine's own step."""

    link: TimeLink
    sequences: int
    tokens: int
    """Tokens in one forward pass: the sequences split over the pipeline's micro-batches, as `predict` does."""
    engine: EngineStep

    @property
    def tp_ops(self) -> tuple[object, ...]:
        return tuple(o for o in self.engine.ops if o.kind == "allreduce" and o.name.endswith("all-reduce")
                     and not o.name.startswith("embedding"))

    @property
    def allreduce(self) -> Collective:
        """One of the layers' all-reduces, as the engine picked and priced it."""
        o = next((o for o in self.engine.ops if o.name == "attention all-reduce"), None)
        if o is None:
            return Collective(0.0, "none", 0.0)
        return Collective(o.comm_s, o.algorithm, o.comm_latency_s, o.bytes)

    @property
    def allreduces(self) -> int:
        return sum(o.count for o in self.engine.ops if o.name in ("attention all-reduce", "MLP all-reduce"))

    @property
    def tp_s(self) -> float:
        return sum(o.comm_s * o.count for o in self.engine.ops if o.kind == "allreduce")

    @property
    def tp_latency_s(self) -> float:
        return sum(o.comm_latency_s * o.count for o in self.engine.ops if o.kind == "allreduce")

    @property
    def comm_s(self) -> float:
        return self.engine.comm_s

    @property
    def total_s(self) -> float:
        return self.engine.total_s

    @property
    def comm_share(self) -> float:
        """Share of the step spent communicating: the engine adds the collectives to the ops, no overlap."""
        return self.comm_s / self.total_s

    @property
    def comm_over_compute(self) -> float:
        return self.comm_s / self.engine.compute_s

    @property
    def latency_share(self) -> float:
        """Share of TP's communication that is the collectives' fixed cost, not bytes."""
        return self.tp_latency_s / self.tp_s


def decode_step(d: Deployment, sequences: int, link: str = "nvlink") -> Step:
    """The engine's decode step of `sequences` sequences at the scenario's mid-answer context (one micro-batch per
    pipeline stage, as `predict` decodes), with the TP group's traffic over `link`."""
    sc = d.setting.scenario
    o = over(d, link)
    p = mixed_step(o, sequences, sc.input_tokens + sc.output_tokens / 2, 0, 0)
    return Step(group_link(o, "tp"), sequences, math.ceil(sequences / d.layout.pp), p)


def compute_bound_batch(d: Deployment, context: float, limit: int = BATCH_LIMIT) -> int | None:
    """The first batch at which the engine's decode step's arithmetic outlasts its memory traffic, each sequence
    attending to `context` cached tokens; None if none up to `limit` is (each sequence's KV read then costs more
    than its arithmetic)."""
    def compute(b: int) -> bool:
        p = engine_step(d, "decode", b, max(context, 1))
        return p.compute_s >= p.memory_s

    hi = 1
    while not compute(hi):
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute(mid) else (mid, hi)
    return hi


def tp_allreduce(d: Deployment, tokens: int, link: str = "nvlink") -> Collective:
    """One TP all-reduce of `tokens` tokens' activations, as the engine picks and prices it over `link`."""
    o = over(d, link)
    return allreduce(tokens * d.setting.model.architecture.hidden_size * ACTIVATION_BYTES, group_link(o, "tp"),
                     o.setting.time_model, o.setting.chip.vendor)


def algorithm_prices(d: Deployment, nbytes: float) -> dict[str, Collective]:
    """One-shot, two-shot and NCCL all-reduces of `nbytes` over `d`'s TP group on its NVLink, each as the engine
    prices it (`collectives.priced`), whichever the engine picks."""
    return priced(nbytes, group_link(d, "tp"), d.setting.time_model)


def ring_steps_of(d: Deployment, nbytes: float) -> dict[str, list[float]]:
    """The engine's price of each algorithm for `nbytes` over `d`'s TP group, spread over its steps: NCCL's ring
    2(n − 1) steps, two-shot 2, one-shot 1 (equal shares: the engine prices a collective whole)."""
    n = d.layout.tp
    p = algorithm_prices(d, nbytes)
    return {"ring": [p["nccl"].seconds / (2 * (n - 1))] * (2 * (n - 1)),
            "two-shot": [p["two-shot"].seconds / 2] * 2, "one-shot": [p["one-shot"].seconds]}


def bubble(stages: int, micro_batches: int) -> float:
    """Idle share of each stage while `micro_batches` pass `stages` stages: (p − 1) / (m + p − 1)."""
    if stages < 1 or micro_batches < 1:
        raise ValueError("stages and micro-batches must be at least 1")
    return (stages - 1) / (micro_batches + stages - 1)


@dataclass(frozen=True)
class TPShard:
    """What one GPU of a TP group holds of one layer (Megatron's split): whole query heads and KV heads
    (copied when TP exceeds the KV heads), a slice of the MLP's columns."""

    tp: int
    hidden: int
    heads: int
    """Query heads per GPU."""
    kv_heads: int
    """KV heads per GPU."""
    kv_replicas: int
    head_dim: int
    ffn: int
    """The MLP's intermediate columns per GPU."""
    gated: bool

    @property
    def qkv_cols(self) -> int:
        """Columns of the fused Q, K, V projection each GPU holds: its query heads, and a K and a V per KV head."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def o_rows(self) -> int:
        """Rows of the output projection each GPU holds: one per element of its heads' outputs."""
        return self.heads * self.head_dim


def tp_shard(d: Deployment) -> TPShard:
    """The per-GPU slice of one layer of deployment `d`'s model over its TP group (`d.layout.tp`)."""
    a, tp = d.setting.model.architecture, d.layout.tp
    if a.mla is not None or a.moe is not None:
        raise ValueError(f"{d.setting.model.name}: the TP diagram draws dense layers with standard attention")
    if a.attention_heads % tp or a.ffn_size % tp:
        raise ValueError(f"TP{tp} does not divide {d.setting.model.name}'s heads and FFN columns")
    reps = kv_replicas(a.kv_heads, tp)
    return TPShard(tp, a.hidden_size, a.attention_heads // tp, a.kv_heads * reps // tp, reps, a.head_dim,
                   a.ffn_size // tp, a.mlp == "gated")
