"""data/models.yaml: a model, its architecture as config.json gives it, and its checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from snippets.data.base import PositiveInt, Sources, Text, _read_only, _Strict, as_written, obeys
from snippets.data.quantities import (
    Count,
)
from snippets.engine.specs import Arch, arch_problems

ArchRecord = Annotated[Arch, as_written(Arch), obeys(arch_problems)]
"""A model's architecture: data/models.yaml validates straight into the engine's record (`snippets.engine.specs.Arch`,
whose fields and docstrings say what each means), under the engine's own rules (`arch_problems`), the ones the
calculator's config.json reader applies too."""


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
    architecture: ArchRecord
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
