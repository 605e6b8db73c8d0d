"""Page model of the interconnects reference (docs/reference/interconnects.md).

NVLink and PCIe bandwidths are derived from their parts (links x per-link rate; transfer rate x
lanes x encoding), network ports are converted from Gb/s, and nodes join accelerator, switch and
NICs. Every row links its sources.
"""

from __future__ import annotations

from snippets.data import (
    Accelerator,
    Catalog,
    Efficiency,
    Fabric,
    MemoryPolicy,
    Network,
    Node,
    NVLink,
    NVSwitch,
    PCIe,
    required,
)
from snippets.data.export import engine_catalog
from snippets.data.units import TIME_UNITS, Bandwidth, Direction
from snippets.engine.topology import group_fabric_bandwidth, group_fully_connected
from snippets.pages.base import Page
from snippets.pages.reference_common import as_of, as_stated, exact_digits, source_links
from snippets.render import fmt

X16 = 16


def pcie_lanes(p: PCIe, lanes: int = X16) -> Bandwidth:
    """Per-direction data rate of `lanes` lanes of a PCIe generation, after line encoding or FLIT overhead."""
    return p.lanes(lanes)


def nvlink_gpu(link: NVLink) -> Bandwidth:
    """A GPU's NVLink bandwidth, per direction: links x per-link rate."""
    return link.per_gpu


def nvlink_table(cat: Catalog) -> str:
    """NVLink generations: links x per-link rate, per direction and both directions summed."""
    links = sorted(cat.of_kind(NVLink).values(), key=lambda n: n.generation)
    rows: list[list[fmt.Cell]] = []
    for n in links:
        one = nvlink_gpu(n)
        rows.append([n.name, fmt.count(n.links_per_gpu, "links"), fmt.bandwidth(n.per_link.bandwidth.one_way()),
                     fmt.bandwidth(one), fmt.bandwidth(one.both_summed()), source_links(n)])
    return fmt.table("nvlink", ["Generation", "Links per GPU", "Per link, one way", "Per GPU, one way",
                                "Per GPU, both directions summed", "Sources"], rows, align="lrrrrl") + as_of(links)


def pcie_table(cat: Catalog) -> str:
    """PCIe generations: transfer rate, signalling, encoding efficiency, and the x16 data rate derived from them."""
    gens = sorted(cat.of_kind(PCIe).values(), key=lambda p: p.generation)
    rows: list[list[fmt.Cell]] = []
    for p in gens:
        one = pcie_lanes(p)
        enc = (f"FLIT, {p.encoding.payload_bits}/{p.encoding.line_bits}" if p.flit_mode
               else f"{p.encoding.payload_bits}b/{p.encoding.line_bits}b")
        rows.append([p.name, as_stated(p.transfer_rate.value, p.transfer_rate.unit, "per lane, per direction"),
                     p.signalling, enc,
                     fmt.percent(p.encoding.payload_bits / p.encoding.line_bits, 1),
                     fmt.bandwidth(one, "GB/s", 1), fmt.bandwidth(one.both_summed(), "GB/s", 1), source_links(p)])
    return fmt.table("pcie", ["Generation", "Transfer rate", "Signalling", "Encoding", "Efficiency",
                              "x16, one way", "x16, both directions summed", "Sources"],
                     rows, align="lrllrrrl") + as_of(gens)


def fabrics_table(cat: Catalog) -> str:
    """Scale-up fabrics other than NVLink: family, stated per-link rate, topology."""
    fabs = list(cat.of_kind(Fabric).values())
    rows: list[list[fmt.Cell]] = []
    for f in fabs:
        per_link: fmt.Cell = "not published" if f.per_link is None else as_stated(
            f.per_link.value, f.per_link.unit, f.per_link.direction.label)
        one: fmt.Cell = "—" if f.per_link is None else fmt.bandwidth(f.per_link.bandwidth.one_way(), "GB/s", 1)
        rows.append([f.name, f.family, per_link, one, f.topology or "not stated", source_links(f)])
    return fmt.table("fabrics", ["Fabric", "Family", "Per link, as stated", "Per link, one way", "Topology",
                                 "Sources"], rows, align="llrrll") + as_of(fabs)


