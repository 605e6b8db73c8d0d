"""A step: one batch through every pipeline stage, as the list of its operations.

A batch holds the tokens an engine step computes together (vLLM's scheduler puts the decoding sequences first,
one token each, then prompt chunks up to `max_num_batched_tokens`): `decode_seqs` sequences with
`decode_context` tokens cached each, and `prefill_tokens` prompt tokens after `prefill_context` already cached.
Every matrix product runs on all of them at once (the weights are read once for the whole batch); attention
is per token and its context.

Per stage (vLLM's `get_pp_indices` split), per layer kind (dense or mixture-of-experts):

- attention's projections (QKV and O, or MLA's low-rank ones), attention itself, and with TP > 1 an
  all-reduce after O;
- a dense layer's MLP (gate-up, down) and its all-reduce;
- an MoE layer's router, shared experts and routed experts. Without data-parallel attention the tokens are on
  every rank, each rank computes its experts' (or slices') share for all of them and the output is summed by
  an all-reduce, as under TP (vLLM and SGLang with TP × EP on one node). With it (`dp` > 1), each rank holds
  its own tokens: a dispatch all-to-all sends each token (FP8, as DeepEP does) to the ranks of its experts and
  a combine all-to-all (BF16) brings the results back. The routed experts run as the engine's fused-MoE kernel
  runs them where the chip has that kernel's own figures (the memory policy's or the row's `moe_kernel`: its
  shares, and its fixed cost a layer in place of the count of kernels), else at the engines' median;
- the first stage looks up the embedding rows of the batch's tokens (not the table) and, with TP > 1,
  all-reduces them (vocabulary-parallel embedding); the last stage runs the final norm, the LM head on the
  tokens that need logits (one per decoding sequence, one per prompt finishing in this step) and sampling,
  gathering the logits across the TP group;
- between stages, a send of the hidden state and residual;
- outside a CUDA graph (a step of more tokens than the engine captures, or any step with prompt tokens where it
  captures decode steps only), the host's issue of every kernel and collective call, at the engine's cost per call:
  the host issues ahead while the GPU works, so the step waits only for what the issue takes beyond the GPU's work
  (an op named `ISSUE`, of kind `launch`);
- the host's time: the time model's per step (fitted), and the executor's work for each request of the step where
  the memory policy states it (`host_per_request`: TensorRT-LLM's PyTorch executor, a published timing). An
  overlap scheduler runs that work beside the GPU's, so the step lasts at least as long as it (its excess shown as
  host time); with `stage_host` each pipeline stage adds both to its own work, micro-batch after micro-batch.

`step` returns every op and `breakdown`: seconds by kind (`KINDS`, each present, 0 where none), which sum to
`total_s`. Standard library only.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from snippets.engine import bands as bands_mod
from snippets.engine import collectives as coll
from snippets.engine import ops
from snippets.engine.deployment import Deployment
from snippets.engine.layout import Layout, experts_per_gpu, kv_heads_per_gpu, pp_partition
from snippets.engine.memory import kv_bytes_per_token_per_gpu
from snippets.engine.ops import Op
from snippets.engine.params import cached_layers, experts_touched, moe_layers, normal_dispatch_copies, sliding_layers
from snippets.engine.specs import Arch, TimeModelSpec, columns_factor, ramp
from snippets.engine.topology import Link, group_link

PHASES = ("prefill", "decode")
PP_TENSORS = 2
"""Tensors a pipeline stage hands the next per token: the hidden state and the residual (vLLM's
IntermediateTensors for Llama-style models)."""
FP8_DISPATCH_BYTES = 1 + 4 / 128
"""Bytes per element of DeepEP's FP8 dispatch: one byte and a 4-byte scale per 128 elements."""
ROUTING_KERNELS = 4
"""Kernels around a fused MoE besides its two GEMMs: top-k, sorting tokens by expert, the activation, and the
weighted sum back."""
SAMPLING_KERNELS = 3
"""Kernels after the LM head: softmax or log-softmax, top-k/top-p, sampling."""


ISSUE = "host issue"
"""The op that holds what the host's issue of an eager step's kernels takes beyond the GPU's work (`run`)."""


