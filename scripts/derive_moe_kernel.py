"""Derive one kernel's own fused-MoE entries (data/efficiencies.yaml, resources moe_compute and moe_compute_whole,
and moe_weights where the kernel's fixed cost differs, with `kernel: cutlass` or `kernel: triton`) from
AIConfigurator's measured fused-MoE tables.

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
out, and a deployment there takes the median.

SGLang's Triton kernel (sglang_fused_moe_triton in its 0.5.14 table) is what SGLang ran for BF16 experts on
Blackwell until 0.5.9 (its server_args chose flashinfer_trtllm there for FP8 and ModelOpt FP4 only), where the median
is FlashInfer's TRT-LLM kernels (two engines of three). Its entries are printed for the Blackwell chips whose table
times it in BF16, with its weight stream too: its fixed cost a layer (`fixed`: the median over its one-token points
whose touched weights fit half the L2 cache of the latency less those weights at the datasheet rate) is about half
again the time model's charge for the kernels of a fused MoE layer, so its shares by rows are read net of its own
(scripts/derive_moe_weights.py's reading otherwise).

FlashInfer's TensorRT-LLM-generated kernel (sglang_flashinfer_trtllm_moe in SGLang's 0.5.14 table: the flashinfer_trtllm
runner SGLang uses for DeepSeek's FP8 and FP4 experts on Blackwell) gets its weight stream only (its arithmetic is two
of the median's three engines already). Its one-token points include DeepSeek-V3's shape (one token touches its top-k
experts under any routing), and its fixed cost is read by hidden size too (`fixed_by_hidden`, each size's median over
the overall one): in block FP8 it is about 17 us at 2,048 and about 30 us at DeepSeek's 7,168 on a B200 (lower at 5,120,
whose shapes route each token to one expert), in FP4 within a fifth of its median at every size, where the time
model's count of seven kernels gives 18.9 us at any size and format.

vLLM's Marlin kernel (vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts in its 0.24.0 table) gets its weight
stream only, for MXFP4 experts on Hopper, where vLLM runs it when asked (VLLM_MXFP4_USE_MARLIN): the tables time it with
INT4 weights in groups of 128 only (TABLE_DTYPE), the same kernel with another 4-bit weight type, at one shape (Kimi
K2's), whose one-token points within half the L2 cache are at 8, 16 and 32 ways (FLOOR_TP). Its fixed cost, about 37 us
a layer on an H100, is more than twice the time model's count of its kernels."""
from __future__ import annotations

import itertools
import statistics
import sys
from collections.abc import Callable

from derive_moe_compute import CHIPS, CURVE_COLUMNS, FORMATS, LAYOUTS, engine_by_columns, shape_rates
from derive_moe_ramp import engine_ramp, finish
from derive_moe_weights import COMMIT, L2_BYTES, Stream, engine_shares, floor, gated_balanced, most_measured, table
from derive_moe_weights import FORMATS as WEIGHT_FORMATS_BY_DTYPE

WEIGHT_FORMATS = {fmt: precision for fmt, (_, precision) in WEIGHT_FORMATS_BY_DTYPE.items()}
"""Each format's precision, whose bytes per parameter a weight stream reads."""

