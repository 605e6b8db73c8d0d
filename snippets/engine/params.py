"""Parameter counts and KV-cache size from a model's architecture fields.

Counts every weight matrix, bias and norm scale of a decoder-only transformer: token (and learned
position) embeddings, attention (multi-head, grouped-query or multi-head latent, with Qwen3's
query and key norms and gpt-oss's per-head sinks), the MLP (gated SwiGLU with three matrices, or
plain with two), mixture-of-experts layers (routed and shared experts, router, leading dense
layers, Llama 4's interleaved dense layers), per-layer and final norms, and an untied LM head.
The KV cache counts sliding-window layers (gpt-oss) at no more than their window, and chunked-attention
layers (Llama 4) at no more than their chunk.
Pure functions of an architecture record (`snippets.engine.specs.Arch`, the one record of an architecture, which
data/models.yaml validates into); counts are plain integers. Standard library only.
"""

from __future__ import annotations

from snippets.engine.specs import Arch, required


def embedding_params(arch: Arch) -> int:
    """Token embeddings (vocab x hidden), plus learned position embeddings (context x hidden) if any."""
    n = arch.vocab_size * arch.hidden_size
    if arch.position_embeddings == "learned":
        n += required(arch.context_length, "context_length for learned positions") * arch.hidden_size
    return n


def lm_head_params(arch: Arch) -> int:
    """The output projection: vocab x hidden, or nothing when it shares the embedding matrix."""
    return 0 if arch.tied_embeddings else arch.vocab_size * arch.hidden_size


def norm_params(arch: Arch) -> int:
    """One norm over the hidden size: a scale per channel (RMSNorm), plus a bias (LayerNorm)."""
    return arch.hidden_size * (2 if arch.norm == "layernorm" else 1)


def attention_params(arch: Arch) -> int:
    """One layer's attention projections, with their biases.

    MHA/GQA: Q is hidden x (heads x head_dim), K and V hidden x (kv_heads x head_dim) each, O back.
    MLA: queries through a rank-`q_lora_rank` bottleneck (with its RMSNorm), keys and values
    through one `kv_lora_rank` latent (with its RMSNorm) plus a shared rotary key part, O from
    heads x v_head_dim.
    """
    h = arch.hidden_size
    if arch.mla is not None:
        m = arch.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank is None:
            q = h * arch.attention_heads * qk
        else:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * arch.attention_heads * qk
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
        kv += m.kv_lora_rank * arch.attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
        o = arch.attention_heads * m.v_head_dim * h
        return q + kv + o
    q_out = arch.attention_heads * arch.head_dim
    kv_out = arch.kv_heads * arch.head_dim
    n = h * q_out + 2 * h * kv_out + q_out * h
    if arch.qkv_bias or arch.linear_bias:
        n += q_out + 2 * kv_out
    if arch.linear_bias:
        n += h
    return n + qk_norm_params(arch) + sink_params(arch)


def qk_norm_params(arch: Arch) -> int:
    """Qwen3's RMSNorm over head_dim on queries and on keys, shared by the heads: 2 x head_dim a layer."""
    return 2 * arch.head_dim if arch.qk_norm else 0


def sink_params(arch: Arch) -> int:
    """gpt-oss's attention sinks: one learned logit per attention head a layer."""
    return arch.attention_heads if arch.attention_sinks else 0


def mlp_bias_params(arch: Arch, ffn_size: int) -> int:
    """The biases of one MLP (with `linear_bias`): gate and up (or up) of `ffn_size` each, down of hidden."""
    if not arch.linear_bias:
        return 0
    return (2 if arch.mlp == "gated" else 1) * ffn_size + arch.hidden_size


def mlp_params(arch: Arch, ffn_size: int) -> int:
    """One MLP of intermediate size `ffn_size`: gated has gate, up and down matrices, plain has up and down."""
    h = arch.hidden_size
    gated = arch.mlp == "gated"
    return (3 if gated else 2) * h * ffn_size + mlp_bias_params(arch, ffn_size)


