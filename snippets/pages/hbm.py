"""Page model of "HBM: capacity and bandwidth" (docs/hbm.md).

Every deployment the page shows (layout, memory per GPU, GPUs, nodes, decode ceiling, cost) is the
engine's (`snippets.engine`, through `snippets.pages.scenario.reference`): the node, the memory
budget and the context are the reference scenario's (`data/scenarios.yaml`). What this module adds
is teaching arithmetic that sizes nothing: arithmetic intensity, the ridge point, the time to read
a card's memory once, a hypothetical card that holds what it cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.data import Catalog, required
from snippets.data.units import BYTE_UNITS
from snippets.engine import Deployment, Layout
from snippets.engine.deployment import setting
from snippets.engine.layout import kv_heads_per_gpu, pp_partition, tp_degrees
from snippets.engine.memory import kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.specs import ChipSpec
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.interconnect import pcie_x16
from snippets.pages.scenario import SERVING, Reference, reference
from snippets.pages.units import byte_count, gpu_label, ms, tbps, tps, usd
from snippets.render import charts, fmt
from snippets.render.fmt import Figure
from snippets.teaching.rounded import FLOP_PER_PARAM_PER_TOKEN, KV_TENSORS, flop_per_byte

OLDER = "a100-80gb-sxm"
"""The generation before the scenario's GPU; its node is the first in data/ built from it."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
FIT_ROWS = ("fp32", "bf16", "fp8", "int8", "int4")
"""Rows of the what-fits table (BF16 and FP16 store the same bytes; BF16 is what Llama ships in)."""
WORKED = ("llama-3.1-70b", "bf16")
LEANER = ("llama-3.1-70b", "fp8")
"""The worked model with half the weight bytes, on the same GPUs (the worked deployment's layout): the cost lens's
second lever."""
TP_ONLY = ("llama-3.1-405b", "fp8")
PIPELINED = ("llama-3.1-405b", "bf16")
ONE_CARD = ("llama-3.1-8b", "fp8")
"""The quiz's one-card deployment: how many sequences one GPU holds, and the ceiling at that batch."""
BATCHES = (1, 2, 4, 8, 16)
ILLUSTRATIVE_BATCH = 8
"""A batch size the prose uses to show how batching raises arithmetic intensity."""
SECONDS_PER_HOUR = 3600
LONG_CONTEXT = "decode-context"
"""Its range's upper end is the longest context Llama 3.1 accepts (131,072 tokens, from its config.json)."""


# --------------------------------------------------------------------------- formatting

def per_gpu_hour(tokens_per_s: float, gpus: float) -> Figure:
    """Tokens per rented GPU-hour at `tokens_per_s` for a replica that takes `gpus` rented GPUs."""
    return fmt.quantity(tokens_per_s / gpus * SECONDS_PER_HOUR, "tokens/GPU-hour", 0)


# --------------------------------------------------------------------------- reading the engine

def weights_read(d: Deployment) -> float:
    """Weight bytes one decode step reads on the busiest GPU of each stage, stages added up (dense models):
    the step's bytes without the KV cache. The engine's `decode_step_bytes` adds the KV cache to this."""
    s = d.setting
    return sum(st.total for st in stage_weights(s.model.arch, s.precision, d.layout))


def weights_only_ceiling(d: Deployment) -> float:
    """One sequence's ceiling if the step read the weights alone (no KV cache): HBM ÷ the weights read."""
    return d.setting.chip.hbm_bytes_per_s / weights_read(d)


def kv_per_token(d: Deployment, tp: int = 1) -> float:
    """KV-cache bytes one token adds, for the whole model (tp=1) or on one GPU of a TP group of `tp`."""
    s = d.setting
    arch = s.model.arch
    return kv_bytes_per_token_per_gpu(arch, arch.layers, tp, s.kv_precision.bytes_per_param)


def batch_ceiling(d: Deployment, batch: int) -> float:
    """Tokens per second of the whole replica at `batch` sequences: batch x HBM ÷ the engine's bytes per step."""
    return batch * d.setting.chip.hbm_bytes_per_s / d.decode_step_bytes(batch)


def one_card(r: Reference, model: str, precision: str, chip: ChipSpec) -> Deployment:
    """`model` on one card of `chip`, at the scenario (on the first node built from it)."""
    return r.deployment(model, precision, accelerator=chip.id, layout=Layout(1))


def older_node(r: Reference) -> str:
    node = r.eng.node_of(OLDER)
    if node is None:
        raise ValueError(f"no node in data/ is built from {OLDER}")
    return node.id


# --------------------------------------------------------------------------- tables

