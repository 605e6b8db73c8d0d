"""Page model of "Tensor & pipeline parallelism" (docs/parallelism.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets`: every layout, GPU count, node count and time is a deployment of
`snippets.engine` (through `snippets.pages.scenario.reference`), on the scenario's node, as on the
interconnect page. Times are the engine's time model (`snippets.engine.step`, `serving`, `collectives`):
each operation's roofline, the all-reduces the engines pick priced by their published timings, pipeline
sends, and every kernel's fixed cost, with every figure read from the deployment's `setting.time_model`.
parallel.py counts the bytes of those layouts. Activations travel in BF16.

Helpers here that the engine lacks (flagged for the engine's owners): `over` builds the same deployment as if
its node's GPUs met only over PCIe, or each over its own network adapter, so that the engine's own step shows
TP over those links; `bubble` is the pipeline's fill-and-drain share; `compute_bound_batch` searches the
engine's step for the first batch whose arithmetic outlasts its memory traffic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace

from snippets.data import Catalog, Network, Node, NVLink, PCIe, required
from snippets.data.units import Bandwidth
from snippets.engine import Deployment, Layout, feasible, setting
from snippets.engine.collectives import Collective, allreduce, priced
from snippets.engine.layout import kv_replicas, pp_partition, tp_degrees
from snippets.engine.ops import ACTIVATION_BYTES, KINDS
from snippets.engine.serving import mixed_step
from snippets.engine.step import Step as EngineStep
from snippets.engine.step import step as engine_step
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import Link as TimeLink
from snippets.engine.topology import group_link
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.interconnect import nvlink_of, pcie_x16
from snippets.pages.scenario import SERVING, reference
from snippets.pages.units import ms, us
from snippets.render import charts, fmt
from snippets.render.fmt import Figure
from snippets.teaching.traffic import (
    pp_boundary_bytes,
    pp_bytes_per_token,
    ring_allreduce_bytes_per_gpu,
    ring_allreduce_steps,
    tp_allreduce_message_bytes,
    tp_bytes_per_token,
    tp_messages_per_token,
)

ACTIVATIONS = "bf16"
"""Activations (and so all TP and PP traffic) stay 16-bit, also when weights are INT8 or INT4 (weight-only)."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8", "int4")
WORKED = ("llama-3.1-405b", "bf16")
SMALL = ("llama-3.1-70b", "bf16")
UNEVEN = "deepseek-v3"
"""A model whose layer count no common stage count divides (61 layers)."""
UNEVEN_STAGES = 4
FEWEST = "fewest-gpus"
"""The layout policy that asks how few GPUs an engine accepts (data/policies.yaml)."""
RING_SIZES = (2, 4, 8)
TIME_LINKS = ("nvlink", "pcie", "network")
"""The links the page compares TP over: the node's NVLink (as deployed), the chip's PCIe host link, the network."""
PREFILL_TOKENS = (2048, 8192)
"""Prefill chunks for the all-reduce table: vLLM's chunked-prefill token budget of 2,048 per step and 8,192 (one
long prompt in one pass). Choices of the page, not data."""
BUBBLE_STAGES = (2, 4, 8)
BUBBLE_MICRO = (1, 2, 4, 8, 16, 32)
BATCH_LIMIT = 1 << 14
"""The largest batch `compute_bound_batch` tries: far beyond any KV cache of the page's deployments."""


def _short(model_id: str, precision_id: str) -> str:
    """Namespace key of a model x precision: ("llama-3.1-405b", "fp16") -> "m405_fp16"."""
    return f"m{model_id.split('-')[-1][:-1]}_{precision_id}"


def act_bytes(cat: Catalog) -> float:
    """Bytes of one activation element on the wire (BF16: 2)."""
    return cat.precisions[ACTIVATIONS].width.bytes


@dataclass(frozen=True)
class Link:
    """A link TP or PP traffic may cross, one way."""

    label: str
    one_way: Bandwidth


def links(cat: Catalog) -> dict[str, Link]:
    """NVLink of the node's GPU, PCIe 5.0 x16, and the node's network port per GPU: one way each (datasheets)."""
    node = cat.interconnect(reference(cat).node.id, Node)
    acc = cat.accelerators[node.accelerator]
    nic = cat.interconnect(required(node.nic, f"a NIC for {node.name}"), Network)
    if acc.scale_up is None:
        raise ValueError(f"{acc.name} has no NVLink: this page compares NVLink with the other links")
    out = {"nvlink": Link(cat.interconnect(acc.scale_up.fabric, NVLink).name, nvlink_of(cat, acc))}
    out["gen5"] = Link(f"{cat.interconnect('pcie-gen5', PCIe).name} x16", pcie_x16(cat, "pcie-gen5"))
    out["network"] = Link(nic.name, nic.port.bandwidth.one_way() * required(node.nics_per_gpu, "NICs per GPU"))
    return out


@dataclass(frozen=True)
class Traffic:
    """What one deployment sends for one decode token, in bytes (the time is the engine's: see `decode_step`)."""

    dep: Deployment
    """The engine's deployment, on the layout the scenario's policy chose."""
    fewest: Deployment
    """The same model on the fewest GPUs an engine accepts (the fewest-gpus policy)."""
    model: str
    precision: str
    hidden: int
    layers: int
    message: float
    """Bytes of one all-reduce at one token: the hidden state."""
    ring_per_gpu: float
    """Bytes each GPU sends in one ring (or two-shot) all-reduce."""
    tp_bytes: float
    """Bytes each TP GPU sends for one token over all layers, by ring or two-shot."""
    ring_steps: int
    """Sequential ring steps for one token over all layers: what a ring would pay in hop latencies."""
    allreduces: int
    """All-reduces on one token's path: two per layer, over all the stages in turn."""
    pp_bytes: float
    """Bytes over all stage boundaries."""


def traffic(cat: Catalog, model_id: str, precision_id: str) -> Traffic:
    """The TP and PP bytes of one token for `model_id` in `precision_id`, on the layout the engine deploys."""
    r = reference(cat)
    dep = r.deployment(model_id, precision_id)
    arch = cat.models[model_id].architecture
    b = act_bytes(cat)
    tp, pp = dep.layout.tp, dep.layout.pp
    msg = tp_allreduce_message_bytes(arch.hidden_size, b)
    return Traffic(
        dep=dep,
        fewest=r.deployment(model_id, precision_id, layout_policy=FEWEST),
        model=cat.models[model_id].name,
        precision=cat.precisions[precision_id].name,
        hidden=arch.hidden_size,
        layers=arch.layers,
        message=msg,
        ring_per_gpu=ring_allreduce_bytes_per_gpu(msg, tp),
        tp_bytes=tp_bytes_per_token(arch.layers, arch.hidden_size, b, tp),
        ring_steps=tp_messages_per_token(arch.layers, tp),
        allreduces=ALLREDUCES_PER_LAYER * arch.layers if tp > 1 else 0,
        pp_bytes=pp_bytes_per_token(arch.hidden_size, b, pp),
    )


# --------------------------------------------------------------------------- time, through the engine

def over(d: Deployment, link: str) -> Deployment:
    """Deployment `d` with its TP group's traffic over `link`: "nvlink" (as deployed), "pcie" (the same node if
    its GPUs met only over their PCIe host links), or "network" (each GPU in a node of its own, so every
    collective crosses its network adapter). The engine then prices every step itself."""
    st = d.setting
    if link == "nvlink":
        return d
    if link == "pcie":
        node = replace(st.node, scale_up="pcie", fabric_shape="pcie")
    elif link == "network":
        node = replace(st.node, gpus=1, domain=1)
    else:
        raise ValueError(f"link must be one of {TIME_LINKS}, got {link!r}")
    return Deployment(replace(st, node=node), d.layout, d.why)


