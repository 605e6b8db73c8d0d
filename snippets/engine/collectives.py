"""Collectives as the engines run them: the algorithm each picks by message size, priced by published timings.

- **All-reduce, one node.** vLLM's custom all-reduce takes a message below `custom_allreduce_max_bytes`
  (8 MiB; less where its release's table for the chip caps it while symmetric memory is on: 256 KiB on eight
  H100s) on a group of 2, 4, 6 or 8 GPUs that is two GPUs or fully connected (NVLink, Infinity Fabric), on
  CUDA and ROCm (`should_custom_ar`); from that cap a BF16 message below the table's symmetric-memory limit goes
  to PyTorch's symmetric-memory all-reduce on an NVSwitch (multimem, where the switch adds the messages up, or
  two-shot, by group size: `symm_mem_allreduce`). The custom all-reduce runs one stage (each GPU reads every
  peer's buffer: (n − 1) × the message over its links) on two GPUs, on up to four below 512 KB and up to eight
  below 256 KB, two stages
  (reduce-scatter then all-gather through the peers: 2(n − 1)/n × the message) above
  (`csrc/custom_all_reduce.cuh`). Another engine's kernel on a chip may pick its stages otherwise, and its own
  timings price it there (`TimeModelSpec.for_chip`: aiter's, which SGLang runs on ROCm, switches to two stages
  from 160 KB on four GPUs and 80 KB on eight). Everything else goes to NCCL (ring-like: 2(n − 1)/n × the
  message, and a latency that grows by a step per GPU).
- **All-reduce across nodes**, as NCCL does it on multi-node groups (custom all-reduce refuses them):
  reduce-scatter inside the node, an all-reduce of each GPU's 1/g shard across the nodes over every GPU's own
  NIC share, all-gather inside the node; across the nodes a ring's 2(N − 1) network steps or a tree's
  2 floor(log2 N), whichever is fewer, as NCCL's tuner picks, each at NCCL's own latency for a network step.
- **All-to-all** (expert dispatch and combine under data-parallel attention): each GPU sends its tokens'
  copies to the ranks holding their experts; the share bound for GPUs in the same node crosses the fabric,
  the rest the network, both at once (the slower decides).
- **Send** (between pipeline stages): one hop and the bytes at a point-to-point copy's share of the link.

Each algorithm's fixed latency and share of the link bandwidth are the time model's (`TimeModelSpec`:
`one_shot`, `two_shot`, `nccl`, `alltoall`), fitted on the published timings in `data/latencies.yaml`; the
bandwidth is what `snippets.engine.topology` says the group's links give each member.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.engine.specs import AllreduceTable, AlphaBetaSpec, TimeModelSpec
from snippets.engine.topology import Link

CUSTOM_AR_SIZES = (2, 4, 6, 8)
"""Group sizes vLLM's custom all-reduce supports (`CustomAllreduce._SUPPORTED_WORLD_SIZES`)."""
CUSTOM_AR_VENDORS = ("NVIDIA", "AMD")
"""Platforms vLLM builds its custom all-reduce for (CUDA and ROCm)."""
ONE_SHOT_LIMITS = ((2, float("inf")), (4, 512 * 1024), (8, 256 * 1024))
"""(largest group, message bytes below which) vLLM's custom all-reduce runs one stage."""


@dataclass(frozen=True, slots=True)
class Collective:
    seconds: float
    algorithm: str
    """one-shot, two-shot, multimem, symm-two-shot, nccl, hierarchical, all-to-all, send, or none."""
    latency_s: float
    """The fixed part: what the collective costs with no bytes at all."""
    bytes_moved: float = 0.0
    """Bytes each GPU sends over its links (both levels, for a hierarchical one)."""


NONE = Collective(0.0, "none", 0.0)


def _ab(spec: AlphaBetaSpec, peers: int, moved: float, bytes_per_s: float) -> tuple[float, float]:
    lat = spec.latency_s + spec.per_peer_s * max(0, peers - 1)
    return lat, lat + moved / (bytes_per_s * spec.efficiency)


def one_shot_applies(n: int, nbytes: float, limits: tuple[tuple[int, float], ...] = ONE_SHOT_LIMITS) -> bool:
    """Whether custom all-reduce runs one stage for `nbytes` on `n` GPUs, by `limits` ((largest group, bytes below
    which), vLLM's by default; a chip's engine may ship a kernel that picks otherwise: `TimeModelSpec.one_stage`)."""
    return any(n <= most and nbytes < below for most, below in limits)


def symm_mem_table(n: int, link: Link, tm: TimeModelSpec) -> AllreduceTable | None:
    """The release's all-reduce table where vLLM's symmetric-memory communicator is up for this group: the chip has
    a table (`TimeModelSpec.allreduce_table`) naming the group's size, the time model prices the path, and the group's
    GPUs meet in one node's NVSwitch, whose multicast the communicator needs (it turns itself off where
    `multicast_ptr` is 0, two-shot included); None otherwise."""
    t = tm.allreduce_table
    if t is None or tm.multimem is None or tm.symm_two_shot is None:
        return None
    up = link.nodes == 1 and link.shape in ("switched", "rack") and n in dict(t.symm_max)
    return t if up else None


