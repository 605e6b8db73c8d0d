"""Memory as vLLM budgets it, against hand-worked cases and the start-up logs the data cites.

vLLM (v1 gpu_worker.determine_available_memory): pool = reported total x gpu_memory_utilization; available KV
memory = pool - weights - activation peak - memory outside PyTorch. The activation peak is the larger of a dummy
forward pass of max_num_batched_tokens tokens and the sampler over one logit row per dummy request
(min(max_num_seqs, max_num_batched_tokens) rows x vocabulary x bytes per logit). It refuses to start when the
available memory is not positive, or cannot hold one sequence of max_model_len tokens
(v1/core/kv_cache_utils.check_enough_kv_cache_memory).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from snippets.data import load
from snippets.data.export import engine_catalog
from snippets.engine import Layout, RefusedLayout, deploy, setting
from snippets.engine.deployment import KVCacheRefused, as_shipped, auto_kv_precision
from snippets.engine.layout import block_quant_problem, layout_problems
from snippets.engine.memory import (
    KVCacheSize,
    activation_peak,
    decode_kv_read,
    estimated_max_model_len,
    forward_peak_bytes,
    kv_bytes_per_sequence,
    kv_bytes_per_token_per_gpu,
    kv_cache_groups,
    padded_expert_shape,
    profile_rows,
    sampler_peak_bytes,
    stage_weights,
    vision_bytes,
)
from snippets.engine.params import cached_layers, chunked_layers, layer_attention, vision_params
from snippets.engine.specs import EngineCatalog, ServeDefaults

GiB = 2**30
H100_CUDA_TOTAL = 79.22 * GiB
"""What torch.cuda.mem_get_info reports on an H100 SXM (vLLM's log in vllm-project/vllm#10511)."""


@pytest.fixture(scope="module")
def eng() -> EngineCatalog:
    return engine_catalog(load())


def with_h100_total(eng: EngineCatalog, total: float) -> EngineCatalog:
    chips = dict(eng.chips)
    chips["h100-sxm"] = replace(chips["h100-sxm"], capacity_bytes=total, capacity_reported=True)
    return replace(eng, chips=chips)


# ----------------------------------------------------------------------------------------- the policy's figures


def test_serve_defaults_follow_the_device_as_arg_utils_sets_them(eng):
    # vllm serve: 1024 sequences and 8,192 batched tokens on a device of 70 GiB or more that is not an A100,
    # 256 and 2,048 elsewhere
    pol = eng.memory_policies["vllm-default"]
    for chip, seqs, tokens in (("h100-sxm", 1024, 8192), ("h200-sxm", 1024, 8192), ("b200", 1024, 8192),
                               ("mi300x", 1024, 8192), ("a100-80gb-sxm", 256, 2048), ("a100-40gb-sxm", 256, 2048),
                               ("l40s", 256, 2048), ("l4", 256, 2048)):
        p = pol.for_chip(eng.chips[chip])
        assert (p.max_num_seqs, p.max_num_batched_tokens) == (seqs, tokens), chip
    # the A100 80GB reports 80 GiB, above the threshold: it keeps the small defaults by name, as vLLM's check does
    assert eng.chips["a100-80gb-sxm"].capacity_bytes >= 70 * GiB
    # vLLM's rule is the device's name: every chip named an A100 keeps the small defaults, the PCIe card among them
    # (it had the large ones while the list named only the SXM modules), and no other chip is held back
    named = {c.id for c in eng.chips.values() if "a100" in c.name.lower()}
    assert "a100-80gb-pcie" in named and pol.large_device_excludes == named
    assert (pol.for_chip(eng.chips["a100-80gb-pcie"]).max_num_seqs,
            pol.for_chip(eng.chips["a100-80gb-pcie"]).max_num_batched_tokens) == (256, 2048)


def test_memory_outside_pytorch_by_tp_degree(eng):
    # vLLM 0.11.0's worker, whose baseline is taken after NCCL has started (llm-d-benchmark's logs on H100s):
    # 0.13 GiB at TP1, 0.55 GiB at TP2; an unmeasured degree takes the figure of the largest measured degree below it
    pol = eng.memory_policies["vllm-default"]
    assert pol.non_torch_bytes(1) == pytest.approx(0.13 * GiB)
    assert pol.non_torch_bytes(2) == pytest.approx(0.55 * GiB)
    assert pol.non_torch_bytes(4) == pytest.approx(0.55 * GiB)
    assert pol.non_torch_bytes(8) == pytest.approx(0.55 * GiB)
    assert pol.non_torch_bytes(16) == pytest.approx(0.55 * GiB)


@pytest.mark.parametrize(("model", "precision", "tp", "weights", "kv", "tolerance"), [
    # vLLM 0.11.0 on an H100 reporting 79.18 GiB, vllm serve's defaults (1,024 sequences, 8,192 batched tokens),
    # --gpu-memory-utilization 0.9, --max-model-len 16000: the logged weights and "Available KV cache memory"
    # (llm-d-benchmark, config_explorer/empirical-vllm-memory-results.md). The policy's sampler (38.9 bytes a logit)
    # and memory outside PyTorch are read from these logs, so the dense rows check the weights and the arithmetic;
    # gpt-oss's MXFP4 checkpoints keep attention in BF16 (config.json's modules_to_not_convert; data/models.yaml
    # keeps_16bit): counted so, the weights come to 12.82 and 60.77 GiB (11.94 and 59.46 with attention in MXFP4).
    # What the logs hold beyond that, 0.65 and 3.61 GiB, is what vLLM 0.11.0 leaves alive after loading MXFP4 experts
    # on Hopper with triton_kernels (quantization/mxfp4.py in PyPI's wheel: get_mxfp4_backend picks TRITON when
    # triton_kernels is installed; process_weights_after_loading turns the biases to FP32, swizzles each expert's
    # values and scales, and deletes the old values but not the old scales), where torch is 2.8.1 or newer
    # (mxfp4_utils._swizzle_mxfp4; below it the layout is strided, no copy): triton_kernels' HopperMXScaleLayout
    # (v3.5.1, the copy TensorRT-LLM vendors) pads the scales' rows to 256, so each expert holds a second copy of its
    # scales, 5,888 x 90 and 3,072 x 90 bytes, and 2 more bytes a bias, 823,680 bytes in all; with YaRN's FP32 rotary
    # cache (32 MiB), 0.62 and 3.57 GiB, within 0.05 GiB of the logs ("Model loading took" is torch's allocated bytes,
    # cuda.get_current_memory_usage). But the wheel pins torch==2.8.0 (its METADATA's Requires-Dist, read 2026-12-07),
    # under which the scales keep the strided layout and nothing is copied: the account holds only if the logged image
    # ran a newer torch than its pin, which the logs do not say. So it stays a fit to two figures, not a mechanism
    # shown, and the engine counts none of it: the KV cache's room shows the difference.
    ("llama-3.1-8b", "bf16", 1, 14.99, 51.38, 0.01),
    ("qwen3-32b", "bf16", 1, 61.03, 4.45, 0.01),
    ("qwen3-32b", "bf16", 2, 30.59, 34.49, 0.01),
    ("llama-3.1-70b", "fp8", 2, 33.88, 32.00, 0.01),       # RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic
    ("gpt-oss-20b", "mxfp4", 1, 13.47, 50.28, 0.015),        # 50.86 GiB (51.73 with attention in MXFP4)
    ("gpt-oss-120b", "mxfp4", 1, 64.38, 3.33, 0.13),         # 2.90 GiB (4.21 with attention in MXFP4)
])
def test_kv_memory_against_vllm_0110_logs(eng, model: str, precision: str, tp: int, weights: float, kv: float,
                                          tolerance: float) -> None:
    e = with_h100_total(eng, 79.18 * GiB)
    m = setting(e, model, precision, "reference", accelerator="h100-sxm", context_tokens=16000).memory(Layout(tp), 1)
    assert abs(m.kv_room / GiB - kv) / kv <= tolerance, (m.kv_room / GiB, kv)
    if not model.startswith("gpt-oss"):
        assert m.weights / GiB == pytest.approx(weights, abs=0.1)
    else:
        arch = e.models[model].architecture
        assert arch.moe is not None and arch.hidden_size == arch.moe.expert_ffn_size == 2880
        rows = (math.ceil(2 * 2880 / 256) * 256, math.ceil(2880 / 256) * 256)  # 5,888 and 3,072
        per_expert = (rows[0] + rows[1]) * 2880 / 32 + 2 * 3 * 2880  # a padded copy of the scales; FP32 biases
        left = arch.layers * arch.moe.experts * per_expert + 32 * 2**20  # and the rotary cache
        assert weights - m.weights / GiB == pytest.approx(left / GiB, abs=0.05)


def test_marlin_holds_gpt_oss_experts_padded_as_vllm_loads_them(eng):
    # vLLM's Marlin MXFP4 kernel needs n % 256 == 0 and k % 128 == 0 (quantization/mxfp4.py, create_weights, read in
    # PyPI's 0.11.0 wheel): each expert's 2,880 x 2,880 matrices are allocated as 3,072 x 2,944 before the checkpoint
    # is loaded into them. By hand for gpt-oss-120b on one H100: 36 blocks x 128 experts x 3 matrices x (3,072 x 2,944
    # - 2,880 x 2,880) weights at MXFP4's 4.25 bits, and the biases' padding (2 x 64 + 192 a expert) at 16 bits.
    arch = eng.models["gpt-oss-120b"].architecture
    assert arch.moe is not None and arch.hidden_size == arch.moe.expert_ffn_size == 2880
    extra = 36 * 128 * (3 * (3072 * 2944 - 2880 * 2880) * 4.25 / 8 + (2 * 64 + 192) * 2)
    plain = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm", context_tokens=131072)
    marlin = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm", context_tokens=131072,
                     moe_kernel="marlin")
    assert plain.expert_pad == (1, 64) and marlin.expert_pad == (256, 128)
    assert padded_expert_shape(arch, Layout(1), (256, 128)) == ((2880, 2880), (3072, 2944))
    assert padded_expert_shape(arch, Layout(8), (256, 128)) == ((2880, 360), (3072, 384))  # a 1/TP slice of each
    assert padded_expert_shape(arch, Layout(8, ep=8), (1, 64)) == ((2880, 2880), (2880, 2880))  # whole experts
    with pytest.raises(ValueError, match="no experts"):
        padded_expert_shape(eng.models["llama-3.1-8b"].architecture, Layout(1), (256, 128))
    a, b = plain.memory(Layout(1), 1), marlin.memory(Layout(1), 1)
    assert b.weights - a.weights == pytest.approx(extra, rel=1e-12)
    # vllm-project/vllm#23278 (vLLM 0.10.1 at its defaults on an H100 80GB, Marlin named in its log): "Model loading
    # took 65.9651 GiB", "Available KV cache memory: -2.14 GiB", and the engine does not start
    assert b.weights / GiB == pytest.approx(65.97, abs=0.1) and a.weights / GiB == pytest.approx(60.77, abs=0.01)
    assert b.kv_room / GiB == pytest.approx(-2.14, abs=0.1)
    refused = marlin.kv_refusal(Layout(1))
    assert refused is not None and "No available memory for the cache blocks" in refused.engine_message
    # vllm-project/vllm#27508 (an H100, --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024): "Available KV
    # cache memory: 1.71 GiB", and vLLM asks for a shorter context
    tight = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm", context_tokens=131072,
                    moe_kernel="marlin", memory_fraction=0.95, max_num_batched_tokens=1024)
    assert tight.memory(Layout(1), 1).kv_room / GiB == pytest.approx(1.71, abs=0.1)
    refused = tight.kv_refusal(Layout(1))
    assert refused is not None and "estimated maximum model length" in refused.engine_message
    # at TP8 each GPU holds every expert's 360-wide slice: Marlin rounds it up to 384 and the hidden size to 3,072;
    # the Triton kernel rounds the slice up to 384 too (a multiple of 64), and leaves the hidden size
    t8 = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm", moe_kernel="marlin")
    p8 = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm")
    none = replace(p8, memory_policy=replace(p8.memory_policy, mxfp4_experts=()))
    base = none.memory(Layout(8), 1).weights
    assert t8.memory(Layout(8), 1).weights - base == pytest.approx(
        36 * 128 * (3 * (3072 * 384 - 2880 * 360) * 4.25 / 8 + (2 * 24 + 192) * 2), rel=1e-12)
    assert p8.memory(Layout(8), 1).weights - base == pytest.approx(
        36 * 128 * (3 * (2880 * 384 - 2880 * 360) * 4.25 / 8 + 2 * 24 * 2), rel=1e-12)


