"""Operations: each GEMM, attention (prefill and decode), MoE expert work and routing, each collective and each
pipeline send, with its FLOPs, its bytes, its own roofline time and its launch cost.

One `Op` is one operation of one layer (repeated `count` times over a stage's layers of the same kind):

    seconds = max(compute_s, memory_s - around_s) + around_s + comm_s + launch_s

- `compute_s`: FLOPs ÷ (the chip's dense peak in the format the matrix units run × the share that kind of kernel
  reaches: a large GEMM's, fused attention's, or a fused MoE layer's grouped GEMMs' at the rows each of its experts
  sees, `specs.ramp`);
- `memory_s`: bytes ÷ HBM bandwidth at the share that kind of traffic reaches: a GEMM's weight stream at its
  batch (`GemmEfficiency.weight_fraction`, measured by tokens, and never above its share at a smaller batch:
  `stream_share`, so a GEMM's time never falls as its batch grows), decode attention's KV-cache read at its share
  by the tokens each sequence attends (`kv_bytes_per_s`, measured per chip), a streaming kernel's for activations
  and a prefill's cache;
- `comm_s`: a collective's or a send's time (`snippets.engine.collectives`);
- `launch_s`: each kernel's fixed cost, inside a CUDA graph or out of one.

Outside a CUDA graph (a step of more tokens than the engine captures) the host also issues each kernel and collective
call (`issue_s`, at the engine's cost per call: `Rates.host_s`). That is not part of the op's time: the host issues
ahead while the GPU works through what was issued before, so the step (`snippets.engine.step.run`) waits only for
what the issue of all its ops takes beyond their work.

The elementwise kernels around a GEMM (the norm before it, FP8 activation quantization, the activation between
the MLP's two GEMMs, a fused MoE layer's sum over each token's experts) are counted with it: their bytes (the
activations they read and write) and their launches. They are kernels of their own, run before or after the GEMM,
so their traffic (`around_s`, part of `memory_s`) adds to its time: where the GEMM is memory-bound (decode) the sum
is its memory time as before; where its arithmetic binds (a prefill) their traffic no longer hides under it.
A vendor's kernel fraction (`TimeModelSpec.kernel_fraction`, 1 unless fitted) scales every kernel efficiency of
its chips, and divides a kernel's fixed cost inside a graph (its launch, ramp and tail: the same kernels running
at that share of the speed). Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.engine.collectives import Collective
from snippets.engine.specs import AttentionGrid, ChipSpec, GemmEfficiency, PrecisionSpec, TimeModelSpec, ramp

ACTIVATION_BYTES = 2
"""Activations are kept and exchanged in BF16."""
KINDS = ("gemm", "attention", "moe", "allreduce", "alltoall", "send", "launch")
"""The kinds a step's time is broken down by; `launch` holds every kernel's fixed cost and the host's time."""


@dataclass(frozen=True, slots=True)
class Op:
    kind: str
    """gemm, attention, moe, allreduce, alltoall or send."""
    name: str
    flops: float
    """Per instance, on one GPU."""
    bytes: float
    """Read and written in HBM per instance, on one GPU (for a collective or send: bytes it sends)."""
    compute_s: float
    memory_s: float
    comm_s: float
    launch_s: float
    count: int = 1
    """Instances in the step (the stage's layers of this kind)."""
    algorithm: str = ""
    """For a collective: the algorithm the engine picks."""
    comm_latency_s: float = 0.0
    """For a collective: its fixed part."""
    weights: float = 0.0
    """Of `bytes`, the weights (or embedding rows) read."""
    around_s: float = 0.0
    """Of `memory_s`, the time of the elementwise kernels around the op (the norm before it, activation
    quantization, the activation between two GEMMs, the sum over a token's experts): kernels of their own, run before
    or after it, so their traffic adds to its time rather than hiding under its arithmetic."""
    issue_s: float = 0.0
    """Per instance, outside a CUDA graph: the host's time to issue its kernels (`issue`). Not part of `seconds`: the
    host issues ahead while the GPU works, so a step adds only what its ops' issue takes beyond its GPU's work
    (`snippets.engine.step.run`)."""

    @property
    def work_s(self) -> float:
        """One instance without its launches: the larger of its arithmetic and its own traffic, then the kernels
        around it, then its communication."""
        return max(self.compute_s, self.memory_s - self.around_s) + self.around_s + self.comm_s

    @property
    def seconds(self) -> float:
        """One instance: its work (`work_s`) and its launches."""
        return self.work_s + self.launch_s

    @property
    def total_s(self) -> float:
        return self.seconds * self.count

    @property
    def bound(self) -> str:
        parts = {"compute": self.compute_s, "memory": self.memory_s, "communication": self.comm_s}
        return max(parts, key=lambda k: parts[k])