@dataclass(frozen=True, slots=True)
class Batch:
    """The tokens of one engine step, all data-parallel ranks together."""

    decode_seqs: int = 0
    decode_context: float = 0.0
    """Tokens each decoding sequence has cached (the mean over them)."""
    prefill_tokens: int = 0
    prefill_context: float = 0.0
    """Prompt tokens already cached before this chunk (chunked prefill: the chunk's offset)."""
    prefill_finishing: int = 0
    """Prompts whose last chunk is in this step (each needs logits for its first token)."""
    query_per_seq: int = 1
    """Tokens each decoding sequence feeds (1; k + 1 when k drafted tokens are verified)."""
    prefill_seqs: int = 1
    """Prompts whose chunks share the step, `prefill_tokens / prefill_seqs` tokens each after `prefill_context` (a
    prefill-only worker batches several short prompts into one step); each attends only to its own tokens."""

    @property
    def tokens(self) -> int:
        return self.decode_seqs * self.query_per_seq + self.prefill_tokens

    @property
    def logits(self) -> int:
        return self.decode_seqs * self.query_per_seq + self.prefill_finishing


@dataclass(frozen=True, slots=True)
class Step:
    """One batch through every stage: its operations and their times."""

    phase: str
    batch: Batch
    ops: tuple[Op, ...]
    host_s: float
    total_s: float
    """Every op's time, and the host's per step."""

    @property
    def issued_s(self) -> float:
        """The host's time to issue every kernel and collective call of the step outside a CUDA graph (0 where it
        replays one), waited for or not."""
        return sum(o.issue_s * o.count for o in self.ops)

    @property
    def waiting_on_issue_s(self) -> float:
        """Of `total_s`, the time the GPU waits for the host to issue the step's kernels outside a CUDA graph (what
        the issue takes beyond the GPU's work: `run`)."""
        return sum(o.launch_s for o in self.ops if o.name == ISSUE)

    @property
    def gpu_s(self) -> float:
        """Of `total_s`, the GPU's own work: without the host's time per step or its wait for the kernels' issue."""
        return self.total_s - self.host_s - self.waiting_on_issue_s

    @property
    def breakdown(self) -> dict[str, float]:
        """Seconds by kind of op, every kind present: an op's roofline and communication go to its kind, its
        kernels' fixed costs and the host's time per step to `launch`."""
        out = dict.fromkeys(ops.KINDS, 0.0)
        for o in self.ops:
            out[o.kind] += o.work_s * o.count
            out["launch"] += o.launch_s * o.count
        out["launch"] += self.host_s
        return out

    def _sum(self, attr: str) -> float:
        return float(sum(getattr(o, attr) * o.count for o in self.ops))

    @property
    def compute_s(self) -> float:
        return self._sum("compute_s")

    @property
    def memory_s(self) -> float:
        return self._sum("memory_s")

    @property
    def comm_s(self) -> float:
        return self._sum("comm_s")

    @property
    def comm_latency_s(self) -> float:
        return self._sum("comm_latency_s")

    @property
    def launch_s(self) -> float:
        return self._sum("launch_s") + self.host_s

    @property
    def flops(self) -> float:
        return sum(o.flops * o.count for o in self.ops if not o.comm_s)

    @property
    def bytes_read(self) -> float:
        return sum(o.bytes * o.count for o in self.ops if not o.comm_s)

    @property
    def weights_read(self) -> float:
        """Weight bytes (and embedding rows) the step reads on one GPU, every stage's."""
        return sum(o.weights * o.count for o in self.ops)

    @property
    def bound(self) -> str:
        """What the largest part is: compute, memory or communication."""
        parts = {"compute": self.compute_s, "memory": self.memory_s, "communication": self.comm_s}
        return max(parts, key=lambda k: parts[k])

    @property
    def algorithm(self) -> str:
        """The tensor-parallel all-reduce's algorithm (`none` without one)."""
        return next((o.algorithm for o in self.ops if o.kind == "allreduce" and o.name.startswith("attention")),
                    "none")

    def of(self, kind: str) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if o.kind == kind)


@dataclass(frozen=True, slots=True)
class StagePlan:
    first: int
    layers: int
    moe_layers: int
    sliding_layers: int


@functools.lru_cache(maxsize=4096)
def stage_plan(arch: Arch, layout: Layout) -> tuple[StagePlan, ...]:
    """Per pipeline stage: its first layer, layers, MoE layers and sliding-window layers. Memoized."""
    out = []
    start = 0
    for n in pp_partition(arch.layers, layout.pp):
        moe = moe_layers(arch, start, n)
        out.append(StagePlan(start, n, moe, sliding_layers(arch, start, n)))
        start += n
    return tuple(out)


