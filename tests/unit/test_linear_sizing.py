"""Sizing in time linear in the layer count (issue 27): a stage's weights and KV blocks counted by layer kind.

`memory.stage_weights` and `memory.kv_bytes_per_sequence` walked every layer of every stage, so `deployment.choose`
(which tries one pipeline split after another) was quadratic in the layers. They now count a stage's layers by kind
(`params.moe_layers`, `params.attention_kinds`) and multiply each kind's figure once. The old walks are kept here,
word for word, as the oracle: on every model of data/, every precision and a range of layouts, the new figures are
equal to the old ones, exactly (not approximately), and the counts equal a count layer by layer. `gpu_memory`
compares only the stages that could bind (a stage like one already compared, with the binding stage unchanged since,
is passed over) and returns the stage a comparison of all of them returns.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from snippets.data import load
from snippets.data.export import engine_catalog
from snippets.engine import params
from snippets.engine.layout import Layout, layout_problems, pp_partition, tp_degrees
from snippets.engine.memory import (
    GpuMemory,
    StageWeights,
    _binds_before,
    _kept_bytes,
    gpu_memory,
    kv_bytes_per_sequence,
    kv_bytes_per_token_per_gpu,
    layer_share,
    stage_memories,
    stage_weights,
)
from snippets.engine.specs import Arch, EngineCatalog, MemoryPolicySpec, MoE, PrecisionSpec


@pytest.fixture(scope="module")
def eng() -> EngineCatalog:
    return engine_catalog(load())


def walked_stage_weights(arch: Arch, precision: PrecisionSpec, layout: Layout) -> tuple[StageWeights, ...]:
    """memory.stage_weights as it was at 884c651: every layer of every stage, one after another."""
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
                edge += vocab_part / layout.tp * emb_b
        out.append(StageWeights(n, body, edge, expert, start - n))
    return tuple(out)


def walked_kv_bytes_per_sequence(arch: Arch, first_layer: int, layers: int, tp: int, kv_bytes_per_elem: float,
                                 tokens: int, policy: MemoryPolicySpec) -> float:
    """memory.kv_bytes_per_sequence as it was at 884c651: each layer's blocks, one layer after another."""
    block, batched = policy.kv_block_tokens, policy.max_num_batched_tokens
    per_token = kv_bytes_per_token_per_gpu(arch, 1, tp, kv_bytes_per_elem)
    full = -(-tokens // block)
    if not policy.hybrid_kv_cache or (arch.sliding_window is None and arch.attention_chunk_size is None):
        return layers * full * block * per_token
    blocks = 0
    for layer in range(first_layer, first_layer + layers):
        kind = params.layer_attention(arch, layer)
        if kind == "sliding":
            window = arch.sliding_window or tokens
            blocks += -(-min(window - 1 + batched, tokens) // block) + 1
        elif kind == "chunked":
            chunk = arch.attention_chunk_size or tokens
            blocks += -(-min(chunk + batched, tokens) // block)
        else:
            blocks += full
    return blocks * block * per_token


def _layouts(arch: Arch) -> list[Layout]:
    out = []
    for tp in tp_degrees(arch, 8):
        for pp in sorted({1, 2, 3, 4, 5, 7, 8, 13, arch.layers // 2 or 1, arch.layers - 1 or 1, arch.layers}):
            out.append(Layout(tp, pp))
            if arch.moe is not None and tp > 1:
                out.append(Layout(tp, pp, ep=tp))
    return [lay for lay in out if not layout_problems(arch, lay)]


def test_stage_weights_equal_the_walk_over_every_layer_for_every_model_and_precision(eng: EngineCatalog) -> None:
    checked = 0
    for model in eng.models.values():
        for precision in eng.precisions.values():
            arch = model.architecture
            for lay in _layouts(arch):
                assert stage_weights(arch, precision, lay) == walked_stage_weights(arch, precision, lay), (
                    model.id, precision.id, lay.label)
                checked += 1
    assert checked > 3000


def test_kv_blocks_equal_the_walk_over_every_layer(eng: EngineCatalog) -> None:
    """Sliding-window (gpt-oss), chunked (Llama 4) and full-attention models, with the hybrid KV cache manager and
    without, at contexts below and above the windows, for every stage of several splits."""
    base = next(iter(eng.memory_policies.values())).for_chip(eng.chips["h100-sxm"])
    policies = [base, replace(base, hybrid_kv_cache=not base.hybrid_kv_cache)]
    checked = 0
    for model in eng.models.values():
        arch = model.architecture
        for pol in policies:
            for pp in sorted({1, 2, 3, 7, arch.layers}):
                first = 0
                for n in pp_partition(arch.layers, pp):
                    for tokens in (1, 100, 129, 4096, 8192, 131072):
                        for tp in (1, 8):
                            got = kv_bytes_per_sequence(arch, first, n, tp, 1.0, tokens, pol)
                            assert got == walked_kv_bytes_per_sequence(arch, first, n, tp, 1.0, tokens, pol), (
                                model.id, pp, first, n, tokens)
                            checked += 1
                    first += n
    assert checked > 1000


def _patterns(eng: EngineCatalog) -> list[Arch]:
    """Every model of data/, and synthetic mixes of sliding windows (all, alternate), chunked attention (every
    odd and even interval) and expert layers (leading dense layers, every second or third layer)."""
    archs: list[Arch] = [m.architecture for m in eng.models.values()]
    base = eng.models["llama-3.1-8b"].architecture
    for swl in (None, "all", "alternate"):
        for chunk, every in ((None, None), (8192, 4), (8192, 3), (8192, 1), (8192, 2)):
            for moe in (None, MoE(experts=8, active_experts=2, expert_ffn_size=1024, dense_layers=3, layer_step=2),
                        MoE(experts=8, active_experts=2, expert_ffn_size=1024, dense_layers=0, layer_step=3)):
                archs.append(replace(base, layers=37, sliding_window=None if swl is None else 128,
                                     sliding_window_layers=swl, attention_chunk_size=chunk,
                                     global_layer_interval=every, moe=moe))
    return archs


def test_layer_kinds_counted_equal_the_kinds_layer_by_layer(eng: EngineCatalog) -> None:
    for arch in _patterns(eng):
        kinds = [params.layer_attention(arch, i) for i in range(arch.layers)]
        moe = [params.is_moe_layer(arch, i) for i in range(arch.layers)]
        for first in range(arch.layers):
            for count in range(arch.layers - first + 1):
                window = kinds[first:first + count]
                assert params.attention_kinds(arch, first, count) == (
                    window.count("full"), window.count("sliding"), window.count("chunked")), (arch, first, count)
                assert params.moe_layers(arch, first, count) == sum(moe[first:first + count])
        assert params.moe_layers(arch) == sum(moe)


def test_a_thousand_layers_are_sized_without_a_walk_per_split(eng: EngineCatalog) -> None:
    """A pasted config of 1,000 layers split into 1,000 stages: every stage's weights and KV bytes as the walk
    finds them (the walk is quadratic over the splits `choose` tries; the counts are not)."""
    arch = replace(eng.models["gpt-oss-120b"].architecture, layers=1000)
    prec = eng.precisions["fp8"]
    for pp in (1, 3, 999, 1000):
        lay = Layout(1, pp)
        assert stage_weights(arch, prec, lay) == walked_stage_weights(arch, prec, lay)


def folded_gpu_memory(stages: tuple[GpuMemory, ...]) -> GpuMemory:
    """memory.gpu_memory as it was at 884c651: every stage compared in turn."""
    best: GpuMemory | None = None
    for m in stages:
        if best is None or _binds_before(m, best):
            best = m
    assert best is not None
    return best


def test_the_binding_stage_is_the_one_comparing_every_stage_finds(eng: EngineCatalog) -> None:
    """`gpu_memory` passes over a stage that matches one already compared: the stage it returns (its first layer
    too) is the one a comparison of every stage in turn returns, at one sequence and at many."""
    pol = next(iter(eng.memory_policies.values()))
    checked = 0
    for model in eng.models.values():
        arch = replace(model.architecture, layers=3 * model.architecture.layers)  # more stages of each kind
        for chip in ("h100-sxm", "l4"):
            c = eng.chips[chip]
            p = pol.for_chip(c)
            for lay in _layouts(arch):
                for seqs in (1, 64):
                    args = (arch, eng.precisions["fp8"], eng.precisions["bf16"], lay, p, c.capacity_bytes,
                            c.label_bytes, 8192, seqs)
                    assert gpu_memory(*args) == folded_gpu_memory(stage_memories(*args)), (model.id, lay.label)
                    checked += 1
    assert checked > 1000


def test_parameters_counted_by_layer_kind_equal_the_sum_layer_by_layer(eng: EngineCatalog) -> None:
    for arch in _patterns(eng):
        for active in (False, True):
            walked = sum(params.layer_params(arch, i, active=active) for i in range(arch.layers))
            edges = (params.embedding_params(arch) + params.norm_params(arch) + params.lm_head_params(arch))
            assert params.total_params(arch, active=active) == walked + edges