def gpu_table(cat: Catalog) -> str:
    """Label and budgeted capacity (the runtime's total, or the label where none is published), bandwidth, and the
    time to read all of the budgeted memory once."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for chip_id in (OLDER, r.node.chip):
        chip, acc = r.eng.chips[chip_id], cat.accelerators[chip_id]
        rows.append([
            chip.name, acc.memory_type,
            fmt.nbytes(chip.label_bytes, "GB"),
            fmt.quantity(chip.capacity_bytes / BYTE_UNITS["MiB"], "MiB", 0),
            fmt.nbytes(chip.capacity_bytes, "GiB", 1),
            f"{acc.capacity_basis}'s total" if chip.capacity_reported else "the label (no runtime total published)",
            fmt.bandwidth(acc.memory_bandwidth.bandwidth, "GB/s"), acc.memory_bandwidth.bandwidth.direction.label,
            ms(chip.capacity_bytes / chip.hbm_bytes_per_s),
        ])
    return fmt.table(
        "gpus",
        ["GPU", "Memory", "Label", "Budgeted (MiB)", "Budgeted (GiB)", "Budgeted is", "Bandwidth", "Quoted as",
         "Read all of it once"],
        rows, align="llrrrlrlr",
    )


def ceiling_table(cat: Catalog) -> str:
    """The engine's deployment of each model x precision on each node, and its single-sequence ceilings."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for node_id in (older_node(r), r.node.id):
        for m in MODELS:
            for p in PRECISIONS:
                d = r.deployment(m, p, node=node_id)
                s = d.setting
                math_in = s.precision.tensor_format.upper()
                if d.weight_only:
                    math_in = f"{d.compute_format.upper()} (weight-only {s.precision.name})"
                cost = d.cost_per_replica_hour
                rows.append([
                    f"{s.model.name} {s.precision.name} on {gpu_label(s.chip)}",
                    fmt.nbytes(d.weight_bytes, "GB"),
                    d.layout.label,
                    fmt.nbytes(d.memory.weights, "GiB", 1),
                    math_in,
                    tps(weights_only_ceiling(d)),
                    tps(d.decode_ceiling),
                    per_gpu_hour(d.decode_ceiling, d.rented_gpus_per_replica),
                    "unpriced" if cost is None or s.price is None else usd(cost, s.price),
                ])
    return fmt.table(
        "ceiling",
        ["Model, precision, GPU", "Weights", "Layout", "Weights per GPU", "Matrix math in", "Weights only",
         "One sequence", "Per GPU-hour", "Per hour"],
        rows, align="lrlrlrrrr",
    )


def fits_table(cat: Catalog) -> str:
    """The worked model on one card of the scenario's GPU, by precision: what the pool must hold, and whether it does."""
    r = reference(cat)
    model = WORKED[0]
    rows: list[list[fmt.Cell]] = []
    for p in FIT_ROWS:
        d = r.deployment(model, p)
        mem = d.setting.memory(Layout(1))
        bits = d.setting.precision.bits_per_param
        rows.append([
            d.setting.precision.name,
            fmt.quantity(bits, "bits", 0 if bits == int(bits) else 3),
            fmt.nbytes(d.weight_bytes, "GB", 1),
            fmt.nbytes(mem.weights, "GiB", 1),
            fmt.nbytes(mem.used, "GiB", 1),
            fmt.nbytes(mem.pool, "GiB", 1),
            "Yes" if mem.fits else "No",
            d.layout.label,
        ])
    return fmt.table(
        "fits",
        ["Precision", "Bits per weight", "Weights", "Weights on one GPU", "Pool must hold", "Pool",
         "Fits one card?", "Layout chosen"],
        rows, align="lrrrrrll",
    )


def batch_rows(d: Deployment) -> list[int]:
    most = d.max_concurrency
    return sorted({b for b in (*BATCHES, most) if 1 <= b <= most} or {1})


def batch_table(cat: Catalog) -> str:
    """The leaner deployment at growing batch: bytes per step, ceilings, tokens per GPU-hour and per dollar."""
    r = reference(cat)
    d = r.deployment(*LEANER, layout=r.deployment(*WORKED).layout)
    cost = d.cost_per_replica_hour
    rows: list[list[fmt.Cell]] = []
    for b in batch_rows(d):
        t = batch_ceiling(d, b)
        rows.append([
            fmt.count(b, "sequences"),
            fmt.nbytes(d.decode_step_bytes(b) - weights_read(d), "GB", 1),
            fmt.nbytes(d.decode_step_bytes(b), "GB", 1),
            tps(t),
            tps(t / b),
            per_gpu_hour(t, d.rented_gpus_per_replica),
            "unpriced" if cost is None or d.setting.price is None else usd(cost / (t * SECONDS_PER_HOUR) * 1e6,
                                                                           d.setting.price),
        ])
    return fmt.table(
        "batch",
        ["Sequences", "KV cache read per GPU", "Bytes per step per GPU", "Replica ceiling", "Per sequence",
         "Per GPU-hour", "Per million tokens"],
        rows, align="rrrrrrr",
    )


