"""data/models.yaml: a model, its architecture as config.json gives it, and its checkpoints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
)

from snippets.data.base import PositiveInt, Sources, Text, _read_only, as_written, obeys
from snippets.data.quantities import (
    Count,
    in_base,
)
from snippets.engine import specs
from snippets.engine.specs import Arch, ModelSpec, arch_problems

ArchRecord = Annotated[Arch, as_written(Arch), obeys(arch_problems)]
"""A model's architecture: data/models.yaml validates straight into the engine's record (`snippets.engine.specs.Arch`,
whose fields and docstrings say what each means), under the engine's own rules (`arch_problems`), the ones the
calculator's config.json reader applies too."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MTPAcceptance(specs.MTPAcceptance):
    """The engine's `MTPAcceptance` as data/models.yaml states it, with its note and sources."""

    note: Text
    sources: Sources


@dataclass(frozen=True, slots=True, kw_only=True)
class Model(ModelSpec):
    """A model as data/models.yaml states it: the engine's own record (`ModelSpec`, whose fields and docstrings say
    what each means), its id the entry's, its counts written with their unit (`{value: 8, unit: billion}`) and held as
    counts, its architecture the engine's `Arch` under the engine's rules; with what the model card states besides
    (the active parameters), which checkpoint's context the architecture gives, the notes and sources."""

    nominal_params: Annotated[float, in_base(Count)]
    stated_params: Annotated[float, in_base(Count)]
    stated_active_params: Annotated[float, in_base(Count)] | None = None
    """Parameters used per token, as stated; MoE models only."""
    stated_active_excludes_embedding: bool = False
    """The stated active count leaves out the token-embedding lookup (vocab x hidden), as OpenAI's gpt-oss
    model card does; tests then compare it with the computed active count less the embedding."""
    checkpoint_note: Text | None = None
    """Which tensors the checkpoint keeps in another precision, with the source in `sources`."""
    context_checkpoint: Annotated[str, Field(min_length=3)] | None = None
    """The released checkpoint whose config.json `architecture.context_length` is, where its checkpoints differ."""
    context_by_checkpoint: Annotated[Mapping[str, PositiveInt], AfterValidator(_read_only)] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """max_position_embeddings of each released checkpoint, where they differ (Llama 4: the base configs' 262,144,
    the Instruct configs' 10,485,760 and 1,048,576)."""
    keeps_16bit: Annotated[Mapping[str, frozenset[specs.KeptLinear]], AfterValidator(_read_only)] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    """By precision id, the linear layers that checkpoint leaves at 16 bits (`ModelSpec.keeps_16bit`); the note and
    source are the checkpoint's (`checkpoint_note`, `sources`)."""
    architecture: ArchRecord
    mtp_acceptance: MTPAcceptance | None = None
    sources: Sources


def _model_rules(m: Model) -> list[tuple[str, str]]:
    """A model's fields together: the active count for a mixture of experts only, a checkpoint's precision and dtype
    together, the MTP acceptance of a model with an MTP module and its rates in order, a checkpoint's context."""
    found: list[tuple[str, str]] = []
    if (m.stated_active_params is None) != (m.architecture.moe is None):
        found.append(("stated_active_params", "give it for a mixture-of-experts model, and only then"))
    if m.stated_active_excludes_embedding and m.stated_active_params is None:
        found.append(("stated_active_excludes_embedding", "only with stated_active_params"))
    if m.other_checkpoint_precisions and m.checkpoint_precision is None:
        found.append(("other_checkpoint_precisions", "give checkpoint_precision first"))
    if (m.dtype is None) != (m.checkpoint_precision is None):
        found.append(("dtype", "dtype and checkpoint_precision: a published checkpoint has both, a model without one "
                               "neither"))
    mtp = m.mtp_acceptance
    if mtp is not None:
        if m.architecture.mtp_layers < 1:
            found.append(("mtp_acceptance", "only for a model with a multi-token-prediction module (mtp_layers)"))
        if mtp.draft_tokens < 1:
            found.append(("mtp_acceptance.draft_tokens", f"{mtp.draft_tokens} is less than 1"))
        found += [(f"mtp_acceptance.{name}", "an acceptance rate: above 0, at most 1")
                  for name, rate in (("low", mtp.low), ("high", mtp.high)) if not 0 < rate <= 1]
        if mtp.low > mtp.high:
            found.append(("mtp_acceptance.low", "must not exceed high"))
    if (m.context_checkpoint is None) != (not m.context_by_checkpoint):
        found.append(("context_checkpoint", "context_checkpoint and context_by_checkpoint: give both or neither"))
    if m.context_checkpoint is not None:
        own = m.context_by_checkpoint.get(m.context_checkpoint)
        if own is None:
            found.append(("context_checkpoint", f"{m.context_checkpoint!r} is not in context_by_checkpoint"))
        elif own != m.architecture.context_length:
            found.append(("context_checkpoint", f"{m.context_checkpoint} gives {own:,} tokens, but "
                                                f"architecture.context_length is {m.architecture.context_length}"))
    return found


ModelEntry = Annotated[Model, as_written(Model), obeys(_model_rules)]
"""An entry of data/models.yaml: validated straight into the engine's record (`Model` is a `ModelSpec`)."""
