"""A Hugging Face `config.json`, read into the engine's architecture record (`specs.Arch`). Standard library only.

The calculator page lets a reader paste a model's config.json; this maps its fields to the names
`data/models.yaml` uses (`num_hidden_layers` -> `layers`, `num_key_value_heads` -> `kv_heads`, ...), per
model family (`model_type`), because the families spell the same thing differently (Mixtral's
`num_local_experts`, Qwen3-MoE's `num_experts`, DeepSeek-V3's `n_routed_experts`). A field the engine needs
and the config lacks, a value it cannot use, or a feature it does not model (an `o_proj` bias, a sliding
window on some layers only, but for gpt-oss's alternating sliding and full layers) is an error that names the
field; every such problem is reported at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from snippets.engine.params import total_params
from snippets.engine.specs import MLA, Arch, KeptLinear, ModelSpec, MoE, VisionEncoder, arch_problems

FAMILIES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v3", "gpt_oss", "llama4")
"""The `model_type`s the mapping knows. Each is a gated (SwiGLU) MLP with RMSNorm and rotary positions. Llama 4's
config (llama4) holds its text model under `text_config` and its image encoder under `vision_config`."""


_CONFIG_KEYS = {"layers": "num_hidden_layers", "kv_heads": "num_key_value_heads", "context_length":
                "max_position_embeddings", "moe.active_experts": "num_experts_per_tok", "sliding_window": "sliding_window"}
"""config.json's name for each field `snippets.engine.specs.arch_problems` names, where every family agrees."""
_FAMILY_KEYS = {"deepseek_v3": {"moe.dense_layers": "first_k_dense_replace", "moe.layer_step": "moe_layer_freq"},
                "qwen3_moe": {"moe.layer_step": "decoder_sparse_step"},
                "llama4": {"moe.layer_step": "interleave_moe_layer_step", "ffn_size": "intermediate_size_mlp",
                           "moe.expert_ffn_size": "intermediate_size", "global_layer_interval": "no_rope_layer_interval",
                           "moe.experts": "num_local_experts"}}
"""... and where a family spells it its own way."""


class ConfigError(ValueError):
    """The config.json cannot be read into an architecture; the message names every field at fault."""


class _Reader:
    def __init__(self, cfg: Mapping[str, Any], prefix: str = "", problems: list[str] | None = None) -> None:
        self.cfg = cfg
        self.prefix = prefix
        """How the problems name a key: "text_config." for a field a multimodal config nests there."""
        self.problems: list[str] = [] if problems is None else problems

    def int(self, key: str, what: str, default: int | None = None, *, zero: bool = False) -> int:
        v = self.cfg.get(key, default)
        if v is None:
            self.problems.append(f"{self.prefix}{key} is missing ({what})")
            return 1
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if zero else 1):
            self.problems.append(f"{self.prefix}{key} must be a {'non-negative' if zero else 'positive'} integer "
                                 f"({what}), not {json.dumps(v)}")
            return 1
        return int(v)

    def flag(self, key: str, default: bool) -> bool:
        v = self.cfg.get(key, default)
        if v is None:
            return default
        if not isinstance(v, bool):
            self.problems.append(f"{self.prefix}{key} must be true or false, not {json.dumps(v)}")
            return default
        return v

    def refuse(self, key: str, why: str) -> None:
        self.problems.append(f"{self.prefix}{key}: {why}")


