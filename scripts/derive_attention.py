"""Derive the prefill attention entries of data/efficiencies.yaml (resource attention_compute, their by_heads_length
grids) from AIConfigurator's measured context-attention tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_attention.py /path/to/aiconfigurator [chip ...]

For each chip, in each engine's table (the newest of SGLang, TensorRT-LLM and vLLM that the chip has; on A100 the
newest each engine has there): the prefill kernel the table measured most, BF16 queries and cache, head dimension
128, no window. The table's fixed cost per call is the median latency of its tiny calls (at most 16 tokens, at most
8 heads x sequences). Each point's share of the dense BF16 peak is its causal FLOPs, 2 x sequences x heads x 128 x
length^2 (QK^T and PV, 2 each, over the length^2 / 2 pairs), over (its latency less that fixed cost), the time model
charging a kernel's fixed cost apart. Points are grouped by heads x sequences on the GPU (buckets 4, 8, 16, 32 and
64: [4, 8), [8, 16), ..., 64 and more) and by length (512 to 16,384), the median per cell; then the median of the
engines per cell, to two decimals, each capped at the share of the row of fewer heads times the heads' ratio (so that
more heads never take less time, which the data checks; the points' spread makes a few cells of the fewest heads
exceed it by a hundredth or two); `achieved` is the cell of most heads and longest length, its range the engines' figures there.
Prints each chip's entry."""
from __future__ import annotations

import math
import statistics
import sys

import pandas as pd
from derive_moe_weights import TABLE_DIRS, TABLES, table  # the same tables, read the same way (run from scripts/)

CHIPS = {k: TABLE_DIRS[k] for k in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "b300", "gb200", "gb300",
                                    "rtx-pro-6000-server")}
OLDER = {"a100_sxm": ("sglang/0.5.10", "trtllm/1.0.0", "vllm/0.14.0")}
"""Engine versions read where a chip has no table of TABLES' versions: A100's newest of each engine."""
HEADS = (4, 8, 16, 32, 64)
LENGTHS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIM = 128


def bucket(heads: int) -> int | None:
    return max((b for b in HEADS if heads >= b), default=None)


def grid(df: pd.DataFrame, peak: float) -> tuple[str, float, dict[tuple[int, int], float]]:
    if "window_size" in df:  # older tables measured no windows
        df = df[df.window_size == 0]
    df = df[(df.head_dim == HEAD_DIM) & (df.attn_dtype == "bfloat16") & (df.kv_cache_dtype == "bfloat16")
            & ~df.kernel_source.str.contains("decode")]
    kernel = df.kernel_source.value_counts().idxmax()
    df = df[df.kernel_source == kernel]
    fixed = statistics.median(df[(df.isl <= 16) & (df.batch_size * df.num_heads <= 8)].latency) * 1e-3
    cells: dict[tuple[int, int], list[float]] = {}
    for b, h, s, lat in zip(df.batch_size, df.num_heads, df.isl, df.latency, strict=True):
        hb = bucket(int(b * h))
        if hb is None or int(s) not in LENGTHS or lat * 1e-3 <= fixed:
            continue
        cells.setdefault((hb, int(s)), []).append(2 * b * h * HEAD_DIM * s * s / (lat * 1e-3 - fixed) / peak)
    return kernel, fixed, {k: statistics.median(v) for k, v in cells.items()}


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo, chosen = sys.argv[1], sys.argv[2:] or list(CHIPS)
    eng = engine_catalog(load())
    for chip_id in chosen:
        chip = CHIPS[chip_id]
        peak = eng.chips[chip_id].dense_flops["bf16"]
        engines: dict[str, dict[tuple[int, int], float]] = {}
        for t in (*TABLES, *OLDER.get(chip, ())):
            df = table(repo, chip, t, "attention", "context_attention")
            if df is None or any(name.startswith(t.split("/")[0]) for name in engines):
                continue
            kernel, fixed, g = grid(df, peak)
            engines[f"{t} {kernel}"] = g
            print(f"# {chip_id} {t} {kernel}: fixed {fixed * 1e6:.1f} us")
        shares = [[round(statistics.median([g[h, s] for g in engines.values() if (h, s) in g]), 2) for s in LENGTHS]
                  for h in HEADS]
        for i in range(1, len(HEADS)):  # capped so that more heads never take less time (the data checks it)
            for j, s in enumerate(shares[i]):
                cap = math.floor(shares[i - 1][j] * HEADS[i] / HEADS[i - 1] * 100 + 1e-9) / 100
                if s > cap:
                    print(f"# {chip_id}: {HEADS[i]} heads at {LENGTHS[j]} capped {s:.2f} -> {cap:.2f}")
                    shares[i][j] = cap
        corner = [g[HEADS[-1], LENGTHS[-1]] for g in engines.values()]
        print(f"{chip_id}-attention-bf16:  # {'; '.join(engines)}")
        print(f"  achieved: {{value: {shares[-1][-1] * peak / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}")
        print(f"  achieved_range: [{min(corner) * peak / 1e12:.1f}, {max(corner) * peak / 1e12:.1f}]")
        print("  by_heads_length:")
        print(f"    heads: [{', '.join(map(str, HEADS))}]")
        print(f"    lengths: [{', '.join(map(str, LENGTHS))}]")
        print("    shares:")
        for row in shares:
            print(f"      - [{', '.join(f'{v:.2f}' for v in row)}]")


if __name__ == "__main__":
    main()
