"""The interconnect page model: the names its `{{ ... }}` values and claims use, and its worked examples."""

from __future__ import annotations

from itertools import pairwise

from snippets.data import Catalog, Node
from snippets.engine import Layout, feasible, setting
from snippets.engine.layout import tp_degrees
from snippets.engine.memory import BYTES_16BIT
from snippets.pages import running, units
from snippets.pages.base import Page
from snippets.pages.interconnect.common import (
    GIB,
    MODELS,
    OLDER_NODE,
    ORDER_OF_MAGNITUDE,
    PRECISIONS,
    SOURCE_MODELS,
    SOURCE_PRECISION,
    SOURCE_RESERVE,
    SOURCE_TABLE_PRECISIONS,
    _row,
    nvlink_of,
    pcie_x16,
)
from snippets.pages.interconnect.deployed import (
    Deployed,
    _short,
    cost_figure,
    quiz,
)
from snippets.pages.interconnect.tables import (
    cliff_chart,
    cliff_table,
    gpus_chart,
    nvlink_table,
    sizing_table,
    tiers,
)
from snippets.pages.scenario import reference
from snippets.render import fmt
from snippets.render.fmt import Figure
from snippets.teaching.rounded import max_params, usable_bytes


def source_table(cat: Catalog) -> str:
    """The source's closing table, row by row, beside what the engine decides for the same model and precision: the
    source's nominal bytes over a card less its flat reserve, rounded up; the engine's bytes from the architecture
    (embeddings and LM head kept at 16 bit in quantized checkpoints) and its layout."""
    r = reference(cat)
    ns = InterconnectPage.of(cat)
    rows: list[list[fmt.Cell]] = []
    for m in SOURCE_MODELS:
        for p in SOURCE_TABLE_PRECISIONS:
            src = _row(cat, m, p)
            e = Deployed(r, m, p)
            rows.append([f"{src.model} {src.precision}", src.weight, src.gpus_exact_usable, src.gpus,
                         "Yes" if src.sizing.fits_one_node else "No", e.weight, e.layout, e.gpus,
                         "Yes" if e.dep.fits_one_node else "No"])
    usable = ns.gpu_usable.text
    return fmt.table(
        "source",
        ["Model and precision", "Source: weights", f"Source: weights ÷ {usable}", "Source: GPUs",
         f"Source: one {r.node.gpus}-GPU node?", "Engine: weights", "Engine: layout", "Engine: GPUs",
         f"Engine: one {r.node.gpus}-GPU node?"],
        rows, align="lrrrlrlrl",
    )


def worked_example(cat: Catalog) -> str:
    """The source's 405B FP16 arithmetic, step by step, as Markdown with figure spans."""
    r = _row(cat, "llama-3.1-405b", SOURCE_PRECISION)
    s = r.sizing
    ns = InterconnectPage.of(cat)
    h = fmt.fig_html
    gpu, usable, per_node = ns.gpu_memory, ns.gpu_usable, ns.node_gpus
    lines = [
        f"1. **Weight bytes.** {h(fmt.params(s.params), 'worked.params')} parameters × "
        f"{h(fmt.quantity(s.bytes_per_param, 'bytes/param', 0), 'worked.bytes_per_param')} bytes each = "
        f"{h(r.weight, 'worked.weight')}.",
        f"2. **Weights alone.** {h(r.weight, 'worked.weight')} ÷ {h(gpu, 'worked.gpu_memory')} = "
        f"{h(r.gpus_exact, 'worked.gpus_exact')}, rounded up to **{h(r.gpus_weights, 'worked.gpus_weights')} GPUs**.",
        f"3. **With headroom.** Hold back {h(ns.reserve, 'worked.reserve')} of each card and "
        f"{h(usable, 'worked.gpu_usable')} is left for weights: {h(r.weight, 'worked.weight')} ÷ "
        f"{h(usable, 'worked.gpu_usable')} = {h(r.gpus_exact_usable, 'worked.gpus_exact_usable')}, rounded up to "
        f"**{h(r.gpus, 'worked.gpus')} GPUs**.",
        f"4. **One node or more?** {h(r.gpus, 'worked.gpus')} GPUs against {h(per_node, 'worked.node_gpus')} per node: "
        f"**{h(r.nodes, 'worked.nodes')} nodes**, so some traffic crosses the network between them.",
    ]
    return "\n".join(lines) + "\n"


