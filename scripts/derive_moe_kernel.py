"""Derive TensorRT-LLM's own fused-MoE compute entries (data/efficiencies.yaml, resources moe_compute and
moe_compute_whole with `kernel: cutlass`) from AIConfigurator's measured fused-MoE tables.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_moe_kernel.py /path/to/aiconfigurator > entries.yaml

The median entries (scripts/derive_moe_compute.py, derive_moe_ramp.py) read three engines' kernels together.
TensorRT-LLM's PyTorch backend runs its CUTLASS kernel unless the command names another backend (moe_config.backend
defaults to CUTLASS), and that kernel's share differs from the others' by more than their spread: on thin slices of
each expert it reaches a half or less of theirs, on wide ones as much or more. Each entry here is that one engine's
table, read exactly as the median entries read each engine (the same functions): `achieved` on DeepSeek-V3's shape
(FP8, FP4) or its by_columns curve at the shape's columns (BF16: the tables hold DeepSeek-V3 in FP8 and FP4 only),
`by_columns` its own curve, `by_rows` its own ramp. Printed for each chip and format where TensorRT-LLM's most
measured gated kernel is CUTLASS's (moe_torch_flow_cutlass); where it is another (DeepGEMM for block FP8 on
Blackwell, which the CUTLASS backend does not run; Triton for FP8 on the RTX PRO 6000) the chip and format are left
out, and a deployment there takes the median."""
from __future__ import annotations

import statistics
import sys

from derive_moe_compute import CHIPS, CURVE_COLUMNS, FORMATS, LAYOUTS, engine_by_columns, shape_rates
from derive_moe_ramp import engine_ramp, finish
from derive_moe_weights import COMMIT, gated_balanced, most_measured, table

ENGINE = "trtllm/1.3.0rc20"
"""The table read: TensorRT-LLM's newest in the tables, as the median entries read it."""
KERNEL = ("cutlass", "moe_torch_flow_cutlass")
"""The entries' kernel and the tables' name for it."""
RECIPE = ("https://github.com/NVIDIA/TensorRT-LLM/blob/a98a9061d72f6fd39f5d055ebdd2c6878a100e2c/docs/source/"
          "deployment-guide/quick-start-recipe-for-deepseek-r1-on-trtllm.md")
WORDS = {"moe-compute": ("", "sliced eight ways", "experts sliced by tensor parallelism"),
         "moe-compute-whole": (", whole experts per GPU", "whole", "whole experts on each GPU (expert parallelism, or one GPU)")}
FMT_NAMES = {"fp8": "FP8", "fp4": "FP4", "bf16": "BF16"}


def entry(cat_eff: dict[str, object], chip_id: str, chip: str, fmt: str, resource: str, repo: str,
          peak: float) -> list[str] | None:
    """One entry's YAML lines, or None where TensorRT-LLM's kernel there is not CUTLASS's."""
    dtype = FORMATS[fmt]
    df = table(repo, chip, ENGINE)
    if df is None:
        return None
    df = gated_balanced(df, dtype, ENGINE)
    if df.empty or most_measured(df).kernel_source.iloc[0] != KERNEL[1]:
        return None
    tp, _ = LAYOUTS[resource]
    spread: dict[int, list[float]] = {}
    curve = engine_by_columns(repo, chip, ENGINE, dtype, peak, spread)
    ramp = engine_ramp(repo, chip, ENGINE, dtype, tp)
    assert curve is not None and ramp is not None  # noqa: S101 - the kernel's rows exist (above)
    cols = CURVE_COLUMNS[resource]
    found = shape_rates(repo, chip, ENGINE, dtype, resource)
    if found is not None and found[0] == KERNEL[1]:
        achieved, low, high = statistics.mean(found[1]), min(found[1]), max(found[1])
        read = (f"DeepSeek-V3's shape at 8,192 and 16,384 tokens ({', '.join(f'{r / 1e12:.1f}' for r in found[1])} "
                "TFLOP/s, their mean)")
    else:
        achieved, low, high = curve[cols] * peak, min(spread[cols]) * peak, max(spread[cols]) * peak
        read = (f"its by_columns curve at {cols:,} columns (the tables hold DeepSeek-V3's shape in FP8 and FP4 only), "
                "the range its shapes' medians there")
    rows = finish(ramp[1])
    median = cat_eff[f"{chip_id}-{resource}-{fmt}"]
    name = str(median.name).split(",")[0]  # type: ignore[attr-defined]
    suffix, layout, whole = WORDS[resource]
    out = [
        f"{chip_id}-{resource}-{fmt}-cutlass:",
        f"  name: {name}, fused MoE layer ({FMT_NAMES[fmt]} grouped expert GEMMs{suffix}) as TensorRT-LLM's CUTLASS "
        "kernel runs it, at large batch",
        f"  resource: {resource.replace('-', '_')}",
        f"  accelerator: {chip_id}",
        f"  tensor_format: {fmt}",
        f"  kernel: {KERNEL[0]}",
        f"  achieved: {{value: {achieved / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}",
        f"  achieved_range: [{low / 1e12:.1f}, {high / 1e12:.1f}]",
        f"  peak: {{value: {median.peak.value:g}, unit: TFLOP/s, sparsity: dense}}",  # type: ignore[attr-defined]
        f"  by_rows: [{', '.join(f'[{b}, {v:.2f}]' for b, v in rows.items())}]",
        f"  by_columns: [{', '.join(f'[{b}, {v:.3f}]' for b, v in curve.items())}]",
        f"  columns: {cols}",
        f"  method: TensorRT-LLM's fused-MoE kernel alone ({KERNEL[1]}), experts {layout}, at large batch",
        "  note: >-",
        f"    The share of the dense {FMT_NAMES[fmt]} peak TensorRT-LLM's CUTLASS fused-MoE kernel reaches at large batch "
        f"with {whole}: {achieved / peak:.1%}, read on {read}. TensorRT-LLM's PyTorch backend runs this kernel "
        "unless the command names another backend (moe_config.backend defaults to CUTLASS), so a deployment under its "
        "policies reads this entry in place of the engines' median (the entry without a kernel). by_rows is its own "
        "ramp, by_columns its own curve, read as the median entries read each engine (scripts/derive_moe_kernel.py).",
        "  sources:",
        f"    - url: https://github.com/ai-dynamo/aiconfigurator/tree/{COMMIT}/aic-core/src/aiconfigurator_core/systems/"
        f"data/{chip}/moe/{ENGINE}",
        f"      title: ai-dynamo/aiconfigurator, measured fused-MoE table of {name} (TensorRT-LLM 1.3.0rc20, "
        f"moe_perf.parquet, {dtype} rows, kernel_source {KERNEL[1]})",
        "      read: 2026-12-05",
        f"    - url: {RECIPE}",
        "      title: 'NVIDIA/TensorRT-LLM, Quick Start Recipe for DeepSeek R1 (release 1.0.0rc6 container): the default "
        "MoE backend is CUTLASS'",
        "      read: 2026-12-05",
    ]
    return out


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo = sys.argv[1]
    cat = load()
    eng = engine_catalog(cat)
    for chip_id, chip in CHIPS.items():
        for fmt in FORMATS:
            peak = eng.chips[chip_id].dense_flops.get(fmt)
            if peak is None:
                continue
            for resource in LAYOUTS:
                lines = entry(dict(cat.efficiencies), chip_id, chip, fmt, resource, repo, peak)
                if lines is None:
                    print(f"# {chip_id}-{resource}-{fmt}: TensorRT-LLM's kernel there is not CUTLASS's; left out")
                    continue
                print("\n".join(lines))
                print()


if __name__ == "__main__":
    main()
