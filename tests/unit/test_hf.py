"""A pasted Hugging Face config.json, read by snippets.engine.hf, gives the architecture data/models.yaml records.

The configs below are the fields of each model's published config.json (the files data/models.yaml cites,
read 2026-11-30 and 2026-12-01), transcribed with the fields that do not shape the weights or the cache
(rope scaling, token ids, dropout) left out or kept as they are.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, replace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.data.schema import ArchRecord
from snippets.engine.hf import ConfigError, arch_from_config, model_from_config
from snippets.engine.params import total_params

LLAMA_31_8B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": False,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "vocab_size": 128256,
}
LLAMA_31_70B = {**LLAMA_31_8B, "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
                "num_hidden_layers": 80}
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "output_router_logits": False, "rms_norm_eps": 1e-05, "rope_theta": 1e6, "router_aux_loss_coef": 0.02,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 32000,
}
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": False, "first_k_dense_replace": 3,
    "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": True,
    "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": False,
    "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "v_head_dim": 128, "vocab_size": 129280,
}
QWEN25_72B = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 8192, "initializer_range": 0.02,
    "intermediate_size": 29568, "max_position_embeddings": 131072, "max_window_layers": 80,
    "model_type": "qwen2", "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 1e6, "sliding_window": 131072, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False, "vocab_size": 152064,
}
QWEN3_32B = {
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 5120, "intermediate_size": 25600, "max_position_embeddings": 40960, "max_window_layers": 64,
    "model_type": "qwen3", "num_attention_heads": 64, "num_hidden_layers": 64, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 151936,
}
QWEN3_235B = {
    "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": False, "decoder_sparse_step": 1, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12288, "max_position_embeddings": 40960,
    "mlp_only_layers": [], "model_type": "qwen3_moe", "moe_intermediate_size": 1536, "norm_topk_prob": True,
    "num_attention_heads": 64, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 94,
    "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_sliding_window": False, "vocab_size": 151936,
}
GPT_OSS_120B = {
    "architectures": ["GptOssForCausalLM"], "attention_bias": True, "experts_per_token": 4, "head_dim": 64,
    "hidden_act": "silu", "hidden_size": 2880, "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 18, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 36,
    "num_key_value_heads": 8, "num_local_experts": 128, "sliding_window": 128, "tie_word_embeddings": False,
    "vocab_size": 201088,
}
_LLAMA4_VISION = {
    "attention_dropout": 0.0, "hidden_act": "gelu", "hidden_size": 1408, "image_size": 336, "initializer_range": 0.02,
    "intermediate_size": 5632, "model_type": "llama4_vision_model", "multi_modal_projector_bias": False,
    "norm_eps": 1e-05, "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14,
    "pixel_shuffle_ratio": 0.5, "projector_dropout": 0.0, "projector_input_dim": 4096, "projector_output_dim": 4096,
    "rope_theta": 10000, "torch_dtype": "bfloat16", "vision_feature_layer": -1,
    "vision_feature_select_strategy": "default", "vision_output_dim": 4096,
}
LLAMA4_SCOUT = {  # meta-llama/Llama-4-Scout-17B-16E-Instruct, as ai-dynamo/aiconfigurator at 64c5ddb copies it
    "architectures": ["Llama4ForConditionalGeneration"], "boi_token_index": 200080, "eoi_token_index": 200081,
    "image_token_index": 200092, "model_type": "llama4",
    "text_config": {
        "attention_bias": False, "attention_chunk_size": 8192, "attention_dropout": 0.0, "head_dim": 128,
        "hidden_act": "silu", "hidden_size": 5120, "interleave_moe_layer_step": 1, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760, "model_type": "llama4_text",
        "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
        "num_local_experts": 16, "output_router_logits": False, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "router_aux_loss_coef": 0.001, "torch_dtype": "bfloat16", "use_cache": True,
        "use_qk_norm": True, "vocab_size": 202048},
    "torch_dtype": "bfloat16", "transformers_version": "4.51.0.dev0", "vision_config": _LLAMA4_VISION,
}
LLAMA4_MAVERICK = {**LLAMA4_SCOUT, "text_config": {
    **LLAMA4_SCOUT["text_config"], "interleave_moe_layer_step": 2, "max_position_embeddings": 1048576,
    "num_local_experts": 128, "rope_scaling": None, "use_qk_norm": False}}
REAL = {"llama-3.1-8b": LLAMA_31_8B, "llama-3.1-70b": LLAMA_31_70B, "mixtral-8x7b": MIXTRAL_8X7B,
        "deepseek-v3": DEEPSEEK_V3, "qwen2.5-72b": QWEN25_72B, "qwen3-32b": QWEN3_32B,
        "qwen3-235b-a22b": QWEN3_235B, "gpt-oss-120b": GPT_OSS_120B, "llama-4-scout": LLAMA4_SCOUT,
        "llama-4-maverick": LLAMA4_MAVERICK}


@pytest.mark.parametrize("model", sorted(REAL))
def test_a_real_config_gives_the_recorded_architecture(catalog: Catalog, model: str) -> None:
    """Every field equal to data/models.yaml's record; the context length too where the record has one."""
    recorded = engine_catalog(catalog).models[model].architecture
    got = arch_from_config(REAL[model])
    if recorded.context_length is None:
        got = replace(got, context_length=None)
    assert got == recorded
    assert total_params(got) == total_params(recorded)