def is_moe_layer(arch: Arch, layer: int) -> bool:
    """Whether block `layer` (0-based) routes to experts: past the leading dense layers, and every
    `layer_step`-th layer (Llama 4 Maverick, step 2: layers 1, 3, 5...; transformers' moe_layers)."""
    moe = arch.moe
    return moe is not None and layer >= moe.dense_layers and (layer + 1) % moe.layer_step == 0


def moe_layers(arch: Arch, first: int = 0, count: int | None = None) -> int:
    """How many of the blocks `first` .. `first + count - 1` (all, by default) route to experts: those i past the
    leading dense layers with (i + 1) a multiple of `layer_step`, counted without a walk over the layers."""
    moe = arch.moe
    end = arch.layers if count is None else first + count
    if moe is None:
        return 0
    lo = max(first, moe.dense_layers)
    if lo >= end:
        return 0
    return end // moe.layer_step - lo // moe.layer_step  # multiples of the step in lo + 1 .. end


def experts_touched(arch: Arch, tokens: float) -> float:
    """The expected share of a mixture-of-experts layer's routed experts that `tokens` tokens route to, each token
    to `active_experts` of `experts` chosen uniformly and independently: 1 − (1 − k/E)^tokens (DeepSeek-V3, k = 8
    of E = 256: one token touches 3.1%, 64 tokens 87%). 1 for a dense model: its one MLP is always read."""
    moe = arch.moe
    if moe is None:
        return 1.0
    return float(1 - (1 - moe.active_experts / moe.experts) ** tokens)  # typeshed: float ** float is Any


def ranks_reached(arch: Arch, ep: int) -> float:
    """The expected number of the `ep` expert-parallel ranks one token's experts sit on, each rank holding an equal
    share of the routed experts and the `active_experts` chosen uniformly and independently (as `experts_touched`):
    ep × (1 − (1 − 1/ep)^k). DeepSeek-V3 at EP8: 8 × (1 − 0.875^8) = 5.25 ranks for its 8 experts. It takes no
    account of group-limited routing (DeepSeek-V3's topk_group of 4 caps it at 4 where groups align with ranks), so
    it is an upper bound there."""
    moe = arch.moe
    if moe is None or ep <= 1:
        return 1.0
    return float(ep * (1 - (1 - 1 / ep) ** moe.active_experts))


def normal_dispatch_copies(arch: Arch, ep: int, local: int) -> tuple[float, float]:
    """The copies of one token DeepEP's normal kernels move, on average, over the node's fabric and over the network,
    for `ep` ranks of `local` per node (experts chosen as `ranks_reached` assumes): each other rank of its own node
    reached, (local − 1)(1 − (1 − 1/ep)^k), directly; each other node reached, (ep/local − 1)(1 − (1 − local/ep)^k),
    once over the network (internode.cu counts a token once per node), then forwarded over that node's fabric to
    the ranks reached there, (ep − local)(1 − (1 − 1/ep)^k), which by symmetry every GPU forwards for the others. On
    one node the first alone: `ranks_reached` × (ep − 1)/ep."""
    moe = arch.moe
    if moe is None or ep <= 1:
        return 0.0, 0.0
    g, k = min(local, ep), moe.active_experts
    rank_hit = 1 - (1 - 1 / ep) ** k
    node_hit = 1 - (1 - g / ep) ** k
    return (ep - 1) * rank_hit, (ep / g - 1) * node_hit  # over the fabric: (g - 1) reached direct + (ep - g) forwarded


def ffn_layer_params(arch: Arch, layer: int, *, active: bool = False) -> int:
    """The feed-forward part of layer `layer` (0-based): dense MLP, or routed and shared experts plus router.

    With `active`, only the experts one token uses count (top-k routed plus shared).
    """
    return _ffn_params(arch, is_moe_layer(arch, layer), active=active)


def _ffn_params(arch: Arch, moe_layer: bool, *, active: bool = False) -> int:
    """The feed-forward part of a dense block, or with `moe_layer` of one that routes to experts."""
    moe = arch.moe
    if moe is None or not moe_layer:
        return mlp_params(arch, arch.ffn_size)
    expert = mlp_params(arch, moe.expert_ffn_size)
    routed = moe.active_experts if active else moe.experts
    router = arch.hidden_size * moe.experts + (moe.experts if moe.router_bias else 0)
    return (routed + moe.shared_experts) * expert + router