KERNELS = {
    "cutlass": ("trtllm/1.3.0rc20", "moe_torch_flow_cutlass", ("fp8", "fp4", "bf16"), False, True),
    "triton": ("sglang/0.5.14", "sglang_fused_moe_triton", ("bf16",), True, True),
    "trtllm-gen": ("sglang/0.5.14", "sglang_flashinfer_trtllm_moe", ("fp8", "fp4"), True, False),
    "marlin": ("vllm/0.24.0", "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts", ("fp4",), True, False),
}
"""Each kernel: the table read, the tables' name for it, the formats printed, whether its weight stream is and
whether its arithmetic is (the TensorRT-LLM-generated kernels are two of the median's three engines already)."""
BLACKWELL = ("b200", "gb200", "b300", "gb300")
CHIPS_OF = {"triton": BLACKWELL, "trtllm-gen": BLACKWELL, "marlin": ("h100-sxm", "h200-sxm")}
"""The chips each kernel's entries are printed for, where it is not every chip: SGLang's Triton kernel on Blackwell
(on Hopper it is most of the median already), the TensorRT-LLM-generated kernels where they run (Blackwell)., vLLM's
Marlin kernel on Hopper (where vLLM runs MXFP4 experts on it when asked to)."""
TABLE_DTYPE = {"marlin": ("int4_wo", "int4-g128")}
"""A kernel timed in another format of the same width than the one its entry prices: the tables' moe_dtype and the
precision whose bytes per parameter its weights store. vLLM's fused_marlin_moe runs two moe_wna16_marlin_gemm calls
whose weight type is an argument (uint4b8 for INT4 groups of 128, float4_e2m1f for MXFP4), and the tables time it with
INT4 weights only: the MXFP4 entry is that timing."""
FLOOR_TP = {"marlin": 32}
"""A kernel whose one-token points within half the L2 cache lie beyond eight-way slices: its fixed cost reads them up
to this slicing (Marlin's only shape, Kimi K2's, fits at 8, 16 and 32 ways)."""
RECIPE = ("https://github.com/NVIDIA/TensorRT-LLM/blob/a98a9061d72f6fd39f5d055ebdd2c6878a100e2c/docs/source/"
          "deployment-guide/quick-start-recipe-for-deepseek-r1-on-trtllm.md")
SGLANG = "https://pypi.org/project/sglang/0.5.6/"
SGLANG_POST1 = "https://pypi.org/project/sglang/0.5.6.post1/"
VLLM_151 = "https://pypi.org/project/vllm/0.15.1/"
WORDS = {"moe-compute": ("", "sliced eight ways", "experts sliced by tensor parallelism"),
         "moe-compute-whole": (", whole experts per GPU", "whole", "whole experts on each GPU (expert parallelism, or one GPU)")}
FMT_NAMES = {"fp8": "FP8", "fp4": "FP4", "bf16": "BF16"}
ENGINE_NAMES = {"cutlass": "TensorRT-LLM's CUTLASS kernel", "triton": "SGLang's Triton kernel",
                "trtllm-gen": "FlashInfer's TensorRT-LLM-generated kernel", "marlin": "vLLM's Marlin kernel"}
WHY = {
    "cutlass": "TensorRT-LLM's PyTorch backend runs this kernel unless the command names another backend "
               "(moe_config.backend defaults to CUTLASS), so a deployment under its policies reads this entry",
    "triton": "SGLang runs this kernel for BF16 experts on Blackwell before 0.5.9 (its server_args chose "
              "flashinfer_trtllm there for FP8 and ModelOpt FP4 only), so a row of such a version says so "
              "(engine_limits.moe_kernel) and reads this entry",
    "trtllm-gen": "SGLang runs this kernel for DeepSeek's FP8 and ModelOpt FP4 experts on Blackwell (its "
                  "flashinfer_trtllm runner, named by --moe-runner-backend or chosen by server_args with the runner on "
                  "auto), and TensorRT-LLM's TRTLLM backend calls the same generated kernels, so a row that runs it says "
                  "so (engine_limits.moe_kernel) and reads this entry",
    "marlin": "vLLM runs this kernel for MXFP4 experts on Hopper when VLLM_MXFP4_USE_MARLIN is set (get_mxfp4_backend), "
              "and prefers it for compressed-tensors INT4 ones wherever it supports the layer; the tables time it with "
              "INT4 weights in groups of 128, at Kimi K2's shape only, "
              "and this entry prices MXFP4 experts at that timing (the same kernel, weights of the same width), so a "
              "row that runs it says so (engine_limits.moe_kernel) and reads this entry",
}


