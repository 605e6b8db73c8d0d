"""Memory capacity: weight bytes, usable memory per GPU, GPU and node counts.

All byte quantities are plain bytes (floats); convert for display with `snippets.fmt`.
"""

from __future__ import annotations

import math

_EPS = 1e-9


def ceil_count(x: float) -> int:
    """Round a count up, ignoring float noise (140e9 / 70e9 is 2, not 3)."""
    if x < 0 or not math.isfinite(x):
        raise ValueError(f"count must be a non-negative finite number, got {x!r}")
    return math.ceil(x - _EPS * max(1.0, x))


def weight_bytes(params: float, bytes_per_param: float) -> float:
    """Bytes to hold `params` weights at `bytes_per_param` each (FP16: 2, INT8: 1, INT4: 0.5)."""
    if params <= 0 or bytes_per_param <= 0:
        raise ValueError("params and bytes_per_param must be positive")
    return params * bytes_per_param


def usable_bytes(capacity: float, reserve_fraction: float) -> float:
    """Memory left for weights after holding back `reserve_fraction` of it for KV cache, activations, runtime."""
    if not 0 <= reserve_fraction < 1:
        raise ValueError(f"reserve_fraction must be in [0, 1), got {reserve_fraction!r}")
    return capacity * (1 - reserve_fraction)


def gpus_needed(total_bytes: float, per_gpu_bytes: float) -> int:
    """The fewest GPUs whose `per_gpu_bytes` together hold `total_bytes`."""
    if per_gpu_bytes <= 0:
        raise ValueError("per_gpu_bytes must be positive")
    return max(1, ceil_count(total_bytes / per_gpu_bytes))


def gpus_exact(total_bytes: float, per_gpu_bytes: float) -> float:
    """`total_bytes / per_gpu_bytes` before rounding up (810 GB / 80 GB = 10.125)."""
    if per_gpu_bytes <= 0:
        raise ValueError("per_gpu_bytes must be positive")
    return total_bytes / per_gpu_bytes


def max_params(capacity: float, bytes_per_param: float) -> float:
    """The most parameters whose weights fit in `capacity` bytes."""
    if bytes_per_param <= 0:
        raise ValueError("bytes_per_param must be positive")
    return capacity / bytes_per_param


def nodes_needed(gpus: int, gpus_per_node: int) -> int:
    """Nodes of `gpus_per_node` GPUs needed to host `gpus` GPUs."""
    if gpus_per_node <= 0:
        raise ValueError("gpus_per_node must be positive")
    return ceil_count(gpus / gpus_per_node)