def layer_norm_params(arch: Arch) -> int:
    """The two norms of one transformer block (before attention and before the feed-forward)."""
    return 2 * norm_params(arch)


def layer_params(arch: Arch, layer: int, *, active: bool = False) -> int:
    """One transformer block: attention, feed-forward and its two norms."""
    return attention_params(arch) + ffn_layer_params(arch, layer, active=active) + layer_norm_params(arch)


def total_params(arch: Arch, *, active: bool = False) -> int:
    """All parameters (or, with `active`, those one token uses): embeddings, blocks, final norm, LM head."""
    routed = moe_layers(arch)  # blocks of a kind hold the same: counted by kind, not walked
    shared = attention_params(arch) + layer_norm_params(arch)
    blocks = (arch.layers - routed) * (shared + _ffn_params(arch, False, active=active))
    if routed:
        blocks += routed * (shared + _ffn_params(arch, True, active=active))
    return embedding_params(arch) + blocks + norm_params(arch) + lm_head_params(arch)


def vision_params(arch: Arch) -> tuple[int, int]:
    """A multimodal checkpoint's image encoder and projector (`Arch.vision`) as (split, replicated): the parameters an
    engine splits across a TP group, and those every rank of it holds whole; (0, 0) for a text model.

    As vLLM builds Llama 4's (`mllama4.py`, 0.11.0 and 0.21.0 wheels): the patch embedding, q, k, v (with their
    biases), the MLPs' first matrices and biases, the adapter and the projector are column-parallel and the o and
    second MLP matrices row-parallel, split by TP; the class token, the position embeddings, the LayerNorms and the
    row-parallel layers' biases are whole on every rank."""
    v = arch.vision
    if v is None:
        return 0, 0
    h, f = v.hidden_size, v.ffn_size
    positions = (v.image_size // v.patch_size) ** 2 + 1  # the patches of a tile and the class token
    split_layer = 4 * h * h + 3 * h + 2 * h * f + f  # q, k, v, o; their q, k, v biases; fc1, fc2; fc1's bias
    whole_layer = 2 * 2 * h + h + h  # two LayerNorms (scale and bias); o's and fc2's biases
    folded = round(h / v.pixel_shuffle_ratio ** 2)  # a feature after the pixel shuffle
    split = (v.channels * v.patch_size ** 2 * h + v.layers * split_layer
             + folded * v.projector_input_dim + v.projector_input_dim * v.projector_output_dim
             + v.projector_output_dim * arch.hidden_size)
    whole = h + positions * h + 2 * 2 * h + v.layers * whole_layer  # class token, positions, pre and post LayerNorms
    return split, whole


def card_params(arch: Arch) -> int:
    """The count a model card's total compares with: the text model (`total_params`) and, where the checkpoint has
    one, its image encoder and projector (`vision_params`; Meta's Llama 4 totals include them)."""
    return total_params(arch) + sum(vision_params(arch))


def block_params(arch: Arch, *, active: bool = False) -> int:
    """The transformer blocks alone (with `active`, what one token uses): every prompt token is multiplied through
    them, where the embedding is a lookup and a prefill applies the final norm and the LM head to its last token only."""
    return total_params(arch, active=active) - embedding_params(arch) - norm_params(arch) - lm_head_params(arch)


def sliding_layers(arch: Arch, first: int = 0, count: int | None = None) -> int:
    """How many of the blocks `first` .. `first + count - 1` (all, by default) use the sliding window."""
    n = arch.layers - first if count is None else count
    if arch.sliding_window_layers == "all":
        return n
    if arch.sliding_window_layers == "alternate":  # the even layers: 0, 2, 4...
        return (first + n + 1) // 2 - (first + 1) // 2
    return 0


def chunked_layers(arch: Arch, first: int = 0, count: int | None = None) -> int:
    """How many of the blocks `first` .. `first + count - 1` (all, by default) attend within chunks: with chunked
    attention, every layer but each `global_layer_interval`-th (Llama 4: layers 3, 7, 11... are global)."""
    n = arch.layers - first if count is None else count
    every = arch.global_layer_interval
    if arch.attention_chunk_size is None or every is None:
        return 0
    end = first + n
    return n - (end // every - first // every)  # layers i in [first, end) with (i + 1) % every == 0 are global


def layer_attention(arch: Arch, layer: int) -> str:
    """"full", "sliding" or "chunked": what block `layer` (0-based) attends to, and so what of a sequence it caches."""
    if sliding_layers(arch, layer, 1):
        return "sliding"
    if chunked_layers(arch, layer, 1):
        return "chunked"
    return "full"


def attention_kinds(arch: Arch, first: int, count: int) -> tuple[int, int, int]:
    """How many of the blocks `first` .. `first + count - 1` are (full, sliding, chunked) as `layer_attention` calls
    them (a layer both sliding and chunked is sliding), counted without a walk over the layers."""
    sliding = sliding_layers(arch, first, count)
    every = arch.global_layer_interval
    if arch.attention_chunk_size is None or every is None or arch.sliding_window_layers == "all":
        chunked = 0 if arch.sliding_window_layers == "all" else chunked_layers(arch, first, count)
    elif arch.sliding_window_layers == "alternate":  # chunked among the odd layers i: (i + 1) even, not a multiple of every
        end = first + count
        odd = end // 2 - first // 2
        step = every if every % 2 == 0 else 2 * every  # the even multiples of every
        chunked = odd - (end // step - first // step)
    else:
        chunked = chunked_layers(arch, first, count)
    return count - sliding - chunked, sliding, chunked


def cached_layers(arch: Arch, first: int, count: int, context_tokens: float | None) -> float:
    """Blocks `first` .. `first + count - 1`, counted as full-context layers: a sliding-window layer holds at
    most `sliding_window` of the `context_tokens` tokens, a chunked-attention layer at most `attention_chunk_size`,
    so each counts min(window, context) / context. Without `context_tokens` every layer counts whole (the cache at
    unbounded context is an upper bound)."""
    window, chunk = arch.sliding_window, arch.attention_chunk_size
    if context_tokens is None or (window is None and chunk is None):
        return float(count)
    if context_tokens <= 0:
        raise ValueError("context_tokens must be positive")
    out = float(count)
    if window is not None:
        slid = sliding_layers(arch, first, count)
        out -= slid * (1 - min(window, context_tokens) / context_tokens)
    if chunk is not None:
        chunked = chunked_layers(arch, first, count)
        out -= chunked * (1 - min(chunk, context_tokens) / context_tokens)
    return out


def kv_elements_per_token(arch: Arch, *, context_tokens: float | None = None) -> float:
    """Cached values per token over all layers, averaged over a context of `context_tokens` (sliding-window
    layers hold only their window, chunked-attention layers their chunk; without `context_tokens`, every layer
    holds every token).

    MHA/GQA: a key and a value per KV head per layer, 2 x layers x kv_heads x head_dim.
    MLA: one latent plus the shared rotary key per layer, layers x (kv_lora_rank + qk_rope_head_dim).
    """
    if arch.mla is not None:
        return arch.layers * (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim)
    return 2 * cached_layers(arch, 0, arch.layers, context_tokens) * arch.kv_heads * arch.head_dim


def kv_bytes_per_token(arch: Arch, bytes_per_element: float, *, context_tokens: float | None = None) -> float:
    """KV-cache bytes one token occupies at `bytes_per_element` (FP16/BF16: 2, FP8: 1), at `context_tokens`
    of context where the model has sliding-window layers."""
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be positive")
    return kv_elements_per_token(arch, context_tokens=context_tokens) * bytes_per_element


def relative_error(computed: float, stated: float) -> float:
    """(computed - stated) / stated: how far a recomputed count lies from the stated one."""
    if stated <= 0:
        raise ValueError("stated must be positive")
    return (computed - stated) / stated
