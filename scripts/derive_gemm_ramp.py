"""Derive the dense GEMM compute ramp of data/efficiencies.yaml (resource gemm_compute, `by_gflop`) from
AIConfigurator's measured GEMM tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_gemm_ramp.py /path/to/aiconfigurator [chip ...]

A product whose arithmetic binds it (its FLOPs over its bytes at least twice the chip's ridge point, the dense peak
over the HBM datasheet bandwidth, so the weight stream does not) but which has few FLOPs, a thin TP slice or a batch
of a few hundred rows, fills the GPU's units for less of its time than a large one. For each chip, format and engine
(the newest table of SGLang, TensorRT-LLM and vLLM that has the chip), net of the table's fixed cost per call (the
median latency of its tiny GEMMs, at most 16 x 256 x 256, as derive_gemm.py reads it): each shape's share of the
dense peak over the table's large-batch share (the median over the shapes with every dimension at least 4,096, the
entry's `achieved` read the same way), the shapes with n and k from 512 to 16,384, binned by their FLOPs to the
nearest power of four of 2^32 (4.3, 17.2, 68.7 and 274.9 GFLOP), a bin kept with at least five shapes; the median per
bin, then the median of the engines. The ramp ends at the first bin within 2.5 % of the large-batch share (a
fraction of 1); where none is, a last point of 1 at 2^40 (1,099.5 GFLOP), past every bin the tables measure
compute-bound; a fraction never falls as the FLOPs grow (each is at least the one before). Prints each entry's
by_gflop, or none where no bin falls short."""
from __future__ import annotations

import math
import statistics
import subprocess
import sys

from derive_gemm import FORMATS, format_table  # the same rows and fixed cost per call (run from scripts/)
from derive_moe_weights import BASE, COMMIT, TABLE_DIRS, table

BINS = (32, 34, 36, 38)
"""log2 of each bin's FLOPs."""
LAST = 40
"""log2 of the FLOPs of the closing point of a ramp that no bin ends."""
WITHIN = 0.975
"""A bin's fraction from which the ramp has ended."""


def newest(repo: str, chip: str, engine: str) -> str | None:
    """The newest version of `engine` whose GEMM table the checkout holds for `chip` ("engine/version")."""
    r = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", f"{COMMIT}:{BASE}/{chip}/gemm/{engine}/"],
                       capture_output=True, text=True, check=False)
    versions = [v for v in r.stdout.split() if table(repo, chip, f"{engine}/{v}", "gemm") is not None]

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in "".join(c if c.isdigit() or c == "." else "." for c in v).split(".") if x)
    return f"{engine}/{max(versions, key=key)}" if versions else None


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo, chosen = sys.argv[1], sys.argv[2:] or list(TABLE_DIRS)
    eng = engine_catalog(load())
    for chip_id in chosen:
        chip, spec = TABLE_DIRS[chip_id], eng.chips[chip_id]
        tables = [t for t in (newest(repo, chip, e) for e in ("sglang", "trtllm", "vllm")) if t is not None]
        for fmt, (dtype, precision) in FORMATS.items():
            if fmt not in spec.dense_flops:
                continue
            peak, bpp = spec.dense_flops[fmt], eng.precisions[precision].bytes_per_param
            ridge = peak / spec.hbm_bytes_per_s
            per: dict[str, dict[int, float]] = {}
            for t in tables:
                got = format_table(repo, chip, t, dtype)
                if got is None:
                    continue
                df, fixed = got
                rows = [(m, n, k, lat * 1e-3 - fixed) for m, n, k, lat in zip(df.m, df.n, df.k, df.latency, strict=True)
                        if lat * 1e-3 > fixed]
                large = statistics.median([2 * m * n * k / s / peak for m, n, k, s in rows
                                           if min(m, n, k) >= 4096])
                bins: dict[int, list[float]] = {b: [] for b in BINS}
                for m, n, k, s in rows:
                    f = 2 * m * n * k
                    if 512 <= n <= 16384 and 512 <= k <= 16384 and f / (n * k * bpp + m * (n + k) * 2) >= 2 * ridge:
                        b = 2 * round(math.log2(f) / 2)
                        if b in bins:
                            bins[b].append(f / s / peak / large)
                per[t] = {b: statistics.median(v) for b, v in bins.items() if len(v) >= 5}
                print(f"# {chip_id} {fmt} {t}: large {large:.3f}, "
                      f"{' '.join(f'2^{b}:{v:.3f}' for b, v in per[t].items())}")
            points: list[tuple[float, float]] = []
            for b in BINS:
                vs = [p[b] for p in per.values() if b in p]
                if not vs:
                    continue
                f = max(statistics.median(vs), points[-1][1] if points else 0.0)
                if f >= WITHIN:
                    if points:
                        points.append((2.0 ** b / 1e9, 1.0))
                    break
                points.append((2.0 ** b / 1e9, f))
            else:
                if points:
                    points.append((2.0 ** LAST / 1e9, 1.0))
            shown = ", ".join(f"[{g:.1f}, {f:.2f}]" if f < 1 else f"[{g:.1f}, 1]" for g, f in points)
            print(f"{chip_id}-gemm-compute-{fmt}: by_gflop: [{shown}]" if points else
                  f"{chip_id}-gemm-compute-{fmt}: none (every bin within {1 - WITHIN:.1%} of the large-batch share)")


if __name__ == "__main__":
    main()
