"""Derive the fused MoE layer's large-batch compute share (data/efficiencies.yaml, resources moe_compute and
moe_compute_whole: `achieved` and `achieved_range`) from AIConfigurator's measured fused-MoE tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_moe_compute.py /path/to/aiconfigurator

DeepSeek-V3/R1's expert shape (hidden 7,168, expert FFN 2,048, 256 experts, top-8), balanced routing, at 8,192 and
16,384 tokens, in each engine's newest table (SGLang, TensorRT-LLM, vLLM) and its most measured gated kernel:
- moe_compute: experts sliced by tensor parallelism of 8 (moe_tp 8, moe_ep 1); FLOPs per GPU 2 x tokens x 8 x 3 x
  7,168 x 2,048 / 8.
- moe_compute_whole: whole experts on each GPU (moe_tp 1, moe_ep 8); FLOPs counted on the assignments the timed GPU
  computed: TensorRT-LLM's collector routes by plain top-k, balanced, one assignment a token on each of the eight
  GPUs; SGLang's and vLLM's route DeepSeek's shape by its grouped top-k over the balanced logits, whose ties send
  every token to the first four groups, five assignments a token on the timed GPU (data/efficiencies.yaml, the
  b200-moe-compute-whole-fp8 entry's note).
On the A100, whose tables hold each engine's older version (derive_kv_stream.OLDER), and where TensorRT-LLM's and
vLLM's time power-law routing only, their mildest skew is read as balanced (MILDEST), and an entry is read at the
nearest columns every engine timed where it timed none at the FP8 entries' (`nearest`).
Each engine's mean throughput over its two points, the median of the engines (`achieved`), the range spanning them
(`achieved_range`), and the share of the chip's dense peak in the format. Prints each chip's and format's entries,
FP8 (the entries the time model has carried since 2026-12-02, which this reproduces), FP4 (NVFP4) and BF16. The tables
hold DeepSeek-V3's shape in FP8 and FP4 only (the model ships FP8): a BF16 entry's `achieved` is its by_columns curve
at the FP8 entries' columns (256 sliced, 2,048 whole; `CURVE_COLUMNS`), its range the engines' values there.

by_columns, the share by the columns of each expert a GPU holds: every gated shape with balanced routing and no
expert parallelism, experts sliced by tensor parallelism of 1 to 32, columns = expert FFN / moe_tp, bucketed at 128,
256, ..., 16,384 (within 0.2 in log2); each point at 256 or more rows per touched expert (past the rows' ramp,
by_rows) gives its share of the dense peak (FLOPs 2 x tokens x top-k x 3 x hidden x expert FFN / moe_tp over the
latency); each engine's median per bucket over its shapes (its most measured gated kernel; SGLang's and vLLM's
DeepSeek-V3 shape left out, routed by grouped top-k), then the median of the engines, in the buckets all three
engines measured. `columns` is the shape each entry's `achieved` was read on: DeepSeek-V3's 2,048-column experts
over moe_tp 8 (256) sliced, whole (2,048)."""
from __future__ import annotations

import math
import statistics
import sys

import pandas as pd
from derive_kv_stream import OLDER
from derive_moe_weights import (  # the same tables, read the same way (run from scripts/)
    TABLE_DIRS,
    TABLES,
    gated_balanced,
    most_measured,
    table,
    touched,
)

CHIPS = {k: TABLE_DIRS[k] for k in ("b200", "gb200", "b300", "gb300", "h100-sxm", "h200-sxm", "rtx-pro-6000-server",
                                    "a100-80gb-sxm")}