def test_a_model_record_from_text_counts_its_parameters() -> None:
    m = model_from_config(json.dumps({**LLAMA_31_8B, "_name_or_path": "meta-llama/Llama-3.1-8B"}))
    assert m.name == "meta-llama/Llama-3.1-8B"
    # 32 x (attention 4096 x 6144 x 2 ... ) written out: see tests/unit/test_params.py; 8,030,261,248 is Meta's count
    assert m.stated_params == 8_030_261_248
    assert model_from_config(json.dumps(QWEN3_32B)).name == "your qwen3 model"


@pytest.mark.parametrize(("quantization", "expected"), [
    # openai/gpt-oss-120b's config.json
    ({"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                           "model.embed_tokens", "lm_head"]},
     {"mxfp4": {"attention_in", "attention_out"}}),
    # a ModelOpt NVFP4 export that names the projections (q, k, v kept; o quantized)
    ({"quant_method": "modelopt", "quant_algo": "NVFP4",
      "ignore": ["lm_head", "model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj", "model.layers.0.mlp.gate"]},
     {"nvfp4": {"attention_in"}}),
    # MLA's projections by name, wildcards after them
    ({"quant_algo": "NVFP4", "exclude_modules": ["model.layers.3.self_attn.kv_b_proj*", "model.layers.3.self_attn.o_proj"]},
     {"nvfp4": {"attention_in", "attention_out"}}),
    # Meta's meta-llama/Llama-3.1-405B-FP8: every layer's attention projections by name, the first and last MLPs
    ({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
      "modules_to_not_convert": ["lm_head", "model.layers.0.mlp.down_proj", "model.layers.125.mlp.up_proj"]
      + [f"model.layers.{i}.self_attn.{p}" for i in range(126) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]},
     {"fp8": {"attention_in", "attention_out"}}),
    ({"quant_method": "mxfp4", "modules_to_not_convert": ["lm_head"]}, {}),  # attention quantized too
    ({"quant_method": "fp8", "weight_block_size": [128, 128]}, {}),  # a method whose exclusions are not read
    ({"quant_method": "mxfp4", "modules_to_not_convert": "model.layers.*.self_attn"}, {}),  # not a list
    ({"quant_method": "mxfp4", "modules_to_not_convert": [3, None, True]}, {}),  # not strings
    ({"quant_method": 4, "ignore": [{"self_attn": 1}]}, {}),
])
def test_the_attention_a_quantized_config_keeps_at_16_bit(quantization: Any, expected: Any) -> None:
    m = model_from_config(json.dumps({**GPT_OSS_120B, "quantization_config": quantization}))
    assert dict(m.keeps_16bit) == expected
    assert dict(model_from_config(json.dumps(GPT_OSS_120B)).keeps_16bit) == {}


def test_a_pasted_meta_fp8_405b_config_weighs_what_its_measured_runs_do(catalog: Catalog) -> None:
    """Meta's FP8 config.json of Llama 3.1 405B (fbgemm_fp8, its attention projections listed by name) pasted into
    the calculator weighs what data/measurements.yaml's runs of that checkpoint do (their keeps_16bit): 481.9 GB, the
    attention's 71.9 GB at two bytes, not the 410.0 GB of an all-FP8 body."""
    from snippets.engine.calc import custom_model
    from snippets.engine.memory import weight_bytes

    eng = engine_catalog(catalog)
    names = [f"model.layers.{i}.self_attn.{p}" for i in range(126) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    cfg = {**LLAMA_31_8B, "hidden_size": 16384, "intermediate_size": 53248, "num_attention_heads": 128,
           "num_hidden_layers": 126, "quantization_config": {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
                                                             "modules_to_not_convert": ["lm_head", *names]}}
    pasted, fp8 = custom_model(json.dumps(cfg)), eng.precisions["fp8"]
    row = catalog.measurements["dstack-llama31405b-fp8-vllm-8xh100-in2048-out2048-b64"]
    assert row.keeps_16bit is not None
    recorded = eng.models["llama-3.1-405b"].architecture
    assert weight_bytes(pasted.architecture, fp8, pasted.kept_16bit(fp8)) == weight_bytes(
        recorded, fp8, frozenset(row.keeps_16bit))
    assert weight_bytes(pasted.architecture, fp8, pasted.kept_16bit(fp8)) == pytest.approx(481.9e9, rel=1e-3)
    assert weight_bytes(recorded, fp8) == pytest.approx(410.0e9, rel=1e-3)


def test_a_pasted_gpt_oss_config_weighs_what_the_recorded_model_does(catalog: Catalog) -> None:
    from snippets.engine.calc import custom_model
    from snippets.engine.memory import weight_bytes

    eng = engine_catalog(catalog)
    q = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}
    text = json.dumps({**GPT_OSS_120B, "quantization_config": q})
    recorded, mxfp4 = eng.models["gpt-oss-120b"], eng.precisions["mxfp4"]
    # the calculator's own reader of a pasted config, and the plain one
    for pasted in (custom_model(text), model_from_config(text)):
        assert weight_bytes(pasted.architecture, mxfp4, pasted.kept_16bit(mxfp4)) == weight_bytes(
            recorded.architecture, mxfp4, recorded.kept_16bit(mxfp4))
    bare = custom_model(json.dumps(GPT_OSS_120B))
    assert weight_bytes(bare.architecture, mxfp4, bare.kept_16bit(mxfp4)) < weight_bytes(
        recorded.architecture, mxfp4, recorded.kept_16bit(mxfp4))


@pytest.mark.parametrize(("config", "expected"), [
    ({k: v for k, v in LLAMA_31_8B.items() if k not in ("num_hidden_layers", "vocab_size")},
     ["num_hidden_layers is missing", "vocab_size is missing"]),
    ({**LLAMA_31_8B, "hidden_size": "4096"}, ["hidden_size must be a positive integer"]),
    ({**LLAMA_31_8B, "num_key_value_heads": 5}, ["num_key_value_heads: 5 does not divide"]),
    ({**LLAMA_31_8B, "attention_bias": True}, ["attention_bias: true puts a bias on o_proj"]),
    ({**LLAMA_31_8B, "model_type": "falcon"}, ['model_type "falcon" is not one the calculator reads']),
    ({"model_type": "llava", "text_config": {"model_type": "llama"}}, ["paste its text_config"]),
    ({"model_type": "qwen2_5_vl", "text_config": {"model_type": "qwen2_5_vl_text"}},
     ['"qwen2_5_vl_text", is not read either']),
    ({"model_type": "llama4", "text_config": {"model_type": "llama4_text"}},
     ["text_config.num_hidden_layers is missing"]),
    ({**QWEN3_235B, "mlp_only_layers": [0]}, ["mlp_only_layers"]),
    ({**MIXTRAL_8X7B, "num_experts_per_tok": 9}, ["num_experts_per_tok: 9 is more than the 8 experts"]),
    ([1, 2], ["must be a JSON object"]),
])
def test_a_config_it_cannot_use_is_refused_naming_each_field(config: Any, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        arch_from_config(config)
    for part in expected:
        assert part in str(err.value)


def test_a_missing_width_is_named_once_not_again_through_the_head_width() -> None:
    """Without hidden_size (or the heads) the head width cannot be derived: the message names the missing field and
    says nothing of the placeholder a missing field reads as; with both stated, a width the heads do not divide is
    named."""
    cfg = {k: v for k, v in LLAMA_31_70B.items() if k not in ("hidden_size", "head_dim")}
    with pytest.raises(ConfigError) as err:
        arch_from_config(cfg)
    assert "hidden_size is missing (the model width)" in str(err.value) and "head_dim" not in str(err.value)
    with pytest.raises(ConfigError, match="hidden_size 8190 is not a multiple of num_attention_heads 64"):
        arch_from_config({**cfg, "hidden_size": 8190})


def test_text_that_is_not_json_is_refused_with_its_position() -> None:
    with pytest.raises(ConfigError, match=r"not JSON: .* line 1, column 2"):
        model_from_config("{oops")


def _mutations(rng: random.Random, base: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Careless edits of a real config: an integer field set to 0, 1, -1, a neighbour, one of the model's own other
    integers, or a large value; a flag flipped; a field dropped."""
    keys = sorted(base)
    ints = [v for v in base.values() if isinstance(v, int) and not isinstance(v, bool)]
    out = []
    for _ in range(count):
        cfg = dict(base)
        for key in rng.sample(keys, rng.choice((1, 2))):
            v = cfg[key]
            if isinstance(v, bool):
                cfg[key] = not v
            elif isinstance(v, int):
                cfg[key] = rng.choice((0, 1, -1, v + 1, v - 1, 2 * v, rng.choice(ints), 10_000))
            elif key != "model_type":
                del cfg[key]
        out.append(cfg)
    return out


def _nested_mutations(rng: random.Random, base: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """`_mutations` of a config's own fields, or of its text_config's or vision_config's, where it nests them."""
    nests = [k for k in ("text_config", "vision_config") if isinstance(base.get(k), dict)]
    out = []
    for cfg in _mutations(rng, base, count):
        key = rng.choice([None, *nests]) if nests else None
        out.append(cfg if key is None else {**base, key: _mutations(rng, base[key], 1)[0]})
    return out


@pytest.mark.parametrize("model", sorted(REAL))
def test_what_the_reader_accepts_the_data_schema_accepts(model: str) -> None:
    """The config reader refuses what data/models.yaml's schema refuses: every architecture it reads from a careless
    edit of a real config (of its text_config or vision_config, where it nests them) validates as a data record
    (both apply `snippets.engine.specs.arch_problems`)."""
    rng = random.Random(f"hf-{model}")  # noqa: S311 (seeded: the same edits every run)
    accepted = 0
    for cfg in _nested_mutations(rng, REAL[model], 150):
        try:
            arch = arch_from_config(cfg)
        except ConfigError:
            continue
        accepted += 1
        TypeAdapter(ArchRecord).validate_python(asdict(arch))
    assert accepted > 20  # the edits are not all refused by the reader: the check above ran


@pytest.mark.parametrize(("config", "expected"), [
    ({**DEEPSEEK_V3, "first_k_dense_replace": 61}, "first_k_dense_replace: 61 leading dense layers leave none"),
    ({**QWEN3_235B, "decoder_sparse_step": 95}, "decoder_sparse_step: 95 is more than the 94 layers"),
])
def test_the_schema_rules_reach_the_reader_named_as_config_json_names_them(config: Any, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        arch_from_config(config)
    fields = {"first_k_dense_replace": ("dense_layers", 61), "decoder_sparse_step": ("layer_step", 95)}
    key = expected.split(":")[0]
    field, value = fields[key]
    data = asdict(arch_from_config({**config, key: 1}))
    data["moe"][field] = value
    with pytest.raises(ValidationError):
        TypeAdapter(ArchRecord).validate_python(data)


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda c: {**c, "text_config": {**c["text_config"], "no_rope_layers": [1, 0] * 24}},
     "text_config.no_rope_layers: only a global (NoPE) layer every 4 layers, from layer 3"),
    (lambda c: {**c, "text_config": {**c["text_config"], "moe_layers": [0, 1]}},
     "text_config.moe_layers: only every 1 layers from layer 0"),
    (lambda c: {**c, "vision_config": {**c["vision_config"], "image_size": 335}},
     "vision_config.image_size: 335 is not a whole number of 14-pixel patches"),
    (lambda c: {**c, "vision_config": {**c["vision_config"], "multi_modal_projector_bias": True}},
     "vision_config.multi_modal_projector_bias: true"),
    (lambda c: {**c, "vision_config": {**c["vision_config"], "num_hidden_layers": 0}},
     "vision_config.num_hidden_layers must be a positive integer"),
    (lambda c: {k: v for k, v in c.items() if k != "text_config"}, "text_config is missing"),
])
def test_a_llama4_config_is_read_through_its_text_and_vision_configs(edit: Any, expected: str) -> None:
    """Llama 4's config nests its text model and its image encoder: the reader names a field at fault by where it
    sits; the transformers defaults (a global layer every 4, every interleave_moe_layer_step-th layer routed)
    spelled out in full are read as the defaults."""
    with pytest.raises(ConfigError, match=re.escape(expected)):
        arch_from_config(edit(LLAMA4_SCOUT))
    spelled = {**LLAMA4_SCOUT, "text_config": {**LLAMA4_SCOUT["text_config"], "moe_layers": list(range(48)),
                                               "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(48)]}}
    assert arch_from_config(spelled) == arch_from_config(LLAMA4_SCOUT)
    assert arch_from_config({**LLAMA4_SCOUT, "vision_config": None}).vision is None  # a text-only export