def _causal_pairs(start: float, q: float) -> float:
    """(query, key) pairs of q queries at positions start+1 .. start+q, each attending to every earlier token."""
    return q * start + q * (q + 1) / 2


def _window_pairs(start: float, q: float, w: float) -> float:
    """The same with each query attending to at most its `w` latest tokens."""
    if start + q <= w:
        return _causal_pairs(start, q)
    if start >= w:
        return q * w
    below = w - start  # queries still inside the window's growth
    return _causal_pairs(start, below) + (q - below) * w


def _prefill_pairs(arch: Arch, plan: StagePlan, start: float, q: float) -> float:
    """Pairs over the stage's layers (averaged per layer) for a prompt chunk of q tokens after `start`."""
    full = plan.layers - plan.sliding_layers
    total = full * _causal_pairs(start, q)
    if plan.sliding_layers and arch.sliding_window is not None:
        total += plan.sliding_layers * _window_pairs(start, q, arch.sliding_window)
    return total / plan.layers


def _flops_per_pair(arch: Arch, tp: int, *, decode: bool) -> float:
    """FLOPs per (query, cached token) pair on one GPU of one layer: QKᵀ and the weighted sum of V, 2 each.
    MLA decodes with the projections absorbed (scores and values in the latent); it prefills as multi-head."""
    heads = arch.attention_heads / tp
    m = arch.mla
    if m is not None:
        if decode:
            return 2 * heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim)
        return 2 * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
    return 2 * heads * 2 * arch.head_dim


def _attention_gemms(arch: Arch, tp: int) -> list[tuple[str, float, float, int]]:
    """(name, n, k, kernels) of one layer's attention projections on one GPU of the TP group."""
    h = arch.hidden_size
    m = arch.mla
    if m is not None:
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        heads = arch.attention_heads
        out: list[tuple[str, float, float, int]] = []
        if m.q_lora_rank is None:
            out.append(("q", heads * qk / tp, h, 2))
        else:
            out += [("q_a", m.q_lora_rank, h, 2), ("q_b", heads * qk / tp, m.q_lora_rank, 2)]
        out += [("kv_a", m.kv_lora_rank + m.qk_rope_head_dim, h, 1),
                ("kv_b", heads * (m.qk_nope_head_dim + m.v_head_dim) / tp, m.kv_lora_rank, 2),
                ("o", h, heads * m.v_head_dim / tp, 1)]
        return out
    q_out = arch.attention_heads * arch.head_dim
    kv_out = kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim
    return [("qkv", q_out / tp + 2 * kv_out, h, 2), ("o", h, q_out / tp, 1)]


_ATTENTION_GROUP = {"q": "attention_in", "q_a": "attention_in", "q_b": "attention_in", "kv_a": "attention_in",
                    "kv_b": "attention_in", "qkv": "attention_in", "o": "attention_out"}
"""Which group of `ModelSpec.keeps_16bit` each attention projection of `_attention_gemms` belongs to."""


def _mlp_gemms(arch: Arch, ffn: float) -> list[tuple[str, float, float, int]]:
    """(name, n, k, kernels) of an MLP of intermediate size `ffn` (already divided over the TP group)."""
    up = 2 * ffn if arch.mlp == "gated" else ffn
    return [("gate_up", up, arch.hidden_size, 2), ("down", arch.hidden_size, ffn, 2)]


def _around(arch: Arch, tokens: float, name: str, ffn: float) -> float:
    """Activation bytes the elementwise kernels next to an MLP GEMM read and write: the norm before gate-up
    (reads and writes the hidden state), the activation before down (reads gate and up, writes their product)."""
    if name == "gate_up":
        return 2 * tokens * arch.hidden_size * ops.ACTIVATION_BYTES
    return tokens * (3 if arch.mlp == "gated" else 2) * ffn * ops.ACTIVATION_BYTES


def _quant_kernels(d: Deployment) -> int:
    """Kernels a GEMM adds to quantize its activations: one where the matrix units run in 8 bits or fewer."""
    return 1 if d.compute_format in ("fp8", "int8", "fp6", "fp4") else 0