@dataclass(frozen=True)
class Step:
    """One decode step of `sequences` sequences (one micro-batch per pipeline stage) of a deployment, with its
    TP group's traffic over `link`: the engine's own step."""

    link: TimeLink
    sequences: int
    tokens: int
    """Tokens in one forward pass: the sequences split over the pipeline's micro-batches, as `predict` does."""
    engine: EngineStep

    @property
    def tp_ops(self) -> tuple[object, ...]:
        return tuple(o for o in self.engine.ops if o.kind == "allreduce" and o.name.endswith("all-reduce")
                     and not o.name.startswith("embedding"))

    @property
    def allreduce(self) -> Collective:
        """One of the layers' all-reduces, as the engine picked and priced it."""
        o = next((o for o in self.engine.ops if o.name == "attention all-reduce"), None)
        if o is None:
            return Collective(0.0, "none", 0.0)
        return Collective(o.comm_s, o.algorithm, o.comm_latency_s, o.bytes)

    @property
    def allreduces(self) -> int:
        return sum(o.count for o in self.engine.ops if o.name in ("attention all-reduce", "MLP all-reduce"))

    @property
    def tp_s(self) -> float:
        return sum(o.comm_s * o.count for o in self.engine.ops if o.kind == "allreduce")

    @property
    def tp_latency_s(self) -> float:
        return sum(o.comm_latency_s * o.count for o in self.engine.ops if o.kind == "allreduce")

    @property
    def comm_s(self) -> float:
        return self.engine.comm_s

    @property
    def total_s(self) -> float:
        return self.engine.total_s

    @property
    def comm_share(self) -> float:
        """Share of the step spent communicating: the engine adds the collectives to the ops, no overlap."""
        return self.comm_s / self.total_s

    @property
    def comm_over_compute(self) -> float:
        return self.comm_s / self.engine.compute_s

    @property
    def latency_share(self) -> float:
        """Share of TP's communication that is the collectives' fixed cost, not bytes."""
        return self.tp_latency_s / self.tp_s


def decode_step(d: Deployment, sequences: int, link: str = "nvlink") -> Step:
    """The engine's decode step of `sequences` sequences at the scenario's mid-answer context (one micro-batch per
    pipeline stage, as `predict` decodes), with the TP group's traffic over `link`."""
    sc = d.setting.scenario
    o = over(d, link)
    p = mixed_step(o, sequences, sc.input_tokens + sc.output_tokens / 2, 0, 0)
    return Step(group_link(o, "tp"), sequences, math.ceil(sequences / d.layout.pp), p)


def compute_bound_batch(d: Deployment, context: float, limit: int = BATCH_LIMIT) -> int | None:
    """The first batch at which the engine's decode step's arithmetic outlasts its memory traffic, each sequence
    attending to `context` cached tokens; None if none up to `limit` is (each sequence's KV read then costs more
    than its arithmetic)."""
    def compute(b: int) -> bool:
        p = engine_step(d, "decode", b, max(context, 1))
        return p.compute_s >= p.memory_s

    hi = 1
    while not compute(hi):
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute(mid) else (mid, hi)
    return hi


def tp_allreduce(d: Deployment, tokens: int, link: str = "nvlink") -> Collective:
    """One TP all-reduce of `tokens` tokens' activations, as the engine picks and prices it over `link`."""
    o = over(d, link)
    return allreduce(tokens * d.setting.model.arch.hidden_size * ACTIVATION_BYTES, group_link(o, "tp"),
                     o.setting.time_model, o.setting.chip.vendor)


def algorithm_prices(d: Deployment, nbytes: float) -> dict[str, Collective]:
    """One-shot, two-shot and NCCL all-reduces of `nbytes` over `d`'s TP group on its NVLink, each as the engine
    prices it (`collectives.priced`), whichever the engine picks."""
    return priced(nbytes, group_link(d, "tp"), d.setting.time_model)


def ring_steps_of(d: Deployment, nbytes: float) -> dict[str, list[float]]:
    """The engine's price of each algorithm for `nbytes` over `d`'s TP group, spread over its steps: NCCL's ring
    2(n − 1) steps, two-shot 2, one-shot 1 (equal shares: the engine prices a collective whole)."""
    n = d.layout.tp
    p = algorithm_prices(d, nbytes)
    return {"ring": [p["nccl"].seconds / (2 * (n - 1))] * (2 * (n - 1)),
            "two-shot": [p["two-shot"].seconds / 2] * 2, "one-shot": [p["one-shot"].seconds]}


def bubble(stages: int, micro_batches: int) -> float:
    """Idle share of each stage while `micro_batches` pass `stages` stages: (p − 1) / (m + p − 1)."""
    if stages < 1 or micro_batches < 1:
        raise ValueError("stages and micro-batches must be at least 1")
    return (stages - 1) / (micro_batches + stages - 1)


@dataclass(frozen=True)
class TPShard:
    """What one GPU of a TP group holds of one layer (Megatron's split): whole query heads and KV heads
    (copied when TP exceeds the KV heads), a slice of the MLP's columns."""

    tp: int
    hidden: int
    heads: int
    """Query heads per GPU."""
    kv_heads: int
    """KV heads per GPU."""
    kv_replicas: int
    head_dim: int
    ffn: int
    """The MLP's intermediate columns per GPU."""
    gated: bool

    @property
    def qkv_cols(self) -> int:
        """Columns of the fused Q, K, V projection each GPU holds: its query heads, and a K and a V per KV head."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    @property
    def o_rows(self) -> int:
        """Rows of the output projection each GPU holds: one per element of its heads' outputs."""
        return self.heads * self.head_dim


