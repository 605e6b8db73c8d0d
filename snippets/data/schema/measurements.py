"""data/measurements.yaml: a published serving measurement, its definitions, mode and role."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from snippets.data.base import PositiveFloat, PositiveInt, Sources, Text, _read_only, _Strict
from snippets.data.schema.deployments import DeployedLayout
from snippets.data.schema.efficiencies import MoeKernel
from snippets.engine.specs import KeptLinear

MEASUREMENT_OPTIONAL_FIELDS = ("engine_version", "layout", "input_tokens", "output_tokens")


"""Fields a measurement may leave out, each only with the reason in `not_stated` (the source does not say)."""


PERMITTED_CALIBRATION_SOURCES = (
    "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/",
    "https://github.com/semianalysisai/inferencex/",
    "https://github.com/semianalysisai/inferencex-app/",
    "https://inferencex.semianalysis.com/",
    "https://github.com/azure/ai-benchmarking-guide/",
)


"""The sources issue 24 names for fitting (compared lower-case, by URL prefix): NVIDIA NIM's LLM benchmarking 1.0.0
performance page, SemiAnalysis InferenceX's published results (its repositories and its results API), and Azure's
AI-benchmarking-guide results. A calibration row comes from one of them; a test row from none."""


NotStated = Annotated[Mapping[str, Annotated[str, Field(min_length=10)]], AfterValidator(_read_only)]


def _given_or_not_stated(where: str, values: dict[str, object], not_stated: Mapping[str, str]) -> list[str]:
    """Each optional field is either given or named in `not_stated` with the reason, never both, never neither."""
    problems = [f"{where}not_stated.{k}: not an optional field here (optional: {', '.join(values)})"
                for k in not_stated if k not in values]
    for key, value in values.items():
        if value is None and key not in not_stated:
            problems.append(f"{where}{key}: required, or say in not_stated why the source does not give it")
        elif value is not None and key in not_stated:
            problems.append(f"{where}{key}: given and also listed in not_stated")
    return problems


def _layout_problems(where: str, lay: DeployedLayout) -> list[str]:
    """Shape rules every engine applies: the expert-parallel group is built from the TP x DP ranks, so EP is 1
    or divides TP x DP (vLLM's --enable-expert-parallel makes EP = TP x DP; SGLang's --ep-size <= --tp-size)."""
    ranks = lay.tp * lay.dp
    if lay.ep > 1 and ranks % lay.ep:
        return [f"{where}ep: EP {lay.ep} must divide TP x DP = {ranks} (experts are spread over the TP x DP ranks)"]
    return []


class Burst(_Strict):
    """A fixed-concurrency client that starts every request it keeps in flight at once (no request rate) and sends
    `prompts` in all, or `prompts_per_request` for each request it keeps in flight: its first wave queues behind its
    own prompts (`snippets.calibration.first_wave_s`). A fact of the source's harness, not a fitted factor."""

    prompts: PositiveInt | None = None
    prompts_per_request: PositiveInt | None = None
    same_lengths: bool = False
    """Every prompt of the row's input length and every output of its output length (the client's random-range
    ratio 1, end of sequence ignored): requests that start together and get their first tokens in the same step
    finish in the same step, so the next ones start together again (`snippets.calibration.lockstep`)."""
    range_ratio: Annotated[float, Field(ge=0.0, lt=1.0)] | None = None
    """The client draws every prompt's and output's length uniformly from the integers between `range_ratio` times
    the nominal length and the nominal length (vLLM's and SGLang's bench_serving, `--random-range-ratio`: SGLang's
    defaults to 0, InferenceX's workflows pass 0.8), and the row's input and output tokens are the run's means. Its
    requests then end at different times, and the run's last ones finish with fewer in flight
    (`snippets.calibration.drain_factor`). None where the lengths follow a dataset or are not stated."""
    how: Annotated[str, Field(min_length=10)]
    """The client's command that shows it (the source is among the row's sources)."""
    queued: bool = True
    """Whether the first wave queued behind its own prompts, as the client's code has it. False where the source's
    own spread rules that out (its P99 TTFT below the least time such a wave takes: snippets/data/checks.py,
    `_check_first_waves`), the note saying so: no first wave is then added to the mean TTFT, while the prompt count
    and the lengths still play the run's end (`snippets.calibration.drain`)."""

    @model_validator(mode="after")
    def _one(self) -> Burst:
        if (self.prompts is None) == (self.prompts_per_request is None):
            raise ValueError("burst: give prompts or prompts_per_request, not both")
        if self.same_lengths and self.range_ratio is not None:
            raise ValueError("burst: lengths that are all the nominal ones have no range_ratio")
        return self


