"""The entries of every table in data/: one pydantic model per kind, a module per data file, and `SCHEMAS` by file."""

from __future__ import annotations

from typing import Any

from snippets.data.schema.accelerators import (
    DISPUTABLE,
    OPTIONAL_ACCELERATOR_FIELDS,
    Accelerator,
    Disagreement,
    ReportedMemory,
    RuntimeMemory,
    ScaleUp,
    Vendor,
)
from snippets.data.schema.assumptions import Assumption
from snippets.data.schema.deployments import DeployedLayout, DocumentedDeployment
from snippets.data.schema.efficiencies import ComputeEfficiency, Efficiency, EfficiencyEntry
from snippets.data.schema.interconnects import Fabric, Interconnect, Network, Node, NVLink, NVSwitch, PCIe
from snippets.data.schema.latencies import Latency
from snippets.data.schema.measurements import (
    MEASUREMENT_OPTIONAL_FIELDS,
    PERMITTED_CALIBRATION_SOURCES,
    SPECULATION_NAMES,
    Definitions,
    Disaggregation,
    Measurement,
    Mode,
    NotStated,
    Pool,
    PrefixCache,
    Speculation,
    Speedup,
)
from snippets.data.schema.models import ArchRecord, Model, ModelEntry, MTPAcceptance
from snippets.data.schema.policies import (
    AlphaBeta,
    BytesPerElement,
    ChipCollectives,
    ChipNccl,
    Collectives,
    DefaultEfficiency,
    Defaults,
    LayoutPolicy,
    MemoryPolicy,
    NonTorchAtTP,
    Policy,
    RuntimeBytes,
    TimeModel,
)
from snippets.data.schema.precisions import BlockScale, FloatLayout, Precision, PrecisionEntry
from snippets.data.schema.predictors import PREDICTOR_METRICS, PredictorAccuracy
from snippets.data.schema.prices import PRICE_KINDS, Price
from snippets.data.schema.scenarios import LatencyTarget, Scenario, ScenarioEntry, TargetTime

__all__ = [
    "DISPUTABLE", "MEASUREMENT_OPTIONAL_FIELDS", "OPTIONAL_ACCELERATOR_FIELDS",
    "PERMITTED_CALIBRATION_SOURCES", "PREDICTOR_METRICS", "PRICE_KINDS", "SCHEMAS", "SPECULATION_NAMES", "Accelerator",
    "AlphaBeta",
    "ArchRecord", "Assumption", "BlockScale", "BytesPerElement", "ChipCollectives", "ChipNccl", "Collectives",
    "ComputeEfficiency",
    "DefaultEfficiency", "Defaults", "Definitions", "DeployedLayout", "Disaggregation", "Disagreement",
    "DocumentedDeployment", "Efficiency", "EfficiencyEntry", "Fabric", "FloatLayout", "Interconnect", "Latency",
    "LatencyTarget", "LayoutPolicy", "MTPAcceptance", "Measurement", "MemoryPolicy", "Mode", "Model",
    "NVLink", "NVSwitch", "Network", "Node", "NonTorchAtTP", "NotStated", "PCIe", "Policy", "Pool", "Precision",
    "PredictorAccuracy", "PrefixCache", "Price", "ReportedMemory", "RuntimeBytes", "RuntimeMemory", "ScaleUp", "Scenario",
    "Speculation", "Speedup", "TargetTime", "TimeModel", "Vendor",
]

SCHEMAS: dict[str, Any] = {
    "accelerators": Accelerator,
    "interconnects": Interconnect,
    "models": ModelEntry,
    "precisions": PrecisionEntry,
    "assumptions": Assumption,
    "prices": Price,
    "policies": Policy,
    "scenarios": ScenarioEntry,
    "deployments": DocumentedDeployment,
    "latencies": Latency,
    "efficiencies": EfficiencyEntry,
    "measurements": Measurement,
    "predictors": PredictorAccuracy,
}