def tp_shard(d: Deployment) -> TPShard:
    """The per-GPU slice of one layer of deployment `d`'s model over its TP group (`d.layout.tp`)."""
    a, tp = d.setting.model.arch, d.layout.tp
    if a.mla is not None or a.moe is not None:
        raise ValueError(f"{d.setting.model.name}: the TP diagram draws dense layers with standard attention")
    if a.attention_heads % tp or a.ffn_size % tp:
        raise ValueError(f"TP{tp} does not divide {d.setting.model.name}'s heads and FFN columns")
    reps = kv_replicas(a.kv_heads, tp)
    return TPShard(tp, a.hidden_size, a.attention_heads // tp, a.kv_heads * reps // tp, reps, a.head_dim,
                   a.ffn_size // tp, a.mlp == "gated")


PIPE_MICRO = (1, 8)
"""The pipeline diagram's micro-batch counts: one sequence, and a row of the bubble table (a choice of the page)."""


# --------------------------------------------------------------------------- formatting

def nbytes_exact(n: float) -> Figure:
    """A small byte count, written out: 32,768 bytes."""
    if n != int(n):
        raise ValueError(f"not a whole byte count: {n!r}")
    return fmt.Figure(n, "B", f"{fmt.number(n)} bytes", "bytes")


def share(fraction: float) -> Figure:
    """A share, to two significant digits: 0.11%, 1.6%, 25%."""
    if fraction <= 0:
        return fmt.percent(0.0)
    digits = max(0, 1 - math.floor(math.log10(fraction * 100)))
    return fmt.percent(fraction, digits)


def gbps(bytes_per_s: float, basis: str = "each GPU's, one way") -> Figure:
    v = bytes_per_s / 1e9
    return fmt.quantity(v, "GB/s", 1 if v < 100 else 0, show_unit=True, basis=basis)


TIME_BASIS = "the engine's time model: the collective's fixed latency + bytes ÷ the share of the link it reaches"


def link_labels(cat: Catalog, d: Deployment) -> dict[str, str]:
    """Display names of the three links: the node's NVLink, the chip's host link (PCIe), the node's NIC."""
    node = cat.interconnect(d.setting.node.id, Node)
    acc = cat.accelerators[d.setting.chip.id]
    nic = cat.interconnect(required(node.nic, f"a NIC for {node.name}"), Network)
    host = cat.interconnect(required(acc.host_link, f"a host link for {acc.name}"), PCIe)
    return {"nvlink": cat.interconnect(required(acc.scale_up, "NVLink").fabric, NVLink).name,
            "pcie": f"{host.name} x{acc.host_link_lanes or 16}", "network": nic.name}


def serving_sequences(cat: Catalog) -> int:
    """The serving scenario's concurrency: the page's serving batch."""
    return reference(cat, SERVING).scenario.concurrency


def comm_table(cat: Catalog, model_id: str, precision_id: str, name: str) -> str:
    """TP over NVLink, PCIe and the network at batch 1 and at the serving batch: the engine's decode step."""
    t = traffic(cat, model_id, precision_id)
    d = t.dep
    labels = link_labels(cat, d)
    rows: list[list[fmt.Cell]] = []
    for seqs in (1, serving_sequences(cat)):
        for key in TIME_LINKS:
            s = decode_step(d, seqs, key)
            rows.append([
                f"{fmt.number(seqs)} seq. over {labels[key]}",
                gbps(s.link.bytes_per_s),
                s.allreduce.algorithm,
                us(s.allreduce.latency_s, 1, basis="the algorithm's fixed latency"),
                us(s.allreduce.seconds, 2, basis=TIME_BASIS),
                ms(s.comm_s, 2, basis=TIME_BASIS + "; the embedding's, the logits' and PP's sends included"),
                share(s.latency_share),
                ms(s.total_s, 1, basis="the engine's decode step with this link"),
                share(s.comm_share),
                fmt.ratio(s.comm_over_compute, 2, basis="communication ÷ the step's arithmetic"),
            ])
    return fmt.table(
        name,
        ["Step", "Link per GPU", "Algorithm", "Fixed latency", "One all-reduce", "Communication per step",
         "Of which fixed", "Step time", "Share of step", "Communication ÷ compute"],
        rows,
        align="lrlrrrrrrr",
    )


def breakdown_chart(cat: Catalog) -> str:
    """The worked deployment's decode step, by kind of operation, over each link at one sequence and at the
    serving batch: where the time goes, and how much of it is communication."""
    t = traffic(cat, *WORKED)
    d = t.dep
    labels = link_labels(cat, d)
    stacks = []
    for seqs in (1, serving_sequences(cat)):
        for key in TIME_LINKS:
            b = decode_step(d, seqs, key).engine.breakdown
            stacks.append(charts.Stack(f"{fmt.number(seqs)} seq., {labels[key]}",
                                       [(k, b[k] * 1e3) for k in KINDS]))
    words = (f"One decode step of {t.model} in {t.precision} on {d.layout.label}, split by kind of operation "
             "(matrix products, attention, all-reduces, pipeline sends, kernel launches and the host's time per "
             "step), with the TP group's all-reduces over NVLink, PCIe and the network, at one sequence and at the "
             "serving batch. " + "; ".join(f"{s.label}: {s.total:.1f} ms, of which communication "
                                            f"{sum(v for k, v in s.parts if k in ('allreduce', 'alltoall', 'send')):.1f}"
                                            for s in stacks) + ".")
    svg = charts.stacked_bars("breakdown-chart", stacks, "ms per decode step", "Where a decode step's time goes",
                              words)
    return charts.figure(svg, words)


def algorithm_table(cat: Catalog) -> str:
    """All-reduces of the worked deployment's TP group on NVLink, from one decode token to a prompt: each algorithm
    as the engine prices it, the one the engine picks, and what it picks over the network."""
    ns_tokens = message_tokens(cat)
    w = traffic(cat, *WORKED).dep
    rows: list[list[fmt.Cell]] = []
    for label, tokens in ns_tokens:
        nbytes = tokens * w.setting.model.arch.hidden_size * ACTIVATION_BYTES
        algs = algorithm_prices(w, nbytes)
        chosen = tp_allreduce(w, tokens)
        net = tp_allreduce(w, tokens, "network")
        rows.append([
            label,
            fmt.nbytes(nbytes, "MB", 3 if nbytes < 1e6 else 1),
            *(us(algs[k].seconds, 1, basis=f"{algs[k].latency_s * 1e6:.1f} µs fixed + {algs[k].bytes_moved:,.0f} "
                                            "bytes per GPU") for k in ("nccl", "two-shot", "one-shot")),
            chosen.algorithm,
            share(chosen.latency_s / chosen.seconds),
            f"{net.algorithm}, " + fmt.number(net.seconds * 1e6, 1) + " µs",
        ])
    return fmt.table(
        "algorithms",
        ["Message", "Bytes", "NCCL (ring)", "Custom, two-shot", "Custom, one-shot",
         "Engine's choice", "Its fixed share", "Over the network"],
        rows,
        align="lrrrrlrl",
    )


def across(cat: Catalog) -> tuple[Deployment, Deployment]:
    """The worked model on its chosen layout, and with the same GPUs as one TP group across the nodes."""
    r = reference(cat)
    d = r.deployment(*WORKED)
    return d, r.deployment(*WORKED, layout=Layout(d.layout.tp * d.layout.pp))


def across_points(cat: Catalog, dep: Deployment) -> list[tuple[str, int]]:
    """The loads the layouts are compared at: one sequence, the serving batch, and as many sequences as the
    layout's KV cache holds."""
    return [("one sequence", 1), ("serving batch", serving_sequences(cat)),
            ("KV cache full", dep.max_concurrency)]


def across_table(cat: Catalog) -> str:
    """The worked model on TP × PP (TP in the node) against one TP group across the nodes: the engine's decode step
    at one sequence, the serving batch and a full KV cache."""
    rows: list[list[fmt.Cell]] = []
    for dep in across(cat):
        for label, c in across_points(cat, dep):
            s = decode_step(dep, c)
            rows.append([
                f"{dep.layout.label}, {label}",
                fmt.count(c, "sequences"),
                s.allreduce.algorithm + (" over the network" if s.link.shape == "network" else " over NVLink"),
                ms(s.total_s, 1, basis="the engine's decode step"),
                share(s.comm_share),
                fmt.quantity(c / s.total_s, "tokens/s", 0),
                fmt.count(dep.max_concurrency, "sequences"),
            ])
    return fmt.table("across", ["Layout and load", "Sequences", "All-reduce", "Time per token", "Communication share",
                                "Output tokens/s", "Sequences the KV cache holds"], rows, align="lrlrrrr")


def message_tokens(cat: Catalog) -> list[tuple[str, int]]:
    """The token counts of the all-reduce table: one decode token, the serving batch's micro-batch, the batch at
    which decode turns compute-bound (no KV cache), prefill chunks, the scenario's whole prompt."""
    r = reference(cat)
    w = r.deployment(*WORKED)
    micro = math.ceil(serving_sequences(cat) / w.layout.pp)
    crit = required(compute_bound_batch(w, 0), "a compute-bound batch")
    out = [("one decode token", 1), (f"serving micro-batch ({micro} tokens)", micro),
           (f"compute-bound batch ({crit} tokens)", crit)]
    out += [(f"prefill chunk ({t:,} tokens)", t) for t in PREFILL_TOKENS if t != r.scenario.input_tokens]
    out.append((f"the scenario's prompt ({r.scenario.input_tokens:,} tokens)", r.scenario.input_tokens))
    return sorted(out, key=lambda x: x[1])


def bubble_table() -> str:
    """The pipeline bubble (p − 1) / (m + p − 1) for p stages and m micro-batches."""
    rows: list[list[fmt.Cell]] = []
    for m in BUBBLE_MICRO:
        rows.append([f"{m} micro-batch" + ("es" if m > 1 else ""),
                     *(share(bubble(p, m)) for p in BUBBLE_STAGES)])
    return fmt.table("bubble", ["Micro-batches in flight", *(f"{p} stages" for p in BUBBLE_STAGES)], rows,
                     align="l" + "r" * len(BUBBLE_STAGES))


def layout_table(cat: Catalog) -> str:
    """Model x precision: the fewest GPUs an engine accepts, the layout the policy chooses, GPUs rented, nodes,
    and TP's communication per token at batch 1 (the engine's time model)."""
    rows: list[list[fmt.Cell]] = []
    for m in MODELS:
        for p in PRECISIONS:
            t = traffic(cat, m, p)
            d, f = t.dep, t.fewest
            tp = d.layout.tp > 1
            s = decode_step(d, 1) if tp else None
            rows.append([
                f"{t.model} {t.precision}",
                fmt.nbytes(d.weight_bytes, "GB", 1),
                f.layout.label,
                fmt.count(f.gpus),
                d.layout.label,
                fmt.count(d.gpus),
                fmt.count(d.gpus - f.gpus),
                fmt.count(d.nodes, "nodes"),
                fmt.count(t.allreduces, "all-reduces") if tp else "none",
                ms(s.comm_s, 2, basis=TIME_BASIS) if s else "none: one GPU",
                share(s.comm_share) if s else "none: one GPU",
            ])
    return fmt.table(
        "layouts",
        ["Model and precision", "Weights", "Fewest-GPU layout", "GPUs, fewest", "Chosen layout", "GPUs, chosen",
         "Extra GPUs", "Nodes", "All-reduces per token", "Communication per token, one sequence",
         "Share of step time"],
        rows,
        align="lrlrlrrrrrr",
    )


def rules_table(cat: Catalog) -> str:
    """Layouts the engines accept that the scenario's policy does not choose: each checked with `feasible`."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for model_id, precision_id, lay, what in _accepted(cat):
        st = setting(r.eng, model_id, precision_id, r.scenario.id)
        arch = st.model.arch
        problems = feasible(st, lay)
        rows.append([
            f"{st.model.name} {st.precision.name} on {lay.label}",
            fmt.count(lay.gpus),
            ", ".join(str(n) for n in pp_partition(arch.layers, lay.pp)),
            # MLA caches one compressed latent per token that every TP rank holds whole
            fmt.count(kv_replicas(arch.kv_heads, lay.tp) if arch.mla is None else lay.tp, "GPUs"),
            "accepted" if not problems else "refused: " + "; ".join(problems),
            what,
        ])
    return fmt.table("rules", ["Layout", "GPUs", "Layers per stage", "GPUs holding each KV head (MLA: the latent)",
                               "The engine's rules and memory", "Why the policy does not choose it"],
                     rows, align="lrlrll")


def _accepted(cat: Catalog) -> list[tuple[str, str, Layout, str]]:
    """The valid layouts the page shows beside the chosen ones, with why the policy passes them over."""
    r = reference(cat)
    node = r.node.gpus
    w = r.deployment(*WORKED)
    fewest = r.deployment(*WORKED, layout_policy=FEWEST).layout
    uneven = r.deployment(UNEVEN, "fp8")
    return [
        (WORKED[0], WORKED[1], Layout(w.layout.tp * w.layout.pp), "TP across nodes: its all-reduces cross the network"),
        (WORKED[0], WORKED[1], fewest, f"{fewest.gpus} GPUs are not whole {node}-GPU nodes"),
        (UNEVEN, "fp8", Layout(node, UNEVEN_STAGES), f"more stages than it needs: the policy stops at {uneven.layout.label}"),
    ]


def ring_table(cat: Catalog) -> str:
    """A ring all-reduce of the worked model's hidden state (one token) over 2, 4 and 8 GPUs, timed on NVLink by
    the engine's price of NCCL's all-reduce, beside the algorithm the engine picks."""
    t = traffic(cat, *WORKED)
    rows: list[list[fmt.Cell]] = []
    for n in RING_SIZES:
        per_gpu = ring_allreduce_bytes_per_gpu(t.message, n)
        d = Deployment(t.dep.setting, Layout(n), "a TP group of n GPUs of the same node, for the table")
        ring = algorithm_prices(d, t.message)["nccl"]
        chosen = tp_allreduce(d, 1)
        rows.append([
            f"{n} GPUs",
            fmt.count(ring_allreduce_steps(n) // 2, "steps"),
            fmt.count(ring_allreduce_steps(n) // 2, "steps"),
            nbytes_exact(t.message / n),
            fmt.quantity(per_gpu / t.message, "× message", 2),
            nbytes_exact(per_gpu),
            us(ring.seconds, 2, basis=TIME_BASIS),
            f"{chosen.algorithm}, " + fmt.number(chosen.seconds * 1e6, 2) + " µs",
        ])
    return fmt.table(
        "ring",
        ["Ring of", "Reduce-scatter steps", "All-gather steps", "Chunk per step", "Sent per GPU ÷ message",
         "Sent per GPU", "NCCL on NVLink", "Engine's choice on NVLink"],
        rows,
        align="lrrrrrrl",
    )


def _tp_diagram_parts(cat: Catalog) -> tuple[Deployment, TPShard, Collective]:
    d = traffic(cat, *WORKED).dep
    return d, tp_shard(d), tp_allreduce(d, 1)


def tp_diagram(cat: Catalog) -> str:
    """One layer of the worked model split over its TP group, drawn with the per-GPU shapes, and its caption."""
    from snippets.render import charts, diagrams

    d, sh, ar = _tp_diagram_parts(cat)
    a, n, num = d.setting.model.arch, sh.tp, fmt.number
    name = d.setting.model.name
    ar_text = f"all-reduce of {n} partial sums: {num(ar.seconds * 1e6, 2)} µs"

    def kv_tip(i: int) -> str:
        if sh.kv_heads == 1:
            return f"KV head {i // sh.kv_replicas + 1}"
        return f"KV heads {i * sh.kv_heads + 1}–{(i + 1) * sh.kv_heads}"

    heads_tip = [f"GPU {i}: query heads {i * sh.heads + 1}–{(i + 1) * sh.heads}, {kv_tip(i)}" for i in range(n)]
    ffn_tip = [f"GPU {i}: FFN columns {num(i * sh.ffn + 1)}–{num((i + 1) * sh.ffn)}" for i in range(n)]
    mlp_in = "gate and up" if sh.gated else "up"
    kv_word = "KV head" if sh.kv_heads == 1 else "KV heads"
    blocks = [
        diagrams.Block(
            "Attention",
            diagrams.Split("Q, K, V: columns split by heads", "col",
                           [f"each GPU: {sh.heads} query heads, {sh.kv_heads} {kv_word}",
                            f"{num(sh.hidden)} × {num(sh.qkv_cols)} of the weights"], heads_tip),
            diagrams.Split("O: rows split", "row",
                           [f"each GPU: {num(sh.o_rows)} rows", f"of {num(sh.hidden)} columns;", "out: a partial sum"],
                           [f"GPU {i}: rows {num(i * sh.o_rows + 1)}–{num((i + 1) * sh.o_rows)} of O" for i in range(n)]),
            ar_text),
        diagrams.Block(
            "MLP",
            diagrams.Split(f"{mlp_in}: columns split", "col",
                           [f"each GPU: {num(sh.ffn)} of the {num(a.ffn_size)} FFN columns",
                            f"{'2 × ' if sh.gated else ''}{num(sh.hidden)} × {num(sh.ffn)} of the weights"], ffn_tip),
            diagrams.Split("down: rows split", "row",
                           [f"each GPU: {num(sh.ffn)} rows", f"of {num(sh.hidden)} columns;", "out: a partial sum"],
                           [f"GPU {i}: rows {num(i * sh.ffn + 1)}–{num((i + 1) * sh.ffn)} of down" for i in range(n)]),
            ar_text),
    ]
    title = f"One layer of {name} split over a TP group of {n} GPUs"
    desc = (f"Every GPU holds the whole input, a hidden state of {num(sh.hidden)}. In attention, the Q, K and V "
            f"projections are split by columns, {sh.heads} query heads and {sh.kv_heads} {kv_word} per GPU; the "
            f"output projection O is split by rows, so each GPU holds a partial sum of the output, and an "
            f"all-reduce adds them. In the MLP, {mlp_in} are split by columns, {num(sh.ffn)} of "
            f"{num(a.ffn_size)} per GPU, down by rows, and a second all-reduce adds the partial sums.")
    svg = diagrams.tp_layer("tp-split", n, f"input: {num(sh.hidden)} per token, on every GPU", blocks, title, desc)
    caption = (f"One layer of {name} on the TP group of {n} GPUs of {d.layout.label}. Each GPU holds "
               f"{sh.heads} of the {a.attention_heads} query heads and {sh.kv_heads} of the {a.kv_heads} KV heads "
               f"(Q, K, V {num(sh.hidden)} × {num(sh.qkv_cols)}), {num(sh.o_rows)} rows of O, and "
               f"{num(sh.ffn)} of the {num(a.ffn_size)} FFN columns of {mlp_in} and rows of down. Each block "
               f"ends in an all-reduce of {num(sh.hidden * ACTIVATION_BYTES)} bytes per token, {ar.algorithm} on "
               f"NVLink in {num(ar.seconds * 1e6, 2)} µs: {ALLREDUCES_PER_LAYER * a.layers} per token over "
               f"{a.layers} layers.")
    return charts.figure(svg, caption)


def _ring_parts(cat: Catalog) -> tuple[Traffic, int, dict[str, list[float]], str]:
    t = traffic(cat, *WORKED)
    n = t.dep.layout.tp
    chosen = tp_allreduce(t.dep, 1).algorithm
    return t, n, ring_steps_of(t.dep, t.message), {"nccl": "ring"}.get(chosen, chosen)


def ring_diagram(cat: Catalog) -> str:
    """A ring all-reduce of one token's hidden state over the worked TP group, step by step, beside two-shot and
    one-shot on one time axis, each taking the engine's price of its algorithm (NCCL's for the ring)."""
    from snippets.render import charts, diagrams

    t, n, steps, chosen = _ring_parts(cat)

    def u(x: float) -> str:
        return fmt.number(x * 1e6, 2)

    def caption(name: str) -> str:
        st = steps[name]
        return f"{len(st)} × {u(st[0])} µs = {u(sum(st))} µs" if len(st) > 1 else f"{u(st[0])} µs"

    labels = {"ring": ["RS"] * (n - 1) + ["AG"] * (n - 1), "two-shot": ["RS", "AG"], "one-shot": ["all"]}
    algos = {k: diagrams.Algorithm(k, steps[k], labels[k], caption(k), chosen=k == chosen) for k in steps}
    title = f"A ring all-reduce over {n} GPUs, beside two-shot and one-shot"
    desc = (f"One token's hidden state, {fmt.number(t.message)} bytes, all-reduced over {n} GPUs on NVLink. The ring "
            f"takes {2 * (n - 1)} steps, {n - 1} of reduce-scatter then {n - 1} of all-gather; at each step every "
            f"GPU sends one chunk, 1/{n} of the message, to the next: NCCL's price spread over its steps, "
            f"{u(steps['ring'][0])} µs a step. Two-shot takes 2 steps of {u(steps['two-shot'][0])} µs, one-shot 1 "
            f"step of {u(steps['one-shot'][0])} µs. The engine picks {chosen}.")
    svg = diagrams.allreduce_steps("ring-steps", n, algos["ring"], [algos["two-shot"], algos["one-shot"]], "µs", 1e6,
                                   title, desc)
    rs = steps["ring"][0]
    cap = (f"An all-reduce of one token of {t.model} ({fmt.number(t.message)} bytes) over the {n} GPUs of "
           f"{t.dep.layout.label}'s TP group on NVLink. Each cell is the chunk ({fmt.number(t.message / n)} bytes) "
           f"a GPU sends to the next: {n - 1} reduce-scatter steps, then {n - 1} all-gather steps, {u(rs)} µs each "
           f"at NCCL's price; the ring takes {u(sum(steps['ring']))} µs, vLLM's custom two-shot "
           f"{u(sum(steps['two-shot']))} µs and one-shot {u(sum(steps['one-shot']))} µs, and the engine picks "
           f"{chosen}.")
    return charts.figure(svg, cap)


def pipeline_diagram(cat: Catalog) -> str:
    """The worked layout's pipeline, forward only, with one micro-batch and with more: its boxes and its bubble."""
    from snippets.render import charts, diagrams

    d = traffic(cat, *WORKED).dep
    p = d.layout.pp
    if p < 2:
        raise ValueError(f"{d.layout.label} has no pipeline stages to draw")

    def word(m: int) -> str:
        return f"{m} micro-batch" + ("es" if m > 1 else "")

    def pct(m: int) -> str:
        return share(bubble(p, m)).text

    schedules = [diagrams.Schedule(m, f"{word(m)}: {p * (p - 1)} of {p * (m + p - 1)} slots idle, {pct(m)}")
                 for m in PIPE_MICRO]
    title = f"A pipeline of {p} stages with {' and with '.join(word(m) for m in PIPE_MICRO)}"
    desc = (f"Each row is a stage of {d.layout.label}, each column a time slot. Micro-batch j enters stage s at slot "
            f"s + j; the idle boxes are the bubble, "
            + "; ".join(f"with {word(m)} {p * (p - 1)} idle of {p * (m + p - 1)}, {pct(m)}" for m in PIPE_MICRO)
            + ".")
    svg = diagrams.pipeline("pipe-schedule", p, schedules, "time → one slot: one stage, one micro-batch",
                            title, desc)
    cap = (f"{d.setting.model.name} on {d.layout.label}: {p} stages, forward only, as in decoding. The bubble, "
           f"the idle share of the stages' slots, is "
           + " and ".join(f"{p - 1}/{m + p - 1} = {pct(m)} with {word(m)}" for m in PIPE_MICRO)
           + f": in both, {p * (p - 1)} idle boxes (the stages times one fewer), while the schedule grows by one "
           f"slot per micro-batch.")
    return charts.figure(svg, cap)