def arch_from_config(cfg: Mapping[str, Any]) -> Arch:
    """The architecture a config.json describes, or ConfigError naming each field it cannot use."""
    if not isinstance(cfg, Mapping):
        raise ConfigError("config.json must be a JSON object ({...})")
    family = cfg.get("model_type")
    outer, vision_cfg, prefix = cfg, None, ""
    if family == "llama4":  # the text model's fields under text_config, the image encoder's under vision_config
        text = cfg.get("text_config")
        if not isinstance(text, Mapping):
            raise ConfigError("config.json: text_config is missing (a llama4 config holds its text model there)")
        cfg, vision_cfg, prefix = text, cfg.get("vision_config"), "text_config."
    if family not in FAMILIES:
        text = cfg.get("text_config")
        inner = text.get("model_type") if isinstance(text, Mapping) else None
        hint = " (a multimodal config: paste its text_config)" if inner in FAMILIES else (
            f" (a multimodal config whose text model, {json.dumps(inner)}, is not read either)" if text else "")
        raise ConfigError(f"model_type {json.dumps(family)} is not one the calculator reads{hint}; "
                          f"it reads {', '.join(FAMILIES)}")
    r = _Reader(cfg, prefix)
    layers = r.int("num_hidden_layers", "the number of transformer blocks")
    read = len(r.problems)
    hidden = r.int("hidden_size", "the model width")
    heads = r.int("num_attention_heads", "query heads")
    width_read = len(r.problems) == read  # both read as stated: a head width can be derived from them
    kv_heads = r.int("num_key_value_heads", "key-value heads; absent means one per query head", heads)
    vocab = r.int("vocab_size", "the vocabulary")
    ffn = r.int("intermediate_size", "each expert's inner width" if family == "llama4" else "the MLP's inner width")
    context = cfg.get("max_position_embeddings")
    if context is not None:
        context = r.int("max_position_embeddings", "the context length")
    head_dim = cfg.get("head_dim")
    if head_dim is None:
        head_dim = hidden // heads if hidden % heads == 0 else None
        if head_dim is None:
            if width_read:  # else the width or the heads are already named: their placeholder says nothing
                r.refuse("head_dim", f"missing, and hidden_size {hidden} is not a multiple of num_attention_heads "
                                     f"{heads}")
            head_dim = 1
    else:
        head_dim = r.int("head_dim", "the width of one head")
    tied = r.flag("tie_word_embeddings", False) if outer is cfg else _Reader(outer, "", r.problems).flag(
        "tie_word_embeddings", False)  # Llama 4's is beside text_config

    qkv_bias = family == "qwen2"  # Qwen2 always biases q, k and v
    linear_bias = False
    if family == "gpt_oss":
        linear_bias = r.flag("attention_bias", True)  # and every expert projection's bias
    elif r.flag("attention_bias", False):
        r.refuse("attention_bias", "true puts a bias on o_proj too, which the engine does not model")
    if r.flag("mlp_bias", False):
        r.refuse("mlp_bias", "true: biases on the MLP's projections are not modelled for this family")

    sliding_window: int | None = None
    sliding_layers: str | None = None
    window = cfg.get("sliding_window")
    if family in ("mistral", "mixtral") and window is not None:
        sliding_window, sliding_layers = r.int("sliding_window", "the attention window"), "all"
    elif family in ("qwen2", "qwen3", "qwen3_moe") and r.flag("use_sliding_window", False):
        r.refuse("use_sliding_window", "true (a window on the layers past max_window_layers) is not modelled")
    elif family == "gpt_oss":
        sliding_window = r.int("sliding_window", "the attention window of the sliding layers")
        kinds = cfg.get("layer_types")
        alternate = [("sliding_attention", "full_attention")[i % 2] for i in range(layers)]
        if kinds is None or kinds == alternate:
            sliding_layers = "alternate"
        elif kinds == ["sliding_attention"] * layers:
            sliding_layers = "all"
        else:
            r.refuse("layer_types", "only all-sliding, or sliding and full alternating from layer 0, are modelled")

    mla: MLA | None = None
    moe: MoE | None = None
    mtp_layers = 0
    chunk: int | None = None
    global_interval: int | None = None
    if family == "mixtral":
        moe = MoE(experts=r.int("num_local_experts", "experts per layer"),
                  active_experts=r.int("num_experts_per_tok", "experts each token uses"), expert_ffn_size=ffn)
    elif family == "gpt_oss":
        moe = MoE(experts=r.int("num_local_experts", "experts per layer"),
                  active_experts=r.int("num_experts_per_tok", "experts each token uses",
                                       cfg.get("experts_per_token")),
                  expert_ffn_size=ffn, router_bias=True)
    elif family == "qwen3_moe":
        if cfg.get("mlp_only_layers"):
            r.refuse("mlp_only_layers", "dense layers named one by one are not modelled (only a leading run)")
        moe = MoE(experts=r.int("num_experts", "experts per layer"),
                  active_experts=r.int("num_experts_per_tok", "experts each token uses"),
                  expert_ffn_size=r.int("moe_intermediate_size", "each expert's inner width"),
                  layer_step=r.int("decoder_sparse_step", "every how many layers route to experts", 1))
    elif family == "deepseek_v3":
        q_lora = cfg.get("q_lora_rank")
        mla = MLA(kv_lora_rank=r.int("kv_lora_rank", "the latent the KV cache holds"),
                  qk_nope_head_dim=r.int("qk_nope_head_dim", "the non-rotary part of a query-key head"),
                  qk_rope_head_dim=r.int("qk_rope_head_dim", "the rotary part of a query-key head"),
                  v_head_dim=r.int("v_head_dim", "a value head's width"),
                  q_lora_rank=None if q_lora is None else r.int("q_lora_rank", "the query bottleneck"))
        head_dim = mla.v_head_dim  # as data/models.yaml records it: query and key heads are wider, see mla
        if r.int("moe_layer_freq", "every how many layers route to experts", 1) != 1:
            r.refuse("moe_layer_freq", "only 1 (every layer past the dense ones) is modelled")
        moe = MoE(experts=r.int("n_routed_experts", "routed experts per layer"),
                  active_experts=r.int("num_experts_per_tok", "experts each token uses"),
                  expert_ffn_size=r.int("moe_intermediate_size", "each expert's inner width"),
                  shared_experts=r.int("n_shared_experts", "shared experts per layer", 0, zero=True),
                  dense_layers=r.int("first_k_dense_replace", "leading dense layers", 0, zero=True),
                  router_bias=cfg.get("topk_method") == "noaux_tc")  # e_score_correction_bias
        mtp_layers = r.int("num_nextn_predict_layers", "multi-token-prediction modules", 0, zero=True)
    elif family == "llama4":
        moe, ffn = _llama4_moe(r, layers, ffn)
        chunk, global_interval = _llama4_chunks(r, layers)
    arch = Arch(layers=layers, hidden_size=hidden, attention_heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                ffn_size=ffn, vocab_size=vocab, tied_embeddings=tied, qkv_bias=qkv_bias, linear_bias=linear_bias,
                context_length=context, qk_norm=family in ("qwen3", "qwen3_moe"),
                attention_sinks=family == "gpt_oss", sliding_window=sliding_window,
                sliding_window_layers=sliding_layers, mla=mla, moe=moe, mtp_layers=mtp_layers,
                attention_chunk_size=chunk, global_layer_interval=global_interval,
                vision=None if vision_cfg is None else _vision(vision_cfg, r.problems))
    if not r.problems:  # the rules data/models.yaml's schema applies, named as this family's config.json names them
        keys = {**_CONFIG_KEYS, **_FAMILY_KEYS.get(family, {})}
        for field, why in arch_problems(arch):
            if field.startswith("vision."):
                name = field.removeprefix("vision.")
                r.problems.append(f"vision_config.{_VISION_KEYS.get(name, name)}: {why}")
                continue
            r.refuse(keys.get(field, field), why.replace("attention_heads", "num_attention_heads"))
    if r.problems:
        raise ConfigError("config.json: " + "; ".join(r.problems))
    return arch


