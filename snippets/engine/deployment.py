"""One deployment: model x precision x node x scenario -> layout, memory, nodes, cost, decode ceiling.

`deploy` either checks a layout you give it against the engines' rules and the memory, or lets
the scenario's layout policy choose one. Every page, the grid and the notebook size through here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from snippets.engine.layout import Layout, layout_problems, tp_degrees
from snippets.engine.memory import (
    BYTES_16BIT,
    NO_KV_MEMORY,
    GpuMemory,
    KVCacheSize,
    decode_kv_read,
    estimated_max_model_len,
    gpu_memory,
    kv_bytes_per_sequence,
    kv_cache_size,
    kv_refusal_message,
    stage_memories,
    stage_weights,
    weight_bytes,
    weights_oom_message,
)
from snippets.engine.params import experts_touched
from snippets.engine.specs import (
    ChipSpec,
    EngineCatalog,
    KeptLinear,
    KernelGap,
    LayoutPolicySpec,
    MemoryPolicySpec,
    ModelSpec,
    NodeSpec,
    PrecisionSpec,
    PriceSpec,
    ScenarioSpec,
    ServeDefaults,
    TimeModelSpec,
    compute_format,
)


class NoLayout(ValueError):
    """No layout the engines accept holds the model at the scenario, within the policy."""


class RefusedLayout(ValueError):
    """The engines refuse this layout for this model (the message says which rule), or it does not fit."""


class KVCacheRefused(RefusedLayout):
    """The engine cannot serve one sequence of `max_model_len` tokens: once the weights, the activation peak and the
    memory outside PyTorch are in, its KV pool is empty or too short. `engine_message` is the engine's own error:
    vLLM's (v1/core/kv_cache_utils.py, `check_enough_kv_cache_memory`) or SGLang's (`engine` names which)."""

    def __init__(self, explanation: str, engine_message: str, *, available: float, needed: float,
                 max_model_len: int, estimated_max_len: int, engine: str = "vLLM") -> None:
        super().__init__(f"{explanation} {engine}: {engine_message}")
        self.engine = engine
        self.engine_message = engine_message
        self.available = available
        """The engine's available KV cache memory on the binding GPU, bytes (negative: nothing is left)."""
        self.needed = needed
        """KV bytes one sequence of `max_model_len` needs on that GPU."""
        self.max_model_len = max_model_len
        self.estimated_max_len = estimated_max_len
        """The longest sequence the available memory holds (vLLM's estimate; SGLang's max_req_len), 0 if none."""
class RefusedSetting(NoLayout):
    """The engine refuses the setting at start, whatever the layout and the memory (the message is the engine's)."""


class UnsupportedFormat(RefusedSetting):
    """The chip cannot compute in the precision's activation format at all, so no layout serves it: BF16 weights on
    a GPU whose tensor cores have no BF16 (a V100), where vLLM refuses at start (vllm/worker/worker.py,
    `_check_if_gpu_supports_dtype`; its message kept, with the chip named instead of its compute capability); or a
    format the engine has no kernel for on the chip (`kernel_gap_refusal`: vLLM's W8A8 INT8 on Blackwell, stopped
    by its first product in the profiling run at start; its FP8 on CDNA 2, where its kernel chooser finds none; each
    message kept word for word)."""


class ContextTooLong(RefusedSetting):
    """A request longer than the model reads: the engines refuse a maximum length above config.json's
    max_position_embeddings at start (vLLM's ModelConfig check of `max_model_len` against the derived maximum, unless
    VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; SGLang's of `--context-length`, unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1),
    and the site sizes every deployment for one request of the scenario's length. The message says it in a line (the
    grid shows it in a narrow column); `engine_message` is vLLM's own."""

    def __init__(self, model: str, tokens: int, limit: int) -> None:
        super().__init__(f"{tokens:,} tokens, more than the {limit:,} {model} reads (its context length)")
        self.model, self.tokens, self.limit = model, tokens, limit
        self.engine_message = (
            f"User-specified max_model_len ({tokens}) is greater than the derived max_model_len "
            f"(max_position_embeddings={limit} or model_max_length=None in model's config.json). To allow overriding "
            "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
            "with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
            "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding "
            "derived_max_model_len will cause a CUDA array out-of-bounds error.")
        """vLLM's message as its recent logs print it (a model with no released checkpoint, GPT-3, has no config.json
        for it to read: the message is what vLLM would say of one with this limit)."""