@dataclass(frozen=True, slots=True)
class Prep:
    """What every step of one deployment reads, resolved once (a prediction runs many steps)."""

    arch: Arch
    layout: Layout
    rates: ops.Rates
    tm: TimeModelSpec
    vendor: str
    tp_link: Link
    pp_link: Link | None
    ep_link: Link | None
    plans: tuple[StagePlan, ...]
    attention_gemms: tuple[tuple[str, float, float, int, float], ...]
    """(name, n, k, kernels, activation bytes around it per token)."""
    kept_16bit: frozenset[str]
    """Of `attention_gemms`, the projections the checkpoint keeps at 16 bits (`Setting.kept_16bit`)."""
    rates16: ops.Rates
    """The rates of a projection kept at 16 bits: 2 bytes a weight, the chip's BF16 peak and GEMM figures."""
    mlp_gemms: tuple[tuple[str, float, float, int, float], ...]
    kv_bytes: float
    emb_bytes: float
    head_bytes: float
    q_width: float
    decode_pair_flops: float
    prefill_pair_flops: float
    q_extra: int
    host_s: float
    quant_bytes: float = 0.0
    """Bytes per activation a quantization kernel reads and writes (none where the matrix units run at 16 bits)."""
    host_per_request_s: float = 0.0
    """The executor's host time per request of a step (the memory policy's `host_per_request`)."""
    stage_host: bool = False
    """Each pipeline stage adds the host's time per step to its own (the memory policy's `stage_host`)."""
    graphs_decode_only: bool = False
    """Only a step without prompt tokens replays a CUDA graph (the memory policy's `graphs_decode_only`)."""
    steps: dict[tuple[Batch, str], Step] = field(default_factory=dict, compare=False, repr=False)
    """Each batch's step once run (`run`): a search asks for the same few hundred steps of a layout many times.
    Local to this Prep: a prediction makes one and drops it; a search keeps its layouts' in its `Space`, which a
    caller may keep for the next search of the same setting (`snippets.engine.search.Space`, the calculator's
    `Calculator`): never module state."""
    bands: dict[tuple[str, bands_mod.Regime], bands_mod.Band] = field(default_factory=dict, compare=False, repr=False)
    """The time model's band of each (metric, regime) looked up once (`band`)."""

    def band(self, metric: str, regime: bands_mod.Regime) -> bands_mod.Band:
        """`bands.band` of the time model's table, looked up once per Prep."""
        key = (metric, regime)
        out = self.bands.get(key)
        if out is None:
            out = self.bands[key] = bands_mod.band(self.tm.bands, metric, regime)
        return out


