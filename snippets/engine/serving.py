"""Serving: how steps make time to first token, time per output token and throughput.

Aggregated serving, as vLLM's v1 scheduler runs it (`Scheduler.schedule`): every step first gives each running
sequence its next token, then fills what is left of `max_num_batched_tokens` with prompt chunks, first come
first served; a request is admitted while fewer than `max_num_seqs` run and the KV cache holds it to its last token
(TensorRT-LLM's default GUARANTEED_NO_EVICT; vLLM allocates blocks as a sequence grows and preempts when they run
out: data/policies.yaml, vllm-default, says why the engine keeps the whole length).

With `concurrency` requests kept in flight (a closed loop: each finished request is replaced at once):

- **Admission**: at most `Deployment.max_concurrency`-style limits decode at once: the sequences of the
  request's length the KV pool holds, and the memory policy's `max_num_seqs` per data-parallel rank. The rest
  wait for a slot (`queue_s`).
- **Steps**: of the admitted requests, those past their prompt decode one token per step. Prompts arrive at
  the rate requests finish; their tokens ride in the same steps, a chunk of at most the budget left after the
  decode tokens. A request's prefill is its chunks' steps (`prefill_s`); a step carrying a chunk takes longer
  for everyone decoding in it, so the time per output token a request sees is the mean of plain decode steps
  and the steps carrying the other requests' chunks.
- **Queueing**: a prompt waits for the prompts ahead of it before its own chunks (an M/D/1 wait at the load the
  prefills put on the replica where prompts run apart; where they share steps, what is left of the step under
  way: `Prediction.prefill_wait_s`); where prompts arrive faster than steps filled to the token budget take them,
  every step is full and the rest wait in a queue, the prompt rate capped at what full steps compute
  (`_budget_limited`); a request beyond the admitted ones waits for a slot. Where the engine takes new
  prompts in only now and then while others decode, a request also waits for that (`_intake`): for the next poll
  of a scheduler that polls every N decode steps (SGLang's --scheduler-recv-interval), N ÷ 2 steps on average; for
  the window of TensorRT-LLM's batch waiting (`BatchWait`) to close.
- **Pipeline parallelism**: the decoding sequences are split into one micro-batch per stage; each step of a
  micro-batch passes every stage, and the stages work on different micro-batches at once (TensorRT-LLM's
  `_executor_loop_pp`, vLLM's batch queue of one batch per stage). Each micro-batch is scheduled as a step of its
  own: its share of the decoding sequences, and prompt tokens up to the token budget left in it. A prompt's own
  tokens still pass every stage in turn (its TTFT), but the time its steps add holds each stage for its share
  only, so the engine takes prompts in `pp` lanes: a prompt costs the decoding sequences its steps' extra time ÷
  `pp`, and the prompts' load on the engine is ÷ `pp` too.

`predict` solves that steady state (a few fixed-point passes) and carries the band of each figure
(`snippets.engine.bands`). The modes engines run besides:

- **Speculative decoding** (`Speculation`): a draft proposes k tokens, the model verifies them in one step of
  k + 1 query tokens per sequence, and with a chance α that each drafted token is accepted (given the ones before
  it were) a step yields (1 − α^(k+1)) ÷ (1 − α) tokens on average. The draft's own cost is counted: k forward
  passes of the model's multi-token-prediction module (DeepSeek-V3/R1), of a one-layer head (EAGLE), or of a
  separate draft model on the model's TP group, each a step of the time model; its weights and its KV cache
  take room from the pool.
- **Prefix caching** (`prefix_hit`): the share of each prompt found in the cache (whole KV blocks, never the
  last token, as vLLM's `get_computed_blocks` finds it) is not computed again: the prompt's chunks start after it,
  attending to it. The cached prefix holds KV memory: `prefix_groups` distinct prefixes (a system prompt, a
  shared document) stay in the pool once each, and each sequence holds only its own blocks beside them.
- **Disaggregated prefill and decode** (`predict_disaggregated`): prefill workers (`prefill_pool`) compute
  prompts and send their KV cache to decode workers (`decode_pool`), each pool on its own layout. The decode
  workers run only decode steps of `decode_batch` sequences each; the requests they finish set the arrival rate
  at the prefill pool, whose workers queue (M/D/1 at the load they carry). The KV cache's transfer crosses the
  link that joins the pools (the node's fabric when both fit in one node, the network otherwise) and is charged
  to the time to first token.

Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from snippets.engine import bands as bands_mod
from snippets.engine import collectives as coll
from snippets.engine import ops
from snippets.engine.deployment import Deployment
from snippets.engine.layout import Layout
from snippets.engine.memory import kv_bytes_per_sequence, kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.specs import Arch, ModelSpec
from snippets.engine.step import Batch, Prep, Step, prepare, run
from snippets.engine.topology import Link, fabric_bandwidth, fabric_hop

FIXED_POINT_PASSES = 32
"""Passes of the steady state's fixed point (the decoding set, and the prompts a step takes), each stopping early
once neither moves: where many short prompts share each step, their number climbs by a few a pass (Qwen3-32B's
128-token prompts on one H100 settle at 34 a step after 17 passes; 8 passes stopped them at 23, where the steady
state's own arrival rate brought 24 a step)."""
PREFILL_LOAD_CAP = 0.95
"""The prefill queue's load is capped below 1 (an M/D/1 wait diverges at 1)."""
SATURATION = 0.9
"""Decode is "at saturation" once the admitted sequences reach this share of what the KV cache holds."""
SATURATION_STEP = 2.0
"""... or once a decode step takes this many times one sequence's step: the work that grows with the batch (KV
reads, the experts it wakes, arithmetic) has overtaken what every step pays whatever its batch (the weights'
stream, kernel launches, the host)."""


def kv_sequences(d: Deployment, tokens: int) -> int:
    """Sequences of `tokens` tokens the KV pool holds, all data-parallel ranks together."""
    return d.kv_sequences(tokens)


def max_num_seqs(d: Deployment) -> int:
    """The engine's cap on sequences in flight per data-parallel rank (the memory policy's, resolved per chip)."""
    return d.setting.memory_policy.max_num_seqs


def token_budget(d: Deployment) -> int:
    """Tokens one step may compute per data-parallel rank (`max_num_batched_tokens`)."""
    return d.setting.memory_policy.max_num_batched_tokens


def admitted(d: Deployment, tokens: int) -> int:
    """Sequences of `tokens` tokens that may run at once: the KV cache's and `max_num_seqs`' limit."""
    return min(kv_sequences(d, tokens), max_num_seqs(d) * d.layout.dp)


def mixed_step(d: Deployment, decoding: int, context: float, chunk: int, chunk_context: float,
               finishing: int = 0, prep: Prep | None = None, *, query_per_seq: int = 1, prompts: int = 1) -> Step:
    """One step of `decoding` sequences (one micro-batch per pipeline stage, `query_per_seq` tokens each: k + 1
    when k drafted tokens are verified) and a prompt chunk: `chunk` tokens of `prompts` prompts, each after
    `chunk_context` tokens of its own."""
    micro = math.ceil(decoding / d.layout.pp) if decoding else 0
    return run(d, Batch(decode_seqs=micro, decode_context=context, prefill_tokens=chunk,
                        prefill_context=chunk_context, prefill_finishing=finishing, prefill_seqs=max(1, prompts),
                        query_per_seq=query_per_seq if decoding else 1),
               "decode" if decoding else "prefill", prep)


def in_turn(d: Deployment, steps: Sequence[Step], gpu_before_s: float = 0.0) -> list[float]:
    """The times of `steps` run one after another, the first after a step whose GPU work takes `gpu_before_s` (0: the
    GPU idle): where the engine's scheduler issues a step while the GPU runs the one before
    (`MemoryPolicySpec.overlap_schedule`: SGLang's, TensorRT-LLM's PyTorch executor's; at one pipeline stage, as
    both engines run another loop across stages), an eager step waits for the host's issue of its kernels only as
    far as the step before leaves it to (`Step.waiting_on_issue_s` less the step before's `Step.gpu_s`)."""
    if not d.setting.memory_policy.overlap_schedule or d.layout.pp > 1:  # pipeline stages run another loop
        return [x.total_s for x in steps]
    out, before = [], gpu_before_s
    for x in steps:
        out.append(x.total_s - min(x.waiting_on_issue_s, before))
        before = x.gpu_s
    return out


def prefill_alone_s(d: Deployment, input_tokens: int, prep: Prep | None = None) -> float:
    """One prompt of `input_tokens` through its chunks' steps with no decoding sequence beside it: what `predict`
    gives at one request in flight (its `prefill_s`), for any load."""
    whole = not d.setting.memory_policy.chunked_prefill
    prep = prep or prepare(d)
    parts = chunks(input_tokens, None if whole else token_budget(d) * d.layout.dp)
    return sum(in_turn(d, [mixed_step(d, 0, input_tokens, ck, before, finishing=1 if before + ck == input_tokens
                                      else 0, prep=prep) for ck, before in parts]))


def usd_per_mtok_input(d: Deployment, x: Prediction, prep: Prep | None = None) -> float | None:
    """The rent divided over prompt tokens were the replica only to prefill, one prompt of `x`'s length after another
    (`prefill_alone_s`), so the same at any load; None without a price."""
    c = x.cost_per_replica_hour
    return None if c is None else c / (x.input_tokens / prefill_alone_s(d, x.input_tokens, prep) * 3600) * 1e6


def chunks(n_in: int, budget: int | None) -> list[tuple[int, int]]:
    """(chunk tokens, tokens before it) of a prompt split into the step budget left for it."""
    if budget is None or budget >= n_in:
        return [(n_in, 0)]
    out, done = [], 0
    while done < n_in:
        c = min(budget, n_in - done)
        out.append((c, done))
        done += c
    return out


# --------------------------------------------------------------------------- speculative decoding

SPECULATION_METHODS = ("mtp", "eagle", "draft-model")
"""mtp: the model's own multi-token-prediction module (config.json's num_nextn_predict_layers); eagle: a head of
one decoder layer of the model's own width (EAGLE), fed the model's hidden states; draft-model: a separate smaller
model with the same tokenizer."""


@dataclass(frozen=True, slots=True)
class Speculation:
    """Speculative decoding: a draft proposes `draft_tokens` tokens a step, the model verifies them all at once."""

    draft_tokens: int
    """k: tokens the draft proposes per verify step (one draft forward pass each)."""
    acceptance: float
    """α: the chance that a drafted token is accepted, given that the ones before it were."""
    method: str = "mtp"
    draft_model: ModelSpec | None = None
    """The separate draft model (method "draft-model"), run on the model's tensor-parallel group."""
    acceptance_length: float | None = None
    """Tokens a verify step yields on average where a source measured it (SGLang's avg_spec_accept_length): it
    stands for the chain's formula, as a tree of drafts accepts more than a chain of the same depth."""
    tree_width: int = 1
    """Tokens each draft pass proposes per sequence (a tree's branching, SGLang's --speculative-eagle-topk)."""
    verify_tokens: int | None = None
    """Tokens per sequence the model verifies a step (a tree's --speculative-num-draft-tokens); k + 1 for a chain."""

    def __post_init__(self) -> None:
        if self.draft_tokens < 1:
            raise ValueError(f"speculative decoding drafts at least one token a step, not {self.draft_tokens}")
        if not 0 <= self.acceptance <= 1:
            raise ValueError(f"the acceptance rate is a share between 0 and 1, not {self.acceptance}")
        if self.method not in SPECULATION_METHODS:
            raise ValueError(f"speculation method must be one of {', '.join(SPECULATION_METHODS)}, not {self.method!r}")
        if (self.method == "draft-model") != (self.draft_model is not None):
            raise ValueError("name a draft model exactly when the method is draft-model")
        if self.tree_width < 1 or (self.verify_tokens is not None and self.verify_tokens < 2):
            raise ValueError("a draft pass proposes at least one token, and a step verifies at least two")
        if self.acceptance_length is not None and not 1 <= self.acceptance_length <= self.query_per_seq:
            raise ValueError(f"an acceptance length is between 1 and the {self.query_per_seq} tokens verified, "
                             f"not {self.acceptance_length}")

    @property
    def query_per_seq(self) -> int:
        """Tokens per sequence the verify step computes: the drafts and the last accepted token."""
        return self.verify_tokens or self.draft_tokens + 1

    @property
    def tokens_per_step(self) -> float:
        """Tokens one verify step yields on average: (1 − α^(k+1)) ÷ (1 − α), the accepted drafts and the token the
        model's own step adds (k + 1 when every draft is accepted, 1 when none is); or the measured acceptance
        length where one is given."""
        if self.acceptance_length is not None:
            return self.acceptance_length
        a, k = self.acceptance, self.draft_tokens
        if a >= 1:
            return float(k + 1)
        return (1 - a ** (k + 1)) / (1 - a)

    @property
    def label(self) -> str:
        what = self.draft_model.name if self.draft_model is not None else {"mtp": "MTP", "eagle": "EAGLE"}[self.method]
        return f"{what}, k = {self.draft_tokens}, α = {self.acceptance:g}"

    def as_dict(self) -> dict[str, object]:
        return {"method": self.method, "draft_tokens": self.draft_tokens, "acceptance": self.acceptance,
                "draft_model": None if self.draft_model is None else self.draft_model.id,
                "acceptance_length": self.acceptance_length, "tree_width": self.tree_width,
                "verify_tokens": self.query_per_seq, "tokens_per_step": self.tokens_per_step}


def draft_arch(arch: Arch, spec: Speculation) -> Arch:
    """The draft's architecture: the model's multi-token-prediction module (one more block of the model's own
    structure, a mixture-of-experts block for DeepSeek), one dense decoder layer of the model's width (EAGLE), or
    the draft model's."""
    if spec.method == "mtp":
        if arch.mtp_layers < 1:
            raise ValueError("the model has no multi-token-prediction module (num_nextn_predict_layers is 0): "
                             "speculate with a draft model or an EAGLE head")
        moe = None if arch.moe is None else replace(arch.moe, dense_layers=0, layer_step=1)
        return replace(arch, layers=arch.mtp_layers, moe=moe, mtp_layers=0)
    if spec.method == "eagle":
        return replace(arch, layers=1, moe=None, mtp_layers=0)
    assert spec.draft_model is not None  # noqa: S101 - checked by Speculation
    return spec.draft_model.architecture


@dataclass(frozen=True)
class Draft:
    """The draft of a speculative deployment: what one of its forward passes costs and what it holds in memory."""

    deployment: Deployment
    """The draft on the model's GPUs (its layout: the model's TP group, one pipeline stage)."""
    prep: Prep
    shares_embeddings: bool
    """The MTP module and an EAGLE head read the model's embedding and LM head (vLLM shares them)."""
    fuse_inputs: int
    """Hidden states its input projection fuses: 2 for MTP's eh_proj (the embedding and the model's last hidden
    state), 3 for EAGLE-3's fc, 0 for a draft model."""
    weight_bytes: float
    """Per GPU, beside the model's weights."""

    def pass_s(self, seqs: int, context: float, width: int = 1) -> float:
        """One draft forward pass of `seqs` sequences at `context` cached tokens, `width` tokens each (a tree's
        branches): the draft's step without the host's per-step time (the passes run inside the model's step),
        plus its input projection."""
        d, p = self.deployment, self.prep
        step = run(d, Batch(decode_seqs=seqs, decode_context=context, query_per_seq=width), "decode", p)
        total = step.total_s - step.host_s
        if self.fuse_inputs:
            h = d.setting.model.architecture.hidden_size
            local = seqs * width / d.layout.dp
            g = ops.gemm("input projection", local, h, self.fuse_inputs * h, p.rates, step_tokens=local,
                         weight_bytes=self.fuse_inputs * h * h * d.setting.activation_bytes)
            total += g.total_s
        return total

    def kv_bytes(self, tokens: int) -> float:
        """KV-cache bytes the draft holds on one GPU for one sequence of `tokens` tokens."""
        st = self.deployment.setting
        arch = st.model.architecture
        return kv_bytes_per_sequence(arch, 0, arch.layers, self.deployment.layout.tp, st.kv_precision.bytes_per_param,
                                     tokens, st.memory_policy)


def draft_of(d: Deployment, spec: Speculation) -> Draft:
    """The draft `spec` names, on `d`'s GPUs."""
    lay = d.layout
    if lay.pp > 1:
        raise ValueError(f"{lay.label}: speculative decoding with pipeline stages is not modelled")
    arch = draft_arch(d.setting.model.architecture, spec)
    if spec.method == "mtp":
        dlay = lay
    elif lay.dp > 1:
        raise ValueError(f"{lay.label}: a draft beside data-parallel attention is modelled only as the MTP module")
    else:
        dlay = Layout(lay.tp)
    from snippets.engine.layout import tp_problems

    problems = tp_problems(arch, dlay.tp)
    if problems:
        raise ValueError(f"the draft on the model's TP group: {'; '.join(problems)}")
    model = d.setting.model
    spec_model = spec.draft_model or ModelSpec(id=f"{model.id}-{spec.method}", name=f"{model.name} {spec.method}",
                                               nominal_params=0.0, stated_params=0.0, architecture=arch,
                                               keeps_16bit=model.keeps_16bit)  # the target's checkpoint
    dd = Deployment(replace(d.setting, model=spec_model), dlay, "draft")
    shares = spec.method != "draft-model"
    fuse = {"mtp": 2, "eagle": 3}.get(spec.method, 0)
    w = stage_weights(arch, d.setting.precision, dlay, dd.setting.kept_16bit)[0]
    weights = (w.body_bytes if shares else w.total) + fuse * arch.hidden_size ** 2 * d.setting.activation_bytes
    return Draft(dd, prepare(dd), shares, fuse, weights)


# --------------------------------------------------------------------------- prefix caching and admission


def cached_tokens(input_tokens: int, hit: float, block: int) -> int:
    """Prompt tokens found in the prefix cache at a hit rate `hit`: whole blocks only, and never the last token
    (vLLM computes at least one token of every prompt, `get_computed_blocks`)."""
    if not 0 <= hit <= 1:
        raise ValueError(f"the prefix hit rate is a share between 0 and 1, not {hit}")
    if hit == 0:
        return 0
    want = math.floor(hit * input_tokens + 1e-9) // block * block
    return max(0, min(want, (input_tokens - 1) // block * block))


def admission(d: Deployment, tokens: int, *, draft: Draft | None = None, cached: int = 0, groups: int = 1) -> int:
    """Sequences of `tokens` tokens that may run at once with a draft beside the model and `groups` cached prefixes
    of `cached` tokens held in the pool once each: the KV pool less the draft's weights and the prefixes, over each
    sequence's own blocks (the model's and the draft's), at most `max_num_seqs` per data-parallel rank."""
    if draft is None and cached == 0:
        return admitted(d, tokens)
    if groups < 1:
        raise ValueError(f"the prefix groups must be at least 1 (a cached prefix is held once), not {groups}")
    st = d.setting
    arch, pol, kvb, tp = st.model.architecture, st.memory_policy, st.kv_precision.bytes_per_param, d.layout.tp
    fewest: int | None = None
    for m in st.stages(d.layout):
        room = m.kv_room
        per = kv_bytes_per_sequence(arch, m.first_layer, m.layers, tp, kvb, tokens, pol)
        prefix = kv_bytes_per_sequence(arch, m.first_layer, m.layers, tp, kvb, cached, pol) if cached else 0.0
        if draft is not None:
            room -= draft.weight_bytes
            per += draft.kv_bytes(tokens)
            prefix += draft.kv_bytes(cached) if cached else 0.0
        room -= groups * prefix
        own = max(per - prefix, per / max(1, tokens))
        x = room / own
        n = 0 if room <= 0 else math.floor(x + 1e-9 * max(1.0, x))
        fewest = n if fewest is None else min(fewest, n)
    return min((fewest or 0) * d.layout.dp, max_num_seqs(d) * d.layout.dp)


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the model predicts for a deployment at a concurrency and request shape."""

    concurrency: int
    in_flight: int
    """Sequences admitted at once: the concurrency, or as many as the KV cache and `max_num_seqs` allow (and, where the
    engine does not split prompts, as many as leave a step room for one whole prompt beside their decode tokens)."""
    input_tokens: int
    output_tokens: int
    prefill_s: float
    """One request's prompt through its chunks' steps, alongside the others' decoding."""
    prefill_load: float
    """Share of the replica's steps that carry a prompt chunk (ρ of the prefill queue)."""
    queue_s: float
    """Average wait for a slot when more requests are in flight than the replica admits."""
    prefill_wait_s: float
    """Average wait before the prompt's first step: behind other prompts (M/D/1) where one prompt fills the steps,
    else what is left of the step under way when it arrives (`_steady`)."""
    ttft_s: float
    """Time to first token: the wait for a slot, for the engine to take the prompt in, behind other prompts, and the
    prompt's own steps."""
    tpot_s: float
    """Time per output token after the first, as a decoding request sees it."""
    decode: Step
    """One decode step of the decoding sequences (a micro-batch per stage), no prompt chunk."""
    prefill: Step
    """The request's first prompt chunk, with the decoding sequences alongside."""
    output_tokens_per_s: float
    """All sequences of the replica together."""
    gpus: int
    cost_per_replica_hour: float | None
    regime: str
    """The regime of the decode figures (vendor; dense or MoE; decode at low load or at saturation)."""
    ttft_regime: str
    tpot_band: bands_mod.Band
    ttft_band: bands_mod.Band
    throughput_band: bands_mod.Band
    speculation: Speculation | None = None
    tokens_per_step: float = 1.0
    """Output tokens one decode (verify) step yields per sequence on average."""
    draft_s: float = 0.0
    """The draft's passes in one step (k of them), zero without speculative decoding."""
    verify_extra_s: float = 0.0
    """What verifying k + 1 tokens a sequence adds to the step over a one-token decode step."""
    prefix_hit: float = 0.0
    cached_tokens: int = 0
    """Prompt tokens found in the prefix cache (whole blocks), not computed again."""
    admitted: int = 0
    """Sequences of the request's length the replica admits at once (KV cache, draft and prefixes, max_num_seqs)."""
    recv_wait_s: float = 0.0
    """Average wait for the engine to take a new prompt in while others decode (its scheduler's next poll, or the
    close of its batch-waiting window: `_intake`)."""
    request_rate: float | None = None
    """Requests arriving a second (`at_rate`: an open loop), or None where `concurrency` requests are kept in flight."""
    saturated: bool = False
    """`at_rate` only: the requests arrive faster than the replica finishes them with every slot it admits full, so
    their queue grows for as long as they keep coming; the figures are that full replica's, the wait in the growing
    queue left out."""

    mode = "aggregated"

    @property
    def speculation_cost_s(self) -> float:
        """What speculating costs a step besides its yield: the draft's passes and the verification's extra tokens."""
        return self.draft_s + self.verify_extra_s

    @property
    def mean_in_flight(self) -> float:
        """Requests in flight on average: at a request rate (`at_rate`) the rate times a request's life (Little's
        law), which lies between the two whole numbers whose closed loops bracket it; else, or where the rate
        saturates the replica (its queue then grows without end, and what runs is every slot it admits),
        `in_flight`."""
        if self.request_rate is None or self.saturated:
            return float(self.in_flight)
        return self.request_rate * (self.ttft_s + (self.output_tokens - 1) * self.tpot_s)

    @property
    def requests_per_s(self) -> float:
        """Requests finished a second: the output tokens a second over each request's output tokens."""
        return self.output_tokens_per_s / self.output_tokens

    @property
    def output_tokens_per_s_per_gpu(self) -> float:
        return self.output_tokens_per_s / self.gpus

    @property
    def output_tokens_per_s_per_user(self) -> float:
        """Interactivity: the tokens a second one request sees while it decodes (1 ÷ time per output token)."""
        return 1 / self.tpot_s

    @property
    def input_tokens_per_s(self) -> float:
        return self.output_tokens_per_s * self.input_tokens / self.output_tokens

    @property
    def usd_per_mtok_output(self) -> float | None:
        c = self.cost_per_replica_hour
        return None if c is None else c / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def breakdown(self) -> dict[str, float]:
        """One decode step's seconds by kind of op."""
        return self.decode.breakdown

    @property
    def tpot_range(self) -> tuple[float, float]:
        return self.tpot_band.around(self.tpot_s)

    @property
    def ttft_range(self) -> tuple[float, float]:
        return self.ttft_band.around(self.ttft_s)

    @property
    def throughput_range(self) -> tuple[float, float]:
        return self.throughput_band.around(self.output_tokens_per_s)

    @property
    def throughput_per_gpu_range(self) -> tuple[float, float]:
        """`throughput_range` per GPU, as `output_tokens_per_s_per_gpu` divides the throughput."""
        lo, hi = self.throughput_range
        return lo / self.gpus, hi / self.gpus

    @property
    def usd_per_mtok_output_range(self) -> tuple[float, float] | None:
        """The cost per output token's range: the throughput's band, inverted (`Band.inverse`)."""
        c = self.usd_per_mtok_output
        return None if c is None else self.throughput_band.inverse(c)


def _steady(b: int, n_out: int, dec: float, prefill: float, extra: float, shared: bool,
            prompt_steps: tuple[float, float], steps_per_token: float = 1.0,
            intake: Callable[[float], float] | None = None,
            lanes: int = 1) -> tuple[float, float, float, float, float]:
    """(lifetime, time per output token, prefill wait, prefill load, intake wait) of `b` requests kept in flight.

    A request lives L = I + W + P + D: I waiting for the engine to take it in (`intake` of the arrival rate, where
    the engine takes new prompts in only now and then), W waiting behind other prompts, P its own prompt's steps,
    D its n_out − 1 decode steps (× `steps_per_token`: a verify step yields 1 ÷ that many tokens under speculative
    decoding).
    Prompts start at λ = b / L; the other b − 1 requests' prompts land in a decoding request's window at
    λ (b − 1)/b, each adding `extra` to the steps it shares, so D = (n_out − 1) dec / (1 − λ extra (b − 1)/b).
    W is M/D/1's wait at load ρ = λ P; when several prompts share a step, it is what is left of the step under way
    when the prompt arrives (`prompt_steps` = (O, R): each prompt keeps the engine in steps that carry prompt tokens for O,
    those steps' length-weighted mean R = Σt² ÷ Σt; a share u = λ O of the time, the rest in decode steps): the mean
    residual life of the steps, (u R + (1 − u) dec) ÷ 2, as an arrival at a random time sees it. The lifetime cannot
    fall below b P (every prompt takes its turn) nor leave the decoding no time; between those bounds L − f(L)
    rises, so bisection finds the one steady state. With `lanes` pipeline stages the engine takes prompts in that
    many lanes (one a micro-batch): the load a prompt puts on it is P ÷ lanes, and `extra` is already the share of
    its steps that holds each stage (the caller's)."""
    def f(life: float) -> tuple[float, float, float, float, float]:
        lam = b / life
        i = intake(lam) if intake is not None and b > 1 else 0.0
        busy = lam * extra * (b - 1) / b
        d_win = (n_out - 1) * steps_per_token * dec / max(1e-9, 1 - busy)
        rho = lam * prefill / lanes if b > 1 else 0.0
        if b <= 1:
            w = 0.0
        elif shared:
            u = min(1.0, lam * prompt_steps[0] / lanes)
            w = (u * prompt_steps[1] + (1 - u) * dec) / 2
        else:
            w = prefill * rho / (2 * (1 - rho)) if rho < 1 else math.inf
        return i + w + prefill + d_win, d_win / max(1, n_out - 1), w, rho, i

    lo = max(prefill + (n_out - 1) * steps_per_token * dec, b * prefill / lanes if b > 1 and not shared else 0.0,
             extra * (b - 1) if b > 1 else 0.0) * (1 + 1e-9)
    hi = max(lo * 2, f(lo * 2)[0])
    while f(hi)[0] > hi:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid - f(mid)[0] > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-6 * hi:
            break
    life = hi
    _, tpot, w, rho, i = f(life)
    return life, (tpot if n_out > 1 else dec * steps_per_token), w, rho, i


def _budget_limited(d: Deployment, b: int, n_out: int, n_new: int, cached: int, left: int, alongside: int,
                    ctx: float, draft_s: float, spt: float, lifetime: float,
                    intake: Callable[[float], float] | None, prep: Prep,
                    q: int) -> tuple[float, float, float, float, float, Step, float] | None:
    """The steady state where prompts arrive faster than steps filled to the token budget take them, or None where
    they do not: (lifetime, time per output token, prefill wait, prefill load, intake wait, the full step, its time).

    vLLM's v1 scheduler (`Scheduler.schedule`) gives the running sequences their decode tokens first, then takes
    waiting prompts up to `max_num_batched_tokens`; the rest wait. Once prompts wait at every step, every step is
    full: the decoding sequences and `left` prompt tokens (with chunked prefill the budget is filled exactly, a
    prompt split across steps; without it, whole prompts only, `left` // n of them), so prompts start at most at
    that many tokens a step, λ_max = tokens ÷ n ÷ t_full. The closed loop's `b` requests then live b ÷ λ_max each;
    a decoding request sees a full step per token, its prompt is one full step, and the rest of its lifetime is its
    wait in the queue of prompts (charged to TTFT). The state holds only if the requests, waiting for nothing, would
    bring prompts faster than λ_max (b ÷ (t_full + the decode steps) > λ_max; with pipeline stages, each of the
    `pp` micro-batches in flight is such a step, so λ_max is `pp` times one's); otherwise prompts do not queue, and
    the caller keeps the state where several share a step. Whether the state applies is decided by that rate alone,
    not by how many prompts the last pass put in a step: a gate on that count let the fixed point swing between the
    two states and report whichever the last pass gave (one more request in flight could multiply the time per
    output token by 4.5, tests/unit/test_timing.py)."""
    chunked = d.setting.memory_policy.chunked_prefill
    whole = left // n_new
    tokens = left if chunked else whole * n_new
    touched = math.ceil(tokens / n_new)
    step = mixed_step(d, alongside, ctx, tokens, cached, finishing=whole, prep=prep, query_per_seq=q,
                      prompts=touched)
    t_full = step.total_s + (draft_s if alongside else 0.0)
    lam_max = tokens / n_new / t_full * d.layout.pp  # a full micro-batch in each pipeline stage
    if b / lifetime <= lam_max:
        return None
    i = intake(lam_max) if intake is not None and b > 1 else 0.0
    d_win = (n_out - 1) * spt * t_full
    if b / (i + t_full + d_win) <= lam_max:  # even with no wait, these requests bring fewer prompts than full steps take
        return None
    life = b / lam_max
    wait = life - i - t_full - d_win
    return life, t_full * spt, wait, 1.0, i, step, t_full


@dataclass(frozen=True, slots=True)
class BatchWait:
    """An engine that holds new prompts back while others decode, to prefill more of them in one step: TensorRT-LLM's
    batch waiting (tensorrt_llm/_torch/pyexecutor/py_executor.py, PyExecutor._waiting_requests, checked only while
    prompts wait and sequences decode) schedules the waiting prompts once `timeout_steps` steps have passed since it
    began holding them, or once the step's tokens (the waiting prompts' and one per decoding sequence) reach
    `max_tokens` (batch_wait_max_tokens_ratio × max_num_tokens)."""

    timeout_steps: int
    max_tokens: int


def _intake(recv_interval: int, batch_wait: BatchWait | None, dec_s: float, b: int,
            prompt_tokens: int) -> Callable[[float], float] | None:
    """The mean wait, at an arrival rate of prompts, before the engine takes a new prompt in while others decode.

    A scheduler polling every N steps (`recv_interval`; SGLang's SchedulerRecvSkipper, python/sglang/srt/managers/
    scheduler_recv_skipper.py at sgl-project/sglang 70310f05, with the weights of python/sglang/srt/environ.py: a
    decode step or an idle turn 1, any other step 1,000) is met at a random phase: N ÷ 2 steps. Batch waiting opens
    a window at the first held prompt that closes after `timeout_steps` steps or at the arrival that brings the
    tokens to `max_tokens` (k prompts): the first waits the whole window D, the λ D prompts arriving inside it D ÷ 2
    on average, so the mean is (D + λ D² ÷ 2) ÷ (1 + λ D)."""
    poll = recv_interval / 2 * dec_s if recv_interval > 1 else 0.0
    if batch_wait is None:
        return (lambda lam: poll) if poll else None
    timeout = batch_wait.timeout_steps * dec_s
    k = max(1, math.ceil((batch_wait.max_tokens - (b - 1)) / max(1, prompt_tokens)))

    def wait(lam: float) -> float:
        window = timeout if k > 1 else 0.0
        if k > 1 and lam > 0:
            window = min(timeout, (k - 1) / lam)
        return poll + (window + lam * window * window / 2) / (1 + lam * window)
    return wait


def saturated(d: Deployment, batch: int, cap: int, step: Step, context: float, prep: Prep | None = None,
              query_per_seq: int = 1) -> bool:
    """Whether decode of `batch` sequences (`step`) is at saturation: the KV cache (not `max_num_seqs`) nearly full
    (`SATURATION` of the `cap` sequences it admits), or the step `SATURATION_STEP` times one sequence's step. A
    benchmark that sets `max_num_seqs` to its concurrency is not saturated by that alone; the caller adds requests
    waiting for a slot."""
    if cap < max_num_seqs(d) * d.layout.dp and batch >= SATURATION * cap:
        return True
    if batch <= 1:
        return False
    alone = mixed_step(d, 1, context, 0, 0, prep=prep, query_per_seq=query_per_seq).total_s
    return step.total_s >= SATURATION_STEP * alone


def _regimes(d: Deployment, at_saturation: bool) -> tuple[bands_mod.Regime, bands_mod.Regime]:
    moe = d.setting.model.architecture.moe is not None
    vendor = d.setting.chip.vendor
    phase = "decode at saturation" if at_saturation else "decode at low load"
    return bands_mod.Regime(vendor, moe, phase), bands_mod.Regime(vendor, moe, "prefill")


def predict(d: Deployment, concurrency: int | None = None, input_tokens: int | None = None,
            output_tokens: int | None = None, *, speculation: Speculation | None = None, prefix_hit: float = 0.0,
            prefix_groups: int = 1, prep: Prep | None = None, draft: Draft | None = None,
            recv_interval: int = 1, batch_wait: BatchWait | None = None) -> Prediction:
    """TTFT, time per output token, throughput and cost per token of `d` with `concurrency` requests kept in
    flight (default: the scenario's), each `input_tokens` + `output_tokens` long (default: the scenario's), served
    aggregated; with `speculation`, speculative decoding; with `prefix_hit`, that share of each prompt found in
    the prefix cache (`prefix_groups` distinct prefixes held in the pool); with `recv_interval` N > 1, a scheduler
    that takes in new requests once every N decode steps (SGLang's --scheduler-recv-interval: a request arriving
    while others decode waits N ÷ 2 steps on average for the next poll; at one request in flight the scheduler is
    idle when it arrives and polls at once); with `batch_wait`, an engine that holds new prompts back while others
    decode until enough have gathered or a number of steps has passed (TensorRT-LLM's batch waiting,
    `BatchWait`). `prep` and `draft`, where given, are `prepare(d)` and `draft_of(d, speculation)` made once for
    many predictions of one deployment."""
    sc = d.setting.scenario
    c = sc.concurrency if concurrency is None else concurrency
    n_in = sc.input_tokens if input_tokens is None else input_tokens
    n_out = sc.output_tokens if output_tokens is None else output_tokens
    if min(c, n_in, n_out, recv_interval) < 1:
        raise ValueError("concurrency, input and output tokens and the receive interval must be at least 1")
    cached = cached_tokens(n_in, prefix_hit, d.setting.memory_policy.kv_block_tokens)
    if speculation is None:
        draft = None
    elif draft is None:
        draft = draft_of(d, speculation)
    cap = admission(d, n_in + n_out, draft=draft, cached=cached, groups=prefix_groups)
    if cap < 1:
        beside = [w for w, on in ((f"the draft's weights and cache ({draft.deployment.setting.model.name})"
                                   if draft else "", draft is not None),
                                  (f"{prefix_groups:,} cached prefixes of {cached:,} tokens", cached > 0)) if on]
        raise ValueError(f"{d.layout.label}: not one sequence of {n_in + n_out} tokens fits the KV cache"
                         + (f" beside {' and '.join(beside)}" if beside else ""))
    dp = d.layout.dp
    per_rank_budget = token_budget(d)
    ctx = n_in + n_out / 2
    n_new = n_in - cached
    q = 1 if speculation is None else speculation.query_per_seq
    whole = not d.setting.memory_policy.chunked_prefill
    # with mixed steps a prompt's tokens ride in the decoding sequences' steps; without them (SGLang) a step of
    # prompts runs alone, its whole budget theirs, while the decoding sequences wait for it
    mixed = d.setting.memory_policy.mixed_steps
    if whole and n_new > per_rank_budget:
        raise ValueError(f"{d.layout.label}: a prompt of {n_new} tokens exceeds the {per_rank_budget} tokens a step "
                         "computes, and the engine does not split prompts (chunked prefill off)")
    # without chunked prefill a prompt enters only a step whose decoding sequences leave room for all of it: the
    # requests in flight settle where one more prompt fits, the rest wait for a slot (with pipeline stages a step
    # is one micro-batch, holding its share of the decoding sequences)
    pp = d.layout.pp
    b = min(c, cap, ((per_rank_budget - n_new) // q + 1) * dp * pp) if whole else min(c, cap)
    per_step = 1.0 if speculation is None else speculation.tokens_per_step
    spt = 1.0 / per_step
    # steady state: for a decoding set of `bd` sequences, the lifetime L of a request solves L = f(L)
    # (f falls as L grows), found by bisection; bd itself is the decoding share of b at that L
    decoding = float(b)
    dec_step = pre_step = None
    tpot = prefill_s = wait = rho = lifetime = draft_s = verify_extra = poll = 0.0
    prep = prep or prepare(d)
    seen: set[tuple[int, int]] = set()
    k = 1  # prompts one step takes in: one, until a pass gives their arrival rate
    for _ in range(FIXED_POINT_PASSES):
        bd = max(1, round(decoding))
        if (bd, k) in seen:  # the decoding set and the prompts a step takes no longer move
            break
        seen.add((bd, k))
        # the decoding sequences' tokens come first in a mixed step; at one request in flight none decodes beside
        # its prompt, which takes the whole budget (as `prefill_alone_s` splits it)
        left = max(1, per_rank_budget - (math.ceil(bd * q / dp / pp) if mixed and b > 1 else 0)) * dp
        dec_step = mixed_step(d, bd, ctx, 0, 0, prep=prep, query_per_seq=q)
        if draft is not None and speculation is not None:
            draft_s = speculation.draft_tokens * draft.pass_s(bd, ctx, speculation.tree_width)
            verify_extra = dec_step.total_s - mixed_step(d, bd, ctx, 0, 0, prep=prep).total_s
        dec_s = dec_step.total_s + draft_s
        alongside = bd if b > 1 and mixed else 0
        steps = [mixed_step(d, alongside, ctx, k * ck, cached + before, finishing=k if before + ck == n_new else 0,
                            prep=prep, query_per_seq=q, prompts=k)
                 for ck, before in chunks(n_new, None if whole else left)]
        pre_step = steps[0]
        # a prompt's first step follows a decode step where others decode (at one request in flight, an idle GPU)
        times = [t + (draft_s if alongside else 0.0)
                 for t in in_turn(d, steps, dec_step.gpu_s if b > 1 else 0.0)]
        prefill_s = sum(times)
        # what a prompt's steps cost the decoding ones: its share of a step it shares with k - 1 others, whose
        # prompt tokens together may fill the step past what a decode step leaves idle (the compute roof); a step of
        # prompts alone costs them all of it, as they get no token from it
        extra = sum(t - (dec_s if mixed else 0.0) for t in times) / k / pp
        shared = b > 1 and left is not None and n_new <= left / 2  # several prompts fit one step
        intake = _intake(recv_interval, batch_wait, dec_s, b, n_new)
        # the time each prompt keeps the engine in steps that carry prompt tokens (shared with k - 1 others), and
        # those steps' length-weighted mean: what an arriving prompt finds left of the step under way
        prompt_steps = (prefill_s / k, sum(t * t for t in times) / prefill_s)
        lifetime, tpot, wait, rho, poll = _steady(b, n_out, dec_s, prefill_s, max(0.0, extra), shared, prompt_steps,
                                                  spt, intake, pp)
        if shared and mixed:  # steps of prompts alone (SGLang) have no full mixed step: prompts queue as above
            full = _budget_limited(d, b, n_out, n_new, cached, left, alongside, ctx, draft_s, spt, lifetime, intake,
                                   prep, q)
            if full is not None:
                lifetime, tpot, wait, rho, poll, pre_step, prefill_s = full
        decoding = b * (n_out - 1) * tpot / lifetime if n_out > 1 else 1.0
        # prompts arriving during one of these steps, at the steady state's rate b / L, share the next one: the step
        # takes every prompt waiting (up to what its budget leaves), so their count rounded up
        k = max(1, min(left // max(1, n_new), math.ceil(b / lifetime * times[0] / pp - 1e-9))) if shared else 1
    assert dec_step is not None and pre_step is not None  # noqa: S101 - the loop ran
    throughput = b * n_out / lifetime
    queue = (c - b) * lifetime / b if c > b else 0.0
    dec_regime, pre_regime = _regimes(d, c > cap or saturated(d, b, cap, dec_step, ctx, prep, q))
    return Prediction(
        concurrency=c, in_flight=b, input_tokens=n_in, output_tokens=n_out, prefill_s=prefill_s,
        prefill_load=rho, queue_s=queue, prefill_wait_s=wait, ttft_s=queue + poll + wait + prefill_s, tpot_s=tpot,
        decode=dec_step, prefill=pre_step, output_tokens_per_s=throughput, gpus=d.gpus,
        cost_per_replica_hour=d.cost_per_replica_hour, regime=dec_regime.label, ttft_regime=pre_regime.label,
        tpot_band=prep.band("tpot_ms", dec_regime), ttft_band=prep.band("ttft_ms", pre_regime),
        throughput_band=prep.band("output_tokens_per_s", dec_regime), speculation=speculation,
        tokens_per_step=per_step, draft_s=draft_s, verify_extra_s=verify_extra, prefix_hit=prefix_hit,
        cached_tokens=cached, admitted=cap, recv_wait_s=poll,
    )


def at_rate(d: Deployment, rate: float, input_tokens: int | None = None, output_tokens: int | None = None,
            **kw: Any) -> Prediction:
    """`predict` for requests arriving at `rate` a second (an open loop: a client sending at a request rate, not
    keeping a number in flight). In a steady state the requests finish as fast as they arrive, and by Little's law
    the replica holds rate × lifetime of them; the closed loop of b requests (`predict`) finishes b ÷ lifetime a
    second, which rises with b, so the steady state lies between the two whole numbers of requests whose rates
    bracket `rate`, and its time to first token and time per output token are interpolated between theirs (its
    prompts already wait as random arrivals do: `_steady`'s M/D/1 wait and the rest of the step under way). Below
    one request's own rate the replica is idle between requests and serves each alone. At or above what the
    replica finishes with every slot it admits full, there is no steady state: the queue grows as long as requests
    keep coming, and the figures are that full replica's (`Prediction.saturated`). `kw` goes to `predict`."""
    if not rate > 0 or math.isinf(rate):
        raise ValueError("the request rate must be a positive number of requests a second")
    prep = kw.pop("prep", None) or prepare(d)
    full = predict(d, 10**9, input_tokens, output_tokens, prep=prep, **kw)
    n_out = full.output_tokens
    if full.requests_per_s <= rate:
        return replace(full, concurrency=full.in_flight, queue_s=0.0, ttft_s=full.ttft_s - full.queue_s,
                       request_rate=rate, saturated=True)
    lo, hi = 0, full.in_flight  # at(hi) finishes more than `rate`; the smallest such b is wanted, at(0) none
    memo: dict[int, Prediction] = {}

    def at(b: int) -> Prediction:
        if b not in memo:
            memo[b] = predict(d, b, input_tokens, output_tokens, prep=prep, **kw)
        return memo[b]

    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid).requests_per_s > rate:
            hi = mid
        else:
            lo = mid
    upper = at(hi)
    if lo == 0:
        ttft, tpot = upper.ttft_s, upper.tpot_s
    else:
        lower = at(lo)
        f = (rate - lower.requests_per_s) / (upper.requests_per_s - lower.requests_per_s)
        ttft = lower.ttft_s + f * (upper.ttft_s - lower.ttft_s)
        tpot = lower.tpot_s + f * (upper.tpot_s - lower.tpot_s)
    return replace(upper, ttft_s=ttft, tpot_s=tpot, output_tokens_per_s=rate * n_out, request_rate=rate)


# --------------------------------------------------------------------------- one wave


@dataclass(frozen=True, slots=True)
class Wave:
    """A run whose requests are all admitted at once and run to their end: a static batch, or an offline run of no
    more requests than the deployment admits. There is no steady state: every prompt is there at the first step."""

    requests: int
    input_tokens: int
    output_tokens: int
    prefill_steps: int
    """Steps that carry prompt tokens."""
    ttft_s: float
    """Mean over the requests: from the first step to the end of the step that computes the prompt's last token."""
    tpot_s: float
    """Mean over the requests of (last token − first token) ÷ (output tokens − 1); 0 with one output token."""
    total_s: float
    """From the first step to the last token of the last request."""

    @property
    def output_tokens_per_s(self) -> float:
        """Every request's output tokens over the wave's time."""
        return self.requests * self.output_tokens / self.total_s


def wave(d: Deployment, requests: int, input_tokens: int, output_tokens: int, *, prep: Prep | None = None) -> Wave:
    """`requests` requests of `input_tokens` + `output_tokens`, all admitted at once (no more than `admitted`), run
    step by step as the scheduler runs them (vLLM's v1 `Scheduler.schedule`, TensorRT-LLM's in-flight batching):
    each step gives every sequence past its prompt its next token, then fills what is left of the token budget
    (`max_num_batched_tokens` per data-parallel rank) with prompt tokens in order, a prompt split across steps where
    the budget ends inside it (chunked prefill), or, where the engine does not split prompts
    (`MemoryPolicySpec.chunked_prefill` false: TensorRT-LLM's default), with the whole prompts that fit, the next
    waiting for a step with room for all of it (`MicroBatchScheduler`); a prompt's first token comes with the step
    that computes its last prompt token, and the sequence then decodes in every step until its `output_tokens` are
    out. Without mixed steps (`MemoryPolicySpec.mixed_steps` false: SGLang) a step of prompts takes the whole budget
    and the running sequences wait for it, decoding only once every prompt is in. Once every prompt is in, the steps
    are decode steps of the sequences still running, at their mean context."""
    n_in, n_out = input_tokens, output_tokens
    if min(requests, n_in, n_out) < 1:
        raise ValueError("a wave has at least one request of at least one input and one output token")
    cap = admitted(d, n_in + n_out)
    if requests > cap:
        raise ValueError(f"{d.layout.label}: {requests} requests of {n_in + n_out} tokens are not one wave: the "
                         f"deployment admits {cap} at once")
    prep = prep or prepare(d)
    dp, per_rank = d.layout.dp, token_budget(d)
    whole = not d.setting.memory_policy.chunked_prefill
    mixed = d.setting.memory_policy.mixed_steps
    if whole and n_in > per_rank:
        raise ValueError(f"{d.layout.label}: a prompt of {n_in} tokens exceeds the {per_rank} tokens a step computes, "
                         "and the engine does not split prompts (chunked prefill off)")
    total = requests * n_in
    running: list[list[int]] = []  # [sequences, tokens each still to emit] of the prompts that finished together
    t = ttft = tpot = 0.0
    started: list[tuple[int, float]] = []  # [sequences, time of their first token], as `running` holds them
    done = steps = 0
    gpu_before = 0.0  # the GPU's work in the step before (none before the first)

    def emitted(left: int) -> float:
        return n_in + n_out - left  # context of a sequence with `left` tokens still to emit

    def finish(i: int, at: float) -> float:
        count, first = started[i]
        return count * (at - first) / (n_out - 1)

    while done < total:
        dec = sum(c for c, left in running if left > 0) if mixed else 0  # the sequences decoding in this step
        ctx = sum(c * emitted(left) for c, left in running if left > 0) / dec if dec else 0.0
        room = max(1, per_rank - math.ceil(dec / dp)) * dp
        if whole:  # whole prompts that fit what each rank's decoding sequences leave; the next waits
            chunk = min(max(0, per_rank - math.ceil(dec / dp)) // n_in * dp * n_in, total - done)
        else:
            chunk = min(room, total - done)
        first, last = done // n_in, (done + chunk) // n_in  # prompts begun before this step, prompts done after it
        touched = math.ceil((done + chunk) / n_in) - first
        # the prompt begun in an earlier step attends to its own first part: the step's prompts share one offset,
        # that prompt's weighted by its share of the chunk
        offset = done % n_in * min(chunk, n_in - done % n_in) / chunk if chunk else 0.0
        x = mixed_step(d, dec, ctx, chunk, offset, finishing=last - first, prep=prep, prompts=touched)
        t += in_turn(d, [x], gpu_before)[0]
        gpu_before = x.gpu_s
        steps += 1 if chunk else 0
        for i, g in enumerate(running):
            if g[1] > 0 and mixed:
                g[1] -= 1
                if g[1] == 0:
                    tpot += finish(i, t)
        if last > first:
            ttft += (last - first) * t
            running.append([last - first, n_out - 1])
            started.append((last - first, t))
        done += chunk
    while any(left > 0 for _, left in running):
        live = [(c, left) for c, left in running if left > 0]
        dec = sum(c for c, _ in live)
        m = min(left for _, left in live)  # steps until the next sequences finish
        ctx = sum(c * (emitted(left) + (m - 1) / 2) for c, left in live) / dec
        t += m * mixed_step(d, dec, ctx, 0, 0.0, prep=prep).total_s
        for i, g in enumerate(running):
            if g[1] > 0:
                g[1] -= m
                if g[1] == 0:
                    tpot += finish(i, t)
    return Wave(requests, n_in, n_out, steps, ttft / requests, tpot / requests if n_out > 1 else 0.0, t)


# --------------------------------------------------------------------------- disaggregated prefill and decode


def rented_share(gpus: int, unit: int) -> float:
    """Rented GPUs one copy of a `gpus`-GPU configuration carries when GPUs are rented in units of `unit` and each
    unit is filled with copies: 2 for a 2-GPU copy in an 8-GPU unit, 4 for a 3-GPU one, 16 for 12 GPUs."""
    rented = math.ceil(gpus / unit) * unit
    return rented / max(1, rented // gpus)


@dataclass(frozen=True, slots=True)
class PrefillPool:
    """One prefill worker: a deployment that only computes prompts and hands their KV cache on."""

    deployment: Deployment
    input_tokens: int
    cached_tokens: int
    prefill_s: float
    """One prompt alone through its chunks."""
    service_s: float
    """A prompt's share of the worker's time at full load: its chunks' steps, or a step's share where several
    prompts fit one step (`prompts_per_step`)."""
    prompts_per_step: int
    kv_bytes_per_gpu: float
    """The prompt's computed KV cache on the GPU holding the most of it: what that GPU sends."""
    first: Step
    """The prompt's first chunk."""


def prefill_pool(d: Deployment, input_tokens: int, *, prefix_hit: float = 0.0,
                 prep: Prep | None = None) -> PrefillPool:
    """A prefill worker of `d` for prompts of `input_tokens` (a share `prefix_hit` found in its prefix cache)."""
    st = d.setting
    cached = cached_tokens(input_tokens, prefix_hit, st.memory_policy.kv_block_tokens)
    n_new = input_tokens - cached
    budget = token_budget(d) * d.layout.dp
    prep = prep or prepare(d)
    steps = [mixed_step(d, 0, 0, ck, cached + before, finishing=1 if before + ck == n_new else 0, prep=prep)
             for ck, before in chunks(n_new, budget)]
    alone = sum(in_turn(d, steps))
    k = budget // n_new if n_new <= budget // 2 else 1
    service = sum(in_turn(d, steps, steps[-1].gpu_s))  # at full load a prompt follows another's last step
    if k > 1:
        batched = run(d, Batch(prefill_tokens=k * n_new, prefill_context=cached, prefill_finishing=k,
                               prefill_seqs=k), "prefill", prep)
        service = in_turn(d, [batched], batched.gpu_s)[0] / k
    arch, kvb = st.model.architecture, st.kv_precision.bytes_per_param
    per_gpu = max(kv_bytes_per_token_per_gpu(arch, w.layers, d.layout.tp, kvb, context_tokens=input_tokens,
                                             first_layer=w.first_layer)
                  for w in stage_weights(arch, st.precision, d.layout, st.kept_16bit)) * n_new
    return PrefillPool(d, input_tokens, cached, alone, service, k, per_gpu, steps[0])


@dataclass(frozen=True, slots=True)
class DecodePool:
    """One decode worker: a deployment that only decodes, `batch` sequences at once."""

    deployment: Deployment
    batch: int
    input_tokens: int
    output_tokens: int
    step: Step
    """One decode (verify) step of the batch."""
    tpot_s: float
    admitted: int
    """Sequences of the request's length the worker admits at once."""
    kv_bytes_per_gpu: float
    """A prompt's KV cache (what the prefill worker computed) on the GPU of this worker that holds the most of it."""
    speculation: Speculation | None = None
    draft_s: float = 0.0
    verify_extra_s: float = 0.0
    prep: Prep | None = field(default=None, compare=False, repr=False)
    """The deployment's `prepare`, which made `step` (its steps and bands, reused by `combine`)."""

    @property
    def requests_per_s(self) -> float:
        """Requests one worker finishes a second: its batch, each for n_out − 1 steps' worth of tokens."""
        return self.batch / ((self.output_tokens - 1) * self.tpot_s)


def decode_pool(d: Deployment, batch: int, input_tokens: int, output_tokens: int, *,
                speculation: Speculation | None = None, prefix_hit: float = 0.0, prefix_groups: int = 1,
                prep: Prep | None = None, draft: Draft | None = None) -> DecodePool:
    """A decode worker of `d` with `batch` sequences of `input_tokens` + `output_tokens` decoding at once."""
    if output_tokens < 2:
        raise ValueError("disaggregated serving decodes at least one token after the first")
    st = d.setting
    cached = cached_tokens(input_tokens, prefix_hit, st.memory_policy.kv_block_tokens)
    if speculation is None:
        draft = None
    elif draft is None:
        draft = draft_of(d, speculation)
    cap = admission(d, input_tokens + output_tokens, draft=draft, cached=cached, groups=prefix_groups)
    if not 1 <= batch <= cap:
        raise ValueError(f"{d.layout.label}: a decode worker admits 1 to {cap} sequences of "
                         f"{input_tokens + output_tokens} tokens, not {batch}")
    ctx = input_tokens + output_tokens / 2
    prep = prep or prepare(d)
    q = 1 if speculation is None else speculation.query_per_seq
    step = mixed_step(d, batch, ctx, 0, 0, prep=prep, query_per_seq=q)
    draft_s = verify_extra = 0.0
    if draft is not None and speculation is not None:
        draft_s = speculation.draft_tokens * draft.pass_s(batch, ctx, speculation.tree_width)
        verify_extra = step.total_s - mixed_step(d, batch, ctx, 0, 0, prep=prep).total_s
    per_step = 1.0 if speculation is None else speculation.tokens_per_step
    arch, kvb = st.model.architecture, st.kv_precision.bytes_per_param
    per_gpu = max(kv_bytes_per_token_per_gpu(arch, w.layers, d.layout.tp, kvb, context_tokens=input_tokens,
                                             first_layer=w.first_layer)
                  for w in stage_weights(arch, st.precision, d.layout, st.kept_16bit)) * (input_tokens - cached)
    return DecodePool(d, batch, input_tokens, output_tokens, step, (step.total_s + draft_s) / per_step, cap, per_gpu,
                      speculation, draft_s, verify_extra, prep)


def kv_link(prefill: Deployment, gpus: int) -> Link:
    """The link a prompt's KV cache crosses from a prefill GPU to a decode GPU: the node's fabric (GPU to GPU)
    when the `gpus` of both pools fit one node, each GPU's share of the node's NICs otherwise."""
    st = prefill.setting
    node, tm = st.node, st.time_model
    if gpus <= node.gpus:
        name = "PCIe" if node.fabric_shape == "pcie" else (st.chip.scale_up_name or node.scale_up)
        bw = fabric_bandwidth(prefill, 2)
        return Link(name, bw, fabric_hop(prefill), node.fabric_shape, 2, 1, True, bw, fabric_hop(prefill), 2)
    if node.network_bytes_per_s is None:
        raise ValueError(f"{gpus} GPUs of prefill and decode workers span nodes of {node.name}, which records "
                         "no network")
    return Link(node.network_name or "network", node.network_bytes_per_s, tm.network_hop_s, "network", 2, 2)


def kv_transfer(p: PrefillPool, dec: DecodePool, gpus: int) -> tuple[Link, coll.Collective]:
    """The link between the pools and one prompt's KV cache sent over it: each prefill GPU sends its share to the
    decode GPUs that hold it, all at once; the GPU with the most to send or to receive decides."""
    link = kv_link(p.deployment, gpus)
    return link, coll.send(max(p.kv_bytes_per_gpu, dec.kv_bytes_per_gpu), link, p.deployment.setting.time_model)


@dataclass(frozen=True, slots=True)
class DisaggPrediction:
    """Prefill workers and decode workers together: what a request sees and what the GPUs make."""

    prefill: PrefillPool
    decode: DecodePool
    prefill_workers: int
    decode_workers: int
    requests_per_s: float
    """Requests the decode workers finish a second, and so the rate the prefill workers take them in."""
    prefill_load: float
    """ρ of each prefill worker's queue."""
    prefill_wait_s: float
    link: Link
    transfer_s: float
    """One prompt's KV cache from its prefill worker to its decode worker (charged to TTFT)."""
    ttft_s: float
    tpot_s: float
    output_tokens_per_s: float
    cost_per_hour: float | None
    """The share of the rented GPUs this configuration carries (units filled with copies of it)."""
    regime: str
    ttft_regime: str
    tpot_band: bands_mod.Band
    ttft_band: bands_mod.Band
    throughput_band: bands_mod.Band

    mode = "disaggregated"
    queue_s = 0.0
    """No wait for a slot outside the prefill queue (its wait is `prefill_wait_s`, inside the TTFT)."""

    @property
    def input_tokens(self) -> int:
        return self.decode.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.decode.output_tokens

    @property
    def prefill_gpus(self) -> int:
        return self.prefill_workers * self.prefill.deployment.gpus

    @property
    def decode_gpus(self) -> int:
        return self.decode_workers * self.decode.deployment.gpus

    @property
    def gpus(self) -> int:
        return self.prefill_gpus + self.decode_gpus

    @property
    def in_flight(self) -> float:
        """Requests in flight (Little's law: the rate times a request's time in the system)."""
        return self.requests_per_s * (self.ttft_s + (self.decode.output_tokens - 1) * self.tpot_s)

    @property
    def output_tokens_per_s_per_gpu(self) -> float:
        return self.output_tokens_per_s / self.gpus

    @property
    def output_tokens_per_s_per_user(self) -> float:
        return 1 / self.tpot_s

    @property
    def usd_per_mtok_output(self) -> float | None:
        c = self.cost_per_hour
        return None if c is None else c / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def tpot_range(self) -> tuple[float, float]:
        return self.tpot_band.around(self.tpot_s)

    @property
    def ttft_range(self) -> tuple[float, float]:
        return self.ttft_band.around(self.ttft_s)

    @property
    def throughput_range(self) -> tuple[float, float]:
        return self.throughput_band.around(self.output_tokens_per_s)

    @property
    def throughput_per_gpu_range(self) -> tuple[float, float]:
        """`throughput_range` per GPU, as `output_tokens_per_s_per_gpu` divides the throughput."""
        lo, hi = self.throughput_range
        return lo / self.gpus, hi / self.gpus

    @property
    def usd_per_mtok_output_range(self) -> tuple[float, float] | None:
        """The cost per output token's range: the throughput's band, inverted (`Band.inverse`)."""
        c = self.usd_per_mtok_output
        return None if c is None else self.throughput_band.inverse(c)


def prefill_wait(load: float, service_s: float) -> float:
    """M/D/1's mean wait at load ρ for a deterministic service time."""
    if load >= 1:
        return math.inf
    return service_s * load / (2 * (1 - load))


def combine(p: PrefillPool, dec: DecodePool, prefill_workers: int, decode_workers: int) -> DisaggPrediction:
    """`prefill_workers` prefill workers feeding `decode_workers` decode workers, each decode worker at its batch:
    the rate the decode workers finish requests sets the prefill workers' load; TTFT is the wait in the prefill
    queue, the prompt's own steps and its KV cache's transfer."""
    if prefill_workers < 1 or decode_workers < 1:
        raise ValueError("a disaggregated deployment has at least one prefill and one decode worker")
    return _pools(p, dec, prefill_workers, decode_workers, decode_workers * dec.requests_per_s, dec.tpot_s)


def _pools(p: PrefillPool, dec: DecodePool, prefill_workers: int, decode_workers: int, rate: float,
           tpot_s: float) -> DisaggPrediction:
    """The workers taking `rate` requests a second, each decode worker at `dec`'s batch and `tpot_s` (its own, or
    interpolated between two batches by `disaggregated_at_rate`): each prefill worker's queue is M/D/1 at its share
    of the rate; TTFT is that wait, the prompt's own steps and its KV cache's transfer over the link the pools'
    GPUs give."""
    load = rate * p.service_s / prefill_workers
    if load >= 1:
        raise ValueError(f"{prefill_workers} prefill workers cannot keep up with {decode_workers} decode workers: "
                         f"load {load:.2f}")
    wait = prefill_wait(load, p.service_s)
    gpus = prefill_workers * p.deployment.gpus + decode_workers * dec.deployment.gpus
    link, transfer = kv_transfer(p, dec, gpus)
    dd = dec.deployment
    price = dd.setting.price
    cost = None if price is None else rented_share(gpus, price.gpus_per_unit) * price.usd_per_gpu_hour
    ctx = dec.input_tokens + dec.output_tokens / 2
    q = 1 if dec.speculation is None else dec.speculation.query_per_seq
    prep = dec.prep or prepare(dd)
    dec_regime, _ = _regimes(dd, saturated(dd, dec.batch, dec.admitted, dec.step, ctx, prep, q))
    _, pre_regime = _regimes(p.deployment, False)
    return DisaggPrediction(
        prefill=p, decode=dec, prefill_workers=prefill_workers, decode_workers=decode_workers, requests_per_s=rate,
        prefill_load=load, prefill_wait_s=wait, link=link, transfer_s=transfer.seconds,
        ttft_s=wait + p.prefill_s + transfer.seconds, tpot_s=tpot_s, output_tokens_per_s=rate * dec.output_tokens,
        cost_per_hour=cost, regime=dec_regime.label, ttft_regime=pre_regime.label,
        tpot_band=prep.band("tpot_ms", dec_regime), ttft_band=prep.band("ttft_ms", pre_regime),
        throughput_band=prep.band("output_tokens_per_s", dec_regime))


def disaggregated_at_rate(p: PrefillPool, pool: Callable[[int], DecodePool], prefill_workers: int,
                          decode_workers: int, rate: float, most: int) -> DisaggPrediction:
    """`prefill_workers` prefill workers and `decode_workers` decode workers (`pool(b)`: one at batch b, at most
    `most`) taking requests that arrive at `rate` a second (an open loop, as `at_rate` for a replica). Each decode
    worker takes its share; in a steady state it finishes them as fast as they come, so it decodes the smallest
    batch whose worker finishes at least that share (fewer than the batch the workers were sized at, where the rate
    is below what they carry), its time per output token interpolated between the two batches that bracket the
    share, as `at_rate` interpolates a replica's. Each prefill worker's queue is M/D/1 at its share of the rate, and
    the KV cache crosses the link the workers' GPUs together give (`combine`)."""
    if prefill_workers < 1 or decode_workers < 1:
        raise ValueError("a disaggregated deployment has at least one prefill and one decode worker")
    if not rate > 0 or math.isinf(rate):
        raise ValueError("the request rate must be a positive number of requests a second")
    share = rate / decode_workers
    if pool(most).requests_per_s < share:
        raise ValueError(f"{decode_workers} decode workers at a batch of {most} finish fewer than {rate:,g} "
                         "requests a second")
    lo, hi = 0, most  # pool(hi) finishes at least the share; the smallest such batch is wanted
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pool(mid).requests_per_s >= share:
            hi = mid
        else:
            lo = mid
    upper = pool(hi)
    tpot = upper.tpot_s
    if lo >= 1:
        lower = pool(lo)
        f = (share - lower.requests_per_s) / (upper.requests_per_s - lower.requests_per_s)
        tpot = lower.tpot_s + f * (upper.tpot_s - lower.tpot_s)
    return _pools(p, upper, prefill_workers, decode_workers, rate, tpot)


def predict_disaggregated(prefill: Deployment, decode: Deployment, prefill_workers: int, decode_workers: int,
                          decode_batch: int, input_tokens: int | None = None, output_tokens: int | None = None, *,
                          speculation: Speculation | None = None, prefix_hit: float = 0.0,
                          prefix_groups: int = 1) -> DisaggPrediction:
    """TTFT, time per output token, throughput and cost of `prefill_workers` workers of `prefill` handing prompts
    to `decode_workers` workers of `decode`, each decoding `decode_batch` sequences at once."""
    sc = decode.setting.scenario
    n_in = sc.input_tokens if input_tokens is None else input_tokens
    n_out = sc.output_tokens if output_tokens is None else output_tokens
    return combine(prefill_pool(prefill, n_in, prefix_hit=prefix_hit),
                   decode_pool(decode, decode_batch, n_in, n_out, speculation=speculation, prefix_hit=prefix_hit,
                               prefix_groups=prefix_groups),
                   prefill_workers, decode_workers)


def disaggregated_at(prefill: Deployment, decode: Deployment, prefill_workers: int, decode_workers: int,
                     concurrency: int, input_tokens: int, output_tokens: int, *,
                     speculation: Speculation | None = None, prefix_hit: float = 0.0,
                     prefix_groups: int = 1) -> DisaggPrediction:
    """`predict_disaggregated` with `concurrency` requests kept in flight (a closed loop, as a benchmark client
    keeps them): the decode batch is the largest at which the requests in flight by Little's law (the rate times
    the TTFT and the decode steps) come to no more than the concurrency. The requests not decoding wait in the
    prefill queue: the wait is what Little's law leaves of the concurrency, (C − the decoding) ÷ the rate, less
    the prompt's own steps and its transfer, and at least the open queue's (M/D/1) wait; where the prefill workers
    are the bottleneck, that wait is what grows."""
    p = prefill_pool(prefill, input_tokens, prefix_hit=prefix_hit)
    prep = prepare(decode)
    draft = None if speculation is None else draft_of(decode, speculation)

    def at(b: int) -> DisaggPrediction | None:
        dec = decode_pool(decode, b, input_tokens, output_tokens, speculation=speculation, prefix_hit=prefix_hit,
                          prefix_groups=prefix_groups, prep=prep, draft=draft)
        try:
            return combine(p, dec, prefill_workers, decode_workers)
        except ValueError:  # the prefill workers would not keep up
            return None

    first = decode_pool(decode, 1, input_tokens, output_tokens, speculation=speculation, prefix_hit=prefix_hit,
                        prefix_groups=prefix_groups, prep=prep, draft=draft)
    most = max(1, min(first.admitted, concurrency // decode_workers))
    lo = at(1)
    if lo is None:
        raise ValueError(f"{prefill_workers} prefill workers cannot keep up with even one sequence per decode worker")
    lo_b, hi_b = 1, most + 1
    best = lo
    while hi_b - lo_b > 1:
        mid = (lo_b + hi_b) // 2
        z = at(mid)
        if z is not None and z.in_flight <= concurrency:
            lo_b, best = mid, z
        else:
            hi_b = mid
    decoding = best.requests_per_s * (output_tokens - 1) * best.tpot_s
    closed = (concurrency - decoding) / best.requests_per_s
    wait = max(best.prefill_wait_s, closed - best.prefill.prefill_s - best.transfer_s)
    return replace(best, prefill_wait_s=wait, ttft_s=wait + best.prefill.prefill_s + best.transfer_s)
