"""The engine against hand-worked cases: layout rules, memory per GPU, the policy's choice, cost."""

from __future__ import annotations

from dataclasses import replace

import pytest

from snippets.data import load
from snippets.data.export import engine_catalog
from snippets.engine import Layout, RefusedLayout, deploy, setting
from snippets.engine.layout import kv_heads_per_gpu, kv_replicas, layout_problems, pp_partition, tp_problems
from snippets.engine.memory import kv_bytes_per_token_per_gpu, paged_tokens, stage_weights, weight_bytes
from snippets.engine.params import embedding_params, layer_params, lm_head_params, norm_params, total_params

GiB = 2**30


@pytest.fixture(scope="module")
def eng():
    return engine_catalog(load())


def test_vllm_pp_partition_gives_the_remainder_to_the_stages_before_the_last():
    # vLLM's get_pp_indices: layers // pp each, +1 for partitions[-2], partitions[-3], ...
    assert pp_partition(61, 4) == [15, 15, 16, 15]
    assert pp_partition(126, 4) == [31, 32, 32, 31]
    assert pp_partition(61, 2) == [31, 30]
    assert pp_partition(80, 3) == [27, 27, 26]
    assert all(sum(pp_partition(61, p)) == 61 for p in range(1, 62))
    with pytest.raises(ValueError):
        pp_partition(61, 62)


def test_tp_must_divide_heads_and_kv_heads_divide_each_other(eng):
    llama70 = eng.models["llama-3.1-70b"].architecture  # 64 heads, 8 KV heads
    assert tp_problems(llama70, 8) == []
    assert tp_problems(llama70, 16) == []  # beyond the KV heads: each KV head replicated twice
    assert kv_heads_per_gpu(8, 16) == 1 and kv_replicas(8, 16) == 2
    assert kv_heads_per_gpu(8, 4) == 2 and kv_replicas(8, 4) == 1
    assert any("attention heads" in p for p in tp_problems(llama70, 3))
    gpt3 = eng.models["gpt-3-175b"].architecture  # 96 heads, 96 KV heads (multi-head attention)
    assert tp_problems(gpt3, 12) == []
    assert tp_problems(gpt3, 64) == ["TP64 does not divide the 96 attention heads",
                                     "TP64 and the 96 KV heads do not divide one another"]


def test_kv_replication_keeps_a_whole_head_per_gpu(eng):
    arch = eng.models["llama-3.1-70b"].architecture  # 80 layers, 8 KV heads of 128, BF16 cache
    # TP8: one KV head per GPU; TP16: still one (replicated), so the per-GPU cache does not halve
    at8 = kv_bytes_per_token_per_gpu(arch, 80, 8, 2)
    at16 = kv_bytes_per_token_per_gpu(arch, 80, 16, 2)
    assert at8 == 2 * 80 * 1 * 128 * 2 == 40960
    assert at16 == at8
    assert kv_bytes_per_token_per_gpu(arch, 80, 1, 2) == 327680


def test_mla_latent_is_held_whole_on_every_tp_rank(eng):
    arch = eng.models["deepseek-v3"].architecture  # 61 layers, latent 512 + rotary 64
    assert kv_bytes_per_token_per_gpu(arch, 61, 8, 2) == 61 * (512 + 64) * 2
    assert kv_bytes_per_token_per_gpu(arch, 61, 1, 2) == kv_bytes_per_token_per_gpu(arch, 61, 16, 2)


