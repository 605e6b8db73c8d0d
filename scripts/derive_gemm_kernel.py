"""Derive TensorRT-LLM's own dense FP4 GEMM entries of data/efficiencies.yaml (resources gemm_weights and
gemm_compute with `kernel: trtllm`) from AIConfigurator's measured GEMM tables, and print each entry whole.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_gemm_kernel.py /path/to/aiconfigurator [chip ...]

The engines' median entries (scripts/derive_gemm.py) read three tables of which two time one kernel: SGLang and vLLM
both call FlashInfer's CuTe DSL NVFP4 GEMM on Blackwell (the tables' kernel_source: sglang_flashinfer_cutedsl_nvfp4,
FlashInferCuteDslNvFp4LinearKernel), so their median is that kernel's. TensorRT-LLM's PyTorch backend calls its own
FP4 GEMM (the table's kernel_source torch_flow: AIConfigurator's collector times TensorRT-LLM's own Linear module,
collector/trtllm/collect_gemm.py). This script reads TensorRT-LLM's table
alone, exactly as scripts/derive_gemm.py reads each table (its fixed cost per call the median latency of its tiny
GEMMs; the weight stream at 1 to 256 tokens over the shapes whose weights are at least twice the L2 cache; the
large-batch share over the shapes with every dimension at least 4,096), and prints each chip's two entries; the
compute entry gives no by_gflop, so the median's ramp stays (the export reads an engine's entries over the median's)."""
from __future__ import annotations

import sys

from derive_gemm import CHIPS, format_table, table_shares  # the same tables, read the same way (run from scripts/)

TABLE = "trtllm/1.3.0rc20"
NAMES = {"b200": ("B200", "b200_sxm"), "gb200": ("GB200", "gb200"), "b300": ("B300", "b300_sxm"),
         "gb300": ("GB300", "gb300"), "rtx-pro-6000-server": ("RTX PRO 6000 Server Edition", "rtx_pro_6000_server")}
URL = ("https://github.com/ai-dynamo/aiconfigurator/tree/095f58a51c4ca8e61b66ec108d86f223f8d559ce/aic-core/src/"
       "aiconfigurator_core/systems/data/{dir}/gemm")
COLLECTOR = ("https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/collector/trtllm/"
             "collect_gemm.py")


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo, chosen = sys.argv[1], sys.argv[2:] or list(NAMES)
    eng = engine_catalog(load())
    for chip_id in chosen:
        chip, l2 = CHIPS[chip_id]
        name, directory = NAMES[chip_id]
        hbm = eng.chips[chip_id].hbm_bytes_per_s
        bpp = eng.precisions["nvfp4"].bytes_per_param
        peak = eng.chips[chip_id].dense_flops["fp4"]
        got = format_table(repo, chip, TABLE, "nvfp4")
        if got is None:
            continue
        df, fixed = got
        w, c = table_shares(df, fixed, bpp, hbm, peak, l2)
        if c is None:
            continue
        title = (f"ai-dynamo/aiconfigurator, measured GEMM tables of {name} (trtllm 1.3.0rc20; gemm_perf.parquet, "
                 "NVFP4 rows)")
        source = (f"  sources:\n    - url: {URL.format(dir=directory)}\n      title: {title}\n      read: 2026-12-05\n"
                  f"    - url: {COLLECTOR}\n      title: 'ai-dynamo/aiconfigurator, collector/trtllm/collect_gemm.py: "
                  "the table times TensorRT-LLM''s own Linear module (tensorrt_llm._torch.modules.linear) with NVFP4 "
                  "weights'\n      read: 2026-12-05")
        why = ("    TensorRT-LLM's own FP4 GEMM, which its PyTorch backend's Linear calls (the table's torch_flow rows),\n"
               "    where SGLang and vLLM both call FlashInfer's CuTe DSL kernel (the engines' median entry is that\n"
               "    kernel's); an engine whose memory policy says gemm_kernel trtllm reads this entry in place of the\n"
               f"    median. Read as scripts/derive_gemm.py reads each table, net of its fixed cost per call\n"
               f"    ({fixed * 1e6:.1f} us), by scripts/derive_gemm_kernel.py.")
        v1 = w[1] * hbm / 1e12
        print(f"{chip_id}-gemm-weights-fp4-trtllm:")
        print(f"  name: {name}, TensorRT-LLM's FP4 GEMM weight stream at small batch")
        print("  resource: gemm_weights")
        print(f"  accelerator: {chip_id}")
        print("  tensor_format: fp4")
        print("  kernel: trtllm")
        print(f"  achieved: {{value: {v1:.3f}, unit: TB/s, direction: shared}}")
        print(f"  achieved_range: [{v1:.3f}, {v1:.3f}]")
        print(f"  peak: {{value: {hbm / 1e12:g}, unit: TB/s, direction: shared}}")
        print(f"  by_tokens: [{', '.join(f'[{tok}, {v:.2f}]' for tok, v in w.items())}]")
        print("  method: TensorRT-LLM's FP4 GEMM at 1 to 256 tokens, weights at least twice the L2 cache")
        print("  note: >-")
        print("    The share of the HBM datasheet bandwidth a decode step's matrix products reach while they stream")
        print("    their weights, by tokens, as run by")
        print(why)
        print(source)
        print()
        vc = c * peak / 1e12
        print(f"{chip_id}-gemm-compute-fp4-trtllm:")
        print(f"  name: {name}, TensorRT-LLM's FP4 GEMM throughput at large batch")
        print("  resource: gemm_compute")
        print(f"  accelerator: {chip_id}")
        print("  tensor_format: fp4")
        print("  kernel: trtllm")
        print(f"  achieved: {{value: {vc:.1f}, unit: TFLOP/s, sparsity: dense}}")
        print(f"  achieved_range: [{vc:.1f}, {vc:.1f}]")
        print(f"  peak: {{value: {peak / 1e12:g}, unit: TFLOP/s, sparsity: dense}}")
        print("  method: TensorRT-LLM's FP4 GEMM, every dimension at least 4,096")
        print("  note: >-")
        print("    The share of the dense FP4 peak a prefill's matrix products reach once every dimension is large,")
        print("    the median over the shapes, as run by")
        print(why)
        print(source)
        print()


if __name__ == "__main__":
    main()
