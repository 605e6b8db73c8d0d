"""Derive the dense GEMM entries of data/efficiencies.yaml (resources gemm_weights and gemm_compute) from
AIConfigurator's measured GEMM tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_gemm.py /path/to/aiconfigurator [chip ...]

For each chip and format, in each engine's table (the newest of SGLang, TensorRT-LLM and vLLM): the table's fixed
cost per call is the median latency of its tiny GEMMs (at most 16 x 256 x 256) of that format. A decode step's weight
stream at 1, 16, 64, 128 and 256 tokens is each shape's weight bytes over (its latency less that fixed cost) over the
HBM datasheet bandwidth, over the shapes whose weights are at least twice the L2 cache, the median over the shapes;
the large-batch compute share is each shape's FLOPs over (latency less the fixed cost) over the dense peak, over the
shapes with every dimension at least 4,096, the median over the shapes. Then the median of the engines; each range
spans the engines. Prints each chip's and format's by_tokens, achieved figures and ranges. It reproduces the B200 and
GB200 entries, which were derived by hand before it: their BF16 by_tokens exactly, their FP8 ones within 0.01, and
their compute figures within 1.1 % (the tiny-GEMM cost it reads is a few tenths of a microsecond off their notes).
Their FP4 entries are its output: the hand derivation counted 0.5 bytes a parameter where NVFP4 stores 0.5625 with
its scales, as the time model streams it, and its weight shares were 12.5 % low. The B300, GB300 and RTX PRO 6000
entries are its output."""
from __future__ import annotations

import statistics
import sys

import pandas as pd
from derive_moe_weights import L2_BYTES, TABLE_DIRS, TABLES, table  # the same tables, read the same way (run from scripts/)

CHIPS = {k: (TABLE_DIRS[k], L2_BYTES[k]) for k in ("b200", "gb200", "b300", "gb300", "rtx-pro-6000-server")}
"""Each chip's directory in the tables, and its L2 cache in bytes (derive_moe_weights.py's)."""
FORMATS = {"fp8": ("fp8", "fp8"), "bf16": ("bfloat16", "bf16"), "fp4": ("nvfp4", "nvfp4")}
"""The engine's tensor format: the tables' gemm_dtype, and the precision whose bytes per parameter it stores."""
TOKENS = (1, 16, 64, 128, 256)


def format_table(repo: str, chip: str, t: str, dtype: str) -> tuple[pd.DataFrame, float] | None:
    """One engine version's GEMM rows of `dtype` on `chip` and its fixed cost per call in seconds (the median latency
    of its tiny GEMMs, at most 16 x 256 x 256), or None where its table holds none; derive_gemm_ramp.py reads its
    rows through it too."""
    df = table(repo, chip, t, "gemm")
    if df is None or df[df.gemm_dtype == dtype].empty:
        return None
    df = df[df.gemm_dtype == dtype]
    return df, statistics.median(df[(df.m <= 16) & (df.n <= 256) & (df.k <= 256)].latency) * 1e-3


def table_shares(df: pd.DataFrame, fixed: float, bpp: float, hbm: float, peak: float,
                 l2: float) -> tuple[dict[int, float], float | None]:
    """One table's weight-stream share by tokens (`TOKENS`) and large-batch compute share (None where it has no
    shape with every dimension at least 4,096), each net of its `fixed` cost per call (the module's note);
    scripts/derive_gemm_kernel.py reads one engine's table through it."""
    w: dict[int, float] = {}
    for tok in TOKENS:
        g = df[df.m == tok]
        shares = [n * k * bpp / (lat * 1e-3 - fixed) / hbm for n, k, lat in zip(g.n, g.k, g.latency, strict=True)
                  if n * k * bpp >= 2 * l2 and lat * 1e-3 > fixed]
        if shares:
            w[tok] = statistics.median(shares)
    g = df[(df.m >= 4096) & (df.n >= 4096) & (df.k >= 4096)]
    cs = [2 * m * n * k / (lat * 1e-3 - fixed) / peak
          for m, n, k, lat in zip(g.m, g.n, g.k, g.latency, strict=True) if lat * 1e-3 > fixed]
    return w, statistics.median(cs) if cs else None


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo, chosen = sys.argv[1], sys.argv[2:] or list(CHIPS)
    eng = engine_catalog(load())
    for chip_id in chosen:
        chip, l2 = CHIPS[chip_id]
        hbm = eng.chips[chip_id].hbm_bytes_per_s
        for fmt, (dtype, precision) in FORMATS.items():
            bpp = eng.precisions[precision].bytes_per_param
            peak = eng.chips[chip_id].dense_flops[fmt]
            weights: dict[str, dict[int, float]] = {}
            compute: dict[str, float] = {}
            for t in TABLES:
                got = format_table(repo, chip, t, dtype)
                if got is None:
                    continue
                df, fixed = got
                w, cs = table_shares(df, fixed, bpp, hbm, peak, l2)
                weights[t] = w
                if cs is not None:
                    compute[t] = cs
                print(f"# {chip_id} {fmt} {t}: fixed {fixed * 1e6:.1f} us, weights "
                      f"{' '.join(f'{k}:{v:.3f}' for k, v in w.items())}, compute {compute.get(t, 0):.3f}")
            if not weights:
                continue
            med = {tok: statistics.median([w[tok] for w in weights.values() if tok in w]) for tok in TOKENS}
            ones = [w[1] for w in weights.values() if 1 in w]
            print(f"{chip_id}-gemm-weights-{fmt}:")
            print(f"  achieved: {{value: {med[1] * hbm / 1e12:.3f}, unit: TB/s, direction: shared}}")
            print(f"  achieved_range: [{min(ones) * hbm / 1e12:.3f}, {max(ones) * hbm / 1e12:.3f}]")
            print(f"  by_tokens: [{', '.join(f'[{tok}, {v:.2f}]' for tok, v in med.items())}]")
            c = list(compute.values())
            print(f"{chip_id}-gemm-compute-{fmt}:")
            print(f"  achieved: {{value: {statistics.median(c) * peak / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}")
            print(f"  achieved_range: [{min(c) * peak / 1e12:.1f}, {max(c) * peak / 1e12:.1f}]")


if __name__ == "__main__":
    main()
