"""Time: a roofline of prefill and decode, with collectives that pay latency as well as bandwidth.

A forward pass through one pipeline stage takes the larger of its arithmetic and its memory traffic
(a roofline), plus its tensor-parallel collectives and a fixed overhead:

- compute: FLOPs ÷ (the chip's dense FLOP/s in the format it computes in × the achieved fraction);
- memory: bytes read (weights the step's tokens touch, and their KV cache) ÷ (HBM × achieved fraction);
- collectives, an α–β model: two all-reduces per layer (after attention, after the MLP) of the step's
  activations. Each algorithm pays a hop latency per step and moves bytes at the link's achieved
  bandwidth; the cheaper of ring (2(n−1) hops, 2(n−1)/n of the bytes), two-shot (2 hops, the same
  bytes) and one-shot (1 hop, (n−1) times the bytes) is taken, as NCCL and the engines' custom
  all-reduces choose by message size;
- pipeline stages run one after another for a token; a boundary costs one send (a hop and the bytes);
- a fixed time per layer: the launch, ramp and tail of its kernels, which no roofline counts.

Decode at concurrency c: the sequences in flight (at most what the KV cache holds) are split into one
micro-batch per stage; each token passes every stage, so a step is the sum over stages, and each token
also carries its share of the prefills that replace finished requests. Prefill of one request is the
same sum over its input tokens (causal attention counted). `predict` puts them together; scheduling
policy beyond that, speculative decoding and kernel quality beyond the fitted fractions are left out.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from snippets.engine.deployment import Deployment
from snippets.engine.layout import Layout, pp_partition
from snippets.engine.memory import kv_bytes_per_token_per_gpu, layer_share, stage_weights
from snippets.engine.specs import ArchLike

ACTIVATION_BYTES = 2
"""Activations travel between GPUs in BF16."""
ALLREDUCES_PER_LAYER = 2
"""Megatron-style TP: one all-reduce after attention's output projection, one after the MLP's down projection.
With expert parallelism a mixture-of-experts layer keeps the first and replaces the second by two all-to-alls
(dispatch tokens to their experts, combine the results)."""


@dataclass(frozen=True, slots=True)
class Link:
    """What a TP group's collectives cross: its per-direction bandwidth (achieved) and the latency of one hop."""

    name: str
    bytes_per_s: float
    hop_s: float


@dataclass(frozen=True, slots=True)
class Collective:
    seconds: float
    algorithm: str
    latency_s: float
    """The hop latencies alone: what the collective costs with no bytes at all."""


def allreduce(nbytes: float, n: int, link: Link) -> Collective:
    """One all-reduce of `nbytes` across `n` GPUs: the cheapest of ring, two-shot and one-shot."""
    if n <= 1:
        return Collective(0.0, "none", 0.0)
    if nbytes < 0:
        raise ValueError("nbytes must be non-negative")
    bw, hop = link.bytes_per_s, link.hop_s
    options = [
        ("ring", 2 * (n - 1) * hop, 2 * (n - 1) / n * nbytes / bw),
        ("two-shot", 2 * hop, 2 * (n - 1) / n * nbytes / bw),
        ("one-shot", hop, (n - 1) * nbytes / bw),
    ]
    name, lat, move = min(options, key=lambda o: o[1] + o[2])
    return Collective(lat + move, name, lat)


def alltoall(nbytes: float, n: int, link: Link) -> Collective:
    """One all-to-all across `n` GPUs in which each GPU holds `nbytes` for the group: it keeps 1/n and writes the
    rest to the others at once (one hop), as expert parallelism's dispatch and combine do."""
    if n <= 1:
        return Collective(0.0, "none", 0.0)
    if nbytes < 0:
        raise ValueError("nbytes must be non-negative")
    return Collective(link.hop_s + (n - 1) / n * nbytes / link.bytes_per_s, "all-to-all", link.hop_s)