def _sources(kernel: str, chip: str, name: str, dtype: str) -> list[str]:
    t, source = KERNELS[kernel][:2]
    engine, version = t.split("/")
    engine = {"trtllm": "TensorRT-LLM", "sglang": "SGLang", "vllm": "vLLM"}[engine]
    out = [
        f"    - url: https://github.com/ai-dynamo/aiconfigurator/tree/{COMMIT}/aic-core/src/aiconfigurator_core/systems/"
        f"data/{chip}/moe/{t}",
        f"      title: ai-dynamo/aiconfigurator, measured fused-MoE table of {name} ({engine} {version}, "
        f"moe_perf.parquet, {dtype} rows, kernel_source {source})",
        "      read: 2026-12-05",
    ]
    if kernel == "cutlass":
        out += [f"    - url: {RECIPE}",
                "      title: 'NVIDIA/TensorRT-LLM, Quick Start Recipe for DeepSeek R1 (release 1.0.0rc6 container): the "
                "default MoE backend is CUTLASS'",
                "      read: 2026-12-05"]
    elif kernel == "marlin":
        out += [f"    - url: {VLLM_151}",
                "      title: 'vllm 0.15.1 (PyPI wheel): model_executor/layers/quantization/mxfp4.py (get_mxfp4_backend: "
                "Marlin on Hopper when VLLM_MXFP4_USE_MARLIN is set; fused_marlin_moe with float4_e2m1f weights) and "
                "layers/fused_moe/fused_marlin_moe.py (two moe_wna16_marlin_gemm calls, the weight type an argument) and "
                "quantization/compressed_tensors/compressed_tensors_moe.py (get_moe_method: the Marlin method for INT4 "
                "where check_moe_marlin_supports_layer)'",
                "      read: 2026-12-07"]
    elif kernel == "trtllm-gen":
        out += [f"    - url: {SGLANG_POST1}",
                "      title: 'sglang 0.5.6.post1 (PyPI wheel): srt/server_args.py (DeepseekV3ForCausalLM on sm100 with fp8, "
                "modelopt_fp8 or modelopt_fp4 and the runner on auto: flashinfer_trtllm)'",
                "      read: 2026-12-07"]
    else:
        out += [f"    - url: {SGLANG}",
                "      title: 'sglang 0.5.6 (PyPI wheel): srt/server_args.py (Qwen3MoeForCausalLM on SM100: "
                "flashinfer_trtllm for fp8 and modelopt_fp4 only) and srt/layers/quantization/unquant.py "
                "(UnquantizedFusedMoEMethod: the Triton runner)'",
                "      read: 2026-12-05"]
    return out


def compute_entry(cat_eff: dict[str, object], chip_id: str, chip: str, fmt: str, resource: str, repo: str,
                  peak: float, kernel: str) -> list[str] | None:
    """One compute entry's YAML lines, or None where the kernel's table does not time it there."""
    t, source = KERNELS[kernel][:2]
    dtype = FORMATS[fmt]
    df = table(repo, chip, t)
    if df is None:
        return None
    df = gated_balanced(df, dtype, t)
    if df.empty or (kernel == "cutlass" and most_measured(df).kernel_source.iloc[0] != source) or (
            source not in set(df.kernel_source)):
        return None
    tp, _ = LAYOUTS[resource]
    spread: dict[int, list[float]] = {}
    curve = engine_by_columns(repo, chip, t, dtype, peak, spread, kernel=source)
    ramp = engine_ramp(repo, chip, t, dtype, tp, kernel=source)
    cols = CURVE_COLUMNS[resource]
    if curve is None or ramp is None or cols not in curve:
        return None
    found = shape_rates(repo, chip, t, dtype, resource)
    if found is not None and found[0] == source:
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
    return [
        f"{chip_id}-{resource}-{fmt}-{kernel}:",
        f"  name: {name}, fused MoE layer ({FMT_NAMES[fmt]} grouped expert GEMMs{suffix}) as {ENGINE_NAMES[kernel]} "
        "runs it, at large batch",
        f"  resource: {resource.replace('-', '_')}",
        f"  accelerator: {chip_id}",
        f"  tensor_format: {fmt}",
        f"  kernel: {kernel}",
        f"  achieved: {{value: {achieved / 1e12:.1f}, unit: TFLOP/s, sparsity: dense}}",
        f"  achieved_range: [{low / 1e12:.1f}, {high / 1e12:.1f}]",
        f"  peak: {{value: {median.peak.value:g}, unit: TFLOP/s, sparsity: dense}}",  # type: ignore[attr-defined]
        f"  by_rows: [{', '.join(f'[{b}, {v:.2f}]' for b, v in rows.items())}]",
        f"  by_columns: [{', '.join(f'[{b}, {v:.3f}]' for b, v in curve.items())}]",
        f"  columns: {cols}",
        f"  method: {ENGINE_NAMES[kernel]} alone ({source}), experts {layout}, at large batch",
        "  note: >-",
        f"    The share of the dense {FMT_NAMES[fmt]} peak {ENGINE_NAMES[kernel]} reaches at large batch with {whole}: "
        f"{achieved / peak:.1%}, read on {read}. {WHY[kernel]} in place of the engines' median (the entry without a "
        "kernel). by_rows is its own ramp, by_columns its own curve, read as the median entries read each engine "
        "(scripts/derive_moe_kernel.py).",
        "  sources:",
        *_sources(kernel, chip, name, dtype),
    ]