class Definitions(_Strict):
    """What the source's figures mean, as the source defines them (issue 24, Deliver 9). A field is given for each
    figure the row holds (and only then); "not-stated" where the source does not say, the note arguing a reading."""

    ttft: Literal["queueing-included", "queueing-excluded", "not-stated"] | None = None
    """queueing-included: from the client's request to its first token, the wait for a slot included (vLLM's and
    SGLang's bench_serving, AIPerf, NIM's guide); queueing-excluded: from the request's scheduling."""
    token_latency: Literal["tpot-excluding-first", "tpot-including-first", "itl-per-token", "itl-per-chunk",
                           "not-stated"] | None = None
    """tpot-excluding-first: (latency - TTFT) / (output tokens - 1), per request; tpot-including-first: latency /
    output tokens; itl-per-token: the gap between consecutive tokens; itl-per-chunk: the gap between streamed
    chunks (several tokens each when the server batches its stream)."""
    statistic: Literal["mean", "median", "p90", "p99", "one-run", "not-stated"] | None = None
    """Of the latency figures over the run's requests; one-run: a single batch timed as a whole."""
    throughput_tokens: Literal["output", "total", "not-stated"] | None = None
    """output: generated tokens only; total: prompt and generated tokens."""
    throughput_per: Literal["whole-run", "gpu", "node", "not-stated"] | None = None
    """whole-run: every request together; gpu / node: the whole run divided by the GPUs (nodes) it used."""
    per_gpu_counts: Literal["all-gpus", "decode-gpus", "not-stated"] | None = None
    """For a per-GPU (per-node) figure, which GPUs it divides by: all the run's GPUs (prefill and decode pools
    together) or the decode pool's only."""
    load: Literal["fixed-concurrency", "request-rate", "offline", "static-batch", "not-stated"]
    """fixed-concurrency: the client keeps `concurrency` requests in flight (online); request-rate: requests
    arrive at `request_rate` per second (online); offline: every request is queued at once and the engine serves
    as many as it can hold; static-batch: one batch of `concurrency` requests run together to the end."""
    burst: Burst | None = None
    """With fixed-concurrency: the client starts the requests it keeps in flight all at once (`Burst`)."""
    ttft_zero_share: Annotated[float, Field(gt=0.0, lt=1.0)] | None = None
    """The share of the run's completed requests that generated no text and that the client counts in its mean TTFT
    at zero (vLLM's benchmark_serving.py times a request's TTFT at its first chunk with text, so a request that ends
    without one keeps 0.0 and still counts as completed; its result file shows it): the published mean is then
    (1 − share) times the mean of the requests that did generate, and the model's TTFT is scaled so."""

    @model_validator(mode="after")
    def _burst_load(self) -> Definitions:
        if self.burst is not None and self.load != "fixed-concurrency":
            raise ValueError("burst: only for a fixed-concurrency load")
        if self.ttft_zero_share is not None and (self.ttft is None or self.statistic != "mean"):
            raise ValueError("ttft_zero_share: only for a mean TTFT")
        return self


class Pool(_Strict):
    """One side of a disaggregated deployment: how many workers, each on which layout."""

    workers: PositiveInt
    layout: DeployedLayout

    @property
    def gpus(self) -> int:
        return self.workers * self.layout.tp * self.layout.pp * self.layout.dp