@dataclass(frozen=True, slots=True)
class Rates:
    """What one GPU of a deployment reaches, resolved once from the chip, the precision and the time model."""

    peak_flops: float
    """Dense peak in the format the matrix units compute in."""
    bf16_flops: float
    gemm: GemmEfficiency
    moe_stream: GemmEfficiency
    """The curve a fused MoE layer's experts stream their weights at (`ChipEfficiency.moe_stream_for`)."""
    hbm_bytes_per_s: float
    stream_bytes_per_s: float
    """HBM at a streaming kernel's share."""
    attention_flops_per_s: float
    """Fused attention's rate in prefill at large work, and in decode."""
    attention_grid: AttentionGrid | None
    """Its measured share of `bf16_flops` in prefill by heads and prompt length (`ChipEfficiency.attention_grid`)."""
    moe_compute: float
    """A fused MoE layer's grouped expert GEMMs' share of `peak_flops` at large batch, experts sliced by TP."""
    moe_compute_whole: float
    """The same with whole experts on each GPU (EP, or one GPU)."""
    moe_ramp: tuple[tuple[float, float], ...]
    """How `moe_compute` ramps with the rows each touched expert sees (`ChipEfficiency.moe_ramp_for`, `specs.ramp`)."""
    moe_ramp_whole: tuple[tuple[float, float], ...]
    """How `moe_compute_whole` ramps."""
    moe_columns: tuple[float, tuple[tuple[float, float], ...]]
    """The columns per GPU `moe_compute` was read at, and its share by columns (`ChipEfficiency.moe_columns_for`,
    `specs.columns_factor`)."""
    moe_columns_whole: tuple[float, tuple[tuple[float, float], ...]]
    """The same for `moe_compute_whole`."""
    weight_bytes: float
    """Per parameter of a quantized linear layer."""
    kernel_fraction: float
    kernel_s: float
    host_s: float
    graph_max_tokens: int
    moe_fixed_s: float | None = None
    """The fused MoE layer's own fixed cost where its kernel's is measured (`ChipEfficiency.moe_fixed_for`), in
    place of its kernels' count at `kernel_s`."""
    kv_stream: tuple[tuple[float, float], ...] = ()
    """Decode attention's share of `hbm_bytes_per_s` by the cached tokens each sequence attends, where measured
    (`ChipEfficiency.kv_stream`); none: `stream_bytes_per_s` (`kv_bytes_per_s`)."""
    kv_fixed_s: float | None = None
    """Decode attention's own fixed cost a layer where measured with `kv_stream` (`ChipEfficiency.kv_fixed`), in
    place of its kernels' count at `kernel_s`."""


