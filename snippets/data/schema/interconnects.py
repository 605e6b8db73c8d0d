"""data/interconnects.yaml: links, switches, networks and nodes, told apart by `kind`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from snippets.data.bandwidth import nvlink_per_gpu, pcie_bandwidth
from snippets.data.base import PositiveFloat, PositiveInt, Sources, _read_only, _Strict
from snippets.data.quantities import (
    BandwidthSpec,
    Duration,
    Encoding,
    TransferRate,
)
from snippets.data.units import (
    Bandwidth,
)


class NVLink(_Strict):
    kind: Literal["nvlink"]
    name: str
    generation: PositiveInt
    links_per_gpu: PositiveInt
    per_link: BandwidthSpec
    sources: Sources

    @property
    def per_gpu(self) -> Bandwidth:
        """A GPU's NVLink bandwidth, per direction: links x the per-link rate."""
        return nvlink_per_gpu(self.links_per_gpu, self.per_link.bandwidth).one_way()


class Fabric(_Strict):
    """A scale-up fabric other than NVLink: AMD Infinity Fabric, Google ICI, Gaudi's on-die RoCE ports."""

    kind: Literal["fabric"]
    name: str
    family: str
    per_link: BandwidthSpec | None = None
    """One link's rate where the vendor states it; None where only a per-device total is published."""
    topology: str | None = None
    sources: Sources


class PCIe(_Strict):
    kind: Literal["pcie"]
    name: str
    generation: PositiveInt
    transfer_rate: TransferRate
    """Per lane, per direction."""
    encoding: Encoding
    """Gen3-5: 128b/130b line code. Gen6 (FLIT mode): 242 of every 256 bytes of a FLIT are TLP and DLLP
    bytes, the rest CRC and FEC, recorded as 242/256."""
    signalling: Literal["NRZ", "PAM4"] = "NRZ"
    """NRZ carries one bit per symbol; PAM4 two, so 64 GT/s runs at 32 GBaud. Transfer rate counts bits."""
    flit_mode: bool = False
    encoding_note: str | None = None
    """What the derived figure still includes (packet headers, DLLP bytes)."""
    sources: Sources

    def lanes(self, lanes: int = 16) -> Bandwidth:
        """Per-direction data rate of `lanes` lanes, after line encoding or FLIT overhead."""
        return pcie_bandwidth(self.transfer_rate.per_s, lanes, self.encoding.payload_bits, self.encoding.line_bits)


class NVSwitch(_Strict):
    kind: Literal["nvswitch"]
    name: str
    generation: PositiveInt
    fabric: str
    """Id of the `nvlink` generation it switches."""
    sources: Sources


