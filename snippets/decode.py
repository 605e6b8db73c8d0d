"""Decoding is bound by memory bandwidth: every generated token reads every weight once.

Ceilings here ignore compute, latency and communication: they are upper bounds, stated as such.
"""

from __future__ import annotations

import math

from snippets.units import Bandwidth, BasisMismatchError, Direction

_EPS = 1e-9


def step_time(bytes_read: float, bandwidth: Bandwidth) -> float:
    """Seconds to stream `bytes_read` from memory once at `bandwidth` (a lower bound on one decode step).

    Memory bandwidth is a shared (half-duplex) figure; a both-directions-summed link figure is refused.
    """
    if bandwidth.direction is Direction.BOTH_SUMMED:
        raise BasisMismatchError("reading memory goes one way: use a shared or per-direction figure")
    if bytes_read <= 0:
        raise ValueError("bytes_read must be positive")
    return bytes_read / bandwidth.bytes_per_s


def tokens_per_s_ceiling(bytes_read_per_token: float, bandwidth: Bandwidth) -> float:
    """Upper bound on tokens per second of one sequence: bandwidth ÷ bytes read per token."""
    return 1.0 / step_time(bytes_read_per_token, bandwidth)


def aggregate(bandwidth: Bandwidth, gpus: int) -> Bandwidth:
    """The memory bandwidth of `gpus` GPUs that each read their own shard at the same time."""
    if gpus <= 0:
        raise ValueError("gpus must be positive")
    return bandwidth * gpus


KV_TENSORS = 2
"""Tensors cached per layer and KV head: one of keys (K), one of values (V)."""

FLOP_PER_PARAM_PER_TOKEN = 2
"""A weight takes part in one multiply and one add for every token that passes through it."""


def kv_cache_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_elem: float) -> float:
    """Bytes of KV cache one token adds: K and V, for every layer and KV head, `head_dim` elements each.

    Llama 3.1 70B in FP16: 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 bytes.
    """
    if min(layers, kv_heads, head_dim) <= 0 or bytes_per_elem <= 0:
        raise ValueError("layers, kv_heads, head_dim and bytes_per_elem must be positive")
    return KV_TENSORS * layers * kv_heads * head_dim * bytes_per_elem


def kv_cache_bytes(context_tokens: float, kv_bytes_per_token: float, batch: int = 1) -> float:
    """Bytes of KV cache held for `batch` sequences of `context_tokens` tokens each."""
    if context_tokens < 0 or kv_bytes_per_token < 0:
        raise ValueError("context_tokens and kv_bytes_per_token must be non-negative")
    if batch <= 0:
        raise ValueError("batch must be positive")
    return batch * context_tokens * kv_bytes_per_token


def bytes_read_per_step(
    weight_bytes: float, kv_bytes_per_token: float = 0.0, context_tokens: float = 0.0, batch: int = 1
) -> float:
    """Bytes one decode step reads: every weight once (shared by the batch) plus each sequence's KV cache.

    One step produces one token for each of the `batch` sequences; at batch 1 this is the bytes
    read per generated token.
    """
    if weight_bytes <= 0:
        raise ValueError("weight_bytes must be positive")
    return weight_bytes + kv_cache_bytes(context_tokens, kv_bytes_per_token, batch)


def batch_tokens_per_s_ceiling(
    weight_bytes: float, kv_bytes_per_token: float, context_tokens: float, batch: int, bandwidth: Bandwidth
) -> float:
    """Upper bound on tokens per second of a replica decoding `batch` sequences at once.

    Each step reads `bytes_read_per_step` and yields `batch` tokens; compute is ignored.
    """
    step = step_time(bytes_read_per_step(weight_bytes, kv_bytes_per_token, context_tokens, batch), bandwidth)
    return batch / step


def max_batch(free_bytes: float, context_tokens: float, kv_bytes_per_token: float) -> int:
    """The most sequences of `context_tokens` whose KV cache fits in `free_bytes` (0 if not even one)."""
    if context_tokens <= 0 or kv_bytes_per_token <= 0:
        raise ValueError("context_tokens and kv_bytes_per_token must be positive")
    if free_bytes <= 0:
        return 0
    per_seq = context_tokens * kv_bytes_per_token
    x = free_bytes / per_seq
    return math.floor(x + _EPS * max(1.0, x))  # 20 GB / 10 GB is 2, not 1.9999999


def flop_per_byte(bytes_per_param: float, batch: int = 1) -> float:
    """Arithmetic intensity of decoding: FLOPs done per byte of weights read.

    Each weight read serves `batch` tokens with a multiply and an add each: FP16 at batch 1 is
    2 FLOP / 2 bytes = 1 FLOP per byte. (KV cache reads, which add bytes, are not counted.)
    """
    if bytes_per_param <= 0 or batch <= 0:
        raise ValueError("bytes_per_param and batch must be positive")
    return FLOP_PER_PARAM_PER_TOKEN * batch / bytes_per_param


def ridge_point(flops_per_s: float, bandwidth: Bandwidth) -> float:
    """FLOPs a chip can do per byte its memory delivers: above this intensity work is compute-bound.

    Pass a dense FLOP/s figure; a 2:4-sparse figure would double it. A100 80GB: 312 TFLOP/s dense
    BF16 / 2,039 GB/s = 153 FLOP per byte.
    """
    if flops_per_s <= 0:
        raise ValueError("flops_per_s must be positive")
    if bandwidth.direction is Direction.BOTH_SUMMED:
        raise BasisMismatchError("reading memory goes one way: use a shared or per-direction figure")
    return flops_per_s / bandwidth.bytes_per_s
