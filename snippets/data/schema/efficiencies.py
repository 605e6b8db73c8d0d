"""data/efficiencies.yaml: an achieved fraction of a peak (memory or compute), with its source."""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

from pydantic import (
    Field,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, Sources, _Strict
from snippets.data.quantities import (
    FLOPS_UNITS,
    BandwidthSpec,
    Duration,
    Flops,
    TensorFormat,
    in_base,
)
from snippets.data.units import (
    BANDWIDTH_UNITS,
)

MoeKernel = Literal["cutlass", "trtllm-gen", "deepgemm", "triton", "marlin"]
"""The fused-MoE kernels an engine may run, as the engines name their backends: "cutlass" (TensorRT-LLM's
PyTorch default, moe_config.backend CUTLASS), "trtllm-gen" (TensorRT-LLM's TRTLLM backend, the kernels SGLang's and
vLLM's flashinfer_trtllm runners call), "deepgemm" (TensorRT-LLM's DEEPGEMM backend), "triton" (SGLang's and vLLM's
fused_moe Triton kernels), "marlin" (vLLM's fused_marlin_moe, for 4-bit weights: INT4, and MXFP4 where asked for). A
kernel without entries of its own on a chip takes the engines' median there."""


GemmKernel = Literal["trtllm"]
"""An engine's own dense GEMM ops, where they differ from the other engines': "trtllm" (TensorRT-LLM's PyTorch
backend's Linear, which calls its own FP4 GEMM, where SGLang and vLLM both call FlashInfer's CuTe DSL kernel). An
engine without entries of its own on a chip and format takes the engines' median there."""
GEMM_KERNELS = ("trtllm",)


KvEngine = Literal["vLLM", "SGLang", "TensorRT-LLM"]
"""A serving engine whose own decode attention kernel a `kv_stream` entry over an 8-bit cache measures, as the memory
policies name it (`MemoryPolicy.engine`): the engines' FP8-cache kernels differ too much for one median."""


WEIGHT_STREAMS = ("gemm_weights", "moe_weights")
"""The weight streams measured per format, and by batch."""


def _kernel_fits(resource: str, kernel: str, gemm: str, *moe: str) -> None:
    """A dense GEMM's entry names an engine's own GEMM ops (`GemmKernel`), a fused MoE layer's a fused-MoE kernel
    (`MoeKernel`); no other resource is read per kernel."""
    if resource == gemm:
        if kernel not in GEMM_KERNELS:
            raise ValueError(f"kernel: a dense GEMM's entry names an engine's own GEMM ops ({', '.join(GEMM_KERNELS)}), "
                             f"not {kernel!r}")
    elif resource not in moe:
        raise ValueError("kernel: only a GEMM's or a fused MoE layer's figures are read per kernel")
    elif kernel in GEMM_KERNELS:
        raise ValueError(f"kernel: {kernel!r} names an engine's dense GEMM ops, not a fused-MoE kernel")


class Efficiency(_Strict):
    """A bandwidth achieved in a published measurement, as a fraction of the datasheet figure it is measured against.

    These become the engine's efficiency factors: the share of a peak a real transfer reaches.
    """

    name: str
    resource: Literal["nvlink", "pcie_h2d", "hbm", "network", "gemm_weights", "moe_weights", "kv_stream", "allreduce",
                      "alltoall"]
    """What moved: a link's or HBM's copy, a decode GEMM's weight stream (`gemm_weights`), a fused MoE layer's
    expert weight stream (`moe_weights`), decode attention's read of the KV cache (`kv_stream`), or a collective's
    payload (`allreduce`, `alltoall`, against the link it crosses)."""
    accelerator: str
    """Id of the accelerator measured."""
    tensor_format: TensorFormat | None = None
    """For `gemm_weights` and `moe_weights`: the format the weights are stored and computed in. For `kv_stream`: the
    KV cache's format where it is 8-bit ("fp8", with `engine`); none: a 16-bit cache, the engines' median."""
    engine: KvEngine | None = None
    """For a `kv_stream` of an 8-bit cache (required there, and only there): the engine whose decode kernel it
    measures, which that engine reads for such a cache in place of the chip's 16-bit curve."""
    by_tokens: tuple[tuple[PositiveInt, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `gemm_weights`: the fraction of `peak` reached with each number of tokens in the batch; for
    `moe_weights`, with each number of rows every expert the step touches sees. (tokens, fraction), tokens rising;
    the time model interpolates between them."""
    by_context: tuple[tuple[PositiveInt, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `kv_stream` (required there, and only there): the fraction of `peak` decode attention reaches with each
    number of cached tokens every sequence attends, (tokens, fraction), tokens rising; the time model interpolates in
    the logarithm of the tokens and holds the end points beyond them."""
    kernel: Literal[MoeKernel, GemmKernel] | None = None
    """For `moe_weights`: the one kernel this entry measures, which an engine running it reads in place of the engines'
    median (as `ComputeEfficiency.kernel`), with its own `fixed` cost. For `gemm_weights`: the engine's own GEMM ops
    (`GemmKernel`, `MemoryPolicy.gemm_kernel`), read net of each call's fixed cost as the median's is."""
    fixed: Annotated[float, in_base(Duration)] | None = None
    """With `kernel`: the kernel's fixed cost a fused MoE layer (the experts op's, in place of the time model's count
    of its kernels), which its shares are read net of. For `kv_stream` (required there): decode attention's fixed
    cost a layer, likewise (the attention op's, in place of its count of kernels)."""
    fixed_by_hidden: tuple[tuple[PositiveInt, PositiveFloat], ...] = ()
    """With a kernel's `fixed` (moe_weights): how that fixed cost changes with the model's hidden size, the K of the
    layer's first grouped GEMM, as (hidden size, multiple of `fixed`), sizes rising; the time model reads it straight
    between its points and holds its ends (a block-scaled FP8 kernel's is near twice as large at DeepSeek's 7,168 as at
    2,048); none: `fixed` at any hidden size."""
    achieved: BandwidthSpec
    """What the run reached, on the same basis as `peak` (the loader refuses two bases)."""
    achieved_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `achieved`'s unit."""
    peak: BandwidthSpec
    """The datasheet (or derived link) figure the run is compared with."""
    method: Annotated[str, Field(min_length=5)]
    """The tool and test: "nvbandwidth host_to_device_memcpy_ce", "BabelStream Triad"."""
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _consistent(self) -> Efficiency:
        low, high = self.achieved_range
        if low > high:
            raise ValueError("achieved_range must be [low, high]")
        if not low <= self.achieved.value <= high:
            raise ValueError("achieved: the value lies outside achieved_range")
        if self.achieved.direction is not self.peak.direction:
            raise ValueError(
                f"achieved and peak: quoted {self.achieved.direction.label} and {self.peak.direction.label}; "
                "compare on one basis")
        if self.fraction > 1:
            raise ValueError(f"achieved exceeds peak ({self.fraction:.3f}): check units and basis")
        if self.resource == "kv_stream":
            if (self.tensor_format is None) != (self.engine is None):
                raise ValueError("engine: an 8-bit cache's KV read names the engine whose kernel it measures "
                                 "(tensor_format and engine together), a 16-bit one neither")
            if self.tensor_format not in (None, "fp8"):
                raise ValueError(f"tensor_format: a KV read's cache is 16-bit (none) or fp8, not {self.tensor_format!r}")
        elif (self.resource in WEIGHT_STREAMS) != (self.tensor_format is not None):
            raise ValueError("tensor_format: give it for gemm_weights and moe_weights (and an 8-bit cache's "
                             "kv_stream), and only there")
        if self.engine is not None and self.resource != "kv_stream":
            raise ValueError("engine: only decode attention's KV read over an 8-bit cache is read per engine")
        if self.kernel is not None:
            _kernel_fits(self.resource, self.kernel, "gemm_weights", "moe_weights")
        if self.resource == "kv_stream":
            if self.fixed is None:
                raise ValueError("fixed: decode attention's KV read gives the kernel's fixed cost its shares are read "
                                 "net of")
        elif self.resource == "moe_weights" and (self.kernel is None) != (self.fixed is None):
            raise ValueError("fixed: a kernel's weight-stream entry gives its fixed cost, the median's does not (its "
                             "fixed cost is the time model's count of kernels)")
        if self.fixed_by_hidden and (self.resource != "moe_weights" or self.fixed is None):
            raise ValueError("fixed_by_hidden: only a fused-MoE kernel's weight stream with its own fixed cost scales "
                             "that cost by the hidden size")
        if any(a[0] >= b[0] for a, b in itertools.pairwise(self.fixed_by_hidden)):
            raise ValueError("fixed_by_hidden: the hidden sizes must rise")
        if self.resource not in ("moe_weights", "kv_stream") and self.fixed is not None:
            raise ValueError("fixed: only a fused-MoE kernel's weight stream and decode attention's KV read give their "
                             "own fixed cost")
        if (self.resource == "kv_stream") != bool(self.by_context):
            raise ValueError("by_context: give it for kv_stream (decode attention's share by the tokens each sequence "
                             "attends), and only there")
        contexts = [t for t, _ in self.by_context]
        if contexts != sorted(set(contexts)):
            raise ValueError("by_context: tokens must rise")
        if self.by_tokens:
            if self.resource not in WEIGHT_STREAMS:
                raise ValueError("by_tokens: only a GEMM's or a fused MoE layer's weight stream is given by batch")
            tokens = [t for t, _ in self.by_tokens]
            if tokens != sorted(set(tokens)):
                raise ValueError("by_tokens: tokens must rise")
        return self

    @property
    def fraction(self) -> float:
        """Achieved over peak; both on one basis (Bandwidth.ratio refuses two)."""
        return self.achieved.bandwidth.ratio(self.peak.bandwidth)

    @property
    def fraction_range(self) -> tuple[float, float]:
        per = BANDWIDTH_UNITS[self.achieved.unit]
        peak = self.peak.bandwidth.bytes_per_s
        return self.achieved_range[0] * per / peak, self.achieved_range[1] * per / peak


class AttentionGridData(_Strict):
    """A fused attention kernel's share of the dense BF16 peak in prefill by the work it is given: `shares[i][j]` with
    `heads[i]` query heads times prompts on one GPU, each prompt attending over a causal length of `lengths[j]`."""

    heads: tuple[PositiveInt, ...]
    """Rising."""
    lengths: tuple[PositiveInt, ...]
    """Rising."""
    shares: tuple[tuple[Annotated[float, Field(gt=0, le=1)], ...], ...]
    """One row per `heads`, one share per `lengths`."""

    @model_validator(mode="after")
    def _consistent(self) -> AttentionGridData:
        for name, axis in (("heads", self.heads), ("lengths", self.lengths)):
            if not axis or list(axis) != sorted(set(axis)):
                raise ValueError(f"{name} must rise")
        if len(self.shares) != len(self.heads) or any(len(row) != len(self.lengths) for row in self.shares):
            raise ValueError(f"shares: give {len(self.heads)} rows (one per heads) of {len(self.lengths)} shares "
                             "(one per length)")
        for i, j in itertools.product(range(len(self.heads)), range(len(self.lengths))):
            f = self.shares[i][j]
            if i and f / self.shares[i - 1][j] > self.heads[i] / self.heads[i - 1]:
                raise ValueError(f"shares: from {self.heads[i - 1]} to {self.heads[i]} heads at length "
                                 f"{self.lengths[j]} the share grows faster than the heads, so more heads would take "
                                 "less time")
            if j and f / self.shares[i][j - 1] > (self.lengths[j] / self.lengths[j - 1]) ** 2:
                raise ValueError(f"shares: from length {self.lengths[j - 1]} to {self.lengths[j]} at {self.heads[i]} "
                                 "heads the share grows faster than the work (the length squared), so a longer prompt "
                                 "would take less time")
        return self


class ComputeEfficiency(_Strict):
    """A throughput achieved in published runs, as a fraction of the dense peak of the same format."""

    name: str
    resource: Literal["gemm_compute", "attention_compute", "moe_compute", "moe_compute_whole"]
    """Matrix products at large batch (`gemm_compute`), a fused attention kernel (`attention_compute`), or a fused
    MoE layer's grouped expert GEMMs at large batch: its experts sliced by tensor parallelism (`moe_compute`), or
    whole on each GPU, under expert parallelism or on one GPU (`moe_compute_whole`)."""
    accelerator: str
    tensor_format: TensorFormat
    achieved: Flops
    achieved_range: tuple[PositiveFloat, PositiveFloat]
    """Low and high of the figures the sources show, in `achieved`'s unit."""
    peak: Flops
    """The datasheet's dense figure in the same format."""
    by_rows: tuple[tuple[PositiveInt, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `moe_compute` and `moe_compute_whole`: the ramp to `achieved` as each expert the step touches sees more
    rows (a grouped GEMM fills its tiles with them): (rows, fraction of `achieved`), rows rising, the fraction never
    falling, never growing faster than the rows (more rows never take less time) and the last 1; held at its first
    fraction below the first point (where the weight stream binds)."""
    by_columns: tuple[tuple[PositiveInt, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `moe_compute` and `moe_compute_whole`: the large-batch share of `peak` by the columns of each expert a GPU
    holds (its FFN width over the tensor parallelism that slices it): (columns, share), columns rising. `achieved` is
    the share at `columns`, the entry's own shape; another shape takes `achieved` scaled by the curve's ratio between
    its columns and those (a wide expert fills the kernels' tiles better than a thin slice)."""
    by_gflop: tuple[tuple[PositiveFloat, Annotated[float, Field(gt=0, le=1)]], ...] = ()
    """For `gemm_compute`: the ramp to `achieved` of a compute-bound product by the GFLOPs of one call (a thin slice
    or a few hundred rows fills the GPU's units for less of its time): (GFLOP, fraction of `achieved`), rising, the
    fraction never falling, never growing faster than the FLOPs and the last 1; held at its first fraction below."""
    columns: PositiveInt | None = None
    """The columns of each expert one GPU held in the shape `achieved` was read on (with `by_columns`)."""
    kernel: Literal[MoeKernel, GemmKernel] | None = None
    """For `moe_compute` and `moe_compute_whole`: the one kernel this entry measures, which an engine running it reads
    (`MemoryPolicy.moe_kernel`, a row's `engine_limits.moe_kernel`) in place of the engines' median (the entry
    without one); its own `by_rows` and `by_columns` with it. For `gemm_compute`: the engine's own GEMM ops
    (`GemmKernel`, `MemoryPolicy.gemm_kernel`); without its own `by_gflop` it keeps the median's ramp."""
    by_heads_length: AttentionGridData | None = None
    """For `attention_compute`: its share by the heads and prompt length it is given; `achieved` is the share at the
    most heads and the longest length (the grid's last cell)."""
    method: Annotated[str, Field(min_length=5)]
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _consistent(self) -> ComputeEfficiency:
        low, high = self.achieved_range
        if self.by_heads_length is not None:
            if self.resource != "attention_compute":
                raise ValueError("by_heads_length: only a fused attention kernel's share is given by heads and length")
            last = self.by_heads_length.shares[-1][-1]
            if abs(last - self.fraction) > 0.005:
                raise ValueError(f"by_heads_length: its last share, {last}, is not achieved over peak "
                                 f"({self.fraction:.3f})")
        if self.by_rows:
            if self.resource not in ("moe_compute", "moe_compute_whole"):
                raise ValueError("by_rows: only a fused MoE layer's expert GEMMs ramp with the rows each expert sees")
            rows = [r for r, _ in self.by_rows]
            fractions = [f for _, f in self.by_rows]
            if rows != sorted(set(rows)):
                raise ValueError("by_rows: rows must rise")
            if fractions != sorted(fractions):
                raise ValueError("by_rows: the fraction must not fall as the rows grow")
            if fractions[-1] != 1:
                raise ValueError("by_rows: the ramp ends at the large-batch share (a last fraction of 1)")
            for (r0, f0), (r1, f1) in itertools.pairwise(self.by_rows):
                if f1 / f0 > r1 / r0:
                    raise ValueError(f"by_rows: from {r0} to {r1} rows the fraction grows faster than the rows, so "
                                     "more rows would take less time")
        if self.by_gflop:
            if self.resource != "gemm_compute":
                raise ValueError("by_gflop: only a dense GEMM's compute share ramps with the FLOPs of one call")
            gf = [g for g, _ in self.by_gflop]
            fr = [f for _, f in self.by_gflop]
            if gf != sorted(set(gf)):
                raise ValueError("by_gflop: the GFLOPs must rise")
            if fr != sorted(fr) or fr[-1] != 1:
                raise ValueError("by_gflop: the fraction must not fall as the FLOPs grow, and ends at 1")
            for (g0, f0), (g1, f1) in itertools.pairwise(self.by_gflop):
                if f1 / f0 > g1 / g0:
                    raise ValueError(f"by_gflop: from {g0} to {g1} GFLOP the fraction grows faster than the FLOPs, "
                                     "so more work would take less time")
        if self.kernel is not None:
            _kernel_fits(self.resource, self.kernel, "gemm_compute", "moe_compute", "moe_compute_whole")
            if self.resource != "gemm_compute" and (not self.by_rows or not self.by_columns):
                raise ValueError("kernel: a kernel's entry gives its own by_rows and by_columns (the median's curves "
                                 "are other kernels')")
        if self.by_columns or self.columns is not None:
            if self.resource not in ("moe_compute", "moe_compute_whole"):
                raise ValueError("by_columns: only a fused MoE layer's expert GEMMs are read by the columns per GPU")
            cols = [c for c, _ in self.by_columns]
            if not cols or self.columns is None:
                raise ValueError("by_columns and columns: give both, the curve and the columns of achieved's shape")
            if cols != sorted(set(cols)):
                raise ValueError("by_columns: columns must rise")
            if not cols[0] <= self.columns <= cols[-1]:
                raise ValueError(f"columns: {self.columns} lies outside by_columns ({cols[0]} to {cols[-1]})")
        if low > high:
            raise ValueError("achieved_range must be [low, high]")
        if not low <= self.achieved.value <= high:
            raise ValueError("achieved: the value lies outside achieved_range")
        if self.achieved.sparsity != "dense" or self.peak.sparsity != "dense":
            raise ValueError("achieved and peak: compare dense figures")
        if self.fraction > 1:
            raise ValueError(f"achieved exceeds peak ({self.fraction:.3f}): check units")
        return self

    @property
    def fraction(self) -> float:
        return self.achieved.per_s / self.peak.per_s

    @property
    def fraction_range(self) -> tuple[float, float]:
        per = FLOPS_UNITS[self.achieved.unit]
        return self.achieved_range[0] * per / self.peak.per_s, self.achieved_range[1] * per / self.peak.per_s


EfficiencyEntry = Annotated[Efficiency | ComputeEfficiency, Field(discriminator="resource")]

CHIP_EFFICIENCIES = ("hbm", "kv_stream", "gemm_weights", "gemm_compute", "attention_compute", "moe_weights",
                     "moe_compute", "moe_compute_whole")
"""The resources the time model reads per chip, one figure per chip, resource and format (a chip's `time_sources`;
the checks refuse a second)."""