class Network(_Strict):
    kind: Literal["network"]
    name: str
    family: str
    port: BandwidthSpec
    """One port (one NIC link) of the fabric."""
    latency: Duration | None = None
    """Indicative latency, labelled as such where shown; `latency_note` says what it covers."""
    latency_note: str | None = None
    switch_latency: Duration | None = None
    """Port-to-port latency of one switch as the switch's manual prints it; InfiniBand entries give it or say why not."""
    adapter_latency: Duration | None = None
    """Latency of the host adapter as its manual prints it; InfiniBand entries give it or say why not."""
    not_stated: Annotated[Mapping[str, Annotated[str, Field(min_length=10)]],
                          AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why `switch_latency` or `adapter_latency` is left out."""
    sources: Sources

    @model_validator(mode="after")
    def _latencies_given_or_explained(self) -> Network:
        problems = []
        for key in self.not_stated:
            if key not in ("switch_latency", "adapter_latency"):
                problems.append(f"not_stated.{key}: only switch_latency and adapter_latency may be explained")
            elif getattr(self, key) is not None:
                problems.append(f"not_stated.{key}: the field is given, so it needs no reason")
        if self.family == "InfiniBand":
            for key in ("switch_latency", "adapter_latency"):
                if getattr(self, key) is None and key not in self.not_stated:
                    problems.append(f"{key}: give the manual's figure, or say why under not_stated.{key}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Node(_Strict):
    kind: Literal["node"]
    name: str
    accelerator: str
    gpus: PositiveInt
    """Accelerators in one node as it is built and rented: a server's 8 GPUs, or the 72 of a GB200 NVL72 rack."""
    domain_gpus: PositiveInt | None = None
    """Accelerators one scale-up fabric joins, where it reaches beyond the node (a TPU slice); None: the node."""
    scale_up: Literal["nvlink", "fabric", "pcie"] = "nvlink"
    """What tensor-parallel traffic crosses inside the domain: NVLink, another scale-up fabric, or only PCIe."""
    switch: str | None = None
    """Id of the `nvswitch` entry that joins its GPUs; None for a switchless mesh or torus."""
    nic: str | None = None
    """Id of the `network` entry of its compute NICs; None where the platform ships without them."""
    nics_per_gpu: PositiveFloat | None = None
    switch_chips: PositiveInt | None = None
    """NVSwitch chips in the node (HGX H100: 4); None for a switchless node."""
    switch_trays: PositiveInt | None = None
    """Switch trays that hold the chips, where the node is a rack (GB200 NVL72: 9 trays of 2 chips)."""
    note: Annotated[str, Field(min_length=10)] | None = None
    """What a reader should know about the node that the fields do not say (a bridge joins only pairs)."""
    fabric_shape: Literal["switched", "full_mesh", "paired_mesh", "torus", "rack", "pcie"]
    """How the scale-up links are wired, which decides what a group of its GPUs gets: `switched`, every link of
    every GPU into switches (any group gets each GPU's whole bandwidth); `full_mesh`, each GPU's links spread
    evenly over its peers (a group of g gets g − 1 peers' share); `paired_mesh`, GPUs in pairs that share a
    package (an MI250X's two GCDs), each pair joined by its package link and each GPU's other links spread over
    the other packages' GPUs; `torus`, each chip's links to its neighbours on a ring per dimension; `rack`, a
    switched domain spanning a rack's compute trays; `pcie`, no scale-up fabric."""
    torus_dims: PositiveInt | None = None
    """Dimensions of a torus (2 for a 2D torus); only for `fabric_shape: torus`."""
    sources: Sources

    @model_validator(mode="after")
    def _nic_and_count(self) -> Node:
        if (self.nic is None) != (self.nics_per_gpu is None):
            raise ValueError("nic and nics_per_gpu: give both or neither")
        if self.domain_gpus is not None and self.domain_gpus < self.gpus:
            raise ValueError("domain_gpus: a scale-up domain holds at least the node's own accelerators")
        if self.switch_chips is not None and self.switch is None:
            raise ValueError("switch_chips: a node without a switch has no switch chips")
        if self.switch is not None and self.switch_chips is None and self.note is None:
            raise ValueError("switch_chips: give the switch chips, or say in `note` why the sources do not")
        if self.switch_trays is not None and self.switch_chips is not None and self.switch_chips % self.switch_trays:
            raise ValueError("switch_trays: the chips must divide evenly into the trays")
        if self.scale_up == "pcie" and self.switch is not None:
            raise ValueError("scale_up: a node whose GPUs meet only over PCIe has no NVSwitch")
        if (self.fabric_shape == "pcie") != (self.scale_up == "pcie"):
            raise ValueError("fabric_shape: pcie exactly when scale_up is pcie")
        if (self.fabric_shape in ("switched", "rack")) != (self.switch is not None):
            raise ValueError("fabric_shape: switched or rack exactly when a switch joins the GPUs")
        if self.fabric_shape == "paired_mesh" and self.gpus % 2:
            raise ValueError("fabric_shape: a paired mesh holds its GPUs in pairs (an even number)")
        if (self.fabric_shape == "torus") != (self.torus_dims is not None):
            raise ValueError("torus_dims: give it for a torus, and only for a torus")
        return self

    @property
    def domain(self) -> int:
        """Accelerators in the node's scale-up domain."""
        return self.gpus if self.domain_gpus is None else self.domain_gpus


Interconnect = Annotated[NVLink | PCIe | NVSwitch | Network | Node | Fabric, Field(discriminator="kind")]