def worked_example(cat: Catalog) -> str:
    """Llama 3.1 70B in BF16 on the scenario's GPUs, step by step, as Markdown with figure spans."""
    ns = HbmPage.of(cat)
    h, e = fmt.fig_html, fmt.escape_markdown  # figures as spans; data text (names) escaped as Markdown
    w = ns.w
    lines = [
        f"1. **Weight bytes.** {h(w.params, 'worked.params')} parameters (counted from the architecture) × "
        f"{h(w.bytes_per_param, 'worked.bytes_per_param')} bytes = {h(w.weight, 'worked.weight')}.",
        f"2. **The pool.** vLLM may use {h(ns.utilization, 'worked.utilization')} of the "
        f"{h(ns.gpu_reported, 'worked.gpu_reported')} an {e(ns.gpu_name)} reports: "
        f"{h(ns.pool, 'worked.pool')} per GPU for the weights, the activation peak of its profiling run "
        f"({h(ns.activations, 'worked.activations')}), the memory outside PyTorch "
        f"({h(ns.non_torch, 'worked.non_torch')} at {e(w.layout)}) and the KV cache.",
        f"3. **Where it lives.** The weights alone exceed one pool. {ns._tight_words} The engine's policy therefore "
        f"picks **{w.layout}**, the smallest tensor-parallel degree vLLM accepts: {h(w.gpus, 'worked.gpus')} GPUs holding "
        f"{h(w.weights_gpu_gib, 'worked.weights_gpu_gib')} of weights each, with "
        f"{h(ns.w_room, 'worked.w_room')} of each pool left for the KV cache.",
        f"4. **KV cache per token.** {h(ns.kv_tensors, 'worked.kv_tensors')} tensors (K and V) × "
        f"{h(w.layers, 'worked.layers')} layers × {h(w.kv_heads, 'worked.kv_heads')} KV heads × "
        f"{h(w.head_dim, 'worked.head_dim')} × {h(w.kv_bytes, 'worked.kv_bytes')} bytes = "
        f"{h(w.kv_token, 'worked.kv_token')} ({h(w.kv_token_mb, 'worked.kv_token_mb')}); each GPU holds "
        f"{h(w.kv_heads_gpu, 'worked.kv_heads_gpu')} of the KV heads, {h(w.kv_token_gpu, 'worked.kv_token_gpu')}.",
        f"5. **KV cache of one context.** {h(ns.context, 'worked.context')} tokens × "
        f"{h(w.kv_token, 'worked.kv_token')} = {h(w.kv_context, 'worked.kv_context')}, "
        f"{h(w.kv_context_gpu, 'worked.kv_context_gpu')} per GPU, read in full at every step. The pool has "
        f"{h(w.free_gib, 'worked.free_gib')} left after it.",
        f"6. **Weights only.** Each GPU reads its own {h(w.weights_gpu, 'worked.weights_gpu')} at "
        f"{h(ns.hbm, 'worked.hbm')}, all of them at once: {h(w.step_weights, 'worked.step_weights')} a "
        f"token at the least, so at most **{h(w.tps_weights, 'worked.tps_weights')} tokens per second**.",
        f"7. **With the KV cache.** ({h(w.weights_gpu, 'worked.weights_gpu')} + "
        f"{h(w.kv_context_gpu, 'worked.kv_context_gpu')}) ÷ {h(ns.hbm, 'worked.hbm')} = "
        f"{h(w.step_kv, 'worked.step_kv')}, so at most **{h(w.tps_kv, 'worked.tps_kv')} tokens per second** "
        f"for this sequence.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose

class Shown:
    """A deployment's figures as the prose uses them."""

    def __init__(self, d: Deployment) -> None:
        s = d.setting
        arch = s.model.arch
        hbm = s.chip.hbm_bytes_per_s
        read_w = weights_read(d)
        step = d.decode_step_bytes(1)
        ctx = s.scenario.context_tokens
        t_one = hbm / d.weight_bytes
        cost = d.cost_per_replica_hour
        self.model = s.model.name
        self.precision = s.precision.name
        self.params = fmt.params(d.params, 2)
        self.bytes_per_param = fmt.quantity(s.precision.bytes_per_param, "bytes/param", 0)
        self.weight = fmt.nbytes(d.weight_bytes, "GB", 1)
        self.layout = d.layout.label
        self.why = d.why
        self.tp = fmt.count(d.layout.tp)
        self.pp = fmt.count(d.layout.pp)
        self.gpus = fmt.count(d.gpus)
        self.nodes = fmt.count(d.nodes, "nodes")
        self.stage_layers = " + ".join(str(n) for n in pp_partition(arch.layers, d.layout.pp))
        self.weights_gpu = fmt.nbytes(d.memory.weights, "GB", 1)
        self.weights_gpu_gib = fmt.nbytes(d.memory.weights, "GiB", 1)
        self.layers = fmt.count(arch.layers, "layers")
        self.kv_heads = fmt.count(arch.kv_heads, "heads")
        self.kv_heads_gpu = fmt.count(kv_heads_per_gpu(arch.kv_heads, d.layout.tp), "heads")
        self.head_dim = fmt.count(arch.head_dim, "elements")
        self.kv_bytes = fmt.quantity(s.kv_precision.bytes_per_param, "bytes/element", 0)
        self.kv_token = byte_count(kv_per_token(d))
        self.kv_token_mb = fmt.nbytes(kv_per_token(d), "MB", 2)
        self.kv_token_gpu = byte_count(kv_per_token(d, d.layout.tp))
        self.kv_context = fmt.nbytes(kv_per_token(d) * ctx, "GB", 2)
        self.kv_context_gpu = fmt.nbytes(d.memory.kv_cache, "GB", 2)
        self.kv_share = fmt.percent((step - read_w) / step, 1)
        self.free_gib = fmt.nbytes(d.memory.free, "GiB", 1)
        self.step_weights = ms(read_w / hbm)
        self.tps_weights = tps(hbm / read_w)
        self.step_kv = ms(step / hbm)
        self.tps_kv = tps(d.decode_ceiling)
        # The whole weights at one GPU's bandwidth: what a single card would manage, had it the room.
        self.one_gpu_tps = tps(t_one)
        self.gain = fmt.ratio(hbm / read_w / t_one, 1, basis="ceiling on the layout ÷ one GPU's, weights only")
        self.max_seq = fmt.count(d.max_concurrency, "sequences")
        self.gpu_hour = per_gpu_hour(d.decode_ceiling, d.rented_gpus_per_replica)
        self.cost_hour = None if cost is None or s.price is None else usd(cost, s.price)
        self.usd_per_mtok = (None if cost is None or s.price is None
                             else usd(cost / (d.decode_ceiling * SECONDS_PER_HOUR) * 1e6, s.price))
        self.d = d


def one_card_quiz(r: Reference, chip: ChipSpec) -> dict[str, Any]:
    """The quiz's first problem: `ONE_CARD` on one GPU at the scenario's context. The sequences its KV room holds
    (the engine's `max_concurrency`), and the card's ceiling with all of them decoding (`batch_ceiling`)."""
    d = r.deployment(*ONE_CARD, layout=Layout(1))
    m, n = d.memory, d.max_concurrency
    fmt_id = d.compute_format
    if fmt_id not in chip.dense_flops:
        raise ValueError(f"{chip.name}: the quiz needs a dense {fmt_id} figure")
    t = batch_ceiling(d, n)
    intensity = flop_per_byte(d.setting.precision.bytes_per_param, n)
    ridge = chip.dense_flops[fmt_id] / chip.hbm_bytes_per_s
    return {
        "q1": Shown(d),
        "q1_activations": fmt.nbytes(m.activations, "GiB", 2),
        "q1_non_torch": fmt.nbytes(m.non_torch, "GiB", 2),
        "q1_room": fmt.nbytes(m.kv_room, "GiB", 1),
        "q1_kv_seq": fmt.nbytes(m.kv_per_sequence, "GiB", 2),
        "q1_step": fmt.nbytes(d.decode_step_bytes(n), "GB", 1),
        "q1_tps": tps(t),
        "q1_tps_seq": tps(t / n),
        "q1_intensity": fmt.quantity(intensity, "FLOP/byte", 0, basis=f"weights only, {n} sequences"),
        "q1_ridge": fmt.quantity(ridge, "FLOP/byte", 0, basis=f"dense {fmt_id.upper()} FLOP/s ÷ HBM bandwidth"),
        "q1_compute": fmt_id.upper(),
        "q1_memory_bound": fmt.claim(intensity < ridge, f"{intensity:.0f} < {ridge:.0f} FLOP/byte at {n} sequences"),
    }


@dataclass(frozen=True)
class TpRoom:
    """One TP degree of the serving problem: its KV room per GPU, one sequence's share, the sequences held."""

    layout: str
    room: Figure
    kv_seq: Figure
    seqs: Figure


def serving_quiz(r: Reference) -> dict[str, Any]:
    """The quiz's last problem: the fewest GPUs of one node (TP only) on which `WORKED` holds the serving
    scenario's sequences at once: the smallest TP degree whose memory (`GpuMemory.fits`) takes them all."""
    st = setting(r.eng, *WORKED, SERVING)
    need = st.scenario.concurrency
    degrees = tp_degrees(st.model.arch, r.node.gpus)
    mem = {t: st.memory(Layout(t)) for t in degrees}
    tp = next((t for t in degrees if mem[t].fits), None)
    if tp is None or tp == degrees[0]:
        raise ValueError(f"the quiz needs a TP degree below one that holds {need} sequences of {WORKED[0]}")
    lo = degrees[degrees.index(tp) - 1]

    def row(t: int) -> TpRoom:
        m = mem[t]
        return TpRoom(Layout(t).label, fmt.nbytes(m.kv_room, "GiB", 1), fmt.nbytes(m.kv_per_sequence, "GiB", 2),
                      fmt.count(m.max_sequences, "sequences"))

    return {
        "q5_need": fmt.count(need, "sequences"),
        "q5_context": fmt.count(st.scenario.context_tokens, "tokens"),
        "q5_gpus": fmt.count(tp),
        "q5_layout": Layout(tp).label,
        "q5_lo": row(lo),
        "q5_hi": row(tp),
        "q5_lo_short": fmt.claim(not mem[lo].fits, f"{mem[lo].max_sequences} < {need} sequences on TP{lo}"),
    }


def tight_layout(r: Reference, chosen: Deployment) -> dict[str, Any]:
    """The worked model on the fewest GPUs whose pools hold its weights (TP only, one node), and what vLLM does
    there: the engine's refusal (`Setting.kv_refusal`) at the scenario's max_num_seqs, and again at the general
    default of a smaller GPU (256 sequences), each with vLLM's own message."""
    st = chosen.setting
    degrees = tp_degrees(st.model.arch, r.node.gpus)
    t = next((t for t in degrees if (m := st.memory(Layout(t), 1)).weights < m.pool), None)
    if t is None:
        raise ValueError(f"no TP degree up to {r.node.gpus} holds the weights of {st.model.name}")
    lay = Layout(t)
    small = r.eng.memory_policies[r.scenario.memory_policy].max_num_seqs  # the default of a device of no class
    st_small = setting(r.eng, st.model.id, st.precision.id, st.scenario.id, node=st.node.id, max_num_seqs=small)
    m, m_small = st.memory(lay, 1), st_small.memory(lay, 1)
    refused, refused_small = st.kv_refusal(lay), st_small.kv_refusal(lay)
    h = fmt.fig_html
    if refused is None:
        words = f"On {lay.label} vLLM starts."
    else:
        over = -m.kv_room
        words = (f"On {h(fmt.count(lay.gpus), 'tight.gpus')} GPUs ({lay.label}) each would hold "
                 f"{h(fmt.nbytes(m.weights, 'GiB', 2), 'tight.weights')} of weights; with the activation peak "
                 f"({h(fmt.nbytes(m.activations, 'GiB', 2), 'tight.activations')}: the sampler over the logits of "
                 f"{h(fmt.count(st.memory_policy.max_num_seqs, 'requests'), 'tight.seqs')} dummy requests) and the "
                 f"memory outside PyTorch at {lay.label} ({h(fmt.nbytes(m.non_torch, 'GiB', 2), 'tight.non_torch')})"
                 + (f", that is {h(fmt.nbytes(over, 'GiB', 2), 'tight.over')} more than the pool, and vLLM stops: "
                    if over >= 0 else
                    f", the KV cache gets {h(fmt.nbytes(m.kv_room, 'GiB', 2), 'tight.room')}, and vLLM stops: ")
                 + f"`{refused.vllm_message}`")
        if refused_small is not None:
            words += (f" Started with `--max-num-seqs` at {h(fmt.count(small, 'sequences'), 'tight.small')}, the "
                      f"activation peak falls to {h(fmt.nbytes(m_small.activations, 'GiB', 2), 'tight.act_small')}, "
                      f"but the KV cache's {h(fmt.nbytes(m_small.kv_room, 'GiB', 2), 'tight.room_small')} is short "
                      f"of the {h(fmt.nbytes(m_small.kv_per_sequence, 'GiB', 2), 'tight.need')} one sequence needs: "
                      f"`{refused_small.vllm_message}`")
    return {
        "tight_layout": lay.label,
        "tight_words": words,
        "tight_weights": fmt.nbytes(m.weights, "GiB", 1),
        "tight_activations": fmt.nbytes(m.activations, "GiB", 2),
        "tight_non_torch": fmt.nbytes(m.non_torch, "GiB", 2),
        "tight_small": fmt.count(small, "sequences"),
        "tight_room_small": fmt.nbytes(m_small.kv_room, "GiB", 2),
        "tight_need": fmt.nbytes(m_small.kv_per_sequence, "GiB", 2),
        "tight_refused": fmt.claim(refused is not None and chosen.gpus > lay.gpus,
                                   f"{lay.label}: {m.kv_room / 2**30:.2f} GiB for the KV cache; the policy picks "
                                   f"{chosen.layout.label}"),
        "tight_nothing": fmt.claim(m.kv_room <= 0, f"{m.kv_room / 2**30:.2f} GiB for the KV cache on {lay.label}",
                structural="a sign: no room is left for the KV cache once weights and activations are placed"),
        "tight_refused_small": fmt.claim(refused_small is not None,
                                         f"{m_small.kv_room / 2**30:.2f} GiB < {m_small.kv_per_sequence / 2**30:.2f} "
                                         f"GiB at {small} sequences"),
    }


CHART_MODEL = "llama-3.1-8b"
CHART_PRECISION = "fp8"


def ceiling_chart(cat: Catalog) -> str:
    """The engine's single-sequence decode ceiling of a small model on one card of every accelerator in data/.

    Llama 3.1 8B in FP8 fits on one card of each, so the bars compare the cards' memory bandwidth:
    ceiling = HBM bandwidth ÷ (weights + one context's KV cache), as the engine reads them.
    """
    r = reference(cat)
    ds = [one_card(r, CHART_MODEL, CHART_PRECISION, chip) for chip in r.eng.chips.values()]
    rows = sorted(((d.setting.chip.name, d.decode_ceiling) for d in ds), key=lambda x: -x[1])
    d0 = ds[0]
    bars_ = [charts.Bar(name, tok) for name, tok in rows]
    words = (
        f"Upper bound on tokens per second for one sequence of {d0.setting.model.name} in "
        f"{d0.setting.precision.name} ({d0.weight_bytes / 1e9:,.1f} GB of weights, embeddings and LM head unquantized, "
        f"and a {r.scenario.context_tokens:,}-token KV cache), memory bandwidth ÷ bytes per step, by accelerator: "
        f"from {rows[0][1]:,.0f} on the {rows[0][0]} to {rows[-1][1]:,.0f} on the {rows[-1][0]}."
    )
    svg = charts.bars("ceiling-chart", bars_, "tokens/s, one sequence (ceiling)",
                      "Decode ceiling by accelerator", words)
    return charts.figure(svg, words)


class HbmPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""

    _tight_words: str
    """The worked model on the fewest GPUs that hold its weights, and vLLM's refusal there (the worked example's step)."""
    shows = (running.shows("hbm"), gpu_table, worked_example, ceiling_table, ceiling_chart, fits_table, batch_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        chip, old = r.eng.chips[r.node.chip], r.eng.chips[OLDER]
        acc, acc_old = cat.accelerators[chip.id], cat.accelerators[old.id]
        pol = r.eng.memory_policies[r.scenario.memory_policy]
        hbm, hbm_old = chip.hbm_bytes_per_s, old.hbm_bytes_per_s
        bf16_bpp = r.eng.precisions["bf16"].bytes_per_param
        gen5 = pcie_x16(cat, "pcie-gen5")

        w = Shown(r.deployment(*WORKED))
        a70 = Shown(r.deployment(*WORKED, node=older_node(r)))
        lean = Shown(r.deployment(*LEANER, layout=r.deployment(*WORKED).layout))
        a70_layout = r.deployment(*WORKED, node=older_node(r)).layout  # FP8 against BF16 on the same GPUs
        lean_old = Shown(r.deployment(*LEANER, node=older_node(r), layout=a70_layout))
        s8 = Shown(r.deployment(*TP_ONLY))
        s405 = Shown(r.deployment(*PIPELINED))
        wd, ld, d8, d405 = w.d, lean.d, s8.d, s405.d

        # One sequence of the longest context Llama 3.1 accepts (max_position_embeddings, in data/models.yaml;
        # the upper end of the decode-context assumption gives the same 131,072 where a model lacks it).
        ctx_max = int(wd.setting.model.arch.context_length or cat.assumptions[LONG_CONTEXT].range[1])
        long = r.deployment(*WORKED, context_tokens=ctx_max)
        kv_max = kv_per_token(long) * ctx_max
        kv_max_share = (long.decode_step_bytes(1) - weights_read(long)) / long.decode_step_bytes(1)

        if "bf16" not in old.dense_flops or "bf16" not in chip.dense_flops:
            raise ValueError("the compute contrast needs a dense BF16 figure for both GPUs")
        ridge_old = old.dense_flops["bf16"] / hbm_old
        ridge = chip.dense_flops["bf16"] / hbm
        intensity = flop_per_byte(bf16_bpp)

        on_one = {p: r.deployment(WORKED[0], p).setting.memory(Layout(1)) for p in FIT_ROWS}
        fp8_card, int4_card = on_one["fp8"], on_one["int4"]
        hour = {k: x.d.decode_ceiling / x.d.rented_gpus_per_replica for k, x in (("w", w), ("a70", a70), ("lean", lean))}
        t_pcie = gen5.bytes_per_s / wd.memory.weights
        kv_share = (wd.decode_step_bytes(1) - weights_read(wd)) / wd.decode_step_bytes(1)
        cost_w = required(w.usd_per_mtok, f"a price for the {chip.name} in data/prices.yaml")
        cost_a70 = required(a70.usd_per_mtok, f"a price for the {old.name} in data/prices.yaml")
        lean_most = batch_rows(ld)[-1]
        t_most = batch_ceiling(ld, lean_most)

        self.extend(one_card_quiz(r, chip))
        self.extend(serving_quiz(r))
        tight = tight_layout(r, wd)
        self._tight_words = str(tight.pop("tight_words"))
        self.extend(tight)
        self.gpu_name = chip.name
        self.old_gpu_name = old.name
        self.mem_type = acc.memory_type
        self.old_mem_type = acc_old.memory_type
        self.node_name = r.node.name
        self.node_gpus = fmt.count(r.node.gpus)
        self.gb = fmt.unit_definition("GB")
        self.gib = fmt.unit_definition("GiB")
        self.gpu_label = fmt.nbytes(chip.label_bytes, "GB")
        self.gpu_label_gib = fmt.nbytes(chip.label_bytes, "GiB", 1)
        self.gpu_reported_mib = fmt.quantity(chip.capacity_bytes / BYTE_UNITS["MiB"], "MiB", 0, show_unit=True)
        self.gpu_reported = fmt.nbytes(chip.capacity_bytes, "GiB", 1)
        self.gpu_reported_gb = fmt.nbytes(chip.capacity_bytes, "GB", 1)
        self.old_reported = fmt.nbytes(old.capacity_bytes, "GiB", 1)
        smi = cat.accelerators[chip.id].memory_reported
        if smi is None:
            raise ValueError(f"{chip.name}: the page compares the runtime's total with nvidia-smi's")
        self.gpu_smi_mib = fmt.quantity(smi.bytes / BYTE_UNITS["MiB"], "MiB", 0, show_unit=True)
        self.old_is_label = fmt.claim(not old.capacity_reported, f"{old.name}: no runtime total in data/")
        self.reported_below_smi = fmt.claim(chip.capacity_reported and chip.capacity_bytes < smi.bytes,
                                            f"{chip.capacity_bytes / 2**20:,.0f} < {smi.bytes / 2**20:,.0f} MiB")
        self.gib_gap = fmt.percent(BYTE_UNITS["GiB"] / BYTE_UNITS["GB"] - 1, 1)
        self.utilization = fmt.percent(pol.utilization)
        self.pool = fmt.nbytes(chip.capacity_bytes * pol.utilization, "GiB", 1)
        self.outside_pool = fmt.nbytes(chip.capacity_bytes * (1 - pol.utilization), "GiB", 1)
        self.activations = fmt.nbytes(wd.memory.activations, "GiB", 2)
        self.non_torch = fmt.nbytes(wd.memory.non_torch, "GiB", 2)
        self.w_room = fmt.nbytes(wd.memory.kv_room, "GiB", 1)
        self.max_num_seqs = fmt.count(wd.setting.memory_policy.max_num_seqs, "sequences")
        self.batched_tokens = fmt.count(wd.setting.memory_policy.max_num_batched_tokens, "tokens")
        self.sampler_bytes = fmt.quantity(pol.sampler_bytes_per_logit, "bytes/logit", 1)
        self.vocab = fmt.count(wd.setting.model.arch.vocab_size, "logits")
        nt = dict(pol.non_torch_by_tp)
        low_tp, most_tp = min(nt), max(nt, key=lambda t: nt[t])
        self.non_torch_low = fmt.nbytes(nt[low_tp], "GiB", 2)
        self.non_torch_low_layout = Layout(low_tp).label
        self.non_torch_most = fmt.nbytes(nt[most_tp], "GiB", 2)
        self.non_torch_most_layout = Layout(most_tp).label
        self.block_tokens = fmt.count(pol.kv_block_tokens, "tokens")
        self.policy_name = pol.name
        self.hbm = tbps(hbm)
        self.hbm_gbs = fmt.bandwidth(acc.memory_bandwidth.bandwidth)
        self.hbm_old = tbps(hbm_old)
        self.hbm_gain = fmt.ratio(hbm / hbm_old, 2, basis="H100 ÷ A100, one shared figure each")
        self.sweep = ms(chip.capacity_bytes / hbm)
        self.sweep_old = ms(old.capacity_bytes / hbm_old)
        self.bf16_bytes = fmt.quantity(bf16_bpp, "bytes/param", 0)
        self.flop_per_param = fmt.count(FLOP_PER_PARAM_PER_TOKEN, "FLOP")
        self.intensity = fmt.quantity(intensity, "FLOP/byte", 0)
        self.intensity_batch = fmt.quantity(flop_per_byte(bf16_bpp, ILLUSTRATIVE_BATCH), "FLOP/byte", 0)
        self.old_bf16 = fmt.quantity(old.dense_flops["bf16"] / 1e12, "TFLOP/s", 0, show_unit=True, basis="dense BF16")
        self.h100_bf16 = fmt.quantity(chip.dense_flops["bf16"] / 1e12, "TFLOP/s", 1, show_unit=True,
                                      basis="dense BF16, half the stated sparse figure")
        self.ridge_old = fmt.quantity(ridge_old, "FLOP/byte", 0, basis="dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge = fmt.quantity(ridge, "FLOP/byte", 0, basis="dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_gap = fmt.ratio(ridge_old / intensity, 0, basis="ridge point ÷ batch-1 BF16 intensity")
        self.h100_dense_derived = fmt.claim("bf16" in chip.dense_derived,
                                            f"{chip.name}: dense BF16 derived from the stated sparse figure")
        self.compute_waits = fmt.claim(ridge_old > 10 * intensity and ridge > 10 * intensity,
                                       f"{ridge_old:.0f} and {ridge:.0f} FLOP/byte the chips can do against "
                                       f"{intensity:.0f} decoding needs",
                structural="an order of magnitude: decoding reads each weight for one token (a few FLOP per byte) "
                           "against chips built for hundreds")
        self.batch_n = fmt.count(ILLUSTRATIVE_BATCH, "sequences")
        self.kv_tensors = fmt.count(KV_TENSORS, "tensors")
        self.context = fmt.count(r.scenario.context_tokens, "tokens")
        self.context_max = fmt.count(ctx_max, "tokens")
        self.kv_max = fmt.nbytes(kv_max, "GB", 1)
        self.kv_max_share = fmt.percent(kv_max_share, 0)
        self.long_layout = long.layout.label
        self.long_gpus = fmt.count(long.gpus)
        self.w = w
        self.a70 = a70
        self.lean = lean
        self.lean_old = lean_old
        self.s8 = s8
        self.s405 = s405
        self.fp8_card_used = fmt.nbytes(fp8_card.used, "GiB", 1)
        self.fp8_card_short = fmt.nbytes(-fp8_card.free, "GiB", 1)
        self.fp8_card_weights = fmt.nbytes(fp8_card.weights, "GiB", 1)
        self.int4_card_free = fmt.nbytes(int4_card.free, "GiB", 1)
        self.int4_card_seqs = fmt.count(int4_card.max_sequences, "sequences")
        self.lean_hour_gain = fmt.ratio(hour["lean"] / hour["w"], 2, basis="FP8 ÷ BF16 tokens per GPU-hour, same GPUs")
        self.h100_hour_gain = fmt.ratio(hour["w"] / hour["a70"], 2, basis="H100 ÷ A100 tokens per GPU-hour, BF16")
        self.usd_mtok_w = cost_w
        self.usd_mtok_a70 = cost_a70
        self.lean_most = fmt.count(lean_most, "sequences")
        self.lean_tps_most = tps(t_most)
        self.lean_hour_most = per_gpu_hour(t_most, ld.rented_gpus_per_replica)
        self.lean_batch_gain = fmt.ratio(t_most / ld.decode_ceiling, 1,
                                         basis="replica ceiling at the largest batch that fits ÷ batch 1")
        self.gen5 = fmt.bandwidth(gen5, digits=1)
        self.hbm_over_gen5 = fmt.ratio(hbm / gen5.bytes_per_s, 0, basis="one way each")
        self.pcie_tps = fmt.quantity(t_pcie, "tokens/s", 2)
        # Claims the prose makes.
        self.reported_above_label = fmt.claim(chip.capacity_reported and chip.capacity_bytes > chip.label_bytes,
                                              f"{chip.capacity_bytes / 1e9:.2f} GB reported > {chip.label_bytes / 1e9:.0f} GB")
        self.reported_below_label_gib = fmt.claim(chip.capacity_bytes < chip.label_bytes / 1e9 * BYTE_UNITS["GiB"],
                                                  f"{chip.capacity_bytes / 2**30:.2f} GiB < {chip.label_bytes / 1e9:.0f} GiB")
        self.w70_exceeds_card = fmt.claim(wd.gpus > 1 and not on_one["bf16"].fits,
                                          f"{on_one['bf16'].used / 2**30:.1f} GiB > {on_one['bf16'].pool / 2**30:.1f} GiB")
        self.h100_faster = fmt.claim(hbm > hbm_old, f"{hbm / 1e9:.0f} > {hbm_old / 1e9:.0f} GB/s")
        self.kv_small_at_batch1 = fmt.claim(kv_share < 0.05, f"KV is {kv_share:.1%} of the bytes per step")
        self.nfold = fmt.claim(0.9 * d8.layout.tp < hbm / weights_read(d8) / (hbm / d8.weight_bytes) <= d8.layout.tp,
                               f"{hbm / weights_read(d8) / (hbm / d8.weight_bytes):.2f}× on {d8.layout.tp} GPUs")
        self.pp_splits_sequence = fmt.claim(d405.layout.pp > 1, f"layout {d405.layout.label}: {d405.layout.pp} stages in turn")
        self.pp_no_faster = fmt.claim(
                d405.decode_ceiling <= d405.layout.tp * hbm / d405.weight_bytes,
                f"{d405.decode_ceiling:.1f} tokens/s ≤ TP{d405.layout.tp}'s {d405.layout.tp * hbm / d405.weight_bytes:.1f}")
        self.fp8_tp8_faster = fmt.claim(d8.decode_ceiling > 1.8 * d405.decode_ceiling and d8.gpus < d405.gpus,
                                        f"{d8.decode_ceiling:.1f} on {d8.gpus} GPUs > {d405.decode_ceiling:.1f} on {d405.gpus}")
        self.kv_max_not_small = fmt.claim(kv_max_share > 0.1, f"KV is {kv_max_share:.0%} of the bytes per step")
        self.fp8_misses_card = fmt.claim(fp8_card.weights < fp8_card.pool and not fp8_card.fits,
                                         f"weights {fp8_card.weights / 2**30:.1f} GiB < pool {fp8_card.pool / 2**30:.1f}"
                                         f" GiB < {fp8_card.used / 2**30:.1f} GiB with the rest")
        self.int4_70b_fits = fmt.claim(int4_card.fits and int4_card.max_sequences > 1,
                                       f"{int4_card.used / 2**30:.1f} GiB ≤ {int4_card.pool / 2**30:.1f} GiB",
                structural="fits is the engine's memory check; more than one sequence is the smallest batch that is a batch")
        self.batch_helps = fmt.claim(ld.max_concurrency > 1.3 * wd.max_concurrency and ld.gpus == wd.gpus,
                                     f"{ld.max_concurrency} FP8 against {wd.max_concurrency} BF16 sequences, "
                                     f"{ld.gpus} GPUs each")
        self.h100_more_per_gpu_hour = fmt.claim(
                hour["w"] > hour["a70"], f"{hour['w'] * 3600:,.0f} > {hour['a70'] * 3600:,.0f} tokens per GPU-hour")
        self.same_cost_per_token = fmt.claim(abs(cost_w.value / cost_a70.value - 1) < 0.15,
                                             f"${cost_w.value:.2f} against ${cost_a70.value:.2f} per million tokens")
        self.lean_nearly_doubles = fmt.claim(
                1.5 < hour["lean"] / hour["w"] <= 2.0, f"FP8 ÷ BF16 per GPU-hour = {hour['lean'] / hour['w']:.2f}")
        self.a100_fp8_weight_only = fmt.claim(lean_old.d.weight_only and not lean.d.weight_only,
                                              f"{old.name} computes {lean_old.d.compute_format}, "
                                              f"{chip.name} {lean.d.compute_format}")
        old_hour = {k: s.d.decode_ceiling / s.d.rented_gpus_per_replica for k, s in (("lean", lean_old), ("w", a70))}
        self.a100_fp8_still_faster = fmt.claim(old_hour["lean"] > 1.5 * old_hour["w"],
                                               f"per rented GPU: {old_hour['lean']:.1f} ({lean_old.layout}) > 1.5 × "
                                               f"{old_hour['w']:.1f} tokens/s ({a70.layout})")
        self.hbm_gt_10x_pcie = fmt.claim(hbm / gen5.bytes_per_s > 10,
                                         f"HBM ÷ PCIe 5.0 x16 one way = {hbm / gen5.bytes_per_s:.0f}")


namespace = HbmPage.namespace_of
sources = HbmPage.sources_of