@dataclass(frozen=True)
class Comm:
    """The worked deployment's communication, for prose: the engine's decode steps at batch 1 and at the serving
    batch over each link, the PP send, the compute-bound batch."""

    b1: dict[str, Step]
    bs: dict[str, Step]
    pp_send_s: float
    crit: int
    crit_at_context: int | None


def _comm(cat: Catalog, d: Deployment) -> Comm:
    b1 = {k: decode_step(d, 1, k) for k in TIME_LINKS}
    bs = {k: decode_step(d, serving_sequences(cat), k) for k in TIME_LINKS}
    sc = d.setting.scenario
    sends = [o for o in b1["nvlink"].engine.ops if o.kind == "send"]
    pp_send = sends[0].comm_s if sends else 0.0
    return Comm(b1, bs, pp_send, required(compute_bound_batch(d, 0), "a compute-bound batch"),
                compute_bound_batch(d, sc.input_tokens + sc.output_tokens / 2))


def worked_example(cat: Catalog) -> str:
    """The worked example, step by step, as Markdown with figure spans."""
    ns = ParallelismPage.of(cat)
    w, c = ns.w, vars(ns.cw)
    h = fmt.fig_html
    lines = [
        f"1. **Layout.** Chosen by policy ({ns.policy_name}): {ns.worked_layout}, a TP group of "
        f"{h(w.tp, 'worked.tp')} GPUs inside each node and {h(w.pp, 'worked.pp')} pipeline stages, one per node, "
        f"{h(w.gpus_rented, 'worked.gpus')} GPUs in all.",
        f"2. **One all-reduce.** Hidden size {h(w.hidden, 'worked.hidden')} × {h(ns.act_bytes, 'worked.act_bytes')} "
        f"bytes = {h(w.message, 'worked.message')} for one token.",
        f"3. **Which algorithm.** The group is one NVLink node, and the message is far below "
        f"{h(ns.custom_limit, 'worked.custom_limit')}: vLLM takes "
        f"its custom all-reduce. In one stage each GPU reads the other GPUs' buffers, a fixed "
        f"{h(c['car_latency'], 'worked.car_latency')} and the bytes at {h(c['car_efficiency'], 'worked.car_efficiency')} "
        f"of {h(c['nvl_bw'], 'worked.nvl_bw')}: {h(c['one_1'], 'worked.one_1')}; in two stages (reduce-scatter, "
        f"all-gather) {h(c['two_1'], 'worked.two_1')}; NCCL's ring of {h(c['ring_hops'], 'worked.ring_hops')} would "
        f"take {h(c['ring_1'], 'worked.ring_1')}. The engine runs {ns.alg_1}: {h(c['ar_1'], 'worked.ar_1')}.",
        f"4. **Per token.** {h(ns.allreduces_per_layer, 'worked.allreduces_per_layer')} all-reduces per layer × "
        f"{h(w.layers, 'worked.layers')} layers = {h(w.allreduces, 'worked.allreduces')} all-reduces, one after "
        f"another (with the embedding's and the logits' own): {h(c['tp_1'], 'worked.tp_1')}, of which "
        f"{h(c['lat_1'], 'worked.lat_1')} is the collectives' fixed latency and {h(c['bytes_1'], 'worked.bytes_1')} "
        f"moving bytes.",
        f"5. **The PP boundary.** One send of the hidden state between the nodes, over the network: a hop and the "
        f"bytes, {h(c['pp_send'], 'worked.pp_send')}, once per token.",
        f"6. **The rest of the step.** The engine's operations: reading the weights (one token's matrix products "
        f"stream them at {h(c['hbm_fraction'], 'worked.hbm_fraction')} of {h(ns.hbm, 'worked.hbm')}) and the KV "
        f"cache takes {h(c['mem_1'], 'worked.mem_1')} over the stages in turn, the arithmetic "
        f"{h(c['compute_1'], 'worked.compute_1')}, and every kernel's fixed "
        f"{h(c['kernel_cost'], 'worked.kernel_cost')} with the host's {h(c['step_overhead'], 'worked.step_overhead')} "
        f"per step {h(c['overhead_1'], 'worked.overhead_1')}. With the communication: "
        f"{h(c['step_1'], 'worked.step_1')} per token.",
        f"7. **Share.** Communication is {h(c['share_1'], 'worked.share_1')} of the step at one sequence; "
        f"counting bytes ÷ datasheet bandwidth alone, as this page once did, gave "
        f"{h(c['old_share'], 'worked.old_share')}.",
        f"8. **At a serving batch.** {h(c['serving'], 'worked.serving')} sequences, decoded as "
        f"{h(w.pp, 'worked.pp')} micro-batches of {h(c['micro'], 'worked.micro')}: each all-reduce carries "
        f"{h(c['msg_s'], 'worked.msg_s')} by {ns.alg_s}, communication takes {h(c['tp_s'], 'worked.tp_s')} "
        f"of a {h(c['step_s'], 'worked.step_s')} step ({h(c['share_s'], 'worked.share_s')}), "
        f"{h(c['over_compute_s'], 'worked.over_compute_s')} the step's arithmetic.",
    ]
    return "\n".join(lines) + "\n"


