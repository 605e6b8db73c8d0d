"""data/models.yaml: a model, its architecture as config.json gives it, and its checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from snippets.data.base import PositiveInt, Sources, Text, _read_only, _Strict
from snippets.data.quantities import (
    Count,
)
from snippets.engine.specs import Arch, arch_problems


class MLA(_Strict):
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values cached as one compressed latent."""

    q_lora_rank: PositiveInt | None = None
    """Rank of the query down-projection; None when queries are projected directly."""
    kv_lora_rank: PositiveInt
    """Width of the cached key-value latent."""
    qk_nope_head_dim: PositiveInt
    qk_rope_head_dim: PositiveInt
    """Width of the rotary key part, shared by all heads and cached beside the latent."""
    v_head_dim: PositiveInt


class MoE(_Strict):
    """Mixture of experts: which layers route, to how many experts, of what size."""

    experts: PositiveInt
    """Routed experts per MoE layer (n_routed_experts / num_local_experts)."""
    active_experts: PositiveInt
    """Routed experts each token uses (num_experts_per_tok)."""
    shared_experts: Annotated[int, Field(ge=0, strict=True)] = 0
    """Experts every token uses (n_shared_experts)."""
    expert_ffn_size: PositiveInt
    """Intermediate size of one expert (moe_intermediate_size; Mixtral: intermediate_size)."""
    dense_layers: Annotated[int, Field(ge=0, strict=True)] = 0
    """Leading layers with a dense MLP of `ffn_size` instead (first_k_dense_replace)."""
    router_bias: bool = False
    """A per-expert bias in the router (DeepSeek-V3's e_score_correction_bias, gpt-oss's router bias)."""
    layer_step: PositiveInt = 1
    """Every `layer_step`-th layer routes, the others have a dense MLP of `ffn_size` (Llama 4's
    interleave_moe_layer_step: 2 in Maverick, layers 1, 3, 5... route; 1 means every layer)."""


class Architecture(_Strict):
    """Fields of the model's config.json, renamed plainly. Optional fields default to a Llama-style model."""

    layers: PositiveInt
    hidden_size: PositiveInt
    attention_heads: PositiveInt
    kv_heads: PositiveInt
    head_dim: PositiveInt
    ffn_size: PositiveInt
    """Dense MLP intermediate size (for an MoE model: of its dense layers)."""
    vocab_size: PositiveInt
    tied_embeddings: bool
    mlp: Literal["gated", "plain"] = "gated"
    """gated: SwiGLU, three matrices (gate, up, down); plain: two (up, down), as GPT-3's GELU MLP."""
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    """RMSNorm has a scale per channel; LayerNorm a scale and a bias."""
    qkv_bias: bool = False
    """Biases on the query, key and value projections only (Qwen2.5)."""
    linear_bias: bool = False
    """Biases on every linear layer (GPT-3)."""
    position_embeddings: Literal["rope", "learned"] = "rope"
    context_length: PositiveInt | None = None
    """max_position_embeddings; required with learned position embeddings, which it sizes."""
    qk_norm: bool = False
    """An RMSNorm over head_dim on queries and on keys in every layer (Qwen3's q_norm, k_norm): 2 x head_dim
    scales a layer. Llama 4's use_qk_norm is a weightless L2 norm and is not this."""
    attention_sinks: bool = False
    """A learned sink logit per attention head in every layer (gpt-oss's sinks)."""
    sliding_window: PositiveInt | None = None
    """Tokens a sliding-window layer attends to, and so caches (gpt-oss: 128)."""
    sliding_window_layers: Literal["alternate", "all"] | None = None
    """Which layers use the window: "alternate" (layers 0, 2, 4... as gpt-oss's layer_types begins with
    sliding_attention), "all"; None with no window."""
    attention_chunk_size: PositiveInt | None = None
    """Chunked local attention (Llama 4's attention_chunk_size): a chunked layer attends only within chunks of this
    many tokens, and so caches at most a chunk of a sequence."""
    global_layer_interval: Annotated[int, Field(ge=2, strict=True)] | None = None
    """With chunked attention: every n-th layer (n-1, 2n-1, ... 0-based) attends over the whole context, the others
    within chunks (Llama 4: its config.json's no_rope_layers is empty, so transformers' default applies, a NoPE
    layer every no_rope_layer_interval = 4 layers; vLLM gives the RoPE layers chunked attention)."""
    mla: MLA | None = None
    moe: MoE | None = None
    mtp_layers: Annotated[int, Field(ge=0, strict=True)] = 0
    """Multi-token-prediction modules after the last block (DeepSeek-V3/R1's num_nextn_predict_layers: 1): each one
    more block of the model's own structure, two RMSNorms and a projection of 2 x hidden_size to hidden_size, sharing
    the embedding and the LM head. Left out of the parameter count (the model card's 671B leaves it out); engines run
    it as the draft of speculative decoding (vLLM's and SGLang's DeepSeek MTP)."""

    @model_validator(mode="after")
    def _consistent(self) -> Architecture:
        """The engine's rules for an architecture (`snippets.engine.specs.arch_problems`): the calculator's config.json
        reader applies the same ones."""
        found = arch_problems(Arch.from_dict(self.model_dump()))
        if found:
            raise ValueError("; ".join(f"{field}: {why}" for field, why in found))
        return self