def context_refusal(spec: ModelSpec, tokens: int) -> ContextTooLong | None:
    """The engines' refusal of `tokens` (input + output) beyond what the model reads, or None within it (or where
    the model states no context length). The one rule: `setting` raises it, the command line's and the calculator's
    request checks (`requests.check_context`) word it for the field at fault."""
    limit = spec.architecture.context_length
    return None if limit is None or tokens <= limit else ContextTooLong(spec.name, tokens, limit)


def kv_precision_refusal(eng: EngineCatalog, precision: str) -> str | None:
    """Why `precision` cannot hold a KV cache, or None where it can: a weight format (group- or block-scaled) that
    vLLM's --kv-cache-dtype has no value for (`PrecisionSpec.kv_cache_dtype`). The one rule: `setting` raises it,
    the command line words it for its option."""
    p = eng.precisions[precision]
    if p.kv_cache_dtype:
        return None
    takes = ", ".join(sorted(q.id for q in eng.precisions.values() if q.kv_cache_dtype))
    return (f"{p.name} is a weight format, not a KV cache dtype (vLLM's --kv-cache-dtype has no value for it); "
            f"a KV precision is one of: {takes}")


def int8_gap_message(gap: KernelGap) -> str:
    """vLLM's error where its CUTLASS scaled product has no INT8 kernel for the chip (csrc/quantization/w8a8/cutlass/c3x/
    scaled_mm_helper.hpp at 31106f4f, `dispatch_scaled_mm`), word for word with the chip's SM version."""
    return f"Int8 not supported on SM{gap.sm}. Use FP8 quantization instead, or run on older arch (SM < 100)."


def kernel_gap_refusal(precision: PrecisionSpec, engine: str, chip: ChipSpec) -> str | None:
    """The engine's error where it has no kernel for `precision`'s products on `chip` (`PrecisionSpec.kernel_gaps`),
    or None where it has one. The one rule: `setting` raises it as `UnsupportedFormat`."""
    gap = precision.kernel_gap(engine, chip.id)
    if gap is None:
        return None
    if gap.message is not None:
        return gap.message
    if precision.tensor_format != "int8" or gap.sm is None:
        raise ValueError(f"{precision.id}: a kernel gap of {engine} recorded for format {precision.tensor_format!r} "
                         "with neither the engine's message nor INT8's SM version, whose error the engine words")
    return int8_gap_message(gap)


def bf16_refusal(chip: ChipSpec) -> str:
    """vLLM's message for BF16 on a GPU without it, naming the chip."""
    return ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
            f"Your {chip.name} has no BF16 tensor format. You can use float16 instead by explicitly setting the "
            "`dtype` flag in CLI, for example: --dtype=half.")


