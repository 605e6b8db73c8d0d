"""Memory per GPU of a layout: weights by tensor class, the KV cache, and what the engine's pool holds.

Weights: the linear layers of the blocks are stored in the checkpoint's precision; norms, routers
and biases stay at 16 bit, and so do the token embedding and the LM head where the precision's
checkpoints keep them (`PrecisionSpec.keeps_16bit`). Tensor parallelism slices the head-wise and
MLP matrices; KV projections are replicated once TP exceeds the KV heads; MLA's down-projections
are replicated; the embedding and LM head are split by vocabulary (vLLM's VocabParallelEmbedding).
Pipeline stages hold their own layers; the first the embedding, the last the LM head.

KV cache: per token and GPU, keys and values of the stage's layers for the KV heads the GPU holds
(MLA: the compressed latent and the rotary key, which every TP rank holds whole), in whole blocks
of the paged cache; a sliding-window layer holds no more than its window of the context.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from snippets.engine import params
from snippets.engine.layout import Layout, experts_per_gpu, kv_heads_per_gpu, pp_partition
from snippets.engine.specs import ArchLike, MemoryPolicySpec, PrecisionSpec

BYTES_16BIT = 2.0


def _kept_bytes(precision: PrecisionSpec) -> float:
    """Bytes of a tensor that stays at 16 bit (or at the precision's own width, if that is wider)."""
    return BYTES_16BIT if precision.bits_per_param < 16 else precision.bytes_per_param


@dataclass(frozen=True, slots=True)
class LayerShare:
    """One GPU's share of one transformer block, in parameters: quantized linear weights and 16-bit ones."""

    linear: float
    kept: float
    expert_linear: float
    """Of `linear`, the routed experts' part (read only for the experts a step's tokens use)."""


def layer_share(arch: ArchLike, layer: int, layout: Layout) -> LayerShare:
    """Parameters of block `layer` on one GPU of a TP group (and EP group, for experts)."""
    h, tp = arch.hidden_size, layout.tp
    kept = float(params.layer_norm_params(arch))
    if arch.mla is not None:
        m = arch.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        heads = arch.attention_heads
        if m.q_lora_rank is None:
            linear = h * heads * qk / tp
        else:
            linear = h * m.q_lora_rank + m.q_lora_rank * heads * qk / tp  # q_a replicated, q_b split by head
            kept += m.q_lora_rank  # q_a_layernorm
        linear += h * (m.kv_lora_rank + m.qk_rope_head_dim)  # kv_a, replicated
        kept += m.kv_lora_rank  # kv_a_layernorm
        linear += m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim) / tp  # kv_b, split by head
        linear += heads * m.v_head_dim * h / tp  # o_proj
    else:
        q_out = arch.attention_heads * arch.head_dim
        kv_out = kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim
        linear = 2 * h * q_out / tp + 2 * h * kv_out
        if arch.qkv_bias or arch.linear_bias:
            kept += q_out / tp + 2 * kv_out
        if arch.linear_bias:
            kept += h
        kept += params.qk_norm_params(arch)  # q_norm and k_norm over head_dim, on every rank
        kept += params.sink_params(arch) / tp  # one sink per head, split with the heads
    moe = arch.moe
    expert_linear = 0.0
    if moe is None or not params.is_moe_layer(arch, layer):
        bias = params.mlp_bias_params(arch, arch.ffn_size)
        linear += (params.mlp_params(arch, arch.ffn_size) - bias) / tp
        kept += bias / tp  # biases stay at 16 bit (sliced with their matrices; the down bias is not, a slip of h)
    else:
        bias = params.mlp_bias_params(arch, moe.expert_ffn_size)
        matrices = params.mlp_params(arch, moe.expert_ffn_size) - bias
        # EP hands out whole experts; without it every expert is sliced across the TP group
        share = experts_per_gpu(moe.experts, layout.ep) if layout.ep > 1 else moe.experts / tp
        expert_linear = share * matrices
        linear += expert_linear + moe.shared_experts * matrices / tp
        kept += (share + moe.shared_experts / tp) * bias  # expert biases, 16-bit
        kept += h * moe.experts + (moe.experts if moe.router_bias else 0)  # router, replicated, 16-bit
    return LayerShare(linear, kept, expert_linear)


@dataclass(frozen=True, slots=True)
class StageWeights:
    """Weight bytes on one GPU of one pipeline stage."""

    layers: int
    body_bytes: float
    """The blocks: quantized linear weights plus their 16-bit norms, routers and biases."""
    embedding_bytes: float
    """Token (and position) embedding and LM head, where this stage holds them, plus the final norm."""
    expert_bytes: float
    """Of `body_bytes`, the routed experts'."""
    first_layer: int = 0
    """Index of the stage's first block (which of its layers use a sliding window depends on it)."""

    @property
    def total(self) -> float:
        return self.body_bytes + self.embedding_bytes