def test_sliding_window_layers_hold_only_their_window(eng):
    arch = eng.models["gpt-oss-120b"].architecture  # 36 layers, even ones a 128-token window; 8 KV heads of 64
    per_layer = 2 * 8 * 64 * 2  # K and V, BF16: 2048 B a token and layer at TP1
    assert kv_bytes_per_token_per_gpu(arch, 36, 1, 2) == 36 * per_layer  # no context given: every token, every layer
    at_8k = kv_bytes_per_token_per_gpu(arch, 36, 1, 2, context_tokens=8192)
    assert at_8k == 18 * per_layer + 18 * per_layer * 128 / 8192 == 37_440
    # TP8: one KV head per GPU, an eighth of it
    assert kv_bytes_per_token_per_gpu(arch, 36, 8, 2, context_tokens=8192) == 37_440 / 8
    # a stage of layers 1 and 2 holds one full layer (1) and one windowed (2); layers 0 and 1: the same count
    assert kv_bytes_per_token_per_gpu(arch, 2, 1, 2, context_tokens=1024, first_layer=1) == per_layer * (1 + 128 / 1024)
    assert kv_bytes_per_token_per_gpu(arch, 3, 1, 2, context_tokens=1024, first_layer=0) == per_layer * (1 + 2 * 128 / 1024)
    # the pipeline stages know their first layer: PP2 of 36 is 18 + 18
    assert [s.first_layer for s in stage_weights(arch, eng.precisions["bf16"], Layout(1, 2))] == [0, 18]


def test_gpt_oss_biases_sinks_and_router_stay_16_bit(eng):
    from snippets.engine.memory import layer_share

    arch = eng.models["gpt-oss-120b"].architecture
    share = layer_share(arch, 0, Layout(1))
    # kept: two norms 2 x 2880, attention biases 4096 + 2 x 512 + 2880, 64 sinks,
    # 128 experts' biases of 2 x 2880 + 2880, router 2880 x 128 + 128 bias
    assert share.kept == 5760 + 8000 + 64 + 128 * 8640 + 2880 * 128 + 128 == 1_488_512
    # linear: attention matrices 2 x 2880 x 4096 + 2 x 2880 x 512, 128 experts of 3 x 2880 x 2880
    assert share.linear == 26_542_080 + 128 * 24_883_200 == 3_211_591_680
    assert share.linear + share.kept == layer_params(arch, 0)
    # TP8 without EP: the matrices, expert biases and sinks are split eight ways; norms and router are not
    at8 = layer_share(arch, 0, Layout(8))
    assert at8.kept == 5760 + 4096 / 8 + 2 * 512 / 8 + 2880 + 64 / 8 + 128 * 8640 / 8 + 2880 * 128 + 128


def test_gpt_oss_mxfp4_checkpoint_keeps_its_attention_projections_at_16_bit(eng):
    from snippets.engine.memory import layer_share

    model = eng.models["gpt-oss-120b"]
    arch, mxfp4 = model.architecture, eng.precisions["mxfp4"]
    # config.json's modules_to_not_convert leaves self_attn out of MXFP4; BF16 has nothing to keep
    assert model.kept_16bit(mxfp4) == {"attention_in", "attention_out"}
    assert model.kept_16bit(eng.precisions["bf16"]) == frozenset()
    assert eng.models["llama-3.1-70b"].kept_16bit(eng.precisions["fp8"]) == frozenset()
    plain, kept = layer_share(arch, 0, Layout(1)), layer_share(arch, 0, Layout(1), model.kept_16bit(mxfp4))
    attention = 2 * 2880 * 4096 + 2 * 2880 * 512  # q and o, k and v: 26,542,080 a layer
    assert kept.linear == plain.linear - attention == 128 * 24_883_200
    assert kept.kept == plain.kept + attention
    # the whole copy: 36 layers of attention at 2 bytes instead of MXFP4's 4.25 bits (an E8M0 scale per 32)
    gain = 36 * attention * (2 - mxfp4.bytes_per_param)
    assert mxfp4.bytes_per_param == 4.25 / 8
    assert weight_bytes(arch, mxfp4, model.kept_16bit(mxfp4)) - weight_bytes(arch, mxfp4) == pytest.approx(gain)
    assert gain / 2**30 == pytest.approx(1.3070, abs=1e-4)  # 955,514,880 weights x 1.46875 bytes
    # a deployment of the shipped checkpoint holds them so: one H100 holds 1.31 GiB more weights
    d = deploy(setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="h100-sxm"), Layout(1))
    assert d.memory.weights == pytest.approx(weight_bytes(arch, mxfp4, model.kept_16bit(mxfp4)))