def prepare(d: Deployment) -> Prep:
    st, lay = d.setting, d.layout
    arch, tm, chip = st.model.architecture, st.time_model, st.chip
    q_extra = _quant_kernels(d)
    h = arch.hidden_size
    kept = {name for name, _, _, _ in _attention_gemms(arch, lay.tp)
            if _ATTENTION_GROUP[name] in st.kept_16bit}  # projections the checkpoint leaves at 16 bits
    # the block's activations are quantized once, before its first quantized projection: o_proj's where the
    # projections into attention are kept at 16 bits
    first = next((n for n, _, _, _ in _attention_gemms(arch, lay.tp) if n not in kept and n in ("qkv", "q", "q_a", "o")),
                 None)
    prec = st.precision
    # a quantization kernel reads each activation at 16 bits and writes it in the weights' format
    quant = q_extra * (ops.ACTIVATION_BYTES + prec.bytes_per_param)
    attn = tuple((name, nn, kk, kernels + (q_extra if name == first else 0),
                  (2 * h * ops.ACTIVATION_BYTES if name in ("qkv", "q", "q_a") else 0.0)
                  + (quant * kk if name == first else 0.0))
                 for name, nn, kk, kernels in _attention_gemms(arch, lay.tp))
    ffn = arch.ffn_size / lay.tp
    mlp = tuple((name, nn, kk, kernels + q_extra, _around(arch, 1.0, name, ffn) + quant * kk)
                for name, nn, kk, kernels in _mlp_gemms(arch, ffn))
    emb_b = 2.0 if "embeddings" in prec.keeps_16bit else prec.bytes_per_param
    head_b = 2.0 if "lm_head" in prec.keeps_16bit and prec.bits_per_param < 16 else prec.bytes_per_param
    if arch.tied_embeddings:
        head_b = emb_b
    m = arch.mla
    q_width = arch.attention_heads / lay.tp * (arch.head_dim if m is None else m.qk_nope_head_dim + m.qk_rope_head_dim)
    rates = ops.rates(chip, prec, tm, d.compute_format, st.memory_policy.moe_kernel, st.memory_policy.gemm_kernel,
                      st.kv_precision.tensor_format, st.memory_policy.engine, hidden=arch.hidden_size)
    # vLLM captures CUDA graphs up to min(2 x max_num_seqs, 512) tokens, and no more than a step's token budget
    # (VllmConfig._set_cudagraph_sizes); TensorRT-LLM's trtllm-bench pads every batch up to its max batch size
    # into a captured graph (cuda_graph_config: enable_padding, max_batch_size)
    pol = st.memory_policy
    if pol.cuda_graph_batch == "none":  # no graph captured: every step's kernels are issued by the host
        graph = 0
    elif pol.cuda_graph_batch == "max_num_seqs":
        graph = pol.max_num_seqs
    elif isinstance(pol.cuda_graph_batch, int):  # graphs of up to a fixed batch (a command's --cuda-graph-max-bs)
        graph = min(pol.cuda_graph_batch, pol.max_num_seqs)
    elif pol.cuda_graph_batch == "device_class":  # SGLang: padded graphs up to its device class's cap at this TP
        graph = min(pol.graph_cap(lay.tp) or 0, pol.max_num_seqs)
    else:
        graph = min(rates.graph_max_tokens, 2 * pol.max_num_seqs, pol.max_num_batched_tokens)
    if graph != rates.graph_max_tokens:
        rates = replace(rates, graph_max_tokens=int(graph))
    if pol.host_dispatch is not None:  # the engine's own issue cost outside a graph, where a source times it
        rates = replace(rates, host_s=pol.host_dispatch)
    # a projection kept at 16 bits streams 2 bytes a weight and multiplies in BF16, at the chip's BF16 GEMM figures
    rates16 = replace(rates, peak_flops=rates.bf16_flops, weight_bytes=2.0,
                      gemm=tm.chip(chip.id).gemm_for("bf16", pol.gemm_kernel)) if kept else rates
    return Prep(arch=arch, layout=lay, rates=rates, tm=tm, vendor=chip.vendor,
                tp_link=group_link(d, "tp"), pp_link=group_link(d, "pp") if lay.pp > 1 else None,
                ep_link=group_link(d, "ep") if lay.dp > 1 and lay.ep > 1 else None, plans=stage_plan(arch, lay),
                attention_gemms=attn, kept_16bit=frozenset(kept), rates16=rates16, mlp_gemms=mlp,
                kv_bytes=st.kv_precision.bytes_per_param, emb_bytes=emb_b,
                head_bytes=head_b, q_width=q_width, decode_pair_flops=_flops_per_pair(arch, lay.tp, decode=True),
                prefill_pair_flops=_flops_per_pair(arch, lay.tp, decode=False), q_extra=q_extra, quant_bytes=quant,
                host_s=tm.step_overhead_s, host_per_request_s=pol.host_per_request, stage_host=pol.stage_host,
                graphs_decode_only=pol.graphs_decode_only)