class Disaggregation(_Strict):
    """Prefill and decode on separate workers, the KV cache sent from one to the other."""

    prefill: Pool | None = None
    decode: Pool | None = None
    kv_transfer: Text | None = None
    """What moves the KV cache between the pools (NIXL, Mooncake, DeepEP), where the source says."""
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))

    @model_validator(mode="after")
    def _pools(self) -> Disaggregation:
        problems = _given_or_not_stated("", {"prefill": self.prefill, "decode": self.decode}, self.not_stated)
        for side, pool in (("prefill", self.prefill), ("decode", self.decode)):
            if pool is not None:
                problems += _layout_problems(f"{side}.layout.", pool.layout)
        if problems:
            raise ValueError("; ".join(problems))
        return self


SPECULATION_NAMES = {"eagle": "EAGLE", "eagle3": "EAGLE-3", "mtp": "MTP", "draft-model": "a draft model",
                     "ngram": "n-gram lookup", "medusa": "Medusa"}


"""How a page names each speculative-decoding method (the ids are SGLang's and vLLM's --speculative-algorithm)."""


class Speculation(_Strict):
    """Speculative decoding: a draft proposes tokens, the model verifies them in one step."""

    method: Literal["eagle", "eagle3", "mtp", "draft-model", "ngram", "medusa"]
    """mtp: the model's own multi-token-prediction head (DeepSeek-V3/R1); draft-model: a separate smaller model."""
    draft_tokens: PositiveInt | None = None
    """k: tokens drafted per verify step."""
    acceptance_rate: Annotated[float, Field(gt=0, le=1, strict=True)] | None = None
    """Share of drafted tokens accepted, where the source states it."""
    acceptance_length: Annotated[float, Field(ge=1, strict=True)] | None = None
    """Mean tokens emitted per verify step (accepted drafts plus the verified token), where stated."""
    draft_model: Text | None = None
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))

    @model_validator(mode="after")
    def _stated(self) -> Speculation:
        problems = _given_or_not_stated("", {"draft_tokens": self.draft_tokens,
                                             "acceptance_rate": self.acceptance_rate}, self.not_stated)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class PrefixCache(_Strict):
    """Prefix caching where the source sets it up: the share of each prompt already in the cache."""

    hit_rate: Annotated[float, Field(ge=0, le=1, strict=True)]
    """Share of prompt tokens served from the cache (or, as the note says, the share the workload repeats)."""


class Mode(_Strict):
    """How the engine served the run. Today's time model predicts aggregated serving without speculation or a
    prefix cache; the other modes wait for issue 28."""

    serving: Literal["aggregated", "disaggregated"] = "aggregated"
    disaggregation: Disaggregation | None = None
    """Required exactly when serving is disaggregated."""
    speculation: Speculation | None = None
    """None: no speculative decoding."""
    prefix_cache: PrefixCache | None = None
    """None: no prefix the workload repeats (random prompts), whether or not the engine caches prefixes."""

    @model_validator(mode="after")
    def _consistent(self) -> Mode:
        if (self.serving == "disaggregated") != (self.disaggregation is not None):
            raise ValueError("disaggregation: give it exactly when serving is disaggregated")
        return self

    @property
    def plain(self) -> bool:
        """Aggregated, no speculation, no repeated prefix: the mode today's model predicts."""
        return self.serving == "aggregated" and self.speculation is None and self.prefix_cache is None

    @property
    def label(self) -> str:
        """"aggregated", or what sets the mode apart: "disaggregated", "speculative decoding (eagle3)", ..."""
        parts: list[str] = [] if self.serving == "aggregated" else [self.serving]
        if self.speculation is not None:
            parts.append(f"speculative decoding ({SPECULATION_NAMES[self.speculation.method]})")
        if self.prefix_cache is not None:
            parts.append(f"prefix cache (hit rate {self.prefix_cache.hit_rate:.1%})")
        return ", ".join(parts) or "aggregated"


