"""Fabrics as they are wired: what bandwidth a group of GPUs (a TP, EP or PP group) gets from its members' links.

Each node records its fabric's shape (`data/interconnects.yaml`, `fabric_shape`):

- `switched` (HGX: NVSwitch) and `rack` (GB200 NVL72: NVLink switch trays spanning the rack): every link of
  every GPU goes into switches, so any group, two GPUs or all of them, gets each member's whole per-direction
  scale-up bandwidth;
- `full_mesh` (MI300X platform, Gaudi 3 baseboard, the V100's hybrid cube-mesh): each GPU's links are spread
  evenly over its peers (an MI300X's seven links, one to each of the seven others; Gaudi 3's 21 scale-up ports,
  three to each), so a group of g GPUs reaches its g − 1 peers over g − 1 peers' share of the links: a TP2 pair
  gets one link, TP8 all seven. Where a GPU has fewer links than peers (a V100's six for seven), each peer gets
  one link, a group never more than all of them, and a group is fully connected only while its g − 1 peers are
  no more than the links (the V100 server's sets of four are; all eight are not);
- `paired_mesh` (an HPE Cray EX node of four MI250X, eight GCDs to software): GPUs come in pairs that share a
  package, joined by its package link; each GPU's other links go to GPUs of other packages, too few to reach them
  all (an MI250X GCD's three over six). A pair gets its package link. A larger group's collective sends each member
  an equal share, paced by the links between packages: spread evenly over the other packages' GPUs, they give
  each peer beyond the twin an equal part, and the group g − 1 such parts (of an MI250X GCD's 150 GB/s each way
  over six GPUs, TP4 three parts, 75 GB/s; TP8 seven, 175 GB/s). Only a pair is fully connected;
- `torus` (TPU slices, Trainium2): each chip's links join its neighbours on one ring per dimension; a group of
  up to eight chips is taken to sit on one ring (two links, one each way round it), larger groups on
  ceil(log2(g) / 3) dimensions, at most the torus's own;
- `pcie`: no scale-up fabric; the group's traffic crosses each card's host link.

A group larger than one node spans nodes: its collectives go through every GPU's share of the node's NICs,
hierarchically (`snippets.engine.collectives`), with the node's own fabric inside each node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from snippets.engine.deployment import Deployment
from snippets.engine.specs import ChipSpec, NodeSpec

GROUPS = ("tp", "ep", "pp")


@dataclass(frozen=True, slots=True)
class Link:
    """What one GPU of a group gets: per-direction wire bandwidth (`bytes_per_s`, before any kernel's efficiency)
    and the latency of one hop, over the path the group's traffic crosses. For a group spanning nodes that path
    is the network (each GPU's NIC share); `local_*` describe the fabric inside each node."""

    name: str
    bytes_per_s: float
    hop_s: float
    shape: str
    """switched, rack, full_mesh, torus, pcie or network."""
    gpus: int = 1
    """GPUs in the group."""
    nodes: int = 1
    """Nodes the group spans."""
    fully_connected: bool = False
    """Every member reaches every other over its own links (what vLLM's custom all-reduce needs beyond two GPUs)."""
    local_bytes_per_s: float = 0.0
    """Inside one node: what each GPU gets from the fabric for the group's share that stays in the node."""
    local_hop_s: float = 0.0
    local_gpus: int = 1
    """Members of the group inside one node."""

    @property
    def per_node(self) -> int:
        return self.local_gpus

    def as_dict(self) -> dict[str, float | str]:
        """What the command line prints: the name, the per-direction GB/s the group gets, the hop in µs."""
        return {"name": self.name, "gb_per_s": self.bytes_per_s / 1e9, "hop_us": self.hop_s * 1e6}


def _fabric_name(d: Deployment) -> str:
    st = d.setting
    if st.node.fabric_shape == "pcie" or st.chip.scale_up_bytes_per_s is None:
        return "PCIe"
    return st.chip.scale_up_name or st.node.scale_up


def fabric_bandwidth(d: Deployment, gpus: int) -> float:
    """Per-direction bandwidth one GPU gets toward the other `gpus − 1` members of a group inside one node."""
    return group_fabric_bandwidth(d.setting.node, d.setting.chip, gpus)


def group_fabric_bandwidth(node: NodeSpec, chip: ChipSpec, gpus: int) -> float:
    """`fabric_bandwidth` for a group of `gpus` GPUs of `node` (of `chip`s), whatever deployment holds it: what a
    collective timed on that many GPUs of the node had (`snippets.calibration` fits its timings against it)."""
    if gpus <= 1:
        return 0.0
    shape = node.fabric_shape
    if shape == "pcie" or chip.scale_up_bytes_per_s is None:
        if chip.host_link_bytes_per_s is None:
            raise ValueError(f"{chip.name} records neither a scale-up fabric nor a host link")
        return chip.host_link_bytes_per_s
    total = chip.scale_up_bytes_per_s
    links = chip.scale_up_links
    if shape == "paired_mesh":
        if chip.package_bytes_per_s is None:
            raise ValueError(f"{chip.name} states no package link, which a paired mesh needs")
        if gpus == 2:
            return chip.package_bytes_per_s
        return min(chip.package_bytes_per_s, total * (gpus - 1) / max(1, node.gpus - 2))
    if shape in ("switched", "rack") or links is None:
        return total
    per_link = total / links
    if shape == "full_mesh":
        peers = max(1, node.gpus - 1)
        per_peer = max(1, links // peers)
        return min(total, per_link * per_peer * min(gpus - 1, peers))
    # torus: two links (one each way round a ring) per dimension the group spans
    dims = min(node.torus_dims or 1, max(1, math.ceil(math.log2(gpus) / 3)))
    return per_link * min(links, 2 * dims)


def group_fully_connected(node: NodeSpec, chip: ChipSpec, gpus: int) -> bool:
    """Whether every member of a group of `gpus` GPUs inside one node reaches every other over its own links, what
    vLLM's custom all-reduce needs beyond two GPUs: always behind a switch; on a full mesh while the group's peers
    are no more than a GPU's links; on a torus or a paired mesh only as a pair; never over PCIe alone."""
    shape, links = node.fabric_shape, chip.scale_up_links
    if shape in ("switched", "rack"):
        return True
    if shape == "full_mesh":
        return links is None or gpus - 1 <= links
    return shape in ("torus", "paired_mesh") and gpus <= 2


def fabric_hop(d: Deployment) -> float:
    tm = d.setting.time_model
    return tm.pcie_hop_s if d.setting.node.fabric_shape == "pcie" else tm.nvlink_hop_s


def group_size(d: Deployment, group: str) -> int:
    lay = d.layout
    if group == "tp":
        return lay.tp
    if group == "ep":
        return lay.ep
    if group == "pp":
        return 2 if lay.pp > 1 else 1
    raise ValueError(f"group must be one of {GROUPS}, got {group!r}")


def _spans_nodes(d: Deployment, group: str) -> bool:
    node_gpus = d.setting.node.gpus
    if group == "pp":
        return d.gpus > node_gpus  # a layout beyond one node puts stages on different nodes
    return group_size(d, group) > node_gpus


def group_link(d: Deployment, group: str) -> Link:
    """The link a deployment's `group` ("tp", "ep" or "pp") crosses, and what each of its GPUs gets from it.

    PP: the send between two stages (one GPU to its counterpart in the next stage). TP and EP: the group's
    collectives. A group beyond one node crosses the network at each GPU's share of the node's NICs."""
    st = d.setting
    node, shape = st.node, st.node.fabric_shape
    size = group_size(d, group)
    local = min(size, node.gpus)
    local_bw = fabric_bandwidth(d, 2 if group == "pp" else local)
    local_hop = fabric_hop(d)
    full = group_fully_connected(node, st.chip, local)
    if size <= 1:
        return Link("none", 0.0, 0.0, shape, 1, 1, True, 0.0, 0.0, 1)
    if not _spans_nodes(d, group):
        return Link(_fabric_name(d), local_bw, local_hop, shape, size, 1, full, local_bw, local_hop, local)
    if node.network_bytes_per_s is None:
        raise ValueError(f"{d.layout.label} spans nodes of {node.name}, which records no network")
    nodes = math.ceil(size / node.gpus) if group != "pp" else 2
    return Link(node.network_name or "network", node.network_bytes_per_s, st.time_model.network_hop_s, "network",
                size, nodes, False,
                local_bw, local_hop, local if group != "pp" else 1)


def links(d: Deployment) -> dict[str, Link]:
    """The TP, EP and PP links of a deployment."""
    return {g: group_link(d, g) for g in GROUPS}


REWIRINGS = ("pcie", "network")


def rewired(d: Deployment, link: str) -> Deployment:
    """Deployment `d` as if its GPUs met another way, for pages that compare links: "pcie" (the same node with no
    scale-up fabric, every collective over each card's host link) or "network" (each GPU in a node of its own, so
    every group's collectives cross its network adapter). The engine then prices every step itself."""
    st = d.setting
    if link == "pcie":
        node = replace(st.node, scale_up="pcie", fabric_shape="pcie")
    elif link == "network":
        node = replace(st.node, gpus=1, domain=1)
    else:
        raise ValueError(f"link must be one of {REWIRINGS}, got {link!r}")
    return Deployment(replace(st, node=node), d.layout, d.why)