@dataclass(frozen=True)
class Setting:
    """Everything a deployment is computed from, looked up by id.

    The records its memory and layout rest on are held; its time model and its price are held as ids and looked up
    in the catalog's tables (`time_models`, `prices`) where a time or a cost is computed (`time_model`, `price`), so
    a table that notes its lookups (a page's sources, `snippets.pages.sources`) notes them only there."""

    model: ModelSpec
    precision: PrecisionSpec
    kv_precision: PrecisionSpec
    chip: ChipSpec
    node: NodeSpec
    scenario: ScenarioSpec
    memory_policy: MemoryPolicySpec
    layout_policy: LayoutPolicySpec
    time_model_id: str
    """The time model's id: the scenario's."""
    time_models: Mapping[str, TimeModelSpec] = field(compare=False, repr=False)
    """The table `time_model_id` is looked up in: the catalog's (`EngineCatalog.time_models`), or a fitted one."""
    prices: Mapping[str, PriceSpec] = field(compare=False, repr=False)
    """The table the chip's price is looked up in: the catalog's (`EngineCatalog.prices`), by accelerator id."""
    activation_bytes: float = BYTES_16BIT
    """Bytes of one activation: the model's dtype (config.json's torch_dtype), in which vLLM computes."""
    kept_override: frozenset[KeptLinear] | None = None
    """The linear layers the checkpoint a run serves keeps at 16 bits, where the run names its own checkpoint (a
    publisher's quantized checkpoint of a model whose record keeps no list for that precision); None: the model's."""

    @property
    def time_model(self) -> TimeModelSpec:
        """The time model, looked up by id at each use (each time, throughput or cost computed), as it prices a step
        on this setting's chip under its memory policy's engine (`TimeModelSpec.for_chip`: the chip's own NCCL
        timings, its own custom all-reduce timings where they are that engine's, and the engine's all-reduce limits
        on the chip where its release sends mid-sized messages to symmetric memory, for BF16 activations only)."""
        pol = self.memory_policy
        table = pol.allreduce_table(self.chip.id, self.model.dtype in (None, "bf16"))
        return self.time_models[self.time_model_id].for_chip(self.chip.id, pol.engine, table)

    @property
    def kept_16bit(self) -> frozenset[str]:
        """The linear layers the checkpoint keeps at 16 bits: the run's own (`kept_override`) where it names one, else
        the model's checkpoint in this precision (`ModelSpec.kept_16bit`); none at 16 bits or wider."""
        if self.kept_override is not None and self.precision.bits_per_param < 16:
            return frozenset(self.kept_override)
        return self.model.kept_16bit(self.precision)

    @property
    def expert_pad(self) -> tuple[int, int]:
        """The (hidden, intermediate) multiples the engine pads the routed experts to in memory: an MXFP4 checkpoint's,
        as its fused-MoE kernel on this chip lays them out (`MemoryPolicySpec.mxfp4_padding`); (1, 1)
        otherwise."""
        if self.precision.id != "mxfp4" or self.model.architecture.moe is None:
            return (1, 1)
        return self.memory_policy.mxfp4_padding(self.chip)

    @property
    def vision(self) -> bool:
        """Whether the engine holds the checkpoint's image encoder: the model has one (`Arch.vision`) and the memory
        policy's engine builds it on this chip (`MemoryPolicySpec.loads_vision_encoder`)."""
        return self.model.architecture.vision is not None and self.memory_policy.loads_vision_encoder(self.chip)

    @property
    def priced(self) -> bool:
        """Whether the site has a price for the chip (nothing is looked up)."""
        return self.chip.id in self.prices

    @property
    def price(self) -> PriceSpec | None:
        """The site's price for the chip, looked up at each use (each cost computed); None if unpriced."""
        return self.prices[self.chip.id] if self.priced else None

    @property
    def sources(self) -> tuple[tuple[str, str], ...]:
        """The (file, id) of the data/ entries the setting's records are (model, precision, KV precision, chip, node,
        scenario, memory and layout policies); its time model's and price's are theirs (`TimeModelSpec.sources`,
        `PriceSpec.sources`), looked up where they are used."""
        return (("models", self.model.id), ("precisions", self.precision.id), ("precisions", self.kv_precision.id),
                ("accelerators", self.chip.id), ("interconnects", self.node.id), ("scenarios", self.scenario.id),
                ("policies", self.memory_policy.id), ("policies", self.layout_policy.id))

    def memory(self, layout: Layout, sequences: int | None = None) -> GpuMemory:
        s = self.scenario
        return gpu_memory(self.model.architecture, self.precision, self.kv_precision, layout, self.memory_policy,
                          self.chip.capacity_bytes, self.chip.label_bytes, s.context_tokens,
                          s.concurrency if sequences is None else sequences, self.activation_bytes, self.kept_16bit,
                          self.expert_pad, self.vision)

    def stages(self, layout: Layout, sequences: int | None = None) -> tuple[GpuMemory, ...]:
        """One GPU of each pipeline stage of `layout` at the scenario (or `sequences` of its context)."""
        s = self.scenario
        return stage_memories(self.model.architecture, self.precision, self.kv_precision, layout, self.memory_policy,
                              self.chip.capacity_bytes, self.chip.label_bytes, s.context_tokens,
                              s.concurrency if sequences is None else sequences, self.activation_bytes,
                              self.kept_16bit, self.expert_pad, self.vision)

    def kv_refusal(self, layout: Layout) -> KVCacheRefused | None:
        """The engine's refusal of `layout` for the scenario's context (`max_model_len`), or None if it serves it:
        vLLM's at start; SGLang's (a static pool, `kv_share_of` "static") as `_sglang_refusal` says."""
        m = self.memory(layout, 1)
        if m.starts:
            return None
        gib = 2**30
        what = (f"weights {m.weights / gib:.2f}, activation peak {m.activations / gib:.2f}, outside PyTorch "
                f"{m.non_torch / gib:.2f} GiB per GPU")
        on = f"{layout.label}: {self.model.name} in {self.precision.name} on {self.chip.name}"
        head = (f"{on} leaves {m.kv_room / gib:.2f} GiB of the {m.pool / gib:.2f} GiB pool for the KV cache ({what})"
                if m.kv_room > 0 else
                f"{on} leaves nothing of the {m.pool / gib:.2f} GiB pool for the KV cache ({what}: "
                f"{-m.kv_room / gib:.2f} GiB more than the pool)")
        engine = "SGLang" if self.memory_policy.kv_share_of == "static" else "vLLM"
        oom = weights_oom_message(self.chip.vendor)
        # loading stops before any pool is sized, on whichever stage's GPUs its weights overflow (the heaviest
        # stage, which need not be the one whose KV room binds)
        heaviest = max(self.stages(layout, 1), key=lambda st: st.weights) if layout.pp > 1 else m
        if heaviest.weights > self.chip.capacity_bytes and oom is not None:
            whose = "its weights" if layout.pp == 1 else (
                f"the weights of its heaviest stage (layers {heaviest.first_layer} to "
                f"{heaviest.first_layer + heaviest.layers - 1})")
            return KVCacheRefused(f"{on}: {whose}, {heaviest.weights / gib:.2f} GiB per GPU, exceed the GPU's "
                                  f"{self.chip.capacity_bytes / gib:.2f} GiB, so loading them fails.", oom,
                                  available=m.kv_room, needed=m.kv_per_sequence, max_model_len=m.max_model_len,
                                  estimated_max_len=0, engine=engine)
        if engine == "SGLang":
            return self._sglang_refusal(layout, m, head)
        if m.kv_room <= 0:
            return KVCacheRefused(head + ".", NO_KV_MEMORY, available=m.kv_room,
                                  needed=m.kv_per_sequence, max_model_len=m.max_model_len, estimated_max_len=0)
        est = estimated_max_model_len(self.model.architecture, m.first_layer, m.layers, layout.tp,
                                      self.kv_precision.bytes_per_param, m.kv_room, m.max_model_len, self.memory_policy)
        return KVCacheRefused(
            head + f"; one sequence of {m.max_model_len:,} tokens needs {m.kv_per_sequence / gib:.2f} GiB.",
            kv_refusal_message(m.kv_room, m.kv_per_sequence, m.max_model_len, est),
            available=m.kv_room, needed=m.kv_per_sequence, max_model_len=m.max_model_len, estimated_max_len=est)

    def _sglang_refusal(self, layout: Layout, m: GpuMemory, head: str) -> KVCacheRefused:
        """SGLang with a pool too short for one sequence (ModelRunner.init_memory_pool, the scheduler and
        managers/utils.validate_input_length in 0.5.5.post1). An empty pool stops it at start; otherwise it starts with
        max_req_len = min(context length - 1, pool tokens - 1) and aborts a prompt of max_req_len - 5 tokens or more
        with its own message, or clips a shorter prompt's output to max_req_len - prompt - 1 tokens, silently: the
        scenario's output then does not fit either, and the explanation says by how much."""
        gib = 2**30

        def refused(explanation: str, message: str, longest: int) -> KVCacheRefused:
            return KVCacheRefused(explanation, message, available=m.kv_room, needed=m.kv_per_sequence,
                                  max_model_len=m.max_model_len, estimated_max_len=longest, engine="SGLang")

        if m.kv_room <= 0:
            share = self.memory_policy.share(layout.tp, layout.pp)
            return refused(head + ".", "Not enough memory. Please try to increase "
                           f"--mem-fraction-static. Current value: self.server_args.mem_fraction_static={share}", 0)
        pool_tokens = math.floor(m.kv_room / (m.kv_per_sequence / m.max_model_len))  # a token a slot (page size 1)
        max_req_len = min(m.max_model_len - 1, pool_tokens - 1)
        prompt = self.scenario.input_tokens
        head += (f"; its pool holds {pool_tokens:,} tokens, so SGLang takes requests of up to {max_req_len:,} tokens "
                 f"(max_req_len), short of one sequence of {m.max_model_len:,} ({m.kv_per_sequence / gib:.2f} GiB)")
        if prompt >= max_req_len - 5:
            return refused(head + ".", f"Input length ({prompt} tokens) exceeds the maximum allowed length "
                           f"({max_req_len - 5} tokens). Use a shorter input or enable --allow-auto-truncate.",
                           max_req_len)
        clipped = max(0, max_req_len - prompt - 1)
        return refused(head + f": it starts, and clips each {prompt:,}-token prompt's output to {clipped:,} tokens of "
                       f"the {self.scenario.output_tokens:,} asked for, without a message.", "(no message: the "
                       "output is cut short, max_new_tokens = min(max_new_tokens, max_req_len - input length - 1))",
                       max_req_len)


