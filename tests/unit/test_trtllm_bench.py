"""The TensorRT-LLM performance overview's runs record the limits trtllm-bench computed for them.

The overview's commands pass neither --max_batch_size nor --max_num_tokens, so trtllm-bench chose them from the
GPUs' memory, the checkpoint and the requests' lengths (tensorrt_llm/bench/build/tuning.py at 04cba88:
calc_engine_setting and finetune_setting; bench/benchmark/utils/general.py at 0171265: get_settings). Each row's
`engine_limits` is checked here against that arithmetic, transcribed, from the catalog's own figures: the device
total the row states, which must be one the catalog records (`device_gib`), the model's parameters (for an NVFP4
checkpoint the stored elements its row states), its layers, KV heads and head size. With pipeline stages (the RTX
PRO 6000 tables) the requests are divided among the stages' micro-batches, and a row's max_num_seqs is the stages
times the max batch size (one micro-batch in each stage)."""

from __future__ import annotations

import math
import re

from snippets.data import Catalog, Measurement
from snippets.data.export import engine_catalog
from snippets.engine.params import total_params
from snippets.engine.specs import EngineCatalog

GIB = 2**30
FRACTION = 0.90
"""trtllm-bench's --kv_cache_free_gpu_mem_fraction default, as the rows read it."""
BUILD_FRACTION = 0.95
"""calc_engine_setting's own default, which trtllm-bench build --dataset keeps (the 0.17 overview's engines)."""


def device_gib(catalog: Catalog, eng: EngineCatalog, m: Measurement) -> float:
    """The device total a row's arithmetic took (its `engine_limits.how` states it, in GiB to a tenth), which must be
    one the catalog records for its accelerator: the CUDA total the engine budgets (or its label), or NVML's (nvidia-
    smi's), which trtllm-bench reads; the recorded figure, unrounded."""
    assert m.engine_limits is not None and m.engine_limits.how is not None
    stated = re.search(r" x ([\d.]+) GiB", m.engine_limits.how)
    assert stated is not None, m.engine_limits.how
    acc = catalog.accelerators[m.accelerator]
    totals = [eng.chips[m.accelerator].capacity_bytes / GIB]
    if acc.memory_reported is not None:
        totals.append(acc.memory_reported.bytes / GIB)
    match = [t for t in totals if abs(t - float(stated.group(1))) < 0.05]
    assert match, (m.accelerator, stated.group(1), totals)
    return match[0]


def requests_fit(catalog: Catalog, eng: EngineCatalog, m: Measurement, engine_gib: float, kv_bytes: int,
                 fraction: float) -> float:
    """calc_engine_setting's count of requests the KV cache holds: the GPUs' reported total (TP x PP of them) less the
    weights (`engine_gib`), times `fraction`, over the KV bytes of one request (every layer, at least one KV head per
    TP rank, `kv_bytes` an element) at the row's prompt plus output."""
    assert m.layout is not None and m.input_tokens is not None and m.output_tokens is not None
    arch = eng.models[m.model].architecture
    tp = m.layout.tp
    per_token = 2 * arch.layers * max(tp, arch.kv_heads) * arch.head_dim * kv_bytes / GIB
    free = tp * m.layout.pp * device_gib(catalog, eng, m) - engine_gib
    return free * fraction / (per_token * (m.input_tokens + m.output_tokens))


def finetune(requests: float, isl: int, osl: int, pp: int = 1) -> tuple[int, int]:
    """tuning.py's finetune_setting (optimistic tuning on): the requests divided among `pp` pipeline stages."""
    raw_bs = min(requests, 4096) / pp
    raw_token = min(raw_bs * (1 + isl / osl), 32768)
    if raw_bs < 256:
        bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        bs = 128 * math.ceil(raw_bs / 128)
    else:
        bs = 256 * math.ceil(raw_bs / 256)
    if raw_token < 4096:
        tokens = max(2048, 256 * math.ceil(raw_token / 256))
    elif raw_token < 8192:
        tokens = 512 * math.ceil(raw_token / 512)
    else:
        tokens = 1024 * math.ceil(raw_token / 1024)
    return bs, tokens


def test_finetune_by_hand():
    # 273 requests fit: batch 128 x ceil(273 / 128) = 384; tokens 273 x 2 = 546, raised to the 2,048 floor
    assert finetune(273.4, 1000, 1000) == (384, 2048)
    # 4,132 requests fit: capped at 4,096, a multiple of 256; 4,096 x 2 = 8,192 tokens, 1,024 x 8
    assert finetune(4132, 128, 128) == (4096, 8192)
    # 48 requests: at least 64
    assert finetune(48, 20000, 2000) == (64, 2048)
    # 1,650 requests over eight stages: 206 a micro-batch, 32 x ceil(206 / 32) = 224; tokens 206 x 17 = 3,506 -> 3,584
    assert finetune(1650, 2048, 128, 8) == (224, 3584)


def test_perf_overview_rows_record_trtllm_benchs_own_limits(catalog: Catalog):
    eng = engine_catalog(catalog)
    rows = {k: m for k, m in catalog.measurements.items()
            if m.engine_version is not None and m.engine_version.startswith("perf-overview at commit 00f37686")}
    assert len(rows) >= 328  # every cell of the overview's tables (its RTX PRO 6000 tables and Qwen3-30B-A3B's too)
    for rid, m in rows.items():
        assert m.engine_limits is not None and m.layout is not None, rid
        assert m.input_tokens is not None and m.output_tokens is not None, rid
        if m.precision == "nvfp4":
            stored = re.search(r"about (\d+) billion for NVFP4", m.engine_limits.how)
            assert stored is not None, rid
            engine = int(stored.group(1)) * 1e9 * 0.5 / GIB
        else:
            engine = total_params(eng.models[m.model].architecture) / GIB
        pp = m.layout.pp
        bs, tokens = finetune(requests_fit(catalog, eng, m, engine, 1, FRACTION), m.input_tokens, m.output_tokens,
                              pp)  # FP8 KV
        tokens = max(tokens, m.input_tokens + bs)  # get_settings: the longest prompt and the batch fit one step
        assert (m.engine_limits.max_num_seqs, m.engine_limits.max_num_batched_tokens) == (bs * pp, tokens), rid


def test_v017_overview_rows_record_the_limits_their_engines_were_built_with(catalog: Catalog):
    # the 0.17 overview built a TensorRT engine per request shape (trtllm-bench build --dataset), whose
    # calc_engine_setting keeps its 0.95 default; FP8 engines store weights and KV cache in one byte, FP16 ones in
    # two; the throughput command reads the engine's limits as built (chunked context on: no prompt raises them)
    eng = engine_catalog(catalog)
    rows = {k: m for k, m in catalog.measurements.items() if m.engine_version == "0.17"
            and m.engine == "TensorRT-LLM (TensorRT engine, trtllm-bench throughput)"}
    assert len(rows) >= 275  # every cell of the four models on the four GPUs the site holds
    for rid, m in rows.items():
        assert m.engine_limits is not None and m.layout is not None, rid
        assert m.input_tokens is not None and m.output_tokens is not None, rid
        assert m.chunked_prefill is not None and m.chunked_prefill.enabled, rid
        size = {"fp8": 1, "fp16": 2}[m.precision]
        assert m.kv_precision == m.precision, rid
        engine = total_params(eng.models[m.model].architecture) * size / GIB
        requests = requests_fit(catalog, eng, m, engine, size, BUILD_FRACTION)
        assert (m.engine_limits.max_num_seqs, m.engine_limits.max_num_batched_tokens) == \
            finetune(requests, m.input_tokens, m.output_tokens), rid