class EngineLimits(_Strict):
    """How the row's engine was started where it is not with vLLM's defaults: the memory policy it budgets by
    (data/policies.yaml) and the scheduler's limits its source's command or tool set, which the prediction uses."""

    memory_policy: Annotated[str, Field(min_length=2)]
    """Id of a `kind: memory` policy of data/policies.yaml."""
    max_num_seqs: PositiveInt
    """Sequences in flight at most (vLLM's max_num_seqs, TensorRT-LLM's max_batch_size)."""
    max_num_batched_tokens: PositiveInt
    """Tokens one step computes at most (vLLM's max_num_batched_tokens, TensorRT-LLM's max_num_tokens)."""
    memory_fraction: Annotated[float, Field(gt=0, le=1)] | None = None
    """The share of memory the command gives the engine where it sets its own (TensorRT-LLM's
    kv_cache_config.free_gpu_memory_fraction, vLLM's --gpu-memory-utilization, SGLang's --mem-fraction-static); None:
    the policy's."""
    cuda_graph_max_batch: PositiveInt | None = None
    """The largest decode batch the command has the engine replay in a CUDA graph where it sets one (SGLang's
    --cuda-graph-max-bs, a batch padded up to the next captured size); None: the policy's rule."""
    moe_kernel: MoeKernel | None = None
    """The fused-MoE kernel the command has the engine run where it names one (TensorRT-LLM's moe_config.backend);
    None: the policy's (`MemoryPolicy.moe_kernel`)."""
    how: Annotated[str, Field(min_length=10)]
    """Where the figures come from: the source's command, or the tool's rule it ran under, worked for this row."""


class Intake(_Strict):
    """How the row's engine takes new prompts in while other requests decode, where the source's command sets it
    apart from every step (the engines' default).

    - `recv_interval`: SGLang's --scheduler-recv-interval N polls the request socket once every N decode steps (its
      SchedulerRecvSkipper: a decode step weighs 1 and a prefill step 1,000, so a prefill is followed by a poll at
      once, and an idle scheduler polls as it spins), so a request arriving while others decode waits for the next
      poll.
    - `batch_wait_steps` and `batch_wait_tokens`: TensorRT-LLM's batch waiting (batch_wait_timeout_iters,
      batch_wait_max_tokens_ratio x max_num_tokens): while sequences decode, waiting prompts are held back until
      that many steps have passed since the engine began holding them, or until their tokens and the decoding
      sequences' reach that many."""

    recv_interval: PositiveInt | None = None
    batch_wait_steps: PositiveInt | None = None
    batch_wait_tokens: PositiveInt | None = None
    how: Annotated[str, Field(min_length=10)]
    """The command's lines that set it, worked for this row (the source is among the row's sources)."""

    @model_validator(mode="after")
    def _given(self) -> Intake:
        if self.recv_interval is None and self.batch_wait_steps is None:
            raise ValueError("intake: give recv_interval or batch_wait_steps")
        if (self.batch_wait_steps is None) != (self.batch_wait_tokens is None):
            raise ValueError("intake: give batch_wait_steps and batch_wait_tokens together")
        return self


class ChunkedPrefill(_Strict):
    """Whether the row's engine split prompts across steps, where its harness sets it apart from the memory policy's
    engine default (data/policies.yaml `chunked_prefill`): trtllm-bench throughput's default depends on its version
    (off before August 2025 and, in the 1.0 release, on the PyTorch backend; on in later main), so a row whose run
    shows it records it here."""

    enabled: bool
    how: Annotated[str, Field(min_length=10)]
    """The harness's command that shows it, and the default it relies on (the source is among the row's sources)."""


class CudaGraphs(_Strict):
    """Whether the row's engine replayed CUDA graphs, where its harness decides it apart from the memory policy's
    engine (data/policies.yaml `cuda_graph_batch`): TensorRT-LLM's Python benchmark (benchmarks/python/benchmark.py)
    runs its GenerationSession without them unless the command passes --enable_cuda_graph."""

    enabled: bool
    how: Annotated[str, Field(min_length=10)]
    """The harness's command that shows it, and the default it relies on (the source is among the row's sources)."""


