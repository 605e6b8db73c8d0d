"""The MoE page's choices, its formatting, and its helpers (the page reads the engine through them)."""

from __future__ import annotations

from snippets.engine import Deployment, Layout
from snippets.engine.memory import decode_kv_read
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.specs import Arch, ChipSpec
from snippets.engine.step import step
from snippets.pages import units
from snippets.pages.scenario import Reference
from snippets.render import fmt
from snippets.render.fmt import Figure

MODELS = ("mixtral-8x7b", "deepseek-v3", "deepseek-r1", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b",
          "gpt-oss-20b", "llama-4-scout", "llama-4-maverick")
"""Every mixture-of-experts model of data/models.yaml, in the table's order (`params_rows` refuses a list that
leaves one out)."""
MODEL = "deepseek-v3"
DOC_MODELS = ("deepseek-v3", "deepseek-r1")
"""The documented deployments the page tabulates: DeepSeek-V3's and DeepSeek-R1's, one architecture."""
PRECISION = "fp8"
ACCEL = "h200-sxm"
NVL72 = "gb200-nvl72"
GPUS = 8
CONTEXT = 2048
"""Tokens per sequence on this page: a prompt of half and an answer of half (`predict`'s request)."""
CONCURRENCY = 64
"""The worked decode batch, and the cost lens's first load."""
HEAVY = 1024
"""The cost lens's second load: more sequences than a TP8 replica's KV cache holds at CONTEXT."""
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Decode batches of the reads table and chart."""
PREFILL_TOKENS = 8192
"""Prompt tokens each GPU's attention prefills in one pass, for the all-to-all table."""
NETWORK_EP = 16
"""Expert parallelism over two HGX H200 nodes: the all-to-all crosses the network."""
QUIZ_MODEL = "qwen3-235b-a22b"
QUIZ_MIXTRAL = "mixtral-8x7b"
QUIZ_BATCH = 32
QUIZ_MIXTRAL_BATCH = 4

"""The data entries this page's figures are computed from (every DeepSeek-V3 and DeepSeek-R1 row of
data/deployments.yaml is also read by the deployments table)."""


# --------------------------------------------------------------------------- formatting

def gb(x: float, digits: int = 1) -> Figure:
    return fmt.nbytes(x, "GB", digits)


def kb(x: float) -> Figure:
    return fmt.quantity(x / 1e3, "kB", 1, show_unit=True, basis="kB = 10^3 bytes")


def mb(x: float) -> Figure:
    return fmt.quantity(x / 1e6, "MB", 2, show_unit=True, basis="MB = 10^6 bytes")


def gbps(x: float) -> Figure:
    return fmt.quantity(x / 1e9, "GB/s", 0, show_unit=True, basis="per direction, each GPU's")


def tok_s(x: float) -> Figure:
    return fmt.quantity(x, "tokens/s", 0)


def seqs(n: int) -> Figure:
    return fmt.count(n, "sequences")


def gpu_label(chip: ChipSpec) -> str:
    """'NVIDIA H200 SXM' -> 'H200 SXM'; 'AMD Instinct MI300X' -> 'MI300X'."""
    return units.gpu_label(chip, units.VENDORS)


# --------------------------------------------------------------------------- page helpers

def kv_read(d: Deployment, batch: int, context: float) -> float:
    """KV-cache bytes one decode step of `batch` sequences at `context` reads on the busiest GPU (one stage): the
    engine's `decode_kv_read` for the sequences one data-parallel attention rank holds."""
    s = d.setting
    arch = s.model.architecture
    return decode_kv_read(arch, arch.layers, d.layout.tp, s.kv_precision.bytes_per_param, context, batch) / d.layout.dp


def weights_read(d: Deployment, batch: int) -> float:
    """Weight bytes a decode step of `batch` tokens reads per GPU: the step's weight reads (its GEMMs' weight
    streams, without activations or KV cache)."""
    return step(d, "decode", batch, 1).weights_read


def a2a_bytes_per_token(arch: Arch) -> float:
    """What one token gets back in one combine: its k routed experts' outputs, in BF16 (its dispatch sends the
    same vectors in FP8, about half the bytes)."""
    moe = arch.moe
    if moe is None:
        raise ValueError("not a mixture-of-experts model")
    return moe.active_experts * arch.hidden_size * ACTIVATION_BYTES


def ds_deployment(r: Reference, layout: Layout, concurrency: int = CONCURRENCY, node: str | None = None) -> Deployment:
    if node is None:
        return r.deployment(MODEL, PRECISION, accelerator=ACCEL, layout=layout, concurrency=concurrency,
                            context_tokens=CONTEXT)
    return r.deployment(MODEL, PRECISION, node=node, layout=layout, concurrency=concurrency, context_tokens=CONTEXT)


def layouts() -> dict[str, Layout]:
    """The three layouts of DeepSeek-V3 on one 8-GPU node the page compares."""
    return {"tp": Layout(GPUS), "ep": Layout(GPUS, ep=GPUS), "dp": Layout(1, ep=GPUS, dp=GPUS)}
