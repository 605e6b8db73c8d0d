"""Decoding is bound by memory bandwidth: every generated token reads every weight once.

Ceilings here ignore compute, latency and communication: they are upper bounds, stated as such.
"""

from __future__ import annotations

from snippets.units import BasisMismatchError, Bandwidth, Direction


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