class MixedSteps(_Strict):
    """Whether the row's engine ran prompts' prefills in the decoding sequences' steps, where its memory policy is
    not that engine's (data/policies.yaml `mixed_steps`): an SGLang row budgeted by its command's own flags keeps
    vLLM's budget, yet SGLang's scheduler runs every prefill in a step of its own unless --enable-mixed-chunk."""

    enabled: bool
    how: Annotated[str, Field(min_length=10)]
    """The command and the engine's default it relies on (the source is among the row's sources)."""


class SymmMem(_Strict):
    """Whether the row's engine sent mid-sized all-reduces to PyTorch's symmetric memory, where its release or command
    decides it apart from the memory policy's (data/policies.yaml `symm_mem`): vLLM before 0.11.0 had no such path
    on by default (vllm-project/vllm#20759 added it off; 0.10.2 shipped it off), and VLLM_ALLREDUCE_USE_SYMM_MEM=0
    turns it off in later releases."""

    enabled: bool
    how: Annotated[str, Field(min_length=10)]
    """The release or command that shows it, and the default it relies on (the source is among the row's sources)."""


class Speedup(_Strict):
    """A ratio the source publishes against the same deployment without the row's mode."""

    value: PositiveFloat
    of: Literal["output-throughput", "throughput-per-gpu", "tokens-per-s-per-user"]
    bound: Literal["exact", "up-to", "at-least"]
    """exact: the ratio as measured; up-to / at-least: the source gives a bound ("up to 5x", "over 2x")."""
    against: Annotated[str, Field(min_length=10)]
    """The baseline, in the source's words."""