class Case:
    """One deployment's figures for prose."""

    def __init__(self, cat: Catalog, model_id: str, precision_id: str) -> None:
        t = traffic(cat, model_id, precision_id)
        d = t.dep
        pp_b = pp_boundary_bytes(t.hidden, act_bytes(cat))
        self.model = t.model
        self.precision = t.precision
        self.params = fmt.params(d.params, 1)
        self.weight = fmt.nbytes(d.weight_bytes, "GB", 1)
        self.fewest_layout = t.fewest.layout.label
        self.gpus_fewest = fmt.count(t.fewest.gpus)
        self.gpus_rented = fmt.count(d.gpus)
        self.extra_gpus = fmt.count(d.gpus - t.fewest.gpus)
        self.weights_per_gpu = fmt.nbytes(d.memory.weights, "GiB", 1)
        self.nodes = fmt.count(d.nodes, "nodes")
        self.layout = d.layout.label
        self.tp = fmt.count(d.layout.tp, "GPUs")
        self.pp = fmt.count(d.layout.pp, "stages")
        self.hidden = fmt.count(t.hidden, "elements")
        self.layers = fmt.count(t.layers, "layers")
        self.message = nbytes_exact(t.message)
        self.ring_factor = fmt.quantity(ring_allreduce_steps(d.layout.tp) / d.layout.tp, "× message", 2)
        self.ring_per_gpu = nbytes_exact(t.ring_per_gpu)
        self.tp_bytes = fmt.nbytes(t.tp_bytes, "MB", 2)
        self.ring_steps = fmt.count(t.ring_steps, "hops")
        self.allreduces = fmt.count(t.allreduces, "all-reduces")
        self.pp_bytes_exact = nbytes_exact(pp_b)
        self.traffic = t


