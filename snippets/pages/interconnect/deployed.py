"""What the engine deploys for the interconnect page: deployments as figures, the quiz's problems, costs."""

from __future__ import annotations

from typing import Any

from snippets.engine import Deployment, Layout, setting
from snippets.engine.collectives import Collective, allreduce
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.serving import predict
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import Link, group_link, rewired
from snippets.pages import units
from snippets.pages.interconnect.common import (
    GIB,
    QUIZ_ALLREDUCE,
    QUIZ_SPLIT,
)
from snippets.pages.scenario import Reference
from snippets.pages.units import ms, us
from snippets.render import fmt


class Deployed:
    """What a serving engine deploys for one model x precision on the scenario's node, as figures."""

    def __init__(self, r: Reference, model_id: str, precision_id: str, **kw: Any) -> None:
        """The engine's deployment of `model_id` in `precision_id` (on the scenario's node unless `kw` says otherwise)."""
        d = r.deployment(model_id, precision_id, **kw)
        m = d.memory
        basis = f"{d.layout.label}: {d.gpus} GPUs, {d.gpus_per_node} GPUs per node, {d.nodes} node(s)"
        self.model = r.eng.models[model_id].name
        self.precision = r.eng.precisions[precision_id].name
        self.params = fmt.params(d.params, 1)
        self.weight = fmt.nbytes(d.weight_bytes, "GB", 1)
        self.layout = d.layout.label
        self.why = d.why
        self.tp = fmt.count(d.layout.tp, "GPUs")
        self.pp = fmt.count(d.layout.pp, "stages")
        self.gpus = fmt.count(d.gpus)
        self.nodes = fmt.count(d.nodes, "nodes")
        self.weights_per_gpu = fmt.nbytes(m.weights, "GiB", 1)
        self.kv_per_gpu = fmt.nbytes(m.kv_cache, "GiB", 2)
        self.used_per_gpu = fmt.nbytes(m.used, "GiB", 1)
        self.pool = fmt.nbytes(m.pool, "GiB", 1)
        self.free_per_gpu = fmt.nbytes(m.free, "GiB", 1)
        self.fits_node = fmt.claim(d.fits_one_node, basis)
        self.spans_nodes = fmt.claim(not d.fits_one_node, basis)
        self.dep = d