def rates(chip: ChipSpec, precision: PrecisionSpec, tm: TimeModelSpec, compute_format: str,
          moe_kernel: str = "", gemm_kernel: str = "", kv_format: str = "", engine: str = "", *,
          hidden: float) -> Rates:
    """`chip`'s rates in `precision` under `tm`; the experts as `moe_kernel` runs them where the chip has its own
    figures (its arithmetic, `ChipEfficiency.moe_for`; its weight stream and fixed cost, `moe_stream_for` and
    `moe_fixed_for`), else as the engines' median; the dense GEMMs as `gemm_kernel` (an engine's own GEMM ops) runs
    them where measured (`ChipEfficiency.gemm_for`), else the median; decode attention over a `kv_format` cache as
    `engine`'s kernel reads it where measured (`ChipEfficiency.kv_for`), else at the chip's 16-bit curve. `hidden`,
    the model's hidden size, sets the fused MoE layer's fixed cost where the kernel's is measured by it (always given:
    0 reads the entry's plain figure, `ChipEfficiency.moe_fixed_for`)."""
    eff = tm.chip(chip.id)
    kv_curve, kv_fixed = eff.kv_for(kv_format, engine)
    fmt, k = precision.tensor_format, moe_kernel
    kf = tm.kernel_fraction(chip.vendor)
    gemm = eff.gemm_for(precision.tensor_format, gemm_kernel)
    bf16 = chip.dense_flops.get("bf16", chip.dense_flops[compute_format])
    return Rates(peak_flops=chip.dense_flops[compute_format], bf16_flops=bf16, gemm=gemm,
                 moe_stream=eff.moe_stream_for(precision.tensor_format, moe_kernel),
                 hbm_bytes_per_s=chip.hbm_bytes_per_s, stream_bytes_per_s=chip.hbm_bytes_per_s * eff.hbm * kf,
                 attention_flops_per_s=bf16 * eff.attention * kf, attention_grid=eff.attention_grid,
                 moe_compute=eff.moe_for(fmt, kernel=k), moe_compute_whole=eff.moe_for(fmt, whole=True, kernel=k),
                 moe_ramp=eff.moe_ramp_for(fmt, kernel=k), moe_ramp_whole=eff.moe_ramp_for(fmt, whole=True, kernel=k),
                 moe_columns=eff.moe_columns_for(fmt, kernel=k),
                 moe_columns_whole=eff.moe_columns_for(fmt, whole=True, kernel=k),
                 weight_bytes=precision.bytes_per_param,
                 kernel_fraction=kf, kernel_s=tm.kernel_s / kf, host_s=tm.host_dispatch_s,
                 graph_max_tokens=tm.graph_max_tokens, moe_fixed_s=eff.moe_fixed_for(fmt, k, hidden),
                 kv_stream=kv_curve, kv_fixed_s=kv_fixed)


def launch(r: Rates, kernels: int, fixed_s: float | None = None) -> float:
    """The fixed cost of `kernels` kernels on the GPU: each kernel's cost inside a CUDA graph (or `fixed_s` for them
    all, where measured), which every kernel pays in a graph or out of one."""
    return kernels * r.kernel_s if fixed_s is None else fixed_s


def issue(r: Rates, kernels: int, step_tokens: float) -> float:
    """The host's time to issue `kernels` kernels in a step of `step_tokens` tokens: none where the step replays a
    CUDA graph, else each kernel's issue at the engine's rate (`Rates.host_s`)."""
    return 0.0 if step_tokens <= r.graph_max_tokens else kernels * r.host_s


def kv_bytes_per_s(r: Rates, context: float) -> float:
    """The rate decode attention reads the KV cache at when each sequence attends `context` cached tokens: the
    chip's measured share at that context (`specs.ramp` over `r.kv_stream`), scaled by the vendor's kernel fraction,
    else a streaming kernel's."""
    if not r.kv_stream:
        return r.stream_bytes_per_s
    return r.hbm_bytes_per_s * ramp(r.kv_stream, context) * r.kernel_fraction


def weight_share(r: Rates, rows: float) -> float:
    """The share of the HBM datasheet bandwidth a GEMM's weight stream reaches when each weight matrix sees `rows`
    rows (at least one): the measured curve, never above its share at fewer rows (`GemmEfficiency.stream_share`),
    scaled by the vendor's kernel fraction."""
    return r.gemm.stream_share(max(1.0, rows)) * r.kernel_fraction