def run(d: Deployment, batch: Batch, phase: str = "decode", prep: Prep | None = None) -> Step:
    """The ops of `batch` through every stage of `d`, one stage after another (a token passes them in turn)."""
    if batch.tokens < 1:
        raise ValueError("a step needs at least one token")
    p = prep or prepare(d)
    done = p.steps.get((batch, phase))
    if done is not None:
        return done
    arch, lay, r, tm = p.arch, p.layout, p.rates, p.tm
    r16 = p.rates16
    if p.graphs_decode_only and batch.prefill_tokens > 0 and r.graph_max_tokens > 0:
        r = replace(r, graph_max_tokens=0)  # a step with prompt tokens runs eagerly (SGLang, TensorRT-LLM)
        r16 = replace(r16, graph_max_tokens=0)
    tp, dp = lay.tp, lay.dp
    h = arch.hidden_size
    tokens = batch.tokens
    local = tokens / dp  # tokens on one attention (data-parallel) rank; what its kernels see
    ar = coll.allreduce(local * h * ops.ACTIVATION_BYTES, p.tp_link, tm, p.vendor) if tp > 1 else coll.NONE
    dec_local = batch.decode_seqs * batch.query_per_seq / dp
    pre_local = batch.prefill_tokens / dp
    wf = ops.weight_share(r, local)  # every GEMM of `local` rows streams its weights at this share
    call = ops.issue(r, 1, local)  # the host's issue of one collective's call outside a CUDA graph
    out: list[Op] = []
    # stages of as many layers (of each kind) repeat the same ops: each group made once per step
    groups: dict[tuple[str, int], list[Op]] = {}
    for i, plan in enumerate(p.plans):
        n = plan.layers
        if i == 0:  # the batch's embedding rows, all-reduced across the vocabulary-parallel TP group
            rows = local * h * p.emb_bytes
            mem = rows / r.stream_bytes_per_s
            out.append(Op("gemm", "embedding", 0.0, rows, 0.0, mem, 0.0, ops.launch(r, 1), weights=rows,
                          issue_s=ops.issue(r, 1, local)))
            if tp > 1:
                out.append(ops.collective("allreduce", "embedding all-reduce", ar, issue_s=call))
        group = groups.get(("attention", n))
        if group is None:
            wf16 = ops.weight_share(r16, local) if p.kept_16bit else wf
            group = groups["attention", n] = [
                ops.gemm(name, local, nn, kk, r16 if name in p.kept_16bit else r, step_tokens=local,
                         kernels=kernels, count=n, extra_bytes=around * local,
                         share=wf16 if name in p.kept_16bit else wf)
                for name, nn, kk, kernels, around in p.attention_gemms]
        out += group
        if dec_local:
            ctx = max(batch.decode_context, 1.0)
            kv_tok = kv_bytes_per_token_per_gpu(arch, n, tp, p.kv_bytes, context_tokens=ctx, first_layer=plan.first)
            attended = cached_layers(arch, plan.first, n, ctx) * ctx / n if arch.mla is None else ctx
            out.append(ops.attention("attention (decode)", dec_local * attended, p.decode_pair_flops,
                                     dec_local / batch.query_per_seq * kv_tok * ctx / n, dec_local, p.q_width, r,
                                     step_tokens=local, count=n, context=attended if arch.mla is None else None))
        if pre_local:
            start = batch.prefill_context
            prompts = max(1.0, batch.prefill_seqs / dp)  # prompts on one rank, each of `q` tokens after `start`
            q = pre_local / prompts
            kv_tok = kv_bytes_per_token_per_gpu(arch, n, tp, p.kv_bytes, context_tokens=max(1.0, start + q),
                                                first_layer=plan.first)
            pairs = _prefill_pairs(arch, plan, start, q)
            rate = ops.prefill_attention_flops_per_s(r, prompts * arch.attention_heads / tp, 2 * pairs / q)
            out.append(ops.attention("attention (prefill)", prompts * pairs, p.prefill_pair_flops,
                                     prompts * kv_tok * (start + q) / n, pre_local, p.q_width, r, step_tokens=local,
                                     count=n, flops_per_s=rate))
        if tp > 1:
            out.append(ops.collective("allreduce", "attention all-reduce", ar, count=n, issue_s=call))
        dense = n - plan.moe_layers
        if dense:
            group = groups.get(("mlp", dense))
            if group is None:
                group = groups["mlp", dense] = [
                    ops.gemm(name, local, nn, kk, r, step_tokens=local, kernels=kernels, count=dense,
                             extra_bytes=around * local, share=wf) for name, nn, kk, kernels, around in p.mlp_gemms]
                if tp > 1:
                    group.append(ops.collective("allreduce", "MLP all-reduce", ar, count=dense, issue_s=call))
            out += group
        if plan.moe_layers:
            group = groups.get(("moe", plan.moe_layers))
            if group is None:
                group = groups["moe", plan.moe_layers] = _moe_ops(p, r, local, tokens, ar, wf, plan.moe_layers,
                                                                  prompt=batch.prefill_tokens > 0)
            out += group
        if i == len(p.plans) - 1:  # final norm, LM head on the tokens that need logits, sampling, logits gathered
            # in the model's 16-bit dtype (vLLM's LogitsProcessor._gather_logits, SGLang's unless
            # --enable-fp32-lm-head, TensorRT-LLM's LMHead with gather_output; each casts to FP32 after)
            lg = max(1.0, batch.logits / dp)
            vocab = arch.vocab_size / tp
            out.append(ops.gemm("lm_head", lg, vocab, h, r, step_tokens=local, kernels=2 + SAMPLING_KERNELS,
                                weight_bytes=vocab * h * p.head_bytes))
            if tp > 1:
                out.append(ops.collective("allreduce", "logits gather",
                                          coll.gather(lg * arch.vocab_size * ops.ACTIVATION_BYTES, p.tp_link, tm),
                                          issue_s=call))
    if p.pp_link is not None:
        sent = local * h * ops.ACTIVATION_BYTES * PP_TENSORS
        out.append(ops.collective("send", "stage send", coll.send(sent, p.pp_link, tm), count=lay.pp - 1,
                                  issue_s=call))
    work = sum(o.seconds * o.count for o in out)
    # outside a CUDA graph the host issues every kernel in turn while the GPU works through those issued before: the
    # step waits only for the issue beyond its GPU's work (a short prompt's eager prefill is the host's)
    issued = sum(o.issue_s * o.count for o in out)
    if issued > work:
        out.append(Op("launch", ISSUE, 0.0, 0.0, 0.0, 0.0, 0.0, issued - work))
        work = issued
    host = p.host_s + (tm.prompt_step_host_s if batch.prefill_tokens else 0.0)
    # the executor's work per request, on each attention rank for its own requests: added by every stage where each
    # stage's loop takes the micro-batches in turn; elsewhere overlapped with the GPU's work, bounding the step
    requests = batch.decode_seqs + (batch.prefill_seqs if batch.prefill_tokens else 0)
    per_request = p.host_per_request_s * math.ceil(requests / dp)
    host = lay.pp * (host + per_request) if p.stage_host and lay.pp > 1 else max(host, per_request - work)
    total = work + host
    result = p.steps[batch, phase] = Step(phase, batch, tuple(out), host, total)
    return result