def send(nbytes: float, link: Link) -> float:
    """One point-to-point send between pipeline stages."""
    return link.hop_s + nbytes / link.bytes_per_s


def _network(d: Deployment) -> Link:
    st, tm = d.setting, d.setting.time_model
    if st.node.network_bytes_per_s is None:
        raise ValueError(f"{d.layout.label} spans nodes of {st.node.name}, which records no network")
    return Link("network", st.node.network_bytes_per_s * tm.link_fraction, tm.network_hop_s)


def _fabric(d: Deployment) -> Link:
    """Inside the node: NVLink (or another scale-up fabric), or PCIe on cards without one."""
    st, tm = d.setting, d.setting.time_model
    chip = st.chip
    if st.node.scale_up == "pcie" or chip.scale_up_bytes_per_s is None:
        if chip.host_link_bytes_per_s is None:
            raise ValueError(f"{chip.name} records neither a scale-up fabric nor a host link")
        return Link("pcie", chip.host_link_bytes_per_s * tm.link_fraction, tm.pcie_hop_s)
    return Link(st.node.scale_up, chip.scale_up_bytes_per_s * tm.link_fraction, tm.nvlink_hop_s)


def tp_link(d: Deployment) -> Link:
    """The link a deployment's TP group crosses: the node's fabric, or the network once TP spans nodes.
    Achieved bandwidth is the time model's fraction of the per-direction figure."""
    return _network(d) if d.layout.tp > d.setting.node.gpus else _fabric(d)


def ep_link(d: Deployment) -> Link:
    """The link an expert-parallel group's all-to-alls cross: the node's fabric, or the network beyond it."""
    return _network(d) if d.layout.ep > d.setting.node.gpus else _fabric(d)


def pp_link(d: Deployment) -> Link:
    """Between pipeline stages: the node's fabric, or the network once the layout spans nodes."""
    return _network(d) if d.gpus > d.setting.node.gpus else _fabric(d)


@dataclass(frozen=True, slots=True)
class Pass:
    """One forward pass through all stages, parts summed over the stages."""

    compute_s: float
    memory_s: float
    comm_s: float
    comm_latency_s: float
    overhead_s: float
    total_s: float
    """Σ over stages of max(compute, memory) + collectives, plus the sends between stages and the overhead."""
    flops: float
    bytes_read: float
    algorithm: str

    @property
    def bound(self) -> str:
        """What the largest part is: compute, memory or communication."""
        parts = {"compute": self.compute_s, "memory": self.memory_s, "communication": self.comm_s}
        return max(parts, key=lambda k: parts[k])


def _attention_flops_per_pair(d: Deployment) -> float:
    """FLOPs per (query, cached token) pair on one GPU and layer: QKᵀ and the weighted sum of V, 2 FLOPs each."""
    arch = d.setting.model.arch
    heads = arch.attention_heads / d.layout.tp
    if arch.mla is not None:
        m = arch.mla
        return 2 * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
    return 2 * heads * 2 * arch.head_dim


@functools.lru_cache(maxsize=8192)
def stage_linear(arch: ArchLike, lay: Layout) -> tuple[tuple[float, float, int], ...]:
    """Per pipeline stage of `lay`, one GPU's linear parameters a token passes through: those of the dense
    layers and shared parts, those of the experts it is routed to (the active share of each expert layer), and
    the count of expert layers. Memoized: `forward` asks for the same layouts thousands of times."""
    moe = arch.moe
    out = []
    start = 0
    for n in pp_partition(arch.layers, lay.pp):
        layer_params = expert_params = 0.0
        moe_layers = 0
        for layer in range(start, start + n):
            share = layer_share(arch, layer, lay)
            layer_params += share.linear - share.expert_linear
            if moe is not None and share.expert_linear:
                expert_params += share.expert_linear * moe.active_experts / moe.experts
                moe_layers += 1
        start += n
        out.append((layer_params, expert_params, moe_layers))
    return tuple(out)


