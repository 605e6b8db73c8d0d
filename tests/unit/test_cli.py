"""The command line and the request rules it shares with the calculator (`snippets.engine.requests`).

Each refusal here was accepted before (issue 27): a zero token count became the scenario's, an input past the
model's context was sized, `--node` beside another `--accelerator` ignored the accelerator, a `--catalog` with a
NaN bandwidth printed a wrong time and one with a zero fraction a traceback; a concurrency beyond the KV cache
was "does not fit" where an engine runs what it admits and queues the rest.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog, export
from snippets.engine.__main__ import main
from snippets.engine.codec import encode
from snippets.engine.requests import (
    MAX_CONFIG_CHARS,
    MAX_DEPTH,
    MAX_TOKENS,
    RequestError,
    check_catalog,
    check_config_text,
    check_request,
    load_catalog,
    queue_split,
)

from .test_hf import LLAMA4_SCOUT, LLAMA_31_8B

SIZE = ["size", "--model", "llama-3.1-70b", "--precision", "fp8"]
PREDICT = ["predict", "--model", "llama-3.1-70b", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "2"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m snippets.engine ARGS`, run in this process: its exit status, stdout and stderr. `main` is all the
    command runs (test_timing.py's test_cli_predict_prints_one_json_object runs it as a command), and a process
    of its own would cost each call a second of imports."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's refusals (2), or its --help (0), as the command would exit
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess([sys.executable, "-m", "snippets.engine", *args], code, out.getvalue(),
                                       err.getvalue())


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if out.strip() else None), err


@pytest.mark.parametrize(("extra", "words"), [
    (["--input-tokens", "0"], "input tokens must be between 1 and"),
    (["--output-tokens", "0"], "output tokens must be between 1 and"),
    (["--input-tokens", "-5"], "input tokens must be between 1 and"),
    (["--input-tokens", "2000000", "--output-tokens", "10"], "beyond Llama 3.1 70B's context of 131,072 tokens"),
    (["--concurrency", "0"], "concurrency must be between 1 and"),
    (["--concurrency", "lots"], "--concurrency must be a whole number"),
])
def test_bad_requests_exit_nonzero_with_one_line(extra: list[str], words: str, capsys: pytest.CaptureFixture[str]
                                                 ) -> None:
    rc, out, err = _run(PREDICT + extra, capsys)
    assert rc != 0 and out is None, (extra, err)
    assert words in err and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize(("argv", "rc", "words"), [
    (["predict", "--model", "llama-3.1-70b", "--precision", "nope", "--accelerator", "h100-sxm", "--tp", "2"], 2,
     "unknown id 'nope' (precision); known: "),
    ([*PREDICT, "--kv-precision", "FP8"], 2, "unknown id 'FP8' (KV precision); known: "),
    ([*PREDICT, "--kv-precision", ""], 2, "unknown id '' (KV precision)"),
    # a weight format with group or block scales is no KV cache dtype of any engine (vLLM's CacheDType)
    ([*PREDICT, "--kv-precision", "int4-g128"], 2, "--kv-precision 'int4-g128': INT4, groups of 128 (GPTQ/AWQ) is a "
     "weight format, not a KV cache dtype"),
    ([*PREDICT, "--kv-precision", "mxfp4"], 2, "a KV precision is one of: bf16, fp16, fp32, fp8, fp8-e4m3, fp8-e5m2, "
     "int4, int8, nvfp4"),
    ([*SIZE, "--layout-policy", "nope"], 2, "unknown id 'nope' (layout policy); known: "),
    # predict is given its layout: a policy that would choose one is refused, not echoed and ignored
    ([*PREDICT, "--layout-policy", "fewest-gpus"], 2, "error: unrecognized arguments: --layout-policy fewest-gpus"),
    # vLLM has no INT8 kernel on Blackwell: its own message, as for BF16 on a V100
    (["predict", "--model", "llama-3.1-8b", "--precision", "int8", "--accelerator", "b200", "--tp", "1"], 1,
     "Int8 not supported on SM100. Use FP8 quantization instead, or run on older arch (SM < 100)."),
    (["size", "--model", "llama-3.1-8b", "--precision", "int8", "--accelerator", "rtx-pro-6000-server"], 1,
     "Int8 not supported on SM120."),
    ([*PREDICT, "--spec-tokens", "2", "--acceptance", "0.5", "--draft", "nope"], 2,
     "unknown draft 'nope' (draft): mtp, eagle or a model id"),
    ([*PREDICT, "--data", "/nonexistent"], 1, "--data /nonexistent: not a directory"),
    ([*PREDICT, "--data", "data/models.yaml"], 1, "--data data/models.yaml: not a directory"),
    (["predict", "--model", "llama-3.1-70b", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "-1"], 1,
     "every degree of a layout must be at least 1, got tp=-1, pp=1, ep=1, dp=1"),
    ([*PREDICT, "--request-rate", "1e-310"], 1, "a figure is not finite"),
    ([*PREDICT, "--prefix-hit", "0.5", "--prefix-groups", "0"], 1, "the prefix groups must be at least 1"),
    ([*PREDICT[:-1], "1.5"], 2, "error: argument --tp: invalid int value: '1.5' (python -m snippets.engine predict --help"),
    (["size", "--model", "llama-3.1-70b"], 2, "the following arguments are required: --precision"),
    (["predict", "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm", "--tp", "1",
      "--input-tokens", "100", "--output-tokens", "10", "--prefix-hit", "0.5", "--prefix-groups", "20000"], 1,
     "not one sequence of 110 tokens fits the KV cache beside 20,000 cached prefixes of 48 tokens"),
    (["predict", "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm", "--tp", "1",
      "--input-tokens", "100", "--output-tokens", "10", "--spec-tokens", "3", "--acceptance", "0.5",
      "--draft", "llama-3.1-405b"], 1,
     "fits the KV cache beside the draft's weights and cache (Llama 3.1 405B)"),
])
def test_every_option_is_named_when_refused(argv: list[str], rc: int, words: str) -> None:
    """Each option's bad value is refused in one line naming the option, no traceback, and no JSON that a strict
    parser would refuse (a request rate so small its price per token is infinite)."""
    done = run_cli(*argv)
    assert done.returncode == rc and not done.stdout, (argv, done.stderr)
    assert words in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_the_breakdown_sums_to_the_decode_step_and_the_input_price_ignores_load(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, one, _ = _run([*PREDICT, "--concurrency", "1"], capsys)
    rc2, most, _ = _run([*PREDICT, "--concurrency", "max"], capsys)
    assert rc == rc2 == 0
    for out in (one, most):
        assert sum(out["breakdown"].values()) * 1e3 == pytest.approx(out["decode_step_ms"], rel=1e-9)
    assert most["decode_step_ms"] < most["tpot_ms"]  # prompts share the steps at load
    assert one["usd_per_mtok_input"] == pytest.approx(most["usd_per_mtok_input"], rel=1e-12)


def test_a_moe_kernel_without_figures_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["predict", "--model", "deepseek-v3", "--precision", "fp8", "--accelerator", "b200", "--tp", "8",
            "--ep", "8", "--input-tokens", "1000", "--output-tokens", "300", "--concurrency", "16"]
    rc, plain, _ = _run(base, capsys)
    rc2, deepgemm, _ = _run([*base, "--moe-kernel", "deepgemm"], capsys)
    assert rc == rc2 == 0
    assert deepgemm["assumptions"]["moe_kernel"] == "deepgemm"
    assert deepgemm["assumptions"]["moe_kernel_measured"] is False
    assert deepgemm["tpot_ms"] == plain["tpot_ms"]  # the median, as without a kernel named
    rc, dense, _ = _run([*PREDICT, "--moe-kernel", "cutlass"], capsys)
    assert rc == 0 and dense["assumptions"]["moe_kernel_measured"] is None  # no experts to run


def test_node_and_accelerator_that_disagree_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run([*SIZE, "--accelerator", "h100-sxm", "--node", "hgx-h200-8"], capsys)
    assert rc == 1 and "'hgx-h200-8' is built from 'h200-sxm', not accelerator 'h100-sxm'" in err
    rc, out, _ = _run([*SIZE, "--accelerator", "h200-sxm", "--node", "hgx-h200-8"], capsys)
    assert rc == 0 and out["accelerator"] == "h200-sxm"
    rc, _, err = _run(["search", "--model", "llama-3.1-70b", "--precision", "fp8", "--accelerator", "h100-sxm",
                       "--node", "hgx-h200-8"], capsys)
    assert rc == 1 and "not accelerator 'h100-sxm'" in err


def test_the_context_limit_is_the_models(catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    limit = eng.models["llama-3.1-70b"].architecture.context_length
    assert limit is not None
    ok = check_request(eng, "llama-3.1-70b", input_tokens=limit - 1, output_tokens=1)
    assert ok.context_tokens == limit
    with pytest.raises(RequestError, match=f"context of {limit:,} tokens"):
        check_request(eng, "llama-3.1-70b", input_tokens=limit, output_tokens=1)


def test_the_request_check_and_the_engine_refuse_at_the_same_length(catalog: Catalog) -> None:
    """One rule (`deployment.context_refusal`): for every model that states its context, the command line's check
    and `setting` both take the limit and both refuse one token more; the request check's message names the model
    and the limit, and no config.json field a model may not have (GPT-3 175B's context is its paper's)."""
    from snippets.engine import ContextTooLong, setting

    eng = engine_catalog(catalog)
    limits = {m: s.architecture.context_length for m, s in eng.models.items()}
    assert limits["gpt-3-175b"] == 2048 and limits["llama-2-70b"] == 4096
    for model, limit in limits.items():
        assert limit is not None, model
        check_request(eng, model, input_tokens=limit - 1, output_tokens=1)
        setting(eng, model, "bf16", "reference", context_tokens=limit)
        with pytest.raises(RequestError) as asked:
            check_request(eng, model, input_tokens=limit, output_tokens=1)
        assert str(asked.value) == (f"input + output tokens come to {limit + 1:,}, beyond {eng.models[model].name}'s "
                                    f"context of {limit:,} tokens")
        with pytest.raises(ContextTooLong) as refused:
            setting(eng, model, "bf16", "reference", context_tokens=limit + 1)
        assert (refused.value.model, refused.value.tokens, refused.value.limit) == (eng.models[model].name, limit + 1,
                                                                                    limit)
    # the longest context in data/ (Llama 4 Scout Instruct's) is within the request's and a pasted config's bounds
    longest = max(v for v in limits.values() if v is not None)
    assert longest == 10_485_760 and longest <= MAX_TOKENS
    check_config_text(json.dumps({**LLAMA_31_8B, "max_position_embeddings": longest}))


def test_concurrency_beyond_the_kv_cache_runs_what_it_admits_and_queues_the_rest(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run([*PREDICT, "--concurrency", "5000"], capsys)
    assert rc == 0, err
    assert out["concurrency"] == 5000 and 1 <= out["in_flight"] < 5000
    assert out["in_flight"] + out["queued"] == 5000 and out["in_flight"] <= out["max_concurrency"]
    rc, small, _ = _run([*PREDICT, "--concurrency", str(out["in_flight"])], capsys)
    assert rc == 0 and small["queued"] == 0
    assert out["ttft_ms"] > small["ttft_ms"]  # the queue's wait is in the time to first token
    rc, big, err = _run([*SIZE, "--concurrency", "100000"], capsys)
    assert rc == 0, err
    assert big["queued"] == 100_000 - big["in_flight"] > 0
    split = queue_split(100_000, big["in_flight"])
    assert split.running == big["in_flight"] and "queue for a slot" in split.text


def test_predict_at_a_request_rate_holds_what_the_rate_keeps_in_flight(capsys: pytest.CaptureFixture[str]) -> None:
    short = [*PREDICT, "--input-tokens", "1000", "--output-tokens", "250"]
    rc, out, err = _run([*short, "--request-rate", "2"], capsys)
    assert rc == 0, err
    assert out["request_rate"] == 2.0 and out["saturated"] is False and out["queued"] == 0
    assert out["output_tokens_per_s"] == pytest.approx(2.0 * out["output_tokens"])
    life_s = (out["ttft_ms"] + (out["output_tokens"] - 1) * out["tpot_ms"]) / 1e3  # Little's law by hand
    assert out["mean_in_flight"] == pytest.approx(2.0 * life_s) and out["in_flight"] - 1 <= out["mean_in_flight"]
    rc, held, _ = _run([*short, "--concurrency", str(out["in_flight"])], capsys)
    assert rc == 0 and held["request_rate"] is None and held["saturated"] is False
    assert held["mean_in_flight"] == held["in_flight"]
    assert held["output_tokens_per_s"] > out["output_tokens_per_s"]  # the closed loop just above the rate
    rc, flood, _ = _run([*short, "--request-rate", "100000"], capsys)
    assert rc == 0 and flood["saturated"] is True and flood["in_flight"] == flood["concurrency"]
    assert flood["mean_in_flight"] == flood["in_flight"]  # what runs; the queue beyond it grows without end
    assert flood["output_tokens_per_s"] < 100_000 * flood["output_tokens"]
    for bad in (["--request-rate", "2", "--concurrency", "4"], ["--request-rate", "0"], ["--request-rate", "inf"]):
        rc, none, err = _run([*short, *bad], capsys)
        assert rc == 1 and none is None and "--request-rate takes a positive number" in err, bad


def _catalog_file(tmp_path: Path, catalog: Catalog, edit: Any) -> str:
    d = json.loads(json.dumps(encode(export(catalog))))
    edit(d)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(d), encoding="utf-8")  # json.dumps writes NaN as NaN, as a careless tool would
    return str(path)


def _set(path: tuple[str, ...], value: Any) -> Any:
    def edit(d: dict[str, Any]) -> None:
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return edit


@pytest.mark.parametrize(("path", "value", "words"), [
    (("chips", "h100-sxm", "hbm_bytes_per_s"), float("nan"), "NaN is not a number JSON allows"),
    (("chips", "h100-sxm", "hbm_bytes_per_s"), 0, "chips.h100-sxm.hbm_bytes_per_s is 0.0, not above zero"),
    (("memory_policies", "vllm-default", "utilization"), 0, "utilization is 0.0, not a fraction in (0, 1]"),
    (("time_models", "measured-fractions", "chips", "h100-sxm", "hbm"), 0, "hbm is 0.0, not a fraction"),
    (("time_models", "measured-fractions", "chips", "h100-sxm", "hbm"), 1.5, "hbm is 1.5, not a fraction"),
    (("prices",), [], "prices is missing"),
])
def test_a_catalog_file_is_checked_as_strictly_as_data(
        tmp_path: Path, catalog: Catalog, capsys: pytest.CaptureFixture[str], path: tuple[str, ...], value: Any,
        words: str) -> None:
    f = _catalog_file(tmp_path, catalog, _set(path, value))
    rc, out, err = _run([*PREDICT, "--catalog", f], capsys)
    assert rc == 1 and out is None and words in err and "Traceback" not in err, err


def test_the_builds_own_catalog_passes_and_answers_as_data_does(
        tmp_path: Path, catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_catalog(json.loads(json.dumps(encode(export(catalog))))) == []
    f = _catalog_file(tmp_path, catalog, lambda d: None)
    rc, via_file, _ = _run([*PREDICT, "--catalog", f], capsys)
    rc2, via_data, _ = _run(PREDICT, capsys)
    assert rc == rc2 == 0 and via_file == via_data
    with pytest.raises(RequestError, match="not JSON"):
        load_catalog("{", "x")


@pytest.mark.parametrize(("text", "words"), [
    ("x" * (MAX_CONFIG_CHARS + 1), f"more than the {MAX_CONFIG_CHARS:,}"),
    ("[" * 5000 + "]" * 5000, f"more than {MAX_DEPTH} deep"),
    ('{"a": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}", f"more than {MAX_DEPTH} deep"),
    (json.dumps({**LLAMA_31_8B, "num_hidden_layers": 1_000_000}), "num_hidden_layers is 1,000,000, more than the 1,000"),
    (json.dumps({**LLAMA_31_8B, "hidden_size": 1e200}), "hidden_size is 1e+200, beyond"),
    (json.dumps({**LLAMA_31_8B, "vocab_size": 10**9}), "vocab_size is 1,000,000,000, more than the 4,194,304"),
    (json.dumps({**LLAMA4_SCOUT, "text_config": {**LLAMA4_SCOUT["text_config"], "num_hidden_layers": 10**12}}),
     "text_config.num_hidden_layers is 1,000,000,000,000, more than the 1,000"),
    (json.dumps({**LLAMA4_SCOUT, "vision_config": {**LLAMA4_SCOUT["vision_config"], "image_size": 10**9}}),
     "vision_config.image_size is 1,000,000,000, more than the 65,536"),
    (json.dumps({**LLAMA_31_8B, "layer_types": ["x"] * 5000}), "layer_types has 5,000 items, more than 2,000"),
    (json.dumps({**LLAMA_31_8B, "_name_or_path": "m" * 5000}), "_name_or_path is 5,000 characters long"),
    ('{"hidden_size": NaN}', "NaN is not a number JSON allows"),
    ('{"a": "[[[[[[[[[[[[[[[["}', None),  # brackets inside a string are text, not nesting
])
def test_a_pasted_config_is_bounded_before_any_work(text: str, words: str | None) -> None:
    if words is None:
        assert check_config_text(text) == {"a": "[[[[[[[[[[[[[[[["}
        return
    with pytest.raises(RequestError) as exc:
        check_config_text(text)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert len(str(exc.value)) < 300


def test_predict_says_which_regime_each_band_is_from(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """Each range with its regime's test rows; a regime with fewer than five takes the span of the bands with enough
    rows and says so."""
    from snippets.engine import bands as bands_mod

    rc, got, _ = _run([*PREDICT, "--input-tokens", "1000", "--output-tokens", "500", "--concurrency", "8"], capsys)
    assert rc == 0
    entries = engine_catalog(catalog).time_models["measured-fractions"].bands
    for metric, regime in (("tpot_ms", got["regime"]), ("ttft_ms", got["ttft_regime"]),
                           ("output_tokens_per_s", got["regime"])):
        b = got["bands"][metric]
        vendor, kind, phase = regime.split(", ")
        own = [e for e in entries if (e.metric, e.vendor, e.moe, e.phase) == (metric, vendor, kind == "MoE", phase)]
        rows = own[0].rows if own else 0
        assert b["regime"] == regime and b["test_rows"] == rows
        assert b["widest"] is (rows < bands_mod.MIN_ROWS)
        assert ("the span of the bands with enough rows" in b["basis"]) is b["widest"]


def test_a_memory_policy_budgets_and_schedules_as_that_engine(capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 3.1 8B BF16 on one H100 SXM: vLLM's budget is 0.9 of the CUDA total and mixes prompts into decode steps;
    # SGLang's launch_server with no memory flag keeps (G - R) / G of the device, 0.835 at TP1 (R = 512 + 1.5 x 8,192
    # + 2 x 256 + 1,024 / 8 MiB = 13,440 MiB of nvidia-smi's 81,559: tests/unit/test_memory.py works it), and runs
    # each prefill in a step of its own
    base = ["predict", "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm", "--tp", "1",
            "--concurrency", "16", "--input-tokens", "1000", "--output-tokens", "1000"]
    rc, vllm, err = _run(base, capsys)
    assert rc == 0, err
    rc, sgl, err = _run([*base, "--memory-policy", "sglang-default"], capsys)
    assert rc == 0, err
    assert vllm["assumptions"]["memory_policy"] == "vllm-default" and vllm["assumptions"]["mixed_steps"] is True
    assert vllm["assumptions"]["gpu_memory_utilization"] == pytest.approx(0.9)
    assert sgl["assumptions"]["memory_policy"] == "sglang-default" and sgl["assumptions"]["mixed_steps"] is False
    assert sgl["assumptions"]["gpu_memory_utilization"] == pytest.approx(0.835)
    assert sgl["tpot_ms"] > vllm["tpot_ms"]  # the decoding requests wait for each prompt's step
    # the dense GEMMs' own ops an engine runs: TensorRT-LLM's policies name theirs, vLLM's and SGLang's none
    assert vllm["assumptions"]["gemm_kernel"] is None and sgl["assumptions"]["gemm_kernel"] is None
    rc, trt, err = _run([*base, "--memory-policy", "trtllm-bench"], capsys)
    assert rc == 0 and trt["assumptions"]["gemm_kernel"] == "trtllm", err
    rc, found, err = _run(["search", "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm",
                           "--input-tokens", "1000", "--output-tokens", "200", "--tpot-ms", "20", "--mode",
                           "aggregated", "--memory-policy", "sglang-default"], capsys)
    assert rc == 0 and found["memory_policy"] == "sglang-default", err
    rc, out, err = _run([*base, "--memory-policy", "tp-in-node"], capsys)  # a layout policy, not a memory one
    assert rc == 2 and out is None and err.count("\n") == 1
    assert "unknown id 'tp-in-node' (memory policy); known: sglang-default," in err


def test_predict_prints_the_kv_cache_as_the_engine_logs_it(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM's two start-up lines: the blocks' tokens and the sequences of the context they hold at once; SGLang's
    # pool in tokens, the field of its own start-up line
    rc, out, err = _run([*PREDICT, "--input-tokens", "7000", "--output-tokens", "1192"], capsys)
    assert rc == 0, err
    k = out["kv_cache_size"]
    assert k["engine"] == "vLLM" and k["max_model_len"] == 8192 and k["groups"] == 1 and k["block_tokens"] == 16
    assert k["tokens"] == k["blocks"] * 16
    assert k["log"] == [f"Available KV cache memory: {k['available_gib']:.2f} GiB",
                        f"GPU KV cache size: {k['tokens']:,} tokens",
                        f"Maximum concurrency for 8,192 tokens per request: {k['blocks'] / 512:.2f}x"]
    assert int(k["max_concurrency"]) == out["max_concurrency"]  # under max_num_seqs, the pool's sequences
    gib = out["memory_per_gpu"]
    room = (gib["pool"]["value"] - gib["weights"]["value"] - gib["activations"]["value"]
            - gib["runtime"]["value"]) * 2**30
    assert k["blocks"] == int(room // (16 * 2 * 4 * 128 * 2) // 80)  # FP8 weights, a BF16 KV cache, TP2
    assert k["available_gib"] * 2**30 == pytest.approx(room)
    rc, out, err = _run([*PREDICT, "--memory-policy", "sglang-default"], capsys)
    assert rc == 0, err
    k = out["kv_cache_size"]
    assert k["engine"] == "SGLang" and k["block_tokens"] == 1 and k["log"] == [f"max_total_num_tokens={k['tokens']}"]


def test_the_moe_kernel_a_command_names_prices_the_experts() -> None:
    # Qwen3-235B-A22B in BF16 on 8 x B200 under SGLang's policy, one request: SGLang 0.5.6 runs these experts with its
    # Triton kernel (data/measurements.yaml, the SGLang cookbook's rows). Named, each of the 94 MoE layers of a decode
    # step pays that kernel's own fixed cost, 24.3 us (data/efficiencies.yaml b200-moe-weights-bf16-triton), where
    # the median is charged six kernels at 2.7 us: 94 x 8.1 us = 0.761 ms more of the step's fixed costs.
    from typing import get_args

    from snippets.data.schema.efficiencies import MoeKernel
    from snippets.engine.specs import MOE_KERNELS

    assert get_args(MoeKernel) == MOE_KERNELS
    args = ("predict", "--model", "qwen3-235b-a22b", "--precision", "bf16", "--accelerator", "b200", "--tp", "8",
            "--input-tokens", "1000", "--output-tokens", "1000", "--concurrency", "1", "--memory-policy",
            "sglang-default")
    median, triton = run_cli(*args), run_cli(*args, "--moe-kernel", "triton")
    assert median.returncode == triton.returncode == 0
    m, t = json.loads(median.stdout), json.loads(triton.stdout)
    assert m["assumptions"]["moe_kernel"] is None and t["assumptions"]["moe_kernel"] == "triton"
    assert t["breakdown"]["launch"] - m["breakdown"]["launch"] == pytest.approx(94 * (24.3 - 6 * 2.7) * 1e-6)
    assert t["breakdown"]["moe"] > m["breakdown"]["moe"] and t["tpot_ms"] > m["tpot_ms"]
    assert run_cli(*args, "--moe-kernel", "nonesuch").returncode == 2


@pytest.mark.parametrize(("accelerator", "measured"), [("h100-sxm", True), ("h200-sxm", True), ("b200", False)])
def test_a_kernel_is_reported_measured_by_the_weights_format_it_is_priced_in(accelerator: str, measured: bool) -> None:
    # gpt-oss-120b's MXFP4 experts compute in BF16 on Hopper, where Marlin's entries (h100-sxm-moe-weights-fp4-marlin,
    # h200-sxm-...) are keyed by the weights' format, FP4, and priced: the report says so. On a B200 no table times
    # Marlin, and the experts take the median, as the report says too.
    args = ("predict", "--model", "gpt-oss-120b", "--precision", "mxfp4", "--accelerator", accelerator, "--tp", "8",
            "--input-tokens", "1024", "--output-tokens", "1024", "--concurrency", "16")
    median, marlin = run_cli(*args), run_cli(*args, "--moe-kernel", "marlin")
    assert median.returncode == marlin.returncode == 0
    m, k = json.loads(median.stdout), json.loads(marlin.stdout)
    assert k["assumptions"]["moe_kernel"] == "marlin" and k["assumptions"]["moe_kernel_measured"] is measured
    assert (k["tpot_ms"] > m["tpot_ms"]) is measured and (k["tpot_ms"] == m["tpot_ms"]) is not measured


@pytest.mark.parametrize("command", ["search", "size"])
def test_wave_is_predicts_alone(command: str) -> None:
    """`--wave` runs predict's --concurrency requests as one wave; search and size have no concurrency to run so,
    and refuse the flag rather than accept it and do nothing (search took it, and ignored it)."""
    done = run_cli(command, "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm", "--wave")
    assert done.returncode == 2 and "unrecognized arguments: --wave" in done.stderr
    assert "--wave" in run_cli("predict", "--help").stdout


def test_only_size_names_the_layout_policy_it_chose(capsys: pytest.CaptureFixture[str]) -> None:
    """predict is given its layout, so its assumptions name no layout policy; size chose its layout by one."""
    rc, given, _ = _run(PREDICT, capsys)
    assert rc == 0 and given["why"] == "given" and given["assumptions"]["layout_policy"] is None
    rc, chosen, _ = _run([*SIZE, "--accelerator", "h100-sxm"], capsys)
    assert rc == 0 and chosen["why"] != "given" and chosen["assumptions"]["layout_policy"] == "tp-in-node"
    # as many sequences as the KV cache holds: the same policy's layout, its reason kept (not "given")
    rc, most, _ = _run([*SIZE, "--accelerator", "h100-sxm", "--concurrency", "max"], capsys)
    assert rc == 0 and most["why"] == chosen["why"] and most["layout"] == chosen["layout"]
    assert most["concurrency"] == most["max_concurrency"] > 1


def test_marlins_padded_experts_refuse_gpt_oss_on_one_h100(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM's Marlin kernel holds gpt-oss-120b's experts as 3,072 x 2,944 matrices (tests/unit/test_memory.py works
    # it): 65.90 GiB of weights on one H100, and at vLLM's defaults nothing left for the KV cache, as
    # vllm-project/vllm#23278's log shows; the Triton kernel vLLM picks there when it has triton_kernels pads nothing
    base = ["predict", "--model", "gpt-oss-120b", "--precision", "mxfp4", "--accelerator", "h100-sxm", "--tp", "1",
            "--concurrency", "1", "--input-tokens", "1000", "--output-tokens", "1000"]
    rc, plain, err = _run(base, capsys)
    assert rc == 0, err
    assert plain["assumptions"]["expert_padding"] == [1, 64]
    assert plain["memory_per_gpu"]["weights"]["value"] == pytest.approx(60.77, abs=0.01)
    rc, out, err = _run([*base, "--moe-kernel", "marlin"], capsys)
    assert rc == 1 and out is None  # refused, as vLLM refuses it
    assert "weights 65.90" in err and "No available memory for the cache blocks" in err


def test_predict_shows_the_image_encoder_the_engine_holds(capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 4 Scout at TP8: vLLM builds its image encoder and projector (870,825,728 parameters split over TP and
    # 1,106,688 whole on every rank, in 16 bits: tests/unit/test_memory.py works them), 0.2048 GiB a GPU; SGLang's
    # launch_server builds none unless --enable-multimodal
    base = ["predict", "--model", "llama-4-scout", "--precision", "fp8", "--accelerator", "h100-sxm", "--tp", "8",
            "--concurrency", "1", "--input-tokens", "1000", "--output-tokens", "1000"]
    rc, vllm, err = _run(base, capsys)
    assert rc == 0, err
    rc, sgl, err = _run([*base, "--memory-policy", "sglang-default"], capsys)
    assert rc == 0, err
    assert vllm["assumptions"]["vision_encoder"] == {"value": pytest.approx(0.2048, abs=1e-4), "unit": "GiB"}
    assert sgl["assumptions"]["vision_encoder"] is None
    rc, text, err = _run([*base, "--text-only"], capsys)  # vLLM with --limit-mm-per-prompt '{"image": 0}'
    assert rc == 0, err
    assert text["assumptions"]["vision_encoder"] is None
    gib = vllm["memory_per_gpu"]["weights"]["value"] - text["memory_per_gpu"]["weights"]["value"]
    assert gib == pytest.approx(0.2048, abs=1e-4)
    rc, dense, err = _run(["predict", "--model", "llama-3.1-8b", "--precision", "bf16", "--accelerator", "h100-sxm",
                           "--tp", "1", "--concurrency", "1", "--input-tokens", "100", "--output-tokens", "100"], capsys)
    assert rc == 0 and dense["assumptions"]["vision_encoder"] is None
