"""The parallelism page model: the names its `{{ ... }}` values and claims use, and its worked example."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

from snippets.data import Catalog, Node
from snippets.data.units import Bandwidth, Direction
from snippets.engine import Layout, feasible, setting
from snippets.engine.collectives import custom_allreduce_limit, symm_mem_table
from snippets.engine.layout import kv_replicas, pp_partition, tp_degrees
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import group_link
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.parallelism.common import (
    ACTIVATIONS,
    FEWEST,
    MODELS,
    PIPE_MICRO,
    PRECISIONS,
    SMALL,
    TIME_LINKS,
    UNEVEN,
    UNEVEN_STAGES,
    WORKED,
    _short,
    act_bytes,
    nbytes_exact,
    serving_sequences,
    share,
)
from snippets.pages.parallelism.drawings import (
    pipeline_diagram,
    ring_diagram,
    tp_diagram,
)
from snippets.pages.parallelism.steps import (
    algorithm_prices,
    bubble,
    decode_step,
    ring_steps_of,
    tp_allreduce,
    tp_shard,
)
from snippets.pages.parallelism.tables import (
    across,
    across_table,
    algorithm_table,
    breakdown_chart,
    comm_table,
    message_tokens,
    ring_table,
    rules_table,
)
from snippets.pages.parallelism.worked import (
    Case,
    _comm,
    _comm_figures,
)
from snippets.pages.scenario import reference
from snippets.pages.units import ms, us
from snippets.render import fmt
from snippets.render.fmt import Figure


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
        f"5. **The PP boundary.** One send of the hidden state and residual between the nodes: a hop and the bytes, "
        f"{h(c['pp_send'], 'worked.pp_send')}, once per token.",
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


class ParallelismPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("parallelism"),
             tp_diagram, worked_example, partial(comm_table, model_id="llama-3.1-405b", precision_id="bf16", name="comm405"),
             partial(comm_table, model_id="llama-3.1-70b", precision_id="bf16", name="comm70"), breakdown_chart,
             across_table,
             pipeline_diagram, rules_table, ring_table, ring_diagram, algorithm_table)
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
        cases = {_short(m, p): Case(cat, m, p) for m in MODELS for p in PRECISIONS}
        w, s = cases[_short(*WORKED)], cases[_short(*SMALL)]
        wt, st = w.traffic, s.traffic
        arch405 = r.eng.models[WORKED[0]].architecture
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
        uneven_parts = pp_partition(uneven.architecture.layers, UNEVEN_STAGES)
        parts_405 = pp_partition(arch405.layers, UNEVEN_STAGES)
        rounded = [c.traffic for c in cases.values() if c.traffic.dep.gpus > c.traffic.fewest.gpus]

        comm = _comm(cat, wt.dep)
        cw = _comm_figures(cat, wt, comm)
        b1, bs = comm.b1, comm.bs
        # NVLink and the network as the engine links the worked TP group over them: each GPU's share, one way
        nvl, net = (Bandwidth(b1[k].link.bytes_per_s, Direction.PER_DIRECTION) for k in ("nvlink", "network"))
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
        self.uneven_layers = fmt.count(uneven.architecture.layers, "layers")
        self.uneven_stages = fmt.count(UNEVEN_STAGES, "stages")
        self.uneven_parts = ", ".join(str(n) for n in uneven_parts)
        self.parts_405 = ", ".join(str(n) for n in parts_405)
        self.hbm = fmt.bandwidth(acc.memory_bandwidth.bandwidth.one_way(), "TB/s", 2)
        self.nvlink = fmt.bandwidth(nvl)
        self.network = fmt.bandwidth(net)
        self.network_name = b1["network"].link.name
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
        self.nvlink_over_network = fmt.ratio(nvl.ratio(net), basis="one way each")
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
                structural="an order of magnitude: TP all-reduces every layer, PP sends once per stage boundary")
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
        tm, tp_link = wt.dep.setting.time_model, group_link(wt.dep, "tp")
        limit = custom_allreduce_limit(wt.dep.layout.tp, tp_link, tm)
        table = symm_mem_table(wt.dep.layout.tp, tp_link, tm)
        symm = 0.0 if table is None else table.symm_limit(wt.dep.layout.tp)
        sizes = {t * wt.hidden * ACTIVATION_BYTES: a for t, a in picks.items()}
        self.custom_below_limit = fmt.claim(
                all((a in ("one-shot", "two-shot")) == (b < limit) and (a == "nccl") == (b >= symm)
                    for b, a in sizes.items()),
                "; ".join(f"{t} tokens: {a}" for t, a in picks.items()))
        self.custom_limit = fmt.nbytes(limit, "KiB" if limit < 2**20 else "MiB", 0)
        self.symm_limit = fmt.nbytes(symm, "MiB", 0)
        self.custom_own_limit = fmt.nbytes(tm.custom_allreduce_max_bytes, "MiB", 0)
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
        self.uneven_split = fmt.claim(uneven.architecture.layers % UNEVEN_STAGES != 0 and len(set(uneven_parts)) > 1,
                                      f"{uneven.architecture.layers} layers in {UNEVEN_STAGES} stages: {uneven_parts}")
        self.worked_exceeds_node = fmt.claim(wf.gpus > node.gpus,
                                             f"fewest {wf.layout.label} = {wf.gpus} GPUs > {node.gpus} per node")
        self.fp8_no_stages = fmt.claim(f8.nodes == 1 and f8.layout.pp == 1, f"{f8.layout.label} on {f8.nodes} node")
        self.small_fits_node = fmt.claim(st.dep.nodes == 1 and st.dep.layout.pp == 1, st.dep.layout.label)
        alone = comm.tp_alone.engine  # the same GPUs under TP alone: every GPU reads its share at once
        self.pp_no_faster = fmt.claim(p1.memory_s > 1.5 * alone.memory_s,
                                      f"{p1.memory_s * 1e3:.1f} ms with stages in turn vs "
                                      f"{alone.memory_s * 1e3:.1f} ms under {tp_across.label}")
        self.rounding_costs_gpus = fmt.claim(
                len(rounded) >= 3, "; ".join(f"{t.fewest.layout.label} → {t.dep.layout.label}" for t in rounded))