def test_a_projection_kept_at_16_bit_streams_two_bytes_a_weight_in_bf16(eng):
    from snippets.engine.step import step

    d = deploy(setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="b200"), Layout(1))
    ops = {o.name: o for o in step(d, "decode", 1, 1024).ops}
    assert ops["qkv"].weights == 2880 * (4096 + 2 * 512) * 2.0
    assert ops["o"].weights == 4096 * 2880 * 2.0
    # the experts keep the checkpoint's 4.25 bits; on the B200 they multiply in FP4, the projections in BF16
    assert d.compute_format == "fp4"
    stripped = deploy(setting(replace(eng, models={**eng.models, "gpt-oss-120b": replace(
        eng.models["gpt-oss-120b"], keeps_16bit={})}), "gpt-oss-120b", "mxfp4", "reference", accelerator="b200"),
        Layout(1))
    bare = {o.name: o for o in step(stripped, "decode", 1, 1024).ops}
    assert bare["qkv"].weights == 2880 * (4096 + 2 * 512) * 4.25 / 8
    assert bare["experts"].weights == ops["experts"].weights
    # a prompt's arithmetic: the kept projection at the B200's BF16 peak (2.25 PFLOP/s) and BF16 GEMM share, the same
    # FLOPs as the bare one at the FP4 peak (9 PFLOP/s)
    from snippets.engine.step import prepare

    k, n = (next(o for o in step(x, "prefill", 8192, 0).ops if o.name == "qkv") for x in (d, stripped))
    r16, r4 = prepare(d).rates16, prepare(stripped).rates
    assert k.flops == n.flops and (r16.peak_flops, r4.peak_flops) == (2.25e15, 9e15)
    assert k.compute_s == pytest.approx(k.flops / (r16.peak_flops * r16.gemm.compute_at(k.flops) * r16.kernel_fraction))
    assert k.compute_s > 2 * n.compute_s
    # where a step with prompt tokens runs eagerly (SGLang), the kept projections are issued by the host too, at
    # SGLang's own issue cost per kernel; a decode step replays its graph and issues none
    sg = deploy(setting(eng, "gpt-oss-120b", "mxfp4", "reference", accelerator="b200", memory_policy="sglang-default"),
                Layout(1))
    eager = {o.name: o for o in step(sg, "prefill", 16, 0).ops}
    graphed = {o.name: o for o in step(sg, "decode", 16, 1024).ops}
    host = sg.setting.memory_policy.host_dispatch
    assert host == pytest.approx(50.6e-6)
    for name in ("qkv", "o", "experts"):
        assert eager[name].issue_s > 0 and eager[name].issue_s / host == pytest.approx(round(eager[name].issue_s / host))
        assert graphed[name].issue_s == 0 and eager[name].launch_s == pytest.approx(graphed[name].launch_s), name


def test_a_run_names_the_16_bit_layers_of_the_checkpoint_it_serves(eng):
    # DeepSeek-R1's record keeps no list (its 4-bit checkpoints differ by publisher); a row of NVIDIA's NVFP4 v2 states
    # q_a, q_b, kv_a and kv_b in BF16, which weigh 61 layers x (7,168 x 1,536 + 7,168 x 576 replicated, 1,536 x 24,576
    # and 512 x 32,768 split by TP8) at 2 bytes instead of NVFP4's 4.5 bits
    st = setting(eng, "deepseek-r1", "nvfp4", "reference", accelerator="b200")
    kept = setting(eng, "deepseek-r1", "nvfp4", "reference", accelerator="b200", keeps_16bit=["attention_in"])
    assert st.kept_16bit == frozenset() and kept.kept_16bit == {"attention_in"}
    per_gpu = 61 * (7168 * 1536 + 7168 * 576 + (1536 * 24576 + 512 * 32768) / 8)
    nvfp4 = eng.precisions["nvfp4"].bytes_per_param
    assert nvfp4 == 4.5 / 8
    gap = deploy(kept, Layout(8)).memory.weights - deploy(st, Layout(8)).memory.weights
    assert gap == pytest.approx(per_gpu * (2 - nvfp4), rel=1e-9)
    # in BF16 nothing is kept whatever the row says
    bf16 = setting(eng, "deepseek-r1", "bf16", "reference", accelerator="b200", keeps_16bit=["attention_in"])
    assert bf16.kept_16bit == frozenset()


