"""The roofline page's choices, its formatting, and its roofline arithmetic over the engine's steps."""

from __future__ import annotations

from snippets.engine import Deployment, Layout
from snippets.engine.memory import kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.specs import ChipSpec
from snippets.engine.step import Step, step
from snippets.pages.scenario import Reference
from snippets.render import fmt
from snippets.render.fmt import Figure

MODEL = "llama-3.1-70b"
PRECISION = "fp8"
SECOND = "h200-sxm"
"""The accelerator the curve sets beside the scenario's: the same tensor cores as the H100 SXM, more HBM."""
OLDER = "a100-80gb-sxm"
"""An accelerator without FP8 tensor cores: FP8 there is weight-only (a quiz problem)."""
CURVE_TP = 2
"""The curve's layout on both accelerators: the one the scenario's policy picks on the H100, so the two
lines differ only by the chip."""
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""Rows of the intensity table; the KV cache's largest batch is added."""
SEARCH_LIMIT = 1 << 20
"""Largest batch `critical_batch` looks at: far beyond any KV cache, so "none" means "never"."""


# --------------------------------------------------------------------------- formatting

def intensity(x: float, basis: str = "") -> Figure:
    return fmt.quantity(x, "FLOP/byte", 1 if x < 10 else 0, basis=basis)


def tflops(x: float, basis: str = "dense") -> Figure:
    return fmt.quantity(x / 1e12, "TFLOP/s", 0, show_unit=True, basis=basis)


def gflop(x: float) -> Figure:
    """FLOPs in GFLOP, or in TFLOP from a thousand GFLOP up."""
    if x >= 1e12:
        return fmt.quantity(x / 1e12, "TFLOP", 1, show_unit=True)
    return fmt.quantity(x / 1e9, "GFLOP", 1, show_unit=True)


def gbytes(x: float) -> Figure:
    return fmt.nbytes(x, "GB", 2)


# --------------------------------------------------------------------------- roofline arithmetic (page helpers)

def ridge(chip: ChipSpec, compute_format: str) -> float:
    """Datasheet ridge point: dense FLOP/s in the format ÷ HBM bytes/s."""
    return chip.dense_flops[compute_format] / chip.hbm_bytes_per_s


def fractions(d: Deployment) -> tuple[float, float]:
    """The shares of its peaks the time model's matrix products reach on this chip and format: a large GEMM's
    throughput, and a one-token GEMM's weight stream (both measured, `data/efficiencies.yaml`)."""
    g = d.setting.time_model.chip(d.setting.chip.id).gemm_for(d.setting.precision.tensor_format)
    return g.compute, g.weight_fraction(1)


def achieved_ridge(d: Deployment) -> float:
    """The ridge the time model's matrix products work with: (dense FLOP/s × a large GEMM's share) ÷ (HBM × a
    one-token GEMM's weight-stream share)."""
    chip = d.setting.chip
    cf, wf = fractions(d)
    return chip.dense_flops[d.compute_format] * cf / (chip.hbm_bytes_per_s * wf)


def decode(d: Deployment, batch: int, context: float) -> Step:
    return step(d, "decode", batch, context)


def compute_bound(d: Deployment, batch: int, context: float) -> bool:
    p = decode(d, batch, context)
    return p.compute_s >= p.memory_s


def critical_batch(d: Deployment, context: float, limit: int = SEARCH_LIMIT) -> int | None:
    """The smallest decode batch whose step's arithmetic takes at least as long as its memory traffic, by the
    engine's `step` at `context` cached tokens per sequence; None if none up to `limit` does. Not in the
    engine: a page helper (bisection; compute ÷ memory grows monotonically with the batch)."""
    if compute_bound(d, 1, context):
        return 1
    if not compute_bound(d, limit, context):
        return None
    lo, hi = 1, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(d, mid, context) else (mid, hi)
    return hi


def intensity_limit(d: Deployment, context: float, batch: int = 1 << 14) -> float:
    """FLOPs per byte a decode step tends to as the batch grows at `context`: the extra FLOPs of `batch` more
    sequences over their extra bytes (the weights are read once whatever the batch). Not in the engine."""
    a, b = decode(d, batch, context), decode(d, 2 * batch, context)
    return (b.flops - a.flops) / (b.bytes_read - a.bytes_read)


def weights_per_gpu(d: Deployment) -> float:
    s = d.setting
    return stage_weights(s.model.architecture, s.precision, d.layout, s.kept_16bit)[0].total


def kv_per_gpu(d: Deployment, tokens: float) -> float:
    s = d.setting
    arch = s.model.architecture
    return kv_bytes_per_token_per_gpu(arch, arch.layers, d.layout.tp, s.kv_precision.bytes_per_param) * tokens


def node_of(r: Reference, chip_id: str) -> str:
    node = r.eng.node_of(chip_id)
    if node is None:
        raise ValueError(f"no node in data/ is built from {chip_id}")
    return node.id


def decode_context(r: Reference) -> float:
    """The context `predict` decodes at: the prompt and half the output (mid-way through the answer)."""
    return r.scenario.input_tokens + r.scenario.output_tokens / 2


def deployments(r: Reference) -> tuple[Deployment, Deployment]:
    """The worked deployment (the scenario's policy on its node) and the same layout on the second accelerator."""
    d = r.deployment(MODEL, PRECISION)
    if d.layout.tp != CURVE_TP or d.layout.pp != 1:
        raise ValueError(f"the page compares both chips on TP{CURVE_TP}; the policy now picks {d.layout.label}")
    return d, r.deployment(MODEL, PRECISION, node=node_of(r, SECOND), layout=Layout(CURVE_TP))