def custom_allreduce_limit(n: int, link: Link, tm: TimeModelSpec) -> float:
    """Bytes below which vLLM's custom all-reduce takes a message of `n` GPUs: its own maximum, capped by its
    release's table for the chip while the symmetric-memory communicator is up (`symm_mem_table`)."""
    t = symm_mem_table(n, link, tm)
    return tm.custom_allreduce_max_bytes if t is None else t.custom_limit(n, tm.custom_allreduce_max_bytes)


def custom_allreduce_applies(n: int, nbytes: float, link: Link, tm: TimeModelSpec, vendor: str) -> bool:
    """vLLM's `should_custom_ar`: one node, a supported size, two GPUs or a fully connected group, a message
    below the maximum (`custom_allreduce_limit`), and a CUDA or ROCm platform."""
    return (link.nodes == 1 and n in CUSTOM_AR_SIZES and (n == 2 or link.fully_connected)
            and nbytes < custom_allreduce_limit(n, link, tm) and vendor in CUSTOM_AR_VENDORS)


def symm_mem_applies(n: int, nbytes: float, link: Link, tm: TimeModelSpec) -> bool:
    """vLLM's `should_use_symm_mem`, tried after the custom all-reduce: the communicator is up (`symm_mem_table`)
    and the message is BF16 and below the table's limit for the group's size."""
    t = symm_mem_table(n, link, tm)
    return t is not None and nbytes < t.symm_limit(n)


def symm_mem_allreduce(nbytes: float, n: int, bytes_per_s: float, tm: TimeModelSpec) -> Collective:
    """PyTorch's symmetric-memory all-reduce as vLLM runs it: multimem on the group sizes its table names (each GPU
    sends its message once into the switch, which adds them up and sends the sum back: the message each way), two-shot
    on the others (2(n − 1)/n of the message, as the custom two-shot)."""
    t, multimem, two = tm.allreduce_table, tm.multimem, tm.symm_two_shot
    assert t is not None and multimem is not None and two is not None  # noqa: S101 - symm_mem_applies
    if n in t.multimem:  # the table's choice between its two kernels (`AllreduceTable.path`)
        lat, sec = _ab(multimem, 1, nbytes, bytes_per_s)
        return Collective(sec, "multimem", lat, nbytes)
    moved = 2 * (n - 1) / n * nbytes
    lat, sec = _ab(two, 1, moved, bytes_per_s)
    return Collective(sec, "symm-two-shot", lat, moved)


def nccl_allreduce(nbytes: float, n: int, bytes_per_s: float, tm: TimeModelSpec) -> Collective:
    moved = 2 * (n - 1) / n * nbytes
    lat, t = _ab(tm.nccl, n - 1, moved, bytes_per_s)
    return Collective(t, "nccl", lat, moved)


def allreduce(nbytes: float, link: Link, tm: TimeModelSpec, vendor: str = "NVIDIA") -> Collective:
    """One all-reduce of `nbytes` (each GPU's whole message) across the `link.gpus` GPUs of a group."""
    n = link.gpus
    if n <= 1:
        return NONE
    if nbytes < 0:
        raise ValueError("nbytes must be non-negative")
    if link.nodes > 1:
        return hierarchical_allreduce(nbytes, link, tm)
    if custom_allreduce_applies(n, nbytes, link, tm, vendor):
        if one_shot_applies(n, nbytes, tm.one_stage or ONE_SHOT_LIMITS):
            moved = (n - 1) * nbytes
            lat, t = _ab(tm.one_shot, 1, moved, link.bytes_per_s)
            return Collective(t, "one-shot", lat, moved)
        moved = 2 * (n - 1) / n * nbytes
        lat, t = _ab(tm.two_shot, 1, moved, link.bytes_per_s)
        return Collective(t, "two-shot", lat, moved)
    if symm_mem_applies(n, nbytes, link, tm):
        return symm_mem_allreduce(nbytes, n, link.bytes_per_s, tm)
    return nccl_allreduce(nbytes, n, link.bytes_per_s, tm)


def network_steps(nodes: int) -> int:
    """Network steps of NCCL's all-reduce across `nodes` nodes, as its tuner counts them (`ncclTopoTuneModel`): a ring
    takes 2(N − 1), a tree 2 floor(log2 N); NCCL runs whichever its model makes faster, and with the same fixed cost
    per step and the same bytes that is the one of fewer steps (they agree at two nodes)."""
    return 2 * min(nodes - 1, nodes.bit_length() - 1) if nodes > 1 else 0