def test_qk_norm_is_on_every_tp_rank(eng):
    from snippets.engine.memory import layer_share

    arch = eng.models["qwen3-32b"].architecture  # q_norm and k_norm of 128 each, two norms of 5120
    assert layer_share(arch, 0, Layout(8)).kept == 2 * 5120 + 2 * 128


def test_maverick_dense_and_moe_layers_split_differently(eng):
    from snippets.engine.memory import layer_share

    arch = eng.models["llama-4-maverick"].architecture
    lay = Layout(8, ep=8)
    dense, moe = layer_share(arch, 0, lay), layer_share(arch, 1, lay)
    assert dense.expert_linear == 0
    # EP8: 128 / 8 = 16 whole experts of 3 x 5120 x 8192 on each GPU; the shared expert split by TP8
    assert moe.expert_linear == 16 * 125_829_120
    attn = (2 * 5120 * 5120 + 2 * 5120 * 1024) / 8  # 8 KV heads over TP8: one each
    assert dense.linear == attn + 251_658_240 / 8
    assert moe.linear == attn + 16 * 125_829_120 + 125_829_120 / 8


def test_weights_at_bf16_tp1_are_every_parameter_twice(eng):
    for mid in ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "gpt-3-175b", "llama-4-maverick",
                "qwen3-235b-a22b", "qwen3-32b", "gpt-oss-120b"):
        arch = eng.models[mid].architecture
        assert weight_bytes(arch, eng.precisions["bf16"]) == pytest.approx(2 * total_params(arch), rel=1e-12)


def test_fp8_checkpoint_keeps_embeddings_and_lm_head_at_16_bit(eng):
    arch = eng.models["llama-3.1-405b"].architecture
    fp8 = eng.precisions["fp8"]
    edge = embedding_params(arch) + lm_head_params(arch)
    norms = norm_params(arch) * (2 * arch.layers + 1)
    body = total_params(arch) - edge - norms
    assert weight_bytes(arch, fp8) == pytest.approx(body * 1 + (edge + norms) * 2, rel=1e-12)
    # 4.2 GB more than counting every weight at one byte
    assert weight_bytes(arch, fp8) - total_params(arch) == pytest.approx(edge + norms, rel=1e-12)


def test_tp_and_pp_shares_add_up_to_the_whole_copy_for_a_model_without_replication(eng):
    arch = eng.models["llama-3.1-405b"].architecture  # 8 KV heads: TP8 replicates nothing
    bf16 = eng.precisions["bf16"]
    stages = stage_weights(arch, bf16, Layout(8, 2))
    norms_per_gpu = norm_params(arch) * 2 * arch.layers * 2  # norms are replicated on every TP rank
    per_gpu_sum = sum(s.total for s in stages) * 8
    assert per_gpu_sum - norms_per_gpu * 7 == pytest.approx(weight_bytes(arch, bf16) , rel=1e-6)


def test_expert_parallelism_hands_out_whole_experts(eng):
    arch = eng.models["deepseek-v3"].architecture  # 256 routed experts in 58 MoE layers
    bf16 = eng.precisions["bf16"]
    ep8 = stage_weights(arch, bf16, Layout(8, ep=8))[0]
    tp8 = stage_weights(arch, bf16, Layout(8))[0]
    expert = 3 * arch.hidden_size * arch.moe.expert_ffn_size
    assert ep8.expert_bytes == pytest.approx(58 * 32 * expert * 2)
    assert ep8.expert_bytes == pytest.approx(tp8.expert_bytes)  # 256 / 8 whole experts = 256 eighths
    assert layout_problems(arch, Layout(8, ep=4))  # EP must equal TP x DP


def test_a_weight_only_fp8_row_computes_in_bf16_on_an_a100(eng):
    d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-a100-8"))
    assert d.weight_only and d.compute_format == "bf16"
    h = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8"))
    assert not h.weight_only and h.compute_format == "fp8"


