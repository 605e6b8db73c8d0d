"""Bandwidths derived from their parts, and the time to move bytes over them."""

from __future__ import annotations

from snippets.data.units import Bandwidth, BasisMismatchError, Direction


def pcie_bandwidth(transfers_per_s: float, lanes: int, payload_bits: int, line_bits: int) -> Bandwidth:
    """Usable PCIe bandwidth, per direction, after line encoding.

    Each lane carries `transfers_per_s` one-bit symbols each way; of every `line_bits` sent,
    `payload_bits` are data (128b/130b for Gen3-5). Gen4 x16: 16e9 x 16 x 128/130 / 8 = 31.5 GB/s.
    Packet (TLP/DLLP) overhead is not subtracted: this is the link's data rate, as PCI-SIG states it.
    """
    if lanes <= 0 or payload_bits <= 0 or line_bits < payload_bits or transfers_per_s <= 0:
        raise ValueError("need positive transfer rate and lanes, and line_bits >= payload_bits > 0")
    bits_per_s = transfers_per_s * lanes * payload_bits / line_bits
    return Bandwidth(bits_per_s / 8, Direction.PER_DIRECTION)


def nvlink_per_gpu(links: int, per_link: Bandwidth) -> Bandwidth:
    """A GPU's NVLink bandwidth: `links` links at `per_link` each, on the per-link figure's basis."""
    if links <= 0:
        raise ValueError("links must be positive")
    return per_link * links


def transfer_time(nbytes: float, bandwidth: Bandwidth) -> float:
    """Seconds to move `nbytes` one way at the link's full rate (no latency, no protocol overhead).

    Refuses a both-directions-summed figure: one transfer travels one way, so convert with
    `.one_way()` first and say so.
    """
    if bandwidth.direction is Direction.BOTH_SUMMED:
        raise BasisMismatchError("a transfer goes one way: pass bandwidth.one_way(), not a both-directions sum")
    if nbytes < 0:
        raise ValueError("nbytes must be non-negative")
    return nbytes / bandwidth.bytes_per_s