def floor_by_hidden(repo: str, chip: str, t: str, dtype: str, s: Stream, kernel: str) -> dict[int, list[float]]:
    """`kernel`'s one-token points in table `t` by hidden size: each the latency less the touched weights at the
    datasheet rate (seconds), where those weights fit half the L2 cache; every gated shape with balanced routing and
    experts sliced by TP of 1 to 8, DeepSeek-V3's included (one token touches its top-k experts under any routing)."""
    df = table(repo, chip, t)
    if df is None:
        return {}
    df = df[(df.moe_dtype == dtype) & (df.distribution == "balanced") & (df.moe_ep_size == 1) & (df.moe_tp_size <= 8)
            & (df.num_tokens == 1) & (df.kernel_source == kernel)]
    out: dict[int, list[float]] = {}
    for h, lat, k, inter, tp in zip(df.hidden_size, df.latency, df.topk, df.inter_size, df.moe_tp_size, strict=True):
        w = k * 3 * h * inter / tp * s.bpp
        if w <= s.l2 / 2:
            out.setdefault(int(h), []).append(lat * 1e-3 - w / s.peak)
    return out


def _by_hidden(points: dict[int, list[float]], fixed: float) -> list[tuple[int, float]]:
    """The fixed cost's multiple at each hidden size measured at least twice: its points' median over `fixed`."""
    return [(h, round(statistics.median(v) / fixed, 2)) for h, v in sorted(points.items()) if len(v) >= 2]


def _fixed_at(curve: list[tuple[int, float]], fixed: float) -> Callable[[int], float]:
    def at(h: int) -> float:
        if not curve or h <= curve[0][0]:
            return fixed * (curve[0][1] if curve else 1.0)
        for (h0, m0), (h1, m1) in itertools.pairwise(curve):
            if h <= h1:
                return fixed * (m0 + (m1 - m0) * (h - h0) / (h1 - h0))
        return fixed * curve[-1][1]
    return at


