"""Derive the fused MoE layer's weight-stream share (data/efficiencies.yaml, resource moe_weights) from
AIConfigurator's measured fused-MoE tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_moe_weights.py /path/to/aiconfigurator

For each chip, format and engine (the newest table of SGLang, TensorRT-LLM and vLLM), every gated MoE shape with
balanced routing, experts sliced by tensor parallelism of 1, 2, 4 or 8 and no expert parallelism: each point's
share of the HBM datasheet bandwidth is the expert weights the step touches over the latency left once the engine's
own charges are taken out (the experts op's fixed cost, 2 GEMMs + 4 routing kernels + 1 activation quantization
below 16 bits, at the time model's cost per kernel, and its activations at the chip's streaming share, all read
from data/ through the engine), points whose weights are at least four times the L2 cache. Rows per touched
expert r = tokens x top-k / experts touched (balanced routing: token i takes experts (i + j ceil(E/k)) mod E), at
r = 1, 2, 4 and 8, where the layer is bound by its weight stream (beyond, its
arithmetic begins to show, which the time model prices apart). Each engine's kernel is the one its table measured
most (the gated kernels only). Each engine's median per r, then the median of the engines; the range at r = 1
spans the engines. Prints each chip's and format's entry, or why it is left out: where a kernel's share exceeds 1,
the time model's fixed charges overstate that kernel's own fixed cost, and no share can be read on its terms."""
from __future__ import annotations

import math
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO

import pandas as pd

BASE = "aic-core/src/aiconfigurator_core/systems/data"
COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
"""The tables' commit, as data/efficiencies.yaml cites it."""
TABLE_DIRS = {"a100-80gb-sxm": "a100_sxm", "h100-sxm": "h100_sxm", "h200-sxm": "h200_sxm", "b200": "b200_sxm",
              "gb200": "gb200", "b300": "b300_sxm", "gb300": "gb300", "rtx-pro-6000-server": "rtx_pro_6000_server"}
"""Each chip's directory in the tables; every derive script reads its chips' tables through it."""
L2_BYTES = {"h100-sxm": 50e6, "h200-sxm": 50e6, "b200": 126e6, "gb200": 126e6, "b300": 126e6, "gb300": 126e6,
            "rtx-pro-6000-server": 128e6}
"""Each chip's L2 cache in bytes (NVIDIA's architecture briefs: 50 MB on Hopper, 126 MB on Blackwell, taken for
Blackwell Ultra too; the RTX PRO 6000's GB202 has 128 MB, as torch reports it): the figure only drops points whose
weights fit a few L2s."""
CHIPS = {k: (TABLE_DIRS[k], L2_BYTES[k]) for k in
         ("h100-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300", "rtx-pro-6000-server")}
"""The chips this script derives entries for: each one's directory and L2 cache."""
TABLES = ("sglang/0.5.14", "trtllm/1.3.0rc20", "vllm/0.24.0")
FORMATS = {"bf16": ("bfloat16", "bf16"), "fp8": ("fp8_block", "fp8-block"), "fp4": ("nvfp4", "nvfp4")}
"""The engine's tensor format: the tables' moe_dtype, and the precision whose bytes per parameter it stores."""
BUCKETS = (1, 2, 4, 8)


def touched(n: int, e: int, k: int) -> int:
    s = math.ceil(e / k)
    return len({(i + j * s) % e for j in range(k) for i in range(min(n, e))})


def table(repo: str, chip: str, t: str, op: str = "moe", kind: str | None = None) -> pd.DataFrame | None:
    """One engine version's table of `op` kernels (moe, gemm, attention) on `chip`, the file `kind`_perf.parquet
    (`op` where not given; attention's: context_attention), read from the checkout at COMMIT; None where the tables
    hold none. scripts/derive_moe_ramp.py, scripts/derive_gemm.py and scripts/derive_attention.py read theirs
    through it."""
    path = f"{COMMIT}:{BASE}/{chip}/{op}/{t}/{kind or op}_perf.parquet"
    r = subprocess.run(["git", "-C", repo, "show", path], capture_output=True, check=False)
    return pd.read_parquet(BytesIO(r.stdout)) if r.returncode == 0 else None


def gated_balanced(df: pd.DataFrame, dtype: str, t: str) -> pd.DataFrame:
    """The rows of one engine version's table (`t`) the derivations read: `dtype`, balanced routing, no expert
    parallelism, gated kernels; SGLang's and vLLM's DeepSeek-V3 shape left out (their collectors route it by grouped
    top-k). scripts/derive_moe_ramp.py and scripts/derive_moe_compute.py read theirs through it."""
    df = df[(df.moe_dtype == dtype) & (df.distribution == "balanced") & (df.moe_ep_size == 1)
            & ~df.kernel_source.str.contains("nongated|min_latency")]
    if t.startswith(("sglang", "vllm")):
        df = df[~((df.hidden_size == 7168) & (df.num_experts == 256))]
    return df


