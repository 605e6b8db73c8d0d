"""What a request may ask of the engine, checked once for the command line and the calculator. Standard library only.

- `check_request`: token counts of at least 1, input + output within the model's context (refused with the
  limit), `node` and `accelerator` that name the same hardware, a concurrency of at least 1.
- `queue_split`: a concurrency beyond what the KV cache admits is not refused: that many run, the rest queue.
- `check_config_text`: a pasted config.json bounded before any work (its length, nesting, counts, text and the
  sizes it declares), with a message naming the field and the bound.
- `load_catalog` / `check_catalog`: an exported catalog (`--catalog FILE.json`) read as strictly as `data/` is:
  no NaN or infinity anywhere, no fraction outside (0, 1], no zero or negative size, count, bandwidth or price.

Each refusal is a `RequestError` (a ValueError) whose one-line message names what is wrong and the bound.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from snippets.engine.codec import decode
from snippets.engine.deployment import Deployment, NoLayout, RefusedLayout, Setting, context_refusal, deploy
from snippets.engine.layout import Layout
from snippets.engine.specs import EngineCatalog

MAX_TOKENS = 2**24
"""Input + output tokens asked of a model whose config states no context length, and the largest context a pasted
config.json may state: 16,777,216, above the longest in data/ (Llama 4 Scout Instruct's 10,485,760, which a request
or its config.json must be able to reach)."""
MAX_CONCURRENCY = 100_000
"""Requests kept in flight: far beyond what any replica admits (vLLM's default max_num_seqs is 256 to 1,024), so
the bound refuses typing slips, not loads."""


class RequestError(ValueError):
    """A request the engine will not answer; the message names the field at fault and the bound."""


class UnknownId(RequestError):
    """An id the catalog does not hold (the command line exits 2, as for any unknown id)."""


def _known(table: Mapping[str, Any], value: str, what: str) -> None:
    if value not in table:
        raise UnknownId(f"unknown id {value!r} ({what}); known: {', '.join(sorted(table))}")


@dataclass(frozen=True)
class Request:
    """A checked request: its model, hardware and shape."""

    model: str
    node: str
    accelerator: str
    input_tokens: int
    output_tokens: int
    concurrency: int | None = None

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{what} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise RequestError(f"{what} must be between {low:,} and {high:,}, not {value:,}")
    return int(value)


def check_context(eng: EngineCatalog, model: str, tokens: int, what: str = "input + output tokens") -> None:
    """Refuse a context longer than the model reads, naming the limit (the engine's rule,
    `deployment.context_refusal`, worded for the field at fault)."""
    refused = context_refusal(eng.models[model], tokens)
    if refused is not None:
        raise RequestError(f"{what} come to {tokens:,}, beyond {refused.model}'s context of {refused.limit:,} tokens")


def check_request(eng: EngineCatalog, model: str, *, input_tokens: Any, output_tokens: Any,
                  concurrency: Any = None, node: str | None = None, accelerator: str | None = None,
                  scenario: str = "reference", context_name: str = "input + output tokens") -> Request:
    """The request checked against the catalog, or RequestError naming the field at fault (`context_name`: what the
    caller calls input + output). Without `node` or `accelerator` the hardware is the scenario's node."""
    _known(eng.models, model, "model")
    _known(eng.scenarios, scenario, "scenario")
    if node is not None:
        _known(eng.nodes, node, "node")
    if accelerator is not None:
        _known(eng.chips, accelerator, "accelerator")
    if node is not None and accelerator is not None and eng.nodes[node].chip != accelerator:
        raise RequestError(f"node {node!r} is built from {eng.nodes[node].chip!r}, not accelerator {accelerator!r}: "
                           f"give one of the two, or two that agree")
    if node is None:
        if accelerator is None:
            node = eng.scenarios[scenario].node
        else:
            found = eng.node_of(accelerator)
            if found is None:
                raise RequestError(f"no node in data/ is built from accelerator {accelerator!r}")
            node = found.id
    n_in = _whole(input_tokens, "input tokens", 1, MAX_TOKENS)
    n_out = _whole(output_tokens, "output tokens", 1, MAX_TOKENS)
    check_context(eng, model, n_in + n_out, context_name)
    if n_in + n_out > MAX_TOKENS:
        raise RequestError(f"{context_name} come to {n_in + n_out:,}, beyond the {MAX_TOKENS:,} the engine "
                           f"sizes for a model that states no context length")
    conc = None if concurrency is None else _whole(concurrency, "concurrency", 1, MAX_CONCURRENCY)
    return Request(model, node, eng.nodes[node].chip, n_in, n_out, conc)


@dataclass(frozen=True)
class QueueSplit:
    """Requests in flight split into those the replica runs at once and those that wait for a slot."""

    asked: int
    running: int
    queued: int

    @property
    def text(self) -> str:
        if not self.queued:
            return f"all {self.asked:,} run at once"
        return (f"{self.running:,} run at once (what the KV cache and max_num_seqs admit); "
                f"{self.queued:,} queue for a slot")


def queue_split(concurrency: int, admits: int) -> QueueSplit:
    """How many of `concurrency` requests run at once when the replica admits `admits`, and how many queue."""
    running = max(0, min(concurrency, admits))
    return QueueSplit(concurrency, running, concurrency - running)


def deploy_admitting(make: Callable[[int], Setting], concurrency: int, layout: Layout | None = None) -> Deployment:
    """The deployment for `concurrency` requests kept in flight, as a serving engine takes them: on the layout the
    policy chooses for them all (or `layout`) if one holds them; otherwise on the one it chooses for as many as the
    engine admits at once (`max_num_seqs`), or for the most that any layout holds, the rest queueing for a slot.
    `make(k)` is the setting at `k` sequences. Raises what deploying one sequence raises when not even one fits."""
    try:
        return deploy(make(concurrency), layout)
    except (NoLayout, RefusedLayout):
        pass
    one = deploy(make(1), layout)  # nothing fits one sequence: that refusal is the answer
    admits = one.setting.memory_policy.max_num_seqs * (one.layout.dp if layout is None else layout.dp)
    if admits < concurrency:
        try:
            return deploy(make(admits), layout)
        except (NoLayout, RefusedLayout):
            pass
    lo, hi = 1, min(concurrency, admits)  # deploys at lo, not at hi
    best = one
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            best, lo = deploy(make(mid), layout), mid
        except (NoLayout, RefusedLayout):
            hi = mid
    return best


# --------------------------------------------------------------------------- a pasted config.json

MAX_CONFIG_CHARS = 100_000
"""A config.json's text: published ones are 1-10 kB (DeepSeek-V3's is about 1.7 kB, with its quantization block)."""
MAX_DEPTH = 8
"""Nesting of objects and arrays: published configs nest 2-4 deep (rope_scaling, quantization_config, text_config)."""
MAX_ITEMS = 2_000
"""Keys of one object, items of one array (Llama 4's per-layer lists have 48; gpt-oss's layer_types 36)."""
MAX_STRING = 2_000
"""Characters of one string (names, paths and dtypes are tens of characters)."""
MAX_NUMBER = 1e15
"""Any number's magnitude: the largest count a config states (a vocabulary, a rope theta of 5e8) is far below."""
CONFIG_BOUNDS = {  # field: (bound, why); each an order of magnitude or more beyond published configs
    "num_hidden_layers": (1_000, "126 in Llama 3.1 405B, the deepest model in data/"),
    "hidden_size": (262_144, "16,384 in Llama 3.1 405B"),
    "intermediate_size": (1_048_576, "53,248 in Llama 3.1 405B"),
    "moe_intermediate_size": (1_048_576, "2,048 in DeepSeek-V3"),
    "num_attention_heads": (4_096, "128 in DeepSeek-V3 and Llama 3.1 405B"),
    "num_key_value_heads": (4_096, "128 in DeepSeek-V3"),
    "head_dim": (16_384, "256 in Gemma and Qwen3-Next"),
    "vocab_size": (4_194_304, "262,144 in Gemma 3"),
    "max_position_embeddings": (MAX_TOKENS, "10,485,760 in Llama 4 Scout"),
    "num_local_experts": (16_384, "128 in Llama 4 Maverick and gpt-oss-120b"),
    "num_experts": (16_384, "128 in Qwen3-235B-A22B"),
    "n_routed_experts": (16_384, "256 in DeepSeek-V3"),
    "num_experts_per_tok": (1_024, "8 in DeepSeek-V3"),
    "n_shared_experts": (1_024, "1 in DeepSeek-V3"),
    "first_k_dense_replace": (1_000, "3 in DeepSeek-V3"),
    "num_nextn_predict_layers": (64, "1 in DeepSeek-V3"),
    "kv_lora_rank": (65_536, "512 in DeepSeek-V3"),
    "q_lora_rank": (65_536, "1,536 in DeepSeek-V3"),
    "qk_nope_head_dim": (16_384, "128 in DeepSeek-V3"),
    "qk_rope_head_dim": (16_384, "64 in DeepSeek-V3"),
    "v_head_dim": (16_384, "128 in DeepSeek-V3"),
    "sliding_window": (MAX_TOKENS, "128 in gpt-oss, 4,096 in Mistral 7B"),
    "decoder_sparse_step": (1_000, "1 in Qwen3 MoE"),
    "moe_layer_freq": (1_000, "1 in DeepSeek-V3"),
    "intermediate_size_mlp": (1_048_576, "16,384 in Llama 4"),
    "interleave_moe_layer_step": (1_000, "2 in Llama 4 Maverick"),
    "attention_chunk_size": (MAX_TOKENS, "8,192 in Llama 4"),
    "no_rope_layer_interval": (1_000, "4 in Llama 4"),
    "image_size": (65_536, "336 in Llama 4's vision_config"),
    "patch_size": (65_536, "14 in Llama 4's vision_config"),
    "num_channels": (1_024, "3 in Llama 4's vision_config"),
    "projector_input_dim": (1_048_576, "4,096 in Llama 4's vision_config"),
    "projector_output_dim": (1_048_576, "4,096 in Llama 4's vision_config"),
}
"""Each applies at the top level and in a multimodal config's `text_config` and `vision_config` (Llama 4's)."""
NESTED_CONFIGS = ("text_config", "vision_config")


def _depth(text: str) -> int:
    """The deepest nesting of objects and arrays in JSON text, without parsing it (brackets inside strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _reject_constant(name: str) -> float:
    raise RequestError(f"{name} is not a number JSON allows")


def _walk_config(value: Any, where: str) -> None:
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise RequestError(f"config.json: {where or 'the object'} has {len(value):,} keys, more than {MAX_ITEMS:,}")
        for k, v in value.items():
            if len(k) > MAX_STRING:
                raise RequestError(f"config.json: a key of {where or 'the object'} is {len(k):,} characters long, "
                                   f"more than {MAX_STRING:,}")
            _walk_config(v, f"{where}.{k}" if where else k)
    elif isinstance(value, list):
        if len(value) > MAX_ITEMS:
            raise RequestError(f"config.json: {where} has {len(value):,} items, more than {MAX_ITEMS:,}")
        for i, v in enumerate(value):
            _walk_config(v, f"{where}[{i}]")
    elif isinstance(value, str):
        if len(value) > MAX_STRING:
            raise RequestError(f"config.json: {where} is {len(value):,} characters long, more than {MAX_STRING:,}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and (
            not math.isfinite(value) or abs(value) > MAX_NUMBER):
        raise RequestError(f"config.json: {where} is {value!r}, beyond the {MAX_NUMBER:.0e} any field may hold")


def check_config_text(text: str) -> dict[str, Any]:
    """The pasted config.json parsed, once its text, nesting, counts, strings, numbers and the sizes it declares are
    within bounds (each far beyond any published config); RequestError naming the field and the bound otherwise."""
    if not isinstance(text, str):
        raise RequestError("config.json must be text")
    if len(text) > MAX_CONFIG_CHARS:
        raise RequestError(f"config.json is {len(text):,} characters long, more than the {MAX_CONFIG_CHARS:,} "
                           f"the calculator reads (published configs are a few thousand)")
    deepest = _depth(text)
    if deepest > MAX_DEPTH:
        raise RequestError(f"config.json nests objects and arrays more than {MAX_DEPTH} deep")
    try:
        cfg = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RequestError(f"config.json is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(cfg, dict):
        raise RequestError("config.json must be a JSON object ({...})")
    _walk_config(cfg, "")
    parts = [("", cfg)] + [(f"{k}.", cfg[k]) for k in NESTED_CONFIGS if isinstance(cfg.get(k), dict)]
    for where, part in parts:
        for key, (bound, why) in CONFIG_BOUNDS.items():
            v = part.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v > bound:
                raise RequestError(f"config.json: {where}{key} is {v:,}, more than the {bound:,} the calculator "
                                   f"sizes ({why})")
    return cfg


# --------------------------------------------------------------------------- an exported catalog

FRACTIONS = frozenset({"utilization", "hbm", "attention", "moe", "compute", "efficiency", "link_fraction",
                       "min_saving"})
"""Keys whose numbers are shares of a peak or of memory: within (0, 1], as data/'s schema holds them."""
MAY_BE_ZERO = frozenset({"dense_layers", "shared_experts", "mtp_layers", "per_peer_s", "low", "high",
                         "label_bytes", "prompt_step_host_s", "host_per_request"})
"""Keys whose numbers may be zero: counts of optional parts, a collective's per-peer cost, a band's error bounds
(which may be negative: a model that over-predicts), a time model's what-if host time (none in data/), an executor's
host time per request (none where no source times it)."""
SIGNED = frozenset({"low", "high"})


def _check_number(value: float, path: str, key: str, problems: list[str]) -> None:
    if not math.isfinite(value):
        problems.append(f"{path} is {value!r}")
    elif key in FRACTIONS and not 0 < value <= 1:
        problems.append(f"{path} is {value!r}, not a fraction in (0, 1]")
    elif key in SIGNED:
        return
    elif key in MAY_BE_ZERO and value < 0:
        problems.append(f"{path} is {value!r}, below zero")
    elif key not in MAY_BE_ZERO and not value > 0:
        problems.append(f"{path} is {value!r}, not above zero")


def _walk_catalog(value: Any, path: str, key: str, problems: list[str]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            # an MTP module's acceptance rates are fractions, not a band's signed error bounds
            inner = "efficiency" if key == "mtp_acceptance" and k in ("low", "high") else str(k)
            _walk_catalog(v, f"{path}.{k}", inner, problems)
    elif isinstance(value, list):
        if key == "weights":  # [batch, fraction] pairs
            for i, pair in enumerate(value):
                if isinstance(pair, list) and len(pair) == 2:
                    _walk_catalog(pair[0], f"{path}[{i}][0]", "rows", problems)
                    _walk_catalog(pair[1], f"{path}[{i}][1]", "efficiency", problems)
                else:
                    problems.append(f"{path}[{i}] is not a [batch, fraction] pair")
            return
        for i, v in enumerate(value):
            _walk_catalog(v, f"{path}[{i}]", key, problems)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(float(value), path, key, problems)


def check_catalog(d: Mapping[str, Any]) -> list[str]:
    """Every problem of an exported catalog's numbers, each with its path (empty: none)."""
    problems: list[str] = []
    for section in ("models", "chips", "nodes", "precisions", "memory_policies", "layout_policies", "scenarios",
                    "time_models", "prices"):
        if not isinstance(d.get(section), Mapping):
            problems.append(f"{section} is missing")
    if problems:
        return problems
    for section, entries in d.items():
        _walk_catalog(entries, str(section), str(section), problems)
    return problems


def load_catalog(text: str, where: str = "the catalog") -> EngineCatalog:
    """An exported catalog's JSON read into the engine's records, refused (RequestError, every problem named) if it
    holds NaN or infinity, a fraction outside (0, 1], a zero size, count, bandwidth or price, or a missing part."""
    try:
        d = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RequestError(f"{where} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(d, Mapping):
        raise RequestError(f"{where} must be a JSON object")
    problems = check_catalog(d)
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise RequestError(f"{where}: " + "; ".join(problems[:10]) + more)
    try:
        return decode(EngineCatalog, d)
    except (KeyError, TypeError, ValueError) as exc:
        raise RequestError(f"{where} is not an exported catalog: {type(exc).__name__} {exc}") from None
