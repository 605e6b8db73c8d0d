"""The KV-cache page's choices, its formatting, what it reads from the engine, and its worked example's figures."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.deployment import Setting, setting
from snippets.engine.memory import kv_bytes_per_token_per_gpu
from snippets.pages.scenario import SERVING, Reference
from snippets.pages.units import byte_count
from snippets.render import fmt
from snippets.render.fmt import Figure

WORKED = ("llama-3.1-70b", "bf16")
"""The worked model: 8 KV heads (GQA), shipped in BF16."""
WORKED_TPS = (2, 4)
"""The two layouts the worked example compares for the serving scenario's load."""
KV_FP8 = "fp8"
"""The KV-cache precision of the FP8 comparison (vLLM's --kv-cache-dtype fp8); the default is the scenario's."""
COMPARED = ("gpt-3-175b", "llama-3.1-70b", "deepseek-v3", "gpt-oss-120b")
"""One model per way of caching attention: MHA, GQA, MLA, GQA with sliding-window layers."""
MIDDLE_CONTEXT = 32768
"""A context between the scenario's and the longest, for the chart and the sequences table."""
CHART_CONCURRENCY = (1, 4, 16, 32)
"""Sequences in flight, the chart's groups."""
REPLICATION_TPS = (1, 2, 4, 8, 16)
"""TP degrees of the KV-head replication table: up to two 8-GPU nodes' worth."""
LONG_CONTEXT = "decode-context"
"""Its range's upper end is the longest context Llama 3.1 accepts (131,072 tokens, max_position_embeddings)."""
POOL_ROWS: tuple[tuple[str, str, int], ...] = (
    ("llama-3.1-8b", "bf16", 1),
    ("qwen3-32b", "bf16", 1),
    ("gpt-oss-120b", "mxfp4", 1),
    ("llama-3.1-70b", "bf16", 2),
    ("llama-3.1-70b", "bf16", 4),
    ("llama-3.1-70b", "bf16", 8),
    ("llama-3.1-70b", "fp8", 2),
    ("llama-3.1-405b", "fp8", 8),
)
"""Rows of the pool table: (model, precision, TP), one node of the scenario's GPU each."""
PADDED_ROW: tuple[str, str, int, str] = ("gpt-oss-120b", "mxfp4", 1, "marlin")
"""A pool-table row run with another fused-MoE kernel, whose layout pads the experts in memory: (model, precision,
TP, kernel); it follows the same model's row."""
COST_ROWS: tuple[tuple[int, str | None], ...] = ((4, None), (8, None), (4, KV_FP8))
"""Rows of the cost table for the worked model: (TP, KV precision; None is the scenario's)."""
TIGHT_TP = WORKED_TPS[0]
"""The worked model's tightest layout, which the cost lens shows vLLM refusing."""


GIB = 2**30


# --------------------------------------------------------------------------- formatting

def gib(n: float, digits: int = 1) -> Figure:
    return fmt.nbytes(n, "GiB", digits)


def tokens(n: float) -> Figure:
    return fmt.count(n, "tokens")


def seqs(n: int) -> Figure:
    return fmt.count(n, "sequences")


# --------------------------------------------------------------------------- reading the engine

def longest_context(cat: Catalog, model: str) -> int | None:
    """The longest context a model accepts, from data: its config.json's max_position_embeddings where
    data/models.yaml records it (Llama 3.1 included, 131,072); for a Llama 3.1 entry without it, the
    `decode-context` assumption's upper end (the same 131,072). None where neither says."""
    arch = cat.models[model].architecture
    if arch.context_length is not None:
        return int(arch.context_length)
    if model.startswith("llama-3.1-"):
        return int(cat.assumptions[LONG_CONTEXT].range[1])
    return None


def at(r: Reference, model: str, precision: str, *, scenario: str | None = None, context_tokens: int | None = None,
       concurrency: int | None = None, kv_precision: str | None = None, memory_policy: str | None = None,
       moe_kernel: str | None = None) -> Setting:
    """The engine's setting for `model` in `precision` at the scenario, with the context, concurrency, KV
    precision, memory policy and fused-MoE kernel overridden where given (`snippets.engine.deployment.setting`)."""
    return setting(r.eng, model, precision, scenario or r.scenario.id, context_tokens=context_tokens,
                   concurrency=concurrency, kv_precision=kv_precision, memory_policy=memory_policy,
                   moe_kernel=moe_kernel)


def sequences_fit(st: Setting, layout: Layout) -> int:
    """Sequences of the setting's context whose KV cache the layout holds: the busiest GPU's
    `max_sequences` times the DP replicas, as `Deployment.max_concurrency` counts them, but without
    `deploy`'s refusal when not even one fits (then 0). (Page helper over `Setting.memory`.)"""
    return st.memory(layout).max_sequences * layout.dp


def kv_token_gpu(st: Setting, tp: int, context: int | None = None) -> float:
    """KV bytes one token adds on one GPU of a TP group (one stage: all layers), averaged over `context`
    for sliding-window layers."""
    arch = st.model.architecture
    return kv_bytes_per_token_per_gpu(arch, arch.layers, tp, st.kv_precision.bytes_per_param,
                                      context_tokens=context)


# --------------------------------------------------------------------------- the worked example

class Worked:
    """One layout of the worked example, step by step, for the serving scenario's load."""

    def __init__(self, r: Reference, tp: int) -> None:
        st = at(r, *WORKED, scenario=SERVING)
        m = st.memory(Layout(tp))
        self.layout = Layout(tp).label
        self.gpus = fmt.count(tp)
        self.pool = gib(m.pool)
        self.weights = gib(m.weights)
        self.runtime = gib(m.activations + m.non_torch, 2)
        self.kv_room = gib(m.kv_room)
        self.kv_token_gpu = byte_count(kv_token_gpu(st, tp))
        self.kv_per_seq = gib(m.kv_per_sequence, 3)
        self.kv_need = gib(m.kv_cache)
        self.used = gib(m.used)
        # How much the pool lacks (0 when it fits).
        self.short = gib(max(0.0, -m.free))
        # What the pool has left (0 when it does not fit).
        self.spare = gib(max(0.0, m.free))
        self.max_seq = seqs(m.max_sequences)
        self.m = m