def gemm(name: str, tokens: float, n: float, k: float, r: Rates, *, step_tokens: float, kind: str = "gemm",
         kernels: int = 1, count: int = 1, weight_bytes: float | None = None, extra_bytes: float = 0.0,
         batch_per_matrix: float | None = None, flops: float | None = None, share: float | None = None,
         compute_share: float | None = None, fixed_s: float | None = None) -> Op:
    """A matrix product of `tokens` rows through a k × n weight on one GPU.

    `weight_bytes` overrides n·k at the precision's bytes (a 16-bit router; the experts a step touches);
    `batch_per_matrix` is the rows each weight matrix sees (a grouped expert GEMM's tokens per expert), which
    sets the weight stream's efficiency; `extra_bytes` the activations the kernels around it read and write.
    `share`, where the caller has it, is `weight_share(r, rows)` for those rows (a step's GEMMs share it);
    `compute_share` the share of the dense peak its arithmetic reaches where it is not a dense GEMM's
    (`r.gemm.compute`): a fused MoE layer's grouped expert GEMMs (`r.moe_compute`); `fixed_s` its kernels' fixed
    cost where measured as one figure (a fused MoE layer's own, `r.moe_fixed_s`)."""
    w = n * k * r.weight_bytes if weight_bytes is None else weight_bytes
    f = 2 * tokens * n * k if flops is None else flops
    act = tokens * (n + k) * ACTIVATION_BYTES + extra_bytes
    wf = share if share is not None else weight_share(r, tokens if batch_per_matrix is None else batch_per_matrix)
    memory = w / (r.hbm_bytes_per_s * wf) + act / r.stream_bytes_per_s
    around = extra_bytes / r.stream_bytes_per_s
    cs = r.gemm.compute_at(f) if compute_share is None else compute_share
    compute = f / (r.peak_flops * cs * r.kernel_fraction)
    return Op(kind, name, f, w + act, compute, memory, 0.0, launch(r, kernels, fixed_s), count, weights=w,
              around_s=around, issue_s=issue(r, kernels, step_tokens))


def attention(name: str, pairs: float, flops_per_pair: float, kv_bytes: float, tokens: float, q_width: float,
              r: Rates, *, step_tokens: float, kernels: int = 2, count: int = 1,
              flops_per_s: float | None = None, context: float | None = None) -> Op:
    """Attention of one layer on one GPU: `pairs` (query, cached token) pairs at `flops_per_pair`, reading
    `kv_bytes` of cache (decode: every cached token of every sequence; prefill: the chunk's own keys and values
    and those cached before it), and the queries and outputs (`tokens` × `q_width` each), its arithmetic at
    `flops_per_s` (a prefill's share by its size: `prefill_attention_flops_per_s`), else `r.attention_flops_per_s`.
    Two kernels: rotary embedding with the cache write, and the attention kernel. `context`, in decode, is the
    cached tokens each sequence attends, which sets the share its cache read reaches (`kv_bytes_per_s`) and, where
    that share is measured, the kernels' fixed cost (`r.kv_fixed_s`, read with it); None (a prefill): the cache at a
    streaming kernel's share and the kernels' count.
    """
    f = pairs * flops_per_pair
    act = 2 * tokens * q_width * ACTIVATION_BYTES
    kv_rate = r.stream_bytes_per_s if context is None else kv_bytes_per_s(r, context)
    memory = kv_bytes / kv_rate + act / r.stream_bytes_per_s
    compute = f / (r.attention_flops_per_s if flops_per_s is None else flops_per_s)
    fixed = r.kv_fixed_s if context is not None and r.kv_stream else None
    return Op("attention", name, f, kv_bytes + act, compute, memory, 0.0, launch(r, kernels, fixed), count,
              issue_s=issue(r, kernels, step_tokens))


def prefill_attention_flops_per_s(r: Rates, heads: float, length: float) -> float:
    """Fused attention's rate in a prefill of `heads` query heads times prompts on one GPU, each prompt attending
    over a causal `length` (twice its (query, key) pairs per query: a whole prompt's own length): the measured
    share at that size (`AttentionGrid.share`) where the chip has one, else its large-work rate."""
    g = r.attention_grid
    if g is None:
        return r.attention_flops_per_s
    return r.bf16_flops * g.share(heads, length) * r.kernel_fraction


def collective(kind: str, name: str, c: Collective, *, count: int = 1, issue_s: float = 0.0) -> Op:
    """A collective (or send) as an op: its time is communication; its launch is inside its measured latency, and
    outside a CUDA graph the host issues its call (`issue_s`, one kernel's `issue`)."""
    return Op(kind, name, 0.0, c.bytes_moved, 0.0, 0.0, c.seconds, 0.0, count, c.algorithm, c.latency_s,
              issue_s=issue_s)


def host(seconds: float) -> Op:
    """The host's time per engine step that the GPU waits for (scheduling, sampling, input preparation)."""
    return Op("launch", "host step", 0.0, 0.0, 0.0, 0.0, 0.0, seconds)