def _llama4_moe(r: _Reader, layers: int, expert_ffn: int) -> tuple[MoE, int]:
    """Llama 4's experts and its dense layers' MLP width: every `interleave_moe_layer_step`-th layer routes to one of
    `num_local_experts` experts of `intermediate_size` beside a shared one of the same size (layers step - 1,
    2 x step - 1, ..., transformers' default `moe_layers`); the others are dense, of `intermediate_size_mlp`."""
    step = r.int("interleave_moe_layer_step", "every how many layers route to experts", 1)
    listed = r.cfg.get("moe_layers")
    if listed is not None and (not isinstance(listed, list) or listed != list(range(step - 1, layers, step))):
        r.refuse("moe_layers", f"only every {step} layers from layer {step - 1} (interleave_moe_layer_step) is modelled")
    moe = MoE(experts=r.int("num_local_experts", "experts per layer"),
              active_experts=r.int("num_experts_per_tok", "experts each token uses"), expert_ffn_size=expert_ffn,
              shared_experts=1, layer_step=step)
    return moe, r.int("intermediate_size_mlp", "the dense layers' MLP width")


def _llama4_chunks(r: _Reader, layers: int) -> tuple[int | None, int | None]:
    """Llama 4's chunked local attention: with `attention_chunk_size`, the layers that use RoPE attend within chunks
    and every `no_rope_layer_interval`-th (4 by default, transformers' Llama4TextConfig) over the whole context, as
    `no_rope_layers` (1 for a RoPE layer) spells out when it is given; (None, None) without chunks."""
    if r.cfg.get("attention_chunk_size") is None:
        return None, None
    chunk = r.int("attention_chunk_size", "the tokens a chunked layer attends within")
    interval = r.int("no_rope_layer_interval", "every how many layers attend over the whole context", 4)
    listed = r.cfg.get("no_rope_layers")
    if listed and (not isinstance(listed, list) or len(listed) != layers
                   or listed != [int((i + 1) % interval != 0) for i in range(layers)]):
        r.refuse("no_rope_layers", f"only a global (NoPE) layer every {interval} layers, from layer {interval - 1}, "
                                   "is modelled")
    return chunk, interval


_VISION_KEYS = {"layers": "num_hidden_layers", "ffn_size": "intermediate_size", "attention_heads": "num_attention_heads",
                "channels": "num_channels"}
"""vision_config's name for each `VisionEncoder` field it spells otherwise."""


