"""The time model's former single module, kept as a thin index of where each part now lives.

The model is layered: `snippets.engine.ops` (each operation's roofline and launch cost),
`snippets.engine.step` (a batch through the stages, broken down by kind of op), `snippets.engine.serving`
(TTFT, time per output token, throughput), with `snippets.engine.topology` (what a group's links give it)
and `snippets.engine.collectives` (the algorithm the engines pick, priced by published timings). Nothing here
computes anything of its own.
"""

from __future__ import annotations

from snippets.engine.collectives import Collective, allreduce, alltoall, send
from snippets.engine.deployment import Deployment
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.serving import Prediction, predict
from snippets.engine.step import Step, step
from snippets.engine.topology import Link, group_link

ALLREDUCES_PER_LAYER = 2
"""Megatron-style TP: one all-reduce after attention's output projection, one after the MLP's down projection
(or the MoE layer's combine, without data-parallel attention)."""


def forward(d: Deployment, tokens: int, context: float, *, prefill: bool) -> Step:
    """One step through every stage: a decode step of `tokens` sequences at `context` cached tokens each, or a
    prompt of `tokens` tokens (`context` already cached before it)."""
    return step(d, "prefill" if prefill else "decode", tokens, context)


def tp_link(d: Deployment) -> Link:
    return group_link(d, "tp")


def ep_link(d: Deployment) -> Link:
    return group_link(d, "ep")


def pp_link(d: Deployment) -> Link:
    return group_link(d, "pp")


__all__ = ["ACTIVATION_BYTES", "ALLREDUCES_PER_LAYER", "Collective", "Link", "Prediction", "Step", "allreduce",
           "alltoall", "ep_link", "forward", "pp_link", "predict", "send", "tp_link"]