def engine_example(cat: Catalog) -> str:
    """What a serving engine deploys for the same model, step by step, as Markdown with figure spans."""
    ns = InterconnectPage.of(cat)
    deps = ns.namespace()  # the deployments join the page's names in a loop (`extend`): not typed attributes
    b, f8 = deps["d405_bf16"], deps["d405_fp8"]
    h, e = fmt.fig_html, fmt.escape_markdown  # figures as spans; data text (names, messages) escaped as Markdown
    lines = [
        f"1. **Parameters from the architecture.** The layers of its `config.json` add up to "
        f"{h(b.params, 'engine.params')} parameters, not the name's round figure. In {e(b.precision)}, with the "
        f"embedding and the LM head unquantized as the checkpoint keeps them, one copy is "
        f"{h(b.weight, 'engine.weight')}; in {e(f8.precision)}, {h(f8.weight, 'engine.weight_fp8')}.",
        f"2. **What the card reports.** The {e(ns.gpu_name)} reports {h(ns.capacity, 'engine.capacity')} "
        f"to the engine, not the label's {h(ns.gpu_memory, 'engine.label')}.",
        f"3. **The engine's pool.** The engine may use {h(ns.utilization, 'engine.utilization')} of it, "
        f"{h(ns.pool, 'engine.pool')} per GPU, and that pool holds everything: the weights, the activation peak "
        f"({h(ns.activations, 'engine.activations')}), memory outside PyTorch "
        f"({h(ns.non_torch, 'engine.non_torch')}) and the KV cache of the scenario's "
        f"{h(ns.concurrency, 'engine.concurrency')} sequence of {h(ns.context, 'engine.context')}.",
        f"4. **Whole heads per GPU.** {h(ns.heads_405, 'engine.heads')} attention heads and "
        f"{h(ns.kv_heads_405, 'engine.kv_heads')} KV heads: the TP degrees inside a node are "
        f"{ns.valid_tp_405}.",
        f"5. **The layout.** Chosen by policy ({e(ns.policy_name)}): {e(b.precision)} on one node is refused "
        f"({e(ns.one_node_refusal)}), so it runs as **{b.layout}**, **{h(b.gpus, 'engine.gpus')} GPUs** over "
        f"**{h(b.nodes, 'engine.nodes')} nodes**; its busiest GPU holds {h(b.weights_per_gpu, 'engine.weights_per_gpu')} "
        f"of weights, {h(b.used_per_gpu, 'engine.used_per_gpu')} of its {h(b.pool, 'engine.pool')} pool. "
        f"In {e(f8.precision)} it is **{f8.layout}** on **{h(f8.gpus, 'engine.gpus_fp8')} GPUs** in "
        f"{h(f8.nodes, 'engine.nodes_fp8')} node.",
    ]
    return "\n".join(lines) + "\n"


