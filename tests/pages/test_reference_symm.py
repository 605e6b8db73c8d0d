"""The predictions page's note on vLLM's symmetric-memory all-reduce on Blackwell: every timing AIConfigurator took of
the messages vLLM's release sent that way lies above the engine's price for it, and the claim fails when one does
not."""

from __future__ import annotations

from pathlib import Path

import pytest

from snippets.data import load
from snippets.pages.reference_symm import symm_off_hopper

from ..conftest import edited_data


def test_blackwells_symmetric_memory_timings_lie_above_the_engines_price(catalog) -> None:
    """Nine timings on four chips: B200's 4 MiB on two and four GPUs (two-shot) and 1 and 4 MiB on eight (multimem),
    GB200's 4 MiB on two and four, B300's 4 MiB on four and eight, GB300's 4 MiB on four; the least 9 % above its
    price (GB200, four GPUs), the most 77 % (B200, two GPUs: 34.62 us against 12.14 + 4 MiB / (900 GB/s x 0.629))."""
    ns = symm_off_hopper(catalog)
    assert ns["symm_bw_under"].holds  # type: ignore[attr-defined]
    assert (ns["symm_bw_chips"].value, ns["symm_bw_points"].value) == (4, 9)  # type: ignore[attr-defined]
    assert ns["symm_bw_high"].value == pytest.approx(100 * (34.62 / (12.14 + 4194304 / (900e9 * 0.629) * 1e6) - 1),
                                                     abs=0.5)  # type: ignore[attr-defined]
    assert ns["symm_bw_low"].value == pytest.approx(9.4, abs=0.5)  # type: ignore[attr-defined]


def test_the_claim_fails_when_a_timing_lies_below_the_price(tmp_path: Path) -> None:
    """B200's eight-GPU 1 MiB timing edited from 16.67 to 7.0 us, below the 13.4 us the engine prices multimem at."""
    data = edited_data(tmp_path, [("latencies.yaml", "[8, 1048576, 16.67]", "[8, 1048576, 7.0]")])
    assert not symm_off_hopper(load(data))["symm_bw_under"].holds  # type: ignore[attr-defined]