def _vision(cfg: object, problems: list[str]) -> VisionEncoder | None:
    """Llama 4's image encoder from its vision_config (`specs.VisionEncoder`), its problems added to `problems`."""
    if not isinstance(cfg, Mapping):
        problems.append("vision_config must be a JSON object ({...})")
        return None
    v = _Reader(cfg, "vision_config.", problems)
    ints = {name: v.int(_VISION_KEYS.get(name, name), what, default) for name, what, default in (
        ("layers", "the encoder's blocks", None), ("hidden_size", "the encoder's width", None),
        ("ffn_size", "the encoder's MLP width", None), ("attention_heads", "the encoder's heads", None),
        ("patch_size", "pixels on a patch's side", None), ("image_size", "pixels on a tile's side", None),
        ("channels", "colour channels", 3), ("projector_input_dim", "the adapter's width", None),
        ("projector_output_dim", "the adapter's output", None))}
    ratio = cfg.get("pixel_shuffle_ratio")
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
        problems.append(f"vision_config.pixel_shuffle_ratio must be a number above 0, at most 1, not {json.dumps(ratio)}")
        ratio = 1.0
    if v.flag("multi_modal_projector_bias", False):
        v.refuse("multi_modal_projector_bias", "true: biases on the adapter and projector are not modelled")
    return VisionEncoder(pixel_shuffle_ratio=float(ratio), **ints)


_QUANT_PRECISION = {"mxfp4": "mxfp4", "nvfp4": "nvfp4", "fbgemm_fp8": "fp8"}
"""A quantization_config's method (quant_method, or ModelOpt's quant_algo) and the precision id of its weights
(fbgemm_fp8: Meta's FP8 checkpoints of Llama 3.1, FP8 per output channel)."""
_PROJECTIONS: tuple[tuple[str, KeptLinear], ...] = (
    ("o_proj", "attention_out"), ("q_proj", "attention_in"), ("k_proj", "attention_in"), ("v_proj", "attention_in"),
    ("qkv_proj", "attention_in"), ("q_a_proj", "attention_in"), ("q_b_proj", "attention_in"),
    ("kv_a_proj", "attention_in"), ("kv_b_proj", "attention_in"))
"""The attention projections' module names, by the group of `ModelSpec.keeps_16bit` each belongs to."""


def kept_from_config(cfg: Mapping[str, Any]) -> dict[str, frozenset[KeptLinear]]:
    """The attention projections config.json's quantization_config leaves at 16 bits, under the precision id of its
    method (`ModelSpec.keeps_16bit`): an MXFP4 config's `modules_to_not_convert` (gpt-oss's
    "model.layers.*.self_attn": all of them), a ModelOpt NVFP4 config's `exclude_modules` or `ignore` list (a whole
    self_attn, or its projections by name), an fbgemm_fp8 config's `modules_to_not_convert` (Meta's Llama 3.1 405B
    FP8: every layer's q, k, v and o projections by name, and the first and last layers' MLPs, which no group holds
    and so stay FP8 here). A module listed for some layers is read as kept in every layer; another method, or a list
    that is not a list of strings, keeps nothing (the config's other fields are checked apart)."""
    q = cfg.get("quantization_config")
    if not isinstance(q, Mapping):
        return {}
    method = str(q.get("quant_method", "")).lower()
    pid = _QUANT_PRECISION.get(method) or _QUANT_PRECISION.get(str(q.get("quant_algo", "")).lower())
    lists = [q.get(key) for key in ("modules_to_not_convert", "exclude_modules", "ignore")]
    names = [n for listed in lists if isinstance(listed, list) for n in listed if isinstance(n, str)]
    if pid is None or not names:
        return {}
    kept: set[KeptLinear] = set()
    for n in names:
        if "self_attn" not in n:
            continue
        tail = n.split("self_attn", 1)[1].strip(".*")
        if not tail:  # the whole attention module
            kept.update(("attention_in", "attention_out"))
        kept.update(group for proj, group in _PROJECTIONS if tail.startswith(proj))
    return {pid: frozenset(kept)} if kept else {}


def model_from_config(text: str, model_id: str = "custom") -> ModelSpec:
    """A model record from config.json text: its architecture, and its computed count as its size."""
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config.json is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    arch = arch_from_config(cfg)
    name = cfg.get("_name_or_path") or cfg.get("name_or_path")
    n = float(total_params(arch))
    label = name if isinstance(name, str) and name else f"your {cfg['model_type']} model"
    return ModelSpec(id=model_id, name=label, nominal_params=n, stated_params=n, architecture=arch,
                     keeps_16bit=MappingProxyType(kept_from_config(cfg)))