def test_memory_fits_against_the_reported_capacity_and_the_pool(eng):
    d = deploy(setting(eng, "llama-3.1-405b", "fp8", "reference", node="hgx-h100-8"))
    m = d.memory
    assert m.capacity == 79.22 * 2**30  # the total CUDA reports (vLLM's total_gpu_memory), not 80e9 nor nvidia-smi's
    assert m.label == 80e9
    assert m.pool == pytest.approx(0.9 * 79.22 * 2**30)
    # 8,192 tokens of KV on one GPU of TP8: 126 layers x 1 KV head x 128 x 2 (K, V) x 2 bytes per token
    assert m.kv_cache == 126 * 1 * 128 * 2 * 2 * paged_tokens(8192, 16)
    assert m.used == pytest.approx(m.weights + m.activations + m.non_torch + m.kv_cache)
    assert d.layout == Layout(8) and d.gpus == 8 and d.nodes == 1


def test_the_policy_chooses_tp_in_node_then_pp_across_nodes(eng):
    bf16 = deploy(setting(eng, "llama-3.1-405b", "bf16", "reference", node="hgx-h100-8"))
    assert bf16.layout == Layout(8, 2) and bf16.nodes == 2 and "pipeline" in bf16.why
    # the same model, fewest GPUs within a node's TP width: TP4 x PP3 = 12 is smaller and still fits
    few = deploy(setting(eng, "llama-3.1-405b", "bf16", "reference", node="hgx-h100-8", layout_policy="fewest-gpus"))
    assert few.gpus < bf16.gpus
    assert few.layout.tp <= 8


def test_tp_never_crosses_the_policy_limit(eng):
    for mid in eng.models:
        limit = eng.models[mid].architecture.context_length or 8192  # Llama 2 reads 4,096 tokens: at most that
        d = deploy(setting(eng, mid, "bf16", "reference", node="hgx-h100-8", layout_policy="fewest-gpus",
                           context_tokens=min(8192, limit)))
        assert d.layout.tp <= 8


def test_deepseek_v3_bf16_splits_61_layers_unevenly(eng):
    d = deploy(setting(eng, "deepseek-v3", "bf16", "reference", node="hgx-h100-8"))
    assert d.layout.tp == 8 and d.layout.pp >= 2
    assert 61 % d.layout.pp != 0 or d.layout.pp == 61  # no longer forced to divide the layers
    assert d.gpus < 488  # the old rule deployed TP8 x PP61


def test_a_given_layout_is_checked(eng):
    st = setting(eng, "llama-3.1-405b", "bf16", "reference", node="hgx-h100-8")
    with pytest.raises(RefusedLayout, match="attention heads"):
        deploy(st, Layout(3, 8))
    with pytest.raises(RefusedLayout, match="GiB per GPU"):
        deploy(st, Layout(8))  # 812 GB of weights on eight 79.2 GiB cards
    assert deploy(st, Layout(16)).gpus == 16  # TP across two nodes is valid for the engines


def test_cost_rents_whole_units_of_the_offering(eng):
    st = setting(eng, "llama-3.1-8b", "bf16", "reference", node="hgx-h100-8")
    d = deploy(st)
    price = eng.prices["h100-sxm"]
    assert price.gpus_per_unit == 1  # the site's price rents one GPU at a time: a replica pays its own GPUs
    assert d.cost_per_hour == pytest.approx(d.gpus * price.usd_per_gpu_hour) and d.replicas_per_rental == 1
    # an offering sold only whole (Lambda's 8-GPU H100 instance, data/prices.yaml): the instance is paid for and
    # filled with replicas, TP2 four to an instance, TP4 two
    whole = replace(price, usd_per_gpu_hour=3.99, gpus_per_unit=8, provider="Lambda")
    for tp, rented, replicas in ((2, 8, 4), (4, 8, 2)):
        dw = deploy(replace(st, prices={**st.prices, "h100-sxm": whole}), Layout(tp))
        assert (dw.gpus_rented, dw.replicas_per_rental) == (rented, replicas)
        assert dw.cost_per_replica_hour == pytest.approx(8 * 3.99 / replicas)
        assert dw.rented_gpus_per_replica == tp


def test_pipeline_stages_do_not_raise_one_sequences_ceiling(eng):
    st = setting(eng, "llama-3.1-70b", "bf16", "reference", node="hgx-h100-8")
    tp8 = deploy(st, Layout(8))
    tp4pp2 = deploy(st, Layout(4, 2))
    assert tp4pp2.decode_ceiling < tp8.decode_ceiling
    assert tp8.decode_ceiling == pytest.approx(eng.chips["h100-sxm"].hbm_bytes_per_s / tp8.decode_step_bytes(1))