def switches_table(cat: Catalog) -> str:
    """NVSwitch generations, the NVLink generation each switches, and the switch chips in each node that uses it."""
    items = sorted(cat.of_kind(NVSwitch).items(), key=lambda kv: kv[1].generation)
    nodes = cat.of_kind(Node).values()
    rows: list[list[fmt.Cell]] = []
    for sw_id, s in items:
        per_node = []
        for n in nodes:
            if n.switch != sw_id or n.switch_chips is None:
                continue
            trays = "" if n.switch_trays is None else f" in {n.switch_trays} trays"
            per_node.append(f"{n.name}: {n.switch_chips} chips{trays}")
        rows.append([s.name, fmt.count(s.generation, "generation"), cat.interconnect(s.fabric, NVLink).name,
                     "; ".join(per_node) or "no node in data", source_links(s)])
    return fmt.table("switches", ["Switch", "Generation", "NVLink it switches", "Switches per node", "Sources"],
                     rows, align="lrlll") + as_of([s for _, s in items])


def _manual_latency(n: Network, key: str) -> fmt.Cell:
    """A switch's or adapter's latency as its manual prints it; "not stated" (the notes say why) or "—" otherwise."""
    d = getattr(n, key)
    if d is not None:
        return fmt.quantity(d.value, d.unit, 0, show_unit=True, basis="as the manual prints it")
    return "not stated (see below)" if key in n.not_stated else "—"


def networks_table(cat: Catalog) -> str:
    """Scale-out networks: one port's rate as stated (Gb/s) and in GB/s, one way; the switch and adapter latency as
    NVIDIA's manuals print them: "not stated" where a manual read prints none (the reasons listed under the table),
    "—" where no NVIDIA manual applies."""
    nets = list(cat.of_kind(Network).values())
    rows: list[list[fmt.Cell]] = []
    for n in nets:
        one = n.port.bandwidth.one_way()
        rows.append([n.name, n.family, as_stated(n.port.value, n.port.unit, n.port.direction.label),
                     fmt.bandwidth(one, "GB/s", exact_digits(one.in_unit("GB/s"))),
                     _manual_latency(n, "switch_latency"), _manual_latency(n, "adapter_latency"), source_links(n)])
    table = fmt.table("networks", ["Network", "Family", "Port, as stated", "Port, one way", "Switch latency",
                                   "Adapter latency", "Sources"], rows, align="llrrlll")
    notes = [fmt.Md(f"**{fmt.escape_markdown(n.name)}**, {what}: {fmt.escape_markdown(' '.join(why.split()))}")
             for n in nets for key, why in n.not_stated.items()
             for what in (("switch latency" if key == "switch_latency" else "adapter latency"),)]
    return table + ("\n" + fmt.bullets(notes) if notes else "") + as_of(nets)


def domain_bandwidth(cat: Catalog, node: Node) -> Bandwidth | None:
    """The node's scale-up domain: GPUs in the domain x each GPU's stated scale-up figure, on its own basis.

    None where the GPUs meet only over PCIe (an NVLink bridge joins pairs, not the node) or have no fabric.
    """
    acc = cat.accelerators[node.accelerator]
    if acc.scale_up is None or node.scale_up == "pcie":
        return None
    return acc.scale_up.bandwidth.bandwidth * node.domain


def nodes_table(cat: Catalog) -> str:
    """Typical nodes: accelerators per scale-up domain, switch, NICs per GPU and network per GPU one way."""
    nodes = list(cat.of_kind(Node).values())
    rows: list[list[fmt.Cell]] = []
    for n in nodes:
        acc = cat.accelerators[n.accelerator]
        sw = "none (direct links)" if n.switch is None else cat.interconnect(n.switch, NVSwitch).name
        if n.nic is None or n.nics_per_gpu is None:
            nic: fmt.Cell = "not stated (see sources)"
            per: fmt.Cell = "—"
            nics: fmt.Cell = "—"
        else:
            net = cat.interconnect(n.nic, Network)
            nic = net.name
            nics = fmt.quantity(n.nics_per_gpu, "NICs per GPU", 2 if n.nics_per_gpu % 1 else 0)
            share = net.port.bandwidth.one_way() * n.nics_per_gpu
            per = fmt.bandwidth(share, "GB/s", max(1, exact_digits(share.in_unit("GB/s"))))
        dom = domain_bandwidth(cat, n)
        dom_cell: fmt.Cell = "—" if dom is None else fmt.bandwidth(dom, "TB/s", 1)
        chips: fmt.Cell = "—" if n.switch_chips is None else fmt.count(n.switch_chips, "switch chips")
        counts = "—" if dom is None else scale_up_counts(acc)
        rows.append([n.name, acc.name, fmt.count(n.gpus, "accelerators"), fmt.count(n.domain, "accelerators"),
                     SCALE_UP_LABELS[n.scale_up], sw, chips, dom_cell, counts, nic, nics, per, source_links(n)])
    return fmt.table("nodes", ["Node", "Accelerator", "In the node", "In the scale-up domain", "Scale-up over",
                               "Switch", "Switch chips", "Domain scale-up, as its datasheet sums it",
                               "Each accelerator's figure counts", "Compute NIC", "NICs per accelerator",
                               "Network per accelerator, one way", "Sources"],
                     rows, align="llrrllrrllrrl") + as_of(nodes)