def forward(d: Deployment, tokens: int, context: float, *, prefill: bool) -> Pass:
    """One forward pass of `tokens` tokens (a decode micro-batch, or one prompt) through every stage.

    Decode: each token attends to `context` cached tokens. Prefill: `tokens` is the prompt, attending causally.
    """
    st, tm, lay = d.setting, d.setting.time_model, d.layout
    arch, chip = st.model.arch, st.chip
    flops_per_s = chip.dense_flops[d.compute_format] * tm.compute_fraction
    hbm = chip.hbm_bytes_per_s * tm.hbm_fraction
    kvb = st.kv_precision.bytes_per_param
    link = tp_link(d) if lay.tp > 1 else None
    moe = arch.moe
    touched = 1.0
    if moe is not None:
        touched = 1 - (1 - moe.active_experts / moe.experts) ** tokens
    # data-parallel attention: each of the dp ranks runs attention for its share of the tokens; the experts
    # (EP = TP x DP) see them all
    local = tokens / lay.dp
    pairs = local * (local + 1) / 2 if prefill else local * context
    ar = allreduce(local * arch.hidden_size * ACTIVATION_BYTES, lay.tp, link) if link else None
    a2a = None
    if moe is not None and lay.ep > 1:
        a2a = alltoall(local * moe.active_experts * arch.hidden_size * ACTIVATION_BYTES, lay.ep, ep_link(d))
    stages = stage_weights(arch, st.precision, lay)
    parts = pp_partition(arch.layers, lay.pp)
    compute = memory = comm = comm_lat = total = flops_all = read_all = 0.0
    start = 0
    for i, (sw, n) in enumerate(zip(stages, parts, strict=True)):
        layer_params, expert_params, moe_layers = stage_linear(arch, lay)[i]
        start += n
        if i == len(parts) - 1:
            layer_params += arch.vocab_size * arch.hidden_size / lay.tp  # the LM head (tied or not) on the last stage
        flops = 2 * layer_params * local + 2 * expert_params * tokens + _attention_flops_per_pair(d) * pairs * n
        # decode reads each layer's cache (a sliding-window layer's window only); prefill writes every token's
        kv_tok = kv_bytes_per_token_per_gpu(arch, n, lay.tp, kvb, context_tokens=None if prefill else context,
                                            first_layer=start - n)
        kv = kv_tok * (local if prefill else local * context)  # written once (prefill), read in full (decode)
        read = sw.total - sw.expert_bytes * (1 - touched) + kv
        c, m = flops / flops_per_s, read / hbm
        n_ar = ALLREDUCES_PER_LAYER * n - (moe_layers if a2a else 0)
        coll = (ar.seconds if ar else 0.0) * n_ar + (2 * a2a.seconds * moe_layers if a2a else 0.0)
        compute += c
        memory += m
        comm += coll
        comm_lat += (ar.latency_s if ar else 0.0) * n_ar + (2 * a2a.latency_s * moe_layers if a2a else 0.0)
        total += max(c, m) + coll
        flops_all += flops
        read_all += read
    sends = (lay.pp - 1) * send(tokens * arch.hidden_size * ACTIVATION_BYTES, pp_link(d)) if lay.pp > 1 else 0.0
    overhead = tm.layer_overhead_s * arch.layers
    total += sends + overhead
    return Pass(compute, memory, comm + sends, comm_lat, overhead, total, flops_all, read_all,
                ar.algorithm if ar else "none")


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the model predicts for a deployment at a concurrency and request shape."""

    concurrency: int
    in_flight: int
    """Sequences decoding at once: the concurrency, or as many as the KV cache holds; the rest queue."""
    input_tokens: int
    output_tokens: int
    prefill_s: float
    """One request's prefill alone."""
    prefill_load: float
    """Share of the replica's time spent prefilling new requests (ρ of the prefill queue)."""
    queue_s: float
    """Average wait for a free slot when more requests are in flight than the KV cache holds."""
    ttft_s: float
    """Time to first token: prefill, the wait behind other prefills (M/D/1), and the wait for a slot."""
    tpot_s: float
    """Time per output token a request sees: a decode step of the sequences in flight, plus the prefills of the
    other requests that interleave with its tokens."""
    decode: Pass
    prefill: Pass
    output_tokens_per_s: float
    """All sequences of the replica together."""
    gpus: int
    cost_per_replica_hour: float | None

    @property
    def output_tokens_per_s_per_gpu(self) -> float:
        return self.output_tokens_per_s / self.gpus

    @property
    def input_tokens_per_s(self) -> float:
        """Prompt tokens the replica takes in per second at this load."""
        return self.output_tokens_per_s * self.input_tokens / self.output_tokens

    @property
    def usd_per_mtok_output(self) -> float | None:
        c = self.cost_per_replica_hour
        return None if c is None else c / (self.output_tokens_per_s * 3600) * 1e6

    @property
    def usd_per_mtok_input(self) -> float | None:
        """The rent divided over prompt tokens when the replica only prefilled, one prompt after another."""
        c = self.cost_per_replica_hour
        return None if c is None else c / (self.input_tokens / self.prefill_s * 3600) * 1e6


