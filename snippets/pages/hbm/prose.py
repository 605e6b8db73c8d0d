"""Figures the HBM page's prose and quiz name: a deployment as shown, the quizzes, the tightest layout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.engine import Deployment, Layout
from snippets.engine.deployment import setting
from snippets.engine.layout import kv_heads_per_gpu, pp_partition, tp_degrees
from snippets.engine.memory import sampler_peak_bytes
from snippets.engine.specs import ChipSpec
from snippets.pages.hbm.common import (
    ONE_CARD,
    SECONDS_PER_HOUR,
    WORKED,
    batch_ceiling,
    kv_per_token,
    per_gpu_hour,
    weights_read,
)
from snippets.pages.scenario import NEWER_VLLM, SERVING, Reference
from snippets.pages.units import byte_count, ms, tps, usd
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.rounded import flop_per_byte

# --------------------------------------------------------------------------- names for prose

class Shown:
    """A deployment's figures as the prose uses them."""

    def __init__(self, d: Deployment) -> None:
        s = d.setting
        arch = s.model.architecture
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
    degrees = tp_degrees(st.model.architecture, r.node.gpus)
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
    default of a smaller GPU (256 sequences), each with vLLM's own message; and the same layout under the budget of
    vLLM's releases from v0.21 (`NEWER_VLLM`)."""
    st = chosen.setting
    degrees = tp_degrees(st.model.architecture, r.node.gpus)
    t = next((t for t in degrees if (m := st.memory(Layout(t), 1)).weights < m.pool), None)
    if t is None:
        raise ValueError(f"no TP degree up to {r.node.gpus} holds the weights of {st.model.name}")
    lay = Layout(t)
    small = r.eng.memory_policies[r.scenario.memory_policy].max_num_seqs  # the default of a device of no class
    st_small = setting(r.eng, st.model.id, st.precision.id, st.scenario.id, node=st.node.id, max_num_seqs=small)
    st_new = setting(r.eng, st.model.id, st.precision.id, st.scenario.id, node=st.node.id, memory_policy=NEWER_VLLM)
    m, m_small, m_new = st.memory(lay, 1), st_small.memory(lay, 1), st_new.memory(lay, 1)
    refused, refused_small, refused_new = st.kv_refusal(lay), st_small.kv_refusal(lay), st_new.kv_refusal(lay)
    pol_new = st_new.memory_policy
    h = fmt.fig_html
    # vLLM's messages carry backticks of their own (`gpu_memory_utilization`), which would end a Markdown code span
    # halfway: each is written as an HTML code element, its text escaped.
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
                 + f"<code>{fmt.inert_html(refused.engine_message)}</code>")
        if refused_small is not None:
            words += (f" Started with `--max-num-seqs` at {h(fmt.count(small, 'sequences'), 'tight.small')}, the "
                      f"activation peak falls to {h(fmt.nbytes(m_small.activations, 'GiB', 2), 'tight.act_small')}, "
                      f"but the KV cache's {h(fmt.nbytes(m_small.kv_room, 'GiB', 2), 'tight.room_small')} is short "
                      f"of the {h(fmt.nbytes(m_small.kv_per_sequence, 'GiB', 2), 'tight.need')} one sequence needs: "
                      f"<code>{fmt.inert_html(refused_small.engine_message)}</code>")
        # where vLLM starts with fewer dummy requests, the paragraph after the worked example says so
    return {
        "tight_layout": lay.label,
        "tight_words": words,
        "tight_weights": fmt.nbytes(m.weights, "GiB", 1),
        "tight_activations": fmt.nbytes(m.activations, "GiB", 2),
        "tight_non_torch": fmt.nbytes(m.non_torch, "GiB", 2),
        "tight_small": fmt.count(small, "sequences"),
        "tight_act_small": fmt.nbytes(m_small.activations, "GiB", 2),
        "tight_room_small": fmt.nbytes(m_small.kv_room, "GiB", 2),
        "tight_seqs_small": fmt.count(m_small.max_sequences, "sequences"),
        "tight_need": fmt.nbytes(m_small.kv_per_sequence, "GiB", 2),
        "tight_refused": fmt.claim(refused is not None and chosen.gpus > lay.gpus,
                                   f"{lay.label}: {m.kv_room / 2**30:.2f} GiB for the KV cache; the policy picks "
                                   f"{chosen.layout.label}"),
        "tight_short": fmt.claim(m.kv_room < m.kv_per_sequence,
                                 f"{m.kv_room / 2**30:.2f} GiB for the KV cache on {lay.label}, "
                                 f"{m.kv_per_sequence / 2**30:.2f} GiB for one sequence",
                structural="the refusal's reason: what the pool leaves for the KV cache, if anything, is short of one "
                           "sequence"),
        "tight_small_starts": fmt.claim(refused_small is None and m_small.max_sequences >= 1,
                                        f"{m_small.kv_room / 2**30:.2f} GiB holds {m_small.max_sequences} sequences "
                                        f"of {m_small.kv_per_sequence / 2**30:.2f} GiB at {small} sequences"),
        "tight_sampler_most": fmt.claim(2 * (sampler := sampler_peak_bytes(st.model.architecture, st.memory_policy))
                                        > m.activations,
                                        f"the sampler's {sampler / 2**30:.2f} GiB of a {m.activations / 2**30:.2f} GiB "
                                        "activation peak"),
        "v021_room": fmt.nbytes(m_new.kv_room, "GiB", 2),
        "v021_act": fmt.nbytes(m_new.activations, "GiB", 2),
        "v021_non_torch": fmt.nbytes(m_new.non_torch, "GiB", 2),
        "v021_graphs": fmt.nbytes(pol_new.cuda_graphs, "GiB", 2),
        "v021_pool": fmt.nbytes(m_new.pool, "GiB", 2),
        "v021_margin": fmt.nbytes(m_new.kv_room - m_new.kv_per_sequence, "GiB", 2),
        "v021_policy": pol_new.id,
        "v021_name": pol_new.name,
        # the budget of vLLM's releases from v0.21 turns the refusal above into a start: the graphs come out of a
        # larger pool, beside a smaller sampler peak and more memory outside PyTorch
        "v021_starts": fmt.claim(refused is not None and refused_new is None and m_new.max_sequences >= 1
                                 and pol_new.cuda_graphs_in_pool and pol_new.utilization > st.memory_policy.utilization,
                                 f"{lay.label} under {pol_new.id}: {m_new.kv_room / 2**30:.2f} GiB for the KV cache, "
                                 f"{m_new.kv_per_sequence / 2**30:.2f} GiB a sequence; under "
                                 f"{st.memory_policy.id}: {m.kv_room / 2**30:.2f} GiB"),
        "tight_sampler_decides": fmt.claim(m.activations - m_small.activations > m_small.kv_per_sequence - m.kv_room,
                                           f"the sampler's peak falls by {(m.activations - m_small.activations) / 2**30:.2f}"
                                           f" GiB; one sequence lacked {(m.kv_per_sequence - m.kv_room) / 2**30:.2f} GiB"),
    }