def setting(
    eng: EngineCatalog,
    model: str,
    precision: str,
    scenario: str,
    *,
    node: str | None = None,
    accelerator: str | None = None,
    layout_policy: str | None = None,
    concurrency: int | None = None,
    context_tokens: int | None = None,
    kv_precision: str | None = None,
    memory_policy: str | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    memory_fraction: float | None = None,
    chunked_prefill: bool | None = None,
    cuda_graphs: bool | None = None,
    mixed_steps: bool | None = None,
    cuda_graph_max_batch: int | None = None,
    engine: str | None = None,
    moe_kernel: str | None = None,
    symm_mem: bool | None = None,
    keeps_16bit: Iterable[KeptLinear] | None = None,
    text_only: bool = False,
) -> Setting:
    """Look every input up by id. The node is the scenario's, or `node`, or the first node of `accelerator`.

    The KV cache's precision is `kv_precision`, or what vLLM picks with --kv-cache-dtype auto: the model's dtype
    (config.json's torch_dtype), or the scenario's for a model with no published checkpoint. The memory policy
    (the scenario's, or `memory_policy`) is resolved for the chip: `max_num_seqs` and `max_num_batched_tokens` are
    vLLM's defaults there unless given; `memory_fraction`, where given, is the share of memory the engine's command
    gives it in place of the policy's `utilization` (of the total or of what is free, as the policy reads it);
    `chunked_prefill`, where given, says whether the engine splits a prompt
    across steps (the policy's own setting otherwise); `cuda_graphs` false runs every step without CUDA graphs (none
    captured, so none held in memory), true or None keeps the policy's graphs; `mixed_steps`, where given, says whether
    a step carries prompt tokens beside the decoding sequences' (the policy's own setting otherwise);
    `cuda_graph_max_batch`, where given, is the largest batch replayed in a CUDA graph (SGLang's --cuda-graph-max-bs)
    in place of the policy's rule; `engine`, where given, is the engine that ran where it is not the memory policy's
    (a run budgeted by another engine's policy), whose own collective timings then price its steps; `moe_kernel`,
    where given, is the fused-MoE kernel the engine's command names in place of the policy's (`moe_kernel`);
    `symm_mem`, where given, says whether the engine's release sends mid-sized all-reduces to symmetric memory (a
    release before that path, or a command that turns it off), in place of the policy's; `keeps_16bit`, where given,
    the linear layers the checkpoint the run serves keeps at 16 bits, in place of the model's (`Setting.kept_16bit`);
    `text_only` serves a multimodal checkpoint's text model alone, its image encoder not built (vLLM's
    --limit-mm-per-prompt with images 0, or --language-model-only), whatever the policy's `vision_encoder_vendors`."""
    sc = eng.scenarios[scenario]
    if concurrency is not None or context_tokens is not None:
        from dataclasses import replace

        out = sc.output_tokens if context_tokens is None else min(sc.output_tokens, context_tokens - 1)
        sc = replace(sc, concurrency=sc.concurrency if concurrency is None else concurrency,
                     input_tokens=sc.input_tokens if context_tokens is None else context_tokens - out,
                     output_tokens=out)
    if accelerator is not None and node is None:
        found = eng.node_of(accelerator)
        if found is None:
            raise KeyError(f"no node in data/ is built from accelerator {accelerator!r}")
        node = found.id
    n = eng.nodes[node or sc.node]
    spec, chip = eng.models[model], eng.chips[n.chip]
    if eng.precisions[precision].tensor_format == "bf16" and not chip.computes("bf16"):
        raise UnsupportedFormat(bf16_refusal(chip))
    refused = context_refusal(spec, sc.input_tokens + sc.output_tokens)
    if refused is not None:
        raise refused
    pol = eng.memory_policies[memory_policy or sc.memory_policy].for_chip(chip)
    gap = kernel_gap_refusal(eng.precisions[precision], pol.engine, chip)
    if gap is not None:
        raise UnsupportedFormat(gap)
    if max_num_seqs is not None or max_num_batched_tokens is not None:
        from dataclasses import replace

        pol = replace(pol, serve_defaults=ServeDefaults(max_num_seqs or pol.max_num_seqs,
                                                        max_num_batched_tokens or pol.max_num_batched_tokens))
    if memory_fraction is not None:
        from dataclasses import replace

        if not 0 < memory_fraction <= 1:
            raise ValueError(f"memory_fraction {memory_fraction} is not a share: above 0, at most 1")
        pol = replace(pol, utilization=memory_fraction, fraction_given=True)
    if chunked_prefill is not None:
        from dataclasses import replace

        pol = replace(pol, chunked_prefill=chunked_prefill)
    if mixed_steps is not None:
        from dataclasses import replace

        pol = replace(pol, mixed_steps=mixed_steps)
    if cuda_graph_max_batch is not None and cuda_graphs is not False:
        from dataclasses import replace

        if cuda_graph_max_batch < 1:
            raise ValueError(f"cuda_graph_max_batch {cuda_graph_max_batch} is not a batch: at least 1")
        pol = replace(pol, cuda_graph_batch=cuda_graph_max_batch)
    if cuda_graphs is False:
        from dataclasses import replace

        pol = replace(pol, cuda_graph_batch="none", cuda_graphs=0.0)
    if engine is not None and engine != pol.engine:
        from dataclasses import replace

        pol = replace(pol, engine=engine, symm_mem=False)  # the policy's all-reduce tables are its own engine's
    if symm_mem is not None and pol.symm_mem != symm_mem:
        from dataclasses import replace

        if symm_mem and not pol.allreduce_tables:
            raise ValueError(f"memory policy {pol.id} records no symmetric-memory all-reduce limits")
        pol = replace(pol, symm_mem=symm_mem)
    if moe_kernel is not None:
        from dataclasses import replace

        pol = replace(pol, moe_kernel=moe_kernel)
    if text_only and pol.vision_encoder_vendors:
        from dataclasses import replace

        pol = replace(pol, vision_encoder_vendors=frozenset())
    kv_id = kv_precision or auto_kv_precision(eng, model, sc.id)
    kv_refused = kv_precision_refusal(eng, kv_id)
    if kv_refused is not None:
        raise UnsupportedFormat(kv_refused)
    dtype = None if spec.dtype is None else eng.precisions[spec.dtype]
    return Setting(
        model=spec, precision=eng.precisions[precision],
        kv_precision=eng.precisions[kv_id],
        chip=chip, node=n, scenario=sc, memory_policy=pol,
        layout_policy=eng.layout_policies[layout_policy or sc.layout_policy], time_model_id=sc.time_model,
        time_models=eng.time_models, prices=eng.prices,
        activation_bytes=BYTES_16BIT if dtype is None else dtype.bytes_per_param,
        kept_override=None if keeps_16bit is None else frozenset(keeps_16bit),
    )