class InterconnectPage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("interconnect"),
             cliff_table, cliff_chart, worked_example, engine_example, source_table, sizing_table, gpus_chart,
             nvlink_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        node = cat.interconnect(r.node.id, Node)
        acc = cat.accelerators[node.accelerator]
        old = cat.accelerators[cat.interconnect(OLDER_NODE, Node).accelerator]
        reserve = cat.assumptions[SOURCE_RESERVE]
        usable = usable_bytes(acc.memory.bytes, reserve.value.fraction)
        rows = {_short(m, p, "m"): _row(cat, m, p) for m in SOURCE_MODELS for p in SOURCE_TABLE_PRECISIONS}
        deps = {_short(m, p): Deployed(r, m, p) for m in MODELS for p in PRECISIONS}
        d405_int8 = Deployed(r, "llama-3.1-405b", "int8")
        i405 = rows["m405_int8"]
        b16, f8, b70 = deps["d405_bf16"], deps["d405_fp8"], deps["d70_bf16"]
        fewest = Deployed(r, "llama-3.1-405b", "bf16", layout_policy="fewest-gpus")
        mem = b16.dep.memory
        mpol = r.eng.memory_policies[r.scenario.memory_policy]
        lpol = r.eng.layout_policies[r.scenario.layout_policy]
        arch405 = r.eng.models["llama-3.1-405b"].architecture
        valid_tp = tp_degrees(arch405, r.node.gpus)
        st405 = setting(r.eng, "llama-3.1-405b", "bf16", r.scenario.id)
        one_node = feasible(st405, Layout(r.node.gpus))
        price = r.eng.prices.get(r.node.chip)
        src = rows["m405_fp16"].sizing

        tier_list = tiers(cat)
        ts = {t.tier: t for t in tier_list}
        hbm = acc.memory_bandwidth.bandwidth.one_way()
        hbm_old = old.memory_bandwidth.bandwidth.one_way()
        nvl, nvl_old = nvlink_of(cat, acc), nvlink_of(cat, old)
        gen4, gen5 = pcie_x16(cat, "pcie-gen4"), pcie_x16(cat, "pcie-gen5")
        net = ts["Network"].one_way
        fp16_bpp = cat.precisions["fp16"].width_bytes

        hbm_over_nvl = hbm.ratio(nvl)
        hbm_over_nvl_summed = hbm.bytes_per_s / nvl.both_summed().bytes_per_s  # the source's mixed basis
        nvl_over_gen5 = nvl.ratio(gen5)
        nvl_old_over_gen4 = nvl_old.ratio(gen4)
        # The source's comparison: NVLink both directions summed against PCIe one way.
        mixed_h100 = nvl.both_summed().bytes_per_s / gen5.bytes_per_s
        mixed_a100 = nvl_old.both_summed().bytes_per_s / gen4.bytes_per_s
        hbm_over_gen4 = hbm.ratio(gen4)
        hbm_old_over_gen4 = hbm_old.ratio(gen4)
        nvl_over_net = nvl.ratio(net)

        fp16_cap = max_params(acc.memory.bytes, fp16_bpp)
        fp16_cap_pool = max_params(mem.pool - mem.activations - mem.non_torch, fp16_bpp)

        def cost(e: Deployed) -> Figure:
            c = cost_figure(e.dep)
            if not isinstance(c, Figure):
                raise ValueError(f"no price the site uses for {r.node.chip}")
            return c

        self.extend(quiz(r))
        self.gpu_name = acc.name
        self.old_gpu_name = old.name
        self.node_name = node.name
        self.gpu_memory = fmt.nbytes(acc.memory.bytes, "GB")
        self.gpu_usable = fmt.nbytes(usable, "GB")
        self.reserve = fmt.percent(reserve.value.fraction, 1 if reserve.value.value % 1 else 0)
        self.reserve_low = fmt.percent(reserve.range[0] / 100)
        self.reserve_high = fmt.percent(reserve.range[1] / 100)
        self.node_gpus = fmt.count(node.gpus)
        # What an engine deploys (snippets.engine), and the inputs that make it differ from the source.
        self.extend(deps)
        self.d405_bf16_fewest = fewest
        self.d405_int8 = d405_int8
        self.kept_width = fmt.quantity(BYTES_16BIT * 8, "bit", 0, show_unit=True,
                                       basis="storage width of the tensors quantized checkpoints keep unquantized")
        self.int8_source_fits = fmt.claim(i405.sizing.fits_one_node and i405.sizing.gpus_with_headroom not in valid_tp,
                                          f"{i405.sizing.gpus_with_headroom} GPUs in one node of {r.node.gpus}, "
                                          f"TP degrees {valid_tp}")
        self.int8_engine_more = fmt.claim(d405_int8.dep.gpus > i405.sizing.gpus_with_headroom
                                          and d405_int8.dep.fits_one_node,
                                          f"engine {d405_int8.layout} = {d405_int8.dep.gpus} GPUs > the source's "
                                          f"{i405.sizing.gpus_with_headroom}, one node")
        self.int8_weight_above_nominal = fmt.claim(d405_int8.dep.weight_bytes > i405.sizing.weight_bytes,
                                                   f"{d405_int8.dep.weight_bytes / 1e9:.1f} GB > "
                                                   f"{i405.sizing.weight_bytes / 1e9:.0f} GB")
        self.policy_name = lpol.name
        self.capacity = fmt.nbytes(mem.capacity, "GiB", 1)
        self.label_gib = fmt.nbytes(mem.label, "GiB", 1)
        self.utilization = fmt.percent(mpol.utilization)
        self.pool = fmt.nbytes(mem.pool, "GiB", 1)
        self.activations = fmt.nbytes(mem.activations, "GiB", 1)
        self.non_torch = fmt.nbytes(mem.non_torch, "GiB", 1)
        self.concurrency = fmt.count(r.scenario.concurrency, "sequences")
        self.context = fmt.count(r.scenario.context_tokens, "tokens", show_unit=True)
        self.gpu_usable_gib = fmt.nbytes(usable, "GiB", 1)
        self.heads_405 = fmt.count(arch405.attention_heads, "heads")
        self.kv_heads_405 = fmt.count(arch405.kv_heads, "heads")
        self.valid_tp_405 = ", ".join(str(t) for t in valid_tp)
        self.one_node_refusal = "; ".join(one_node) or "it fits"
        self.d405_bf16_cost = cost(b16)
        self.d405_fp8_cost = cost(f8)
        if price is None:
            raise ValueError(f"no price the site uses for {r.node.chip}")
        self.price = units.usd_gpu_hour(price)
        self.fp16_bytes = fmt.quantity(fp16_bpp, "bytes/param", 0)
        self.fp8_bytes = fmt.quantity(cat.precisions["fp8"].width_bytes, "bytes/param", 0)
        self.bf16_same_as_fp16 = fmt.claim(cat.precisions["bf16"].width_bytes == fp16_bpp,
                                           f"BF16 {cat.precisions['bf16'].width_bytes:g} bytes, FP16 {fp16_bpp:g}")
        self.fp8_half_of_bf16 = fmt.claim(cat.precisions["fp8"].width_bytes * 2 == cat.precisions["bf16"].width_bytes,
                                          f"FP8 {cat.precisions['fp8'].width_bytes:g} byte, BF16 "
                                          f"{cat.precisions['bf16'].width_bytes:g}")
        self.extend(rows)
        self.fp16_cap = fmt.params(fp16_cap)
        self.fp16_cap_pool = fmt.params(fp16_cap_pool)
        self.hbm = fmt.bandwidth(hbm, "TB/s", 2)
        self.hbm_old = fmt.bandwidth(hbm_old, "TB/s", 2)
        self.nvlink = fmt.bandwidth(nvl)
        self.nvlink_summed = fmt.bandwidth(nvl.both_summed())
        self.nvlink_old = fmt.bandwidth(nvl_old)
        self.nvlink_old_summed = fmt.bandwidth(nvl_old.both_summed())
        self.gen4 = fmt.bandwidth(gen4, digits=1)
        self.gen5 = fmt.bandwidth(gen5, digits=1)
        self.gen4_summed = fmt.bandwidth(gen4.both_summed(), digits=1)
        self.gen5_summed = fmt.bandwidth(gen5.both_summed(), digits=1)
        self.network = fmt.bandwidth(net)
        self.net_step = units.us(r.eng.time_models[r.scenario.time_model].network_hop_s, 0,
                                 basis="one step of an NCCL collective between nodes: NCCL's own figure "
                                       "(data/latencies.yaml)")
        self.hbm_over_nvlink = fmt.ratio(hbm_over_nvl, basis="one way each")
        self.hbm_over_nvlink_summed = fmt.ratio(hbm_over_nvl_summed, basis="HBM against NVLink both directions summed")
        self.nvlink_over_gen5 = fmt.ratio(nvl_over_gen5, basis="one way each")
        self.nvlink_old_over_gen4 = fmt.ratio(nvl_old_over_gen4, basis="one way each")
        self.mixed_h100 = fmt.ratio(mixed_h100, 0, basis="NVLink summed against PCIe one way: mixed bases")
        self.mixed_a100 = fmt.ratio(mixed_a100, 0, basis="NVLink summed against PCIe one way: mixed bases")
        self.hbm_over_gen4 = fmt.ratio(hbm_over_gen4, 0, basis="one way each")
        self.hbm_old_over_gen4 = fmt.ratio(hbm_old_over_gen4, 0, basis="one way each")
        self.nvlink_over_network = fmt.ratio(nvl_over_net, basis="one way each")
        # Claims the prose makes.
        self.nvlink_below_hbm_less_than_10x = fmt.claim(
                hbm_over_nvl < ORDER_OF_MAGNITUDE, f"HBM ÷ NVLink one way = {hbm_over_nvl:.1f}")
        self.nvlink_about_10x_pcie = fmt.claim(
                5 <= nvl_over_gen5 < 20 and 5 <= nvl_old_over_gen4 < 20,
                f"NVLink ÷ PCIe one way = {nvl_over_gen5:.1f} (H100, Gen5), {nvl_old_over_gen4:.1f} (A100, Gen4)")
        self.pcie_about_100x_below_hbm = fmt.claim(
                50 <= hbm_over_gen4 < 200, f"HBM ÷ PCIe Gen4 x16 one way = {hbm_over_gen4:.0f}")
        self.network_below_nvlink = fmt.claim(net.ratio(nvl) < 1, f"network {net.in_unit('GB/s'):.0f} GB/s < NVLink "
                                              f"{nvl.in_unit('GB/s'):.0f} GB/s one way")
        self.tiers_descend = fmt.claim(
                all(a.one_way.bytes_per_s > b.one_way.bytes_per_s for a, b in pairwise(tier_list)),
                " > ".join(f"{t.tier} {t.one_way.in_unit('GB/s'):,.0f} GB/s" for t in tier_list) + " (one way)")
        self.fp8_halves_gpus = fmt.claim(
                f8.dep.gpus * 2 <= b16.dep.gpus, f"{f8.dep.gpus} GPUs in FP8 against {b16.dep.gpus} in BF16")
        self.engine_exceeds_source = fmt.claim(
                b16.dep.gpus > src.gpus_with_headroom,
                f"engine {b16.dep.gpus} GPUs ({b16.layout}) > the source's {src.gpus_with_headroom}")
        self.pool_above_source_usable = fmt.claim(
                mem.pool > usable, f"pool {mem.pool / GIB:.1f} GiB > the source's {usable / GIB:.1f} GiB usable")
        self.capacity_above_label = fmt.claim(
                mem.capacity > mem.label, f"reported {mem.capacity / GIB:.1f} GiB > label {mem.label / GIB:.1f} GiB")
        self.one_node_refused = fmt.claim(bool(one_node), "; ".join(one_node) or f"TP{r.node.gpus} fits")
        self.source_count_not_tp = fmt.claim(
                src.gpus_with_headroom not in valid_tp and src.gpus_with_headroom > r.node.gpus,
                f"{src.gpus_with_headroom} GPUs: more than a node's {r.node.gpus}, and TP degrees are {valid_tp}")
        self.whole_nodes = fmt.claim(lpol.whole_nodes and b16.dep.gpus % r.node.gpus == 0,
                                     f"{b16.dep.gpus} GPUs = {b16.dep.nodes} × {r.node.gpus}")
        self.engine_accepts_fewer = fmt.claim(
                fewest.dep.gpus < b16.dep.gpus,
                f"fewest-gpus policy: {fewest.layout} = {fewest.dep.gpus} GPUs < {b16.layout} = {b16.dep.gpus}")
        self.small_fits_node = fmt.claim(b70.dep.fits_one_node and b70.dep.gpus > 1,
                                         f"{b70.layout} on {b70.dep.nodes} node")
        self.fp16_70b_exceeds_card = fmt.claim(
                rows["m70_fp16"].sizing.weight_bytes > acc.memory.bytes, "weights > one card's memory")


namespace = InterconnectPage.namespace_of
sources = InterconnectPage.sources_of