def test_a_request_longer_than_the_model_reads_is_refused_as_vllm_refuses_it(eng):
    """Llama 2 70B reads 4,096 tokens (config.json's max_position_embeddings): vLLM refuses a max_model_len of 8,192
    at start, whatever the layout and the memory ("User-specified max_model_len (8192) is greater than the derived
    max_model_len (max_position_embeddings=4096 ..."), and so does the engine; at 4,096 tokens it deploys."""
    from snippets.engine import ContextTooLong, RefusedSetting, UnsupportedFormat

    assert eng.models["llama-2-70b"].architecture.context_length == 4096
    assert eng.scenarios["reference"].input_tokens + eng.scenarios["reference"].output_tokens == 8192
    with pytest.raises(ContextTooLong, match=r"^8,192 tokens, more than the 4,096 Llama 2 70B reads "
                                             r"\(its context length\)$") as err:
        setting(eng, "llama-2-70b", "bf16", "reference")
    assert err.value.engine_message.startswith(
        "User-specified max_model_len (8192) is greater than the derived max_model_len (max_position_embeddings=4096 "
        "or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution.")
    assert deploy(setting(eng, "llama-2-70b", "bf16", "reference", context_tokens=4096)).gpus >= 2
    with pytest.raises(ContextTooLong):
        setting(eng, "llama-2-70b", "bf16", "reference", context_tokens=4097)
    # the grid reports both refusals alike: refused at start, whatever the memory
    assert issubclass(ContextTooLong, RefusedSetting) and issubclass(UnsupportedFormat, RefusedSetting)


def test_bf16_weights_are_refused_on_a_chip_without_bf16(eng):
    """A V100 computes FP16, not BF16: vLLM refuses a BF16 model at start ("Bfloat16 is only supported on GPUs with
    compute capability of at least 8.0 ... --dtype=half"), and so does the engine, whatever the memory; FP16 runs,
    and a weight-only format falls back to FP16, not to the BF16 it lacks."""
    from snippets.engine import NoLayout, UnsupportedFormat

    chip = eng.chips["v100-sxm2-32gb"]
    assert chip.computes("fp16") and not chip.computes("bf16")
    with pytest.raises(UnsupportedFormat, match=r"^Bfloat16 is only supported on GPUs with compute capability of at "
                                                r"least 8\.0\. Your NVIDIA V100 SXM2 32GB .*--dtype=half\.$"):
        setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="v100-sxm2-32gb")
    assert issubclass(UnsupportedFormat, NoLayout)  # the grid, the calculator and the CLI report it as no layout
    fp16 = deploy(setting(eng, "llama-3.1-8b", "fp16", "reference", accelerator="v100-sxm2-32gb"))
    assert fp16.compute_format == "fp16" and not fp16.weight_only
    int8 = deploy(setting(eng, "llama-3.1-8b", "int8", "reference", accelerator="v100-sxm2-32gb"))
    assert int8.compute_format == "fp16" and int8.weight_only  # Volta has no INT8 tensor cores
    # every other chip computes BF16: a weight-only format still falls back to BF16 there
    a100 = deploy(setting(eng, "llama-3.1-8b", "fp8", "reference", accelerator="a100-80gb-sxm"))
    assert a100.compute_format == "bf16" and a100.weight_only
    assert all(c.computes("bf16") for k, c in eng.chips.items() if k != "v100-sxm2-32gb")