def scale_up_counts(acc: Accelerator) -> str:
    """What an accelerator's scale-up figure counts: its basis where it is not every link (Gaudi 3's 21 ports of 24),
    else every link it drives."""
    if acc.scale_up is None:
        return "no scale-up fabric"
    return acc.scale_up.basis or "every link it drives"


SCALE_UP_LABELS = {"nvlink": "NVLink", "fabric": "vendor fabric", "pcie": "PCIe only"}


GROUP_SIZES = (2, 4, 8)
"""The tensor-parallel groups the table prices inside one node."""
SHAPE_LABELS = {"switched": "switched", "rack": "switched, rack-scale", "full_mesh": "full mesh",
                "paired_mesh": "paired mesh (two GPUs a package)", "torus": "torus", "pcie": "PCIe only"}


def group_bandwidth(cat: Catalog, node_id: str, gpus: int) -> Bandwidth:
    """What each GPU of a group of `gpus` GPUs inside node `node_id` gets from the node's fabric, one way, as the
    engine wires it (`snippets.engine.topology.group_fabric_bandwidth`)."""
    eng = engine_catalog(cat)
    node = eng.nodes[node_id]
    return Bandwidth(group_fabric_bandwidth(node, eng.chips[node.chip], gpus), Direction.PER_DIRECTION)


def largest_connected_group(cat: Catalog, node_id: str) -> int | None:
    """The largest of `GROUP_SIZES` inside the node whose every member reaches every other over its own links
    (`snippets.engine.topology.group_fully_connected`), None if not even a pair."""
    eng = engine_catalog(cat)
    node = eng.nodes[node_id]
    fits = [g for g in GROUP_SIZES if g <= node.gpus and group_fully_connected(node, eng.chips[node.chip], g)]
    return max(fits, default=None)


def groups_table(cat: Catalog) -> str:
    """Per node, what a tensor-parallel group of two, four and eight of its GPUs gets from the fabric, one way per
    GPU, and the largest such group that is fully connected."""
    nodes = cat.of_kind(Node)
    rows: list[list[fmt.Cell]] = []
    for key, n in nodes.items():
        cells: list[fmt.Cell] = []
        for g in GROUP_SIZES:
            if g > n.gpus:
                cells.append("—")
                continue
            bw = group_bandwidth(cat, key, g)
            cells.append(fmt.bandwidth(bw, "GB/s", 0 if bw.in_unit("GB/s") % 1 == 0 else 1))
        full = largest_connected_group(cat, key)
        rows.append([n.name, SHAPE_LABELS[n.fabric_shape], *cells,
                     "none" if full is None else fmt.count(full, "GPUs")])
    return fmt.table("groups", ["Node", "Wired as", *(f"TP{g}, per GPU one way" for g in GROUP_SIZES),
                                "Largest fully connected group"], rows, align="llrrrr") + as_of(list(nodes.values()))


ALLREDUCE_GROUPS = (2, 4, 6, 8)
"""The group sizes vLLM's custom all-reduce supports, as its tables list them."""


def _size(nbytes: float) -> fmt.Figure:
    return fmt.nbytes(nbytes, "KiB" if nbytes < 2**20 else "MiB", 0)