def _comm_figures(cat: Catalog, w: Traffic, c: Comm) -> dict[str, Figure | str]:
    """The worked deployment's communication figures, named for prose and the worked example."""
    d = w.dep
    tm = d.setting.time_model
    b1, bs = c.b1, c.bs
    n = d.layout.tp
    algs = algorithm_prices(d, w.message)
    g = tm.chip(d.setting.chip.id).gemm_for(d.setting.precision.tensor_format)
    nvl_datasheet = links(cat)["nvlink"].one_way.bytes_per_s
    # What the page used to count: ring bytes per GPU ÷ the datasheet's one-way NVLink, against the memory read.
    old_s = w.tp_bytes / nvl_datasheet
    old_share = old_s / (old_s + 1 / d.decode_ceiling)
    p1 = b1["nvlink"].engine
    out: dict[str, Figure | str] = {
        "nvl_bw": gbps(b1["nvlink"].link.bytes_per_s),
        "pcie_bw": gbps(b1["pcie"].link.bytes_per_s),
        "net_bw": gbps(b1["network"].link.bytes_per_s),
        "nvl_hop": us(tm.nvlink_hop_s, 0, basis="data/latencies.yaml"),
        "pcie_hop": us(tm.pcie_hop_s, 0, basis="data/latencies.yaml"),
        "net_hop": us(tm.network_hop_s, 0, basis="data/policies.yaml, measured-fractions"),
        "car_latency": us(tm.one_shot.latency_s, 1, basis="fitted on vLLM's custom all-reduce timings"),
        "two_latency": us(tm.two_shot.latency_s, 1, basis="fitted on vLLM's custom all-reduce timings"),
        "nccl_latency": us(algs["nccl"].latency_s, 1, basis="fitted on nccl-tests timings, at this group's size"),
        "car_efficiency": fmt.percent(tm.one_shot.efficiency),
        "link_fraction": fmt.percent(tm.link_fraction),
        "hbm_fraction": fmt.percent(g.weight_fraction(1)),
        "compute_fraction": fmt.percent(g.compute),
        "kernel_cost": us(tm.kernel_s, 1, basis="data/latencies.yaml, kernel-in-graph"),
        "step_overhead": ms(tm.step_overhead_s, 2, basis="fitted on the calibration rows"),
        "ring_hops": fmt.count(2 * (n - 1), "steps"),
        "ring_1": us(algs["nccl"].seconds, 2, basis=TIME_BASIS),
        "two_1": us(algs["two-shot"].seconds, 2, basis=TIME_BASIS),
        "one_1": us(algs["one-shot"].seconds, 2, basis=TIME_BASIS),
        "ar_1": us(b1["nvlink"].allreduce.seconds, 2, basis=TIME_BASIS),
        "tp_1": ms(b1["nvlink"].tp_s, 2, basis=TIME_BASIS),
        "lat_1": ms(b1["nvlink"].tp_latency_s, 2, basis="the collectives' fixed latencies alone"),
        "bytes_1": ms(b1["nvlink"].tp_s - b1["nvlink"].tp_latency_s, 3, basis="bytes ÷ the share of the link reached"),
        "lat_share_1": share(b1["nvlink"].latency_share),
        "pp_send": us(c.pp_send_s, 1, basis="one hop + the hidden state and residual ÷ the network's copy rate"),
        "mem_1": ms(p1.memory_s, 1, basis="the engine's memory time, stages in turn"),
        "one_stage_mem": ms(p1.memory_s / d.layout.pp, 1, basis="if every stage could read at once"),
        "compute_1": ms(p1.compute_s, 2, basis="the engine's compute time"),
        "overhead_1": ms(p1.launch_s, 1, basis="every kernel's fixed cost and the host's time per step"),
        "step_1": ms(b1["nvlink"].total_s, 1, basis="the engine's decode step, one sequence"),
        "share_1": share(b1["nvlink"].comm_share),
        "old_share": share(old_share),
        "serving": fmt.count(serving_sequences(cat), "sequences"),
        "micro": fmt.count(bs["nvlink"].tokens, "tokens"),
        "msg_s": fmt.nbytes(bs["nvlink"].tokens * w.message, "MB", 2),
        "tp_s": ms(bs["nvlink"].comm_s, 2, basis=TIME_BASIS),
        "step_s": ms(bs["nvlink"].total_s, 1, basis="the engine's decode step at the serving batch"),
        "share_s": share(bs["nvlink"].comm_share),
        "compute_s": ms(bs["nvlink"].engine.compute_s, 2, basis="the engine's compute time"),
        "over_compute_s": fmt.ratio(bs["nvlink"].comm_over_compute, 2),
        "crit": fmt.count(c.crit, "sequences"),
        "crit_ctx": fmt.Figure(float(BATCH_LIMIT), "sequences", "no batch up to " + fmt.number(BATCH_LIMIT),
                               "a lower bound: the search stops there") if c.crit_at_context is None
        else fmt.count(c.crit_at_context, "sequences"),
        "max_concurrency": fmt.count(d.max_concurrency, "sequences"),
        "bubble_1": share(bubble(d.layout.pp, 1)),
    }
    for k in TIME_LINKS:
        out[f"share_1_{k}"] = share(b1[k].comm_share)
        out[f"share_s_{k}"] = share(bs[k].comm_share)
        out[f"comm_1_{k}"] = ms(b1[k].comm_s, 2, basis=TIME_BASIS)
        out[f"comm_s_{k}"] = ms(bs[k].comm_s, 2, basis=TIME_BASIS)
        out[f"over_compute_s_{k}"] = fmt.ratio(bs[k].comm_over_compute, 2)
        out[f"step_1_{k}"] = ms(b1[k].total_s, 1, basis="the engine's decode step with this link")
        out[f"lat_share_1_{k}"] = share(b1[k].latency_share)
    return out


class ParallelismPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("parallelism"),
             tp_diagram, worked_example, partial(comm_table, model_id="llama-3.1-405b", precision_id="bf16", name="comm405"),
             partial(comm_table, model_id="llama-3.1-70b", precision_id="bf16", name="comm70"), breakdown_chart,
             across_table,
             pipeline_diagram, rules_table, layout_table, ring_table, ring_diagram, algorithm_table)
    """The functions the page's blocks print (`bubble_table` reads no data), `comm_table` with the blocks' arguments."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        # the prose's NVLink SHARP aside is about the scenario node's switch
        switch = cat.interconnect(self.reference().node.id, Node).switch
        if switch is not None:
            self.cite("interconnects", switch)
        r = reference(cat)
        node = cat.interconnect(r.node.id, Node)
        acc = cat.accelerators[node.accelerator]
        ls = links(cat)
        cases = {_short(m, p): Case(cat, m, p) for m in MODELS for p in PRECISIONS}
        w, s = cases[_short(*WORKED)], cases[_short(*SMALL)]
        wt, st = w.traffic, s.traffic
        nvl, net = ls["nvlink"], ls["network"]
        arch405 = r.eng.models[WORKED[0]].arch
        valid_tp = tp_degrees(arch405, node.gpus)
        f8c = cases["m405_fp8"].traffic
        f8, f8_fewest = f8c.dep, f8c.fewest
        wf = wt.fewest
        lpol = r.eng.layout_policies[r.scenario.layout_policy]
        fewest_pol = r.eng.layout_policies[FEWEST]
        st405 = setting(r.eng, WORKED[0], WORKED[1], r.scenario.id)
        tp_across = Layout(wt.dep.layout.tp * wt.dep.layout.pp)
        tp_across_ok = not feasible(st405, tp_across)
        fewest_ok = not feasible(st405, wf.layout)
        uneven = r.eng.models[UNEVEN]
        uneven_parts = pp_partition(uneven.arch.layers, UNEVEN_STAGES)
        parts_405 = pp_partition(arch405.layers, UNEVEN_STAGES)
        rounded = [c.traffic for c in cases.values() if c.traffic.dep.gpus > c.traffic.fewest.gpus]

        comm = _comm(cat, wt.dep)
        cw = _comm_figures(cat, wt, comm)
        b1, bs = comm.b1, comm.bs
        p1 = b1["nvlink"].engine
        tp_over_pp = b1["nvlink"].tp_s / comm.pp_send_s
        sc = r.scenario
        ctx_mid = sc.input_tokens + sc.output_tokens / 2
        shares_1 = {k: b1[k].comm_share for k in TIME_LINKS}
        lat_1 = {k: b1[k].latency_share for k in TIME_LINKS}
        over_s = {k: bs[k].comm_over_compute for k in TIME_LINKS}
        old_fig = cw["old_share"]
        assert isinstance(old_fig, Figure)  # noqa: S101 - a share, always a figure
        old = old_fig.value / 100
        dx, xx = across(cat)
        sv = serving_sequences(cat)
        ax = {(k, c): decode_step(dep, c) for k, dep in (("pp", dx), ("tp", xx)) for c in (1, sv)}
        full = {k: decode_step(dep, dep.max_concurrency) for k, dep in (("pp", dx), ("tp", xx))}
        tput = {k: full[k].sequences / full[k].total_s for k in ("pp", "tp")}

        sh = tp_shard(wt.dep)
        ring_steps = ring_steps_of(wt.dep, wt.message)
        pp = wt.dep.layout.pp
        tpd = SimpleNamespace(
            heads=fmt.count(sh.heads, "heads"), kv=fmt.count(sh.kv_heads, "heads"),
            ffn=fmt.count(sh.ffn, "columns"), ffn_total=fmt.count(arch405.ffn_size, "columns"),
            o_rows=fmt.count(sh.o_rows, "rows"), qkv_cols=fmt.count(sh.qkv_cols, "columns"))
        rd = SimpleNamespace(
            chunk=nbytes_exact(wt.message / wt.dep.layout.tp),
            step=us(ring_steps["ring"][0], 2, basis="NCCL's price of the all-reduce over its ring's steps"),
            two_step=us(ring_steps["two-shot"][0], 2, basis="the custom two-shot's price over its two steps"))
        pd = SimpleNamespace(
            m1=fmt.count(PIPE_MICRO[0], "micro-batches"), m2=fmt.count(PIPE_MICRO[1], "micro-batches"),
            idle=fmt.count(pp * (pp - 1), "boxes"), bubble_2=share(bubble(pp, PIPE_MICRO[1])))

        self.tpd = tpd
        self.rd = rd
        self.pd = pd
        self.gpu_name = acc.name
        self.node_name = node.name
        self.node_gpus = fmt.count(node.gpus)
        self.gpu_memory = fmt.nbytes(acc.memory.bytes, "GB")
        self.policy_name = lpol.name
        self.fewest_policy_name = fewest_pol.name
        self.time_model_name = wt.dep.setting.time_model.name
        self.context = fmt.count(r.scenario.context_tokens, "tokens", show_unit=True)
        self.ctx_mid = fmt.count(ctx_mid, "tokens", show_unit=True)
        self.tp_across = tp_across.label
        self.tp_across_replicas = fmt.count(kv_replicas(arch405.kv_heads, tp_across.tp), "GPUs")
        self.uneven_model = uneven.name
        self.uneven_layers = fmt.count(uneven.arch.layers, "layers")
        self.uneven_stages = fmt.count(UNEVEN_STAGES, "stages")
        self.uneven_parts = ", ".join(str(n) for n in uneven_parts)
        self.parts_405 = ", ".join(str(n) for n in parts_405)
        self.hbm = fmt.bandwidth(acc.memory_bandwidth.bandwidth.one_way(), "TB/s", 2)
        self.nvlink = fmt.bandwidth(nvl.one_way)
        self.network = fmt.bandwidth(net.one_way)
        self.network_name = net.label
        self.act_name = cat.precisions[ACTIVATIONS].name
        self.act_bytes = fmt.quantity(act_bytes(cat), "bytes/element", 0)
        self.allreduces_per_layer = fmt.count(ALLREDUCES_PER_LAYER, "all-reduces")
        self.extend(cases)
        self.w = w
        self.s = s
        self.cw = SimpleNamespace(**cw)
        self.alg_1 = b1["nvlink"].allreduce.algorithm
        self.alg_s = bs["nvlink"].allreduce.algorithm
        self.worked_layout = w.layout
        self.valid_tp_405 = ", ".join(str(t) for t in valid_tp)
        self.heads_405 = fmt.count(arch405.attention_heads, "heads")
        self.kv_heads_405 = fmt.count(arch405.kv_heads, "heads")
        self.layers_405 = fmt.count(arch405.layers, "layers")
        self.tp_over_pp_time = fmt.ratio(tp_over_pp, 0, basis="TP's all-reduces per token ÷ the PP send, engine's times")
        self.nvlink_over_network = fmt.ratio(nvl.one_way.ratio(net.one_way), basis="one way each")
        self.x_step_1 = ms(ax[("tp", 1)].total_s, 1, basis="the engine's decode step, TP across nodes")
        self.x_share_1 = share(ax[("tp", 1)].comm_share)
        self.x_share_s = share(ax[("tp", sv)].comm_share)
        self.x_max = fmt.count(xx.max_concurrency, "sequences")
        self.pp_max = fmt.count(dx.max_concurrency, "sequences")
        self.x_tput_full = fmt.quantity(tput["tp"], "tokens/s", 0, show_unit=True)
        self.pp_tput_full = fmt.quantity(tput["pp"], "tokens/s", 0, show_unit=True)
        nccl1 = algorithm_prices(wt.dep, wt.message)["nccl"]
        self.ring_lat_over_bytes = fmt.ratio(nccl1.latency_s / (nccl1.seconds - nccl1.latency_s), 0,
                                             basis="NCCL's fixed latency ÷ its bytes' time, one token")
        self.m405_fp8_extra_share = fmt.percent((f8.gpus - f8_fewest.gpus) / f8.gpus)
        self.w_extra_share = fmt.percent((wt.dep.gpus - wf.gpus) / wt.dep.gpus)
        # Claims the prose makes.
        self.worked_spans_nodes = fmt.claim(wt.dep.nodes > 1 and wt.dep.layout.pp > 1,
                                            f"{wt.dep.layout.label} on {wt.dep.nodes} nodes")
        self.worked_tp_in_node = fmt.claim(wt.dep.layout.tp <= node.gpus, f"TP{wt.dep.layout.tp} ≤ {node.gpus} GPUs")
        self.tp_dwarfs_pp = fmt.claim(tp_over_pp > 10,
                                      f"TP {b1['nvlink'].tp_s * 1e6:.0f} µs vs one PP send {comm.pp_send_s * 1e6:.1f} µs",
                structural="an order of magnitude: TP all-reduces every layer, PP sends once per stage")
        self.latency_dominates_b1 = fmt.claim(
                min(lat_1.values()) > 0.5,
                "latency share of TP's communication at one sequence: "
                + ", ".join(f"{k} {v:.0%}" for k, v in lat_1.items()))
        self.one_shot_at_b1 = fmt.claim(b1["nvlink"].allreduce.algorithm == "one-shot",
                                        f"{b1['nvlink'].allreduce.algorithm} at one token")
        self.share_many_times_old = fmt.claim(shares_1["nvlink"] > 5 * old,
                                              f"{shares_1['nvlink']:.2%} against {old:.2%} counting bytes alone")
        self.nvlink_small_b1 = fmt.claim(shares_1["nvlink"] < 0.05, f"{shares_1['nvlink']:.2%} on NVLink")
        self.off_node_large_b1 = fmt.claim(min(shares_1["pcie"], shares_1["network"]) > 3 * shares_1["nvlink"],
                                           ", ".join(f"{k} {v:.2%}" for k, v in shares_1.items()))
        self.network_share_above_nvlink = fmt.claim(
                bs["network"].comm_share > 3 * bs["nvlink"].comm_share,
                f"serving batch: {bs['network'].comm_share:.1%} over the network vs {bs['nvlink'].comm_share:.1%} on NVLink")
        self.off_node_above_compute = fmt.claim(min(over_s["pcie"], over_s["network"]) > 2 * over_s["nvlink"],
                                                f"PCIe {over_s['pcie']:.2f} ×, network {over_s['network']:.2f} × compute, "
                                                f"NVLink {over_s['nvlink']:.2f} ×")
        self.serving_memory_bound = fmt.claim(bs["nvlink"].engine.bound == "memory", bs["nvlink"].engine.bound)
        self.ctx_crit_later = fmt.claim(comm.crit_at_context is None or comm.crit_at_context > comm.crit,
                                        f"compute-bound from {comm.crit} sequences without KV, from "
                                        f"{comm.crit_at_context} at {ctx_mid:.0f} tokens",
                structural="None when compute never catches up at this context (KV reads grow with the batch)")
        self.ctx_crit_above_kv = fmt.claim(comm.crit_at_context is None or comm.crit_at_context > wt.dep.max_concurrency,
                                           f"compute-bound at {comm.crit_at_context} sequences of {ctx_mid:.0f} tokens; "
                                           f"the KV cache holds {wt.dep.max_concurrency}",
                structural="None when compute never catches up at this context (KV reads grow with the batch)")
        self.across_faster_b1 = fmt.claim(ax[("tp", 1)].total_s < ax[("pp", 1)].total_s,
                                          f"{ax[('tp', 1)].total_s * 1e3:.1f} ms across nodes vs "
                                          f"{ax[('pp', 1)].total_s * 1e3:.1f} ms with stages")
        self.across_comm_large = fmt.claim(ax[("tp", sv)].comm_share > 0.25,
                                           f"{ax[('tp', sv)].comm_share:.0%} of the step at {sv} sequences")
        self.across_fewer_seqs = fmt.claim(xx.max_concurrency < dx.max_concurrency,
                                           f"{xx.max_concurrency} < {dx.max_concurrency} sequences")
        self.pp_more_tput = fmt.claim(tput["pp"] > 1.5 * tput["tp"],
                                      f"{tput['pp']:.0f} tokens/s at {dx.max_concurrency} sequences vs {tput['tp']:.0f} at "
                                      f"{xx.max_concurrency}")
        picks = {t: tp_allreduce(wt.dep, t).algorithm for _, t in message_tokens(cat)}
        limit = wt.dep.setting.time_model.custom_allreduce_max_bytes
        self.custom_below_limit = fmt.claim(
                all((a == "nccl") == (t * wt.hidden * ACTIVATION_BYTES >= limit) for t, a in picks.items()),
                "; ".join(f"{t} tokens: {a}" for t, a in picks.items()))
        self.custom_limit = fmt.nbytes(limit, "MiB", 0)
        self.fp8_rounds_up = fmt.claim(f8.gpus > f8_fewest.gpus and f8.nodes == 1 and f8.layout.pp == 1,
                                       f"fewest {f8_fewest.layout.label} = {f8_fewest.gpus} → {f8.layout.label} = "
                                       f"{f8.gpus}")
        self.fewest_not_valid_tp = fmt.claim(
                arch405.attention_heads % f8_fewest.gpus != 0 and arch405.kv_heads % f8_fewest.gpus != 0,
                f"{arch405.attention_heads} and {arch405.kv_heads} heads are not multiples of {f8_fewest.gpus}",
                structural="divisibility: head counts against a GPU count are integers, not magnitudes")
        self.fewest_uses_stages = fmt.claim(f8_fewest.layout.pp > 1 and f8_fewest.nodes == 1,
                                            f"{f8_fewest.layout.label} on {f8_fewest.nodes} node")
        self.tp_above_kv_accepted = fmt.claim(
                tp_across_ok and tp_across.tp > arch405.kv_heads,
                f"{tp_across.label} > {arch405.kv_heads} KV heads: feasible, each KV head on "
                f"{kv_replicas(arch405.kv_heads, tp_across.tp)} GPUs")
        self.fewest_accepted = fmt.claim(fewest_ok and wf.gpus < wt.dep.gpus,
                                         f"{wf.layout.label} = {wf.gpus} GPUs feasible; the policy rents {wt.dep.gpus}")
        self.fewest_not_whole_nodes = fmt.claim(wf.gpus % node.gpus != 0 and wf.gpus > node.gpus,
                                                f"{wf.gpus} GPUs over nodes of {node.gpus}")
        self.uneven_split = fmt.claim(uneven.arch.layers % UNEVEN_STAGES != 0 and len(set(uneven_parts)) > 1,
                                      f"{uneven.arch.layers} layers in {UNEVEN_STAGES} stages: {uneven_parts}")
        self.worked_exceeds_node = fmt.claim(wf.gpus > node.gpus,
                                             f"fewest {wf.layout.label} = {wf.gpus} GPUs > {node.gpus} per node")
        self.fp8_no_stages = fmt.claim(f8.nodes == 1 and f8.layout.pp == 1, f"{f8.layout.label} on {f8.nodes} node")
        self.small_fits_node = fmt.claim(st.dep.nodes == 1 and st.dep.layout.pp == 1, st.dep.layout.label)
        self.pp_no_faster = fmt.claim(p1.memory_s > 1.5 * p1.memory_s / wt.dep.layout.pp,
                                      f"{p1.memory_s * 1e3:.1f} ms with stages in turn vs "
                                      f"{p1.memory_s / wt.dep.layout.pp * 1e3:.1f} ms")
        self.rounding_costs_gpus = fmt.claim(
                len(rounded) >= 3, "; ".join(f"{t.fewest.layout.label} → {t.dep.layout.label}" for t in rounded))


namespace = ParallelismPage.namespace_of
sources = ParallelismPage.sources_of