MILDEST = "power_law_1.01"
"""The routing read in a table that times no balanced routing in a format (A100's TensorRT-LLM 1.0.0 and vLLM 0.14.0
tables time power-law routing only): the mildest skew it times. Past 256 rows per expert the skew costs little: on
the A100, SGLang's table, which times both, reaches 2 to 4 % less of the peak with it on Mixtral's shape."""
FORMATS = {"fp8": "fp8_block", "fp4": "nvfp4", "bf16": "bfloat16"}
"""The engine's tensor format and the tables' moe_dtype."""
CURVE_COLUMNS = {"moe-compute": 256, "moe-compute-whole": 2048}
"""Where the tables hold no DeepSeek-V3 shape in a format (BF16: the model ships FP8), each entry's `achieved` is its
by_columns curve at the columns the FP8 entries' shape has: 2,048-column experts sliced eight ways (256) or whole."""
SHAPE = (7168, 2048, 256, 8)
TOKENS = (8192, 16384)
LAYOUTS = {"moe-compute": (8, 1), "moe-compute-whole": (1, 8)}
"""Each entry's (moe_tp, moe_ep)."""
COLUMN_BUCKETS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
PLATEAU_ROWS = 256
"""Rows per touched expert from which a point is past the rows' ramp (by_rows reaches 0.9 to 1 there)."""


def by_columns(repo: str, chip: str, dtype: str, peak: float) -> dict[int, float]:
    """The large-batch share by columns of each expert per GPU, the median of the engines (see the module's note)."""
    per_engine = engines_by_columns(repo, chip, dtype, peak)
    return {b: statistics.median([c[b] for c in per_engine]) for b in COLUMN_BUCKETS
            if len(per_engine) == 3 and all(b in c for c in per_engine)}


def engines_by_columns(repo: str, chip: str, dtype: str, peak: float) -> list[dict[int, float]]:
    """Each engine's large-batch share by columns of each expert per GPU (its median per bucket over its shapes)."""
    return [c for t in tables(chip) if (c := engine_by_columns(repo, chip, t, dtype, peak)) is not None]


def tables(chip: str) -> tuple[str, ...]:
    """The engine versions read on `chip` (its directory): TABLES', or each engine's newest where it has none of
    those (derive_kv_stream.OLDER: the A100's)."""
    return OLDER.get(chip, TABLES)


def routed(df: pd.DataFrame, dtype: str, t: str) -> pd.DataFrame:
    """`gated_balanced`'s rows, or where the table times no balanced routing in `dtype`, its MILDEST skew's read the
    same way."""
    out = gated_balanced(df, dtype, t)
    if out.empty:
        skewed = df[df.distribution == MILDEST].assign(distribution="balanced")
        out = gated_balanced(skewed, dtype, t)
    return out


def engine_by_columns(repo: str, chip: str, t: str, dtype: str, peak: float,
                      spread: dict[int, list[float]] | None = None, kernel: str | None = None) -> dict[int, float] | None:
    """One engine's (table `t`'s) large-batch share by columns of each expert per GPU, its median per bucket over
    its shapes (its most measured kernel's, or `kernel`'s); None where its table holds none. `spread`, where given,
    receives each bucket's shape medians."""
    df = table(repo, chip, t)
    if df is None:
        return None
    df = routed(df, dtype, t)
    if df.empty:
        return None
    df = most_measured(df) if kernel is None else df[df.kernel_source == kernel]
    if df.empty:
        return None
    buckets: dict[int, list[float]] = {b: [] for b in COLUMN_BUCKETS}
    for (h, inter, e, k, tp), g in df.groupby(["hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size"]):
        cols = inter / tp
        b = min(COLUMN_BUCKETS, key=lambda x: abs(math.log2(cols / x)))
        if abs(math.log2(cols / b)) > 0.2:
            continue
        shares = [2 * n * k * 3 * h * inter / tp / (lat * 1e-3) / peak
                  for n, lat in zip(g.num_tokens, g.latency, strict=True)
                  if n * k / touched(int(n), int(e), int(k)) >= PLATEAU_ROWS]
        if shares:
            buckets[b].append(statistics.median(shares))
    if spread is not None:
        spread.update({b: v for b, v in buckets.items() if v})
    return {b: statistics.median(v) for b, v in buckets.items() if v}