def test_mxfp4_padding_is_the_engines_and_the_checkpoints(eng):
    # ROCm's Triton path pads both sizes to 256 (mxfp4.py); vLLM picks Marlin below compute capability 9 and
    # FlashInfer's kernel on capability 10.0 (B200, not B300); SGLang 0.5.6 pads to 256 on every capability-10 chip
    # and the slice to 32 elsewhere on NVIDIA, and records nothing for ROCm; a checkpoint in another format
    # (Qwen3-235B in FP8) is never padded
    amd = setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="mi300x")
    assert amd.expert_pad == (256, 256)
    extra = 36 * 128 * (3 * (3072 * 3072 - 2880 * 2880) * 4.25 / 8 + (2 * 192 + 192) * 2)
    unpadded = replace(amd, memory_policy=replace(amd.memory_policy, mxfp4_experts=()))
    assert amd.memory(Layout(1), 1).weights - unpadded.memory(Layout(1), 1).weights == pytest.approx(extra, rel=1e-12)
    pads = {(acc, pol): setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator=acc,
                                memory_policy=pol).expert_pad
            for acc in ("h100-sxm", "a100-80gb-sxm", "b200", "b300", "mi300x")
            for pol in ("vllm-default", "sglang-default")}
    assert pads == {("h100-sxm", "vllm-default"): (1, 64), ("h100-sxm", "sglang-default"): (1, 32),
                    ("a100-80gb-sxm", "vllm-default"): (256, 128), ("a100-80gb-sxm", "sglang-default"): (1, 32),
                    ("b200", "vllm-default"): (256, 256), ("b200", "sglang-default"): (256, 256),
                    ("b300", "vllm-default"): (1, 64), ("b300", "sglang-default"): (256, 256),
                    ("mi300x", "vllm-default"): (256, 256), ("mi300x", "sglang-default"): (1, 1)}
    # vLLM v0.21 takes FlashInfer's kernel on the whole capability-10 family, B300 included
    assert [setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator=acc, memory_policy="vllm-v021").expert_pad
            for acc in ("h100-sxm", "a100-80gb-sxm", "b200", "b300")] == [(1, 64), (256, 128), (256, 256), (256, 256)]
    # a kernel the run names takes its own entry, the chip's before the vendor's: Marlin on a B200 pads as Marlin
    assert setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="b200",
                   moe_kernel="marlin").expert_pad == (256, 128)
    assert setting(eng, "qwen3-235b-a22b", "fp8", "reference", accelerator="h100-sxm",
                   moe_kernel="marlin").expert_pad == (1, 1)


def test_gpustacks_a100_run_starts_as_vllm_0110_started_it(eng):
    # A documented deployment, not fitted: GPUStack ran `vllm serve Qwen/Qwen3-32B --max-model-len 32768` (vLLM
    # 0.11.0) on one A100 80GB SXM and published its throughput. The budget: pool 0.9 x 79.26 = 71.33 GiB, weights
    # 61.02 GiB, the sampler's 256 rows x 151,936 logits x 38.9 bytes = 1.41 GiB, 0.13 GiB outside PyTorch: 8.77
    # GiB of KV room, enough for one 32,768-token sequence (64 layers x 2 x 8 x 128 x 2 bytes x 32,768 = 8.00 GiB).
    # With the older worker's 1.79 GiB the room would be 7.11 GiB and vLLM would have refused it, which it did not.
    st = setting(eng, "qwen3-32b", "bf16", "reference", context_tokens=32768, accelerator="a100-80gb-sxm")
    m = st.memory(Layout(1))
    assert m.weights / GiB == pytest.approx(61.02, abs=0.005)
    assert m.activations / GiB == pytest.approx(1.41, abs=0.005)
    assert m.kv_per_sequence == 64 * 2 * 8 * 128 * 2 * 32768
    assert m.kv_room / GiB == pytest.approx(8.77, abs=0.01)
    assert st.kv_refusal(Layout(1)) is None
    assert m.kv_room - (1.79 - 0.13) * GiB < m.kv_per_sequence <= m.kv_room  # refused with 1.79, started with 0.13



