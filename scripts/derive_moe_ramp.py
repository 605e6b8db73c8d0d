"""Derive the fused MoE layer's compute ramp (data/efficiencies.yaml, `by_rows` of the moe_compute and
moe_compute_whole entries) from AIConfigurator's measured fused-MoE tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_moe_ramp.py /path/to/aiconfigurator

A grouped expert GEMM whose experts each see few rows fills its tiles partly: below a few hundred rows per expert
the layer reaches a fraction of the share it reaches once the batch is large (the entries' `achieved`). For each
chip and format with a moe_compute entry (FP8 and BF16; FP4 on the Blackwell chips) and each engine's table (the newest of
SGLang, TensorRT-LLM and vLLM; each engine's most measured gated kernel), every gated shape with balanced routing
and no expert parallelism, its experts sliced eight ways (moe_compute) or whole on the GPU (moe_compute_whole):
each point's throughput (FLOPs 2 x tokens x top-k x 3 x hidden x expert FFN / tensor parallelism, over the latency)
over the same shape's median at 8,192 tokens or more. Rows per touched expert r = tokens x top-k / experts touched
(the collectors' balanced routing: token i takes experts (i + j ceil(E/k)) mod E), bucketed at 8, 16, ..., 512
(within 0.2 in log2). SGLang's and vLLM's collectors route DeepSeek's shape by grouped top-k, so that shape is read
from TensorRT-LLM's table only (as scripts/derive_moe_weights.py does). Each engine's median per bucket, then the
median of the engines, capped at 1, the last bucket 1 (the ramp ends at the large-batch share), each fraction
rounded and never growing faster than the rows. Below 8 rows the layer is bound by its weight stream (moe_weights),
and the ramp is held at its first point. Prints each entry's by_rows and the engines' curves."""
from __future__ import annotations

import math
import statistics
import sys

import pandas as pd
from derive_moe_weights import (  # the same tables, read the same way (run from scripts/)
    TABLE_DIRS,
    TABLES,
    gated_balanced,
    most_measured,
    table,
    touched,
)

CHIPS = {k: TABLE_DIRS[k] for k in ("h100-sxm", "h200-sxm", "b200", "b300", "gb200", "gb300", "rtx-pro-6000-server")}
"""The chips with an FP8 moe_compute entry, and each one's directory in the tables."""
FORMATS = {"fp8": "fp8_block", "fp4": "nvfp4", "bf16": "bfloat16"}
"""The engine's tensor format and the tables' moe_dtype."""
FORMAT_CHIPS = {"b200": ("fp8", "fp4", "bf16"), "gb200": ("fp8", "fp4", "bf16"), "b300": ("fp8", "fp4", "bf16"),
                "gb300": ("fp8", "fp4", "bf16"), "rtx-pro-6000-server": ("fp8", "fp4", "bf16")}
"""The formats whose entries each chip has (FP8 and BF16 only where not listed: Hopper computes no FP4)."""
BUCKETS = (8, 16, 32, 64, 128, 256, 512)
LARGE = 8192
"""Tokens from which a shape's throughput is its large-batch figure, as the moe_compute entries read it."""


def curve(df: pd.DataFrame, tp: int) -> dict[int, float]:
    """One engine's ramp: its points' throughput over their shape's large-batch median, by bucket."""
    rel: dict[int, list[float]] = {b: [] for b in BUCKETS}
    for (h, inter, e, k), g in df.groupby(["hidden_size", "inter_size", "num_experts", "topk"]):
        pts = []
        for n, lat in zip(g.num_tokens, g.latency, strict=True):
            n = int(n)
            r = n * k / touched(n, int(e), int(k))
            pts.append((n, r, 2 * n * k * 3 * h * inter / tp / (lat * 1e-3)))
        big = [f for n, _, f in pts if n >= LARGE]
        if not big:
            continue
        ref = statistics.median(big)
        for _, r, f in pts:
            b = min(BUCKETS, key=lambda x: abs(math.log2(r / x)))
            if abs(math.log2(r / b)) <= 0.2:
                rel[b].append(f / ref)
    return {b: statistics.median(v) for b, v in rel.items() if len(v) >= 2}


def finish(med: dict[int, float]) -> dict[int, float]:
    """A ramp as the entries hold it: each fraction at most 1, the last bucket 1 (from 512 rows the points scatter
    around the large-batch figure, 0.92 to 1.03 at 1,024, so the ramp ends there at 1), rounded, and never growing
    faster than the rows (more rows never take less time, which the data checks): where the medians' scatter or
    rounding would break that, the fraction is the previous one times the rows' ratio."""
    out = {b: min(1.0, v) for b, v in med.items()}
    out[BUCKETS[-1]] = 1.0
    prev: tuple[int, float] | None = None
    for b in out:
        out[b] = round(out[b], 2)
        if prev is not None:
            out[b] = min(out[b], round(prev[1] * b / prev[0], 2))
        prev = (b, out[b])
    return out


def engine_ramp(repo: str, chip: str, t: str, dtype: str, tp: int,
                kernel: str | None = None) -> tuple[str, dict[int, float]] | None:
    """One engine's (table `t`'s) most measured gated kernel, or `kernel`, and its ramp, experts sliced `tp` ways (1:
    whole); None where its table holds none."""
    df = table(repo, chip, t)
    if df is None:
        return None
    df = gated_balanced(df, dtype, t)
    df = df[df.moe_tp_size == tp]
    if df.empty:
        return None
    df = most_measured(df) if kernel is None else df[df.kernel_source == kernel]
    if df.empty:
        return None
    return str(df.kernel_source.iloc[0]), curve(df, tp)


def main() -> None:
    repo = sys.argv[1]
    for fmt, dtype in FORMATS.items():
        for chip_id, chip in CHIPS.items():
            if fmt not in FORMAT_CHIPS.get(chip_id, ("fp8", "bf16")):
                continue
            for resource, tp in (("moe-compute", 8), ("moe-compute-whole", 1)):
                per_engine: dict[str, dict[int, float]] = {}
                for t in TABLES:
                    found = engine_ramp(repo, chip, t, dtype, tp)
                    if found is not None:
                        per_engine[f"{t} {found[0]}"] = found[1]
                med = finish({b: statistics.median([c[b] for c in per_engine.values() if b in c]) for b in BUCKETS
                              if any(b in c for c in per_engine.values())})
                kernels = "; ".join(f"{name} {' '.join(f'{c.get(b, math.nan):.2f}' for b in BUCKETS)}"
                                    for name, c in per_engine.items())
                print(f"{chip_id}-{resource}-{fmt}:  # {kernels}")
                print(f"  by_rows: [{', '.join(f'[{b}, {v:.2f}]' for b, v in med.items())}]")


if __name__ == "__main__":
    main()