def hierarchical_allreduce(nbytes: float, link: Link, tm: TimeModelSpec) -> Collective:
    """NCCL across nodes: reduce-scatter among the g GPUs of each node (each keeps 1/g of the sum), all-reduce of
    that shard across the N nodes over each GPU's NIC share, all-gather back inside the node.

    Inside the node each phase moves (g − 1)/g of the message and pays half of NCCL's all-reduce latency (one
    of its two passes); across the nodes the shard's all-reduce moves 2(N − 1)/N × message/g over the network
    at a point-to-point copy's share of the NIC, and pays NCCL's latency with the network's step (NCCL's own
    figure: `TimeModelSpec.network_hop_s`) for each of its steps, a ring's or a tree's (`network_steps`)."""
    g, nodes = link.local_gpus, link.nodes
    inside = (g - 1) / g * nbytes if g > 1 else 0.0
    lat_in = (tm.nccl.latency_s + tm.nccl.per_peer_s * max(0, g - 2)) / 2 if g > 1 else 0.0
    rs = lat_in + inside / (link.local_bytes_per_s * tm.nccl.efficiency) if g > 1 else 0.0
    shard = nbytes / g
    across = 2 * (nodes - 1) / nodes * shard
    lat_net = tm.nccl.latency_s + network_steps(nodes) * link.hop_s
    net = lat_net + across / (link.bytes_per_s * tm.link_fraction)
    latency = 2 * lat_in + lat_net
    return Collective(2 * rs + net, "hierarchical", latency, 2 * inside + across)


def alltoall(nbytes: float, link: Link, tm: TimeModelSpec) -> Collective:
    """One all-to-all in which each GPU sends `nbytes` to the others of its `link.gpus`-GPU group, spread evenly:
    the share bound for its own node's GPUs crosses the fabric, the rest the network, at once."""
    n = link.gpus
    if n <= 1 or nbytes <= 0:
        return NONE
    intra = nbytes * (link.local_gpus - 1) / (n - 1)
    return alltoall_split(intra, nbytes - intra, link, tm)


def alltoall_split(intra: float, inter: float, link: Link, tm: TimeModelSpec) -> Collective:
    """One all-to-all in which each GPU moves `intra` bytes over its node's fabric and `inter` over the network, at
    once (the slower decides): DeepEP's normal kernels send a token once to each other node and forward it there
    over NVLink, so their shares are not the group's proportions (`step._moe_ops`)."""
    if intra + inter <= 0 or link.gpus <= 1:
        return NONE
    spec = tm.alltoall
    t_in = intra / (link.local_bytes_per_s * spec.efficiency) if intra else 0.0
    t_out = inter / (link.bytes_per_s * tm.link_fraction) if inter else 0.0
    lat = spec.latency_s + (link.hop_s if inter else 0.0)
    return Collective(lat + max(t_in, t_out), "all-to-all", lat, intra + inter)


def send(nbytes: float, link: Link, tm: TimeModelSpec) -> Collective:
    """One point-to-point send between pipeline stages: a hop and the bytes at a copy's share of the link."""
    if nbytes <= 0:
        return NONE
    return Collective(link.hop_s + nbytes / (link.bytes_per_s * tm.link_fraction), "send", link.hop_s, nbytes)


def gather(nbytes: float, link: Link, tm: TimeModelSpec) -> Collective:
    """NCCL's gather of `nbytes` in all (each GPU's 1/n share to one of them), as the LM head's logits are
    gathered across the TP group."""
    n = link.gpus
    if n <= 1 or nbytes <= 0:
        return NONE
    moved = (n - 1) / n * nbytes
    bw = link.bytes_per_s * (tm.link_fraction if link.nodes > 1 else 1.0)
    lat, t = _ab(tm.nccl, n - 1, moved, bw)
    return Collective(t, "nccl", lat, moved)


def priced(nbytes: float, link: Link, tm: TimeModelSpec) -> dict[str, Collective]:
    """What each all-reduce algorithm the engines run would cost for this message on a one-node group, whichever
    `allreduce` picks: one-shot and two-shot custom all-reduce, NCCL, and the symmetric-memory path where the group
    has one (its multimem or two-shot, by the group's size), for pages that compare them."""
    n = link.gpus
    if n <= 1:
        return {}
    one_moved, two_moved = (n - 1) * nbytes, 2 * (n - 1) / n * nbytes
    lat1, t1 = _ab(tm.one_shot, 1, one_moved, link.bytes_per_s)
    lat2, t2 = _ab(tm.two_shot, 1, two_moved, link.bytes_per_s)
    out = {"one-shot": Collective(t1, "one-shot", lat1, one_moved),
           "two-shot": Collective(t2, "two-shot", lat2, two_moved),
           "nccl": nccl_allreduce(nbytes, n, link.bytes_per_s, tm)}
    if symm_mem_table(n, link, tm) is not None:
        out["symmetric memory"] = symm_mem_allreduce(nbytes, n, link.bytes_per_s, tm)
    return out