def _moe_ops(p: Prep, r: ops.Rates, local: float, tokens: float, ar: coll.Collective, wf: float, count: int, *,
             prompt: bool = False) -> list[Op]:
    """The ops of `count` MoE layers on one GPU (`wf`: the weight stream's share at `local` rows). Under data-parallel
    attention the dispatch and combine are DeepEP's, chosen per step as SGLang's --deepep-mode auto chooses them
    (layers/moe/utils.py, `DeepEPMode.resolve`): a step that carries prompt tokens (`prompt`) runs the normal kernels,
    which send a token once to each rank of its node holding any of its experts (`is_token_in_rank`,
    csrc/kernels/layout.cu), once to each other node over the network, forwarded there over the fabric
    (csrc/kernels/internode.cu; `params.normal_dispatch_copies`), and combine per rank; a decode step runs the
    low-latency kernels, one copy per selected expert
    (csrc/kernels/internode_ll.cu). Both dispatch in FP8 with per-128 scales and combine in BF16."""
    arch, lay, tm = p.arch, p.layout, p.tm  # `r`: the step's rates (without graphs where it runs eagerly)
    call = ops.issue(r, 1, local)  # the host's issue of one collective's call outside a CUDA graph
    moe = arch.moe
    assert moe is not None  # noqa: S101 - called for MoE layers only
    h, e, k = arch.hidden_size, moe.experts, moe.active_experts
    gated = arch.mlp == "gated"
    expert_params = (3 if gated else 2) * h * moe.expert_ffn_size
    out = [ops.gemm("router", local, e, h, r, step_tokens=local, kind="moe", kernels=1, weight_bytes=h * e * 2.0,
                    count=count, share=wf)]
    if moe.shared_experts:
        ffn = moe.shared_experts * moe.expert_ffn_size / lay.tp
        for name, nn, kk, kernels in _mlp_gemms(arch, ffn):
            out.append(ops.gemm(f"shared {name}", local, nn, kk, r, step_tokens=local, kind="moe",
                                kernels=kernels + p.q_extra, extra_bytes=_around(arch, local, name, ffn)
                                + p.quant_bytes * local * kk, count=count,
                                share=wf))
    # the tokens the experts of one GPU serve: all of the group's (without DP attention every rank holds every
    # token; with it, the dispatch brings every rank's tokens to the ranks of their experts)
    served = tokens if lay.dp > 1 else local
    touched = experts_touched(arch, max(served, 1.0))
    if lay.ep > 1:
        held = experts_per_gpu(e, lay.ep)
        assignments = served * k / lay.ep
        weights = held * touched * expert_params * r.weight_bytes
        flops = 2 * assignments * expert_params
    else:
        weights = e * touched * expert_params / lay.tp * r.weight_bytes
        flops = 2 * served * k * expert_params / lay.tp
        assignments = served * k
    # the fused-MoE shares as measured: the experts' weight stream by the rows each touched expert sees
    # (`ChipEfficiency.moe_stream_for`), their arithmetic by the experts' shape on each GPU, thin TP slices of every
    # expert's FFN or whole experts under EP or on one GPU (`ChipEfficiency.moe_for`)
    sliced = lay.ep == 1 and lay.tp > 1
    rows = served * k / max(1.0, e * touched)
    # the grouped GEMMs fill their tiles with each expert's rows: below a few hundred rows they reach a measured
    # fraction of their large-batch share (`specs.ramp`), where the weight stream does not already bind
    # and, at large batch, by the columns of each expert a GPU holds (its FFN over the TP that slices it): a wide
    # expert fills the tiles better than the thin slice the share was read on (`specs.columns_factor`)
    columns = moe.expert_ffn_size / lay.tp if sliced else float(moe.expert_ffn_size)
    compute_share = (r.moe_compute * ramp(r.moe_ramp, rows) * columns_factor(*r.moe_columns, columns) if sliced
                     else r.moe_compute_whole * ramp(r.moe_ramp_whole, rows)
                     * columns_factor(*r.moe_columns_whole, columns))
    out.append(ops.gemm("experts", assignments, 0.0, 0.0, r, step_tokens=local, kind="moe",
                        kernels=2 + ROUTING_KERNELS + p.q_extra, weight_bytes=weights, flops=flops,
                        share=r.moe_stream.stream_share(max(1.0, rows)) * r.kernel_fraction,
                        compute_share=compute_share, fixed_s=r.moe_fixed_s,
                        extra_bytes=assignments * (2 * h + 2 * columns) * ops.ACTIVATION_BYTES
                        + p.quant_bytes * local * h,  # each rank quantizes its own tokens, before any dispatch
                        count=count))
    if p.ep_link is not None:
        per_gpu = tokens / lay.ep
        remote = (lay.ep - 1) / lay.ep
        if prompt:  # DeepEP's normal kernels: once per rank in the node, once per node across, forwarded there
            intra, inter = normal_dispatch_copies(arch, lay.ep, p.ep_link.local_gpus)
            dispatch = coll.alltoall_split(per_gpu * h * FP8_DISPATCH_BYTES * intra,
                                           per_gpu * h * FP8_DISPATCH_BYTES * inter, p.ep_link, tm)
            combine = coll.alltoall_split(per_gpu * h * ops.ACTIVATION_BYTES * intra,
                                          per_gpu * h * ops.ACTIVATION_BYTES * inter, p.ep_link, tm)
        else:  # the low-latency kernels: a copy per expert, spread over the group's ranks
            dispatch = coll.alltoall(per_gpu * k * h * FP8_DISPATCH_BYTES * remote, p.ep_link, tm)
            combine = coll.alltoall(per_gpu * k * h * ops.ACTIVATION_BYTES * remote, p.ep_link, tm)
        out += [ops.collective("alltoall", "dispatch", dispatch, count=count, issue_s=call),
                ops.collective("alltoall", "combine", combine, count=count, issue_s=call)]
    elif lay.tp > 1:
        out.append(ops.collective("allreduce", "MoE all-reduce", ar, count=count, issue_s=call))
    return out


def step(d: Deployment, phase: str, tokens: int, context: float, *, tokens_per_seq: int = 1) -> Step:
    """One step of `phase`: "decode", `tokens` sequences each with `context` tokens cached (and `tokens_per_seq`
    query tokens each); or "prefill", a prompt chunk of `tokens` tokens after `context` already cached."""
    if phase == "decode":
        return run(d, Batch(decode_seqs=tokens, decode_context=context, query_per_seq=tokens_per_seq), phase)
    if phase == "prefill":
        return run(d, Batch(prefill_tokens=tokens, prefill_context=context, prefill_finishing=1), phase)
    raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")

