"""Memory per GPU of a layout: weights by tensor class, the KV cache, and what the engine's pool holds.

Weights: the linear layers of the blocks are stored in the checkpoint's precision; norms, routers
and biases stay at 16 bit, and so do the token embedding and the LM head where the precision's
checkpoints keep them (`PrecisionSpec.keeps_16bit`). Tensor parallelism slices the head-wise and
MLP matrices; KV projections are replicated once TP exceeds the KV heads; MLA's down-projections
are replicated; the embedding and LM head are split by vocabulary (vLLM's VocabParallelEmbedding).
Pipeline stages hold their own layers; the first the embedding, the last the LM head.

KV cache: per token and GPU, keys and values of the stage's layers for the KV heads the GPU holds
(MLA: the compressed latent and the rotary key, which every TP rank holds whole), in whole blocks
of the paged cache. A sequence's blocks, as vLLM counts them for its start-up check and its admission
(`kv_bytes_per_sequence`): a full-attention layer holds the whole context; with the hybrid KV cache manager a
sliding-window layer holds at most its window plus a step's batched tokens, and a chunked-attention layer
(Llama 4) at most its chunk plus them; without it, every layer holds the whole context.

The budget, as vLLM's worker makes it (`gpu_worker.determine_available_memory`): the pool is the total the
runtime reports x `--gpu-memory-utilization`; inside it the weights, the activation peak of the profiling run
(`activation_peak`: a dummy forward pass of `max_num_batched_tokens` tokens, then the sampler over one logit
row per dummy request on the last pipeline stage) and the memory outside PyTorch (by the layout's GPUs, TP x PP,
from the policy); the rest is the KV cache. vLLM refuses to start when that rest is empty or cannot hold one sequence
of `max_model_len` tokens (`deployment.Setting.kv_refusal`, with vLLM's own messages: `kv_refusal_message`).
CUDA graphs are captured afterwards, from the memory outside the pool, where the policy says so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from snippets.engine import params
from snippets.engine.layout import Layout, experts_per_gpu, kv_heads_per_gpu, pp_partition
from snippets.engine.specs import Arch, MemoryPolicySpec, PrecisionSpec

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


def layer_share(arch: Arch, layer: int, layout: Layout, kept_16bit: frozenset[str] = frozenset()) -> LayerShare:
    """Parameters of block `layer` on one GPU of a TP group (and EP group, for experts)."""
    return kind_share(arch, params.is_moe_layer(arch, layer), layout, kept_16bit)


def kind_share(arch: Arch, moe_layer: bool, layout: Layout, kept_16bit: frozenset[str] = frozenset()) -> LayerShare:
    """Parameters of one block on one GPU of a TP group (and EP group, for experts): a dense block, or with
    `moe_layer` one that routes to experts. Every block of a kind holds the same. The attention projections the
    checkpoint leaves at 16 bits (`kept_16bit`: `ModelSpec.kept_16bit`) count among the 16-bit parameters."""
    h, tp = arch.hidden_size, layout.tp
    kept = float(params.layer_norm_params(arch))
    if arch.mla is not None:
        m = arch.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        heads = arch.attention_heads
        if m.q_lora_rank is None:
            attn_in = h * heads * qk / tp
        else:
            attn_in = h * m.q_lora_rank + m.q_lora_rank * heads * qk / tp  # q_a replicated, q_b split by head
            kept += m.q_lora_rank  # q_a_layernorm
        attn_in += h * (m.kv_lora_rank + m.qk_rope_head_dim)  # kv_a, replicated
        kept += m.kv_lora_rank  # kv_a_layernorm
        attn_in += m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim) / tp  # kv_b, split by head
        attn_out = heads * m.v_head_dim * h / tp  # o_proj
    else:
        q_out = arch.attention_heads * arch.head_dim
        kv_out = kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim
        attn_in, attn_out = h * q_out / tp + 2 * h * kv_out, h * q_out / tp
        if arch.qkv_bias or arch.linear_bias:
            kept += q_out / tp + 2 * kv_out
        if arch.linear_bias:
            kept += h
        kept += params.qk_norm_params(arch)  # q_norm and k_norm over head_dim, on every rank
        kept += params.sink_params(arch) / tp  # one sink per head, split with the heads
    linear = 0.0
    for group, n in (("attention_in", attn_in), ("attention_out", attn_out)):
        if group in kept_16bit:
            kept += n
        else:
            linear += n
    moe = arch.moe
    expert_linear = 0.0
    if moe is None or not moe_layer:
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


def _round_up(n: int, multiple: int) -> int:
    """`n` rounded up to a whole number of `multiple`s (a KV block's tokens, a kernel's tile)."""
    return -(-n // multiple) * multiple


def padded_expert_shape(arch: Arch, layout: Layout, pad: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """One routed expert's matrices on one GPU, (hidden size, intermediate size), as the checkpoint holds them and as
    the engine's fused-MoE kernel pads them to multiples of `pad` (`MemoryPolicySpec.mxfp4_padding`): the whole
    intermediate size under expert parallelism or on one GPU, its 1/TP slice otherwise."""
    moe = arch.moe
    if moe is None:
        raise ValueError(f"{arch.hidden_size}-wide model has no experts to pad")
    h, ffn, tp = arch.hidden_size, moe.expert_ffn_size, layout.tp
    part = ffn if layout.ep > 1 or tp == 1 else ffn // tp
    return (h, part), (_round_up(h, pad[0]), _round_up(part, pad[1]))


def expert_padding_bytes(arch: Arch, precision: PrecisionSpec, layout: Layout, pad: tuple[int, int]) -> float:
    """Bytes one block's routed experts take on one GPU beyond the checkpoint's shapes where the engine's fused-MoE
    kernel pads them (`MemoryPolicySpec.mxfp4_padding`): each expert's matrices to a multiple of `pad`'s hidden size
    and of its intermediate size along the GPU's share of the expert's intermediate size (the whole expert under
    expert parallelism or on one GPU, its 1/TP slice otherwise), at the precision's bytes, and their biases at 16
    bits. vLLM 0.11's Marlin kernel, for gpt-oss-120b on one GPU: 2,880 x 2,880 matrices held as 3,072 x 2,944, 5.13
    GiB over the 36 blocks."""
    moe = arch.moe
    if moe is None or pad == (1, 1):
        return 0.0
    (h, part), (hp, ip) = padded_expert_shape(arch, layout, pad)
    count = experts_per_gpu(moe.experts, layout.ep) if layout.ep > 1 else moe.experts
    mats = 3 if arch.mlp == "gated" else 2
    extra = count * mats * (hp * ip - h * part) * precision.bytes_per_param
    if arch.linear_bias:
        extra += count * ((mats - 1) * (ip - part) + (hp - h)) * _kept_bytes(precision)
    return extra


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
    encoder_bytes: float = 0.0
    """The image encoder and its projector, where the engine builds them (`loaded_weights`); 0 in the checkpoint's
    text model."""

    @property
    def total(self) -> float:
        return self.body_bytes + self.embedding_bytes + self.encoder_bytes


@functools.lru_cache(maxsize=8192)
def stage_weights(arch: Arch, precision: PrecisionSpec, layout: Layout,
                  kept_16bit: frozenset[str] = frozenset()) -> tuple[StageWeights, ...]:
    """Weight bytes per GPU for each pipeline stage of `layout`, first stage first.

    A stage's blocks are counted by kind (dense, or routing to experts; `params.moe_layers`), each kind's share
    computed once, so the cost does not grow with the layers (a pasted config may have 1,000): a block's bytes
    times the stage's blocks of its kind, which is the sum block by block (each block's bytes are a whole number of
    bytes or a few binary fractions of one, which floating point adds exactly). Memoized (its arguments are frozen
    records): the sizing grid asks for the same few thousand combinations tens of thousands of times."""
    bpp, kept_b = precision.bytes_per_param, _kept_bytes(precision)
    emb_b = kept_b if "embeddings" in precision.keeps_16bit else bpp
    head_b = kept_b if "lm_head" in precision.keeps_16bit else bpp
    emb = params.embedding_params(arch)
    vocab_part = arch.vocab_size * arch.hidden_size
    kinds = [kind_share(arch, moe, layout, kept_16bit) for moe in ((False, True) if arch.moe is not None else (False,))]
    block = [(k.linear * bpp + k.kept * kept_b, k.expert_linear * bpp) for k in kinds]
    out = []
    start = 0
    parts = pp_partition(arch.layers, layout.pp)
    for s, n in enumerate(parts):
        routed = params.moe_layers(arch, start, n)
        body = (n - routed) * block[0][0] + (routed * block[1][0] if routed else 0.0)
        expert = (n - routed) * block[0][1] + (routed * block[1][1] if routed else 0.0)
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


def weight_bytes(arch: Arch, precision: PrecisionSpec, kept_16bit: frozenset[str] = frozenset()) -> float:
    """Bytes of one whole copy of the weights in `precision` (TP1, one stage), the linear layers in `kept_16bit` at
    16 bits."""
    return stage_weights(arch, precision, Layout(1), kept_16bit)[0].total


def vision_bytes(arch: Arch, precision: PrecisionSpec, tp: int) -> float:
    """Bytes of the image encoder and projector (`Arch.vision`) on one GPU of a TP group: the split parameters over
    `tp`, the replicated ones whole (`params.vision_params`), in 16 bits whatever the text model's precision (vLLM
    builds them with no quantization config)."""
    split, whole = params.vision_params(arch)
    return (split / tp + whole) * _kept_bytes(precision)


def loaded_weights(arch: Arch, precision: PrecisionSpec, layout: Layout, kept_16bit: frozenset[str] = frozenset(),
                   expert_pad: tuple[int, int] = (1, 1), vision: bool = False) -> tuple[StageWeights, ...]:
    """`stage_weights` as the engine holds them in memory: each stage's routed blocks with the padding the engine's
    fused-MoE kernel adds (`expert_padding_bytes`; none where `expert_pad` is (1, 1)); with `vision`, the image
    encoder on every stage (`vision_bytes`: vLLM's `Llama4ForConditionalGeneration` builds it whatever the pipeline
    stage)."""
    stages = stage_weights(arch, precision, layout, kept_16bit)
    per_block = expert_padding_bytes(arch, precision, layout, expert_pad)
    encoder = vision_bytes(arch, precision, layout.tp) if vision else 0.0
    if per_block == 0.0 and encoder == 0.0:
        return stages
    out = []
    for st in stages:
        extra = per_block * params.moe_layers(arch, st.first_layer, st.layers)
        out.append(StageWeights(st.layers, st.body_bytes + extra, st.embedding_bytes, st.expert_bytes + extra,
                                st.first_layer, encoder))
    return tuple(out)


def kv_bytes_per_token_per_gpu(arch: Arch, layers: int, tp: int, kv_bytes_per_elem: float, *,
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


def decode_kv_read(arch: Arch, layers: int, tp: int, kv_bytes_per_elem: float, context_tokens: float,
                   seqs: float = 1, *, first_layer: int = 0) -> float:
    """KV-cache bytes one decode step reads on one GPU holding `layers` layers (from block `first_layer`) of a TP
    group: each of `seqs` sequences reads every cached token of its context of `context_tokens` tokens (a
    sliding-window layer at most its window: `kv_bytes_per_token_per_gpu` averaged over the context)."""
    return kv_bytes_per_token_per_gpu(arch, layers, tp, kv_bytes_per_elem, context_tokens=context_tokens,
                                      first_layer=first_layer) * context_tokens * seqs


def paged_tokens(tokens: int, block: int) -> int:
    """Tokens a sequence's cache occupies in whole blocks of `block` tokens."""
    return _round_up(tokens, block)