def test_int8_weights_are_refused_where_vllm_has_no_int8_kernel(eng):
    """vLLM runs a W8A8 INT8 checkpoint through CUTLASS's scaled product, which has no INT8 kernel for Blackwell
    (scaled_mm_helper.hpp: "Int8 not supported on SM100 ..."): its first product, in the profiling run, stops it.
    The engine refuses the setting with that message and the chip's SM version, under vLLM's policy only: the
    tensor cores compute INT8 (the B200's rate is recorded) and SGLang's budget is not refused. Hopper runs it."""
    from snippets.engine import UnsupportedFormat

    for acc, sm in (("b200", 100), ("gb200", 100), ("b300", 103), ("gb300", 103), ("rtx-pro-6000-server", 120)):
        with pytest.raises(UnsupportedFormat, match=rf"^Int8 not supported on SM{sm}\. Use FP8 quantization instead, "
                                                    r"or run on older arch \(SM < 100\)\.$"):
            setting(eng, "llama-3.1-8b", "int8", "reference", accelerator=acc)
    assert eng.chips["b200"].computes("int8")  # the gap is the engine's, not the chip's
    for acc in ("h100-sxm", "a100-80gb-sxm", "l40s"):  # SM 90, 80 and 89: CUTLASS has INT8 kernels there
        d = deploy(setting(eng, "llama-3.1-8b", "int8", "reference", accelerator=acc))
        assert d.compute_format == "int8" and not d.weight_only
    sglang = deploy(setting(eng, "llama-3.1-8b", "int8", "reference", accelerator="b200",
                            memory_policy="sglang-default"))
    assert sglang.compute_format == "int8"
    # FP8 and BF16 still run on every one of them
    for acc in ("b200", "b300", "rtx-pro-6000-server"):
        assert deploy(setting(eng, "llama-3.1-8b", "fp8", "reference", accelerator=acc)).compute_format == "fp8"

def test_fp8_weights_are_refused_where_vllm_has_no_fp8_kernel_on_rocm(eng):
    """vLLM's ROCm platform says every CDNA chip supports FP8, so an FP8 checkpoint on an MI250X (gfx90a) looks for
    an FP8 scaled-product kernel, and none of ROCm's runs on CDNA 2 by default (AITER off, the others CDNA 3 or
    later): it stops with its kernel chooser's message. The engine refuses the setting with it under vLLM's policy;
    BF16 runs there, the MI300X runs FP8, and SGLang's budget is not refused (no source read for its FP8 path)."""
    from snippets.engine import UnsupportedFormat

    with pytest.raises(UnsupportedFormat, match=r"^Failed to find a kernel that can implement the ScaledMM linear "
                                                r"layer\.$"):
        setting(eng, "llama-3.1-8b", "fp8", "reference", accelerator="mi250x")
    assert deploy(setting(eng, "llama-3.1-8b", "bf16", "reference", accelerator="mi250x")).compute_format == "bf16"
    assert deploy(setting(eng, "llama-3.1-8b", "fp8", "reference", accelerator="mi300x")).compute_format == "fp8"
    sglang = deploy(setting(eng, "llama-3.1-8b", "fp8", "reference", accelerator="mi250x",
                            memory_policy="sglang-default"))
    assert sglang.weight_only  # no FP8 matrix units on CDNA 2: priced as weight-only where no refusal is recorded


def test_new_accelerators_size_on_their_nodes(eng):
    """B300, GB300, A100 80GB PCIe and V100 each have a node the engine sizes on (the grid covers them all)."""
    for acc, node, gpus in (("b300", "hgx-b300-8", 8), ("gb300", "gb300-nvl72", 72),
                            ("a100-80gb-pcie", "a100-80gb-pcie-8", 8), ("v100-sxm2-32gb", "aws-p3dn-24xlarge", 8)):
        n = eng.node_of(acc)
        assert n is not None and n.id == node and n.gpus == gpus
    d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", accelerator="b300"))
    assert d.layout == Layout(1)  # 72.7 GB of FP8 weights in one 288 GB label's pool
    assert eng.chips["b300"].capacity_bytes == 288e9 and not eng.chips["b300"].capacity_reported


def test_a_weight_format_is_refused_as_the_kv_cache_precision(eng):
    # vLLM's --kv-cache-dtype (CacheDType) has no value for a group- or block-scaled weight format; every caller of
    # `setting` (command line, pages, notebook) meets the same refusal, and a KV cache dtype passes
    from snippets.engine import UnsupportedFormat

    for pid in ("int4-g128", "fp8-block", "mxfp4"):
        with pytest.raises(UnsupportedFormat, match="weight format, not a KV cache dtype"):
            setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8", kv_precision=pid)
    assert setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8", kv_precision="fp8").kv_precision.id \
        == "fp8"