def auto_kv_precision(eng: EngineCatalog, model: str, scenario: str) -> str:
    """The KV cache's precision vLLM picks with --kv-cache-dtype auto: the model's dtype (config.json's torch_dtype;
    an FP8 or MXFP4 checkpoint still computes, and caches, in it); the scenario's for a model with no checkpoint."""
    dtype = eng.models[model].dtype
    return eng.scenarios[scenario].kv_precision if dtype is None else dtype


def as_shipped(eng: EngineCatalog, model: str, precision: str) -> str:
    """The precision a deployment in `precision` loads for `model`: the developer's own checkpoint of that format
    and width where one is released (Qwen3's FP8 is block-quantized), else `precision` as named."""
    want = eng.precisions[precision]
    for pid in eng.models[model].shipped_precisions:
        p = eng.precisions[pid]
        if p.tensor_format == want.tensor_format and round(p.bits_per_param) == round(want.bits_per_param):
            return pid
    return precision


def _with_ep(st: Setting, tp: int, pp: int) -> Layout:
    moe = st.model.architecture.moe is not None and st.layout_policy.expert_parallel
    return Layout(tp, pp, ep=tp if moe else 1)


def choose(st: Setting) -> tuple[Layout, str]:
    """The layout the setting's policy picks, and why, in one sentence."""
    pol, arch, node = st.layout_policy, st.model.architecture, st.node
    limit = node.gpus if pol.tp_limit == "node" else node.domain
    tps = [t for t in tp_degrees(arch, limit) if not layout_problems(arch, _with_ep(st, t, 1), st.precision)]
    if not tps:
        raise NoLayout(f"no TP degree up to {limit} divides {st.model.name}'s heads (and its quantization blocks)")
    order = sorted(tps, reverse=pol.prefer == "tp")

    def fits(lay: Layout) -> bool:
        return not layout_problems(arch, lay, st.precision) and st.memory(lay).fits

    if pol.across_nodes == "pp":
        for t in sorted(tps):
            lay = _with_ep(st, t, 1)
            if fits(lay):
                return lay, f"the smallest TP degree whose GPUs hold it ({pol.name})"
        t = max(tps)
        for pp in range(2, arch.layers + 1):
            lay = _with_ep(st, t, pp)
            if fits(lay):
                return lay, f"TP{t} fills each node and {pp} pipeline stages hold it ({pol.name})"
        raise NoLayout(f"{st.model.name} does not fit even one layer per stage at TP{t}")
    most = limit * arch.layers
    for gpus in range(1, most + 1):
        for t in order:
            if gpus % t or gpus // t > arch.layers:
                continue
            lay = _with_ep(st, t, gpus // t)
            if pol.whole_nodes and lay.gpus > node.gpus and lay.gpus % node.gpus:
                continue
            if fits(lay):
                first = "TP before PP" if pol.prefer == "tp" else "PP before TP"
                return lay, f"the fewest GPUs that hold it, {first} ({pol.name})"
    raise NoLayout(f"{st.model.name} does not fit on up to {most} GPUs")


GIVEN = "given"
"""`Deployment.why` of a layout the caller passed in (`deploy(st, layout)`), which no policy chose."""


@dataclass(frozen=True)
class Deployment:
    """One replica of a model on a layout, at a scenario. Every figure a page shows of it is a property."""

    setting: Setting
    layout: Layout
    why: str
    """Which policy chose the layout and how, or "given" for a layout you passed in."""

    # ---------------------------------------------------------------- memory

    @cached_property
    def memory(self) -> GpuMemory:
        """The busiest GPU's memory at the scenario's sequences."""
        return self.setting.memory(self.layout)

    @property
    def weight_bytes(self) -> float:
        """One whole copy of the weights in the precision (embeddings and LM head as the checkpoint keeps them)."""
        return weight_bytes(self.setting.model.architecture, self.setting.precision, self.setting.kept_16bit)

    @property
    def params(self) -> float:
        from snippets.engine.params import total_params

        return float(total_params(self.setting.model.architecture))

    def kv_sequences(self, tokens: int) -> int:
        """Sequences of `tokens` tokens the KV pool holds at once, all DP ranks together (vLLM's "maximum
        concurrency for N tokens per request", rounded down), on the stage whose pool holds the fewest."""
        st = self.setting
        kvb = st.kv_precision.bytes_per_param
        fewest: int | None = None
        for m in self._stages:
            per = kv_bytes_per_sequence(st.model.architecture, m.first_layer, m.layers, self.layout.tp, kvb, tokens,
                                        st.memory_policy)
            x = m.kv_room / per
            n = 0 if m.kv_room <= 0 else math.floor(x + 1e-9 * max(1.0, x))
            fewest = n if fewest is None else min(fewest, n)
        return (fewest or 0) * self.layout.dp

    @cached_property
    def _stages(self) -> tuple[GpuMemory, ...]:
        return self.setting.stages(self.layout)

    @cached_property
    def kv_cache(self) -> KVCacheSize:
        """The KV cache each GPU's engine allocates for the scenario's context, in the terms of its start-up log
        (`memory.kv_cache_size`: vLLM's "GPU KV cache size" and "Maximum concurrency"), per data-parallel rank."""
        st = self.setting
        return kv_cache_size(st.model.architecture, self._stages, self.layout.tp, st.kv_precision.bytes_per_param,
                             st.memory_policy)

    @property
    def max_num_seqs(self) -> int:
        """Sequences vLLM runs at once at most, all DP ranks together (max_num_seqs per rank x DP)."""
        return self.setting.memory_policy.max_num_seqs * self.layout.dp

    @property
    def max_concurrency(self) -> int:
        """Sequences of the scenario's context in flight at once: what the KV pool holds, at most max_num_seqs per
        DP rank."""
        return min(self.kv_sequences(self.setting.scenario.context_tokens), self.max_num_seqs)

    # ---------------------------------------------------------------- GPUs, nodes, cost

    @property
    def gpus(self) -> int:
        return self.layout.gpus

    @property
    def gpus_per_node(self) -> int:
        return self.setting.node.gpus

    @property
    def nodes(self) -> int:
        return math.ceil(self.gpus / self.gpus_per_node)

    @property
    def fits_one_node(self) -> bool:
        return self.nodes == 1

    @property
    def gpus_rented(self) -> int:
        """GPUs paid for: the layout's, rounded up to the offering's rental unit (a whole 8-GPU instance)."""
        unit = 1 if self.setting.price is None else self.setting.price.gpus_per_unit
        return math.ceil(self.gpus / unit) * unit

    @property
    def cost_per_hour(self) -> float | None:
        """Dollars per hour of the rented GPUs at the site's indicative price; None if unpriced."""
        p = self.setting.price
        return None if p is None else self.gpus_rented * p.usd_per_gpu_hour

    @property
    def replicas_per_rental(self) -> int:
        """Copies of this deployment the rented GPUs hold (an 8-GPU instance holds four TP2 replicas)."""
        return max(1, self.gpus_rented // self.gpus)

    @property
    def rented_gpus_per_replica(self) -> float:
        """Rented GPUs one replica carries when the rented unit is filled with replicas: 2 for TP2 in an 8-GPU
        instance (four replicas), 4 for a 3-GPU layout (two replicas in 8). The divisor of a per-token cost."""
        return self.gpus_rented / self.replicas_per_rental

    @property
    def cost_per_replica_hour(self) -> float | None:
        """One replica's share of the rented unit's hourly cost, with the unit filled with replicas; None if unpriced."""
        c = self.cost_per_hour
        return None if c is None else c / self.replicas_per_rental

    # ---------------------------------------------------------------- compute format

    @property
    def compute_format(self) -> str:
        """The format the matrix units run in: the precision's, if the chip has it, else BF16 (weight-only), or FP16
        on a chip without BF16 (`specs.compute_format`)."""
        return compute_format(self.setting.chip.dense_flops, self.setting.precision.tensor_format)

    @property
    def weight_only(self) -> bool:
        """The chip lacks the precision's format: weights are stored in it but converted to BF16 to compute."""
        return self.compute_format != self.setting.precision.tensor_format

    # ---------------------------------------------------------------- decode ceiling

    def decode_step_bytes(self, batch: int = 1) -> float:
        """Bytes the GPUs of one stage after another read in one decode step of `batch` sequences at the scenario's
        context: the busiest GPU of each stage, summed over stages (a token passes them in turn)."""
        arch = self.setting.model.architecture
        touched = experts_touched(arch, batch)  # expected share of experts a step's tokens route to
        ctx, kvb = self.setting.scenario.context_tokens, self.setting.kv_precision.bytes_per_param
        total = 0.0
        for st in stage_weights(arch, self.setting.precision, self.layout, self.setting.kept_16bit):
            read = st.total - st.expert_bytes * (1 - touched)
            total += read + decode_kv_read(arch, st.layers, self.layout.tp, kvb, ctx, batch,
                                           first_layer=st.first_layer)
        return total

    @property
    def decode_ceiling(self) -> float:
        """Upper bound on one sequence's tokens per second: HBM bandwidth over the bytes a token's step reads.
        Compute, communication and latency are left out: a ceiling, not a prediction."""
        return self.setting.chip.hbm_bytes_per_s / self.decode_step_bytes(1)


def deploy(st: Setting, layout: Layout | None = None) -> Deployment:
    """The deployment of a setting: on `layout` (checked against the engines' rules and the memory), or on the
    layout the setting's policy chooses."""
    if layout is None:
        lay, why = choose(st)
        return Deployment(st, lay, why)
    problems = layout_problems(st.model.architecture, layout, st.precision)
    if problems:
        raise RefusedLayout(f"{layout.label} for {st.model.name}: " + "; ".join(problems))
    refused = st.kv_refusal(layout)
    if refused is not None:
        raise refused
    d = Deployment(st, layout, GIVEN)
    if not d.memory.fits:
        m = d.memory
        raise RefusedLayout(
            f"{layout.label}: {st.model.name} in {st.precision.name} needs {m.used / 2**30:.1f} GiB per GPU "
            f"({m.weights / 2**30:.1f} weights, {m.kv_cache / 2**30:.1f} KV cache), the pool has {m.pool / 2**30:.1f}"
        )
    return d


def feasible(st: Setting, layout: Layout) -> list[str]:
    """Why `layout` cannot serve the setting (rules broken, or memory short); empty if it can."""
    try:
        deploy(st, layout)
    except RefusedLayout as exc:
        return [str(exc)]
    return []