def predict(d: Deployment, concurrency: int | None = None, input_tokens: int | None = None,
            output_tokens: int | None = None) -> Prediction:
    """TTFT, time per output token, throughput and cost per token of `d` with `concurrency` requests kept in
    flight (default: the scenario's), each `input_tokens` + `output_tokens` long (default: the scenario's).

    Continuous batching: at most as many sequences decode at once as the KV cache holds (`max_sequences` at
    the request's length); the rest wait for a slot. The replica spends each generation of its sequences on
    their prefills and their output tokens' decode steps, which gives its throughput; a request's tokens
    are spaced by a decode step plus the other requests' prefills that interleave with them. Its first
    token waits for its prefill, behind the others queued for the same GPUs (an M/D/1 queue at the
    prefill load), and for a slot."""
    sc = d.setting.scenario
    c = sc.concurrency if concurrency is None else concurrency
    n_in = sc.input_tokens if input_tokens is None else input_tokens
    n_out = sc.output_tokens if output_tokens is None else output_tokens
    if min(c, n_in, n_out) < 1:
        raise ValueError("concurrency, input and output tokens must be at least 1")
    room = d.setting.memory(d.layout, 1)
    tokens = n_in + n_out
    per_seq = room.kv_per_sequence * tokens / max(1, d.setting.scenario.context_tokens)
    fits = math.floor(room.kv_room / per_seq + 1e-9) * d.layout.dp if per_seq > 0 else c
    if fits < 1:
        raise ValueError(f"{d.layout.label}: not one sequence of {tokens} tokens fits the KV cache")
    b = min(c, fits)
    pre = forward(d, n_in, 0, prefill=True)
    dec = forward(d, math.ceil(b / d.layout.pp), n_in + n_out / 2, prefill=False)
    # per generation of the b sequences: b prefills and n_out decode steps of all b
    busy = b * pre.total_s + n_out * dec.total_s
    throughput = b * n_out / busy
    tpot = dec.total_s + (b - 1) * pre.total_s / n_out  # the others' prefills interleave with a request's tokens
    rate = throughput / n_out  # requests finished (and prefills started) per second
    rho = min(rate * pre.total_s, 0.95)
    wait_prefill = pre.total_s * rho / (2 * (1 - rho)) if b > 1 else 0.0
    queue = (c - b) / rate if c > b else 0.0
    return Prediction(concurrency=c, in_flight=b, input_tokens=n_in, output_tokens=n_out, prefill_s=pre.total_s,
                      prefill_load=rho, queue_s=queue, ttft_s=pre.total_s + wait_prefill + queue, tpot_s=tpot,
                      decode=dec, prefill=pre, output_tokens_per_s=throughput, gpus=d.gpus,
                      cost_per_replica_hour=d.cost_per_replica_hour)
