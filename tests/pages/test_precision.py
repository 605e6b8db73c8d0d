"""Numeric formats against figures worked out by hand from the format definitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from snippets.data import load

from ..conftest import edited_data


def _claims(ns: dict[str, Any]) -> dict[str, Any]:
    from snippets.render.fmt import Claim

    return {k: v for k, v in ns.items() if isinstance(v, Claim)}


def test_page_claims_hold_on_the_repository_data(catalog) -> None:
    from snippets.pages.precision import namespace

    claims = _claims(namespace(catalog))
    assert len(claims) >= 10
    assert all(c.holds for c in claims.values()), {k: c.basis for k, c in claims.items() if not c.holds}


def test_page_claims_survive_slower_hbm(tmp_path: Path, catalog) -> None:
    # The edit tests/build/test_build_failures.py makes: 3.0 TB/s of HBM instead of 3.35. Every ceiling the
    # engine gives scales by 3.0 / 3.35 (the layouts do not move), and every claim must still hold.
    from snippets.pages.precision import namespace

    before = namespace(catalog)
    data = edited_data(tmp_path, [
        ("accelerators.yaml", "{value: 3.35, unit: TB/s, direction: shared}",
         "{value: 3.0, unit: TB/s, direction: shared}"),
    ])
    ns = namespace(load(data))
    assert all(c.holds for c in _claims(ns).values()), {k: c.basis for k, c in _claims(ns).items() if not c.holds}
    assert ns["m70"].fp16.layout == before["m70"].fp16.layout == "TP4"
    assert ns["m70"].fp16.ceiling.value == pytest.approx(before["m70"].fp16.ceiling.value * 3.0 / 3.35)
    assert ns["m70_first_single_gpu"] == "INT4"


def test_page_claims_fail_when_the_story_changes(tmp_path: Path) -> None:
    # NVFP4 with blocks of 64 would cost 4 + 8/64 = 4.125 bits, less than grouped INT4's 4.15625:
    # the sentence ranking the metadata costs must then fail.
    from snippets.pages.precision import namespace

    data = edited_data(tmp_path, [("precisions.yaml", "group_size: 16\n", "group_size: 64\n")])
    claims = _claims(namespace(load(data)))
    assert not claims["metadata_ordered"].holds


def test_page_sizes_against_the_policy_pool(tmp_path: Path) -> None:
    # The page reads the pool from data/policies.yaml, not a reserve of its own: at 0.99 of the
    # H100's 79.22 GiB (78.43 GiB) the 70B INT8 weights (67.67 GiB) + the 5.05 GiB activation peak + 1.79 GiB
    # outside PyTorch + 2.5 GiB KV (77.0 GiB) fit one GPU, and the sentence saying they do not must fail.
    from snippets.pages.precision import namespace

    data = edited_data(tmp_path, [("policies.yaml", "utilization: 0.9\n", "utilization: 0.99\n")])
    ns = namespace(load(data))
    assert ns["m70"].int8.layout == "TP1"
    assert not _claims(ns)["int8_misses_one_gpu"].holds


def test_the_int8_gap_is_named_and_its_claim_fails_without_the_refusal(tmp_path: Path, catalog) -> None:
    # the chips vLLM has no INT8 kernel for come from data/precisions.yaml with vLLM's message; with the gaps gone
    # (an engine that ran INT8 everywhere) the sentence that says vLLM refuses them must fail
    from snippets.pages.precision import namespace

    ns = namespace(catalog)
    assert ns["int8_gap_engine"] == "vLLM" and ns["int8_gap_chips"].startswith("NVIDIA B200")
    assert ns["int8_gap_chips"].count(", ") == 4  # B200, GB200, B300, GB300, RTX PRO 6000
    assert ns["int8_gap_message"].startswith("Int8 not supported on SM100. Use FP8 quantization instead")
    data = edited_data(tmp_path, [])
    text = (data / "precisions.yaml").read_text()
    start = text.index("  kernel_gaps:\n", text.index("\nint8:\n"))  # int8's gaps, not fp8's
    end = text.index("\n  sources:", start)  # int8's own sources follow its gaps
    (data / "precisions.yaml").write_text(text[:start] + text[end + 1:])
    ns = namespace(load(data))
    assert not ns["int8_gap_refused"].holds and ns["int8_gap_chips"] == ""
