"""snippets.engine.params against counts worked out by hand and the counts models state."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from snippets.data import ArchRecord
from snippets.data.schema import SCHEMAS
from snippets.engine.params import (
    attention_params,
    block_params,
    card_params,
    experts_touched,
    kv_bytes_per_token,
    layer_norm_params,
    layer_params,
    mlp_params,
    relative_error,
    total_params,
)
from snippets.engine.specs import Arch

TOLERANCE = 0.02
"""A recomputed count may differ from the stated one by 2 %: model cards round (Llama 2 "70B" is 69.0B)."""


def test_every_model_matches_its_stated_count(catalog) -> None:
    assert len(catalog.models) >= 8
    for model_id, m in catalog.models.items():
        computed = card_params(m.architecture)  # the text model and, where there is one, the image encoder
        assert abs(relative_error(computed, m.stated_params)) <= TOLERANCE, model_id
    # Scout's 109B: the text model alone is 1.1 % short of it; with its image encoder, 0.3 %
    scout = catalog.models["llama-4-scout"]
    assert relative_error(total_params(scout.architecture), scout.stated_params) == pytest.approx(-0.0113, abs=1e-4)
    assert card_params(scout.architecture) - total_params(scout.architecture) == 871_932_416
    assert relative_error(card_params(scout.architecture), scout.stated_params) == pytest.approx(-0.0033, abs=1e-4)


def test_moe_active_counts_match_stated(catalog) -> None:
    moe = {k: m for k, m in catalog.models.items() if m.architecture.moe is not None}
    assert set(moe) == {"mixtral-8x7b", "deepseek-v3", "deepseek-r1", "llama-4-scout", "llama-4-maverick",
                        "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b", "gpt-oss-20b"}
    for model_id, m in moe.items():
        assert m.stated_active_params is not None
        active = total_params(m.architecture, active=True)
        if m.stated_active_excludes_embedding:  # gpt-oss's card counts the unembedding, not the embedding lookup
            active -= m.architecture.vocab_size * m.architecture.hidden_size
        assert abs(relative_error(active, m.stated_active_params)) <= TOLERANCE, model_id
        assert active < total_params(m.architecture) / 3


def test_llama_8b_by_hand(catalog) -> None:
    a = catalog.models["llama-3.1-8b"].architecture
    # attention: Q and O 4096x4096 each, K and V 4096x1024 each
    assert attention_params(a) == 2 * 4096 * 4096 + 2 * 4096 * 1024 == 41_943_040
    # gated MLP: 3 x 4096 x 14336
    assert mlp_params(a, a.ffn_size) == 176_160_768
    # per layer 41,943,040 + 176,160,768 + 2 x 4096 norms = 218,112,000; x 32 = 6,979,584,000
    assert layer_norm_params(a) == 2 * 4096
    assert layer_params(a, 0) == 218_112_000
    # embeddings and untied head 2 x 128256 x 4096 = 1,050,673,152; final norm 4096
    assert total_params(a) == 6_979_584_000 + 1_050_673_152 + 4096 == 8_030_261_248
    # what every prompt token multiplies through: the 32 blocks, without the lookup, the final norm or the head
    assert block_params(a) == block_params(a, active=True) == 6_979_584_000


def test_a_moe_models_active_blocks_leave_out_the_idle_experts_and_the_vocabulary(catalog) -> None:
    a = catalog.models["qwen3-235b-a22b"].architecture
    vocab = 2 * 151_936 * 4096  # the lookup and the untied head
    assert block_params(a, active=True) == total_params(a, active=True) - vocab - 4096 == 20_946_099_712
    assert block_params(a) == total_params(a) - vocab - 4096


def test_gpt3_by_hand(catalog) -> None:
    a = catalog.models["gpt-3-175b"].architecture
    d = 12288
    # per layer: attention 4d^2 + 4d (biases), plain MLP 8d^2 + 5d, two LayerNorms 4d -> 12d^2 + 13d
    per_layer = 12 * d * d + 13 * d
    assert per_layer == 1_812_099_072 == layer_params(a, 0)
    assert layer_norm_params(a) == 4 * d  # LayerNorm: a scale and a bias each
    # tied embeddings 50257 x d, learned positions 2048 x d, final LayerNorm 2d
    assert total_params(a) == 96 * per_layer + 50257 * d + 2048 * d + 2 * d == 174_604_259_328


def test_kv_bytes_per_token_by_hand(catalog) -> None:
    bf16 = 2
    # GQA: 2 (K and V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 B = 320 KiB
    assert kv_bytes_per_token(catalog.models["llama-3.1-70b"].architecture, bf16) == 327_680
    # MLA: 61 layers x (512 latent + 64 rotary key) x 2 bytes = 70,272 B
    assert kv_bytes_per_token(catalog.models["deepseek-v3"].architecture, bf16) == 70_272
    # MHA: 2 x 96 layers x 96 heads x 128 x 2 bytes = 4,718,592 B
    assert kv_bytes_per_token(catalog.models["gpt-3-175b"].architecture, bf16) == 4_718_592
    # FP8 halves it
    assert kv_bytes_per_token(catalog.models["llama-3.1-70b"].architecture, 1) == 163_840


def test_gpt_oss_120b_by_hand(catalog) -> None:
    a = catalog.models["gpt-oss-120b"].architecture
    h = 2880
    # attention: Q and O 2880 x 4096, K and V 2880 x 512; biases 4096 + 2 x 512 + 2880; 64 sinks
    assert attention_params(a) == 2 * h * 4096 + 2 * h * 512 + 4096 + 1024 + 2880 + 64 == 26_550_144
    # an expert: gate, up, down 2880 x 2880 with biases 2 x 2880 + 2880 = 24,891,840
    assert mlp_params(a, 2880) == 3 * h * h + 3 * h == 24_891_840
    # a layer: 128 experts, router 2880 x 128 + 128 bias, two norms
    per_layer = 26_550_144 + 128 * 24_891_840 + h * 128 + 128 + 2 * h
    assert layer_params(a, 0) == per_layer == 3_213_080_192
    # 36 layers, embedding and untied head 2 x 201,088 x 2880, final norm: the card's 116.83B
    assert total_params(a) == 36 * per_layer + 2 * 201_088 * h + h == 116_829_156_672
    # active: 4 experts a token; less the embedding lookup 579,133,440: the card's 5.13B
    active = total_params(a, active=True) - 201_088 * h
    assert active == 36 * (26_550_144 + 4 * 24_891_840 + h * 128 + 128 + 2 * h) + 201_088 * h + h == 5_132_849_472


def test_qwen3_qk_norm_adds_two_head_dims(catalog) -> None:
    a = catalog.models["qwen3-32b"].architecture
    plain = replace(a, qk_norm=False)
    assert attention_params(a) - attention_params(plain) == 2 * 128
    # 64 layers of (attention 94,371,840 + 256, MLP 393,216,000, norms 10,240), embedding and head, final norm
    assert total_params(a) == 64 * (94_371_840 + 256 + 393_216_000 + 10_240) + 2 * 151_936 * 5120 + 5120


def test_maverick_routes_every_other_layer(catalog) -> None:
    from snippets.engine.params import ffn_layer_params, is_moe_layer, moe_layers

    a = catalog.models["llama-4-maverick"].architecture
    assert not is_moe_layer(a, 0) and is_moe_layer(a, 1) and moe_layers(a) == 24
    # dense layer: 3 x 5120 x 16384; MoE layer: 128 routed + 1 shared experts of 3 x 5120 x 8192, router 5120 x 128
    assert ffn_layer_params(a, 0) == 251_658_240
    assert ffn_layer_params(a, 1) == 129 * 125_829_120 + 655_360 == 16_232_611_840
    assert ffn_layer_params(a, 1, active=True) == 2 * 125_829_120 + 655_360
    scout = catalog.models["llama-4-scout"].architecture
    assert moe_layers(scout) == 48


def test_sliding_window_caps_the_kv_cache(catalog) -> None:
    a = catalog.models["gpt-oss-120b"].architecture
    # per layer and token at BF16: 2 x 8 KV heads x 64 x 2 bytes = 2048 B; 36 layers, 18 of them a 128-token window
    assert kv_bytes_per_token(a, 2) == 36 * 2048 == 73_728
    # at 8,192 tokens: 18 full layers + 18 x 128/8192 of a layer
    assert kv_bytes_per_token(a, 2, context_tokens=8192) == 18 * 2048 + 18 * 2048 * 128 / 8192 == 37_440
    # within the window every layer holds every token
    assert kv_bytes_per_token(a, 2, context_tokens=100) == 73_728
    # a dense model without a window is unchanged by the context
    l70 = catalog.models["llama-3.1-70b"].architecture
    assert kv_bytes_per_token(l70, 2, context_tokens=8192) == kv_bytes_per_token(l70, 2) == 327_680


def test_qkv_bias_adds_only_qkv_widths(catalog) -> None:
    a = catalog.models["qwen2.5-72b"].architecture
    plain = replace(a, qkv_bias=False)
    # Q 64 x 128 + K and V 8 x 128 each = 10,240 biases per layer
    assert attention_params(a) - attention_params(plain) == 10_240


def test_experts_touched_by_hand(catalog) -> None:
    # Mixtral 8x7B routes each token to 2 of 8 experts: an expert is missed by one token with probability 3/4
    mixtral = catalog.models["mixtral-8x7b"].architecture
    assert experts_touched(mixtral, 0) == 0.0
    assert experts_touched(mixtral, 1) == 0.25
    assert experts_touched(mixtral, 2) == 1 - 0.75**2 == 0.4375
    assert experts_touched(mixtral, 4) == 1 - 81 / 256  # 0.68359375, exact in binary
    # DeepSeek-V3, 8 of 256: one token touches 1/32 of them, 64 tokens 1 - (31/32)^64 = 86.9%
    v3 = catalog.models["deepseek-v3"].architecture
    assert experts_touched(v3, 1) == 1 / 32
    assert experts_touched(v3, 64) == pytest.approx(0.868916, abs=1e-6)
    assert experts_touched(v3, 1024) == pytest.approx(1.0, abs=1e-12)
    # a dense model reads its one MLP whatever the batch
    assert experts_touched(catalog.models["llama-3.1-70b"].architecture, 1) == 1.0


ARCH = TypeAdapter(ArchRecord)


def test_errors() -> None:
    arch = ARCH.validate_python({"layers": 2, "hidden_size": 8, "attention_heads": 2, "kv_heads": 1, "head_dim": 4,
                                 "ffn_size": 16, "vocab_size": 10, "tied_embeddings": True})
    with pytest.raises(ValueError):
        kv_bytes_per_token(arch, 0)
    with pytest.raises(ValueError):
        relative_error(1.0, 0.0)
    with pytest.raises(ValidationError, match=r"context_length\n  Value error, required with learned"):
        ARCH.validate_python({**asdict(arch), "position_embeddings": "learned"})
    with pytest.raises(ValidationError, match="give both or neither"):
        ARCH.validate_python({**asdict(arch), "sliding_window": 4})
    with pytest.raises(ValidationError, match=r"moe.layer_step\n  Value error, 3 is more than the 2 layers"):
        ARCH.validate_python({**asdict(arch), "moe": {"experts": 2, "active_experts": 1, "expert_ffn_size": 4,
                                                      "layer_step": 3}})
    with pytest.raises(ValidationError, match=r"kv_heads\n  Value error, 3 does not divide"):
        ARCH.validate_python({**asdict(arch), "kv_heads": 3, "attention_heads": 2})
    with pytest.raises(ValidationError, match=r"stated_active_params\n  Value error, give it for a mixture-of-experts"):
        TypeAdapter(SCHEMAS["models"]).validate_python(
            {"name": "x", "nominal_params": {"value": 1, "unit": "billion"},
             "stated_params": {"value": 1, "unit": "billion"}, "stated_active_params": {"value": 1, "unit": "billion"},
             "architecture": asdict(arch), "sources": [{"url": "https://example.org/x", "title": "xyz",
                                                        "read": "2026-11-30"}]}, context={"key": "x"})


@pytest.mark.parametrize(("edit", "loc", "says"), [
    ({"layers": "2"}, ("layers",), "text: write numbers"),           # as written: no "2" for 2
    ({"layers": 2.0}, ("layers",), "not a whole number"),
    ({"tied_embeddings": 1}, ("tied_embeddings",), "write true or false"),
    ({"layers": 0}, ("layers",), "0 is less than 1"),                 # the engine's ranges
    ({"mlp": "swish"}, ("mlp",), "'swish' is not one of 'gated', 'plain'"),
    ({"swa": 4}, ("swa",), "Extra inputs are not permitted"),         # no unknown key
    ({"moe": {"experts": 2, "active_experts": 1, "expert_ffn_size": 4, "router": True}}, ("moe", "router"),
     "Extra inputs are not permitted"),
    ({"moe": {"experts": "2", "active_experts": 1, "expert_ffn_size": 4}}, ("moe", "experts"), "text: write numbers"),
    ({"mla": {"kv_lora_rank": 0, "qk_nope_head_dim": 1, "qk_rope_head_dim": 1, "v_head_dim": 4}},
     ("mla", "kv_lora_rank"), "0 is less than 1"),
])
def test_an_architecture_is_checked_field_by_field_into_the_engines_record(edit: dict[str, Any], loc: tuple[str, ...],
                                                                          says: str) -> None:
    """data/models.yaml validates into the engine's own record (`snippets.engine.specs.Arch`: one class is schema and
    input), as strictly as every schema class: each problem is refused at its own field, nested ones too."""
    good = {"layers": 2, "hidden_size": 8, "attention_heads": 2, "kv_heads": 1, "head_dim": 4, "ffn_size": 16,
            "vocab_size": 10, "tied_embeddings": True}
    assert type(ARCH.validate_python(good)) is Arch
    with pytest.raises(ValidationError) as err:
        ARCH.validate_python({**good, **edit})
    found = [(e["loc"], f"{e['msg']} (got {e['input']!r})") for e in err.value.errors()]  # a wrong scalar's reason
    # is in its input (`snippets.data.base._Refused`), as for every schema class
    assert any(where == loc and says in msg for where, msg in found), found

