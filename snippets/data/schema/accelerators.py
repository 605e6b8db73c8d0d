"""data/accelerators.yaml: one accelerator, its memory, compute, fabric and power, each with its source."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, Source, Sources, _read_only, _Strict
from snippets.data.quantities import (
    FLOPS_UNITS,
    POWER_UNITS,
    BandwidthSpec,
    ByteSize,
    Flops,
    Power,
    TensorFormat,
    _unit_field,
)
from snippets.data.units import (
    BANDWIDTH_UNITS,
    BYTE_UNITS,
    Direction,
    Throughput,
)

DISPUTABLE: dict[str, dict[str, float]] = {
    "memory": BYTE_UNITS,
    "memory_bandwidth": BANDWIDTH_UNITS,
    "bf16": FLOPS_UNITS,
    "fp8": FLOPS_UNITS,
    "power": POWER_UNITS,
    "scale_up.bandwidth": BANDWIDTH_UNITS,
}


"""Accelerator quantities a `Disagreement` may name, with the unit table of each."""


class Disagreement(_Strict):
    """Sources give different figures for one quantity: the range they span and why the site uses its value."""

    field: Literal["memory", "memory_bandwidth", "bf16", "fp8", "power", "scale_up.bandwidth"]
    range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources give, in `unit`."""
    unit: str
    note: Annotated[str, Field(min_length=10)]
    """Which source says what, and why the site uses the value it records."""

    @model_validator(mode="after")
    def _ordered_known_unit(self) -> Disagreement:
        if self.range[0] > self.range[1]:
            raise ValueError("range must be [low, high]")
        if self.unit not in DISPUTABLE[self.field]:
            expected = sorted(DISPUTABLE[self.field])
            raise ValueError(f"unit {self.unit!r} is not a unit of {self.field}; expected one of {expected}")
        return self


class ScaleUp(_Strict):
    fabric: str
    """Id of an `nvlink` or `fabric` entry in interconnects.yaml."""
    links: PositiveInt | None = None
    """Links or ports this device drives. Omit for an NVLink GPU that uses all of its generation's
    `links_per_gpu`; required for a `fabric` entry that states a per-link rate."""
    bandwidth: BandwidthSpec
    """The vendor's per-device figure, as the datasheet states it."""
    joins: Annotated[int, Field(ge=2, strict=True)] | None = None
    """Devices the fabric joins directly where that is fewer than a node: an NVLink bridge joins 2 cards.
    None: every device of the node (an NVSwitch baseboard, a fully connected mesh, a torus)."""
    basis: Annotated[str, Field(min_length=10)] | None = None
    """What the figure counts where it is not every link the device drives (Gaudi 3's 21 scale-up ports of 24, an
    MI250X GCD's 3 links to other modules of its 4 in the node modelled); shown beside the figure wherever it is
    shown."""
    package: BandwidthSpec | None = None
    """The link inside the package to the device's twin, where one module holds two devices that software sees as
    two GPUs (an MI250X GCD to the other GCD of its module); `bandwidth` is then the links beyond the package. Only
    a `paired_mesh` node's accelerator has one."""


OPTIONAL_ACCELERATOR_FIELDS = ("memory_runtime", "memory_reported", "scale_up", "host_link", "host_link_lanes", "power")


"""Fields an accelerator may leave out, each only with a reason in `not_stated`."""


class RuntimeMemory(_Strict):
    """The device's total as its runtime reports it to a program: what CUDA's cudaMemGetInfo (torch.cuda.mem_get_info,
    vLLM's total_gpu_memory) or cudaDeviceProp.totalGlobalMem give, ROCm's HIP equivalents, a TPU runtime's limit.
    Less than a management tool's total (nvidia-smi counts memory the driver keeps for itself): the total an engine
    budgets from."""

    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]
    runtime: Literal["CUDA", "ROCm", "TPU runtime", "Neuron runtime", "Habana runtime"]
    tool: Annotated[str, Field(min_length=5)]
    """How it was read: "torch.cuda.get_device_properties total_memory", "vLLM's total_gpu_memory (mem_get_info)"."""
    source: Source

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