def weights_entry(cat_eff: dict[str, object], chip_id: str, chip: str, fmt: str, repo: str, kernel: str,
                  s: Stream) -> list[str] | None:
    """The kernel's weight-stream entry's YAML lines (its fixed cost and its shares net of it), or None."""
    t, source = KERNELS[kernel][:2]
    dtype = TABLE_DTYPE[kernel][0] if kernel in TABLE_DTYPE else FORMATS[fmt]
    curve: list[tuple[int, float]] = []
    if kernel == "trtllm-gen":  # its block-scaled FP8 fixed cost grows with K: read by hidden size
        points = floor_by_hidden(repo, chip, t, dtype, s, source)
        every = [x for v in points.values() for x in v]
        if len(every) < 3:
            return None
        fixed = (statistics.median(every), len(every))
        curve = _by_hidden(points, fixed[0])
        curve = curve if len(curve) >= 2 else []  # one hidden size measured: no curve
    else:
        found_fixed = floor(repo, chip, t, dtype, s, source, FLOOR_TP.get(kernel, 8))
        if found_fixed is None:
            return None
        fixed = found_fixed
    found = engine_shares(repo, chip, t, dtype, s, fixed[0], kernel=source,
                          fixed_at=_fixed_at(curve, fixed[0]) if curve else None)
    if found is None or 1 not in found[1] or max(found[1].values()) > 1:  # over 1: its fixed cost is overstated there
        return None
    shares = found[1]
    median = cat_eff.get(f"{chip_id}-moe-weights-{fmt}") or cat_eff[f"{chip_id}-moe-weights-fp8"]
    name = str(median.name).split(",")[0]  # type: ignore[attr-defined]
    by_hidden = ([f"  fixed_by_hidden: [{', '.join(f'[{h}, {m:.2f}]' for h, m in curve)}]"] if curve else [])
    how = (f"the median over its {fixed[1]} one-token points whose touched weights fit half the L2 cache of the latency "
           "less those weights at the datasheet rate" + (", DeepSeek-V3's shape among them" if kernel == "trtllm-gen" else "")
           + (f", experts sliced up to {FLOOR_TP[kernel]} ways" if kernel in FLOOR_TP else "")
           + ", which the time model charges its experts op in place of its kernels' count" + (
               ", scaled by fixed_by_hidden: its points' median at each hidden size measured twice or more, over it "
               "(the shapes at one size differ in experts and top-k as well)" if curve else ""))
    return [
        f"{chip_id}-moe-weights-{fmt}-{kernel}:",
        f"  name: {name}, {FMT_NAMES[fmt]} fused MoE layer's expert weight stream at small batch as {ENGINE_NAMES[kernel]} "
        "runs it",
        "  resource: moe_weights",
        f"  accelerator: {chip_id}",
        f"  tensor_format: {fmt}",
        f"  kernel: {kernel}",
        f"  fixed: {{value: {fixed[0] * 1e6:.1f}, unit: us}}",
        *by_hidden,
        f"  achieved: {{value: {shares[1] * s.peak / 1e12:.3f}, unit: TB/s, direction: shared}}",
        f"  achieved_range: [{min(shares.values()) * s.peak / 1e12:.3f}, {max(shares.values()) * s.peak / 1e12:.3f}]",
        f"  peak: {{value: {median.peak.value:g}, unit: TB/s, direction: shared}}",  # type: ignore[attr-defined]
        f"  by_tokens: [{', '.join(f'[{b}, {v:.2f}]' for b, v in shares.items())}]",
        f"  method: {ENGINE_NAMES[kernel]} alone ({source}), gated shapes, experts sliced by tensor parallelism of 1 to 8, "
        "1 to 8 rows per touched expert",
        "  note: >-",
        f"    The share of the HBM datasheet bandwidth {ENGINE_NAMES[kernel]} reaches while it streams the weights of the "
        f"experts a decode step touches, net of its own fixed cost a layer ({fixed[0] * 1e6:.1f} us: {how}) and of its "
        f"activations at the streaming share. {WHY[kernel]} in place of the engines' median (the entry without a "
        "kernel), whose fixed charge is the time model's kernels. by_tokens by the rows each touched expert sees, "
        "where the layer is bound by its weights (scripts/derive_moe_kernel.py).",
        "  sources:",
        *_sources(kernel, chip, name, dtype),
    ]


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo = sys.argv[1]
    cat = load()
    eng = engine_catalog(cat)
    tm = eng.time_models["measured-fractions"]
    effs = dict(cat.efficiencies)
    for kernel, (_, _, formats, weights, compute) in KERNELS.items():
        for chip_id, chip in CHIPS.items():
            if kernel in CHIPS_OF and chip_id not in CHIPS_OF[kernel]:
                continue
            for fmt in formats:
                peak = eng.chips[chip_id].dense_flops.get(fmt)
                if peak is None and compute:
                    continue
                entries = ([compute_entry(effs, chip_id, chip, fmt, resource, repo, peak, kernel) for resource in LAYOUTS]
                           if compute and peak is not None else [])
                if weights and (f"{chip_id}-moe-weights-{fmt}" in effs or kernel in ("trtllm-gen", "marlin")):
                    hbm = eng.chips[chip_id].hbm_bytes_per_s
                    stored = TABLE_DTYPE[kernel][1] if kernel in TABLE_DTYPE else WEIGHT_FORMATS[fmt]
                    s = Stream(eng.precisions[stored].bytes_per_param, hbm, hbm * tm.chip(chip_id).hbm, L2_BYTES[chip_id])
                    entries.append(weights_entry(effs, chip_id, chip, fmt, repo, kernel, s))
                for lines in entries:
                    if lines is None:
                        print(f"# {chip_id} {fmt}: {kernel} not timed there (or not its engine's kernel); left out")
                        continue
                    print("\n".join(lines))
                    print()


if __name__ == "__main__":
    main()