def _blocks_of_kind(kind: str, arch: Arch, tokens: int, policy: MemoryPolicySpec) -> int:
    """Blocks one layer of `kind` ("full", "sliding", "chunked") holds of a sequence of up to `tokens` tokens, as
    vLLM's KV cache specs count them (`max_memory_usage_bytes`); without the hybrid manager, every layer's full."""
    block, batched = policy.kv_block_tokens, policy.max_num_batched_tokens
    if kind == "sliding" and policy.hybrid_kv_cache:
        return -(-min((arch.sliding_window or tokens) - 1 + batched, tokens) // block) + 1
    if kind == "chunked" and policy.hybrid_kv_cache:
        return -(-min((arch.attention_chunk_size or tokens) + batched, tokens) // block)
    return -(-tokens // block)


@functools.lru_cache(maxsize=16384)
def kv_bytes_per_sequence(arch: Arch, first_layer: int, layers: int, tp: int, kv_bytes_per_elem: float,
                          tokens: int, policy: MemoryPolicySpec) -> float:
    """KV-cache bytes one sequence of up to `tokens` tokens needs on one GPU holding `layers` layers from block
    `first_layer`, as vLLM counts it for its start-up check and its admission (`max_memory_usage_bytes` of each
    layer's KV cache spec, in whole blocks): a full-attention layer `cdiv(tokens, block)` blocks; with the hybrid
    KV cache manager, a sliding-window layer `cdiv(min(window - 1 + max_num_batched_tokens, tokens), block) + 1`
    and a chunked-attention layer `cdiv(min(chunk + max_num_batched_tokens, tokens), block)`."""
    if tokens < 1:
        raise ValueError("a sequence holds at least one token")
    block = policy.kv_block_tokens
    per_token = kv_bytes_per_token_per_gpu(arch, 1, tp, kv_bytes_per_elem)  # one layer, every token
    if not policy.hybrid_kv_cache or (arch.sliding_window is None and arch.attention_chunk_size is None):
        return layers * _blocks_of_kind("full", arch, tokens, policy) * block * per_token
    counts = params.attention_kinds(arch, first_layer, layers)  # counted, not walked
    kinds = zip(("full", "sliding", "chunked"), counts, strict=True)
    blocks = sum(n * _blocks_of_kind(kind, arch, tokens, policy) for kind, n in kinds if n)
    return blocks * block * per_token


def estimated_max_model_len(arch: Arch, first_layer: int, layers: int, tp: int, kv_bytes_per_elem: float,
                            available: float, upper: int, policy: MemoryPolicySpec) -> int:
    """The longest sequence (at most `upper` tokens) whose KV cache fits `available` bytes, found by bisection as
    vLLM's `estimate_max_model_len` finds it; 0 if not even one token fits."""
    def fits(n: int) -> bool:
        return kv_bytes_per_sequence(arch, first_layer, layers, tp, kv_bytes_per_elem, n, policy) <= available

    if not fits(1):
        return 0
    lo, hi, best = 1, upper, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


@functools.lru_cache(maxsize=4096)
def forward_peak_bytes(arch: Arch, layout: Layout, tokens: int, act_bytes: float) -> float:
    """Activations one GPU holds at the peak of a forward pass over `tokens` tokens (vLLM's profiling run): the
    residual stream, a layer's input and its output (3 x hidden per token), plus the widest transient any layer
    holds beside them: the gated MLP's fused gate-and-up output with its product (3 x ffn / TP; a plain MLP 2 x),
    or an MoE layer's per-token expert buffers (top-k x (3 x expert ffn per GPU + hidden), the shared experts and
    the float32 router logits), or the attention projections (queries, keys, values and the attention output)."""
    h, tp = arch.hidden_size, layout.tp
    mult = 3 if arch.mlp == "gated" else 2
    widths = []
    moe = arch.moe
    if moe is None or moe.dense_layers > 0 or moe.layer_step > 1:
        widths.append(mult * arch.ffn_size / tp)
    if moe is not None:
        ffn = moe.expert_ffn_size / (tp if layout.ep == 1 else 1)
        widths.append(moe.active_experts * (mult * ffn + h) + moe.shared_experts * mult * moe.expert_ffn_size / tp
                      + moe.experts * 4 / act_bytes)
    if arch.mla is not None:
        m = arch.mla
        heads = arch.attention_heads / tp
        widths.append(heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.qk_nope_head_dim + 2 * m.v_head_dim)
                      + m.kv_lora_rank + m.qk_rope_head_dim)
    else:
        q = arch.attention_heads * arch.head_dim / tp
        widths.append(2 * q + 2 * kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim)
    return tokens * act_bytes * (3 * h + max(widths))


def profile_rows(policy: MemoryPolicySpec, context_tokens: int) -> int:
    """Logit rows the profiling run's sampler holds: vLLM's one per dummy request, min(max_num_seqs,
    max_num_batched_tokens); TensorRT-LLM's one per dummy prompt, the prompts of min(max_model_len,
    max_num_batched_tokens) tokens that fill max_num_batched_tokens (`_create_dummy_context_requests`)."""
    if policy.profile_rows == "prompts":
        return -(-policy.max_num_batched_tokens // max(1, min(context_tokens, policy.max_num_batched_tokens)))
    return min(policy.max_num_seqs, policy.max_num_batched_tokens)


def sampler_peak_bytes(arch: Arch, policy: MemoryPolicySpec, context_tokens: int = 0) -> float:
    """What the profiling run's sampler holds at its peak: one row of logits per dummy request (`profile_rows`: rows
    of the whole vocabulary, as vLLM gathers the logits on every TP rank) x the bytes it keeps per logit."""
    per_logit = policy.sampler_bytes_per_logit
    return 0.0 if per_logit is None else profile_rows(policy, context_tokens) * arch.vocab_size * per_logit


def activation_peak(arch: Arch, layout: Layout, policy: MemoryPolicySpec, act_bytes: float, *,
                    last_stage: bool = True, context_tokens: int = 0) -> float:
    """The activation peak the engine's profiling run finds on one GPU: the larger of the forward pass over
    `max_num_batched_tokens` tokens and, on the last pipeline stage, the sampler's peak (its rows by
    `profile_rows`, for sequences of `context_tokens`). Nothing where the engine runs no profiling run (SGLang's static
    pool, `kv_share_of` "static": its activations live outside the pool)."""
    if policy.kv_share_of == "static":
        return 0.0
    fwd = forward_peak_bytes(arch, layout, policy.max_num_batched_tokens, act_bytes)
    return max(fwd, sampler_peak_bytes(arch, policy, context_tokens)) if last_stage else fwd


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """One GPU's memory at a layout and scenario: what the engine's pool must hold, and what it has."""

    capacity: float
    """What the runtime reports as the device's total (or the label where no report is recorded)."""
    label: float
    pool: float
    """All the engine may use: capacity x the policy's utilization (vLLM), or what it holds besides the KV cache plus
    utilization x the rest (TensorRT-LLM, `engine_pool`)."""
    weights: float
    activations: float
    """The activation peak of vLLM's profiling run (`activation_peak`)."""
    non_torch: float
    """Memory outside PyTorch's allocator at the layout's TP degree (TP x PP where the layout has stages)."""
    cuda_graphs: float
    cuda_graphs_in_pool: bool
    kv_cache: float
    """The scenario's sequences' KV cache on this GPU."""
    kv_per_sequence: float
    """KV bytes one sequence of `max_model_len` tokens needs on this GPU (`kv_bytes_per_sequence`)."""
    max_model_len: int
    """Tokens per sequence the engine is started for (the scenario's context)."""
    first_layer: int = 0
    layers: int = 0
    """The pipeline stage this GPU holds (block index and count)."""

    @property
    def used(self) -> float:
        return self.weights + self.activations + self.non_torch + self.kv_cache + self._graphs_inside

    @property
    def _graphs_inside(self) -> float:
        return self.cuda_graphs if self.cuda_graphs_in_pool else 0.0

    @property
    def free(self) -> float:
        """What the pool has left after the scenario (negative: it does not fit)."""
        return self.pool - self.used

    @property
    def kv_room(self) -> float:
        """Pool left for the KV cache once weights, the activation peak and the memory outside PyTorch are in:
        vLLM's "available KV cache memory" (negative: nothing is left)."""
        return self.pool - self.weights - self.activations - self.non_torch - self._graphs_inside

    @property
    def headroom(self) -> float:
        """What the device holds beyond the pool, less the CUDA graphs captured there."""
        return self.capacity - self.pool - (0.0 if self.cuda_graphs_in_pool else self.cuda_graphs)

    @property
    def starts(self) -> bool:
        """vLLM starts: its KV memory is positive and holds one sequence of `max_model_len` tokens."""
        return self.kv_room > 0 and self.kv_per_sequence <= self.kv_room

    @property
    def fits(self) -> bool:
        """vLLM starts and its KV cache holds the scenario's sequences at once."""
        return self.starts and self.free >= 0

    @property
    def max_sequences(self) -> int:
        """Sequences of `max_model_len` tokens whose KV cache the pool holds on this GPU."""
        if self.kv_room <= 0:
            return 0
        x = self.kv_room / self.kv_per_sequence
        return math.floor(x + 1e-9 * max(1.0, x))


def engine_pool(policy: MemoryPolicySpec, capacity: float, held: float, *, non_torch: float = 0.0, tp: int = 1,
                pp: int = 1) -> float:
    """The pool one GPU's engine may take when the weights, the activation peak, the memory outside PyTorch (and
    the CUDA graphs where the engine counts them in) take `held`: vLLM's reported total x utilization; TensorRT-LLM's
    `held` plus utilization x what is left free (its KV cache is that share of the free memory, `_cal_max_tokens`);
    SGLang's memory outside PyTorch (taken before it measures) plus its static share of what is free at start, the
    share from the layout (`MemoryPolicySpec.share`: `profile_max_num_token`'s available memory less (1 - share) x
    the memory free at start, after the weights)."""
    if policy.kv_share_of == "free":
        return held + policy.utilization * max(0.0, capacity - held)
    if policy.kv_share_of == "static":
        return non_torch + policy.share(tp, pp) * max(0.0, capacity - non_torch)
    return capacity * policy.utilization


def _stage_maker(
    arch: Arch, precision: PrecisionSpec, kv_precision: PrecisionSpec, layout: Layout, policy: MemoryPolicySpec,
    capacity: float, label: float, context_tokens: int, sequences: int, act_bytes: float,
    kept_16bit: frozenset[str] = frozenset(), expert_pad: tuple[int, int] = (1, 1), vision: bool = False,
) -> tuple[tuple[StageWeights, ...], Callable[[int, StageWeights], GpuMemory]]:
    """The stages' weights, and the memory of stage i of them. What stages share is computed once: the activation
    peak (the last stage's apart), and the KV bytes per sequence, which depend only on how many of a stage's layers
    attend fully, in a window or in chunks (`params.attention_kinds`). A stage's weights are as the engine loads
    them: the checkpoint's, the padding its fused-MoE kernel adds to each routed block (`expert_pad`), and the image
    encoder where it builds one (`vision`)."""
    stages = loaded_weights(arch, precision, layout, kept_16bit, expert_pad, vision)
    per_rank_seqs = math.ceil(sequences / layout.dp)
    non_torch = policy.non_torch_bytes(layout.tp * layout.pp)  # NCCL sets up the pipeline group's buffers too
    inner = activation_peak(arch, layout, policy, act_bytes, last_stage=False, context_tokens=context_tokens)
    last = activation_peak(arch, layout, policy, act_bytes, last_stage=True, context_tokens=context_tokens)
    per_kinds: dict[tuple[int, int, int], float] = {}

    def make(i: int, st: StageWeights) -> GpuMemory:
        kinds = params.attention_kinds(arch, st.first_layer, st.layers)
        per_seq = per_kinds.get(kinds)
        if per_seq is None:
            per_seq = per_kinds[kinds] = kv_bytes_per_sequence(
                arch, st.first_layer, st.layers, layout.tp, kv_precision.bytes_per_param, context_tokens, policy)
        act = last if i == len(stages) - 1 else inner
        return GpuMemory(
            capacity=capacity, label=label, pool=engine_pool(policy, capacity, st.total + act + non_torch + (
                policy.cuda_graphs if policy.cuda_graphs_in_pool else 0.0), non_torch=non_torch, tp=layout.tp, pp=layout.pp),
            weights=st.total,
            activations=act,
            non_torch=non_torch, cuda_graphs=policy.cuda_graphs, cuda_graphs_in_pool=policy.cuda_graphs_in_pool,
            kv_cache=per_seq * per_rank_seqs, kv_per_sequence=per_seq, max_model_len=context_tokens,
            first_layer=st.first_layer, layers=st.layers)
    return stages, make


def stage_memories(
    arch: Arch,
    precision: PrecisionSpec,
    kv_precision: PrecisionSpec,
    layout: Layout,
    policy: MemoryPolicySpec,
    capacity: float,
    label: float,
    context_tokens: int,
    sequences: int,
    act_bytes: float = BYTES_16BIT,
    kept_16bit: frozenset[str] = frozenset(),
    expert_pad: tuple[int, int] = (1, 1),
    vision: bool = False,
) -> tuple[GpuMemory, ...]:
    """One GPU of each pipeline stage at `sequences` of `context_tokens`, first stage first."""
    stages, make = _stage_maker(arch, precision, kv_precision, layout, policy, capacity, label, context_tokens,
                                sequences, act_bytes, kept_16bit, expert_pad, vision)
    return tuple(make(i, st) for i, st in enumerate(stages))


def gpu_memory(
    arch: Arch,
    precision: PrecisionSpec,
    kv_precision: PrecisionSpec,
    layout: Layout,
    policy: MemoryPolicySpec,
    capacity: float,
    label: float,
    context_tokens: int,
    sequences: int,
    act_bytes: float = BYTES_16BIT,
    kept_16bit: frozenset[str] = frozenset(),
    expert_pad: tuple[int, int] = (1, 1),
    vision: bool = False,
) -> GpuMemory:
    """The binding GPU's memory at `sequences` of `context_tokens`: of the pipeline stages, the one whose KV pool
    holds the fewest sequences (vLLM sizes every stage's cache by the smallest), the most used on a tie.

    The stages are compared first to last, as `stage_memories` lists them, but a stage whose figures (weights, layer
    kinds, last or not) match one already compared while the binding stage has not changed since is passed over:
    it would compare the same way. A split into many stages of a few kinds of stage costs little more than one."""
    stages, make = _stage_maker(arch, precision, kv_precision, layout, policy, capacity, label, context_tokens,
                                sequences, act_bytes, kept_16bit, expert_pad, vision)
    best: GpuMemory | None = None
    changes = 0
    seen: dict[tuple[float, tuple[int, int, int], bool], int] = {}
    for i, st in enumerate(stages):
        key = (st.total, params.attention_kinds(arch, st.first_layer, st.layers), i == len(stages) - 1)
        if seen.get(key) == changes:
            continue
        m = make(i, st)
        if best is None or _binds_before(m, best):
            best = m
            changes += 1
        seen[key] = changes
    assert best is not None  # noqa: S101 - a layout has at least one stage
    return best


def _binds_before(a: GpuMemory, b: GpuMemory) -> bool:
    """Whether stage `a` limits the deployment before stage `b`: less KV room per sequence, or as much and more used."""
    ra, rb = a.kv_room / a.kv_per_sequence, b.kv_room / b.kv_per_sequence
    if abs(ra - rb) > 1e-12 * max(1.0, abs(rb)):
        return ra < rb
    return a.used > b.used


NO_KV_MEMORY = ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                "initializing the engine.")
"""vLLM's message when the KV memory is not positive (v1/core/kv_cache_utils.py, check_enough_kv_cache_memory)."""


def weights_oom_message(vendor: str) -> str | None:
    """PyTorch's error when the weights a GPU loads exceed its memory, before any engine sizes a KV cache (its caching
    allocator, c10/cuda/CUDACachingAllocator.cpp: "CUDA out of memory. Tried to allocate ...", "HIP" under ROCm), to
    its first sentence: the rest names sizes of the moment. None for a vendor whose runtime the site does not know."""
    runtime = {"NVIDIA": "CUDA", "AMD": "HIP"}.get(vendor)
    return None if runtime is None else f"torch.OutOfMemoryError: {runtime} out of memory."


def kv_refusal_message(available: float, needed: float, max_model_len: int, estimated_max_len: int) -> str:
    """vLLM's message when one sequence of `max_model_len` needs more KV memory than is available, word for word as
    v1/core/kv_cache_utils.py (commit bbf906a, `check_enough_kv_cache_memory`) formats it, GiB to two places."""
    gib = 2**30
    estimated = ("Based on the available memory, "
                 f"the estimated maximum model length is {estimated_max_len}." if estimated_max_len > 0 else "")
    return (f"To serve at least one request with the models's max seq len ({max_model_len}), "
            f"({needed / gib:.2f} GiB KV cache is needed, which is larger than the available KV cache memory "
            f"({available / gib:.2f} GiB). {estimated} Try increasing `gpu_memory_utilization` or decreasing "
            f"`max_model_len` when initializing the engine.")


# ----------------------------------------------------------------------------- the KV cache as the engine logs it


def kv_cache_groups(arch: Arch, hybrid: bool) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """vLLM's KV cache groups of the whole model, each (its layers' kind, its layers' block indices), as
    `get_kv_cache_groups` makes them (v1/core/kv_cache_utils.py): one group of every layer where every layer caches
    alike or the hybrid manager is off (its layers then all counted as full attention); otherwise the layers of each
    kind dealt into groups of `size` layers, `size` the fewest layers of a kind (the most, where no kind has half as
    many again as another), the i-th group of a kind taking every n-th of its layers from the i-th."""
    kinds: dict[str, list[int]] = {}
    for i in range(arch.layers):
        kinds.setdefault(params.layer_attention(arch, i) if hybrid else "full", []).append(i)
    if len(kinds) == 1:
        ((kind, layers),) = kinds.items()
        return ((kind, tuple(layers)),)
    fewest, most = min(len(v) for v in kinds.values()), max(len(v) for v in kinds.values())
    size = most if most < fewest * 1.5 else fewest
    out: list[tuple[str, tuple[int, ...]]] = []
    for kind, layers in kinds.items():
        n = -(-len(layers) // size)
        out.extend((kind, tuple(layers[i::n])) for i in range(n))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class KVCacheSize:
    """The KV cache one GPU's engine allocates, in the terms of its start-up log.

    vLLM (`get_kv_cache_configs` and `_report_kv_cache_config`, v1/core/kv_cache_utils.py): the available KV memory
    is cut into `blocks` blocks, each `block_tokens` tokens of every layer of one group of the largest group's size
    (`get_num_blocks`: available // page size // layers per group, the fewest of any pipeline stage); the groups
    share the blocks, so it logs `tokens` = blocks // groups x block_tokens as "GPU KV cache size", and blocks ÷
    the blocks one sequence of `max_model_len` tokens takes in all the groups as "Maximum concurrency". SGLang
    counts its pool in tokens (`profile_max_num_token`: available // the bytes of one token in every layer, a
    block of one token) and logs it as max_total_num_tokens. TensorRT-LLM's blocks hold every layer
    (`KVCacheManager`, cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp): it logs the pool's bytes and its tokens,
    blocks x tokens per block.

    The block is the policy's (vLLM's 16 tokens): vLLM raises it for an MLA attention backend (FlashMLA's 64 on
    Hopper, platforms/cuda.py), which moves the logged tokens by less than one such block; the site keeps 16."""

    engine: str
    blocks: int
    block_tokens: int
    groups: int
    blocks_per_sequence: int
    max_model_len: int
    bytes_per_block: float
    """Bytes one block takes on this GPU: `block_tokens` tokens of the layers of one group (every layer, where the
    layers are one group)."""
    available: float
    """The KV memory the blocks were cut from on the GPU that set their number (vLLM's "Available KV cache
    memory"), bytes."""

    @property
    def bytes(self) -> float:
        """The pool's bytes on this GPU: every block."""
        return self.blocks * self.bytes_per_block

    @property
    def tokens(self) -> int:
        """Tokens of every layer the cache holds: vLLM's "GPU KV cache size"."""
        return self.blocks // self.groups * self.block_tokens

    @property
    def max_concurrency(self) -> float:
        """Sequences of `max_model_len` tokens the blocks hold at once: vLLM's "Maximum concurrency"."""
        return self.blocks / self.blocks_per_sequence

    @property
    def log(self) -> tuple[str, ...]:
        """The lines the engine prints of it at start (vLLM's three, gpu_worker.py's and kv_cache_utils.py's; SGLang's
        field of its own line; TensorRT-LLM's KVCacheManager's); none for an engine whose line the site has not
        read."""
        if self.engine == "vLLM":
            return (f"Available KV cache memory: {self.available / 2**30:.2f} GiB",
                    f"GPU KV cache size: {self.tokens:,} tokens",
                    f"Maximum concurrency for {self.max_model_len:,} tokens per request: {self.max_concurrency:.2f}x")
        if self.engine == "SGLang":
            return (f"max_total_num_tokens={self.tokens}",)
        if self.engine == "TensorRT-LLM":
            return (f"[MemUsageChange] Allocated {self.bytes / 2**30:.2f} GiB for max tokens in paged KV cache "
                    f"({self.tokens}).",)
        return ()

    def as_dict(self) -> dict[str, object]:
        return {"engine": self.engine, "tokens": self.tokens, "blocks": self.blocks,
                "block_tokens": self.block_tokens, "groups": self.groups, "max_model_len": self.max_model_len,
                "gib": self.bytes / 2**30, "available_gib": self.available / 2**30,
                "max_concurrency": self.max_concurrency, "log": list(self.log)}


def kv_cache_size(arch: Arch, stages: tuple[GpuMemory, ...], tp: int, kv_bytes_per_elem: float,
                  policy: MemoryPolicySpec) -> KVCacheSize:
    """The KV cache of `stages` (one GPU of each pipeline stage, `stage_memories`) at their `max_model_len`, as the
    policy's engine sizes it (`KVCacheSize`): vLLM's groups projected onto each stage's layers, the largest
    projected group setting the stage's blocks, every stage taking the fewest blocks of any."""
    if not stages:
        raise ValueError("a deployment has at least one stage")
    groups = kv_cache_groups(arch, policy.hybrid_kv_cache)
    block = policy.kv_block_tokens
    page = block * kv_bytes_per_token_per_gpu(arch, 1, tp, kv_bytes_per_elem)  # one layer's block on one GPU
    max_len = stages[0].max_model_len
    blocks: int | None = None
    widest, room = 0, 0.0
    for m in stages:
        end = m.first_layer + m.layers
        size = max(sum(1 for i in layers if m.first_layer <= i < end) for _, layers in groups)
        n = 0 if m.kv_room <= 0 or size == 0 else int(m.kv_room // page // size)
        if blocks is None or n < blocks:
            blocks, widest, room = n, size, m.kv_room
    assert blocks is not None  # noqa: S101 - one stage at least, checked above
    per_seq = sum(_blocks_of_kind(kind, arch, max_len, policy) for kind, _ in groups)
    return KVCacheSize(engine=policy.engine, blocks=blocks, block_tokens=block, groups=len(groups),
                       blocks_per_sequence=per_seq, max_model_len=max_len, bytes_per_block=page * widest,
                       available=room)
