"""The HBM page's choices, its formatting, and what it reads from the engine's deployments."""

from __future__ import annotations

from snippets.engine import Deployment, Layout
from snippets.engine.memory import kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.specs import ChipSpec
from snippets.pages.scenario import Reference
from snippets.render import fmt
from snippets.render.fmt import Figure

OLDER = "a100-80gb-sxm"
"""The generation before the scenario's GPU; its node is the first in data/ built from it."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("bf16", "fp8")
FIT_ROWS = ("fp32", "bf16", "fp8", "int8", "int4")
"""Rows of the what-fits table (BF16 and FP16 store the same bytes; BF16 is what Llama ships in)."""
WORKED = ("llama-3.1-70b", "bf16")
LEANER = ("llama-3.1-70b", "fp8")
"""The worked model with half the weight bytes, on the same GPUs (the worked deployment's layout): the cost lens's
second lever."""
TP_ONLY = ("llama-3.1-405b", "fp8")
PIPELINED = ("llama-3.1-405b", "bf16")
ONE_CARD = ("llama-3.1-8b", "fp8")
"""The quiz's one-card deployment: how many sequences one GPU holds, and the ceiling at that batch."""
BATCHES = (1, 2, 4, 8, 16)
ILLUSTRATIVE_BATCH = 8
"""A batch size the prose uses to show how batching raises arithmetic intensity."""
SECONDS_PER_HOUR = 3600
LONG_CONTEXT = "decode-context"
"""Its range's upper end is the longest context Llama 3.1 accepts (131,072 tokens, from its config.json)."""


# --------------------------------------------------------------------------- formatting

def per_gpu_hour(tokens_per_s: float, gpus: float) -> Figure:
    """Tokens per rented GPU-hour at `tokens_per_s` for a replica that takes `gpus` rented GPUs."""
    return fmt.quantity(tokens_per_s / gpus * SECONDS_PER_HOUR, "tokens/GPU-hour", 0)


# --------------------------------------------------------------------------- reading the engine

def weights_read(d: Deployment) -> float:
    """Weight bytes one decode step reads on the busiest GPU of each stage, stages added up (dense models):
    the step's bytes without the KV cache. The engine's `decode_step_bytes` adds the KV cache to this."""
    s = d.setting
    return sum(st.total for st in stage_weights(s.model.architecture, s.precision, d.layout, s.kept_16bit))


def weights_only_ceiling(d: Deployment) -> float:
    """One sequence's ceiling if the step read the weights alone (no KV cache): HBM ÷ the weights read."""
    return d.setting.chip.hbm_bytes_per_s / weights_read(d)


def kv_per_token(d: Deployment, tp: int = 1) -> float:
    """KV-cache bytes one token adds, for the whole model (tp=1) or on one GPU of a TP group of `tp`."""
    s = d.setting
    arch = s.model.architecture
    return kv_bytes_per_token_per_gpu(arch, arch.layers, tp, s.kv_precision.bytes_per_param)


def batch_ceiling(d: Deployment, batch: int) -> float:
    """Tokens per second of the whole replica at `batch` sequences: batch x HBM ÷ the engine's bytes per step."""
    return batch * d.setting.chip.hbm_bytes_per_s / d.decode_step_bytes(batch)


def one_card(r: Reference, model: str, precision: str, chip: ChipSpec) -> Deployment:
    """`model` on one card of `chip`, at the scenario (on the first node built from it)."""
    return r.deployment(model, precision, accelerator=chip.id, layout=Layout(1))


def older_node(r: Reference) -> str:
    node = r.eng.node_of(OLDER)
    if node is None:
        raise ValueError(f"no node in data/ is built from {OLDER}")
    return node.id


CHART_MODEL = "llama-3.1-8b"
CHART_PRECISION = "fp8"
