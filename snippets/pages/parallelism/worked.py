"""The worked deployment's figures for prose: its communication and each model x precision's case."""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog, required
from snippets.engine import Deployment, Layout
from snippets.engine.step import PP_TENSORS
from snippets.pages.parallelism.common import (
    BATCH_LIMIT,
    TIME_BASIS,
    TIME_LINKS,
    Traffic,
    act_bytes,
    gbps,
    nbytes_exact,
    serving_sequences,
    share,
    traffic,
)
from snippets.pages.parallelism.steps import (
    Step,
    algorithm_prices,
    bubble,
    compute_bound_batch,
    decode_step,
)
from snippets.pages.units import ms, us
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.traffic import (
    pp_boundary_bytes,
    ring_allreduce_steps,
)


@dataclass(frozen=True)
class Comm:
    """The worked deployment's communication, for prose: the engine's decode steps at batch 1 and at the serving
    batch over each link, the PP send, the compute-bound batch, and the same GPUs' decode step at batch 1 under TP
    alone (every GPU reading its share at once, no stage waiting for another)."""

    b1: dict[str, Step]
    bs: dict[str, Step]
    pp_send_s: float
    crit: int
    crit_at_context: int | None
    tp_alone: Step


def _comm(cat: Catalog, d: Deployment) -> Comm:
    b1 = {k: decode_step(d, 1, k) for k in TIME_LINKS}
    bs = {k: decode_step(d, serving_sequences(cat), k) for k in TIME_LINKS}
    sc = d.setting.scenario
    sends = [o for o in b1["nvlink"].engine.ops if o.kind == "send"]
    pp_send = sends[0].comm_s if sends else 0.0
    alone = Deployment(d.setting, Layout(d.layout.tp * d.layout.pp), "the same GPUs under TP alone")
    return Comm(b1, bs, pp_send, required(compute_bound_batch(d, 0), "a compute-bound batch"),
                compute_bound_batch(d, sc.input_tokens + sc.output_tokens / 2), decode_step(alone, 1))


class Case:
    """One deployment's figures for prose."""

    def __init__(self, cat: Catalog, model_id: str, precision_id: str) -> None:
        t = traffic(cat, model_id, precision_id)
        d = t.dep
        pp_b = pp_boundary_bytes(t.hidden, act_bytes(cat)) * PP_TENSORS  # the hidden state and the residual
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
    nvl_datasheet = b1["nvlink"].link.bytes_per_s  # the engine's link: the datasheet's, before any efficiency
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
        "net_hop": us(tm.network_hop_s, 0, basis="data/latencies.yaml: NCCL's own figure"),
        "car_latency": us(tm.one_shot.latency_s, 1, basis="fitted on vLLM's custom all-reduce timings"),
        "two_latency": us(tm.two_shot.latency_s, 1, basis="fitted on vLLM's custom all-reduce timings"),
        "nccl_latency": us(algs["nccl"].latency_s, 1, basis="fitted on nccl-tests timings, at this group's size"),
        "car_efficiency": fmt.percent(tm.one_shot.efficiency),
        "mm_latency": us(required(tm.multimem, "the multimem fit").latency_s, 1,
                         basis="fitted on vLLM's symmetric-memory timings"),
        "mm_efficiency": fmt.percent(required(tm.multimem, "the multimem fit").efficiency),
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
        "one_stage_mem": ms(c.tp_alone.engine.memory_s, 1, basis="the same GPUs under TP alone, reading at once"),
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