class Measurement(_Strict):
    """A published serving measurement: what ran, how it was loaded, what it measured and how the source defines
    each figure.

    calibration rows come only from the sources issue 24 names for fitting (`PERMITTED_CALIBRATION_SOURCES`); test
    rows from any other publication, compared and reported apart, never fitted. Figures are as published: a
    per-GPU throughput stays per GPU, a TPOT stays a TPOT; `definitions` says which, and `snippets.calibration`
    compares the engine's prediction of that same quantity."""

    role: Literal["calibration", "test"]
    engine: str
    engine_version: str | None = None
    model: str
    checkpoint: str | None = None
    """The released checkpoint where it is not the model entry itself (Llama 3.3 70B on Llama 3.1 70B's architecture)."""
    precision: str
    kv_precision: str
    """Id of the precision of its KV cache, as the source states it or as the note argues it."""
    accelerator: str
    layout: DeployedLayout | None = None
    """The layout of one aggregated replica, or of the decode pool of a disaggregated run."""
    gpus: PositiveInt | None = None
    """Every GPU the run used; required where the layout (or the pools) does not give it."""
    nodes: PositiveInt | None = None
    """Nodes the run used, for a throughput the source gives per node."""
    config_from: Literal["source", "inferred"] = "source"
    """inferred: the source does not state part of the configuration (GPU, layout, lengths) where its figures
    are printed, and the note says how it was inferred. Never fitted on."""
    input_tokens: PositiveInt | None = None
    output_tokens: PositiveInt | None = None
    concurrency: PositiveInt | None = None
    """Requests kept in flight (fixed-concurrency), or the batch (static-batch), or the requests queued at once
    where an offline run gives it; None for an offline run that queues more than the engine holds."""
    request_rate: PositiveFloat | None = None
    """Requests per second, for a request-rate load."""
    mode: Mode = Field(default_factory=Mode)
    engine_limits: EngineLimits | None = None
    """The engine's memory policy and scheduler limits where its source ran it with its own; None: vLLM's defaults
    at the row's concurrency (`snippets.calibration`)."""
    intake: Intake | None = None
    """How the engine takes new prompts in while others decode, where the source's command sets it; None: at every
    step (the engines' default)."""
    chunked_prefill: ChunkedPrefill | None = None
    """Whether the engine split prompts across steps, where the source's harness decides it; None: the memory
    policy's setting (vLLM: always)."""
    cuda_graphs: CudaGraphs | None = None
    """Whether the engine replayed CUDA graphs, where the source's harness decides it; None: the memory policy's
    graphs."""
    mixed_steps: MixedSteps | None = None
    """Whether the engine ran prompts in the decoding sequences' steps, where its memory policy is not its engine's;
    None: the memory policy's setting."""
    symm_mem: SymmMem | None = None
    """Whether the engine sent mid-sized all-reduces to symmetric memory, where its release or command decides it;
    None: the memory policy's setting."""
    keeps_16bit: list[KeptLinear] | None = None
    """The linear layers the checkpoint this run serves keeps at 16 bits, where it is a publisher's own quantized checkpoint
    whose list the model's record (data/models.yaml keeps_16bit) does not hold; the note names the checkpoint and where
    its list was read. None: the model's."""
    definitions: Definitions
    ttft_ms: PositiveFloat | None = None
    ttft_p99_ms: PositiveFloat | None = None
    """The source's 99th-percentile TTFT over the run's requests, where it prints one beside the row's statistic. Never
    predicted or fitted: it checks a recorded first wave (`definitions.burst`), whose slowest requests would wait for
    the others' prompts (snippets/data/checks.py, `_check_first_waves`)."""
    itl_ms: PositiveFloat | None = None
    """Time per output token as the source defines it (`definitions.token_latency`)."""
    throughput: PositiveFloat | None = None
    """Tokens per second as published: output or total, whole run or per GPU (`definitions`)."""
    mean_in_flight: PositiveFloat | None = None
    """Requests in flight on average over the run, as the client reports it (SGLang's bench_serving 'Concurrency:'
    line: the requests' latencies summed over the run's duration). Never predicted or fitted: it checks the model of
    the run's end (`snippets.calibration.drain`, tests/unit/test_calibration.py)."""
    speedup: Speedup | None = None
    baseline: str | None = None
    """Id of the row measuring the same deployment without this row's mode, where the source publishes both."""
    secondary: bool = False
    """The source is a transcription of another document (a blog quoting a table, a PR quoting a results API)."""
    primary: Text | None = None
    """The primary document a secondary source copies, named (title and address)."""
    not_stated: NotStated = Field(default_factory=lambda: MappingProxyType({}))
    note: Annotated[str, Field(min_length=10)]
    sources: Sources

    @model_validator(mode="after")
    def _complete_and_consistent(self) -> Measurement:
        optional = {k: getattr(self, k) for k in MEASUREMENT_OPTIONAL_FIELDS}
        problems = _given_or_not_stated("", optional, self.not_stated)
        d = self.definitions
        if all(x is None for x in (self.ttft_ms, self.itl_ms, self.throughput, self.speedup)):
            problems.append("a measurement needs at least one of ttft_ms, itl_ms, throughput, speedup")
        for figure, fields in ((self.ttft_ms, ("ttft", "statistic")), (self.itl_ms, ("token_latency", "statistic")),
                               (self.throughput, ("throughput_tokens", "throughput_per"))):
            for f in fields:
                if figure is not None and getattr(d, f) is None:
                    problems.append(f"definitions.{f}: required for the figures this row holds (or not-stated)")
        p99, ttft = self.ttft_p99_ms, self.ttft_ms
        if p99 is not None and ttft is None:
            problems.append("ttft_p99_ms: only beside a ttft_ms")
        elif p99 is not None and ttft is not None and d.statistic == "median" and p99 < ttft:
            problems.append(f"ttft_p99_ms: {p99:g} ms, below the median TTFT ({ttft:g} ms)")
        if self.ttft_ms is None and d.ttft is not None:
            problems.append("definitions.ttft: given, but the row holds no ttft_ms")
        if self.itl_ms is None and d.token_latency is not None:
            problems.append("definitions.token_latency: given, but the row holds no itl_ms")
        if self.throughput is None and (d.throughput_tokens, d.throughput_per) != (None, None):
            problems.append("definitions.throughput_*: given, but the row holds no throughput")
        per_unit = d.throughput_per in ("gpu", "node")
        if per_unit != (d.per_gpu_counts is not None):
            problems.append("definitions.per_gpu_counts: give it exactly when throughput is per GPU or per node")
        if d.load in ("fixed-concurrency", "static-batch") and self.concurrency is None:
            problems.append(f"concurrency: required for a {d.load} load")
        if d.load == "request-rate" and (self.request_rate is None or self.concurrency is not None):
            problems.append("request_rate: required for a request-rate load, and concurrency left out")
        if d.load != "request-rate" and self.request_rate is not None:
            problems.append("request_rate: only for a request-rate load")
        if self.layout is not None:
            problems += _layout_problems("layout.", self.layout)
        pooled = self._pool_gpus()
        if self.gpus is not None and pooled is not None and self.gpus != pooled:
            problems.append(f"gpus: {self.gpus}, but the layout gives {pooled}")
        if (d.throughput_per == "node") != (self.nodes is not None):
            problems.append("nodes: give it exactly when throughput is per node")
        if self.gpu_count is None and (d.throughput_per == "gpu" or self.mode.serving == "disaggregated"):
            problems.append("gpus: required where the layout does not give the GPU count")
        if self.secondary != (self.primary is not None):
            problems.append("primary: name the primary document exactly when secondary is true")
        if self.baseline is not None and self.mode.plain:
            problems.append("baseline: only a row in another mode (disaggregated, speculative, prefix cache) has one")
        if self.speedup is not None and self.mode.plain:
            problems.append("speedup: only a row in another mode (disaggregated, speculative, prefix cache) has one")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _pool_gpus(self) -> int | None:
        if self.mode.serving == "disaggregated":
            dis = self.mode.disaggregation
            if dis is None or dis.prefill is None or dis.decode is None:
                return None
            return dis.prefill.gpus + dis.decode.gpus
        lay = self.layout
        return None if lay is None else lay.tp * lay.pp * lay.dp

    @property
    def gpu_count(self) -> int | None:
        """Every GPU the run used: stated, or from the layout (the pools of a disaggregated run)."""
        return self.gpus if self.gpus is not None else self._pool_gpus()

    @property
    def output_tokens_per_s(self) -> float | None:
        """The published throughput as output tokens per second of the whole run: a per-GPU (per-node) figure
        times the GPUs (nodes) it divides by, a total-token figure times the output share of each request's tokens
        (output / (input + output), exact for runs of fixed lengths). A figure whose tokens the source does not
        state is read as output tokens, the reading its note argues."""
        v, d = self.throughput, self.definitions
        if v is None:
            return None
        if d.throughput_per in ("gpu", "node"):
            gpus = self._decode_gpus() if d.per_gpu_counts == "decode-gpus" else self.gpu_count
            if d.per_gpu_counts == "not-stated" and self.mode.serving == "disaggregated":
                gpus = None  # all GPUs or the decode pool's: the source does not say which
            units = gpus if d.throughput_per == "gpu" else self.nodes
            if units is None:
                return None
            v *= units
        if d.throughput_tokens == "total":
            if self.input_tokens is None or self.output_tokens is None:
                return None
            v *= self.output_tokens / (self.input_tokens + self.output_tokens)
        return v

    def _decode_gpus(self) -> int | None:
        dis = self.mode.disaggregation
        if dis is None:
            return self.gpu_count
        return None if dis.decode is None else dis.decode.gpus

    @property
    def sourced_from_permitted(self) -> bool:
        """Every source of the row is one issue 24 permits for fitting (see `PERMITTED_CALIBRATION_SOURCES`)."""
        return all(s.url.lower().startswith(PERMITTED_CALIBRATION_SOURCES) for s in self.sources)