class MTPAcceptance(_Strict):
    """How often a model's own multi-token-prediction module guesses right: the share of its drafted tokens the model
    accepts, as the developer measured it (a range where they give one)."""

    draft_tokens: PositiveInt
    """Tokens the module drafts per step in the measurement (DeepSeek-V3: 1, the second token)."""
    low: Annotated[float, Field(gt=0, le=1, strict=True)]
    high: Annotated[float, Field(gt=0, le=1, strict=True)]
    note: Text
    sources: Sources

    @model_validator(mode="after")
    def _ordered(self) -> MTPAcceptance:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


class Model(_Strict):
    name: str
    nominal_params: Count
    """The size in the model's name (405B), or its headline total where the name has none; the site's
    worked figures use it."""
    stated_params: Count
    """The total parameter count the model card or paper states; tests recompute it from `architecture`."""
    stated_active_params: Count | None = None
    """Parameters used per token, as stated; MoE models only."""
    stated_active_excludes_embedding: bool = False
    """The stated active count leaves out the token-embedding lookup (vocab x hidden), as OpenAI's gpt-oss
    model card does; tests then compare it with the computed active count less the embedding."""
    dtype: str | None = None
    """Id in precisions.yaml of config.json's torch_dtype (bf16, fp16): the data type vLLM computes activations in
    (--dtype auto) and, with --kv-cache-dtype auto, stores the KV cache in. None for a model with no checkpoint."""
    checkpoint_precision: str | None = None
    """Id in precisions.yaml of the precision the developer's main checkpoint stores its weights in
    (DeepSeek-V3: fp8-block; gpt-oss: mxfp4, for its expert weights)."""
    other_checkpoint_precisions: tuple[str, ...] = ()
    """Precisions of further checkpoints the developer released (Llama 4 Maverick: fp8 beside bf16)."""
    checkpoint_note: Text | None = None
    """Which tensors the checkpoint keeps in another precision, with the source in `sources`."""
    context_checkpoint: Annotated[str, Field(min_length=3)] | None = None
    """The released checkpoint whose config.json `architecture.context_length` is, where its checkpoints differ."""
    context_by_checkpoint: Annotated[Mapping[str, PositiveInt], AfterValidator(_read_only)] = Field(
        default_factory=lambda: MappingProxyType({}))
    """max_position_embeddings of each released checkpoint, where they differ (Llama 4: the base configs' 262,144,
    the Instruct configs' 10,485,760 and 1,048,576)."""
    architecture: Architecture
    mtp_acceptance: MTPAcceptance | None = None
    """Where the model has a multi-token-prediction module (`architecture.mtp_layers`) and its developer measured it."""
    sources: Sources

    @model_validator(mode="after")
    def _active_only_for_moe(self) -> Model:
        if (self.stated_active_params is None) != (self.architecture.moe is None):
            raise ValueError("stated_active_params: give it for a mixture-of-experts model, and only then")
        if self.stated_active_excludes_embedding and self.stated_active_params is None:
            raise ValueError("stated_active_excludes_embedding: only with stated_active_params")
        if self.other_checkpoint_precisions and self.checkpoint_precision is None:
            raise ValueError("other_checkpoint_precisions: give checkpoint_precision first")
        if (self.dtype is None) != (self.checkpoint_precision is None):
            raise ValueError("dtype and checkpoint_precision: a published checkpoint has both, a model without one neither")
        if self.mtp_acceptance is not None and self.architecture.mtp_layers < 1:
            raise ValueError("mtp_acceptance: only for a model with a multi-token-prediction module (mtp_layers)")
        if (self.context_checkpoint is None) != (not self.context_by_checkpoint):
            raise ValueError("context_checkpoint and context_by_checkpoint: give both or neither")
        if self.context_checkpoint is not None:
            own = self.context_by_checkpoint.get(self.context_checkpoint)
            if own is None:
                raise ValueError(f"context_checkpoint: {self.context_checkpoint!r} is not in context_by_checkpoint")
            if own != self.architecture.context_length:
                raise ValueError(f"context_checkpoint: {self.context_checkpoint} gives {own:,} tokens, but "
                                 f"architecture.context_length is {self.architecture.context_length}")
        return self