@functools.lru_cache(maxsize=8192)
def stage_weights(arch: ArchLike, precision: PrecisionSpec, layout: Layout) -> tuple[StageWeights, ...]:
    """Weight bytes per GPU for each pipeline stage of `layout`, first stage first.

    Memoized (its arguments are frozen records): the sizing grid asks for the same few thousand combinations
    tens of thousands of times, each a walk over every layer."""
    bpp, kept_b = precision.bytes_per_param, _kept_bytes(precision)
    emb_b = kept_b if "embeddings" in precision.keeps_16bit else bpp
    head_b = kept_b if "lm_head" in precision.keeps_16bit else bpp
    emb = params.embedding_params(arch)
    vocab_part = arch.vocab_size * arch.hidden_size
    out = []
    start = 0
    parts = pp_partition(arch.layers, layout.pp)
    for s, n in enumerate(parts):
        body = expert = 0.0
        for layer in range(start, start + n):
            share = layer_share(arch, layer, layout)
            body += share.linear * bpp + share.kept * kept_b
            expert += share.expert_linear * bpp
        start += n
        edge = 0.0
        if s == 0:
            edge += (vocab_part / layout.tp + (emb - vocab_part)) * emb_b
        if s == len(parts) - 1:
            edge += params.norm_params(arch) * kept_b
            if not arch.tied_embeddings:
                edge += vocab_part / layout.tp * head_b
            elif layout.pp > 1:
                edge += vocab_part / layout.tp * emb_b  # the last stage keeps its own copy of a tied embedding
        out.append(StageWeights(n, body, edge, expert, start - n))
    return tuple(out)


def weight_bytes(arch: ArchLike, precision: PrecisionSpec) -> float:
    """Bytes of one whole copy of the weights in `precision` (TP1, one stage)."""
    return stage_weights(arch, precision, Layout(1))[0].total


def kv_bytes_per_token_per_gpu(arch: ArchLike, layers: int, tp: int, kv_bytes_per_elem: float, *,
                               context_tokens: float | None = None, first_layer: int = 0) -> float:
    """KV-cache bytes one token occupies on one GPU holding `layers` layers (from block `first_layer`) of a TP group.

    With `context_tokens`, the figure is averaged over a context of that length: a sliding-window layer holds at
    most `sliding_window` tokens however long the context (gpt-oss: 128 in every other layer). Without it, every
    layer holds every token, an upper bound.
    """
    if arch.mla is not None:
        return layers * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * kv_bytes_per_elem
    full = params.cached_layers(arch, first_layer, layers, context_tokens)
    return 2 * full * kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim * kv_bytes_per_elem


def paged_tokens(tokens: int, block: int) -> int:
    """Tokens a sequence's cache occupies in whole blocks of `block` tokens."""
    return math.ceil(tokens / block) * block


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """One GPU's memory at a layout and scenario: what the engine's pool must hold, and what it has."""

    capacity: float
    """What the device reports (or its label where no report is recorded)."""
    label: float
    pool: float
    """capacity x the policy's utilization: all the engine may use."""
    weights: float
    activations: float
    non_torch: float
    kv_cache: float
    """The scenario's sequences' KV cache on this GPU."""
    kv_per_sequence: float

    @property
    def used(self) -> float:
        return self.weights + self.activations + self.non_torch + self.kv_cache

    @property
    def free(self) -> float:
        """What the pool has left after the scenario (negative: it does not fit)."""
        return self.pool - self.used

    @property
    def fits(self) -> bool:
        return self.free >= 0

    @property
    def kv_room(self) -> float:
        """Pool left for the KV cache once weights, activations and runtime are in."""
        return self.pool - self.weights - self.activations - self.non_torch

    @property
    def max_sequences(self) -> int:
        """Sequences of the scenario's length whose KV cache the pool holds on this GPU."""
        if self.kv_room <= 0:
            return 0
        x = self.kv_room / self.kv_per_sequence
        return math.floor(x + 1e-9 * max(1.0, x))


def gpu_memory(
    arch: ArchLike,
    precision: PrecisionSpec,
    kv_precision: PrecisionSpec,
    layout: Layout,
    policy: MemoryPolicySpec,
    capacity: float,
    label: float,
    context_tokens: int,
    sequences: int,
) -> GpuMemory:
    """The busiest GPU's memory (the stage with the most bytes) at `sequences` of `context_tokens`."""
    stages = stage_weights(arch, precision, layout)
    tokens = paged_tokens(context_tokens, policy.kv_block_tokens)
    per_rank_seqs = math.ceil(sequences / layout.dp)
    best: GpuMemory | None = None
    for st in stages:
        kv_tok = kv_bytes_per_token_per_gpu(arch, st.layers, layout.tp, kv_precision.bytes_per_param,
                                            context_tokens=tokens, first_layer=st.first_layer)
        m = GpuMemory(capacity=capacity, label=label, pool=capacity * policy.utilization, weights=st.total,
                      activations=policy.activation_bytes, non_torch=policy.non_torch_bytes,
                      kv_cache=kv_tok * tokens * per_rank_seqs, kv_per_sequence=kv_tok * tokens)
        if best is None or m.used > best.used:
            best = m
    assert best is not None  # noqa: S101 - a layout has at least one stage
    return best
