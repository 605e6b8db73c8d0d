"""What tensor and pipeline parallelism send between GPUs, and what that costs in time.

Tensor parallelism (TP) splits every layer's matrices over `n` GPUs. Each GPU then holds a
partial sum of the layer's output, and the partial sums are added up by an all-reduce of the
hidden state: once after attention, once after the MLP. Pipeline parallelism (PP) gives each
GPU group a run of consecutive layers and hands the hidden state on once, point to point, at
each stage boundary.

All byte counts are plain bytes. For the time of a step, with hop latencies, the algorithm NCCL
would pick and the roofline, use `snippets.engine.timing` (the parallelism page does).
"""

from __future__ import annotations

ALLREDUCES_PER_LAYER = 2
"""A TP transformer layer all-reduces its hidden state twice: after attention and after the MLP."""


def _check_n(n: int, what: str = "n") -> None:
    if n <= 0 or n != int(n):
        raise ValueError(f"{what} must be a positive whole number, got {n!r}")


def tp_allreduce_message_bytes(hidden_size: int, bytes_per_elem: float, tokens: int = 1) -> float:
    """Bytes of one TP all-reduce: the hidden state of `tokens` tokens.

    Llama 3.1 405B, hidden size 16,384, BF16 (2 bytes), one token: 32,768 bytes.
    """
    if hidden_size <= 0 or bytes_per_elem <= 0:
        raise ValueError("hidden_size and bytes_per_elem must be positive")
    _check_n(tokens, "tokens")
    return hidden_size * bytes_per_elem * tokens


def ring_allreduce_steps(n: int) -> int:
    """Sequential steps of a ring all-reduce over `n` GPUs: n - 1 of reduce-scatter, n - 1 of all-gather."""
    _check_n(n)
    return 2 * (n - 1)


def ring_allreduce_bytes_per_gpu(message_bytes: float, n: int) -> float:
    """Bytes each GPU sends (and, the same, receives) in a ring all-reduce of `message_bytes` over `n` GPUs.

    The message is cut into `n` chunks; each of the 2(n - 1) steps sends one chunk to the next GPU,
    so every GPU sends 2(n - 1)/n of the message. One GPU alone sends nothing.
    """
    if message_bytes < 0:
        raise ValueError("message_bytes must be non-negative")
    return ring_allreduce_steps(n) * message_bytes / n


def tp_bytes_per_token(layers: int, hidden_size: int, bytes_per_elem: float, n: int, tokens: int = 1) -> float:
    """Bytes each GPU of a TP group of `n` sends per decode step over `layers` layers.

    Two ring all-reduces of the hidden state per layer. With pipeline stages, pass all the layers
    to get the traffic on the critical path of one token (the stages run one after another).
    """
    _check_n(layers, "layers")
    msg = tp_allreduce_message_bytes(hidden_size, bytes_per_elem, tokens)
    return layers * ALLREDUCES_PER_LAYER * ring_allreduce_bytes_per_gpu(msg, n)


def tp_messages_per_token(layers: int, n: int) -> int:
    """Sequential ring steps on the critical path of one decode step: 2 all-reduces x 2(n - 1) steps per layer.

    Each step is a message that pays the link's fixed latency, whatever its size.
    """
    _check_n(layers, "layers")
    return layers * ALLREDUCES_PER_LAYER * ring_allreduce_steps(n)


def pp_boundary_bytes(hidden_size: int, bytes_per_elem: float, tokens: int = 1) -> float:
    """Bytes PP sends across one stage boundary per decode step: the hidden state once, point to point."""
    return tp_allreduce_message_bytes(hidden_size, bytes_per_elem, tokens)


def pp_bytes_per_token(hidden_size: int, bytes_per_elem: float, stages: int, tokens: int = 1) -> float:
    """Bytes PP sends over all `stages - 1` boundaries per decode step."""
    _check_n(stages, "stages")
    return (stages - 1) * pp_boundary_bytes(hidden_size, bytes_per_elem, tokens)