def quiz(r: Reference) -> dict[str, Any]:
    """The quiz's applied problems, each the engine's: one card against the deployment (`QUIZ_SPLIT`), one
    decode step's all-reduce on NVLink and on PCIe (`QUIZ_ALLREDUCE`), and the predicted time per output token
    on two TP degrees (`serving.predict` at one sequence)."""
    card = setting(r.eng, *QUIZ_SPLIT, r.scenario.id).memory(Layout(1))
    split = r.deployment(*QUIZ_SPLIT)

    big = r.deployment(*QUIZ_ALLREDUCE)
    arch = big.setting.model.architecture
    msg = arch.hidden_size * ACTIVATION_BYTES  # one token's activations: a decode step of one sequence
    per_token = ALLREDUCES_PER_LAYER * arch.layers
    links: dict[str, tuple[Link, Collective, float]] = {}
    for key, d in (("nvl", big), ("pcie", rewired(big, "pcie"))):
        link = group_link(d, "tp")
        links[key] = (link, allreduce(msg, link, d.setting.time_model, d.setting.chip.vendor),
                      predict(d, concurrency=1).tpot_s)
    (l_nvl, a_nvl, t_nvl), (l_pcie, a_pcie, t_pcie) = links["nvl"], links["pcie"]

    # the quiz's two TP degrees of one node: the fewest GPUs vLLM accepts for QUIZ_SPLIT (the policy's), the node
    lo, hi = split, r.deployment(*QUIZ_SPLIT, layout=Layout(r.node.gpus))
    p_lo, p_hi = (predict(d, concurrency=1) for d in (lo, hi))
    speedup = p_lo.tpot_s / p_hi.tpot_s
    gpus_ratio = hi.gpus / lo.gpus

    return {
        "q1_card_used": fmt.nbytes(card.used, "GiB", 1),
        "q1_card_weights": fmt.nbytes(card.weights, "GiB", 1),
        "q1_pool": fmt.nbytes(card.pool, "GiB", 1),
        "q1_seqs": fmt.count(split.max_concurrency, "sequences"),
        "q1_misses": fmt.claim(not card.fits and card.weights > card.pool,
                               f"weights {card.weights / GIB:.1f} GiB > pool {card.pool / GIB:.1f} GiB"),
        "q2_msg": fmt.quantity(msg, "bytes", 0, show_unit=True),
        "q2_hidden": fmt.count(arch.hidden_size, "elements"),
        "q2_act_bytes": fmt.quantity(ACTIVATION_BYTES, "bytes/element", 0),
        "q2_nvl_bw": fmt.quantity(l_nvl.bytes_per_s / 1e9, "GB/s", 0, show_unit=True, basis="each GPU's, one way"),
        "q2_pcie_bw": fmt.quantity(l_pcie.bytes_per_s / 1e9, "GB/s", 1, show_unit=True, basis="each GPU's, one way"),
        "q2_nvl_hop": us(a_nvl.latency_s),
        "q2_pcie_hop": us(a_pcie.latency_s),
        "q2_nvl_ar": us(a_nvl.seconds),
        "q2_pcie_ar": us(a_pcie.seconds),
        "q2_nvl_alg": a_nvl.algorithm,
        "q2_pcie_alg": a_pcie.algorithm,
        "q2_per_token": fmt.count(per_token, "all-reduces"),
        "q2_nvl_tok": ms(a_nvl.seconds * per_token),
        "q2_pcie_tok": ms(a_pcie.seconds * per_token),
        "q2_nvl_tpot": ms(t_nvl),
        "q2_pcie_tpot": ms(t_pcie),
        "q2_latency_bound": fmt.claim(a_nvl.latency_s > a_nvl.seconds / 2 and a_pcie.latency_s > a_pcie.seconds / 2,
                                      f"fixed {a_nvl.latency_s * 1e6:.1f} of {a_nvl.seconds * 1e6:.1f} µs (NVLink), "
                                      f"{a_pcie.latency_s * 1e6:.1f} of {a_pcie.seconds * 1e6:.1f} µs (PCIe)"),
        "q3_lo": lo.layout.label,
        "q3_hi": hi.layout.label,
        "q3_lo_tpot": ms(p_lo.tpot_s),
        "q3_hi_tpot": ms(p_hi.tpot_s),
        "q3_lo_mem": ms(p_lo.decode.memory_s),
        "q3_hi_mem": ms(p_hi.decode.memory_s),
        "q3_lo_comm": ms(p_lo.decode.comm_s, 2),
        "q3_hi_comm": ms(p_hi.decode.comm_s, 2),
        "q3_overhead": ms(p_hi.decode.launch_s),
        "q3_speedup": fmt.ratio(speedup, 1, basis=f"time per output token, {lo.layout.label} ÷ {hi.layout.label}"),
        "q3_gpus_ratio": fmt.ratio(gpus_ratio, 0, basis=f"GPUs, {hi.layout.label} ÷ {lo.layout.label}"),
        "q3_sublinear": fmt.claim(speedup < gpus_ratio and p_hi.decode.comm_s > p_lo.decode.comm_s
                                  and p_hi.decode.launch_s >= p_lo.decode.launch_s,
                                  f"{speedup:.2f}× faster on {gpus_ratio:.0f}× the GPUs"),
    }


def cost_figure(d: Deployment) -> fmt.Cell:
    """Dollars per hour of the GPUs a deployment rents, at the site's indicative price, or "no price"."""
    c, p = d.cost_per_hour, d.setting.price
    if c is None or p is None:
        return "no price"
    return units.dated(fmt.Figure(c, "USD/hour", f"${c:,.2f}",
                                  f"{d.gpus_rented} GPUs × ${p.usd_per_gpu_hour:,.2f} per GPU-hour, indicative"), p)


def _short(model_id: str, precision_id: str, prefix: str = "d") -> str:
    """Namespace key of a model x precision: ("llama-3.1-405b", "bf16") -> "d405_bf16"."""
    return f"{prefix}{model_id.split('-')[-1][:-1]}_{precision_id}"