def test_vllm_06_budgets_dstacks_405b_fp8_run_with_the_collectives_inside(eng):
    # dstack's benchmark_throughput.py run of Meta's Llama 3.1 405B FP8 on eight H100s (vLLM 0.6.3, data/measurements
    # .yaml): vLLM 0.6's worker took its baseline before NCCL started, so the collectives' buffers come out of the
    # pool (5.68 GiB at TP8, vllm-project/vllm#10702), and a max_model_len above 32,768 set chunked prefill on and
    # max_num_batched_tokens to 512. By hand: 0.9 x 79.22 = 71.30 GiB; weights 56.11 GiB (BF16 attention, FP8 MLPs);
    # the sampler's 256 rows x 128,256 logits x 41.3 bytes = 1.26 GiB (the 512-token forward pass is smaller);
    # 71.30 - 56.11 - 1.26 - 5.68 = 8.24 GiB, 8,575 blocks of 16 tokens at 126 x 2 x 128 x 2 bytes a token (one KV
    # head a GPU): 33 sequences of 4,096 tokens, where vLLM 0.11's budget (0.55 GiB outside PyTorch) holds 54.
    from snippets import calibration

    pol = eng.memory_policies["vllm-v06"]
    assert (pol.serve_defaults, pol.large_device_defaults) == (ServeDefaults(256, 512), None)
    assert pol.graphs_decode_only and pol.chunked_prefill and pol.mixed_steps
    row = next(r for r in calibration.rows(load(), "test") if r.id == "dstack-llama31405b-fp8-vllm-8xh100-in2048-out2048-b64")
    m, kv = row.deployment.memory, row.deployment.kv_cache
    assert (m.pool / GiB, m.weights / GiB) == (pytest.approx(71.30, abs=0.005), pytest.approx(56.11, abs=0.005))
    assert m.activations == pytest.approx(256 * 128_256 * 41.3, rel=1e-3)
    assert m.non_torch / GiB == pytest.approx(5.68)
    room = m.pool - m.weights - m.activations - m.non_torch
    assert room / GiB == pytest.approx(8.24, abs=0.005)
    assert kv.blocks == int(room // (16 * 126 * 2 * 128 * 2)) == 8575
    assert row.deployment.kv_sequences(4096) == 8575 * 16 // 4096 == 33
    assert row.prediction.admitted == 33
    # vLLM 0.11's budget of the same run, with the same limits
    newer = deploy(replace(row.deployment.setting, memory_policy=eng.memory_policies["vllm-default"]), Layout(8))
    assert newer.kv_sequences(4096) == 54

# ----------------------------------------------------------------------------------------- the activation peak


def test_forward_peak_worked_by_hand(eng):
    # Llama 3.1 70B at TP2, 8,192 tokens in BF16: residual, input and output (3 x 8,192 hidden) plus the gated
    # MLP's gate-and-up output and product (3 x 28,672 / 2) = 67,584 values a token, 2 bytes each
    arch = eng.models["llama-3.1-70b"].architecture
    assert forward_peak_bytes(arch, Layout(2), 8192, 2.0) == 8192 * 2 * (3 * 8192 + 3 * 28672 // 2)
    assert forward_peak_bytes(arch, Layout(2), 8192, 2.0) / GiB == pytest.approx(1.031, abs=1e-3)


def test_activation_peak_against_vllm_10511(eng):
    # Meta-Llama-3-8B, vLLM 0.6.5 on an H100: max_num_batched_tokens 8,192, max_num_seqs 256; the log shows
    # "PyTorch activation peak memory 1.26GiB" at TP1 and at TP2. The sampler sets the peak at both (the forward
    # pass alone would be 0.84 GiB at TP1 and halve its MLP at TP2): 256 rows x 128,256 logits x 38.9 bytes (vLLM
    # 0.11.0's figure) = 1.19 GiB, 6 % under that older release's log, which held about 41 bytes a logit.
    pol = replace(eng.memory_policies["vllm-default"], serve_defaults=ServeDefaults(256, 8192))
    arch = eng.models["llama-3.1-8b"].architecture  # Llama 3 8B's architecture
    for tp in (1, 2):
        peak = activation_peak(arch, Layout(tp), pol, 2.0) / GiB
        assert peak == pytest.approx(256 * 128_256 * 38.9 / GiB), tp
        assert (peak - 1.26) / 1.26 == pytest.approx(-0.056, abs=0.005), tp
    assert forward_peak_bytes(arch, Layout(1), 8192, 2.0) / GiB == pytest.approx(0.84, abs=0.005)
    assert forward_peak_bytes(arch, Layout(2), 8192, 2.0) < forward_peak_bytes(arch, Layout(1), 8192, 2.0)
    # the engine's weights per GPU are the log's: 14.96 and 7.48 GiB
    assert stage_weights(arch, eng.precisions["bf16"], Layout(1))[0].total / GiB == pytest.approx(14.96, abs=0.005)
    assert stage_weights(arch, eng.precisions["bf16"], Layout(2))[0].total / GiB == pytest.approx(7.48, abs=0.005)


def test_kv_memory_against_vllm_21348(eng):
    # A test row, not fitted: Qwen3-235B-A22B-FP8 on 4 x H100 at TP4, vllm serve defaults (1,024 sequences),
    # logged "Available KV cache memory: 8.11 GiB" of the 71.30 GiB pool. The engine: weights 55.11 GiB, the
    # sampler's 1,024 rows x 151,936 logits x 38.9 bytes = 5.64 GiB, 0.55 GiB outside PyTorch (TP2's figure):
    # 10.00 GiB, 23 % over the log (that run also loaded LMCache's KV connector, --kv-transfer-config).
    e = with_h100_total(eng, H100_CUDA_TOTAL)
    st = setting(e, "qwen3-235b-a22b", "fp8-block", "reference", accelerator="h100-sxm")
    m = st.memory(Layout(4), 1)
    assert m.weights / GiB == pytest.approx(55.1, abs=0.1)
    assert m.activations / GiB == pytest.approx(5.64, abs=0.01)
    assert m.kv_room / GiB == pytest.approx(10.00, abs=0.02)
    assert (m.kv_room / GiB - 8.11) / 8.11 == pytest.approx(0.23, abs=0.01)


def test_the_sampler_runs_on_the_last_pipeline_stage_only(eng):
    st = setting(eng, "llama-3.1-405b", "bf16", "reference", accelerator="h100-sxm")
    first, last = st.stages(Layout(8, 2))
    fwd = forward_peak_bytes(st.model.architecture, Layout(8, 2), 8192, 2.0)
    assert first.activations == fwd
    assert last.activations == max(fwd, sampler_peak_bytes(st.model.architecture, st.memory_policy))
    assert last.activations > first.activations


# ----------------------------------------------------------------------------------------- the flagship refused



@pytest.mark.parametrize(("model", "precision", "tp", "weights", "logged_kv", "estimate"), [
    # vLLM 0.19.0 on an H100 reporting 79.19 GiB, vllm serve's defaults but --gpu-memory-utilization 0.95 and
    # --max-model-len 8192 (llm-d-incubation/llm-d-planner, accuracy/results/v0.19.0/logs): the logged weights,
    # "Available KV cache memory" and "Estimated CUDA graph memory". vLLM 0.19 logged the estimate without taking it
    # from the pool; v0.21 takes it (gpu_worker.py at v0.21.0), so its KV cache is the logged one less the estimate.
    # The policy (vllm-v021) reads its sampler and its memory outside PyTorch from these logs and its one estimate
    # (1.82 GiB) from the 70B's: the 70B-class rows check the weights and the arithmetic; Llama-3.1-8B's own
    # estimate is 0.84 GiB, so the policy leaves it 0.98 GiB less.
    ("llama-3.1-70b", "fp8", 2, 33.88, 37.28, 1.82),   # RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic
    ("llama-3.1-70b", "fp8", 4, 16.96, 54.09, 1.70),
    ("qwen2.5-72b", "bf16", 2, 67.8, 3.04, 1.63),
    ("llama-3.1-8b", "bf16", 2, 7.51, 63.76, 1.69),
    ("llama-3.1-8b", "bf16", 1, 14.99, 58.11, 0.84),
])
def test_kv_memory_against_vllm_0190_logs_as_v021_budgets_them(eng, model: str, precision: str, tp: int,
                                                               weights: float, logged_kv: float, estimate: float) -> None:
    # within 0.2 GiB of each log: the engine's weights and sampler run up to 0.1 GiB each below a 70B's logged ones
    e = with_h100_total(eng, 79.19 * GiB)
    pol = e.memory_policies["vllm-v021"]
    assert pol.utilization == 0.92 and pol.cuda_graphs_in_pool
    st = setting(e, model, precision, "reference", accelerator="h100-sxm", context_tokens=8192,
                 memory_policy="vllm-v021", memory_fraction=0.95)
    m = st.memory(Layout(tp), 1)
    assert m.weights / GiB == pytest.approx(weights, abs=0.1)
    v021 = logged_kv - estimate  # what v0.21 leaves of the same run, its own estimate taken from the pool
    assert m.kv_room / GiB == pytest.approx(v021 - (pol.cuda_graphs / GiB - estimate), abs=0.2)
    outside = replace(st, memory_policy=replace(st.memory_policy, cuda_graphs_in_pool=False))
    assert outside.memory(Layout(tp), 1).kv_room / GiB == pytest.approx(logged_kv, abs=0.2)  # as 0.19 budgeted


def test_flagship_starts_under_v021s_budget(eng):
    # The same deployment as below under vLLM's budget from v0.21 (vllm-v021): pool 0.92 x 79.22 = 72.88 GiB;
    # weights 65.71, the sampler's 1,024 x 128,256 x 15.3 bytes = 1.87 GiB, 2.09 GiB outside PyTorch and the CUDA
    # graphs' 1.82 GiB estimate leave 1.39 GiB, more than the 1.25 GiB one 8,192-token sequence needs.
    st = setting(eng, "llama-3.1-70b", "bf16", "reference", memory_policy="vllm-v021")
    m = st.memory(Layout(2), 1)
    assert m.pool / GiB == pytest.approx(0.92 * 79.22, abs=0.01)
    assert m.activations / GiB == pytest.approx(1024 * 128256 * 15.3 / GiB, abs=0.001)
    assert m.non_torch / GiB == pytest.approx(2.09)
    assert m.kv_room / GiB == pytest.approx(72.88 - 65.71 - 1.87 - 2.09 - 1.82, abs=0.02)
    assert m.starts and m.max_sequences == 1
    assert st.kv_refusal(Layout(2)) is None and deploy(st).layout == Layout(2)
    # the site's default budget (vLLM 0.11's figures) refuses it
    assert setting(eng, "llama-3.1-70b", "bf16", "reference").kv_refusal(Layout(2)) is not None

def test_flagship_refused_with_vllms_message_once_the_h100_total_is_the_runtimes(eng):
    # Llama 3.1 70B BF16 on 2 x H100 at TP2, one sequence of 8,192 tokens, vllm serve's H100 defaults (1,024
    # sequences): pool 0.9 x 79.22 = 71.30 GiB; weights 65.71, the sampler's 1,024 x 128,256 x 38.9 bytes = 4.76 GiB
    # and 0.55 GiB outside PyTorch leave 0.28 GiB; one sequence needs 80 layers x 2 x 4 KV heads x 128 x 2 bytes x
    # 8,192 = 1.25 GiB. 0.28 GiB holds 114 blocks of 16 tokens: vLLM estimates 1,824 tokens.
    for e in (with_h100_total(eng, H100_CUDA_TOTAL), eng):  # 79.22 GiB, as data/ records it
        st = setting(e, "llama-3.1-70b", "bf16", "reference")
        with pytest.raises(KVCacheRefused) as exc:
            deploy(st, Layout(2))
        r = exc.value
        assert r.available / GiB == pytest.approx(0.28, abs=0.005)
        assert r.needed == 80 * 2 * 4 * 128 * 2 * 8192
        assert r.estimated_max_len == 1824
        assert r.engine_message == (
            "To serve at least one request with the models's max seq len (8192), (1.25 GiB KV cache is needed, which "
            "is larger than the available KV cache memory (0.28 GiB). Based on the available memory, the estimated "
            "maximum model length is 1824. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
            "when initializing the engine.")
        assert isinstance(r, RefusedLayout) and r.engine_message in str(r)
        assert deploy(st).layout == Layout(4)  # the smallest TP degree it accepts


def test_weights_beyond_the_gpu_fail_to_load_before_any_kv_check(eng):
    # Llama 3.1 405B BF16 at TP8 on H100s: 405.85B x 2 bytes / 8 = 94.50 GiB of weights a GPU, above the 79.22 GiB
    # CUDA reports: PyTorch's allocator stops the load ("CUDA out of memory"), vLLM never sizes a pool
    st = setting(eng, "llama-3.1-405b", "bf16", "reference")
    r = st.kv_refusal(Layout(8))
    assert r is not None and r.engine_message == "torch.OutOfMemoryError: CUDA out of memory."
    assert str(r).startswith("TP8: Llama 3.1 405B in BF16 on NVIDIA H100 SXM: its weights, 94.50 GiB per GPU, exceed "
                             "the GPU's 79.22 GiB, so loading them fails.")
    # weights inside the GPU but beyond the pool load, and vLLM's KV check refuses: Qwen2.5-72B BF16 at TP2 holds
    # 67.71 GiB a GPU against a pool of 0.9 x 79.22 = 71.30 GiB, less the sampler and the memory outside PyTorch
    st = setting(eng, "qwen2.5-72b", "bf16", "reference", context_tokens=2048)
    r = st.kv_refusal(Layout(2))
    assert r is not None and r.engine_message.startswith("No available memory for the cache blocks.")
    # under ROCm the allocator's error names HIP: Llama 3.1 405B BF16 on two MI300X (380 GiB a GPU against 191.5)
    st = setting(eng, "llama-3.1-405b", "bf16", "reference", accelerator="mi300x")
    r = st.kv_refusal(Layout(2))
    assert r is not None and r.engine_message == "torch.OutOfMemoryError: HIP out of memory."
    # with pipeline stages the load fails on the heaviest stage, which need not be the one whose KV room binds:
    # Llama 3.1 70B BF16 on L4s at TP2 x PP3, 27 + 27 + 26 layers: the first stage, with the embedding table, holds
    # 22.49 GiB on each GPU against the L4's 21.95; the last, whose KV room binds (the sampler's peak), holds 21.70
    st = setting(eng, "llama-3.1-70b", "bf16", "reference", accelerator="l4")
    lay = Layout(2, 3)
    stages = st.stages(lay, 1)
    heaviest = max(stages, key=lambda m: m.weights)
    assert heaviest.weights > st.chip.capacity_bytes >= st.memory(lay, 1).weights
    r = st.kv_refusal(lay)
    assert r is not None and r.engine_message == "torch.OutOfMemoryError: CUDA out of memory."
    assert f"the weights of its heaviest stage (layers {heaviest.first_layer} to " in str(r)
    assert f"{heaviest.weights / GiB:.2f} GiB per GPU, exceed the GPU's" in str(r)


def test_flagship_starts_at_256_sequences(eng):
    # --max-num-seqs 256 (vLLM's default before the large-device defaults): the sampler's peak is 256 x 128,256 x
    # 38.9 bytes = 1.19 GiB, and 71.30 - 65.71 - 1.19 - 0.55 = 3.85 GiB holds three 8,192-token sequences
    st = setting(eng, "llama-3.1-70b", "bf16", "reference", max_num_seqs=256)
    assert st.kv_refusal(Layout(2)) is None
    m = st.memory(Layout(2), 1)
    assert m.activations / GiB == pytest.approx(1.19, abs=0.005)
    assert m.kv_room / GiB == pytest.approx(3.85, abs=0.005)
    assert m.max_sequences == 3
    assert deploy(st, Layout(2)).layout == Layout(2)


def test_estimated_max_model_len_bisects_whole_blocks(eng):
    st = setting(eng, "llama-3.1-70b", "bf16", "reference")
    arch, pol = st.model.architecture, st.memory_policy
    per_block = 16 * kv_bytes_per_token_per_gpu(arch, 80, 2, 2.0)
    assert estimated_max_model_len(arch, 0, 80, 2, 2.0, 305.5 * per_block, 8192, pol) == 305 * 16
    assert estimated_max_model_len(arch, 0, 80, 2, 2.0, 0.5 * per_block, 8192, pol) == 0
    assert estimated_max_model_len(arch, 0, 80, 2, 2.0, 10_000 * per_block, 8192, pol) == 8192


def test_cuda_graphs_come_out_of_the_headroom(eng):
    st = setting(eng, "llama-3.1-8b", "bf16", "reference")
    m = st.memory(Layout(1))
    assert not m.cuda_graphs_in_pool
    assert m.cuda_graphs == pytest.approx(0.21 * GiB)
    assert m.headroom == pytest.approx(m.capacity - m.pool - 0.21 * GiB)
    assert m.kv_room == pytest.approx(m.pool - m.weights - m.activations - m.non_torch)


# ----------------------------------------------------------------------------------------- sequences in flight


def test_max_concurrency_is_the_kv_pool_capped_at_max_num_seqs(eng):
    # Llama 3.1 8B BF16 on one H100 at 128 tokens: 0.9 x 79.22 - 14.958 - 4.758 - 0.13 = 51.452 GiB of KV room,
    # 16 MiB a sequence (32 layers x 2 x 8 x 128 x 2 bytes x 128): 3,292.9, so 3,292 sequences, capped at 1,024
    st = setting(eng, "llama-3.1-8b", "bf16", "reference", context_tokens=128)
    d = deploy(st, Layout(1))
    assert d.memory.kv_room / GiB == pytest.approx(51.452, abs=0.001)
    assert d.kv_sequences(128) == 3292
    assert d.max_num_seqs == 1024
    assert d.max_concurrency == 1024
    # an A100 80GB keeps 256: the cost tables' largest batches stop there
    d = deploy(setting(eng, "llama-3.1-8b", "bf16", "reference", context_tokens=128, accelerator="a100-80gb-sxm"),
               Layout(1))
    assert d.max_concurrency == 256 < d.kv_sequences(128)
    # at 8,192 tokens the KV pool binds: 51.45 GiB / 1 GiB a sequence
    d = deploy(setting(eng, "llama-3.1-8b", "bf16", "reference"), Layout(1))
    assert d.max_concurrency == d.kv_sequences(8192) == 51


# ----------------------------------------------------------------------------------------- the KV cache as vLLM logs it


def test_kv_cache_size_worked_by_hand(eng):
    # Llama 3.1 70B BF16 on four H100s at TP4, 8,192 tokens: a block of 16 tokens of one layer is 16 x 2 (K, V) x
    # 2 KV heads (8 / 4) x 128 x 2 bytes = 16,384 bytes; the 80 layers are one group, so the KV room holds
    # room // 16,384 // 80 blocks, vLLM's "GPU KV cache size" is 16 tokens each, and one 8,192-token sequence takes
    # 512 of them
    d = deploy(setting(eng, "llama-3.1-70b", "bf16", "reference"), Layout(4))
    k = d.kv_cache
    assert (k.block_tokens, k.groups, k.blocks_per_sequence) == (16, 1, 512)
    assert k.blocks == int(d.memory.kv_room // 16384 // 80) == 27143
    assert k.tokens == 434_288
    assert k.available == d.memory.kv_room and f"{k.available / GiB:.2f}" == "33.13"
    assert k.log == ("Available KV cache memory: 33.13 GiB", "GPU KV cache size: 434,288 tokens",
                     "Maximum concurrency for 8,192 tokens per request: 53.01x")
    assert math.floor(k.max_concurrency) == d.kv_sequences(8192) == 53


def test_kv_cache_size_of_hybrid_models_by_group(eng):
    # gpt-oss-120b: 18 sliding-window and 18 full-attention layers, two groups of 18 sharing the blocks. On one
    # H100 at 16,000 tokens a sequence takes 1,000 blocks of its full layers and cdiv(min(128 - 1 + 8,192, 16,000),
    # 16) + 1 = 521 of its sliding ones; the log counts the tokens of one group
    arch = eng.models["gpt-oss-120b"].architecture
    groups = kv_cache_groups(arch, True)
    assert sorted((kind, len(layers)) for kind, layers in groups) == [("full", 18), ("sliding", 18)]
    d = deploy(setting(eng, "gpt-oss-120b", "mxfp4", "reference", context_tokens=16000), Layout(1))
    k = d.kv_cache
    assert k.groups == 2 and k.blocks_per_sequence == 1000 + 521
    page = 16 * 2 * 8 * 64 * 2  # 16 tokens x K, V x 8 KV heads x head_dim 64 x 2 bytes
    assert k.blocks == int(d.memory.kv_room // page // 18)
    assert k.tokens == k.blocks // 2 * 16
    assert math.floor(k.max_concurrency) == d.kv_sequences(16000)
    # Llama 4 Scout: 36 chunked-attention layers and 12 full, so three chunked groups of 12 (every third chunked
    # layer from the first, the second and the third) and one full group; with the hybrid manager off, one group
    arch = eng.models["llama-4-scout"].architecture
    groups = kv_cache_groups(arch, True)
    assert [(kind, len(layers)) for kind, layers in groups] == [("chunked", 12)] * 3 + [("full", 12)]
    assert groups[0][1][:3] == (0, 4, 8) and groups[1][1][:3] == (1, 5, 9) and groups[3][1][:3] == (3, 7, 11)
    assert kv_cache_groups(arch, False) == (("full", tuple(range(48))),)


def test_kv_cache_size_takes_the_fewest_blocks_of_any_stage(eng):
    # Llama 3.1 405B BF16 at TP8 x PP2: the first stage holds the embedding, the last the LM head and the sampler's
    # peak; vLLM gives every stage the fewest blocks of any
    st = setting(eng, "llama-3.1-405b", "bf16", "reference", accelerator="h100-sxm")
    d = deploy(st, Layout(8, 2))
    first, last = st.stages(Layout(8, 2))
    page = 16 * 2 * 1 * 128 * 2  # 8 KV heads over TP8: one a GPU
    per_stage = [int(m.kv_room // page // m.layers) for m in (first, last)]
    assert per_stage[0] != per_stage[1]
    assert d.kv_cache.blocks == min(per_stage)
    assert math.floor(d.kv_cache.max_concurrency) == d.kv_sequences(8192)


@pytest.mark.parametrize(("model", "precision", "accelerator", "tp", "context", "policy"), [
    ("llama-3.1-8b", "bf16", "h100-sxm", 1, 16000, "vllm-default"),
    ("qwen3-235b-a22b", "fp8-block", "h100-sxm", 4, 8192, "vllm-default"),
    ("deepseek-r1", "fp8", "h200-sxm", 8, 8192, "vllm-default"),
    ("llama-4-scout", "bf16", "h100-sxm", 8, 32768, "vllm-default"),
    ("gpt-oss-20b", "mxfp4", "h100-sxm", 1, 131072, "vllm-default"),
    ("llama-3.1-70b", "bf16", "h100-sxm", 4, 8192, "sglang-default"),
    ("llama-3.1-70b", "bf16", "h100-sxm", 4, 8192, "trtllm-bench"),
])
def test_kv_cache_size_agrees_with_the_sequences_the_pool_admits(eng, model, precision, accelerator, tp, context,
                                                                  policy):
    # Two counts of one pool: the blocks vLLM logs (grouped, floored per block) and the sequences the engine admits
    # (`kv_sequences`: the KV room over one sequence's bytes). Where no group is padded they agree to the sequence.
    d = deploy(setting(eng, model, precision, "reference", accelerator=accelerator, context_tokens=context,
                       memory_policy=policy), Layout(tp))
    k = d.kv_cache
    assert k.blocks > 0
    assert math.floor(k.max_concurrency + 1e-9) * d.layout.dp == d.kv_sequences(context)
    assert k.engine == eng.memory_policies[policy].engine


def test_kv_cache_log_lines_as_the_engines_print_them(eng):
    # vllm-project/vllm#13596 (the change that logs tokens): 127,626 blocks of 16 tokens at a max_model_len of 2,048
    # print "GPU KV cache size: 2,042,016 tokens" and "Maximum concurrency for 2,048 tokens per request: 997.08x";
    # vllm-project/vllm#25350: "Available KV cache memory: 10.55 GiB", "GPU KV cache size: 230,528 tokens",
    # "Maximum concurrency for 100,000 tokens per request: 2.31x" (14,408 blocks; 6,250 a sequence)
    k = KVCacheSize(engine="vLLM", blocks=127_626, block_tokens=16, groups=1, blocks_per_sequence=128,
                    max_model_len=2048, bytes_per_block=0.0, available=0.0)
    assert k.log[1:] == ("GPU KV cache size: 2,042,016 tokens",
                         "Maximum concurrency for 2,048 tokens per request: 997.08x")
    k = KVCacheSize(engine="vLLM", blocks=14_408, block_tokens=16, groups=1, blocks_per_sequence=6250,
                    max_model_len=100_000, bytes_per_block=0.0, available=10.55 * GiB)
    assert k.log == ("Available KV cache memory: 10.55 GiB", "GPU KV cache size: 230,528 tokens",
                     "Maximum concurrency for 100,000 tokens per request: 2.31x")
    # SGLang's pool is counted in tokens (a block of one): its start-up line's max_total_num_tokens field
    k = KVCacheSize(engine="SGLang", blocks=420_524, block_tokens=1, groups=1, blocks_per_sequence=8192,
                    max_model_len=8192, bytes_per_block=0.0, available=0.0)
    assert k.log == ("max_total_num_tokens=420524",)
    # TensorRT-LLM's KVCacheManager: "[MemUsageChange] Allocated %0.2f GiB for max tokens in paged KV cache (%d)."
    # of the pool's bytes and blocks x tokens per block. Llama 3.1 70B BF16 at TP4 under trtllm-bench: a block of 32
    # tokens of the 80 layers is 32 x 80 x 2 x 2 KV heads x 128 x 2 bytes = 2.5 MiB
    d = deploy(setting(eng, "llama-3.1-70b", "bf16", "reference", memory_policy="trtllm-bench"), Layout(4))
    k = d.kv_cache
    blocks = int(d.memory.kv_room // (32 * 1024) // 80)
    assert (k.blocks, k.bytes_per_block) == (blocks, 32 * 80 * 1024)
    assert k.log == (f"[MemUsageChange] Allocated {blocks * 2.5 / 1024:.2f} GiB for max tokens in paged KV cache "
                     f"({blocks * 32}).",)


def test_kv_sequences_counts_every_dp_rank(eng):
    st = setting(eng, "deepseek-v3", "fp8-block", "reference", accelerator="h200-sxm")
    d = deploy(st, Layout(8))
    dp = deploy(st, Layout(1, 1, 8, 8))
    assert dp.max_num_seqs == 8 * 1024
    assert dp.kv_sequences(8192) % 8 == 0
    assert d.kv_sequences(8192) > 0


# ----------------------------------------------------------------------------------------- chunked attention


def test_llama4_layers_three_in_four_attend_in_chunks(eng):
    arch = eng.models["llama-4-scout"].architecture
    assert [layer_attention(arch, i) for i in range(8)] == ["chunked"] * 3 + ["full"] + ["chunked"] * 3 + ["full"]
    assert chunked_layers(arch) == 36
    assert chunked_layers(arch, 4, 10) == 8  # layers 4..13: 7 and 11 are global


@pytest.mark.parametrize(("context", "full_equivalent"), [
    (8192, 48.0),                      # a chunk holds the whole context: every layer caches it all
    (131072, 12 + 36 * 8192 / 131072),  # 12 global layers + 36 x one chunk = 14.25 layers' worth
    (1048576, 12 + 36 * 8192 / 1048576),  # 12.28: the cache is 3.9 x smaller than 48 full layers
])
def test_chunked_attention_kv_read_at_decode(eng, context, full_equivalent):
    arch = eng.models["llama-4-scout"].architecture
    assert cached_layers(arch, 0, 48, context) == pytest.approx(full_equivalent)
    per_layer = 2 * 8 * 128 * 2  # a key and a value of 8 KV heads of 128, BF16, TP1
    assert kv_bytes_per_token_per_gpu(arch, 48, 1, 2.0, context_tokens=context) == pytest.approx(
        full_equivalent * per_layer)


def test_decode_kv_read_by_hand(eng):
    # Llama 3.1 70B: 80 layers, 8 KV heads of 128, a key and a value each, BF16. At TP8 each GPU holds one KV
    # head: 2 x 80 x 1 x 128 x 2 = 40,960 bytes per token; four sequences of 2,048 tokens read 4 x 2,048 of them
    arch = eng.models["llama-3.1-70b"].architecture
    assert decode_kv_read(arch, 80, 8, 2.0, 2048, 4) == 40960 * 2048 * 4 == 335_544_320
    assert decode_kv_read(arch, 80, 2, 2.0, 2048) == 4 * 40960 * 2048  # TP2: four heads a GPU, one sequence
    assert decode_kv_read(arch, 40, 8, 2.0, 2048, 4, first_layer=40) == 335_544_320 / 2  # a second stage's half
    # Llama 4 Scout at 131,072 tokens: its 12 global layers read the whole context, its 36 chunked layers one chunk
    # of 8,192 tokens; 4,096 bytes per layer and token (8 KV heads of 128, BF16, TP1)
    scout = eng.models["llama-4-scout"].architecture
    assert decode_kv_read(scout, 48, 1, 2.0, 131072) == pytest.approx((12 * 131072 + 36 * 8192) * 4096)


@pytest.mark.parametrize(("context", "chunked_tokens"), [
    (8192, 8192),        # min(8,192 + 8,192, 8,192): the whole sequence
    (131072, 16384),     # a chunk plus one step of 8,192 batched tokens
    (1048576, 16384),
])
def test_chunked_attention_kv_vllm_reserves(eng, context, chunked_tokens):
    # vLLM's ChunkedLocalAttentionSpec: cdiv(min(chunk + max_num_batched_tokens, max_model_len), 16) blocks;
    # the 12 global layers hold every token. TP4: 2 KV heads a GPU, 2 x 2 x 128 x 2 = 1,024 bytes a layer-token.
    st = setting(eng, "llama-4-scout", "bf16", "reference", accelerator="h100-sxm")
    pol = st.memory_policy
    assert pol.max_num_batched_tokens == 8192 and pol.hybrid_kv_cache
    got = kv_bytes_per_sequence(st.model.architecture, 0, 48, 4, 2.0, context, pol)
    assert got == (36 * chunked_tokens + 12 * context) * 1024
    full = kv_bytes_per_sequence(st.model.architecture, 0, 48, 4, 2.0, context, replace(pol, hybrid_kv_cache=False))
    assert full == 48 * context * 1024


# ----------------------------------------------------------------------------------------- block quantization


def test_qwen3_fp8_at_tp8_is_refused_with_vllms_message(eng):
    arch, fp8b = eng.models["qwen3-235b-a22b"].architecture, eng.precisions["fp8-block"]
    problem = block_quant_problem(arch, Layout(8), fp8b)
    assert problem is not None
    assert problem.endswith("vLLM: The output_size of gate's and up's weight = 192 is not divisible by weight "
                            "quantization block_n = 128.")
    assert block_quant_problem(arch, Layout(4), fp8b) is None           # 1,536 / 4 = 384 = 3 x 128
    assert block_quant_problem(arch, Layout(8, ep=8), fp8b) is None     # expert parallelism keeps experts whole
    assert block_quant_problem(arch, Layout(8), eng.precisions["fp8"]) is None  # per-channel FP8: no blocks
    st = setting(eng, "qwen3-235b-a22b", "fp8-block", "reference")
    with pytest.raises(RefusedLayout, match="= 192 is not divisible"):
        deploy(st, Layout(8))


def test_deepseek_block_fp8_splits(eng):
    arch, fp8b = eng.models["deepseek-v3"].architecture, eng.precisions["fp8-block"]
    assert layout_problems(arch, Layout(8), fp8b) == []     # experts 2,048 / 8 = 256
    assert layout_problems(arch, Layout(16), fp8b) == []    # 128
    # TP32: the experts would be 64 wide, but vLLM stops earlier, at layer 0's dense MLP: 18,432 / 32 = 576
    (msg,) = layout_problems(arch, Layout(32), fp8b)
    assert msg.endswith("vLLM: Weight output_partition_size = 576 is not divisible by weight quantization "
                        "block_n = 128.")


def test_the_policy_skips_refused_tp_degrees(eng):
    # on L40S nodes Qwen3-235B FP8 needs more than four GPUs' memory; TP8 is refused, so the policy keeps TP4 and
    # adds pipeline stages
    st = setting(eng, "qwen3-235b-a22b", "fp8-block", "reference", accelerator="l40s")
    d = deploy(st)
    assert d.layout.tp != 8 and not layout_problems(st.model.architecture, d.layout, st.precision)


# ----------------------------------------------------------------------------------------- precisions as shipped


def test_kv_precision_defaults_to_the_checkpoints_dtype(eng):
    # --kv-cache-dtype auto: the model's dtype (config.json's torch_dtype), also for FP8 and MXFP4 checkpoints
    assert auto_kv_precision(eng, "llama-3.1-70b", "reference") == "bf16"
    assert auto_kv_precision(eng, "llama-2-70b", "reference") == "fp16"
    assert auto_kv_precision(eng, "gpt-oss-120b", "reference") == "bf16"
    assert auto_kv_precision(eng, "deepseek-r1", "reference") == "bf16"
    assert auto_kv_precision(eng, "gpt-3-175b", "reference") == eng.scenarios["reference"].kv_precision
    st = setting(eng, "llama-3.1-70b", "fp8", "reference")
    assert st.kv_precision.id == "bf16"
    fp8kv = setting(eng, "llama-3.1-70b", "fp8", "reference", kv_precision="fp8")
    assert fp8kv.memory(Layout(2)).kv_per_sequence == st.memory(Layout(2)).kv_per_sequence / 2


def test_precision_as_shipped(eng):
    assert as_shipped(eng, "qwen3-235b-a22b", "fp8") == "fp8-block"
    assert as_shipped(eng, "deepseek-v3", "fp8") == "fp8-block"
    assert as_shipped(eng, "llama-3.1-70b", "fp8") == "fp8"
    assert as_shipped(eng, "llama-4-maverick", "fp8") == "fp8"
    assert as_shipped(eng, "qwen3-235b-a22b", "bf16") == "bf16"
    assert eng.models["gpt-oss-120b"].shipped_precisions == ("mxfp4",)
    assert eng.models["gpt-3-175b"].shipped_precisions == ()


# ----------------------------------------------------------------------------------------- TensorRT-LLM's budget


def test_trtllm_kv_cache_is_a_share_of_the_free_memory(eng):
    # trtllm-bench (KvCacheCreator._cal_max_tokens): KV = 0.90 x (total - peak), the peak being the weights, the
    # dummy prompts' activations and what lies outside PyTorch (NCCL, CUDA graphs). Llama 3.1 8B BF16 on one H100
    # at max_num_tokens 2,048 and prompts of 2,000: weights 14.958 GiB; forward over 2,048 tokens 2,048 x 2 bytes x
    # (3 x 4,096 + 3 x 14,336) = 0.2109 GiB; the sampler's ceil(2,048 / 2,000) = 2 rows of 128,256 logits x 41.3
    # bytes = 0.0099 GiB, under it; outside PyTorch 1.79 GiB and graphs 0.21 GiB: 17.169 GiB held, and
    # 0.9 x (79.22 - 17.169) = 55.846 GiB of KV room, where vLLM's 0.9 x 79.22 - 16.959 would leave 54.34
    st = setting(eng, "llama-3.1-8b", "bf16", "reference", context_tokens=2000, memory_policy="trtllm-bench",
                 max_num_seqs=640, max_num_batched_tokens=2048)
    m = st.memory(Layout(1))
    assert m.cuda_graphs_in_pool
    assert m.activations / GiB == pytest.approx(0.2109, abs=0.0005)
    assert m.kv_room / GiB == pytest.approx(0.9 * (79.22 - 17.169), abs=0.01)
    assert m.pool == pytest.approx(m.weights + m.activations + m.non_torch + m.cuda_graphs + m.kv_room)


def test_trtllm_serve_holds_what_inferencex_launched_it_for(eng):
    # InferenceX's dsr1_fp8_b200_trt.sh starts trtllm-serve on 4 x B200 with kv_cache_config free_gpu_memory_fraction
    # 0.8, max_num_tokens 8,192 and CUDA graphs up to its 16 requests in flight: KV = 0.8 x (178.35 reported - 157.49
    # of FP8 weights - 1.42 of activations - 3.58 outside PyTorch - 0.21 of graphs) = 12.52 GiB; a 2,048-token
    # sequence of DeepSeek-R1's MLA cache in FP8 takes 61 layers x (512 + 64) x 1 byte x 2,048 = 72.0 MB, so 186 fit.
    # Budgeted as vLLM serves it (0.9 of the total, 0.55 GiB outside PyTorch) the room is 1.06 GiB, 15 sequences:
    # one of the 16 would queue, which the run did not (its TTFT was 218 ms)
    st = setting(eng, "deepseek-r1", "fp8", "reference", accelerator="b200", context_tokens=2048, kv_precision="fp8",
                 memory_policy="trtllm-serve", max_num_seqs=16, max_num_batched_tokens=8192, memory_fraction=0.8)
    assert st.memory_policy.utilization == 0.8
    m = st.memory(Layout(4))
    assert m.kv_per_sequence == 61 * (512 + 64) * 1 * 2048
    held = m.weights + m.activations + m.non_torch + m.cuda_graphs
    assert m.non_torch / GiB == pytest.approx(3.58)
    assert m.kv_room == pytest.approx(0.8 * (st.chip.capacity_bytes - held), rel=1e-9)
    assert m.kv_room / GiB == pytest.approx(12.52, abs=0.01)
    assert m.max_sequences == 186
    vllm = setting(eng, "deepseek-r1", "fp8", "reference", accelerator="b200", context_tokens=2048, kv_precision="fp8",
                   max_num_seqs=16).memory(Layout(4))
    assert vllm.max_sequences == 15
    with pytest.raises(ValueError, match="not a share"):
        setting(eng, "deepseek-r1", "fp8", "reference", accelerator="b200", memory_policy="trtllm-serve",
                memory_fraction=1.2)


def test_trtllm_serve_plain_replays_graphs_of_up_to_31_sequences(eng):
    # trtllm-serve with no extra options keeps the LLM API's default CudaGraphConfig: batches of 1 to 31, then 32, 64
    # and 128, none padded (llmapi/llm_args.py); the policy takes that as graphs up to 31 sequences. A decode step of
    # 31 sequences then pays only its kernels' fixed cost; one of 40 runs eagerly, the host issuing each kernel
    # (ops.issue), as no step under InferenceX's padded graphs does
    from snippets.engine.step import prepare, step

    plain = deploy(setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm",
                           memory_policy="trtllm-serve-plain"), Layout(1))
    padded = deploy(setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm",
                            memory_policy="trtllm-serve", max_num_seqs=2048), Layout(1))
    assert plain.setting.memory_policy.max_num_seqs == 2048  # trtllm-serve's own max batch size
    assert prepare(plain).rates.graph_max_tokens == 31
    assert prepare(padded).rates.graph_max_tokens == 2048
    few = deploy(setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm",
                         memory_policy="trtllm-serve-plain", max_num_seqs=16), Layout(1))
    assert prepare(few).rates.graph_max_tokens == 16  # no graph of more sequences than run

    def issued(d, seqs):
        return sum(o.issue_s * o.count for o in step(d, "decode", seqs, 1024.0).ops)

    assert issued(plain, 31) == issued(padded, 31) == issued(padded, 40) == 0
    assert issued(plain, 40) > 0
    eager, graphed = step(plain, "decode", 40, 1024.0), step(padded, "decode", 40, 1024.0)
    # the step waits only for what the issue takes beyond the GPU's work
    assert eager.total_s - eager.host_s == pytest.approx(max(issued(plain, 40), graphed.total_s - graphed.host_s))


def test_trtllm_profiles_one_logit_per_dummy_prompt(eng):
    pol = setting(eng, "llama-3.1-8b", "bf16", "reference", memory_policy="trtllm-bench", max_num_seqs=4096,
                  max_num_batched_tokens=8192).memory_policy
    assert profile_rows(pol, 2000) == 5  # ceil(8,192 / 2,000)
    assert profile_rows(pol, 20000) == 1  # one prompt of at most max_num_tokens
    vllm = setting(eng, "llama-3.1-8b", "bf16", "reference").memory_policy
    assert profile_rows(vllm, 2000) == 1024  # min(max_num_seqs, max_num_batched_tokens)


# ---------------------------------------------------------------------------- SGLang's static pool (sglang-default)

MiB = 2**20


@pytest.mark.parametrize(("chip", "tp", "smi_mib", "reserved_mib", "fraction"), [
    # R = 512 + 1.5 x max(chunk, 2,048) + 2 x graph cap + 1,024 x TP x PP / 8 MiB, at least 10,240 above 60 GiB
    ("h100-sxm", 1, 81559, 512 + 1.5 * 8192 + 2 * 256 + 128, round((81559 - 13440) / 81559, 3)),  # 13,440: 0.835
    ("a100-80gb-sxm", 1, 81920, 13440, 0.836),
    ("h100-sxm", 8, 81559, 512 + 12288 + 2 * 512 + 1024, 0.818),  # TP8 takes graphs of 512: 14,848
    ("mi300x", 8, 196592, 512 + 1.5 * 16384 + 2 * 512 + 1024, 0.862),  # above 160 GiB: chunks of 16,384
    ("a100-40gb-sxm", 1, 40960, 512 + 1.5 * 4096 + 2 * 32 + 128, round((40960 - 6848) / 40960, 3)),  # no floor
])
def test_sglang_sets_its_static_fraction_from_the_device_and_the_layout(eng, chip, tp, smi_mib, reserved_mib,
                                                                        fraction):
    pol = eng.memory_policies["sglang-default"].for_chip(eng.chips[chip])
    reserve = pol.static_reserve
    assert reserve is not None and reserve.device_total == smi_mib * MiB  # nvidia-smi's or rocm-smi's total
    assert reserve.reserved(tp, 1) / MiB == pytest.approx(max(reserved_mib, 10240 if smi_mib > 61440 else 0))
    assert pol.share(tp, 1) == fraction
    assert (0.835, 0.836, 0.818, 0.862).count(fraction) == (chip != "a100-40gb-sxm")


def test_sglang_steps_and_graphs_follow_its_device_class(eng):
    # 8,192-token chunks and graphs of 256 (512 from TP4) on an 80 GB device; 16,384 and 512 on a B200
    from snippets.engine.step import prepare

    h100 = eng.memory_policies["sglang-default"].for_chip(eng.chips["h100-sxm"])
    assert (h100.max_num_batched_tokens, h100.graph_cap(1), h100.graph_cap(4)) == (8192, 256, 512)
    b200 = eng.memory_policies["sglang-default"].for_chip(eng.chips["b200"])
    assert (b200.max_num_batched_tokens, b200.graph_cap(1), b200.graph_cap(8)) == (16384, 512, 512)
    st = setting(eng, "qwen3-32b", "bf16", "reference", accelerator="h100-sxm", memory_policy="sglang-default")
    assert prepare(deploy(st, Layout(1))).rates.graph_max_tokens == 256
    assert prepare(deploy(st, Layout(8))).rates.graph_max_tokens == 512


def test_a_commands_cuda_graph_cap_replaces_the_device_class(eng):
    # --cuda-graph-max-bs 128 on a B200 at TP8 (InferenceX's script), where the class would capture up to 512; no
    # graph of more sequences than run, and none at all where the run has graphs off
    from snippets.engine.step import prepare

    kw = dict(accelerator="b200", memory_policy="sglang-default", max_num_seqs=256)
    st = setting(eng, "qwen3-32b", "bf16", "reference", cuda_graph_max_batch=128, **kw)
    assert prepare(deploy(st, Layout(8))).rates.graph_max_tokens == 128
    assert prepare(deploy(setting(eng, "qwen3-32b", "bf16", "reference", **kw), Layout(8))).rates.graph_max_tokens == 256
    few = setting(eng, "qwen3-32b", "bf16", "reference", cuda_graph_max_batch=128, **{**kw, "max_num_seqs": 64})
    assert prepare(deploy(few, Layout(8))).rates.graph_max_tokens == 64
    off = setting(eng, "qwen3-32b", "bf16", "reference", cuda_graph_max_batch=128, cuda_graphs=False, **kw)
    assert prepare(deploy(off, Layout(8))).rates.graph_max_tokens == 0
    with pytest.raises(ValueError, match="cuda_graph_max_batch 0"):
        setting(eng, "qwen3-32b", "bf16", "reference", cuda_graph_max_batch=0, **kw)


def test_sglangs_pool_is_weights_and_kv_with_nothing_profiled(eng):
    # GPUStack's Qwen3-32B on one A100 80GB: 0.836 x (79.255 GiB CUDA total - 0.41 never free) - 61.02 GiB of
    # weights = 4.89 GiB of KV cache; vllm serve's A100 budget leaves 8.77 (its pool 0.9 x 79.255 less a 2,048-token
    # activation peak)
    st = setting(eng, "qwen3-32b", "bf16", "reference", accelerator="a100-80gb-sxm", memory_policy="sglang-default",
                 context_tokens=4096)
    m = deploy(st, Layout(1)).memory
    assert m.activations == 0.0
    assert m.capacity / GiB == pytest.approx(79.255, abs=0.001)
    assert m.weights / GiB == pytest.approx(61.02, abs=0.01)
    assert m.kv_room / GiB == pytest.approx(0.836 * (m.capacity / GiB - 0.41) - m.weights / GiB, abs=1e-6)
    assert m.kv_room / GiB == pytest.approx(4.89, abs=0.01)
    vllm = deploy(setting(eng, "qwen3-32b", "bf16", "reference", accelerator="a100-80gb-sxm", context_tokens=4096),
                  Layout(1)).memory
    assert vllm.kv_room / GiB == pytest.approx(8.77, abs=0.01)


def test_sglangs_quick_start_log_is_the_rule(eng):
    # docs.sglang.ai's Sending Requests log (Llama-3.1-8B, TP1, mem_fraction_static 0.88 given): 78.81 GiB free at
    # start, 63.72 after the weights, so 63.72 - 0.12 x 78.81 = 54.26 GiB of K and V (27.13 + 27.13) and 444,500
    # tokens at 128 KiB each. The engine on a device with 78.81 GiB free at start (its total less the 0.41 GiB never
    # free) loads 14.96 GiB of weights where the log's 15.09 counts its loader's extras: 54.39 GiB, within 0.3 %.
    total = (78.81 + 0.41) * GiB
    st = setting(with_h100_total(eng, total), "llama-3.1-8b", "bf16", "reference", memory_policy="sglang-default",
                 memory_fraction=0.88, context_tokens=4096)
    m = deploy(st, Layout(1)).memory
    assert st.memory_policy.share(1, 1) == 0.88  # a fraction the command gives overrides the rule
    assert m.kv_room / GiB == pytest.approx(0.88 * 78.81 - m.weights / GiB)
    assert m.kv_room / GiB == pytest.approx(54.26, rel=0.003)
    assert m.kv_room / (32 * 2 * 8 * 128 * 2) == pytest.approx(444500, rel=0.003)


@pytest.mark.parametrize("policy", ["sglang-default", "trtllm-bench"])
def test_sglang_and_trtllm_replay_graphs_for_decode_steps_only(eng, policy):
    # SGLang captures decode batches (CudaGraphRunner.can_run), TensorRT-LLM's PyTorch backend replays a graph only
    # for a batch with no context request (ScheduledRequests.can_run_cuda_graph): a step holding prompt tokens runs
    # eagerly, where vLLM V1's piecewise graphs cover it; a decode-only step replays its graph under both
    from snippets.engine.step import Batch, prepare, run

    st = setting(eng, "qwen3-8b", "bf16", "reference", accelerator="h100-sxm", memory_policy=policy,
                 context_tokens=4096)
    assert st.memory_policy.graphs_decode_only
    mixed_graphs = replace(st, memory_policy=replace(st.memory_policy, graphs_decode_only=False))
    decode = Batch(decode_seqs=4, decode_context=1000)
    mixed = Batch(decode_seqs=3, decode_context=1000, prefill_tokens=200, prefill_finishing=1)
    sg, vl = deploy(st, Layout(1)), deploy(mixed_graphs, Layout(1))
    assert run(sg, decode).total_s == pytest.approx(run(vl, decode).total_s)
    eager, graphed = run(sg, mixed), run(vl, mixed)
    host = prepare(sg).rates.host_s  # the engine's own issue cost per kernel (SGLang's), else vLLM's call's
    assert host == pytest.approx(50.6e-6 if policy == "sglang-default" else 16.7e-6)
    issued = sum(o.issue_s * o.count for o in eager.ops)  # every kernel of the step, one issue each
    assert issued > 0 and issued / host == pytest.approx(round(issued / host))
    assert sum(o.issue_s * o.count for o in graphed.ops) == 0
    # the step lasts the longer of its GPU's work and the host's issue
    assert eager.total_s - eager.host_s == pytest.approx(max(issued, graphed.total_s - graphed.host_s))


def test_a_chunk_size_the_command_sets_enters_sglangs_reserve(eng):
    # --chunked-prefill-size 16384 on an H100 at TP1: R = 512 + 1.5 x 16,384 + 2 x 256 + 128 = 25,728 MiB, so
    # (81,559 - 25,728) / 81,559 = 0.685 where the device class's 8,192 gives 0.835
    st = setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="h100-sxm", memory_policy="sglang-default",
                 max_num_batched_tokens=16384)
    assert st.memory_policy.share(1, 1) == round((81559 - 25728) / 81559, 3) == 0.685


def test_sglang_refuses_or_clips_as_sglang_does(eng):
    # Qwen3-32B BF16 on one H100 (TP1, where SGLang's never-free memory is logged: 0.41 GiB) under SGLang's defaults:
    # 0.835 x (79.22 - 0.41) - 61.02 = 4.78 GiB of KV cache, 4.78 x 4,096 = 19,587 tokens at 256 KiB each. A sequence
    # of Qwen3-32B's 40,960 tokens does not fit: SGLang starts with max_req_len = 19,586 and aborts a 38,912-token
    # prompt (19,581 tokens at most: managers/utils.validate_input_length)
    st = setting(eng, "qwen3-32b", "bf16", "reference", accelerator="h100-sxm", memory_policy="sglang-default",
                 context_tokens=40960)
    assert (st.scenario.input_tokens, st.scenario.output_tokens) == (38912, 2048)
    with pytest.raises(KVCacheRefused) as exc:
        deploy(st, Layout(1))
    r = exc.value
    assert r.engine == "SGLang" and r.available / GiB == pytest.approx(0.835 * (79.22 - 0.41) - 61.024, abs=0.001)
    assert "its pool holds 19,587 tokens" in str(r)
    assert r.engine_message == ("Input length (38912 tokens) exceeds the maximum allowed length (19581 tokens). Use a "
                                "shorter input or enable --allow-auto-truncate.")
    # a 1,000-token prompt fits, and SGLang clips its output to 19,586 - 1,000 - 1 = 18,585 tokens without a message
    short = replace(st, scenario=replace(st.scenario, input_tokens=1000, output_tokens=39960))
    with pytest.raises(KVCacheRefused) as exc:
        deploy(short, Layout(1))
    assert "clips each 1,000-token prompt's output to 18,585 tokens of the 39,960 asked for" in str(exc.value)
    # the flagship (Llama 3.1 70B BF16, TP2 on H100s) with chunks of 16,384: R = 512 + 1.5 x 16,384 + 2 x 256 + 256
    # = 25,856 MiB, a fraction of 0.683, less than the 65.71 GiB of weights whatever the memory never free: SGLang
    # stops at start
    big = setting(eng, "llama-3.1-70b", "bf16", "reference", memory_policy="sglang-default",
                  max_num_batched_tokens=16384)
    with pytest.raises(KVCacheRefused) as exc:
        deploy(big, Layout(2))
    assert exc.value.engine_message == ("Not enough memory. Please try to increase --mem-fraction-static. Current "
                                        "value: self.server_args.mem_fraction_static=0.683")


def test_vllm_holds_llama4s_image_encoder_sglang_does_not(eng):
    # vLLM builds Llama 4's vision model and projector unless images are limited to none (mllama4.py, 0.11.0 and
    # 0.21.0 wheels), unquantized and split over TP; SGLang 0.5.6 builds them only with --enable-multimodal. By hand
    # from vision_config (34 layers of 1,408, MLP 5,632, 14-pixel patches of 336-pixel tiles, projector 4,096 to
    # 4,096 to 5,120): per layer 4 x 1,408^2 + 3 x 1,408 + 2 x 1,408 x 5,632 + 5,632 split, 6 x 1,408 whole.
    arch = eng.models["llama-4-scout"].architecture
    split = 588 * 1408 + 34 * (4 * 1408**2 + 3 * 1408 + 2 * 1408 * 5632 + 5632) + 5632 * 4096 + 4096**2 + 4096 * 5120
    whole = 1408 + 577 * 1408 + 4 * 1408 + 34 * 6 * 1408
    assert vision_params(arch) == (split, whole) == (870_825_728, 1_106_688)
    assert vision_params(eng.models["llama-3.1-70b"].architecture) == (0, 0)
    vllm = setting(eng, "llama-4-scout", "fp8", "reference", accelerator="h100-sxm")
    sgl = setting(eng, "llama-4-scout", "fp8", "reference", accelerator="h100-sxm", memory_policy="sglang-default")
    assert vllm.vision and not sgl.vision
    text_only = replace(vllm, memory_policy=replace(vllm.memory_policy, vision_encoder_vendors=frozenset()))
    for lay in (Layout(8), Layout(4, pp=2)):
        held = [m.weights for m in vllm.stages(lay, 1)]
        plain = [m.weights for m in text_only.stages(lay, 1)]
        per_gpu = (split / lay.tp + whole) * 2  # 16-bit whatever the text model's precision
        assert vision_bytes(arch, vllm.precision, lay.tp) == per_gpu
        assert [h - p for h, p in zip(held, plain, strict=True)] == pytest.approx([per_gpu] * lay.pp, rel=1e-12)
    assert vision_bytes(arch, vllm.precision, 8) / GiB == pytest.approx(0.2048, abs=1e-4)
    assert vllm.memory(Layout(8), 1).kv_room < text_only.memory(Layout(8), 1).kv_room
    # a model without an encoder holds none, whatever the policy; vLLM on AMD builds it (the same mllama4.py), on
    # Google's TPUs not (tpu-inference's JAX Llama4ForCausalLM loads the language_model weights only)
    assert not setting(eng, "llama-3.1-70b", "bf16", "reference", accelerator="h100-sxm").vision
    assert setting(eng, "llama-4-scout", "bf16", "reference", accelerator="mi300x").vision
    gaudi = next(c for c in eng.chips.values() if c.vendor == "Intel")  # vllm-gaudi subclasses vLLM's class
    assert setting(eng, "llama-4-scout", "bf16", "reference", accelerator=gaudi.id).vision
    tpu = next(c for c in eng.chips.values() if c.vendor == "Google")
    assert not setting(eng, "llama-4-scout", "bf16", "reference", accelerator=tpu.id).vision