def nearest(cols: int, curve: dict[int, float]) -> int:
    """`cols`, or where the curve has no bucket there (not every engine measured it), its nearest bucket (in log2;
    the wider of two)."""
    return cols if cols in curve or not curve else min(curve, key=lambda b: (abs(math.log2(b / cols)), -b))


def shape_rates(repo: str, chip: str, t: str, dtype: str, resource: str) -> tuple[str, list[float]] | None:
    """One engine's (table `t`'s) kernel on DeepSeek-V3's shape in the entry's layout (`LAYOUTS`) at `TOKENS`: its
    most measured gated kernel and the FLOP/s of each point (the module's note says how the FLOPs are counted);
    None where its table holds the shape in no such point."""
    h, inter, e, k = SHAPE
    tp, ep = LAYOUTS[resource]
    df = table(repo, chip, t)
    if df is None:
        return None
    df = df[(df.moe_dtype == dtype) & (df.distribution == "balanced") & (df.hidden_size == h)
            & (df.inter_size == inter) & (df.num_experts == e) & (df.topk == k)
            & (df.moe_tp_size == tp) & (df.moe_ep_size == ep) & df.num_tokens.isin(TOKENS)
            & ~df.kernel_source.str.contains("nongated|min_latency")]
    if df.empty:
        return None
    kernel = df.kernel_source.value_counts().idxmax()
    rates = []
    for n, lat in zip(df[df.kernel_source == kernel].num_tokens, df[df.kernel_source == kernel].latency, strict=True):
        flops = 2 * n * k * 3 * h * inter / tp if ep == 1 else 2 * (n if t.startswith("trtllm") else 5 * n) * 3 * h * inter
        rates.append(flops / (lat * 1e-3))
    return str(kernel), rates


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo = sys.argv[1]
    eng = engine_catalog(load())
    for chip_id, chip in CHIPS.items():
        for fmt, dtype in FORMATS.items():
            peak = eng.chips[chip_id].dense_flops.get(fmt)
            if peak is None:
                continue
            curve = by_columns(repo, chip, dtype, peak)
            if curve:
                print(f"{chip_id}-{fmt} by_columns: [{', '.join(f'[{b}, {v:.3f}]' for b, v in curve.items())}]")
            for resource in LAYOUTS:
                per_engine: dict[str, float] = {}
                for t in tables(chip):
                    found = shape_rates(repo, chip, t, dtype, resource)
                    if found is not None:
                        per_engine[f"{t} {found[0]}"] = statistics.mean(found[1])
                if len(per_engine) < 2:
                    cols = nearest(CURVE_COLUMNS[resource], curve)
                    each_engine = [c[cols] for c in engines_by_columns(repo, chip, dtype, peak) if cols in c]
                    if cols in curve and len(each_engine) == 3:
                        print(f"{chip_id}-{resource}-{fmt}:  # by_columns at {cols} columns: "
                              f"{' '.join(f'{v:.1%}' for v in each_engine)}")
                        print(f"  achieved: {{value: {curve[cols] * peak / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}"
                              f"  # {curve[cols]:.1%}")
                        print(f"  achieved_range: [{min(each_engine) * peak / 1e12:.1f}, "
                              f"{max(each_engine) * peak / 1e12:.1f}]")
                        print(f"  columns: {cols}")
                    continue
                med = statistics.median(per_engine.values())
                each = "; ".join(f"{name} {v / 1e12:.1f} ({v / peak:.1%})" for name, v in per_engine.items())
                print(f"{chip_id}-{resource}-{fmt}:  # {each}")
                print(f"  achieved: {{value: {med / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}  # {med / peak:.1%}")
                print(f"  achieved_range: [{min(per_engine.values()) / 1e12:.1f}, {max(per_engine.values()) / 1e12:.1f}]")


if __name__ == "__main__":
    main()