def most_measured(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the kernel the table measured most (each engine's own kernel, as every derivation reads it)."""
    return df[df.kernel_source == df.kernel_source.value_counts().idxmax()]


@dataclass(frozen=True)
class Stream:
    """What a weight-stream share is read against: bytes per parameter, the chip's HBM datasheet and streaming
    rates (bytes/s), and its L2 cache (bytes)."""

    bpp: float
    peak: float
    stream: float
    l2: float


def _kernel_rows(repo: str, chip: str, t: str, dtype: str, kernel: str | None, max_tp: int = 8) -> pd.DataFrame | None:
    """One engine version's (`t`'s) gated rows of `dtype` with balanced routing, experts sliced by TP of 1 to
    `max_tp`: its most measured kernel's, or `kernel`'s; None where it has none."""
    df = table(repo, chip, t)
    if df is None:
        return None
    df = gated_balanced(df, dtype, t)
    df = df[df.moe_tp_size <= max_tp]
    if df.empty:
        return None
    df = most_measured(df) if kernel is None else df[df.kernel_source == kernel]
    return None if df.empty else df


def engine_shares(repo: str, chip: str, t: str, dtype: str, s: Stream, fixed: float,
                  kernel: str | None = None, fixed_at: Callable[[int], float] | None = None,
                  ) -> tuple[str, dict[int, float]] | None:
    """One engine's kernel (its most measured, or `kernel`) and its weight-stream share by rows per touched expert,
    net of `fixed` seconds a layer (or `fixed_at` of the shape's hidden size) and of its activations (the module's
    note); None where its table has none."""
    from snippets.engine.ops import ACTIVATION_BYTES

    df = _kernel_rows(repo, chip, t, dtype, kernel)
    if df is None:
        return None
    shares: dict[int, list[float]] = {b: [] for b in BUCKETS}
    for (h, inter, e, k, tp), g in df.groupby(["hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size"]):
        for n, lat in zip(g.num_tokens, g.latency, strict=True):
            n = int(n)
            hit = touched(n, int(e), int(k))
            r = n * k / hit
            b = min(BUCKETS, key=lambda x: abs(math.log2(r / x)))
            if abs(math.log2(r / b)) > 0.2:
                continue
            w = hit * 3 * h * inter / tp * s.bpp
            if w < 4 * s.l2:
                continue
            act = n * k * (2 * h + 2 * inter) * ACTIVATION_BYTES  # as step._moe_ops charges them
            net = lat * 1e-3 - (fixed if fixed_at is None else fixed_at(int(h))) - act / s.stream
            if net > 0:
                shares[b].append(w / net / s.peak)
    return str(df.kernel_source.iloc[0]), {b: statistics.median(v) for b, v in shares.items() if len(v) >= 3}


def floor(repo: str, chip: str, t: str, dtype: str, s: Stream, kernel: str, max_tp: int = 8) -> tuple[float, int] | None:
    """`kernel`'s fixed cost a layer in table `t`: the median over its one-token points (experts sliced by TP of 1 to
    `max_tp`) whose touched weights fit half the L2 cache of the latency less those weights at the datasheet rate
    (seconds), and the points' count; None where it has fewer than three."""
    df = _kernel_rows(repo, chip, t, dtype, kernel, max_tp)
    if df is None:
        return None
    df = df[df.num_tokens == 1]
    net = [lat * 1e-3 - w / s.peak for lat, w in zip(
        df.latency, df.topk * 3 * df.hidden_size * df.inter_size / df.moe_tp_size * s.bpp, strict=True)
        if w <= s.l2 / 2]
    return (statistics.median(net), len(net)) if len(net) >= 3 else None


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog
    from snippets.engine.step import ROUTING_KERNELS

    repo = sys.argv[1]
    eng = engine_catalog(load())
    tm = eng.time_models["measured-fractions"]
    for chip_id, (chip, l2) in CHIPS.items():
        peak = eng.chips[chip_id].hbm_bytes_per_s
        stream = peak * tm.chip(chip_id).hbm
        for fmt, (dtype, precision) in FORMATS.items():
            bpp = eng.precisions[precision].bytes_per_param
            # the experts op's kernels as step._moe_ops charges them: two grouped GEMMs, the routing, and one
            # activation quantization where the matrix units run in 8 bits or fewer (step._quant_kernels)
            fixed = (2 + ROUTING_KERNELS + (fmt != "bf16")) * tm.kernel_s
            per_engine: dict[str, dict[int, float]] = {}
            for t in TABLES:
                found = engine_shares(repo, chip, t, dtype, Stream(bpp, peak, stream, l2), fixed)
                if found is not None:
                    per_engine[f"{t} {found[0]}"] = found[1]
            if not per_engine:
                continue
            if any(v > 1 for s in per_engine.values() for v in s.values()):
                print(f"# {chip_id}-moe-weights-{fmt}: left out, a kernel's points exceed the datasheet once the fixed "
                      "charges are taken out (its own fixed cost is below them)")
                continue
            med = {b: statistics.median([s[b] for s in per_engine.values() if b in s]) for b in BUCKETS
                   if any(b in s for s in per_engine.values())}
            ones = [s[1] for s in per_engine.values() if 1 in s]
            kernels = "; ".join(f"{name} {' '.join(f'{s.get(b, math.nan):.3f}' for b in BUCKETS)}"
                                for name, s in per_engine.items())
            print(f"{chip_id}-moe-weights-{fmt}:  # {kernels}")
            print(f"  achieved: {{value: {med[1] * peak / 1e12:.3f}, unit: TB/s, direction: shared}}")
            print(f"  achieved_range: [{min(ones) * peak / 1e12:.3f}, {max(ones) * peak / 1e12:.3f}]")
            print(f"  by_tokens: [{', '.join(f'[{b}, {v:.2f}]' for b, v in med.items())}]")


if __name__ == "__main__":
    main()
