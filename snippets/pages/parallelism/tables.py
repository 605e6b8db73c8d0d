"""The parallelism page's tables and its breakdown chart: each row the engine's deployment and time."""

from __future__ import annotations

import math

from snippets.data import Catalog, required
from snippets.engine import Deployment, Layout, feasible, setting
from snippets.engine.layout import kv_replicas, pp_partition
from snippets.engine.ops import ACTIVATION_BYTES, KINDS
from snippets.pages.parallelism.common import (
    BUBBLE_MICRO,
    BUBBLE_STAGES,
    FEWEST,
    MODELS,
    PRECISIONS,
    PREFILL_TOKENS,
    RING_SIZES,
    TIME_BASIS,
    TIME_LINKS,
    UNEVEN,
    UNEVEN_STAGES,
    WORKED,
    gbps,
    link_labels,
    nbytes_exact,
    serving_sequences,
    share,
    traffic,
)
from snippets.pages.parallelism.steps import (
    algorithm_prices,
    bubble,
    compute_bound_batch,
    decode_step,
    tp_allreduce,
)
from snippets.pages.scenario import reference
from snippets.pages.units import ms, us
from snippets.render import charts, fmt
from snippets.teaching.traffic import (
    ring_allreduce_bytes_per_gpu,
    ring_allreduce_steps,
)


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
        nbytes = tokens * w.setting.model.architecture.hidden_size * ACTIVATION_BYTES
        algs = algorithm_prices(w, nbytes)
        chosen = tp_allreduce(w, tokens)
        net = tp_allreduce(w, tokens, "network")
        rows.append([
            label,
            fmt.nbytes(nbytes, "MB", 3 if nbytes < 1e6 else 1),
            *(us(algs[k].seconds, 1, basis=f"{algs[k].latency_s * 1e6:.1f} µs fixed + {algs[k].bytes_moved:,.0f} "
                                            f"bytes per GPU ({algs[k].algorithm})") if k in algs else "none"
              for k in ("nccl", "two-shot", "one-shot", "symmetric memory")),
            chosen.algorithm,
            share(chosen.latency_s / chosen.seconds),
            f"{net.algorithm}, " + fmt.number(net.seconds * 1e6, 1) + " µs",
        ])
    return fmt.table(
        "algorithms",
        ["Message", "Bytes", "NCCL (ring)", "Custom, two-shot", "Custom, one-shot", "Symmetric memory",
         "Engine's choice", "Its fixed share", "Over the network"],
        rows,
        align="lrrrrrlrl",
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
        arch = st.model.architecture
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