class ReportedMemory(_Strict):
    """Device memory as a management tool reports it (nvidia-smi's total, amd-smi's or rocm-smi's VRAM total)."""

    value: PositiveFloat
    unit: _unit_field(BYTE_UNITS)  # type: ignore[valid-type]
    tool: str
    """What reported it: "nvidia-smi", "amd-smi", "rocm-smi", or the vendor's documentation of it."""
    source: Source

    @property
    def bytes(self) -> float:
        return self.value * BYTE_UNITS[self.unit]


Vendor = Literal["NVIDIA", "AMD", "Google", "Intel", "AWS"]


"""Who makes an accelerator: an id the engine keys on (custom all-reduce's platforms, a vendor's fitted kernel
fraction), so a closed set, not free text."""


class Accelerator(_Strict):
    name: str
    vendor: Vendor
    memory: ByteSize
    """The vendor's label (80 GB), as the datasheet states it; not what an engine can allocate."""
    memory_runtime: RuntimeMemory | None = None
    """The total the runtime reports to a program (an H100 SXM's 79.22 GiB to CUDA): the capacity the engine budgets
    from. Where none is published the engine budgets from the label, and `not_stated.memory_runtime` says so."""
    memory_reported: ReportedMemory | None = None
    """What a management tool reports as the total (nvidia-smi's 81,559 MiB on an H100 SXM): shown beside the
    runtime's figure, never budgeted from (it counts memory the driver keeps for itself)."""
    memory_type: str
    memory_bandwidth: BandwidthSpec
    """Always `shared`: one figure for reads and writes together."""
    tensor: Annotated[Mapping[TensorFormat, Flops], AfterValidator(_read_only)]
    """Peak tensor throughput of every format the chip's matrix units compute in, as stated. A format that
    is absent is not computed natively: weights stored in it are converted before the product (weight-only)."""
    tensor_notes: Annotated[Mapping[TensorFormat, Annotated[str, Field(min_length=10)]],
                            AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why a format is absent, where a reader would expect it: `{fp8: "FP8 arrived with Hopper"}`."""
    scale_up: ScaleUp | None = None
    host_link: str | None = None
    """Id of a `pcie` entry in interconnects.yaml."""
    host_link_lanes: PositiveInt | None = None
    host_link_other: Annotated[str, Field(min_length=3)] | None = None
    """A host link that is not PCIe, named for display ("NVLink-C2C to its Grace CPU"); `not_stated.host_link`
    still says why the PCIe table has no entry for it."""
    power: Power | None = None
    not_stated: Annotated[Mapping[str, Annotated[str, Field(min_length=10)]],
                          AfterValidator(_read_only)] = Field(default_factory=lambda: MappingProxyType({}))
    """Why an optional field is left out: `{power: "Google publishes no per-chip power"}`."""
    disagreements: tuple[Disagreement, ...] = ()
    sources: Sources

    @model_validator(mode="after")
    def _complete_and_consistent(self) -> Accelerator:
        problems = []
        for key in self.not_stated:
            if key not in OPTIONAL_ACCELERATOR_FIELDS:
                problems.append(f"not_stated.{key}: not an optional field (optional: {', '.join(OPTIONAL_ACCELERATOR_FIELDS)})")
            elif getattr(self, key) is not None:
                problems.append(f"not_stated.{key}: the field is given, so it needs no reason")
        for key in OPTIONAL_ACCELERATOR_FIELDS:
            if getattr(self, key) is None and key not in self.not_stated:
                if key == "host_link_lanes" and self.host_link is None:
                    continue
                problems.append(f"{key}: missing; give it, or say why under not_stated.{key}")
        if "bf16" not in self.tensor and "fp16" not in self.tensor:
            problems.append("tensor.bf16: every accelerator states its BF16 or FP16 tensor throughput")
        if "bf16" not in self.tensor and "bf16" not in self.tensor_notes:
            problems.append("tensor_notes.bf16: a chip without BF16 says why (engines refuse BF16 weights on it)")
        for key in self.tensor_notes:
            if key in self.tensor:
                problems.append(f"tensor_notes.{key}: the format is given, so it needs no note")
        if self.memory_reported is not None and self.memory_reported.bytes > self.memory.bytes * 1.1:
            problems.append("memory_reported: more than the vendor's label plus 10 %: check the unit")
        if self.memory_runtime is not None:
            if not self.memory.bytes * 0.8 <= self.memory_runtime.bytes <= self.memory.bytes * 1.1:
                problems.append("memory_runtime: more than 20 % under or 10 % over the vendor's label: check the unit")
            if self.memory_reported is not None and self.memory_runtime.bytes > self.memory_reported.bytes:
                problems.append("memory_runtime: more than the management tool's total, which counts the driver's "
                                "own memory as well: check the unit")
        if self.memory_bandwidth.direction is not Direction.SHARED:
            problems.append("memory_bandwidth: memory bandwidth is one shared figure: direction must be 'shared'")
        for d in self.disagreements:
            used = self.used_value(d.field)
            if used is None:
                problems.append(f"disagreements: {d.field} is not given, so there is nothing to disagree on")
                continue
            table = DISPUTABLE[d.field]
            low, high = (v * table[d.unit] for v in d.range)
            if not low * (1 - 1e-9) <= used <= high * (1 + 1e-9):
                problems.append(
                    f"disagreements: the site's {d.field} ({used / table[d.unit]:g} {d.unit}) lies outside "
                    f"the recorded range {d.range[0]:g}-{d.range[1]:g} {d.unit}"
                )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def bf16(self) -> Flops | None:
        """The BF16 tensor figure, as stated; None on a chip without BF16 (V100: FP16 only)."""
        return self.tensor.get("bf16")

    @property
    def half(self) -> Flops:
        """The 16-bit tensor figure every accelerator states: BF16's, or FP16's on a chip without BF16."""
        return self.tensor["bf16"] if "bf16" in self.tensor else self.tensor["fp16"]

    @property
    def fp8(self) -> Flops | None:
        """The FP8 tensor figure, as stated; None on a chip without FP8 matrix units."""
        return self.tensor.get("fp8")

    def dense(self, fmt: str) -> Throughput | None:
        """Dense throughput in `fmt` (stated, or derived from a sparse figure); None if the chip lacks the format."""
        f = self.tensor.get(fmt)  # type: ignore[call-overload]
        return None if f is None else f.dense

    @property
    def capacity_bytes(self) -> float:
        """The memory an engine budgets from: the total the runtime reports (CUDA's, ROCm's) where one is published,
        else the vendor's label (and the pages say it is the label)."""
        return self.memory.bytes if self.memory_runtime is None else self.memory_runtime.bytes

    @property
    def capacity_basis(self) -> str:
        """What `capacity_bytes` is: "CUDA", "ROCm"... (the runtime that reported it), or "label"."""
        return "label" if self.memory_runtime is None else self.memory_runtime.runtime

    def used_value(self, field: str) -> float | None:
        """The site's value of a disputable quantity in base units (bytes, bytes/s, FLOP/s, W); None if absent."""
        if field == "memory":
            return self.memory.bytes
        if field == "memory_bandwidth":
            return self.memory_bandwidth.bandwidth.bytes_per_s
        if field in ("bf16", "fp8"):
            f: Flops | None = self.tensor.get(field)  # type: ignore[call-overload]
            return None if f is None else f.per_s
        if field == "power":
            return None if self.power is None else self.power.watts
        if field == "scale_up.bandwidth":
            return None if self.scale_up is None else self.scale_up.bandwidth.bandwidth.bytes_per_s
        raise KeyError(field)

    def disagreement(self, field: str) -> Disagreement | None:
        """The recorded disagreement on `field`, if sources differ on it."""
        return next((d for d in self.disagreements if d.field == field), None)