def vllm_allreduce_table(cat: Catalog) -> str:
    """Per vLLM memory policy that runs PyTorch's symmetric memory, and per CUDA capability its release's tables
    name: where each group size's all-reduce goes by message size, as `snippets.engine.collectives` routes it (the
    engine's `AllreduceTable`: the custom all-reduce below its capped limit, symmetric memory, multimem or two-shot,
    below the table's limit, NCCL above)."""
    eng = engine_catalog(cat)
    own = eng.time_models[cat.scenarios["reference"].time_model].custom_allreduce_max_bytes
    pols = {k: p for k, p in cat.policies.items() if isinstance(p, MemoryPolicy) and p.symm_mem}
    rows: list[list[fmt.Cell]] = []
    for pid in pols:
        for t in eng.memory_policies[pid].allreduce_tables:
            cells: list[fmt.Cell] = []
            for n in ALLREDUCE_GROUPS:
                path = "multimem" if n in t.multimem else "two-shot"
                custom, symm = t.custom_limit(n, own), t.symm_limit(n)
                cells.append(fmt.Phrase((("custom", _size(custom)), f", {path} to ", ("symm", _size(symm))))
                             if symm > custom else fmt.Phrase((("custom", _size(custom)), ", then NCCL")))
            rows.append([f"{pid}, capability {t.capability}",
                         ", ".join(cat.accelerators[a].name for a in t.accelerators), *cells])
    return fmt.table("vllmallreduce", ["Memory policy, CUDA capability", "Accelerators",
                                       *(f"TP{n}: custom below, then" for n in ALLREDUCE_GROUPS)],
                     rows, align="ll" + "l" * len(ALLREDUCE_GROUPS)) + as_of(list(pols.values()))


def node_notes_table(cat: Catalog) -> str:
    """What each node's fields do not say: bridges that join pairs only, NICs a vendor leaves open."""
    nodes = [n for n in cat.of_kind(Node).values() if n.note]
    rows: list[list[fmt.Cell]] = [[n.name, " ".join((n.note or "").split())] for n in nodes]
    return fmt.table("nodenotes", ["Node", "Note"], rows, align="ll") + as_of(nodes)


def latency_table(cat: Catalog) -> str:
    """Indicative latencies: the figure the site uses, the range the sources span, and what was timed."""
    lats = list(cat.latencies.values())
    rows: list[list[fmt.Cell]] = []
    for lat in lats:
        per = TIME_UNITS[lat.value.unit] / 1e-6
        v = lat.value.value * per
        low, high = (x * per for x in lat.range)
        rows.append([lat.name, fmt.Figure(v, "us", f"{fmt.number(v, exact_digits(v))} µs", f"indicative, {lat.basis}"),
                     fmt.Figure(low, "us", f"{fmt.number(low, exact_digits(low))} µs", "low"),
                     fmt.Figure(high, "us", f"{fmt.number(high, exact_digits(high))} µs", "high"),
                     " ".join(lat.what.split()), source_links(lat)])
    return fmt.table("latency", ["Path or operation", "Indicative", "Low", "High", "What is timed", "Sources"],
                     rows, align="lrrrll") + as_of(lats)


def efficiency_table(cat: Catalog) -> str:
    """Bandwidth achieved in published runs as a fraction of the datasheet figure on the same basis (the compute
    efficiencies, FLOP/s against a dense peak, are the time model's and listed with it)."""
    effs = [e for e in cat.efficiencies.values() if isinstance(e, Efficiency)]
    rows: list[list[fmt.Cell]] = []
    for e in effs:
        low, high = e.fraction_range
        unit = e.achieved.unit
        rows.append([e.name, as_stated(e.achieved.value, unit, e.achieved.direction.label),
                     as_stated(e.peak.value, e.peak.unit, e.peak.direction.label),
                     fmt.percent(e.fraction, 0), fmt.Figure(low * 100, "%", f"{low * 100:.0f}–{high * 100:.0f}%",
                                                             "range of the sources"),
                     e.method, source_links(e)])
    return fmt.table("efficiency", ["Transfer", "Achieved", "Peak", "Fraction", "Range", "Measured with", "Sources"],
                     rows, align="lrrrrll") + as_of(effs)


class ReferenceInterconnectsPage(Page):
    """Names the page's prose uses."""
    shows = (nvlink_table, switches_table, fabrics_table, pcie_table, networks_table, latency_table, efficiency_table,
             nodes_table, groups_table, vllm_allreduce_table, node_notes_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        gen5, gen6 = cat.interconnect("pcie-gen5", PCIe), cat.interconnect("pcie-gen6", PCIe)
        nvl5 = cat.interconnect("nvlink-5", NVLink)
        nvl72 = cat.interconnect("gb200-nvl72", Node)
        dom = required(domain_bandwidth(cat, nvl72), "the NVL72 domain bandwidth")
        self.gen5_x16 = fmt.bandwidth(pcie_lanes(gen5), "GB/s", 1)
        self.gen6_x16 = fmt.bandwidth(pcie_lanes(gen6), "GB/s", 1)
        self.gen6_rate = as_stated(gen6.transfer_rate.value, gen6.transfer_rate.unit, "per lane, per direction")
        self.gen6_efficiency = fmt.percent(gen6.encoding.payload_bits / gen6.encoding.line_bits, 1)
        self.gen6_payload = fmt.quantity(gen6.encoding.payload_bits, "bytes", 0)
        self.gen6_flit = fmt.quantity(gen6.encoding.line_bits, "bytes", 0)
        self.gen6_over_gen5 = fmt.ratio(pcie_lanes(gen6).ratio(pcie_lanes(gen5)), 2, basis="one way each")
        self.nvl5_links = fmt.count(nvl5.links_per_gpu)
        self.nvl5_link = fmt.bandwidth(nvl5.per_link.bandwidth.one_way())
        self.nvl5_gpu = fmt.bandwidth(nvlink_gpu(nvl5))
        self.nvl5_gpu_summed = fmt.bandwidth(nvlink_gpu(nvl5).both_summed(), "TB/s", 1)
        self.nvl72_gpus = fmt.count(nvl72.gpus)
        self.nvl72_domain = fmt.bandwidth(dom, "TB/s", 1)
        self.nvl72_name = nvl72.name
        self.nvl72_switch_chips = fmt.count(required(nvl72.switch_chips, "the NVL72 switch chips"))
        self.nvl72_switch_trays = fmt.count(required(nvl72.switch_trays, "the NVL72 switch trays"))
        self.custom_own_limit = _size(engine_catalog(cat).time_models[cat.scenarios["reference"].time_model]
                                      .custom_allreduce_max_bytes)
        hgx = "hgx-h100-8"
        self.switch_name = cat.interconnect(hgx, Node).name
        self.switch_same = fmt.claim(
            group_bandwidth(cat, hgx, 2).bytes_per_s == group_bandwidth(cat, hgx, 8).bytes_per_s,
            "HGX H100: a switched node gives TP2 and TP8 the same bandwidth per GPU")
        mi300x, mi250x = "mi300x-platform-8", "mi250x-node-4"
        pair, eight = group_bandwidth(cat, mi300x, 2), group_bandwidth(cat, mi300x, 8)
        self.mesh_name = cat.interconnect(mi300x, Node).name
        self.mesh_pair = fmt.bandwidth(pair)
        self.mesh_eight = fmt.bandwidth(eight)
        acc = cat.accelerators[cat.interconnect(mi300x, Node).accelerator]
        up = required(acc.scale_up, "the MI300X's scale-up fabric")
        link = required(cat.interconnect(up.fabric, Fabric).per_link, "the MI300X fabric's per-link rate")
        one = link.bandwidth.one_way().bytes_per_s
        links = required(up.links, "the MI300X's scale-up links")
        self.mesh_links = fmt.count(links, "links")
        self.mesh_pair_one_link = fmt.claim(
            abs(pair.bytes_per_s - one) < 1e-6 * one and abs(eight.bytes_per_s - links * one) < 1e-6 * one,
            f"MI300X platform: TP2 gets one link's rate and TP8 all {links} links, one to each peer")
        self.paired_name = cat.interconnect(mi250x, Node).name
        twin, four = group_bandwidth(cat, mi250x, 2), group_bandwidth(cat, mi250x, 4)
        self.paired_twin = fmt.bandwidth(twin)
        self.paired_four = fmt.bandwidth(four)
        self.paired_pair_fastest = fmt.claim(
            twin.bytes_per_s > four.bytes_per_s and largest_connected_group(cat, mi250x) == 2,
            "MI250X node: a module's pair gets more than a group of four, and only the pair is fully connected")
        self.gen6_below_double = fmt.claim(pcie_lanes(gen6).ratio(pcie_lanes(gen5)) < 2,
                                           "Gen6 x16 / Gen5 x16 one way < 2: FLIT overhead exceeds 128b/130b")


namespace = ReferenceInterconnectsPage.namespace_of
sources = ReferenceInterconnectsPage.sources_of
